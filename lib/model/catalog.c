/*
 * catalog.c - the managed catalog files: model-catalog.toml
 * (heartwood.local-model-catalog.v2) with its GGUF artifact manifests, and
 * snapshots.toml (heartwood.model-snapshot-catalog.v3) with its download
 * policies, each rule checked strictly (hw-model(1) CATALOG FILES)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model.h"

#define FILE_MAX (1u << 20)

struct cat {
	struct arena *a;
	const char *path;	/* the file being checked, for messages */
	const char *what;	/* "model 'ID'", "snapshot 'ID'" ... */
};

static int __attribute__((format(printf, 2, 3)))
bad(const struct cat *c, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "invalid catalog '%s': %s%s%s",
	    c->path, c->what ? c->what : "", c->what ? ": " : "", msg);
}

static int
in(const char *const *set, const char *s)
{
	for (; *set; set++)
		if (!strcmp(*set, s))
			return 1;
	return 0;
}

static const char *const platforms[] = { "carina", "generic", "terra",
	NULL };
static const char *const tiers[] = { "standard", "powerful", "maximum",
	NULL };
static const char *const parsers[] = { "hermes", "openai", "qwen3_coder",
	NULL };

/* kinds of fields: s string, i positive integer, b boolean, l list */
struct field {
	const char *k;
	char kind, required;
};

static int
typed(const struct cat *c, const struct jval *t, const struct field *f)
{
	for (; f->k; f++) {
		const struct jval *v = json_get(t, f->k);
		int64_t x;

		if (!v) {
			if (f->required)
				return bad(c, "%s is required", f->k);
			continue;
		}
		if (f->kind == 's' && (v->t != J_STRING || !v->n ||
		    strlen(v->u.s) != v->n))
			return bad(c, "%s: expected a non-empty string", f->k);
		if (f->kind == 'i' && (json_get_int(t, f->k, &x) < 0 || x < 1))
			return bad(c, "%s: expected a positive integer", f->k);
		if (f->kind == 'b' && v->t != J_TRUE && v->t != J_FALSE)
			return bad(c, "%s: expected true or false", f->k);
		if (f->kind == 'l' && v->t != J_ARRAY)
			return bad(c, "%s: expected an array of strings", f->k);
	}
	return 0;
}

/* known: every key of t is a field, or informational (ignored) */
static int
known(const struct cat *c, const struct jval *t, const struct field *f,
    int informational)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *k = t->u.m[i].k;
		const struct field *g;

		for (g = f; g->k && strcmp(g->k, k); g++)
			;
		if (g->k || (informational && (!strcmp(k, "source_url") ||
		    !strcmp(k, "redistribution") ||
		    !strncmp(k, "base_model", 10))))
			continue;
		return bad(c, "unknown key '%.64s'", k);
	}
	return 0;
}

static int64_t
num(const struct jval *t, const char *k)
{
	int64_t x = 0;

	json_get_int(t, k, &x);
	return x;
}

static int
flag(const struct jval *t, const char *k)
{
	const struct jval *v = json_get(t, k);

	return v && v->t == J_TRUE;
}

static int
id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 128 || strchr(id, '/') || strstr(id, ".."))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (id[i] < 0x21 || id[i] > 0x7e)
			return 0;
	return 1;
}

static int
date_ok(const char *s)
{
	int y, m, d, n = 0;

	return strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%n", &y, &m, &d,
	    &n) == 3 && n == 10 && s[4] == '-' && s[7] == '-' &&
	    strspn(s, "0123456789-") == 10 && m >= 1 && m <= 12 && d >= 1 &&
	    d <= 31;
}

/* strings: l is an array of unique strings, each in set (if set) */
static int
strings(const struct cat *c, const struct jval *l, const char *k,
    const char *const *set)
{
	for (size_t i = 0; l && i < l->n; i++) {
		const struct jval *v = l->u.a[i];

		if (v->t != J_STRING || !v->n || strlen(v->u.s) != v->n)
			return bad(c, "%s: expected an array of strings", k);
		if (set && !in(set, v->u.s))
			return bad(c, "%s: unknown value '%.32s'", k, v->u.s);
		for (size_t j = 0; j < i; j++)
			if (json_equal(l->u.a[j], v))
				return bad(c, "%s: '%.64s' is listed twice", k,
				    v->u.s);
	}
	return 0;
}

