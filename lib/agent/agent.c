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
#include "agent/loop.h"

/* ---- the control socket: other processes' commands between steps ---- */

/* serve applies what waits on the socket, ingesting it as our own */
static int
serve(struct agent *ag)
{
	return control_poll(ag->ctl, ag_ingest_fn, ag);
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
	return ag_commit1(ag, ag_lifecycle(ag, "paused"));
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
	struct jval *d = ag_draft(ag, "tool_call.proposed"), *p = ag_payload(d);
	struct jval *paths = json_new(&ag->t, J_ARRAY);
	const char *summary = json_get_str(args, "summary");
	const char *path = json_get_str(args, "path");
	char root[4096];

	if (!getcwd(root, sizeof root))
		snprintf(root, sizeof root, ".");
	if (!strcmp(name, "file_editor") && path)
		json_push(&ag->t, paths, ag_str(ag, path));
	ag_put(ag, p, "tool_call_id", ag_str(ag, id));
	ag_put(ag, p, "action_id", ag_str(ag, action));
	ag_put(ag, p, "tool_name", ag_str(ag, name));
	ag_put(ag, p, "kind", ag_str(ag, kind_of(name)));
	ag_put(ag, p, "risk", ag_str(ag, risk_word[r]));
	ag_put(ag, p, "summary", summary ? json_strn(&ag->t, summary,
	    ag_chars_prefix(summary, SUMMARY_CHARS)) : ag_str(ag, name));
	ag_put(ag, p, "arguments", json_copy(&ag->t, args));
	ag_put(ag, p, "affected_paths", paths);
	ag_put(ag, p, "project_path", ag_str(ag, root));
	ag_task_fields(ag, name, args, p);
	return d;
}

static struct jval *
request(struct agent *ag, const struct jval *prop, const char *group)
{
	const struct jval *pp = ag_payload((struct jval *)prop);
	struct jval *d = ag_draft(ag, "confirmation.requested");
	struct jval *q = json_obj(&ag->t);
	static const char *const copy[] = { "tool_call_id", "tool_name",
		"risk", "summary", "arguments", "action_id", "kind",
		"affected_paths", "project_path", NULL };
	const char *const *k;
	char id[300];

	snprintf(id, sizeof id, "%s-confirm", json_get_str(pp,
	    "tool_call_id"));
	ag_put(ag, q, "schema_version", ag_str(ag,
	    "heartwood.confirmation-request.v1"));
	ag_put(ag, q, "request_id", ag_str(ag, id));
	ag_put(ag, q, "session_id", ag_str(ag, ag->s->id));
	ag_put(ag, q, "group_id", ag_str(ag, group));
	for (k = copy; *k; k++)
		ag_put(ag, q, *k, json_get(pp, *k));
	ag_put(ag, ag_payload(d), "request", q);
	return d;
}

static struct jval *
decision(struct agent *ag, struct set *s, const char *why)
{
	struct jval *d = ag_draft(ag, "approval.recorded"), *p = ag_payload(d);
	struct jval *ids = json_new(&ag->t, J_ARRAY);
	char cid[64];
	size_t i;

	for (i = 0; i < s->n; i++)
		json_push(&ag->t, ids, ag_str(ag, s->m[i]->id));
	snprintf(cid, sizeof cid, "%s-policy", s->group);
	ag_put(ag, p, "command_id", ag_str(ag, cid));
	ag_put(ag, p, "group_id", ag_str(ag, s->group));
	ag_put(ag, p, "decision", ag_str(ag, "approved"));
	ag_put(ag, p, "tool_call_ids", ids);
	ag_put(ag, p, "policy", ag_str(ag, why));
	return d;
}

static struct jval *
resolved(struct agent *ag, const struct member *x, int approved)
{
	struct jval *d = ag_draft(ag, "confirmation.resolved");

	ag_put(ag, ag_payload(d), "tool_call_id", ag_str(ag, x->id));
	ag_put(ag, ag_payload(d), "group_id", ag_str(ag, x->group));
	ag_put(ag, ag_payload(d), "decision", ag_str(ag, approved ? "approved" :
	    "denied"));
	return d;
}

/* ---- running members ---- */

