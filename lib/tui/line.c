/* line.c - the researcher's terminal: what both modes do, and plain
 * line mode (heartwood(1)) */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/tui.h"

#define TERM_LINE_MAX COMMAND_LINE_MAX
#define TERM_ARGS 8

static const char help_text[] =
    "Commands:\n"
    "  /help                 this list\n"
    "  /status               session state, review mode and model route\n"
    "  /permissions [MODE]   show or set the action review mode\n"
    "  /allow [GROUP]        allow the pending action set once\n"
    "  /reject [GROUP]       reject the pending action set\n"
    "  /pause, /resume       pause or resume the agent\n"
    "  /files [DIR]          the project's files\n"
    "  /show FILE            one project file\n"
    "  /changes [FILE]       changed paths, or one file's diff\n"
    "  /replay               the whole conversation again\n"
    "  /audit-export [PATH]  a scrubbed copy of the audit log\n"
    "  /specialists          the specialist catalogue\n"
    "  /sign-in, /sign-out   sign in with ChatGPT, or out (its Responses "
    "route)\n"
    "  /skills [inspect NAME | install NAME DIGEST]\n"
    "                        skills: list, inspect, install by digest\n"
    "  /exit                 leave (the session stays)\n"
    "Anything else is a task for the agent.\n";

/* status: the session, its model route and review mode, then render */
static int
status(struct term *t)
{
	struct arena a;
	struct jval *proj, *ctx;
	const char *m = getenv("HW_MODEL"), *d, *why;

	arena_init(&a);
	fprintf(t->out, "Session: %s\n", t->sid);
	fputs("Model: ", t->out);
	term_put_safe(t->out, m && *m ? m : "not configured (set HW_MODEL and "
	    "HW_BASE_URL)");
	fputc('\n', t->out);
	if ((proj = driver_project(t->sid, &a))) {
		ctx = json_get(proj, "context");
		d = json_get_str(ctx, "modelDecision");
		why = json_get_str(ctx, "modelReason");
		if (d) {
			fputs("Policy decision: ", t->out);
			term_put_safe(t->out, d);
			if (why) {
				fputs(" · ", t->out);
				term_put_safe(t->out, why);
			}
			fputc('\n', t->out);
		}
		if ((d = json_get_str(ctx, "credentialIsolation"))) {
			fputs("Credential isolation: ", t->out);
			term_put_safe(t->out, d);
			fputc('\n', t->out);
		}
	}
	arena_release(&a);
	return t->show(t);
}

/*
 * send applies one command; run also continues the agent (which goes on
 * by itself when it already runs the session); then render
 */
static int
send(struct term *t, const char *kind, const char *payload, int run)
{
	struct buf ans;
	int rc;

	buf_init(&ans);
	rc = driver_send(t->sid, kind, payload, &ans);
	if (rc == 0 && run)
		rc = t->go(t);
	buf_release(&ans);
	if (rc < 0)
		rc = term_fail(t);
	else if (rc > 0)
		fprintf(t->err, "heartwood: the agent stopped with status "
		    "%d\n", rc);
	t->show(t);
	return rc;
}

static int
chat(struct term *t, const char *prompt)
{
	struct buf p;
	int rc;

	if (driver_ready() < 0)
		return term_fail(t);	/* nothing recorded that nobody can answer */
	buf_init(&p);
	buf_adds(&p, "{\"prompt\":");
	json_canon_str(&p, prompt, strlen(prompt));
	buf_addc(&p, '}');
	rc = send(t, "chat", buf_cstr(&p), 1);
	buf_release(&p);
	return rc;
}

static int
decide(struct term *t, const char *kind, const char *group)
{
	struct arena a;
	struct jval *proj;
	struct buf p;
	int rc;

	arena_init(&a);
	buf_init(&p);
	if (!group && !(proj = driver_project(t->sid, &a))) {
		rc = term_fail(t);
		goto out;
	}
	if (!group && !(group = json_get_str(json_get(proj,
	    "pendingApproval"), "groupId"))) {
		fputs("No actions are awaiting review.\n", t->err);
		rc = HW_EXIT_FAIL;
		goto out;
	}
	buf_adds(&p, "{\"target_id\":");
	json_canon_str(&p, group, strlen(group));
	buf_adds(&p, ",\"target_type\":\"action-set\"}");
	rc = send(t, kind, buf_cstr(&p), 1);
out:
	buf_release(&p);
	arena_release(&a);
	return rc;
}

