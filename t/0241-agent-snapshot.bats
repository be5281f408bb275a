#!/usr/bin/env bats
# The agent's snapshot (hw-store(5), Verified head): a run starts from the
# state the last run left and reads only the events after it, and sends
# the model exactly what reading every event gives.  A snapshot that is
# not whole, not this user's (mode, owner, a symbolic link, the MAC of
# another user's key), of another version, or at a position the logs no
# longer hold is never used: every event is read instead.

load lib
load agent

setup() { agent_setup; }
teardown() { agent_teardown; }

SNAP=.heartwood/sessions/session-main/.agent-snapshot
EV=.heartwood/sessions/session-main/events.jsonl

pending() { hw-session project session-main | jq -r .pendingApproval.groupId; }
decide() {
	cmd "$1" "$2" "{\"target_type\":\"action-set\",\"target_id\":\"$(pending)\"}" |
		hw-session command session-main >/dev/null
}

# history: a first question, a set allowed and run, the model's answer;
# the agent's last run leaves its snapshot where the logs end
history() {
	two_actions
	echo '{"expect":"File created","content":"Both done."}' >>turns.jsonl
	serve turns.jsonl
	chat c1 "first question"
	hw-agent run session-main >/dev/null
	decide c2 approve
	hw-agent run session-main >/dev/null
	[ "$(proj '.conversation[-1].content')" = '"Both done."' ]
	kill "$MODEL_PID"
	wait "$MODEL_PID" 2>/dev/null || :
	MODEL_PID=
	[ -f $SNAP ]
}

# ask_again: a second question, answered by the stand-in model, whose
# request (requests.jsonl) shows what the agent held
ask_again() {
	capture
	chat c3 "and now?"
	run -0 --separate-stderr hw-agent run session-main
	[ "$(proj '.conversation[-1].content')" = '"Noted."' ]
}

stop_capture() {
	kill "$SRV"
	wait "$SRV" 2>/dev/null || :	# 143: killed
	SRV=
}

# tamper_first: the first question's text changed in the log, its length
# kept: a change inside the verified part, which a command does not hash
# again (only replay, export, verify and checkpoints do)
tamper_first() {
	python3 - $EV <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:	# in place: the same file
    b = f.read()
    f.seek(b.index(b"first question"))
    f.write(b"FIRST QUESTION")
PY
	grep -q 'FIRST QUESTION' $EV
}

# remac: the snapshot's MAC line computed again under this user's key, as
# heartwood computes it, after an edit of its JSON line (jq FILTER)
remac() {
	python3 - "$SNAP" "$XDG_STATE_HOME/heartwood/decision.key" "$1" <<'PY'
import hashlib, hmac, json, subprocess, sys
path, keyfile, flt = sys.argv[1:]
key = open(keyfile, "rb").read()
body = open(path, "rb").read().split(b"\n", 1)[1]
if flt:
    body = subprocess.run(["jq", "-cS", flt], input=body, check=True,
                          stdout=subprocess.PIPE).stdout
sub = hmac.new(key, b"heartwood cache mac v1: agent snapshot",
               hashlib.sha256).digest()
mac = hmac.new(sub, body, hashlib.sha256).hexdigest().encode()
with open(path, "wb") as f:
    f.write(mac + b"\n" + body)
PY
}

@test "agent snapshot: written owner-only where the logs end, under the user's MAC" {
	history
	[ "$(stat -c %a $SNAP)" = 600 ]
	[[ "$(head -1 $SNAP)" =~ ^[0-9a-f]{64}$ ]]
	[ "$(tail -n +2 $SNAP | jq -r .schema_version)" = heartwood.agent-snapshot.v1 ]
	[ "$(tail -n +2 $SNAP | jq .position.count)" = "$(proj .eventCount)" ]
	# the MAC is the one hw-store(5) describes: computing it again
	# changes nothing
	before=$(sha256sum <$SNAP)
	remac ''
	[ "$(sha256sum <$SNAP)" = "$before" ]
}

@test "agent snapshot: a run from it sends the model what reading every event sends" {
	history
	# a copy of the project is new files, which neither the verified
	# head nor the snapshot describe: there every event is read
	cp -a "$PROJ" "$PROJ.copy"
	ask_again
	stop_capture
	cd "$PROJ.copy"
	ask_again
	stop_capture
	cd "$PROJ"
	from_snapshot=$(tail -1 requests.jsonl | jq -c .body.messages)
	from_events=$(tail -1 "$PROJ.copy/requests.jsonl" | jq -c .body.messages)
	rm -rf "$PROJ.copy"
	[ "$(jq length <<<"$from_snapshot")" -ge 6 ]
	[ "$from_snapshot" = "$from_events" ]
}

