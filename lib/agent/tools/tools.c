/*
 * tools.c - the agent's toolbox: the schemas the model sees, dispatch of
 * one approved call, bounded results, the task tracker, finish and think
 * (reference §5.2, §5.5).  The terminal is terminal.c, the file editor
 * editor.c, the rule risk analyzers risk.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "agent/tools/tools.h"

struct task {
	char *title, *notes, *status;
};

struct toolbox {
	char *root;
	struct terminal *term;
	struct editor *ed;
	struct task *tasks;
	size_t ntasks;
	int plan_updated;	/* the last tool_run was a task_tracker plan */
};

/* ---- schemas (reference §5.2) ---- */

static struct jval *
prop(struct arena *a, const char *type, const char *desc)
{
	struct jval *p = json_obj(a);

	json_add(a, p, "type", json_str(a, type));
	if (desc)
		json_add(a, p, "description", json_str(a, desc));
	return p;
}

static struct jval *
str_array(struct arena *a, const char *const *v)
{
	struct jval *arr = json_new(a, J_ARRAY);

	while (*v)
		json_push(a, arr, json_str(a, *v++));
	return arr;
}

static struct jval *
enum_prop(struct arena *a, const char *desc, const char *const *values)
{
	struct jval *p = prop(a, "string", desc);

	json_add(a, p, "enum", str_array(a, values));
	return p;
}

static const char *const risk_values[] = {
	"UNKNOWN", "LOW", "MEDIUM", "HIGH", NULL
};

/*
 * tool_entry wraps a tool's own properties: summary first (nullable,
 * shown as the plain type), then the properties, then security_risk for
 * tools that are not read-only.
 */
static void
tool_entry(struct arena *a, struct jval *arr, const char *name,
    const char *desc, struct jval *props, const char *const *required)
{
	struct jval *e = json_obj(a), *f = json_obj(a), *p = json_obj(a);
	struct jval *all = json_obj(a);
	size_t i;

	json_add(a, all, "summary", prop(a, "string", "A concise summary "
	    "(approximately 10 words) of what this action does, shown to "
	    "the user."));
	for (i = 0; i < props->n; i++)
		json_add(a, all, props->u.m[i].k, props->u.m[i].v);
	if (!tool_read_only(name))
		json_add(a, all, "security_risk", enum_prop(a, "The LLM's "
		    "assessment of the safety risk of this action.",
		    risk_values));
	json_add(a, p, "type", json_str(a, "object"));
	json_add(a, p, "properties", all);
	json_add(a, p, "required", str_array(a, required));
	json_add(a, f, "name", json_str(a, name));
	json_add(a, f, "description", json_str(a, desc));
	json_add(a, f, "parameters", p);
	json_add(a, e, "type", json_str(a, "function"));
	json_add(a, e, "function", f);
	json_push(a, arr, e);
}

static const char terminal_desc[] =
    "Execute a bash command in the terminal within a persistent shell "
    "session.\n\n"
    "### Command Execution\n"
    "* One command at a time: You can only execute one bash command at a "
    "time. If you need to run multiple commands sequentially, use `&&` or "
    "`;` to chain them together.\n"
    "* Persistent session: Commands execute in a persistent shell session "
    "where environment variables, virtual environments, and working "
    "directory persist between commands. The session starts in the "
    "project directory.\n"
    "* Timeout: a command still running after `timeout` seconds (default "
    "120) is interrupted with Ctrl+C and reported with exit code -1.\n"
    "* Input: a command that stops to wait for input returns with exit "
    "code -1 while it keeps running. Set `is_input` to true to send "
    "text (`command`) to its standard input, an empty `command` to see "
    "more of its output, or `C-c` to interrupt it.\n\n"
    "### Long-running Commands\n"
    "* For commands that may run indefinitely, run them in the background "
    "and redirect output to a file, e.g. `python3 app.py > server.log "
    "2>&1 &`.\n"
    "* For commands that may run for a long time (e.g. installation or "
    "testing commands), set the \"timeout\" parameter to an appropriate "
    "value.\n\n"
    "### Output Handling\n"
    "* Output over 16,000 characters or 240 lines is truncated: its "
    "beginning and end are kept.\n\n"
    "### Terminal Reset\n"
    "* If the terminal becomes unresponsive, set the \"reset\" parameter "
    "to `true` to create a new terminal session. This will lose all "
    "previously set environment variables, working directory changes, "
    "and any running processes.\n";

