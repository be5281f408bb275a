# heartwood - a research coding agent as a suite of small programs.
#
# Adding a program: cmd/NAME.c, man/NAME.1, t/NNNN-NAME.bats, a line in
# man/hw.7, its name in PROGS below, and completions/spec/NAME, from which
# 'make completions' writes completions/NAME.bash and completions/_NAME
# (commit them).  t/0001-contract.bats and t/0020-completions.bats fail
# when one is missing or a completion is out of date.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share/heartwood
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
# the notebook bridge: the package is installed in DATADIR/python, and a
# heartwood.pth in PYSITEDIR puts that on the system python3's path (Debian
# reads /usr/lib/python3/dist-packages for PREFIX /usr and
# /usr/local/lib/python3.N/dist-packages for /usr/local); empty: no .pth
PYSITEDIR ?= $(shell /usr/bin/python3 -c 'import sys; \
	print("$(PREFIX)/lib/python3/dist-packages" if "$(PREFIX)" == "/usr" \
	else "$(PREFIX)/lib/python3.%d/dist-packages" % sys.version_info[1])' \
	2>/dev/null)

PROGS = hw-append hw-audit hw-session hw-model hw-agent hw-inspect hw-serve hw-skill hw heartwood

CC ?= cc
CFLAGS ?= -O2 -g
override CFLAGS += -std=c11 -pthread -D_GNU_SOURCE -Wall -Wextra -Wshadow \
	-Wstrict-prototypes -Wmissing-prototypes -Wno-missing-field-initializers \
	-Wformat=2 -Ilib -MMD -MP
ifdef CI
override CFLAGS += -Werror
endif
LDLIBS = -lcrypto -lsodium -lcurl -lmicrohttpd -lgit2 -larchive

BUILD_DEPS = gcc make libc6-dev libssl-dev libsodium-dev openssl libcurl4-openssl-dev libmicrohttpd-dev libgit2-dev libncurses-dev libarchive-dev \
	libjs-markdown-it node-dompurify libjs-codemirror
TEST_DEPS = bats parallel jq python3 python3-cryptography python3-websockets faketime sqlite3 curl zsh tmux iproute2 procps bubblewrap \
	python3-nbclient python3-ipykernel python3-nbformat python3-ipywidgets

