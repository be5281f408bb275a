/*
 * gitindex.c - git's index file (versions 2 to 4) read directly: libgit2
 * also builds a map of every path and sorts entries already in order,
 * which was a quarter of hw-inspect changes' time on a 50,000-file tree.
 * The format is git's Documentation/gitformat-index.txt.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "inspect/gitindex.h"

/* larger indexes are libgit2's; 64 MiB holds about 700,000 entries */
#define GINDEX_MAX (64u << 20)
#define OID 20			/* SHA-1: libgit2 1.5 opens no other */
#define FIXED 62		/* an entry's bytes before its flags' extra */

static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	    (uint32_t)p[2] << 8 | p[3];
}

static uint32_t
be16(const unsigned char *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

/* varint: version 4's prefix length, git's offset encoding; -1 if bad */
static int
varint(const unsigned char **p, const unsigned char *end, size_t *out)
{
	const unsigned char *q = *p;
	size_t v;

	if (q == end)
		return -1;
	v = *q & 127;
	while (*q++ & 128) {
		if (q == end || v >= (SIZE_MAX >> 8))
			return -1;
		v = ((v + 1) << 7) | (*q & 127);
	}
	*p = q;
	*out = v;
	return 0;
}

/* tree_ext: the root entry of a TREE extension, if it covers n entries */
static int
tree_ext(struct gindex *g, const unsigned char *p, size_t len)
{
	const unsigned char *end = p + len;
	long long count = 0;
	int neg = 0, digits = 0;

	if (len < 1 || *p++ != '\0')	/* the root's path is empty */
		return 0;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	for (; p < end && *p >= '0' && *p <= '9' && digits < 12; p++, digits++)
		count = count * 10 + (*p - '0');
	if (!digits || neg || p == end || *p != ' ' ||
	    (size_t)count != g->n)
		return 0;	/* invalidated, or not over the whole index */
	if (!(p = memchr(p, '\n', (size_t)(end - p))) || end - ++p < OID)
		return 0;
	memcpy(g->tree, p, OID);
	return 1;
}

/* entries: the n entries from p on, of the given version; NULL if bad */
static const unsigned char *
entries(struct gindex *g, const unsigned char *p, const unsigned char *end,
    uint32_t version, uint32_t n)
{
	const char *prev = "";
	size_t prevn = 0, len, strip, i;
	uint32_t flags, stage;
	const unsigned char *q, *nul;
	struct gindex_entry *e;
	char *path;

	/* each entry takes more than FIXED bytes: n cannot overstate much */
	if (n > (size_t)(end - p) / FIXED)
		return NULL;
	g->e = xcalloc((size_t)n + 1, sizeof *g->e);
	for (i = 0; i < n; i++) {
		if (end - p < FIXED + 1)
			return NULL;
		e = &g->e[i];
		e->cs = (int32_t)be32(p), e->cns = be32(p + 4);
		e->ms = (int32_t)be32(p + 8), e->mns = be32(p + 12);
		e->ino = be32(p + 20), e->mode = be32(p + 24);
		e->uid = be32(p + 28), e->gid = be32(p + 32);
		e->size = be32(p + 36);
		memcpy(e->oid, p + 40, OID);
		flags = be16(p + 60);
		stage = (flags >> 12) & 3;
		/* assume-valid, extended (intent-to-add, skip-worktree) */
		e->odd = stage != 0 || (flags & 0xc000);
		q = p + FIXED;
		if (flags & 0x4000) {	/* a version 3 flag word follows */
			if (version < 3 || end - q < 3)
				return NULL;
			q += 2;
		}
		strip = 0;
		if (version == 4 && varint(&q, end, &strip) < 0)
			return NULL;
		if (!(nul = memchr(q, '\0', (size_t)(end - q))))
			return NULL;
		len = (size_t)(nul - q);
		if (version == 4) {
			if (strip > prevn)
				return NULL;
			path = arena_alloc_raw(&g->a, prevn - strip + len + 1);
			memcpy(path, prev, prevn - strip);
			memcpy(path + prevn - strip, q, len + 1);
			len += prevn - strip;
			p = nul + 1;
		} else {
			path = (char *)q;
			/* NULs to a multiple of 8 bytes, at least one */
			if ((size_t)(end - p) < (((size_t)(q - p) + len + 8) &
			    ~(size_t)7))
				return NULL;
			p += ((size_t)(q - p) + len + 8) & ~(size_t)7;
		}
		if (len == 0 || ((flags & 0xfff) != 0xfff ?
		    (flags & 0xfff) != len : len < 0xfff))
			return NULL;
		e->path = path;
		e->stage = stage;
		prev = path;
		prevn = len;
		g->n++;
	}
	return p;
}

static int
entry_order(const void *x, const void *y)
{
	const struct gindex_entry *a = x, *b = y;
	int c = strcmp(a->path, b->path);

	return c ? c : (a->stage > b->stage) - (a->stage < b->stage);
}

/*
 * in_order puts the entries in git's order (by path, then by stage), as
 * libgit2 does with an index git did not write; 0 if a path and stage
 * repeat
 */
static int
in_order(struct gindex *g)
{
	size_t i;
	int sorted = 1;

	for (i = 1; i < g->n && sorted; i++)
		sorted = entry_order(&g->e[i - 1], &g->e[i]) < 0;
	if (!sorted)
		qsort(g->e, g->n, sizeof *g->e, entry_order);
	for (i = 1; i < g->n; i++)
		if (entry_order(&g->e[i - 1], &g->e[i]) == 0)
			return 0;
	return 1;
}

int
gindex_read(struct gindex *g, const char *path)
{
	struct stat st;
	int fd, rc;

	memset(g, 0, sizeof *g);
	arena_init(&g->a);
	buf_init(&g->file);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	rc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size <= GINDEX_MAX &&
	    read_fd(fd, path, GINDEX_MAX, &g->file) == 0;
	close(fd);
	if (!rc)
		return 0;
	g->stamp = st.st_mtim;
	return gindex_parse(g);
}

int
gindex_parse(struct gindex *g)
{
	const unsigned char *p, *end;
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int sn = 0;
	uint32_t version, n, size;
	size_t i;

	if (g->file.len < 12 + OID)
		return 0;
	p = (const unsigned char *)g->file.p;
	end = p + g->file.len - OID;
	/* the trailer: SHA-1 of all that precedes it */
	if (!EVP_Digest(p, (size_t)(end - p), sum, &sn, EVP_sha1(), NULL) ||
	    sn != OID || memcmp(sum, end, OID))
		return 0;
	version = be32(p + 4);
	n = be32(p + 8);
	if (memcmp(p, "DIRC", 4) || version < 2 || version > 4 ||
	    !(p = entries(g, p + 12, end, version, n)) || !in_order(g))
		return 0;
	/* extensions: an unknown one in lower case is required (a split or
	   sparse index, say) */
	while (p < end) {
		if (end - p < 8 || (size = be32(p + 4)) > (size_t)(end - p) - 8)
			return 0;
		if (p[0] < 'A' || p[0] > 'Z')
			return 0;
		if (!memcmp(p, "TREE", 4))
			g->has_tree = tree_ext(g, p + 8, size);
		p += 8 + size;
	}
	for (i = 0; i < g->n; i++)
		if (g->e[i].odd)
			g->has_tree = 0;
	return 1;
}

int
gindex_same_blob(int fd, const char *name, const struct gindex_entry *e)
{
	unsigned char sum[EVP_MAX_MD_SIZE], chunk[65536];
	char head[32];
	EVP_MD_CTX *x = EVP_MD_CTX_new();
	unsigned int sn = 0;
	struct stat st;
	uint64_t left = e->size;
	ssize_t r = 0;
	int f, ok = 0;

	if (!x || (f = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
	    O_NONBLOCK)) < 0) {
		EVP_MD_CTX_free(x);
		return 0;
	}
	if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) &&
	    (uint64_t)st.st_size == e->size &&
	    EVP_DigestInit_ex(x, EVP_sha1(), NULL) &&
	    EVP_DigestUpdate(x, head, (size_t)snprintf(head, sizeof head,
	    "blob %u", (unsigned)e->size) + 1)) {
		while (left > 0 && (r = read(f, chunk, left < sizeof chunk ?
		    left : sizeof chunk)) > 0 && EVP_DigestUpdate(x, chunk,
		    (size_t)r))
			left -= (uint64_t)r;
		ok = left == 0 && read(f, chunk, 1) == 0 &&
		    EVP_DigestFinal_ex(x, sum, &sn) && sn == OID &&
		    !memcmp(sum, e->oid, OID);
	}
	close(f);
	EVP_MD_CTX_free(x);
	return ok;
}

void
gindex_release(struct gindex *g)
{
	free(g->e);
	arena_release(&g->a);
	buf_release(&g->file);
}
