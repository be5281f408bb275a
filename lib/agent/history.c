/*
 * history.c - the model's conversation and the action sets, derived from
 * the session's durable events
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/loop.h"

/* ---- the conversation, derived from events ---- */

struct jval *
ag_last_message(struct agent *ag)
{
	return ag->messages->n ? ag->messages->u.a[ag->messages->n - 1] :
	    NULL;
}

/* push appends m, remembering the event it came from */
void
ag_push(struct agent *ag, struct jval *m)
{
	if (ag->messages->n == ag->mcap) {
		ag->mcap = ag->mcap ? 2 * ag->mcap : 64;
		ag->mseq = xrealloc(ag->mseq, ag->mcap * sizeof *ag->mseq);
	}
	ag->mseq[ag->messages->n] = ag->count - 1;
	json_push(&ag->a, ag->messages, m);
}

static struct jval *
message(struct agent *ag, const char *role, const struct jval *content)
{
	struct jval *m = json_obj(&ag->a);

	json_add(&ag->a, m, "role", json_str(&ag->a, role));
	json_add(&ag->a, m, "content", content && content->t == J_STRING ?
	    json_copy(&ag->a, content) : json_new(&ag->a, J_NULL));
	ag_push(ag, m);
	ag->open = !strcmp(role, "assistant") ? m : NULL;
	return m;
}

static void
tool_message(struct agent *ag, const char *id, const char *text,
    size_t n)
{
	struct jval *m = json_obj(&ag->a);
	size_t i;

	json_add(&ag->a, m, "role", json_str(&ag->a, "tool"));
	json_add(&ag->a, m, "tool_call_id", json_str(&ag->a, id));
	json_add(&ag->a, m, "content", json_strn(&ag->a, text, n));
	ag_push(ag, m);
	ag->open = NULL;
	if (ag->awaiting && !--ag->awaiting) {
		for (i = 0; i < ag->held->n; i++)
			message(ag, "user", ag->held->u.a[i]);
		ag->held->n = 0;
	}
}

/*
 * user_message: the researcher's message, held back while calls of the
 * last response have no result yet (guidance given during an action
 * set), since the model's API wants every call answered first.
 */
static void
user_message(struct agent *ag, const struct jval *content)
{
	if (!ag->awaiting)
		message(ag, "user", content);
	else
		json_push(&ag->a, ag->held, content ? json_copy(&ag->a,
		    content) : json_new(&ag->a, J_NULL));
}

static struct member *
member_of(struct agent *ag, const struct jval *id)
{
	return id && id->t == J_STRING ? smap_get(&ag->members, id->u.s,
	    id->n) : NULL;
}

static struct set *
set_of(struct agent *ag, const char *group)
{
	size_t i;

	for (i = ag->nsets; i-- > 0;)
		if (!strcmp(ag->sets[i]->group, group))
			return ag->sets[i];
	return NULL;
}

/* keep_str: a copy of s in a, or dflt when s is NULL */
static const char *
keep_str(struct arena *a, const char *s, const char *dflt)
{
	return s ? arena_strndup(a, s, strlen(s)) : dflt;
}

/* on_proposal adds the call to the response's assistant message */
static void
on_proposal(struct agent *ag, const struct jval *pl)
{
	struct arena *a = &ag->a;
	struct jval *m = ag->open, *calls, *c, *f;
	struct member *x;
	const struct jval *id = json_get(pl, "tool_call_id");

	if (!id || id->t != J_STRING || member_of(ag, id))
		return;
	if (!m)
		m = message(ag, "assistant", NULL);
	if (!(calls = json_get(m, "tool_calls"))) {
		calls = json_new(a, J_ARRAY);
		json_add(a, m, "tool_calls", calls);
	}
	x = arena_alloc(a, sizeof *x);
	x->id = arena_strndup(a, id->u.s, id->n);
	x->name = keep_str(a, json_get_str(pl, "tool_name"), "");
	x->action = keep_str(a, json_get_str(pl, "action_id"), x->id);
	x->args = json_get(pl, "arguments") ? json_copy(a, json_get(pl,
	    "arguments")) : json_obj(a);
	smap_put(&ag->members, x->id, id->n, x);
	c = json_obj(a);
	json_add(a, c, "id", json_str(a, x->id));
	json_add(a, c, "type", json_str(a, "function"));
	f = json_obj(a);
	json_add(a, f, "name", json_str(a, x->name));
	buf_clear(&ag->scratch);
	json_canon(&ag->scratch, x->args);
	json_add(a, f, "arguments", json_strn(a, ag->scratch.p,
	    ag->scratch.len));
	json_add(a, c, "function", f);
	json_push(a, calls, c);
	ag->awaiting++;
}

