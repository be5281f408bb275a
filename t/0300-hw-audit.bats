#!/usr/bin/env bats
# hw-audit: verifying sessions and bare exports, the export command and
# its content minimization, signed checkpoint bundles (Ed25519 and P-256)
# checked here and by Python's cryptography from the public key alone,
# C2SP signed notes, and RFC 9162 inclusion and consistency proofs.

load lib

keys() {
	openssl genpkey -algorithm ed25519 -out ed.pem 2>/dev/null
	openssl pkey -in ed.pem -pubout -out ed.pub 2>/dev/null
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out p256.pem 2>/dev/null
	openssl pkey -in p256.pem -pubout -out p256.pub 2>/dev/null
	chmod 600 ed.pem p256.pem
	chmod 644 ed.pub p256.pub
}

# checkpoint OUT [KEY] [SESSION]
checkpoint() {
	hw-audit checkpoint --session "${3:-session-main}" --output "$1" \
		--deployment-id lab-7 --retention-policy irb-2026 \
		--retain-until 2033-12-31 --key "${2:-ed.pem}"
}

# mth_root FILE: RFC 9162's root of FILE's lines, in Python
mth_root() {
	python3 -c '
import hashlib, json, sys
leaves = [json.dumps(json.loads(l), sort_keys=True, separators=(",", ":")).encode()
          for l in open(sys.argv[1])]
def mth(d):
    if not d: return hashlib.sha256(b"").digest()
    if len(d) == 1: return hashlib.sha256(b"\0" + d[0]).digest()
    k = 1
    while k * 2 < len(d): k *= 2
    return hashlib.sha256(b"\1" + mth(d[:k]) + mth(d[k:])).digest()
print(mth(leaves).hex())' "$1"
}

@test "hw-audit verify --session: the result describes the canonical export" {
	append_n 5
	run -0 --separate-stderr hw-audit verify --session session-main
	[ "$(jq -r .event_count <<<"$output")" = 5 ]
	[ "$(jq -r .terminal_event_hash <<<"$output")" = "$(tail -1 "$(sdir)/audit.jsonl" | jq -r .event_hash)" ]
	[ "$(jq -r .content_sha256 <<<"$output")" = "sha256:$(sha256sum <"$(sdir)/audit.jsonl" | cut -c1-64)" ]
	[ "$(jq -r .size_bytes <<<"$output")" = "$(stat -c %s "$(sdir)/audit.jsonl")" ]
	[ "$(jq -r .session_id <<<"$output")" = session-main ]
	[ -z "$stderr" ]
	[ "$(wc -l <"$(sdir)/events.jsonl")" -eq 5 ] # nothing written
}

@test "hw-audit verify FILE and stdin agree with the session" {
	append_n 4
	want=$(hw-audit verify --session session-main)
	run -0 hw-audit verify "$(sdir)/audit.jsonl"
	[ "$output" = "$want" ]
	run -0 bash -c "hw-audit verify - <'$(sdir)/audit.jsonl'"
	[ "$output" = "$want" ]
	run -0 bash -c "hw-audit verify <'$(sdir)/audit.jsonl'"
	[ "$output" = "$want" ]
}

# The session's own logs: an audit line that is not byte for byte the
# record its event implies gets the full checks (an older or loose form
# passes them; a lie does not), also where its event was checked without a
# tree.
@test "hw-audit verify --session: loose audit lines get the full checks and verify" {
	append_n 3
	want=$(hw-audit verify --session session-main)
	jq -c --sort-keys . "$(sdir)/audit.jsonl" | sed 's/,/, /g; s/:/: /' >loose.jsonl
	cat loose.jsonl >"$(sdir)/audit.jsonl"
	run -0 --separate-stderr hw-audit verify --session session-main
	# the digest is the canonical export's, as before
	[ "$output" = "$want" ]
	[ -z "$stderr" ]
}

@test "hw-audit verify --session: an audit payload changed, and its chain rehashed, fails" {
	append_n 4
	python3 - "$(sdir)/audit.jsonl" <<'PY'
import hashlib, json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
recs[2]["payload"]["content_chars"] += 1
for i in range(2, len(recs)):
    if i > 2:
        recs[i]["previous_event_hash"] = recs[i - 1]["event_hash"]
    c = json.dumps(dict(recs[i], event_hash=None), sort_keys=True,
                   separators=(",", ":"), ensure_ascii=True)
    recs[i]["event_hash"] = "sha256:" + hashlib.sha256(c.encode()).hexdigest()
with open(sys.argv[1], "w") as f:
    for r in recs:
        f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
PY
	run -65 --separate-stderr hw-audit verify --session session-main
	[ "$output" = "" ]
	[[ "$stderr" == *"sequence 2: audit payload is not the minimized form of its event"* ]]
}

@test "hw-audit verify --session: hashed in two lanes, sixteen lanes or one line at a time, the same result" {
	append_n 150
	HW_SHA256_LANES=1 run -0 --separate-stderr hw-audit verify --session session-main
	one=$output
	[ "$(jq -r .event_count <<<"$one")" = 150 ]
	[ "$(jq -r .merkle_root <<<"$one")" = "$(mth_root "$(sdir)/audit.jsonl")" ]
	for lanes in 2 16 ""; do
		HW_SHA256_LANES=$lanes run -0 --separate-stderr hw-audit verify --session session-main
		[ "$output" = "$one" ]
	done
}

# one_byte_audit: change a digit of record 2's content_chars, in place
one_byte_audit() {
	python3 - "$(sdir)/audit.jsonl" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().split("\n")
m = re.search(r'"content_chars":(\d+)', lines[2])
d = m.end(1) - 1
lines[2] = lines[2][:d] + str((int(lines[2][d]) + 1) % 10) + lines[2][d + 1:]
open(sys.argv[1], "w").write("\n".join(lines))
PY
}

@test "hw-audit verify --session: an audit line changed in one byte, its length kept, fails" {
	append_n 4
	size=$(stat -c %s "$(sdir)/audit.jsonl")
	one_byte_audit
	[ "$(stat -c %s "$(sdir)/audit.jsonl")" = "$size" ]
	run -65 --separate-stderr hw-audit verify --session session-main
	[ "$output" = "" ]
	[[ "$stderr" == "hw-audit: sequence 2: "* ]]
	# replay prints each event as it passes: the two before the change
	run -65 --separate-stderr hw-session replay session-main
	[ "$(jq -s -c 'map(.sequence)' <<<"$output")" = "[0,1]" ]
	[[ "$stderr" == "hw-session: replay 'session-main': sequence 2: "* ]]
}

