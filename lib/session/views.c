/* views.c - what a session shows: its projection, once or as it grows */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session/session.h"

int
session_settle(struct session *s)
{
	/* a writer that died leaves work: complete it first */
	if (access(s->writer_json, F_OK) != 0 && access(s->journal, F_OK) != 0)
		return 0;
	if (session_lease(s) == 0)
		return session_unlease(s);
	/* a live writer's evidence is its own business, a journal is not */
	if (hw_err_code() == HW_EXIT_BUSY && access(s->journal, F_OK) != 0)
		return 0;
	return -1;
}

struct upto {
	struct proj *p;
	int64_t until;
};

static int
reduce_event(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct upto *u = ctx;
	int64_t seq;

	(void)line, (void)n;
	if (u->until < 0 || (json_get_int(ev, "sequence", &seq) == 0 &&
	    seq <= u->until))
		proj_apply(u->p, ev);
	return 0;
}

int
session_project(struct session *s, int exists, int64_t until, struct buf *out)
{
	struct upto u = { NULL, until };
	int rc = 0;

	/* nothing is printed unless the whole log verifies */
	if (exists && session_settle(s) < 0)
		rc = -1;
	else if (exists && until < 0)
		rc = session_reduce(s, &u.p);
	else if (exists && (u.p = proj_new(s->id)) && logs_verify_early(s,
	    reduce_event, &u) < 0)
		rc = -1;
	if (!u.p)
		u.p = proj_new(s->id);
	if (rc == 0)
		proj_emit(u.p, out);
	proj_free(u.p);
	return rc;
}

/* stream_event validates one line of an event stream as the next event */
static int
stream_event(struct jsonl *r, struct arena *a, char *line, size_t n,
    const char *sid, int64_t want, struct jval **out)
{
	struct jval *ev = NULL;
	char err[200];
	int64_t seq;

	if (!(ev = jsonl_parse(r, a, line, n)))
		return -1;
	if (!(ev = migrate(a, "session_event", ev)))
		return hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", r->name,
		    r->lineno, hw_err_msg());
	if (event_check(a, ev, err, sizeof err) < 0)
		return hw_err_set(HW_EXIT_DATA, "%s:%ld: session event is "
		    "invalid: %s", r->name, r->lineno, err);
	if (!json_is_str(json_get(ev, "session_id"), sid))
		return hw_err_set(HW_EXIT_DATA, "%s:%ld: session event "
		    "belongs to another session", r->name, r->lineno);
	json_get_int(ev, "sequence", &seq);
	if (seq != want)
		return hw_err_set(HW_EXIT_DATA, "%s:%ld: session event has "
		    "sequence %lld, want %lld", r->name, r->lineno,
		    (long long)seq, (long long)want);
	*out = ev;
	return 0;
}

/*
 * The stream is read, parsed and validated on a second thread while this
 * one reduces: batches of events travel parsed, in their slot's arena.
 */
enum { SLOTS = 4, PER_SLOT = 256 };

struct batch {
	struct arena a;
	struct jval *ev[PER_SLOT];
	size_t n;
	int last;		/* no batch follows: the end or an error */
	int code;		/* != 0: the error after these events */
	char msg[600];
};

struct feed {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct batch slot[SLOTS];
	uint64_t head, tail;	/* filled, consumed */
	int stop;
	struct jsonl r;
	const char *sid, *name;
};

/* fill reads the next batch of events into b */
static void
fill(struct feed *f, struct batch *b, int64_t *seq)
{
	struct jval *ev = NULL;
	char *line;
	size_t n;
	int k = 0;

	arena_clear(&b->a);
	b->n = 0;
	b->code = 0;
	while (b->n < PER_SLOT && (k = jsonl_next(&f->r, &line, &n)) == 1) {
		if (stream_event(&f->r, &b->a, line, n, f->sid, *seq, &ev) < 0) {
			k = -1;
			break;
		}
		b->ev[b->n++] = ev;
		++*seq;
	}
	if (k == 0 && f->r.partial)
		k = hw_err_set(HW_EXIT_DATA, "%s:%ld: unterminated last line",
		    f->name, f->r.lineno + 1);
	b->last = k <= 0;
	if (k < 0) {
		b->code = hw_err_code();
		snprintf(b->msg, sizeof b->msg, "%s", hw_err_msg());
	}
}

static void *
feeder(void *arg)
{
	struct feed *f = arg;
	struct batch *b;
	int64_t seq = 0;
	int last = 0;

	while (!last) {
		pthread_mutex_lock(&f->mu);
		while (f->head - f->tail == SLOTS && !f->stop)
			pthread_cond_wait(&f->cv, &f->mu);
		if (f->stop) {
			pthread_mutex_unlock(&f->mu);
			break;
		}
		pthread_mutex_unlock(&f->mu);
		b = &f->slot[f->head % SLOTS];
		fill(f, b, &seq);
		last = b->last;
		pthread_mutex_lock(&f->mu);
		f->head++;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
	}
	return NULL;
}

