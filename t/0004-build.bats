#!/usr/bin/env bats
# The build: the package install of mk/ensure-deps finishes before anything
# compiles, under make -j2 as well.  The tests run make in a copy of the
# build files with a stand-in ensure-deps (it sleeps, then leaves a marker)
# and a stand-in compiler that fails unless the marker is there, so no
# package is installed or removed.

load lib

# tree - the build files, a stand-in ensure-deps and a stand-in compiler
tree() {
	mkdir -p b/mk b/t/unit
	cp "$HW_ROOT/Makefile" b/
	dst=$PWD/b
	(cd "$HW_ROOT" && find lib cmd -name '*.[ch]' -print0 |
		xargs -0 cp --parents -t "$dst")
	cp "$HW_ROOT"/t/unit/*.c "$HW_ROOT"/t/unit/*.h b/t/unit/
	cp "$HW_ROOT/t/iofault.c" b/t/
	cat >b/mk/ensure-deps <<'SH'
#!/bin/sh
sleep 1
echo "$@" >>deps.done
SH
	cat >b/fakecc <<'SH'
#!/bin/sh
[ -f deps.done ] || { echo "fakecc: compiled before the packages" >&2; exit 1; }
while [ $# -gt 0 ]; do
	[ "$1" = -o ] && { touch "$2"; exit 0; }
	shift
done
exit 1
SH
	chmod +x b/mk/ensure-deps b/fakecc
}

@test "build: make -j2 installs the packages before it compiles anything" {
	tree
	run make -C b -j2 CC=./fakecc AR=true
	echo "$output"
	[ "$status" -eq 0 ]
	[ -f b/deps.done ]
	[ -f b/hw ]
	[ -f b/lib/base/json.o ]
}

@test "build: make -j2 check installs build and test packages before it compiles, one install at a time" {
	tree
	printf '#!/bin/sh\nexit 0\n' >b/mk/run-tests
	cp b/mk/run-tests b/mk/check-floors
	cp b/mk/run-tests b/mk/ensure-browser
	chmod +x b/mk/run-tests b/mk/check-floors b/mk/ensure-browser
	run make -C b -j2 CC=./fakecc AR=true check
	[ "$status" -eq 0 ]
	[ -f b/t/unit/json_test ]
	run cat b/deps.done
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == gcc* ]]
	[[ "${lines[1]}" == bats* ]]
}
