/* tree.c - a skill directory's files and its exact tree digest */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wctype.h>

#include "skill/skill.h"

struct walk {
	struct skill_tree *t;
	size_t cap;
	const char *what;
};

static int
refuse(const struct walk *w, const char *path, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid skill '%s': '%s' %s", w->what,
	    path, why);
}

const char *
skill_role(const char *path)
{
	if (!strcmp(path, "SKILL.md"))
		return "definition";
	if (!strcmp(path, ".mcp.json"))
		return "mcp-config";
	if (!strncmp(path, "scripts/", 8))
		return "script";
	if (!strncmp(path, "references/", 11))
		return "reference";
	if (!strncmp(path, "assets/", 7))
		return "asset";
	return "other";
}

static int
same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	    a->st_size == b->st_size &&
	    a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	    a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	    a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	    a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* read_one hashes the regular file name of dir, seen as st by the walk */
static int
read_one(struct walk *w, int dir, const char *name, const char *path,
    const struct stat *st)
{
	struct skill_file *f;
	struct stat a, b;
	struct sha256 h;
	unsigned char d[32], chunk[65536];
	ssize_t r;
	int fd;

	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return hw_err_sys("cannot open '%s'", path);
	/* the same file as the walk saw, before a byte of it is read */
	if (fstat(fd, &a) < 0 || a.st_dev != st->st_dev ||
	    a.st_ino != st->st_ino) {
		close(fd);
		return refuse(w, path, "changed while it was read");
	}
	sha256_init(&h);
	while ((r = read(fd, chunk, sizeof chunk)) > 0)
		sha256_update(&h, chunk, (size_t)r);
	sha256_final(&h, d);
	sha256_release(&h);
	if (r < 0 || fstat(fd, &b) < 0) {
		close(fd);
		return hw_err_sys("cannot read '%s'", path);
	}
	close(fd);
	/* and unchanged from the walk's look at it to the last byte */
	if (!same_stat(st, &b))
		return refuse(w, path, "changed while it was read");
	if (w->t->n == w->cap)
		w->t->files = xrealloc(w->t->files, (w->cap = w->cap * 2 + 16) *
		    sizeof *w->t->files);
	f = &w->t->files[w->t->n++];
	memset(f, 0, sizeof *f);
	f->path = xstrdup(path);
	f->role = skill_role(path);
	f->executable = (st->st_mode & 0111) != 0;
	f->size = (uint64_t)st->st_size;
	hex_encode(d, 32, f->sha256);
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
	return 0;
}

static int walk_dir(struct walk *w, int dir, const char *prefix);

