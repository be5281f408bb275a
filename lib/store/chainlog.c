/* chainlog.c - a standalone hash-chained JSONL log with a recovery journal */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

struct chainlog {
	char *path, *lockp, *pending;
	int lock;
};

static void
sibling(struct chainlog *c, const char *path)
{
	char *t1 = xstrdup(path), *t2 = xstrdup(path);
	const char *dir = dirname(t1), *base = basename(t2);

	c->path = xstrdup(path);
	c->lockp = xasprintf("%s/.%s.lock", dir, base);
	c->pending = xasprintf("%s/.%s.pending", dir, base);
	free(t1);
	free(t2);
}

static void
chainlog_release(struct chainlog *c)
{
	lock_close(c->lock);
	free(c->path);
	free(c->lockp);
	free(c->pending);
}

/* prefix_sha256 hashes the first off bytes of path (a missing file: 0). */
static int
prefix_sha256(const char *path, off_t off, char hex[SHA256_HEX + 1],
    off_t *size)
{
	struct sha256 h;
	unsigned char d[32];
	char chunk[65536];
	off_t left = off;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	*size = 0;
	if (fd < 0 && errno != ENOENT)
		return hw_err_sys("cannot open '%s'", path);
	sha256_init(&h);
	while (fd >= 0) {
		size_t want = left < (off_t)sizeof chunk ? (size_t)left :
		    sizeof chunk;

		r = read(fd, chunk, left > 0 ? want : sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			sha256_release(&h);
			return hw_err_sys("cannot read '%s'", path);
		}
		if (r == 0)
			break;
		if (left > 0) {
			sha256_update(&h, chunk, (size_t)r);
			left -= r;
		}
		*size += r;
	}
	if (fd >= 0)
		close(fd);
	sha256_final(&h, d);
	sha256_release(&h);
	hex_encode(d, 32, hex);
	return 0;
}

static int
read_suffix(const char *path, off_t off, struct buf *b, size_t max)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char chunk[4096];
	ssize_t r;

	buf_clear(b);
	if (fd < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot open '%s'",
		    path);
	if (lseek(fd, off, SEEK_SET) < 0) {
		close(fd);
		return hw_err_sys("cannot seek '%s'", path);
	}
	while ((r = read(fd, chunk, sizeof chunk)) > 0 && b->len <= max)
		buf_add(b, chunk, (size_t)r);
	close(fd);
	return r < 0 ? hw_err_sys("cannot read '%s'", path) : 0;
}

static int
recover_locked(struct chainlog *c)
{
	static const char *const keys[] = { "schema_version", "offset",
		"prefix_sha256", "line", "line_sha256", NULL };
	struct arena a;
	struct jval *j, *line;
	struct buf suffix;
	char hex[SHA256_HEX + 1];
	const char *want_prefix, *want_line;
	int64_t off;
	off_t size;
	int rc = -1, fd, created;

	if (access(c->pending, F_OK) < 0 && errno == ENOENT)
		return 0;
	arena_init(&a);
	buf_init(&suffix);
	/* a line of the bound, every byte escaped, and the other fields */
	if (!(j = read_json_file(c->pending, JSONL_LINE_MAX * 2 + 4096,
	    &a)) ||
	    !(j = migrate(&a, "jsonl_append", j)))
		goto out;
	line = json_get(j, "line");
	want_prefix = json_get_str(j, "prefix_sha256");
	want_line = json_get_str(j, "line_sha256");
	if (json_keys_exact(j, keys) < 0 || !line || line->t != J_STRING ||
	    line->n == 0 || line->u.s[line->n - 1] != '\n' ||
	    memchr(line->u.s, '\n', line->n - 1) ||
	    json_get_int(j, "offset", &off) < 0 || off < 0 ||
	    !want_prefix || !want_line) {
		hw_err_set(HW_EXIT_DATA, "append journal '%s' is malformed",
		    c->pending);
		goto out;
	}
	sha256_hex(line->u.s, line->n, hex);
	if (strcmp(hex, want_line)) {
		hw_err_set(HW_EXIT_DATA, "append journal '%s': line digest "
		    "mismatch", c->pending);
		goto out;
	}
	if (prefix_sha256(c->path, (off_t)off, hex, &size) < 0)
		goto out;
	if (size < off || strcmp(hex, want_prefix)) {
		hw_err_set(HW_EXIT_DATA, "'%s' changed before the journaled "
		    "append: recovery refused", c->path);
		goto out;
	}
	if (read_suffix(c->path, (off_t)off, &suffix, line->n) < 0)
		goto out;
	if (suffix.len > line->n || (suffix.len && memcmp(suffix.p, line->u.s,
	    suffix.len))) {
		hw_err_set(HW_EXIT_DATA, "'%s' ends with bytes the journal "
		    "cannot explain: recovery refused", c->path);
		goto out;
	}
	if (suffix.len < line->n) {
		if ((fd = open_append(c->path, &created)) < 0)
			goto out;
		fault_point("chain-truncate");
		if (ftruncate(fd, (off_t)off) < 0 ||
		    write_all(fd, line->u.s, line->n, c->path) < 0 ||
		    fsync(fd) < 0) {
			if (!hw_err_code() || errno)
				hw_err_sys("cannot repair '%s'", c->path);
			close(fd);
			goto out;
		}
		close(fd);
	}
	rc = durable_unlink(c->pending);
out:
	buf_release(&suffix);
	arena_release(&a);
	return rc;
}

