#!/usr/bin/env bats
# hw-model connections and discover: the connection catalog (the built-in
# heartwood connection, the platform's, the user's own file, every rule
# of that file its own test), and discovery against t/models_server.py, a
# loopback stand-in for a provider's GET /v1/models: the OpenAI,
# OpenAI-compatible and Anthropic shapes and headers, the policy's
# catalog allowlist before any byte leaves (the server sees no request),
# the recorded decision, the cache, the retry, and the key never shown.

load lib

# faketime preloads libfaketime, which a sanitizer build must accept
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

MARKER=sk-marker-3f9c2d7e1a5b4c6d

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	SRV="$PROJ.srv"
	mkdir -p "$SRV"
	cd "$PROJ" || return 1
	SRVPID=
	export XDG_CONFIG_HOME="$SRV/config"
	mkdir -p "$XDG_CONFIG_HOME/heartwood"
	UF="$XDG_CONFIG_HOME/heartwood/model-connections.json"
	unset HEARTWOOD_PLATFORM GOOGLE_PROJECT HEARTWOOD_CARINA SLURM_CLUSTER_NAME HW_CAPABILITY_TIER
	export TEST_DISCOVERY_KEY=$MARKER
}

teardown() {
	if [ -n "$SRVPID" ]; then
		kill "$SRVPID" 2>/dev/null || true
		wait "$SRVPID" 2>/dev/null || true
	fi
	cd / && rm -rf "$PROJ" "$SRV"
}

srv_start() {
	python3 "$HW_ROOT/t/models_server.py" "$SRV" 3>&- &
	SRVPID=$!
	local i
	for ((i = 0; i < 200; i++)); do
		[ -f "$SRV/port" ] && break
		sleep 0.05
	done
	read -r PORT <"$SRV/port"
	BASE="http://127.0.0.1:$PORT/v1"
}

behave() { printf '%s\n' "$1" >"$SRV/behave.json"; }

# requests: how many requests the server saw
requests() {
	if [ -f "$SRV/requests.jsonl" ]; then wc -l <"$SRV/requests.jsonl"; else echo 0; fi
}

# conns JSON...: the user's connection file with these connections
conns() {
	local IFS=,
	printf '{"schema_version":"heartwood.model-connections.v1","connections":[%s]}\n' "$*" >"$UF"
	chmod 600 "$UF"
}

# conn PROTO [JQ-ARGS... JQ]: one connection "t" to the server, edited by JQ
conn() {
	jq -cn --arg b "$BASE" --arg p "$1" '{connection_id:"t", label:"Test",
	    protocol:$p, model_prefix:"openai/", credential_kind:"environment",
	    api_key_env:"TEST_DISCOVERY_KEY", base_url:$b,
	    policy_endpoint:($b + "/chat/completions"),
	    catalog_endpoint:($b + "/models")}' | if [ $# -gt 1 ]; then jq -c "${@:2}"; else jq -c .; fi
}

# allow [CREDENTIAL]: the project's policy allows discovery at the server
allow() {
	mkdir -p .heartwood
	cat >.heartwood/config.toml <<EOF
[policy]
allowed_model_catalog_endpoints = "$BASE/models"
credential_allowlist = "${1:-TEST_DISCOVERY_KEY}"
EOF
}

# refused JQ MESSAGE: a user connection edited by JQ is refused with MESSAGE
refused() {
	BASE=http://127.0.0.1:9/v1
	conns "$(conn openai "$1")"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: invalid '$UF': connections[0]: $2" ]
}

OPENAI_LIST='{"object":"list","data":[{"id":"gpt-b","object":"model"},{"id":"gpt-a","object":"model"},{"id":"text-embedding-3-small","object":"model"}]}'

# ---- the catalog ----

