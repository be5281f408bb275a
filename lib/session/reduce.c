/*
 * project.c - the one reducer from session events to the session
 * projection (heartwood.session-projection.v1, the reference's camelCase
 * names) and the command availability it implies
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"

#define SUMMARY_MAX 240		/* characters in labels and summaries */
/*
 * The lists the projection shows are bounded so that its size, and the
 * cost of each update while following, does not grow with the log: the
 * most recent entries only; the log itself has them all.
 */
#define SHOWN_MAX 1000

/* recent: encoded entries, "," joined, of which the last SHOWN_MAX show */
struct recent {
	struct buf b;
	size_t *off;		/* where each live entry starts in b */
	size_t first, n, cap;	/* live entries are off[first..n) */
};

enum state {
	ST_PROPOSED, ST_AWAITING, ST_APPROVED, ST_REJECTED, ST_RUNNING,
	ST_SUCCEEDED, ST_FAILED, ST_UNKNOWN
};
static const char *const state_name[] = { "proposed", "awaiting-review",
	"approved", "rejected", "running", "succeeded", "failed",
	"outcome-unknown" };

enum decision { DEC_NONE, DEC_APPROVED, DEC_REJECTED };
static const char *const decision_name[] = { NULL, "approved",
	"rejected" };

struct action {
	struct jval *tool_call_id, *action_id, *tool_name, *risk, *summary;
	struct jval *arguments, *details, *paths;
	const char *group;	/* group id, NULL until review is requested */
	enum state state;
	enum decision decision;
	int has_outcome, broken;
	struct jval *exit_code, *out_summary, *result, *truncated;
	int64_t proposed_seq, updated_seq;
};

struct group {
	const char *id;
	const char **members;	/* tool_call_ids, in request order */
	size_t n, cap;
	enum decision decision;
	int64_t seq;		/* of its last confirmation.requested */
	int elsewhere;		/* an approval not made by this user here */
};

struct usage {
	const char *id;
	int64_t calls, prompt, completion, cache_read, cache_write, reasoning;
	struct jval *model, *window;
	double cost;
	int known;
};

struct subagent {
	struct jval *invocation, *task, *name, *role, *status, *parent_sid;
	struct jval *parent_action;
};

struct proj {
	struct arena a;		/* everything kept lives here */
	struct arena t;		/* scratch for one call */
	struct arena plan;	/* the last task plan only */
	struct buf scratch;
	char *sid;
	int64_t count, revision, workspace;
	struct recent activity, conversation;
	struct action **actions;
	size_t nactions, capactions;
	struct smap by_call;	/* tool_call_id -> struct action */
	struct group **groups;
	size_t ngroups, capgroups;
	struct smap by_group;	/* group id -> struct group */
	struct group **open;	/* the groups with no decision, in order */
	size_t nopen, capopen;
	const char *status;	/* lifecycle status */
	int unrecoverable;
	struct jval *error_reason;
	int user_messages;
	int last_denied;	/* the last decided group was rejected */
	struct jval *endpoint, *model_decision, *model_reason;
	struct jval *cmd_id, *cmd_kind, *cmd_message;	/* last command */
	int cmd_rejected;
	struct jval *tasks;	/* the last plan, as given */
	struct usage total;
	struct usage **purposes;
	size_t npurposes;
	struct subagent **subagents;
	size_t nsubagents;
	struct smap by_invocation;
	char epoch[129];
	int64_t stream_rev, stream_at;	/* streamRevision; the revision */
	struct buf stream;		/* the transient text */
	char why[512];
};

/* ---- small helpers ---- */

static struct jval *
keep(struct proj *p, const struct jval *v)
{
	return v ? json_copy(&p->a, v) : NULL;
}

static const char *
keep_str(struct proj *p, const struct jval *v)
{
	return v && v->t == J_STRING ? arena_strndup(&p->a, v->u.s, v->n) :
	    NULL;
}

static struct jval *
str_or_null(struct jval *v)
{
	return v && v->t == J_STRING ? v : NULL;
}

static int
is(const struct jval *v, const char *s)
{
	return json_is_str(v, s);
}

static void
grow(void *arrp, size_t n, size_t *cap, size_t size)
{
	void **arr = arrp;

	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 16;
	*arr = xrealloc(*arr, *cap * size);
}

/* bounded: s cut to SUMMARY_MAX characters, at a character boundary */
static struct jval *
bounded(struct arena *a, const struct jval *s)
{
	size_t i, chars = 0;

	if (!s || s->t != J_STRING)
		return NULL;
	for (i = 0; i < s->n; i++)
		if (((unsigned char)s->u.s[i] & 0xc0) != 0x80 &&
		    chars++ == SUMMARY_MAX)
			return json_strn(a, s->u.s, i);
	return (struct jval *)s;
}

/* set adds member k (never already there), null for a NULL v */
static void
set(struct arena *a, struct jval *o, const char *k, struct jval *v)
{
	json_add(a, o, k, v ? v : json_new(a, J_NULL));
}

/* ---- activity and conversation: append-only, encoded once ---- */

static const struct {
	const char *kind, *label;
} labels[] = {
	{ "command.received", "Command received" },
	{ "approval.recorded", "Decision recorded" },
	{ "policy.decision.recorded", "Policy decision" },
	{ "model_call.decision.recorded", "Model route decision" },
	{ "user_message.recorded", "Researcher message" },
	{ "agent_message.emitted", "Agent message" },
	{ "tool_call.proposed", "Action proposed" },
	{ "confirmation.requested", "Review requested" },
	{ "confirmation.resolved", "Review resolved" },
	{ "tool.execution.recorded", "Action finished" },
	{ "agent.lifecycle.updated", "Agent status" },
	{ "task.plan.updated", "Task plan updated" },
	{ "model.usage.updated", "Model usage" },
	{ "subagent.updated", "Specialist updated" },
	{ "session.paused", "Session paused" },
	{ "session.resumed", "Session resumed" },
	{ "audit.export.recorded", "Audit exported" },
	{ "error.recorded", "Error" },
};

static const char *
label_of(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof labels / sizeof *labels; i++)
		if (!strcmp(labels[i].kind, kind))
			return labels[i].label;
	return "Event";
}

/* recent_begin: the buffer to encode one more entry into */
static struct buf *
recent_begin(struct recent *r)
{
	if (r->n == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->off = xrealloc(r->off, r->cap * sizeof *r->off);
	}
	if (r->n > r->first)
		buf_addc(&r->b, ',');
	r->off[r->n++] = r->b.len;
	return &r->b;
}

/* recent_end forgets what is no longer shown, compacting now and then */
static void
recent_end(struct recent *r)
{
	size_t i, dead;

	if (r->n - r->first <= SHOWN_MAX)
		return;
	r->first++;
	dead = r->off[r->first];
	if (dead < r->b.len / 2)
		return;
	memmove(r->b.p, r->b.p + dead, r->b.len - dead);
	r->b.len -= dead;
	for (i = r->first; i < r->n; i++)
		r->off[i - r->first] = r->off[i] - dead;
	r->n -= r->first;
	r->first = 0;
}

static void
recent_add(struct recent *r, const struct jval *o)
{
	json_canon(recent_begin(r), o);
	recent_end(r);
}

