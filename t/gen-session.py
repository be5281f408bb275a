#!/usr/bin/env python3
"""gen-session.py - an independent Python model of the heartwood session store.

Used by t/0200-hw-session.bats to check the C programs against a second
implementation of the reference's rules (hw-store(5), and the reference
persistence notes sections 3-4).  It is written from those documents alone,
with the standard library only, and deliberately shares no code with lib/.

    gen-session.py gen ID        write a complete store in the current
                                 directory holding session ID with one or
                                 more events of every kind, in the
                                 reference's non-canonical line style;
                                 print the events as canonical JSON lines
    gen-session.py init ID       write the store layout and an empty
                                 session ID (metadata, empty logs)
    gen-session.py gen-odd ID    the same, with events of unusual shapes:
                                 statuses that are not strings, lengths
                                 of what is not a list or a string, keys
                                 that need Unicode's rules to normalize
    gen-session.py drafts        print one hw-append draft per event kind
    gen-session.py odd-drafts    the drafts of gen-odd's events
    gen-session.py scrub         the scrubbed canonical form of each JSON
                                 line on stdin
    gen-session.py minimize KIND the audit payload (less its
                                 session_event_hash) of each payload line
                                 on stdin
    gen-session.py verify ID [--canonical-from N]
                                 recompute and check everything in the
                                 store and in session ID: layout, marker,
                                 metadata, chain, pairing, and every audit
                                 payload against our own minimization;
                                 with --canonical-from, lines from index N
                                 on must also be byte-canonical
    gen-session.py canon         canonical form of each JSON line on stdin
    gen-session.py forge-audit ID FROM
                                 attacker: rewrite audit.jsonl from index
                                 FROM on so that it binds the current
                                 events and its own chain recomputes;
                                 events.jsonl is left alone
    gen-session.py rechain ID    attacker: rewrite both logs from the
                                 events' content, recomputing every link,
                                 binding and hash
    gen-session.py journal ID SEQ PREV OCCURRED KIND PAYLOAD-JSON
                                 print the .pending-commit.json journal
                                 (heartwood.session-commit.v1) of one event
                                 with chain head PREV ("null" for none)

Exit status: 0 on success, 1 when verify finds a difference (named on
stderr), 2 on a usage error.
"""

import collections
import hashlib
import json
import os
import stat
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STATE_FIXTURE = os.path.join(HERE, "fixtures", "reference", "project-state-v2.json")

EVENT_SCHEMA = "heartwood.session-event.v1"
AUDIT_SCHEMA = "heartwood.audit-event.v1"
META_SCHEMA = "heartwood.session-metadata.v1"
EVENT_FIELDS = ("schema_version", "event_id", "session_id", "sequence", "kind",
                "occurred_at", "payload", "previous_event_hash")
AUDIT_FIELDS = ("schema_version", "event_id", "session_id", "sequence",
                "event_type", "occurred_at", "payload", "previous_event_hash",
                "event_hash")
DIRS = ("sessions", "models", "skills", "audit", "runtime", "logs", "cache")
KINDS = (
    "command.received", "approval.recorded", "policy.decision.recorded",
    "model_call.decision.recorded", "user_message.recorded",
    "agent_message.emitted", "tool_call.proposed", "confirmation.requested",
    "confirmation.resolved", "tool.execution.recorded",
    "agent.lifecycle.updated", "task.plan.updated", "model.usage.updated",
    "subagent.updated", "session.paused", "session.resumed",
    "audit.export.recorded", "error.recorded",
)


class Bad(Exception):
    pass


# --- canonical JSON and hashes ------------------------------------------

def canon(v):
    return json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def digest(v):
    return "sha256:" + hashlib.sha256(canon(v).encode("utf-8")).hexdigest()


def audit_hash(rec):
    r = dict(rec)
    r["event_hash"] = None
    return digest(r)


def loads(text):
    # Python keeps big integers exact and floats as floats, which is what
    # the hashes need; reject NaN/Infinity, which JSON does not have.
    def bad_constant(name):
        raise Bad("non-JSON constant %s" % name)
    return json.loads(text, parse_constant=bad_constant)


# --- the reference's on-disk style (pydantic model_dump_json) -----------

