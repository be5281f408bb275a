#!/usr/bin/env bats
# hw-inspect: bounded, read-only views of the workspace.  Hostile trees
# (symlinks out, symlinked parents, FIFOs, devices, bad UTF-8, NUL bytes,
# bad request paths, reserved directories deep down), the bounds, and
# parity of changes with git status on generated repositories.

load lib

# field JSON-PATH ARGS... - one field of hw-inspect's output
field() { local f=$1; shift; hw-inspect "$@" | jq -c "$f"; }

# paths_of ARGS... - the tree's entry paths, one line each
paths_of() { hw-inspect tree "$@" | jq -r '.entries[].path'; }

# ---- tree ----

@test "tree: pre-order, sorted by code point, with kinds, sizes and limits" {
	mkdir -p b/d a
	printf 'xy' >b/c
	touch a/z B
	run -0 hw-inspect tree
	[ "$(jq -r '.entries[] | "\(.path) \(.kind) \(.depth) \(.size_bytes)"' <<<"$output")" = \
"B file 1 0
a directory 1 null
a/z file 2 0
b directory 1 null
b/c file 2 2
b/d directory 2 null" ]
	[ "$(jq -c '[.schema_version, .path, .status, .truncated]' <<<"$output")" = \
		'["heartwood.workspace-tree.v1",".","available",false]' ]
	[ "$(jq -c .limits <<<"$output")" = \
		'{"max_change_entries":500,"max_diff_bytes":1048576,"max_file_bytes":524288,"max_file_lines":10000,"max_tree_depth":8,"max_tree_entries":2000}' ]
}

@test "tree: a subdirectory lists its paths from the project root" {
	mkdir -p a/b
	touch a/b/f
	[ "$(paths_of a)" = "a/b
a/b/f" ]
	[ "$(field .path tree a/b)" = '"a/b"' ]
}

@test "tree: a symlink to /etc is listed as unsupported and never followed" {
	ln -s /etc etc
	[ "$(field '.entries' tree)" = '[{"depth":1,"kind":"unsupported","name":"etc","path":"etc","size_bytes":null}]' ]
	run -1 --separate-stderr hw-inspect tree etc
	[ -z "$output" ]
	[ "$stderr" = "hw-inspect: symlink in path 'etc': HW-WORKSPACE-003 symlinks are not followed" ]
}

@test "tree: a symlinked parent directory is refused" {
	mkdir real
	touch real/f
	ln -s real link
	run -1 --separate-stderr hw-inspect tree link/x
	[ "$stderr" = "hw-inspect: symlink in path 'link/x': HW-WORKSPACE-003 symlinks are not followed" ]
	run -1 --separate-stderr hw-inspect file link/f
	[ "$stderr" = "hw-inspect: symlink in path 'link/f': HW-WORKSPACE-003 symlinks are not followed" ]
}

@test "tree: .git and .heartwood are omitted at every depth, in any case" {
	mkdir -p a/b/.HEARTWOOD a/.git/objects c/.Git .heartwood
	touch a/b/.HEARTWOOD/secret a/.git/objects/x a/b/keep c/.Git/y
	[ "$(paths_of --depth 8)" = "a
a/b
a/b/keep
c" ]
	[ "$(field .status tree --depth 8)" = '"available"' ]
}

@test "tree: a FIFO is listed as unsupported without blocking" {
	mkfifo pipe
	run -0 timeout 5 hw-inspect tree
	[ "$(jq -c '.entries[0] | [.name, .kind]' <<<"$output")" = '["pipe","unsupported"]' ]
}

@test "tree: names that are not valid paths are skipped and mark it truncated" {
	touch ok "$(printf 'bad\001name')" "$(printf 'x\377y')" 'back\slash'
	run -0 hw-inspect tree
	[ "$(jq -r '.entries[].path' <<<"$output")" = ok ]
	[ "$(jq -c '[.status, .truncated]' <<<"$output")" = '["truncated",true]' ]
}

@test "tree: a depth outside 1 to 8 is refused" {
	run -2 --separate-stderr hw-inspect tree --depth 9
	[ "$stderr" = "hw-inspect: invalid depth '9': HW-WORKSPACE-006 expected 1 to 8" ]
	run -2 --separate-stderr hw-inspect tree --depth 0
	[ "$stderr" = "hw-inspect: invalid depth '0': HW-WORKSPACE-006 expected 1 to 8" ]
}

@test "tree: a directory at the depth limit with children marks it truncated" {
	mkdir -p a/b/c
	[ "$(paths_of --depth 2)" = "a
a/b" ]
	[ "$(field .status tree --depth 2)" = '"truncated"' ]
	[ "$(field .status tree --depth 3)" = '"available"' ]
	mkdir -p e/.git
	[ "$(field .status tree e --depth 1)" = '"available"' ]
}

@test "tree: the 2,000-entry bound stops reading, sorted, truncated" {
	mkdir d
	(cd d && seq -f 'f%05g' 1 2100 | xargs touch)
	run -0 hw-inspect tree
	[ "$(jq '.entries | length' <<<"$output")" = 2000 ]
	[ "$(jq -r '.entries[0].path' <<<"$output")" = d ]
	[ "$(jq -r '.entries[1:][].path' <<<"$output" | LC_ALL=C sort -c && echo sorted)" = sorted ]
	[ "$(jq -r '.entries[1:][].path' <<<"$output" | grep -c '^d/f0[0-9]\{4\}$')" = 1999 ]
	[ "$(jq -c '[.status, .truncated]' <<<"$output")" = '["truncated",true]' ]
	rm d/f0*[1-9]
	[ "$(field '[.status, (.entries | length)]' tree)" = '["available",211]' ]
}

@test "tree: missing and non-directory paths are refused" {
	touch f
	run -66 --separate-stderr hw-inspect tree f
	[ "$stderr" = "hw-inspect: not a directory 'f': HW-WORKSPACE-004" ]
	run -66 --separate-stderr hw-inspect tree nope
	[[ "$stderr" == "hw-inspect: cannot open 'nope': HW-WORKSPACE-005 "* ]]
}

# ---- request paths ----

@test "path: .. is refused" {
	run -2 --separate-stderr hw-inspect file ../etc/passwd
	[ -z "$output" ]
	[ "$stderr" = "hw-inspect: invalid path '../etc/passwd': HW-WORKSPACE-001 not a normalized project-relative path" ]
	run -2 hw-inspect file a/../b
}

@test "path: a backslash is refused" {
	run -2 --separate-stderr hw-inspect file 'a\b'
	[ "$stderr" = "hw-inspect: invalid path 'a\\b': HW-WORKSPACE-001 not a normalized project-relative path" ]
}

@test "path: a control character is refused" {
	run -2 --separate-stderr hw-inspect file "$(printf 'a\tb')"
	[[ "$stderr" == *"HW-WORKSPACE-001"* ]]
	run -2 hw-inspect file "$(printf 'a\xe2\x80\x8bb')"	# U+200B, a format character
}

@test "path: absolute, empty and dot segments are refused" {
	run -2 hw-inspect file /etc/passwd
	run -2 hw-inspect file a//b
	run -2 hw-inspect file a/./b
	run -2 hw-inspect file a/
	run -2 hw-inspect file "$(printf 'a\377')"
}

@test "path: a reserved component is refused in any case" {
	mkdir -p x/.HeartWood
	touch x/.HeartWood/s
	run -2 --separate-stderr hw-inspect file x/.HeartWood/s
	[ "$stderr" = "hw-inspect: reserved path 'x/.HeartWood/s': HW-WORKSPACE-002 .git and .heartwood are private" ]
	run -2 hw-inspect tree .GIT
}

# ---- file ----

@test "file: a text file, with its sizes and line count" {
	printf 'one\ntwo\r\nthree\xe2\x80\xa8four' >t.txt
	run -0 hw-inspect file t.txt
	[ "$(jq -c '[.schema_version, .status, .size_bytes, .bytes_read, .line_count, .truncated, .message]' <<<"$output")" = \
		'["heartwood.workspace-file.v1","available",21,21,4,false,null]' ]
	[ "$(jq -r .content <<<"$output")" = "$(cat t.txt)" ]
}

@test "file: a symlink to /etc/passwd is refused" {
	ln -s /etc/passwd pw
	run -1 --separate-stderr hw-inspect file pw
	[ "$stderr" = "hw-inspect: symlink 'pw': HW-WORKSPACE-003 symlinks are not followed" ]
}

@test "file: a FIFO is unsupported and does not block" {
	mkfifo pipe
	run -0 timeout 5 hw-inspect file pipe
	[ "$(jq -c '[.status, .content]' <<<"$output")" = '["unsupported",null]' ]
}

@test "file: a device node is unsupported" {
	mknod null c 1 3 2>/dev/null || skip "cannot create device nodes here"
	run -0 timeout 5 hw-inspect file null
	[ "$(jq -r .status <<<"$output")" = unsupported ]
	[ "$(field '.entries[0].kind' tree)" = '"unsupported"' ]
}

@test "file: a file replaced while it is read never leaks, follows or blocks" {
	echo ok >f
	python3 - <<'EOF' &
import os, time
end = time.time() + 4
while time.time() < end:
    for make in (lambda p: os.symlink("/etc/passwd", p), os.mkfifo,
                 lambda p: open(p, "w").write("ok\n")):
        try:
            os.unlink("t")
        except FileNotFoundError:
            pass
        make("t")
        os.rename("t", "f")
EOF
	local i seen=
	for ((i = 0; i < 150; i++)); do
		run timeout 5 hw-inspect file f
		case $status in
		0) seen+=$(jq -r '.status + ":" + (.content // "")' <<<"$output" | tr -d '\n')" " ;;
		1) [[ "$output" == *HW-WORKSPACE-003* ]] || { echo "$output"; return 1; } ;;
		*) echo "exit $status: $output"; return 1 ;;
		esac
	done
	wait
	for s in $seen; do
		case $s in available:ok|unsupported:|unavailable:) ;;
		*) echo "unexpected $s"; return 1 ;;
		esac
	done
}

