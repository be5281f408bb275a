#!/usr/bin/env bats
# The credential class managed-identity (hw-policy(7) CREDENTIALS): on a
# platform whose adapter offers it (Terra), a route without a key variable
# or file whose base URL a managed-identity connection serves sends the
# platform identity's token, which the GCE metadata server gives (here a
# loopback stand-in, through GCE_METADATA_HOST).  The token stays in
# memory: a marker token reaches no file, argument, output or error text,
# even when the provider echoes it back.  Elsewhere the class is refused;
# a malformed metadata answer is a clear error; the route is
# platform-isolated only for a source the platform declares isolated.

load lib
load agent

TOKEN='ya29.MARKER-token-5d0c7e19a3b4'

setup() {
	agent_setup
	unset HW_API_KEY_ENV HW_API_KEY_FILE HW_CAPABILITY_TIER GOOGLE_PROJECT \
		HEARTWOOD_CARINA SLURM_CLUSTER_NAME HEARTWOOD_ISOLATED_SOURCES
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config HEARTWOOD_PLATFORM=terra \
		HEARTWOOD_PLATFORM_HOME=$PROJ HEARTWOOD_GPU_RUNTIME=none
	MD=
}
teardown() {
	if [ -n "$MD" ]; then
		kill "$MD" 2>/dev/null
		wait "$MD" 2>/dev/null
	fi
	agent_teardown
}

leaks() { python3 "$HW_ROOT/t/leaks.py" "$TOKEN" "$@"; }

# metadata [ANSWER...]: the metadata stand-in answering each ANSWER (a
# response of t/metadata_server.py) in turn, a good token by default
metadata() {
	if [ $# = 0 ]; then
		set -- "$(jq -cn --arg t "$TOKEN" '{json: {access_token: $t, expires_in: 3599, token_type: "Bearer"}}')"
	fi
	printf '%s\n' "$@" | jq -s . >md.json
	python3 "$HW_ROOT/t/metadata_server.py" md.json md.jsonl >md.port 2>md.err 3>&- &
	MD=$!
	for _ in $(seq 100); do [ -s md.port ] && break; sleep 0.05; done
	[ -s md.port ] || { echo "the metadata stand-in did not start"; return 1; }
	export GCE_METADATA_HOST="127.0.0.1:$(cat md.port)"
}

# connection [ID]: a connection of the user's served by the platform
# identity, at the stand-in model's base URL
connection() {
	mkdir -p "$XDG_CONFIG_HOME/heartwood"
	jq -n --arg b "$HW_BASE_URL" --arg id "${1:-terra-models}" '{schema_version: "heartwood.model-connections.v1", connections: [{connection_id: $id, label: "Terra models", protocol: "openai-compatible", model_prefix: "openai/", credential_kind: "managed-identity", base_url: $b, policy_endpoint: ($b + "/chat/completions"), catalog_endpoint: ($b + "/models")}]}' >"$XDG_CONFIG_HOME/heartwood/model-connections.json"
	chmod 600 "$XDG_CONFIG_HOME/heartwood/model-connections.json"
}

# no_leaks PATH...: nothing under .heartwood, the user's configuration,
# the audit export, the replay, the projection or the paths holds it
no_leaks() {
	hw-audit export --session session-main --output export.jsonl >/dev/null
	hw-session replay session-main >replay.jsonl
	hw-session project session-main >project.json
	run -0 leaks .heartwood "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" export.jsonl replay.jsonl project.json "$@"
	[ -z "$output" ]
}

@test "managed-identity: a turn is answered with the metadata server's token, kept nowhere" {
	capture
	connection
	metadata
	chat c1 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $TOKEN" ]
	[ "$(jq -r '[.path, .flavor] | join(" ")' md.jsonl)" = "/computeMetadata/v1/instance/service-accounts/default/token Google" ]
	[ "$(wc -l <md.jsonl)" -eq 1 ]
	[ "$(proj '.conversation[-1].content')" = '"Noted."' ]
	d=$(hw-session replay session-main | jq -c 'select(.kind == "model_call.decision.recorded").payload')
	[ "$(jq -r .decision.decision <<<"$d")" = allow ]
	[ "$(jq -r .model_profile.credential_isolation <<<"$d")" = application-scrubbed ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	no_leaks out.txt err.txt
}

@test "managed-identity: the policy sees the reference managed-identity" {
	capture
	connection
	run -0 hw policy show
	[ "$(jq -r '.policy.credential_allowlist[-1]' <<<"$output")" = managed-identity ]
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
}

@test "managed-identity: the token is in no process's arguments while a call waits" {
	local c='{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Noted."},"finish_reason":"stop"}]}'
	jq -cn --arg c "$c" '[{delay: 2, events: [$c]}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
	connection
	metadata
	chat c1 "Hello"
	hw-agent run session-main >out.txt 2>err.txt &
	pid=$!
	for _ in $(seq 100); do [ -s requests.jsonl ] && break; sleep 0.05; done
	[ -s requests.jsonl ]
	seen=$(grep -l -a -F "$TOKEN" /proc/[0-9]*/cmdline 2>/dev/null || true)
	wait "$pid"
	[ -z "$seen" ]
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $TOKEN" ]
	no_leaks out.txt err.txt
}

@test "managed-identity: a provider that echoes the token in a 401 body leaks nothing" {
	jq -cn '[{status: 401, json: {error: {message: "Invalid credentials: ", type: "invalid_request_error"}}}]' >script.json
	# the stand-in echoes the bearer token it was sent
	python3 - "$TOKEN" <<'P' >script.json
import json, sys
print(json.dumps([{"status": 401, "json": {"error": {"message": "Request had invalid authentication credentials: Bearer " + sys.argv[1], "type": "invalid_request_error"}}}]))
P
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
	connection
	metadata
	chat c1 "Hello"
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"HW-AGENT-008"* ]]
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $TOKEN" ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	no_leaks out.txt err.txt
}

