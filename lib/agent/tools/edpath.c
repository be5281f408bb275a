/*
 * edpath.c - where the file editor's paths lead: a path is resolved with
 * realpath(3), checked to lie inside the project root and outside
 * .heartwood (or under a directory the editor only views: an active
 * skill's artifact, a bundled skill), and then reached again one
 * component at a time with O_NOFOLLOW, so that nothing swapped in
 * between can lead it elsewhere.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/tools/tools.h"
#include "agent/tools/edpath.h"

void
ed_target_release(struct target *t)
{
	free(t->abs);
	free(t->rel);
	if (t->dirfd >= 0)
		close(t->dirfd);
	memset(t, 0, sizeof *t);
	t->dirfd = -1;
}

int
ed_where_init(struct ed_where *w, const char *root)
{
	memset(w, 0, sizeof *w);
	w->rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->rootfd < 0)
		return hw_err_sys("cannot open the project root '%s'", root);
	w->root = xstrdup(root);
	return 0;
}

void
ed_where_release(struct ed_where *w)
{
	size_t i;

	for (i = 0; i < w->nro; i++)
		free(w->ro[i]);
	free(w->ro);
	if (w->root)
		close(w->rootfd);
	free(w->root);
	memset(w, 0, sizeof *w);
}

int
ed_readable(struct ed_where *w, const char *dir)
{
	char *canon = NULL;
	struct stat st;

	if (dir[0] == '/' && (!(canon = realpath(dir, NULL)) ||
	    stat(canon, &st) < 0 || !S_ISDIR(st.st_mode) ||
	    !strcmp(canon, "/"))) {
		free(canon);
		return hw_err_set(HW_EXIT_USAGE, "'%s' is not a directory "
		    "file_editor can read", dir);
	}
	w->ro = xrealloc(w->ro, (w->nro + 1) * sizeof *w->ro);
	w->ro[w->nro++] = canon ? canon : xstrdup(dir);
	return 0;
}

/*
 * readable returns what follows one of w's readable directories in s
 * ("." for the directory itself), or NULL when s is under none; s is
 * canonical and absolute (outside the project) or from the root
 */
static const char *
readable(const struct ed_where *w, const char *s)
{
	size_t i, n;

	for (i = 0; i < w->nro; i++) {
		n = strlen(w->ro[i]);
		if (strncmp(s, w->ro[i], n))
			continue;
		if (!s[n])
			return ".";
		if (s[n] == '/')
			return s + n + 1;
	}
	return NULL;
}

int
ed_has_heartwood(const char *rel)
{
	const char *p = rel;
	size_t n;

	while (*p) {
		n = strcspn(p, "/");
		if (n == 10 && memcmp(p, ".heartwood", 10) == 0)
			return 1;
		p += n;
		p += *p == '/';
	}
	return 0;
}

/*
 * viewable: rel is a name the workspace views (inspect.c) show, so what
 * file_editor writes there appears in the project's changes; "." too
 */
static int
viewable(const char *rel)
{
	const char *s, *e;

	if (path_ok(rel) < 0)
		return 0;
	for (s = rel; *s; s = e + !!*e) {
		e = s + strcspn(s, "/");
		if (path_reserved(s, (size_t)(e - s)))
			return 0;
	}
	return 1;
}

/*
 * canonical resolves path like realpath(3), or, for a path that does not
 * exist yet, its parent plus its last name.  NULL with errno otherwise.
 */
static char *
canonical(const char *root, const char *path)
{
	char *full = path[0] == '/' ? xstrdup(path) : path_join(root, path);
	char *canon, *slash, *dir, *base;
	size_t n;

	if ((canon = realpath(full, NULL)) || errno != ENOENT) {
		free(full);
		return canon;
	}
	n = strlen(full);
	while (n > 1 && full[n - 1] == '/')
		full[--n] = 0;
	slash = strrchr(full, '/');
	base = slash + 1;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(full);
		errno = ENOENT;
		return NULL;
	}
	*slash = 0;
	dir = realpath(slash == full ? "/" : full, NULL);
	if (dir) {
		canon = xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir,
		    base);
		free(dir);
	}
	free(full);
	return dir ? canon : NULL;
}

