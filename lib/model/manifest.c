/* manifest.c - the bundle manifest: canonical bytes and strict checks */
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

/* ---- canonical JSON: sorted keys, compact, ASCII with \uXXXX ---- */

static void
canon_str(struct buf *b, const char *s, size_t n)
{
	size_t i = 0;

	buf_addc(b, '"');
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp;
		int k;

		if (c >= 0x80) {
			k = utf8_decode(s + i, n - i, &cp);
			if (k <= 0)
				k = 1, cp = 0xfffd;
			i += (size_t)k;
			if (cp >= 0x10000) {
				cp -= 0x10000;
				buf_printf(b, "\\u%04x\\u%04x",
				    0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
			} else {
				buf_printf(b, "\\u%04x", cp);
			}
			continue;
		}
		i++;
		if (c == '"' || c == '\\')
			buf_addc(b, '\\'), buf_addc(b, (char)c);
		else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\r')
			buf_adds(b, "\\r");
		else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c == '\b')
			buf_adds(b, "\\b");
		else if (c == '\f')
			buf_adds(b, "\\f");
		else if (c < 0x20)
			buf_printf(b, "\\u%04x", c);
		else
			buf_addc(b, (char)c);
	}
	buf_addc(b, '"');
}

static int
keycmp(const void *x, const void *y)
{
	const struct jmember *a = *(const struct jmember *const *)x;
	const struct jmember *b = *(const struct jmember *const *)y;
	size_t n = a->kn < b->kn ? a->kn : b->kn;
	int c = memcmp(a->k, b->k, n);

	return c ? c : (a->kn > b->kn) - (a->kn < b->kn);
}

void
bundle_canon(struct buf *b, const struct jval *v)
{
	const struct jmember **m;
	size_t i;

	switch (v->t) {
	case J_NULL: buf_adds(b, "null"); break;
	case J_TRUE: buf_adds(b, "true"); break;
	case J_FALSE: buf_adds(b, "false"); break;
	case J_INT: buf_add(b, v->u.s, v->n); break;
	case J_FLOAT: json_fmt_double(b, v->u.d); break;
	case J_STRING: canon_str(b, v->u.s, v->n); break;
	case J_ARRAY:
		buf_addc(b, '[');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_addc(b, ',');
			bundle_canon(b, v->u.a[i]);
		}
		buf_addc(b, ']');
		break;
	case J_OBJECT:
		m = xmalloc((v->n ? v->n : 1) * sizeof *m);
		for (i = 0; i < v->n; i++)
			m[i] = &v->u.m[i];
		qsort(m, v->n, sizeof *m, keycmp);
		buf_addc(b, '{');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_addc(b, ',');
			canon_str(b, m[i]->k, m[i]->kn);
			buf_addc(b, ':');
			bundle_canon(b, m[i]->v);
		}
		buf_addc(b, '}');
		free(m);
		break;
	}
}

/* ---- strict checks ---- */

enum { S = 1, I = 2, N = 4, A = 8, O = 16 };

static const struct {
	const char *k;
	int types;
} model_keys[] = {
	{ "model_id", S }, { "label", S }, { "purpose", S }, { "runtime", S },
	{ "source_repository", S }, { "source_revision", S },
	{ "source_path", S | N }, { "artifact_sha256", S | N },
	{ "size_bytes", I }, { "minimum_free_bytes", I },
	{ "license_posture", S }, { "license_id", S | N },
	{ "catalog_source", S }, { "model_type", S | N },
	{ "precision", S | N }, { "tier", S | N },
	{ "context_window", I }, { "maximum_context_window", I | N },
	{ "minimum_resource_envelope", O | N },
	{ "recommended_resource_envelope", O | N },
	{ "minimum_gpu_count", I | N }, { "minimum_gpu_memory_bytes", I | N },
	{ "recommended_ram_bytes", I | N },
	{ "recommended_disk_bytes", I | N },
	{ "recommended_cpu_count", I | N }, { "tool_call_parser", S | N },
	{ "tensor_parallel_size", I | N }, { "startup_seconds_min", I | N },
	{ "startup_seconds_max", I | N }, { "download_policy", S | N },
	{ "allow_patterns", A | N }, { "ignore_patterns", A | N },
	{ "qualification", S }, { "validated_platforms", A },
	{ "qualification_test", S | N }, { "qualification_date", S | N },
	{ "qualification_evidence", S | N },
};
#define NKEYS (sizeof model_keys / sizeof model_keys[0])

static int
mbad(const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid bundle manifest: %s", why);
}

static int
type_ok(const struct jval *v, int types)
{
	size_t i;

	if (v->t == J_NULL)
		return types & N;
	if (v->t == J_STRING)
		return types & S;
	if (v->t == J_INT)
		return (types & I) && v->u.s[0] != '-';
	if (v->t == J_OBJECT)
		return types & O;
	if (v->t != J_ARRAY || !(types & A))
		return 0;
	for (i = 0; i < v->n; i++)
		if (v->u.a[i]->t != J_STRING)
			return 0;
	return 1;
}

static int
check_model(const struct jval *m)
{
	const char *id = json_get_str(m, "model_id"), *rt;
	size_t i;

	if (!m || m->t != J_OBJECT || m->n != NKEYS)
		return mbad("model must have exactly its 37 keys");
	for (i = 0; i < NKEYS; i++) {
		const struct jval *v = json_get(m, model_keys[i].k);

		if (!v)
			return hw_err_set(HW_EXIT_DATA, "invalid bundle "
			    "manifest: model.%s is missing", model_keys[i].k);
		if (!type_ok(v, model_keys[i].types))
			return hw_err_set(HW_EXIT_DATA, "invalid bundle "
			    "manifest: model.%s has the wrong type",
			    model_keys[i].k);
	}
	if (model_id_ok(id) < 0)
		return mbad("model.model_id is not a safe model id");
	rt = json_get_str(m, "runtime");
	if (strcmp(rt, "llama-cpp") && strcmp(rt, "vllm"))
		return mbad("model.runtime is neither llama-cpp nor vllm");
	if (model_repo_ok(json_get_str(m, "source_repository")) < 0)
		return mbad("model.source_repository is not OWNER/NAME");
	return 0;
}