@test "file: invalid UTF-8 is unsupported" {
	printf 'ok\n\xc3\x28\n' >bad
	run -0 hw-inspect file bad
	[ "$(jq -c '[.status, .content, .message]' <<<"$output")" = '["unsupported",null,"the file is not valid UTF-8"]' ]
	printf '\xed\xa0\x80' >surrogate
	[ "$(field .status file surrogate)" = '"unsupported"' ]
}

@test "file: a NUL byte is binary with no content" {
	printf 'text\0more' >nul
	run -0 hw-inspect file nul
	[ "$(jq -c '[.status, .content, .size_bytes]' <<<"$output")" = '["binary",null,9]' ]
}

@test "file: missing is unavailable, the root and a directory unsupported" {
	mkdir d
	[ "$(field .status file nope)" = '"unavailable"' ]
	[ "$(field .status file d)" = '"unsupported"' ]
	[ "$(field .status file .)" = '"unsupported"' ]
	[ "$(field .status file nodir/f)" = '"unavailable"' ]
}

@test "file: over 512 KiB is cut on a UTF-8 boundary" {
	# 524287 ASCII bytes, then a 3-byte character straddling the cut
	python3 -c 'import sys; sys.stdout.write("a" * 524287 + "\u20ac" * 10)' >big
	run -0 hw-inspect file big
	[ "$(jq -c '[.status, .truncated, .bytes_read, .size_bytes]' <<<"$output")" = '["truncated",true,524288,524317]' ]
	[ "$(jq -r .content <<<"$output" | tr -d '\n' | wc -c)" = 524287 ]
}