static int
permissions(struct term *t, int n, char **av)
{
	char *argv[] = { "hw-agent", "mode", n ? av[0] : NULL, NULL };
	const char *cur = term_mode_label();
	struct buf out;
	int rc;

	if (!n) {
		fprintf(t->out, "Action review: %s\n"
		    "  %s ask-every-time         Review Every Action "
		    "(Recommended): pause before every proposed set\n"
		    "  %s auto-approve-low-risk  Low-Risk Automation: a set "
		    "continues by itself only when every member is low risk\n"
		    "Select: /permissions <value>\n", cur,
		    cur[0] == 'R' ? "*" : " ", cur[0] == 'L' ? "*" : " ");
		return fflush(t->out), 0;
	}
	if (n > 1 || (strcmp(av[0], "ask-every-time") &&
	    strcmp(av[0], "auto-approve-low-risk"))) {
		fprintf(t->err, "Unknown review mode: %s. Select: /permissions "
		    "ask-every-time | auto-approve-low-risk\n", av[0]);
		return HW_EXIT_USAGE;
	}
	buf_init(&out);
	rc = driver_run("hw-agent", argv, NULL, 0, &out);
	buf_release(&out);
	if (rc < 0)
		return term_fail(t);
	if (rc == 0)
		fprintf(t->out, "Action review: %s\n", term_mode_label());
	fflush(t->out);
	return rc;
}

/* inspect runs hw-inspect verb, or says that it is not installed */
static int
inspect(struct term *t, const char *cmd, const char *verb, int n, char **av)
{
	char *argv[] = { "hw-inspect", (char *)verb, NULL, NULL, NULL, NULL };
	char *path = driver_find("hw-inspect");
	int k = 2, rc;

	if (!path) {
		fprintf(t->err, "heartwood: /%s needs hw-inspect, which is not "
		    "installed\n", cmd);
		return HW_EXIT_UNAVAILABLE;
	}
	free(path);
	if (n)
		argv[k++] = av[0];
	if (!strcmp(verb, "changes") || !strcmp(verb, "diff")) {
		argv[k++] = "--session";
		argv[k++] = (char *)t->sid;
	}
	if ((rc = term_inspect(t->out, argv)) < 0)
		return term_fail(t);
	return rc;
}

/*
 * export_audit exports to the path given, or only to the session's own
 * audit-export.jsonl (inside .heartwood), and names it with its count
 */
static int
export_audit(struct term *t, int n, char **av)
{
	char *argv[] = { "hw-audit", "export", "--session", (char *)t->sid,
		n ? "--output" : NULL, n ? av[0] : NULL, NULL };
	char *own = xasprintf(".heartwood/sessions/%s/audit-export.jsonl",
	    t->sid), *abs = NULL, err[128];
	int64_t count = -1;
	struct buf out, line;
	struct arena a;
	int rc;

	buf_init(&out);
	buf_init(&line);
	arena_init(&a);
	if ((rc = driver_run(argv[0], argv, NULL, 0, &out)) == 0) {
		json_get_int(json_parse(&a, out.p ? out.p : "", out.len, err,
		    sizeof err), "event_count", &count);
		abs = n ? NULL : realpath(own, NULL);
		buf_adds(&line, "Audit log exported to ");
		term_safe(&line, n ? av[0] : abs ? abs : own);
		buf_printf(&line, " (%lld records)\n", (long long)count);
		fputs(buf_cstr(&line), t->out);
	}
	fflush(t->out);
	arena_release(&a);
	buf_release(&line);
	buf_release(&out);
	free(abs);
	free(own);
	return rc < 0 ? term_fail(t) : rc;
}

static int
replay(struct term *t)
{
	t->shown = t->acted = -1;
	return t->show(t);
}

/* split cuts s at blanks into at most TERM_ARGS words; -1 if more */
static int
split(char *s, char **av)
{
	int n = 0;

	for (char *w = strtok(s, " \t"); w; w = strtok(NULL, " \t")) {
		if (n == TERM_ARGS)
			return -1;
		av[n++] = w;
	}
	return n;
}

static int
slash(struct term *t, const char *cmd, int n, char **av)
{
	if (!strcmp(cmd, "help") && !n)
		return fputs(help_text, t->out), fflush(t->out), 0;
	if (!strcmp(cmd, "status") && !n)
		return status(t);
	if (!strcmp(cmd, "permissions"))
		return permissions(t, n, av);
	if (!strcmp(cmd, "allow") && n < 2)
		return decide(t, "approve", n ? av[0] : NULL);
	if (!strcmp(cmd, "reject") && n < 2)
		return decide(t, "deny", n ? av[0] : NULL);
	if (!strcmp(cmd, "pause") && !n)
		return send(t, "pause", "{}", 0);
	if (!strcmp(cmd, "resume") && !n)
		return send(t, "resume", "{}", 1);
	if (!strcmp(cmd, "files") && n < 2)
		return inspect(t, cmd, "tree", n, av);
	if (!strcmp(cmd, "show") && n == 1)
		return inspect(t, cmd, "file", n, av);
	if (!strcmp(cmd, "changes") && n < 2)
		return inspect(t, cmd, n ? "diff" : "changes", n, av);
	if (!strcmp(cmd, "replay") && !n)
		return replay(t);
	if (!strcmp(cmd, "audit-export") && n < 2)
		return export_audit(t, n, av);
	if (!strcmp(cmd, "skills") && n < 4)
		return term_skills(t, n, av);
	if (!strcmp(cmd, "specialists") && !n)
		return tui_specialists(t->out) < 0 ? term_fail(t) : 0;
	if ((!strcmp(cmd, "sign-in") || !strcmp(cmd, "sign-out")) && !n)
		return term_sign(t, cmd);
	if ((!strcmp(cmd, "exit") || !strcmp(cmd, "quit")) && !n)
		return t->quit = 1, 0;
	return -1;
}

