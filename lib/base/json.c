/* json.c - a strict JSON parser and the canonical encoder */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/jsontext.h"

struct parser {
	struct arena *a;
	const char *s, *p, *end;
	int depth;
	char *err;
	size_t errsz;
	struct buf tmp;
	const char *str;	/* the last string parsed: in the input or tmp */
	size_t strn;
	int plain;		/* ... with no byte canonical JSON escapes */
	int canon;		/* the text so far is already canonical */
	int keyesc;		/* a key so far holds an escape */
};

static struct jval *parse_value(struct parser *ps);

/*
 * Containers hold a power-of-two capacity (at least 4) so that json_set and
 * json_push can grow parsed and constructed values alike.
 */
static size_t
cap_for(size_t n)
{
	size_t c = 4;

	while (c < n)
		c *= 2;
	return c;
}

static struct jval *
perr(struct parser *ps, const char *what)
{
	if (ps->err && !ps->err[0])
		snprintf(ps->err, ps->errsz, "%s at byte %zu", what,
		    (size_t)(ps->p - ps->s) + 1);
	return NULL;
}

static void
skip_ws(struct parser *ps)
{
	const char *p = ps->p;

	/* canonical text has no white space: the common case is one test */
	if (p < ps->end && (unsigned char)*p > ' ')
		return;
	while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
	    *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
	if (ps->p != p)
		ps->canon = 0;
}

int
valid_utf8(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	size_t k;

	while (p < end) {
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (!(k = utf8_len(p, (size_t)(end - p))))
			return 0;
		p += k;
	}
	return 1;
}

