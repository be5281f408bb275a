#!/usr/bin/env bats
# t/0210-hw-session-follow.bats - hw-session follow: the property that the
# incremental reducer gives, line by line, exactly what a from-scratch
# reduction (hw-session project --until) gives, over random logs of every
# event kind appended in random batches while following; --after; transient
# stream records (running, revision, staleness, epochs, malformed lines);
# integrity failures while following; a session that appears later;
# --idle-exit, signals and a reader that goes away; usage errors; and that
# following writes nothing.

load lib
bats_require_minimum_version 1.5.0

GEN="$BATS_TEST_DIRNAME/gen-session.py"

# follow_bg ARGS... - run hw-session follow ARGS in the background, stdout
# in out and stderr in err, its pid in FPID (fd 3 is bats' own)
follow_bg() {
	hw-session follow "$@" >out 2>err 3>&- &
	FPID=$!
}

# wait_lines N - wait until out has at least N lines (10 s at most)
wait_lines() {
	local i
	for ((i = 0; i < 200; i++)); do
		[ "$(wc -l <out)" -ge "$1" ] && return 0
		sleep 0.05
	done
	echo "timed out waiting for line $1 of out:"
	cat out err
	return 1
}

# ended STATUS - wait for the follow in the background to exit with STATUS
ended() {
	local rc=0
	wait "$FPID" || rc=$?
	[ "$rc" -eq "$1" ] || { echo "follow exited $rc, not $1"; cat err; return 1; }
}

# field N FILTER - jq FILTER applied to line N of out
field() { sed -n "${1}p" out | jq -c "$2"; }

# seqs N - the sequences of the events on line N of out, space-separated
seqs() { sed -n "${1}p" out | jq -r '[.events[].sequence] | map(tostring) | join(" ")'; }

# open_fifo - hold the FIFO "in" open for writing on fd 7 (this waits for
# its reader, follow, to open it)
open_fifo() { exec 7>in; }

# rec EPOCH REVISION STREAMREVISION TEXT - one transient record line
rec() {
	printf '{"epoch":"%s","revision":%s,"streamRevision":%s,"text":"%s"}\n' \
		"$1" "$2" "$3" "$4"
}

# running - session-main with three messages and a running agent (revision 3)
running() {
	append_n 3
	draft agent.lifecycle.updated '{"status":"running"}' | hw-append --session session-main >/dev/null
}

# ---------------------------------------------------------------------------
# The property: incremental while following = from scratch, for every line.

