/* logs.c - verifying the paired session logs, on one core or two */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/fastev.h"
#include "store/logs.h"

int
reader_open(struct reader *rd, const char *path, const char *name)
{
	struct stat st;

	memset(rd, 0, sizeof *rd);
	rd->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (rd->fd < 0 && errno == ELOOP)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
		    "symbolic link", path);
	if (rd->fd < 0 && errno != ENOENT)
		return hw_err_sys("cannot open '%s'", path);
	if (rd->fd >= 0 && (fstat(rd->fd, &st) < 0 ? hw_err_sys("cannot "
	    "stat '%s'", path) : owned_check(path, &st)) < 0) {
		close(rd->fd);
		rd->fd = -1;
		return -1;
	}
	jsonl_init(&rd->r, rd->fd, name, JSONL_LINE_MAX);
	if (rd->fd < 0)
		rd->r.eof = 1;
	return 0;
}

int
reader_next(struct reader *rd)
{
	int r = jsonl_next(&rd->r, &rd->line, &rd->len);

	if (r < 0)
		return -1;
	rd->more = r;
	return 0;
}

void
reader_close(struct reader *rd)
{
	jsonl_release(&rd->r);
	if (rd->fd >= 0)
		close(rd->fd);
}

int
seqerr(struct vstate *v, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "sequence %lld: %s", (long long)v->i,
	    msg);
}

/*
 * parse_record parses the reader's line; *fast is set when the line is
 * already canonical and complete (nkeys members, no defaults to fill), so
 * that its bytes are the record's canonical form.
 */
struct jval *
parse_record(struct vstate *v, struct reader *rd, const char *format,
    size_t nkeys, int *fast)
{
	struct jval *j, *parsed;
	int canonical = 0;

	if (rd->len == 0) {
		seqerr(v, "%s: empty line", rd->r.name);
		return NULL;
	}
	if (!(j = jsonl_parse_canon(&rd->r, &v->a, rd->line, rd->len,
	    &canonical))) {
		seqerr(v, "%s", hw_err_msg());
		return NULL;
	}
	if (fast)
		*fast = canonical && j->n == nkeys;
	parsed = j;
	if (!(j = migrate(&v->a, format, j))) {
		seqerr(v, "%s: %s", rd->r.name, hw_err_msg());
		return NULL;
	}
	if (fast && j != parsed)
		*fast = 0;	/* migrated: the bytes are an older form */
	return j;
}

/* follows_head: the event's previous_event_hash is the audit chain head */
static int
follows_head(struct vstate *v)
{
	struct jval *prev = json_get(v->ev, "previous_event_hash");

	if (v->head[0] ? !json_is_str(prev, v->head) : prev->t != J_NULL)
		return seqerr(v, "session event does not follow the audit "
		    "chain head");
	return 0;
}

/*
 * take_line: the reader's line is the canonical event at v->i: it is its
 * canonical form, and hashed as it stands, here or (v->defer_hash) with
 * others of its batch (hash_slots)
 */
static void
take_line(struct vstate *v, struct reader *rd)
{
	buf_clear(&v->evline);
	buf_add(&v->evline, rd->line, rd->len);
	memcpy(v->ehash, "sha256:", 7);
	v->hash_later = v->defer_hash;
	if (v->hash_later) {
		/* a placeholder of the hash's length */
		memset(v->ehash + 7, '0', HW_HASH_LEN - 7);
		v->ehash[HW_HASH_LEN] = '\0';
	} else
		sha256_hex(rd->line, rd->len, v->ehash + 7);
}

/*
 * check_event validates the event at v->i; against the chain head too,
 * unless v->defer_head (the head is then checked by whoever knows it).
 */
