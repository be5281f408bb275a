/* result.c - a tool's result: its error form and its bounded output */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "agent/tools/tools.h"

void
tool_result_init(struct tool_result *r)
{
	buf_init(&r->output);
	buf_init(&r->summary);
	r->exit_code = 0;
	r->truncated = 0;
}

void
tool_result_release(struct tool_result *r)
{
	buf_release(&r->output);
	buf_release(&r->summary);
	tool_result_init(r);
}

int
tool_error(struct tool_result *out, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	buf_clear(&out->output);
	buf_add(&out->output, s, (size_t)n);
	free(s);
	out->exit_code = 1;
	return 0;
}

const char *
risk_name(enum risk r)
{
	switch (r) {
	case RISK_LOW:
		return "LOW";
	case RISK_MEDIUM:
		return "MEDIUM";
	case RISK_HIGH:
		return "HIGH";
	default:
		return "UNKNOWN";
	}
}

/* ---- UTF-8 and bounded output ---- */

static size_t
count_nl(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += s[i] == '\n';
	return c;
}

static size_t
count_lines(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		if (s[i] == '\n')
			c++;
	if (n && s[n - 1] != '\n')
		c++;
	return c;
}

/* head_end: where a head of at most maxc characters and maxl lines ends. */
static size_t
head_end(const char *s, size_t n, size_t maxc, size_t maxl)
{
	size_t i = 0, chars = 0, nl = 0;

	while (i < n && chars < maxc && nl < maxl) {
		if (s[i] == '\n')
			nl++;
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	return i;
}

/*
 * tail_start: where a tail of at most maxc characters and maxl lines
 * begins; when the line cap stops it, the tail starts at a line start.
 */
static size_t
tail_start(const char *s, size_t n, size_t maxc, size_t maxl)
{
	size_t i = n, chars = 0, lines = n ? 1 : 0;

	while (i > 0 && chars < maxc) {
		size_t j = i - 1;

		while (j > 0 && ((unsigned char)s[j] & 0xc0) == 0x80)
			j--;
		if (s[j] == '\n' && j != n - 1) {
			if (lines + 1 > maxl)
				break;
			lines++;
		}
		i = j;
		chars++;
	}
	return i;
}

#define MARKER_RESERVE 100

int
tool_output_bound(struct buf *b, size_t max_chars, size_t max_lines,
    size_t omitted_chars, size_t omitted_lines)
{
	size_t h, t, hl, mc;
	struct buf o;

	if (!omitted_chars && utf8_count(b->p, b->len) <= max_chars &&
	    count_lines(b->p, b->len) <= max_lines)
		return 0;
	if (max_chars < 2 * MARKER_RESERVE)
		max_chars = 2 * MARKER_RESERVE;
	if (max_lines < 3)
		max_lines = 3;
	mc = (max_chars - MARKER_RESERVE) / 2;
	hl = (max_lines - 1) / 2;
	h = head_end(b->p, b->len, mc, hl);
	t = tail_start(b->p, b->len, max_chars - MARKER_RESERVE - mc,
	    max_lines - 1 - hl);
	if (t < h)
		t = h;
	buf_init(&o);
	buf_add(&o, b->p, h);
	if (h && b->p[h - 1] != '\n')
		buf_addc(&o, '\n');
	buf_printf(&o, "[... %zu lines (%zu characters) omitted ...]\n",
	    count_nl(b->p + h, t - h) + omitted_lines,
	    utf8_count(b->p + h, t - h) + omitted_chars);
	buf_add(&o, b->p + t, b->len - t);
	buf_release(b);
	*b = o;
	return 1;
}
