/*
 * task.c - the task tool: a delegation to a research specialist is one
 * member of an action set, reviewed as any other; once allowed, the
 * specialist runs as a child, tool-free and advisory, through the same
 * model route with its own system prompt and limits, and its answer is
 * the member's observation
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "agent/loop.h"
#include "skill/skill.h"

/* what the parent is told when its child did not answer */
#define TASK_FAILED "The specialist could not complete this task: it " \
	"stopped before it gave an answer, and no part of its work is " \
	"available. Continue without it or delegate again."
#define TASK_INTERRUPTED "The specialist was interrupted before it " \
	"answered, because the session was paused; no part of its work is " \
	"available."
#define CONV_SCHEMA "heartwood.subagent-conversation.v1"
#define CONV_MAX (64u << 20)	/* a conversation file read back */
#define TASK_NO_TOOLS "You have no tools in this conversation. Answer " \
	"with text only."
#define TASK_SUFFIX "\n\nYou are advising a research coding agent that " \
	"delegated one objective to you. You have no tools and see only " \
	"what it wrote: give your answer as text, briefly, and say what you " \
	"could not check."

static const char TASK_DESC[] =
    "Delegate one objective to a research specialist: an advisory "
    "reviewer or planner with its own instructions, which answers with "
    "text and takes no action. The specialist sees only `prompt`, so "
    "put everything it needs in it. One specialist runs at a time; "
    "`resume` is not supported.\n\nSpecialists:\n";

int
ag_specialists_prepare(struct agent *ag)
{
	const char **types;
	struct buf d;
	size_t i, k = 0;

	if (specialists_load(&ag->spec) < 0)
		return -1;
	if (!specialists_available(&ag->spec))
		return 0;	/* the task tool only when there are some */
	types = arena_alloc(&ag->a, (ag->spec.n + 1) * sizeof *types);
	buf_init(&d);
	buf_adds(&d, TASK_DESC);
	for (i = 0; i < ag->spec.n; i++) {
		if (!ag->spec.v[i].available)
			continue;
		types[k++] = ag->spec.v[i].name;
		buf_printf(&d, "- %s (%s): %s\n", ag->spec.v[i].name,
		    ag->spec.v[i].label, ag->spec.v[i].description);
	}
	types[k] = NULL;
	tool_task_schema(&ag->a, ag->tools, buf_cstr(&d), types);
	buf_release(&d);
	return 0;
}

/* the catalog entry a task call names, if any */
static const struct specialist *
named(struct agent *ag, const struct jval *args)
{
	return specialist_find(&ag->spec, json_get_str(args,
	    "subagent_type"));
}

void
ag_task_fields(struct agent *ag, const char *tool, const struct jval *args,
    struct jval *payload)
{
	const struct specialist *x = strcmp(tool, "task") ? NULL :
	    named(ag, args);

	ag_put(ag, payload, "specialist_label", x ? ag_str(ag, x->label) :
	    NULL);
	ag_put(ag, payload, "specialist_capability", x ? ag_str(ag,
	    x->capability) : NULL);
}

const char *
ag_task_refusal(struct agent *ag, const char *tool, const struct jval *args)
{
	const struct specialist *x;
	const struct jval *resume;
	const char *type;

	if (strcmp(tool, "task"))
		return NULL;
	resume = json_get(args, "resume");
	if (resume && resume->t != J_NULL)
		return "This task was rejected automatically: resuming a "
		    "specialist is not supported. Delegate again with the "
		    "whole objective in `prompt`.";
	type = json_get_str(args, "subagent_type");
	x = named(ag, args);
	if (!type || !x)
		return "This task was rejected automatically: it names no "
		    "specialist of the catalog (`subagent_type`).";
	if (!x->available)
		return "This task was rejected automatically: that specialist "
		    "is unavailable.";
	if (!json_get_str(args, "prompt") || !*json_get_str(args, "prompt"))
		return "This task was rejected automatically: `prompt` is "
		    "required.";
	return NULL;
}