static int
parse_escape(struct parser *ps, struct buf *b)
{
	uint32_t cp, lo;
	char c;

	if (ps->p + 1 >= ps->end)
		return -1;
	c = ps->p[1];
	ps->p += 2;
	switch (c) {
	case '"': buf_addc(b, '"'); return 0;
	case '\\': buf_addc(b, '\\'); return 0;
	case '/': buf_addc(b, '/'); ps->canon = 0; return 0;
	case 'b': buf_addc(b, '\b'); return 0;
	case 'f': buf_addc(b, '\f'); return 0;
	case 'n': buf_addc(b, '\n'); return 0;
	case 'r': buf_addc(b, '\r'); return 0;
	case 't': buf_addc(b, '\t'); return 0;
	case 'u': break;
	default: return -1;
	}
	if (ps->end - ps->p < 4 || hex4(ps->p, &cp) < 0)
		return -1;
	/* canonical \u escapes: lowercase, for what has no other form */
	if (!lower_hex4(ps->p) || (cp >= 0x20 && cp < 0x7f) || cp == '\b' ||
	    cp == '\t' || cp == '\n' || cp == '\f' || cp == '\r')
		ps->canon = 0;
	ps->p += 4;
	if (cp >= 0xd800 && cp <= 0xdbff && ps->end - ps->p >= 6 &&
	    ps->p[0] == '\\' && ps->p[1] == 'u' && hex4(ps->p + 2, &lo) == 0 &&
	    lo >= 0xdc00 && lo <= 0xdfff) {
		if (!lower_hex4(ps->p + 2))
			ps->canon = 0;
		ps->p += 6;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	buf_add_utf8(b, cp);
	return 0;
}

/*
 * parse_str sets ps->str and ps->strn to the decoded bytes: the input
 * itself when the string has no escape and no byte canonical JSON escapes
 * (ps->plain is then set), else ps->tmp.
 */
static int
parse_str(struct parser *ps)
{
	const unsigned char *u;
	const char *run;
	size_t k;
	int first;

	ps->p++;
	ps->plain = 0;
	for (run = ps->p, first = 1;; run = ps->p, first = 0) {
		ps->p += plain_run((const unsigned char *)ps->p,
		    (const unsigned char *)ps->end);
		if (first && ps->p < ps->end && *ps->p == '"') {
			/* the common case: one plain run, no copy */
			ps->str = run;
			ps->strn = (size_t)(ps->p++ - run);
			ps->plain = 1;
			return 0;
		}
		if (first)
			buf_clear(&ps->tmp);
		buf_add(&ps->tmp, run, (size_t)(ps->p - run));
		if (ps->p >= ps->end)
			return perr(ps, "unterminated string"), -1;
		u = (const unsigned char *)ps->p;
		if (*u == '"') {
			ps->p++;
			ps->str = ps->tmp.p ? ps->tmp.p : "";
			ps->strn = ps->tmp.len;
			return 0;
		}
		if (*u == '\\') {
			if (parse_escape(ps, &ps->tmp) < 0)
				return perr(ps, "invalid escape"), -1;
		} else if (*u < 0x20) {
			return perr(ps, "control character in string"), -1;
		} else {
			ps->canon = 0;	/* raw DEL or non-ASCII: canonical escapes it */
			if (*u == 0x7f) {
				buf_addc(&ps->tmp, 0x7f);
				ps->p++;
			} else if (!(k = utf8_len(u,
			    (size_t)((const unsigned char *)ps->end - u)))) {
				return perr(ps, "invalid UTF-8"), -1;
			} else {
				buf_add(&ps->tmp, ps->p, k);
				ps->p += k;
			}
		}
	}
}

static struct jval *
parse_number(struct parser *ps)
{
	const char *start = ps->p;
	int isfloat = 0;
	struct jval *v;

	if (ps->p < ps->end && *ps->p == '-')
		ps->p++;
	if (ps->p >= ps->end || !isdig(*ps->p))
		return perr(ps, "invalid number");
	if (*ps->p == '0')
		ps->p++;
	else
		while (ps->p < ps->end && isdig(*ps->p))
			ps->p++;
	if (ps->p < ps->end && *ps->p == '.') {
		isfloat = 1;
		ps->p++;
		if (ps->p >= ps->end || !isdig(*ps->p))
			return perr(ps, "invalid number");
		while (ps->p < ps->end && isdig(*ps->p))
			ps->p++;
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		isfloat = 1;
		ps->p++;
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			ps->p++;
		if (ps->p >= ps->end || !isdig(*ps->p))
			return perr(ps, "invalid number");
		while (ps->p < ps->end && isdig(*ps->p))
			ps->p++;
	}
	if (isfloat) {
		char *tmp = arena_strndup(ps->a, start, (size_t)(ps->p - start));

		ps->canon = 0;	/* floats: not worth proving canonical */
		v = json_new(ps->a, J_FLOAT);
		errno = 0;
		v->u.d = strtod(tmp, NULL);
		if (isinf(v->u.d))
			return perr(ps, "number out of range");
		return v;
	}
	v = json_new(ps->a, J_INT);
	if (ps->p - start == 2 && start[0] == '-' && start[1] == '0') {
		start++;	/* -0 is the integer 0 */
		ps->canon = 0;
	}
	v->n = (size_t)(ps->p - start);
	v->u.s = arena_strndup(ps->a, start, v->n);
	return v;
}

static int
lit(struct parser *ps, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n) != 0)
		return 0;
	ps->p += n;
	return 1;
}

/* grow: room for one more of size sz in an arena array of *cap */
static void *
grow(struct arena *a, void *p, size_t n, size_t *cap, size_t sz)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 8;
	q = arena_alloc_raw(a, *cap * sz);
	if (n)
		memcpy(q, p, n * sz);
	return q;
}

static struct jval *
parse_array(struct parser *ps)
{
	struct jval *v = json_new(ps->a, J_ARRAY), **items = NULL, *item;
	size_t cap = 0;

	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		ps->p++;
		return v;
	}
	for (;;) {
		if (!(item = parse_value(ps)))
			return NULL;
		items = grow(ps->a, items, v->n, &cap, sizeof *items);
		items[v->n++] = item;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			continue;
		}
		if (ps->p < ps->end && *ps->p == ']') {
			ps->p++;
			break;
		}
		return perr(ps, "expected ',' or ']'");
	}
	v->u.a = items;		/* capacity: a power of two, as above */
	return v;
}

