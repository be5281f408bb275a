/*
 * agent.c - the agent loop: the model's conversation is derived from the
 * durable events, one model response with tool calls is one action set,
 * the decision for the whole set is committed before any member runs, and
 * each member's start and outcome are committed around its execution
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"

#define STUCK_REPEATS 3		/* the same action set this often in a row */
#define CONDENSE_EVENTS 240	/* messages before a soft condensation */
#define KEEP_FIRST 2		/* the system message and the first ask */
#define PIECE_TOKENS 65536	/* one condensation request, budget unknown */
#define MIN_BUDGET 1024		/* tokens: below it a refusal is final */
#define SHRINKS 8		/* refusals as too large, then it fails */
/*
 * What is recorded of a reply stays well inside the readers' line bound
 * (JSONL_LINE_MAX) however its text is escaped (at most 6 bytes a byte):
 * text over TEXT_MAX bytes is cut with a note; a tool call with a name
 * over NAME_MAX or arguments over ARGS_MAX bytes of canonical JSON (which
 * a cut would change) refuses the reply as HW-AGENT-011.
 */
#define TEXT_MAX (1u << 20)
#define ARGS_MAX (4u << 20)
#define NAME_MAX_ 256
#define SUMMARY_CHARS 240	/* a proposal's summary, as the projection */
enum { USE_AGENT, USE_CONDENSER };

static const char system_prompt[] =
    "You are heartwood, a research coding agent working inside one "
    "project directory on behalf of a researcher.  Work in small, "
    "verifiable steps and explain what you are doing.  Stay inside the "
    "project; never read or change anything under .heartwood, which holds "
    "the session's records.  Every action you propose is shown to the "
    "researcher, who allows or rejects the complete set of actions of one "
    "response at once, so propose together only what belongs together.  "
    "Give each action a short summary and an honest security_risk.  A "
    "command that exits with status 0 succeeded, even when it prints "
    "nothing.  When the task is done, call finish with a short report.";

static const char rejected_text[] =
    "The researcher rejected this action set; none of its actions ran.  "
    "Ask what they would like instead, or propose something different.";

struct member {
	const char *id, *name, *action;
	struct jval *args;
	const char *group;
	int decided, approved, started, done;
};

struct set {
	const char *group;
	struct member **m;
	size_t n, cap;
	int decided, approved;
	int elsewhere;		/* approved, but not by this user here */
	struct buf fingerprint;	/* tool names and arguments, for stuck */
};

struct agent {
	struct session *s;
	struct agent_opts o;
	struct arena a;		/* the conversation and the sets live here */
	struct arena t;		/* per step */
	struct buf scratch;
	struct jval *messages;	/* the model's view, derived from events */
	struct jval *open;	/* the assistant message calls attach to */
	struct smap members;
	struct set **sets;
	size_t nsets, capsets;
	const char *status;	/* the last lifecycle status */
	int64_t count;		/* events seen */
	int fatal;		/* an unrecoverable error is recorded */
	struct model_route route;
	struct toolbox *tb;
	struct jval *tools;
	struct counts {
		int64_t calls, prompt, completion;
	} use[2];		/* USE_AGENT, USE_CONDENSER: this session */
	int64_t *mseq;		/* the sequence each message came from */
	int64_t learnt;		/* a budget a "too large" refusal taught */
	size_t mcap;
	char epoch[33];
	int64_t stream_rev;
	struct buf stream;
	struct redact_stream shown;	/* of stream: what may be shown */
	struct control *ctl;	/* commands from other processes */
	struct proj *pj;	/* what ctl applies commands against */
	int paused;		/* the lifecycle's last word was a pause */
	int wait_failed;	/* serving while the model was asked failed */
	struct jval *held;	/* user messages that wait for tool results */
	char elsewhere_why[512];	/* a refused key or bindings file */
	size_t awaiting;	/* calls of the last response without one */
};

/* ---- the conversation, derived from events ---- */

static struct jval *
last_message(struct agent *ag)
{
	return ag->messages->n ? ag->messages->u.a[ag->messages->n - 1] :
	    NULL;
}

/* push appends m, remembering the event it came from */
static void
push(struct agent *ag, struct jval *m)
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
	push(ag, m);
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
	push(ag, m);
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

static struct set *
new_set(struct agent *ag, const char *group)
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

static void
set_add(struct agent *ag, struct set *s, struct member *x)
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
		s = new_set(ag, group);
		for (i = 0; i < ids->n; i++)
			if ((x = member_of(ag, ids->u.a[i])))
				set_add(ag, s, x);
	}
	if (json_is_str(json_get(pl, "decision"), "approved") &&
	    !decision_bound(ag->s->id, ev, ag->elsewhere_why,
	    sizeof ag->elsewhere_why)) {
		s->elsewhere = !s->decided;
		return;
	}
	s->decided = 1;
	s->approved = json_is_str(json_get(pl, "decision"), "approved");
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
		s = new_set(ag, group);
	set_add(ag, s, x);
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
		tool_message(ag, x->id, rejected_text, sizeof rejected_text - 1);
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

/* usage_seen carries the recorded counts on into this run */
static void
usage_seen(struct agent *ag, const struct jval *u)
{
	struct counts *c = json_is_str(json_get(u, "usage_id"), "agent") ?
	    &ag->use[USE_AGENT] : json_is_str(json_get(u, "usage_id"),
	    "condenser") ? &ag->use[USE_CONDENSER] : NULL;

	if (!c)
		return;
	json_get_int(u, "call_count", &c->calls);
	json_get_int(u, "prompt_tokens", &c->prompt);
	json_get_int(u, "completion_tokens", &c->completion);
}

/* ingest: one durable event, in order, into the agent's state */
static void
ingest(struct agent *ag, const struct jval *ev)
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

static int
ingest_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	(void)line, (void)n;
	ingest(ctx, ev);
	return 0;
}

/* ---- committing ---- */

