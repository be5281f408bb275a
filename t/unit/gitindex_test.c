/*
 * gitindex_test - hw-inspect's own reader of git's index (gitindex.c):
 * indexes of versions 2, 3 and 4 built here byte by byte, each with a
 * correct SHA-1 trailer unless the case is the trailer, and every way one
 * can lie (counts, lengths, order, versions, extensions) refused, so that
 * libgit2 decides instead.
 */
#include <openssl/evp.h>

#include "inspect/gitindex.h"
#include "tap.h"

struct ent {
	const char *path;
	uint32_t size;
	unsigned flags;		/* stage << 12, 0x8000 assume-valid */
	unsigned ext;		/* the version 3 flag word, 0 for none */
	size_t strip;		/* version 4: bytes of the previous path kept
				   are all but strip; the rest of path is
				   written */
	int lie;		/* added to the name length in the flags */
};

static void
be32(struct buf *b, uint32_t v)
{
	unsigned char c[4] = { v >> 24, v >> 16, v >> 8, v };

	buf_add(b, c, 4);
}

static void
be16(struct buf *b, unsigned v)
{
	unsigned char c[2] = { v >> 8, v };

	buf_add(b, c, 2);
}

/* entry appends one entry; prev is the previous path, for version 4 */
static void
entry(struct buf *b, uint32_t version, const struct ent *e, const char *prev)
{
	size_t start = b->len, len = strlen(e->path), i, keep;
	unsigned char oid[20];

	be32(b, 1000), be32(b, 1), be32(b, 2000), be32(b, 2);
	be32(b, 66), be32(b, 77), be32(b, 0100644), be32(b, 0);
	be32(b, 0), be32(b, e->size);
	memset(oid, 0xab, sizeof oid);
	buf_add(b, oid, sizeof oid);
	be16(b, e->flags | (e->ext ? 0x4000 : 0) | ((len + e->lie) & 0xfff));
	if (e->ext)
		be16(b, e->ext);
	if (version == 4) {
		/* a strip past the previous path writes the whole one */
		keep = e->strip > strlen(prev) ? 0 : strlen(prev) - e->strip;
		buf_addc(b, (char)e->strip);	/* below 128: one byte */
		buf_adds(b, e->path + keep);
		buf_addc(b, '\0');
		return;
	}
	buf_adds(b, e->path);
	for (i = (b->len - start) % 8 ? 8 - (b->len - start) % 8 : 8; i; i--)
		buf_addc(b, '\0');
}

/* header starts an index of n entries */
static void
header(struct buf *b, uint32_t version, uint32_t n)
{
	buf_clear(b);
	buf_adds(b, "DIRC");
	be32(b, version);
	be32(b, n);
}

/* tree appends a TREE extension whose root holds count and oid 0xcd */
static void
tree(struct buf *b, const char *count)
{
	struct buf t;
	unsigned char oid[20];

	buf_init(&t);
	buf_addc(&t, '\0');
	buf_printf(&t, "%s 0\n", count);
	memset(oid, 0xcd, sizeof oid);
	if (count[0] != '-')
		buf_add(&t, oid, sizeof oid);
	buf_adds(b, "TREE");
	be32(b, (uint32_t)t.len);
	buf_add(b, t.p, t.len);
	buf_release(&t);
}

/* parse signs b with its SHA-1 and reads it; g is to be released */
static int
parse(struct gindex *g, const struct buf *b, int sign)
{
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int sn = 0;

	memset(g, 0, sizeof *g);
	buf_add(&g->file, b->p, b->len);
	EVP_Digest(b->p, b->len, sum, &sn, EVP_sha1(), NULL);
	if (!sign)
		sum[0] ^= 1;
	buf_add(&g->file, sum, sn);
	return gindex_parse(g);
}

/* entries builds an index of version v from es (n of them) */
static void
build(struct buf *b, uint32_t v, uint32_t count, const struct ent *es,
    size_t n)
{
	size_t i;

	header(b, v, count);
	for (i = 0; i < n; i++)
		entry(b, v, &es[i], i ? es[i - 1].path : "");
}

/* takes: whether b, signed, is read, and its entries' paths, joined */
static int
takes(const struct buf *b, char *paths, size_t n, int *has_tree)
{
	struct gindex g;
	size_t i;
	int r = parse(&g, b, 1);

	paths[0] = '\0';
	for (i = 0; r && i < g.n; i++) {
		strncat(paths, i ? "," : "", n - strlen(paths) - 1);
		strncat(paths, g.e[i].path, n - strlen(paths) - 1);
	}
	if (has_tree)
		*has_tree = r && g.has_tree;
	gindex_release(&g);
	return r;
}

