#!/usr/bin/env bats
# hw-audit signer: the signer registry (discovery, the TOML subset, every
# validation rule, file constraints), init-local, serve-local's HTTP checks
# in order, checkpoints signed through a profile and verified three ways,
# and a client that refuses signers that lie, redirect or misbehave.
#
# Each test has its own HOME and XDG_CONFIG_HOME in its temp directory and
# works in a project directory beside them, since the registry and its
# files must lie outside the project.  Servers bind 127.0.0.1 only, on a
# free port.  The 403 test needs a second local address to connect from
# (the packets still stay on the loopback interface) and is skipped
# without one.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	mkdir "$PROJ/proj" "$PROJ/home"
	export HOME="$PROJ/home" XDG_CONFIG_HOME="$PROJ/home/.config"
	unset HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY
	CONF="$XDG_CONFIG_HOME/heartwood"
	REG="$HOME/reg.toml"
	PIDS=()
	cd "$PROJ/proj" || return 1
}

teardown() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	cd / && rm -rf "$PROJ"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for FILE TEXT PID: until FILE holds TEXT, while PID lives (5 s)
wait_for() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || { echo "server died: $(cat "$HOME"/*.err 2>/dev/null)"; return 1; }
		sleep 0.05
	done
	echo "server not ready"
	return 1
}

# local_signer: init-local, moved to a free port ($PORT); $TOKEN, $FP
local_signer() {
	PORT=$(free_port)
	hw-audit signer init-local >"$HOME/init.json"
	sed -i "s/127.0.0.1:8771/127.0.0.1:$PORT/" "$CONF/checkpoint-signers.toml"
	TOKEN=$(cat "$CONF/local-checkpoint-token")
	FP=$(jq -r .public_key_sha256 "$HOME/init.json")
	URL="http://127.0.0.1:$PORT"
}

# serve [ARGS]: start serve-local in the background and wait until ready
serve() {
	hw-audit signer serve-local "$@" >"$HOME/srv.out" 2>"$HOME/srv.err" 3>&- &
	SRV=$!
	PIDS+=("$SRV")
	wait_for "$HOME/srv.out" listening "$SRV"
}

# sign [CURL-ARGS]: POST to the signer; prints "BODY STATUS"
sign() {
	curl -s -w ' %{http_code}' -X POST "$@" "$URL/v1/checkpoints/sign"
}
auth() { printf 'Authorization: Bearer %s' "$TOKEN"; }

# checkpoint OUT [ARGS]: a checkpoint of session-main through the registry
checkpoint() {
	local out=$1
	shift
	hw-audit checkpoint --session session-main --output "$out" \
		--deployment-id lab-7 --retention-policy irb-2026 \
		--retain-until 2033-12-31 "$@"
}

# pycheck DIR PUB: Python's cryptography verifies the checkpoint signature
pycheck() {
	/usr/bin/python3 "$HW_ROOT/t/checkpoint_check.py" "$1" "$2"
}

# ---- init-local ----

@test "signer init-local: four 0600 files in a 0700 directory, the registry as the reference's" {
	run -0 --separate-stderr hw-audit signer init-local
	[ -z "$stderr" ]
	[ "$(stat -c %a "$CONF")" = 700 ]
	[ "$(cd "$CONF" && ls | tr '\n' ' ')" = "checkpoint-signers.toml local-checkpoint-private.pem local-checkpoint-public.pem local-checkpoint-token " ]
	[ "$(stat -c %a "$CONF"/* | sort -u)" = 600 ]
	[[ "$(cat "$CONF/local-checkpoint-token")" =~ ^[A-Za-z0-9_-]{43}$ ]]
	[ "$(wc -c <"$CONF/local-checkpoint-token")" = 44 ]
	refute grep -q "$(cat "$CONF/local-checkpoint-token")" <<<"$output"
	fp="sha256:$(openssl pkey -pubin -in "$CONF/local-checkpoint-public.pem" -outform DER | sha256sum | cut -c1-64)"
	[ "$(openssl pkey -in "$CONF/local-checkpoint-private.pem" -pubout -outform DER | sha256sum | cut -c1-64)" = "${fp#sha256:}" ]
	head -1 "$CONF/local-checkpoint-private.pem" | grep -qx -- '-----BEGIN PRIVATE KEY-----'
	[ "$(jq -c . <<<"$output")" = "$(jq -cn --arg d "$CONF" --arg fp "$fp" '{
		default_profile: "local-development",
		endpoint: "http://127.0.0.1:8771/v1/checkpoints/sign",
		private_key: "\($d)/local-checkpoint-private.pem",
		public_key: "\($d)/local-checkpoint-public.pem",
		public_key_sha256: $fp,
		registry: "\($d)/checkpoint-signers.toml",
		token_file: "\($d)/local-checkpoint-token"}')" ]
	python3 - "$CONF" "$fp" <<'PY'
import sys, tomllib
d, fp = sys.argv[1:]
reg = tomllib.load(open(d + "/checkpoint-signers.toml", "rb"))
assert reg == {
    "schema_version": "heartwood.checkpoint-signer-registry.v1",
    "default_profile": "local-development",
    "profiles": {"local-development": {
        "mode": "development",
        "endpoint": "http://127.0.0.1:8771/v1/checkpoints/sign",
        "signer_id": "local-development",
        "key_id": "local-checkpoint-signing",
        "key_version": "v1",
        "algorithm": "ed25519",
        "public_key_sha256": fp,
        "trusted_public_key": d + "/local-checkpoint-public.pem",
        "authorization_token_file": d + "/local-checkpoint-token",
        "timeout_seconds": 15}}}, reg
PY
}

@test "signer init-local: a second run is refused and changes nothing" {
	hw-audit signer init-local >/dev/null
	before=$(cd "$CONF" && sha256sum * && stat -c '%n %a %Y' *)
	run -1 --separate-stderr hw-audit signer init-local
	[ "$stderr" = "hw-audit: refusing to replace existing '$CONF/local-checkpoint-private.pem'" ]
	[ -z "$output" ]
	[ "$(cd "$CONF" && sha256sum * && stat -c '%n %a %Y' *)" = "$before" ]
}