static int
entry(struct walk *w, int dir, const char *name, const char *path)
{
	struct stat st;
	int sub, rc;

	if (!valid_utf8(name, strlen(name)))
		return refuse(w, path, "is not a UTF-8 name");
	if (!strcmp(name, ".git"))
		return refuse(w, path, "is a .git component");
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return hw_err_sys("cannot stat '%s'", path);
	if (S_ISLNK(st.st_mode))
		return refuse(w, path, "is a symlink");
	if (S_ISDIR(st.st_mode)) {
		sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		if (sub < 0)
			return hw_err_sys("cannot open '%s'", path);
		rc = walk_dir(w, sub, path);
		close(sub);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
		return refuse(w, path, "is a special file");
	if (st.st_nlink != 1)
		return refuse(w, path, "is a hard link");
	if ((st.st_mode & 0111) && strncmp(path, "scripts/", 8))
		return refuse(w, path, "is executable outside scripts/");
	if ((uint64_t)st.st_size > SKILL_MAX_FILE)
		return refuse(w, path, "is over 8 MiB");
	if (w->t->n >= SKILL_MAX_FILES)
		return refuse(w, path, "is past the 256 files a skill may "
		    "have");
	if ((w->t->total += (uint64_t)st.st_size) > SKILL_MAX_TOTAL)
		return refuse(w, path, "takes the skill past 64 MiB");
	return read_one(w, dir, name, path, &st);
}

static int
walk_dir(struct walk *w, int dir, const char *prefix)
{
	int fd = dup(dir), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	char *path;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return hw_err_sys("cannot list '%s'", prefix[0] ? prefix :
		    w->what);
	}
	while (rc == 0 && (errno = 0, e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		path = prefix[0] ? xasprintf("%s/%s", prefix, e->d_name) :
		    xstrdup(e->d_name);
		rc = entry(w, dir, e->d_name, path);
		free(path);
	}
	if (rc == 0 && errno)
		rc = hw_err_sys("cannot list '%s'", w->what);
	closedir(d);
	return rc;
}

int
skill_path_cmp(const char *a, const char *b)
{
	for (;;) {
		size_t x = strcspn(a, "/"), y = strcspn(b, "/");
		int c = memcmp(a, b, x < y ? x : y);

		if (c)
			return c;
		if (x != y)
			return x < y ? -1 : 1;
		if (!a[x] || !b[y])
			return !a[x] && !b[y] ? 0 : !a[x] ? -1 : 1;
		a += x + 1;
		b += y + 1;
	}
}

static int
file_cmp(const void *x, const void *y)
{
	return skill_path_cmp(((const struct skill_file *)x)->path,
	    ((const struct skill_file *)y)->path);
}

/* fold: path with each character lowercased (simple case folding) */
char *
skill_fold(const char *path)
{
	static locale_t loc;
	struct buf b;
	uint32_t cp;
	size_t n = strlen(path), i = 0, len;

	if (!loc)
		loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	buf_init(&b);
	while (i < n) {
		len = utf8_len(path + i, n - i);
		utf8_decode(path + i, n - i, &cp);
		buf_add_utf8(&b, loc ? (uint32_t)towlower_l((wint_t)cp, loc) :
		    cp < 128 ? (uint32_t)towlower((wint_t)cp) : cp);
		i += len ? len : 1;
	}
	return buf_cstr(&b);
}

static int
fold_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int
collisions(const struct walk *w)
{
	char **f = xcalloc(w->t->n + 1, sizeof *f);
	size_t i;
	int rc = 0;

	for (i = 0; i < w->t->n; i++)
		f[i] = skill_fold(w->t->files[i].path);
	qsort(f, w->t->n, sizeof *f, fold_cmp);
	for (i = 1; i < w->t->n && rc == 0; i++)
		if (!strcmp(f[i - 1], f[i]))
			rc = refuse(w, f[i], "collides with another path after "
			    "case folding");
	for (i = 0; i < w->t->n; i++)
		free(f[i]);
	free(f);
	return rc;
}

void
skill_tree_json(const struct skill_tree *t, struct buf *b)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < t->n; i++) {
		const struct skill_file *f = &t->files[i];

		buf_adds(b, i ? ",{\"executable\":" : "{\"executable\":");
		buf_adds(b, f->executable ? "true" : "false");
		buf_adds(b, ",\"path\":");
		json_canon_str(b, f->path, strlen(f->path));
		buf_adds(b, ",\"role\":");
		json_canon_str(b, f->role, strlen(f->role));
		buf_printf(b, ",\"sha256\":\"%s\",\"size\":%llu}", f->sha256,
		    (unsigned long long)f->size);
	}
	buf_addc(b, ']');
}

int
skill_tree_read(int dirfd, const char *what, struct skill_tree *t)
{
	struct walk w = { t, 0, what };
	struct buf b;

	memset(t, 0, sizeof *t);
	if (walk_dir(&w, dirfd, "") < 0 || collisions(&w) < 0) {
		skill_tree_release(t);
		return -1;
	}
	if (t->n)	/* an empty tree has no array to sort */
		qsort(t->files, t->n, sizeof *t->files, file_cmp);
	buf_init(&b);
	skill_tree_json(t, &b);
	sha256_hex(b.p, b.len, t->tree_sha256);
	buf_release(&b);
	return 0;
}

void
skill_tree_release(struct skill_tree *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->files[i].path);
	free(t->files);
	memset(t, 0, sizeof *t);
}
