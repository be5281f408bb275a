/*
 * control.c - the control socket: while a run owns a session's lease,
 * other processes hand it their commands, and it applies them under its
 * own lease, so that the session keeps exactly one writer
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

#include "hw.h"

struct control {
	struct session *s;
	struct proj *p;		/* every event committed so far */
	int fd;			/* listening, non-blocking */
	int dirfd;		/* the session directory */
	char *path;		/* for messages */
};

static int
open_dir(struct session *s)
{
	return open(s->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * address: the socket's path, or, when that is too long for sun_path,
 * the same file reached through the directory's descriptor.
 */
static void
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

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* wait_for: poll fd for ev until the deadline; 0 when it timed out */
static int
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
control_open(struct session *s)
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
	c->p = proj_new(s->id);
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

void
control_seen(struct control *c, const struct jval *ev)
{
	int64_t seq;

	if (c && json_get_int(ev, "sequence", &seq) == 0 &&
	    seq > proj_revision(c->p))
		proj_apply(c->p, ev);
}

const struct proj *
control_proj(const struct control *c)
{
	return c->p;
}

/* read_line reads one "\n"-ended line (without it) within the deadline */
static int
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
static void
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

/* error_line: {"code": N, "error": MESSAGE} for the last error */
static void
error_line(struct buf *b)
{
	const char *m = hw_err_msg();

	buf_printf(b, "{\"code\":%d,\"error\":", hw_err_code());
	json_canon_str(b, m, strlen(m));
	buf_adds(b, "}\n");
}

static int
same_user(int fd)
{
	struct ucred cr;
	socklen_t n = sizeof cr;

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) == 0 &&
	    cr.uid == geteuid();
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
	proj_free(c->p);
	free(c->path);
	free(c);
}

/* ---- the client ---- */

/* wait_s: how long a client waits for the owner's answer */
static long
wait_s(void)
{
	const char *e = getenv("HW_CONTROL_WAIT_S");
	char *end;
	long v;

	if (!e || !*e)
		return CONTROL_WAIT_S;
	v = strtol(e, &end, 10);
	return *end || v < 1 || v > 86400 ? CONTROL_WAIT_S : v;
}

/*
 * ask sends line and reads the answer: 1, or 0 when none came; -1 when
 * the owner did not answer in time (then the connection's end tells it
 * not to apply the command)
 */
static int
ask(int fd, const struct buf *line, struct buf *ans, const char *sid)
{
	char chunk[65536];
	long limit = wait_s();
	int64_t deadline = now_ms() + limit * 1000;
	size_t off = 0;
	ssize_t k;

	while (off < line->len) {
		k = send(fd, line->p + off, line->len - off, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EPIPE || errno == ECONNRESET ? 0 :
			    hw_err_sys("cannot send the command");
		off += (size_t)k;
	}
	for (;;) {
		if (wait_for(fd, POLLIN, deadline) == 0)
			return hw_err_set(HW_EXIT_BUSY, "the agent that owns "
			    "session '%s' did not answer within %ld s (it "
			    "answers between steps, and a tool may still be "
			    "running): the command was not applied; try again",
			    sid, limit);
		if ((k = read(fd, chunk, sizeof chunk)) < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno != ECONNRESET)
			return hw_err_sys("cannot read the answer");
		if (k <= 0)
			return 0;	/* the owner went before answering */
		buf_add(ans, chunk, (size_t)k);
		if (memchr(ans->p + ans->len - k, '\n', (size_t)k))
			return 1;
	}
}

/* take: the answer line, or the owner's error; *declined as it says */
static int
take(const struct buf *ans, const struct jval *cmd, int *declined)
{
	const char *nl = memchr(ans->p, '\n', ans->len);
	const struct jval *evs, *e;
	struct arena a;
	struct jval *v;
	char err[128];
	int64_t code;
	size_t i;
	int rc = 0;

	arena_init(&a);
	if (!(v = json_parse(&a, ans->p, (size_t)(nl - ans->p), err,
	    sizeof err)) || v->t != J_OBJECT)
		rc = hw_err_set(HW_EXIT_DATA, "the session's owner answered "
		    "something else: %s", v ? "not an object" : err);
	else if ((e = json_get(v, "error"))) {
		if (json_get_int(v, "code", &code) < 0 || code < 1 ||
		    code > 255)
			code = HW_EXIT_FAIL;
		rc = hw_err_set((int)code, "%s", e->t == J_STRING ? e->u.s :
		    "the session's owner refused the command");
	} else if ((evs = json_get(v, "events")) && evs->t == J_ARRAY) {
		for (i = 0; i < evs->n; i++)
			if (command_declined(evs->u.a[i], cmd))
				*declined = 1;
	}
	arena_release(&a);
	return rc;
}

int
control_send(struct session *s, const struct jval *cmd, struct buf *out,
    int *declined)
{
	struct sockaddr_un sa;
	struct buf line, ans;
	char *path = path_join(s->dir, CONTROL_SOCK);
	int dirfd, fd = -1, rc = 0;

	buf_init(&line);
	buf_init(&ans);
	if ((dirfd = open_dir(s)) < 0) {
		if (errno != ENOENT)
			rc = hw_err_sys("cannot open '%s'", s->dir);
		goto out;
	}
	address(path, dirfd, &sa);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		rc = hw_err_sys("cannot connect to '%s'", path);
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		if (errno != ENOENT && errno != ECONNREFUSED)
			rc = hw_err_sys("cannot connect to '%s'", path);
		goto out;
	}
	if (!same_user(fd)) {
		rc = hw_err_set(HW_EXIT_DATA, "refusing '%s': another user "
		    "listens on it", path);
		goto out;
	}
	json_canon(&line, cmd);
	buf_addc(&line, '\n');
	if ((rc = ask(fd, &line, &ans, s->id)) <= 0)
		goto out;
	if (take(&ans, cmd, declined) < 0) {
		rc = -1;
		goto out;
	}
	buf_add(out, ans.p, (size_t)((char *)memchr(ans.p, '\n', ans.len) -
	    ans.p) + 1);
out:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	buf_release(&line);
	buf_release(&ans);
	free(path);
	return rc;
}
