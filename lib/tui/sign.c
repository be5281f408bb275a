/*
 * sign.c - /sign-in and /sign-out: the ChatGPT sign-in (hw-model
 * subscription), run in the foreground on the researcher's terminal, where
 * the code to enter is shown while it waits
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

static void
on_int(int sig)
{
	(void)sig;	/* the child, in the foreground too, ends on it */
}

int
term_sign(struct term *t, const char *verb)
{
	char *argv[] = { "hw-model", "subscription", (char *)verb, NULL };
	struct sigaction sa = { .sa_handler = on_int }, old[2];
	struct arena a;
	struct buf out;
	const char *nl, *last, *st = NULL;
	char err[128];
	int rc;

	buf_init(&out);
	arena_init(&a);
	fflush(t->out);
	if (t->aside)
		t->aside(t, 1);
	/*
	 * Ctrl-C reaches the whole foreground group: the child (whose
	 * handlers exec resets) stops, heartwood does not
	 */
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGQUIT, &sa, &old[1]);
	rc = driver_run("hw-model", argv, NULL, 0, &out);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGQUIT, &old[1], NULL);
	if (t->aside)
		t->aside(t, 0);
	/* the last record hw-model printed says where it ended */
	buf_addc(&out, 0);
	out.len--;
	while (out.len && out.p[out.len - 1] == '\n')
		out.p[--out.len] = 0;
	last = (nl = strrchr(out.p, '\n')) ? nl + 1 : out.p;
	if (rc == 0)
		st = json_get_str(json_parse(&a, last, strlen(last), err,
		    sizeof err), "status");
	if (rc < 0) {
		rc = term_fail(t);
	} else if (st && !strcmp(verb, "sign-in") && !strcmp(st, "complete")) {
		fputs("Signed in with ChatGPT.\n", t->out);
	} else if (st && !strcmp(verb, "sign-out") &&
	    !strcmp(st, "signed-out")) {
		fputs("Signed out of ChatGPT.\n", t->out);
	} else {
		fprintf(t->err, "heartwood: %s did not complete (hw-model "
		    "subscription %s exited %d).\n", verb, verb, rc);
		rc = rc ? rc : HW_EXIT_FAIL;
	}
	fflush(t->out);
	fflush(t->err);
	arena_release(&a);
	buf_release(&out);
	return rc;
}
