/*
 * hub.c - the live transports: one watch per followed session reads its
 * logs as they grow (no lease) and hands every durable batch, with the
 * projection of the same read, to each subscriber exactly once in
 * sequence order; SSE subscribers are libmicrohttpd responses suspended
 * while they wait, WebSocket subscribers upgraded sockets served here
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "serve/gw.h"

#define HUB_TICK_MS 50			/* how often the logs are looked at */
#define HUB_PING_MS 15000		/* an SSE comment, to find the gone */
#define SUB_QUEUE_MAX (4u << 20)	/* bytes a slow subscriber may owe */
#define HUB_POLL_MAX 8192
#define STREAM_LINE_MAX (4u << 20)
#define WATCH_IDLE_MS 30000		/* a watch nobody asked for ends */

extern char **environ;

struct watch;

struct sub {
	struct sub *next;
	struct watch *w;
	struct hub *h;
	int ws;				/* a WebSocket, else SSE */
	int64_t sent;			/* the last sequence delivered */
	struct buf q;			/* bytes owed to the client */
	size_t off;
	int dead;			/* drop it: gone, slow or refused */
	struct MHD_Connection *c;	/* SSE */
	int suspended;
	int fd;				/* WebSocket */
	struct MHD_UpgradeResponseHandle *urh;
	struct buf in, pl;
};

struct watch {
	struct watch *next;
	char sid[130];
	struct project p;
	struct session s;
	int exists;
	struct logtail *t;
	struct proj *proj;
	int64_t count;
	int failed;
	char why[512];			/* why it failed */
	struct sub *subs;
	pid_t agent;			/* our hw-agent run, or 0 */
	int afd;			/* its stdout: transient records */
	struct buf ain;
	int again;			/* a command came while it ran */
	struct buf pcache;		/* the projection emitted, when valid */
	int pvalid;
	int64_t used_ms;		/* the last hub_project of it */
};

struct hub {
	struct gateway *gw;
	pthread_mutex_t mu;
	pthread_t th;
	int wake[2];
	int stop;
	struct watch *watches;
	int64_t pinged;
};

static void
wake(struct hub *h)
{
	ssize_t k = write(h->wake[1], "x", 1);

	(void)k;
}

static struct watch *
watch_get(struct hub *h, const char *sid)
{
	struct watch *w;

	for (w = h->watches; w; w = w->next)
		if (!strcmp(w->sid, sid))
			return w;
	w = xcalloc(1, sizeof *w);
	snprintf(w->sid, sizeof w->sid, "%s", sid);
	w->proj = proj_new(sid);
	w->afd = -1;
	buf_init(&w->ain);
	buf_init(&w->pcache);
	session_init(&w->s, &w->p, sid);
	w->next = h->watches;
	h->watches = w;
	return w;
}

static void
watch_free(struct hub *h, struct watch *w)
{
	struct watch **pp;

	for (pp = &h->watches; *pp; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	logtail_close(w->t);
	proj_free(w->proj);
	session_release(&w->s);
	project_release(&w->p);
	buf_release(&w->ain);
	buf_release(&w->pcache);
	if (w->afd >= 0)
		close(w->afd);
	free(w);
}

/* sub_put queues one frame {"events":[ev],"projection":proj} */
static void
sub_put(struct sub *u, const char *ev, size_t en, const struct buf *proj)
{
	struct buf f;

	if (u->dead)
		return;
	/* a client that leaves SUB_QUEUE_MAX unread is let go; one frame,
	   however large, is always taken by an empty queue */
	if (u->q.len > u->off && u->q.len - u->off + en + proj->len >
	    SUB_QUEUE_MAX) {
		u->dead = 1;
	} else if (u->ws) {
		buf_init(&f);
		buf_adds(&f, "{\"events\":[");
		buf_add(&f, ev, en);
		buf_adds(&f, "],\"projection\":");
		buf_add(&f, proj->p, proj->len);
		buf_addc(&f, '}');
		ws_frame(&u->q, 1, f.p, f.len);
		buf_release(&f);
	} else {
		buf_adds(&u->q, "event: heartwood-session-events\ndata: "
		    "{\"events\":[");
		buf_add(&u->q, ev, en);
		buf_adds(&u->q, "],\"projection\":");
		buf_add(&u->q, proj->p, proj->len);
		buf_adds(&u->q, "}\n\n");
	}
	if (!u->ws && u->suspended) {
		u->suspended = 0;
		MHD_resume_connection(u->c);
	}
}

/* the events of one batch, each with its sequence, for the filter */
struct batch {
	struct watch *w;
	struct buf lines;		/* the event lines, "," joined */
	size_t *ends;			/* where each ends in lines */
	int64_t *seqs;
	size_t n, cap;
};

static int
batch_take(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct batch *b = ctx;
	int64_t seq = b->w->count;

	proj_apply(b->w->proj, ev);
	b->w->count++;
	json_get_int(ev, "sequence", &seq);
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->ends = xrealloc(b->ends, b->cap * sizeof *b->ends);
		b->seqs = xrealloc(b->seqs, b->cap * sizeof *b->seqs);
	}
	if (b->lines.len)
		buf_addc(&b->lines, ',');
	buf_add(&b->lines, line, n);
	b->ends[b->n] = b->lines.len;
	b->seqs[b->n++] = seq;
	return 0;
}

