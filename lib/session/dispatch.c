/*
 * dispatch.c - typed session commands: each envelope is checked, decided
 * against the projection and recorded through its receipt, and answered
 * with its events and the projection they lead to
 */
#include <string.h>
#include <unistd.h>

#include "session/session.h"

/* One command applied to a leased session and its projection. */
struct run {
	struct session *s;
	struct proj *p;
	event_fn seen;		/* told of each newly committed event */
	void *seen_ctx;
	struct arena t;		/* acknowledged lines, parsed */
	struct buf events;	/* this command's event lines, "," joined */
	int64_t last;		/* the last sequence in events */
	int64_t from, upto;	/* events read back from the log */
	struct arena *a;	/* the caller's: the envelope and the drafts */
	struct jval *cmd;
	const char *kind;
	int asked;		/* more() already ran the export */
	struct jval *draft;
	int declined;		/* recorded as not applied */
};

/*
 * collect adds one of the command's events to its answer, reducing it
 * (and telling r->seen) unless the projection already has it (an exact
 * retry's events do).
 */
static int
collect(struct run *r, const char *line, size_t n, const struct jval *ev)
{
	int64_t seq = -1;

	json_get_int(ev, "sequence", &seq);
	if (seq > proj_revision(r->p)) {
		proj_apply(r->p, ev);
		if (r->seen && r->seen(r->seen_ctx, line, n, ev) < 0)
			return -1;
	}
	if (r->events.len)
		buf_addc(&r->events, ',');
	buf_add(&r->events, line, n);
	r->last = seq;
	if (command_declined(ev, r->cmd))
		r->declined = 1;
	return 0;
}

/* flush_ack: command_run's acknowledged (canonical) event lines */
static int
flush_ack(void *ctx, struct buf *ack)
{
	struct run *r = ctx;
	struct jval *ev;
	char *line = ack->p, *nl, err[128];

	for (; line && line < ack->p + ack->len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(ack->p + ack->len - line));
		if (!nl)
			nl = ack->p + ack->len;
		arena_clear(&r->t);
		if (!(ev = json_parse(&r->t, line, (size_t)(nl - line), err,
		    sizeof err)))
			return hw_err_set(HW_EXIT_DATA, "acknowledged event: "
			    "%s", err);
		if (collect(r, line, (size_t)(nl - line), ev) < 0)
			return -1;
	}
	return 0;
}

/* range_fn collects the events from r->from through r->upto */
static int
range_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct run *r = ctx;
	int64_t seq;

	if (json_get_int(ev, "sequence", &seq) == 0 && seq >= r->from &&
	    seq <= r->upto)
		return collect(r, line, n, ev);
	return 0;
}

/* read_back collects the events from through upto from the log */
static int
read_back(struct run *r, int64_t from, int64_t upto)
{
	r->from = from;
	r->upto = upto;
	return logs_verify_full(r->s, range_fn, r);
}

/*
 * export runs what hw-audit export does; audit_export commits its event
 * itself, so its line is read back from the log it has just verified.
 */
static int
export(struct run *r)
{
	struct audit_sum m;
	int rc;

	audit_sum_init(&m, 0);
	rc = audit_export(r->s, &m, NULL);
	audit_sum_release(&m);
	if (rc < 0)
		return -1;
	return read_back(r, r->s->count - 1, r->s->count - 1);
}

/* draft builds {"kind": kind, "payload": {"command_id": ...}} */
static struct jval *
draft(struct run *r, const char *kind, struct jval **payload)
{
	struct arena *a = r->a;
	struct jval *d = json_obj(a);

	*payload = json_obj(a);
	json_set(a, *payload, "command_id", json_get(r->cmd, "command_id"));
	json_set(a, d, "kind", json_str(a, kind));
	json_set(a, d, "payload", *payload);
	return d;
}

