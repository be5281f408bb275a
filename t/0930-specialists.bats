#!/usr/bin/env bats
# Research specialists: the catalogue of share/specialists checked when
# the agent starts (one test a rule), the task tool offered only with
# specialists, a delegation reviewed as one member of its set, the child
# run through the replay model with its own prompt and lineage, its prose
# kept out of the audit export, a failed child, a task outside the
# catalogue rejected automatically, and a pause while a child runs.

load lib
load agent

# with_specialists: the data directory with the bundled skills and
# specialists back (agent_setup leaves both out)
with_specialists() {
	cp -r "$HW_ROOT/share/skills" "$HW_ROOT/share/specialists" "$HW_DATADIR/"
}

setup() { agent_setup; with_specialists; }
teardown() { agent_teardown; }

pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
decide() { cmd "$1" "$2" "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" | hw-session command session-main >/dev/null; }

# task ID TYPE PROMPT [EXPECT]: a parent turn delegating to TYPE
task() {
	jq -cn --arg id "$1" --arg t "$2" --arg p "$3" --arg e "${4:-}" \
		'{content: null, tool_calls: [{id: $id, name: "task", arguments: {summary: "Ask a specialist", description: "Review the plan", prompt: $p, subagent_type: $t}}]} + (if $e == "" then {} else {expect: $e} end)'
}

# spec FILE: the copy of a bundled specialist the agent will read
spec() { echo "$HW_DATADIR/specialists/$1.md"; }

# refused RULE [NAME]: the agent refuses to start, naming NAME's file
# (research-planner's) and RULE, before any model call; so does
# heartwood /specialists
refused() {
	echo '{"content":"unused"}' >turns.jsonl
	capture
	chat c1 "plan it"
	run -65 --separate-stderr hw-agent run session-main
	[ -z "$output" ]
	[ "$stderr" = "hw-agent: invalid specialist '$(spec "${2:-research-planner}")': $1" ] || { echo "$stderr"; return 1; }
	[ ! -s requests.jsonl ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="model_call.decision.recorded")' | wc -l)" = 0 ]
	run -65 --separate-stderr heartwood specialists
	[ "$stderr" = "heartwood: invalid specialist '$(spec "${2:-research-planner}")': $1" ]
}

# edit SED: research-planner's file edited by SED
edit() { sed -i "$1" "$(spec research-planner)"; }

@test "specialist rule: the file starts with a frontmatter between --- lines" {
	edit '1d'
	refused "it must start with a frontmatter between '---' lines"
}

@test "specialist rule: the frontmatter is the YAML subset" {
	edit 's/^tools: \[\]$/tools: [a/'
	refused "frontmatter line 9: an unterminated flow list"
}

@test "specialist rule: name is the file's name" {
	edit 's/^name: research-planner$/name: planner/'
	refused "its name must be its file's name, 'research-planner'"
}

@test "specialist rule: a description is required" {
	edit '/^description:/d'
	refused "a description is required"
}

@test "specialist rule: model must be inherit" {
	edit 's/^model: inherit$/model: gpt-5/'
	refused "model must be 'inherit'"
}

@test "specialist rule: permission_mode must be always_confirm" {
	edit 's/^permission_mode: always_confirm$/permission_mode: never_confirm/'
	refused "permission_mode must be 'always_confirm'"
}

@test "specialist rule: max_iteration_per_run is required" {
	edit '/^max_iteration_per_run:/d'
	refused "max_iteration_per_run is required, a positive whole number"
}

@test "specialist rule: max_iteration_per_run is a positive whole number" {
	edit 's/^max_iteration_per_run: 12$/max_iteration_per_run: 1.5/'
	refused "max_iteration_per_run is required, a positive whole number"
}

@test "specialist rule: max_budget_per_run is required" {
	edit '/^max_budget_per_run:/d'
	refused "max_budget_per_run is required, a positive number of US dollars"
}

@test "specialist rule: max_budget_per_run is positive" {
	edit 's/^max_budget_per_run: 1.00$/max_budget_per_run: 0/'
	refused "max_budget_per_run is required, a positive number of US dollars"
}