def pyd(v):
    """Compact, keys in insertion order, raw UTF-8, pydantic float style."""
    if isinstance(v, dict):
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + pyd(x)
                              for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(pyd(x) for x in v) + "]"
    if isinstance(v, float):
        r = repr(v)
        if "e" in r:                        # 1e-07 -> 1e-7, 1e+16 -> 1e16
            m, e = r.split("e")
            r = m + "e" + str(int(e))
        return r
    return json.dumps(v, ensure_ascii=False)


def pyd_record(rec, fields):
    return pyd({k: rec[k] for k in fields}) + "\n"


# --- content minimization and the scrubber (hw-store(5)) ----------------

SCRUB_EXACT = set((
    "apikey arguments authorization clientsecret content dateofbirth dob "
    "email individualid mrn name password path patientid participant "
    "participantid personid prompt record records response result results "
    "row rows secret subject subjectid summary tablerows token value values"
).split())


def sensitive(key):
    k = "".join(c for c in key.lower() if c.isalnum())
    return (k in SCRUB_EXACT or "password" in k or "secret" in k
            or k.endswith("apikey") or k.endswith("token"))


def scrub(v):
    if isinstance(v, dict):
        return {k: "[scrubbed]" if sensitive(k) else scrub(x) for k, x in v.items()}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v


def list_len(v):
    return len(v) if isinstance(v, list) else 0


def str_len(v):
    return len(v) if isinstance(v, str) else 0


def pick(src, keys):
    if not isinstance(src, dict):
        return {}
    return {k: src[k] for k in keys if k in src}


def minimize(kind, p):
    if kind == "command.received":
        out = pick(p, ("actor_id", "command_id", "command_hash", "command_kind"))
    elif kind == "model_call.decision.recorded":
        out = {}
        if "decision" in p:
            out["decision"] = pick(p["decision"], (
                "decision_id", "policy_profile_id", "endpoint",
                "capability_tier", "decision"))
        if "model_profile" in p:
            out["model_profile"] = pick(p["model_profile"], (
                "backend_id", "profile_id", "capability_tier",
                "action_confirmation_mode"))
    elif kind == "approval.recorded":
        out = pick(p, ("command_id", "group_id", "decision"))
        out["action_count"] = list_len(p.get("tool_call_ids"))
    elif kind == "user_message.recorded":
        out = {"actor_id": p.get("actor_id", ""),
               "command_id": p.get("command_id", ""),
               "content_chars": str_len(p.get("content"))}
    elif kind == "agent_message.emitted":
        out = {"content_chars": str_len(p.get("content"))}
    elif kind == "tool_call.proposed":
        out = pick(p, ("tool_call_id", "tool_name", "risk"))
    elif kind == "confirmation.requested":
        req = p.get("request")
        out = {"request": pick(req, ("request_id", "group_id", "tool_call_id",
                                     "tool_name", "risk"))
               if isinstance(req, dict) else "invalid"}
    elif kind == "confirmation.resolved":
        out = pick(p, ("group_id", "tool_call_id", "decision"))
    elif kind == "tool.execution.recorded":
        out = pick(p, ("backend_id", "tool_call_id", "action_id", "tool_name",
                       "exit_code"))
    elif kind == "task.plan.updated":
        # a task without a status is "unknown"; any other status is
        # str() of it (True, None, 1.0, a list's repr); tasks that are
        # not objects are not counted
        tasks = p.get("tasks")
        tasks = tasks if isinstance(tasks, list) else []
        out = {"task_count": len(tasks),
               "status_counts": dict(collections.Counter(
                   str(t.get("status", "unknown"))
                   for t in tasks if isinstance(t, dict)))}
    elif kind == "model.usage.updated":
        out = {"usage": pick(p.get("usage"), (
            "usage_id", "model_name", "call_count", "prompt_tokens",
            "completion_tokens", "cache_read_tokens", "cache_write_tokens",
            "reasoning_tokens", "context_window", "accumulated_cost"))}
    elif kind == "subagent.updated":
        out = {"subagent": pick(p.get("subagent"), (
            "invocation_id", "task_id", "agent_name", "role_label", "status",
            "parent_session_id", "parent_action_id"))}
    elif kind == "agent.lifecycle.updated":
        out = pick(p, ("status",))
    elif kind in ("session.paused", "session.resumed"):
        out = pick(p, ("command_id",))
    elif kind == "error.recorded":
        out = pick(p, ("backend_id", "code", "command"))
        if "reason" in p:
            out["reason"] = "[scrubbed]"
    elif kind == "audit.export.recorded":
        out = pick(p, ("event_count", "scrubbed"))
    else:
        out = {"payload_omitted": True}
    return out


