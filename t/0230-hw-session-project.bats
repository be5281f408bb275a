#!/usr/bin/env bats
# hw-session project: the one reduction from events to the session
# projection.  Golden fixtures (t/fixtures/hw-session/CASE.in.jsonl, the
# drafts, and CASE.out.json, the expected projection) cover every event
# kind, every action state, and hostile logs that must end in
# outcome-unknown and an unrecoverable error rather than a crash.

load lib

FIX=$HW_ROOT/t/fixtures/hw-session

# pretty: the projection in the fixtures' layout (Python keeps big ints)
pretty() { python3 -m json.tool --sort-keys --indent 1 --no-ensure-ascii; }

# golden CASE: the drafts of CASE, committed, project to CASE.out.json;
# their decisions count as the user's own (bind.py, hw-store(5) TRUST)
golden() {
	hw-append --session session-main <"$FIX/$1.in.jsonl" >/dev/null
	python3 "$HW_ROOT/t/bind.py" session-main
	run -0 --separate-stderr hw-session project session-main
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
	diff -u "$FIX/$1.out.json" <(pretty <<<"$output")
}

@test "project: golden: an empty session" { golden empty; }
@test "project: golden: one event of every kind" { golden every-kind; }
@test "project: golden: every action state in one session" { golden action-states; }
@test "project: golden: approved actions show running while the agent runs" { golden running; }
@test "project: golden: a fatal error leaves approved actions outcome-unknown" { golden outcome-unknown-after-fatal; }
@test "project: golden: a recoverable error offers recovery" { golden recoverable-error; }
@test "project: golden: a finished session suggests review and verification" { golden finished; }
@test "project: golden: plan, usage by purpose, specialists, pause and a refused command" { golden session-life; }
@test "project: golden: hostile: a duplicate proposal" { golden hostile-duplicate-proposal; }
@test "project: golden: hostile: the execution of a rejected action" { golden hostile-rejected-executed; }
@test "project: golden: hostile: a second outcome" { golden hostile-second-outcome; }
@test "project: golden: hostile: an execution without a proposal" { golden hostile-unproposed-execution; }
@test "project: golden: hostile: an execution naming another action" { golden hostile-identity-conflict; }
@test "project: golden: hostile: a resolution contradicting the decision" { golden hostile-contradicting-resolution; }

@test "project: every hostile log ends in outcome-unknown and an unrecoverable error" {
	for f in "$FIX"/hostile-*.out.json; do
		jq -e '(.actions | length > 0 and all(.state == "outcome-unknown" and .outcome == null))
			and .lifecycle.status == "error" and .availableCommands == []
			and .researcherStatus.code == "terminal-failure"
			and .researcherStatus.recoverable == false' "$f" >/dev/null ||
			{ echo "$f"; return 1; }
	done
}