@test "signer init-local: an existing registry alone stops it before it writes anything" {
	mkdir -p "$CONF"
	echo '# mine' >"$CONF/checkpoint-signers.toml"
	run -1 --separate-stderr hw-audit signer init-local
	[ "$stderr" = "hw-audit: refusing to replace existing '$CONF/checkpoint-signers.toml'" ]
	[ "$(ls "$CONF")" = checkpoint-signers.toml ]
	[ "$(cat "$CONF/checkpoint-signers.toml")" = '# mine' ]
}

@test "signer init-local: a relative XDG_CONFIG_HOME is ignored for ~/.config" {
	XDG_CONFIG_HOME=rel run -0 hw-audit signer init-local
	[ -f "$HOME/.config/heartwood/checkpoint-signers.toml" ]
	[ ! -e rel ]
}

@test "signer init-local: warns when another registry takes precedence" {
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$REG run -0 --separate-stderr hw-audit signer init-local
	[ "$stderr" = "hw-audit: warning: the signer registry '$REG' takes precedence over the one written" ]
	[ -f "$CONF/checkpoint-signers.toml" ]
}

# ---- registry validation: each invalid registry is refused clearly ----

# base_registry: a valid registry at $REG (0600) naming keys in $HOME
base_registry() {
	cat >"$REG" <<EOF
# a lab registry
schema_version = "heartwood.checkpoint-signer-registry.v1"
default_profile = "lab"

[profiles.lab]
mode = "development"
endpoint = "http://127.0.0.1:8771/v1/checkpoints/sign"
signer_id = "lab"
key_id = "k1"
key_version = "v1"
algorithm = "ed25519"
public_key_sha256 = "sha256:$(printf '%064d' 0)"
trusted_public_key = "$HOME/pub.pem"
authorization_token_file = "$HOME/token"
timeout_seconds = 15
EOF
	chmod 600 "$REG"
	export HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$REG
}

# refused SED [MESSAGE]: edit the base registry with SED; verify-checkpoint
# must refuse it with 65 and exactly "invalid signer registry: MESSAGE"
refused() {
	base_registry
	sed -i "$1" "$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: invalid signer registry '$REG': $2" ] || { echo "$stderr"; return 1; }
	[ -z "$output" ]
}

@test "registry: the base registry is valid (it fails only on its missing key)" {
	base_registry
	run -66 --separate-stderr hw-audit verify-checkpoint cp
	[[ "$stderr" == "hw-audit: cannot load public key '$HOME/pub.pem': "* ]] || { echo "$stderr"; return 1; }
}

@test "registry: an unknown top-level key is refused" {
	refused '1i colour = "blue"' "unknown top-level key 'colour'"
}

@test "registry: an unknown profile key is refused" {
	refused '$a colour = "blue"' "profile 'lab': unknown key 'colour'"
}

@test "registry: a profile id outside ^[a-z0-9][a-z0-9_-]*\$ is refused" {
	refused 's/^\[profiles.lab\]/[profiles.Lab]/; s/^default_profile = "lab"/default_profile = "Lab"/' \
		"invalid profile id 'Lab': it must match ^[a-z0-9][a-z0-9_-]*$"
}

@test "registry: a profile id starting with - is refused" {
	refused 's/^\[profiles.lab\]/[profiles."-lab"]/' \
		"invalid profile id '-lab': it must match ^[a-z0-9][a-z0-9_-]*$"
}

@test "registry: a default_profile that is not a profile is refused" {
	refused 's/^default_profile = "lab"/default_profile = "other"/' "default_profile 'other' is not a profile"
}

@test "registry: a missing default_profile is refused" {
	refused '/^default_profile/d' "missing 'default_profile'"
}

@test "registry: a wrong schema_version is refused" {
	refused 's/registry.v1/registry.v2/' "schema_version must be 'heartwood.checkpoint-signer-registry.v1'"
}

@test "registry: a missing required profile key is refused" {
	refused '/^key_version/d' "profile 'lab': missing 'key_version'"
}

@test "registry: an http endpoint to localhost is refused" {
	refused 's|127.0.0.1:8771|localhost:8771|' \
		"profile 'lab': an http endpoint must name a numeric loopback IP address such as 127.0.0.1, not 'localhost'"
}

@test "registry: an http endpoint to a non-loopback address is refused" {
	refused 's|127.0.0.1:8771|192.0.2.1:8771|' \
		"profile 'lab': an http endpoint must name a numeric loopback IP address such as 127.0.0.1"
}

@test "registry: an http endpoint in production is refused" {
	refused 's/^mode = "development"/mode = "production"/' \
		"profile 'lab': http endpoints are allowed only in development mode; use https"
}

@test "registry: an endpoint with a query is refused" {
	refused 's|/sign"|/sign?x=1"|' "profile 'lab': endpoint must not have a query"
}

@test "registry: an endpoint with a fragment is refused" {
	refused 's|/sign"|/sign#x"|' "profile 'lab': endpoint must not have a fragment"
}

@test "registry: an endpoint with userinfo is refused" {
	refused 's|http://127|http://me:pw@127|' "profile 'lab': endpoint must not contain user information"
}

@test "registry: an endpoint with another path is refused" {
	refused 's|/v1/checkpoints/sign|/v1/sign|' "profile 'lab': endpoint path must be exactly /v1/checkpoints/sign"
}

@test "registry: an endpoint with another scheme is refused" {
	refused 's|http://|ftp://|' "profile 'lab': endpoint must be an http or https URL"
}

@test "registry: an endpoint with a control character is refused" {
	refused 's|/sign"|/sign\\t"|' "profile 'lab': endpoint contains a control character"
}

@test "registry: an endpoint longer than 2048 characters is refused" {
	refused "s|https\\?://127.0.0.1:8771|https://$(printf 'a%.0s' {1..2030}).example|" \
		"profile 'lab': endpoint is longer than 2048 characters"
}

@test "registry: timeout_seconds 0 is refused" {
	refused 's/^timeout_seconds = 15/timeout_seconds = 0/' \
		"profile 'lab': timeout_seconds must be more than 0 and at most 120"
}

