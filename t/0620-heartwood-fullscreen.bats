#!/usr/bin/env bats
# heartwood in full-screen mode, driven through tmux (send-keys, then
# capture-pane polled until the text shows): a whole allow and a whole
# reject from the review panel, the action-review mode dialog, the tabs
# Conversation, Files and Changes, the command palette, the status bar,
# slash commands and their refusals, Esc, a tiny and a resized terminal,
# Ctrl-C, a failing agent, a set decided by another process while the
# window is open (the window holds no lease: it follows the logs), and one
# decided while nobody ran the agent on, left for the next continue.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	export HW_MODEL=openai/heartwood-replay HW_MODEL_RETRY_WAIT_MS=10
	unset HW_API_KEY_ENV HW_BASE_URL NO_COLOR
	MODEL_PID= PLAIN_PID=
	# the tmux socket, heartwood's stderr and status live beside the project
	AUX=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-tmux.XXXXXX")
	SOCK="$AUX/tmux.sock"
}

teardown() {
	tmux -S "$SOCK" kill-server 2>/dev/null
	[ -n "$MODEL_PID" ] && kill "$MODEL_PID" 2>/dev/null
	[ -n "$PLAIN_PID" ] && kill "$PLAIN_PID" 2>/dev/null
	cd / && rm -rf "$PROJ" "$AUX"
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

proj() { hw-session project session-main | jq -c "$1"; }

# one_set TAIL: a turn proposing a terminal append and a file creation,
# then the turn TAIL (a JSON line) that follows the decision
one_set() {
	cat >turns.jsonl <<'T'
{"content":"I will record a run and write notes.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo run >> ran.txt","security_risk":"LOW"}},{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
T
	echo "$1" >>turns.jsonl
	serve turns.jsonl
}

tm() { tmux -S "$SOCK" "$@"; }

# start_hw [W H [ARGS]]: heartwood in a W x H (120 x 40) tmux pane with a
# UTF-8 locale; its stderr goes to $AUX/hw.err, its status to $AUX/rc
start_hw() {
	local w=${1:-120} h=${2:-40}
	if [ $# -ge 2 ]; then shift 2; fi
	tm -f /dev/null new-session -d -x "$w" -y "$h" -c "$PROJ" \
		"env LC_ALL=C.UTF-8 heartwood $* 2>$AUX/hw.err; echo \$? >$AUX/rc; sleep 3600"
}

pane() { tm capture-pane -p; }

# reversed REGEX: the pane shows text matching REGEX in reverse video
reversed() { tm capture-pane -p -e | grep -qE $'\e\\[[0-9;]*7m'"$1"; }

# wait_for_pane TEXT [SECONDS]: poll the pane until it shows TEXT
wait_for_pane() {
	for _ in $(seq $((${2:-15} * 20))); do
		pane | grep -qF -- "$1" && return 0
		sleep 0.05
	done
	echo "the pane never showed: $1"
	pane
	return 1
}

# wait_gone TEXT: poll the pane until TEXT is no longer shown
wait_gone() {
	for _ in $(seq 300); do
		pane | grep -qF -- "$1" || return 0
		sleep 0.05
	done
	echo "the pane still shows: $1"
	pane
	return 1
}

# wait_exit: poll until heartwood has exited; its status is in $AUX/rc
wait_exit() {
	for _ in $(seq 300); do [ -s "$AUX/rc" ] && return 0; sleep 0.05; done
	echo "heartwood did not exit"
	pane
	return 1
}

# agent_pid: the hw-agent that the window runs in the background
agent_pid() {
	pgrep -x hw-agent -P "$(pgrep -x heartwood -P "$(tm display-message -p '#{pane_pid}')")"
}

# wait_queued PID: poll until the pause is with the agent PID: its
# connection waits on the control socket PID listens on, or the agent,
# which serves the socket while an action runs, has already recorded it
wait_queued() {
	for _ in $(seq 300); do
		ss -xlpH | awk -v p="pid=$1," 'index($0, p) && $3 > 0 { f = 1 } END { exit !f }' &&
			return 0
		hw-session replay session-main 2>/dev/null | jq -e -s 'any(.[];
			.kind == "command.received" and
			.payload.command_kind == "pause")' >/dev/null && return 0
		sleep 0.05
	done
	echo "no command waits for process $1, and no pause was recorded"
	return 1
}

# ready: the window is up and idle
ready() { wait_for_pane 'Ask Heartwood or enter /help'; }

@test "heartwood full-screen: a whole allow from the review panel runs the set once" {
	one_set '{"expect":"File created","content":"Both done."}'
	start_hw
	ready
	wait_for_pane 'Ready · Review Every Action'
	tm send-keys 'record a run' Enter
	wait_for_pane 'Review required · 2 actions · one decision'
	wait_for_pane '[001] You: record a run'
	wait_for_pane 'Agent: I will record a run and write notes.'
	wait_for_pane 'Review Agent Actions · 2 Actions'
	wait_for_pane '1. Record a run [terminal · Medium]'
	wait_for_pane '{"command":"echo run >> ran.txt","security_risk":"LOW","summary":"Record a run"}'
	wait_for_pane '2. Write notes [file_editor · Low]'
	wait_for_pane '"path":"notes.md"'
	wait_for_pane '[ Reject 2 Actions ]'
	wait_for_pane '[ Allow 2 Actions Once ]'
	# Reject is the one highlighted first (reverse video)
	reversed '\[ Reject 2 Actions \]'
	run ! reversed '\[ Allow'
	[ ! -e ran.txt ]
	tm send-keys Right
	for _ in $(seq 600); do reversed '\[ Allow 2 Actions Once \]' && break; sleep 0.05; done
	reversed '\[ Allow 2 Actions Once \]'
	tm send-keys Enter
	wait_for_pane 'Agent: Both done.'
	wait_gone 'Review required'
	wait_for_pane 'Action: Record a run [terminal] · succeeded · terminal exited 0'
	wait_for_pane 'Action: Write notes [file_editor] · succeeded'
	wait_for_pane 'Model activity: 2 calls · 0 tokens · openai/heartwood-replay'
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
	[ ! -s "$AUX/hw.err" ]
	hw audit verify >/dev/null
}

@test "heartwood full-screen: a whole reject: Enter on the first button, nothing runs" {
	one_set '{"expect":"rejected this action set","content":"Understood, nothing ran."}'
	start_hw
	ready
	tm send-keys 'record a run' Enter
	wait_for_pane '[ Reject 2 Actions ]'
	# typing takes the focus to the input line; Ctrl-U clears it and
	# Ctrl-L gives the focus back to the panel, on Reject
	tm send-keys 'x'
	wait_for_pane '> x'
	run ! reversed '\[ Reject'
	tm send-keys C-u C-l
	wait_for_pane 'Choose Reject or Allow above'
	reversed '\[ Reject 2 Actions \]'
	tm send-keys Enter
	wait_for_pane 'Agent: Understood, nothing ran.'
	wait_for_pane 'Action: Record a run [terminal] · rejected'
	wait_for_pane 'Action: Write notes [file_editor] · rejected'
	wait_gone 'Review required'
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["rejected","rejected"]]' ]
	# /allow now finds nothing to review, as in plain mode
	tm send-keys '/allow' Enter
	wait_for_pane 'No actions are awaiting review.'
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: the action-review mode dialog shows, sets and locks the mode" {
	start_hw
	ready
	tm send-keys '/permissions' Enter
	wait_for_pane 'Action Review'
	wait_for_pane 'Current: Review Every Action'
	wait_for_pane '> (*) Review Every Action  ask-every-time  Recommended'
	wait_for_pane '( ) Low-Risk Automation  auto-approve-low-risk'
	wait_for_pane 'Esc closes'
	# Esc closes it and changes nothing
	tm send-keys Escape
	wait_gone 'Current: Review Every Action'
	[ "$(hw-agent mode | jq -r .mode)" = ask-every-time ]
	# opened again from the palette, Down and Enter choose the other mode
	tm send-keys C-p
	wait_for_pane 'Replay Conversation'
	tm send-keys 'action' Enter
	wait_for_pane 'Current: Review Every Action'
	tm send-keys Down Enter
	wait_for_pane 'Action review: Low-Risk Automation'
	wait_for_pane 'Ready · Low-Risk Automation'
	[ "$(hw-agent mode | jq -r .mode)" = auto-approve-low-risk ]
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: the mode dialog is locked while a set waits, and says why a mode is unavailable" {
	one_set '{"content":"unused"}'
	heartwood --prompt 'record a run' >/dev/null
	export HW_API_KEY_ENV=SOME_KEY
	start_hw
	wait_for_pane 'Review required · 2 actions · one decision'
	tm send-keys C-p 'action' Enter
	wait_for_pane 'Locked while an action set waits for review.'
	wait_for_pane 'Low-Risk Automation  auto-approve-low-risk  Unavailable'
	wait_for_pane 'needs a credential-free model route'
	tm send-keys Down Enter
	wait_for_pane 'Locked while an action set waits for review.'
	[ "$(hw-agent mode | jq -r .mode)" = ask-every-time ]
	tm send-keys Escape C-q
	wait_exit
}

