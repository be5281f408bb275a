#!/usr/bin/env bats
# The model policy engine (hw-policy(7)): endpoint normalization rule by
# rule, evaluate step by step, the profiles of the platforms and of
# [policy] in .heartwood/config.toml, the agent's recorded decision, a
# denied route that stops the agent before any byte leaves, the custom-api
# policy of hw setup, Low-Risk Automation refused on a keyed route, and
# hw doctor's policy, platform and credential isolation.

load lib
load agent

setup() {
	agent_setup
	# no platform markers from the machine the tests run on
	unset GOOGLE_PROJECT HEARTWOOD_PLATFORM HEARTWOOD_CARINA SLURM_CLUSTER_NAME
	unset HW_CAPABILITY_TIER
	for v in $(env | sed -n 's/^\(\(WORKSPACE\|DX\|SB\)_[A-Za-z0-9_]*\)=.*/\1/p'); do
		unset "$v"
	done
	export XDG_CONFIG_HOME=$BATS_TEST_TMPDIR/config
}
teardown() { agent_teardown; }

OPENAI=https://api.openai.com/v1/chat/completions

# policy TOML-LINES: a [policy] table in the project's configuration
policy() {
	mkdir -p .heartwood
	printf '[policy]\n%s\n' "$1" >.heartwood/config.toml
}

# ---- normalize_endpoint, one rule a test ----

@test "normalize: a scheme is required" {
	run -2 --separate-stderr hw policy normalize api.openai.com/v1
	[ "$stderr" = "hw: invalid endpoint: a scheme is required" ]
}

@test "normalize: a fragment is refused" {
	run -2 --separate-stderr hw policy normalize 'https://a.example/v1#x'
	[ "$stderr" = "hw: invalid endpoint: a fragment is not allowed" ]
}

@test "normalize: user information is refused" {
	run -2 --separate-stderr hw policy normalize 'https://me:pw@a.example/v1'
	[ "$stderr" = "hw: invalid endpoint: user information is not allowed" ]
}

@test "normalize: a query is refused" {
	run -2 --separate-stderr hw policy normalize 'https://a.example/v1?k=v'
	[ "$stderr" = "hw: invalid endpoint: a query is not allowed" ]
}

@test "normalize: the scheme and the host are lowercased, the path kept" {
	run -0 hw policy normalize 'HTTPS://API.Example.COM/V1/Chat'
	[ "$output" = "https://api.example.com/V1/Chat" ]
}

@test "normalize: an IPv6 host stays bracketed and is lowercased" {
	run -0 hw policy normalize 'http://[FE80::1]:8080/v1'
	[ "$output" = "http://[fe80::1]:8080/v1" ]
	run -2 --separate-stderr hw policy normalize 'http://[::1/v1'
	[ "$stderr" = "hw: invalid endpoint: the host has an unclosed '['" ]
	run -2 --separate-stderr hw policy normalize 'http://[nothex]/v1'
	[ "$stderr" = "hw: invalid endpoint: the host is invalid" ]
}

@test "normalize: an explicit port is kept, a default one too" {
	run -0 hw policy normalize 'https://a.example:443/v1'
	[ "$output" = "https://a.example:443/v1" ]
	run -0 hw policy normalize 'http://a.example:80'
	[ "$output" = "http://a.example:80/" ]
	run -2 --separate-stderr hw policy normalize 'http://a.example:99999/'
	[ "$stderr" = "hw: invalid endpoint: the port is invalid" ]
	run -2 --separate-stderr hw policy normalize 'http://a.example:/'
	[ "$stderr" = "hw: invalid endpoint: the port is invalid" ]
}

@test "normalize: an empty path becomes /" {
	run -0 hw policy normalize 'https://a.example'
	[ "$output" = "https://a.example/" ]
}

@test "normalize: local://AUTHORITY/PATH is allowed" {
	run -0 hw policy normalize 'LOCAL://heartwood-managed/models/x'
	[ "$output" = "local://heartwood-managed/models/x" ]
}

@test "normalize: other schemes are refused" {
	run -2 --separate-stderr hw policy normalize 'ftp://a.example/v1'
	[ "$stderr" = "hw: invalid endpoint: the scheme must be http, https or local" ]
	run -2 --separate-stderr hw policy normalize 'file:///etc/passwd'
	[ "$stderr" = "hw: invalid endpoint: the scheme must be http, https or local" ]
}

