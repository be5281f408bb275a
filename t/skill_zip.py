#!/usr/bin/python3
"""skill_zip.py OUT DIR KIND - a ZIP archive of the skill directory DIR
(members NAME/PATH, as the reference builds them), made hostile by KIND:

  plain      as the reference builds it
  dotdot     one more member NAME/../escape.txt
  absolute   one more member /tmp/escape.txt
  symlink    references/rules.md as a symlink to /etc/passwd
  device     references/rules.md as a character device
  directory  a directory entry NAME/references/ first
  duplicate  SKILL.md twice
  missing    without references/rules.md
  unlisted   one more member NAME/extra.txt
  othername  every member under a directory of another name of the same
             length (NAMX/PATH)
  bigger     references/rules.md holding 100000 more bytes, its headers
             still saying the listed size
  bomb       references/rules.md as 64 MiB of zeros, declared as such
"""
import os
import struct
import sys
import zipfile


def files(d):
    out = []
    for dirpath, _, names in os.walk(d):
        for n in names:
            full = os.path.join(dirpath, n)
            out.append(os.path.relpath(full, d))
    return sorted(out, key=lambda p: p.split("/"))


def info(name, mode=0o100644):
    zi = zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0))
    zi.compress_type = zipfile.ZIP_DEFLATED
    zi.external_attr = mode << 16
    return zi


def patch_size(path, member, size):
    d = bytearray(open(path, "rb").read())
    for sig, off_n, off_name, off_size in ((b"PK\x03\x04", 26, 30, 22),
                                           (b"PK\x01\x02", 28, 46, 24)):
        pos = 0
        while (j := d.find(sig, pos)) >= 0:
            n = struct.unpack("<H", d[j + off_n:j + off_n + 2])[0]
            if d[j + off_name:j + off_name + n] == member.encode():
                struct.pack_into("<I", d, j + off_size, size)
            pos = j + 4
    open(path, "wb").write(bytes(d))


def main():
    out, d, kind = sys.argv[1:4]
    name = os.path.basename(os.path.normpath(d))
    rules = name + "/references/rules.md"
    with zipfile.ZipFile(out, "w") as z:
        if kind == "directory":
            z.writestr(info(name + "/references/", 0o40755), b"")
        for rel in files(d):
            full = os.path.join(d, rel)
            data = open(full, "rb").read()
            m = name + "/" + rel
            if kind == "othername":
                m = name[:-1] + "X/" + rel
            mode = 0o100755 if os.stat(full).st_mode & 0o111 else 0o100644
            if m == rules:
                if kind == "missing":
                    continue
                if kind == "symlink":
                    data, mode = b"/etc/passwd", 0o120777
                if kind == "device":
                    data, mode = b"", 0o020644
                if kind == "bigger":
                    data += b"x" * 100000
                if kind == "bomb":
                    data = bytes(64 << 20)
            z.writestr(info(m, mode), data)
            if kind == "duplicate" and rel == "SKILL.md":
                z.writestr(info(m, mode), data)
        if kind == "dotdot":
            z.writestr(info(name + "/../escape.txt"), b"escaped")
        if kind == "absolute":
            z.writestr(info("/tmp/escape.txt"), b"escaped")
        if kind == "unlisted":
            z.writestr(info(name + "/extra.txt"), b"extra")
    if kind == "bigger":
        patch_size(out, rules, os.path.getsize(os.path.join(
            d, "references/rules.md")))


if __name__ == "__main__":
    main()
