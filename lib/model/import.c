/* import.c - a local GGUF file or safetensors directory imported */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/model.h"

#define IMPORT_SCHEMA "heartwood.local-model-import.v1"
#define SPARE (512LL << 20)
#define BLOCK (1u << 20)

struct imp {
	const struct model_import *im;
	struct arena *a;
	const char *models, *runtime, *parser, *base;
	struct model_files files;	/* relative to src (a dir) */
	char *src_dir;			/* the directory files are in */
	char *id, *final, *partial, *lock;
	int64_t size, context;
	char sha[SHA256_HEX + 1];	/* a GGUF file's */
	struct smap known;	/* path -> the SHA-256 each was copied with */
};

static int
check_args(const struct model_import *im)
{
	size_t n = strlen(im->rev);

	if (model_repo_ok(im->repo) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid --source-repository "
		    "'%s': expected OWNER/NAME", im->repo);
	if (n < 40 || n > 64 || model_hex_ok(im->rev, n) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid --source-revision "
		    "'%s': expected a full commit", im->rev);
	if (!*im->license || !valid_utf8(im->license, strlen(im->license)))
		return hw_err_set(HW_EXIT_USAGE, "invalid --license-posture: "
		    "empty");
	if (im->context && (im->context < MODEL_CONTEXT_MIN ||
	    im->context > MODEL_CONTEXT_MAX))
		return hw_err_set(HW_EXIT_USAGE, "invalid --context-window "
		    "'%lld': expected %d to %d", (long long)im->context,
		    MODEL_CONTEXT_MIN, MODEL_CONTEXT_MAX);
	return 0;
}

/* overlap: the source and the model store may not contain each other */
static int
overlap(const char *path, const char *models)
{
	char a[PATH_MAX], b[PATH_MAX];
	size_t na, nb;

	if (!realpath(path, a) || !realpath(models, b))
		return hw_err_sys("cannot resolve '%s'", path);
	na = strlen(a), nb = strlen(b);
	if ((na <= nb && !strncmp(a, b, na) && (b[na] == '/' || !b[na])) ||
	    (nb < na && !strncmp(a, b, nb) && a[nb] == '/'))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it overlaps "
		    "the model store", path);
	return 0;
}

static int
gguf_source(struct imp *m)
{
	char magic[4];
	int fd = open(m->im->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return hw_err_sys("cannot open '%s'", m->im->path);
	r = read(fd, magic, 4);
	close(fd);
	if (r != 4 || memcmp(magic, "GGUF", 4))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a GGUF "
		    "file (no GGUF magic)", m->im->path);
	if (!m->im->context)
		return hw_err_set(HW_EXIT_USAGE, "a GGUF import needs "
		    "--context-window");
	m->runtime = "llama-cpp";
	m->context = m->im->context;
	m->files.v = xmalloc(sizeof *m->files.v);
	m->files.v[0] = xstrdup(m->base);
	m->files.n = m->files.cap = 1;
	return 0;
}

static int
dir_source(struct imp *m)
{
	const struct jval *cfg, *arch;
	char *p = path_join(m->im->path, "config.json");
	size_t i;
	int st = 0;

	cfg = read_json_file(p, 16u << 20, m->a);
	free(p);
	if (!cfg)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': no readable "
		    "config.json", m->im->path);
	arch = json_get(cfg, "architectures");
	if (!arch || arch->t != J_ARRAY || arch->n == 0)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': config.json "
		    "has no architectures", m->im->path);
	if (json_get(cfg, "auto_map"))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it needs "
		    "custom code (config.auto_map)", m->im->path);
	for (i = 0; i < m->files.n; i++) {
		if (fnmatch("*.py", m->files.v[i], 0) == 0)
			return hw_err_set(HW_EXIT_DATA, "refusing '%s': it "
			    "holds Python code '%s'", m->im->path,
			    m->files.v[i]);
		st |= fnmatch("*.safetensors", m->files.v[i], 0) == 0;
	}
	if (!st)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': no "
		    "*.safetensors file", m->im->path);
	m->parser = model_parser_for(m->im->repo,
	    json_get_str(cfg, "model_type"));
	if (!m->parser)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': no tool-call "
		    "parser fits its model type", m->im->path);
	m->runtime = "vllm";
	m->context = m->im->context ? m->im->context :
	    model_config_context(cfg);
	return 0;
}

