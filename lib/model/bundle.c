/* bundle.c - portable model bundles: inspect, import, export */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/model.h"

#define BLOCK (1u << 20)
#define SPARE (512LL << 20)
#define ENTRIES_MAX 100001

struct bundle {
	const char *path;
	int fd;
	struct zipdir z;
	struct smap names;		/* member name -> struct zipent */
	struct buf mbytes;
	struct jval *man;
	char digest[SHA256_HEX + 1];
};

static int
bbad(const char *path, const char *fmt, const char *what)
{
	return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': %s '%s'", path,
	    fmt, what);
}

/* member: one central directory entry checked on its own */
static int
member(struct bundle *b, const struct zipent *e, struct smap *fold,
    struct arena *a)
{
	size_t n = strlen(e->name), i;
	char *low;

	if (n && e->name[n - 1] == '/')
		return bbad(b->path, "a directory entry", e->name);
	if (strcmp(e->name, BUNDLE_MANIFEST) && (strncmp(e->name, "model/",
	    6) || model_path_ok(e->name + 6) < 0))
		return bbad(b->path, "an unsafe member name", e->name);
	if (e->flags & 0x41)
		return bbad(b->path, "an encrypted member", e->name);
	if (e->method != 0 || e->csize != e->size)
		return bbad(b->path, "a compressed member", e->name);
	if (e->unix_mode && (e->unix_mode & S_IFMT) != S_IFREG &&
	    (e->unix_mode & S_IFMT) != 0)
		return bbad(b->path, "a member that is not a regular file",
		    e->name);
	if (smap_get(&b->names, e->name, n))
		return bbad(b->path, "a duplicate member", e->name);
	smap_put(&b->names, e->name, n, (void *)e);
	low = arena_strndup(a, e->name, n);
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)low[i]);
	if (smap_get(fold, low, n))
		return bbad(b->path, "a member whose name differs only in "
		    "case from another", e->name);
	smap_put(fold, low, n, low);
	return 0;
}

static int
read_manifest(struct bundle *b, struct arena *a)
{
	const struct zipent *e = smap_get(&b->names, BUNDLE_MANIFEST,
	    strlen(BUNDLE_MANIFEST));
	struct buf canon;
	uint64_t at;
	char err[160];
	ssize_t r;
	int same;

	if (!e)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': no "
		    "manifest", b->path);
	if (e->size > BUNDLE_MANIFEST_MAX)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': a "
		    "manifest over 1 MiB", b->path);
	if (zipent_data(&b->z, e, b->fd, b->path, &at) < 0)
		return -1;
	buf_reserve(&b->mbytes, e->size);
	r = pread(b->fd, b->mbytes.p, e->size, (off_t)at);
	if (r != (ssize_t)e->size)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': a "
		    "truncated manifest", b->path);
	b->mbytes.len = e->size;
	if (!(b->man = json_parse(a, b->mbytes.p, b->mbytes.len, err,
	    sizeof err)))
		return hw_err_set(HW_EXIT_DATA, "invalid bundle manifest: %s",
		    err);
	buf_init(&canon);
	bundle_canon(&canon, b->man);
	buf_addc(&canon, '\n');
	same = canon.len == b->mbytes.len && !memcmp(canon.p, b->mbytes.p,
	    canon.len);
	buf_release(&canon);
	if (!same)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle manifest: not "
		    "in canonical form");
	sha256_hex(b->mbytes.p, b->mbytes.len, b->digest);
	return manifest_check(b->man);
}

/* names: the members are exactly the manifest and model/<each file> */
static int
names(struct bundle *b)
{
	const struct jval *files = json_get(b->man, "files");
	size_t i;

	if (b->z.n != files->n + 1)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': %llu "
		    "members for %zu files and the manifest", b->path,
		    (unsigned long long)b->z.n, files->n);
	for (i = 0; i < files->n; i++) {
		const char *p = json_get_str(files->u.a[i], "path");
		char *name = xasprintf("model/%s", p);
		const struct zipent *e = smap_get(&b->names, name,
		    strlen(name));
		int64_t sz;

		free(name);
		json_get_int(files->u.a[i], "size_bytes", &sz);
		if (!e)
			return bbad(b->path, "no member for the file", p);
		if (e->size != (uint64_t)sz)
			return bbad(b->path, "a member whose size differs "
			    "from the manifest:", p);
	}
	return 0;
}

