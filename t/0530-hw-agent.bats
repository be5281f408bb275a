#!/usr/bin/env bats
# hw-agent: the agent loop end to end against the replay model.  A set
# waits for review; allowing runs each member exactly once (checked on the
# file system); rejecting runs none and the model is told; kills between
# a decision and an outcome never run a member twice and leave unknown
# outcomes unknown; model failures get stable codes; the key appears in no
# file.

load lib
load agent

setup() { agent_setup; }
teardown() { agent_teardown; }

pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
decide() { cmd "$1" "$2" "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" | hw-session command session-main >/dev/null; }


@test "hw-agent: a proposed set waits for review and nothing runs" {
	two_actions
	echo '{"content":"unused"}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ -z "$output" ]
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(proj '[.lifecycle.status, .availableCommands, [.pendingApproval.actions[].state]]')" = \
		'["waiting-for-confirmation",["approve","deny"],["awaiting-review","awaiting-review"]]' ]
	# running again while waiting does nothing: the set still waits
	before=$(cat "$(sdir)/events.jsonl")
	run -0 hw-agent run session-main
	[ ! -e ran.txt ]
	[ "$(cat "$(sdir)/events.jsonl")" = "$before" ]
	[ "$(proj '[.lifecycle.status, [.pendingApproval.actions[].state]]')" = \
		'["waiting-for-confirmation",["awaiting-review","awaiting-review"]]' ]
}

@test "hw-agent: a lease held by a short writer is waited for, and one held past the wait is 75 with nothing done" {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	lock="$(sdir)/.writer.lock"
	# held past the wait by a process that serves no control socket
	exec 9<>"$lock"
	flock -n 9
	before=$(snapshot)
	run -75 --separate-stderr env HW_LEASE_WAIT_S=0 hw-agent run session-main
	[[ "$stderr" == *"session 'session-main' is busy"* ]]
	[ ! -e ran.txt ]
	[ "$(snapshot)" = "$before" ]
	# held for a moment (as a command's short lease is): waited for
	( sleep 1; exec 9>&- ) &
	holder=$!
	exec 9>&-
	run -0 --separate-stderr env HW_LEASE_WAIT_S=30 hw-agent run session-main
	wait "$holder"
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	[ ! -e "$(sdir)/.writer.json" ]
	hw-audit verify --session session-main >/dev/null
}

@test "hw-agent: allowing runs each member exactly once and the model sees the results" {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(cat notes.md)" = notes ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded","succeeded"],"Both done."]' ]
	run -0 hw-agent run session-main
	[ "$(wc -l <ran.txt)" -eq 1 ]
	hw-audit verify --session session-main >/dev/null
}

@test "hw-agent: each member's start is durable before it runs, its outcome after" {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	ev="$(sdir)/events.jsonl"
	a=$(jq -r 'select(.kind == "tool_call.proposed") | .payload.tool_call_id' "$ev" | sed -n 1p)
	b=$(jq -r 'select(.kind == "tool_call.proposed") | .payload.tool_call_id' "$ev" | sed -n 2p)
	run -0 jq -r 'select(.kind | test("^(approval|confirmation.resolved|tool.execution)")) | "\(.kind) \(.payload.tool_call_id // .payload.decision)"' "$ev"
	[ "$output" = "approval.recorded approved
confirmation.resolved $a
tool.execution.recorded $a
confirmation.resolved $b
tool.execution.recorded $b" ]
}

@test "hw-agent: rejecting runs nothing and the model is told" {
	two_actions
	echo '{"expect":"rejected this action set","content":"Understood, nothing ran."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 deny
	run -0 --separate-stderr hw-agent run session-main
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["rejected","rejected"],"Understood, nothing ran."]' ]
}

