#!/usr/bin/env bats
# t/0200-hw-session.bats - hw-session(1): new, list, show and rename; replay
# and the integrity checks it makes (one test per kind of tampering, each
# also proving that hw-append then refuses the session without changing it);
# interoperation with t/gen-session.py, an independent Python model of the
# reference's hashing and minimization rules; the reference's own fixtures
# and its .pending-commit.json journal; and state marker migration.

load lib
bats_require_minimum_version 1.5.0

GEN="$BATS_TEST_DIRNAME/gen-session.py"
FIX="$BATS_TEST_DIRNAME/fixtures/reference"
BADID="expected 1-128 of A-Z a-z 0-9 _ . - starting with a letter or digit"
BADTITLE="hw-session: invalid title: it must have 1-120 characters that are not all whitespace"
STAMP='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$'

gen() { python3 "$GEN" "$@"; }

# five - session-main with five agent messages and no crash evidence;
# sets E and A to its two logs
five() {
	append_n 5
	E=$(sdir)/events.jsonl
	A=$(sdir)/audit.jsonl
	[ ! -e "$(sdir)/.writer.json" ]
}

# jedit FILE LINE CODE - run the Python CODE on line LINE of FILE parsed as r,
# then write r back in its place as canonical JSON
jedit() {
	python3 - "$@" <<'EOF'
import json, sys
path, n, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, "rb") as f:
    lines = f.read().split(b"\n")
r = json.loads(lines[n - 1])
exec(code)
lines[n - 1] = json.dumps(r, sort_keys=True, separators=(",", ":")).encode()
with open(path, "wb") as f:
    f.write(b"\n".join(lines))
EOF
}

# refused SEQ REASON - replay of session-main fails at sequence SEQ for
# REASON, printing no event from SEQ on and writing nothing; a following
# hw-append is refused for the same reason and changes nothing either
refused() {
	local before replay_err
	# a command checks only what came after the verified head, and a
	# record edited in place to its own length may lie before it
	# (hw-store(5), Verified head; t/0240-verified-head.bats): set aside,
	# so that every command checks every record here
	rm -f "$(sdir)/.verified-head.json"
	before=$(snapshot)
	run -65 --separate-stderr hw-session replay session-main
	replay_err=$stderr
	[ "${#lines[@]}" -le "$1" ]
	[ "$(snapshot)" = "$before" ]
	run -65 --separate-stderr hw-append --session session-main <<<"$(drafts 1)"
	[ "$output" = "" ]
	echo "hw-append stderr: $stderr"
	[ "$stderr" = "hw-append: sequence $1: $2" ]
	[ "$(snapshot)" = "$before" ]
	echo "replay stderr: $replay_err"
	[ "$replay_err" = "hw-session: replay 'session-main': sequence $1: $2" ]
}

# verifies - replay of session-main succeeds and prints events.jsonl
verifies() {
	run -0 --separate-stderr hw-session replay session-main
	[ "$stderr" = "" ]
	[ "$output" = "$(cat "$(sdir)/events.jsonl")" ]
}

# refuses_id ID - every subcommand taking an id refuses ID with exit 2 and
# creates nothing, with and without a store
refuses_id() {
	local id=$1 before verb
	mkdir p && cd p
	for pass in nostore store; do
		if [ "$pass" = store ]; then
			hw-session new >/dev/null
		fi
		before=$(cd "$PROJ" && find . | sort)
		for verb in replay show; do
			run -2 --separate-stderr hw-session "$verb" -- "$id"
			[ "$output" = "" ]
			[ "$stderr" = "hw-session: invalid session id '$id': $BADID" ]
		done
		run -2 --separate-stderr hw-session rename -- "$id" title
		[ "$stderr" = "hw-session: invalid session id '$id': $BADID" ]
		[ "$(cd "$PROJ" && find . | sort)" = "$before" ]
	done
}

# field JSON KEY - one field of a JSON object, raw
field() { jq -r ".$2" <<<"$1"; }

# ---------------------------------------------------------------------------
# new, list, show, rename

@test "new: prints one canonical summary with the six fields and a generated id" {
	run -0 --separate-stderr hw-session new
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jq -c 'keys' <<<"$output")" = '["created_at","event_count","session_id","status","title","updated_at"]' ]
	[ "$(gen canon <<<"$output")" = "$output" ]
	id=$(field "$output" session_id)
	[[ "$id" =~ ^session-[0-9]{8}T[0-9]{6}Z-[0-9a-f]{8}$ ]]
	[ "$(field "$output" title)" = "Untitled session" ]
	[ "$(field "$output" status)" = "empty" ]
	[ "$(field "$output" event_count)" = "0" ]
	[[ "$(field "$output" created_at)" =~ $STAMP ]]
	[ "$(field "$output" created_at)" = "$(field "$output" updated_at)" ]
	summary=$output
	run -0 --separate-stderr hw-session show "$id"
	[ "$output" = "$summary" ]
}

@test "new: creates the store layout and the session's metadata" {
	run -0 --separate-stderr hw-session new
	id=$(field "$output" session_id)
	cmp .heartwood/state.json "$FIX/project-state-v2.json"
	printf '*\n' | cmp - .heartwood/.gitignore
	[ "$(stat -c %a .heartwood)" = 700 ]
	for d in sessions models skills audit runtime logs cache; do
		[ "$(stat -c %a .heartwood/$d)" = 700 ]
	done
	[ "$(stat -c %a "$(sdir "$id")")" = 700 ]
	[ "$(stat -c %a "$(sdir "$id")/metadata.json")" = 600 ]
	meta=$(cat "$(sdir "$id")/metadata.json")
	[ "$(jq -c 'keys' <<<"$meta")" = '["created_at","schema_version","title","updated_at"]' ]
	[ "$(field "$meta" schema_version)" = "heartwood.session-metadata.v1" ]
	[ "$(gen canon <<<"$meta")" = "$meta" ]
}

