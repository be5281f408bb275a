/*
 * sha256.c - SHA-256 through libcrypto's own SHA256 functions, which use
 * the CPU's SHA extensions.  They are deprecated in OpenSSL 3 in favour of
 * EVP, but EVP costs a provider fetch and its configuration at the first
 * digest and about 0.1 us more per digest (final and init through the
 * provider), which is a sixth of a short record's hash; the digests are
 * the same.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "base/base.h"

void
sha256_init(struct sha256 *h)
{
	h->ctx = xmalloc(sizeof(SHA256_CTX));
	SHA256_Init(h->ctx);
}

void
sha256_update(struct sha256 *h, const void *p, size_t n)
{
	SHA256_Update(h->ctx, p, n);
}

void
sha256_final(struct sha256 *h, unsigned char out[32])
{
	SHA256_Final(out, h->ctx);
	SHA256_Init(h->ctx);
}

void
sha256_release(struct sha256 *h)
{
	free(h->ctx);
	h->ctx = NULL;
}

/* the two hex digits of every byte */
static const char pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/*
 * hex_encode: sixteen bytes at a time with SSE2 (verify encodes two digests
 * a record), each nibble n becoming '0' + n, and 'a' - 10 + n past 9; the
 * rest from the table of pairs
 */
void
hex_encode(const unsigned char *p, size_t n, char *out)
{
	size_t i = 0;
#ifdef __SSE2__
	const __m128i nib = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9);
	const __m128i zero = _mm_set1_epi8('0');
	const __m128i gap = _mm_set1_epi8('a' - '0' - 10);
	__m128i v, hi, lo, a, b;

	for (; i + 16 <= n; i += 16) {
		v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
		hi = _mm_and_si128(_mm_srli_epi16(v, 4), nib);
		lo = _mm_and_si128(v, nib);
		a = _mm_unpacklo_epi8(hi, lo);
		b = _mm_unpackhi_epi8(hi, lo);
		a = _mm_add_epi8(_mm_add_epi8(a, zero),
		    _mm_and_si128(_mm_cmpgt_epi8(a, nine), gap));
		b = _mm_add_epi8(_mm_add_epi8(b, zero),
		    _mm_and_si128(_mm_cmpgt_epi8(b, nine), gap));
		_mm_storeu_si128((__m128i *)(void *)(out + 2 * i), a);
		_mm_storeu_si128((__m128i *)(void *)(out + 2 * i + 16), b);
	}
#endif
	for (; i < n; i++)
		memcpy(out + 2 * i, pairs + 2 * p[i], 2);
	out[2 * n] = '\0';
}

static _Thread_local struct sha256 hex_ctx;

void
sha256_thread_done(void)
{
	if (hex_ctx.ctx)
		sha256_release(&hex_ctx);
}

void
sha256_hex(const void *p, size_t n, char out[SHA256_HEX + 1])
{
	struct sha256 *h = &hex_ctx;
	unsigned char d[32];

	if (!h->ctx)
		sha256_init(h);
	sha256_update(h, p, n);
	sha256_final(h, d);
	hex_encode(d, 32, out);
}

void
sha256_many(const struct sha256_job *jobs, size_t n)
{
	struct sha256 *h = &hex_ctx;
	size_t i;

	/* a lone message has no lanes to share */
	switch (n > 1 ? sha256_lanes() : 1) {
	case 2:
		sha256_x2(jobs, n);
		return;
	case 16:
		sha256_x16(jobs, n);
		return;
	}
	if (!h->ctx)
		sha256_init(h);
	for (i = 0; i < n; i++) {
		if (jobs[i].has_pre)
			sha256_update(h, &jobs[i].pre, 1);
		sha256_update(h, jobs[i].p, jobs[i].n);
		sha256_final(h, jobs[i].out);
	}
}

void
json_hash(const struct jval *v, struct buf *scratch, char out[HW_HASH_LEN + 1])
{
	buf_clear(scratch);
	json_canon(scratch, v);
	memcpy(out, "sha256:", 7);
	sha256_hex(scratch->p, scratch->len, out + 7);
}
