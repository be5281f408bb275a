/* heartwood - the researcher's terminal, and its subcommands for scripts */
#include <string.h>
#include <unistd.h>

#include "tui/tui.h"

static const char usage[] =
    "usage: heartwood [--session-id ID] [--plain] [--prompt TEXT]\n"
    "       heartwood --web [--host ADDR] [--port N]\n"
    "       heartwood [--session-id ID] audit verify | export --output PATH\n"
    "       heartwood [--session-id ID] allow | approve | reject | deny [GROUP]\n"
    "       heartwood [--session-id ID] pause | resume | replay\n"
    "       heartwood files list [DIR] [--depth N] | files show FILE\n"
    "       heartwood [--session-id ID] changes [FILE]\n"
    "       heartwood specialists [--json]\n"
    "       heartwood actions [set ask-every-time | auto-approve-low-risk]\n"
    "       heartwood doctor [--json]\n"
    "       heartwood doctor --plan [--interface terminal | web | notebook]"
    " [--port N]\n"
    "       heartwood init [--interface terminal | web | notebook] "
    "[--port N]\n"
    "       heartwood -h | --version\n";

static int
bad_usage(void)
{
	fputs(usage, stderr);
	return HW_EXIT_USAGE;
}

/* web runs the browser gateway, hw-serve, which prints its URL */
static int
web(const char *host, const char *port)
{
	char *argv[6] = { "hw-serve" };
	int n = 1;

	if (host)
		argv[n++] = "--host", argv[n++] = (char *)host;
	if (port)
		argv[n++] = "--port", argv[n++] = (char *)port;
	argv[n] = NULL;
	driver_exec("hw-serve", argv);
	return prog_finish("heartwood", prog_fail("heartwood"));
}

int
main(int argc, char **argv)
{
	const char *sid = "session-main", *prompt = NULL;
	const char *host = NULL, *port = NULL;
	struct term t;
	int i, plain = 0, rc, use_web = 0;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return fputs(usage, stdout), prog_finish("heartwood", 0);
		if (!strcmp(argv[i], "--version")) {
			puts("heartwood " HW_VERSION "\nImplemented: "
			    HW_IMPLEMENTED);
			if (HW_PLANNED[0])
				puts("Planned, not yet implemented: "
				    HW_PLANNED);
			return prog_finish("heartwood", 0);
		}
		if (!strcmp(argv[i], "--plain"))
			plain = 1;
		else if (!strcmp(argv[i], "--web"))
			use_web = 1;
		else if (!strcmp(argv[i], "--host") && i + 1 < argc)
			host = argv[++i];
		else if (!strcmp(argv[i], "--port") && i + 1 < argc)
			port = argv[++i];
		else if (!strcmp(argv[i], "--session-id") && i + 1 < argc)
			sid = argv[++i];
		else if ((!strcmp(argv[i], "--prompt") || !strcmp(argv[i],
		    "-p")) && i + 1 < argc)
			prompt = argv[++i];
		else
			return bad_usage();
	}
	if (use_web || host || port) {
		/* the browser serves every session: no other mode or option */
		if (!use_web || plain || prompt || i < argc ||
		    strcmp(sid, "session-main"))
			return bad_usage();
		return web(host, port);
	}
	if (!valid_session_id(sid)) {
		fprintf(stderr, "heartwood: invalid session id '%s'\n", sid);
		return HW_EXIT_USAGE;
	}
	if (i < argc) {
		if (plain || prompt)
			return bad_usage();
		if ((rc = term_command(sid, argc - i, argv + i)) == -2)
			return bad_usage();
		return prog_finish("heartwood", rc < 0 ?
		    prog_fail("heartwood") : rc);
	}
	term_init(&t, sid, stdout, stderr);
	term_catch_interrupt();
	if (prompt) {
		rc = term_prompt(&t, prompt);
		return prog_finish("heartwood", rc < 0 ?
		    prog_fail("heartwood") : rc);
	}
	if (!plain && !isatty(0))
		return fputs(usage, stdout), prog_finish("heartwood", 0);
	rc = -1;
	if (!plain && term_fullscreen_usable() &&
	    (rc = term_fullscreen(&t)) < 0 && hw_err_code() != HW_EXIT_INTR)
		fprintf(stderr, "heartwood: %s; using plain mode\n",
		    hw_err_msg());
	if (rc < 0 && hw_err_code() != HW_EXIT_INTR)
		rc = term_plain(&t, 0);
	if (rc < 0 && hw_err_code() == HW_EXIT_INTR)
		return fputs("\nInterrupted.\n", stderr),
		    prog_finish("heartwood", HW_EXIT_INTR);
	return prog_finish("heartwood", rc < 0 ? prog_fail("heartwood") : rc);
}
