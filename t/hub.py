#!/usr/bin/env python3
"""hub.py - a model hub stand-in for the tests of hw-model (loopback only).

  hub.py siblings DIR   print DIR/files/ as the hub's siblings[] (size,
                        blobId, and lfs.sha256 for *.gguf, *.safetensors,
                        whose blobId is that of their LFS pointer)
  hub.py serve ROOT     serve ROOT on two loopback ports: the hub and a
                        second host like the hub's file CDN; writes
                        "HUBPORT CDNPORT" to ROOT/ports when ready

ROOT/OWNER/NAME/info.json is the model info (the hub's answer with
blobs=true; its "sha" is the commit), ROOT/OWNER/NAME/refs.json maps
branch and tag names to commits, ROOT/OWNER/NAME/files/ the files.  An
older commit C, from which a branch has moved on, is served from
ROOT/OWNER/NAME/at/C/ (info.json and files/ as above).  Both
servers append every request to ROOT/requests.jsonl: host (hub or cdn),
method, path, and the Range and Authorization headers.

ROOT/behave.json, read at each request, makes the hub lie:
  redirect: "cdn" (a 302 to the CDN), "relative" (a 302 to another path
            of the hub), "ftp" (to an ftp: URL), "loop" (to itself)
  truncate: {path: N}   send only the first N bytes (and say N)
  drop:     {path: N}   say the full length, close after N bytes; once
            per path (ROOT/dropped.json remembers)
  throttle: {path: B}   B bytes a second, in small writes
  bytes:    {path: TEXT} serve TEXT instead of the file
  commit:   TEXT        the X-Repo-Commit header instead of the commit
  ignore_range: true    answer 200 with the whole file to a range
  status:   {path: N}   answer status N
  info:     TEXT        answer the model info route with TEXT as is
"""
import hashlib
import http.server
import json
import os
import socketserver
import sys
import threading
import time
import urllib.parse

LFS = (".gguf", ".safetensors")


def siblings(d):
    out = []
    base = os.path.join(d, "files")
    for r, _, fs in os.walk(base):
        for f in fs:
            p = os.path.join(r, f)
            rel = os.path.relpath(p, base)
            data = open(p, "rb").read()
            git = data
            if rel.endswith(LFS):
                # as the hub: git holds an LFS pointer, and blobId is its id
                sha = hashlib.sha256(data).hexdigest()
                git = ("version https://git-lfs.github.com/spec/v1\n"
                       "oid sha256:%s\nsize %d\n" % (sha, len(data))).encode()
            blob = hashlib.sha1(b"blob %d\0" % len(git) + git).hexdigest()
            s = {"rfilename": rel, "size": len(data), "blobId": blob}
            if rel.endswith(LFS):
                s["lfs"] = {"sha256": sha, "size": len(data),
                            "pointerSize": len(git)}
            out.append(s)
    out.sort(key=lambda s: s["rfilename"])
    return out


ROOT = None
LOCK = threading.Lock()
PORTS = {}


def behave():
    try:
        return json.load(open(os.path.join(ROOT, "behave.json")))
    except FileNotFoundError:
        return {}


def log(host, h):
    rec = {"host": host, "method": h.command, "path": h.path,
           "range": h.headers.get("Range"),
           "authorization": h.headers.get("Authorization")}
    with LOCK:
        with open(os.path.join(ROOT, "requests.jsonl"), "a") as f:
            f.write(json.dumps(rec, sort_keys=True) + "\n")


