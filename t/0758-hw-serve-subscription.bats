#!/usr/bin/env bats
# hw-serve's ChatGPT sign-in routes (reference 3.1): POST
# /settings/models/subscription/device starts the device flow (a child
# 'hw-model subscription sign-in') and answers its code; .../device/poll
# says pending, then complete once the stand-in authorization server
# (t/subscription_server.py) granted; expiry and denial are refusals; bad
# bodies are their own statuses; no token reaches an answer.  DELETE
# .../device cancels: the child is stopped and reaped, a later poll says
# cancelled.  GET /settings/credentials runs one status child at a time.

load lib
load serve

AT='at-MARKER-5b2e77c0d1a94f3e'
RT='rt-MARKER-0c9d41e8a27b6f15'

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	SERVE_PID= SRV=
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config HW_SUBSCRIPTION_POLL_MS=10
	TOKENS=$XDG_CONFIG_HOME/heartwood/credentials/openai-subscription.json
}

teardown() {
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
	if [ -n "$SRV" ]; then kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null; fi
	cd / && rm -rf "$PROJ"
}

post() { req POST "$1" -H 'Content-Type: application/json' --data-binary "$2"; }
granted() { jq -cn --arg a "$AT" --arg r "$RT" '{json: {access_token: $a, refresh_token: $r, expires_in: 3600}}'; }

# auth SCRIPT-JSON: the stand-in authorization server, then the gateway
auth() {
	subscription_stand_in "$1" || return 1
	serve_start
}
START='{"connection_id":"openai-subscription","terms_accepted":true}'
# poll_body: the poll request of the login in $output
poll_body() { jq -c '{connection_id, login_id}' <<<"${output#* }"; }

