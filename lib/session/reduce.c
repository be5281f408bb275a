/*
 * reduce.c - the one reducer from session events to the state behind the
 * session projection (heartwood.session-projection.v1); emit.c writes
 * the projection and the command availability it implies
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/proj.h"

const char *const state_name[] = { "proposed", "awaiting-review",
	"approved", "rejected", "running", "succeeded", "failed",
	"outcome-unknown" };
const char *const decision_name[] = { NULL, "approved", "rejected" };

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
	if (d == DEC_APPROVED) {
		/* kept, so that a snapshot can tell its bindings still hold */
		grow(&p->approvals, p->napprovals, &p->capapprovals,
		    sizeof *p->approvals);
		p->approvals[p->napprovals].ev = keep(p, ev);
		p->approvals[p->napprovals].bound = decision_bound(p->sid, ev,
		    NULL, 0);
		if (!p->approvals[p->napprovals++].bound) {
			decided_elsewhere(p, seq, gid, ids);
			return;
		}
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
	/* null: no route reported a price, unknown (NAN), never 0 */
	c = json_get(u, "accumulated_cost");
	x->cost = !c ? 0 : c->t == J_FLOAT ? c->u.d : c->t == J_INT ?
	    strtod(c->u.s, NULL) : c->t == J_NULL ? NAN : 0;
	if (x->cost < 0)
		x->cost = 0;
}

/* num_or_null: v when a number, else NULL */
static const struct jval *
num_or_null(const struct jval *v)
{
	return v && (v->t == J_FLOAT || v->t == J_INT) ? v : NULL;
}

static void
on_subagent(struct proj *p, const struct jval *pl)
{
	const struct jval *s = json_get(pl, "subagent");
	const struct jval *id = json_get(s, "invocation_id"), *c;
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
	x->failure = keep(p, str_or_null(json_get(s, "failure")));
	x->cost = keep(p, num_or_null(json_get(s, "accumulated_cost")));
	x->budget = keep(p, num_or_null(json_get(s, "max_budget_per_run")));
	c = json_get(s, "conversation");
	x->conversation = keep(p, c && c->t == J_OBJECT ? c : NULL);
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
	p->policy_id = keep(p, str_or_null(json_get(d, "policy_profile_id")));
	p->isolation = keep(p, str_or_null(json_get(json_get(pl,
	    "model_profile"), "credential_isolation")));
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
	free(p->approvals);
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

