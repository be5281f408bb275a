#!/usr/bin/env bats
# hw-agent's control socket: while a run owns the session, hw-session
# command reaches it through the run, which applies the command under its
# own lease between steps.  A pause stops the run at the next boundary
# without another model call; guidance reaches the next model call, after
# the results of the set it arrived during; an unavailable command is
# recorded as not applied; garbage gets an error line; the socket is 0600,
# removed at the end, and a dead run's socket is left to the next owner.

load lib
load agent

setup() {
	agent_setup
	AGENT_PID=
}

teardown() {
	[ -n "$AGENT_PID" ] && kill -9 "$AGENT_PID" 2>/dev/null
	if [ -n "${MARK:-}" ]; then
		for p in $(pgrep -f "^$MARK"); do kill "$p"; done
	fi
	agent_teardown
}

sock() { echo "$(sdir)/control.sock"; }

# slow_set [MORE]: a set whose first member runs until the test lets it
# go (it touches "started", then waits for "go", 60 s at most), then MORE
# members (it writes, so it is never low risk: start approves it)
slow_set() {
	printf '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Wait","command":"touch started; for i in $(seq 1200); do [ -e go ] \u0026\u0026 break; sleep 0.05; done","security_risk":"LOW"}}%s]}\n' "$1" >turns.jsonl
}

# start: the set proposed and approved, then the run in the background,
# once its slow member is running
start() {
	hw-agent run session-main >/dev/null 2>agent.err || { cat agent.err; return 1; }
	cmd d1 approve "{\"target_type\":\"action-set\",\"target_id\":\"$(hw-session project session-main | jq -r .pendingApproval.groupId)\"}" |
		hw-session command session-main >/dev/null
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 200); do [ -e started ] && return 0; sleep 0.05; done
	echo "the slow member never started"; cat agent.err; return 1
}

# finish_run: lets the slow member go; the run's exit status
finish_run() {
	local rc=0
	touch go
	wait "$AGENT_PID" || rc=$?
	AGENT_PID=
	return $rc
}

turns() { grep -c 'turn [0-9]*/[0-9]*: 200' model.err; }

# raw TEXT: send TEXT on the socket as it is and print the answer line
raw() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode())
sys.stdout.write(s.makefile().readline())' "$(sock)" "$1"
}

@test "control: a pause during a run is applied by the run, which stops paused without another model call" {
	slow_set
	echo '{"content":"never asked for"}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "wait a little"
	start
	[ -S "$(sock)" ]
	[ "$(stat -c %a "$(sock)")" = 600 ]
	run -0 --separate-stderr hw-session command session-main < <(cmd p1 pause '{}')
	[ "$(jq -c '[.events[].kind]' <<<"$output")" = '["command.received","session.paused"]' ]
	finish_run
	[ "$(turns)" -eq 1 ]
	[ "$(proj '[.lifecycle.status, .availableCommands, [.actions[].state]]')" = \
		'["paused",["chat","resume"],["succeeded"]]' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="agent.lifecycle.updated").payload.status' | tail -1)" = '"paused"' ]
	[ ! -e "$(sock)" ]
	# a new run while paused does nothing; after resume it continues
	run -0 hw-agent run session-main
	[ "$(turns)" -eq 1 ]
	cmd r1 resume '{}' | hw-session command session-main >/dev/null
	run -0 hw-agent run session-main
	[ "$(turns)" -eq 2 ]
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["idle","never asked for"]' ]
	hw-audit verify --session session-main >/dev/null
}

@test "control: guidance during a set reaches the next model call, after the set's results" {
	slow_set ',{"id":"b","name":"terminal","arguments":{"summary":"Say two","command":"echo two","security_risk":"LOW"}}'
	# the guidance must be the last message the model sees
	echo '{"expect":"GUIDANCE-5e1\",\"role\":\"user\"}],\"","content":"Taking it into account."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "wait a little"
	start
	run -0 --separate-stderr hw-session command session-main < <(cmd g1 chat '{"prompt":"GUIDANCE-5e1"}')
	[ "$(jq -c '[.events[].kind]' <<<"$output")" = '["command.received","user_message.recorded"]' ]
	finish_run
	[ "$(turns)" -eq 2 ]
	[ "$(proj '[.lifecycle.status, [.actions[].state], .conversation[-1].content]')" = \
		'["idle",["succeeded","succeeded"],"Taking it into account."]' ]
	hw-audit verify --session session-main >/dev/null
}

