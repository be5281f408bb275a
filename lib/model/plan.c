/* plan.c - a hub's model info turned into a pinned plan, and plans checked */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/model.h"

#define GIB (1024LL * 1024 * 1024)

static const char *const allow_pat[] = { "*.json", "*.jinja", "*.model",
	"*.safetensors", "*.tiktoken", "LICENSE*", "NOTICE*", "README*", NULL };
static const char *const ignore_pat[] = { "*.bin", "*.py", ".git/*",
	"metal/*", "original/*", NULL };
static const char *const markers[] = { "q4_k_m", "q5_k_m", "q4_k_s",
	"q5_k_s", "q8_0", NULL };

/* quote appends s percent-encoded but RFC 3986's unreserved (and keep) */
static void
quote(struct buf *b, const char *s, int keep)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || strchr("-._~", c) || c == keep)
			buf_addc(b, (char)c);
		else
			buf_printf(b, "%%%02X", c);
	}
}

static int
bad(const char *repo, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "hub answer about '%s': %s", repo,
	    why);
}

/* model_id: hf-<slug>-<12 hex of sha256(repo \n rev \n runtime \n path)> */
static char *
model_id(const char *repo, const char *rev, const char *rt, const char *path)
{
	const char *name = strrchr(repo, '/') + 1;
	char hex[SHA256_HEX + 1], slug[33];
	char *in = xasprintf("%s\n%s\n%s\n%s", repo, rev, rt, path);
	size_t i;

	sha256_hex(in, strlen(in), hex);
	free(in);
	for (i = 0; name[i] && i < 32; i++)
		slug[i] = isalnum((unsigned char)name[i]) ?
		    (char)tolower((unsigned char)name[i]) : '-';
	slug[i] = 0;
	return xasprintf("hf-%s-%.12s", slug, hex);
}

static int
matches(const char *name, const char *const *pats)
{
	for (; *pats; pats++)
		if (fnmatch(*pats, name, 0) == 0)
			return 1;
	return 0;
}

/* shard: "-NNNNN-of-NNNNN" just before ".gguf" */
static int
is_shard(const char *name)
{
	size_t n = strlen(name);
	const char *p;

	if (n < 5 + 15)
		return 0;
	p = name + n - 5 - 15;
	return p[0] == '-' && !strncmp(p + 6, "-of-", 4) &&
	    strspn(p + 1, "0123456789") == 5 &&
	    strspn(p + 10, "0123456789") == 5;
}

static int
has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcasecmp(s + n - m, suf);
}

struct jval *
model_precision(struct arena *a, const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	char tok[32];
	size_t n = 0;

	base = base ? base + 1 : path;
	for (p = base; *p; p++) {
		if ((*p != 'Q' && *p != 'q') || !isdigit((unsigned char)p[1]) ||
		    (p > base && isalnum((unsigned char)p[-1])))
			continue;
		while (n < sizeof tok - 1 && (isalnum((unsigned char)p[n]) ||
		    p[n] == '_'))
			tok[n] = (char)toupper((unsigned char)p[n]), n++;
		tok[n] = 0;
		return json_str(a, tok);
	}
	return json_new(a, J_NULL);
}

const char *
model_parser_for(const char *repo, const char *type)
{
	char low[256];
	size_t i;

	for (i = 0; repo[i] && i < sizeof low - 1; i++)
		low[i] = (char)tolower((unsigned char)repo[i]);
	low[i] = 0;
	if (strstr(low, "qwen3-coder"))
		return "qwen3_coder";
	if ((type && !strcmp(type, "gpt_oss")) ||
	    !strncmp(low, "openai/gpt-oss-", 15))
		return "openai";
	if (type && (!strcmp(type, "qwen2") || !strcmp(type, "qwen3") ||
	    !strcmp(type, "qwen3_moe") || !strcmp(type, "qwen3_next")))
		return "hermes";
	return NULL;
}