struct set *
ag_new_set(struct agent *ag, const char *group)
{
	struct set *s = arena_alloc(&ag->a, sizeof *s);

	s->group = arena_strndup(&ag->a, group, strlen(group));
	buf_init(&s->fingerprint);
	if (ag->nsets == ag->capsets) {
		ag->capsets = ag->capsets ? 2 * ag->capsets : 16;
		ag->sets = xrealloc(ag->sets, ag->capsets * sizeof *ag->sets);
	}
	ag->sets[ag->nsets++] = s;
	return s;
}

void
ag_set_add(struct agent *ag, struct set *s, struct member *x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4;
		s->m = xrealloc(s->m, s->cap * sizeof *s->m);
	}
	s->m[s->n++] = x;
	x->group = s->group;
	buf_adds(&s->fingerprint, x->name);
	buf_addc(&s->fingerprint, '\n');
	json_canon(&s->fingerprint, x->args);
	buf_addc(&s->fingerprint, '\n');
	(void)ag;
}

/*
 * on_approval records a set's decision, creating the set if needed; an
 * approval without this user's binding (trust.c) leaves it undecided
 */
static void
on_approval(struct agent *ag, const struct jval *ev)
{
	const struct jval *pl = json_get(ev, "payload");
	const struct jval *ids = json_get(pl, "tool_call_ids");
	const char *group = json_get_str(pl, "group_id");
	struct set *s;
	struct member *x;
	size_t i;

	if (!group || !ids || ids->t != J_ARRAY)
		return;
	if (!(s = set_of(ag, group))) {
		s = ag_new_set(ag, group);
		for (i = 0; i < ids->n; i++)
			if ((x = member_of(ag, ids->u.a[i])))
				ag_set_add(ag, s, x);
	}
	if (json_is_str(json_get(pl, "decision"), "approved") &&
	    !decision_bound(ag->s->id, ev, ag->elsewhere_why,
	    sizeof ag->elsewhere_why)) {
		s->elsewhere = !s->decided;
		return;
	}
	s->decided = 1;
	s->approved = json_is_str(json_get(pl, "decision"), "approved");
	if (!s->approved && json_get_str(pl, "reason"))
		s->why = keep_str(&ag->a, json_get_str(pl, "reason"), NULL);
	for (i = 0; i < s->n; i++) {
		s->m[i]->decided = 1;
		s->m[i]->approved = s->approved;
	}
}

static void
on_request(struct agent *ag, const struct jval *pl)
{
	const struct jval *req = json_get(pl, "request");
	const char *group = json_get_str(req, "group_id");
	struct member *x = member_of(ag, json_get(req, "tool_call_id"));
	struct set *s;

	if (!x || !group || x->group)
		return;
	if (!(s = set_of(ag, group)))
		s = ag_new_set(ag, group);
	ag_set_add(ag, s, x);
}

/* rejected_message: the rejected prompt, and why when automatic */
static void
rejected_message(struct agent *ag, const struct member *x)
{
	const struct set *s = x->group ? set_of(ag, x->group) : NULL;
	struct buf b;

	if (!s || !s->why) {
		tool_message(ag, x->id, ag->prompts.rejected.p,
		    ag->prompts.rejected.len);
		return;
	}
	buf_init(&b);
	buf_add(&b, ag->prompts.rejected.p, ag->prompts.rejected.len);
	buf_adds(&b, "\n\n");
	buf_adds(&b, s->why);
	tool_message(ag, x->id, b.p, b.len);
	buf_release(&b);
}

static void
on_resolved(struct agent *ag, const struct jval *pl)
{
	struct member *x = member_of(ag, json_get(pl, "tool_call_id"));

	if (!x)
		return;
	x->started = 1;
	x->decided = 1;
	x->approved = json_is_str(json_get(pl, "decision"), "approved");
	if (!x->approved)
		rejected_message(ag, x);
}

static void
on_executed(struct agent *ag, const struct jval *pl)
{
	struct member *x = member_of(ag, json_get(pl, "tool_call_id"));
	const struct jval *r = json_get(pl, "result");

	if (!x || x->done)
		return;
	x->done = 1;
	if (r && r->t == J_STRING)
		tool_message(ag, x->id, r->u.s, r->n);
	else
		tool_message(ag, x->id, "", 0);
}

/*
 * condensed replaces the messages that came from the events the summary
 * covers with one message holding the summary.
 */
static void
condensed(struct agent *ag, const struct jval *pl)
{
	const struct jval *c = json_get(pl, "condensation");
	const struct jval *text = json_get(pl, "content");
	struct jval *m, **a = ag->messages->u.a;
	int64_t from, through;
	size_t i, j, n = ag->messages->n;
	struct buf b;

	if (json_get_int(c, "from", &from) < 0 ||
	    json_get_int(c, "through", &through) < 0 || !text ||
	    text->t != J_STRING)
		return;
	for (i = 0; i < n && ag->mseq[i] < from; i++)
		;
	for (j = i; j < n && ag->mseq[j] <= through; j++)
		;
	if (i == j)
		return;
	buf_init(&b);
	buf_printf(&b, "Summary of the earlier conversation, which it "
	    "replaces:\n");
	buf_add(&b, text->u.s, text->n);
	m = json_obj(&ag->a);
	json_add(&ag->a, m, "role", json_str(&ag->a, "user"));
	json_add(&ag->a, m, "content", json_strn(&ag->a, b.p, b.len));
	buf_release(&b);
	a[i] = m;
	ag->mseq[i] = through;
	memmove(a + i + 1, a + j, (n - j) * sizeof *a);
	memmove(ag->mseq + i + 1, ag->mseq + j, (n - j) * sizeof *ag->mseq);
	ag->messages->n = n - (j - i - 1);
	ag->open = NULL;
}

