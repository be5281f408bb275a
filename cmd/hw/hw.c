/* hw - the driver: heartwood's workflows, and hw foo as hw-foo */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "setup.h"
#include "tui/tui.h"

static const char usage[] =
    "usage: hw [--session-id ID] [--json] ask PROMPT ...\n"
    "       hw [--session-id ID] [--json] allow | approve | reject | deny "
    "[GROUP]\n"
    "       hw [--session-id ID] [--json] pause | resume\n"
    "       hw [--session-id ID] replay | status\n"
    "       hw [--session-id ID] audit verify | export [--output PATH]\n"
    "       hw [--session-id ID] audit checkpoint | verify-checkpoint ...\n"
    "       hw actions [set ask-every-time | auto-approve-low-risk]\n"
    "       hw sessions list | new [--title TITLE] | show ID\n"
    "       hw sessions rename ID TITLE\n"
    "       hw files list [DIR] [--depth N] | files show FILE\n"
    "       hw [--session-id ID] changes [FILE]\n"
    "       hw doctor [--json]\n"
    "       hw doctor --plan [--interface terminal | web | notebook] "
    "[--port N]\n"
    "       hw policy [show] | normalize ENDPOINT\n"
    "       hw policy evaluate ENDPOINT [--catalog] [--tier TIER] "
    "[--mode MODE]\n"
    "                [--credential REF]\n"
    "       hw platform [show]\n"
    "       hw init [--interface terminal | web | notebook] [--port N]\n"
    "       hw setup [--model-source SOURCE] [--model-id ID] [--base-url URL]\n"
    "                [--api-key-env NAME] [--yes] [--yes-download] [--port N]\n"
    "                [--non-interactive]\n"
    "       hw COMMAND [ARG ...]\n"
    "       hw -h | --version\n";

static const char setup_usage[] =
    "usage: hw setup [--model-source SOURCE] [--model-id ID] [--base-url URL]\n"
    "                [--api-key-env NAME] [--yes] [--yes-download] [--port N]\n"
    "                [--non-interactive]\n";

static int
bad_usage(void)
{
	fputs(usage, stderr);
	return HW_EXIT_USAGE;
}

/* run_as execs prog with argv: pre (NULL-ended), then the n args */
static int
run_as(const char *prog, const char *const *pre, int n, char **args)
{
	size_t np = 0;
	char **argv;

	while (pre[np])
		np++;
	argv = xcalloc(np + (size_t)n + 2, sizeof *argv);
	argv[0] = (char *)prog;
	memcpy(argv + 1, pre, np * sizeof *argv);
	memcpy(argv + 1 + np, args, (size_t)n * sizeof *argv);
	driver_exec(prog, argv);
	free(argv);
	return -1;
}

static int
has_arg(int n, char **args, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(args[i], s) || (!strncmp(args[i], s, strlen(s)) &&
		    args[i][strlen(s)] == '='))
			return 1;
	return 0;
}

static int
wf_ask(const char *sid, int n, char **args)
{
	struct buf p;
	int rc;

	if (n > 0 && !strcmp(args[0], "--"))
		args++, n--;	/* hw ask -- -h asks "-h" */
	if (n < 1)
		return bad_usage();
	buf_init(&p);
	for (int i = 0; i < n; i++) {
		if (i)
			buf_addc(&p, ' ');
		buf_adds(&p, args[i]);
	}
	rc = driver_ask(sid, buf_cstr(&p));
	buf_release(&p);
	return rc;
}

static int
wf_decide(const char *sid, const char *kind, int n, char **args)
{
	if (n > 1)
		return bad_usage();
	return driver_decide(sid, kind, n ? args[0] : NULL);
}

static int
wf_audit(const char *sid, int n, char **args)
{
	const char *verb = n ? args[0] : "";
	const char *pre[] = { verb, "--session", sid, NULL };

	if (!strcmp(verb, "verify") && n > 1)
		pre[1] = NULL;	/* hw-audit verify FILE */
	else if (strcmp(verb, "verify") && strcmp(verb, "export") &&
	    strcmp(verb, "checkpoint"))
		pre[0] = NULL;	/* every other verb as it is */
	if (has_arg(n, args, "--session"))
		pre[1] = NULL;
	if (!n)
		return bad_usage();
	return run_as("hw-audit", pre, pre[0] ? n - 1 : n,
	    pre[0] ? args + 1 : args);
}