/* verify_chain reads the log strictly and returns its length and head. */
static int
verify_chain(struct chainlog *c, const char *logid, int64_t *count,
    char head[HW_HASH_LEN + 1], off_t *size)
{
	struct jsonl r;
	struct arena a;
	struct buf scratch;
	struct jval *v;
	struct chain_pos at = { 0, head, logid };
	char *line, h[HW_HASH_LEN + 1];
	size_t len;
	int fd, k, rc = -1;

	*count = 0;
	head[0] = '\0';
	*size = 0;
	fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot open '%s'",
		    c->path);
	jsonl_init(&r, fd, c->path, JSONL_LINE_MAX);
	arena_init(&a);
	buf_init(&scratch);
	while ((k = jsonl_next(&r, &line, &len)) > 0) {
		arena_clear(&a);
		if (len == 0) {
			hw_err_set(HW_EXIT_DATA, "%s:%ld: empty line", c->path,
			    r.lineno);
			goto out;
		}
		if (!(v = jsonl_parse(&r, &a, line, len)))
			goto out;
		at.count = *count;
		if (audit_chain_check(&a, &scratch, v, line, len, 0, &at, h,
		    NULL, NULL) < 0) {
			hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", c->path,
			    r.lineno, hw_err_msg());
			goto out;
		}
		memcpy(head, h, sizeof h);
		(*count)++;
	}
	if (k < 0)
		goto out;
	if (r.partial) {
		hw_err_set(HW_EXIT_DATA, "%s:%ld: unterminated last line "
		    "without a journal", c->path, r.lineno + 1);
		goto out;
	}
	*size = r.offset;
	rc = 0;
out:
	buf_release(&scratch);
	arena_release(&a);
	jsonl_release(&r);
	close(fd);
	return rc;
}

static int
append_one(struct chainlog *c, off_t off, const char *prefix,
    struct buf *line)
{
	struct arena a;
	struct jval *j;
	char hex[SHA256_HEX + 1];
	int fd, created, rc = -1;

	arena_init(&a);
	j = json_obj(&a);
	sha256_hex(line->p, line->len, hex);
	json_set(&a, j, "schema_version", json_str(&a,
	    current_version("jsonl_append")));
	json_set(&a, j, "offset", json_int(&a, (int64_t)off));
	json_set(&a, j, "prefix_sha256", json_str(&a, prefix));
	json_set(&a, j, "line", json_strn(&a, line->p, line->len));
	json_set(&a, j, "line_sha256", json_str(&a, hex));
	if (atomic_write_json(c->pending, j) < 0)
		goto out;
	if ((fd = open_append(c->path, &created)) < 0)
		goto out;
	if (fault_point("chain-append")) {
		write_all(fd, line->p, line->len / 2, c->path);
		fault_kill();
	}
	if (write_all(fd, line->p, line->len, c->path) < 0 ||
	    (fault_point("chain-sync"), fsync(fd) < 0)) {
		if (errno)
			hw_err_sys("cannot append to '%s'", c->path);
		close(fd);
		goto out;
	}
	close(fd);
	rc = durable_unlink(c->pending);
out:
	arena_release(&a);
	return rc;
}

