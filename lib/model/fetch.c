/* fetch.c - a plan's candidate downloaded, verified and published */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/model.h"

#define RECORD_SCHEMA "heartwood.model-download.v1"
#define SOURCE_SCHEMA "heartwood.model-snapshot-source.v2"

struct dl {
	struct hub *h;
	struct arena *a;
	const struct jval *plan, *cand, *files;
	const char *id, *models;
	char *final, *partial, *record, *lock;
};

/* record: the resume record's canonical bytes */
static void
record_bytes(struct dl *d, struct buf *b)
{
	struct jval *r = json_obj(d->a);

	json_add(d->a, r, "schema_version", json_str(d->a, RECORD_SCHEMA));
	json_add(d->a, r, "model_id", json_str(d->a, d->id));
	json_add(d->a, r, "kind", json_get(d->cand, "kind"));
	json_add(d->a, r, "source_repository",
	    json_get(d->plan, "source_repository"));
	json_add(d->a, r, "source_revision",
	    json_get(d->plan, "source_revision"));
	json_add(d->a, r, "files", json_copy(d->a, d->files));
	json_canon(b, r);
	buf_addc(b, '\n');
}

/* write_excl: a new 0600 file holding b, synced, refusing one there */
static int
write_excl(const char *path, const struct buf *b)
{
	int fd;

	fault_point("model-record");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (fd < 0)
		return hw_err_sys("cannot create '%s'", path);
	if (write_all(fd, b->p, b->len, path) < 0 || fsync(fd) < 0) {
		if (errno)
			hw_err_sys("cannot write '%s'", path);
		close(fd);
		return -1;
	}
	close(fd);
	return fsync_parent(path);
}

/* resume: keep the staging directory only when the record matches */
static int
resume(struct dl *d)
{
	struct buf want, have;
	int rc = -1, keep;

	buf_init(&want), buf_init(&have);
	record_bytes(d, &want);
	keep = read_file(d->record, 64u << 20, &have) == 0 &&
	    have.len == want.len && !memcmp(have.p, want.p, want.len);
	if (!keep) {
		if (rm_tree(d->partial) < 0 || rm_tree(d->record) < 0 ||
		    write_excl(d->record, &want) < 0)
			goto out;
	}
	if (mkdir(d->partial, 0700) < 0 && errno != EEXIST) {
		hw_err_sys("cannot create '%s'", d->partial);
		goto out;
	}
	rc = ensure_dir(d->partial);
out:
	buf_release(&want), buf_release(&have);
	return rc;
}

/* staged: bytes already held in staging, counted up to each file's size */
static int64_t
staged(struct dl *d)
{
	int64_t total = 0, size;
	struct stat st;
	size_t i;

	for (i = 0; i < d->files->n; i++) {
		char *p = path_join(d->partial, json_get_str(d->files->u.a[i],
		    "path"));

		json_get_int(d->files->u.a[i], "size_bytes", &size);
		if (lstat(p, &st) == 0 && S_ISREG(st.st_mode))
			total += st.st_size < size ? st.st_size : size;
		free(p);
	}
	return total;
}

static int
free_space(struct dl *d)
{
	struct statvfs sv;
	int64_t need, avail;

	json_get_int(d->cand, "minimum_free_bytes", &need);
	need -= staged(d);
	if (statvfs(d->models, &sv) < 0)
		return hw_err_sys("cannot measure free space of '%s'",
		    d->models);
	avail = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
	if (need > 0 && avail < need)
		return hw_err_set(HW_EXIT_IO, "not enough free space in '%s': "
		    "%lld bytes needed, %lld free", d->models, (long long)need,
		    (long long)avail);
	return 0;
}

