#!/usr/bin/env bats
# t/0220-hw-session-command.bats - hw-session command: strict envelope
# checks (one test per malformed case, each proving nothing was recorded),
# what each accepted kind records, commands recorded as not applied and how
# the projection shows them, the fatal-error rule, receipts (exact retry,
# conflict, interrupted command), the writer lease, audit export, and a
# pending set rebuilt from the log by a fresh process.

load lib
bats_require_minimum_version 1.5.0

BAD="command envelope is invalid"
STOPPED="is unavailable while the agent is stopped by an unrecoverable error"

# cmd ID KIND [PAYLOAD] [SESSION] [CREATED_AT] - one command envelope line
cmd() {
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"%s","session_id":"%s","kind":"%s","actor_id":"human","created_at":"%s","payload":%s}\n' \
		"$1" "${4:-session-main}" "$2" "${5:-2026-12-02T10:00:00Z}" "${3:-{\}}"
}

# chat ID [PROMPT] - a chat envelope
chat() { cmd "$1" chat "{\"prompt\":\"${2:-hello}\"}"; }

# pending GROUP ID... - propose tool calls ID... and ask for review of them
# as one action set GROUP
pending() {
	local g=$1 id
	shift
	{
		for id; do
			draft tool_call.proposed "{\"tool_call_id\":\"$id\",\"action_id\":\"act-$id\",\"tool_name\":\"terminal\",\"kind\":\"terminal\",\"risk\":\"medium\",\"summary\":\"run $id\",\"arguments\":{\"command\":\"ls\"}}"
		done
		for id; do
			draft confirmation.requested "{\"request\":{\"tool_call_id\":\"$id\",\"group_id\":\"$g\",\"tool_name\":\"terminal\",\"action_id\":\"act-$id\"}}"
		done
	} | hw-append --session session-main >/dev/null
}

# kinds LINE - the kinds of the events in one answer, space-separated
kinds() { jq -r '[.events[].kind] | join(" ")' <<<"$1"; }

# invalid LINE MESSAGE - LINE is refused with exit status 65 and
# "hw-session: command line 1: MESSAGE"; nothing is printed or recorded
invalid() {
	local before
	append_n 1
	before=$(snapshot)
	run -65 --separate-stderr hw-session command session-main <<<"$1"
	[ "$output" = "" ]
	echo "stderr: $stderr"
	[ "$stderr" = "hw-session: command line 1: $2" ]
	[ "$(snapshot)" = "$before" ]
}

# mutate JQ - a valid chat envelope changed by the jq filter JQ
mutate() { chat c1 | jq -c "$1"; }

# receipt ID - the path of a command's receipt
receipt() { echo "$(sdir)/.commands/$(printf %s "$1" | sha256sum | cut -c1-64).json"; }

# hold SESSION: start a writer that holds SESSION's lease until released
hold() {
	mkfifo "hold-$1"
	hw-append --session "$1" <"hold-$1" >"held-$1.out" 2>&1 &
	HOLDER=$!
	exec {HOLDFD}>"hold-$1"
	drafts 1 >&$HOLDFD
	for _ in $(seq 600); do [ -s "held-$1.out" ] && return 0; sleep 0.05; done
	return 1
}

# ---------------------------------------------------------------------------
# malformed and invalid envelopes: exit 65, nothing recorded

@test "invalid: malformed JSON" {
	invalid '{"schema_version":' "unexpected end of input at byte 19"
}

@test "invalid: a JSON value that is not an object" {
	invalid '["chat"]' "$BAD: not a JSON object"
}

@test "invalid: an unknown field is named" {
	invalid "$(mutate '.priority=1')" "$BAD: unknown field 'priority'"
}

@test "invalid: an unknown field with an unprintable name is not echoed" {
	invalid "$(mutate '.["a\nb"]=1')" "$BAD: unknown field (name not shown)"
}

@test "invalid: an unsupported schema_version" {
	invalid "$(mutate '.schema_version="heartwood.session-command.v9"')" \
		"$BAD: unsupported schema_version 'heartwood.session-command.v9'"
}

@test "invalid: schema_version is not a string" {
	invalid "$(mutate '.schema_version=1')" "$BAD: schema_version is not a string"
}

