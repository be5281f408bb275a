/*
 * subscription.c - the gateway's ChatGPT sign-in routes (reference 3.1):
 * POST /settings/models/subscription/device starts
 * 'hw-model subscription sign-in' as a child and answers its code; .../poll
 * says whether it completed; DELETE on the device route cancels it (the
 * child is stopped and reaped).  The child does the polling and keeps the
 * tokens: they never enter the gateway's process.  GET /settings/credentials
 * runs 'hw-model subscription status', one child at a time.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"
#include "conf/conf.h"
#include "serve/gw.h"

extern char **environ;

#define START_MS 40000		/* the child's first record */
#define LINE_MAX_SUB 8192
#define STATUS_MS 10000		/* the status child's answer */
#define STOP_MS 2000		/* a sign-in child's grace after SIGTERM */

/* the one sign-in in progress (a new one replaces it) */
static struct login {
	pid_t pid;
	int out, err;			/* the child's stdout and stderr */
	char id[33];
	struct buf lines, errs;
	struct arena a;
	struct jval *code;		/* the pending record */
	int complete;
} lg;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
/*
 * the last sign-in ended before it completed (under mu): its login id, and
 * what its polls are told
 */
static struct {
	char id[33];
	const char *why;
} ended;

/*
 * the status children, one at a time: a request waits for a run that
 * started after it came (so a sign-out just before is seen) and takes the
 * answer of the last run that finished
 */
static struct {
	int running;
	unsigned long started, finished;
	unsigned code;			/* the last finished run's answer */
	struct buf body;
} stq;
static pthread_mutex_t stq_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stq_cv = PTHREAD_COND_INITIALIZER;

static void
drain(int fd, struct buf *b)
{
	char tmp[4096];
	ssize_t n;

	while (fd >= 0 && b->len < LINE_MAX_SUB * 4 &&
	    (n = read(fd, tmp, sizeof tmp)) > 0)
		buf_add(b, tmp, (size_t)n);
}

/*
 * stop ends the sign-in child: SIGTERM, SIGKILL when it is still there
 * STOP_MS later, and reaps it (no zombie is left); its pipes stay open
 */
static void
stop(void)
{
	int64_t end = now_ms() + STOP_MS;
	pid_t w;

	if (lg.pid <= 0)
		return;
	kill(lg.pid, SIGTERM);
	while ((w = waitpid(lg.pid, NULL, WNOHANG)) == 0 ||
	    (w < 0 && errno == EINTR)) {
		if (now_ms() >= end) {
			kill(lg.pid, SIGKILL);
			while (waitpid(lg.pid, NULL, 0) < 0 && errno == EINTR)
				;
			break;
		}
		poll(NULL, 0, 10);
	}
	lg.pid = 0;
}

static void
login_end(void)
{
	stop();
	if (lg.out >= 0)
		close(lg.out);
	if (lg.err >= 0)
		close(lg.err);
	buf_release(&lg.lines);
	buf_release(&lg.errs);
	arena_release(&lg.a);
	memset(&lg, 0, sizeof lg);
	lg.out = lg.err = -1;
}

/* end_early: the sign-in in progress ends, and its polls say why */
static void
end_early(const char *why)
{
	memcpy(ended.id, lg.id, sizeof ended.id);
	ended.why = why;
	login_end();
}

/*
 * spawn: the child 'hw-model subscription VERB' in *pid, its stdout in
 * *out and stderr in *err (both pipes, non-blocking)
 */
static int
spawn(const char *verb, pid_t *pid, int *out, int *err)
{
	char *path = driver_find("hw-model");
	char *argv[] = { "hw-model", "subscription", (char *)verb, NULL };
	posix_spawn_file_actions_t fa;
	int o[2] = { -1, -1 }, e[2] = { -1, -1 }, rc = -1;

	if (!path)
		return -1;
	if (pipe2(o, O_CLOEXEC) < 0 || pipe2(e, O_CLOEXEC) < 0) {
		hw_err_sys("cannot make a pipe");
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_adddup2(&fa, e[1], 2);
	errno = posix_spawn(pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (errno) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run '%s': %s", path,
		    strerror(errno));
		*pid = 0;
		goto out;
	}
	*out = o[0];
	*err = e[0];
	o[0] = e[0] = -1;
	fcntl(*out, F_SETFL, O_NONBLOCK);
	fcntl(*err, F_SETFL, O_NONBLOCK);
	rc = 0;
out:
	for (int i = 0; i < 2; i++) {
		if (o[i] >= 0)
			close(o[i]);
		if (e[i] >= 0)
			close(e[i]);
	}
	free(path);
	return rc;
}

