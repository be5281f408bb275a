#!/usr/bin/env bats
# The verified head and the projection snapshot (hw-store(5), Verified
# head): a command verifies and reduces only what came after them.  Each
# way the files can change under them is either verified or refused, never
# trusted; replay, export, verify and checkpoints verify the whole chain
# whatever the head says; and a snapshot never changes the projection.

load lib

S=.heartwood/sessions/session-main
GEN=$HW_ROOT/t/gen-session.py
FIX=$HW_ROOT/t/fixtures/hw-session

# cmd N - a pause command through hw-session command, a lease holder that
# commits: it leaves the head and the snapshot where its logs end
envelope() {
	printf '{"schema_version":"heartwood.session-command.v1","command_id":"c-%s","session_id":"session-main","kind":"pause","actor_id":"human","created_at":"2026-12-02T00:00:00Z","payload":{}}\n' "$1"
}
cmd() {
	local rc=0
	# applied (0), or declined (1) while the agent is idle
	envelope "$1" | hw-session command session-main >/dev/null || rc=$?
	[ "$rc" -le 1 ]
	[ -f $S/.verified-head.json ]
	[ -f $S/.projection-snapshot.json ]
}

# extend N - N pairs appended the reference's way (its key order, raw
# UTF-8), continuing the chain: a tail another implementation wrote
extend() {
	python3 - "$GEN" "$1" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("g", sys.argv[1])
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
d = ".heartwood/sessions/session-main/"
evs = g.parse_lines(d + "events.jsonl")
head = g.parse_lines(d + "audit.jsonl")[-1]["event_hash"]
with open(d + "events.jsonl", "a") as fe, open(d + "audit.jsonl", "a") as fa:
    for i in range(int(sys.argv[2])):
        ev = g.make_event("session-main", len(evs) + i, "agent_message.emitted",
                          "2026-08-02T13:00:00Z",
                          {"content": "from elsewhere \u00e9 %d" % i}, head)
        au = g.make_audit(ev)
        head = au["event_hash"]
        fe.write(g.pyd_record(ev, g.EVENT_FIELDS))
        fa.write(g.pyd_record(au, g.AUDIT_FIELDS))
PY
}

# poke FILE FROM TO [last] - replace the first (or last) FROM by TO (same
# length) in place, keeping the file (its inode) and everything else in it
poke() {
	python3 - "$@" <<'PY'
import sys
path, a, b = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
assert len(a) == len(b)
with open(path, "r+b") as f:
    data = f.read()
    at = data.rindex(a) if sys.argv[4:] == ["last"] else data.index(a)
    f.seek(at)
    f.write(b)
PY
}

# fresh - the projection with neither cache
fresh() {
	mkdir -p ../caches-$$
	mv $S/.verified-head.json $S/.projection-snapshot.json ../caches-$$/ 2>/dev/null || true
	hw-session project session-main
	mv ../caches-$$/.verified-head.json ../caches-$$/.projection-snapshot.json $S/ 2>/dev/null || true
}

@test "head: a lease holder that commits leaves an owner-only head and snapshot, a reader neither" {
	append_n 5
	rm $S/.verified-head.json
	run -0 hw-session project session-main
	run -0 hw-session replay session-main
	[ ! -e $S/.verified-head.json ]
	[ ! -e $S/.projection-snapshot.json ]
	# nor a command that commits nothing (a retry)
	envelope 0 >c0.json
	hw-append --session session-main --command c0.json </dev/null >/dev/null
	rm $S/.verified-head.json
	run -0 hw-append --session session-main --command c0.json </dev/null
	[ ! -e $S/.verified-head.json ]
	cmd 1
	n=$(wc -l <$S/events.jsonl)
	[ "$(stat -c %a $S/.verified-head.json $S/.projection-snapshot.json | tr '\n' ' ')" = "600 600 " ]
	run -0 jq -r '[.schema_version, .session_id, .position.count] | join(" ")' $S/.verified-head.json
	[ "$output" = "heartwood.verified-head.v1 session-main $n" ]
	run -0 jq -r '[.schema_version, .position.count, .state.count] | join(" ")' $S/.projection-snapshot.json
	[ "$output" = "heartwood.projection-snapshot.v3 $n $n" ]
	# the head names the last line of each log, byte for byte
	run -0 jq -r .position.events.line_sha256 $S/.verified-head.json
	[ "$output" = "$(tail -n 1 $S/events.jsonl | sha256sum | cut -c1-64)" ]
	run -0 jq -r .position.audit.offset $S/.verified-head.json
	[ "$output" = "$(wc -c <$S/audit.jsonl)" ]
}

