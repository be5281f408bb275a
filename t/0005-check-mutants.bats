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
LIST
	local rc=0
	"$HW_ROOT/mk/check-mutants" --list "$BATS_FILE_TMPDIR/list" \
		--only caught --only planted gone broken elsewhere here \
		>"$BATS_FILE_TMPDIR/out" 2>&1 || rc=$?
	echo "$rc" >"$BATS_FILE_TMPDIR/rc"
}

# verdict NAME - the line mk/check-mutants printed for mutation NAME
verdict() {
	grep -E "^((not )?ok|skip) - (stale mutation )?$1[: ]" "$BATS_FILE_TMPDIR/out"
}

@test "check-mutants: a run with a survivor exits 1 and counts each verdict" {
	cat "$BATS_FILE_TMPDIR/out"
	[ "$(cat "$BATS_FILE_TMPDIR/rc")" = 1 ]
	[ "$(tail -n 1 "$BATS_FILE_TMPDIR/out")" = "2 passed, 3 failed, 1 skipped" ]
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

@test "check-mutants: only the named mutations run" {
	run -1 verdict unrun
	[ "$output" = "" ]
	[ "$(grep -cE '^((not )?ok|skip) - ' "$BATS_FILE_TMPDIR/out")" = 6 ]
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