/* deliver hands each subscriber the events of b it has not had */
static void
deliver(struct watch *w, struct batch *b, const struct buf *proj)
{
	struct sub *u;
	size_t i, start;

	for (u = w->subs; u; u = u->next) {
		for (i = 0; i < b->n && b->seqs[i] <= u->sent; i++)
			;
		if (i == b->n)
			continue;
		start = i ? b->ends[i - 1] + 1 : 0;
		sub_put(u, b->lines.p + start, b->lines.len - start, proj);
		u->sent = b->seqs[b->n - 1];
	}
}

/* watch_read reads what the logs gained and delivers it; -1 on failure */
static int
watch_read(struct watch *w)
{
	struct batch b = { .w = w };
	struct buf proj;
	int64_t k;
	int rc = 0;

	if (w->failed)
		return hw_err_set(HW_EXIT_DATA, "%s", w->why);
	if (!w->exists) {
		if (project_open(&w->p, 0) < 0 || session_exists(&w->s) != 1) {
			project_release(&w->p);
			return 0;
		}
		if (session_settle(&w->s) < 0) {
			project_release(&w->p);
			return -1;
		}
		w->exists = 1;
		w->t = logtail_open(&w->s);
	}
	buf_init(&b.lines);
	while ((k = logtail_read(w->t, batch_take, &b)) == LOGTAIL_BATCH)
		;
	if (k < 0) {
		w->failed = 1;
		snprintf(w->why, sizeof w->why, "%s", hw_err_msg());
		rc = -1;
	}
	if (b.n) {
		w->pvalid = 0;
		buf_init(&proj);
		proj_emit(w->proj, &proj);
		deliver(w, &b, &proj);
		buf_release(&proj);
	}
	buf_release(&b.lines);
	free(b.ends);
	free(b.seqs);
	return rc;
}

/*
 * sub_add registers u with session sid's watch and queues its first
 * frame: the events after `after` up to where the watch stands, with the
 * watch's projection, so that the watch's later batches follow on.
 */
static int
sub_add(struct hub *h, struct sub *u, const char *sid, int64_t after)
{
	struct watch *w = watch_get(h, sid);
	struct buf pair, proj;
	struct arena a;
	struct jval *v, *evs;
	char err[128];
	size_t i;
	int first = 1;

	u->w = w;
	watch_read(w);
	buf_init(&pair);
	buf_init(&proj);
	arena_init(&a);
	proj_emit(w->proj, &proj);
	/* the catch-up: events after `after` below the watch's count */
	if (w->exists && after + 1 < w->count && session_pair(&w->s, 1, after,
	    &pair) == 0 && (v = json_parse(&a, pair.p, pair.len, err,
	    sizeof err)) && (evs = json_get(v, "events"))) {
		buf_clear(&pair);
		for (i = 0; i < evs->n; i++) {
			int64_t seq = -1;

			json_get_int(evs->u.a[i], "sequence", &seq);
			if (seq >= w->count)
				break;
			if (!first)
				buf_addc(&pair, ',');
			json_canon(&pair, evs->u.a[i]);
			first = 0;
		}
	} else {
		buf_clear(&pair);
	}
	u->sent = w->count - 1;
	sub_put(u, pair.p ? pair.p : "", pair.len, &proj);
	u->next = w->subs;
	w->subs = u;
	arena_release(&a);
	buf_release(&pair);
	buf_release(&proj);
	return w->failed ? -1 : 0;
}