@test "normalize: a missing host and spaces are refused" {
	run -2 --separate-stderr hw policy normalize 'https:///v1'
	[ "$stderr" = "hw: invalid endpoint: the host is missing" ]
	run -2 --separate-stderr hw policy normalize 'https://a example/'
	[ "$stderr" = "hw: invalid endpoint: it must be printable ASCII without spaces" ]
}

# ---- evaluate, one step a test ----

@test "evaluate 1: an unknown tier or mode is an error, not a decision" {
	run -2 --separate-stderr hw policy evaluate "$OPENAI" --tier bogus
	[ "$stderr" = "hw: unknown capability tier 'bogus': want autonomous, supervised or experimental" ]
	[ -z "$output" ]
	run -2 --separate-stderr hw policy evaluate "$OPENAI" --mode yolo
	[ "$stderr" = "hw: unknown confirmation mode 'yolo': want always-confirm or confirm-risky" ]
}

@test "evaluate 2: an endpoint that does not normalize is denied as [invalid-endpoint]" {
	run -1 --separate-stderr hw policy evaluate 'https://me:pw@api.openai.com/v1'
	[ "$(jq -r .decision.endpoint <<<"$output")" = "[invalid-endpoint]" ]
	[ "$(jq -r .attestation.rule <<<"$output")" = invalid-endpoint ]
	[ "$(jq -r .decision.decision <<<"$output")" = deny ]
	refute grep -q 'me:pw' <<<"$output$stderr"
}

@test "evaluate 3: a tier the policy does not allow is denied" {
	run -1 --separate-stderr hw policy evaluate "$OPENAI" --tier autonomous
	[ "$(jq -r .attestation.rule <<<"$output")" = capability-tier ]
	[ "$stderr" = "hw: denied by policy 'generic-default' (rule capability-tier): capability tier 'autonomous' is not in allowed_capability_tiers; change [policy] in .heartwood/config.toml (hw-policy(7)) or choose another route with 'hw setup'" ]
	run -0 hw policy evaluate "$OPENAI" --tier experimental
}

@test "evaluate 4: a review mode the policy does not allow is denied" {
	policy 'allowed_action_confirmation_modes = "always-confirm"'
	run -1 --separate-stderr hw policy evaluate "$OPENAI" --mode confirm-risky
	[ "$(jq -r .attestation.rule <<<"$output")" = confirmation-mode ]
	run -0 hw policy evaluate "$OPENAI" --mode always-confirm
}

@test "evaluate 5: a credential reference off the allowlist is denied, none passes" {
	run -1 --separate-stderr hw policy evaluate "$OPENAI" --credential MY_KEY
	[ "$(jq -r .attestation.rule <<<"$output")" = credential-allowlist ]
	run -0 hw policy evaluate "$OPENAI" --credential OPENAI_API_KEY
	run -0 hw policy evaluate "$OPENAI"
}

@test "evaluate 6: egress only to an exactly allowlisted endpoint" {
	run -1 --separate-stderr hw policy evaluate https://evil.example/v1/chat/completions
	[ "$(jq -r .attestation.rule <<<"$output")" = egress-allowlist ]
	# exact: a trailing '/' is another endpoint; normalization still applies
	run -1 hw policy evaluate "$OPENAI/"
	run -0 hw policy evaluate 'HTTPS://API.OPENAI.COM/v1/chat/completions'
	# the catalog is judged against the catalog allowlist
	run -1 hw policy evaluate https://api.openai.com/v1/models
	run -0 hw policy evaluate https://api.openai.com/v1/models --catalog
	run -1 hw policy evaluate "$OPENAI" --catalog
}

@test "evaluate 6: without deny-by-default any valid endpoint passes" {
	policy 'deny_egress_by_default = false'
	run -0 hw policy evaluate https://elsewhere.example/v1/chat/completions
	[ "$(jq -r .decision.reason <<<"$output")" = "allowed by policy 'generic-default': egress is not denied by default" ]
}