@test "managed-identity: refused on a platform that offers no managed identity" {
	capture
	connection
	metadata
	chat c1 "Hello"
	HEARTWOOD_PLATFORM= run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: connection 'terra-models' uses the platform identity (credential_kind managed-identity), which platform 'generic' does not offer (its credential backends: process keyring mounted-file): only Terra's VMs have one; give the key's variable (HW_API_KEY_ENV) or file (HW_API_KEY_FILE) instead" ]
	refute test -s requests.jsonl
	refute test -s md.jsonl
	HEARTWOOD_PLATFORM=carina run -2 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"which platform 'carina' does not offer (its credential backends: process mounted-file)"* ]]
}

@test "managed-identity: a key variable or file comes first (the resolution order)" {
	capture
	connection
	metadata
	export MY_KEY=sk-env-key-0123456789 HW_API_KEY_ENV=MY_KEY
	chat c1 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer sk-env-key-0123456789" ]
	refute test -s md.jsonl
}

@test "managed-identity: the token is fetched once and used while it lasts" {
	capture
	connection
	metadata
	chat c1 "Hello"
	hw-agent run session-main >/dev/null
	run -0 hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model-credential") | .status' <<<"$output")" = pass ]
	[ "$(wc -l <md.jsonl)" -eq 2 ]
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
}

@test "managed-identity: a token near its expiry is fetched anew before the next call" {
	capture
	connection
	a=$(jq -cn '{json: {access_token: "ya29.first-token-aaaaaaaa", expires_in: 1, token_type: "Bearer"}}')
	b=$(jq -cn --arg t "$TOKEN" '{json: {access_token: $t, expires_in: 3599, token_type: "Bearer"}}')
	metadata "$a" "$b"
	chat c1 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <md.jsonl)" -eq 2 ]
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $TOKEN" ]
}

@test "isolation: platform-isolated only for a source the platform declares isolated" {
	capture
	connection
	metadata
	run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
	HEARTWOOD_ISOLATED_SOURCES=other-source run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
	export HEARTWOOD_ISOLATED_SOURCES=terra-models
	run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = platform-isolated ]
	run -0 hw doctor --json
	[ "$(jq -r .credential_isolation <<<"$output")" = platform-isolated ]
	[ "$(jq -c .platform.capabilities.platform_isolated_sources <<<"$output")" = '["terra-models"]' ]
	run -0 hw doctor
	[[ "$output" == *"credential isolation: platform-isolated"* ]]
	# the declaration counts only where the platform has a managed identity
	HEARTWOOD_PLATFORM= run -0 hw doctor --json
	[ "$(jq -c .platform.capabilities.platform_isolated_sources <<<"$output")" = '[]' ]
	# a key variable is application-scrubbed, whatever is declared
	MY_KEY=sk-env-key-0123456789 HW_API_KEY_ENV=MY_KEY run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
	# nor does a connection at another base URL make the route managed
	connection
	HW_BASE_URL=http://127.0.0.1:9/v1 run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = credential-free ]
}