static void
resolve_url(struct dl *d, struct buf *u, const char *path)
{
	const char *s;

	buf_clear(u);
	buf_printf(u, "%s/%s/resolve/%s/", d->h->endpoint,
	    json_get_str(d->plan, "source_repository"),
	    json_get_str(d->plan, "source_revision"));
	for (s = path; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("-._~/", c))
			buf_addc(u, (char)c);
		else
			buf_printf(u, "%%%02X", c);
	}
}

static int
fetch_all(struct dl *d)
{
	struct buf url;
	size_t i;
	int rc = 0;

	buf_init(&url);
	for (i = 0; rc == 0 && i < d->files->n; i++) {
		const struct jval *f = d->files->u.a[i];
		struct hub_file hf = {
			.path = json_get_str(f, "path"),
			.sha256 = json_get_str(f, "sha256"),
			.blob = json_get_str(f, "blob_id"),
			.commit = json_get_str(d->plan, "source_revision"),
		};
		char sha[SHA256_HEX + 1], *dest;

		json_get_int(f, "size_bytes", &hf.size);
		resolve_url(d, &url, hf.path);
		hf.url = buf_cstr(&url);
		if ((rc = model_mkparents(d->partial, hf.path)) < 0)
			break;
		dest = path_join(d->partial, hf.path);
		rc = hub_fetch(d->h, &hf, dest, sha);
		free(dest);
	}
	buf_release(&url);
	return rc;
}

/* copy_key: from's k into to, or null */
static void
copy_key(struct dl *d, struct jval *to, const struct jval *from,
    const char *k)
{
	struct jval *v = json_get(from, k);

	json_add(d->a, to, k, v ? v : json_new(d->a, J_NULL));
}

/*
 * origin: where the plan came from: "hub" (hw-model inspect), or
 * "catalog" with the catalog's id, license posture and qualification
 */
static void
origin(struct dl *d, struct jval *s)
{
	static const char *const keys[] = { "qualification",
		"validated_platforms", "tensor_parallel_size",
		"minimum_gpu_memory_bytes", NULL };
	const struct jval *id = json_get(d->plan, "catalog_id");

	json_add(d->a, s, "origin", json_str(d->a, id ? "catalog" : "hub"));
	if (!id)
		return;
	json_add(d->a, s, "catalog_id", json_copy(d->a, id));
	copy_key(d, s, d->plan, "license_posture");
	for (size_t i = 0; keys[i]; i++)
		if (json_get(d->cand, keys[i]))
			copy_key(d, s, d->cand, keys[i]);
}

static int
write_source(struct dl *d)
{
	struct jval *s = json_obj(d->a), *files = json_new(d->a, J_ARRAY);
	struct jval *sp = json_get(d->cand, "source_path");
	char *p = path_join(d->partial, "HEARTWOOD-SOURCE.json");
	size_t i;
	int rc;

	json_add(d->a, s, "schema_version", json_str(d->a, SOURCE_SCHEMA));
	json_add(d->a, s, "model_id", json_str(d->a, d->id));
	json_add(d->a, s, "kind", json_get(d->cand, "kind"));
	json_add(d->a, s, "runtime", json_get(d->cand, "runtime"));
	json_add(d->a, s, "source_repository",
	    json_get(d->plan, "source_repository"));
	json_add(d->a, s, "source_revision",
	    json_get(d->plan, "source_revision"));
	json_add(d->a, s, "source_path", sp ? sp : json_new(d->a, J_NULL));
	json_add(d->a, s, "license", json_get(d->plan, "license") ?
	    json_get(d->plan, "license") : json_str(d->a, "Unspecified"));
	copy_key(d, s, d->plan, "context_window");
	copy_key(d, s, d->plan, "model_type");
	copy_key(d, s, d->cand, "precision");
	copy_key(d, s, d->cand, "tool_call_parser");
	copy_key(d, s, d->cand, "download_policy");
	origin(d, s);
	for (i = 0; i < d->files->n; i++) {
		const struct jval *f = d->files->u.a[i];
		struct jval *o = json_obj(d->a);

		json_add(d->a, o, "path", json_get(f, "path"));
		json_add(d->a, o, "size_bytes", json_get(f, "size_bytes"));
		json_add(d->a, o, "sha256", json_get(f, "sha256"));
		json_add(d->a, o, "blob_id", json_get(f, "blob_id"));
		json_push(d->a, files, o);
	}
	json_add(d->a, s, "files", files);
	rc = atomic_write_json(p, s);
	free(p);
	return rc;
}

