#!/usr/bin/env bats
# hw setup: the model route chosen without a conversation, on a terminal
# (driven through a pty) or with --non-interactive --yes, saved as [model]
# in .heartwood/config.toml (0600, other tables kept), never with a key;
# the agent then uses it when HW_MODEL and HW_BASE_URL are unset, and the
# environment wins when they are set.

load lib
load agent

setup() {
	agent_setup
	unset HW_MODEL
	# MY_KEY is on the user's own credential allowlist (hw-store(5) TRUST)
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
	mkdir -p "$XDG_CONFIG_HOME/heartwood"
	printf '[credentials]\nallowlist = "MY_KEY"\n' >"$XDG_CONFIG_HOME/heartwood/config.toml"
}
teardown() { agent_teardown; }

CFG=.heartwood/config.toml
DEAD=http://127.0.0.1:9/v1

# answer ANSWER... -- hw setup ...: hw setup on a terminal
answer() { python3 "$HW_ROOT/t/pty_answer.py" "$@"; }

# saved KEY: the saved [model] KEY
saved() { sed -n "/^\[model\]/,/^\[/s/^$1 = \"\(.*\)\"/\1/p" "$CFG"; }

@test "hw setup --non-interactive: saves the route 0600 and prints it" {
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source custom --model-id heartwood-replay --base-url "$DEAD/"
	[ "$output" = '{"api_key_env":null,"base_url":"http://127.0.0.1:9/v1","model":"openai/heartwood-replay","model_id":"heartwood-replay","source":"custom"}' ]
	[ -z "$stderr" ]
	[ "$(stat -c %a "$CFG")" = 600 ]
	[ "$(saved schema_version)" = heartwood.model-route.v1 ]
	[ "$(saved base_url)" = "$DEAD" ]
	grep -qx 'schema_version = "heartwood.project-config.v1"' "$CFG"
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source=openai --model-id=gpt-4o
	[ "$(jq -c '[.source, .base_url, .api_key_env]' <<<"$output")" = \
	    '["openai","https://api.openai.com/v1","OPENAI_API_KEY"]' ]
	[ "$stderr" = 'hw: warning: $OPENAI_API_KEY is not set here; the agent needs it when it runs' ]
	run -0 --separate-stderr hw setup --non-interactive --yes --model-source anthropic \
	    --model-id claude-sonnet-4-5 --api-key-env MY_KEY
	[ "$(jq -c '[.base_url, .api_key_env]' <<<"$output")" = \
	    '["https://api.anthropic.com/v1","MY_KEY"]' ]
	# heartwood goes through hw-model (t/0606): a served id is no model
	run -66 --separate-stderr hw setup --non-interactive --yes --model-source heartwood \
	    --model-id heartwood-managed-model
	[ "$stderr" = "hw: no managed model or catalog entry 'heartwood-managed-model' (hw-model catalog lists them)" ]
	[ "$(saved api_key_env)" = MY_KEY ]
	[ "$(grep -c '^\[model\]' "$CFG")" -eq 1 ]
}

@test "hw setup: other tables stay, and the review mode keeps the route" {
	hw actions set auto-approve-low-risk >/dev/null
	echo '# mine' >>"$CFG"
	hw setup --non-interactive --yes --model-source custom --model-id m \
	    --base-url "$DEAD" >/dev/null
	[ "$(hw actions | jq -r .mode)" = auto-approve-low-risk ]
	hw actions set ask-every-time >/dev/null
	[ "$(saved model_id)" = m ]
	grep -qx 'confirmation_mode = "always-confirm"' "$CFG"
}

@test "hw setup --non-interactive needs --model-source, --model-id and --yes" {
	msg="hw: setup --non-interactive needs --model-source, --model-id and --yes"
	for args in "--model-source openai --model-id m" \
	    "--yes --model-id m" "--yes --model-source openai" ""; do
		run -2 --separate-stderr hw setup --non-interactive $args
		[ "$stderr" = "$msg" ] || { echo "$args"; return 1; }
		[ -z "$output" ]
	done
	run -2 --separate-stderr hw setup --yes --model-source openai --model-id m </dev/null
	[ "$stderr" = "hw: setup asks its questions on a terminal; in a script use --non-interactive --yes --model-source SOURCE --model-id ID" ]
	run -2 --separate-stderr hw setup --non-interactive --yes --model-id
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr hw setup --frobnicate
	[[ "$stderr" == usage:* ]]
	[ ! -e .heartwood ]
}

