/* lock.c - native advisory locks (flock) and nothing else */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
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