# lib/ is in floors, one folder each (lib/floors says which floor may use
# which); a program's own code lives beside its main in cmd/NAME/
LIBSRC = $(wildcard lib/*/*.c lib/*/*/*.c)
LIBOBJ = $(LIBSRC:.c=.o)
CMDSRC = $(wildcard cmd/*/*.c)
CMDOBJ = $(CMDSRC:.c=.o)
# the programs' code but their mains, for the unit tests (cmd/libcmd.a)
CMDLIBOBJ = $(filter-out $(foreach p,$(PROGS),cmd/$(p)/$(p).o),$(CMDOBJ))
# test drivers built beside the unit tests but not run as TAP suites
TESTBINS = t/unit/tool_cli t/unit/json_cli
UNITS = $(filter-out $(TESTBINS), \
	$(patsubst t/unit/%.c,t/unit/%,$(wildcard t/unit/*.c)))

all: deps-build $(PROGS)

deps-build:
	@mk/ensure-deps $(BUILD_DEPS)

# deps-test after deps-build, so two installs never run at once
deps-test: deps-build
	@mk/ensure-deps $(TEST_DEPS)

# nothing compiles before the packages are in (order-only, so the phony
# step does not make every object out of date), under make -j2 as well
$(LIBOBJ) $(CMDOBJ) $(PROGS) $(UNITS) $(TESTBINS) t/iofault.so: | deps-build

lib/libhw.a: $(LIBOBJ)
	rm -f $@
	$(AR) rcs $@ $(LIBOBJ)

cmd/libcmd.a: $(CMDLIBOBJ)
	rm -f $@
	$(AR) rcs $@ $(CMDLIBOBJ)

# each object's headers, as the compiler found them (-MMD)
-include $(LIBOBJ:.o=.d) $(CMDOBJ:.o=.d) $(UNITS:=.d) $(TESTBINS:=.d)
# the full-screen terminal (pkg-config --libs ncursesw)
heartwood: LDLIBS += -lncursesw -ltinfo
# the store's writer and reader take nothing from libcrypto but SHA-256:
# its few objects go into them from libssl-dev's libcrypto.a, since loading
# the whole shared library (its relocations) costs each run about a
# millisecond, as much as a batch's sync; every verifier and signer keeps
# the shared one, and its security updates
hw-append hw-session: LDLIBS = -Wl,-Bstatic -lcrypto -Wl,-Bdynamic -lsodium

# a program is its folder's objects and the library
.SECONDEXPANSION:
$(PROGS): $$(patsubst %.c,%.o,$$(wildcard cmd/$$@/*.c)) lib/libhw.a
	$(CC) $(CFLAGS) -o $@ $(filter %.o,$^) lib/libhw.a $(LDLIBS)

$(UNITS) $(TESTBINS): %: %.c cmd/libcmd.a lib/libhw.a
	$(CC) $(CFLAGS) -It/unit -Icmd -o $@ $< cmd/libcmd.a lib/libhw.a \
		$(LDLIBS)

# the LD_PRELOAD shim of the disk-full and I/O-error tests (t/0810)
t/iofault.so: t/iofault.c
	$(CC) -O2 -g -Wall -Wextra -shared -fPIC -o $@ $< -ldl

# the browser suite's Chromium and npm packages (t/0770)
deps-browser: deps-test
	@mk/ensure-browser

# what the bats files run: the programs, the test drivers, the I/O shim
test-programs: all $(TESTBINS) t/iofault.so

check: deps-test deps-browser test-programs $(UNITS)
	@mk/check-floors
	@mk/run-tests $(UNITS)

check-sanitize: deps-test
	@mk/check-sanitize

# the mutation check: each mutation in t/mutants removes one guard of the
# code in a scratch copy of the tree, which is rebuilt, and the tests the
# entry names must fail; a guard added to the code gets its entry there
check-mutants: deps-test
	@mk/check-mutants

FUZZ_SECONDS = 10
fuzz: deps-build
	@mk/ensure-deps clang
	@mk/fuzz $(FUZZ_SECONDS) "$(LDLIBS)"

demo: all
	@mk/ensure-deps jq
	@sh mk/demo

bench: all
	@mk/ensure-deps sqlite3 jq libarchive-tools
	bench/append
	bench/replay
	bench/verify
	bench/project
	bench/agent
	bench/inspect
	bench/command
	bench/serve
	bench/skill
	bench/model

# bash and zsh completions from completions/spec/; they are committed, so
# only this target needs python3
completions:
	mk/completions $(PROGS)

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man7 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(PROGS) $(DESTDIR)$(BINDIR)/
	for p in $(PROGS); do \
		install -m 644 man/$$p.1 $(DESTDIR)$(MANDIR)/man1/; \
		sed "s|^__heartwood_datadir=\$$|__heartwood_datadir='$(DATADIR)'|" \
			completions/$$p.bash >$(DESTDIR)$(BASHCOMPDIR)/$$p && \
		chmod 644 $(DESTDIR)$(BASHCOMPDIR)/$$p || exit 1; \
		sed "s|^local __heartwood_datadir=\$$|local __heartwood_datadir='$(DATADIR)'|" \
			completions/_$$p >$(DESTDIR)$(ZSHCOMPDIR)/_$$p && \
		chmod 644 $(DESTDIR)$(ZSHCOMPDIR)/_$$p || exit 1; \
	done
	install -m 644 man/hw-store.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 644 man/hw.7 man/heartwood-notebook.7 man/hw-policy.7 \
		$(DESTDIR)$(MANDIR)/man7/
	cd share && find . -name __pycache__ -prune -o -type d -print | \
	while read -r d; do \
		mkdir -p "$(DESTDIR)$(DATADIR)/$$d" || exit 1; \
	done && find . -name __pycache__ -prune -o -type f -print | \
	while read -r f; do \
		install -m 644 "$$f" "$(DESTDIR)$(DATADIR)/$$f" || exit 1; \
	done
	if [ -n "$(PYSITEDIR)" ]; then \
		mkdir -p $(DESTDIR)$(PYSITEDIR) && \
		echo "$(DATADIR)/python" >$(DESTDIR)$(PYSITEDIR)/heartwood.pth && \
		chmod 644 $(DESTDIR)$(PYSITEDIR)/heartwood.pth; \
	fi

uninstall:
	for p in $(PROGS); do \
		rm -f $(DESTDIR)$(BINDIR)/$$p $(DESTDIR)$(MANDIR)/man1/$$p.1 \
		$(DESTDIR)$(BASHCOMPDIR)/$$p $(DESTDIR)$(ZSHCOMPDIR)/_$$p; \
	done
	rm -f $(DESTDIR)$(MANDIR)/man5/hw-store.5 $(DESTDIR)$(MANDIR)/man7/hw.7 \
		$(DESTDIR)$(MANDIR)/man7/heartwood-notebook.7 \
		$(DESTDIR)$(MANDIR)/man7/hw-policy.7
	if [ -n "$(PYSITEDIR)" ]; then \
		rm -f $(DESTDIR)$(PYSITEDIR)/heartwood.pth; \
	fi
	cd share && find . -name __pycache__ -prune -o -type f -print | \
	while read -r f; do \
		rm -f "$(DESTDIR)$(DATADIR)/$$f"; \
	done && find "$(DESTDIR)$(DATADIR)" -name __pycache__ -prune \
		-exec rm -rf {} + 2>/dev/null; \
	find . -depth -mindepth 1 -type d | while read -r d; do \
		rmdir "$(DESTDIR)$(DATADIR)/$$d" 2>/dev/null || :; \
	done
	rmdir $(DESTDIR)$(DATADIR) 2>/dev/null || :

clean:
	rm -f $(PROGS) $(LIBOBJ) $(CMDOBJ) lib/libhw.a cmd/libcmd.a \
		$(UNITS) $(TESTBINS) $(LIBOBJ:.o=.d) $(CMDOBJ:.o=.d) \
		$(UNITS:=.d) $(TESTBINS:=.d)

.PHONY: deps-browser all check check-sanitize check-mutants completions fuzz demo bench install uninstall clean deps-build deps-test
