/*
 * head.c - the verified head: where the last full check of a session's
 * logs ended, so that the next command checks only what came after it
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/logs.h"

#define HEAD_FILE ".verified-head.json"
#define HEAD_MAX 65536

static struct jval *bloom_json(struct arena *a, const struct cmd_bloom *f);

static struct jval *
end_json(struct arena *a, const struct logend *e)
{
	struct jval *o = json_obj(a);

	json_set(a, o, "dev", json_int(a, (int64_t)e->dev));
	json_set(a, o, "ino", json_int(a, (int64_t)e->ino));
	json_set(a, o, "line_sha256", json_str(a, e->sha));
	json_set(a, o, "line_start", json_int(a, (int64_t)e->start));
	json_set(a, o, "offset", json_int(a, (int64_t)e->off));
	return o;
}

struct jval *
logpos_json(struct arena *a, const struct logpos *p)
{
	struct jval *o = json_obj(a);

	json_set(a, o, "audit", end_json(a, &p->au));
	json_set(a, o, "audit_head", json_str(a, p->head));
	json_set(a, o, "count", json_int(a, p->count));
	json_set(a, o, "event_hash", json_str(a, p->ehash));
	json_set(a, o, "events", end_json(a, &p->ev));
	json_set(a, o, "commands", bloom_json(a, &p->commands));
	return o;
}

/* hex_ok: s is n lowercase hex digits */
static int
hex_ok(const char *s, size_t n)
{
	return s && strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

static int
hash_ok(const char *s)
{
	return s && strlen(s) == HW_HASH_LEN && !strncmp(s, "sha256:", 7) &&
	    hex_ok(s + 7, 64);
}

/* ---- the filter of command ids ---- */

/* bloom_bits: the 4 bits of an id, the n bytes at s */
static void
bloom_bits(const char *s, size_t n, unsigned bit[4])
{
	unsigned char d[32];
	struct sha256 h;
	int i;

	sha256_init(&h);
	sha256_update(&h, s, n);
	sha256_final(&h, d);
	sha256_release(&h);
	for (i = 0; i < 4; i++)
		bit[i] = ((unsigned)d[2 * i] << 8 | d[2 * i + 1]) %
		    CMD_BLOOM_BITS;
}

void
bloom_note_id(struct cmd_bloom *f, const char *s, size_t n)
{
	unsigned bit[4];
	int i;

	bloom_bits(s, n, bit);
	for (i = 0; i < 4; i++)
		f->b[bit[i] / 8] |= (unsigned char)(1u << (bit[i] % 8));
}

void
bloom_note(struct cmd_bloom *f, const struct jval *ev)
{
	const struct jval *cid;

	/* an id that is not a string matches no command (json_equal) */
	if (!json_is_str(json_get(ev, "kind"), "command.received") ||
	    !(cid = json_get(json_get(ev, "payload"), "command_id")) ||
	    cid->t != J_STRING)
		return;
	bloom_note_id(f, cid->u.s, cid->n);
}

int
bloom_has(const struct cmd_bloom *f, const struct jval *cid)
{
	unsigned bit[4];
	int i;

	if (!cid || cid->t != J_STRING)
		return 1;
	bloom_bits(cid->u.s, cid->n, bit);
	for (i = 0; i < 4; i++)
		if (!(f->b[bit[i] / 8] & (1u << (bit[i] % 8))))
			return 0;
	return 1;
}

void
bloom_or(struct cmd_bloom *to, const struct cmd_bloom *from)
{
	size_t i;

	for (i = 0; i < sizeof to->b; i++)
		to->b[i] |= from->b[i];
}

static struct jval *
bloom_json(struct arena *a, const struct cmd_bloom *f)
{
	char *hex = xmalloc(2 * sizeof f->b + 1);
	struct jval *v;
	size_t i;

	for (i = 0; i < sizeof f->b; i++)
		snprintf(hex + 2 * i, 3, "%02x", f->b[i]);
	v = json_strn(a, hex, 2 * sizeof f->b);
	free(hex);
	return v;
}

static int
bloom_parse(const char *hex, struct cmd_bloom *f)
{
	size_t i;
	unsigned x;

	if (!hex_ok(hex, 2 * sizeof f->b))
		return -1;
	for (i = 0; i < sizeof f->b; i++) {
		sscanf(hex + 2 * i, "%2x", &x);
		f->b[i] = (unsigned char)x;
	}
	return 0;
}

static int
end_parse(const struct jval *o, struct logend *e)
{
	int64_t dev, ino, start, off;
	const char *sha = json_get_str(o, "line_sha256");

	if (!o || o->t != J_OBJECT || o->n != 5 ||
	    json_get_int(o, "dev", &dev) < 0 ||
	    json_get_int(o, "ino", &ino) < 0 ||
	    json_get_int(o, "line_start", &start) < 0 ||
	    json_get_int(o, "offset", &off) < 0 || !hex_ok(sha, 64) ||
	    start < 0 || off <= start || off - start > JSONL_LINE_MAX + 1)
		return -1;
	e->dev = (dev_t)dev;
	e->ino = (ino_t)ino;
	e->start = (off_t)start;
	e->off = (off_t)off;
	memcpy(e->sha, sha, sizeof e->sha);
	return 0;
}

int
logpos_parse(const struct jval *o, struct logpos *p)
{
	const char *h = json_get_str(o, "audit_head");
	const char *eh = json_get_str(o, "event_hash");

	memset(p, 0, sizeof *p);
	if (!o || o->t != J_OBJECT || o->n != 6 ||
	    json_get_int(o, "count", &p->count) < 0 || p->count < 1 ||
	    !hash_ok(h) || !hash_ok(eh) ||
	    end_parse(json_get(o, "events"), &p->ev) < 0 ||
	    end_parse(json_get(o, "audit"), &p->au) < 0 ||
	    bloom_parse(json_get_str(o, "commands"), &p->commands) < 0)
		return -1;
	memcpy(p->head, h, sizeof p->head);
	memcpy(p->ehash, eh, sizeof p->ehash);
	return 0;
}

/* line_hash: the bare hex SHA-256 of the n bytes of fd at off */
static int
line_hash(int fd, off_t off, size_t n, char out[65])
{
	struct sha256 h;
	unsigned char d[32], chunk[65536];
	size_t got = 0, want;
	ssize_t r;
	int i;

	sha256_init(&h);
	while (got < n) {
		want = n - got < sizeof chunk ? n - got : sizeof chunk;
		if ((r = pread(fd, chunk, want, off + (off_t)got)) <= 0)
			break;
		sha256_update(&h, chunk, (size_t)r);
		got += (size_t)r;
	}
	sha256_final(&h, d);
	sha256_release(&h);
	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
	return got == n ? 0 : -1;
}

/*
 * end_line: fd is the file the end was taken of, at least as long, and
 * its last verified line, whole, is still the bytes that were verified;
 * the line (without its newline) parsed into a.  NULL otherwise.
 */
static struct jval *
end_line(const struct logend *e, int fd, struct arena *a)
{
	struct stat st;
	struct buf b;
	struct jval *v = NULL;
	char sha[65], err[128];
	size_t n = (size_t)(e->off - e->start);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_dev != e->dev ||
	    st.st_ino != e->ino || st.st_size < e->off)
		return NULL;
	buf_init(&b);
	buf_reserve(&b, n + 1);
	if (pread(fd, b.p, n + (e->start > 0), e->start - (e->start > 0)) !=
	    (ssize_t)(n + (e->start > 0)))
		goto out;
	/* the line before it ended just before it: it is a whole line */
	if (e->start > 0 && b.p[0] != '\n')
		goto out;
	sha256_hex(b.p + (e->start > 0), n, sha);
	if (strcmp(sha, e->sha) || b.p[(e->start > 0) + n - 1] != '\n')
		goto out;
	v = json_parse(a, b.p + (e->start > 0), n - 1, err, sizeof err);
out:
	buf_release(&b);
	return v;
}

