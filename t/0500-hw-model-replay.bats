#!/usr/bin/env bats
# hw-model serve --replay: the script's validation (each malformed case on
# its own, with its exact message), the announcement, non-streaming answers,
# every chunking style reassembled by an OpenAI-like reader
# (t/sse_reassemble.py) into the same message, bytes:N byte-identical to
# whole, CRLF and comments, determinism, expect, scripted failures, the
# exhausted script, request checks, what is logged, and how it stops.
#
# Each test starts its own server in the background on a free port of
# 127.0.0.1 and kills it in teardown.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	PIDS=()
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	cd / && rm -rf "$PROJ"
}

# A turn with content beyond ASCII and two tool calls (the second with the
# default id), and the message an OpenAI client reassembles from it.
TURN='{"content":"Let me look. Ünïcode 😀 here.","tool_calls":[{"id":"call-1","name":"terminal","arguments":{"command":"ls -la","security_risk":"LOW"}},{"name":"think","arguments":{"thought":"a \"quoted\"\nline"}}],"usage":{"prompt_tokens":10,"completion_tokens":5}}'
MSG='{"content":"Let me look. \u00dcn\u00efcode \ud83d\ude00 here.","finish_reason":"tool_calls","id":"replay-1","role":"assistant","tool_calls":[{"arguments":{"command":"ls -la","security_risk":"LOW"},"id":"call-1","name":"terminal","type":"function"},{"arguments":{"thought":"a \"quoted\"\nline"},"id":"call-1-2","name":"think","type":"function"}],"usage":{"completion_tokens":5,"prompt_tokens":10,"total_tokens":15}}'
ASK='{"model":"heartwood-replay","messages":[{"role":"user","content":"hi"}]}'
STREAM='{"model":"heartwood-replay","messages":[{"role":"user","content":"hi"}],"stream":true}'
STREAM_USAGE='{"messages":[],"stream":true,"stream_options":{"include_usage":true}}'

# script LINE...: the replay script s.jsonl
script() { printf '%s\n' "$@" >s.jsonl; }

