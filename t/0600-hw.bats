#!/usr/bin/env bats
# hw: the driver.  hw foo runs hw-foo; its workflows (ask, allow, reject,
# pause, resume, status, actions, sessions, audit) compose hw-session and
# hw-agent against the replay model, print their JSON lines and pass
# their exit codes on, and say plainly when there is nothing to review;
# files, changes and doctor print what heartwood's subcommands print.

load lib
load agent

setup() { agent_setup; }
teardown() { agent_teardown; }


@test "hw: an unknown command is a usage error" {
	run -2 --separate-stderr hw nope
	[ -z "$output" ]
	[ "$stderr" = "hw: 'nope' is not a heartwood command" ]
	run -2 --separate-stderr hw ../hw-session list
	[ "$stderr" = "hw: '../hw-session' is not a heartwood command" ]
	run -2 --separate-stderr hw
	[[ "$stderr" == usage:* ]]
}

@test "hw: -h or --help after a workflow prints the usage and records nothing" {
	for v in ask allow reject pause changes files doctor audit sessions; do
		for h in -h --help; do
			run -0 --separate-stderr hw "$v" "$h"
			[[ $output == usage:* ]] || { echo "$v $h: $output"; return 1; }
		done
	done
	run -0 hw --session-id other ask --help
	[[ $output == usage:* ]]
	[ ! -e .heartwood ]
}

@test "hw: hw foo runs hw-foo with its arguments, status and output" {
	run -0 hw session new --title Dispatched
	[ "$(jq -r .title <<<"$output")" = Dispatched ]
	run -0 hw append --session s2 < <(draft agent_message.emitted '{"content":"hi"}')
	[ "$(jq -r .sequence <<<"$output")" = 0 ]
	[ "$(hw-session replay s2 | jq -r .payload.content)" = hi ]
	run -2 --separate-stderr hw session bogus
	[[ "$stderr" == *usage:* ]]
	# --session-id is hw's own option, not the dashed program's
	run -2 --separate-stderr hw --session-id s2 append --session s2
	[ "$stderr" = "hw: --session-id does not apply to 'append'" ]
}

@test "hw: a program beside hw comes before one on PATH" {
	mkdir bin
	printf '#!/bin/sh\necho "on path: $*"\n' >bin/hw-audit
	chmod +x bin/hw-audit
	PATH="$PWD/bin:$PATH" run -66 --separate-stderr hw audit verify
	[ "$stderr" = "hw-audit: no heartwood store in this directory" ]
	printf '#!/bin/sh\necho "on path: $*"\n' >bin/hw-extra
	chmod +x bin/hw-extra
	PATH="$PWD/bin:$PATH" run -0 hw extra a 'b c'
	[ "$output" = "on path: a b c" ]
}

@test "hw: ask waits for review, allow runs the set and prints the projection" {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr hw ask record a run
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c '[.events[].kind]' <<<"${lines[0]}")" = '["command.received","user_message.recorded"]' ]
	[[ "$(jq -r '.events[0].payload.command_id' <<<"${lines[0]}")" =~ ^session-main-chat-[0-9a-f]{32}$ ]]
	[ "$(jq -r '.events[1].payload.content' <<<"${lines[0]}")" = "record a run" ]
	[ "$(jq -r .lifecycle.status <<<"${lines[1]}")" = waiting-for-confirmation ]
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	run -0 hw status
	g=$(proj .pendingApproval.groupId)
	[ "$(jq -c '[.researcherStatus.code, .lifecycle.status, .pendingApproval.groupId, [.pendingApproval.actions[] | [.toolName, .summary, .risk]]]' <<<"$output")" = \
		"[\"waiting-for-review\",\"waiting-for-confirmation\",$g,[[\"terminal\",\"Record a run\",\"medium\"],[\"file_editor\",\"Write notes\",\"low\"]]]" ]
	run -0 hw allow
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -r '.events[1].kind, .events[1].payload.decision' <<<"${lines[0]}")" = $'approval.recorded\napproved' ]
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	[ "$(jq -c '[.lifecycle.status, [.actions[].state], .conversation[-1].content]' <<<"${lines[1]}")" = \
		'["idle",["succeeded","succeeded"],"Both done."]' ]
	run -0 hw status
	[ "$(jq -c '[.researcherStatus.code, .pendingApproval]' <<<"$output")" != '["waiting-for-review",null]' ]
	[ "$(jq -c .pendingApproval <<<"$output")" = null ]
	hw audit verify >/dev/null
}