@test "heartwood full-screen: the Files tab lists the tree and previews the chosen file" {
	mkdir src
	printf 'one\ntwo\n' >src/a.txt
	printf 'bee\n' >b.txt
	start_hw
	ready
	tm send-keys F2
	wait_for_pane 'Project files · .'
	wait_for_pane ' b.txt '
	wait_for_pane ' src/ '
	wait_for_pane '   a.txt '
	# the first file is previewed; Down chooses the next one
	wait_for_pane 'File · b.txt · available'
	wait_for_pane 'bee'
	tm send-keys Down Down
	wait_for_pane 'File · src/a.txt · available'
	wait_for_pane '│ two'
	# /show opens a file there too; Alt-1 goes back to the conversation
	tm send-keys M-1
	wait_for_pane 'Ask Heartwood'
	wait_gone 'Project files · .'
	tm send-keys '/show b.txt' Enter
	wait_for_pane 'File · b.txt · available'
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: the Changes tab lists changed paths and shows a diff" {
	git init -q .
	git config user.email t@example.org
	git config user.name t
	mkdir src
	printf 'one\ntwo\nthree\n' >src/a.txt
	printf 'x\n' >b.txt
	git add .
	git commit -qm init
	printf 'one\n2\nthree\n' >src/a.txt
	rm b.txt
	start_hw
	ready
	tm send-keys F3
	wait_for_pane 'Project changes · Git'
	wait_for_pane 'D  b.txt'
	wait_for_pane 'M  src/a.txt'
	tm send-keys Down
	wait_for_pane 'Change · src/a.txt · available'
	wait_for_pane '│ -two'
	wait_for_pane '│ +2'
	wait_for_pane '│ @@ -1,3 +1,3 @@'
	# Tab cycles on to the conversation; /changes FILE comes back here
	tm send-keys Tab
	wait_gone 'Project changes · Git'
	tm send-keys '/changes src/a.txt' Enter
	wait_for_pane 'Change · src/a.txt · available'
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: the Conversation tab, the palette and slash commands as in plain mode" {
	one_set '{"content":"unused"}'
	start_hw
	ready
	tm send-keys F2
	wait_for_pane 'Project files · .'
	tm send-keys F1
	wait_for_pane 'Type a task for the agent below'
	tm send-keys '/bogus' Enter
	wait_for_pane 'Unknown command: /bogus. Type /help.'
	tm send-keys '/show' Enter
	wait_for_pane 'heartwood: wrong arguments for /show. Type /help.'
	tm send-keys '/help' Enter
	wait_for_pane '/audit-export [PATH]'
	wait_for_pane 'Keys: F1 F2 F3 or Alt-1 2 3 (or Tab) switch tabs'
	tm send-keys C-p 'status' Enter
	wait_for_pane 'Model: openai/heartwood-replay'
	wait_for_pane 'Session: session-main'
	tm send-keys '/specialists' Enter
	wait_for_pane 'Research specialists (the task tool'
	# /replay leaves the session's record alone in the transcript
	tm send-keys C-p 'replay' Enter
	wait_gone 'Research specialists (the task tool'
	wait_gone 'Unknown command: /bogus'
	tm send-keys '/exit' Enter
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: Esc pauses, but not while a set waits for review" {
	one_set '{"content":"unused"}'
	start_hw
	ready
	tm send-keys Escape
	wait_for_pane 'heartwood: pause is unavailable while the agent is idle'
	tm send-keys 'record a run' Enter
	wait_for_pane 'Review required · 2 actions · one decision'
	tm send-keys Escape
	wait_for_pane 'Esc cannot pause while an action set waits for review'
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: a tiny terminal says so, and a resize draws the window again" {
	start_hw 30 8
	wait_for_pane 'terminal too small'
	wait_for_pane 'need 50x12, have 30x8'
	tm resize-window -x 120 -y 40
	ready
	wait_gone 'terminal too small'
	tm resize-window -x 60 -y 14
	wait_for_pane 'F1 Conversation'
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: Ctrl-C leaves with 130 and Interrupted., the session free" {
	one_set '{"content":"unused"}'
	heartwood --prompt 'record a run' >/dev/null
	start_hw
	wait_for_pane 'Review required · 2 actions · one decision'
	# the idle window holds no lease and serves no socket
	run -0 flock -n "$(sdir)/.writer.lock" true
	[ ! -e "$(sdir)/control.sock" ]
	tm send-keys C-c
	wait_exit
	[ "$(cat "$AUX/rc")" = 130 ]
	[ "$(cat "$AUX/hw.err")" = $'\nInterrupted.' ]
	[ ! -e "$(sdir)/control.sock" ]
	run -0 hw reject
	[ "$(jq -r '.events[1].payload.decision' <<<"${lines[0]}")" = denied ]
}

