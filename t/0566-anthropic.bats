#!/usr/bin/env bats
# The Anthropic route (HW_MODEL=anthropic/NAME): the agent through
# Anthropic's own Messages API, against a loopback stand-in
# (t/anthropic_server.py) that records each request.  A task completes
# with a reviewed action set, streamed and whole; the request carries the
# x-api-key and anthropic-version headers, the top-level system, the
# tools as input_schema and the tool results as tool_result blocks; the
# key reaches no event, export, process argument or error text, even when
# the stand-in echoes it; each malformed answer is a clear error that
# loses nothing durable; and the policy's egress check runs first.

load lib
load agent

KEY='sk-ant-MARKER-4f0c2e91b7d3'

setup() {
	agent_setup
	unset HW_API_KEY_ENV HW_API_KEY_FILE HW_CAPABILITY_TIER \
		HW_MAX_OUTPUT_TOKENS
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	export HW_MODEL=anthropic/claude-stand-in
	export HW_API_KEY_ENV=ANTHROPIC_API_KEY ANTHROPIC_API_KEY=$KEY
}
teardown() { agent_teardown; }

# stand_in SCRIPT-JSON [SUFFIX]: start the stand-in on that script; the
# route's base URL is its root, plus SUFFIX (say /v1)
stand_in() {
	printf '%s\n' "$1" >script.json
	python3 "$HW_ROOT/t/anthropic_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the stand-in did not start"; return 1; }
	export HW_BASE_URL="http://127.0.0.1:$(cat port)${2:-}"
}

# req N FILTER: jq FILTER over the Nth recorded request (0-based)
req() { jq -s -c ".[$1] | $2" requests.jsonl; }

# the set: a text block and a tool_use that appends to ran.txt
SET='{"message":{"content":[{"type":"text","text":"I will record a run."},{"type":"tool_use","id":"toolu_01","name":"terminal","input":{"summary":"Record a run","command":"echo run >> ran.txt","security_risk":"LOW"}}],"stop_reason":"tool_use","usage":{"input_tokens":120,"output_tokens":30}}}'
DONE='{"message":{"content":[{"type":"text","text":"Recorded."}],"stop_reason":"end_turn","usage":{"input_tokens":200,"output_tokens":4}}}'
MALFORMED='hw-agent: HW-AGENT-011: the model request was refused or the reply was malformed; check the model route'

leaks() { python3 "$HW_ROOT/t/leaks.py" "$KEY" "$@"; }

# no_leaks PATH...: the key, in any common form, is nowhere in the store,
# the audit export, the replay, the projection or the given paths
no_leaks() {
	hw-audit export --session session-main --output export.jsonl >/dev/null
	hw-session replay session-main >replay.jsonl
	hw-session project session-main >project.json
	run -0 leaks .heartwood export.jsonl replay.jsonl project.json "$@"
	[ -z "$output" ]
}

# task: ask, review (the set waits), approve, run to the end
task() {
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '[.lifecycle.status, [.pendingApproval.actions[].state]]')" = \
		'["waiting-for-confirmation",["awaiting-review"]]' ]
	[ ! -e ran.txt ]
	decide_directly approve
	run -0 --separate-stderr hw-agent run session-main "$@"
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded"],"Recorded."]' ]
}

# ---- a task through the Messages API ----

@test "messages: a task completes with a reviewed set through the event stream" {
	stand_in "[$SET,$DONE]"
	task
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
	[ "$(req 0 .path)" = '"/v1/messages"' ]
	hw-audit verify --session session-main >/dev/null
}

@test "messages: a task completes with whole (non-streamed) messages, base ending in /v1" {
	stand_in "[$(jq -c '. + {mode: "json"}' <<<"$SET"),$(jq -c '. + {mode: "json"}' <<<"$DONE")]" /v1
	task
	[ "$(jq -s -c 'map(.path)' requests.jsonl)" = '["/v1/messages","/v1/messages"]' ]
}

