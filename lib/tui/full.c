/* full.c - the researcher's terminal in full-screen mode (ncurses):
 * keys, commands and the agent in the background; fulldraw.c draws */
#define NCURSES_WIDECHAR 1
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

#include "tui/tui.h"
#include "tui/full.h"

extern char **environ;

#define FULL_TICK_MS 200	/* how often the window serves and animates */
#define FULL_REFRESH_MS 1000	/* how often it projects while the agent runs */
#define FULL_STREAM_MAX (4u << 20)	/* a stream line past this is dropped */

#define CTRL(c) ((c) & 0x1f)

static volatile sig_atomic_t full_signal;	/* SIGTERM or SIGHUP came */

static void
on_signal(int sig)
{
	full_signal = sig;
}

static const char full_keys[] = "Keys: F1 F2 F3 or Alt-1 2 3 (or Tab) "
    "switch tabs; Ctrl-P opens the commands; Esc pauses the agent or "
    "closes a dialog; Left, Right and Enter decide a set; Up, Down, Page "
    "Up and Page Down scroll or choose; Ctrl-L draws again; Ctrl-Q "
    "leaves.";

/* gather points t->out and t->err at fresh memory streams */
static void
gather(struct full *f)
{
	f->t->out = full_memstream(&f->outp, &f->outn);
	f->t->err = full_memstream(&f->errp, &f->errn);
}

/* collect turns what t->out and t->err gathered into notes */
static void
collect(struct full *f)
{
	if (ftell(f->t->out) == 0 && ftell(f->t->err) == 0)
		return;
	fclose(f->t->out);
	fclose(f->t->err);
	full_note(f, TONE_PLAIN, f->outp, f->outn);
	full_note(f, TONE_ERROR, f->errp, f->errn);
	free(f->outp);
	free(f->errp);
	gather(f);
}

static const char *
pending_group(const struct jval *proj)
{
	return json_get_str(json_get(proj, "pendingApproval"), "groupId");
}

/* reproject reads the projection again; a failure is noted once */
static int
reproject(struct full *f)
{
	struct arena *a = &f->pa[!f->cur];
	struct jval *p;
	const char *g, *m;
	int64_t ws = -1;

	arena_clear(a);
	if (!(p = driver_project(f->t->sid, a))) {
		m = hw_err_msg();
		if (!f->proj_err || strcmp(f->proj_err, m)) {
			free(f->proj_err);
			f->proj_err = xstrdup(m);
			full_note(f, TONE_ERROR, m, strlen(m));
		}
		return -1;
	}
	free(f->proj_err);
	f->proj_err = NULL;
	f->proj = p;
	arena_clear(&f->pa[f->cur]);
	f->cur = !f->cur;
	json_get_int(p, "eventCount", &f->t->events);
	g = pending_group(p);
	if (g && (!f->pending || strcmp(g, f->pending)))
		f->review = 1, f->button = 0, f->pscroll = 0;
	if (!g)
		f->review = 0;
	free(f->pending);
	f->pending = g ? xstrdup(g) : NULL;
	json_get_int(p, "workspaceRevision", &ws);
	if (ws != f->files.rev)
		f->files.loaded = 0;
	if (ws != f->changes.rev)
		f->changes.loaded = 0;
	f->dirty = 1;
	return 0;
}

/* ---- the agent in the background ---- */

static int
agent_start(struct full *f)
{
	char *argv[] = { "hw-agent", "run", (char *)f->t->sid, "--stream",
		NULL };
	posix_spawn_file_actions_t fa;
	char *path = driver_find("hw-agent");
	int p[2], err;

	if (!path)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(path);
		return hw_err_sys("pipe");
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	err = posix_spawn(&f->pid, path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (err) {
		close(p[0]);
		f->pid = 0;
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run '%s': %s", path,
		    strerror(err));
		free(path);
		return -1;
	}
	free(path);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	f->fd = p[0];
	clock_gettime(CLOCK_MONOTONIC, &f->started);
	f->next_refresh = FULL_REFRESH_MS;
	f->dirty = 1;
	return 0;
}

