#!/usr/bin/env bats
# hw-skill tuf: the TUF client against a simulated repository served on
# loopback (t/tuf_sim.py), with the exact requests of each case and the
# stored metadata compared byte for byte with what was served.

load lib
load tuf

# faketime preloads libfaketime, which a sanitizer build must accept
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# a repository with one target, a.txt, in targets version 2
published() {
	sim init "$@" -- target targets a.txt hello -- publish targets
	sim_serve
	trust
}

@test "tuf init: copies the root and makes no request" {
	published
	cmp md/root.json sim/repo/metadata/1.root.json
	[ "$(md_files)" = "root.json " ]
	[ -z "$(reqs)" ]
}

@test "tuf init: a file that is not root metadata is refused" {
	published
	rm md/root.json
	run -1 --separate-stderr hw-skill tuf --metadata-dir md init \
		sim/repo/metadata/timestamp.json
	[ "$stderr" = "hw-skill: invalid metadata 'sim/repo/metadata/timestamp.json': it is not of the expected type" ]
	printf '{"signed":' >bad.json
	run -1 --separate-stderr hw-skill tuf --metadata-dir md init bad.json
	[[ "$stderr" == "hw-skill: invalid metadata 'bad.json': "* ]]
	[ "$(md_files)" = "" ]
}

@test "tuf: usage errors exit 2 and options come in any order" {
	published
	run -2 --separate-stderr hw-skill tuf init sim/repo/metadata/1.root.json
	[[ "$stderr" == usage:* ]]
	run -2 --separate-stderr hw-skill tuf --metadata-dir md refresh
	run -2 --separate-stderr tuf --target-dir tg download
	run -2 --separate-stderr tuf frobnicate
	run -2 --separate-stderr hw-skill tuf --metadata-dir md --metadata-url "$URL/metadata" init x
	run -0 hw-skill tuf --metadata-dir md --target-base-url "$URL/targets" \
		--target-name a.txt --metadata-url "$URL/metadata" --target-dir tg download
	cmp tg/a.txt sim/repo/targets/a.txt
}

@test "tuf refresh: the workflow's requests, and the bytes stored as served" {
	published
	run -0 --separate-stderr tuf refresh
	[ "$output" = '{"root":1,"snapshot":2,"targets":2,"timestamp":2}' ]
	[ -z "$stderr" ]
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json
/metadata/snapshot.json
/metadata/targets.json" ]
	same_bytes root timestamp snapshot targets
	[ "$(md_files)" = "root.json snapshot.json targets.json timestamp.json " ]
}

@test "tuf refresh: nothing new asks for root and timestamp only" {
	published
	run -0 tuf refresh
	reqs >/dev/null
	run -0 tuf refresh
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json" ]
}

@test "tuf refresh: a timestamp with a byte more is stored with it" {
	published
	run -0 tuf refresh
	sim publish
	printf ' ' >>sim/repo/metadata/timestamp.json
	run -0 tuf refresh
	same_bytes timestamp snapshot
}

@test "tuf download: fetches once, then finds the stored target" {
	published
	run -0 --separate-stderr fetch a.txt
	[ "$output" = '{"downloaded":true,"file":"a.txt","length":5,"target":"a.txt"}' ]
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json
/metadata/snapshot.json
/metadata/targets.json
/targets/a.txt" ]
	cmp tg/a.txt sim/repo/targets/a.txt
	run -0 fetch a.txt
	[ "$output" = '{"downloaded":false,"file":"a.txt","length":5,"target":"a.txt"}' ]
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json" ]
}

@test "tuf download: a changed target is fetched again under the same name" {
	published
	run -0 fetch a.txt
	sim target targets a.txt 'hello, again' -- publish targets
	run -0 fetch a.txt
	[ "$(cat tg/a.txt)" = "hello, again" ]
}

@test "tuf download: targets in order, the first failure ends it" {
	published
	sim target targets b.txt bee -- publish targets
	run -1 --separate-stderr fetch a.txt missing.txt b.txt
	[ "$output" = '{"downloaded":true,"file":"a.txt","length":5,"target":"a.txt"}' ]
	[ "$stderr" = "hw-skill: no role lists target 'missing.txt'" ]
	[ ! -e tg/b.txt ]
}