def audit_payload(event):
    out = minimize(event["kind"], event["payload"])
    out["session_event_hash"] = digest(event)
    return scrub(out)


def make_event(sid, seq, kind, occurred, payload, prev):
    return {"schema_version": EVENT_SCHEMA,
            "event_id": "%s-event-%06d" % (sid, seq),
            "session_id": sid, "sequence": seq, "kind": kind,
            "occurred_at": occurred, "payload": payload,
            "previous_event_hash": prev}


def make_audit(event, prev=None):
    """The audit record paired with event; prev defaults to the event's."""
    sid, seq = event["session_id"], event["sequence"]
    rec = {"schema_version": AUDIT_SCHEMA,
           "event_id": "%s-audit-%06d" % (sid, seq),
           "session_id": sid, "sequence": seq, "event_type": event["kind"],
           "occurred_at": event["occurred_at"],
           "payload": audit_payload(event),
           "previous_event_hash": event["previous_event_hash"] if prev is None else prev,
           "event_hash": None}
    rec["event_hash"] = audit_hash(rec)
    return rec


# --- sample content: every kind, hostile strings and numbers ------------

ODD_KEYS = {"\uffff": 1, "\U0001F600": 2, "a": 3, "\u00e9": 4, "e": 5,
            "E": 6, "e\u0301": 7}
NUMBERS = {"tenth": 0.1, "tiny": 1e-07, "huge": 1e+16, "hundred": 100.0,
           "neg_zero": -0.0, "min_sub": 5e-324, "big": 1.5e300,
           "frac": 123456789.125, "small": 0.000123,
           "int_2_64_plus_1": 2 ** 64 + 1, "neg_2_70": -(2 ** 70),
           "int_23": 12345678901234567890123, "one": 1, "one_float": 1.0}
NESTED_SECRETS = {"verdict": "approved", "by": "alice", "username": "alice",
                  "Auth-Token": "tok-123", "my_API_key": "sk-1",
                  "client-secret": "cs", "rows_count": 3, "tokens": 7,
                  "notes": [{"password_hint": "p", "ok": 1},
                            [{"Email": "a@b.example", "Name": "Al"}],
                            "plain"],
                  "deep": {"subject_id": "s1", "kept": {"value": 9, "v": 10}}}


