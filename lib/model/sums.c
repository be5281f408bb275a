/* sums.c - safe relative paths, file digests and SHA256SUMS */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"

#define BLOCK (1u << 20)
#define SUMS_MAX (64u << 20)
#define VERIFIED_SCHEMA "heartwood-c.model-verified.v1"
#define VERIFIED_MAX (64u << 20)
#define RACY_NS 2000000000LL	/* 2 s: the coarsest change times kept */

int
model_path_ok(const char *p)
{
	size_t n = strlen(p), seg = 0, i;

	if (n == 0 || n > MODEL_PATH_MAX || !valid_utf8(p, n))
		return -1;
	for (i = 0; i <= n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '/' || c == 0) {
			size_t len = i - seg;

			if (len == 0 || (len == 1 && p[seg] == '.') ||
			    (len == 2 && p[seg] == '.' && p[seg + 1] == '.'))
				return -1;
			seg = i + 1;
		} else if (c < 0x20 || c == 0x7f || c == '\\') {
			return -1;
		}
	}
	return 0;
}

static int
name_part_ok(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 96 || s[0] == '.' || s[0] == '-')
		return -1;
	for (i = 0; i < n; i++) {
		if (!s[i] || !strchr("abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", s[i]))
			return -1;
		if (s[i] == '.' && i + 1 < n && s[i + 1] == '.')
			return -1;
	}
	return 0;
}

int
model_repo_ok(const char *r)
{
	const char *slash = strchr(r, '/');

	if (!slash || strchr(slash + 1, '/'))
		return -1;
	if (name_part_ok(r, (size_t)(slash - r)) < 0)
		return -1;
	return name_part_ok(slash + 1, strlen(slash + 1));
}

int
model_hex_ok(const char *s, size_t n)
{
	size_t i;

	if (!s || strlen(s) != n)
		return -1;
	for (i = 0; i < n; i++)
		if (!s[i] || !strchr("0123456789abcdef", s[i]))
			return -1;
	return 0;
}

int
model_file_sha256(const char *path, char out[SHA256_HEX + 1], int64_t *size)
{
	struct sha256 h;
	struct stat st;
	unsigned char d[32];
	char *blk;
	ssize_t r;
	int fd, rc = -1;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return hw_err_set(errno == ELOOP ? HW_EXIT_DATA : HW_EXIT_IO,
		    "cannot open '%s': %s", path,
		    errno == ELOOP ? "a symlink" : strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hw_err_set(HW_EXIT_DATA, "'%s': not a regular file",
		    path);
	}
	fault_point("model-hash");	/* HW_FAULT_TRACE: each file read */
	blk = xmalloc(BLOCK);
	sha256_init(&h);
	*size = 0;
	while ((r = read(fd, blk, BLOCK)) > 0) {
		sha256_update(&h, blk, (size_t)r);
		*size += r;
	}
	if (r < 0) {
		hw_err_sys("cannot read '%s'", path);
		goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, out);
	rc = 0;
out:
	sha256_release(&h);
	free(blk);
	close(fd);
	return rc;
}

/* Python's order of paths: component-wise, so '/' sorts before all. */
static int
pathcmp(const void *x, const void *y)
{
	const unsigned char *a = *(const unsigned char *const *)x;
	const unsigned char *b = *(const unsigned char *const *)y;

	for (; *a && *a == *b; a++, b++)
		;
	return (*a == '/' ? 1 : *a + 1) - (*b == '/' ? 1 : *b + 1);
}

static void
list_add(struct model_files *l, char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = s;
}

void
model_files_release(struct model_files *l)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof *l);
}

/* walk collects the regular files below root/rel; anything else is 65 */
static int
walk(const char *root, const char *rel, struct model_files *out)
{
	char *dpath = rel ? path_join(root, rel) : xstrdup(root);
	DIR *d = opendir(dpath);
	struct dirent *e;
	struct stat st;
	int rc = 0;

	if (!d) {
		rc = hw_err_sys("cannot open '%s'", dpath);
		free(dpath);
		return rc;
	}
	while (rc == 0 && (e = readdir(d))) {
		char *r, *full;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		r = rel ? path_join(rel, e->d_name) : xstrdup(e->d_name);
		full = path_join(root, r);
		if (lstat(full, &st) < 0)
			rc = hw_err_sys("cannot stat '%s'", full);
		else if (S_ISDIR(st.st_mode))
			rc = walk(root, r, out);
		else if (!S_ISREG(st.st_mode))
			rc = hw_err_set(HW_EXIT_DATA, "'%s': %s", full,
			    S_ISLNK(st.st_mode) ? "a symlink" :
			    "not a regular file");
		else if (out->n >= MODEL_FILES_MAX)
			rc = hw_err_set(HW_EXIT_DATA, "'%s': more than %d "
			    "files", root, MODEL_FILES_MAX);
		else {
			list_add(out, r);
			r = NULL;
		}
		free(r);
		free(full);
	}
	closedir(d);
	free(dpath);
	return rc;
}

