/* batch.c - drafts read in batches, and a batch committed */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "store/logs.h"

void
draft_batch_init(struct draft_batch *in, int fd, const char *name,
    int any_kind)
{
	memset(in, 0, sizeof *in);
	jsonl_init(&in->r, fd, name, JSONL_LINE_MAX);
	arena_init(&in->a);
	in->any_kind = any_kind;
}

void
draft_batch_release(struct draft_batch *in)
{
	jsonl_release(&in->r);
	arena_release(&in->a);
}

/*
 * draft_batch_read takes one line (waiting for it) and then whatever complete
 * lines are already waiting, up to the batch bounds.  A bad line ends the
 * batch before it and the input after it.
 */
int
draft_batch_read(struct draft_batch *in)
{
	size_t n = 0, bytes = 0, len;
	char *line, err[200];
	struct jval *d;
	int r, canonical;

	arena_clear(&in->a);
	while (!in->failed && n < BATCH_MAX && bytes < BATCH_BYTES &&
	    (n == 0 || jsonl_ready(&in->r))) {
		if ((r = jsonl_next(&in->r, &line, &len)) <= 0) {
			if (r < 0 || in->r.partial) {
				if (r == 0)
					hw_err_set(HW_EXIT_DATA, "%s:%ld: "
					    "unterminated last line",
					    in->r.name, in->r.lineno + 1);
				in->failed = 1;
			}
			break;
		}
		if (len == strspn(line, " \t\r"))
			continue;
		if (!(d = jsonl_parse_canon(&in->r, &in->a, line, len,
		    &canonical))) {
			in->failed = 1;
			break;
		}
		if (draft_check(&in->a, d, in->any_kind, err,
		    sizeof err) < 0) {
			hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", in->r.name,
			    in->r.lineno, err);
			in->failed = 1;
			break;
		}
		/* a canonical line is its draft's canonical text (commit.c) */
		in->lines[n].p = canonical ? arena_strndup(&in->a, line, len) :
		    NULL;
		in->lines[n].n = len;
		in->lines[n].ascii = canonical == 2;
		in->drafts[n++] = d;
		bytes += len;
	}
	return (int)n;
}

/*
 * session_commit_batch commits n drafts and hands their events to flush.
 * A batch refused before anything was written (a line over the readers'
 * bound) is tried again a draft at a time, so that, as with a bad input
 * line, the drafts before the refused one are committed and nothing
 * after it.
 */
int
session_commit_batch(struct session *s, struct jval **d,
    const struct draft_line *lines, size_t n, struct buf *ack,
    batch_flush_fn flush, void *ctx)
{
	size_t i;
	int rc;

	buf_clear(ack);
	if ((rc = session_commit(s, d, lines, n, ack)) == 0)
		return flush(ctx, ack);
	if (n == 1 || s->broken || hw_err_code() != HW_EXIT_DATA)
		return rc;
	for (i = 0; i < n; i++) {
		buf_clear(ack);
		if (session_commit(s, d + i, lines ? lines + i : NULL, 1,
		    ack) < 0 ||
		    flush(ctx, ack) < 0)
			return -1;
	}
	return 0;
}

/*
 * A worker: one stage of the stream (hashing, or writing), a batch at a
 * time, on a thread of its own that waits for the next batch, so that it
 * stays on its core; or, when the caller has nothing to do meanwhile, on
 * the caller's thread.
 */
struct worker {
	int (*job)(struct worker *);
	struct session *s;
	struct commit_set *c;
	char head[HW_HASH_LEN + 1];	/* hashing: where c's chain starts */
	pthread_t t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, threaded, busy, quit, rc, code;
	char msg[1024];
};

static int
hash_job(struct worker *w)
{
	return commit_chain(w->s, w->c, w->head);
}

static int
write_job(struct worker *w)
{
	return commit_write(w->s, w->c);
}

static void
worker_init(struct worker *w, struct session *s, int (*job)(struct worker *))
{
	memset(w, 0, sizeof *w);
	w->s = s;
	w->job = job;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
}

static void
worker_run(struct worker *w)
{
	if ((w->rc = w->job(w)) < 0) {
		w->code = hw_err_code();
		snprintf(w->msg, sizeof w->msg, "%s", hw_err_msg());
	}
}

static void *
worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->busy && !w->quit)
			pthread_cond_wait(&w->cv, &w->mu);
		if (!w->busy)
			break;
		pthread_mutex_unlock(&w->mu);
		worker_run(w);
		pthread_mutex_lock(&w->mu);
		w->busy = 0;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/*
 * worker_start: c's stage begins, on the worker's thread when the caller
 * has work meanwhile (ahead), else (or when no thread can be had) here
 */
