/*
 * recommend.c - the catalog's artifacts and snapshots as one kind of
 * choice, and the snapshot recommended for this platform and its GPUs
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define GIB (INT64_C(1) << 30)

static int
tier_rank(const char *t)
{
	return !strcmp(t, "maximum") ? 3 : !strcmp(t, "powerful") ? 2 :
	    !strcmp(t, "standard") ? 1 : 0;
}

static const char *
max_tier(const char *platform)
{
	return !strcmp(platform, "terra") ? "maximum" :
	    !strcmp(platform, "carina") ? "powerful" : "standard";
}

/* precision: a Q<n>_... token of the file name (Q4_K_M), in a, or NULL */
static struct jval *
precision(struct arena *a, const char *path)
{
	const char *s = strrchr(path, '/'), *p;

	for (p = s ? s + 1 : path; *p; p++) {
		size_t n = 1;

		if ((p != (s ? s + 1 : path) && isalnum((unsigned char)p[-1])) ||
		    (*p != 'Q' && *p != 'q') || !isdigit((unsigned char)p[1]))
			continue;
		while (isdigit((unsigned char)p[n]))
			n++;
		while (p[n] == '_' && isalnum((unsigned char)p[n + 1])) {
			n++;
			while (isalnum((unsigned char)p[n]))
				n++;
		}
		if (p[n] != '.' && p[n] != '-' && p[n] != 0)
			continue;
		{
			char *up = arena_strndup(a, p, n);

			for (char *c = up; *c; c++)
				*c = (char)toupper((unsigned char)*c);
			return json_str(a, up);
		}
	}
	return json_new(a, J_NULL);
}

/* license_id: Apache-2.0, MIT, BSD-2-Clause or BSD-3-Clause in text */
static struct jval *
license_id(struct arena *a, const char *text)
{
	static const char *const ids[] = { "Apache-2.0", "MIT",
		"BSD-2-Clause", "BSD-3-Clause", NULL };

	for (size_t i = 0; ids[i]; i++) {
		size_t n = strlen(ids[i]);

		for (const char *p = text; (p = strstr(p, ids[i])); p++)
			if ((p == text || !isalnum((unsigned char)p[-1])) &&
			    !isalnum((unsigned char)p[n]))
				return json_str(a, ids[i]);
	}
	return json_new(a, J_NULL);
}

static struct jval *
or_null(struct arena *a, const struct jval *t, const char *k)
{
	struct jval *v = json_get(t, k);

	return v ? v : json_new(a, J_NULL);
}

static const char *const common[] = { "purpose", "source_repository",
	"source_revision", "license_posture", "context_window",
	"minimum_resource_envelope", "recommended_resource_envelope",
	"qualification_test", "qualification_date", "qualification_evidence",
	NULL };

static void
qual(struct arena *a, struct jval *o, const struct jval *t)
{
	const struct jval *pl = json_get(t, "validated_platforms");

	json_add(a, o, "qualification", json_get(t, "qualification") ?
	    json_get(t, "qualification") : json_str(a, "unvalidated"));
	json_add(a, o, "validated_platforms", pl ? json_copy(a, pl) :
	    json_new(a, J_ARRAY));
	json_add(a, o, "recommended", json_bool(a, json_get(t, "recommended")
	    && json_get(t, "recommended")->t == J_TRUE));
}

