/* progress.c - progress on stderr while the agent runs */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tui/tui.h"

struct progress {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int done;
	int tty;		/* animate on a terminal, without NO_COLOR */
	FILE *err;
	struct timespec start;
};

static int64_t
since_ms(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t0->tv_sec) * 1000 +
	    (now.tv_nsec - t0->tv_nsec) / 1000000;
}

/* wait_until waits for done or until ms after the start: 1 when done */
static int
wait_until(struct progress *p, int64_t ms)
{
	struct timespec at = p->start;

	at.tv_sec += ms / 1000;
	at.tv_nsec += (ms % 1000) * 1000000;
	if (at.tv_nsec >= 1000000000)
		at.tv_sec++, at.tv_nsec -= 1000000000;
	while (!p->done && pthread_cond_timedwait(&p->cv, &p->mu, &at) == 0)
		;
	return p->done;
}

static void
tick(struct progress *p, int64_t ms, int n)
{
	if (!p->tty) {
		fprintf(p->err, "heartwood: the agent is still working "
		    "(%llds); hw pause from another terminal stops it at the "
		    "next step\n", (long long)(ms / 1000));
	} else if (ms < 10000) {
		fprintf(p->err, "\rWorking%.*s\033[K", n % 4, "...");
	} else {
		fprintf(p->err, "\rstill working · %llds%.*s\033[K",
		    (long long)(ms / 1000), n % 4, "...");
	}
	fflush(p->err);
}

static void *
run(void *arg)
{
	struct progress *p = arg;
	int64_t step = p->tty ? 500 : TERM_PROGRESS_LINE_MS;
	int64_t at = p->tty ? 1000 : TERM_PROGRESS_LINE_MS;
	int n = 0, shown = 0;

	pthread_mutex_lock(&p->mu);
	for (; !wait_until(p, at); at += step, n++, shown = 1)
		tick(p, since_ms(&p->start), n);
	if (shown && p->tty) {
		fputs("\r\033[K", p->err);
		fflush(p->err);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int
term_continue(struct term *t)
{
	const char *nc = getenv("NO_COLOR");
	struct progress p = { .err = t->err, .tty = isatty(fileno(t->err)) &&
		!(nc && *nc) };
	struct buf out;
	pthread_t th;
	pthread_condattr_t ca;
	int rc, started;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, &ca);
	pthread_condattr_destroy(&ca);
	clock_gettime(CLOCK_MONOTONIC, &p.start);
	started = pthread_create(&th, NULL, run, &p) == 0;
	buf_init(&out);
	rc = driver_continue(t->sid, &out);
	buf_release(&out);
	pthread_mutex_lock(&p.mu);
	p.done = 1;
	pthread_cond_signal(&p.cv);
	pthread_mutex_unlock(&p.mu);
	if (started)
		pthread_join(th, NULL);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	return rc;
}