static void
terminal_schema(struct arena *a, struct jval *arr)
{
	static const char *const req[] = { "command", NULL };
	struct jval *p = json_obj(a);

	json_add(a, p, "command", prop(a, "string", "The bash command to "
	    "execute. Can be empty string to view additional logs when "
	    "previous exit code is `-1`. Can be `C-c` (Ctrl+C) to interrupt "
	    "the currently running process. Note: You can only execute one "
	    "bash command at a time. If you need to run multiple commands "
	    "sequentially, you can use `&&` or `;` to chain them together."));
	json_add(a, p, "is_input", prop(a, "boolean", "If True, the command "
	    "is an input to the running process. If False, the command is a "
	    "bash command to be executed in the terminal. Default is "
	    "False."));
	json_add(a, p, "timeout", prop(a, "number", "Optional. Sets a "
	    "maximum time limit (in seconds) for running the command; a "
	    "command still running then is interrupted. Defaults to 120 "
	    "seconds, at most 3600. Use a higher value if the command is "
	    "expected to take a long time (like installation or testing), "
	    "or if it has a known fixed duration (like sleep)."));
	json_add(a, p, "reset", prop(a, "boolean", "If True, reset the "
	    "terminal by creating a new session. Use this only when the "
	    "terminal becomes unresponsive. Note that all previously set "
	    "environment variables and session state will be lost after "
	    "reset. Cannot be used with is_input=True."));
	tool_entry(a, arr, "terminal", terminal_desc, p, req);
}

static const char editor_desc[] =
    "Custom editing tool for viewing, creating and editing files in "
    "plain-text format\n"
    "* State is persistent across command calls and discussions with the "
    "user\n"
    "* If `path` is a text file, `view` displays the result of applying "
    "`cat -n`. If `path` is a directory, `view` lists non-hidden files "
    "and directories up to 2 levels deep\n"
    "* The `create` command cannot be used if the specified `path` "
    "already exists as a file\n"
    "* If a `command` generates a long output, it will be truncated and "
    "marked with `<response clipped>`\n"
    "* The `undo_edit` command will revert the last edit made to the file "
    "at `path`\n"
    "* Paths are absolute or relative to the project directory; only "
    "files inside the project, and outside `.heartwood`, can be viewed "
    "or edited. Binary files and files over 10 MB are refused.\n\n"
    "CRITICAL REQUIREMENTS FOR USING THIS TOOL:\n\n"
    "1. EXACT MATCHING: The `old_str` parameter must match EXACTLY one or "
    "more consecutive lines from the file, including all whitespace and "
    "indentation. The tool will fail if `old_str` matches multiple "
    "locations or doesn't match exactly with the file content.\n\n"
    "2. UNIQUENESS: The `old_str` must uniquely identify a single "
    "instance in the file:\n"
    "   - Include sufficient context before and after the change point "
    "(3-5 lines recommended)\n"
    "   - If not unique, the replacement will not be performed\n\n"
    "3. REPLACEMENT: The `new_str` parameter should contain the edited "
    "lines that replace the `old_str`. Both strings must be different.\n";