int
model_walk(const char *root, struct model_files *out)
{
	memset(out, 0, sizeof *out);
	if (walk(root, NULL, out) < 0) {
		model_files_release(out);
		return -1;
	}
	if (out->n)	/* no file: no array to sort */
		qsort(out->v, out->n, sizeof *out->v, pathcmp);
	return 0;
}

int
model_mkparents(const char *root, const char *rel)
{
	char *p = path_join(root, rel), *s = p + strlen(root) + 1;
	int rc = 0;

	while (rc == 0 && (s = strchr(s, '/'))) {
		*s = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = hw_err_sys("cannot create '%s'", p);
		else
			rc = ensure_dir(p);
		*s++ = '/';
	}
	free(p);
	return rc;
}

/*
 * digest_of: the SHA-256 (hex) and size of dir/rel, from known when it
 * holds rel (hashed as it was written: only the size is read), else read
 */
static int
digest_of(const char *dir, const char *rel, const struct smap *known,
    char hex[SHA256_HEX + 1], int64_t *sz)
{
	const char *k = known ? smap_get(known, rel, strlen(rel)) : NULL;
	char *f = path_join(dir, rel);
	struct stat st;
	int rc;

	if (!k) {
		rc = model_file_sha256(f, hex, sz);
	} else if ((rc = lstat(f, &st)) < 0) {
		hw_err_sys("cannot read '%s'", f);
	} else {
		memcpy(hex, k, SHA256_HEX + 1);
		*sz = (int64_t)st.st_size;
	}
	free(f);
	return rc < 0 ? -1 : 0;
}

int
sums_write(const char *dir)
{
	return sums_write_known(dir, NULL);
}

int
sums_write_known(const char *dir, const struct smap *known)
{
	struct model_files l = { 0 };
	struct buf b;
	char hex[SHA256_HEX + 1], *p = path_join(dir, "SHA256SUMS");
	int64_t sz;
	size_t i;
	int rc = -1;

	buf_init(&b);
	if (walk(dir, NULL, &l) < 0)
		goto out;
	if (l.n)
		qsort(l.v, l.n, sizeof *l.v, pathcmp);
	for (i = 0; i < l.n; i++) {
		if (!strcmp(l.v[i], "SHA256SUMS"))
			continue;
		if (digest_of(dir, l.v[i], known, hex, &sz) < 0)
			goto out;
		buf_printf(&b, "%s  %s\n", hex, l.v[i]);
	}
	rc = atomic_replace(p, b.p ? b.p : "", b.len);
out:
	model_files_release(&l);
	buf_release(&b);
	free(p);
	return rc;
}

/* parse_sums fills m with path -> expected hex, refusing bad lines */
static int
parse_sums(const char *name, struct buf *b, struct smap *m)
{
	char *line = b->p, *nl;
	size_t no = 0;

	if (b->len && b->p[b->len - 1] != '\n')
		return hw_err_set(HW_EXIT_DATA, "%s: no final newline", name);
	for (; b->len && line < b->p + b->len; line = nl + 1) {
		char *path;

		nl = memchr(line, '\n', (size_t)(b->p + b->len - line));
		*nl = 0;
		no++;
		path = line + SHA256_HEX + 2;
		if (strlen(line) < SHA256_HEX + 3 ||
		    line[SHA256_HEX] != ' ' ||
		    (line[SHA256_HEX + 1] != ' ' &&
		    line[SHA256_HEX + 1] != '*'))
			return hw_err_set(HW_EXIT_DATA, "%s:%zu: malformed "
			    "line", name, no);
		line[SHA256_HEX] = 0;
		if (model_hex_ok(line, SHA256_HEX) < 0)
			return hw_err_set(HW_EXIT_DATA, "%s:%zu: bad digest",
			    name, no);
		if (model_path_ok(path) < 0 || !strcmp(path, "SHA256SUMS"))
			return hw_err_set(HW_EXIT_DATA, "%s:%zu: unsafe path "
			    "'%s'", name, no, path);
		if (smap_get(m, path, strlen(path)))
			return hw_err_set(HW_EXIT_DATA, "%s:%zu: duplicate "
			    "path '%s'", name, no, path);
		smap_put(m, path, strlen(path), line);
	}
	return 0;
}

