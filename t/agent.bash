# t/agent.bash - helpers for the suites that run the agent against the
# replay model (hw-model serve --replay).  Load after lib.

# agent_setup: a temporary project and a replay route without a key; the
# system prompt without the bundled skills (t/0916 tests those)
agent_setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	no_bundled_skills
	export HW_MODEL=openai/heartwood-replay HW_MODEL_RETRY_WAIT_MS=10
	unset HW_API_KEY_ENV HW_BASE_URL
	MODEL_PID= SRV=
}

# agent_teardown stops the replay model and removes the project
agent_teardown() {
	if [ -n "$MODEL_PID" ]; then
		kill "$MODEL_PID" 2>/dev/null
		wait "$MODEL_PID" 2>/dev/null
	fi
	if [ -n "$SRV" ]; then
		kill "$SRV" 2>/dev/null
		wait "$SRV" 2>/dev/null
	fi
	cd / && rm -rf "$PROJ"
}

# serve SCRIPT: start the replay model on SCRIPT and point the agent at it
serve() {
	hw-model serve --replay "$1" >url.json 2>model.err 3>&- &
	MODEL_PID=$!
	for _ in $(seq 600); do jq -e .url url.json >/dev/null 2>&1 && break; sleep 0.05; done
	jq -e .url url.json >/dev/null 2>&1 || { echo "the replay model did not start"; cat model.err; return 1; }
	HW_BASE_URL=$(jq -r .url url.json)
	export HW_BASE_URL
}

# capture: a stand-in model on loopback that answers every request with
# "Noted." and logs each one to requests.jsonl; the agent is pointed at it
capture() {
	local c='{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Noted."},"finish_reason":"stop"}]}'
	jq -cn --arg c "$c" '[{events: [$c]}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the stand-in model did not start"; return 1; }
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
}

# sent FILTER: jq FILTER over the messages of the last request, raw
sent() { tail -1 requests.jsonl | jq -r ".body.messages | $1"; }

# cmd ID KIND PAYLOAD: one command envelope for session-main
cmd() {
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"%s","session_id":"session-main","kind":"%s","actor_id":"human","created_at":"2026-12-02T00:00:00Z","payload":%s}\n' "$1" "$2" "$3"
}

# chat ID TEXT: the researcher asks, through hw-session command
chat() { cmd "$1" chat "{\"prompt\":\"$2\"}" | hw-session command session-main >/dev/null; }

# proj FILTER [ID]: jq FILTER over the session's projection
proj() { hw-session project "${2:-session-main}" | jq -c "$1"; }

# low_actions: a turn that only reads through the terminal and creates
# notes.md, both marked LOW and low for the rule analyzers too
low_actions() {
	cat >turns.jsonl <<'T'
{"content":"I will look and write notes.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Look","command":"ls -a","security_risk":"LOW"}},{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
T
}

# two_actions: a turn appending a line to ran.txt through the terminal and
# creating notes.md, both marked LOW, in turns.jsonl
two_actions() {
	cat >turns.jsonl <<'T'
{"content":"I will record a run and write notes.","tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Record a run","command":"echo run >> ran.txt","security_risk":"LOW"}},{"id":"b","name":"file_editor","arguments":{"summary":"Write notes","command":"create","path":"notes.md","file_text":"notes\n","security_risk":"LOW"}}]}
T
}