@test "head: a tail another implementation wrote after the head is verified and projected" {
	append_n 5
	cmd 1
	extend 3
	run -0 --separate-stderr hw-session project session-main
	[ "$(jq .eventCount <<<"$output")" = "$(wc -l <$S/events.jsonl)" ]
	[ "$(jq -r '.conversation[-1].content' <<<"$output")" = "from elsewhere é 2" ]
	[ "$output" = "$(fresh)" ]
	run -0 python3 "$GEN" verify session-main
	# and a lease holder carries the head on over it
	cmd 2
	run -0 jq .position.count $S/.verified-head.json
	[ "$output" -eq "$(wc -l <$S/events.jsonl)" ]
}

@test "head: without a snapshot, the events the head covers and the tail after it are each reduced once" {
	append_n 5
	cmd 1
	extend 3
	rm $S/.projection-snapshot.json
	# the covered events are parsed on a second thread, the tail is
	# verified after them: the projection is the one of every event
	run -0 --separate-stderr hw-session project session-main
	[ -z "$stderr" ]
	[ "$(jq .eventCount <<<"$output")" = "$(wc -l <$S/events.jsonl)" ]
	[ "$output" = "$(fresh)" ]
}

@test "head: a changed record in the tail after the head is refused" {
	append_n 5
	cmd 1
	n=$(wc -l <$S/events.jsonl)
	extend 3
	poke $S/events.jsonl 'elsewhere' 'elsewhare'
	run -65 --separate-stderr hw-session project session-main
	[[ "$stderr" == *"sequence $n: "* ]]
	run -65 hw-session replay session-main
}

@test "head: the last verified record changed in place is found" {
	append_n 5
	cmd 1
	n=$(($(wc -l <$S/events.jsonl) - 1))
	# its event_hash and its length as they were: only the bytes differ
	poke $S/audit.jsonl '"command":"pause"' '"command":"pauze"' last
	run -65 --separate-stderr hw-session project session-main
	[[ "$stderr" == *"sequence $n: "* ]]
}

@test "head: logs cut below the head are verified from the start" {
	append_n 6
	cmd 1
	head -n 3 $S/events.jsonl >e
	cat e >$S/events.jsonl
	head -n 3 $S/audit.jsonl >a
	cat a >$S/audit.jsonl
	run -0 --separate-stderr hw-session project session-main
	[ "$(jq .eventCount <<<"$output")" = 3 ]
	[ "$output" = "$(fresh)" ]
	# cut inside a line: the head does not hide it
	truncate -s -7 $S/events.jsonl
	run -65 --separate-stderr hw-session project session-main
	[[ "$stderr" == *"sequence 2: event and audit logs have different lengths"* ]]
}

@test "head: logs cut and grown again past the head are verified from the start" {
	append_n 6
	cmd 1
	size=$(jq .position.events.offset $S/.verified-head.json)
	head -n 2 $S/events.jsonl >e
	cat e >$S/events.jsonl
	head -n 2 $S/audit.jsonl >a
	cat a >$S/audit.jsonl
	extend 10
	[ "$(stat -c %s $S/events.jsonl)" -gt "$size" ]
	run -0 --separate-stderr hw-session project session-main
	[ "$(jq .eventCount <<<"$output")" = 12 ]
	[ "$output" = "$(fresh)" ]
	# and an early record changed as well is found
	poke $S/events.jsonl 'message 1' 'massage 1'
	run -65 hw-session project session-main
}

