#!/usr/bin/env python3
"""ackpipe.py N ACKFILE [--burst] -- CMD...: run CMD, feed it N agent-message
drafts one at a time, waiting for each acknowledgement line before sending
the next (so every draft is its own batch), and append each ack to ACKFILE
as it arrives.  With --burst, all N drafts are written at once and the
input stays open until N acks have come (or CMD's output ends): a writer
that only acknowledges on more input, or on its end, would hang, so after
30 seconds without an ack CMD is killed and this exits 99.  Exits with
CMD's status (128+signal when killed)."""
import json
import select
import subprocess
import sys
import threading


def draft(i):
    return (json.dumps({"kind": "agent_message.emitted",
                        "payload": {"content": "ack %d" % i}}) + "\n").encode()


def feed(p, n):
    try:
        p.stdin.write(b"".join(draft(i) for i in range(n)))
        p.stdin.flush()
    except BrokenPipeError:
        pass


def burst(p, n, acks):
    t = threading.Thread(target=feed, args=(p, n), daemon=True)
    t.start()
    got, out = 0, p.stdout.fileno()
    pending = b""
    while got < n:
        r, _, _ = select.select([out], [], [], 30)
        if not r:
            p.kill()
            p.wait()
            sys.stderr.write("ackpipe: no acknowledgement for 30 s after "
                             "%d of %d: killed\n" % (got, n))
            sys.exit(99)
        chunk = p.stdout.read1(65536)
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            acks.write(line + b"\n")
            got += 1
        acks.flush()
    acks.write(pending)


def main():
    n, ackfile = int(sys.argv[1]), sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with open(ackfile, "ab") as acks:
        if "--burst" in sys.argv[3:sys.argv.index("--")]:
            burst(p, n, acks)
        else:
            for i in range(n):
                try:
                    p.stdin.write(draft(i))
                    p.stdin.flush()
                except BrokenPipeError:
                    break
                line = p.stdout.readline()
                if not line:
                    break
                acks.write(line)
                acks.flush()
    try:
        p.stdin.close()
    except BrokenPipeError:
        pass
    rest = p.stdout.read()
    with open(ackfile, "ab") as acks:
        acks.write(rest)
    rc = p.wait()
    sys.exit(128 - rc if rc < 0 else rc)


main()
