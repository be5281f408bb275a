/* catalog.c - a source's signed catalog: refresh, checks, revocation */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "skill/skill.h"
#include "tuf/tuf.h"

#define CATALOG_SCHEMA "heartwood.skill-catalog.v1"
#define ENTRY_SCHEMA "heartwood.skill-catalog-entry.v1"
#define CATALOG_MAX (8u << 20)

static int
bad(const char *src, const char *name, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid catalog of source '%s': entry "
	    "'%s': %s", src, name ? name : "?", why);
}

static int
hex_len(const char *s, size_t n)
{
	return s && strlen(s) == n && strspn(s, "0123456789abcdef") == n;
}

/* files_digest: the tree digest the entry's file list gives */
static int
files_check(const struct jval *files, char out[SHA256_HEX + 1])
{
	struct skill_tree t = { 0 };
	size_t i;
	int64_t size;
	const char *p;
	int rc = 0;

	if (!files || files->t != J_ARRAY || files->n == 0 ||
	    files->n > SKILL_MAX_FILES)
		return -1;
	t.files = xcalloc(files->n, sizeof *t.files);
	for (i = 0; i < files->n && rc == 0; i++) {
		const struct jval *f = files->u.a[i], *x = json_get(f,
		    "executable");
		static const char *const k[] = { "executable", "path", "role",
			"sha256", "size", NULL };

		p = json_get_str(f, "path");
		if (json_keys_exact(f, k) || !p || !skill_clean_path(p) ||
		    json_get_int(f, "size", &size) < 0 || size < 0 ||
		    (uint64_t)size > SKILL_MAX_FILE ||
		    !hex_len(json_get_str(f, "sha256"), SHA256_HEX) ||
		    (x->t != J_TRUE && x->t != J_FALSE) ||
		    !json_is_str(json_get(f, "role"), skill_role(p)) ||
		    (i && skill_path_cmp(t.files[i - 1].path, p) >= 0)) {
			rc = -1;
			break;
		}
		t.files[i].path = (char *)p;
		t.files[i].role = skill_role(p);
		t.files[i].executable = x->t == J_TRUE;
		t.files[i].size = (uint64_t)size;
		memcpy(t.files[i].sha256, json_get_str(f, "sha256"),
		    SHA256_HEX + 1);
		t.n = i + 1;
		if ((t.total += (uint64_t)size) > SKILL_MAX_TOTAL)
			rc = -1;
	}
	if (rc == 0) {
		struct buf b;

		buf_init(&b);
		skill_tree_json(&t, &b);
		sha256_hex(b.p, b.len, out);
		buf_release(&b);
	}
	free(t.files);
	return rc;
}

static int
entry_check(const char *src, const struct jval *e)
{
	const char *name = json_get_str(e, "name"), *tree, *target;
	const struct jval *rv = json_get(e, "revoked"), *reason;
	char digest[SHA256_HEX + 1], *want;
	int64_t size;
	int ok;

	if (!name || !skill_valid_name(name))
		return bad(src, name, "no valid name");
	if (!json_get_str(e, "description") || !json_get_str(e, "license") ||
	    !json_get(e, "policy") || json_get(e, "policy")->t != J_OBJECT ||
	    !json_get_str(json_get(e, "policy"), "id") ||
	    !json_get_str(json_get(e, "policy"), "version"))
		return bad(src, name, "no description, license or policy");
	tree = json_get_str(e, "tree_sha256");
	if (!hex_len(tree, SHA256_HEX) || files_check(json_get(e, "files"),
	    digest) < 0 || strcmp(digest, tree))
		return bad(src, name, "its files do not give its tree_sha256");
	if (!hex_len(json_get_str(e, "archive_sha256"), SHA256_HEX) ||
	    json_get_int(e, "archive_size", &size) < 0 || size < 1 ||
	    (uint64_t)size > SKILL_MAX_ARCHIVE)
		return bad(src, name, "no archive_sha256 or archive_size");
	target = json_get_str(e, "target");
	want = xasprintf("skills/%s/%s/%s.zip", name, json_get_str(
	    json_get(e, "policy"), "version"), tree);
	ok = target && !strcmp(target, want);
	free(want);
	if (!ok)
		return bad(src, name, "its target is not skills/NAME/VERSION/"
		    "TREE.zip");
	if (!hex_len(json_get_str(e, "source_revision"), 40) ||
	    !json_get_str(e, "source_repository") ||
	    !json_is_str(json_get(e, "review"), "repository-reviewed"))
		return bad(src, name, "no source revision, repository or "
		    "review");
	reason = json_get(e, "revocation_reason");
	if (!rv || (rv->t != J_TRUE && rv->t != J_FALSE) || !reason ||
	    (rv->t == J_TRUE) != (reason->t == J_STRING && reason->n > 0) ||
	    (rv->t == J_FALSE && reason->t != J_NULL))
		return bad(src, name, "a revocation reason is needed if and "
		    "only if it is revoked");
	return 0;
}

