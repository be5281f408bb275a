#!/usr/bin/env bats
# The browser UI (share/www) in a real Chromium driven by playwright-core
# (t/browser/ui.js), against a real hw-serve and the replay model: a whole
# task, a rejection, a session continued from the terminal, the fallback
# to server-sent events, narrow widths and keyboard-only review, axe, the
# theme.  Screenshots of the main views go to t/browser/screenshots/.
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