@test "messages: the request carries the headers, model, system, tools and budget" {
	stand_in "[$SET,$DONE]"
	export HW_MAX_OUTPUT_TOKENS=777
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(req 0 '[.x_api_key, .anthropic_version, .content_type, .authorization]')" = \
		"[\"$KEY\",\"2023-06-01\",\"application/json\",null]" ]
	[ "$(req 0 '.body | [.model, .stream, .max_tokens]')" = '["claude-stand-in",true,777]' ]
	# the system prompt is top-level, and no turn has the role system
	[ "$(req 0 '.body.system | type == "string" and length > 0')" = true ]
	[ "$(req 0 '[.body.messages[].role]')" = '["user"]' ]
	[ "$(req 0 '.body.messages[0].content')" = '[{"text":"record a run","type":"text"}]' ]
	# tools: name, description and input_schema, nothing OpenAI-shaped
	[ "$(req 0 '.body.tools | map(select(.name == "terminal")) | .[0] | [(.input_schema.properties.command.type), (.description | length > 0), has("type"), has("function")]')" = \
		'["string",true,false,false]' ]
	[ "$(req 0 '.body | has("stream_options") or has("tool_choice")')" = false ]
}

@test "messages: without HW_MAX_OUTPUT_TOKENS max_tokens is 4096" {
	stand_in "[$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(req 0 .body.max_tokens)" = 4096 ]
}

@test "messages: the tool call goes back as tool_use and its result as a tool_result block" {
	stand_in "[$SET,$DONE]"
	task
	m=$(req 1 .body.messages)
	[ "$(jq -c 'map(.role)' <<<"$m")" = '["user","assistant","user"]' ]
	[ "$(jq -c '.[1].content | map(.type)' <<<"$m")" = '["text","tool_use"]' ]
	[ "$(jq -c '.[1].content[1] | [.name, .input.command, (.id | test("^[A-Za-z0-9_-]+$"))]' <<<"$m")" = \
		'["terminal","echo run >> ran.txt",true]' ]
	[ "$(jq -c '.[2].content[0] | [.type, .tool_use_id]' <<<"$m")" = \
		"$(jq -c '["tool_result", .[1].content[1].id]' <<<"$m")" ]
	# the id the tool_result answers is the one the agent recorded
	[ "$(jq -r '.[1].content[1].id' <<<"$m")" = \
		"$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .payload.tool_call_id')" ]
}

@test "messages: consecutive turns of one role are merged into one" {
	stand_in "[$DONE]"
	chat c1 "record a run"
	chat c2 "and be quick"
	run -0 --separate-stderr hw-agent run session-main
	# no two turns in a row share a role, as the API requires
	[ "$(req 0 '.body.messages')" = \
		'[{"content":[{"text":"record a run","type":"text"},{"text":"and be quick","type":"text"}],"role":"user"}]' ]
}

@test "messages: usage goes into the same usage events" {
	stand_in "[$SET,$DONE]"
	task
	[ "$(hw-session replay session-main | jq -s -c 'map(select(.kind == "model.usage.updated" and .payload.usage.usage_id == "total") | .payload.usage | [.prompt_tokens, .completion_tokens, .model_name]) | last')" = \
		'[320,34,"anthropic/claude-stand-in"]' ]
}

@test "messages: text streams as the same transient records" {
	stand_in "[$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main --stream
	[ "$(tail -1 <<<"$output" | jq -r .text)" = Recorded. ]
	[ "$(jq -s 'length > 1' <<<"$output")" = true ]
}

@test "messages: a tool input streamed in pieces is assembled" {
	big=$(jq -c '.message.content[1].input.summary = "Record a run with a summary long enough to take many input_json_delta pieces"' <<<"$SET")
	stand_in "[$big,$DONE]"
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .payload.arguments.summary')" = \
		"Record a run with a summary long enough to take many input_json_delta pieces" ]
}