static int
wf_named(const char *sid, const char *w, int n, char **args)
{
	const char *none[] = { NULL }, *mode[] = { "mode", NULL };
	const char *replay[] = { "replay", sid, NULL };

	if (!strcmp(w, "replay"))
		return n ? bad_usage() : run_as("hw-session", replay, 0, args);
	if (!strcmp(w, "actions")) {
		if (n == 0 || (n == 2 && !strcmp(args[0], "set")))
			return run_as("hw-agent", mode, n ? 1 : 0, args + 1);
		return bad_usage();
	}
	if (!strcmp(w, "sessions")) {
		if (n && (!strcmp(args[0], "list") || !strcmp(args[0], "new") ||
		    !strcmp(args[0], "show") || !strcmp(args[0], "rename")))
			return run_as("hw-session", none, n, args);
		return bad_usage();
	}
	if (!strcmp(w, "pause"))
		return n ? bad_usage() : driver_pause(sid);
	if (!strcmp(w, "resume"))
		return n ? bad_usage() : driver_resume(sid);
	return n ? bad_usage() : driver_status(sid, stdout);
}

/* wf_term runs heartwood's subcommand: args[-1] is its name */
static int
wf_term(const char *sid, int n, char **args)
{
	int rc = term_command(sid, n + 1, args - 1);

	return rc == -2 ? bad_usage() : rc;
}

/* setup_value sets the field of o that option a names; 0 if none does */
static int
setup_value(struct setup_opts *o, int n, char **args, int *i)
{
	static const char *const names[] = { "--model-source", "--model-id",
		"--base-url", "--api-key-env", "--port" };
	const char **f[] = { &o->source, &o->model_id, &o->base_url,
		&o->key_env, &o->port };
	const char *a = args[*i];
	size_t k;

	for (size_t j = 0; j < 5; j++) {
		k = strlen(names[j]);
		if (strncmp(a, names[j], k) || (a[k] && a[k] != '='))
			continue;
		if (!a[k] && *i + 1 == n)
			return -1;
		*f[j] = a[k] ? a + k + 1 : args[++*i];
		return 1;
	}
	return 0;
}

static int
wf_setup(int n, char **args)
{
	struct setup_opts o = { 0 };
	int k;

	for (int i = 0; i < n; i++) {
		if (!strcmp(args[i], "--yes"))
			o.yes = 1;
		else if (!strcmp(args[i], "--yes-download"))
			o.yes_download = 1;
		else if (!strcmp(args[i], "--non-interactive"))
			o.non_interactive = 1;
		else if ((k = setup_value(&o, n, args, &i)) < 0)
			return bad_usage();
		else if (k)
			continue;
		else if (setup_key_like(args[i]) || !strncmp(args[i],
		    "--api-key", 9) || !strncmp(args[i], "--key", 5) ||
		    !strncmp(args[i], "--token", 7))
			return hw_err_set(HW_EXIT_USAGE, "a key is never an "
			    "argument: export it and give the name of its "
			    "variable with --api-key-env NAME");
		else
			return bad_usage();
	}
	return setup_run(&o);
}

static const char *const workflows[] = { "ask", "allow", "approve",
	"reject", "deny", "pause", "resume", "replay", "status", "audit",
	"actions", "sessions", "files", "changes", "doctor", "init", "setup",
	"policy", "platform", NULL };

static int
is_workflow(const char *w)
{
	for (size_t i = 0; workflows[i]; i++)
		if (!strcmp(workflows[i], w))
			return 1;
	return 0;
}

/* speaks: w prints for a person on a terminal, JSON with --json */
static int
speaks(const char *w)
{
	static const char *const ws[] = { "ask", "allow", "approve", "reject",
		"deny", "pause", "resume", NULL };

	for (size_t i = 0; ws[i]; i++)
		if (!strcmp(ws[i], w))
			return 1;
	return 0;
}

