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

/* stream_event validates one line of an event stream as the next event */
static int
stream_event(struct jsonl *r, struct arena *a, char *line, size_t n,
    const char *sid, int64_t want, struct jval **out)
{
	struct jval *ev;
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

int
session_project_stream(const char *sid, int fd, const char *name,
    int64_t until, struct buf *out)
{
	struct proj *p = proj_new(sid);
	struct jsonl r;
	struct arena a;
	struct jval *ev = NULL;
	char *line;
	size_t n;
	int64_t seq = 0;
	int k, rc = -1;

	arena_init(&a);
	jsonl_init(&r, fd, name, JSONL_LINE_MAX);
	while ((k = jsonl_next(&r, &line, &n)) == 1) {
		arena_clear(&a);
		if (stream_event(&r, &a, line, n, sid, seq, &ev) < 0)
			goto out;
		if (until < 0 || seq <= until)
			proj_apply(p, ev);
		seq++;
	}
	if (k < 0)
		goto out;
	if (r.partial) {
		hw_err_set(HW_EXIT_DATA, "%s:%ld: unterminated last line",
		    name, r.lineno + 1);
		goto out;
	}
	proj_emit(p, out);
	rc = 0;
out:
	jsonl_release(&r);
	arena_release(&a);
	proj_free(p);
	return rc;
}