@test "invalid: command_id is not a string" {
	invalid "$(mutate '.command_id=7')" "$BAD: command_id is not a string"
}

@test "invalid: session_id is not a string" {
	invalid "$(mutate '.session_id=null')" "$BAD: session_id is not a string"
}

@test "invalid: kind is not a string" {
	invalid "$(mutate '.kind=["chat"]')" "$BAD: kind is not a string"
}

@test "invalid: actor_id is not a string" {
	invalid "$(mutate '.actor_id=null')" "$BAD: actor_id is not a string"
}

@test "invalid: created_at is not a string" {
	invalid "$(mutate '.created_at=20261202')" "$BAD: created_at is not a string"
}

@test "invalid: payload is not an object" {
	invalid "$(mutate '.payload="hello"')" "$BAD: payload is not an object"
}

@test "invalid: the prompt is not a string" {
	invalid "$(mutate '.payload.prompt=["hello"]')" "$BAD: payload.prompt is not a string"
}

@test "invalid: target_id is not a string" {
	invalid "$(cmd a1 approve '{"target_id":1}')" "$BAD: payload.target_id is not a string"
}

@test "invalid: a missing created_at" {
	invalid "$(mutate 'del(.created_at)')" "$BAD: created_at is missing"
}

@test "invalid: an empty command_id" {
	invalid "$(mutate '.command_id=""')" "$BAD: command_id is empty"
}

@test "invalid: a session_id naming another session" {
	invalid "$(chat c1 | jq -c '.session_id="other"')" "$BAD: session_id does not name this session"
}

@test "invalid: an unknown kind is named" {
	invalid "$(cmd c1 steer)" "$BAD: unknown command kind 'steer'"
}

@test "invalid: a chat without a prompt" {
	invalid "$(cmd c1 chat)" "$BAD: payload.prompt is missing"
}

@test "invalid: a chat with an empty prompt" {
	invalid "$(cmd c1 chat '{"prompt":""}')" "$BAD: payload.prompt is empty"
}

@test "invalid: approve with a target_type other than action-set" {
	invalid "$(cmd a1 approve '{"target_type":"tool-call","target_id":"g"}')" \
		"$BAD: payload.target_type must be 'action-set'"
}

@test "invalid: approve without a target_id" {
	invalid "$(cmd a1 approve '{"target_type":"action-set"}')" "$BAD: payload.target_id is missing"
}

@test "invalid: an unknown payload field is named" {
	invalid "$(cmd p1 pause '{"reason":"x"}')" "$BAD: unknown field 'payload.reason'"
}

@test "invalid: a line longer than 1 MiB" {
	append_n 1
	before=$(snapshot)
	python3 -c 'print("{\"payload\":{\"prompt\":\"" + "x" * (1 << 20) + "\"}}")' >big
	run -65 --separate-stderr hw-session command session-main <big
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: longer than 1048576 bytes" ]
	[ "$(snapshot)" = "$before" ]
}

@test "invalid: an unterminated last line" {
	append_n 1
	before=$(snapshot)
	chat c1 | tr -d '\n' >c1
	run -65 --separate-stderr hw-session command session-main <c1
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: unterminated last line" ]
	[ "$(snapshot)" = "$before" ]
}

@test "invalid: without a store, nothing is created" {
	run -65 --separate-stderr hw-session command session-main <<<"$(cmd c1 chat)"
	[ ! -e .heartwood ]
}

@test "invalid: processing stops at the first invalid line, after the earlier ones were applied" {
	{ chat c1; echo; cmd c2 chat; chat c3; } >in
	run -65 --separate-stderr hw-session command session-main <in
	[ "${#lines[@]}" -eq 1 ]
	[ "$(kinds "${lines[0]}")" = "command.received user_message.recorded" ]
	[ "$stderr" = "hw-session: command line 3: $BAD: payload.prompt is missing" ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 2 ]
	[ ! -e "$(receipt c3)" ]
}

@test "empty input: exits 0, prints nothing and creates nothing" {
	run -0 --separate-stderr hw-session command session-main <<<$'\n  \n'
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ ! -e .heartwood ]
}

# ---------------------------------------------------------------------------
# accepted commands