/* recent_shown: the shown entries' bytes, without the leading "," */
static const char *
recent_shown(const struct recent *r, size_t *len)
{
	size_t at = r->n > r->first ? r->off[r->first] : r->b.len;

	*len = r->b.len - at;
	return r->b.p + at;
}

static void
recent_release(struct recent *r)
{
	buf_release(&r->b);
	free(r->off);
}

/* activity_detail: a short, content-free description of the event */
static struct jval *
activity_detail(struct proj *p, const char *kind, const struct jval *pl)
{
	struct arena *t = &p->t;
	struct jval *v;
	char *s;

	if (!strcmp(kind, "command.received"))
		return str_or_null(json_get(pl, "command_kind"));
	if (!strcmp(kind, "approval.recorded") ||
	    !strcmp(kind, "confirmation.resolved"))
		return str_or_null(json_get(pl, "decision"));
	if (!strcmp(kind, "tool_call.proposed") ||
	    !strcmp(kind, "tool.execution.recorded"))
		return bounded(t, str_or_null(json_get(pl, "summary")) ?
		    json_get(pl, "summary") : json_get(pl, "tool_name"));
	if (!strcmp(kind, "confirmation.requested"))
		return str_or_null(json_get(json_get(pl, "request"),
		    "group_id"));
	if (!strcmp(kind, "agent.lifecycle.updated"))
		return str_or_null(json_get(pl, "status"));
	if (!strcmp(kind, "model.usage.updated"))
		return str_or_null(json_get(json_get(pl, "usage"),
		    "usage_id"));
	if (!strcmp(kind, "subagent.updated"))
		return str_or_null(json_get(json_get(pl, "subagent"),
		    "status"));
	if (!strcmp(kind, "model_call.decision.recorded"))
		return str_or_null(json_get(json_get(pl, "decision"),
		    "decision"));
	if (!strcmp(kind, "task.plan.updated") &&
	    (v = json_get(pl, "tasks")) && v->t == J_ARRAY) {
		s = arena_alloc(t, 40);
		snprintf(s, 40, "%zu task%s", v->n, v->n == 1 ? "" : "s");
		return json_str(t, s);
	}
	if (!strcmp(kind, "error.recorded"))
		return bounded(t, json_get(pl, "reason"));
	return NULL;
}

static void
add_activity(struct proj *p, int64_t seq, const char *kind,
    const struct jval *pl)
{
	const struct jval *d = activity_detail(p, kind, pl);
	struct buf *b = recent_begin(&p->activity);
	char num[24];

	/* written in key order: this runs for every event */
	buf_adds(b, "{\"detail\":");
	if (d)
		json_canon_str(b, d->u.s, d->n);
	else
		buf_adds(b, "null");
	buf_adds(b, ",\"kind\":");
	json_canon_str(b, kind, strlen(kind));
	buf_adds(b, ",\"label\":\"");
	buf_adds(b, label_of(kind));
	snprintf(num, sizeof num, "\",\"sequence\":%lld}", (long long)seq);
	buf_adds(b, num);
	recent_end(&p->activity);
}

static void
add_conversation(struct proj *p, const struct jval *ev, const char *role,
    const char *label, const struct jval *content, const struct jval *detail,
    const struct jval *technical)
{
	struct arena *t = &p->t;
	struct jval *o = json_obj(t);

	set(t, o, "id", json_get(ev, "event_id"));
	set(t, o, "sequence", json_get(ev, "sequence"));
	set(t, o, "role", json_str(t, role));
	set(t, o, "label", json_str(t, label));
	set(t, o, "content", str_or_null((struct jval *)content));
	set(t, o, "detail", str_or_null((struct jval *)detail));
	set(t, o, "technicalDetail", str_or_null((struct jval *)technical));
	recent_add(&p->conversation, o);
}

/* ---- action records ---- */

static struct action *
find_action(const struct proj *p, const struct jval *id)
{
	if (!id || id->t != J_STRING)
		return NULL;
	return smap_get(&p->by_call, id->u.s, id->n);
}

/* integrity marks a record broken and the session unrecoverable */
static void
integrity(struct proj *p, struct action *r, int64_t seq, const char *why)
{
	char msg[200];

	if (r) {
		r->broken = 1;
		r->state = ST_UNKNOWN;
		r->has_outcome = 0;
		r->updated_seq = seq;
	}
	p->status = "error";
	if (p->unrecoverable)
		return;		/* the first failure is the one to report */
	snprintf(msg, sizeof msg, "integrity failure at sequence %lld: %s",
	    (long long)seq, why);
	p->unrecoverable = 1;
	p->error_reason = json_str(&p->a, msg);
}

static const char *const file_ops[] = { "view", "create", "str_replace",
	"insert", "undo_edit", NULL };

static struct jval *
details_of(struct proj *p, const char *kind, const struct jval *pl)
{
	struct arena *a = &p->a;
	const struct jval *args = json_get(pl, "arguments");
	struct jval *d = json_obj(a), *op;
	const char *const *f;

	if (!kind || (strcmp(kind, "terminal") && strcmp(kind, "file-editor") &&
	    strcmp(kind, "task")))
		kind = "other";
	set(a, d, "kind", json_str(a, kind));
	if (!strcmp(kind, "terminal")) {
		set(a, d, "command", keep(p, str_or_null(json_get(args,
		    "command"))));
		set(a, d, "isInput", json_bool(a, is(json_get(args,
		    "is_input"), "true") || (json_get(args, "is_input") &&
		    json_get(args, "is_input")->t == J_TRUE)));
		op = json_get(args, "timeout");
		set(a, d, "timeout", op && (op->t == J_INT ||
		    op->t == J_FLOAT) ? keep(p, op) : NULL);
		op = json_get(args, "reset");
		set(a, d, "reset", json_bool(a, op && op->t == J_TRUE));
	} else if (!strcmp(kind, "file-editor")) {
		op = json_get(args, "command");
		for (f = file_ops; *f && !is(op, *f); f++)
			;
		set(a, d, "operation", json_str(a, *f ? *f : "unknown"));
		set(a, d, "path", keep(p, str_or_null(json_get(args,
		    "path"))));
	} else if (!strcmp(kind, "task")) {
		set(a, d, "description", keep(p, str_or_null(json_get(args,
		    "description"))));
		set(a, d, "prompt", keep(p, str_or_null(json_get(args,
		    "prompt"))));
		set(a, d, "subagentType", keep(p, str_or_null(json_get(args,
		    "subagent_type"))));
		set(a, d, "roleLabel", keep(p, str_or_null(json_get(pl,
		    "specialist_label"))));
		set(a, d, "capability", keep(p, str_or_null(json_get(pl,
		    "specialist_capability"))));
		op = json_get(args, "resume");
		set(a, d, "resume", op && op->t == J_STRING ? keep(p, op) :
		    NULL);
	}
	return d;
}

/* relative: path made project-relative when it lies under root */
static struct jval *
relative(struct proj *p, const struct jval *path, const struct jval *root)
{
	size_t n;

	if (root && root->t == J_STRING && (n = root->n) > 0 &&
	    path->n > n && !memcmp(path->u.s, root->u.s, n) &&
	    (path->u.s[n] == '/' || root->u.s[n - 1] == '/'))
		return json_strn(&p->a, path->u.s + n + (path->u.s[n] == '/'),
		    path->n - n - (path->u.s[n] == '/'));
	return keep(p, path);
}

