/* file.c - durable file primitives: atomic replace, append, unlink, reads */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

int
fault_point(const char *name)
{
	static long at = -1, count;
	static int trace, torn;
	const char *s;

	if (at < 0) {
		s = getenv("HW_FAULT_KILL_AT");
		at = s ? atol(s) : 0;
		s = getenv("HW_FAULT_TRACE");
		trace = s && *s;
		s = getenv("HW_FAULT_TORN");
		torn = s && *s;
	}
	count++;
	if (trace)
		fprintf(stderr, "fault-point %ld %s\n", count, name);
	if (at > 0 && count == at) {
		if (torn && strstr(name, "-append"))
			return 1;
		fault_kill();
	}
	return 0;
}

void
fault_kill(void)
{
	kill(getpid(), SIGKILL);
	pause();
}

char *
path_join(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	char *p = xmalloc(na + nb + 2);

	memcpy(p, a, na);
	p[na] = '/';
	memcpy(p + na + 1, b, nb + 1);
	return p;
}

static char *
dir_of(const char *path)
{
	char *tmp = xstrdup(path), *d = xstrdup(dirname(tmp));

	free(tmp);
	return d;
}

int
fsync_parent(const char *path)
{
	char *dir = dir_of(path);
	int rc = fsync_dir(dir);

	free(dir);
	return rc;
}

int
fsync_dir(const char *dirpath)
{
	int fd, r;

	fd = open(dirpath, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return hw_err_sys("cannot open directory '%s'", dirpath);
	fault_point("fsync-dir");
	r = fsync(fd);
	if (r < 0 && errno != EBADF && errno != EINVAL && errno != ENOSYS &&
	    errno != ENOTSUP) {
		hw_err_sys("cannot sync directory '%s'", dirpath);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
write_all(int fd, const void *p, size_t n, const char *what)
{
	const char *c = p;
	ssize_t w;

	while (n > 0) {
		w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return hw_err_sys("cannot write '%s'", what);
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* temp_file: temp_write, synced only when sync */
static char *
temp_file(const char *path, const void *p, size_t n, int srcfd, int sync)
{
	char *dir = dir_of(path), *tmp = xstrdup(path), *tmpl, chunk[65536];
	ssize_t r = 0;
	int fd;

	tmpl = xasprintf("%s/.%s-XXXXXX", dir, basename(tmp));
	free(tmp);
	free(dir);
	if ((fd = mkostemp(tmpl, O_CLOEXEC)) < 0) {
		hw_err_sys("cannot create a temporary file for '%s'", path);
		free(tmpl);
		return NULL;
	}
	if (fchmod(fd, 0600) < 0)
		goto fail;
	fault_point("atomic-write");
	if (p && write_all(fd, p, n, path) < 0)
		goto fail;
	while (srcfd >= 0 && (r = read(srcfd, chunk, sizeof chunk)) > 0)
		if (write_all(fd, chunk, (size_t)r, path) < 0)
			goto fail;
	if (sync)
		fault_point("atomic-fsync");
	if (r < 0 || (sync && fsync(fd) < 0))
		goto fail;
	close(fd);
	return tmpl;
fail:
	if (errno)
		hw_err_sys("cannot write '%s'", tmpl);
	close(fd);
	unlink(tmpl);
	free(tmpl);
	return NULL;
}

char *
temp_write(const char *path, const void *p, size_t n, int srcfd)
{
	return temp_file(path, p, n, srcfd, 1);
}

/* replace: atomic_replace, with no sync at all when !sync */
static int
replace(const char *path, const void *p, size_t n, int sync)
{
	char *tmpl;
	struct stat st;
	int rc = 0;

	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		return hw_err_set(HW_EXIT_IO, "refusing to replace '%s': not "
		    "a regular file", path);
	if (!(tmpl = temp_file(path, p, n, -1, sync)))
		return -1;
	fault_point("atomic-rename");
	if (rename(tmpl, path) < 0) {
		rc = hw_err_sys("cannot rename into '%s'", path);
		unlink(tmpl);
	} else if (sync) {
		rc = fsync_parent(path);
	}
	free(tmpl);
	return rc;
}

int
atomic_replace(const char *path, const void *p, size_t n)
{
	return replace(path, p, n, 1);
}

int
unsynced_replace(const char *path, const void *p, size_t n)
{
	return replace(path, p, n, 0);
}

int
atomic_write_json(const char *path, const struct jval *v)
{
	struct buf b;
	int rc;

	buf_init(&b);
	json_canon(&b, v);
	buf_addc(&b, '\n');
	rc = atomic_replace(path, b.p, b.len);
	buf_release(&b);
	return rc;
}

int
read_fd(int fd, const char *name, size_t max, struct buf *b)
{
	char chunk[65536];
	ssize_t r;

	buf_clear(b);
	for (;;) {
		r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return hw_err_sys("cannot read '%s'", name);
		if (r == 0)
			break;
		if (b->len + (size_t)r > max)
			return hw_err_set(HW_EXIT_DATA, "'%s' is larger than "
			    "%zu bytes", name, max);
		buf_add(b, chunk, (size_t)r);
	}
	buf_cstr(b);
	return 0;
}

int
read_file(const char *path, size_t max, struct buf *b)
{
	struct stat st;
	int fd, rc;

	buf_clear(b);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		if (e == ELOOP)
			return hw_err_set(HW_EXIT_DATA, "refusing to read "
			    "'%s': it is a symbolic link", path);
		hw_err_sys("cannot open '%s'", path);
		if (e == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
		errno = e;
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hw_err_set(HW_EXIT_DATA, "refusing to read '%s': not "
		    "a regular file", path);
	}
	rc = read_fd(fd, path, max, b);
	close(fd);
	return rc;
}

struct jval *
read_json_file(const char *path, size_t max, struct arena *a)
{
	struct buf b;
	struct jval *v = NULL;
	char err[128];

	buf_init(&b);
	if (read_file(path, max, &b) < 0)
		goto out;
	if (!valid_utf8(b.p, b.len)) {
		hw_err_set(HW_EXIT_DATA, "'%s' is not valid UTF-8", path);
		goto out;
	}
	v = json_parse(a, b.p, b.len, err, sizeof err);
	if (!v)
		hw_err_set(HW_EXIT_DATA, "'%s' is not valid JSON: %s", path,
		    err);
	else if (v->t != J_OBJECT) {
		hw_err_set(HW_EXIT_DATA, "'%s' is not a JSON object", path);
		v = NULL;
	}
	errno = 0;
out:
	buf_release(&b);
	return v;
}

int
open_append(const char *path, int *created)
{
	struct stat st;
	int fd;

	*created = 0;
	fd = open(path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL |
		    O_NOFOLLOW | O_CLOEXEC, 0600);
		*created = fd >= 0;
	}
	if (fd < 0 && errno == ELOOP)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
		    "symbolic link", path);
	if (fd < 0)
		return hw_err_sys("cannot open '%s' for appending", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hw_err_set(HW_EXIT_DATA, "refusing to append to '%s': "
		    "not a regular file", path);
	}
	if (owned_check(path, &st) < 0) {
		close(fd);
		return -1;
	}
	if (fchmod(fd, 0600) < 0) {
		close(fd);
		return hw_err_sys("cannot chmod '%s'", path);
	}
	return fd;
}

int
owned_check(const char *path, const struct stat *st)
{
	unsigned mode = (unsigned)st->st_mode & 07777;

	if (st->st_uid != geteuid())
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': owned by uid "
		    "%lu, not by the effective uid %lu", path,
		    (unsigned long)st->st_uid, (unsigned long)geteuid());
	if (mode & 022)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': group or "
		    "others can write it (mode %04o)", path, mode);
	return 0;
}

int
owned_path(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot stat '%s'",
		    path);
	return owned_check(path, &st);
}