@test "evaluate 7: otherwise allowed, with the decision and the attestation" {
	run -0 --separate-stderr hw policy evaluate "$OPENAI" --credential OPENAI_API_KEY
	[ "$(jq -c '.decision | del(.reason)' <<<"$output")" = '{"capability_tier":"supervised","decision":"allow","decision_id":"hw-policy-evaluate","endpoint":"https://api.openai.com/v1/chat/completions","policy_profile_id":"generic-default","schema_version":"heartwood.model-call-decision.v1"}' ]
	[ "$(jq -r .attestation.schema_version <<<"$output")" = heartwood.egress-attestation-record.v1 ]
	[ "$(jq -r .attestation.rule <<<"$output")" = allowed ]
	[ -z "$stderr" ]
}

# ---- profiles ----

@test "profile: the generic default as the reference lists it" {
	run -0 hw policy show
	[ "$(jq -c '.policy | [.policy_id, .deny_egress_by_default, .allowed_capability_tiers, .allowed_action_confirmation_modes, .aggregate_count_floor]' <<<"$output")" = '["generic-default",true,["supervised","experimental"],["always-confirm","confirm-risky"],20]' ]
	[ "$(jq -c .policy.allowed_model_endpoints <<<"$output")" = '["http://127.0.0.1:8765/v1/chat/completions","https://api.openai.com/v1/chat/completions","https://api.openai.com/v1/responses","https://api.anthropic.com/v1/messages","https://chatgpt.com/backend-api/codex/responses"]' ]
	[ "$(jq -c .policy.credential_allowlist <<<"$output")" = '["OPENAI_API_KEY","ANTHROPIC_API_KEY","STANFORD_AI_API_KEY","subscription:openai"]' ]
	[ "$(jq -r .credential_isolation <<<"$output")" = not-configured ]
	[ "$(jq -r .decision <<<"$output")" = null ]
}

@test "profile: Carina's default allows only the loopback runtime, no key" {
	HEARTWOOD_CARINA=1 run -0 hw policy show
	[ "$(jq -c '.policy | [.policy_id, .allowed_model_endpoints, .credential_allowlist]' <<<"$output")" = '["carina-default",["http://127.0.0.1:8765/v1/chat/completions"],[]]' ]
}

@test "profile: [policy] replaces the fields it names and keeps the rest" {
	policy 'policy_id = "lab"
allowed_model_endpoints = "HTTPS://Models.Lab.example/v1/chat/completions"
credential_allowlist = "LAB_KEY"'
	run -0 hw policy show
	[ "$(jq -c '.policy | [.policy_id, .allowed_model_endpoints, .credential_allowlist, .allowed_capability_tiers]' <<<"$output")" = '["lab",["https://models.lab.example/v1/chat/completions"],["LAB_KEY"],["supervised","experimental"]]' ]
}

@test "profile: a bad endpoint in [policy] names the field and entry" {
	policy 'allowed_model_endpoints = "https://ok.example/ ftp://bad.example/"'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] allowed_model_endpoints: entry 2: invalid endpoint: the scheme must be http, https or local" ]
}

@test "profile: an unknown tier in [policy] is refused" {
	policy 'allowed_capability_tiers = "supervised godlike"'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] allowed_capability_tiers: unknown value 'godlike'" ]
}

@test "profile: an unknown mode in [policy] is refused" {
	policy 'allowed_action_confirmation_modes = "never-ask"'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] allowed_action_confirmation_modes: unknown value 'never-ask'" ]
}

@test "profile: an aggregate count floor under 20 is refused" {
	policy 'aggregate_count_floor = 5'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] aggregate_count_floor: expected an integer of at least 20" ]
}

@test "profile: a wrong schema version is refused" {
	policy 'schema_version = "heartwood.policy-profile.v9"'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] schema_version: expected heartwood.policy-profile.v1" ]
}

@test "profile: a list that is not a string is refused" {
	policy 'credential_allowlist = 3'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] credential_allowlist: expected a string of space-separated entries" ]
}

@test "profile: deny_egress_by_default must be a boolean" {
	policy 'deny_egress_by_default = "no"'
	run -2 --separate-stderr hw policy show
	[ "$stderr" = "hw: .heartwood/config.toml [policy] deny_egress_by_default: expected true or false" ]
}

