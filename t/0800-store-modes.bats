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