@test "file: over 10,000 lines keeps 10,000" {
	seq 1 10005 >lines
	run -0 hw-inspect file lines
	[ "$(jq -c '[.status, .line_count, .truncated]' <<<"$output")" = '["truncated",10000,true]' ]
	[ "$(jq -j .content <<<"$output" | tail -1)" = 10000 ]
	seq 1 10000 >exact
	[ "$(field '[.status, .line_count]' file exact)" = '["available",10000]' ]
}

# ---- changes and diff: git ----

# repo - a repository with a first commit of a, b, c, d/e/f, g and .gitignore
repo() {
	git init -q -b main .
	git config user.email t@example.org
	git config user.name t
	printf 'ignored*\n' >.gitignore
	mkdir -p d/e
	for f in a b c d/e/f g; do echo "$f" >"$f"; done
	git add . && git commit -qm first
}

# parity [DIR] - changes, run in DIR of the work tree (default its top, where
# the list must not be empty), lists exactly the paths and kinds git status
# implies there.  A path added
# to the index and deleted since is no change against the base; a path
# deleted from the index and still on disk is listed once, as deleted.
parity() {
	local dir=${1:-.} want got
	want=$(git -c core.quotePath=false status --porcelain=v1 -uall \
		--no-renames -- "$dir" | awk -v pre="${1:+$1/}" '
		{ xy = substr($0, 1, 2); p = substr($0, 4 + length(pre))
		  if (xy == "AD") next
		  s = (xy ~ /D/) ? "deleted" : (xy ~ /\?|A/) ? "added" : "modified"
		  if (!(p in st) || s == "deleted") st[p] = s }
		END { for (p in st) print st[p], p }' | sort -k2)
	got=$(cd "$dir" && hw-inspect changes |
		jq -r '.changes[] | "\(.status) \(.path)"')
	[ "$got" = "$want" ] || { echo "got: $got"; echo "want: $want"; return 1; }
	[ -n "$1" ] || [ -n "$want" ]
}

@test "changes: git parity for modified and deleted files" {
	repo
	echo more >>a
	rm b
	git rm -q --cached c
	rm c
	echo staged >>g
	git add g
	parity
	[ "$(field '[.status, .source, .truncated]' changes)" = '["available","git",false]' ]
}

@test "changes: the index's tree ids (git's cache tree) skip the base tree only when they name it" {
	repo
	git status >/dev/null	# git writes the cache tree with the commit
	echo more >>a
	parity
	[ "$(field '[.changes[].path]' changes)" = '["a"]' ]
	# staged: the cache tree of the top (and d/e) no longer names the base
	echo staged >>d/e/f
	git add d/e/f
	parity
	[ "$(field '[.changes[].path]' changes)" = '["a","d/e/f"]' ]
	# another base than the index's tree: see the upstream test below
}

@test "changes: telling what is staged writes nothing to the repository" {
	repo
	echo new >h
	echo more >>d/e/f
	git add h d/e/f
	before=$(find .git -type f ! -name index.lock | sort | xargs sha256sum)
	parity
	[ "$(field '[.changes[].path]' changes)" = '["d/e/f","h"]' ]
	after=$(find .git -type f ! -name index.lock | sort | xargs sha256sum)
	[ "$after" = "$before" ]
}

@test "changes: git parity for renames, staged and not" {
	repo
	git mv a a2
	mv b b2
	parity
	[ "$(field '[.changes[].path]' changes)" = '["a","a2","b","b2"]' ]
}

@test "changes: git parity for untracked, ignored and nested files" {
	repo
	mkdir -p n/m/o
	echo x >n/m/o/deep
	echo y >d/e/new
	echo z >ignored-file
	mkdir ignored-dir
	echo w >ignored-dir/x
	parity
	[ "$(field '[.changes[].path]' changes)" = '["d/e/new","n/m/o/deep"]' ]
}

@test "changes: git parity with an unborn HEAD" {
	git init -q .
	echo a >a
	mkdir s
	echo b >s/b
	git add a
	parity
	[ "$(field '[.changes[] | .status]' changes)" = '["added","added"]' ]
}

@test "changes: git parity with an unborn HEAD and most of the tree staged" {
	git init -q .
	seq -f 'f%03g' 1 400 | xargs touch
	mkdir s
	echo b >s/b
	git add .
	echo x >f001
	rm f002
	echo u >untracked
	parity
	[ "$(field '.changes | length' changes)" = 401 ]
}

@test "changes: git parity with a detached HEAD" {
	repo
	echo x >>a
	git commit -qam second
	git checkout -q --detach HEAD~1
	echo y >>g
	echo n >new
	parity
}

# big_repo: 6,000 committed files in 60 top-level directories and top-level
# files, enough for the stat pass to run on two threads
big_repo() {
	repo
	python3 - <<'PY'
import os
for d in range(60):
    os.makedirs("t%02d/sub" % d)
    for f in range(100):
        with open("t%02d/sub/f%03d" % (d, f) if f % 2 else "t%02d/f%03d" % (d, f), "w") as o:
            o.write("%d %d\n" % (d, f))
    with open("t%02d.c" % d, "w") as o:   # sorts between t05 and t05/...
        o.write("c\n")
PY
	git add . && git commit -qm big
}

@test "changes: git parity on a large tree, from the top and from a subdirectory" {
	big_repo
	echo more >>t00/f000
	echo more >>t59/sub/f099
	echo more >>t30.c
	rm t01/f002 t58/sub/f001
	git rm -rq t29
	rm -rf t31
	echo new >t00/new
	echo new >t59/sub/new
	echo new >top-new
	mkdir -p u/v
	echo x >u/v/w
	echo z >t40/ignored-x
	echo staged >>t45/f010
	git add t45/f010
	parity
	[ "$(field '.changes | length' changes)" -gt 200 ]
	# the same from a project in a subdirectory of the work tree
	echo m >>t02/f004
	echo n >t02/sub/new2
	parity t02
	[ "$(cd t02 && field '[.changes[].path]' changes)" = '["f004","sub/new2"]' ]
}

# mutate SEED FILES CHANGES - a settled repository here, then random changes
mutate() { python3 "$HW_ROOT/t/git_mutate.py" "$@" >kinds; }

@test "changes: git parity after random changes to a settled tree, six seeds" {
	local seed
	for seed in 1 2 3 4 5 6; do
		mkdir s$seed
		cd s$seed
		mutate $seed 400 80
		parity || { echo "seed $seed: $(sort -u kinds | tr '\n' ,)"; return 1; }
		cd ..
	done
}

@test "changes: git parity after random changes, from subdirectories" {
	local d
	mutate 7 600 120
	for d in d0 d1 d2 d3 d4 d5 d0/d1 d2/d3; do
		[ ! -d "$d" ] || parity "$d" || { echo "in $d"; return 1; }
	done
}

@test "changes: a settled tree with nothing changed lists nothing" {
	mutate 8 300 0
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .changes]' <<<"$output")" = '["available",[]]' ]
}