@test "registry: timeout_seconds 121 is refused" {
	refused 's/^timeout_seconds = 15/timeout_seconds = 121/' \
		"profile 'lab': timeout_seconds must be more than 0 and at most 120"
}

@test "registry: timeout_seconds true is refused" {
	refused 's/^timeout_seconds = 15/timeout_seconds = true/' \
		"profile 'lab': timeout_seconds must be a number, not a boolean"
}

@test "registry: timeout_seconds as a string is refused" {
	refused 's/^timeout_seconds = 15/timeout_seconds = "15"/' "profile 'lab': timeout_seconds must be a number"
}

@test "registry: a relative trusted_public_key is refused" {
	refused 's|^trusted_public_key = .*|trusted_public_key = "pub.pem"|' \
		"profile 'lab': trusted_public_key must be an absolute path"
}

@test "registry: a relative authorization_token_file is refused" {
	refused 's|^authorization_token_file = .*|authorization_token_file = "token"|' \
		"profile 'lab': authorization_token_file must be an absolute path"
}

@test "registry: a development profile without a token file is refused" {
	refused '/^authorization_token_file/d' "profile 'lab': a development profile needs authorization_token_file"
}

@test "registry: an unknown algorithm is refused" {
	refused 's/"ed25519"/"rsa"/' "profile 'lab': algorithm must be 'ed25519' or 'ecdsa-p256-sha256'"
}

@test "registry: a malformed public_key_sha256 is refused" {
	refused 's/sha256:0000/sha256:000/' "profile 'lab': public_key_sha256 must be 'sha256:' and 64 lowercase hex digits"
}

@test "registry: TOML outside the subset is refused with file:line:" {
	base_registry
	sed -i 's/^key_version = "v1"/key_version = ["v1"]/' "$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: $REG:10: arrays are not supported" ]
}

@test "registry: a duplicate key is refused with file:line:" {
	base_registry
	echo 'mode = "production"' >>"$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: $REG:16: duplicate key 'mode'" ]
}

@test "registry: a group-writable registry is refused" {
	base_registry
	chmod 620 "$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: refusing signer registry '$REG': group or others can write it (mode 0620)" ]
}

@test "registry: a symbolic link is refused" {
	base_registry
	ln -s "$REG" "$HOME/link.toml"
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$HOME/link.toml run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: refusing signer registry '$HOME/link.toml': it is a symbolic link" ]
}

@test "registry: a registry over 256 KiB is refused" {
	base_registry
	head -c 262144 /dev/zero | tr '\0' '#' >>"$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: refusing signer registry '$REG': larger than 262144 bytes" ]
}

@test "registry: HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY must be absolute, and must exist" {
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=reg.toml run -2 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY must be an absolute path" ]
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$HOME/none.toml run -66 --separate-stderr hw-audit verify-checkpoint cp
	[[ "$stderr" == "hw-audit: cannot open signer registry '$HOME/none.toml': "* ]]
}

@test "registry: the environment's registry is the only authority, never merged with the user's" {
	hw-audit signer init-local >/dev/null
	base_registry
	sed -i 's/^mode = "development"/mode = "staging"/' "$REG"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: invalid signer registry '$REG': profile 'lab': mode must be 'production' or 'development'" ]
	run -65 --separate-stderr hw-audit verify-checkpoint cp --profile local-development
	[ "$stderr" = "hw-audit: invalid signer registry '$REG': profile 'lab': mode must be 'production' or 'development'" ]
}

@test "registry: none found means --public-key or --key is needed" {
	run -2 --separate-stderr hw-audit verify-checkpoint cp
	[[ "$stderr" == "hw-audit: verify-checkpoint needs --public-key or a signer registry"* ]]
	append_n 1
	run -2 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: checkpoint needs --key or a signer registry"* ]]
	run -2 --separate-stderr checkpoint cp --profile lab
	[[ "$stderr" == "hw-audit: no checkpoint signer registry found"* ]]
	[ ! -e cp ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 1 ] # nothing exported
}

@test "registry: an unknown --profile is a usage error" {
	hw-audit signer init-local >/dev/null
	run -2 --separate-stderr hw-audit verify-checkpoint cp --profile nope
	[ "$stderr" = "hw-audit: no profile 'nope' in signer registry '$CONF/checkpoint-signers.toml'" ]
}

@test "registry: a trusted key that is not the pinned one is refused" {
	hw-audit signer init-local >/dev/null
	openssl genpkey -algorithm ed25519 2>/dev/null | openssl pkey -pubout -out "$HOME/other.pub" 2>/dev/null
	sed -i "s|^trusted_public_key = .*|trusted_public_key = \"$HOME/other.pub\"|" "$CONF/checkpoint-signers.toml"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: invalid signer registry '$CONF/checkpoint-signers.toml': profile 'local-development': the fingerprint of trusted_public_key is not public_key_sha256" ]
}

@test "registry: a registry inside the project is refused" {
	hw-audit signer init-local >/dev/null
	cp "$CONF/checkpoint-signers.toml" reg.toml
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$PWD/reg.toml run -2 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: refusing signer registry '$PWD/reg.toml': it is inside the project directory '$PWD'" ]
}

@test "registry: a trusted key inside the project is refused" {
	hw-audit signer init-local >/dev/null
	cp "$CONF/local-checkpoint-public.pem" pub.pem
	sed -i "s|^trusted_public_key = .*|trusted_public_key = \"$PWD/pub.pem\"|" "$CONF/checkpoint-signers.toml"
	run -2 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: refusing trusted public key '$PWD/pub.pem': it is inside the project directory '$PWD'" ]
}

@test "registry: a token file readable by the group is refused before anything is exported" {
	local_signer
	append_n 2
	chmod 640 "$CONF/local-checkpoint-token"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: refusing token file '$CONF/local-checkpoint-token': group or others can read or write it (mode 0640)" ]
	[ ! -e cp ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 2 ]
}

@test "registry: a token file that does not hold a token is refused without showing it" {
	local_signer
	append_n 1
	printf 'secret words\n' >"$CONF/local-checkpoint-token"
	run -65 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: refusing token file '$CONF/local-checkpoint-token': it does not hold one bearer token"* ]]
	[[ "$stderr" != *secret* ]]
}

