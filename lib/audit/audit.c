/* audit.c - verifying, exporting and checkpointing the audit log */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"

void
audit_sum_init(struct audit_sum *m, int keep_leaves)
{
	memset(m, 0, sizeof *m);
	m->capture = -1;
	sha256_init(&m->content);
	merkle_stream_init(&m->tree);
	m->keep_leaves = keep_leaves;
}

void
audit_sum_release(struct audit_sum *m)
{
	sha256_release(&m->content);
	free(m->leaves);
	m->leaves = NULL;
	buf_release(&m->captured);
}

/* sum_add folds line in; known is its leaf hash when the caller has it */
static void
sum_add(struct audit_sum *m, const char *line, size_t n, const char *hash,
    const unsigned char *known)
{
	size_t hn = strnlen(hash, HW_HASH_LEN);
	mhash leaf;

	sha256_update(&m->content, line, n);
	sha256_update(&m->content, "\n", 1);
	m->size += n + 1;
	if (known)
		memcpy(leaf, known, sizeof leaf);
	else
		merkle_leaf_hash(line, n, leaf);
	merkle_stream_push(&m->tree, leaf);
	if (m->keep_leaves) {
		if ((uint64_t)m->count == m->cap) {
			m->cap = m->cap ? m->cap * 2 : 1024;
			m->leaves = xrealloc(m->leaves, m->cap * sizeof *m->leaves);
		}
		memcpy(m->leaves[m->count], leaf, sizeof leaf);
	}
	if (m->count == m->capture)
		buf_add(&m->captured, line, n);
	memcpy(m->terminal, hash, hn);	/* no snprintf per record */
	m->terminal[hn] = '\0';
	m->count++;
}

static void
sum_finish(struct audit_sum *m)
{
	unsigned char d[32];

	sha256_final(&m->content, d);
	memcpy(m->content_sha, "sha256:", 7);
	hex_encode(d, 32, m->content_sha + 7);
	merkle_stream_root(&m->tree, m->root);
}

/* the audit records of a session, through the full paired verification */
struct session_sum {
	struct audit_sum *m;
	int fd;			/* optional copy of the canonical export */
	struct buf out;
};

static int
session_rec(void *ctx, const char *line, size_t n, const char *hash,
    const unsigned char *leaf)
{
	struct session_sum *ss = ctx;

	sum_add(ss->m, line, n, hash, leaf);
	if (ss->fd < 0)
		return 0;
	buf_add(&ss->out, line, n);
	buf_addc(&ss->out, '\n');
	if (ss->out.len < 65536)
		return 0;
	if (write_all(ss->fd, ss->out.p, ss->out.len, "audit export") < 0)
		return -1;
	buf_clear(&ss->out);
	return 0;
}

static int
verify_session_to(struct session *s, struct audit_sum *m, int fd)
{
	struct session_sum ss = { m, fd, { 0 } };
	int rc;

	snprintf(m->session_id, sizeof m->session_id, "%s", s->id);
	rc = logs_verify_audit(s, session_rec, &ss);
	if (rc == 0 && fd >= 0 && ss.out.len)
		rc = write_all(fd, ss.out.p, ss.out.len, "audit export");
	buf_release(&ss.out);
	if (rc == 0)
		sum_finish(m);
	return rc;
}

int
audit_verify_session(struct session *s, struct audit_sum *m)
{
	return verify_session_to(s, m, -1);
}

static int
blank(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return 0;
	return 1;
}

/* check_export_record verifies one record of a bare export in place. */
static int
check_export_record(struct audit_sum *m, struct arena *a, struct jval *v,
    struct buf *scratch, const char *line, size_t n, int canonical)
{
	struct chain_pos at = { m->count, m->terminal,
		m->count ? m->session_id : NULL };
	char h[HW_HASH_LEN + 1];
	const char *c;
	size_t cn;

	if (audit_chain_check(a, scratch, v, line, n, canonical, &at, h, &c,
	    &cn) < 0)
		return -1;
	if (m->count == 0)
		snprintf(m->session_id, sizeof m->session_id, "%s",
		    json_get_str(v, "session_id"));
	sum_add(m, c, cn, h, NULL);
	return 0;
}

int
audit_verify_fd(int fd, const char *name, struct audit_sum *m)
{
	struct jsonl r;
	struct arena a;
	struct buf scratch;
	struct jval *v;
	char *line;
	size_t len;
	int k, canonical, rc = -1;

	jsonl_init(&r, fd, name, JSONL_LINE_MAX);
	arena_init(&a);
	buf_init(&scratch);
	while ((k = jsonl_next(&r, &line, &len)) > 0) {
		if (blank(line, len))
			continue;
		arena_clear(&a);
		if (!(v = jsonl_parse_canon(&r, &a, line, len, &canonical)) ||
		    check_export_record(m, &a, v, &scratch, line, len,
		    canonical) < 0) {
			hw_err_set(HW_EXIT_DATA, "sequence %lld: %s",
			    (long long)m->count, hw_err_msg());
			goto out;
		}
	}
	if (k < 0)
		goto out;
	if (r.partial && !blank(r.buf + r.start, r.end - r.start)) {
		hw_err_set(HW_EXIT_DATA, "sequence %lld: %s: unterminated last "
		    "line", (long long)m->count, name);
		goto out;
	}
	sum_finish(m);
	rc = 0;
out:
	buf_release(&scratch);
	arena_release(&a);
	jsonl_release(&r);
	return rc;
}