@test "tuf download: a target with a wrong hash is refused and not stored" {
	published
	printf 'HELLO' >sim/repo/targets/a.txt
	run -1 --separate-stderr fetch a.txt
	[ "$stderr" = "hw-skill: 'a.txt' does not match its sha256 hash" ]
	[ -z "$(ls -A tg)" ]
}

@test "tuf download: a target longer than listed is cut at its length" {
	published
	printf 'hello, world' >sim/repo/targets/a.txt
	run -1 --separate-stderr fetch a.txt
	[[ "$stderr" == "hw-skill: cannot fetch '$URL/targets/a.txt': more than 5 bytes" ]]
	[ -z "$(ls -A tg)" ]
}

@test "tuf download: a target shorter than listed is refused" {
	published
	printf 'hell' >sim/repo/targets/a.txt
	run -1 --separate-stderr fetch a.txt
	[ "$stderr" = "hw-skill: target 'a.txt' is 4 bytes, not the 5 listed" ]
}

@test "tuf download: a hash of an unknown algorithm fails the target" {
	published
	state '.roles.targets.targets["a.txt"].hashes = {"md5": "5d41402abc4b2a76b9719d911017c592"}'
	sim publish targets
	run -1 --separate-stderr fetch a.txt
	[ "$stderr" = "hw-skill: 'a.txt' lists the unsupported hash 'md5'" ]
}

@test "tuf: every key type: ECDSA P-256, Ed25519 and RSA-PSS" {
	for kt in ecdsa ed25519 rsa; do
		rm -rf sim md tg port requests
		if [ -n "${SIM_PID:-}" ]; then kill "$SIM_PID"; wait "$SIM_PID" || :; fi
		published --keytype "$kt"
		jq -e --arg kt "$kt" '.signed.keys[] | select(.keytype == $kt)' \
			sim/repo/metadata/root.json >/dev/null
		run -0 fetch a.txt
		cmp tg/a.txt sim/repo/targets/a.txt
	done
}

@test "tuf: a signature by the wrong key does not count" {
	published
	run -0 tuf refresh
	# the snapshot signed by the targets key
	state '.roles.snapshot.keyids = [$k]' --arg k "$(keyid targets)"
	sim publish
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'snapshot' has 0 of the 1 signatures it needs" ]
	same_bytes root
	[ "$(jq .signed.version md/snapshot.json)" = 2 ]
}

@test "tuf: a tampered signed part fails its signature" {
	published
	sed -i 's/"version": 2/"version":  2/; s/"expires": "/"expires": "1/' \
		sim/repo/metadata/timestamp.json
	run -1 --separate-stderr tuf refresh
	[[ "$stderr" == "hw-skill: invalid metadata 'timestamp': expires"* ]]
	sim publish
	python3 - <<'PY'
import json
p = "sim/repo/metadata/timestamp.json"
d = json.load(open(p))
d["signed"]["meta"]["snapshot.json"]["version"] += 1
json.dump(d, open(p, "w"))
PY
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'timestamp' has 0 of the 1 signatures it needs" ]
	[ "$(md_files)" = "root.json " ]
}

@test "tuf: root rotation 1 to 2 to 3 with threshold changes" {
	published
	run -0 tuf refresh
	reqs >/dev/null
	# 2: two new keys, threshold 2, signed by the old key and both new
	sim root --keys 2 --threshold 2
	# 3: three new keys, threshold 1 (signed by both of 2's and one new)
	sim root --keys 3 --threshold 1 --new-signers 1
	run -0 tuf refresh
	[ "$output" = '{"root":3,"snapshot":2,"targets":2,"timestamp":2}' ]
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/3.root.json
/metadata/4.root.json
/metadata/timestamp.json" ]
	cmp md/root.json sim/repo/metadata/3.root.json
}

@test "tuf: a new root needs a threshold of the old root's keys" {
	published
	sim root --keys 2 --threshold 1 --old-signers 0
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'root' has 0 of the 1 signatures it needs" ]
	cmp md/root.json sim/repo/metadata/1.root.json
}

@test "tuf: a new root needs a threshold of its own keys" {
	published
	sim root --keys 3 --threshold 2 --new-signers 1
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'root' has 1 of the 2 signatures it needs" ]
	cmp md/root.json sim/repo/metadata/1.root.json
}