/* drain applies every batch; -1 with the stream's first error */
static int
drain(struct feed *f, struct proj *p, int64_t until)
{
	struct batch *b;
	int64_t seq = 0;
	size_t i;
	int last = 0, rc = 0;

	while (!last) {
		pthread_mutex_lock(&f->mu);
		while (f->head == f->tail)
			pthread_cond_wait(&f->cv, &f->mu);
		pthread_mutex_unlock(&f->mu);
		b = &f->slot[f->tail % SLOTS];
		for (i = 0; i < b->n; i++, seq++)
			if (until < 0 || seq <= until)
				proj_apply(p, b->ev[i]);
		last = b->last;
		if (b->code)
			rc = hw_err_set(b->code, "%s", b->msg);
		pthread_mutex_lock(&f->mu);
		f->tail++;
		pthread_cond_broadcast(&f->cv);
		pthread_mutex_unlock(&f->mu);
	}
	return rc;
}

int
session_project_stream(const char *sid, int fd, const char *name,
    int64_t until, struct buf *out)
{
	struct feed *f = xcalloc(1, sizeof *f);
	struct proj *p = proj_new(sid);
	pthread_t t;
	int i, rc = -1;

	pthread_mutex_init(&f->mu, NULL);
	pthread_cond_init(&f->cv, NULL);
	for (i = 0; i < SLOTS; i++)
		arena_init(&f->slot[i].a);
	jsonl_init(&f->r, fd, name, JSONL_LINE_MAX);
	f->sid = sid;
	f->name = name;
	if (pthread_create(&t, NULL, feeder, f) != 0) {
		hw_err_set(HW_EXIT_IO, "cannot start a thread");
		goto out;
	}
	rc = drain(f, p, until);
	pthread_join(t, NULL);
	if (rc == 0)
		proj_emit(p, out);
out:
	jsonl_release(&f->r);
	for (i = 0; i < SLOTS; i++)
		arena_release(&f->slot[i].a);
	pthread_cond_destroy(&f->cv);
	pthread_mutex_destroy(&f->mu);
	proj_free(p);
	free(f);
	return rc;
}

struct status {
	int64_t count;
	const char *status;
};

static int
status_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct status *st = ctx;
	const struct jval *p = json_get(ev, "payload");
	const char *kind = json_get_str(ev, "kind"), *s;

	(void)line, (void)n;
	st->count++;
	if (!strcmp(kind, "agent.lifecycle.updated") &&
	    (s = json_get_str(p, "status")))
		st->status = !strcmp(s, "waiting-for-confirmation") ?
		    "waiting" : !strcmp(s, "paused") ? "paused" :
		    !strcmp(s, "error") ? "error" : "idle";
	else if (!strcmp(kind, "session.paused"))
		st->status = "paused";
	else if (!strcmp(kind, "session.resumed"))
		st->status = "idle";
	else if (!strcmp(kind, "error.recorded") &&
	    json_get(p, "affects_lifecycle") &&
	    json_get(p, "affects_lifecycle")->t == J_FALSE)
		;
	else if (!strcmp(kind, "error.recorded"))
		st->status = "error";
	return 0;
}

int
session_summary(struct session *s, FILE *out)
{
	struct arena a;
	struct jval *meta, *o;
	struct status st = { 0, "idle" };
	struct buf b;
	char *why = NULL;

	arena_init(&a);
	if (session_read_meta(s, &a, &meta) < 0) {
		arena_release(&a);
		return -1;
	}
	/* what makes every command exit 65 or 75 is said, with the reason */
	if (logs_verify(s, status_fn, &st) < 0 || receipts_interrupted(s) < 0) {
		st.status = "recovery-required";
		why = xstrdup(hw_err_msg());
	} else if (st.count == 0) {
		st.status = "empty";
	}
	o = json_obj(&a);
	json_set(&a, o, "session_id", json_str(&a, s->id));
	json_set(&a, o, "title", json_get(meta, "title"));
	json_set(&a, o, "status", json_str(&a, st.status));
	json_set(&a, o, "created_at", json_get(meta, "created_at"));
	json_set(&a, o, "updated_at", json_get(meta, "updated_at"));
	json_set(&a, o, "event_count", json_int(&a, st.count));
	if (why)
		json_set(&a, o, "reason", json_str(&a, why));
	free(why);
	buf_init(&b);
	json_canon(&b, o);
	buf_addc(&b, '\n');
	fwrite(b.p, 1, b.len, out);
	buf_release(&b);
	arena_release(&a);
	return 0;
}