@test "specialist rule: condenser is not allowed" {
	edit 's/^tools: \[\]$/tools: []\ncondenser: llm/'
	refused "'condenser' is not allowed"
}

@test "specialist rule: hooks are not allowed" {
	edit 's/^tools: \[\]$/tools: []\nhooks: [pre]/'
	refused "'hooks' is not allowed"
}

@test "specialist rule: MCP servers are not allowed" {
	edit 's/^tools: \[\]$/tools: []\nmcp_servers: [fetch]/'
	refused "'mcp_servers' is not allowed"
}

@test "specialist rule: profile_store_dir is not allowed" {
	edit 's/^tools: \[\]$/tools: []\nprofile_store_dir: \/tmp/'
	refused "'profile_store_dir' is not allowed"
}

@test "specialist rule: a field the format does not have is refused" {
	edit 's/^tools: \[\]$/tools: []\ncolour: blue/'
	refused "'colour' is not a field of a specialist"
}

@test "specialist rule: skills may list only verified bundled skills" {
	edit 's/^skills: \[\]$/skills: [omop-cohort-summary]/'
	refused "skill 'omop-cohort-summary' is not a verified bundled skill"
}

@test "specialist rule: a bundled skill that fails verification does not count" {
	echo '{}' >"$HW_DATADIR/skills/reproducible-analysis/.mcp.json"
	refused "skill 'reproducible-analysis' is not a verified bundled skill" analysis-implementer
}

@test "specialist rule: the heartwood block is required" {
	edit '/^heartwood:$/,/^  order:/d'
	refused "the 'heartwood:' block is missing"
}

@test "specialist rule: heartwood.label is required" {
	edit '/^  label:/d'
	refused "heartwood.label is required"
}

@test "specialist rule: heartwood.label is unique" {
	sed -i 's/^  label: Statistical reviewer$/  label: Research planner/' "$(spec statistical-reviewer)"
	refused "heartwood.label 'Research planner' is already another specialist's" statistical-reviewer
}

@test "specialist rule: heartwood has only its fields" {
	edit 's/^  order: 10$/  order: 10\n  colour: blue/'
	refused "heartwood.colour is not a field of the block"
}

@test "specialist rule: heartwood.capability is advisory or project-actions" {
	edit 's/^  capability: advisory$/  capability: autonomous/'
	refused "heartwood.capability must be 'advisory' or 'project-actions'"
}

@test "specialist rule: heartwood.availability is available or unavailable" {
	edit 's/^  availability: available$/  availability: maybe/'
	refused "heartwood.availability must be 'available' or 'unavailable'"
}

@test "specialist rule: an available specialist has no unavailable_reason" {
	edit 's/^  order: 10$/  order: 10\n  unavailable_reason: none/'
	refused "heartwood.unavailable_reason is given for an available specialist"
}

@test "specialist rule: an unavailable specialist has an unavailable_reason" {
	edit 's/^  availability: available$/  availability: unavailable/'
	refused "heartwood.unavailable_reason is required when it is unavailable"
}

@test "specialist rule: heartwood.order is a positive whole number" {
	edit 's/^  order: 10$/  order: first/'
	refused "heartwood.order must be a positive whole number"
}

@test "specialist rule: an advisory specialist has no tools" {
	edit 's/^tools: \[\]$/tools: [terminal]/'
	refused "an advisory specialist may have no tools"
}

@test "specialist rule: an available specialist has no tools" {
	edit 's/^tools: \[\]$/tools: [terminal]/; s/^  capability: advisory$/  capability: project-actions/'
	refused "an available specialist may have no tools"
}

@test "specialist rule: a project-actions specialist lists its tools" {
	edit 's/^  capability: advisory$/  capability: project-actions/; s/^  availability: available$/  availability: unavailable\n  unavailable_reason: later/'
	refused "a project-actions specialist must list its tools"
}

