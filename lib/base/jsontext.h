/*
 * jsontext.h - what the JSON parser (json.c) and the canonical scan
 * (jscan.c) both read text by: the bytes that stand for themselves, hex
 * escapes, digits and key order
 */
#ifndef BASE_JSONTEXT_H
#define BASE_JSONTEXT_H

#include <stdint.h>
#include <string.h>

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL
#define HASZERO(v) (((v) - ONES) & ~(v) & HIGHS)

/*
 * word_special is nonzero when one of the 8 bytes at p may need escaping
 * (a control, '"', '\\', DEL or non-ASCII); false alarms are harmless.
 */
static inline uint64_t
word_special(const unsigned char *p)
{
	uint64_t x;

	memcpy(&x, p, 8);
	return HASZERO(x & ~(ONES * 0x1f)) | /* a byte < 0x20 */
	    HASZERO(x ^ (ONES * '"')) | HASZERO(x ^ (ONES * '\\')) |
	    ((x | (x + ONES)) & HIGHS);	/* >= 0x7f (carries only add) */
}

/* plain[c]: the byte stands for itself in canonical JSON */
static const unsigned char plain[256] = {
	[0x20] = 1, [0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

/*
 * plain_run: how many bytes from p on stand for themselves.  A false alarm
 * in word_special lies only above a true one, so on a little-endian machine
 * its lowest flagged byte is the first special byte.
 */
static inline size_t
plain_run(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *q = p;
	uint64_t m;

	while (end - q >= 8) {
		if ((m = word_special(q))) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return (size_t)(q - p) + (size_t)(__builtin_ctzll(m) >> 3);
#else
			break;
#endif
		}
		q += 8;
	}
	while (q < end && plain[*q])
		q++;
	return (size_t)(q - p);
}

static inline int
hex4(const char *p, uint32_t *out)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

static inline int
lower_hex4(const char *p)
{
	int i;

	for (i = 0; i < 4; i++)
		if (p[i] >= 'A' && p[i] <= 'F')
			return 0;
	return 1;
}

static inline int
isdig(char c)
{
	return c >= '0' && c <= '9';
}

/* key_cmp: byte order; keys are short and differ early, so no memcmp */
static inline int
key_cmp(const char *a, size_t an, const char *b, size_t bn)
{
	size_t i, n = an < bn ? an : bn;

	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return (unsigned char)a[i] - (unsigned char)b[i];
	return (an > bn) - (an < bn);
}

#endif