static void
bundle_close(struct bundle *b)
{
	if (b->fd >= 0)
		close(b->fd);
	zipdir_release(&b->z);
	smap_release(&b->names);
	buf_release(&b->mbytes);
}

static int
bundle_open(struct bundle *b, const char *path, struct arena *a)
{
	struct smap fold;
	struct stat st;
	uint64_t i;
	int rc = -1;

	memset(b, 0, sizeof *b);
	b->path = path;
	smap_init(&b->names);
	buf_init(&b->mbytes);
	b->fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (b->fd < 0)
		return hw_err_set(errno == ENOENT ? HW_EXIT_NOINPUT :
		    HW_EXIT_DATA, "cannot open bundle '%s': %s", path,
		    errno == ELOOP ? "a symlink" : strerror(errno));
	if (fstat(b->fd, &st) < 0 || !S_ISREG(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': not a "
		    "regular file", path);
	if (zipdir_read(&b->z, b->fd, path, ENTRIES_MAX) < 0)
		return -1;
	smap_init(&fold);
	for (i = 0; i < b->z.n; i++)
		if (member(b, &b->z.e[i], &fold, a) < 0)
			goto out;
	if (read_manifest(b, a) < 0 || names(b) < 0)
		goto out;
	rc = 0;
out:
	smap_release(&fold);
	return rc;
}

/* unvalidated: a bundle cannot claim its own qualification */
static struct jval *
unvalidated(struct arena *a, const struct jval *m)
{
	struct jval *c = json_copy(a, m);

	json_set(a, c, "qualification", json_str(a, "unvalidated"));
	json_set(a, c, "validated_platforms", json_new(a, J_ARRAY));
	json_set(a, c, "qualification_test", json_new(a, J_NULL));
	json_set(a, c, "qualification_date", json_new(a, J_NULL));
	json_set(a, c, "qualification_evidence", json_new(a, J_NULL));
	json_set(a, c, "catalog_source", json_str(a, "transferred"));
	return c;
}

static struct jval *
plan_of(struct bundle *b, struct arena *a)
{
	const struct jval *m = json_get(b->man, "model");
	struct jval *p = json_obj(a), *w = json_new(a, J_ARRAY);
	char *lic = xasprintf("the model's license is its publisher's: "
	    "'%s'; importing it accepts that license",
	    json_get_str(m, "license_posture"));

	json_add(a, p, "bundle_path", json_str(a, b->path));
	json_add(a, p, "bundle_size_bytes", json_int(a, (int64_t)b->z.size));
	json_add(a, p, "manifest_sha256", json_str(a, b->digest));
	json_add(a, p, "file_count", json_int(a,
	    (int64_t)json_get(b->man, "files")->n));
	json_add(a, p, "runtime_profile", json_get(b->man, "runtime_profile"));
	json_add(a, p, "model", unvalidated(a, m));
	json_push(a, w, json_str(a, lic));
	free(lic);
	json_push(a, w, json_str(a, "the bundle came through a channel "
	    "heartwood cannot vouch for: approve its manifest_sha256 only "
	    "if it is the one its sender showed you"));
	json_push(a, w, json_str(a, "not tested here: the model is "
	    "unvalidated on this platform"));
	json_add(a, p, "warnings", w);
	return p;
}

struct jval *
bundle_inspect(const char *path, struct arena *a)
{
	struct bundle b;
	struct jval *p = NULL;

	if (bundle_open(&b, path, a) == 0)
		p = plan_of(&b, a);
	bundle_close(&b);
	return p;
}

/* ---- import ---- */

struct imp {
	struct bundle *b;
	const char *models, *id;
	const volatile int *cancel;
	model_progress_fn *progress;
	void *progress_arg;
	char *final, *partial, *lock;
	struct arena *a;
	struct smap known;	/* path -> the SHA-256 each was written with */
};

static int
extract_one(struct imp *m, const struct jval *f, char *blk)
{
	const char *p = json_get_str(f, "path");
	char *name = xasprintf("model/%s", p), *dst = path_join(m->partial,
	    p), hex[SHA256_HEX + 1];
	const struct zipent *e = smap_get(&m->b->names, name, strlen(name));
	unsigned char d[32];
	struct sha256 h;
	uint64_t at, left;
	int out = -1, rc = -1;

	sha256_init(&h);
	if (zipent_data(&m->b->z, e, m->b->fd, m->b->path, &at) < 0 ||
	    model_mkparents(m->partial, p) < 0)
		goto out;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (out < 0) {
		hw_err_sys("cannot create '%s'", dst);
		goto out;
	}
	for (left = e->size; left > 0 && !*m->cancel;) {
		size_t n = left < BLOCK ? (size_t)left : BLOCK;
		ssize_t r = pread(m->b->fd, blk, n, (off_t)at);

		if (r <= 0) {
			hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': a "
			    "truncated member '%s'", m->b->path, p);
			goto out;
		}
		if (write_all(out, blk, (size_t)r, dst) < 0)
			goto out;
		sha256_update(&h, blk, (size_t)r);
		at += (uint64_t)r, left -= (uint64_t)r;
		if (m->progress)
			m->progress(m->progress_arg, p, (int64_t)(e->size -
			    left), (int64_t)e->size, 0);
	}
	if (*m->cancel) {
		hw_err_set(HW_EXIT_INTR, "import of '%s' interrupted",
		    m->b->path);
		goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, hex);
	if (strcmp(hex, json_get_str(f, "sha256"))) {
		hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': the bytes of "
		    "'%s' differ from the manifest's SHA-256", m->b->path, p);
		goto out;
	}
	if (fsync(out) < 0) {
		hw_err_sys("cannot sync '%s'", dst);
		goto out;
	}
	if (m->progress)
		m->progress(m->progress_arg, p, (int64_t)e->size,
		    (int64_t)e->size, 1);
	rc = 0;
