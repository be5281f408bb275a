/*
 * fullstate.c - the full-screen terminal's shared state helpers: its
 * messages, its clock, the palette and the review-mode locks
 */
#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <langinfo.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tui/full.h"

const char *const full_palette[] = { "Action Review", "Project Files",
	"Project Changes", "Session Status", "Replay Conversation",
	"Export Audit", "Conversation", "Help", "Quit", NULL };

int64_t
full_elapsed_ms(const struct full *f)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - f->started.tv_sec) * 1000 +
	    (now.tv_nsec - f->started.tv_nsec) / 1000000;
}

void
full_say(struct full *f, int tone, const char *msg)
{
	free(f->flash);
	f->flash = msg ? xstrdup(msg) : NULL;
	f->flash_tone = tone;
	f->dirty = 1;
}

/*
 * full_note keeps text (n bytes, shown display-safe) as a message drawn after
 * the current events
 */
void
full_note(struct full *f, int tone, const char *text, size_t n)
{
	struct note *x;
	int64_t after = -1;
	struct buf raw, b;

	while (n && text[n - 1] == '\n')
		n--;
	if (!n)
		return;
	buf_init(&raw);
	buf_init(&b);
	buf_add(&raw, text, n);
	term_safe(&b, buf_cstr(&raw));
	buf_release(&raw);
	if (f->nnotes == FULL_NOTES) {
		free(f->notes[0].text);
		memmove(f->notes, f->notes + 1, --f->nnotes * sizeof *x);
	}
	f->notes = xrealloc(f->notes, (f->nnotes + 1) * sizeof *x);
	json_get_int(f->proj, "revision", &after);
	x = &f->notes[f->nnotes++];
	x->after = after;
	x->tone = tone;
	x->text = xstrdup(buf_cstr(&b));
	buf_release(&b);
	f->scroll = 0;
	f->dirty = 1;
}

FILE *
full_memstream(char **p, size_t *n)
{
	FILE *m = open_memstream(p, n);

	if (!m) {
		endwin();
		fputs("heartwood: out of memory\n", stderr);
		abort();
	}
	return m;
}

void
full_drain_err(struct full *f)
{
	char chunk[4096], *nl;
	ssize_t k;

	while ((k = pread(f->errfd, chunk, sizeof chunk, f->erroff)) > 0) {
		f->erroff += k;
		buf_add(&f->errline, chunk, (size_t)k);
	}
	while (f->errline.len && ((nl = memchr(f->errline.p, '\n',
	    f->errline.len)) || f->errline.len > 4096)) {
		size_t n = nl ? (size_t)(nl - f->errline.p) + 1 :
		    f->errline.len;
		struct buf safe;

		buf_init(&safe);
		buf_add(&safe, f->errline.p, n);
		buf_cstr(&safe);
		f->errline.len -= n;
		memmove(f->errline.p, f->errline.p + n, f->errline.len);
		full_note(f, TONE_ERROR, safe.p, safe.len);
		buf_release(&safe);
	}
}

const char *
full_mode_lock(const struct full *f)
{
	const char *st = json_get_str(json_get(f->proj, "lifecycle"),
	    "status");

	if (f->pid || (st && !strcmp(st, "running")))
		return "Locked while the agent is running.";
	if (f->pending || (st && !strcmp(st, "waiting-for-confirmation")))
		return "Locked while an action set waits for review.";
	if (st && !strcmp(st, "paused"))
		return "Locked while the session is paused.";
	return NULL;
}

const char *
full_mode_unavailable(size_t i)
{
	const char *k = getenv("HW_API_KEY_ENV");

	if (i == 1 && k && *k)
		return "Unavailable: it needs a credential-free model route.";
	return NULL;
}

int
full_palette_match(const struct full *f, size_t i)
{
	const char *q = f->filter.len ? buf_cstr((struct buf *)&f->filter) :
	    "";

	return !*q || strcasestr(full_palette[i], q) != NULL;
}
