#!/usr/bin/env python3
"""ackpipe.py N ACKFILE -- CMD...: run CMD, feed it N agent-message drafts
one at a time, waiting for each acknowledgement line before sending the
next (so every draft is its own batch), and append each ack to ACKFILE as
it arrives.  Exits with CMD's status (128+signal when killed)."""
import json
import subprocess
import sys


def main():
    n, ackfile = int(sys.argv[1]), sys.argv[2]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    with open(ackfile, "ab") as acks:
        for i in range(n):
            draft = {"kind": "agent_message.emitted",
                     "payload": {"content": "ack %d" % i}}
            try:
                p.stdin.write((json.dumps(draft) + "\n").encode())
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
