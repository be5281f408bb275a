/* policy.c - the fields of a SKILL.md's frontmatter and the skill policy */
#include <string.h>

#include "skill/skill.h"

static int
bad(const char *field, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid skill: %s %s", field, why);
}

static size_t
chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

int
skill_valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > 64 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || (s[i] == '-' && s[i + 1] != '-')))
			return 0;
	return 1;
}

/* numeric identifier of SemVer: digits without a leading zero */
static const char *
semver_num(const char *p)
{
	const char *q = p;

	while (*q >= '0' && *q <= '9')
		q++;
	if (q == p || (*p == '0' && q - p > 1))
		return NULL;
	return q;
}

static int
ident_list(const char *p, const char *end)
{
	const char *q;

	for (;;) {
		q = p;
		while (q < end && *q != '.' && (strchr("-", *q) ||
		    (*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'z') ||
		    (*q >= 'A' && *q <= 'Z')))
			q++;
		if (q == p)
			return 0;
		if (q == end)
			return 1;
		if (*q != '.')
			return 0;
		p = q + 1;
	}
}

static int
semver(const char *s)
{
	const char *p = s, *plus, *end;
	int i;

	for (i = 0; i < 3; i++) {
		if (!(p = semver_num(p)))
			return 0;
		if (i < 2 && *p++ != '.')
			return 0;
	}
	end = p + strlen(p);
	plus = strchr(p, '+');
	if (*p == '-' && !ident_list(p + 1, plus ? plus : end))
		return 0;
	if (*p && *p != '-' && *p != '+')
		return 0;
	return !plus || ident_list(plus + 1, end);
}

/* csv: "a, b,c" as a list of trimmed, non-empty items */
static struct jval *
csv(struct arena *a, const char *s)
{
	struct jval *arr = json_new(a, J_ARRAY);
	const char *p = s, *c;
	size_t n;

	for (;;) {
		c = strchr(p, ',');
		n = c ? (size_t)(c - p) : strlen(p);
		while (n && *p == ' ')
			p++, n--;
		while (n && p[n - 1] == ' ')
			n--;
		if (!n)
			return NULL;
		json_push(a, arr, json_strn(a, p, n));
		if (!c)
			return arr;
		p = c + 1;
	}
}

int
skill_clean_path(const char *p)
{
	const char *c = p;

	if (!*p || *p == '/')
		return 0;
	for (;;) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 &&
		    !strncmp(c, "..", 2)))
			return 0;
		if (!c[n])
			return 1;
		c += n + 1;
	}
}

static const char *
meta(const struct jval *m, const char *key)
{
	return json_get_str(m, key);
}

static int
build_policy(struct arena *a, struct skill_meta *m)
{
	static const char *const need[] = { "heartwood.id",
		"heartwood.version", "heartwood.dataset-types",
		"heartwood.platforms", "heartwood.phi-risk",
		"heartwood.requires-network", "heartwood.controlled-data",
		"heartwood.approval-summary", NULL };
	const struct jval *md = m->metadata;
	struct jval *p = json_obj(a), *dt, *pl;
	const char *v, *const *k;
	size_t i;

	for (i = 0; i < md->n; i++)
		if (md->u.m[i].v->t != J_STRING)
			return bad("metadata", "values must be strings");
	for (k = need; *k; k++)
		if (!meta(md, *k))
			return bad(*k, "is required in metadata");
	v = meta(md, "heartwood.id");
	if (!*v || strlen(v) > 128 || strpbrk(v, " \t\n"))
		return bad("heartwood.id", "is not an id");
	if (!semver(meta(md, "heartwood.version")))
		return bad("heartwood.version", "is not a SemVer version");
	if (!(dt = csv(a, meta(md, "heartwood.dataset-types"))))
		return bad("heartwood.dataset-types", "is not a list of types");
	if (!(pl = csv(a, meta(md, "heartwood.platforms"))))
		return bad("heartwood.platforms", "is not a list of platforms");
	v = meta(md, "heartwood.phi-risk");
	if (strcmp(v, "none") && strcmp(v, "reads-phi") &&
	    strcmp(v, "writes-outside-boundary"))
		return bad("heartwood.phi-risk", "is not none, reads-phi or "
		    "writes-outside-boundary");
	v = meta(md, "heartwood.requires-network");
	if (strcmp(v, "true") && strcmp(v, "false"))
		return bad("heartwood.requires-network", "is not true or "
		    "false");
	if (strcmp(meta(md, "heartwood.controlled-data"), "not-approved"))
		return bad("heartwood.controlled-data", "must be not-approved");
	if (chars(meta(md, "heartwood.approval-summary")) > 500)
		return bad("heartwood.approval-summary", "is over 500 "
		    "characters");
	v = meta(md, "heartwood.entrypoint");
	if (json_get(md, "heartwood.entrypoint") && !skill_clean_path(v))
		return bad("heartwood.entrypoint", "is not a clean relative "
		    "path");
	json_add(a, p, "schema_version", json_str(a,
	    "heartwood.skill-policy.v1"));
	json_add(a, p, "id", json_str(a, meta(md, "heartwood.id")));
	json_add(a, p, "version", json_str(a, meta(md, "heartwood.version")));
	json_add(a, p, "dataset_types", dt);
	json_add(a, p, "platforms", pl);
	json_add(a, p, "phi_risk", json_str(a, meta(md, "heartwood.phi-risk")));
	json_add(a, p, "requires_network", json_bool(a,
	    !strcmp(meta(md, "heartwood.requires-network"), "true")));
	json_add(a, p, "controlled_data", json_str(a, "not-approved"));
	json_add(a, p, "approval_summary", json_str(a,
	    meta(md, "heartwood.approval-summary")));
	if (v)
		json_add(a, p, "entrypoint", json_str(a, v));
	m->policy = p;
	return 0;
}

