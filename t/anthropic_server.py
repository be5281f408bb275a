#!/usr/bin/env python3
"""anthropic_server.py SCRIPT LOG - a loopback stand-in for Anthropic's
Messages API, for t/0566-anthropic.bats.

It binds 127.0.0.1 on a free port, prints the port on stdout, and answers
each POST with the next response of SCRIPT (a JSON array; the last one is
repeated once the others are used).  Each request is appended to LOG as a
JSON line: {"n", "method", "path", "x_api_key", "anthropic_version",
"content_type", "authorization", "argv_hits", "body"} (the body parsed
when it is JSON; argv_hits: how many processes, at the time of the request,
had the x-api-key value in their arguments, from /proc/*/cmdline).

A response is an object, one of:
  message  a Messages reply {"content": [blocks], "stop_reason", "usage"}
           sent as the API sends it: with "mode": "json" as one
           application/json message, otherwise (the default) as its event
           stream: message_start, a ping, each block's
           content_block_start, its deltas (text in pieces of 4
           characters, tool input as input_json_delta pieces of 7), its
           content_block_stop, then message_delta and message_stop;
           "cut": stop after that many events (a stream cut midway)
  events   events sent as they are: each an object (its "type" names the
           event) or a string (the data line, as it is)
  raw      a body sent as it is, with "type" as its Content-Type
           (text/event-stream unless given)
  status   the HTTP status (200), with "json" as the body; "echo_key":
           true puts the x-api-key the request carried into the body's
           error.message
"""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
lock = threading.Lock()
count = [0]


def argv_hits(key):
    if not key:
        return 0
    hits = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                hits += key.encode() in f.read()
        except OSError:
            pass
    return hits


def pieces(s, n):
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def stream_events(msg):
    usage = msg.get("usage", {})
    start = {"id": "msg_1", "type": "message", "role": "assistant",
             "model": "stand-in", "content": [], "stop_reason": None,
             "usage": {"input_tokens": usage.get("input_tokens", 0),
                       "output_tokens": 1}}
    ev = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for i, b in enumerate(msg.get("content", [])):
        if b["type"] == "tool_use":
            first = dict(b, input={})
            deltas = [{"type": "input_json_delta", "partial_json": p}
                      for p in pieces(json.dumps(b["input"]), 7)]
        elif b["type"] == "text":
            first = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p}
                      for p in pieces(b["text"], 4)]
        else:
            first, deltas = b, []
        ev.append({"type": "content_block_start", "index": i,
                   "content_block": first})
        ev += [{"type": "content_block_delta", "index": i, "delta": d}
               for d in deltas]
        ev.append({"type": "content_block_stop", "index": i})
    ev.append({"type": "message_delta",
               "delta": {"stop_reason": msg.get("stop_reason"),
                         "stop_sequence": None},
               "usage": {"output_tokens": usage.get("output_tokens", 0)}})
    ev.append({"type": "message_stop"})
    return ev


def sse(events):
    out = []
    for e in events:
        if isinstance(e, str):
            out.append(b"data: " + e.encode() + b"\n\n")
        else:
            out.append(("event: %s\ndata: %s\n\n" % (
                e.get("type", "x"), json.dumps(e))).encode())
    return b"".join(out)


def body_of(r, key):
    if "message" in r:
        m = r["message"]
        if r.get("mode") == "json":
            whole = dict({"id": "msg_1", "type": "message",
                          "role": "assistant", "model": "stand-in"}, **m)
            return json.dumps(whole).encode(), "application/json"
        ev = stream_events(m)
        if "cut" in r:
            ev = ev[:r["cut"]]
        return sse(ev), "text/event-stream"
    if "events" in r:
        return sse(r["events"]), "text/event-stream"
    if "raw" in r:
        return r["raw"].encode(), r.get("type", "text/event-stream")
    body = r.get("json", {})
    if r.get("echo_key"):
        body["error"]["message"] += " " + (key or "")
    return json.dumps(body).encode(), "application/json"


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        key = self.headers.get("x-api-key")
        with lock:
            i = count[0]
            count[0] += 1
            with open(LOG, "a") as f:
                f.write(json.dumps({
                    "n": i, "method": "POST", "path": self.path,
                    "x_api_key": key,
                    "anthropic_version":
                        self.headers.get("anthropic-version"),
                    "content_type": self.headers.get("Content-Type"),
                    "authorization": self.headers.get("Authorization"),
                    "argv_hits": argv_hits(key),
                    "body": body}) + "\n")
        r = SCRIPT[min(i, len(SCRIPT) - 1)]
        data, ctype = body_of(r, key)
        try:
            self.send_response(r.get("status", 200))
            self.send_header("Content-Type", ctype)
            self.send_header("Connection", "close")
            if ctype == "application/json":
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