# serve [ARGS]: start the replay model on s.jsonl; sets $SRV and $URL
serve() {
	local i
	hw-model serve --replay s.jsonl "$@" >srv.out 2>srv.err 3>&- &
	SRV=$!
	PIDS+=("$SRV")
	for ((i = 0; i < 100; i++)); do
		grep -q '}$' srv.out 2>/dev/null && break
		kill -0 "$SRV" 2>/dev/null || { echo "died: $(cat srv.err)"; return 1; }
		sleep 0.05
	done
	URL=$(jq -r .url srv.out)
	[[ $URL == http://127.0.0.1:* ]]
}

# stop: SIGTERM the server and wait for it; $rc is its exit status
stop() {
	kill -TERM "$SRV"
	rc=0
	wait "$SRV" || rc=$?
}

# exited PID: whether PID has exited (is gone or a zombie), within 5 s
exited() {
	local i s
	for ((i = 0; i < 100; i++)); do
		s=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 0
		[ "$s" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

# post BODY [CURL-ARGS]: the response body, a space and the status
post() {
	local b=$1
	shift
	curl -s -w ' %{http_code}' "$@" "$URL/chat/completions" -d "$b"
}

# stream [BODY]: the event-stream body of a streaming request
stream() { curl -sN "$URL/chat/completions" -d "${1:-$STREAM}"; }

reassemble() { python3 "$HW_ROOT/t/sse_reassemble.py" "$@"; }

# chunks FILE: the chunk objects of an event stream, one JSON array
chunks() { tr -d '\r' <"$1" | sed -n 's/^data: //p' | grep -v '^\[DONE\]$' | jq -s -c .; }

# bad LINE... : the script is refused with exit 65; $stderr is the message
bad() {
	script "$@"
	run -65 --separate-stderr hw-model serve --replay s.jsonl
	[ -z "$output" ]
}

# ---- the script ----

@test "script: a line that is not JSON" {
	bad '{"content": }'
	[ "$stderr" = "hw-model: s.jsonl:1: invalid JSON value at byte 13" ]
}

@test "script: a line that is not an object" {
	bad '[1]'
	[ "$stderr" = "hw-model: s.jsonl:1: a turn must be a JSON object" ]
}

@test "script: an unknown field in a turn" {
	bad '{"contnet":"x"}'
	[ "$stderr" = "hw-model: s.jsonl:1: unknown field 'contnet'" ]
}

@test "script: a duplicate field" {
	bad '{"content":"a","content":"b"}'
	[ "$stderr" = "hw-model: s.jsonl:1: duplicate key at byte 25" ]
}

@test "script: content that is not a string" {
	bad '{"content":3}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'content' must be a string or null" ]
}

@test "script: tool_calls that is empty" {
	bad '{"tool_calls":[]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls' must be a non-empty array" ]
}

@test "script: tool_calls that is not an array" {
	bad '{"tool_calls":{"name":"t","arguments":{}}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls' must be a non-empty array" ]
}

@test "script: a tool call that is not an object" {
	bad '{"tool_calls":["terminal"]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0]' must be an object" ]
}

@test "script: an unknown field in a tool call (the OpenAI wire shape is not the script's)" {
	bad '{"tool_calls":[{"name":"t","arguments":{},"type":"function"}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0]': unknown field 'type'" ]
}

@test "script: a tool call without a name" {
	bad '{"tool_calls":[{"arguments":{}}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0].name' must be a non-empty string" ]
}

@test "script: a tool call with an empty name" {
	bad '{"tool_calls":[{"name":"","arguments":{}}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0].name' must be a non-empty string" ]
}

@test "script: arguments given as a JSON string" {
	bad '{"tool_calls":[{"name":"t","arguments":"{}"}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0].arguments' must be an object" ]
}

@test "script: a tool call without arguments" {
	bad '{"tool_calls":[{"name":"t"}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0].arguments' must be an object" ]
}

@test "script: an id that is not a string" {
	bad '{"tool_calls":[{"id":7,"name":"t","arguments":{}}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[0].id' must be a non-empty string" ]
}

@test "script: two tool calls with one id" {
	bad '{"tool_calls":[{"id":"a","name":"t","arguments":{}},{"id":"a","name":"u","arguments":{}}]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'tool_calls[1].id' repeats the id of 'tool_calls[0]'" ]
}

@test "script: usage that is not an object" {
	bad '{"usage":[]}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage' must be an object" ]
}

@test "script: an unknown field in usage" {
	bad '{"usage":{"total_tokens":3}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage': unknown field 'total_tokens'" ]
}

@test "script: a negative token count" {
	bad '{"usage":{"prompt_tokens":-1}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage.prompt_tokens' must be a whole number from 0 to 1000000000000" ]
}

@test "script: a token count that is not whole" {
	bad '{"usage":{"completion_tokens":1.5}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage.completion_tokens' must be a whole number from 0 to 1000000000000" ]
}

@test "script: a cost that is not a number of dollars from 0" {
	bad '{"usage":{"cost":-0.5}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage.cost' must be a number of US dollars from 0 to 1000000" ]
	bad '{"usage":{"cost":"0.5"}}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'usage.cost' must be a number of US dollars from 0 to 1000000" ]
}

@test "script: an empty expect" {
	bad '{"content":"x","expect":""}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'expect' must be a non-empty string" ]
}

@test "script: a fail status it does not script" {
	bad '{"fail":404}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'fail' must be 401, 403, 429, 500 or \"drop\"" ]
}

@test "script: a fail status given as a string" {
	bad '{"fail":"429"}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'fail' must be 401, 403, 429, 500 or \"drop\"" ]
}

@test "script: content in a turn that fails with a status" {
	bad '{"fail":429,"content":"x"}'
	[ "$stderr" = "hw-model: s.jsonl:1: 'content' means nothing in a turn that fails with 429" ]
}

@test "script: the error names the line, counting blank lines" {
	bad '{"content":"a"}' '' '{"content":"b"}' '{"fail":"dropped"}'
	[ "$stderr" = "hw-model: s.jsonl:4: 'fail' must be 401, 403, 429, 500 or \"drop\"" ]
}

@test "script: a script with no turns" {
	printf '\n  \n' >s.jsonl
	run -65 --separate-stderr hw-model serve --replay s.jsonl
	[ "$stderr" = "hw-model: s.jsonl: the script holds no turns" ]
}

@test "script: a script that does not exist is 66" {
	run -66 --separate-stderr hw-model serve --replay nope.jsonl
	[ "$stderr" = "hw-model: cannot open 'nope.jsonl': No such file or directory" ]
}

@test "script: a directory is refused" {
	mkdir d
	run -65 --separate-stderr hw-model serve --replay d
	[ "$stderr" = "hw-model: refusing to read 'd': not a regular file" ]
}

@test "script: a last line without a newline is a turn" {
	printf '{"content":"a"}\n{"content":"b"}' >s.jsonl
	serve
	[ "$(jq -c .turns srv.out)" = 2 ]
}

# ---- usage ----

@test "usage: serve without --replay, or with an operand, is 2" {
	run -2 --separate-stderr hw-model serve
	[[ $stderr == usage:* ]]
	script '{"content":"a"}'
	run -2 --separate-stderr hw-model serve --replay s.jsonl extra
	run -2 --separate-stderr hw-model --replay s.jsonl
}

@test "usage: a bad chunking is 2" {
	script '{"content":"a"}'
	run -2 --separate-stderr hw-model serve --replay s.jsonl --chunk bytes:0
	[ "$stderr" = "hw-model: invalid chunking 'bytes:0': expected whole, llama, vllm, interleaved or bytes:N with N from 1 to 1048576" ]
	run -2 --separate-stderr hw-model serve --replay s.jsonl --chunk openai
}

@test "usage: a bad port is 2" {
	script '{"content":"a"}'
	run -2 --separate-stderr hw-model serve --replay s.jsonl --port 70000
	[ "$stderr" = "hw-model: invalid port '70000': expected 0 to 65535" ]
}

# ---- serving ----

@test "serve: one announcement line on stdout, the banner on stderr, loopback only" {
	script '{"content":"a"}' '{"content":"b"}'
	serve
	port=${URL#http://127.0.0.1:}
	port=${port%/v1}
	[ "$(cat srv.out)" = "{\"url\":\"http://127.0.0.1:$port/v1\",\"model\":\"heartwood-replay\",\"replay\":true,\"script\":\"s.jsonl\",\"turns\":2}" ]
	[ "$(cat srv.err)" = "hw-model: replay model (scripted turns, not a real model) serving s.jsonl at $URL" ]
	# the listening socket is 127.0.0.1 (0100007F) and nothing else
	hex=$(printf '%04X' "$port")
	[ "$(awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" {print $2}' /proc/net/tcp /proc/net/tcp6)" = "0100007F:$hex" ]
}

@test "serve: --port binds the port asked for; a port in use is 69" {
	script '{"content":"a"}'
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	serve --port "$port"
	[ "$URL" = "http://127.0.0.1:$port/v1" ]
	run -69 --separate-stderr hw-model serve --replay s.jsonl --port "$port"
	[ "$stderr" = "hw-model: cannot listen on '127.0.0.1:$port': Address already in use" ]
	[ -z "$output" ]
}

@test "serve: GET /v1/models says it is a replay model" {
	script '{"content":"a"}'
	serve
	[ "$(curl -s "$URL/models")" = '{"object":"list","data":[{"id":"heartwood-replay","object":"model","created":0,"owned_by":"heartwood-replay (scripted replay, not a real model)"}]}' ]
}

@test "serve: other routes and methods are 404" {
	script '{"content":"a"}'
	serve
	[ "$(curl -s -w ' %{http_code}' "$URL/")" = '{"error":{"message":"replay: not found","type":"not_found","param":null,"code":null}} 404' ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/chat/completions")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -d '{}' "$URL/models")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -d "$ASK" "$URL/completions")" = 404 ]
	# none of them took the turn
	[ "$(post "$ASK" | jq -r .id)" = replay-1 ]
}

@test "non-streaming: a chat.completion with tool calls whose arguments are JSON text" {
	script "$TURN"
	serve
	curl -s -D h -o body "$URL/chat/completions" -d "$ASK"
	[ "$(cat body)" = '{"id":"replay-1","object":"chat.completion","created":0,"model":"heartwood-replay","choices":[{"index":0,"message":{"role":"assistant","content":"Let me look. \u00dcn\u00efcode \ud83d\ude00 here.","tool_calls":[{"id":"call-1","type":"function","function":{"name":"terminal","arguments":"{\"command\":\"ls -la\",\"security_risk\":\"LOW\"}"}},{"id":"call-1-2","type":"function","function":{"name":"think","arguments":"{\"thought\":\"a \\\"quoted\\\"\\nline\"}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}' ]
	head -1 h | grep -q '^HTTP/1.1 200'
	grep -qix 'content-type: application/json.' h
}

@test "non-streaming: absent content is null, no tool_calls, finish stop, usage 0" {
	script '{}' '{"content":"only text"}'
	serve
	[ "$(post "$ASK")" = '{"id":"replay-1","object":"chat.completion","created":0,"model":"heartwood-replay","choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}} 200' ]
	curl -s "$URL/chat/completions" -d "$ASK" >body
	[ "$(reassemble --completion <body)" = '{"content":"only text","finish_reason":"stop","id":"replay-2","role":"assistant","tool_calls":[],"usage":{"completion_tokens":0,"prompt_tokens":0,"total_tokens":0}}' ]
}

@test "non-streaming: the reader's view of the completion is the message" {
	script "$TURN"
	serve
	curl -s "$URL/chat/completions" -d "$ASK" >body
	run -0 reassemble --completion <body
	[ "$output" = "$MSG" ]
}

# ---- streaming ----

@test "stream --chunk whole (the default): one chunk, a finish chunk, a usage-only chunk when asked, [DONE]" {
	script "$TURN" "$TURN"
	serve
	curl -sN -D h "$URL/chat/completions" -d "$STREAM_USAGE" >body
	grep -qix 'content-type: text/event-stream.' h
	run -0 reassemble <body
	[ "$output" = "$MSG" ]
	c=$(chunks body)
	[ "$(jq length <<<"$c")" = 3 ]
	jq -e '.[0].choices[0].delta.tool_calls | length == 2 and .[1].index == 1' <<<"$c"
	jq -e '.[1].choices[0] == {"index":0,"delta":{},"finish_reason":"tool_calls"}' <<<"$c"
	jq -e '.[2].choices == [] and .[2].usage.total_tokens == 15' <<<"$c"
	[ "$(tail -c 14 body)" = "$(printf 'data: [DONE]\n\n')" ]
	# without include_usage, no usage at all
	stream >body2
	jq -e 'length == 2 and all(has("usage") | not)' <<<"$(chunks body2)"
}

@test "stream --chunk llama: null content first, small pieces, finish and usage on the last chunk" {
	script "$TURN"
	serve --chunk llama
	stream >body
	run -0 reassemble <body
	[ "$output" = "$MSG" ]
	c=$(chunks body)
	jq -e '.[0].choices[0].delta == {"role":"assistant","content":null}' <<<"$c"
	jq -e '[.[].choices[0].delta.content // empty | length] | max == 3' <<<"$c"
	jq -e '[.[].choices[0].delta.tool_calls[0]?.function.arguments | length] | max == 5' <<<"$c"
	# the head of each call carries its id, name and first arguments
	jq -e '[.[].choices[0].delta.tool_calls[0]? | select(.id)] | length == 2 and all(.function.name and (.function.arguments | length) == 5)' <<<"$c"
	jq -e '([.[].choices[0].finish_reason] | .[-1] == "tool_calls" and (.[:-1] | all(. == null)))' <<<"$c"
	jq -e '[.[] | select(has("usage"))] | length == 1' <<<"$c"
	jq -e '.[-1].usage.total_tokens == 15 and (.[-1].choices[0].delta.tool_calls | length == 1)' <<<"$c"
}

@test "stream --chunk vllm: role-only first chunk, empty arguments with the head, a separate finish chunk, usage only when asked" {
	script "$TURN" "$TURN"
	serve --chunk vllm
	stream "$STREAM_USAGE" >body
	run -0 reassemble <body
	[ "$output" = "$MSG" ]
	c=$(chunks body)
	jq -e '.[0].choices[0].delta == {"role":"assistant","content":""}' <<<"$c"
	jq -e '[.[].choices[0]?.delta.tool_calls[0]? | select(.id)] | length == 2 and all(.function.arguments == "")' <<<"$c"
	jq -e '.[-2].choices[0] == {"index":0,"delta":{},"finish_reason":"tool_calls"}' <<<"$c"
	jq -e '.[-1].choices == [] and .[-1].usage == {"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}' <<<"$c"
	jq -e '[.[] | select(has("usage"))] | length == 1' <<<"$c"
	stream >body2
	[ "$(reassemble <body2 | jq -c '.usage, .id')" = "$(printf 'null\n"replay-2"')" ]
	jq -e '.[-1].choices[0].finish_reason == "tool_calls"' <<<"$(chunks body2)"
}

@test "stream --chunk interleaved: the pieces of two calls alternate between indexes" {
	script "$TURN"
	serve --chunk interleaved
	stream "$STREAM_USAGE" >body
	run -0 reassemble <body
	[ "$output" = "$MSG" ]
	idx=$(jq -r '[.[].choices[0]?.delta.tool_calls[0]?.index // empty | tostring] | join("")' <<<"$(chunks body)")
	[[ $idx =~ ^(01)+0*$ ]]
	[ "${#idx}" -gt 10 ]
}

@test "stream: a turn without tool calls finishes with stop in every style" {
	script '{"content":"plain answer"}'
	for style in whole llama vllm interleaved bytes:3; do
		serve --chunk "$style"
		stream >body
		[ "$(reassemble <body | jq -c 'del(.usage)')" = '{"content":"plain answer","finish_reason":"stop","id":"replay-1","role":"assistant","tool_calls":[]}' ]
		# usage unasked comes only from llama, which always sends it
		[ "$(reassemble <body | jq -c .usage)" = "$([ "$style" = llama ] && echo '{"completion_tokens":0,"prompt_tokens":0,"total_tokens":0}' || echo null)" ]
		stop
	done
}

@test "stream --crlf --comments: CR LF line ends, keep-alive comments between events, the same message" {
	script "$TURN"
	serve --chunk vllm --crlf --comments
	stream "$STREAM_USAGE" >body
	lines=$(tr -cd '\n' <body | wc -c)
	[ "$lines" -gt 20 ]
	[ "$(grep -c $'\r$' body)" = "$lines" ]
	events=$(grep -c '^data: ' body)
	[ "$(grep -c '^: keep-alive'$'\r''$' body)" = $((events - 1)) ]
	head -c 6 body | grep -q '^data: '
	for feed in 1 2 3 5 4096; do
		[ "$(reassemble --feed "$feed" <body)" = "$MSG" ]
	done
}

@test "stream --chunk bytes:N for N in 1, 7, 64 and 4096 is byte-identical to whole, written N bytes at a time" {
	script "$TURN"
	serve --crlf --comments
	stream "$STREAM_USAGE" >whole
	stop
	for n in 1 7 64 4096; do
		serve --chunk "bytes:$n" --crlf --comments
		stream "$STREAM_USAGE" >"b$n"
		cmp whole "b$n"
		stop
	done
	# the HTTP chunks on the wire are N bytes each
	serve --chunk bytes:7
	curl -sN --raw "$URL/chat/completions" -d "$STREAM" >raw
	cmp <(head -c 24 raw) <(printf '7\r\ndata: {\r\n7\r\n"id":"r\r\n')
	[ "$(reassemble <b64)" = "$MSG" ]
}

@test "stream: the same script and options give byte-identical responses" {
	script "$TURN" "$TURN"
	serve --chunk llama --crlf
	stream >a1
	curl -s "$URL/chat/completions" -d "$ASK" >c1
	stop
	serve --chunk llama --crlf
	stream >a2
	curl -s "$URL/chat/completions" -d "$ASK" >c2
	cmp a1 a2
	cmp c1 c2
	[ "$(jq -r .id c1)" = replay-2 ]
}

# ---- expect ----

@test "expect: a request without the text is 400 replay_mismatch, logged, and the turn is not consumed" {
	script '{"content":"saw it","expect":"total 42"}' '{"content":"next"}'
	serve
	[ "$(post "$ASK")" = '{"error":{"message":"replay: expected \"total 42\" not found in the request","type":"replay_mismatch","param":null,"code":null}} 400' ]
	grep -qx "hw-model: POST /v1/chat/completions turn 1/2: 400 replay mismatch: expected 'total 42' not found in the request (script line 1)" srv.err
	run -0 post '{"messages":[{"role":"tool","tool_call_id":"call-1","content":"total 42\n"}]}'
	[ "$(jq -r .choices[0].message.content <<<"${output% *}")" = "saw it" ]
	[ "$(post "$ASK" | jq -r .choices[0].message.content)" = next ]
}

@test "expect: text with newlines and non-ASCII matches however the client escaped it" {
	script '{"content":"ok","expect":"line one\nline two é"}'
	serve
	run -0 post '{"messages":[{"role":"tool","content":"before line one\nline two \u00e9 after"}]}'
	[[ $output == *' 200' ]]
}

@test "expect: a streaming request is checked the same way" {
	script '{"content":"ok","expect":"rejected by the researcher"}'
	serve --chunk llama
	run -0 curl -s -w ' %{http_code}' "$URL/chat/completions" -d "$STREAM"
	[[ $output == *'"type":"replay_mismatch"'*' 400' ]]
	stream '{"stream":true,"messages":[{"role":"tool","content":"rejected by the researcher: too risky"}]}' >body
	[ "$(reassemble <body | jq -r .content)" = ok ]
}

# ---- scripted failures ----

@test "fail 429: rate_limit_exceeded with Retry-After: 0, and the retry gets the next turn" {
	script '{"fail":429}' '{"content":"after the retry"}'
	serve
	curl -s -D h -o body -w '%{http_code}' "$URL/chat/completions" -d "$ASK" >status
	[ "$(cat status)" = 429 ]
	[ "$(cat body)" = '{"error":{"message":"replay: scripted failure: rate limit exceeded","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}' ]
	grep -qix 'retry-after: 0.' h
	[ "$(post "$ASK" | jq -r .choices[0].message.content)" = "after the retry" ]
}

@test "fail 500, 401 and 403: OpenAI-style errors, each consuming its turn" {
	script '{"fail":500}' '{"fail":401}' '{"fail":403,"expect":"hi"}' '{"content":"fine"}'
	serve
	[ "$(post "$ASK")" = '{"error":{"message":"replay: scripted failure: server error","type":"server_error","param":null,"code":"server_error"}} 500' ]
	[ "$(post "$ASK")" = '{"error":{"message":"replay: scripted failure: invalid api key","type":"invalid_request_error","param":null,"code":"invalid_api_key"}} 401' ]
	[ "$(post "$STREAM")" = '{"error":{"message":"replay: scripted failure: forbidden","type":"permission_error","param":null,"code":"forbidden"}} 403' ]
	[ "$(post "$ASK" | jq -r .choices[0].message.content)" = fine ]
	! grep -qi 'retry-after' <(curl -s -D - -o /dev/null "$URL/chat/completions" -d "$ASK")
}

@test "fail drop: headers and half an event, then the connection closes; the retry gets the next turn" {
	script '{"fail":"drop","content":"cut short"}' '{"content":"whole"}'
	serve
	run -18 curl -sN "$URL/chat/completions" -d "$STREAM"
	[[ $output == 'data: {"id":"replay-1","object":"chat.completion.chunk"'* ]]
	[[ $output != *$'\n'* ]]
	[ "$(post "$ASK" | jq -r .choices[0].message.content)" = whole ]
	grep -qx 'hw-model: POST /v1/chat/completions turn 1/2: 200, then the connection dropped (scripted failure)' srv.err
}

@test "fail drop: a non-streaming request is dropped too" {
	script '{"fail":"drop"}'
	serve
	run -18 curl -s "$URL/chat/completions" -d "$ASK"
	[[ $output == 'data: {'* ]]
}

# ---- the end of the script ----

@test "exhausted: every request after the last turn is 410" {
	script '{"content":"only"}'
	serve
	post "$ASK" >/dev/null
	[ "$(post "$ASK")" = '{"error":{"message":"replay: script exhausted","type":"replay_exhausted","param":null,"code":null}} 410' ]
	[ "$(post "$STREAM")" = '{"error":{"message":"replay: script exhausted","type":"replay_exhausted","param":null,"code":null}} 410' ]
}

@test "--exit-when-done: exits 0 once the last turn has been served" {
	script '{"content":"one"}' '{"fail":429}' '{"content":"three"}'
	serve --exit-when-done --chunk llama
	post "$ASK" >/dev/null
	post "$ASK" >/dev/null
	kill -0 "$SRV"
	stream >body
	[ "$(reassemble <body | jq -r .content)" = three ]
	exited "$SRV"
	rc=0
	wait "$SRV" || rc=$?
	[ "$rc" -eq 0 ]
	[ "$(wc -l <srv.out)" -eq 1 ]
}

@test "signals: SIGTERM and SIGINT stop it with 0" {
	script '{"content":"a"}'
	serve
	stop
	[ "$rc" -eq 0 ]
	serve
	kill -INT "$SRV"
	rc=0
	wait "$SRV" || rc=$?
	[ "$rc" -eq 0 ]
}

# ---- requests ----

@test "requests: a body over 8 MiB is 413; exactly 8 MiB is served; neither skips a turn" {
	script '{"content":"a"}' '{"content":"b"}'
	serve
	python3 -c 'import sys; n = int(sys.argv[1]); h = "{\"messages\":[{\"role\":\"user\",\"content\":\""; t = "\"}]}"; sys.stdout.write(h + "x" * (n - len(h) - len(t)) + t)' $((8 * 1024 * 1024 + 1)) >big
	python3 -c 'import sys; n = int(sys.argv[1]); h = "{\"messages\":[{\"role\":\"user\",\"content\":\""; t = "\"}]}"; sys.stdout.write(h + "x" * (n - len(h) - len(t)) + t)' $((8 * 1024 * 1024)) >max
	[ "$(stat -c %s big)" -eq 8388609 ]
	[ "$(curl -s -w ' %{http_code}' "$URL/chat/completions" --data-binary @big)" = '{"error":{"message":"replay: the request body is larger than 8 MiB","type":"invalid_request_error","param":null,"code":null}} 413' ]
	# from a client that sends the body without waiting for 100 Continue
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Expect:' "$URL/chat/completions" --data-binary @big)" = 413 ]
	# and when the size is not announced (chunked upload)
	[ "$(curl -s -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' "$URL/chat/completions" --data-binary @big)" = 413 ]
	[ "$(curl -s "$URL/chat/completions" --data-binary @max | jq -r .id)" = replay-1 ]
}

@test "requests: a body that is not JSON, or has no messages array, is 400 and takes no turn" {
	script '{"content":"a"}'
	serve
	[ "$(post 'not json')" = '{"error":{"message":"replay: the request body is not JSON","type":"invalid_request_error","param":null,"code":null}} 400' ]
	[ "$(post '{"model":"x"}')" = '{"error":{"message":"replay: the request has no messages array","type":"invalid_request_error","param":null,"code":null}} 400' ]
	[ "$(post '{"messages":{}}' -o /dev/null)" = ' 400' ]
	[ "$(post '[]' -o /dev/null)" = ' 400' ]
	[ "$(post '{"messages":[],"stream":"yes"}')" = '{"error":{"message":"replay: '"'stream'"' must be true or false","type":"invalid_request_error","param":null,"code":null}} 400' ]
	[ "$(post '{"messages":[],"stream":true,"stream_options":{"include_usage":1}}' -o /dev/null)" = ' 400' ]
	[ "$(post "$ASK" | jq -r .id)" = replay-1 ]
}

@test "requests: stderr logs metadata only, never the Authorization header or a body" {
	script '{"content":"a","expect":"hi"}' '{"fail":429}' '{"content":"c"}'
	serve
	auth=(-H 'Authorization: Bearer sk-header-secret-0123')
	curl -s "${auth[@]}" "$URL/models" >/dev/null
	post '{"messages":[{"role":"user","content":"sk-body-secret-4567"}]}' "${auth[@]}" >/dev/null
	post '{"messages":[{"role":"user","content":"hi sk-body-secret-4567"}]}' "${auth[@]}" >/dev/null
	post "$STREAM" "${auth[@]}" >/dev/null
	curl -sN "${auth[@]}" "$URL/chat/completions" -d "$STREAM" >/dev/null
	post 'sk-body-secret-4567' "${auth[@]}" >/dev/null
	post "$ASK" "${auth[@]}" >/dev/null
	curl -s "${auth[@]}" "$URL/nope?key=sk-query" >/dev/null
	refute grep -q 'sk-' srv.err
	refute grep -qi 'bearer' srv.err
	[ "$(tail -n +2 srv.err)" = "hw-model: GET /v1/models: 200
hw-model: POST /v1/chat/completions turn 1/3: 400 replay mismatch: expected 'hi' not found in the request (script line 1)
hw-model: POST /v1/chat/completions turn 1/3: 200
hw-model: POST /v1/chat/completions turn 2/3: 429 (scripted failure)
hw-model: POST /v1/chat/completions turn 3/3: 200 stream
hw-model: POST /v1/chat/completions: 400 (the request body is not JSON)
hw-model: POST /v1/chat/completions: 410 (the script is exhausted)
hw-model: GET /v1/nope: 404" ]
}