@test "head: a rewritten middle record with the audit chain re-hashed after it is refused everywhere" {
	setup_keys
	append_n 8
	cmd 1
	extend 2
	# an event changed, and the audit log rebuilt from there to bind it:
	# the tail alone still follows the head, only its hashes show it
	poke $S/events.jsonl 'message 3' 'massage 3'
	python3 "$GEN" forge-audit session-main 3
	run -65 --separate-stderr hw-session project session-main
	[[ "$stderr" == *"sequence 4: session event does not follow the audit chain head"* ]]
	envelope 2 >env
	run -65 hw-session command session-main <env
	run -65 hw-session replay session-main
	run -65 hw-audit verify --session session-main
	run -65 hw-audit export --session session-main --output export.jsonl
	run -65 hw-audit checkpoint --session session-main --output cp \
		--deployment-id lab-7 --retention-policy irb-2026 \
		--retain-until 2033-12-31 --key ed.pem
}

@test "head: logs replaced by copies are verified from the start" {
	append_n 8
	cmd 1
	# the copy differs inside the prefix only; its last lines are the same
	cp $S/events.jsonl e
	poke e 'message 3' 'massage 3'
	mv e $S/events.jsonl
	run -65 --separate-stderr hw-session project session-main
	[[ "$stderr" == *"sequence 3: "* ]]
}

@test "head: a change inside the prefix that keeps the last lines is left to the full verifiers" {
	setup_keys
	append_n 8
	cmd 1
	poke $S/events.jsonl 'message 3' 'massage 3'
	# a command checks what hw-store(5) says it checks: not this
	run -0 hw-session project session-main
	# everything that hands out history checks the whole chain
	run -65 --separate-stderr hw-session replay session-main
	[[ "$stderr" == *"sequence 3: "* ]]
	run -65 hw-audit verify --session session-main
	run -65 hw-audit export --session session-main --output export.jsonl
	run -65 hw-audit checkpoint --session session-main --output cp \
		--deployment-id lab-7 --retention-policy irb-2026 \
		--retain-until 2033-12-31 --key ed.pem
}

@test "head: a head tampered, of another version, open to others or a symlink is not trusted" {
	append_n 8
	cmd 1
	poke $S/events.jsonl 'message 3' 'massage 3'
	# the head as written hides the change (see the test above) ...
	run -0 hw-session project session-main
	cp -p $S/.verified-head.json good
	# ... and any other head is not used: the change is found
	jq -c '.position.events.line_sha256 = "'"$(printf '%064d' 0)"'"' good >$S/.verified-head.json
	run -65 hw-session project session-main
	jq -c '.position.events.ino += 1' good >$S/.verified-head.json
	run -65 hw-session project session-main
	jq -c '.position.count += 1' good >$S/.verified-head.json
	run -65 hw-session project session-main
	jq -c '.schema_version = "heartwood.verified-head.v2"' good >$S/.verified-head.json
	run -65 hw-session project session-main
	jq -c '.session_id = "session-other"' good >$S/.verified-head.json
	run -65 hw-session project session-main
	cp -p good $S/.verified-head.json
	chmod 640 $S/.verified-head.json
	run -65 hw-session project session-main
	chmod 600 $S/.verified-head.json
	run -0 hw-session project session-main
	mv $S/.verified-head.json elsewhere.json
	ln -s "$PWD/elsewhere.json" $S/.verified-head.json
	run -65 hw-session project session-main
	printf '{"position":' >$S/.verified-head.json
	run -65 hw-session project session-main
}

