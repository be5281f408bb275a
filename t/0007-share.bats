#!/usr/bin/env bats
# The data directory, share/: the programs find it beside themselves (the
# build tree's share/, an installed or DESTDIR-staged
# PREFIX/share/heartwood) or in HW_DATADIR; the agent reads its prompts
# there once a run and refuses to run without one; make install and
# uninstall put it in place and take it away; the demo and the templates
# come from it.  The shared bash completion helper: t/0020.

load lib
load agent

setup() {
	agent_setup
	unset HW_DATADIR
}

teardown() { agent_teardown; }

# rejected_set: session-main with a set the researcher rejected, through
# the replay model, which is then stopped
rejected_set() {
	two_actions
	serve turns.jsonl
	chat c1 "record a run"
	hw-agent run session-main >/dev/null
	decide_directly deny
	kill "$MODEL_PID"
	wait "$MODEL_PID" 2>/dev/null || true
	MODEL_PID=
}

# datadir: a copy of the build tree's share/ in ./data, without the
# bundled skills and specialists (the system prompt is then the file's)
datadir() { cp -R "$HW_ROOT/share" data && rm -r data/skills data/specialists; }

# staged: make install into the DESTDIR ./stage with PREFIX /usr, from
# the build tree, as a packager would (no jobserver of an outer make)
staged() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$HW_ROOT" install \
	    DESTDIR="$PROJ/stage" PREFIX=/usr >make.out 2>&1 ||
		{ cat make.out; return 1; }
}

@test "share: the prompt files are the prompts heartwood always sent, byte for byte, one line each" {
	# the digests of the prompts as they were C strings in agent.c: a
	# change here changes what every model is told, on purpose only
	for f in system.txt:fec7afffecb67afdf06e6687b51c34a1a82ff030d10705951183e1fcada56786 \
	    rejected.txt:265cc3bb16caa68b598f1e663d1e8fdc262d76c5f3826c396eeef82cd223d8bc \
	    condense.txt:6e792bca15b15fbc112a7bb5e78c3a5d751d1910a0a029f510d00c686b0ad7cc; do
		p=$HW_ROOT/share/prompts/${f%%:*}
		[ "$(wc -l <"$p")" -eq 1 ]
		[ "$(tail -c 1 "$p" | od -An -c | tr -d ' ')" = '\n' ]
		[ "$(head -c -1 "$p" | sha256sum | cut -d' ' -f1)" = "${f#*:}" ]
	done
}

@test "share: in the build tree the agent sends the prompts of share/prompts" {
	rejected_set
	capture
	run -0 --separate-stderr hw-agent run session-main
	[ "$(wc -l <requests.jsonl)" -eq 1 ]
	[ "$(sent '.[0].role')" = system ]
	# exactly each file's text without its final newline, then the
	# bundled skills of share/skills
	want=$(jq -Rs '.[:-1]' "$HW_ROOT/share/prompts/system.txt")
	[ "$(sent ".[0].content | startswith($want)")" = true ]
	[[ "$(sent '.[0].content')" == *"## Skill reproducible-analysis (repository-reviewed, tree sha256:"*"Files: $HW_ROOT/share/skills/reproducible-analysis/"* ]]
	run -0 sent '[.[] | select(.role == "tool") | .content | @json] | unique[]'
	[ "$output" = "$(jq -Rs '.[:-1]' "$HW_ROOT/share/prompts/rejected.txt")" ]
	[ "$(proj '.conversation[-1].content')" = '"Noted."' ]
}

@test "share: HW_DATADIR with other prompts changes what the agent sends; a final newline is not part of a prompt" {
	rejected_set
	datadir
	printf 'SYSTEM-FROM-HW-DATADIR  two spaces kept.\n' >data/prompts/system.txt
	printf 'REJECTED-FROM-HW-DATADIR, no final newline' >data/prompts/rejected.txt
	capture
	HW_DATADIR=$PROJ/data run -0 --separate-stderr hw-agent run session-main
	[ "$(sent '.[0].content | @json')" = '"SYSTEM-FROM-HW-DATADIR  two spaces kept."' ]
	run -0 sent '[.[] | select(.role == "tool") | .content | @json] | unique[]'
	[ "$output" = '"REJECTED-FROM-HW-DATADIR, no final newline"' ]
	refute grep -q 'You are heartwood' requests.jsonl
}