static struct jval *
execution(struct agent *ag, const struct member *x, struct tool_result *r)
{
	struct jval *d = ag_draft(ag, "tool.execution.recorded"), *p = ag_payload(d);

	ag_put(ag, p, "backend_id", ag_str(ag, "hw-agent"));
	ag_put(ag, p, "tool_call_id", ag_str(ag, x->id));
	ag_put(ag, p, "action_id", ag_str(ag, x->action));
	ag_put(ag, p, "tool_name", ag_str(ag, x->name));
	ag_put(ag, p, "exit_code", json_int(&ag->t, r->exit_code));
	ag_put(ag, p, "summary", json_strn(&ag->t, r->summary.p ? r->summary.p :
	    "", r->summary.len));
	ag_put(ag, p, "result", json_strn(&ag->t, r->output.p ? r->output.p : "",
	    r->output.len));
	ag_put(ag, p, "result_truncated", json_bool(&ag->t, r->truncated));
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
	if (!s->m[i]->started && ag_commit1(ag, resolved(ag, s->m[i], 1)) < 0)
		return -1;
	for (; i < s->n && rc == 0; i++) {
		if (serve(ag) < 0)
			return -1;
		tool_result_init(&r);
		terminal_on_wait(tool_waiting, ag);
		k = !strcmp(s->m[i]->name, "task") ? ag_task_run(ag, s->m[i],
		    &r) : !strcmp(s->m[i]->name, "invoke_skill") ?
		    ag_invoke_skill(ag, s->m[i], &r) : tool_run(ag->tb,
		    s->m[i]->name, s->m[i]->args, &r);
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
			d[n] = ag_draft(ag, "task.plan.updated");
			ag_put(ag, ag_payload(d[n++]), "tasks", plan);
		}
		if (!strcmp(s->m[i]->name, "finish"))
			*finished = 1;
		if (i + 1 < s->n)
			d[n++] = resolved(ag, s->m[i + 1], 1);
		rc = ag_commit(ag, d, n);
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
	rc = n ? ag_commit(ag, d, n) : 0;
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

/*
 * route_decision: the policy's decision on the model route (hw-policy(7)),
 * evaluated once a run before any model call or approved continuation;
 * NULL with the error when the policy cannot be read, *denied when the
 * route is denied (the draft records the denial)
 */
static struct jval *
route_decision(struct agent *ag, int *denied, const char **why)
{
	struct jval *d, *dec, *att, *prof, *cfg;
	struct platform_detection pd;
	struct policy_profile pol;
	struct policy_decision pdec;
	const char *tier = getenv("HW_CAPABILITY_TIER");
	const char *mode = ag->o.auto_low_risk ? "confirm-risky" :
	    "always-confirm";
	char id[200], *ep;
	int rc;

	if (!tier || !*tier)
		tier = "supervised";
	platform_detect(&pd);
	if (config_load(&ag->t, &cfg) < 0 ||
	    policy_for_route(&ag->t, cfg, pd.id, &ag->route, &pol) < 0)
		return NULL;
	ep = route_call_url(&ag->route, 0);
	rc = policy_evaluate(&ag->t, &pol, ep, 0, tier, mode,
	    route_credential_ref(&ag->route), &pdec);
	free(ep);
	if (rc < 0)
		return NULL;
	snprintf(id, sizeof id, "%s-model-route-%lld", ag->s->id,
	    (long long)ag->count);
	policy_record(&ag->t, &pol, &pdec, id, ag->s->id, "agent-turn", tier,
	    &dec, &att);
	d = ag_draft(ag, "model_call.decision.recorded");
	prof = json_obj(&ag->t);
	ag_put(ag, prof, "backend_id", ag_str(ag, "hw-agent"));
	ag_put(ag, prof, "profile_id", ag_str(ag, ag->route.model));
	ag_put(ag, prof, "capability_tier", ag_str(ag, tier));
	ag_put(ag, prof, "action_confirmation_mode", ag_str(ag, mode));
	ag_put(ag, prof, "credential_isolation",
	    ag_str(ag, route_isolation(&ag->route)));
	ag_put(ag, ag_payload(d), "decision", dec);
	ag_put(ag, ag_payload(d), "attestation", att);
	ag_put(ag, ag_payload(d), "model_profile", prof);
	*denied = strcmp(pdec.decision, "allow") != 0;
	*why = pdec.reason;
	return d;
}

/*
 * sub_ready: on the subscription route, a usable sign-in (refreshed when
 * it expires soon) before anything is recorded or run, so that a refused
 * refresh leaves every set as it was until the researcher signs in again
 */
static int
sub_ready(struct agent *ag)
{
	struct sub_tokens t;
	char *msg;
	int code;

	if (ag->route.provider != ROUTE_SUBSCRIPTION)
		return 0;
	if (sub_access_token(0, &t) == 0) {
		sub_tokens_release(&t);
		return 0;
	}
	code = hw_err_code();
	msg = xstrdup(hw_err_msg());
	hw_err_set(code, "%s: %s", code == HW_EXIT_UNAVAILABLE ?
	    MODEL_TRANSIENT : MODEL_AUTH, msg);
	free(msg);
	return -1;
}

/*
 * ensure_running: the run's start and the policy's decision, durable
 * before any model call; a denied route stops the run before any byte of
 * it leaves the machine
 */
static int
ensure_running(struct agent *ag)
{
	struct jval *d[2], *dec = NULL;
	const char *why = NULL;
	size_t k = 0;
	int denied = 0;

	if (ag->routed && !strcmp(ag->status, "running"))
		return 0;
	arena_clear(&ag->t);
	if (!ag->routed) {
		/* the policy first: a denied route sends nothing anywhere */
		if (!(dec = route_decision(ag, &denied, &why)) ||
		    (!denied && sub_ready(ag) < 0))
			return -1;
		ag->routed = 1;
		if (denied) {
			char *msg = xstrdup(why);
			int rc = ag_commit1(ag, dec) < 0 ? -1 :
			    ag_stop(ag, "HW-AGENT-011", msg);

			free(msg);
			return rc;
		}
	}
	if (strcmp(ag->status, "running"))
		d[k++] = ag_lifecycle(ag, "running");
	if (dec)
		d[k++] = dec;
	return k ? ag_commit(ag, d, k) : 0;
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
	const char *refuse = NULL;
	int64_t seq = ag->count;
	enum risk r;
	int rc = -1;

	/* usage, text, proposals and any decision: one durable batch */
	d[k++] = ag_usage_draft(ag, "agent", &ag->use[USE_AGENT], rep);
	d[k++] = ag_usage_draft(ag, "total", ag_total(ag, &tot), rep);
	seq += 2;
	if (rep->content.len || !n) {
		d[k] = ag_draft(ag, "agent_message.emitted");
		ag_put(ag, ag_payload(d[k++]), "content", ag_text(ag, rep->content.p,
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
			return ag_stop(ag, "HW-AGENT-011", why);
		}
		snprintf(id, sizeof id, "call-%lld", (long long)seq);
		snprintf(action, sizeof action, "act-%lld", (long long)seq);
		if (!refuse)
			refuse = ag_task_refusal(ag, rep->calls[i].name, args);
		r = risk_of(rep->calls[i].name, args);
		ro += tool_read_only(rep->calls[i].name);
		low += r == RISK_LOW;
		d[k++] = proposal(ag, id, action, rep->calls[i].name, args, r);
		m[i] = arena_alloc(&ag->t, sizeof **m);
		m[i]->id = json_get_str(ag_payload(d[k - 1]), "tool_call_id");
	}
	if (n) {
		group_id(m, n, group);
		tmp.group = group;
		tmp.m = m;
		tmp.n = n;
	}
	if (n && refuse) {
		/* a task outside the catalog: the set, without review */
		for (i = 0; i < n; i++)
			m[i]->group = group;
		d[k++] = ag_task_rejection(ag, m, n, group, refuse);
	} else if (n && (ro == n || (ag->o.auto_low_risk &&
	    route_unattended_ok(&ag->route) && low == n && confined(ag)))) {
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
		d[k++] = ag_lifecycle(ag, "waiting-for-confirmation");
		*wait = 1;
	} else {
		d[k++] = ag_lifecycle(ag, "idle");
		*wait = 1;
	}
	rc = ag_commit(ag, d, k);
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
			json_push(&ag->t, ids, ag_str(ag, s->m[i]->id));
	if (!ids->n) {
		if (ag_commit1(ag, ag_error_draft(ag, "HW-AGENT-007", "The agent's "
		    "process stopped during a turn; its outcome is unknown "
		    "and it will not be repeated.")) < 0)
			return -1;
		return hw_err_set(HW_EXIT_FAIL, "HW-AGENT-007: the previous "
		    "run stopped mid-turn; continue in a new session");
	}
	d = ag_error_draft(ag, "HW-AGENT-006", "An approved action started but "
	    "its outcome was not recorded; it will not be run again.");
	ag_put(ag, ag_payload(d), "command_id", ag_str(ag, "recovery"));
	ag_put(ag, ag_payload(d), "group_id", ag_str(ag, s->group));
	ag_put(ag, ag_payload(d), "tool_call_ids", ids);
	if (ag_commit1(ag, d) < 0)
		return -1;
	return hw_err_set(HW_EXIT_FAIL, "HW-AGENT-006: an approved action's "
	    "outcome is unknown; continue in a new session");
}

static int
needs_model(struct agent *ag)
{
	struct jval *m = ag_last_message(ag);

	return m && (json_is_str(json_get(m, "role"), "user") ||
	    json_is_str(json_get(m, "role"), "tool"));
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
		if ((at = ag_cut(ag)) && ag_condense(ag, at) < 0)
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
		    ag_shrink(ag, ag_request_tokens(ag)) == 0) {
			model_reply_release(&rep);
			continue;
		}
		model_reply_release(&rep);
		return ag_stop(ag, code ? code : "HW-AGENT-999", hw_err_msg());
	}
	ag_count(&ag->use[USE_AGENT], &rep);
	arena_clear(&ag->t);
	rc = respond(ag, &rep, wait);
	model_reply_release(&rep);
	if (rc == 0 && stuck(ag)) {
		*wait = 1;
		return ag_stop(ag, "HW-AGENT-003", "The agent proposed the same "
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
		d[k] = ag_draft(ag, "agent_message.emitted");
		ag_put(ag, ag_payload(d[k++]), "content", ag_text(ag, msg, strlen(msg)));
	}
	d[k++] = ag_lifecycle(ag, "finished");
	return ag_commit(ag, d, k);
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
			return ag_commit1(ag, ag_lifecycle(ag, "idle"));
		}
		if (turn(ag, &wait) < 0)
			return -1;
		i++;
	}
	if (i == ag->o.max_iterations && !wait)
		return ag_stop(ag, "HW-AGENT-003", "The agent reached its limit of "
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
	prompts_init(&ag->prompts);
	specialists_init(&ag->spec);
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
	prompts_release(&ag->prompts);
	specialists_release(&ag->spec);
	for (i = 0; i < ag->nsu; i++)
		free(ag->su[i].id);
	free(ag->su);
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

	if (prompts_load(&ag->prompts) < 0)
		return -1;
	if (model_route_from_env(&ag->route) < 0)
		return -1;
	redact_env(ag->route.key_env);	/* never stored nor shown */
	if (ag->route.key)
		redact_secret(ag->route.key, strlen(ag->route.key));
	if (ag->route.managed && identity_ready() < 0)
		return -1;
	redact_allowed();
	scrub[0] = ag->route.key_env;
	if (!(ag->tb = toolbox_new(".", scrub)))
		return -1;
	ag->tools = json_new(&ag->a, J_ARRAY);
	tool_schemas(&ag->a, ag->tools);
	if (ag_specialists_prepare(ag) < 0)
		return -1;
	/* the active skills, checked again each time the agent starts */
	if (ag_skills_prepare(ag) < 0)
		return -1;
	sys = json_obj(&ag->a);
	json_add(&ag->a, sys, "role", json_str(&ag->a, "system"));
	json_add(&ag->a, sys, "content", json_str(&ag->a,
	    buf_cstr(&ag->prompts.system)));
	ag_push(ag, sys);
	return 0;
}

