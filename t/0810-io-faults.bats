#!/usr/bin/env bats
# Disk-full and I/O-error injection.  t/iofault.so (LD_PRELOAD) fails the
# K-th write or sync a program makes under the project with ENOSPC (from
# then on, as a full disk does, after a short write) or EIO (once), for
# every K the program reaches.  Each program that writes durable state
# must then fail with a clear error and exit 74, acknowledge nothing that
# is not durable, leave no temporary or partial file, and leave a store
# that the next run recovers and that verifies.  A last test fills a real
# (tmpfs) disk.

load lib

IOF=$HW_ROOT/t/iofault.so

# the agent cases start a replay model; a failing one must not leave it
teardown() {
	if [ -n "${MODEL_PID:-}" ]; then
		kill "$MODEL_PID" 2>/dev/null
		wait "$MODEL_PID" 2>/dev/null
	fi
	cd / && rm -rf "$PROJ"
}
# the sanitizer build puts its runtime first; the shim comes after it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# faulty K MODE CMD...: CMD with the K-th write or sync under IOF_PATH
# (default: the store) failing; MODE enospc: every write from then on,
# after a short one; eio: that one call only
faulty() {
	local k=$1 err=EIO sticky=
	[ "$2" = enospc ] && err=ENOSPC sticky=1
	shift 2
	env LD_PRELOAD="$IOF" HW_IOFAULT_PATH="${IOF_PATH:-$(pwd -P)/.heartwood}" \
		HW_IOFAULT_AT="$k" HW_IOFAULT_ERRNO=$err HW_IOFAULT_STICKY=$sticky "$@"
}

# iopoints CMD...: how many writes and syncs CMD makes under IOF_PATH
iopoints() {
	env LD_PRELOAD="$IOF" HW_IOFAULT_PATH="${IOF_PATH:-$(pwd -P)/.heartwood}" \
		HW_IOFAULT_TRACE=1 "$@" 2>&1 >/dev/null | grep -c '^iofault [0-9]'
}

# failed_cleanly MODE: if the fault fired (a timed sync may move the K-th
# call past the end of a run), the run exited 74 and said why
failed_cleanly() {
	local want="No space left on device"
	[ "$1" = eio ] && want="Input/output error"
	if [[ $stderr != *"iofault: failing"* ]]; then
		[ "$status" -eq 0 ] || { echo "status $status with no fault: $stderr"; return 1; }
		return 0
	fi
	[ "$status" -eq 74 ] || { echo "status $status: $stderr"; return 1; }
	grep -v '^iofault' <<<"$stderr" | grep -q "$want" || { echo "no reason: $stderr"; return 1; }
}