int
main(void)
{
	const struct ent two[] = { { "a", 5, 0, 0, 0, 0 },
		{ "d/e", 7, 0, 0, 0, 0 } };
	const struct ent v4[] = { { "dir/alpha", 1, 0, 0, 0, 0 },
		{ "dir/beta", 2, 0, 0, 5, 0 }, { "dir/beta/x", 3, 0, 0, 0, 0 },
		{ "z", 4, 0, 0, 10, 0 } };
	struct ent e[4];
	struct buf b;
	struct gindex g;
	char paths[200];
	int t;

	buf_init(&b);

	/* version 2, its fields as written */
	build(&b, 2, 2, two, 2);
	ok(parse(&g, &b, 1) == 1 && g.n == 2, "version 2 is read");
	ok(g.n == 2 && !strcmp(g.e[1].path, "d/e") && g.e[1].size == 7 &&
	    g.e[1].cs == 1000 && g.e[1].cns == 1 && g.e[1].ms == 2000 &&
	    g.e[1].mns == 2 && g.e[1].ino == 77 && g.e[1].mode == 0100644 &&
	    !g.e[1].odd && !g.has_tree, "its stat data as written");
	gindex_release(&g);
	ok(parse(&g, &b, 0) == 0, "a wrong checksum is refused");
	gindex_release(&g);

	/* the cache tree: only a valid root over every entry counts */
	build(&b, 2, 2, two, 2);
	tree(&b, "2");
	ok(takes(&b, paths, sizeof paths, &t) && t, "a cache tree of 2 "
	    "entries over 2 names its tree");
	ok(parse(&g, &b, 1) && g.tree[0] == 0xcd && g.tree[19] == 0xcd,
	    "... the root's id");
	gindex_release(&g);
	build(&b, 2, 2, two, 2);
	tree(&b, "-1");
	ok(takes(&b, paths, sizeof paths, &t) && !t, "an invalidated root "
	    "names none");
	build(&b, 2, 2, two, 2);
	tree(&b, "1");
	ok(takes(&b, paths, sizeof paths, &t) && !t, "a root over 1 of 2 "
	    "entries names none");

	/* version 3: a flag word; the entry is libgit2's to decide */
	memcpy(e, two, sizeof two);
	e[1].ext = 0x2000;	/* intent-to-add */
	build(&b, 3, 2, e, 2);
	tree(&b, "2");
	ok(parse(&g, &b, 1) == 1 && g.n == 2 && g.e[1].odd && !g.e[0].odd &&
	    !g.has_tree, "version 3: an intent-to-add entry is odd, no tree");
	gindex_release(&g);
	build(&b, 2, 2, e, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a flag word in version 2 "
	    "is refused");
	memcpy(e, two, sizeof two);
	e[0].flags = 0x8000;
	build(&b, 2, 2, e, 2);
	ok(parse(&g, &b, 1) == 1 && g.e[0].odd, "assume-valid is odd");
	gindex_release(&g);

	/* version 4: paths from the previous one */
	build(&b, 4, 4, v4, 4);
	ok(takes(&b, paths, sizeof paths, NULL), "version 4 is read");
	is_str(paths, "dir/alpha,dir/beta,dir/beta/x,z", "... its paths "
	    "rebuilt");
	memcpy(e, v4, sizeof v4);
	e[1].strip = 10;
	build(&b, 4, 4, e, 4);
	ok(!takes(&b, paths, sizeof paths, NULL), "version 4: stripping more "
	    "than the previous path is refused");

	/* order: by path, then stage */
	memcpy(e, two, sizeof two);
	e[0] = two[1], e[1] = two[0];
	build(&b, 2, 2, e, 2);
	ok(takes(&b, paths, sizeof paths, NULL), "entries out of order are "
	    "read");
	is_str(paths, "a,d/e", "... and put in order, as libgit2 does");
	e[0] = e[1] = two[0];
	build(&b, 2, 2, e, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a path twice at stage 0 "
	    "is refused");
	e[0].flags = 1 << 12, e[1].flags = 2 << 12;
	build(&b, 2, 2, e, 2);
	ok(parse(&g, &b, 1) == 1 && g.e[0].odd && g.e[1].odd, "a conflict's "
	    "stages are read, odd");
	gindex_release(&g);

	/* lies */
	build(&b, 2, 3, two, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a count over the entries "
	    "is refused");
	build(&b, 2, 0xffffffffu, two, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a count of 2^32-1 is "
	    "refused");
	build(&b, 2, 1, two, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a count under the entries "
	    "is refused");
	memcpy(e, two, sizeof two);
	e[1].lie = 1;
	build(&b, 2, 2, e, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "a name length that lies is "
	    "refused");
	build(&b, 2, 2, two, 2);
	b.len -= 3;
	ok(!takes(&b, paths, sizeof paths, NULL), "a cut entry is refused");
	build(&b, 1, 2, two, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "version 1 is refused");
	build(&b, 5, 2, two, 2);
	ok(!takes(&b, paths, sizeof paths, NULL), "version 5 is refused");
	memcpy(e, two, sizeof two);
	e[0].path = "";
	build(&b, 2, 1, e, 1);
	ok(!takes(&b, paths, sizeof paths, NULL), "an empty path is refused");

	/* extensions */
	build(&b, 2, 2, two, 2);
	buf_adds(&b, "link");
	be32(&b, 0);
	ok(!takes(&b, paths, sizeof paths, NULL), "a required extension "
	    "(a split index) is refused");
	build(&b, 2, 2, two, 2);
	buf_adds(&b, "UNTR");
	be32(&b, 3);
	buf_adds(&b, "xyz");
	ok(takes(&b, paths, sizeof paths, NULL), "an optional one is passed "
	    "over");
	build(&b, 2, 2, two, 2);
	buf_adds(&b, "UNTR");
	be32(&b, 4);
	buf_adds(&b, "xyz");
	ok(!takes(&b, paths, sizeof paths, NULL), "one longer than the file "
	    "is refused");
	build(&b, 2, 2, two, 2);
	buf_adds(&b, "UNT");
	ok(!takes(&b, paths, sizeof paths, NULL), "bytes after the last "
	    "extension are refused");

	buf_release(&b);
	return tap_done();
}
