/*
 * mcache.c - a session's Merkle tree kept on disk, level by level, so that
 * proofs over a log of millions of records take milliseconds.
 *
 * .heartwood/sessions/ID/.merkle/ holds Lk (k = 0..63): level k of the
 * tree, the roots of the aligned perfect subtrees of 2^k leaves, 32 bytes
 * each, appended as the log grows; offsets, where each record starts in
 * audit.jsonl (8 bytes, native order); and state, {"count","offset",
 * "terminal","last_len"}: how many audit records the levels cover, where
 * the next record starts in audit.jsonl, and the last record's hash and
 * line length.  It is derived data: nothing is synced, and whatever does
 * not check out against audit.jsonl is rebuilt from it.  A proof served
 * from a cache that lies fails at the verifier, never passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"

struct mstate {
	int64_t count, offset, last_len;
	char terminal[HW_HASH_LEN + 1];
};

static char *
cpath(struct mcache *c, const char *name)
{
	return path_join(c->dir, name);
}

static int
level_fd(struct mcache *c, int k)
{
	char name[8];
	char *p;

	if (c->fd[k] >= 0)
		return c->fd[k];
	snprintf(name, sizeof name, "L%02d", k);
	p = cpath(c, name);
	c->fd[k] = open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (c->fd[k] < 0)
		hw_err_sys("cannot open '%s'", p);
	free(p);
	return c->fd[k];
}

static void
state_load(struct mcache *c, struct mstate *st)
{
	struct arena a;
	struct jval *v;
	char *p = cpath(c, "state");
	const char *t;

	memset(st, 0, sizeof *st);
	arena_init(&a);
	v = read_json_file(p, 4096, &a);
	t = v ? json_get_str(v, "terminal") : NULL;
	if (!v || json_get_int(v, "count", &st->count) < 0 ||
	    json_get_int(v, "offset", &st->offset) < 0 ||
	    json_get_int(v, "last_len", &st->last_len) < 0 || !t ||
	    strlen(t) > HW_HASH_LEN || st->count < 0 || st->offset < 0)
		memset(st, 0, sizeof *st);
	else
		strcpy(st->terminal, t);
	arena_release(&a);
	free(p);
}

static int
state_save(struct mcache *c, const struct mstate *st)
{
	struct buf b;
	char *p = cpath(c, "state");
	int rc;

	buf_init(&b);
	buf_printf(&b, "{\"count\":%lld,\"last_len\":%lld,\"offset\":%lld,"
	    "\"terminal\":\"%s\"}\n", (long long)st->count,
	    (long long)st->last_len, (long long)st->offset, st->terminal);
	rc = atomic_replace(p, b.p, b.len);
	buf_release(&b);
	free(p);
	return rc;
}

/* anchored: the record the state ends with is still audit.jsonl's */
static int
anchored(int au, const struct mstate *st)
{
	struct arena a;
	struct jval *v;
	char *line, err[64];
	int64_t seq;
	int ok = 0;

	if (st->count == 0)
		return st->offset == 0;
	if (st->last_len < 2 || st->last_len > JSONL_LINE_MAX ||
	    st->offset < st->last_len)
		return 0;
	line = xmalloc((size_t)st->last_len);
	arena_init(&a);
	if (pread(au, line, (size_t)st->last_len, st->offset - st->last_len) ==
	    st->last_len && line[st->last_len - 1] == '\n' &&
	    (v = json_parse(&a, line, (size_t)st->last_len - 1, err,
	    sizeof err)) && json_get_int(v, "sequence", &seq) == 0 &&
	    seq == st->count - 1 && json_is_str(json_get(v, "event_hash"),
	    st->terminal))
		ok = 1;
	arena_release(&a);
	free(line);
	return ok;
}

/* leaf_of checks the next record and hashes it; -1 with code 65 if bad */
static int
leaf_of(struct arena *a, struct buf *scratch, char *line, size_t n,
    struct mstate *st, mhash leaf)
{
	struct chain_pos at = { st->count, st->terminal, NULL };
	char err[200], h[HW_HASH_LEN + 1];
	struct jval *v;
	const char *c;
	size_t cn;
	int canonical;