@test "new: two sessions get distinct ids and list prints both in id order" {
	a=$(hw-session new --title one | jq -r .session_id)
	b=$(hw-session new --title two | jq -r .session_id)
	[ "$a" != "$b" ]
	run -0 --separate-stderr hw-session list
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -r .session_id <<<"$output")" = "$(printf '%s\n' "$a" "$b" | sort)" ]
}

@test "new --title: runs of white space collapse and the ends are trimmed" {
	run -0 --separate-stderr hw-session new --title $'  Survey \t\n\r\v\f  cleanup  '
	[ "$(field "$output" title)" = "Survey cleanup" ]
	id=$(field "$output" session_id)
	[ "$(jq -r .title "$(sdir "$id")/metadata.json")" = "Survey cleanup" ]
}

@test "new --title: an empty title exits 2 and creates nothing" {
	run -2 --separate-stderr hw-session new --title ""
	[ "$output" = "" ]
	[ "$stderr" = "$BADTITLE" ]
	[ ! -e .heartwood ]
}

@test "new --title: a title of only white space exits 2 and creates nothing" {
	run -2 --separate-stderr hw-session new --title $' \t\n '
	[ "$stderr" = "$BADTITLE" ]
	[ ! -e .heartwood ]
}

@test "new --title: a 121-character title exits 2, 120 characters are fine" {
	run -2 --separate-stderr hw-session new --title "$(printf 'x%.0s' {1..121})"
	[ "$stderr" = "$BADTITLE" ]
	[ ! -e .heartwood ]
	run -0 --separate-stderr hw-session new --title "$(printf 'x%.0s' {1..120})"
	[ "$(field "$output" title)" = "$(printf 'x%.0s' {1..120})" ]
}

@test "new --title: the limit counts characters, not bytes" {
	t120=$(printf '\xc3\xa9%.0s' {1..120})
	run -0 --separate-stderr hw-session new --title "$t120"
	[ "$(field "$output" title)" = "$t120" ]
	[[ "$output" == *'"title":"\u00e9\u00e9'* ]]
	run -2 --separate-stderr hw-session new --title "${t120}x"
	[ "$stderr" = "$BADTITLE" ]
}

@test "list: without a store prints nothing and creates no .heartwood" {
	run -0 --separate-stderr hw-session list
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ ! -e .heartwood ]
	[ -z "$(ls -A)" ]
}

@test "list: a session registered by hw-append is titled 'Main session'" {
	append_n 3
	run -0 --separate-stderr hw-session list
	[ "${#lines[@]}" -eq 1 ]
	[ "$(field "$output" session_id)" = "session-main" ]
	[ "$(field "$output" title)" = "Main session" ]
	[ "$(field "$output" status)" = "idle" ]
	[ "$(field "$output" event_count)" = "3" ]
}

@test "list: another session registered by hw-append is titled after its id" {
	append_n 1 other-session
	run -0 --separate-stderr hw-session show other-session
	[ "$(field "$output" title)" = "other-session" ]
	[ "$(field "$output" event_count)" = "1" ]
}

@test "show: a session with events reports idle, its count and its timestamps" {
	append_n 4
	run -0 --separate-stderr hw-session show session-main
	[ "$stderr" = "" ]
	[ "$(field "$output" status)" = "idle" ]
	[ "$(field "$output" event_count)" = "4" ]
	[ "$(field "$output" created_at)" = "$(jq -r .created_at "$(sdir)/metadata.json")" ]
	[ "$(field "$output" updated_at)" = "$(jq -r .updated_at "$(sdir)/metadata.json")" ]
}

@test "show: the status follows the lifecycle events" {
	status_after() {
		draft "$1" "${2:-{\}}" | hw-append --session session-main >/dev/null
		[ "$(hw-session show session-main | jq -r .status)" = "$3" ]
	}
	status_after agent.lifecycle.updated '{"status":"running"}' idle
	status_after agent.lifecycle.updated '{"status":"waiting-for-confirmation"}' waiting
	status_after session.paused '{"command_id":"c1"}' paused
	status_after session.resumed '{"command_id":"c2"}' idle
	status_after error.recorded '{"command":"chat","reason":"busy","affects_lifecycle":false}' idle
	status_after error.recorded '{"backend_id":"b","code":"HW-AGENT-002","reason":"x"}' error
	status_after agent.lifecycle.updated '{"status":"idle"}' idle
}

@test "list: a session directory without metadata.json does not hide the others" {
	# the state a crash of hw-append's implicit registration leaves behind
	# between creating the directory and renaming metadata.json into it
	append_n 1
	mkdir -m 700 "$(sdir session-a)"
	run --separate-stderr hw-session list
	echo "status $status, stderr: $stderr"
	[[ "$output" == *'"session_id":"session-main"'* ]]
	[ "$status" -eq 0 ]
}

@test "show: a missing session exits 66" {
	hw-session new >/dev/null
	run -66 --separate-stderr hw-session show session-nope
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: no session 'session-nope'" ]
	[ ! -e "$(sdir session-nope)" ]
}