static void
editor_schema(struct arena *a, struct jval *arr)
{
	static const char *const req[] = { "command", "path", NULL };
	static const char *const cmds[] = {
		"view", "create", "str_replace", "insert", "undo_edit", NULL
	};
	struct jval *p = json_obj(a), *vr;

	json_add(a, p, "command", enum_prop(a, "The commands to run. Allowed "
	    "options are: `view`, `create`, `str_replace`, `insert`, "
	    "`undo_edit`.", cmds));
	json_add(a, p, "path", prop(a, "string", "Absolute path to file or "
	    "directory."));
	json_add(a, p, "file_text", prop(a, "string", "Required parameter of "
	    "`create` command, with the content of the file to be "
	    "created."));
	json_add(a, p, "old_str", prop(a, "string", "Required parameter of "
	    "`str_replace` command containing the string in `path` to "
	    "replace."));
	json_add(a, p, "new_str", prop(a, "string", "Optional parameter of "
	    "`str_replace` command containing the new string (if not given, "
	    "no string will be added). Required parameter of `insert` "
	    "command containing the string to insert."));
	json_add(a, p, "insert_line", prop(a, "integer", "Required parameter "
	    "of `insert` command. The `new_str` will be inserted AFTER the "
	    "line `insert_line` of `path`."));
	vr = prop(a, "array", "Optional parameter of `view` command when "
	    "`path` points to a file. If none is given, the full file is "
	    "shown. If provided, the file will be shown in the indicated "
	    "line number range, e.g. [11, 12] will show lines 11 and 12. "
	    "Indexing at 1 to start. Setting `[start_line, -1]` shows all "
	    "lines from `start_line` to the end of the file.");
	json_add(a, vr, "items", prop(a, "integer", NULL));
	json_add(a, p, "view_range", vr);
	tool_entry(a, arr, "file_editor", editor_desc, p, req);
}

static const char tracker_desc[] =
    "This tool provides structured task management capabilities for "
    "development workflows. It enables systematic tracking of work "
    "items, progress monitoring, and efficient organization of complex "
    "development activities.\n\n"
    "Use it for multi-phase work, complex implementation tasks, explicit "
    "requests for task organization, and several concurrent "
    "requirements; skip it for single, trivial or purely informational "
    "requests.\n\n"
    "Status values: `todo` (not yet initiated), `in_progress` (currently "
    "active; limit active work to ONE task at a time), `done` (fully "
    "completed; never while tests fail, the implementation is "
    "incomplete or errors are unresolved). `plan` replaces the whole "
    "list: always `view` the current list before changing it.\n";

static void
tracker_schema(struct arena *a, struct jval *arr)
{
	static const char *const none[] = { NULL };
	static const char *const title[] = { "title", NULL };
	static const char *const cmds[] = { "view", "plan", NULL };
	static const char *const st[] = { "todo", "in_progress", "done", NULL };
	struct jval *p = json_obj(a), *list, *item, *ip = json_obj(a);

	json_add(a, p, "command", enum_prop(a, "The command to execute. "
	    "`view` shows the current task list. `plan` creates or updates "
	    "the task list based on provided requirements and progress. "
	    "Always `view` the current list before making changes.", cmds));
	json_add(a, ip, "title", prop(a, "string", "A brief title for the "
	    "task."));
	json_add(a, ip, "notes", prop(a, "string", "Additional details or "
	    "notes about the task."));
	json_add(a, ip, "status", enum_prop(a, "The current status of the "
	    "task. One of 'todo', 'in_progress', or 'done'.", st));
	item = prop(a, "object", NULL);
	json_add(a, item, "properties", ip);
	json_add(a, item, "required", str_array(a, title));
	list = prop(a, "array", "The full task list. Required parameter of "
	    "`plan` command.");
	json_add(a, list, "items", item);
	json_add(a, p, "task_list", list);
	tool_entry(a, arr, "task_tracker", tracker_desc, p, none);
}

