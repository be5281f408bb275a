/*
 * watch.c - the terminal follows its session while it waits for a line:
 * it reads the logs as they grow and holds no lease
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/tui.h"

#define TERM_TICK_MS 200	/* how often an idle terminal looks */

static volatile sig_atomic_t term_interrupted;

static void
on_interrupt(int sig)
{
	(void)sig;
	term_interrupted = 1;
}

int
term_was_interrupted(void)
{
	return term_interrupted;
}

void
term_catch_interrupt(void)
{
	struct sigaction sa = { .sa_handler = on_interrupt };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);	/* no SA_RESTART: poll wakes */
}

/* What the terminal follows: the session's logs, read as they grow. */
struct term_watch {
	struct project p;
	struct session s;
	struct logtail *tail;
	int64_t count;		/* events verified so far */
	int failed;		/* the logs failed to verify: stop */
};

void
term_unwatch(struct term *t)
{
	struct term_watch *w = t->watch;

	if (!w)
		return;
	logtail_close(w->tail);
	session_release(&w->s);
	project_release(&w->p);
	free(w);
	t->watch = NULL;
}

/* watch_open starts following t's session once it exists */
static struct term_watch *
watch_open(struct term *t)
{
	struct term_watch *w = t->watch;

	if (w)
		return w;
	w = xcalloc(1, sizeof *w);
	if (session_init(&w->s, &w->p, t->sid) < 0 ||
	    project_open(&w->p, 0) < 0 || session_exists(&w->s) != 1) {
		session_release(&w->s);
		project_release(&w->p);
		free(w);
		return NULL;
	}
	w->tail = logtail_open(&w->s);
	return t->watch = w;
}

int
term_changed(struct term *t)
{
	struct term_watch *w = watch_open(t);
	int64_t got;

	if (!w || w->failed)
		return 0;
	do {
		if ((got = logtail_read(w->tail, NULL, NULL)) < 0) {
			w->failed = 1;	/* the projection will say why */
			t->events = -1;
			return 1;
		}
		w->count += got;
	} while (got == LOGTAIL_BATCH);
	if (w->count == t->events)
		return 0;
	t->events = w->count;	/* a render that fails is not retried */
	return 1;
}

/* term_idle shows what other processes changed while we wait */
static void
term_idle(struct term *t)
{
	if (!term_changed(t))
		return;
	fputc('\n', t->out);
	term_render(t);
	fputs("heartwood> ", t->out);
	fflush(t->out);
}

/* take_line moves the first line of in (without "\n") to *line */
static int
take_line(struct buf *in, char **line, int eof)
{
	char *nl = in->len ? memchr(in->p, '\n', in->len) : NULL;
	size_t n = nl ? (size_t)(nl - in->p) : in->len;

	if (!nl && !(eof && in->len))
		return 0;
	*line = xmalloc(n + 1);
	memcpy(*line, in->p, n);
	(*line)[n] = '\0';
	n += nl != NULL;
	memmove(in->p, in->p + n, in->len - n);
	in->len -= n;
	return 1;
}

int
term_read_line(struct term *t, int fd, struct buf *in, char **line)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char chunk[65536];
	ssize_t k;
	int eof = 0;

	for (;;) {
		if (take_line(in, line, eof))
			return 1;
		if (eof)
			return 0;
		if (in->len > COMMAND_LINE_MAX)
			return hw_err_set(HW_EXIT_DATA, "an input line is "
			    "longer than %u bytes", COMMAND_LINE_MAX);
		if (term_interrupted)
			return hw_err_set(HW_EXIT_INTR, "Interrupted.");
		if ((k = poll(&pf, 1, TERM_TICK_MS)) == 0) {
			term_idle(t);
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return hw_err_sys("cannot poll 'stdin'");
		if ((k = read(fd, chunk, sizeof chunk)) < 0 && errno != EINTR)
			return hw_err_sys("cannot read 'stdin'");
		if (k == 0)
			eof = 1;
		else if (k > 0)
			buf_add(in, chunk, (size_t)k);
	}
}
