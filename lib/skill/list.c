/* list.c - installed skills as summaries, and the ones the agent gets */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "skill/skill.h"
#include "store/store.h"

static char *
artifact(const struct jval *rec)
{
	return xasprintf(".heartwood/skills/artifacts/sha256/%s/%s",
	    json_get_str(rec, "tree_sha256"), json_get_str(rec, "name"));
}

/* check_one inspects rec's artifact; why is NULL when it is usable */
static int
check_one(const struct jval *rec, struct skill_info *si, const char **why)
{
	char *dir = artifact(rec);
	int rc = skill_inspect(dir, si);

	free(dir);
	*why = NULL;
	if (rc < 0)
		*why = "its artifact does not verify";
	else if (!json_is_str(json_get(rec, "tree_sha256"),
	    si->tree.tree_sha256))
		*why = "its artifact does not have its digest";
	else
		*why = skill_compatible(si);
	return 0;
}

static void
summary(struct buf *b, const struct jval *rec, const struct skill_info *si,
    const char *source, const char *why)
{
	struct arena a;
	struct jval *s, *tools;
	static const char *const keep[] = { "name", "skill_id", "version",
		"status", "review", "tree_sha256", "source_kind", "source_id",
		"source_revision", "revocation_reason", NULL };
	const char *const *k;
	size_t i;

	arena_init(&a);
	s = json_obj(&a);
	for (k = keep; *k; k++)
		json_add(&a, s, *k, json_get(rec, *k) ? json_copy(&a,
		    json_get(rec, *k)) : json_new(&a, J_NULL));
	json_add(&a, s, "source", json_str(&a, source));
	tools = json_new(&a, J_ARRAY);
	for (i = 0; si->meta.name && i < si->meta.ntools; i++)
		json_push(&a, tools, json_str(&a, si->meta.tools[i]));
	json_add(&a, s, "allowed_tools", tools);
	json_add(&a, s, "requires_network", si->meta.policy ? json_copy(&a,
	    json_get(si->meta.policy, "requires_network")) :
	    json_new(&a, J_NULL));
	json_add(&a, s, "phi_risk", si->meta.policy ? json_copy(&a,
	    json_get(si->meta.policy, "phi_risk")) : json_new(&a, J_NULL));
	json_add(&a, s, "compatibility_reason", why ? json_str(&a, why) :
	    json_new(&a, J_NULL));
	json_add(&a, s, "installable", json_bool(&a, 0));
	json_canon(b, s);
	buf_addc(b, '\n');
	arena_release(&a);
}

/* entry_reason: why a catalog entry would not be used here, or NULL */
static const char *
entry_reason(const struct jval *e)
{
	const struct jval *p = json_get(e, "policy"), *pl, *t;
	struct skill_info si;
	struct skill_meta *m = &si.meta;
	const char *why;
	size_t i;

	memset(&si, 0, sizeof si);
	arena_init(&si.a);
	m->policy = json_copy(&si.a, p);
	pl = json_get(p, "platforms");
	if (!pl || pl->t != J_ARRAY)
		json_add(&si.a, m->policy, "platforms", json_new(&si.a,
		    J_ARRAY));
	if (!json_get(p, "requires_network"))
		json_add(&si.a, m->policy, "requires_network",
		    json_bool(&si.a, 0));
	t = json_get(e, "allowed_tools");
	m->tools = arena_alloc(&si.a, ((t ? t->n : 0) + 1) * sizeof *m->tools);
	for (i = 0; t && t->t == J_ARRAY && i < t->n; i++)
		m->tools[m->ntools++] = t->u.a[i]->t == J_STRING ?
		    t->u.a[i]->u.s : "";
	why = skill_compatible(&si);
	arena_release(&si.a);
	return why;
}

static void
entry_summary(struct buf *b, const struct skill_catalog *cat,
    const struct jval *e, const struct jval *recs)
{
	const struct jval *p = json_get(e, "policy");
	const char *status = "available", *why = entry_reason(e), *u;
	struct arena a;
	struct jval *s;
	size_t i;
	int taken = 0;

	if (json_get(e, "revoked")->t == J_TRUE)
		status = "revoked";
	else if ((u = skill_entry_unsupported(e))) {
		status = "unsupported";
		why = u;
	}
	for (i = 0; i < recs->n; i++)
		taken |= json_equal(json_get(recs->u.a[i], "name"),
		    json_get(e, "name")) || json_equal(json_get(recs->u.a[i],
		    "skill_id"), json_get(p, "id"));
	arena_init(&a);
	s = json_obj(&a);
	json_add(&a, s, "name", json_copy(&a, json_get(e, "name")));
	json_add(&a, s, "skill_id", json_copy(&a, json_get(p, "id")));
	json_add(&a, s, "version", json_copy(&a, json_get(p, "version")));
	json_add(&a, s, "source", json_str(&a, "catalog"));
	json_add(&a, s, "source_id", json_str(&a, cat->src->id));
	json_add(&a, s, "status", json_str(&a, status));
	json_add(&a, s, "review", json_str(&a, "repository-reviewed"));
	json_add(&a, s, "tree_sha256", json_copy(&a, json_get(e,
	    "tree_sha256")));
	json_add(&a, s, "revocation_reason", json_copy(&a, json_get(e,
	    "revocation_reason")));
	json_add(&a, s, "allowed_tools", json_copy(&a, json_get(e,
	    "allowed_tools")));
	json_add(&a, s, "requires_network", json_get(p, "requires_network") ?
	    json_copy(&a, json_get(p, "requires_network")) :
	    json_new(&a, J_NULL));
	json_add(&a, s, "phi_risk", json_get(p, "phi_risk") ? json_copy(&a,
	    json_get(p, "phi_risk")) : json_new(&a, J_NULL));
	json_add(&a, s, "compatibility_reason", why ? json_str(&a, why) :
	    json_new(&a, J_NULL));
	json_add(&a, s, "installable", json_bool(&a, !strcmp(status,
	    "available") && !why && !taken));
	json_canon(b, s);
	buf_addc(b, '\n');
	arena_release(&a);
}

