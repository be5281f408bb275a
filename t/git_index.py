#!/usr/bin/env python3
"""git_index.py INDEX - hostile variants of a version 2 git index, each
written beside it as INDEX.NAME with a correct SHA-1 trailer, so that only
the reader's own checks stand between them and hw-inspect's stat pass:
counts that lie, a cut entry, entries out of order or twice, a name length
that lies, extensions that lie about their size or are
required and unknown, an unknown version."""
import hashlib
import struct
import sys


def entries(d):
    """The (start, end) of each entry of a version 2 index."""
    n = struct.unpack(">I", d[8:12])[0]
    out, p = [], 12
    for _ in range(n):
        nul = d.index(b"\0", p + 62)
        end = p + ((nul - p + 8) & ~7)
        out.append((p, end))
        p = end
    return out


def write(base, name, body):
    with open("%s.%s" % (base, name), "wb") as f:
        f.write(bytes(body) + hashlib.sha1(bytes(body)).digest())


def main():
    path = sys.argv[1]
    d = bytearray(open(path, "rb").read())[:-20]
    assert d[:4] == b"DIRC" and struct.unpack(">I", d[4:8])[0] == 2
    ents = entries(d)
    tail = ents[-1][1]
    n = len(ents)

    def with_count(c):
        v = bytearray(d)
        v[8:12] = struct.pack(">I", c)
        return v

    write(path, "count-high", with_count(n + 1))
    write(path, "count-low", with_count(n - 1))
    write(path, "count-huge", with_count(0xffffffff))
    write(path, "cut", d[:ents[1][0] + 30])
    (a0, a1), (b0, b1) = ents[0], ents[1]
    write(path, "order", d[:a0] + d[b0:b1] + d[a0:a1] + d[b1:])
    write(path, "twice", with_count(n + 1)[:a1] + d[a0:a1] + d[a1:])
    v = bytearray(d)
    v[a0 + 61] = (v[a0 + 61] + 1) & 0xff      # the name length
    write(path, "namelen", v)
    v = bytearray(d)
    if tail + 8 <= len(v):
        v[tail + 4:tail + 8] = struct.pack(">I", 0x7fffffff)
    write(path, "extsize", v)
    v = bytearray(d)
    if tail + 8 <= len(v):
        v[tail:tail + 4] = b"tree"              # unknown, so required
    write(path, "extrequired", v)
    v = bytearray(d)
    v[4:8] = struct.pack(">I", 5)
    write(path, "version", v)


if __name__ == "__main__":
    main()
