#!/usr/bin/env bats
# One owner per session (hw-store(5) Writer lease and locks): only a
# running hw-agent holds the writer lease for longer than one command.
# Two plain terminals and the driver on one session, decisions from each,
# hold no lease while idle; a second hw-agent run while one runs exits 75
# and records nothing; clients racing to continue a decided set run it
# once; a kill -9 of the agent at each step of a set, then continue, never
# runs a member twice, and a kill before the set was taken up leaves it to
# the next continue.

load lib
load agent

setup() {
	agent_setup
	T1_PID= T2_PID= AGENT_PID=
}

teardown() {
	[ -n "$T1_PID" ] && kill "$T1_PID" 2>/dev/null
	[ -n "$T2_PID" ] && kill "$T2_PID" 2>/dev/null
	if [ -n "$AGENT_PID" ]; then
		kill -9 "$AGENT_PID" 2>/dev/null
		wait "$AGENT_PID" 2>/dev/null
	fi
	[ -n "$MODEL_PID" ] && kill -CONT "$MODEL_PID" 2>/dev/null
	agent_teardown
}

pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
decide() { cmd "$1" "$2" "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" | hw-session command session-main >/dev/null; }

# free: nobody holds the session's writer lease
free() { flock -n "$(sdir)/.writer.lock" true; }

# executions SUMMARY: how many executions are recorded of the tool calls
# proposed with SUMMARY
executions() {
	hw-session replay session-main | jq -s --arg s "$1" '
		[.[] | select(.kind == "tool_call.proposed" and .payload.summary == $s) | .payload.tool_call_id] as $ids |
		[.[] | select(.kind == "tool.execution.recorded" and (.payload.tool_call_id as $t | $ids | index($t)))] | length'
}

# prompts FILE N: poll until FILE shows at least N prompts
prompts() {
	for _ in $(seq 300); do
		[ "$(grep -o 'heartwood> ' "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "$1 never showed $2 prompts"
	return 1
}

# shows FILE TEXT: poll until FILE holds TEXT
shows() {
	for _ in $(seq 300); do grep -qF "$2" "$1" && return 0; sleep 0.05; done
	echo "$1 never showed '$2'"
	return 1
}

# until_proj FILTER VALUE: poll until the projection's FILTER is VALUE
until_proj() {
	for _ in $(seq 300); do [ "$(proj "$1")" = "$2" ] && return 0; sleep 0.05; done
	echo "never $1 = $2: $(proj "$1")"
	return 1
}

@test "one owner: two terminals and hw decide on one session; each set runs once, and idle the session has no lease holder" {
	cat >turns.jsonl <<'T'
{"content":"I will record a run.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo one >> ran.txt","security_risk":"LOW"}}]}
{"content":"First recorded."}
{"content":"Once more.","tool_calls":[{"id":"b","name":"terminal","arguments":{"summary":"Record again","command":"echo two >> ran.txt","security_risk":"LOW"}}]}
{"content":"Second recorded."}
{"content":"And a third.","tool_calls":[{"id":"c","name":"terminal","arguments":{"summary":"Record a third","command":"echo three >> ran.txt","security_risk":"LOW"}}]}
{"content":"Understood, not run."}
T
	serve turns.jsonl
	mkfifo in1 in2
	heartwood --plain <in1 >t1.out 2>t1.err &
	T1_PID=$!
	exec 7>in1
	heartwood --plain <in2 >t2.out 2>t2.err &
	T2_PID=$!
	exec 8>in2
	prompts t1.out 1
	prompts t2.out 1
	# two terminals open and idle on a session not yet written: no lease
	[ ! -e "$(sdir)" ]
	# the first terminal asks; the second shows the set it proposed
	echo 'record a run' >&7
	shows t1.out 'Review required'
	shows t2.out 'Review required'
	prompts t1.out 2
	run -0 free
	[ ! -e "$(sdir)/control.sock" ]
	# the second terminal allows it: it runs once, and both show it
	echo '/allow' >&8
	shows t2.out 'Agent: First recorded.'
	shows t1.out 'Agent: First recorded.'
	run -0 free
	# hw asks; the first terminal allows what it proposed
	run -0 --separate-stderr hw ask 'once more'
	[ "$(proj .pendingApproval.actions[0].summary)" = '"Record again"' ]
	shows t1.out 'Record again'
	echo '/allow' >&7
	shows t1.out 'Agent: Second recorded.'
	shows t2.out 'Agent: Second recorded.'
	# the first terminal asks once more; hw rejects
	echo 'and a third' >&7
	until_proj .pendingApproval.actions[0].summary '"Record a third"'
	run -0 --separate-stderr hw reject
	shows t2.out 'Agent: Understood, not run.'
	shows t1.out 'Agent: Understood, not run.'
	run -0 free
	exec 7>&- 8>&-
	wait "$T1_PID"
	T1_PID=
	wait "$T2_PID"
	T2_PID=
	[ -z "$(cat t1.err)" ]
	[ -z "$(cat t2.err)" ]
	[ "$(cat ran.txt)" = $'one\ntwo' ]
	[ "$(executions 'Record a run')" = 1 ]
	[ "$(executions 'Record again')" = 1 ]
	[ "$(executions 'Record a third')" = 0 ]
	[ "$(grep -c 'Agent: First recorded.' t1.out)" -eq 1 ]
	[ "$(grep -c 'Agent: First recorded.' t2.out)" -eq 1 ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded","rejected"]]' ]
	hw audit verify >/dev/null
}

