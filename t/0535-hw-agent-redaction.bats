#!/usr/bin/env bats
# hw-agent: a credential value the agent knows of reaches no stored or
# shown text.  Each test is an attack: the model echoes the key in its
# text, in a tool call's arguments, split across streamed deltas; a
# reviewed command prints it, or its base64, percent or hex forms.  After
# each, every file under .heartwood/, the audit export, stdout and stderr
# are searched for the key and each form of it (t/leaks.py); the next
# model request is searched where the test can see it (t/sse_server.py).

load lib
load agent

KEY='sk-MARKER-~~~>>>???-0f9c2e7a41'

setup() {
	agent_setup
	export HW_API_KEY_ENV=MY_KEY MY_KEY="$KEY"
	SRV=
}

teardown() {
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null
		wait "$SRV" 2>/dev/null
	fi
	agent_teardown
}

pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
decide() { cmd "$1" "$2" "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" | hw-session command session-main >/dev/null; }

# leaks PATH...: where the key or a form of it shows (nothing: no leak)
leaks() { python3 "$HW_ROOT/t/leaks.py" "$KEY" "$@"; }

# no_leaks: nothing under .heartwood, in an audit export, or in what the
# agent runs wrote to out.*/err.* (and any extra paths given)
no_leaks() {
	hw-audit export --session session-main --output export.jsonl >/dev/null
	hw-session replay session-main >replay.jsonl
	hw-session project session-main >project.json
	run -0 leaks .heartwood export.jsonl replay.jsonl project.json out.* err.* "$@"
	[ -z "$output" ]
}

# agent ARGS...: hw-agent run session-main, stdout and stderr kept in
# out.N and err.N for no_leaks
agent() {
	local n=$((${AGENT_N:-0} + 1))
	AGENT_N=$n
	hw-agent run session-main "$@" >"out.$n" 2>"err.$n"
}

# sse_serve TURNS: t/sse_server.py answering with TURNS, a JSON array of
# {"text": [DELTA...]} or {"calls": [{"name", "arguments"}]}, streamed
sse_serve() {
	python3 - "$1" >script.json <<'PY'
import json, sys
out = []
def chunk(delta, finish=None):
    return json.dumps({"object": "chat.completion.chunk", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]})
for t in json.loads(sys.argv[1]):
    ev = [chunk({"role": "assistant"})]
    for d in t.get("text", []):
        ev.append(chunk({"content": d}))
    for i, c in enumerate(t.get("calls", [])):
        ev.append(chunk({"tool_calls": [{"index": i, "id": "call-%d" % i,
            "type": "function", "function": {"name": c["name"],
            "arguments": json.dumps(c["arguments"])}}]}))
    ev.append(chunk({}, "tool_calls" if t.get("calls") else "stop"))
    out.append({"type": "text/event-stream", "events": ev})
print(json.dumps(out))
PY
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err &
	SRV=$!
	for _ in $(seq 600); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the test model server did not start"; return 1; }
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
}

# terminal_turns COMMAND: a turn running COMMAND (LOW), then "Seen."
terminal_turns() {
	jq -cn --arg c "$1" '[{"calls": [{"name": "terminal", "arguments":
		{"summary": "Show it", "command": $c, "security_risk": "LOW"}}]},
		{"text": ["Seen."]}]'
}

# run_approved COMMAND: the model proposes COMMAND, the researcher allows
# it, it runs (its outcome recorded) and the model answers
run_approved() {
	sse_serve "$(terminal_turns "$1")"
	chat c1 "show it"
	agent
	decide c2 approve
	agent
	[ "$(proj '[.actions[].outcome | type]')" = '["object"]' ]
}