static int
catalog_check(const char *src, const struct jval *c)
{
	const struct jval *es = json_get(c, "entries");
	size_t i, j;

	if (!json_is_str(json_get(c, "schema_version"), CATALOG_SCHEMA) ||
	    !es || es->t != J_ARRAY)
		return hw_err_set(HW_EXIT_DATA, "invalid catalog of source "
		    "'%s': it is not %s", src, CATALOG_SCHEMA);
	for (i = 0; i < es->n; i++) {
		if (entry_check(src, es->u.a[i]) < 0)
			return -1;
		if (i && strcmp(json_get_str(es->u.a[i - 1], "name"),
		    json_get_str(es->u.a[i], "name")) >= 0)
			return bad(src, json_get_str(es->u.a[i], "name"),
			    "the entries are not sorted by name, or a name "
			    "repeats");
		for (j = 0; j < i; j++)
			if (!strcmp(json_get_str(json_get(es->u.a[j], "policy"),
			    "id"), json_get_str(json_get(es->u.a[i], "policy"),
			    "id")))
				return bad(src, json_get_str(es->u.a[i],
				    "name"),
				    "its id is another entry's");
	}
	return 0;
}

/* entry_target: the TUF listing of e's archive must be its size and hash */
static int
entry_target(struct skill_catalog *cat, const struct jval *e)
{
	struct tuf_target t;
	const char *name = json_get_str(e, "name");
	int64_t size;
	int rc = tuf_target_find(cat->u, json_get_str(e, "target"), &t);

	if (rc <= 0)
		return rc < 0 ? -1 : bad(cat->src->id, name, "its archive is "
		    "not a signed target");
	json_get_int(e, "archive_size", &size);
	if (t.length != size || !json_is_str(json_get(t.hashes, "sha256"),
	    json_get_str(e, "archive_sha256")))
		rc = bad(cat->src->id, name, "its archive's signed length or "
		    "sha256 is not its archive_size or archive_sha256");
	else
		rc = 0;
	free(t.path);
	return rc;
}

static char *
cache_dir(const struct skill_source *s, const char *sub)
{
	return xasprintf(".heartwood/cache/skills/%s%s%s", s->id,
	    sub ? "/" : "", sub ? sub : "");
}

static int
cache_layout(const struct skill_source *s)
{
	char *d = cache_dir(s, NULL), *m = cache_dir(s, "metadata"),
	    *t = cache_dir(s, "targets"), *root = path_join(m, "root.json");
	int rc = ensure_dir(".heartwood/cache") < 0 ||
	    ensure_dir(".heartwood/cache/skills") < 0 || ensure_dir(d) < 0 ||
	    ensure_dir(m) < 0 || ensure_dir(t) < 0 ? -1 : 0;

	/* the deployment's trusted root, the first time only */
	if (rc == 0 && access(root, F_OK) < 0)
		rc = tuf_init_root(m, s->trusted_root);
	free(d);
	free(m);
	free(t);
	free(root);
	return rc;
}

