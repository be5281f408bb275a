/*
 * jscan.c - the canonical scan: whether a JSON text is one json.c's
 * parser takes and finds canonical, read without building anything
 */
#include <string.h>

#include "base/base.h"
#include "base/jsontext.h"

/*
 * The canonical scan: the parser's rules where the parser keeps its
 * canonical flag set, and 0 wherever it would clear it or fail (white
 * space, floats, -0, a raw DEL or non-ASCII byte, a needless or uppercase
 * escape, keys out of order) or where the scan does not follow it (an
 * escape in a key).
 */
struct cscan {
	const char *p, *end;
	int depth;
	struct jtextmember *m;	/* where the members of depth 1 and 2 go */
	size_t nm, cap;
	int top;		/* the top member being read (its index in m) */
};

static int cs_value(struct cscan *c);

/* cs_str: the string at c->p; *esc set when it holds an escape */
static int
cs_str(struct cscan *c, int *esc)
{
	const char *p = c->p + 1, *end = c->end;
	uint32_t cp, lo;

	*esc = 0;
	for (;;) {
		p += plain_run((const unsigned char *)p,
		    (const unsigned char *)end);
		if (p >= end)
			return 0;
		if (*p == '"') {
			c->p = p + 1;
			return 1;
		}
		if (*p != '\\' || end - p < 2)
			return 0;	/* a control, DEL or non-ASCII byte */
		*esc = 1;
		if (p[1] != 'u') {
			/* '/' needs no escape; anything else is no escape */
			if (!strchr("\"\\bfnrt", p[1]) || !p[1])
				return 0;
			p += 2;
			continue;
		}
		if (end - p < 6 || hex4(p + 2, &cp) < 0 || !lower_hex4(p + 2) ||
		    (cp >= 0x20 && cp < 0x7f) || cp == '\b' || cp == '\t' ||
		    cp == '\n' || cp == '\f' || cp == '\r')
			return 0;
		p += 6;
		/* the low half of a pair is read with the high one */
		if (cp >= 0xd800 && cp <= 0xdbff && end - p >= 6 &&
		    p[0] == '\\' && p[1] == 'u' && hex4(p + 2, &lo) == 0 &&
		    lo >= 0xdc00 && lo <= 0xdfff) {
			if (!lower_hex4(p + 2))
				return 0;
			p += 6;
		}
	}
}

static int
cs_number(struct cscan *c)
{
	const char *p = c->p;
	int neg = *p == '-';

	p += neg;
	if (p >= c->end || !isdig(*p))
		return 0;
	if (*p == '0') {
		if (neg)
			return 0;	/* -0 */
		p++;
	} else
		while (p < c->end && isdig(*p))
			p++;
	if (p < c->end && (*p == '.' || *p == 'e' || *p == 'E'))
		return 0;		/* a float */
	c->p = p;
	return 1;
}

static int
cs_lit(struct cscan *c, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
		return 0;
	c->p += n;
	return 1;
}

/*
 * cs_member: the value of the member of an object of depth 1 or 2 whose
 * key is k (kn bytes), noted in c->m; 0 past its room
 */
static int
cs_member(struct cscan *c, const char *k, size_t kn)
{
	size_t i = c->nm;

	if (i == c->cap)
		return 0;
	c->nm++;
	c->m[i] = (struct jtextmember){ k, kn, c->p, 0,
	    c->depth == 1 ? -1 : c->top };
	if (c->depth == 1)
		c->top = (int)i;
	if (!cs_value(c))
		return 0;
	c->m[i].vn = (size_t)(c->p - c->m[i].v);
	return 1;
}

static int
cs_object(struct cscan *c)
{
	const char *k, *prev = NULL;
	size_t kn, prevn = 0;
	int esc;

	if (++c->p < c->end && *c->p == '}') {
		c->p++;
		return 1;
	}
	for (;;) {
		if (c->p >= c->end || *c->p != '"')
			return 0;
		k = c->p + 1;
		if (!cs_str(c, &esc) || esc)
			return 0;
		kn = (size_t)(c->p - 1 - k);
		if (prev && key_cmp(prev, prevn, k, kn) >= 0)
			return 0;
		prev = k;
		prevn = kn;
		if (c->p >= c->end || *c->p++ != ':')
			return 0;
		if (!c->m || c->depth > 2 || (c->depth == 2 && c->top < 0)) {
			if (!cs_value(c))
				return 0;
		} else if (!cs_member(c, k, kn))
			return 0;
		if (c->p >= c->end)
			return 0;
		if (*c->p == '}') {
			c->p++;
			return 1;
		}
		if (*c->p++ != ',')
			return 0;
	}
}

static int
cs_array(struct cscan *c)
{
	if (++c->p < c->end && *c->p == ']') {
		c->p++;
		return 1;
	}
	for (;;) {
		if (!cs_value(c) || c->p >= c->end)
			return 0;
		if (*c->p == ']') {
			c->p++;
			return 1;
		}
		if (*c->p++ != ',')
			return 0;
	}
}

static int
cs_value(struct cscan *c)
{
	int k, esc;

	if (c->p >= c->end)
		return 0;
	switch (*c->p) {
	case '{':
	case '[':
		if (++c->depth > JSON_MAX_DEPTH)
			return 0;
		k = *c->p == '{' ? cs_object(c) : cs_array(c);
		c->depth--;
		return k;
	case '"':
		return cs_str(c, &esc);
	case 't':
		return cs_lit(c, "true");
	case 'f':
		return cs_lit(c, "false");
	case 'n':
		return cs_lit(c, "null");
	default:
		return (*c->p == '-' || isdig(*c->p)) && cs_number(c);
	}
}

int
json_canon_ascii(const char *s, size_t n)
{
	struct cscan c = { s, s + n, 0, NULL, 0, 0, -1 };

	return cs_value(&c) && c.p == c.end;
}

int
json_canon_members(const char *s, size_t n, struct jtextmember *m,
    size_t cap, size_t *nm)
{
	struct cscan c = { s, s + n, 0, m, 0, cap, -1 };
	int ok = cs_value(&c) && c.p == c.end;

	*nm = c.nm;
	return ok;
}
