/* hw-inspect - bounded, read-only views of the workspace */
#include <fcntl.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "inspect/inspect.h"

static const char usage[] =
    "usage: hw-inspect tree [DIR] [--depth N]\n"
    "       hw-inspect file PATH\n"
    "       hw-inspect changes [--session ID]\n"
    "       hw-inspect diff PATH [--session ID]\n"
    "       hw-inspect -h | --version\n";

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
		{ "depth", required_argument, NULL, 'd' },
		{ "session", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sid = "session-main", *verb, *arg;
	int64_t depth = 3;
	int c, n, root, rc = -1, has_depth = 0, has_sid = 0;
	struct buf b;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_seq(optarg, &depth) < 0 || depth > 1000)
				depth = 1000;	/* refused below, by its rule */
			has_depth = 1;
			break;
		case 's': sid = optarg; has_sid = 1; break;
		case 'h': fputs(usage, stdout);
			return prog_finish("hw-inspect", 0);
		case 'V': puts("hw-inspect " HW_VERSION);
			return prog_finish("hw-inspect", 0);
		default: return bad_usage();
		}
	}
	if ((n = argc - optind) < 1)
		return bad_usage();
	verb = argv[optind];
	arg = n > 1 ? argv[optind + 1] : NULL;
	if (!strcmp(verb, "tree") ? n > 2 || has_sid :
	    !strcmp(verb, "file") ? n != 2 || has_sid || has_depth :
	    !strcmp(verb, "changes") ? n != 1 || has_depth :
	    !strcmp(verb, "diff") ? n != 2 || has_depth : 1)
		return bad_usage();
	if ((root = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		hw_err_sys("cannot open '.'");
		return prog_fail("hw-inspect");
	}
	buf_init(&b);
	if (!strcmp(verb, "tree"))
		rc = inspect_tree(root, arg ? arg : ".", (int)depth, &b);
	else if (!strcmp(verb, "file"))
		rc = inspect_file(root, arg, &b);
	else if (!strcmp(verb, "changes"))
		rc = inspect_changes(root, sid, &b);
	else
		rc = inspect_diff(root, arg, sid, &b);
	close(root);
	if (rc == 0)
		fwrite(b.p, 1, b.len, stdout);
	buf_release(&b);
	return rc < 0 ? prog_fail("hw-inspect") : prog_finish("hw-inspect", 0);
}