static const char *
effect_of(const struct jval *details)
{
	const struct jval *op = json_get(details, "operation");

	if (is(op, "create"))
		return "created";
	if (is(op, "str_replace") || is(op, "insert") || is(op, "undo_edit"))
		return "modified";
	return "unknown";
}

static struct jval *
paths_of(struct proj *p, const struct jval *pl, const struct jval *details)
{
	static const char *const effects[] = { "created", "modified",
		"deleted", "unknown", NULL };
	const struct jval *in = json_get(pl, "affected_paths"), *e, *path;
	const struct jval *root = json_get(pl, "project_path");
	struct arena *a = &p->a;
	struct jval *out = json_new(a, J_ARRAY), *o;
	const char *const *k;
	const char *effect;
	size_t i;

	for (i = 0; in && in->t == J_ARRAY && i < in->n; i++) {
		e = in->u.a[i];
		path = e->t == J_STRING ? e : json_get(e, "path");
		if (!path || path->t != J_STRING)
			continue;
		effect = effect_of(details);
		for (k = effects; e->t == J_OBJECT && *k; k++)
			if (is(json_get(e, "effect"), *k))
				effect = *k;
		o = json_obj(a);
		set(a, o, "path", relative(p, path, root));
		set(a, o, "effect", json_str(a, effect));
		set(a, o, "provenance", json_str(a, "file-editor-action"));
		json_push(a, out, o);
	}
	return out;
}

static void
on_proposed(struct proj *p, int64_t seq, const struct jval *pl)
{
	const struct jval *id = json_get(pl, "tool_call_id");
	struct action *r = find_action(p, id);

	if (!id || id->t != J_STRING || id->n == 0) {
		integrity(p, NULL, seq, "a proposal without a tool_call_id");
		return;
	}
	if (r) {
		integrity(p, r, seq, "a duplicate proposal");
		return;
	}
	r = arena_alloc(&p->a, sizeof *r);
	r->tool_call_id = keep(p, id);
	r->action_id = keep(p, str_or_null(json_get(pl, "action_id")));
	r->tool_name = keep(p, str_or_null(json_get(pl, "tool_name")));
	r->risk = json_str(&p->a, "unknown");
	if (is(json_get(pl, "risk"), "low") || is(json_get(pl, "risk"),
	    "medium") || is(json_get(pl, "risk"), "high"))
		r->risk = keep(p, json_get(pl, "risk"));
	r->summary = keep(p, bounded(&p->t, json_get(pl, "summary")));
	r->arguments = keep(p, json_get(pl, "arguments"));
	r->details = details_of(p, json_get_str(pl, "kind"), pl);
	r->paths = paths_of(p, pl, r->details);
	r->state = ST_PROPOSED;
	r->proposed_seq = r->updated_seq = seq;
	grow(&p->actions, p->nactions, &p->capactions, sizeof *p->actions);
	p->actions[p->nactions++] = r;
	smap_put(&p->by_call, r->tool_call_id->u.s, r->tool_call_id->n, r);
}

/* same_identity: v, when given, names what the record already holds */
static int
same_identity(const struct action *r, const struct jval *pl)
{
	const struct jval *v;

	v = json_get(pl, "action_id");
	if (v && v->t == J_STRING && r->action_id && !json_equal(v,
	    r->action_id))
		return 0;
	v = json_get(pl, "tool_name");
	if (v && v->t == J_STRING && r->tool_name && !json_equal(v,
	    r->tool_name))
		return 0;
	return 1;
}

static struct group *
group_get(struct proj *p, const struct jval *id)
{
	struct group *g;

	if ((g = smap_get(&p->by_group, id->u.s, id->n)))
		return g;
	g = arena_alloc(&p->a, sizeof *g);
	g->id = arena_strndup(&p->a, id->u.s, id->n);
	grow(&p->groups, p->ngroups, &p->capgroups, sizeof *p->groups);
	p->groups[p->ngroups++] = g;
	grow(&p->open, p->nopen, &p->capopen, sizeof *p->open);
	p->open[p->nopen++] = g;
	smap_put(&p->by_group, g->id, id->n, g);
	return g;
}

static void
on_requested(struct proj *p, int64_t seq, const struct jval *pl)
{
	const struct jval *req = json_get(pl, "request");
	const struct jval *gid = json_get(req, "group_id");
	struct action *r = find_action(p, json_get(req, "tool_call_id"));
	struct jval dflt = { .t = J_STRING, .n = 18,
	    .u.s = "pending-action-set" };
	struct group *g;
	size_t i;

	if (!r) {
		integrity(p, NULL, seq, "a review request for an action "
		    "never proposed");
		return;
	}
	if (!same_identity(r, req)) {
		integrity(p, r, seq, "a review request naming another action");
		return;
	}
	g = group_get(p, gid && gid->t == J_STRING && gid->n ? gid : &dflt);
	for (i = 0; i < g->n && strcmp(g->members[i], r->tool_call_id->u.s);
	    i++)
		;
	if (i == g->n) {
		grow(&g->members, g->n, &g->cap, sizeof *g->members);
		g->members[g->n++] = r->tool_call_id->u.s;
	}
	g->seq = seq;
	r->group = g->id;
	if (!r->broken && !r->has_outcome && r->decision == DEC_NONE)
		r->state = ST_AWAITING;
	r->updated_seq = seq;
}

static enum decision
decision_of(const struct jval *v)
{
	if (is(v, "approved") || is(v, "approve") || is(v, "allow"))
		return DEC_APPROVED;
	if (is(v, "denied") || is(v, "rejected") || is(v, "deny") ||
	    is(v, "reject"))
		return DEC_REJECTED;
	return DEC_NONE;
}

static void
decide(struct proj *p, struct action *r, enum decision d, int64_t seq)
{
	r->decision = d;
	if (!r->broken && !r->has_outcome)
		r->state = d == DEC_APPROVED ? ST_APPROVED : ST_REJECTED;
	r->updated_seq = seq;
	(void)p;
}

static void
group_decided(struct proj *p, struct group *g, enum decision d)
{
	size_t i;

	/* decided groups leave the open list: pending_group looks there */
	for (i = 0; i < p->nopen && p->open[i] != g; i++)
		;
	if (i < p->nopen) {
		memmove(p->open + i, p->open + i + 1, (p->nopen - i - 1) *
		    sizeof *p->open);
		p->nopen--;
	}
	g->decision = d;
	p->last_denied = d == DEC_REJECTED;
}

/*
 * decided_elsewhere: an approval without this user's binding (trust.c)
 * leaves its set open, waiting for a decision of theirs, its members
 * awaiting review
 */
static void
decided_elsewhere(struct proj *p, int64_t seq, const struct jval *gid,
    const struct jval *ids)
{
	struct group *g;
	struct action *r;
	size_t i, j;

	if (!gid || gid->t != J_STRING || !gid->n)
		return;
	if ((g = group_get(p, gid))->decision != DEC_NONE)
		return;
	g->elsewhere = 1;
	g->seq = seq;
	for (i = 0; ids && ids->t == J_ARRAY && i < ids->n; i++) {
		if (!(r = find_action(p, ids->u.a[i])) || (r->group &&
		    strcmp(r->group, g->id)))
			continue;
		for (j = 0; j < g->n && strcmp(g->members[j],
		    r->tool_call_id->u.s); j++)
			;
		if (j == g->n) {
			grow(&g->members, g->n, &g->cap, sizeof *g->members);
			g->members[g->n++] = r->tool_call_id->u.s;
		}
		r->group = g->id;
		if (!r->broken && !r->has_outcome && r->decision == DEC_NONE)
			r->state = ST_AWAITING;
	}
}