/* logpos_holds, and the lines are the records p names */
int
logpos_holds(const struct logpos *p, int efd, int afd)
{
	struct arena a;
	struct buf scratch;
	struct jval *ev, *au;
	char h[HW_HASH_LEN + 1], err[200];
	int64_t es = -1, as = -1;
	int ok = 0;

	arena_init(&a);
	buf_init(&scratch);
	if ((ev = end_line(&p->ev, efd, &a)) && (au = end_line(&p->au, afd,
	    &a)) && json_get_int(ev, "sequence", &es) == 0 &&
	    json_get_int(au, "sequence", &as) == 0 &&
	    es == p->count - 1 && as == p->count - 1 &&
	    json_is_str(json_get(au, "event_hash"), p->head) &&
	    event_check(&a, ev, err, sizeof err) == 0) {
		/* the hash the verifier took: of the event, defaults filled */
		json_hash(ev, &scratch, h);
		ok = !strcmp(h, p->ehash);
	}
	buf_release(&scratch);
	arena_release(&a);
	return ok;
}

/* end_take fills e for fd, whose verified part ends at off */
static int
end_take(struct logend *e, int fd, off_t off)
{
	struct stat st;
	char chunk[4096];
	off_t at = off - 1, lo;
	ssize_t r, i;

	if (fstat(fd, &st) < 0)
		return -1;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->off = off;
	e->start = 0;
	/* the line before the last newline ends where the last one starts */
	while (at > 0 && off - at <= JSONL_LINE_MAX + 1) {
		lo = at - (off_t)sizeof chunk > 0 ? at - (off_t)sizeof chunk : 0;
		if ((r = pread(fd, chunk, (size_t)(at - lo), lo)) != at - lo)
			return -1;
		for (i = r - 1; i >= 0 && chunk[i] != '\n'; i--)
			;
		if (i >= 0) {
			e->start = lo + i + 1;
			break;
		}
		at = lo;
	}
	if (off - e->start > JSONL_LINE_MAX + 1)
		return -1;
	return line_hash(fd, e->start, (size_t)(off - e->start), e->sha);
}

