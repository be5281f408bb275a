#!/usr/bin/env bats
# hw-append --session: paired commits, registration, bad input of every
# kind (each changing nothing durable), the writer lease, group commit,
# a full disk, command receipts; hw-append --file: the standalone chain.

load lib

@test "hw-append: commits drafts and prints each event once it is durable" {
	run -0 --separate-stderr bash -c 'drafts 3 | hw-append --session session-main'
	[ "${#lines[@]}" -eq 3 ]
	[ "$output" = "$(cat "$(sdir)/events.jsonl")" ]
	[ "$(jq -r .sequence <<<"$output" | tr '\n' ' ')" = "0 1 2 " ]
	[ "$(jq -r .event_id <<<"${lines[2]}")" = session-main-event-000002 ]
	[ "$(wc -l <"$(sdir)/audit.jsonl")" -eq 3 ]
	[ -z "$stderr" ]
}

@test "hw-append: the first draft lays out the store with private modes" {
	append_n 1
	[ "$(stat -c %a .heartwood)" = 700 ]
	[ "$(stat -c %a "$(sdir)")" = 700 ]
	[ "$(stat -c %a "$(sdir)/events.jsonl")" = 600 ]
	[ "$(stat -c %a "$(sdir)/audit.jsonl")" = 600 ]
	[ "$(stat -c %a .heartwood/state.json)" = 600 ]
	[ "$(cat .heartwood/.gitignore)" = '*' ]
	for d in sessions models skills audit runtime logs cache; do [ -d ".heartwood/$d" ]; done
	cmp .heartwood/state.json <(cat "$HW_ROOT/t/fixtures/reference/project-state-v2.json")
	[ "$(jq -r .title "$(sdir)/metadata.json")" = "Main session" ]
	[ ! -e "$(sdir)/.writer.json" ] # released cleanly
}

@test "hw-append: a session other than session-main is titled by its id" {
	append_n 1 exp-42
	[ "$(jq -r .title "$(sdir exp-42)/metadata.json")" = exp-42 ]
}

@test "hw-append: empty input creates nothing" {
	run -0 hw-append --session session-main </dev/null
	[ ! -e .heartwood ]
}

@test "hw-append: the audit record is minimized and scrubbed" {
	draft user_message.recorded '{"actor_id":"human","command_id":"c1","content":"my password is hunter2","api_token":"t"}' |
		hw-append --session session-main >/dev/null
	run -0 cat "$(sdir)/audit.jsonl"
	[[ "$output" != *hunter2* ]]
	[ "$(jq -c '.payload|del(.session_event_hash)' <<<"$output")" = '{"actor_id":"human","command_id":"c1","content_chars":22}' ]
	grep -q hunter2 "$(sdir)/events.jsonl"
}

@test "hw-append: events continue the chain across processes" {
	append_n 2
	append_n 2
	run -0 jq -r .sequence "$(sdir)/events.jsonl"
	[ "$(echo $output)" = "0 1 2 3" ]
	[ "$(sed -n 3p "$(sdir)/events.jsonl" | jq -r .previous_event_hash)" = "$(sed -n 2p "$(sdir)/audit.jsonl" | jq -r .event_hash)" ]
	run -0 hw-session replay session-main
}

hostile_id() {
	run -2 --separate-stderr bash -c "drafts 1 | hw-append --session '$1'"
	[[ "$stderr" == "hw-append: invalid session id"* ]]
	[ ! -e .heartwood ]
}

@test "hw-append: session id '..' is refused and creates nothing" {
	hostile_id ..
}
@test "hw-append: session id 'a/b' is refused and creates nothing" {
	hostile_id a/b
}
@test "hw-append: session id '../escape' is refused and creates nothing" {
	hostile_id ../escape
}
@test "hw-append: a 129-character session id is refused" {
	hostile_id "$(printf 'a%.0s' {1..129})"
}
@test "hw-append: session id '.hidden' is refused" {
	hostile_id .hidden
}

# bad_line LINE EXPECTED-STDERR: two good drafts, then LINE, then one more.
# The first two are committed and acknowledged; nothing after is written.
bad_line() {
	append_n 1
	before=$(snapshot)
	run -65 --separate-stderr bash -c "{ drafts 2; printf '%s\n' \"\$1\"; drafts 1; } | hw-append --session session-main" _ "$1"
	[ "$stderr" = "$2" ] || { echo "stderr: $stderr"; return 1; }
	[ "${#lines[@]}" -eq 2 ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 3 ]
	run -0 hw-session replay session-main
	[ "${#lines[@]}" -eq 3 ]
}

@test "hw-append: malformed JSON stops at its line" {
	bad_line '{"kind":' "hw-append: <stdin>:3: unexpected end of input at byte 9"
}

