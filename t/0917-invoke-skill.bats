#!/usr/bin/env bats
# The invoke_skill tool: offered, last and read-only, only when a skill is
# active at the agent's start, with the system prompt's sentence; a call
# gives the skill's SKILL.md and the absolute location of its directory,
# whose files file_editor then views; an unknown, missing or malformed
# name and a skill changed since the start are error results naming the
# active skills; the result is bounded; the audit export keeps none of it.

load lib
load agent

setup() {
	agent_setup
	cp -r "$HW_ROOT/t/fixtures/skill/csv-clean" .
	D=$(hw-skill digest csv-clean | jq -r .tree_sha256)
	K=.heartwood/skills/artifacts/sha256/$D/csv-clean
	LOC=$(realpath .)/$K
}
teardown() { agent_teardown; }

install() { hw-skill local install "${1:-csv-clean}" --expected-tree-sha256 "${2:-$D}" >/dev/null; }

# invoke ID NAME: a turn whose one call is invoke_skill of NAME (JSON;
# none: no name at all)
invoke() {
	jq -cn --arg id "$1" --arg n "$2" '{content: "I will load the skill.", tool_calls: [{id: $id, name: "invoke_skill", arguments: ({summary: "Load the skill"} + if $n == "none" then {} else {name: ($n | fromjson)} end)}]}'
}

# execs: exit code, truncation and result of each tool execution
execs() { jq -c 'select(.kind == "tool.execution.recorded") | .payload | [.tool_name, .exit_code, .result_truncated, .result]' "$(sdir)/events.jsonl"; }

SENTENCE="call invoke_skill with its name: that is the only way to activate a skill, and it returns the skill's instructions (its SKILL.md) and the location of its files.  Resolve a skill's files from that location;"

@test "invoke_skill: offered only with an active skill, last, read-only with name required; the prompt says so then only" {
	capture
	chat c1 hello
	run -0 hw-agent run session-main
	[ "$(tail -1 requests.jsonl | jq -c '[.body.tools[].function.name]')" = '["terminal","file_editor","task_tracker","finish","think"]' ]
	run -0 sent '.[0].content'
	[[ "$output" != *invoke_skill* ]]
	install
	chat c2 again
	run -0 hw-agent run session-main
	[ "$(tail -1 requests.jsonl | jq -c '[.body.tools[].function.name]')" = '["terminal","file_editor","task_tracker","finish","think","invoke_skill"]' ]
	[ "$(tail -1 requests.jsonl | jq -c '.body.tools[5].function.parameters | [.type, (.properties | keys), .required, .properties.name.type]')" = \
		'["object",["name","summary"],["name"],"string"]' ]
	run -0 sent '.[0].content'
	[[ "$output" == *"$SENTENCE"* ]]
	[[ "$output" == *"## Skill csv-clean (local-unreviewed, tree sha256:$D)"* ]]
}

@test "invoke_skill: gives SKILL.md and the location without review; file_editor views a file there" {
	install
	invoke a '"csv-clean"' >turns.jsonl
	jq -cn --arg l "Location: $LOC" --arg p "$LOC/references/rules.md" '{expect: $l, content: "Reading the rules.", tool_calls: [
		{id: "b", name: "file_editor", arguments: {summary: "Read the rules", command: "view", path: $p, security_risk: "LOW"}}]}' >>turns.jsonl
	echo '{"content":"Read.","expect":"Keep every row; trim whitespace."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "clean the table"
	run -0 hw-agent run session-main
	# the invoke_skill set ran by itself; the view waits for review
	run -0 execs
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jq -c '.[:3]' <<<"${lines[0]}")" = '["invoke_skill",0,false]' ]
	r=$(jq -r '.[3]' <<<"${lines[0]}")
	[[ "$r" == "Skill csv-clean (local-unreviewed, tree sha256:$D) is active."$'\n'"Location: $LOC"$'\n'* ]]
	[[ "$r" == *'Run `scripts/clean.py INPUT` and read `references/rules.md` first.' ]]
	[[ "$r" != *"heartwood.id"* ]]	# the body, not the frontmatter
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	[ "$g" != null ]
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}" | hw-session command session-main >/dev/null
	run -0 hw-agent run session-main
	run -0 proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]'
	[ "$output" = '["idle",["succeeded","succeeded"],"Read."]' ]
	run -0 execs
	[ "$(jq -c '.[:3]' <<<"${lines[1]}")" = '["file_editor",0,false]' ]
}