@test "isolation: the turn records platform-isolated in the projection's context" {
	capture
	connection
	metadata
	export HEARTWOOD_ISOLATED_SOURCES=terra-models
	chat c1 "Hello"
	run -0 hw-agent run session-main
	[ "$(proj .context.credentialIsolation)" = '"platform-isolated"' ]
}

@test "Low-Risk Automation: allowed on a platform-isolated route, refused when application-scrubbed" {
	low_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	connection
	metadata
	run -1 --separate-stderr hw-agent mode auto-approve-low-risk
	[[ "$stderr" == *"credential isolation is application-scrubbed"* ]]
	export HEARTWOOD_ISOLATED_SOURCES=terra-models
	run -0 hw-agent mode auto-approve-low-risk
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ "$(cat notes.md)" = notes ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="approval.recorded").payload.policy')" = auto-approve-low-risk ]
}

@test "Low-Risk Automation: a set waits when the declaration is withdrawn" {
	low_actions
	serve turns.jsonl
	connection
	metadata
	HEARTWOOD_ISOLATED_SOURCES=terra-models hw-agent mode auto-approve-low-risk >/dev/null
	chat c1 "record a run"
	run -0 hw-agent run session-main
	[ ! -e notes.md ]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
}

# md_stop: the metadata and model stand-ins are stopped
md_stop() {
	kill "$MD" "$SRV" 2>/dev/null
	wait "$MD" "$SRV" 2>/dev/null || true
	MD= SRV=
	rm -f md.jsonl requests.jsonl port md.port
}

# bad_answer ANSWER MESSAGE: the run stops with MESSAGE (HOST standing for
# the stand-in's host) before any call
bad_answer() {
	capture
	connection
	metadata "$1"
	chat c1 "Hello"
	run --separate-stderr hw-agent run session-main
	[ "$status" -ne 0 ]
	[ "$stderr" = "hw-agent: ${2//HOST/$GCE_METADATA_HOST}" ]
	refute test -s requests.jsonl
}

@test "metadata: an answer that is not JSON is refused" {
	bad_answer '{"raw":"<html>not json</html>"}' \
		"managed identity: the metadata server's answer is not a JSON object"
}

@test "metadata: an answer without a token is refused" {
	bad_answer '{"json":{"expires_in":3599,"token_type":"Bearer"}}' \
		"managed identity: the metadata server's answer must hold exactly access_token (a token of 8 to 8192 printable characters), expires_in and token_type"
}

@test "metadata: a token with spaces or an extra key is refused" {
	bad_answer '{"json":{"access_token":"ya29 with spaces","expires_in":3599,"token_type":"Bearer"}}' \
		"managed identity: the metadata server's answer must hold exactly access_token (a token of 8 to 8192 printable characters), expires_in and token_type"
	md_stop
	bad_answer '{"json":{"access_token":"ya29.abcdefgh","expires_in":3599,"token_type":"Bearer","scope":"x"}}' \
		"managed identity: the metadata server's answer must hold exactly access_token (a token of 8 to 8192 printable characters), expires_in and token_type"
}

@test "metadata: a bad expires_in or token_type is refused" {
	bad_answer '{"json":{"access_token":"ya29.abcdefgh","expires_in":"3599","token_type":"Bearer"}}' \
		"managed identity: the metadata server's expires_in must be whole seconds from 1 to 86400"
	md_stop
	bad_answer '{"json":{"access_token":"ya29.abcdefgh","expires_in":0,"token_type":"Bearer"}}' \
		"managed identity: the metadata server's expires_in must be whole seconds from 1 to 86400"
	md_stop
	bad_answer '{"json":{"access_token":"ya29.abcdefgh","expires_in":3599,"token_type":"MAC"}}' \
		"managed identity: the metadata server's token_type must be Bearer"
}

@test "metadata: a huge answer is refused" {
	bad_answer '{"size":200000}' \
		"managed identity: the metadata server's answer is longer than 65536 bytes"
	[ "$(wc -l <md.jsonl)" -eq 1 ]
}