@test "show: a missing session without a store exits 66 and creates nothing" {
	run -66 --separate-stderr hw-session show session-main
	[ "$stderr" = "hw-session: no session 'session-main'" ]
	[ ! -e .heartwood ]
}

@test "show: a tampered session is reported as recovery-required" {
	five
	sed -i '3s/message 2/message X/' "$E"
	run -0 --separate-stderr hw-session show session-main
	[ "$(field "$output" status)" = "recovery-required" ]
	run -0 --separate-stderr hw-session list
	[ "$(field "$output" status)" = "recovery-required" ]
}

@test "rename: collapses white space, keeps created_at and moves updated_at" {
	append_n 2
	jedit "$(sdir)/metadata.json" 1 'r["created_at"] = "2020-01-02T03:04:05Z"; r["updated_at"] = "2020-01-02T03:04:06Z"'
	t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	run -0 --separate-stderr hw-session rename session-main $'\t Survey   of\n\nthe  data '
	[ "$stderr" = "" ]
	[ "$(field "$output" title)" = "Survey of the data" ]
	[ "$(field "$output" created_at)" = "2020-01-02T03:04:05Z" ]
	updated=$(field "$output" updated_at)
	[[ "$updated" =~ $STAMP ]]
	[[ ! "$updated" < "$t0" ]]
	[ "$(field "$output" event_count)" = "2" ]
	meta=$(cat "$(sdir)/metadata.json")
	[ "$(jq -c 'keys' <<<"$meta")" = '["created_at","schema_version","title","updated_at"]' ]
	[ "$(field "$meta" title)" = "Survey of the data" ]
	[ "$(field "$meta" created_at)" = "2020-01-02T03:04:05Z" ]
	[ "$(field "$meta" updated_at)" = "$updated" ]
	summary=$output
	run -0 --separate-stderr hw-session show session-main
	[ "$output" = "$summary" ]
}

@test "rename: does not touch the logs" {
	append_n 3
	ev=$(sha256sum "$(sdir)/events.jsonl" "$(sdir)/audit.jsonl")
	run -0 hw-session rename session-main "New name"
	[ "$(sha256sum "$(sdir)/events.jsonl" "$(sdir)/audit.jsonl")" = "$ev" ]
	verifies
}

@test "rename: an empty title exits 2 and changes nothing" {
	append_n 1
	before=$(snapshot)
	run -2 --separate-stderr hw-session rename session-main ""
	[ "$output" = "" ]
	[ "$stderr" = "$BADTITLE" ]
	[ "$(snapshot)" = "$before" ]
}

@test "rename: a title of only white space exits 2 and changes nothing" {
	append_n 1
	before=$(snapshot)
	run -2 --separate-stderr hw-session rename session-main $'  \t '
	[ "$stderr" = "$BADTITLE" ]
	[ "$(snapshot)" = "$before" ]
}

@test "rename: a 121-character title exits 2 and changes nothing" {
	append_n 1
	before=$(snapshot)
	run -2 --separate-stderr hw-session rename session-main "$(printf 'y%.0s' {1..121})"
	[ "$stderr" = "$BADTITLE" ]
	[ "$(snapshot)" = "$before" ]
	run -0 hw-session rename session-main "$(printf 'y%.0s' {1..120})"
}

@test "rename: a missing session exits 66 and creates nothing" {
	hw-session new >/dev/null
	before=$(find .heartwood | sort)
	run -66 --separate-stderr hw-session rename session-nope "A title"
	[ "$stderr" = "hw-session: no session 'session-nope'" ]
	[ "$(find .heartwood | sort)" = "$before" ]
}

@test "usage: an unknown subcommand or a missing argument exits 2" {
	run -2 --separate-stderr hw-session frobnicate
	[ "$output" = "" ]
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr hw-session replay
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr hw-session rename session-main
	[[ "$stderr" == usage:* ]]
	[ ! -e .heartwood ]
}

# ---------------------------------------------------------------------------
# replay

@test "replay: prints exactly the events, canonical, in order" {
	five
	verifies
	[ "${#lines[@]}" -eq 5 ]
	for i in 0 1 2 3 4; do
		[ "$(jq -r .sequence <<<"${lines[$i]}")" = "$i" ]
		[ "$(gen canon <<<"${lines[$i]}")" = "${lines[$i]}" ]
	done
}

@test "replay: writes nothing and leaves no .writer.json" {
	five
	before=$(snapshot)
	verifies
	[ "$(snapshot)" = "$before" ]
	[ ! -e "$(sdir)/.writer.json" ]
}

@test "replay: a session without events prints nothing" {
	id=$(hw-session new | jq -r .session_id)
	run -0 --separate-stderr hw-session replay "$id"
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "replay: a missing session prints nothing, exits 0 and creates no store" {
	run -0 --separate-stderr hw-session replay session-main
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ ! -e .heartwood ]
	[ -z "$(ls -A)" ]
}

@test "replay: a missing session in an existing store creates no session directory" {
	append_n 1
	before=$(find .heartwood | sort)
	run -0 --separate-stderr hw-session replay session-nope
	[ "$output" = "" ]
	[ "$stderr" = "" ]
	[ "$(find .heartwood | sort)" = "$before" ]
}