/* full_go is the mode's t->go: the agent runs on in the background */
static int
full_go(struct term *t)
{
	struct full *f = t->ui;

	if (f->pid)
		return 0;
	return agent_start(f);
}

/* full_aside is the mode's t->aside */
static void
full_aside(struct term *t, int leave)
{
	full_screen_aside(t->ui, leave);
}

/* full_show is the mode's t->show: read the projection, draw it later */
static int
full_show(struct term *t)
{
	return reproject(t->ui) < 0 ? HW_EXIT_FAIL : 0;
}

/* stream_line takes one transient record {epoch, revision, text} */
static void
stream_line(struct full *f, const char *s, size_t n)
{
	struct arena a;
	struct jval *v;
	const char *text;
	int64_t rev = -1, cur = -1;
	char err[64];

	arena_init(&a);
	v = json_parse(&a, s, n, err, sizeof err);
	text = json_get_str(v, "text");
	json_get_int(v, "revision", &rev);
	if (text) {
		free(f->stream);
		f->stream = xstrdup(text);
		f->stream_rev = rev;
		f->dirty = 1;
	}
	json_get_int(f->proj, "revision", &cur);
	if (rev > cur)
		reproject(f);
	arena_release(&a);
}

static void
agent_read(struct full *f)
{
	char chunk[65536], *nl;
	ssize_t k;
	size_t n;

	while (f->fd >= 0 && (k = read(f->fd, chunk, sizeof chunk)) != 0) {
		if (k < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			break;
		}
		buf_add(&f->partial, chunk, (size_t)k);
		while ((nl = memchr(f->partial.p, '\n', f->partial.len))) {
			n = (size_t)(nl - f->partial.p);
			stream_line(f, f->partial.p, n);
			f->partial.len -= n + 1;
			memmove(f->partial.p, nl + 1, f->partial.len);
		}
		if (f->partial.len > FULL_STREAM_MAX)
			buf_clear(&f->partial);
	}
	if (f->fd >= 0)
		close(f->fd);	/* the end of its output, or a read error */
	f->fd = -1;
}

/*
 * rerun: a command sent while the agent ran may have been applied just as
 * it ended, past its last step; then the agent is started again, once,
 * and does what is due (or nothing).
 */
static void
rerun(struct full *f)
{
	if (!f->rerun || f->pid || f->cmd_pid || f->leaving)
		return;
	f->rerun = 0;
	if (agent_start(f) < 0)
		full_note(f, TONE_ERROR, hw_err_msg(), strlen(hw_err_msg()));
}

/* agent_reap notes how the agent ended once it has */
static void
agent_reap(struct full *f, int block)
{
	char msg[96];
	int st, rc;
	pid_t r;

	while ((r = waitpid(f->pid, &st, block ? 0 : WNOHANG)) < 0 &&
	    errno == EINTR)
		;
	if (r == 0)
		return;
	if (f->fd >= 0) {
		/* what it wrote before it ended; never wait on a child of it */
		agent_read(f);
		if (f->fd >= 0)
			close(f->fd);
		f->fd = -1;
	}
	f->pid = 0;
	rc = r < 0 ? HW_EXIT_FAIL : WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
	    WEXITSTATUS(st);
	free(f->stream);
	f->stream = NULL;
	buf_clear(&f->partial);
	full_drain_err(f);
	if (rc && rc != HW_EXIT_BUSY) {	/* 75: another agent runs */
		snprintf(msg, sizeof msg, "heartwood: the agent stopped with "
		    "status %d", rc);
		full_note(f, TONE_ERROR, msg, strlen(msg));
	}
	reproject(f);
	if (f->leaving)
		f->quit = 1;
	rerun(f);
}

/* ---- commands ---- */

/*
 * send_later sends one command while the agent runs.  The agent takes
 * commands between its steps, so a child process waits for that while
 * the window stays live; later_read notes how it went.
 */