/* catalogs: the entries of each enabled source's stored catalog */
static int
catalogs(struct buf *b, const struct jval *recs)
{
	struct skill_sources ss;
	struct skill_catalog cat;
	size_t i, j;
	int rc = 0, k;

	if (skill_sources_load(&ss) < 0)
		return -1;
	for (i = 0; i < ss.n && rc == 0; i++) {
		if (!ss.v[i].enabled)
			continue;
		if ((k = skill_catalog_cached(&ss.v[i], &cat)) < 0)
			rc = -1;
		for (j = 0; k == 0 && j < cat.entries->n; j++)
			entry_summary(b, &cat, cat.entries->u.a[j], recs);
		skill_catalog_release(&cat);
	}
	skill_sources_release(&ss);
	return rc;
}

int
skill_list(struct buf *b)
{
	struct arena a;
	struct jval *recs;
	struct skill_info si;
	struct skill_bundled *bv;
	const char *why;
	size_t i, nb;
	int rc = -1;

	arena_init(&a);
	if (!(recs = skill_index_read(&a)))
		goto out;
	for (i = 0; i < recs->n; i++) {
		check_one(recs->u.a[i], &si, &why);
		summary(b, recs->u.a[i], &si, "installed", why);
		skill_info_release(&si);
	}
	nb = skill_bundled_load(&a, recs, &bv);
	for (i = 0; i < nb; i++)
		summary(b, bv[i].rec, &bv[i].si, "bundled", bv[i].why);
	skill_bundled_release(bv, nb);
	rc = catalogs(b, recs);
out:
	arena_release(&a);
	return rc;
}

/* last_events: the kind of the last activation-related event per id */
static int
last_events(struct arena *keep, struct jval *last)
{
	struct chain_pos at = { 0, NULL, SKILL_LOG_ID };
	char head[HW_HASH_LEN + 1] = "", h[HW_HASH_LEN + 1], *line;
	struct buf scratch;
	struct arena a;
	struct jsonl r;
	struct jval *v;
	size_t len;
	int fd, k, rc = -1;

	fd = open(SKILL_LOG, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot open '%s'",
		    SKILL_LOG);
	jsonl_init(&r, fd, SKILL_LOG, JSONL_LINE_MAX);
	arena_init(&a);
	buf_init(&scratch);
	at.head = head;
	while ((k = jsonl_next(&r, &line, &len)) > 0) {
		arena_clear(&a);
		if (!(v = jsonl_parse(&r, &a, line, len)))
			goto out;
		if (audit_chain_check(&a, &scratch, v, line, len, 0, &at, h,
		    NULL, NULL) < 0) {
			hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", SKILL_LOG,
			    r.lineno, hw_err_msg());
			goto out;
		}
		memcpy(head, h, sizeof h);
		at.count++;
		const char *kind = json_get_str(v, "event_type");
		/* the store's scrubber hides "name": skills go by their id */
		const char *name = json_get_str(json_get(v, "payload"),
		    "skill_id");
		if (name && kind && strcmp(kind, "skill.installation-decision"))
			json_set(keep, last, arena_strndup(keep, name,
			    strlen(name)), json_str(keep, kind));
	}
	rc = k < 0 ? -1 : 0;
out:
	buf_release(&scratch);
	arena_release(&a);
	jsonl_release(&r);
	close(fd);
	return rc;
}

static void
prompt_one(struct buf *b, const struct jval *rec, const struct skill_info *si,
    const char *dir)
{
	if (!b->len)
		buf_adds(b, "\n\nActive skills: instructions the researcher "
		    "approved by their exact tree digest; a local one is "
		    "unreviewed.  When the task calls for one, call "
		    "invoke_skill with its name: that is the only way to "
		    "activate a skill, and it returns the skill's instructions "
		    "(its SKILL.md) and the location of its files.  Resolve a "
		    "skill's files from that location; they can be read with "
		    "file_editor's view, and only read: to run or change one, "
		    "ask the researcher to copy it into the project.\n");
	buf_printf(b, "\n## Skill %s (%s, tree sha256:%s)\n%s\nFiles: "
	    "%s/\n", si->meta.name, json_get_str(rec, "review"),
	    si->tree.tree_sha256, si->meta.description, dir);
}

