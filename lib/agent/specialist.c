/*
 * specialist.c - the research specialists: Markdown files of the data
 * directory's specialists/ (frontmatter, then the system prompt), read
 * and checked strictly when the agent starts (reference §5.6)
 */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "skill/skill.h"

#define SPEC_FILE_MAX (64u << 10)

static const char *const top_keys[] = { "name", "description", "model",
	"permission_mode", "max_iteration_per_run", "max_budget_per_run",
	"skills", "tools", "heartwood", NULL };
static const char *const banned[] = { "condenser", "hooks", "mcp_servers",
	"mcpServers", "mcp_config", "profile_store_dir", NULL };
static const char *const hw_keys[] = { "label", "capability",
	"availability", "unavailable_reason", "order", NULL };

static int bad(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int
bad(const char *path, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "invalid specialist '%s': %s", path,
	    why);
}

static int
listed(const char *const *v, const char *k)
{
	for (; *v; v++)
		if (!strcmp(*v, k))
			return 1;
	return 0;
}

/*
 * quote_numbers: the frontmatter with each "key: NUMBER" value quoted, so
 * that the skills' YAML subset (which reads only strings) takes the
 * whole numbers and decimals OpenHands' agent files hold
 */
static void
quote_numbers(struct buf *out, const char *s, size_t n)
{
	const char *end = s + n, *nl, *c, *v;
	size_t len;

	while (s < end) {
		nl = memchr(s, '\n', (size_t)(end - s));
		len = nl ? (size_t)(nl - s) + 1 : (size_t)(end - s);
		c = memchr(s, ':', len);
		v = c ? c + 1 : NULL;
		while (v && v < s + len && *v == ' ')
			v++;
		if (c && v > c + 1 && v < s + len &&
		    isdigit((unsigned char)*v) &&
		    strspn(v, "0123456789.") == (size_t)(s + len - v) -
		    (nl ? 1 : 0)) {
			buf_add(out, s, (size_t)(v - s));
			buf_addc(out, '"');
			buf_add(out, v, (size_t)(s + len - v) - (nl ? 1 : 0));
			buf_addc(out, '"');
			if (nl)
				buf_addc(out, '\n');
		} else
			buf_add(out, s, len);
		s += len;
	}
}

/* number: a whole number (frac 0) or a decimal > 0, else -1 */
static double
number(const char *s, int frac)
{
	char *end;
	double d;

	if (!s || !*s || !isdigit((unsigned char)*s) ||
	    strspn(s, frac ? "0123456789." : "0123456789") != strlen(s))
		return -1;
	d = strtod(s, &end);
	return *end || d <= 0 || d > 1e6 ? -1 : d;
}

/* strings: a list of strings into (v, n), NULL or [] giving none */
static int
strings(struct arena *a, const struct jval *l, const char ***v, size_t *n)
{
	size_t i;

	*v = NULL;
	*n = 0;
	if (!l)
		return 0;
	if (l->t != J_ARRAY)
		return -1;
	*v = arena_alloc(a, (l->n + 1) * sizeof **v);
	for (i = 0; i < l->n; i++) {
		if (l->u.a[i]->t != J_STRING || !l->u.a[i]->n)
			return -1;
		(*v)[(*n)++] = l->u.a[i]->u.s;
	}
	return 0;
}

/* bundled_skill: a verified skill of the data directory's skills/ */
static int
bundled_skill(const char *data, const char *name)
{
	struct skill_info si;
	char *dir;
	int ok;

	if (strchr(name, '/') || name[0] == '.')
		return 0;
	dir = xasprintf("%s/skills/%s", data, name);
	ok = skill_inspect(dir, &si) == 0;
	skill_info_release(&si);	/* a failed inspection holds memory too */
	free(dir);
	return ok;
}