@test "heartwood full-screen: a failing agent is reported in the window, which stays up" {
	# a route that is ready but where nothing listens: the run fails
	HW_BASE_URL=http://127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')/v1
	export HW_BASE_URL
	start_hw
	ready
	tm send-keys 'hello' Enter
	wait_for_pane 'the agent stopped with status'
	wait_for_pane 'HW-AGENT-012'
	wait_for_pane '[001] You: hello'
	tm send-keys '/status' Enter
	wait_for_pane 'Session: session-main'
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: with no model route a task is not recorded, hw setup is named, and the window stays up" {
	unset HW_MODEL
	start_hw
	ready
	tm send-keys 'hello' Enter
	wait_for_pane 'nothing was recorded'
	wait_for_pane "HW_MODEL is not set, and no route was saved"
	[[ "$(pane)" != *"You: hello"* ]]
	[ ! -e "$(sdir)/events.jsonl" ]
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: a set decided by another process runs in that process's agent, and the window follows" {
	one_set '{"expect":"File created","content":"Both done."}'
	heartwood --prompt 'record a run' >/dev/null
	start_hw
	wait_for_pane '[ Reject 2 Actions ]'
	run -0 flock -n "$(sdir)/.writer.lock" true
	run -0 --separate-stderr hw allow
	[ -z "$stderr" ]
	[ "$(cat ran.txt)" = run ]
	wait_for_pane 'Agent: Both done.'
	wait_gone 'Review required'
	tm send-keys C-q
	wait_exit
	hw audit verify >/dev/null
}