@test "tuf: a key rotated away no longer signs a root" {
	published
	old=$(keyid root)
	sim root --keys 1
	new=$(keyid root)
	run -0 tuf refresh
	# 3 signed by the key root 2 dropped and the new one of 3 only
	sim root --keys 1 --sign-with "$old,$(keyid root)"
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'root' has 0 of the 1 signatures it needs" ]
	cmp md/root.json sim/repo/metadata/2.root.json
	# signed by 2's key as well, it is trusted
	sim set root version 2 -- root --sign-with "$new,$(keyid root)"
	run -0 tuf refresh
	cmp md/root.json sim/repo/metadata/3.root.json
}

@test "tuf: each key id counts once towards a threshold" {
	published
	sim root --keys 2 --threshold 2 --new-signers 1
	python3 - <<'PY'
import json
p = "sim/repo/metadata/2.root.json"
d = json.load(open(p))
s = d["signatures"]
s.append(dict(s[-1]))
json.dump(d, open(p, "w"))
PY
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: invalid metadata 'root': two signatures share a keyid" ]
}

@test "tuf: a root that skips a version is refused" {
	published
	sim root
	sim set root version 3 -- sign root
	cp sim/repo/metadata/3.root.json sim/repo/metadata/2.root.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: root version 3 follows 1" ]
	cmp md/root.json sim/repo/metadata/1.root.json
}

@test "tuf: rollback of the timestamp is refused" {
	published
	cp sim/repo/metadata/timestamp.json old-timestamp.json
	sim publish
	run -0 tuf refresh
	cp old-timestamp.json sim/repo/metadata/timestamp.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: timestamp version 2 is older than the trusted 3" ]
	[ "$(jq .signed.version md/timestamp.json)" = 3 ]
}

@test "tuf: a timestamp that lists an older snapshot is refused" {
	published
	run -0 tuf refresh
	sim set timestamp snapshot-version 1 -- set timestamp version 5 -- sign timestamp
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: timestamp lists snapshot version 1, older than the trusted 2" ]
}

@test "tuf: rollback of the snapshot's targets version is refused" {
	published
	run -0 tuf refresh
	sim set snapshot role-version targets.json=1 -- publish
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: snapshot lists 'targets.json' version 1, older than the trusted 2" ]
	[ "$(jq .signed.version md/snapshot.json)" = 2 ]
}

@test "tuf: a snapshot that drops a role is refused" {
	published
	sim delegate targets a -- publish targets
	run -0 tuf refresh
	state 'del(.roles.a) | .roles.targets.delegations = []'
	sim publish targets
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: snapshot no longer lists 'a.json'" ]
}

@test "tuf: rollback of targets is refused" {
	published
	cp sim/repo/metadata/targets.json old-targets.json
	sim publish targets
	cp old-targets.json sim/repo/metadata/targets.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: metadata 'targets' version 2 is not the 3 snapshot lists" ]
	[ ! -e md/targets.json ]
}

@test "tuf: rollback of root (an old root served as the next) is refused" {
	published
	sim root
	run -0 tuf refresh
	cp sim/repo/metadata/1.root.json sim/repo/metadata/3.root.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: root version 1 follows 2" ]
	cmp md/root.json sim/repo/metadata/2.root.json
}

@test "tuf: mix and match: a snapshot not the version the timestamp lists" {
	published
	run -0 tuf refresh
	sim set timestamp snapshot-version 7 -- publish
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: snapshot version 3 is not the 7 timestamp lists" ]
	[ "$(jq .signed.version md/snapshot.json)" = 2 ]
}

@test "tuf: freeze: an expired timestamp (the clock moved by faketime)" {
	published
	sim set timestamp expires "$(days 10)" -- publish
	run -0 tuf refresh
	run -1 --separate-stderr faketime -f +20d hw-skill tuf --metadata-url "$URL/metadata" --metadata-dir md refresh
	[ "$stderr" = "hw-skill: metadata 'timestamp' version 3 has expired" ]
}

@test "tuf: freeze: an expired snapshot" {
	published
	sim set snapshot expires "$(days 10)" -- publish
	run -1 --separate-stderr faketime -f +20d hw-skill tuf --metadata-url "$URL/metadata" --metadata-dir md refresh
	[ "$stderr" = "hw-skill: metadata 'snapshot' version 3 has expired" ]
	[ "$(md_files)" = "root.json timestamp.json " ]
}