# ---- the key ----

@test "key: never in events, export, arguments, output or error text" {
	stand_in "[$SET,$DONE]"
	task
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	# at each request no process had the key in its arguments
	[ "$(jq -s -c 'map(.argv_hits)' requests.jsonl)" = '[0,0]' ]
	no_leaks out.txt err.txt
}

@test "key: a 401 that echoes the key is HW-AGENT-008 and leaks nothing" {
	stand_in '[{"status":401,"echo_key":true,"json":{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-008: the model provider rejected the credentials" ]
	[ "$(req 0 .x_api_key)" = "\"$KEY\"" ]
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "error.recorded") | .payload.code')" = HW-AGENT-008 ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	no_leaks out.txt err.txt
}

@test "key: an error event that echoes the key leaks nothing" {
	ev=$(jq -cn --arg k "$KEY" '{events: [{type: "message_start", message: {type: "message", content: [], usage: {input_tokens: 1, output_tokens: 1}}}, {type: "error", error: {type: "invalid_request_error", message: ("bad key " + $k)}}]}')
	stand_in "[$ev]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$MALFORMED" ]
	echo "$stderr" >err.txt
	no_leaks err.txt
}

# ---- failures lose nothing durable ----

# fails_then_recovers BAD CODE STDERR: the follow-up after the approved
# set gets BAD; the run ends with CODE and STDERR, the set's outcome is
# kept, and the next run, answered, completes without running it again
fails_then_recovers() {
	stand_in "[$SET,$1,$DONE]"
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	decide_directly approve
	run "-$2" --separate-stderr hw-agent run session-main
	[ "$stderr" = "$3" ]
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.actions[].state]')" = '["succeeded"]' ]
	hw-session replay session-main >events
	[ "$(jq -r 'select(.kind == "tool.execution.recorded") | .payload.tool_call_id' events | wc -l)" -eq 1 ]
	run -0 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["idle","Recorded."]' ]
	# the answer that completed it still carried the tool's result
	[ "$(jq -s -c '.[-1].body.messages[2].content[0].type' requests.jsonl)" = '"tool_result"' ]
	hw-audit verify --session session-main >/dev/null
}

@test "key: a 401 echoing the key mid-task is HW-AGENT-008, leaks nothing, loses nothing" {
	fails_then_recovers '{"status":401,"echo_key":true,"json":{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}}' 1 \
		"hw-agent: HW-AGENT-008: the model provider rejected the credentials"
	[ "$(jq -s -c 'map(.x_api_key == $k) | all' --arg k "$KEY" requests.jsonl)" = true ]
	no_leaks
}

@test "malformed: a truncated JSON message is HW-AGENT-011, nothing lost" {
	fails_then_recovers '{"raw":"{\"type\":\"message\",\"content\":[{\"type\":\"te","type":"application/json"}' 1 "$MALFORMED"
}

@test "malformed: an unknown block type is HW-AGENT-011, nothing lost" {
	fails_then_recovers '{"message":{"content":[{"type":"server_gadget","id":"g1"}],"stop_reason":"end_turn","usage":{}}}' 1 "$MALFORMED"
}

@test "malformed: an unknown block type in a whole message is HW-AGENT-011" {
	stand_in '[{"mode":"json","message":{"content":[{"type":"server_gadget"}],"stop_reason":"end_turn"}}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$MALFORMED" ]
}

@test "malformed: input_json_delta pieces that never form JSON are HW-AGENT-011, nothing lost" {
	bad='{"events":[{"type":"message_start","message":{"type":"message","content":[],"usage":{"input_tokens":1,"output_tokens":1}}},{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"terminal","input":{}}},{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls"}},{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":" -a"}},{"type":"content_block_stop","index":0},{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":5}},{"type":"message_stop"}]}'
	fails_then_recovers "$bad" 1 "$MALFORMED"
}