# random_batches SEED DIR [MODE] - write DIR/bNNN.jsonl, batches of random
# drafts of every kind (including hostile sequences: duplicate proposals,
# executions of rejected or never-proposed actions, second outcomes,
# contradicting resolutions, unknown statuses, wrong types), and DIR/plan
# with one "FILE SLEEP" line per batch.  MODE calm makes mostly orderly
# action sets, so the session is not soon stopped by an unrecoverable
# error; MODE big writes over 1000 events, past what the projection shows.
random_batches() {
	python3 "$GEN" drafts >"$2/samples"
	python3 - "$1" "$2" "${3:-wild}" <<'EOF'
import json, random, sys
seed, d, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
R = random.Random(seed)
fresh = [0]
samples = open(d + "/samples").read().splitlines()
calls = ["call-%d" % i for i in range(4)]
groups = ["set-a", "set-b", ""]
WEIRD = [None, 0, -1, 1.5, "", "x", [], {}, True]

def pick(*xs):
    return R.choice(xs)

def obj(**kw):
    # drop a key now and then, and now and then give it a wrong type
    return {k: (v if R.random() < 0.9 else R.choice(WEIRD))
            for k, v in kw.items() if R.random() < 0.93}

def draft(kind, payload):
    return json.dumps({"kind": kind, "payload": payload}, sort_keys=True)

def orderly():
    """a whole action set under a fresh id, approved or rejected"""
    fresh[0] += 1
    c, g = "call-f%d" % fresh[0], "set-f%d" % fresh[0]
    yes = R.random() < 0.7
    out = [draft("agent.lifecycle.updated", {"status": "running"}),
           draft("tool_call.proposed", {"tool_call_id": c, "action_id": "act-" + c,
                                        "tool_name": "terminal", "kind": "terminal",
                                        "risk": pick("low", "high"), "summary": "ls",
                                        "arguments": {"command": "ls"}}),
           draft("confirmation.requested", {"request": {"group_id": g, "tool_call_id": c}}),
           draft("agent.lifecycle.updated", {"status": "waiting-for-confirmation"}),
           draft("approval.recorded", {"group_id": g, "tool_call_ids": [c],
                                       "decision": "approved" if yes else "rejected"}),
           draft("confirmation.resolved", {"group_id": g, "tool_call_id": c,
                                           "decision": "approved" if yes else "rejected"})]
    if yes:
        out.append(draft("tool.execution.recorded", {
            "tool_call_id": c, "action_id": "act-" + c, "tool_name": "terminal",
            "exit_code": pick(0, 1), "summary": "ran", "result": "out"}))
    out.append(draft("agent.lifecycle.updated", {"status": pick("idle", "running", "finished")}))
    # a cut anywhere leaves the set pending, mid-review or running
    return "\n".join(out[:R.randint(2, len(out))] if R.random() < 0.3 else out)

def one():
    c, g = pick(*calls), pick(*groups)
    if mode != "wild" and R.random() < 0.97:
        k = R.choice([5, 6, 8, 9, 9, 9, 10, 11, 12, 13, 13, 14])
    else:
        k = R.randrange(17)
    if k == 0:
        return draft("tool_call.proposed", obj(
            tool_call_id=c, action_id="act-" + c,
            tool_name=pick("terminal", "file_editor", "task_tracker"),
            kind=pick("terminal", "file-editor", "task", "other"),
            risk=pick("low", "medium", "high", "extreme"),
            summary=pick("ls", "edit a.txt", "y" * 700),
            arguments=pick({"command": "ls"}, {"command": "create", "path": "/p/a"}, {}),
            affected_paths=pick([], ["/p/a"], [{"path": "/p/b", "effect": "deleted"}]),
            project_path="/p"))
    if k == 1:
        return draft("confirmation.requested", {"request": obj(
            group_id=g, tool_call_id=c, action_id=pick("act-" + c, "act-x"),
            tool_name="terminal")})
    if k == 2:
        return draft("approval.recorded", obj(
            group_id=g, decision=pick("approved", "rejected", "deny", "maybe"),
            tool_call_ids=R.sample(calls, R.randint(0, 4))))
    if k == 3:
        return draft("confirmation.resolved", obj(
            tool_call_id=c, group_id=g, decision=pick("approved", "rejected")))
    if k == 4:
        return draft("tool.execution.recorded", obj(
            tool_call_id=c, action_id=pick("act-" + c, "act-x"),
            tool_name="terminal", exit_code=pick(0, 0, 1, 2), summary="ran",
            result=pick("out", "z" * 3000), result_truncated=pick(True, False)))
    if k == 5:
        return draft("agent.lifecycle.updated", obj(status=pick(
            "running", "running", "idle", "waiting-for-confirmation",
            "paused", "finished", "error", "bogus")))
    if k == 6:
        return draft(pick("session.paused", "session.resumed"), obj(command_id="cmd-1"))
    if k == 7:
        return draft("error.recorded", obj(
            reason="r", code=pick("HW-AGENT-001", "HW-AGENT-006" if mode == "wild" else "x"),
            affects_lifecycle=pick(True, False), command=pick(None, "chat"),
            command_id=pick("cmd-1", "cmd-2"), backend_id="be"))
    if k == 8:
        return draft("command.received", obj(
            command_id=pick("cmd-1", "cmd-2"), actor_id="human",
            command_kind=pick("chat", "approve", "deny", "pause", "resume", "bogus"),
            command_hash="sha256:" + "ab" * 32))
    if k == 9:
        return draft(pick("user_message.recorded", "agent_message.emitted"),
                     obj(content=pick("hi", "line\u2028sep \U0001F600", "w" * 5000, 5)))
    if k == 10:
        return draft("task.plan.updated", obj(tasks=pick(
            [{"title": "a", "status": "todo"}, {"title": "b", "status": "done"}],
            [], "no", [{"title": 1}])))
    if k == 11:
        return draft("model.usage.updated", {"usage": obj(
            usage_id=pick("total", "condenser", "agent"), model_name="m",
            call_count=R.randint(0, 5),
            prompt_tokens=pick(R.randint(0, 1000), 2 ** 64 + 1, -5),
            completion_tokens=R.randint(0, 100),
            accumulated_cost=pick(0.5, 1e-07, 0), context_window=pick(None, 8192))})
    if k == 12:
        return draft("subagent.updated", {"subagent": obj(
            invocation_id=pick("inv-1", "inv-2"), task_id="t", agent_name="a",
            role_label="A", status=pick("running", "finished", "failed"),
            parent_session_id="p", parent_action_id="act-1")})
    if k == 13 and mode != "wild":
        return orderly()
    if k == 13:
        # an orderly action set, which later random drafts may contradict
        return "\n".join([
            draft("agent.lifecycle.updated", {"status": "running"}),
            draft("tool_call.proposed", {"tool_call_id": c, "action_id": "act-" + c,
                                         "tool_name": "terminal", "kind": "terminal",
                                         "risk": "high", "summary": "s",
                                         "arguments": {"command": "ls"}}),
            draft("confirmation.requested", {"request": {"group_id": g or "set-c",
                                                         "tool_call_id": c}}),
            draft("agent.lifecycle.updated", {"status": "waiting-for-confirmation"}),
        ])
    if k == 14:
        return draft(pick("policy.decision.recorded", "model_call.decision.recorded",
                          "audit.export.recorded", "agent_message.emitted"),
                     pick({}, {"x": [1, {"y": None}]}))
    return R.choice(samples)

count = R.randint(1100, 1300) if mode == "big" else R.randint(40, 110)
lines = []
while len(lines) < count:
    lines += one().split("\n")
plan, i, b = [], 0, 0
while i < len(lines):
    n = R.choice([1, 1, 2, 3, 5, 8, 13] if mode != "big" else [1, 10, 50, 100, 200])
    name = "b%03d.jsonl" % b
    with open("%s/%s" % (d, name), "w") as f:
        f.write("\n".join(lines[i:i + n]) + "\n")
    plan.append("%s %s" % (name, R.choice(["0", "0", "0.01", "0.06", "0.12"])))
    i, b = i + n, b + 1
open(d + "/plan", "w").write("\n".join(plan) + "\n")
EOF
}

