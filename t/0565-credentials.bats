#!/usr/bin/env bats
# Credential classes (hw-policy(7)): environment, file (absolute, owner
# only, not a symbolic link), none (loopback only); the route's credential
# isolation; and a marker key that reaches no event, audit export, error
# text or output through each route, including a provider that echoes the
# key back in an error body.

load lib
load agent

KEY='sk-MARKER-file-7c1e93b0d54a'

setup() {
	agent_setup
	unset HW_API_KEY_ENV HW_API_KEY_FILE HW_CAPABILITY_TIER
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	KF=$BATS_TEST_TMPDIR/model.key
	printf '%s\n' "$KEY" >"$KF"
	chmod 600 "$KF"
}
teardown() { agent_teardown; }

leaks() { python3 "$HW_ROOT/t/leaks.py" "$KEY" "$@"; }

# no_leaks PATH...: nothing under .heartwood, in the audit export, the
# replay, the projection or the given paths holds the key or a form of it
no_leaks() {
	hw-audit export --session session-main --output export.jsonl >/dev/null
	hw-session replay session-main >replay.jsonl
	hw-session project session-main >project.json
	run -0 leaks .heartwood export.jsonl replay.jsonl project.json "$@"
	[ -z "$output" ]
}

# echoing STATUS: a provider that answers every request with STATUS and
# an error body holding the key it was sent
echoing() {
	jq -cn --arg k "$KEY" --argjson s "$1" '[{status: $s, json: {error: {message: ("Incorrect API key provided: " + $k), type: "invalid_request_error"}}}]' >script.json
	python3 "$HW_ROOT/t/sse_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the stand-in model did not start"; return 1; }
	export HW_BASE_URL="http://127.0.0.1:$(cat port)/v1"
}

@test "file: the key is read from the file and sent, never stored" {
	capture
	export HW_API_KEY_FILE=$KF
	chat c1 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $KEY" ]
	d=$(hw-session replay session-main | jq -c 'select(.kind == "model_call.decision.recorded").payload')
	[ "$(jq -r .decision.decision <<<"$d")" = allow ]
	[ "$(jq -r .model_profile.credential_isolation <<<"$d")" = application-scrubbed ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	no_leaks out.txt err.txt
}

@test "file: the reference the policy sees is the path, and a project policy must list it" {
	capture
	export HW_API_KEY_FILE=$KF
	run -0 hw policy show
	[ "$(jq -r '.policy.credential_allowlist[-1]' <<<"$output")" = "$KF" ]
	chat c1 "Hello"
	printf '[policy]\nallowed_model_endpoints = "%s/chat/completions"\n' "$HW_BASE_URL" >.heartwood/config.toml
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"(rule credential-allowlist): credential reference '$KF'"* ]]
	refute test -s requests.jsonl
}

@test "file: a relative path is refused" {
	chat c0 "Hello"
	capture
	HW_API_KEY_FILE=model.key run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid HW_API_KEY_FILE: expected an absolute path" ]
}

@test "file: a symbolic link is refused" {
	chat c0 "Hello"
	capture
	ln -s "$KF" "$BATS_TEST_TMPDIR/link.key"
	HW_API_KEY_FILE=$BATS_TEST_TMPDIR/link.key run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: refusing HW_API_KEY_FILE '$BATS_TEST_TMPDIR/link.key': it is a symbolic link" ]
}

@test "file: a file others may read is refused, its content unshown" {
	chat c0 "Hello"
	capture
	chmod 640 "$KF"
	HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: refusing HW_API_KEY_FILE '$KF': it must be a regular file of yours, at most 4096 bytes, that nobody else may read or write (chmod 600)" ]
}

@test "file: a file of another user is refused" {
	chat c0 "Hello"
	capture
	chown nobody "$KF"
	HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"it must be a regular file of yours"* ]]
}

@test "file: a directory is refused" {
	chat c0 "Hello"
	capture
	mkdir -m 700 "$BATS_TEST_TMPDIR/keydir"
	HW_API_KEY_FILE=$BATS_TEST_TMPDIR/keydir run -2 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"it must be a regular file of yours"* ]]
}

@test "file: a missing file is refused" {
	chat c0 "Hello"
	capture
	HW_API_KEY_FILE=$BATS_TEST_TMPDIR/none.key run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: refusing HW_API_KEY_FILE '$BATS_TEST_TMPDIR/none.key': No such file or directory" ]
}