int
logpos_take(struct logpos *p, const struct vstate *v, int efd, off_t eoff,
    int afd, off_t aoff)
{
	memset(p, 0, sizeof *p);
	if (v->i < 1 || end_take(&p->ev, efd, eoff) < 0 ||
	    end_take(&p->au, afd, aoff) < 0)
		return -1;
	p->count = v->i;
	memcpy(p->head, v->head, sizeof p->head);
	memcpy(p->ehash, v->ehash, sizeof p->ehash);
	return 0;
}

/*
 * private_bytes reads a small file that must be a regular file of this
 * user's, open to nobody else, never through a symbolic link, into b: 0,
 * or -1 (no error kept) otherwise
 */
int
private_bytes(const char *path, size_t max, struct buf *b)
{
	struct stat st;
	int fd, rc = -1, code = hw_err_code();
	char saved[256];

	snprintf(saved, sizeof saved, "%s", hw_err_msg());
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_uid == geteuid() && (st.st_mode & 077) == 0 &&
	    st.st_size > 0 && (size_t)st.st_size <= max &&
	    read_fd(fd, path, max, b) == 0)
		rc = 0;
	close(fd);
	hw_err_set(code, "%s", saved);
	return rc;
}

int
cache_write(const char *path, const void *p, size_t n)
{
	struct stat st;

	/*
	 * A link where a cache goes (from a clone, an archive) is neither
	 * read (private_bytes) nor followed: the cache replaces it.
	 */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && unlink(path) < 0)
		return hw_err_sys("cannot remove '%s'", path);
	/*
	 * Not synced: a cache lost or torn in a crash does not hold where
	 * it is checked (a head's lines and hashes, a snapshot's position
	 * and MAC) and is rebuilt from the logs, which are synced first.
	 */
	return unsynced_replace(path, p, n);
}