struct jval *
ag_task_rejection(struct agent *ag, struct member **m, size_t n,
    const char *group, const char *why)
{
	struct jval *d = ag_draft(ag, "approval.recorded"), *p = ag_payload(d);
	struct jval *ids = json_new(&ag->t, J_ARRAY);
	char cid[64];
	size_t i;

	for (i = 0; i < n; i++)
		json_push(&ag->t, ids, ag_str(ag, m[i]->id));
	snprintf(cid, sizeof cid, "%s-policy", group);
	ag_put(ag, p, "command_id", ag_str(ag, cid));
	ag_put(ag, p, "group_id", ag_str(ag, group));
	ag_put(ag, p, "decision", ag_str(ag, "rejected"));
	ag_put(ag, p, "tool_call_ids", ids);
	ag_put(ag, p, "policy", ag_str(ag, "automatic-task-rejection"));
	ag_put(ag, p, "reason", ag_str(ag, why));
	return d;
}

/* ---- the child ---- */

struct child {
	struct agent *ag;
	const struct member *x;
	const struct specialist *sp;
	char invocation[128], usage_id[160];
	struct counts *use;
	int iterations;
	struct counts run;	/* this run's calls and price */
	char *conv;		/* its conversation's file, or NULL */
	char sha[SHA256_HEX + 1];	/* of the bytes read back, or "" */
	size_t nmsgs;
	struct buf saved;	/* those bytes */
};

/* private_dir: path a directory of this user's, 0700, not a link */
static int
private_dir(const char *path)
{
	if (ensure_dir(path) < 0)
		return -1;
	if (chmod(path, 0700) < 0)
		return hw_err_sys("cannot chmod '%s'", path);
	return 0;
}

/*
 * conv_open: the child's conversation file,
 * <session>/openhands/subagents/<invocation>.json, its directories
 * owner-only and never a symbolic link (the reference's layout); -1
 */
static int
conv_open(struct child *c)
{
	char *oh = path_join(c->ag->s->dir, "openhands");
	char *sub = path_join(oh, "subagents"), *name;
	int rc = -1;

	if (private_dir(oh) == 0 && private_dir(sub) == 0) {
		name = xasprintf("%s.json", c->invocation);
		c->conv = path_join(sub, name);
		free(name);
		rc = 0;
	}
	free(oh);
	free(sub);
	return rc;
}

/*
 * conv_save replaces the conversation file with msgs as they stand
 * (redacted like every stored text): owner-only, atomically, refusing a
 * target that is not a regular file; -1
 */
static int
conv_save(struct child *c, const char *status, const struct jval *msgs)
{
	struct arena a;
	struct jval *o;
	int rc;

	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "schema_version", json_str(&a, CONV_SCHEMA));
	json_add(&a, o, "invocation_id", json_str(&a, c->invocation));
	json_add(&a, o, "agent_name", json_str(&a, c->sp->name));
	json_add(&a, o, "parent_action_id", json_str(&a, c->x->action));
	json_add(&a, o, "status", json_str(&a, status));
	json_add(&a, o, "iterations", json_int(&a, c->iterations));
	json_add(&a, o, "messages", json_copy(&a, msgs));
	redact_json(&a, o);
	buf_clear(&c->saved);
	json_canon(&c->saved, o);
	buf_addc(&c->saved, '\n');
	arena_release(&a);
	if ((rc = atomic_replace(c->conv, c->saved.p, c->saved.len)) == 0)
		c->nmsgs = msgs->n;
	return rc;
}

/*
 * conv_read_back: the file holds what was last written, read as any
 * private file is (a regular file of ours, owner-only, not a link): the
 * digest the lineage names is of the bytes read; -1
 */
static int
conv_read_back(struct child *c)
{
	struct buf b;
	int same;

	buf_init(&b);
	same = private_bytes(c->conv, CONV_MAX, &b) == 0 &&
	    b.len == c->saved.len && !memcmp(b.p, c->saved.p, b.len);
	if (same)
		sha256_hex(b.p, b.len, c->sha);
	buf_release(&b);
	return same ? 0 : hw_err_set(HW_EXIT_DATA, "the conversation of "
	    "'%s' did not read back as written", c->invocation);
}

/* conversation_ref: where the child's conversation is kept, or NULL */
static struct jval *
conversation_ref(struct child *c)
{
	struct agent *ag = c->ag;
	struct jval *o;
	char *rel;

	if (!c->sha[0])
		return NULL;
	o = json_obj(&ag->t);
	rel = xasprintf("openhands/subagents/%s.json", c->invocation);
	ag_put(ag, o, "path", ag_str(ag, rel));
	ag_put(ag, o, "messages", json_int(&ag->t, (int64_t)c->nmsgs));
	ag_put(ag, o, "sha256", ag_str(ag, c->sha));
	free(rel);
	return o;
}

