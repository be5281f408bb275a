#!/usr/bin/env bats
# hw-append: no accepted draft makes a line that the readers refuse.  The
# readers take lines of up to 8388608 bytes (JSONL_LINE_MAX); the event
# line a draft becomes is longer than the draft (its envelope), so the
# writer checks the committed line: the largest draft makes a line exactly
# at the bound that reads back and verifies, one byte more is refused with
# 65 and nothing written, for a session and for a standalone log.

load lib

BOUND=8388608

# note_draft KIND KEY N: a draft whose payload holds KEY: N bytes of x
note_draft() {
	python3 -c 'import sys; k, key, n = sys.argv[1], sys.argv[2], int(sys.argv[3]); sys.stdout.write("{\"kind\":\"%s\",\"payload\":{\"%s\":\"%s\"}}\n" % (k, key, "x" * n))' "$1" "$2" "$3"
}

big() { note_draft agent_message.emitted content "$1"; }

# probe: two small events, so that the next one (sequence 2) has an
# envelope as long as the second's; ROOM is the content that fills a line
probe() {
	big 1 | hw-append --session session-main >/dev/null
	big 1 | hw-append --session session-main >probe.jsonl
	ROOM=$((BOUND - ($(wc -c <probe.jsonl) - 1) + 1))
}

# last_len FILE: the length of FILE's last line, without its newline
last_len() { tail -n 1 "$1" | head -c -1 | wc -c; }

@test "hw-append bound: the largest draft makes an event line of exactly 8388608 bytes that reads back" {
	probe
	big "$ROOM" | hw-append --session session-main >ack.jsonl
	[ "$(last_len "$(sdir)/events.jsonl")" -eq "$BOUND" ]
	[ "$(head -c -1 ack.jsonl | wc -c)" -eq "$BOUND" ]
	run -0 hw-audit verify --session session-main
	[ "$(hw-session replay session-main | tail -n 1 | jq -r '.payload.content | length')" -eq "$ROOM" ]
	hw-audit export --session session-main --output export.jsonl >/dev/null
	[ "$(wc -l <export.jsonl)" -eq 4 ]
}

@test "hw-append bound: one byte more is refused with 65, naming the bound, and nothing is written" {
	probe
	snapshot >before
	run -65 --separate-stderr hw-append --session session-main < <(big $((ROOM + 1)))
	[ "$stderr" = "hw-append: refusing event 2 of session 'session-main': its event line would be 8388609 bytes, longer than the 8388608 bytes readers take" ]
	[ -z "$output" ]
	snapshot >after
	cmp before after
	run -0 hw-audit verify --session session-main
	[ "$(hw-session replay session-main | wc -l)" -eq 2 ]
}

@test "hw-append bound: the 8,388,601-byte draft that used to break the session is refused" {
	empty=$(big 0 | head -c -1 | wc -c)
	big $((8388601 - empty)) >draft.jsonl
	[ "$(head -c -1 draft.jsonl | wc -c)" -eq 8388601 ]
	run -65 --separate-stderr hw-append --session session-main <draft.jsonl
	[[ "$stderr" == "hw-append: refusing event 0 of session 'session-main': its event line would be "*" bytes, longer than the 8388608 bytes readers take" ]]
	[ ! -s "$(sdir)/events.jsonl" ]
	run -0 hw-session replay session-main
	[ -z "$output" ]
}

@test "hw-append bound: in a batch the drafts before the refused one are committed, none after" {
	probe
	{ big 1; big $((ROOM + 1)); big 1; } >batch.jsonl
	run -65 --separate-stderr hw-append --session session-main <batch.jsonl
	[ "${#lines[@]}" -eq 1 ]
	[ "$(jq -r .sequence <<<"${lines[0]}")" = 2 ]
	[[ "$stderr" == "hw-append: refusing event 3 of session 'session-main': "* ]]
	[ "$(hw-session replay session-main | wc -l)" -eq 3 ]
	run -0 hw-audit verify --session session-main
}

@test "hw-append bound: a draft refused in a batch read while the one before it is written" {
	# 1024 drafts fill the first batch; the second (76 drafts and the
	# refused one) is read and built while the first is written
	probe
	{ drafts 1100; big $((ROOM + 1)); big 1; } >stream.jsonl
	run -65 --separate-stderr hw-append --session session-main <stream.jsonl
	[ "${#lines[@]}" -eq 1100 ]
	[ "$(jq -r .sequence <<<"${lines[1099]}")" = 1101 ]
	[[ "$stderr" == "hw-append: refusing event 1102 of session 'session-main': "* ]]
	[ "$(hw-session replay session-main | wc -l)" -eq 1102 ]
	run -0 hw-audit verify --session session-main
}

# log_probe: as probe, for the standalone log logs/x.jsonl
log_probe() {
	mkdir -p logs
	note_draft k note 1 | hw-append --file logs/x.jsonl >/dev/null
	note_draft k note 1 | hw-append --file logs/x.jsonl >probe.jsonl
	ROOM=$((BOUND - ($(wc -c <probe.jsonl) - 1) + 1))
}

@test "hw-append bound: a standalone log takes a record line of exactly 8388608 bytes and reads it back" {
	log_probe
	note_draft k note "$ROOM" | hw-append --file logs/x.jsonl >/dev/null
	[ "$(last_len logs/x.jsonl)" -eq "$BOUND" ]
	# the next append verifies the whole chain, the long line included
	run -0 hw-append --file logs/x.jsonl < <(note_draft k note 1)
	[ "$(wc -l <logs/x.jsonl)" -eq 4 ]
}

@test "hw-append bound: a standalone record one byte over is refused with 65 and the log is unchanged" {
	log_probe
	cp logs/x.jsonl before.jsonl
	run -65 --separate-stderr hw-append --file logs/x.jsonl < <(note_draft k note $((ROOM + 1)))
	[ "$stderr" = "hw-append: refusing record 2 of 'logs/x.jsonl': its line would be 8388609 bytes, longer than the 8388608 bytes readers take" ]
	cmp before.jsonl logs/x.jsonl
	[ ! -e logs/.x.jsonl.pending ]
	run -0 hw-append --file logs/x.jsonl < <(note_draft k note 1)
}

# audit_probe: as probe, for a draft whose audit record is longer than its
# event (a tool_call.proposed holding only a tool_name, which the audit
# record keeps, beside three hashes)
audit_probe() {
	tool() { note_draft tool_call.proposed tool_name "$1"; }
	tool 1 | hw-append --session session-main >/dev/null
	tool 1 | hw-append --session session-main >/dev/null
	ROOM=$((BOUND - $(tail -n 1 "$(sdir)/audit.jsonl" | head -c -1 | wc -c) + 1))
}

@test "hw-append bound: an audit record line of exactly 8388608 bytes is accepted, verifies and proves" {
	audit_probe
	tool "$ROOM" | hw-append --session session-main >/dev/null
	[ "$(last_len "$(sdir)/audit.jsonl")" -eq "$BOUND" ]
	run -0 hw-audit verify --session session-main
	hw-audit prove inclusion --session session-main 2 >proof.json
	[ "$(jq -r '.record.payload.tool_name | length' proof.json)" -eq "$ROOM" ]
}

@test "hw-append bound: a draft whose audit record line would be one byte over is refused" {
	audit_probe
	snapshot >before
	run -65 --separate-stderr hw-append --session session-main < <(tool $((ROOM + 1)))
	[ "$stderr" = "hw-append: refusing event 2 of session 'session-main': its audit line would be 8388609 bytes, longer than the 8388608 bytes readers take" ]
	snapshot >after
	cmp before after
}