/* source: what PATH is, its files and size, and the model id */
static int
source(struct imp *m)
{
	const char *slash = strrchr(m->im->path, '/');
	char hex[SHA256_HEX + 1], *in;
	struct stat st;
	size_t i;

	m->base = slash && slash[1] ? slash + 1 : m->im->path;
	if (lstat(m->im->path, &st) < 0)
		return hw_err_set(errno == ENOENT ? HW_EXIT_NOINPUT :
		    HW_EXIT_IO, "cannot import '%s': %s", m->im->path,
		    strerror(errno));
	if (S_ISLNK(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': a symlink",
		    m->im->path);
	if (S_ISREG(st.st_mode)) {
		m->src_dir = xstrdup(m->im->path);
		*(strrchr(m->src_dir, '/') ? strrchr(m->src_dir, '/') :
		    m->src_dir) = 0;
		if (!*m->src_dir) {
			free(m->src_dir);
			m->src_dir = xstrdup(m->im->path[0] == '/' ? "/" :
			    ".");
		}
		if (model_path_ok(m->base) < 0 || gguf_source(m) < 0)
			return -1;
	} else if (S_ISDIR(st.st_mode)) {
		m->src_dir = xstrdup(m->im->path);
		if (model_walk(m->im->path, &m->files) < 0 ||
		    dir_source(m) < 0)
			return -1;
	} else {
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a file "
		    "or directory", m->im->path);
	}
	if (m->context < MODEL_CONTEXT_MIN)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': %s",
		    m->im->path, m->context ? "its context window is under "
		    "18432 tokens" : "no context window found");
	for (i = 0; i < m->files.n; i++)
		if (!strcmp(m->files.v[i], "SHA256SUMS") ||
		    !strcmp(m->files.v[i], "heartwood-model.json"))
			return hw_err_set(HW_EXIT_DATA, "refusing '%s': it has "
			    "its own '%s'", m->im->path, m->files.v[i]);
	in = xasprintf("%s@%s:%s:%s", m->im->repo, m->im->rev, m->base,
	    m->runtime);
	sha256_hex(in, strlen(in), hex);
	free(in);
	m->id = xasprintf("imported-%.16s", hex);
	return 0;
}