static int
has_key(const struct jmember *m, size_t n, const char *k, size_t kn)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].kn == kn && memcmp(m[i].k, k, kn) == 0)
			return 1;
	return 0;
}

static struct jval *
parse_object(struct parser *ps)
{
	struct jval *v = json_new(ps->a, J_OBJECT);
	struct jmember *m = NULL;
	size_t cap = 0;
	int sorted = 1;
	const char *k;

	ps->p++;
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		ps->p++;
		return v;
	}
	for (;;) {
		if (ps->p >= ps->end || *ps->p != '"')
			return perr(ps, "expected a string key");
		if (parse_str(ps) < 0)
			return NULL;
		k = ps->str;
		ps->keyesc |= !ps->plain;
		/* keys in ascending order (canonical input) cannot repeat */
		if (v->n && sorted && key_cmp(m[v->n - 1].k, m[v->n - 1].kn, k,
		    ps->strn) >= 0)
			sorted = ps->canon = 0;
		if (!sorted && has_key(m, v->n, k, ps->strn))
			return perr(ps, "duplicate key");
		m = grow(ps->a, m, v->n, &cap, sizeof *m);
		m[v->n].kn = ps->strn;
		m[v->n].k = arena_strndup(ps->a, k, ps->strn);
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':')
			return perr(ps, "expected ':'");
		ps->p++;
		if (!(m[v->n].v = parse_value(ps)))
			return NULL;
		v->n++;
		skip_ws(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_ws(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == '}') {
			ps->p++;
			break;
		}
		return perr(ps, "expected ',' or '}'");
	}
	/* cap is a power of two >= cap_for(n), as json_add expects */
	v->u.m = m;
	return v;
}

static struct jval *
parse_value(struct parser *ps)
{
	struct jval *v;

	skip_ws(ps);
	if (ps->p >= ps->end)
		return perr(ps, "unexpected end of input");
	switch (*ps->p) {
	case '{':
	case '[':
		if (++ps->depth > JSON_MAX_DEPTH)
			return perr(ps, "nesting too deep");
		v = *ps->p == '{' ? parse_object(ps) : parse_array(ps);
		ps->depth--;
		return v;
	case '"':
		if (parse_str(ps) < 0)
			return NULL;
		v = json_strn(ps->a, ps->str, ps->strn);
		v->plain = (unsigned char)ps->plain;
		return v;
	case 't':
		if (lit(ps, "true"))
			return json_new(ps->a, J_TRUE);
		break;
	case 'f':
		if (lit(ps, "false"))
			return json_new(ps->a, J_FALSE);
		break;
	case 'n':
		if (lit(ps, "null"))
			return json_new(ps->a, J_NULL);
		break;
	default:
		if (*ps->p == '-' || isdig(*ps->p))
			return parse_number(ps);
	}
	return perr(ps, "invalid JSON value");
}

struct jval *
json_parse_canon(struct arena *a, const char *s, size_t n, char *err,
    size_t errsz, int *canonical)
{
	struct parser ps = { .a = a, .s = s, .p = s, .end = s + n, .err = err,
	    .errsz = errsz, .canon = 1 };
	struct jval *v;

	if (err && errsz)
		err[0] = '\0';
	v = parse_value(&ps);
	if (v) {
		skip_ws(&ps);
		if (ps.p != ps.end) {
			perr(&ps, "trailing data after JSON value");
			v = NULL;
		}
	}
	buf_release(&ps.tmp);
	if (canonical)
		*canonical = !v || !ps.canon ? 0 : ps.keyesc ? 1 : 2;
	return v;
}

struct jval *
json_parse(struct arena *a, const char *s, size_t n, char *err, size_t errsz)
{
	return json_parse_canon(a, s, n, err, errsz, NULL);
}

/* ---- canonical encoding ---- */

static const char hexd[] = "0123456789abcdef";

static char *
put_u(char *o, uint32_t u)
{
	o[0] = '\\';
	o[1] = 'u';
	o[2] = hexd[u >> 12 & 15];
	o[3] = hexd[u >> 8 & 15];
	o[4] = hexd[u >> 4 & 15];
	o[5] = hexd[u & 15];
	return o + 6;
}