@test "hw-append: a non-object line is refused" {
	bad_line '[1,2]' "hw-append: <stdin>:3: not a JSON object"
}

@test "hw-append: invalid UTF-8 is refused" {
	bad_line $'{"kind":"agent_message.emitted","payload":{"content":"\xff"}}' \
		"hw-append: <stdin>:3: invalid UTF-8 at byte 55"
}

@test "hw-append: an unknown kind is refused" {
	bad_line '{"kind":"shell.executed","payload":{}}' "hw-append: <stdin>:3: unknown event kind"
}

@test "hw-append: an unknown draft key is refused" {
	bad_line '{"kind":"agent_message.emitted","sequence":7}' \
		"hw-append: <stdin>:3: unknown key in draft (expected kind and payload)"
}

@test "hw-append: a payload that is not an object is refused" {
	bad_line '{"kind":"agent_message.emitted","payload":"x"}' \
		"hw-append: <stdin>:3: draft payload is not an object"
}

@test "hw-append: duplicate keys are refused" {
	bad_line '{"kind":"agent_message.emitted","kind":"error.recorded"}' \
		"hw-append: <stdin>:3: duplicate key at byte 39"
}

@test "hw-append: an oversized line is refused without reading it whole" {
	append_n 1
	before=$(snapshot)
	run -65 --separate-stderr bash -c 'head -c 9000000 /dev/zero | tr "\0" x | hw-append --session session-main'
	[ "$stderr" = "hw-append: <stdin>:1: line longer than 8388608 bytes" ]
	[ "$(snapshot)" = "$before" ]
}

@test "hw-append: an unterminated last line is refused, the rest committed" {
	run -65 --separate-stderr bash -c '{ drafts 1; printf "%s" "{\"kind\":\"agent_message.emitted\"}"; } | hw-append --session session-main'
	[ "$stderr" = "hw-append: <stdin>:2: unterminated last line" ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 1 ]
}

@test "hw-append: a symlinked .heartwood is refused" {
	mkdir elsewhere
	ln -s elsewhere .heartwood
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[ "$stderr" = "hw-append: refusing '.heartwood': it is a symbolic link" ]
	[ -z "$(ls -A elsewhere)" ]
}

@test "hw-append: a symlinked session directory is refused" {
	append_n 1 other
	ln -s other .heartwood/sessions/session-main
	before=$(snapshot other)
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[ "$stderr" = "hw-append: refusing session directory '.heartwood/sessions/session-main': it is a symbolic link" ]
	[ "$(snapshot other)" = "$before" ]
}

@test "hw-append: a symlinked sessions root is refused" {
	append_n 1
	mv .heartwood/sessions real
	ln -s ../real .heartwood/sessions
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[[ "$stderr" == *"symbolic link"* ]]
}

@test "hw-append: .heartwood that is a file is refused" {
	echo x >.heartwood
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[ "$stderr" = "hw-append: refusing '.heartwood': not a directory" ]
	[ "$(cat .heartwood)" = x ]
}

@test "hw-append: a store with state.json but missing directories is refused" {
	append_n 1
	rmdir .heartwood/cache
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[ "$stderr" = "hw-append: invalid store layout: '.heartwood/cache' is missing" ]
}

@test "hw-append: a foreign non-empty .heartwood without state.json is refused" {
	mkdir .heartwood
	echo x >.heartwood/notes
	run -65 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[[ "$stderr" == *"no state.json but the directory is not empty"* ]]
	[ "$(ls -A .heartwood)" = notes ]
}

@test "hw-append: a wrong .gitignore is refused" {
	append_n 1
	echo '!*' >.heartwood/.gitignore
	run -65 bash -c 'drafts 1 | hw-append --session session-main'
}

# hold SESSION: start a writer that holds SESSION's lease until released
hold() {
	mkfifo "hold-$1"
	hw-append --session "$1" <"hold-$1" >"held-$1.out" 2>&1 &
	HOLDER=$!
	exec {HOLDFD}>"hold-$1"
	drafts 1 >&$HOLDFD
	for _ in $(seq 600); do [ -s "held-$1.out" ] && return 0; sleep 0.05; done
	return 1
}

@test "hw-append: a second writer exits 75 naming the owner's pid and host" {
	hold session-main
	run -75 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[ "$stderr" = "hw-append: session 'session-main' is busy: held by pid $HOLDER on host $(hostname)" ]
	exec {HOLDFD}>&-
	wait $HOLDER
	append_n 1
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 2 ]
}

@test "hw-append: distinct sessions never block each other" {
	hold session-main
	run -0 bash -c 'drafts 2 | hw-append --session other'
	exec {HOLDFD}>&-
	wait $HOLDER
}