# ---- the agent ----

@test "agent: the recorded decision is the policy's, with its attestation" {
	capture
	chat c1 "Hello"
	run -0 --separate-stderr hw-agent run session-main
	hw-session replay session-main >events
	d=$(jq -c 'select(.kind == "model_call.decision.recorded") | .payload' events)
	[ "$(jq -r .decision.decision <<<"$d")" = allow ]
	[ "$(jq -r .decision.policy_profile_id <<<"$d")" = generic-custom-api ]
	[ "$(jq -r .decision.endpoint <<<"$d")" = "$HW_BASE_URL/chat/completions" ]
	[ "$(jq -r .attestation.rule <<<"$d")" = allowed ]
	[ "$(jq -r .attestation.purpose <<<"$d")" = agent-turn ]
	[ "$(jq -r .model_profile.credential_isolation <<<"$d")" = credential-free ]
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
	# the projection's context carries the policy and the isolation
	[ "$(proj '.context | [.modelDecision, .policyProfileId, .credentialIsolation]')" = '["allow","generic-custom-api","credential-free"]' ]
}

@test "agent: a denied route stops before any byte leaves, recorded, naming the rule" {
	capture
	chat c1 "Hello"
	policy 'allowed_model_endpoints = "https://models.lab.example/v1/chat/completions"'
	run -1 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: HW-AGENT-011: denied by policy 'generic-default' (rule egress-allowlist): endpoint '$HW_BASE_URL/chat/completions' is not in allowed_model_endpoints; change [policy] in .heartwood/config.toml (hw-policy(7)) or choose another route with 'hw setup'" ]
	# the stand-in model saw no request at all
	refute test -s requests.jsonl
	hw-session replay session-main >events
	[ "$(jq -r 'select(.kind == "model_call.decision.recorded") | .payload.decision.decision' events)" = deny ]
	[ "$(jq -r 'select(.kind == "error.recorded") | .payload.code' events)" = HW-AGENT-011 ]
	# once the policy allows it, the same session goes on
	policy "allowed_model_endpoints = \"$HW_BASE_URL/chat/completions\""
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
}

@test "agent: a tier the policy does not allow is denied before the call" {
	capture
	chat c1 "Hello"
	HW_CAPABILITY_TIER=autonomous run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"(rule capability-tier)"* ]]
	refute test -s requests.jsonl
}

@test "agent: an unknown tier is an error and nothing is sent" {
	capture
	chat c1 "Hello"
	HW_CAPABILITY_TIER=bogus run -2 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: unknown capability tier 'bogus': want autonomous, supervised or experimental" ]
	refute test -s requests.jsonl
}

@test "agent: a credential reference off a project policy's allowlist is denied" {
	capture
	export LAB_KEY=not-a-real-key-0001
	chat c1 "Hello"
	policy "allowed_model_endpoints = \"$HW_BASE_URL/chat/completions\""
	HW_API_KEY_ENV=LAB_KEY run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"(rule credential-allowlist): credential reference 'LAB_KEY'"* ]]
	refute grep -q not-a-real-key-0001 <<<"$stderr"
	refute test -s requests.jsonl
}

# ---- hw setup and Low-Risk Automation ----

@test "hw setup: a custom API writes the custom-api policy" {
	unset HW_MODEL
	run -0 hw setup --non-interactive --yes --model-source custom \
	    --model-id m --base-url http://127.0.0.1:9/v1
	run -0 hw policy show
	[ "$(jq -r .policy.policy_id <<<"$output")" = generic-custom-api ]
	[ "$(jq -c '.policy.allowed_model_endpoints[-2:]' <<<"$output")" = '["http://127.0.0.1:9/v1/chat/completions","http://127.0.0.1:9/v1/responses"]' ]
	[ "$(jq -c '.policy.allowed_model_catalog_endpoints[-1]' <<<"$output")" = '"http://127.0.0.1:9/v1/models"' ]
	[ "$(jq -r .decision.decision <<<"$output")" = allow ]
	grep -qx 'schema_version = "heartwood.policy-profile.v1"' .heartwood/config.toml
}