@test "specialist rule: a project-actions specialist stays unavailable" {
	sed -i 's/^  availability: unavailable$/  availability: available/; /^  unavailable_reason:/d' "$(spec analysis-implementer)"
	refused "an available specialist may have no tools" analysis-implementer
}

@test "specialist rule: the system prompt is not empty" {
	awk '/^---$/ {n++} {print} n == 2 {exit}' "$(spec research-planner)" >f.md
	printf '\n\n' >>f.md
	mv f.md "$(spec research-planner)"
	refused "its system prompt (the text after the frontmatter) is empty"
}

@test "specialist rule: the file is UTF-8 text" {
	printf '\377\n' >>"$(spec research-planner)"
	refused "it is not UTF-8 text"
}

@test "specialists: the bundled catalogue is valid and heartwood /specialists lists it, the implementer unavailable with its reason" {
	run -0 --separate-stderr heartwood specialists
	[ "${lines[0]}" = "Research specialists (the task tool; each delegation is reviewed like any action):" ]
	[ "$(grep -c 'advisory, available' <<<"$output")" = 5 ]
	[[ "$output" == *"analysis-implementer"*"project-actions, unavailable: A specialist that acts on the project"* ]]
	# in order: planner first, implementer last
	[ "$(awk 'NR>1 && NR%2==0 {print $1}' <<<"$output" | tr '\n' ' ')" = \
		"research-planner data-quality-reviewer cohort-feature-reviewer statistical-reviewer reproducibility-reviewer analysis-implementer " ]
}

@test "specialists: with none configured, /specialists says so and the task tool is not offered" {
	rm -r "$HW_DATADIR/specialists"
	run -0 heartwood specialists
	[ "$output" = "No specialists are configured." ]
	echo '{"content":"ok"}' >turns.jsonl
	capture
	chat c1 "hello"
	run -0 hw-agent run session-main
	[ "$(tail -1 requests.jsonl | jq -c '[.body.tools[].function.name]')" = '["terminal","file_editor","task_tracker","finish","think","invoke_skill"]' ]
}

@test "specialists: the task tool follows task_tracker, its subagent_type lists the available ones only" {
	echo '{"content":"ok"}' >turns.jsonl
	capture
	chat c1 "hello"
	run -0 hw-agent run session-main
	[ "$(tail -1 requests.jsonl | jq -c '[.body.tools[].function.name]')" = '["terminal","file_editor","task_tracker","task","finish","think","invoke_skill"]' ]
	[ "$(tail -1 requests.jsonl | jq -c '.body.tools[3].function.parameters | [.required, (.properties|keys), .properties.subagent_type.enum]')" = \
		'[["prompt"],["description","prompt","resume","security_risk","subagent_type","summary"],["research-planner","data-quality-reviewer","cohort-feature-reviewer","statistical-reviewer","reproducibility-reviewer"]]' ]
}

