/*
 * merkle_test - RFC 9162 Merkle trees: the RFC 6962 reference vectors of
 * transparency-dev/merkle, the streaming root against the tree and a naive
 * recursion, every inclusion and consistency proof of small trees with
 * tampering, sizes near 2^64, and refused arguments.  With --ref it reads
 * JSON lines of leaf hex strings on stdin and prints what t/merkle_ref.py
 * prints, to be compared with that independent model.
 */
#include <stdint.h>
#include <stdlib.h>

#include "audit/audit.h"
#include "tap.h"

#define BIG 300		/* the shared tree: prefixes 0..BIG */
#define ALL 130		/* every proof of every prefix up to ALL */

static const char *const data_hex[8] = {
	"", "00", "10", "2021", "3031", "40414243", "5051525354555657",
	"606162636465666768696a6b6c6d6e6f",
};
static const char *const root_hex[8] = {
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};
#define EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

/* (index, size, proof) and (size1, size2, proof), 0-based indices */
static const struct vec {
	uint64_t a, b;
	size_t len;
	const char *p[3];
} incl_vec[] = {
	{ 0, 1, 0, { NULL } },
	{ 0, 8, 3, {
	    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
	    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
	    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	} },
	{ 5, 8, 3, {
	    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
	    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
	    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	} },
	{ 2, 3, 1, {
	    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	} },
	{ 1, 5, 3, {
	    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
	    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
	} },
}, cons_vec[] = {
	{ 1, 1, 0, { NULL } },
	{ 1, 8, 3, {
	    "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
	    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
	    "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
	} },
	{ 6, 8, 3, {
	    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
	    "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
	    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	} },
	{ 2, 5, 2, {
	    "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
	    "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
	} },
	{ 6, 7, 3, {
	    "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
	    "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
	    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	} },
};

static mhash L[BIG];		/* leaf hashes of the shared tree */
static mhash R[BIG + 1];	/* R[n]: root of its first n leaves */
static struct merkle_tree T;

