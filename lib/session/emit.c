/*
 * emit.c - the session projection (heartwood.session-projection.v1, the
 * reference's camelCase names) written from the reducer's state, and the
 * command availability it implies
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/session.h"
#include "session/proj.h"

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
	if (!strncmp(id, "specialist:", 11)) {
		s = arena_alloc(t, strlen(id) + 2);
		sprintf(s, "Specialist: %s", id + 11);
		return s;
	}
	s = arena_strndup(t, id, strlen(id));
	if (s[0] >= 'a' && s[0] <= 'z')
		s[0] -= 'a' - 'A';
	return s;
}

static struct jval *
usage_json(struct arena *t, const struct usage *u, const char *id)
{
	struct jval *o = json_obj(t), *cost = json_new(t, J_FLOAT);

	/* unknown (no route reported a price) is null, never 0 */
	if (isnan(u->cost))
		cost->t = J_NULL;
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
	/* the agent's words (finished, failed) and the reference's */
	static const char *const known[] = { "proposed", "running",
		"completed", "error", "finished", "failed", "interrupted",
		NULL };
	static const char *const known_st[] = { "proposed", "running",
		"completed", "error", "completed", "error", "interrupted" };
	static const char *const known_label[] = { "Proposed", "Running",
		"Completed", "Error", "Completed", "Error", "Interrupted" };
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
		st = known[k] ? known_st[k] : "proposed";
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
		set(t, o, "failure", x->failure);
		set(t, o, "accumulatedCost", x->cost);
		set(t, o, "maxBudgetPerRun", x->budget);
		set(t, o, "conversation", x->conversation);
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
	set(t, ctx, "policyProfileId", p->policy_id);
	set(t, ctx, "credentialIsolation", p->isolation);
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