@test "specialists: a model that delegates to two specialists in turn, each reviewed; lineage and usage in the projection; the audit export free of their prose" {
	{
		task t1 research-planner "Plan the cohort study OBJECTIVE-ONE"
		echo '{"content":"PLANNER-PROSE-7731: step one, step two.","usage":{"prompt_tokens":11,"completion_tokens":5},"expect":"You are a research planner"}'
		task t2 statistical-reviewer "Review the model OBJECTIVE-TWO" "PLANNER-PROSE-7731"
		echo '{"content":"STATS-PROSE-4419: use intervals.","usage":{"prompt_tokens":13,"completion_tokens":7},"expect":"You are a statistical reviewer"}'
		echo '{"content":"Both reviews are in.","expect":"STATS-PROSE-4419"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan and review"
	run -0 hw-agent run session-main
	# the delegation waits for review like any action, its specialist shown
	[ "$(proj '[.lifecycle.status, (.pendingApproval.actions[] | .toolName, .details.roleLabel, .details.capability, .details.subagentType, .details.prompt)]')" = \
		'["waiting-for-confirmation","task","Research planner","advisory","research-planner","Plan the cohort study OBJECTIVE-ONE"]' ]
	[ "$(proj '.subagents')" = '[]' ]
	# the terminal's review shows the specialist, its capability and objective
	run -0 --separate-stderr heartwood --plain </dev/null
	[[ "$output" == *$'1. Ask a specialist [task · Not Classified]\n     Specialist: Research planner · advisory · Objective: Review the plan\n'* ]] || { echo "$output"; false; }
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, .pendingApproval.actions[0].details.roleLabel]')" = '["waiting-for-confirmation","Statistical reviewer"]' ]
	decide c3 approve
	run -0 hw-agent run session-main
	[ "$(proj '.lifecycle.status')" = '"idle"' ]
	# lineage: each child under its parent action, finished
	run -0 proj '[.subagents[] | [.agentName, .roleLabel, .status, .parentSessionId, (.parentActionId | startswith("act-"))]]'
	[ "$output" = '[["research-planner","Research planner","completed","session-main",true],["statistical-reviewer","Statistical reviewer","completed","session-main",true]]' ]
	[ "$(proj '[.subagents[].parentActionId] | unique | length')" = 2 ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.agent_name, .status, .usage_id]' | tr -d '\n')" = \
		'["research-planner","running","specialist:research-planner"]["research-planner","finished","specialist:research-planner"]["statistical-reviewer","running","specialist:statistical-reviewer"]["statistical-reviewer","finished","specialist:statistical-reviewer"]' ]
	# usage by purpose: each specialist its own
	[ "$(proj '[.usageByPurpose[] | select(.usageId | startswith("specialist:")) | [.usageId, .purposeLabel, .callCount, .promptTokens, .completionTokens]]')" = \
		'[["specialist:research-planner","Specialist: research-planner",1,11,5],["specialist:statistical-reviewer","Specialist: statistical-reviewer",1,13,7]]' ]
	# the child's answer was the task's observation (expect proved it) and
	# is in the session, but never in the audit log or its export
	grep -q PLANNER-PROSE-7731 "$(sdir)/events.jsonl"
	refute grep -q -e PROSE- -e OBJECTIVE- "$(sdir)/audit.jsonl"
	run -0 hw-audit export --session session-main --output export.jsonl
	[ -s export.jsonl ]
	refute grep -q -e PROSE- -e OBJECTIVE- export.jsonl
	[ "$(jq -c 'select(.event_type=="subagent.updated") | .payload.subagent | keys' export.jsonl | sort -u)" = \
		'["agent_name","invocation_id","parent_action_id","parent_session_id","role_label","status","task_id"]' ]
}

@test "specialists: a child that fails returns the fixed message to the parent, and its lineage says failed" {
	{
		task t1 data-quality-reviewer "Check the extract"
		echo '{"fail":401}'
		echo '{"content":"I will go on without it.","expect":"The specialist could not complete this task"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "check"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, [.subagents[] | .agentName, .status]]')" = '["idle",["data-quality-reviewer","error"]]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.status, .failure]' | tail -1)" = '["failed","HW-AGENT-008"]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="tool.execution.recorded").payload | [.tool_name, .exit_code]')" = '["task",1]' ]
}

@test "specialists: a child that never answers in text within its iterations fails on its limit" {
	sed -i 's/^max_iteration_per_run: 12$/max_iteration_per_run: 2/' "$(spec research-planner)"
	{
		task t1 research-planner "Plan"
		echo '{"content":null,"tool_calls":[{"id":"x","name":"terminal","arguments":{"command":"ls"}}]}'
		echo '{"content":"Still no text.","tool_calls":[{"id":"y","name":"terminal","arguments":{"command":"ls"}}],"expect":"You have no tools in this conversation"}'
		echo '{"content":"Understood.","expect":"The specialist could not complete this task"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.status, .failure, .iterations]' | tail -1)" = '["failed","iteration-limit",2]' ]
	# the child's tool calls never became actions
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="tool_call.proposed").payload.tool_name' | tr -d '\n')" = '"task"' ]
}

