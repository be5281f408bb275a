/*
 * pair.c - the events of a session after N, with the projection of the
 * same read of its verified logs
 */
#include <string.h>

#include "serve/gw.h"

/* what GET .../events answers: the events after N and the projection */
struct after {
	struct proj *p;
	struct buf *ev;
	int64_t after;
	int first;
};

static int
take_after(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct after *t = ctx;
	int64_t seq = -1;

	proj_apply(t->p, ev);
	json_get_int(ev, "sequence", &seq);
	if (seq > t->after) {
		if (!t->first)
			buf_addc(t->ev, ',');
		buf_add(t->ev, line, n);
		t->first = 0;
	}
	return 0;
}

int
session_pair(struct session *s, int exists, int64_t after, struct buf *out)
{
	struct buf ev;
	struct after t;
	struct logtail *lt = NULL;
	int64_t k = 0;
	int rc = 0;

	buf_init(&ev);
	t.p = proj_new(s->id);
	t.ev = &ev;
	t.after = after;
	t.first = 1;
	if (exists && (rc = session_settle(s)) == 0) {
		lt = logtail_open(s);
		while ((k = logtail_read(lt, take_after, &t)) == LOGTAIL_BATCH)
			;
		rc = k < 0 ? -1 : 0;
		logtail_close(lt);
	}
	if (rc == 0) {
		buf_adds(out, "{\"events\":[");
		buf_add(out, ev.p ? ev.p : "", ev.len);
		buf_adds(out, "],\"projection\":");
		proj_emit(t.p, out);
		buf_addc(out, '}');
	}
	proj_free(t.p);
	buf_release(&ev);
	return rc;
}

