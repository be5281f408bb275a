/* heartwood - the researcher's terminal, and its subcommands for scripts */
#include <string.h>
#include <unistd.h>

#include "hw.h"

static const char usage[] =
    "usage: heartwood [--session-id ID] [--plain] [--prompt TEXT]\n"
    "       heartwood [--session-id ID] audit verify | export --output PATH\n"
    "       heartwood actions [set ask-every-time | auto-approve-low-risk]\n"
    "       heartwood doctor [--json]\n"
    "       heartwood -h | --version\n";

static int
bad_usage(void)
{
	fputs(usage, stderr);
	return HW_EXIT_USAGE;
}

/* sub runs a subcommand for scripts through its program */
static int
sub(const char *sid, int n, char **av)
{
	char *mode[] = { "hw-agent", "mode", n > 2 ? av[2] : NULL, NULL };
	char *verify[] = { "hw-audit", "verify", "--session", (char *)sid,
		NULL };
	char *export[] = { "hw-audit", "export", "--session", (char *)sid,
		"--output", n > 3 ? av[3] : NULL, NULL };

	if (!strcmp(av[0], "doctor") && (n == 1 || (n == 2 &&
	    !strcmp(av[1], "--json"))))
		return term_doctor(stdout, n == 2);
	if (!strcmp(av[0], "actions") && (n == 1 || (n == 3 &&
	    !strcmp(av[1], "set"))))
		return driver_exec("hw-agent", mode);
	if (!strcmp(av[0], "audit") && n == 2 && !strcmp(av[1], "verify"))
		return driver_exec("hw-audit", verify);
	if (!strcmp(av[0], "audit") && n == 4 && !strcmp(av[1], "export") &&
	    !strcmp(av[2], "--output"))
		return driver_exec("hw-audit", export);
	return bad_usage();
}

int
main(int argc, char **argv)
{
	const char *sid = "session-main", *prompt = NULL;
	struct term t;
	int i, plain = 0, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return fputs(usage, stdout), prog_finish("heartwood", 0);
		if (!strcmp(argv[i], "--version"))
			return puts("heartwood " HW_VERSION),
			    prog_finish("heartwood", 0);
		if (!strcmp(argv[i], "--plain"))
			plain = 1;
		else if (!strcmp(argv[i], "--session-id") && i + 1 < argc)
			sid = argv[++i];
		else if ((!strcmp(argv[i], "--prompt") || !strcmp(argv[i],
		    "-p")) && i + 1 < argc)
			prompt = argv[++i];
		else
			return bad_usage();
	}
	if (!valid_session_id(sid)) {
		fprintf(stderr, "heartwood: invalid session id '%s'\n", sid);
		return HW_EXIT_USAGE;
	}
	if (i < argc) {
		if (plain || prompt)
			return bad_usage();
		rc = sub(sid, argc - i, argv + i);
		return prog_finish("heartwood", rc < 0 ?
		    prog_fail("heartwood") : rc);
	}
	term_init(&t, sid, stdout, stderr);
	if (prompt) {
		rc = term_prompt(&t, prompt);
		return prog_finish("heartwood", rc < 0 ?
		    prog_fail("heartwood") : rc);
	}
	if (!plain && !isatty(0))
		return fputs(usage, stdout), prog_finish("heartwood", 0);
	if (!plain && term_fullscreen_usable())
		fputs("heartwood: full-screen mode is not available yet; "
		    "using plain mode\n", stderr);
	rc = term_plain(&t, 0);
	return prog_finish("heartwood", rc < 0 ? prog_fail("heartwood") : rc);
}