int
sums_read(const char *dir, struct smap *m, struct buf *b)
{
	char *p = path_join(dir, "SHA256SUMS");
	int rc = read_file(p, SUMS_MAX, b) < 0 || parse_sums(p, b, m) < 0 ?
	    -1 : 0;

	free(p);
	return rc;
}

int
sums_verify(const char *dir, int64_t *files, int64_t *bytes)
{
	return sums_verify_known(dir, NULL, files, bytes);
}

/*
 * The verified cache (sums_verify_cached) keeps each file a verify found
 * right with its digest and its identity: device, inode, size, and the
 * modification and change times to the nanosecond.  While the identity
 * is the same the digest is taken from there.  Writing to a file sets its
 * change time, which only the kernel sets, so a changed file is read
 * again.  A file changed less than RACY_NS before it was looked at could
 * be changed again within the same tick of a coarse clock and keep its
 * change time, so it is not kept until a later verify.
 */
static int64_t
ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

int64_t
model_int_or(const struct jval *m, const char *k, int64_t dflt)
{
	int64_t v;

	return json_get_int(m, k, &v) == 0 ? v : dflt;
}

/* same: st is the identity the cache entry e records */
static int
same(const struct jval *e, const struct stat *st)
{
	return S_ISREG(st->st_mode) &&
	    model_int_or(e, "dev", -1) == (int64_t)st->st_dev &&
	    model_int_or(e, "ino", -1) == (int64_t)st->st_ino &&
	    model_int_or(e, "size", -1) == (int64_t)st->st_size &&
	    model_int_or(e, "mtime_ns", -1) == ns_of(&st->st_mtim) &&
	    model_int_or(e, "ctime_ns", -1) == ns_of(&st->st_ctim);
}

/*
 * cached_load reads the cache into b and puts into entries (path ->
 * entry) its well-formed entries.  A cache that is missing, not a regular
 * file this user owns and alone can write, too large or not one, holds
 * none (b is then empty): it is written again after the full verify.
 */
static void
cached_load(const char *cache, struct buf *b, struct smap *entries,
    struct arena *a)
{
	const struct jval *files, *e, *h;
	struct stat st;
	struct jval *v;
	char err[64];
	size_t i;
	int fd;

	fd = open(cache, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    owned_check(cache, &st) < 0 ||
	    read_fd(fd, cache, VERIFIED_MAX, b) < 0 ||
	    !(v = json_parse(a, b->p ? b->p : "", b->len, err, sizeof err)) ||
	    !json_is_str(json_get(v, "schema_version"), VERIFIED_SCHEMA) ||
	    !(files = json_get(v, "files")) || files->t != J_OBJECT) {
		buf_clear(b);
		goto out;
	}
	for (i = 0; i < files->n; i++) {
		const char *rel = files->u.m[i].k;

		e = files->u.m[i].v;
		h = json_get(e, "sha256");
		if (strlen(rel) == files->u.m[i].kn && model_path_ok(rel) == 0 &&
		    h && h->t == J_STRING && h->n == SHA256_HEX &&
		    model_hex_ok(h->u.s, SHA256_HEX) == 0)
			smap_put(entries, rel, files->u.m[i].kn, (void *)e);
	}
out:
	if (fd >= 0)
		close(fd);
}

/*
 * cached_add: rel's entry, unless it changed too recently to keep; one
 * taken from the cache was kept when it had not, and is the same file
 */
static void
cached_add(struct buf *rec, const char *rel, const struct stat *st,
    int64_t looked, int kept, const char *hex)
{
	if (!kept && ns_of(&st->st_ctim) > looked - RACY_NS)
		return;
	if (rec->p[rec->len - 1] != '{')
		buf_addc(rec, ',');
	json_canon_str(rec, rel, strlen(rel));
	buf_printf(rec, ":{\"ctime_ns\":%lld,\"dev\":%lld,\"ino\":%lld,"
	    "\"mtime_ns\":%lld,\"sha256\":\"%s\",\"size\":%lld}",
	    (long long)ns_of(&st->st_ctim), (long long)st->st_dev,
	    (long long)st->st_ino, (long long)ns_of(&st->st_mtim), hex,
	    (long long)st->st_size);
}

/*
 * verify is sums_verify_known that, when rec is not NULL, takes a file
 * whose identity is that of its entry in entries at the entry's digest,
 * and appends to rec the entry of each file it found right (cached_add)
 * with the identity it had before it was read
 */
