/*
 * snap.c - the reducer's state at a verified position, kept beside the
 * logs (.projection-snapshot.json) so that a command reduces only the
 * events after it
 */
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/proj.h"

#define SNAP_FILE ".projection-snapshot.json"
#define SNAP_MAX (256u << 20)

/* ---- saving: every field of struct proj that events set ---- */

/* opt: [] for what the reducer does not have, [v] for what it has */
static struct jval *
opt(struct arena *a, const struct jval *v)
{
	struct jval *o = json_new(a, J_ARRAY);

	if (v)
		json_push(a, o, (struct jval *)v);
	return o;
}

static struct jval *
opt_str(struct arena *a, const char *s)
{
	return opt(a, s ? json_str(a, s) : NULL);
}

static struct jval *
recent_save(struct arena *a, const struct recent *r)
{
	struct jval *o = json_new(a, J_ARRAY);
	size_t i, end;

	for (i = r->first; i < r->n; i++) {
		end = i + 1 < r->n ? r->off[i + 1] - 1 : r->b.len;
		json_push(a, o, json_strn(a, r->b.p + r->off[i],
		    end - r->off[i]));
	}
	return o;
}

static struct jval *
action_save(struct arena *a, const struct action *r)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "action_id", opt(a, r->action_id));
	json_add(a, o, "arguments", opt(a, r->arguments));
	json_add(a, o, "broken", json_int(a, r->broken));
	json_add(a, o, "decision", json_int(a, r->decision));
	json_add(a, o, "details", opt(a, r->details));
	json_add(a, o, "exit_code", opt(a, r->exit_code));
	json_add(a, o, "group", opt_str(a, r->group));
	json_add(a, o, "has_outcome", json_int(a, r->has_outcome));
	json_add(a, o, "out_summary", opt(a, r->out_summary));
	json_add(a, o, "paths", opt(a, r->paths));
	json_add(a, o, "proposed_seq", json_int(a, r->proposed_seq));
	json_add(a, o, "result", opt(a, r->result));
	json_add(a, o, "risk", opt(a, r->risk));
	json_add(a, o, "state", json_int(a, r->state));
	json_add(a, o, "summary", opt(a, r->summary));
	json_add(a, o, "tool_call_id", r->tool_call_id);
	json_add(a, o, "tool_name", opt(a, r->tool_name));
	json_add(a, o, "truncated", opt(a, r->truncated));
	json_add(a, o, "updated_seq", json_int(a, r->updated_seq));
	return o;
}

static struct jval *
group_save(struct arena *a, const struct group *g)
{
	struct jval *o = json_obj(a), *m = json_new(a, J_ARRAY);
	size_t i;

	for (i = 0; i < g->n; i++)
		json_push(a, m, json_str(a, g->members[i]));
	json_add(a, o, "decision", json_int(a, g->decision));
	json_add(a, o, "elsewhere", json_int(a, g->elsewhere));
	json_add(a, o, "id", json_str(a, g->id));
	json_add(a, o, "members", m);
	json_add(a, o, "seq", json_int(a, g->seq));
	return o;
}

static struct jval *
usage_save(struct arena *a, const struct usage *u)
{
	struct jval *o = json_obj(a);
	char cost[64];

	/* exactly, infinity too: a hexadecimal float */
	snprintf(cost, sizeof cost, "%a", u->cost);
	json_add(a, o, "cache_read", json_int(a, u->cache_read));
	json_add(a, o, "cache_write", json_int(a, u->cache_write));
	json_add(a, o, "calls", json_int(a, u->calls));
	json_add(a, o, "completion", json_int(a, u->completion));
	json_add(a, o, "cost", json_str(a, cost));
	json_add(a, o, "id", opt_str(a, u->id));
	json_add(a, o, "known", json_int(a, u->known));
	json_add(a, o, "model", opt(a, u->model));
	json_add(a, o, "prompt", json_int(a, u->prompt));
	json_add(a, o, "reasoning", json_int(a, u->reasoning));
	json_add(a, o, "window", opt(a, u->window));
	return o;
}

