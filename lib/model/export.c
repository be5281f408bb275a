/* export.c - a verified model written as a deterministic bundle */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

#define BLOCK (1u << 20)
#define GIB (1024LL * 1024 * 1024)
#define DOS_EPOCH 315532800	/* 1980-01-01 00:00:00 UTC */

struct exp {
	const char *models, *id, *out;
	const volatile int *cancel;
	model_progress_fn *progress;
	void *progress_arg;
	struct arena *a;
	char *dir, *tmp, *lock;
	const struct jval *meta;	/* heartwood-model.json or the source */
	struct jval *files;
	int gguf;
	int64_t size;
	struct smap sums;	/* path -> SHA-256 of the verified SHA256SUMS */
	struct buf sumsb;	/* its text */
};

static struct jval *
jnull(struct arena *a)
{
	return json_new(a, J_NULL);
}

/* meta_get: a metadata value, or null */
static struct jval *
meta_get(struct exp *e, const char *k)
{
	struct jval *v = json_get(e->meta, k);

	return v ? v : jnull(e->a);
}

static struct jval *
license_id(struct arena *a, const char *posture)
{
	static const char *const ids[] = { "Apache-2.0", "MIT",
		"BSD-2-Clause", "BSD-3-Clause", NULL };
	int i;

	for (i = 0; posture && ids[i]; i++)
		if (strcasestr(posture, ids[i]))
			return json_str(a, ids[i]);
	return json_new(a, J_NULL);
}

static int64_t
max64(int64_t x, int64_t y)
{
	return x > y ? x : y;
}

static struct jval *
model_of(struct exp *e)
{
	struct arena *a = e->a;
	struct jval *m = json_obj(a);
	const char *repo = json_get_str(e->meta, "source_repository");
	const char *lic = json_get_str(e->meta, "license_posture");
	struct jval *ctx = json_get(e->meta, "context_window");

	if (!lic)
		lic = json_get_str(e->meta, "license");
	json_add(a, m, "model_id", json_str(a, e->id));
	json_add(a, m, "label", json_str(a, strrchr(repo, '/') + 1));
	json_add(a, m, "purpose", json_str(a, "coding-agent"));
	json_add(a, m, "runtime", json_str(a, e->gguf ? "llama-cpp" : "vllm"));
	json_add(a, m, "source_repository", json_str(a, repo));
	json_add(a, m, "source_revision", meta_get(e, "source_revision"));
	json_add(a, m, "source_path", e->gguf ? meta_get(e, "source_path") :
	    jnull(a));
	json_add(a, m, "artifact_sha256", e->gguf ?
	    json_get(e->files->u.a[0], "sha256") : jnull(a));
	json_add(a, m, "size_bytes", json_int(a, e->size));
	json_add(a, m, "minimum_free_bytes", json_int(a, e->gguf ?
	    e->size + (e->size + 1) / 2 : e->size));
	json_add(a, m, "license_posture", json_str(a, lic ? lic :
	    "Unspecified"));
	json_add(a, m, "license_id", license_id(a, lic));
	json_add(a, m, "catalog_source", json_str(a, "user-selected"));
	json_add(a, m, "model_type", meta_get(e, "model_type"));
	json_add(a, m, "precision", meta_get(e, "precision"));
	json_add(a, m, "tier", e->gguf ? jnull(a) : json_str(a, "standard"));
	json_add(a, m, "context_window", ctx ? ctx : json_int(a,
	    MODEL_CONTEXT_MIN));
	json_add(a, m, "maximum_context_window", jnull(a));
	json_add(a, m, "minimum_resource_envelope", jnull(a));
	json_add(a, m, "recommended_resource_envelope", jnull(a));
	json_add(a, m, "minimum_gpu_count", e->gguf ? jnull(a) :
	    json_int(a, 1));
	json_add(a, m, "minimum_gpu_memory_bytes", e->gguf ? jnull(a) :
	    json_int(a, max64(16000000000LL, e->size + e->size / 4)));
	json_add(a, m, "recommended_ram_bytes", json_int(a, e->gguf ?
	    max64(16 * GIB, 4 * e->size) : max64(32 * GIB, 2 * e->size)));
	json_add(a, m, "recommended_disk_bytes", json_int(a, 3 * e->size));
	json_add(a, m, "recommended_cpu_count", jnull(a));
	json_add(a, m, "tool_call_parser", e->gguf ? jnull(a) :
	    meta_get(e, "tool_call_parser"));
	json_add(a, m, "tensor_parallel_size", e->gguf ? jnull(a) :
	    json_int(a, 1));
	json_add(a, m, "startup_seconds_min", jnull(a));
	json_add(a, m, "startup_seconds_max", jnull(a));
	json_add(a, m, "download_policy", e->gguf ? jnull(a) :
	    json_get(e->meta, "download_policy") ?
	    json_get(e->meta, "download_policy") :
	    json_str(a, "local-import"));
	json_add(a, m, "allow_patterns", jnull(a));
	json_add(a, m, "ignore_patterns", jnull(a));
	json_add(a, m, "qualification", json_str(a, "unvalidated"));
	json_add(a, m, "validated_platforms", json_new(a, J_ARRAY));
	json_add(a, m, "qualification_test", jnull(a));
	json_add(a, m, "qualification_date", jnull(a));
	json_add(a, m, "qualification_evidence", jnull(a));
	return m;
}