static int
verify(const char *dir, const struct smap *known, const struct smap *entries,
    struct buf *rec, int64_t *files, int64_t *bytes)
{
	const struct jval *e = NULL;
	struct model_files l = { 0 };
	struct smap m;
	struct buf b;
	struct stat st;
	struct timespec now;
	char hex[SHA256_HEX + 1], *f;
	int64_t sz, total = 0, looked = 0;
	size_t i, listed = 0;
	int rc = -1, have = 0;

	buf_init(&b);
	smap_init(&m);
	if (sums_read(dir, &m, &b) < 0 || walk(dir, NULL, &l) < 0)
		goto out;
	for (i = 0; i < l.n; i++) {
		const char *want;

		if (!strcmp(l.v[i], "SHA256SUMS"))
			continue;
		listed++;
		want = smap_get(&m, l.v[i], strlen(l.v[i]));
		if (!want) {
			hw_err_set(HW_EXIT_DATA, "'%s/%s': not in SHA256SUMS",
			    dir, l.v[i]);
			goto out;
		}
		if (rec) {
			f = path_join(dir, l.v[i]);
			have = lstat(f, &st) == 0 &&
			    clock_gettime(CLOCK_REALTIME, &now) == 0;
			looked = ns_of(&now);
			e = have ? smap_get(entries, l.v[i], strlen(l.v[i])) :
			    NULL;
			free(f);
		}
		if (e && same(e, &st)) {
			memcpy(hex, json_get_str(e, "sha256"), sizeof hex);
			sz = (int64_t)st.st_size;
			rc = 0;
		} else {
			e = NULL;
			rc = digest_of(dir, l.v[i], known, hex, &sz);
		}
		if (rc < 0 || strcmp(hex, want)) {
			if (rc == 0)
				hw_err_set(HW_EXIT_DATA, "'%s/%s': SHA-256 "
				    "differs from SHA256SUMS", dir, l.v[i]);
			rc = -1;
			goto out;
		}
		if (rec && have)
			cached_add(rec, l.v[i], &st, looked, e != NULL, hex);
		total += sz;
	}
	if (listed != m.used) {
		hw_err_set(HW_EXIT_DATA, "'%s': a file in SHA256SUMS is "
		    "missing", dir);
		rc = -1;
		goto out;
	}
	if (files)
		*files = (int64_t)listed;
	if (bytes)
		*bytes = total;
	rc = 0;
out:
	model_files_release(&l);
	smap_release(&m);
	buf_release(&b);
	return rc;
}

int
sums_verify_known(const char *dir, const struct smap *known, int64_t *files,
    int64_t *bytes)
{
	return verify(dir, known, NULL, NULL, files, bytes);
}

int
sums_verify_cached(const char *dir, const char *cache, int64_t *files,
    int64_t *bytes)
{
	struct smap entries;
	struct arena a;
	struct buf rec, was;
	int rc;

	smap_init(&entries);
	arena_init(&a);
	buf_init(&rec);
	buf_init(&was);
	cached_load(cache, &was, &entries, &a);
	buf_adds(&rec, "{\"files\":{");
	rc = verify(dir, NULL, &entries, &rec, files, bytes);
	buf_adds(&rec, "},\"schema_version\":\"" VERIFIED_SCHEMA "\"}\n");
	/*
	 * derived data: one that cannot be written costs the next verify;
	 * one that would not change is not written again
	 */
	if (rc == 0 && (rec.len != was.len || memcmp(rec.p, was.p, rec.len)))
		(void)unsynced_replace(cache, rec.p, rec.len);
	smap_release(&entries);
	arena_release(&a);
	buf_release(&rec);
	buf_release(&was);
	return rc;
}

int
rm_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int rc = 0;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot stat '%s'",
		    path);
	if (!S_ISDIR(st.st_mode))
		return unlink(path) < 0 ? hw_err_sys("cannot remove '%s'",
		    path) : 0;
	if (!(d = opendir(path)))
		return hw_err_sys("cannot open '%s'", path);
	while (rc == 0 && (e = readdir(d))) {
		char *c;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		c = path_join(path, e->d_name);
		rc = rm_tree(c);
		free(c);
	}
	closedir(d);
	if (rc == 0 && rmdir(path) < 0)
		rc = hw_err_sys("cannot remove '%s'", path);
	return rc;
}

int
model_mkstore(const char *models)
{
	char *p = xstrdup(models), *s = p;
	int rc = 0;

	while (rc == 0 && s) {
		s = strchr(s + 1, '/');
		if (s)
			*s = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = hw_err_sys("cannot create '%s'", p);
		else
			rc = ensure_dir(p);
		if (s)
			*s = '/';
	}
	free(p);
	return rc;
}