@test "file: an empty file or more than one line is refused, unshown" {
	chat c0 "Hello"
	capture
	: >"$KF"
	HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: refusing HW_API_KEY_FILE '$KF': it must hold the key alone, on one line" ]
	printf '%s\nsecond line\n' "$KEY" >"$KF"
	HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: refusing HW_API_KEY_FILE '$KF': it must hold the key alone, on one line" ]
	refute grep -q "$KEY" <<<"$stderr"
}

@test "file: a file over 4096 bytes is refused" {
	chat c0 "Hello"
	capture
	head -c 5000 /dev/zero | tr '\0' a >"$KF"
	HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"at most 4096 bytes"* ]]
}

@test "file: a variable and a file together are refused" {
	chat c0 "Hello"
	capture
	export MY_KEY=$KEY
	HW_API_KEY_ENV=MY_KEY HW_API_KEY_FILE=$KF run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: invalid HW_API_KEY_FILE: a route reads its key from a variable or a file, not both" ]
}

@test "file: a key file the project names must be on the user's own allowlist" {
	mkdir -p .heartwood
	printf '[model]\nmodel_id = "m"\nbase_url = "http://127.0.0.1:9/v1"\napi_key_file = "%s"\n' "$KF" >.heartwood/config.toml
	unset HW_MODEL
	run -0 hw doctor --json
	[ "$(jq -r '.checks[] | select(.check_id == "model") | .summary' <<<"$output")" = "refusing .heartwood/config.toml [model] api_key_file '$KF': it is not on the [credentials] allowlist of your own heartwood/config.toml" ]
	run -0 hw policy show
	[ "$(jq -r .route_error <<<"$output")" = "refusing .heartwood/config.toml [model] api_key_file '$KF': it is not on the [credentials] allowlist of your own heartwood/config.toml" ]
	[ "$(jq -r .credential_isolation <<<"$output")" = not-configured ]
}

@test "none: a route without a key must be loopback" {
	chat c0 "Hello"
	HW_BASE_URL=https://models.example/v1 run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: a route without a key (credential class none) must use a loopback endpoint: give the key's variable (HW_API_KEY_ENV) or file (HW_API_KEY_FILE)" ]
	run -2 --separate-stderr hw setup --non-interactive --yes --model-source custom \
	    --model-id m --base-url https://models.example/v1
	[[ "$stderr" == *"(credential class none) must use a loopback endpoint"* ]]
}

@test "isolation: not-configured, credential-free, application-scrubbed" {
	unset HW_MODEL
	run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = not-configured ]
	export HW_MODEL=openai/m HW_BASE_URL=http://127.0.0.1:9/v1
	run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = credential-free ]
	HW_API_KEY_FILE=$KF run -0 hw policy show
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
	HW_API_KEY_FILE=$KF run -0 hw doctor
	[[ "$output" == *"[OK] the key is read from the file $KF (not shown)"* ]]
	[[ "$output" == *"[OK] credential isolation: application-scrubbed"* ]]
	HW_API_KEY_FILE=$KF run -1 --separate-stderr hw-agent mode auto-approve-low-risk
	[[ "$stderr" == *"credential isolation is application-scrubbed"* ]]
}

@test "echo: a provider that echoes the variable's key in its error body leaks nothing" {
	echoing 401
	export HW_API_KEY_ENV=MY_KEY MY_KEY=$KEY
	chat c1 "Hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$(jq -r .authorization requests.jsonl)" = "Bearer $KEY" ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	[[ "$stderr" == *HW-AGENT-008* ]]
	no_leaks out.txt err.txt
}

@test "echo: a provider that echoes the file's key in its error body leaks nothing" {
	echoing 400
	export HW_API_KEY_FILE=$KF
	chat c1 "Hello"
	run -1 --separate-stderr hw-agent run session-main
	[ "$(head -1 requests.jsonl | jq -r .authorization)" = "Bearer $KEY" ]
	echo "$output" >out.txt
	echo "$stderr" >err.txt
	no_leaks out.txt err.txt
}

@test "file: a command that prints the key file records the marker only" {
	# inside the project, where the sandboxed terminal can read it
	KF=$PROJ/model.key
	printf '%s\n' "$KEY" >"$KF"
	chmod 600 "$KF"
	jq -cn --arg f "$KF" '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Look","command":("cat " + $f),"security_risk":"LOW"}}]}' >turns.jsonl
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	export HW_API_KEY_FILE=$KF
	chat c1 "look"
	run -0 hw-agent run session-main
	decide_directly approve
	run -0 hw-agent run session-main
	[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded").payload.result')" = '[REDACTED:credential]' ]
	no_leaks
}