# split_out DIR - check the shape of every line of out and write, byte for
# byte, DIR/events (each printed event on its own line), DIR/pNNN (the
# projection of line NNN) and DIR/revs ("NNN REVISION" per line)
split_out() {
	python3 - "$1" <<'EOF'
import json, sys
d = sys.argv[1]
dec = json.JSONDecoder()
evs, revs = [], []
for i, line in enumerate(open("out", encoding="utf-8").read().split("\n")[:-1]):
    assert line.startswith('{"events":['), "line %d: %.40s" % (i + 1, line)
    pos, last = 11, None
    while line[pos] != "]":
        ev, end = dec.raw_decode(line, pos)
        evs.append(line[pos:end])
        last = ev["sequence"]
        pos = end + (line[end] == ",")
    assert line.startswith('],"projection":', pos), "line %d" % (i + 1)
    assert line.endswith("}")
    proj = line[pos + 15:-1]
    p = json.loads(proj)
    rev = p["revision"]
    # one snapshot: the line's last event is the projection's revision
    assert last is None or last == rev, "line %d: event %s, revision %s" % (i + 1, last, rev)
    assert p["eventCount"] == rev + 1, "line %d: eventCount" % (i + 1)
    open("%s/p%03d" % (d, i + 1), "w", encoding="utf-8").write(proj + "\n")
    revs.append("%03d %d" % (i + 1, rev))
open(d + "/events", "w", encoding="utf-8").write("".join(e + "\n" for e in evs))
open(d + "/revs", "w").write("".join(r + "\n" for r in revs))
EOF
}

