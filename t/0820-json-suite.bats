#!/usr/bin/env bats
# The malformed-JSON corpus (t/json_suite.py, in the manner of
# JSONTestSuite) against the JSON Lines reader and parser: every accept
# case parses and survives the canonical round trip, every reject case is
# a clean error naming its line, the cases JSON leaves open do not crash,
# and the bounds (nesting deeper than 128, 100,000 nested arrays, a line
# over 8 MiB) are refused without exhausting the stack.  Then the same
# cases go through hw-append: a rejected line writes nothing.

load lib

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	python3 "$HW_ROOT/t/json_suite.py" suite
}

# verdicts: json_cli over the whole corpus, once, bounded in time
verdicts() {
	timeout 120 "$HW_ROOT/t/unit/json_cli" suite/*.json >verdicts
}

@test "json suite: the corpus is a real one" {
	[ "$(ls suite | grep -c '^y_')" -ge 60 ]
	[ "$(ls suite | grep -c '^n_')" -ge 100 ]
	[ "$(ls suite | grep -c '^i_')" -ge 10 ]
	[ "$(ls suite | grep -c '^b_')" -ge 5 ]
}

@test "json suite: every accept case parses and its canonical form is a fixed point" {
	verdicts
	bad=$(grep '^y_' verdicts | grep -v ' accept$' || true)
	[ -z "$bad" ] || { echo "$bad"; return 1; }
	[ "$(grep -c '^y_' verdicts)" -eq "$(ls suite | grep -c '^y_')" ]
}

@test "json suite: every reject case is a clean error naming its line" {
	verdicts
	bad=$(grep '^n_' verdicts | grep -v ' reject ' || true)
	[ -z "$bad" ] || { echo "$bad"; return 1; }
	[ "$(grep -c '^n_' verdicts)" -eq "$(ls suite | grep -c '^n_')" ]
	# each reason names the file and the line, or says the file ends badly
	bad=$(grep '^n_' verdicts | grep -Ev '^(n_[a-z0-9_A-Z]+\.json) reject \1(:[0-9]+:|: unterminated last line)' || true)
	[ -z "$bad" ] || { echo "$bad"; return 1; }
	grep -qx 'n_duplicate_key.json reject n_duplicate_key.json:1: duplicate key at byte [0-9]*' verdicts
	grep -q '^n_second_line_bad.json reject n_second_line_bad.json:2: ' verdicts
	grep -q '^n_utf8_raw_high_surrogate.json reject .*invalid UTF-8' verdicts
	grep -q '^n_exp_overflow.json reject .*number out of range' verdicts
}

@test "json suite: the cases JSON leaves open end in a verdict, never a crash" {
	verdicts
	[ "$(grep -c '^i_' verdicts)" -eq "$(ls suite | grep -c '^i_')" ]
	# escaped lone surrogates are kept (as the reference's json module
	# does) and written back as escapes; a byte order mark is refused
	grep -qx 'i_escape_lone_high_surrogate.json accept' verdicts
	grep -q '^i_bom.json reject ' verdicts
}

@test "json suite: nesting past 128 and 100,000 deep is refused without exhausting the stack" {
	verdicts
	for c in b_nested_arrays_129 b_nested_arrays_100000 b_nested_objects_100000 b_open_arrays_100000; do
		grep -q "^$c.json reject $c.json:1: nesting too deep at byte " verdicts ||
			{ grep "^$c" verdicts; return 1; }
	done
}

@test "json suite: a line over 8 MiB is refused as too long" {
	verdicts
	grep -qx 'b_line_over_8_mib.json reject b_line_over_8_mib.json:1: line longer than 8388608 bytes' verdicts
}

# single_line CASE: the case is exactly one newline-terminated line
single_line() { [ "$(tr -cd '\n' <"$1" | wc -c)" -eq 1 ] && [ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ]; }

@test "json suite: through hw-append, a rejected line writes nothing and an accepted one verifies" {
	append_n 1
	n=1 tried=0
	for f in suite/[ynib]_*.json; do
		single_line "$f" || continue
		# the draft's own two levels would take these past 128
		case ${f##*/} in b_line_over* | y_nested_128*) continue ;; esac
		{ printf '{"kind":"agent_message.emitted","payload":{"content":"case","data":'
		  head -c -1 "$f"; printf '}}\n'; } >draft
		before=$(snapshot)
		run --separate-stderr timeout 60 hw-append --session session-main <draft
		case ${f##*/} in
		y_*) [ "$status" -eq 0 ] || { echo "$f: $status $stderr"; return 1; }
			n=$((n + 1)) ;;
		n_* | b_*)
			[ "$status" -eq 65 ] || { echo "$f: $status $stderr"; return 1; }
			[[ $stderr == "hw-append: <stdin>:1: "* ]] || { echo "$f: $stderr"; return 1; }
			[ "$(snapshot)" = "$before" ] || { echo "$f: the store changed"; return 1; } ;;
		i_*) [ "$status" -eq 0 ] || [ "$status" -eq 65 ] || { echo "$f: $status"; return 1; }
			[ "$status" -eq 65 ] || n=$((n + 1)) ;;
		esac
		tried=$((tried + 1))
	done
	[ "$tried" -ge 150 ]
	run -0 hw-audit verify --session session-main
	[ "$(jq -r .event_count <<<"$output")" -eq "$n" ]
	# what was stored replays as it was committed
	hw-session replay session-main | cmp - "$(sdir)/events.jsonl"
}

@test "json suite: a draft over 8 MiB is refused before anything is written" {
	append_n 1
	before=$(snapshot)
	{ printf '{"kind":"agent_message.emitted","payload":{"content":"'
	  head -c $((9 << 20)) /dev/zero | tr '\0' x; printf '"}}\n'; } >big
	run -65 --separate-stderr hw-append --session session-main <big
	[[ $stderr == *"line longer than"* ]]
	[ "$(snapshot)" = "$before" ]
}
