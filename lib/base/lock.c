/* lock.c - native advisory locks (flock) and nothing else */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/base.h"

int
lock_open(const char *path, int nonblock)
{
	struct stat st;
	int fd, r;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return hw_err_sys("cannot open lock '%s'", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return hw_err_set(HW_EXIT_IO,
		    "lock '%s' is not a regular file", path);
	}
	do
		r = flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0));
	while (r < 0 && errno == EINTR && !nonblock);
	if (r < 0) {
		int e = errno;

		close(fd);
		errno = e;
		if (e == EWOULDBLOCK)
			return hw_err_set(HW_EXIT_BUSY, "lock '%s' is held",
			    path);
		if (e == ENOSYS || e == ENOLCK || e == EOPNOTSUPP ||
		    e == EINVAL)
			return hw_err_set(HW_EXIT_IO,
			    "native locks unavailable for '%s': storage "
			    "cannot lock (%s)", path, strerror(e));
		return hw_err_sys("cannot lock '%s'", path);
	}
	if (getenv("HW_TEST_NO_LOCKS")) {
		/* test hook: behave as storage without native locks */
		close(fd);
		errno = ENOLCK;
		return hw_err_set(HW_EXIT_IO, "native locks unavailable "
		    "for '%s': storage cannot lock", path);
	}
	return fd;
}

void
lock_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * A lease handed over at exec: the parent keeps its locked descriptor
 * open across posix_spawn, so the lock never lapses between the two
 * processes, and names it in HW_LEASE_FD.  lease_take_env runs first in
 * main, before anything could be started that would inherit it.
 */
static int handed = -1;

void
lease_take_env(void)
{
	const char *v = getenv(LEASE_ENV);
	char *end;
	long fd;

	if (!v)
		return;
	errno = 0;
	fd = strtol(v, &end, 10);
	if (!errno && end != v && !*end && fd > 2 && fd < 65536 &&
	    fcntl((int)fd, F_SETFD, FD_CLOEXEC) == 0)
		handed = (int)fd;
	unsetenv(LEASE_ENV);
}

int
lease_open(const char *path)
{
	struct stat a, b;
	int fd = handed;

	handed = -1;
	if (fd >= 0 && fstat(fd, &a) == 0 && lstat(path, &b) == 0 &&
	    S_ISREG(a.st_mode) && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino && flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return lock_open(path, 1);
}

char **
lease_pass(posix_spawn_file_actions_t *fa, int fd)
{
	extern char **environ;
	size_t n = 0, k = 0;
	char **env, *var;

	if (fd < 0)
		return NULL;
	/* onto itself: the child keeps it open across exec */
	posix_spawn_file_actions_adddup2(fa, fd, fd);
	while (environ[n])
		n++;
	env = xmalloc((n + 2) * sizeof *env + 32);
	var = (char *)(env + n + 2);
	snprintf(var, 32, LEASE_ENV "=%d", fd);
	env[k++] = var;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], LEASE_ENV "=", sizeof LEASE_ENV))
			env[k++] = environ[i];
	env[k] = NULL;
	return env;
}