# property SEED [MODE] - follow a session while random_batches SEED MODE
# are appended, then check every printed projection against hw-session
# project --until, and the printed events against hw-session replay.  Odd
# seeds start following before the session exists (seed 1 before the store
# exists too); even seeds after its first batch.
property() {
	local f pause n rev
	mkdir gen split
	random_batches "$1" gen "${2:-wild}"
	(($1 == 1)) || append_n 1 other
	hw-session project prop >empty
	exec 6<gen/plan
	if (($1 % 2 == 0)); then
		read -r f pause <&6
		hw-append --session prop <"gen/$f" >/dev/null
	fi
	follow_bg prop --idle-exit 2
	while read -r f pause <&6; do
		hw-append --session prop <"gen/$f" >/dev/null
		sleep "$pause"
	done
	exec 6<&-
	ended 0
	[ ! -s err ]
	split_out split
	n=$(wc -l <split/revs)
	echo "seed $1: $(wc -l <split/events) events in $n lines"
	[ "$n" -ge 3 ]
	while read -r f rev; do
		if ((rev < 0)); then
			cmp "split/p$f" empty
		else
			hw-session project prop --until "$rev" >want
			cmp "split/p$f" want || { echo "line $f, revision $rev"; return 1; }
		fi
	done <split/revs
	hw-session replay prop >replayed
	cmp split/events replayed
}

@test "follow: every projection equals a from-scratch reduction (seed 1, no store yet)" {
	property 1
}

@test "follow: every projection equals a from-scratch reduction (seed 2, orderly sets)" {
	property 2 calm
}

@test "follow: every projection equals a from-scratch reduction (seed 3, session appears)" {
	property 3
}

@test "follow: every projection equals a from-scratch reduction (seed 4, orderly sets)" {
	property 4 calm
}

@test "follow: every projection equals a from-scratch reduction (seed 5)" {
	property 5
}

@test "follow: every projection equals a from-scratch reduction (seed 6, past 1000 entries)" {
	property 6 big
}

# ---------------------------------------------------------------------------
# Durable events

@test "follow: the first line holds every event and their projection" {
	append_n 3
	run -0 --separate-stderr hw-session follow session-main --idle-exit 0.2
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 1 ]
	printf '%s\n' "$output" >out
	[ "$(seqs 1)" = "0 1 2" ]
	[ "$(field 1 .projection)" = "$(hw-session project session-main | jq -c .)" ]
	# canonical JSON: keys sorted, "events" before "projection"
	[ "$(python3 "$GEN" canon <out)" = "$output" ]
}

@test "follow: a new batch prints one line with its events and the projection that includes them" {
	append_n 2
	follow_bg session-main --idle-exit 5
	wait_lines 1
	append_n 3
	wait_lines 2
	kill -TERM "$FPID"
	ended 0
	[ "$(wc -l <out)" -eq 2 ]
	[ "$(seqs 2)" = "2 3 4" ]
	[ "$(field 2 .projection)" = "$(hw-session project session-main | jq -c .)" ]
}

@test "follow: --after N prints only later events but the projection of all" {
	append_n 5
	follow_bg session-main --after 2 --idle-exit 5
	wait_lines 1
	append_n 2
	wait_lines 2
	kill -TERM "$FPID"
	ended 0
	[ "$(seqs 1)" = "3 4" ]
	[ "$(field 1 .projection.revision)" = 4 ]
	[ "$(field 1 .projection.eventCount)" = 5 ]
	[ "$(field 1 .projection)" = "$(hw-session project session-main --until 4 | jq -c .)" ]
	[ "$(seqs 2)" = "5 6" ]
}