int64_t
model_config_context(const struct jval *cfg)
{
	static const char *const keys[] = { "max_position_embeddings",
		"model_max_length", "n_positions", "seq_length", NULL };
	int64_t v;
	int i;

	for (i = 0; cfg && cfg->t == J_OBJECT && keys[i]; i++)
		if (json_get_int(cfg, keys[i], &v) == 0 && v >= 2048)
			return v > MODEL_CONTEXT_MAX ? MODEL_CONTEXT_MAX : v;
	return 0;
}

/* context: the config's, else the GGUF metadata's context_length */
static int64_t
context_of(const struct jval *info)
{
	const struct jval *gguf = json_get(info, "gguf");
	int64_t v = model_config_context(json_get(info, "config"));

	if (v)
		return v;
	if (gguf && gguf->t == J_OBJECT &&
	    json_get_int(gguf, "context_length", &v) == 0 && v >= 2048)
		return v > MODEL_CONTEXT_MAX ? MODEL_CONTEXT_MAX : v;
	return 0;
}

int
model_sibling(const char *repo, const struct jval *s, int64_t *size)
{
	const struct jval *lfs = json_get(s, "lfs"), *sz = json_get(s, "size");
	const struct jval *blob = json_get(s, "blobId");
	const char *name = json_get_str(s, "rfilename"), *h;
	int64_t ls;

	if (s->t != J_OBJECT || !name)
		return bad(repo, "a sibling without rfilename");
	if (model_path_ok(name) < 0)
		return hw_err_set(HW_EXIT_DATA, "hub answer about '%s': "
		    "unsafe file name '%s'", repo, name);
	*size = -1;
	if (sz && (json_get_int(s, "size", size) < 0 || *size < 0))
		return bad(repo, "a sibling's size is not a count of bytes");
	if (blob && (blob->t != J_STRING || model_hex_ok(blob->u.s, 40) < 0))
		return bad(repo, "a sibling's blobId is not 40 hex digits");
	if (!lfs || lfs->t == J_NULL)
		return 0;
	h = json_get_str(lfs, "sha256");
	if (lfs->t != J_OBJECT || model_hex_ok(h, SHA256_HEX) < 0)
		return bad(repo, "a sibling's lfs.sha256 is not 64 hex digits");
	if (json_get_int(lfs, "size", &ls) < 0 || ls != *size)
		return bad(repo, "a sibling's lfs.size differs from its size");
	return 0;
}

static struct jval *
file_entry(struct arena *a, const struct jval *s)
{
	struct jval *f = json_obj(a), *lfs = json_get(s, "lfs");
	const char *h = lfs && lfs->t == J_OBJECT ?
	    json_get_str(lfs, "sha256") : NULL;
	const char *blob = json_get_str(s, "blobId");
	int64_t size = 0;

	json_get_int(s, "size", &size);
	json_add(a, f, "path", json_str(a, json_get_str(s, "rfilename")));
	json_add(a, f, "size_bytes", json_int(a, size));
	json_add(a, f, "sha256", h ? json_str(a, h) : json_new(a, J_NULL));
	/*
	 * For an LFS file, git (and so blobId) holds the LFS pointer, not
	 * the bytes: only lfs.sha256 describes them.
	 */
	json_add(a, f, "blob_id", blob && !h ? json_str(a, blob) :
	    json_new(a, J_NULL));
	return f;
}

struct ctx {
	struct arena *a;
	const char *repo, *rev, *type, *parser;
	const struct jval *info;
	struct jval *cands;
};

static struct jval *
cand_new(struct ctx *c, const char *kind, const char *rt, const char *path)
{
	struct jval *o = json_obj(c->a);
	char *id = model_id(c->repo, c->rev, rt, path);

	json_add(c->a, o, "model_id", json_str(c->a, id));
	free(id);
	json_add(c->a, o, "kind", json_str(c->a, kind));
	json_add(c->a, o, "runtime", json_str(c->a, rt));
	return o;
}

