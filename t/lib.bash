# t/lib.bash - shared set-up for the bats suites.
# Each test runs in its own temporary project directory, LC_ALL=C, with the
# build tree first on PATH.

bats_require_minimum_version 1.5.0

HW_ROOT=$(cd "$BATS_TEST_DIRNAME/.." && pwd)
export HW_ROOT
export PATH="$HW_ROOT:$PATH"
export LC_ALL=C
unset HW_FAULT_KILL_AT HW_FAULT_TRACE HW_FAULT_TORN HW_TEST_NO_LOCKS HW_DATADIR \
	HW_TEST_SYSROOT
# the user's own state (decision key, bindings, confirmed settings:
# hw-store(5) TRUST) lies outside every project, one for each test
export XDG_STATE_HOME="${BATS_TEST_TMPDIR:-${BATS_FILE_TMPDIR:-/tmp}}/user-state"

# jq -e with no input at all exits 0 in jq 1.6 (Debian 12's), where later
# versions exit 4, "no valid result": an assertion on an empty file, or a
# wait for a server's url.json that is not yet written, passed at once.
# Here -e fails, with 4, whenever jq printed no value.
jq() {
	local a e= out rc
	for a in "$@"; do
		case $a in --exit-status) e=1 ;; --*) ;; -*e*) e=1 ;; esac
	done
	[ -n "$e" ] || { command jq "$@"; return; }
	out=$(mktemp "${TMPDIR:-/tmp}/hw-jq.XXXXXX") || return 2
	command jq "$@" >"$out"
	rc=$?
	cat "$out"
	[ "$rc" -ne 0 ] || [ -s "$out" ] || rc=4
	rm -f "$out"
	return "$rc"
}
export -f jq

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
}

teardown() {
	cd / && rm -rf "$PROJ"
}

# no_bundled_skills: the programs read a copy of the build tree's data
# directory without its bundled skills (share/skills) and so without the
# specialists (share/specialists), which name them (t/0930 tests those)
no_bundled_skills() {
	local d=${BATS_TEST_TMPDIR:-/tmp}/datadir f
	mkdir -p "$d"
	for f in "$HW_ROOT"/share/*; do
		case ${f##*/} in skills|specialists) ;; *) cp -r "$f" "$d/" ;; esac
	done
	export HW_DATADIR=$d
}

# sdir ID - a session's directory
sdir() { echo ".heartwood/sessions/${1:-session-main}"; }

# decide_directly KIND - session-main's pending set decided (approve or
# deny) through hw-session alone, so that nobody runs the agent on
decide_directly() {
	local g
	g=$(hw-session project session-main | jq -r .pendingApproval.groupId)
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"c-%s","session_id":"session-main","kind":"%s","actor_id":"human","created_at":"2026-12-02T00:00:00Z","payload":{"target_type":"action-set","target_id":"%s"}}\n' \
		"$1" "$1" "$g" | hw-session command session-main >/dev/null
}

# draft KIND [PAYLOAD-JSON] - one event draft line
draft() { printf '{"kind":"%s","payload":%s}\n' "$1" "${2:-{\}}"; }

# drafts N - N agent messages, numbered
drafts() {
	local i
	for ((i = 0; i < $1; i++)); do
		printf '{"kind":"agent_message.emitted","payload":{"content":"message %d"}}\n' "$i"
	done
}

# append_n N [ID] - commit N events to a session
append_n() { drafts "$1" | hw-append --session "${2:-session-main}" >/dev/null; }

# snapshot ID - checksums of every file in a session, to prove nothing changed
snapshot() {
	(cd "$(sdir "${1:-session-main}")" && find . -type f ! -name '*.lock' -print0 |
		sort -z | xargs -0 sha256sum)
}

# check_acks ACKFILE: every acknowledged line is in the replay, once,
# in order, and the replay verifies.
check_acks() {
	hw-session replay session-main >replayed
	python3 - "$1" replayed <<'PY'
import sys
acks = [l for l in open(sys.argv[1], "rb").read().split(b"\n") if l]
got = open(sys.argv[2], "rb").read().split(b"\n")[:-1]
pos = {}
for i, l in enumerate(got):
    assert l not in pos, "duplicate event in replay: %r" % l[:80]
    pos[l] = i
last = -1
for a in acks:
    assert a in pos, "acknowledged event missing: %r" % a[:80]
    assert pos[a] > last, "acknowledged events out of order"
    last = pos[a]
PY
}

# refute CMD... - fails the test when CMD succeeds.  Use it for '! CMD',
# which bats's errexit ignores anywhere but on a test's last line.
refute() {
	if "$@"; then
		echo "refute: succeeded: $*" >&2
		return 1
	fi
}

# interrupt ID - a chat command ID to session-main, killed once its
# command.received is durable, so that its receipt stays "accepted"
interrupt() {
	local c k
	c=$(printf '{"schema_version":"heartwood.session-command.v1","command_id":"%s","session_id":"session-main","kind":"chat","actor_id":"human","created_at":"2026-12-02T10:00:00Z","payload":{"prompt":"hello"}}' "$1")
	mkdir -p .dry
	if [ -d .heartwood ]; then cp -a .heartwood .dry/; fi
	k=$(cd .dry && HW_FAULT_TRACE=1 hw-session command session-main <<<"$c" 2>&1 >/dev/null |
		awk '/audit-append$/ { print $2 + 1; exit }')
	rm -rf .dry
	{ HW_FAULT_KILL_AT=$k hw-session command session-main <<<"$c" \
		>/dev/null 2>&1 || true; } 2>/dev/null
	[ "$(jq -r .state "$(sdir)/.commands/$(printf %s "$1" | sha256sum | cut -c1-64).json")" = accepted ]
}

# subscription_stand_in SCRIPT-JSON - t/subscription_server.py, the
# stand-in ChatGPT authorization server and Responses endpoint, on
# loopback with that script (script.json; its requests in
# requests.jsonl): SRV its pid, SUB_URL its address, and
# HW_SUBSCRIPTION_ISSUER pointed at it
subscription_stand_in() {
	printf '%s\n' "$1" >script.json
	python3 "$HW_ROOT/t/subscription_server.py" script.json requests.jsonl >port 2>server.err 3>&- &
	SRV=$!
	for _ in $(seq 100); do [ -s port ] && break; sleep 0.05; done
	[ -s port ] || { echo "the stand-in did not start"; return 1; }
	SUB_URL="http://127.0.0.1:$(cat port)"
	export HW_SUBSCRIPTION_ISSUER=$SUB_URL
}

export -f sdir draft drafts append_n snapshot check_acks refute interrupt

