/* front.c - SKILL.md: its YAML frontmatter (a strict subset) and policy */
#include <ctype.h>
#include <string.h>

#include "skill/skill.h"

#define FRONT_MAX 65536

struct yaml {
	struct arena *a;
	const char *p, *end;
	int line;
};

static int
yerr(const struct yaml *y, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid skill: SKILL.md:%d: %s",
	    y->line + 1, why);
}

/* a scalar YAML would not read as a string when plain */
static int
plain_nonstring(const char *s)
{
	static const char *const words[] = { "true", "false", "yes", "no",
		"on", "off", "null", "~", "y", "n", NULL };
	const char *const *w;
	const char *p = s;

	for (w = words; *w; w++)
		if (!strcasecmp(s, *w))
			return 1;
	if (*p == '-' || *p == '+')
		p++;
	return *p && strspn(p, "0123456789._eE+-") == strlen(p) &&
	    isdigit((unsigned char)*p);
}

/*
 * scalar parses the value text v (n bytes, trimmed) into a J_STRING;
 * plain values YAML would read as something else are refused.
 */
static struct jval *
scalar(struct yaml *y, const char *v, size_t n)
{
	struct buf b;
	struct jval *s;
	size_t i;

	if (n && (v[0] == '"' || v[0] == '\'')) {
		if (n < 2 || v[n - 1] != v[0])
			return yerr(y, "an unterminated quoted string"), NULL;
		buf_init(&b);
		for (i = 1; i + 1 < n; i++) {
			if (v[0] == '\'' && v[i] == '\'' && v[i + 1] == '\'')
				i++;
			else if (v[0] == '"' && v[i] == '\\') {
				if (i + 2 >= n || !strchr("\"\\/nt",
				    v[i + 1])) {
					buf_release(&b);
					return yerr(y, "an escape this subset "
					    "does not read"), NULL;
				}
				i++;
				buf_addc(&b, v[i] == 'n' ? '\n' : v[i] == 't' ?
				    '\t' : v[i]);
				continue;
			} else if (v[i] == v[0]) {
				buf_release(&b);
				return yerr(y, "a quote inside a quoted "
				    "string"), NULL;
			}
			buf_addc(&b, v[i]);
		}
		s = json_strn(y->a, b.p ? b.p : "", b.len);
		buf_release(&b);
		return s;
	}
	s = json_strn(y->a, v, n);
	if (!n || strchr("[]{}&*!|>%@`#", v[0]) ||
	    plain_nonstring(s->u.s) || memchr(v, '\t', n) ||
	    strstr(s->u.s, ": ") || strstr(s->u.s, " #"))
		return yerr(y, "a value this subset does not read as a string "
		    "(quote it)"), NULL;
	return s;
}

static void
trim(const char **s, size_t *n)
{
	while (*n && (**s == ' '))
		(*s)++, (*n)--;
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

/* next_line: the next line's text (no '\n'), or NULL at the end */
static const char *
next_line(struct yaml *y, size_t *n)
{
	const char *s = y->p, *nl;

	if (y->p >= y->end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(y->end - s));
	*n = nl ? (size_t)(nl - s) : (size_t)(y->end - s);
	y->p = nl ? nl + 1 : y->end;
	y->line++;
	return s;
}

static int
blank(const char *s, size_t n)
{
	trim(&s, &n);
	return n == 0 || s[0] == '#';
}

static struct jval *
flow_list(struct yaml *y, const char *v, size_t n)
{
	struct jval *arr = json_new(y->a, J_ARRAY), *s;
	const char *p = v + 1, *end = v + n - 1, *c;
	size_t len;

	if (n < 2 || v[n - 1] != ']')
		return yerr(y, "an unterminated flow list"), NULL;
	while (p < end) {
		c = memchr(p, ',', (size_t)(end - p));
		len = c ? (size_t)(c - p) : (size_t)(end - p);
		trim(&p, &len);
		if (len || c) {
			if (!(s = scalar(y, p, len)))
				return NULL;
			json_push(y->a, arr, s);
		}
		p = c ? c + 1 : end;
	}
	return arr;
}

/* block: the indented lines under a key: a map or a list of strings */
static struct jval *
block(struct yaml *y)
{
	struct jval *v = NULL, *s;
	const char *line, *colon, *k;
	size_t n, kn, vn;

	for (;;) {
		const char *save = y->p;
		int lsave = y->line;

		if (!(line = next_line(y, &n)))
			break;
		if (blank(line, n))
			continue;
		if (line[0] != ' ') {
			y->p = save;
			y->line = lsave;
			break;
		}
		trim(&line, &n);
		if (n >= 2 && line[0] == '-' && line[1] == ' ') {
			if (v && v->t != J_ARRAY)
				return yerr(y, "a list item in a map"), NULL;
			if (!v)
				v = json_new(y->a, J_ARRAY);
			k = line + 2;
			kn = n - 2;
			trim(&k, &kn);
			if (!(s = scalar(y, k, kn)))
				return NULL;
			json_push(y->a, v, s);
			continue;
		}
		if (v && v->t != J_OBJECT)
			return yerr(y, "a map entry in a list"), NULL;
		if (!v)
			v = json_obj(y->a);
		if (!(colon = memchr(line, ':', n)) ||
		    (colon + 1 < line + n && colon[1] != ' '))
			return yerr(y, "a line that is not 'key: value'"), NULL;
		kn = (size_t)(colon - line);
		k = arena_strndup(y->a, line, kn);
		vn = n - kn - 1;
		colon++;
		trim(&colon, &vn);
		if (json_get(v, k))
			return yerr(y, "a key given twice"), NULL;
		if (!(s = scalar(y, colon, vn)))
			return NULL;
		json_add(y->a, v, k, s);
	}
	return v ? v : (yerr(y, "a key with no value"), NULL);
}

static struct jval *
yaml_parse(struct yaml *y)
{
	struct jval *top = json_obj(y->a), *v;
	const char *line, *colon, *val;
	char *k;
	size_t n, vn;

	while ((line = next_line(y, &n))) {
		if (blank(line, n))
			continue;
		if (line[0] == ' ' || line[0] == '\t')
			return yerr(y, "an indented line with no key above"),
			    NULL;
		if (!(colon = memchr(line, ':', n)) ||
		    (colon + 1 < line + n && colon[1] != ' '))
			return yerr(y, "a line that is not 'key: value'"), NULL;
		k = arena_strndup(y->a, line, (size_t)(colon - line));
		val = colon + 1;
		vn = n - (size_t)(val - line);
		trim(&val, &vn);
		if (json_get(top, k))
			return yerr(y, "a key given twice"), NULL;
		if (vn == 0)
			v = block(y);
		else if (val[0] == '[')
			v = flow_list(y, val, vn);
		else
			v = scalar(y, val, vn);
		if (!v)
			return NULL;
		json_add(y->a, top, k, v);
	}
	return top;
}

struct jval *
skill_yaml(struct arena *a, const char *s, size_t n)
{
	struct yaml y = { a, s, s + n, 0 };

	if (n > FRONT_MAX)
		return hw_err_set(HW_EXIT_DATA, "invalid skill: its "
		    "frontmatter is over 64 KiB"), NULL;
	return yaml_parse(&y);
}