int
durable_unlink(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot stat '%s'",
		    path);
	if (!S_ISREG(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing to remove '%s': not "
		    "a regular file", path);
	fault_point("unlink");
	if (unlink(path) < 0)
		return hw_err_sys("cannot remove '%s'", path);
	return fsync_parent(path);
}

int
ensure_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode))
			return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is "
			    "a symbolic link", path);
		if (!S_ISDIR(st.st_mode))
			return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a "
			    "directory", path);
		return owned_check(path, &st);
	}
	if (errno != ENOENT)
		return hw_err_sys("cannot stat '%s'", path);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create directory '%s'", path);
	if (chmod(path, 0700) < 0)
		return hw_err_sys("cannot chmod '%s'", path);
	return fsync_parent(path);
}

/* home_dir: $HOME when absolute, else the password database's entry */
static char *
home_dir(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return xstrdup(h);
	if ((pw = getpwuid(geteuid())) && pw->pw_dir && pw->pw_dir[0] == '/')
		return xstrdup(pw->pw_dir);
	return NULL;
}

char *
user_dir(const char *var, const char *rel)
{
	const char *x = getenv(var);
	char *home, *d;

	if (x && x[0] == '/')
		return xstrdup(x);
	if (!(home = home_dir())) {
		hw_err_set(HW_EXIT_NOINPUT, "cannot find the user's %s "
		    "directory: neither %s nor HOME is an absolute path",
		    strcmp(var, "XDG_STATE_HOME") ? "configuration" : "state",
		    var);
		return NULL;
	}
	d = path_join(home, rel);
	free(home);
	return d;
}