static struct jval *
draft(struct agent *ag, const char *kind)
{
	struct jval *d = json_obj(&ag->t), *p = json_obj(&ag->t);

	json_add(&ag->t, d, "kind", json_str(&ag->t, kind));
	json_add(&ag->t, d, "payload", p);
	return d;
}

static struct jval *
payload(struct jval *d)
{
	return json_get(d, "payload");
}

static void
put(struct agent *ag, struct jval *o, const char *k, struct jval *v)
{
	json_add(&ag->t, o, k, v ? v : json_new(&ag->t, J_NULL));
}

static struct jval *
str(struct agent *ag, const char *s)
{
	return json_str(&ag->t, s);
}

/* char_start: the largest cut <= at that does not split a UTF-8 character */
static size_t
char_start(const char *p, size_t at)
{
	while (at > 0 && ((unsigned char)p[at] & 0xC0) == 0x80)
		at--;
	return at;
}

/* chars_prefix: the bytes of the first `chars` characters of s */
static size_t
chars_prefix(const char *s, size_t chars)
{
	size_t i = 0, n = strlen(s);

	for (; i < n && chars > 0; chars--)
		for (i++; i < n && ((unsigned char)s[i] & 0xC0) == 0x80; i++)
			;
	return i;
}

/* text: the model's text p (n bytes), cut at TEXT_MAX with a note */
static struct jval *
text(struct agent *ag, const char *p, size_t n)
{
	struct buf b;
	struct jval *v;
	size_t cut;

	if (n <= TEXT_MAX)
		return json_strn(&ag->t, p ? p : "", n);
	cut = char_start(p, TEXT_MAX);
	buf_init(&b);
	buf_add(&b, p, cut);
	buf_printf(&b, "\n\n[cut by heartwood: the text held %zu bytes; the "
	    "first %zu are kept]", n, cut);
	v = json_strn(&ag->t, b.p, b.len);
	buf_release(&b);
	return v;
}

/* commit makes the drafts durable, then ingests them */
static int
commit(struct agent *ag, struct jval **d, size_t n)
{
	struct buf ack;
	struct arena a;
	struct jval *ev;
	char *line, *nl, err[128];
	int rc = -1;

	buf_init(&ack);
	arena_init(&a);
	if (session_commit(ag->s, d, n, &ack) < 0)
		goto out;
	for (line = ack.p; line && line < ack.p + ack.len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(ack.p + ack.len - line));
		arena_clear(&a);
		if (!(ev = json_parse(&a, line, (size_t)(nl - line), err,
		    sizeof err))) {
			hw_err_set(HW_EXIT_DATA, "committed event: %s", err);
			goto out;
		}
		ingest(ag, ev);
	}
	rc = 0;
out:
	buf_release(&ack);
	arena_release(&a);
	return rc;
}

static int
commit1(struct agent *ag, struct jval *d)
{
	return commit(ag, &d, 1);
}

static struct jval *
lifecycle(struct agent *ag, const char *status)
{
	struct jval *d = draft(ag, "agent.lifecycle.updated");

	put(ag, payload(d), "status", str(ag, status));
	return d;
}

static struct jval *
error_draft(struct agent *ag, const char *code, const char *reason)
{
	struct jval *d = draft(ag, "error.recorded");

	put(ag, payload(d), "backend_id", str(ag, "hw-agent"));
	put(ag, payload(d), "code", str(ag, code));
	put(ag, payload(d), "reason", str(ag, reason));
	return d;
}

/* ---- the control socket: other processes' commands between steps ---- */

/* serve applies what waits on the socket, ingesting it as our own */
static int
serve(struct agent *ag)
{
	return control_poll(ag->ctl, ingest_fn, ag);
}

/*
 * waiting serves the socket while the model is asked, so that a client
 * is answered even when the model takes minutes (or only sends keep-alive
 * comments); a pause applied meanwhile, or a session that can take no
 * more commits, ends the call
 */
static int
waiting(void *ctx)
{
	struct agent *ag = ctx;

	ag->wait_failed = serve(ag) < 0;
	return ag->wait_failed || ag->paused;
}

/*
 * tool_waiting serves the socket while a member's command runs; a pause
 * applied meanwhile lets the set complete, and a failed commit stops the
 * run at its next own commit
 */
static void
tool_waiting(void *ctx)
{
	(void)serve(ctx);
}

/* pause_here: a recorded pause ends the run at this boundary */
static int
pause_here(struct agent *ag)
{
	if (strcmp(ag->status, "running"))
		return 0;
	arena_clear(&ag->t);
	return commit1(ag, lifecycle(ag, "paused"));
}

/* ---- action sets ---- */

/* group_id: "action-set-" + 16 hex of sha256 over the ids joined by \n */
static void
group_id(struct member **m, size_t n, char out[28])
{
	struct buf b;
	char hex[HW_HASH_LEN + 1];
	size_t i;

	buf_init(&b);
	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(&b, '\n');
		buf_adds(&b, m[i]->id);
	}
	sha256_hex(b.p ? b.p : "", b.len, hex);
	snprintf(out, 28, "action-set-%.16s", hex);
	buf_release(&b);
}

static const char *const risk_word[] = { "unknown", "low", "medium",
	"high" };

/* risk: the ensemble of the rule analyzers and the model's own claim */
static enum risk
risk_of(const char *name, const struct jval *args)
{
	enum risk rule = tool_rule_risk(name, args);
	enum risk model = tool_model_risk(name, args);

	if (rule == RISK_UNKNOWN || model == RISK_UNKNOWN)
		return RISK_UNKNOWN;
	return rule > model ? rule : model;
}

/*
 * confined: the tools run in a sandbox, without which Low-Risk
 * Automation is off; the first refusal says why on stderr (the terminal's
 * first result records it too)
 */
static int
confined(struct agent *ag)
{
	static int told;
	const struct sandbox *sb = toolbox_sandbox(ag->tb);

	if (sb->kind != SANDBOX_NONE)
		return 1;
	if (!told++)
		fprintf(stderr, "hw-agent: warning: the tools have no sandbox "
		    "(%s): Low-Risk Automation is off, every action set waits "
		    "for review\n", sb->why);
	return 0;
}

