#!/usr/bin/env bats
# hw-agent: no reply breaks a session.  The model's text is kept up to
# 1 MiB and cut with a note past it; a tool call whose arguments exceed
# 4 MiB of canonical JSON, or whose name exceeds 256 bytes, refuses the
# reply as HW-AGENT-011 (a cut would change what runs); a proposal's
# summary field holds at most 240 characters.  After each reply, however
# large or however escaped, hw-audit verify and hw-session replay succeed.

load lib
load agent

TEXT_MAX=1048576
ARGS_MAX=4194304

setup() {
	agent_setup
	SRV=
}

teardown() {
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null
		wait "$SRV" 2>/dev/null
	fi
	agent_teardown
}

# readable: the session verifies and replays whole
readable() {
	run -0 hw-audit verify --session session-main
	run -0 hw-session replay session-main
	[ "${#lines[@]}" -gt 0 ]
}

# stream_serve N TEXT: t/sse_server.py streaming one reply of N deltas,
# each TEXT repeated to 1 MiB
stream_serve() {
	python3 - "$1" "$2" >script.json <<'PY'
import json, sys
n, t = int(sys.argv[1]), json.loads('"%s"' % sys.argv[2])
piece = t * (1048576 // len(t))
def chunk(d, f=None):
    return json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": d, "finish_reason": f}]})
ev = [chunk({"role": "assistant"})] + [chunk({"content": piece})] * n
ev.append(chunk({}, "stop"))
print(json.dumps([{"type": "text/event-stream", "events": ev}]))
PY
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err &
	SRV=$!
	for _ in $(seq 600); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the test model server did not start"; return 1; }
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
}

# last_len FILE: the length of the newest agent message's line in FILE
last_len() { grep agent_message.emitted "$1" | tail -n 1 | head -c -1 | wc -c; }

# text_turn N: a replay turn whose content is N bytes of y
text_turn() { python3 -c 'import json, sys; print(json.dumps({"content": "y" * int(sys.argv[1])}))' "$1"; }

# call_turn NAME SUMMARY-BYTES: a replay turn with one call whose summary
# is that long; ARGS_LEN is its arguments' canonical length
call_turn() {
	python3 -c 'import json, sys; a = {"command": "true", "security_risk": "LOW", "summary": "s" * int(sys.argv[2])}; print(json.dumps({"tool_calls": [{"id": "a", "name": sys.argv[1], "arguments": a}]}))' "$1" "$2"
}
args_len() { python3 -c 'import json, sys; print(len(json.dumps({"command": "true", "security_risk": "LOW", "summary": "s" * int(sys.argv[1])}, separators=(",", ":"), sort_keys=True)))' "$1"; }
fill() { echo $(($1 - $(args_len 0))); }

@test "bounds: a 12 MB streamed reply is recorded cut to 1 MiB with a note, and the session reads" {
	stream_serve 12 x
	chat c1 "say a lot"
	run -0 --separate-stderr hw-agent run session-main --stream
	# what is kept is what was shown: the first delta, once
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jq -r '.text | length' <<<"${lines[0]}")" -eq "$TEXT_MAX" ]
	readable
	hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content' >kept
	[ "$(head -c "$TEXT_MAX" kept | tr -d x | wc -c)" -eq 0 ]
	[ "$(tail -c +$((TEXT_MAX + 1)) kept)" = $'\n\n[cut by heartwood: the text held 12582912 bytes; the first 1048576 are kept]' ]
	[ "$(proj '.lifecycle.status')" = '"idle"' ]
}

@test "bounds: 4 MiB of control characters (six bytes each in an event) still make a readable line" {
	stream_serve 4 '\u0001'
	chat c1 "say a lot"
	run -0 --separate-stderr hw-agent run session-main
	readable
	note=$'\n\n[cut by heartwood: the text held 4194304 bytes; the first 1048576 are kept]'
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content | length')" -eq $((TEXT_MAX + ${#note})) ]
	[ "$(last_len "$(sdir)/events.jsonl")" -gt $((6 * TEXT_MAX)) ]
}

