/*
 * serve.c - hw-model serve --replay: a script's turns served on
 * loopback as an OpenAI-compatible chat-completions endpoint.
 *
 * One libmicrohttpd thread handles every connection, so requests are
 * answered one at a time and the turn counter needs no lock.  Answers are
 * rendered whole before the first byte goes out (stream.c) and handed
 * to the connection one write at a time.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <microhttpd.h>

#include "replay.h"

#define COMPLETIONS "/v1/chat/completions"
/*
 * A body over REPLAY_BODY_MAX is read and discarded, so that a client that
 * sends it without waiting for "100 Continue" still gets its 413 rather
 * than a broken pipe; past DRAIN_MAX the connection is closed instead.
 */
#define DRAIN_MAX (8 * (uint64_t)REPLAY_BODY_MAX)
#define OWNED_BY REPLAY_MODEL " (scripted replay, not a real model)"

struct server {
	const struct replay_script *s;
	const struct replay_serve_opts *o;
	size_t next;		/* the next turn to serve, from 0 */
	pthread_t main;
};

struct request {
	struct buf body;
	uint64_t received;
	int too_big;
	int last;		/* this request took the last turn */
	int drop;		/* end the stream with an error */
	struct replay_sse sse;
	size_t w;		/* the next write of sse */
};

static void __attribute__((format(printf, 2, 3)))
note(const struct server *sv, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", sv->o->prog, line);
}

/* shown copies s for a log line: printable ASCII, at most 80 bytes */
static const char *
shown(const char *s, char out[84])
{
	size_t i;

	for (i = 0; s[i] && i < 80; i++)
		out[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(out + i, s[i] ? "..." : "");
	return out;
}

/* ---- responses ---- */

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const struct buf *b,
    int retry_after)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(b->len, b->p,
	    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (retry_after)
		MHD_add_response_header(r, "Retry-After", "0");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

/* reply_error answers an OpenAI-style error object; code may be NULL */
static enum MHD_Result
reply_error(struct MHD_Connection *c, unsigned status, const char *msg,
    const char *type, const char *code)
{
	struct buf b;
	enum MHD_Result ok;

	buf_init(&b);
	buf_adds(&b, "{\"error\":{\"message\":");
	json_canon_str(&b, msg, strlen(msg));
	buf_printf(&b, ",\"type\":\"%s\",\"param\":null,\"code\":", type);
	buf_printf(&b, code ? "\"%s\"}}" : "null}}", code);
	ok = reply(c, status, &b, status == MHD_HTTP_TOO_MANY_REQUESTS);
	buf_release(&b);
	return ok;
}

static enum MHD_Result
models(const struct server *sv, struct MHD_Connection *c)
{
	struct buf b;
	enum MHD_Result ok;

	note(sv, "GET /v1/models: 200");
	buf_init(&b);
	buf_adds(&b, "{\"object\":\"list\",\"data\":[{\"id\":\"" REPLAY_MODEL
	    "\",\"object\":\"model\",\"created\":0,\"owned_by\":\""
	    OWNED_BY "\"}");
	if (sv->o->served_name) {
		buf_adds(&b, ",{\"id\":");
		json_canon_str(&b, sv->o->served_name,
		    strlen(sv->o->served_name));
		buf_adds(&b, ",\"object\":\"model\",\"created\":0,"
		    "\"owned_by\":\"" OWNED_BY "\"}");
	}
	buf_adds(&b, "]}");
	ok = reply(c, MHD_HTTP_OK, &b, 0);
	buf_release(&b);
	return ok;
}

static ssize_t
stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	struct request *rq = cls;
	size_t n;

	if (rq->w >= rq->sse.n)
		return rq->drop ? MHD_CONTENT_READER_END_WITH_ERROR :
		    MHD_CONTENT_READER_END_OF_STREAM;
	n = rq->sse.ends[rq->w] - (size_t)pos;
	if (n > max)
		n = max;
	else
		rq->w++;
	memcpy(out, rq->sse.body.p + pos, n);
	return (ssize_t)n;
}