@test "hw: reject runs nothing and the model is told" {
	two_actions
	echo '{"expect":"rejected this action set","content":"Understood, nothing ran."}' >>turns.jsonl
	serve turns.jsonl
	hw ask record a run >/dev/null
	run -0 hw deny "$(proj .pendingApproval.groupId | jq -r .)"
	[ "$(jq -r '.events[1].payload.decision' <<<"${lines[0]}")" = denied ]
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(jq -c '[.lifecycle.status, [.actions[].state], .conversation[-1].content]' <<<"${lines[1]}")" = \
		'["idle",["rejected","rejected"],"Understood, nothing ran."]' ]
}

@test "hw: allow and reject with nothing pending say so and exit 1" {
	for verb in allow approve reject deny; do
		run -1 --separate-stderr hw $verb
		[ -z "$output" ]
		[ "$stderr" = "hw: No actions are awaiting review." ]
	done
	[ ! -e .heartwood/sessions/session-main/events.jsonl ]
	run -2 --separate-stderr hw allow a b
	[[ "$stderr" == usage:* ]]
}

@test "hw: a declined command prints its answer, the reason and exits 1" {
	run -1 --separate-stderr hw pause
	[ "$(jq -r .projection.lastCommandOutcome.status <<<"$output")" = rejected ]
	[ "$stderr" = "hw: pause is unavailable while the agent is idle" ]
}

@test "hw: pause and resume a running session; resume passes on the agent's status" {
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	run -0 hw pause
	[ "$(jq -c '[[.events[].kind], .projection.lifecycle.status]' <<<"$output")" = \
		'[["command.received","session.paused"],"paused"]' ]
	[ "$(hw status | jq -r .researcherStatus.code)" = paused ]
	echo '{"content":"unused"}' >turns.jsonl
	serve turns.jsonl
	# the run this fake state claims was lost: the agent says so (exit 1)
	run -1 --separate-stderr hw resume
	[ "$(jq -c '[.events[].kind]' <<<"${lines[0]}")" = '["command.received","session.resumed"]' ]
	[ "$(jq -r .lifecycle.status <<<"${lines[1]}")" = error ]
	[[ "$stderr" == "hw-agent: HW-AGENT-007: "* ]]
}

@test "hw: actions shows and sets the review mode" {
	run -0 hw actions
	[ "$(jq -r .mode <<<"$output")" = ask-every-time ]
	run -0 hw actions set auto-approve-low-risk
	[ "$(jq -r .mode <<<"$output")" = auto-approve-low-risk ]
	[ "$(hw actions | jq -r .mode)" = auto-approve-low-risk ]
	run -2 --separate-stderr hw actions set sometimes
	[[ "$stderr" == "hw-agent: unknown mode 'sometimes'"* ]]
	run -2 hw actions sometimes
}

@test "hw: auto-approve-low-risk runs a low-risk set without review" {
	low_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	hw actions set auto-approve-low-risk >/dev/null
	run -0 hw ask record a run
	[ "$(cat notes.md)" = notes ]
	[ "$(jq -c '[.lifecycle.status, [.actions[].state]]' <<<"${lines[1]}")" = \
		'["idle",["succeeded","succeeded"]]' ]
}

@test "hw: --session-id works on a second session, before or after the command" {
	echo '{"content":"Hello from the second session."}' >turns.jsonl
	serve turns.jsonl
	run -0 hw --session-id other ask hello
	[ "$(jq -r '.events[0].session_id' <<<"${lines[0]}")" = other ]
	[[ "$(jq -r '.events[0].payload.command_id' <<<"${lines[0]}")" =~ ^other-chat-[0-9a-f]{32}$ ]]
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the second session." ]
	[ "$(hw status --session-id other | jq -r .sessionId)" = other ]
	[ "$(hw replay --session-id=other | wc -l)" -eq "$(proj .eventCount other)" ]
	[ ! -e .heartwood/sessions/session-main ]
	run -2 --separate-stderr hw --session-id '../x' status
	[ "$stderr" = "hw: invalid session id '../x'" ]
	run -2 hw status --session-id
}

@test "hw: sessions list, new and rename go to hw-session" {
	run -0 hw sessions new --title First
	id=$(jq -r .session_id <<<"$output")
	run -0 hw sessions rename "$id" Renamed
	[ "$(hw sessions list | jq -r .title)" = Renamed ]
	run -2 hw sessions
}

