/* installed.c - what an installed model is, read from its provenance */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "model/model.h"

static const char *
str_or(const struct jval *m, const char *k, const char *dflt)
{
	const char *s = json_get_str(m, k);

	return s ? s : dflt;
}

/* meta: heartwood-model.json (imports), else HEARTWOOD-SOURCE.json */
static const struct jval *
meta(const char *dir, struct arena *a)
{
	const struct jval *m;
	char *p = path_join(dir, "heartwood-model.json");
	struct stat st;

	if (lstat(p, &st) < 0) {
		free(p);
		p = path_join(dir, "HEARTWOOD-SOURCE.json");
	}
	m = read_json_file(p, 64u << 20, a);
	if (!m || m->t != J_OBJECT)
		hw_err_set(HW_EXIT_NOINPUT, "model '%s': no provenance "
		    "(heartwood-model.json or HEARTWOOD-SOURCE.json)", dir);
	free(p);
	return m && m->t == J_OBJECT ? m : NULL;
}

/* artifact: the GGUF file's size; it must be a listed regular file */
static int
artifact(struct model_info *mi)
{
	char *p;
	struct stat st;
	int rc = 0;

	if (!mi->artifact || model_path_ok(mi->artifact) < 0)
		return hw_err_set(HW_EXIT_NOINPUT, "model '%s': no valid "
		    "source_path for its GGUF file", mi->id);
	p = path_join(mi->dir, mi->artifact);
	if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode))
		rc = hw_err_set(HW_EXIT_NOINPUT, "model '%s': its GGUF file "
		    "'%s' is missing", mi->id, mi->artifact);
	else
		mi->size = st.st_size;
	free(p);
	return rc;
}

/* snapshot_size: size_bytes, else the sum of files[], else what verified */
static int64_t
snapshot_size(const struct jval *m, int64_t verified)
{
	const struct jval *f = json_get(m, "files");
	int64_t sum = 0, v;
	size_t i;

	if (json_get_int(m, "size_bytes", &v) == 0 && v > 0)
		return v;
	for (i = 0; f && f->t == J_ARRAY && i < f->n; i++)
		if (json_get_int(f->u.a[i], "size_bytes", &v) == 0 && v > 0)
			sum += v;
	return sum ? sum : verified;
}

int
model_info_load(const char *models, const char *id, int verify,
    struct model_info *mi, struct arena *a)
{
	const struct jval *m;
	struct stat st;
	int64_t bytes = 0;

	memset(mi, 0, sizeof *mi);
	if (model_id_ok(id) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid model id '%s'", id);
	mi->id = arena_strndup(a, id, strlen(id));
	mi->dir = path_join(models, id);
	if (lstat(mi->dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		hw_err_set(HW_EXIT_NOINPUT, "no model '%s' in '%s'", id,
		    models);
		goto fail;
	}
	if (verify) {
		/* beside the model, as its lock is: .<id>.verified.json */
		char *cache = xasprintf("%s/.%s.verified.json", models, id);
		int rc = sums_verify_cached(mi->dir, cache, NULL, &bytes);

		free(cache);
		if (rc < 0) {
			hw_err_set(HW_EXIT_NOINPUT, "model '%s' does not "
			    "verify: %s", id, hw_err_msg());
			goto fail;
		}
		mi->verified = 1;
	}
	if (!(m = meta(mi->dir, a)))
		goto fail;
	mi->meta = m;
	mi->runtime = str_or(m, "runtime", "");
	if (strcmp(mi->runtime, "llama-cpp") && strcmp(mi->runtime, "vllm")) {
		hw_err_set(HW_EXIT_NOINPUT, "model '%s': unknown runtime '%s'",
		    id, mi->runtime);
		goto fail;
	}
	mi->gguf = !strcmp(mi->runtime, "llama-cpp");
	mi->artifact = json_get_str(m, "source_path");
	mi->context = model_int_or(m, "context_window", MODEL_CONTEXT_MAX);
	mi->parser = json_get_str(m, "tool_call_parser");
	mi->precision = json_get_str(m, "precision");
	mi->model_type = json_get_str(m, "model_type");
	mi->qualification = str_or(m, "qualification", "unvalidated");
	mi->platforms = json_get(m, "validated_platforms");
	mi->tp = model_int_or(m, "tensor_parallel_size", 1);
	mi->min_gpu_mem = model_int_or(m, "minimum_gpu_memory_bytes", 0);
	if (mi->tp < 1 || mi->tp > 64 || mi->context < 1 ||
	    mi->context > MODEL_CONTEXT_MAX) {
		hw_err_set(HW_EXIT_NOINPUT, "model '%s': a tensor parallel "
		    "size or context window out of range", id);
		goto fail;
	}
	if (mi->gguf ? artifact(mi) < 0 : 0)
		goto fail;
	if (!mi->gguf)
		mi->size = snapshot_size(m, bytes);
	return 0;
fail:
	model_info_release(mi);
	return -1;
}

void
model_info_release(struct model_info *mi)
{
	free(mi->dir);
	mi->dir = NULL;
}

int
model_info_validated_on(const struct model_info *mi, const char *platform)
{
	size_t i;

	if (strcmp(mi->qualification, "qualified") || !mi->platforms ||
	    mi->platforms->t != J_ARRAY || !platform)
		return 0;
	for (i = 0; i < mi->platforms->n; i++)
		if (json_is_str(mi->platforms->u.a[i], platform))
			return 1;
	return 0;
}
