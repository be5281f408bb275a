/* recover.c - bringing the paired logs back to their last whole commit */
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

static int
truncate_to(const char *path, off_t len)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return hw_err_sys("cannot open '%s'", path);
	fault_point("recover-truncate");
	if (ftruncate(fd, len) < 0 || fsync(fd) < 0)
		rc = hw_err_sys("cannot truncate '%s'", path);
	close(fd);
	return rc;
}

static int
append_sync(const char *path, const char *p, size_t n, const char *point)
{
	int created, fd, rc = 0;

	if (n == 0)
		return 0;
	if ((fd = open_append(path, &created)) < 0)
		return -1;
	if (fault_point(point)) {
		write_all(fd, p, n / 2, path);
		fault_kill();
	}
	if (write_all(fd, p, n, path) < 0)
		rc = -1;
	else if (fault_point("recover-sync"), fdatasync(fd) < 0)
		rc = hw_err_sys("cannot sync '%s'", path);
	close(fd);
	return rc;
}

static int
pending_line(struct buf *b, const struct jval *rec)
{
	buf_clear(b);
	json_canon(b, rec);
	buf_addc(b, '\n');
	return 0;
}

int
journal_check(struct arena *a, struct jval *j, const char *sid,
    struct jval **ev, struct jval **au, char ehash[HW_HASH_LEN + 1])
{
	static const char *const keys[] = { "schema_version", "session_event",
		"audit_event", NULL };
	struct jval *e, *r;
	struct buf scratch;
	char err[200], h[HW_HASH_LEN + 1];
	int rc = -1;

	buf_init(&scratch);
	if (!(j = migrate(a, "session_commit", j)))
		goto out;
	if (json_keys_exact(j, keys) < 0 ||
	    !(e = migrate(a, "session_event", json_get(j, "session_event"))) ||
	    !(r = migrate(a, "audit_event", json_get(j, "audit_event"))) ||
	    event_check(a, e, err, sizeof err) < 0 ||
	    audit_check(a, r, err, sizeof err) < 0) {
		hw_err_set(HW_EXIT_DATA, "pending commit journal is malformed");
		goto out;
	}
	json_hash(e, &scratch, ehash);
	audit_hash(a, r, &scratch, h);
	if (!json_is_str(json_get(e, "session_id"), sid) ||
	    !json_is_str(json_get(r, "event_hash"), h) ||
	    pair_check(e, ehash, r, err, sizeof err) < 0) {
		hw_err_set(HW_EXIT_DATA, "pending commit journal does not hold "
		    "a corresponding pair for this session");
		goto out;
	}
	*ev = e;
	*au = r;
	rc = 0;
out:
	buf_release(&scratch);
	return rc;
}

/* journal_load reads and checks a reference .pending-commit.json pair. */
static int
journal_load(struct session *s, struct arena *a, struct jval **ev,
    struct jval **au, char ehash[HW_HASH_LEN + 1])
{
	struct jval *j = read_json_file(s->journal, JSONL_LINE_MAX, a);

	return j ? journal_check(a, j, s->id, ev, au, ehash) : -1;
}

/* tail_is checks that the reader's current line is the pending record. */
static int
tail_is(struct vstate *v, struct reader *rd, const char *format,
    const struct jval *want)
{
	struct jval *got = parse_record(v, rd, format, 0, NULL);
	char err[200];

	if (!got)
		return -1;
	if ((strcmp(format, "session_event") == 0 ?
	    event_check(&v->a, got, err, sizeof err) :
	    audit_check(&v->a, got, err, sizeof err)) < 0 ||
	    !json_equal(got, want))
		return seqerr(v, "%s does not end with the pending record",
		    rd->r.name);
	if (reader_next(rd) < 0)
		return seqerr(v, "%s", hw_err_msg());
	if (rd->more)
		return seqerr(v, "%s is longer than the pending commit allows",
		    rd->r.name);
	return 0;
}

/*
 * ref_journal_recover completes a paired commit that the reference
 * implementation journaled (reference rules): each log may hold the pending
 * record or not; anything else fails closed and changes nothing.
 */
