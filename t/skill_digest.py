#!/usr/bin/python3
"""skill_digest DIR - the tree digest of reference §3.2, written
independently of hw-skill: every regular file, sorted as pathlib sorts
relative paths (component by component), each as {executable, path,
role, sha256, size}, serialized by json.dumps with sorted keys, no
whitespace and ensure_ascii, then SHA-256.  Prints the hex digest."""
import hashlib
import json
import os
import pathlib
import sys


def role(rel):
    if rel == "SKILL.md":
        return "definition"
    if rel == ".mcp.json":
        return "mcp-config"
    for prefix, r in (("scripts/", "script"), ("references/", "reference"),
                      ("assets/", "asset")):
        if rel.startswith(prefix):
            return r
    return "other"


def main():
    root = pathlib.Path(sys.argv[1])
    files = []
    for dirpath, _, names in os.walk(root):
        for n in names:
            p = pathlib.Path(dirpath) / n
            files.append(pathlib.PurePosixPath(p.relative_to(root).as_posix()))
    out = []
    for rel in sorted(files):
        p = root / rel
        data = p.read_bytes()
        out.append({"executable": bool(p.stat().st_mode & 0o111),
                    "path": rel.as_posix(), "role": role(rel.as_posix()),
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "size": len(data)})
    text = json.dumps(out, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True)
    print(hashlib.sha256(text.encode()).hexdigest())


if __name__ == "__main__":
    main()
