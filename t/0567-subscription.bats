#!/usr/bin/env bats
# The ChatGPT subscription sign-in (hw-model subscription) and the
# Responses API route it unlocks (HW_MODEL=chatgpt/NAME), against a
# loopback authorization server and Responses endpoint written for these
# tests (t/subscription_server.py, 127.0.0.1 only, recording each
# request): the device flow (pending, slow_down, expired, denied), the
# owner-only token file outside the project and its refusals, refresh,
# sign-out, a reviewed task streamed and whole, a refresh-token expiry
# mid-session, and the tokens in no file of the project, argument or
# output, even when the stand-in echoes them.

load lib
load agent

AT='at-MARKER-5b2e77c0d1a94f3e'
RT='rt-MARKER-0c9d41e8a27b6f15'
AT2='at-MARKER-9f3a60d2b1c84e07'

setup() {
	agent_setup
	unset HW_API_KEY_ENV HW_API_KEY_FILE HW_CAPABILITY_TIER \
		HW_MAX_OUTPUT_TOKENS HW_SUBSCRIPTION_ISSUER
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	export HW_SUBSCRIPTION_POLL_MS=10
	TOKENS=$XDG_CONFIG_HOME/heartwood/credentials/openai-subscription.json
}
teardown() { agent_teardown; }

# granted [ACCESS] [TTL]: a token endpoint's answer
granted() {
	jq -cn --arg a "${1:-$AT}" --arg r "$RT" --argjson t "${2:-3600}" \
		'{json: {access_token: $a, refresh_token: $r, token_type: "Bearer", expires_in: $t}}'
}
pending() { echo '{"status":400,"json":{"error":"authorization_pending"}}'; }

# stand_in SCRIPT-JSON: start the stand-in; the issuer and the route's
# base URL point at it
stand_in() {
	subscription_stand_in "$1" || return 1
	export HW_BASE_URL="$SUB_URL/backend-api/codex"
}
# script JSON: rewrite the stand-in's script (read at each request), by
# rename, so that a request never reads it half written
script() { printf '%s\n' "$1" >script.json.new && mv script.json.new script.json; }

# req N FILTER: jq FILTER over the Nth recorded request (0-based)
req() { jq -s -c ".[$1] | $2" requests.jsonl; }

leaks() { python3 "$HW_ROOT/t/leaks.py" "$1" "${@:2}"; }
# no_leaks PATH...: no token in the store, exports or the given paths
no_leaks() {
	local k
	for k in "$AT" "$RT" "$AT2" dev-code-1; do
		run -0 leaks "$k" .heartwood "$@"
		[ -z "$output" ]
	done
}

# last: the last line of stderr (the code shown comes first)
last() { printf '%s\n' "${stderr##*$'\n'}"; }

# sign_in: the device flow against a stand-in that grants at once
sign_in() {
	run -0 --separate-stderr hw-model subscription sign-in
	[ "$(tail -1 <<<"$output" | jq -r .status)" = complete ]
}

# ---- the device flow ----

@test "sign-in: the device flow shows the code, polls and stores the tokens" {
	stand_in "{\"poll\":[$(pending),$(pending),$(granted)]}"
	run -0 --separate-stderr hw-model subscription sign-in
	[ "$(head -1 <<<"$output" | jq -c '[.connection_id, .status, .user_code, .verification_url, .poll_interval_seconds]')" = \
		"[\"openai-subscription\",\"pending\",\"WXYZ-1234\",\"http://127.0.0.1:$(cat port)/device\",1]" ]
	[ "$(tail -1 <<<"$output" | jq -r .status)" = complete ]
	[[ $stderr == *"open http://127.0.0.1:$(cat port)/device"*"enter the code WXYZ-1234"* ]]
	# the code request, then three polls with the device grant
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device","poll","poll","poll"]' ]
	[ "$(req 0 '.form | [(.client_id | length > 0), .scope]')" = '[true,"openid profile email offline_access"]' ]
	[ "$(req 1 '.form | [.grant_type, .device_code, (.client_id | length > 0)]')" = \
		'["urn:ietf:params:oauth:grant-type:device_code","dev-code-1",true]' ]
	[ "$(jq -c '[.access_token, .refresh_token, .schema_version, .vendor, (.expires_at > now)]' "$TOKENS")" = \
		"[\"$AT\",\"$RT\",\"heartwood.subscription-tokens.v1\",\"openai\",true]" ]
	# no token was in any process's arguments, nor in the output
	[ "$(jq -s -c 'map(.argv_hits) | add' requests.jsonl)" = 0 ]
	[[ $output != *MARKER* && $stderr != *MARKER* ]]
}