@test "heartwood full-screen: a set decided while nobody ran the agent on waits for the next continue, which the window shows" {
	one_set '{"expect":"File created","content":"Both done."}'
	heartwood --prompt 'record a run' >/dev/null
	decide_directly approve
	[ ! -e ran.txt ]
	start_hw
	ready
	# opening the window is no continue
	run -0 flock -n "$(sdir)/.writer.lock" true
	[ ! -e ran.txt ]
	run -0 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	wait_for_pane 'Agent: Both done.'
	tm send-keys C-q
	wait_exit
	[ ! -s "$AUX/hw.err" ]
}

@test "heartwood: mode selection: full-screen on a terminal, plain with TERM=dumb or --plain" {
	start_hw 120 40
	ready
	wait_gone 'plain mode'
	tm send-keys C-q
	wait_exit
	[ ! -s "$AUX/hw.err" ]
	# each further run in a new window of the same server
	rm -f "$AUX/rc"
	tm new-window -c "$PROJ" \
		"env TERM=dumb heartwood 2>$AUX/hw.err; echo \$? >$AUX/rc; sleep 3600"
	wait_for_pane 'plain mode'
	tm send-keys '/exit' Enter
	wait_exit
	rm -f "$AUX/rc"
	tm new-window -c "$PROJ" \
		"env LC_ALL=C.UTF-8 heartwood --plain 2>$AUX/hw.err; echo \$? >$AUX/rc; sleep 3600"
	wait_for_pane 'heartwood>'
	wait_for_pane 'plain mode'
	tm send-keys '/exit' Enter
	wait_exit
	# a terminal ncurses does not know: plain mode, and why
	rm -f "$AUX/rc"
	tm new-window -c "$PROJ" \
		"env TERM=no-such-terminal heartwood; echo \$? >$AUX/rc; sleep 3600"
	wait_for_pane "heartwood: cannot use the terminal 'no-such-terminal'; using plain mode"
	wait_for_pane 'heartwood>'
	tm send-keys '/exit' Enter
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: the agent works in the background; leaving pauses it first and loses nothing" {
	printf '%s\n' '{"content":"Waiting a little.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Wait","command":"cat go","security_risk":"LOW"}}]}' \
		'{"content":"Waited."}' >turns.jsonl
	mkfifo go	# the action (low risk: it only reads) waits on it
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	start_hw
	ready
	tm send-keys 'wait a little' Enter
	wait_for_pane 'Agent: Waiting a little.'
	wait_for_pane 'Working'
	# the action waits for go: the window says why it has not left yet
	agent=$(agent_pid)
	tm send-keys C-q
	wait_for_pane 'Pausing the agent before leaving; Ctrl-Q again stops it now.'
	wait_queued "$agent"
	[ ! -s "$AUX/rc" ]
	echo done >go
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
	# the action that ran finished and was recorded; the session is paused
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded" and .payload.result != null).payload.result')" = done ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["paused",["succeeded"]]' ]
	hw audit verify >/dev/null
}

