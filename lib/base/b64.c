/* b64.c - standard base64, and the canonical decoding */
#include <string.h>

#include "base/base.h"

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void
b64_encode(struct buf *b, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;
	char *o;

	buf_reserve(b, (n + 2) / 3 * 4);
	o = b->p + b->len;
	for (i = 0; i + 2 < n; i += 3) {
		*o++ = b64_alphabet[s[i] >> 2];
		*o++ = b64_alphabet[(s[i] & 3) << 4 | s[i + 1] >> 4];
		*o++ = b64_alphabet[(s[i + 1] & 15) << 2 | s[i + 2] >> 6];
		*o++ = b64_alphabet[s[i + 2] & 63];
	}
	if (n - i == 1) {
		*o++ = b64_alphabet[s[i] >> 2];
		*o++ = b64_alphabet[(s[i] & 3) << 4];
		*o++ = '=';
		*o++ = '=';
	} else if (n - i == 2) {
		*o++ = b64_alphabet[s[i] >> 2];
		*o++ = b64_alphabet[(s[i] & 3) << 4 | s[i + 1] >> 4];
		*o++ = b64_alphabet[(s[i + 1] & 15) << 2];
		*o++ = '=';
	}
	b->len = (size_t)(o - b->p);
}

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Decodes one quantum of q data characters (4, 3 or 2); the bits that
 * padding leaves over must be zero, else the text would not re-encode.
 */
static int
b64_quantum(const char *s, int q, struct buf *out)
{
	uint32_t v = 0;
	unsigned char o[3];
	int j, d;

	for (j = 0; j < 4; j++) {
		d = j < q ? b64_value((unsigned char)s[j]) : 0;
		if (d < 0)
			return -1;
		v = v << 6 | (uint32_t)d;
	}
	if ((q == 3 && (v & 0xff)) || (q == 2 && (v & 0xffff)))
		return -1;
	o[0] = (unsigned char)(v >> 16);
	o[1] = (unsigned char)(v >> 8);
	o[2] = (unsigned char)v;
	buf_add(out, o, (size_t)q - 1);
	return 0;
}

int
b64_decode_canonical(const char *s, size_t n, struct buf *out)
{
	size_t i, pad = 0;

	buf_clear(out);
	if (n % 4)
		goto bad;
	buf_reserve(out, n / 4 * 3);
	if (n && s[n - 1] == '=')
		pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
	for (i = 0; i < n; i += 4)
		if (b64_quantum(s + i, i + 4 == n ? 4 - (int)pad : 4, out) < 0)
			goto bad;
	return 0;
bad:
	buf_clear(out);
	return -1;
}