int
skill_catalog_load(const struct skill_source *s, struct skill_catalog *cat)
{
	struct tuf_target t;
	char *m, err[200];
	size_t i;
	int rc;

	memset(cat, 0, sizeof *cat);
	arena_init(&cat->a);
	buf_init(&cat->raw);
	cat->src = s;
	if (cache_layout(s) < 0)
		return -1;
	cat->u = xcalloc(1, sizeof *cat->u);
	m = cache_dir(s, "metadata");
	rc = tuf_updater_init(cat->u, m, s->metadata_url);
	free(m);
	if (rc < 0 || tuf_refresh(cat->u) < 0)
		return -1;
	if ((rc = tuf_target_find(cat->u, "catalog.json", &t)) <= 0)
		return rc < 0 ? -1 : hw_err_set(HW_EXIT_DATA, "source '%s' "
		    "lists no catalog.json", s->id);
	if (t.length > (int64_t)CATALOG_MAX)
		rc = hw_err_set(HW_EXIT_DATA, "the catalog of source '%s' is "
		    "over 8 MiB", s->id);
	else
		rc = tuf_target_fetch(cat->u, &t, s->targets_url, &cat->raw);
	free(t.path);
	if (rc < 0)
		return -1;
	cat->v = json_parse(&cat->a, buf_cstr(&cat->raw), cat->raw.len, err,
	    sizeof err);
	if (!cat->v)
		return hw_err_set(HW_EXIT_DATA, "invalid catalog of source "
		    "'%s': %s", s->id, err);
	if (catalog_check(s->id, cat->v) < 0)
		return -1;
	cat->entries = json_get(cat->v, "entries");
	for (i = 0; i < cat->entries->n; i++)
		if (entry_target(cat, cat->entries->u.a[i]) < 0)
			return -1;
	/* what list shows until the next refresh */
	m = cache_dir(s, "targets/catalog.json");
	rc = atomic_replace(m, cat->raw.p, cat->raw.len);
	free(m);
	return rc;
}

int
skill_catalog_cached(const struct skill_source *s, struct skill_catalog *cat)
{
	char *path = cache_dir(s, "targets/catalog.json"), err[200];
	int rc;

	memset(cat, 0, sizeof *cat);
	arena_init(&cat->a);
	buf_init(&cat->raw);
	cat->src = s;
	rc = read_file(path, CATALOG_MAX, &cat->raw);
	free(path);
	if (rc < 0)
		return hw_err_code() == HW_EXIT_NOINPUT ? 1 : -1;
	cat->v = json_parse(&cat->a, buf_cstr(&cat->raw), cat->raw.len, err,
	    sizeof err);
	if (!cat->v)
		return hw_err_set(HW_EXIT_DATA, "invalid catalog of source "
		    "'%s': %s", s->id, err);
	if (catalog_check(s->id, cat->v) < 0)
		return -1;
	cat->entries = json_get(cat->v, "entries");
	return 0;
}

void
skill_catalog_release(struct skill_catalog *cat)
{
	if (cat->u) {
		tuf_updater_release(cat->u);
		free(cat->u);
	}
	buf_release(&cat->raw);
	arena_release(&cat->a);
	memset(cat, 0, sizeof *cat);
}

const struct jval *
skill_catalog_entry(const struct skill_catalog *cat, const char *name)
{
	size_t i;

	for (i = 0; cat->entries && i < cat->entries->n; i++)
		if (json_is_str(json_get(cat->entries->u.a[i], "name"), name))
			return cat->entries->u.a[i];
	return NULL;
}

const char *
skill_entry_unsupported(const struct jval *e)
{
	const struct jval *m = json_get(e, "mcp_servers");
	const struct jval *d = json_get(e, "dynamic_context");

	if (m && !(m->t == J_ARRAY && m->n == 0) && m->t != J_NULL)
		return "it uses MCP servers";
	if (d && d->t == J_TRUE)
		return "it uses dynamic shell context";
	return NULL;
}