@test "heartwood full-screen: the agent's text streams into the window while it works" {
	# a stand-in hw-agent that streams one record and then waits for go
	mkdir "$AUX/bin"
	for p in hw-session hw-inspect hw-audit; do ln -s "$HW_ROOT/$p" "$AUX/bin/$p"; done
	cp "$HW_ROOT/heartwood" "$AUX/bin/heartwood"
	cat >"$AUX/bin/hw-agent" <<SH
#!/bin/sh
[ "\$1" = run ] || exec "$HW_ROOT/hw-agent" "\$@"
echo '{"epoch":"e1","revision":99,"streamRevision":1,"text":"Thinking about the notes"}'
while [ ! -e "$AUX/go" ]; do sleep 0.05; done
SH
	chmod +x "$AUX/bin/hw-agent"
	tm -f /dev/null new-session -d -x 120 -y 40 -c "$PROJ" \
		"env PATH=$AUX/bin:/usr/bin:/bin LC_ALL=C.UTF-8 HW_BASE_URL=http://127.0.0.1:9/v1 heartwood 2>$AUX/hw.err; echo \$? >$AUX/rc; sleep 3600"
	ready
	tm send-keys 'hello' Enter
	wait_for_pane 'Agent: Thinking about the notes'
	wait_for_pane 'Working'
	wait_for_pane '[001] You: hello'
	touch "$AUX/go"
	# when the run ends the streamed text goes: only durable entries stay
	wait_gone 'Thinking about the notes'
	wait_gone 'Working'
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}

@test "heartwood full-screen: Esc pauses a working agent at its next step, /resume runs it on" {
	printf '%s\n' '{"content":"Waiting a little.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Wait","command":"cat go","security_risk":"LOW"}}]}' \
		'{"content":"Waited."}' >turns.jsonl
	mkfifo go	# the action (low risk: it only reads) waits on it
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	start_hw
	ready
	tm send-keys 'wait a little' Enter
	wait_for_pane 'Agent: Waiting a little.'
	# the pause waits for the action, which waits for go; the window lives
	agent=$(agent_pid)
	tm send-keys Escape
	wait_for_pane 'Pausing the agent at its next step...'
	tm send-keys F2
	wait_for_pane 'Project files · .'
	tm send-keys F1
	wait_queued "$agent"
	echo done >go
	wait_for_pane 'Paused · Low-Risk Automation'
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded" and .payload.result != null).payload.result')" = done ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["paused",["succeeded"]]' ]
	tm send-keys '/resume' Enter
	wait_for_pane 'Agent: Waited.'
	wait_for_pane 'Ready · Low-Risk Automation'
	tm send-keys C-q
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
	hw audit verify >/dev/null
}

@test "heartwood full-screen: SIGTERM closes the window, the session free" {
	one_set '{"content":"unused"}'
	heartwood --prompt 'record a run' >/dev/null
	start_hw
	wait_for_pane '[ Reject 2 Actions ]'
	[ ! -e "$(sdir)/control.sock" ]
	pid=$(pgrep -x heartwood -P "$(tm display-message -p '#{pane_pid}')")
	kill -TERM "$pid"
	wait_exit
	[ "$(cat "$AUX/rc")" = 143 ]
	[ ! -e "$(sdir)/control.sock" ]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
	run -0 hw reject
}

