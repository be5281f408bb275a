/*
 * terminal.c - the terminal tool: one persistent bash on pipes per
 * toolbox.  Each command goes to the shell as one line,
 *
 *	eval $'COMMAND'; printf '%s%s_%d__\n' __HWEND_ TOKEN $?
 *
 * (a single line, so that a command reading its input never reads ours;
 * eval, so that a syntax error is the command's and not the shell's; the
 * sentinel assembled by printf, so that an echo of the line under set -x
 * never looks like it).  The shell reads its input unbuffered, so a
 * running command's standard input is the same pipe: that is how
 * is_input reaches it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/tools/tools.h"

#define SENTINEL "__HWEND_"
#define CAPTURE_MAX (1u << 20)	/* past this, keep head and tail */
#define CAPTURE_KEEP (64u << 10)
#define GRACE_MS 2000		/* for the shell to be back after SIGINT */
#define IDLE_MS 500		/* quiet this long: waiting for input? */
#define TICK_MS 250
#define COMMAND_MAX (1u << 20)
#define INPUT_MAX 60000		/* below a pipe's buffer: never blocks */
#define NOTE_CHARS 400		/* more than the longest note */

extern char **environ;

struct terminal {
	char *root;
	char **env;
	char *bash;
	pid_t pid;		/* the shell, leader of its group; 0: none */
	int in, out;		/* our ends of its stdin and stdout */
	char pipe_id[64];	/* its stdin as /proc shows it */
	int reaped;		/* the shell has been waited for */
	int running;		/* a command left running (for input) */
	char token[33];		/* that command's sentinel */
	struct sandbox sb;	/* chosen at the first command */
	int sb_ready;
	int noted;		/* the no-sandbox notice was given */
	pid_t guard;		/* kills the shell's group when we are gone */
	int guard_fd;		/* the write end only we hold; -1: none */
};

/* What one wait collected. */
struct capture {
	struct buf b;
	size_t search;		/* where the sentinel search resumes */
	size_t dropped_chars, dropped_lines;
	int found, status;
};

static int
name_listed(const char *entry, const char *const *names)
{
	size_t n = strcspn(entry, "=");

	for (; names && *names; names++)
		if (strlen(*names) == n && memcmp(entry, *names, n) == 0)
			return 1;
	return 0;
}

static char **
build_env(const char *const *scrub)
{
	size_t n = 0, k = 0;
	char **env, **e;
	const char *const *s;

	for (e = environ; e && *e; e++)
		n++;
	for (s = scrub; s && *s; s++)
		n++;
	env = xcalloc(n + 1, sizeof *env);
	for (e = environ; e && *e; e++)
		if (strncmp(*e, "HW_", 3) != 0 && !name_listed(*e, scrub))
			env[k++] = xstrdup(*e);
	for (s = scrub; s && *s; s++)
		if (**s && !strchr(*s, '=') && strncmp(*s, "HW_", 3) != 0)
			env[k++] = xasprintf("%s=", *s);
	env[k] = NULL;
	return env;
}

