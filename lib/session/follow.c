/* follow.c - following a session as it grows */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session/session.h"

#define TICK_MS 50		/* how often the logs are checked for growth */
#define READ_CHUNK 65536

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

/* The transient records: split into lines by hand, since a reader that
   waited for the rest of a line would stop the durable events too. */
struct tstream {
	int fd;			/* -1 when there is none, or it ended */
	int own;		/* opened here, so closed here */
	struct buf b;		/* bytes not yet split into lines */
	long lineno;
	int skipping;		/* dropping the rest of an over-long line */
};

struct follower {
	struct session *s;
	const struct follow_opts *o;
	FILE *out;
	struct proj *p;
	struct logtail *t;	/* NULL until the session exists */
	struct tstream in;
	struct arena a;		/* the stream record being applied */
	struct buf events;	/* this batch's printed events, "," joined */
	struct buf cur, last;	/* projections: this one, the last printed */
	int64_t count;		/* events reduced */
	int64_t printed_ms;	/* when the last line was printed */
	int closed;		/* the reader of out went away */
};

/*
 * put_line prints {"events": [...], "projection": ...} from f->events and
 * f->cur (keys in canonical order), and keeps f->cur as the last printed.
 * The pieces are written as they are, since the first batch can be large.
 * A reader that went away (EPIPE) ends following quietly; any other write
 * error is reported.  Either way stdio's pending bytes are dropped, so
 * the caller's final flush does not fail a second time.
 */
static int
put_line(struct follower *f)
{
	static const char pre[] = "{\"events\":[", mid[] = "],\"projection\":";
	struct buf tmp;
	int e;

	fputs(pre, f->out);
	if (f->events.len)	/* an empty buffer may hold no memory at all */
		fwrite(f->events.p, 1, f->events.len, f->out);
	fputs(mid, f->out);
	fwrite(f->cur.p, 1, f->cur.len, f->out);
	fputs("}\n", f->out);
	tmp = f->last, f->last = f->cur, f->cur = tmp;
	buf_clear(&f->events);
	if (fflush(f->out) == 0 && !ferror(f->out)) {
		f->printed_ms = now_ms();
		return 0;
	}
	e = errno;
	clearerr(f->out);
	__fpurge(f->out);
	if (e == EPIPE || (e == EINTR && stopping)) {
		f->closed = 1;
		return 0;
	}
	errno = e;
	return hw_err_sys("cannot write 'stdout'");
}

static void
emit(struct follower *f)
{
	buf_clear(&f->cur);
	proj_emit(f->p, &f->cur);
}

/* collect reduces every event and keeps the ones to print */
static int
collect(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct follower *f = ctx;
	int64_t seq = f->count;

	proj_apply(f->p, ev);
	f->count++;
	json_get_int(ev, "sequence", &seq);
	if (seq > f->o->after) {
		if (f->events.len)
			buf_addc(&f->events, ',');
		buf_add(&f->events, line, n);
	}
	return 0;
}

/* read_logs prints the next verified batch; the first one even if empty */
static int
read_logs(struct follower *f, int first)
{
	int64_t n, got = 0;

	/* a long log is read in several holds of the lock, shown as one */
	while ((n = logtail_read(f->t, collect, f)) == LOGTAIL_BATCH)
		got += n;
	if (n >= 0)
		n += got;
	if (n < 0) {
		if (hw_err_code() != HW_EXIT_DATA)
			return -1;
		if (strncmp(hw_err_msg(), "sequence ", 9))
			return hw_err_set(HW_EXIT_DATA, "follow '%s': sequence "
			    "%lld: %s", f->s->id, (long long)f->count,
			    hw_err_msg());
		return hw_err_set(HW_EXIT_DATA, "follow '%s': %s", f->s->id,
		    hw_err_msg());
	}
	if (n == 0 && !first)
		return 0;
	emit(f);
	return put_line(f);
}

/*
 * appeared: 1 once the session exists and its first batch is printed, 0
 * while it does not.  A store that was missing is checked as it appears.
 */
static int
appeared(struct follower *f, int exists)
{
	struct project *p = f->s->proj;
	int k;

	if (!exists) {
		if ((k = session_exists(f->s)) <= 0)
			return k;
		project_release(p);
		if (project_open(p, 0) < 0)
			return hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
	}
	if (session_settle(f->s) < 0)
		return -1;
	f->t = logtail_open(f->s);
	return read_logs(f, exists) < 0 ? -1 : 1;
}

static void
warn_line(struct follower *f, const char *why)
{
	fprintf(stderr, "%s: warning: stream line %ld: %s\n",
	    program_invocation_short_name, f->in.lineno, why);
}

/* stream_record applies one transient record; a change prints a line */
static int
stream_record(struct follower *f, const char *line, size_t n)
{
	struct jval *rec;
	char err[128];
	int r;

	f->in.lineno++;
	arena_clear(&f->a);
	if (!(rec = json_parse(&f->a, line, n, err, sizeof err))) {
		warn_line(f, err);
		return 0;
	}
	if ((r = proj_stream(f->p, rec)) < 0)
		warn_line(f, hw_err_msg());
	if (r <= 0)
		return 0;
	emit(f);
	/* a record the projection does not show prints nothing */
	if (f->cur.len == f->last.len && !memcmp(f->cur.p, f->last.p,
	    f->cur.len))
		return 0;
	return put_line(f);
}

