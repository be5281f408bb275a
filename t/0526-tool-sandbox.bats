#!/usr/bin/env bats
# The terminal tool's sandbox (lib/agent/tools/sandbox.c) under each back end the
# machine runs (HW_SANDBOX=bwrap, HW_SANDBOX=landlock), as root in CI: a
# command can write in the project and its temporary directory, but not
# outside the project, in .git or in .heartwood; it cannot read the
# agent's environment, reach a loopback listener, or signal the agent.
# Without a sandbox (HW_SANDBOX=none, or an unknown value) the first
# result says so and Low-Risk Automation is refused.

load lib
load agent

TOOL_CLI=${HW_TOOL_CLI:-$HW_ROOT/t/unit/tool_cli}

setup_file() {
	[ -n "${HW_TOOL_CLI-}" ] || make -s -C "$HW_ROOT" t/unit/tool_cli >/dev/null
}

setup() {
	agent_setup
	mkdir -p src .git/hooks .heartwood
	echo '[core]' >.git/config
	echo a >src/a.txt
	OUT=$(mktemp -d "${BATS_TMPDIR:-/tmp}/hw-outside.XXXXXX")
	LISTENER=
}

teardown() {
	if [ -n "$LISTENER" ]; then
		kill "$LISTENER" 2>/dev/null
		wait "$LISTENER" 2>/dev/null
	fi
	rm -rf "$OUT"
	agent_teardown
}

# sandboxed BACKEND CMD: run CMD through the terminal tool under BACKEND,
# with SECRET_X in the driver's environment (scrubbed for the tool) and
# the driver's pid in $OUT/agent.pid; $output is the call's output, $code
# its exit code.  Skips when the machine cannot run BACKEND.
sandboxed() {
	local line
	line=$(jq -cn --arg c "$2" '{name: "terminal", arguments: {command: $c, timeout: 20}}')
	run -0 --separate-stderr env HW_SANDBOX="$1" SECRET_X=sk-sandbox-3f9a HW_TOOL_SCRUB=SECRET_X \
		bash -c 'echo $$ >"$1"; exec "$2" "$3"' _ "$OUT/agent.pid" "$TOOL_CLI" "$PROJ" <<<"$line"
	code=$(jq -r .exit_code <<<"$output")
	output=$(jq -r .output <<<"$output")
	if [[ "$output" == "Note: the terminal runs without a sandbox ("* ]]; then
		skip "no $1 sandbox here: ${output%%$'\n'*}"
	fi
}

