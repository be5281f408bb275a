#!/usr/bin/env bats
# The contract every program in the Makefile's PROGS list keeps: help,
# usage errors, version, a man page whose SYNOPSIS matches the usage text,
# completions, a line in hw(7), and a loud failure when stdout is full.

load lib

progs() { sed -n 's/^PROGS = //p' "$HW_ROOT/Makefile"; }

@test "contract: the Makefile lists programs" {
	[ -n "$(progs)" ]
}

@test "contract: -h and --help print usage on stdout and exit 0" {
	for p in $(progs); do
		run --separate-stderr "$p" -h
		[ "$status" -eq 0 ] && [[ "$output" == usage:* ]] && [ -z "$stderr" ] || {
			echo "$p -h: $status"; return 1; }
		run --separate-stderr "$p" --help
		[ "$status" -eq 0 ] && [[ "$output" == usage:* ]] || { echo "$p --help"; return 1; }
	done
}

@test "contract: an unknown option exits 2 with usage on stderr only" {
	for p in $(progs); do
		run --separate-stderr "$p" --no-such-option
		[ "$status" -eq 2 ] && [ -z "$output" ] && [[ "$stderr" == *usage:* ]] || {
			echo "$p: $status '$output' '$stderr'"; return 1; }
	done
}

@test "contract: --version names the program and version" {
	for p in $(progs); do
		run -0 "$p" --version
		# heartwood adds what is implemented (and what is planned, if anything)
		[[ "${lines[0]}" =~ ^$p\ [0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "$output"; return 1; }
		[ "$p" = heartwood ] || [ "${#lines[@]}" -eq 1 ] || { echo "$output"; return 1; }
	done
}

@test "contract: every program has a man page whose SYNOPSIS matches its usage" {
	for p in $(progs); do
		page="$HW_ROOT/man/$p.1"
		[ -f "$page" ] || { echo "missing $page"; return 1; }
		for sec in NAME SYNOPSIS DESCRIPTION ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO"; do
			grep -q "^\.Sh $sec" "$page" || { echo "$page lacks $sec"; return 1; }
		done
		# the long options of the usage text are those of the SYNOPSIS,
		# each a whole flag, both ways (--help and --version are implied)
		usage=$("$p" -h | grep -o -- '--[a-z][a-z0-9-]*' | grep -vx -e --help -e --version | sort -u)
		syn=$(sed -n '/^\.Sh SYNOPSIS/,/^\.Sh DESCRIPTION/p' "$page" |
			grep -o 'Fl -[a-z][a-z0-9-]*' | sed 's/^Fl -/--/' | sort -u)
		[ "$usage" = "$syn" ] || { echo "$p: usage and SYNOPSIS differ"; diff <(echo "$usage") <(echo "$syn"); return 1; }
		grep -q "Xr $p 1" "$HW_ROOT/man/hw.7" || { echo "$p not in hw.7"; return 1; }
	done
}

@test "contract: every program has bash and zsh completions" {
	# generated from completions/spec/NAME; t/0020-completions.bats tests them
	for p in $(progs); do
		[ -f "$HW_ROOT/completions/spec/$p" ] && [ -f "$HW_ROOT/completions/$p.bash" ] &&
			[ -f "$HW_ROOT/completions/_$p" ] || { echo "completions for $p"; return 1; }
		bash -n "$HW_ROOT/completions/$p.bash"
	done
}

@test "contract: every program has a bats file" {
	for p in $(progs); do
		ls "$HW_ROOT"/t/[0-9][0-9][0-9][0-9]-"$p"*.bats >/dev/null || { echo "$p"; return 1; }
	done
}

@test "contract: output to a full device fails loudly" {
	for p in $(progs); do
		run -0 "$p" --version
		run --separate-stderr bash -c "$p --version >/dev/full"
		[ "$status" -ne 0 ] && [[ "$stderr" == "$p: cannot write 'stdout'"* ]] || {
			echo "$p: $status $stderr"; return 1; }
	done
	run --separate-stderr bash -c 'printf "%s\n" "{\"kind\":\"agent_message.emitted\"}" | hw-append --session s >/dev/full'
	[ "$status" -eq 74 ]
	run -74 --separate-stderr bash -c 'hw-session list >/dev/full'
	run -74 bash -c 'hw-session new >/dev/full'
}

@test "contract: the exit-code table in lib/base/base.h is the one in hw(7)" {
	lib=$(sed -n 's/^[[:space:]]*HW_EXIT_[A-Z]* = \([0-9]*\),.*/\1/p' "$HW_ROOT/lib/base/base.h")
	page=$(sed -n '/^\.Sh EXIT STATUS/,/^\.Sh /s/^\.It \([0-9]*\)$/\1/p' "$HW_ROOT/man/hw.7")
	[ "$lib" = "$(printf '%s\n' 0 1 2 64 65 66 69 70 72 73 74 75 130)" ]
	[ "$page" = "$lib" ]
}