/* spec_use: the counts of usage id id, kept for the session */
struct counts *
ag_spec_use(struct agent *ag, const char *id)
{
	size_t i;

	for (i = 0; i < ag->nsu; i++)
		if (!strcmp(ag->su[i].id, id))
			return &ag->su[i].c;
	ag->su = xrealloc(ag->su, (ag->nsu + 1) * sizeof *ag->su);
	ag->su[ag->nsu].id = xstrdup(id);
	memset(&ag->su[ag->nsu].c, 0, sizeof ag->su[ag->nsu].c);
	return &ag->su[ag->nsu++].c;
}

/* usage_seen carries the recorded counts on into this run */
static void
usage_seen(struct agent *ag, const struct jval *u)
{
	const char *id = json_get_str(u, "usage_id");
	struct counts *c = json_is_str(json_get(u, "usage_id"), "agent") ?
	    &ag->use[USE_AGENT] : json_is_str(json_get(u, "usage_id"),
	    "condenser") ? &ag->use[USE_CONDENSER] : id &&
	    !strncmp(id, "specialist:", 11) ? ag_spec_use(ag, id) : NULL;
	const struct jval *v;

	if (!c)
		return;
	json_get_int(u, "call_count", &c->calls);
	json_get_int(u, "prompt_tokens", &c->prompt);
	json_get_int(u, "completion_tokens", &c->completion);
	v = json_get(u, "accumulated_cost");
	c->unknown = !v || (v->t != J_FLOAT && v->t != J_INT);
	c->cost = c->unknown ? 0 : v->t == J_FLOAT ? v->u.d :
	    strtod(v->u.s, NULL);
}

/* ingest: one durable event, in order, into the agent's state */
void
ag_ingest(struct agent *ag, const struct jval *ev)
{
	const char *kind = json_get_str(ev, "kind");
	const struct jval *pl = json_get(ev, "payload"), *code;
	int64_t seq;

	ag->count++;
	if (json_get_int(ev, "sequence", &seq) == 0 &&
	    seq > proj_revision(ag->pj))
		proj_apply(ag->pj, ev);	/* unless ctl applied it there */
	if (!kind)
		return;
	if (!strcmp(kind, "user_message.recorded")) {
		user_message(ag, json_get(pl, "content"));
	} else if (!strcmp(kind, "session.paused") ||
	    !strcmp(kind, "session.resumed")) {
		ag->paused = !strcmp(kind, "session.paused");
	} else if (!strcmp(kind, "agent_message.emitted") &&
	    json_get(pl, "condensation")) {
		condensed(ag, pl);
	} else if (!strcmp(kind, "agent_message.emitted")) {
		message(ag, "assistant", json_get(pl, "content"));
	} else if (!strcmp(kind, "tool_call.proposed")) {
		on_proposal(ag, pl);
	} else if (!strcmp(kind, "confirmation.requested")) {
		on_request(ag, pl);
	} else if (!strcmp(kind, "approval.recorded")) {
		on_approval(ag, ev);
	} else if (!strcmp(kind, "confirmation.resolved")) {
		on_resolved(ag, pl);
	} else if (!strcmp(kind, "tool.execution.recorded")) {
		on_executed(ag, pl);
	} else if (!strcmp(kind, "model.usage.updated")) {
		usage_seen(ag, json_get(pl, "usage"));
	} else if (!strcmp(kind, "agent.lifecycle.updated")) {
		ag->status = json_is_str(json_get(pl, "status"), "running") ?
		    "running" : json_is_str(json_get(pl, "status"),
		    "finished") ? "finished" : json_is_str(json_get(pl,
		    "status"), "paused") ? "paused" : "idle";
		ag->paused = !strcmp(ag->status, "paused");
	} else if (!strcmp(kind, "error.recorded")) {
		code = json_get(pl, "code");
		if (json_is_str(code, "HW-AGENT-006") ||
		    json_is_str(code, "HW-AGENT-007"))
			ag->fatal = 1;
		if (!(json_get(pl, "affects_lifecycle") &&
		    json_get(pl, "affects_lifecycle")->t == J_FALSE)) {
			ag->status = "error";
			ag->paused = 0;
		}
	}
}

int
ag_ingest_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	(void)line, (void)n;
	ag_ingest(ctx, ev);
	return 0;
}