	if (!(v = json_parse_canon(a, line, n, err, sizeof err, &canonical)))
		return hw_err_set(HW_EXIT_DATA, "sequence %lld: %s",
		    (long long)st->count, err);
	if (v->t != J_OBJECT || audit_chain_check(a, scratch, v, line, n,
	    canonical, &at, h, &c, &cn) < 0)
		return hw_err_set(HW_EXIT_DATA, "sequence %lld: %s",
		    (long long)st->count, v->t != J_OBJECT ?
		    "not a JSON object" : hw_err_msg());
	merkle_leaf_hash(c, cn, leaf);
	strcpy(st->terminal, h);
	return 0;
}

/* grow_levels appends the nodes that leaves old..count complete */
static int
grow_levels(struct mcache *c, uint64_t old, uint64_t count)
{
	enum { CHUNK = 4096 };
	mhash *in = xmalloc(2 * CHUNK * sizeof *in), *out;
	uint64_t i, n;
	size_t j;
	int k, lo, hi, rc = -1;

	out = xmalloc(CHUNK * sizeof *out);
	for (k = 1; k < 64 && (count >> k) > 0; k++) {
		if ((lo = level_fd(c, k - 1)) < 0 || (hi = level_fd(c, k)) < 0)
			goto out;
		if (ftruncate(hi, (off_t)((old >> k) * 32)) < 0)
			goto io;
		for (i = old >> k; i < count >> k; i += n) {
			n = (count >> k) - i < CHUNK ? (count >> k) - i : CHUNK;
			if (pread(lo, in, n * 64, (off_t)(i * 64)) !=
			    (ssize_t)(n * 64))
				goto io;
			for (j = 0; j < n; j++)
				merkle_node_hash(in[2 * j], in[2 * j + 1],
				    out[j]);
			if (pwrite(hi, out, n * 32, (off_t)(i * 32)) !=
			    (ssize_t)(n * 32))
				goto io;
		}
	}
	rc = 0;
	goto out;
io:
	hw_err_sys("cannot update the Merkle cache");
out:
	free(in);
	free(out);
	return rc;
}

/* flush_leaves writes the buffered leaf hashes and offsets before count */
static int
flush_leaves(struct mcache *c, int l0, struct buf *leaves, struct buf *offs,
    int64_t count)
{
	off_t n = (off_t)(leaves->len / 32);

	if (n && (pwrite(l0, leaves->p, leaves->len, (count - n) * 32) !=
	    (ssize_t)leaves->len || pwrite(c->offs, offs->p, offs->len,
	    (count - n) * 8) != (ssize_t)offs->len))
		return -1;
	buf_clear(leaves);
	buf_clear(offs);
	return 0;
}

/* extend reads audit.jsonl from the state's offset and grows the levels */
static int
extend(struct mcache *c, int au, struct mstate *st)
{
	struct jsonl r;
	struct arena a;
	struct buf scratch, leaves, offs;
	mhash leaf;
	int64_t at;
	char *line;
	size_t len;
	uint64_t old = (uint64_t)st->count;
	int k, l0, rc = -1;

	if (lseek(au, st->offset, SEEK_SET) < 0)
		return hw_err_sys("cannot seek the audit log");
	if ((l0 = level_fd(c, 0)) < 0 ||
	    ftruncate(l0, (off_t)(old * 32)) < 0 ||
	    ftruncate(c->offs, (off_t)(old * 8)) < 0)
		return hw_err_sys("cannot open the Merkle cache");
	jsonl_init(&r, au, "audit.jsonl", JSONL_LINE_MAX);
	arena_init(&a);
	buf_init(&scratch);
	buf_init(&leaves);
	buf_init(&offs);
	while ((k = jsonl_next(&r, &line, &len)) > 0) {
		arena_clear(&a);
		if (leaf_of(&a, &scratch, line, len, st, leaf) < 0)
			goto out;
		buf_add(&leaves, leaf, 32);
		at = st->offset;
		buf_add(&offs, &at, 8);
		st->count++;
		st->offset += (int64_t)len + 1;
		st->last_len = (int64_t)len + 1;
		if (leaves.len >= (1u << 20) && flush_leaves(c, l0, &leaves,
		    &offs, st->count) < 0)
			goto io;
	}
	if (k < 0)
		goto out;
	if (flush_leaves(c, l0, &leaves, &offs, st->count) < 0)
		goto io;
	rc = grow_levels(c, old, (uint64_t)st->count);
	goto out;
io:
	hw_err_sys("cannot write the Merkle cache");
out:
	buf_release(&scratch);
	buf_release(&leaves);
	buf_release(&offs);
	arena_release(&a);
	jsonl_release(&r);
	return rc;
}