static void
gguf_cands(struct ctx *c, const struct jval *sib)
{
	size_t i;

	for (i = 0; i < sib->n; i++) {
		const struct jval *s = sib->u.a[i], *lfs = json_get(s, "lfs");
		const char *name = json_get_str(s, "rfilename");
		struct jval *o, *files;
		int64_t size = -1;

		json_get_int(s, "size", &size);
		if (!has_suffix(name, ".gguf") || size <= 0 ||
		    is_shard(name) || !lfs || lfs->t != J_OBJECT)
			continue;
		o = cand_new(c, "gguf", "llama-cpp", name);
		json_add(c->a, o, "source_path", json_str(c->a, name));
		json_add(c->a, o, "precision", model_precision(c->a, name));
		json_add(c->a, o, "size_bytes", json_int(c->a, size));
		json_add(c->a, o, "minimum_free_bytes",
		    json_int(c->a, size + (size + 1) / 2));
		json_add(c->a, o, "recommended_ram_bytes", json_int(c->a,
		    4 * size > 16 * GIB ? 4 * size : 16 * GIB));
		json_add(c->a, o, "recommended_disk_bytes",
		    json_int(c->a, 3 * size));
		files = json_new(c->a, J_ARRAY);
		json_push(c->a, files, file_entry(c->a, s));
		json_add(c->a, o, "files", files);
		json_push(c->a, c->cands, o);
	}
}

int
model_weights_name(const char *n)
{
	size_t len = strlen(n);

	if (has_suffix(n, ".index.json"))
		len -= 11;
	else if (!has_suffix(n, ".safetensors"))
		return 0;
	else
		len -= 12;
	if (len == 5)
		return !strncmp(n, "model", 5);
	return len == 5 + 15 && !strncmp(n, "model-", 6) &&
	    strspn(n + 6, "0123456789") == 5 && !strncmp(n + 11, "-of-", 4) &&
	    strspn(n + 15, "0123456789") == 5;
}

static void
snapshot_cand(struct ctx *c, const struct jval *sib)
{
	const char *pipe = json_get_str(c->info, "pipeline_tag");
	struct jval *files, *o;
	int64_t size, total = 0, gpu;
	int cfg = 0, weights = 0;
	size_t i;

	if (!c->parser || (json_get(c->info, "pipeline_tag") && (!pipe ||
	    (strcmp(pipe, "text-generation") &&
	    strcmp(pipe, "conversational")))))
		return;
	files = json_new(c->a, J_ARRAY);
	for (i = 0; i < sib->n; i++) {
		const char *name = json_get_str(sib->u.a[i], "rfilename");

		if (json_get_int(sib->u.a[i], "size", &size) < 0)
			return;
		if (!matches(name, allow_pat) || matches(name, ignore_pat))
			continue;
		cfg |= !strcmp(name, "config.json");
		weights |= model_weights_name(name);
		total += size;
		json_push(c->a, files, file_entry(c->a, sib->u.a[i]));
	}
	if (!cfg || !weights)
		return;
	o = cand_new(c, "snapshot", "vllm", "");
	json_add(c->a, o, "tool_call_parser", json_str(c->a, c->parser));
	json_add(c->a, o, "download_policy",
	    json_str(c->a, "transformers-safetensors"));
	json_add(c->a, o, "size_bytes", json_int(c->a, total));
	json_add(c->a, o, "minimum_free_bytes", json_int(c->a, total));
	gpu = total + total / 4;
	json_add(c->a, o, "minimum_gpu_memory_bytes", json_int(c->a,
	    gpu > 16000000000LL ? gpu : 16000000000LL));
	json_add(c->a, o, "recommended_ram_bytes", json_int(c->a,
	    2 * total > 32 * GIB ? 2 * total : 32 * GIB));
	json_add(c->a, o, "tensor_parallel_size", json_int(c->a, 1));
	json_add(c->a, o, "files", files);
	json_push(c->a, c->cands, o);
}