static void
finish_think_schemas(struct arena *a, struct jval *arr)
{
	static const char *const msg[] = { "message", NULL };
	static const char *const th[] = { "thought", NULL };
	struct jval *p = json_obj(a);

	json_add(a, p, "message", prop(a, "string", "Final message to send "
	    "to the user."));
	tool_entry(a, arr, "finish", "Signals the completion of the current "
	    "task or conversation.\n\nUse this tool when:\n- You have "
	    "successfully completed the user's requested task\n- You cannot "
	    "proceed further due to technical limitations or missing "
	    "information\n\nThe message should include:\n- A clear summary of "
	    "actions taken and their results\n- Any next steps for the user\n"
	    "- Explanation if you're unable to complete the task\n- Any "
	    "follow-up questions if more information is needed\n", p, msg);
	p = json_obj(a);
	json_add(a, p, "thought", prop(a, "string", "The thought to log."));
	tool_entry(a, arr, "think", "Use the tool to think about something. "
	    "It will not obtain new information or make any changes to the "
	    "repository, but just log the thought. Use it when complex "
	    "reasoning or brainstorming is needed.", p, th);
}

void
tool_schemas(struct arena *a, struct jval *arr)
{
	terminal_schema(a, arr);
	editor_schema(a, arr);
	tracker_schema(a, arr);
	finish_think_schemas(a, arr);
}

void
tool_task_schema(struct arena *a, struct jval *arr, const char *desc,
    const char *const *types)
{
	static const char *const req[] = { "prompt", NULL };
	struct jval *p = json_obj(a), *e;
	size_t i, at;

	json_add(a, p, "description", prop(a, "string", "A short (3-5 "
	    "word) description of the task."));
	json_add(a, p, "prompt", prop(a, "string", "The objective for the "
	    "specialist: what to examine or plan and what to answer with."));
	json_add(a, p, "subagent_type", enum_prop(a, "The specialist to "
	    "delegate to.", types));
	json_add(a, p, "resume", prop(a, "string", "Not supported: a "
	    "task that names one is rejected."));
	tool_entry(a, arr, "task", desc, p, req);
	/* after task_tracker, as the reference lists them */
	for (at = 0; at + 1 < arr->n; at++)
		if (json_is_str(json_get(json_get(arr->u.a[at], "function"),
		    "name"), "task_tracker"))
			break;
	if (at + 1 >= arr->n)
		return;
	e = arr->u.a[arr->n - 1];
	for (i = arr->n - 1; i > at + 1; i--)
		arr->u.a[i] = arr->u.a[i - 1];
	arr->u.a[at + 1] = e;
}

void
tool_invoke_skill_schema(struct arena *a, struct jval *arr)
{
	static const char *const req[] = { "name", NULL };
	struct jval *p = json_obj(a);

	json_add(a, p, "name", prop(a, "string", "The name of the skill to "
	    "activate, one of the active skills the system prompt lists."));
	tool_entry(a, arr, "invoke_skill", "Activate one of the active Agent "
	    "Skills: returns its SKILL.md instructions and the absolute "
	    "location of its directory. Resolve the skill's other files "
	    "(scripts/, references/, assets/) from that location; file_editor "
	    "can view them there, and only view them. It makes no changes.",
	    p, req);
}

int
tool_read_only(const char *name)
{
	return name && (strcmp(name, "finish") == 0 ||
	    strcmp(name, "think") == 0 || strcmp(name, "invoke_skill") == 0);
}

/* ---- the toolbox ---- */

struct toolbox *
toolbox_new(const char *root, const char *const *scrub)
{
	struct toolbox *tb = xcalloc(1, sizeof *tb);

	/* the tools' processes may not read this one's memory or environ */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (!(tb->root = realpath(root ? root : ".", NULL))) {
		hw_err_sys("cannot resolve the project root '%s'",
		    root ? root : ".");
		free(tb);
		return NULL;
	}
	if (!(tb->ed = editor_new(tb->root))) {
		free(tb->root);
		free(tb);
		return NULL;
	}
	tb->term = terminal_new(tb->root, scrub);
	return tb;
}

int
toolbox_readable(struct toolbox *tb, const char *dir)
{
	return editor_readable(tb->ed, dir);
}

const struct sandbox *
toolbox_sandbox(struct toolbox *tb)
{
	return terminal_sandbox(tb->term);
}