@test "connections: the built-in heartwood connection and the generic platform's" {
	run -0 --separate-stderr hw-model connections --json
	echo "$output" | jq -e '.schema_version == "heartwood.model-connections.v1" and .platform_id == "generic"'
	[ "$(echo "$output" | jq -r '[.connections[].connection_id] | join(" ")')" = "heartwood stanford-ai-api-gateway openai anthropic openai-subscription" ]
	echo "$output" | jq -e '.connections[0] == {connection_id:"heartwood", label:"Run with Heartwood",
	    protocol:"openai-compatible", model_prefix:"openai/", source:"built-in", credential_kind:"none",
	    policy_endpoint:"http://127.0.0.1:8765/v1/chat/completions",
	    catalog_endpoint:"http://127.0.0.1:8765/v1/models", base_url:"http://127.0.0.1:8765/v1",
	    api_key_env:null, api_key_file:null, api_version:null, aws_region_name:null,
	    aws_profile_name:null, description:"the managed local model heartwood runs on loopback",
	    static_models:[], subscription_vendor:null}'
	echo "$output" | jq -e '.connections[3] | .protocol == "anthropic" and .api_version == "2023-06-01" and .api_key_env == "ANTHROPIC_API_KEY" and .source == "platform"'
	# ChatGPT: the subscription's Codex responses endpoint, no key, no catalog
	echo "$output" | jq -e '.connections[4] | .protocol == "subscription" and .subscription_vendor == "openai" and .credential_kind == "managed-identity" and .policy_endpoint == "https://chatgpt.com/backend-api/codex/responses" and .catalog_endpoint == null and .api_key_env == null and .model_prefix == "chatgpt/"'
}

@test "connections: Carina offers heartwood and the Stanford gateway only" {
	HEARTWOOD_PLATFORM=carina run -0 hw-model connections --json
	[ "$(echo "$output" | jq -r '[.connections[].connection_id] | join(" ")')" = "heartwood stanford-ai-api-gateway" ]
}

@test "connections: the plain listing, one line each" {
	run -0 hw-model connections
	[ "${lines[0]}" = "heartwood                openai-compatible built-in  http://127.0.0.1:8765/v1/models" ]
	[ "${lines[4]}" = "openai-subscription      subscription      platform  https://chatgpt.com/backend-api/codex" ]
	[ "${#lines[@]}" -eq 5 ]
}

@test "connections: the user's own file adds connections with source user" {
	BASE=http://127.0.0.1:9/v1
	conns "$(conn openai-compatible '.credential_kind = "none" | del(.api_key_env)')"
	run -0 hw-model connections --json
	echo "$output" | jq -e '.connections[-1] | .connection_id == "t" and .source == "user" and .credential_kind == "none"'
}

@test "connections: a user file that is a symbolic link is refused" {
	conns
	mv "$UF" "$SRV/real.json"
	ln -s "$SRV/real.json" "$UF"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: refusing '$UF': it is a symbolic link" ]
}

@test "connections: a user file others may write is refused" {
	conns
	chmod 622 "$UF"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: refusing '$UF': group or others can write it (mode 0622)" ]
}

@test "connections: a user file that is not JSON is refused" {
	echo '{"schema_version":' >"$UF"
	chmod 600 "$UF"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: '$UF' is not valid JSON: unexpected end of input at byte 20" ]
}

@test "connections: a wrong schema_version is refused" {
	echo '{"schema_version":"heartwood.model-connections.v0","connections":[]}' >"$UF"
	chmod 600 "$UF"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: $UF: schema_version: expected heartwood.model-connections.v1" ]
}

@test "connections: an unknown top-level key is refused" {
	echo '{"schema_version":"heartwood.model-connections.v1","connections":[],"x":1}' >"$UF"
	chmod 600 "$UF"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: $UF: expected exactly the keys schema_version and connections" ]
}

@test "connections: an unknown key is refused" {
	refused '.extra = "x"' "connection 't': unknown key 'extra'"
}

@test "connections: a secret-looking key is refused" {
	refused '.api_key = "sk-1"' "connection 't': refusing the secret-looking key 'api_key': a connection names the variable (api_key_env) or the file (api_key_file) that holds its key, never the key"
	refused '.access_token = "x"' "connection 't': refusing the secret-looking key 'access_token': a connection names the variable (api_key_env) or the file (api_key_file) that holds its key, never the key"
	refused '.Password = "x"' "connection 't': refusing the secret-looking key 'Password': a connection names the variable (api_key_env) or the file (api_key_file) that holds its key, never the key"
}

@test "connections: an invalid connection_id is refused" {
	refused '.connection_id = "Bad Id"' "connection_id: expected 1 to 64 lowercase letters, digits, '.', '_' or '-'"
}

@test "connections: an unknown protocol is refused" {
	refused '.protocol = "grpc"' "connection 't': protocol: expected anthropic, openai, openai-compatible, static or subscription"
}

@test "connections: a model_prefix that does not end in / is refused" {
	refused '.model_prefix = "openai"' "connection 't': model_prefix: expected a prefix such as 'openai/' that ends in '/'"
}