/* select: the snapshot under vLLM, else the only GGUF, else a marker */
static const char *
select_cand(const struct jval *cands, enum model_runtime rt)
{
	const char *one = NULL;
	size_t i, ggufs = 0;
	int m;

	for (i = 0; i < cands->n; i++) {
		const struct jval *o = cands->u.a[i];

		if (json_is_str(json_get(o, "kind"), "snapshot")) {
			if (rt == RUNTIME_VLLM)
				return json_get_str(o, "model_id");
		} else {
			ggufs++;
			one = json_get_str(o, "model_id");
		}
	}
	if (ggufs == 1)
		return one;
	for (m = 0; markers[m]; m++) {
		size_t hits = 0;

		for (i = 0; i < cands->n; i++) {
			const char *p = json_get_str(cands->u.a[i],
			    "source_path");
			char low[MODEL_PATH_MAX + 1];
			size_t j;

			for (j = 0; p && p[j] && j < MODEL_PATH_MAX; j++)
				low[j] = (char)tolower((unsigned char)p[j]);
			low[j] = 0;
			if (p && strstr(low, markers[m]) && ++hits)
				one = json_get_str(cands->u.a[i], "model_id");
		}
		if (hits == 1)
			return one;
	}
	return NULL;
}

int
model_screen(const char *repo, const struct jval *info, const struct jval *sib)
{
	const struct jval *tags = json_get(info, "tags");
	const struct jval *cfg = json_get(info, "config");
	size_t i;

	if (tags && tags->t != J_ARRAY)
		return bad(repo, "tags is not an array");
	for (i = 0; tags && i < tags->n; i++)
		if (json_is_str(tags->u.a[i], "custom_code"))
			return hw_err_set(HW_EXIT_DATA, "refusing '%s': it "
			    "needs custom code (tag custom_code)", repo);
	if (cfg && cfg->t != J_OBJECT && cfg->t != J_NULL)
		return bad(repo, "config is not an object");
	if (cfg && cfg->t == J_OBJECT && json_get(cfg, "auto_map"))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it needs "
		    "custom code (config.auto_map)", repo);
	if (!sib || sib->t != J_ARRAY)
		return bad(repo, "siblings is not an array");
	if (sib->n == 0)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': the "
		    "repository has no files", repo);
	if (sib->n > MODEL_FILES_MAX)
		return bad(repo, "more than 100000 files");
	return 0;
}

struct jval *
model_hub_info(struct hub *h, const char *repo, const char *rev,
    struct arena *a)
{
	struct buf u;
	struct jval *v;

	buf_init(&u);
	buf_printf(&u, "%s/api/models/", h->endpoint);
	quote(&u, repo, '/');
	if (rev) {
		buf_adds(&u, "/revision/");
		quote(&u, rev, 0);
	}
	buf_adds(&u, "?blobs=true");
	v = hub_get_json(h, buf_cstr(&u), repo, a);
	buf_release(&u);
	return v;
}

struct jval *
model_inspect(struct hub *h, const char *repo, const char *rev,
    enum model_runtime rt, struct arena *a)
{
	struct ctx c = { .a = a, .repo = repo };
	const struct jval *sib, *cfg, *card;
	struct jval *info, *plan;
	const char *sha, *lic, *sel;
	int64_t ctx, sz;
	size_t i;