# ---- serve-local ----

@test "serve-local: announces where it listens, and exits 0 on SIGTERM" {
	local_signer
	serve
	[ "$(cat "$HOME/srv.out")" = "{\"listening\":\"$URL\"}" ]
	kill -TERM "$SRV"
	rc=0
	wait "$SRV" || rc=$?
	[ "$rc" -eq 0 ]
	[ ! -s "$HOME/srv.err" ]
}

@test "serve-local: GET /healthz is 200 {\"status\":\"ready\"} with no-store and nosniff" {
	local_signer
	serve
	run -0 curl -s -D "$HOME/h" "$URL/healthz"
	[ "$output" = '{"status":"ready"}' ]
	head -1 "$HOME/h" | grep -q '^HTTP/1.1 200'
	grep -qix 'content-type: application/json.' "$HOME/h"
	grep -qix 'cache-control: no-store.' "$HOME/h"
	grep -qix 'x-content-type-options: nosniff.' "$HOME/h"
}

@test "serve-local: a client that is not on a loopback address gets 403" {
	local_signer
	serve
	src=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9.]+$' | grep -v '^127\.' | head -1)
	[ -n "$src" ] || skip "no second local IPv4 address to connect from"
	run -0 curl -s -w ' %{http_code}' --interface "$src" "$URL/healthz"
	[ "$output" = '{"error":"forbidden: not a loopback client"} 403' ]
}

@test "serve-local: other routes are 404, before authorization" {
	local_signer
	serve
	[ "$(curl -s -w ' %{http_code}' "$URL/")" = '{"error":"not found"} 404' ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/checkpoints/sign")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/healthz")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "$(auth)" "$URL/v1/checkpoints/sign")" = 404 ]
	[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/v1/checkpoints/sign/")" = 404 ]
}

@test "serve-local: a missing Authorization header is 401" {
	local_signer
	serve
	[ "$(sign -H 'Content-Type: application/json' -d '{}')" = '{"error":"unauthorized"} 401' ]
}

@test "serve-local: a wrong token is 401" {
	local_signer
	serve
	[ "$(sign -H "Authorization: Bearer x$TOKEN" -H 'Content-Type: application/json' -d '{}')" = '{"error":"unauthorized"} 401' ]
	[ "$(sign -H "Authorization: bearer $TOKEN" -H 'Content-Type: application/json' -d '{}')" = '{"error":"unauthorized"} 401' ]
	[ "$(sign -H "Authorization: Bearer ${TOKEN:0:42}" -H 'Content-Type: application/json' -d '{}')" = '{"error":"unauthorized"} 401' ]
}

@test "serve-local: two Authorization headers are 401, even both right" {
	local_signer
	serve
	[ "$(sign -H "$(auth)" -H "$(auth)" -H 'Content-Type: application/json' -d '{}')" = '{"error":"unauthorized"} 401' ]
}

@test "serve-local: a missing Content-Type is 415, after authorization" {
	local_signer
	serve
	[ "$(sign -H "$(auth)" -H 'Content-Type:' -d '{}')" = '{"error":"the content type must be application/json"} 415' ]
	[ "$(sign -H 'Content-Type:' -d '{}')" = '{"error":"unauthorized"} 401' ]
}

@test "serve-local: a Content-Type with a charset parameter is 415" {
	local_signer
	serve
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json; charset=utf-8' -d '{}')" = '{"error":"the content type must be application/json"} 415' ]
	[ "$(sign -H "$(auth)" -H 'Content-Type: text/plain' -d '{}')" = '{"error":"the content type must be application/json"} 415' ]
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json' -H 'Content-Type: application/json' -d '{}')" = '{"error":"the content type must be application/json"} 415' ]
}

@test "serve-local: a body over 64 KiB is 413, with or without a length" {
	local_signer
	serve
	head -c 65537 /dev/zero | tr '\0' ' ' >"$HOME/big"
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json' --data-binary @"$HOME/big")" = '{"error":"the request body is larger than 65536 bytes"} 413' ]
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json' -H 'Transfer-Encoding: chunked' --data-binary @"$HOME/big")" = '{"error":"the request body is larger than 65536 bytes"} 413' ]
	# 64 KiB exactly is read, and then judged as a request
	head -c 65536 /dev/zero | tr '\0' ' ' >"$HOME/edge"
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json' --data-binary @"$HOME/edge")" = '{"error":"the body is not JSON"} 422' ]
}

@test "serve-local: an invalid request is 422" {
	local_signer
	serve
	ct='Content-Type: application/json'
	[ "$(sign -H "$(auth)" -H "$ct" -d 'not json')" = '{"error":"the body is not JSON"} 422' ]
	[ "$(sign -H "$(auth)" -H "$ct" -d '{}')" = '{"error":"the body is not a heartwood.audit-checkpoint-sign-request.v1"} 422' ]
	[ "$(sign -H "$(auth)" -H "$ct" -d '{"schema_version":"heartwood.audit-checkpoint-sign-request.v1","statement":{},"x":1}')" = \
		'{"error":"the body is not a heartwood.audit-checkpoint-sign-request.v1"} 422' ]
	[ "$(sign -H "$(auth)" -H "$ct" -d '{"schema_version":"heartwood.audit-checkpoint-sign-request.v1","statement":{}}')" = \
		'{"error":"checkpoint is invalid: statement fields or version"} 422' ]
	[ "$(sign -H "$(auth)" -H "$ct" -d '{"schema_version":"heartwood.audit-checkpoint-sign-request.v1","statement":[]}')" = \
		'{"error":"checkpoint is invalid: the statement is not an object"} 422' ]
}

@test "serve-local: a statement verify-checkpoint would refuse is 422" {
	local_signer
	serve
	append_n 2
	checkpoint cp >/dev/null
	jq -c '{schema_version: "heartwood.audit-checkpoint-sign-request.v1",
		statement: (.statement | .retention.retain_until = "2000-01-01")}' cp/checkpoint.json >req.json
	[ "$(sign -H "$(auth)" -H 'Content-Type: application/json' --data-binary @req.json)" = \
		'{"error":"checkpoint is invalid: statement retain_until (a date no earlier than created_at)"} 422' ]
}