void
json_canon_str(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n;
	char *o;
	uint32_t cp;
	size_t k;

	/* reserve the worst case (12 bytes per 4 input bytes) and write */
	buf_reserve(b, 6 * n + 2);
	o = b->p + b->len;
	*o++ = '"';
	while (p < end) {
		k = plain_run(p, end);
		memcpy(o, p, k);
		o += k;
		p += k;
		if (p == end)
			break;
		switch (*p) {
		case '"': *o++ = '\\'; *o++ = '"'; p++; continue;
		case '\\': *o++ = '\\'; *o++ = '\\'; p++; continue;
		case '\n': *o++ = '\\'; *o++ = 'n'; p++; continue;
		case '\r': *o++ = '\\'; *o++ = 'r'; p++; continue;
		case '\t': *o++ = '\\'; *o++ = 't'; p++; continue;
		case '\b': *o++ = '\\'; *o++ = 'b'; p++; continue;
		case '\f': *o++ = '\\'; *o++ = 'f'; p++; continue;
		}
		/* trusted (WTF-8) input: decode without re-validation */
		if (*p < 0x80) {
			cp = *p++;
		} else if (*p >= 0xf0) {
			cp = (uint32_t)(p[0] & 7) << 18 |
			    (uint32_t)(p[1] & 0x3f) << 12 |
			    (uint32_t)(p[2] & 0x3f) << 6 | (p[3] & 0x3f);
			p += 4;
			cp -= 0x10000;
			o = put_u(o, 0xd800 + (cp >> 10));
			cp = 0xdc00 + (cp & 0x3ff);
		} else if (*p >= 0xe0) {
			cp = (uint32_t)(p[0] & 0xf) << 12 |
			    (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
			p += 3;
		} else {
			cp = (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
			p += 2;
		}
		o = put_u(o, cp);
	}
	*o++ = '"';
	b->len = (size_t)(o - b->p);
}

void
json_fmt_double(struct buf *b, double d)
{
	char tmp[48], digits[24];
	int prec, e, nd = 0, i;
	char *p;

	if (d == 0) {
		buf_adds(b, signbit(d) ? "-0.0" : "0.0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	p = tmp;
	if (*p == '-') {
		buf_addc(b, '-');
		p++;
	}
	for (; *p != 'e'; p++)
		if (*p != '.')
			digits[nd++] = *p;
	e = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (e < -4 || e >= 16) {
		buf_addc(b, digits[0]);
		if (nd > 1) {
			buf_addc(b, '.');
			buf_add(b, digits + 1, (size_t)nd - 1);
		}
		buf_printf(b, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	} else if (e >= 0) {
		for (i = 0; i <= e; i++)
			buf_addc(b, i < nd ? digits[i] : '0');
		buf_addc(b, '.');
		if (nd > e + 1)
			buf_add(b, digits + e + 1, (size_t)(nd - e - 1));
		else
			buf_addc(b, '0');
	} else {
		buf_adds(b, "0.");
		for (i = 0; i < -e - 1; i++)
			buf_addc(b, '0');
		buf_add(b, digits, (size_t)nd);
	}
}

static int
member_cmp(const void *x, const void *y)
{
	const struct jmember *a = *(const struct jmember *const *)x;
	const struct jmember *b = *(const struct jmember *const *)y;
	size_t n = a->kn < b->kn ? a->kn : b->kn;
	int c = memcmp(a->k, b->k, n);

	/* UTF-8 byte order is code point order (WTF-8 surrogates included) */
	if (c)
		return c;
	return a->kn < b->kn ? -1 : a->kn > b->kn;
}

/* canon_at is json_canon noting at *at where node begins */
static void
canon_at(struct buf *b, const struct jval *v, const struct jval *node,
    size_t *at)
{
	const struct jmember *small[16], **order;
	size_t i;

	if (v == node)
		*at = b->len;
	switch (v->t) {
	case J_NULL: buf_add(b, "null", 4); return;
	case J_TRUE: buf_add(b, "true", 4); return;
	case J_FALSE: buf_add(b, "false", 5); return;
	case J_INT: buf_add(b, v->u.s, v->n); return;
	case J_FLOAT: json_fmt_double(b, v->u.d); return;
	case J_STRING:
		if (!v->plain) {
			json_canon_str(b, v->u.s, v->n);
			return;
		}
		buf_reserve(b, v->n + 2);
		b->p[b->len] = '"';
		memcpy(b->p + b->len + 1, v->u.s, v->n);
		b->p[b->len + 1 + v->n] = '"';
		b->len += v->n + 2;
		return;
	case J_ARRAY:
		buf_addc(b, '[');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_addc(b, ',');
			canon_at(b, v->u.a[i], node, at);
		}
		buf_addc(b, ']');
		return;
	case J_OBJECT:
		order = v->n <= 16 ? small : xmalloc(v->n * sizeof *order);
		for (i = 0; i < v->n; i++)
			order[i] = &v->u.m[i];
		for (i = 1; i < v->n; i++)
			if (member_cmp(&order[i - 1], &order[i]) > 0)
				break;
		if (i < v->n)
			qsort(order, v->n, sizeof *order, member_cmp);
		buf_addc(b, '{');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_addc(b, ',');
			json_canon_str(b, order[i]->k, order[i]->kn);
			buf_addc(b, ':');
			canon_at(b, order[i]->v, node, at);
		}
		buf_addc(b, '}');
		if (order != small)
			free(order);
		return;
	}
}

void
json_canon(struct buf *b, const struct jval *v)
{
	canon_at(b, v, NULL, NULL);
}

void
json_canon_at(struct buf *b, const struct jval *v, const struct jval *node,
    size_t *at)
{
	canon_at(b, v, node, at);
}

int
json_equal(const struct jval *x, const struct jval *y)
{
	struct buf a, b;
	int eq;

	if (!x || !y)
		return x == y;
	/* scalars compare directly; containers by their canonical bytes */
	if (x->t != y->t)
		return 0;
	switch (x->t) {
	case J_NULL:
	case J_TRUE:
	case J_FALSE:
		return 1;
	case J_INT:
	case J_STRING:
		return x->n == y->n && memcmp(x->u.s, y->u.s, x->n) == 0;
	case J_FLOAT:
		return x->u.d == y->u.d && signbit(x->u.d) == signbit(y->u.d);
	default:
		break;
	}
	buf_init(&a);
	buf_init(&b);
	json_canon(&a, x);
	json_canon(&b, y);
	eq = a.len == b.len && memcmp(a.p, b.p, a.len) == 0;
	buf_release(&a);
	buf_release(&b);
	return eq;
}

/* ---- lookups and constructors ---- */

struct jval *
json_get(const struct jval *obj, const char *key)
{
	size_t i, kn = strlen(key);

	if (!obj || obj->t != J_OBJECT)
		return NULL;
	for (i = 0; i < obj->n; i++)
		if (obj->u.m[i].kn == kn && obj->u.m[i].k[0] == key[0] &&
		    memcmp(obj->u.m[i].k, key, kn) == 0)
			return obj->u.m[i].v;
	return NULL;
}

const char *
json_get_str(const struct jval *obj, const char *key)
{
	struct jval *v = json_get(obj, key);

	return v && v->t == J_STRING ? v->u.s : NULL;
}

int
json_get_int(const struct jval *obj, const char *key, int64_t *out)
{
	struct jval *v = json_get(obj, key);
	char *end;
	long long x;

	if (!v || v->t != J_INT || v->n > 19)
		return -1;
	errno = 0;
	x = strtoll(v->u.s, &end, 10);
	if (errno || *end)
		return -1;
	*out = x;
	return 0;
}

int
json_is_str(const struct jval *v, const char *s)
{
	return v && v->t == J_STRING && v->n == strlen(s) &&
	    memcmp(v->u.s, s, v->n) == 0;
}

struct jval *
json_new(struct arena *a, enum jtype t)
{
	struct jval *v = arena_alloc(a, sizeof *v);

	v->t = t;
	return v;
}

struct jval *
json_strn(struct arena *a, const char *s, size_t n)
{
	struct jval *v = json_new(a, J_STRING);

	v->u.s = arena_strndup(a, s, n);
	v->n = n;
	return v;
}

struct jval *
json_str(struct arena *a, const char *s)
{
	return json_strn(a, s, strlen(s));
}

struct jval *
json_int(struct arena *a, int64_t i)
{
	struct jval *v = json_new(a, J_INT);
	char tmp[24], *p = tmp + sizeof tmp;
	uint64_t u = i < 0 ? -(uint64_t)i : (uint64_t)i;

	do
		*--p = (char)('0' + u % 10);
	while ((u /= 10));
	if (i < 0)
		*--p = '-';
	v->n = (size_t)(tmp + sizeof tmp - p);
	v->u.s = arena_strndup(a, p, v->n);
	return v;
}

struct jval *
json_bool(struct arena *a, int b)
{
	return json_new(a, b ? J_TRUE : J_FALSE);
}

struct jval *
json_obj(struct arena *a)
{
	return json_new(a, J_OBJECT);
}

void
json_set(struct arena *a, struct jval *obj, const char *key, struct jval *v)
{
	size_t i, kn = strlen(key);

	for (i = 0; i < obj->n; i++)
		if (obj->u.m[i].kn == kn &&
		    memcmp(obj->u.m[i].k, key, kn) == 0) {
			obj->u.m[i].v = v;
			return;
		}
	json_add(a, obj, key, v);
}

void
json_add(struct arena *a, struct jval *obj, const char *key, struct jval *v)
{
	size_t kn = strlen(key);
	struct jmember *m;

	if (obj->n == 0 || cap_for(obj->n) == obj->n) {
		m = arena_alloc(a, cap_for(obj->n + 1) * sizeof *m);
		if (obj->n)
			memcpy(m, obj->u.m, obj->n * sizeof *m);
		obj->u.m = m;
	}
	obj->u.m[obj->n].k = key;	/* static or arena-owned by contract */
	obj->u.m[obj->n].kn = kn;
	obj->u.m[obj->n].v = v;
	obj->n++;
}

void
json_push(struct arena *a, struct jval *arr, struct jval *v)
{
	struct jval **items;

	if (arr->n == 0 || cap_for(arr->n) == arr->n) {
		items = arena_alloc(a, cap_for(arr->n + 1) * sizeof *items);
		if (arr->n)
			memcpy(items, arr->u.a, arr->n * sizeof *items);
		arr->u.a = items;
	}
	arr->u.a[arr->n++] = v;
}

struct jval *
json_copy(struct arena *a, const struct jval *v)
{
	struct jval *c = json_new(a, v->t);
	size_t i;

	switch (v->t) {
	case J_INT:
	case J_STRING:
		c->n = v->n;
		c->u.s = arena_strndup(a, v->u.s, v->n);
		c->plain = v->plain;
		break;
	case J_FLOAT:
		c->u.d = v->u.d;
		break;
	case J_ARRAY:
		for (i = 0; i < v->n; i++)
			json_push(a, c, json_copy(a, v->u.a[i]));
		break;
	case J_OBJECT:
		c->u.m = arena_alloc(a, cap_for(v->n) * sizeof *c->u.m);
		for (i = 0; i < v->n; i++) {
			c->u.m[i].k = arena_strndup(a, v->u.m[i].k,
			    v->u.m[i].kn);
			c->u.m[i].kn = v->u.m[i].kn;
			c->u.m[i].v = json_copy(a, v->u.m[i].v);
		}
		c->n = v->n;
		break;
	default:
		break;
	}
	return c;
}

int
json_keys_exact(const struct jval *obj, const char *const *keys)
{
	size_t n = 0;

	if (!obj || obj->t != J_OBJECT)
		return -1;
	for (; *keys; keys++, n++)
		if (!json_get(obj, *keys))
			return -1;
	return obj->n == n ? 0 : -1;
}
