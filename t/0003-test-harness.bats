#!/usr/bin/env bats
# The harness that make check runs: mk/run-tests fails on a unit binary
# that crashes, exits non-zero, bails out or prints fewer results than its
# plan, and reports skips with their reasons; mk/lint-bats refuses the two
# assertion forms that bats's errexit ignores.

load lib

# unit NAME BODY - a stand-in unit test binary (a shell script)
unit() {
	printf '#!/bin/sh\n%s\n' "$2" >"$1"
	chmod +x "$1"
}

# suite - a bats folder of one passing test and one skipped test
suite() {
	mkdir -p s
	printf '%s\n' 'load lib' '@test "fine" { true; }' \
		'@test "skipper" { skip "no tmpfs here"; }' >s/a.bats
	cp "$HW_ROOT/t/lib.bash" s/
}

@test "run-tests: a unit that passes counts its results, and skips are listed" {
	suite
	unit good 'echo "ok 1 - a"; echo "ok 2 - b"; echo 1..2'
	run --separate-stderr env -u CI SUITES=s "$HW_ROOT/mk/run-tests" good
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "3 passed, 0 failed, 1 skipped" ]
	[ "${lines[-2]}" = "#   skipper: no tmpfs here" ]
	[ "${lines[-3]}" = "# skipped, with the reasons:" ]
}

@test "run-tests: under CI a skip fails the run unless HW_ALLOW_SKIPS=1" {
	suite
	run --separate-stderr env CI=true SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "1 passed, 0 failed, 1 skipped" ]
	[ "$stderr" = "run-tests: 1 tests skipped under CI (HW_ALLOW_SKIPS=1 allows it)" ]
	run --separate-stderr env CI=true HW_ALLOW_SKIPS=1 SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 0 ]
}

# pair DIR - two files whose first tests each wait for the other's to have
# started: they pass only when the files run at the same time
pair() {
	mkdir -p s
	cp "$HW_ROOT/t/lib.bash" s/
	for me in a b; do
		other=$([ $me = a ] && echo b || echo a)
		printf '%s\n' 'load lib' \
			"@test \"$me waits for $other\" { touch \"$1/$me\"; for _ in \$(seq 100); do [ -e \"$1/$other\" ] && return 0; sleep 0.05; done; return 1; }" \
			"@test \"$me second\" { true; }" >s/$me.bats
	done
}

@test "run-tests: two bats files at a time, each one's tests in order, the results in file order" {
	pair "$PWD"
	run --separate-stderr env -u CI SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 0 ]
	[ "$(grep '^ok' <<<"$output")" = "ok 1 a waits for b
ok 2 a second
ok 3 b waits for a
ok 4 b second" ]
	[ "${lines[-1]}" = "4 passed, 0 failed, 0 skipped" ]
}

@test "run-tests: HW_TEST_JOBS=1 runs the files one at a time; a bad count is refused" {
	pair "$PWD"
	run --separate-stderr env -u CI HW_TEST_JOBS=1 SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "3 passed, 1 failed, 0 skipped" ]
	for bad in 0 x -1 2x; do
		run --separate-stderr env -u CI HW_TEST_JOBS=$bad SUITES=s "$HW_ROOT/mk/run-tests"
		[ "$status" -eq 2 ]
		[ "$stderr" = "run-tests: HW_TEST_JOBS must be a whole number of at least 1" ]
	done
}

@test "run-tests: a unit killed by a signal after its results fails" {
	suite
	unit segv 'echo "ok 1 - a"; echo 1..1; kill -SEGV $$'
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests" segv
	[ "$status" -eq 1 ]
	[[ $output == *"not ok - ./segv as a whole: killed by signal 11"* ]]
	[ "${lines[-1]}" = "2 passed, 1 failed, 1 skipped" ]
}

@test "run-tests: a unit that exits non-zero with every result ok fails" {
	suite
	unit exit3 'echo "ok 1 - a"; echo 1..1; exit 3'
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests" exit3
	[ "$status" -eq 1 ]
	[[ $output == *"not ok - ./exit3 as a whole: exit status 3"* ]]
	[ "${lines[-1]}" = "2 passed, 1 failed, 1 skipped" ]
}

@test "run-tests: a unit that bails out fails" {
	suite
	unit bail 'echo "ok 1 - a"; echo "Bail out! no directory"; echo 1..1'
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests" bail
	[ "$status" -eq 1 ]
	[[ $output == *"not ok - ./bail as a whole: bailed out"* ]]
}