@test "serve-local: a good request is 200 with the canonical signature, as in the bundle" {
	local_signer
	serve
	append_n 2
	checkpoint cp >/dev/null
	jq '{schema_version: "heartwood.audit-checkpoint-sign-request.v1", statement}' cp/checkpoint.json >req.json
	run -0 curl -s -D "$HOME/h" -X POST -H "$(auth)" -H 'Content-Type: application/json' --data-binary @req.json "$URL/v1/checkpoints/sign"
	head -1 "$HOME/h" | grep -q '^HTTP/1.1 200'
	grep -qix 'cache-control: no-store.' "$HOME/h"
	grep -qix 'x-content-type-options: nosniff.' "$HOME/h"
	# Ed25519 is deterministic: the same statement, the same signature
	[ "$output" = "$(jq -cS .signature cp/checkpoint.json)" ]
}

@test "serve-local: only a development profile with a 127.0.0.1 or ::1 endpoint is served" {
	local_signer
	sed -i "s|127.0.0.1:$PORT|127.0.0.2:$PORT|" "$CONF/checkpoint-signers.toml"
	run -2 --separate-stderr hw-audit signer serve-local
	[ "$stderr" = "hw-audit: serve-local binds only 127.0.0.1 or ::1, and the endpoint of profile 'local-development' names '127.0.0.2'" ]
	sed -i "s|http://127.0.0.2:$PORT|https://signer.example|; s/^mode = .*/mode = \"production\"/" "$CONF/checkpoint-signers.toml"
	run -2 --separate-stderr hw-audit signer serve-local
	[ "$stderr" = "hw-audit: serve-local serves only a development profile with an http endpoint, and profile 'local-development' is not one" ]
}

@test "serve-local: a private key others can read is refused" {
	local_signer
	chmod 640 "$CONF/local-checkpoint-private.pem"
	run -65 --separate-stderr hw-audit signer serve-local
	[ "$stderr" = "hw-audit: cannot load private key '$CONF/local-checkpoint-private.pem': group or others can access it (mode 0640)" ]
}

@test "serve-local: a private key that is not the registry's is refused" {
	local_signer
	openssl genpkey -algorithm ed25519 -out "$HOME/k.pem" 2>/dev/null
	cat "$HOME/k.pem" >"$CONF/local-checkpoint-private.pem"
	run -65 --separate-stderr hw-audit signer serve-local
	[ "$stderr" = "hw-audit: the fingerprint of '$CONF/local-checkpoint-private.pem' is not the public_key_sha256 of profile 'local-development'" ]
}

@test "serve-local: --registry and --profile select what is served" {
	local_signer
	mv "$CONF/checkpoint-signers.toml" "$CONF/other.toml"
	sed -i 's/local-development\]/lab]/; s/^default_profile = .*/default_profile = "lab"/' "$CONF/other.toml"
	serve --registry "$CONF/other.toml" --profile lab
	[ "$(curl -s "$URL/healthz")" = '{"status":"ready"}' ]
}

@test "serve-local: a port in use is reported" {
	local_signer
	serve
	run -69 --separate-stderr hw-audit signer serve-local
	[ "$stderr" = "hw-audit: cannot listen on 127.0.0.1:$PORT: Address already in use" ]
}

# ---- checkpoints through the local signer ----

@test "checkpoint through the local signer verifies by registry, by --public-key and in Python" {
	local_signer
	serve
	append_n 3
	run -0 --separate-stderr checkpoint "$PROJ/cp"
	[ -z "$stderr" ]
	[ "$(ls -A "$PROJ/cp" | tr '\n' ' ')" = "audit.jsonl checkpoint.json " ]
	[ ! -e "$PROJ/cp.note" ] # a signer signs statements, not notes
	[ "$(jq -c '.signature | [.algorithm, .signer_id, .key_id, .key_version, .public_key_sha256]' "$PROJ/cp/checkpoint.json")" = \
		"[\"ed25519\",\"local-development\",\"local-checkpoint-signing\",\"v1\",\"$FP\"]" ]
	[ "$(jq -r .statement.audit_event_count "$PROJ/cp/checkpoint.json")" = 4 ]
	run -0 hw-audit verify-checkpoint "$PROJ/cp"
	[ "$(jq -r .verified <<<"$output")" = true ]
	run -0 hw-audit verify-checkpoint "$PROJ/cp" --profile local-development
	run -0 hw-audit verify-checkpoint "$PROJ/cp" --public-key "$CONF/local-checkpoint-public.pem"
	[ "$(jq -r .verified <<<"$output")" = true ]
	run -0 pycheck "$PROJ/cp" "$CONF/local-checkpoint-public.pem"
	[ "$output" = ok ]
}

@test "checkpoint: a --key checkpoint and a signer checkpoint with the same key verify alike" {
	local_signer
	serve
	append_n 2
	checkpoint a --key "$CONF/local-checkpoint-private.pem" >/dev/null
	checkpoint b >/dev/null
	for d in a b; do
		run -0 hw-audit verify-checkpoint "$d"
		run -0 hw-audit verify-checkpoint "$d" --public-key "$CONF/local-checkpoint-public.pem"
	done
}

@test "verify-checkpoint: a bundle by another signer fails the profile's pinned identity" {
	local_signer
	append_n 2
	openssl genpkey -algorithm ed25519 -out "$HOME/ed.pem" 2>/dev/null
	openssl pkey -in "$HOME/ed.pem" -pubout -out "$HOME/ed.pub" 2>/dev/null
	checkpoint cp --key "$HOME/ed.pem" >/dev/null
	run -0 hw-audit verify-checkpoint cp --public-key "$HOME/ed.pub"
	run -65 --separate-stderr hw-audit verify-checkpoint cp
	[ "$stderr" = "hw-audit: checkpoint is invalid: the public key's fingerprint is not public_key_sha256" ]
	# the same key but another key id: the signature verifies, the pin does not
	checkpoint cp2 --key "$CONF/local-checkpoint-private.pem" --key-id rotated >/dev/null
	run -0 hw-audit verify-checkpoint cp2 --public-key "$CONF/local-checkpoint-public.pem"
	run -65 --separate-stderr hw-audit verify-checkpoint cp2
	[ "$stderr" = "hw-audit: the signature's key_id is not the one signer profile 'local-development' pins" ]
}

