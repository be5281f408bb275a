/*
 * sse.c - an incremental text/event-stream parser.
 *
 * It keeps the unterminated line and the pending event's data between
 * feeds, so a stream split anywhere (in a CRLF, in a UTF-8 sequence, in
 * the BOM) gives the same events as the whole stream.
 */
#include <string.h>

#include "agent/agent.h"

void
sse_init(struct sse *s,
    int (*on_event)(void *ctx, const char *data, size_t n), void *ctx)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->line);
	buf_init(&s->data);
	s->first = 1;
	s->on_event = on_event;
	s->ctx = ctx;
}

void
sse_release(struct sse *s)
{
	buf_release(&s->line);
	buf_release(&s->data);
}

static int
too_long(struct sse *s)
{
	s->failed = 1;
	return hw_err_set(HW_EXIT_DATA, "an event-stream line is longer than "
	    "%u bytes", SSE_LINE_MAX);
}

static int
dispatch(struct sse *s)
{
	int rc = 0;

	if (s->ndata)
		rc = s->on_event(s->ctx, buf_cstr(&s->data), s->data.len);
	buf_clear(&s->data);
	s->ndata = 0;
	if (rc < 0)
		s->failed = 1;
	return rc < 0 ? -1 : 0;
}

/* field handles one complete line l of n bytes (without its end) */
static int
field(struct sse *s, const char *l, size_t n)
{
	const char *colon;
	size_t fn;

	if (s->first && n >= 3 && !memcmp(l, "\xef\xbb\xbf", 3))
		l += 3, n -= 3;
	s->first = 0;
	if (n == 0)
		return dispatch(s);
	if (l[0] == ':')
		return 0;
	colon = memchr(l, ':', n);
	fn = colon ? (size_t)(colon - l) : n;
	if (fn != 4 || memcmp(l, "data", 4))
		return 0;
	l += fn, n -= fn;
	if (n)
		l++, n--;
	if (n && *l == ' ')
		l++, n--;
	if (s->data.len + n + 1 > SSE_LINE_MAX)
		return too_long(s);
	if (s->ndata++)
		buf_addc(&s->data, '\n');
	buf_add(&s->data, l, n);
	return 0;
}

int
sse_feed(struct sse *s, const char *p, size_t n)
{
	const char *e = p + n, *q;

	if (s->failed)
		return -1;
	while (p < e) {
		if (s->cr && *p == '\n') {	/* the LF of a CRLF */
			s->cr = 0;
			p++;
			continue;
		}
		s->cr = 0;
		for (q = p; q < e && *q != '\n' && *q != '\r'; q++)
			;
		if (s->line.len + (size_t)(q - p) > SSE_LINE_MAX)
			return too_long(s);
		buf_add(&s->line, p, (size_t)(q - p));
		if (q == e)
			break;
		s->cr = *q == '\r';
		p = q + 1;
		if (field(s, s->line.p ? s->line.p : "", s->line.len) < 0)
			return -1;
		buf_clear(&s->line);
	}
	return 0;
}

int
sse_end(struct sse *s)
{
	int dropped;

	if (s->failed)
		return -1;
	dropped = s->line.len > 0 || s->ndata > 0;
	buf_clear(&s->line);
	buf_clear(&s->data);
	s->ndata = 0;
	return dropped;
}
