#!/usr/bin/env python3
"""bind.py SESSION [PROJECT] - bind every approval.recorded of SESSION in
the project directory PROJECT (the current one) as this user's decision,
the way hw-session command does (hw-store(5) TRUST), for suites whose
sessions are written by hw-append from fixtures.

It is a second implementation of the binding format: the key is
$XDG_STATE_HOME/heartwood/decision.key (32 bytes, created 0600 when
missing), the MAC HMAC-SHA-512 cut to 32 bytes (libsodium's crypto_auth)
over the canonical JSON of the binding without "mac".
"""
import hashlib
import hmac
import json
import os
import sys


def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)


def main():
    sid = sys.argv[1]
    project = os.path.realpath(sys.argv[2] if len(sys.argv) > 2 else ".")
    state = os.path.join(os.environ["XDG_STATE_HOME"], "heartwood")
    os.makedirs(state, mode=0o700, exist_ok=True)
    os.chmod(state, 0o700)
    keyfile = os.path.join(state, "decision.key")
    if not os.path.exists(keyfile):
        fd = os.open(keyfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(32))
        os.close(fd)
    key = open(keyfile, "rb").read()
    pid = hashlib.sha256(project.encode()).hexdigest()[:24]
    ddir = os.path.join(state, "projects", pid, "decisions")
    os.makedirs(ddir, mode=0o700, exist_ok=True)
    for d in (os.path.dirname(ddir), ddir):
        os.chmod(d, 0o700)
    events = os.path.join(project, ".heartwood/sessions", sid,
                          "events.jsonl")
    out = []
    lines = open(events, encoding="utf-8") if os.path.exists(events) else []
    for line in lines:
        ev = json.loads(line)
        if ev.get("kind") != "approval.recorded":
            continue
        pl = ev.get("payload", {})
        b = {"decision": pl.get("decision"),
             "event_hash": "sha256:" +
             hashlib.sha256(canon(ev).encode()).hexdigest(),
             "group_id": pl.get("group_id"), "project": project,
             "schema_version": "heartwood.decision-binding.v1",
             "sequence": ev["sequence"], "session_id": sid}
        mac = hmac.new(key, canon(b).encode(), hashlib.sha512).digest()[:32]
        b["mac"] = mac.hex()
        out.append(canon(b) + "\n")
    path = os.path.join(ddir, sid + ".jsonl")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.write(fd, "".join(out).encode())
    os.close(fd)


if __name__ == "__main__":
    main()