@test "checkpoint: --profile with --key, or a profile with --key-id, is a usage error" {
	local_signer
	append_n 1
	run -2 checkpoint cp --profile local-development --key "$CONF/local-checkpoint-private.pem"
	run -2 --separate-stderr checkpoint cp --key-id k
	[[ "$stderr" == "hw-audit: --signer-id, --key-id and --key-version go with --key"* ]]
	run -2 hw-audit verify-checkpoint cp --profile local-development --public-key x
	run -2 hw-audit checkpoint --registry x --session session-main
	[ ! -e cp ]
}

@test "checkpoint: an unreachable signer is 69 and leaves no bundle" {
	local_signer
	append_n 1
	run -69 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: cannot reach signer 'http://127.0.0.1:$PORT/v1/checkpoints/sign': "* ]]
	[ ! -e cp ]
}

@test "checkpoint: a signer refusing the token is 65, and the token is never shown" {
	local_signer
	serve
	append_n 1
	echo "wrong$TOKEN" >"$HOME/tok"
	chmod 600 "$HOME/tok"
	sed -i "s|^authorization_token_file = .*|authorization_token_file = \"$HOME/tok\"|" "$CONF/checkpoint-signers.toml"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign' refused to sign (HTTP 401)" ]
	[[ "$stderr$output" != *"$TOKEN"* ]]
	[ ! -e cp ]
}

# ---- a client that trusts no signer blindly ----

# fake MODE REPLY-FILE [CONTENT-TYPE]: a python signer on $PORT
fake() {
	cat >"$HOME/fake.py" <<'PY'
import http.server, sys, time
mode, port, reply, ctype, target = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if mode == "redirect":
            self.send_response(307)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode == "slow":
            time.sleep(3)
        body = open(reply, "rb").read()
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", port), H)
print("ready", flush=True)
srv.serve_forever()
PY
	python3 "$HOME/fake.py" "$1" "$PORT" "$2" "${3:-application/json}" "${4:-}" >"$HOME/fake.out" 2>"$HOME/fake.err" 3>&- &
	PIDS+=($!)
	wait_for "$HOME/fake.out" ready $!
}

# forged JQ: the real signer's signature of an earlier statement, with
# fields changed by the jq filter JQ, as the fake signer's reply
forged() {
	jq -c "$1" "$HOME/sig.json" >"$HOME/reply.json"
}

# prepare: a real signature record to forge from, then the real signer stops
prepare() {
	local_signer
	serve
	append_n 2
	checkpoint "$HOME/ref" >/dev/null
	jq -c .signature "$HOME/ref/checkpoint.json" >"$HOME/sig.json"
	kill "$SRV"
	wait "$SRV" || true
}

@test "client: a signature for a different key_id is refused" {
	local_signer
	# the same key and token, served under another key id
	sed 's/^key_id = .*/key_id = "other-key"/' "$CONF/checkpoint-signers.toml" >"$CONF/other.toml"
	chmod 600 "$CONF/other.toml"
	serve --registry "$CONF/other.toml"
	append_n 2
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: the signature's key_id is not the one signer profile 'local-development' pins" ]
	[ ! -e cp ]
}

@test "client: a bad signature is refused" {
	prepare
	forged '.value = ("A" * 86 + "==")'
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': checkpoint is invalid: the signature does not verify" ] || { echo "$stderr"; return 1; }
	[ ! -e cp ]
}

@test "client: a replayed signature of another statement is refused" {
	prepare
	cp "$HOME/sig.json" "$HOME/reply.json"
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': checkpoint is invalid: the signature does not verify" ] || { echo "$stderr"; return 1; }
	[ ! -e cp ]
}

@test "client: a signature with another signer_id or fingerprint is refused" {
	prepare
	forged '.signer_id = "mallory"'
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: the signature's signer_id is not the one signer profile 'local-development' pins" ]
	forged ".public_key_sha256 = \"sha256:$(printf '%064d' 0)\""
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: the signature's public_key_sha256 is not the one signer profile 'local-development' pins" ]
}

@test "client: a signature record with an extra field is refused" {
	prepare
	forged '.note = "x"'
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': checkpoint is invalid: signature fields or version" ]
}

@test "client: a redirecting signer is refused" {
	prepare
	fake redirect /dev/null application/json "http://127.0.0.1:1/v1/checkpoints/sign"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign' answered with a redirect (HTTP 307): redirects are refused" ]
	[ ! -e cp ]
}

@test "client: a response that is not application/json is refused" {
	prepare
	cp "$HOME/sig.json" "$HOME/reply.json"
	fake reply "$HOME/reply.json" text/plain
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': the response is not application/json" ]
}

@test "client: a response over 64 KiB is refused" {
	prepare
	head -c 70000 /dev/zero | tr '\0' ' ' >"$HOME/reply.json"
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': the response is larger than 65536 bytes" ]
}

@test "client: a response that is not JSON is refused" {
	prepare
	echo 'ok' >"$HOME/reply.json"
	fake reply "$HOME/reply.json"
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: signer '$URL/v1/checkpoints/sign': the response is not a JSON object" ]
}

@test "client: a signer slower than timeout_seconds is abandoned" {
	prepare
	sed -i 's/^timeout_seconds = 15/timeout_seconds = 0.5/' "$CONF/checkpoint-signers.toml"
	cp "$HOME/sig.json" "$HOME/reply.json"
	fake slow "$HOME/reply.json"
	run -69 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: cannot reach signer '$URL/v1/checkpoints/sign': "*"timed out"* ]] || { echo "$stderr"; return 1; }
}

# ---- a listener that is not the signer ----

