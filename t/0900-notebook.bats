#!/usr/bin/env bats
# The notebook bridge, share/python/heartwood: real notebooks in a real
# Jupyter kernel (Debian's python3-nbclient, python3-ipykernel,
# python3-nbformat, python3-ipywidgets, run by /usr/bin/python3, whatever
# python3 PATH finds) drive sessions against the replay model: a whole
# task, a rejection through the widgets, pause and resume, a session
# continued alternately from the notebook and the terminal, a decision
# made in the terminal while the notebook waits, two notebooks deciding
# one set, an interrupted kernel, a restarted kernel, bad input; and the
# example notebook of share/notebooks.  The notebooks are t/notebook/*.py,
# one cell after each "# %%" line.

load lib
load agent

PY=/usr/bin/python3

setup() {
	agent_setup
	export PYTHONPATH="$HW_ROOT/share/python" PYTHONDONTWRITEBYTECODE=1
	export PYDEVD_DISABLE_FILE_VALIDATION=1
	# the kernel's own files, away from the user's
	export JUPYTER_RUNTIME_DIR="$PROJ/.jupyter-runtime" IPYTHONDIR="$PROJ/.ipython"
	NB=
}

teardown() {
	if [ -n "$NB" ]; then
		kill "$NB" 2>/dev/null
		wait "$NB" 2>/dev/null
	fi
	agent_teardown
}

# nb NAME [OUT]: execute t/notebook/NAME.py as a notebook here
nb() {
	"$PY" "$HW_ROOT/t/nbrun.py" make "$1.ipynb" "$HW_ROOT/t/notebook/$1.py" &&
		"$PY" "$HW_ROOT/t/nbrun.py" run "$1.ipynb" ${2:+"$2"}
}

# until_file NAME: wait for a file the notebook writes (60 s at most)
until_file() {
	for _ in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.05; done
	echo "$1 never appeared"
	return 1
}

# done_turn: the model's answer once the set ran or was rejected
done_turn() {
	echo '{"content":"Done: ran.txt and notes.md."}' >>turns.jsonl
}

# slow_turns: a terminal call that creates "started" and runs until the
# notebook creates "go" (so that it is still running whatever the
# machine's load), then two answers
slow_turns() {
	cat >turns.jsonl <<'T'
{"content":"Slow.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Slow","command":": > started; while [ ! -e go ]; do sleep 0.05; done; echo ok > slow.txt","security_risk":"LOW"}}]}
{"content":"Done slow."}
T
}

# events_contiguous: the session replays, verifies, and its sequences
# run 0..N-1 with each kind of command's events once per command
events_contiguous() {
	hw-session replay session-main >replayed
	hw-audit verify --session session-main >verified
	jq -s -e '[.[].sequence] == [range(length)]' replayed >/dev/null
	[ "$(jq .event_count verified)" = "$(wc -l <replayed)" ]
}

@test "notebook: the kernel is Debian's python3 with the bridge importable" {
	run -0 "$PY" -c 'import nbclient, ipykernel, nbformat, ipywidgets, heartwood; print(heartwood.NotebookSession.__name__)'
	[ "$output" = NotebookSession ]
	# the reference's module and names
	run -0 "$PY" -c 'from heartwood.notebook import NotebookSession, NotebookViewModel, build_view_model, WidgetSpec, build_widget_spec, render_widgets; import heartwood.notebook as n; print(sorted(n.__all__) == sorted(__import__("heartwood").__all__))'
	[ "$output" = True ]
}

@test "notebook: a whole task against the replay model, verified by hw-audit" {
	two_actions
	done_turn
	serve turns.jsonl
	run -0 nb task out.ipynb
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	hw-audit verify exported.jsonl >verified
	jq -e '.event_count > 20' verified
	events_contiguous
	# what the notebook printed is in the executed notebook
	jq -e '[.cells[].outputs[]? | .text? // empty | if type == "array" then join("") else . end] | join("") | test("events [0-9]+")' out.ipynb
}

@test "notebook: Reject through the widget; markup and bidi controls shown escaped" {
	two_actions
	printf '%s\n' '{"content":"Not run: <script>alert(1)</script> \u202eevil"}' >>turns.jsonl
	serve turns.jsonl
	run -0 nb reject
	[ ! -e ran.txt ]
	hw-session replay session-main | jq -s -e '[.[] | select(.kind == "approval.recorded") | .payload.decision] == ["denied"]'
}