@test "chat: registers a fresh session and records command.received and user_message.recorded" {
	run -0 --separate-stderr hw-session command session-main <<<"$(chat c1 'tidy the survey')"
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(kinds "$output")" = "command.received user_message.recorded" ]
	[ "$(jq -c '.events[0].payload | [.actor_id,.command_id,.command_kind]' <<<"$output")" = '["human","c1","chat"]' ]
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"actor_id":"human","command_id":"c1","content":"tidy the survey"}' ]
	[ "$(jq -r .title "$(sdir)/metadata.json")" = "Main session" ]
	[ "$(jq -c '[.state,.first_sequence,.last_sequence]' "$(receipt c1)")" = '["completed",0,1]' ]
	[ "$(jq -c '.events[]' <<<"$output")" = "$(cat "$(sdir)/events.jsonl")" ]
	[ "$(jq -c '.projection.lastCommandOutcome' <<<"$output")" = '{"commandId":"c1","commandKind":"chat","errorCode":null,"message":null,"status":"accepted"}' ]
	[ "$(jq -r '.projection.conversation[0].content' <<<"$output")" = "tidy the survey" ]
	[ "$(jq -c '.projection.researcherNotice' <<<"$output")" = null ]
	[ ! -e "$(sdir)/.writer.json" ]
	hw-audit verify --session session-main >/dev/null
}

@test "answer: one canonical line per command, the projection kept up to date incrementally" {
	pending g1 t1
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	{ cmd d1 deny '{"target_id":"g1"}'; chat c1; cmd p1 pause; chat c2 again; cmd r1 resume; cmd p2 resume; } >in
	run -1 --separate-stderr hw-session command session-main <in
	[ "${#lines[@]}" -eq 6 ]
	for l in "${lines[@]}"; do
		[ "$(python3 -c 'import json,sys; print(json.dumps(json.loads(sys.argv[1]), sort_keys=True, separators=(",", ":"), ensure_ascii=True))' "$l")" = "$l" ]
	done
	[ "$(jq -c .projection <<<"${lines[5]}")" = "$(hw-session project session-main)" ]
	[ "$(jq -r .projection.lifecycle.status <<<"${lines[2]}")" = paused ]
	[ "$(jq -c .projection.availableCommands <<<"${lines[2]}")" = '["chat","resume"]' ]
	[ "$(kinds "${lines[4]}")" = "command.received session.resumed" ]
	[ "$(jq -r .projection.lifecycle.status <<<"${lines[4]}")" = running ]
	[ "$(kinds "${lines[5]}")" = "command.received error.recorded" ]
}

@test "pause and resume: record session.paused and session.resumed with the command id" {
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd p1 pause)"
	[ "$(kinds "$output")" = "command.received session.paused" ]
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"command_id":"p1"}' ]
	[ "$(jq -c .projection.lifecycle <<<"$output")" = '{"canPause":false,"canResume":true,"canSteer":true,"status":"paused"}' ]
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd r1 resume)"
	[ "$(kinds "$output")" = "command.received session.resumed" ]
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"command_id":"r1"}' ]
	[ "$(jq -r .projection.lifecycle.status <<<"$output")" = running ]
}

@test "approve: records approval.recorded for the pending set, members in order" {
	pending g1 t2 t1 t3
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd a1 approve '{"target_type":"action-set","target_id":"g1"}')"
	[ "$stderr" = "" ]
	[ "$(kinds "$output")" = "command.received approval.recorded" ]
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"command_id":"a1","decision":"approved","group_id":"g1","tool_call_ids":["t2","t1","t3"]}' ]
	[ "$(jq -c .projection.pendingApproval <<<"$output")" = null ]
	[ "$(jq -c '[.projection.actions[].state] | unique' <<<"$output")" = '["approved"]' ]
	[ "$(jq -c .projection.lastCommandOutcome.status <<<"$output")" = '"accepted"' ]
}

@test "deny: records approval.recorded with decision denied; target_type defaults to action-set" {
	pending g1 t1 t2
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd d1 deny '{"target_id":"g1"}')"
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"command_id":"d1","decision":"denied","group_id":"g1","tool_call_ids":["t1","t2"]}' ]
	[ "$(jq -c '[.projection.actions[].state] | unique' <<<"$output")" = '["rejected"]' ]
	[ "$(jq -r .projection.researcherStatus.code <<<"$output")" = denied ]
}