@test "changes: new content of the same size and mtime is found by its ctime" {
	mutate 9 300 0
	echo X >a
	touch -d @1700000000 a
	git add a
	git commit -qm a
	touch -d @1700000000 a
	git update-index -q --refresh
	printf 'Y\n' >a
	touch -d @1700000000 a
	run -0 hw-inspect changes
	[ "$(jq -c '[.changes[] | [.status, .path]]' <<<"$output")" = '[["modified","a"]]' ]
}

@test "changes: files touched with their bytes unchanged are no change, their blobs hashed" {
	mutate 16 400 40
	git ls-files -z | xargs -0 touch -c
	parity
	# the same size, the same mtime, other bytes: not its blob
	f=$(git ls-files | grep -m1 /)
	git diff --quiet -- "$f"
	tr 'a-z' 'b-za' <"$f" >"$f.new"
	touch -r "$f" "$f.new"
	mv "$f.new" "$f"
	parity
	[ "$(field "[.changes[] | select(.path == \"$f\") | .status]" changes)" = '["modified"]' ]
}

@test "changes: a touched file under a line-ending filter is left to libgit2: no change" {
	repo
	printf '*.txt text eol=crlf\n' >.gitattributes
	printf 'one\ntwo\n' >t.txt
	git add .gitattributes t.txt
	git commit -qm crlf
	rm t.txt
	git checkout -- t.txt
	[ "$(od -An -c t.txt | tr -d ' \n')" = 'one\r\ntwo\r\n' ]
	touch -d '+2 seconds' t.txt
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .changes]' <<<"$output")" = '["available",[]]' ]
}

@test "changes: a file that became a directory is deleted, its contents added" {
	mutate 10 300 0
	f=$(git ls-files | grep -m1 /)
	rm "$f"
	mkdir "$f"
	echo i >"$f/inner"
	parity
	[ "$(field '[.status, [.changes[].status]]' changes)" = '["available",["deleted","added"]]' ]
}

@test "changes: a deleted skip-worktree entry is listed, as libgit2 has it" {
	mutate 11 300 0
	f=$(git ls-files | grep -m1 /)
	git update-index --skip-worktree "$f"
	rm "$f"
	[ -z "$(git status --porcelain)" ]
	run -0 hw-inspect changes
	[ "$(jq -c '[.changes[] | [.status, .path]]' <<<"$output")" = "[[\"deleted\",\"$f\"]]" ]
}

@test "changes: a nested repository is unsupported, never listed or entered" {
	mutate 12 300 0
	git init -q d0/nested
	echo x >d0/nested/x
	echo y >>"$(git ls-files | grep -m1 /)"
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, (.changes | length)]' <<<"$output")" = '["unsupported",1]' ]
}

