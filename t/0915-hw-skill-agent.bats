#!/usr/bin/env bats
# The installed skills reach the agent: the system prompt of each model
# request lists the active ones after the runtime checks (the chain of the
# installation log, each one's last event, its tree, its compatibility).

load lib
load agent

setup() {
	agent_setup
	cp -r "$HW_ROOT/t/fixtures/skill/csv-clean" .
	printf '%s\n' '[{"type":"text/event-stream","events":["{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}"]}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
	D=$(hw-skill digest csv-clean | jq -r .tree_sha256)
}

teardown() {
	kill "$SRV" 2>/dev/null || :
	wait "$SRV" 2>/dev/null || :
	agent_teardown
}

# ask N - one question and the agent's run; prints the system prompt sent
ask() {
	chat "c$1" "question $1"
	hw-agent run session-main >/dev/null
	tail -1 requests.jsonl | jq -r '.body.messages[0].content'
}

@test "agent: the system prompt lists an active skill, and not once removed" {
	run -0 ask 1
	[[ "$output" != *"Active skills"* ]]
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$D"
	run -0 ask 2
	[[ "$output" == *"## Skill csv-clean (local-unreviewed, tree sha256:$D)
Clean a CSV file of research data, keeping every original row.
Files: .heartwood/skills/artifacts/sha256/$D/csv-clean/"* ]]
	[[ "$output" == *"call invoke_skill with its name"* ]]
	# the instructions themselves are invoke_skill's answer (t/0917)
	[[ "$output" != *"scripts/clean.py INPUT"* ]]
	run -0 hw-skill remove csv-clean
	run -0 ask 3
	[[ "$output" != *"csv-clean"* ]]
}

@test "agent: a skill whose artifact changed does not reach the model" {
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$D"
	echo more >>".heartwood/skills/artifacts/sha256/$D/csv-clean/references/rules.md"
	run -0 ask 1
	[[ "$output" != *"csv-clean"* ]]
}

@test "agent: a skill whose last event is not its activation does not reach it" {
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$D"
	printf '%s\n' '{"kind":"skill.deactivated","payload":{"skill_id":"org.example.csv-clean"}}' |
		hw-append --file .heartwood/audit/skill-installations.jsonl --log-id project-skills >/dev/null
	run -0 ask 1
	[[ "$output" != *"csv-clean"* ]]
}

@test "agent: a broken installation log stops the agent" {
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$D"
	sed -i '1s/approved/denied/' .heartwood/audit/skill-installations.jsonl
	chat c1 question
	run -65 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: .heartwood/audit/skill-installations.jsonl:1: "* ]]
}

@test "agent: reads an active skill's file through file_editor, and writes none" {
	run -0 hw-skill local install csv-clean --expected-tree-sha256 "$D"
	k=.heartwood/skills/artifacts/sha256/$D/csv-clean
	# the model is told where the files are, reads one and tries to add one
	jq -cn --arg p "$k/references/rules.md" --arg e "Files: $k/" '{content: "I will read the rules.", expect: $e, tool_calls: [
		{id: "a", name: "file_editor", arguments: {summary: "Read", command: "view", path: $p, security_risk: "LOW"}},
		{id: "b", name: "file_editor", arguments: {summary: "Add", command: "create", path: ($p + ".new"), file_text: "x", security_risk: "LOW"}}]}' >turns.jsonl
	echo '{"content":"Read.","expect":"Keep every row; trim whitespace."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "clean the table"
	run -0 hw-agent run session-main
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}" | hw-session command session-main >/dev/null
	run -0 hw-agent run session-main
	run -0 proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]'
	[ "$output" = '["idle",["succeeded","failed"],"Read."]' ]
	[ ! -e "$k/references/rules.md.new" ]
	run -0 hw-skill list
	[ "$(jq -r 'select(.name == "csv-clean") | .status' <<<"$output")" = active ]
}