@test "agent snapshot: a run reads only the events after it" {
	history
	tamper_first
	ask_again
	# the first question as the snapshot holds it, not as the log now has it
	[ "$(sent '.[1].content')" = "first question" ]
	# the change is still caught by every full verification
	run -65 --separate-stderr hw-audit verify --session session-main
	[[ "$stderr" == *"hash"* || "$stderr" == *"chain"* ]]
}

@test "agent snapshot: one edited after its MAC is not used" {
	history
	sed -i '2s/first question/FORGED QUESTN/' $SNAP
	ask_again
	[ "$(sent '.[1].content')" = "first question" ]
}

@test "agent snapshot: one edited and sealed with this user's key is used (the MAC is what guards it)" {
	history
	remac '.state.messages[0].content = "SEALED QUESTN"'
	ask_again
	[ "$(sent '.[1].content')" = "SEALED QUESTN" ]
}

@test "agent snapshot: one of another version is not used" {
	history
	remac '.schema_version = "heartwood.agent-snapshot.v0" | .state.messages[0].content = "SEALED QUESTN"'
	ask_again
	[ "$(sent '.[1].content')" = "first question" ]
}

@test "agent snapshot: one whose projection is of another version is not used" {
	history
	remac '.state.projection_schema = "heartwood.projection-snapshot.v0" | .state.messages[0].content = "SEALED QUESTN"'
	ask_again
	[ "$(sent '.[1].content')" = "first question" ]
}

@test "agent snapshot: one not closed to others is not used" {
	history
	tamper_first
	chmod 644 $SNAP
	ask_again
	[ "$(sent '.[1].content')" = "FIRST QUESTION" ]
}

@test "agent snapshot: a symbolic link is not followed" {
	history
	tamper_first
	mv $SNAP "$PROJ/elsewhere"
	ln -s "$PROJ/elsewhere" $SNAP
	ask_again
	[ "$(sent '.[1].content')" = "FIRST QUESTION" ]
}

@test "agent snapshot: a cut line is not used" {
	history
	tamper_first
	head -c 200 $SNAP >cut
	cat cut >$SNAP
	ask_again
	[ "$(sent '.[1].content')" = "FIRST QUESTION" ]
}

@test "agent snapshot: logs cut below its position are read again from the first event" {
	printf '%s\n' '{"content":"First answer."}' '{"content":"Second answer."}' >turns.jsonl
	serve turns.jsonl
	chat c1 "first question"
	hw-agent run session-main >/dev/null
	n=$(proj .eventCount)
	chat c2 "second question"
	hw-agent run session-main >/dev/null
	[ "$(proj '.conversation[-1].content')" = '"Second answer."' ]
	[ "$(tail -n +2 $SNAP | jq .position.count)" -gt "$n" ]
	# both logs cut back, in place, to where the first answer ended: the
	# snapshot's position is past their ends
	for f in events audit; do
		p=.heartwood/sessions/session-main/$f.jsonl
		head -n "$n" $p >cut
		cat cut >$p
	done
	ask_again
	[ "$(sent '[.[].content] | join("|")' | cut -d'|' -f2-)" = "first question|First answer.|and now?" ]
}

@test "agent snapshot: another user's, in a copied project, is not used and runs nothing" {
	# the attacker's run leaves a snapshot of a set the attacker approved
	# but nobody ran: sealed with the attacker's key, it is not this
	# user's, so the set stays the stranger's decision and waits
	export XDG_STATE_HOME=$PROJ/attacker-state
	two_actions
	serve turns.jsonl
	chat c1 "first question"
	hw-agent run session-main >/dev/null
	remac '(.state.sets[0].flags) = [true, true, false, false] | (.state.members[].flags) = [true, true, false, false]'
	kill "$MODEL_PID"
	wait "$MODEL_PID" 2>/dev/null || :
	MODEL_PID=
	export XDG_STATE_HOME=$PROJ/victim-state
	serve turns.jsonl
	run -0 --separate-stderr hw-agent run session-main
	[ ! -e ran.txt ]
	[ ! -e notes.md ]
	[ "$(proj '.lifecycle.status')" = '"waiting-for-confirmation"' ]
}