static int
tools(struct arena *a, const struct jval *v, struct skill_meta *m)
{
	struct jval *list = v->t == J_ARRAY ? (struct jval *)v : NULL;
	const char *p;
	size_t i, n;

	if (!list) {
		list = json_new(a, J_ARRAY);
		for (p = v->u.s; *p;) {
			n = strcspn(p, " ");
			if (n)
				json_push(a, list, json_strn(a, p, n));
			p += n + (p[n] == ' ');
		}
	}
	m->tools = arena_alloc(a, (list->n + 1) * sizeof *m->tools);
	for (i = 0; i < list->n; i++) {
		if (list->u.a[i]->t != J_STRING || !list->u.a[i]->n)
			return bad("allowed-tools", "is not a list of names");
		m->tools[i] = list->u.a[i]->u.s;
	}
	m->ntools = list->n;
	return 0;
}

static int
fields(struct arena *a, const struct jval *fm, struct skill_meta *m)
{
	static const char *const known[] = { "name", "description", "license",
		"compatibility", "allowed-tools", "metadata", NULL };
	const char *const *k;
	const struct jval *v;
	size_t i;

	for (i = 0; i < fm->n; i++) {
		for (k = known; *k && strcmp(*k, fm->u.m[i].k); k++)
			;
		if (!*k)
			return bad(fm->u.m[i].k, "is not a frontmatter field");
	}
	m->name = json_get_str(fm, "name");
	if (!m->name || !skill_valid_name(m->name))
		return bad("name", "must be 1-64 of a-z 0-9 in words joined by "
		    "single hyphens");
	m->description = json_get_str(fm, "description");
	if (!m->description || !*m->description ||
	    chars(m->description) > 1024)
		return bad("description", "must be 1-1024 characters");
	m->license = json_get_str(fm, "license");
	if (!m->license || !*m->license)
		return bad("license", "is required");
	v = json_get(fm, "compatibility");
	if (v && (v->t != J_STRING || chars(v->u.s) > 500))
		return bad("compatibility", "must be a string of at most 500 "
		    "characters");
	m->compatibility = v ? v->u.s : NULL;
	if ((v = json_get(fm, "allowed-tools")) && tools(a, v, m) < 0)
		return -1;
	m->metadata = json_get(fm, "metadata");
	if (!m->metadata || m->metadata->t != J_OBJECT)
		return bad("metadata", "is required, a map of strings");
	return build_policy(a, m);
}

int
skill_meta_parse(struct arena *a, const char *s, size_t n,
    struct skill_meta *m)
{
	const char *end, *body;
	struct jval *fm;

	memset(m, 0, sizeof *m);
	if (!valid_utf8(s, n) || memchr(s, '\0', n))
		return bad("SKILL.md", "is not UTF-8 text");
	if (n < 4 || strncmp(s, "---\n", 4))
		return bad("SKILL.md", "does not start with a '---' line");
	end = memmem(s + 3, n - 3, "\n---\n", 5);
	if (!end && n >= 8 && !memcmp(s + n - 4, "\n---", 4))
		end = s + n - 4;
	if (!end || end - s > 65536)
		return bad("SKILL.md", "has no '---' line ending its "
		    "frontmatter within 64 KiB");
	body = end + 4 < s + n ? end + 5 : s + n;
	if (memmem(body, (size_t)(s + n - body), "!`", 2))
		return bad("SKILL.md", "uses dynamic shell context ('!`')");
	if (!(fm = skill_yaml(a, s + 4, (size_t)(end + 1 - (s + 4)))))
		return -1;
	m->body = arena_strndup(a, body, (size_t)(s + n - body));
	return fields(a, fm, m);
}
