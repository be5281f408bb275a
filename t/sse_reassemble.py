#!/usr/bin/env python3
"""sse_reassemble.py - read a chat-completions answer the way an OpenAI
client does and print the assistant message it adds up to, as one line of
JSON with sorted keys.

usage: sse_reassemble.py [--feed N] [--completion] < BODY

The body is read from standard input as an event stream (text/event-stream):
lines end in CR LF, LF or CR; lines starting with ':' are comments; the data
lines of an event are joined with LF and the event is dispatched at a blank
line; an event whose data is [DONE] ends the stream.  Each other event is a
chat.completion.chunk: role and content deltas are concatenated (a null
content adds nothing), tool-call fragments are stitched by their index (id,
type and name from the fragment that carries them, arguments concatenated),
the finish reason is the last non-null one, and usage comes from whichever
chunk carries it (a usage-only chunk has "choices": []).

--feed N hands the bytes to the parser N at a time, to show that a reader
gets the same message whatever the splits (a CR at the end of one piece and
an LF at the start of the next are one line end).  --completion reads a
non-streaming chat.completion object instead, so that the two can be
compared.

Output: {"content", "finish_reason", "id", "role", "tool_calls": [{"arguments"
(parsed), "id", "name", "type"}], "usage"}.  Anything a client would refuse
(bad JSON, data after [DONE], no [DONE], a fragment for a call it has not
seen, arguments that are not a JSON object) exits 1 with the reason.
"""
import json
import sys


def die(why):
    sys.stderr.write("sse_reassemble: %s\n" % why)
    sys.exit(1)


class EventStream:
    def __init__(self):
        self.buf = b""
        self.data = []
        self.events = []

    def feed(self, chunk, eof=False):
        self.buf += chunk
        while True:
            cr, lf = self.buf.find(b"\r"), self.buf.find(b"\n")
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                return
            i = min(ends)
            if self.buf[i:i + 1] == b"\r":
                if i + 1 == len(self.buf) and not eof:
                    return      # the LF of a CR LF may be in the next piece
                skip = 2 if self.buf[i + 1:i + 2] == b"\n" else 1
            else:
                skip = 1
            line, self.buf = self.buf[:i], self.buf[i + skip:]
            self.line(line)

    def line(self, line):
        if line == b"":
            if self.data:
                self.events.append("\n".join(self.data))
            self.data = []
            return
        if line.startswith(b":"):
            return
        field, _, value = line.partition(b":")
        if value.startswith(b" "):
            value = value[1:]
        if field == b"data":
            self.data.append(value.decode("utf-8"))


class Message:
    def __init__(self):
        self.id = None
        self.role = None
        self.content = None
        self.calls = {}
        self.finish = None
        self.usage = None

    def delta(self, d):
        if d.get("role") is not None:
            self.role = d["role"]
        if d.get("content") is not None:
            self.content = (self.content or "") + d["content"]
        for f in d.get("tool_calls") or []:
            i = f["index"]
            if i not in self.calls:
                if not f.get("id"):
                    die("a fragment of tool call %d before its id" % i)
                self.calls[i] = {"id": None, "type": None, "name": None,
                                 "arguments": ""}
            c, fn = self.calls[i], f.get("function") or {}
            for k in ("id", "type"):
                if f.get(k):
                    c[k] = f[k]
            if fn.get("name"):
                c["name"] = fn["name"]
            c["arguments"] += fn.get("arguments") or ""

    def chunk(self, ch):
        if ch.get("object") != "chat.completion.chunk":
            die("not a chat.completion.chunk: %r" % ch.get("object"))
        if self.id is not None and ch["id"] != self.id:
            die("chunk ids differ: %s and %s" % (self.id, ch["id"]))
        self.id = ch["id"]
        for choice in ch["choices"]:
            self.delta(choice.get("delta") or {})
            if choice.get("finish_reason") is not None:
                self.finish = choice["finish_reason"]
        if ch.get("usage") is not None:
            self.usage = ch["usage"]

    def result(self):
        calls = []
        for i in sorted(self.calls):
            c = dict(self.calls[i])
            try:
                c["arguments"] = json.loads(c["arguments"])
            except ValueError as e:
                die("tool call %d: arguments are not JSON: %s" % (i, e))
            if not isinstance(c["arguments"], dict):
                die("tool call %d: arguments are not an object" % i)
            calls.append(c)
        return {"id": self.id, "role": self.role, "content": self.content,
                "tool_calls": calls, "finish_reason": self.finish,
                "usage": self.usage}


def stream(body, feed):
    es = EventStream()
    step = feed or max(len(body), 1)
    for off in range(0, len(body), step):
        es.feed(body[off:off + step])
    es.feed(b"", eof=True)
    m, done = Message(), False
    for ev in es.events:
        if done:
            die("an event after [DONE]")
        if ev == "[DONE]":
            done = True
            continue
        try:
            m.chunk(json.loads(ev))
        except ValueError as e:
            die("an event is not JSON: %s" % e)
    if not done:
        die("the stream ended without [DONE]")
    return m.result()


def completion(body):
    c = json.loads(body)
    if c.get("object") != "chat.completion":
        die("not a chat.completion")
    m = Message()
    m.id = c["id"]
    msg = c["choices"][0]["message"]
    m.role, m.content = msg["role"], msg.get("content")
    for i, tc in enumerate(msg.get("tool_calls") or []):
        m.calls[i] = {"id": tc["id"], "type": tc["type"],
                      "name": tc["function"]["name"],
                      "arguments": tc["function"]["arguments"]}
    m.finish = c["choices"][0]["finish_reason"]
    m.usage = c.get("usage")
    return m.result()


def main():
    args, feed, whole = sys.argv[1:], 0, False
    while args:
        a = args.pop(0)
        if a == "--feed" and args:
            feed = int(args.pop(0))
        elif a == "--completion":
            whole = True
        else:
            die("usage: sse_reassemble.py [--feed N] [--completion]")
    body = sys.stdin.buffer.read()
    out = completion(body) if whole else stream(body, feed)
    print(json.dumps(out, sort_keys=True, separators=(",", ":")))


main()
