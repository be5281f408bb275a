/*
 * toml.c - the strict TOML subset that signer registries are written in,
 * parsed into JSON values so that the rest of the code reads them with
 * json_get.
 *
 * Supported: "key = value" lines at the top level and under [a.b] table
 * headers (bare or basic-string keys), basic strings with TOML's escapes,
 * decimal integers, floats, booleans, comments and blank lines; with
 * TOML_ARRAYS also arrays of those scalars (one kind each, on one line or
 * over several, comments and a trailing comma allowed).  Every other TOML
 * construct is refused by name rather than misread.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

struct toml {
	struct arena *a;
	const char *p, *eol, *end;	/* eol: end of the current line */
	const char *name;
	long line;
	struct jval *root, *cur;
	struct jval **defined;		/* tables named by a header */
	size_t ndefined;
	int flags;
};

static int __attribute__((format(printf, 2, 3)))
terr(struct toml *t, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", t->name, t->line, msg);
}

/* printable: s when it is short printable ASCII, for error messages */
static const char *
printable(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 64)
		return "...";
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return "...";
	return s;
}

static void
skip_ws(struct toml *t)
{
	while (t->p < t->eol && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

static int
bare_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || c == '_' || c == '-';
}


/* unicode_escape reads the n hex digits after \u or \U */
static int
unicode_escape(struct toml *t, int n, struct buf *out)
{
	uint32_t cp = 0;
	int i, d;
	char c;

	if (t->eol - t->p < n)
		return terr(t, "truncated \\%c escape", n == 4 ? 'u' : 'U');
	for (i = 0; i < n; i++) {
		c = t->p[i];
		d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ?
		    c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return terr(t, "invalid \\%c escape", n == 4 ? 'u' :
			    'U');
		cp = cp << 4 | (uint32_t)d;
	}
	if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return terr(t, "escape is not a Unicode scalar value");
	t->p += n;
	buf_add_utf8(out, cp);
	return 0;
}

static int
escape(struct toml *t, struct buf *out)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	const char *k;

	if (t->p >= t->eol)
		return terr(t, "unterminated string");
	if (*t->p == 'u' || *t->p == 'U') {
		t->p++;
		return unicode_escape(t, t->p[-1] == 'u' ? 4 : 8, out);
	}
	if (!(k = strchr(from, *t->p)) || !*t->p)
		return terr(t, "invalid escape '\\%c' in a string",
		    *t->p >= 0x21 && *t->p <= 0x7e ? *t->p : '?');
	buf_addc(out, to[k - from]);
	t->p++;
	return 0;
}

/* basic_string parses "..." at t->p into out */
static int
basic_string(struct toml *t, struct buf *out)
{
	unsigned char c;

	buf_clear(out);
	if (t->eol - t->p >= 3 && !memcmp(t->p, "\"\"\"", 3))
		return terr(t, "multi-line strings are not supported");
	t->p++;
	for (;;) {
		if (t->p >= t->eol)
			return terr(t, "unterminated string");
		c = (unsigned char)*t->p++;
		if (c == '"')
			break;
		if (c == '\\') {
			if (escape(t, out) < 0)
				return -1;
		} else if ((c < 0x20 && c != '\t') || c == 0x7f)
			return terr(t, "control character in a string");
		else
			buf_addc(out, (char)c);
	}
	buf_cstr(out);
	return 0;
}

/* key parses one bare or quoted key into an arena string */
static int
key(struct toml *t, struct buf *tmp, const char **k)
{
	const char *s = t->p;

	if (t->p < t->eol && *t->p == '"') {
		if (basic_string(t, tmp) < 0)
			return -1;
		if (memchr(tmp->p, 0, tmp->len))
			return terr(t, "a key must not contain NUL");
		*k = arena_strndup(t->a, tmp->p, tmp->len);
		return 0;
	}
	if (t->p < t->eol && *t->p == '\'')
		return terr(t, "literal strings are not supported");
	while (t->p < t->eol && bare_char(*t->p))
		t->p++;
	if (t->p == s)
		return terr(t, "expected a key");
	*k = arena_strndup(t->a, s, (size_t)(t->p - s));
	return 0;
}