@test "invoke_skill: an unknown name is an error result naming the active skills" {
	install
	invoke a '"csv-cleaner"' >turns.jsonl
	echo '{"content":"No such skill.","expect":"Available skills: csv-clean."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "clean the table"
	run -0 hw-agent run session-main
	run -0 execs
	[ "${lines[0]}" = '["invoke_skill",1,false,"Skill '"'csv-cleaner'"' is not an active skill of this run. Available skills: csv-clean."]' ]
	run -0 proj '[.lifecycle.status, .conversation[-1].content]'
	[ "$output" = '["idle","No such skill."]' ]
}

@test "invoke_skill: a missing or malformed name is an error result, and a call with no active skill says none is" {
	install
	{ invoke a none; invoke b 7; echo '{"content":"Done."}'; } >turns.jsonl
	serve turns.jsonl
	chat c1 "clean the table"
	run -0 hw-agent run session-main
	run -0 execs
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = '["invoke_skill",1,false,"Parameter `name` is required for invoke_skill. Available skills: csv-clean."]' ]
	[ "${lines[1]}" = "${lines[0]}" ]
	hw-skill remove csv-clean >/dev/null
	kill "$MODEL_PID"
	wait "$MODEL_PID" || :
	{ invoke c '"csv-clean"'; echo '{"content":"None.","expect":"No skill is active in this run."}'; } >turns.jsonl
	serve turns.jsonl
	chat c2 "again"
	run -0 hw-agent run session-main
	run -0 execs
	[ "${lines[2]}" = '["invoke_skill",1,false,"Skill '"'csv-clean'"' is not an active skill of this run. No skill is active in this run."]' ]
}

# ask_and_allow - the replay model of turns.jsonl, a question, the agent's
# run to the pending set, its approval, and the run that executes it
ask_and_allow() {
	local g
	serve turns.jsonl
	chat c1 "clean the table"
	hw-agent run session-main >/dev/null
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	[ "$g" != null ] || { echo "no set pending"; return 1; }
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}" | hw-session command session-main >/dev/null
	hw-agent run session-main >/dev/null
}

@test "invoke_skill: a skill whose files changed after the start is refused at the call" {
	install
	export HW_SANDBOX=none	# the terminal may then change the artifact
	jq -cn --arg c "echo more >>$K/references/rules.md" '{content: "Change, then load.", tool_calls: [
		{id: "a", name: "terminal", arguments: {summary: "Change the rules", command: $c, security_risk: "HIGH"}},
		{id: "b", name: "invoke_skill", arguments: {summary: "Load the skill", name: "csv-clean"}}]}' >turns.jsonl
	echo '{"content":"Refused.","expect":"cannot be used: its files changed since the agent started"}' >>turns.jsonl
	ask_and_allow
	run -0 execs
	[ "$(jq -c '.[:2]' <<<"${lines[0]}")" = '["terminal",0]' ]
	[ "${lines[1]}" = '["invoke_skill",1,false,"Skill '"'csv-clean'"' cannot be used: its files changed since the agent started. Continue without it. Available skills: csv-clean."]' ]
	run -0 proj '[.lifecycle.status, .conversation[-1].content]'
	[ "$output" = '["idle","Refused."]' ]
}