@test "share: a missing prompt is a clear error with exit 69, before anything is recorded or sent" {
	rejected_set
	capture
	for f in system.txt rejected.txt condense.txt; do
		rm -rf data
		datadir
		rm "data/prompts/$f"
		snapshot >before
		HW_DATADIR=$PROJ/data run -69 --separate-stderr hw-agent run session-main
		[ -z "$output" ]
		[ "$stderr" = "hw-agent: cannot read prompt '$PROJ/data/prompts/$f': No such file or directory" ]
		snapshot >after
		diff -u before after
		[ ! -e requests.jsonl ]
	done
}

@test "share: an empty prompt, a directory or a data directory that is not there is the same error" {
	datadir
	chat c1 "hello"
	: >data/prompts/condense.txt
	snapshot >before
	HW_DATADIR=$PROJ/data run -69 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: cannot read prompt '$PROJ/data/prompts/condense.txt': the prompt is empty" ]
	printf '\n' >data/prompts/condense.txt
	HW_DATADIR=$PROJ/data run -69 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: cannot read prompt '$PROJ/data/prompts/condense.txt': the prompt is empty" ]
	rm data/prompts/system.txt
	mkdir data/prompts/system.txt
	HW_DATADIR=$PROJ/data run -69 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: cannot read prompt '$PROJ/data/prompts/system.txt': not a regular file" ]
	HW_DATADIR=$PROJ/nowhere run -69 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: cannot read prompt '$PROJ/nowhere/prompts/system.txt': No such file or directory" ]
	snapshot >after
	diff -u before after
}

@test "share: a program copied away from its data directory names where it looked" {
	mkdir -p elsewhere/bin
	cp "$HW_ROOT/hw-agent" elsewhere/bin/
	chat c1 "hello"
	run -69 --separate-stderr elsewhere/bin/hw-agent run session-main
	# the program's own path, as the kernel resolved it
	[ "$stderr" = "hw-agent: cannot read prompt '$(pwd -P)/elsewhere/share/heartwood/prompts/system.txt': No such file or directory" ]
	# beside it as in the build tree, share/ is found
	datadir
	mv data elsewhere/bin/share
	printf 'BESIDE-THE-PROGRAM\n' >elsewhere/bin/share/prompts/system.txt
	capture
	run -0 --separate-stderr elsewhere/bin/hw-agent run session-main
	[ "$(sent '.[0].content')" = BESIDE-THE-PROGRAM ]
}

@test "share: make install into a DESTDIR stages the programs, the data directory and completions that name it" {
	staged
	run -0 stage/usr/bin/heartwood --version
	[[ "$output" == "heartwood 0.1.0"* ]]
	for f in $(cd "$HW_ROOT/share" && find . -type f); do
		cmp "$HW_ROOT/share/$f" "stage/usr/share/heartwood/$f"
	done
	[ -f stage/usr/share/heartwood/prompts/system.txt ]
	[ -f stage/usr/share/heartwood/completion/heartwood-helper.bash ]
	[ -f stage/usr/share/heartwood/completion/heartwood-helper.zsh ]
	[ -f stage/usr/share/heartwood/demo/turns.jsonl ]
	[ -f stage/usr/share/heartwood/templates/config.toml ]
	run -0 grep -x "__heartwood_datadir='/usr/share/heartwood'" \
	    stage/usr/share/bash-completion/completions/hw
	# nothing else of the completion changed
	run diff "$HW_ROOT/completions/hw.bash" stage/usr/share/bash-completion/completions/hw
	[ "$status" -eq 1 ]
	[ "$(grep -c '^[<>]' <<<"$output")" -eq 2 ]
	run -0 grep -x "local __heartwood_datadir='/usr/share/heartwood'" \
	    stage/usr/share/zsh/site-functions/_hw
	run diff "$HW_ROOT/completions/_hw" stage/usr/share/zsh/site-functions/_hw
	[ "$status" -eq 1 ]
	[ "$(grep -c '^[<>]' <<<"$output")" -eq 2 ]
}