@test "connections: an endpoint that is not normalized is refused" {
	refused '.base_url = "HTTP://127.0.0.1:9/v1"' "connection 't': base_url: must already be normalized (hw-policy(7)): lowercase scheme and host, and a path"
	refused '.policy_endpoint = "http://127.0.0.1:9/v1/chat/completions?x=1"' "connection 't': policy_endpoint: invalid endpoint: a query is not allowed"
}

@test "connections: endpoints that do not share one origin are refused" {
	refused '.policy_endpoint = "http://127.0.0.2:9/v1/chat/completions"' "connection 't': base_url, policy_endpoint and catalog_endpoint must share one origin"
}

@test "connections: http on a host that is not loopback is refused" {
	refused '.base_url = "http://a.example/v1" | .policy_endpoint = "http://a.example/v1/chat/completions" | .catalog_endpoint = "http://a.example/v1/models"' "connection 't': base_url: http is allowed only on a loopback host: use https"
}

@test "connections: credential kind none off loopback is refused" {
	refused '.base_url = "https://a.example/v1" | .policy_endpoint = "https://a.example/v1/chat/completions" | .catalog_endpoint = "https://a.example/v1/models" | .credential_kind = "none" | del(.api_key_env)' "connection 't': credential_kind none is allowed only on a loopback endpoint"
}

@test "connections: a catalog endpoint that is not base_url/models is refused" {
	refused '.catalog_endpoint = "'"http://127.0.0.1:9/v1/list"'"' "connection 't': catalog_endpoint: must be base_url followed by /models"
}

@test "connections: credential kind environment needs a valid api_key_env" {
	refused 'del(.api_key_env)' "connection 't': api_key_env: required for credential_kind environment"
	refused '.api_key_env = "1BAD"' "connection 't': api_key_env: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*"
	refused '.credential_kind = "none"' "connection 't': api_key_env: allowed only with credential_kind environment"
}

@test "connections: credential kind file needs an absolute api_key_file" {
	refused '.credential_kind = "file" | del(.api_key_env) | .api_key_file = "key.txt"' "connection 't': api_key_file: expected an absolute path"
}

@test "connections: an anthropic connection needs api_version" {
	refused '.protocol = "anthropic"' "connection 't': api_version: required with protocol anthropic (e.g. 2023-06-01)"
}

@test "connections: a connection without a label is refused" {
	refused 'del(.label)' "connection 't': label is required"
}

@test "connections: a user connection that claims another source is refused" {
	refused '.source = "built-in"' "connection 't': source: a connection of yours has source user"
}

@test "connections: a connection that is not an object is refused" {
	conns '"openai"'
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: invalid '$UF': connections[0]: a connection must be an object" ]
}

@test "connections: a field that is not a string is refused" {
	refused '.description = 7' "connection 't': description: expected a string of printable characters (or null)"
}

@test "connections: static_models only with protocol static, and then required" {
	refused '.static_models = ["m"]' "connection 't': static_models: allowed only with protocol static"
	refused '.protocol = "static" | del(.catalog_endpoint)' "connection 't': static_models: required with protocol static"
	refused '.protocol = "static" | del(.catalog_endpoint) | .static_models = ["a b"]' "connection 't': static_models: entry 1: expected a model name of letters, digits and ._:/@+-"
}

@test "connections: a subscription connection names its vendor, and only it" {
	refused '.protocol = "subscription"' "connection 't': subscription_vendor: expected openai"
	refused '.subscription_vendor = "openai"' "connection 't': subscription_vendor: allowed only with protocol subscription"
}

@test "connections: api_version only with protocol anthropic" {
	refused '.api_version = "2023-06-01"' "connection 't': api_version: allowed only with protocol anthropic"
}

@test "connections: api_key_file only with credential kind file" {
	refused '.api_key_file = "/k"' "connection 't': api_key_file: allowed only with credential_kind file"
}

@test "connections: an unknown credential kind is refused" {
	refused '.credential_kind = "keyring"' "connection 't': credential_kind: expected environment, file, managed-identity or none"
}

@test "connections: an OpenAI connection needs a catalog endpoint" {
	refused 'del(.catalog_endpoint)' "connection 't': catalog_endpoint is required for protocol openai"
}