@test "specialists: a task naming a specialist outside the catalogue is rejected automatically, with the reason, without review" {
	{
		task t1 nobody-reviewer "Do it"
		echo '{"content":"Noted.","expect":"it names no specialist of the catalog"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "go"
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, .pendingApproval, .subagents]')" = '["idle",null,[]]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="approval.recorded").payload | [.decision, .policy]')" = '["rejected","automatic-task-rejection"]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="confirmation.resolved").payload.decision')" = '"denied"' ]
}

@test "specialists: a task naming the unavailable implementer is rejected automatically" {
	{
		task t1 analysis-implementer "Write the code"
		echo '{"content":"Noted.","expect":"that specialist is unavailable"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "go"
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="approval.recorded").payload.decision')" = '"rejected"' ]
}

@test "specialists: a task that uses resume is rejected automatically, the whole set with it" {
	jq -cn '{content: null, tool_calls: [
		{id: "a", name: "think", arguments: {thought: "hm"}},
		{id: "b", name: "task", arguments: {prompt: "again", subagent_type: "research-planner", resume: "agent-1"}}]}' >turns.jsonl
	echo '{"content":"Noted.","expect":"resuming a specialist is not supported"}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "go"
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="confirmation.resolved").payload.decision' | tr -d '\n')" = '"denied""denied"' ]
	[ "$(proj '.lifecycle.status')" = '"idle"' ]
}

@test "specialists: pausing the parent while a child runs interrupts the child; the task's observation says so and the session ends paused" {
	# the parent's turn from the replay model, then a child that never answers
	task t1 research-planner "Plan slowly" >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	kill "$MODEL_PID"; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=
	python3 -c '
import http.server, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        open("asked", "w").close()
        end = time.monotonic() + 120
        try:
            while time.monotonic() < end:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
' >ka.port 2>ka.err 3>&- &
	MODEL_PID=$!
	for _ in $(seq 200); do [ -s ka.port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat ka.port)/v1"
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 400); do [ -e asked ] && break; sleep 0.05; done
	[ -e asked ]
	[ "$(proj '[.subagents[].status]')" = '["running"]' ]
	run -0 --separate-stderr timeout 60 hw-session command session-main < <(cmd p1 pause '{}')
	for _ in $(seq 600); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	refute kill -0 "$AGENT_PID"
	wait "$AGENT_PID"
	[ "$(proj '[.lifecycle.status, [.subagents[].status]]')" = '["paused",["interrupted"]]' ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result')" = \
		"The specialist was interrupted before it answered, because the session was paused; no part of its work is available." ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="error.recorded")' | wc -l)" = 0 ]
}