static void
send_later(struct full *f, const char *kind, const char *payload)
{
	struct buf ans;
	int p[2];
	pid_t pid;

	if (f->cmd_pid) {
		full_say(f, TONE_ACTION, "A command already waits for the agent's "
		    "next step.");
		return;
	}
	if (pipe2(p, O_CLOEXEC) < 0 || (pid = fork()) < 0) {
		full_note(f, TONE_ERROR, "heartwood: cannot start a process",
		    strlen("heartwood: cannot start a process"));
		return;
	}
	if (pid == 0) {
		close(p[0]);
		buf_init(&ans);
		if (driver_send(f->t->sid, kind, payload, &ans) < 0 &&
		    write(p[1], hw_err_msg(), strlen(hw_err_msg())) < 0)
			_exit(1);
		_exit(0);	/* nothing of the window's is flushed here */
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	snprintf(f->cmd_kind, sizeof f->cmd_kind, "%s", kind);
	f->cmd_pid = pid;
	f->cmd_fd = p[0];
	buf_clear(&f->cmd_out);
}

/* later_read notes the end of what send_later sent */
static void
later_read(struct full *f)
{
	char chunk[1024];
	struct buf msg;
	ssize_t k;

	while ((k = read(f->cmd_fd, chunk, sizeof chunk)) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN)
			return;
		if (k < 0)
			break;
		if (f->cmd_out.len < 4096)
			buf_add(&f->cmd_out, chunk, (size_t)k);
	}
	close(f->cmd_fd);
	f->cmd_fd = -1;
	while (waitpid(f->cmd_pid, NULL, 0) < 0 && errno == EINTR)
		;
	f->cmd_pid = 0;
	if (f->cmd_out.len) {
		buf_init(&msg);
		buf_adds(&msg, "heartwood: ");
		buf_add(&msg, f->cmd_out.p, f->cmd_out.len);
		full_note(f, TONE_ERROR, msg.p, msg.len);
		buf_release(&msg);
	} else if (!strcmp(f->cmd_kind, "resume") ||
	    !strcmp(f->cmd_kind, "chat") || !strcmp(f->cmd_kind, "approve") ||
	    !strcmp(f->cmd_kind, "deny")) {
		f->rerun = 1;
	}
	if (!f->pid && f->leaving)
		f->quit = 1;
	reproject(f);
	rerun(f);
}

/* chat_payload: {"prompt": line} */
static void
chat_payload(struct buf *b, const char *line)
{
	buf_adds(b, "{\"prompt\":");
	json_canon_str(b, line, strlen(line));
	buf_addc(b, '}');
}

/* run_line runs one line as plain mode does, its output kept as notes */
static void
run_line(struct full *f, const char *line)
{
	term_line(f->t, line);
	collect(f);
	full_drain_err(f);
	if (f->t->quit)
		f->quit = 1;
	f->dirty = 1;
}

static void
set_tab(struct full *f, int tab)
{
	f->tab = tab;
	f->dirty = 1;
	if (tab == TAB_FILES && !f->files.loaded)
		full_pane_load(f, &f->files, NULL);
	if (tab == TAB_CHANGES && !f->changes.loaded)
		full_pane_load(f, &f->changes, NULL);
}

/* words splits a copy of line into at most 3 words after its command */
static int
words(const char *line, char *buf, size_t size, char **av)
{
	int n = 0;

	snprintf(buf, size, "%s", line);
	for (char *w = strtok(buf, " \t"); w; w = strtok(NULL, " \t")) {
		if (n == 3)
			return -1;
		av[n++] = w;
	}
	return n;
}

/* later sends a task, /pause or /resume (cmd) while the agent runs */
static void
later(struct full *f, const char *line, const char *cmd)
{
	struct buf b;

	buf_init(&b);
	if (*line != '/') {
		chat_payload(&b, line);
		send_later(f, "chat", buf_cstr(&b));
	} else {
		send_later(f, cmd + 1, "{}");
	}
	if (f->cmd_pid)
		full_say(f, TONE_ACTION, "The agent takes this at its next step.");
	buf_release(&b);
}

