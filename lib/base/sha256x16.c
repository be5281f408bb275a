/*
 * sha256x16.c - many short SHA-256 messages at once
 *
 * A verification hashes every line of both logs on its own, three times
 * for an audit line: hundreds of thousands of messages of a few hundred
 * bytes.  One stream of the SHA extensions (libcrypto) does 1.1 to 1.7
 * GB/s on such messages, because each round waits on the one before it
 * (sha256rnds2's latency) while the unit could start another.  Two ways
 * past that, each a set of lanes holding one message apiece, refilled as
 * their messages end, so messages of different lengths waste no rounds:
 *   - two lanes in the SHA extensions, the rounds of two messages
 *     interleaved (sha256_x2): 2.4 to 2.9 GB/s on a core of an AMD EPYC
 *     with both, where sixteen AVX-512 lanes do 1.4 to 1.7;
 *   - sixteen lanes, the 32-bit lanes of AVX-512 registers, a block of
 *     each per compression (sha256_x16): about 2.3 GB/s on an Intel core
 *     where one stream did 1.1.
 * sha256_lanes picks the first the CPU has, or what HW_SHA256_LANES says
 * (1: one message at a time through libcrypto; 2; 16).
 */
#include <cpuid.h>
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};
static const uint32_t IV[8] = {
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f,
	0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
};

#define X16 __attribute__((target("avx512f,avx512bw")))
#define ROR _mm512_ror_epi32
#define ADD _mm512_add_epi32
/* ternary logic: 0x96 is a ^ b ^ c, 0xca a ? b : c, 0xe8 the majority */
#define TERN _mm512_ternarylogic_epi32

/* transpose: r[i] holds block i's words; after, r[j] word j of each */
X16 static inline void
transpose(__m512i r[16])
{
	__m512i t[16];
	int i, j;

	for (i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
	}
	for (i = 0; i < 16; i += 4) {
		r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
		r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
		r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
		r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	for (i = 0; i < 16; i += 8)
		for (j = 0; j < 4; j++) {
			t[i + j] = _mm512_shuffle_i32x4(r[i + j], r[i + j + 4],
			    0x88);
			t[i + j + 4] = _mm512_shuffle_i32x4(r[i + j],
			    r[i + j + 4], 0xdd);
		}
	for (i = 0; i < 8; i++) {
		r[i] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0x88);
		r[i + 8] = _mm512_shuffle_i32x4(t[i], t[i + 8], 0xdd);
	}
}

/* one round; the caller rotates the names instead of the values */
#define RND(a, b, c, d, e, f, g, h, t, w) do {				\
	__m512i t1_ = ADD(ADD(ADD(h, ADD(_mm512_set1_epi32(K[t]), w)),	\
	    TERN(e, f, g, 0xca)),						\
	    TERN(ROR(e, 6), ROR(e, 11), ROR(e, 25), 0x96));		\
	__m512i t2_ = ADD(TERN(ROR(a, 2), ROR(a, 13), ROR(a, 22), 0x96),	\
	    TERN(a, b, c, 0xe8));						\
	d = ADD(d, t1_);						\
	h = ADD(t1_, t2_);						\
} while (0)
/* the schedule: w[j mod 16] becomes word j (j >= 16) */
#define W(j) (w[(j) & 15] = ADD(ADD(w[(j) & 15],			\
	TERN(ROR(w[((j) + 1) & 15], 7), ROR(w[((j) + 1) & 15], 18),	\
	    _mm512_srli_epi32(w[((j) + 1) & 15], 3), 0x96)),		\
	ADD(w[((j) + 9) & 15], TERN(ROR(w[((j) + 14) & 15], 17),		\
	    ROR(w[((j) + 14) & 15], 19),					\
	    _mm512_srli_epi32(w[((j) + 14) & 15], 10), 0x96))))
#define R8(t, w0, w1, w2, w3, w4, w5, w6, w7) do {			\
	RND(a, b, c, d, e, f, g, h, t, w0);				\
	RND(h, a, b, c, d, e, f, g, (t) + 1, w1);			\
	RND(g, h, a, b, c, d, e, f, (t) + 2, w2);			\
	RND(f, g, h, a, b, c, d, e, (t) + 3, w3);			\
	RND(e, f, g, h, a, b, c, d, (t) + 4, w4);			\
	RND(d, e, f, g, h, a, b, c, (t) + 5, w5);			\
	RND(c, d, e, f, g, h, a, b, (t) + 6, w6);			\
	RND(b, c, d, e, f, g, h, a, (t) + 7, w7);			\
} while (0)