def repo_info(owner, name, rev=None):
    """(info, refs, dir) of the repository at rev (a commit under at/ when
    it is one), or (None, None, None)"""
    d = os.path.join(ROOT, owner, name)
    try:
        refs = json.load(open(os.path.join(d, "refs.json")))
    except FileNotFoundError:
        refs = {}
    old = os.path.join(d, "at", refs.get(rev, rev or ""))
    if rev and "/" not in rev and ".." not in rev and os.path.isdir(old):
        d = old
    try:
        info = json.load(open(os.path.join(d, "info.json")))
    except FileNotFoundError:
        return None, None, None
    return info, refs, d


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    host = "hub"

    def log_message(self, *a):
        pass

    def answer(self, code, body=b"", ctype="application/json", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        log(self.host, self)
        u = urllib.parse.urlsplit(self.path)
        parts = [urllib.parse.unquote(p) for p in u.path.split("/")[1:]]
        b = behave()
        try:
            if self.host == "cdn" and parts[:1] == ["blob"]:
                return self.file(parts[1], parts[2], "/".join(parts[3:]),
                                 None, b)
            if self.host == "hub" and parts[:1] == ["blob-redirected"]:
                return self.file(parts[1], parts[2], "/".join(parts[3:]),
                                 None, b)
            if self.host == "hub" and parts[:2] == ["api", "models"]:
                return self.info(parts[2:], b)
            if self.host == "hub" and len(parts) > 4 and \
                    parts[2] == "resolve":
                return self.resolve(parts, b)
        except (BrokenPipeError, ConnectionResetError):
            return
        self.answer(404, b'{"error":"not found"}')

    def info(self, parts, b):
        if "info" in b:
            return self.answer(200, b["info"].encode())
        if len(parts) == 2:
            rev = "main"
        elif len(parts) == 4 and parts[2] == "revision":
            rev = parts[3]
        else:
            return self.answer(404, b'{"error":"not found"}')
        info, refs, _ = repo_info(parts[0], parts[1], rev)
        if info is None:
            return self.answer(401, b'{"error":"Repository not found"}')
        if rev != info.get("sha") and refs.get(rev) != info.get("sha"):
            return self.answer(404, b'{"error":"Invalid rev id"}')
        self.answer(200, json.dumps(info).encode())

    def resolve(self, parts, b):
        owner, name, rev = parts[0], parts[1], parts[3]
        path = "/".join(parts[4:])
        info, refs, d = repo_info(owner, name, rev)
        if info is None:
            return self.answer(404)
        commit = refs.get(rev, rev)
        if commit != info.get("sha"):
            return self.answer(404, b'{"error":"Invalid rev id"}')
        hdr = [("X-Repo-Commit", b.get("commit", commit))]
        where = b.get("redirect")
        q = urllib.parse.quote
        if where == "cdn":
            loc = "http://127.0.0.1:%d/blob/%s/%s/%s?sig=x" % (
                PORTS["cdn"], q(owner), q(name), q(path))
            return self.answer(302, b"", "text/plain",
                               hdr + [("Location", loc)])
        if where == "ftp":
            return self.answer(302, b"", "text/plain", hdr + [
                ("Location", "ftp://127.0.0.1/%s" % q(path))])
        if where == "loop":
            return self.answer(302, b"", "text/plain",
                               hdr + [("Location", self.path)])
        if where == "relative":
            loc = "/blob-redirected/%s/%s/%s" % (q(owner), q(name), q(path))
            return self.answer(302, b"", "text/plain",
                               hdr + [("Location", loc)])
        self.file(owner, name, path, hdr, b, d)

    def file(self, owner, name, path, hdr, b, d=None):
        p = os.path.join(d or os.path.join(ROOT, owner, name), "files", path)
        if ".." in path.split("/") or not os.path.isfile(p):
            return self.answer(404, b"", "text/plain", hdr or ())
        data = open(p, "rb").read()
        if path in b.get("bytes", {}):
            data = b["bytes"][path].encode()
        if path in b.get("status", {}):
            return self.answer(b["status"][path], b"oops", "text/plain")
        if path in b.get("truncate", {}):
            data = data[:b["truncate"][path]]
        code, start = 200, 0
        extra = list(hdr or ())
        rng = self.headers.get("Range")
        if rng and not b.get("ignore_range"):
            start = int(rng.split("=")[1].split("-")[0])
            if start >= len(data):
                return self.answer(416, b"", "text/plain", extra)
            code = 206
            extra.append(("Content-Range", "bytes %d-%d/%d" % (
                start, len(data) - 1, len(data))))
        body = data[start:]
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        drop = b.get("drop", {}).get(path)
        if drop is not None:
            df = os.path.join(ROOT, "dropped.json")
            with LOCK:
                done = json.load(open(df)) if os.path.exists(df) else []
                fresh = path not in done
                if fresh:
                    json.dump(done + [path], open(df, "w"))
            if fresh:
                self.wfile.write(body[:max(0, drop - start)])
                self.wfile.flush()
                self.close_connection = True
                return
        rate = b.get("throttle", {}).get(path)
        if rate:
            step = max(1, rate // 20)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(0.05)
        else:
            self.wfile.write(body)


class CdnHandler(Handler):
    host = "cdn"


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def serve(root):
    global ROOT
    ROOT = root
    hub = Server(("127.0.0.1", 0), Handler)
    cdn = Server(("127.0.0.1", 0), CdnHandler)
    PORTS["hub"], PORTS["cdn"] = hub.server_port, cdn.server_port
    threading.Thread(target=cdn.serve_forever, daemon=True).start()
    tmp = os.path.join(root, "ports.tmp")
    with open(tmp, "w") as f:
        f.write("%d %d\n" % (PORTS["hub"], PORTS["cdn"]))
    os.rename(tmp, os.path.join(root, "ports"))
    hub.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "siblings":
        json.dump(siblings(sys.argv[2]), sys.stdout)
    else:
        serve(sys.argv[2])