@test "sign-in: the token file is owner-only, outside the project, written atomically" {
	stand_in "{\"poll\":[$(granted)]}"
	sign_in
	[ "$(stat -c %a "$TOKENS")" = 600 ]
	[ "$(stat -c %a "${TOKENS%/*}")" = 700 ]
	[ "$(stat -c %u "$TOKENS")" = "$(id -u)" ]
	[ -z "$(ls -A "${TOKENS%/*}" | grep -v '^openai-subscription.json$')" ]
	no_leaks
}

@test "sign-in: slow_down adds five seconds to the interval" {
	stand_in "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"slow_down\"}},$(pending),$(granted)]}"
	# a second lasts 10 ms: the polls after slow_down are 6 "seconds" apart
	sign_in
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device","poll","poll","poll"]' ]
	[ "$(jq -s '.[2].t - .[1].t >= 0.058 and .[3].t - .[2].t >= 0.058' requests.jsonl)" = true ]
}

@test "sign-in: an expired code is its own error, and nothing is stored" {
	stand_in "{\"poll\":[$(pending),{\"status\":400,\"json\":{\"error\":\"expired_token\",\"error_description\":\"desc-MARKER\"}}]}"
	run -1 --separate-stderr hw-model subscription sign-in
	[ "$(last)" = "hw-model: the sign-in code expired before it was approved: sign in again" ]
	[ ! -e "$TOKENS" ]
}

@test "sign-in: a code past its expires_in is not polled again" {
	stand_in '{"device":[{"json":{"device_code":"dev-code-1","user_code":"A-1","verification_uri":"https://example.invalid/device","expires_in":1,"interval":200}}],"poll":[{"status":400,"json":{"error":"authorization_pending"}}]}'
	export HW_SUBSCRIPTION_POLL_MS=1000
	run -1 --separate-stderr timeout 30 hw-model subscription sign-in
	[ "$(last)" = "hw-model: the sign-in code expired before it was approved: sign in again" ]
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device"]' ]
}

@test "sign-in: access denied is its own error, and nothing is stored" {
	stand_in "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"access_denied\"}}]}"
	run -1 --separate-stderr hw-model subscription sign-in
	[ "$(last)" = "hw-model: the sign-in was denied at the verification page" ]
	[ ! -e "$TOKENS" ]
}

@test "sign-in: another refusal names only its HTTP status, never the server's text" {
	stand_in '{"poll":[{"status":401,"json":{"error":"invalid_client","error_description":"echo-MARKER"}}]}'
	run -1 --separate-stderr hw-model subscription sign-in
	[ "$(last)" = "hw-model: the ChatGPT authorization server refused the sign-in (HTTP 401)" ]
}

@test "sign-in: a malformed code answer is refused before anything is shown" {
	stand_in '{"device":[{"json":{"device_code":"d","user_code":"A-1","verification_uri":"javascript:alert(1)","expires_in":600}}]}'
	run -65 --separate-stderr hw-model subscription sign-in
	[ "$stderr" = "hw-model: the ChatGPT authorization server's answer is malformed" ]
	[ -z "$output" ]
}

@test "sign-in: a plain-http issuer off loopback is refused" {
	export HW_SUBSCRIPTION_ISSUER=http://auth.example.com
	run -2 --separate-stderr hw-model subscription sign-in
	[ "$stderr" = "hw-model: invalid HW_SUBSCRIPTION_ISSUER: expected an https URL, or http on loopback, without user information, query or fragment" ]
}

@test "sign-in: an issuer that cannot be reached is 69" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	run -69 --separate-stderr hw-model subscription sign-in
	[ "$stderr" = "hw-model: the ChatGPT authorization server could not be reached" ]
}

# ---- the token file's guards ----

@test "tokens: a token file others may read is refused" {
	stand_in "{\"poll\":[$(granted)]}"
	sign_in
	chmod 640 "$TOKENS"
	run -65 --separate-stderr hw-model subscription status
	[ "$stderr" = "hw-model: refusing '$TOKENS': others may read or write it (mode 0640; want 0600)" ]
}

@test "tokens: a credentials directory others may enter is refused" {
	stand_in "{\"poll\":[$(granted)]}"
	sign_in
	chmod 711 "${TOKENS%/*}"
	run -65 --separate-stderr hw-model subscription status
	[ "$stderr" = "hw-model: refusing '${TOKENS%/*}': others may enter it (mode 0711; want 0700)" ]
	# and no sign-in writes into it
	run -65 --separate-stderr hw-model subscription sign-in
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device","poll"]' ]
}

@test "tokens: a token file that is a symbolic link is neither read nor written through" {
	stand_in "{\"poll\":[$(granted)]}"
	mkdir -p -m 700 "${TOKENS%/*}"
	echo '{}' >elsewhere.json
	ln -s "$PWD/elsewhere.json" "$TOKENS"
	run -65 --separate-stderr hw-model subscription status
	[ "$stderr" = "hw-model: refusing '$TOKENS': it is a symbolic link" ]
	run -65 --separate-stderr hw-model subscription sign-in
	[ "$stderr" = "hw-model: refusing '$TOKENS': it is a symbolic link" ]
	[ "$(cat elsewhere.json)" = '{}' ]
}

@test "tokens: a credentials directory that is a symbolic link is refused" {
	stand_in "{\"poll\":[$(granted)]}"
	mkdir -p "$XDG_CONFIG_HOME/heartwood" -m 700 real
	ln -s "$PWD/real" "${TOKENS%/*}"
	run -65 --separate-stderr hw-model subscription sign-in
	[ "$stderr" = "hw-model: refusing '${TOKENS%/*}': it is a symbolic link" ]
	[ -z "$(ls -A real)" ]
}

@test "tokens: a token file of another user is refused" {
	[ "$(id -u)" = 0 ] || skip "needs root to give the file away"
	stand_in "{\"poll\":[$(granted)]}"
	sign_in
	chown 65534 "$TOKENS"
	run -65 --separate-stderr hw-model subscription status
	[ "$stderr" = "hw-model: refusing '$TOKENS': owned by uid 65534, not by you" ]
}

@test "tokens: a file that is not a token file is refused without echoing it" {
	mkdir -p -m 700 "${TOKENS%/*}"
	printf '{"access_token":"x-MARKER"}\n' >"$TOKENS"
	chmod 600 "$TOKENS"
	run -65 --separate-stderr hw-model subscription status
	[ "$stderr" = "hw-model: refusing '$TOKENS': not a token file of heartwood (heartwood.subscription-tokens.v1); sign in again" ]
}

# ---- status and sign-out ----

@test "status and sign-out: signed in, then out, then out again" {
	stand_in "{\"poll\":[$(granted)]}"
	run -0 --separate-stderr hw-model subscription status
	[ "$(jq -c '[.status, .credential_reference]' <<<"$output")" = '["signed-out","subscription:openai"]' ]
	sign_in
	run -0 --separate-stderr hw-model subscription status
	[ "$(jq -c '[.status, .access_token_expired]' <<<"$output")" = '["signed-in",false]' ]
	[[ $output != *MARKER* ]]
	run -0 --separate-stderr hw-model subscription sign-out
	[ "$stderr" = "hw-model: signed out of ChatGPT" ]
	[ ! -e "$TOKENS" ]
	run -0 --separate-stderr hw-model subscription sign-out
	[ "$stderr" = "hw-model: not signed in to ChatGPT" ]
	run -0 --separate-stderr hw-model subscription status
	[ "$(jq -r .status <<<"$output")" = signed-out ]
}

@test "sign-out: a token path that is a link is removed, its target kept" {
	mkdir -p -m 700 "${TOKENS%/*}"
	echo keep >target
	ln -s "$PWD/target" "$TOKENS"
	run -0 --separate-stderr hw-model subscription sign-out
	[ ! -L "$TOKENS" ]
	[ "$(cat target)" = keep ]
}

@test "subscription: usage errors" {
	run -2 --separate-stderr hw-model subscription
	[ "$stderr" = "usage: hw-model subscription sign-in|status|sign-out" ]
	run -2 --separate-stderr hw-model subscription sign-up
	[ "$stderr" = "usage: hw-model subscription sign-in|status|sign-out" ]
	run -0 hw-model subscription --help
	[ "$output" = "usage: hw-model subscription sign-in|status|sign-out" ]
}

# ---- the Responses route ----

# the set: a message and a function call that appends to ran.txt
SET='{"response":{"output":[{"type":"message","content":[{"type":"output_text","text":"I will record a run."}]},{"type":"function_call","call_id":"call_01","name":"terminal","arguments":"{\"summary\":\"Record a run\",\"command\":\"echo run >> ran.txt\",\"security_risk\":\"LOW\"}"}],"usage":{"input_tokens":120,"output_tokens":30}}}'
DONE='{"response":{"output":[{"type":"message","content":[{"type":"output_text","text":"Recorded."}]}],"usage":{"input_tokens":200,"output_tokens":4}}}'
EXPIRED="hw-agent: HW-AGENT-008: the ChatGPT sign-in has expired or was revoked: sign in again with 'hw-model subscription sign-in'"

# route SCRIPT-JSON: the stand-in with SCRIPT's responses, signed in
route() {
	stand_in "{\"poll\":[$(granted)],\"responses\":$1}"
	sign_in
	export HW_MODEL=chatgpt/gpt-stand-in
}
# responses FILTER: jq FILTER over the Responses requests, as an array
responses() { jq -s -c "map(select(.kind == \"responses\")) | $1" requests.jsonl; }

# propose: ask; the set waits for review
propose() {
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '[.lifecycle.status, [.pendingApproval.actions[].state]]')" = \
		'["waiting-for-confirmation",["awaiting-review"]]' ]
	[ ! -e ran.txt ]
}
# task: propose, approve, run to the end
task() {
	propose
	decide_directly approve
	run -0 --separate-stderr hw-agent run session-main "$@"
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded"],"Recorded."]' ]
}
# expire: the saved access token has expired (the file stays 0600)
expire() {
	jq -c '.expires_at = 1000' "$TOKENS" >t.json
	cat t.json >"$TOKENS"
	rm t.json
}

@test "responses: a task completes with a reviewed set through the event stream" {
	route "[$SET,$DONE]"
	task
	[ "$(responses 'map(.path)')" = '["/backend-api/codex/responses","/backend-api/codex/responses"]' ]
	[ "$(responses 'map(.authorization) | unique')" = "[\"Bearer $AT\"]" ]
	[ "$(responses 'map(.accept) | unique')" = '["text/event-stream"]' ]
	hw-audit verify --session session-main >/dev/null
}

# jwt CLAIMS-JSON: an unsigned id_token carrying CLAIMS
jwt() {
	local b
	b=$(printf '%s' "$1" | base64 -w0 | tr '+/' '-_' | tr -d '=')
	printf 'eyJhbGciOiJub25lIn0.%s.sig' "$b"
}

@test "responses: the account id of the sign-in's id_token goes with each call, and survives a refresh" {
	id=$(jwt '{"https://api.openai.com/auth":{"chatgpt_account_id":"acct-7f3e_91"}}')
	stand_in "{\"poll\":[$(granted | jq -c --arg i "$id" '.json.id_token = $i')],\"responses\":[$SET,$DONE]}"
	sign_in
	[ "$(jq -r .account_id "$TOKENS")" = acct-7f3e_91 ]
	export HW_MODEL=chatgpt/gpt-stand-in
	expire
	script "{\"refresh\":[$(granted "$AT2")],\"responses\":[$SET,$DONE]}"
	task
	[ "$(responses 'map(.account) | unique')" = '["acct-7f3e_91"]' ]
	[ "$(jq -r .account_id "$TOKENS")" = acct-7f3e_91 ]
}

@test "responses: an id_token that is malformed, or names no plain account id, sends no account" {
	for claims in '{"https://api.openai.com/auth":{"chatgpt_account_id":"a b"}}' \
	    '{"https://api.openai.com/auth":{}}' '{"sub":"x"}' 'not json' dots; do
		if [ -n "${SRV:-}" ]; then kill "$SRV"; wait "$SRV" || true; fi
		rm -f "$TOKENS" requests.jsonl port
		id=$(jwt "$claims")
		[ "$claims" != dots ] || id=no-dots
		stand_in "{\"poll\":[$(granted | jq -c --arg i "$id" '.json.id_token = $i')],\"responses\":[$SET,$DONE]}"
		sign_in
		[ "$(jq -r '.account_id // "none"' "$TOKENS")" = none ]
	done
	export HW_MODEL=chatgpt/gpt-stand-in
	task
	[ "$(responses 'map(.account) | unique')" = '[null]' ]
}

@test "responses: a task completes with whole (non-streamed) responses" {
	route "[$(jq -c '. + {mode: "json"}' <<<"$SET"),$(jq -c '. + {mode: "json"}' <<<"$DONE")]"
	task
	[ "$(responses length)" = 2 ]
}

@test "responses: the request: instructions, input items, function tools" {
	route "[$SET,$DONE]"
	export HW_MAX_OUTPUT_TOKENS=777
	task
	b=$(responses '.[1].body')
	[ "$(jq -c '[.model, .stream, .store, .parallel_tool_calls, .tool_choice, .max_output_tokens]' <<<"$b")" = \
		'["gpt-stand-in",true,false,false,"auto",777]' ]
	[ "$(jq '.instructions | type == "string" and length > 0' <<<"$b")" = true ]
	[ "$(jq -c '.input | map(.type)' <<<"$b")" = '["message","message","function_call","function_call_output"]' ]
	[ "$(jq -c '.input[0]' <<<"$b")" = '{"content":[{"text":"record a run","type":"input_text"}],"role":"user","type":"message"}' ]
	[ "$(jq -c '.input[1] | [.role, .content[0].type, .content[0].text]' <<<"$b")" = '["assistant","output_text","I will record a run."]' ]
	id=$(hw-session replay session-main | jq -r 'select(.kind == "tool_call.proposed") | .payload.tool_call_id')
	[ "$(jq -c '.input[2] | [.call_id, .name, (.arguments | fromjson | .command)]' <<<"$b")" = "[\"$id\",\"terminal\",\"echo run >> ran.txt\"]" ]
	[ "$(jq -c '.input[3] | [.call_id, (.output | type)]' <<<"$b")" = "[\"$id\",\"string\"]" ]
	[ "$(jq -c '.tools | map(select(.name == "terminal")) | .[0] | [.type, .parameters.properties.command.type, .strict, has("function")]' <<<"$b")" = \
		'["function","string",false,false]' ]
	[ "$(jq -c 'has("messages")' <<<"$b")" = false ]
}

@test "responses: usage goes into the same usage events" {
	route "[$SET,$DONE]"
	task
	[ "$(hw-session replay session-main | jq -s -c 'map(select(.kind == "model.usage.updated" and .payload.usage.usage_id == "total") | .payload.usage | [.prompt_tokens, .completion_tokens, .model_name]) | last')" = \
		'[320,34,"chatgpt/gpt-stand-in"]' ]
}

@test "responses: text streams as the same transient records" {
	route "[$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main --stream
	[ "$(tail -1 <<<"$output" | jq -r .text)" = Recorded. ]
	[ "$(jq -s 'length > 1' <<<"$output")" = true ]
}

@test "responses: an error event is classified by its code, never its text" {
	route "[{\"events\":[{\"type\":\"response.created\",\"response\":{}},{\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow down $AT\"}]}]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-010: the model provider is limiting the request rate" ]
	echo "$stderr" >err.txt
	no_leaks err.txt
}

@test "responses: arguments for no announced call are malformed (011), nothing durable lost" {
	route '[{"events":[{"type":"response.function_call_arguments.delta","output_index":3,"delta":"{}"}]}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: the model request was refused or the reply was malformed; check the model route" ]
	[ "$(proj '[.conversation[0].content]')" = '["hello"]' ]
}

@test "responses: function arguments that are not an object are malformed" {
	bad=$(jq -c '.response.output[1].arguments = "[1,2]"' <<<"$SET")
	route "[$bad]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$(proj '[.actions | length]')" = '[0]' ]
}

@test "responses: a cut stream is transient (012)" {
	route "[$(jq -c '. + {cut: 3}' <<<"$SET")]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-012: the model provider failed or could not be reached" ]
}

# ---- tokens on the route ----

@test "tokens: never in events, export, arguments, output or error text" {
	route "[$SET,$DONE]"
	task
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	[ "$(jq -s -c 'map(.argv_hits) | add' requests.jsonl)" = 0 ]
	hw-audit export --session session-main --output export.jsonl >/dev/null
	hw-session replay session-main >replay.jsonl
	hw-session project session-main >project.json
	no_leaks out.txt err.txt export.jsonl replay.jsonl project.json
}

@test "tokens: a 401 that echoes the token, and a refused refresh, leak nothing" {
	route '[{"status":401,"echo_token":true,"json":{"error":{"type":"invalid_request_error","code":"token_expired","message":"bad token"}}}]'
	script '{"refresh":[{"status":400,"json":{"error":"invalid_grant","error_description":"no"}}],"responses":[{"status":401,"echo_token":true,"json":{"error":{"code":"token_expired","message":"bad token"}}}]}'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$EXPIRED" ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind == "error.recorded") | .payload.code')" = HW-AGENT-008 ]
	# the refresh carried the refresh token in its body, not its URL
	[ "$(jq -s -c 'map(select(.kind == "refresh")) | .[0] | [.path, .form.grant_type, .form.refresh_token]' requests.jsonl)" = \
		"[\"/oauth/token\",\"refresh_token\",\"$RT\"]" ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	hw-audit export --session session-main --output export.jsonl >/dev/null
	no_leaks out.txt err.txt export.jsonl
}

@test "tokens: a 400 that echoes the token is 011 and leaks nothing" {
	route '[{"status":400,"echo_token":true,"json":{"error":{"type":"invalid_request_error","message":"bad"}}}]'
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	echo "$stderr" >err.txt
	no_leaks err.txt
}

@test "tokens: a 401 is refreshed once and the call goes on with the new token" {
	route "[{\"status\":401,\"json\":{\"error\":{\"code\":\"token_expired\",\"message\":\"x\"}}},$DONE]"
	script "{\"refresh\":[$(granted "$AT2")],\"responses\":[{\"status\":401,\"json\":{\"error\":{\"code\":\"token_expired\",\"message\":\"x\"}}},$DONE]}"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(responses 'map(.authorization)')" = "[\"Bearer $AT\",\"Bearer $AT2\"]" ]
	[ "$(jq -r .access_token "$TOKENS")" = "$AT2" ]
	[ "$(jq -r .refresh_token "$TOKENS")" = "$RT" ]
	[ "$(stat -c %a "$TOKENS")" = 600 ]
}

@test "tokens: an access token about to expire is refreshed before the call" {
	stand_in "{\"poll\":[$(granted "$AT" 30)],\"refresh\":[$(granted "$AT2")],\"responses\":[$DONE]}"
	sign_in
	export HW_MODEL=chatgpt/gpt-stand-in
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device","poll","refresh","responses"]' ]
	[ "$(responses 'map(.authorization)')" = "[\"Bearer $AT2\"]" ]
}

@test "tokens: not signed in, the route says so and sends nothing" {
	stand_in "{\"responses\":[$DONE]}"
	export HW_MODEL=chatgpt/gpt-stand-in
	chat c1 "hello"
	run -66 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-008: not signed in to ChatGPT: run 'hw-model subscription sign-in'" ]
	refute test -s requests.jsonl
}

# ---- a refresh-token expiry mid-session ----

@test "mid-session: an expired access token is refreshed and the run goes on" {
	route "[$SET,$DONE]"
	propose
	expire
	script "{\"refresh\":[$(granted "$AT2")],\"responses\":[$SET,$DONE]}"
	decide_directly approve
	run -0 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '.conversation[-1].content')" = '"Recorded."' ]
	[ "$(jq -s -c 'map(.kind)' requests.jsonl)" = '["device","poll","responses","refresh","responses"]' ]
	[ "$(responses '.[1].authorization')" = "\"Bearer $AT2\"" ]
}

@test "mid-session: a refused refresh is reported and the pending set waits for a new sign-in" {
	route "[$SET,$DONE]"
	propose
	expire
	script '{"refresh":[{"status":400,"json":{"error":"invalid_grant"}}],"responses":[{"status":500,"json":{}}]}'
	decide_directly approve
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "$EXPIRED" ]
	# nothing ran, nothing was sent to the endpoint, the set is kept
	[ ! -e ran.txt ]
	[ "$(responses length)" = 1 ]
	[ "$(proj '[.lifecycle.status, [.actions[].state]]')" = '["waiting-for-confirmation",["approved"]]' ]
	[ "$(hw-session replay session-main | jq -s -c '[map(select(.kind == "tool_call.proposed")) | length, map(select(.kind == "confirmation.resolved" or .kind == "tool.execution.recorded")) | length]')" = '[1,0]' ]
	# signed in again, the same set runs and the task ends
	script "{\"poll\":[$(granted "$AT2")],\"responses\":[$DONE]}"
	run -0 --separate-stderr hw-model subscription sign-in
	run -0 --separate-stderr hw-agent run session-main
	[ "$(cat ran.txt)" = run ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded"],"Recorded."]' ]
	[ "$(responses '.[-1].authorization')" = "\"Bearer $AT2\"" ]
}

# ---- the route and the policy ----

@test "policy: the decision is on the responses endpoint with subscription:openai" {
	route "[$DONE]"
	chat c1 "hello"
	run -0 --separate-stderr hw-agent run session-main
	d=$(hw-session replay session-main | jq -c 'select(.kind == "model_call.decision.recorded") | .payload')
	[ "$(jq -r .decision.endpoint <<<"$d")" = "$HW_BASE_URL/responses" ]
	[ "$(jq -r .decision.decision <<<"$d")" = allow ]
	[ "$(jq -c '[.model_profile.profile_id, .model_profile.credential_isolation]' <<<"$d")" = \
		'["chatgpt/gpt-stand-in","application-scrubbed"]' ]
}

@test "policy: a denied route stops before the stand-in sees a request or a refresh" {
	route "[$DONE]"
	expire
	: >requests.jsonl
	chat c1 "hello"
	printf '[policy]\nallowed_model_endpoints = "https://chatgpt.com/backend-api/codex/responses"\n' >.heartwood/config.toml
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: denied by policy 'generic-default' (rule egress-allowlist): endpoint '$HW_BASE_URL/responses' is not in allowed_model_endpoints; change [policy] in .heartwood/config.toml (hw-policy(7)) or choose another route with 'hw setup'" ]
	refute test -s requests.jsonl
}

@test "policy: subscription:openai off the credential allowlist is denied" {
	route "[$DONE]"
	: >requests.jsonl
	chat c1 "hello"
	printf '[policy]\nallowed_model_endpoints = "%s/responses"\ncredential_allowlist = "OPENAI_API_KEY"\n' "$HW_BASE_URL" >.heartwood/config.toml
	run -1 --separate-stderr hw-agent run session-main
	[[ $stderr == *"(rule credential-allowlist)"* ]]
	refute test -s requests.jsonl
}

@test "route: chatgpt/ takes no key, and defaults to the Codex endpoint" {
	export HW_MODEL=chatgpt/gpt-x HW_API_KEY_ENV=OPENAI_API_KEY OPENAI_API_KEY=sk-x
	chat c1 "hello"
	run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: a chatgpt/ route signs in with 'hw-model subscription sign-in' and takes no key (unset HW_API_KEY_ENV and HW_API_KEY_FILE)" ]
	unset HW_API_KEY_ENV HW_BASE_URL
	run --separate-stderr hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .summary' <<<"$output")" = \
		"model chatgpt/gpt-x at https://chatgpt.com/backend-api/codex (provider chatgpt: Responses API, signed in with ChatGPT)" ]
	[ "$(jq -r '.checks[] | select(.check_id == "model-credential") | .summary' <<<"$output")" = \
		"not signed in to ChatGPT: run 'hw-model subscription sign-in'" ]
}

@test "route: hw doctor shows the sign-in, never the tokens" {
	route "[$DONE]"
	run --separate-stderr hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model-credential") | [.status, .summary] | join(" ")' <<<"$output")" = \
		"pass signed in with ChatGPT (subscription:openai; the tokens are not shown)" ]
	[[ $output != *MARKER* && $stderr != *MARKER* ]]
}

# ---- hw setup ----

@test "setup: openai-subscription's first setup is interactive" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	run -2 --separate-stderr hw setup --non-interactive --yes \
	    --model-source openai-subscription --model-id gpt-5
	[ "$stderr" = "hw: the first setup of openai-subscription is interactive: run 'hw setup' on a terminal, or 'hw-model subscription sign-in' first" ]
	refute test -e .heartwood/config.toml
}

@test "setup: openai-subscription takes no key variable" {
	run -2 --separate-stderr hw setup --non-interactive --yes \
	    --model-source openai-subscription --model-id gpt-5 --api-key-env OPENAI_API_KEY
	[ "$stderr" = "hw: --model-source openai-subscription signs in with ChatGPT and takes no --api-key-env" ]
}

@test "setup: signed in, openai-subscription saves the Responses route the default policy allows" {
	stand_in "{\"poll\":[$(granted)]}"
	sign_in
	unset HW_MODEL HW_BASE_URL
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source openai-subscription --model-id chatgpt/gpt-5
	[ "$(jq -c '[.source, .model, .base_url, .api_key_env]' <<<"$output")" = \
	    '["openai-subscription","chatgpt/gpt-5","https://chatgpt.com/backend-api/codex",null]' ]
	grep -qx 'provider = "chatgpt"' .heartwood/config.toml
	grep -qx 'model_id = "gpt-5"' .heartwood/config.toml
	refute grep -q '^\[policy\]' .heartwood/config.toml
	run -0 --separate-stderr hw doctor --json
	[ "$(jq -c '[.checks[] | select(.check_id == "policy") | .status]' <<<"$output")" = '["pass"]' ]
	[[ "$output" != *MARKER* ]]
	no_leaks
}

@test "setup: on a terminal, openai-subscription signs in with the device flow, then saves" {
	stand_in "{\"poll\":[$(pending),$(granted)]}"
	unset HW_MODEL HW_BASE_URL
	run -0 python3 "$HW_ROOT/t/pty_answer.py" openai-subscription gpt-5 y -- hw setup
	[[ "$output" == *"5) openai-subscription "* ]]
	[[ "$output" == *"open http://127.0.0.1:$(cat port)/device"*"enter the code WXYZ-1234"* ]]
	[[ "$output" == *"hw: signed in with ChatGPT"* ]]
	[[ "$output" == *"Save model chatgpt/gpt-5 at https://chatgpt.com/backend-api/codex, signed in with ChatGPT, to .heartwood/config.toml? [y/N]: y"* ]]
	[[ "$output" != *"Name of the variable"* && "$output" != *MARKER* ]]
	[ "$(jq -r .access_token "$TOKENS")" = "$AT" ]
	grep -qx 'provider = "chatgpt"' .heartwood/config.toml
}

@test "responses: a function call without call_id is malformed (011)" {
	bad=$(jq -c 'del(.response.output[1].call_id)' <<<"$SET")
	route "[$bad]"
	chat c1 "hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: the model request was refused or the reply was malformed; check the model route" ]
	[ "$(proj '.actions | length')" = 0 ]
}

# ---- the notebook bridge ----

@test "notebook: subscription_sign_in, _poll, _status and _sign_out" {
	stand_in "{\"poll\":[$(pending),$(pending),$(granted)]}"
	PYTHONPATH="$HW_ROOT/share/python" run -0 --separate-stderr /usr/bin/python3 -c '
import json, time
from heartwood import NotebookSession
s = NotebookSession()
print(json.dumps(s.subscription_status()["status"]))
p = s.subscription_sign_in()
print(json.dumps([p["status"], p["user_code"]]))
for _ in range(400):
    r = s.subscription_poll()
    if r["status"] != "pending":
        break
    time.sleep(0.05)
print(json.dumps(r["status"]))
print(json.dumps(s.subscription_status()["status"]))
print(json.dumps(s.subscription_sign_out()["status"]))
s.close()
'
	[ "$output" = $'"signed-out"\n["pending", "WXYZ-1234"]\n"complete"\n"signed-in"\n"signed-out"' ]
	[ ! -e "$TOKENS" ]
	[[ $output != *MARKER* && $stderr != *MARKER* ]]
}

@test "notebook: a denied sign-in raises the error hw-model reported" {
	stand_in '{"poll":[{"status":400,"json":{"error":"access_denied"}}]}'
	PYTHONPATH="$HW_ROOT/share/python" run -0 --separate-stderr /usr/bin/python3 -c '
import time
from heartwood import NotebookSession, NotAppliedError
s = NotebookSession()
s.subscription_sign_in()
try:
    for _ in range(400):
        s.subscription_poll()
        time.sleep(0.05)
except NotAppliedError as e:
    print(type(e).__name__, e)
'
	[ "$output" = "NotAppliedError hw-model: the sign-in was denied at the verification page (exit status 1)" ]
}

@test "tokens: a tool that prints the environment and the token file shows neither token" {
	cmd=$(jq -Rn --arg f "$TOKENS" '"env; cat \u0027" + $f + "\u0027; echo done"')
	set=$(jq -c --argjson c "$cmd" '.response.output[1].arguments = ({summary: "Look", command: $c, security_risk: "LOW"} | tojson)' <<<"$SET")
	route "[$set,$DONE]"
	chat c1 "look"
	run -0 --separate-stderr hw-agent run session-main
	decide_directly approve
	run -0 --separate-stderr hw-agent run session-main
	out=$(hw-session replay session-main | jq -r 'select(.kind == "tool.execution.recorded") | .payload | tostring')
	[[ $out == *done* ]]
	[[ $out != *MARKER* ]]
	echo "$output$stderr" >out.txt
	no_leaks out.txt
}

# ---- the terminal: heartwood's /sign-in and /sign-out ----

@test "heartwood: /sign-in shows the code on the terminal and signs in; /sign-out signs out" {
	stand_in "{\"poll\":[$(pending),$(granted)]}"
	run -0 --separate-stderr heartwood --plain < <(printf '%s\n' /sign-in /exit)
	[[ $output == *"Signed in with ChatGPT."* ]]
	[[ $stderr == *"open http://127.0.0.1:$(cat port)/device"*"enter the code WXYZ-1234"* ]]
	[ "$(stat -c %a "$TOKENS")" = 600 ]
	run -0 --separate-stderr heartwood --plain < <(printf '%s\n' /sign-out /exit)
	[[ $output == *"Signed out of ChatGPT."* ]]
	[ ! -e "$TOKENS" ]
	no_leaks
}

@test "heartwood: a refused /sign-in is reported, stores nothing, and the terminal goes on" {
	stand_in '{"poll":[{"status":400,"json":{"error":"access_denied"}}]}'
	run -0 --separate-stderr heartwood --plain < <(printf '%s\n' /sign-in /status /exit)
	[[ $stderr == *"heartwood: sign-in did not complete (hw-model subscription sign-in exited 1)."* ]]
	[[ $output == *"Session: session-main"* ]]
	[[ $output != *"Signed in"* ]]
	[ ! -e "$TOKENS" ]
	run -0 --separate-stderr heartwood --plain < <(printf '%s\n' '/sign-in now' /exit)
	[ "$stderr" = "heartwood: wrong arguments for /sign-in. Type /help." ]
}