static int
check_heartwood(struct specialist *x, const char *path,
    const struct jval *hw)
{
	const char *order;
	size_t i;

	if (!hw || hw->t != J_OBJECT)
		return bad(path, "the 'heartwood:' block is missing");
	for (i = 0; i < hw->n; i++)
		if (!listed(hw_keys, hw->u.m[i].k))
			return bad(path, "heartwood.%s is not a field of the "
			    "block", hw->u.m[i].k);
	x->label = json_get_str(hw, "label");
	x->capability = json_get_str(hw, "capability");
	x->availability = json_get_str(hw, "availability");
	x->reason = json_get_str(hw, "unavailable_reason");
	order = json_get_str(hw, "order");
	if (!x->label || !*x->label)
		return bad(path, "heartwood.label is required");
	if (!x->capability || (strcmp(x->capability, "advisory") &&
	    strcmp(x->capability, "project-actions")))
		return bad(path, "heartwood.capability must be 'advisory' or "
		    "'project-actions'");
	if (!x->availability || (strcmp(x->availability, "available") &&
	    strcmp(x->availability, "unavailable")))
		return bad(path, "heartwood.availability must be 'available' "
		    "or 'unavailable'");
	x->available = !strcmp(x->availability, "available");
	if (x->available && x->reason)
		return bad(path, "heartwood.unavailable_reason is given for "
		    "an available specialist");
	if (!x->available && (!x->reason || !*x->reason))
		return bad(path, "heartwood.unavailable_reason is required "
		    "when it is unavailable");
	if (number(order, 0) < 0)
		return bad(path, "heartwood.order must be a positive whole "
		    "number");
	x->order = (int)number(order, 0);
	if (!strcmp(x->capability, "advisory") && x->ntools)
		return bad(path, "an advisory specialist may have no tools");
	if (x->available && x->ntools)
		return bad(path, "an available specialist may have no tools");
	if (!strcmp(x->capability, "project-actions") && !x->ntools)
		return bad(path, "a project-actions specialist must list its "
		    "tools");
	if (!strcmp(x->capability, "project-actions") && x->available)
		return bad(path, "a project-actions specialist stays "
		    "unavailable until child actions can be recovered");
	return 0;
}

static int
check(struct specialist *x, struct arena *a, const char *path,
    const char *stem, const char *data, const struct jval *f)
{
	const char *v;
	size_t i;

	for (i = 0; i < f->n; i++) {
		if (listed(banned, f->u.m[i].k))
			return bad(path, "'%s' is not allowed", f->u.m[i].k);
		if (!listed(top_keys, f->u.m[i].k))
			return bad(path, "'%s' is not a field of a specialist",
			    f->u.m[i].k);
	}
	x->name = json_get_str(f, "name");
	if (!x->name || strcmp(x->name, stem))
		return bad(path, "its name must be its file's name, '%s'",
		    stem);
	x->description = json_get_str(f, "description");
	if (!x->description || !*x->description)
		return bad(path, "a description is required");
	if (!(v = json_get_str(f, "model")) || strcmp(v, "inherit"))
		return bad(path, "model must be 'inherit'");
	if (!(v = json_get_str(f, "permission_mode")) ||
	    strcmp(v, "always_confirm"))
		return bad(path, "permission_mode must be 'always_confirm'");
	if ((x->iterations = (int)number(json_get_str(f,
	    "max_iteration_per_run"), 0)) <= 0)
		return bad(path, "max_iteration_per_run is required, a "
		    "positive whole number");
	if ((x->budget = number(json_get_str(f, "max_budget_per_run"),
	    1)) <= 0)
		return bad(path, "max_budget_per_run is required, a positive "
		    "number of US dollars");
	if (strings(a, json_get(f, "skills"), &x->skills, &x->nskills) < 0)
		return bad(path, "skills must be a list of names");
	for (i = 0; i < x->nskills; i++)
		if (!bundled_skill(data, x->skills[i]))
			return bad(path, "skill '%s' is not a verified bundled "
			    "skill", x->skills[i]);
	if (strings(a, json_get(f, "tools"), &x->tools, &x->ntools) < 0)
		return bad(path, "tools must be a list of names");
	return check_heartwood(x, path, json_get(f, "heartwood"));
}

/* load_one: DIR/FILE (FILE ends in .md) into x, strings in a */
static int
load_one(struct specialist *x, struct arena *a, const char *data,
    const char *dir, const char *file)
{
	char *path = xasprintf("%s/%s", dir, file), *stem;
	struct buf b, q;
	const char *s, *end, *body;
	struct jval *f;
	int rc = -1;

	buf_init(&b);
	buf_init(&q);
	x->path = arena_strndup(a, path, strlen(path));
	stem = arena_strndup(a, file, strlen(file) - 3);
	if (read_file(path, SPEC_FILE_MAX, &b) < 0) {
		bad(x->path, "%s", hw_err_msg());
		goto out;
	}
	s = buf_cstr(&b);
	if (strlen(s) != b.len || !valid_utf8(s, b.len)) {
		bad(x->path, "it is not UTF-8 text");
		goto out;
	}
	if (strncmp(s, "---\n", 4) || !(end = strstr(s + 3, "\n---\n"))) {
		bad(x->path, "it must start with a frontmatter between "
		    "'---' lines");
		goto out;
	}
	quote_numbers(&q, s + 4, (size_t)(end + 1 - (s + 4)));
	if (!(f = skill_yaml(a, q.p ? q.p : "", q.len))) {
		const char *m = hw_err_msg(), *p = strstr(m, "SKILL.md:");

		bad(x->path, "frontmatter line %s", p ? p + 9 : m);
		goto out;
	}
	if (check(x, a, x->path, stem, data, f) < 0)
		goto out;
	for (body = end + 5; *body == '\n'; body++)
		;
	if (!*body) {
		bad(x->path, "its system prompt (the text after the "
		    "frontmatter) is empty");
		goto out;
	}
	x->prompt = arena_strndup(a, body, strlen(body));
	rc = 0;
out:
	free(path);
	buf_release(&b);
	buf_release(&q);
	return rc;
}