/* record: the next whole stdout line of the child as JSON, or NULL */
static struct jval *
record(void)
{
	char *nl, err[64];
	struct jval *v;
	size_t n;

	drain(lg.out, &lg.lines);
	if (!lg.lines.len || !(nl = memchr(lg.lines.p, '\n', lg.lines.len)))
		return NULL;
	n = (size_t)(nl - lg.lines.p);
	v = json_parse(&lg.a, lg.lines.p, n, err, sizeof err);
	memmove(lg.lines.p, nl + 1, lg.lines.len - n - 1);
	lg.lines.len -= n + 1;
	return v && v->t == J_OBJECT ? v : NULL;
}

/*
 * last_line: the last line of the child's stderr in b, without its
 * "hw-model: ", into msg (dflt when there is none)
 */
static void
last_line(struct buf *b, char *msg, size_t n, const char *dflt)
{
	char *s, *e;

	buf_cstr(b);
	e = b->p + b->len;
	while (e > b->p && e[-1] == '\n')
		*--e = 0;
	s = e;
	while (s > b->p && s[-1] != '\n')
		s--;
	if (!strncmp(s, "hw-model: ", 10))
		s += 10;
	snprintf(msg, n, "%s", *s ? s : dflt);
}

/*
 * failed: the child ended without completing: its last message (never a
 * token: hw-model(1) prints none), 422 for a refusal, 503 otherwise
 */
static enum MHD_Result
failed(struct req *r, int status)
{
	char msg[512];
	int code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;

	drain(lg.err, &lg.errs);
	last_line(&lg.errs, msg, sizeof msg, "the sign-in failed");
	lg.pid = 0;
	login_end();
	return reply_error(r, code == HW_EXIT_FAIL ? 422 : 503,
	    "HW-SUBSCRIPTION-001", "%s", msg);
}

static enum MHD_Result
answer(struct req *r, unsigned status)
{
	struct arena a;
	struct jval *o;
	enum MHD_Result ret;
	static const char *const keys[] = { "verification_url", "user_code",
		"poll_interval_seconds", NULL };

	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "connection_id", json_str(&a, SUB_CONNECTION));
	json_add(&a, o, "login_id", json_str(&a, lg.id));
	for (size_t i = 0; keys[i]; i++)
		if (json_get(lg.code, keys[i]))
			json_add(&a, o, keys[i], json_copy(&a,
			    json_get(lg.code, keys[i])));
	json_add(&a, o, "status", json_str(&a, lg.complete ? "complete" :
	    "pending"));
	ret = reply_json(r, status, o);
	arena_release(&a);
	return ret;
}

/*
 * wait_code: the child's pending record, or its end, within START_MS.
 * mu is let go while nothing comes, so that a sign-out, a newer sign-in
 * or the gateway's end need not wait for the issuer; when one of them
 * ended this sign-in meanwhile, the answer is what its polls would say.
 */