@test "follow: --after beyond the last event prints no events until later ones come" {
	append_n 2
	follow_bg session-main --after 3 --idle-exit 5
	wait_lines 1
	append_n 1
	wait_lines 2
	append_n 2
	wait_lines 3
	kill -TERM "$FPID"
	ended 0
	[ "$(seqs 1)" = "" ]
	[ "$(field 1 .projection.revision)" = 1 ]
	# the batch of sequence 2 is still a new projection, with no events shown
	[ "$(seqs 2)" = "" ]
	[ "$(field 2 .projection.revision)" = 2 ]
	[ "$(seqs 3)" = "4" ]
}

@test "follow: an empty session prints its empty projection" {
	hw-session new --title x >/dev/null
	id=$(ls .heartwood/sessions)
	run -0 --separate-stderr hw-session follow "$id" --idle-exit 0.2
	[ "$output" = "{\"events\":[],\"projection\":$(hw-session project "$id")}" ]
}

@test "follow: a session that does not exist prints the empty projection, then is picked up when it appears" {
	append_n 1 other
	follow_bg later --idle-exit 5
	wait_lines 1
	[ "$(field 1 .)" = "$(jq -c '{events: [], projection: .}' <<<"$(hw-session project later)")" ]
	[ ! -e "$(sdir later)" ]
	append_n 2 later
	wait_lines 2
	append_n 1 later
	wait_lines 3
	kill -TERM "$FPID"
	ended 0
	[ "$(seqs 2)" = "0 1" ]
	[ "$(field 2 .projection)" = "$(hw-session project later --until 1 | jq -c .)" ]
	[ "$(seqs 3)" = "2" ]
}

@test "follow: a store that does not exist yet is waited for and nothing is created" {
	follow_bg session-main --idle-exit 5
	wait_lines 1
	sleep 0.2
	[ ! -e .heartwood ]
	append_n 1
	wait_lines 2
	kill -TERM "$FPID"
	ended 0
	[ "$(seqs 2)" = "0" ]
	[ "$(field 2 .projection.sessionId)" = '"session-main"' ]
}

@test "follow: waiting for a session that never appears creates nothing" {
	run -0 --separate-stderr hw-session follow nobody --idle-exit 0.3
	[ "${#lines[@]}" -eq 1 ]
	[ ! -e .heartwood ]
	append_n 1
	before=$(find .heartwood | sort)
	run -0 --separate-stderr hw-session follow nobody --idle-exit 0.3
	[ "$(find .heartwood | sort)" = "$before" ]
}

@test "follow: a pair appended while following that does not verify exits 65 and prints nothing for its batch" {
	append_n 3
	# a copy of the store grows two valid pairs, and the second is edited
	mkdir copy
	cp -a .heartwood copy/
	(cd copy && append_n 2 && sed -i '5s/message 1/message X/' "$(sdir)/events.jsonl")
	follow_bg session-main --idle-exit 5
	wait_lines 1
	# sequence 3 is valid and 4 is not: one batch, so neither is printed
	tail -n 2 "copy/$(sdir)/audit.jsonl" >>"$(sdir)/audit.jsonl"
	tail -n 2 "copy/$(sdir)/events.jsonl" >>"$(sdir)/events.jsonl"
	ended 65
	[ "$(wc -l <out)" -eq 1 ]
	[ "$(cat err)" = "hw-session: follow 'session-main': sequence 4: audit session_event_hash does not match the session event" ]
}

@test "follow: a log cut below what was verified exits 65" {
	append_n 3
	follow_bg session-main --idle-exit 5
	wait_lines 1
	size=$(stat -c %s "$(sdir)/events.jsonl")
	truncate -s -10 "$(sdir)/events.jsonl"
	ended 65
	[ "$(wc -l <out)" -eq 1 ]
	[ "$(cat err)" = "hw-session: follow 'session-main': sequence 3: events.jsonl is shorter than the $size bytes already verified: it was cut or replaced" ]
}

@test "follow: a log replaced by a valid log of another history exits 65" {
	append_n 3
	follow_bg session-main --idle-exit 5
	wait_lines 1
	mkdir other
	(cd other && drafts 5 | sed 's/"message /"other /' |
		hw-append --session session-main >/dev/null)
	cp "other/$(sdir)/events.jsonl" "other/$(sdir)/audit.jsonl" "$(sdir)/"
	ended 65
	[ "$(wc -l <out)" -eq 1 ]
	[[ "$(cat err)" == "hw-session: follow 'session-main': sequence 3: "* ]]
}