@test "hw-audit verify: an empty export has no terminal hash" {
	: >empty.jsonl
	run -0 hw-audit verify empty.jsonl
	[ "$(jq -c '[.event_count,.terminal_event_hash,.content_sha256,.size_bytes]' <<<"$output")" = \
		'[0,null,"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",0]' ]
}

@test "hw-audit verify: equivalent non-canonical JSON verifies to the canonical digest" {
	append_n 3
	want=$(hw-audit verify --session session-main | jq -r .content_sha256)
	{ echo; jq -c --sort-keys . "$(sdir)/audit.jsonl" | sed 's/,/, /g; s/:/: /'; echo '   '; } >loose.jsonl
	refute cmp -s loose.jsonl "$(sdir)/audit.jsonl"
	run -0 hw-audit verify loose.jsonl
	[ "$(jq -r .content_sha256 <<<"$output")" = "$want" ]
}

# tamper_field FIELD JQ-EXPR: change one field of record 2 of an export
tamper_field() {
	append_n 4
	cp "$(sdir)/audit.jsonl" x.jsonl
	python3 - "$2" <<'PY'
import json, sys, subprocess
lines = open("x.jsonl").read().splitlines()
r = json.loads(lines[2])
exec(sys.argv[1])
lines[2] = json.dumps(r, separators=(",", ":"), sort_keys=True)
open("x.jsonl", "w").write("\n".join(lines) + "\n")
PY
	run -65 --separate-stderr hw-audit verify x.jsonl
	[[ "$stderr" == "hw-audit: sequence 2: "* ]] || { echo "$stderr"; return 1; }
	[ -z "$output" ]
}

@test "hw-audit verify: a changed event_id fails" { tamper_field event_id 'r["event_id"] += "x"'; }
@test "hw-audit verify: a changed event_type fails" { tamper_field event_type 'r["event_type"] = "error.recorded"'; }
@test "hw-audit verify: a changed occurred_at fails" { tamper_field occurred_at 'r["occurred_at"] = "2020-01-01T00:00:00Z"'; }
@test "hw-audit verify: a changed payload fails" { tamper_field payload 'r["payload"]["content_chars"] = 1'; }
@test "hw-audit verify: a changed previous_event_hash fails" { tamper_field previous_event_hash 'r["previous_event_hash"] = "sha256:" + "0"*64'; }
@test "hw-audit verify: a changed schema_version fails" { tamper_field schema_version 'r["schema_version"] = "heartwood.audit-event.v2"'; }
@test "hw-audit verify: a changed sequence fails" { tamper_field sequence 'r["sequence"] = 7'; }
@test "hw-audit verify: a changed session_id fails" { tamper_field session_id 'r["session_id"] = "other"'; }
@test "hw-audit verify: a changed event_hash fails" { tamper_field event_hash 'r["event_hash"] = "sha256:" + "1"*64'; }
@test "hw-audit verify: an added field fails" { tamper_field extra 'r["note"] = "x"'; }

# rechain INDEX PY-EXPR: change record INDEX of an export with PY-EXPR on r,
# then recompute its event_hash and every later link and hash, as an
# attacker would, so that only the check of what was changed can object
rechain() {
	append_n 4
	python3 - "$1" "$2" "$(sdir)/audit.jsonl" <<'PY'
import hashlib, json, sys
def digest(r):
    c = json.dumps(dict(r, event_hash=None), sort_keys=True,
                   separators=(",", ":"), ensure_ascii=True)
    return "sha256:" + hashlib.sha256(c.encode()).hexdigest()
at = int(sys.argv[1])
recs = [json.loads(l) for l in open(sys.argv[3])]
r = recs[at]
exec(sys.argv[2])
for i in range(at, len(recs)):
    if i > at:
        recs[i]["previous_event_hash"] = recs[i - 1]["event_hash"]
    recs[i]["event_hash"] = digest(recs[i])
with open("x.jsonl", "w") as f:
    for r in recs:
        f.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
PY
	run -65 --separate-stderr hw-audit verify x.jsonl
	[ "$output" = "" ]
}

@test "hw-audit verify: a re-chained export with a changed previous_event_hash fails" {
	rechain 2 'r["previous_event_hash"] = "sha256:" + "0" * 64'
	[ "$stderr" = "hw-audit: sequence 2: audit chain is broken: previous_event_hash does not match" ]
}

@test "hw-audit verify: a re-chained export whose first record has a previous_event_hash fails" {
	rechain 0 'r["previous_event_hash"] = "sha256:" + "0" * 64'
	[ "$stderr" = "hw-audit: sequence 0: audit chain is broken: previous_event_hash does not match" ]
}

@test "hw-audit verify: a re-chained export with a lower sequence fails" {
	rechain 2 'r["sequence"] = 1'
	[ "$stderr" = "hw-audit: sequence 2: audit record has sequence 1" ]
}

@test "hw-audit verify: a re-chained export with a higher sequence fails" {
	rechain 2 'r["sequence"] = 7'
	[ "$stderr" = "hw-audit: sequence 2: audit record has sequence 7" ]
}

@test "hw-audit verify: a re-chained export with another session_id fails" {
	rechain 2 'r["session_id"] = "other"'
	[ "$stderr" = "hw-audit: sequence 2: audit record belongs to another session" ]
}

@test "hw-audit verify: a deleted line fails" {
	append_n 4
	sed 2d "$(sdir)/audit.jsonl" >x.jsonl
	run -65 --separate-stderr hw-audit verify x.jsonl
	[[ "$stderr" == "hw-audit: sequence 1: "* ]]
}

@test "hw-audit verify: a duplicated line fails" {
	append_n 4
	sed 2p "$(sdir)/audit.jsonl" >x.jsonl
	run -65 --separate-stderr hw-audit verify x.jsonl
	[[ "$stderr" == "hw-audit: sequence 2: "* ]]
}

@test "hw-audit verify: reordered lines fail" {
	append_n 4
	awk 'NR == 2 { held = $0; next } { print } NR == 3 { print held }' "$(sdir)/audit.jsonl" >x.jsonl
	run -65 --separate-stderr hw-audit verify x.jsonl
	[[ "$stderr" == "hw-audit: sequence 1: "* ]]
}