/* copy_one: src/rel to partial/rel, created O_EXCL, hashed, synced */
static int
copy_one(struct imp *m, const char *rel, char *blk)
{
	char *src = path_join(m->src_dir, rel), *dst = path_join(m->partial,
	    rel);
	struct stat a, b;
	struct sha256 h;
	unsigned char d[32];
	int64_t n = 0;
	ssize_t r = 0;
	int in = -1, out = -1, rc = -1;

	sha256_init(&h);
	if (model_mkparents(m->partial, rel) < 0)
		goto out;
	if ((in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
	    fstat(in, &a) < 0) {
		hw_err_sys("cannot open '%s'", src);
		goto out;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (out < 0) {
		hw_err_sys("cannot create '%s'", dst);
		goto out;
	}
	while (!*m->im->cancel && (r = read(in, blk, BLOCK)) > 0) {
		if (write_all(out, blk, (size_t)r, dst) < 0)
			goto out;
		sha256_update(&h, blk, (size_t)r);
		n += r;
		if (m->im->progress)
			m->im->progress(m->im->progress_arg, rel, n,
			    a.st_size, 0);
	}
	if (*m->im->cancel) {
		hw_err_set(HW_EXIT_INTR, "import of '%s' interrupted",
		    m->im->path);
		goto out;
	}
	if (r < 0 || fstat(in, &b) < 0) {
		hw_err_sys("cannot read '%s'", src);
		goto out;
	}
	if (n != a.st_size || b.st_size != a.st_size ||
	    b.st_mtim.tv_sec != a.st_mtim.tv_sec ||
	    b.st_mtim.tv_nsec != a.st_mtim.tv_nsec) {
		hw_err_set(HW_EXIT_DATA, "'%s': changed during the copy", src);
		goto out;
	}
	if (fsync(out) < 0) {
		hw_err_sys("cannot sync '%s'", dst);
		goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, m->sha);
	smap_put(&m->known, rel, strlen(rel), arena_strndup(m->a, m->sha,
	    SHA256_HEX));
	m->size += n;
	if (m->im->progress)
		m->im->progress(m->im->progress_arg, rel, n, n, 1);
	rc = 0;
out:
	sha256_release(&h);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(src), free(dst);
	return rc;
}

static int
free_space(struct imp *m)
{
	struct statvfs sv;
	int64_t need = SPARE, avail;
	struct stat st;
	size_t i;

	for (i = 0; i < m->files.n; i++) {
		char *p = path_join(m->src_dir, m->files.v[i]);

		if (lstat(p, &st) == 0)
			need += st.st_size;
		free(p);
	}
	if (statvfs(m->models, &sv) < 0)
		return hw_err_sys("cannot measure free space of '%s'",
		    m->models);
	avail = (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
	if (avail < need)
		return hw_err_set(HW_EXIT_IO, "not enough free space in '%s': "
		    "%lld bytes needed, %lld free", m->models, (long long)need,
		    (long long)avail);
	return 0;
}

static int
write_meta(struct imp *m)
{
	struct arena *a = m->a;
	struct jval *o = json_obj(a);
	int gguf = !strcmp(m->runtime, "llama-cpp");
	char *p = path_join(m->partial, "heartwood-model.json");
	int rc;

	json_add(a, o, "schema_version", json_str(a, IMPORT_SCHEMA));
	json_add(a, o, "model_id", json_str(a, m->id));
	json_add(a, o, "runtime", json_str(a, m->runtime));
	json_add(a, o, "source_repository", json_str(a, m->im->repo));
	json_add(a, o, "source_revision", json_str(a, m->im->rev));
	json_add(a, o, "source_path", gguf ? json_str(a, m->base) :
	    json_new(a, J_NULL));
	json_add(a, o, "artifact_sha256", gguf ? json_str(a, m->sha) :
	    json_new(a, J_NULL));
	json_add(a, o, "size_bytes", json_int(a, m->size));
	json_add(a, o, "license_posture", json_str(a, m->im->license));
	json_add(a, o, "context_window", json_int(a, m->context));
	json_add(a, o, "tool_call_parser", m->parser ?
	    json_str(a, m->parser) : json_new(a, J_NULL));
	json_add(a, o, "qualification", json_str(a, "unvalidated"));
	rc = atomic_write_json(p, o);
	free(p);
	return rc;
}

static struct jval *
result(struct imp *m, int already)
{
	struct jval *r = json_obj(m->a);
	int64_t files = 0, bytes = 0;

	/* known is empty for one already there: it is read whole */
	if (sums_verify_known(m->final, &m->known, &files, &bytes) < 0)
		return NULL;
	json_add(m->a, r, "model_id", json_str(m->a, m->id));
	json_add(m->a, r, "runtime", json_str(m->a, m->runtime));
	json_add(m->a, r, "path", json_str(m->a, m->final));
	json_add(m->a, r, "files", json_int(m->a, files));
	json_add(m->a, r, "size_bytes", json_int(m->a, bytes));
	json_add(m->a, r, "already_present", json_bool(m->a, already));
	return r;
}

/* stage: everything into partial, checked; the caller cleans up */
static int
stage(struct imp *m)
{
	char *blk;
	size_t i;
	int rc = 0;

	if (free_space(m) < 0 || rm_tree(m->partial) < 0)
		return -1;
	if (mkdir(m->partial, 0700) < 0)
		return hw_err_sys("cannot create '%s'", m->partial);
	blk = xmalloc(BLOCK);
	for (i = 0; rc == 0 && i < m->files.n; i++)
		rc = copy_one(m, m->files.v[i], blk);
	free(blk);
	/*
	 * each file was hashed as it was copied; heartwood-model.json,
	 * written here, is the one file SHA256SUMS reads
	 */
	if (rc < 0 || write_meta(m) < 0 ||
	    sums_write_known(m->partial, &m->known) < 0 ||
	    sums_verify_known(m->partial, &m->known, NULL, NULL) < 0)
		return -1;
	if (*m->im->cancel)
		return hw_err_set(HW_EXIT_INTR, "import of '%s' interrupted",
		    m->im->path);
	if (rename(m->partial, m->final) < 0)
		return hw_err_sys("cannot publish '%s'", m->final);
	return fsync_dir(m->models);
}

static struct jval *
run(struct imp *m)
{
	struct stat st;
	struct jval *r = NULL;
	int code;
	char *msg;

	if (lstat(m->final, &st) == 0)
		return result(m, 1);
	if (stage(m) == 0)
		return result(m, 0);
	code = hw_err_code();
	msg = xstrdup(hw_err_msg());
	rm_tree(m->partial);
	hw_err_set(code, "%s", msg);
	free(msg);
	return r;
}

struct jval *
model_import(const struct model_import *im, const char *models,
    struct arena *a)
{
	struct imp m = { .im = im, .a = a, .models = models };
	struct jval *r = NULL;
	int lk;

	smap_init(&m.known);	/* allocates on the first put */
	if (check_args(im) < 0)
		return NULL;
	if (mkdir(models, 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create '%s'", models), NULL;
	if (ensure_dir(models) < 0 || source(&m) < 0 ||
	    overlap(im->path, models) < 0)
		goto out;
	m.final = path_join(models, m.id);
	m.partial = xasprintf("%s/.%s.partial", models, m.id);
	m.lock = xasprintf("%s/.%s.lock", models, m.id);
	if ((lk = lock_open(m.lock, 1)) < 0) {
		if (errno == EWOULDBLOCK)
			hw_err_set(HW_EXIT_BUSY, "'%s': another import of this "
			    "model is running", m.id);
		goto out;
	}
	r = run(&m);
	lock_close(lk);
out:
	model_files_release(&m.files);
	smap_release(&m.known);
	free(m.src_dir), free(m.id), free(m.final), free(m.partial);
	free(m.lock);
	return r;
}