@test "replay: a store that lost state.json is an invalid layout, not an empty store" {
	append_n 2
	rm .heartwood/state.json
	before=$(find .heartwood | sort)
	msg="invalid store layout '.heartwood': no state.json but the directory is not empty"
	run -65 --separate-stderr hw-append --session session-main <<<"$(drafts 1)"
	[ "$stderr" = "hw-append: $msg" ]
	run --separate-stderr hw-session replay session-main
	echo "replay: status $status, ${#lines[@]} lines, stderr: $stderr"
	[ "$status" -eq 65 ]
	[ "$stderr" = "hw-session: $msg" ]
	run --separate-stderr hw-session list
	echo "list: status $status, stderr: $stderr"
	[ "$status" -eq 65 ]
	[ "$(find .heartwood | sort)" = "$before" ]
}

@test "replay: a 128-character id is valid" {
	id=$(printf 'a%.0s' {1..128})
	run -0 --separate-stderr hw-session replay "$id"
	[ "$output" = "" ]
	[ "$stderr" = "" ]
}

@test "replay: the id '..' is refused with exit 2" {
	refuses_id ..
}

@test "replay: the id 'a/b' is refused with exit 2" {
	refuses_id a/b
}

@test "replay: the id '../x' is refused with exit 2" {
	refuses_id ../x
}

@test "replay: a 129-character id is refused with exit 2" {
	refuses_id "$(printf 'a%.0s' {1..129})"
}

@test "replay: the id '.hidden' is refused with exit 2" {
	refuses_id .hidden
}

@test "replay: the id '-x' after -- is refused with exit 2" {
	refuses_id -x
}

@test "replay: output to a full device exits 74" {
	append_n 2
	run -74 --separate-stderr bash -c "hw-session replay session-main >/dev/full"
	[ "$stderr" = "hw-session: cannot write 'stdout': No space left on device" ]
}

@test "replay: a live writer's .writer.json is not taken for a crash" {
	five
	mkfifo in
	# fd 3 is bats' own; the writer end of the fifo is fd 7
	hw-append --session session-main <in >acked 3>&- &
	pid=$!
	exec 7>in
	drafts 1 >&7
	for ((i = 0; i < 100; i++)); do
		[ -s acked ] && break
		sleep 0.05
	done
	[ -e "$(sdir)/.writer.json" ]
	run -0 --separate-stderr hw-session replay session-main
	exec 7>&-
	wait "$pid"
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 6 ]
	[ ! -e "$(sdir)/.writer.json" ]
}

# ---------------------------------------------------------------------------
# Tampering.  Each test writes five events, tampers with one file with no
# .writer.json present (so nothing counts as crash evidence), and expects
# replay and hw-append to fail closed at the right sequence.

@test "replay: a changed payload value in events.jsonl fails at its sequence" {
	five
	sed -i '3s/message 2/message X/' "$E"
	refused 2 "audit session_event_hash does not match the session event"
}

@test "replay: a changed payload value in audit.jsonl fails at its sequence" {
	five
	sed -i '3s/"content_chars":9/"content_chars":8/' "$A"
	refused 2 "audit event_hash does not match the record"
}

@test "replay: a changed occurred_at in events.jsonl fails at its sequence" {
	five
	jedit "$E" 3 'r["occurred_at"] = "2020-01-01T00:00:00Z"'
	refused 2 "event and audit record differ in occurred_at"
}

@test "replay: a changed occurred_at in audit.jsonl fails at its sequence" {
	five
	jedit "$A" 3 'r["occurred_at"] = "2020-01-01T00:00:00Z"'
	refused 2 "audit event_hash does not match the record"
}

@test "replay: a deleted middle event fails at its sequence" {
	five
	sed -i 3d "$E"
	refused 2 "session event has sequence 3"
}

@test "replay: a deleted middle audit record fails at its sequence" {
	five
	sed -i 3d "$A"
	refused 2 "audit record has sequence 3"
}

@test "replay: two reordered events fail at the first of them" {
	five
	sed -i '2{h;d};3G' "$E"
	refused 1 "session event has sequence 2"
}

@test "replay: two reordered audit records fail at the first of them" {
	five
	sed -i '2{h;d};3G' "$A"
	refused 1 "audit record has sequence 2"
}

@test "replay: a duplicated event fails at the copy" {
	five
	sed -i 2p "$E"
	refused 2 "session event has sequence 1"
}

@test "replay: a duplicated audit record fails at the copy" {
	five
	sed -i 2p "$A"
	refused 2 "audit record has sequence 1"
}

@test "replay: events.jsonl short by one record fails at that sequence" {
	five
	sed -i '$d' "$E"
	refused 4 "event and audit logs have different lengths: audit.jsonl has more records"
}

@test "replay: audit.jsonl short by one record fails at that sequence" {
	five
	sed -i '$d' "$A"
	refused 4 "event and audit logs have different lengths: events.jsonl has more records"
}

@test "replay: events.jsonl cut in the middle of its last line fails" {
	five
	truncate -s -20 "$E"
	refused 4 "event and audit logs have different lengths: audit.jsonl has more records"
}

@test "replay: audit.jsonl cut in the middle of its last line fails" {
	five
	truncate -s -20 "$A"
	refused 4 "event and audit logs have different lengths: events.jsonl has more records"
}

@test "replay: an unterminated line after the last event fails" {
	five
	printf '{"partial' >>"$E"
	refused 5 "session event records are malformed: unterminated last line"
}

@test "replay: an unterminated line after the last audit record fails" {
	five
	printf '{"partial' >>"$A"
	refused 5 "audit log is malformed: unterminated last line"
}

