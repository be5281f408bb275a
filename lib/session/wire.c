/* wire.c - what both ends of the control socket share */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "session/session.h"
#include "session/wire.h"

int
open_dir(struct session *s)
{
	return open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * address: the socket's path, or, when that is too long for sun_path,
 * the same file reached through the directory's descriptor.
 */
void
address(const char *path, int dirfd, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (strlen(path) < sizeof sa->sun_path)
		memcpy(sa->sun_path, path, strlen(path));
	else
		snprintf(sa->sun_path, sizeof sa->sun_path,
		    "/proc/self/fd/%d/" CONTROL_SOCK, dirfd);
}

/* wait_for: poll fd for ev until the deadline; 0 when it timed out */
int
wait_for(int fd, short ev, int64_t deadline)
{
	struct pollfd p = { fd, ev, 0 };
	int64_t left;
	int k;

	do {
		left = deadline - now_ms();
		k = poll(&p, 1, left > 0 ? (int)left : 0);
	} while (k < 0 && errno == EINTR);
	return k;
}

/* read_line reads one "\n"-ended line (without it) within the deadline */
int
read_line(int fd, struct buf *b)
{
	int64_t deadline = now_ms() + CONTROL_READ_MS;
	char chunk[65536], *nl;
	ssize_t k;

	for (;;) {
		if (wait_for(fd, POLLIN, deadline) == 0)
			return hw_err_set(HW_EXIT_DATA, "no command line "
			    "within %d ms", CONTROL_READ_MS);
		if ((k = read(fd, chunk, sizeof chunk)) < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return hw_err_sys("cannot read the command");
		}
		if (k == 0)
			return hw_err_set(HW_EXIT_DATA, "unterminated command "
			    "line");
		buf_add(b, chunk, (size_t)k);
		if ((nl = memchr(b->p + b->len - k, '\n', (size_t)k))) {
			b->len = (size_t)(nl - b->p);
			break;
		}
		if (b->len > COMMAND_LINE_MAX)
			break;
	}
	if (b->len > COMMAND_LINE_MAX)
		return hw_err_set(HW_EXIT_DATA, "command line longer than %u "
		    "bytes", COMMAND_LINE_MAX);
	return 0;
}

/* send_all writes b as long as the reader keeps taking it */
void
send_all(int fd, const struct buf *b)
{
	size_t off = 0;
	ssize_t k;

	while (off < b->len) {
		k = send(fd, b->p + off, b->len - off, MSG_NOSIGNAL);
		if (k > 0)
			off += (size_t)k;
		else if (k < 0 && errno == EINTR)
			continue;
		else if (k < 0 && errno == EAGAIN && wait_for(fd, POLLOUT,
		    now_ms() + CONTROL_WRITE_MS) > 0)
			continue;
		else
			return;	/* gone or stalled: its command stands */
	}
}

int
same_user(int fd)
{
	struct ucred cr;
	socklen_t n = sizeof cr;

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 &&
	    cr.uid == geteuid();
}