@test "project: the fixtures cover every action state and every event kind" {
	for s in proposed awaiting-review approved rejected running succeeded failed outcome-unknown; do
		cat "$FIX"/*.out.json | grep -q "\"state\": \"$s\"" || { echo "no $s"; return 1; }
	done
	for k in $(jq -r '.kind' "$FIX"/every-kind.in.jsonl | sort -u); do
		grep -q "\"kind\": \"$k\"" "$FIX/every-kind.out.json" || { echo "no $k"; return 1; }
	done
	[ "$(jq -r .kind "$FIX"/every-kind.in.jsonl | sort -u | wc -l)" -eq 18 ]
}

@test "project: a session that does not exist has the empty projection and nothing is created" {
	run -0 --separate-stderr hw-session project session-main
	[ "$(jq -c '[.eventCount,.revision,.availableCommands]' <<<"$output")" = '[0,-1,["chat"]]' ]
	[ ! -e .heartwood ]
}

@test "project --until: the session as it stood at a sequence" {
	hw-append --session session-main <"$FIX/action-states.in.jsonl" >/dev/null
	python3 "$HW_ROOT/t/bind.py" session-main
	head -n 12 "$FIX/action-states.in.jsonl" | (mkdir early && cd early &&
		hw-append --session session-main >/dev/null &&
		python3 "$HW_ROOT/t/bind.py" session-main)
	run -0 hw-session project session-main --until 11
	[ "$output" = "$(cd early && hw-session project session-main)" ]
	[ "$(jq -r .revision <<<"$output")" = 11 ]
	[ "$(jq -r '.pendingApproval' <<<"$output")" = null ]
	run -0 hw-session project session-main --until 9
	[ "$(jq -r '.pendingApproval.groupId' <<<"$output")" = action-set-aaaaaaaaaaaaaaaa ]
	run -0 hw-session project session-main --until 999
	[ "$output" = "$(hw-session project session-main)" ]
}

@test "project --until: not a sequence number is a usage error" {
	for bad in -1 x 1x '' ' 3' +3; do
		run -2 --separate-stderr hw-session project session-main --until "$bad"
		[ "$stderr" = "hw-session: invalid --until '$bad': want a sequence number" ]
	done
}

@test "project --until only goes with project" {
	run -2 hw-session replay session-main --until 3
	run -2 hw-session follow session-main --until 3
}

@test "project: a tampered log fails with the sequence and prints nothing" {
	hw-append --session session-main <"$FIX/action-states.in.jsonl" >/dev/null
	sed -i '5s/Viewed/Seen/' "$(sdir)/events.jsonl"
	run -65 --separate-stderr hw-session project session-main
	[ -z "$output" ]
	[[ "$stderr" == "hw-session: sequence 4: "* ]] || { echo "$stderr"; return 1; }
}

@test "project: does not write to the store" {
	hw-append --session session-main <"$FIX/action-states.in.jsonl" >/dev/null
	before=$(snapshot)
	hw-session project session-main >/dev/null
	[ "$(snapshot)" = "$before" ]
}

# Whatever prefix survives a crash, a fresh process projects exactly what a
# session that never crashed shows at that point: the pending set comes
# from the log alone.
@test "project: after a crash, the pending set is rebuilt from the log alone" {
	(mkdir whole && cd whole && hw-append --session session-main <"$FIX/action-states.in.jsonl" >/dev/null)
	head -n 9 "$FIX/action-states.in.jsonl" | hw-append --session session-main >/dev/null
	for k in 1 2 3 4 5 6 7 8; do
		rm -rf "$k"
		mkdir "$k"
		cp -a .heartwood "$k/"
		# a writer killed at its k-th write, sync or rename boundary
		(cd "$k" && tail -n +10 "$FIX/action-states.in.jsonl" | HW_FAULT_KILL_AT=$k \
			hw-append --session session-main >/dev/null 2>&1 || true)
		run -0 --separate-stderr bash -c "cd $k && hw-session project session-main"
		n=$(jq -r .eventCount <<<"$output")
		[ "$n" -ge 9 ]
		[ "$output" = "$(cd whole && hw-session project session-main --until $((n - 1)))" ]
		seen="$seen $(jq -r .pendingApproval.groupId <<<"$output")"
	done
	# at least one crash left a pending set to rebuild
	[[ "$seen" == *action-set-* ]]
}

@test "project: a refused command shows as the researcher's notice" {
	hw-append --session session-main <"$FIX/session-life.in.jsonl" >/dev/null
	run -0 hw-session project session-main
	[ "$(jq -c '.researcherNotice | [.id,.code,.title]' <<<"$output")" = \
		'["command:cmd-3:rejected","request-not-applied","Request Not Applied"]' ]
	[ "$(jq -c '.lastCommandOutcome | [.status,.errorCode]' <<<"$output")" = '["rejected","request-not-applied"]' ]
}

@test "project: a later command clears the notice" {
	{ cat "$FIX/session-life.in.jsonl"
	  draft command.received '{"actor_id":"human","command_hash":"sha256:00","command_id":"cmd-4","command_kind":"resume"}'
	  draft session.resumed '{"command_id":"cmd-4"}'; } | hw-append --session session-main >/dev/null
	run -0 hw-session project session-main
	[ "$(jq -c '[.researcherNotice,.lastCommandOutcome.status,.lifecycle.status]' <<<"$output")" = '[null,"accepted","running"]' ]
}

@test "project: an unknown lifecycle status is a recoverable error" {
	draft agent.lifecycle.updated '{"status":"dancing"}' | hw-append --session session-main >/dev/null
	run -0 hw-session project session-main
	[ "$(jq -c '[.lifecycle.status,.researcherStatus.code,.availableCommands]' <<<"$output")" = '["error","recoverable-failure",["chat"]]' ]
}

@test "project: payloads of the wrong shape do not crash the reducer" {
	for k in command.received approval.recorded tool_call.proposed confirmation.requested \
		confirmation.resolved tool.execution.recorded agent.lifecycle.updated task.plan.updated \
		model.usage.updated subagent.updated error.recorded model_call.decision.recorded; do
		for p in '{}' '{"tool_call_id":7,"request":[],"tasks":{},"usage":"x","subagent":null,"decision":[1],"status":{}}' \
			'{"tool_call_ids":"call-1","group_id":5,"arguments":"x","affected_paths":{"a":1}}'; do
			draft "$k" "$p"
		done
	done | hw-append --session session-main >/dev/null
	run -0 --separate-stderr hw-session project session-main
	[ "$(jq -r .eventCount <<<"$output")" -eq 36 ]
	[ "$(jq -r .lifecycle.status <<<"$output")" = error ]
}

@test "project: long summaries are bounded to 240 characters" {
	long=$(printf 'é%.0s' $(seq 300))
	draft tool_call.proposed "{\"tool_call_id\":\"c\",\"action_id\":\"a\",\"tool_name\":\"terminal\",\"kind\":\"terminal\",\"summary\":\"$long\",\"arguments\":{}}" |
		hw-append --session session-main >/dev/null
	run -0 hw-session project session-main
	[ "$(jq -r '.actions[0].summary | length' <<<"$output")" = 240 ]
	[ "$(jq -r '.activity[0].detail | length' <<<"$output")" = 240 ]
}

@test "project: a bad session id is a usage error and creates nothing" {
	run -2 --separate-stderr hw-session project ../x
	[ ! -e .heartwood ]
}

@test "project: activity, conversation and actions show the most recent 1000 entries" {
	{ for i in $(seq 0 1199); do
		printf '{"kind":"tool_call.proposed","payload":{"tool_call_id":"c%d","action_id":"a%d","tool_name":"terminal","kind":"terminal","summary":"s","arguments":{}}}\n' "$i" "$i"
	  done; drafts 1300; } | hw-append --session session-main >/dev/null
	run -0 hw-session project session-main
	[ "$(jq -c '[.eventCount, (.activity|length), .activity[0].sequence, .activity[-1].sequence]' <<<"$output")" = '[2500,1000,1500,2499]' ]
	[ "$(jq -c '[(.conversation|length), .conversation[0].content, .conversation[-1].content]' <<<"$output")" = '[1000,"message 300","message 1299"]' ]
	[ "$(jq -c '[(.actions|length), .actions[0].toolCallId, .actions[-1].toolCallId]' <<<"$output")" = '[1000,"c200","c1199"]' ]
}

@test "project --events: replay piped into project gives the session's projection" {
	hw-append --session session-main <"$FIX/action-states.in.jsonl" >/dev/null
	run -0 bash -c 'hw-session replay session-main | hw-session project session-main --events -'
	[ "$output" = "$(hw-session project session-main)" ]
	run -0 hw-session project session-main --events "$(sdir)/events.jsonl" --until 7
	[ "$output" = "$(hw-session project session-main --until 7)" ]
}

@test "project --events: events of another session are refused" {
	append_n 2
	run -65 --separate-stderr hw-session project other --events "$(sdir)/events.jsonl"
	[ "$stderr" = "hw-session: $(sdir)/events.jsonl:1: session event belongs to another session" ]
	[ -z "$output" ]
}

@test "project --events: a gap in the sequence is refused" {
	append_n 3
	sed -n '1p;3p' "$(sdir)/events.jsonl" >gap.jsonl
	run -65 --separate-stderr hw-session project session-main --events gap.jsonl
	[ "$stderr" = "hw-session: gap.jsonl:2: session event has sequence 2, want 1" ]
}

@test "project --events: malformed JSON is refused with its line" {
	append_n 1
	{ cat "$(sdir)/events.jsonl"; echo '{"kind":'; } >bad.jsonl
	run -65 --separate-stderr hw-session project session-main --events bad.jsonl
	[[ "$stderr" == "hw-session: bad.jsonl:2: "* ]] || { echo "$stderr"; return 1; }
}

@test "project --events: an invalid event is refused" {
	append_n 1
	jq -c '.kind = "bogus.kind"' "$(sdir)/events.jsonl" >bad.jsonl
	run -65 --separate-stderr hw-session project session-main --events bad.jsonl
	[ "$stderr" = "hw-session: bad.jsonl:1: session event is invalid: unknown event kind" ]
}

@test "project --events: an unterminated last line is refused" {
	append_n 2
	head -c -1 "$(sdir)/events.jsonl" >cut.jsonl
	run -65 --separate-stderr hw-session project session-main --events cut.jsonl
	[ "$stderr" = "hw-session: cut.jsonl:2: unterminated last line" ]
}

@test "project --events: a missing file is 66, an empty stream the empty projection" {
	run -66 --separate-stderr hw-session project session-main --events nothing.jsonl
	[ "$stderr" = "hw-session: no events file 'nothing.jsonl'" ]
	run -0 hw-session project session-main --events /dev/null
	[ "$(jq -r .eventCount <<<"$output")" = 0 ]
	[ ! -e .heartwood ]
}

@test "project --events: a key holding NUL is an unknown field, read safely" {
	append_n 1
	sed 's/"session_id":/"session_id\\u00007eo8":"x","session_id":/' "$(sdir)/events.jsonl" >nul.jsonl
	run -65 --separate-stderr hw-session project session-main --events nul.jsonl
	[ "$stderr" = "hw-session: nul.jsonl:1: session event is invalid: unknown field" ]
}