static struct jval *
result(struct dl *d, int already)
{
	struct jval *r = json_obj(d->a);
	int64_t files = 0, bytes = 0;

	if (sums_verify(d->final, &files, &bytes) < 0)
		return NULL;
	json_add(d->a, r, "model_id", json_str(d->a, d->id));
	json_add(d->a, r, "kind", json_get(d->cand, "kind"));
	json_add(d->a, r, "path", json_str(d->a, d->final));
	json_add(d->a, r, "source_repository",
	    json_get(d->plan, "source_repository"));
	json_add(d->a, r, "source_revision",
	    json_get(d->plan, "source_revision"));
	json_add(d->a, r, "files", json_int(d->a, files));
	json_add(d->a, r, "size_bytes", json_int(d->a, bytes));
	json_add(d->a, r, "already_present", json_bool(d->a, already));
	return r;
}

static int
reserved_names(struct dl *d)
{
	size_t i;

	for (i = 0; i < d->files->n; i++) {
		const char *p = json_get_str(d->files->u.a[i], "path");

		if (!strcmp(p, "SHA256SUMS") ||
		    !strcmp(p, "HEARTWOOD-SOURCE.json"))
			return hw_err_set(HW_EXIT_DATA, "invalid plan: the "
			    "model has its own '%s'", p);
	}
	return 0;
}

static struct jval *
run(struct dl *d)
{
	struct stat st;

	if (lstat(d->final, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return hw_err_set(HW_EXIT_DATA, "'%s': not a "
			    "directory", d->final), NULL;
		/* a run killed after its rename leaves its record behind */
		if (rm_tree(d->partial) < 0 || rm_tree(d->record) < 0)
			return NULL;
		return result(d, 1);
	}
	if (resume(d) < 0 || free_space(d) < 0 || fetch_all(d) < 0 ||
	    write_source(d) < 0 || sums_write(d->partial) < 0 ||
	    sums_verify(d->partial, NULL, NULL) < 0)
		return NULL;
	fault_point("model-publish");
	if (rename(d->partial, d->final) < 0)
		return hw_err_sys("cannot publish '%s'", d->final), NULL;
	if (fsync_dir(d->models) < 0 || durable_unlink(d->record) < 0)
		return NULL;
	return result(d, 0);
}

struct jval *
model_download(struct hub *h, const struct jval *plan,
    const struct jval *cand, const char *models, struct arena *a)
{
	struct dl d = { .h = h, .a = a, .plan = plan, .cand = cand,
		.models = models };
	struct jval *r = NULL;
	int lk;

	d.id = json_get_str(cand, "model_id");
	d.files = json_get(cand, "files");
	if (reserved_names(&d) < 0)
		return NULL;
	if (mkdir(models, 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create '%s'", models), NULL;
	if (ensure_dir(models) < 0)
		return NULL;
	d.final = path_join(models, d.id);
	d.partial = xasprintf("%s/.%s.partial", models, d.id);
	d.record = xasprintf("%s/.%s.partial.json", models, d.id);
	d.lock = xasprintf("%s/.%s.lock", models, d.id);
	if ((lk = lock_open(d.lock, 1)) < 0) {
		if (errno == EWOULDBLOCK)
			hw_err_set(HW_EXIT_BUSY, "'%s': another download of "
			    "this model is running", d.id);
	} else {
		r = run(&d);
		lock_close(lk);
	}
	free(d.final), free(d.partial), free(d.record), free(d.lock);
	return r;
}