static int
check_files(const struct jval *files, int64_t *total)
{
	struct smap seen;
	size_t i;
	int rc = 0;

	if (!files || files->t != J_ARRAY || files->n == 0 ||
	    files->n > MODEL_FILES_MAX)
		return mbad("files is not a list of 1 to 100000 entries");
	smap_init(&seen);
	*total = 0;
	for (i = 0; rc == 0 && i < files->n; i++) {
		const struct jval *f = files->u.a[i];
		static const char *const keys[] = { "path", "size_bytes",
			"sha256", NULL };
		const char *p = json_get_str(f, "path");
		int64_t sz;

		if (f->t != J_OBJECT || json_keys_exact(f, keys) || !p ||
		    json_get_int(f, "size_bytes", &sz) < 0 || sz < 0 ||
		    model_hex_ok(json_get_str(f, "sha256"), SHA256_HEX) < 0) {
			rc = mbad("a file entry is not {path,size_bytes,sha256}");
			break;
		}
		if (model_path_ok(p) < 0) {
			rc = hw_err_set(HW_EXIT_DATA, "invalid bundle manifest: "
			    "unsafe path '%s'", p);
			break;
		}
		if (smap_get(&seen, p, strlen(p))) {
			rc = hw_err_set(HW_EXIT_DATA, "invalid bundle manifest: "
			    "duplicate path '%s'", p);
			break;
		}
		smap_put(&seen, p, strlen(p), (void *)p);
		*total += sz;
	}
	smap_release(&seen);
	return rc;
}

static int
has_file(const struct jval *files, const char *name, int suffix)
{
	size_t i, n = strlen(name);

	for (i = 0; i < files->n; i++) {
		const char *p = json_get_str(files->u.a[i], "path");
		size_t pn = strlen(p);

		if (suffix ? pn >= n && !strcmp(p + pn - n, name) :
		    !strcmp(p, name))
			return 1;
	}
	return 0;
}

static int
cross(const struct jval *man, const struct jval *m, const struct jval *files)
{
	const char *prof = json_get_str(man, "runtime_profile");
	const char *rt = json_get_str(m, "runtime");
	const struct jval *f0 = files->u.a[0];
	int64_t size, fsize;

	if (!prof || (strcmp(prof, "llama-cpp-cpu") &&
	    strcmp(prof, "vllm-cuda")))
		return mbad("runtime_profile is neither llama-cpp-cpu nor "
		    "vllm-cuda");
	if (strncmp(prof, rt, strlen(rt)))
		return mbad("runtime_profile does not match model.runtime");
	json_get_int(m, "size_bytes", &size);
	if (!strcmp(rt, "llama-cpp")) {
		json_get_int(f0, "size_bytes", &fsize);
		if (files->n != 1 || !json_equal(json_get(f0, "path"),
		    json_get(m, "source_path")) || fsize != size ||
		    !json_equal(json_get(f0, "sha256"),
		    json_get(m, "artifact_sha256")))
			return mbad("a GGUF bundle holds exactly its "
			    "source_path, with the model's size and sha256");
		if (json_get(m, "tool_call_parser")->t != J_NULL ||
		    json_get(m, "minimum_gpu_count")->t != J_NULL ||
		    json_get(m, "tensor_parallel_size")->t != J_NULL)
			return mbad("a GGUF bundle has GPU or vLLM fields");
		return 0;
	}
	if (!has_file(files, "config.json", 0) ||
	    !has_file(files, "SHA256SUMS", 0) ||
	    !has_file(files, ".safetensors", 1))
		return mbad("a vLLM bundle needs config.json, SHA256SUMS and "
		    "a *.safetensors file");
	if (json_get(m, "source_path")->t != J_NULL ||
	    json_get(m, "artifact_sha256")->t != J_NULL)
		return mbad("a vLLM bundle has a source_path or "
		    "artifact_sha256");
	if (json_get(m, "tool_call_parser")->t != J_STRING ||
	    json_get(m, "download_policy")->t != J_STRING)
		return mbad("a vLLM bundle needs a tool-call parser and a "
		    "download policy");
	return 0;
}

int
manifest_check(const struct jval *man)
{
	static const char *const top[] = { "schema_version", "runtime_profile",
		"model", "files", "total_size_bytes", NULL };
	const struct jval *m, *files;
	int64_t total, sum = 0;

	if (!man || man->t != J_OBJECT || json_keys_exact(man, top))
		return mbad("keys other than schema_version, runtime_profile, "
		    "model, files, total_size_bytes");
	if (!json_is_str(json_get(man, "schema_version"), BUNDLE_SCHEMA))
		return mbad("schema_version is not " BUNDLE_SCHEMA);
	m = json_get(man, "model");
	files = json_get(man, "files");
	if (check_model(m) < 0 || check_files(files, &sum) < 0)
		return -1;
	if (json_get_int(man, "total_size_bytes", &total) < 0 || total != sum)
		return mbad("total_size_bytes is not the sum of the files");
	return cross(man, m, files);
}

int
model_id_ok(const char *id)
{
	size_t i, n = id ? strlen(id) : 0;

	if (n == 0 || n > 128 || id[0] == '-' || id[0] == '.')
		return -1;
	for (i = 0; i < n; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789-._", id[i]))
			return -1;
	return strstr(id, "..") ? -1 : 0;
}