@test "control: an unavailable command through the run is recorded as not applied, exit 1" {
	slow_set
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "wait a little"
	start
	run -1 --separate-stderr hw-session command session-main < <(cmd r1 resume '{}')
	[ "$(jq -c '[.events[].kind, .events[-1].payload.reason]' <<<"$output")" = \
		'["command.received","error.recorded","resume is unavailable while the agent is running"]' ]
	[ -z "$stderr" ]
	finish_run
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["idle","Done."]' ]
}

@test "control: a connection sending garbage gets an error line and the run goes on" {
	slow_set
	echo '{"content":"Done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "wait a little"
	start
	run -0 raw $'garbage\n'
	[ "$(jq -c '[.code, (.error | startswith("command line: "))]' <<<"$output")" = '[65,true]' ]
	finish_run
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["idle","Done."]' ]
	[ ! -e "$(sock)" ]
}

@test "control: the socket of a killed run is stale; commands take the lease, the next run replaces it" {
	slow_set
	serve turns.jsonl
	chat c1 "wait a little"
	start
	kill -9 "$AGENT_PID"; wait "$AGENT_PID" || true; AGENT_PID=
	[ -S "$(sock)" ]
	run -0 --separate-stderr hw-session command session-main < <(cmd g1 chat '{"prompt":"still there?"}')
	[ "$(jq -c '[.events[].kind]' <<<"$output")" = '["command.received","user_message.recorded"]' ]
	[ -S "$(sock)" ]
	run -1 --separate-stderr hw-agent run session-main
	[[ "$stderr" == "hw-agent: HW-AGENT-006: "* ]]
	[ ! -e "$(sock)" ]
}

@test "control: a stale socket while another process holds the lease is still 75" {
	chat c1 "hello"
	python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$(sock)"
	exec 9>"$(sdir)/.writer.lock"
	flock -n 9
	before=$(snapshot)
	run -75 --separate-stderr env HW_LEASE_WAIT_S=0 hw-session command session-main < <(cmd g1 chat '{"prompt":"hello"}')
	exec 9>&-
	[[ "$stderr" == "hw-session: command line 1: session 'session-main' is busy"* ]]
	[ "$(snapshot)" = "$before" ]
}

@test "control: a pause that a finished run outlived does not hold later runs" {
	echo '{"expect":"again","content":"Here again."}' >turns.jsonl
	serve turns.jsonl
	chat c1 "hello"
	{ draft agent.lifecycle.updated '{"status":"running"}'
	  draft session.paused '{"command_id":"p1"}'
	  draft agent.lifecycle.updated '{"status":"finished"}'; } |
		hw-append --session session-main >/dev/null
	chat c2 "again"
	run -0 hw-agent run session-main
	[ "$(proj '[.lifecycle.status, .conversation[-1].content]')" = '["idle","Here again."]' ]
}

# ---- the tools die with the agent ----

# orphan_case SIG: a run whose member starts a process named $MARK that
# would sleep 300 s; once it runs, the agent gets SIG, and the process
# must be gone within 10 s
orphan_case() {
	MARK="hw-orphan-$BATS_TEST_NUMBER-$$"
	printf '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Sleep","command":"(exec -a %s sleep 300)","security_risk":"LOW"}}]}\n' "$MARK" >turns.jsonl
	serve turns.jsonl
	chat c1 "sleep"
	hw-agent run session-main >/dev/null
	decide_directly approve
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 200); do pgrep -f "^$MARK" >/dev/null && break; sleep 0.05; done
	pgrep -f "^$MARK" >/dev/null || { echo "the member never started"; cat agent.err; return 1; }
	kill -"$1" "$AGENT_PID"
	wait "$AGENT_PID" || true
	AGENT_PID=
	for _ in $(seq 200); do pgrep -f "^$MARK" >/dev/null || break; sleep 0.05; done
	refute pgrep -f "^$MARK"
}

@test "kill: TERM to the agent ends the running command's processes" {
	orphan_case TERM
}

@test "kill: HUP to the agent ends the running command's processes" {
	orphan_case HUP
}

@test "kill: KILL to the agent ends the running command's processes" {
	orphan_case KILL
}

# bubblewrap's --die-with-parent alone would end them; the guard must do
# it under the other confinements as well
@test "kill: KILL to the agent ends the running command's processes under Landlock" {
	HW_SANDBOX=landlock orphan_case KILL
}

@test "kill: KILL to the agent ends the running command's processes with no sandbox" {
	HW_SANDBOX=none orphan_case KILL
}

