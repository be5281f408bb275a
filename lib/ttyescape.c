/* ttyescape.c - untrusted text made safe to show on a terminal */
#include <stdint.h>
#include <string.h>

#include "hw.h"

/*
 * utf8_next decodes the sequence at s (n bytes left): its length and code
 * point, or 0 when the byte at s does not start a valid, shortest-form
 * sequence of a scalar value.
 */
static size_t
utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len, i;
	uint32_t v, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, v = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, v = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, v = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return len;
}

/*
 * tty_hostile: a code point a terminal acts on or that changes how the
 * text around it is shown: C1 controls, the bidirectional embeddings,
 * overrides and isolates, and the invisible direction marks
 */
static int
tty_hostile(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	    (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e || cp == 0x200f ||
	    cp == 0x061c;
}

void
tty_escape(struct buf *b, const char *s, size_t n, int lines)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t i = 0, k;

	while (i < n) {
		k = utf8_next(p + i, n - i, &cp);
		if (k == 0) {
			buf_printf(b, "\\x%02x", p[i]);
			i++;
			continue;
		}
		if ((cp < 0x20 && cp != '\t' && !(cp == '\n' && lines)) ||
		    cp == 0x7f)
			buf_printf(b, "\\x%02x", (unsigned)cp);
		else if (tty_hostile(cp))
			buf_printf(b, "\\u%04x", (unsigned)cp);
		else
			buf_add(b, s + i, k);
		i += k;
	}
}

void
tty_put(FILE *f, const char *s, size_t n, int lines)
{
	struct buf b;

	buf_init(&b);
	tty_escape(&b, s, n, lines);
	if (b.len)
		fwrite(b.p, 1, b.len, f);
	buf_release(&b);
}