@test "follow: a session that is already invalid exits 65 and prints nothing" {
	append_n 3
	sed -i '2s/message 1/message X/' "$(sdir)/events.jsonl"
	run -65 --separate-stderr hw-session follow session-main --idle-exit 1
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: follow 'session-main': sequence 1: audit session_event_hash does not match the session event" ]
}

# ---------------------------------------------------------------------------
# Transient stream records

@test "stream: a record at the current revision shows as streamingText while running" {
	running
	printf '%s\n' "$(rec e1 3 1 'he')" "$(rec e1 3 2 'hello')" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "" ]
	printf '%s\n' "$output" >out
	[ "$(wc -l <out)" -eq 3 ]
	[ "$(field 1 .projection.streamingText)" = null ]
	[ "$(field 2 .events)" = "[]" ]
	[ "$(field 2 '.projection | [.streamEpoch, .streamRevision, .streamingText]')" = '["e1",1,"he"]' ]
	[ "$(field 3 '.projection | [.streamEpoch, .streamRevision, .streamingText]')" = '["e1",2,"hello"]' ]
	# everything else is the durable projection
	[ "$(field 3 '.projection | del(.streamEpoch, .streamRevision, .streamingText)')" = \
		"$(hw-session project session-main | jq -c 'del(.streamEpoch, .streamRevision, .streamingText)')" ]
}

@test "stream: records from standard input are read with -" {
	running
	run -0 --separate-stderr hw-session follow session-main --stream - --idle-exit 0.3 <<<"$(rec e1 3 1 'hi')"
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c .projection.streamingText <<<"${lines[1]}")" = '"hi"' ]
}

@test "stream: the text is not shown while the agent is not running" {
	append_n 3
	draft agent.lifecycle.updated '{"status":"idle"}' | hw-append --session session-main >/dev/null
	run -0 --separate-stderr hw-session follow session-main --stream - --idle-exit 0.3 <<<"$(rec e1 3 1 'hi')"
	printf '%s\n' "$output" >out
	[ "$(wc -l <out)" -eq 2 ]
	[ "$(field 2 '.projection | [.streamEpoch, .streamRevision, .streamingText]')" = '["e1",1,null]' ]
}

@test "stream: the text is shown only at the current revision, and appears when the events reach it" {
	running
	mkfifo in
	follow_bg session-main --stream in --idle-exit 5
	open_fifo
	wait_lines 1
	rec e1 2 1 old >&7
	wait_lines 2
	rec e1 4 2 ahead >&7
	wait_lines 3
	draft agent_message.emitted '{"content":"x"}' | hw-append --session session-main >/dev/null
	wait_lines 4
	exec 7>&-
	kill -TERM "$FPID"
	ended 0
	[ "$(field 2 '[.projection.revision, .projection.streamingText]')" = '[3,null]' ]
	[ "$(field 3 '[.projection.revision, .projection.streamingText]')" = '[3,null]' ]
	[ "$(seqs 4)" = "4" ]
	[ "$(field 4 '[.projection.revision, .projection.streamingText]')" = '[4,"ahead"]' ]
}

@test "stream: stale records print nothing" {
	running
	printf '%s\n' "$(rec e1 3 2 'two')" "$(rec e1 3 2 'same')" "$(rec e1 3 1 'older')" \
		"$(rec e1 2 9 'earlier revision')" "$(rec e1 3 3 'three')" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 3 ]
	[ "$(jq -c .projection.streamingText <<<"${lines[1]}")" = '"two"' ]
	[ "$(jq -c .projection.streamingText <<<"${lines[2]}")" = '"three"' ]
}

@test "stream: a new epoch resets the stream" {
	running
	printf '%s\n' "$(rec e1 3 5 'five')" "$(rec e2 3 1 'restarted')" "$(rec e2 3 1 'stale')" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "${#lines[@]}" -eq 3 ]
	[ "$(jq -c '.projection | [.streamEpoch, .streamRevision, .streamingText]' <<<"${lines[2]}")" = '["e2",1,"restarted"]' ]
}