out:
	sha256_release(&h);
	if (out >= 0)
		close(out);
	free(name), free(dst);
	return rc;
}

/* gguf_meta: a GGUF bundle's provenance and SHA256SUMS beside the file */
static int
gguf_meta(struct imp *m)
{
	const struct jval *md = json_get(m->b->man, "model");
	struct jval *o = json_obj(m->a);
	char *p = path_join(m->partial, "heartwood-model.json");
	static const char *const keep[] = { "model_id", "runtime",
		"source_repository", "source_revision", "source_path",
		"artifact_sha256", "size_bytes", "license_posture",
		"context_window", "tool_call_parser", NULL };
	int i, rc;

	json_add(m->a, o, "schema_version",
	    json_str(m->a, "heartwood.local-model-import.v1"));
	for (i = 0; keep[i]; i++)
		json_add(m->a, o, keep[i], json_get(md, keep[i]));
	json_add(m->a, o, "qualification", json_str(m->a, "unvalidated"));
	json_add(m->a, o, "bundle_manifest_sha256",
	    json_str(m->a, m->b->digest));
	rc = atomic_write_json(p, o);
	free(p);
	return rc < 0 ? -1 : sums_write_known(m->partial, &m->known);
}

static int
stage(struct imp *m)
{
	const struct jval *files = json_get(m->b->man, "files");
	struct statvfs sv;
	int64_t total;
	char *blk;
	size_t i;
	int rc = 0;

	json_get_int(m->b->man, "total_size_bytes", &total);
	if (statvfs(m->models, &sv) < 0)
		return hw_err_sys("cannot measure free space of '%s'",
		    m->models);
	if ((int64_t)sv.f_bavail * (int64_t)sv.f_frsize < total + SPARE)
		return hw_err_set(HW_EXIT_IO, "not enough free space in '%s': "
		    "%lld bytes needed", m->models,
		    (long long)(total + SPARE));
	if (rm_tree(m->partial) < 0)
		return -1;
	if (mkdir(m->partial, 0700) < 0)
		return hw_err_sys("cannot create '%s'", m->partial);
	blk = xmalloc(BLOCK);
	for (i = 0; rc == 0 && i < files->n; i++)
		rc = extract_one(m, files->u.a[i], blk);
	free(blk);
	if (rc < 0)
		return -1;
	/* each file was hashed as it was written and matched the manifest */
	for (i = 0; i < files->n; i++) {
		const char *p = json_get_str(files->u.a[i], "path");

		smap_put(&m->known, p, strlen(p), (void *)json_get_str(
		    files->u.a[i], "sha256"));
	}
	if (json_is_str(json_get(json_get(m->b->man, "model"), "runtime"),
	    "llama-cpp") && gguf_meta(m) < 0)
		return -1;
	if (sums_verify_known(m->partial, &m->known, NULL, NULL) < 0)
		return -1;
	if (rename(m->partial, m->final) < 0)
		return hw_err_sys("cannot publish '%s'", m->final);
	return fsync_dir(m->models);
}

