/* inspect.c - bounded, read-only views of the workspace: paths, tree, file */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inspect/inspect.h"

#define OPEN_DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | \
	O_NONBLOCK)
#define OPEN_FILE (O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)

/* check_path: refuses a bad or reserved request path with its code */
static int
check_path(const char *path)
{
	const char *s = path, *e;
	size_t n;

	if (path_ok(path) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid path '%s': "
		    "HW-WORKSPACE-001 not a normalized project-relative path",
		    path);
	for (; *s; s = e + !!*e) {
		e = s + strcspn(s, "/");
		n = (size_t)(e - s);
		if (path_reserved(s, n))
			return hw_err_set(HW_EXIT_USAGE, "reserved path '%s': "
			    "HW-WORKSPACE-002 .git and .heartwood are private",
			    path);
	}
	return 0;
}

/*
 * open_dir opens directory path (already checked) under root one
 * component at a time, refusing symlinks; "" or "." is root itself.
 * Errors name shown, the path that was asked for.
 */
static int
open_dir(int root, const char *path, const char *shown)
{
	char *copy = xstrdup(path), *s, *e;
	struct stat st;
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 0), next;

	if (fd < 0) {
		free(copy);
		return hw_err_sys("cannot open '.'");
	}
	for (s = copy; *s && strcmp(s, "."); s = e) {
		e = s + strcspn(s, "/");
		if (*e)
			*e++ = '\0';
		if (fstatat(fd, s, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto missing;
		if (S_ISLNK(st.st_mode)) {
			hw_err_set(HW_EXIT_FAIL, "symlink in path '%s': "
			    "HW-WORKSPACE-003 symlinks are not followed",
			    shown);
			goto fail;
		}
		if (!S_ISDIR(st.st_mode)) {
			hw_err_set(HW_EXIT_NOINPUT, "not a directory '%s': "
			    "HW-WORKSPACE-004", shown);
			goto fail;
		}
		if ((next = openat(fd, s, OPEN_DIR)) < 0)
			goto missing;
		close(fd);
		fd = next;
	}
	free(copy);
	return fd;
missing:
	hw_err_set(HW_EXIT_NOINPUT, "cannot open '%s': HW-WORKSPACE-005 %s",
	    shown, strerror(errno));
fail:
	close(fd);
	free(copy);
	return -1;
}

struct jval *
inspect_strn(struct arena *a, const char *s, size_t n)
{
	return s ? json_strn(a, s, n) : json_new(a, J_NULL);
}

struct jval *
inspect_limits(struct arena *a)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "max_tree_entries", json_int(a, INSPECT_TREE_ENTRIES));
	json_add(a, o, "max_tree_depth", json_int(a, INSPECT_TREE_DEPTH));
	json_add(a, o, "max_file_bytes", json_int(a, INSPECT_FILE_BYTES));
	json_add(a, o, "max_file_lines", json_int(a, INSPECT_FILE_LINES));
	json_add(a, o, "max_change_entries", json_int(a, INSPECT_CHANGES));
	json_add(a, o, "max_diff_bytes", json_int(a, INSPECT_DIFF_BYTES));
	return o;
}

/* ---- tree ---- */

struct walk {
	struct arena *a;
	struct jval *entries;
	size_t left;		/* entries still allowed */
	int depth;		/* the requested depth */
	int truncated;
};

/* the names of one directory, at most k of them */
struct names {
	char **v;
	size_t n, k;
};

static int
cmp_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/*
 * read_names reads at most k visible names of directory fd, and sorts
 * them by code point: the reference's bound on what one directory costs,
 * so a directory of a million entries stops as soon as one of a thousand.
 * *more is set when there were others, *bad when a name was invalid.
 * With k 0 it only answers whether anything is visible.
 */
