/* bundle.c - hw-model bundle inspect, export and import */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"
#define MODELS ".heartwood/models"

static const char bundle_usage[] =
    "usage: hw-model bundle inspect BUNDLE\n"
    "       hw-model bundle export MODEL-ID BUNDLE "
    "[--progress auto|bar|json|none]\n"
    "       hw-model bundle import BUNDLE --approve MANIFEST-SHA256\n"
    "                [--progress auto|bar|json|none]\n";

int
manage_bundle(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "approve", required_argument, NULL, 'a' },
		{ "progress", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *approve = NULL, *verb;
	struct progress pr = { isatty(2) ? PROGRESS_BAR : PROGRESS_NONE, 0 };
	struct jval *r = NULL;
	struct arena a;
	model_progress_fn *fn;
	int c, n, shown = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'a')
			approve = optarg;
		else if (c == 'p' && manage_progress_parse(optarg,
		    &pr.mode) == 0)
			shown = 1;
		else if (c == 'h')
			return fputs(bundle_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(bundle_usage);
	}
	n = argc - optind;
	verb = n > 0 ? argv[optind] : "";
	if (!((!strcmp(verb, "inspect") && n == 2 && !approve && !shown) ||
	    (!strcmp(verb, "export") && n == 3 && !approve) ||
	    (!strcmp(verb, "import") && n == 2 && approve)))
		return manage_usage_err(bundle_usage);
	fn = pr.mode == PROGRESS_NONE ? NULL : manage_on_progress;
	manage_catch_signals();
	/* libarchive writes DOS times in local time: fix the zone */
	setenv("TZ", "UTC0", 1);
	tzset();
	arena_init(&a);
	if (!strcmp(verb, "inspect"))
		r = bundle_inspect(argv[optind + 1], &a);
	else if (!strcmp(verb, "export"))
		r = bundle_export(MODELS, argv[optind + 1], argv[optind + 2],
		    &manage_cancelled, fn, &pr, &a);
	else
		r = bundle_import(argv[optind + 1], approve, MODELS,
		    &manage_cancelled, fn, &pr, &a);
	if (r)
		manage_print_json(r);
	arena_release(&a);
	return r ? prog_finish(PROG, 0) : prog_fail(PROG);
}