@test "notebook: pause while the agent works, then resume" {
	slow_turns
	serve turns.jsonl
	run -0 nb pause
	[ "$(cat slow.txt)" = ok ]
	hw-session replay session-main | jq -s -e '[.[] | select(.kind == "session.paused" or .kind == "session.resumed") | .kind] == ["session.paused", "session.resumed"]'
}

# task_turns I: the two turns of task I: a set that appends "runI" to
# ran.txt and creates notesI.md, then the answer
task_turns() {
	printf '{"content":"Task %s.","tool_calls":[{"id":"a%s","name":"terminal","arguments":{"summary":"Record run %s","command":"echo run%s >> ran.txt","security_risk":"LOW"}},{"id":"b%s","name":"file_editor","arguments":{"summary":"Write notes %s","command":"create","path":"notes%s.md","file_text":"notes\\n","security_risk":"LOW"}}]}\n{"content":"Done %s."}\n' \
		"$1" "$1" "$1" "$1" "$1" "$1" "$1" "$1"
}

@test "notebook: alternating with hw ask and heartwood --plain keeps one verified log" {
	for i in 1 2 3 4; do task_turns "$i"; done >turns.jsonl
	serve turns.jsonl
	TASK='first from the notebook' run -0 nb alternate
	run -0 hw --json ask 'second from hw'
	run -0 hw --json allow
	run -0 --separate-stderr bash -c "printf '%s\n' 'third from plain' /allow | heartwood --plain"
	TASK='fourth from the notebook' run -0 nb alternate
	printf '%s\n' run1 run2 run3 run4 >want
	diff want ran.txt
	events_contiguous
	jq -r 'select(.kind == "user_message.recorded") | .payload.content' replayed >asks
	printf '%s\n' 'first from the notebook' 'second from hw' 'third from plain' 'fourth from the notebook' >want
	diff want asks
	jq -r 'select(.kind == "agent_message.emitted") | .payload.content' replayed >said
	printf 'Task %s.\nDone %s.\n' 1 1 2 2 3 3 4 4 >want
	diff want said
}

@test "notebook: a decision made in the terminal while the notebook waits is seen" {
	two_actions
	done_turn
	serve turns.jsonl
	nb waiting out.ipynb >nb.out 2>nb.err &
	NB=$!
	until_file waiting
	run -0 hw --json allow
	rc=0
	wait "$NB" || rc=$?
	NB=
	[ "$rc" -eq 0 ] || { cat nb.err; false; }
	jq -e '[.cells[].outputs[]? | .text? // empty | if type == "array" then join("") else . end] | join("") | test("seen: Done")' out.ipynb
	hw-session replay session-main | jq -s -e '[.[] | select(.kind == "approval.recorded")] | length == 1'
}

@test "notebook: a set decided while no agent ran is run by the next wait(), once" {
	two_actions
	done_turn
	serve turns.jsonl
	chat c1 'record a run'
	hw-agent run session-main
	decide_directly approve
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
	[ "$(proj .pendingApproval)" = null ]
	run -0 nb takeup out.ipynb
	[ "$(cat ran.txt)" = run ]
	hw-session replay session-main | jq -s -e '[.[] | select(.kind == "tool.execution.recorded")] | length == 2'
}

@test "notebook: two notebooks decide one set: exactly one decision, the other refused" {
	two_actions
	done_turn
	serve turns.jsonl
	chat c1 'record a run'
	hw-agent run session-main
	DECIDER=a nb decide >a.out 2>&1 &
	NB=$!
	DECIDER=b nb decide >b.out 2>&1 &
	NB2=$!
	until_file ready-a
	until_file ready-b
	: >go
	rc=0
	wait "$NB" || rc=$?
	NB=
	[ "$rc" -eq 0 ] || { cat a.out; false; }
	wait "$NB2" || rc=$?
	[ "$rc" -eq 0 ] || { cat b.out; false; }
	sort result-a result-b >results
	run -0 cat results
	[ "${lines[0]}" = decided ]
	[[ "${lines[1]}" =~ ^refused:\ heartwood:\ (No\ actions\ are\ awaiting\ review\.|approve\ is\ unavailable\ while\ the\ agent\ is\ [a-z-]+)$ ]]
	hw-session replay session-main | jq -s -e '[.[] | select(.kind == "approval.recorded")] | length == 1'
}

