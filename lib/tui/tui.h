/*
 * tui - the researcher's terminal, heartwood(1): the plain line
 * interface, the full-screen interface and the text rendering of a
 * projection that hw(1) shares.
 */
#ifndef HW_TUI_H
#define HW_TUI_H

#include "client/client.h"

/* ---- the researcher's terminal (term*.c): heartwood(1) ---- */

/*
 * A terminal on one session.  It is a client: it follows the session's
 * logs and submits typed commands through the driver (the suite's
 * programs), never holding the session's lease itself; while an agent
 * runs the session, commands reach it through its control socket.  out
 * takes the transcript, err refusals and errors ("heartwood: reason").
 * shown is the last conversation and action sequence already printed, so
 * that each step prints what is new.
 */
struct term {
	const char *sid;
	FILE *out, *err;
	int64_t shown;		/* conversation entries up to here printed */
	int64_t acted;		/* action outcomes up to here printed */
	int64_t events;		/* the eventCount last rendered */
	int quit;		/* /exit was given */
	void *watch;		/* the logs followed while idle (watch.c) */
	/*
	 * How the mode runs the agent on after an applied command, and shows
	 * what changed; term_init sets plain mode's term_continue and
	 * term_render, full-screen mode its own (full.c).
	 */
	int (*go)(struct term *t);
	int (*show)(struct term *t);
	void *ui;		/* the full-screen mode's state */
	/*
	 * aside(t, 1) gives the terminal to a program in the foreground and
	 * aside(t, 0) takes it back (full-screen mode; NULL in plain mode)
	 */
	void (*aside)(struct term *t, int leave);
	int hw_verbs;		/* hints name hw allow and hw reject (hw(1)) */
};
/* term_init: a terminal on session sid; nothing is read or written yet. */
void term_init(struct term *t, const char *sid, FILE *out, FILE *err);
/*
 * term_plain is plain line mode: a banner, then one line at a time from
 * fd, prompted with "heartwood> " on out, until EOF or /exit.  Returns 0,
 * or -1 with the error when out cannot be written or fd read.  A failed
 * command is reported on err and the loop goes on.  While it waits for a
 * line it follows the session (term_changed).
 */
int term_plain(struct term *t, int fd);
/* term_render prints what is new in the session, its pending set, status */
int term_render(struct term *t);
/*
 * term_show is term_render on a projection already read: conversation
 * entries after t->shown, actions decided or finished after t->acted, the
 * pending set with each member's arguments under it, the status line.
 */
void term_show(struct term *t, const struct jval *proj);
/*
 * term_sign is /sign-in and /sign-out (verb): hw-model subscription VERB
 * on the terminal, in the foreground, so that the device flow's code is
 * shown while it waits; Ctrl-C stops it, not heartwood.  Returns 0 or the
 * exit status, the outcome said on t->out or t->err.
 */
int term_sign(struct term *t, const char *verb);
/*
 * term_skills is /skills: with no words the installed and catalog skills
 * (hw-skill list), "inspect NAME" what installing it would install and its
 * digest, "install NAME DIGEST" the install bound to the digest typed (the
 * researcher's confirmation of what inspect showed).  Returns the exit
 * status.
 */
int term_skills(struct term *t, int n, char **av);
/*
 * tui_specialists prints the specialist catalogue (specialists_load) to
 * out: each one's name, label, capability, availability and limits or
 * why it is unavailable, and its description; "No specialists are
 * configured." when there are none.  0, or -1 when a file is invalid.
 */
int tui_specialists(FILE *out);
/* tui_specialists_json: the same as one JSON line (specialists_list_json) */
int tui_specialists_json(FILE *out);
/* term_fail prints the last error as "heartwood: message"; its code */
int term_fail(struct term *t);
/* term_put writes b to f and empties it */
void term_put(FILE *f, struct buf *b);
/* term_put_safe writes s with control characters as \xNN, keeping lines */
void term_put_safe(FILE *f, const char *s);
/* term_print: term_show to stdout of what came after event since, for hw */
void term_print(const char *sid, const struct jval *proj, int64_t since);
/*
 * term_changed follows t's session: it reads (verifying) the events that
 * its logs gained since the last call, once the session exists, and is 1
 * when their count differs from t->events (the eventCount last rendered),
 * which it then sets to that count, or when the logs failed to verify
 * (once); else 0.  It takes no lease.
 * term_unwatch stops following.
 */
int term_changed(struct term *t);
void term_unwatch(struct term *t);
/*
 * term_read_line reads one line from fd into *line (malloc'd, no "\n"),
 * keeping what follows in in: 1, 0 at EOF, -1 on error.  While it waits
 * it looks every TERM_TICK_MS whether the session changed (term_changed)
 * and prints what others changed; the process that sent a command runs
 * the agent on, not this terminal.
 */
int term_read_line(struct term *t, int fd, struct buf *in, char **line);
/*
 * term_catch_interrupt makes SIGINT (Ctrl-C) stop term_read_line and
 * term_plain with code 130, "Interrupted.";
 * term_was_interrupted says whether it came.
 */
void term_catch_interrupt(void);
int term_was_interrupted(void);
/*
 * term_inspect runs hw-inspect with argv and writes its view as text to
 * out (reference 2.5): "Project files · PATH" with the tree indented two
 * spaces a level, "File · PATH · STATUS" and the content, "Project
 * changes · Git|Session actions|Unavailable" with "A|D|M  path" lines, or
 * "Change · PATH · STATUS" and a unified diff.  Control characters are
 * shown as \xNN.  Returns hw-inspect's status (its messages went to
 * stderr), 1 for a file that is not shown or changes that are
 * unavailable, or -1 with the error.
 */