@test "replay: both logs cut mid-line at their last record fail" {
	five
	truncate -s -20 "$E"
	truncate -s -20 "$A"
	refused 4 "session event records are malformed: unterminated last line"
}

@test "replay: an empty line among the events fails at its position" {
	five
	sed -i '3i\\' "$E"
	refused 2 "events.jsonl: empty line"
}

@test "replay: an empty line among the audit records fails at its position" {
	five
	sed -i '3i\\' "$A"
	refused 2 "audit.jsonl: empty line"
}

@test "replay: a non-JSON event line fails at its position" {
	five
	sed -i '3s/.*/not json/' "$E"
	refused 2 "events.jsonl:3: invalid JSON value at byte 1"
}

@test "replay: a non-JSON audit line fails at its position" {
	five
	sed -i '3s/.*/not json/' "$A"
	refused 2 "audit.jsonl:3: invalid JSON value at byte 1"
}

@test "replay: an event line that is not an object fails" {
	five
	sed -i '3s/.*/[1,2]/' "$E"
	refused 2 "events.jsonl:3: not a JSON object"
}

@test "replay: an event line with invalid UTF-8 fails" {
	five
	sed -i '3s/message 2/message \xff/' "$E"
	refused 2 "events.jsonl:3: invalid UTF-8 at byte 139"
}

# The attacker edits event 2 and then makes audit.jsonl consistent with it:
# the audit record binds the edited event and every later audit hash and link
# is recomputed.  The events still name the old chain head, so event 3 no
# longer follows the chain.
@test "replay: an edited event with audit.jsonl's hashes rewritten fails at the next sequence" {
	five
	sed -i '3s/message 2/message X/' "$E"
	gen forge-audit session-main 2
	refused 3 "session event does not follow the audit chain head"
}

# The first event names an empty string, not null, as the chain head
# before it, and its audit record is rebuilt to match: the pair is
# consistent, but no record may start the chain that way.
@test "replay: a first event whose previous_event_hash is an empty string fails at sequence 0" {
	five
	jedit "$E" 1 'r["previous_event_hash"] = ""'
	gen forge-audit session-main 0
	refused 0 "session event does not follow the audit chain head"
}

# The documented limit: an attacker who rewrites both files completely (the
# edited event, its audit record, and every later link and hash in both
# files) produces logs that verify.  Only the signed checkpoints of the
# planned hw-audit can detect this; the logs alone cannot.
@test "replay: both logs rewritten consistently after an edit verify (documented limit)" {
	five
	sed -i '3s/message 2/message X/' "$E"
	gen rechain session-main
	verifies
	[[ "${lines[2]}" == *'"message X"'* ]]
}

# The other documented limit: deleting an intact suffix of both logs at once.
@test "replay: both logs short by the same suffix verify (documented limit)" {
	five
	sed -i '4,$d' "$E"
	sed -i '4,$d' "$A"
	verifies
	[ "${#lines[@]}" -eq 3 ]
}

# The remaining tests rewrite both logs consistently after the change, so
# that no hash or link is wrong and only the record validation can object.
@test "replay: an event with an unknown field fails even when rehashed" {
	five
	jedit "$E" 3 'r["extra"] = 1'
	gen rechain session-main
	refused 2 "session event is invalid: unknown field"
}

@test "replay: an audit record with an unknown field fails even when rehashed" {
	five
	jedit "$A" 3 'r["extra"] = 1'
	gen forge-audit session-main 2
	refused 2 "audit record is invalid: unknown field"
}

# The audit payload is a function of its event: one rewritten with every
# later hash and link recomputed still does not verify.
@test "replay: an audit payload that is not its event's minimization fails even when rehashed" {
	five
	jedit "$A" 3 'r["payload"]["content_chars"] = 12345'
	gen forge-audit session-main 2
	refused 2 "audit payload is not the minimized form of its event"
	run -65 --separate-stderr hw-audit verify --session session-main
	[ "$stderr" = "hw-audit: sequence 2: audit payload is not the minimized form of its event" ]
}

# A record in an equivalent non-canonical form is not byte-identical to the
# one the event implies; the full checks accept it and the digests are those
# of the canonical form.
@test "replay: an audit record written non-canonically verifies through the full checks" {
	five
	want=$(hw-audit verify --session session-main)
	python3 - "$A" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
lines[2] = json.dumps(json.loads(lines[2]), indent=None, separators=(", ", ": "))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
	verifies
	run -0 hw-audit verify --session session-main
	[ "$output" = "$want" ]
}

@test "replay: an audit record with another event_type fails even when rehashed" {
	five
	jedit "$A" 3 'r["event_type"] = "user_message.recorded"'
	gen forge-audit session-main 2
	refused 2 "audit event_type differs from the event kind"
}

@test "replay: an event with an unknown kind fails even when rehashed" {
	five
	jedit "$E" 3 'r["kind"] = "bogus.kind"'
	gen rechain session-main
	refused 2 "session event is invalid: unknown event kind"
}

@test "replay: an event of another session fails even when rehashed" {
	five
	jedit "$E" 3 'r["session_id"] = "session-other"'
	gen rechain session-main
	refused 2 "session event belongs to another session"
}

