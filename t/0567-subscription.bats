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
	printf '%s\n' "$1" >script.json
	python3 "$HW_ROOT/t/subscription_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the stand-in did not start"; return 1; }
	export HW_SUBSCRIPTION_ISSUER="http://127.0.0.1:$(cat port)"
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/backend-api/codex"
}
# script JSON: rewrite the stand-in's script (read at each request)
script() { printf '%s\n' "$1" >script.json; }

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
