/* source.c - the registry of skill sources (skill-sources.toml) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "skill/skill.h"

#define SOURCES_SCHEMA "heartwood.skill-sources.v1"
#define SOURCES_MAX (1u << 20)
#define SOURCES_SYSTEM "/etc/heartwood/skill-sources.toml"
#define CD_KEY "controlled-data-approved-digests"

static int
bad(const char *file, int i, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid skill sources '%s': source "
	    "%d: %s", file, i + 1, why);
}

static int
valid_id(const char *s)
{
	size_t i, n = strlen(s);

	if (n < 1 || n > 64 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' &&
		    s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/*
 * url_ok: https with no credentials, query or fragment; http only to a
 * loopback host (for local mirrors and tests), which TUF verifies all the
 * same.
 */
static int
url_ok(const char *u)
{
	const char *host, *end;

	if (!strncmp(u, "https://", 8))
		host = u + 8;
	else if (!strncmp(u, "http://", 7))
		host = u + 7;
	else
		return 0;
	if (strpbrk(u, "?# \t\n\\"))
		return 0;
	end = host + strcspn(host, "/");
	if (memchr(host, '@', (size_t)(end - host)) || end == host)
		return 0;
	if (u[4] == ':' && strncmp(host, "127.0.0.1", 9) &&
	    strncmp(host, "localhost", 9) && strncmp(host, "[::1]", 5))
		return 0;
	if (u[4] == ':') {
		size_t n = host[0] == '[' ? 5 : 9;

		if (host[n] && host[n] != ':' && host[n] != '/')
			return 0;
	}
	return 1;
}

static const char *
str(struct jval *t, const char *k)
{
	return json_get_str(t, k);
}

/*
 * approvals reads the administrator's controlled-data approvals of s: an
 * array of tree digests, in the system file only
 */
static int
approvals(const char *file, int i, const struct jval *v,
    struct skill_source *s)
{
	char d[SHA256_HEX + 1];
	size_t j;

	if (strcmp(file, SOURCES_SYSTEM))
		return bad(file, i, CD_KEY " is allowed only in "
		    SOURCES_SYSTEM);
	if (v->t != J_ARRAY)
		return bad(file, i, CD_KEY " is not an array of tree "
		    "digests");
	s->approved = xcalloc(v->n + 1, sizeof *s->approved);
	for (j = 0; j < v->n; j++) {
		if (v->u.a[j]->t != J_STRING ||
		    skill_parse_digest(v->u.a[j]->u.s, d) < 0)
			return bad(file, i, CD_KEY " holds something that is "
			    "not a sha256 tree digest");
		s->approved[s->napproved++] = xstrdup(d);
	}
	return 0;
}

static int
source_parse(const char *file, int i, struct jval *t, struct skill_source *s)
{
	static const char *const keys[] = { "id", "kind", "trusted-root",
		"metadata-url", "targets-url", "repository", "enabled", CD_KEY,
		NULL };
	const char *const *k;
	const struct jval *en;
	size_t j;

	for (j = 0; j < t->n; j++) {
		for (k = keys; *k && strcmp(*k, t->u.m[j].k); k++)
			;
		if (!*k)
			return bad(file, i, "an unknown key");
		if (t->u.m[j].v->t != J_STRING && strcmp(*k, "enabled") &&
		    strcmp(*k, CD_KEY))
			return bad(file, i, "a value that is not a string");
	}
	if (json_get(t, CD_KEY) && approvals(file, i, json_get(t, CD_KEY),
	    s) < 0)
		return -1;
	if (!str(t, "id") || !valid_id(str(t, "id")))
		return bad(file, i, "id is not 1-64 of a-z 0-9 - (no hyphen at "
		    "either end)");
	s->id = xstrdup(str(t, "id"));
	s->offline = json_is_str(json_get(t, "kind"), "offline");
	if (!s->offline && !json_is_str(json_get(t, "kind"), "remote"))
		return bad(file, i, "kind is not remote or offline");
	if (!str(t, "trusted-root") || str(t, "trusted-root")[0] != '/')
		return bad(file, i, "trusted-root is not an absolute path");
	s->trusted_root = xstrdup(str(t, "trusted-root"));
	en = json_get(t, "enabled");
	if (en && en->t != J_TRUE && en->t != J_FALSE)
		return bad(file, i, "enabled is not a boolean");
	s->enabled = !en || en->t == J_TRUE;
	if (s->offline) {
		if (!str(t, "repository") || str(t, "repository")[0] != '/' ||
		    json_get(t, "metadata-url") || json_get(t, "targets-url"))
			return bad(file, i, "an offline source has an absolute "
			    "repository and no URLs");
		s->metadata_url = xasprintf("file://%s/metadata",
		    str(t, "repository"));
		s->targets_url = xasprintf("file://%s/targets",
		    str(t, "repository"));
		return 0;
	}
	if (json_get(t, "repository"))
		return bad(file, i, "a remote source has no repository");
	if (!str(t, "metadata-url") || !url_ok(str(t, "metadata-url")) ||
	    !str(t, "targets-url") || !url_ok(str(t, "targets-url")))
		return bad(file, i, "metadata-url and targets-url must be "
		    "https with no credentials, query or fragment");
	s->metadata_url = xstrdup(str(t, "metadata-url"));
	s->targets_url = xstrdup(str(t, "targets-url"));
	return 0;
}

