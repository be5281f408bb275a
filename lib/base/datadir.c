/* datadir.c - where the running program is, and its data directory */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include "base/base.h"

static int
is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *
self_dir(void)
{
	char p[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", p, sizeof p - 1);
	char *slash;

	if (n <= 0)
		return NULL;
	p[n] = '\0';
	if (!(slash = strrchr(p, '/')))
		return NULL;
	*slash = '\0';
	return xstrdup(*p ? p : "/");
}

char *
datadir_path(void)
{
	const char *env = getenv("HW_DATADIR");
	char *dir, *up, *slash, *installed, *tree;

	if (env && *env)
		return xstrdup(env);
	if (!(dir = self_dir())) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot find the data "
		    "directory: '/proc/self/exe' cannot be read (set "
		    "HW_DATADIR)");
		return NULL;
	}
	up = xstrdup(dir);
	if ((slash = strrchr(up, '/')))
		*slash = '\0';		/* BINDIR/.., "" for "/" */
	installed = xasprintf("%s/share/heartwood", up);
	free(up);
	tree = path_join(dir, "share");
	free(dir);
	if (!is_dir(installed) && is_dir(tree)) {
		free(installed);
		return tree;
	}
	free(tree);
	return installed;
}
