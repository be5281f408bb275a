#!/usr/bin/env python3
"""leaks.py KEY PATH... - where a credential value shows, for the
redaction tests (t/0535-hw-agent-redaction.bats).

For each file (directories are walked) that holds KEY or one of the forms
it is commonly written in, prints "PATH: FORM", one line a match, and
exits 0.  The forms: the exact bytes; standard and URL-safe base64 at the
three alignments (each character whose six bits all come from KEY); hex;
percent-encoding of every byte, and of all but the unreserved ones, in
both cases.  A missing path is skipped.
"""
import base64
import os
import sys
import urllib.parse


def b64_cores(k):
    for a in range(3):
        for name, enc in (("base64", base64.b64encode),
                          ("base64url", base64.urlsafe_b64encode)):
            e = enc(b"\0" * a + k)
            j0 = -(-8 * a // 6)
            j1 = 8 * (a + len(k)) // 6
            yield "%s@%d" % (name, a), e[j0:j1]


def forms(k):
    out = [("exact", k)]
    out += list(b64_cores(k))
    out.append(("hex", k.hex().encode()))
    out.append(("HEX", k.hex().upper().encode()))
    q = urllib.parse.quote(k, safe="-._~").encode()
    out.append(("percent", q))
    out.append(("percent-lower", percent_lower(q)))
    every = "".join("%%%02X" % c for c in k).encode()
    out.append(("percent-all", every))
    out.append(("percent-all-lower", every.lower()))
    return out


def percent_lower(q):
    s = q.decode()
    r, i = [], 0
    while i < len(s):
        if s[i] == "%":
            r.append(s[i:i + 3].lower())
            i += 3
        else:
            r.append(s[i])
            i += 1
    return "".join(r).encode()


def files(path):
    if os.path.isdir(path) and not os.path.islink(path):
        for root, _, names in os.walk(path):
            for n in sorted(names):
                yield os.path.join(root, n)
    elif os.path.isfile(path):
        yield path


def main():
    key = sys.argv[1].encode()
    fs = forms(key)
    for p in sys.argv[2:]:
        for f in files(p):
            try:
                data = open(f, "rb").read()
            except OSError:
                continue
            for name, form in fs:
                if form in data:
                    print("%s: %s" % (f, name))


main()