static void
on_approval(struct proj *p, int64_t seq, const struct jval *ev)
{
	const struct jval *pl = json_get(ev, "payload");
	const struct jval *ids = json_get(pl, "tool_call_ids");
	const struct jval *gid = json_get(pl, "group_id");
	enum decision d = decision_of(json_get(pl, "decision"));
	struct action *r;
	size_t i;

	if (d == DEC_NONE)
		return;
	if (d == DEC_APPROVED && !decision_bound(p->sid, ev, NULL, 0)) {
		decided_elsewhere(p, seq, gid, ids);
		return;
	}
	for (i = 0; ids && ids->t == J_ARRAY && i < ids->n; i++)
		if ((r = find_action(p, ids->u.a[i])))
			decide(p, r, d, seq);
	if (gid && gid->t == J_STRING && gid->n)
		group_decided(p, group_get(p, gid), d);
}

static void
on_resolved(struct proj *p, int64_t seq, const struct jval *pl)
{
	const struct jval *gid = json_get(pl, "group_id");
	struct action *r = find_action(p, json_get(pl, "tool_call_id"));
	enum decision d = decision_of(json_get(pl, "decision"));
	struct group *g = NULL;
	struct action *m;
	size_t i;

	if (!r || d == DEC_NONE)
		return;
	if (gid && gid->t == J_STRING && gid->n)
		g = group_get(p, gid);
	if (g && g->decision != DEC_NONE && g->decision != d) {
		integrity(p, r, seq, "a resolution contradicting the "
		    "recorded decision");
		return;
	}
	decide(p, r, d, seq);
	if (!g || g->decision != DEC_NONE)
		return;
	for (i = 0; i < g->n; i++)
		if (!(m = smap_get(&p->by_call, g->members[i],
		    strlen(g->members[i]))) || m->decision != d)
			return;
	group_decided(p, g, d);
}

static void
on_executed(struct proj *p, int64_t seq, const struct jval *pl)
{
	const struct jval *id = json_get(pl, "tool_call_id");
	struct action *r = find_action(p, id);
	const struct jval *code = json_get(pl, "exit_code");

	p->workspace = seq;
	if (!r) {
		on_proposed(p, seq, pl);
		if (!(r = find_action(p, id)))
			return;
		integrity(p, r, seq, "an execution without a proposal");
		return;
	}
	if (r->decision == DEC_REJECTED) {
		integrity(p, r, seq, "an execution of a rejected action");
		return;
	}
	if (r->has_outcome || r->broken) {
		integrity(p, r, seq, "a second outcome");
		return;
	}
	if (!same_identity(r, pl)) {
		integrity(p, r, seq, "an execution naming another action");
		return;
	}
	r->has_outcome = 1;
	r->exit_code = code && code->t == J_INT ? keep(p, code) : NULL;
	r->out_summary = keep(p, bounded(&p->t, json_get(pl, "summary")));
	r->result = keep(p, str_or_null(json_get(pl, "result")));
	r->truncated = json_bool(&p->a, json_get(pl, "result_truncated") &&
	    json_get(pl, "result_truncated")->t == J_TRUE);
	r->state = code && code->t == J_INT && code->n == 1 &&
	    code->u.s[0] == '0' ? ST_SUCCEEDED : ST_FAILED;
	if (r->decision == DEC_NONE)
		r->decision = DEC_APPROVED;
	r->updated_seq = seq;
}

/* ---- lifecycle, commands, usage, plan, specialists ---- */

static const char *const statuses[] = { "idle", "running", "paused",
	"waiting-for-confirmation", "finished", "error", NULL };

static void
on_lifecycle(struct proj *p, const struct jval *pl)
{
	const char *const *s;

	for (s = statuses; *s && !is(json_get(pl, "status"), *s); s++)
		;
	p->status = *s ? *s : "error";
	if (!*s && !p->unrecoverable)
		p->error_reason = json_str(&p->a, "the agent reported an "
		    "unknown status");
}

static int
fatal_code(const struct jval *code)
{
	return is(code, "HW-AGENT-006") || is(code, "HW-AGENT-007");
}

static void
on_error(struct proj *p, const struct jval *ev, const struct jval *pl)
{
	const struct jval *al = json_get(pl, "affects_lifecycle");
	const struct jval *cid = json_get(pl, "command_id");
	const struct jval *reason = json_get(pl, "reason");

	if (al && al->t == J_FALSE && json_get(pl, "command"))
		add_conversation(p, ev, "trace", "Request not applied", reason,
		    json_get(pl, "command"), NULL);
	else
		add_conversation(p, ev, "trace", "Error", reason, json_get(pl,
		    "code"), json_get(pl, "backend_id"));
	if (al && al->t == J_FALSE) {
		/* a command recorded as not applied */
		if (p->cmd_id && json_get(pl, "command") && (!cid ||
		    json_equal(cid, p->cmd_id))) {
			p->cmd_rejected = 1;
			p->cmd_message = keep(p, str_or_null((struct jval *)
			    reason));
		}
		return;
	}
	p->status = "error";
	if (p->unrecoverable)
		return;
	p->error_reason = keep(p, str_or_null((struct jval *)reason));
	if (fatal_code(json_get(pl, "code")))
		p->unrecoverable = 1;
}

static void
on_command(struct proj *p, const struct jval *pl)
{
	p->cmd_id = keep(p, str_or_null(json_get(pl, "command_id")));
	p->cmd_kind = keep(p, str_or_null(json_get(pl, "command_kind")));
	p->cmd_rejected = 0;
	p->cmd_message = NULL;
}

static int64_t
count_of(const struct jval *u, const char *k)
{
	const struct jval *v = json_get(u, k);
	int64_t n;

	if (!v || v->t != J_INT || v->u.s[0] == '-')
		return 0;	/* negatives are clamped */
	return json_get_int(u, k, &n) < 0 ? INT64_MAX : n;	/* saturated */
}

static void
on_usage(struct proj *p, const struct jval *pl)
{
	const struct jval *u = json_get(pl, "usage"), *id, *c;
	struct usage *x = &p->total;
	size_t i;

	if (!u || !str_or_null(json_get(u, "model_name")))
		return;
	id = json_get(u, "usage_id");
	if (id && id->t == J_STRING && id->n && !is(id, "total")) {
		for (i = 0; i < p->npurposes && strcmp(p->purposes[i]->id,
		    id->u.s); i++)
			;
		if (i == p->npurposes) {
			p->purposes = xrealloc(p->purposes, (i + 1) *
			    sizeof *p->purposes);
			p->purposes[i] = arena_alloc(&p->a, sizeof *x);
			p->purposes[i]->id = keep_str(p, id);
			p->npurposes++;
		}
		x = p->purposes[i];
	}
	x->known = 1;
	x->model = keep(p, json_get(u, "model_name"));
	x->calls = count_of(u, "call_count");
	x->prompt = count_of(u, "prompt_tokens");
	x->completion = count_of(u, "completion_tokens");
	x->cache_read = count_of(u, "cache_read_tokens");
	x->cache_write = count_of(u, "cache_write_tokens");
	x->reasoning = count_of(u, "reasoning_tokens");
	c = json_get(u, "context_window");
	x->window = c && c->t == J_INT && c->u.s[0] != '-' ? keep(p, c) :
	    NULL;
	c = json_get(u, "accumulated_cost");
	x->cost = !c ? 0 : c->t == J_FLOAT ? c->u.d : c->t == J_INT ?
	    strtod(c->u.s, NULL) : 0;
	if (x->cost < 0)
		x->cost = 0;
}