@test "hw-append: a killed owner's lease passes to the next writer" {
	hold session-main
	kill -9 $HOLDER
	wait $HOLDER || true
	exec {HOLDFD}>&-
	[ -e "$(sdir)/.writer.json" ] # left behind by the killed owner
	run -0 bash -c 'drafts 2 | hw-append --session session-main'
	[ "$(jq -r .sequence <<<"${lines[1]}")" = 2 ]
	[ ! -e "$(sdir)/.writer.json" ]
	run -0 hw-session replay session-main
	[ "${#lines[@]}" -eq 3 ]
}

@test "hw-append: storage without native locks is refused" {
	HW_TEST_NO_LOCKS=1 run -74 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[[ "$stderr" == *"native locks unavailable for '.heartwood/.state.lock'"* ]]
	[ ! -e .heartwood/state.json ]
}

@test "hw-append: drafts already waiting are committed with one sync per batch" {
	drafts 500 >in.jsonl
	HW_FAULT_TRACE=1 hw-append --session session-main <in.jsonl >out 2>trace
	[ "$(wc -l <out)" -eq 500 ]
	syncs=$(grep -c -- '-sync$' trace)
	[ "$syncs" -le 4 ] || { echo "syncs: $syncs"; return 1; }
}

@test "hw-append: each batch is written after the one before it, its events synced before its audit records" {
	# three batches, the second and third built while the one before is written
	drafts 2100 >in.jsonl
	HW_FAULT_TRACE=1 hw-append --session session-main <in.jsonl >out 2>trace
	cmp out "$(sdir)/events.jsonl"
	run -0 grep -oE '(events|audit)-(append|sync)$' trace
	[ "$(echo $output)" = "events-append events-sync audit-append events-append events-sync audit-append events-append events-sync audit-append audit-sync" ]
	run -0 hw-audit verify --session session-main
}

@test "hw-append: with no thread to be had, every batch is hashed and written where it was built" {
	drafts 2100 >in.jsonl
	HW_TEST_NO_THREADS=1 HW_FAULT_TRACE=1 hw-append --session session-main <in.jsonl >out 2>trace
	cmp out "$(sdir)/events.jsonl"
	run -0 grep -oE '(events|audit)-(append|sync)$' trace
	[ "$(echo $output)" = "events-append events-sync audit-append events-append events-sync audit-append events-append events-sync audit-append audit-sync" ]
	run -0 hw-audit verify --session session-main
	[ "$(jq -r .event_count <<<"$output")" = 2100 ]
}

@test "hw-append: the audit log's writeback is started after every 256 KiB of records, and it is synced once, at the end" {
	# 2100 drafts of about 420 audit bytes each: the two full batches
	# start the writeback, the short last one does not
	drafts 2100 >in.jsonl
	HW_FAULT_TRACE=1 hw-append --session session-main <in.jsonl >out 2>trace
	run -0 grep -oE 'audit-(append|kick|sync)$' trace
	[ "$(echo $output)" = "audit-append audit-kick audit-append audit-kick audit-append audit-sync" ]
	[ "$(grep -n 'audit-sync$' trace | cut -d: -f1)" -lt "$(grep -n 'unlink$' trace | cut -d: -f1)" ]
	# a kick is no sync: a crash after it leaves what recovery completes
	run -0 hw-audit verify --session session-main
	[ "$(jq -r .event_count <<<"$output")" = 2100 ]
}

@test "hw-append: with syncs slower than the building, no batch is built over one not yet acknowledged" {
	# six batches; at 40 ms a sync (t/iofault.so) the builder gets ahead
	# of the writer until the three sets it takes turns with are full
	drafts 6000 >in.jsonl
	run -0 --separate-stderr env LD_PRELOAD="$HW_ROOT/t/iofault.so" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		HW_IOFAULT_PATH="$(pwd -P)/.heartwood" HW_IOFAULT_SYNC_MS=40 \
		hw-append --session session-main <in.jsonl
	printf '%s\n' "$output" >out
	[ "$(wc -l <out)" -eq 6000 ]
	cmp out "$(sdir)/events.jsonl"
	run -0 hw-audit verify --session session-main
	[ "$(jq -r .event_count <<<"$output")" = 6000 ]
}