/* qualification: the pairing rules artifacts and snapshots share */
static int
qualification(const struct cat *c, const struct jval *t)
{
	const char *q = json_get_str(t, "qualification");
	const struct jval *pl = json_get(t, "validated_platforms");
	const char *test = json_get_str(t, "qualification_test");
	const char *date = json_get_str(t, "qualification_date");
	const char *ev = json_get_str(t, "qualification_evidence");

	if (!q)
		q = "unvalidated";
	if (strcmp(q, "unvalidated") && strcmp(q, "qualified"))
		return bad(c, "qualification: expected unvalidated or "
		    "qualified");
	if (strings(c, pl, "validated_platforms", platforms) < 0)
		return -1;
	if (date && !date_ok(date))
		return bad(c, "qualification_date: expected YYYY-MM-DD");
	if (!date != !ev)
		return bad(c, "qualification_date and qualification_evidence "
		    "must appear together");
	if (!strcmp(q, "qualified") && (!pl || !pl->n || !test || !date))
		return bad(c, "a qualified entry needs validated_platforms, "
		    "qualification_test and dated qualification_evidence");
	if (!strcmp(q, "unvalidated") && ((pl && pl->n) || test || date))
		return bad(c, "an unvalidated entry declares no "
		    "validated_platforms, qualification_test, "
		    "qualification_date or qualification_evidence");
	if (flag(t, "recommended") && strcmp(q, "qualified"))
		return bad(c, "only a qualified entry may be recommended");
	return 0;
}

static int
source(const struct cat *c, const struct jval *t, int full)
{
	const char *r = json_get_str(t, "source_revision");
	size_t n = strlen(r);

	if (model_repo_ok(json_get_str(t, "source_repository")) < 0)
		return bad(c, "source_repository: expected one OWNER/NAME");
	if (n < (full ? 40u : 7u) || n > 64 || model_hex_ok(r, n) < 0)
		return bad(c, "source_revision: expected %s lowercase hex "
		    "digits", full ? "a full commit of 40 to 64" : "7 to 64");
	return 0;
}

/* ---- artifact manifests ---- */

static const struct field artifact_fields[] = {
	{ "artifact_id", 's', 1 }, { "runtime_profile", 's', 1 },
	{ "purpose", 's', 1 }, { "source_repository", 's', 1 },
	{ "source_path", 's', 1 }, { "source_revision", 's', 1 },
	{ "artifact_format", 's', 1 }, { "artifact_size_bytes", 'i', 1 },
	{ "minimum_free_bytes", 'i', 1 }, { "artifact_sha256", 's', 1 },
	{ "license_posture", 's', 1 }, { "model_alias", 's', 1 },
	{ "context_window", 'i', 1 },
	{ "minimum_resource_envelope", 's', 0 },
	{ "recommended_resource_envelope", 's', 0 },
	{ "qualification", 's', 0 }, { "validated_platforms", 'l', 0 },
	{ "qualification_test", 's', 0 }, { "qualification_date", 's', 0 },
	{ "qualification_evidence", 's', 0 }, { "recommended", 'b', 0 },
	{ NULL, 0, 0 }
};

static int
artifact(struct cat *c, const struct jval *m)
{
	const char *id;
	int64_t ctx;

	if (known(c, m, artifact_fields, 1) < 0 ||
	    typed(c, m, artifact_fields) < 0)
		return -1;
	id = json_get_str(m, "artifact_id");
	if (!id_ok(id))
		return bad(c, "artifact_id: expected an id without '/' or "
		    "'..'");
	if (strcmp(json_get_str(m, "runtime_profile"), "llama-cpp-cpu"))
		return bad(c, "runtime_profile: expected llama-cpp-cpu");
	if (source(c, m, 0) < 0)
		return -1;
	if (model_path_ok(json_get_str(m, "source_path")) < 0)
		return bad(c, "source_path: expected a relative path without "
		    "'..'");
	if (strcasecmp(json_get_str(m, "artifact_format"), "gguf"))
		return bad(c, "artifact_format: expected GGUF");
	if (num(m, "minimum_free_bytes") < num(m, "artifact_size_bytes"))
		return bad(c, "minimum_free_bytes must be at least "
		    "artifact_size_bytes");
	ctx = num(m, "context_window");
	if (ctx < 2048 || ctx > MODEL_CONTEXT_MAX)
		return bad(c, "context_window: expected 2048 to 1048576");
	if (model_hex_ok(json_get_str(m, "artifact_sha256"), SHA256_HEX) < 0)
		return bad(c, "artifact_sha256: expected 64 lowercase hex "
		    "digits");
	return qualification(c, m);
}

/* ---- model-catalog.toml ---- */