@test "replay: an unknown event schema_version fails without echoing the payload" {
	five
	jedit "$E" 3 'r["schema_version"] = "heartwood.session-event.v9"; r["payload"]["content"] = "sk-live-HUNTER2-SECRET"'
	gen rechain session-main
	refused 2 "events.jsonl: unsupported persisted schema for session_event: heartwood.session-event.v9"
	run -65 --separate-stderr hw-session replay session-main
	[[ "$stderr" != *HUNTER2* ]]
	[[ "$output" != *HUNTER2* ]]
}

@test "replay: an unknown audit schema_version fails even when rehashed" {
	five
	jedit "$A" 3 'r["schema_version"] = "heartwood.audit-event.v9"'
	gen forge-audit session-main 2
	refused 2 "audit.jsonl: unsupported persisted schema for audit_event: heartwood.audit-event.v9"
}

# Crash evidence changes the rules: an audit record is a pure function of its
# event and the chain head, so a missing one is rebuilt, byte for byte.  An
# audit record without its event is never repaired.
@test "replay: with crash evidence, a missing last audit record is rebuilt" {
	five
	cp "$A" audit.orig
	sed -i '$d' "$A"
	cp "$FIX/session-writer-v1.json" "$(sdir)/.writer.json"
	verifies
	cmp "$A" audit.orig
	[ ! -e "$(sdir)/.writer.json" ]
}

@test "replay: with crash evidence, an audit record without its event fails closed" {
	five
	sed -i '$d' "$E"
	cp "$FIX/session-writer-v1.json" "$(sdir)/.writer.json"
	before=$(snapshot)
	run -65 --separate-stderr hw-session replay session-main
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: replay 'session-main': recovery refused: sequence 4: audit record has no session event: cannot recover" ]
	[ "$(snapshot)" = "$before" ]
}

# ---------------------------------------------------------------------------
# Interoperation with t/gen-session.py, written from the reference's rules
# alone: its store uses the reference's own line style (declared key order,
# raw UTF-8 including U+2028 and astral characters, 1e-7 floats), which is
# not canonical, so readers must re-canonicalize before hashing.

@test "gen-session.py: reproduces the reference's commit fixture byte for byte" {
	run -0 gen journal session-1 0 null 2026-08-02T12:00:00Z command.received '{"command_id":"command-1"}'
	[ "$output" = "$(cat "$FIX/session-commit-v1.json")" ]
}

@test "gen-session.py: its verifier accepts its own store and catches a forged minimization" {
	gen gen session-gen >/dev/null
	run -0 gen verify session-gen
	[ "$output" = "ok 22" ]
	jedit "$(sdir session-gen)/audit.jsonl" 2 'r["payload"]["content_chars"] += 1'
	gen forge-audit session-gen 1
	run -1 gen verify session-gen
	[[ "$output" == *"sequence 1: audit payload"*"our minimization gives"* ]]
}

@test "replay: a store written in the reference's style verifies and prints canonical events" {
	gen gen session-gen >expected.jsonl
	ev=$(sdir session-gen)/events.jsonl
	refute cmp -s "$ev" expected.jsonl
	grep -q $'\xe2\x80\xa8' "$ev"
	grep -q $'\xf0\x9f\x98\x80' "$ev"
	grep -q '1e-7' "$ev"
	run -0 --separate-stderr hw-session replay session-gen
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 22 ]
	[ "$output" = "$(cat expected.jsonl)" ]
	[ "$(printf '%s\n' "${lines[@]}" | gen canon)" = "$output" ]
	run -0 --separate-stderr hw-session show session-gen
	[ "$(field "$output" event_count)" = "22" ]
	[ "$(field "$output" title)" = $'Generated session \xe2\x9c\x93' ]
}

@test "hw-append: continues a chain written by gen-session.py, and both sides verify" {
	gen gen session-gen >expected.jsonl
	head=$(tail -n 1 "$(sdir session-gen)/audit.jsonl" | jq -r .event_hash)
	gen drafts | head -n 3 >three
	run -0 --separate-stderr hw-append --session session-gen <three
	[ "$stderr" = "" ]
	[ "$(jq -c -s '[.[].sequence]' <<<"$output")" = "[22,23,24]" ]
	[ "$(jq -r .previous_event_hash <<<"${lines[0]}")" = "$head" ]
	[ "$(jq -r .event_id <<<"${lines[0]}")" = "session-gen-event-000022" ]
	head23=$(sed -n 23p "$(sdir session-gen)/audit.jsonl" | jq -r .event_hash)
	[ "$(jq -r .previous_event_hash <<<"${lines[1]}")" = "$head23" ]
	run -0 --separate-stderr hw-session replay session-gen
	[ "${#lines[@]}" -eq 25 ]
	[ "$(printf '%s\n' "${lines[@]:0:22}")" = "$(cat expected.jsonl)" ]
	run -0 gen verify session-gen --canonical-from 22
	[ "$output" = "ok 25" ]
}

@test "hw-append: audit payloads match an independent minimization for every kind" {
	gen drafts >all
	[ "$(jq -r .kind all | sort -u | wc -l)" -eq 18 ]
	run -0 --separate-stderr hw-append --session session-kinds <all
	[ "${#lines[@]}" -eq "$(wc -l <all)" ]
	run -0 gen verify session-kinds --canonical-from 0
	[ "$output" = "ok $(wc -l <all)" ]
	run -0 hw-session replay session-kinds
}

# ---------------------------------------------------------------------------
# The reference's fixtures, and its .pending-commit.json journal

