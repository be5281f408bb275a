/* batch.c - drafts read in batches, and a batch committed */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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
 * The stream's pipeline: a batch is built on the caller's thread, then
 * hashed on a thread of its own (in order, each batch's chain from where
 * the one before it ends), then written, synced and acknowledged on
 * another (in order).  Each stage takes the next batch as soon as the
 * stage before it hands one over, so the writes follow one another as
 * closely as the syncs allow.  Three sets take turns; a set is built again
 * once its batch is acknowledged.  The counters say how many batches each
 * stage has finished; one lock and one condition guard them, the first
 * failure, and the end.
 */
struct pipe {
	struct session *s;
	struct commit_set set[3];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t hasher, writer;
	int threads;		/* both threads run */
	size_t built, hashed, written;
	int closed;		/* nothing will be built after built */
	int failed;		/* a stage failed, with code and msg */
	int code;
	char msg[1024];
	char head[HW_HASH_LEN + 1];	/* where the next hash starts */
	batch_flush_fn flush;
	void *ctx;
};

/* pipe_fail: the calling thread's error becomes the stream's (the first) */
static void
pipe_fail(struct pipe *p)
{
	if (!p->failed) {
		p->failed = 1;
		p->code = hw_err_code();
		snprintf(p->msg, sizeof p->msg, "%s", hw_err_msg());
	}
}

/* hash: the k-th batch's chain from p->head; the head moves past it */
static int
hash(struct pipe *p, size_t k)
{
	struct commit_set *c = &p->set[k % 3];

	if (commit_chain(p->s, c, p->head) < 0)
		return -1;
	memcpy(p->head, c->head, sizeof p->head);
	return 0;
}

/* write_ack: the k-th batch appended, synced and acknowledged */
static int
write_ack(struct pipe *p, size_t k)
{
	struct commit_set *c = &p->set[k % 3];

	if (commit_write(p->s, c) < 0)
		return -1;
	return p->flush(p->ctx, &c->ev);
}

/*
 * stage runs one stage's thread: while the stage before it (*before) is
 * ahead of it (*done), it takes the next batch; it ends once it has done
 * every batch built and nothing more will be, or on a failure anywhere
 */
static void
stage(struct pipe *p, const size_t *before, size_t *done,
    int (*job)(struct pipe *, size_t))
{
	size_t k;
	int rc;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (*done == *before && !p->failed &&
		    !(p->closed && *done == p->built))
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->failed || *done == *before)
			break;
		k = *done;
		pthread_mutex_unlock(&p->mu);
		rc = job(p, k);
		pthread_mutex_lock(&p->mu);
		if (rc < 0)
			pipe_fail(p);
		else
			(*done)++;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
}

static void *
hasher_main(void *arg)
{
	struct pipe *p = arg;

	stage(p, &p->built, &p->hashed, hash);
	return NULL;
}

static void *
writer_main(void *arg)
{
	struct pipe *p = arg;

	stage(p, &p->hashed, &p->written, write_ack);
	return NULL;
}

/*
 * thread_start: a thread of its own for fn, or -1 when none could be had;
 * HW_TEST_NO_THREADS (hw(7)) has none be had, so the tests reach the paths
 * that do the work here
 */
static int
thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	if (getenv("HW_TEST_NO_THREADS"))
		return -1;
	return pthread_create(t, NULL, fn, arg) == 0 ? 0 : -1;
}

/* pipe_start: both threads, or (none could be had) neither */
static void
pipe_start(struct pipe *p)
{
	if (thread_start(&p->hasher, hasher_main, p) < 0)
		return;
	if (thread_start(&p->writer, writer_main, p) < 0) {
		pthread_mutex_lock(&p->mu);
		p->closed = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->hasher, NULL);
		p->closed = 0;
		return;
	}
	p->threads = 1;
}

/*
 * pipe_wait: until at most most batches are built and not acknowledged,
 * or a stage failed; -1 then, with its error
 */
static int
pipe_wait(struct pipe *p, size_t most)
{
	int failed;

	pthread_mutex_lock(&p->mu);
	while (p->built - p->written > most && !p->failed)
		pthread_cond_wait(&p->cv, &p->mu);
	failed = p->failed;
	pthread_mutex_unlock(&p->mu);
	if (failed)
		return hw_err_set(p->code, "%s", p->msg);
	return 0;
}

/* pipe_push: the batch just built goes on, to the threads or done here */
static int
pipe_push(struct pipe *p)
{
	int rc = 0;

	if (p->threads) {
		pthread_mutex_lock(&p->mu);
		p->built++;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		return 0;
	}
	if (hash(p, p->built) < 0 || write_ack(p, p->built) < 0)
		rc = -1;
	p->built++;
	p->hashed = p->written = p->built;
	return rc;
}