int
check_event(struct vstate *v, struct reader *rd)
{
	struct jval *ev;
	char err[200];
	int64_t seq;
	int fast;

	if (!(ev = parse_record(v, rd, "session_event", 8, &fast)))
		return -1;
	if (event_check(&v->a, ev, err, sizeof err) < 0)
		return seqerr(v, "session event is invalid: %s", err);
	json_get_int(ev, "sequence", &seq);
	if (seq != v->i)
		return seqerr(v, "session event has sequence %lld",
		    (long long)seq);
	if (!json_is_str(json_get(ev, "session_id"), v->s->id))
		return seqerr(v, "session event belongs to another session");
	v->ev = ev;
	bloom_note(&v->commands, ev);
	if (!v->defer_head && follows_head(v) < 0)
		return -1;
	if (fast) {
		take_line(v, rd);
		return 0;
	}
	buf_clear(&v->evline);
	v->hash_later = 0;
	json_hash(ev, &v->scratch, v->ehash);
	buf_add(&v->evline, v->scratch.p, v->scratch.len);
	return 0;
}

int
check_audit(struct vstate *v, struct reader *rd)
{
	struct chain_pos at = { v->i, v->head, v->s->id };
	struct jval *au;
	char err[200], h[HW_HASH_LEN + 1];
	const char *line;
	size_t n;
	int fast;

	if (!(au = parse_record(v, rd, "audit_event", 9, &fast)))
		return -1;
	if (audit_chain_check(&v->a, &v->scratch, au, rd->line, rd->len, fast,
	    &at, h, v->afn ? &line : NULL, &n) < 0)
		return seqerr(v, "%s", hw_err_msg());
	if (pair_check(v->ev, v->ehash, au, err, sizeof err) < 0)
		return seqerr(v, "%s", err);
	/* the payload is a function of the event: a re-chained forgery shows */
	if (!json_equal(json_get(au, "payload"), json_get(audit_record(&v->a,
	    v->ev, v->ehash), "payload")))
		return seqerr(v, "audit payload is not the minimized form of "
		    "its event");
	memcpy(v->head, h, sizeof h);
	if (v->afn && v->afn(v->actx, line, n, h, NULL) < 0)
		return -1;
	return 0;
}

void
vstate_init(struct vstate *v, struct session *s)
{
	memset(v, 0, sizeof *v);
	v->s = s;
	arena_init(&v->a);
	buf_init(&v->scratch);
	buf_init(&v->evline);
}

void
vstate_release(struct vstate *v)
{
	arena_release(&v->a);
	buf_release(&v->scratch);
	buf_release(&v->evline);
}

/*
 * walk verifies the pairs both files hold.  Strict: any difference in
 * length or an unterminated tail is an error.  Otherwise (recovery) it stops
 * at the shorter log and leaves the readers positioned there.
 */
/* ends_check: where one log stopped, the other must too, and whole */
static int
ends_check(struct vstate *v, int emore, int amore, int epartial, int apartial)
{
	if (emore || amore)
		return seqerr(v, "event and audit logs have different "
		    "lengths: %s has more records", emore ? "events.jsonl" :
		    "audit.jsonl");
	if (epartial)
		return seqerr(v, "session event records are malformed: "
		    "unterminated last line");
	if (apartial)
		return seqerr(v, "audit log is malformed: unterminated last "
		    "line");
	return 0;
}

int
walk(struct vstate *v, struct reader *er, struct reader *ar, int strict,
    event_fn fn, void *ctx)
{
	for (;;) {
		if (reader_next(er) < 0 || reader_next(ar) < 0)
			return seqerr(v, "%s", hw_err_msg());
		if (!er->more || !ar->more)
			break;
		arena_clear(&v->a);
		if (check_event(v, er) < 0 || check_audit(v, ar) < 0)
			return -1;
		if (fn && fn(ctx, v->evline.p, v->evline.len, v->ev) < 0)
			return -1;
		v->i++;
	}
	return strict ? ends_check(v, er->more, ar->more, er->r.partial,
	    ar->r.partial) : 0;
}

/*
 * Parallel verification: a second thread checks events.jsonl and encodes
 * the audit record each event implies while this one checks audit.jsonl
 * and the pairing.  The event travels parsed, in its slot's arena, with
 * the record's canonical bytes; an audit line that is those bytes with
 * their hash in place needs no parse of its own.  Any other line goes
 * through the full checks, so what is reported is what the sequential
 * walk would: the first failure in sequence order, an event's before its
 * audit record's.  The ring's two counters are published in
 * batches, and each side wakes the other only when that side is waiting.
 */
