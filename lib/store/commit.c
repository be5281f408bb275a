/* commit.c - a commit: the drafts written to both logs, synced, or none */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/logs.h"
#include "store/fastev.h"

static int
append_lines(int fd, const struct buf *b, const char *path, const char *what)
{
	char point[32];

	snprintf(point, sizeof point, "%s-append", what);
	if (fault_point(point)) {
		write_all(fd, b->p, b->len / 2, path);
		fault_kill();
	}
	return write_all(fd, b->p, b->len, path);
}

static int
sync_log(int fd, const char *path, const char *what)
{
	char point[32];

	snprintf(point, sizeof point, "%s-sync", what);
	fault_point(point);
	if (fdatasync(fd) < 0)
		return hw_err_sys("cannot sync '%s' (data may be lost; "
		    "stopping)", path);
	return 0;
}

int
session_sync_audit(struct session *s)
{
	if (s->au_unsynced == 0) {
		s->au_synced_ms = now_ms();
		return 0;
	}
	if (sync_log(s->au_fd, s->audit, "audit") < 0) {
		s->broken = 1;
		return -1;
	}
	s->au_unsynced = 0;
	s->au_synced_ms = now_ms();
	return 0;
}

/*
 * roll_back cuts both logs back to where a failed commit found them, so a
 * failed write or sync leaves nothing unacknowledged behind (a disk that
 * filled up mid-line leaves no torn line for the next reader).  Best
 * effort, keeping the first error: what it cannot cut, the next owner's
 * recovery does.
 */
static void
roll_back(struct session *s, off_t evlen, off_t aulen)
{
	if (ftruncate(s->ev_fd, evlen) == 0)
		(void)fdatasync(s->ev_fd);
	if (ftruncate(s->au_fd, aulen) == 0)
		(void)fdatasync(s->au_fd);
}

/*
 * over_bound: the line of the batch's i-th record would be longer than
 * the readers take (jsonl.c), so the whole batch is refused, code 65
 */
static int
over_bound(struct session *s, int64_t seq, const char *what, size_t len)
{
	if (len <= JSONL_LINE_MAX)
		return 0;
	hw_err_set(HW_EXIT_DATA, "refusing event %lld of session '%s': its "
	    "%s line would be %zu bytes, longer than the %u bytes readers "
	    "take", (long long)seq, s->id, what, len, JSONL_LINE_MAX);
	return 1;
}

/* tree_event: the draft's event, as a tree; head "" at the chain's start */
static struct jval *
tree_event(struct session *s, struct jval *d, int64_t seq, const char *now,
    const char *head)
{
	return event_build(&s->ca, s->id, seq, json_get_str(d, "kind"),
	    json_get(d, "payload"), now, head[0] ? head : NULL);
}