@test "notebook: an unknown session id is UnavailableError 66 from every method, and is not created" {
	run -0 nb bad
	[[ "$output" != *Error* ]]
	refute test -e .heartwood/sessions/no-such-session
}

# py CODE: run CODE in Debian's python3 with the bridge importable
py() { "$PY" -c "$1"; }

@test "notebook: an invalid session id is UsageError 2 and creates nothing" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, UsageError
for sid in ("../etc", "", "-x", "a" * 129, "a/b", None):
    try:
        NotebookSession(sid)
        print("accepted", repr(sid))
    except UsageError as e:
        print(e.code, e.message)'
	[ "${lines[0]}" = "2 heartwood: invalid session id '../etc'" ]
	[ "${lines[1]}" = "2 heartwood: invalid session id ''" ]
	[ "${lines[5]}" = "2 heartwood: invalid session id None" ]
	[ "${#lines[@]}" -eq 6 ]
	[[ "$output" != *accepted* ]]
	[ -z "$(ls -A)" ]
}

@test "notebook: approve and deny with nothing pending are NotAppliedError 1, nothing sent" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, NotAppliedError
for f in ("approve", "deny"):
    try:
        getattr(NotebookSession(), f)()
    except NotAppliedError as e:
        print(e.code, e.message)'
	[ "$output" = "1 heartwood: No actions are awaiting review.
1 heartwood: No actions are awaiting review." ]
	refute test -e .heartwood/sessions/session-main
}

@test "notebook: pause while nothing runs is recorded as not applied: NotAppliedError with hw-session's reason" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, NotAppliedError
try:
    NotebookSession().pause()
except NotAppliedError as e:
    print(e.code, e.message)'
	[ "$output" = "1 heartwood: pause is unavailable while the agent is idle" ]
}

@test "notebook: chat without a model route records nothing: UnavailableError 70" {
	unset HW_MODEL HW_BASE_URL
	run -0 --separate-stderr py 'from heartwood import NotebookSession, UnavailableError
try:
    NotebookSession().chat("hello")
except UnavailableError as e:
    print(e.code, e.message)'
	[[ "$output" == "70 heartwood: the agent is not ready, so nothing was recorded: "*"hw setup"* ]]
	refute test -e .heartwood/sessions/session-main
}

@test "notebook: chat with an empty or non-text prompt is UsageError 2" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, UsageError
for p in ("", None, 5):
    try:
        NotebookSession().chat(p)
    except UsageError as e:
        print(e.code, e.message)'
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "2 heartwood: a prompt is a non-empty string" ]
	refute test -e .heartwood/sessions/session-main
}

@test "notebook: wait() past its timeout is WaitTimeout, a TimeoutError" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, WaitTimeout
try:
    NotebookSession().wait(timeout=0.3, since=10**9)
except WaitTimeout as e:
    print(isinstance(e, TimeoutError), e.message)'
	[ "$output" = "True heartwood: session 'session-main' reached no stable boundary in time" ]
}