# Kill the run at each write, sync and rename of its commits after the
# approval: a member never runs twice, and what is not known stays unknown.
@test "hw-agent: killed between the decision and an outcome, nothing runs twice" {
	two_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	for k in 1 2 3 4 5 6 7 8 9 10 11 12; do
		rm -rf "k$k"
		mkdir "k$k"
		cd "k$k"
		cp ../turns.jsonl .
		serve turns.jsonl
		chat c1 "record a run"
		hw-agent run session-main
		decide c2 approve
		HW_FAULT_KILL_AT=$k hw-agent run session-main >/dev/null 2>&1 || true
		hw-agent run session-main >/dev/null 2>&1 || true
		kill "$MODEL_PID"; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=
		lines=$( [ -e ran.txt ] && wc -l <ran.txt || echo 0)
		[ "$lines" -le 1 ] || { echo "k=$k ran twice"; return 1; }
		states=$(proj '[.actions[].state]')
		case $states in
		'["succeeded","succeeded"]') [ "$lines" -eq 1 ]; [ -e notes.md ] ;;
		*outcome-unknown*) [ "$(proj .availableCommands)" = '[]' ] ;;
		*) echo "k=$k: $states"; return 1 ;;
		esac
		[[ $states != *succeeded* ]] || [ "$lines" -eq 1 ]
		hw-audit verify --session session-main >/dev/null
		seen="$seen $states"
		cd ..
	done
	# the kills fell both before a member started and after
	[[ $seen == *outcome-unknown* ]] && [[ $seen == *'"succeeded","succeeded"'* ]]
}

@test "hw-agent: a session found running reports HW-AGENT-007 and refuses to continue" {
	echo '{"content":"unused"}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-007: "* ]]
	[ "$(proj '[.researcherStatus.code, .availableCommands]')" = '["terminal-failure",[]]' ]
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: the session stopped on an unrecoverable error; continue in a new session" ]
}

@test "hw-agent: an approved member that started without an outcome is HW-AGENT-006, never rerun" {
	two_actions
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	g=$(hw-session replay session-main | jq -r 'select(.kind=="approval.recorded").payload.group_id')
	id=$(hw-session replay session-main | jq -r 'select(.kind=="tool_call.proposed").payload.tool_call_id' | head -1)
	{ draft agent.lifecycle.updated '{"status":"running"}'
	  draft confirmation.resolved "{\"tool_call_id\":\"$id\",\"group_id\":\"$g\",\"decision\":\"approved\"}"; } |
		hw-append --session session-main >/dev/null
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-006: "* ]]
	[ ! -e ran.txt ]
	[ "$(proj '[.actions[].state]')" = '["outcome-unknown","outcome-unknown"]' ]
}

@test "hw-agent: Low-Risk Automation runs a low-risk set without review" {
	low_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ "$(cat notes.md)" = notes ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="approval.recorded").payload.policy')" = auto-approve-low-risk ]
}

@test "hw-agent: Low-Risk Automation asks for a set that writes with the terminal" {
	two_actions
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ ! -e ran.txt ]
	[ "$(proj '[.lifecycle.status, [.actions[].risk]]')" = '["waiting-for-confirmation",["medium","low"]]' ]
}

@test "hw-agent: Low-Risk Automation still asks when the model did not say LOW" {
	sed 's/"security_risk":"LOW"}},{/"security_risk":"MEDIUM"}},{/' <<<"$(two_actions; cat turns.jsonl)" >t.jsonl
	serve t.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ ! -e ran.txt ]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
}

@test "hw-agent: Low-Risk Automation is off on a route with a key" {
	two_actions
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	export MY_KEY=sk-test HW_API_KEY_ENV=MY_KEY
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ ! -e ran.txt ]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
}

@test "hw-agent: a 429 then success retries" {
	{ echo '{"fail":429}'; echo '{"content":"Hello after a retry."}'; } >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	run -0 hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Hello after a retry."' ]
}

@test "hw-agent: an auth failure is HW-AGENT-008 and the key is in no file" {
	echo '{"fail":401}' >turns.jsonl
	serve turns.jsonl
	export HW_API_KEY_ENV=MY_KEY MY_KEY=sk-MARKER-8c1f0e
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-008: "* ]]
	[[ "$stderr" != *MARKER* ]]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="error.recorded").payload.code')" = HW-AGENT-008 ]
	! grep -rq MARKER . 
}