@test "connections: a managed-identity connection cannot be discovered without one" {
	srv_start
	conns "$(conn openai '.credential_kind = "managed-identity" | del(.api_key_env)')"
	allow managed-identity
	run -2 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: connection 't' uses the platform identity (credential_kind managed-identity), which platform 'generic' does not offer (its credential backends: process keyring mounted-file): only Terra's VMs have one; give the key's variable (HW_API_KEY_ENV) or file (HW_API_KEY_FILE) instead" ]
	[ "$(requests)" -eq 0 ]
}

@test "connections: a connection may not take the id of a built-in one" {
	BASE=http://127.0.0.1:9/v1
	conns "$(conn openai '.connection_id = "openai"')"
	run -65 --separate-stderr hw-model connections
	[ "$stderr" = "hw-model: invalid '$UF': connections[0]: connection 'openai' is defined twice (a built-in or platform connection, or another of yours)" ]
}

# ---- discovery ----

@test "discover: an OpenAI connection sends the key as a bearer and lists chat models" {
	srv_start
	behave "{\"body\":$(jq -Rn --arg b "$OPENAI_LIST" '$b')}"
	conns "$(conn openai)"
	allow
	run -0 --separate-stderr hw-model discover t
	[ "${#lines[@]}" -eq 3 ]
	echo "${lines[0]}" | jq -e '. == {schema_version:"heartwood.model-catalog.v1", connection_id:"t",
	    model_id:"gpt-a", display_name:"gpt-a", execution_model:"openai/gpt-a", availability:"available",
	    reason:null, context_window:null, supports_tools:true}'
	echo "${lines[1]}" | jq -e '.model_id == "gpt-b"'
	echo "${lines[2]}" | jq -e '.model_id == "text-embedding-3-small" and .availability == "unavailable" and .reason == "not a chat model: it cannot run the agent" and .supports_tools == false'
	jq -e --arg k "Bearer $MARKER" '.path == "/v1/models" and .authorization == $k and .x_api_key == null' "$SRV/requests.jsonl"
}

@test "discover: an OpenAI-compatible loopback connection without a key" {
	srv_start
	behave '{"body":"{\"object\":\"list\",\"data\":[{\"id\":\"qwen\",\"max_model_len\":32768},{\"id\":\"tiny\",\"max_model_len\":4096}]}"}'
	conns "$(conn openai-compatible '.credential_kind = "none" | del(.api_key_env)')"
	allow
	run -0 --separate-stderr hw-model discover t
	echo "${lines[0]}" | jq -e '.model_id == "qwen" and .context_window == 32768 and .supports_tools == null and .availability == "available"'
	echo "${lines[1]}" | jq -e '.model_id == "tiny" and .availability == "unavailable" and .reason == "its context window is below the agent'"'"'s minimum of 18432 tokens"'
	jq -e '.authorization == null and .x_api_key == null' "$SRV/requests.jsonl"
}

@test "discover: an Anthropic connection sends x-api-key and anthropic-version" {
	srv_start
	behave '{"body":"{\"data\":[{\"type\":\"model\",\"id\":\"claude-x\",\"display_name\":\"Claude X\",\"created_at\":\"2026-01-01T00:00:00Z\"}],\"has_more\":false,\"first_id\":\"claude-x\",\"last_id\":\"claude-x\"}"}'
	conns "$(conn anthropic '.model_prefix = "anthropic/" | .api_version = "2023-06-01" | .policy_endpoint = $b + "/messages"' --arg b "$BASE")"
	allow
	run -0 --separate-stderr hw-model discover t
	echo "$output" | jq -e '.model_id == "claude-x" and .display_name == "Claude X" and .execution_model == "anthropic/claude-x" and .supports_tools == true'
	jq -e --arg k "$MARKER" '.x_api_key == $k and .anthropic_version == "2023-06-01" and .authorization == null' "$SRV/requests.jsonl"
}

@test "discover: an Anthropic list of several pages is followed by after_id" {
	srv_start
	jq -n '{pages: {"": ({data: [{type: "model", id: "claude-a"}], has_more: true, first_id: "claude-a", last_id: "claude-a"} | tojson),
	    "claude-a": ({data: [{type: "model", id: "claude-b"}], has_more: false, last_id: "claude-b"} | tojson)}}' >"$SRV/behave.json"
	conns "$(conn anthropic '.model_prefix = "anthropic/" | .api_version = "2023-06-01" | .policy_endpoint = $b + "/messages"' --arg b "$BASE")"
	allow
	run -0 --separate-stderr hw-model discover t
	[ "$(echo "$output" | jq -r .model_id | tr '\n' ' ')" = "claude-a claude-b " ]
	[ "$(jq -r .path "$SRV/requests.jsonl" | tr '\n' ' ')" = "/v1/models?limit=1000 /v1/models?limit=1000&after_id=claude-a " ]
}