# squat: a listener of uid 65534 on $PORT that prints, as one JSON line per
# connection, everything a client sent it in its first second
squat() {
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import json, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(1)
    got = b""
    try:
        while True:
            d = c.recv(65536)
            if not d:
                break
            got += d
    except OSError:
        pass
    c.close()
    print(json.dumps({"got": got.decode("latin-1")}), flush=True)
' "$PORT" >"$HOME/squat.out" 2>"$HOME/squat.err" 3>&- &
	PIDS+=($!)
	wait_for "$HOME/squat.out" ready $!
}

@test "client: a listener of another user on the signer's port receives nothing" {
	if [ "$(id -u)" != 0 ]; then
		skip "needs root to run the listener as another user"
	fi
	local_signer
	squat
	append_n 1
	run -65 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: refusing signer '$URL/v1/checkpoints/sign': the listener on 127.0.0.1:$PORT belongs to uid 65534, not to the effective uid 0" ]
	[ ! -e cp ]
	# the listener saw the connection, and not one byte of it
	for ((i = 0; i < 100; i++)); do
		grep -q got "$HOME/squat.out" && break
		sleep 0.05
	done
	[ "$(grep got "$HOME/squat.out")" = '{"got": ""}' ]
	refute grep -q "$TOKEN" "$HOME/squat.out"
}

# slowloris N: N connections to the signer that each send one byte of a
# request every 3 s, and connect again when dropped; prints "held" once
# all N have connected, then one line per connection that was dropped
slowloris() {
	/usr/bin/python3 -c '
import socket, sys, time
n, port = int(sys.argv[1]), int(sys.argv[2])
req = b"POST /v1/checkpoints/sign HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: " + b"a" * 4096
def conn():
    c = socket.create_connection(("127.0.0.1", port))
    c.setblocking(False)
    return [c, 0]
cs = [conn() for _ in range(n)]
print("held", flush=True)
end = time.monotonic() + 120
while time.monotonic() < end:
    for e in cs:
        try:
            e[0].send(req[e[1] % len(req):][:1])
            e[1] += 1
        except OSError:
            print("dropped", flush=True)
            e[0].close()
            try:
                e[:] = conn()
            except OSError:
                pass
    time.sleep(3)
' "$1" "$PORT" >"$HOME/slow.out" 2>"$HOME/slow.err" 3>&- &
	PIDS+=($!)
	SLOW=$!
	wait_for "$HOME/slow.out" held $!
}

@test "serve-local: 70 slow clients do not keep a real client from being served" {
	local_signer
	serve
	append_n 1
	sed -i 's/^timeout_seconds = 15/timeout_seconds = 5/' "$CONF/checkpoint-signers.toml"
	slowloris 70
	# a real client is served while they hold on: retry until a deadline
	local ok=0 i=0 end=$((SECONDS + 40))
	while ((SECONDS < end)); do
		if checkpoint "cp$((++i))" >/dev/null 2>"$HOME/cp.err"; then
			ok=1
			break
		fi
		sleep 1
	done
	[ "$ok" = 1 ] || { cat "$HOME/cp.err"; return 1; }
	kill -0 "$SLOW"
	kill -0 "$SRV"
	run -0 hw-audit verify-checkpoint "cp$i"
}

@test "serve-local: a client that sends a byte now and then is dropped all the same" {
	local_signer
	serve
	slowloris 3
	local i
	for ((i = 0; i < 600; i++)); do
		grep -q dropped "$HOME/slow.out" && break
		sleep 0.1
	done
	grep -q dropped "$HOME/slow.out"
	kill -0 "$SRV"
}

# ---- an HTTPS signer with a certificate of its own CA ----

# tls_signer: the local signer ($PORT, http) behind a python TLS front on
# $TPORT with a self-signed certificate for 127.0.0.1 ($HOME/tls.crt); the
# registry's profile then names the https endpoint, in production mode
tls_signer() {
	local_signer
	serve
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$HOME/tls.key" -out "$HOME/tls.crt" -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
	TPORT=$(free_port)
	cat >"$HOME/front.py" <<'PY'
import http.server, ssl, sys, urllib.request
port, back, crt, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        req = urllib.request.Request(back + self.path, data=body, method="POST")
        for k in ("Authorization", "Content-Type", "Accept"):
            if self.headers.get(k):
                req.add_header(k, self.headers[k])
        try:
            r = urllib.request.urlopen(req, timeout=10)
            status, data, ctype = r.status, r.read(), r.headers["Content-Type"]
        except urllib.error.HTTPError as e:
            status, data, ctype = e.code, e.read(), e.headers["Content-Type"]
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", port), H)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(crt, key)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("ready", flush=True)
srv.serve_forever()
PY
	python3 "$HOME/front.py" "$TPORT" "$URL" "$HOME/tls.crt" "$HOME/tls.key" \
		>"$HOME/front.out" 2>"$HOME/front.err" 3>&- &
	PIDS+=($!)
	wait_for "$HOME/front.out" ready $!
	sed -i "s|http://127.0.0.1:$PORT|https://127.0.0.1:$TPORT|; s/^mode = .*/mode = \"production\"/" \
		"$CONF/checkpoint-signers.toml"
	TURL="https://127.0.0.1:$TPORT/v1/checkpoints/sign"
	unset https_proxy HTTPS_PROXY all_proxy ALL_PROXY
	append_n 2
}

@test "https signer: a certificate of a CA the system does not know is refused, and nothing is written" {
	tls_signer
	run -65 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: signer '$TURL': its TLS certificate does not verify ("*"); name its CA with --cacert PATH or the profile's ca_bundle" ]]
	[ ! -e cp ]
}

@test "https signer: checkpoint --cacert PATH trusts that CA, and the checkpoint verifies" {
	tls_signer
	run -0 --separate-stderr checkpoint cp --cacert "$HOME/tls.crt"
	[ "$(jq -r .signature.signer_id cp/checkpoint.json)" = local-development ]
	run -0 hw-audit verify-checkpoint cp
}

@test "https signer: the profile's ca_bundle trusts that CA without an option" {
	tls_signer
	echo "ca_bundle = \"$HOME/tls.crt\"" >>"$CONF/checkpoint-signers.toml"
	run -0 --separate-stderr checkpoint cp
	run -0 hw-audit verify-checkpoint cp
}