@test "one owner: a second hw-agent run while one runs exits 75 and records nothing" {
	echo '{"content":"Hello."}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	# the model does not answer: the run waits in its turn, holding the lease
	kill -STOP "$MODEL_PID"
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 300); do [ -S "$(sdir)/control.sock" ] && break; sleep 0.05; done
	[ -S "$(sdir)/control.sock" ]
	run -1 free
	before=$(snapshot)
	run -75 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: an agent already runs session 'session-main' and takes its commands; nothing was done" ]
	[ -z "$output" ]
	[ "$(snapshot)" = "$before" ]
	# hw treats it as running, not as a failure: its command goes to the run
	run -0 --separate-stderr hw pause
	[ "$(snapshot)" != "$before" ]
	kill -CONT "$MODEL_PID"
	wait "$AGENT_PID"
	AGENT_PID=
	[ "$(proj .lifecycle.status)" = '"paused"' ]
	run -0 free
	hw audit verify >/dev/null
}

@test "one owner: clients racing to continue a decided set run it exactly once" {
	two_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	pids=()
	for i in 1 2 3 4 5 6; do
		hw-agent run session-main >"run$i.out" 2>"run$i.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		rc=0
		wait "$p" || rc=$?
		[ "$rc" -eq 0 ] || [ "$rc" -eq 75 ]
	done
	[ "$(cat ran.txt)" = run ]
	[ "$(executions 'Record a run')" = 1 ]
	[ "$(executions 'Write notes')" = 1 ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	# and a continue later has nothing to do
	before=$(snapshot)
	run -0 hw-agent run session-main
	[ "$(snapshot)" = "$before" ]
	run -0 free
}

@test "one owner: the agent killed before it took the decided set up leaves it to the next continue, which runs it once" {
	two_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	# killed (SIGKILL) at its first write: while it takes the lease
	HW_FAULT_KILL_AT=1 run hw-agent run session-main
	[ "$status" -eq 137 ]
	[ ! -e ran.txt ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["waiting-for-confirmation",["approved","approved"]]' ]
	run -0 free
	# the next continue (here hw's) runs it, once
	run -0 --separate-stderr hw agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(executions 'Record a run')" = 1 ]
	[ "$(executions 'Write notes')" = 1 ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["idle",["succeeded","succeeded"]]' ]
	run -0 hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	hw audit verify >/dev/null
}

@test "one owner: the agent killed -9 after a member started is never run again by a continue" {
	mkfifo hold
	cat >turns.jsonl <<'T'
{"content":"I will record a run.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo run >> ran.txt; cat hold","security_risk":"LOW"}},{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
{"content":"unused"}
T
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 300); do [ -s ran.txt ] && break; sleep 0.05; done
	[ "$(cat ran.txt)" = run ]
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" || true
	AGENT_PID=
	run -0 free
	# continue twice: the started member's outcome stays unknown, nothing reruns
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-006: "* ]]
	run -1 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ ! -e notes.md ]
	[ "$(executions 'Record a run')" = 0 ]
	[ "$(executions 'Write notes')" = 0 ]
	[ "$(proj '[.actions[].state]')" = '["outcome-unknown","outcome-unknown"]' ]
	hw audit verify >/dev/null
}

@test "one owner: the agent killed -9 after the set finished, before the next turn, never runs it again" {
	two_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	decide c2 approve
	# the model does not answer: the run stops in the turn after the set
	kill -STOP "$MODEL_PID"
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	until_proj '[.actions[].state]' '["succeeded","succeeded"]'
	kill -9 "$AGENT_PID"
	wait "$AGENT_PID" || true
	AGENT_PID=
	kill -CONT "$MODEL_PID"
	run -0 free
	# the turn's outcome is unknown (HW-AGENT-007); the set is not run again
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-007: "* ]]
	run -1 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(executions 'Record a run')" = 1 ]
	[ "$(executions 'Write notes')" = 1 ]
	hw audit verify >/dev/null
}