static int
add_file(struct exp *e, const char *rel)
{
	char *p = path_join(e->dir, rel), hex[SHA256_HEX + 1];
	const char *known = smap_get(&e->sums, rel, strlen(rel));
	struct jval *f = json_obj(e->a);
	struct stat st;
	int64_t sz;
	int rc;

	/*
	 * a file the verify just read is not read again here: copy() hashes
	 * it as it goes into the bundle and refuses any change
	 */
	if (!known) {
		rc = model_file_sha256(p, hex, &sz);
	} else if ((rc = lstat(p, &st)) < 0) {
		hw_err_sys("cannot read '%s'", p);
	} else {
		memcpy(hex, known, SHA256_HEX + 1);
		sz = (int64_t)st.st_size;
	}
	free(p);
	if (rc < 0)
		return -1;
	json_add(e->a, f, "path", json_str(e->a, rel));
	json_add(e->a, f, "size_bytes", json_int(e->a, sz));
	json_add(e->a, f, "sha256", json_str(e->a, hex));
	json_push(e->a, e->files, f);
	e->size += sz;
	return 0;
}

/* manifest: what the verified model directory holds, described */
static struct jval *
manifest(struct exp *e)
{
	struct model_files l;
	struct jval *man = json_obj(e->a);
	char *p;
	size_t i;
	int rc = 0;

	p = path_join(e->dir, "heartwood-model.json");
	e->meta = read_json_file(p, 1u << 20, e->a);
	free(p);
	if (!e->meta) {
		p = path_join(e->dir, "HEARTWOOD-SOURCE.json");
		e->meta = read_json_file(p, 64u << 20, e->a);
		free(p);
	}
	if (!e->meta || model_repo_ok(json_get_str(e->meta,
	    "source_repository") ? json_get_str(e->meta,
	    "source_repository") : "") < 0)
		return hw_err_set(HW_EXIT_DATA, "'%s': no provenance to "
		    "export", e->dir), NULL;
	e->gguf = json_is_str(json_get(e->meta, "runtime"), "llama-cpp");
	e->files = json_new(e->a, J_ARRAY);
	if (e->gguf) {
		rc = add_file(e, json_get_str(e->meta, "source_path") ?
		    json_get_str(e->meta, "source_path") : "");
	} else {
		if (model_walk(e->dir, &l) < 0)
			return NULL;
		for (i = 0; rc == 0 && i < l.n; i++)
			rc = add_file(e, l.v[i]);
		model_files_release(&l);
	}
	if (rc < 0)
		return NULL;
	json_add(e->a, man, "schema_version", json_str(e->a, BUNDLE_SCHEMA));
	json_add(e->a, man, "runtime_profile", json_str(e->a, e->gguf ?
	    "llama-cpp-cpu" : "vllm-cuda"));
	json_add(e->a, man, "model", model_of(e));
	json_add(e->a, man, "files", e->files);
	json_add(e->a, man, "total_size_bytes", json_int(e->a, e->size));
	return manifest_check(man) < 0 ? NULL : man;
}