/* end_of_line accepts white space and a comment up to the line's end */
static int
end_of_line(struct toml *t)
{
	skip_ws(t);
	if (t->p < t->eol && *t->p == '#') {
		for (t->p++; t->p < t->eol; t->p++)
			if (((unsigned char)*t->p < 0x20 && *t->p != '\t') ||
			    *t->p == 0x7f)
				return terr(t, "control character in a "
				    "comment");
	}
	if (t->p < t->eol)
		return terr(t, "unexpected text after a value or header");
	return 0;
}

static int
defined(struct toml *t, const struct jval *v)
{
	size_t i;

	for (i = 0; i < t->ndefined; i++)
		if (t->defined[i] == v)
			return 1;
	return 0;
}

/* header handles "[a.b]": the named table, created or reopened once */
static int
header(struct toml *t, struct buf *tmp)
{
	struct jval *cur = t->root, *v;
	const char *k;
	int depth = 0;

	t->p++;
	if (t->p < t->eol && *t->p == '[')
		return terr(t, "arrays of tables are not supported");
	for (;;) {
		skip_ws(t);
		if (key(t, tmp, &k) < 0)
			return -1;
		if (++depth > JSON_MAX_DEPTH - 1)
			return terr(t, "table nesting is too deep");
		if (!(v = json_get(cur, k))) {
			v = json_obj(t->a);
			json_add(t->a, cur, k, v);
		} else if (v->t != J_OBJECT)
			return terr(t, "'%s' is already a value, not a table",
			    printable(k, strlen(k)));
		cur = v;
		skip_ws(t);
		if (t->p < t->eol && *t->p == '.') {
			t->p++;
			continue;
		}
		if (t->p < t->eol && *t->p == ']')
			break;
		return terr(t, "expected '.' or ']' in a table header");
	}
	t->p++;
	if (defined(t, cur))
		return terr(t, "table defined twice");
	t->defined = xrealloc(t->defined, (t->ndefined + 1) *
	    sizeof *t->defined);
	t->defined[t->ndefined++] = cur;
	t->cur = cur;
	return end_of_line(t);
}

/* digits: a run of digits with single underscores between them */
static const char *
digits(const char *s, const char *e)
{
	const char *start = s;

	while (s < e && ((*s >= '0' && *s <= '9') || (*s == '_' && s > start &&
	    s + 1 < e && s[1] >= '0' && s[1] <= '9' && s[-1] != '_')))
		s++;
	return s == start ? NULL : s;
}

/* number_kind: 'i' integer, 'f' float, 0 invalid (syntax of TOML 1.0) */
static int
number_kind(const char *s, const char *e)
{
	const char *q;
	int kind = 'i';

	if (s < e && (*s == '+' || *s == '-'))
		s++;
	if (!(q = digits(s, e)))
		return 0;
	if (*s == '0' && q - s > 1)
		return 0;	/* no leading zeros */
	s = q;
	if (s < e && *s == '.') {
		if (!(s = digits(s + 1, e)))
			return 0;
		kind = 'f';
	}
	if (s < e && (*s == 'e' || *s == 'E')) {
		s++;
		if (s < e && (*s == '+' || *s == '-'))
			s++;
		if (!(s = digits(s, e)))
			return 0;
		kind = 'f';
	}
	return s == e ? kind : 0;
}

