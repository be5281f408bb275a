#!/usr/bin/env bats
# The mutation check (mk/check-mutants, make check-mutants) on a list of
# seven mutations of lib/base/json.c, six of them named to run: one its test
# catches passes; one no test can catch (it changes a comment) is named
# SURVIVED and fails the run; one whose text is not in the file is stale;
# one that does not compile is reported as such, not as caught; one for a
# CPU flag no CPU has is skipped, and one whose second cpu: line names a
# flag of this CPU runs.  The run
# copies and builds the tree, so it happens once, in setup_file, and each
# test reads its line.

load lib

setup_file() {
	# a flag this CPU has
	local flag
	flag=$(sed -n 's/^\(flags\|Features\)[[:space:]]*: *\([^ ]*\).*/\2/p' \
		/proc/cpuinfo | head -n 1)
	[ -n "$flag" ]
	cat >"$BATS_FILE_TMPDIR/list" <<LIST
# mutations of lib/base/json.c against its unit test
name: caught
file: lib/base/json.c
from: buf_adds(b, signbit(d) ? "-0.0" : "0.0");
to: buf_adds(b, "0.0");
test: t/unit/json_test

name: planted
file: lib/base/json.c
from: /* ---- canonical encoding ---- */
to: /* ---- canonical encoding, changed ---- */
test: t/unit/json_test

name: gone
file: lib/base/json.c
from: text that is nowhere in the file
to: anything
test: t/unit/json_test

name: broken
file: lib/base/json.c
from: buf_adds(b, signbit(d) ? "-0.0" : "0.0");
to: buf_adds(b, signbit(d) ? "-0.0" : "0.0")
test: t/unit/json_test

name: unrun
file: lib/base/json.c
from: if (e < -4 || e >= 16)
to: if (e < -4 || e >= 17)
test: t/unit/json_test

name: elsewhere
file: lib/base/json.c
from: buf_adds(b, signbit(d) ? "-0.0" : "0.0");
to: buf_adds(b, "0.0");
cpu: hw_no_such_flag
test: t/unit/json_test

name: here
file: lib/base/json.c
from: buf_adds(b, signbit(d) ? "-0.0" : "0.0");
to: buf_adds(b, "0.0");
cpu: hw_no_such_flag $flag
cpu: hw_no_such_flag_either $flag
cpu: $flag
test: t/unit/json_test

name: floors-bound
file: mk/check-floors
from: if n > 1000:
to: if n > 1001:
test: t/0006-floors.bats the tree as built
test: t/0006-floors.bats over 1,000 lines

name: unmatched
file: lib/base/json.c
from: buf_adds(b, signbit(d) ? "-0.0" : "0.0");
to: buf_adds(b, "0.0");
test: t/0006-floors.bats no test is named this
LIST
	local rc=0 kept
	HW_KEEP_MUTANTS=1 "$HW_ROOT/mk/check-mutants" \
		--list "$BATS_FILE_TMPDIR/list" \
		--only caught --only planted gone broken elsewhere here \
		floors-bound unmatched \
		>"$BATS_FILE_TMPDIR/out" 2>"$BATS_FILE_TMPDIR/err" || rc=$?
	echo "$rc" >"$BATS_FILE_TMPDIR/rc"
	# the log of every test run, from the scratch directory kept for it
	kept=$(sed -n 's/^check-mutants: kept //p' "$BATS_FILE_TMPDIR/err")
	cp "$kept/mutants.log" "$BATS_FILE_TMPDIR/log"
	rm -rf "$kept"
}

# verdict NAME - the line mk/check-mutants printed for mutation NAME
verdict() {
	grep -E "^((not )?ok|skip) - (stale mutation )?$1[: ]" "$BATS_FILE_TMPDIR/out"
}

@test "check-mutants: a run with a survivor exits 1 and counts each verdict" {
	cat "$BATS_FILE_TMPDIR/out" "$BATS_FILE_TMPDIR/err"
	[ "$(cat "$BATS_FILE_TMPDIR/rc")" = 1 ]
	[ "$(tail -n 1 "$BATS_FILE_TMPDIR/out")" = "3 passed, 4 failed, 1 skipped" ]
}

@test "check-mutants: a mutation its test catches passes" {
	run -0 verdict caught
	[ "$output" = "ok - caught: caught by t/unit/json_test" ]
}

@test "check-mutants: a planted mutation no test catches is named SURVIVED" {
	run -0 verdict planted
	[ "$output" = "not ok - planted: SURVIVED t/unit/json_test" ]
}

@test "check-mutants: a mutation whose text is not in the file is stale" {
	run -0 verdict gone
	[ "$output" = "not ok - stale mutation gone: its text occurs 0 times in lib/base/json.c" ]
}

@test "check-mutants: a mutation that does not compile is its own error" {
	run -0 verdict broken
	[ "$output" = "not ok - broken: the mutated lib/base/json.c does not compile" ]
}

@test "check-mutants: a mutation for CPUs without this one's flag is skipped" {
	run -0 verdict elsewhere
	[ "$output" = "skip - elsewhere: this CPU lacks hw_no_such_flag" ]
}

@test "check-mutants: a mutation runs where one of its cpu: lines is met" {
	run -0 verdict here
	[ "$output" = "ok - here: caught by t/unit/json_test" ]
}

@test "check-mutants: an empty cpu: line is refused" {
	printf 'name: x\nfile: lib/base/json.c\ncpu: \n' >bad
	run -2 --separate-stderr "$HW_ROOT/mk/check-mutants" --list bad
	[ "$output" = "" ]
	[ "$stderr" = "check-mutants: $PROJ/bad:3: an empty 'cpu'" ]
}

@test "check-mutants: the specs of one bats file run, unmutated, in one run that checks each" {
	run -0 verdict floors-bound
	[ "$output" = "ok - floors-bound: caught by t/0006-floors.bats over 1,000 lines" ]
	run -0 grep '^\$ bats t/0006-floors.bats -f .(' "$BATS_FILE_TMPDIR/log"
	[ "$output" = "\$ bats t/0006-floors.bats -f '(no test is named this)|(over 1,000 lines)|(the tree as built)'" ]
}

@test "check-mutants: a bats spec that selects no test is broken, and so is its mutation" {
	run -0 grep -F "not ok - test 't/0006-floors.bats no test is named this' runs no test on the unmutated tree" "$BATS_FILE_TMPDIR/out"
	run -0 verdict unmatched
	[ "$output" = "not ok - unmatched: its test 't/0006-floors.bats no test is named this' is broken (above)" ]
}

@test "check-mutants: only the named mutations run" {
	run -1 verdict unrun
	[ "$output" = "" ]
	[ "$(grep -cE '^((not )?ok|skip) - [a-z]+-?[a-z]*: ' "$BATS_FILE_TMPDIR/out")" = 7 ]
}

@test "check-mutants: an unknown mutation name is a usage error" {
	run -2 --separate-stderr "$HW_ROOT/mk/check-mutants" \
		--list "$BATS_FILE_TMPDIR/list" nosuch
	[ "$output" = "" ]
	[ "$stderr" = "check-mutants: no mutation 'nosuch' in '$BATS_FILE_TMPDIR/list'" ]
}

@test "check-mutants: a list line that is not key: value is refused" {
	printf 'name: x\nfile lib/base/json.c\n' >bad
	run -2 --separate-stderr "$HW_ROOT/mk/check-mutants" --list bad
	[ "$output" = "" ]
	[ "$stderr" = "check-mutants: $PROJ/bad:2: unknown line 'file lib/base/json.c'" ]
}