static int
read_names(int fd, size_t k, struct names *h, int *more, int *bad)
{
	struct dirent *d;
	DIR *dir;
	int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);

	h->v = xcalloc(k ? k : 1, sizeof *h->v);
	h->n = 0, h->k = k;
	if (dfd < 0 || !(dir = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((d = readdir(dir))) {
		size_t n = strlen(d->d_name);

		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    path_reserved(d->d_name, n))
			continue;
		if (!path_segment_ok(d->d_name, n)) {
			*bad = 1;
			continue;
		}
		if (h->n == k) {
			*more = 1;
			break;
		}
		h->v[h->n++] = xstrdup(d->d_name);
	}
	closedir(dir);
	if (h->n)
		qsort(h->v, h->n, sizeof *h->v, cmp_names);
	return 0;
}

static void
names_release(struct names *h)
{
	size_t i;

	for (i = 0; i < h->n; i++)
		free(h->v[i]);
	free(h->v);
}

static void walk_dir(struct walk *w, int fd, const char *prefix, int depth);

/* add_entry lists one child of fd and descends into it if it may */
static void
add_entry(struct walk *w, int fd, const char *path, const char *name,
    int depth)
{
	struct jval *e = json_obj(w->a), *kind;
	struct stat st;
	int sub, more = 0, bad = 0;
	struct names h;

	json_add(w->a, e, "path", json_str(w->a, path));
	json_add(w->a, e, "name", json_str(w->a, name));
	json_add(w->a, e, "depth", json_int(w->a, depth));
	json_add(w->a, e, "kind", kind = json_str(w->a, "unsupported"));
	json_add(w->a, e, "size_bytes", json_new(w->a, J_NULL));
	json_push(w->a, w->entries, e);
	w->left--;
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		return;
	if (S_ISREG(st.st_mode)) {
		kind->u.s = "file", kind->n = 4;
		json_set(w->a, e, "size_bytes", json_int(w->a, st.st_size));
		return;
	}
	if ((sub = openat(fd, name, OPEN_DIR)) < 0)
		return;
	kind->u.s = "directory", kind->n = 9;
	if (depth < w->depth)
		walk_dir(w, sub, path, depth + 1);
	else if (read_names(sub, 0, &h, &more, &bad) == 0) {
		if (more)
			w->truncated = 1;
		names_release(&h);
	}
	close(sub);
}

/* walk_dir lists fd's children (at depth depth), pre-order */
static void
walk_dir(struct walk *w, int fd, const char *prefix, int depth)
{
	struct names h;
	int more = 0, bad = 0;
	size_t i;

	if (read_names(fd, w->left + 1, &h, &more, &bad) < 0) {
		w->truncated = 1;
		return;
	}
	if (more || bad)
		w->truncated = 1;
	for (i = 0; i < h.n; i++) {
		char *path;

		if (!w->left) {
			w->truncated = 1;
			break;
		}
		path = *prefix ? xasprintf("%s/%s", prefix, h.v[i]) :
		    xstrdup(h.v[i]);
		add_entry(w, fd, path, h.v[i], depth);
		free(path);
	}
	names_release(&h);
}

static void
emit(struct arena *a, struct jval *o, struct buf *out)
{
	json_add(a, o, "limits", inspect_limits(a));
	json_canon(out, o);
	buf_addc(out, '\n');
}

int
inspect_tree(int root, const char *dir, int depth, struct buf *out)
{
	struct arena a;
	struct walk w;
	struct jval *o;
	const char *rel = strcmp(dir, ".") ? dir : "";
	int fd;

	if (depth < 1 || depth > INSPECT_TREE_DEPTH)
		return hw_err_set(HW_EXIT_USAGE, "invalid depth '%d': "
		    "HW-WORKSPACE-006 expected 1 to %d", depth,
		    INSPECT_TREE_DEPTH);
	if (check_path(dir) < 0 || (fd = open_dir(root, dir, dir)) < 0)
		return -1;
	arena_init(&a);
	w = (struct walk){ .a = &a, .entries = json_new(&a, J_ARRAY),
	    .left = INSPECT_TREE_ENTRIES, .depth = depth };
	walk_dir(&w, fd, rel, 1);
	close(fd);
	o = json_obj(&a);
	json_add(&a, o, "schema_version",
	    json_str(&a, "heartwood.workspace-tree.v1"));
	json_add(&a, o, "path", json_str(&a, *rel ? rel : "."));
	json_add(&a, o, "status", json_str(&a, w.truncated ? "truncated" :
	    "available"));
	json_add(&a, o, "entries", w.entries);
	json_add(&a, o, "truncated", json_bool(&a, w.truncated));
	emit(&a, o, out);
	arena_release(&a);
	return 0;
}