/* workflow runs hw's own command w */
static int
workflow(const char *sid, const char *w, int n, char **args)
{
	if (!strcmp(w, "ask"))
		return wf_ask(sid, n, args);
	if (!strcmp(w, "allow") || !strcmp(w, "approve"))
		return wf_decide(sid, "approve", n, args);
	if (!strcmp(w, "reject") || !strcmp(w, "deny"))
		return wf_decide(sid, "deny", n, args);
	if (!strcmp(w, "audit"))
		return wf_audit(sid, n, args);
	if (!strcmp(w, "files") || !strcmp(w, "changes") ||
	    !strcmp(w, "doctor") || !strcmp(w, "init"))
		return wf_term(sid, n, args);
	if (!strcmp(w, "setup"))
		return wf_setup(n, args);
	if (!strcmp(w, "policy"))
		return wf_policy(n, args);
	if (!strcmp(w, "platform"))
		return wf_platform(n, args);
	return wf_named(sid, w, n, args);
}

/* dispatch execs hw-NAME with args, git's way */
static int
dispatch(const char *name, char **args)
{
	size_t k = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-");
	char *prog = xasprintf("hw-%s", name);
	char *path;

	if (*name == '-' || !*name || name[k] || !(path = driver_find(prog))) {
		fprintf(stderr, "hw: '%s' is not a heartwood command\n", name);
		free(prog);
		return HW_EXIT_USAGE;
	}
	free(path);
	args[-1] = prog;
	driver_exec(prog, args - 1);
	free(prog);
	return prog_fail("hw");
}

/*
 * take_sid removes --session-id ID (or =ID) from args, up to a "--", and
 * --json when json is not NULL
 */
static int
take_sid(int *n, char **args, const char **sid, int *json)
{
	int i = 0, j = 0, k;

	for (; i < *n && strcmp(args[i], "--"); i++) {
		k = !strcmp(args[i], "--session-id");
		if (k && i + 1 == *n)
			return -1;
		if (k)
			*sid = args[++i];
		else if (!strncmp(args[i], "--session-id=", 13))
			*sid = args[i] + 13;
		else if (json && !strcmp(args[i], "--json"))
			*json = 1;
		else
			args[j++] = args[i];
	}
	while (i < *n)
		args[j++] = args[i++];
	*n = j;
	args[j] = NULL;
	return 0;
}

int
main(int argc, char **argv)
{
	const char *sid = "session-main", *given = NULL;
	int i, n, rc, json = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return fputs(usage, stdout), prog_finish("hw", 0);
		if (!strcmp(argv[i], "--version"))
			return puts("hw " HW_VERSION), prog_finish("hw", 0);
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--session-id") && i + 1 < argc)
			given = argv[++i];
		else if (!strncmp(argv[i], "--session-id=", 13))
			given = argv[i] + 13;
		else
			return bad_usage();
	}
	if (i == argc)
		return bad_usage();
	if (!is_workflow(argv[i])) {
		if (given) {
			fprintf(stderr, "hw: --session-id does not apply to "
			    "'%s'\n", argv[i]);
			return HW_EXIT_USAGE;
		}
		return dispatch(argv[i], argv + i + 1);
	}
	if (json && !speaks(argv[i]))
		return bad_usage();
	n = argc - i - 1;
	if (given)
		sid = given;
	if (take_sid(&n, argv + i + 1, &sid, speaks(argv[i]) ? &json : NULL) <
	    0)
		return bad_usage();
	if (speaks(argv[i]) && !json && isatty(STDOUT_FILENO))
		driver_text(term_print);
	/* hw ask --help must not become a recorded prompt */
	if (n > 0 && (!strcmp(argv[i + 1], "-h") ||
	    !strcmp(argv[i + 1], "--help")))
		return fputs(strcmp(argv[i], "setup") ? usage : setup_usage,
		    stdout), prog_finish("hw", 0);
	if (!valid_session_id(sid)) {
		fprintf(stderr, "hw: invalid session id '%s'\n", sid);
		return HW_EXIT_USAGE;
	}
	rc = workflow(sid, argv[i], n, argv + i + 1);
	rc = rc < 0 ? prog_fail("hw") : rc;
	return prog_finish("hw", rc);
}
