/* views.c - what a session shows: its projection, once or as it grows */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw.h"

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
	struct upto u = { proj_new(s->id), until };
	int rc = 0;

	if (exists && (session_settle(s) < 0 || logs_verify(s, reduce_event,
	    &u) < 0))
		rc = -1;
	if (rc == 0)
		proj_emit(u.p, out);
	proj_free(u.p);
	return rc;
}