static void
on_subagent(struct proj *p, const struct jval *pl)
{
	const struct jval *s = json_get(pl, "subagent");
	const struct jval *id = json_get(s, "invocation_id");
	struct subagent *x;

	if (!id || id->t != J_STRING || id->n == 0)
		return;
	if (!(x = smap_get(&p->by_invocation, id->u.s, id->n))) {
		x = arena_alloc(&p->a, sizeof *x);
		x->invocation = keep(p, id);
		p->subagents = xrealloc(p->subagents, (p->nsubagents + 1) *
		    sizeof *p->subagents);
		p->subagents[p->nsubagents++] = x;
		smap_put(&p->by_invocation, x->invocation->u.s, id->n, x);
	}
	x->task = keep(p, str_or_null(json_get(s, "task_id")));
	x->name = keep(p, str_or_null(json_get(s, "agent_name")));
	x->role = keep(p, str_or_null(json_get(s, "role_label")));
	x->status = keep(p, str_or_null(json_get(s, "status")));
	x->parent_sid = keep(p, str_or_null(json_get(s,
	    "parent_session_id")));
	x->parent_action = keep(p, str_or_null(json_get(s,
	    "parent_action_id")));
}

/* on_plan: each plan replaces the last, and only one copy is kept */
static void
on_plan(struct proj *p, const struct jval *pl)
{
	arena_clear(&p->plan);
	p->tasks = json_get(pl, "tasks") ? json_copy(&p->plan, json_get(pl,
	    "tasks")) : NULL;
}

static void
on_model_decision(struct proj *p, const struct jval *pl)
{
	const struct jval *d = json_get(pl, "decision");

	p->endpoint = keep(p, str_or_null(json_get(d, "endpoint")));
	p->model_decision = keep(p, str_or_null(json_get(d, "decision")));
	p->model_reason = keep(p, bounded(&p->t, json_get(d, "reason")));
}

/* ---- the reducer ---- */

struct proj *
proj_new(const char *session_id)
{
	struct proj *p = xcalloc(1, sizeof *p);

	arena_init(&p->a);
	arena_init(&p->t);
	arena_init(&p->plan);
	buf_init(&p->scratch);
	buf_init(&p->activity.b);
	buf_init(&p->conversation.b);
	buf_init(&p->stream);
	smap_init(&p->by_call);
	smap_init(&p->by_group);
	smap_init(&p->by_invocation);
	p->sid = xstrdup(session_id);
	p->revision = p->workspace = -1;
	p->status = "idle";
	snprintf(p->epoch, sizeof p->epoch, "standalone");
	p->stream_at = -1;
	return p;
}

void
proj_free(struct proj *p)
{
	size_t i;

	if (!p)
		return;
	/* the groups live in the arena: free their member lists first */
	for (i = 0; i < p->ngroups; i++)
		free(p->groups[i]->members);
	arena_release(&p->a);
	arena_release(&p->t);
	arena_release(&p->plan);
	buf_release(&p->scratch);
	recent_release(&p->activity);
	recent_release(&p->conversation);
	buf_release(&p->stream);
	smap_release(&p->by_call);
	smap_release(&p->by_group);
	smap_release(&p->by_invocation);
	free(p->actions);
	free(p->groups);
	free(p->open);
	free(p->purposes);
	free(p->subagents);
	free(p->sid);
	free(p);
}

int64_t
proj_revision(const struct proj *p)
{
	return p->revision;
}

void
proj_apply(struct proj *p, const struct jval *ev)
{
	const char *kind = json_get_str(ev, "kind");
	const struct jval *pl = json_get(ev, "payload");
	int64_t seq = p->revision + 1;

	arena_clear(&p->t);
	json_get_int(ev, "sequence", &seq);
	if (!kind)
		kind = "";
	p->count++;
	p->revision = seq;
	add_activity(p, seq, kind, pl);
	if (!strcmp(kind, "command.received"))
		on_command(p, pl);
	else if (!strcmp(kind, "user_message.recorded")) {
		p->user_messages++;
		add_conversation(p, ev, "user", "You", json_get(pl, "content"),
		    NULL, NULL);
	} else if (!strcmp(kind, "agent_message.emitted") &&
	    json_get(pl, "condensation")) {
		add_conversation(p, ev, "trace", "Summary of earlier work",
		    json_get(pl, "content"), NULL, NULL);
	} else if (!strcmp(kind, "agent_message.emitted"))
		add_conversation(p, ev, "agent", "Agent", json_get(pl,
		    "content"), NULL, NULL);
	else if (!strcmp(kind, "tool_call.proposed"))
		on_proposed(p, seq, pl);
	else if (!strcmp(kind, "confirmation.requested"))
		on_requested(p, seq, pl);
	else if (!strcmp(kind, "approval.recorded"))
		on_approval(p, seq, ev);
	else if (!strcmp(kind, "confirmation.resolved"))
		on_resolved(p, seq, pl);
	else if (!strcmp(kind, "tool.execution.recorded"))
		on_executed(p, seq, pl);
	else if (!strcmp(kind, "agent.lifecycle.updated"))
		on_lifecycle(p, pl);
	else if (!strcmp(kind, "session.paused"))
		p->status = "paused";
	else if (!strcmp(kind, "session.resumed"))
		p->status = "running";
	else if (!strcmp(kind, "error.recorded"))
		on_error(p, ev, pl);
	else if (!strcmp(kind, "task.plan.updated"))
		on_plan(p, pl);
	else if (!strcmp(kind, "model.usage.updated"))
		on_usage(p, pl);
	else if (!strcmp(kind, "subagent.updated"))
		on_subagent(p, pl);
	else if (!strcmp(kind, "model_call.decision.recorded"))
		on_model_decision(p, pl);
	else if (!strcmp(kind, "audit.export.recorded"))
		add_conversation(p, ev, "trace", "Audit exported", NULL, NULL,
		    NULL);
}

int
proj_event(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	(void)line, (void)n;
	proj_apply(ctx, ev);
	return 0;
}

int
proj_stream(struct proj *p, const struct jval *rec)
{
	const struct jval *epoch = json_get(rec, "epoch");
	const struct jval *text = json_get(rec, "text");
	int64_t rev, srev;

	if (!rec || rec->t != J_OBJECT || !epoch || epoch->t != J_STRING ||
	    epoch->n == 0 || epoch->n >= sizeof p->epoch ||
	    strlen(epoch->u.s) != epoch->n || !text || text->t != J_STRING ||
	    json_get_int(rec, "revision", &rev) < 0 ||
	    json_get_int(rec, "streamRevision", &srev) < 0 || srev < 0)
		return hw_err_set(HW_EXIT_DATA, "stream record is malformed: "
		    "want {epoch, revision, streamRevision, text}");
	if (strcmp(epoch->u.s, p->epoch)) {
		memcpy(p->epoch, epoch->u.s, epoch->n + 1);
	} else if (rev < p->stream_at || (rev == p->stream_at &&
	    srev <= p->stream_rev)) {
		return 0;
	}
	p->stream_at = rev;
	p->stream_rev = srev;
	buf_clear(&p->stream);
	buf_add(&p->stream, text->u.s, text->n);
	return 1;
}