static enum MHD_Result
wait_code(struct req *r)
{
	int fd = fcntl(lg.out, F_DUPFD_CLOEXEC, 0);
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t end = now_ms() + START_MS;
	enum MHD_Result ret;
	char id[sizeof lg.id];
	int status;

	memcpy(id, lg.id, sizeof id);
	while (!(lg.code = record())) {
		if (waitpid(lg.pid, &status, WNOHANG) == lg.pid) {
			ret = failed(r, status);
			goto out;
		}
		if (now_ms() >= end) {
			login_end();
			ret = reply_error(r, 503, "HW-SUBSCRIPTION-001", "the "
			    "sign-in did not start in time");
			goto out;
		}
		/* its own copy of the pipe: lg.out may close meanwhile */
		pthread_mutex_unlock(&mu);
		poll(&p, fd >= 0, 100);
		pthread_mutex_lock(&mu);
		/* ended meanwhile: no sign-in, or another (ids never repeat) */
		if (strcmp(lg.id, id)) {
			ret = strcmp(ended.id, id) ? reply_error(r, 503,
			    "HW-SUBSCRIPTION-001", "the gateway is stopping") :
			    reply_error(r, 410, "HW-SUBSCRIPTION-001", "%s",
			    ended.why);
			goto out;
		}
	}
	ret = answer(r, 201);
out:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* checked: body {connection_id openai-subscription, key: its type} */
static int
checked(struct req *r, struct arena *a, const char *key, struct jval **v,
    enum MHD_Result *ret)
{
	char err[128];
	const struct jval *x;

	*v = NULL;
	if (!valid_utf8(r->body.p ? r->body.p : "", r->body.len) ||
	    !(*v = json_parse(a, r->body.p ? r->body.p : "", r->body.len, err,
	    sizeof err)) || (*v)->t != J_OBJECT) {
		*ret = reply_error(r, 400, NULL, "the request body is not a "
		    "JSON object");
		return -1;
	}
	if (!json_is_str(json_get(*v, "connection_id"), SUB_CONNECTION)) {
		*ret = reply_error(r, 422, NULL, "`connection_id` must be "
		    SUB_CONNECTION);
		return -1;
	}
	x = json_get(*v, key);
	if (!strcmp(key, "terms_accepted") ? !x || x->t != J_TRUE :
	    !x || x->t != J_STRING) {
		*ret = reply_error(r, 422, NULL, !strcmp(key, "terms_accepted") ?
		    "`terms_accepted` must be true" : "`login_id` is required");
		return -1;
	}
	if ((*v)->n != 2) {
		*ret = reply_error(r, 422, NULL, "request contains unsupported "
		    "fields");
		return -1;
	}
	return 0;
}

static enum MHD_Result
device(struct req *r)
{
	struct arena a;
	struct jval *v;
	enum MHD_Result ret;

	arena_init(&a);
	if (checked(r, &a, "terms_accepted", &v, &ret) < 0)
		goto out;
	if (lg.id[0])
		end_early("the sign-in was replaced by a newer one");
	arena_init(&lg.a);
	buf_init(&lg.lines);
	buf_init(&lg.errs);
	if (random_hex(lg.id, 16) < 0 ||
	    spawn("sign-in", &lg.pid, &lg.out, &lg.err) < 0) {
		ret = reply_hw(r);
		login_end();
		goto out;
	}
	ret = wait_code(r);
out:
	arena_release(&a);
	return ret;
}

static enum MHD_Result
device_poll(struct req *r)
{
	struct arena a;
	struct jval *v, *rec;
	enum MHD_Result ret;
	int status;

	arena_init(&a);
	if (checked(r, &a, "login_id", &v, &ret) < 0)
		goto out;
	if (ended.id[0] && json_is_str(json_get(v, "login_id"), ended.id)) {
		ret = reply_error(r, 410, "HW-SUBSCRIPTION-001", "%s",
		    ended.why);
		goto out;
	}
	if (!lg.id[0] || !json_is_str(json_get(v, "login_id"), lg.id)) {
		ret = reply_error(r, 404, NULL, "no such sign-in");
		goto out;
	}
	while (!lg.complete && (rec = record()))
		lg.complete = json_is_str(json_get(rec, "status"), "complete");
	if (lg.complete) {
		ret = answer(r, 200);
		waitpid(lg.pid, NULL, 0);
		lg.pid = 0;
		login_end();
	} else if (waitpid(lg.pid, &status, WNOHANG) == lg.pid)
		ret = failed(r, status);
	else
		ret = answer(r, 200);
out:
	arena_release(&a);
	return ret;
}

/*
 * device_cancel: DELETE .../device {connection_id, login_id}: the sign-in
 * of that id, when it runs, is stopped (200, cancelled true) unless it
 * completed first (409: the tokens are saved); none of that id running is
 * 200 with cancelled false
 */
static enum MHD_Result
device_cancel(struct req *r)
{
	struct arena a;
	struct jval *v, *o, *rec;
	enum MHD_Result ret;
	int running, done;

	arena_init(&a);
	if (checked(r, &a, "login_id", &v, &ret) < 0)
		goto out;
	running = lg.id[0] && json_is_str(json_get(v, "login_id"), lg.id);
	if (running) {
		stop();
		/* what it printed before it ended: it may have completed */
		while (!lg.complete && (rec = record()))
			lg.complete = json_is_str(json_get(rec, "status"),
			    "complete");
		if (!(done = lg.complete))
			end_early("the sign-in was cancelled");
		else
			login_end();
		if (done) {
			ret = reply_error(r, 409, "HW-SUBSCRIPTION-001", "the "
			    "sign-in had completed: sign out to undo it");
			goto out;
		}
	}
	o = json_obj(&a);
	json_add(&a, o, "connection_id", json_str(&a, SUB_CONNECTION));
	json_add(&a, o, "login_id", json_copy(&a, json_get(v, "login_id")));
	json_add(&a, o, "cancelled", json_bool(&a, running));
	ret = reply_json(r, 200, o);
out:
	arena_release(&a);
	return ret;
}

enum MHD_Result
subscription_sign_out(struct req *r, const char *method)
{
	struct arena a;
	struct jval *o;
	enum MHD_Result ret;
	int was;

	if (strcmp(method, "DELETE"))
		return reply_405(r, "DELETE");
	pthread_mutex_lock(&mu);
	if (lg.id[0])		/* a sign-in in progress ends too */
		end_early("the sign-in was cancelled");
	if (sub_sign_out(&was) < 0) {
		pthread_mutex_unlock(&mu);
		return reply_hw(r);
	}
	pthread_mutex_unlock(&mu);
	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "connection_id", json_str(&a, SUB_CONNECTION));
	json_add(&a, o, "removed", json_bool(&a, was));
	json_add(&a, o, "status", json_str(&a, "signed-out"));
	ret = reply_json(r, 200, o);
	arena_release(&a);
	return ret;
}