@test "replay: records only command.received and answers with every event of the session" {
	append_n 3
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd y1 replay)"
	[ "$(jq '.events | length' <<<"$output")" -eq 4 ]
	[ "$(jq -c '.events[]' <<<"$output")" = "$(cat "$(sdir)/events.jsonl")" ]
	[ "$(jq -r '.events[3].payload.command_kind' <<<"$output")" = replay ]
}

@test "audit.export: records audit.export.recorded and writes a verified export" {
	append_n 2
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd x1 audit.export)"
	[ "$stderr" = "" ]
	[ "$(kinds "$output")" = "command.received audit.export.recorded" ]
	e="$PWD/$(sdir)/audit-export.jsonl"
	[ "$(jq -c '.events[1].payload' <<<"$output")" = "{\"event_count\":4,\"path\":\"$e\",\"scrubbed\":true}" ]
	[ "$(jq -r .projection.eventCount <<<"$output")" = 4 ]
	cmp "$e" "$(sdir)/audit.jsonl"
	run -0 hw-audit verify "$e"
	[ "$(jq -r .event_count <<<"$output")" = 4 ]
}

# ---------------------------------------------------------------------------
# commands recorded as not applied

@test "declined: pause while idle is recorded as not applied, shown in the projection, exit 1" {
	append_n 1
	run -1 --separate-stderr hw-session command session-main <<<"$(cmd p1 pause)"
	[ "$stderr" = "" ]
	[ "$(kinds "$output")" = "command.received error.recorded" ]
	[ "$(jq -c '.events[1].payload' <<<"$output")" = '{"affects_lifecycle":false,"command":"pause","command_id":"p1","reason":"pause is unavailable while the agent is idle"}' ]
	[ "$(jq -c .projection.lastCommandOutcome <<<"$output")" = '{"commandId":"p1","commandKind":"pause","errorCode":"request-not-applied","message":"pause is unavailable while the agent is idle","status":"rejected"}' ]
	[ "$(jq -c .projection.researcherNotice <<<"$output")" = '{"code":"request-not-applied","id":"command:p1:rejected","message":"pause is unavailable while the agent is idle","title":"Request Not Applied","tone":"warning"}' ]
	[ "$(jq -r .projection.lifecycle.status <<<"$output")" = idle ]
	[ "$(jq -r .projection.researcherStatus.code <<<"$output")" = ready ]
}

@test "declined: a later accepted command clears the notice" {
	{ cmd p1 pause; chat c1; } >in
	run -1 --separate-stderr hw-session command session-main <in
	[ "$(jq -c .projection.researcherNotice <<<"${lines[1]}")" = null ]
	[ "$(jq -r .projection.lastCommandOutcome.status <<<"${lines[1]}")" = accepted ]
}

@test "declined: approve naming another action set; the set stays pending" {
	pending g1 t1
	run -1 --separate-stderr hw-session command session-main <<<"$(cmd a1 approve '{"target_id":"g2"}')"
	[ "$(jq -r '.events[1].payload.reason' <<<"$output")" = "approve names 'g2', not the pending action set 'g1'" ]
	[ "$(jq -r .projection.pendingApproval.groupId <<<"$output")" = g1 ]
	[ "$(jq -r .projection.lastCommandOutcome.status <<<"$output")" = rejected ]
	[ "$(grep -c approval.recorded "$(sdir)/events.jsonl")" -eq 0 ]
}

@test "declined: chat while an action set waits for review" {
	pending g1 t1
	run -1 --separate-stderr hw-session command session-main <<<"$(chat c1)"
	[ "$(jq -r '.events[1].payload.reason' <<<"$output")" = "chat is unavailable while the agent is waiting-for-confirmation" ]
}

