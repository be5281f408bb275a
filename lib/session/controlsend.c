/*
 * controlsend.c - the client side of the control socket: a command handed
 * to the process that holds the session's lease, and its answer
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

int
command_declined(const struct jval *ev, const struct jval *cmd)
{
	const struct jval *pl = json_get(ev, "payload");
	const struct jval *al = json_get(pl, "affects_lifecycle");

	return json_is_str(json_get(ev, "kind"), "error.recorded") && al &&
	    al->t == J_FALSE && json_equal(json_get(pl, "command_id"),
	    json_get(cmd, "command_id"));
}

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

int
control_live(struct session *s)
{
	struct sockaddr_un sa;
	char *path = path_join(s->dir, CONTROL_SOCK);
	int dirfd, fd = -1, ok = 0;

	if ((dirfd = open_dir(s)) >= 0 &&
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) >= 0) {
		address(path, dirfd, &sa);
		ok = connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
		    same_user(fd);
	}
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	free(path);
	return ok;
}

/* lease_wait_s: how long a short holder of the lease is waited for */
static long
lease_wait_s(void)
{
	const char *e = getenv("HW_LEASE_WAIT_S");
	char *end;
	long v;

	if (!e || !*e)
		return LEASE_WAIT_S;
	v = strtol(e, &end, 10);
	return *end || v < 0 || v > 86400 ? LEASE_WAIT_S : v;
}

int
session_take(struct session *s, event_fn fn, void *ctx)
{
	return session_take_since(s, NULL, NULL, fn, ctx);
}

int
session_take_since(struct session *s, const struct logpos *from, int *used,
    event_fn fn, void *ctx)
{
	int64_t deadline = now_ms() + lease_wait_s() * 1000;
	struct timespec nap = { 0, CONTROL_RETRY_MS * 1000000L };

	for (;;) {
		if (session_lease_since(s, from, used, fn, ctx) == 0)
			return 0;
		if (hw_err_code() != HW_EXIT_BUSY)
			return -1;
		if (control_live(s))
			return 1;
		if (now_ms() >= deadline)
			return -1;	/* the holder's busy error stands */
		nanosleep(&nap, NULL);
	}
}
