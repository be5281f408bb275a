#!/usr/bin/env bats
# The browser UI (share/www) in a real Chromium driven by playwright-core
# (t/browser/ui.js), against a real hw-serve and the replay model: a whole
# task, a rejection, a session continued from the terminal, the fallback
# to server-sent events, narrow widths and keyboard-only review, axe, the
# theme, and the ChatGPT sign-in against the stand-in authorization server
# (t/subscription_server.py): signed in and out, denied, cancelled (the
# gateway's child stopped), by keyboard at 320 px, and a token file the
# status refuses.  Screenshots of the main
# views go to t/browser/screenshots/.
# make check installs Chromium and the npm packages (mk/ensure-browser).

load lib
load agent
load serve

setup() {
	agent_setup
	SERVE_PID=
	if [ ! -x "${HW_CHROMIUM:-/usr/bin/chromium}" ] ||
		[ ! -d "$HW_ROOT/t/browser/node_modules/playwright-core" ]; then
		echo "the browser suite needs chromium and t/browser/node_modules: run mk/ensure-browser (make check does)" >&2
		return 1
	fi
	SHOTS=$HW_ROOT/t/browser/screenshots
	mkdir -p "$SHOTS"
	export HW_DATADIR=$HW_ROOT/share
}
teardown() {
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
	agent_teardown
}

one_action() {
	cat >turns.jsonl <<'T'
{"content":"I will write **notes**.","tool_calls":[{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
{"content":"Done, *notes* written.\n\n# Heading\n\n<script>alert(1)</script> [x](javascript:alert(1))"}
T
}

# ui SCENARIO: run it against a fresh gateway
ui() {
	serve turns.jsonl
	serve_start
	run node "$HW_ROOT/t/browser/ui.js" "$1" "$URL" "$SHOTS"
	[ "$status" -eq 0 ] && [ "$output" = "ok $1" ] || { echo "$output"; return 1; }
}

@test "browser: a whole task: ask, review, allow, reply, Files, Changes, audit export" {
	one_action
	ui task
	[ "$(cat notes.md)" = notes ]
	run -0 hw-audit verify "$SHOTS/audit.jsonl"
	rm "$SHOTS/audit.jsonl"
	for v in review conversation files changes; do [ -s "$SHOTS/$v.png" ]; done
}

@test "browser: a rejected action set does not run" {
	one_action
	ui reject
	[ ! -e notes.md ]
	[ "$(proj '.actions[0].state')" = '"rejected"' ]
}

@test "browser: a session continued in the terminal shows on the open page" {
	printf '%s\n' '{"content":"Nothing to do here."}' >turns.jsonl
	ui terminal
}

@test "browser: with the WebSocket blocked the page falls back to server-sent events" {
	one_action
	ui fallback
	[ "$(cat notes.md)" = notes ]
}

@test "browser: 320, 390 and 768 px without horizontal overflow, and a keyboard-only review" {
	one_action
	ui narrow
}

@test "browser: axe finds no serious violations on the review" {
	one_action
	ui axe
}

@test "browser: the system theme, and a chosen one remembered" {
	one_action
	ui theme
}

# stand_in SCRIPT-JSON: the stand-in ChatGPT authorization server
# (t/subscription_server.py) that the gateway's sign-in talks to, and the
# values the page must show
stand_in() {
	export XDG_CONFIG_HOME=${XDG_CONFIG_HOME:-$PWD/config} HW_SUBSCRIPTION_POLL_MS=10
	subscription_stand_in "$1" || return 1
	export HW_TEST_USER_CODE=WXYZ-1234 HW_TEST_VERIFICATION_URL="$SUB_URL/device"
	export HW_TEST_TOKEN_FILE=$XDG_CONFIG_HOME/heartwood/credentials/openai-subscription.json
}
PENDING='{"status":400,"json":{"error":"authorization_pending"}}'

@test "browser: sign in with ChatGPT (terms, the code, the link, pending, signed in), then sign out" {
	stand_in "{\"poll\":[$PENDING,$PENDING,{\"json\":{\"access_token\":\"at-MARKER-1\",\"refresh_token\":\"rt-MARKER-2\",\"expires_in\":3600}}]}"
	one_action
	ui signin
	[ ! -e "$HW_TEST_TOKEN_FILE" ]
	# the stand-in was polled until it granted, by the gateway's child
	[ "$(jq -s -c 'map(.kind) | unique' requests.jsonl)" = '["device","poll"]' ]
	[ "$(jq -s '[.[] | select(.kind == "poll")] | length' requests.jsonl)" -eq 3 ]
	for v in signin-terms signin; do [ -s "$SHOTS/$v.png" ]; done
}

@test "browser: a denied ChatGPT sign-in shows the reason and offers to try again" {
	stand_in '{"poll":[{"status":400,"json":{"error":"access_denied"}}]}'
	one_action
	ui signinDenied
	[ ! -e "$HW_TEST_TOKEN_FILE" ]
}

# no_sign_in_child: the gateway has no child left, and the stand-in is
# polled no more (a live child polls it every 10 ms here)
no_sign_in_child() {
	run pgrep -P "$SERVE_PID"
	[ "$status" -eq 1 ] && [ -z "$output" ] || { echo "children left: $output"; return 1; }
	n=$(jq -s '[.[] | select(.kind == "poll")] | length' requests.jsonl)
	[ "$n" -ge 1 ]
	sleep 0.5
	[ "$(jq -s '[.[] | select(.kind == "poll")] | length' requests.jsonl)" -eq "$n" ]
}

@test "browser: the ChatGPT sign-in at 320 px by keyboard, axe in both themes, and Escape cancels it" {
	stand_in "{\"poll\":[$PENDING]}"
	one_action
	ui signinNarrow
	no_sign_in_child
	[ ! -e "$HW_TEST_TOKEN_FILE" ]
	[ -s "$SHOTS/signin-320.png" ]
}

@test "browser: Cancel after Get a code makes the gateway stop its sign-in child" {
	stand_in "{\"poll\":[$PENDING]}"
	one_action
	ui signinCancel
	no_sign_in_child
	[ ! -e "$HW_TEST_TOKEN_FILE" ]
}

@test "browser: a token file the status refuses is named in the rail, as text" {
	# a directory whose name is markup: the page must show it as it is
	export XDG_CONFIG_HOME="$PWD/<i>config</i>"
	stand_in "{\"poll\":[$PENDING]}"
	mkdir -p -m 700 "${HW_TEST_TOKEN_FILE%/*}"
	echo '{}' >"$HW_TEST_TOKEN_FILE"
	chmod 640 "$HW_TEST_TOKEN_FILE"
	one_action
	ui signinUnreadable
	[ "$(stat -c %a "$HW_TEST_TOKEN_FILE")" = 640 ]
}