@test "specialists: a specialist's usage adds up over its invocations across runs (the agent's snapshot keeps it), and in the total" {
	{
		task t1 research-planner "First"
		echo '{"content":"One.","usage":{"prompt_tokens":10,"completion_tokens":1}}'
		task t2 research-planner "Second" "One."
		echo '{"content":"Two.","usage":{"prompt_tokens":20,"completion_tokens":2}}'
		echo '{"content":"Done.","expect":"Two.","usage":{"prompt_tokens":100,"completion_tokens":3}}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan twice"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ -s "$(sdir)/.agent-snapshot" ]
	decide c3 approve
	run -0 hw-agent run session-main
	[ "$(proj '[.usageByPurpose[] | select(.usageId == "specialist:research-planner") | [.callCount, .promptTokens, .completionTokens]]')" = '[[2,30,3]]' ]
	[ "$(proj '[.usage.callCount, .usage.promptTokens, .usage.completionTokens]')" = '[5,130,6]' ]
}

@test "specialists: a specialist's bundled skills are in its child's system prompt" {
	{
		task t1 reproducibility-reviewer "Check the rerun"
		echo '{"content":"Seeds are missing.","expect":"## Skill reproducible-analysis"}'
		echo '{"content":"Noted.","expect":"Seeds are missing."}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "review"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, [.subagents[].status]]')" = '["idle",["completed"]]' ]
}

@test "specialists: at start, a skill a specialist names that no longer verifies stops the agent" {
	echo '{}' >"$HW_DATADIR/skills/reproducible-analysis/.mcp.json"
	echo '{"content":"unused"}' >turns.jsonl
	capture
	chat c1 "review"
	run -65 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid specialist '$(spec analysis-implementer)': skill 'reproducible-analysis' is not a verified bundled skill" ]
}

@test "specialists: heartwood specialists --json is the catalogue as the gateway serves it; an invalid file is 65" {
	run -0 --separate-stderr heartwood specialists --json
	[ "$(jq -c '[.schema_version, [.specialists[].name], .specialists[0].label, .specialists[5].availability]' <<<"$output")" = \
		'["heartwood.specialists.v1",["research-planner","data-quality-reviewer","cohort-feature-reviewer","statistical-reviewer","reproducibility-reviewer","analysis-implementer"],"Research planner","unavailable"]' ]
	sed -i 's/^permission_mode: always_confirm$/permission_mode: auto/' "$(spec data-quality-reviewer)"
	run -65 --separate-stderr heartwood specialists --json
	[ -z "$output" ]
	[ "$stderr" = "heartwood: invalid specialist '$(spec data-quality-reviewer)': permission_mode must be 'always_confirm'" ]
}

@test "specialists: the notebook's specialist_settings is the same catalogue" {
	PYTHONPATH="$HW_ROOT/share/python" run -0 --separate-stderr /usr/bin/python3 -c '
from heartwood import NotebookSession
with NotebookSession() as s:
    c = s.specialist_settings()
    print(c["schema_version"], len(c["specialists"]), c["specialists"][5]["name"], c["specialists"][5]["availability"])'
	[ "$output" = "heartwood.specialists.v1 6 analysis-implementer unavailable" ] || { echo "$stderr"; false; }
}

# ---- the budget (max_budget_per_run, US dollars the route reports) ----

# busy COST [EXPECT]: a child turn with a tool call (so not an answer)
# whose usage reports COST dollars ("" for none)
busy() {
	jq -cn --arg c "$1" --arg e "${2:-}" '{content: null, tool_calls: [{id: "x", name: "terminal", arguments: {command: "ls"}}], usage: ({prompt_tokens: 10, completion_tokens: 1} + (if $c == "" then {} else {cost: ($c | tonumber)} end))} + (if $e == "" then {} else {expect: $e} end)'
}

# lineage: the child's last subagent.updated, as [status, failure,
# iterations, accumulated_cost, max_budget_per_run]
lineage() {
	hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.status, .failure, .iterations, .accumulated_cost, .max_budget_per_run]' | tail -1
}

@test "budget: a child whose reported cost passes max_budget_per_run is stopped, the parent given the fixed message" {
	{
		task t1 research-planner "Plan"
		busy 0.6
		busy 0.6 "You have no tools in this conversation"
		echo '{"content":"Going on without it.","expect":"The specialist could not complete this task"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(lineage)" = '["failed","budget-limit",2,1.2,1]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="tool.execution.recorded").payload | [.tool_name, .exit_code]')" = '["task",1]' ]
	[ "$(proj '[.lifecycle.status, [.subagents[] | .status, .failure, .accumulatedCost, .maxBudgetPerRun]]')" = '["idle",["error","budget-limit",1.2,1]]' ]
	[ "$(proj '[.usageByPurpose[] | select(.usageId == "specialist:research-planner") | .accumulatedCost]')" = '[1.2]' ]
	# the audit export keeps the lineage's fixed fields only
	run -0 hw-audit export --session session-main --output export.jsonl
	[ "$(jq -c 'select(.event_type=="subagent.updated") | .payload.subagent | keys' export.jsonl | sort -u)" = \
		'["agent_name","invocation_id","parent_action_id","parent_session_id","role_label","status","task_id"]' ]
}

