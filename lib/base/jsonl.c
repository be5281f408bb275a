/* jsonl.c - a bounded streaming JSON Lines reader */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

void
jsonl_init(struct jsonl *r, int fd, const char *name, size_t max)
{
	memset(r, 0, sizeof *r);
	r->fd = fd;
	r->name = name;
	r->max = max;
	r->cap = 65536;
	r->buf = xmalloc(r->cap + 1);
}

void
jsonl_release(struct jsonl *r)
{
	free(r->buf);
	r->buf = NULL;
}

static int
fill(struct jsonl *r)
{
	ssize_t n;

	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->end - r->start);
		r->end -= r->start;
		r->start = 0;
	}
	if (r->end == r->cap) {
		if (r->cap >= r->max + 1)
			return hw_err_set(HW_EXIT_DATA, "%s:%ld: line longer "
			    "than %zu bytes", r->name, r->lineno + 1, r->max);
		r->cap = r->cap * 2 > r->max + 1 ? r->max + 1 : r->cap * 2;
		r->buf = xrealloc(r->buf, r->cap + 1);
	}
	do
		n = read(r->fd, r->buf + r->end, r->cap - r->end);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return hw_err_sys("cannot read '%s'", r->name);
	if (n == 0)
		r->eof = 1;
	r->end += (size_t)n;
	return 0;
}

int
jsonl_next(struct jsonl *r, char **line, size_t *len)
{
	char *nl;
	size_t scanned = 0;

	for (;;) {
		nl = memchr(r->buf + r->start + scanned, '\n',
		    r->end - r->start - scanned);
		if (nl) {
			*line = r->buf + r->start;
			*len = (size_t)(nl - *line);
			if (*len > r->max)
				return hw_err_set(HW_EXIT_DATA, "%s:%ld: line "
				    "longer than %zu bytes", r->name,
				    r->lineno + 1, r->max);
			*nl = '\0';
			r->start += *len + 1;
			r->offset += (off_t)*len + 1;
			r->lineno++;
			return 1;
		}
		scanned = r->end - r->start;
		if (scanned > r->max)
			return hw_err_set(HW_EXIT_DATA, "%s:%ld: line longer "
			    "than %zu bytes", r->name, r->lineno + 1, r->max);
		if (r->eof) {
			r->partial = scanned > 0;
			return 0;
		}
		/* fill() moves the data to the front; rescan only new bytes */
		if (fill(r) < 0)
			return -1;
	}
}

int
jsonl_ready(struct jsonl *r)
{
	struct pollfd p = { r->fd, POLLIN, 0 };

	if (memchr(r->buf + r->start, '\n', r->end - r->start))
		return 1;
	if (r->eof)
		return 0;
	return poll(&p, 1, 0) == 1;
}

struct jval *
jsonl_parse(struct jsonl *r, struct arena *a, char *line, size_t len)
{
	return jsonl_parse_canon(r, a, line, len, NULL);
}

struct jval *
jsonl_parse_canon(struct jsonl *r, struct arena *a, char *line, size_t len,
    int *canonical)
{
	char err[128];
	struct jval *v;

	v = json_parse_canon(a, line, len, err, sizeof err, canonical);
	if (!v) {
		hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", r->name, r->lineno,
		    err);
		return NULL;
	}
	if (v->t != J_OBJECT) {
		hw_err_set(HW_EXIT_DATA, "%s:%ld: not a JSON object", r->name,
		    r->lineno);
		return NULL;
	}
	return v;
}