@test "invoke_skill: a skill removed after the start is refused at the call" {
	install
	export HW_SANDBOX=none	# the terminal may then remove it
	jq -cn '{content: "Remove, then load.", tool_calls: [
		{id: "a", name: "terminal", arguments: {summary: "Remove the skill", command: "hw-skill remove csv-clean", security_risk: "HIGH"}},
		{id: "b", name: "invoke_skill", arguments: {summary: "Load the skill", name: "csv-clean"}}]}' >turns.jsonl
	echo '{"content":"Refused.","expect":"it is no longer active"}' >>turns.jsonl
	ask_and_allow
	run -0 execs
	[ "$(jq -c '.[:2]' <<<"${lines[0]}")" = '["terminal",0]' ]
	[ "${lines[1]}" = '["invoke_skill",1,false,"Skill '"'csv-clean'"' cannot be used: it is no longer active (removed, deactivated or revoked since the agent started). Continue without it. Available skills: csv-clean."]' ]
	[ -d "$K" ]	# the artifact stays, and its digest with it
	run -0 proj '[.lifecycle.status, .conversation[-1].content]'
	[ "$output" = '["idle","Refused."]' ]
}

@test "invoke_skill: a long SKILL.md is bounded as any tool output; nothing of the skill reaches the audit export" {
	mkdir big
	cp -r csv-clean big/
	for i in $(seq 400); do echo "SKILL-BODY-MARKER-4417 line $i"; done >>big/csv-clean/SKILL.md
	d=$(hw-skill digest big/csv-clean | jq -r .tree_sha256)
	install big/csv-clean "$d"
	{ invoke a '"csv-clean"'; echo '{"content":"Loaded.","expect":"lines ("}'; } >turns.jsonl
	serve turns.jsonl
	chat c1 "clean the table"
	run -0 hw-agent run session-main
	run -0 execs
	[ "$(jq -c '.[:3]' <<<"${lines[0]}")" = '["invoke_skill",0,true]' ]
	r=$(jq -r '.[3]' <<<"${lines[0]}")
	[ "$(wc -l <<<"$r")" -le 240 ]
	[[ "$r" == *"SKILL-BODY-MARKER-4417 line 400" ]]
	[[ "$r" == *"[... "*" lines ("*" characters) omitted ...]"* ]]
	[[ "$r" == *"Location: $(realpath .)/.heartwood/skills/artifacts/sha256/$d/csv-clean"* ]]
	run -0 hw-audit export --session session-main --output export.jsonl
	[ -s export.jsonl ]
	refute grep -q -e SKILL-BODY-MARKER -e 'Cleaning a CSV' -e clean.py -e "$d" export.jsonl
	[ "$(jq -c 'select(.event_type == "tool.execution.recorded") | .payload | keys' export.jsonl)" = \
		'["action_id","backend_id","exit_code","session_event_hash","tool_call_id","tool_name"]' ]
	[ "$(jq -c 'select(.event_type == "tool_call.proposed") | .payload | keys' export.jsonl)" = \
		'["risk","session_event_hash","tool_call_id","tool_name"]' ]
}

@test "invoke_skill: a bundled skill's location is its directory in the data directory, which file_editor views" {
	unset HW_DATADIR	# the build tree's, bundled skills and all
	b=$(realpath "$HW_ROOT/share/skills/reproducible-analysis")
	d=$(hw-skill digest "$b" | jq -r .tree_sha256)
	invoke a '"reproducible-analysis"' >turns.jsonl
	jq -cn --arg l "Location: $b" --arg p "$b/SKILL.md" '{expect: $l, content: "Reading it.", tool_calls: [
		{id: "b", name: "file_editor", arguments: {summary: "Read the skill", command: "view", path: $p, view_range: [1, 2], security_risk: "LOW"}}]}' >>turns.jsonl
	echo '{"content":"Read.","expect":"name: reproducible-analysis"}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "plan the analysis"
	run -0 hw-agent run session-main
	run -0 execs
	[ "$(jq -c '.[:3]' <<<"${lines[0]}")" = '["invoke_skill",0,false]' ]
	[[ "$(jq -r '.[3]' <<<"${lines[0]}")" == "Skill reproducible-analysis (repository-reviewed, tree sha256:$d) is active."$'\n'"Location: $b"$'\n'* ]]
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}" | hw-session command session-main >/dev/null
	run -0 hw-agent run session-main
	run -0 proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]'
	[ "$output" = '["idle",["succeeded","succeeded"],"Read."]' ]
}