@test "hw: audit verify and audit export --output fill in the session" {
	hw append --session s3 < <(drafts 3) >/dev/null
	run -0 hw --session-id s3 audit verify
	[ "$output" = "$(hw-audit verify --session s3)" ]
	run -0 hw audit export --session-id s3 --output "$PROJ/../export-$$.jsonl"
	# the three drafts and the export's own audit.export.recorded
	[ "$(jq -r '[.session_id, .event_count] | @tsv' <<<"$output")" = $'s3\t4' ]
	[ "$(wc -l <"$PROJ/../export-$$.jsonl")" -eq 4 ]
	run -0 hw audit verify "$PROJ/../export-$$.jsonl"
	rm -f "$PROJ/../export-$$.jsonl"
	run -66 --separate-stderr hw audit verify
	[[ "$stderr" == hw-audit:* ]]
	run -2 hw audit
}

@test "hw: files list, files show and changes print heartwood's views" {
	mkdir -p src/deep
	echo hi >src/a.txt
	echo x >src/deep/b.txt
	run -0 --separate-stderr hw files list src --depth 1
	[ "$output" = $'Project files · src\n  a.txt\n  deep/\n[truncated]' ]
	[ "$output" = "$(heartwood files list src --depth 1)" ]
	run -0 --separate-stderr hw files list
	[ "$output" = "$(heartwood files list)" ]
	[[ "$output" == *$'\n  src/\n'* ]]
	run -0 hw files show src/a.txt
	[ "$output" = $'File · src/a.txt · available\nhi' ]
	run -1 hw files show nope
	[ "$output" = $'File · nope · unavailable\nthe file does not exist' ]
	run -0 hw changes --session-id s9
	[ "${lines[0]}" = "Project changes · Session actions" ]
	[ "$output" = "$(heartwood --session-id s9 changes)" ]
	run -1 hw --session-id s9 changes src/a.txt
	[ "$output" = "$(heartwood --session-id s9 changes src/a.txt)" ]
}

@test "hw: files and changes refuse other words" {
	for words in "files" "files list a b" "files show" "files show a b" \
	    "files tree" "changes a b" "files list --depth"; do
		run -2 --separate-stderr hw $words
		[ -z "$output" ]
		[[ "$stderr" == usage:* ]] || { echo "hw $words"; return 1; }
	done
	run -2 --separate-stderr hw --session-id ../x changes
	[ "$stderr" = "hw: invalid session id '../x'" ]
}

@test "hw: doctor prints heartwood's readiness report and creates nothing" {
	run -0 --separate-stderr hw doctor --json
	[ -z "$(ls -A)" ]
	[ "$(jq -r .state <<<"$output")" = setup-required ]
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .code' <<<"$output")" = HW-MODEL-001 ]
	export HW_BASE_URL=http://127.0.0.1:9/v1
	run -0 --separate-stderr hw doctor --session-id other
	[ "${lines[0]}" = "Readiness: ready" ]
	[ "$output" = "$(heartwood doctor)" ]
	[ -z "$(ls -A)" ]
	ln -s /tmp .heartwood
	run -1 --separate-stderr hw doctor --json
	[ "$(jq -r .state <<<"$output")" = recovery-required ]
	run -2 --separate-stderr hw doctor --yaml
	[[ "$stderr" == usage:* ]]
}

@test "hw doctor --plan: the startup plan's phase, from the readiness report, and nothing created" {
	unset HW_MODEL
	run -0 --separate-stderr hw doctor --plan --interface notebook
	[ -z "$(ls -A)" ]
	[ "$(jq -c '[.phase, .interface, .access_url, .interface_supported, .readiness.state]' <<<"$output")" = '["project-review","notebook",null,true,"setup-required"]' ]
	[ "$(jq -r .summary <<<"$output")" = "heartwood has not been used in this project yet" ]
	[ "$output" = "$(heartwood doctor --plan --interface notebook)" ]
	hw-session new >/dev/null
	run -0 --separate-stderr hw doctor --plan
	[ "$(jq -c '[.phase, .interface, .next_action]' <<<"$output")" = '["connection-required","terminal","Run '"'hw setup'"', or set HW_MODEL=openai/NAME and HW_BASE_URL."]' ]
	export HW_MODEL=openai/heartwood-replay HW_BASE_URL=http://127.0.0.1:9/v1
	run -0 --separate-stderr hw doctor --plan --interface notebook
	[ "$(jq -c '[.phase, .summary, .requires_compute, .requires_confirmation]' <<<"$output")" = '["ready","heartwood is ready in this project",false,false]' ]
}