# listen: a loopback listener; its port in $PORT, "accepted" in
# $OUT/accepted once something connects
listen() {
	python3 -c 'import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(4)
open(sys.argv[1] + "/port.tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + "/port.tmp", sys.argv[1] + "/port")
c, _ = s.accept()
open(sys.argv[1] + "/accepted", "w").write("accepted")
' "$OUT" &
	LISTENER=$!
	for _ in $(seq 600); do [ -e "$OUT/port" ] && break; sleep 0.05; done
	PORT=$(cat "$OUT/port")
}

# ---- each attack, under each back end ----

write_outside() {
	sandboxed "$1" "echo x >$OUT/planted; echo after"
	[ ! -e "$OUT/planted" ]
	[[ "$output" == *"$OUT/planted: "*after* ]]
}
@test "bwrap: a write outside the project fails" { write_outside bwrap; }
@test "landlock: a write outside the project fails" { write_outside landlock; }

write_git_config() {
	sandboxed "$1" 'printf "\tfsmonitor = id\n" >>.git/config'
	[ "$(cat .git/config)" = '[core]' ]
	[ "$code" != 0 ]
}
@test "bwrap: a write to .git/config fails" { write_git_config bwrap; }
@test "landlock: a write to .git/config fails" { write_git_config landlock; }

write_git_hook() {
	sandboxed "$1" 'echo id >.git/hooks/pre-commit'
	[ ! -e .git/hooks/pre-commit ]
	[ "$code" != 0 ]
}
@test "bwrap: a new git hook fails" { write_git_hook bwrap; }
@test "landlock: a new git hook fails" { write_git_hook landlock; }

write_heartwood() {
	sandboxed "$1" 'echo x >.heartwood/config.toml'
	[ ! -e .heartwood/config.toml ]
	[ "$code" != 0 ]
}
@test "bwrap: a write to .heartwood fails" { write_heartwood bwrap; }
@test "landlock: a write to .heartwood fails" { write_heartwood landlock; }

read_agent_environ() {
	sandboxed "$1" "tr '\\0' '\\n' </proc/$(cat "$OUT/agent.pid" 2>/dev/null || echo 1)/environ; tr '\\0' '\\n' </proc/\$PPID/environ; echo read"
	[[ "$output" == *read ]]
	[[ "$output" != *sk-sandbox-3f9a* ]]
}
@test "bwrap: the agent's environment cannot be read, by pid or as \$PPID" {
	read_agent_environ bwrap
}
@test "landlock: the agent's environment cannot be read, by pid or as \$PPID" {
	read_agent_environ landlock
}

# the pid is only known once the driver runs: read it from inside
read_agent_environ_by_pid() {
	sandboxed "$1" "tr '\\0' '\\n' <\"/proc/\$(cat $OUT/agent.pid)/environ\"; echo read"
	[[ "$output" == *read ]]
	[[ "$output" != *sk-sandbox-3f9a* ]]
}
@test "bwrap: /proc/<agent pid>/environ cannot be read" {
	read_agent_environ_by_pid bwrap
}
@test "landlock: /proc/<agent pid>/environ cannot be read" {
	read_agent_environ_by_pid landlock
}

network() {
	listen
	sandboxed "$1" "exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected; echo tried"
	[[ "$output" == *tried ]]
	[[ "$output" != *connected* ]]
	[ ! -e "$OUT/accepted" ]
}
@test "bwrap: a loopback listener cannot be reached" { network bwrap; }
@test "landlock: a loopback listener cannot be reached" { network landlock; }

signal_agent() {
	sandboxed "$1" "kill -TERM \$(cat $OUT/agent.pid) && echo signalled; echo tried"
	[[ "$output" == *tried ]]
	[[ "$output" != *signalled* ]]
}
@test "bwrap: the agent cannot be signalled" { signal_agent bwrap; }
@test "landlock: the agent cannot be signalled" { signal_agent landlock; }

root_has_no_capabilities() {
	sandboxed "$1" 'grep CapEff /proc/self/status'
	[ "$output" = $'CapEff:\t0000000000000000' ]
}
@test "bwrap: no capabilities inside, as root too" { root_has_no_capabilities bwrap; }
@test "landlock: no capabilities inside, as root too" { root_has_no_capabilities landlock; }

project_writable() {
	sandboxed "$1" 'echo b >src/b.txt && echo t >"$TMPDIR/t" && cat "$TMPDIR/t" src/b.txt'
	[ "$output" = $'t\nb' ]
	[ "$(cat src/b.txt)" = b ]
}
@test "bwrap: the project and TMPDIR stay writable" { project_writable bwrap; }
@test "landlock: the project and TMPDIR stay writable" { project_writable landlock; }

@test "bwrap: a new name in the project's root can be made" {
	sandboxed bwrap 'echo n >new.txt && cat new.txt'
	[ "$output" = n ]
}

@test "bwrap: root inside cannot remount .git writable" {
	sandboxed bwrap 'mount -o remount,rw,bind .git 2>/dev/null; echo x >>.git/config; echo tried'
	[ "$(cat .git/config)" = '[core]' ]
}

# ---- without a sandbox ----

@test "no sandbox: the listener is reachable, so the network tests can fail" {
	listen
	run -0 --separate-stderr env HW_SANDBOX=none "$TOOL_CLI" "$PROJ" < <(jq -cn --arg c "exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected" '{name: "terminal", arguments: {command: $c}}')
	[[ "$(jq -r .output <<<"$output")" == *connected ]]
}

@test "no sandbox: HW_SANDBOX=none says so in the first result only" {
	run -0 --separate-stderr env HW_SANDBOX=none "$TOOL_CLI" "$PROJ" < <(jq -cn '{name: "terminal", arguments: {command: "echo one"}}, {name: "terminal", arguments: {command: "echo two"}}')
	[ "$(sed -n 1p <<<"$output" | jq -r .output)" = $'Note: the terminal runs without a sandbox (HW_SANDBOX=none).\none' ]
	[ "$(sed -n 2p <<<"$output" | jq -r .output)" = two ]
}

@test "no sandbox: an unknown HW_SANDBOX is no sandbox, and says which" {
	run -0 --separate-stderr env HW_SANDBOX=chroot "$TOOL_CLI" "$PROJ" < <(jq -cn '{name: "terminal", arguments: {command: "echo one"}}')
	note="Note: the terminal runs without a sandbox (unknown HW_SANDBOX 'chroot')."
	[ "$(jq -r .output <<<"$output")" = "$note"$'\none' ]
}

@test "no sandbox: Low-Risk Automation is refused with a notice, and the set waits" {
	low_actions
	serve turns.jsonl
	hw-agent mode auto-approve-low-risk >/dev/null
	chat c1 "look"
	HW_SANDBOX=none run -0 --separate-stderr hw-agent run session-main
	[ "$stderr" = "hw-agent: warning: the tools have no sandbox (HW_SANDBOX=none): Low-Risk Automation is off, every action set waits for review" ]
	[ ! -e notes.md ]
	[ "$(proj .lifecycle.status)" = '"waiting-for-confirmation"' ]
}

@test "no sandbox: the notice is recorded in the first terminal result" {
	low_actions
	echo '{"content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "look"
	hw-agent run session-main
	cmd d1 approve "{\"target_type\":\"action-set\",\"target_id\":\"$(hw-session project session-main | jq -r .pendingApproval.groupId)\"}" |
		hw-session command session-main >/dev/null
	HW_SANDBOX=none hw-agent run session-main
	[[ "$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded" and .payload.tool_name=="terminal" and .payload.result != null).payload.result')" == "Note: the terminal runs without a sandbox (HW_SANDBOX=none)."* ]]
}

# ---- the agent itself ----

@test "no sandbox: the agent is not dumpable, so its unprivileged user's tool cannot read its environ" {
	chmod 755 "$PROJ" "$OUT"
	line=$(jq -cn --arg c "cat /proc/\$(cat $OUT/agent.pid)/comm; tr '\\0' '\\n' <\"/proc/\$(cat $OUT/agent.pid)/environ\"; echo read" '{name: "terminal", arguments: {command: $c}}')
	run -0 --separate-stderr env HW_SANDBOX=none SECRET_X=sk-sandbox-3f9a HW_TOOL_SCRUB=SECRET_X \
		bash -c 'echo $$ >"$1"; exec setpriv --reuid=65534 --regid=65534 --clear-groups "$2" "$3"' _ "$OUT/agent.pid" "$TOOL_CLI" "$PROJ" <<<"$line"
	output=$(jq -r .output <<<"$output")
	[[ "$output" == *$'\ntool_cli\n'*read ]]
	[[ "$output" != *sk-sandbox-3f9a* ]]
}

@test "hw-agent: a reviewed command reading the agent's environ gets no key" {
	printf '%s\n' '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Environ","command":"tr \"\\0\" \"\\n\" < /proc/$PPID/environ; echo done","security_risk":"LOW"}}]}' '{"content":"ok"}' >turns.jsonl
	serve turns.jsonl
	export MY_KEY=sk-live-agent-77c1 HW_API_KEY_ENV=MY_KEY
	chat c1 "look"
	hw-agent run session-main
	cmd d1 approve "{\"target_type\":\"action-set\",\"target_id\":\"$(hw-session project session-main | jq -r .pendingApproval.groupId)\"}" |
		hw-session command session-main >/dev/null
	hw-agent run session-main
	result=$(hw-session replay session-main | jq -r 'select(.kind=="tool.execution.recorded" and .payload.result != null).payload.result')
	[[ "$result" == *done ]]
	[[ "$result" != *sk-live-agent-77c1* ]]
	[[ "$result" != *REDACTED* ]]
}