/* request_quit leaves, after pausing the agent when it runs */
static void
request_quit(struct full *f, int intr)
{
	if (intr)
		f->interrupted = 1;
	if (!f->pid) {
		f->quit = 1;
	} else if (f->leaving) {
		kill(f->pid, SIGTERM);
		full_say(f, TONE_ERROR, "Stopping the agent now; its next run "
		    "records what is unknown.");
	} else {
		f->leaving = 1;
		full_say(f, TONE_ACTION, "Pausing the agent before leaving; "
		    "Ctrl-Q again stops it now.");
		send_later(f, "pause", "{}");
	}
}

/*
 * submit_line runs one line.  /permissions without a mode opens
 * the dialog and /files, /show and /changes open their tabs; the rest is
 * term_line's, exactly as in plain mode.
 */
static void
submit_line(struct full *f, const char *line)
{
	char copy[512], *av[3];
	const char *l = line + strspn(line, " \t");
	int n = strlen(l) < sizeof copy ? words(l, copy, sizeof copy, av) : -1;

	f->dirty = 1;
	if (*l == '/')
		full_note(f, TONE_DIM, l, strlen(l));
	if (n == 1 && !strcmp(av[0], "/permissions")) {
		f->modal = MODAL_MODE;
		f->msel = term_mode_label()[0] == 'L';
	} else if (n >= 1 && n <= 2 && !strcmp(av[0], "/files")) {
		f->tab = TAB_FILES;
		full_pane_load(f, &f->files, n == 2 ? av[1] : ".");
	} else if (n == 2 && !strcmp(av[0], "/show")) {
		set_tab(f, TAB_FILES);
		full_show_path(f, &f->files, av[1]);
	} else if (n >= 1 && n <= 2 && !strcmp(av[0], "/changes")) {
		set_tab(f, TAB_CHANGES);
		if (n == 2)
			full_show_path(f, &f->changes, av[1]);
	} else if (n == 1 && !strcmp(av[0], "/replay")) {
		/* the transcript becomes the session's record alone */
		for (size_t i = 0; i < f->nnotes; i++)
			free(f->notes[i].text);
		f->nnotes = 0;
		f->tab = TAB_CONV;
		run_line(f, l);
	} else if (f->pid && (*l != '/' || (n == 1 && (!strcmp(av[0],
	    "/pause") || !strcmp(av[0], "/resume"))))) {
		later(f, l, n == 1 ? av[0] : NULL);
	} else if (n == 1 && (!strcmp(av[0], "/exit") ||
	    !strcmp(av[0], "/quit"))) {
		request_quit(f, 0);	/* a working agent is paused first */
	} else if (n == 1 && !strcmp(av[0], "/help")) {
		run_line(f, l);
		full_note(f, TONE_DIM, full_keys, strlen(full_keys));
	} else if (*l) {
		run_line(f, l);
	}
}

/* submit runs the input line, which is emptied */
static void
submit(struct full *f)
{
	char *line = xstrdup(buf_cstr(&f->input));

	buf_clear(&f->input);
	submit_line(f, line);
	free(line);
}

/* decide allows or rejects the pending set, as /allow and /reject do */
static void
decide(struct full *f, int allow)
{
	f->review = 0;
	run_line(f, allow ? "/allow" : "/reject");
}

/* escape: Esc pauses the agent, but never while a set waits for review */
static void
escape(struct full *f)
{
	if (f->modal) {
		f->modal = MODAL_NONE;
		f->dirty = 1;
	} else if (f->pending) {
		full_say(f, TONE_ACTION, "Esc cannot pause while an action set "
		    "waits for review: reject it or allow it once.");
	} else if (f->pid) {
		full_say(f, TONE_ACTION, "Pausing the agent at its next step...");
		send_later(f, "pause", "{}");
	} else {
		run_line(f, "/pause");
	}
}

static void
mode_choose(struct full *f)
{
	const char *why = full_mode_lock(f);

	if (!why)
		why = full_mode_unavailable((size_t)f->msel);
	if (why) {
		full_say(f, TONE_ACTION, why);
		return;
	}
	f->modal = MODAL_NONE;
	run_line(f, f->msel ? "/permissions auto-approve-low-risk" :
	    "/permissions ask-every-time");
}