@test "tuf: freeze: expired targets" {
	published
	sim set targets expires "$(days 10)" -- publish targets
	run -0 tuf refresh
	run -1 --separate-stderr faketime -f +20d hw-skill tuf --metadata-url "$URL/metadata" --metadata-dir md refresh
	[ "$stderr" = "hw-skill: metadata 'targets' version 3 has expired" ]
}

@test "tuf: freeze: an expired root, even after rotation" {
	published
	sim set root expires "$(days 10)" -- root
	run -0 tuf refresh
	run -1 --separate-stderr faketime -f +20d hw-skill tuf --metadata-url "$URL/metadata" --metadata-dir md refresh
	[ "$stderr" = "hw-skill: metadata 'root' version 2 has expired" ]
}

@test "tuf: fast-forward recovery after the timestamp key rotates" {
	published
	# an attacker with the timestamp key raised its version
	sim set timestamp version 1000 -- sign timestamp
	run -0 tuf refresh
	[ "$(jq .signed.version md/timestamp.json)" = 1000 ]
	# the repository rotates the key and starts again below 1000
	sim root --rotate timestamp -- set timestamp version 3 -- sign timestamp
	run -0 tuf refresh
	[ "$output" = '{"root":2,"snapshot":2,"targets":2,"timestamp":3}' ]
	same_bytes timestamp
}

@test "tuf: without a key rotation the same versions stay a floor" {
	published
	sim set timestamp version 1000 -- sign timestamp
	run -0 tuf refresh
	sim root -- set timestamp version 3 -- sign timestamp
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: timestamp version 3 is older than the trusted 1000" ]
}

@test "tuf: fast-forward recovery after the snapshot key rotates" {
	published
	sim set snapshot version 500 -- publish
	run -0 tuf refresh
	sim root --rotate snapshot -- set snapshot version 1 -- publish
	run -0 tuf refresh
	[ "$output" = '{"root":2,"snapshot":2,"targets":2,"timestamp":4}' ]
}

@test "tuf: consistent snapshots: versioned metadata and hash-prefixed targets" {
	sim init --consistent -- target targets d/a.txt hello -- publish targets
	sim_serve
	trust
	h=$(printf hello | sha256sum | cut -d' ' -f1)
	run -0 fetch d/a.txt
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json
/metadata/2.snapshot.json
/metadata/2.targets.json
/targets/d/$h.a.txt" ]
	[ "$(md_files)" = "root.json snapshot.json targets.json timestamp.json " ]
	cmp md/snapshot.json sim/repo/metadata/2.snapshot.json
	cmp md/targets.json sim/repo/metadata/2.targets.json
	[ "$(cat tg/d%2Fa.txt)" = hello ]
}

@test "tuf: lengths and hashes of snapshot and targets as listed" {
	published --meta-hashes
	run -0 tuf refresh
	sim publish targets
	printf ' ' >>sim/repo/metadata/targets.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: cannot fetch '$URL/metadata/targets.json': more than $(($(stat -c %s sim/repo/metadata/targets.json) - 1)) bytes" ]
	sim publish targets
	sed -i 's/"_type": "targets"/"_type": "targetS"/' sim/repo/metadata/targets.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: 'targets' does not match its sha256 hash" ]
	sim publish
	sed -i 's/"_type": "snapshot"/"_type": "snapshoT"/' sim/repo/metadata/snapshot.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: 'snapshot' does not match its sha256 hash" ]
}

@test "tuf: an oversized timestamp is refused at the cap" {
	published
	sim set timestamp pad 20000 -- publish
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: cannot fetch '$URL/metadata/timestamp.json': more than 16384 bytes" ]
	[ "$(md_files)" = "root.json " ]
}

@test "tuf: an oversized root is refused at the cap" {
	published
	sim set root pad 520000 -- root
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: cannot fetch '$URL/metadata/2.root.json': more than 512000 bytes" ]
	cmp md/root.json sim/repo/metadata/1.root.json
}

@test "tuf: a redirect is not followed" {
	published
	echo "$URL/elsewhere" >sim/repo/.redirect
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: cannot fetch '$URL/metadata/2.root.json': HTTP 302" ]
	[ "$(reqs)" = "/metadata/2.root.json" ]
}