static void
tasks_clear(struct toolbox *tb)
{
	size_t i;

	for (i = 0; i < tb->ntasks; i++) {
		free(tb->tasks[i].title);
		free(tb->tasks[i].notes);
		free(tb->tasks[i].status);
	}
	free(tb->tasks);
	tb->tasks = NULL;
	tb->ntasks = 0;
}

void
toolbox_free(struct toolbox *tb)
{
	if (!tb)
		return;
	terminal_free(tb->term);
	editor_free(tb->ed);
	tasks_clear(tb);
	free(tb->root);
	free(tb);
}

/* ---- task_tracker ---- */

static int
valid_status(const char *s)
{
	return strcmp(s, "todo") == 0 || strcmp(s, "in_progress") == 0 ||
	    strcmp(s, "done") == 0;
}

/* plan_check: NULL when list is a valid task_list, else the reason. */
static char *
plan_check(const struct jval *list)
{
	size_t i;

	if (list && list->t != J_NULL && list->t != J_ARRAY)
		return xstrdup("Invalid `task_list` parameter: it must be a "
		    "list of tasks.");
	for (i = 0; list && list->t == J_ARRAY && i < list->n; i++) {
		const struct jval *t = list->u.a[i], *v;

		if (t->t != J_OBJECT)
			return xasprintf("Invalid task %zu: it must be an "
			    "object.", i + 1);
		if (!json_get_str(t, "title"))
			return xasprintf("Invalid task %zu: `title` is "
			    "required and must be a string.", i + 1);
		v = json_get(t, "notes");
		if (v && v->t != J_NULL && v->t != J_STRING)
			return xasprintf("Invalid task %zu: `notes` must be "
			    "a string.", i + 1);
		v = json_get(t, "status");
		if (v && v->t != J_NULL && (v->t != J_STRING ||
		    !valid_status(v->u.s)))
			return xasprintf("Invalid task %zu: `status` must be "
			    "one of 'todo', 'in_progress', 'done'.", i + 1);
	}
	return NULL;
}

static void
plan_set(struct toolbox *tb, const struct jval *list)
{
	size_t i, n = list && list->t == J_ARRAY ? list->n : 0;

	tasks_clear(tb);
	tb->tasks = xcalloc(n ? n : 1, sizeof *tb->tasks);
	for (i = 0; i < n; i++) {
		const struct jval *t = list->u.a[i];
		const char *notes = json_get_str(t, "notes");
		const char *st = json_get_str(t, "status");

		tb->tasks[i].title = xstrdup(json_get_str(t, "title"));
		tb->tasks[i].notes = xstrdup(notes ? notes : "");
		tb->tasks[i].status = xstrdup(st ? st : "todo");
	}
	tb->ntasks = n;
}

static void
plan_view(struct toolbox *tb, struct buf *b)
{
	size_t i;

	if (!tb->ntasks) {
		buf_adds(b, "No task list found. Use the \"plan\" command to "
		    "create one.");
		return;
	}
	buf_adds(b, "# Task List\n");
	for (i = 0; i < tb->ntasks; i++) {
		const char *st = tb->tasks[i].status;

		buf_printf(b, "\n%zu. %s %s\n", i + 1,
		    strcmp(st, "done") == 0 ? "\xe2\x9c\x85" :
		    strcmp(st, "in_progress") == 0 ? "\xf0\x9f\x94\x84" :
		    "\xe2\x8f\xb3", tb->tasks[i].title);
		if (tb->tasks[i].notes[0])
			buf_printf(b, "   %s\n", tb->tasks[i].notes);
	}
	while (b->len && b->p[b->len - 1] == '\n')
		b->len--;
}

static int
run_tracker(struct toolbox *tb, const struct jval *args,
    struct tool_result *out)
{
	const struct jval *cmd = json_get(args, "command");
	const char *c = cmd && cmd->t == J_STRING ? cmd->u.s : NULL;
	char *why;