@test "changes: git parity with a merge conflict" {
	mutate 13 300 0
	f=$(git ls-files | grep -m1 /)
	git checkout -qb other
	echo theirs >"$f"
	git commit -qam theirs
	git checkout -q main
	echo ours >"$f"
	git commit -qam ours
	run -1 git merge -q other
	echo more >>"$(git ls-files | grep -v "$f" | grep -m1 /)"
	parity
	[ "$(field '.changes | length' changes)" = 2 ]
}

@test "changes: git parity with index versions 2, 3 and 4 and an intent-to-add entry" {
	local v
	mutate 15 400 80
	echo i >d0/intent
	git add -N d0/intent
	for v in 2 3 4; do
		git update-index --index-version $v
		[ "$(od -An -tu1 -j7 -N1 .git/index | tr -d ' ')" = $v ] ||
			[ $v = 2 ]	# an extended flag keeps version 3
		parity || { echo "index version $v"; return 1; }
	done
	[ "$(field '[.changes[] | select(.path == "d0/intent") | .status]' changes)" = '["added"]' ]
}

@test "changes: a corrupt index is never read past its checksum" {
	repo
	echo more >>a
	# the first entry's size, changed without its checksum
	python3 -c 'import sys
d = bytearray(open(".git/index", "rb").read()); d[12 + 39] ^= 1
open(".git/index", "wb").write(d)'
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .changes]' <<<"$output")" = '["unavailable",[]]' ]
	[[ "$(jq -r .message <<<"$output")" == *checksum* ]]
}

