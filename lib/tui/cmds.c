/* cmds.c - heartwood's subcommands for scripts */
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

static int
is(const char *s, const char *a, const char *b)
{
	return !strcmp(s, a) || (b && !strcmp(s, b));
}

/* files: files list [DIR] [--depth N] | files show FILE */
static int
files(int n, char **av)
{
	char *argv[] = { "hw-inspect", "tree", NULL, NULL, NULL, NULL };
	int k = 2;

	if (n == 3 && !strcmp(av[1], "show")) {
		argv[1] = "file";
		argv[2] = av[2];
	} else if (n >= 2 && !strcmp(av[1], "list") && n <= 5) {
		for (int i = 2; i < n; i++) {
			if (!strcmp(av[i], "--depth") && i + 1 < n) {
				argv[k++] = av[i++];
				argv[k++] = av[i];
			} else if (av[i][0] != '-' && k == 2) {
				argv[k++] = av[i];
			} else {
				return -2;
			}
		}
	} else {
		return -2;
	}
	return term_inspect(stdout, argv);
}

static int
changes(const char *sid, int n, char **av)
{
	char *argv[] = { "hw-inspect", n == 2 ? "diff" : "changes",
		n == 2 ? av[1] : "--session", n == 2 ? "--session" :
		(char *)sid, n == 2 ? (char *)sid : NULL, NULL };

	return n > 2 ? -2 : term_inspect(stdout, argv);
}

/*
 * plan: doctor --plan | init, then [--interface I] [--port N] from
 * av[k] on
 */
static int
plan(int n, char **av, int k, int init)
{
	const char *iface = "terminal";
	long port = 8767;
	char *end;

	for (; k < n; k++) {
		if (!strcmp(av[k], "--interface") && k + 1 < n &&
		    (!strcmp(av[k + 1], "terminal") ||
		    !strcmp(av[k + 1], "web") ||
		    !strcmp(av[k + 1], "notebook"))) {
			iface = av[++k];
		} else if (!strcmp(av[k], "--port") && k + 1 < n) {
			port = strtol(av[++k], &end, 10);
			if (*end || end == av[k] || port < 1 || port > 65535)
				return -2;
		} else {
			return -2;
		}
	}
	return term_plan(stdout, iface, (int)port, init);
}

int
term_command(const char *sid, int n, char **av)
{
	char *mode[] = { "hw-agent", "mode", n > 2 ? av[2] : NULL, NULL };
	char *verify[] = { "hw-audit", "verify", "--session", (char *)sid,
		NULL };
	char *export[] = { "hw-audit", "export", "--session", (char *)sid,
		"--output", n > 3 ? av[3] : NULL, NULL };
	char *replay[] = { "hw-session", "replay", (char *)sid, NULL };
	const char *v = av[0];

	if (!strcmp(v, "doctor") && (n == 1 || (n == 2 &&
	    !strcmp(av[1], "--json"))))
		return term_doctor(stdout, n == 2);
	if (!strcmp(v, "doctor") && n >= 2 && !strcmp(av[1], "--plan"))
		return plan(n, av, 2, 0);
	if (!strcmp(v, "init"))
		return plan(n, av, 1, 1);
	if (!strcmp(v, "actions") && (n == 1 || (n == 3 &&
	    !strcmp(av[1], "set"))))
		return driver_exec("hw-agent", mode);
	if (!strcmp(v, "audit") && n == 2 && !strcmp(av[1], "verify"))
		return driver_exec("hw-audit", verify);
	if (!strcmp(v, "audit") && n == 4 && !strcmp(av[1], "export") &&
	    !strcmp(av[2], "--output"))
		return driver_exec("hw-audit", export);
	if (is(v, "allow", "approve") && n <= 2)
		return driver_decide(sid, "approve", n == 2 ? av[1] : NULL);
	if (is(v, "reject", "deny") && n <= 2)
		return driver_decide(sid, "deny", n == 2 ? av[1] : NULL);
	if (is(v, "pause", NULL) && n == 1)
		return driver_command(sid, "pause", "{}");
	if (is(v, "resume", NULL) && n == 1)
		return driver_resume(sid);
	if (is(v, "replay", NULL) && n == 1)
		return driver_exec("hw-session", replay);
	if (is(v, "specialists", NULL) && n == 1)
		return tui_specialists(stdout);
	if (is(v, "specialists", NULL) && n == 2 && !strcmp(av[1], "--json"))
		return tui_specialists_json(stdout);
	if (is(v, "files", NULL))
		return files(n, av);
	if (is(v, "changes", NULL))
		return changes(sid, n, av);
	return -2;
}
