#!/usr/bin/env bats
# Crash safety by fault injection: hw-append is killed at every write,
# sync, rename and truncate boundary in turn (whole and torn writes), and
# at random moments of a 10,000-event pipe.  After each kill the next
# writer recovers, replay verifies, every acknowledged event is present
# exactly once, and no half record remains.

load lib

baseline() {
	mkdir base && (cd base && append_n 2)
}

@test "crash: a kill at every boundary of one-per-ack appends loses nothing acknowledged" {
	baseline
	cp -a base probe
	points=$(cd probe && HW_FAULT_TRACE=1 python3 "$HW_ROOT/t/ackpipe.py" 3 acks -- hw-append --session session-main 2>&1 >/dev/null | grep -c fault-point)
	[ "$points" -ge 12 ]
	for torn in "" 1; do
		for k in $(seq "$points"); do
			rm -rf run
			cp -a base run
			cd run
			HW_FAULT_TORN=$torn HW_FAULT_KILL_AT=$k python3 "$HW_ROOT/t/ackpipe.py" 3 acks -- hw-append --session session-main 2>/dev/null || true
			append_n 1 || { echo "recovery failed at k=$k torn=$torn"; return 1; }
			check_acks acks || { echo "k=$k torn=$torn"; return 1; }
			n=$(wc -l <"$(sdir)/events.jsonl")
			[ "$n" -ge $((2 + $(wc -l <acks) + 1)) ]
			[ "$n" -le 6 ]
			[ ! -e "$(sdir)/.writer.json" ]
			cd ..
		done
	done
}

@test "crash: a kill at every boundary of a batch loses nothing acknowledged" {
	baseline
	cp -a base probe
	drafts 10 >in.jsonl
	points=$(cd probe && HW_FAULT_TRACE=1 hw-append --session session-main <../in.jsonl 2>&1 >/dev/null | grep -c fault-point)
	for torn in "" 1; do
		for k in $(seq "$points"); do
			rm -rf run
			cp -a base run
			cd run
			HW_FAULT_TORN=$torn HW_FAULT_KILL_AT=$k hw-append --session session-main <../in.jsonl >acks 2>/dev/null || true
			run -0 hw-session replay session-main # replay recovers by itself
			check_acks acks || { echo "k=$k torn=$torn"; return 1; }
			n=$(wc -l <"$(sdir)/events.jsonl")
			# a whole write lands or not; a torn one keeps its complete lines
			if [ -z "$torn" ]; then
				[ "$n" -eq 2 ] || [ "$n" -eq 12 ] || { echo "k=$k: $n events"; return 1; }
			else
				[ "$n" -ge 2 ]
				[ "$n" -le 12 ]
			fi
			[ "$(wc -l <"$(sdir)/audit.jsonl")" -eq "$n" ]
			cd ..
		done
	done
}

@test "crash: a kill where the audit log's writeback is started loses nothing acknowledged" {
	# the kick is no sync: the two batches before it are acknowledged,
	# their audit records may be anywhere between written and on disk
	baseline
	drafts 2100 >in.jsonl
	cp -a base probe
	k=$(cd probe && HW_FAULT_TRACE=1 hw-append --session session-main <../in.jsonl 2>&1 >/dev/null | awk '/audit-kick$/ { n++ } n == 2 { print NR; exit }')
	[ -n "$k" ]
	cd base
	HW_FAULT_KILL_AT=$k hw-append --session session-main <../in.jsonl >acks 2>/dev/null || true
	[ "$(wc -l <acks)" -eq 1024 ]
	[ -e "$(sdir)/.writer.json" ] # the crash evidence stays
	run -0 hw-session replay session-main
	check_acks acks
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 2050 ]
	[ "$(wc -l <"$(sdir)/audit.jsonl")" -eq 2050 ]
	run -0 hw-audit verify --session session-main
}

