#!/usr/bin/env bats
# The floors of lib/ (lib/floors): mk/check-floors, run by make check,
# fails on a call or an include that goes up or sideways, on a cycle
# between two files, on a file outside every floor and on a source over
# 1,000 lines.  Each test plants one breach in a copy of the built lib/.

load lib

# copy - the built lib/ (sources, objects, the table) under ./lib
copy() {
	cp -r "$HW_ROOT/lib" lib
}

# plant FILE CODE - a C file of the copy and its object
plant() {
	printf '%s\n' "$2" >"lib/$1"
	cc -c -o "lib/${1%.c}.o" "lib/$1"
}

@test "floors: the tree as built passes" {
	run --separate-stderr "$HW_ROOT/mk/check-floors" "$HW_ROOT/lib"
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
}

@test "floors: a call from base up to session is refused" {
	copy
	plant base/planted.c 'int session_settle(void); int planted(void) { return session_settle(); }'
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: base/planted.c calls session_settle of session/views.c: floor base may not use floor session" ]
}

@test "floors: a sideways call from inspect to the agent is refused" {
	copy
	plant inspect/planted.c 'int agent_run(void); int planted(void) { return agent_run(); }'
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: inspect/planted.c calls agent_run of agent/agent.c: floor inspect may not use floor agent" ]
}

@test "floors: a call down the table passes" {
	copy
	plant session/planted.c 'void buf_init(void *); void planted(void *b) { buf_init(b); }'
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 0 ]
	[ "$stderr" = "" ]
}

@test "floors: an include of a higher floor's header is refused" {
	copy
	printf '#include "base/base.h"\n#include "tui/tui.h"\n' >lib/store/planted.h
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: store/planted.h:2 includes tui/tui.h: floor store may not use floor tui" ]
}

@test "floors: an include of a folder that is no floor is refused" {
	copy
	printf '#include "nowhere/x.h"\n' >lib/base/planted.h
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: base/planted.h:1 includes nowhere/x.h, which is no floor" ]
}

@test "floors: two files of one floor calling each other are a cycle" {
	copy
	plant base/ping.c 'int pong(int); int ping(int n) { return n ? pong(n - 1) : 0; }'
	plant base/pong.c 'int ping(int); int pong(int n) { return n ? ping(n - 1) : 1; }'
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: cycle between base/ping.c, base/pong.c" ]
}

@test "floors: a source over 1,000 lines is refused, 1,000 pass" {
	copy
	yes '/* a line */' | head -1000 >lib/base/long.h
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 0 ]
	echo '/* one more */' >>lib/base/long.h
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: base/long.h has 1001 lines (at most 1,000)" ]
}

@test "floors: a file outside every floor is refused" {
	copy
	mkdir lib/stray
	plant stray/x.c 'int stray(void) { return 0; }'
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: stray/x.c: not in a floor of lib/floors" ]
}

@test "floors: a source without its object is an error, not a pass" {
	copy
	echo 'int unbuilt(void) { return 0; }' >lib/base/unbuilt.c
	run --separate-stderr "$HW_ROOT/mk/check-floors" lib
	[ "$status" -eq 1 ]
	[ "$stderr" = "check-floors: not built: base/unbuilt.o (run make first)" ]
}