static const struct field entry_fields[] = {
	{ "status", 's', 1 }, { "purpose", 's', 1 },
	{ "runtime_profile", 's', 1 }, { "artifact_manifest", 's', 0 },
	{ "quality_claim", 'b', 1 }, { "quality_claim_scope", 's', 0 },
	{ "production_use", 'b', 1 }, { NULL, 0, 0 }
};
static const struct field catalog_top[] = {
	{ "schema_version", 's', 1 }, { "default_smoke_model", 's', 0 },
	{ "default_demo_agent_model", 's', 0 },
	{ "default_demo_coding_model", 's', 0 },
	{ "storage_policy", 's', 0 }, { "models", 't', 1 }, { NULL, 0, 0 }
};

static struct jval *
read_toml(const char *path, struct arena *a)
{
	struct jval *v;
	struct buf b;

	buf_init(&b);
	if (read_file(path, FILE_MAX, &b) < 0) {
		buf_release(&b);
		return NULL;
	}
	v = toml_parse_ext(a, b.p ? b.p : "", b.len, path, TOML_ARRAYS);
	buf_release(&b);
	return v;
}

/* dir_of: path's directory, in a */
static const char *
dir_of(struct arena *a, const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? arena_strndup(a, path, s == path ? 1 : (size_t)(s -
	    path)) : ".";
}

static int
entry(struct cat *c, const char *dir, const char *id, const struct jval *e,
    struct jval *models)
{
	struct cat mc = { c->a, NULL, NULL };
	const char *mf;
	struct jval *m, *o;
	struct buf w;
	char *p;

	buf_init(&w);
	buf_printf(&w, "model '%.64s'", id);
	c->what = arena_strndup(c->a, w.p, w.len);
	buf_release(&w);
	if (e->t != J_OBJECT)
		return bad(c, "expected a table");
	if (!id_ok(id))
		return bad(c, "the id must not contain '/' or '..'");
	if (known(c, e, entry_fields, 0) < 0 || typed(c, e, entry_fields) < 0)
		return -1;
	if (!(mf = json_get_str(e, "artifact_manifest")))
		return 0;	/* not a managed artifact: skipped */
	if (model_path_ok(mf) < 0)
		return bad(c, "artifact_manifest: expected a relative path "
		    "without '..'");
	p = path_join(dir, mf);
	mc.path = arena_strndup(c->a, p, strlen(p));
	free(p);
	if (!(m = read_toml(mc.path, c->a)))
		return -1;
	if (artifact(&mc, m) < 0)
		return -1;
	for (size_t i = 0; i < models->n; i++)
		if (json_equal(json_get(json_get(models->u.a[i], "artifact"),
		    "artifact_id"), json_get(m, "artifact_id")))
			return bad(c, "artifact_id '%.64s' is used twice",
			    json_get_str(m, "artifact_id"));
	o = json_obj(c->a);
	json_add(c->a, o, "model_id", json_str(c->a, id));
	for (size_t i = 0; i < e->n; i++)
		json_add(c->a, o, e->u.m[i].k, e->u.m[i].v);
	json_add(c->a, o, "artifact_manifest_path", json_str(c->a, mc.path));
	json_add(c->a, o, "artifact", m);
	json_push(c->a, models, o);
	return 0;
}

static int
catalog_file(struct cat *c, struct jval *out)
{
	static const char *const defaults[] = { "default_smoke_model",
		"default_demo_agent_model", "default_demo_coding_model", NULL };
	struct jval *t, *models = json_new(c->a, J_ARRAY), *d;
	const struct jval *ms;
	const char *dir = dir_of(c->a, c->path);

	if (!(t = read_toml(c->path, c->a)))
		return -1;
	if (known(c, t, catalog_top, 0) < 0 || typed(c, t, catalog_top) < 0)
		return -1;
	if (strcmp(json_get_str(t, "schema_version"), LOCAL_CATALOG_SCHEMA))
		return bad(c, "schema_version: expected "
		    LOCAL_CATALOG_SCHEMA);
	if (!(ms = json_get(t, "models")) || ms->t != J_OBJECT)
		return bad(c, "models: expected [models.ID] tables");
	for (size_t i = 0; i < ms->n; i++)
		if (entry(c, dir, ms->u.m[i].k, ms->u.m[i].v, models) < 0)
			return -1;
	c->what = NULL;
	d = json_obj(c->a);
	for (size_t i = 0; defaults[i]; i++) {
		const char *v = json_get_str(t, defaults[i]);
		size_t k;

		for (k = 0; v && k < models->n; k++)
			if (json_is_str(json_get(models->u.a[k], "model_id"),
			    v))
				break;
		if (v && k == models->n)
			return bad(c, "%s: '%.64s' is not a model with an "
			    "artifact manifest", defaults[i], v);
		json_add(c->a, d, defaults[i], v ? json_str(c->a, v) :
		    json_new(c->a, J_NULL));
	}
	json_add(c->a, d, "storage_policy", json_get(t, "storage_policy") ?
	    json_get(t, "storage_policy") : json_new(c->a, J_NULL));
	json_add(c->a, out, "catalog_file", json_str(c->a, c->path));
	json_add(c->a, out, "defaults", d);
	json_add(c->a, out, "models", models);
	return 0;
}

