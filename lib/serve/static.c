/*
 * static.c - the browser UI's files: share/www, with the index for any
 * path without an extension and the base path written into it, and
 * Debian's browser libraries from where the packages installed them
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/gw.h"

#define STATIC_MAX (8u << 20)
#define BASE_MARK "content=\"__HW_BASE__\""

static const char *
ctype_of(const char *path)
{
	static const char *const t[][2] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
		{ ".png", "image/png" },
		{ ".json", "application/json" },
		{ ".txt", "text/plain; charset=utf-8" },
	};
	const char *dot = strrchr(path, '.');
	size_t i;

	for (i = 0; dot && i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(dot, t[i][0]))
			return t[i][1];
	return "application/octet-stream";
}

/* read_under reads root/rel, a regular file reached without symlinks */
static int
read_under(const char *root, const char *rel, struct buf *b)
{
	int dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	char part[256];
	const char *p = rel;
	size_t n;
	struct stat st;
	int rc = -1;

	while (dfd >= 0) {
		n = strcspn(p, "/");
		if (!n || n >= sizeof part)
			break;
		memcpy(part, p, n);
		part[n] = '\0';
		fd = openat(dfd, part, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    O_NONBLOCK | (p[n] ? O_DIRECTORY : 0));
		close(dfd);
		dfd = -1;
		if (fd < 0)
			break;
		if (!p[n]) {
			if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
				rc = read_fd(fd, rel, STATIC_MAX, b);
			close(fd);
			break;
		}
		dfd = fd;
		p += n + 1;
	}
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static enum MHD_Result
index_page(struct req *r)
{
	struct buf b, out;
	char *at;
	enum MHD_Result ret;

	buf_init(&b);
	buf_init(&out);
	if (read_under(r->gw->web_root, "index.html", &b) < 0) {
		buf_release(&b);
		return reply_error(r, 404, NULL, "the browser UI is not "
		    "installed");
	}
	buf_addc(&b, '\0');
	if ((at = strstr(b.p, BASE_MARK))) {
		buf_add(&out, b.p, (size_t)(at - b.p));
		buf_printf(&out, "content=\"%s\"", r->gw->g.base);
		buf_adds(&out, at + strlen(BASE_MARK));
	} else {
		buf_adds(&out, b.p);
	}
	ret = reply(r, 200, "text/html; charset=utf-8", out.p, out.len);
	buf_release(&b);
	buf_release(&out);
	return ret;
}

enum MHD_Result
serve_static(struct req *r)
{
	const char *p = r->path + 1, *slash = strrchr(r->path, '/');
	const char *root = r->gw->web_root;
	struct buf b;
	enum MHD_Result ret;

	if (!*p || !strchr(slash, '.'))
		return index_page(r);
	/* Debian's browser libraries, where their packages put them */
	if (!strncmp(p, "lib/js/", 7)) {
		root = r->gw->lib_root;
		p += 7;
	} else if (!strncmp(p, "lib/node/", 9)) {
		root = "/usr/share/nodejs";
		p += 9;
	}
	buf_init(&b);
	if (read_under(root, p, &b) < 0)
		ret = reply_error(r, 404, NULL, "no such file");
	else
		ret = reply(r, 200, ctype_of(p), b.p ? b.p : "", b.len);
	buf_release(&b);
	return ret;
}