/* palette_pick runs the palette's msel-th matching entry */
static void
palette_pick(struct full *f)
{
	int k = 0;
	size_t i;

	for (i = 0; full_palette[i]; i++)
		if (full_palette_match(f, i) && k++ == f->msel)
			break;
	f->modal = MODAL_NONE;
	buf_clear(&f->filter);
	f->dirty = 1;
	switch (full_palette[i] ? (int)i : -1) {
	case 0: f->modal = MODAL_MODE;
		f->msel = term_mode_label()[0] == 'L'; break;
	case 1: set_tab(f, TAB_FILES); break;
	case 2: set_tab(f, TAB_CHANGES); break;
	case 3: f->tab = TAB_CONV; run_line(f, "/status"); break;
	case 4: submit_line(f, "/replay"); break;
	case 5: f->tab = TAB_CONV; run_line(f, "/audit-export"); break;
	case 6: f->tab = TAB_CONV; break;
	case 7: f->tab = TAB_CONV; submit_line(f, "/help"); break;
	case 8: request_quit(f, 0); break;
	}
}

static int
palette_count(const struct full *f)
{
	int k = 0;

	for (size_t i = 0; full_palette[i]; i++)
		k += full_palette_match(f, i);
	return k;
}

/* modal_key handles a key while the dialog or the palette is open */
static void
modal_key(struct full *f, int fn, wint_t c)
{
	int max = f->modal == MODAL_MODE ? 2 : palette_count(f);

	f->dirty = 1;
	if (fn && c == KEY_UP)
		f->msel = f->msel > 0 ? f->msel - 1 : max - 1;
	else if (fn && c == KEY_DOWN)
		f->msel = max ? (f->msel + 1) % max : 0;
	else if ((fn && c == KEY_ENTER) || (!fn && (c == '\r' || c == '\n')))
		f->modal == MODAL_MODE ? mode_choose(f) : palette_pick(f);
	else if (f->modal == MODAL_PALETTE && ((fn && c == KEY_BACKSPACE) ||
	    (!fn && (c == 127 || c == 8))) && f->filter.len)
		f->filter.len--, f->msel = 0;
	else if (f->modal == MODAL_PALETTE && !fn && c >= 0x20 && c < 0x7f)
		buf_addc(&f->filter, (char)c), f->msel = 0;
}

/* input_key edits the composer */
static void
input_key(struct full *f, int fn, wint_t c)
{
	char mb[MB_LEN_MAX];
	mbstate_t st = { 0 };
	size_t k;

	f->dirty = 1;
	if ((fn && c == KEY_BACKSPACE) || (!fn && (c == 127 || c == 8))) {
		while (f->input.len && (f->input.p[f->input.len - 1] & 0xc0)
		    == 0x80)
			f->input.len--;
		if (f->input.len)
			f->input.len--;
	} else if (!fn && c == CTRL('u')) {
		buf_clear(&f->input);
	} else if (!fn && c >= 0x20 && c != 0x7f && f->input.len <
	    COMMAND_LINE_MAX) {
		k = wcrtomb(mb, (wchar_t)c, &st);
		if (k != (size_t)-1)
			buf_add(&f->input, mb, k);
		f->review = 0;
	}
}

/* move_key: arrows and pages for what has the focus */
static void
move_key(struct full *f, wint_t c)
{
	struct pane *p = f->tab == TAB_FILES ? &f->files : &f->changes;
	size_t page = LINES > 8 ? (size_t)LINES - 8 : 1, old = p->sel;

	f->dirty = 1;
	if (f->tab == TAB_CONV && f->review) {
		if (c == KEY_LEFT || c == KEY_RIGHT)
			f->button = !f->button;
		else if (c == KEY_UP && f->pscroll)
			f->pscroll--;
		else if (c == KEY_DOWN || c == KEY_NPAGE)
			f->pscroll += c == KEY_DOWN ? 1 : page;
		else if (c == KEY_PPAGE)
			f->pscroll = f->pscroll > page ? f->pscroll - page : 0;
	} else if (f->tab == TAB_CONV) {
		if (c == KEY_UP || c == KEY_PPAGE)
			f->scroll += c == KEY_UP ? 1 : page;
		else if ((c == KEY_DOWN || c == KEY_NPAGE))
			f->scroll = f->scroll > (c == KEY_DOWN ? 1 : page) ?
			    f->scroll - (c == KEY_DOWN ? 1 : page) : 0;
	} else if (c == KEY_UP && p->sel) {
		p->sel--;
	} else if (c == KEY_DOWN && p->sel + 1 < p->n) {
		p->sel++;
	} else if (c == KEY_NPAGE) {
		p->vtop += page;
	} else if (c == KEY_PPAGE) {
		p->vtop = p->vtop > page ? p->vtop - page : 0;
	}
	if (f->tab != TAB_CONV && p->sel != old)
		full_pane_view(f, p);
}

