/* termown.c - heartwood owns its session while it waits for a line */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/tui.h"

#define TERM_TICK_MS 200	/* how often an idle terminal serves others */

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

struct term_owner {
	struct project p;
	struct session s;
	struct control *ctl;
};

static int
seen_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	(void)line, (void)n;
	control_seen(ctx, ev);
	return 0;
}

/* let_go stops serving; keep hands the locked lease on to t->lease */
static void
let_go(struct term *t, int keep)
{
	struct term_owner *o = t->owner;

	if (!o)
		return;
	control_close(o->ctl);	/* while the lease still makes it ours */
	if (keep)
		t->lease = session_hand_over(&o->s);
	else
		session_unlease(&o->s);
	session_release(&o->s);
	project_release(&o->p);
	free(o);
	t->owner = NULL;
}

void
term_disown(struct term *t)
{
	let_go(t, 0);
	lock_close(t->lease);
	t->lease = -1;
}

/* own_session takes the lease of an existing session, or gives up */
static int
own_session(struct term_owner *o, const char *sid)
{
	if (project_open(&o->p, 0) < 0) {
		project_release(&o->p);	/* it may hold its paths */
		return -1;
	}
	if (session_init(&o->s, &o->p, sid) < 0 || session_exists(&o->s) != 1) {
		session_release(&o->s);
		project_release(&o->p);
		return -1;
	}
	if (session_lease(&o->s) == 0)
		return 0;
	session_release(&o->s);
	project_release(&o->p);
	return -1;
}

/*
 * decided_unrun: the researcher decided a set that no agent has taken up.
 * Its decision reached the log, but whoever recorded it could not run the
 * agent on: it stopped first, or another terminal took the session in
 * between.  The terminal that takes the session runs it on, once for
 * each set (t->caught_up).
 */
static int
decided_unrun(struct term *t, const struct control *c)
{
	const char *g = proj_decided_unrun(control_proj(c));

	if (!g || !strncmp(g, t->caught_up, sizeof t->caught_up - 1))
		return 0;
	snprintf(t->caught_up, sizeof t->caught_up, "%s", g);
	return 1;
}

int
term_own(struct term *t)
{
	struct term_owner *o;

	if (t->owner)
		return 1;
	o = xcalloc(1, sizeof *o);
	if (own_session(o, t->sid) < 0) {
		free(o);
		return 0;
	}
	t->owner = o;
	if (!(o->ctl = control_open(&o->s)) ||
	    logs_verify(&o->s, seen_fn, o->ctl) < 0) {
		fprintf(t->err, "heartwood: warning: cannot take commands for "
		    "session '%s': %s\n", t->sid, hw_err_msg());
		term_disown(t);
		return 0;
	}
	if (decided_unrun(t, o->ctl))
		t->wake = 1;
	return 1;
}

/* wake_fn: a command from another process that the agent must act on */
static int
wake_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct term *t = ctx;
	const char *k = json_get_str(ev, "kind");

	(void)line, (void)n;
	if (k && (!strcmp(k, "approval.recorded") ||
	    !strcmp(k, "session.resumed") ||
	    !strcmp(k, "user_message.recorded")))
		t->wake = 1;
	return 0;
}

int
term_serve(struct term *t)
{
	int64_t count;

	if (!term_own(t))
		return 0;
	count = ((struct term_owner *)t->owner)->s.count;
	if (control_poll(((struct term_owner *)t->owner)->ctl, wake_fn, t) < 0)
		term_disown(t);
	else if (t->owner)
		count = ((struct term_owner *)t->owner)->s.count;
	if (t->wake) {
		/* the agent that runs next takes the lease from our hands,
		   so no other terminal can take the session in between */
		t->wake = 0;
		let_go(t, 1);
		return 2;
	}
	return count != t->events;
}

/*
 * term_idle serves what other processes sent, runs the agent when one
 * of them decided, resumed or asked, and shows what others changed.
 */
static void
term_idle(struct term *t)
{
	int r = term_serve(t);

	if (!r)
		return;
	fputc('\n', t->out);
	if (r == 2 && term_continue(t) < 0) {
		fputs("heartwood: ", t->err);
		tty_put(t->err, hw_err_msg(), strlen(hw_err_msg()), 0);
		fputc('\n', t->err);
	}
	term_render(t);
	fputs("heartwood> ", t->out);
	fflush(t->out);
	if (r == 2)
		term_own(t);
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
		if (t->wake && t->owner) {	/* term_own found work waiting */
			term_idle(t);
			continue;
		}
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