@test "declined: after HW-AGENT-006 every command but audit.export is recorded as not applied" {
	pending g1 t1
	draft error.recorded '{"backend_id":"b","code":"HW-AGENT-006","reason":"outcome unknown","command_id":"x","group_id":"g1","tool_call_ids":["t1"]}' |
		hw-append --session session-main >/dev/null
	{
		chat c1; cmd a1 approve '{"target_id":"g1"}'; cmd d1 deny '{"target_id":"g1"}'
		cmd p1 pause; cmd r1 resume; cmd y1 replay; cmd x1 audit.export
	} >in
	run -1 --separate-stderr hw-session command session-main <in
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 7 ]
	i=0
	for k in chat approve deny pause resume replay; do
		[ "$(kinds "${lines[$i]}")" = "command.received error.recorded" ]
		[ "$(jq -r '.events[1].payload.reason' <<<"${lines[$i]}")" = "$k $STOPPED" ]
		i=$((i + 1))
	done
	[ "$(kinds "${lines[6]}")" = "command.received audit.export.recorded" ]
	[ "$(jq -c .projection.availableCommands <<<"${lines[6]}")" = '[]' ]
	[ "$(grep -c approval.recorded "$(sdir)/events.jsonl")" -eq 0 ]
	[ "$(grep -c user_message.recorded "$(sdir)/events.jsonl")" -eq 0 ]
}

# ---------------------------------------------------------------------------
# receipts

@test "retry: an exact retry returns the original events, records nothing, exit 0" {
	chat c1 >c1
	hw-session command session-main <c1 >first
	before=$(snapshot)
	run -0 --separate-stderr hw-session command session-main <c1
	[ "$(jq -c .events <<<"$output")" = "$(jq -c .events first)" ]
	[ "$(snapshot)" = "$before" ]
	# and within one run
	run -0 --separate-stderr hw-session command session-main < <(chat c2; chat c2)
	[ "$(jq -c .events <<<"${lines[0]}")" = "$(jq -c .events <<<"${lines[1]}")" ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 4 ]
}

@test "retry: an exact retry of a declined command returns its events and exits 1 again" {
	cmd p1 pause >p1
	run -1 hw-session command session-main <p1
	first=$output
	before=$(snapshot)
	run -1 --separate-stderr hw-session command session-main <p1
	[ "$(jq -c .events <<<"$output")" = "$(jq -c .events <<<"$first")" ]
	[ "$(snapshot)" = "$before" ]
}

@test "retry: the same id with different content exits 1 and records nothing" {
	hw-session command session-main <<<"$(chat c1)" >/dev/null
	before=$(snapshot)
	run -1 --separate-stderr hw-session command session-main <<<"$(cmd c1 chat '{"prompt":"hello"}' session-main 2026-12-02T11:00:00Z)"
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: command 'c1' was already submitted with different content" ]
	[ "$(snapshot)" = "$before" ]
}

@test "retry: an interrupted command stops every further command with 75" {
	chat c1 >c1
	# die just after command.received is durable: the receipt stays accepted
	mkdir dry
	k=$(cd dry && HW_FAULT_TRACE=1 hw-session command session-main <../c1 2>&1 >/dev/null |
		awk '/audit-append$/ { print $2 + 1; exit }')
	HW_FAULT_KILL_AT=$k run hw-session command session-main <c1
	[ "$status" -eq 137 ]
	[ "$(jq -r .state "$(receipt c1)")" = accepted ]
	before=$(cat "$(sdir)/events.jsonl" "$(sdir)/audit.jsonl" | sha256sum)
	run -75 --separate-stderr hw-session command session-main <<<"$(chat c2)"
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: session 'session-main' has an interrupted command 'c1': it was accepted but never completed, and will not run again; continue in a new session" ]
	run -75 --separate-stderr hw-session command session-main <c1
	[ "$stderr" = "hw-session: command line 1: command 'c1' was interrupted after it was accepted; it will not run again" ]
	[ "$(cat "$(sdir)/events.jsonl" "$(sdir)/audit.jsonl" | sha256sum)" = "$before" ]
}

@test "commit: a command's received and what it records are one commit; killed after it, the decision is there" {
	pending g1 t1 t2
	cmd a1 approve '{"target_id":"g1"}' >a1
	# the trace of a run on a copy, after a first run on another copy has
	# made what a decision is bound with (this user's key, outside it)
	mkdir dry1 dry2
	cp -a .heartwood dry1/
	cp -a .heartwood dry2/
	(cd dry1 && hw-session command session-main <../a1 >/dev/null)
	trace=$(cd dry2 && HW_FAULT_TRACE=1 hw-session command session-main <../a1 2>&1 >/dev/null)
	# one commit: the event log is appended to once
	[ "$(grep -c 'events-append$' <<<"$trace")" -eq 1 ]
	k=$(awk '/audit-append$/ { print $2 + 1; exit }' <<<"$trace")
	HW_FAULT_KILL_AT=$k run hw-session command session-main <a1
	[ "$status" -eq 137 ]
	[ "$(jq -r .state "$(receipt a1)")" = accepted ]
	run -0 --separate-stderr hw-session replay session-main
	[ "$(jq -r .kind <<<"$output" | tail -n 2 | paste -sd ' ')" = "command.received approval.recorded" ]
}