static struct jval *
import_result(struct imp *m, int already)
{
	struct jval *r = json_obj(m->a);
	int64_t files, bytes;

	/* one already there is read whole; the one just staged was not */
	if (sums_verify_known(m->final, already ? NULL : &m->known, &files,
	    &bytes) < 0)
		return NULL;
	json_add(m->a, r, "model_id", json_str(m->a, m->id));
	json_add(m->a, r, "path", json_str(m->a, m->final));
	json_add(m->a, r, "manifest_sha256", json_str(m->a, m->b->digest));
	json_add(m->a, r, "files", json_int(m->a, files));
	json_add(m->a, r, "size_bytes", json_int(m->a, bytes));
	json_add(m->a, r, "already_present", json_bool(m->a, already));
	return r;
}

static struct jval *
import_locked(struct imp *m)
{
	struct stat st;
	char *msg;
	int code;

	if (lstat(m->final, &st) == 0)
		return import_result(m, 1);
	if (stage(m) == 0)
		return import_result(m, 0);
	code = hw_err_code();
	msg = xstrdup(hw_err_msg());
	rm_tree(m->partial);
	hw_err_set(code, "%s", msg);
	free(msg);
	return NULL;
}

struct jval *
bundle_import(const char *path, const char *approve, const char *models,
    const volatile int *cancel, model_progress_fn *progress,
    void *progress_arg, struct arena *a)
{
	struct bundle b;
	struct imp m = { .b = &b, .models = models, .cancel = cancel,
		.progress = progress, .progress_arg = progress_arg, .a = a };
	struct jval *r = NULL;
	int lk;

	smap_init(&m.known);
	if (model_hex_ok(approve, SHA256_HEX) < 0) {
		hw_err_set(HW_EXIT_USAGE, "invalid --approve '%s': expected "
		    "the 64 hex digits of manifest_sha256", approve);
		return NULL;
	}
	if (bundle_open(&b, path, a) < 0)
		goto out;
	if (strcmp(b.digest, approve)) {
		hw_err_set(HW_EXIT_FAIL, "refusing '%s': its manifest_sha256 "
		    "is %s, not the approved %s", path, b.digest, approve);
		goto out;
	}
	if (model_mkstore(models) < 0)
		goto out;
	m.id = json_get_str(json_get(b.man, "model"), "model_id");
	m.final = path_join(models, m.id);
	m.partial = xasprintf("%s/.%s.import-partial", models, m.id);
	m.lock = xasprintf("%s/.%s.lock", models, m.id);
	if ((lk = lock_open(m.lock, 1)) < 0) {
		if (errno == EWOULDBLOCK)
			hw_err_set(HW_EXIT_BUSY, "'%s': another import of this "
			    "model is running", m.id);
	} else {
		r = import_locked(&m);
		lock_close(lk);
	}
out:
	free(m.final), free(m.partial), free(m.lock);
	smap_release(&m.known);
	bundle_close(&b);
	return r;
}