/* pipe_stop: the threads told nothing more comes, and joined */
static void
pipe_stop(struct pipe *p)
{
	size_t i;

	if (p->threads) {
		pthread_mutex_lock(&p->mu);
		p->closed = 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->hasher, NULL);
		pthread_join(p->writer, NULL);
		p->threads = 0;
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (i = 0; i < 3; i++)
		commit_set_release(&p->set[i]);
}

/*
 * The opener: the session made ready on a thread of its own while the first
 * batch is built (session_commit_stream's open).
 */
struct opener {
	struct session *s;
	int (*fn)(struct session *, void *);
	void *ctx;
	pthread_t thread;
	int running;
	int rc, code;
	char msg[1024];
};

static void *
opener_main(void *arg)
{
	struct opener *o = arg;

	if ((o->rc = o->fn(o->s, o->ctx)) < 0) {
		o->code = hw_err_code();
		snprintf(o->msg, sizeof o->msg, "%s", hw_err_msg());
	}
	sha256_thread_done();	/* the lease's verification hashed here */
	return NULL;
}

/* opener_start: the opener's thread, or (none could be had) its work here */
static int
opener_start(struct opener *o)
{
	if (thread_start(&o->thread, opener_main, o) == 0) {
		o->running = 1;
		return 0;
	}
	return o->fn(o->s, o->ctx);
}

/* opener_join: -1 with the opener's error when it failed */
static int
opener_join(struct opener *o)
{
	if (!o->running)
		return 0;
	pthread_join(o->thread, NULL);
	o->running = 0;
	if (o->rc < 0)
		return hw_err_set(o->code, "%s", o->msg);
	return 0;
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
 * session_commit_stream: while one batch is read and built, the ones
 * before it are hashed and written, each stage on a thread of its own
 * (the pipe); a batch is acknowledged after its write and sync.  With
 * nothing waiting to be read (one draft per acknowledgement) a batch is
 * hashed and written here at once, with no thread, or, once the threads
 * run, waited for: its acknowledgement does not wait for the next line.
 */
int
session_commit_stream(struct session *s, struct draft_batch *in, int n,
    struct buf *ack, batch_flush_fn flush, void *ctx,
    int (*open)(struct session *, void *))
{
	struct opener o = { s, open, ctx };
	struct commit_set *c;
	struct pipe p;
	int64_t from = s->count;
	char now[21];
	size_t i;
	int ahead, built, rc = -1;

	memset(&p, 0, sizeof p);
	p.s = s;
	p.flush = flush;
	p.ctx = ctx;
	memcpy(p.head, s->head, sizeof p.head);
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	if (open && opener_start(&o) < 0)
		goto out;
	if (open && !o.running) {	/* opened here: it starts as it is */
		from = s->count;
		memcpy(p.head, s->head, sizeof p.head);
	}
	while (n > 0) {
		ahead = !in->failed && !s->bind && jsonl_ready(&in->r);
		if (ahead && !p.threads)
			pipe_start(&p);
		/* a set whose batch is acknowledged */
		if (pipe_wait(&p, 2) < 0)
			goto out;
		c = &p.set[p.built % 3];
		built = commit_build(s, in->drafts, in->lines, (size_t)n, from,
		    c);
		if (o.running) {
			/* the session is ready: where it starts, its head */
			if (opener_join(&o) < 0)
				goto out;
			memcpy(p.head, s->head, sizeof p.head);
			from = s->count;
			utc_now(now);
			if (built < 0 || c->from != from || strcmp(c->at, now))
				built = commit_build(s, in->drafts, in->lines,
				    (size_t)n, from, c);
		}
		if (s->lease_fd < 0 || built < 0) {
			/* the batches before it acknowledged, it is retried */
			if (pipe_wait(&p, 0) < 0 ||
			    refused(s, in, (size_t)n, ack, flush, ctx) < 0)
				goto out;
			memcpy(p.head, s->head, sizeof p.head);
			from = s->count;
			n = draft_batch_read(in);
			continue;
		}
		/*
		 * Reading clears the batch's drafts, so they go into the
		 * command filter now (the process ends if a write fails).
		 */
		for (i = 0; s->bloom && i < (size_t)n; i++)
			bloom_note(s->bloom, in->drafts[i]);
		from += n;
		if (pipe_push(&p) < 0 || (!ahead && pipe_wait(&p, 0) < 0))
			goto out;
		n = draft_batch_read(in);
	}
	/* every batch built is acknowledged */
	if (pipe_wait(&p, 0) < 0)
		goto out;
	rc = in->failed ? -1 : 0;
out:
	pipe_stop(&p);
	if (opener_join(&o) < 0)
		rc = -1;
	return rc;
}