/* reply_stream sends rq->sse as text/event-stream, write by write */
static enum MHD_Result
reply_stream(struct MHD_Connection *c, struct request *rq)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024,
	    stream_read, rq, NULL);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

/* ---- the request ---- */

struct ask {
	const struct jval *req;
	int stream, include_usage;
};

/* request_check: NULL when the body is a usable request, else why not */
static const char *
request_check(struct arena *a, const struct buf *body, struct ask *q)
{
	const struct jval *v, *so;
	char err[128];

	if (!(q->req = json_parse(a, body->p, body->len, err, sizeof err)))
		return "replay: the request body is not JSON";
	if (q->req->t != J_OBJECT || !(v = json_get(q->req, "messages")) ||
	    v->t != J_ARRAY)
		return "replay: the request has no messages array";
	v = json_get(q->req, "stream");
	if (v && v->t != J_TRUE && v->t != J_FALSE && v->t != J_NULL)
		return "replay: 'stream' must be true or false";
	q->stream = v && v->t == J_TRUE;
	if (!(so = json_get(q->req, "stream_options")) || so->t == J_NULL)
		return NULL;
	v = so->t == J_OBJECT ? json_get(so, "include_usage") : NULL;
	if (so->t != J_OBJECT || (v && v->t != J_TRUE && v->t != J_FALSE &&
	    v->t != J_NULL))
		return "replay: 'stream_options.include_usage' must be true "
		    "or false";
	q->include_usage = v && v->t == J_TRUE;
	return NULL;
}

/* in_strings: whether some string in v, decoded, contains s */
static int
in_strings(const struct jval *v, const char *s, size_t n)
{
	size_t i;

	if (v->t == J_STRING)
		return memmem(v->u.s, v->n, s, n) != NULL;
	for (i = 0; v->t == J_ARRAY && i < v->n; i++)
		if (in_strings(v->u.a[i], s, n))
			return 1;
	for (i = 0; v->t == J_OBJECT && i < v->n; i++)
		if (in_strings(v->u.m[i].v, s, n))
			return 1;
	return 0;
}

/* expected: expect is in the raw body or in one of its decoded strings */
static int
expected(const struct buf *body, const struct jval *req, const char *expect)
{
	size_t n = strlen(expect);

	return memmem(body->p, body->len, expect, n) != NULL ||
	    in_strings(req, expect, n);
}

static enum MHD_Result
mismatch(const struct server *sv, struct MHD_Connection *c,
    const struct replay_turn *t)
{
	struct buf msg;
	char tmp[84];
	enum MHD_Result ok;

	note(sv, "POST " COMPLETIONS " turn %zu/%zu: 400 replay mismatch: "
	    "expected '%s' not found in the request (script line %ld)",
	    sv->next + 1, sv->s->n, shown(t->expect, tmp), t->line);
	buf_init(&msg);
	buf_adds(&msg, "replay: expected ");
	json_canon_str(&msg, t->expect, strlen(t->expect));
	buf_adds(&msg, " not found in the request");
	ok = reply_error(c, MHD_HTTP_BAD_REQUEST, buf_cstr(&msg),
	    "replay_mismatch", NULL);
	buf_release(&msg);
	return ok;
}

static enum MHD_Result
failure(const struct server *sv, struct MHD_Connection *c,
    const struct replay_turn *t, size_t number)
{
	note(sv, "POST " COMPLETIONS " turn %zu/%zu: %d (scripted failure)",
	    number, sv->s->n, t->fail);
	switch (t->fail) {
	case 401:
		return reply_error(c, 401, "replay: scripted failure: "
		    "invalid api key", "invalid_request_error",
		    "invalid_api_key");
	case 403:
		return reply_error(c, 403, "replay: scripted failure: "
		    "forbidden", "permission_error", "forbidden");
	case 429:
		return reply_error(c, 429, "replay: scripted failure: rate "
		    "limit exceeded", "rate_limit_error",
		    "rate_limit_exceeded");
	default:
		return reply_error(c, 500, "replay: scripted failure: "
		    "server error", "server_error", "server_error");
	}
}

