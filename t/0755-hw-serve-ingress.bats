#!/usr/bin/env bats
# hw-serve's ingress policy: each configuration it refuses to start with
# (HW-INGRESS-001, exit 2, nothing bound), and each request it refuses
# before routing, with its status and HW-INGRESS-002; the three modes
# each work end to end.

load lib
load serve

setup() { PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX"); cd "$PROJ"; SERVE_PID=; PROXY=; }
teardown() {
	if [ -n "$PROXY" ]; then kill "$PROXY" 2>/dev/null; wait "$PROXY" 2>/dev/null; fi
	if [ -n "$SERVE_PID" ]; then kill "$SERVE_PID" 2>/dev/null; wait "$SERVE_PID" 2>/dev/null; fi
	cd / && rm -rf "$PROJ"
}

J=(--ingress jupyter-proxy --origin https://hub.example.org --base-path /user/ada/proxy/8767 --proxy-strips-prefix)
T=(--ingress trusted-proxy --origin https://lab.example.org --base-path /hw --trusted-source 127.0.0.0/8)
TH=("X-Forwarded-For: 192.0.2.7" "X-Forwarded-Host: lab.example.org" "X-Forwarded-Proto: https" "X-Forwarded-Prefix: /hw")

# ---- configuration ----

@test "ingress config: a bind host that is a name, not an address" {
	config_refused "the bind host must be a literal IP address or localhost, not 'example.org'" --host example.org
}

@test "ingress config: an unknown mode" {
	config_refused "unknown ingress mode 'open'" --ingress open
}

@test "ingress config: direct-loopback on a non-loopback address" {
	config_refused "direct-loopback needs a loopback bind (a wildcard one only with --host-loopback-publication), not '192.0.2.1'" --host 192.0.2.1
}

@test "ingress config: direct-loopback on a wildcard address without the publication assertion" {
	config_refused "direct-loopback needs a loopback bind (a wildcard one only with --host-loopback-publication), not '0.0.0.0'" --host 0.0.0.0
}

@test "ingress config: direct-loopback with an origin that is not loopback" {
	config_refused "direct-loopback needs a loopback origin, not 'http://lab.example.org'" --origin http://lab.example.org
}

@test "ingress config: direct-loopback with a trusted source" {
	config_refused "direct-loopback takes no trusted source, identity header or prefix stripping" --trusted-source 10.0.0.0/8
}

@test "ingress config: direct-loopback with prefix stripping" {
	config_refused "direct-loopback takes no trusted source, identity header or prefix stripping" --proxy-strips-prefix
}

@test "ingress config: jupyter-proxy on a wildcard address" {
	config_refused "jupyter-proxy needs a loopback bind, not '0.0.0.0'" "${J[@]}" --host 0.0.0.0
}

@test "ingress config: jupyter-proxy without an origin" {
	config_refused "jupyter-proxy needs --origin, a base path other than '/' and --proxy-strips-prefix" --ingress jupyter-proxy --base-path /p --proxy-strips-prefix
}

@test "ingress config: jupyter-proxy with the root as base path" {
	config_refused "jupyter-proxy needs --origin, a base path other than '/' and --proxy-strips-prefix" --ingress jupyter-proxy --origin https://hub.example.org --base-path / --proxy-strips-prefix
}

@test "ingress config: jupyter-proxy without prefix stripping" {
	config_refused "jupyter-proxy needs --origin, a base path other than '/' and --proxy-strips-prefix" --ingress jupyter-proxy --origin https://hub.example.org --base-path /p
}

@test "ingress config: jupyter-proxy with an identity header" {
	config_refused "jupyter-proxy takes no trusted source or identity header" "${J[@]}" --identity-header X-User:ada
}

@test "ingress config: trusted-proxy without a trusted source" {
	config_refused "trusted-proxy needs --origin and at least one --trusted-source" --ingress trusted-proxy --origin https://lab.example.org
}

@test "ingress config: trusted-proxy without an origin" {
	config_refused "trusted-proxy needs --origin and at least one --trusted-source" --ingress trusted-proxy --trusted-source 10.0.0.0/8
}

@test "ingress config: trusted-proxy with the host-loopback publication assertion" {
	config_refused "trusted-proxy cannot be combined with --host-loopback-publication" "${T[@]}" --host-loopback-publication
}

@test "ingress config: a trusted source of /0" {
	config_refused "a trusted source must be an address range ADDRESS/BITS, bits at least 1, not '0.0.0.0/0'" "${T[@]}" --trusted-source 0.0.0.0/0
}

@test "ingress config: a trusted source that is no range" {
	config_refused "a trusted source must be an address range ADDRESS/BITS, bits at least 1, not '10.0.0.1'" "${T[@]}" --trusted-source 10.0.0.1
}

@test "ingress config: an origin with a path, user, query, wildcard or another scheme" {
	for o in https://lab.example.org/x https://ada@lab.example.org 'https://lab.example.org?q' 'https://*.example.org' ftp://lab.example.org 'https://lab.example.org:0'; do
		config_refused "the origin must be http(s)://HOST[:PORT] with nothing more, not '$o'" --ingress trusted-proxy --trusted-source 10.0.0.0/8 --origin "$o"
	done
}

@test "ingress config: a base path that is relative or has a dot segment" {
	for b in hw /a/../b /a//b /a%2f; do
		config_refused "the base path must be an absolute path without '%', '?', '#', empty, '.' or '..' segments: '$b'" "${T[@]}" --base-path "$b"
	done
}

@test "ingress config: an identity header that is reserved, not a token, or has no value" {
	config_refused "the identity header may not be 'cookie'" "${T[@]}" --identity-header Cookie:x
	config_refused "the identity header may not be 'x-forwarded-for'" "${T[@]}" --identity-header X-Forwarded-For:x
	config_refused "the identity header name is not an HTTP token" "${T[@]}" --identity-header 'X User:x'
	config_refused "the identity value must have 1-512 characters and no CR or LF" "${T[@]}" --identity-header X-User:
	config_refused "the identity value must have 1-512 characters and no CR or LF" "${T[@]}" --identity-header "X-User:$(printf 'v%.0s' $(seq 513))"
	config_refused "the identity header must be NAME:VALUE with an HTTP token name" "${T[@]}" --identity-header X-User
}

@test "ingress config: the default origin of a direct gateway is its bound address" {
	serve_start
	[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]]
	serve_stop
	serve_start --host 0.0.0.0 --host-loopback-publication
	[[ "$URL" =~ ^http://127\.0\.0\.1:[0-9]+/$ ]]
}

# ---- per request: direct loopback ----

@test "ingress: a repeated Host header is 400" {
	serve_start
	run -0 send /sessions "Host: $HOSTPORT"
	refused 400 "repeated header 'Host'"
}

@test "ingress: a repeated Origin header is 400" {
	serve_start
	run -0 send /sessions "Origin: $ORIGIN" "Origin: $ORIGIN"
	refused 400 "repeated header 'Origin'"
}

@test "ingress: a repeated Sec-Fetch-Site header is 400" {
	serve_start
	run -0 send /sessions "Sec-Fetch-Site: none" "Sec-Fetch-Site: none"
	refused 400 "repeated header 'Sec-Fetch-Site'"
}

@test "ingress: a header name that is not ASCII is 400" {
	serve_start
	run -0 send /sessions $'X-\xc3\xa9: 1'
	[[ "$output" == 400\ * ]]
}

@test "ingress: no Host header is 400" {
	serve_start
	HOST=- run -0 send /sessions
	refused 400 "exactly one Host header is required"
}

@test "ingress: another Host is 403" {
	serve_start
	HOST=evil.example:80 run -0 send /sessions
	refused 403 "Host 'evil.example:80' is not this gateway's"
}

@test "ingress: another Origin is 403" {
	serve_start
	run -0 send /sessions "Origin: http://evil.example"
	refused 403 "Origin 'http://evil.example' is not this gateway's"
}

@test "ingress: a cross-site Sec-Fetch-Site is 403" {
	serve_start
	run -0 send /sessions "Sec-Fetch-Site: cross-site"
	refused 403 "Sec-Fetch-Site 'cross-site' is not same-origin"
}

@test "ingress: any forwarding header on a direct connection is 403" {
	serve_start
	for h in "Forwarded: for=1.2.3.4" "X-Forwarded-For: 1.2.3.4" "X-Forwarded-Host: a" \
		"X-Forwarded-Prefix: /p" "X-Real-IP: 1.2.3.4" "X-Original-URL: /x" "X-ProxyContextPath: /p"; do
		run -0 send /sessions "$h"
		refused 403 "forwarding header '${h%%:*}' on a direct connection"
	done
}

@test "ingress: a percent-encoded path is 400" {
	serve_start
	run -0 send /sessions/session-main%2Fx
	refused 400 "the path may not hold '%', '\\\\', '?' or '#'"
}

@test "ingress: a backslash in the path is 400" {
	serve_start
	run -0 send '/sessions\x'
	refused 400 "the path may not hold '%', '\\\\', '?' or '#'"
}

@test "ingress: an empty path segment is 400" {
	serve_start
	run -0 send //sessions
	refused 400 "the path has an empty segment"
}

@test "ingress: a dot segment is 400" {
	serve_start
	run -0 send /sessions/./x
	refused 400 "the path has a '.' or '..' segment"
	run -0 send /sessions/../project/readiness
	refused 400 "the path has a '.' or '..' segment"
}

@test "ingress: a path that is not UTF-8 is 400" {
	serve_start
	run -0 send $'/sessions/\xff'
	refused 400 "the path is not UTF-8"
}

@test "ingress: a query over 8192 bytes is 400" {
	serve_start
	q=$(printf 'a%.0s' $(seq 8191))
	run -0 send "/sessions?q=$q"
	refused 400 "the query is longer than 8192 bytes"
	run -0 send "/sessions?q=${q:0:8186}"
	[[ "$output" == 200\ * ]]
}

@test "ingress: a query that is not UTF-8 or holds '#' is 400" {
	serve_start
	run -0 send $'/sessions?q=\xff'
	refused 400 "the query must be UTF-8 without CR, LF, NUL or '#'"
	run -0 send '/sessions?q=a#b'
	refused 400 "the query must be UTF-8 without CR, LF, NUL or '#'"
}

@test "ingress: a base path is preserved and taken off; outside it is 404" {
	serve_start --base-path /hw/
	[ "$URL" = "http://$HOSTPORT/hw/" ]
	run -0 send /hw/sessions
	[ "$output" = '200 {"sessions":[]}' ]
	run -0 send /sessions
	refused 404 "not under the base path"
	run -0 send /hwx/sessions
	refused 404 "not under the base path"
}

# ---- per request: jupyter-proxy ----

@test "ingress jupyter: a request the proxy sent with its prefix still on is 400" {
	serve_start "${J[@]}"
	[ "$URL" = https://hub.example.org/user/ada/proxy/8767/ ]
	HOST=hub.example.org run -0 send /user/ada/proxy/8767/sessions
	refused 400 "the proxy should have taken the base path off"
	HOST=hub.example.org run -0 send /sessions "X-Forwarded-Prefix: /user/ada/proxy/8767" \
		"X-Forwarded-Context: /user/ada/proxy/8767" "X-ProxyContextPath: /user/ada/proxy/8767" \
		"X-Forwarded-Host: hub.example.org" "X-Forwarded-Proto: https" "X-Forwarded-For: 10.0.0.1, 10.0.0.2"
	[ "$output" = '200 {"sessions":[]}' ]
}

@test "ingress jupyter: RFC Forwarded and the rewrite headers are 403" {
	serve_start "${J[@]}"
	for h in "Forwarded: for=10.0.0.1" "X-Original-URL: /x" "X-Rewrite-URL: /x" \
		"X-Forwarded-Port: 443" "X-Forwarded-Server: hub" "X-Forwarded-URI: /x" "X-Real-IP: 10.0.0.1"; do
		run -0 send /sessions "$h"
		refused 403 "forwarding header '${h%%:*}' is not accepted"
	done
}

@test "ingress jupyter: a repeated X-Forwarded-For is 400" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-For: 10.0.0.1" "X-Forwarded-For: 10.0.0.2"
	refused 400 "repeated header 'X-Forwarded-For'"
}

@test "ingress jupyter: proxy context headers without the prefix are 403" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-Context: /user/ada/proxy/8767" "X-ProxyContextPath: /user/ada/proxy/8767"
	refused 403 "proxy context headers need X-Forwarded-Context, X-ProxyContextPath and X-Forwarded-Prefix together"
}

@test "ingress jupyter: X-Forwarded-Host without -Proto is 403" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-Host: hub.example.org"
	refused 403 "X-Forwarded-Host and X-Forwarded-Proto come only as a pair"
}

@test "ingress jupyter: an X-Forwarded-For chain of nine, or of a name, is 403" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-For: $(seq -s ', ' -f '10.0.0.%g' 1 9)"
	refused 403 "X-Forwarded-For must be 1-8 addresses"
	run -0 send /sessions "X-Forwarded-For: ada.example.org"
	refused 403 "X-Forwarded-For must be 1-8 addresses"
}

@test "ingress jupyter: a forwarded host or scheme other than the origin's is 403" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-Host: evil.example" "X-Forwarded-Proto: https"
	refused 403 "forwarded host or scheme does not match the origin"
	run -0 send /sessions "X-Forwarded-Host: hub.example.org" "X-Forwarded-Proto: http"
	refused 403 "forwarded host or scheme does not match the origin"
}