@test "share: make install into a DESTDIR, then the staged hw-agent reads the staged prompts" {
	staged
	printf 'STAGED-SYSTEM-PROMPT\n' >stage/usr/share/heartwood/prompts/system.txt
	mkdir p
	cd p
	chat c1 "hello"
	capture
	run -0 --separate-stderr "$PROJ/stage/usr/bin/hw-agent" run session-main
	# the staged prompt, then the staged bundled skill
	[ "$(sent '.[0].content | startswith("STAGED-SYSTEM-PROMPT\n\nActive skills")')" = true ]
	[[ "$(sent '.[0].content')" == *"Files: $(cd "$PROJ" && pwd -P)/stage/usr/share/heartwood/skills/reproducible-analysis/"* ]]
	rm "$PROJ/stage/usr/share/heartwood/prompts/system.txt"
	chat c2 "again"
	run -69 --separate-stderr "$PROJ/stage/usr/bin/hw-agent" run session-main
	[ "$stderr" = "hw-agent: cannot read prompt '$(cd "$PROJ" && pwd -P)/stage/usr/share/heartwood/prompts/system.txt': No such file or directory" ]
}

@test "share: make uninstall removes what make install put there, and only that" {
	staged
	mkdir -p stage/usr/share/heartwood-other
	: >stage/usr/share/heartwood-other/keep
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$HW_ROOT" \
	    uninstall DESTDIR="$PROJ/stage" PREFIX=/usr >make.out 2>&1
	[ ! -e stage/usr/share/heartwood ]
	run -0 find stage -type f
	[ "$output" = stage/usr/share/heartwood-other/keep ]
}

@test "share: an installed bash or zsh completion sources the installed helper and completes" {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$HW_ROOT" install \
	    PREFIX="$PROJ/usr" >make.out 2>&1
	run -0 bash --norc --noprofile -c 'shopt -s extdebug
		source usr/share/bash-completion/completions/hw-agent
		declare -F __heartwood_complete
		COMP_WORDS=(hw-agent mode a)
		COMP_CWORD=2
		_hw_agent hw-agent a mode
		printf "%s\n" "${COMPREPLY[@]}"'
	[[ "${lines[0]}" == "__heartwood_complete "[0-9]*" $PROJ/usr/share/heartwood/completion/heartwood-helper.bash" ]]
	[ "${lines[1]}" = ask-every-time ]
	[ "${lines[2]}" = auto-approve-low-risk ]
	command -v zsh >/dev/null || skip "zsh is not installed"
	# zsh loads it as the completion system does, from fpath
	run -0 zsh -f -c 'zmodload zsh/parameter
		_wanted() { shift 3; "$@"; }
		compadd() { shift $(($# - 2)); print -rl -- "$@"; }
		fpath=("$1" $fpath)
		autoload -Uz _hw-agent
		words=(hw-agent mode "")
		CURRENT=3
		_hw-agent
		print -r -- $functions_source[__heartwood_complete]' \
	    z "$PROJ/usr/share/zsh/site-functions"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]} ${lines[1]}" = "ask-every-time auto-approve-low-risk" ]
	[ "${lines[2]}" = "$PROJ/usr/share/heartwood/completion/heartwood-helper.zsh" ]
}

@test "share: mk/demo starts from share/demo's project and turns" {
	mkdir -p tree/mk
	cp "$HW_ROOT/mk/demo" tree/mk/
	cp -R "$HW_ROOT/share" tree/share
	sed -i 's/I will look at the file and compute/FROM-SHARE-DEMO: I will compute/' \
	    tree/share/demo/turns.jsonl
	run -0 --separate-stderr sh tree/mk/demo
	[[ "$output" == *"agent: FROM-SHARE-DEMO: I will compute the mean score."* ]]
	# the next turn expects the mean of share/demo's results/run-3.csv
	[[ "$output" == *"Mean score 72.50 over 5 participants"* ]]
}

@test "share: the templates are accepted as they are" {
	hw-agent mode ask-every-time >/dev/null
	cp "$HW_ROOT/share/templates/config.toml" .heartwood/config.toml
	chmod 600 .heartwood/config.toml
	run -0 --separate-stderr hw-agent mode
	[ "$output" = '{"confirmation_mode":"always-confirm","mode":"ask-every-time"}' ]
	[ -z "$stderr" ]
	cp "$HW_ROOT/share/templates/checkpoint-signers.toml" reg.toml
	chmod 600 reg.toml
	HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY=$PROJ/reg.toml \
	    run -0 --separate-stderr hw-audit signer list
	[ "$(jq -r .profile_id <<<"$output" | paste -sd ' ')" = "production local-development" ]
}