static int
nibble(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* unhex decodes a string of hex digit pairs; returns the byte count */
static size_t
unhex(const char *s, unsigned char *out)
{
	size_t i;

	for (i = 0; s[2 * i] && s[2 * i + 1]; i++)
		out[i] = (unsigned char)(nibble(s[2 * i]) << 4 |
		    nibble(s[2 * i + 1]));
	return i;
}

static int
same(const mhash h, const char *hex)
{
	char got[65];

	hex_encode(h, 32, got);
	if (strcmp(got, hex) != 0)
		printf("#   got:  %s\n#   want: %s\n", got, hex);
	return strcmp(got, hex) == 0;
}

static mhash *
copy_leaves(const mhash *src, uint64_t n)
{
	mhash *p = xmalloc(n * sizeof *p);

	memcpy(p, src, n * sizeof *p);
	return p;
}

/* MTH straight from the RFC's recursion, over leaf hashes */
static void
naive_root(const mhash *d, uint64_t n, mhash out)
{
	mhash l, r;
	uint64_t k = 1;

	if (n == 0) {
		unhex(EMPTY, out);
		return;
	}
	if (n == 1) {
		memcpy(out, d[0], sizeof(mhash));
		return;
	}
	while (2 * k < n)
		k *= 2;
	naive_root(d, k, l);
	naive_root(d + k, n - k, r);
	merkle_node_hash(l, r, out);
}

/* ceil(log2 n): the depth of a tree of n leaves */
static size_t
depth(uint64_t n)
{
	size_t d = 0;

	while (d < 64 && ((uint64_t)1 << d) < n)
		d++;
	return d;
}

static void
hashes(void)
{
	mhash h, x, y;
	unsigned char buf[65];
	struct sha256 s;

	merkle_leaf_hash("", 0, h);
	ok(same(h, root_hex[0]), "leaf hash of the empty leaf");
	merkle_leaf_hash("L123456", 7, h);
	ok(same(h, "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad5476392"
	    "52b4d56"), "leaf hash of L123456 (transparency-dev rfc6962)");
	merkle_leaf_hash("a", 1, x);
	merkle_leaf_hash("b", 1, y);
	buf[0] = 0x01;
	memcpy(buf + 1, x, 32);
	memcpy(buf + 33, y, 32);
	sha256_init(&s);
	sha256_update(&s, buf, sizeof buf);
	sha256_final(&s, h);
	sha256_release(&s);
	merkle_node_hash(x, y, x);
	ok(memcmp(h, x, 32) == 0, "node hash is SHA-256(0x01||l||r), in place");
}

static void
reference_roots(void)
{
	mhash leaves[8], h;
	unsigned char d[16];
	struct merkle_tree t;
	struct merkle_stream s;
	int n;

	merkle_stream_init(&s);
	for (n = 0; n < 8; n++)
		merkle_leaf_hash(d, unhex(data_hex[n], d), leaves[n]);
	for (n = 1; n <= 8; n++) {
		merkle_tree_build(&t, copy_leaves(leaves, n), n);
		merkle_tree_root(&t, n, h);
		ok(same(h, root_hex[n - 1]), "reference root of %d leaves", n);
		merkle_stream_push(&s, leaves[n - 1]);
		merkle_stream_root(&s, h);
		ok(same(h, root_hex[n - 1]), "reference stream root of %d", n);
		merkle_tree_release(&t);
	}
	merkle_stream_init(&s);
	merkle_stream_root(&s, h);
	ok(same(h, EMPTY), "stream root of no leaves is SHA-256(\"\")");
	merkle_tree_build(&t, NULL, 0);
	ok(merkle_tree_root(&t, 0, h) == 0 && same(h, EMPTY),
	    "tree root of no leaves is SHA-256(\"\")");
	merkle_tree_release(&t);
}

static int
proof_is(const mhash *p, size_t len, const struct vec *v)
{
	size_t i;

	if (len != v->len)
		return 0;
	for (i = 0; i < len; i++)
		if (!same(p[i], v->p[i]))
			return 0;
	return 1;
}

static void
reference_proofs(struct merkle_tree *t, const mhash *leaves)
{
	mhash p[MERKLE_MAX_PROOF], r1, r2;
	const struct vec *v;
	size_t len, i;

	for (i = 0; i < sizeof incl_vec / sizeof *v; i++) {
		v = &incl_vec[i];
		merkle_tree_root(t, v->b, r1);
		ok(merkle_tree_inclusion(t, v->b, v->a, p, &len) == 0 &&
		    proof_is(p, len, v) && merkle_verify_inclusion(v->a, v->b,
		    leaves[v->a], p, len, r1) == 0,
		    "reference inclusion proof of %d in %d", (int)v->a,
		    (int)v->b);
	}
	for (i = 0; i < sizeof cons_vec / sizeof *v; i++) {
		v = &cons_vec[i];
		merkle_tree_root(t, v->a, r1);
		merkle_tree_root(t, v->b, r2);
		ok(merkle_tree_consistency(t, v->a, v->b, p, &len) == 0 &&
		    proof_is(p, len, v) && merkle_verify_consistency(v->a,
		    v->b, r1, r2, p, len) == 0,
		    "reference consistency proof %d to %d", (int)v->a,
		    (int)v->b);
	}
}

/* node ids from transparency-dev/merkle proof_test.go: (level, index) */
static int
nodes_are(const struct merkle_tree *t, const mhash *p, size_t len,
    const int *ids, size_t nids)
{
	size_t i;

	if (len != nids)
		return 0;
	for (i = 0; i < len; i++)
		if (memcmp(p[i], t->level[ids[2 * i]][ids[2 * i + 1]], 32))
			return 0;
	return 1;
}

static void
reference_shapes(struct merkle_tree *t)
{
	static const int efjk[] = { 0, 4, 0, 5, 0, 6, 2, 0 };
	static const int fjk[] = { 0, 5, 0, 6, 2, 0 };
	static const int jlik[] = { 0, 6, 0, 7, 1, 2, 2, 0 };
	static const int cgi[] = { 0, 2, 1, 0, 1, 2 };
	mhash p[MERKLE_MAX_PROOF];
	size_t len;

	merkle_tree_consistency(t, 5, 7, p, &len);
	ok(nodes_are(t, p, len, efjk, 4), "consistency 5 to 7 is e f j k");
	merkle_tree_inclusion(t, 7, 4, p, &len);
	ok(nodes_are(t, p, len, fjk, 3), "inclusion of 4 in 7 is f j k");
	merkle_tree_consistency(t, 7, 8, p, &len);
	ok(nodes_are(t, p, len, jlik, 4), "consistency 7 to 8 is j d7 i k");
	merkle_tree_inclusion(t, 6, 3, p, &len);
	ok(nodes_are(t, p, len, cgi, 3), "inclusion of 3 in 6 is c g i");
}

static void
reference(void)
{
	mhash leaves[8];
	unsigned char d[16];
	struct merkle_tree t;
	int n;

	reference_roots();
	for (n = 0; n < 8; n++)
		merkle_leaf_hash(d, unhex(data_hex[n], d), leaves[n]);
	merkle_tree_build(&t, copy_leaves(leaves, 8), 8);
	reference_proofs(&t, leaves);
	reference_shapes(&t);
	merkle_tree_release(&t);
}

/* verification edge cases, after transparency-dev's TestVerifyConsistency */
static void
edges(void)
{
	mhash e, a, b, h[1];

	unhex(EMPTY, e);
	merkle_leaf_hash("a", 1, a);
	merkle_leaf_hash("b", 1, b);
	memcpy(h[0], e, 32);
	ok(merkle_verify_consistency(0, 0, e, e, NULL, 0) == 0 &&
	    merkle_verify_consistency(0, 5, e, a, NULL, 0) == 0,
	    "from the empty tree: empty proof, root SHA-256(\"\")");
	ok(merkle_verify_consistency(0, 0, a, a, NULL, 0) == -1 &&
	    merkle_verify_consistency(0, 5, a, b, NULL, 0) == -1 &&
	    merkle_verify_consistency(0, 0, e, a, NULL, 0) == -1,
	    "from the empty tree: any other root refused");
	ok(merkle_verify_consistency(1, 1, a, a, NULL, 0) == 0 &&
	    merkle_verify_consistency(1, 1, a, b, NULL, 0) == -1,
	    "same size: equal roots needed");
	ok(merkle_verify_consistency(0, 0, e, e, h, 1) == -1 &&
	    merkle_verify_consistency(0, 1, e, e, h, 1) == -1 &&
	    merkle_verify_consistency(1, 1, e, e, h, 1) == -1,
	    "trivial cases refuse a non-empty proof");
	ok(merkle_verify_consistency(1, 0, a, b, NULL, 0) == -1 &&
	    merkle_verify_consistency(2, 1, a, b, NULL, 0) == -1,
	    "size1 > size2 refused");
	ok(merkle_verify_consistency(1, 2, a, b, NULL, 0) == -1,
	    "size1 < size2 with an empty proof refused");
	ok(merkle_verify_inclusion(0, 1, a, NULL, 0, a) == 0 &&
	    merkle_verify_inclusion(0, 1, a, NULL, 0, b) == -1 &&
	    merkle_verify_inclusion(0, 1, b, NULL, 0, a) == -1,
	    "one leaf: the empty proof, leaf hash == root");
	ok(merkle_verify_inclusion(0, 0, a, NULL, 0, e) == -1 &&
	    merkle_verify_inclusion(1, 0, a, NULL, 0, a) == -1 &&
	    merkle_verify_inclusion(1, 1, a, NULL, 0, a) == -1 &&
	    merkle_verify_inclusion(2, 1, a, NULL, 0, a) == -1 &&
	    hw_err_code() == HW_EXIT_DATA,
	    "index >= size refused (code 65)");
}

static void
shared_tree(void)
{
	uint64_t i, be;
	int k;

	for (i = 0; i < BIG; i++) {
		for (be = 0, k = 0; k < 8; k++)
			((unsigned char *)&be)[k] = (unsigned char)(i >> (56 -
			    8 * k));
		merkle_leaf_hash(&be, sizeof be, L[i]);
	}
	merkle_tree_build(&T, copy_leaves(L, BIG), BIG);
	for (i = 0; i <= BIG; i++)
		merkle_tree_root(&T, i, R[i]);
}

static void
stream_vs_tree(void)
{
	struct merkle_stream s;
	struct merkle_tree t;
	mhash a, b, c;
	int n, bad = 0;

	merkle_stream_init(&s);
	for (n = 0; n <= BIG; n++) {
		if (n > 0)
			merkle_stream_push(&s, L[n - 1]);
		merkle_stream_root(&s, a);
		naive_root(L, n, b);
		merkle_tree_build(&t, n ? copy_leaves(L, n) : NULL, n);
		merkle_tree_root(&t, n, c);
		merkle_tree_release(&t);
		if (memcmp(a, R[n], 32) || memcmp(b, R[n], 32) ||
		    memcmp(c, R[n], 32)) {
			printf("# roots differ at %d\n", n);
			bad++;
		}
	}
	ok(bad == 0, "stream, naive, own tree and prefix roots agree, "
	    "0..%d leaves", BIG);
	ok(s.size == BIG, "stream counts its leaves");
}

/* tallies of one kind of check over many cases */
struct tally {
	const char *what;
	long n, bad;
};

static void
tally(struct tally *t, int pass, uint64_t a, uint64_t b)
{
	t->n++;
	if (!pass && t->bad++ < 3)
		printf("# %s: fails at %llu, %llu\n", t->what,
		    (unsigned long long)a, (unsigned long long)b);
}

static void
tally_ok(const struct tally *t)
{
	ok(t->bad == 0 && t->n > 0, "%s (%ld cases)", t->what, t->n);
}

enum { I_GEN, I_OK, I_BYTE, I_INDEX, I_SIZE, I_LEAF, I_ROOT, I_LEN, I_END };

static int
vi(uint64_t i, uint64_t n, const mhash leaf, const mhash *p, size_t len,
    const mhash root)
{
	return merkle_verify_inclusion(i, n, leaf, p, len, root) == 0;
}

/*
 * Tampered versions of a good proof of i in n must all fail.  A size
 * n +- 1 with the root of n is the exception RFC 9162 allows: the
 * verifier checks that the proof fits the size's shape, and the root
 * stands for its size only through the signed checkpoint; so n +- 1 is
 * tested with its own root, and the same-root cases are only counted.
 */
static void
inclusion_tamper(struct tally *t, uint64_t i, uint64_t n, mhash *p,
    size_t len, long *loose)
{
	mhash q[MERKLE_MAX_PROOF + 1], leaf;
	size_t j;

	for (j = 0; j < len; j++) {
		p[j][(i + j) % 32] ^= (unsigned char)(1 << (j % 8));
		tally(&t[I_BYTE], !vi(i, n, L[i], p, len, R[n]), i, n);
		p[j][(i + j) % 32] ^= (unsigned char)(1 << (j % 8));
	}
	tally(&t[I_INDEX], !vi(i + 1, n, L[i], p, len, R[n]) &&
	    !vi(i - 1, n, L[i], p, len, R[n]) &&
	    !vi(i ^ 2, n, L[i], p, len, R[n]), i, n);
	tally(&t[I_SIZE], !vi(i, 2 * n, L[i], p, len, R[n]) &&
	    !vi(i, n / 2, L[i], p, len, R[n]) &&
	    !vi(i, n + 1, L[i], p, len, R[n + 1]) &&
	    (n == 1 || !vi(i, n - 1, L[i], p, len, R[n - 1])), i, n);
	*loose += vi(i, n + 1, L[i], p, len, R[n]) ||
	    vi(i, n - 1, L[i], p, len, R[n]);
	memcpy(leaf, L[i], 32);
	leaf[i % 32] ^= 0x80;
	tally(&t[I_LEAF], !vi(i, n, L[i ^ 1], p, len, R[n]) &&
	    !vi(i, n, leaf, p, len, R[n]), i, n);
	tally(&t[I_ROOT], !vi(i, n, L[i], p, len, R[n - 1]), i, n);
	memcpy(q[0], R[n], 32);
	memcpy(q + 1, p, len * sizeof *p);
	memcpy(q[len + 1], R[n], 32);
	tally(&t[I_LEN], (len == 0 || !vi(i, n, L[i], p, len - 1, R[n])) &&
	    !vi(i, n, L[i], q, len + 1, R[n]) &&
	    !vi(i, n, L[i], q + 1, len + 1, R[n]), i, n);
}

static void
inclusion_all(void)
{
	static const char *what[I_END] = {
		"inclusion proofs: prefix and own tree agree, length <= depth",
		"inclusion proofs verify",
		"inclusion: a changed proof byte fails",
		"inclusion: index +1, -1, ^2 fails",
		"inclusion: size *2, /2 fails; size +-1 fails with its root",
		"inclusion: a changed leaf fails",
		"inclusion: another root fails",
		"inclusion: a shorter, longer or shifted proof fails",
	};
	struct tally t[I_END];
	mhash p[MERKLE_MAX_PROOF], q[MERKLE_MAX_PROOF];
	struct merkle_tree own;
	size_t len, qlen;
	uint64_t n, i;
	long loose = 0;
	int k;

	for (k = 0; k < I_END; k++)
		t[k] = (struct tally){ what[k], 0, 0 };
	for (n = 1; n <= ALL; n++) {
		merkle_tree_build(&own, copy_leaves(L, n), n);
		for (i = 0; i < n; i++) {
			merkle_tree_inclusion(&T, n, i, p, &len);
			merkle_tree_inclusion(&own, n, i, q, &qlen);
			tally(&t[I_GEN], len == qlen && len <= depth(n) &&
			    !memcmp(p, q, len * sizeof *p), i, n);
			tally(&t[I_OK], vi(i, n, L[i], p, len, R[n]), i, n);
			inclusion_tamper(t, i, n, p, len, &loose);
		}
		merkle_tree_release(&own);
	}
	for (k = 0; k < I_END; k++)
		tally_ok(&t[k]);
	printf("# %ld of the proofs also verify at size +-1 with the same"
	    " root (see inclusion_tamper)\n", loose);
}

enum { C_GEN, C_OK, C_BYTE, C_ROOTS, C_SIZE, C_LEN, C_TRIVIAL, C_END };

static int
vc(uint64_t m, uint64_t n, const mhash r1, const mhash r2, const mhash *p,
    size_t len)
{
	return merkle_verify_consistency(m, n, r1, r2, p, len) == 0;
}

/* trivial proofs (m == 0 or m == n): changing a root or adding a hash */
static void
consistency_trivial(struct tally *t, uint64_t m, uint64_t n)
{
	mhash x;

	memcpy(x, R[n], 32);
	x[0] ^= 1;
	tally(&t[C_TRIVIAL], !vc(m, n, R[m], R[n], &R[n], 1) &&
	    (m == 0 || !vc(m, n, R[m], x, NULL, 0)) &&
	    !vc(m, n, R[m + 1], R[n], NULL, 0), m, n);
}

static void
consistency_tamper(struct tally *t, uint64_t m, uint64_t n, mhash *p,
    size_t len)
{
	mhash q[MERKLE_MAX_PROOF + 1];
	size_t j;

	for (j = 0; j < len; j++) {
		p[j][(m + n + j) % 32] ^= (unsigned char)(1 << (j % 8));
		tally(&t[C_BYTE], !vc(m, n, R[m], R[n], p, len), m, n);
		p[j][(m + n + j) % 32] ^= (unsigned char)(1 << (j % 8));
	}
	tally(&t[C_ROOTS], !vc(m, n, R[n], R[m], p, len) &&
	    !vc(m, n, R[m - 1], R[n], p, len) &&
	    !vc(m, n, R[m], R[n - 1], p, len) &&
	    !vc(m, n, R[m], R[n + 1], p, len), m, n);
	tally(&t[C_SIZE], !vc(m - 1, n, R[m - 1], R[n], p, len) &&
	    !vc(m + 1, n, R[m + 1], R[n], p, len) &&
	    !vc(m - 1, n, R[m], R[n], p, len) &&
	    !vc(m + 1, n, R[m], R[n], p, len) &&
	    !vc(m ^ 2, n, R[m], R[n], p, len) &&
	    !vc(m, n + 1, R[m], R[n + 1], p, len) &&
	    !vc(m, n - 1, R[m], R[n - 1], p, len) &&
	    !vc(m, 2 * n, R[m], R[n], p, len) &&
	    !vc(m, n / 2, R[m], R[n], p, len), m, n);
	memcpy(q[0], R[m], 32);
	memcpy(q + 1, p, len * sizeof *p);
	memcpy(q[len + 1], R[n], 32);
	tally(&t[C_LEN], !vc(m, n, R[m], R[n], p, len - 1) &&
	    !vc(m, n, R[m], R[n], q, len + 1) &&
	    !vc(m, n, R[m], R[n], q + 1, len + 1), m, n);
}

static void
consistency_all(void)
{
	static const char *what[C_END] = {
		"consistency proofs: prefix and own tree agree, "
		    "length <= depth + 1",
		"consistency proofs verify",
		"consistency: a changed proof byte fails",
		"consistency: swapped or other roots fail",
		"consistency: size1 +-1, ^2 fails; size2 *2, /2 fails; "
		    "size2 +-1 fails with its root",
		"consistency: a shorter, longer or shifted proof fails",
		"consistency: trivial proofs bind their roots",
	};
	struct tally t[C_END];
	mhash p[MERKLE_MAX_PROOF], q[MERKLE_MAX_PROOF];
	struct merkle_tree own;
	size_t len, qlen;
	uint64_t n, m;
	int k;

	for (k = 0; k < C_END; k++)
		t[k] = (struct tally){ what[k], 0, 0 };
	for (n = 0; n <= ALL; n++) {
		merkle_tree_build(&own, n ? copy_leaves(L, n) : NULL, n);
		for (m = 0; m <= n; m++) {
			merkle_tree_consistency(&T, m, n, p, &len);
			merkle_tree_consistency(&own, m, n, q, &qlen);
			tally(&t[C_GEN], len == qlen && len <= depth(n) + 1 &&
			    !memcmp(p, q, len * sizeof *p), m, n);
			tally(&t[C_OK], vc(m, n, R[m], R[n], p, len), m, n);
			if (m == 0 || m == n)
				consistency_trivial(t, m, n);
			else
				consistency_tamper(t, m, n, p, len);
		}
		merkle_tree_release(&own);
	}
	for (k = 0; k < C_END; k++)
		tally_ok(&t[k]);
}

/* proofs in a bigger tree, across powers of two */
static void
larger(void)
{
	enum { N = 5000 };
	static const uint64_t sizes[] = { 1023, 1024, 1025, 2047, 2048, 2049,
	    4095, 4096, 4097, N };
	struct merkle_stream s;
	struct merkle_tree t;
	mhash *leaves = xmalloc(N * sizeof *leaves), root, r1, p[64];
	uint64_t i, m, n;
	size_t k, len, bad = 0, j = 0;

	merkle_stream_init(&s);
	for (i = 0; i < N; i++)
		merkle_leaf_hash(&i, sizeof i, leaves[i]);
	merkle_tree_build(&t, leaves, N);
	for (i = 0; i < N; i++) {
		merkle_stream_push(&s, leaves[i]);
		if (i + 1 != sizes[j])
			continue;
		n = sizes[j++];
		merkle_stream_root(&s, root);
		merkle_tree_root(&t, n, r1);
		bad += memcmp(root, r1, 32) != 0;
		for (k = 0; k < 64; k++) {
			m = (n * 37 + k * 7919) % n;
			merkle_tree_inclusion(&t, n, m, p, &len);
			bad += merkle_verify_inclusion(m, n, leaves[m], p, len,
			    root) != 0;
			merkle_tree_consistency(&t, m, n, p, &len);
			merkle_tree_root(&t, m, r1);
			bad += merkle_verify_consistency(m, n, r1, root, p,
			    len) != 0;
		}
	}
	ok(bad == 0 && j == sizeof sizes / sizeof *sizes,
	    "%d leaves: stream roots and proofs across powers of two", N);
	merkle_tree_release(&t);
}

/*
 * The verifiers at sizes no tree here can have: the leftmost leaf of a
 * tree has only right siblings, the rightmost of a perfect tree only left
 * ones, so their roots are a plain fold of the proof.
 */
static void
huge(void)
{
	mhash p[MERKLE_MAX_PROOF + 1], r, leaf, r2;
	const uint64_t top = (uint64_t)1 << 63, max = UINT64_MAX;
	int j;

	merkle_leaf_hash("x", 1, leaf);
	for (j = 0; j <= MERKLE_MAX_PROOF; j++)
		merkle_leaf_hash(&j, sizeof j, p[j]);
	memcpy(r, leaf, 32);
	for (j = 0; j < 64; j++)
		merkle_node_hash(r, p[j], r);
	ok(merkle_verify_inclusion(0, max, leaf, p, 64, r) == 0,
	    "leftmost leaf of 2^64-1: 64 hashes, verifies");
	ok(merkle_verify_inclusion(0, max, leaf, p, 65, r) == -1 &&
	    merkle_verify_inclusion(0, top, leaf, p, 64, r) == -1,
	    "65 hashes refused; the same proof at 2^63 fails");
	memcpy(r, leaf, 32);
	for (j = 0; j < 40; j++)
		merkle_node_hash(p[j], r, r);
	ok(merkle_verify_inclusion(((uint64_t)1 << 40) - 1, (uint64_t)1 << 40,
	    leaf, p, 40, r) == 0, "rightmost leaf of 2^40 verifies");
	merkle_node_hash(r, p[0], r2);
	ok(merkle_verify_consistency((uint64_t)1 << 40, (uint64_t)1 << 41, r,
	    r2, p, 1) == 0 && merkle_verify_consistency(top / 2, top, r, r2,
	    p, 1) == 0, "consistency 2^40 to 2^41 and 2^62 to 2^63");
	ok(merkle_verify_consistency(top / 2, top + 1, r, r2, p, 1) == -1 &&
	    merkle_verify_consistency(1, 3, r, r2, p, 65) == -1,
	    "size2 over 2^63 or a proof over %d hashes refused",
	    MERKLE_MAX_PROOF);
}

static void
refused(void)
{
	mhash p[MERKLE_MAX_PROOF], h;
	struct merkle_tree t;
	size_t len = 99;

	merkle_tree_build(&t, copy_leaves(L, 10), 10);
	ok(merkle_tree_root(&t, 11, h) == -1 && hw_err_code() == 2,
	    "root of more leaves than the tree has (%s)", hw_err_msg());
	ok(merkle_tree_inclusion(&t, 10, 10, p, &len) == -1 &&
	    merkle_tree_inclusion(&t, 11, 3, p, &len) == -1 &&
	    merkle_tree_inclusion(&t, 0, 0, p, &len) == -1 &&
	    hw_err_code() == 2 && len == 99,
	    "inclusion: index >= size or size > n refused (%s)",
	    hw_err_msg());
	ok(merkle_tree_consistency(&t, 5, 4, p, &len) == -1 &&
	    merkle_tree_consistency(&t, 3, 11, p, &len) == -1 &&
	    hw_err_code() == 2 && len == 99,
	    "consistency: size1 > size2 or size2 > n refused (%s)",
	    hw_err_msg());
	merkle_tree_release(&t);
	merkle_tree_build(&t, NULL, 0);
	ok(merkle_tree_inclusion(&t, 0, 0, p, &len) == -1 &&
	    merkle_tree_consistency(&t, 0, 0, p, &len) == 0 && len == 0 &&
	    merkle_tree_root(&t, 1, h) == -1, "the empty tree");
	merkle_tree_release(&t);
}

/* --ref: the output of t/merkle_ref.py, from this implementation */
static void
put_hashes(const mhash *h, size_t n)
{
	char hex[65];
	size_t i;

	putchar('[');
	for (i = 0; i < n; i++) {
		hex_encode(h[i], 32, hex);
		printf("%s\"%s\"", i ? "," : "", hex);
	}
	putchar(']');
}

static void
ref_report(const struct merkle_tree *t)
{
	mhash p[MERKLE_MAX_PROOF];
	uint64_t n = t->n, i;
	char hex[65];
	size_t len;

	printf("{\"size\":%llu,\"roots\":[", (unsigned long long)n);
	for (i = 0; i <= n; i++) {
		merkle_tree_root(t, i, p[0]);
		hex_encode(p[0], 32, hex);
		printf("%s\"%s\"", i ? "," : "", hex);
	}
	printf("],\"inclusion\":[");
	for (i = 0; i < n; i++) {
		merkle_tree_inclusion(t, n, i, p, &len);
		fputs(i ? "," : "", stdout);
		put_hashes(p, len);
	}
	printf("],\"consistency\":[");
	for (i = 1; i <= n; i++) {
		merkle_tree_consistency(t, i, n, p, &len);
		fputs(i > 1 ? "," : "", stdout);
		put_hashes(p, len);
	}
	printf("]}\n");
}

static int
ref_stdin(void)
{
	struct arena a;
	struct jval *v;
	struct merkle_tree t;
	char *line = NULL, err[128];
	unsigned char *d;
	mhash *leaves;
	size_t cap = 0, i;
	ssize_t n;

	arena_init(&a);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		arena_clear(&a);
		if (!(v = json_parse(&a, line, (size_t)n, err, sizeof err)) ||
		    v->t != J_ARRAY) {
			fprintf(stderr, "merkle_test: bad line: %s\n", err);
			return 1;
		}
		leaves = xmalloc(v->n * sizeof *leaves);
		for (i = 0; i < v->n; i++) {
			d = xmalloc(v->u.a[i]->n / 2 + 1);
			merkle_leaf_hash(d, unhex(v->u.a[i]->u.s, d),
			    leaves[i]);
			free(d);
		}
		merkle_tree_build(&t, leaves, v->n);
		ref_report(&t);
		merkle_tree_release(&t);
	}
	free(line);
	arena_release(&a);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--ref") == 0)
		return ref_stdin();
	hashes();
	reference();
	edges();
	shared_tree();
	stream_vs_tree();
	inclusion_all();
	consistency_all();
	larger();
	huge();
	refused();
	merkle_tree_release(&T);
	return tap_done();
}