@test "ingress jupyter: a forwarded prefix other than the base path is 403" {
	serve_start "${J[@]}"
	run -0 send /sessions "X-Forwarded-Prefix: /user/eve/proxy/8767"
	refused 403 "a forwarded prefix does not match the base path"
}

@test "ingress jupyter: the Origin must be the external one" {
	serve_start "${J[@]}"
	run -0 send /sessions "Origin: http://$HOSTPORT"
	refused 403 "Origin 'http://$HOSTPORT' is not this gateway's"
	run -0 send /sessions "Origin: https://hub.example.org"
	[ "$output" = '200 {"sessions":[]}' ]
}

# ---- per request: trusted-proxy ----

@test "ingress trusted: a client outside the trusted sources is 403" {
	serve_start --ingress trusted-proxy --origin https://lab.example.org --base-path /hw --trusted-source 10.0.0.0/8
	run -0 send /hw/sessions "${TH[@]}"
	refused 403 "the client is not a trusted proxy source"
}

@test "ingress trusted: each of the four forwarding headers is required" {
	serve_start "${T[@]}"
	for i in 0 1 2 3; do
		h=("${TH[@]}")
		unset "h[$i]"
		run -0 send /hw/sessions "${h[@]}"
		refused 403 "a trusted proxy must send X-Forwarded-For, -Host, -Proto and -Prefix"
	done
	run -0 send /hw/sessions "${TH[@]}"
	[ "$output" = '200 {"sessions":[]}' ]
}

