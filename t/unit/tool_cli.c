/*
 * tool_cli - a test driver for the agent tools (lib/tools.c), built with
 * the unit tests and never installed.
 *
 *	tool_cli ROOT [DIR...]	reads {"name", "arguments"} lines on
 *				stdin, runs each through one toolbox
 *				(file_editor's view reads each DIR)
 *	tool_cli --schemas	prints the tool schemas, one JSON array
 *	tool_cli --risk		reads call lines and prints each one's
 *				{"model_risk","rule_risk"}, running nothing
 *				(paths are judged from the current directory)
 *
 * Each call prints {"exit_code","model_risk","output","rule_risk",
 * "summary","truncated"} and, after a task_tracker plan, "plan" (what
 * tool_plan returns).  "arguments" may be an object or a JSON string
 * holding one, as the OpenAI API sends it.  HW_TOOL_SCRUB names the
 * variables, comma-separated, that the terminal must see blank.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/tools/tools.h"

/* scrub_names splits $HW_TOOL_SCRUB into v (NULL-terminated) in copy */
static const char *const *
scrub_names(char **copy, const char ***v)
{
	const char *env = getenv("HW_TOOL_SCRUB");
	char *tok, *save = NULL;
	size_t n = 0;

	*copy = xstrdup(env ? env : "");
	*v = xcalloc(strlen(*copy) + 2, sizeof **v);
	for (tok = strtok_r(*copy, ", ", &save); tok;
	    tok = strtok_r(NULL, ", ", &save))
		(*v)[n++] = tok;
	return *v;
}

static struct jval *
arguments(struct arena *a, struct jval *call)
{
	struct jval *args = json_get(call, "arguments");
	char err[128];

	if (args && args->t == J_STRING)
		args = json_parse(a, args->u.s, args->n, err, sizeof err);
	return args;
}

static int
run(struct toolbox *tb, struct arena *a, struct jval *call, struct buf *b)
{
	struct tool_result r;
	struct jval *o = json_obj(a), *args = arguments(a, call), *plan;
	const char *name = json_get_str(call, "name");

	tool_result_init(&r);
	if (tool_run(tb, name, args, &r) < 0) {
		tool_result_release(&r);
		return -1;
	}
	json_add(a, o, "exit_code", json_int(a, r.exit_code));
	json_add(a, o, "output", json_strn(a, r.output.p ? r.output.p : "",
	    r.output.len));
	json_add(a, o, "summary", json_strn(a, r.summary.p ? r.summary.p :
	    "", r.summary.len));
	json_add(a, o, "truncated", json_bool(a, r.truncated));
	json_add(a, o, "rule_risk", json_str(a,
	    risk_name(tool_rule_risk(name, args))));
	json_add(a, o, "model_risk", json_str(a,
	    risk_name(tool_model_risk(name, args))));
	if ((plan = tool_plan(tb, a)))
		json_add(a, o, "plan", plan);
	tool_result_release(&r);
	buf_clear(b);
	json_canon(b, o);
	buf_addc(b, '\n');
	return 0;
}

static int
risk_only(struct arena *a, struct buf *b)
{
	struct jsonl in;
	char *line;
	size_t len;
	int r;

	jsonl_init(&in, 0, "stdin", JSONL_LINE_MAX);
	while ((r = jsonl_next(&in, &line, &len)) > 0) {
		struct jval *call = jsonl_parse(&in, a, line, len), *o;
		const char *name;

		if (!call)
			return prog_fail("tool_cli");
		name = json_get_str(call, "name");
		o = json_obj(a);
		json_add(a, o, "rule_risk", json_str(a, risk_name(
		    tool_rule_risk(name, arguments(a, call)))));
		json_add(a, o, "model_risk", json_str(a, risk_name(
		    tool_model_risk(name, arguments(a, call)))));
		buf_clear(b);
		json_canon(b, o);
		printf("%s\n", buf_cstr(b));
	}
	jsonl_release(&in);
	return prog_finish("tool_cli", r < 0);
}

int
main(int argc, char **argv)
{
	struct toolbox *tb;
	struct arena a;
	struct jsonl in;
	struct buf b;
	char *line, *copy;
	const char **names;
	size_t len;
	int rc = 0, r = 0, i;

	arena_init(&a);
	buf_init(&b);
	if (argc == 2 && strcmp(argv[1], "--schemas") == 0) {
		struct jval *arr = json_new(&a, J_ARRAY);

		tool_schemas(&a, arr);
		json_canon(&b, arr);
		printf("%s\n", buf_cstr(&b));
		buf_release(&b);
		arena_release(&a);
		return prog_finish("tool_cli", 0);
	}
	if (argc == 2 && strcmp(argv[1], "--risk") == 0) {
		rc = risk_only(&a, &b);
		buf_release(&b);
		arena_release(&a);
		return rc;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: tool_cli ROOT [DIR...] | "
		    "tool_cli --schemas\n");
		return 2;
	}
	tb = toolbox_new(argv[1], scrub_names(&copy, &names));
	free(copy);
	free(names);
	if (!tb)
		return prog_fail("tool_cli");
	for (i = 2; i < argc; i++)
		toolbox_readable(tb, argv[i]);
	jsonl_init(&in, 0, "stdin", JSONL_LINE_MAX);
	while (rc == 0 && (r = jsonl_next(&in, &line, &len)) > 0) {
		struct jval *call = jsonl_parse(&in, &a, line, len);

		if (!call || run(tb, &a, call, &b) < 0) {
			rc = prog_fail("tool_cli");
			break;
		}
		fwrite(b.p, 1, b.len, stdout);
		fflush(stdout);
		arena_clear(&a);
	}
	if (rc == 0 && r < 0)
		rc = prog_fail("tool_cli");
	toolbox_free(tb);
	jsonl_release(&in);
	buf_release(&b);
	arena_release(&a);
	return prog_finish("tool_cli", rc);
}