@test "heartwood full-screen: NO_COLOR draws no colour; without a UTF-8 locale · is drawn as -" {
	one_set '{"content":"unused"}'
	heartwood --prompt 'record a run' >/dev/null
	start_hw
	wait_for_pane '[ Reject 2 Actions ]'
	tm capture-pane -p -e | grep -qE $'\e\\[[0-9;]*3[0-7]m'
	tm send-keys C-q
	wait_exit
	rm -f "$AUX/rc"
	tm new-window -c "$PROJ" \
		"env NO_COLOR=1 LC_ALL=C heartwood 2>$AUX/hw.err; echo \$? >$AUX/rc; sleep 3600"
	wait_for_pane 'Review required - 2 actions - one decision'
	wait_for_pane '1. Record a run [terminal - Medium]'
	run ! grep -qE $'\e\\[[0-9;]*3[0-7]m' < <(tm capture-pane -p -e)
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: the Changes tab follows the workspace while it is shown" {
	one_set '{"expect":"File created","content":"Both done."}'
	start_hw
	ready
	tm send-keys 'record a run' Enter
	wait_for_pane 'Review required · 2 actions · one decision'
	tm send-keys F3
	wait_for_pane 'Project changes · Session actions'
	wait_for_pane 'No changes.'
	# decided from the input line, the Changes tab still shown
	tm send-keys '/allow' Enter
	wait_for_pane 'A  notes.md'
	wait_for_pane '│ +notes'
	wait_for_pane 'Project changes · Session actions'
	tm send-keys C-q
	wait_exit
}

@test "heartwood full-screen: a plain terminal and the window on one session both follow what a third process decides" {
	one_set '{"expect":"File created","content":"Both done."}'
	heartwood --prompt 'record a run' >/dev/null
	mkfifo "$AUX/in"
	heartwood --plain <"$AUX/in" >"$AUX/plain.out" 2>&1 &
	PLAIN_PID=$!
	exec 7>"$AUX/in"
	for _ in $(seq 200); do grep -q 'heartwood> ' "$AUX/plain.out" && break; sleep 0.05; done
	grep -q 'heartwood> ' "$AUX/plain.out"
	# (the tmux server must not keep the plain one's input open)
	start_hw 7>&-
	wait_for_pane '[ Reject 2 Actions ]'
	# neither holds the lease while it waits
	run -0 flock -n "$(sdir)/.writer.lock" true
	run -0 hw allow
	wait_for_pane 'Agent: Both done.'
	wait_gone 'Review required'
	for _ in $(seq 200); do grep -q 'Agent: Both done.' "$AUX/plain.out" && break; sleep 0.05; done
	[ "$(grep -c 'Agent: Both done.' "$AUX/plain.out")" -eq 1 ]
	tm send-keys C-q
	wait_exit
	exec 7>&-
	wait "$PLAIN_PID"
	PLAIN_PID=
	[ "$(cat ran.txt)" = run ]
}

@test "full-screen: a session with an interrupted command needs attention, with the reason" {
	append_n 1
	interrupt c1
	start_hw 200 40
	wait_for_pane "Needs attention: session 'session-main' has an interrupted command 'c1'"
}

@test "heartwood full-screen: /sign-in gives the terminal to the device flow; Ctrl-C stops it, not heartwood" {
	export XDG_CONFIG_HOME=$AUX/config HW_SUBSCRIPTION_POLL_MS=10
	echo '{"poll":[{"status":400,"json":{"error":"authorization_pending"}}]}' >"$AUX/script.json"
	# the sign-in stand-in of t/0567, stopped by teardown
	python3 "$HW_ROOT/t/subscription_server.py" "$AUX/script.json" "$AUX/requests.jsonl" >"$AUX/port" 2>/dev/null 3>&- &
	MODEL_PID=$!
	for _ in $(seq 100); do [ -s "$AUX/port" ] && break; sleep 0.05; done
	export HW_SUBSCRIPTION_ISSUER="http://127.0.0.1:$(cat "$AUX/port")"
	start_hw
	ready
	tm send-keys '/sign-in' Enter
	wait_for_pane 'enter the code WXYZ-1234'
	tm send-keys C-c
	wait_for_pane 'heartwood: sign-in did not complete (hw-model subscription sign-in exited 130).'
	wait_for_pane 'Ask Heartwood or enter /help'
	tm send-keys '/sign-in' Enter
	wait_for_pane 'enter the code WXYZ-1234'
	# by rename: the stand-in reads it at each poll, never half written
	echo '{"poll":[{"json":{"access_token":"at-x","refresh_token":"rt-x","token_type":"Bearer","expires_in":3600}}]}' >"$AUX/script.new"
	mv "$AUX/script.new" "$AUX/script.json"
	wait_for_pane 'Signed in with ChatGPT.'
	[ "$(stat -c %a "$AUX/config/heartwood/credentials/openai-subscription.json")" = 600 ]
	tm send-keys '/exit' Enter
	wait_exit
	[ "$(cat "$AUX/rc")" = 0 ]
}