/* decide: what an accepted command of each kind records */
static struct jval *
decide(struct run *r)
{
	struct arena *a = r->a;
	const struct jval *cp = json_get(r->cmd, "payload");
	const char *const *ids;
	struct jval *d = NULL, *pl, *list;
	size_t i, n;

	if (!strcmp(r->kind, "chat")) {
		d = draft(r, "user_message.recorded", &pl);
		json_set(a, pl, "actor_id", json_get(r->cmd, "actor_id"));
		json_set(a, pl, "content", json_get(cp, "prompt"));
	} else if (!strcmp(r->kind, "approve") || !strcmp(r->kind, "deny")) {
		d = draft(r, "approval.recorded", &pl);
		json_set(a, pl, "group_id", json_str(a, proj_pending(r->p,
		    &ids, &n)));
		json_set(a, pl, "decision", json_str(a, !strcmp(r->kind,
		    "approve") ? "approved" : "denied"));
		list = json_new(a, J_ARRAY);
		for (i = 0; i < n; i++)
			json_push(a, list, json_str(a, ids[i]));
		json_set(a, pl, "tool_call_ids", list);
	} else if (!strcmp(r->kind, "pause"))
		d = draft(r, "session.paused", &pl);
	else if (!strcmp(r->kind, "resume"))
		d = draft(r, "session.resumed", &pl);
	return d;
}

/*
 * first gives command_run what a new command records, to commit with its
 * command.received: decided against the projection before it, which that
 * event does not change.  An export comes after (more): it verifies the
 * log its command.received is in.
 */
static int
first(void *ctx, struct jval ***drafts)
{
	struct run *r = ctx;
	struct arena *a = r->a;
	const char *why;
	struct jval *pl;

	if (!proj_available(r->p, r->kind, json_get_str(json_get(r->cmd,
	    "payload"), "target_id"), &why)) {
		r->draft = draft(r, "error.recorded", &pl);
		json_set(a, pl, "command", json_str(a, r->kind));
		json_set(a, pl, "reason", json_str(a, why));
		json_set(a, pl, "affects_lifecycle", json_bool(a, 0));
	} else if (!strcmp(r->kind, "audit.export"))
		return 0;
	else
		r->draft = decide(r);
	*drafts = &r->draft;
	return r->draft ? 1 : 0;
}

/* more runs an export once its command.received is durable */
static int
more(void *ctx, struct jval ***drafts)
{
	struct run *r = ctx;

	(void)drafts;
	if (r->asked || strcmp(r->kind, "audit.export"))
		return 0;
	r->asked = 1;
	return export(r);
}

/* answer appends {"events": [...], "projection": {...}} and "\n" */
static void
answer(struct run *r, struct buf *out)
{
	buf_adds(out, "{\"events\":[");
	buf_add(out, r->events.p, r->events.len);
	buf_adds(out, "],\"projection\":");
	proj_emit(r->p, out);
	buf_adds(out, "}\n");
}

static int
apply(struct run *r, struct jval *cmd, struct buf *out)
{
	struct command_io io = { first, more, flush_ack, r };
	int replayed;

	r->cmd = cmd;
	r->kind = json_get_str(cmd, "kind");
	/* a decision that could not be bound is refused before its receipt */
	if ((!strcmp(r->kind, "approve") || !strcmp(r->kind, "deny")) &&
	    decision_ready() < 0)
		return -1;
	if (command_run(r->s, r->a, cmd, &io, &replayed) < 0)
		return -1;
	if (!strcmp(r->kind, "replay") && !r->declined) {
		/* a replay answers with every event through its own */
		int64_t last = r->last;

		buf_clear(&r->events);
		if (read_back(r, 0, last) < 0)
			return -1;
	}
	answer(r, out);
	return 0;
}

int
command_apply(struct session *s, struct proj *p, struct arena *a,
    struct jval *cmd, event_fn seen, void *ctx, struct buf *out,
    int *declined)
{
	int (*bind)(struct session *, const struct jval *, const char *);
	struct run r;
	int rc;

	memset(&r, 0, sizeof r);
	r.s = s;
	r.p = p;
	r.seen = seen;
	r.seen_ctx = ctx;
	r.a = a;
	r.last = -1;
	arena_init(&r.t);
	buf_init(&r.events);
	/* a decision applied here is this user's: bound before it commits */
	bind = s->bind;
	s->bind = decision_bind;
	rc = apply(&r, cmd, out);
	s->bind = bind;
	if (rc == 0 && r.declined)
		*declined = 1;
	buf_release(&r.events);
	arena_release(&r.t);
	return rc;
}

/* hw-session command's input: the session, leased while p is set */
struct input {
	struct session *s;
	struct proj *p;
	int registered;
};

/*
 * open_session leases the session for this and the next commands (0),
 * its projection reduced from the snapshot and the tail, which the lease
 * verifies (session_take_reduce): the first valid envelope registers it.
 * While a running agent holds the lease, it has the agent apply cmd through its
 * control socket instead (1, the answer in out); when that agent ends
 * before it answers, the lease is taken again.
 */