@test "tuf: a server that is not there fails the refresh" {
	published
	run -1 --separate-stderr hw-skill tuf --metadata-url http://127.0.0.1:9/m --metadata-dir md refresh
	[[ "$stderr" == "hw-skill: cannot fetch 'http://127.0.0.1:9/m/2.root.json': "* ]]
}

@test "tuf: delegations: a delegated role's target, its requests and files" {
	published
	sim delegate targets a --paths 'a/*' -- target a a/x.txt ex -- publish a targets
	run -0 fetch a/x.txt
	[ "$(reqs)" = "/metadata/2.root.json
/metadata/timestamp.json
/metadata/snapshot.json
/metadata/targets.json
/metadata/a.json
/targets/a/x.txt" ]
	same_bytes a targets
	[ "$(cat tg/a%2Fx.txt)" = ex ]
}

@test "tuf: delegations: a path that no pattern matches is not searched" {
	published
	sim delegate targets a --paths 'a/*' -- target a b/x.txt ex -- publish a targets
	run -1 --separate-stderr fetch b/x.txt
	[ "$stderr" = "hw-skill: no role lists target 'b/x.txt'" ]
	[ "$(reqs | tail -1)" = /metadata/targets.json ]
}

@test "tuf: delegations: patterns match part by part, hash prefixes by SHA-256" {
	published
	h=$(printf 'p/q.txt' | sha256sum | cut -c1-2)
	sim delegate targets deep --paths '*' -- target deep p/q.txt no -- \
		delegate targets byhash --prefixes "$h" -- target byhash p/q.txt yes -- \
		publish deep byhash targets
	run -0 fetch p/q.txt
	[ "$(cat tg/p%2Fq.txt)" = yes ]
	[ "$(reqs | grep -c deep)" = 0 ]
}

@test "tuf: delegations: pre-order, depth first, first match wins" {
	published
	sim delegate targets a -- delegate a a1 -- delegate targets b -- \
		target b t.txt from-b -- target a1 t.txt from-a -- publish a1 a b targets
	run -0 fetch t.txt
	[ "$(cat tg/t.txt)" = from-a ]
	[ "$(reqs | sed -n '5,$p' | tr '\n' ' ')" = "/metadata/a.json /metadata/a1.json /targets/t.txt " ]
}

@test "tuf: delegations: a terminating delegation ends the search" {
	published
	sim delegate targets t1 --terminating -- delegate targets t2 -- \
		target t2 t.txt two -- publish t1 t2 targets
	run -1 --separate-stderr fetch t.txt
	[ "$stderr" = "hw-skill: no role lists target 't.txt'" ]
	[ "$(reqs | sed -n '5,$p' | tr '\n' ' ')" = "/metadata/t1.json " ]
}

@test "tuf: delegations: a cycle visits each role once" {
	published
	sim delegate targets a -- delegate a b -- publish a b targets
	# b delegates back to a with a's keys
	state '.roles.b.delegations = [.roles.targets.delegations[0]]'
	sim publish b
	run -1 --separate-stderr fetch nowhere.txt
	[ "$stderr" = "hw-skill: no role lists target 'nowhere.txt'" ]
	[ "$(reqs | sed -n '5,$p' | tr '\n' ' ')" = "/metadata/a.json /metadata/b.json " ]
}

@test "tuf: delegations: at most 32 roles are visited" {
	published
	ops=(delegate targets r1)
	for i in $(seq 2 40); do ops+=(-- delegate "r$((i - 1))" "r$i"); done
	sim "${ops[@]}" -- target r40 deep.txt deep -- target r30 mid.txt mid -- \
		publish $(for i in $(seq 40 -1 1); do echo "r$i"; done) targets
	run -1 --separate-stderr fetch deep.txt
	[ "$stderr" = "hw-skill: no role lists target 'deep.txt'" ]
	# targets and r1 ... r32: 33 roles
	[ "$(reqs | grep -c '^/metadata/r')" = 32 ]
	run -0 fetch mid.txt
}

@test "tuf: delegations: names with / ? # and .. are percent-encoded" {
	published
	sim delegate targets 'a/b' --paths 'x/*' -- delegate 'a/b' 'q?x' --paths 'x/*' -- \
		delegate 'q?x' 'h#y' --paths 'x/*' -- delegate 'h#y' '../z' --paths 'x/*' -- \
		target '../z' x/t.txt deep -- publish '../z' 'h#y' 'q?x' 'a/b' targets
	run -0 fetch x/t.txt
	[ "$(reqs | sed -n '5,$p' | tr '\n' ' ')" = "/metadata/a%2Fb.json /metadata/q%3Fx.json /metadata/h%23y.json /metadata/..%2Fz.json /targets/x/t.txt " ]
	[ "$(md_files)" = "..%2Fz.json a%2Fb.json h%23y.json q%3Fx.json root.json snapshot.json targets.json timestamp.json " ]
	cmp md/..%2Fz.json sim/repo/metadata/..%2Fz.json
	[ ! -e z.json ]
}

@test "tuf: delegations: a delegated role signed by the wrong key" {
	published
	sim delegate targets a -- target a t.txt x -- publish a targets
	sim set a signers "$(keyid targets)" -- publish a
	run -1 --separate-stderr fetch t.txt
	[ "$stderr" = "hw-skill: metadata 'a' has 0 of the 1 signatures it needs" ]
	[ ! -e md/a.json ]
}

@test "tuf: delegations: a reserved or repeated role name is refused" {
	published
	sim delegate targets a -- publish targets
	state '.roles.targets.delegations[0].name = "snapshot"'
	sim publish targets
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: invalid metadata 'targets': a delegated role has a top role's name" ]
	state '.roles.targets.delegations[0].name = "a" | .roles.targets.delegations += .roles.targets.delegations'
	sim publish targets
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: invalid metadata 'targets': two delegated roles share a name" ]
}

@test "tuf: malformed metadata: each case refused, nothing stored" {
	published
	for edit in '.signed._type = "root"' '.signed.spec_version = "2.0.0"' \
		'.signed.version = 0' '.signed.version = 1.5' '.signed.expires = "tomorrow"' \
		'.signatures = {}' '.signed.meta = []' 'del(.signed.meta["snapshot.json"])' \
		'.signed.meta["snapshot.json"].version = "2"' '.signed.x = 1.5'; do
		sim publish
		edit_md timestamp.json "$edit"
		run -1 --separate-stderr tuf refresh
		[[ "$stderr" == "hw-skill: invalid metadata 'timestamp': "* ]] || { echo "$edit: $stderr"; return 1; }
		[ "$(md_files)" = "root.json " ]
	done
}

@test "tuf: an unsupported key type makes the root invalid" {
	published
	jq '.signed.keys[.signed.keys | keys[0]].keytype = "dsa"' \
		sim/repo/metadata/1.root.json >r.json
	run -1 --separate-stderr hw-skill tuf --metadata-dir md2 init r.json
	[[ "$stderr" == "hw-skill: key '"*"' has the unsupported type 'dsa' and scheme 'ecdsa-sha2-nistp256'" ]]
}

@test "tuf: a corrupt trusted root stops the client before any request" {
	published
	printf '{}' >md/root.json
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: invalid metadata 'md/root.json': it has no signed object" ]
	[ -z "$(reqs)" ]
	rm md/root.json
	run -1 --separate-stderr tuf refresh
	[[ "$stderr" == "hw-skill: no trusted root in 'md': "* ]]
}

@test "tuf: a failed update leaves no temporary files and can update later" {
	published
	run -0 tuf refresh
	sim set timestamp pad 20000 -- publish
	run -1 tuf refresh
	sim set timestamp pad 0 -- publish
	run -0 tuf refresh
	[ "$(md_files)" = "root.json snapshot.json targets.json timestamp.json " ]
	same_bytes timestamp snapshot targets
}

@test "tuf: file:// sources read inside the repository only" {
	sim init -- target targets a.txt hello -- target targets d/b.txt bee -- publish targets
	mkdir md tg
	trust
	F="file://$PROJ/sim/repo"
	run -0 hw-skill tuf --metadata-url "$F/metadata" --metadata-dir md \
		--target-name a.txt --target-name d/b.txt --target-dir tg \
		--target-base-url "$F/targets" download
	same_bytes root timestamp snapshot targets
	[ "$(cat tg/d%2Fb.txt)" = bee ]
	# a symlink where a target was
	rm -rf tg/*
	mv sim/repo/targets/a.txt sim/repo/a.txt
	ln -s ../a.txt sim/repo/targets/a.txt
	run -1 --separate-stderr hw-skill tuf --metadata-url "$F/metadata" --metadata-dir md \
		--target-name a.txt --target-dir tg --target-base-url "$F/targets" download
	[ "$stderr" = "hw-skill: cannot fetch '$F/targets/a.txt': not a regular file inside the repository" ]
	# a directory that is a symlink on the way
	mv sim/repo/targets/d sim/repo/d
	ln -s ../d sim/repo/targets/d
	run -1 --separate-stderr hw-skill tuf --metadata-url "$F/metadata" --metadata-dir md \
		--target-name d/b.txt --target-dir tg --target-base-url "$F/targets" download
	[ "$stderr" = "hw-skill: cannot fetch '$F/targets/d/b.txt': not a regular file inside the repository" ]
	[ -z "$(ls -A tg)" ]
}

@test "tuf: file:// refuses .. in a target path" {
	sim init -- target targets ../secret.txt hello -- publish targets
	echo hello >sim/repo/secret.txt
	mkdir md tg
	trust
	F="file://$PROJ/sim/repo"
	run -1 --separate-stderr hw-skill tuf --metadata-url "$F/metadata" --metadata-dir md \
		--target-name ../secret.txt --target-dir tg --target-base-url "$F/targets" download
	[ "$stderr" = "hw-skill: cannot fetch '$F/targets/../secret.txt': not a regular file inside the repository" ]
	[ -z "$(ls -A tg)" ]
}

@test "tuf: a delegated role name with a NUL byte is refused" {
	published
	sim delegate targets a -- publish targets
	state '.roles.targets.delegations[0].name = "a\u0000b"'
	sim publish targets
	run -1 --separate-stderr tuf refresh
	[ "$stderr" = "hw-skill: invalid metadata 'targets': a delegated role has no name" ]
}

@test "tuf: an empty response is not metadata" {
	published
	: >sim/repo/metadata/timestamp.json
	run -1 --separate-stderr tuf refresh
	[[ "$stderr" == "hw-skill: invalid metadata 'timestamp': "* ]]
}

@test "tuf: succinct hash-bin delegations: the one bin of the path" {
	published
	sim succinct targets bin 3
	b=$(sim bin targets s/p.txt)
	sim target "$b" s/p.txt binned -- publish "$b" targets
	run -0 fetch s/p.txt
	[ "$(reqs | sed -n '5,$p' | tr '\n' ' ')" = "/metadata/$b.json /targets/s/p.txt " ]
	[ "$(cat tg/s%2Fp.txt)" = binned ]
	# a path listed by a bin it does not fall in is not found
	for i in $(seq 100); do
		q=s/q$i
		h=$(printf %s "$q" | sha256sum | cut -c1-8)
		[ "bin-$(( 0x$h >> 29 ))" = "$b" ] && break
	done
	[ "$(sim bin targets "$q")" = "$b" ]
	o=bin-$(printf '%x' $(( (0x${b#bin-} + 1) % 8 )))
	sim target "$o" "$q" other -- publish "$o"
	run -1 --separate-stderr fetch "$q"
	[ "$stderr" = "hw-skill: no role lists target '$q'" ]
}

@test "tuf: at most 32 root rotations an update; the next goes on" {
	published
	ops=(root)
	for i in $(seq 2 34); do ops+=(-- root); done
	sim "${ops[@]}"
	run -0 tuf refresh
	[ "$output" = '{"root":33,"snapshot":2,"targets":2,"timestamp":2}' ]
	[ "$(reqs | grep -c 'root.json$')" = 32 ]
	run -0 tuf refresh
	[ "$output" = '{"root":35,"snapshot":2,"targets":2,"timestamp":2}' ]
	[ "$(reqs | grep 'root.json$' | tr '\n' ' ')" = "/metadata/34.root.json /metadata/35.root.json /metadata/36.root.json " ]
	cmp md/root.json sim/repo/metadata/35.root.json
}

@test "tuf: mk/hw-tuf-client is the client as the conformance suite runs it" {
	published
	rm md/root.json
	run -0 "$HW_ROOT/mk/hw-tuf-client" --metadata-dir md init sim/repo/metadata/1.root.json
	run -0 "$HW_ROOT/mk/hw-tuf-client" --metadata-dir md --metadata-url "$URL/metadata" refresh
	same_bytes root timestamp snapshot targets
	run -2 "$HW_ROOT/mk/hw-tuf-client" --metadata-dir md bogus
}