static const char *
kind_of(const char *tool)
{
	return !strcmp(tool, "terminal") ? "terminal" :
	    !strcmp(tool, "file_editor") ? "file-editor" :
	    !strcmp(tool, "task") ? "task" : "other";
}

static struct jval *
proposal(struct agent *ag, const char *id, const char *action,
    const char *name, const struct jval *args, enum risk r)
{
	struct jval *d = draft(ag, "tool_call.proposed"), *p = payload(d);
	struct jval *paths = json_new(&ag->t, J_ARRAY);
	const char *summary = json_get_str(args, "summary");
	const char *path = json_get_str(args, "path");
	char root[4096];

	if (!getcwd(root, sizeof root))
		snprintf(root, sizeof root, ".");
	if (!strcmp(name, "file_editor") && path)
		json_push(&ag->t, paths, str(ag, path));
	put(ag, p, "tool_call_id", str(ag, id));
	put(ag, p, "action_id", str(ag, action));
	put(ag, p, "tool_name", str(ag, name));
	put(ag, p, "kind", str(ag, kind_of(name)));
	put(ag, p, "risk", str(ag, risk_word[r]));
	put(ag, p, "summary", summary ? json_strn(&ag->t, summary,
	    chars_prefix(summary, SUMMARY_CHARS)) : str(ag, name));
	put(ag, p, "arguments", json_copy(&ag->t, args));
	put(ag, p, "affected_paths", paths);
	put(ag, p, "project_path", str(ag, root));
	put(ag, p, "specialist_label", NULL);
	put(ag, p, "specialist_capability", NULL);
	return d;
}

static struct jval *
request(struct agent *ag, const struct jval *prop, const char *group)
{
	const struct jval *pp = payload((struct jval *)prop);
	struct jval *d = draft(ag, "confirmation.requested");
	struct jval *q = json_obj(&ag->t);
	static const char *const copy[] = { "tool_call_id", "tool_name",
		"risk", "summary", "arguments", "action_id", "kind",
		"affected_paths", "project_path", NULL };
	const char *const *k;
	char id[300];

	snprintf(id, sizeof id, "%s-confirm", json_get_str(pp,
	    "tool_call_id"));
	put(ag, q, "schema_version", str(ag,
	    "heartwood.confirmation-request.v1"));
	put(ag, q, "request_id", str(ag, id));
	put(ag, q, "session_id", str(ag, ag->s->id));
	put(ag, q, "group_id", str(ag, group));
	for (k = copy; *k; k++)
		put(ag, q, *k, json_get(pp, *k));
	put(ag, payload(d), "request", q);
	return d;
}

static struct jval *
decision(struct agent *ag, struct set *s, const char *why)
{
	struct jval *d = draft(ag, "approval.recorded"), *p = payload(d);
	struct jval *ids = json_new(&ag->t, J_ARRAY);
	char cid[64];
	size_t i;

	for (i = 0; i < s->n; i++)
		json_push(&ag->t, ids, str(ag, s->m[i]->id));
	snprintf(cid, sizeof cid, "%s-policy", s->group);
	put(ag, p, "command_id", str(ag, cid));
	put(ag, p, "group_id", str(ag, s->group));
	put(ag, p, "decision", str(ag, "approved"));
	put(ag, p, "tool_call_ids", ids);
	put(ag, p, "policy", str(ag, why));
	return d;
}

static struct jval *
resolved(struct agent *ag, const struct member *x, int approved)
{
	struct jval *d = draft(ag, "confirmation.resolved");

	put(ag, payload(d), "tool_call_id", str(ag, x->id));
	put(ag, payload(d), "group_id", str(ag, x->group));
	put(ag, payload(d), "decision", str(ag, approved ? "approved" :
	    "denied"));
	return d;
}

/* ---- running members ---- */

static struct jval *
execution(struct agent *ag, const struct member *x, struct tool_result *r)
{
	struct jval *d = draft(ag, "tool.execution.recorded"), *p = payload(d);

	put(ag, p, "backend_id", str(ag, "hw-agent"));
	put(ag, p, "tool_call_id", str(ag, x->id));
	put(ag, p, "action_id", str(ag, x->action));
	put(ag, p, "tool_name", str(ag, x->name));
	put(ag, p, "exit_code", json_int(&ag->t, r->exit_code));
	put(ag, p, "summary", json_strn(&ag->t, r->summary.p ? r->summary.p :
	    "", r->summary.len));
	put(ag, p, "result", json_strn(&ag->t, r->output.p ? r->output.p : "",
	    r->output.len));
	put(ag, p, "result_truncated", json_bool(&ag->t, r->truncated));
	return d;
}

/*
 * run_set runs the approved members that have no outcome, each once: its
 * start (confirmation.resolved) is durable before it runs, and its
 * outcome is committed together with the next member's start.  (A member
 * found started without an outcome when a run begins is never run: the
 * run stops in recover() first.)
 */
static int
run_set(struct agent *ag, struct set *s, int *finished)
{
	struct tool_result r;
	struct jval *d[3];
	struct jval *plan;
	size_t i, n;
	int rc = 0, k;

	/* a member started in this run without an outcome is the next */
	for (i = 0; i < s->n && s->m[i]->done; i++)
		;
	if (i == s->n)
		return 0;
	arena_clear(&ag->t);
	if (!s->m[i]->started && commit1(ag, resolved(ag, s->m[i], 1)) < 0)
		return -1;
	for (; i < s->n && rc == 0; i++) {
		if (serve(ag) < 0)
			return -1;
		tool_result_init(&r);
		terminal_on_wait(tool_waiting, ag);
		k = tool_run(ag->tb, s->m[i]->name, s->m[i]->args, &r);
		terminal_on_wait(NULL, NULL);
		if (k < 0) {
			tool_result_release(&r);
			return -1;	/* started, no outcome: 006 next run */
		}
		arena_clear(&ag->t);
		n = 0;
		d[n++] = execution(ag, s->m[i], &r);
		if (!strcmp(s->m[i]->name, "task_tracker") &&
		    (plan = tool_plan(ag->tb, &ag->t))) {
			d[n] = draft(ag, "task.plan.updated");
			put(ag, payload(d[n++]), "tasks", plan);
		}
		if (!strcmp(s->m[i]->name, "finish"))
			*finished = 1;
		if (i + 1 < s->n)
			d[n++] = resolved(ag, s->m[i + 1], 1);
		rc = commit(ag, d, n);
		tool_result_release(&r);
	}
	return rc;
}

