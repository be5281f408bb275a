/* canon.c - OLPC canonical JSON, the bytes TUF signatures cover */
#include <stdlib.h>
#include <string.h>

#include "tuf/tuf.h"

static void
canon_str(struct buf *b, const char *s, size_t n)
{
	size_t i, from = 0;

	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		if (s[i] != '"' && s[i] != '\\')
			continue;
		buf_add(b, s + from, i - from);
		buf_addc(b, '\\');
		buf_addc(b, s[i]);
		from = i + 1;
	}
	buf_add(b, s + from, n - from);
	buf_addc(b, '"');
}

static int
member_cmp(const void *x, const void *y)
{
	const struct jmember *a = *(const struct jmember *const *)x;
	const struct jmember *b = *(const struct jmember *const *)y;
	size_t n = a->kn < b->kn ? a->kn : b->kn;
	int c = memcmp(a->k, b->k, n);

	if (c)
		return c;
	return a->kn < b->kn ? -1 : a->kn > b->kn;
}

static int
canon_obj(struct buf *b, const struct jval *v)
{
	const struct jmember **m;
	size_t i;
	int rc = 0;

	m = xcalloc(v->n ? v->n : 1, sizeof *m);
	for (i = 0; i < v->n; i++)
		m[i] = &v->u.m[i];
	qsort(m, v->n, sizeof *m, member_cmp);
	buf_addc(b, '{');
	for (i = 0; i < v->n && rc == 0; i++) {
		if (i)
			buf_addc(b, ',');
		canon_str(b, m[i]->k, m[i]->kn);
		buf_addc(b, ':');
		rc = tuf_canon(b, m[i]->v);
	}
	buf_addc(b, '}');
	free(m);
	return rc;
}

int
tuf_canon(struct buf *b, const struct jval *v)
{
	size_t i;

	switch (v->t) {
	case J_NULL: buf_adds(b, "null"); return 0;
	case J_FALSE: buf_adds(b, "false"); return 0;
	case J_TRUE: buf_adds(b, "true"); return 0;
	case J_FLOAT: return -1;
	case J_INT:
		/* Python reads -0 as the integer 0 */
		if (v->n == 2 && !memcmp(v->u.s, "-0", 2))
			buf_addc(b, '0');
		else
			buf_add(b, v->u.s, v->n);
		return 0;
	case J_STRING: canon_str(b, v->u.s, v->n); return 0;
	case J_ARRAY:
		buf_addc(b, '[');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_addc(b, ',');
			if (tuf_canon(b, v->u.a[i]) < 0)
				return -1;
		}
		buf_addc(b, ']');
		return 0;
	case J_OBJECT: return canon_obj(b, v);
	}
	return -1;
}