/* chunk: the text of [[sources]] number i, other lines blanked */
static char *
chunk(const char *s, size_t n, int want, int *count)
{
	struct buf b;
	const char *p = s, *nl;
	size_t len;
	int at = -1;

	buf_init(&b);
	*count = 0;
	while (p < s + n) {
		nl = memchr(p, '\n', (size_t)(s + n - p));
		len = nl ? (size_t)(nl - p) + 1 : (size_t)(s + n - p);
		if (len >= 11 && !strncmp(p, "[[sources]]", 11) &&
		    strspn(p + 11, " \t\r") == len - 11 - (nl != NULL)) {
			at = (*count)++;
			buf_addc(&b, '\n');
		} else if (at == want) {
			buf_add(&b, p, len);
		} else {
			buf_addc(&b, '\n');
		}
		p += len;
	}
	return buf_cstr(&b);
}

static int
parse_file(const char *file, struct buf *text, struct skill_sources *ss)
{
	struct arena a;
	struct jval *t;
	char *c;
	int i, count, rc = 0;

	arena_init(&a);
	c = chunk(text->p, text->len, -1, &count);
	t = toml_parse(&a, c, strlen(c), file);
	free(c);
	if (!t || !json_is_str(json_get(t, "schema_version"), SOURCES_SCHEMA)
	    || t->n != 1) {
		arena_release(&a);
		return t ? hw_err_set(HW_EXIT_DATA, "invalid skill sources "
		    "'%s': it needs schema_version = \"%s\" and [[sources]] "
		    "tables", file, SOURCES_SCHEMA) : -1;
	}
	ss->v = xcalloc((size_t)count + 1, sizeof *ss->v);
	for (i = 0; i < count && rc == 0; i++) {
		arena_clear(&a);
		c = chunk(text->p, text->len, i, &count);
		t = toml_parse_ext(&a, c, strlen(c), file, TOML_ARRAYS);
		free(c);
		rc = t ? source_parse(file, i, t, &ss->v[i]) : -1;
		ss->n = (size_t)i + 1;
		for (int j = 0; rc == 0 && j < i; j++)
			if (!strcmp(ss->v[j].id, ss->v[i].id))
				rc = bad(file, i, "its id is another's");
	}
	arena_release(&a);
	return rc;
}

int
skill_sources_load(struct skill_sources *ss)
{
	const char *env = getenv("HEARTWOOD_SKILL_SOURCES_FILE");
	char *user = user_dir("XDG_CONFIG_HOME", ".config"), *cand[3];
	struct buf b;
	int i, rc = 0;

	memset(ss, 0, sizeof *ss);
	if (env && env[0] != '/') {
		free(user);
		return hw_err_set(HW_EXIT_USAGE, "HEARTWOOD_SKILL_SOURCES_FILE "
		    "'%s' is not an absolute path", env);
	}
	cand[0] = env ? xstrdup(env) : NULL;
	cand[1] = xstrdup(SOURCES_SYSTEM);
	cand[2] = user ? path_join(user, "heartwood/skill-sources.toml") :
	    NULL;
	free(user);
	buf_init(&b);
	for (i = env ? 0 : 1; i < 3 && !ss->file; i++) {
		if (!cand[i] || access(cand[i], F_OK) < 0)
			continue;
		ss->file = xstrdup(cand[i]);
		if ((rc = read_file(cand[i], SOURCES_MAX, &b)) == 0)
			rc = parse_file(cand[i], &b, ss);
	}
	if (env && !ss->file)
		rc = hw_err_set(HW_EXIT_NOINPUT, "no skill sources file '%s'",
		    env);
	for (i = 0; i < 3; i++)
		free(cand[i]);
	buf_release(&b);
	if (rc < 0)
		skill_sources_release(ss);
	return rc;
}

void
skill_sources_release(struct skill_sources *ss)
{
	size_t i, j;

	for (i = 0; i < ss->n; i++) {
		free(ss->v[i].id);
		free(ss->v[i].trusted_root);
		free(ss->v[i].metadata_url);
		free(ss->v[i].targets_url);
		for (j = 0; j < ss->v[i].napproved; j++)
			free(ss->v[i].approved[j]);
		free(ss->v[i].approved);
	}
	free(ss->v);
	free(ss->file);
	memset(ss, 0, sizeof *ss);
}

const struct skill_source *
skill_source_find(const struct skill_sources *ss, const char *id)
{
	size_t i;

	for (i = 0; i < ss->n; i++)
		if (!strcmp(ss->v[i].id, id))
			return &ss->v[i];
	return NULL;
}

void
skill_source_json(const struct skill_source *s, struct buf *b)
{
	buf_printf(b, "{\"enabled\":%s,\"id\":", s->enabled ? "true" : "false");
	json_canon_str(b, s->id, strlen(s->id));
	buf_printf(b, ",\"kind\":\"%s\",\"metadata_url\":", s->offline ?
	    "offline" : "remote");
	json_canon_str(b, s->metadata_url, strlen(s->metadata_url));
	buf_adds(b, ",\"targets_url\":");
	json_canon_str(b, s->targets_url, strlen(s->targets_url));
	buf_adds(b, ",\"trusted_root\":");
	json_canon_str(b, s->trusted_root, strlen(s->trusted_root));
	buf_adds(b, "}\n");
}