/* reject_set tells the model, member by member, that nothing ran */
static int
reject_set(struct agent *ag, struct set *s)
{
	struct jval **d = xcalloc(s->n + 1, sizeof *d);
	size_t i, n = 0;
	int rc;

	arena_clear(&ag->t);
	for (i = 0; i < s->n; i++)
		if (!s->m[i]->started)
			d[n++] = resolved(ag, s->m[i], 0);
	rc = n ? commit(ag, d, n) : 0;
	free(d);
	return rc;
}

/* ---- the model ---- */

static void
on_delta(void *ctx, const char *s, size_t n)
{
	struct agent *ag = ctx;
	struct buf b;

	if (ag->stream.len >= TEXT_MAX)
		return;		/* what is kept has been shown */
	buf_add(&ag->stream, s, n);
	if (!ag->o.stream)
		return;
	redact_stream_update(&ag->shown, ag->stream.p, ag->stream.len);
	buf_init(&b);
	buf_adds(&b, "{\"epoch\":");
	json_canon_str(&b, ag->epoch, strlen(ag->epoch));
	buf_printf(&b, ",\"revision\":%lld,\"streamRevision\":%lld,\"text\":",
	    (long long)ag->count - 1, (long long)++ag->stream_rev);
	json_canon_str(&b, ag->shown.shown.p, ag->shown.shown.len);
	buf_adds(&b, "}\n");
	fwrite(b.p, 1, b.len, stdout);
	fflush(stdout);
	buf_release(&b);
}

static struct jval *
usage_draft(struct agent *ag, const char *id, const struct counts *c,
    const struct model_reply *r)
{
	struct jval *d = draft(ag, "model.usage.updated"), *u = json_obj(&ag->t);
	struct jval *cost = json_new(&ag->t, J_FLOAT);

	cost->u.d = 0;
	put(ag, u, "usage_id", str(ag, id));
	put(ag, u, "model_name", str(ag, ag->route.model));
	put(ag, u, "call_count", json_int(&ag->t, c->calls));
	put(ag, u, "prompt_tokens", json_int(&ag->t, c->prompt));
	put(ag, u, "completion_tokens", json_int(&ag->t, c->completion));
	put(ag, u, "cache_read_tokens", json_int(&ag->t,
	    r->cache_read_tokens > 0 ? r->cache_read_tokens : 0));
	put(ag, u, "cache_write_tokens", json_int(&ag->t, 0));
	put(ag, u, "reasoning_tokens", json_int(&ag->t,
	    r->reasoning_tokens > 0 ? r->reasoning_tokens : 0));
	put(ag, u, "context_window", ag->route.max_input_tokens > 0 ?
	    json_int(&ag->t, ag->route.max_input_tokens) : NULL);
	put(ag, u, "accumulated_cost", cost);
	put(ag, payload(d), "usage", u);
	return d;
}

static struct counts *
total(const struct agent *ag, struct counts *t)
{
	t->calls = ag->use[0].calls + ag->use[1].calls;
	t->prompt = ag->use[0].prompt + ag->use[1].prompt;
	t->completion = ag->use[0].completion + ag->use[1].completion;
	return t;
}

static void
count(struct counts *c, const struct model_reply *r)
{
	c->calls++;
	c->prompt += r->prompt_tokens > 0 ? r->prompt_tokens : 0;
	c->completion += r->completion_tokens > 0 ? r->completion_tokens : 0;
}

/* route_decision: the model route, recorded before the run calls it */
static struct jval *
route_decision(struct agent *ag)
{
	struct jval *d = draft(ag, "model_call.decision.recorded");
	struct jval *dec = json_obj(&ag->t), *prof = json_obj(&ag->t);
	struct jval *att = json_obj(&ag->t);
	const char *tier = "supervised";
	char id[200], now[21];

	utc_now(now);
	snprintf(id, sizeof id, "%s-model-route-%lld", ag->s->id,
	    (long long)ag->count);
	put(ag, dec, "schema_version", str(ag,
	    "heartwood.model-call-decision.v1"));
	put(ag, dec, "decision_id", str(ag, id));
	put(ag, dec, "policy_profile_id", str(ag, "environment-route"));
	put(ag, dec, "endpoint", str(ag, ag->route.base_url));
	put(ag, dec, "capability_tier", str(ag, tier));
	put(ag, dec, "decision", str(ag, "allow"));
	put(ag, dec, "reason", str(ag, ag->route.key_env ?
	    "route chosen for this run; its key is application-scrubbed" :
	    "route chosen for this run; credential-free"));
	put(ag, att, "schema_version", str(ag,
	    "heartwood.egress-attestation-record.v1"));
	put(ag, att, "record_id", str(ag, id));
	put(ag, att, "session_id", str(ag, ag->s->id));
	put(ag, att, "decision_id", str(ag, id));
	put(ag, att, "policy_profile_id", str(ag, "environment-route"));
	put(ag, att, "endpoint", str(ag, ag->route.base_url));
	put(ag, att, "decision", str(ag, "allow"));
	put(ag, att, "occurred_at", str(ag, now));
	put(ag, att, "reason", json_get(dec, "reason"));
	put(ag, prof, "backend_id", str(ag, "hw-agent"));
	put(ag, prof, "profile_id", str(ag, ag->route.model));
	put(ag, prof, "capability_tier", str(ag, tier));
	put(ag, prof, "action_confirmation_mode", str(ag, ag->o.auto_low_risk ?
	    "confirm-risky" : "always-confirm"));
	put(ag, payload(d), "decision", dec);
	put(ag, payload(d), "attestation", att);
	put(ag, payload(d), "model_profile", prof);
	return d;
}