# no_litter: no temporary file is left anywhere in the project
no_litter() {
	local left
	left=$(find . -name '.*-??????' -o -name '*.pending' | grep -v '^\./base' || true)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# durable_acks ACKFILE: every acknowledged event is in the verified log
durable_acks() {
	hw-audit verify --session session-main >/dev/null
	hw-session replay session-main >replayed
	# one grep: the acknowledged lines that are not whole replayed lines
	missing=$(grep -vxF -f replayed "$1" || true)
	[ -z "$missing" ] || { echo "acknowledged, missing: $missing"; return 1; }
}

@test "iofault: the shim fails the chosen write and passes the others" {
	append_n 1
	n=$(iopoints hw-append --session session-main < <(drafts 2))
	[ "$n" -ge 4 ]
	before=$(snapshot)
	run -74 --separate-stderr faulty 1 eio hw-append --session session-main < <(drafts 2)
	[ "$output" = "" ]
	[[ $stderr == *"iofault: failing write 1 of '$(pwd -P)/.heartwood/sessions/session-main/"* ]]
	[[ $stderr == *"Input/output error"* ]]
	# a point past the last never fires
	run -0 --separate-stderr faulty $((n + 1)) eio hw-append --session session-main < <(drafts 2)
	[[ $stderr != *iofault* ]]
	[ "$(grep -c . <<<"$output")" -eq 2 ]
}

# append_faults MODE [N]: N drafts (10: one batch) against every point
append_faults() {
	mkdir base && (cd base && append_n 2)
	drafts "${2:-10}" >in.jsonl
	points=$(cd base && cp -a . ../probe && cd ../probe && iopoints hw-append --session session-main <../in.jsonl)
	[ "$points" -ge 6 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$1" hw-append --session session-main <../in.jsonl
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		printf '%s' "$output" | sed -e '$a\' | grep . >acks || true
		no_litter || { echo "k=$k"; return 1; }
		# the failed batch was cut back: the store verifies as it is
		hw-audit verify --session session-main >/dev/null || { echo "k=$k: does not verify"; return 1; }
		append_n 1 || { echo "k=$k: recovery failed"; return 1; }
		durable_acks acks || { echo "k=$k"; return 1; }
		cd ..
	done
}

@test "iofault: hw-append out of space at every write and sync acknowledges only what is durable" {
	append_faults enospc
}

@test "iofault: hw-append out of space in the first of two batches or the second acknowledges only what is durable" {
	# the second batch is built while the first is written
	append_faults enospc 1100
}

@test "iofault: hw-append with an I/O error at every write and sync acknowledges only what is durable" {
	append_faults eio
}

# ackpipe_faults MODE [N --burst]: three one-per-ack batches, or N drafts
# at once with the input open until every ack comes (t/ackpipe.py), against
# every point; a run that hangs waiting for its acks fails
ackpipe_faults() {
	local n=${2:-3} burst=${3:-}
	mkdir base && (cd base && append_n 2)
	cp -a base probe
	points=$(cd probe && iopoints python3 "$HW_ROOT/t/ackpipe.py" "$n" acks $burst -- hw-append --session session-main)
	[ "$points" -ge 8 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$1" python3 "$HW_ROOT/t/ackpipe.py" "$n" acks $burst -- hw-append --session session-main
		[ "$status" -ne 99 ] || { echo "k=$k: $stderr"; return 1; }
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		append_n 1 || { echo "k=$k: recovery failed"; return 1; }
		durable_acks acks || { echo "k=$k"; return 1; }
		cd ..
	done
}

@test "iofault: a burst whose write fails while its input stays open ends the run and keeps every ack" {
	# two batches at once, then the input open until every ack comes: a
	# failed write must end the run then, not at the next line
	ackpipe_faults enospc 1100 --burst
}

@test "iofault: an acknowledged one-at-a-time writer out of space keeps every ack" {
	ackpipe_faults enospc
}

@test "iofault: an acknowledged one-at-a-time writer with an I/O error keeps every ack" {
	ackpipe_faults eio
}

# command_faults MODE: a chat command against every point; a retry of the
# same command afterwards is applied at most once, and the log verifies
command_faults() {
	load agent
	mkdir base && (cd base && append_n 1)
	cmd c1 chat '{"prompt":"count the rows"}' >c1
	points=$(cp -a base probe && cd probe && iopoints hw-session command session-main <../c1)
	[ "$points" -ge 4 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$1" hw-session command session-main <../c1
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		# the retry is applied now, or refused as interrupted (75)
		run --separate-stderr hw-session command session-main <../c1
		[ "$status" -eq 0 ] || [ "$status" -eq 75 ] || { echo "k=$k: retry $status: $stderr"; return 1; }
		hw-audit verify --session session-main >/dev/null || { echo "k=$k"; return 1; }
		n=$(grep -c '"count the rows"' "$(sdir)/events.jsonl" || true)
		[ "$n" -le 2 ] || { echo "k=$k: applied twice"; return 1; }
		[ "$(grep -c user_message.recorded "$(sdir)/events.jsonl" || true)" -le 1 ]
		cd ..
	done
}

@test "iofault: hw-session command out of space never applies a command twice" {
	command_faults enospc
}

@test "iofault: hw-session command with an I/O error never applies a command twice" {
	command_faults eio
}

# export_faults MODE: hw-audit export --output against every point: no
# partial copy, and a later export succeeds
export_faults() {
	IOF_PATH=$(pwd -P)
	mkdir base && (cd base && append_n 3)
	points=$(cp -a base probe && cd probe && iopoints hw-audit export --session session-main --output copy.jsonl)
	[ "$points" -ge 6 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$1" hw-audit export --session session-main --output copy.jsonl
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		[ ! -e copy.jsonl ] || { echo "k=$k: a copy despite the failure"; return 1; }
		hw-audit verify --session session-main >/dev/null || { echo "k=$k"; return 1; }
		run -0 hw-audit export --session session-main --output copy.jsonl
		cmp copy.jsonl "$(sdir)/audit-export.jsonl"
		hw-audit verify copy.jsonl >/dev/null
		cd ..
	done
}

@test "iofault: hw-audit export out of space leaves no partial copy" {
	export_faults enospc
}

@test "iofault: hw-audit export with an I/O error leaves no partial copy" {
	export_faults eio
}

# checkpoint_faults MODE: a checkpoint publish against every point
checkpoint_faults() {
	openssl genpkey -algorithm ed25519 -out ed.pem 2>/dev/null
	openssl pkey -in ed.pem -pubout -out ed.pub 2>/dev/null
	chmod 600 ed.pem
	IOF_PATH=$(pwd -P)
	mkdir base && (cd base && append_n 3)
	set -- "$1" hw-audit checkpoint --session session-main --output cp \
		--deployment-id lab-7 --retention-policy irb-2026 \
		--retain-until 2033-12-31 --key ../ed.pem
	points=$(cp -a base probe && cd probe && iopoints "${@:2}")
	[ "$points" -ge 4 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$@"
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		hw-audit verify --session session-main >/dev/null || { echo "k=$k"; return 1; }
		if [ -e cp ]; then
			# published whole; only the note that follows it failed
			[[ $stderr == *"checkpoint 'cp' is published, but its signed note is not: "* ]] ||
				{ echo "k=$k: $stderr"; return 1; }
			hw-audit verify-checkpoint cp --public-key ../ed.pub >/dev/null
			[ "$(ls -A | grep -v '^\.heartwood$' | tr '\n' ' ')" = "cp " ] ||
				{ echo "k=$k: $(ls -A)"; return 1; }
			continue_after=cp2
		else
			[ -z "$(ls -A | grep -v '^\.heartwood$')" ] || { echo "k=$k: left: $(ls -A)"; return 1; }
			continue_after=cp
		fi
		run -0 "${@:2:5}" "$continue_after" "${@:8}"
		hw-audit verify-checkpoint "$continue_after" --public-key ../ed.pub >/dev/null
		[ -s "$continue_after.note" ]
		cd ..
	done
}

@test "iofault: a checkpoint publish out of space leaves no partial bundle" {
	checkpoint_faults enospc
}

@test "iofault: a checkpoint publish with an I/O error leaves no partial bundle" {
	checkpoint_faults eio
}

# file_faults MODE: hw-append --file (a standalone chained log) against
# every point: a failed append is not applied later by recovery
file_faults() {
	IOF_PATH=$(pwd -P)
	mkdir base && (cd base && drafts 2 | hw-append --file log.jsonl >/dev/null)
	drafts 3 >in.jsonl
	points=$(cp -a base probe && cd probe && iopoints hw-append --file log.jsonl <../in.jsonl)
	[ "$points" -ge 6 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run
		run --separate-stderr faulty "$k" "$1" hw-append --file log.jsonl <../in.jsonl
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		printf '%s' "$output" | sed -e '$a\' | grep . >acks || true
		# the next writer finds what was acknowledged and nothing else
		draft a.b | hw-append --file log.jsonl >/dev/null || { echo "k=$k: recovery failed"; return 1; }
		[ "$(wc -l <log.jsonl)" -eq $((2 + $(wc -l <acks) + 1)) ] ||
			{ echo "k=$k: $(wc -l <log.jsonl) lines for $(wc -l <acks) acks"; return 1; }
		head -n -1 log.jsonl | tail -n +3 | cmp - acks || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		cd ..
	done
}

@test "iofault: hw-append --file out of space keeps exactly the acknowledged lines" {
	file_faults enospc
}

@test "iofault: hw-append --file with an I/O error keeps exactly the acknowledged lines" {
	file_faults eio
}

# agent_faults MODE: an approved set run with the K-th write of the store
# failing: no member runs twice, nothing is shown as done that is not
# recorded, and the log verifies
agent_faults() {
	load agent
	export HW_MODEL=openai/heartwood-replay HW_MODEL_RETRY_WAIT_MS=10
	unset HW_API_KEY_ENV
	two_actions
	# the runs below start a new model that only has the closing turn
	echo '{"content":"Both done."}' | tee -a turns.jsonl >done.jsonl
	pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
	mkdir base && cd base && cp ../turns.jsonl . && serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main
	cmd c2 approve "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" |
		hw-session command session-main >/dev/null
	kill "$MODEL_PID"; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=
	cd ..
	# a copy is another project directory: the decision is bound again
	# there, as the user's own (hw-store(5) Trust)
	cp -a base probe && cd probe && serve ../done.jsonl
	python3 "$HW_ROOT/t/bind.py" session-main
	points=$(iopoints hw-agent run session-main)
	kill "$MODEL_PID"; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=
	cd ..
	[ "$points" -ge 6 ]
	for k in $(seq "$points"); do
		rm -rf run && cp -a base run && cd run && serve ../done.jsonl
		python3 "$HW_ROOT/t/bind.py" session-main
		run --separate-stderr faulty "$k" "$1" hw-agent run session-main
		failed_cleanly "$1" || { echo "k=$k"; return 1; }
		hw-audit verify --session session-main >/dev/null || { echo "k=$k: does not verify"; return 1; }
		hw-agent run session-main >/dev/null 2>&1 || true
		kill "$MODEL_PID"; wait "$MODEL_PID" 2>/dev/null; MODEL_PID=
		lines=$([ -e ran.txt ] && wc -l <ran.txt || echo 0)
		[ "$lines" -le 1 ] || { echo "k=$k: ran twice"; return 1; }
		states=$(hw-session project session-main | jq -c '[.actions[].state]')
		case $states in
		'["succeeded","succeeded"]') [ "$lines" -eq 1 ] && [ -e notes.md ] ;;
		*outcome-unknown*) ;;
		*) echo "k=$k: $states"; return 1 ;;
		esac
		hw-audit verify --session session-main >/dev/null || { echo "k=$k"; return 1; }
		no_litter || { echo "k=$k"; return 1; }
		seen="$seen $states"
		cd ..
	done
	# the faults fell both before a member started and after
	[[ $seen == *outcome-unknown* ]] && [[ $seen == *'"succeeded","succeeded"'* ]]
}

@test "iofault: an approved set out of space never runs a member twice" {
	agent_faults enospc
}

@test "iofault: an approved set with an I/O error never runs a member twice" {
	agent_faults eio
}

# A real full disk: a 1 MiB tmpfs (root only) filled by hw-append one
# acknowledged batch at a time, then space is freed and the next writer
# carries on from exactly the acknowledged events.
@test "iofault: a real full disk stops the writer cleanly and the log carries on after" {
	[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
	mkdir disk
	mount -t tmpfs -o size=1m,mode=0700 hw-test-disk disk 2>/dev/null ||
		skip "cannot mount a tmpfs here"
	cd disk
	append_n 1
	head -c 300000 /dev/zero >filler
	# the acknowledgements are kept off the full disk: they observe it
	run --separate-stderr python3 "$HW_ROOT/t/ackpipe.py" 100000 ../acks -- hw-append --session session-main
	[ "$status" -eq 74 ] || { cd ..; umount disk; echo "status $status: $stderr"; return 1; }
	[[ $stderr == *"No space left on device"* ]]
	n=$(wc -l <../acks)
	rm filler
	append_n 1
	ok=0
	if durable_acks ../acks && [ "$(wc -l <"$(sdir)/events.jsonl")" -eq $((n + 2)) ]; then
		ok=1
	fi
	cd ..
	umount disk
	[ "$ok" = 1 ] && [ "$n" -gt 100 ]
}
