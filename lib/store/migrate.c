/* migrate.c - one registry of schema versions and forward migrations */
#include <string.h>

#include "store/store.h"

struct format {
	const char *name, *current;
};

static const struct format formats[] = {
	{ "audit_event", "heartwood.audit-event.v1" },
	{ "openhands_state", "heartwood.openhands-state.v1" },
	{ "project_config", "heartwood.project-config.v1" },
	{ "session_command_receipt", "heartwood.session-command-receipt.v1" },
	{ "session_commit", "heartwood.session-commit.v1" },
	{ "session_event", "heartwood.session-event.v1" },
	{ "session_metadata", "heartwood.session-metadata.v1" },
	{ "session_writer", "heartwood.session-writer.v1" },
	{ "skill_installations", "heartwood.skill-installations.v1" },
	/* not listed in the marker's formats, but versioned all the same */
	{ "project_state", "heartwood.project-state.v2" },
	{ "session_command", "heartwood.session-command.v1" },
	{ "jsonl_append", "heartwood.jsonl-append.v1" },
	{ NULL, NULL }
};
#define MARKER_FORMATS 9

/* A step returns the migrated copy, or NULL when the input is refused. */
typedef struct jval *(*step_fn)(struct arena *a, const struct jval *in);

struct step {
	const char *format, *from, *to;
	step_fn fn;
};

static struct jval *
state_v1_to_v2(struct arena *a, const struct jval *in)
{
	static const char *const keys[] = { "schema_version", NULL };

	if (json_keys_exact(in, keys) < 0)
		return NULL;
	return project_state_marker(a);
}

static struct jval *
openhands_unversioned(struct arena *a, const struct jval *in)
{
	static const char *const keys[] = { "schema_version",
		"openhands_sdk_version", "content_policy", NULL };
	struct jval *out;
	const char *sdk = json_get_str(in, "openhands_sdk_version");
	const char *pol = json_get_str(in, "content_policy");

	if (json_keys_exact(in, keys) < 0 || !sdk || !*sdk || !pol || !*pol)
		return NULL;
	out = json_copy(a, in);
	json_set(a, out, "schema_version",
	    json_str(a, "heartwood.openhands-state.v1"));
	json_set(a, out, "adopted_from", json_str(a, "unversioned"));
	return out;
}

static const struct step steps[] = {
	{ "project_state", "heartwood.project-state.v1",
	  "heartwood.project-state.v2", state_v1_to_v2 },
	{ "openhands_state", "heartwood.openhands-state.unversioned",
	  "heartwood.openhands-state.v1", openhands_unversioned },
	{ NULL, NULL, NULL, NULL }
};

const char *
current_version(const char *format)
{
	const struct format *f;

	for (f = formats; f->name; f++)
		if (strcmp(f->name, format) == 0)
			return f->current;
	return NULL;
}

struct jval *
project_state_marker(struct arena *a)
{
	struct jval *m = json_obj(a), *f = json_obj(a);
	int i;

	for (i = 0; i < MARKER_FORMATS; i++)
		json_set(a, f, formats[i].name, json_str(a, formats[i].current));
	json_set(a, m, "formats", f);
	json_set(a, m, "schema_version", json_str(a, current_version(
	    "project_state")));
	return m;
}

/* plain reports whether a persisted version string is safe to print. */
static int
plain(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 80)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '.' || *s == '-' ||
		    *s == '_'))
			return 0;
	return 1;
}

static struct jval *
refuse(const char *format, const char *version)
{
	hw_err_set(HW_EXIT_DATA, "unsupported persisted schema for %s: %s",
	    format, version && plain(version) ? version : "(not shown)");
	return NULL;
}

static const struct step *
find_step(const char *format, const char *from)
{
	const struct step *st;

	for (st = steps; st->format; st++)
		if (strcmp(st->format, format) == 0 &&
		    strcmp(st->from, from) == 0)
			return st;
	return NULL;
}

/* run_step runs a step twice on copies and checks it behaved. */
static struct jval *
run_step(struct arena *a, const struct step *st, const struct jval *cur)
{
	struct jval *c1 = json_copy(a, cur), *c2 = json_copy(a, cur);
	struct jval *o1 = st->fn(a, c1), *o2 = st->fn(a, c2);

	if (!o1 || !o2 || o1->t != J_OBJECT || !json_equal(o1, o2) ||
	    !json_equal(c1, cur) || !json_is_str(json_get(o1,
	    "schema_version"), st->to))
		return NULL;
	return o1;
}

struct jval *
migrate(struct arena *a, const char *format, struct jval *v)
{
	const char *target = current_version(format), *ver;
	const char *seen[8];
	size_t nseen = 0, i;
	const struct step *st;
	struct jval *cur = v;

	if (!target || !v || v->t != J_OBJECT)
		return refuse(format, NULL);
	for (;;) {
		struct jval *sv = json_get(cur, "schema_version");

		if (!sv || sv->t != J_STRING || sv->n == 0 ||
		    strlen(sv->u.s) != sv->n)
			return refuse(format, NULL);
		ver = sv->u.s;
		if (strcmp(ver, target) == 0)
			return cur;
		for (i = 0; i < nseen; i++)
			if (strcmp(seen[i], ver) == 0)
				return refuse(format, ver);
		if (nseen == sizeof seen / sizeof *seen ||
		    !(st = find_step(format, ver)))
			return refuse(format, ver);
		seen[nseen++] = ver;
		if (!(cur = run_step(a, st, cur)))
			return refuse(format, ver);
	}
}
