/* hw-skill - Agent Skills from signed TUF sources */
#include <string.h>

#include "skill.h"

static const char usage[] =
    "usage: hw-skill tuf --metadata-dir DIR init ROOT_FILE\n"
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
	if (argc < 2)
		return skill_usage_error();
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return prog_finish("hw-skill", 0);
	}
	if (!strcmp(argv[1], "--version")) {
		puts("hw-skill " HW_VERSION);
		return prog_finish("hw-skill", 0);
	}
	if (!strcmp(argv[1], "tuf"))
		return skill_tuf_main(argc - 1, argv + 1);
	return skill_usage_error();
}