/* ensure_running: the run's start, durable before any model call */
static int
ensure_running(struct agent *ag)
{
	struct jval *d[2];

	if (!strcmp(ag->status, "running"))
		return 0;
	arena_clear(&ag->t);
	d[0] = lifecycle(ag, "running");
	d[1] = route_decision(ag);
	return commit(ag, d, 2);
}

/* stop records an error that ends the run (recoverable unless fatal) */
static int
stop(struct agent *ag, const char *code, const char *reason)
{
	arena_clear(&ag->t);
	if (commit1(ag, error_draft(ag, code, reason)) < 0)
		return -1;
	return hw_err_set(HW_EXIT_FAIL, "%s: %s", code, reason);
}

/* stuck: the last STUCK_REPEATS sets were the same calls */
static int
stuck(struct agent *ag)
{
	struct set *last;
	size_t i;

	if (ag->nsets < STUCK_REPEATS)
		return 0;
	last = ag->sets[ag->nsets - 1];
	for (i = 2; i <= STUCK_REPEATS; i++) {
		struct set *s = ag->sets[ag->nsets - i];

		if (s->fingerprint.len != last->fingerprint.len ||
		    memcmp(s->fingerprint.p, last->fingerprint.p,
		    last->fingerprint.len))
			return 0;
	}
	return 1;
}

/* too_large: a call that cannot be recorded whole, with why in err */
static int
too_large(struct agent *ag, const char *name, const struct jval *args,
    char *err, size_t errsz)
{
	size_t n = strlen(name);

	if (n > NAME_MAX_) {
		snprintf(err, errsz, "The model's reply named a tool with %zu "
		    "bytes, more than the %d a name may have; it was not "
		    "recorded and nothing of it runs.", n, NAME_MAX_);
		return 1;
	}
	buf_clear(&ag->scratch);
	json_canon(&ag->scratch, args);
	if (ag->scratch.len <= ARGS_MAX)
		return 0;
	snprintf(err, errsz, "The model's reply held tool-call arguments of "
	    "%zu bytes, more than the %u that are kept; it was not recorded "
	    "and nothing of it runs.", ag->scratch.len, ARGS_MAX);
	return 1;
}

/*
 * respond commits the model's reply: its text and one proposal per tool
 * call, then either the decision a policy may take for the whole set, or
 * the review requests and the wait.  *wait is set when the run must stop
 * for the researcher.
 */
static int
respond(struct agent *ag, const struct model_reply *rep, int *wait)
{
	struct member first = { 0 };
	struct counts tot;
	size_t n = rep->ncalls, i, k = 0, ro = 0, low = 0, base;
	struct jval **d = xcalloc(2 * n + 6, sizeof *d), *args;
	struct member **m = xcalloc(n + 1, sizeof *m);
	struct set tmp = { 0 };
	char id[40], action[40], group[28], err[128], why[256];
	int64_t seq = ag->count;
	enum risk r;
	int rc = -1;

	/* usage, text, proposals and any decision: one durable batch */
	d[k++] = usage_draft(ag, "agent", &ag->use[USE_AGENT], rep);
	d[k++] = usage_draft(ag, "total", total(ag, &tot), rep);
	seq += 2;
	if (rep->content.len || !n) {
		d[k] = draft(ag, "agent_message.emitted");
		put(ag, payload(d[k++]), "content", text(ag, rep->content.p,
		    rep->content.len));
		seq++;
	}
	base = k;
	for (i = 0; i < n; i++, seq++) {
		args = json_parse(&ag->t, rep->calls[i].args.p ?
		    rep->calls[i].args.p : "{}", rep->calls[i].args.len ?
		    rep->calls[i].args.len : 2, err, sizeof err);
		if (!args || args->t != J_OBJECT)
			args = json_obj(&ag->t);	/* the tool says so */
		if (too_large(ag, rep->calls[i].name, args, why,
		    sizeof why)) {
			free(d);
			free(m);
			return stop(ag, "HW-AGENT-011", why);
		}
		snprintf(id, sizeof id, "call-%lld", (long long)seq);
		snprintf(action, sizeof action, "act-%lld", (long long)seq);
		r = risk_of(rep->calls[i].name, args);
		ro += tool_read_only(rep->calls[i].name);
		low += r == RISK_LOW;
		d[k++] = proposal(ag, id, action, rep->calls[i].name, args, r);
		m[i] = arena_alloc(&ag->t, sizeof **m);
		m[i]->id = json_get_str(payload(d[k - 1]), "tool_call_id");
	}
	if (n) {
		group_id(m, n, group);
		tmp.group = group;
		tmp.m = m;
		tmp.n = n;
	}
	if (n && (ro == n || (ag->o.auto_low_risk && !ag->route.key_env &&
	    low == n && confined(ag)))) {
		/* the whole set's decision, durable before any member runs */
		for (i = 0; i < n; i++)
			m[i]->group = group;
		d[k++] = decision(ag, &tmp, ro == n ? "read-only" :
		    "auto-approve-low-risk");
		first.id = m[0]->id;
		first.group = group;
		d[k++] = resolved(ag, &first, 1);	/* the first start */
	} else if (n) {
		for (i = 0; i < n; i++)
			d[k++] = request(ag, d[base + i], group);
		d[k++] = lifecycle(ag, "waiting-for-confirmation");
		*wait = 1;
	} else {
		d[k++] = lifecycle(ag, "idle");
		*wait = 1;
	}
	rc = commit(ag, d, k);
	free(d);
	free(m);
	return rc;
}