static struct jval *
lineage(struct child *c, const char *status, const char *failure)
{
	struct agent *ag = c->ag;
	struct jval *d = ag_draft(ag, "subagent.updated");
	struct jval *o = json_obj(&ag->t), *o2;

	ag_put(ag, o, "invocation_id", ag_str(ag, c->invocation));
	ag_put(ag, o, "task_id", ag_str(ag, c->x->id));
	ag_put(ag, o, "agent_name", ag_str(ag, c->sp->name));
	ag_put(ag, o, "role_label", ag_str(ag, c->sp->label));
	ag_put(ag, o, "capability", ag_str(ag, c->sp->capability));
	ag_put(ag, o, "status", ag_str(ag, status));
	ag_put(ag, o, "parent_session_id", ag_str(ag, ag->s->id));
	ag_put(ag, o, "parent_action_id", ag_str(ag, c->x->action));
	ag_put(ag, o, "usage_id", ag_str(ag, c->usage_id));
	ag_put(ag, o, "iterations", json_int(&ag->t, c->iterations));
	ag_put(ag, o, "accumulated_cost", ag_cost(ag, c->run.cost,
	    c->run.unknown));
	o2 = json_new(&ag->t, J_FLOAT);
	o2->u.d = c->sp->budget;
	ag_put(ag, o, "max_budget_per_run", o2);
	ag_put(ag, o, "failure", failure ? ag_str(ag, failure) : NULL);
	ag_put(ag, o, "conversation", conversation_ref(c));
	ag_put(ag, ag_payload(d), "subagent", o);
	return d;
}

static int
child_waiting(void *ctx)
{
	struct agent *ag = ctx;

	ag->wait_failed = control_poll(ag->ctl, ag_ingest_fn, ag) < 0;
	return ag->wait_failed || ag->paused;
}

static struct jval *
msg(struct arena *a, const char *role, const char *text, size_t n)
{
	struct jval *m = json_obj(a);

	json_add(a, m, "role", json_str(a, role));
	json_add(a, m, "content", json_strn(a, text, n));
	return m;
}

/*
 * skills_text appends each of the specialist's skills (verified bundled
 * ones, checked again here) as its name and SKILL.md body, bounded as
 * the agent's own; -1 when one no longer verifies
 */
static int
skills_text(struct buf *b, const struct specialist *sp)
{
	struct skill_info si;
	char *data, *dir;
	size_t i, n;
	int rc = 0;

	if (!sp->nskills)
		return 0;
	if (!(data = datadir_path()))
		return -1;
	buf_adds(b, "\n\nSkills: instructions the release reviewed; use "
	    "them where they apply.");
	for (i = 0; rc == 0 && i < sp->nskills; i++) {
		dir = xasprintf("%s/skills/%s", data, sp->skills[i]);
		if ((rc = skill_inspect(dir, &si)) == 0) {
			n = strlen(si.meta.body);
			if (n > SKILL_PROMPT_BODY)	/* on a character */
				for (n = SKILL_PROMPT_BODY; n &&
				    (si.meta.body[n] & 0xC0) == 0x80; n--)
					;
			buf_printf(b, "\n\n## Skill %s\n\n", sp->skills[i]);
			buf_add(b, si.meta.body, n);
		}
		skill_info_release(&si);
		free(dir);
	}
	free(data);
	return rc;
}

/*
 * converse: the child's turns until it answers with text and no calls,
 * within its iterations; the answer into out.  Returns "finished",
 * "interrupted" or "failed" (*failure the code), NULL when a commit
 * failed.
 */