static void
sub_unlink(struct sub *u)
{
	struct sub **pp;

	for (pp = &u->w->subs; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			return;
		}
}

static void
sub_free(struct sub *u)
{
	buf_release(&u->q);
	buf_release(&u->in);
	buf_release(&u->pl);
	free(u);
}

/* ---- server-sent events ---- */

struct sse_ctx {
	struct hub *h;
	struct sub *u;
};

static ssize_t
sse_pull(void *cls, uint64_t pos, char *out, size_t max)
{
	struct sse_ctx *x = cls;
	struct sub *u = x->u;
	size_t n;
	ssize_t ret;

	(void)pos;
	pthread_mutex_lock(&x->h->mu);
	if (u->dead || x->h->stop) {
		ret = MHD_CONTENT_READER_END_WITH_ERROR;
	} else if ((n = u->q.len - u->off) == 0) {
		u->suspended = 1;
		MHD_suspend_connection(u->c);
		ret = 0;
	} else {
		if (n > max)
			n = max;
		memcpy(out, u->q.p + u->off, n);
		u->off += n;
		if (u->off == u->q.len)
			buf_clear(&u->q), u->off = 0;
		ret = (ssize_t)n;
	}
	pthread_mutex_unlock(&x->h->mu);
	return ret;
}

static void
sse_gone(void *cls)
{
	struct sse_ctx *x = cls;

	pthread_mutex_lock(&x->h->mu);
	sub_unlink(x->u);
	pthread_mutex_unlock(&x->h->mu);
	sub_free(x->u);
	free(x);
}