	if (model_repo_ok(repo) < 0) {
		hw_err_set(HW_EXIT_USAGE, "invalid repository '%s': expected "
		    "OWNER/NAME", repo);
		return NULL;
	}
	if (rev && (!*rev || strlen(rev) > 256 || !valid_utf8(rev,
	    strlen(rev)) || strpbrk(rev, "\n\r\t"))) {
		hw_err_set(HW_EXIT_USAGE, "invalid revision '%s'", rev);
		return NULL;
	}
	if (!(info = model_hub_info(h, repo, rev, a)))
		return NULL;
	sha = json_get_str(info, "sha");
	if (!sha || strlen(sha) < 40 || model_hex_ok(sha, strlen(sha)) < 0 ||
	    strlen(sha) > 64) {
		bad(repo, "sha is not a full commit");
		return NULL;
	}
	if (rev && strlen(rev) >= 40 && model_hex_ok(rev, strlen(rev)) == 0 &&
	    strcmp(rev, sha)) {
		hw_err_set(HW_EXIT_DATA, "hub answer about '%s': commit '%s', "
		    "not the requested '%s'", repo, sha, rev);
		return NULL;
	}
	sib = json_get(info, "siblings");
	if (model_screen(repo, info, sib) < 0)
		return NULL;
	for (i = 0; i < sib->n; i++)
		if (model_sibling(repo, sib->u.a[i], &sz) < 0)
			return NULL;
	if ((ctx = context_of(info)) < MODEL_CONTEXT_MIN) {
		hw_err_set(HW_EXIT_DATA, "refusing '%s': %s", repo, ctx ?
		    "its context window is under 18432 tokens" :
		    "no context window found");
		return NULL;
	}
	cfg = json_get(info, "config");
	c.type = cfg && cfg->t == J_OBJECT ? json_get_str(cfg, "model_type") :
	    NULL;
	c.parser = model_parser_for(repo, c.type);
	c.rev = sha, c.info = info;
	c.cands = json_new(a, J_ARRAY);
	card = json_get(info, "cardData");
	lic = card && card->t == J_OBJECT ? json_get_str(card, "license") :
	    NULL;
	snapshot_cand(&c, sib);
	gguf_cands(&c, sib);
	if (c.cands->n == 0) {
		hw_err_set(HW_EXIT_DATA, "refusing '%s': no GGUF file with a "
		    "published SHA-256 and no safetensors snapshot", repo);
		return NULL;
	}
	sel = select_cand(c.cands, rt);
	plan = json_obj(a);
	json_add(a, plan, "schema_version", json_str(a, MODEL_PLAN_SCHEMA));
	json_add(a, plan, "source_repository", json_str(a, repo));
	json_add(a, plan, "requested_revision", rev ? json_str(a, rev) :
	    json_new(a, J_NULL));
	json_add(a, plan, "source_revision", json_str(a, sha));
	json_add(a, plan, "license", json_str(a, lic ? lic : "Unspecified"));
	json_add(a, plan, "context_window", json_int(a, ctx));
	json_add(a, plan, "model_type", c.type ? json_str(a, c.type) :
	    json_new(a, J_NULL));
	json_add(a, plan, "tool_call_parser", c.parser ?
	    json_str(a, c.parser) : json_new(a, J_NULL));
	json_add(a, plan, "candidates", c.cands);
	json_add(a, plan, "selected", sel ? json_str(a, sel) :
	    json_new(a, J_NULL));
	return plan;
}

/* ---- plans read back ---- */

static int
plan_bad(const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid plan: %s", why);
}

static int
check_file(const struct jval *f, struct smap *seen, int64_t *total)
{
	const struct jval *h = json_get(f, "sha256"), *b = json_get(f,
	    "blob_id");
	const char *p = json_get_str(f, "path");
	int64_t sz;

	if (f->t != J_OBJECT || !p || model_path_ok(p) < 0)
		return plan_bad("a file path is missing or unsafe");
	if (smap_get(seen, p, strlen(p)))
		return plan_bad("a file is listed twice");
	smap_put(seen, p, strlen(p), (void *)p);
	if (json_get_int(f, "size_bytes", &sz) < 0 || sz < 0)
		return plan_bad("a file size is not a count of bytes");
	if (!h || (h->t != J_NULL && (h->t != J_STRING ||
	    model_hex_ok(h->u.s, SHA256_HEX) < 0)))
		return plan_bad("a file sha256 is not 64 hex digits or null");
	if (!b || (b->t != J_NULL && (b->t != J_STRING ||
	    model_hex_ok(b->u.s, 40) < 0)))
		return plan_bad("a file blob_id is not 40 hex digits or null");
	*total += sz;
	return 0;
}