@test "stream: an accepted record that leaves the projection as it was prints nothing" {
	running
	# both are ahead of revision 3, so neither text is shown; the second
	# keeps the streamRevision of the first
	printf '%s\n' "$(rec e1 5 1 'five')" "$(rec e1 6 1 'six')" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c '.projection | [.streamRevision, .streamingText]' <<<"${lines[1]}")" = '[1,null]' ]
}

@test "stream: a line that is not JSON warns and following continues" {
	running
	printf '%s\n' 'not json' "$(rec e1 3 1 'ok')" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: invalid JSON value at byte 1" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c .projection.streamingText <<<"${lines[1]}")" = '"ok"' ]
}

@test "stream: a record that is not an object warns" {
	running
	printf '%s\n' '[1,2]' >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: stream record is malformed: want {epoch, revision, streamRevision, text}" ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "stream: a record without text warns" {
	running
	printf '%s\n' '{"epoch":"e1","revision":3,"streamRevision":1}' >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: stream record is malformed: want {epoch, revision, streamRevision, text}" ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "stream: a record with a string revision warns" {
	running
	printf '%s\n' '{"epoch":"e1","revision":"3","streamRevision":1,"text":"x"}' >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: stream record is malformed: want {epoch, revision, streamRevision, text}" ]
	[ "${#lines[@]}" -eq 1 ]
}

@test "stream: a record with an empty epoch warns" {
	running
	printf '%s\n' "$(rec '' 3 1 x)" >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: stream record is malformed: want {epoch, revision, streamRevision, text}" ]
}

@test "stream: a line longer than 8 MiB warns and the next line is read" {
	running
	{ head -c 9000000 /dev/zero | tr '\0' a; echo; rec e1 3 1 'next'; } >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "$stderr" = "hw-session: warning: stream line 1: longer than 8388608 bytes" ]
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -c .projection.streamingText <<<"${lines[1]}")" = '"next"' ]
}

@test "stream: a malformed line does not stop durable events" {
	running
	mkfifo in
	follow_bg session-main --stream in --idle-exit 5
	open_fifo
	wait_lines 1
	echo '{"epoch":' >&7
	append_n 1
	wait_lines 2
	rec e1 4 1 'after' >&7
	wait_lines 3
	exec 7>&-
	kill -TERM "$FPID"
	ended 0
	[ "$(cat err)" = "hw-session: warning: stream line 1: unexpected end of input at byte 10" ]
	[ "$(seqs 2)" = "4" ]
	[ "$(field 3 .projection.streamingText)" = '"after"' ]
}

@test "stream: the end of the stream leaves durable events followed" {
	running
	follow_bg session-main --stream - --idle-exit 5 </dev/null
	wait_lines 1
	append_n 1
	wait_lines 2
	kill -TERM "$FPID"
	ended 0
	[ "$(seqs 2)" = "4" ]
}

@test "stream: a last line without a newline is still a record" {
	running
	rec e1 3 1 'tail' | tr -d '\n' >recs
	run -0 --separate-stderr hw-session follow session-main --stream recs --idle-exit 0.3
	[ "${#lines[@]}" -eq 2 ]
}

@test "stream: a directory as the stream exits 74" {
	append_n 1
	mkdir d
	run -74 --separate-stderr hw-session follow session-main --stream d
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: cannot read stream 'd': Is a directory" ]
}

@test "stream: a stream file that does not exist exits 66" {
	append_n 1
	run -66 --separate-stderr hw-session follow session-main --stream nothere
	[ "$output" = "" ]
	[ "$stderr" = "hw-session: cannot open stream 'nothere': No such file or directory" ]
}

# ---------------------------------------------------------------------------
# Ending