@test "ingress trusted: an X-Forwarded-For of two addresses is 403" {
	serve_start "${T[@]}"
	run -0 send /hw/sessions "X-Forwarded-For: 192.0.2.7, 10.0.0.1" "${TH[@]:1}"
	refused 403 "X-Forwarded-For must be one address"
}

@test "ingress trusted: a forwarded host, scheme or prefix other than configured is 403" {
	serve_start "${T[@]}"
	run -0 send /hw/sessions "${TH[0]}" "X-Forwarded-Host: evil.example" "${TH[@]:2}"
	refused 403 "forwarded host, scheme or prefix does not match the origin and base path"
	run -0 send /hw/sessions "${TH[@]:0:3}" "X-Forwarded-Prefix: /other"
	refused 403 "forwarded host, scheme or prefix does not match the origin and base path"
}

@test "ingress trusted: Jupyter's context headers are 403" {
	serve_start "${T[@]}"
	run -0 send /hw/sessions "${TH[@]}" "X-ProxyContextPath: /hw"
	refused 403 "proxy context headers are refused from a trusted proxy"
}

@test "ingress trusted: the identity header must arrive with its value" {
	serve_start "${T[@]}" --identity-header X-Lab-User:ada
	run -0 send /hw/sessions "${TH[@]}"
	refused 403 "the identity header is missing or wrong"
	run -0 send /hw/sessions "${TH[@]}" "X-Lab-User: eve"
	refused 403 "the identity header is missing or wrong"
	run -0 send /hw/sessions "${TH[@]}" "X-Lab-User: ada"
	[ "$output" = '200 {"sessions":[]}' ]
}