# edit_receipt ID JQ: rewrite command ID's receipt with a jq filter
edit_receipt() {
	jq -c "$2" "$(receipt "$1")" >receipt.new
	mv receipt.new "$(receipt "$1")"
}

@test "retry: a receipt whose range runs past the persisted events is refused" {
	chat c1 >c1
	hw-session command session-main <c1 >/dev/null
	edit_receipt c1 '.last_sequence += 1'
	before=$(snapshot)
	run -65 --separate-stderr hw-session command session-main <c1
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: receipt of command 'c1' does not match the persisted events" ]
	[ "$(snapshot)" = "$before" ]
}

@test "retry: a receipt whose range does not start at its command.received is refused" {
	hw-session command session-main < <(chat c1; chat c2) >/dev/null
	edit_receipt c2 '.first_sequence += 1'
	before=$(snapshot)
	run -65 --separate-stderr hw-session command session-main <<<"$(chat c2)"
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: receipt of command 'c2' does not match the persisted events" ]
	[ "$(snapshot)" = "$before" ]
}

@test "retry: a receipt whose range runs over the next command's events is refused" {
	hw-session command session-main < <(chat c1; chat c2) >/dev/null
	edit_receipt c1 '.last_sequence += 2'
	before=$(snapshot)
	run -65 --separate-stderr hw-session command session-main <<<"$(chat c1)"
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: receipt of command 'c1' does not match the persisted events" ]
	[ "$(snapshot)" = "$before" ]
}

# ---------------------------------------------------------------------------
# the lease, and a restart

@test "lease: a busy session exits 75 naming the holder and records nothing" {
	hold session-main
	before=$(snapshot)
	# a writer that serves no control socket is waited for, here not at all
	run -75 --separate-stderr env HW_LEASE_WAIT_S=0 hw-session command session-main <<<"$(chat c1)"
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: command line 1: session 'session-main' is busy: held by pid $HOLDER on host $(hostname)" ]
	[ "$(snapshot)" = "$before" ]
	exec {HOLDFD}>&-
	wait $HOLDER
}

@test "lease: held for the whole input, released at its end" {
	mkfifo in
	hw-session command session-main <in >out 2>err &
	pid=$!
	exec {fd}>in
	chat c1 >&$fd
	for _ in $(seq 600); do [ -s out ] && break; sleep 0.05; done
	[ -s out ]
	run -75 bash -c 'drafts 1 | hw-append --session session-main'
	exec {fd}>&-
	wait $pid
	[ ! -e "$(sdir)/.writer.json" ]
	append_n 1
}

@test "restart: the pending set is rebuilt from unmatched proposals in the log alone" {
	pending g1 t1 t2
	mkfifo in
	hw-session command session-main <in >out 2>err &
	pid=$!
	exec {fd}>in
	chat c1 >&$fd
	for _ in $(seq 600); do [ -s out ] && break; sleep 0.05; done
	[ "$(jq -r .projection.pendingApproval.groupId out)" = g1 ]
	kill -9 $pid
	wait $pid || true
	exec {fd}>&-
	[ -e "$(sdir)/.writer.json" ]
	run -0 hw-session project session-main
	[ "$(jq -c '[.pendingApproval.groupId, [.pendingApproval.actions[].toolCallId]]' <<<"$output")" = '["g1",["t1","t2"]]' ]
	run -0 --separate-stderr hw-session command session-main <<<"$(cmd a1 approve '{"target_id":"g1"}')"
	[ "$(jq -c '.events[1].payload.tool_call_ids' <<<"$output")" = '["t1","t2"]' ]
	[ "$(jq -c .projection.pendingApproval <<<"$output")" = null ]
}
