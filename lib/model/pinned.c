/* pinned.c - a managed catalog entry turned into a plan the hub must match */
#include <fnmatch.h>
#include <stdint.h>
#include <string.h>

#include "model/model.h"

struct pin {
	struct arena *a;
	const struct jval *entry, *info, *sib;
	const char *id, *repo, *sha;
	struct jval *plan, *cand;
};

static int
differs(const struct pin *p, const char *what)
{
	return hw_err_set(HW_EXIT_DATA, "catalog entry '%s': the hub's %s "
	    "differs from the catalog's", p->id, what);
}

const struct jval *
catalog_entry(const struct jval *catalog, const char *id, int *snapshot)
{
	const struct jval *ms = json_get(catalog, "models");
	const struct jval *ss = json_get(catalog, "snapshots");
	size_t i;

	for (i = 0; ms && ms->t == J_ARRAY && i < ms->n; i++)
		if (json_is_str(json_get(ms->u.a[i], "model_id"), id)) {
			*snapshot = 0;
			return json_get(ms->u.a[i], "artifact");
		}
	for (i = 0; ss && ss->t == J_ARRAY && i < ss->n; i++)
		if (json_is_str(json_get(ss->u.a[i], "snapshot_id"), id)) {
			*snapshot = 1;
			return ss->u.a[i];
		}
	return NULL;
}

/* pinned: the hub answers the catalog's commit (a short one its prefix) */
static int
pinned(struct pin *p)
{
	const char *rev = json_get_str(p->entry, "source_revision");
	size_t n = strlen(rev);

	p->sha = json_get_str(p->info, "sha");
	if (!p->sha || strlen(p->sha) < 40 || strlen(p->sha) > 64 ||
	    model_hex_ok(p->sha, strlen(p->sha)) < 0)
		return hw_err_set(HW_EXIT_DATA, "hub answer about '%s': sha "
		    "is not a full commit", p->repo);
	if (n > strlen(p->sha) || strncmp(p->sha, rev, n) ||
	    (n >= 40 && p->sha[n]))
		return hw_err_set(HW_EXIT_DATA, "catalog entry '%s': the hub "
		    "answered commit '%s', not the pinned '%s'", p->id, p->sha,
		    rev);
	return 0;
}

/* file: a plan's file entry; the git blob only where no LFS digest is */
static struct jval *
file(struct pin *p, const struct jval *s, const char *sha256, int64_t size)
{
	struct jval *f = json_obj(p->a);
	const char *blob = json_get_str(s, "blobId");

	json_add(p->a, f, "path", json_get(s, "rfilename"));
	json_add(p->a, f, "size_bytes", json_int(p->a, size));
	json_add(p->a, f, "sha256", sha256 ? json_str(p->a, sha256) :
	    json_new(p->a, J_NULL));
	json_add(p->a, f, "blob_id", blob && !sha256 ? json_str(p->a, blob) :
	    json_new(p->a, J_NULL));
	return f;
}

static const char *
lfs_sha(const struct jval *s)
{
	const struct jval *lfs = json_get(s, "lfs");

	return lfs && lfs->t == J_OBJECT ? json_get_str(lfs, "sha256") : NULL;
}

static int
artifact(struct pin *p, struct jval *files)
{
	const char *path = json_get_str(p->entry, "source_path");
	const char *sha = json_get_str(p->entry, "artifact_sha256"), *h;
	const struct jval *s = NULL;
	int64_t size, want;
	size_t i;

	for (i = 0; i < p->sib->n && !s; i++)
		if (json_is_str(json_get(p->sib->u.a[i], "rfilename"), path))
			s = p->sib->u.a[i];
	if (!s)
		return hw_err_set(HW_EXIT_DATA, "catalog entry '%s': the hub "
		    "lists no '%s' at commit '%s'", p->id, path, p->sha);
	json_get_int(p->entry, "artifact_size_bytes", &want);
	if (json_get_int(s, "size", &size) < 0 || size != want)
		return differs(p, "size of its file");
	if ((h = lfs_sha(s)) && strcmp(h, sha))
		return differs(p, "lfs.sha256 of its file");
	json_push(p->a, files, file(p, s, sha, want));
	json_add(p->a, p->cand, "kind", json_str(p->a, "gguf"));
	json_add(p->a, p->cand, "runtime", json_str(p->a, "llama-cpp"));
	json_add(p->a, p->cand, "source_path", json_str(p->a, path));
	json_add(p->a, p->cand, "precision", model_precision(p->a, path));
	json_add(p->a, p->cand, "size_bytes", json_int(p->a, want));
	json_add(p->a, p->cand, "minimum_free_bytes",
	    json_get(p->entry, "minimum_free_bytes"));
	return 0;
}