/* stream_lines applies the complete lines buffered, or all at EOF */
static int
stream_lines(struct follower *f, int eof)
{
	struct tstream *in = &f->in;
	size_t start = 0, n;
	char *nl;

	while (!f->closed && start < in->b.len) {
		nl = memchr(in->b.p + start, '\n', in->b.len - start);
		if (!nl && in->skipping) {
			start = in->b.len;
			break;
		}
		if (!nl && !eof)
			break;
		n = nl ? (size_t)(nl - (in->b.p + start)) : in->b.len - start;
		if (in->skipping)
			in->skipping = 0;
		else if (stream_record(f, in->b.p + start, n) < 0)
			return -1;
		start += n + (nl != NULL);
	}
	memmove(in->b.p, in->b.p + start, in->b.len - start);
	in->b.len -= start;
	if (in->b.len > JSONL_LINE_MAX) {
		in->lineno++;
		fprintf(stderr, "%s: warning: stream line %ld: longer than %u "
		    "bytes\n", program_invocation_short_name, in->lineno,
		    JSONL_LINE_MAX);
		in->skipping = 1;
		buf_clear(&in->b);
	}
	return 0;
}

static void
stream_close(struct tstream *in)
{
	if (in->own && in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

/* stream_pump reads what the stream has (one read, which cannot block) */
static int
stream_pump(struct follower *f)
{
	struct tstream *in = &f->in;
	ssize_t n;

	buf_reserve(&in->b, READ_CHUNK);
	n = read(in->fd, in->b.p + in->b.len, READ_CHUNK);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return 0;
	if (n < 0) {
		fprintf(stderr, "%s: warning: cannot read the stream: %s\n",
		    program_invocation_short_name, strerror(errno));
		stream_close(in);
		return 0;
	}
	in->b.len += (size_t)n;
	if (n == 0)
		stream_close(in);
	return stream_lines(f, n == 0);
}

/* stream_open opens --stream: a FIFO waits for its writer, not its open */
static int
stream_open(struct tstream *in, const char *path)
{
	struct stat st;

	in->fd = -1;
	if (!path)
		return 0;
	if (!strcmp(path, "-")) {
		in->fd = STDIN_FILENO;
		return 0;
	}
	in->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (in->fd < 0)
		return hw_err_set(errno == ENOENT ? HW_EXIT_NOINPUT :
		    HW_EXIT_IO, "cannot open stream '%s': %s", path,
		    strerror(errno));
	in->own = 1;
	if (fstat(in->fd, &st) == 0 && !S_ISDIR(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode))
		errno = EISDIR;
	hw_err_sys("cannot read stream '%s'", path);
	stream_close(in);
	return -1;
}

/*
 * wait_tick sleeps until the stream has input, a tick or the deadline.
 * It also watches out, with no events asked for, so a reader that went
 * away is noticed while nothing is being written.
 */
static int
wait_tick(struct follower *f, int64_t deadline)
{
	struct pollfd pfd[2] = {
		{ fileno(f->out), 0, 0 }, { f->in.fd, POLLIN, 0 }
	};
	int64_t left = deadline - now_ms();
	int r;

	if (deadline > 0 && left <= 0)
		return 0;
	r = poll(pfd, f->in.fd >= 0 ? 2 : 1, deadline > 0 && left < TICK_MS ?
	    (int)left : TICK_MS);
	if (r < 0 && errno != EINTR)
		return hw_err_sys("cannot poll");
	if (r > 0 && (pfd[0].revents & (POLLERR | POLLHUP))) {
		f->closed = 1;
		return 0;
	}
	if (r > 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR)))
		return stream_pump(f);
	return 0;
}

static int
follow_loop(struct follower *f, int exists)
{
	int64_t checked = now_ms(), deadline;
	int k = exists;

	/* a session that does not exist yet has the empty projection */
	if (exists ? appeared(f, 1) < 0 : (emit(f), put_line(f) < 0))
		return -1;
	while (!stopping && !f->closed) {
		deadline = f->o->idle_exit > 0 ? f->printed_ms +
		    (int64_t)(f->o->idle_exit * 1000) : 0;
		if (deadline > 0 && now_ms() >= deadline)
			break;
		if (wait_tick(f, deadline) < 0)
			return -1;
		if (stopping || f->closed || now_ms() - checked < TICK_MS)
			continue;
		checked = now_ms();
		if (!k) {
			if ((k = appeared(f, 0)) < 0)
				return -1;
		} else if (read_logs(f, 0) < 0)
			return -1;
	}
	return 0;
}

int
session_follow(struct session *s, int exists, const struct follow_opts *o,
    FILE *out)
{
	struct follower f;
	struct sigaction sa, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGPIPE };
	int i, rc;

	memset(&f, 0, sizeof f);
	f.s = s, f.o = o, f.out = out;
	if (stream_open(&f.in, o->stream) < 0)
		return -1;
	f.p = proj_new(s->id);
	arena_init(&f.a);
	buf_init(&f.in.b);
	buf_init(&f.events);
	buf_init(&f.cur);
	buf_init(&f.last);
	f.printed_ms = now_ms();
	stopping = 0;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++) {
		/* no SA_RESTART: a signal must end the wait in poll() */
		sa.sa_handler = sigs[i] == SIGPIPE ? SIG_IGN : on_stop;
		sigaction(sigs[i], NULL, &old[i]);
		/* a signal ignored at start (a background job) stays so */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	rc = follow_loop(&f, exists);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	stream_close(&f.in);
	logtail_close(f.t);
	proj_free(f.p);
	arena_release(&f.a);
	buf_release(&f.in.b);
	buf_release(&f.events);
	buf_release(&f.cur);
	buf_release(&f.last);
	return rc;
}