/* ---- emission ---- */

/* undecided: a member of g is still without a decision or an outcome */
static int
undecided(const struct proj *p, const struct group *g)
{
	const struct action *r;
	size_t j;

	for (j = 0; j < g->n; j++)
		if ((r = smap_get(&p->by_call, g->members[j],
		    strlen(g->members[j]))) && r->decision == DEC_NONE &&
		    !r->has_outcome && !r->broken)
			return 1;
	return 0;
}

static struct group *
pending_group(const struct proj *p)
{
	struct group *best = NULL, *g;
	size_t i, j;

	for (i = 0; i < p->nopen; i++) {
		g = p->open[i];
		if (g->decision != DEC_NONE || (best && best->seq > g->seq) ||
		    (g->elsewhere && !undecided(p, g)))
			continue;
		for (j = 0; j < g->n; j++)
			if (smap_get(&p->by_call, g->members[j],
			    strlen(g->members[j])))
				break;
		if (j < g->n)
			best = g;
	}
	return best;
}

/* status: the lifecycle status the projection shows */
static const char *
status(const struct proj *p, const struct group *pending)
{
	if (p->unrecoverable)
		return "error";
	if (pending && strcmp(p->status, "error") && strcmp(p->status,
	    "paused"))
		return "waiting-for-confirmation";
	return p->status;
}

static enum state
shown_state(const struct proj *p, const struct action *r, const char *st)
{
	if (r->broken || r->has_outcome)
		return r->state;
	if (p->unrecoverable && r->state != ST_REJECTED &&
	    r->state != ST_AWAITING)
		return ST_UNKNOWN;
	if (!strcmp(st, "running") && (r->state == ST_APPROVED ||
	    r->state == ST_PROPOSED))
		return ST_RUNNING;
	return r->state;
}

static struct jval *
action_json(struct proj *p, const struct action *r, const char *st)
{
	struct arena *t = &p->t;
	struct jval *o = json_obj(t), *out = NULL;

	set(t, o, "schema_version", json_str(t, "heartwood.action-record.v1"));
	set(t, o, "toolCallId", r->tool_call_id);
	set(t, o, "actionId", r->action_id);
	set(t, o, "groupId", r->group ? json_str(t, r->group) : NULL);
	set(t, o, "toolName", r->tool_name);
	set(t, o, "risk", r->risk);
	set(t, o, "summary", r->summary);
	set(t, o, "arguments", r->arguments);
	set(t, o, "details", r->details);
	set(t, o, "affectedPaths", r->paths);
	set(t, o, "state", json_str(t, state_name[shown_state(p, r, st)]));
	set(t, o, "decision", r->decision ? json_str(t,
	    decision_name[r->decision]) : NULL);
	if (r->has_outcome && !r->broken) {
		out = json_obj(t);
		set(t, out, "exitCode", r->exit_code);
		set(t, out, "summary", r->out_summary);
		set(t, out, "result", r->result);
		set(t, out, "resultTruncated", r->truncated);
	}
	set(t, o, "outcome", out);
	set(t, o, "proposedSequence", json_int(t, r->proposed_seq));
	set(t, o, "updatedSequence", json_int(t, r->updated_seq));
	return o;
}

static struct jval *
pending_json(struct proj *p, const struct group *g, const char *st)
{
	struct arena *t = &p->t;
	struct jval *o, *list;
	struct action *r;
	size_t i;

	if (!g)
		return NULL;
	o = json_obj(t);
	list = json_new(t, J_ARRAY);
	for (i = 0; i < g->n; i++)
		if ((r = smap_get(&p->by_call, g->members[i],
		    strlen(g->members[i]))))
			json_push(t, list, action_json(p, r, st));
	set(t, o, "groupId", json_str(t, g->id));
	set(t, o, "actions", list);
	set(t, o, "decision", NULL);
	set(t, o, "decisionScope", json_str(t, "all"));
	set(t, o, "decidedElsewhere", json_bool(t, g->elsewhere));
	return o;
}

static struct jval *
strings(struct arena *t, const char *const *s)
{
	struct jval *l = json_new(t, J_ARRAY);

	for (; *s; s++)
		json_push(t, l, json_str(t, *s));
	return l;
}

static const char *const *
available(const struct proj *p, const struct group *g, const char *st)
{
	static const char *const none[] = { NULL };
	static const char *const review[] = { "approve", "deny", NULL };
	static const char *const running[] = { "chat", "pause", NULL };
	static const char *const paused[] = { "chat", "resume", NULL };
	static const char *const chat[] = { "chat", NULL };

	if (p->unrecoverable)
		return none;
	if (g)
		return review;
	if (!strcmp(st, "running"))
		return running;
	if (!strcmp(st, "paused"))
		return paused;
	return chat;
}

static struct jval *
lifecycle_json(struct proj *p, const char *st)
{
	struct arena *t = &p->t;
	struct jval *o = json_obj(t);
	int steer = !strcmp(st, "idle") || !strcmp(st, "running") ||
	    !strcmp(st, "paused") || !strcmp(st, "finished") ||
	    (!strcmp(st, "error") && !p->unrecoverable);

	set(t, o, "status", json_str(t, st));
	set(t, o, "canPause", json_bool(t, !strcmp(st, "running")));
	set(t, o, "canResume", json_bool(t, !strcmp(st, "paused")));
	set(t, o, "canSteer", json_bool(t, steer));
	return o;
}

static struct jval *
researcher_status(struct proj *p, const struct group *g, const char *st)
{
	static const struct {
		const char *code, *label, *detail, *tone;
	} rs[] = {
		{ "terminal-failure", "Session cannot continue", NULL,
		  "danger" },
		{ "waiting-for-review", "Waiting for your review",
		  "Allow the complete action set once, or reject it.",
		  "attention" },
		{ "recoverable-failure", "Something went wrong", NULL,
		  "warning" },
		{ "paused", "Paused", "Resume to let the agent continue.",
		  "neutral" },
		{ "working", "Working", "The agent is working.", "active" },
		{ "complete", "Complete", "The agent finished its task.",
		  "success" },
		{ "denied", "Action set rejected",
		  "The rejected actions did not run.", "warning" },
		{ "ready", "Ready", "Ask for a task to begin.", "neutral" },
	};
	static const char elsewhere[] = "This action set was decided "
	    "elsewhere, not by you on this machine: nothing in it runs until "
	    "you allow or reject it yourself.";
	struct arena *t = &p->t;
	struct jval *o = json_obj(t);
	size_t i;

	i = p->unrecoverable ? 0 : g ? 1 : !strcmp(st, "error") ? 2 :
	    !strcmp(st, "paused") ? 3 : !strcmp(st, "running") ||
	    !strcmp(st, "waiting-for-confirmation") ? 4 :
	    !strcmp(st, "finished") ? 5 : p->last_denied ? 6 : 7;
	set(t, o, "code", json_str(t, rs[i].code));
	set(t, o, "label", json_str(t, rs[i].label));
	set(t, o, "detail", i == 1 && g->elsewhere ? json_str(t, elsewhere) :
	    rs[i].detail ? json_str(t, rs[i].detail) :
	    bounded(t, p->error_reason));
	set(t, o, "tone", json_str(t, rs[i].tone));
	set(t, o, "recoverable", json_bool(t, !p->unrecoverable));
	return o;
}