@test "subscription routes: device answers the code, poll says pending then complete" {
	# the first polls are pending; the grant comes after a few intervals
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}},{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}},$(granted)]}"
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	[ "$(jq -c '[.connection_id, .status, .user_code, .verification_url, .poll_interval_seconds, (.login_id | test("^[0-9a-f]{32}$"))]' <<<"${output#* }")" = \
		"[\"openai-subscription\",\"pending\",\"WXYZ-1234\",\"http://127.0.0.1:$(cat port)/device\",1,true]" ]
	body=$(poll_body)
	# another login id is not this sign-in
	run -0 post /settings/models/subscription/device/poll '{"connection_id":"openai-subscription","login_id":"00000000000000000000000000000000"}'
	[ "$output" = '404 {"error":"no such sign-in"}' ]
	for _ in $(seq 200); do
		run -0 post /settings/models/subscription/device/poll "$body"
		[ "${output%% *}" = 200 ]
		[ "$(jq -r .status <<<"${output#* }")" = complete ] && break
		[ "$(jq -r .status <<<"${output#* }")" = pending ]
		sleep 0.05
	done
	[ "$(jq -r .status <<<"${output#* }")" = complete ]
	[ "$(jq -r .access_token "$TOKENS")" = "$AT" ]
	[ "$(stat -c %a "$TOKENS")" = 600 ]
	[[ $output != *MARKER* ]]
	refute grep -q MARKER "$BATS_TEST_TMPDIR/serve.err"
	# the login is over
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$output" = '404 {"error":"no such sign-in"}' ]
}

@test "subscription routes: a denied sign-in is 422 with the reason" {
	auth '{"poll":[{"status":400,"json":{"error":"access_denied","error_description":"x-MARKER"}}]}'
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	for _ in $(seq 200); do
		run -0 post /settings/models/subscription/device/poll "$body"
		[ "${output%% *}" != 200 ] && break
		sleep 0.05
	done
	[ "$output" = '422 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was denied at the verification page"}' ]
	[ ! -e "$TOKENS" ]
}

@test "subscription routes: an issuer out of reach is 503 at the start" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	run -0 post /settings/models/subscription/device "$START"
	[ "$output" = '503 {"code":"HW-SUBSCRIPTION-001","error":"the ChatGPT authorization server could not be reached"}' ]
}

@test "subscription routes: bad bodies and methods" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	run -0 post /settings/models/subscription/device '{"connection_id":"openai","terms_accepted":true}'
	[ "$output" = '422 {"error":"`connection_id` must be openai-subscription"}' ]
	run -0 post /settings/models/subscription/device '{"connection_id":"openai-subscription"}'
	[ "$output" = '422 {"error":"`terms_accepted` must be true"}' ]
	run -0 post /settings/models/subscription/device '{"connection_id":"openai-subscription","terms_accepted":false}'
	[ "$output" = '422 {"error":"`terms_accepted` must be true"}' ]
	run -0 post /settings/models/subscription/device '{"connection_id":"openai-subscription","terms_accepted":true,"token":"x"}'
	[ "$output" = '422 {"error":"request contains unsupported fields"}' ]
	run -0 post /settings/models/subscription/device 'nope'
	[ "$output" = '400 {"error":"the request body is not a JSON object"}' ]
	run -0 post /settings/models/subscription/device/poll '{"connection_id":"openai-subscription"}'
	[ "$output" = '422 {"error":"`login_id` is required"}' ]
	run -0 post /settings/models/subscription/device/poll '{"connection_id":"openai-subscription","login_id":"abc"}'
	[ "$output" = '404 {"error":"no such sign-in"}' ]
	run -0 req GET /settings/models/subscription/device
	[ "$output" = '405 {"error":"method not allowed"}' ]
	run -0 post /settings/models/subscription/other '{}'
	[ "$output" = '404 {"error":"unknown route"}' ]
}

@test "subscription routes: DELETE /settings/credentials/openai-subscription signs out" {
	auth "{\"poll\":[$(granted)]}"
	hw-model subscription sign-in >/dev/null 2>&1
	[ -e "$TOKENS" ]
	run -0 req DELETE /settings/credentials/openai-subscription
	[ "$output" = '200 {"connection_id":"openai-subscription","removed":true,"status":"signed-out"}' ]
	[ ! -e "$TOKENS" ]
	run -0 req DELETE /settings/credentials/openai-subscription
	[ "$output" = '200 {"connection_id":"openai-subscription","removed":false,"status":"signed-out"}' ]
	run -0 req GET /settings/credentials/openai-subscription
	[ "$output" = '405 {"error":"method not allowed"}' ]
}

@test "subscription routes: a config directory others may write is refused by the sign-out" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	mkdir -p -m 700 "$XDG_CONFIG_HOME/heartwood"
	chmod 777 "$XDG_CONFIG_HOME/heartwood"
	run -0 req DELETE /settings/credentials/openai-subscription
	[ "${output%% *}" = 422 ]
	[[ $output == *"group or others can write it"* ]]
}

# ---- DELETE .../device: cancel the sign-in, its child stopped ----

del() { req DELETE /settings/models/subscription/device -H 'Content-Type: application/json' --data-binary "$@"; }
# the_child: the pid of the gateway's one child in CHILD
the_child() {
	CHILD=$(pgrep -P "$SERVE_PID")
	[ -n "$CHILD" ] && [ "$(wc -w <<<"$CHILD")" -eq 1 ] || {
		echo "children of the gateway: '$CHILD'"; return 1; }
}
# gone PID: no such process, not even a zombie (kill -0 finds those)
gone() {
	run kill -0 "$1"
	[ "$status" -ne 0 ] && [ ! -e "/proc/$1" ] || {
		echo "process $1 is still there: $(cat "/proc/$1/stat" 2>&1)"; return 1; }
}

@test "device cancel: DELETE stops and reaps the sign-in child, and a poll then says cancelled" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	body=$(poll_body)
	id=$(jq -r .login_id <<<"$body")
	the_child
	kill -0 "$CHILD"
	run -0 del "$body"
	[ "$output" = "200 {\"cancelled\":true,\"connection_id\":\"openai-subscription\",\"login_id\":\"$id\"}" ]
	gone "$CHILD"
	run -1 pgrep -P "$SERVE_PID"
	[ -z "$output" ]
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$output" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was cancelled"}' ]
	# again: nothing runs, nothing to do, the same poll answer
	run -0 del "$body"
	[ "$output" = "200 {\"cancelled\":false,\"connection_id\":\"openai-subscription\",\"login_id\":\"$id\"}" ]
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$output" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was cancelled"}' ]
	[ ! -e "$TOKENS" ]
	# a new sign-in after the cancel runs as usual
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	[ "$(jq -r .login_id <<<"${output#* }")" != "$id" ]
	run -0 post /settings/models/subscription/device/poll "$(poll_body)"
	[ "$(jq -r .status <<<"${output#* }")" = pending ]
}

@test "device cancel: with nothing running, or another login id, nothing is stopped" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	other='{"connection_id":"openai-subscription","login_id":"00000000000000000000000000000000"}'
	run -0 del "$other"
	[ "$output" = '200 {"cancelled":false,"connection_id":"openai-subscription","login_id":"00000000000000000000000000000000"}' ]
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	the_child
	run -0 del "$other"
	[ "$output" = '200 {"cancelled":false,"connection_id":"openai-subscription","login_id":"00000000000000000000000000000000"}' ]
	kill -0 "$CHILD"
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$(jq -r .status <<<"${output#* }")" = pending ]
}

@test "device cancel: bad bodies and methods" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	run -0 req DELETE /settings/models/subscription/device
	[ "$output" = '400 {"error":"the request body is not a JSON object"}' ]
	run -0 del '{"connection_id":"openai-subscription"}'
	[ "$output" = '422 {"error":"`login_id` is required"}' ]
	run -0 del '{"connection_id":"openai-subscription","login_id":7}'
	[ "$output" = '422 {"error":"`login_id` is required"}' ]
	run -0 del '{"connection_id":"openai","login_id":"a"}'
	[ "$output" = '422 {"error":"`connection_id` must be openai-subscription"}' ]
	run -0 del '{"connection_id":"openai-subscription","login_id":"a","all":true}'
	[ "$output" = '422 {"error":"request contains unsupported fields"}' ]
	for m in GET PUT PATCH; do
		run -0 req "$m" /settings/models/subscription/device
		[ "$output" = '405 {"error":"method not allowed"}' ] || { echo "$m: $output"; return 1; }
	done
	run -0 req DELETE /settings/models/subscription/device/poll
	[ "$output" = '405 {"error":"method not allowed"}' ]
	run -0 req DELETE /settings/models/subscription/device/cancel
	[ "$output" = '404 {"error":"unknown route"}' ]
}

@test "device cancel: a cross-origin or cross-site request is refused and the sign-in goes on" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	the_child
	run -0 del "$body" -H 'Origin: http://evil.example'
	[ "$output" = "403 {\"code\":\"HW-INGRESS-002\",\"error\":\"Origin 'http://evil.example' is not this gateway's\"}" ]
	run -0 del "$body" -H 'Sec-Fetch-Site: cross-site'
	[ "$output" = "403 {\"code\":\"HW-INGRESS-002\",\"error\":\"Sec-Fetch-Site 'cross-site' is not same-origin\"}" ]
	kill -0 "$CHILD"
	# the page's own origin is this gateway's
	run -0 del "$body" -H "Origin: $ORIGIN" -H 'Sec-Fetch-Site: same-origin'
	[ "$(jq -r .cancelled <<<"${output#* }")" = true ]
	gone "$CHILD"
}

@test "device cancel: a sign-in child that ignores SIGTERM is killed" {
	mkdir -p bin
	cp "$HW_ROOT/hw-serve" bin/
	cat >bin/hw-model <<-'EOF'
	#!/bin/sh
	trap '' TERM
	echo $$ >child.pid
	echo '{"connection_id":"openai-subscription","status":"pending","user_code":"AAAA-BBBB","verification_url":"http://127.0.0.1:9/device","poll_interval_seconds":1}'
	exec sleep 30
	EOF
	chmod +x bin/hw-model
	PATH=$PWD/bin:$PATH serve_start
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	body=$(poll_body)
	child=$(cat child.pid)
	grep -q SigIgn "/proc/$child/status"
	# a gateway that waited for the child's own end (30 s) would not
	# answer within curl's 20
	run -0 del "$body" --max-time 20
	[ "$(jq -r .cancelled <<<"${output#* }")" = true ]
	gone "$child"
}

@test "device cancel: a sign-in that completed before the cancel is 409, and its child is reaped" {
	mkdir -p bin
	cp "$HW_ROOT/hw-serve" bin/
	cat >bin/hw-model <<-'EOF'
	#!/bin/sh
	echo $$ >child.pid
	echo '{"connection_id":"openai-subscription","status":"pending","user_code":"AAAA-BBBB","verification_url":"http://127.0.0.1:9/device","poll_interval_seconds":1}'
	echo '{"connection_id":"openai-subscription","status":"complete","expires_at":1}'
	exec sleep 30
	EOF
	chmod +x bin/hw-model
	PATH=$PWD/bin:$PATH serve_start
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	run -0 del "$body"
	[ "$output" = '409 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in had completed: sign out to undo it"}' ]
	gone "$(cat child.pid)"
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$output" = '404 {"error":"no such sign-in"}' ]
}

@test "device cancel: a gateway that stops ends the sign-in in progress" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	the_child
	serve_stop
	[ "$SERVE_STATUS" -eq 0 ]
	gone "$CHILD"
}

@test "device cancel: a sign-out ends the sign-in in progress, and its poll says cancelled" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	the_child
	run -0 req DELETE /settings/credentials/openai-subscription
	[ "${output%% *}" = 200 ]
	gone "$CHILD"
	run -0 post /settings/models/subscription/device/poll "$body"
	[ "$output" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was cancelled"}' ]
}

@test "device: a newer sign-in replaces the one before; its child is reaped and its poll says so" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}}]}"
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	first=$(poll_body)
	the_child
	old=$CHILD
	run -0 post /settings/models/subscription/device "$START"
	[ "${output%% *}" = 201 ]
	second=$(poll_body)
	[ "$first" != "$second" ]
	gone "$old"
	the_child
	[ "$CHILD" != "$old" ]
	run -0 post /settings/models/subscription/device/poll "$first"
	[ "$output" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was replaced by a newer one"}' ]
	# cancelling the replaced one stops nothing: the newer one goes on
	run -0 del "$first"
	[ "$(jq -c .cancelled <<<"${output#* }")" = false ]
	kill -0 "$CHILD"
	run -0 post /settings/models/subscription/device/poll "$second"
	[ "$(jq -r .status <<<"${output#* }")" = pending ]
	# the newer one cancelled: its polls say cancelled, the first's still replaced
	run -0 del "$second"
	[ "$(jq -c .cancelled <<<"${output#* }")" = true ]
	gone "$CHILD"
	run -0 post /settings/models/subscription/device/poll "$second"
	[ "$output" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was cancelled"}' ]
	run -0 post /settings/models/subscription/device/poll "$first"
	[ "$output" = '404 {"error":"no such sign-in"}' ]
}

# a stand-in hw-model whose sign-in prints its code only once the file go
# exists (it never does unless a test makes it); each child's pid goes to
# children
waiting_model() {
	mkdir -p bin
	cp "$HW_ROOT/hw-serve" bin/
	cat >bin/hw-model <<-'EOF'
	#!/bin/sh
	echo $$ >>children
	[ -e go ] && echo '{"connection_id":"openai-subscription","status":"pending","user_code":"AAAA-BBBB","verification_url":"http://127.0.0.1:9/device","poll_interval_seconds":1}'
	exec sleep 30
	EOF
	chmod +x bin/hw-model
	PATH=$PWD/bin:$PATH serve_start
}
# start_bg: POST the device route in the background; its answer goes to
# start.code and start.out
start_bg() {
	curl -s -o start.out -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
		--data-binary "$START" "${URL%/}/settings/models/subscription/device" >start.code &
	START_PID=$!
}
# children N: wait until N children were started (10 s at most)
children() {
	for _ in $(seq 200); do
		[ "$(wc -l 2>/dev/null <children || echo 0)" -ge "$1" ] && return 0
		sleep 0.05
	done
	echo "children: $(cat children 2>&1)"; return 1
}

@test "device: a sign-out while the code is awaited ends the sign-in at once, and the start says cancelled" {
	waiting_model
	start_bg
	children 1
	child=$(sed -n 1p children)
	# the code would take 40 s to give up on: curl's 20 show nothing waits for it
	run -0 req DELETE /settings/credentials/openai-subscription --max-time 20
	[ "${output%% *}" = 200 ]
	wait "$START_PID"
	[ "$(cat start.code) $(cat start.out)" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was cancelled"}' ]
	gone "$child"
}

@test "device: a newer sign-in while the code is awaited replaces it at once" {
	waiting_model
	start_bg
	children 1
	child=$(sed -n 1p children)
	touch go
	run -0 post /settings/models/subscription/device "$START" --max-time 20
	[ "${output%% *}" = 201 ]
	[ "$(jq -r .user_code <<<"${output#* }")" = AAAA-BBBB ]
	wait "$START_PID"
	[ "$(cat start.code) $(cat start.out)" = '410 {"code":"HW-SUBSCRIPTION-001","error":"the sign-in was replaced by a newer one"}' ]
	gone "$child"
	the_child
	[ "$CHILD" = "$(sed -n 2p children)" ]
}

@test "device: a gateway that stops while the code is awaited ends at once, and reaps the child" {
	waiting_model
	start_bg
	children 1
	child=$(sed -n 1p children)
	kill -TERM "$SERVE_PID"
	# ended (a zombie until the wait below) within 20 s, where the code
	# would take 40 s to give up on
	for _ in $(seq 200); do
		state=$(awk '{print $3}' "/proc/$SERVE_PID/stat" 2>/dev/null || true)
		[ -z "$state" ] || [ "$state" = Z ] && break
		sleep 0.1
	done
	[ -z "$state" ] || [ "$state" = Z ]
	SERVE_STATUS=0
	wait "$SERVE_PID" || SERVE_STATUS=$?
	SERVE_PID=
	[ "$SERVE_STATUS" -eq 0 ]
	wait "$START_PID" || true
	gone "$child"
}

# ---- GET /settings/credentials: the status, from a child hw-model ----

@test "credentials route: signed out, signed in after the device sign-in, signed out again" {
	auth "{\"poll\":[{\"status\":400,\"json\":{\"error\":\"authorization_pending\"}},$(granted)]}"
	run -0 req GET /settings/credentials
	[ "$output" = "200 {\"credentials\":[{\"connection_id\":\"openai-subscription\",\"credential_reference\":\"subscription:openai\",\"status\":\"signed-out\",\"token_file\":\"$TOKENS\"}]}" ]
	run -0 post /settings/models/subscription/device "$START"
	body=$(poll_body)
	for _ in $(seq 200); do
		run -0 post /settings/models/subscription/device/poll "$body"
		[ "$(jq -r .status <<<"${output#* }")" = complete ] && break
		sleep 0.05
	done
	run -0 req GET /settings/credentials
	[ "${output%% *}" = 200 ]
	[ "$(jq -c '.credentials | map([.connection_id, .status, .access_token_expired, (.expires_at | type), .token_file])' <<<"${output#* }")" = \
		"[[\"openai-subscription\",\"signed-in\",false,\"number\",\"$TOKENS\"]]" ]
	[[ $output != *MARKER* ]]
	run -0 req DELETE /settings/credentials/openai-subscription
	[ "${output%% *}" = 200 ]
	run -0 req GET /settings/credentials
	[ "$(jq -r '.credentials[0].status' <<<"${output#* }")" = signed-out ]
	[ "$(jq -c '.credentials[0] | has("expires_at")' <<<"${output#* }")" = false ]
	refute grep -q MARKER "$BATS_TEST_TMPDIR/serve.err"
}

@test "credentials route: any method but GET and HEAD is 405, a path below it 404" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	for m in POST PUT PATCH DELETE; do
		run -0 req "$m" /settings/credentials
		[ "$output" = '405 {"error":"method not allowed"}' ] || { echo "$m: $output"; return 1; }
	done
	run -0 req GET /settings/credentials/other
	[ "$output" = '404 {"error":"unknown route"}' ]
	run -0 req HEAD /settings/credentials -I
	[ "${output%% *}" = 200 ]
}

@test "credentials route: a token file others may read is 500 with hw-model's refusal" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	mkdir -p -m 700 "${TOKENS%/*}"
	printf '{"access_token":"at-MARKER"}\n' >"$TOKENS"
	chmod 640 "$TOKENS"
	run -0 req GET /settings/credentials
	[ "$output" = "500 {\"code\":\"HW-SUBSCRIPTION-002\",\"error\":\"refusing '$TOKENS': others may read or write it (mode 0640; want 0600)\"}" ]
}

@test "credentials route: a file that is not a token file is 500 without its content" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	mkdir -p -m 700 "${TOKENS%/*}"
	printf '{"access_token":"at-MARKER"}\n' >"$TOKENS"
	chmod 600 "$TOKENS"
	run -0 req GET /settings/credentials
	[ "$output" = "500 {\"code\":\"HW-SUBSCRIPTION-002\",\"error\":\"refusing '$TOKENS': not a token file of heartwood (heartwood.subscription-tokens.v1); sign in again\"}" ]
}

@test "credentials route: a token path that is a symbolic link is 500 with the refusal" {
	export HW_SUBSCRIPTION_ISSUER=http://127.0.0.1:9
	serve_start
	mkdir -p -m 700 "${TOKENS%/*}"
	echo '{}' >elsewhere.json
	ln -s "$PWD/elsewhere.json" "$TOKENS"
	run -0 req GET /settings/credentials
	[ "$output" = "500 {\"code\":\"HW-SUBSCRIPTION-002\",\"error\":\"refusing '$TOKENS': it is a symbolic link\"}" ]
}

# fake_model SCRIPT: a hw-serve whose hw-model (found beside it) is SCRIPT
fake_model() {
	mkdir -p bin
	cp "$HW_ROOT/hw-serve" bin/
	printf '#!/bin/sh\n%s\n' "$1" >bin/hw-model
	chmod +x bin/hw-model
	PATH=$PWD/bin:$PATH serve_start
}

@test "credentials route: only the record's non-secret fields are answered" {
	fake_model 'echo '"'"'{"connection_id":"openai-subscription","status":"signed-in","expires_at":1,"access_token":"at-MARKER","refresh_token":"rt-MARKER"}'"'"
	run -0 req GET /settings/credentials
	[ "$output" = '200 {"credentials":[{"connection_id":"openai-subscription","expires_at":1,"status":"signed-in"}]}' ]
}

@test "credentials route: a child that prints no status record, or fails without a word, is 500" {
	fake_model 'echo "{\"connection_id\":\"openai\",\"status\":\"signed-in\"}"'
	run -0 req GET /settings/credentials
	[ "$output" = '500 {"code":"HW-SUBSCRIPTION-002","error":"hw-model printed no status record"}' ]
	serve_stop
	fake_model 'echo "{\"connection_id\":\"openai-subscription\",\"status\":\"maybe\"}"'
	run -0 req GET /settings/credentials
	[ "$output" = '500 {"code":"HW-SUBSCRIPTION-002","error":"hw-model printed no status record"}' ]
	serve_stop
	fake_model 'echo "{\"connection_id\":\"openai-subscription\",\"status\":\"signed-out\"}"; exit 70'
	run -0 req GET /settings/credentials
	[ "$output" = '500 {"code":"HW-SUBSCRIPTION-002","error":"the status of the ChatGPT sign-in could not be read"}' ]
	serve_stop
	fake_model 'kill -9 $$'
	run -0 req GET /settings/credentials
	[ "$output" = '500 {"code":"HW-SUBSCRIPTION-002","error":"the status of the ChatGPT sign-in could not be read"}' ]
}

# slow_status: a hw-model whose status takes a second and logs its start
# and end in runs.log; it answers the status written in state
slow_status() {
	mkdir -p bin
	cp "$HW_ROOT/hw-serve" bin/
	cat >bin/hw-model <<-'EOF'
	#!/bin/sh
	s=$(cat state)
	echo "start $$" >>runs.log
	sleep 1
	echo "end $$" >>runs.log
	echo "{\"connection_id\":\"openai-subscription\",\"status\":\"$s\"}"
	EOF
	chmod +x bin/hw-model
	echo signed-out >state
	PATH=$PWD/bin:$PATH serve_start
}

@test "credentials route: many requests at once run one status child at a time and share its answer" {
	slow_status
	pids=()
	for i in $(seq 12); do
		curl -s -o "a$i" -w '%{http_code}' --max-time 60 "${URL%/}/settings/credentials" >"c$i" &
		pids+=($!)
	done
	wait "${pids[@]}"
	for i in $(seq 12); do
		[ "$(cat "c$i") $(cat "a$i")" = '200 {"credentials":[{"connection_id":"openai-subscription","status":"signed-out"}]}' ] ||
			{ echo "request $i: $(cat "c$i") $(cat "a$i")"; return 1; }
	done
	cat runs.log
	# one at a time: each start follows the end of the one before
	run awk 'NR % 2 == 1 && $1 != "start" || NR % 2 == 0 && ($1 != "end" || $2 != pid) { bad = 1 } { pid = $2 } END { exit bad || NR % 2 }' runs.log
	[ "$status" -eq 0 ]
	# and shared: fewer children than requests
	[ "$(grep -c start runs.log)" -lt 12 ]
	[ "$(grep -c start runs.log)" -ge 1 ]
}

@test "credentials route: a request never takes the answer of a child that started before it came" {
	slow_status
	echo signed-in >state
	curl -s -o first --max-time 30 "${URL%/}/settings/credentials" &
	first=$!
	wait_for grep -q start runs.log
	echo signed-out >state
	run -0 req GET /settings/credentials
	[ "$output" = '200 {"credentials":[{"connection_id":"openai-subscription","status":"signed-out"}]}' ]
	wait "$first"
	[ "$(cat first)" = '{"credentials":[{"connection_id":"openai-subscription","status":"signed-in"}]}' ]
	[ "$(grep -c start runs.log)" -eq 2 ]
}