@test "crash: recovery that is itself killed at every boundary still completes" {
	baseline
	drafts 3 >in.jsonl
	cp -a base probe0
	k=$(cd probe0 && HW_FAULT_TRACE=1 hw-append --session session-main <../in.jsonl 2>&1 >/dev/null | awk '/audit-append$/ { print NR; exit }')
	cd base
	HW_FAULT_TORN=1 HW_FAULT_KILL_AT=$k hw-append --session session-main <../in.jsonl >/dev/null 2>&1 || true
	[ "$(tail -c1 "$(sdir)/audit.jsonl" | od -An -c | tr -d " ")" != "\\n" ] # torn audit
	cd ..
	cp -a base probe
	points=$(cd probe && HW_FAULT_TRACE=1 hw-session replay session-main 2>&1 >/dev/null | grep -c fault-point)
	[ "$points" -ge 3 ]
	for j in $(seq "$points"); do
		rm -rf run
		cp -a base run
		cd run
		HW_FAULT_KILL_AT=$j hw-session replay session-main >/dev/null 2>&1 || true
		run -0 hw-session replay session-main
		[ "${#lines[@]}" -eq 5 ] || { echo "j=$j: ${#lines[@]}"; return 1; }
		cd ..
	done
}

@test "crash: kill -9 at random moments of a 10,000-event pipe" {
	drafts 10000 >in.jsonl
	# spread the kills over the time a whole run takes here
	t0=$(date +%s%N)
	hw-append --session probe <in.jsonl >/dev/null
	span=$((($(date +%s%N) - t0) / 1000000 + 1))
	for round in 1 2 3 4 5 6; do
		rm -rf .heartwood acks
		hw-append --session session-main <in.jsonl >acks 2>/dev/null &
		pid=$!
		sleep "$(awk -v s="$span" -v r="$RANDOM" 'BEGIN { printf "%.3f", s * (r / 32768) / 1000 }')"
		kill -9 $pid 2>/dev/null || true
		wait $pid || true
		# a partial last ack line was never a whole acknowledgement
		if [ -s acks ] && [ "$(tail -c1 acks | od -An -c | tr -d ' ')" != '\n' ]; then
			sed -i '$d' acks
		fi
		append_n 1 || { echo "round $round: recovery failed"; return 1; }
		check_acks acks || { echo "round $round"; return 1; }
		echo "# round $round: $(wc -l <acks) acknowledged, $(wc -l <"$(sdir)/events.jsonl") present" >&3
	done
}

@test "crash: an interrupted first append (store initialization) completes" {
	points=$(mkdir probe && cd probe && drafts 2 | HW_FAULT_TRACE=1 hw-append --session session-main 2>&1 >/dev/null | grep -c fault-point)
	for k in $(seq "$points"); do
		rm -rf run
		mkdir run
		cd run
		drafts 2 | HW_FAULT_KILL_AT=$k hw-append --session session-main >acks 2>/dev/null || true
		append_n 1 || { echo "k=$k: recovery failed"; return 1; }
		check_acks acks || { echo "k=$k"; return 1; }
		cmp .heartwood/state.json "$HW_ROOT/t/fixtures/reference/project-state-v2.json"
		[ "$(jq -r .title "$(sdir)/metadata.json")" = "Main session" ]
		cd ..
	done
}

@test "crash: a stale writer record with intact logs recovers to nothing new" {
	append_n 3
	echo '{"host":"h","pid":1,"schema_version":"heartwood.session-writer.v1","session_id":"session-main","started_at":"2026-01-01T00:00:00Z","token":"x"}' >"$(sdir)/.writer.json"
	before=$(sha256sum "$(sdir)"/*.jsonl)
	run -0 hw-session replay session-main
	[ "${#lines[@]}" -eq 3 ]
	[ "$(sha256sum "$(sdir)"/*.jsonl)" = "$before" ]
	[ ! -e "$(sdir)/.writer.json" ]
}

@test "crash: an audit record without its event is never explained away" {
	append_n 3
	head -n 2 "$(sdir)/events.jsonl" >e
	mv e "$(sdir)/events.jsonl"
	echo '{"host":"h","pid":1,"schema_version":"heartwood.session-writer.v1","session_id":"session-main","started_at":"2026-01-01T00:00:00Z","token":"x"}' >"$(sdir)/.writer.json"
	before=$(snapshot)
	run -65 --separate-stderr hw-session replay session-main
	[ "$stderr" = "hw-session: replay 'session-main': recovery refused: sequence 2: audit record has no session event: cannot recover" ]
	[ "$(snapshot)" = "$before" ]
	run -65 bash -c 'drafts 1 | hw-append --session session-main'
	[ "$(snapshot)" = "$before" ]
}
