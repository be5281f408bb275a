#!/usr/bin/env python3
"""sse_server.py SCRIPT LOG - a loopback stand-in for an OpenAI-compatible
model server, for t/0510-model-client.bats.

It binds 127.0.0.1 on a free port, prints the port on stdout, and answers
each POST with the next response of SCRIPT (a JSON array; the last one is
repeated once the others are used).  Each request is appended to LOG as a
JSON line: {"n", "time", "method", "path", "authorization", "content_type",
"body"} (the body parsed when it is JSON).

A response is an object:
  status   HTTP status (200)
  headers  extra headers, {"Name": "value"}
  type     Content-Type ("text/event-stream" with events or raw, else
           "application/json")
  events   strings, each sent as "data: S\\n\\n"
  done     after the events, "data: [DONE]\\n\\n" (true)
  raw      a body sent as it is (instead of events)
  json     a body sent as compact JSON
  pad      bytes of ": padding" comment lines sent before the events
  split    write the body in pieces of this many bytes
  delay    seconds to wait before answering (for timeouts)
  drop     "length": announce a Content-Length longer than the body, then
           close (a cut transfer); otherwise the body simply ends
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
lock = threading.Lock()
count = [0]


def body_of(r):
    if "raw" in r:
        return r["raw"].encode(), "text/event-stream"
    if "json" in r:
        return json.dumps(r["json"]).encode(), "application/json"
    if "events" in r:
        line = b": " + b"p" * 65534 + b"\n"
        out = [line] * -(-r.get("pad", 0) // len(line))
        out += [b"data: " + e.encode() + b"\n\n" for e in r["events"]]
        if r.get("done", True):
            out.append(b"data: [DONE]\n\n")
        return b"".join(out), "text/event-stream"
    return b"", "application/json"


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
        with lock:
            i = count[0]
            count[0] += 1
            with open(LOG, "a") as f:
                f.write(json.dumps({
                    "n": i, "time": time.time(), "method": "POST",
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "content_type": self.headers.get("Content-Type"),
                    "body": body}) + "\n")
        r = SCRIPT[min(i, len(SCRIPT) - 1)]
        try:
            self.answer(r)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def answer(self, r):
        time.sleep(r.get("delay", 0))
        data, ctype = body_of(r)
        self.send_response(r.get("status", 200))
        self.send_header("Content-Type", r.get("type", ctype))
        for k, v in r.get("headers", {}).items():
            self.send_header(k, v)
        if r.get("drop") == "length":
            self.send_header("Content-Length", str(len(data) + 100))
        elif "events" not in r and "raw" not in r:
            self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        step = r.get("split") or len(data) or 1
        for at in range(0, len(data), step):
            self.wfile.write(data[at:at + step])
            self.wfile.flush()
        self.close_connection = True


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
