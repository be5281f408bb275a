/* bundle.c - hw-model bundle inspect, export and import */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"
#define MODELS ".heartwood/models"

static const char bundle_usage[] =
    "usage: hw-model bundle inspect BUNDLE\n"
    "       hw-model bundle export MODEL-ID BUNDLE\n"
    "       hw-model bundle import BUNDLE --approve MANIFEST-SHA256\n";

int
manage_bundle(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "approve", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *approve = NULL, *verb;
	struct jval *r = NULL;
	struct arena a;
	int c, n;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'a')
			approve = optarg;
		else if (c == 'h')
			return fputs(bundle_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(bundle_usage);
	}
	n = argc - optind;
	verb = n > 0 ? argv[optind] : "";
	if (!((!strcmp(verb, "inspect") && n == 2 && !approve) ||
	    (!strcmp(verb, "export") && n == 3 && !approve) ||
	    (!strcmp(verb, "import") && n == 2 && approve)))
		return manage_usage_err(bundle_usage);
	manage_catch_signals();
	/* libarchive writes DOS times in local time: fix the zone */
	setenv("TZ", "UTC0", 1);
	tzset();
	arena_init(&a);
	if (!strcmp(verb, "inspect"))
		r = bundle_inspect(argv[optind + 1], &a);
	else if (!strcmp(verb, "export"))
		r = bundle_export(MODELS, argv[optind + 1], argv[optind + 2],
		    &manage_cancelled, &a);
	else
		r = bundle_import(argv[optind + 1], approve, MODELS,
		    &manage_cancelled, &a);
	if (r)
		manage_print_json(r);
	arena_release(&a);
	return r ? prog_finish(PROG, 0) : prog_fail(PROG);
}