int term_inspect(FILE *out, char *const argv[]);
/*
 * term_continue runs the agent on session sid (driver_continue, its
 * output dropped; an agent already running it is 0) and, when that
 * takes over a second, shows progress on t->err: on a terminal without
 * NO_COLOR an animated "Working..." that becomes "still working · Ns"
 * after 10 s and is erased at the end; otherwise one line every
 * TERM_PROGRESS_LINE_MS with the time elapsed.
 */
#define TERM_PROGRESS_LINE_MS 15000
int term_continue(struct term *t);
/*
 * term_command runs heartwood's subcommand av[0] (n words) for session
 * sid: doctor, actions, audit verify|export, allow|approve|reject|deny,
 * pause, resume, replay (the driver's workflows and programs, their JSON
 * on stdout), files list|show and changes (hw-inspect's views as text),
 * specialists.  Returns the exit status, -1 with the error, or -2 when
 * the words are not a subcommand (the caller prints its usage).
 */
int term_command(const char *sid, int n, char **av);
/*
 * term_line runs one line: "/command [ARG ...]" (arguments split on
 * blanks) or a chat task.  Returns the command's exit status (0, or the
 * code of what failed, already reported on err); sets t->quit on /exit.
 */
int term_line(struct term *t, const char *line);
/*
 * term_prompt runs one task to its next stable boundary and prints what
 * it left (--prompt): 0 at waiting, idle or finished, the agent's code
 * otherwise.
 */
int term_prompt(struct term *t, const char *prompt);
/* term_fullscreen_usable: stdin and stdout are terminals, TERM usable. */
int term_fullscreen_usable(void);
/*
 * term_fullscreen is full-screen mode (ncurses) on the terminal of fds 0
 * and 1: tabs Conversation, Files and Changes, a status bar, the review
 * panel, the command palette and the review-mode dialog over the same
 * projection and commands as plain mode (term_line).  While it runs,
 * standard error is kept in a file and shown in the window.  Returns 0
 * at /exit or Ctrl-Q; -1 with the error when the terminal cannot be set
 * up (nothing has been drawn then; the caller may use plain mode) or
 * with code 130 after Ctrl-C.  The agent runs in the background, with
 * its text streamed into the window; leaving while it runs pauses it
 * first.  At SIGTERM or SIGHUP it closes the window, stops the agent
 * and raises the signal again.
 */
int term_fullscreen(struct term *t);
/*
 * What both modes show, as text appended to b (no newline; control
 * characters as \xNN): term_safe appends s filtered so; term_entry_text
 * a conversation entry "[NNN] Label: content"; term_action_text an action
 * record "Action: summary [tool] · state · outcome"; term_member_text the
 * i-th member of a pending set "N. summary [tool · Risk]";
 * term_review_text "Review required · N actions · one decision";
 * term_status_text "<researcher status> · <review mode label>".
 * term_pending_count is the number of members of the projection's
 * pending set (0 when none), *acts their array when acts is not NULL.
 * term_risk_label is "Low", "Medium", "High" or "Not Classified";
 * term_mode_label the label of the project's review mode.
 */
void term_safe(struct buf *b, const char *s);
void term_entry_text(struct buf *b, const struct jval *e);
void term_action_text(struct buf *b, const struct jval *a);
void term_member_text(struct buf *b, const struct jval *a, size_t i);
/*
 * term_task_text: for a pending task action, a line "Specialist: LABEL ·
 * CAPABILITY · Objective: DESCRIPTION" (its prompt when it has no
 * description) after a newline; nothing for other tools.
 */
void term_task_text(struct buf *b, const struct jval *a);
void term_review_text(struct buf *b, size_t n);
void term_status_text(struct buf *b, const struct jval *proj);
size_t term_pending_count(const struct jval *proj, const struct jval **acts);
/*
 * term_attention: why session sid needs attention, malloc'd, or NULL: a
 * command receipt left "accepted" (driver_interrupted), or a decided set
 * that no agent has taken up (its decision's agent was killed first, or
 * never started), which the next continue runs.  Read-only.
 */
char *term_attention(const char *sid);
/* term_pending_elsewhere: the pending set was decided elsewhere */
int term_pending_elsewhere(const struct jval *proj);
const char *term_risk_label(const char *r);
const char *term_mode_label(void);
/*
 * term_doctor writes the read-only readiness report of reference 5 for
 * the current directory to out, as text or (json) one canonical object
 * {state, project_root, state_root, evidence, checks}.  It creates
 * nothing.  Returns 0, 1 when the state is recovery-required, or -1 with
 * the error when out cannot be written.
 */
int term_doctor(FILE *out, int json);
/*
 * term_plan writes the startup plan of reference 5 for interface iface
 * (terminal, web or notebook) and port as one canonical object: phase
 * (project-review, connection-required, ready or recovery-required),
 * interface, platform_id, project_root, state_root, summary, next_action,
 * access_url (web only), requires_compute, requires_confirmation,
 * interface_supported and the readiness report under it.  With init it
 * first creates the project's store ("Use this project"), unless a check
 * fails (the project is / or the home directory, say), which creates
 * nothing.  Returns 0, 1 when the phase is recovery-required, or -1 with
 * the error.
 */
int term_plan(FILE *out, const char *iface, int port, int init);

#endif