static int
known(const char *cmd)
{
	static const char *const names[] = { "help", "status", "permissions",
		"allow", "reject", "pause", "resume", "files", "show",
		"changes", "replay", "audit-export", "specialists", "skills",
		"sign-in", "sign-out", "exit",
		"quit", NULL };

	for (size_t i = 0; names[i]; i++)
		if (!strcmp(names[i], cmd))
			return 1;
	return 0;
}

int
term_line(struct term *t, const char *line)
{
	char *copy, *av[TERM_ARGS + 1];
	int n, rc;

	line += strspn(line, " \t");
	if (!*line)
		return 0;
	if (*line != '/')
		return chat(t, line);
	copy = xstrdup(line + 1);
	n = split(copy, av);
	if (n < 1)
		rc = -1;
	else
		rc = slash(t, av[0], n - 1, av + 1);
	if (rc == -1 && n >= 1 && known(av[0]))
		fprintf(t->err, "heartwood: wrong arguments for /%s. Type "
		    "/help.\n", av[0]);
	else if (rc == -1)
		fprintf(t->err, "Unknown command: /%s. Type /help.\n",
		    n >= 1 ? av[0] : "");
	fflush(t->err);
	free(copy);
	return rc == -1 ? HW_EXIT_USAGE : rc;
}

/* show_attention says why the session takes no command, if it does not */
static void
show_attention(struct term *t)
{
	char *why = term_attention(t->sid);
	struct buf b;

	if (!why)
		return;
	buf_init(&b);
	buf_adds(&b, "Needs attention: ");
	term_safe(&b, why);
	buf_addc(&b, '\n');
	term_put(t->out, &b);
	buf_release(&b);
	free(why);
}

int
term_plain(struct term *t, int fd)
{
	struct buf in;
	char *line;
	int rc;

	fprintf(t->out, "Heartwood · session %s · plain mode\n", t->sid);
	fputs("Type a task, or /help for /status /permissions /allow /reject "
	    "/pause /resume /files /show /changes /replay /audit-export "
	    "/specialists /exit.\n", t->out);
	if ((rc = term_render(t)) == HW_EXIT_DATA)
		return rc;	/* a session that fails verification takes nothing */
	show_attention(t);
	buf_init(&in);
	for (;;) {
		fputs("heartwood> ", t->out);
		if (fflush(t->out) != 0 || ferror(t->out)) {
			rc = hw_err_sys("cannot write 'stdout'");
			break;
		}
		rc = term_read_line(t, fd, &in, &line);
		if (rc <= 0)
			break;
		if (strlen(line) > TERM_LINE_MAX)
			fputs("heartwood: that line is too long; nothing was "
			    "sent\n", t->err);
		else
			term_line(t, line);
		free(line);
		if (t->quit)
			break;
		if (term_was_interrupted()) {
			rc = hw_err_set(HW_EXIT_INTR, "Interrupted.");
			break;
		}
	}
	buf_release(&in);
	term_unwatch(t);
	if (rc == 0)
		fputc('\n', t->out);
	if (fflush(t->out) != 0 || ferror(t->out))
		return hw_err_sys("cannot write 'stdout'");
	return rc < 0 ? -1 : 0;
}

int
term_prompt(struct term *t, const char *prompt)
{
	struct arena a;
	struct jval *proj;
	const char *st;
	int rc = chat(t, prompt);

	if (rc)
		return rc;
	arena_init(&a);
	if (!(proj = driver_project(t->sid, &a))) {
		rc = term_fail(t);
	} else {
		st = json_get_str(json_get(proj, "lifecycle"), "status");
		if (!st || (strcmp(st, "waiting-for-confirmation") &&
		    strcmp(st, "idle") && strcmp(st, "finished")))
			rc = HW_EXIT_FAIL;
	}
	arena_release(&a);
	return rc;
}

int
term_fullscreen_usable(void)
{
	const char *term = getenv("TERM");

	return isatty(0) && isatty(1) && term && *term &&
	    strcmp(term, "dumb");
}
