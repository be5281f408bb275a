#!/usr/bin/env bats
# heartwood in plain line mode, driven through standard input against the
# replay model: a whole allow and a whole reject, every slash command and
# its refusals, --prompt, end of input; the subcommands for scripts
# (actions set, audit verify and export); doctor, which creates nothing;
# a session decided from another process while heartwood has it open
# (heartwood is a client: it holds no lease while it waits, follows the
# logs and shows what the other process's agent did); and a set decided
# while nobody ran the agent on, left for the next continue.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	export HW_MODEL=openai/heartwood-replay HW_MODEL_RETRY_WAIT_MS=10
	unset HW_API_KEY_ENV HW_BASE_URL
	MODEL_PID= HW_PID= HW2_PID=
}

teardown() {
	[ -n "$HW_PID" ] && kill "$HW_PID" 2>/dev/null
	[ -n "$HW2_PID" ] && kill "$HW2_PID" 2>/dev/null
	[ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null
	cd / && rm -rf "$PROJ"
}

# serve SCRIPT: start the replay model on SCRIPT and point the agent at it
serve() {
	hw-model serve --replay "$1" >url.json 2>model.err &
	MODEL_PID=$!
	for _ in $(seq 600); do jq -e .url url.json >/dev/null 2>&1 && break; sleep 0.05; done
	jq -e .url url.json >/dev/null 2>&1 || { echo "the replay model did not start"; cat model.err; return 1; }
	HW_BASE_URL=$(jq -r .url url.json)
	export HW_BASE_URL
}

proj() { hw-session project "${2:-session-main}" | jq -c "$1"; }

# one_set TAIL: a turn proposing a terminal append and a file creation,
# then the turn TAIL (a JSON line) that follows the decision
one_set() {
	cat >turns.jsonl <<'T'
{"content":"I will record a run and write notes.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo run >> ran.txt","security_risk":"LOW"}},{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
T
	echo "$1" >>turns.jsonl
	serve turns.jsonl
}

# plain LINE ...: run heartwood --plain with the lines on standard input
plain() { printf '%s\n' "$@" | heartwood --plain; }

@test "heartwood: a whole allow: the set is shown with tools, risks and arguments, then runs once" {
	one_set '{"expect":"File created","content":"Both done."}'
	run -0 --separate-stderr plain 'record a run' /allow /allow
	[ "${lines[0]}" = "Heartwood · session session-main · plain mode" ]
	[[ "$output" == *"[001] You: record a run"* ]]
	[[ "$output" == *"Agent: I will record a run and write notes."* ]]
	[[ "$output" == *"Review required · 2 actions · one decision"* ]]
	[[ "$output" == *'  1. Record a run [terminal · Medium]'* ]]
	[[ "$output" == *'     {"command":"echo run >> ran.txt","security_risk":"LOW","summary":"Record a run"}'* ]]
	[[ "$output" == *'  2. Write notes [file_editor · Low]'* ]]
	[[ "$output" == *'"path":"notes.md"'* ]]
	[[ "$output" == *"Action: Record a run [terminal] · succeeded · terminal exited 0"* ]]
	[[ "$output" == *"Agent: Both done."* ]]
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	# the second /allow finds nothing to review
	[ "$stderr" = "No actions are awaiting review." ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	hw audit verify >/dev/null
}

@test "heartwood: a whole reject: nothing runs and the model is told" {
	one_set '{"expect":"rejected this action set","content":"Understood, nothing ran."}'
	run -0 --separate-stderr plain 'record a run' /reject
	[[ "$output" == *"Review required · 2 actions · one decision"* ]]
	[[ "$output" == *"Action: Record a run [terminal] · rejected"* ]]
	[[ "$output" == *"Agent: Understood, nothing ran."* ]]
	[ -z "$stderr" ]
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["rejected","rejected"]]' ]
}

@test "heartwood: /allow and /reject with a group id decide that set" {
	one_set '{"expect":"File created","content":"Both done."}'
	plain 'record a run' >/dev/null
	g=$(proj .pendingApproval.groupId | jq -r .)
	run -0 --separate-stderr plain "/allow $g"
	[[ "$output" == *"Agent: Both done."* ]]
	[ "$(cat ran.txt)" = run ]
}

@test "heartwood: allow and reject with nothing pending refuse, and nothing is written" {
	run -0 --separate-stderr plain /allow /reject
	[ "$stderr" = $'No actions are awaiting review.\nNo actions are awaiting review.' ]
	[ ! -e .heartwood/sessions/session-main/events.jsonl ]
}

@test "heartwood: unknown commands and wrong arguments say so" {
	run -0 --separate-stderr plain /x /bogus '/' '/show' '/help me'
	[ "${stderr_lines[0]}" = "Unknown command: /x. Type /help." ]
	[ "${stderr_lines[1]}" = "Unknown command: /bogus. Type /help." ]
	[ "${stderr_lines[2]}" = "Unknown command: /. Type /help." ]
	[ "${stderr_lines[3]}" = "heartwood: wrong arguments for /show. Type /help." ]
	[ "${stderr_lines[4]}" = "heartwood: wrong arguments for /help. Type /help." ]
}

@test "heartwood: /help lists every command" {
	run -0 --separate-stderr plain /help
	for c in /help /status /permissions /allow /reject /pause /resume /files /show /changes /replay /audit-export /specialists /sign-in /sign-out /exit; do
		grep -q -- "^  $c" <<<"$output" || [[ "$output" == *"  /pause, /resume"* && $c == /resume ]] ||
			[[ "$output" == *"  /sign-in, /sign-out"* && $c == /sign-out ]] || {
			echo "missing $c"; return 1; }
	done
}

@test "heartwood: /permissions shows the modes, sets one, refuses another" {
	run -0 --separate-stderr plain /permissions '/permissions auto-approve-low-risk' /permissions '/permissions sometimes'
	[[ "$output" == *"  * ask-every-time "* ]]
	[[ "$output" == *"Select: /permissions <value>"* ]]
	[[ "$output" == *"Action review: Low-Risk Automation"* ]]
	[[ "$output" == *"  * auto-approve-low-risk "* ]]
	[ "$stderr" = "Unknown review mode: sometimes. Select: /permissions ask-every-time | auto-approve-low-risk" ]
	[ "$(hw-agent mode | jq -r .mode)" = auto-approve-low-risk ]
	run -0 plain '/permissions ask-every-time'
	[ "$(hw-agent mode | jq -r .mode)" = ask-every-time ]
}

@test "heartwood: /status, /specialists, /replay and /exit" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	run -0 --separate-stderr plain /status /specialists /replay /exit 'never read'
	[[ "$output" == *"Session: session-main"* ]]
	[[ "$output" == *"Model: openai/heartwood-replay"* ]]
	[[ "$output" == *"Policy decision: allow · allowed by policy 'generic-custom-api': the endpoint is allowlisted"* ]]
	[[ "$output" == *"Credential isolation: credential-free"* ]]
	[[ "$output" == *"Status: Waiting for your review · Review Every Action"* ]]
	[[ "$output" == *"Research specialists (the task tool; each delegation is reviewed like any action):"* ]]
	[[ "$output" == *"analysis-implementer"*"project-actions, unavailable:"* ]]
	# /replay prints the conversation again, after the banner printed it once
	[ "$(grep -c 'You: record a run' <<<"$output")" -eq 2 ]
	[ -z "$stderr" ]
	[ "$(proj '[.conversation[] | .content]')" = '["record a run","I will record a run and write notes."]' ]
}