/* ---- the run ---- */

/* last_set: the newest action set, if any of its members has no outcome */
static struct set *
open_set(struct agent *ag)
{
	struct set *s = ag->nsets ? ag->sets[ag->nsets - 1] : NULL;
	size_t i;

	for (i = 0; s && i < s->n; i++)
		if (!s->m[i]->done && !(s->m[i]->started &&
		    !s->m[i]->approved))
			return s;
	return NULL;
}

/*
 * recover: a session left running lost its process mid-turn.  A member
 * that started without an outcome may or may not have run: 006.  Else
 * the turn itself is unknown: 007.  Both are fatal and never retried.
 */
static int
recover(struct agent *ag)
{
	struct set *s = ag->nsets ? ag->sets[ag->nsets - 1] : NULL;
	struct jval *d, *ids;
	size_t i;

	arena_clear(&ag->t);
	ids = json_new(&ag->t, J_ARRAY);
	for (i = 0; s && i < s->n; i++)
		if (s->m[i]->started && s->m[i]->approved && !s->m[i]->done)
			json_push(&ag->t, ids, str(ag, s->m[i]->id));
	if (!ids->n) {
		if (commit1(ag, error_draft(ag, "HW-AGENT-007", "The agent's "
		    "process stopped during a turn; its outcome is unknown "
		    "and it will not be repeated.")) < 0)
			return -1;
		return hw_err_set(HW_EXIT_FAIL, "HW-AGENT-007: the previous "
		    "run stopped mid-turn; continue in a new session");
	}
	d = error_draft(ag, "HW-AGENT-006", "An approved action started but "
	    "its outcome was not recorded; it will not be run again.");
	put(ag, payload(d), "command_id", str(ag, "recovery"));
	put(ag, payload(d), "group_id", str(ag, s->group));
	put(ag, payload(d), "tool_call_ids", ids);
	if (commit1(ag, d) < 0)
		return -1;
	return hw_err_set(HW_EXIT_FAIL, "HW-AGENT-006: an approved action's "
	    "outcome is unknown; continue in a new session");
}

static int
needs_model(struct agent *ag)
{
	struct jval *m = last_message(ag);

	return m && (json_is_str(json_get(m, "role"), "user") ||
	    json_is_str(json_get(m, "role"), "tool"));
}

/* ---- the condenser ---- */

static const char condense_prompt[] =
    "You summarize the earlier part of a research coding session so that "
    "the agent can continue without it.  Keep what was asked, what was "
    "decided and why, which actions ran and what they showed, which were "
    "rejected, what files were changed, and what remains to be done.  Be "
    "factual and brief; do not invent anything.";

/* tokens: a rough count of what message i sends (4 bytes a token) */
static size_t
tokens(const struct jval *m)
{
	struct buf b;
	size_t n;

	buf_init(&b);
	json_canon(&b, m);
	n = b.len / 4 + 4;
	buf_release(&b);
	return n;
}

/* budget: the input budget in tokens, 0 when neither known nor learnt */
static int64_t
budget(const struct agent *ag)
{
	int64_t max = ag->route.max_input_tokens;

	return ag->learnt > 0 && (max <= 0 || ag->learnt < max) ? ag->learnt :
	    max;
}

/*
 * cut: where the kept tail starts, or 0 when nothing should be forgotten.
 * Over the token budget (hard) the tail keeps half of it; over
 * CONDENSE_EVENTS messages (soft) it keeps the last half of those.  The
 * tail never starts with a tool result, whose call must stay with it, and
 * the cut must forget at least a tenth of the messages.
 */
static size_t
cut(struct agent *ag)
{
	size_t n = ag->messages->n, i, total = 0, tail = 0, at;
	int64_t max = budget(ag);

	for (i = 0; i < n; i++)
		total += tokens(ag->messages->u.a[i]);
	if (max > 0 && total > (size_t)(max * 3 / 4)) {
		for (at = n; at > KEEP_FIRST + 1; at--) {
			tail += tokens(ag->messages->u.a[at - 1]);
			if (tail > (size_t)(max * 3 / 8))
				break;
		}
	} else if (n > CONDENSE_EVENTS) {
		at = n - (CONDENSE_EVENTS / 2 - KEEP_FIRST - 1);
	} else {
		return 0;
	}
	while (at < n && json_is_str(json_get(ag->messages->u.a[at], "role"),
	    "tool"))
		at++;
	if (at >= n)
		return 0;	/* the newest message always stays */
	return at > KEEP_FIRST && (at - KEEP_FIRST) * 10 >= n ? at : 0;
}

/*
 * shrink learns from a refusal as too large: the budget becomes half of
 * what was sent (or of the budget in force, when smaller).  -1 once it
 * would fall below MIN_BUDGET: the refusal then stands.
 */
static int
shrink(struct agent *ag, size_t sent)
{
	int64_t b = budget(ag), half;

	if (b <= 0 || (size_t)b > sent)
		b = (int64_t)sent;
	half = b / 2;
	if (half < MIN_BUDGET)
		return -1;
	ag->learnt = half;
	return 0;
}

/*
 * piece: the end of the next piece to summarize, from KEEP_FIRST (the
 * summary so far, once there is one) up to at: at most three quarters of
 * the budget, the share a turn may fill before it is condensed
 * (PIECE_TOKENS when none is known), and never less than two messages,
 * so every piece moves on.  A message larger than a piece on its own is
 * cut short in the request (piece_text).
 */
static size_t
piece(const struct agent *ag, size_t at, size_t *limit)
{
	int64_t b = budget(ag);
	size_t end = KEEP_FIRST, sum = 0, k;

	*limit = b > 0 ? (size_t)(b * 3 / 4) : PIECE_TOKENS;
	while (end < at) {
		k = tokens(ag->messages->u.a[end]);
		if (end >= KEEP_FIRST + 2 && sum + k > *limit)
			break;
		sum += k;
		end++;
	}
	return end;
}