@test "hw-audit verify: a truncated last line fails" {
	append_n 3
	head -c -20 "$(sdir)/audit.jsonl" >x.jsonl
	run -65 hw-audit verify x.jsonl
}

@test "hw-audit verify: a missing file is 66" {
	run -66 hw-audit verify nothing.jsonl
}

@test "hw-audit export: records the export, verifies, and writes it" {
	append_n 3
	run -0 hw-audit export --session session-main
	[ "$(jq -r .event_count <<<"$output")" = 4 ]
	[ "$(tail -1 "$(sdir)/events.jsonl" | jq -r .kind)" = audit.export.recorded ]
	[ "$(tail -1 "$(sdir)/events.jsonl" | jq -r .payload.path)" = "$PWD/$(sdir)/audit-export.jsonl" ]
	cmp "$(sdir)/audit-export.jsonl" "$(sdir)/audit.jsonl"
	[ "$(stat -c %a "$(sdir)/audit-export.jsonl")" = 600 ]
	run -0 hw-session replay session-main
}

@test "hw-audit export --output: a copy outside the store, never over a file" {
	append_n 2
	run -0 hw-audit export --session session-main --output copy.jsonl
	cmp copy.jsonl "$(sdir)/audit-export.jsonl"
	before=$(snapshot)
	run -1 --separate-stderr hw-audit export --session session-main --output copy.jsonl
	[ "$stderr" = "hw-audit: refusing to replace existing 'copy.jsonl'" ]
	[ "$(snapshot)" = "$before" ] # nothing recorded either
	run -2 --separate-stderr hw-audit export --session session-main --output .heartwood/x.jsonl
	[[ "$stderr" == *"inside .heartwood"* ]]
	[ ! -e .heartwood/x.jsonl ]
}

@test "hw-audit export: a missing session is 66 and creates nothing" {
	run -66 hw-audit export --session nobody
	[ ! -e .heartwood ]
}

@test "hw-audit export: no prompt, argument, command, path, output or secret leaves" {
	{
		draft user_message.recorded '{"actor_id":"human","command_id":"c1","content":"MARK-PROMPT"}'
		draft tool_call.proposed '{"tool_call_id":"t1","action_id":"a1","tool_name":"terminal","kind":"terminal","risk":"low","summary":"MARK-SUMMARY","arguments":{"command":"cat MARK-COMMAND","path":"/MARK-PATH"},"affected_paths":[{"path":"MARK-AFFECTED"}],"project_path":"/MARK-PROJECT"}'
		draft confirmation.requested '{"request":{"request_id":"r","tool_call_id":"t1","tool_name":"terminal","risk":"low","summary":"MARK-SUMMARY2","arguments":{"command":"MARK-COMMAND2"},"group_id":"g"}}'
		draft tool.execution.recorded '{"backend_id":"b","tool_call_id":"t1","action_id":"a1","tool_name":"terminal","exit_code":0,"summary":"MARK-SUMMARY3","result":"MARK-OUTPUT","result_truncated":false}'
		draft agent_message.emitted '{"content":"MARK-AGENT"}'
		draft error.recorded '{"backend_id":"b","code":"HW-AGENT-002","reason":"MARK-REASON at /MARK-PATH2","command":"chat"}'
		draft task.plan.updated '{"tasks":[{"title":"MARK-TASK","status":"todo"}]}'
		draft model.usage.updated '{"usage":{"usage_id":"total","model_name":"m","api_key":"MARK-SECRET","token":"MARK-TOKEN"}}'
		draft subagent.updated '{"subagent":{"invocation_id":"i","task_id":"t","agent_name":"a","role_label":"r","status":"running","parent_session_id":"p","parent_action_id":"x","prompt":"MARK-PROMPT2"}}'
		draft model_call.decision.recorded '{"decision":{"decision_id":"d","reason":"MARK-REASON2"},"attestation":{"reason":"MARK-ATTEST"}}'
	} | hw-append --session session-main >/dev/null
	append_n 1
	grep -q MARK-PROMPT "$(sdir)/events.jsonl" # the events do hold them
	hw-audit export --session session-main --output out.jsonl >/dev/null
	run grep -o 'MARK-[A-Z0-9]*' out.jsonl "$(sdir)/audit-export.jsonl"
	[ -z "$output" ] || { echo "leaked: $output"; return 1; }
}

@test "hw-audit checkpoint: an Ed25519 bundle of exactly two canonical files" {
	keys
	append_n 3
	run -0 --separate-stderr checkpoint cp
	[ "$(ls -A cp | tr '\n' ' ')" = "audit.jsonl checkpoint.json " ]
	[ "$(stat -c %a cp)" = 700 ]
	[ "$(stat -c %a cp/audit.jsonl cp/checkpoint.json | tr '\n' ' ')" = "600 600 " ]
	cmp cp/audit.jsonl "$(sdir)/audit-export.jsonl"
	[ "$(jq -c . cp/checkpoint.json)" = "$(jq -c . <<<"$output")" ]
	[ "$(jq -r .statement.audit_event_count cp/checkpoint.json)" = 4 ]
	[ "$(jq -r .signature.algorithm cp/checkpoint.json)" = ed25519 ]
	[ "$(jq -r .signature.public_key_sha256 cp/checkpoint.json)" = \
		"sha256:$(openssl pkey -pubin -in ed.pub -outform DER | sha256sum | cut -c1-64)" ]
	run -0 hw-audit verify-checkpoint cp --public-key ed.pub
	[ "$(jq -r .verified <<<"$output")" = true ]
}

# pycheck DIR PUB: Python's cryptography verifies the checkpoint signature
pycheck() {
	/usr/bin/python3 "$HW_ROOT/t/checkpoint_check.py" "$1" "$2"
}

@test "checkpoint: Python's cryptography verifies an Ed25519 signature from the public key alone" {
	keys
	append_n 2
	checkpoint cp >/dev/null
	run -0 pycheck cp ed.pub
}

@test "checkpoint: an ECDSA P-256 bundle verifies here and in Python" {
	keys
	append_n 2
	checkpoint cp p256.pem >/dev/null
	[ "$(jq -r .signature.algorithm cp/checkpoint.json)" = ecdsa-p256-sha256 ]
	run -0 hw-audit verify-checkpoint cp --public-key p256.pub
	run -0 pycheck cp p256.pub
	[ ! -e cp.note ] # signed notes are Ed25519 only
}

