/*
 * full.h - the full-screen terminal's state, shared by full.c (events,
 * commands, the agent in the background), fullstate.c (its messages and
 * locks), fullpane.c (the Files and Changes tabs) and fulldraw.c (drawing)
 * only; everything else reaches it through term_fullscreen().
 */
#ifndef HW_TUI_FULL_H
#define HW_TUI_FULL_H

#include <curses.h>
#include <sys/types.h>
#include <time.h>

#include "tui/tui.h"

enum { TAB_CONV, TAB_FILES, TAB_CHANGES, TABS };
enum { MODAL_NONE, MODAL_MODE, MODAL_PALETTE };
/* tones, which are colour pairs when colour is on */
enum { TONE_PLAIN, TONE_ERROR, TONE_AGENT, TONE_USER, TONE_ACTION,
	TONE_TOOL, TONE_OTHER, TONE_DIM, TONES };

#define FULL_NOTES 500		/* notes kept for the transcript */
#define FULL_MIN_COLS 50	/* below this size: "terminal too small" */
#define FULL_MIN_LINES 12

/* A message of this terminal (a command's output, an error), not an event */
struct note {
	int64_t after;		/* drawn after the session's events up to here */
	int tone;
	char *text;
};

/* A row of the Files or Changes list */
struct entry {
	char *path;		/* NULL: not a file (a directory, a marker) */
	char *label;		/* as listed, display-safe */
};

/* A list with the view of its chosen row */
struct pane {
	struct entry *rows;
	size_t n, sel, top;
	char *dir;		/* the directory listed, NULL: the project */
	char *title;		/* "Project files · ." ... */
	char *view;		/* the chosen row as term_inspect shows it */
	size_t vtop;		/* first line of view drawn */
	int64_t rev;		/* the workspaceRevision loaded */
	int loaded;
};

struct full {
	struct term *t;
	struct arena pa[2];	/* the projection's, and a spare */
	int cur;		/* which arena holds proj */
	struct jval *proj;	/* the last projection read */
	char *proj_err;		/* the last failure to read it, once noted */
	char *pending;		/* the pending set's group id, or NULL */
	int tab, modal, msel;
	int review;		/* focus is on the review panel's buttons */
	int button;		/* 0 reject (first), 1 allow */
	size_t pscroll;		/* review panel lines scrolled */
	size_t scroll;		/* transcript lines above the bottom */
	struct buf input;	/* the composer, UTF-8 */
	struct buf filter;	/* the palette's filter */
	struct note *notes;
	size_t nnotes;
	struct pane files, changes;
	/* the agent running in the background (pid 0: none) */
	pid_t pid;
	int fd;			/* its --stream output */
	struct buf partial;	/* an unfinished stream line */
	char *stream;		/* the text streaming in, or NULL */
	int64_t stream_rev;	/* the durable revision it belongs to */
	struct timespec started;
	int64_t next_refresh;	/* ms since start: project again */
	int leaving;		/* pausing the agent before leaving */
	/* a command waiting for the agent's next step, sent by a child */
	pid_t cmd_pid;
	int cmd_fd;		/* its error message, if any */
	struct buf cmd_out;
	char cmd_kind[16];
	int rerun;		/* a resume or task of it may need the agent */
	int quit, interrupted;
	/* standard error, kept in a file while the window is up */
	int errfd, saved_err;
	off_t erroff;
	struct buf errline;
	FILE *out, *err;	/* the caller's t->out and t->err */
	char *outp, *errp;	/* what t->out and t->err gather */
	size_t outn, errn;
	char *flash;		/* a one-line message above the composer */
	int flash_tone;
	int utf8, color, animate, dirty;
};

/* full_memstream is open_memstream, which fails only without memory */
FILE *full_memstream(char **p, size_t *n);
/* full_say flashes msg (NULL: nothing) in tone; full_note keeps n bytes
 * of text, shown display-safe, as a message after the current events */
void full_say(struct full *f, int tone, const char *msg);
void full_note(struct full *f, int tone, const char *text, size_t n);
/* full_drain_err turns what was written to standard error into notes */
void full_drain_err(struct full *f);
/*
 * The Files and Changes tabs (fullpane.c).  full_pane_load lists the
 * tree under dir (NULL: the one listed before, at first the project)
 * into f->files, or the session's changes into f->changes, and shows the
 * row chosen before when it is still listed, else the first file;
 * full_pane_view shows p's chosen row as term_inspect does (a file, or
 * a diff); full_show_path chooses path in p's list, or lists and shows it
 * alone; full_pane_clear empties p's list and view.
 */
void full_pane_load(struct full *f, struct pane *p, const char *dir);
void full_pane_view(struct full *f, struct pane *p);
void full_show_path(struct full *f, struct pane *p, const char *path);
void full_pane_clear(struct pane *p);
/* full_draw draws everything on stdscr and refreshes the screen */
void full_draw(struct full *f);
/*
 * full_screen_open keeps stderr in a temporary file (drained as messages)
 * and opens the curses screen on stdout; full_screen_close undoes both.
 */
int full_screen_open(struct full *f, SCREEN **scr);
void full_screen_close(struct full *f, SCREEN *scr);
/*
 * full_screen_aside: with leave, the terminal as it was before the screen,
 * standard error on it, for a program in the foreground; without, the
 * screen again, redrawn whole.
 */
void full_screen_aside(struct full *f, int leave);
/* full_elapsed_ms: milliseconds since the agent started */
int64_t full_elapsed_ms(const struct full *f);
/* the palette's entries, NULL-terminated */
extern const char *const full_palette[];
/* full_palette_match: 1 if entry i passes the palette's filter */
int full_palette_match(const struct full *f, size_t i);
/* full_mode_lock: why the review mode cannot change now, or NULL */
const char *full_mode_lock(const struct full *f);
/* full_mode_unavailable: why mode i (0 ask, 1 auto) is not offered */
const char *full_mode_unavailable(size_t i);

#endif