@test "hw setup: a key as an argument is refused and never shown" {
	ni="--non-interactive --yes"
	for args in "--api-key=sk-proj-SECRET1" "--api-key sk-proj-SECRET1" \
	    "--token SECRET1" "sk-ant-SECRET1"; do
		run -2 --separate-stderr hw setup $ni $args
		[ "$stderr" = "hw: a key is never an argument: export it and give the name of its variable with --api-key-env NAME" ]
	done
	msg="hw: that looks like a key: hw setup never takes one, only the name of the variable that holds it (--api-key-env NAME)"
	for args in "--api-key-env sk-proj-SECRET1" \
	    "--api-key-env AbCdEfGhIjKlMnOpQrStUvWxYz0123456789SECRET1" \
	    "--model-id sk-SECRET1" "--model-source sk-SECRET1"; do
		run -2 --separate-stderr hw setup $ni --model-source openai \
		    --model-id m $args
		[ "$stderr" = "$msg" ] || { echo "$args: $stderr"; return 1; }
	done
	run -2 --separate-stderr hw setup $ni --model-source openai \
	    --model-id m 0123456789abcdef0123456789abcdef
	[[ "$stderr" == "hw: a key is never an argument"* ]]
	[ ! -e .heartwood ]
}

@test "hw setup: a bad source, model id, URL or key name is refused" {
	ni="--non-interactive --yes"
	run -2 --separate-stderr hw setup $ni --model-source stanford --model-id m
	[ "$stderr" = "hw: unknown model source 'stanford': want heartwood, openai, anthropic, anthropic-messages, openai-subscription or custom" ]
	run -2 --separate-stderr hw setup $ni --model-source openai --model-id 'a b'
	[ "$stderr" = "hw: invalid --model-id 'a b': expected printable ASCII without spaces" ]
	run -2 --separate-stderr hw setup $ni --model-source openai --model-id ''
	[ "$stderr" = "hw: invalid --model-id '': expected printable ASCII without spaces" ]
	run -2 --separate-stderr hw setup $ni --model-source custom --model-id m \
	    --base-url ftp://127.0.0.1/v1
	[ "$stderr" = "hw: invalid --base-url: it must be an http or https URL" ]
	run -2 --separate-stderr hw setup $ni --model-source custom --model-id m \
	    --base-url 'https://api.example.com/v1?key=x'
	[ "$stderr" = "hw: invalid --base-url: it must not have a query or a fragment" ]
	run -2 --separate-stderr hw setup $ni --model-source custom --model-id m \
	    --base-url https://u:p@api.example.com/v1
	[ "$stderr" = "hw: invalid --base-url: it must not contain user information" ]
	run -2 --separate-stderr hw setup $ni --model-source custom --model-id m
	[ "$stderr" = "hw: --model-source custom needs --base-url" ]
	run -2 --separate-stderr hw setup $ni --model-source openai --model-id m \
	    --base-url "$DEAD"
	[ "$stderr" = "hw: --base-url applies only to --model-source custom" ]
	run -2 --separate-stderr hw setup $ni --model-source openai --model-id m \
	    --api-key-env MY-KEY
	[ "$stderr" = "hw: invalid --api-key-env: expected a variable name matching [A-Za-z_][A-Za-z0-9_]*" ]
	[ ! -e .heartwood ]
}

@test "hw setup: the agent uses the saved route once HW_MODEL and HW_BASE_URL are unset" {
	echo '{"content":"Hello from the saved route."}' >turns.jsonl
	serve turns.jsonl
	url=$HW_BASE_URL
	unset HW_BASE_URL
	run -70 --separate-stderr hw ask hello
	[ "$stderr" = "hw: the agent is not ready, so nothing was recorded: HW_MODEL is not set, and no route was saved: run 'hw setup'" ]
	hw setup --non-interactive --yes --model-source custom \
	    --model-id heartwood-replay --base-url "$url" >/dev/null
	run -0 --separate-stderr hw ask hello again
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the saved route." ]
	run -0 hw doctor
	[[ "$output" == *"[OK] model openai/heartwood-replay at $url"* ]]
}

@test "hw setup: the environment wins over the saved route, as a whole" {
	echo '{"content":"Hello from the environment."}' >turns.jsonl
	serve turns.jsonl
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source custom --model-id saved --base-url "$DEAD"
	[ "$stderr" = "hw: warning: HW_MODEL or HW_BASE_URL is set and wins over the saved route" ]
	export HW_MODEL=openai/heartwood-replay
	run -0 --separate-stderr hw ask hello
	[ "$(jq -r '.conversation[-1].content' <<<"${lines[1]}")" = "Hello from the environment." ]
	# HW_MODEL alone is an incomplete route, not a mix with the saved one
	unset HW_BASE_URL
	run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW_BASE_URL is not set" ]
}