void
subscription_end(void)
{
	pthread_mutex_lock(&mu);
	if (lg.id[0])
		login_end();
	pthread_mutex_unlock(&mu);
}

/*
 * collect reads the child's stdout into ob and stderr into eb (each at
 * most LINE_MAX_SUB * 4 bytes) until both end, then reaps it: its wait
 * status, or -1 when it took longer than STATUS_MS (it is killed then)
 */
static int
collect(pid_t pid, int out, int err, struct buf *ob, struct buf *eb)
{
	struct pollfd p[2] = { { .fd = out, .events = POLLIN },
		{ .fd = err, .events = POLLIN } };
	int64_t end = now_ms() + STATUS_MS;
	char tmp[4096];
	ssize_t n;
	pid_t w;
	int status, i;

	while ((p[0].fd >= 0 || p[1].fd >= 0) && now_ms() < end) {
		if (poll(p, 2, 100) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			n = read(p[i].fd, tmp, sizeof tmp);
			if (n > 0 && (i ? eb : ob)->len < LINE_MAX_SUB * 4)
				buf_add(i ? eb : ob, tmp, (size_t)n);
			else if (n == 0 || (n < 0 && errno != EAGAIN &&
			    errno != EINTR))
				p[i].fd = -1;
		}
	}
	if (p[0].fd >= 0 || p[1].fd >= 0)
		kill(pid, SIGKILL);
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (w < 0)
		status = 0xff00;	/* no status to trust: as exit 255 */
	return p[0].fd >= 0 || p[1].fd >= 0 ? -1 : status;
}

/*
 * status_record: the first line of ob as the child's status record, with
 * only its non-secret fields (see hw-serve(1)), or NULL
 */
