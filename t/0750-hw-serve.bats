#!/usr/bin/env bats
# hw-serve: the browser gateway.  It prints its URL once it listens and
# stops at SIGTERM; its REST routes answer from the same library as
# hw-session and hw-inspect, with the reference's statuses and security
# headers; commands go through hw-session command's path and the agent is
# continued after them; SSE and WebSocket deliver the catch-up and then
# every commit exactly once, in order.

load lib
load agent
load serve

setup() { agent_setup; SERVE_PID=; }
teardown() {
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
	agent_teardown
}

# one_action: the model proposes creating notes.md, then says it is done
one_action() {
	cat >turns.jsonl <<'T'
{"content":"I will write notes.","tool_calls":[{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
{"content":"Done, notes written."}
T
}

status_is() { [ "$(curl -s "${URL}sessions/session-main/projection" | jq -r "$1")" = "$2" ]; }

@test "hw-serve: prints its URL and pid once it listens; SIGTERM stops it with 0" {
	serve_start
	[ "$(jq -r .pid "$S/serve.json")" = "$SERVE_PID" ]
	[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]]
	[ "$(jq -c 'keys' "$S/serve.json")" = '["listen","pid","url"]' ]
	[ "$(jq -r .listen "$S/serve.json")" = "${URL%/}" ]
	[ "$(wc -l <"$S/serve.json")" = 1 ]
	run -0 curl -sf "${URL}project/readiness"
	serve_stop
	[ "$SERVE_STATUS" = 0 ]
	[ ! -s "$S/serve.err" ]
	refute curl -sf "${URL}project/readiness"
}

@test "hw-serve: SIGINT stops it too, and a port in use is 69" {
	serve_start
	port=${HOSTPORT##*:}
	run -69 --separate-stderr hw-serve --port "$port"
	[ "$stderr" = "hw-serve: cannot listen on '127.0.0.1' port $port" ]
	serve_stop INT
	[ "$SERVE_STATUS" = 0 ]
}

@test "hw-serve: every response carries the security headers" {
	serve_start
	for p in project/readiness sessions nope/route.js sessions/x/nope; do
		curl -s -D h.txt -o /dev/null "$URL$p"
		for h in 'Cache-Control: no-store' 'X-Content-Type-Options: nosniff' \
			'Referrer-Policy: no-referrer' \
			'Permissions-Policy: camera=(), geolocation=(), microphone=()' \
			'X-Frame-Options: SAMEORIGIN'; do
			grep -qi "^$h"$'\r'"\$" h.txt || { echo "$p lacks $h"; cat h.txt; return 1; }
		done
		grep -qi "^Content-Security-Policy: default-src 'none';.*connect-src 'self' ws://$HOSTPORT;.*frame-ancestors 'self'" h.txt
	done
	grep -qi '^Content-Type: application/json' h.txt
}

@test "hw-serve: the startup plan asks to use the project, and nothing is created before" {
	serve_start
	run -0 req GET /project/startup
	[[ "$output" == 200\ * ]]
	[ "$(jq -r .phase <<<"${output#200 }")" = project-review ]
	[ "$(jq -r .interface <<<"${output#200 }")" = web ]
	[ "$(jq -r .capabilities.platform_id <<<"${output#200 }")" = generic ]
	run -0 req GET /project/capabilities
	[ "$(jq -r .browser_route <<<"${output#200 }")" = direct ]
	run -0 req GET /sessions
	[ "$output" = '200 {"sessions":[]}' ]
	run -0 req GET /sessions/session-main/projection
	[ "$(jq -r .eventCount <<<"${output#200 }")" = 0 ]
	[ ! -e .heartwood ]
	run -0 req GET '/project/startup?interface=bogus'
	[ "$output" = '422 {"error":"`interface` must be terminal, web or notebook"}' ]
	run -0 req POST /project/initialize
	[[ "$output" == 200\ * ]]
	[ -d .heartwood ]
	run -0 req GET '/project/startup?interface=terminal&port=9000'
	[ "$(jq -r .access_url <<<"${output#200 }")" = null ]
}

@test "hw-serve: the platform, capabilities and plan are hw doctor's, and the access URL is the gateway's" {
	export HEARTWOOD_PLATFORM=terra GOOGLE_PROJECT=lab-project
	serve_start
	want=$(hw doctor --json | jq -cS .platform.capabilities)
	[ "$(jq -r .platform_id <<<"$want")" = terra ]
	run -0 req GET /project/capabilities
	[ "$(jq -cS . <<<"${output#200 }")" = "$want" ]
	run -0 req GET /project/startup
	[ "$(jq -cS .capabilities <<<"${output#200 }")" = "$want" ]
	[ "$(jq -r '[.platform_id, .readiness.platform_id, .access_url] | join(" ")' <<<"${output#200 }")" = "terra terra $URL" ]
	run -0 req GET /project/readiness
	[ "$(jq -r .platform_id <<<"${output#200 }")" = terra ]
	run -0 req GET '/project/startup?port=9000'
	[ "$(jq -r .access_url <<<"${output#200 }")" = http://127.0.0.1:9000/ ]
}

@test "hw-serve: sessions are listed, made, renamed, and unknown ones are 404" {
	serve_start
	run -0 req POST /sessions/default
	[[ "$output" == 201\ * ]]
	[ "$(jq -r .title <<<"${output#201 }")" = "Main session" ]
	run -0 req POST /sessions/default
	[[ "$output" == 200\ * ]]
	run -0 req POST /sessions -d '{"title":"Cohort QC"}'
	[[ "$output" == 201\ * ]]
	sid=$(jq -r .session_id <<<"${output#201 }")
	[[ "$sid" =~ ^session-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$ ]]
	run -0 req GET "/sessions/$sid"
	[ "$(jq -r .status <<<"${output#200 }")" = empty ]
	run -0 req PATCH "/sessions/$sid" -d '{"title":"  Cohort   QC 2 "}'
	[ "$(jq -r .title <<<"${output#200 }")" = "Cohort QC 2" ]
	[ "$(hw-session show "$sid" | jq -r .title)" = "Cohort QC 2" ]
	run -0 req GET /sessions
	[ "$(jq -c '[.sessions[].session_id]' <<<"${output#200 }")" = "[\"session-main\",\"$sid\"]" ]
	run -0 req GET /sessions/nope
	[ "$output" = "404 {\"error\":\"no session 'nope'\"}" ]
	run -0 req PATCH /sessions/nope -d '{"title":"x"}'
	[[ "$output" == 404\ * ]]
}

@test "hw-serve: a title of 121 characters, or none, is refused" {
	serve_start
	req POST /sessions/default >/dev/null
	long=$(printf 'x%.0s' $(seq 121))
	run -0 req PATCH /sessions/session-main -d "{\"title\":\"$long\"}"
	[ "$output" = '422 {"error":"`title` must have 1-120 characters that are not all whitespace"}' ]
	run -0 req PATCH /sessions/session-main -d '{}'
	[ "$output" = '422 {"error":"`title` is required"}' ]
	run -0 req POST /sessions -d '{"title":"   "}'
	[[ "$output" == 422\ * ]]
}

@test "hw-serve: a whole task through the REST routes, the agent continued after each command" {
	one_action
	serve turns.jsonl
	serve_start
	run -0 req POST /sessions/session-main/commands -d "$(envelope c1 chat '{"prompt":"write notes"}')"
	[[ "$output" == 200\ * ]]
	ans=${output#200 }
	# the answer pairs the command's events with the projection they lead to
	[ "$(jq -c '[.events[].kind]' <<<"$ans")" = '["command.received","user_message.recorded"]' ]
	[ "$(jq '.events[-1].sequence == .projection.revision' <<<"$ans")" = true ]
	wait_for status_is .lifecycle.status waiting-for-confirmation
	g=$(curl -s "${URL}sessions/session-main/projection" | jq -r .pendingApproval.groupId)
	run -0 req POST /sessions/session-main/commands \
		-d "$(envelope c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$g\"}")"
	[ "$(jq -r '.events[-1].kind' <<<"${output#200 }")" = approval.recorded ]
	wait_for status_is '.conversation[-1].content' "Done, notes written."
	[ "$(cat notes.md)" = notes ]
	[ "$(proj '.actions[0].state')" = '"succeeded"' ]
	# the same id again is the same answer, and nothing more is done
	n=$(proj .eventCount)
	run -0 req POST /sessions/session-main/commands -d "$(envelope c1 chat '{"prompt":"write notes"}')"
	[ "$(jq -c '[.events[].kind]' <<<"${output#200 }")" = '["command.received","user_message.recorded"]' ]
	[ "$(proj .eventCount)" = "$n" ]
	run -0 hw-session replay session-main
}

@test "hw-serve: a command the session cannot take is recorded as not applied, 200" {
	serve_start
	run -0 req POST /sessions/session-main/commands \
		-d "$(envelope c1 approve '{"target_type":"action-set","target_id":"g"}')"
	[[ "$output" == 200\ * ]]
	[ "$(jq -r '.projection.lastCommandOutcome.commandId' <<<"${output#200 }")" = c1 ]
	[ "$(jq -r '.events[-1].kind' <<<"${output#200 }")" = error.recorded ]
}

@test "hw-serve: a command for another session is 409, an invalid one 422" {
	serve_start
	run -0 req POST /sessions/session-main/commands -d "$(envelope c1 chat '{"prompt":"x"}' other)"
	[ "$output" = "409 {\"error\":\"the command is for session 'other', not 'session-main'\"}" ]
	run -0 req POST /sessions/session-main/commands -d '{"kind":"chat"}'
	[[ "$output" == 422\ * ]]
	[ ! -e .heartwood/sessions/session-main/events.jsonl ]
}

@test "hw-serve: events after N come with the projection of the same read" {
	append_n 5
	serve_start
	run -0 req GET '/sessions/session-main/events?after=2'
	[ "$(jq -c '[.events[].sequence]' <<<"${output#200 }")" = '[3,4]' ]
	[ "$(jq .projection.revision <<<"${output#200 }")" = 4 ]
	run -0 req GET /sessions/session-main/events
	[ "$(jq '.events | length' <<<"${output#200 }")" = 5 ]
	run -0 req GET '/sessions/session-main/events?after=x'
	[ "$output" = '400 {"error":"`after` must be an integer of at least -1"}' ]
	run -0 req GET '/sessions/session-main/events?after=-2'
	[[ "$output" == 400\ * ]]
}

@test "hw-serve: the audit export is downloaded after the audit.export command, and verifies" {
	append_n 3
	serve_start
	run -0 req GET /sessions/session-main/audit-export
	[[ "$output" == 404\ * ]]
	run -0 req POST /sessions/session-main/commands -d "$(envelope e1 audit.export '{}')"
	run -0 req GET /sessions/session-main/audit-export
	[ "$(jq -r .filename <<<"${output#200 }")" = session-main-audit.jsonl ]
	jq -j .content <<<"${output#200 }" >exported.jsonl
	run -0 hw-audit verify exported.jsonl
}

@test "hw-serve: the workspace views are hw-inspect's, with its bounds and refusals" {
	git init -q .
	printf 'a\n' >a.txt
	git add a.txt
	git -c user.email=t@t -c user.name=t commit -qm a
	printf 'b\n' >>a.txt
	serve_start
	run -0 req GET '/sessions/session-main/workspace/tree?depth=1'
	[ "$(jq -c '[.schema_version,.status,[.entries[].path]]' <<<"${output#200 }")" = \
		'["heartwood.workspace-tree.v1","available",["a.txt"]]' ]
	[ "$(jq .limits.max_tree_depth <<<"${output#200 }")" = 8 ]
	run -0 req GET '/sessions/session-main/workspace/file?path=a.txt'
	[ "$(jq -r .content <<<"${output#200 }")" = $'a\nb' ]
	run -0 req GET '/sessions/session-main/workspace/changes'
	[ "$(jq -c '[.changes[].path]' <<<"${output#200 }")" = '["a.txt"]' ]
	run -0 req GET '/sessions/session-main/workspace/diff?path=a.txt'
	[ "$(jq -r .schema_version <<<"${output#200 }")" = heartwood.workspace-diff.v1 ]
	run -0 req GET '/sessions/session-main/workspace/file'
	[ "$output" = '422 {"error":"`path` is required"}' ]
	run -0 req GET '/sessions/session-main/workspace/file?path=.git%2Fconfig'
	[[ "$output" == 422\ *HW-WORKSPACE-002* ]]
	run -0 req GET '/sessions/session-main/workspace/tree?depth=9'
	[[ "$output" == 422\ *HW-WORKSPACE-006* ]]
	run -0 req GET '/sessions/session-main/workspace/file?path=missing.txt'
	[ "$(jq -r .status <<<"${output#200 }")" = unavailable ]
	run -0 req GET '/sessions/session-main/workspace/tree?path=nodir'
	[[ "$output" == 404\ *HW-WORKSPACE-005* ]]
}

@test "hw-serve: action settings are read and set, and strict" {
	serve_start
	run -0 req GET /settings/actions
	[ "$(jq -r .confirmation_mode <<<"${output#200 }")" = always-confirm ]
	run -0 req PUT /settings/actions/confirmation -d '{"mode":"confirm-risky"}'
	[ "$(jq -r .confirmation_mode <<<"${output#200 }")" = confirm-risky ]
	run -0 req PUT /settings/actions/confirmation -d '{"mode":"sometimes"}'
	[ "$output" = '422 {"error":"`mode` must be always-confirm or confirm-risky"}' ]
	run -0 req PUT /settings/actions/confirmation -d '{"mode":1}'
	[ "$output" = '422 {"error":"`mode` must be a string"}' ]
	run -0 req PUT /settings/actions/confirmation -d '{"mode":"confirm-risky","x":1}'
	[ "$output" = '422 {"error":"request contains unsupported fields"}' ]
}

@test "hw-serve: unknown API routes are 404, a wrong method 405, model settings 404" {
	serve_start
	for p in /project/nope /sessions/session-main/nope /settings/nope /settings/models /project; do
		run -0 req GET "$p"
		[[ "$output" == 404\ {\"error\":* ]] || { echo "$p: $output"; return 1; }
	done
	run -0 req DELETE /sessions
	[ "$output" = '405 {"error":"method not allowed"}' ]
	run -0 req GET /sessions/session-main/commands
	[[ "$output" == 405\ * ]]
	run -0 req POST /project/readiness
	[[ "$output" == 405\ * ]]
}

# allow METHOD PATH: the Allow header of the answer, which must be a 405
allow() {
	curl -s --path-as-is -X "$1" -D headers.out -o /dev/null -w '%{http_code}' "${URL%/}$2" >code.out
	[ "$(cat code.out)" = 405 ] || { echo "$1 $2: $(cat code.out)"; return 1; }
	sed -n 's/^Allow: \(.*\)\r$/\1/p' headers.out
}

@test "hw-serve: a 405 names the methods its route allows" {
	serve_start
	[ "$(allow DELETE /sessions)" = "GET, HEAD, POST" ]
	[ "$(allow GET /sessions/default)" = POST ]
	[ "$(allow DELETE /sessions/session-main)" = "GET, HEAD, PATCH" ]
	[ "$(allow GET /sessions/session-main/commands)" = POST ]
	[ "$(allow POST /sessions/session-main/events)" = "GET, HEAD" ]
	[ "$(allow GET /project/initialize)" = POST ]
	[ "$(allow POST /project/readiness)" = "GET, HEAD" ]
	[ "$(allow GET /settings/actions/confirmation)" = PUT ]
	[ "$(allow PUT /settings/actions)" = "GET, HEAD" ]
	[ "$(allow POST /settings/skills)" = "GET, HEAD" ]
	[ "$(allow GET /settings/skills/refresh)" = POST ]
	[ "$(allow GET /settings/skills/csv-clean)" = DELETE ]
	[ "$(allow POST /settings/credentials)" = "GET, HEAD" ]
	[ "$(allow GET /settings/credentials/openai-subscription)" = DELETE ]
	[ "$(allow GET /settings/models/subscription/device)" = "POST, DELETE" ]
	[ "$(allow DELETE /settings/models/subscription/device/poll)" = POST ]
	[ "$(allow POST /index.html)" = "GET, HEAD" ]
}

# sse_until FILE N: FILE's data lines hold events through sequence N-1
sse_until() {
	[ "$(sed -n 's/^data: //p' "$1" | jq -s '[.[].events[].sequence] | last // -1')" -ge "$(($2 - 1))" ]
}

@test "hw-serve: SSE catches up from N, then every commit exactly once in order" {
	append_n 3
	serve_start
	curl -sN "${URL}sessions/session-main/events/stream?after=0" >sse.txt 2>/dev/null 3>&- &
	cpid=$!
	wait_for sse_until sse.txt 3
	for i in 1 2 3 4 5; do append_n 2; done
	hw-session replay s2 >/dev/null
	wait_for sse_until sse.txt 13
	kill "$cpid"
	grep -q '^event: heartwood-session-events$' sse.txt
	run -0 sh -c "sed -n 's/^data: //p' sse.txt | jq -c '[.events[].sequence]' | jq -s -c add"
	[ "$output" = '[1,2,3,4,5,6,7,8,9,10,11,12]' ]
	# each message pairs its events with the projection of the same read
	run -0 sh -c "sed -n 's/^data: //p' sse.txt | jq -c 'select(.events != []) | .events[-1].sequence == .projection.revision' | sort -u"
	[ "$output" = true ]
	curl -s -D h.txt -o /dev/null -m 1 "${URL}sessions/session-main/events/stream" || :
	grep -qi '^Content-Type: text/event-stream' h.txt
	grep -qi '^X-Accel-Buffering: no' h.txt
}

@test "hw-serve: SSE waits for a session that does not exist yet" {
	serve_start
	curl -sN "${URL}sessions/later/events/stream" >sse.txt 2>/dev/null 3>&- &
	cpid=$!
	wait_for grep -q '^data: {"events":\[\],"projection":{' sse.txt
	append_n 2 later
	wait_for sse_until sse.txt 2
	kill "$cpid"
	[ ! -e .heartwood/sessions/nothing ]
}

@test "hw-serve: WebSocket with Python's websockets: catch-up, then every commit once in order" {
	append_n 2
	serve_start
	/usr/bin/python3 "$BATS_TEST_DIRNAME/ws_client.py" "$URL" \
		"/sessions/session-main/events?after=-1" "$ORIGIN" 8 >ws.txt 2>ws.err 3>&- &
	wpid=$!
	wait_for grep -q '"sequence":1' ws.txt
	for i in 1 2 3; do append_n 2; done
	rc=0
	wait "$wpid" || rc=$?
	[ "$rc" = 0 ] || { cat ws.err; return 1; }
	run -0 sh -c "jq -c '[.events[].sequence]' ws.txt | jq -s -c add"
	[ "$output" = '[0,1,2,3,4,5,6,7]' ]
	[ "$(head -1 ws.txt | jq .projection.revision)" = 1 ]
}

@test "hw-serve: a WebSocket without Origin, or from another origin, is 403" {
	serve_start
	printf 'GET /sessions/session-main/events HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' "$HOSTPORT" >r.txt
	run -0 raw <r.txt
	[ "$output" = '403 {"code":"HW-INGRESS-002","error":"a WebSocket request needs an Origin header"}' ]
	run -1 /usr/bin/python3 "$BATS_TEST_DIRNAME/ws_client.py" "$URL" /sessions/session-main/events http://evil.example 1
	[[ "$output" == *403* ]]
}

@test "hw-serve: a WebSocket handshake that is not version 13 is 400" {
	serve_start
	printf 'GET /sessions/session-main/events HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n' "$HOSTPORT" "$ORIGIN" >r.txt
	run -0 raw <r.txt
	[ "$output" = '400 {"error":"not a WebSocket handshake (RFC 6455, version 13)"}' ]
}

@test "hw-serve: hw serve and heartwood --web start it and print the URL, opening nothing" {
	S=$BATS_TEST_TMPDIR
	hw serve --port 0 >"$S/a.json" 2>"$S/a.err" 3>&- &
	apid=$!
	wait_for jq -e .url "$S/a.json"
	run -0 curl -sf "$(jq -r .url "$S/a.json")sessions"
	[ "$output" = '{"sessions":[]}' ]
	kill "$apid"
	wait "$apid" || { echo "hw serve exited $?"; return 1; }
	heartwood --web --port 0 >"$S/b.json" 2>"$S/b.err" 3>&- &
	bpid=$!
	wait_for jq -e .url "$S/b.json"
	[ "$(jq -r .pid "$S/b.json")" = "$bpid" ]
	run -0 curl -sf "$(jq -r .url "$S/b.json")project/capabilities"
	kill "$bpid"
	wait "$bpid" || { echo "heartwood --web exited $?"; return 1; }
	[ ! -s "$S/b.err" ]
}

@test "hw-serve: heartwood --web takes no mode, session or subcommand" {
	run -2 --separate-stderr heartwood --web --plain
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood --web --session-id s2
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood --web doctor
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood --port 9000
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr heartwood --web --host example.org --port 0
	[ "$stderr" = "hw-serve: HW-INGRESS-001: the bind host must be a literal IP address or localhost, not 'example.org'" ]
}

@test "hw-serve: hw doctor reports the browser route" {
	run -0 --separate-stderr hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "browser-route") | [.status, .summary] | join(" | ")' <<<"$output")" = \
		"pass | browser route: direct; 'hw serve' serves this project on http://127.0.0.1:8767/ (loopback only)" ]
	[ ! -e .heartwood ]
}

@test "hw-serve: a session whose logs do not verify is 422 on every read, its stream ends" {
	append_n 3
	sed -i 's/message 1/message X/' .heartwood/sessions/session-main/events.jsonl
	serve_start
	run -0 req GET /sessions/session-main/projection
	[[ "$output" == 422\ {\"error\":* ]]
	run -0 req GET /sessions/session-main/events
	[[ "$output" == 422\ * ]]
	run -0 req GET /sessions/session-main/events/stream
	[[ "$output" == 422\ * ]]
}