static int
matches(const struct jval *pats, const char *name)
{
	for (size_t i = 0; pats && pats->t == J_ARRAY && i < pats->n; i++)
		if (pats->u.a[i]->t == J_STRING &&
		    fnmatch(pats->u.a[i]->u.s, name, 0) == 0)
			return 1;
	return 0;
}

static const struct jval *
policy(const struct jval *catalog, const char *id)
{
	const struct jval *ps = json_get(catalog, "download_policies");

	for (size_t i = 0; ps && ps->t == J_ARRAY && i < ps->n; i++)
		if (json_is_str(json_get(ps->u.a[i], "download_policy_id"),
		    id))
			return ps->u.a[i];
	return NULL;
}

/* kept: the policy's files, summed; *total -1 when the sizes overflow */
static int
kept(struct pin *p, const struct jval *pol, struct jval *files,
    int64_t *total)
{
	int cfg = 0, weights = 0;
	int64_t size;

	*total = 0;
	for (size_t i = 0; i < p->sib->n; i++) {
		const struct jval *s = p->sib->u.a[i];
		const char *name = json_get_str(s, "rfilename");

		if (json_get_int(s, "size", &size) < 0)
			return hw_err_set(HW_EXIT_DATA, "hub answer about "
			    "'%s': a file without a size", p->repo);
		if (!matches(json_get(pol, "allow_patterns"), name) ||
		    matches(json_get(pol, "ignore_patterns"), name))
			continue;
		if (size > INT64_MAX / 8 - *total)
			return differs(p, "total size");
		*total += size;
		cfg |= !strcmp(name, "config.json");
		weights |= model_weights_name(name);
		json_push(p->a, files, file(p, s, lfs_sha(s), size));
	}
	if (!cfg || !weights)
		return hw_err_set(HW_EXIT_DATA, "catalog entry '%s': the hub "
		    "lists no config.json and safetensors weights at commit "
		    "'%s'", p->id, p->sha);
	return 0;
}

static int
snapshot(struct pin *p, const struct jval *catalog, struct jval *files)
{
	const char *pid = json_get_str(p->entry, "download_policy");
	const struct jval *pol = policy(catalog, pid);
	const struct jval *cfg = json_get(p->info, "config");
	const char *type = cfg && cfg->t == J_OBJECT ?
	    json_get_str(cfg, "model_type") : NULL;
	int64_t total, want, minfree;

	if (!pol)
		return hw_err_set(HW_EXIT_DATA, "catalog entry '%s': no "
		    "download policy '%s'", p->id, pid);
	if (kept(p, pol, files, &total) < 0)
		return -1;
	json_get_int(p->entry, "expected_size_bytes", &want);
	if ((__int128)total * 5 < (__int128)want * 4 ||
	    (__int128)total * 5 > (__int128)want * 6)
		return differs(p, "total size (over 20 % off)");
	json_get_int(p->entry, "minimum_free_bytes", &minfree);
	json_add(p->a, p->plan, "model_type", type ? json_str(p->a, type) :
	    json_new(p->a, J_NULL));
	json_add(p->a, p->cand, "kind", json_str(p->a, "snapshot"));
	json_add(p->a, p->cand, "runtime", json_str(p->a, "vllm"));
	json_add(p->a, p->cand, "precision", json_get(p->entry, "precision"));
	json_add(p->a, p->cand, "size_bytes", json_int(p->a, total));
	json_add(p->a, p->cand, "minimum_free_bytes", json_int(p->a,
	    minfree > total ? minfree : total));
	return 0;
}

