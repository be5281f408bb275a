#!/usr/bin/python3
"""A TUF repository simulator for the tests of hw-skill's TUF client.

The repository lives in a directory: state.json (the keys, private ones
too, and every role's content) and repo/ (what is served): repo/metadata/
and repo/targets/.  Each call runs one or more operations, separated by
"--":

  init [--keytype ecdsa|ed25519|rsa] [--consistent] [--meta-hashes]
  target ROLE PATH TEXT          add or replace a target of ROLE
  delegate PARENT CHILD [--terminating] [--paths P,..|--prefixes H,..]
                                 [--keys N] [--threshold N] [--keytype T]
  succinct PARENT PREFIX BITS    a succinct hash-bin delegation and its bins
  bin ROLE PATH                  print the bin of ROLE's succinct
                                 delegation that PATH falls in
  skill DIR [--zip FILE] [--revision HEX40]
                                 a skill in catalog.json and its archive
                                 (built as the reference builds it, or
                                 FILE's bytes) as targets of targets
  revoke NAME REASON             mark a catalog entry revoked
  unlist NAME                    drop a catalog entry
  catalog                        write catalog.json from the state again
  publish [ROLE ...]             bump ROLE..., then snapshot and timestamp
  sign ROLE                      write ROLE as it stands (no bump)
  set ROLE FIELD VALUE           version, expires, pad (bytes of an
                                 extra field), signers (key ids, for a
                                 targets role), snapshot-version
                                 (timestamp), role-version (snapshot: a
                                 value of the form NAME=V)
  root [--keys N] [--threshold N] [--old-signers N] [--new-signers N]
       [--rotate ROLE,..] [--keytype T] [--sign-with KEYID,..]
                                 the next root version (N.root.json)
  serve PORTFILE LOGFILE         serve repo/ on 127.0.0.1, logging every
                                 request path; repo/.redirect makes every
                                 request a 302 to its content

Metadata is written indented (not canonical), so that a client must rebuild
the canonical form from the parsed tree.  Delegated role files are stored
under their percent-encoded names, as a client asks for them.
"""
import base64
import datetime
import hashlib
import http.server
import json
import os
import sys
import urllib.parse

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa

TOP = ["root", "timestamp", "snapshot", "targets"]


def role_of(rel):
    if rel == "SKILL.md":
        return "definition"
    if rel == ".mcp.json":
        return "mcp-config"
    for prefix, r in (("scripts/", "script"), ("references/", "reference"),
                      ("assets/", "asset")):
        if rel.startswith(prefix):
            return r
    return "other"