/*
 * HCHUNK: slots hashed per round of hash_slots, to keep the lanes full;
 * AHEAD: how far ahead of its reading the pairing thread hashes
 */
enum { RING = 512, BATCH = 32, HCHUNK = 128, AHEAD = 64 };

enum slot_kind { SLOT_EVENT, SLOT_END, SLOT_ERROR };

struct slot {
	enum slot_kind kind;
	struct arena a;		/* holds ev */
	struct buf evline;	/* the canonical event */
	struct jval *ev;
	struct buf rec;		/* the audit record ev implies, canonical,
				   with event_hash null */
	size_t mark;		/* where rec holds the event hash's digits */
	char ehash[HW_HASH_LEN + 1];
	char prev[HW_HASH_LEN + 1];	/* its previous_event_hash, "": null */
	char chash[HW_HASH_LEN + 1];	/* rec's hash */
	struct buf line;	/* 0x00, then the audit line rec implies
				   (empty: none): its Merkle leaf's bytes */
	unsigned char leaf[32];	/* their SHA-256 (leaf_ok) */
	int hash_later;		/* ehash and its digits in rec: placeholders */
	int hashed;		/* chash, line and leaf are done */
	int leaf_ok;		/* leaf is line's hash */
	int partial;		/* SLOT_END: events.jsonl had a partial tail */
	char err[1024];		/* SLOT_ERROR: the message */
	int code;
};

struct ring {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot slot[RING];
	uint64_t head, tail;	/* published: produced, consumed */
	int pwait, cwait;	/* the producer / consumer is waiting */
	int stop;		/* the consumer gave up */
	struct vstate ve;
	struct reader *er;
	event_fn early;		/* each event, before its pairing is known */
	void *early_ctx;
	event_fn late;		/* each event once its pair checks out */
	void *late_ctx;
	off_t upto;		/* covered: the events end here, no pairing */
	int covered;
	int treeless;		/* no callback wants an event's tree: fastev */
	int adapt;		/* the event thread hashes when the other lags */
	int leaves;		/* the audit callback wants Merkle leaf hashes */
};

