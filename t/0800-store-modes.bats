#!/usr/bin/env bats
# The store's modes: after a whole research task through every program
# that writes (commands, the agent and its tools, receipts, the review
# mode, an audit export, a signed checkpoint, follow, inspect), every file
# under .heartwood/ is 0600, every directory 0700, and nothing else is
# left there (no socket, no link, no FIFO).

load lib
load agent

setup() { agent_setup; }
teardown() { agent_teardown; }

@test "store modes: every file 0600 and every directory 0700 after a whole task" {
	two_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	umask 022
	hw ask "record a run" >/dev/null
	hw allow >/dev/null
	hw actions set auto-approve-low-risk >/dev/null
	hw actions set ask-every-time >/dev/null
	hw audit export --output export.jsonl >/dev/null
	openssl genpkey -algorithm ed25519 -out key.pem 2>/dev/null
	chmod 600 key.pem
	hw audit checkpoint --output cp --deployment-id d --retention-policy p \
		--retain-until 2099-12-31 --key key.pem >/dev/null
	hw-session follow session-main --idle-exit 0.2 >/dev/null
	hw-inspect changes >/dev/null
	hw sessions new --title second >/dev/null
	[ "$(cat ran.txt)" = run ]
	run find .heartwood \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \) \
		-o \( ! -type f ! -type d \)
	[ -z "$output" ] || { echo "$output"; return 1; }
	[ "$(find .heartwood -type f | wc -l)" -gt 10 ]
}

# ---- what other users made: refused, by root too ----
#
# Each case builds a store, or part of one, as another local user would
# leave it (owned by uid 65534, or writable by group or others), then
# shows that a writer and a reader both refuse it with 65 and change
# nothing.  Root can write anywhere, so root refusing proves the check is
# by owner, not by access.

# hostile_store: a valid store, then session-main in it
hostile_store() {
	append_n 2
	snapshot >"$BATS_TEST_TMPDIR/before"
}

# refused PATH WHY [CONTEXT]: a writer and a reader refuse PATH for WHY,
# with 65; the reader names CONTEXT first when the refusal is in a log
refused() {
	run -65 --separate-stderr hw-append --session session-main < <(drafts 1)
	[ "$stderr" = "hw-append: refusing '$1': $2" ] || { echo "$stderr"; return 1; }
	run -65 --separate-stderr hw-session replay session-main
	[ "$stderr" = "hw-session: ${3:-}refusing '$1': $2" ] || { echo "$stderr"; return 1; }
}

@test "store owner: a .heartwood of another user is refused, by root too" {
	mkdir -m 700 .heartwood
	chown 65534:65534 .heartwood
	run -65 --separate-stderr hw-append --session session-main < <(drafts 1)
	[ "$stderr" = "hw-append: refusing '.heartwood': owned by uid 65534, not by the effective uid $(id -u)" ]
	[ -z "$(ls -A .heartwood)" ]
}

@test "store owner: a .heartwood that others can write is refused" {
	mkdir .heartwood
	chmod 777 .heartwood
	run -65 --separate-stderr hw-append --session session-main < <(drafts 1)
	[ "$stderr" = "hw-append: refusing '.heartwood': group or others can write it (mode 0777)" ]
	[ -z "$(ls -A .heartwood)" ]
}

@test "store owner: a whole store of another user is refused by writers and readers" {
	hostile_store
	chown -R 65534:65534 .heartwood
	refused .heartwood "owned by uid 65534, not by the effective uid $(id -u)"
}

@test "store owner: a sessions directory of another user is refused" {
	hostile_store
	chown 65534:65534 .heartwood/sessions
	refused .heartwood/sessions "owned by uid 65534, not by the effective uid $(id -u)"
	[ "$(snapshot)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
}

@test "store owner: a sessions directory others can write is refused" {
	hostile_store
	chmod 777 .heartwood/sessions
	refused .heartwood/sessions "group or others can write it (mode 0777)"
	[ "$(snapshot)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
}

@test "store owner: a session directory of another user is refused" {
	hostile_store
	chown 65534:65534 "$(sdir)"
	refused "$(sdir)" "owned by uid 65534, not by the effective uid $(id -u)"
	[ "$(snapshot)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
}

@test "store owner: a session directory pre-created 0777 by another user is refused" {
	hostile_store
	mkdir -m 777 "$(sdir other)"
	chown 65534:65534 "$(sdir other)"
	run -65 --separate-stderr hw-append --session other < <(drafts 1)
	[ "$stderr" = "hw-append: refusing '$(sdir other)': owned by uid 65534, not by the effective uid $(id -u)" ]
	[ -z "$(ls -A "$(sdir other)")" ]
}

@test "store owner: an event log of another user is refused" {
	hostile_store
	chown 65534:65534 "$(sdir)/events.jsonl"
	refused "$(sdir)/events.jsonl" "owned by uid 65534, not by the effective uid $(id -u)" "replay 'session-main': "
	[ "$(snapshot)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
}

@test "store owner: an audit log others can write is refused" {
	hostile_store
	chmod 666 "$(sdir)/audit.jsonl"
	refused "$(sdir)/audit.jsonl" "group or others can write it (mode 0666)" "replay 'session-main': "
	[ "$(snapshot)" = "$(cat "$BATS_TEST_TMPDIR/before")" ]
}

@test "store owner: a state.json of another user is refused" {
	hostile_store
	chown 65534:65534 .heartwood/state.json
	refused .heartwood/state.json "owned by uid 65534, not by the effective uid $(id -u)"
}
