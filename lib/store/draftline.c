/*
 * draftline.c - a canonical draft's event line written from its own bytes,
 * with what a batch's lines share made once (store.h: draft_event_line)
 */
#include <stdint.h>
#include <string.h>

#include "store/store.h"

/* put_digits appends n >= 0 in decimal, with at least width digits */
static void
put_digits(struct buf *b, int64_t n, int width)
{
	char d[24], *p = d + sizeof d;
	uint64_t u = (uint64_t)n;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	while (d + sizeof d - p < width)
		*--p = '0';
	buf_add(b, p, (size_t)(d + sizeof d - p));
}

/* note: the value of member i, from from to out's end, in at (if any) */
static void
note(struct event_at *at, int i, const struct buf *out, size_t base,
    size_t from)
{
	if (at) {
		at->off[i] = from - base;
		at->len[i] = out->len - from;
	}
}

/* put_val: the key (with its comma and colon), then member i's value */
static void
put_val(struct buf *out, struct event_at *at, int i, size_t base,
    const char *key, size_t kn, const char *p, size_t n)
{
	size_t v;

	buf_add(out, key, kn);
	v = out->len;
	buf_add(out, p, n);
	note(at, i, out, base, v);
}
#define PUT_VAL(out, at, i, base, key, p, n) \
	put_val((out), (at), (i), (base), (key), sizeof(key) - 1, (p), (n))

void
event_fixed_init(struct event_fixed *fx, const char *sid, const char *now,
    const char *prev)
{
	char id[RECORD_ID_MAX];
	size_t ns = strlen(sid);

	fx->sid = sid;
	buf_clear(&fx->idp);
	buf_clear(&fx->now);
	buf_clear(&fx->sidq);
	buf_clear(&fx->prev);
	/* as record_id writes it, when it writes it without printf */
	if (ns + sizeof "-event-" - 1 + 20 < RECORD_ID_MAX) {
		memcpy(id, sid, ns);
		memcpy(id + ns, "-event-", sizeof "-event-");
		json_canon_str(&fx->idp, id, strlen(id));
		fx->idp.len--;	/* its closing quote: the digits follow */
	}
	json_canon_str(&fx->now, now, strlen(now));
	json_canon_str(&fx->sidq, sid, ns);
	if (prev)
		json_canon_str(&fx->prev, prev, strlen(prev));
	else
		BUF_LIT(&fx->prev, "null");
}

void
event_fixed_release(struct event_fixed *fx)
{
	buf_release(&fx->idp);
	buf_release(&fx->now);
	buf_release(&fx->sidq);
	buf_release(&fx->prev);
}

int
draft_event_line(struct buf *out, const char *line, size_t n,
    const char *sid, int64_t seq, const char *now, const char *prev,
    struct event_at *at)
{
	struct event_fixed fx = { 0 };
	int took;

	event_fixed_init(&fx, sid, now, prev);
	took = draft_event_line_fixed(out, line, n, &fx, seq, prev != NULL,
	    at);
	event_fixed_release(&fx);
	return took;
}

void
record_id_seq(struct buf *b, int64_t seq)
{
	put_digits(b, seq, 6);
}

int
draft_event_line_fixed(struct buf *out, const char *line, size_t n,
    const struct event_fixed *fx, int64_t seq, int prev,
    struct event_at *at)
{
	static const char open[] = "{\"kind\":";
	static const char more[] = ",\"payload\":{";
	const char *k, *q, *end;
	char id[RECORD_ID_MAX];
	size_t base = out->len, v;

	/* {"kind":"K"} or {"kind":"K","payload":{...}}: the keys sorted */
	if (!line || n < sizeof open + 2 || memcmp(line, open, sizeof open - 1))
		return 0;
	end = line + n;
	k = line + sizeof open - 1;
	if (*k != '"')
		return 0;
	for (q = k + 1; q < end && *q != '"'; q += *q == '\\' ? 2 : 1)
		;
	if (q >= end)
		return 0;
	q++;
	if (!(end - q == 1 && *q == '}') && !((size_t)(end - q) >
	    sizeof more && !memcmp(q, more, sizeof more - 1) &&
	    end[-2] == '}' && end[-1] == '}'))
		return 0;
	BUF_LIT(out, "{\"event_id\":");
	v = out->len;
	if (fx->idp.len && seq >= 0) {
		buf_add(out, fx->idp.p, fx->idp.len);
		record_id_seq(out, seq);
		buf_addc(out, '"');
	} else {
		record_id(id, fx->sid, "event", seq);
		json_canon_str(out, id, strlen(id));
	}
	note(at, 0, out, base, v);
	PUT_VAL(out, at, 1, base, ",\"kind\":", k, (size_t)(q - k));
	PUT_VAL(out, at, 2, base, ",\"occurred_at\":", fx->now.p, fx->now.len);
	BUF_LIT(out, ",\"payload\":");
	v = out->len;
	if (*q == '}')
		BUF_LIT(out, "{}");
	else	/* ,"payload":{...}} */
		buf_add(out, q + sizeof more - 2, (size_t)(end - 1 -
		    (q + sizeof more - 2)));
	note(at, 3, out, base, v);
	PUT_VAL(out, at, 4, base, ",\"previous_event_hash\":",
	    prev ? fx->prev.p : "null", prev ? fx->prev.len : 4);
	PUT_VAL(out, at, 5, base, ",\"schema_version\":",
	    "\"" EVENT_SCHEMA "\"", sizeof EVENT_SCHEMA + 1);
	BUF_LIT(out, ",\"sequence\":");
	v = out->len;
	put_digits(out, seq, 1);
	note(at, 6, out, base, v);
	PUT_VAL(out, at, 7, base, ",\"session_id\":", fx->sidq.p,
	    fx->sidq.len);
	buf_addc(out, '}');
	return 1;
}