/* number: NULL with *bad unset when the token is not a number at all */
static struct jval *
number(struct toml *t, const char *s, size_t n, int *bad)
{
	char *clean = arena_alloc(t->a, n + 1), *end;
	struct jval *v;
	size_t i, j = 0;
	int kind = number_kind(s, s + n);
	long long x;
	double d;

	for (i = 0; i < n; i++)
		if (s[i] != '_' && !(i == 0 && s[i] == '+'))
			clean[j++] = s[i];
	clean[j] = 0;
	if (kind == 'i') {
		errno = 0;
		x = strtoll(clean, &end, 10);
		if (errno || *end)
			return *bad = terr(t, "integer out of range"), NULL;
		return json_int(t->a, x);	/* also makes -0 plain 0 */
	}
	if (kind != 'f')
		return NULL;
	errno = 0;
	d = strtod(clean, &end);
	if (*end || !isfinite(d))
		return *bad = terr(t, "float out of range"), NULL;
	v = json_new(t->a, J_FLOAT);
	v->u.d = d;
	return v;
}

/* leading_digits: how many of the first n bytes of s are decimal digits */
static size_t
leading_digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		;
	return i;
}

/* scalar: a boolean or number token, or the name of what is unsupported */
static struct jval *
scalar(struct toml *t)
{
	const char *s = t->p, *u;
	struct jval *v;
	size_t n;
	int bad = 0;

	while (t->p < t->eol && *t->p != ' ' && *t->p != '\t' &&
	    *t->p != '#' && *t->p != ',' && *t->p != ']')
		t->p++;
	n = (size_t)(t->p - s);
	if ((n == 4 && !memcmp(s, "true", 4)) || (n == 5 &&
	    !memcmp(s, "false", 5)))
		return json_bool(t->a, n == 4);
	/* the token is n bytes, not a C string: nothing reads past it */
	u = s + (n && (*s == '+' || *s == '-'));
	if (s + n - u >= 3 && (!memcmp(u, "inf", 3) || !memcmp(u, "nan", 3)))
		return terr(t, "inf and nan are not supported"), NULL;
	if (n > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'o' ||
	    s[1] == 'b'))
		return terr(t, "only decimal integers are supported"), NULL;
	if (memchr(s, ':', n) || (n >= 5 && leading_digits(s, 5) == 4 && s[4] == '-'))
		return terr(t, "dates and times are not supported"), NULL;
	if ((v = number(t, s, n, &bad)) || bad)
		return v;
	return terr(t, "invalid value"), NULL;
}

static int next_line(struct toml *t);
static struct jval *value(struct toml *t, struct buf *tmp);

/*
 * array_space skips white space, comments and line ends inside an array;
 * -1 when the input ends first
 */
static int
array_space(struct toml *t)
{
	for (;;) {
		skip_ws(t);
		if (t->p < t->eol && *t->p == '#') {
			if (end_of_line(t) < 0)
				return -1;
		}
		if (t->p < t->eol)
			return 0;
		if (t->eol == t->end || t->eol + 1 + (*t->eol == '\r') >=
		    t->end)
			return terr(t, "unterminated array");
		t->p = t->eol + 1 + (*t->eol == '\r');
		if (next_line(t) < 0)
			return -1;
	}
}

/* array: [v, ...] of scalars of one kind; t->p is at '[' */
static struct jval *
array(struct toml *t, struct buf *tmp)
{
	struct jval *arr = json_new(t->a, J_ARRAY), *v;

	if (!(t->flags & TOML_ARRAYS))
		return terr(t, "arrays are not supported"), NULL;
	t->p++;
	for (;;) {
		if (array_space(t) < 0)
			return NULL;
		if (*t->p == ']')
			break;
		if (*t->p == '[')
			return terr(t, "nested arrays are not supported"), NULL;
		if (arr->n >= TOML_ARRAY_MAX)
			return terr(t, "an array holds at most %d values",
			    TOML_ARRAY_MAX), NULL;
		if (!(v = value(t, tmp)))
			return NULL;
		if (arr->n && (v->t == J_TRUE || v->t == J_FALSE ?
		    arr->u.a[0]->t != J_TRUE && arr->u.a[0]->t != J_FALSE :
		    v->t != arr->u.a[0]->t))
			return terr(t, "an array mixes kinds of values"), NULL;
		json_push(t->a, arr, v);
		if (array_space(t) < 0)
			return NULL;
		if (*t->p == ',') {
			t->p++;
			continue;
		}
		if (*t->p != ']')
			return terr(t, "expected ',' or ']' in an array"), NULL;
		break;
	}
	t->p++;
	return arr;
}