/* What the lease's reading hands on, after the agent's snapshot */
struct since {
	struct agent *ag;
	int snap;		/* ag holds the snapshot's state */
	int used;		/* ... and the logs still hold its position */
	int checked;
};

static int
ingest_since(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct since *c = ctx;

	if (!c->checked) {
		c->checked = 1;
		if (c->snap && !c->used) {	/* every event comes */
			ag_forget(c->ag);
			c->snap = 0;
		}
	}
	return ag_ingest_fn(c->ag, line, n, ev);
}

/*
 * keep_snapshot leaves the agent's state where the logs end, for the next
 * run to start from; like the head, one that cannot be written is
 * reported as any failed write to the store is
 */
static int
keep_snapshot(struct agent *ag, const struct since *c,
    const struct logpos *from)
{
	struct logpos end;

	if (logs_writer_end(ag->s, &end) < 0 || end.count != ag->count ||
	    proj_revision(ag->pj) != end.count - 1 ||
	    (c->snap && end.count == from->count))
		return 0;
	return ag_snap_save(ag, &end);
}

static void
keep_quietly(struct agent *ag, const struct since *c,
    const struct logpos *from)
{
	int code = hw_err_code();
	char saved[1024];

	snprintf(saved, sizeof saved, "%s", hw_err_msg());
	keep_snapshot(ag, c, from);
	hw_err_set(code, "%s", saved);
}

int
agent_run(struct session *s, const struct agent_opts *o)
{
	struct agent ag;
	struct logpos from;
	struct since c = { &ag, 0, 0, 0 };
	int rc = -1, k;

	agent_init(&ag, s, o);
	if (prepare(&ag) < 0)
		goto out;
	c.snap = ag_snap_load(&ag, &from) == 0;
	/*
	 * One verification: the events are read while the lease is taken,
	 * only those after the agent's snapshot when the logs hold it.
	 */
	k = session_take_since(s, c.snap ? &from : NULL, &c.used,
	    ingest_since, &c);
	if (k == 0 && c.snap && !c.used) {	/* and no event came */
		ag_forget(&ag);
		c.snap = 0;
	}
	if (k != 0) {
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
	if (rc == 0 && keep_snapshot(&ag, &c, &from) < 0)
		rc = -1;
	else if (rc < 0)
		keep_quietly(&ag, &c, &from);	/* the run's error stands */
	if (session_unlease(s) < 0)
		rc = -1;
out:
	agent_release(&ag);
	return rc;
}