def sample_payloads():
    """(kind, payload) for one or more events of every kind."""
    conf_req = {"schema_version": "heartwood.confirmation-request.v1",
                "request_id": "call-1-confirm", "session_id": "x",
                "tool_call_id": "call-1", "tool_name": "terminal",
                "risk": "high", "summary": "rm -rf build/",
                "arguments": {"command": "rm -rf build/"},
                "group_id": "action-set-0123456789abcdef",
                "action_id": "act-1", "kind": "terminal",
                "affected_paths": ["build/"], "project_path": "/p",
                "source_event_id": "src-9"}
    return [
        ("command.received", {"actor_id": "human", "command_id": "cmd-1",
                              "command_hash": "sha256:" + "ab" * 32,
                              "command_kind": "chat"}),
        ("user_message.recorded", {"actor_id": "human", "command_id": "cmd-1",
                                   "content": "Summarize data.csv \u2028 and plot "
                                              "\U0001F600 caf\u00e9 \u4e2d\u6587"}),
        ("model_call.decision.recorded", {
            "decision": {"schema_version": "heartwood.model-call-decision.v1",
                         "decision_id": "dec-1", "policy_profile_id": "pp",
                         "endpoint": {"url": "https://m.example/v1",
                                      "token": "bearer-xyz"},
                         "capability_tier": "local", "decision": "allow",
                         "reason": "private reason"},
            "attestation": {"record_id": "att-1", "reason": "why"},
            "model_profile": {"backend_id": "be", "profile_id": "prof",
                              "capability_tier": "local",
                              "action_confirmation_mode": "always-confirm",
                              "api_key": "sk-dropped"}}),
        ("agent_message.emitted", {"content": "line\u2028sep nel\u0085 del\x7f "
                                              "ctrl\x01 tab\t nl\n \U0001F600\U0001F680",
                                   "source_event_id": "src-1"}),
        ("tool_call.proposed", {"tool_call_id": "call-1", "action_id": "act-1",
                                "tool_name": "terminal", "kind": "terminal",
                                "risk": "high", "summary": "rm -rf build/",
                                "arguments": {"command": "rm -rf build/"},
                                "affected_paths": [], "project_path": "/p",
                                "specialist_label": None,
                                "specialist_capability": None}),
        ("confirmation.requested", {"request": conf_req,
                                    "source_event_id": "src-2"}),
        ("confirmation.requested", {"request": "not an object"}),
        ("approval.recorded", {"command_id": "cmd-2",
                               "group_id": "action-set-0123456789abcdef",
                               "decision": "approved",
                               "tool_call_ids": ["call-1", "call-2", "call-3"]}),
        ("confirmation.resolved", {"tool_call_id": "call-1",
                                   "group_id": "action-set-0123456789abcdef",
                                   "decision": NESTED_SECRETS}),
        ("tool.execution.recorded", {"backend_id": "be", "tool_call_id": "call-1",
                                     "action_id": "act-1", "tool_name": "terminal",
                                     "exit_code": 0, "summary": "ok",
                                     "result": "secret output", "result_truncated": False}),
        ("agent.lifecycle.updated", {"status": "running", "source_event_id": "s3"}),
        ("task.plan.updated", {"tasks": [{"title": "load", "status": "done"},
                                         {"title": "clean", "status": "in-progress"},
                                         {"title": "plot", "status": "todo"},
                                         {"title": "check", "status": "done"}]}),
        ("model.usage.updated", {"usage": {
            "usage_id": "total", "model_name": "m\u00f6del", "call_count": 3,
            "prompt_tokens": 2 ** 64 + 1, "completion_tokens": 12,
            "cache_read_tokens": 0, "cache_write_tokens": 0,
            "reasoning_tokens": 5, "context_window": None,
            "accumulated_cost": 1e-07, "provider_note": "dropped"}}),
        ("subagent.updated", {"subagent": {
            "invocation_id": "inv-1", "task_id": "t-1", "agent_name": "analyst",
            "role_label": "Analyst", "status": "running",
            "parent_session_id": "session-gen", "parent_action_id": "act-1",
            "task_summary": "dropped"}}),
        ("session.paused", {"command_id": "cmd-3"}),
        ("session.resumed", {"command_id": "cmd-4"}),
        ("policy.decision.recorded", {"odd_keys": ODD_KEYS, "numbers": NUMBERS}),
        ("audit.export.recorded", {"path": "/home/someone/p/.heartwood/x.jsonl",
                                   "event_count": 18, "scrubbed": True}),
        ("error.recorded", {"backend_id": "be", "code": "HW-AGENT-002",
                            "reason": "stack trace with secrets"}),
        ("error.recorded", {"command": "chat", "reason": "unavailable",
                            "affects_lifecycle": False, "command_id": "cmd-5"}),
        ("agent_message.emitted", {"content": "floats and big ints",
                                   "numbers": NUMBERS,
                                   "nested": {"a": {"b": {"c": [1, [2, [3, {}]]]}},
                                              "empty": [], "obj": {}},
                                   "odd_keys": ODD_KEYS}),
        ("agent.lifecycle.updated", {"status": "idle"}),
    ]


# Shapes the reference writes that a typed session never holds: statuses
# that are not strings, lengths of things that are not lists or strings,
# and keys whose normal form needs Unicode's rules.
ODD_STATUSES = [True, False, None, 1, -0, 1.0, -0.0, 1e-07, 1e+16, 2 ** 70,
                [], {}, ["a", 1, None], {"b": [True, 2.5], "a": "x"},
                "it's", "say \"hi\"", "both ' and \"", "back\\slash",
                "tab\tnl\ncr\r", "\x00\x1f\x7f\x80\x9f\xa0\xad",
                "caf\u00e9 \u2028 \u200b \ufeff \U0001F600 \U000E0001",
                ["\u00e9\u2028", "'", "\""]]