int
commit_build(struct session *s, struct jval *const *drafts,
    const struct draft_line *lines, size_t n, int64_t from,
    const char *head0, struct commit_set *c)
{
	struct fastev f;
	char now[21];
	struct jval *ev;
	size_t i, at;
	int64_t seq;

	arena_clear(&s->ca);
	buf_clear(&c->ev);
	buf_clear(&c->au);
	c->n = n;
	c->from = from;
	utc_now(now);
	memcpy(c->head, head0, sizeof c->head);
	c->ehash[0] = '\0';
	for (i = 0; i < n; i++) {
		seq = from + (int64_t)i;
		buf_clear(&s->cscratch);
		ev = NULL;
		/*
		 * A canonical draft's event is written from its own bytes,
		 * unless a redaction changed its tree or bind wants the tree.
		 */
		if (redact_json(&s->ca, json_get(drafts[i], "payload")) ||
		    s->bind || !lines || !draft_event_line(&s->cscratch,
		    lines[i].p, lines[i].n, s->id, seq, now, c->head[0] ?
		    c->head : NULL)) {
			ev = tree_event(s, drafts[i], seq, now, c->head);
			json_canon(&s->cscratch, ev);
		}
		memcpy(c->ehash, "sha256:", 7);
		sha256_hex(s->cscratch.p, s->cscratch.len, c->ehash + 7);
		if (over_bound(s, seq, "event", s->cscratch.len))
			return -1;	/* nothing of the batch is written */
		buf_add(&c->ev, s->cscratch.p, s->cscratch.len);
		buf_addc(&c->ev, '\n');
		at = c->au.len;
		/* its audit record as verify makes it from the line */
		if (!ev && (lines[i].ascii ? fastev_check_built :
		    fastev_check)(&f, s->cscratch.p, s->cscratch.len, s->id,
		    seq)) {
			buf_clear(&s->crec);
			fastev_record(&f, s->id, c->ehash, &s->crec);
			audit_line(&s->crec, &c->au, c->head);
		} else {
			if (!ev)
				ev = tree_event(s, drafts[i], seq, now,
				    c->head);
			audit_encode(&s->ca, ev, c->ehash, &s->cscratch,
			    &c->au, c->head);
		}
		if (over_bound(s, seq, "audit", c->au.len - at - 1))
			return -1;
		if (s->bind && s->bind(s, ev, c->ehash) < 0)
			return -1;	/* nothing of the batch is written */
	}
	return 0;
}

int
commit_write(struct session *s, const struct commit_set *c)
{
	struct stat est, ast;
	int lock, rc = -1;

	if (s->broken || s->lease_fd < 0)
		return hw_err_set(HW_EXIT_IO, "session '%s' cannot take more "
		    "commits after a failed write", s->id);
	if (c->from != s->count)
		return hw_err_set(HW_EXIT_IO, "session '%s': a batch built to "
		    "follow event %lld cannot follow event %lld", s->id,
		    (long long)c->from - 1, (long long)s->count - 1);
	if ((lock = lock_open(s->snapshot_lock, 0)) < 0)
		return -1;
	/*
	 * The event is synced before its audit record is written, so an
	 * audit record never outlives its event; the audit sync can wait.
	 */
	if (fstat(s->ev_fd, &est) < 0 || fstat(s->au_fd, &ast) < 0) {
		hw_err_sys("cannot stat the logs of session '%s'", s->id);
		s->broken = 1;
		goto out;
	}
	if (append_lines(s->ev_fd, &c->ev, s->events, "events") < 0 ||
	    sync_log(s->ev_fd, s->events, "events") < 0 ||
	    append_lines(s->au_fd, &c->au, s->audit, "audit") < 0) {
		s->broken = 1;
		roll_back(s, est.st_size, ast.st_size);
		goto out;
	}
	s->au_unsynced += (int64_t)c->n;
	if ((s->au_unsynced >= AUDIT_SYNC_MAX ||
	    now_ms() - s->au_synced_ms >= AUDIT_SYNC_MS) &&
	    session_sync_audit(s) < 0)
		goto out;
	s->count += (int64_t)c->n;
	memcpy(s->head, c->head, sizeof c->head);
	if (c->n > 0)
		memcpy(s->ehash, c->ehash, sizeof c->ehash);
	s->committed = 1;
	rc = 0;
out:
	lock_close(lock);
	return rc;
}

int
session_commit(struct session *s, struct jval *const *drafts,
    const struct draft_line *lines, size_t n, struct buf *ack)
{
	size_t i;

	if (s->broken || s->lease_fd < 0)
		return hw_err_set(HW_EXIT_IO, "session '%s' cannot take more "
		    "commits after a failed write", s->id);
	if (commit_build(s, drafts, lines, n, s->count, s->head,
	    &s->cset) < 0 || commit_write(s, &s->cset) < 0)
		return -1;
	for (i = 0; s->bloom && i < n; i++)
		bloom_note(s->bloom, drafts[i]);
	buf_add(ack, s->cset.ev.p, s->cset.ev.len);
	return 0;
}

void
commit_set_release(struct commit_set *c)
{
	buf_release(&c->ev);
	buf_release(&c->au);
}