@test "ingress trusted: the prefix is preserved: a path outside it is 404" {
	serve_start "${T[@]}"
	run -0 send /sessions "${TH[@]}"
	refused 404 "not under the base path"
}

@test "ingress trusted: with --proxy-strips-prefix the prefix must be gone" {
	serve_start "${T[@]}" --proxy-strips-prefix
	run -0 send /hw/sessions "${TH[@]}"
	refused 400 "the proxy should have taken the base path off"
	run -0 send /sessions "${TH[@]}"
	[ "$output" = '200 {"sessions":[]}' ]
}

# ---- the modes end to end ----

@test "ingress end to end: behind a Jupyter-like prefix proxy: assets, REST, SSE and WebSocket" {
	load agent
	mkdir www
	printf '<!doctype html><meta name="heartwood-gateway-base" content="__HW_BASE__"><title>hw</title>\n' >www/index.html
	printf 'console.log(1);\n' >www/app.js
	: >backend
	/usr/bin/python3 "$BATS_TEST_DIRNAME/prefix_proxy.py" /user/ada/proxy/8767 backend >proxy.port 2>proxy.err 3>&- &
	PROXY=$!
	wait_for test -s proxy.port
	P=$(cat proxy.port)
	serve_start --ingress jupyter-proxy --origin "http://127.0.0.1:$P" \
		--base-path /user/ada/proxy/8767 --proxy-strips-prefix --web-root "$PWD/www"
	echo "$HOSTPORT" >backend
	[ "$URL" = "http://127.0.0.1:$P/user/ada/proxy/8767/" ]
	run -0 curl -s "${URL}"
	[[ "$output" == *'content="/user/ada/proxy/8767"'* ]]
	run -0 curl -s -D h.txt "${URL}app.js"
	[ "$output" = 'console.log(1);' ]
	grep -qi '^Content-Type: text/javascript' h.txt
	run -0 curl -s "${URL}sessions/default" -X POST
	[ "$(jq -r .session_id <<<"$output")" = session-main ]
	append_n 2
	curl -sN "${URL}sessions/session-main/events/stream?after=0" >sse.txt 2>/dev/null 3>&- &
	cpid=$!
	/usr/bin/python3 "$BATS_TEST_DIRNAME/ws_client.py" "$URL" \
		"/sessions/session-main/events?after=-1" "http://127.0.0.1:$P" 4 >ws.txt 2>ws.err 3>&- &
	wpid=$!
	wait_for grep -q '"sequence":1' sse.txt
	append_n 2
	rc=0
	wait "$wpid" || rc=$?
	[ "$rc" = 0 ] || { cat ws.err; return 1; }
	wait_for sh -c "sed -n 's/^data: //p' sse.txt | jq -s -c '[.[].events[].sequence]' | grep -qx '\[1,2,3\]'"
	kill "$cpid"
	[ "$(jq -c '[.events[].sequence]' ws.txt | jq -s -c add)" = '[0,1,2,3]' ]
	# straight to the gateway, past the proxy, the same path is refused
	HOST=127.0.0.1:$P run -0 send /user/ada/proxy/8767/sessions
	refused 400 "the proxy should have taken the base path off"
}

@test "ingress end to end: trusted proxy, with the identity header, preserving the prefix" {
	serve_start "${T[@]}" --identity-header X-Lab-User:ada
	run -0 send /hw/sessions "${TH[@]}" "X-Lab-User: ada"
	[ "$output" = '200 {"sessions":[]}' ]
	run -0 send /hw/project/capabilities "${TH[@]}" "X-Lab-User: ada" "Origin: https://lab.example.org"
	[[ "$output" == 200\ *'"platform_id":"generic"'* ]]
}