static struct jval *
subagent_save(struct arena *a, const struct subagent *x)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "invocation", x->invocation);
	json_add(a, o, "name", opt(a, x->name));
	json_add(a, o, "parent_action", opt(a, x->parent_action));
	json_add(a, o, "parent_sid", opt(a, x->parent_sid));
	json_add(a, o, "role", opt(a, x->role));
	json_add(a, o, "status", opt(a, x->status));
	json_add(a, o, "task", opt(a, x->task));
	json_add(a, o, "failure", opt(a, x->failure));
	json_add(a, o, "cost", opt(a, x->cost));
	json_add(a, o, "budget", opt(a, x->budget));
	json_add(a, o, "conversation", opt(a, x->conversation));
	return o;
}

static struct jval *
lists_save(struct arena *a, const struct proj *p, struct jval *o)
{
	struct jval *l;
	size_t i, j;

	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->nactions; i++)
		json_push(a, l, action_save(a, p->actions[i]));
	json_add(a, o, "actions", l);
	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->ngroups; i++)
		json_push(a, l, group_save(a, p->groups[i]));
	json_add(a, o, "groups", l);
	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->nopen; i++) {
		for (j = 0; j < p->ngroups && p->groups[j] != p->open[i]; j++)
			;
		json_push(a, l, json_int(a, (int64_t)j));
	}
	json_add(a, o, "open", l);
	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->npurposes; i++)
		json_push(a, l, usage_save(a, p->purposes[i]));
	json_add(a, o, "purposes", l);
	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->nsubagents; i++)
		json_push(a, l, subagent_save(a, p->subagents[i]));
	json_add(a, o, "subagents", l);
	l = json_new(a, J_ARRAY);
	for (i = 0; i < p->napprovals; i++) {
		struct jval *pair = json_new(a, J_ARRAY);

		json_push(a, pair, p->approvals[i].ev);
		json_push(a, pair, json_bool(a, p->approvals[i].bound));
		json_push(a, l, pair);
	}
	json_add(a, o, "approvals", l);
	return o;
}

struct jval *
proj_save(struct arena *a, const struct proj *p)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "activity", recent_save(a, &p->activity));
	json_add(a, o, "cmd_id", opt(a, p->cmd_id));
	json_add(a, o, "cmd_kind", opt(a, p->cmd_kind));
	json_add(a, o, "cmd_message", opt(a, p->cmd_message));
	json_add(a, o, "cmd_rejected", json_int(a, p->cmd_rejected));
	json_add(a, o, "conversation", recent_save(a, &p->conversation));
	json_add(a, o, "count", json_int(a, p->count));
	json_add(a, o, "endpoint", opt(a, p->endpoint));
	json_add(a, o, "error_reason", opt(a, p->error_reason));
	json_add(a, o, "last_denied", json_int(a, p->last_denied));
	json_add(a, o, "model_decision", opt(a, p->model_decision));
	json_add(a, o, "model_reason", opt(a, p->model_reason));
	json_add(a, o, "policy_id", opt(a, p->policy_id));
	json_add(a, o, "isolation", opt(a, p->isolation));
	json_add(a, o, "revision", json_int(a, p->revision));
	json_add(a, o, "status", json_str(a, p->status));
	json_add(a, o, "tasks", opt(a, p->tasks));
	json_add(a, o, "total", usage_save(a, &p->total));
	json_add(a, o, "unrecoverable", json_int(a, p->unrecoverable));
	json_add(a, o, "user_messages", json_int(a, p->user_messages));
	json_add(a, o, "workspace", json_int(a, p->workspace));
	return lists_save(a, p, o);
}

/* ---- loading: anything unexpected refuses the whole snapshot ---- */

struct ld {
	struct proj *p;
	int bad;
};

/* get: member k of o, which must be there */
static const struct jval *
get(struct ld *l, const struct jval *o, const char *k)
{
	const struct jval *v = json_get(o, k);

	if (!v)
		l->bad = 1;
	return v;
}

/* get_opt: the value in [v], kept in the proj's arena, or NULL for [] */
static struct jval *
get_opt(struct ld *l, const struct jval *o, const char *k)
{
	const struct jval *v = get(l, o, k);

	if (!v || v->t != J_ARRAY || v->n > 1) {
		l->bad = 1;
		return NULL;
	}
	return v->n ? json_copy(&l->p->a, v->u.a[0]) : NULL;
}

static const char *
get_opt_str(struct ld *l, const struct jval *o, const char *k)
{
	struct jval *v = get_opt(l, o, k);

	if (v && v->t != J_STRING)
		l->bad = 1;
	return v && v->t == J_STRING ? v->u.s : NULL;
}

