/* hw-skill - Agent Skills from signed TUF sources */
#include <getopt.h>
#include <string.h>

#include "skill.h"

static const char usage[] =
    "usage: hw-skill validate DIR\n"
    "       hw-skill digest DIR\n"
    "       hw-skill local inspect PATH\n"
    "       hw-skill local install PATH --expected-tree-sha256 HEX\n"
    "       hw-skill sources\n"
    "       hw-skill refresh [SOURCE]\n"
    "       hw-skill inspect NAME [--source ID]\n"
    "       hw-skill install NAME --expected-tree-sha256 HEX [--source ID]\n"
    "       hw-skill list\n"
    "       hw-skill remove NAME\n"
    "       hw-skill tuf --metadata-dir DIR init ROOT_FILE\n"
    "       hw-skill tuf --metadata-url URL --metadata-dir DIR refresh\n"
    "       hw-skill tuf --metadata-url URL --metadata-dir DIR\n"
    "           --target-name PATH ... --target-dir DIR\n"
    "           --target-base-url URL download\n"
    "       hw-skill -h | --version\n";

int
skill_usage_error(void)
{
	fputs(usage, stderr);
	return HW_EXIT_USAGE;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "expected-tree-sha256", required_argument, NULL, 'e' },
		{ "source", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *expected = NULL, *source = NULL, *verb, *sub;
	int c, n;

	if (argc >= 2 && !strcmp(argv[1], "tuf"))
		return skill_tuf_main(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'e': expected = optarg; break;
		case 's': source = optarg; break;
		case 'h': fputs(usage, stdout);
			return prog_finish("hw-skill", 0);
		case 'V': puts("hw-skill " HW_VERSION);
			return prog_finish("hw-skill", 0);
		default: return skill_usage_error();
		}
	}
	if ((n = argc - optind) < 1)
		return skill_usage_error();
	verb = argv[optind];
	sub = n > 1 ? argv[optind + 1] : "";
	if (!strcmp(verb, "install") && n == 2 && expected)
		return skill_catalog_main(sub, expected, source);
	if (!strcmp(verb, "local") && !strcmp(sub, "install") && n == 3 &&
	    expected && !source)
		return skill_install_main(argv[optind + 2], expected);
	if (!strcmp(verb, "inspect") && n == 2 && !expected)
		return skill_inspect_main(sub, source);
	if (expected || source)
		return skill_usage_error();
	if (!strcmp(verb, "sources") && n == 1)
		return skill_sources_main();
	if (!strcmp(verb, "refresh") && n <= 2)
		return skill_refresh_main(n == 2 ? sub : NULL);
	if ((!strcmp(verb, "validate") || !strcmp(verb, "digest")) && n == 2)
		return skill_validate_main(sub,
		    !strcmp(verb, "digest") ? 1 : 2);
	if (!strcmp(verb, "local") && !strcmp(sub, "inspect") && n == 3)
		return skill_validate_main(argv[optind + 2], 0);
	if (!strcmp(verb, "list") && n == 1)
		return skill_list_main();
	if (!strcmp(verb, "remove") && n == 2)
		return skill_remove_main(sub);
	return skill_usage_error();
}