@test "checkpoint: the C2SP signed note carries the Merkle root and verifies" {
	keys
	append_n 5
	checkpoint cp >/dev/null
	root=$(hw-audit verify cp/audit.jsonl | jq -r .merkle_root)
	/usr/bin/python3 - cp.note ed.pub "$root" <<'PY'
import base64, hashlib, sys
from cryptography.hazmat.primitives import serialization
note = open(sys.argv[1], "rb").read().decode()
body, sigs = note.split("\n\n", 1)
body += "\n"
lines = body.split("\n")
assert lines[0] == "heartwood/lab-7/session-main", lines[0]
assert lines[1] == "6", lines[1]
assert base64.b64decode(lines[2]).hex() == sys.argv[3]
pub = serialization.load_pem_public_key(open(sys.argv[2], "rb").read())
raw = pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
name = "local-development"
kid = hashlib.sha256(name.encode() + b"\n\x01" + raw).digest()[:4]
[line] = [l for l in sigs.splitlines() if l]
dash, who, b64 = line.split(" ")
assert dash == "\u2014" and who == name
blob = base64.b64decode(b64)
assert blob[:4] == kid
pub.verify(blob[4:], body.encode())
print("note ok")
PY
}

@test "checkpoint: an existing output is never replaced" {
	keys
	append_n 2
	mkdir cp
	run -1 --separate-stderr checkpoint cp
	[ "$stderr" = "hw-audit: refusing to replace existing 'cp'" ]
	[ -z "$(ls -A cp)" ]
}

@test "checkpoint: a bad retention date or identifier is a usage error" {
	keys
	append_n 1
	run -2 hw-audit checkpoint --session session-main --output cp --deployment-id lab --retention-policy p --retain-until 2020-01-01 --key ed.pem
	run -2 hw-audit checkpoint --session session-main --output cp --deployment-id lab --retention-policy p --retain-until 2030-02-30 --key ed.pem
	run -2 hw-audit checkpoint --session session-main --output cp --deployment-id ../x --retention-policy p --retain-until 2030-01-01 --key ed.pem
	[ ! -e cp ]
}

@test "checkpoint: a private key readable by others is refused" {
	keys
	append_n 1
	chmod 644 ed.pem
	run -65 checkpoint cp
	[ ! -e cp ]
}

@test "checkpoint: a publish killed at every boundary leaves no partial bundle" {
	keys
	append_n 2
	cp -a .heartwood probe-store
	points=$(HW_FAULT_TRACE=1 checkpoint probe 2>&1 >/dev/null | grep -c fault-point)
	rm -rf probe probe.note .heartwood
	mv probe-store .heartwood
	for k in $(seq "$points"); do
		HW_FAULT_KILL_AT=$k checkpoint "cp-$k" >/dev/null 2>&1 || true
		if [ -e "cp-$k" ]; then
			hw-audit verify-checkpoint "cp-$k" --public-key ed.pub >/dev/null ||
				{ echo "k=$k: a partial bundle"; return 1; }
		fi
		run -0 hw-session replay session-main
	done
}

@test "checkpoint: of concurrent publishes to one output, exactly one wins" {
	keys
	append_n 2 s1
	append_n 2 s2
	checkpoint cp ed.pem s1 >o1 2>e1 &
	p1=$!
	checkpoint cp ed.pem s2 >o2 2>e2 &
	p2=$!
	r1=0 r2=0
	wait $p1 || r1=$?
	wait $p2 || r2=$?
	[ $((r1 == 0)) -ne $((r2 == 0)) ] || { echo "$r1 $r2"; cat e1 e2; return 1; }
	run -0 hw-audit verify-checkpoint cp --public-key ed.pub
}

# bundle_tamper CMD: make a good bundle, run CMD in it, expect 65
bundle_tamper() {
	keys
	append_n 3
	checkpoint cp >/dev/null
	(cd cp && eval "$1")
	run -65 --separate-stderr hw-audit verify-checkpoint cp --public-key "${2:-ed.pub}"
	[[ "$stderr" == "hw-audit: "* ]]
	echo "$stderr"
}