static int64_t
get_int(struct ld *l, const struct jval *o, const char *k, int64_t lo,
    int64_t hi)
{
	int64_t n = 0;

	if (json_get_int(o, k, &n) < 0 || n < lo || n > hi)
		l->bad = 1;
	return n;
}

/* get_list: member k, an array */
static const struct jval *
get_list(struct ld *l, const struct jval *o, const char *k)
{
	const struct jval *v = get(l, o, k);

	if (v && v->t == J_ARRAY)
		return v;
	l->bad = 1;
	return NULL;
}

static void
recent_load(struct ld *l, struct recent *r, const struct jval *v)
{
	size_t i;

	if (!v || v->n > SHOWN_MAX) {
		l->bad = 1;
		return;
	}
	r->cap = v->n ? v->n : 1;
	r->off = xrealloc(r->off, r->cap * sizeof *r->off);
	for (i = 0; i < v->n; i++) {
		if (v->u.a[i]->t != J_STRING) {
			l->bad = 1;
			return;
		}
		if (i)
			buf_addc(&r->b, ',');
		r->off[r->n++] = r->b.len;
		buf_add(&r->b, v->u.a[i]->u.s, v->u.a[i]->n);
	}
}

static struct action *
action_load(struct ld *l, const struct jval *o)
{
	struct proj *p = l->p;
	struct action *r = arena_alloc(&p->a, sizeof *r);
	const struct jval *id = get(l, o, "tool_call_id");

	if (!o || o->t != J_OBJECT || o->n != 19 || !id || id->t != J_STRING) {
		l->bad = 1;
		return NULL;
	}
	r->tool_call_id = json_copy(&p->a, id);
	r->action_id = get_opt(l, o, "action_id");
	r->tool_name = get_opt(l, o, "tool_name");
	r->risk = get_opt(l, o, "risk");
	r->summary = get_opt(l, o, "summary");
	r->arguments = get_opt(l, o, "arguments");
	r->details = get_opt(l, o, "details");
	r->paths = get_opt(l, o, "paths");
	r->group = get_opt_str(l, o, "group");
	r->state = (enum state)get_int(l, o, "state", ST_PROPOSED,
	    ST_UNKNOWN);
	r->decision = (enum decision)get_int(l, o, "decision", DEC_NONE,
	    DEC_REJECTED);
	r->has_outcome = (int)get_int(l, o, "has_outcome", 0, 1);
	r->broken = (int)get_int(l, o, "broken", 0, 1);
	r->exit_code = get_opt(l, o, "exit_code");
	r->out_summary = get_opt(l, o, "out_summary");
	r->result = get_opt(l, o, "result");
	r->truncated = get_opt(l, o, "truncated");
	r->proposed_seq = get_int(l, o, "proposed_seq", 0, INT64_MAX);
	r->updated_seq = get_int(l, o, "updated_seq", 0, INT64_MAX);
	return r;
}

static struct group *
group_load(struct ld *l, const struct jval *o)
{
	struct proj *p = l->p;
	struct group *g = arena_alloc(&p->a, sizeof *g);
	const struct jval *id = get(l, o, "id");
	const struct jval *m = get_list(l, o, "members");
	size_t i;

	memset(g, 0, sizeof *g);
	if (!o || o->t != J_OBJECT || o->n != 5 || !id || id->t != J_STRING ||
	    !m) {
		l->bad = 1;
		return g;
	}
	g->id = arena_strndup(&p->a, id->u.s, id->n);
	g->decision = (enum decision)get_int(l, o, "decision", DEC_NONE,
	    DEC_REJECTED);
	g->elsewhere = (int)get_int(l, o, "elsewhere", 0, 1);
	g->seq = get_int(l, o, "seq", 0, INT64_MAX);
	for (i = 0; i < m->n; i++) {
		if (m->u.a[i]->t != J_STRING) {
			l->bad = 1;
			return g;
		}
		grow(&g->members, g->n, &g->cap, sizeof *g->members);
		g->members[g->n++] = arena_strndup(&p->a, m->u.a[i]->u.s,
		    m->u.a[i]->n);
	}
	return g;
}