# ---- a model that only keeps the connection alive ----

# keepalive: a model server on loopback that answers every request with
# an event stream of ": keep-alive" comments, one every 0.2 s, for 120 s,
# and touches "asked" once a request came
keepalive() {
	python3 -c '
import http.server, socket, sys, time
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        open("asked", "w").close()
        end = time.monotonic() + 120
        try:
            while time.monotonic() < end:
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
' >ka.port 2>ka.err 3>&- &
	MODEL_PID=$!
	for _ in $(seq 200); do [ -s ka.port ] && break; sleep 0.05; done
	export HW_BASE_URL="http://127.0.0.1:$(cat ka.port)/v1"
}

@test "pause: applied while the model sends only keep-alive comments, and the run ends paused" {
	keepalive
	chat c1 "think long"
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 400); do [ -e asked ] && break; sleep 0.05; done
	[ -e asked ]
	# a generous deadline, not a timing assertion: unfixed, the owner
	# answers only when the model call ends, 120 s later
	run -0 --separate-stderr timeout 60 hw-session command session-main < <(cmd p1 pause '{}')
	[ "$(jq -c '[.events[].kind]' <<<"$output")" = '["command.received","session.paused"]' ]
	for _ in $(seq 600); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	refute kill -0 "$AGENT_PID"
	wait "$AGENT_PID"
	AGENT_PID=
	[ "$(proj '.lifecycle.status')" = '"paused"' ]
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="error.recorded")' | wc -l)" = 0 ]
}

@test "control: a client whose owner never answers gives up with a clear message, and nothing is applied" {
	hw-session create session-main >/dev/null 2>&1 || append_n 1
	# an owner that holds the lease and accepts, but never answers
	python3 -c '
import fcntl, socket, sys, time
d = sys.argv[1]
lk = open(d + "/.writer.lock", "a")
fcntl.flock(lk, fcntl.LOCK_EX)
s = socket.socket(socket.AF_UNIX)
s.bind(d + "/control.sock")
s.listen(4)
print("ready", flush=True)
cs = []
end = time.monotonic() + 120
while time.monotonic() < end:
    c, _ = s.accept()
    cs.append(c)
' "$(sdir)" >owner.out 2>owner.err &
	AGENT_PID=$!
	for _ in $(seq 200); do grep -q ready owner.out && break; sleep 0.05; done
	grep -q ready owner.out
	snapshot >before
	run -75 --separate-stderr env HW_CONTROL_WAIT_S=1 timeout 60 hw-session command session-main < <(cmd p1 pause '{}')
	[ "$stderr" = "hw-session: command line 1: the agent that owns session 'session-main' did not answer within 1 s (it answers between steps, and a tool may still be running): the command was not applied; try again" ] || { echo "$stderr"; return 1; }
	[ "$(snapshot)" = "$(cat before)" ]
}

@test "control: a command whose client gave up waiting is not applied when the run reaches it" {
	MARK="hw-busy-$BATS_TEST_NUMBER-$$"
	printf '{"tool_calls":[{"id":"a","name":"terminal","arguments":{"summary":"Sleep","command":"(exec -a %s sleep 60)","security_risk":"LOW"}}]}\n{"content":"done"}\n' "$MARK" >turns.jsonl
	serve turns.jsonl
	chat c1 "sleep"
	hw-agent run session-main >/dev/null
	decide_directly approve
	hw-agent run session-main >agent.out 2>agent.err &
	AGENT_PID=$!
	for _ in $(seq 200); do pgrep -f "^$MARK" >/dev/null && break; sleep 0.05; done
	pgrep -f "^$MARK" >/dev/null
	# the run serves while its member runs: stopped, it cannot answer
	kill -STOP "$AGENT_PID"
	run -75 --separate-stderr env HW_CONTROL_WAIT_S=1 hw-session command session-main < <(cmd p1 pause '{}')
	kill -CONT "$AGENT_PID"
	[[ "$stderr" == *"did not answer within 1 s"* ]]
	for p in $(pgrep -f "^$MARK"); do kill "$p"; done
	for _ in $(seq 600); do kill -0 "$AGENT_PID" 2>/dev/null || break; sleep 0.1; done
	wait "$AGENT_PID"
	AGENT_PID=
	[ "$(hw-session replay session-main | jq -c 'select(.kind=="session.paused")' | wc -l)" = 0 ]
	[ "$(proj '.lifecycle.status')" = '"idle"' ]
}