@test "hw doctor --plan --interface web: the access URL; without hw-serve, not supported" {
	export HW_BASE_URL=http://127.0.0.1:9/v1
	hw-session new >/dev/null
	mkdir bin
	# a copy, not a link: hw looks beside itself first, and the build
	# tree has hw-serve
	cp "$HW_ROOT/hw" bin/
	for p in hw-session hw-agent hw-audit hw-model; do ln -s "$HW_ROOT/$p" bin/; done
	PATH="$PWD/bin:/usr/bin:/bin" run -1 --separate-stderr bin/hw doctor --plan --interface web --port 9000
	[ "$(jq -c '[.phase, .access_url, .interface_supported, .summary]' <<<"$output")" = '["recovery-required","http://127.0.0.1:9000/",false,"the web interface needs hw-serve, which is not installed"]' ]
	printf '#!/bin/sh\n' >bin/hw-serve
	chmod +x bin/hw-serve
	PATH="$PWD/bin:/usr/bin:/bin" run -0 --separate-stderr bin/hw doctor --plan --interface web
	[ "$(jq -c '[.phase, .access_url, .interface_supported]' <<<"$output")" = '["ready","http://127.0.0.1:8767/",true]' ]
}

@test "hw init: uses this project (creates the store) and prints the plan" {
	unset HW_MODEL
	run -0 --separate-stderr hw init --interface notebook
	[ -f .heartwood/state.json ]
	[ "$(jq -c '[.phase, .interface]' <<<"$output")" = '["connection-required","notebook"]' ]
	run -0 --separate-stderr hw init
	[ "$(jq -r .phase <<<"$output")" = connection-required ]
}

@test "hw init: in the home directory it creates nothing and exits 1" {
	HOME=$PWD run -1 --separate-stderr hw init
	[ "$(jq -r .phase <<<"$output")" = recovery-required ]
	[ "$(jq -r .summary <<<"$output")" = "the project may not be / or your home directory" ]
	[ -z "$(ls -A)" ]
}

@test "hw doctor --plan and init: a bad interface, port or option is a usage error" {
	for args in "doctor --plan --interface gui" "doctor --plan --port 0" "doctor --plan --port 65536" "doctor --plan --port 8x" "doctor --plan --port" "init --json" "init extra" "doctor --json --plan"; do
		run -2 --separate-stderr hw $args
		[[ "$stderr" == usage:* ]] || { echo "$args: $stderr"; return 1; }
		[ -z "$output" ]
	done
	[ -z "$(ls -A)" ]
}

@test "make demo: the README's first command runs the research task offline" {
	run -0 --separate-stderr sh "$HW_ROOT/mk/demo"
	[[ "$output" == *"against the REPLAY model (scripted turns, not a real model)"* ]]
	[[ "$output" == *"Mean score 72.50 over 5 participants"* ]]
	[[ "$output" == *"the prompt appears in it 0 times"* ]]
	[[ "$output" == *"checkpoint verified"* ]]
	[ "$(grep -c 'review required' <<<"$output")" -eq 2 ]
	# each member, then its arguments on the next line
	[[ "$output" == *$'\n  1. terminal ['*$'] Show the first rows\n     arguments: {"command":"head -3 results/run-3.csv"}\n  2. terminal ['*$'] Compute the mean score\n     arguments: '* ]]
}

@test "hw status: a session that does not exist is 66 with its name" {
	append_n 1
	run -66 --separate-stderr hw --session-id typo status
	[ -z "$output" ]
	[ "$stderr" = "hw: no session 'typo'" ]
	[ ! -e "$(sdir typo)" ]
}

@test "hw status: with no store, a named session is 66 and session-main is Ready" {
	run -66 --separate-stderr hw status --session-id typo
	[ "$stderr" = "hw: no session 'typo'" ]
	run -0 hw status
	[ "$(jq -r .researcherStatus.label <<<"$output")" = Ready ]
	[ ! -e .heartwood ]
}

@test "hw pause, resume, allow, reject: a session that does not exist is 66 and is not created" {
	append_n 1
	for v in pause resume allow reject; do
		run -66 --separate-stderr hw --session-id typo "$v"
		[ "$stderr" = "hw: no session 'typo'" ]
	done
	[ ! -e "$(sdir typo)" ]
}