int
cache_write_json(const char *path, const struct jval *v)
{
	struct buf b;
	int rc;

	buf_init(&b);
	json_canon(&b, v);
	buf_addc(&b, '\n');
	rc = cache_write(path, b.p, b.len);
	buf_release(&b);
	return rc;
}

struct jval *
private_read(const char *path, size_t max, struct arena *a)
{
	struct buf b;
	struct jval *v = NULL;
	char err[128];

	buf_init(&b);
	if (private_bytes(path, max, &b) == 0)
		v = json_parse(a, b.p, b.len, err, sizeof err);
	buf_release(&b);
	return v;
}

int
head_load(struct session *s, struct logpos *p)
{
	char *path = path_join(s->dir, HEAD_FILE);
	struct arena a;
	struct jval *v;
	int rc = -1;

	arena_init(&a);
	v = private_read(path, HEAD_MAX, &a);
	if (v && v->t == J_OBJECT && v->n == 3 &&
	    json_is_str(json_get(v, "schema_version"), HEAD_SCHEMA) &&
	    json_is_str(json_get(v, "session_id"), s->id) &&
	    logpos_parse(json_get(v, "position"), p) == 0)
		rc = 0;
	arena_release(&a);
	free(path);
	return rc;
}

int
head_save(struct session *s, const struct logpos *p)
{
	char *path = path_join(s->dir, HEAD_FILE);
	struct arena a;
	struct jval *o;
	int rc;

	arena_init(&a);
	o = json_obj(&a);
	json_set(&a, o, "position", logpos_json(&a, p));
	json_set(&a, o, "schema_version", json_str(&a, HEAD_SCHEMA));
	json_set(&a, o, "session_id", json_str(&a, s->id));
	rc = cache_write_json(path, o);
	arena_release(&a);
	free(path);
	return rc;
}

/* reader_of: a descriptor to read the file wfd writes, or -1 */
static int
reader_of(const char *path, int wfd, struct stat *st)
{
	struct stat w;
	int fd;

	if (wfd < 0 || fstat(wfd, &w) < 0 ||
	    (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, st) < 0 || st->st_dev != w.st_dev ||
	    st->st_ino != w.st_ino) {
		close(fd);
		return -1;
	}
	return fd;
}

int
logs_writer_end(struct session *s, struct logpos *p)
{
	struct stat est, ast;
	int efd = -1, afd = -1, rc = -1;

	memset(p, 0, sizeof *p);
	/* the append descriptors are open while the lease is held */
	if (s->broken || s->count < 1 || !s->ehash[0] || !s->bloom)
		return -1;
	if ((efd = reader_of(s->events, s->ev_fd, &est)) >= 0 &&
	    (afd = reader_of(s->audit, s->au_fd, &ast)) >= 0 &&
	    end_take(&p->ev, efd, est.st_size) == 0 &&
	    end_take(&p->au, afd, ast.st_size) == 0) {
		p->count = s->count;
		p->commands = *s->bloom;
		memcpy(p->head, s->head, sizeof p->head);
		memcpy(p->ehash, s->ehash, sizeof p->ehash);
		rc = 0;
	}
	if (efd >= 0)
		close(efd);
	if (afd >= 0)
		close(afd);
	return rc;
}

int
session_head_leave(struct session *s)
{
	struct logpos p;

	/*
	 * What this writer verified when it took the lease and what it
	 * committed since, its audit records synced: the next command starts
	 * after it.  Only a writer that committed writes it; a failed write
	 * is reported like any other (the disk is in trouble).
	 */
	if (!s->committed || logs_writer_end(s, &p) < 0)
		return 0;
	if (head_save(s, &p) < 0)
		return -1;
	s->committed = 0;	/* the head has it all */
	return 0;
}
