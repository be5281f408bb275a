/*
 * agent/tools - the tools the agent runs for an allowed action set: the
 * terminal tool, the file editor, risk and scope rating, the sandbox.
 */
#ifndef HW_TOOLS_H
#define HW_TOOLS_H

#include "conf/conf.h"
#include "store/store.h"

/* ---- agent tools (tools.c, result.c, terminal.c, editor.c, risk.c) ---- */

/*
 * The tools the agent's model calls, after review (reference §5.2-§5.5):
 * terminal, file_editor, task_tracker, finish and think.  A toolbox runs
 * them for one agent run; nothing here prints or touches the store.  The
 * schemas of task and invoke_skill are here too; the agent runs those.
 */
enum risk { RISK_UNKNOWN, RISK_LOW, RISK_MEDIUM, RISK_HIGH };
/* risk_name: "UNKNOWN", "LOW", "MEDIUM" or "HIGH". */
const char *risk_name(enum risk r);

#define TOOL_OUTPUT_MAX_CHARS 16000	/* characters: code points */
#define TOOL_OUTPUT_MAX_LINES 240
#define TERMINAL_TIMEOUT_DEFAULT 120	/* seconds */
#define TERMINAL_TIMEOUT_MAX 3600
#define EDITOR_MAX_FILE (10u << 20)	/* bytes: 10 MB */
#define EDITOR_HISTORY 10		/* undo entries kept per file */

/*
 * The result of one call.  output is what the model sees: valid UTF-8,
 * at most TOOL_OUTPUT_MAX_CHARS characters and TOOL_OUTPUT_MAX_LINES
 * lines (head and tail kept, one marker line between; truncated is then
 * 1).  exit_code: for terminal the command's status, or -1 when it timed
 * out or is still running (waiting for input); for the other tools 0
 * (ok) or 1 (an error observation).  summary is one short line for the
 * audit-safe summary: the tool, the operation and at most a
 * project-relative path, never file contents or command text, e.g.
 * "terminal exited 0" or "file_editor create clean.py".
 * tool_result_init zeroes; tool_result_release frees (and re-inits).
 */
struct tool_result {
	struct buf output;
	int exit_code;
	int truncated;
	struct buf summary;
};
void tool_result_init(struct tool_result *r);
void tool_result_release(struct tool_result *r);

/*
 * toolbox_new makes the tools of one agent run, confined to root (NULL:
 * the current directory), which it resolves with realpath(3).  scrub is
 * a NULL-terminated list of environment variable NAMES (credential
 * variables) that the terminal's shell sees set to "" (may be NULL;
 * read during the call only).  The shell starts at the first terminal
 * call.  NULL with hw_err set when
 * the root cannot be resolved or opened.  It makes the calling process
 * not dumpable (PR_SET_DUMPABLE 0), so that the tools cannot read its
 * memory or environment.  toolbox_free ends the shell
 * and its process group (SIGKILL) and frees everything; NULL is fine.
 */
struct toolbox;
struct toolbox *toolbox_new(const char *root, const char *const *scrub);
void toolbox_free(struct toolbox *tb);
/*
 * toolbox_readable lets file_editor's view, and no other command or
 * tool, read the directory dir and what is under it: from the root,
 * inside .heartwood (an active skill's verified artifact), or absolute,
 * outside the project (a bundled skill).  -1 with hw_err set when an
 * absolute dir is not a directory.
 */
int toolbox_readable(struct toolbox *tb, const char *dir);

/*
 * The terminal's sandbox (sandbox.c).  sandbox_init chooses a back end
 * by HW_SANDBOX: "auto" (the default: bwrap, else landlock), "bwrap",
 * "landlock" or "none"; one that does not work here leaves kind
 * SANDBOX_NONE and the reason in why.  Inside, only root's contents
 * (without .git and .heartwood) and a private temporary directory are
 * writable, no socket but TCP/UDP (and only when net) can be opened,
 * and the agent's process can be neither seen nor signalled.
 * sandbox_prepare (before each shell start) rereads the project's
 * top-level names; -1 with hw_err set.  sandbox_argv and sandbox_exe
 * give the program to exec for path/argv (argv allocated, NULL-ended);
 * sandbox_enter confines the calling process, between fork and exec
 * (async-signal-safe; -1 with errno).  toolbox_sandbox is the terminal's.
 */