	if (cmd && cmd->t != J_NULL && !c)
		c = "";
	if (!c || strcmp(c, "view") == 0) {
		buf_adds(&out->summary, "task_tracker view");
		plan_view(tb, &out->output);
		return 0;
	}
	if (strcmp(c, "plan") != 0) {
		buf_adds(&out->summary, "task_tracker invalid command");
		return tool_error(out, "Unknown command: %s. Supported "
		    "commands are \"view\" and \"plan\".", c);
	}
	buf_adds(&out->summary, "task_tracker plan");
	if ((why = plan_check(json_get(args, "task_list")))) {
		tool_error(out, "%s", why);
		free(why);
		return 0;
	}
	plan_set(tb, json_get(args, "task_list"));
	tb->plan_updated = 1;
	buf_printf(&out->output, "Task list has been updated with %zu "
	    "item(s).", tb->ntasks);
	return 0;
}

struct jval *
tool_plan(struct toolbox *tb, struct arena *a)
{
	struct jval *arr;
	size_t i;

	if (!tb->plan_updated)
		return NULL;
	arr = json_new(a, J_ARRAY);
	for (i = 0; i < tb->ntasks; i++) {
		struct jval *t = json_obj(a);
		const char *st = tb->tasks[i].status;

		json_add(a, t, "title", json_str(a, tb->tasks[i].title));
		json_add(a, t, "status", json_str(a,
		    strcmp(st, "in_progress") == 0 ? "in-progress" : st));
		json_push(a, arr, t);
	}
	return arr;
}

/* ---- finish, think, dispatch ---- */

static int
tool_known(const char *name)
{
	static const char *const names[] = {
		"terminal", "file_editor", "task_tracker", "finish", "think",
		NULL
	};
	const char *const *p;

	for (p = names; name && *p; p++)
		if (strcmp(name, *p) == 0)
			return 1;
	return 0;
}

static int
run_simple(const char *name, const char *key, const char *done,
    const struct jval *args, struct tool_result *out)
{
	buf_adds(&out->summary, name);
	if (!json_get_str(args, key))
		return tool_error(out, "Parameter `%s` is required for %s.",
		    key, name);
	buf_adds(&out->output, done);
	return 0;
}

int
tool_run(struct toolbox *tb, const char *name, const struct jval *args,
    struct tool_result *out)
{
	int rc = 0;

	buf_clear(&out->output);
	buf_clear(&out->summary);
	out->exit_code = 0;
	out->truncated = 0;
	tb->plan_updated = 0;
	if (!name)
		name = "";
	if (!args || args->t != J_OBJECT) {
		buf_printf(&out->summary, "%s invalid arguments",
		    tool_known(name) ? name : "tool");
		tool_error(out, "The arguments of a tool call must be a JSON "
		    "object.");
	} else if (strcmp(name, "terminal") == 0)
		rc = terminal_run(tb->term, args, out);
	else if (strcmp(name, "file_editor") == 0)
		rc = editor_run(tb->ed, args, out);
	else if (strcmp(name, "task_tracker") == 0)
		rc = run_tracker(tb, args, out);
	else if (strcmp(name, "finish") == 0)
		rc = run_simple("finish", "message", "finished", args, out);
	else if (strcmp(name, "think") == 0)
		rc = run_simple("think", "thought",
		    "Your thought has been logged.", args, out);
	else {
		buf_adds(&out->summary, "unknown tool");
		tool_error(out, "Tool '%.100s' is not available. Available "
		    "tools: terminal, file_editor, task_tracker, finish, "
		    "think.", name);
	}
	if (rc < 0)
		return -1;
	utf8_repair(&out->output);
	if (tool_output_bound(&out->output, TOOL_OUTPUT_MAX_CHARS,
	    TOOL_OUTPUT_MAX_LINES, 0, 0))
		out->truncated = 1;
	utf8_repair(&out->summary);
	return 0;
}
