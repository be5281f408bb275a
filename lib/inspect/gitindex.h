/*
 * gitindex.h - git's index file read directly, for hw-inspect changes'
 * stat pass: the entries with what git recorded of each file, and the tree
 * the index's cache tree names.  Only what the pass can decide on is read
 * here; anything else (a split or sparse index, an unknown required
 * extension, a wrong checksum, entries out of order) is left to libgit2.
 */
#ifndef HW_INSPECT_GITINDEX_H
#define HW_INSPECT_GITINDEX_H

#include <stdint.h>
#include <time.h>

#include "base/base.h"

struct gindex_entry {
	const char *path;	/* from the top of the work tree */
	uint32_t mode, size, ino, uid, gid, mns, cns;
	int32_t ms, cs;
	unsigned char oid[20];	/* the blob's id */
	int stage;		/* 0, or 1 to 3 in a conflict */
	int odd;		/* a conflict or a flag: libgit2 decides */
};

struct gindex {
	struct buf file;	/* the index file, which holds the paths */
	struct arena a;		/* version 4's paths */
	struct gindex_entry *e;	/* in git's order: by path, then stage */
	size_t n;
	struct timespec stamp;	/* the file's mtime, taken before reading */
	int has_tree;		/* tree: the cache tree's root, over every
				   entry, and no entry odd */
	unsigned char tree[20];
};

/*
 * gindex_read reads the index at path into g: 1 when it is one this
 * reader takes whole, else 0 (missing, unreadable, malformed or of a form
 * left to libgit2); g is to be released either way.
 */
int gindex_read(struct gindex *g, const char *path);
/* gindex_parse: the same for the bytes already in g->file (zeroed g) */
int gindex_parse(struct gindex *g);
void gindex_release(struct gindex *g);
/*
 * gindex_same_blob: 1 when the regular file at fd/name has e's size and
 * its bytes hash as a git blob to e's id (the bytes as they are: with a
 * filter that changes them, such as a line-ending conversion, they hash
 * otherwise and libgit2 is to decide)
 */
int gindex_same_blob(int fd, const char *name, const struct gindex_entry *e);

#endif