@test "metadata: an error status is refused, a 5xx retried once" {
	bad_answer '{"status":404,"raw":"not found"}' \
		"managed identity: the metadata server at 'HOST' answered HTTP 404 (is a service account attached to this VM?)"
	[ "$(wc -l <md.jsonl)" -eq 1 ]
	md_stop
	rm -f md.jsonl
	capture
	connection
	metadata '{"status":503,"raw":"busy"}' "$(jq -cn --arg t "$TOKEN" '{json: {access_token: $t, expires_in: 3599, token_type: "Bearer"}}')"
	chat c2 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <md.jsonl)" -eq 2 ]
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $TOKEN" ]
}

@test "metadata: a server that does not answer in time is retried once, then refused" {
	export HW_METADATA_TIMEOUT_MS=300
	bad_answer '{"delay":2,"json":{}}' \
		"managed identity: the metadata server at 'HOST' did not answer: timed out"
	[ "$(wc -l <md.jsonl)" -eq 2 ]
}

@test "metadata: no server at all is a clear error" {
	capture
	connection
	export GCE_METADATA_HOST=127.0.0.1:9
	chat c1 "Hello"
	run -69 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: managed identity: the metadata server at '127.0.0.1:9' did not answer: "* ]]
	refute test -s requests.jsonl
}

@test "metadata: a bad GCE_METADATA_HOST is refused" {
	capture
	connection
	chat c1 "Hello"
	GCE_METADATA_HOST='evil.example/x?y' run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid GCE_METADATA_HOST: expected a host name or address, with an optional :PORT" ]
	GCE_METADATA_HOST='user@evil.example' run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid GCE_METADATA_HOST: expected a host name or address, with an optional :PORT" ]
}

@test "hw doctor: a failing metadata server fails the credential check" {
	capture
	connection
	metadata '{"raw":"nope"}'
	run -1 hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model-credential") | [.status, .code, .summary] | join(" | ")' <<<"$output")" = "fail | HW-CREDENTIAL-001 | managed identity: the metadata server's answer is not a JSON object" ]
}

@test "managed-identity: a command that asks the metadata server itself records the marker only" {
	# what application-scrubbed means: the tools run as the same identity,
	# and without a sandbox they reach the metadata server too
	metadata
	jq -cn --arg h "$GCE_METADATA_HOST" '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Look","command":("curl -s -H Metadata-Flavor:Google http://" + $h + "/computeMetadata/v1/instance/service-accounts/default/token | jq -r .access_token"),"security_risk":"LOW"}}]}' >turns.jsonl
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	connection
	export HW_SANDBOX=none
	chat c1 "look"
	run -0 hw-agent run session-main
	decide_directly approve
	run -0 hw-agent run session-main
	# one token for each run, and one for the command
	[ "$(wc -l <md.jsonl)" -eq 3 ]
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result')" = "$(printf 'Note: the terminal runs without a sandbox (HW_SANDBOX=none).\n[REDACTED:credential]')" ]
	no_leaks
}

@test "managed-identity: model discovery of the connection sends the token, and shows it nowhere" {
	mkdir -p ms
	python3 "$HW_ROOT/t/models_server.py" "$PROJ/ms" 3>&- &
	SRV=$!
	for _ in $(seq 200); do [ -f ms/port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat ms/port)/v1"
	echo '{"echo_key": true, "status": 401}' >ms/behave.json
	connection
	metadata
	mkdir -p .heartwood
	printf '[policy]\nallowed_model_catalog_endpoints = "%s/models"\ncredential_allowlist = "managed-identity"\n' "$HW_BASE_URL" >.heartwood/config.toml
	run --separate-stderr hw-model discover terra-models
	[ "$status" -ne 0 ]
	[ "$(jq -r .authorization ms/requests.jsonl)" = "Bearer $TOKEN" ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	run -0 leaks .heartwood "$XDG_CONFIG_HOME" "$XDG_STATE_HOME" out.txt err.txt
	[ -z "$output" ]
	HEARTWOOD_PLATFORM= run -2 --separate-stderr hw-model discover terra-models
	[[ "$stderr" == *"which platform 'generic' does not offer"* ]]
	[ "$(wc -l <ms/requests.jsonl)" -eq 1 ]
}
