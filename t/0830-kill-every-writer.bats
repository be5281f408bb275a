#!/usr/bin/env bats
# The store's fault-injection harness (HW_FAULT_KILL_AT) on the writers
# t/0110 (hw-append), t/0300 (checkpoint publish) and t/0530 (agent
# execution records) do not cover: a command with its receipt, and an
# audit export with its copy.  Each is killed at every boundary it
# reaches in turn; then the session verifies, nothing is half there, and
# the next run completes.

load lib
load agent

# boundaries CMD...: how many fault points CMD passes, in a scratch copy
boundaries() {
	rm -rf probe && cp -a base probe
	(cd probe && HW_FAULT_TRACE=1 "$@" 2>&1 >/dev/null | grep -c '^fault-point ')
}

@test "kill: a command killed at every boundary is applied at most once, and the log verifies" {
	mkdir base
	(cd base
	append_n 1)
	cmd c1 chat '{"prompt":"count the rows"}' >c1
	points=$(boundaries hw-session command session-main <c1)
	[ "$points" -ge 8 ]
	for k in $(seq "$points"); do
		rm -rf run
		cp -a base run
		cd run
		if HW_FAULT_KILL_AT=$k hw-session command session-main <../c1 >/dev/null 2>&1; then
			echo "k=$k: not killed"
			return 1
		fi
		# the next writer recovers; the retry runs now, or is refused as
		# interrupted after it was accepted (75), never run twice
		run --separate-stderr hw-session command session-main <../c1
		[ "$status" -eq 0 ] || [ "$status" -eq 75 ] || { echo "k=$k: $status $stderr"; return 1; }
		hw-audit verify --session session-main >/dev/null || { echo "k=$k"; return 1; }
		[ "$(grep -c user_message.recorded "$(sdir)/events.jsonl" || true)" -le 1 ] ||
			{ echo "k=$k: applied twice"; return 1; }
		[ "$(grep -c '"command_id":"c1"' "$(sdir)/events.jsonl" || true)" -le 2 ]
		seen="$seen $status"
		cd ..
	done
	# the kills fell both before the command was accepted and after
	[[ $seen == *0* ]] && [[ $seen == *75* ]]
}

@test "kill: an export killed at every boundary leaves no partial export or copy" {
	mkdir base
	(cd base
	append_n 3)
	points=$(boundaries hw-audit export --session session-main --output ../copy.jsonl)
	[ "$points" -ge 8 ]
	for k in $(seq "$points"); do
		rm -rf run copy.jsonl
		cp -a base run
		cd run
		if HW_FAULT_KILL_AT=$k hw-audit export --session session-main --output ../copy.jsonl >/dev/null 2>&1; then
			echo "k=$k: not killed"
			return 1
		fi
		# what a kill leaves behind is whole: the session's export and
		# the copy verify as bare exports wherever they exist
		for f in "$(sdir)/audit-export.jsonl" ../copy.jsonl; do
			[ ! -e "$f" ] || hw-audit verify "$f" >/dev/null || { echo "k=$k: $f is partial"; return 1; }
		done
		[ ! -e ../copy.jsonl ] || cmp ../copy.jsonl "$(sdir)/audit-export.jsonl"
		rm -f ../copy.jsonl
		run -0 hw-audit export --session session-main --output ../copy.jsonl
		hw-audit verify ../copy.jsonl >/dev/null
		hw-audit verify --session session-main >/dev/null
		# the next export clears what a killed one left half written
		[ -z "$(ls -A "$(sdir)" | grep '^\.audit-export' || true)" ] ||
			{ echo "k=$k: $(ls -A "$(sdir)")"; return 1; }
		# one export event per completed or interrupted attempt, no more
		[ "$(grep -c audit.export.recorded "$(sdir)/events.jsonl")" -le 2 ]
		cd ..
	done
}