void
audit_sum_json(const struct audit_sum *m, struct buf *b)
{
	char root[65];

	hex_encode(m->root, 32, root);
	buf_printf(b, "{\"content_sha256\":\"%s\",\"event_count\":%lld,"
	    "\"merkle_root\":\"%s\",\"session_id\":", m->content_sha,
	    (long long)m->count, root);
	json_canon_str(b, m->session_id, strlen(m->session_id));
	buf_printf(b, ",\"size_bytes\":%llu,\"terminal_event_hash\":",
	    (unsigned long long)m->size);
	if (m->count)
		buf_printf(b, "\"%s\"}", m->terminal);
	else
		buf_adds(b, "null}");
}

/* ---- publishing files and directories that never replace anything ---- */

int
path_outside_store(const char *path)
{
	char dirbuf[PATH_MAX], store[PATH_MAX], *tmp = xstrdup(path);
	const char *dir = dirname(tmp);
	size_t n;
	int rc = 0;

	if (!realpath(dir, dirbuf)) {
		rc = hw_err_sys("cannot resolve '%s'", dir);
		if (errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
	} else if (realpath(".heartwood", store)) {
		n = strlen(store);
		if (strncmp(dirbuf, store, n) == 0 && (dirbuf[n] == '/' ||
		    dirbuf[n] == '\0'))
			rc = hw_err_set(HW_EXIT_USAGE, "refusing output '%s': "
			    "it is inside .heartwood", path);
	}
	free(tmp);
	return rc;
}

/*
 * publish writes a 0600 file that must not exist yet, from memory or by
 * copying srcfd: through a synced temporary file that is linked into
 * place, so it never replaces anything and never appears partial.
 */
static int
publish(const char *path, const void *p, size_t n, int srcfd)
{
	char *tmp, *tmpl;
	int rc = -1;

	if (!(tmpl = temp_write(path, p, n, srcfd)))
		return -1;
	/* link(2) never replaces: the target appears whole or not at all */
	if (link(tmpl, path) < 0) {
		if (errno == EEXIST)
			hw_err_set(HW_EXIT_FAIL, "refusing to replace existing "
			    "'%s'", path);
		else
			hw_err_sys("cannot create '%s'", path);
	} else
		rc = 0;
	unlink(tmpl);
	free(tmpl);
	if (rc == 0) {
		tmp = xstrdup(path);
		rc = fsync_dir(dirname(tmp));
		free(tmp);
	}
	return rc;
}

int
publish_new_file(const char *path, const void *p, size_t n)
{
	return publish(path, p, n, -1);
}

static int
export_draft(struct session *s)
{
	struct arena a;
	struct jval *d, *p;
	struct buf ack;
	char dir[PATH_MAX], *path;
	int rc;

	if (!realpath(s->dir, dir))
		return hw_err_sys("cannot resolve '%s'", s->dir);
	path = path_join(dir, "audit-export.jsonl");
	arena_init(&a);
	buf_init(&ack);
	d = json_obj(&a);
	p = json_obj(&a);
	json_add(&a, p, "path", json_str(&a, path));
	json_add(&a, p, "event_count", json_int(&a, s->count + 1));
	json_add(&a, p, "scrubbed", json_bool(&a, 1));
	json_add(&a, d, "kind", json_str(&a, "audit.export.recorded"));
	json_add(&a, d, "payload", p);
	rc = session_commit(s, &d, NULL, 1, &ack);
	buf_release(&ack);
	arena_release(&a);
	free(path);
	return rc;
}

/*
 * drop_stale_exports removes the temporary files of exports that died
 * before their rename; the caller holds the lease, so no other export is
 * writing one.
 */
static void
drop_stale_exports(const char *dir)
{
	static const char stem[] = ".audit-export.jsonl-";
	DIR *d = opendir(dir);
	struct dirent *e;
	char *p;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, stem, sizeof stem - 1) ||
		    strlen(e->d_name) != sizeof stem - 1 + 6)
			continue;
		p = path_join(dir, e->d_name);
		unlink(p);
		free(p);
	}
	if (d)
		closedir(d);
}

int
audit_export(struct session *s, struct audit_sum *m, const char *output)
{
	char *target = path_join(s->dir, "audit-export.jsonl");
	char *tmpl = path_join(s->dir, ".audit-export.jsonl-XXXXXX");
	int fd = -1, rc = -1;

	if (output && path_outside_store(output) < 0)
		goto out;
	if (output && access(output, F_OK) == 0) {
		/* refused before anything is recorded; link() decides races */
		hw_err_set(HW_EXIT_FAIL, "refusing to replace existing '%s'",
		    output);
		goto out;
	}
	/*
	 * Record the export, then verify everything including that record;
	 * the head goes first, so that nothing is published after a failed
	 * write.
	 */
	if (export_draft(s) < 0 || session_sync_audit(s) < 0 ||
	    session_head_leave(s) < 0)
		goto out;
	drop_stale_exports(s->dir);
	if ((fd = mkostemp(tmpl, O_CLOEXEC)) < 0) {
		hw_err_sys("cannot create '%s'", tmpl);
		goto out;
	}
	if (fchmod(fd, 0600) < 0 || (fault_point("export-write"),
	    verify_session_to(s, m, fd) < 0) || (fault_point("export-fsync"),
	    fsync(fd) < 0) || (fault_point("export-rename"),
	    rename(tmpl, target) < 0)) {
		if (hw_err_code() != HW_EXIT_DATA)
			hw_err_sys("cannot write '%s'", target);
		unlink(tmpl);
		goto out;
	}
	if (fsync_dir(s->dir) < 0)
		goto out;
	if (output) {
		close(fd);
		if ((fd = open(target, O_RDONLY | O_CLOEXEC)) < 0) {
			hw_err_sys("cannot open '%s'", target);
			goto out;
		}
		if (publish(output, NULL, 0, fd) < 0)
			goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(target);
	free(tmpl);
	return rc;
}