# The test's clock decides nothing here: lines keep coming until more than
# the idle limit has passed since the first, and follow must still be
# there; a round whose lines came further apart than the limit (a stalled
# machine) proves nothing and is tried again.
@test "follow: --idle-exit counts from the last line printed" {
	local round n gap last first now ok=
	for round in 1 2 3; do
		rm -rf .heartwood out err
		append_n 1
		follow_bg session-main --idle-exit 3
		wait_lines 1
		first=$EPOCHREALTIME
		last=$first
		gap=0
		n=1
		while awk -v a="$EPOCHREALTIME" -v b="$first" 'BEGIN { exit !(a - b < 4.5) }'; do
			sleep 0.25
			append_n 1
			n=$((n + 1))
			wait_lines "$n"
			now=$EPOCHREALTIME
			gap=$(awk -v a="$now" -v b="$last" -v g="$gap" 'BEGIN { print (a - b > g) ? a - b : g }')
			last=$now
		done
		if kill -0 "$FPID" 2>/dev/null; then
			# alive past the limit counted from the first line: then it
			# exits once the lines stop, having printed every one
			ended 0
			[ "$(wc -l <out)" -eq "$n" ]
			ok=1
			break
		fi
		# exited early: only a stall longer than the limit excuses it
		awk -v g="$gap" 'BEGIN { exit !(g >= 2.5) }' || { echo "exited with lines $gap s apart"; return 1; }
		wait "$FPID" || true
	done
	[ "$ok" = 1 ]
}

@test "follow: SIGTERM exits 0" {
	append_n 1
	follow_bg session-main
	wait_lines 1
	kill -TERM "$FPID"
	ended 0
	[ ! -s err ]
}

@test "follow: SIGINT exits 0" {
	append_n 1
	# a background job of a script starts with SIGINT ignored: restore it
	python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp("hw-session", ["hw-session", "follow", "session-main"])' >out 2>err 3>&- &
	FPID=$!
	wait_lines 1
	kill -INT "$FPID"
	ended 0
	[ ! -s err ]
}

@test "follow: a reader that goes away ends following with 0" {
	append_n 1
	run -0 --separate-stderr timeout 10 bash -c 'set -o pipefail; hw-session follow session-main | head -n 1 >/dev/null'
	[ "$stderr" = "" ]
}

@test "follow: output to a full device fails loudly" {
	append_n 1
	run -74 --separate-stderr bash -c 'hw-session follow session-main >/dev/full'
	[ "$stderr" = "hw-session: cannot write 'stdout': No space left on device" ]
}

@test "follow: following writes nothing to the store" {
	running
	before=$(snapshot; find .heartwood -printf '%p %s %m\n' | sort)
	printf '%s\n' "$(rec e1 3 1 'text')" >recs
	run -0 hw-session follow session-main --stream recs --idle-exit 0.3
	run -0 hw-session follow session-main --after 1 --idle-exit 0.2
	[ "$(snapshot; find .heartwood -printf '%p %s %m\n' | sort)" = "$before" ]
}

# ---------------------------------------------------------------------------
# Usage

@test "follow: a bad --after exits 2" {
	run -2 --separate-stderr hw-session follow session-main --after x
	[ "$stderr" = "hw-session: invalid --after 'x': want a sequence number" ]
	run -2 --separate-stderr hw-session follow session-main --after -1
	[ "$stderr" = "hw-session: invalid --after '-1': want a sequence number" ]
	[ ! -e .heartwood ]
}

@test "follow: a bad --idle-exit exits 2" {
	for v in 0 -1 x 1s ''; do
		run -2 --separate-stderr hw-session follow session-main --idle-exit "$v"
		[ "$stderr" = "hw-session: invalid --idle-exit '$v': want seconds > 0" ]
	done
	[ ! -e .heartwood ]
}

@test "follow: --until is refused" {
	run -2 --separate-stderr hw-session follow session-main --until 3
	[ "$output" = "" ]
	[[ "$stderr" == usage:* ]]
}

@test "follow: an invalid session id exits 2" {
	run -2 --separate-stderr hw-session follow ../x --idle-exit 0.2
	[ "$output" = "" ]
	[[ "$stderr" == "hw-session: invalid session id '../x': "* ]]
}