/* publish sets *at to n and wakes the other side if it waits */
static void
publish(struct ring *r, uint64_t *at, uint64_t n, const int *other_waits)
{
	pthread_mutex_lock(&r->mu);
	*at = n;
	if (*other_waits)
		pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/*
 * ring_space: the slot for the producer's ph-th event, NULL on stop.  The
 * lock is taken at the start of each batch, or when the consumer's tail
 * as last seen (*tail) leaves no room: the consumer only frees slots.
 */
static struct slot *
ring_space(struct ring *r, uint64_t ph, uint64_t *tail)
{
	int stop;

	if (ph % BATCH != 0 && ph - *tail < RING)
		return &r->slot[ph % RING];
	pthread_mutex_lock(&r->mu);
	if (ph - r->tail == RING) {
		r->head = ph;	/* publish before waiting */
		if (r->cwait)
			pthread_cond_broadcast(&r->cv);
	}
	while (ph - r->tail == RING && !r->stop) {
		r->pwait = 1;
		pthread_cond_wait(&r->cv, &r->mu);
	}
	r->pwait = 0;
	stop = r->stop;
	*tail = r->tail;
	pthread_mutex_unlock(&r->mu);
	return stop ? NULL : &r->slot[ph % RING];
}

/* ring_avail: how far the consumer at ct may read, publishing ct first */
static uint64_t
ring_avail(struct ring *r, uint64_t ct)
{
	uint64_t h;

	pthread_mutex_lock(&r->mu);
	r->tail = ct;
	if (r->pwait)
		pthread_cond_broadcast(&r->cv);
	while (r->head == ct) {
		r->cwait = 1;
		pthread_cond_wait(&r->cv, &r->mu);
	}
	r->cwait = 0;
	h = r->head;
	pthread_mutex_unlock(&r->mu);
	return h;
}

/*
 * prev_copy: the event's previous_event_hash, "" for null (anything else
 * that is no hash, which check_event lets through, as "?": it follows no
 * head), so that the pairing thread checks it against the chain head
 * without reaching into the other core's tree
 */
static void
prev_copy(char prev[HW_HASH_LEN + 1], const struct jval *ev)
{
	const struct jval *p = json_get(ev, "previous_event_hash");

	if (p && p->t == J_STRING && p->n == HW_HASH_LEN)
		memcpy(prev, p->u.s, HW_HASH_LEN + 1);
	else
		snprintf(prev, HW_HASH_LEN + 1, "%s", p && p->t == J_NULL ?
		    "" : "?");
}

/*
 * hash_slots completes the hashes of the events in slots [from, to), each
 * stage for many slots at once (sha256_many): the event hashes left for
 * later (then written into their records), the chain hash of each record,
 * and the audit line each record implies, with its Merkle leaf hash when
 * the audit callback folds the lines into a tree.
 */
static void
hash_slots(struct ring *r, uint64_t from, uint64_t to)
{
	const size_t nh = sizeof "{\"event_hash\":" - 1;	/* up to null */
	struct sha256_job job[HCHUNK];
	unsigned char d[HCHUNK][32];
	struct slot *s, *at[HCHUNK];
	size_t n, k, m;
	uint64_t i, end;

	for (; from < to; from = end) {
		end = to - from > HCHUNK ? from + HCHUNK : to;
		for (m = 0, i = from; i < end; i++) {
			s = &r->slot[i % RING];
			if (s->kind == SLOT_EVENT && !s->hashed)
				at[m++] = s;
		}
		for (n = k = 0; k < m; k++)
			if (at[k]->hash_later)
				job[n++] = (struct sha256_job){ at[k]->evline.p,
				    at[k]->evline.len, 0, 0, d[k] };
		sha256_many(job, n);
		for (k = 0; k < m; k++) {
			if (!(s = at[k])->hash_later)
				continue;
			hex_encode(d[k], 32, s->ehash + 7);
			if (s->mark + 64 <= s->rec.len)
				memcpy(s->rec.p + s->mark, s->ehash + 7, 64);
			s->hash_later = 0;
		}
		for (k = 0; k < m; k++)
			job[k] = (struct sha256_job){ at[k]->rec.p,
			    at[k]->rec.len, 0, 0, d[k] };
		sha256_many(job, m);
		for (n = k = 0; k < m; k++) {
			s = at[k];
			memcpy(s->chash, "sha256:", 7);
			hex_encode(d[k], 32, s->chash + 7);
			/*
			 * the stored line: rec with its hash in place of null
			 * (rec starts {"event_hash":null; were it to start
			 * otherwise, no stored line would be this line, and
			 * pair_slot would take the full checks)
			 */
			buf_clear(&s->line);
			s->leaf_ok = 0;
			if (s->rec.len >= nh + 4) {
				buf_addc(&s->line, '\0');
				buf_add(&s->line, s->rec.p, nh);
				buf_addc(&s->line, '"');
				buf_add(&s->line, s->chash, HW_HASH_LEN);
				buf_addc(&s->line, '"');
				buf_add(&s->line, s->rec.p + nh + 4,
				    s->rec.len - nh - 4);
				if (r->leaves)
					job[n++] = (struct sha256_job){
					    s->line.p, s->line.len, 0, 0,
					    s->leaf };
				s->leaf_ok = r->leaves;
			}
			s->hashed = 1;
		}
		sha256_many(job, n);
	}
}

#define SWAP(T, x, y) do { T swap_ = (x); (x) = (y); (y) = swap_; } while (0)

static void *
event_thread(void *arg)
{
	struct ring *r = arg;
	struct vstate *v = &r->ve;
	struct fastev f;
	struct slot *s;
	uint64_t ph = 0, tail = 0;

	for (;;) {
		if (!(s = ring_space(r, ph, &tail)))
			break;
		if (r->covered && r->er->r.offset >= r->upto) {
			s->kind = SLOT_END;
			s->partial = 0;
		} else if (reader_next(r->er) < 0) {
			seqerr(v, "%s", hw_err_msg());
			s->kind = SLOT_ERROR;
		} else if (!r->er->more) {
			s->kind = SLOT_END;
			s->partial = r->er->r.partial;
		} else if (r->treeless && fastev_check(&f, r->er->line,
		    r->er->len, v->s->id, v->i)) {
			/* no tree: the line's bytes make the audit record */
			s->kind = SLOT_EVENT;
			take_line(v, r->er);
			buf_clear(&s->rec);
			s->mark = fastev_record(&f, v->s->id, v->ehash,
			    &s->rec, NULL);
			fastev_prev(&f, s->prev);
			if (f.cid.s)
				bloom_note_id(&v->commands, f.cid.s, f.cid.n);
			v->ev = NULL;
		} else {
			arena_clear(&v->a);
			s->kind = check_event(v, r->er) < 0 || (r->early &&
			    r->early(r->early_ctx, v->evline.p, v->evline.len,
			    v->ev) < 0) ? SLOT_ERROR : SLOT_EVENT;
			if (s->kind == SLOT_EVENT) {
				buf_clear(&s->rec);
				s->mark = r->covered ? 0 : audit_canon(&v->a,
				    v->ev, v->ehash, &s->rec, NULL);
				prev_copy(s->prev, v->ev);
			}
		}
		if (s->kind == SLOT_ERROR) {
			snprintf(s->err, sizeof s->err, "%s", hw_err_msg());
			s->code = hw_err_code();
		} else if (s->kind == SLOT_EVENT) {
			/* hand the parsed event over without copying it */
			SWAP(struct arena, v->a, s->a);
			SWAP(struct buf, v->evline, s->evline);
			s->ev = v->ev;
			memcpy(s->ehash, v->ehash, sizeof s->ehash);
			s->hash_later = v->hash_later;
			s->hashed = 0;
		}
		ph++;
		if (s->kind != SLOT_EVENT) {
			publish(r, &r->head, ph, &r->cwait);
			break;
		}
		v->i++;
		if (ph % BATCH != 0)
			continue;
		/*
		 * the hashes go where there is time: to the pairing thread
		 * while it keeps up, else here, a batch at a time while the
		 * ring is three quarters full; the split settles where both
		 * threads are busy (a shorter backlog had this thread hash
		 * more than half the batches, and the other wait for it)
		 */
		if (r->adapt && ph - tail >= RING - RING / 4)
			hash_slots(r, ph - BATCH, ph);
		publish(r, &r->head, ph, &r->cwait);
	}
	sha256_thread_done();
	return NULL;
}

/*
 * event_tree: the tree of an event fastev took, for the full checks of an
 * audit line that is not the record it implies (an older form, or a lie)
 */
static struct jval *
event_tree(struct vstate *v, struct slot *s)
{
	char err[200];
	struct jval *ev = json_parse(&v->a, s->evline.p, s->evline.len, err,
	    sizeof err);

	if (!ev || event_check(&v->a, ev, err, sizeof err) < 0) {
		seqerr(v, "session event is invalid: %s", ev ? err : "not JSON");
		return NULL;
	}
	return ev;
}

/*
 * pair_slot checks the audit line at v->i against the event in s: by
 * comparing bytes when they are the record the event implies, else by the
 * full checks.
 */
static int
pair_slot(struct vstate *v, struct slot *s, struct reader *ar)
{
	v->ev = s->ev;
	memcpy(v->ehash, s->ehash, sizeof v->ehash);
	/* follows_head, on the copy */
	if (v->head[0] ? memcmp(s->prev, v->head, HW_HASH_LEN + 1) : s->prev[0])
		return seqerr(v, "session event does not follow the audit "
		    "chain head");
	if (!s->line.len || ar->len != s->line.len - 1 ||
	    memcmp(ar->line, s->line.p + 1, ar->len))
		return (s->ev || (v->ev = s->ev = event_tree(v, s))) ?
		    check_audit(v, ar) : -1;
	memcpy(v->head, s->chash, sizeof v->head);
	return v->afn ? v->afn(v->actx, ar->line, ar->len, s->chash,
	    s->leaf_ok ? s->leaf : NULL) : 0;
}

/*
 * consume is walk's strict loop over the audit side and the ring; with ar
 * NULL, the covered events go to the late callback as they come, unpaired
 */
static int
consume(struct vstate *v, struct ring *r, struct reader *ar)
{
	uint64_t ct = 0, avail = 0, hashed = 0;
	struct slot *s;

	for (;; ct++) {
		if (ct == avail)
			avail = ring_avail(r, ct);
		else if (ct % BATCH == 0)
			publish(r, &r->tail, ct, &r->pwait);
		/*
		 * the hashes a little ahead at a time, so that the tail moves
		 * on while this thread hashes and the event thread sees a
		 * backlog only when this one lags (event_thread)
		 */
		if (ar && ct == hashed) {
			hashed = avail - ct > AHEAD ? ct + AHEAD : avail;
			hash_slots(r, ct, hashed);
		}
		s = &r->slot[ct % RING];
		if (s->kind == SLOT_ERROR) {
			hw_err_set(s->code, "%s", s->err);
			return -1;
		}
		if (!ar && s->kind == SLOT_END)
			return 0;
		if (ar && reader_next(ar) < 0)
			return seqerr(v, "%s", hw_err_msg());
		if (ar && (s->kind == SLOT_END || !ar->more))
			return ends_check(v, s->kind != SLOT_END, ar->more,
			    s->partial, ar->r.partial);
		arena_clear(&v->a);
		if ((ar && pair_slot(v, s, ar) < 0) || (r->late &&
		    r->late(r->late_ctx, s->evline.p, s->evline.len, s->ev) < 0))
			return -1;
		v->i++;
	}
}

/*
 * walk_parallel: early gets each event on the event thread as soon as it
 * checks out, late on this thread once its pair does too.  With ar NULL,
 * the covered events up to byte upto of er go to late, neither hashed
 * nor paired (covered, below).  -2 when no thread could be started.
 */
static int
walk_parallel(struct vstate *v, struct reader *er, struct reader *ar,
    event_fn early, event_fn late, void *ctx, off_t upto)
{
	struct ring *r = xcalloc(1, sizeof *r);
	pthread_t t;
	char warm[HW_HASH_LEN + 1];
	int i, rc;

	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	vstate_init(&r->ve, v->s);
	r->ve.i = v->i;		/* after a verified head, not from 0 */
	r->ve.defer_head = 1;
	/*
	 * Hashing is most of the work (an event line once, its audit line
	 * for the chain, and for an audit callback twice more: the export
	 * digest and the Merkle leaf), and is done many lines at a time
	 * (hash_slots).  Which thread has time for it depends on the events
	 * (messages are checked without a tree, other kinds with one) and on
	 * the callbacks, so no fixed split fits: with no early callback
	 * (which may want the hash at once) the event thread leaves the
	 * hashes of a batch to this thread while it keeps up, and hashes
	 * them itself when this thread lags (the ring three quarters
	 * full).
	 */
	r->ve.defer_hash = !early;
	r->adapt = !early && ar;
	r->leaves = v->afn != NULL;
	r->er = er;
	r->early = early;
	r->early_ctx = ctx;
	r->late = late;
	r->late_ctx = ctx;
	r->covered = ar == NULL;
	r->upto = upto;
	if (r->covered)
		r->ve.defer_hash = 1;	/* a placeholder: not hashed at all */
	r->treeless = !early && !late && !r->covered;
	for (i = 0; i < RING; i++) {
		arena_init(&r->slot[i].a);
		buf_init(&r->slot[i].evline);
		buf_init(&r->slot[i].rec);
		buf_init(&r->slot[i].line);
	}
	json_hash(json_new(&v->a, J_NULL), &v->scratch, warm);
	if (pthread_create(&t, NULL, event_thread, r) != 0) {
		rc = -2;	/* the caller walks on one thread */
		goto out;
	}
	rc = consume(v, r, ar);
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(t, NULL);
	bloom_or(&v->commands, &r->ve.commands);
out:
	for (i = 0; i < RING; i++) {
		arena_release(&r->slot[i].a);
		buf_release(&r->slot[i].evline);
		buf_release(&r->slot[i].rec);
		buf_release(&r->slot[i].line);
	}
	vstate_release(&r->ve);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	free(r);
	return rc;
}

/* what a verification is asked for */
struct vreq {
	event_fn fn;
	audit_fn afn;
	void *ctx;
	int early;		/* fn may run on the event thread */
	int full;		/* from the first record, whatever the head */
	const struct logpos *from;	/* fn only after it, if it holds */
	int *used;		/* ... and whether it did */
	struct logpos *end;	/* where the verification ended */
};

/* after: fn with the events from sequence from on only */
struct after {
	event_fn fn;
	void *ctx;
	int64_t from;
};

static int
after_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct after *f = ctx;
	int64_t seq;

	if (json_get_int(ev, "sequence", &seq) == 0 && seq < f->from)
		return 0;
	return f->fn(f->ctx, line, n, ev);
}