/* ---- file ---- */

/*
 * line_break: the length of the line break at p (Python's splitlines:
 * \n \r \r\n \v \f \x1c-\x1e U+0085 U+2028 U+2029), 0 if none.
 */
static size_t
line_break(const unsigned char *p, size_t n)
{
	if (*p == '\r')
		return n > 1 && p[1] == '\n' ? 2 : 1;
	if (*p == '\n' || *p == '\v' || *p == '\f' || (*p >= 0x1c &&
	    *p <= 0x1e))
		return 1;
	if (n >= 2 && p[0] == 0xc2 && p[1] == 0x85)
		return 2;
	if (n >= 3 && p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 ||
	    p[2] == 0xa9))
		return 3;
	return 0;
}

void
inspect_text(struct arena *a, const char *s, size_t n, int more,
    size_t max, struct ifile *f)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, lines = 0, br, last = 0;
	uint32_t c;
	int k;

	if (n > max)
		n = max, more = 1;
	if (memchr(s, '\0', n)) {
		f->status = "binary";
		f->message = "the file contains a NUL byte";
		return;
	}
	while (i < n && lines < INSPECT_FILE_LINES) {
		if ((k = utf8_decode(p + i, n - i, &c)) == 0 || (k < 0 && !more)) {
			f->status = "unsupported";
			f->message = "the file is not valid UTF-8";
			return;
		}
		if (k < 0)
			break;	/* a character split at the cut */
		if ((br = line_break(p + i, n - i)) > 0) {
			lines++;
			last = i += br;
		} else
			i += (size_t)k;
	}
	if (i > last)
		lines++;	/* a last line without a break */
	if (i < n)
		more = 1;
	f->truncated = more;
	f->status = more ? "truncated" : "available";
	f->text = arena_strndup(a, s, i);
	f->len = i;
	f->lines = lines;
}

/* split_path: the parent directory (malloc'd, "" for the root) and name */
static char *
split_path(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	return slash ? strndup(path, (size_t)(slash - path)) : xstrdup("");
}

int
inspect_regular(int root, const char *path)
{
	const char *name;
	char *parent = split_path(path, &name);
	struct stat st;
	int fd, r = -1;

	if (!parent)
		return -1;
	if ((fd = open_dir(root, parent, path)) >= 0) {
		if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = errno == ENOENT ? 0 : -1;
		else
			r = S_ISREG(st.st_mode) ? 1 : -1;
		close(fd);
	} else if (hw_err_code() == HW_EXIT_NOINPUT)
		r = 0;
	free(parent);
	return r;
}

int
inspect_same(int root, const char *path, const struct ifile *f)
{
	const char *name;
	char *parent = split_path(path, &name);
	struct stat st;
	int fd, r = 0;

	if (parent && (fd = open_dir(root, parent, path)) >= 0) {
		r = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISREG(st.st_mode) && st.st_dev == f->dev &&
		    st.st_ino == f->ino && st.st_size == f->size &&
		    (int64_t)st.st_mtim.tv_sec * 1000000000 +
		    st.st_mtim.tv_nsec == f->mtime_ns;
		close(fd);
	}
	free(parent);
	return r;
}

/* read_open reads up to max + 1 bytes of name in dir fd into b */
static void
read_open(int dfd, const char *name, const struct stat *was, size_t max,
    struct buf *b, struct ifile *f)
{
	struct stat st;
	ssize_t r;
	int fd = openat(dfd, name, OPEN_FILE);