ODD_KEYS_SCRUB = ["to\u212aen", "x" * 292 + "password", "name\u00b2",
                  "AP\u0130_KEY", "token\u0660", "\u0660token",
                  "a" * 251 + "token", "pass\u00a0word", "Token\u0301",
                  "\uff54\uff4f\uff4b\uff45\uff4e", "\u24c9oken",
                  "S\u0130\u212aRET", "secret\u0661", "\u0130"]


def odd_payloads():
    tasks = [{"title": "t%d" % i, "status": st}
             for i, st in enumerate(ODD_STATUSES)]
    tasks += [{"title": "no status"}, {"title": "again"}, "not an object",
              7, None, ["x"]]
    keys = {k: i for i, k in enumerate(ODD_KEYS_SCRUB)}
    return [
        ("task.plan.updated", {"tasks": tasks}),
        ("task.plan.updated", {"tasks": {"a": {"status": "done"}}}),
        ("task.plan.updated", {"tasks": "todo"}),
        ("task.plan.updated", {}),
        ("approval.recorded", {"decision": "approved", "tool_call_ids": "abc"}),
        ("approval.recorded", {"decision": "approved",
                               "tool_call_ids": {"a": 1, "b": 2}}),
        ("approval.recorded", {"decision": "rejected", "tool_call_ids": None}),
        ("user_message.recorded", {"content": ["a", "b", "c"]}),
        ("user_message.recorded", {"content": {"text": "hello"}}),
        ("user_message.recorded", {"content": 12345}),
        ("agent_message.emitted", {"content": None}),
        ("agent_message.emitted", {"content": "\U0001F600\u00e9"}),
        ("confirmation.resolved", {"tool_call_id": "call-1",
                                   "decision": keys}),
    ]


# --- files -------------------------------------------------------------

def write(path, data, mode=0o600):
    if isinstance(data, str):
        data = data.encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)


def mkdir(path):
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o700)


def sdir(sid):
    return os.path.join(".heartwood", "sessions", sid)


def write_layout():
    mkdir(".heartwood")
    for d in DIRS:
        mkdir(os.path.join(".heartwood", d))
    write(".heartwood/.gitignore", "*\n")
    with open(STATE_FIXTURE, "rb") as f:
        write(".heartwood/state.json", f.read())


def write_meta(sid, created, updated, title):
    meta = {"schema_version": META_SCHEMA, "title": title,
            "created_at": created, "updated_at": updated}
    write(os.path.join(sdir(sid), "metadata.json"), canon(meta) + "\n")


def build(sid, drafts, stamp):
    """Events and audit records for (kind, payload) drafts, chained."""
    events, audits, head = [], [], None
    for seq, (kind, payload) in enumerate(drafts):
        ev = make_event(sid, seq, kind, stamp(seq), payload, head)
        au = make_audit(ev)
        head = au["event_hash"]
        events.append(ev)
        audits.append(au)
    return events, audits