static int
arc_err(struct archive *ar, const char *what)
{
	return hw_err_set(HW_EXIT_IO, "cannot write bundle '%s': %s", what,
	    archive_error_string(ar) ? archive_error_string(ar) : "failed");
}

static int
header(struct archive *ar, const char *name, int64_t size, const char *out)
{
	struct archive_entry *en = archive_entry_new();
	int rc;

	archive_entry_set_pathname(en, name);
	archive_entry_set_size(en, size);
	archive_entry_set_filetype(en, AE_IFREG);
	archive_entry_set_perm(en, 0600);
	archive_entry_set_mtime(en, DOS_EPOCH, 0);
	archive_entry_set_uid(en, 0);
	archive_entry_set_gid(en, 0);
	rc = archive_write_header(ar, en) == ARCHIVE_OK ? 0 :
	    arc_err(ar, out);
	archive_entry_free(en);
	return rc;
}

/* copy: a file into the archive, hashed again; a change aborts */
static int
copy(struct exp *e, struct archive *ar, const struct jval *f, char *blk)
{
	const char *rel = json_get_str(f, "path");
	char *p = path_join(e->dir, rel), *name = xasprintf("model/%s", rel);
	char hex[SHA256_HEX + 1];
	unsigned char d[32];
	struct sha256 h;
	int64_t sz, n = 0;
	ssize_t r = 0;
	int fd, rc = -1;

	json_get_int(f, "size_bytes", &sz);
	sha256_init(&h);
	if ((fd = open(p, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		hw_err_sys("cannot open '%s'", p);
		goto out;
	}
	if (header(ar, name, sz, e->out) < 0)
		goto out;
	while (!*e->cancel && n < sz && (r = read(fd, blk, (size_t)(sz - n <
	    BLOCK ? sz - n : BLOCK))) > 0) {
		if (archive_write_data(ar, blk, (size_t)r) != r) {
			arc_err(ar, e->out);
			goto out;
		}
		sha256_update(&h, blk, (size_t)r);
		n += r;
		if (e->progress)
			e->progress(e->progress_arg, rel, n, sz, 0);
	}
	if (*e->cancel) {
		hw_err_set(HW_EXIT_INTR, "export of '%s' interrupted", e->id);
		goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, hex);
	if (r < 0 || n != sz || strcmp(hex, json_get_str(f, "sha256")) ||
	    read(fd, blk, 1) != 0) {
		hw_err_set(HW_EXIT_DATA, "'%s': changed during the export", p);
		goto out;
	}
	if (e->progress)
		e->progress(e->progress_arg, rel, n, sz, 1);
	rc = 0;
out:
	sha256_release(&h);
	if (fd >= 0)
		close(fd);
	free(p), free(name);
	return rc;
}

static int
write_zip(struct exp *e, const struct buf *mb, int fd)
{
	struct archive *ar = archive_write_new();
	char *blk = NULL;
	size_t i;
	int rc = -1;

	if (archive_write_set_format_zip(ar) != ARCHIVE_OK ||
	    archive_write_set_options(ar, "zip:compression=store") !=
	    ARCHIVE_OK || archive_write_set_bytes_in_last_block(ar, 1) !=
	    ARCHIVE_OK || archive_write_open_fd(ar, fd) != ARCHIVE_OK) {
		arc_err(ar, e->out);
		goto out;
	}
	if (header(ar, BUNDLE_MANIFEST, (int64_t)mb->len, e->out) < 0 ||
	    archive_write_data(ar, mb->p, mb->len) != (la_ssize_t)mb->len)
		goto out;
	blk = xmalloc(BLOCK);
	for (i = 0; i < e->files->n; i++)
		if (copy(e, ar, e->files->u.a[i], blk) < 0)
			goto out;
	if (archive_write_close(ar) != ARCHIVE_OK) {
		arc_err(ar, e->out);
		goto out;
	}
	rc = 0;
out:
	free(blk);
	archive_write_free(ar);
	return rc;
}

static struct jval *
publish(struct exp *e, const struct buf *mb)
{
	char hex[SHA256_HEX + 1];
	struct jval *r;
	int fd;

	fd = open(e->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return hw_err_sys("cannot create '%s'", e->tmp), NULL;
	if (write_zip(e, mb, fd) < 0 || (fsync(fd) < 0 &&
	    hw_err_sys("cannot sync '%s'", e->tmp) < 0)) {
		close(fd);
		unlink(e->tmp);
		return NULL;
	}
	close(fd);
	if (link(e->tmp, e->out) < 0) {
		hw_err_set(errno == EEXIST ? HW_EXIT_FAIL : HW_EXIT_IO,
		    "cannot publish '%s': %s", e->out, strerror(errno));
		unlink(e->tmp);
		return NULL;
	}
	if (unlink(e->tmp) < 0 || fsync_parent(e->out) < 0)
		return hw_err_sys("cannot finish '%s'", e->out), NULL;
	sha256_hex(mb->p, mb->len, hex);
	r = json_obj(e->a);
	json_add(e->a, r, "bundle_path", json_str(e->a, e->out));
	json_add(e->a, r, "model_id", json_str(e->a, e->id));
	json_add(e->a, r, "manifest_sha256", json_str(e->a, hex));
	json_add(e->a, r, "file_count", json_int(e->a,
	    (int64_t)e->files->n));
	json_add(e->a, r, "total_size_bytes", json_int(e->a, e->size));
	return r;
}

struct jval *
bundle_export(const char *models, const char *id, const char *out,
    const volatile int *cancel, model_progress_fn *progress,
    void *progress_arg, struct arena *a)
{
	struct exp e = { .models = models, .id = id, .out = out,
		.cancel = cancel, .progress = progress,
		.progress_arg = progress_arg, .a = a };
	const char *slash = strrchr(out, '/');
	struct jval *man, *r = NULL;
	struct stat st;
	struct buf mb;
	char *odir;
	int lk = -1;

	buf_init(&mb);
	if (model_id_ok(id) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid model id '%s'", id),
		    NULL;
	if (lstat(out, &st) == 0 || errno != ENOENT)
		return hw_err_set(HW_EXIT_FAIL, "cannot export to '%s': it "
		    "exists", out), NULL;
	odir = slash ? xasprintf("%.*s", (int)(slash - out + 1), out) :
	    xstrdup("");
	e.tmp = xasprintf("%s.%s.heartwood-partial", odir, slash ? slash + 1 :
	    out);
	e.lock = xasprintf("%s.%s.heartwood-lock", odir, slash ? slash + 1 :
	    out);
	free(odir);
	e.dir = path_join(models, id);
	if (lstat(e.dir, &st) < 0) {
		hw_err_set(HW_EXIT_NOINPUT, "no model '%s' in '%s'", id,
		    models);
		goto out;
	}
	if (sums_verify(e.dir, NULL, NULL) < 0 ||
	    sums_read(e.dir, &e.sums, &e.sumsb) < 0 || !(man = manifest(&e)))
		goto out;
	bundle_canon(&mb, man);
	buf_addc(&mb, '\n');
	if (mb.len > BUNDLE_MANIFEST_MAX) {
		hw_err_set(HW_EXIT_DATA, "'%s': a manifest over 1 MiB", id);
		goto out;
	}
	if ((lk = lock_open(e.lock, 1)) < 0) {
		if (errno == EWOULDBLOCK)
			hw_err_set(HW_EXIT_BUSY, "'%s': another export to it "
			    "is running", out);
		goto out;
	}
	unlink(e.tmp);	/* a stale one of a killed run; we hold the lock */
	r = publish(&e, &mb);
out:
	if (lk >= 0) {
		lock_close(lk);
		unlink(e.lock);
	}
	buf_release(&mb);
	smap_release(&e.sums);
	buf_release(&e.sumsb);
	free(e.tmp), free(e.lock), free(e.dir);
	return r;
}
