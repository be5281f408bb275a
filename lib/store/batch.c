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

/* the write of one built batch, on a thread of its own */
struct writer {
	struct session *s;
	const struct commit_set *c;
	pthread_t t;
	int threaded, rc, code;
	char msg[1024];
};

static void *
writer_main(void *arg)
{
	struct writer *w = arg;

	if ((w->rc = commit_write(w->s, w->c)) < 0) {
		w->code = hw_err_code();
		snprintf(w->msg, sizeof w->msg, "%s", hw_err_msg());
	}
	return NULL;
}

/*
 * writer_start: c's write begins, on a thread of its own when the caller
 * has work meanwhile (ahead), else (or when no thread can be had) here
 */
static void
writer_start(struct writer *w, struct session *s, const struct commit_set *c,
    int ahead)
{
	w->s = s;
	w->c = c;
	w->threaded = ahead && pthread_create(&w->t, NULL, writer_main,
	    w) == 0;
	if (!w->threaded)
		writer_main(w);
}

/* writer_wait: the write's result, its error set on this thread */
static int
writer_wait(struct writer *w)
{
	if (w->threaded)
		pthread_join(w->t, NULL);
	if (w->rc < 0)
		hw_err_set(w->code, "%s", w->msg);
	return w->rc;
}

/* refused: a batch whose build failed, tried again as the batch path does */
static int
refused(struct session *s, struct draft_batch *in, size_t n,
    struct buf *ack, batch_flush_fn flush, void *ctx)
{
	return session_commit_batch(s, in->drafts, in->lines, n, ack, flush,
	    ctx);
}

int
session_commit_stream(struct session *s, struct draft_batch *in, int n,
    struct buf *ack, batch_flush_fn flush, void *ctx)
{
	struct commit_set set[2];
	struct writer w;
	int cur = 0, n2, built, ahead, rc = -1;
	size_t i;

	memset(set, 0, sizeof set);
	/* n drafts are in in, and nothing is being written */
	while (n > 0) {
		if (s->broken || s->lease_fd < 0 || commit_build(s,
		    in->drafts, in->lines, (size_t)n, s->count, s->head,
		    &set[cur]) < 0) {
			if (refused(s, in, (size_t)n, ack, flush, ctx) < 0)
				goto out;
			n = draft_batch_read(in);
			continue;
		}
		/*
		 * set[cur] is built: it is written while the next batch, if
		 * its lines are already waiting, is read and built after it
		 * (one draft per acknowledgement has none: no thread).
		 * Reading clears this batch's drafts, so they go into the
		 * command filter now (the process ends if the write fails).
		 */
		do {
			for (i = 0; s->bloom && i < (size_t)n; i++)
				bloom_note(s->bloom, in->drafts[i]);
			ahead = !in->failed && jsonl_ready(&in->r);
			writer_start(&w, s, &set[cur], ahead);
			n2 = built = 0;
			if (ahead && (n2 = draft_batch_read(in)) > 0)
				built = commit_build(s, in->drafts, in->lines,
				    (size_t)n2, set[cur].from +
				    (int64_t)set[cur].n, set[cur].head,
				    &set[!cur]) == 0;
			if (writer_wait(&w) < 0 || flush(ctx, &set[cur].ev) < 0)
				goto out;
			cur = !cur;
			n = n2;
		} while (built);
		/* a batch read and not built is tried again as it stands */
		if (n > 0 && refused(s, in, (size_t)n, ack, flush, ctx) < 0)
			goto out;
		n = draft_batch_read(in);
	}
	rc = in->failed ? -1 : 0;
out:
	commit_set_release(&set[0]);
	commit_set_release(&set[1]);
	return rc;
}