static int
map_levels(struct mcache *c, uint64_t n)
{
	int k;

	memset(&c->t, 0, sizeof c->t);
	c->t.n = n;
	c->t.levels = 1;
	for (k = 0; k < 64 && (k == 0 || (n >> k) > 0); k++) {
		size_t len = (size_t)(n >> k) * 32;

		c->t.count[k] = n >> k;
		c->t.levels = k + 1;
		if (len == 0)
			continue;
		if (level_fd(c, k) < 0)
			return -1;
		c->map[k] = mmap(NULL, len, PROT_READ, MAP_SHARED, c->fd[k], 0);
		if (c->map[k] == MAP_FAILED) {
			c->map[k] = NULL;
			return hw_err_sys("cannot map the Merkle cache");
		}
		c->maplen[k] = len;
		c->t.level[k] = c->map[k];
	}
	return 0;
}

int
mcache_open(struct session *s, struct mcache *c)
{
	struct mstate st;
	char *lockp;
	int au = -1, k, rc = -1;

	memset(c, 0, sizeof *c);
	c->offs = -1;
	for (k = 0; k < 64; k++)
		c->fd[k] = -1;
	c->dir = path_join(s->dir, ".merkle");
	if (ensure_dir(c->dir) < 0)
		return -1;
	lockp = cpath(c, "lock");
	c->lock = lock_open(lockp, 0);
	free(lockp);
	if (c->lock < 0)
		return -1;
	lockp = cpath(c, "offsets");
	c->offs = open(lockp, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	free(lockp);
	if (c->offs < 0)
		return hw_err_sys("cannot open the Merkle cache offsets");
	if ((au = open(s->audit, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if (errno != ENOENT)
			return hw_err_sys("cannot open '%s'", s->audit);
		memset(&st, 0, sizeof st);
		return map_levels(c, 0);
	}
	state_load(c, &st);
	if (!anchored(au, &st))
		memset(&st, 0, sizeof st);	/* rebuild from the start */
	if (extend(c, au, &st) < 0 || state_save(c, &st) < 0)
		goto out;
	c->count = st.count;
	rc = map_levels(c, (uint64_t)st.count);
out:
	close(au);
	return rc;
}

void
mcache_close(struct mcache *c)
{
	int k;

	for (k = 0; k < 64; k++) {
		if (c->map[k])
			munmap(c->map[k], c->maplen[k]);
		if (c->fd[k] >= 0)
			close(c->fd[k]);
	}
	if (c->offs >= 0)
		close(c->offs);
	lock_close(c->lock);
	free(c->dir);
	memset(c, 0, sizeof *c);
}

int
mcache_record(struct session *s, struct mcache *c, int64_t seq,
    struct buf *out)
{
	int64_t at, end;
	int au;
	ssize_t r;

	if (seq < 0 || seq >= c->count)
		return hw_err_set(HW_EXIT_USAGE, "no record %lld: the log holds "
		    "%lld", (long long)seq, (long long)c->count);
	if (pread(c->offs, &at, 8, seq * 8) != 8 || (seq + 1 < c->count ?
	    pread(c->offs, &end, 8, (seq + 1) * 8) != 8 : 0))
		return hw_err_sys("cannot read the Merkle cache offsets");
	if (seq + 1 == c->count) {
		struct stat sb;

		/* the last record: read on to its newline */
		if (stat(s->audit, &sb) < 0)
			return hw_err_sys("cannot stat '%s'", s->audit);
		end = sb.st_size;
	}
	if (end <= at || end - at > (int64_t)JSONL_LINE_MAX + 1)
		return hw_err_set(HW_EXIT_DATA, "the Merkle cache does not match "
		    "audit.jsonl");
	if ((au = open(s->audit, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return hw_err_sys("cannot open '%s'", s->audit);
	buf_clear(out);
	buf_reserve(out, (size_t)(end - at));
	r = pread(au, out->p, (size_t)(end - at), at);
	close(au);
	if (r != end - at)
		return hw_err_sys("cannot read '%s'", s->audit);
	out->len = (size_t)r;
	{
		char *nl = memchr(out->p, '\n', out->len);

		if (!nl)
			return hw_err_set(HW_EXIT_DATA, "the Merkle cache does "
			    "not match audit.jsonl");
		out->len = (size_t)(nl - out->p);
	}
	return 0;
}
