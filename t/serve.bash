# t/serve.bash - helpers for the hw-serve suites.  Load after lib (and
# agent, for the suites that run the agent).

# serve_start [ARGS...]: hw-serve on a free loopback port; URL, SERVE_PID
serve_start() {
	S=${BATS_TEST_TMPDIR:-.}
	hw-serve --port 0 "$@" >"$S/serve.json" 2>"$S/serve.err" 3>&- &
	SERVE_PID=$!
	for _ in $(seq 1200); do	# 60 s: a sanitizer build on a busy machine
		jq -e .url "$S/serve.json" >/dev/null 2>&1 && break
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.05
	done
	URL=$(jq -r .url "$S/serve.json" 2>/dev/null)
	[ -n "$URL" ] && [ "$URL" != null ] || {
		echo "hw-serve did not start"; cat "$S/serve.err"; return 1; }
	ORIGIN=$(jq -r .url "$S/serve.json" | sed 's|^\(https*://[^/]*\).*|\1|')
	HOSTPORT=$(jq -r .listen "$S/serve.json")
	HOSTPORT=${HOSTPORT#http://}
	export URL ORIGIN HOSTPORT
}

# serve_stop [SIGNAL]: stop hw-serve (SIGTERM); its exit status in
# SERVE_STATUS
serve_stop() {
	SERVE_STATUS=
	[ -n "$SERVE_PID" ] || return 0
	kill "-${1:-TERM}" "$SERVE_PID" 2>/dev/null
	SERVE_STATUS=0
	wait "$SERVE_PID" || SERVE_STATUS=$?
	SERVE_PID=
}

# req METHOD PATH [CURL-ARGS...]: the status code, a space, the body
# (PATH taken from the URL hw-serve printed; direct-loopback only)
req() {
	local method=$1 path=$2
	shift 2
	local S=${BATS_TEST_TMPDIR:-.}
	curl -s --path-as-is -X "$method" -o "$S/body.out" -w '%{http_code}' \
		"$@" "${URL%/}$path" >"$S/code.out"
	printf '%s %s' "$(cat "$S/code.out")" "$(cat "$S/body.out")"
}

# raw BYTES-FILE: send a request as it is (python, no client rewriting);
# prints the status code, then the body
raw() { /usr/bin/python3 "$BATS_TEST_DIRNAME/http_raw.py" "$HOSTPORT" "$@"; }

# envelope ID KIND PAYLOAD [SID]: a command envelope
envelope() {
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"%s","session_id":"%s","kind":"%s","actor_id":"human","created_at":"2026-12-02T00:00:00Z","payload":%s}' \
		"$1" "${4:-session-main}" "$2" "$3"
}

# wait_for CMD...: poll CMD until it succeeds, for up to 20 seconds
wait_for() {
	for _ in $(seq 400); do
		"$@" && return 0
		sleep 0.05
	done
	echo "timed out waiting for: $*"
	return 1
}

# send PATH [HEADER...]: a raw GET of PATH with Host (HOST, default the
# gateway's; HOST=- sends none) and each HEADER line; prints the status
# code, a space and the body
send() {
	local path=$1 h
	shift
	{
		printf 'GET %s HTTP/1.1\r\n' "$path"
		if [ "${HOST:-}" != - ]; then printf 'Host: %s\r\n' "${HOST:-$HOSTPORT}"; fi
		for h in "$@"; do printf '%s\r\n' "$h"; done
		printf 'Connection: close\r\n\r\n'
	} >"${BATS_TEST_TMPDIR:-.}/request.bin"
	raw <"${BATS_TEST_TMPDIR:-.}/request.bin"
}

# refused STATUS REASON: $output is that ingress refusal
refused() {
	[ "$output" = "$1 {\"code\":\"HW-INGRESS-002\",\"error\":\"$2\"}" ] || {
		echo "got: $output"; return 1; }
}

# config_refused REASON ARGS...: hw-serve ARGS exits 2 with HW-INGRESS-001
config_refused() {
	local why=$1
	shift
	run -2 --separate-stderr hw-serve --port 0 "$@"
	[ -z "$output" ] && [ "$stderr" = "hw-serve: HW-INGRESS-001: $why" ] || {
		echo "got: $status '$stderr'"; return 1; }
}
