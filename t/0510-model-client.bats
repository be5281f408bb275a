#!/usr/bin/env bats
# The model client (lib/agent/model.c) against a loopback stand-in server
# (t/sse_server.py), through the test entry point t/unit/model_cli: what
# the request carries (the model name without "openai/", streaming, the
# tools, the budget, the key or "local-model"), streamed and whole
# replies, which failures are retried and how often, the code and fixed
# sentence of each failure, and that the key never reaches the output.
#
# Every server binds 127.0.0.1 on a free port and logs each request to
# requests.jsonl in the test's directory.  Waits between retries are cut
# to 10 ms with HW_MODEL_RETRY_WAIT_MS, except where a test measures them.
# HW_MODEL_CLI=PATH runs another build of model_cli (a sanitizer build,
# say) instead of making t/unit/model_cli.

load lib

MARKER=sk-MARKER-123

setup_file() {
	if [ -z "${HW_MODEL_CLI:-}" ]; then
		make -s -C "$HW_ROOT" t/unit/model_cli >/dev/null
	fi
	HELLO_SRV=$(jq -cn --arg a "$(chunk '{"role":"assistant","content":"Hello"}')" \
		--arg b "$(chunk '{"content":" world"}')" \
		--arg c "$(chunk '{}' stop)" \
		'{events:[$a,$b,$c,"{\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":2}}"]}')
	export HELLO_SRV
}

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	CLI=${HW_MODEL_CLI:-$HW_ROOT/t/unit/model_cli}
	SRV=
	unset HW_API_KEY_ENV HW_MAX_INPUT_TOKENS HW_MAX_OUTPUT_TOKENS \
		HW_MODEL_TIMEOUT_MS
	export HW_MODEL=openai/test-model HW_MODEL_RETRY_WAIT_MS=10
	export TEST_KEY=$MARKER
	echo '[{"role":"user","content":"hello"}]' >messages.json
	echo '[{"type":"function","function":{"name":"think","description":"Think.","parameters":{"type":"object","properties":{"thought":{"type":"string"}},"required":["thought"]}}}]' >tools.json
}

teardown() {
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null || true
		wait "$SRV" 2>/dev/null || true
	fi
	cd / && rm -rf "$PROJ"
}

# serve JSON: start the server with that script; sets HW_BASE_URL
serve() {
	local i
	printf '%s\n' "$1" >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err &
	SRV=$!
	for ((i = 0; i < 100; i++)); do
		[ -s port ] && break
		sleep 0.05
	done
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
}

# requests: how many requests the server got
requests() { if [ -f requests.jsonl ]; then wc -l <requests.jsonl; else echo 0; fi; }

# chunk JSON-DELTA [FINISH]: a chat.completion.chunk event for choice 0
chunk() {
	jq -cn --argjson d "$1" --arg f "${2:-}" \
		'{object:"chat.completion.chunk",choices:[{index:0,delta:$d,finish_reason:(if $f == "" then null else $f end)}]}'
}

# hello: a streamed reply "Hello world" with a usage-only chunk, vLLM-style
hello() { printf '%s\n' "$HELLO_SRV"; }

HELLO='{"content":"Hello world","finish":"stop","tool_calls":[],"usage":{"cache_read_tokens":null,"completion_tokens":2,"prompt_tokens":9,"reasoning_tokens":null}}'

# no_marker: the key appears in neither output of the last run
no_marker() {
	[[ "$output" != *"$MARKER"* ]]
	[[ "${stderr:-}" != *"$MARKER"* ]]
}

@test "the request: model NAME, streaming with usage, tools, max_tokens, the key as bearer" {
	serve "[$(hello)]"
	export HW_API_KEY_ENV=TEST_KEY HW_MAX_OUTPUT_TOKENS=512
	run --separate-stderr "$CLI" --complete messages.json tools.json
	[ "$status" -eq 0 ]
	[ "$output" = "{\"deltas\":2,\"reply\":$HELLO}" ]
	no_marker
	[ "$(requests)" -eq 1 ]
	run jq -c '[.method, .path, .authorization, .content_type] ' requests.jsonl
	[ "$output" = '["POST","/v1/chat/completions","Bearer sk-MARKER-123","application/json"]' ]
	run jq -c '.body | [.model, .stream, .stream_options, .max_tokens, .messages, (.tools | length), .tools[0].function.name]' requests.jsonl
	[ "$output" = '["test-model",true,{"include_usage":true},512,[{"content":"hello","role":"user"}],1,"think"]' ]
}

@test "a credential-free route sends Bearer local-model, and no tools or max_tokens when there are none" {
	serve "[$(hello)]"
	echo '[]' >empty.json
	run --separate-stderr "$CLI" --complete messages.json empty.json
	[ "$status" -eq 0 ]
	run jq -c '[.authorization, (.body | has("tools")), (.body | has("max_tokens"))]' requests.jsonl
	[ "$output" = '["Bearer local-model",false,false]' ]
}

