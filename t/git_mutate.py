#!/usr/bin/env python3
"""t/git_mutate.py - a committed repository, then random changes to it.

Usage: git_mutate.py SEED FILES CHANGES

In the current directory (an empty one): a repository of FILES files in
nested directories, committed, every file made older than the index and
the index refreshed, so that no entry is racily clean and hw-inspect's stat
pass decides by the stat data; then CHANGES changes drawn with SEED from
the kinds below, each on paths no earlier change touched, their names
printed.  hw-inspect changes must then list what git status implies.
Left out, each with a test of its own in t/0700: symlinks and nested
repositories (hw-inspect reports them as unsupported, not as changes), a
deleted skip-worktree entry (libgit2 lists it, git does not), and new
content of the same size and mtime (git compares ctime to the second
only, so it misses a change within the same second).
"""
import os
import random
import shutil
import subprocess
import sys

OLD = 1700000000


def git(*args):
    subprocess.run(["git", *args], check=True, stdout=subprocess.DEVNULL)


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def build(rng, files):
    git("init", "-q", "-b", "main", ".")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    write(".gitignore", "*.log\nbuild/\n")
    paths = []
    for i in range(files):
        depth = rng.randrange(0, 4)
        parts = ["d%d" % rng.randrange(0, 6) for _ in range(depth)]
        name = "f%04d%s" % (i, rng.choice(["", ".txt", ".c", "-x"]))
        path = os.path.join(*parts, name) if parts else name
        write(path, "file %d\n" % i)
        paths.append(path)
    git("add", "-A")
    git("commit", "-q", "-m", "base")
    for root, dirs, names in os.walk("."):
        if root == ".":
            dirs.remove(".git")
        for n in dirs + names:
            os.utime(os.path.join(root, n), (OLD, OLD))
    git("update-index", "-q", "--refresh")
    return paths


def dirs_of(paths):
    return sorted({os.path.dirname(p) for p in paths if os.path.dirname(p)})


def mutate(rng, paths, n):
    free = set(paths)
    dirs = dirs_of(paths)
    kinds = [
        ("append", lambda p: open(p, "a").write("more\n")),
        ("same size", lambda p: write(p, open(p).read().replace("file",
                                                                  "elif"))),
        ("delete", os.remove),
        ("untrack", lambda p: git("rm", "-q", "--cached", p)),
        ("git rm", lambda p: git("rm", "-q", p)),
        ("stage", lambda p: (open(p, "a").write("staged\n"),
                             git("add", p))),
        ("stage, revert", lambda p: (open(p, "a").write("x\n"), git("add", p),
                                     write(p, open(p).read()[:-2]))),
        ("chmod +x", lambda p: os.chmod(p, 0o755)),
        ("to directory", lambda p: (os.remove(p), write(p + "/inner", "i\n"))),
        ("git mv", lambda p: git("mv", p, p + ".moved")),
        ("mv", lambda p: os.rename(p, p + ".renamed")),
        ("assume unchanged", lambda p: (open(p, "a").write("hidden\n"),
                                        git("update-index",
                                            "--assume-unchanged", p))),
        ("untracked beside", lambda p: write(p + ".new", "new\n")),
        ("ignored beside", lambda p: write(p + ".log", "log\n")),
        ("added, then gone", lambda p: (write(p + ".tmp", "t\n"),
                                        git("add", p + ".tmp"),
                                        os.remove(p + ".tmp"))),
        ("intent to add", lambda p: (write(p + ".ita", "i\n"),
                                     git("add", "-N", p + ".ita"))),
        ("fifo beside", lambda p: os.mkfifo(p + ".fifo")),
    ]
    dir_kinds = [
        ("remove directory", lambda d: shutil.rmtree(d)),
        ("directory to file", lambda d: (shutil.rmtree(d), write(d, "f\n"))),
        ("untracked tree", lambda d: write(d + "/u1/u2/u3", "u\n")),
        ("empty directory", lambda d: os.makedirs(d + "/empty.d")),
        ("ignored tree", lambda d: write(d + "/build/out", "o\n")),
    ]
    done = []
    for _ in range(n):
        if dirs and rng.random() < 0.15:
            d = rng.choice(dirs)
            under = {p for p in paths if p.startswith(d + "/")}
            if not under <= free:
                continue
            name, fn = rng.choice(dir_kinds)
            fn(d)
            free -= under
            dirs = [x for x in dirs if x != d and not x.startswith(d + "/")
                    and not d.startswith(x + "/")]
        else:
            if not free:
                break
            p = rng.choice(sorted(free))
            name, fn = rng.choice(kinds)
            fn(p)
            free.discard(p)
            dirs = [x for x in dirs if not p.startswith(x + "/")]
        done.append(name)
    return done


def main():
    seed, files, changes = (int(a) for a in sys.argv[1:4])
    rng = random.Random(seed)
    paths = build(rng, files)
    for name in mutate(rng, paths, changes):
        print(name)


if __name__ == "__main__":
    main()