@test "heartwood: /pause is declined while idle; /resume while idle too" {
	run -0 --separate-stderr plain /pause /resume
	[ "${stderr_lines[0]}" = "heartwood: pause is unavailable while the agent is idle" ]
	[[ "${stderr_lines[1]}" == "heartwood: resume is unavailable"* ]]
	[[ "$output" == *"Request not applied: pause is unavailable while the agent is idle"* ]]
}

@test "heartwood: /pause and /resume a running session" {
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	echo '{"content":"unused"}' >turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr plain /pause
	[ -z "$stderr" ]
	[[ "$output" == *"Status: Paused"* ]]
	[ "$(proj .lifecycle.status)" = '"paused"' ]
	# the run this fake state claims was lost: resume reaches the agent, which says so
	run -0 --separate-stderr plain /resume
	[[ "$stderr" == *"HW-AGENT-007"* ]]
	[[ "$stderr" == *"heartwood: the agent stopped with status 1"* ]]
}

@test "heartwood: /files, /show and /changes need hw-inspect and say so without it" {
	mkdir bin
	for p in hw-session hw-agent hw-audit; do ln -s "$HW_ROOT/$p" bin/$p; done
	cp "$HW_ROOT/heartwood" bin/heartwood
	PATH="$PWD/bin:/usr/bin:/bin" run -0 --separate-stderr bin/heartwood --plain < <(printf '%s\n' /files '/show a.txt' /changes)
	[ "$stderr" = $'heartwood: /files needs hw-inspect, which is not installed\nheartwood: /show needs hw-inspect, which is not installed\nheartwood: /changes needs hw-inspect, which is not installed' ]
}