/* gguf: a catalog model's artifact as a choice */
static struct jval *
gguf(struct arena *a, const struct jval *model)
{
	const struct jval *m = json_get(model, "artifact");
	struct jval *o = json_obj(a);
	int64_t size = 0, minfree = 0;
	static const char *const nulls[] = { "maximum_context_window",
		"minimum_gpu_count", "minimum_gpu_memory_bytes",
		"recommended_cpu_count", "tool_call_parser",
		"tensor_parallel_size", "startup_seconds_min",
		"startup_seconds_max", "download_policy", "model_type", NULL };

	json_get_int(m, "artifact_size_bytes", &size);
	json_get_int(m, "minimum_free_bytes", &minfree);
	json_add(a, o, "model_id", json_get(m, "artifact_id"));
	json_add(a, o, "label", json_get(m, "model_alias"));
	json_add(a, o, "runtime", json_str(a, "llama-cpp"));
	json_add(a, o, "source_path", json_get(m, "source_path"));
	json_add(a, o, "artifact_sha256", json_get(m, "artifact_sha256"));
	json_add(a, o, "size_bytes", json_int(a, size));
	json_add(a, o, "minimum_free_bytes", json_int(a, minfree));
	json_add(a, o, "license_id", license_id(a, json_get_str(m,
	    "license_posture")));
	json_add(a, o, "catalog_source", json_str(a, "catalog"));
	json_add(a, o, "precision", precision(a, json_get_str(m,
	    "source_path")));
	json_add(a, o, "tier", json_str(a, "standard"));
	json_add(a, o, "recommended_ram_bytes", json_int(a, size * 4 > 16 *
	    GIB ? size * 4 : 16 * GIB));
	json_add(a, o, "recommended_disk_bytes", json_int(a, size * 3 >
	    minfree ? size * 3 : minfree));
	for (size_t i = 0; common[i]; i++)
		json_add(a, o, common[i], or_null(a, m, common[i]));
	for (size_t i = 0; nulls[i]; i++)
		json_add(a, o, nulls[i], json_new(a, J_NULL));
	json_add(a, o, "allow_patterns", json_new(a, J_ARRAY));
	json_add(a, o, "ignore_patterns", json_new(a, J_ARRAY));
	qual(a, o, m);
	return o;
}

static const struct jval *
policy_of(const struct jval *cat, const char *id)
{
	const struct jval *l = json_get(cat, "download_policies");

	for (size_t i = 0; l && i < l->n; i++)
		if (json_is_str(json_get(l->u.a[i], "download_policy_id"), id))
			return l->u.a[i];
	return NULL;
}

/* snap: a snapshot as a choice */
static struct jval *
snap(struct arena *a, const struct jval *cat, const struct jval *s)
{
	static const char *const same[] = { "precision", "tier",
		"license_id", "maximum_context_window", "minimum_gpu_count",
		"minimum_gpu_memory_bytes", "recommended_cpu_count",
		"recommended_ram_bytes", "recommended_disk_bytes",
		"tool_call_parser", "tensor_parallel_size",
		"startup_seconds_min", "startup_seconds_max",
		"download_policy", "minimum_free_bytes", NULL };
	const struct jval *pol = policy_of(cat, json_get_str(s,
	    "download_policy"));
	struct jval *o = json_obj(a);

	json_add(a, o, "model_id", json_get(s, "snapshot_id"));
	json_add(a, o, "label", json_get(s, "model_alias"));
	json_add(a, o, "runtime", json_str(a, "vllm"));
	json_add(a, o, "source_path", json_new(a, J_NULL));
	json_add(a, o, "artifact_sha256", json_new(a, J_NULL));
	json_add(a, o, "size_bytes", json_get(s, "expected_size_bytes"));
	json_add(a, o, "catalog_source", json_str(a, "catalog"));
	json_add(a, o, "model_type", json_new(a, J_NULL));
	for (size_t i = 0; same[i]; i++)
		json_add(a, o, same[i], json_get(s, same[i]));
	for (size_t i = 0; common[i]; i++)
		json_add(a, o, common[i], or_null(a, s, common[i]));
	json_add(a, o, "allow_patterns", json_copy(a, json_get(pol,
	    "allow_patterns")));
	json_add(a, o, "ignore_patterns", json_get(pol, "ignore_patterns") ?
	    json_copy(a, json_get(pol, "ignore_patterns")) :
	    json_new(a, J_ARRAY));
	qual(a, o, s);
	return o;
}

static int
listed(const struct jval *l, const char *s)
{
	for (size_t i = 0; l && i < l->n; i++)
		if (json_is_str(l->u.a[i], s))
			return 1;
	return 0;
}

/*
 * why_not: NULL when snapshot choice c is a candidate in the envelope of
 * the GPUs of l, else the reason (in a)
 */