@test "malformed: tool input that is JSON but not an object is HW-AGENT-011" {
	stand_in '[{"events":[{"type":"message_start","message":{"type":"message","content":[],"usage":{}}},{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"terminal","input":{}}},{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"[1,2]"}},{"type":"content_block_stop","index":0},{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{}},{"type":"message_stop"}]}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$MALFORMED" ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .kind')" = "" ]
}

@test "malformed: a delta for a block that is not open is HW-AGENT-011" {
	stand_in '[{"events":[{"type":"message_start","message":{"type":"message","content":[],"usage":{}}},{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"x"}}]}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$MALFORMED" ]
}

@test "malformed: a message that stops with a tool block still open is HW-AGENT-011" {
	stand_in '[{"events":[{"type":"message_start","message":{"type":"message","content":[],"usage":{}}},{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"terminal","input":{}}},{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\": \"ls\"}"}},{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{}},{"type":"message_stop"}]}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$MALFORMED" ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .kind')" = "" ]
}

@test "malformed: a stream cut midway is HW-AGENT-012, nothing lost" {
	# cut after some text has streamed: not tried again, the caller decides
	fails_then_recovers "$(jq -c '. + {cut: 5}' <<<"$DONE")" 1 \
		"hw-agent: HW-AGENT-012: the model provider failed or could not be reached"
}

@test "malformed: a stream cut inside a tool block is HW-AGENT-012, no action proposed" {
	stand_in "[$(jq -c '. + {cut: 7}' <<<"$SET")]"
	chat c1 "record a run"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-012: the model provider failed or could not be reached" ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .kind')" = "" ]
}

@test "errors: an overloaded error event is retried, then HW-AGENT-012, nothing lost" {
	ov='{"events":[{"type":"message_start","message":{"type":"message","content":[],"usage":{}}},{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}]}'
	stand_in "[$SET,$ov,$ov,$DONE]"
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	decide_directly approve
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-012: the model provider failed or could not be reached" ]
	[ "$(wc -l <requests.jsonl)" -eq 3 ]
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded"],"Recorded."]' ]
	[ "$(wc -l <ran.txt)" -eq 1 ]
}

@test "errors: 529 overloaded is retried and then answered" {
	stand_in "[{\"status\":529,\"json\":{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}},$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
	[ "$(proj '.conversation[-1].content')" = '"Recorded."' ]
}

@test "errors: 429 rate_limit_error after the retry is HW-AGENT-010" {
	stand_in '[{"status":429,"json":{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-010: the model provider is limiting the request rate" ]
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
}

@test "errors: a rate_limit_error event is HW-AGENT-010, an authentication_error event 008" {
	rl='{"events":[{"type":"error","error":{"type":"rate_limit_error","message":"x"}}]}'
	stand_in "[$rl]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-010: "* ]]
}

@test "errors: an authentication_error event is HW-AGENT-008" {
	stand_in '[{"events":[{"type":"error","error":{"type":"authentication_error","message":"x"}}]}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-008: the model provider rejected the credentials" ]
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
}

@test "errors: pings and event types added later are skipped" {
	ok='{"events":[{"type":"ping"},{"type":"message_start","message":{"type":"message","content":[],"usage":{"input_tokens":3,"output_tokens":1}}},{"type":"future_event","x":1},{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}},{"type":"ping"},{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Fine."}},{"type":"content_block_stop","index":0},{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}},{"type":"message_stop"}]}'
	stand_in "[$ok]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Fine."' ]
}

# ---- the policy and the configuration ----

@test "policy: the decision is on the messages endpoint, and allowed by default" {
	stand_in "[$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	d=$(hw-session replay session-main | jq -c 'select(.kind == "model_call.decision.recorded") | .payload')
	[ "$(jq -r .decision.endpoint <<<"$d")" = "$HW_BASE_URL/v1/messages" ]
	[ "$(jq -r .decision.decision <<<"$d")" = allow ]
	[ "$(jq -r .model_profile.profile_id <<<"$d")" = anthropic/claude-stand-in ]
}