/*
 * refresh_sources refreshes each source an active catalog install came
 * from (revoking what it now revokes); one no longer configured is an
 * error.
 */
static int
refresh_sources(void)
{
	struct arena a;
	struct jval *recs, *done;
	struct buf sink;
	const char *id;
	size_t i;
	int rc = 0;

	arena_init(&a);
	buf_init(&sink);
	done = json_obj(&a);
	if (!(recs = skill_index_read(&a)))
		rc = -1;
	for (i = 0; rc == 0 && i < recs->n; i++) {
		if (!json_is_str(json_get(recs->u.a[i], "source_kind"),
		    "catalog") || !json_is_str(json_get(recs->u.a[i],
		    "status"), "active"))
			continue;
		id = json_get_str(recs->u.a[i], "source_id");
		if (!id || json_get(done, id))
			continue;
		json_add(&a, done, id, json_bool(&a, 1));
		if ((rc = skill_refresh(id, &sink)) < 0 &&
		    hw_err_code() == HW_EXIT_NOINPUT)
			hw_err_set(HW_EXIT_DATA, "skill '%s' is installed from "
			    "source '%s', which is no longer configured",
			    json_get_str(recs->u.a[i], "name"), id);
	}
	buf_release(&sink);
	arena_release(&a);
	return rc;
}

/* active_add: one active skill, for the agent's invoke_skill */
static void
active_add(struct arena *a, struct jval *active, const struct jval *rec,
    const struct skill_info *si, const char *dir)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "name", json_str(a, si->meta.name));
	json_add(a, o, "review", json_str(a, json_get_str(rec, "review")));
	json_add(a, o, "tree_sha256", json_str(a, si->tree.tree_sha256));
	json_add(a, o, "dir", json_str(a, dir));
	json_push(a, active, o);
}

/* active_skills: skill_prompt's list, from what the sources last said */
static int
active_skills(struct buf *b, struct arena *keep, struct jval *active)
{
	struct arena a;
	struct jval *recs, *last;
	struct skill_info si;
	struct skill_bundled *bv;
	const char *why;
	char *dir;
	size_t i, nb;
	int rc = -1;

	arena_init(&a);
	last = json_obj(&a);
	if (!(recs = skill_index_read(&a)) || last_events(&a, last) < 0)
		goto out;
	for (i = 0; i < recs->n; i++) {
		if (!json_is_str(json_get(recs->u.a[i], "status"), "active"))
			continue;
		if (!json_is_str(json_get(last, json_get_str(recs->u.a[i],
		    "skill_id")), "skill.activated"))
			continue;
		check_one(recs->u.a[i], &si, &why);
		if (!why) {
			dir = artifact(recs->u.a[i]);
			prompt_one(b, recs->u.a[i], &si, dir);
			active_add(keep, active, recs->u.a[i], &si, dir);
			free(dir);
		}
		skill_info_release(&si);
	}
	nb = skill_bundled_load(&a, recs, &bv);
	for (i = 0; i < nb; i++)
		if (!bv[i].why) {
			prompt_one(b, bv[i].rec, &bv[i].si, bv[i].dir);
			active_add(keep, active, bv[i].rec, &bv[i].si,
			    bv[i].dir);
		}
	skill_bundled_release(bv, nb);
	rc = 0;
out:
	arena_release(&a);
	return rc;
}

int
skill_prompt(struct buf *b, struct arena *keep, struct jval *active)
{
	if (refresh_sources() < 0)
		return -1;
	return active_skills(b, keep, active);
}

const char *
skill_recheck(const char *name, const char *tree, const char *dir,
    struct skill_info *si)
{
	struct arena a;
	struct buf sink;
	struct jval *now;
	const char *why;
	size_t i;
	int found = 0;

	/* the files first: what is shown is what was read here */
	if (skill_inspect(dir, si) < 0)
		return "its files no longer verify";
	if (strcmp(si->tree.tree_sha256, tree))
		return "its files changed since the agent started";
	if ((why = skill_compatible(si)))
		return why;
	/* then the installation: still listed, as it was */
	arena_init(&a);
	buf_init(&sink);
	now = json_new(&a, J_ARRAY);
	if (active_skills(&sink, &a, now) < 0)
		why = "the installed skills do not verify";
	for (i = 0; !why && i < now->n; i++)
		found |= json_is_str(json_get(now->u.a[i], "name"), name) &&
		    json_is_str(json_get(now->u.a[i], "tree_sha256"), tree) &&
		    json_is_str(json_get(now->u.a[i], "dir"), dir);
	if (!why && !found)
		why = "it is no longer active (removed, deactivated or revoked "
		    "since the agent started)";
	buf_release(&sink);
	arena_release(&a);
	return why;
}