@test "hw setup: the saved key variable must be set when the agent runs, and is never shown" {
	hw setup --non-interactive --yes --model-source custom --model-id m \
	    --base-url "$DEAD" --api-key-env MY_KEY 2>/dev/null >/dev/null
	run -0 hw doctor
	[[ "$output" == *"[NOTE] invalid .heartwood/config.toml [model] api_key_env 'MY_KEY': that variable is not set or is empty"* ]]
	MY_KEY=sk-do-not-print run -0 hw doctor
	[[ "$output" == *'[OK] the key is read from $MY_KEY (not shown)'* ]]
	[[ "$output" != *sk-do-not-print* ]]
	refute grep -q sk-do-not-print "$CFG"
	sed -i '/^base_url/d' "$CFG"
	run -0 hw doctor
	[[ "$output" == *"[NOTE] [model] in .heartwood/config.toml needs model_id and base_url: run 'hw setup'"* ]]
}

@test "hw setup: on a terminal it asks, checks each answer and saves" {
	run -0 answer 7 custom 'a b' my-model ftp://x "$DEAD" '' y -- hw setup
	[[ "$output" == *"Model sources:"*"  6) custom "* ]]
	[[ "$output" == *"hw: unknown model source '7': want heartwood, openai, anthropic, anthropic-messages, openai-subscription or custom"* ]]
	[[ "$output" == *"hw: invalid --model-id 'a b': expected printable ASCII without spaces"* ]]
	[[ "$output" == *"hw: invalid --base-url: it must be an http or https URL"* ]]
	[[ "$output" == *"Save model openai/my-model at $DEAD to .heartwood/config.toml? [y/N]: y"* ]]
	[[ "$output" == *'{"api_key_env":null,'*'"source":"custom"}'* ]]
	[ "$(saved model_id)" = my-model ]
	# the default: openai's key variable (heartwood's choice: t/0606)
	run -0 answer 2 gpt-4o '' yes -- hw setup
	[[ "$output" == *"Name of the variable that holds the key [OPENAI_API_KEY]: "* ]]
	[ "$(saved api_key_env)" = OPENAI_API_KEY ]
}

@test "hw setup: on a terminal, flags fill answers and a key typed for the variable is refused" {
	run -0 answer sk-proj-SECRET1 MY_KEY y -- hw setup --model-source custom \
	    --model-id m --base-url "$DEAD"
	[[ "$output" != *"Model id"* && "$output" != *"Base URL"* ]]
	[[ "$output" == *"hw: that looks like a key: hw setup never takes one"* ]]
	[ "$(grep -o SECRET1 <<<"$output" | wc -l)" -eq 1 ]	# the echo of the typing
	[ "$(saved api_key_env)" = MY_KEY ]
}

@test "hw setup: on a terminal, no or the end of input cancels and saves nothing" {
	run -1 answer openai gpt-4o '' n -- hw setup
	[[ "$output" == *"hw: setup cancelled; nothing was saved"* ]]
	[ ! -e "$CFG" ]
	run -1 answer custom EOF -- hw setup
	[[ "$output" == *"hw: setup cancelled; nothing was saved"* ]]
	[ ! -e .heartwood ]
}

@test "hw setup -h: prints the usage of setup, not the general one" {
	for h in -h --help; do
		run -0 --separate-stderr hw setup $h
		[ "${lines[0]}" = "usage: hw setup [--model-source SOURCE] [--model-id ID] [--base-url URL]" ]
		[ "${lines[1]}" = "                [--api-key-env NAME] [--yes] [--yes-download] [--port N]" ]
		[ "${lines[2]}" = "                [--non-interactive]" ]
		[ "${#lines[@]}" -eq 3 ]
		[ -z "$stderr" ]
	done
	[ ! -e .heartwood ]
}

@test "hw setup: a model id in LiteLLM form (openai/ID) is saved as ID" {
	run -0 --separate-stderr hw setup --non-interactive --yes \
	    --model-source custom --model-id openai/m --base-url "$DEAD"
	[ "$(jq -r .model <<<"$output")" = openai/m ]
	[ "$(jq -r .model_id <<<"$output")" = m ]
	[ "$(saved model_id)" = m ]
}

@test "hw setup: the bare provider prefix openai/ is not a model id" {
	run -2 --separate-stderr hw setup --non-interactive --yes \
	    --model-source custom --model-id openai/ --base-url "$DEAD"
	[ "$stderr" = "hw: invalid model id 'openai/': the name after openai/ is empty" ]
	[ ! -e "$CFG" ]
}