static int
check_cand(const struct jval *plan, const struct jval *c)
{
	const char *repo = json_get_str(plan, "source_repository");
	const char *rev = json_get_str(plan, "source_revision");
	const char *kind = json_get_str(c, "kind");
	const char *id = json_get_str(c, "model_id");
	const struct jval *files = json_get(c, "files");
	const char *path = "";
	int64_t total = 0, size, minfree;
	struct smap seen;
	char *want;
	size_t i;
	int rc = 0, gguf;

	if (c->t != J_OBJECT || !kind || !id || (strcmp(kind, "gguf") &&
	    strcmp(kind, "snapshot")))
		return plan_bad("a candidate without model_id or kind");
	gguf = !strcmp(kind, "gguf");
	if (!files || files->t != J_ARRAY || files->n == 0 ||
	    files->n > MODEL_FILES_MAX || (gguf && files->n != 1))
		return plan_bad("a candidate's files are not a list");
	if (gguf && (!(path = json_get_str(c, "source_path")) ||
	    !json_is_str(json_get(files->u.a[0], "path"), path) ||
	    json_get(files->u.a[0], "sha256")->t != J_STRING))
		return plan_bad("a GGUF candidate's file differs from its "
		    "source_path or has no sha256");
	smap_init(&seen);
	for (i = 0; rc == 0 && i < files->n; i++)
		rc = check_file(files->u.a[i], &seen, &total);
	smap_release(&seen);
	if (rc < 0)
		return -1;
	if (json_get_int(c, "size_bytes", &size) < 0 || size != total ||
	    json_get_int(c, "minimum_free_bytes", &minfree) < 0 ||
	    minfree < size)
		return plan_bad("a candidate's sizes do not add up");
	want = model_id(repo, rev, gguf ? "llama-cpp" : "vllm", path);
	if (strcmp(want, id) || !json_is_str(json_get(c, "runtime"),
	    gguf ? "llama-cpp" : "vllm"))
		rc = plan_bad("a candidate's model_id is not its own");
	free(want);
	return rc;
}

const struct jval *
model_plan_pick(const struct jval *plan, const char *id)
{
	const struct jval *cands = json_get(plan, "candidates"), *hit = NULL;
	const char *repo = json_get_str(plan, "source_repository");
	const char *rev = json_get_str(plan, "source_revision");
	const char *sel = json_get_str(plan, "selected");
	size_t i;

	if (plan->t != J_OBJECT || !json_is_str(json_get(plan,
	    "schema_version"), MODEL_PLAN_SCHEMA))
		return plan_bad("not a " MODEL_PLAN_SCHEMA " object"), NULL;
	if (!repo || model_repo_ok(repo) < 0)
		return plan_bad("source_repository is not OWNER/NAME"), NULL;
	if (!rev || strlen(rev) < 40 || strlen(rev) > 64 ||
	    model_hex_ok(rev, strlen(rev)) < 0)
		return plan_bad("source_revision is not a full commit"), NULL;
	if (!cands || cands->t != J_ARRAY)
		return plan_bad("candidates is not a list"), NULL;
	if (!id && !(id = sel)) {
		hw_err_set(HW_EXIT_USAGE, "the plan selects no candidate: "
		    "name one with --model-id");
		return NULL;
	}
	for (i = 0; i < cands->n; i++) {
		if (check_cand(plan, cands->u.a[i]) < 0)
			return NULL;
		if (json_is_str(json_get(cands->u.a[i], "model_id"), id))
			hit = cands->u.a[i];
	}
	if (!hit)
		hw_err_set(HW_EXIT_NOINPUT, "no candidate '%s' in the plan",
		    id);
	return hit;
}