enum MHD_Result
hub_sse(struct req *r, const char *sid, int64_t after)
{
	struct hub *h = r->gw->hub;
	struct sse_ctx *x = xcalloc(1, sizeof *x);
	struct MHD_Response *resp;
	enum MHD_Result ret;

	x->h = h;
	x->u = xcalloc(1, sizeof *x->u);
	x->u->c = r->c;
	x->u->fd = -1;
	buf_init(&x->u->q);
	pthread_mutex_lock(&h->mu);
	if (sub_add(h, x->u, sid, after) < 0) {
		sub_unlink(x->u);
		pthread_mutex_unlock(&h->mu);
		sub_free(x->u);
		free(x);
		return reply_hw(r);
	}
	pthread_mutex_unlock(&h->mu);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384,
	    sse_pull, x, sse_gone);
	if (!resp)
		return MHD_NO;
	headers_secure(r->gw, resp, "text/event-stream");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	r->done = 1;
	ret = MHD_queue_response(r->c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ---- WebSocket ---- */

static void ws_close(struct watch *w, struct sub *u);

static void
on_upgrade(void *cls, struct MHD_Connection *c, void *con_cls,
    const char *extra, size_t extra_n, MHD_socket sock,
    struct MHD_UpgradeResponseHandle *urh)
{
	struct sub *u = cls;
	int fl;

	(void)c, (void)con_cls;
	if ((fl = fcntl(sock, F_GETFL)) >= 0)
		fcntl(sock, F_SETFL, fl | O_NONBLOCK);
	/* the hub owns it from here; it was registered at the handshake */
	pthread_mutex_lock(&u->h->mu);
	u->fd = sock;
	u->urh = urh;
	if (extra_n)
		buf_add(&u->in, extra, extra_n);
	if (u->h->stop)
		ws_close(u->w, u);
	pthread_mutex_unlock(&u->h->mu);
	wake(u->h);
}

enum MHD_Result
hub_ws(struct req *r, const char *sid, int64_t after)
{
	struct hub *h = r->gw->hub;
	const char *key = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Key");
	const char *ver = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
	    "Sec-WebSocket-Version");
	const char *conn = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
	    "Connection");
	struct MHD_Response *resp;
	struct sub *u;
	char acc[29];
	enum MHD_Result ret;

	if (!key || strlen(key) != 24 || !ver || strcmp(ver, "13") || !conn ||
	    !strcasestr(conn, "upgrade") || strcmp(r->method, "GET"))
		return reply_error(r, 400, NULL, "not a WebSocket handshake "
		    "(RFC 6455, version 13)");
	u = xcalloc(1, sizeof *u);
	u->ws = 1;
	u->fd = -1;
	u->h = h;	/* not yet upgraded (fd -1): the hub leaves it */
	buf_init(&u->q);
	buf_init(&u->in);
	buf_init(&u->pl);
	pthread_mutex_lock(&h->mu);
	if (sub_add(h, u, sid, after) < 0) {
		sub_unlink(u);
		pthread_mutex_unlock(&h->mu);
		sub_free(u);
		return reply_hw(r);
	}
	pthread_mutex_unlock(&h->mu);
	ws_accept(key, acc);
	resp = MHD_create_response_for_upgrade(on_upgrade, u);
	headers_secure(r->gw, resp, NULL);
	MHD_add_response_header(resp, "Upgrade", "websocket");
	MHD_add_response_header(resp, "Sec-WebSocket-Accept", acc);
	r->done = 1;
	ret = MHD_queue_response(r->c, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* ws_input answers what the client sent: close, ping; the rest ignored */
static void
ws_input(struct sub *u)
{
	unsigned char chunk[4096];
	ssize_t k;
	long used;
	int op, fin;

	while ((k = read(u->fd, chunk, sizeof chunk)) > 0) {
		if (u->in.len + (size_t)k > WS_FRAME_MAX + 16) {
			u->dead = 1;
			return;
		}
		buf_add(&u->in, chunk, (size_t)k);
	}
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR))
		u->dead = 1;
	while (!u->dead && (used = ws_parse((unsigned char *)u->in.p,
	    u->in.len, &op, &fin, &u->pl)) != 0) {
		if (used < 0) {
			ws_frame(&u->q, 8, "\x03\xea", 2);	/* 1002 */
			u->dead = 2;
			return;
		}
		memmove(u->in.p, u->in.p + used, u->in.len - (size_t)used);
		u->in.len -= (size_t)used;
		if (op == 8) {
			ws_frame(&u->q, 8, u->pl.p, u->pl.len >= 2 ? 2 : 0);
			u->dead = 2;	/* close after the echo is out */
		} else if (op == 9) {
			ws_frame(&u->q, 10, u->pl.p, u->pl.len);
		}
	}
}