@test "heartwood: /files, /show and /changes show hw-inspect's views as text" {
	git init -q .
	git config user.email t@example.org
	git config user.name t
	mkdir src
	printf 'one\ntwo\nthree\n' >src/a.txt
	printf 'x\n' >b.txt
	git add .
	git commit -qm init
	printf 'one\n2\nthree\nfour\n' >src/a.txt
	rm b.txt
	printf 'bell\a\n' >c.txt
	run -0 --separate-stderr plain /files '/files src' '/show src/a.txt' '/show nope' /changes '/changes src/a.txt'
	[ -z "$stderr" ]
	out=$(sed 's/^heartwood> //' <<<"$output" | sed -n '/^Project files · \.$/,$p')
	[ "$out" = "Project files · .
  c.txt
  src/
    a.txt
Project files · src
  a.txt
File · src/a.txt · available
one
2
three
four
File · nope · unavailable
the file does not exist
Project changes · Git
D  b.txt
A  c.txt
M  src/a.txt
Change · src/a.txt · available
--- a/src/a.txt
+++ b/src/a.txt
@@ -1,3 +1,4 @@
 one
-two
+2
 three
+four" ] || { echo "$out"; return 1; }
	run -0 --separate-stderr plain '/show c.txt' '/show ../x'
	[[ "$output" == *'bell\x07'* ]]
	[[ "$stderr" == "hw-inspect: invalid path '../x': "* ]]
}

@test "heartwood: /audit-export names the session's export and its record count, and writes nothing in the project" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	before=$(ls -A)
	run -0 --separate-stderr plain /audit-export
	exp="$PWD/$(sdir)/audit-export.jsonl"
	n=$(wc -l <"$exp")
	[ "$n" -gt 3 ]
	[[ "$output" == *"Audit log exported to $exp ($n records)"* ]]
	[ "$(ls -A)" = "$before" ]
	hw-audit verify "$exp" >/dev/null
}

@test "heartwood: /audit-export PATH writes a scrubbed copy there that verifies" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	run -0 --separate-stderr plain '/audit-export copy.jsonl'
	n=$(wc -l <copy.jsonl)
	[[ "$output" == *"Audit log exported to copy.jsonl ($n records)"* ]]
	hw-audit verify copy.jsonl >/dev/null
	run -0 plain '/audit-export .heartwood/inside.jsonl'
	[ ! -e .heartwood/inside.jsonl ]
}

@test "heartwood: the transcript shows an audit export as its label, with no empty colon" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	run -0 --separate-stderr plain /audit-export /replay
	[[ "$output" == *"] Audit exported"$'\n'* ]]
	[[ "$output" != *"Audit exported:"* ]]
}

@test "heartwood: control characters in text are shown escaped" {
	printf '{"content":"bell\\u0007 and escape\\u001b[31m"}\n' >turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr plain 'say it'
	[[ "$output" == *'Agent: bell\x07 and escape\x1b[31m'* ]]
	! grep -q $'\x1b' <<<"$output"
}

@test "heartwood: end of input leaves with 0, the session as it was" {
	run -0 --separate-stderr heartwood --plain </dev/null
	[ "${lines[0]}" = "Heartwood · session session-main · plain mode" ]
	[ "${lines[-1]}" = "heartwood> " ]
	[ ! -e .heartwood/sessions/session-main/events.jsonl ]
	# without --plain and without a terminal, usage and 0
	run -0 --separate-stderr heartwood </dev/null
	[[ "$output" == usage:* ]]
}