static const char *
why_not(struct arena *a, const struct jval *c, const char *platform,
    const struct gpu_list *l, int gpus)
{
	const char *tier = json_get_str(c, "tier"), *max = max_tier(platform);
	int64_t need = 0, mem = 0, tp = 0;
	size_t fit = 0;
	char msg[200];

	if (!json_get(c, "recommended") ||
	    json_get(c, "recommended")->t != J_TRUE)
		return "the catalog does not recommend it";
	if (!json_is_str(json_get(c, "qualification"), "qualified"))
		return "it is not qualified";
	if (!listed(json_get(c, "validated_platforms"), platform)) {
		snprintf(msg, sizeof msg, "it is not validated on %s",
		    platform);
		return arena_strndup(a, msg, strlen(msg));
	}
	if (tier_rank(tier) > tier_rank(max)) {
		snprintf(msg, sizeof msg, "its tier %s is above %s, the "
		    "highest on %s", tier, max, platform);
		return arena_strndup(a, msg, strlen(msg));
	}
	json_get_int(c, "minimum_gpu_count", &need);
	json_get_int(c, "minimum_gpu_memory_bytes", &mem);
	json_get_int(c, "tensor_parallel_size", &tp);
	for (size_t i = 0; i < l->n; i++)
		fit += l->v[i].memory_total >= mem;
	if ((int64_t)fit < need) {
		snprintf(msg, sizeof msg, "it needs %lld GPU(s) of at least "
		    "%lld bytes each; %zu present", (long long)need,
		    (long long)mem, fit);
		return arena_strndup(a, msg, strlen(msg));
	}
	if (gpus && tp != gpus) {
		snprintf(msg, sizeof msg, "its tensor parallel size %lld is "
		    "not the %d GPU(s) asked for", (long long)tp, gpus);
		return arena_strndup(a, msg, strlen(msg));
	}
	return NULL;
}

/* better: choice x (at position i) wins over y (at j) */
static int
better(const struct jval *x, size_t i, const struct jval *y, size_t j)
{
	int64_t tx = 0, ty = 0;
	int rx = tier_rank(json_get_str(x, "tier"));
	int ry = tier_rank(json_get_str(y, "tier"));

	if (rx != ry)
		return rx > ry;
	json_get_int(x, "tensor_parallel_size", &tx);
	json_get_int(y, "tensor_parallel_size", &ty);
	if (tx != ty)
		return tx > ty;
	return i < j;
}

static struct jval *
gpu_json(struct arena *a, const struct gpu *g)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "index", json_int(a, g->index));
	json_add(a, o, "name", json_str(a, g->name));
	json_add(a, o, "memory_total_bytes", json_int(a, g->memory_total));
	json_add(a, o, "memory_free_bytes", json_int(a, g->memory_free));
	json_add(a, o, "driver_version", json_str(a, g->driver));
	json_add(a, o, "compute_capability", json_str(a, g->compute_cap));
	return o;
}

struct jval *
model_recommend(const struct jval *cat, const char *platform,
    const struct gpu_list *l, int gpus, struct arena *a)
{
	struct jval *o = json_obj(a), *choices = json_new(a, J_ARRAY);
	struct jval *gl = json_new(a, J_ARRAY), *win = NULL;
	const struct jval *ms = json_get(cat, "models");
	const struct jval *ss = json_get(cat, "snapshots");
	size_t wpos = 0;

	for (size_t i = 0; i < l->n; i++)
		json_push(a, gl, gpu_json(a, &l->v[i]));
	for (size_t i = 0; ms && i < ms->n; i++) {
		struct jval *c = gguf(a, ms->u.a[i]);

		json_add(a, c, "candidate", json_bool(a, 0));
		json_add(a, c, "reason", json_str(a, "a GGUF artifact runs "
		    "on llama.cpp by choice: recommendations are among the "
		    "vLLM snapshots"));
		json_push(a, choices, c);
	}
	/* one capacity envelope: every GPU nvidia-smi lists */
	for (size_t i = 0; ss && i < ss->n; i++) {
		struct jval *c = snap(a, cat, ss->u.a[i]);
		const char *why = why_not(a, c, platform, l, gpus);

		json_add(a, c, "candidate", json_bool(a, !why));
		json_add(a, c, "reason", why ? json_str(a, why) :
		    json_new(a, J_NULL));
		json_push(a, choices, c);
		if (!why && (!win || better(c, i, win, wpos))) {
			win = c;
			wpos = i;
		}
	}
	json_add(a, o, "schema_version", json_str(a, RECOMMEND_SCHEMA));
	json_add(a, o, "platform_id", json_str(a, platform));
	json_add(a, o, "maximum_tier", json_str(a, max_tier(platform)));
	json_add(a, o, "requested_gpus", gpus ? json_int(a, gpus) :
	    json_new(a, J_NULL));
	json_add(a, o, "nvidia_smi", json_bool(a, !l->missing));
	json_add(a, o, "gpus", gl);
	json_add(a, o, "recommended", win ? json_copy(a, win) :
	    json_new(a, J_NULL));
	json_add(a, o, "choices", choices);
	return o;
}