static void
command_json(struct proj *p, struct jval **outcome, struct jval **notice)
{
	struct arena *t = &p->t;
	struct jval *o;
	char *id;
	size_t n;

	*outcome = *notice = NULL;
	if (!p->cmd_id)
		return;
	o = *outcome = json_obj(t);
	set(t, o, "commandId", p->cmd_id);
	set(t, o, "commandKind", p->cmd_kind);
	set(t, o, "status", json_str(t, p->cmd_rejected ? "rejected" :
	    "accepted"));
	set(t, o, "errorCode", p->cmd_rejected ? json_str(t,
	    "request-not-applied") : NULL);
	set(t, o, "message", p->cmd_message);
	if (!p->cmd_rejected)
		return;
	n = p->cmd_id->n + 20;
	id = arena_alloc(t, n);
	snprintf(id, n, "command:%s:rejected", p->cmd_id->u.s);
	o = *notice = json_obj(t);
	set(t, o, "id", json_str(t, id));
	set(t, o, "code", json_str(t, "request-not-applied"));
	set(t, o, "title", json_str(t, "Request Not Applied"));
	set(t, o, "message", p->cmd_message);
	set(t, o, "tone", json_str(t, "warning"));
}

static struct jval *
plan_json(struct proj *p, int *unfinished)
{
	struct arena *t = &p->t;
	struct jval *l = json_new(t, J_ARRAY), *o, *task, *s;
	const char *code, *label;
	size_t i;

	*unfinished = 0;
	for (i = 0; p->tasks && p->tasks->t == J_ARRAY && i < p->tasks->n;
	    i++) {
		task = p->tasks->u.a[i];
		s = json_get(task, "status");
		code = is(s, "done") ? "done" : is(s, "in-progress") ||
		    is(s, "in_progress") ? "in-progress" : "todo";
		label = code[0] == 'd' ? "Done" : code[0] == 'i' ?
		    "In progress" : "To do";
		*unfinished += code[0] != 'd';
		o = json_obj(t);
		set(t, o, "title", bounded(t, json_get(task, "title")));
		set(t, o, "status", json_str(t, code));
		set(t, o, "statusLabel", json_str(t, label));
		json_push(t, l, o);
	}
	return l;
}

static const char *
purpose_label(struct arena *t, const char *id)
{
	char *s;

	if (!strcmp(id, "total"))
		return "Total";
	s = arena_strndup(t, id, strlen(id));
	if (s[0] >= 'a' && s[0] <= 'z')
		s[0] -= 'a' - 'A';
	return s;
}

static struct jval *
usage_json(struct arena *t, const struct usage *u, const char *id)
{
	struct jval *o = json_obj(t), *cost = json_new(t, J_FLOAT);

	cost->u.d = u->cost;
	set(t, o, "usageId", json_str(t, id));
	set(t, o, "purposeLabel", json_str(t, purpose_label(t, id)));
	set(t, o, "modelName", u->model);
	set(t, o, "callCount", json_int(t, u->calls));
	set(t, o, "promptTokens", json_int(t, u->prompt));
	set(t, o, "completionTokens", json_int(t, u->completion));
	set(t, o, "cacheReadTokens", json_int(t, u->cache_read));
	set(t, o, "cacheWriteTokens", json_int(t, u->cache_write));
	set(t, o, "reasoningTokens", json_int(t, u->reasoning));
	set(t, o, "contextWindow", u->window);
	set(t, o, "accumulatedCost", cost);
	return o;
}

static int64_t
add_sat(int64_t x, int64_t y)
{
	return x > INT64_MAX - y ? INT64_MAX : x + y;
}

/* usage: the recorded total, else the sum of the purposes, else null */
static struct jval *
total_json(struct proj *p)
{
	struct usage sum = { 0 };
	const struct usage *u;
	size_t i;

	if (p->total.known)
		return usage_json(&p->t, &p->total, "total");
	if (!p->npurposes)
		return NULL;
	for (i = 0; i < p->npurposes; i++) {
		u = p->purposes[i];
		sum.calls = add_sat(sum.calls, u->calls);
		sum.prompt = add_sat(sum.prompt, u->prompt);
		sum.completion = add_sat(sum.completion, u->completion);
		sum.cache_read = add_sat(sum.cache_read, u->cache_read);
		sum.cache_write = add_sat(sum.cache_write, u->cache_write);
		sum.reasoning = add_sat(sum.reasoning, u->reasoning);
		sum.cost += u->cost;
		if (!sum.model)
			sum.model = u->model;
		if (!sum.window)
			sum.window = u->window;
	}
	return usage_json(&p->t, &sum, "total");
}

static const struct action *
action_by_id(const struct proj *p, const struct jval *action_id)
{
	size_t i;

	for (i = 0; action_id && i < p->nactions; i++)
		if (json_equal(p->actions[i]->action_id, action_id))
			return p->actions[i];
	return NULL;
}

static struct jval *
subagents_json(struct proj *p)
{
	static const char *const known[] = { "proposed", "running",
		"completed", "error", NULL };
	static const char *const known_label[] = { "Proposed", "Running",
		"Completed", "Error" };
	struct arena *t = &p->t;
	struct jval *l = json_new(t, J_ARRAY), *o;
	const struct subagent *x;
	const struct action *r;
	const char *st, *label;
	size_t i, k;

	for (i = 0; i < p->nsubagents; i++) {
		x = p->subagents[i];
		r = action_by_id(p, x->parent_action);
		for (k = 0; known[k] && !is(x->status, known[k]); k++)
			;
		st = known[k] ? known[k] : "proposed";
		label = known[k] ? known_label[k] : "Proposed";
		if (r && r->decision == DEC_REJECTED) {
			st = "rejected";
			label = "Rejected";
		}
		o = json_obj(t);
		set(t, o, "invocationId", x->invocation);
		set(t, o, "taskId", x->task);
		set(t, o, "agentName", x->name);
		set(t, o, "roleLabel", x->role);
		set(t, o, "status", json_str(t, st));
		set(t, o, "statusLabel", json_str(t, label));
		set(t, o, "taskSummary", r ? bounded(t, json_get(r->details,
		    "description")) : NULL);
		set(t, o, "resultSummary", r && r->has_outcome ? bounded(t,
		    r->out_summary) : NULL);
		set(t, o, "parentSessionId", x->parent_sid);
		set(t, o, "parentActionId", x->parent_action);
		json_push(t, l, o);
	}
	return l;
}

static const struct {
	const char *id, *label, *prompt, *kind;
} suggestion[] = {
	{ "inspect-project", "Inspect this project", "Look around this "
	  "project and summarize its structure, its purpose and how to run "
	  "it.", "task" },
	{ "plan-project", "Plan the work", "Propose a short plan for the "
	  "next piece of work in this project.", "task" },
	{ "continue-plan", "Continue the plan", "Continue with the next "
	  "unfinished task in the plan.", "follow-up" },
	{ "review-changes", "Review the changes", "Review the changes you "
	  "made and point out anything risky.", "follow-up" },
	{ "verify-work", "Verify the work", "Run the project's checks to "
	  "verify the changes.", "follow-up" },
	{ "recover-task", "Recover the task", "Explain what went wrong, "
	  "then try again safely.", "recovery" },
	{ "identify-next-step", "Identify the next step", "What is the most "
	  "useful next step?", "follow-up" },
};
enum { S_INSPECT, S_PLAN, S_CONTINUE, S_REVIEW, S_VERIFY, S_RECOVER,
	S_NEXT };