@test "a slash-separated model name keeps everything after openai/" {
	serve "[$(hello)]"
	HW_MODEL=openai/Qwen/Qwen3-8B run "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$(jq -r .body.model requests.jsonl)" = Qwen/Qwen3-8B ]
}

@test "a stream written one byte at a time gives the same reply" {
	serve "[$(hello | jq -c '.split = 1')]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$output" = "{\"deltas\":2,\"reply\":$HELLO}" ]
}

@test "streamed tool calls are stitched by index" {
	local a b c d
	a=$(chunk '{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"think","arguments":""}}]}')
	b=$(chunk '{"tool_calls":[{"index":1,"id":"call_2","type":"function","function":{"name":"finish","arguments":"{\"message\":"}}]}')
	c=$(chunk '{"tool_calls":[{"index":0,"function":{"arguments":"{\"thought\":\"x\"}"}},{"index":1,"function":{"arguments":"\"done\"}"}}]}')
	d=$(chunk '{}' tool_calls)
	serve "[$(jq -cn --arg a "$a" --arg b "$b" --arg c "$c" --arg d "$d" '{events:[$a,$b,$c,$d]}')]"
	run --separate-stderr "$CLI" --complete messages.json tools.json
	[ "$status" -eq 0 ]
	[ "$(jq -c '.reply.tool_calls' <<<"$output")" = '[{"arguments":"{\"thought\":\"x\"}","id":"call_1","name":"think"},{"arguments":"{\"message\":\"done\"}","id":"call_2","name":"finish"}]' ]
	[ "$(jq -r '.reply.finish' <<<"$output")" = tool_calls ]
}

@test "an application/json reply is read as one chat.completion" {
	serve '[{"json":{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Whole."},"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1}}}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$output" = '{"deltas":1,"reply":{"content":"Whole.","finish":"stop","tool_calls":[],"usage":{"cache_read_tokens":null,"completion_tokens":1,"prompt_tokens":4,"reasoning_tokens":null}}}' ]
}

@test "a stream that ends after its finish_reason without [DONE] is accepted" {
	serve "[$(hello | jq -c '.done = false')]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$output" = "{\"deltas\":2,\"reply\":$HELLO}" ]
}

@test "429 then success: retried once and answered" {
	serve "[{\"status\":429,\"json\":{\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}},$(hello)]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$output" = "{\"deltas\":2,\"reply\":$HELLO}" ]
	[ "$(requests)" -eq 2 ]
}

@test "429 waits for Retry-After before trying again" {
	unset HW_MODEL_RETRY_WAIT_MS
	serve "[{\"status\":429,\"headers\":{\"Retry-After\":\"2\"},\"json\":{}},$(hello)]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	run jq -s '.[1].time - .[0].time >= 1.9' requests.jsonl
	[ "$output" = true ]
}

@test "429 on every attempt is HW-AGENT-010 after the retries" {
	serve '[{"status":429,"json":{"error":{"type":"rate_limit_error"}}}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 69 ]
	[ "$output" = '{"code":"HW-AGENT-010"}' ]
	[ "$stderr" = "model_cli: the model provider is limiting the request rate" ]
	[ "$(requests)" -eq 2 ]
}

@test "429 insufficient_quota is HW-AGENT-009 and not retried" {
	serve '[{"status":429,"json":{"error":{"code":"insufficient_quota","type":"insufficient_quota","message":"You exceeded your current quota"}}}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 1 ]
	[ "$output" = '{"code":"HW-AGENT-009"}' ]
	[ "$stderr" = "model_cli: the model provider reports that the quota is exhausted" ]
	[ "$(requests)" -eq 1 ]
}

@test "401 is HW-AGENT-008 with the fixed sentence, not retried, and the key is nowhere" {
	serve "[{\"status\":401,\"json\":{\"error\":{\"message\":\"Incorrect API key provided: $MARKER\",\"code\":\"invalid_api_key\"}}}]"
	export HW_API_KEY_ENV=TEST_KEY
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 1 ]
	[ "$output" = '{"code":"HW-AGENT-008"}' ]
	[ "$stderr" = "model_cli: the model provider rejected the credentials" ]
	no_marker
	[ "$(requests)" -eq 1 ]
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $MARKER" ]
}

@test "403 is HW-AGENT-008" {
	serve '[{"status":403,"json":{"error":{"message":"forbidden"}}}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-008"}' ]
	[ "$(requests)" -eq 1 ]
}