static void
usage_load(struct ld *l, struct usage *u, const struct jval *o)
{
	const char *cost = json_get_str(o, "cost");
	char *end;

	if (!o || o->t != J_OBJECT || o->n != 11 || !cost) {
		l->bad = 1;
		return;
	}
	u->id = get_opt_str(l, o, "id");
	u->calls = get_int(l, o, "calls", 0, INT64_MAX);
	u->prompt = get_int(l, o, "prompt", 0, INT64_MAX);
	u->completion = get_int(l, o, "completion", 0, INT64_MAX);
	u->cache_read = get_int(l, o, "cache_read", 0, INT64_MAX);
	u->cache_write = get_int(l, o, "cache_write", 0, INT64_MAX);
	u->reasoning = get_int(l, o, "reasoning", 0, INT64_MAX);
	u->model = get_opt(l, o, "model");
	u->window = get_opt(l, o, "window");
	u->known = (int)get_int(l, o, "known", 0, 1);
	u->cost = strtod(cost, &end);
	if (*end || end == cost)
		l->bad = 1;
}

static struct subagent *
subagent_load(struct ld *l, const struct jval *o)
{
	struct proj *p = l->p;
	struct subagent *x = arena_alloc(&p->a, sizeof *x);
	const struct jval *id = get(l, o, "invocation");

	memset(x, 0, sizeof *x);
	if (!o || o->t != J_OBJECT || o->n != 11 || !id || id->t != J_STRING) {
		l->bad = 1;
		return x;
	}
	x->invocation = json_copy(&p->a, id);
	x->task = get_opt(l, o, "task");
	x->name = get_opt(l, o, "name");
	x->role = get_opt(l, o, "role");
	x->status = get_opt(l, o, "status");
	x->parent_sid = get_opt(l, o, "parent_sid");
	x->parent_action = get_opt(l, o, "parent_action");
	x->failure = get_opt(l, o, "failure");
	x->cost = get_opt(l, o, "cost");
	x->budget = get_opt(l, o, "budget");
	x->conversation = get_opt(l, o, "conversation");
	return x;
}

static void
actions_load(struct ld *l, const struct jval *v)
{
	struct proj *p = l->p;
	struct action *r;
	size_t i;

	for (i = 0; v && i < v->n && !l->bad; i++) {
		if (!(r = action_load(l, v->u.a[i])) || l->bad ||
		    smap_get(&p->by_call, r->tool_call_id->u.s,
		    r->tool_call_id->n)) {
			l->bad = 1;
			return;
		}
		grow(&p->actions, p->nactions, &p->capactions,
		    sizeof *p->actions);
		p->actions[p->nactions++] = r;
		smap_put(&p->by_call, r->tool_call_id->u.s,
		    r->tool_call_id->n, r);
	}
}

static void
groups_load(struct ld *l, const struct jval *v, const struct jval *open)
{
	struct proj *p = l->p;
	struct group *g;
	int64_t k;
	size_t i;

	for (i = 0; v && i < v->n && !l->bad; i++) {
		g = group_load(l, v->u.a[i]);
		grow(&p->groups, p->ngroups, &p->capgroups, sizeof *p->groups);
		p->groups[p->ngroups++] = g;
		if (l->bad || smap_get(&p->by_group, g->id, strlen(g->id))) {
			l->bad = 1;
			return;
		}
		smap_put(&p->by_group, g->id, strlen(g->id), g);
	}
	for (i = 0; open && i < open->n && !l->bad; i++) {
		k = open->u.a[i]->t == J_INT ? strtoll(open->u.a[i]->u.s,
		    NULL, 10) : -1;
		if (k < 0 || (size_t)k >= p->ngroups) {
			l->bad = 1;
			return;
		}
		grow(&p->open, p->nopen, &p->capopen, sizeof *p->open);
		p->open[p->nopen++] = p->groups[k];
	}
}