# result: the recorded output of the one command
result() { hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result'; }

@test "redaction: the test's leak finder sees the key and each of its forms" {
	python3 - "$KEY" >planted.txt <<'PY'
import base64, re, sys, urllib.parse
k = sys.argv[1].encode()
for a in range(3):
    print(base64.b64encode(b"x" * a + k).decode())
    print(base64.urlsafe_b64encode(b"y" * a + k).decode())
print(k.hex(), k.hex().upper())
q = urllib.parse.quote(k, safe="")
print(q, re.sub("%..", lambda m: m.group(0).lower(), q))
print("".join("%%%02X" % c for c in k), "".join("%%%02x" % c for c in k))
print(k.decode())
PY
	run -0 leaks planted.txt
	[ "$(wc -l <<<"$output")" -eq 13 ]
}

@test "redaction: the model's text that echoes the key is stored with a marker" {
	echo "{\"content\":\"Your key is $KEY, keep it safe.\"}" >turns.jsonl
	serve turns.jsonl
	chat c1 "what is my key"
	agent
	[ "$(proj '.conversation[-1].content')" = '"Your key is [REDACTED:credential], keep it safe."' ]
	no_leaks
}

@test "redaction: a key in a tool call's arguments is stored, shown and run as the marker" {
	jq -cn --arg k "$KEY" '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":("Use " + $k),"command":("printf %s \u0027" + $k + "\u0027 | tr a-z A-Z"),"security_risk":"LOW"}}]}' >turns.jsonl
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "use my key"
	agent
	[ "$(proj '.pendingApproval.actions[0].arguments.command')" = "\"printf %s '[REDACTED:credential]' | tr a-z A-Z\"" ]
	decide c2 approve
	agent
	# what ran is what was shown: the marker, upper-cased
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result')" = '[REDACTED:CREDENTIAL]' ]
	no_leaks
}

@test "redaction: a key in a tool call's argument names is replaced, each name kept apart" {
	jq -cn --arg k "$KEY" '{"tool_calls":[{"id":"a","name":"think","arguments":{($k):1,("x" + $k):2,"[REDACTED:credential]":3,"thought":"t"}}]}' >turns.jsonl
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "think"
	agent
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="tool_call.proposed").payload.arguments | keys')" = \
		'["[REDACTED:credential]","[REDACTED:credential]#2","thought","x[REDACTED:credential]"]' ]
	no_leaks
}

@test "redaction: a command that prints the key from a file is recorded without it, and the next request has none" {
	printf 'the key: %s\n' "$KEY" >planted.txt
	run_approved 'cat planted.txt'
	[ "$(result)" = 'the key: [REDACTED:credential]' ]
	[ "$(wc -l <requests.jsonl)" -eq 2 ]
	jq -c .body requests.jsonl >bodies.jsonl
	no_leaks bodies.jsonl
	grep -q 'the key: \[REDACTED:credential\]' bodies.jsonl
}

@test "redaction: a command that reads the agent's environment records no key" {
	run_approved 'tr "\0" "\n" < /proc/$PPID/environ; cat /proc/[0-9]*/environ 2>/dev/null | tr "\0" "\n" | grep "^MY_KEY="; true'
	jq -c .body requests.jsonl >bodies.jsonl
	no_leaks bodies.jsonl
}

@test "redaction: standard base64 of the key at each alignment is recorded as the marker" {
	printf '%s' "$KEY" | base64 -w0 >planted.txt
	for p in x xy; do echo; printf '%s%s' "$p" "$KEY" | base64 -w0; done >>planted.txt
	run_approved 'cat planted.txt'
	[ "$(result | grep -c REDACTED)" -eq 3 ]
	no_leaks
}

@test "redaction: URL-safe base64 of the key at each alignment is recorded as the marker" {
	for p in '' x xy; do printf '%s%s' "$p" "$KEY" | base64 -w0 | tr '+/' '-_'; echo; done >planted.txt
	grep -q -- - planted.txt
	run_approved 'cat planted.txt'
	[ "$(result | grep -c REDACTED)" -eq 3 ]
	no_leaks
}

@test "redaction: the percent-encoded key is recorded as the marker" {
	python3 -c 'import re, sys, urllib.parse; k = sys.argv[1]; q = urllib.parse.quote(k, safe=""); print("?key=" + q + "&x=1"); print(re.sub("%..", lambda m: m.group(0).lower(), q)); print("".join("%%%02x" % c for c in k.encode()))' "$KEY" >planted.txt
	run_approved 'cat planted.txt'
	[ "$(result | grep -c '\[REDACTED:credential\]')" -eq 3 ]
	[ "$(result | head -1)" = '?key=[REDACTED:credential]&x=1' ]
	no_leaks
}

@test "redaction: the key in hex is recorded as the marker" {
	printf %s "$KEY" >planted.txt
	run_approved "od -An -tx1 planted.txt | tr -d ' \n'; echo; od -An -tx1 planted.txt | tr -d ' \n' | tr a-f A-F"
	[ "$(result)" = $'[REDACTED:credential]\n[REDACTED:credential]' ]
	no_leaks
}