@test "hw ask: with no model configured, nothing is recorded and hw setup is named" {
	unset HW_MODEL HW_BASE_URL
	run -70 --separate-stderr hw ask hello
	[ -z "$output" ]
	[ "$stderr" = "hw: the agent is not ready, so nothing was recorded: HW_MODEL is not set, and no route was saved: run 'hw setup'" ]
	[ ! -e "$(sdir)/events.jsonl" ]
	run -70 --separate-stderr hw --session-id other ask hello
	[ ! -e "$(sdir other)" ]
}

@test "hw ask: a route that cannot be used is refused before anything is recorded" {
	export HW_MODEL=openai/m HW_BASE_URL=ftp://127.0.0.1/v1
	run -70 --separate-stderr hw ask hello
	[[ "$stderr" == "hw: the agent is not ready, so nothing was recorded: invalid HW_BASE_URL"*"; check it with 'hw doctor', or choose a route with 'hw setup'" ]]
	[ ! -e "$(sdir)/events.jsonl" ]
}

# on_tty CMD...: CMD run on a terminal (a pty); prints what it showed
on_tty() { python3 "$HW_ROOT/t/pty_answer.py" -- "$@"; }

@test "hw ask on a terminal: the reply, the set with numbered members and each one's arguments, the status" {
	two_actions
	serve turns.jsonl
	run -0 on_tty hw ask record a run
	[[ "$output" != *'"projection"'* ]]
	[[ "$output" == *"Agent: I will record a run and write notes."* ]]
	[[ "$output" == *"Review required · 2 actions · one decision"* ]]
	# the risk shown is the analyzer's, whatever it rates them
	[[ "$output" == *$'\n  1. Record a run [terminal · '*$']\n     {"command":"echo run >> ran.txt","security_risk":"LOW","summary":"Record a run"}\n  2. Write notes [file_editor · '*$']\n     {"command":"create","file_text":"notes\\n","path":"notes.md","security_risk":"LOW","summary":"Write notes"}\n'* ]]
	[[ "$output" == *"Run 'hw allow' to allow all 2 once, or 'hw reject' to reject all 2."* ]]
	[ "${lines[-1]}" = "Status: Waiting for your review · Review Every Action" ]
	[[ "$output" != *"You: record a run"* ]]
}

@test "hw allow and reject on a terminal: what ran and its outcome, the reply, the status" {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	hw ask record a run >/dev/null
	run -0 on_tty hw allow
	[[ "$output" != *'"projection"'* ]]
	[[ "$output" == *"Action: Record a run [terminal] · succeeded · "* ]]
	[[ "$output" == *"Action: Write notes [file_editor] · succeeded · "* ]]
	[[ "$output" == *"Agent: Both done."* ]]
	[[ "$output" != *"I will record a run"* ]]
	[ "${lines[-1]}" = "Status: Ready · Review Every Action" ]
	[ "$(cat ran.txt)" = run ]
}

@test "hw reject on a terminal: the members rejected, nothing ran" {
	two_actions
	echo '{"expect":"rejected this action set","content":"Understood, nothing ran."}' >>turns.jsonl
	serve turns.jsonl
	hw ask record a run >/dev/null
	run -0 on_tty hw reject
	[[ "$output" == *"Action: Record a run [terminal] · rejected"* ]]
	[[ "$output" == *"Agent: Understood, nothing ran."* ]]
	[ ! -e ran.txt ]
}

@test "hw pause and resume on a terminal: the status, no JSON" {
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	run -0 on_tty hw pause
	[[ "$output" != *'"projection"'* ]]
	[ "${lines[-1]}" = "Status: Paused · Review Every Action" ]
	run -1 on_tty hw pause
	[[ "$output" != *'"projection"'* ]]
	[[ "$output" == *"hw: "* ]]
}

@test "hw ask --json on a terminal, and hw ask into a pipe, print the JSON lines" {
	echo '{"content":"Hi."}' >turns.jsonl
	echo '{"content":"Hi again."}' >>turns.jsonl
	serve turns.jsonl
	run -0 on_tty hw --json ask hello
	[ "$(jq -r '.events[1].payload.content' <<<"${lines[0]}")" = hello ]
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = Hi. ]
	run -0 --separate-stderr hw ask hello again
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hi again." ]
}

@test "hw status: a session with an interrupted command needs attention, with the reason" {
	append_n 1
	interrupt c1
	run -0 --separate-stderr hw status
	[ "$(jq -r .attention <<<"$output")" = \
		"session 'session-main' has an interrupted command 'c1': it was accepted but never completed, and will not run again; continue in a new session" ]
	append_n 1 other
	run -0 --separate-stderr hw --session-id other status
	[ "$(jq -c .attention <<<"$output")" = null ]
}