static void
others_load(struct ld *l, const struct jval *o)
{
	struct proj *p = l->p;
	const struct jval *v;
	struct subagent *x;
	size_t i;

	usage_load(l, &p->total, get(l, o, "total"));
	v = get_list(l, o, "purposes");
	for (i = 0; v && i < v->n && !l->bad; i++) {
		p->purposes = xrealloc(p->purposes, (i + 1) *
		    sizeof *p->purposes);
		p->purposes[i] = arena_alloc(&p->a, sizeof **p->purposes);
		memset(p->purposes[i], 0, sizeof **p->purposes);
		p->npurposes++;
		usage_load(l, p->purposes[i], v->u.a[i]);
		if (!p->purposes[i]->id)
			l->bad = 1;
	}
	v = get_list(l, o, "subagents");
	for (i = 0; v && i < v->n && !l->bad; i++) {
		x = subagent_load(l, v->u.a[i]);
		p->subagents = xrealloc(p->subagents, (p->nsubagents + 1) *
		    sizeof *p->subagents);
		p->subagents[p->nsubagents++] = x;
		if (l->bad || smap_get(&p->by_invocation, x->invocation->u.s,
		    x->invocation->n)) {
			l->bad = 1;
			return;
		}
		smap_put(&p->by_invocation, x->invocation->u.s,
		    x->invocation->n, x);
	}
}

/*
 * approvals_load keeps each approval with the verdict its binding had,
 * which must still be the verdict now: a bindings file that changed
 * since (replaced, emptied, another key) refuses the snapshot
 */
static void
approvals_load(struct ld *l, const struct jval *v)
{
	struct proj *p = l->p;
	const struct jval *e;
	size_t i;
	int bound;

	for (i = 0; v && i < v->n && !l->bad; i++) {
		e = v->u.a[i];
		if (e->t != J_ARRAY || e->n != 2 || e->u.a[0]->t != J_OBJECT ||
		    (e->u.a[1]->t != J_TRUE && e->u.a[1]->t != J_FALSE)) {
			l->bad = 1;
			return;
		}
		bound = e->u.a[1]->t == J_TRUE;
		if (decision_bound(p->sid, e->u.a[0], NULL, 0) != bound) {
			l->bad = 1;
			return;
		}
		grow(&p->approvals, p->napprovals, &p->capapprovals,
		    sizeof *p->approvals);
		p->approvals[p->napprovals].ev = json_copy(&p->a, e->u.a[0]);
		p->approvals[p->napprovals++].bound = bound;
	}
}

static const char *const statuses[] = { "idle", "running", "paused",
	"waiting-for-confirmation", "finished", "error", NULL };

static void
scalars_load(struct ld *l, const struct jval *o)
{
	struct proj *p = l->p;
	const char *st = json_get_str(o, "status");
	const char *const *s;
	struct jval *tasks;

	for (s = statuses; *s && (!st || strcmp(*s, st)); s++)
		;
	if (!*s)
		l->bad = 1;
	p->status = *s ? *s : "idle";
	p->count = get_int(l, o, "count", 0, INT64_MAX);
	p->revision = get_int(l, o, "revision", -1, INT64_MAX);
	p->workspace = get_int(l, o, "workspace", -1, INT64_MAX);
	p->unrecoverable = (int)get_int(l, o, "unrecoverable", 0, 1);
	p->user_messages = (int)get_int(l, o, "user_messages", 0, INT32_MAX);
	p->last_denied = (int)get_int(l, o, "last_denied", 0, 1);
	p->cmd_rejected = (int)get_int(l, o, "cmd_rejected", 0, 1);
	p->error_reason = get_opt(l, o, "error_reason");
	p->endpoint = get_opt(l, o, "endpoint");
	p->model_decision = get_opt(l, o, "model_decision");
	p->model_reason = get_opt(l, o, "model_reason");
	p->policy_id = get_opt(l, o, "policy_id");
	p->isolation = get_opt(l, o, "isolation");
	p->cmd_id = get_opt(l, o, "cmd_id");
	p->cmd_kind = get_opt(l, o, "cmd_kind");
	p->cmd_message = get_opt(l, o, "cmd_message");
	/* the plan lives in its own arena, replaced by the next one */
	tasks = get_opt(l, o, "tasks");
	p->tasks = tasks ? json_copy(&p->plan, tasks) : NULL;
}

struct proj *
proj_load(const char *sid, const struct jval *o)
{
	struct ld l = { proj_new(sid), 0 };

	if (!o || o->t != J_OBJECT || o->n != 27) {
		proj_free(l.p);
		return NULL;
	}
	scalars_load(&l, o);
	recent_load(&l, &l.p->activity, get_list(&l, o, "activity"));
	recent_load(&l, &l.p->conversation, get_list(&l, o, "conversation"));
	actions_load(&l, get_list(&l, o, "actions"));
	groups_load(&l, get_list(&l, o, "groups"), get_list(&l, o, "open"));
	others_load(&l, o);
	approvals_load(&l, get_list(&l, o, "approvals"));
	if (l.bad) {
		proj_free(l.p);
		return NULL;
	}
	return l.p;
}