	if (fd < 0) {
		f->status = errno == ENOENT ? "unavailable" : "unsupported";
		f->message = "the file cannot be opened";
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_ino != was->st_ino || st.st_dev != was->st_dev) {
		f->status = "unavailable";
		f->message = "the file changed while it was opened";
		goto out;
	}
	f->size = st.st_size;
	f->dev = st.st_dev, f->ino = st.st_ino;
	f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 +
	    st.st_mtim.tv_nsec;
	buf_reserve(b, max + 1);
	while (b->len < max + 1 && (r = read(fd, b->p + b->len,
	    max + 1 - b->len)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			f->status = "unavailable";
			f->message = "the file cannot be read";
			goto out;
		}
		b->len += (size_t)r;
	}
	f->status = NULL;
out:
	close(fd);
}

void
inspect_read(struct arena *a, int root, const char *path, size_t max,
    struct ifile *f)
{
	const char *name;
	char *parent = split_path(path, &name);
	struct stat st;
	struct buf b;
	int dfd;

	memset(f, 0, sizeof *f);
	f->size = -1;
	f->status = "unavailable";
	f->message = "the file does not exist";
	buf_init(&b);
	if (!parent || (dfd = open_dir(root, parent, path)) < 0)
		goto out;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		;
	else if (!S_ISREG(st.st_mode)) {
		f->status = "unsupported";
		f->message = S_ISLNK(st.st_mode) ? "the path is a symlink" :
		    "the path is not a regular file";
	} else {
		read_open(dfd, name, &st, max, &b, f);
		if (!f->status) {
			f->bytes_read = b.len > max ? max : b.len;
			f->message = NULL;
			inspect_text(a, b.p ? b.p : "", b.len, 0, max, f);
		}
	}
	close(dfd);
out:
	buf_release(&b);
	free(parent);
}

int
inspect_file(int root, const char *path, struct buf *out)
{
	struct arena a;
	struct ifile f;
	struct jval *o;
	const char *name;
	char *parent;
	int fd;

	if (check_path(path) < 0)
		return -1;
	arena_init(&a);
	if (!*path || !strcmp(path, ".")) {
		memset(&f, 0, sizeof f);
		f.size = -1;
		f.status = "unsupported";
		f.message = "the project root is a directory";
	} else {
		/* a symlink (or one on the way) is refused, not reported */
		parent = split_path(path, &name);
		fd = parent ? open_dir(root, parent, path) : -1;
		free(parent);
		if (fd < 0 && hw_err_code() != HW_EXIT_NOINPUT) {
			arena_release(&a);
			return -1;
		}
		if (fd >= 0) {
			struct stat st;

			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode)) {
				close(fd);
				arena_release(&a);
				return hw_err_set(HW_EXIT_FAIL, "symlink '%s': "
				    "HW-WORKSPACE-003 symlinks are not "
				    "followed", path);
			}
			close(fd);
		}
		inspect_read(&a, root, path, INSPECT_FILE_BYTES, &f);
	}
	o = json_obj(&a);
	json_add(&a, o, "schema_version",
	    json_str(&a, "heartwood.workspace-file.v1"));
	json_add(&a, o, "path", json_str(&a, *path ? path : "."));
	json_add(&a, o, "status", json_str(&a, f.status));
	json_add(&a, o, "content", inspect_strn(&a, f.text, f.len));
	json_add(&a, o, "size_bytes", f.size < 0 ? json_new(&a, J_NULL) :
	    json_int(&a, f.size));
	json_add(&a, o, "bytes_read", json_int(&a, (int64_t)f.bytes_read));
	json_add(&a, o, "line_count", json_int(&a, (int64_t)f.lines));
	json_add(&a, o, "truncated", json_bool(&a, f.truncated));
	json_add(&a, o, "message", inspect_strn(&a, f.message,
	    f.message ? strlen(f.message) : 0));
	emit(&a, o, out);
	arena_release(&a);
	return 0;
}