@test "budget: a child within its budget answers, its cost in the lineage and the usage" {
	{
		task t1 research-planner "Plan"
		busy 0.25
		echo '{"content":"A plan.","usage":{"prompt_tokens":5,"completion_tokens":2,"cost":0.5},"expect":"You have no tools in this conversation"}'
		echo '{"content":"Done.","expect":"A plan.","usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.125}}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(lineage)" = '["finished",null,2,0.75,1]' ]
	[ "$(proj '[.usageByPurpose[] | [.usageId, .accumulatedCost]]')" = '[["agent",null],["specialist:research-planner",0.75]]' ]
}

@test "budget: a cost no route reported is unknown (null), never 0, and does not stop the child" {
	{
		task t1 research-planner "Plan"
		busy ""
		echo '{"content":"A plan.","expect":"You have no tools in this conversation"}'
		echo '{"content":"Done.","expect":"A plan."}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(lineage)" = '["finished",null,2,null,1]' ]
	[ "$(proj '[[.subagents[].accumulatedCost], [.usageByPurpose[].accumulatedCost], .usage.accumulatedCost]')" = '[[null],[null,null],null]' ]
	[ "$(hw-session replay session-main | jq -s -c '[.[] | select(.kind=="model.usage.updated").payload.usage.accumulated_cost] | unique')" = '[null]' ]
}

@test "budget: what was reported counts even when another call's price is unknown" {
	{
		task t1 research-planner "Plan"
		busy ""
		busy 1.5 "You have no tools in this conversation"
		echo '{"content":"Going on.","expect":"The specialist could not complete this task"}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	# stopped on the known 1.5, its total unknown
	[ "$(lineage)" = '["failed","budget-limit",2,null,1]' ]
}

@test "budget: each run has its own budget; the session's usage adds the runs up (the agent's snapshot keeps the cost)" {
	{
		task t1 research-planner "First"
		echo '{"content":"One.","usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.75}}'
		task t2 research-planner "Second" "One."
		echo '{"content":"Two.","usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.75}}'
		echo '{"content":"Done.","expect":"Two.","usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.5}}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan twice"
	run -0 hw-agent run session-main
	decide c2 approve
	run -0 hw-agent run session-main
	[ -s "$(sdir)/.agent-snapshot" ]
	decide c3 approve
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated" and .payload.subagent.status == "finished").payload.subagent.accumulated_cost' | tr '\n' ' ')" = '0.75 0.75 ' ]
	[ "$(proj '[.usageByPurpose[] | select(.usageId == "specialist:research-planner") | .accumulatedCost]')" = '[1.5]' ]
}

# ---- the child's conversation (<session>/openhands/subagents) ----

# delegated: research-planner asked to plan, answering ANSWER, and the
# pending task's action id in $ACT (the child not run yet)
delegated() {
	{
		task t1 research-planner "Plan OBJECTIVE-CONV"
		echo '{"content":"CHILD-PROSE-5512: a plan."}'
		echo '{"content":"Done."}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	ACT=$(hw-session project session-main | jq -r '.pendingApproval.actions[0].actionId')
	CONV=$(sdir)/openhands/subagents/subagent-$ACT.json
}

@test "subagents: a child's conversation is kept under the session's openhands/subagents, owner-only, and read back" {
	delegated
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(stat -c %a "$(sdir)/openhands") $(stat -c %a "$(sdir)/openhands/subagents") $(stat -c %a "$CONV")" = "700 700 600" ]
	[ "$(jq -c '[.schema_version, .invocation_id, .agent_name, .status, .iterations, [.messages[].role]]' "$CONV")" = \
		"[\"heartwood.subagent-conversation.v1\",\"subagent-$ACT\",\"research-planner\",\"finished\",1,[\"system\",\"user\",\"assistant\"]]" ]
	[ "$(jq -r '.messages[2].content' "$CONV")" = "CHILD-PROSE-5512: a plan." ]
	[[ "$(jq -r '.messages[1].content' "$CONV")" == *OBJECTIVE-CONV* ]]
	# the lineage says where it is and what it holds; so does the projection
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent.conversation' | tail -1)" = \
		"{\"messages\":3,\"path\":\"openhands/subagents/subagent-$ACT.json\",\"sha256\":\"$(sha256sum <"$CONV" | cut -d' ' -f1)\"}" ]
	[ "$(proj '[.subagents[].conversation.path]')" = "[\"openhands/subagents/subagent-$ACT.json\"]" ]
	# never in the audit log or its export
	run -0 hw-audit export --session session-main --output export.jsonl
	refute grep -q -e CHILD-PROSE -e OBJECTIVE-CONV -e openhands/subagents export.jsonl "$(sdir)/audit.jsonl"
}

@test "subagents: a failed child's conversation is kept as it ended" {
	sed -i 's/^max_iteration_per_run: 12$/max_iteration_per_run: 2/' "$(spec research-planner)"
	{
		task t1 research-planner "Plan"
		echo '{"content":"Thinking.","tool_calls":[{"id":"x","name":"terminal","arguments":{"command":"ls"}}]}'
		echo '{"content":null,"tool_calls":[{"id":"y","name":"terminal","arguments":{"command":"ls"}}]}'
		echo '{"content":"Understood."}'
	} >turns.jsonl
	serve turns.jsonl
	chat c1 "plan"
	run -0 hw-agent run session-main
	ACT=$(hw-session project session-main | jq -r '.pendingApproval.actions[0].actionId')
	decide c2 approve
	run -0 hw-agent run session-main
	CONV=$(sdir)/openhands/subagents/subagent-$ACT.json
	[ "$(jq -c '[.status, .iterations, [.messages[].role]]' "$CONV")" = '["failed",2,["system","user","assistant","user","user"]]' ]
}

@test "subagents: an openhands directory that is a symbolic link is never followed; the child fails, the parent told" {
	delegated
	mkdir -p "$BATS_TEST_TMPDIR/elsewhere"
	ln -s "$BATS_TEST_TMPDIR/elsewhere" "$(sdir)/openhands"
	decide c2 approve
	run -0 hw-agent run session-main
	[ -z "$(ls -A "$BATS_TEST_TMPDIR/elsewhere")" ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.status, .failure, .conversation]' | tail -1)" = '["failed","persistence",null]' ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result')" = "The specialist could not complete this task: it stopped before it gave an answer, and no part of its work is available. Continue without it or delegate again." ]
}

@test "subagents: a conversation file that is a symbolic link is never written through" {
	delegated
	mkdir -p "$(sdir)/openhands/subagents"
	echo untouched >"$BATS_TEST_TMPDIR/target"
	ln -s "$BATS_TEST_TMPDIR/target" "$CONV"
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(cat "$BATS_TEST_TMPDIR/target")" = untouched ]
	[ -L "$CONV" ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="subagent.updated").payload.subagent | [.status, .failure]' | tail -1)" = '["failed","persistence"]' ]
}

@test "subagents: directories others may use are made owner-only" {
	delegated
	mkdir -p "$(sdir)/openhands/subagents"
	chmod 700 "$(sdir)/openhands"
	chmod 711 "$(sdir)/openhands/subagents"
	decide c2 approve
	run -0 hw-agent run session-main
	[ "$(stat -c %a "$(sdir)/openhands/subagents")" = 700 ]
	[ "$(jq -r .status "$CONV")" = finished ]
}

@test "budget: only a number of dollars from 0 is taken as a route's price" {
	local c='{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Noted."},"finish_reason":"stop"}]}'
	for cost in -1 '"0.5"' 1e7 0.5; do
		cd "$(mktemp -d "$BATS_TEST_TMPDIR/p.XXXXXX")"
		u=$(jq -cn --argjson k "$cost" '{object:"chat.completion.chunk",choices:[],usage:{prompt_tokens:1,completion_tokens:1,cost:$k}}')
		jq -cn --arg c "$c" --arg u "$u" '[{events: [$c, $u]}]' >script.json
		rm -f port requests.jsonl
		python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
		SRV=$!
		for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
		export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
		chat "c$RANDOM" "Hello"
		run -0 hw-agent run session-main
		kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=
		got+="$(hw-session replay session-main | jq -c 'select(.kind=="model.usage.updated").payload.usage | select(.usage_id == "agent") | .accumulated_cost' | tail -1) "
	done
	cd "$PROJ"
	[ "$got" = "null null null 0.5 " ]
}