static struct jval *
status_record(struct arena *a, const struct buf *ob)
{
	static const char *const keys[] = { "connection_id", "status",
		"token_file", "credential_reference", "expires_at",
		"access_token_expired", NULL };
	const char *nl = ob->len ? memchr(ob->p, '\n', ob->len) : NULL;
	struct jval *v, *o;
	char err[64];

	if (!nl || !(v = json_parse(a, ob->p, (size_t)(nl - ob->p), err,
	    sizeof err)) || v->t != J_OBJECT ||
	    !json_is_str(json_get(v, "connection_id"), SUB_CONNECTION) ||
	    (!json_is_str(json_get(v, "status"), "signed-in") &&
	    !json_is_str(json_get(v, "status"), "signed-out")))
		return NULL;
	o = json_obj(a);
	for (size_t i = 0; keys[i]; i++)
		if (json_get(v, keys[i]))
			json_add(a, o, keys[i], json_get(v, keys[i]));
	return o;
}

/* status_error: an error answer of the status route, into b */
static unsigned
status_error(struct buf *b, unsigned code, const char *msg)
{
	error_json(b, "HW-SUBSCRIPTION-002", msg);
	return code;
}

/*
 * status_run runs one child 'hw-model subscription status': its answer's
 * body in b, its HTTP status returned
 */
static unsigned
status_run(struct buf *b)
{
	struct buf ob, eb;
	struct arena a;
	struct jval *o, *rec;
	unsigned code;
	char msg[512];
	pid_t pid;
	int out = -1, err = -1, st;

	if (spawn("status", &pid, &out, &err) < 0)
		return status_error(b, 503, hw_err_msg());
	buf_init(&ob);
	buf_init(&eb);
	arena_init(&a);
	st = collect(pid, out, err, &ob, &eb);
	close(out);
	close(err);
	if (st < 0) {
		code = status_error(b, 503, "the status of the ChatGPT sign-in "
		    "did not come in time");
	} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		last_line(&eb, msg, sizeof msg, "the status of the ChatGPT "
		    "sign-in could not be read");
		code = status_error(b, 500, msg);
	} else if (!(rec = status_record(&a, &ob))) {
		code = status_error(b, 500, "hw-model printed no status record");
	} else {
		o = json_obj(&a);
		json_add(&a, o, "credentials", json_new(&a, J_ARRAY));
		json_push(&a, json_get(o, "credentials"), rec);
		json_canon(b, o);
		code = 200;
	}
	arena_release(&a);
	buf_release(&ob);
	buf_release(&eb);
	return code;
}

enum MHD_Result
subscription_status(struct req *r, const char *method)
{
	struct buf b;
	enum MHD_Result ret;
	unsigned long need;
	unsigned code;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return reply_405(r, "GET, HEAD");
	buf_init(&b);
	pthread_mutex_lock(&stq_mu);
	need = stq.started + 1;	/* the next run to start, not one running */
	while (stq.finished < need) {
		if (!stq.running && stq.started < need) {
			stq.started++;
			stq.running = 1;
			pthread_mutex_unlock(&stq_mu);
			code = status_run(&b);
			pthread_mutex_lock(&stq_mu);
			stq.code = code;
			buf_clear(&stq.body);
			buf_add(&stq.body, b.p, b.len);
			stq.finished = stq.started;
			stq.running = 0;
			pthread_cond_broadcast(&stq_cv);
		} else {
			pthread_cond_wait(&stq_cv, &stq_mu);
		}
	}
	code = stq.code;
	buf_clear(&b);
	buf_add(&b, stq.body.p, stq.body.len);
	pthread_mutex_unlock(&stq_mu);
	ret = reply_buf(r, code, &b);
	buf_release(&b);
	return ret;
}

enum MHD_Result
subscription_route(struct req *r, const char *rest, const char *method)
{
	enum MHD_Result ret;

	if (strcmp(rest, "/device") && strcmp(rest, "/device/poll"))
		return reply_error(r, 404, NULL, "unknown route");
	if (strcmp(method, "POST") && (rest[7] || strcmp(method, "DELETE")))
		return reply_405(r, rest[7] ? "POST" : "POST, DELETE");
	pthread_mutex_lock(&mu);
	if (!lg.id[0])
		lg.out = lg.err = -1;
	ret = rest[7] ? device_poll(r) : strcmp(method, "POST") ?
	    device_cancel(r) : device(r);
	pthread_mutex_unlock(&mu);
	return ret;
}