int
chainlog_recover(const char *path)
{
	struct chainlog c;
	int rc;

	sibling(&c, path);
	if ((c.lock = lock_open(c.lockp, 0)) < 0) {
		chainlog_release(&c);
		return -1;
	}
	rc = recover_locked(&c);
	chainlog_release(&c);
	return rc;
}

/*
 * cut_back undoes a failed batch: the log goes back to len bytes and the
 * pending record goes, so recovery does not complete an append that was
 * reported as failed.  Best effort: what it cannot cut stays for the next
 * writer's recovery to finish, which is no worse than a crash.
 */
static void
cut_back(struct chainlog *c, off_t len)
{
	int fd = open(c->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if (ftruncate(fd, len) == 0 && fsync(fd) == 0)
		unlink(c->pending);
	close(fd);
}

int
chainlog_append(const char *path, const char *logid,
    struct jval *const *drafts, size_t n, struct buf *ack)
{
	struct chainlog c;
	struct arena a;
	struct buf line, scratch;
	struct jval *r, *p;
	char head[HW_HASH_LEN + 1], now[21], prefix[SHA256_HEX + 1];
	char id[RECORD_ID_MAX];
	int64_t count;
	off_t size, got, start = -1;
	size_t i;
	int rc = -1;

	sibling(&c, path);
	arena_init(&a);
	buf_init(&line);
	buf_init(&scratch);
	if ((c.lock = lock_open(c.lockp, 0)) < 0 || recover_locked(&c) < 0 ||
	    verify_chain(&c, logid, &count, head, &size) < 0)
		goto out;
	utc_now(now);
	start = size;
	for (i = 0; i < n; i++, count++) {
		arena_clear(&a);
		p = json_copy(&a, json_get(drafts[i], "payload"));
		redact_json(&a, p);
		scrub(&a, p);
		r = json_obj(&a);
		record_id(id, logid, "audit", count);
		json_set(&a, r, "schema_version", json_str(&a, AUDIT_SCHEMA));
		json_set(&a, r, "event_id", json_str(&a, id));
		json_set(&a, r, "session_id", json_str(&a, logid));
		json_set(&a, r, "sequence", json_int(&a, count));
		json_set(&a, r, "event_type", json_copy(&a, json_get(drafts[i],
		    "kind")));
		json_set(&a, r, "occurred_at", json_str(&a, now));
		json_set(&a, r, "payload", p);
		json_set(&a, r, "previous_event_hash", head[0] ?
		    json_str(&a, head) : json_new(&a, J_NULL));
		audit_hash(&a, r, &scratch, head);
		json_set(&a, r, "event_hash", json_str(&a, head));
		buf_clear(&line);
		json_canon(&line, r);
		if (line.len > JSONL_LINE_MAX) {
			hw_err_set(HW_EXIT_DATA, "refusing record %lld of '%s': "
			    "its line would be %zu bytes, longer than the %u "
			    "bytes readers take", (long long)count, path,
			    line.len, JSONL_LINE_MAX);
			goto out;
		}
		buf_addc(&line, '\n');
		if (prefix_sha256(c.path, size, prefix, &got) < 0 ||
		    append_one(&c, size, prefix, &line) < 0)
			goto out;
		size += (off_t)line.len;
		buf_add(ack, line.p, line.len);
	}
	rc = 0;
out:
	if (rc < 0 && start >= 0)
		cut_back(&c, start);
	buf_release(&line);
	buf_release(&scratch);
	arena_release(&a);
	chainlog_release(&c);
	return rc;
}