/* ---- the snapshot file ---- */

static int
snap_load(struct session *s, struct arena *a, struct logpos *at,
    struct proj **out)
{
	char *path = path_join(s->dir, SNAP_FILE);
	struct jval *v = private_read(path, SNAP_MAX, a);

	free(path);
	*out = NULL;
	if (!v || v->t != J_OBJECT || v->n != 4 ||
	    !json_is_str(json_get(v, "schema_version"), SNAP_SCHEMA) ||
	    !json_is_str(json_get(v, "session_id"), s->id) ||
	    logpos_parse(json_get(v, "position"), at) < 0)
		return -1;
	if (!(*out = proj_load(s->id, json_get(v, "state"))))
		return -1;
	/* a state that is not the one at its position is not used */
	if ((*out)->count != at->count || (*out)->revision != at->count - 1) {
		proj_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/* snap_save replaces the snapshot, under the snapshot lock */
static int
snap_save(struct session *s, const struct logpos *at, const struct proj *p)
{
	char *path = path_join(s->dir, SNAP_FILE);
	struct arena a;
	struct jval *o;
	int lock, rc = -1;

	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "position", logpos_json(&a, at));
	json_add(&a, o, "schema_version", json_str(&a, SNAP_SCHEMA));
	json_add(&a, o, "session_id", json_str(&a, s->id));
	json_add(&a, o, "state", proj_save(&a, p));
	if ((lock = lock_open(s->snapshot_lock, 0)) >= 0) {
		rc = cache_write_json(path, o);
		lock_close(lock);
	}
	arena_release(&a);
	free(path);
	return rc;
}

struct red {
	const char *sid;
	struct proj *p;
	int snap;		/* p came from the snapshot */
	int *used;		/* ... and the verifier kept to it */
	int checked;
};

static int
red_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct red *r = ctx;

	(void)line, (void)n;
	if (!r->checked) {
		r->checked = 1;
		/* every event comes: the snapshot did not hold */
		if (r->snap && !*r->used) {
			proj_free(r->p);
			r->p = proj_new(r->sid);
			r->snap = 0;
		}
	}
	proj_apply(r->p, ev);
	return 0;
}

/* red_begin: the reduction starts from the snapshot when one loads */
static void
red_begin(struct session *s, struct red *r, struct logpos *from, int *used)
{
	struct arena a;
	struct proj *snap = NULL;

	arena_init(&a);
	if (snap_load(s, &a, from, &snap) < 0)
		snap = NULL;
	arena_release(&a);
	*used = 0;
	r->sid = s->id;
	r->p = snap ? snap : proj_new(s->id);
	r->snap = snap != NULL;
	r->used = used;
	r->checked = 0;
}

/* red_end: the projection, from the first event when the snapshot failed */
static struct proj *
red_end(struct red *r)
{
	if (r->snap && !*r->used) {
		/* no event came, and the snapshot did not hold */
		proj_free(r->p);
		r->p = proj_new(r->sid);
	}
	return r->p;
}

int
session_reduce(struct session *s, struct proj **out)
{
	struct logpos from;
	struct red r;
	int used, rc;

	red_begin(s, &r, &from, &used);
	rc = logs_verify_since(s, r.snap ? &from : NULL, &used, red_fn, &r,
	    NULL);
	*out = red_end(&r);
	return rc;
}

int
session_take_reduce(struct session *s, struct proj **out)
{
	struct logpos from;
	struct red r;
	int used, k;

	red_begin(s, &r, &from, &used);
	k = session_take_since(s, r.snap ? &from : NULL, &used, red_fn, &r);
	*out = red_end(&r);
	return k;
}

int
snapshot_leave(struct session *s, const struct proj *p)
{
	struct logpos at;

	/*
	 * As the head (session_head_leave): a writer that committed; like any
	 * write to the store, one that fails is reported (74).
	 */
	if (p && s->committed && logs_writer_end(s, &at) == 0 &&
	    p->count == at.count && p->revision == at.count - 1)
		return snap_save(s, &at, p);
	return 0;
}