@test "verify-checkpoint: a flipped signature bit fails" {
	bundle_tamper 'python3 -c "
import json,base64
c=json.load(open(\"checkpoint.json\"))
s=bytearray(base64.b64decode(c[\"signature\"][\"value\"])); s[5]^=1
c[\"signature\"][\"value\"]=base64.b64encode(bytes(s)).decode()
open(\"checkpoint.json\",\"w\").write(json.dumps(c,sort_keys=True,separators=(\",\",\":\"))+\"\n\")"'
	[[ "$stderr" == *"the signature does not verify"* ]]
}

@test "verify-checkpoint: the wrong key fails" {
	keys
	append_n 1
	checkpoint cp >/dev/null
	run -65 --separate-stderr hw-audit verify-checkpoint cp --public-key p256.pub
	[[ "$stderr" == *"fingerprint"* ]]
}

@test "verify-checkpoint: an extra file in the bundle fails" {
	bundle_tamper 'touch notes.txt'
	[[ "$stderr" == *"exactly audit.jsonl and checkpoint.json"* ]]
}

@test "verify-checkpoint: a missing file in the bundle fails" {
	bundle_tamper 'rm audit.jsonl'
}

@test "verify-checkpoint: a non-canonical checkpoint.json fails" {
	bundle_tamper 'jq . checkpoint.json >c && mv c checkpoint.json'
	[[ "$stderr" == *"checkpoint.json is not in canonical form"* ]]
}

@test "verify-checkpoint: a non-canonical but equivalent audit.jsonl fails" {
	bundle_tamper 'jq -c . audit.jsonl | sed "s/,/, /" >a && mv a audit.jsonl'
	[[ "$stderr" == *"audit.jsonl is not in canonical form"* ]]
}

@test "verify-checkpoint: a changed audit record fails" {
	bundle_tamper 'sed -i "2s/\"content_chars\":9/\"content_chars\":8/" audit.jsonl'
	[[ "$stderr" == *"sequence 1"* ]]
}

@test "verify-checkpoint: a statement that does not describe the export fails" {
	bundle_tamper 'jq -c --sort-keys ".statement.audit_event_count=3" checkpoint.json >c && mv c checkpoint.json'
	[[ "$stderr" == *"audit_event_count does not match"* ]]
}

# resign PY-EXPR: a good bundle in cp whose statement st is changed by
# PY-EXPR and signed again with the bundle's own key, so that only the
# check that the statement describes the export can object
resign() {
	keys
	append_n 3
	checkpoint cp >/dev/null
	python3 - "$1" <<'PY'
import base64, json, sys
from cryptography.hazmat.primitives import serialization
def canon(o):
    return json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
c = json.load(open("cp/checkpoint.json"))
st, sig = c["statement"], c["signature"]
exec(sys.argv[1])
key = serialization.load_pem_private_key(open("ed.pem", "rb").read(), None)
signed = {k: sig[k] for k in ("algorithm", "key_id", "key_version",
                              "public_key_sha256", "signer_id")}
msg = b"heartwood.audit-checkpoint-signature.v1\x00" + canon(dict(signed, statement=st)).encode()
sig["value"] = base64.b64encode(key.sign(msg)).decode()
open("cp/checkpoint.json", "w").write(canon(c) + "\n")
PY
}

@test "verify-checkpoint: a statement signed again unchanged verifies" {
	resign 'pass'
	run -0 hw-audit verify-checkpoint cp --public-key ed.pub
}

@test "verify-checkpoint: a re-signed statement with another terminal_event_hash fails" {
	resign 'st["terminal_event_hash"] = "sha256:" + "0" * 64'
	run -65 --separate-stderr hw-audit verify-checkpoint cp --public-key ed.pub
	[ "$output" = "" ]
	[ "$stderr" = "hw-audit: checkpoint is invalid: statement terminal_event_hash does not match audit.jsonl" ]
}

@test "verify-checkpoint: a re-signed statement naming another session fails" {
	resign 'st["session_id"] = "session-other"'
	run -65 --separate-stderr hw-audit verify-checkpoint cp --public-key ed.pub
	[ "$output" = "" ]
	[ "$stderr" = "hw-audit: checkpoint is invalid: statement session_id does not match audit.jsonl" ]
}

@test "verify-checkpoint: a re-signed statement with another size fails" {
	resign 'st["audit_size_bytes"] += 1'
	run -65 --separate-stderr hw-audit verify-checkpoint cp --public-key ed.pub
	[ "$output" = "" ]
	[ "$stderr" = "hw-audit: checkpoint is invalid: statement audit_size_bytes does not match audit.jsonl" ]
}

@test "verify-checkpoint: a truncated export with a matching statement still fails on the signature" {
	bundle_tamper 'head -n 2 audit.jsonl >a && mv a audit.jsonl && python3 -c "
import json,hashlib
c=json.load(open(\"checkpoint.json\")); st=c[\"statement\"]; b=open(\"audit.jsonl\",\"rb\").read()
st[\"audit_event_count\"]=2; st[\"audit_size_bytes\"]=len(b); st[\"audit_content_sha256\"]=\"sha256:\"+hashlib.sha256(b).hexdigest()
st[\"terminal_event_hash\"]=json.loads(b.splitlines()[-1])[\"event_hash\"]
open(\"checkpoint.json\",\"w\").write(json.dumps(c,sort_keys=True,separators=(\",\",\":\"))+\"\n\")"'
	[[ "$stderr" == *"the signature does not verify"* ]]
}

@test "verify-checkpoint: a symlinked bundle fails" {
	keys
	append_n 1
	checkpoint cp >/dev/null
	ln -s cp link
	run -65 --separate-stderr hw-audit verify-checkpoint link --public-key ed.pub
	[[ "$stderr" == *"symbolic link"* ]]
}

@test "verify-checkpoint: a group-writable trusted key is refused" {
	keys
	append_n 1
	checkpoint cp >/dev/null
	chmod 664 ed.pub
	run -65 hw-audit verify-checkpoint cp --public-key ed.pub
}

@test "prove inclusion: every record's proof verifies, alone and against the signed checkpoint" {
	keys
	append_n 7
	checkpoint cp >/dev/null
	for i in 0 3 7; do
		hw-audit prove inclusion --session session-main "$i" >proof.json
		[ "$(jq -r .leaf_index proof.json)" = "$i" ]
		run -0 hw-audit verify-proof proof.json
		run -0 hw-audit verify-proof --root-from cp --public-key ed.pub <proof.json
	done
	run -2 hw-audit prove inclusion --session session-main 8
}

@test "prove inclusion: a tampered proof or record fails" {
	append_n 6
	hw-audit prove inclusion --session session-main 2 >proof.json
	jq -c '.proof[0] |= (.[0:63] + (if .[63:] == "0" then "1" else "0" end))' proof.json >p1.json
	run -65 hw-audit verify-proof p1.json
	jq -c '.leaf_index = 3' proof.json >p2.json
	run -65 hw-audit verify-proof p2.json
	jq -c '.record.payload.content_chars = 0' proof.json >p3.json
	run -65 hw-audit verify-proof p3.json
	# a proof also fits neighbouring sizes with the same root (RFC 9162
	# checks shape, not size): size and root must come from one
	# checkpoint, which --root-from enforces
	jq -c '.tree_size = 12' proof.json >p4.json
	run -65 hw-audit verify-proof p4.json
}

@test "merkle: the root matches an independent implementation" {
	append_n 13
	root=$(hw-audit verify --session session-main | jq -r .merkle_root)
	[ "$root" = "$(mth_root "$(sdir)/audit.jsonl")" ]
	# past two batches of 64 leaves (hashed a level at a time) and some
	append_n 140
	root=$(hw-audit verify --session session-main | jq -r .merkle_root)
	[ "$root" = "$(mth_root "$(sdir)/audit.jsonl")" ]
}

@test "prove consistency: a later checkpoint extends an earlier one" {
	keys
	append_n 5
	checkpoint cp1 >/dev/null
	append_n 4
	checkpoint cp2 >/dev/null
	hw-audit prove consistency cp1 cp2 >proof.json
	[ "$(jq -c '[.size1,.size2]' proof.json)" = '[6,11]' ]
	run -0 hw-audit verify-proof proof.json
	run -0 hw-audit verify-proof --root-from cp2 --public-key ed.pub proof.json
	jq -c '.root1 = .root2' proof.json >bad.json
	run -65 hw-audit verify-proof bad.json
}

@test "prove consistency: an older checkpoint detects a truncated later log" {
	keys
	append_n 6
	checkpoint cp1 >/dev/null
	# both logs cut back to 3 pairs: the chain alone cannot tell
	for f in events audit; do head -n 3 "$(sdir)/$f.jsonl" >t; mv t "$(sdir)/$f.jsonl"; done
	rm -f "$(sdir)/audit-export.jsonl"
	run -0 hw-session replay session-main
	checkpoint cp2 >/dev/null
	run -65 --separate-stderr hw-audit prove consistency cp1 cp2
	[[ "$stderr" == *"it was truncated"* ]]
}

@test "prove consistency: an older checkpoint detects a rewritten later log" {
	keys
	append_n 4
	checkpoint cp1 >/dev/null
	rm -rf "$(sdir)"
	drafts 9 | sed 's/message /rewritten /' | hw-append --session session-main >/dev/null
	checkpoint cp2 >/dev/null
	run -65 --separate-stderr hw-audit prove consistency cp1 cp2
	[[ "$stderr" == *"does not extend the older checkpoint"* ]]
}

@test "hw-audit: usage errors" {
	run -2 hw-audit
	run -2 hw-audit frobnicate
	run -2 hw-audit export
	run -2 hw-audit checkpoint --session s --output o
	run -2 hw-audit prove inclusion --session s
	run -2 --separate-stderr hw-audit verify-checkpoint cp
	[[ "$stderr" == *"needs --public-key"* ]]
}

@test "merkle: roots and every proof of random trees match the naive Python model" {
	make -s -C "$HW_ROOT" t/unit/merkle_test >/dev/null
	python3 -c '
import json, random
r = random.Random(9162)
for n in list(range(0, 18)) + [r.randint(18, 70) for _ in range(12)]:
    print(json.dumps([bytes(r.getrandbits(8) for _ in range(r.randint(0, 40))).hex() for _ in range(n)]))' >trees.jsonl
	python3 "$HW_ROOT/t/merkle_ref.py" <trees.jsonl >want.jsonl
	"$HW_ROOT/t/unit/merkle_test" --ref <trees.jsonl >got.jsonl
	[ "$(wc -l <want.jsonl)" -eq 30 ]
	cmp want.jsonl got.jsonl
}

@test "checkpoint: t/sign_check.py confirms the signature and the fingerprint" {
	keys
	append_n 2
	checkpoint cp >/dev/null
	python3 - <<'PY'
import base64, json
cp = json.load(open("cp/checkpoint.json"))
sig = cp["signature"]
body = {k: sig[k] for k in ("algorithm", "key_id", "key_version", "public_key_sha256", "signer_id")}
body["statement"] = cp["statement"]
open("msg", "wb").write(b"heartwood.audit-checkpoint-signature.v1\x00" + json.dumps(
    body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode())
open("sig", "wb").write(base64.b64decode(sig["value"]))
PY
	run -0 /usr/bin/python3 "$HW_ROOT/t/sign_check.py" ed.pub ed25519 msg sig
	[ "$output" = "$(jq -r .signature.public_key_sha256 cp/checkpoint.json)" ]
}

@test "merkle cache: proofs follow the log as it grows, and a rewritten log rebuilds it" {
	append_n 5
	hw-audit prove inclusion --session session-main 2 >p1.json
	[ -d "$(sdir)/.merkle" ]
	[ "$(jq -r .tree_size p1.json)" = 5 ]
	append_n 4
	hw-audit prove inclusion --session session-main 7 >p2.json
	[ "$(jq -r .tree_size p2.json)" = 9 ]
	[ "$(jq -r .root p2.json)" = "$(hw-audit verify --session session-main | jq -r .merkle_root)" ]
	run -0 hw-audit verify-proof p2.json
	# the log is rewritten from record 3 on: the cache notices and rebuilds
	for f in events audit; do head -n 3 "$(sdir)/$f.jsonl" >t; mv t "$(sdir)/$f.jsonl"; done
	drafts 6 | sed 's/message /other /' | hw-append --session session-main >/dev/null
	hw-audit prove inclusion --session session-main 8 >p3.json
	[ "$(jq -r .root p3.json)" = "$(hw-audit verify --session session-main | jq -r .merkle_root)" ]
	run -0 hw-audit verify-proof p3.json
}

@test "merkle cache: a corrupted cache can only produce proofs that fail" {
	keys
	append_n 6
	checkpoint cp >/dev/null
	hw-audit prove inclusion --session session-main 1 >/dev/null
	printf '\xff' | dd of="$(sdir)/.merkle/L00" bs=1 seek=0 conv=notrunc 2>/dev/null
	hw-audit prove inclusion --session session-main 1 >p.json
	run -65 hw-audit verify-proof --root-from cp --public-key ed.pub p.json
}

@test "prove consistency --session: from the Merkle cache, against an older signed checkpoint" {
	keys
	append_n 5
	checkpoint cp1 >/dev/null
	old=$(jq -r .statement.audit_event_count cp1/checkpoint.json)
	append_n 7
	hw-audit prove consistency --session session-main "$old" >proof.json
	[ "$(jq -r .root1 proof.json)" = "$(hw-audit verify cp1/audit.jsonl | jq -r .merkle_root)" ]
	[ "$(jq -r .size2 proof.json)" = 13 ]
	run -0 hw-audit verify-proof proof.json
	run -65 --separate-stderr hw-audit prove consistency --session session-main 99
	[[ "$stderr" == *"it was truncated"* ]]
	run -2 hw-audit prove consistency --session session-main x
}

@test "verify-checkpoint: a bundle written independently in Python verifies here" {
	keys
	append_n 4
	hw-audit export --session session-main --output export.jsonl >/dev/null
	/usr/bin/python3 - export.jsonl ed.pem pybundle <<'PY'
import base64, hashlib, json, os, sys
from cryptography.hazmat.primitives import serialization
def canon(o):
    return json.dumps(o, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
data = open(sys.argv[1], "rb").read()
recs = [json.loads(l) for l in data.splitlines()]
key = serialization.load_pem_private_key(open(sys.argv[2], "rb").read(), None)
spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                     serialization.PublicFormat.SubjectPublicKeyInfo)
statement = {
    "schema_version": "heartwood.audit-checkpoint-statement.v1",
    "deployment_id": "py-lab", "session_id": recs[0]["session_id"],
    "created_at": "2026-12-02T09:30:00.123456+00:00",
    "audit_filename": "audit.jsonl",
    "audit_schema_version": "heartwood.audit-event.v1",
    "audit_event_count": len(recs),
    "terminal_event_hash": recs[-1]["event_hash"],
    "audit_content_sha256": "sha256:" + hashlib.sha256(data).hexdigest(),
    "audit_size_bytes": len(data),
    "retention": {"schema_version": "heartwood.audit-retention.v1",
                  "policy_id": "py-policy", "retain_until": "2040-01-01"},
}
sig = {"algorithm": "ed25519", "signer_id": "py-signer", "key_id": "py-key",
       "key_version": "2026-1",
       "public_key_sha256": "sha256:" + hashlib.sha256(spki).hexdigest()}
msg = b"heartwood.audit-checkpoint-signature.v1\x00" + canon(dict(sig, statement=statement)).encode()
sig["value"] = base64.b64encode(key.sign(msg)).decode()
sig["schema_version"] = "heartwood.audit-checkpoint-signature.v1"
os.mkdir(sys.argv[3], 0o700)
open(sys.argv[3] + "/audit.jsonl", "wb").write(data)
open(sys.argv[3] + "/checkpoint.json", "w").write(canon({
    "schema_version": "heartwood.audit-checkpoint.v2",
    "statement": statement, "signature": sig}) + "\n")
PY
	chmod 600 pybundle/*
	run -0 hw-audit verify-checkpoint pybundle --public-key ed.pub
	[ "$(jq -r .statement.deployment_id <<<"$output")" = py-lab ]
	# and the same bundle with one byte of the statement changed does not
	sed -i 's/py-policy/py-polici/' pybundle/checkpoint.json
	run -65 hw-audit verify-checkpoint pybundle --public-key ed.pub
}

@test "prove: a record that leaves a defaulted field out is hashed with the default" {
	append_n 3
	# the reference's readers fill previous_event_hash: null when absent
	for f in events audit; do
		sed -i '1s/,"previous_event_hash":null//' "$(sdir)/$f.jsonl"
	done
	refute grep -q '"previous_event_hash":null' "$(sdir)/audit.jsonl"
	run -0 hw-session replay session-main
	hw-audit prove inclusion --session session-main 0 >p.json
	run -0 hw-audit verify-proof p.json
	[ "$(jq -r .root p.json)" = "$(hw-audit verify --session session-main | jq -r .merkle_root)" ]
	run -0 hw-audit verify "$(sdir)/audit.jsonl"
}

# ---------------------------------------------------------------------------
# verify-proof --from OLD --to NEW: a consistency proof bound to two signed
# checkpoints (bundles or their signed notes), both trees printed

# grown - cp1 of 6 records, then cp2 of 11, and the proof between them
# from the session's Merkle cache
grown() {
	keys
	append_n 5
	checkpoint cp1 >/dev/null
	append_n 4
	checkpoint cp2 >/dev/null
	hw-audit prove consistency --session session-main \
		"$(jq .statement.audit_event_count cp1/checkpoint.json)" >proof.json
}

# root DIR - the hex Merkle root of a bundle's export
root() { hw-audit verify "$1/audit.jsonl" | jq -r .merkle_root; }

@test "verify-proof --from --to: binds the proof to both checkpoints and prints both trees" {
	grown
	run -0 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key ed.pub proof.json
	[ "$stderr" = "" ]
	[ "$output" = "{\"kind\":\"consistency\",\"root1\":\"$(root cp1)\",\"root2\":\"$(root cp2)\",\"size1\":6,\"size2\":11,\"tree_size\":11,\"verified\":true}" ]
}

@test "verify-proof --from --to: the signed notes stand for their bundles" {
	grown
	run -0 --separate-stderr hw-audit verify-proof --from cp1.note --to cp2.note --public-key ed.pub <proof.json
	[ "$(jq -c '[.size1,.size2,.root1,.root2]' <<<"$output")" = "[6,11,\"$(root cp1)\",\"$(root cp2)\"]" ]
	run -0 hw-audit verify-proof --from cp1 --to cp2.note --public-key ed.pub proof.json
}

@test "verify-proof --from --to: a history replaced under the same session id fails" {
	keys
	append_n 4
	checkpoint cp1 >/dev/null
	rm -rf "$(sdir)"
	drafts 9 | sed 's/message /rewritten /' | hw-append --session session-main >/dev/null
	checkpoint cp2 >/dev/null
	hw-audit prove consistency --session session-main \
		"$(jq .statement.audit_event_count cp1/checkpoint.json)" >proof.json
	# the proof is sound for the new log's own prefix: only cp1 can tell
	run -0 hw-audit verify-proof proof.json
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key ed.pub proof.json
	[ "$output" = "" ]
	[ "$stderr" = "hw-audit: proof is invalid: its older tree (size 5, root $(jq -r .root1 proof.json)) is not that of checkpoint 'cp1' (size 5, root $(root cp1))" ]
}

@test "verify-proof --from --to: a proof ending at another tree than NEW fails" {
	grown
	append_n 2
	hw-audit prove consistency --session session-main 6 >later.json
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key ed.pub later.json
	[ "$stderr" = "hw-audit: proof is invalid: its newer tree (size 13, root $(jq -r .root2 later.json)) is not that of checkpoint 'cp2' (size 11, root $(root cp2))" ]
}

@test "verify-proof --from --to: OLD and NEW swapped fail" {
	grown
	run -65 --separate-stderr hw-audit verify-proof --from cp2 --to cp1 --public-key ed.pub proof.json
	[[ "$stderr" == "hw-audit: proof is invalid: its older tree (size 6, "*"is not that of checkpoint 'cp2' (size 11, "* ]]
}

@test "verify-proof --from --to: a checkpoint signed by another key fails" {
	grown
	openssl genpkey -algorithm ed25519 -out other.pem 2>/dev/null
	openssl pkey -in other.pem -pubout -out other.pub 2>/dev/null
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key other.pub proof.json
	[ "$stderr" = "hw-audit: checkpoint is invalid: the public key's fingerprint is not public_key_sha256" ]
	run -65 --separate-stderr hw-audit verify-proof --from cp1.note --to cp2 --public-key other.pub proof.json
	[[ "$stderr" == "hw-audit: signed note 'cp1.note': signed note has no signature by key "* ]]
}

@test "verify-proof --from --to: a tampered signed note fails" {
	grown
	sed -i '2s/.*/7/' cp1.note
	run -65 --separate-stderr hw-audit verify-proof --from cp1.note --to cp2 --public-key ed.pub proof.json
	[[ "$stderr" == "hw-audit: signed note 'cp1.note': signed note: invalid signature for key "* ]]
}

@test "verify-proof --from --to: checkpoints of two sessions fail" {
	keys
	append_n 3
	append_n 5 other
	checkpoint cp1 >/dev/null
	checkpoint cp2 ed.pem other >/dev/null
	hw-audit prove consistency --session other 4 >proof.json
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key ed.pub proof.json
	[ "$stderr" = "hw-audit: proof is invalid: checkpoint 'cp1' is of session 'session-main' and 'cp2' of session 'other'" ]
}

@test "verify-proof --from --to: an inclusion proof is refused" {
	grown
	hw-audit prove inclusion --session session-main 2 >incl.json
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp2 --public-key ed.pub incl.json
	[ "$stderr" = "hw-audit: proof is invalid: --from and --to bind a consistency proof, not an inclusion proof" ]
}

@test "verify-proof --from --to: a missing checkpoint is 66" {
	grown
	run -66 --separate-stderr hw-audit verify-proof --from nowhere --to cp2 --public-key ed.pub proof.json
	[ "$stderr" = "hw-audit: no checkpoint 'nowhere'" ]
}

@test "verify-proof: --from needs --to, and neither goes with --root-from" {
	grown
	run -2 hw-audit verify-proof --from cp1 --public-key ed.pub proof.json
	run -2 hw-audit verify-proof --to cp2 --public-key ed.pub proof.json
	run -2 hw-audit verify-proof --from cp1 --to cp2 --root-from cp2 --public-key ed.pub proof.json
}

@test "verify-proof: a consistency proof from size 0 is refused" {
	append_n 3
	hw-audit prove consistency --session session-main 1 >p.json
	python3 -c '
import json, sys
p = json.load(open("p.json"))
p.update(size1=0, proof=[], root1="e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
print(json.dumps(p))' >zero.json
	run -65 --separate-stderr hw-audit verify-proof zero.json
	[ "$stderr" = "hw-audit: proof is invalid: a consistency proof starts from a tree of at least one record (RFC 9162)" ]
}

@test "prove consistency --session: size 0 is refused" {
	append_n 3
	run -2 --separate-stderr hw-audit prove consistency --session session-main 0
	[ "$output" = "" ]
	[ "$stderr" = "hw-audit: invalid size '0': a consistency proof starts from a tree of at least one record (RFC 9162)" ]
}

# ---------------------------------------------------------------------------
# The README's audit examples, run as written: each block that starts with
# the line "# audit example (make check runs it as written)" becomes
# ex-N.sh, in the order of the README

readme_examples() {
	awk '
	$0 == "    # audit example (make check runs it as written)" {
		n++; f = "ex-" n ".sh"; next
	}
	f && /^    / { print substr($0, 5) >f; next }
	{ f = "" }' "$HW_ROOT/README"
	[ "$(ls ex-*.sh | wc -l)" -eq 3 ]
	openssl genpkey -algorithm ed25519 -out signer.pem 2>/dev/null
	openssl pkey -in signer.pem -pubout -out signer.pub.pem 2>/dev/null
	chmod 600 signer.pem
	append_n 4
	hw-audit export --session session-main --output session-audit.jsonl >/dev/null
}

@test "README: the audit examples run as written" {
	readme_examples
	run -0 --separate-stderr bash -e -o pipefail ex-1.sh
	[ "$output" = true ]
	[ "$stderr" = "" ]
	run -0 --separate-stderr bash -e -o pipefail ex-2.sh
	[ "${#lines[@]}" -eq 2 ]
	[ "$(jq -r .verified <<<"${lines[1]}")" = true ]
	[ "$stderr" = "" ]
	append_n 3
	run -0 --separate-stderr bash -e -o pipefail ex-3.sh
	[ "$(jq -c '[.verified,.size1,.size2]' <<<"${lines[1]}")" = '[true,6,10]' ]
	[ "$(jq -r .root2 <<<"${lines[1]}")" = "$(hw-audit verify cp-2/audit.jsonl | jq -r .merkle_root)" ]
	[ "$stderr" = "" ]
}

@test "README: its proof that the log only grew fails for a replaced history" {
	readme_examples
	bash -e -o pipefail ex-2.sh >/dev/null
	rm -rf "$(sdir)"
	drafts 9 | sed 's/message /rewritten /' | hw-append --session session-main >/dev/null
	run -65 --separate-stderr bash -e -o pipefail ex-3.sh
	[[ "$stderr" == *"hw-audit: proof is invalid: its older tree (size 6, root "*") is not that of checkpoint 'cp-1' (size 6, root "* ]]
}

@test "verify-proof --from --to: without --public-key the registry's profile pins the key and the signer" {
	export XDG_CONFIG_HOME="$BATS_TEST_TMPDIR/config"
	export HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY="$XDG_CONFIG_HOME/heartwood/checkpoint-signers.toml"
	hw-audit signer init-local >/dev/null
	k="$XDG_CONFIG_HOME/heartwood/local-checkpoint-private.pem"
	append_n 3
	checkpoint cp1 "$k" >/dev/null
	append_n 2
	checkpoint cp2 "$k" >/dev/null
	hw-audit prove consistency --session session-main 4 >proof.json
	run -0 --separate-stderr hw-audit verify-proof --from cp1.note --to cp2 proof.json
	[ "$(jq -c '[.verified,.size1,.size2]' <<<"$output")" = '[true,4,7]' ]
	# the right key under another signer id is not the profile's signer
	hw-audit checkpoint --session session-main --output cp3 --deployment-id lab-7 \
		--retention-policy irb-2026 --retain-until 2033-12-31 --key "$k" \
		--signer-id someone-else >/dev/null
	hw-audit prove consistency --session session-main 4 >proof3.json
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp3 proof3.json
	[ "$stderr" = "hw-audit: the signature's signer_id is not the one signer profile 'local-development' pins" ]
	run -65 --separate-stderr hw-audit verify-proof --from cp1 --to cp3.note proof3.json
	[[ "$stderr" == "hw-audit: signed note 'cp3.note': signed note has no signature by key local-development+"* ]]
}