@test "400, 404 and 422 are HW-AGENT-011 and not retried" {
	local s
	for s in 400 404 422; do
		serve "[{\"status\":$s,\"json\":{\"error\":{\"message\":\"no such model $MARKER\"}}}]"
		run --separate-stderr "$CLI" --complete messages.json
		[ "$status" -eq 65 ]
		[ "$output" = '{"code":"HW-AGENT-011"}' ]
		[ "$stderr" = "model_cli: the model request was refused or the reply was malformed; check the model route" ]
		[ "$(requests)" -eq 1 ]
		kill "$SRV"
		wait "$SRV" 2>/dev/null || true
		SRV=
		rm requests.jsonl port
	done
}

@test "a redirect is not followed: HW-AGENT-011" {
	serve '[{"status":307,"headers":{"Location":"http://127.0.0.1:9/v1/chat/completions"},"json":{}}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-011"}' ]
	[ "$(requests)" -eq 1 ]
}

@test "500 three times with two retries is HW-AGENT-012 after three requests" {
	serve '[{"status":500,"json":{"error":{"message":"internal"}}}]'
	run --separate-stderr "$CLI" --retries 2 --complete messages.json
	[ "$status" -eq 69 ]
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
	[ "$stderr" = "model_cli: the model provider failed or could not be reached" ]
	[ "$(requests)" -eq 3 ]
}

@test "a loopback route retries once: 500 twice is two requests" {
	serve '[{"status":503,"raw":"busy","type":"text/plain"}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
	[ "$(requests)" -eq 2 ]
}

@test "500 then success is answered" {
	serve "[{\"status\":500,\"json\":{}},$(hello)]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$(requests)" -eq 2 ]
}

@test "a stream dropped after content is HW-AGENT-012 and not retried" {
	local a
	a=$(chunk '{"content":"partial"}')
	serve "[$(jq -cn --arg a "$a" '{events:[$a],done:false}')]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 69 ]
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
	[ "$(requests)" -eq 1 ]
}

@test "a transfer cut before any content is retried, then HW-AGENT-012" {
	serve '[{"events":[],"done":false,"drop":"length"}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
	[ "$(requests)" -eq 2 ]
}

@test "a cut transfer is retried and the retry answers" {
	serve "[{\"events\":[],\"done\":false,\"drop\":\"length\"},$(hello)]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$output" = "{\"deltas\":2,\"reply\":$HELLO}" ]
}

@test "malformed JSON in a chunk is HW-AGENT-011, not retried" {
	serve '[{"events":["{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}","{\"choices\":[{\"index\":0,"]}]'
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 65 ]
	[ "$output" = '{"code":"HW-AGENT-011"}' ]
	[ "$(requests)" -eq 1 ]
}

@test "a stream over 32 MiB is HW-AGENT-011" {
	serve "[$(hello | jq -c '.pad = 33554432')]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-011"}' ]
}

@test "a server slower than the timeout is HW-AGENT-012 after one retry" {
	# had either attempt waited for the answer, the call would succeed
	export HW_MODEL_TIMEOUT_MS=300
	serve "[$(hello | jq -c '.delay = 3')]"
	run --separate-stderr "$CLI" --complete messages.json
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
	[ "$(requests)" -eq 2 ]
}

@test "nothing listening is HW-AGENT-012" {
	export HW_BASE_URL=http://127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')/v1
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 69 ]
	[ "$output" = '{"code":"HW-AGENT-012"}' ]
}

@test "the route: bad values are usage errors that name the variable, not the key or URL" {
	HW_BASE_URL="https://user:$MARKER@api.example.com/v1" run --separate-stderr "$CLI" --route
	[ "$status" -eq 2 ]
	[ "$stderr" = "model_cli: invalid HW_BASE_URL: it must not contain user information" ]
	no_marker
	HW_BASE_URL=http://127.0.0.1:1/v1 HW_API_KEY_ENV=NOT_SET_ANYWHERE run --separate-stderr "$CLI" --route
	[ "$status" -eq 2 ]
	[ "$stderr" = "model_cli: invalid HW_API_KEY_ENV 'NOT_SET_ANYWHERE': that variable is not set or is empty" ]
	HW_BASE_URL=https://api.example.com/v1/ HW_API_KEY_ENV=TEST_KEY run --separate-stderr "$CLI" --route
	[ "$status" -eq 0 ]
	[ "$output" = '{"base_url":"https://api.example.com/v1","key_env":"TEST_KEY","loopback":false,"max_input_tokens":0,"max_output_tokens":0,"model":"openai/test-model","retries":2,"timeout_s":180}' ]
	no_marker
}

@test "a loopback route ignores proxies from the environment" {
	serve "[$(hello)]"
	export http_proxy=http://127.0.0.1:9 HTTP_PROXY=http://127.0.0.1:9 all_proxy=http://127.0.0.1:9
	run --separate-stderr "$CLI" --complete messages.json
	[ "$status" -eq 0 ]
	[ "$(requests)" -eq 1 ]
}