static char *
find_bash(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *p;

	if (!path || !*path)
		path = "/usr/bin:/bin";
	copy = xstrdup(path);
	for (dir = strtok_r(copy, ":", &save); dir;
	    dir = strtok_r(NULL, ":", &save)) {
		p = xasprintf("%s/bash", *dir ? dir : ".");
		if (access(p, X_OK) == 0) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	return xstrdup("/bin/bash");
}

struct terminal *
terminal_new(const char *root, const char *const *scrub)
{
	struct terminal *t = xcalloc(1, sizeof *t);

	t->root = xstrdup(root);
	t->env = build_env(scrub);
	t->bash = find_bash();
	t->in = t->out = t->guard_fd = -1;
	return t;
}

static size_t
count_newlines(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

static int read_small(const char *path, char *out, size_t n);

/*
 * group_but_bwrap signals the members of the shell's process group other
 * than bubblewrap's own two processes, which an interrupt would end with
 * the whole sandbox
 */
static void
group_but_bwrap(struct terminal *t, int sig)
{
	char path[320], buf[512], *p;
	struct dirent *d;
	long pgrp;
	DIR *dir;

	if (!(dir = opendir("/proc")))
		return;
	while ((d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
		if (read_small(path, buf, sizeof buf) < 0 ||
		    !(p = strrchr(buf, ')')) ||
		    sscanf(p + 2, "%*c %*d %ld", &pgrp) != 1 ||
		    pgrp != t->pid || !strncmp(strchr(buf, '(') ?
		    strchr(buf, '(') : buf, "(bwrap)", 7))
			continue;
		kill((pid_t)strtol(d->d_name, NULL, 10), sig);
	}
	closedir(dir);
}

/* signal_group signals the shell's process group (never ours). */
static void
signal_group(struct terminal *t, int sig)
{
	if (t->pid <= 0)
		return;
	if (sig != SIGKILL && t->sb_ready && t->sb.kind == SANDBOX_BWRAP)
		group_but_bwrap(t, sig);
	else
		kill(-t->pid, sig);
}

/*
 * guard_start starts the shell's guard: a process in a session of its own
 * that reads a pipe whose write end only we hold and, at its end (we let
 * the shell go, exited, or were killed, even by SIGKILL), kills the
 * shell's whole process group.  Without it a killed agent would leave the
 * running command's processes finishing unrecorded.  It execs sh at once,
 * with an empty environment, so it keeps none of our memory.  Between fork
 * and exec: async-signal-safe calls only.
 */
static void
guard_start(struct terminal *t)
{
	char pg[24], *argv[] = { "sh", "-c", "read _; kill -9 \"$0\"", pg,
	    NULL }, *envp[] = { NULL };
	int p[2], nul;

	snprintf(pg, sizeof pg, "-%ld", (long)t->pid);
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	if ((t->guard = fork()) == 0) {
		setsid();
		if (dup2(p[0], 0) < 0 || (nul = open("/dev/null", O_WRONLY |
		    O_CLOEXEC)) < 0 || dup2(nul, 1) < 0 || dup2(nul, 2) < 0)
			_exit(127);
#ifdef SYS_close_range
		syscall(SYS_close_range, 3U, ~0U, 0U);
#endif
		execve("/bin/sh", argv, envp);
		_exit(127);
	}
	close(p[0]);
	if (t->guard < 0) {
		t->guard = 0;
		close(p[1]);
		return;
	}
	t->guard_fd = p[1];
}

/* guard_stop lets the guard kill the group (while the shell is a zombie
 * its group id cannot be reused) and waits for it */
static void
guard_stop(struct terminal *t)
{
	if (t->guard_fd >= 0)
		close(t->guard_fd);
	t->guard_fd = -1;
	if (t->guard > 0)
		while (waitpid(t->guard, NULL, 0) < 0 && errno == EINTR)
			;
	t->guard = 0;
}

/* shell_kill ends the shell's whole process group and forgets it. */
static void
shell_kill(struct terminal *t)
{
	signal_group(t, SIGKILL);
	guard_stop(t);
	if (t->pid > 0 && !t->reaped) {
		kill(t->pid, SIGKILL);
		while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (t->in >= 0)
		close(t->in);
	if (t->out >= 0)
		close(t->out);
	t->pid = 0;
	t->reaped = 0;
	t->in = t->out = -1;
	t->running = 0;
}

void
terminal_free(struct terminal *t)
{
	char **e;

	if (!t)
		return;
	shell_kill(t);
	for (e = t->env; *e; e++)
		free(*e);
	free(t->env);
	if (t->sb_ready)
		sandbox_release(&t->sb);
	free(t->bash);
	free(t->root);
	free(t);
}

/* set_tmpdir points TMPDIR at the sandbox's own temporary directory */
static void
set_tmpdir(struct terminal *t, const char *dir)
{
	char **e;
	size_t n = 0;

	for (e = t->env; *e; e++, n++)
		if (!strncmp(*e, "TMPDIR=", 7)) {
			free(*e);
			*e = xasprintf("TMPDIR=%s", dir);
			return;
		}
	t->env = xrealloc(t->env, (n + 2) * sizeof *t->env);
	t->env[n] = xasprintf("TMPDIR=%s", dir);
	t->env[n + 1] = NULL;
}

const struct sandbox *
terminal_sandbox(struct terminal *t)
{
	const char *net = getenv("HW_TOOL_NETWORK");

	if (!t->sb_ready) {
		sandbox_init(&t->sb, t->root, net && !strcmp(net, "on"));
		t->sb_ready = 1;
		if (t->sb.kind != SANDBOX_NONE)
			set_tmpdir(t, sandbox_tmpdir(&t->sb));
	}
	return &t->sb;
}

/* Between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn))
child(struct terminal *t, int in, int out, const char *exe,
    char *const argv[])
{
	static const char refused[] = "hw-agent: cannot confine the "
	    "terminal's shell\n";
	struct sigaction sa;
	sigset_t none;
	int s, fd;

	setsid();
	if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
		_exit(127);
	if (sandbox_enter(&t->sb) < 0) {
		if (write(2, refused, sizeof refused - 1) < 0)
			_exit(126);
		_exit(126);
	}
#ifdef SYS_close_range
	if (syscall(SYS_close_range, 3U, ~0U, 0U) < 0)
#endif
		for (fd = 3; fd < 4096; fd++)
			close(fd);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (s = 1; s < NSIG; s++)
		sigaction(s, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (chdir(t->root) < 0)
		_exit(127);
	execve(exe, argv, t->env);
	_exit(127);
}

/* write_input writes to the shell's stdin; EPIPE does not kill us. */
static int
write_input(struct terminal *t, const char *p, size_t n)
{
	sigset_t pipe, old;
	struct timespec zero = { 0, 0 };
	int rc = 0;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &old);
	while (n > 0) {
		ssize_t w = write(t->in, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -1;
			if (errno == EPIPE)
				sigtimedwait(&pipe, NULL, &zero);
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

static int
shell_start(struct terminal *t)
{
	static const char init[] = "trap : INT\n";
	char *argv[] = { "bash", "--noprofile", "--norc", NULL };
	char **sv, **v;
	int in[2], out[2];
	struct stat st;
	pid_t pid;

	if (access(t->bash, X_OK) < 0)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run the "
		    "terminal: bash not found");
	if (sandbox_prepare((struct sandbox *)terminal_sandbox(t)) < 0)
		return -1;
	if (pipe2(in, O_CLOEXEC) < 0)
		return hw_err_sys("cannot make the terminal's pipes");
	if (pipe2(out, O_CLOEXEC) < 0) {
		close(in[0]);
		close(in[1]);
		return hw_err_sys("cannot make the terminal's pipes");
	}
	sv = sandbox_argv(&t->sb, t->bash, argv);
	if ((pid = fork()) < 0) {
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		for (v = sv; *v; v++)
			free(*v);
		free(sv);
		return hw_err_sys("cannot start the terminal's shell");
	}
	if (pid == 0)
		child(t, in[0], out[1], sandbox_exe(&t->sb, t->bash), sv);
	for (v = sv; *v; v++)
		free(*v);
	free(sv);
	close(in[0]);
	close(out[1]);
	t->pid = pid;
	guard_start(t);
	t->in = in[1];
	t->out = out[0];
	t->running = 0;
	fstat(t->in, &st);
	snprintf(t->pipe_id, sizeof t->pipe_id, "pipe:[%lu]",
	    (unsigned long)st.st_ino);
	if (write_input(t, init, sizeof init - 1) < 0) {
		shell_kill(t);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run the "
		    "terminal: the shell did not start");
	}
	return 0;
}

/* ---- is the command blocked reading the terminal? ---- */

static int
read_small(const char *path, char *out, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, out, n - 1);
	close(fd);
	if (r < 0)
		return -1;
	out[r] = 0;
	return 0;
}

/*
 * proc_reads_input: process pid (in the shell's group) sleeps in read(2)
 * on fd 0, which is the shell's stdin pipe.  /proc/PID/syscall says so
 * exactly; where it cannot be read, a wait channel in pipe_read is taken
 * for it.
 */
static int
proc_reads_input(struct terminal *t, const char *pid)
{
	char path[320], buf[512], *p;
	long nr;
	ssize_t r;

	snprintf(path, sizeof path, "/proc/%s/fd/0", pid);
	if ((r = readlink(path, buf, sizeof buf - 1)) < 0)
		return 0;
	buf[r] = 0;
	if (strcmp(buf, t->pipe_id) != 0)
		return 0;
	snprintf(path, sizeof path, "/proc/%s/syscall", pid);
	if (read_small(path, buf, sizeof buf) == 0 && buf[0] >= '0' &&
	    buf[0] <= '9') {
		nr = strtol(buf, &p, 10);
		return nr == SYS_read && strncmp(p, " 0x0 ", 5) == 0;
	}
	snprintf(path, sizeof path, "/proc/%s/wchan", pid);
	return read_small(path, buf, sizeof buf) == 0 &&
	    strstr(buf, "pipe_read") != NULL;
}

static int
waiting_for_input(struct terminal *t)
{
	char path[320], buf[512], *p;
	struct dirent *d;
	DIR *dir;
	int hit = 0;
	long pgrp;

	if (!(dir = opendir("/proc")))
		return 0;
	while (!hit && (d = readdir(dir))) {
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
		if (read_small(path, buf, sizeof buf) < 0 ||
		    !(p = strrchr(buf, ')')))
			continue;
		/* ") S ppid pgrp" */
		if (p[1] != ' ' || p[2] != 'S' ||
		    sscanf(p + 3, "%*d %ld", &pgrp) != 1 || pgrp != t->pid)
			continue;
		hit = proc_reads_input(t, d->d_name);
	}
	closedir(dir);
	return hit;
}

/* ---- reading until the sentinel ---- */

static void
capture_compact(struct capture *c)
{
	size_t h = CAPTURE_KEEP, t = c->b.len - CAPTURE_KEEP;

	while (h > 0 && ((unsigned char)c->b.p[h] & 0xc0) == 0x80)
		h--;
	while (t < c->b.len && ((unsigned char)c->b.p[t] & 0xc0) == 0x80)
		t++;
	c->dropped_chars += utf8_count(c->b.p + h, t - h);
	c->dropped_lines += count_newlines(c->b.p + h, t - h);
	memmove(c->b.p + h, c->b.p + t, c->b.len - t);
	c->b.len = h + (c->b.len - t);
	c->search = h;
}

/* sentinel_scan: set c->found and cut the sentinel off when it is there */
static void
sentinel_scan(struct capture *c, const char *token)
{
	char mark[sizeof SENTINEL + 40];
	size_t ml, i;
	char *p, *q, *end;
	long v;

	ml = (size_t)snprintf(mark, sizeof mark, "%s%s_", SENTINEL, token);
	for (i = c->search; i + ml <= c->b.len; i = (size_t)(p - c->b.p) + 1) {
		if (!(p = memmem(c->b.p + i, c->b.len - i, mark, ml)))
			break;
		q = p + ml;
		end = c->b.p + c->b.len;
		if (q < end && *q == '-')
			q++;
		while (q < end && *q >= '0' && *q <= '9')
			q++;
		if (end - q < 3) {
			c->search = (size_t)(p - c->b.p);
			return;		/* not all here yet */
		}
		if (memcmp(q, "__\n", 3) != 0 || q == p + ml)
			continue;
		v = strtol(p + ml, NULL, 10);
		c->status = (int)v;
		c->found = 1;
		c->b.len = (size_t)(p - c->b.p);
		return;
	}
	c->search = c->b.len > ml ? c->b.len - ml : 0;
}

/* capture_read reads what is there: 1 data, 0 end of file, -1 error. */
static int
capture_read(struct terminal *t, struct capture *c)
{
	ssize_t r;

	buf_reserve(&c->b, 65536);
	do
		r = read(t->out, c->b.p + c->b.len, 65536);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return hw_err_sys("cannot read the terminal's output");
	if (r == 0)
		return 0;
	c->b.len += (size_t)r;
	sentinel_scan(c, t->token);
	if (!c->found && c->b.len > CAPTURE_MAX)
		capture_compact(c);
	return 1;
}

enum outcome { DONE, TIMED_OUT, KILLED, WAITING, EXITED };

/* the waiting hook (terminal_on_wait): process-wide */
static void (*wait_hook)(void *ctx);
static void *wait_ctx;

void
terminal_on_wait(void (*hook)(void *ctx), void *ctx)
{
	wait_hook = hook;
	wait_ctx = ctx;
}

/*
 * pump reads the shell's output until the sentinel (DONE), until ms
 * milliseconds pass (TIMED_OUT), until the command waits for input
 * (WAITING, when detect) or until the shell ends (EXITED, c->status set).
 */
static int
pump(struct terminal *t, struct capture *c, int64_t ms, int detect,
    enum outcome *how)
{
	int64_t start = now_ms(), last = start, now;
	struct pollfd pfd;
	int r, st;

	for (;;) {
		now = now_ms();
		if (now - start >= ms) {
			*how = TIMED_OUT;
			return 0;
		}
		pfd.fd = t->out;
		pfd.events = POLLIN;
		r = poll(&pfd, 1, (int)(ms - (now - start) < TICK_MS ?
		    ms - (now - start) : TICK_MS));
		if (r < 0 && errno != EINTR)
			return hw_err_sys("cannot wait for the terminal");
		if (r > 0) {
			if ((r = capture_read(t, c)) < 0)
				return -1;
			if (c->found) {
				*how = DONE;
				return 0;
			}
			if (r > 0) {
				last = now_ms();
				continue;
			}
		}
		if (waitpid(t->pid, &st, WNOHANG) == t->pid) {
			while (poll(&pfd, 1, 0) > 0 && capture_read(t, c) > 0)
				;
			c->status = WIFEXITED(st) ? WEXITSTATUS(st) :
			    128 + WTERMSIG(st);
			t->reaped = 1;
			*how = EXITED;
			return 0;
		}
		if (r == 0 && pfd.revents & POLLHUP) {
			poll(NULL, 0, 10);	/* EOF: let it finish dying */
			continue;
		}
		if (r == 0 && wait_hook)
			wait_hook(wait_ctx);
		if (detect && now_ms() - last >= IDLE_MS &&
		    waiting_for_input(t) && poll(&pfd, 1, 0) == 0) {
			*how = WAITING;
			return 0;
		}
	}
}

static void
note(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (b->len && b->p[b->len - 1] != '\n')
		buf_addc(b, '\n');
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (s)
		buf_adds(b, s);
	free(s);
}

/* report turns how the wait ended into out's note, exit and summary */
static void
report(struct terminal *t, enum outcome how, int status, double timeout,
    struct tool_result *out)
{
	static const char reset[] = "A new shell starts with the next "
	    "command; the working directory and variables are reset.";

	t->running = how == WAITING;
	out->exit_code = -1;
	switch (how) {
	case DONE:
		out->exit_code = status;
		buf_printf(&out->summary, " exited %d", status);
		break;
	case TIMED_OUT:
		note(&out->output, "[The command timed out after %g seconds "
		    "and was interrupted (Ctrl+C).]", timeout);
		buf_adds(&out->summary, " timed out");
		break;
	case KILLED:
		shell_kill(t);
		note(&out->output, "[The command timed out after %g seconds "
		    "and did not stop when interrupted: the shell was killed. "
		    "%s]", timeout, reset);
		buf_adds(&out->summary, " timed out");
		break;
	case WAITING:
		note(&out->output, "[The command is waiting for input. Send it "
		    "with is_input: true, send an empty command to see more "
		    "output, or send C-c to interrupt it.]");
		buf_adds(&out->summary, " waiting for input");
		break;
	case EXITED:
		shell_kill(t);
		out->exit_code = status;
		note(&out->output, "[The shell exited with status %d. %s]",
		    status, reset);
		buf_printf(&out->summary, " exited %d", status);
		break;
	}
}

/*
 * await waits for the running command (pump; on timeout SIGINT and a
 * grace period) and reports what happened in out.
 */
static int
await(struct terminal *t, double timeout, struct tool_result *out)
{
	struct capture c;
	enum outcome how;
	int rc, room;

	memset(&c, 0, sizeof c);
	buf_init(&c.b);
	rc = pump(t, &c, (int64_t)(timeout * 1000), 1, &how);
	if (rc == 0 && how == TIMED_OUT) {
		signal_group(t, SIGINT);
		rc = pump(t, &c, GRACE_MS, 0, &how);
		if (rc == 0 && how == TIMED_OUT)
			how = KILLED;
		else if (how == DONE)
			how = TIMED_OUT;
	}
	if (rc < 0) {
		buf_release(&c.b);
		shell_kill(t);
		return -1;
	}
	utf8_repair(&c.b);
	/*
	 * Leave room for what is already in the output (the reset line)
	 * and for the note, so that tool_run need not cut again.
	 */
	room = how == DONE ? 0 : 1;
	if (tool_output_bound(&c.b, TOOL_OUTPUT_MAX_CHARS - NOTE_CHARS * room -
	    utf8_count(out->output.p, out->output.len),
	    TOOL_OUTPUT_MAX_LINES - room -
	    count_newlines(out->output.p, out->output.len),
	    c.dropped_chars, c.dropped_lines))
		out->truncated = 1;
	buf_add(&out->output, c.b.p, c.b.len);
	buf_release(&c.b);
	report(t, how, c.status, timeout, out);
	return 0;
}

/* quote appends s as the body of a bash $'...' string. */
static void
quote(struct buf *b, const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (ch == '\\' || ch == '\'')
			buf_printf(b, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			buf_printf(b, "\\x%02x", ch);
		else
			buf_addc(b, (char)ch);
	}
}

static int
start_command(struct terminal *t, const char *cmd, size_t n)
{
	struct buf line;
	int tries, rc = -1;

	if (random_hex(t->token, 16) < 0)
		return -1;
	buf_init(&line);
	buf_adds(&line, "eval $'");
	quote(&line, cmd, n);
	buf_printf(&line, "'; printf '%%s%%s_%%d__\\n' %s %s $?\n", SENTINEL,
	    t->token);
	for (tries = 0; tries < 2 && rc < 0; tries++) {
		if (!t->pid && shell_start(t) < 0)
			break;
		if ((rc = write_input(t, line.p, line.len)) < 0)
			shell_kill(t);	/* it died since: once more */
	}
	if (rc < 0 && tries == 2)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run the terminal: "
		    "the shell does not read its input");
	buf_release(&line);
	t->running = rc == 0;
	return rc;
}

/* ---- the tool ---- */

struct targs {
	const char *command;
	size_t n;
	int is_input, reset;
	double timeout;
};

static int
get_bool(const struct jval *args, const char *key, int *out)
{
	const struct jval *v = json_get(args, key);

	*out = v && v->t == J_TRUE;
	return !v || v->t == J_NULL || v->t == J_TRUE || v->t == J_FALSE ?
	    0 : -1;
}

/* parse_args: NULL when args are valid, else the error message. */
static const char *
parse_args(const struct jval *args, struct targs *a)
{
	const struct jval *c = json_get(args, "command");
	const struct jval *to = json_get(args, "timeout");

	memset(a, 0, sizeof *a);
	a->timeout = TERMINAL_TIMEOUT_DEFAULT;
	if (get_bool(args, "is_input", &a->is_input) < 0)
		return "Invalid `is_input` parameter: it must be a boolean.";
	if (get_bool(args, "reset", &a->reset) < 0)
		return "Invalid `reset` parameter: it must be a boolean.";
	if (c && c->t == J_STRING) {
		a->command = c->u.s;
		a->n = c->n;
	} else if (c && c->t != J_NULL)
		return "Invalid `command` parameter: it must be a string.";
	else if (!a->reset)
		return "Parameter `command` is required for terminal.";
	else
		a->command = "";
	if (memchr(a->command, 0, a->n))
		return "Invalid `command` parameter: it contains a NUL "
		    "character.";
	if (a->n > COMMAND_MAX)
		return "Invalid `command` parameter: it is longer than 1 MiB; "
		    "write long scripts to a file with file_editor first.";
	if (to && to->t == J_INT)
		a->timeout = strtod(to->u.s, NULL);
	else if (to && to->t == J_FLOAT)
		a->timeout = to->u.d;
	else if (to && to->t != J_NULL)
		return "Invalid `timeout` parameter: it must be a number of "
		    "seconds.";
	if (!(a->timeout > 0) || !isfinite(a->timeout))
		return "Invalid `timeout` parameter: it must be a positive "
		    "number of seconds.";
	if (a->timeout > TERMINAL_TIMEOUT_MAX)
		a->timeout = TERMINAL_TIMEOUT_MAX;
	if (a->reset && a->is_input)
		return "Invalid `reset` parameter: reset cannot be used with "
		    "is_input=True.";
	return NULL;
}

static int
send_input(struct terminal *t, const struct targs *a, struct tool_result *out)
{
	if (strcmp(a->command, "C-c") == 0) {
		signal_group(t, SIGINT);
		return 0;
	}
	if (!a->n)
		return 0;
	if (a->n > INPUT_MAX) {
		buf_adds(&out->summary, " error");
		return tool_error(out, "Invalid `command` parameter: input is "
		    "limited to %d bytes at a time.", INPUT_MAX);
	}
	/* when the shell is gone, await reports how it ended */
	if (write_input(t, a->command, a->n) == 0)
		write_input(t, "\n", 1);
	return 0;
}

static int
run_args(struct terminal *t, const struct targs *a, struct tool_result *out)
{
	int ctrl_c = strcmp(a->command, "C-c") == 0;

	if (a->is_input || (t->running && (ctrl_c || !a->n))) {
		if (!t->running) {
			buf_adds(&out->summary, " error");
			return tool_error(out, "No command is running: "
			    "is_input sends input to a command that is still "
			    "running (exit code -1).");
		}
		send_input(t, a, out);
		if (out->exit_code == 1)
			return 0;
		return await(t, a->timeout, out);
	}
	if (t->running) {
		buf_adds(&out->summary, " error");
		return tool_error(out, "Your command was NOT executed: the "
		    "previous command is still running. Send it input with "
		    "is_input: true, an empty command to see more of its "
		    "output, or C-c to interrupt it.");
	}
	if (!a->n || ctrl_c) {
		buf_adds(&out->summary, " error");
		return tool_error(out, "No command is running, so there is "
		    "no output to wait for and nothing to interrupt.");
	}
	if (start_command(t, a->command, a->n) < 0)
		return -1;
	return await(t, a->timeout, out);
}

int
terminal_run(struct terminal *t, const struct jval *args,
    struct tool_result *out)
{
	struct targs a;
	const char *why;

	buf_adds(&out->summary, "terminal");
	if ((why = parse_args(args, &a))) {
		buf_adds(&out->summary, " error");
		return tool_error(out, "%s", why);
	}
	if (a.is_input)
		buf_adds(&out->summary, " input");
	if (terminal_sandbox(t)->kind == SANDBOX_NONE && !t->noted) {
		t->noted = 1;
		buf_printf(&out->output, "Note: the terminal runs without a "
		    "sandbox (%s).\n", t->sb.why);
	}
	if (a.reset) {
		shell_kill(t);
		buf_adds(&out->summary, " reset");
		buf_adds(&out->output, "Terminal session has been reset. All "
		    "previous environment variables and session state have "
		    "been cleared.");
		if (!a.n)
			return 0;
		buf_addc(&out->output, '\n');
	}
	return run_args(t, &a, out);
}