# fixture_session - session-1 in a store written by gen-session.py, with
# empty logs; sets E, A and J
fixture_session() {
	gen init session-1
	E=$(sdir session-1)/events.jsonl
	A=$(sdir session-1)/audit.jsonl
	J=$(sdir session-1)/.pending-commit.json
}

# recovered - replay of session-1 completes the fixture pair
recovered() {
	run -0 --separate-stderr hw-session replay session-1
	[ "$stderr" = "" ]
	[ "$output" = "$(cat "$FIX/session-event-v1.json")" ]
	[ ! -e "$J" ]
	[ ! -e "$(sdir session-1)/.writer.json" ]
	cmp "$A" "$FIX/audit-event-v1.json"
	[ "$(gen canon <"$E")" = "$(cat "$FIX/session-event-v1.json")" ]
	[ "$(wc -l <"$E")" -eq 1 ]
}

# journal_refused MESSAGE - replay of session-1 fails closed and leaves
# every file, the journal included, byte for byte as it was
journal_refused() {
	local before
	before=$(snapshot session-1)
	run -65 --separate-stderr hw-session replay session-1
	[ "$output" = "" ]
	[ "$(snapshot session-1)" = "$before" ]
	[ -e "$J" ]
	echo "stderr: $stderr"
	[ "$stderr" = "hw-session: replay 'session-1': $1" ]
}

@test "fixtures: a session built from the reference's event and audit record replays" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	before=$(snapshot session-1)
	run -0 --separate-stderr hw-session replay session-1
	[ "$stderr" = "" ]
	[ "$output" = "$(cat "$FIX/session-event-v1.json")" ]
	[ "$(snapshot session-1)" = "$before" ]
	run -0 --separate-stderr hw-session show session-1
	[ "$(field "$output" title)" = "Synthetic session" ]
	[ "$(field "$output" event_count)" = "1" ]
}

@test "journal: with neither line appended, replay completes the pair" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	recovered
	run -0 --separate-stderr hw-append --session session-1 <<<"$(drafts 1)"
	[ "$(jq -r .sequence <<<"$output")" = "1" ]
	run -0 gen verify session-1 --canonical-from 0
	[ "$output" = "ok 2" ]
}

@test "journal: with the audit line appended and the event missing, replay completes the pair" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	cp "$FIX/audit-event-v1.json" "$A"
	recovered
}

@test "journal: with the event line appended and the audit missing, replay completes the pair" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	cp "$FIX/session-event-v1.json" "$E"
	recovered
}

@test "journal: with both lines appended and the journal still present, replay removes it" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	recovered
}

@test "journal: with a partial audit line, replay completes the pair" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	head -c 50 "$FIX/audit-event-v1.json" >"$A"
	recovered
}

@test "journal: with a partial event line after the audit line, replay completes the pair" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	cp "$FIX/audit-event-v1.json" "$A"
	head -c 50 "$FIX/session-event-v1.json" >"$E"
	recovered
}

@test "journal: continuing a committed prefix at sequence 1 is completed" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	head=$(jq -r .event_hash "$FIX/audit-event-v1.json")
	gen journal session-1 1 "$head" 2026-08-02T12:00:01Z agent_message.emitted '{"content":"h\u00e9llo"}' >"$J"
	want=$(jq -c .session_event "$J" | gen canon)
	run -0 --separate-stderr hw-session replay session-1
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[1]}" = "$want" ]
	[ ! -e "$J" ]
	run -0 gen verify session-1 --canonical-from 1
	[ "$output" = "ok 2" ]
}

@test "journal: an edited event inside the journal fails closed and changes nothing" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	jedit "$J" 1 'r["session_event"]["payload"]["command_id"] = "command-2"'
	journal_refused "pending commit journal does not hold a corresponding pair for this session"
}

@test "journal: an edited event inside the journal fails closed after its audit line was appended" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	jedit "$J" 1 'r["session_event"]["payload"]["command_id"] = "command-2"'
	cp "$FIX/audit-event-v1.json" "$A"
	journal_refused "pending commit journal does not hold a corresponding pair for this session"
}

@test "journal: at sequence 0 while the logs already hold an unrelated record fails closed" {
	fixture_session
	gen journal session-1 0 null 2026-08-01T00:00:00Z command.received '{"command_id":"command-9"}' >other
	jq -c .session_event other >"$E"
	jq -c .audit_event other >"$A"
	run -0 hw-session replay session-1
	cp "$FIX/session-commit-v1.json" "$J"
	# the journal and the unrelated record are both sequence 0
	journal_refused "sequence 0: logs do not end with the pending pair"
}

@test "journal: a pending pair past the end of the logs fails closed" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	head=$(jq -r .event_hash "$FIX/audit-event-v1.json")
	gen journal session-1 2 "$head" 2026-08-02T12:00:01Z agent_message.emitted '{"content":"x"}' >"$J"
	journal_refused "sequence 2: pending commit is at the wrong position"
}

@test "journal: an event past the pending pair fails closed" {
	fixture_session
	cp "$FIX/session-commit-v1.json" "$J"
	cat "$FIX/session-event-v1.json" "$FIX/session-event-v1.json" >"$E"
	cp "$FIX/audit-event-v1.json" "$A"
	journal_refused "sequence 0: logs do not end with the pending pair"
}

@test "journal: a wrong previous hash at sequence 1 fails closed" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	gen journal session-1 1 "sha256:$(printf '0%.0s' {1..64})" 2026-08-02T12:00:01Z agent_message.emitted '{"content":"x"}' >"$J"
	journal_refused "sequence 1: pending commit does not follow the chain"
}

