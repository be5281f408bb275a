/* hw-agent - the agent loop: continue a session to its next stable point */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"

static const char usage[] =
    "usage: hw-agent run ID [--stream]\n"
    "       hw-agent mode [ask-every-time | auto-approve-low-risk]\n"
    "       hw-agent -h | --version\n";

static int
cmd_run(const char *id, struct agent_opts *o)
{
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *cfg;
	int rc = -1;

	arena_init(&a);
	if (session_init(&s, &p, id) < 0 || project_open(&p, 0) < 0)
		goto out;
	if (session_exists(&s) != 1) {
		hw_err_set(HW_EXIT_NOINPUT, "no session '%s'", id);
		goto out;
	}
	if (config_load(&a, &cfg) < 0)
		goto out;
	o->auto_low_risk = !strcmp(config_mode(cfg), "confirm-risky");
	if (config_mode_unconfirmed(cfg))
		fprintf(stderr, "hw-agent: warning: " CONFIG_FILE " asks for "
		    "auto-approve-low-risk, which you have not chosen on this "
		    "machine: every action set waits for your review "
		    "('hw-agent mode auto-approve-low-risk' chooses it)\n");
	rc = agent_run(&s, o);
out:
	arena_release(&a);
	session_release(&s);
	project_release(&p);
	return rc;
}

/* cmd_mode prints the review mode, after setting it when one is given */
static int
cmd_mode(const char *mode)
{
	struct arena a;
	struct jval *cfg;
	const char *m;

	if (mode && strcmp(mode, "ask-every-time") &&
	    strcmp(mode, "auto-approve-low-risk"))
		return hw_err_set(HW_EXIT_USAGE, "unknown mode '%s': want "
		    "ask-every-time or auto-approve-low-risk", mode);
	if (mode && actions_set_mode(!strcmp(mode, "ask-every-time") ?
	    "always-confirm" : "confirm-risky") < 0)
		return -1;
	arena_init(&a);
	if (config_load(&a, &cfg) < 0) {
		arena_release(&a);
		return -1;
	}
	m = config_mode(cfg);
	printf("{\"confirmation_mode\":\"%s\",\"mode\":\"%s\"}\n", m,
	    !strcmp(m, "confirm-risky") ? "auto-approve-low-risk" :
	    "ask-every-time");
	arena_release(&a);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stream", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct agent_opts o = { 0, 0, AGENT_ITERATIONS };
	const char *it = getenv("HW_AGENT_MAX_ITERATIONS");
	char *end;
	const char *verb;
	int c, n, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': o.stream = 1; break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-agent", 0);
		case 'V': puts("hw-agent " HW_VERSION);
			return prog_finish("hw-agent", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	if (it && *it) {
		o.max_iterations = (int)strtol(it, &end, 10);
		if (*end || o.max_iterations < 1 || o.max_iterations > 10000) {
			fprintf(stderr, "hw-agent: invalid "
			    "HW_AGENT_MAX_ITERATIONS '%s': want 1 to 10000\n",
			    it);
			return HW_EXIT_USAGE;
		}
	}
	n = argc - optind;
	verb = n > 0 ? argv[optind] : "";
	if (!strcmp(verb, "run") && n == 2)
		rc = cmd_run(argv[optind + 1], &o);
	else if (!strcmp(verb, "mode") && n <= 2 && !o.stream)
		rc = cmd_mode(n == 2 ? argv[optind + 1] : NULL);
	else
		return (fputs(usage, stderr), HW_EXIT_USAGE);
	rc = rc < 0 ? prog_fail("hw-agent") : 0;
	return prog_finish("hw-agent", rc);
}
