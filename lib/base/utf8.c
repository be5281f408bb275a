/* utf8.c - the one UTF-8 decoder, and what is built on it */
#include <stdint.h>

#include "base/base.h"

int
utf8_decode(const void *s, size_t n, uint32_t *cp)
{
	const unsigned char *p = s;
	int k, i;
	uint32_t c, min;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		k = 2, c = p[0] & 0x1f, min = 0x80;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		k = 3, c = p[0] & 0x0f, min = 0x800;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		k = 4, c = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	for (i = 1; i < k; i++) {
		if ((size_t)i >= n)
			return -1;
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
		/* reject what can never complete as early as it shows */
		if (i == 1 && ((k == 3 && (c < 0x20 || (c >= 0x360 &&
		    c <= 0x37f))) || (k == 4 && (c < 0x10 || c > 0x10f))))
			return 0;
	}
	if (c < min || (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff)
		return 0;
	*cp = c;
	return k;
}

size_t
utf8_len(const void *s, size_t n)
{
	uint32_t cp;
	int k = utf8_decode(s, n, &cp);

	return k > 0 ? (size_t)k : 0;
}

void
utf8_repair(struct buf *b)
{
	struct buf o;
	size_t i = 0, k;

	for (i = 0; i < b->len; i += k)
		if (!(k = utf8_len((unsigned char *)b->p + i, b->len - i)))
			break;
	if (i == b->len)
		return;
	buf_init(&o);
	buf_add(&o, b->p, i);
	while (i < b->len) {
		k = utf8_len((unsigned char *)b->p + i, b->len - i);
		if (k) {
			buf_add(&o, b->p + i, k);
			i += k;
		} else {
			buf_add(&o, "\xef\xbf\xbd", 3);
			i++;
		}
	}
	buf_release(b);
	*b = o;
}