/* sixteen rounds from t on, the schedule computed as they go */
#define R16(t) do {							\
	R8(t, W(t), W((t) + 1), W((t) + 2), W((t) + 3), W((t) + 4),	\
	    W((t) + 5), W((t) + 6), W((t) + 7));				\
	R8((t) + 8, W((t) + 8), W((t) + 9), W((t) + 10), W((t) + 11),	\
	    W((t) + 12), W((t) + 13), W((t) + 14), W((t) + 15));		\
} while (0)

/* compress: st[k][lane] is word k of each lane's state; blk[lane] 64 bytes */
X16 static void
compress(uint32_t st[8][16], const unsigned char *const blk[16])
{
	const __m512i bswap = _mm512_broadcast_i32x4(_mm_set_epi8(12, 13,
	    14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3));
	__m512i w[16], a, b, c, d, e, f, g, h;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = _mm512_shuffle_epi8(_mm512_loadu_si512(blk[i]), bswap);
	transpose(w);
	a = _mm512_load_si512(st[0]);
	b = _mm512_load_si512(st[1]);
	c = _mm512_load_si512(st[2]);
	d = _mm512_load_si512(st[3]);
	e = _mm512_load_si512(st[4]);
	f = _mm512_load_si512(st[5]);
	g = _mm512_load_si512(st[6]);
	h = _mm512_load_si512(st[7]);
	R8(0, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
	R8(8, w[8], w[9], w[10], w[11], w[12], w[13], w[14], w[15]);
	/* written out: with constant indices w[] stays in registers */
	R16(16);
	R16(32);
	R16(48);
	_mm512_store_si512(st[0], ADD(a, _mm512_load_si512(st[0])));
	_mm512_store_si512(st[1], ADD(b, _mm512_load_si512(st[1])));
	_mm512_store_si512(st[2], ADD(c, _mm512_load_si512(st[2])));
	_mm512_store_si512(st[3], ADD(d, _mm512_load_si512(st[3])));
	_mm512_store_si512(st[4], ADD(e, _mm512_load_si512(st[4])));
	_mm512_store_si512(st[5], ADD(f, _mm512_load_si512(st[5])));
	_mm512_store_si512(st[6], ADD(g, _mm512_load_si512(st[6])));
	_mm512_store_si512(st[7], ADD(h, _mm512_load_si512(st[7])));
}

struct lane {
	const struct sha256_job *j;	/* NULL: idle */
	size_t blk, nblk;	/* the next block; how many in all */
	unsigned char buf[64];	/* a block that is not the job's bytes */
};

/*
 * block: the lane's next 64 bytes of padded message (the prefix byte, the
 * job's bytes, 0x80, zeros, the length in bits), pointing into the job's
 * bytes where a whole block lies there
 */
static const unsigned char *
block(struct lane *l)
{
	const struct sha256_job *j = l->j;
	size_t pre = j->has_pre != 0, len = pre + j->n, s = l->blk * 64;
	size_t from, to, at;
	uint64_t bits;
	int i;

	if (!pre && s + 64 <= len)
		return (const unsigned char *)j->p + s;
	memset(l->buf, 0, 64);
	if (pre && s == 0)
		l->buf[0] = j->pre;
	/* the job's bytes [from, to) go to buf + at */
	from = s > pre ? s - pre : 0;
	at = s > pre ? 0 : pre - s;
	to = s + 64 < len ? s + 64 - pre : j->n;
	if (from < to)
		memcpy(l->buf + at, (const unsigned char *)j->p + from,
		    to - from);
	if (len >= s && len < s + 64)
		l->buf[len - s] = 0x80;
	if (l->blk + 1 == l->nblk) {
		bits = (uint64_t)len * 8;
		for (i = 0; i < 8; i++)
			l->buf[63 - i] = (unsigned char)(bits >> (8 * i));
	}
	return l->buf;
}

static const unsigned char zeros[64];

/* lane_start: the lane takes job j from its first block */
static void
lane_start(struct lane *l, const struct sha256_job *j)
{
	l->j = j;
	l->blk = 0;
	/* the bytes, 0x80 and 8 of length, in whole blocks */
	l->nblk = ((j->has_pre != 0) + j->n + 8) / 64 + 1;
}

/* be32: word x, big-endian, at out */
static void
be32(unsigned char *out, uint32_t x)
{
	out[0] = (unsigned char)(x >> 24);
	out[1] = (unsigned char)(x >> 16);
	out[2] = (unsigned char)(x >> 8);
	out[3] = (unsigned char)x;
}

X16 void
sha256_x16(const struct sha256_job *jobs, size_t n)
{
	_Alignas(64) uint32_t st[8][16];
	struct lane lane[16];
	const unsigned char *blk[16];
	size_t next = 0;
	int i, k, active = 0;

	memset(lane, 0, sizeof lane);
	memset(st, 0, sizeof st);
	for (;;) {
		for (i = 0; i < 16; i++) {
			if (lane[i].j || next == n)
				continue;
			lane_start(&lane[i], &jobs[next++]);
			for (k = 0; k < 8; k++)
				st[k][i] = IV[k];
			active++;
		}
		if (!active)
			break;
		for (i = 0; i < 16; i++)
			blk[i] = lane[i].j ? block(&lane[i]) : zeros;
		compress(st, blk);
		for (i = 0; i < 16; i++) {
			if (!lane[i].j || ++lane[i].blk < lane[i].nblk)
				continue;
			for (k = 0; k < 8; k++)
				be32(lane[i].j->out + 4 * k, st[k][i]);
			lane[i].j = NULL;
			active--;
		}
	}
}

/*
 * Two lanes in the SHA extensions.  A state is held as the extensions
 * want it: ABEF in one register, CDGH in the other.
 */
#define NI __attribute__((target("sha,sse4.1,ssse3")))
/* four rounds from group g's four words w (with K added) */
#define QR(abef, cdgh, wk) do {						\
	__m128i wk_ = (wk);						\
	cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk_);			\
	abef = _mm_sha256rnds2_epu32(abef, cdgh,			\
	    _mm_shuffle_epi32(wk_, 0x0e));				\
} while (0)
/* the schedule: w[g mod 4] becomes group g's words (g >= 4) */
#define WS(w, g) (w[(g) & 3] = _mm_sha256msg2_epu32(_mm_add_epi32(	\
	_mm_sha256msg1_epu32(w[(g) & 3], w[((g) + 1) & 3]),		\
	_mm_alignr_epi8(w[((g) + 3) & 3], w[((g) + 2) & 3], 4)),	\
	w[((g) + 3) & 3]))
