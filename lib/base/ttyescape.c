/* ttyescape.c - untrusted text made safe to show on a terminal */
#include <stdint.h>
#include <string.h>

#include "base/base.h"

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
	size_t i = 0;
	int r;

	while (i < n) {
		r = utf8_decode(p + i, n - i, &cp);
		if (r <= 0) {
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
			buf_add(b, s + i, (size_t)r);
		i += (size_t)r;
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
