#!/usr/bin/env python3
"""subscription_server.py SCRIPT LOG - a loopback stand-in for the ChatGPT
sign-in (an OAuth 2.0 device authorization server) and the Responses API
it unlocks, for t/0567-subscription.bats.

It binds 127.0.0.1 on a free port and prints the port on stdout.  SCRIPT
(a JSON object) is read again at each request, so a test may rewrite it
between commands; each of its lists is answered in turn, the last answer
repeated once the others are used:

  device     the answer to POST /oauth/device/code ({"status", "json"});
             by default a code for http://127.0.0.1:PORT/device, interval 1
  poll       answers to POST /oauth/token with the device-code grant
  refresh    answers to POST /oauth/token with grant_type=refresh_token
  responses  answers to POST .../responses: {"response": {"output":
             [items], "usage"}} streamed as the Responses API streams
             (text deltas of 4 characters, arguments deltas of 7), or
             with "mode": "json" as one object; "events": events as they
             are; or {"status", "json"} as it is, where "echo_token": true
             appends the bearer token the request carried to
             error.message

An answer {"status", "json"} is sent as it is.  Each request is appended to
LOG as a JSON line: {"n", "path", "kind", "t", "authorization", "accept",
"account" (the chatgpt-account-id header), "form",
"body", "argv_hits"} (t: the monotonic clock, in seconds) (form: the form fields; body: the JSON body; argv_hits: how
many processes had the bearer token or a form's token in their
arguments at that moment, from /proc/*/cmdline).
"""
import json
import os
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT, LOG = sys.argv[1], sys.argv[2]
lock = threading.Lock()
counts = {}


def argv_hits(secrets):
    hits = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                line = f.read()
        except OSError:
            continue
        hits += any(s and s.encode() in line for s in secrets)
    return hits


def pieces(s, n):
    return [s[i:i + n] for i in range(0, len(s), n)] or [""]


def stream_events(resp):
    out = []
    items = resp.get("output", [])
    out.append({"type": "response.created",
                "response": {"id": "resp_1", "status": "in_progress"}})
    for i, it in enumerate(items):
        if it["type"] == "message":
            text = "".join(c.get("text", "") for c in it["content"])
            out.append({"type": "response.output_item.added",
                        "output_index": i,
                        "item": {"type": "message", "id": "msg_%d" % i,
                                 "role": "assistant", "content": []}})
            out += [{"type": "response.output_text.delta",
                     "item_id": "msg_%d" % i, "output_index": i,
                     "content_index": 0, "delta": p}
                    for p in pieces(text, 4)]
            out.append({"type": "response.output_text.done",
                        "output_index": i, "text": text})
        elif it["type"] == "function_call":
            out.append({"type": "response.output_item.added",
                        "output_index": i,
                        "item": dict(it, id="fc_%d" % i, arguments="")})
            out += [{"type": "response.function_call_arguments.delta",
                     "item_id": "fc_%d" % i, "output_index": i,
                     "delta": p} for p in pieces(it["arguments"], 7)]
        out.append({"type": "response.output_item.done", "output_index": i,
                    "item": it})
    out.append({"type": "response.completed",
                "response": {"id": "resp_1", "status": "completed",
                             "output": items,
                             "usage": resp.get("usage", {})}})
    return out


def sse(events):
    b = []
    for e in events:
        if isinstance(e, str):
            b.append(b"data: " + e.encode() + b"\n\n")
        else:
            b.append(("event: %s\ndata: %s\n\n" % (
                e.get("type", "x"), json.dumps(e))).encode())
    return b"".join(b)


def pick(script, kind):
    lst = script.get(kind)
    if not lst:
        return None
    i = counts.get(kind, 0)
    counts[kind] = i + 1
    return lst[min(i, len(lst) - 1)]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, data, ctype):
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Connection", "close")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        auth = self.headers.get("Authorization")
        form, body = None, None
        if self.headers.get("Content-Type", "").startswith(
                "application/x-www-form-urlencoded"):
            form = dict(urllib.parse.parse_qsl(raw.decode()))
        else:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        bearer = auth[7:] if auth and auth.startswith("Bearer ") else None
        secrets = [bearer] + [(form or {}).get(k) for k in
                              ("refresh_token", "device_code")]
        with lock:
            script = json.load(open(SCRIPT))
            kind = "responses"
            if self.path.endswith("/oauth/device/code"):
                kind = "device"
            elif self.path.endswith("/oauth/token"):
                kind = "refresh" if (form or {}).get(
                    "grant_type") == "refresh_token" else "poll"
            r = pick(script, kind)
            i = sum(counts.values()) - 1
            with open(LOG, "a") as f:
                f.write(json.dumps({
                    "n": i, "path": self.path, "kind": kind,
                    "t": time.monotonic(),
                    "authorization": auth,
                    "accept": self.headers.get("Accept"),
                    "account": self.headers.get("chatgpt-account-id"),
                    "form": form, "body": body,
                    "argv_hits": argv_hits(secrets)}) + "\n")
        if r is None and kind == "device":
            port = self.server.server_address[1]
            r = {"json": {"device_code": "dev-code-1", "user_code":
                          "WXYZ-1234", "verification_uri":
                          "http://127.0.0.1:%d/device" % port,
                          "expires_in": 600, "interval": 1}}
        if r is None:
            return self.reply(404, b'{"error":"not_found"}',
                              "application/json")
        if "response" in r:
            if r.get("mode") == "json":
                whole = dict({"id": "resp_1", "object": "response",
                              "status": "completed"}, **r["response"])
                return self.reply(200, json.dumps(whole).encode(),
                                  "application/json")
            ev = stream_events(r["response"])
            if "cut" in r:
                ev = ev[:r["cut"]]
            return self.reply(200, sse(ev), "text/event-stream")
        if "events" in r:
            return self.reply(200, sse(r["events"]), "text/event-stream")
        js = r.get("json", {})
        if r.get("echo_token"):
            js["error"]["message"] += " " + (bearer or "")
        return self.reply(r.get("status", 200), json.dumps(js).encode(),
                          "application/json")


def main():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    srv.daemon_threads = True
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