@test "policy: a denied route stops before the stand-in sees any request" {
	stand_in "[$DONE]"
	chat c1 "hello"
	printf '[policy]\nallowed_model_endpoints = "https://api.anthropic.com/v1/messages"\n' >.heartwood/config.toml
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: denied by policy 'generic-default' (rule egress-allowlist): endpoint '$HW_BASE_URL/v1/messages' is not in allowed_model_endpoints; change [policy] in .heartwood/config.toml (hw-policy(7)) or choose another route with 'hw setup'" ]
	refute test -s requests.jsonl
	# allowed, the same session goes on
	printf '[policy]\nallowed_model_endpoints = "%s/v1/messages"\ncredential_allowlist = "ANTHROPIC_API_KEY"\n' "$HW_BASE_URL" >.heartwood/config.toml
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
}

@test "route: HW_MODEL must name openai/ or anthropic/" {
	export HW_BASE_URL=http://127.0.0.1:9 HW_MODEL=claude/x
	chat c1 "hello"
	run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid HW_MODEL 'claude/x': expected openai/NAME, anthropic/NAME or chatgpt/NAME" ]
}

@test "route: hw doctor shows the provider" {
	export HW_BASE_URL=http://127.0.0.1:9
	run --separate-stderr hw doctor
	[[ "$output" == *"model anthropic/claude-stand-in at http://127.0.0.1:9 (provider anthropic: Messages API)"* ]]
	[[ "$output" != *"$KEY"* ]]
	run --separate-stderr hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .summary' <<<"$output")" = \
		"model anthropic/claude-stand-in at http://127.0.0.1:9 (provider anthropic: Messages API)" ]
}

@test "route: [model] provider must be openai or anthropic" {
	unset HW_MODEL HW_BASE_URL
	chat c1 "hello"
	printf '[model]\nprovider = "gemini"\nmodel_id = "x"\nbase_url = "http://127.0.0.1:9"\n' >.heartwood/config.toml
	run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid .heartwood/config.toml [model] provider: expected openai, anthropic or chatgpt" ]
}

@test "route: hw setup anthropic-messages saves the Messages route, which the default policy allows" {
	unset HW_MODEL HW_BASE_URL
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source anthropic-messages --model-id anthropic/claude-sonnet-4-5
	[ "$(jq -c '[.source, .model, .base_url, .api_key_env]' <<<"$output")" = \
	    '["anthropic-messages","anthropic/claude-sonnet-4-5","https://api.anthropic.com/v1","ANTHROPIC_API_KEY"]' ]
	grep -qx 'provider = "anthropic"' .heartwood/config.toml
	grep -qx 'model_id = "claude-sonnet-4-5"' .heartwood/config.toml
	# no custom-api policy: the default lists Anthropic's messages endpoint
	refute grep -q '^\[policy\]' .heartwood/config.toml
	run -0 --separate-stderr hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .summary' <<<"$output")" = \
		"model anthropic/claude-sonnet-4-5 at https://api.anthropic.com/v1 (provider anthropic: Messages API)" ]
	[ "$(jq -c '[.checks[] | select(.check_id == "policy") | .status]' <<<"$output")" = '["pass"]' ]
	[[ "$output" != *"$KEY"* ]]
}

@test "route: the saved route with provider anthropic is the one confirmed, not the openai one" {
	unset HW_MODEL HW_BASE_URL
	hw setup --non-interactive --yes --model-source anthropic-messages \
	    --model-id claude-x >/dev/null 2>&1
	# the project changes the provider: that route was not confirmed
	sed -i '/^provider = /d' .heartwood/config.toml
	chat c1 "hello"
	run -2 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"was not confirmed by you on this machine"* ]]
}