@test "journal: a corrupt committed event fails closed without repair" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	head=$(jq -r .event_hash "$FIX/audit-event-v1.json")
	gen journal session-1 1 "$head" 2026-08-02T12:00:01Z agent_message.emitted '{"content":"x"}' >"$J"
	jedit "$E" 1 'r["payload"]["command_id"] = "command-2"'
	journal_refused "sequence 0: audit session_event_hash does not match the session event"
}

@test "journal: a corrupt committed audit record fails closed without repair" {
	fixture_session
	cp "$FIX/session-event-v1.json" "$E"
	cp "$FIX/audit-event-v1.json" "$A"
	head=$(jq -r .event_hash "$FIX/audit-event-v1.json")
	gen journal session-1 1 "$head" 2026-08-02T12:00:01Z agent_message.emitted '{"content":"x"}' >"$J"
	sed -i 's/command-1/command-2/' "$A"
	journal_refused "sequence 0: audit event_hash does not match the record"
}

@test "journal: an unknown journal version fails closed" {
	fixture_session
	sed 's/session-commit.v1/session-commit.v9/' "$FIX/session-commit-v1.json" >"$J"
	journal_refused "unsupported persisted schema for session_commit: heartwood.session-commit.v9"
}

# ---------------------------------------------------------------------------
# Migration of the project-state marker, and unknown versions

@test "migration: replay reads a v1 state marker without rewriting it" {
	append_n 2
	echo '{"schema_version":"heartwood.project-state.v1"}' >.heartwood/state.json
	cp .heartwood/state.json v1
	verifies
	cmp .heartwood/state.json v1
	run -0 hw-session show session-main
	cmp .heartwood/state.json v1
}

@test "migration: hw-append rewrites a v1 state marker to the exact v2 marker" {
	append_n 2
	echo '{"schema_version":"heartwood.project-state.v1"}' >.heartwood/state.json
	run -0 --separate-stderr hw-append --session session-main <<<"$(drafts 1)"
	[ "$stderr" = "" ]
	cmp .heartwood/state.json "$FIX/project-state-v2.json"
	[ "$(stat -c %a .heartwood/state.json)" = 600 ]
	verifies
	[ "${#lines[@]}" -eq 3 ]
}

@test "migration: a v1 state marker with extra fields is refused without echoing them" {
	append_n 1
	echo '{"schema_version":"heartwood.project-state.v1","note":"HUNTER2-SECRET"}' >.heartwood/state.json
	cp .heartwood/state.json before
	run -65 --separate-stderr hw-append --session session-main <<<"$(drafts 1)"
	[ "$stderr" = "hw-append: unsupported persisted schema for project_state: heartwood.project-state.v1" ]
	run -65 --separate-stderr hw-session replay session-main
	[ "$stderr" = "hw-session: unsupported persisted schema for project_state: heartwood.project-state.v1" ]
	cmp .heartwood/state.json before
}

@test "migration: an unknown state version fails with 65 and does not echo content" {
	append_n 1
	echo '{"schema_version":"heartwood.project-state.v7","note":"HUNTER2-SECRET"}' >.heartwood/state.json
	before=$(snapshot)
	msg="unsupported persisted schema for project_state: heartwood.project-state.v7"
	run -65 --separate-stderr hw-session replay session-main
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: $msg" ]
	run -65 --separate-stderr hw-session show session-main
	[ "$stderr" = "hw-session: $msg" ]
	run -65 --separate-stderr hw-session list
	[ "$stderr" = "hw-session: $msg" ]
	run -65 --separate-stderr hw-append --session session-main <<<"$(drafts 1)"
	[ "$stderr" = "hw-append: $msg" ]
	[ "$(snapshot)" = "$before" ]
	grep -q HUNTER2 .heartwood/state.json
}

@test "migration: metadata.json with an unknown schema fails show with 65" {
	append_n 1
	jedit "$(sdir)/metadata.json" 1 'r["schema_version"] = "heartwood.session-metadata.v7"; r["title"] = "HUNTER2-SECRET"'
	run -65 --separate-stderr hw-session show session-main
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: '.heartwood/sessions/session-main/metadata.json': unsupported persisted schema for session_metadata: heartwood.session-metadata.v7" ]
	run -65 --separate-stderr hw-session rename session-main "New"
	[[ "$stderr" != *HUNTER2* ]]
}

@test "list: a session with an interrupted command is recovery-required, with the reason" {
	append_n 1
	interrupt c1
	append_n 1 session-b
	run -0 --separate-stderr hw-session list
	[ "$(jq -r 'select(.session_id == "session-main") | .status' <<<"$output")" = recovery-required ]
	[ "$(jq -r 'select(.session_id == "session-main") | .reason' <<<"$output")" = \
		"session 'session-main' has an interrupted command 'c1': it was accepted but never completed, and will not run again; continue in a new session" ]
	[ "$(jq -c 'select(.session_id == "session-b") | [.status, has("reason")]' <<<"$output")" = '["idle",false]' ]
	run -0 --separate-stderr hw-session show session-main
	[ "$(jq -r .status <<<"$output")" = recovery-required ]
}

@test "list: a tampered session gives the reason it fails verification" {
	five
	sed -i '3s/message 2/message X/' "$E"
	run -0 --separate-stderr hw-session list
	[ "$(jq -r .reason <<<"$output")" = "sequence 2: audit session_event_hash does not match the session event" ]
}