/* keep: the catalog's key k into the candidate, when the entry has it */
static void
keep(struct pin *p, const char *k)
{
	struct jval *v = json_get(p->entry, k);

	if (v)
		json_add(p->a, p->cand, k, v);
}

static void
plan_head(struct pin *p)
{
	const char *lic = json_get_str(p->entry, "license_id");
	struct jval *v = json_get(p->entry, "license_posture");

	json_add(p->a, p->plan, "schema_version", json_str(p->a,
	    MODEL_PLAN_SCHEMA));
	json_add(p->a, p->plan, "origin", json_str(p->a, "catalog"));
	json_add(p->a, p->plan, "catalog_id", json_str(p->a, p->id));
	json_add(p->a, p->plan, "source_repository", json_str(p->a, p->repo));
	json_add(p->a, p->plan, "requested_revision",
	    json_get(p->entry, "source_revision"));
	json_add(p->a, p->plan, "source_revision", json_str(p->a, p->sha));
	json_add(p->a, p->plan, "license", lic ? json_str(p->a, lic) : v);
	json_add(p->a, p->plan, "license_posture", v);
	json_add(p->a, p->plan, "context_window",
	    json_get(p->entry, "context_window"));
}

struct jval *
model_catalog_plan(struct hub *h, const struct jval *catalog, const char *id,
    struct arena *a)
{
	struct pin p = { .a = a, .id = id };
	struct jval *files, *cands;
	int snap = 0, rc;

	if (!(p.entry = catalog_entry(catalog, id, &snap))) {
		hw_err_set(HW_EXIT_NOINPUT, "no catalog entry '%s' (hw-model "
		    "catalog lists them)", id);
		return NULL;
	}
	if (model_id_ok(id) < 0) {
		hw_err_set(HW_EXIT_DATA, "catalog entry '%s': the id cannot "
		    "name a model directory ([a-z0-9._-])", id);
		return NULL;
	}
	p.repo = json_get_str(p.entry, "source_repository");
	if (!(p.info = model_hub_info(h, p.repo, json_get_str(p.entry,
	    "source_revision"), a)) || pinned(&p) < 0)
		return NULL;
	p.sib = json_get(p.info, "siblings");
	if (model_screen(p.repo, p.info, p.sib) < 0)
		return NULL;
	for (size_t i = 0; i < p.sib->n; i++) {
		int64_t sz;

		if (model_sibling(p.repo, p.sib->u.a[i], &sz) < 0)
			return NULL;
	}
	p.plan = json_obj(a);
	p.cand = json_obj(a);
	files = json_new(a, J_ARRAY);
	plan_head(&p);
	json_add(a, p.cand, "model_id", json_str(a, id));
	rc = snap ? snapshot(&p, catalog, files) : artifact(&p, files);
	if (rc < 0)
		return NULL;
	if (!snap)
		json_add(a, p.plan, "model_type", json_new(a, J_NULL));
	keep(&p, "tool_call_parser");
	keep(&p, "download_policy");
	keep(&p, "qualification");
	keep(&p, "validated_platforms");
	keep(&p, "tensor_parallel_size");
	keep(&p, "minimum_gpu_memory_bytes");
	json_add(a, p.cand, "files", files);
	cands = json_new(a, J_ARRAY);
	json_push(a, cands, p.cand);
	json_add(a, p.plan, "tool_call_parser", json_get(p.entry,
	    "tool_call_parser") ? json_get(p.entry, "tool_call_parser") :
	    json_new(a, J_NULL));
	json_add(a, p.plan, "candidates", cands);
	json_add(a, p.plan, "selected", json_str(a, id));
	return p.plan;
}