#define KG(g) _mm_loadu_si128((const __m128i *)&K[4 * (g)])

/* ni_words: the four words of group g of block b, byte-swapped */
NI static inline __m128i
ni_words(const unsigned char *b, int g)
{
	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(b +
	    16 * g)), _mm_set_epi64x(0x0c0d0e0f08090a0bULL,
	    0x0405060700010203ULL));
}

/*
 * ni_compress2: k blocks of each of two messages (64 bytes apart from b0
 * and from b1), their rounds interleaved
 */
NI static void
ni_compress2(__m128i st[2][2], const unsigned char *b0,
    const unsigned char *b1, size_t k)
{
	__m128i a0 = st[0][0], c0 = st[0][1], a1 = st[1][0], c1 = st[1][1];
	__m128i s0, t0, s1, t1, w0[4], w1[4];
	int g;

	for (; k > 0; k--, b0 += 64, b1 += 64) {
		s0 = a0, t0 = c0, s1 = a1, t1 = c1;
		for (g = 0; g < 4; g++) {
			w0[g] = ni_words(b0, g);
			w1[g] = ni_words(b1, g);
			QR(a0, c0, _mm_add_epi32(w0[g], KG(g)));
			QR(a1, c1, _mm_add_epi32(w1[g], KG(g)));
		}
#pragma GCC unroll 12
		for (g = 4; g < 16; g++) {
			QR(a0, c0, _mm_add_epi32(WS(w0, g), KG(g)));
			QR(a1, c1, _mm_add_epi32(WS(w1, g), KG(g)));
		}
		a0 = _mm_add_epi32(a0, s0);
		c0 = _mm_add_epi32(c0, t0);
		a1 = _mm_add_epi32(a1, s1);
		c1 = _mm_add_epi32(c1, t1);
	}
	st[0][0] = a0, st[0][1] = c0, st[1][0] = a1, st[1][1] = c1;
}

/* ni_compress1: k blocks of one message, when the other lane is idle */
NI static void
ni_compress1(__m128i st[2], const unsigned char *b, size_t k)
{
	__m128i a = st[0], c = st[1], s, t, w[4];
	int g;

	for (; k > 0; k--, b += 64) {
		s = a, t = c;
		for (g = 0; g < 4; g++) {
			w[g] = ni_words(b, g);
			QR(a, c, _mm_add_epi32(w[g], KG(g)));
		}
#pragma GCC unroll 12
		for (g = 4; g < 16; g++)
			QR(a, c, _mm_add_epi32(WS(w, g), KG(g)));
		a = _mm_add_epi32(a, s);
		c = _mm_add_epi32(c, t);
	}
	st[0] = a, st[1] = c;
}

