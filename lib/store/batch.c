/* batch.c - drafts read in batches, and a batch committed */
#include <string.h>

#include "store/store.h"

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