def cmd_gen(sid, payloads=sample_payloads):
    def stamp(i):
        return "2026-08-02T12:%02d:%02dZ" % (i // 60, i % 60)
    events, audits = build(sid, payloads(), stamp)
    write_layout()
    mkdir(sdir(sid))
    write_meta(sid, events[0]["occurred_at"], events[-1]["occurred_at"],
               "Generated session \u2713")
    # The reference's own style: declared key order, raw UTF-8, 1e-7.
    write(os.path.join(sdir(sid), "events.jsonl"),
          "".join(pyd_record(e, EVENT_FIELDS) for e in events))
    write(os.path.join(sdir(sid), "audit.jsonl"),
          "".join(pyd_record(a, AUDIT_FIELDS) for a in audits))
    for e in events:
        print(canon(e))


def cmd_init(sid):
    write_layout()
    mkdir(sdir(sid))
    write_meta(sid, "2026-08-02T12:00:00Z", "2026-08-02T12:00:00Z",
               "Synthetic session")
    write(os.path.join(sdir(sid), "events.jsonl"), "")
    write(os.path.join(sdir(sid), "audit.jsonl"), "")


def cmd_drafts():
    for kind, payload in sample_payloads():
        print(canon({"kind": kind, "payload": payload}))


# --- verification --------------------------------------------------------

def read_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    if not data:
        return []
    if not data.endswith(b"\n"):
        raise Bad("%s: partial last line" % path)
    lines = data[:-1].split(b"\n")
    for i, ln in enumerate(lines):
        if not ln:
            raise Bad("%s:%d: empty line" % (path, i + 1))
    return lines


def parse_lines(path):
    out = []
    for i, ln in enumerate(read_lines(path)):
        try:
            v = loads(ln.decode("utf-8"))
        except (ValueError, Bad) as e:
            raise Bad("%s:%d: %s" % (path, i + 1, e))
        if not isinstance(v, dict):
            raise Bad("%s:%d: not an object" % (path, i + 1))
        out.append(v)
    return out


def check_mode(path, want):
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise Bad("%s: symbolic link" % path)
    if stat.S_IMODE(st.st_mode) != want:
        raise Bad("%s: mode %o, want %o" % (path, stat.S_IMODE(st.st_mode), want))


def verify_layout():
    check_mode(".heartwood", 0o700)
    for d in DIRS:
        check_mode(os.path.join(".heartwood", d), 0o700)
    check_mode(".heartwood/.gitignore", 0o600)
    with open(".heartwood/.gitignore", "rb") as f:
        if f.read() != b"*\n":
            raise Bad(".gitignore is not '*\\n'")
    check_mode(".heartwood/state.json", 0o600)
    with open(STATE_FIXTURE, "rb") as f:
        want = f.read()
    with open(".heartwood/state.json", "rb") as f:
        if f.read() != want:
            raise Bad("state.json differs from the v2 marker")


def verify_meta(sid):
    path = os.path.join(sdir(sid), "metadata.json")
    check_mode(path, 0o600)
    with open(path, "rb") as f:
        meta = loads(f.read().decode("utf-8"))
    if set(meta) != {"schema_version", "title", "created_at", "updated_at"}:
        raise Bad("metadata.json fields: %s" % sorted(meta))
    if meta["schema_version"] != META_SCHEMA:
        raise Bad("metadata.json schema_version")
    t = meta["title"]
    if not isinstance(t, str) or t != " ".join(t.split()) or not 1 <= len(t) <= 120:
        raise Bad("metadata.json title %r" % t)


def verify_session(sid, canonical_from):
    d = sdir(sid)
    check_mode(d, 0o700)
    ev_path, au_path = os.path.join(d, "events.jsonl"), os.path.join(d, "audit.jsonl")
    check_mode(ev_path, 0o600)
    check_mode(au_path, 0o600)
    events, audits = parse_lines(ev_path), parse_lines(au_path)
    if len(events) != len(audits):
        raise Bad("%d events but %d audit records" % (len(events), len(audits)))
    head = None
    for i, (ev, au) in enumerate(zip(events, audits)):
        where = "sequence %d: " % i
        if tuple(sorted(ev)) != tuple(sorted(EVENT_FIELDS)):
            raise Bad(where + "event fields %s" % sorted(ev))
        if tuple(sorted(au)) != tuple(sorted(AUDIT_FIELDS)):
            raise Bad(where + "audit fields %s" % sorted(au))
        if ev["schema_version"] != EVENT_SCHEMA or au["schema_version"] != AUDIT_SCHEMA:
            raise Bad(where + "schema_version")
        if ev["kind"] not in KINDS:
            raise Bad(where + "unknown kind")
        if ev["sequence"] != i or au["sequence"] != i:
            raise Bad(where + "sequence is not the line index")
        if ev["session_id"] != sid or au["session_id"] != sid:
            raise Bad(where + "session_id")
        if ev["event_id"] != "%s-event-%06d" % (sid, i):
            raise Bad(where + "event_id %r" % ev["event_id"])
        if au["event_id"] != "%s-audit-%06d" % (sid, i):
            raise Bad(where + "audit event_id %r" % au["event_id"])
        if au["previous_event_hash"] != head:
            raise Bad(where + "audit chain link")
        if au["event_hash"] != audit_hash(au):
            raise Bad(where + "audit event_hash does not recompute")
        if ev["previous_event_hash"] != head:
            raise Bad(where + "event previous_event_hash is not the chain head")
        if ev["occurred_at"] != au["occurred_at"] or ev["kind"] != au["event_type"]:
            raise Bad(where + "pair disagrees")
        want = audit_payload(ev)
        if au["payload"] != want or canon(au["payload"]) != canon(want):
            raise Bad(where + "audit payload %s, our minimization gives %s"
                      % (canon(au["payload"]), canon(want)))
        head = au["event_hash"]
    if canonical_from is not None:
        for path, recs in ((ev_path, events), (au_path, audits)):
            for i, ln in enumerate(read_lines(path)):
                if i >= canonical_from and ln.decode("utf-8") != canon(recs[i]):
                    raise Bad("%s:%d: line is not canonical" % (path, i + 1))
    return len(events)


def cmd_verify(sid, canonical_from):
    verify_layout()
    verify_meta(sid)
    n = verify_session(sid, canonical_from)
    print("ok %d" % n)


# --- attackers and helpers ------------------------------------------------

def rewrite(path, recs):
    write(path, "".join(canon(r) + "\n" for r in recs))


def cmd_forge_audit(sid, start):
    d = sdir(sid)
    events = parse_lines(os.path.join(d, "events.jsonl"))
    audits = parse_lines(os.path.join(d, "audit.jsonl"))
    for i in range(start, len(audits)):
        au = audits[i]
        au["payload"]["session_event_hash"] = digest(events[i])
        au["previous_event_hash"] = audits[i - 1]["event_hash"] if i else None
        au["event_hash"] = audit_hash(au)
    rewrite(os.path.join(d, "audit.jsonl"), audits)


def cmd_rechain(sid):
    d = sdir(sid)
    events, audits, head = parse_lines(os.path.join(d, "events.jsonl")), [], None
    for ev in events:
        ev["previous_event_hash"] = head
        au = make_audit(ev)
        audits.append(au)
        head = au["event_hash"]
    rewrite(os.path.join(d, "events.jsonl"), events)
    rewrite(os.path.join(d, "audit.jsonl"), audits)


def cmd_journal(sid, seq, prev, occurred, kind, payload):
    ev = make_event(sid, int(seq), kind, occurred, loads(payload),
                    None if prev == "null" else prev)
    print(canon({"schema_version": "heartwood.session-commit.v1",
                 "session_event": ev, "audit_event": make_audit(ev)}))


def main(argv):
    try:
        if len(argv) == 2 and argv[0] == "gen":
            cmd_gen(argv[1])
        elif len(argv) == 2 and argv[0] == "init":
            cmd_init(argv[1])
        elif len(argv) == 2 and argv[0] == "gen-odd":
            cmd_gen(argv[1], odd_payloads)
        elif argv == ["drafts"]:
            cmd_drafts()
        elif argv == ["odd-drafts"]:
            for kind, payload in odd_payloads():
                print(canon({"kind": kind, "payload": payload}))
        elif argv == ["scrub"]:
            for line in sys.stdin.buffer:
                print(canon(scrub(loads(line.decode("utf-8")))))
        elif len(argv) == 2 and argv[0] == "minimize":
            for line in sys.stdin.buffer:
                print(canon(scrub(minimize(argv[1],
                                           loads(line.decode("utf-8"))))))
        elif len(argv) == 2 and argv[0] == "verify":
            cmd_verify(argv[1], None)
        elif len(argv) == 4 and argv[0] == "verify" and argv[2] == "--canonical-from":
            cmd_verify(argv[1], int(argv[3]))
        elif argv == ["canon"]:
            for line in sys.stdin.buffer:
                print(canon(loads(line.decode("utf-8"))))
        elif len(argv) == 3 and argv[0] == "forge-audit":
            cmd_forge_audit(argv[1], int(argv[2]))
        elif len(argv) == 2 and argv[0] == "rechain":
            cmd_rechain(argv[1])
        elif len(argv) == 7 and argv[0] == "journal":
            cmd_journal(*argv[1:])
        else:
            sys.stderr.write(__doc__)
            return 2
    except Bad as e:
        sys.stderr.write("gen-session.py: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