@test "head: a head or snapshot a crash left cut, empty or zeroed (they are not synced) is not used" {
	append_n 8
	cmd 1
	poke $S/events.jsonl 'message 3' 'massage 3'
	run -0 hw-session project session-main
	cp -p $S/.verified-head.json good
	n=$(wc -c <good)
	: >$S/.verified-head.json
	run -65 hw-session project session-main
	head -c $((n / 2)) good >$S/.verified-head.json
	run -65 hw-session project session-main
	head -c $((n - 2)) good >$S/.verified-head.json
	run -65 hw-session project session-main
	head -c "$n" /dev/zero >$S/.verified-head.json
	run -65 hw-session project session-main
	cp -p good $S/.verified-head.json
	run -0 hw-session project session-main
}

@test "snapshot: one a crash left cut, empty or zeroed is not used, and the projection is the same" {
	append_n 8
	cmd 1
	append_n 3
	want=$(fresh)
	cp -p $S/.projection-snapshot.json good
	n=$(wc -c <good)
	for cut in 0 $((n / 2)) $((n - 2)); do
		head -c "$cut" good >$S/.projection-snapshot.json
		run -0 hw-session project session-main
		[ "$output" = "$want" ]
	done
	head -c "$n" /dev/zero >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
}

@test "head: a symbolic link in place of the head or the snapshot is replaced, never followed" {
	append_n 3
	cmd 1
	for f in .verified-head.json .projection-snapshot.json; do
		echo keep >"target$f"
		rm $S/$f
		ln -s "$PWD/target$f" $S/$f
	done
	# a clone could plant them: the writer still commits, says so, and
	# puts its caches in place of the links
	run -0 --separate-stderr hw-append --session session-main < <(draft agent.lifecycle.updated '{"status":"idle"}')
	[ -z "$stderr" ]
	cmd 2
	[ "$(stat -c %F $S/.verified-head.json $S/.projection-snapshot.json | sort -u)" = "regular file" ]
	[ "$(cat target.verified-head.json target.projection-snapshot.json)" = "$(printf 'keep\nkeep')" ]
}

@test "head: replay, export and verify read the whole chain even with a valid head" {
	append_n 4
	cmd 1
	append_n 2
	run -0 --separate-stderr hw-session replay session-main
	[ "${#lines[@]}" -eq "$(wc -l <$S/events.jsonl)" ]
	[ "$output" = "$(python3 "$GEN" canon <$S/events.jsonl)" ]
	run -0 --separate-stderr hw-audit verify --session session-main
	[ "$(jq .event_count <<<"$output")" = "$(wc -l <$S/events.jsonl)" ]
}

