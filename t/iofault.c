/*
 * iofault.c - an LD_PRELOAD shim that makes writes and syncs fail, for
 * the disk-full and I/O-error tests (t/0810-io-faults.bats).
 *
 * It counts the write(2), pwrite(2), writev(2), fsync(2) and fdatasync(2)
 * calls a program makes on regular files whose path starts with
 * HW_IOFAULT_PATH, and fails the HW_IOFAULT_AT-th of them (counting from
 * 1) with HW_IOFAULT_ERRNO (ENOSPC, EIO or EDQUOT; default ENOSPC).
 *
 *   HW_IOFAULT_STICKY=1  every counted write from then on fails too, as on
 *                        a full disk; a failing write first stores half
 *                        of its bytes and reports that short count, as a
 *                        disk filling up in the middle of a write does.
 *                        Syncs after it pass (cutting a file back needs
 *                        no space).
 *   HW_IOFAULT_TRACE=1   "iofault N OP PATH" on stderr for every counted
 *                        call, so a test learns how many there are.
 *   HW_IOFAULT_SYNC_MS=N every counted sync that passes first sleeps N
 *                        milliseconds, as on a slow disk, so that what
 *                        runs beside a sync gets ahead of it (with or
 *                        without HW_IOFAULT_AT).
 *
 * The fault it injects is announced on stderr ("iofault: failing ..."),
 * so a test can tell a run it failed from one that never reached K.
 * Writes to pipes, terminals and files outside the path are passed
 * through uncounted.  Only the process started with the variables set
 * counts from 1: each child counts for itself.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static long at, count, sync_ms;
static int inited, sticky, trace, err = ENOSPC, failing;
static const char *prefix;

static void
init(void)
{
	const char *s;

	if (inited)
		return;
	real_write = (ssize_t (*)(int, const void *, size_t))
	    dlsym(RTLD_NEXT, "write");
	real_pwrite = (ssize_t (*)(int, const void *, size_t, off_t))
	    dlsym(RTLD_NEXT, "pwrite");
	real_writev = (ssize_t (*)(int, const struct iovec *, int))
	    dlsym(RTLD_NEXT, "writev");
	real_fsync = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	real_fdatasync = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	s = getenv("HW_IOFAULT_AT");
	at = s ? atol(s) : 0;
	sticky = (s = getenv("HW_IOFAULT_STICKY")) && *s;
	trace = (s = getenv("HW_IOFAULT_TRACE")) && *s;
	sync_ms = (s = getenv("HW_IOFAULT_SYNC_MS")) ? atol(s) : 0;
	prefix = getenv("HW_IOFAULT_PATH");
	if ((s = getenv("HW_IOFAULT_ERRNO"))) {
		if (!strcmp(s, "EIO"))
			err = EIO;
		else if (!strcmp(s, "EDQUOT"))
			err = EDQUOT;
	}
	inited = 1;
}

/*
 * fault: 0 to let the call through, 1 to fail it, 2 to store half of a
 * write first (the first failing write of a sticky fault).
 */
static int
fault(int fd, const char *op)
{
	char link[64], path[PATH_MAX], line[PATH_MAX + 64];
	struct stat st;
	ssize_t n;
	int k, saved = errno;

	init();
	if (!prefix || !*prefix || (!at && !trace && !sync_ms))
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return errno = saved, 0;
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof path - 1)) < 0)
		return errno = saved, 0;
	path[n] = '\0';
	errno = saved;
	if (strncmp(path, prefix, strlen(prefix)))
		return 0;
	count++;
	if (trace) {
		k = snprintf(line, sizeof line, "iofault %ld %s %s\n", count,
		    op, path);
		if (k > 0 && (size_t)k < sizeof line)
			(void)!real_write(2, line, (size_t)k);
	}
	if (failing && op[0] == 'w')
		return 1;
	if (at && count == at) {
		k = snprintf(line, sizeof line, "iofault: failing %s %ld of "
		    "'%s': %s\n", op, count, path, strerror(err));
		if (k > 0 && (size_t)k < sizeof line)
			(void)!real_write(2, line, (size_t)k);
		failing = sticky;
		return sticky && op[0] == 'w' ? 2 : 1;
	}
	return 0;
}

ssize_t
write(int fd, const void *p, size_t n)
{
	switch (fault(fd, "write")) {
	case 0:
		return real_write(fd, p, n);
	case 2:
		if (n > 1)
			return real_write(fd, p, n / 2);
	}
	errno = err;
	return -1;
}

ssize_t
pwrite(int fd, const void *p, size_t n, off_t off)
{
	switch (fault(fd, "write")) {
	case 0:
		return real_pwrite(fd, p, n, off);
	case 2:
		if (n > 1)
			return real_pwrite(fd, p, n / 2, off);
	}
	errno = err;
	return -1;
}

ssize_t
writev(int fd, const struct iovec *iov, int n)
{
	if (!fault(fd, "write"))
		return real_writev(fd, iov, n);
	errno = err;
	return -1;
}

/* slow: a counted sync that passes waits sync_ms first */
static void
slow(void)
{
	struct timespec ts = { sync_ms / 1000, sync_ms % 1000 * 1000000 };

	while (sync_ms > 0 && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
fsync(int fd)
{
	long before = count;

	if (!fault(fd, "fsync")) {
		if (count != before)
			slow();
		return real_fsync(fd);
	}
	errno = err;
	return -1;
}

int
fdatasync(int fd)
{
	long before = count;

	if (!fault(fd, "fsync")) {
		if (count != before)
			slow();
		return real_fdatasync(fd);
	}
	errno = err;
	return -1;
}