@test "hw-agent: the key never reaches events, audit, exports or tool output" {
	cat >turns.jsonl <<'T'
{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Show the environment","command":"env; echo key=$MY_KEY","security_risk":"LOW"}}]}
{"expect":"key=","content":"Seen."}
T
	serve turns.jsonl
	export HW_API_KEY_ENV=MY_KEY MY_KEY=sk-MARKER-5d2a91
	chat c1 "show the environment"
	hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	hw-audit export --session session-main --output export.jsonl >/dev/null
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result' | grep -c '^key=$')" -eq 1 ]
	! grep -rq MARKER .heartwood export.jsonl
}

@test "hw-agent: the same actions proposed again and again stop the run" {
	for i in 1 2 3 4; do echo '{"tool_calls":[{"id":"t","name":"think","arguments":{"thought":"hmm"}}]}'; done >turns.jsonl
	serve turns.jsonl
	chat c1 "think"
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-003: "* ]]
	[ "$(proj '.researcherStatus.code')" = '"recoverable-failure"' ]
}

@test "hw-agent: finish ends the run as finished with its message" {
	echo '{"tool_calls":[{"id":"f","name":"finish","arguments":{"message":"All done."}}]}' >turns.jsonl
	serve turns.jsonl
	chat c1 "finish"
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["finished","All done."]' ]
}

@test "hw-agent: text streams as transient records and is never stored" {
	echo '{"content":"A streamed reply."}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main --stream
	[ "$(tail -1 <<<"$output" | jq -r .text)" = "A streamed reply." ]
	[ "$(jq -s 'map(.streamRevision) | . == (sort) and length > 0' <<<"$output")" = true ]
}

@test "hw-agent mode: shows and sets the mode" {
	run -0 hw-agent mode
	[ "$output" = '{"confirmation_mode":"always-confirm","mode":"ask-every-time"}' ]
	run -0 hw-agent mode auto-approve-low-risk
	[ "$output" = '{"confirmation_mode":"confirm-risky","mode":"auto-approve-low-risk"}' ]
	grep -q 'confirmation_mode = "confirm-risky"' .heartwood/config.toml
	run -0 hw-agent mode ask-every-time
	[ "$output" = '{"confirmation_mode":"always-confirm","mode":"ask-every-time"}' ]
}

@test "hw-agent mode: refused while a set waits for review" {
	two_actions
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	run -1 --separate-stderr hw-agent mode auto-approve-low-risk
	[ "$stderr" = "hw-agent: session 'session-main' has an action set waiting for review" ]
}

@test "hw-agent mode: an unknown mode is a usage error" {
	run -2 --separate-stderr hw-agent mode sometimes
	[ "$stderr" = "hw-agent: unknown mode 'sometimes': want ask-every-time or auto-approve-low-risk" ]
}

@test "hw-agent run: no model route is a usage error and records nothing" {
	unset HW_MODEL
	chat c1 "hello"
	before=$(snapshot)
	run -2 hw-agent run session-main
	[ "$(snapshot)" = "$before" ]
}

@test "hw-agent run: a session that does not exist is 66" {
	run -66 --separate-stderr hw-agent run nothing-here
	[ ! -e .heartwood/sessions/nothing-here ]
}

@test "hw-agent run: a busy lease is 75" {
	echo '{"content":"x"}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	exec 9>"$(sdir)/.writer.lock"
	flock -n 9
	run -75 env HW_LEASE_WAIT_S=0 hw-agent run session-main
	exec 9>&-
}

@test "hw-agent run: the iteration limit stops the run with HW-AGENT-003" {
	for i in 1 2 3; do echo "{\"tool_calls\":[{\"id\":\"t\",\"name\":\"think\",\"arguments\":{\"thought\":\"step $i\"}}]}"; done >turns.jsonl
	serve turns.jsonl
	chat c1 "think"
	HW_AGENT_MAX_ITERATIONS=2 run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-003: The agent reached its limit of model calls for one run." ]
}

@test "hw-agent run: a bad HW_AGENT_MAX_ITERATIONS is a usage error" {
	HW_AGENT_MAX_ITERATIONS=0 run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid HW_AGENT_MAX_ITERATIONS '0': want 1 to 10000" ]
}

# Over its input budget the agent summarizes the older history through
# the same route (usage purpose condenser), keeps the first ask and the
# recent tail, and the model then sees the summary instead.
@test "hw-agent: the condenser summarizes older history near the input budget" {
	long=$(printf 'lorem ipsum %.0s' $(seq 100))
	{ for i in 1 2 3; do echo "{\"tool_calls\":[{\"id\":\"t\",\"name\":\"think\",\"arguments\":{\"thought\":\"step $i $long\"}}]}"; done
	  echo '{"expect":"You summarize the earlier part","content":"SUMMARY-7f3: three steps were thought through."}'
	  echo '{"expect":"SUMMARY-7f3","content":"Continuing from the summary."}'; } >turns.jsonl
	serve turns.jsonl
	export HW_MAX_INPUT_TOKENS=1300
	chat c1 "think in steps"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Continuing from the summary."' ]
	[ "$(proj '[.conversation[] | select(.label == "Summary of earlier work") | .role]')" = '["trace"]' ]
	[ "$(proj '[.usageByPurpose[].usageId]')" = '["agent","condenser"]' ]
	[ "$(proj '[.usage.callCount, .usageByPurpose[1].callCount]')" = '[5,1]' ]
}

# big_history N BYTES: the first ask, N agent messages of BYTES each, and
# a new question at the end, all recorded directly
big_history() {
	chat c1 "first ask"
	python3 -c 'import json, sys
n, size = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    print(json.dumps({"kind": "agent_message.emitted",
                      "payload": {"content": ("%d " % i) + "x" * size}}))' "$1" "$2" |
		hw-append --session session-main >/dev/null
	chat c2 "and now?"
}

# condenser_turns N: N condenser replies, then the answer to "and now?"
condenser_turns() {
	local i
	for ((i = 1; i <= $1; i++)); do
		echo "{\"expect\":\"You summarize the earlier part\",\"content\":\"PART-$i.\"}"
	done
	echo '{"expect":"and now?","content":"Answered after condensing."}'
}

# Every condensation request stays within the budget: the history is
# summarized in pieces, each starting from the summary so far, and the
# last summary covers all that was forgotten.
@test "hw-agent: a history many times the input budget is condensed in pieces, each within it" {
	big_history 40 1200
	condenser_turns 10 >turns.jsonl
	serve turns.jsonl
	export HW_MAX_INPUT_TOKENS=2000
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Answered after condensing."' ]
	[ "$(proj '[.usageByPurpose[] | select(.usageId == "condenser").callCount]')" = '[10]' ]
	# each summary covers the one before it and moves on
	run -0 bash -c "hw-session replay session-main | jq -c 'select(.payload.condensation).payload.condensation | [.from, .through]'"
	[ "${#lines[@]}" -eq 10 ]
	[ "$(jq '.[0]' <<<"${lines[0]}")" = 2 ]
	for ((i = 1; i < 10; i++)); do
		[ "$(jq '.[0]' <<<"${lines[i]}")" = "$(jq '.[1]' <<<"${lines[i - 1]}")" ]
	done
	# the model saw no request over the budget: the replay model refuses
	# nothing, and the agent never had to shrink
	refute grep -q ': 413' model.err
}

# No budget is configured and the history is larger than the model takes
# (the replay model refuses bodies over 8 MiB with 413): the agent learns
# a budget from the refusal, condenses, and asks again.
@test "hw-agent: a request refused as too large is condensed further and retried" {
	big_history 12 1048576
	condenser_turns 3 >turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Answered after condensing."' ]
	[ "$(grep -c ': 413' model.err)" -eq 1 ]
	[ "$(proj '[.usageByPurpose[] | select(.usageId == "condenser").callCount]')" = '[3]' ]
	hw-audit verify --session session-main >/dev/null
}

# A server that refuses every request as too large: the agent shrinks its
# budget a bounded number of times, then the refusal stands.
@test "hw-agent: refusals as too large that never end stop with HW-AGENT-011" {
	big_history 3 100
	printf '%s\n' '[{"status":413,"json":{"error":{"message":"too large","code":"context_length_exceeded"}}}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
	run -1 --separate-stderr hw-agent run session-main
	kill "$SRV"
	[[ "$stderr" == "hw-agent: HW-AGENT-011: "* ]]
	[ "$(proj '.lifecycle.status')" = '"error"' ]
	[ "$(wc -l <requests.jsonl)" -le 10 ]
}
