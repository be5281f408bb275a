#!/usr/bin/env python3
"""metadata_server.py SCRIPT LOG - a loopback stand-in for the GCE metadata
server's service-account token, for t/0576-managed-identity.bats.

It binds 127.0.0.1 on a free port and prints the port on stdout.  Each GET
is answered with the next response of SCRIPT (a JSON array; the last one is
repeated once the others are used) and logged to LOG as a JSON line
{"n", "path", "flavor"}.  A response is an object:
  status   HTTP status (200)
  json     a body sent as compact JSON
  raw      a body sent as it is
  size     a body of this many 'x' bytes (an over-long answer)
  delay    seconds to wait before answering (for timeouts)
Like the real server, a request without "Metadata-Flavor: Google" is
refused with 403.
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


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        with lock:
            n = count[0]
            count[0] += 1
            with open(LOG, "a") as f:
                f.write(json.dumps({"n": n, "path": self.path,
                                    "flavor": self.headers.get("Metadata-Flavor")}) + "\n")
        r = SCRIPT[min(n, len(SCRIPT) - 1)]
        if self.headers.get("Metadata-Flavor") != "Google":
            r = {"status": 403, "raw": "Missing Metadata-Flavor:Google header."}
        if r.get("delay"):
            time.sleep(r["delay"])
        if "size" in r:
            body = b"x" * r["size"]
        elif "raw" in r:
            body = r["raw"].encode()
        else:
            body = json.dumps(r.get("json", {}), separators=(",", ":")).encode()
        try:
            self.send_response(r.get("status", 200))
            self.send_header("Content-Type", "application/json")
            self.send_header("Metadata-Flavor", "Google")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
srv.daemon_threads = True
print(srv.server_address[1], flush=True)
srv.serve_forever()