static struct jval *
value(struct toml *t, struct buf *tmp)
{
	if (t->p >= t->eol || *t->p == '#')
		return terr(t, "expected a value after '='"), NULL;
	switch (*t->p) {
	case '"':
		if (basic_string(t, tmp) < 0)
			return NULL;
		return json_strn(t->a, tmp->p, tmp->len);
	case '\'':
		return terr(t, "literal strings are not supported"), NULL;
	case '[':
		return array(t, tmp);
	case '{':
		return terr(t, "inline tables are not supported"), NULL;
	default:
		return scalar(t);
	}
}

static int
keyval(struct toml *t, struct buf *tmp)
{
	struct jval *v;
	const char *k;

	if (key(t, tmp, &k) < 0)
		return -1;
	skip_ws(t);
	if (t->p < t->eol && *t->p == '.')
		return terr(t, "dotted keys are not supported");
	if (t->p >= t->eol || *t->p != '=')
		return terr(t, "expected '=' after a key");
	t->p++;
	skip_ws(t);
	if (!(v = value(t, tmp)))
		return -1;
	if (json_get(t->cur, k))
		return terr(t, "duplicate key '%s'", printable(k, strlen(k)));
	json_add(t->a, t->cur, k, v);
	return end_of_line(t);
}

/* next_line sets t->eol; a line ends in "\n" or "\r\n" */
static int
next_line(struct toml *t)
{
	const char *nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
	const char *cr;

	t->line++;
	t->eol = nl ? nl : t->end;
	if (t->eol > t->p && t->eol[-1] == '\r' && nl)
		t->eol--;
	if ((cr = memchr(t->p, '\r', (size_t)(t->eol - t->p))))
		return terr(t, "carriage return without a line feed");
	if (!valid_utf8(t->p, (size_t)(t->eol - t->p)))
		return terr(t, "not valid UTF-8");
	return 0;
}

static int
line(struct toml *t, struct buf *tmp)
{
	skip_ws(t);
	if (t->p >= t->eol || *t->p == '#')
		return end_of_line(t);
	if (*t->p == '[')
		return header(t, tmp);
	return keyval(t, tmp);
}

struct jval *
toml_parse(struct arena *a, const char *s, size_t n, const char *name)
{
	return toml_parse_ext(a, s, n, name, 0);
}

struct jval *
toml_parse_ext(struct arena *a, const char *s, size_t n, const char *name,
    int flags)
{
	struct toml t = { .a = a, .p = s, .end = s + n, .name = name,
		.flags = flags };
	struct buf tmp;
	int rc = 0;

	buf_init(&tmp);
	t.root = t.cur = json_obj(a);
	while (rc == 0 && t.p < t.end) {
		if ((rc = next_line(&t)) == 0)
			rc = line(&t, &tmp);
		/* past "\n" or "\r\n", or to the end */
		t.p = t.eol == t.end ? t.end : t.eol + 1 + (*t.eol == '\r');
	}
	buf_release(&tmp);
	free(t.defined);
	return rc == 0 ? t.root : NULL;
}

void
toml_quote(struct buf *b, const char *s)
{
	static const char from[] = "\b\t\n\f\r\"\\", to[] = "btnfr\"\\";
	const char *k;

	buf_addc(b, '"');
	for (; *s; s++) {
		if ((k = strchr(from, *s))) {
			buf_addc(b, '\\');
			buf_addc(b, to[k - from]);
		} else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			buf_printf(b, "\\u%04X", (unsigned char)*s);
		else
			buf_addc(b, *s);
	}
	buf_addc(b, '"');
}