@test "run-tests: a unit that prints fewer results than its plan fails" {
	suite
	unit short 'echo "ok 1 - a"; echo 1..3'
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests" short
	[ "$status" -eq 1 ]
	[[ $output == *"not ok - ./short as a whole: planned 3, ran 1"* ]]
}

@test "run-tests: a unit with no plan fails" {
	suite
	unit noplan 'echo "ok 1 - a"'
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests" noplan
	[ "$status" -eq 1 ]
	[[ $output == *"not ok - ./noplan as a whole: no plan"* ]]
}

@test "run-tests: a failing bats test fails the run" {
	suite
	printf '%s\n' '@test "broken" { false; }' >>s/a.bats
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "1 passed, 1 failed, 1 skipped" ]
}

@test "run-tests: a hollow assertion in a suite fails the run" {
	suite
	printf '%s\n' '@test "hollow" {' '	! true' '	true' '}' >>s/a.bats
	run --separate-stderr env SUITES=s "$HW_ROOT/mk/run-tests"
	[ "$status" -eq 1 ]
	[[ $output == *"s/a.bats:5: '! cmd' before the last statement"* ]]
	[[ $output == *"not ok - lint-bats s/*.bats: hollow assertions above"* ]]
}

# lint BODY... - mk/lint-bats over one test whose body is the lines given
lint() {
	{
		echo '@test "t" {'
		printf '%s\n' "$@"
		echo '}'
	} >x.bats
	run --separate-stderr "$HW_ROOT/mk/lint-bats" x.bats
}

@test "lint-bats: '! cmd' before the last statement is refused" {
	lint '	! grep -q key out' '	true'
	[ "$status" -eq 1 ]
	[ "$output" = "x.bats:2: '! cmd' before the last statement asserts nothing (use 'run !' or refute)" ]
}

@test "lint-bats: 'A && B' before the last statement is refused" {
	lint '	[ -e a ] && [ -e b ]' '	true'
	[ "$status" -eq 1 ]
	[ "$output" = "x.bats:2: 'A && B' before the last statement asserts only B (use if, or two lines)" ]
}

@test "lint-bats: a hollow form inside a loop body is refused" {
	lint '	for f in a b; do' '		[ -e "$f" ] && [ -s "$f" ]' '	done' '	true'
	[ "$status" -eq 1 ]
	[ "$output" = "x.bats:3: 'A && B' before the last statement asserts only B (use if, or two lines)" ]
}

@test "lint-bats: an '&&' list continued on the next line is one statement" {
	lint '	[ -e a ] &&' '		[ -e b ]' '	true'
	[ "$status" -eq 1 ]
	[ "$output" = "x.bats:2: 'A && B' before the last statement asserts only B (use if, or two lines)" ]
}

@test "lint-bats: the last statement, conditions, subshells and routed failures pass" {
	lint '	if ! grep -q a out && true; then :; fi' '	while ! [ -e a ]; do break; done' \
		'	(cd d && true)' '	[ -e a ] && [ -e b ] || { echo no; return 1; }' \
		'	for _ in 1 2; do [ -s out ] && break; done' "	run sh -c 'a && b'" \
		'	x=$(a && b)' '	[[ -e a && -e b ]]' '	run ! true' '	! true'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	lint '	[ -e a ] && [ -e b ]'
	[ "$status" -eq 0 ]
}

@test "lint-bats: quotes, here-documents and comments hide '&&' and '!'" {
	lint '	echo "a && b" '"'c && d'" '	cat <<EOF' 'x && y' '! z' 'EOF' \
		'	# a comment && ! not code' '	true'
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "lint-bats: the suites of this tree are clean" {
	run --separate-stderr "$HW_ROOT/mk/lint-bats" "$HW_ROOT"/t/*.bats
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}

@test "refute: fails when the command succeeds and passes when it fails" {
	run refute true
	[ "$status" -eq 1 ]
	[ "$output" = "refute: succeeded: true" ]
	run refute false
	[ "$status" -eq 0 ]
}

@test "jq -e: no input at all is no valid result (4), as in jq 1.7, not 0" {
	: >empty.json
	run jq -e .url empty.json
	[ "$status" -eq 4 ]
	[ -z "$output" ]
	run bash -c 'printf "" | jq -re .url'
	[ "$status" -eq 4 ]
	echo '{"url":"http://127.0.0.1:9/v1"}' >url.json
	run jq -re .url url.json
	[ "$status" -eq 0 ]
	[ "$output" = "http://127.0.0.1:9/v1" ]
	run jq -e .missing url.json
	[ "$status" -eq 1 ]
	[ "$output" = null ]
	run jq -r .url empty.json
	[ "$status" -eq 0 ]
	[ -z "$output" ]
}