@test "notebook: the view is read-only at every level" {
	run -0 --separate-stderr py 'from heartwood import build_view_model
v = build_view_model({"lifecycle": {"status": "idle"}, "pendingApproval": None, "actions": [{"arguments": {"file_text": "x"}}]})
print(v.lifecycle.status, v.pending_approval, v.actions[0].arguments["file_text"], type(v.actions).__name__)
for f in (lambda: setattr(v, "revision", 5), lambda: setattr(v.lifecycle, "status", "x"), lambda: delattr(v, "lifecycle")):
    try:
        f()
        print("assigned")
    except AttributeError as e:
        print(e)
d = v.to_dict(); d["lifecycle"]["status"] = "changed"
print(v.lifecycle.status)'
	[ "$output" = "idle None x tuple
a heartwood view is read-only
a heartwood view is read-only
a heartwood view is read-only
idle" ]
}

@test "notebook: an unknown review mode is UsageError 2, and the mode is unchanged" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, UsageError
s = NotebookSession()
try:
    s.select_action_confirmation_mode("sometimes")
except UsageError as e:
    print(e.code, e.message)
print(s.action_settings()["mode"])'
	[ "$output" = "2 heartwood: unknown review mode 'sometimes'
ask-every-time" ]
}

@test "notebook: a path outside the project is hw-inspect's UsageError" {
	run -0 --separate-stderr py 'from heartwood import NotebookSession, UsageError
for f in ("file", "diff", "files"):
    try:
        getattr(NotebookSession(), f)("../x")
    except UsageError as e:
        print(e.code, e.message)'
	[ "${lines[0]}" = "2 hw-inspect: invalid path '../x': HW-WORKSPACE-001 not a normalized project-relative path" ]
	[ "${#lines[@]}" -eq 3 ]
}

@test "notebook: a tampered log is IntegrityError 65 from replay and audit_verify" {
	append_n 3
	sed -i '2s/message 1/message X/' .heartwood/sessions/session-main/events.jsonl
	run -0 --separate-stderr py 'from heartwood import NotebookSession, IntegrityError
for f in ("replay", "audit_verify"):
    try:
        getattr(NotebookSession(), f)()
    except IntegrityError as e:
        print(e.code, e.program)'
	[ "$output" = "65 hw-session
65 hw-audit" ]
}

@test "notebook: a session with an interrupted command is BusyError 75" {
	append_n 1
	interrupt c1
	run -0 --separate-stderr py 'from heartwood import NotebookSession, BusyError
try:
    NotebookSession().pause()
except BusyError as e:
    print(e.code, e.message)'
	[[ "$output" == "75 hw-session: "*"interrupted command"* ]]
}

@test "notebook: an interrupted wait() leaves the agent running; the next wait() sees it finish" {
	slow_turns
	serve turns.jsonl
	run -0 "$PY" "$HW_ROOT/t/nbrun.py" interrupt "$HW_ROOT/t/notebook/interrupt.py"
	[[ "$output" == *"nbrun: interrupted"* ]]
	[[ "$output" == *"after interrupt: Done slow."* ]]
	events_contiguous
}

@test "notebook: a kernel restarted while the agent runs: the agent finishes, the new kernel sees it" {
	slow_turns
	serve turns.jsonl
	run -0 "$PY" "$HW_ROOT/t/nbrun.py" restart "$HW_ROOT/t/notebook/restart.py"
	[[ "$output" == *"nbrun: restarted"* ]]
	# the tool was still running when the kernel went
	[[ "$output" == *"nbrun: slow.txt before the restart: False"* ]]
	[[ "$output" == *"new kernel: Done slow."* ]]
	events_contiguous
}

@test "notebook: the example notebook of share/notebooks runs a task" {
	two_actions
	done_turn
	serve turns.jsonl
	cp "$HW_ROOT/share/notebooks/heartwood.ipynb" .
	run -0 "$PY" "$HW_ROOT/t/nbrun.py" run heartwood.ipynb out.ipynb
	[ "$(cat ran.txt)" = run ]
	events_contiguous
	jq -e '[.cells[].outputs[]? | .text? // empty | if type == "array" then join("") else . end] | join("") | test("Done: ran.txt and notes.md.")' out.ipynb
}

@test "notebook: make install stages the package, its .pth and the page; the installed package runs the installed programs" {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$HW_ROOT" install \
	    PREFIX="$PROJ/usr" PYSITEDIR="$PROJ/site" >make.out 2>&1 || { cat make.out; false; }
	[ -f usr/share/heartwood/python/heartwood/session.py ]
	[ -f usr/share/heartwood/notebooks/heartwood.ipynb ]
	[ -f usr/share/man/man7/heartwood-notebook.7 ]
	run -0 find usr -name __pycache__
	[ -z "$output" ]
	[ "$(cat site/heartwood.pth)" = "$PROJ/usr/share/heartwood/python" ]
	unset PYTHONPATH
	PATH=/usr/bin:/bin run -0 --separate-stderr "$PY" -c 'import site; site.addsitedir("site")
import heartwood, heartwood.programs as p
print(heartwood.__file__); print(p.find_program("hw-session"))'
	[ "${lines[0]}" = "$PROJ/usr/share/heartwood/python/heartwood/__init__.py" ]
	[ "${lines[1]}" = "$PROJ/usr/bin/hw-session" ]
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$HW_ROOT" uninstall \
	    PREFIX="$PROJ/usr" PYSITEDIR="$PROJ/site" >make.out 2>&1 || { cat make.out; false; }
	refute test -e site/heartwood.pth
	refute test -e usr/share/heartwood
}

@test "notebook: the default PYSITEDIR is a directory Debian's python3 reads" {
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -n -C "$HW_ROOT" install PREFIX=/usr DESTDIR="$PROJ/stage"
	[[ "$output" == *"/usr/lib/python3/dist-packages/heartwood.pth"* ]]
	run -0 env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -n -C "$HW_ROOT" install PREFIX=/usr/local DESTDIR="$PROJ/stage"
	dir=$(grep -o "$PROJ/stage/usr/local/lib/python3[.0-9]*/dist-packages/heartwood.pth" <<<"$output" | head -1)
	dir=${dir#"$PROJ/stage"}
	"$PY" -c 'import sys, os; assert os.path.dirname(sys.argv[1]) in sys.path, sys.path' "$dir"
}

# bridge_copy: the package outside the build tree, and bin/ with the
# suite's programs but hw-serve, named by HW_BINDIR
bridge_copy() {
	mkdir -p pkg/share bin
	cp -R "$HW_ROOT/share/python" pkg/share/
	for p in hw hw-session hw-agent hw-audit hw-inspect hw-model; do ln -s "$HW_ROOT/$p" bin/; done
	export PYTHONPATH="$PWD/pkg/share/python" HW_BINDIR="$PWD/bin" PATH=/usr/bin:/bin
	unset JPY_PARENT_PID JUPYTER_SERVER_URL JUPYTER_SERVER_ROOT JUPYTERHUB_SERVICE_PREFIX JUPYTERHUB_PUBLIC_URL JUPYTER_BASE_URL HW_PUBLIC_ORIGIN
}

# fake_serve: an hw-serve that records its arguments and announces a URL
fake_serve() {
	cat >bin/hw-serve <<'S'
#!/bin/sh
echo "$@" >serve.args
echo $$ >serve.pid
echo '{"url":"http://127.0.0.1:8767/","pid":'$$'}'
exec sleep 60
S
	chmod +x bin/hw-serve
}

@test "notebook: skills through hw-skill: inspect, a refused digest, install, list, remove" {
	cp -r "$HW_ROOT/t/fixtures/skill/csv-clean" .
	d=$(hw-skill digest csv-clean | jq -r .tree_sha256)
	PYTHONPATH="$HW_ROOT/share/python" run --separate-stderr "$PY" - "$d" <<'PY'
import sys
from heartwood import NotebookSession, NotAppliedError
with NotebookSession() as s:
    print(s.skill_local_inspect("csv-clean")["tree_sha256"] == sys.argv[1])
    try:
        s.skill_local_install("csv-clean", "0" * 64)
    except NotAppliedError as e:
        print(e.code, e.message.startswith("hw-skill: refusing to install"))
    print(s.skills())
    print(s.skill_local_install("csv-clean", sys.argv[1])["status"])
    print([(k["name"], k["status"]) for k in s.skills()])
    s.skill_remove("csv-clean")
    print(s.skills())
PY
	[ "$status" -eq 0 ] || { echo "$stderr"; return 1; }
	[ "$output" = "True
1 True
[]
active
[('csv-clean', 'active')]
[]" ]
}

@test "notebook: platform_capabilities and the startup plan are the detected platform's" {
	export HEARTWOOD_PLATFORM=carina
	want=$(hw doctor --json | jq -cS .platform.capabilities)
	[ "$(jq -r .platform_id <<<"$want")" = carina ]
	run -0 --separate-stderr "$PY" -c 'import json
from heartwood import NotebookSession
with NotebookSession() as s:
    print(json.dumps(s.platform_capabilities(), sort_keys=True, separators=(",", ":")))
    print(json.dumps(s.startup_plan()["capabilities"], sort_keys=True, separators=(",", ":")))'
	[ "$output" = "$want
$want" ]
}

@test "notebook: startup_plan before, and initialize_project makes the store and answers the plan" {
	run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession
with NotebookSession() as s:
    print(s.startup_plan()["phase"])
    p = s.initialize_project()
    print(p["phase"], p["interface"])'
	[ "$output" = "project-review
connection-required notebook" ]
	[ -d .heartwood ]
}

@test "notebook: browser_url without hw-serve is UnavailableError 69" {
	bridge_copy
	run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession, UnavailableError
try:
    NotebookSession().browser_url()
except UnavailableError as e:
    print(e.code, e.message)'
	[ "$output" = "69 heartwood: cannot find program 'hw-serve': the browser interface is not installed" ]
}

@test "notebook: browser_url on loopback starts hw-serve and close() stops it" {
	bridge_copy
	fake_serve
	run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession
with NotebookSession() as s:
    print(s.browser_url())'
	[ "$output" = "http://127.0.0.1:8767/" ]
	[ "$(cat serve.args)" = "--host 127.0.0.1 --port 8767" ]
	refute kill -0 "$(cat serve.pid)"
	# forgotten without close(): stopped, and its files removed, at exit
	rm serve.pid
	mkdir tmp
	TMPDIR=$PWD/tmp run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession
s = NotebookSession()
print(s.browser_url())'
	[ "$output" = "http://127.0.0.1:8767/" ]
	refute kill -0 "$(cat serve.pid)"
	[ -z "$(ls -A tmp)" ]
}

@test "notebook: browser_url under a Jupyter server starts hw-serve in the jupyter-proxy mode behind the proxy prefix" {
	bridge_copy
	fake_serve
	JUPYTER_SERVER_URL=http://lab.test:8888/ JUPYTERHUB_SERVICE_PREFIX=/user/ana/ run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession
with NotebookSession() as s:
    print(s.browser_url(port=9001))'
	[ "$output" = "http://lab.test:8888/user/ana/proxy/9001/" ]
	[ "$(cat serve.args)" = "--host 127.0.0.1 --port 9001 --ingress jupyter-proxy --origin http://lab.test:8888 --base-path /user/ana/proxy/9001 --proxy-strips-prefix" ]
	refute kill -0 "$(cat serve.pid)"
}

@test "notebook: browser_url behind a Jupyter server proxy reaches the page and its live stream through the prefix" {
	bridge_copy
	ln -s "$HW_ROOT/hw-serve" bin/
	port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	echo "127.0.0.1:$port" >backend
	"$PY" "$HW_ROOT/t/prefix_proxy.py" "/user/ana/proxy/$port" backend >proxy.port 2>proxy.err 3>&- &
	PROXY=$!
	for _ in $(seq 100); do [ -s proxy.port ] && break; sleep 0.05; done
	P=$(cat proxy.port)
	"$HW_ROOT/hw-append" --session session-main < <(printf '{"kind":"user_message.recorded","payload":{"content":"hello"}}\n') >/dev/null
	# the real gateway, started by the bridge, seen only through the proxy
	JUPYTER_SERVER_URL=http://127.0.0.1:$P/ JUPYTERHUB_SERVICE_PREFIX=/user/ana/ run --separate-stderr "$PY" - "$port" <<'PY'
import json, sys, urllib.request
from heartwood import NotebookSession
with NotebookSession() as s:
    url = s.browser_url(port=int(sys.argv[1]))
    print(url)
    page = urllib.request.urlopen(url, timeout=30).read().decode()
    print("base" if "/user/ana/proxy/" in page else "no base")
    req = urllib.request.Request(url + "sessions/session-main/events/stream?after=-1")
    with urllib.request.urlopen(req, timeout=30) as r:
        for line in r:
            if line.startswith(b"data: "):
                frame = json.loads(line[6:])
                print([e["kind"] for e in frame["events"]])
                break
PY
	kill "$PROXY"
	wait "$PROXY" 2>/dev/null || :
	[ "$status" -eq 0 ] || { echo "$stderr"; cat proxy.err; return 1; }
	[ "${lines[0]}" = "http://127.0.0.1:$P/user/ana/proxy/$port/" ]
	[ "${lines[1]}" = base ]
	[ "${lines[2]}" = "['user_message.recorded']" ]
}

@test "notebook: browser_url under Jupyter with no known origin is None and starts nothing" {
	bridge_copy
	fake_serve
	JPY_PARENT_PID=1 run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession
print(NotebookSession().browser_url())'
	[ "$output" = None ]
	refute test -e serve.args
}

@test "notebook: browser_url: hw-serve's refusal is raised with its message; a bad port is a usage error" {
	bridge_copy
	printf '#!/bin/sh\necho "hw-serve: HW-INGRESS-001: origin must be http or https" >&2\nexit 1\n' >bin/hw-serve
	chmod +x bin/hw-serve
	run -0 --separate-stderr "$PY" -c 'from heartwood import NotebookSession, HeartwoodError, UsageError
s = NotebookSession()
try:
    s.browser_url()
except HeartwoodError as e:
    print(e.code, e.message)
for port in (0, 65536, "80"):
    try:
        s.browser_url(port=port)
    except UsageError as e:
        print(e.code, e.message)'
	[ "${lines[0]}" = "1 hw-serve: HW-INGRESS-001: origin must be http or https" ]
	[ "${lines[1]}" = "2 heartwood: invalid port 0" ]
	[ "${lines[2]}" = "2 heartwood: invalid port 65536" ]
	[ "${lines[3]}" = "2 heartwood: invalid port '80'" ]
}

# RUN_SLOW: Python that runs the fake hw-slow through Programs and prints
# whether it was interrupted, and after what the program wrote
RUN_SLOW='from heartwood.programs import Programs
try:
    Programs(".").run("hw-slow", [])
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after", open("finished").read().strip())'

@test "notebook: an interrupt as the program starts, before it is waited for, still lets it finish, then raises" {
	mkdir fake
	printf '#!/bin/sh\nsleep 0.3\necho done >finished\necho "{}"\n' >fake/hw-slow
	chmod +x fake/hw-slow
	# the interrupt lands as Popen returns, before anything waits for the
	# program: Python runs its handler there, on the next instruction
	HW_BINDIR=$PWD/fake run -0 --separate-stderr "$PY" -c 'import os, signal, subprocess
class Started(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        os.kill(os.getpid(), signal.SIGINT)
subprocess.Popen = Started
'"$RUN_SLOW"
	[ "$output" = "interrupted after done" ]
}

@test "notebook: an interrupt of the kernel's process group lets a running program finish, then raises" {
	mkdir fake
	# the program runs until the interrupt has been sent (the file go),
	# whatever the machine's load
	printf '#!/bin/sh\n: >started\nwhile [ ! -e go ]; do sleep 0.02; done\necho done >finished\necho "{}"\n' >fake/hw-slow
	chmod +x fake/hw-slow
	# the kernel's interrupt is SIGINT to its whole process group: setsid
	# gives this python a group of its own to signal
	HW_BINDIR=$PWD/fake run -0 --separate-stderr setsid -w "$PY" -c 'import os, signal, threading, time
def interrupt():
    while not os.path.exists("started"):
        time.sleep(0.01)
    os.killpg(os.getpgid(0), signal.SIGINT)
    open("go", "w").close()
threading.Thread(target=interrupt, daemon=True).start()
'"$RUN_SLOW"
	[ "$output" = "interrupted after done" ]
}

@test "notebook: a set decided elsewhere is approved only by name" {
	two_actions
	done_turn
	serve turns.jsonl
	chat c1 'record a run'
	hw-agent run session-main
	g=$(proj '.pendingApproval.groupId')
	ids=$(proj '[.pendingApproval.actions[].toolCallId]')
	hw-append --session session-main >/dev/null <<<"{\"kind\":\"approval.recorded\",\"payload\":{\"command_id\":\"x\",\"group_id\":$g,\"decision\":\"approved\",\"tool_call_ids\":$ids}}"
	[ "$(proj .pendingApproval.decidedElsewhere)" = true ]
	run -0 --separate-stderr py 'from heartwood import NotebookSession, NotAppliedError
s = NotebookSession()
g = s.replay().pending_group_id
try:
    s.approve()
except NotAppliedError as e:
    print(e.message == "heartwood: action set %r was decided elsewhere, not by you on this machine, and waits for your own decision: approve it by name (approve(%r)) or deny it" % (g, g))
print(s.replay().pending_group_id == g)
s.approve(g)
print(s.wait(timeout=60).last_reply())'
	[ "$output" = "True
True
Done: ran.txt and notes.md." ]
	[ "$(cat ran.txt)" = run ]
}