static int
tab_key(struct full *f, int fn, wint_t c)
{
	if (fn && c >= KEY_F(1) && c <= KEY_F(3))
		set_tab(f, (int)(c - KEY_F(1)));
	else if (!fn && c == '\t')
		set_tab(f, (f->tab + 1) % TABS);
	else if (fn && c == KEY_BTAB)
		set_tab(f, (f->tab + TABS - 1) % TABS);
	else
		return 0;
	return 1;
}

static void
enter_key(struct full *f)
{
	if (f->input.len)
		submit(f);
	else if (f->tab == TAB_CONV && f->review)
		decide(f, f->button);
	else if (f->tab == TAB_CONV && f->pending)
		f->review = 1, f->dirty = 1;
	else if (f->tab != TAB_CONV)
		full_pane_view(f, f->tab == TAB_FILES ? &f->files : &f->changes);
}

/* main_key: a key for the tabs, the review panel or the composer */
static void
main_key(struct full *f, int fn, wint_t c)
{
	if (!fn && c == CTRL('p')) {
		f->modal = MODAL_PALETTE;
		f->msel = 0;
		buf_clear(&f->filter);
		f->dirty = 1;
	} else if (tab_key(f, fn, c)) {
		;
	} else if ((fn && c == KEY_ENTER) || (!fn && (c == '\r' ||
	    c == '\n'))) {
		enter_key(f);
	} else if (fn && (c == KEY_UP || c == KEY_DOWN || c == KEY_LEFT ||
	    c == KEY_RIGHT || c == KEY_PPAGE || c == KEY_NPAGE)) {
		move_key(f, c);
	} else {
		input_key(f, fn, c);
	}
}

static void
key(struct full *f, int fn, wint_t c)
{
	wint_t c2;
	int r;

	if (f->flash && !f->leaving)
		full_say(f, TONE_PLAIN, NULL);
	if (!fn && (c == CTRL('c') || c == CTRL('q'))) {
		request_quit(f, c == CTRL('c'));
	} else if (fn && c == KEY_RESIZE) {
		f->dirty = 1;
	} else if (!fn && c == CTRL('l')) {
		clearok(curscr, TRUE);
		f->review = f->pending && !f->modal;
		f->dirty = 1;
	} else if (!fn && c == 27) {
		/* Alt-1..3 arrive as Esc and the digit; anything else waits */
		r = get_wch(&c2);
		if (r == OK && c2 >= '1' && c2 <= '3') {
			set_tab(f, (int)(c2 - '1'));
			return;
		}
		if (r != ERR)
			unget_wch(c2);
		escape(f);
	} else if (f->modal) {
		modal_key(f, fn, c);
	} else {
		main_key(f, fn, c);
	}
}

/* ---- the loop ---- */

static void
keys(struct full *f)
{
	wint_t c;
	int r;

	while (!f->quit && (r = get_wch(&c)) != ERR)
		key(f, r == KEY_CODE_YES, c);
}

/* idle: while no agent of ours runs, follow what others change */
static void
idle(struct full *f)
{
	collect(f);
	if (term_changed(f->t))
		reproject(f);
}