@test "changes: a split index, which the reader leaves to libgit2, is refused by it" {
	repo
	echo more >>a
	git update-index --split-index
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .changes, .message]' <<<"$output")" = "[\"unavailable\",[],\"unsupported mandatory extension: 'link'\"]" ]
}

@test "changes: a hostile index (cut, out of order, lying counts) lists no wrong change" {
	repo
	echo more >>a
	python3 "$HW_ROOT/t/git_index.py" .git/index
	local f
	for f in .git/index.*; do
		cp "$f" .git/index
		run -0 hw-inspect changes
		case $(jq -c '[.status, [.changes[].path]]' <<<"$output") in
		'["unavailable",[]]' | '["available",["a"]]') ;;
		*) echo "$f: $output"; return 1 ;;
		esac
	done
}

@test "changes: git parity with a case-insensitive index" {
	mutate 14 300 40
	git config core.ignorecase true
	parity
}

@test "changes: the base is the upstream branch when there is one" {
	repo
	git clone -q . ../up-$$
	cd ../up-$$
	git config user.email t@example.org
	git config user.name t
	echo x >>a
	git commit -qam ahead
	echo y >>g
	run -0 hw-inspect changes
	cd ..
	rm -rf up-$$
	[ "$(jq -c '[.changes[].path]' <<<"$output")" = '["a","g"]' ]
}

@test "changes: the .heartwood store is never listed, GIT_DIR is ignored" {
	repo
	hw-session new >/dev/null
	echo x >>a
	GIT_DIR=/nonexistent run -0 hw-inspect changes
	[ "$(jq -c '[.status, [.changes[].path]]' <<<"$output")" = '["available",["a"]]' ]
}

@test "changes: a changed path that became a symlink is dropped as unsupported" {
	repo
	rm a
	ln -s /etc/passwd a
	echo x >>g
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, [.changes[].path]]' <<<"$output")" = '["unsupported",["g"]]' ]
}

@test "changes: an untracked file or link whose path is not valid is unsupported, never listed" {
	repo
	echo x >>g
	touch "$(printf 'bad\001name')" d/"$(printf 'x\377y')" 'back\slash'
	ln -s /etc/passwd d/e/link
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, [.changes[].path]]' <<<"$output")" = '["unsupported",["g"]]' ]
}

@test "changes: the list stops at 500" {
	repo
	mkdir many
	(cd many
	seq -f 'f%04g' 1 600 | xargs touch)
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .truncated, (.changes | length), .changes[-1].path]' <<<"$output")" = '["truncated",true,500,"many/f0500"]' ]
}

@test "diff: a modified file gives the base and the work-tree text" {
	repo
	echo more >>a
	run -0 hw-inspect diff a
	[ "$(jq -c '[.schema_version, .status, .source, .original, .modified, .truncated]' <<<"$output")" = \
		'["heartwood.workspace-diff.v1","available","git","a\n","a\nmore\n",false]' ]
}