/* piece_text: messages [KEEP_FIRST, end) as JSON lines, in limit tokens */
static void
piece_text(const struct agent *ag, size_t end, size_t limit,
    struct buf *b)
{
	size_t i, cap = limit * 4, room;
	struct buf one;

	buf_init(&one);
	for (i = KEEP_FIRST; i < end; i++) {
		buf_clear(&one);
		json_canon(&one, ag->messages->u.a[i]);
		room = cap / (end - KEEP_FIRST);
		if (one.len > room) {
			one.len = room;	/* canonical JSON is ASCII */
			buf_printf(&one, " [... cut short: too long to "
			    "summarize whole]");
		}
		buf_add(b, one.p, one.len);
		buf_addc(b, '\n');
	}
	buf_release(&one);
}

/*
 * summarize asks the route for a summary of messages [KEEP_FIRST, end)
 * and records it as one condensation; a refusal as too large shrinks
 * the budget and returns 1 (nothing recorded), so the caller tries a
 * smaller piece.
 */
static int
summarize(struct agent *ag, size_t end, size_t limit)
{
	struct arena *t = &ag->t;
	struct jval *msgs, *m, *d[3], *c;
	struct model_reply rep;
	struct counts tot;
	struct buf b;
	const char *code = NULL;
	size_t sent;
	int rc;

	arena_clear(t);
	buf_init(&b);
	piece_text(ag, end, limit, &b);
	sent = b.len / 4;
	msgs = json_new(t, J_ARRAY);
	m = json_obj(t);
	put(ag, m, "role", str(ag, "system"));
	put(ag, m, "content", str(ag, condense_prompt));
	json_push(t, msgs, m);
	m = json_obj(t);
	put(ag, m, "role", str(ag, "user"));
	put(ag, m, "content", json_strn(t, b.p ? b.p : "", b.len));
	json_push(t, msgs, m);
	buf_release(&b);
	model_reply_init(&rep);
	if (model_complete(&ag->route, msgs, NULL, &rep, NULL, NULL,
	    &code) < 0) {
		rc = rep.too_large && shrink(ag, sent) == 0 ? 1 : -1;
		model_reply_release(&rep);
		return rc > 0 ? 1 : stop(ag, code ? code : "HW-AGENT-999",
		    hw_err_msg());
	}
	count(&ag->use[USE_CONDENSER], &rep);
	arena_clear(t);
	d[0] = usage_draft(ag, "condenser", &ag->use[USE_CONDENSER], &rep);
	d[1] = usage_draft(ag, "total", total(ag, &tot), &rep);
	d[2] = draft(ag, "agent_message.emitted");
	c = json_obj(t);
	put(ag, c, "from", json_int(t, ag->mseq[KEEP_FIRST]));
	put(ag, c, "through", json_int(t, ag->mseq[end - 1]));
	put(ag, payload(d[2]), "content", text(ag, rep.content.p,
	    rep.content.len));
	put(ag, payload(d[2]), "condensation", c);
	rc = commit(ag, d, 3);
	model_reply_release(&rep);
	return rc;
}

/*
 * condense summarizes messages [KEEP_FIRST, at) in pieces that fit the
 * input budget, each recorded as it is made: the first piece's
 * summary replaces it (ingest: condensed), and the next piece starts
 * with that summary, so the last one covers everything and no request
 * grows with the history.
 */
static int
condense(struct agent *ag, size_t at)
{
	size_t end, limit;
	int rc;

	while (at > KEEP_FIRST + 1) {
		end = piece(ag, at, &limit);
		if ((rc = summarize(ag, end, limit)) < 0)
			return -1;
		if (rc == 0)	/* [KEEP_FIRST, end) is one message now */
			at -= end - KEEP_FIRST - 1;
	}
	return 0;
}

/* request_tokens: what a turn sends, roughly */
static size_t
request_tokens(const struct agent *ag)
{
	size_t i, n = 0;

	for (i = 0; i < ag->messages->n; i++)
		n += tokens(ag->messages->u.a[i]);
	return n;
}

/* turn: one model call and what follows from it */
static int
turn(struct agent *ag, int *wait)
{
	struct model_reply rep;
	const char *code = NULL;
	size_t at;
	int rc, tries;

	if (ensure_running(ag) < 0)
		return -1;
	for (tries = 0;; tries++) {
		if ((at = cut(ag)) && condense(ag, at) < 0)
			return -1;
		buf_clear(&ag->stream);
		redact_stream_clear(&ag->shown);
		model_reply_init(&rep);
		model_on_wait(waiting, ag);
		rc = model_complete(&ag->route, ag->messages, ag->tools, &rep,
		    on_delta, ag, &code);
		model_on_wait(NULL, NULL);
		if (rc == 0)
			break;
		if (code && !strcmp(code, MODEL_INTERRUPTED)) {
			/* paused meanwhile: the loop stops at its boundary */
			model_reply_release(&rep);
			return ag->wait_failed ? -1 : 0;
		}
		/* too large: condense further and ask again */
		if (rep.too_large && tries < SHRINKS &&
		    shrink(ag, request_tokens(ag)) == 0) {
			model_reply_release(&rep);
			continue;
		}
		model_reply_release(&rep);
		return stop(ag, code ? code : "HW-AGENT-999", hw_err_msg());
	}
	count(&ag->use[USE_AGENT], &rep);
	arena_clear(&ag->t);
	rc = respond(ag, &rep, wait);
	model_reply_release(&rep);
	if (rc == 0 && stuck(ag)) {
		*wait = 1;
		return stop(ag, "HW-AGENT-003", "The agent proposed the same "
		    "actions again and again and was stopped.");
	}
	return rc;
}

/* finish: the finish tool's message, then the finished state */
static int
finish(struct agent *ag, struct set *s)
{
	struct jval *d[2];
	const char *msg = NULL;
	size_t i, k = 0;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->m[i]->name, "finish"))
			msg = json_get_str(s->m[i]->args, "message");
	arena_clear(&ag->t);
	if (msg) {
		d[k] = draft(ag, "agent_message.emitted");
		put(ag, payload(d[k++]), "content", text(ag, msg, strlen(msg)));
	}
	d[k++] = lifecycle(ag, "finished");
	return commit(ag, d, k);
}