/* ---- snapshots.toml ---- */

static const struct field snapshot_fields[] = {
	{ "runtime_profile", 's', 1 }, { "purpose", 's', 1 },
	{ "model_alias", 's', 1 }, { "precision", 's', 1 },
	{ "source_repository", 's', 1 }, { "source_revision", 's', 1 },
	{ "expected_size_bytes", 'i', 1 }, { "minimum_free_bytes", 'i', 1 },
	{ "license_id", 's', 1 }, { "license_posture", 's', 1 },
	{ "tier", 's', 1 }, { "qualification", 's', 1 },
	{ "minimum_gpu_count", 'i', 1 },
	{ "minimum_gpu_memory_bytes", 'i', 1 },
	{ "recommended_cpu_count", 'i', 1 },
	{ "recommended_ram_bytes", 'i', 1 },
	{ "recommended_disk_bytes", 'i', 1 }, { "context_window", 'i', 1 },
	{ "maximum_context_window", 'i', 1 }, { "tool_call_parser", 's', 1 },
	{ "tensor_parallel_size", 'i', 1 }, { "startup_seconds_min", 'i', 1 },
	{ "startup_seconds_max", 'i', 1 }, { "download_policy", 's', 1 },
	{ "validated_platforms", 'l', 0 }, { "qualification_test", 's', 0 },
	{ "qualification_date", 's', 0 },
	{ "qualification_evidence", 's', 0 },
	{ "minimum_resource_envelope", 's', 0 },
	{ "recommended_resource_envelope", 's', 0 },
	{ "recommended", 'b', 0 }, { NULL, 0, 0 }
};
static const struct field policy_fields[] = {
	{ "allow_patterns", 'l', 1 }, { "ignore_patterns", 'l', 0 },
	{ NULL, 0, 0 }
};
static const struct field snapshots_top[] = {
	{ "schema_version", 's', 1 }, { "download_policies", 't', 1 },
	{ "snapshots", 't', 1 }, { NULL, 0, 0 }
};

static int
patterns(const struct cat *c, const struct jval *l, const char *k)
{
	if (strings(c, l, k, NULL) < 0)
		return -1;
	for (size_t i = 0; l && i < l->n; i++) {
		const char *p = l->u.a[i]->u.s;
		size_t n = strlen(p);

		if (*p == '/' || strchr(p, '\\') || !strcmp(p, "..") ||
		    !strncmp(p, "../", 3) || strstr(p, "/../") ||
		    (n >= 3 && !strcmp(p + n - 3, "/..")))
			return bad(c, "%s: unsafe pattern '%.64s': patterns "
			    "are relative, without '..'", k, p);
	}
	return 0;
}

static int
snapshot(struct cat *c, const struct jval *s, const struct jval *pols)
{
	int64_t ctx, max;

	if (s->t != J_OBJECT)
		return bad(c, "expected a table");
	if (known(c, s, snapshot_fields, 0) < 0 ||
	    typed(c, s, snapshot_fields) < 0)
		return -1;
	if (strcmp(json_get_str(s, "runtime_profile"), "vllm-cuda"))
		return bad(c, "runtime_profile: expected vllm-cuda");
	if (source(c, s, 1) < 0)
		return -1;
	if (num(s, "minimum_free_bytes") < num(s, "expected_size_bytes"))
		return bad(c, "minimum_free_bytes must be at least "
		    "expected_size_bytes");
	if (num(s, "recommended_disk_bytes") < num(s, "minimum_free_bytes"))
		return bad(c, "recommended_disk_bytes must be at least "
		    "minimum_free_bytes");
	if (num(s, "tensor_parallel_size") < num(s, "minimum_gpu_count"))
		return bad(c, "tensor_parallel_size must be at least "
		    "minimum_gpu_count");
	ctx = num(s, "context_window");
	max = num(s, "maximum_context_window");
	if (ctx < 2048 || ctx > max || max > MODEL_CONTEXT_MAX)
		return bad(c, "expected 2048 <= context_window <= "
		    "maximum_context_window <= 1048576");
	if (num(s, "startup_seconds_min") > num(s, "startup_seconds_max"))
		return bad(c, "startup_seconds_min must not exceed "
		    "startup_seconds_max");
	if (!in(tiers, json_get_str(s, "tier")))
		return bad(c, "tier: expected standard, powerful or maximum");
	if (!in(parsers, json_get_str(s, "tool_call_parser")))
		return bad(c, "tool_call_parser: expected hermes, openai or "
		    "qwen3_coder");
	if (!json_get(pols, json_get_str(s, "download_policy")))
		return bad(c, "download_policy: no policy '%.64s' in "
		    "[download_policies]", json_get_str(s, "download_policy"));
	return qualification(c, s);
}

