/*
 * control.c - the control socket: while the agent runs a session it
 * holds the lease, other processes hand it their commands, and it applies
 * them under its own lease, so that the session keeps exactly one writer
 */
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

struct control {
	struct session *s;
	struct proj *p;		/* every event so far (the caller's) */
	int fd;			/* listening, non-blocking */
	int dirfd;		/* the session directory */
	char *path;		/* for messages */
};

/* ---- the owner ---- */

/* replace_stale removes a dead owner's socket file (never anything else) */
static int
replace_stale(struct control *c)
{
	struct stat st;

	if (fstatat(c->dirfd, CONTROL_SOCK, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot stat '%s'",
		    c->path);
	if (!S_ISSOCK(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a socket",
		    c->path);
	if (unlinkat(c->dirfd, CONTROL_SOCK, 0) < 0 && errno != ENOENT)
		return hw_err_sys("cannot remove '%s'", c->path);
	return 0;
}

static int
listen_on(struct control *c)
{
	struct sockaddr_un sa;
	mode_t um;
	int k;

	if ((c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0)) < 0)
		return hw_err_sys("cannot listen on '%s'", c->path);
	address(c->path, c->dirfd, &sa);
	um = umask(0177);	/* created 0600 */
	k = bind(c->fd, (struct sockaddr *)&sa, sizeof sa);
	umask(um);
	if (k < 0)
		return hw_err_sys("cannot listen on '%s'", c->path);
	if (listen(c->fd, CONTROL_ACCEPT_MAX) < 0) {
		hw_err_sys("cannot listen on '%s'", c->path);
		unlinkat(c->dirfd, CONTROL_SOCK, 0);
		return -1;
	}
	return 0;
}

struct control *
control_open(struct session *s, struct proj *p)
{
	struct control *c = xcalloc(1, sizeof *c);

	c->s = s;
	c->fd = c->dirfd = -1;
	c->path = path_join(s->dir, CONTROL_SOCK);
	if (s->lease_fd < 0) {
		hw_err_set(HW_EXIT_BUSY, "cannot listen on '%s': the session "
		    "is not leased", c->path);
		goto fail;
	}
	if ((c->dirfd = open_dir(s)) < 0) {
		hw_err_sys("cannot open '%s'", s->dir);
		goto fail;
	}
	if (replace_stale(c) < 0 || listen_on(c) < 0)
		goto fail;
	c->p = p;
	return c;
fail:
	if (c->fd >= 0)
		close(c->fd);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->path);
	free(c);
	return NULL;
}

/* error_line: {"code": N, "error": MESSAGE} for the last error */
static void
error_line(struct buf *b)
{
	const char *m = hw_err_msg();

	buf_printf(b, "{\"code\":%d,\"error\":", hw_err_code());
	json_canon_str(b, m, strlen(m));
	buf_adds(b, "}\n");
}

/*
 * gone: the client hung up after its line, having given up waiting
 * (control_send's deadline); its command is not applied, as it was told
 */
static int
gone(int fd)
{
	char ch;

	return recv(fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* serve answers one connection's command line */
static void
serve(struct control *c, int fd, event_fn seen, void *ctx)
{
	struct buf line, out;
	struct arena a;
	struct jval *cmd;
	char err[128];
	int declined = 0, k = -1;

	buf_init(&line);
	buf_init(&out);
	arena_init(&a);
	if (read_line(fd, &line) < 0 || gone(fd))
		;
	else if (!(cmd = json_parse(&a, line.p ? line.p : "", line.len, err,
	    sizeof err)))
		hw_err_set(HW_EXIT_DATA, "command line: %s", err);
	else
		k = command_apply(c->s, c->p, &a, cmd, seen, ctx, &out,
		    &declined);
	if (k < 0)
		error_line(&out);
	send_all(fd, &out);
	arena_release(&a);
	buf_release(&line);
	buf_release(&out);
}

int
control_poll(struct control *c, event_fn seen, void *ctx)
{
	int i, fd;

	for (i = 0; c && i < CONTROL_ACCEPT_MAX; i++) {
		fd = accept4(c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (fd < 0)
			break;	/* none pending, or none to take now */
		if (same_user(fd))
			serve(c, fd, seen, ctx);
		close(fd);
		if (c->s->broken)
			return -1;	/* the failed commit's error stands */
	}
	return 0;
}

void
control_close(struct control *c)
{
	if (!c)
		return;
	close(c->fd);
	unlinkat(c->dirfd, CONTROL_SOCK, 0);
	close(c->dirfd);
	free(c->path);
	free(c);
}