static const char *
converse(struct child *c, struct buf *out, const char **failure)
{
	struct agent *ag = c->ag;
	struct arena a;
	struct jval *msgs, *d[2];
	struct model_reply rep;
	struct counts tot;
	const char *code = NULL, *desc, *prompt, *st = NULL;
	struct buf u;
	int rc;

	arena_init(&a);
	buf_init(&u);
	msgs = json_new(&a, J_ARRAY);
	buf_adds(&u, c->sp->prompt);
	buf_adds(&u, TASK_SUFFIX);
	if (skills_text(&u, c->sp) < 0) {
		*failure = "skill-unverified";
		st = "failed";
	}
	json_push(&a, msgs, msg(&a, "system", u.p, u.len));
	buf_clear(&u);
	desc = json_get_str(c->x->args, "description");
	prompt = json_get_str(c->x->args, "prompt");
	if (desc && *desc)
		buf_printf(&u, "Objective: %s\n\n", desc);
	buf_adds(&u, prompt ? prompt : "");
	json_push(&a, msgs, msg(&a, "user", u.p, u.len));
	if (!st && (conv_open(c) < 0 || conv_save(c, "running", msgs) < 0)) {
		*failure = "persistence";
		st = "failed";
	}
	while (!st) {
		if (ag->paused) {
			st = "interrupted";
			break;
		}
		if (c->iterations >= c->sp->iterations) {
			st = "failed";
			*failure = "iteration-limit";
			break;
		}
		/* what the route reported is a floor even when some call's
		   price is unknown */
		if (c->run.cost > c->sp->budget) {
			st = "failed";
			*failure = "budget-limit";
			break;
		}
		c->iterations++;
		model_reply_init(&rep);
		model_on_wait(child_waiting, ag);
		rc = model_complete(&ag->route, msgs, NULL, &rep, NULL, NULL,
		    &code);
		model_on_wait(NULL, NULL);
		if (rc < 0) {
			model_reply_release(&rep);
			if (ag->wait_failed)
				break;
			st = code && !strcmp(code, MODEL_INTERRUPTED) ?
			    "interrupted" : "failed";
			*failure = code && strcmp(code, MODEL_INTERRUPTED) ?
			    code : NULL;
			break;
		}
		ag_count(c->use, &rep);
		ag_count(&c->run, &rep);
		arena_clear(&ag->t);
		d[0] = ag_usage_draft(ag, c->usage_id, c->use, &rep);
		d[1] = ag_usage_draft(ag, "total", ag_total(ag, &tot), &rep);
		if (ag_commit(ag, d, 2) < 0) {
			model_reply_release(&rep);
			break;
		}
		if (rep.content.len)
			json_push(&a, msgs, msg(&a, "assistant", rep.content.p,
			    rep.content.len));
		if (!rep.ncalls && rep.content.len) {
			buf_add(out, rep.content.p, rep.content.len);
			st = "finished";
		} else {
			json_push(&a, msgs, msg(&a, "user", TASK_NO_TOOLS,
			    strlen(TASK_NO_TOOLS)));
			if (conv_save(c, "running", msgs) < 0) {
				*failure = "persistence";
				st = "failed";
			}
		}
		model_reply_release(&rep);
	}
	/* the conversation as it ended, and proof that it is kept */
	if (st && c->conv && (conv_save(c, st, msgs) < 0 ||
	    conv_read_back(c) < 0)) {
		*failure = "persistence";
		st = "failed";
		c->sha[0] = 0;
	}
	arena_release(&a);
	buf_release(&u);
	return st;
}

int
ag_task_run(struct agent *ag, const struct member *x, struct tool_result *r)
{
	struct child c = { ag, x, named(ag, x->args), "", "", NULL, 0,
		{ 0 }, NULL, "", 0, { 0 } };
	const char *st, *failure = NULL;
	struct buf out;
	int rc = -1;

	if (!c.sp || !c.sp->available)	/* refused before review */
		return tool_error(r, "No such specialist.");
	snprintf(c.invocation, sizeof c.invocation, "subagent-%s", x->action);
	snprintf(c.usage_id, sizeof c.usage_id, "specialist:%s", c.sp->name);
	c.use = ag_spec_use(ag, c.usage_id);
	arena_clear(&ag->t);
	if (ag_commit1(ag, lineage(&c, "running", NULL)) < 0)
		return -1;
	buf_init(&out);
	buf_init(&c.saved);
	if (!(st = converse(&c, &out, &failure)))
		goto out;
	arena_clear(&ag->t);
	if (ag_commit1(ag, lineage(&c, st, failure)) < 0)
		goto out;
	buf_clear(&r->output);
	buf_clear(&r->summary);
	if (!strcmp(st, "finished")) {
		buf_add(&r->output, out.p, out.len);
		r->truncated = tool_output_bound(&r->output,
		    TOOL_OUTPUT_MAX_CHARS, TOOL_OUTPUT_MAX_LINES, 0, 0);
		r->exit_code = 0;
	} else {
		buf_adds(&r->output, !strcmp(st, "interrupted") ?
		    TASK_INTERRUPTED : TASK_FAILED);
		r->exit_code = 1;
	}
	buf_printf(&r->summary, "task %s %s", c.sp->name, st);
	rc = 0;
out:
	buf_release(&out);
	buf_release(&c.saved);
	free(c.conv);
	return rc;
}
