/*
 * keyfile.c - the key of credential class file: an owner-only regular
 * file, never a symbolic link (hw-policy(7) CREDENTIALS)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"

#define KEY_FILE_MAX 4096	/* a key file's path, and its size */

int
printable_ascii(const char *s, int spaces)
{
	for (; *s; s++)
		if (*s < (spaces ? 0x20 : 0x21) || *s > 0x7e)
			return 0;
	return 1;
}

int
credential_file_read(const char *path, const char *what, char **key)
{
	struct stat st;
	char *v;
	ssize_t n;
	int fd;

	*key = NULL;
	if (*path != '/' || strlen(path) > KEY_FILE_MAX ||
	    !printable_ascii(path, 1))
		return hw_err_set(HW_EXIT_USAGE, "invalid %s: expected an "
		    "absolute path", what);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
	    O_NONBLOCK)) < 0)
		return hw_err_set(HW_EXIT_USAGE, "refusing %s '%s': %s", what,
		    path, errno == ELOOP ? "it is a symbolic link" :
		    strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077) ||
	    st.st_size > KEY_FILE_MAX) {
		close(fd);
		return hw_err_set(HW_EXIT_USAGE, "refusing %s '%s': it must "
		    "be a regular file of yours, at most %d bytes, that "
		    "nobody else may read or write (chmod 600)", what, path,
		    KEY_FILE_MAX);
	}
	v = xcalloc(KEY_FILE_MAX + 2, 1);
	n = read(fd, v, KEY_FILE_MAX + 1);
	close(fd);
	while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == '\r'))
		v[--n] = 0;
	if (n <= 0 || memchr(v, '\n', (size_t)n) || memchr(v, 0, (size_t)n)) {
		mem_wipe(v, KEY_FILE_MAX + 2);
		free(v);
		return hw_err_set(HW_EXIT_USAGE, "refusing %s '%s': it must "
		    "hold the key alone, on one line", what, path);
	}
	*key = v;
	return 0;
}
