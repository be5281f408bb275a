/*
 * feed.h - the corpus check the stream assemblers' unit tests share
 * (sse_test, anthropic_test, responses_test): each stream is fed whole,
 * split in two at every byte offset and one byte at a time, and every
 * feeding must give the same reply, the same deltas and the same outcome
 * as the expected one.
 */
#ifndef FEED_H
#define FEED_H

#include <stdlib.h>

#include "agent/provider.h"
#include "tap.h"

struct stream {
	const char *name, *text, *want;
};

/* the route the streams are read as (ROUTE_OPENAI, the default, ...) */
static int feed_route = ROUTE_OPENAI;

struct seen {
	struct buf text;
	size_t calls;
};

static void
on_delta(void *ctx, const char *s, size_t n)
{
	struct seen *d = ctx;

	buf_add(&d->text, s, n);
	d->calls++;
}

/*
 * feed_run feeds p in pieces: piece i ends at cuts[i] (the last at n) and
 * returns "rc CODE deltas=N streamed=TEXT REPLY" (malloc'd).
 */
static char *
feed_run(const char *p, size_t n, const size_t *cuts, size_t ncuts)
{
	struct model_reply m;
	struct model_stream st;
	struct seen d = { { 0 }, 0 };
	struct buf out;
	size_t i, at = 0, end;
	int rc = 0;

	model_reply_init(&m);
	buf_init(&d.text);
	buf_init(&out);
	model_stream_init(&st, &m, on_delta, &d);
	st.provider = feed_route;
	for (i = 0; i <= ncuts && rc == 0; i++) {
		end = i < ncuts ? cuts[i] : n;
		rc = model_stream_feed(&st, p + at, end - at);
		at = end;
	}
	if (rc == 0)
		rc = model_stream_end(&st);
	buf_printf(&out, "%d %s deltas=%zu streamed=", rc, st.code ? st.code :
	    "-", d.calls);
	json_canon_str(&out, d.text.p ? d.text.p : "", d.text.len);
	buf_addc(&out, ' ');
	if (rc == 0)
		model_reply_json(&out, &m);
	model_stream_release(&st);
	model_reply_release(&m);
	buf_release(&d.text);
	return buf_cstr(&out);
}

/* splits: s whole, split in two at each offset, one byte at a time */
static void
splits(const struct stream *s)
{
	size_t n = strlen(s->text), k, *cuts, bad = 0, first = 0;
	char *whole, *got;

	whole = feed_run(s->text, n, NULL, 0);
	is_str(whole, s->want, "%s: whole", s->name);
	for (k = 0; k <= n; k++) {
		got = feed_run(s->text, n, &k, 1);
		if (strcmp(got, whole) && !bad++)
			first = k;
		free(got);
	}
	ok(!bad, "%s: split in two at each of %zu offsets (%zu differ, "
	    "first at %zu)", s->name, n + 1, bad, first);
	cuts = xcalloc(n + 1, sizeof *cuts);
	for (k = 0; k < n; k++)
		cuts[k] = k;
	got = feed_run(s->text, n, cuts, n);
	is_str(got, whole, "%s: one byte at a time", s->name);
	free(got);
	free(cuts);
	free(whole);
}

#endif