@test "discover: an Anthropic page with has_more but no last_id is refused" {
	srv_start
	jq -n '{pages: {"": ({data: [{type: "model", id: "claude-a"}], has_more: true} | tojson)}}' >"$SRV/behave.json"
	conns "$(conn anthropic '.model_prefix = "anthropic/" | .api_version = "2023-06-01" | .policy_endpoint = $b + "/messages"' --arg b "$BASE")"
	allow
	run -65 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: invalid model list from '$BASE/models': has_more without a usable last_id" ]
	[ ! -e .heartwood/cache/model-catalog/t.json ]
}

@test "discover: a static connection lists its models without a request" {
	srv_start
	conns "$(conn static '.static_models = ["m1", "m2"] | del(.catalog_endpoint)')"
	run -0 hw-model discover t
	[ "$(echo "$output" | jq -r .execution_model | tr '\n' ' ')" = "openai/m1 openai/m2 " ]
	[ "$(requests)" -eq 0 ]
}

@test "discover: an endpoint off the catalog allowlist is refused before any byte leaves, and recorded" {
	srv_start
	conns "$(conn openai)"
	mkdir .heartwood
	printf '[policy]\ncredential_allowlist = "TEST_DISCOVERY_KEY"\n' >.heartwood/config.toml
	run -1 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: discovery of 't' refused: denied by policy 'generic-default' (rule egress-allowlist): endpoint '$BASE/models' is not in allowed_model_catalog_endpoints; change [policy] in .heartwood/config.toml (hw-policy(7)) or choose another route with 'hw setup'" ]
	[ "$(requests)" -eq 0 ]
	[ "$(wc -l <.heartwood/audit/model-catalog.jsonl)" -eq 1 ]
	jq -e --arg e "$BASE/models" '.event_type == "model_call.decision.recorded" and .session_id == "project-model-catalog" and
	    .payload.connection_id == "t" and .payload.decision.decision == "deny" and .payload.decision.endpoint == $e and
	    .payload.attestation.rule == "egress-allowlist" and .payload.attestation.purpose == "catalog-discovery"' .heartwood/audit/model-catalog.jsonl
}

@test "discover: a credential off the allowlist is refused before any byte leaves" {
	srv_start
	conns "$(conn openai)"
	allow OTHER_KEY
	run -1 --separate-stderr hw-model discover t
	[[ "$stderr" == *"(rule credential-allowlist): credential reference 'TEST_DISCOVERY_KEY' is not in credential_allowlist"* ]]
	[ "$(requests)" -eq 0 ]
}

@test "discover: an allowed discovery is recorded in a log that verifies" {
	srv_start
	conns "$(conn openai)"
	allow
	run -0 hw-model discover t
	run -0 hw-model discover t --refresh
	[ "$(wc -l <.heartwood/audit/model-catalog.jsonl)" -eq 2 ]
	jq -e '.payload.decision.decision == "allow" and .payload.decision.schema_version == "heartwood.model-call-decision.v1"' .heartwood/audit/model-catalog.jsonl
	run -0 hw-audit verify .heartwood/audit/model-catalog.jsonl
}

@test "discover: the answer is cached owner-only for 300 s" {
	srv_start
	behave "{\"body\":$(jq -Rn --arg b "$OPENAI_LIST" '$b')}"
	conns "$(conn openai)"
	allow
	run -0 hw-model discover t
	first=$output
	run -0 hw-model discover t
	[ "$output" = "$first" ]
	[ "$(requests)" -eq 1 ]
	[ "$(stat -c %a .heartwood/cache/model-catalog/t.json)" = 600 ]
	[ "$(stat -c %a .heartwood/cache/model-catalog)" = 700 ]
	[ "$(stat -c %a .heartwood/cache)" = 700 ]
	run -0 faketime -f +301s hw-model discover t
	[ "$(requests)" -eq 2 ]
	run -0 hw-model discover t --refresh
	[ "$(requests)" -eq 3 ]
}