/*
 * reach opens t->rel's directory from the root (from / when it is
 * outside), never following a link.
 */
static int
reach(const struct ed_where *w, struct target *t)
{
	char *copy, *p, *slash;
	int fd = t->outside ? open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC) :
	    dup(w->rootfd), next;

	if (fd < 0)
		return -1;
	if (strcmp(t->rel, ".") == 0) {
		t->dirfd = fd;
		t->base = ".";
		return 0;
	}
	copy = xstrdup(t->rel);
	for (p = copy; (slash = strchr(p, '/')); p = slash + 1) {
		*slash = 0;
		next = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
		    O_CLOEXEC);
		close(fd);
		if (next < 0) {
			free(copy);
			return -1;
		}
		fd = next;
	}
	t->dirfd = fd;
	t->base = t->rel + (p - copy);
	free(copy);
	return 0;
}

char *
ed_resolve(const struct ed_where *w, const char *path, size_t plen,
    const char *cmd, struct target *t)
{
	size_t rl = strlen(w->root);
	const char *rest;
	char *canon;

	memset(t, 0, sizeof *t);
	t->dirfd = -1;
	if (!plen)
		return xstrdup("Invalid `path` parameter: it must not be "
		    "empty.");
	if (memchr(path, 0, plen))
		return xstrdup("Invalid `path` parameter: it contains a NUL "
		    "character.");
	if (!(canon = canonical(w->root, path)))
		return xasprintf("Invalid `path` parameter: %s. The path %s "
		    "does not exist. Please provide a valid path.", path, path);
	if (strcmp(canon, w->root) == 0)
		t->rel = xstrdup(".");
	else if (strcmp(w->root, "/") == 0)
		t->rel = xstrdup(canon + 1);
	else if (strncmp(canon, w->root, rl) == 0 && canon[rl] == '/')
		t->rel = xstrdup(canon + rl + 1);
	t->abs = canon;
	if (!t->rel && readable(w, canon)) {
		if (strcmp(cmd, "view"))
			return xasprintf("Invalid `path` parameter: %s. It is "
			    "a bundled skill's file, which file_editor only "
			    "views.", path);
		t->rel = xstrdup(canon + 1);
		t->outside = 1;
	}
	if (!t->rel)
		return xasprintf("Invalid `path` parameter: %s. It is outside "
		    "the project (%s): file_editor only works on files in "
		    "the project.", path, w->root);
	rest = t->outside ? readable(w, canon) : readable(w, t->rel);
	if (rest && strcmp(cmd, "view"))
		return xasprintf("Invalid `path` parameter: %s. It is an "
		    "active skill's file inside .heartwood, which file_editor "
		    "only views.", path);
	if (!rest && ed_has_heartwood(t->rel))
		return xasprintf("Invalid `path` parameter: %s. It is inside "
		    ".heartwood, which file_editor does not touch.", path);
	if (!viewable(rest ? rest : t->rel))
		return xasprintf("Invalid `path` parameter: %s. Its name is "
		    "one the workspace views cannot show (a control or format "
		    "character such as a bidirectional override, a backslash, "
		    "or .git or .heartwood in any letter case), so a change "
		    "to it would not appear in the project's changes; "
		    "file_editor does not write it.", path);
	if (reach(w, t) < 0)
		return xasprintf("The path %s changed while it was being "
		    "opened (%s); nothing was done.", path, strerror(errno));
	t->exists = fstatat(t->dirfd, t->base, &t->st,
	    AT_SYMLINK_NOFOLLOW) == 0;
	return NULL;
}

int
ed_open_final(struct target *t, int flags)
{
	struct stat st;
	int fd = openat(t->dirfd, t->base, flags | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || st.st_dev != t->st.st_dev ||
	    st.st_ino != t->st.st_ino) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}
