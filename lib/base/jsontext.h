/*
 * jsontext.h - what the JSON parser (json.c) and the canonical scan
 * (jscan.c) both read text by: the bytes that stand for themselves, hex
 * escapes, digits and key order
 */
#ifndef BASE_JSONTEXT_H
#define BASE_JSONTEXT_H

#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
 * plain_run: how many bytes from p on stand for themselves: sixteen at a
 * time where there is SSE2 (every x86-64), then eight.  A false alarm in
 * word_special lies only above a true one, so on a little-endian machine
 * its lowest flagged byte is the first special byte.
 */
static inline size_t
plain_run(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *q = p;
	uint64_t m;
#ifdef __SSE2__
	/* sixteen bytes at a time: plain is > 0x1f and < 0x7f, signed */
	const __m128i lo = _mm_set1_epi8(0x1f), hi = _mm_set1_epi8(0x7f);
	const __m128i quote = _mm_set1_epi8('"'), bs = _mm_set1_epi8('\\');
	__m128i x;
	unsigned m16;

	while (end - q >= 16) {
		x = _mm_loadu_si128((const __m128i *)q);
		m16 = (unsigned)_mm_movemask_epi8(_mm_andnot_si128(
		    _mm_or_si128(_mm_cmpeq_epi8(x, quote),
		    _mm_cmpeq_epi8(x, bs)), _mm_and_si128(
		    _mm_cmpgt_epi8(x, lo), _mm_cmplt_epi8(x, hi)))) ^ 0xffff;
		if (m16)
			return (size_t)(q - p) + (size_t)__builtin_ctz(m16);
		q += 16;
	}
#endif

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
