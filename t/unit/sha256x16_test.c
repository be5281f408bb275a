/*
 * sha256x16_test - sha256_many against libcrypto one message at a time:
 * FIPS 180-4's vectors, every length from 0 to 300 bytes with and without
 * the prefix byte (every place the padding and the length can fall),
 * batches of every size from 1 to 40 whose lengths differ so that lanes
 * end and refill at different blocks, long messages beside short ones,
 * and unaligned bytes.  The lanes are tested directly where the CPU has
 * them (said in a note when it does not), and sha256_many both ways.
 */
#include <stdint.h>
#include <stdlib.h>

#include "base/base.h"
#include "tap.h"

#define MAXLEN 5000

/* want: libcrypto's digest of the job */
static void
want(const struct sha256_job *j, unsigned char out[32])
{
	struct sha256 h;

	sha256_init(&h);
	if (j->has_pre)
		sha256_update(&h, &j->pre, 1);
	sha256_update(&h, j->p, j->n);
	sha256_final(&h, out);
	sha256_release(&h);
}

/* run: how many jobs' digests differ from libcrypto's, hashed in lanes */
static int
run(struct sha256_job *jobs, size_t n, int lanes)
{
	unsigned char w[32];
	size_t i;
	int bad = 0;

	for (i = 0; i < n; i++)
		memset(jobs[i].out, 0xee, 32);
	if (lanes == 16)
		sha256_x16(jobs, n);
	else if (lanes == 2)
		sha256_x2(jobs, n);
	else
		sha256_many(jobs, n);
	for (i = 0; i < n; i++) {
		want(&jobs[i], w);
		if (memcmp(w, jobs[i].out, 32) != 0) {
			if (!bad)
				printf("#   job %zu of %zu: %zu bytes, prefix "
				    "%d\n", i, n, jobs[i].n, jobs[i].has_pre);
			bad++;
		}
	}
	return bad;
}

static unsigned char data[MAXLEN + 64];
static unsigned char outs[64][32];

static void
vectors(void)
{
	static const struct {
		const char *msg, *hex;
	} v[] = {
		{ "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b"
		    "7852b855" },
		{ "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410f"
		    "f61f20015ad" },
		{ "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd4"
		    "19db06c1" },
	};
	struct sha256_job j[3];
	char hex[65];
	size_t i;

	for (i = 0; i < 3; i++)
		j[i] = (struct sha256_job){ v[i].msg, strlen(v[i].msg), 0, 0,
		    outs[i] };
	sha256_many(j, 3);
	for (i = 0; i < 3; i++) {
		hex_encode(outs[i], 32, hex);
		is_str(hex, v[i].hex, "FIPS 180-4 vector %zu", i);
	}
}

static void
lengths(int lanes, const char *how)
{
	struct sha256_job j[16];
	int pre, bad = 0;
	size_t len, k;

	/* 16 consecutive lengths per batch: each lane ends at its own block */
	for (pre = 0; pre < 2; pre++)
		for (len = 0; len <= 300; len += 16) {
			for (k = 0; k < 16; k++)
				j[k] = (struct sha256_job){ data + k, len + k,
				    0x00, pre, outs[k] };
			bad += run(j, 16, lanes);
		}
	ok(bad == 0, "%s: every length 0..315, with and without a prefix "
	    "byte, at unaligned addresses", how);
}

/* one job at a time: libcrypto's path of sha256_many */
static void
singles(void)
{
	struct sha256_job j;
	size_t len;
	int bad = 0;

	for (len = 0; len <= 300; len++) {
		j = (struct sha256_job){ data + 1, len, 0x00, (int)(len % 2),
		    outs[0] };
		bad += run(&j, 1, 0);
	}
	ok(bad == 0, "one job at a time: every length 0..300");
}

static void
batches(int lanes, const char *how)
{
	struct sha256_job j[40];
	size_t n, k;
	int bad = 0;

	srand(7);
	for (n = 1; n <= 40; n++) {
		for (k = 0; k < n; k++)
			j[k] = (struct sha256_job){ data + rand() % 64,
			    (size_t)rand() % (k % 5 == 0 ? MAXLEN : 600),
			    (unsigned char)rand(), rand() % 2, outs[k] };
		bad += run(j, n, lanes);
	}
	ok(bad == 0, "%s: batches of 1 to 40 jobs, lengths up to %d, "
	    "lanes refilled as they end", how, MAXLEN);
}

/* the lanes sha256_many may take, each tested where the CPU has them */
static const struct {
	int lanes;
	int (*has)(void);
	const char *how, *needs;
} kinds[] = {
	{ 2, sha256_x2_ok, "two lanes", "the SHA extensions" },
	{ 16, sha256_x16_ok, "sixteen lanes", "AVX-512" },
};

/* hex_encode: every byte value, at every length around its wide steps */
static void
hex(void)
{
	unsigned char b[256];
	char out[2 * 256 + 1], want[2 * 256 + 1];
	size_t i, n;
	int bad = 0;

	for (i = 0; i < 256; i++)
		b[i] = (unsigned char)(i * 167 + 13);
	for (n = 0; n <= 256; n += n < 40 ? 1 : 72) {
		memset(out, 'x', sizeof out);
		for (i = 0; i < n; i++)
			snprintf(want + 2 * i, 3, "%02x", b[i]);
		want[2 * n] = '\0';
		hex_encode(b, n, out);
		bad += strcmp(out, want) != 0;
	}
	ok(bad == 0, "hex_encode writes every byte value as %%02x does, at "
	    "lengths 0 to 40 and on to 256 (%d wrong)", bad);
}

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 131 + (i >> 7));
	hex();
	vectors();
	singles();
	lengths(0, "sha256_many");
	batches(0, "sha256_many");
	for (i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (kinds[i].has()) {
			lengths(kinds[i].lanes, kinds[i].how);
			batches(kinds[i].lanes, kinds[i].how);
			continue;
		}
		printf("# this CPU lacks %s: %s not tested\n", kinds[i].needs,
		    kinds[i].how);
		ok(1, "%s: not on this CPU", kinds[i].how);
		ok(1, "%s: not on this CPU", kinds[i].how);
	}
	return tap_done();
}