static struct jval *
named(struct arena *a, const char *idk, const char *id, const struct jval *t)
{
	struct jval *o = json_obj(a);

	json_add(a, o, idk, json_str(a, id));
	for (size_t i = 0; i < t->n; i++)
		json_add(a, o, t->u.m[i].k, t->u.m[i].v);
	return o;
}

static int
snapshots_file(struct cat *c, struct jval *out)
{
	struct jval *t, *snaps = json_new(c->a, J_ARRAY);
	struct jval *pl = json_new(c->a, J_ARRAY);
	const struct jval *ps, *ss;
	struct buf w;
	int rc = 0;

	if (!(t = read_toml(c->path, c->a)))
		return -1;
	if (known(c, t, snapshots_top, 0) < 0 ||
	    typed(c, t, snapshots_top) < 0)
		return -1;
	if (strcmp(json_get_str(t, "schema_version"), SNAPSHOT_CATALOG_SCHEMA))
		return bad(c, "schema_version: expected "
		    SNAPSHOT_CATALOG_SCHEMA);
	ps = json_get(t, "download_policies");
	ss = json_get(t, "snapshots");
	if (ps->t != J_OBJECT || !ps->n)
		return bad(c, "download_policies: expected at least one "
		    "[download_policies.ID] table");
	if (ss->t != J_OBJECT)
		return bad(c, "snapshots: expected [snapshots.ID] tables");
	buf_init(&w);
	for (size_t i = 0; rc == 0 && i < ps->n; i++) {
		const struct jval *p = ps->u.m[i].v;

		buf_clear(&w);
		buf_printf(&w, "download policy '%.64s'", ps->u.m[i].k);
		c->what = arena_strndup(c->a, w.p, w.len);
		if (p->t != J_OBJECT)
			rc = bad(c, "expected a table");
		else if (known(c, p, policy_fields, 0) < 0 ||
		    typed(c, p, policy_fields) < 0)
			rc = -1;
		else if (!json_get(p, "allow_patterns")->n)
			rc = bad(c, "allow_patterns: expected at least one "
			    "pattern");
		else if (patterns(c, json_get(p, "allow_patterns"),
		    "allow_patterns") < 0 || patterns(c, json_get(p,
		    "ignore_patterns"), "ignore_patterns") < 0)
			rc = -1;
		else
			json_push(c->a, pl, named(c->a, "download_policy_id",
			    ps->u.m[i].k, p));
	}
	for (size_t i = 0; rc == 0 && i < ss->n; i++) {
		buf_clear(&w);
		buf_printf(&w, "snapshot '%.64s'", ss->u.m[i].k);
		c->what = arena_strndup(c->a, w.p, w.len);
		if (!id_ok(ss->u.m[i].k))
			rc = bad(c, "the id must not contain '/' or '..'");
		else if (snapshot(c, ss->u.m[i].v, ps) < 0)
			rc = -1;
		else
			json_push(c->a, snaps, named(c->a, "snapshot_id",
			    ss->u.m[i].k, ss->u.m[i].v));
	}
	buf_release(&w);
	c->what = NULL;
	if (rc < 0)
		return -1;
	json_add(c->a, out, "snapshots_file", json_str(c->a, c->path));
	json_add(c->a, out, "download_policies", pl);
	json_add(c->a, out, "snapshots", snaps);
	return 0;
}

struct jval *
catalog_load(const char *catalog, const char *snapshots, struct arena *a)
{
	struct jval *out = json_obj(a);
	struct cat c = { a, catalog, NULL };

	json_add(a, out, "schema_version", json_str(a, LOCAL_CATALOG_SCHEMA));
	json_add(a, out, "snapshot_schema_version", json_str(a,
	    SNAPSHOT_CATALOG_SCHEMA));
	if (catalog_file(&c, out) < 0)
		return NULL;
	c.path = snapshots;
	if (snapshots_file(&c, out) < 0)
		return NULL;
	return out;
}