static int
by_name(const void *p, const void *q)
{
	return strcmp(*(char *const *)p, *(char *const *)q);
}

static int
by_order(const void *p, const void *q)
{
	const struct specialist *a = p, *b = q;

	return a->order != b->order ? (a->order > b->order) -
	    (a->order < b->order) : strcmp(a->name, b->name);
}

void
specialists_init(struct specialists *c)
{
	memset(c, 0, sizeof *c);
	arena_init(&c->a);
}

void
specialists_release(struct specialists *c)
{
	free(c->v);
	arena_release(&c->a);
	specialists_init(c);
}

int
specialists_load(struct specialists *c)
{
	char *data = datadir_path(), *dir, **names = NULL;
	struct dirent *d;
	size_t n = 0, i, j, len;
	DIR *dp;
	int rc = 0;

	if (!data)
		return -1;
	dir = xasprintf("%s/specialists", data);
	if (!(dp = opendir(dir))) {
		free(dir);
		free(data);
		return 0;	/* none configured */
	}
	while ((d = readdir(dp))) {
		len = strlen(d->d_name);
		if (d->d_name[0] == '.' || len < 4 ||
		    strcmp(d->d_name + len - 3, ".md"))
			continue;
		names = xrealloc(names, (n + 1) * sizeof *names);
		names[n++] = xstrdup(d->d_name);
	}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	c->v = xcalloc(n ? n : 1, sizeof *c->v);
	for (i = 0; i < n; i++) {
		if (rc == 0 && load_one(&c->v[c->n], &c->a, data, dir,
		    names[i]) == 0)
			c->n++;
		else
			rc = -1;
		free(names[i]);
	}
	free(names);
	for (i = 0; rc == 0 && i < c->n; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(c->v[i].label, c->v[j].label)) {
				rc = bad(c->v[i].path, "heartwood.label '%s' "
				    "is already another specialist's",
				    c->v[i].label);
				break;
			}
	if (rc == 0 && c->n)
		qsort(c->v, c->n, sizeof *c->v, by_order);
	free(dir);
	free(data);
	return rc;
}

const struct specialist *
specialist_find(const struct specialists *c, const char *name)
{
	size_t i;

	for (i = 0; name && i < c->n; i++)
		if (!strcmp(c->v[i].name, name))
			return &c->v[i];
	return NULL;
}

size_t
specialists_available(const struct specialists *c)
{
	size_t i, k = 0;

	for (i = 0; i < c->n; i++)
		k += c->v[i].available;
	return k;
}

static void
strs_json(struct buf *b, const char *const *v, size_t n)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < n; i++) {
		if (i)
			buf_addc(b, ',');
		json_canon_str(b, v[i], strlen(v[i]));
	}
	buf_addc(b, ']');
}

static void
key_str(struct buf *b, const char *k, const char *v, int comma)
{
	buf_printf(b, "%s\"%s\":", comma ? "," : "", k);
	if (v)
		json_canon_str(b, v, strlen(v));
	else
		buf_adds(b, "null");
}

void
specialist_json(struct buf *b, const struct specialist *x)
{
	buf_addc(b, '{');
	key_str(b, "availability", x->availability, 0);
	key_str(b, "capability", x->capability, 1);
	key_str(b, "description", x->description, 1);
	key_str(b, "label", x->label, 1);
	buf_printf(b, ",\"max_budget_per_run\":%.2f", x->budget);
	buf_printf(b, ",\"max_iteration_per_run\":%d", x->iterations);
	key_str(b, "name", x->name, 1);
	buf_printf(b, ",\"order\":%d,\"skills\":", x->order);
	strs_json(b, x->skills, x->nskills);
	buf_adds(b, ",\"tools\":");
	strs_json(b, x->tools, x->ntools);
	key_str(b, "unavailable_reason", x->reason, 1);
	buf_addc(b, '}');
}

int
specialists_list_json(struct buf *b)
{
	struct specialists c;
	size_t i;

	specialists_init(&c);
	if (specialists_load(&c) < 0) {
		specialists_release(&c);
		return -1;
	}
	buf_adds(b, "{\"schema_version\":\"heartwood.specialists.v1\","
	    "\"specialists\":[");
	for (i = 0; i < c.n; i++) {
		if (i)
			buf_addc(b, ',');
		specialist_json(b, &c.v[i]);
	}
	buf_adds(b, "]}");
	specialists_release(&c);
	return 0;
}
