/*
 * invoke.c - the invoke_skill tool (reference §5.1, §5.2): the active
 * skills of this run, checked when the agent starts, are offered to the
 * model by name; a call gives a skill's SKILL.md and the location of its
 * directory, after checking its files again
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/loop.h"
#include "skill/skill.h"

int
ag_skills_prepare(struct agent *ag)
{
	struct buf sk;
	size_t i;
	int rc;

	ag->skills = json_new(&ag->a, J_ARRAY);
	buf_init(&sk);
	rc = skill_prompt(&sk, &ag->a, ag->skills);
	if (rc == 0)
		buf_add(&ag->prompts.system, sk.p, sk.len);
	buf_release(&sk);
	for (i = 0; rc == 0 && i < ag->skills->n; i++)
		rc = toolbox_readable(ag->tb, json_get_str(ag->skills->u.a[i],
		    "dir"));
	if (rc < 0)
		return -1;
	if (ag->skills->n)
		tool_invoke_skill_schema(&ag->a, ag->tools);
	return 0;
}

/* active: the skill of this run named name, or NULL */
static const struct jval *
active(const struct agent *ag, const char *name)
{
	size_t i;

	for (i = 0; name && ag->skills && i < ag->skills->n; i++)
		if (json_is_str(json_get(ag->skills->u.a[i], "name"), name))
			return ag->skills->u.a[i];
	return NULL;
}

/* names: the active skills, for an error observation */
static void
names(const struct agent *ag, struct buf *b)
{
	size_t i, n = ag->skills ? ag->skills->n : 0;

	if (!n) {
		buf_adds(b, " No skill is active in this run.");
		return;
	}
	buf_adds(b, " Available skills: ");
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%s", i ? ", " : "", json_get_str(
		    ag->skills->u.a[i], "name"));
	buf_adds(b, ".");
}

static void
shown(const struct jval *k, const struct skill_info *si, const char *loc,
    struct buf *b)
{
	buf_printf(b, "Skill %s (%s, tree sha256:%s) is active.\n"
	    "Location: %s\n"
	    "Resolve the skill's files from this location: file_editor views "
	    "them there (for example %s/SKILL.md), and only views them; to "
	    "run or change one, ask the researcher to copy it into the "
	    "project.\n\n", si->meta.name, json_get_str(k, "review"),
	    si->tree.tree_sha256, loc, loc);
	buf_adds(b, si->meta.body);
}

int
ag_invoke_skill(struct agent *ag, const struct member *x,
    struct tool_result *r)
{
	const char *name = json_get_str(x->args, "name"), *why;
	const struct jval *k = active(ag, name);
	struct skill_info si;
	char *loc = NULL;

	buf_clear(&r->output);
	buf_clear(&r->summary);
	r->exit_code = 0;
	r->truncated = 0;
	if (!name) {
		buf_adds(&r->summary, "invoke_skill invalid arguments");
		tool_error(r, "Parameter `name` is required for invoke_skill.");
		names(ag, &r->output);
		return 0;
	}
	if (!k) {
		buf_adds(&r->summary, "invoke_skill unknown skill");
		tool_error(r, "Skill '%.100s' is not an active skill of this "
		    "run.", name);
		names(ag, &r->output);
		utf8_repair(&r->output);
		return 0;
	}
	buf_printf(&r->summary, "invoke_skill %s", name);
	/* what the start checked, again: a skill changed since is refused */
	why = skill_recheck(name, json_get_str(k, "tree_sha256"),
	    json_get_str(k, "dir"), &si);
	if (!why && !(loc = realpath(json_get_str(k, "dir"), NULL)))
		why = "its directory cannot be resolved";
	if (why) {
		tool_error(r, "Skill '%s' cannot be used: %s. Continue "
		    "without it.", name, why);
		names(ag, &r->output);
	} else
		shown(k, &si, loc, &r->output);
	free(loc);
	skill_info_release(&si);
	utf8_repair(&r->output);
	r->truncated = tool_output_bound(&r->output, TOOL_OUTPUT_MAX_CHARS,
	    TOOL_OUTPUT_MAX_LINES, 0, 0);
	return 0;
}