/* reader_seek puts rd at off, the first byte of its line lineno + 1 */
static int
reader_seek(struct reader *rd, off_t off, int64_t lineno)
{
	const char *name = rd->r.name;

	jsonl_release(&rd->r);
	jsonl_init(&rd->r, rd->fd, name, JSONL_LINE_MAX);
	if (rd->fd < 0 || lseek(rd->fd, off, SEEK_SET) < 0)
		return hw_err_sys("cannot seek '%s'", name);
	rd->r.offset = off;
	rd->r.lineno = (long)lineno;
	return 0;
}

/*
 * covered hands fn the events from byte off (sequence v->i) up to upto,
 * which the verified head covers: each is checked as an event (shape,
 * sequence, session) but neither hashed nor paired again; parsed on a
 * second thread while fn runs on this one
 */
static int
covered(struct vstate *v, struct reader *er, off_t off, off_t upto,
    event_fn fn, void *ctx)
{
	int k;

	if (reader_seek(er, off, v->i) < 0)
		return -1;
	if ((k = walk_parallel(v, er, NULL, NULL, fn, ctx, upto)) == -2) {
		v->defer_head = v->defer_hash = 1;
		for (k = 0; k == 0 && er->r.offset < upto; v->i++) {
			if (reader_next(er) < 0)
				return seqerr(v, "%s", hw_err_msg());
			if (!er->more)
				break;
			arena_clear(&v->a);
			if (check_event(v, er) < 0 || fn(ctx, v->evline.p,
			    v->evline.len, v->ev) < 0)
				k = -1;
		}
		v->defer_head = v->defer_hash = 0;
	}
	if (k < 0)
		return -1;
	if (er->r.offset != upto)
		return seqerr(v, "events.jsonl changed under its verified "
		    "head");
	return 0;
}