static int
ref_journal_recover(struct session *s)
{
	struct arena a;
	struct vstate v;
	struct reader er, ar;
	struct jval *pe, *pa;
	struct buf line;
	char ehash[HW_HASH_LEN + 1];
	int64_t seq;
	int ne, na, rc = -1;

	if (access(s->journal, F_OK) < 0 && errno == ENOENT)
		return 0;
	arena_init(&a);
	buf_init(&line);
	vstate_init(&v, s);
	if (journal_load(s, &a, &pe, &pa, ehash) < 0)
		goto out0;
	json_get_int(pe, "sequence", &seq);
	if (reader_open(&er, s->events, "events.jsonl") < 0)
		goto out0;
	if (reader_open(&ar, s->audit, "audit.jsonl") < 0)
		goto out1;
	if (walk(&v, &er, &ar, 0, NULL, NULL) < 0)
		goto out2;
	ne = na = (int)(v.i > seq);
	if (v.i != seq && v.i != seq + 1) {
		v.i = seq;
		seqerr(&v, "pending commit is at the wrong position");
		goto out2;
	}
	v.i = seq;	/* errors below name the pending sequence */
	if (ne) {
		/* both complete: the verified pair must be the pending one */
		if (er.more || ar.more || strcmp(v.ehash, ehash) ||
		    !json_is_str(json_get(pa, "event_hash"), v.head)) {
			seqerr(&v, "logs do not end with the pending pair");
			goto out2;
		}
	} else {
		struct jval *prev = json_get(pe, "previous_event_hash");

		if (v.head[0] ? !json_is_str(prev, v.head) : prev->t !=
		    J_NULL) {
			seqerr(&v, "pending commit does not follow the chain");
			goto out2;
		}
		if (er.more && (ne = 1, tail_is(&v, &er, "session_event",
		    pe) < 0))
			goto out2;
		if (ar.more && (na = 1, tail_is(&v, &ar, "audit_event",
		    pa) < 0))
			goto out2;
	}
	if ((er.r.partial && truncate_to(s->events, er.r.offset) < 0) ||
	    (ar.r.partial && truncate_to(s->audit, ar.r.offset) < 0))
		goto out2;
	if (!na && (pending_line(&line, pa), append_sync(s->audit, line.p,
	    line.len, "recover-append") < 0))
		goto out2;
	if (!ne && (pending_line(&line, pe), append_sync(s->events, line.p,
	    line.len, "recover-append") < 0))
		goto out2;
	rc = durable_unlink(s->journal);
out2:
	reader_close(&ar);
out1:
	reader_close(&er);
out0:
	vstate_release(&v);
	buf_release(&line);
	arena_release(&a);
	return rc;
}

/*
 * rebuild makes the audit records of the events past the audit log's end
 * (events are written and synced first, so these are commits a crash cut
 * short).  Fails closed on anything else.
 */
static int
rebuild(struct vstate *v, struct reader *er, struct reader *ar,
    struct buf *missing)
{
	char h[HW_HASH_LEN + 1];

	if (ar->more)
		return seqerr(v, "audit record has no session event: cannot "
		    "recover");
	if (ar->r.partial && !er->more)
		return seqerr(v, "unterminated audit record has no session "
		    "event: cannot recover");
	while (er->more) {
		arena_clear(&v->a);
		if (check_event(v, er) < 0)
			return -1;
		audit_encode(&v->a, v->ev, v->ehash, &v->scratch, missing, h);
		memcpy(v->head, h, sizeof h);
		v->i++;
		if (reader_next(er) < 0)
			return seqerr(v, "%s", hw_err_msg());
	}
	return 0;
}

int
logs_recover(struct session *s)
{
	struct reader er, ar;
	struct vstate v;
	struct buf missing;
	int lock, rc = -1;

	if ((lock = lock_open(s->snapshot_lock, 0)) < 0)
		return -1;
	vstate_init(&v, s);
	buf_init(&missing);
	if (ref_journal_recover(s) < 0)
		goto out0;
	if (reader_open(&er, s->events, "events.jsonl") < 0)
		goto out0;
	if (reader_open(&ar, s->audit, "audit.jsonl") < 0)
		goto out1;
	if (walk(&v, &er, &ar, 0, NULL, NULL) < 0 ||
	    rebuild(&v, &er, &ar, &missing) < 0)
		goto out2;
	/* everything checked; now, and only now, change the files */
	if ((er.r.partial && truncate_to(s->events, er.r.offset) < 0) ||
	    (ar.r.partial && truncate_to(s->audit, ar.r.offset) < 0) ||
	    append_sync(s->audit, missing.p, missing.len,
	    "recover-append") < 0)
		goto out2;
	s->count = v.i;
	memcpy(s->head, v.head, sizeof v.head);
	rc = 0;
out2:
	if (rc < 0 && hw_err_code() == HW_EXIT_DATA)
		hw_err_set(HW_EXIT_DATA, "recovery refused: %s", hw_err_msg());
	reader_close(&ar);
out1:
	reader_close(&er);
out0:
	buf_release(&missing);
	vstate_release(&v);
	lock_close(lock);
	return rc;
}
