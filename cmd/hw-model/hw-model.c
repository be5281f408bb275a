/* hw-model - models for heartwood: the replay model and managed models */
#include <getopt.h>
#include <string.h>

#include "catalog.h"
#include "manage.h"
#include "replay.h"

static const char usage[] =
    "usage: hw-model serve --replay SCRIPT [--port N]\n"
    "                [--chunk whole|llama|vllm|interleaved|bytes:N]\n"
    "                [--crlf] [--comments] [--exit-when-done]\n"
    "                [--served-model-name NAME]\n"
    "       hw-model inspect OWNER/NAME [--revision REV]\n"
    "                [--runtime llama-cpp|vllm]\n"
    "       hw-model download PLAN [--model-id ID]\n"
    "                [--progress auto|bar|json|none]\n"
    "       hw-model download CATALOG-ID [--catalog FILE] [--snapshots FILE]\n"
    "                [--progress auto|bar|json|none]\n"
    "       hw-model import PATH --source-repository OWNER/NAME\n"
    "                --source-revision COMMIT --license-posture TEXT\n"
    "                [--context-window N] [--progress auto|bar|json|none]\n"
    "       hw-model bundle inspect BUNDLE\n"
    "       hw-model bundle export MODEL-ID BUNDLE\n"
    "       hw-model bundle import BUNDLE --approve MANIFEST-SHA256\n"
    "       hw-model connections [--json]\n"
    "       hw-model discover CONNECTION [--refresh]\n"
    "       hw-model subscription sign-in|status|sign-out\n"
    "       hw-model catalog [--catalog FILE] [--snapshots FILE] [--json]\n"
    "       hw-model recommend [--gpus N] [--json]\n"
    "       hw-model plan [MODEL-ID] [--json]\n"
    "       hw-model select MODEL-ID [--port N]\n"
    "       hw-model run [MODEL-ID] [--runtime llama-cpp|vllm] [--port N]\n"
    "                [--startup-timeout SECONDS] [--slurm [--yes]]\n"
    "       hw-model -h | --version\n";

/* the catalog verbs (catalog.h) and the runtime's (manage.h) */
static const struct {
	const char *name;
	int (*run)(int, char **);
} verbs[] = {
	{ "connections", verb_connections }, { "discover", verb_discover },
	{ "catalog", verb_catalog }, { "recommend", verb_recommend },
	{ "plan", manage_plan }, { "select", manage_select },
	{ "run", manage_run }, { "subscription", verb_subscription },
};

static int
bad_usage(void)
{
	fputs(usage, stderr);
	return HW_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "replay", required_argument, NULL, 'r' },
		{ "port", required_argument, NULL, 'p' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "crlf", no_argument, NULL, 'C' },
		{ "comments", no_argument, NULL, 'k' },
		{ "exit-when-done", no_argument, NULL, 'x' },
		{ "served-model-name", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct replay_serve_opts o = { .prog = "hw-model" };
	int64_t port = 0;
	int c;

	if (argc > 1 && !strcmp(argv[1], "inspect"))
		return manage_inspect(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "download"))
		return manage_download(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "import"))
		return manage_import(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "bundle"))
		return manage_bundle(argc - 1, argv + 1);
	for (size_t i = 0; argc > 1 && i < sizeof verbs / sizeof verbs[0]; i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].run(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'r': o.script = optarg; break;
		case 'p':
			if (parse_seq(optarg, &port) < 0 || port > 65535) {
				fprintf(stderr, "hw-model: invalid port '%s': "
				    "expected 0 to 65535\n", optarg);
				return HW_EXIT_USAGE;
			}
			break;
		case 'c':
			if (replay_style_parse(&o.style, optarg) < 0)
				return prog_fail("hw-model");
			break;
		case 'C': o.style.crlf = 1; break;
		case 'k': o.style.comments = 1; break;
		case 'x': o.exit_when_done = 1; break;
		case 'n': o.served_name = optarg; break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-model", 0);
		case 'V': puts("hw-model " HW_VERSION);
			return prog_finish("hw-model", 0);
		default: return bad_usage();
		}
	}
	if (argc - optind != 1 || strcmp(argv[optind], "serve") || !o.script)
		return bad_usage();
	o.port = (int)port;
	if (replay_serve(&o, stdout) < 0)
		return prog_fail("hw-model");
	return prog_finish("hw-model", 0);
}