/* ni_start: the initial state, as ABEF and CDGH */
NI static void
ni_start(__m128i st[2])
{
	st[0] = _mm_set_epi32((int)IV[0], (int)IV[1], (int)IV[4],
	    (int)IV[5]);
	st[1] = _mm_set_epi32((int)IV[2], (int)IV[3], (int)IV[6],
	    (int)IV[7]);
}

/* ni_digest: the state's words A to H, big-endian, at out */
NI static void
ni_digest(const __m128i st[2], unsigned char *out)
{
	_Alignas(16) uint32_t abef[4], cdgh[4];

	_mm_store_si128((__m128i *)abef, st[0]);	/* F, E, B, A */
	_mm_store_si128((__m128i *)cdgh, st[1]);	/* H, G, D, C */
	be32(out, abef[3]);
	be32(out + 4, abef[2]);
	be32(out + 8, cdgh[3]);
	be32(out + 12, cdgh[2]);
	be32(out + 16, abef[1]);
	be32(out + 20, abef[0]);
	be32(out + 24, cdgh[1]);
	be32(out + 28, cdgh[0]);
}

/* direct: how many whole blocks from the lane's next on lie in its job */
static size_t
direct(const struct lane *l)
{
	size_t whole = l->j->has_pre ? 0 : l->j->n / 64;

	return whole > l->blk ? whole - l->blk : 0;
}

NI void
sha256_x2(const struct sha256_job *jobs, size_t n)
{
	__m128i st[2][2];
	struct lane lane[2];
	size_t next = 0, k;
	int i;

	memset(lane, 0, sizeof lane);
	for (;;) {
		for (i = 0; i < 2; i++)
			if (!lane[i].j && next < n) {
				lane_start(&lane[i], &jobs[next++]);
				ni_start(st[i]);
			}
		/* as many blocks at once as lie whole in both jobs, or one */
		if (lane[0].j && lane[1].j) {
			k = direct(&lane[0]) < direct(&lane[1]) ?
			    direct(&lane[0]) : direct(&lane[1]);
			if (k > 0)
				ni_compress2(st, (const unsigned char *)
				    lane[0].j->p + 64 * lane[0].blk,
				    (const unsigned char *)lane[1].j->p + 64 *
				    lane[1].blk, k);
			else
				ni_compress2(st, block(&lane[0]),
				    block(&lane[1]), k = 1);
		} else if (lane[0].j || lane[1].j) {
			i = lane[1].j != NULL;
			if ((k = direct(&lane[i])) > 0)
				ni_compress1(st[i], (const unsigned char *)
				    lane[i].j->p + 64 * lane[i].blk, k);
			else
				ni_compress1(st[i], block(&lane[i]), k = 1);
		} else
			break;
		for (i = 0; i < 2; i++) {
			if (!lane[i].j || (lane[i].blk += k) < lane[i].nblk)
				continue;
			ni_digest(st[i], lane[i].j->out);
			lane[i].j = NULL;
		}
	}
}

int
sha256_x16_ok(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") &&
	    __builtin_cpu_supports("avx512bw");
}

int
sha256_x2_ok(void)
{
	unsigned a, b, c, d;

	/* leaf 1: SSSE3 (ECX bit 9), SSE4.1 (19); leaf 7: SHA (EBX bit 29) */
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & 1u << 9) ||
	    !(c & 1u << 19))
		return 0;
	return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & 1u << 29);
}

int
sha256_lanes(void)
{
	static _Atomic int lanes = 0;	/* 0: not yet asked */
	const char *e;
	int v = lanes;

	if (v == 0) {
		/* asked once: sha256_many calls this for every set of jobs */
		e = getenv("HW_SHA256_LANES");
		if (e && strcmp(e, "1") == 0)
			v = 1;
		else if (e && strcmp(e, "2") == 0)
			v = sha256_x2_ok() ? 2 : 1;
		else if (e && strcmp(e, "16") == 0)
			v = sha256_x16_ok() ? 16 : 1;
		else
			v = sha256_x2_ok() ? 2 : sha256_x16_ok() ? 16 : 1;
		lanes = v;
	}
	return v;
}