@test "heartwood: with no model configured, a task is not recorded and hw setup is named" {
	unset HW_MODEL
	msg="heartwood: the agent is not ready, so nothing was recorded: HW_MODEL is not set, and no route was saved: run 'hw setup'"
	run -70 --separate-stderr heartwood --prompt hello
	[ "$stderr" = "$msg" ]
	[ ! -e .heartwood ]
	run -0 --separate-stderr heartwood --plain <<<'hello'
	[ "$stderr" = "$msg" ]
	[[ "$output" != *"You: hello"* ]]
	[ ! -e .heartwood ]
}

@test "heartwood --plain: a tampered session prints the error, reads nothing and exits 65" {
	append_n 2
	sed -i '1s/message 0/message X/' "$(sdir)/events.jsonl"
	run -65 --separate-stderr heartwood --plain <<<'hello'
	[ "${lines[0]}" = "Heartwood · session session-main · plain mode" ]
	[[ "$output" != *"heartwood> "* ]]
	[ "$stderr" = $'hw-session: sequence 0: audit session_event_hash does not match the session event\nheartwood: cannot project session \'session-main\'' ]
	[ "$(grep -c . "$(sdir)/events.jsonl")" -eq 2 ]
}

@test "heartwood: --prompt runs one task to review and exits 0; a failed run passes its code on" {
	one_set '{"content":"unused"}'
	run -0 --separate-stderr heartwood --prompt 'record a run'
	[[ "$output" == *"Review required · 2 actions · one decision"* ]]
	[[ "$output" != *"heartwood>"* ]]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
	[ ! -e ran.txt ]
	# a chat while a set waits is not applied: exit 1 with the reason
	run -1 --separate-stderr heartwood -p 'another'
	[[ "$stderr" == "heartwood: "* ]]
	run -2 --separate-stderr heartwood --session-id '../x' --prompt hi
	[ "$stderr" = "heartwood: invalid session id '../x'" ]
}

@test "heartwood: --prompt with no model route fails with the agent's status" {
	run --separate-stderr heartwood --prompt hi
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"HW_BASE_URL"* || "$stderr" == *"HW_MODEL"* ]]
}

@test "heartwood: actions set, and a refused mode is a usage error" {
	run -0 heartwood actions
	[ "$(jq -r .mode <<<"$output")" = ask-every-time ]
	run -0 heartwood actions set auto-approve-low-risk
	[ "$(jq -r .mode <<<"$output")" = auto-approve-low-risk ]
	[ "$(hw-agent mode | jq -r .mode)" = auto-approve-low-risk ]
	run -2 --separate-stderr heartwood actions set sometimes
	[ "$(hw-agent mode | jq -r .mode)" = auto-approve-low-risk ]
	run -2 --separate-stderr heartwood actions bogus
	[[ "$stderr" == usage:* ]]
}

@test "heartwood: audit verify and export; a tampered log fails with 65" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	run -0 heartwood audit verify
	run -0 heartwood audit export --output out.jsonl
	hw-audit verify out.jsonl >/dev/null
	run -2 --separate-stderr heartwood audit export
	[[ "$stderr" == usage:* ]]
	sed -i '2s/record a run/record a rum/' "$(sdir)/events.jsonl"
	run -65 heartwood audit verify
}

@test "heartwood: doctor is read-only and reports its checks" {
	run -0 --separate-stderr heartwood doctor --json
	[ -z "$(ls -A)" ]
	[ "$(jq -r .state <<<"$output")" = setup-required ]
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .code' <<<"$output")" = HW-MODEL-001 ]
	[ "$(jq -r '.checks[] | select(.check_id == "project-state") | [.status, .code] | join(" ")' <<<"$output")" = "warning HW-PROJECT-002" ]
	[ "$(jq -r .project_root <<<"$output")" = "$PWD" ]
	[ "$(jq -c '[.checks[] | select(.status == "pass") | has("code")] | unique' <<<"$output")" = '[false]' ]
	export HW_BASE_URL=http://127.0.0.1:9/v1 HW_API_KEY_ENV=SECRET_KEY SECRET_KEY=sk-do-not-print
	run -0 --separate-stderr heartwood doctor
	[ "${lines[0]}" = "Readiness: ready" ]
	[[ "$output" == *"[OK] model openai/heartwood-replay at http://127.0.0.1:9/v1"* ]]
	[[ "$output" == *'[OK] the key is read from $SECRET_KEY (not shown)'* ]]
	[[ "$output" == *"[NOTE] heartwood has not been used in this project yet"* ]]
	[[ "$output" != *sk-do-not-print* ]]
	[ -z "$(ls -A)" ]
}