/* serve_turn answers with the next turn, which the answer consumes */
static enum MHD_Result
serve_turn(struct server *sv, struct MHD_Connection *c, struct request *rq,
    const struct ask *q)
{
	const struct replay_turn *t = &sv->s->turns[sv->next];
	size_t number = sv->next + 1;
	struct buf b;
	enum MHD_Result ok;

	if (t->expect && !expected(&rq->body, q->req, t->expect))
		return mismatch(sv, c, t);
	sv->next++;
	rq->last = sv->next == sv->s->n;
	if (t->fail && t->fail != REPLAY_DROP)
		return failure(sv, c, t, number);
	if (t->fail == REPLAY_DROP) {
		note(sv, "POST " COMPLETIONS " turn %zu/%zu: 200, then the "
		    "connection dropped (scripted failure)", number, sv->s->n);
		replay_render_drop(&rq->sse, t, number, &sv->o->style);
		rq->drop = 1;
		return reply_stream(c, rq);
	}
	note(sv, "POST " COMPLETIONS " turn %zu/%zu: 200%s", number, sv->s->n,
	    q->stream ? " stream" : "");
	if (q->stream) {
		replay_render_sse(&rq->sse, t, number, &sv->o->style,
		    q->include_usage);
		return reply_stream(c, rq);
	}
	buf_init(&b);
	replay_render_completion(&b, t, number);
	ok = reply(c, MHD_HTTP_OK, &b, 0);
	buf_release(&b);
	return ok;
}

static enum MHD_Result
complete(struct server *sv, struct MHD_Connection *c, struct request *rq)
{
	struct ask q = { NULL, 0, 0 };
	struct arena a;
	const char *why;
	enum MHD_Result ok;

	arena_init(&a);
	buf_cstr(&rq->body);	/* a pointer even for an empty body */
	if ((why = request_check(&a, &rq->body, &q))) {
		note(sv, "POST " COMPLETIONS ": 400 (%s)", why + 8);
		ok = reply_error(c, MHD_HTTP_BAD_REQUEST, why,
		    "invalid_request_error", NULL);
	} else if (sv->next >= sv->s->n) {
		note(sv, "POST " COMPLETIONS ": 410 (the script is exhausted)");
		ok = reply_error(c, MHD_HTTP_GONE, "replay: script exhausted",
		    "replay_exhausted", NULL);
	} else
		ok = serve_turn(sv, c, rq, &q);
	arena_release(&a);
	return ok;
}

static enum MHD_Result
too_large(const struct server *sv, struct MHD_Connection *c)
{
	note(sv, "POST " COMPLETIONS ": 413");
	return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE, "replay: the "
	    "request body is larger than 8 MiB", "invalid_request_error",
	    NULL);
}

/* start routes a new request: 1 when it is answered (*ok), 0 to read it */
static int
start(struct server *sv, struct MHD_Connection *c, const char *url,
    const char *method, enum MHD_Result *ok)
{
	const char *cl;
	char m[84], u[84];

	if (!strcmp(method, "GET") && !strcmp(url, "/v1/models")) {
		*ok = models(sv, c);
		return 1;
	}
	if (strcmp(method, "POST") || strcmp(url, COMPLETIONS)) {
		note(sv, "%s %s: 404", shown(method, m), shown(url, u));
		*ok = reply_error(c, MHD_HTTP_NOT_FOUND, "replay: not found",
		    "not_found", NULL);
		return 1;
	}
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > DRAIN_MAX) {
		*ok = too_large(sv, c);
		return 1;
	}
	return 0;
}