enum sandbox_kind { SANDBOX_NONE, SANDBOX_LANDLOCK, SANDBOX_BWRAP };
struct sandbox {
	enum sandbox_kind kind;
	char *root;
	char *scratch;		/* landlock: the private TMPDIR */
	char **argv;		/* bwrap: its arguments up to "--" */
	size_t nargv;
	int ruleset;		/* landlock: the ruleset, else -1 */
	int abi;		/* landlock's ABI */
	int net;		/* the network is allowed */
	char why[256];		/* SANDBOX_NONE: why */
};
void sandbox_init(struct sandbox *sb, const char *root, int net);
void sandbox_release(struct sandbox *sb);
int sandbox_prepare(struct sandbox *sb);
const char *sandbox_name(enum sandbox_kind k);
char **sandbox_argv(const struct sandbox *sb, const char *path,
    char *const argv[]);
const char *sandbox_exe(const struct sandbox *sb, const char *path);
const char *sandbox_tmpdir(const struct sandbox *sb);
int sandbox_enter(const struct sandbox *sb);
const struct sandbox *toolbox_sandbox(struct toolbox *tb);

/*
 * tool_schemas appends to arr (a J_ARRAY) the OpenAI "tools" entries,
 * {"type":"function","function":{"name","description","parameters"}},
 * of terminal, file_editor, task_tracker, finish and think, in that
 * order.  Each parameters object lists "summary" (string) first and, for
 * tools that are not read-only, "security_risk" (enum UNKNOWN, LOW,
 * MEDIUM, HIGH; optional) last; only type, description, properties,
 * required, items and enum are used.  Everything lives in arena a.
 */
void tool_schemas(struct arena *a, struct jval *arr);
/*
 * tool_task_schema adds the task tool's entry (reference §5.2:
 * description, prompt required, subagent_type one of types, resume)
 * with description desc, after task_tracker's when arr holds it.
 */
void tool_task_schema(struct arena *a, struct jval *arr, const char *desc,
    const char *const *types);
/*
 * tool_invoke_skill_schema adds the invoke_skill tool's entry (reference
 * §5.2: name required; read-only), for a run with active skills; the
 * agent runs the call itself (its skills are its own).
 */
void tool_invoke_skill_schema(struct arena *a, struct jval *arr);
/* tool_read_only: 1 for finish, think and invoke_skill, else 0. */
int tool_read_only(const char *name);
/*
 * tool_rule_risk runs the rule analyzers of reference §5.4 over a call
 * and returns the higher of the two (LOW, MEDIUM or HIGH): the policy
 * rails (fetch piped to a shell or interpreter, dd of=/dev/, mkfs.,
 * recursive force-delete of /, ~, /etc, /usr, /var, /home, /boot) over
 * each argument string, and the patterns over the tool name and argument
 * strings (HIGH: rm -rf-style deletes, sudo rm, mkfs.*, dd of=/dev/,
 * eval(, exec(, os.system(, subprocess.*(, curl|sh, wget|sh; MEDIUM:
 * curl or wget of an http(s) URL) and, together with the summary, for
 * prompt injection (HIGH: "ignore previous instructions" and the like;
 * MEDIUM: role-play phrases).  Text is normalized first (invisible and
 * control characters dropped, fullwidth forms folded, whitespace
 * collapsed) and read up to 30,000 characters.  summary and
 * security_risk are not scanned as arguments.  An internal error counts
 * as HIGH.  The scope analyzer (tool_scope_risk) is the third, and the
 * highest of the three is the result.
 */
enum risk tool_rule_risk(const char *name, const struct jval *args);
/*
 * tool_scope_risk (scope.c), part of tool_rule_risk: LOW only for a
 * call provably read-only and inside the project (the current directory);
 * a terminal command must be allowlisted readers with allowlisted
 * arguments, no expansion, substitution, interpreter or writing
 * redirection; HIGH for a write reaching .git, .heartwood or outside the
 * project, a pipe into an interpreter or a network shell; else MEDIUM.
 */
enum risk tool_scope_risk(const char *name, const struct jval *args);
/*
 * tool_model_risk is the model's own security_risk argument, exactly
 * "LOW", "MEDIUM" or "HIGH"; RISK_UNKNOWN when it is missing, anything
 * else, or the tool is read-only.
 */
