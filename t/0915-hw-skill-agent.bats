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
	[[ "$output" == *"## Skill csv-clean (local-unreviewed, tree sha256:$D)"* ]]
	[[ "$output" == *"Run \`scripts/clean.py INPUT\`"* ]]
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