/* upload_more keeps a body of up to REPLAY_BODY_MAX and counts the rest */
static enum MHD_Result
upload_more(const struct server *sv, struct request *rq, const char *p,
    size_t n)
{
	rq->received += n;
	if (rq->received > DRAIN_MAX) {
		note(sv, "POST " COMPLETIONS ": the body passed 64 MiB: "
		    "connection closed");
		return MHD_NO;
	}
	if (rq->received > REPLAY_BODY_MAX) {
		rq->too_big = 1;
		buf_release(&rq->body);
	} else
		buf_add(&rq->body, p, n);
	return MHD_YES;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct server *sv = cls;
	struct request *rq = *con_cls;
	enum MHD_Result ok;
	size_t n;

	(void)version;
	if (!rq) {
		if (start(sv, c, url, method, &ok))
			return ok;
		rq = xcalloc(1, sizeof *rq);
		buf_init(&rq->body);
		replay_sse_init(&rq->sse);
		*con_cls = rq;
		return MHD_YES;
	}
	if ((n = *upload_size)) {
		*upload_size = 0;
		return upload_more(sv, rq, upload, n);
	}
	if (rq->too_big)
		return too_large(sv, c);
	return complete(sv, c, rq);
}

static void
request_done(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct server *sv = cls;
	struct request *rq = *con_cls;

	(void)c;
	(void)why;
	if (!rq)
		return;
	if (rq->last && sv->o->exit_when_done)
		pthread_kill(sv->main, SIGUSR1);
	buf_release(&rq->body);
	replay_sse_release(&rq->sse);
	free(rq);
	*con_cls = NULL;
}

/* ---- the server ---- */

/* listen_loopback binds 127.0.0.1:port and sets *port to the port bound */
static int
listen_loopback(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof a;
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hw_err_sys("cannot create a socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	a.sin_port = htons((uint16_t)*port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
	    listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		hw_err_sys("cannot listen on '127.0.0.1:%d'", *port);
		close(fd);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "%s", hw_err_msg());
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* announce writes the endpoint line to out and the banner to stderr */
static int
announce(const struct server *sv, int port, FILE *out)
{
	struct buf b;
	int rc = 0;

	buf_init(&b);
	buf_printf(&b, "{\"url\":\"http://127.0.0.1:%d/v1\",\"model\":\""
	    REPLAY_MODEL "\",\"replay\":true,\"script\":", port);
	json_canon_str(&b, sv->o->script, strlen(sv->o->script));
	buf_printf(&b, ",\"turns\":%zu}\n", sv->s->n);
	if (fwrite(b.p, 1, b.len, out) != b.len || fflush(out) != 0 ||
	    ferror(out))
		rc = hw_err_sys("cannot write 'stdout'");
	else
		fprintf(stderr, "%s: replay model (scripted turns, not a real "
		    "model) serving %s at http://127.0.0.1:%d/v1\n",
		    sv->o->prog, sv->o->script, port);
	buf_release(&b);
	return rc;
}

static struct MHD_Daemon *
daemon_start(struct server *sv, int fd)
{
	return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_AUTO, 0, NULL, NULL, handle, sv,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, request_done, sv,
	    MHD_OPTION_CONNECTION_TIMEOUT, 60u,
	    MHD_OPTION_CONNECTION_LIMIT, 64u,
	    MHD_OPTION_END);
}

/* run serves until SIGINT, SIGTERM, or SIGUSR1 from request_done */
static int
run(struct server *sv, FILE *out)
{
	struct MHD_Daemon *d;
	sigset_t set, old;
	int fd, port = sv->o->port, sig, rc;

	if ((fd = listen_loopback(&port)) < 0)
		return -1;
	/* blocked before the server thread starts, which inherits it */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	sv->main = pthread_self();
	if (!(d = daemon_start(sv, fd))) {
		close(fd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot start the "
		    "replay model's server");
	}
	if ((rc = announce(sv, port, out)) == 0)
		while (sigwait(&set, &sig) != 0)
			;
	MHD_stop_daemon(d);	/* which closes fd */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int
replay_serve(const struct replay_serve_opts *o, FILE *out)
{
	struct replay_script s;
	struct server sv = { .s = &s, .o = o };
	int rc;

	replay_script_init(&s);
	rc = replay_script_load(&s, o->script);
	if (rc == 0)
		rc = run(&sv, out);
	replay_script_release(&s);
	return rc;
}