def canon(v):
    """OLPC canonical JSON, as securesystemslib writes it."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ",".join(canon(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ",".join(canon(k) + ":" + canon(v[k])
                              for k in sorted(v)) + "}"
    raise TypeError(type(v))


def new_key(keytype):
    if keytype == "ed25519":
        priv = ed25519.Ed25519PrivateKey.generate()
        pub = priv.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
        raw = priv.private_bytes(serialization.Encoding.Raw,
                                 serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption()).hex()
        public = {"keytype": "ed25519", "scheme": "ed25519",
                  "keyval": {"public": pub}}
        return public, raw
    if keytype == "ecdsa":
        priv = ec.generate_private_key(ec.SECP256R1())
        public = {"keytype": "ecdsa", "scheme": "ecdsa-sha2-nistp256"}
    elif keytype == "rsa":
        priv = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        public = {"keytype": "rsa", "scheme": "rsassa-pss-sha256"}
    else:
        raise ValueError(keytype)
    public["keyval"] = {"public": priv.public_key().public_bytes(
        serialization.Encoding.PEM,
        serialization.PublicFormat.SubjectPublicKeyInfo).decode()}
    raw = priv.private_bytes(serialization.Encoding.PEM,
                             serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()
    return public, raw


def sign(key, data):
    kt = key["public"]["keytype"]
    if kt == "ed25519":
        priv = ed25519.Ed25519PrivateKey.from_private_bytes(
            bytes.fromhex(key["private"]))
        return priv.sign(data).hex()
    priv = serialization.load_pem_private_key(key["private"].encode(), None)
    if kt == "ecdsa":
        return priv.sign(data, ec.ECDSA(hashes.SHA256())).hex()
    return priv.sign(data, padding.PSS(mgf=padding.MGF1(hashes.SHA256()),
                                       salt_length=32),
                     hashes.SHA256()).hex()


def expires_in(days):
    t = datetime.datetime.utcnow() + datetime.timedelta(days=days)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


class Repo:
    def __init__(self, path):
        self.path = path
        self.statefile = os.path.join(path, "state.json")
        self.md = os.path.join(path, "repo", "metadata")
        self.tg = os.path.join(path, "repo", "targets")
        if os.path.exists(self.statefile):
            with open(self.statefile) as f:
                self.s = json.load(f)

    def save(self):
        with open(self.statefile, "w") as f:
            json.dump(self.s, f, indent=1)

    def keys(self, n, keytype):
        ids = []
        for _ in range(n):
            public, raw = new_key(keytype)
            kid = hashlib.sha256(canon(public).encode()).hexdigest()
            self.s["keys"][kid] = {"public": public, "private": raw}
            ids.append(kid)
        return ids

    def init(self, keytype, consistent, meta_hashes):
        os.makedirs(self.md, exist_ok=True)
        os.makedirs(self.tg, exist_ok=True)
        self.s = {"keytype": keytype, "consistent": consistent,
                  "meta_hashes": meta_hashes, "keys": {}, "roles": {}}
        for r in TOP:
            self.s["roles"][r] = {"keyids": self.keys(1, keytype),
                                  "threshold": 1, "version": 1,
                                  "expires": expires_in(365)}
        self.s["roles"]["targets"].update(targets={}, delegations=[])
        self.s["roles"]["root"]["signers"] = []
        self.write_root()
        self.write_targets("targets")
        self.write_snapshot()
        self.write_timestamp()

    def role_keys(self, role):
        return self.s["roles"][role]["keyids"]

    def delegator(self, role):
        for name, r in self.s["roles"].items():
            for d in r.get("delegations", []):
                if d["name"] == role:
                    return d
            sr = r.get("succinct")
            if sr and role.startswith(sr["name_prefix"] + "-"):
                return sr
        return self.s["roles"][role]

    def envelope(self, signed, signers):
        data = canon(signed).encode()
        sigs = [{"keyid": k, "sig": sign(self.s["keys"][k], data)}
                for k in signers]
        return (json.dumps({"signatures": sigs, "signed": signed},
                           indent=1, ensure_ascii=False) + "\n").encode()

    def common(self, role, typ):
        r = self.s["roles"][role]
        c = {"_type": typ, "spec_version": "1.0.31",
             "version": r["version"], "expires": r["expires"]}
        if "pad" in r:
            c["x-pad"] = "x" * r["pad"]
        return c

    def put(self, name, data):
        with open(os.path.join(self.md, name), "wb") as f:
            f.write(data)

    def write_root(self, signers=None):
        r = self.s["roles"]
        signed = self.common("root", "root")
        ids = set()
        for t in TOP:
            ids.update(r[t]["keyids"])
        signed["keys"] = {k: self.s["keys"][k]["public"] for k in sorted(ids)}
        signed["roles"] = {t: {"keyids": r[t]["keyids"],
                               "threshold": r[t]["threshold"]} for t in TOP}
        signed["consistent_snapshot"] = self.s["consistent"]
        if signers is None:
            signers = r["root"]["keyids"]
        data = self.envelope(signed, signers)
        self.put("%d.root.json" % r["root"]["version"], data)
        self.put("root.json", data)

    def meta_entry(self, role, version):
        e = {"version": version}
        if self.s["meta_hashes"]:
            name = self.file_of(role, version)
            with open(os.path.join(self.md, name), "rb") as f:
                data = f.read()
            e["length"] = len(data)
            e["hashes"] = {"sha256": hashlib.sha256(data).hexdigest()}
        return e

    def file_of(self, role, version):
        q = urllib.parse.quote(role, safe="")
        if self.s["consistent"]:
            return "%d.%s.json" % (version, q)
        return q + ".json"

    def write_targets(self, role):
        r = self.s["roles"][role]
        signed = self.common(role, "targets")
        signed["targets"] = r["targets"]
        if r.get("succinct"):
            sr = r["succinct"]
            signed["delegations"] = {
                "keys": {k: self.s["keys"][k]["public"]
                         for k in sorted(sr["keyids"])},
                "succinct_roles": sr}
        elif r["delegations"]:
            ids = set()
            for d in r["delegations"]:
                ids.update(d["keyids"])
            signed["delegations"] = {
                "keys": {k: self.s["keys"][k]["public"] for k in sorted(ids)},
                "roles": [{k: v for k, v in d.items()}
                          for d in r["delegations"]]}
        d = self.delegator(role)
        self.put(self.file_of(role, r["version"]),
                 self.envelope(signed, r.get("signers",
                                             d["keyids"][:d["threshold"]])))

    def write_snapshot(self):
        r = self.s["roles"]["snapshot"]
        signed = self.common("snapshot", "snapshot")
        meta = {}
        for name, t in self.s["roles"].items():
            if name not in ("root", "timestamp", "snapshot"):
                meta[name + ".json"] = self.meta_entry(name, t["version"])
        meta.update(r.get("override", {}))
        signed["meta"] = meta
        self.put(self.file_of("snapshot", r["version"]),
                 self.envelope(signed, r["keyids"][:r["threshold"]]))

    def write_timestamp(self):
        r = self.s["roles"]["timestamp"]
        signed = self.common("timestamp", "timestamp")
        v = self.s["roles"]["snapshot"]["version"]
        e = self.meta_entry("snapshot", v)
        e["version"] = r.get("snapshot_version", v)
        signed["meta"] = {"snapshot.json": e}
        self.put("timestamp.json",
                 self.envelope(signed, r["keyids"][:r["threshold"]]))

    def write(self, role):
        if role == "root":
            self.write_root()
        elif role == "timestamp":
            self.write_timestamp()
        elif role == "snapshot":
            self.write_snapshot()
        else:
            self.write_targets(role)

    def publish(self, roles):
        for role in roles:
            self.s["roles"][role]["version"] += 1
            self.write_targets(role)
        for role in ("snapshot", "timestamp"):
            self.s["roles"][role]["version"] += 1
            self.write(role)

    def target(self, role, path, text):
        data = text.encode()
        h = {"sha256": hashlib.sha256(data).hexdigest(),
             "sha512": hashlib.sha512(data).hexdigest()}
        self.s["roles"][role]["targets"][path] = {"length": len(data),
                                                  "hashes": h}
        d, _, base = path.rpartition("/")
        names = [path]
        if self.s["consistent"]:
            names = [(d + "/" if d else "") + h["sha256"] + "." + base]
        for n in names:
            full = os.path.join(self.tg, n)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as f:
                f.write(data)

    def delegate(self, parent, child, opts):
        ids = self.keys(int(opts.get("keys", 1)),
                        opts.get("keytype", self.s["keytype"]))
        d = {"name": child, "keyids": ids,
             "threshold": int(opts.get("threshold", 1)),
             "terminating": "terminating" in opts}
        if "prefixes" in opts:
            d["path_hash_prefixes"] = opts["prefixes"].split(",")
        else:
            d["paths"] = opts.get("paths", "*").split(",")
        self.s["roles"][parent]["delegations"].append(d)
        self.s["roles"][child] = {"keyids": ids, "threshold": d["threshold"],
                                  "version": 1, "expires": expires_in(365),
                                  "targets": {}, "delegations": []}
        self.write_targets(child)

    def succinct(self, parent, prefix, bits):
        bits = int(bits)
        ids = self.keys(1, self.s["keytype"])
        sr = {"keyids": ids, "threshold": 1, "bit_length": bits,
              "name_prefix": prefix}
        self.s["roles"][parent]["succinct"] = sr
        width = len("%x" % (2 ** bits - 1))
        for b in range(2 ** bits):
            name = "%s-%0*x" % (prefix, width, b)
            self.s["roles"][name] = {"keyids": ids, "threshold": 1,
                                     "version": 1, "expires": expires_in(365),
                                     "targets": {}, "delegations": []}
            self.write_targets(name)

    def bin_of(self, role, path):
        sr = self.s["roles"][role]["succinct"]
        h = int(hashlib.sha256(path.encode()).hexdigest()[:8], 16)
        width = len("%x" % (2 ** sr["bit_length"] - 1))
        return "%s-%0*x" % (sr["name_prefix"], width,
                            h >> (32 - sr["bit_length"]))

    def skill(self, path, opts):
        """Publish the skill directory path: its zip (or the bytes of
        opts["zip"]) as skills/NAME/VERSION/TREE.zip and its catalog entry."""
        import zipfile
        import io
        front = open(os.path.join(path, "SKILL.md")).read().split("---")[1]
        meta, fm = {}, {}
        for line in front.splitlines():
            if not line.strip():
                continue
            k, _, v = line.strip().partition(":")
            v = v.strip().strip('"')
            (meta if line.startswith(" ") else fm)[k] = v
        files = []
        for dirpath, _, names in os.walk(path):
            for n in names:
                full = os.path.join(dirpath, n)
                rel = os.path.relpath(full, path)
                data = open(full, "rb").read()
                files.append({"executable": bool(os.stat(full).st_mode & 0o111),
                              "path": rel, "role": role_of(rel),
                              "sha256": hashlib.sha256(data).hexdigest(),
                              "size": len(data)})
        files.sort(key=lambda f: f["path"].split("/"))
        tree = hashlib.sha256(json.dumps(
            files, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        name = fm["name"]
        if "zip" in opts:
            data = open(opts["zip"], "rb").read()
        else:
            buf = io.BytesIO()
            with zipfile.ZipFile(buf, "w") as z:
                for f in files:
                    zi = zipfile.ZipInfo(name + "/" + f["path"],
                                         (1980, 1, 1, 0, 0, 0))
                    zi.compress_type = zipfile.ZIP_DEFLATED
                    zi.external_attr = (0o100755 if f["executable"]
                                        else 0o100644) << 16
                    z.writestr(zi, open(os.path.join(path, f["path"]),
                                        "rb").read(), compresslevel=9)
            data = buf.getvalue()
        version = meta["heartwood.version"]
        target = "skills/%s/%s/%s.zip" % (name, version, tree)
        csv = lambda k: [x.strip() for x in meta[k].split(",")]
        policy = {"schema_version": "heartwood.skill-policy.v1",
                  "id": meta["heartwood.id"], "version": version,
                  "dataset_types": csv("heartwood.dataset-types"),
                  "platforms": csv("heartwood.platforms"),
                  "phi_risk": meta["heartwood.phi-risk"],
                  "requires_network":
                      meta["heartwood.requires-network"] == "true",
                  "controlled_data": meta["heartwood.controlled-data"],
                  "approval_summary": meta["heartwood.approval-summary"]}
        if "heartwood.entrypoint" in meta:
            policy["entrypoint"] = meta["heartwood.entrypoint"]
        entry = {"schema_version": "heartwood.skill-catalog-entry.v1",
                 "name": name, "description": fm["description"],
                 "license": fm["license"],
                 "compatibility": fm.get("compatibility"),
                 "policy": policy,
                 "allowed_tools": fm.get("allowed-tools", "").split(),
                 "mcp_servers": [], "dynamic_context": False,
                 "files": files, "tree_sha256": tree,
                 "archive_sha256": hashlib.sha256(data).hexdigest(),
                 "archive_size": len(data), "target": target,
                 "source_repository": "https://github.com/o/r",
                 "source_revision": opts.get("revision", "a" * 40),
                 "review": "repository-reviewed", "revoked": False,
                 "revocation_reason": None}
        self.s.setdefault("catalog", {})[name] = entry
        self.put_target(opts.get("role", "targets"), target, data)
        self.write_catalog()

    def put_target(self, role, path, data):
        h = {"sha256": hashlib.sha256(data).hexdigest()}
        self.s["roles"][role]["targets"][path] = {"length": len(data),
                                                  "hashes": h}
        d, _, base = path.rpartition("/")
        name = path
        if self.s["consistent"]:
            name = (d + "/" if d else "") + h["sha256"] + "." + base
        full = os.path.join(self.tg, name)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)

    def write_catalog(self):
        cat = {"schema_version": "heartwood.skill-catalog.v1",
               "entries": [self.s["catalog"][n]
                           for n in sorted(self.s["catalog"])]}
        data = (json.dumps(cat, sort_keys=True, separators=(",", ":")) +
                "\n").encode()
        self.put_target("targets", "catalog.json", data)

    def revoke(self, name, reason):
        self.s["catalog"][name].update(revoked=True, revocation_reason=reason)
        self.write_catalog()

    def unlist(self, name):
        del self.s["catalog"][name]
        self.write_catalog()

    def root(self, opts):
        r = self.s["roles"]
        old = list(r["root"]["keyids"])
        kt = opts.get("keytype", self.s["keytype"])
        for role in opts.get("rotate", "").split(","):
            if role:
                r[role]["keyids"] = self.keys(1, kt)
        if "keys" in opts:
            r["root"]["keyids"] = self.keys(int(opts["keys"]), kt)
        if "threshold" in opts:
            r["root"]["threshold"] = int(opts["threshold"])
        new = r["root"]["keyids"]
        signers = old[:int(opts.get("old-signers", len(old)))]
        for k in new[:int(opts.get("new-signers", len(new)))]:
            if k not in signers:
                signers.append(k)
        if "sign-with" in opts:
            signers = opts["sign-with"].split(",")
        r["root"]["version"] += 1
        self.write_root(signers)

    def set(self, role, field, value):
        r = self.s["roles"][role]
        if field == "expires":
            r["expires"] = value
        elif field == "version":
            r["version"] = int(value)
        elif field == "signers":
            r["signers"] = value.split(",")
        elif field == "pad":
            r["pad"] = int(value)
        elif field == "snapshot-version":
            r["snapshot_version"] = int(value)
        elif field == "role-version":
            name, v = value.split("=")
            r.setdefault("override", {})[name] = {"version": int(v)}
        else:
            raise ValueError(field)


def parse_opts(args):
    pos, opts = [], {}
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--terminating", "--consistent", "--meta-hashes"):
            opts[a[2:]] = True
        elif a.startswith("--"):
            opts[a[2:]] = args[i + 1]
            i += 1
        else:
            pos.append(a)
        i += 1
    return pos, opts


class Handler(http.server.BaseHTTPRequestHandler):
    # HTTP/1.0 and the header spelled as the conformance suite's server does
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        with open(self.server.logfile, "a") as f:
            f.write(self.path + "\n")
        root = self.server.root
        redirect = os.path.join(root, ".redirect")
        if os.path.exists(redirect):
            with open(redirect) as f:
                loc = f.read().strip()
            self.send_response(302)
            self.send_header("Location", loc)
            self.send_header("Content-length", "0")
            self.end_headers()
            return
        path = os.path.normpath(os.path.join(root, self.path.lstrip("/")))
        if not path.startswith(root + "/") or not os.path.isfile(path):
            self.send_response(404)
            self.send_header("Content-length", "0")
            self.end_headers()
            return
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def serve(repo, portfile, logfile):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.root = os.path.realpath(os.path.join(repo.path, "repo"))
    srv.logfile = logfile
    open(logfile, "a").close()
    tmp = portfile + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, portfile)
    srv.serve_forever()


def run(repo, op, args):
    pos, opts = parse_opts(args)
    if op == "init":
        repo.init(opts.get("keytype", "ecdsa"), "consistent" in opts,
                  "meta-hashes" in opts)
    elif op == "target":
        repo.target(*pos)
    elif op == "delegate":
        repo.delegate(pos[0], pos[1], opts)
    elif op == "succinct":
        repo.succinct(*pos)
    elif op == "bin":
        print(repo.bin_of(*pos))
    elif op == "skill":
        repo.skill(pos[0], opts)
    elif op == "revoke":
        repo.revoke(*pos)
    elif op == "catalog":
        repo.write_catalog()
    elif op == "unlist":
        repo.unlist(*pos)
    elif op == "publish":
        repo.publish(pos)
    elif op == "sign":
        repo.write(pos[0])
    elif op == "set":
        repo.set(*pos)
    elif op == "root":
        repo.root(opts)
    elif op == "serve":
        serve(repo, *pos)
    else:
        raise SystemExit("tuf_sim: unknown operation " + op)


def main():
    repo = Repo(sys.argv[1])
    ops, cur = [], []
    for a in sys.argv[2:]:
        if a == "--" and cur:
            ops.append(cur)
            cur = []
        else:
            cur.append(a)
    if cur:
        ops.append(cur)
    for o in ops:
        run(repo, o[0], o[1:])
        if o[0] != "serve":
            repo.save()


if __name__ == "__main__":
    main()
