#!/usr/bin/env python3
"""models_server.py ROOT - a loopback stand-in for a provider's model list
(GET /v1/models) in the tests of hw-model discover.

It writes its port to ROOT/port when ready and appends every request to
ROOT/requests.jsonl: method, path, and the Authorization, x-api-key and
anthropic-version headers.  ROOT/behave.json, read at each request, says
what to answer:
  body:       the JSON text to answer with (default: an empty list)
  status:     the status (default 200)
  fail_first: N  answer 503 to the first N requests
  echo_key:   true  put the request's key in the body (as some providers
              do in their error messages)
  pages:      {AFTER_ID: JSON text}  answer by the query's after_id
              ("" for none), as Anthropic pages its list
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import urllib.parse

ROOT = sys.argv[1]
LOCK = threading.Lock()
COUNT = [0]


def behave():
    try:
        return json.load(open(os.path.join(ROOT, "behave.json")))
    except FileNotFoundError:
        return {}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        rec = {"method": "GET", "path": self.path,
               "authorization": self.headers.get("Authorization"),
               "x_api_key": self.headers.get("x-api-key"),
               "anthropic_version": self.headers.get("anthropic-version")}
        with LOCK:
            COUNT[0] += 1
            n = COUNT[0]
            with open(os.path.join(ROOT, "requests.jsonl"), "a") as f:
                f.write(json.dumps(rec, sort_keys=True) + "\n")
        b = behave()
        status = b.get("status", 200)
        body = b.get("body", '{"object":"list","data":[]}')
        if "pages" in b:
            q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
            body = b["pages"].get(q.get("after_id", [""])[0], "{}")
        if n <= b.get("fail_first", 0):
            status, body = 503, '{"error":"warming up"}'
        if b.get("echo_key"):
            key = rec["authorization"] or rec["x_api_key"] or ""
            body = json.dumps({"error": {"message": "bad key " + key}})
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    srv = Server(("127.0.0.1", 0), Handler)
    tmp = os.path.join(ROOT, "port.tmp")
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, os.path.join(ROOT, "port"))
    srv.serve_forever()


if __name__ == "__main__":
    main()