static int
open_session(struct input *in, struct jval *cmd, struct buf *out,
    int *declined)
{
	int k;

	if (!in->registered && (project_open(in->s->proj, 1) < 0 ||
	    session_register(in->s, NULL) < 0))
		return -1;
	in->registered = 1;
	for (;;) {
		proj_free(in->p);
		in->p = NULL;
		/* leased: from the projection snapshot and the tail */
		if ((k = session_take_reduce(in->s, &in->p)) <= 0)
			break;
		if ((k = control_send(in->s, cmd, out, declined)) != 0)
			break;
	}
	if (k != 0) {
		proj_free(in->p);
		in->p = NULL;
	}
	return k;
}

/* handle runs one parsed envelope; *declined when not applied */
static int
handle(struct input *in, struct arena *a, struct jval *cmd, struct buf *out,
    int *declined)
{
	char hash[HW_HASH_LEN + 1];
	int k;

	if (command_check(a, cmd, in->s->id, hash) < 0)
		return -1;
	if (!in->p && (k = open_session(in, cmd, out, declined)) != 0)
		return k < 0 ? -1 : 0;
	return command_apply(in->s, in->p, a, cmd, NULL, NULL, out, declined);
}

/* line_failed puts "command line N: " before the error */
static int
line_failed(long n)
{
	char msg[1024];

	snprintf(msg, sizeof msg, "%s", hw_err_msg());
	return hw_err_set(hw_err_code(), "command line %ld: %s", n, msg);
}

static int
next_line(struct jsonl *in, struct arena *a, struct jval **cmd)
{
	char *line, err[128];
	size_t len;
	int k;

	for (;;) {
		if ((k = jsonl_next(in, &line, &len)) < 0) {
			if (hw_err_code() != HW_EXIT_DATA)
				return -1;
			return hw_err_set(HW_EXIT_DATA, "command line %ld: "
			    "longer than %zu bytes", in->lineno + 1, in->max);
		}
		if (k == 0)
			return in->partial ? hw_err_set(HW_EXIT_DATA,
			    "command line %ld: unterminated last line",
			    in->lineno + 1) : 0;
		if (len != strspn(line, " \t\r"))
			break;
	}
	if (!(*cmd = json_parse(a, line, len, err, sizeof err)))
		return hw_err_set(HW_EXIT_DATA, "command line %ld: %s",
		    in->lineno, err);
	return 1;
}

int
session_command(struct session *s, FILE *in, FILE *out, int *declined)
{
	struct input st = { s, NULL, 0 };
	struct arena a;
	struct buf ans;
	struct jsonl rd;
	struct jval *cmd = NULL;
	int k, rc = 0;

	arena_init(&a);
	buf_init(&ans);
	jsonl_init(&rd, fileno(in), "<stdin>", COMMAND_LINE_MAX);
	while (rc == 0) {
		arena_clear(&a);
		buf_clear(&ans);
		if ((k = next_line(&rd, &a, &cmd)) <= 0) {
			rc = k;
			break;
		}
		if (handle(&st, &a, cmd, &ans, declined) < 0)
			rc = line_failed(rd.lineno);
		else if (fwrite(ans.p, 1, ans.len, out) != ans.len ||
		    fflush(out) != 0)
			rc = (hw_err_sys("cannot write 'stdout'"),
			    line_failed(rd.lineno));
	}
	if (snapshot_leave(s, st.p) < 0 && rc == 0)
		rc = -1;
	if (st.p && session_unlease(s) < 0 && rc == 0)
		rc = -1;
	proj_free(st.p);
	jsonl_release(&rd);
	buf_release(&ans);
	arena_release(&a);
	return rc;
}

int
session_command_line(struct session *s, const char *line, size_t n,
    struct buf *out, int *declined)
{
	struct input st = { s, NULL, 0 };
	struct arena a;
	struct jval *cmd;
	char err[128];
	int rc;

	arena_init(&a);
	if (!(cmd = json_parse(&a, line, n, err, sizeof err)))
		rc = hw_err_set(HW_EXIT_DATA, "command: %s", err);
	else
		rc = handle(&st, &a, cmd, out, declined);
	if (snapshot_leave(s, st.p) < 0 && rc == 0)
		rc = -1;
	if (st.p && session_unlease(s) < 0 && rc == 0)
		rc = -1;
	proj_free(st.p);
	arena_release(&a);
	return rc;
}