@test "head: a command already in the log is found, whatever became of its receipt" {
	envelope L >l.json
	drafts 1 | hw-append --session session-main --command l.json >first
	cmd 1
	rm $S/.commands/*.json
	# the head's filter has its id: the whole log is searched
	run -0 hw-append --session session-main --command l.json </dev/null
	[ "$output" = "$(cat first)" ]
	[ "$(grep -c '"command_id":"c-L"' $S/events.jsonl)" = 1 ]
}

@test "head: a command's id reaches the head's filter through a walk that reads lines without a tree" {
	envelope L >l.json
	drafts 1 | hw-append --session session-main --command l.json >first
	# no head: the next writer verifies the whole log, its command.received
	# on its own bytes, and leaves a head whose filter must hold c-L
	rm -f $S/.verified-head.json $S/.commands/*.json
	append_n 1
	[ -f $S/.verified-head.json ]
	n=$(wc -l <$S/events.jsonl)
	# found, with no receipt to end it: its events and all after them
	run -0 --separate-stderr hw-append --session session-main --command l.json </dev/null
	[ "$(head -n 2 <<<"$output")" = "$(cat first)" ]
	[ "$(wc -l <$S/events.jsonl)" = "$n" ]
	[ "$(grep -c '"command_id":"c-L"' $S/events.jsonl)" = 1 ]
}

@test "head: a command another implementation recorded after the head is found" {
	append_n 3
	cmd 1
	envelope T >t.json
	# c-T's command.received, with no receipt, appended the reference's way
	python3 - "$GEN" <<'PY'
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("g", sys.argv[1])
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)
d = ".heartwood/sessions/session-main/"
env = json.load(open("t.json"))
evs = g.parse_lines(d + "events.jsonl")
head = g.parse_lines(d + "audit.jsonl")[-1]["event_hash"]
ev = g.make_event("session-main", len(evs), "command.received",
                  "2026-08-02T13:00:00Z", {"actor_id": "human",
                  "command_id": "c-T", "command_hash": g.digest(env),
                  "command_kind": "pause"}, head)
with open(d + "events.jsonl", "a") as f:
    f.write(g.pyd_record(ev, g.EVENT_FIELDS))
with open(d + "audit.jsonl", "a") as f:
    f.write(g.pyd_record(g.make_audit(ev), g.AUDIT_FIELDS))
PY
	n=$(wc -l <$S/events.jsonl)
	run -0 --separate-stderr hw-append --session session-main --command t.json </dev/null
	[ "$(jq -r .payload.command_id <<<"$output")" = c-T ]
	[ "$(wc -l <$S/events.jsonl)" = "$n" ]
	[ "$(jq -r .state $S/.commands/"$(printf c-T | sha256sum | cut -c1-64)".json)" = completed ]
}

@test "snapshot: stale, corrupt, of another version or open to others, it is not used" {
	hw-append --session session-main <"$FIX/session-life.in.jsonl" >/dev/null
	python3 "$HW_ROOT/t/bind.py" session-main
	cmd 1
	cp -p $S/.projection-snapshot.json old
	append_n 3
	cmd 2
	append_n 1
	want=$(fresh)
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	cp -p $S/.projection-snapshot.json good
	# an older snapshot whose position still holds: the events after it
	cp -p old $S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	# a state for another position than the one it names
	jq -c --slurpfile o old '.state = $o[0].state' good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	jq -c '.position.audit.line_sha256 = "'"$(printf '%064d' 0)"'" | .state.status = "finished"' good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	jq -c '.schema_version = "heartwood.projection-snapshot.v0" | .state.status = "finished"' good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	jq -c '.state.status = "finished"' good >$S/.projection-snapshot.json
	chmod 604 $S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	chmod 600 $S/.projection-snapshot.json
	head -c 100 good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	jq -c 'del(.state.groups)' good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$output" = "$want" ]
	# the snapshot as written is what is used
	jq -c '.state.conversation = []' good >$S/.projection-snapshot.json
	run -0 hw-session project session-main
	[ "$(jq '.conversation | length' <<<"$output")" -lt "$(jq '.conversation | length' <<<"$want")" ]
}

# same_at CASE - for each point of CASE's drafts, a snapshot there and the
# rest after it project exactly what the log projects without one
same_at() {
	local n k
	n=$(wc -l <"$FIX/$1.in.jsonl")
	for ((k = 1; k < n; k += 2)); do
		rm -rf .heartwood "$XDG_STATE_HOME"
		head -n "$k" "$FIX/$1.in.jsonl" | hw-append --session session-main >/dev/null
		python3 "$HW_ROOT/t/bind.py" session-main
		cmd "$k"
		tail -n +"$((k + 1))" "$FIX/$1.in.jsonl" | hw-append --session session-main >/dev/null
		python3 "$HW_ROOT/t/bind.py" session-main
		run -0 hw-session project session-main
		[ "$(jq .eventCount <<<"$output")" = "$(wc -l <$S/events.jsonl)" ]
		[ "$output" = "$(fresh)" ]
		[ "$output" = "$(hw-session replay session-main | hw-session project --events - session-main)" ]
	done
}

@test "snapshot: the projection is the same with and without it, at every point of every golden session" {
	for f in "$FIX"/*.in.jsonl; do
		same_at "$(basename "$f" .in.jsonl)"
	done
}

setup_keys() {
	openssl genpkey -algorithm ed25519 -out ed.pem 2>/dev/null
	chmod 600 ed.pem
}
