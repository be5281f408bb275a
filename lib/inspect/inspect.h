/*
 * inspect - bounded, read-only views of the project's files: the tree,
 * a file, the changes (libgit2, or the session's file edits) and diffs.
 */
#ifndef HW_INSPECT_H
#define HW_INSPECT_H

#include "session/session.h"

/* ---- workspace inspection (tree.c, git.c, diff.c) ---- */

/*
 * Bounded, read-only views of the project (the current directory), each
 * one heartwood.workspace-*.v1 object appended to out as canonical JSON
 * with its status and the active limits.  Every path is project-relative
 * and normalized; .git and .heartwood are reserved at any depth (ASCII
 * case-insensitively).  Traversal is descriptor-anchored from root (a
 * directory descriptor of the project): one component at a time, never
 * following a symlink, never opening anything but a directory or, with
 * O_NONBLOCK, a regular file.  A refused request is -1 with hw_err set:
 * HW-WORKSPACE-001 bad path, -002 reserved, -006 bad depth (code 2);
 * -003 symlink (code 1); -004 not a directory, -005 missing or unopenable
 * (code 66).  Other outcomes are statuses inside the object.
 */
#define INSPECT_TREE_ENTRIES 2000
#define INSPECT_TREE_DEPTH 8
#define INSPECT_FILE_BYTES (512u * 1024)
#define INSPECT_FILE_LINES 10000
#define INSPECT_CHANGES 500
#define INSPECT_DIFF_BYTES (1024u * 1024)

/* heartwood.workspace-tree.v1 of dir, depth 1 to INSPECT_TREE_DEPTH. */
int inspect_tree(int root, const char *dir, int depth, struct buf *out);
/* heartwood.workspace-file.v1 of path. */
int inspect_file(int root, const char *path, struct buf *out);
/*
 * heartwood.workspace-changes.v1: through libgit2 when the project is in
 * a git work tree, else from session sid's succeeded file-editor actions.
 */
int inspect_changes(int root, const char *sid, struct buf *out);
/* heartwood.workspace-diff.v1 of path, which must be a current change. */
int inspect_diff(int root, const char *path, const char *sid,
    struct buf *out);

/*
 * Internals shared by tree.c, git.c and diff.c.  A struct ifile is a
 * bounded read of one regular file: status is "available", "truncated",
 * "binary", "unavailable" or "unsupported"; text (arena-owned, NULL unless
 * available or truncated) is valid UTF-8 cut on a character boundary.
 * inspect_read never fails: what went wrong is in status and message.
 */
struct ifile {
	const char *status, *message;
	char *text;
	size_t len, bytes_read, lines;
	int64_t size;
	int truncated;
	dev_t dev;		/* the file that was read, for inspect_same */
	ino_t ino;
	int64_t mtime_ns;
};
void inspect_read(struct arena *a, int root, const char *path,
    size_t max, struct ifile *f);
/*
 * inspect_text checks n bytes read from a source of which more exist when
 * more is set: NUL gives "binary", bad UTF-8 "unsupported"; otherwise it
 * cuts to max bytes on a character boundary and to INSPECT_FILE_LINES
 * lines and fills f.
 */
void inspect_text(struct arena *a, const char *p, size_t n, int more,
    size_t max, struct ifile *f);
/* inspect_regular: 1 if path exists as a regular file (not a symlink),
 * 0 if missing, -1 otherwise. */
int inspect_regular(int root, const char *path);
/* inspect_same: 1 if path is still the file f was read from, unchanged */
int inspect_same(int root, const char *path, const struct ifile *f);
struct jval *inspect_limits(struct arena *a);
struct jval *inspect_strn(struct arena *a, const char *s, size_t n);

#endif