# readme_para PREFIX: the README's paragraph that starts with PREFIX, on
# one line, without the prefix
readme_para() {
	awk -v p="$1" 'index($0, p) == 1 { on = 1 } on && !NF { exit }
		on { printf "%s%s", (n++ ? " " : ""), $0 }' "$HW_ROOT/README" |
		cut -c $((${#1} + 1))-
}

@test "heartwood --version, doctor and the README agree on what is implemented, and that nothing is planned" {
	done_=$(readme_para 'Implemented: ')
	[[ "$done_" == "hw-append, "*"heartwood"*"in the browser UI." ]]
	# nothing is planned: no such paragraph, and no such line
	[ -z "$(readme_para 'Planned, not yet implemented: ')" ]
	run -1 grep -n Planned "$HW_ROOT/README"
	run -0 --separate-stderr heartwood --version
	[ "${lines[0]}" = "heartwood 0.1.0" ]
	[ "${lines[1]}" = "Implemented: $done_" ]
	[ "${#lines[@]}" -eq 2 ]
	run -0 --separate-stderr heartwood doctor
	[ "${lines[-1]}" = "Implemented: $done_" ]
	[[ $output != *Planned* ]]
	run -0 --separate-stderr heartwood doctor --json
	[ "$(jq -r .implemented <<<"$output")" = "$done_" ]
	[ "$(jq -c .planned <<<"$output")" = '""' ]
}

@test "heartwood --plain and doctor: a session with an interrupted command needs attention, with the reason" {
	append_n 1
	interrupt c1
	why="session 'session-main' has an interrupted command 'c1': it was accepted but never completed, and will not run again; continue in a new session"
	run -0 --separate-stderr heartwood --plain </dev/null
	[[ "$output" == *"Needs attention: $why"* ]]
	export HW_BASE_URL=http://127.0.0.1:9/v1
	run -1 --separate-stderr heartwood doctor --json
	[ "$(jq -r .state <<<"$output")" = recovery-required ]
	[ "$(jq -r '.checks[] | select(.check_id == "session-commands") | [.status, .code, .summary] | join(" | ")' <<<"$output")" = \
		"fail | HW-AGENT-005 | $why" ]
	run -1 --separate-stderr hw doctor
	[[ "$output" == *"[FAIL] $why"* ]]
}

@test "heartwood: doctor fails on a broken store and an incoherent mode" {
	ln -s /tmp .heartwood
	run -1 --separate-stderr heartwood doctor --json
	[ "$(jq -r .state <<<"$output")" = recovery-required ]
	[ "$(jq -r '.checks[] | select(.check_id == "project-storage") | .code' <<<"$output")" = HW-PROJECT-001 ]
	rm .heartwood
	hw-agent mode auto-approve-low-risk >/dev/null
	export HW_BASE_URL=http://127.0.0.1:9/v1 HW_API_KEY_ENV=SECRET_KEY SECRET_KEY=k
	run -1 --separate-stderr heartwood doctor
	[[ "$output" == *"[FAIL] Low-Risk Automation needs a credential-free or platform-isolated model route"* ]]
	[[ "$output" == *"HW-SETUP-002 · Run: heartwood actions set ask-every-time"* ]]
	run -2 --separate-stderr heartwood doctor --yaml
	[[ "$stderr" == usage:* ]]
}

# wait_prompt FILE N: poll until FILE shows at least N prompts
wait_prompt() {
	for _ in $(seq 300); do
		[ "$(grep -o 'heartwood> ' "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

@test "heartwood: a session decided from another process while heartwood waits, then continued from a third" {
	one_set $'{"expect":"File created","content":"Both done."}\n{"content":"Second task done."}'
	mkfifo in
	heartwood --plain <in >hw.out 2>hw.err &
	HW_PID=$!
	exec 7>in
	echo 'record a run' >&7
	for _ in $(seq 200); do grep -q 'Review required' hw.out && break; sleep 0.05; done
	grep -q 'Review required' hw.out
	wait_prompt hw.out 2
	# heartwood holds no lease while it waits for a line, and serves nothing
	run -0 flock -n "$(sdir)/.writer.lock" true
	[ ! -e "$(sdir)/control.sock" ]
	# nothing is due: a continue does nothing
	run -0 --separate-stderr hw-agent run session-main
	[ ! -e ran.txt ]
	# another process decides the set and runs the agent on itself
	run -0 --separate-stderr hw allow
	[ -z "$stderr" ]
	[ "$(jq -r '.events[1].payload.decision' <<<"${lines[0]}")" = approved ]
	# heartwood follows the logs and shows what that agent did, once
	for _ in $(seq 200); do grep -q 'Both done' hw.out && break; sleep 0.05; done
	[ "$(grep -c 'Agent: Both done.' hw.out)" -eq 1 ]
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	echo /allow >&7
	exec 7>&-
	wait "$HW_PID"
	HW_PID=
	[ "$(cat hw.err)" = "No actions are awaiting review." ]
	# a third continues the same session
	run -0 heartwood --prompt 'and then?'
	[[ "$output" == *"Agent: Second task done."* ]]
	[ "$(cat ran.txt)" = run ]
	[ "$(hw-session replay session-main | jq -r .sequence | tr '\n' ' ')" = \
		"$(seq 0 $(($(hw-session replay session-main | wc -l) - 1)) | tr '\n' ' ')" ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	hw audit verify >/dev/null
}

@test "heartwood: two idle terminals hold no lease; the agent a third process runs inherits none and both show it" {
	cat >turns.jsonl <<'T'
{"content":"I will record a run.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo run >> ran.txt; ls -l /proc/$$/fd/ > fds.txt; env > env.txt; echo recorded","security_risk":"LOW"}}]}
{"expect":"recorded","content":"Run recorded."}
T
	serve turns.jsonl
	heartwood --prompt 'record a run' >/dev/null
	mkfifo in in2
	heartwood --plain <in >hw.out 2>hw.err &
	HW_PID=$!
	exec 7>in
	heartwood --plain <in2 >hw2.out 2>hw2.err &
	HW2_PID=$!
	exec 8>in2
	wait_prompt hw.out 1
	wait_prompt hw2.out 1
	run -0 flock -n "$(sdir)/.writer.lock" true
	run -0 --separate-stderr hw allow
	for _ in $(seq 300); do grep -q 'Run recorded' hw.out && grep -q 'Run recorded' hw2.out && break; sleep 0.05; done
	[ "$(grep -c 'Agent: Run recorded.' hw.out)" -eq 1 ]
	[ "$(grep -c 'Agent: Run recorded.' hw2.out)" -eq 1 ]
	[ "$(cat ran.txt)" = run ]
	# what the agent ran inherited neither the lease nor a variable for it
	refute grep -q 'writer.lock' fds.txt
	refute grep -q HW_LEASE_FD env.txt
	run -0 flock -n "$(sdir)/.writer.lock" true
	exec 7>&- 8>&-
	wait "$HW_PID"
	HW_PID=
	wait "$HW2_PID"
	HW2_PID=
	[ -z "$(cat hw.err)" ]
	[ -z "$(cat hw2.err)" ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded"]]' ]
}

@test "heartwood: a set decided while nobody ran the agent on is left for the next continue, which runs it once" {
	one_set '{"expect":"File created","content":"Both done."}'
	heartwood --prompt 'record a run' >/dev/null
	decide_directly approve
	[ "$(proj '[.lifecycle.status, .pendingApproval, [.actions[].state]]')" = \
		'["waiting-for-confirmation",null,["approved","approved"]]' ]
	# opening a terminal is no continue: it runs nothing, not even a try
	unset HW_MODEL
	run -0 --separate-stderr plain /status /status
	refute grep -q 'HW_MODEL' <<<"$stderr"
	[ ! -e ran.txt ]
	# it says so, and how to continue
	[ "$(grep -c "^Needs attention: an action set was decided but no agent has taken it up; continue with 'hw agent run session-main'$" <<<"$output")" -eq 1 ]
	export HW_MODEL=openai/heartwood-replay
	mkfifo in
	heartwood --plain <in >hw.out 2>hw.err &
	HW_PID=$!
	exec 7>in
	wait_prompt hw.out 1
	# the continue, from anywhere: the terminal shows what it did
	run -0 --separate-stderr hw-agent run session-main
	for _ in $(seq 300); do grep -q 'Both done' hw.out && break; sleep 0.05; done
	[ "$(grep -c 'Agent: Both done.' hw.out)" -eq 1 ]
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	# a second continue has nothing to do
	run -0 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	exec 7>&-
	wait "$HW_PID"
	HW_PID=
	[ -z "$(cat hw.err)" ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
}

@test "heartwood: what another process changes while heartwood waits is shown" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	mkfifo in
	heartwood --plain <in >hw.out 2>hw.err &
	HW_PID=$!
	exec 7>in
	wait_prompt hw.out 1
	# a chat while the set waits is declined; heartwood shows the record
	run -1 --separate-stderr hw ask something else
	for _ in $(seq 200); do grep -q 'Request not applied' hw.out && break; sleep 0.05; done
	exec 7>&-
	wait "$HW_PID"
	HW_PID=
	[ "$(grep -c 'Request not applied' hw.out)" -eq 1 ]
	[ ! -e ran.txt ]
	[ -z "$(cat hw.err)" ]
}

@test "heartwood: allow, reject, pause, resume and replay as subcommands" {
	run -1 --separate-stderr heartwood allow
	[ "$stderr" = "heartwood: No actions are awaiting review." ]
	[ -z "$output" ]
	run -1 --separate-stderr heartwood deny
	[ "$stderr" = "heartwood: No actions are awaiting review." ]
	run -1 --separate-stderr heartwood pause
	[ "$stderr" = "heartwood: pause is unavailable while the agent is idle" ]
	one_set '{"expect":"File created","content":"Both done."}'
	heartwood --prompt 'record a run' >/dev/null
	run -0 --separate-stderr heartwood approve
	[ "$(jq -r '.events[1].payload.decision' <<<"${lines[0]}")" = approved ]
	[ "$(jq -c '[.lifecycle.status, .conversation[-1].content]' <<<"${lines[1]}")" = '["idle","Both done."]' ]
	[ "$(cat ran.txt)" = run ]
	run -0 heartwood replay
	[ "$(jq -r .sequence <<<"${lines[0]}")" = 0 ]
	run -2 --separate-stderr heartwood replay now
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood --plain allow
	[[ "$stderr" == usage:* ]]
}

@test "heartwood: files list, files show, changes and specialists as subcommands" {
	mkdir -p src/deep
	echo hi >src/a.txt
	echo x >src/deep/b.txt
	run -0 --separate-stderr heartwood files list src --depth 1
	[ "$output" = $'Project files · src\n  a.txt\n  deep/\n[truncated]' ]
	run -0 --separate-stderr heartwood files list src
	[ "$output" = $'Project files · src\n  a.txt\n  deep/\n    b.txt' ]
	run -0 heartwood files show src/a.txt
	[ "$output" = $'File · src/a.txt · available\nhi' ]
	run -1 heartwood files show nope
	[ "$output" = $'File · nope · unavailable\nthe file does not exist' ]
	run -0 heartwood changes
	[ "${lines[0]}" = "Project changes · Session actions" ]
	run -0 heartwood specialists
	[ "${lines[0]}" = "Research specialists (the task tool; each delegation is reviewed like any action):" ]
	[ "$(awk 'NR > 1 && NR % 2 == 0 {print $1}' <<<"$output" | wc -l)" = 6 ]
	run -0 env HW_DATADIR="$PROJ/none" heartwood specialists
	[ "$output" = "No specialists are configured." ]
	run -2 --separate-stderr heartwood files
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood files list a b
	run -2 --separate-stderr heartwood changes a b
}

@test "heartwood: a run over a second shows progress on a terminal, erased after; NO_COLOR and pipes get none so soon" {
	printf '%s\n' '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Wait","command":"sleep 2","security_risk":"LOW"}}]}' \
		'{"content":"Waited."}' '{"tool_calls":[{"id":"b","name":"terminal","arguments":{"summary":"Wait","command":"sleep 2","security_risk":"LOW"}}]}' \
		'{"content":"Waited again."}' >turns.jsonl
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	script -qec "heartwood --prompt 'wait a little'" /dev/null >tty.out
	grep -q $'\rWorking' tty.out
	grep -q $'\r\e\\[K\\[001\\] You: wait a little' tty.out
	grep -q 'Agent: Waited.' tty.out
	NO_COLOR=1 script -qec "heartwood --prompt 'once more'" /dev/null >tty2.out
	grep -q 'Agent: Waited again.' tty2.out
	! grep -q 'Working' tty2.out
}

@test "heartwood: Ctrl-C leaves with 130 and Interrupted., the session free" {
	one_set '{"content":"unused"}'
	plain 'record a run' >/dev/null
	mkfifo in
	heartwood --plain <in >hw.out 2>hw.err &
	HW_PID=$!
	exec 7>in
	wait_prompt hw.out 1
	[ ! -e "$(sdir)/control.sock" ]
	kill -INT "$HW_PID"
	rc=0
	wait "$HW_PID" || rc=$?
	HW_PID=
	exec 7>&-
	[ "$rc" -eq 130 ]
	[ "$(cat hw.err)" = $'\nInterrupted.' ]
	[ ! -e "$(sdir)/control.sock" ]
	# the lease is free: another process decides the set
	run -0 hw reject
	[ "$(jq -r '.events[1].payload.decision' <<<"${lines[0]}")" = denied ]
}

# ---- what reaches the terminal: C1 controls, bidirectional overrides ----
#
# A C1 control (U+0080-009F: U+009B is CSI, U+009D OSC, U+009C ST) acts
# as ESC [ and friends on many terminals, and a bidirectional override or
# isolate (U+202A-202E, U+2066-2069) reorders what follows, so a file
# name or a line of code can show as something it is not.  Each is shown
# as \uXXXX, and no raw byte of one reaches the terminal.

# raw_c1_bidi: succeeds when stdin holds none of the raw sequences
raw_c1_bidi() {
	refute grep -qP '\x1b|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]'
}

@test "escapes: model text with C1 controls and bidi overrides is shown escaped in plain mode" {
	printf '{"content":"csi\\u009b2J osc\\u009d0;x\\u009c rlo\\u202eabc lri\\u2066x\\u2069"}\n' >turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr plain 'say it'
	[[ "$output" == *'Agent: csi\u009b2J osc\u009d0;x\u009c rlo\u202eabc lri\u2066x\u2069'* ]] || { echo "$output"; return 1; }
	raw_c1_bidi <<<"$output"
}

@test "escapes: files show escapes ESC, C1 controls and bidi overrides in a file" {
	printf 'a\033[2Jb \302\233c \342\200\256d \342\201\247e\n' >f.txt
	run -0 --separate-stderr heartwood files show f.txt
	[ "$output" = $'File · f.txt · available\na\\x1b[2Jb \\u009bc \\u202ed \\u2067e' ]
	raw_c1_bidi <<<"$output"
}

@test "escapes: changes FILE escapes the lines of a diff" {
	git init -q .
	printf 'same\n' >f.txt
	git add f.txt
	git -c user.email=a@b -c user.name=a commit -qm one
	printf 'same\nnew\302\235x \342\200\253y\033]0;t\007\n' >f.txt
	run -0 --separate-stderr heartwood changes f.txt
	[[ "$output" == *$'\n+new\\u009dx \\u202by\\x1b]0;t\\x07'* ]] || { echo "$output"; return 1; }
	raw_c1_bidi <<<"$output"
}

@test "escapes: an error quoting its subject shows ESC escaped" {
	run -2 --separate-stderr hw-inspect file $'f\e[2Jx.txt'
	[[ "$stderr" == "hw-inspect: invalid path 'f\\x1b[2Jx.txt': "* ]] || { echo "$stderr"; return 1; }
	raw_c1_bidi <<<"$stderr"
}

# ---- a list of changes that cannot be complete says so ----

@test "changes: paths the views cannot show make the list say it is incomplete, with 1" {
	git init -q .
	echo a >a
	git add a
	git -c user.email=a@b -c user.name=a commit -qm one
	printf 'x\n' >$'notes\u202e.md'
	mkdir -p sub/.Heartwood
	echo 'echo hi' >sub/.Heartwood/payload.sh
	run -1 --separate-stderr heartwood changes
	[ "$output" = "Project changes · Git
The list is incomplete: changed paths whose names cannot be shown were left out (a control or format character such as a bidirectional override, a backslash, .git or .heartwood in any letter case, or not a regular file)." ]
	run -1 --separate-stderr hw changes
	[[ "$output" == *"The list is incomplete: "* ]]
	[[ "$output" != *"No changes."* ]]
}