static struct jval *
suggestions_json(struct proj *p, const char *st, int unfinished)
{
	struct arena *t = &p->t;
	struct jval *l = json_new(t, J_ARRAY), *o;
	int pick[4], n = 0, i;

	if (p->unrecoverable || strcmp(st, "running") == 0 ||
	    strcmp(st, "paused") == 0 ||
	    strcmp(st, "waiting-for-confirmation") == 0) {
		return l;
	} else if (!strcmp(st, "error")) {
		pick[n++] = S_RECOVER;
		pick[n++] = S_NEXT;
	} else if (!p->user_messages) {
		pick[n++] = S_INSPECT;
		pick[n++] = S_PLAN;
	} else {
		if (unfinished)
			pick[n++] = S_CONTINUE;
		if (p->workspace >= 0 && !strcmp(st, "finished")) {
			pick[n++] = S_REVIEW;
			pick[n++] = S_VERIFY;
		}
		pick[n++] = S_NEXT;
	}
	for (i = 0; i < n && i < 2; i++) {
		o = json_obj(t);
		set(t, o, "id", json_str(t, suggestion[pick[i]].id));
		set(t, o, "label", json_str(t, suggestion[pick[i]].label));
		set(t, o, "prompt", json_str(t, suggestion[pick[i]].prompt));
		set(t, o, "kind", json_str(t, suggestion[pick[i]].kind));
		json_push(t, l, o);
	}
	return l;
}

/* a top-level member: a value, or encoded entries to put in [ ] */
struct member {
	const char *k;
	const struct jval *v;
	const struct recent *raw;
};

static int
member_order(const void *x, const void *y)
{
	return strcmp(((const struct member *)x)->k,
	    ((const struct member *)y)->k);
}

static void
emit_members(struct buf *b, struct member *m, size_t n)
{
	const char *raw;
	size_t i, len;

	qsort(m, n, sizeof *m, member_order);
	buf_addc(b, '{');
	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(b, ',');
		json_canon_str(b, m[i].k, strlen(m[i].k));
		buf_addc(b, ':');
		if (m[i].raw) {
			raw = recent_shown(m[i].raw, &len);
			buf_addc(b, '[');
			buf_add(b, raw, len);
			buf_addc(b, ']');
		} else if (m[i].v) {
			json_canon(b, m[i].v);
		} else {
			buf_adds(b, "null");
		}
	}
	buf_addc(b, '}');
}

void
proj_emit(struct proj *p, struct buf *b)
{
	struct arena *t = &p->t;
	struct group *g = pending_group(p);
	const char *st = status(p, g);
	struct jval *actions, *ctx, *outcome, *notice, *purposes;
	struct jval *text = NULL;
	int unfinished;
	size_t i;

	arena_clear(t);
	actions = json_new(t, J_ARRAY);
	ctx = json_obj(t);
	purposes = json_new(t, J_ARRAY);
	for (i = p->nactions > SHOWN_MAX ? p->nactions - SHOWN_MAX : 0;
	    i < p->nactions; i++)
		json_push(t, actions, action_json(p, p->actions[i], st));
	set(t, ctx, "modelEndpoint", p->endpoint);
	set(t, ctx, "modelDecision", p->model_decision);
	set(t, ctx, "modelReason", p->model_reason);
	command_json(p, &outcome, &notice);
	for (i = 0; i < p->npurposes; i++)
		json_push(t, purposes, usage_json(t, p->purposes[i],
		    p->purposes[i]->id));
	if (!strcmp(st, "running") && p->stream_at == p->revision &&
	    p->stream.len)
		text = json_strn(t, p->stream.p, p->stream.len);
	{
		struct jval *plan = plan_json(p, &unfinished);
		struct member m[] = {
			{ "schema_version", json_str(t,
			    "heartwood.session-projection.v1"), NULL },
			{ "sessionId", json_str(t, p->sid), NULL },
			{ "eventCount", json_int(t, p->count), NULL },
			{ "revision", json_int(t, p->revision), NULL },
			{ "workspaceRevision", json_int(t, p->workspace),
			    NULL },
			{ "streamEpoch", json_str(t, p->epoch), NULL },
			{ "streamRevision", json_int(t, p->stream_rev),
			    NULL },
			{ "activity", NULL, &p->activity },
			{ "conversation", NULL, &p->conversation },
			{ "actions", actions, NULL },
			{ "pendingApproval", pending_json(p, g, st), NULL },
			{ "context", ctx, NULL },
			{ "lifecycle", lifecycle_json(p, st), NULL },
			{ "researcherStatus", researcher_status(p, g, st),
			    NULL },
			{ "researcherNotice", notice, NULL },
			{ "lastCommandOutcome", outcome, NULL },
			{ "taskPlan", plan, NULL },
			{ "usage", total_json(p), NULL },
			{ "usageByPurpose", purposes, NULL },
			{ "subagents", subagents_json(p), NULL },
			{ "suggestions", suggestions_json(p, st, unfinished),
			    NULL },
			{ "streamingText", text, NULL },
			{ "availableCommands", strings(t, available(p, g, st)),
			    NULL },
			{ "paused", json_bool(t, !strcmp(st, "paused")),
			    NULL },
		};

		emit_members(b, m, sizeof m / sizeof *m);
	}
}

int
proj_available(struct proj *p, const char *kind, const char *target,
    const char **why)
{
	struct group *g = pending_group(p);
	const char *st = status(p, g);
	const char *const *k;

	*why = NULL;
	if (!strcmp(kind, "audit.export"))
		return 1;
	if (!strcmp(kind, "replay") && !p->unrecoverable)
		return 1;
	for (k = available(p, g, st); *k && strcmp(*k, kind); k++)
		;
	if (!*k && g && g->elsewhere) {
		snprintf(p->why, sizeof p->why, "%s is unavailable while action "
		    "set '%.100s' waits for review: it was decided elsewhere, "
		    "not by you on this machine; review it and decide it "
		    "yourself (hw allow %.100s or hw reject)", kind, g->id,
		    g->id);
		*why = p->why;
		return 0;
	}
	if (!*k) {
		snprintf(p->why, sizeof p->why, "%s is unavailable while the "
		    "agent is %s", kind, p->unrecoverable ? "stopped by an "
		    "unrecoverable error" : st);
		*why = p->why;
		return 0;
	}
	if ((!strcmp(kind, "approve") || !strcmp(kind, "deny")) &&
	    (!target || strcmp(target, g->id))) {
		snprintf(p->why, sizeof p->why, "%s names '%.100s', not the "
		    "pending action set '%.100s'", kind, target ? target : "",
		    g->id);
		*why = p->why;
		return 0;
	}
	return 1;
}

const char *
proj_pending(const struct proj *p, const char *const **ids, size_t *n)
{
	struct group *g = pending_group(p);

	*ids = g ? g->members : NULL;
	*n = g ? g->n : 0;
	return g ? g->id : NULL;
}