static void
worker_start(struct worker *w, struct commit_set *c, int ahead)
{
	w->c = c;
	if (ahead && !w->started)
		w->started = pthread_create(&w->t, NULL, worker_main, w) == 0;
	w->threaded = ahead && w->started;
	if (!w->threaded) {
		worker_run(w);
		return;
	}
	pthread_mutex_lock(&w->mu);
	w->busy = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

/* worker_wait: the stage's result, its error set on this thread */
static int
worker_wait(struct worker *w)
{
	if (w->threaded) {
		pthread_mutex_lock(&w->mu);
		while (w->busy)
			pthread_cond_wait(&w->cv, &w->mu);
		pthread_mutex_unlock(&w->mu);
	}
	if (w->rc < 0)
		hw_err_set(w->code, "%s", w->msg);
	return w->rc;
}

/* worker_stop: the thread, if any, told to end and joined (none busy) */
static void
worker_stop(struct worker *w)
{
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		w->quit = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->t, NULL);
	}
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
}

/* settle: the write under way, if any, waited for and acknowledged */
static int
settle(struct worker *w, int *writing, batch_flush_fn flush, void *ctx)
{
	if (!*writing)
		return 0;
	*writing = 0;
	if (worker_wait(w) < 0)
		return -1;
	return flush(ctx, &w->c->ev);
}

/* refused: a batch whose build failed, tried again as the batch path does */
static int
refused(struct session *s, struct draft_batch *in, size_t n,
    struct buf *ack, batch_flush_fn flush, void *ctx)
{
	return session_commit_batch(s, in->drafts, in->lines, n, ack, flush,
	    ctx);
}

/*
 * session_commit_stream: while one batch is read and built, the one before
 * it is hashed and the one before that written, each on a thread of its
 * own; a batch is acknowledged after its write and sync.  With nothing
 * waiting to be read (one draft per acknowledgement) a batch is hashed and
 * written here at once, with no thread.
 */
int
session_commit_stream(struct session *s, struct draft_batch *in, int n,
    struct buf *ack, batch_flush_fn flush, void *ctx)
{
	struct commit_set set[3];
	struct worker h, w;
	int cur = 0, n2, built, ahead, hashed, writing = 0, rc = -1;
	size_t i;

	memset(set, 0, sizeof set);
	worker_init(&h, s, hash_job);
	worker_init(&w, s, write_job);
	/* n drafts are in in, and nothing is being hashed or written */
	while (n > 0) {
		if (s->broken || s->lease_fd < 0 || commit_build(s,
		    in->drafts, in->lines, (size_t)n, s->count,
		    &set[cur]) < 0) {
			if (refused(s, in, (size_t)n, ack, flush, ctx) < 0)
				goto out;
			n = draft_batch_read(in);
			continue;
		}
		memcpy(h.head, s->head, sizeof h.head);
		/*
		 * set[cur] is built: it is hashed while the next batch, if its
		 * lines are already waiting, is read and built, and the one
		 * before it (set[cur - 1]) is written.  Reading clears this
		 * batch's drafts, so they go into the command filter now (the
		 * process ends if a write fails).
		 */
		do {
			for (i = 0; s->bloom && i < (size_t)n; i++)
				bloom_note(s->bloom, in->drafts[i]);
			ahead = !in->failed && !s->bind && jsonl_ready(&in->r);
			worker_start(&h, &set[cur], ahead);
			n2 = built = 0;
			if (ahead && (n2 = draft_batch_read(in)) > 0)
				built = commit_build(s, in->drafts, in->lines,
				    (size_t)n2, set[cur].from +
				    (int64_t)set[cur].n, &set[(cur + 1) % 3])
				    == 0;
			hashed = worker_wait(&h);
			if (settle(&w, &writing, flush, ctx) < 0 || hashed < 0)
				goto out;
			/* the next batch's chain starts where this one's ends */
			memcpy(h.head, set[cur].head, sizeof h.head);
			worker_start(&w, &set[cur], built);
			writing = 1;
			cur = (cur + 1) % 3;
			n = n2;
		} while (built);
		/* the last batch written is acknowledged */
		if (settle(&w, &writing, flush, ctx) < 0)
			goto out;
		/* a batch read and not built is tried again as it stands */
		if (n > 0 && refused(s, in, (size_t)n, ack, flush, ctx) < 0)
			goto out;
		n = draft_batch_read(in);
	}
	rc = in->failed ? -1 : 0;
out:
	worker_stop(&h);
	worker_stop(&w);
	for (i = 0; i < 3; i++)
		commit_set_release(&set[i]);
	return rc;
}