@test "https signer: --cacert naming another CA is refused" {
	tls_signer
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$HOME/o.key" -out "$HOME/other.crt" -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
	run -65 --separate-stderr checkpoint cp --cacert "$HOME/other.crt"
	[[ "$stderr" == "hw-audit: signer '$TURL': its TLS certificate does not verify"* ]]
	[ ! -e cp ]
}

@test "https signer: a CA bundle others can write is refused" {
	tls_signer
	chmod 666 "$HOME/tls.crt"
	run -65 --separate-stderr checkpoint cp --cacert "$HOME/tls.crt"
	[ "$stderr" = "hw-audit: refusing CA bundle '$HOME/tls.crt': group or others can write it (mode 0666)" ]
}

@test "https signer: a CA bundle inside the project is refused" {
	tls_signer
	cp "$HOME/tls.crt" ca.crt
	run -2 --separate-stderr checkpoint cp --cacert ca.crt
	[ "$stderr" = "hw-audit: refusing CA bundle 'ca.crt': it is inside the project directory '$PWD'" ]
}

@test "registry: ca_bundle must be an absolute path, for an https endpoint" {
	refused 's|^timeout_seconds = 15|ca_bundle = "rel.crt"|' "profile 'lab': ca_bundle must be an absolute path"
	refused 's|^timeout_seconds = 15|ca_bundle = "/etc/ssl/certs/ca-certificates.crt"|' "profile 'lab': ca_bundle applies to an https endpoint only"
}

@test "checkpoint --cacert goes with a profile, not with --key" {
	append_n 1
	openssl genpkey -algorithm ed25519 -out "$HOME/k.pem" 2>/dev/null
	chmod 600 "$HOME/k.pem"
	run -2 --separate-stderr checkpoint cp --key "$HOME/k.pem" --cacert /etc/ssl/certs/ca-certificates.crt
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr hw-audit verify-checkpoint cp --cacert /etc/ssl/certs/ca-certificates.crt
	[[ "$stderr" == usage:* ]]
}

# ---- signer list, select and default ----

# two_profiles: the local signer's registry with a second profile, "dead",
# the same key behind a port nothing listens on
two_profiles() {
	local_signer
	DEAD=$(free_port)
	sed -n '/^\[profiles.local-development\]/,$p' "$CONF/checkpoint-signers.toml" |
		sed '1s/.*/[profiles.dead]/; s/^signer_id = .*/signer_id = "dead"/' |
		sed "s/127.0.0.1:$PORT/127.0.0.1:$DEAD/" >"$HOME/dead.toml"
	{ echo; cat "$HOME/dead.toml"; } >>"$CONF/checkpoint-signers.toml"
}

@test "signer list: each profile, the default and the selected one" {
	two_profiles
	run -0 --separate-stderr hw-audit signer list
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -sc 'map([.profile_id, .default, .selected, .mode, .signer_id, .endpoint])' <<<"$output")" = \
		"[[\"local-development\",true,false,\"development\",\"local-development\",\"$URL/v1/checkpoints/sign\"],[\"dead\",false,false,\"development\",\"dead\",\"http://127.0.0.1:$DEAD/v1/checkpoints/sign\"]]" ]
	[ "$(jq -r 'select(.profile_id == "dead") | .public_key_sha256' <<<"$output")" = "$FP" ]
	[ ! -e .heartwood ]
	run -0 hw audit signer list
	[ "${#lines[@]}" -eq 2 ]
}

@test "signer list: no registry exits 1 and says how to make one" {
	run -1 --separate-stderr hw-audit signer list
	[ -z "$output" ]
	[ "$stderr" = "hw-audit: no checkpoint signer registry found (set HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY, or run 'hw-audit signer init-local')" ]
}

@test "signer select: the project's checkpoints go through the selected profile; --profile and default win back" {
	two_profiles
	serve
	append_n 2
	run -0 --separate-stderr hw audit signer select dead
	[ "$(jq -c '[.profile_id, .selected, .default]' <<<"$output")" = '["dead",true,false]' ]
	grep -qx 'signer_profile = "dead"' .heartwood/config.toml
	[ "$(hw-audit signer list | jq -r 'select(.selected) | .profile_id')" = dead ]
	run -69 --separate-stderr checkpoint cp
	[[ "$stderr" == "hw-audit: cannot reach signer 'http://127.0.0.1:$DEAD/v1/checkpoints/sign': "* ]]
	run -0 --separate-stderr checkpoint cp --profile local-development
	run -0 --separate-stderr hw audit signer default
	[ "$(jq -c '[.profile_id, .selected, .default]' <<<"$output")" = '["local-development",false,true]' ]
	refute grep -q signer_profile .heartwood/config.toml
	run -0 --separate-stderr checkpoint cp2
}

@test "signer select: an unknown profile is refused and nothing is written" {
	two_profiles
	run -2 --separate-stderr hw-audit signer select nope
	[ "$stderr" = "hw-audit: no profile 'nope' in signer registry '$CONF/checkpoint-signers.toml'" ]
	[ ! -e .heartwood ]
}

@test "signer select: a profile whose key is not the pinned one is refused" {
	two_profiles
	openssl genpkey -algorithm ed25519 -out "$HOME/k.pem" 2>/dev/null
	openssl pkey -in "$HOME/k.pem" -pubout -out "$HOME/other.pub" 2>/dev/null
	sed -i "/^\[profiles.dead\]/,\$s|^trusted_public_key = .*|trusted_public_key = \"$HOME/other.pub\"|" "$CONF/checkpoint-signers.toml"
	run -65 --separate-stderr hw-audit signer select dead
	[ "$stderr" = "hw-audit: invalid signer registry '$CONF/checkpoint-signers.toml': profile 'dead': the fingerprint of trusted_public_key is not public_key_sha256" ]
	[ ! -e .heartwood ]
}

@test "checkpoint --cacert on an http signer is refused before anything is sent" {
	local_signer
	append_n 1
	run -2 --separate-stderr checkpoint cp --cacert /etc/ssl/certs/ca-certificates.crt
	[ "$stderr" = "hw-audit: --cacert applies to an https signer only" ]
	[ ! -e cp ]
}