enum risk tool_model_risk(const char *name, const struct jval *args);
/*
 * tool_run executes one approved call and fills out (its previous
 * content replaced).  Tool-level failures are observations, not errors:
 * bad or missing arguments, an unknown tool, a path outside the project
 * or inside .heartwood, a missing file, a failed write in the project all
 * give exit_code 1 and a message in output.  -1 (hw_err set) only when
 * heartwood itself fails: no pipe, no fork, no bash, a broken pipe
 * to our own shell.
 *
 * terminal: {command, is_input, timeout, reset}.  One bash (--noprofile
 * --norc, on pipes, stdout and stderr together, its own session and
 * process group) per toolbox, so the working directory and exported
 * variables persist; it starts in the root with the parent's environment
 * minus every HW_* variable and with the scrub names set to "".  Each
 * command is run through eval; output is read until a per-command random
 * sentinel carrying $? appears.  timeout (seconds, default 120, at most
 * 3600) over: SIGINT to the process group, then, if the shell is not
 * back within 2 seconds, SIGKILL and a new shell at the next call (the
 * note says so); exit_code -1.  A command found blocked reading the
 * terminal's input returns early with exit_code -1, still running: then
 * is_input sends command plus "\n" to it ("C-c" sends SIGINT instead),
 * and an empty command waits for more output; a new command is refused
 * until it ends.  is_input with nothing running is an error observation.
 * reset kills the shell and its group, starts a new one, and then runs
 * command if it is not empty.  A command that ends the shell (exit) gets
 * its status, and the next call starts a new shell.
 *
 * file_editor: {command, path, file_text, old_str, new_str, insert_line,
 * view_range}, reference §5.3: view, create, str_replace, insert,
 * undo_edit.  path, relative (to the root) or absolute, is resolved
 * following symbolic links (the parent, for a path that does not exist
 * yet); it must lie in the root and have no ".heartwood" component.  The
 * file is then reached from the root one component at a time with
 * O_NOFOLLOW, so a path changed in between is refused rather than
 * followed.  Writes go through a synced temporary file in the same
 * directory, renamed (linked, for create, which never replaces) into
 * place, keeping the file's mode.  Undo history: EDITOR_HISTORY entries
 * per file, in memory; create records none.  Binary (a NUL byte or
 * invalid UTF-8, images included) and files over EDITOR_MAX_FILE are
 * refused.
 *
 * task_tracker: {command: view|plan, task_list}.  finish {message}:
 * output "finished".  think {thought}: "Your thought has been logged.".
 */
int tool_run(struct toolbox *tb, const char *name, const struct jval *args,
    struct tool_result *out);
/*
 * tool_plan: when the last tool_run was a successful task_tracker plan,
 * the plan as [{"title","status"}] in arena a (status todo, in-progress
 * or done; notes dropped), for task.plan.updated; otherwise NULL.
 */
struct jval *tool_plan(struct toolbox *tb, struct arena *a);

/*
 * tool_output_bound keeps b (valid UTF-8) within max_chars characters and
 * max_lines lines.  Over either, it keeps a head and a tail (each under
 * half of both caps, cut on character boundaries) and one marker line
 * between them, "[... N lines (M characters) omitted ...]", counting
 * what it drops plus omitted_lines/omitted_chars the caller already took
 * from that middle (a non-zero omitted_chars always cuts).  Returns 1
 * when it cut, 0 when b was left alone.
 */
int tool_output_bound(struct buf *b, size_t max_chars, size_t max_lines,
    size_t omitted_chars, size_t omitted_lines);

/*
 * The parts of a toolbox, for tools.c (callers use tool_run).  Each _run
 * takes the call's arguments (an object) and fills out's output,
 * exit_code and summary, with tool_run's error rules; tool_error sets an
 * error observation (exit_code 1) and returns 0.  terminal_new copies
 * root and builds the shell's environment; editor_new opens root (NULL
 * with hw_err set if it cannot).
 */
struct terminal;
struct terminal *terminal_new(const char *root, const char *const *scrub);
void terminal_free(struct terminal *t);
/*
 * terminal_sandbox chooses the shell's sandbox on its first call (see
 * struct sandbox) and returns it; the terminal keeps it.
 */
const struct sandbox *terminal_sandbox(struct terminal *t);
int terminal_run(struct terminal *t, const struct jval *args,
    struct tool_result *out);
/*
 * terminal_on_wait sets a hook that terminal_run calls while a command
 * runs and is quiet (every quarter of a second), so that the caller can
 * serve others meanwhile.  Process-wide; NULL removes it.
 */
void terminal_on_wait(void (*hook)(void *ctx), void *ctx);
struct editor;
struct editor *editor_new(const char *root);
void editor_free(struct editor *e);
int editor_readable(struct editor *e, const char *dir);
int editor_run(struct editor *e, const struct jval *args,
    struct tool_result *out);
int tool_error(struct tool_result *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