@test "bounds: text of exactly 1 MiB is kept whole" {
	text_turn "$TEXT_MAX" >turns.jsonl
	serve turns.jsonl
	chat c1 "say a lot"
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content | length')" -eq "$TEXT_MAX" ]
	readable
}

@test "bounds: text one byte over 1 MiB is cut, with the note" {
	text_turn $((TEXT_MAX + 1)) >turns.jsonl
	serve turns.jsonl
	chat c1 "say a lot"
	run -0 hw-agent run session-main
	[[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content')" == *$'y\n\n[cut by heartwood: the text held 1048577 bytes; the first 1048576 are kept]' ]]
	readable
}

@test "bounds: a text cut never splits a character" {
	python3 -c 'import json; print(json.dumps({"content": "y" + "\u00e9" * 600000}))' >turns.jsonl
	serve turns.jsonl
	chat c1 "say a lot"
	run -0 hw-agent run session-main
	# 1 + 2 * 524287 bytes kept: the last whole character before the bound
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content' | head -c 1048575 | iconv -f UTF-8 -t UTF-8 | wc -c)" -eq 1048575 ]
	[[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content')" == *'the text held 1200001 bytes; the first 1048575 are kept]' ]]
	readable
}

@test "bounds: a 4.3 MB tool-call summary refuses the reply as HW-AGENT-011 and the session reads" {
	call_turn terminal 4300000 >turns.jsonl
	serve turns.jsonl
	chat c1 "do it"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: The model's reply held tool-call arguments of $(args_len 4300000) bytes, more than the 4194304 that are kept; it was not recorded and nothing of it runs." ]
	[ "$(proj '.lifecycle.status')" = '"error"' ]
	[ "$(hw-session replay session-main | jq -s 'map(select(.kind=="tool_call.proposed")) | length')" -eq 0 ]
	readable
}

@test "bounds: tool-call arguments of exactly 4 MiB are recorded; the summary field holds 240 characters" {
	call_turn terminal "$(fill "$ARGS_MAX")" >turns.jsonl
	serve turns.jsonl
	chat c1 "do it"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.lifecycle.status')" = '"waiting-for-confirmation"' ]
	hw-session replay session-main | jq -c 'select(.kind=="tool_call.proposed").payload | [(.arguments | tojson | length), (.summary | length)]' >got
	[ "$(cat got)" = "[$ARGS_MAX,240]" ]
	readable
}

@test "bounds: tool-call arguments one byte over 4 MiB refuse the reply" {
	call_turn terminal "$(fill $((ARGS_MAX + 1)))" >turns.jsonl
	serve turns.jsonl
	chat c1 "do it"
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-011: The model's reply held tool-call arguments of 4194305 bytes, "* ]]
	readable
}

@test "bounds: a tool name longer than 256 bytes refuses the reply" {
	call_turn "$(printf 'n%.0s' $(seq 257))" 10 >turns.jsonl
	serve turns.jsonl
	chat c1 "do it"
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: The model's reply named a tool with 257 bytes, more than the 256 a name may have; it was not recorded and nothing of it runs." ]
	readable
}

@test "bounds: a 2 MiB finish message is recorded cut to 1 MiB" {
	python3 -c 'import json; print(json.dumps({"tool_calls": [{"id": "f", "name": "finish", "arguments": {"message": "m" * 2097152}}]}))' >turns.jsonl
	serve turns.jsonl
	chat c1 "finish"
	run -0 hw-agent run session-main
	[ "$(proj '.lifecycle.status')" = '"finished"' ]
	[[ "$(hw-session replay session-main | jq -r 'select(.kind=="agent_message.emitted").payload.content')" == *'[cut by heartwood: the text held 2097152 bytes; the first 1048576 are kept]' ]]
	readable
}