@test "hw-append: drafts that hold what looks like the chain's placeholders and keys keep them, in every batch" {
	# the hashes of a batch are filled in after it is built, at places
	# noted as it was written: a payload naming the same keys with a
	# hash of zeros, canonical or not, is stored as it came
	zero=sha256:$(printf '0%.0s' $(seq 64))
	python3 -c '
import json, sys
z = sys.argv[1]
for i in range(2100):
    p = {"content": z, "previous_event_hash": z, "session_event_hash": z,
         "event_hash": z, "n": i}
    d = {"kind": "agent_message.emitted", "payload": p}
    print(json.dumps(d, sort_keys=True, separators=(",", ":")) if i % 2
          else json.dumps(d))
' "$zero" >in.jsonl
	hw-append --session session-main <in.jsonl >out
	cmp out "$(sdir)/events.jsonl"
	run -0 hw-audit verify --session session-main
	run -0 jq -c '.payload | [.content, .previous_event_hash, .session_event_hash, .event_hash] | unique' "$(sdir)/events.jsonl"
	[ "$(sort -u <<<"$output")" = "[\"$zero\"]" ]
	[ "${#lines[@]}" -eq 2100 ]
	# and the chain's own places are hashes of what came before
	run -0 jq -r 'select(.sequence > 0) | .previous_event_hash' "$(sdir)/events.jsonl"
	[ "$(grep -c "^$zero\$" <<<"$output")" -eq 0 ]
}

@test "hw-append: one draft per acknowledgement costs one data sync" {
	python3 "$HW_ROOT/t/ackpipe.py" 1 acks -- hw-append --session session-main
	HW_FAULT_TRACE=1 python3 "$HW_ROOT/t/ackpipe.py" 20 acks -- hw-append --session session-main 2>trace
	[ "$(grep -c 'events-sync$' trace)" -eq 20 ]
	# the audit log is synced once, before the lease is released
	[ "$(grep -c 'audit-sync$' trace)" -eq 1 ]
	[ "$(grep -n 'audit-sync$' trace | cut -d: -f1)" -lt "$(grep -n 'unlink$' trace | cut -d: -f1)" ]
	[ "$(wc -l <acks)" -eq 21 ]
}

@test "hw-append: a full disk fails with 74 and loses nothing acknowledged" {
	mkdir small
	mount -t tmpfs -o size=128k tmpfs small 2>/dev/null || skip "cannot mount a tmpfs here"
	cd small
	append_n 3
	head -c 90000 /dev/zero >filler 2>/dev/null || true
	# one acknowledged draft at a time, until the disk is full
	run -74 --separate-stderr python3 "$HW_ROOT/t/ackpipe.py" 100000 ../acks -- hw-append --session session-main
	[[ "$stderr" == *"No space left on device"* ]]
	[ "$(wc -l <../acks)" -gt 0 ]
	rm filler
	run -0 bash -c 'drafts 1 | hw-append --session session-main'
	# the very events acknowledged, in order, once each, and nothing else
	check_acks ../acks
	[ "$(wc -l <replayed)" -eq $((3 + $(wc -l <../acks) + 1)) ]
	rm replayed
	cd ..
	umount small
}

mkcommand() {
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"%s","session_id":"session-main","kind":"chat","actor_id":"human","created_at":"%s","payload":{"prompt":"hi"}}\n' "$1" "${2:-2026-12-02T10:00:00Z}" >"$1.json"
}

@test "hw-append --command: records command.received, the drafts and a completed receipt" {
	mkcommand c1
	run -0 bash -c 'drafts 2 | hw-append --session session-main --command c1.json'
	[ "${#lines[@]}" -eq 3 ]
	[ "$(jq -r .kind <<<"${lines[0]}")" = command.received ]
	[ "$(jq -r .payload.command_kind <<<"${lines[0]}")" = chat ]
	r="$(sdir)/.commands/$(printf c1 | sha256sum | cut -c1-64).json"
	[ "$(jq -c '[.state,.first_sequence,.last_sequence]' "$r")" = '["completed",0,2]' ]
}

@test "hw-append --command: an exact retry returns the original events and does no work" {
	mkcommand c1
	drafts 2 | hw-append --session session-main --command c1.json >first
	run -0 bash -c 'drafts 5 | hw-append --session session-main --command c1.json'
	[ "$output" = "$(cat first)" ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 3 ]
}

@test "hw-append --command: the same id with different content is refused" {
	mkcommand c1
	drafts 1 | hw-append --session session-main --command c1.json >/dev/null
	before=$(snapshot)
	mkcommand c1 2026-12-02T11:00:00Z
	run -1 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main --command c1.json'
	[ "$stderr" = "hw-append: command 'c1' was already submitted with different content" ]
	[ "$(snapshot)" = "$before" ]
}