/* walk_fn: the walk with fn on either thread, or on one */
static int
walk_fn(struct vstate *v, struct reader *er, struct reader *ar, int early,
    event_fn fn, void *ctx)
{
	int k = walk_parallel(v, er, ar, early ? fn : NULL, early ? NULL : fn,
	    ctx, 0);

	return k == -2 ? walk(v, er, ar, 1, fn, ctx) : k;
}

/* resume puts the readers and v where the head h ends */
static int
resume(struct vstate *v, struct reader *er, struct reader *ar,
    const struct logpos *h)
{
	if (reader_seek(er, h->ev.off, h->count) < 0 ||
	    reader_seek(ar, h->au.off, h->count) < 0)
		return -1;
	v->i = h->count;
	memcpy(v->head, h->head, sizeof v->head);
	memcpy(v->ehash, h->ehash, sizeof v->ehash);
	return 0;
}

/*
 * finish records where v ended, for the caller and for the session: what
 * a lease holder leaves behind (session_head_leave) starts from it
 */
static void
finish(struct vstate *v, struct reader *er, struct reader *ar,
    const struct logpos *h, const struct vreq *q)
{
	struct logpos end;

	memset(&end, 0, sizeof end);
	if (q->end && v->i > 0 && logpos_take(&end, v, er->fd, er->r.offset,
	    ar->fd, ar->r.offset) < 0)
		memset(&end, 0, sizeof end);
	end.commands = v->commands;
	if (h)
		bloom_or(&end.commands, &h->commands);
	if (!v->s->bloom)
		v->s->bloom = xcalloc(1, sizeof *v->s->bloom);
	*v->s->bloom = end.commands;
	memcpy(v->s->ehash, v->ehash, sizeof v->ehash);
	if (q->end)
		*q->end = end;
}