@test "discover: a cache this user's heartwood did not write is not believed" {
	srv_start
	conns "$(conn openai)"
	allow
	run -0 hw-model discover t
	jq -c '.models = [{"model_id":"planted"}]' .heartwood/cache/model-catalog/t.json >x
	mv x .heartwood/cache/model-catalog/t.json
	run -0 hw-model discover t
	[ "$(requests)" -eq 2 ]
	refute grep -q planted <<<"$output"
}

@test "discover: the cache is written without following a link" {
	srv_start
	conns "$(conn openai)"
	allow
	mkdir -p .heartwood/cache/model-catalog
	echo keep >"$SRV/target"
	ln -s "$SRV/target" .heartwood/cache/model-catalog/t.json
	run -0 hw-model discover t
	[ "$(cat "$SRV/target")" = keep ]
	[ ! -L .heartwood/cache/model-catalog/t.json ]
}

@test "discover: a cache directory that is a link is refused" {
	srv_start
	conns "$(conn openai)"
	allow
	mkdir -p .heartwood/cache "$SRV/elsewhere"
	ln -s "$SRV/elsewhere" .heartwood/cache/model-catalog
	run -65 --separate-stderr hw-model discover t
	[ -z "$(ls "$SRV/elsewhere")" ]
}

@test "discover: a failed attempt is tried once more" {
	srv_start
	behave '{"fail_first":1}'
	conns "$(conn openai)"
	allow
	run -0 hw-model discover t
	[ "$(requests)" -eq 2 ]
}

@test "discover: two failed attempts fail with the status, and nothing is cached" {
	srv_start
	behave '{"fail_first":5}'
	conns "$(conn openai)"
	allow
	run -69 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: cannot discover models at '$BASE/models': status 503" ]
	[ "$(requests)" -eq 2 ]
	[ ! -e .heartwood/cache/model-catalog/t.json ]
}

@test "discover: a refused key is not tried again" {
	srv_start
	behave '{"status":401,"echo_key":true}'
	conns "$(conn openai)"
	allow
	run -69 --separate-stderr hw-model discover t
	[ "$(requests)" -eq 1 ]
}

@test "discover: a provider that echoes the key in its error body never gets it shown or stored" {
	srv_start
	behave '{"status":401,"echo_key":true}'
	conns "$(conn openai)"
	allow
	run -69 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: cannot discover models at '$BASE/models': status 401 (the key was refused)" ]
	refute grep -q "$MARKER" <<<"$stderr$output"
	refute grep -rq "$MARKER" .heartwood
	# the server did get it, so the marker was live
	grep -q "$MARKER" "$SRV/requests.jsonl"
}

@test "discover: a key that is not set is named, and nothing is sent" {
	srv_start
	conns "$(conn openai)"
	allow
	unset TEST_DISCOVERY_KEY
	run -2 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: connection 't': the variable TEST_DISCOVERY_KEY that holds its key is not set or is empty" ]
	[ "$(requests)" -eq 0 ]
}

@test "discover: a key file is read owner-only and sent as a bearer" {
	srv_start
	printf '%s\n' "$MARKER" >"$SRV/key"
	chmod 600 "$SRV/key"
	conns "$(conn openai --arg f "$SRV/key" '.credential_kind = "file" | del(.api_key_env) | .api_key_file = $f')"
	allow "$SRV/key"
	run -0 hw-model discover t
	jq -e --arg k "Bearer $MARKER" '.authorization == $k' "$SRV/requests.jsonl"
	chmod 644 "$SRV/key"
	run -2 --separate-stderr hw-model discover t --refresh
	[ "$stderr" = "hw-model: refusing api_key_file '$SRV/key': it must be a regular file of yours, at most 4096 bytes, that nobody else may read or write (chmod 600)" ]
	[ "$(requests)" -eq 1 ]
}

@test "discover: a malformed model list is refused" {
	srv_start
	behave '{"body":"{\"data\":{}}"}'
	conns "$(conn openai)"
	allow
	run -65 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: invalid model list from '$BASE/models': no data array" ]
	behave '{"body":"{\"data\":[{\"object\":\"model\"}]}"}'
	run -65 --separate-stderr hw-model discover t
	[ "$stderr" = "hw-model: invalid model list from '$BASE/models': data[0] has no string id" ]
}

@test "discover: an unknown connection is 66" {
	run -66 --separate-stderr hw-model discover nope
	[ "$stderr" = "hw-model: no connection 'nope' ('hw-model connections' lists them)" ]
}

@test "discover: usage" {
	run -2 hw-model discover
	run -2 hw-model discover a b
	run -2 hw-model connections extra
}