/* elsewhere_notice: why a set that shows approved does not run */
static void
elsewhere_notice(struct agent *ag, const struct set *s)
{
	fprintf(stderr, "hw-agent: action set '%s' of session '%s' was "
	    "decided elsewhere, not by you on this machine: it waits for "
	    "your own decision (hw allow %s, or hw reject)\n", s->group,
	    ag->s->id, s->group);
	if (ag->elsewhere_why[0])
		fprintf(stderr, "hw-agent: %s\n", ag->elsewhere_why);
}

static int
loop(struct agent *ag)
{
	struct set *s;
	int i, wait = 0, finished = 0;

	for (i = 0; i < ag->o.max_iterations && !wait; ) {
		if (serve(ag) < 0)
			return -1;
		if ((s = open_set(ag))) {
			if (!s->decided && s->elsewhere)
				elsewhere_notice(ag, s);
			if (!s->decided)
				return 0;	/* waiting for the researcher */
			if (ensure_running(ag) < 0)
				return -1;
			if ((s->approved ? run_set(ag, s, &finished) :
			    reject_set(ag, s)) < 0)
				return -1;
			if (finished)
				return finish(ag, s);
			continue;
		}
		if (ag->paused)
			return pause_here(ag);
		if (!needs_model(ag)) {
			if (strcmp(ag->status, "running") &&
			    strcmp(ag->status, "paused"))
				return 0;
			arena_clear(&ag->t);
			return commit1(ag, lifecycle(ag, "idle"));
		}
		if (turn(ag, &wait) < 0)
			return -1;
		i++;
	}
	if (i == ag->o.max_iterations && !wait)
		return stop(ag, "HW-AGENT-003", "The agent reached its limit of "
		    "model calls for one run.");
	return 0;
}

static void
agent_init(struct agent *ag, struct session *s, const struct agent_opts *o)
{
	memset(ag, 0, sizeof *ag);
	ag->s = s;
	ag->o = *o;
	arena_init(&ag->a);
	arena_init(&ag->t);
	buf_init(&ag->scratch);
	buf_init(&ag->stream);
	redact_stream_init(&ag->shown);
	smap_init(&ag->members);
	ag->messages = json_new(&ag->a, J_ARRAY);
	ag->held = json_new(&ag->a, J_ARRAY);
	ag->status = "idle";
	ag->pj = proj_new(s->id);
	if (random_hex(ag->epoch, 16) < 0)
		snprintf(ag->epoch, sizeof ag->epoch, "%d", (int)getpid());
}

static void
agent_release(struct agent *ag)
{
	size_t i;

	for (i = 0; i < ag->nsets; i++) {
		free(ag->sets[i]->m);
		buf_release(&ag->sets[i]->fingerprint);
	}
	free(ag->sets);
	free(ag->mseq);
	toolbox_free(ag->tb);
	model_route_release(&ag->route);
	smap_release(&ag->members);
	proj_free(ag->pj);
	buf_release(&ag->scratch);
	buf_release(&ag->stream);
	redact_stream_release(&ag->shown);
	arena_release(&ag->a);
	arena_release(&ag->t);
}

/* redact_allowed: the values of the user's allowlisted variables too */
static void
redact_allowed(void)
{
	extern char **environ;
	char **e, *eq, name[256];

	for (e = environ; *e; e++) {
		if (!(eq = strchr(*e, '=')) || (size_t)(eq - *e) >= sizeof name)
			continue;
		memcpy(name, *e, (size_t)(eq - *e));
		name[eq - *e] = '\0';
		if (credential_allowed(name) == 1)
			redact_secret(eq + 1, strlen(eq + 1));
	}
}

/* prepare: the model route, the tools and the system message */
static int
prepare(struct agent *ag)
{
	const char *scrub[2] = { NULL, NULL };
	struct jval *sys;

	if (model_route_from_env(&ag->route) < 0)
		return -1;
	redact_env(ag->route.key_env);	/* never stored nor shown */
	redact_allowed();
	scrub[0] = ag->route.key_env;
	if (!(ag->tb = toolbox_new(".", scrub)))
		return -1;
	ag->tools = json_new(&ag->a, J_ARRAY);
	tool_schemas(&ag->a, ag->tools);
	sys = json_obj(&ag->a);
	json_add(&ag->a, sys, "role", json_str(&ag->a, "system"));
	json_add(&ag->a, sys, "content", json_str(&ag->a, system_prompt));
	push(ag, sys);
	return 0;
}

int
agent_run(struct session *s, const struct agent_opts *o)
{
	struct agent ag;
	int rc = -1, k;

	agent_init(&ag, s, o);
	if (prepare(&ag) < 0)
		goto out;
	/* one verification: the events are read while the lease is taken */
	if ((k = session_take(s, ingest_fn, &ag)) != 0) {
		if (k > 0)
			hw_err_set(HW_EXIT_BUSY, "an agent already runs "
			    "session '%s' and takes its commands; nothing was "
			    "done", s->id);
		goto out;
	}
	s->bind = decision_bind;	/* its policy decisions are the user's */
	if (!(ag.ctl = control_open(s, ag.pj)))
		goto unlease;
	if (receipts_interrupted(s) < 0)
		goto unlease;
	if (ag.fatal) {
		hw_err_set(HW_EXIT_FAIL, "the session stopped on an "
		    "unrecoverable error; continue in a new session");
		goto unlease;
	}
	rc = !strcmp(ag.status, "running") ? recover(&ag) : loop(&ag);
unlease:
	control_close(ag.ctl);	/* while the lease still makes it ours */
	if (session_unlease(s) < 0)
		rc = -1;
out:
	agent_release(&ag);
	return rc;
}