@test "hw setup: openai keeps the default policy, which allows it" {
	unset HW_MODEL
	run -0 hw setup --non-interactive --yes --model-source openai --model-id gpt-4o
	refute grep -q '^\[policy\]' .heartwood/config.toml
	export OPENAI_API_KEY=x
	run -0 hw policy show
	[ "$(jq -r .decision.decision <<<"$output")" = allow ]
	[ "$(jq -r .credential_isolation <<<"$output")" = application-scrubbed ]
}

@test "Low-Risk Automation: refused when saved on a keyed route, with the reason" {
	capture
	export LAB_KEY=not-a-real-key-0002
	export HW_API_KEY_ENV=LAB_KEY
	mkdir -p .heartwood
	run -1 --separate-stderr hw-agent mode auto-approve-low-risk
	[ "$stderr" = "hw-agent: refusing Low-Risk Automation: the model route's credential isolation is application-scrubbed (its key is read by the same user that runs the actions), and Low-Risk Automation needs a credential-free (keyless loopback) or platform-isolated route; choose one with 'hw setup', or keep Review Every Action" ]
	refute grep -q confirm-risky .heartwood/config.toml
	run -1 --separate-stderr hw actions set auto-approve-low-risk
	refute grep -q confirm-risky .heartwood/config.toml
	unset HW_API_KEY_ENV
	run -0 hw-agent mode auto-approve-low-risk
	[ "$(jq -r .mode <<<"$output")" = auto-approve-low-risk ]
}

# ---- hw doctor ----

@test "hw doctor: the platform, the policy's decision and the credential isolation" {
	capture
	run -0 hw doctor --json
	[ "$(jq -r .platform_id <<<"$output")" = generic ]
	[ "$(jq -r .platform.capabilities.display_name <<<"$output")" = "Workstation or container" ]
	[ "$(jq -r .credential_isolation <<<"$output")" = credential-free ]
	[ "$(jq -r .policy_decision.decision <<<"$output")" = allow ]
	[ "$(jq -r '.checks[] | select(.check_id == "policy") | .status' <<<"$output")" = pass ]
	run -0 hw doctor
	[[ "$output" == *"[OK] platform: generic (Workstation or container)"* ]]
	[[ "$output" == *"[OK] credential isolation: credential-free"* ]]
	[[ "$output" == *"[OK] allowed by policy 'generic-custom-api'"* ]]
}

@test "hw doctor: a denied route makes setup required, naming the rule" {
	capture
	policy 'allowed_model_endpoints = "https://models.lab.example/v1/chat/completions"'
	run -0 hw doctor --json
	[ "$(jq -r .state <<<"$output")" = setup-required ]
	[ "$(jq -r .policy_decision.decision <<<"$output")" = deny ]
	[ "$(jq -r '.checks[] | select(.check_id == "policy") | .code' <<<"$output")" = HW-MODEL-001 ]
	[[ "$(jq -r '.checks[] | select(.check_id == "policy") | .summary' <<<"$output")" == *"(rule egress-allowlist)"* ]]
	refute test -s requests.jsonl
}

@test "agent: an approved continuation is judged again, and a denial runs nothing" {
	two_actions
	serve turns.jsonl
	chat c1 "record a run"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj .pendingApproval.actions | jq length)" -eq 2 ]
	decide_directly approve
	# the policy changed while the set waited: the approved set does not run
	policy 'allowed_model_endpoints = "https://models.lab.example/v1/chat/completions"'
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == *"(rule egress-allowlist)"* ]]
	refute test -e ran.txt
	refute test -e notes.md
	[ "$(hw-session replay session-main | jq -s '[.[] | select(.kind == "model_call.decision.recorded") | .payload.decision.decision]' | jq -c .)" = '["allow","deny"]' ]
}

@test "Low-Risk Automation: the terminal's /permissions is refused the same way" {
	capture
	export LAB_KEY=not-a-real-key-0003 HW_API_KEY_ENV=LAB_KEY
	run -0 --separate-stderr bash -c "printf '%s\n' '/permissions auto-approve-low-risk' | heartwood --plain"
	[[ "$stderr" == *"refusing Low-Risk Automation: the model route's credential isolation is application-scrubbed"* ]]
	[ "$(hw-agent mode | jq -r .mode)" = ask-every-time ]
}