static void
ws_output(struct sub *u)
{
	ssize_t k;

	while (u->off < u->q.len) {
		k = write(u->fd, u->q.p + u->off, u->q.len - u->off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return;
		if (k <= 0) {
			u->dead = 1;
			return;
		}
		u->off += (size_t)k;
	}
	buf_clear(&u->q);
	u->off = 0;
	if (u->dead == 2)
		u->dead = 1;
}

static void
ws_close(struct watch *w, struct sub *u)
{
	(void)w;
	sub_unlink(u);
	if (u->urh)
		MHD_upgrade_action(u->urh, MHD_UPGRADE_ACTION_CLOSE);
	sub_free(u);
}

/* ---- the agent, continued after a command ---- */

static void
agent_start(struct watch *w)
{
	char *path = driver_find("hw-agent");
	char *argv[] = { "hw-agent", "run", w->sid, "--stream", NULL };
	posix_spawn_file_actions_t fa;
	int pfd[2];

	if (!path || pipe2(pfd, O_CLOEXEC) < 0) {
		fprintf(stderr, "hw-serve: warning: cannot continue session "
		    "'%s': %s\n", w->sid, path ? strerror(errno) :
		    hw_err_msg());
		free(path);
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	if ((errno = posix_spawn(&w->agent, path, &fa, NULL, argv,
	    environ)) != 0) {
		fprintf(stderr, "hw-serve: warning: cannot run '%s': %s\n",
		    path, strerror(errno));
		w->agent = 0;
		close(pfd[0]);
	} else {
		fcntl(pfd[0], F_SETFL, O_NONBLOCK);
		w->afd = pfd[0];
	}
	close(pfd[1]);
	posix_spawn_file_actions_destroy(&fa);
	free(path);
}

void
hub_continue(struct hub *h, const char *sid)
{
	struct watch *w;

	pthread_mutex_lock(&h->mu);
	w = watch_get(h, sid);
	if (w->agent)
		w->again = 1;
	else
		agent_start(w);
	pthread_mutex_unlock(&h->mu);
	wake(h);
}

/* stream_line applies one transient record and tells the subscribers */
static void
stream_line(struct watch *w, const char *s, size_t n)
{
	struct arena a;
	struct jval *v;
	struct buf proj;
	struct sub *u;
	char err[64];

	arena_init(&a);
	watch_read(w);	/* the events it follows come first */
	if ((v = json_parse(&a, s, n, err, sizeof err)) &&
	    proj_stream(w->proj, v) == 1) {
		w->pvalid = 0;
		buf_init(&proj);
		proj_emit(w->proj, &proj);
		for (u = w->subs; u; u = u->next)
			sub_put(u, "", 0, &proj);
		buf_release(&proj);
	}
	arena_release(&a);
}

static void
agent_read(struct watch *w)
{
	char chunk[65536], *nl;
	ssize_t k;
	size_t n;

	while ((k = read(w->afd, chunk, sizeof chunk)) > 0) {
		buf_add(&w->ain, chunk, (size_t)k);
		while ((nl = memchr(w->ain.p, '\n', w->ain.len))) {
			n = (size_t)(nl - w->ain.p);
			stream_line(w, w->ain.p, n);
			w->ain.len -= n + 1;
			memmove(w->ain.p, nl + 1, w->ain.len);
		}
		if (w->ain.len > STREAM_LINE_MAX)
			buf_clear(&w->ain);
	}
	if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
		close(w->afd);
		w->afd = -1;
		buf_clear(&w->ain);
	}
}

static void
agent_reap(struct watch *w)
{
	int st;

	if (!w->agent || w->afd >= 0 || waitpid(w->agent, &st, WNOHANG) !=
	    w->agent)
		return;
	w->agent = 0;
	watch_read(w);
	if (w->again) {
		w->again = 0;
		agent_start(w);
	}
}

/* ---- the projection, from the watch ---- */

int
hub_project(struct hub *h, const char *sid, struct buf *out)
{
	struct watch *w;
	int rc;

	pthread_mutex_lock(&h->mu);
	w = watch_get(h, sid);
	w->used_ms = now_ms();
	/* the logs as they are now; unchanged logs cost a look, no reduce */
	if ((rc = watch_read(w)) == 0) {
		if (!w->pvalid) {
			buf_clear(&w->pcache);
			proj_emit(w->proj, &w->pcache);
			w->pvalid = 1;
		}
		buf_add(out, w->pcache.p, w->pcache.len);
	}
	pthread_mutex_unlock(&h->mu);
	return rc;
}

/* ---- the hub's thread ---- */

static size_t
fill_poll(struct hub *h, struct pollfd *pf, void **who, int *what)
{
	struct watch *w;
	struct sub *u;
	size_t n = 1;

	pf[0].fd = h->wake[0];
	pf[0].events = POLLIN;
	for (w = h->watches; w && n < HUB_POLL_MAX; w = w->next) {
		if (w->afd >= 0) {
			pf[n].fd = w->afd, pf[n].events = POLLIN;
			who[n] = w, what[n++] = 0;
		}
		for (u = w->subs; u && n < HUB_POLL_MAX; u = u->next)
			if (u->ws && u->fd >= 0) {
				pf[n].fd = u->fd;
				pf[n].events = POLLIN | (u->q.len > u->off ?
				    POLLOUT : 0);
				who[n] = u, what[n++] = 1;
			}
	}
	return n;
}

static void
sweep(struct hub *h, int tick)
{
	struct watch *w, *wn;
	struct sub *u, *un;
	int64_t now = now_ms();
	int ping = now - h->pinged >= HUB_PING_MS;

	if (ping)
		h->pinged = now;
	for (w = h->watches; w; w = wn) {
		wn = w->next;
		if (tick && w->subs)
			watch_read(w);
		agent_reap(w);
		for (u = w->subs; u; u = un) {
			un = u->next;
			if (ping && !u->ws && !u->dead) {
				buf_adds(&u->q, ": ping\n\n");
				if (u->suspended) {
					u->suspended = 0;
					MHD_resume_connection(u->c);
				}
			}
			if (u->ws && u->fd >= 0 && u->q.len > u->off)
				ws_output(u);
			if (u->ws && u->fd >= 0 && u->dead == 1)
				ws_close(w, u);
			else if (!u->ws && u->dead && u->suspended) {
				u->suspended = 0;
				MHD_resume_connection(u->c);
			}
		}
		if (!w->subs && !w->agent && w->afd < 0 &&
		    now - w->used_ms > WATCH_IDLE_MS)
			watch_free(h, w);
	}
}

static void *
hub_main(void *arg)
{
	struct hub *h = arg;
	struct pollfd *pf = xcalloc(HUB_POLL_MAX, sizeof *pf);
	void **who = xcalloc(HUB_POLL_MAX, sizeof *who);
	int *what = xcalloc(HUB_POLL_MAX, sizeof *what);
	int64_t ticked = 0;
	char drain[256];
	size_t n, i;

	pthread_mutex_lock(&h->mu);
	while (!h->stop) {
		n = fill_poll(h, pf, who, what);
		pthread_mutex_unlock(&h->mu);
		poll(pf, n, HUB_TICK_MS);
		pthread_mutex_lock(&h->mu);
		if (pf[0].revents & POLLIN)
			while (read(h->wake[0], drain, sizeof drain) > 0)
				;
		for (i = 1; i < n && !h->stop; i++) {
			if (!pf[i].revents)
				continue;
			if (what[i] == 0)
				agent_read(who[i]);
			else if (pf[i].revents & (POLLIN | POLLHUP | POLLERR))
				ws_input(who[i]);
		}
		sweep(h, now_ms() - ticked >= HUB_TICK_MS);
		if (now_ms() - ticked >= HUB_TICK_MS)
			ticked = now_ms();
	}
	pthread_mutex_unlock(&h->mu);
	free(pf);
	free(who);
	free(what);
	return NULL;
}

struct hub *
hub_new(struct gateway *gw)
{
	struct hub *h = xcalloc(1, sizeof *h);

	h->gw = gw;
	h->pinged = now_ms();
	pthread_mutex_init(&h->mu, NULL);
	if (pipe2(h->wake, O_CLOEXEC | O_NONBLOCK) < 0)
		h->wake[0] = h->wake[1] = -1;
	pthread_create(&h->th, NULL, hub_main, h);
	return h;
}

/* a suspended response must be resumed to end; agents run to their end */
void
hub_close(struct hub *h)
{
	struct watch *w;
	struct sub *u, *un;

	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->stop = 1;
	for (w = h->watches; w; w = w->next)
		for (u = w->subs; u; u = un) {
			un = u->next;
			u->dead = 1;
			if (u->ws && u->fd >= 0)
				ws_close(w, u);
			else if (!u->ws && u->suspended) {
				u->suspended = 0;
				MHD_resume_connection(u->c);
			}
		}
	pthread_mutex_unlock(&h->mu);
	wake(h);
	pthread_join(h->th, NULL);
}

void
hub_free(struct hub *h)
{
	if (!h)
		return;
	while (h->watches)
		watch_free(h, h->watches);
	close(h->wake[0]);
	close(h->wake[1]);
	pthread_mutex_destroy(&h->mu);
	free(h);
}