/* covered_and_tail: the walk after a head h that holds */
static int
covered_and_tail(struct vstate *v, struct reader *er, struct reader *ar,
    const struct logpos *h, const struct vreq *q, int64_t from,
    event_fn fn, void *ctx)
{
	off_t off = from > 0 ? q->from->ev.off : 0;

	v->i = from;
	if (fn && from < h->count && covered(v, er, off, h->ev.off, fn,
	    ctx) < 0)
		return -1;
	if (resume(v, er, ar, h) < 0)
		return -1;
	return walk_fn(v, er, ar, q->early, fn, ctx);
}

static int
verify_with(struct session *s, const struct vreq *q)
{
	struct reader er, ar;
	struct vstate v;
	struct logpos h;
	struct after f = { q->fn, q->ctx, 0 };
	event_fn fn = q->fn;
	void *ctx = q->ctx;
	int lock, have, k, rc = -1;

	if ((lock = lock_open(s->snapshot_lock, 0)) < 0)
		return -1;
	vstate_init(&v, s);
	v.afn = q->afn;
	v.actx = q->ctx;
	if (reader_open(&er, s->events, "events.jsonl") < 0)
		goto out0;
	if (reader_open(&ar, s->audit, "audit.jsonl") < 0)
		goto out1;
	have = !q->full && head_load(s, &h) == 0 && logpos_holds(&h, er.fd,
	    ar.fd);
	if (q->used && (*q->used = q->from && q->from->count > 0 &&
	    logpos_holds(q->from, er.fd, ar.fd)))
		f.from = q->from->count;
	if (fn && f.from > 0) {
		fn = after_fn;
		ctx = &f;
	}
	/* an event callback wants events in order as they verify: one thread */
	if (have)
		k = covered_and_tail(&v, &er, &ar, &h, q, f.from, fn, ctx);
	else
		k = walk_fn(&v, &er, &ar, q->early, fn, ctx);
	if (k == 0) {
		s->count = v.i;
		memcpy(s->head, v.head, sizeof v.head);
		finish(&v, &er, &ar, have ? &h : NULL, q);
		rc = 0;
	}
	reader_close(&ar);
out1:
	reader_close(&er);
out0:
	vstate_release(&v);
	lock_close(lock);
	return rc;
}

int
logs_verify(struct session *s, event_fn fn, void *ctx)
{
	struct vreq q = { fn, NULL, ctx, 0, 0, NULL, NULL, NULL };

	return verify_with(s, &q);
}

int
logs_verify_full(struct session *s, event_fn fn, void *ctx)
{
	struct vreq q = { fn, NULL, ctx, 0, 1, NULL, NULL, NULL };

	return verify_with(s, &q);
}

int
logs_verify_early(struct session *s, event_fn fn, void *ctx)
{
	struct vreq q = { fn, NULL, ctx, 1, 0, NULL, NULL, NULL };

	return verify_with(s, &q);
}

int
logs_verify_since(struct session *s, const struct logpos *from, int *used,
    event_fn fn, void *ctx, struct logpos *end)
{
	struct vreq q = { fn, NULL, ctx, 1, 0, from, used, end };

	return verify_with(s, &q);
}

int
logs_verify_audit(struct session *s, audit_fn fn, void *ctx)
{
	struct vreq q = { NULL, fn, ctx, 0, 1, NULL, NULL, NULL };

	return verify_with(s, &q);
}