@test "hw-append --command: an interrupted command blocks every further mutation" {
	mkcommand c1
	# find the boundary just after command.received is durable, in a
	# dry run elsewhere, then die there: the receipt stays accepted
	mkdir dry
	cp c1.json dry/
	k=$(cd dry && HW_FAULT_TRACE=1 hw-append --session session-main --command c1.json </dev/null 2>&1 >/dev/null |
		awk '/audit-append$/ { print NR + 1; exit }')
	HW_FAULT_KILL_AT=$k run bash -c 'hw-append --session session-main --command c1.json </dev/null'
	[ "$status" -eq 137 ]
	r="$(sdir)/.commands/$(printf c1 | sha256sum | cut -c1-64).json"
	[ "$(jq -r .state "$r")" = accepted ]
	run -75 --separate-stderr bash -c 'drafts 1 | hw-append --session session-main'
	[[ "$stderr" == "hw-append: session 'session-main' has an interrupted command 'c1'"* ]]
	run -75 --separate-stderr bash -c 'hw-append --session session-main --command c1.json </dev/null'
	[[ "$stderr" == *"was interrupted after it was accepted"* ]]
}

@test "hw-append --command: a legacy command.received without a receipt is found" {
	mkcommand c1
	drafts 1 | hw-append --session session-main --command c1.json >first
	rm "$(sdir)"/.commands/*.json
	run -0 hw-append --session session-main --command c1.json </dev/null
	[ "$output" = "$(cat first)" ]
	[ "$(jq -r .state "$(sdir)"/.commands/*.json)" = completed ]
}

@test "hw-append --command: an envelope for another session is refused" {
	mkcommand c1
	run -65 --separate-stderr bash -c 'hw-append --session other --command c1.json </dev/null'
	[ "$stderr" = "hw-append: command envelope is invalid: session_id does not name this session" ]
	[ ! -e .heartwood ]
}

@test "hw-append --file: appends a standalone chained log" {
	run -0 bash -c 'printf "%s\n" "{\"kind\":\"skill.activated\",\"payload\":{\"skill\":\"x\",\"token\":\"t\"}}" "{\"kind\":\"skill.deactivated\"}" | hw-append --file log.jsonl'
	[ "$(jq -r .session_id log.jsonl | sort -u)" = project-skills ]
	[ "$(jq -r .payload.token log.jsonl | head -1)" = "[scrubbed]" ]
	[ "$(sed -n 2p log.jsonl | jq -r .previous_event_hash)" = "$(head -1 log.jsonl | jq -r .event_hash)" ]
	[ ! -e .log.jsonl.pending ]
	run -0 bash -c 'draft x.y | hw-append --file log.jsonl'
	[ "$(jq -r .sequence <<<"$output")" = 2 ]
}

@test "hw-append --file: a changed record is refused before appending" {
	printf '%s\n' '{"kind":"a.b"}' '{"kind":"a.b"}' | hw-append --file log.jsonl >/dev/null
	sed -i '1s/a\.b/a.c/' log.jsonl
	cp log.jsonl before
	run -65 bash -c 'draft a.b | hw-append --file log.jsonl'
	cmp log.jsonl before
}

@test "hw-append --file: recovery completes each interrupted append exactly once" {
	draft a.b | hw-append --file log.jsonl >/dev/null
	points=$(draft a.b | HW_FAULT_TRACE=1 hw-append --file probe.jsonl 2>&1 >/dev/null | grep -c fault-point)
	for torn in "" 1; do
		for k in $(seq "$points"); do
			cp log.jsonl "log-$k.jsonl"
			HW_FAULT_TORN=$torn HW_FAULT_KILL_AT=$k bash -c 'draft a.b | hw-append --file "log-'$k'.jsonl"' >/dev/null 2>&1 || true
			draft c.d | hw-append --file "log-$k.jsonl" >/dev/null
			n=$(wc -l <"log-$k.jsonl")
			[ "$n" -eq 2 ] || [ "$n" -eq 3 ] || { echo "k=$k torn=$torn lines=$n"; return 1; }
			[ "$(jq -r .sequence "log-$k.jsonl" | tr '\n' ' ')" = "$(seq 0 $((n - 1)) | tr '\n' ' ')" ]
			[ ! -e ".log-$k.jsonl.pending" ]
		done
	done
}

@test "hw-append --file: a journal that cannot explain the file fails closed" {
	draft a.b | hw-append --file log.jsonl >/dev/null
	size=$(stat -c %s log.jsonl)
	prefix=$(sha256sum log.jsonl | cut -c1-64)
	line='{"x":1}'
	lsha=$(printf '%s\n' "$line" | sha256sum | cut -c1-64)
	jq -cn --argjson o "$size" --arg p "$prefix" --arg l "$line"$'\n' --arg s "$lsha" \
		'{schema_version:"heartwood.jsonl-append.v1",offset:$o,prefix_sha256:$p,line:$l,line_sha256:$s}' >.log.jsonl.pending
	echo 'unexplained' >>log.jsonl
	cp log.jsonl before
	run -65 --separate-stderr bash -c 'draft a.b | hw-append --file log.jsonl'
	[[ "$stderr" == *"cannot explain"* ]]
	cmp log.jsonl before
	jq -c '.line_sha256="00"' .log.jsonl.pending >j
	mv j .log.jsonl.pending
	run -65 --separate-stderr bash -c 'draft a.b | hw-append --file log.jsonl'
	[[ "$stderr" == *"line digest mismatch"* ]]
	jq -c '.schema_version="heartwood.jsonl-append.v7"' .log.jsonl.pending >j
	mv j .log.jsonl.pending
	run -65 --separate-stderr bash -c 'draft a.b | hw-append --file log.jsonl'
	[[ "$stderr" == *"unsupported persisted schema for jsonl_append: heartwood.jsonl-append.v7"* ]]
	cmp log.jsonl before
}

@test "hw-append: usage errors" {
	run -2 hw-append
	run -2 hw-append --session a --file b
	run -2 hw-append --file b --command c
	run -2 hw-append --session a extra
}

# ---------------------------------------------------------------------------
# Minimization and the scrubber on shapes a typed session never holds, each
# against t/gen-session.py, which computes them with the reference's rules
# (Python's str(), len(), str.lower() and str.isalnum()).

GEN="$BATS_TEST_DIRNAME/gen-session.py"
gen() { python3 "$GEN" "$@"; }

# minimized KIND PAYLOAD - sets got to the audit payload hw-append writes,
# less its session_event_hash, and want to the one gen-session.py computes
# from the event as stored (canonical, so a dict's str() lists its keys
# sorted, as any verifier reading the line will see them); both canonical
minimized() {
	draft "$1" "$2" | hw-append --session m >/dev/null
	got=$(tail -n 1 "$(sdir m)/audit.jsonl" |
		jq -c '.payload|del(.session_event_hash)' | gen canon)
	want=$(printf '%s\n' "$2" | gen canon | gen minimize "$1")
}

@test "hw-append: a task status counts as Python's str() of it" {
	while IFS= read -r st; do
		minimized task.plan.updated "{\"tasks\":[{\"title\":\"t\",\"status\":$st}]}"
		if [ "$got" != "$want" ]; then
			echo "status $st: got $got, want $want"
			return 1
		fi
	done <<-'EOF2'
	true
	false
	null
	1
	-0
	1.0
	-0.0
	1e-07
	1E5
	1e+16
	12345678901234567890123
	[]
	{}
	["a",1,null,true,2.5]
	{"b":[true,{"c":null}],"a":"x"}
	"plain"
	["it's"]
	["say \"hi\""]
	["both ' and \""]
	["back\\slash","tab\tnl\ncr\r"]
	["\u0000\u001f\u007f\u0080\u009f\u00a0\u00ad\u00ff"]
	["caf\u00e9 \u2028 \u200b \ufeff \ud83d\ude00 \udb40\udc01 \u0378"]
	["\ud800 \udfff"]
	{"\u00e9'":"'","\"":["\""]}
	EOF2
}

@test "hw-append: a task with no status counts as unknown" {
	minimized task.plan.updated '{"tasks":[{"title":"a"},{"title":"b","status":"done"},{"title":"c"}]}'
	[ "$got" = '{"status_counts":{"done":1,"unknown":2},"task_count":3}' ]
	[ "$got" = "$want" ]
}

@test "hw-append: task_count counts a list only, and list items that are not objects have no status" {
	minimized task.plan.updated '{"tasks":["x",7,null,["done"],{"status":"done"}]}'
	[ "$got" = '{"status_counts":{"done":1},"task_count":5}' ]
	[ "$got" = "$want" ]
	minimized task.plan.updated '{"tasks":{"a":{"status":"done"}}}'
	[ "$got" = '{"status_counts":{},"task_count":0}' ]
	[ "$got" = "$want" ]
	minimized task.plan.updated '{"tasks":"todo"}'
	[ "$got" = '{"status_counts":{},"task_count":0}' ]
	[ "$got" = "$want" ]
}

@test "hw-append: action_count counts a list of tool call ids only" {
	minimized approval.recorded '{"decision":"approved","tool_call_ids":"abc"}'
	[ "$got" = '{"action_count":0,"decision":"approved"}' ]
	[ "$got" = "$want" ]
	minimized approval.recorded '{"decision":"approved","tool_call_ids":{"a":1,"b":2}}'
	[ "$got" = '{"action_count":0,"decision":"approved"}' ]
	[ "$got" = "$want" ]
}

@test "hw-append: content_chars counts a string only" {
	minimized user_message.recorded '{"content":["a","b","c"]}'
	[ "$got" = '{"actor_id":"","command_id":"","content_chars":0}' ]
	[ "$got" = "$want" ]
	minimized agent_message.emitted '{"content":{"text":"hello"}}'
	[ "$got" = '{"content_chars":0}' ]
	[ "$got" = "$want" ]
	minimized agent_message.emitted '{"content":12345}'
	[ "$got" = '{"content_chars":0}' ]
	[ "$got" = "$want" ]
}

@test "hw-session: a session the reference wrote with unusual shapes verifies" {
	gen gen-odd s-odd >/dev/null
	run -0 gen verify s-odd
	run -0 --separate-stderr hw-session replay s-odd
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 13 ]
	run -0 --separate-stderr hw-audit verify --session s-odd
	[ "$(jq .event_count <<<"$output")" = 13 ]
}

# scrub_vectors - JSON objects whose keys need Unicode's rules: the KELVIN
# SIGN, dotted capital I, digits outside ASCII, keys of 256 and 300
# characters, marks and spaces that are not alphanumeric
scrub_vectors() {
	python3 -c '
import json
keys = ["to\u212aen", "x" * 292 + "password", "name\u00b2", "AP\u0130_KEY",
        "token\u0660", "\u0660token", "a" * 251 + "token", "pass\u00a0word",
        "Token\u0301", "\uff54\uff4f\uff4b\uff45\uff4e", "\u24c9oken",
        "secret\u0661", "\u0130", "API\u212aEY", "e\u0301mail", "EMAIL",
        "\u00bdtoken", "\u2167token", "x" * 400, "\U0001d42dtoken",
        "my token", "\u01c5token", "PASS\U0001F600WORD", "sec\u0000ret"]
for k in keys:
    print(json.dumps({"kind": "x.y", "payload": {k: 1, "nested": [{k: 2}]}}))
'
}

@test "hw-append: the scrubber normalizes keys by Python's Unicode rules" {
	scrub_vectors >drafts.jsonl
	jq -c '{kind:"confirmation.resolved",payload:{decision:.payload}}' drafts.jsonl |
		hw-append --session s >/dev/null
	run -0 bash -c "jq -c '.payload.decision' '$(sdir s)/audit.jsonl' | python3 '$GEN' canon"
	[ "$output" = "$(jq -c .payload drafts.jsonl | gen scrub)" ]
	[ "$(grep -c scrubbed <<<"$output")" -ge 10 ]
}

@test "hw-append --file: a standalone log scrubs keys by Python's Unicode rules" {
	scrub_vectors >drafts.jsonl
	hw-append --file log.jsonl <drafts.jsonl >/dev/null
	run -0 bash -c "jq -c .payload log.jsonl | python3 '$GEN' canon"
	[ "$output" = "$(jq -c .payload drafts.jsonl | gen scrub)" ]
}

@test "mk/unitab: regenerating the Unicode tables gives lib/base/unitab.c" {
	run -0 --separate-stderr python3 "$HW_ROOT/mk/unitab"
	[ "$stderr" = "" ]
	[ "$output" = "$(cat "$HW_ROOT/lib/base/unitab.c")" ]
}

# ---------------------------------------------------------------------------
# What hw-append(1) and hw-store(5) say of the input: blank lines are
# skipped (and counted), duplicate keys and nesting past 128 are refused

@test "hw-append: lines of only spaces, tabs and carriage returns are skipped, and still counted" {
	run -65 --separate-stderr bash -c "printf '\n%s\n \t\r\n\n%s\n{\n' '{\"kind\":\"agent_message.emitted\"}' '{\"kind\":\"agent_message.emitted\"}' | hw-append --session session-main"
	[ "$(jq -c -s '[.[].sequence]' <<<"$output")" = '[0,1]' ]
	[ "$stderr" = "hw-append: <stdin>:6: expected a string key at byte 2" ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 2 ]
}

@test "hw-append --file: blank lines are skipped" {
	run -0 --separate-stderr bash -c "printf '\n%s\n  \n' '{\"kind\":\"a.b\"}' | hw-append --file log.jsonl"
	[ "$(jq -r .sequence <<<"$output")" = 0 ]
	[ "$(wc -l <log.jsonl)" -eq 1 ]
}

@test "hw-append: a form feed is not a blank line" {
	bad_line $'\f' "hw-append: <stdin>:3: invalid JSON value at byte 1"
}

@test "hw-append: a duplicate key inside the payload is refused" {
	bad_line '{"kind":"agent_message.emitted","payload":{"a":{"b":1,"b":2}}}' \
		"hw-append: <stdin>:3: duplicate key at byte 58"
}

@test "hw-append --file: a duplicate key is refused and nothing is written" {
	run -65 --separate-stderr bash -c "printf '%s\n' '{\"kind\":\"a.b\",\"payload\":{\"x\":1,\"x\":1}}' | hw-append --file log.jsonl"
	[ "$stderr" = "hw-append: <stdin>:1: duplicate key at byte 35" ]
	[ ! -s log.jsonl ]
}

# nested N - a draft whose deepest value is at nesting depth N, the draft
# object itself being depth 1
nested() {
	printf '{"kind":"agent_message.emitted","payload":{"a":%s%s}}\n' \
		"$(printf '[%.0s' $(seq $(($1 - 2))))" "$(printf ']%.0s' $(seq $(($1 - 2))))"
}

@test "hw-append: nesting to depth 128 is accepted and replays" {
	nested 128 | hw-append --session session-main >/dev/null
	run -0 hw-session replay session-main
	[ "$(jq -c .payload <<<"$output")" = "$(nested 128 | jq -c .payload)" ]
	[[ "$output" == *'"payload":{"a":'"$(printf '[%.0s' $(seq 126))"']'* ]]
}

@test "hw-append: nesting past 128 is refused" {
	bad_line "$(nested 129)" "hw-append: <stdin>:3: nesting too deep at byte 174"
}

@test "hw-append --file: nesting past 128 is refused and nothing is written" {
	run -65 --separate-stderr bash -c "nested() { $(declare -f nested | tail -n +2); }; nested 129 | hw-append --file log.jsonl"
	[ "$stderr" = "hw-append: <stdin>:1: nesting too deep at byte 174" ]
	[ ! -s log.jsonl ]
}

# two_forms - drafts of every kind the fixtures hold and of awkward content,
# to canonical.jsonl in canonical form and to loose.jsonl in forms that are
# not (the same drafts)
two_forms() {
	python3 - "$HW_ROOT"/t/fixtures/hw-session/*.in.jsonl <<'PY'
import json, sys
ds = []
for path in sys.argv[1:]:
    for line in open(path):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if isinstance(d, dict) and set(d) <= {"kind", "payload"} and "kind" in d:
            ds.append(d)
for text in ["caf\u00e9 \U0001F600", "quote \" back \\ nl \n tab \t ctl \u0001",
             "\u2028", "key sk-secret-0123456789 inside", "a" * 300]:
    ds.append({"kind": "agent_message.emitted", "payload": {"content": text}})
ds += [{"kind": "agent_message.emitted"},
       {"kind": "agent_message.emitted", "payload": {}},
       {"kind": "agent_message.emitted", "payload": {"b": [1, {"z": None, "y": True}], "a": -5, "f": 1.5}},
       {"kind": "agent_message.emitted", "payload": {"sk-secret-0123456789": "a key", "password": "p"}},
       {"kind": "agent_message.emitted", "payload": {"content": "c", "we\"ird": {"con\ntent": 1}}},
       {"kind": "user_message.recorded", "payload": {"actor_id": "human", "command_id": "c\"1", "content\\": "x"}},
       {"kind": "task.plan.updated", "payload": {"tasks": [{"title": "t", "status": "pending", "id": "1"}]}}]
with open("canonical.jsonl", "w") as c, open("loose.jsonl", "w") as l:
    for i, d in enumerate(ds):
        c.write(json.dumps(d, sort_keys=True, separators=(",", ":")) + "\n")
        # spaced out, or compact with raw UTF-8 and the keys unsorted
        l.write(json.dumps(d) if i % 2 else
                json.dumps(d, separators=(",", ":"), ensure_ascii=False))
        l.write("\n")
PY
}

@test "hw-append: a canonical draft commits the bytes the same draft in another form does" {
	# the first is written from its own bytes and its audit record made
	# as verify makes it; the second goes through the tree
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
	export OPENAI_API_KEY=sk-secret-0123456789
	two_forms
	[ "$(wc -l <canonical.jsonl)" -gt 60 ]
	run -1 cmp -s canonical.jsonl loose.jsonl
	for f in canonical loose; do
		mkdir "$f"
		cd "$f"
		run -0 faketime -f '2026-12-06 12:00:00' hw-append --session s <"../$f.jsonl"
		[ "${#lines[@]}" -eq "$(wc -l <../canonical.jsonl)" ]
		run -0 hw-audit verify --session s
		cd ..
	done
	run -0 cmp {canonical,loose}/"$(sdir s)"/events.jsonl
	run -0 cmp {canonical,loose}/"$(sdir s)"/audit.jsonl
	run -0 grep -c REDACTED canonical/"$(sdir s)"/events.jsonl
	[ "$output" -eq 2 ]
}