static void
step(struct full *f)
{
	struct pollfd pf[3] = { { .fd = 0, .events = POLLIN },
		{ .fd = f->fd, .events = POLLIN },
		{ .fd = f->cmd_fd, .events = POLLIN } };

	if (f->dirty) {
		full_draw(f);
		f->dirty = 0;
	}
	if (poll(pf, 3, FULL_TICK_MS) < 0 && errno != EINTR)
		f->quit = 1;
	if (pf[0].revents & (POLLHUP | POLLERR | POLLNVAL))
		full_signal = SIGHUP;	/* the terminal is gone */
	if (term_was_interrupted() && !f->interrupted)
		request_quit(f, 1);
	if (full_signal) {
		/* the terminal is gone or we are told to go: stop at once */
		if (f->pid)
			kill(f->pid, SIGTERM);
		f->quit = 1;
		return;
	}
	keys(f);
	if (f->fd >= 0)
		agent_read(f);
	if (f->pid)
		agent_reap(f, 0);
	full_drain_err(f);
	if (f->cmd_fd >= 0)
		later_read(f);
	/* the tab shown follows the workspace */
	if (f->tab == TAB_FILES && !f->files.loaded)
		full_pane_load(f, &f->files, NULL);
	if (f->tab == TAB_CHANGES && !f->changes.loaded)
		full_pane_load(f, &f->changes, NULL);
	if (f->pid && full_elapsed_ms(f) >= f->next_refresh) {
		f->next_refresh = full_elapsed_ms(f) + FULL_REFRESH_MS;
		reproject(f);
	}
	if (f->pid && f->animate)
		f->dirty = 1;
	if (!f->pid && !f->quit)
		idle(f);
}

static void
full_release(struct full *f)
{
	fclose(f->t->out);
	fclose(f->t->err);
	free(f->outp);
	free(f->errp);
	f->t->out = f->out;
	f->t->err = f->err;
	f->t->go = term_continue;
	f->t->show = term_render;
	f->t->aside = NULL;
	f->t->ui = NULL;
	for (size_t i = 0; i < f->nnotes; i++)
		free(f->notes[i].text);
	free(f->notes);
	full_pane_clear(&f->files);
	full_pane_clear(&f->changes);
	free(f->files.dir);
	arena_release(&f->pa[0]);
	arena_release(&f->pa[1]);
	buf_release(&f->input);
	buf_release(&f->filter);
	buf_release(&f->partial);
	buf_release(&f->errline);
	buf_release(&f->cmd_out);
	free(f->stream);
	free(f->pending);
	free(f->proj_err);
	free(f->flash);
}

/* attention notes why the session takes no command, if it does not */
static void
attention(struct full *f)
{
	char *why = term_attention(f->t->sid), *m;

	if (!why)
		return;
	m = xasprintf("Needs attention: %s", why);
	full_note(f, TONE_ERROR, m, strlen(m));
	free(m);
	free(why);
}

int
term_fullscreen(struct term *t)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[2];
	struct full f = { .t = t, .fd = -1, .cmd_fd = -1, .dirty = 1,
		.out = t->out, .err = t->err, .files.rev = -2,
		.changes.rev = -2 };
	SCREEN *scr;

	arena_init(&f.pa[0]);
	arena_init(&f.pa[1]);
	buf_init(&f.input);
	buf_init(&f.filter);
	buf_init(&f.partial);
	buf_init(&f.errline);
	buf_init(&f.cmd_out);
	gather(&f);
	if (full_screen_open(&f, &scr) < 0) {
		full_release(&f);
		return -1;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, &old[0]);
	sigaction(SIGHUP, &sa, &old[1]);
	t->ui = &f;
	t->go = full_go;
	t->show = full_show;
	t->aside = full_aside;
	reproject(&f);
	attention(&f);
	while (!f.quit)
		step(&f);
	if (f.pid)
		agent_reap(&f, 1);
	if (f.cmd_pid) {
		fcntl(f.cmd_fd, F_SETFL, 0);
		later_read(&f);
	}
	term_unwatch(t);
	full_screen_close(&f, scr);
	full_release(&f);
	sigaction(SIGTERM, &old[0], NULL);
	sigaction(SIGHUP, &old[1], NULL);
	if (full_signal) {
		/* the window is closed and the session let go: die of it */
		signal(full_signal, SIG_DFL);
		raise(full_signal);
	}
	if (f.interrupted)
		return hw_err_set(HW_EXIT_INTR, "Interrupted.");
	return 0;
}
