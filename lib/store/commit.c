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

/*
 * kick_audit starts the writeback of the audit log's dirty pages and does
 * not wait for it: the sync that comes before the lease is released then
 * finds them written.  Its result is not needed: a page it could not write
 * is still dirty, and a writeback error stays on the file for that sync
 * to report (Linux keeps it until every descriptor's sync has seen it).
 */
static void
kick_audit(struct session *s)
{
	fault_point("audit-kick");
	(void)sync_file_range(s->au_fd, 0, 0, SYNC_FILE_RANGE_WRITE);
	s->au_unkicked = 0;
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
	s->au_unkicked = 0;
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

/* tree_event: the draft's event, as a tree; prev NULL at the chain's start */
static struct jval *
tree_event(struct session *s, struct jval *d, int64_t seq, const char *now,
    const char *prev)
{
	return event_build(&s->ca, s->id, seq, json_get_str(d, "kind"),
	    json_get(d, "payload"), now, prev);
}

/*
 * A chain hash not known when a batch is built: it stands in the lines
 * with these digits, which chain() overwrites (same length, so nothing
 * moves and the lines' bounds hold).
 */
static const char placeholder[] = "sha256:"
    "0000000000000000000000000000000000000000000000000000000000000000";
/* a stored audit line's head (its own hash), and the form it is hashed in */
#define AU_HEAD "{\"event_hash\":\"sha256:"
#define AU_NULL "{\"event_hash\":null"
#define AU_SKIP (sizeof AU_HEAD - 1 + 64 + 1)	/* past the hash's '"' */

/*
 * chain hashes c's events from c->chained up to to, in order, from the
 * head in c->head: each event's previous hash goes into its lines, its
 * line's hash into its audit record, and the record's hash into the
 * record's own event_hash and c->head.  The lines are fixed by then; only
 * the digits change.
 */
static int
chain(struct session *s, struct commit_set *c, size_t to)
{
	const struct commit_slot *sl;
	struct sha256 h;
	unsigned char d[32];
	char *au;
	int64_t seq;

	if (c->chained >= to)
		return 0;
	sha256_init(&h);
	for (; c->chained < to; c->chained++) {
		sl = &c->slot[c->chained];
		seq = c->from + (int64_t)c->chained;
		/* a head before every event but the first, none before it */
		if ((c->head[0] != '\0') != (seq > 0)) {
			sha256_release(&h);
			return hw_err_set(HW_EXIT_IO, "session '%s': event "
			    "%lld %s", s->id, (long long)seq, seq > 0 ?
			    "has no chain head to follow" :
			    "cannot follow a chain head");
		}
		if (sl->evprev)
			memcpy(c->ev.p + sl->evprev, c->head + 7, 64);
		if (sl->auprev)
			memcpy(c->au.p + sl->auprev, c->head + 7, 64);
		sha256_update(&h, c->ev.p + sl->ev, sl->evn);
		sha256_final(&h, d);
		memcpy(c->ehash, "sha256:", 7);
		hex_encode(d, 32, c->ehash + 7);
		au = c->au.p + sl->au;
		memcpy(c->au.p + sl->auevent, c->ehash + 7, 64);
		sha256_update(&h, AU_NULL, sizeof AU_NULL - 1);
		sha256_update(&h, au + AU_SKIP, sl->aun - AU_SKIP);
		sha256_final(&h, d);
		memcpy(c->head, "sha256:", 7);
		hex_encode(d, 32, c->head + 7);
		memcpy(au + sizeof AU_HEAD - 1, c->head + 7, 64);
	}
	sha256_release(&h);
	return 0;
}

int
commit_build(struct session *s, struct jval *const *drafts,
    const struct draft_line *lines, size_t n, int64_t from,
    struct commit_set *c)
{
	const size_t shift = AU_SKIP - (sizeof AU_NULL - 1);
	struct commit_slot *sl;
	struct event_at at;
	struct fastev f;
	const char *now = c->at;
	const char *prev;
	struct jval *ev;
	size_t i, mark, pat;
	int64_t seq;

	/* a bound callback is handed each event's hash as it is made */
	if (s->bind && from != s->count)
		return hw_err_set(HW_EXIT_IO, "session '%s': a batch with a "
		    "bound callback is built at its head", s->id);
	arena_clear(&s->ca);
	buf_clear(&c->ev);
	buf_clear(&c->au);
	if (c->cap < n) {
		c->slot = xrealloc(c->slot, n * sizeof *c->slot);
		c->cap = n;
	}
	c->n = n;
	c->from = from;
	c->chained = 0;
	utc_now(c->at);
	/* every event's previous hash but a session's first is a placeholder */
	event_fixed_init(&c->fx, s->id, c->at, placeholder);
	/* commit_chain says where the chain starts; bind's, here */
	if (s->bind)
		memcpy(c->head0, s->head, sizeof c->head0);
	else
		c->head0[0] = '\0';
	memcpy(c->head, c->head0, sizeof c->head);
	c->ehash[0] = '\0';
	for (i = 0; i < n; i++) {
		seq = from + (int64_t)i;
		sl = &c->slot[i];
		/* the previous hash: none, the known head, or a placeholder */
		prev = seq == 0 ? NULL : s->bind ? c->head : placeholder;
		sl->ev = c->ev.len;
		ev = NULL;
		/*
		 * A canonical draft's event is written from its own bytes,
		 * unless a redaction changed its tree or bind wants the tree.
		 */
		if (redact_json(&s->ca, json_get(drafts[i], "payload")) ||
		    s->bind || !lines || !draft_event_line_fixed(&c->ev,
		    lines[i].p, lines[i].n, &c->fx, seq, prev != NULL, &at)) {
			ev = tree_event(s, drafts[i], seq, now, prev);
			json_canon_at(&c->ev, ev, json_get(ev,
			    "previous_event_hash"), &pat);
		} else
			pat = sl->ev + at.off[4];
		sl->evn = c->ev.len - sl->ev;
		sl->evprev = prev == placeholder ? pat + 8 : 0;
		if (over_bound(s, seq, "event", sl->evn))
			return -1;	/* nothing of the batch is written */
		/* its audit record as verify makes it from the line */
		buf_clear(&s->crec);
		if (!ev && (lines[i].ascii ? fastev_check_at(&f, c->ev.p +
		    sl->ev, sl->evn, at.off, at.len, s->id, seq) :
		    fastev_check(&f, c->ev.p + sl->ev, sl->evn, s->id, seq)))
			mark = fastev_record(&f, s->id, placeholder, &s->crec,
			    &pat);
		else {
			if (!ev)
				ev = tree_event(s, drafts[i], seq, now, prev);
			mark = audit_canon(&s->ca, ev, placeholder, &s->crec,
			    &pat);
		}
		buf_addc(&c->ev, '\n');
		/* stored with its own hash where the record has null */
		sl->au = c->au.len;
		BUF_LIT(&c->au, AU_HEAD);
		buf_add(&c->au, placeholder + 7, 64);
		buf_addc(&c->au, '"');
		buf_add(&c->au, s->crec.p + sizeof AU_NULL - 1, s->crec.len -
		    (sizeof AU_NULL - 1));
		sl->aun = c->au.len - sl->au;
		sl->auevent = sl->au + shift + mark;
		sl->auprev = prev == placeholder ? sl->au + shift + pat + 8 : 0;
		buf_addc(&c->au, '\n');
		if (over_bound(s, seq, "audit", sl->aun))
			return -1;
		if (s->bind && (chain(s, c, i + 1) < 0 ||
		    s->bind(s, ev, c->ehash) < 0))
			return -1;	/* nothing of the batch is written */
	}
	return 0;
}

int
commit_chain(struct session *s, struct commit_set *c, const char *head)
{
	if (c->chained == 0) {
		snprintf(c->head0, sizeof c->head0, "%s", head);
		memcpy(c->head, c->head0, sizeof c->head);
	} else if (strcmp(c->head0, head))
		return hw_err_set(HW_EXIT_IO, "session '%s': a batch hashed "
		    "from one chain head cannot follow another", s->id);
	return chain(s, c, c->n);
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
	if (c->chained != c->n || strcmp(c->head0, s->head))
		return hw_err_set(HW_EXIT_IO, "session '%s': a batch whose "
		    "chain does not follow the session's head cannot be "
		    "written", s->id);
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
	if ((s->au_unkicked += c->au.len) >= AUDIT_KICK_BYTES)
		kick_audit(s);
	if (now_ms() - s->au_synced_ms >= AUDIT_SYNC_MS &&
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
	if (commit_build(s, drafts, lines, n, s->count, &s->cset) < 0 ||
	    commit_chain(s, &s->cset, s->head) < 0 ||
	    commit_write(s, &s->cset) < 0)
		return -1;
	for (i = 0; s->bloom && i < n; i++)
		bloom_note(s->bloom, drafts[i]);
	buf_add(ack, s->cset.ev.p, s->cset.ev.len);
	return 0;
}

void
commit_set_release(struct commit_set *c)
{
	event_fixed_release(&c->fx);
	buf_release(&c->ev);
	buf_release(&c->au);
	free(c->slot);
	c->slot = NULL;
	c->cap = 0;
}