@test "diff: added, deleted and unchanged files" {
	repo
	echo new >n
	rm b
	[ "$(field '[.status, .original, .modified]' diff n)" = '["available","","new\n"]' ]
	[ "$(field '[.status, .original, .modified]' diff b)" = '["unsupported",null,null]' ]
	[ "$(field '[.status, .message]' diff c)" = '["unavailable","the path is not among the current changes"]' ]
	run -2 hw-inspect diff ../x
}

@test "diff: binary, non-UTF-8 and oversized current files" {
	repo
	printf 'a\0' >a
	printf '\377' >b
	head -c 600000 /dev/zero | tr '\0' x >c
	[ "$(field .status diff a)" = '"binary"' ]
	[ "$(field .status diff b)" = '"unsupported"' ]
	[ "$(field '[.status, .original, .truncated]' diff c)" = '["truncated",null,true]' ]
}

# ---- changes and diff: the non-git fallback ----

# edit ID OP PATH [EXIT] - a file-editor action and its outcome
edit() {
	local p=$PWD
	printf '{"kind":"tool_call.proposed","payload":{"tool_call_id":"%s","action_id":"act-%s","tool_name":"file_editor","kind":"file-editor","risk":"low","summary":"edit","arguments":{"command":"%s","path":"%s/%s"},"affected_paths":["%s/%s"],"project_path":"%s"}}\n' \
		"$1" "$1" "$2" "$p" "$3" "$p" "$3" "$p"
	printf '{"kind":"tool.execution.recorded","payload":{"tool_call_id":"%s","action_id":"act-%s","tool_name":"file_editor","exit_code":%s,"summary":"ok","result":"ok"}}\n' \
		"$1" "$1" "${4:-0}"
}

# term ID COMMAND - a terminal action that succeeded
term() {
	printf '{"kind":"tool_call.proposed","payload":{"tool_call_id":"%s","action_id":"act-%s","tool_name":"terminal","kind":"terminal","risk":"low","summary":"run","arguments":{"command":"%s"}}}\n' "$1" "$1" "$2"
	printf '{"kind":"tool.execution.recorded","payload":{"tool_call_id":"%s","action_id":"act-%s","tool_name":"terminal","exit_code":0,"summary":"ok","result":""}}\n' "$1" "$1"
}

@test "changes: without git, only succeeded typed file-editor actions count" {
	{ edit c1 create a.txt; edit c2 str_replace a.txt; edit c3 insert b.txt
	  edit c4 create failed.txt 1; edit c5 view v.txt; term c6 'echo x > t.txt'
	  edit c7 create u.txt; edit c8 undo_edit u.txt; } | hw-append --session session-main >/dev/null
	echo x >a.txt
	echo y >b.txt
	echo z >t.txt
	run -0 hw-inspect changes
	[ "$(jq -c '[.status, .source]' <<<"$output")" = '["non-git","session-actions"]' ]
	[ "$(jq -c '.changes' <<<"$output")" = '[{"action_ids":["act-c1","act-c2"],"path":"a.txt","source":"session-action","status":"added"},{"action_ids":["act-c3"],"path":"b.txt","source":"session-action","status":"modified"}]' ]
	[ "$(field '.changes | length' changes --session other)" = 0 ]
}

@test "changes: without git, edits of reserved or outside paths are never listed" {
	{ edit c1 create .heartwood/x; edit c2 create sub/.GIT/config
	  edit c3 create ../outside; edit c4 create ok; } | hw-append --session session-main >/dev/null
	[ "$(field '[.changes[].path]' changes)" = '["ok"]' ]
}

@test "diff: without git, the current file only" {
	edit c1 create a.txt | hw-append --session s1 >/dev/null
	echo x >a.txt
	[ "$(field '[.status, .source, .original, .modified]' diff a.txt --session s1)" = '["non-git","session-action",null,"x\n"]' ]
	[ "$(field .status diff a.txt)" = '"unavailable"' ]
	head -c 600000 /dev/zero | tr '\0' x >a.txt
	[ "$(field '[.status, .truncated, (.modified | length)]' diff a.txt --session s1)" = '["non-git",true,524288]' ]
}

@test "changes: a bad session id is refused" {
	run -2 hw-inspect changes --session ../x
}

# ---- usage ----

@test "usage: verbs take exactly their arguments" {
	run -2 hw-inspect
	run -2 hw-inspect file
	run -2 hw-inspect file a b
	run -2 hw-inspect changes x
	run -2 hw-inspect file a --depth 2
	run -2 hw-inspect tree --session s
	run -2 hw-inspect nope
}