@test "redaction: a key split across two streamed deltas is redacted in the assembled text and never shown" {
	half=$(( ${#KEY} / 2 ))
	sse_serve "$(jq -cn --arg a "Key: ${KEY:0:$half}" --arg b "${KEY:$half} ok" '[{"text": [$a, $b]}]')"
	chat c1 "what is my key"
	agent --stream
	[ "$(proj '.conversation[-1].content')" = '"Key: [REDACTED:credential] ok"' ]
	[ "$(tail -1 out.1 | jq -r .text)" = 'Key: [REDACTED:credential] ok' ]
	# not even the first half was shown while the second was on its way
	refute grep -qF -- "${KEY:0:$half}" out.1
	no_leaks
}

@test "redaction: the key split over many small deltas (the replay model's llama chunks) is never shown" {
	echo "{\"content\":\"Your key is $KEY.\"}" >turns.jsonl
	hw-model serve --replay turns.jsonl --chunk llama >url.json 2>model.err 3>&- &
	MODEL_PID=$!
	for _ in $(seq 600); do jq -e .url url.json >/dev/null 2>&1 && break; sleep 0.05; done
	HW_BASE_URL=$(jq -r .url url.json)
	export HW_BASE_URL
	chat c1 "what is my key"
	agent --stream
	[ "$(wc -l <out.1)" -gt 10 ]
	[ "$(tail -1 out.1 | jq -r .text)" = 'Your key is [REDACTED:credential].' ]
	refute grep -qF -- "${KEY:0:8}" out.1
	no_leaks
}

@test "redaction: another credential variable's value the model echoes is redacted too" {
	other='sk-other-3b0e55c1d2a7f9'
	export OPENAI_API_KEY="$other"
	echo "{\"content\":\"The other key is $other.\"}" >turns.jsonl
	serve turns.jsonl
	chat c1 "what is the other key"
	agent
	[ "$(proj '.conversation[-1].content')" = '"The other key is [REDACTED:credential]."' ]
	run -1 grep -rlF -- "$other" .heartwood
	[ -z "$output" ]
}

@test "redaction: a key shorter than 8 bytes is not redacted, and wipes nothing" {
	export MY_KEY=abc1234
	echo '{"content":"abc1234 and a b c stay."}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	agent
	[ "$(proj '.conversation[-1].content')" = '"abc1234 and a b c stay."' ]
}

@test "redaction: a key of exactly 8 bytes is redacted" {
	export MY_KEY=abc12345
	echo '{"content":"abc12345 and abc1234 x"}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	agent
	[ "$(proj '.conversation[-1].content')" = '"[REDACTED:credential] and abc1234 x"' ]
}

@test "redaction: hw-append stores a credential value from its environment as the marker" {
	draft agent_message.emitted "{\"content\":\"k=$KEY\"}" | hw-append --session session-main >out.1 2>err.1
	[ "$(hw-session replay session-main | jq -r .payload.content)" = 'k=[REDACTED:credential]' ]
	no_leaks
}

@test "redaction: hw-append --file stores a credential value from its environment as the marker" {
	mkdir logs
	draft skill.installed "{\"note\":\"k=$KEY\"}" | hw-append --file logs/x.jsonl >out.1 2>err.1
	[ "$(jq -r .payload.note logs/x.jsonl)" = 'k=[REDACTED:credential]' ]
	run -0 leaks logs out.1 err.1
	[ -z "$output" ]
}

@test "redaction: HEARTWOOD_CUSTOM_MODEL_API_KEY's value is redacted in every program" {
	export HEARTWOOD_CUSTOM_MODEL_API_KEY=sk-custom-7e1d42b9a0
	draft agent_message.emitted '{"content":"c=sk-custom-7e1d42b9a0"}' | hw-append --session session-main >/dev/null
	[ "$(hw-session replay session-main | jq -r .payload.content)" = 'c=[REDACTED:credential]' ]
}

@test "redaction: a variable on the user's own credential allowlist is redacted by the agent" {
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	mkdir -p "$XDG_CONFIG_HOME/heartwood"
	printf '[credentials]\nallowlist = "LAB_TOKEN"\n' >"$XDG_CONFIG_HOME/heartwood/config.toml"
	export LAB_TOKEN=lab-5f0c7a9e13d2 NOT_LISTED=free-5f0c7a9e13d2
	echo '{"content":"lab-5f0c7a9e13d2 and free-5f0c7a9e13d2"}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	agent
	[ "$(proj '.conversation[-1].content')" = '"[REDACTED:credential] and free-5f0c7a9e13d2"' ]
}
