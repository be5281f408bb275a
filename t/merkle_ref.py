#!/usr/bin/env python3
"""merkle_ref.py - RFC 9162 Merkle trees, naively, straight from the RFC text.

An independent model of lib/audit/merkle.c for the tests: MTH, PATH and PROOF
(RFC 9162 2.1.1, 2.1.3.1, 2.1.4.1) as recursion on lists, nothing clever.

Each stdin line is a JSON array of leaf hex strings (the leaf data; with
--hashed, 32-byte leaf hashes).  For each line, one JSON line is printed:

  {"size": n,
   "roots": [MTH(D[0:m]) for m in 0..n],
   "inclusion": [PATH(i, D[n]) for i in 0..n-1],
   "consistency": [PROOF(m, D[n]) for m in 1..n]}

with every hash in lowercase hex.  --selftest checks the RFC 6962 test
vectors of transparency-dev/merkle and exits 0 or 1.
"""
import hashlib
import json
import sys


def sha256(b):
    return hashlib.sha256(b).digest()


def leaf_hash(d):
    return sha256(b"\x00" + d)


def node_hash(left, right):
    return sha256(b"\x01" + left + right)


def split(n):
    """The largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


# Trees below are lists of leaf hashes: MTH of one leaf is its leaf hash.

def mth(d):
    if len(d) == 0:
        return sha256(b"")
    if len(d) == 1:
        return d[0]
    k = split(len(d))
    return node_hash(mth(d[:k]), mth(d[k:]))


def path(m, d):
    if len(d) == 1:
        return []
    k = split(len(d))
    if m < k:
        return path(m, d[:k]) + [mth(d[k:])]
    return path(m - k, d[k:]) + [mth(d[:k])]


def subproof(m, d, b):
    n = len(d)
    if m == n:
        return [] if b else [mth(d)]
    k = split(n)
    if m <= k:
        return subproof(m, d[:k], b) + [mth(d[k:])]
    return subproof(m - k, d[k:], False) + [mth(d[:k])]


def proof(m, d):
    return subproof(m, d, True)


def hexes(hs):
    return [h.hex() for h in hs]


def report(d):
    n = len(d)
    return {
        "size": n,
        "roots": [mth(d[:m]).hex() for m in range(n + 1)],
        "inclusion": [hexes(path(i, d)) for i in range(n)],
        "consistency": [hexes(proof(m, d)) for m in range(1, n + 1)],
    }


LEAVES = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657",
          "606162636465666768696a6b6c6d6e6f"]
ROOTS = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
]
# (leaf index, tree size, proof) and (size1, size2, proof)
INCLUSION = [
    (0, 8, [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (5, 8, [
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 3, [
        "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"]),
    (1, 5, [
        "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
]
CONSISTENCY = [
    (1, 8, [
        "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"]),
    (6, 8, [
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (2, 5, [
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"]),
    (6, 7, [
        "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"]),
    (1, 1, []),
]


def selftest():
    d = [leaf_hash(bytes.fromhex(x)) for x in LEAVES]
    bad = 0
    checks = [(mth([]).hex(), hashlib.sha256(b"").hexdigest())]
    checks += [(mth(d[:n]).hex(), ROOTS[n - 1]) for n in range(1, 9)]
    checks += [(hexes(path(i, d[:n])), p) for i, n, p in INCLUSION]
    checks += [(hexes(proof(m, d[:n])), p) for m, n, p in CONSISTENCY]
    for got, want in checks:
        if got != want:
            print("mismatch: got %s, want %s" % (got, want), file=sys.stderr)
            bad += 1
    print("%d of %d vectors match" % (len(checks) - bad, len(checks)),
          file=sys.stderr)
    return 1 if bad else 0


def main(argv):
    if "--selftest" in argv:
        return selftest()
    hashed = "--hashed" in argv
    for line in sys.stdin:
        if not line.strip():
            continue
        raw = [bytes.fromhex(x) for x in json.loads(line)]
        d = raw if hashed else [leaf_hash(x) for x in raw]
        print(json.dumps(report(d), separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
