/* merkle.c - RFC 9162 Merkle tree hashes, proofs and their verification */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "audit/audit.h"

/*
 * No consistency proof between sizes up to 2^63 needs more than 64 hashes
 * (the depth of the tree plus one); beyond that one could need 65, so
 * larger sizes are refused rather than given a truncated proof.
 */
#define MERKLE_MAX_SIZE ((uint64_t)1 << 63)

/*
 * One context for every hash: a new EVP context per node doubles the
 * cost.  Like sha256_hex, this makes the module single-threaded.
 */
static struct sha256 *
hasher(void)
{
	static _Thread_local struct sha256 h;

	if (!h.ctx)
		sha256_init(&h);
	return &h;
}

void
merkle_leaf_hash(const void *leaf, size_t n, mhash out)
{
	static const unsigned char prefix = 0x00;
	struct sha256 *h = hasher();

	sha256_update(h, &prefix, 1);
	sha256_update(h, leaf, n);
	sha256_final(h, out);
}

/* out may be left or right: both are read before out is written */
void
merkle_node_hash(const mhash left, const mhash right, mhash out)
{
	static const unsigned char prefix = 0x01;
	struct sha256 *h = hasher();

	sha256_update(h, &prefix, 1);
	sha256_update(h, left, sizeof(mhash));
	sha256_update(h, right, sizeof(mhash));
	sha256_final(h, out);
}

static void
empty_root(mhash out)
{
	struct sha256 *h = hasher();

	sha256_update(h, "", 0);
	sha256_final(h, out);
}

/* the largest power of two below n, n >= 2: where RFC 9162 splits D[n] */
static uint64_t
split(uint64_t n)
{
	return (uint64_t)1 << (63 - __builtin_clzll(n - 1));
}

static int
hash_eq(const mhash a, const mhash b)
{
	return memcmp(a, b, sizeof(mhash)) == 0;
}

/* ---- streaming root ---- */

/*
 * stack[0 .. popcount(size) - 1] holds the roots of the perfect subtrees
 * that size decomposes into, largest (leftmost) first: pushing a leaf is
 * incrementing a binary counter, each carry one node hash.
 */
void
merkle_stream_init(struct merkle_stream *m)
{
	memset(m, 0, sizeof *m);
}

/*
 * carry pushes root, of a perfect subtree of 2^height leaves, onto the
 * stack of the subtrees of the first done leaves (a multiple of
 * 2^height): each carry is one node hash
 */
static void
carry(mhash stack[64], uint64_t done, const mhash root, int height)
{
	int top = __builtin_popcountll(done);
	uint64_t s;
	mhash cur;

	memcpy(cur, root, sizeof cur);
	for (s = done >> height; s & 1; s >>= 1) {
		top--;
		merkle_node_hash(stack[top], cur, cur);
	}
	memcpy(stack[top], cur, sizeof cur);
}

/* flush: the pending batch's subtree, a level of nodes at a time */
static void
flush(struct merkle_stream *m)
{
	struct sha256_job job[MERKLE_BATCH / 2];
	mhash up[MERKLE_BATCH / 2];
	unsigned i, n = MERKLE_BATCH;
	int height = 0;

	for (; n > 1; n /= 2, height++) {
		for (i = 0; i < n / 2; i++)	/* left and right lie together */
			job[i] = (struct sha256_job){ m->pend[2 * i],
			    2 * sizeof(mhash), 0x01, 1, up[i] };
		sha256_many(job, n / 2);
		memcpy(m->pend, up, n / 2 * sizeof(mhash));
	}
	carry(m->stack, m->size - MERKLE_BATCH, m->pend[0], height);
	m->npend = 0;
}

void
merkle_stream_push(struct merkle_stream *m, const mhash leaf_hash)
{
	memcpy(m->pend[m->npend++], leaf_hash, sizeof(mhash));
	m->size++;
	if (m->npend == MERKLE_BATCH)
		flush(m);
}

void
merkle_stream_root(const struct merkle_stream *m, mhash out)
{
	uint64_t done = m->size - m->npend;
	mhash stack[64];
	unsigned k;
	int i;

	/* the pending leaves, one carry each, on a copy of the stack */
	memcpy(stack, m->stack, sizeof stack);
	for (k = 0; k < m->npend; k++)
		carry(stack, done++, m->pend[k], 0);
	if ((i = __builtin_popcountll(done) - 1) < 0) {
		empty_root(out);
		return;
	}
	memcpy(out, stack[i], sizeof(mhash));
	while (--i >= 0)
		merkle_node_hash(stack[i], out, out);
}

/* ---- the tree of stored perfect subtrees ---- */

void
merkle_tree_build(struct merkle_tree *t, mhash *leaves, uint64_t n)
{
	uint64_t i, c;
	int k;

	memset(t, 0, sizeof *t);
	t->n = n;
	t->level[0] = leaves;
	t->count[0] = n;
	t->levels = 1;
	for (k = 1; k < 64 && (c = n >> k) > 0; k++) {
		const mhash *lo = t->level[k - 1];
		mhash *cur = xmalloc(c * sizeof *cur);

		for (i = 0; i < c; i++)
			merkle_node_hash(lo[2 * i], lo[2 * i + 1], cur[i]);
		t->level[k] = cur;
		t->count[k] = c;
		t->levels = k + 1;
	}
}

void
merkle_tree_release(struct merkle_tree *t)
{
	int k;

	for (k = 0; k < t->levels; k++)
		free(t->level[k]);
	memset(t, 0, sizeof *t);
}

/*
 * The root of leaves [a, b), where a is a multiple of the largest power of
 * two in b - a, as every subtree of the RFC's recursion is: then [a, b)
 * is a run of stored perfect subtrees, largest first, one per bit of
 * b - a, and its root folds them right to left.
 */
static void
range_root(const struct merkle_tree *t, uint64_t a, uint64_t b, mhash out)
{
	const unsigned char *part[64];
	int j, np = 0;

	if (a == b) {
		empty_root(out);
		return;
	}
	for (j = 63; j >= 0; j--)
		if ((b - a) >> j & 1) {
			part[np++] = t->level[j][a >> j];
			a += (uint64_t)1 << j;
		}
	memcpy(out, part[np - 1], sizeof(mhash));
	while (--np > 0)
		merkle_node_hash(part[np - 1], out, out);
}

static void
reverse(mhash *p, size_t n)
{
	mhash tmp;
	size_t i;

	for (i = 0; i < n / 2; i++) {
		memcpy(tmp, p[i], sizeof tmp);
		memcpy(p[i], p[n - 1 - i], sizeof tmp);
		memcpy(p[n - 1 - i], tmp, sizeof tmp);
	}
}

int
merkle_tree_root(const struct merkle_tree *t, uint64_t size, mhash out)
{
	if (size > t->n)
		return hw_err_set(HW_EXIT_USAGE, "merkle tree size %" PRIu64
		    " out of range: the tree has %" PRIu64 " leaves", size,
		    t->n);
	range_root(t, 0, size, out);
	return 0;
}

/*
 * PATH(m, D[n]) of RFC 9162 2.1.3.1, walked from the root down: each step
 * records the sibling of the half holding the leaf, so the proof, which
 * lists siblings from the leaf up, is the walk reversed.
 */
int
merkle_tree_inclusion(const struct merkle_tree *t, uint64_t size,
    uint64_t index, mhash proof[MERKLE_MAX_PROOF], size_t *len)
{
	uint64_t a = 0, b = size, k;
	size_t n = 0;

	if (size > t->n || index >= size)
		return hw_err_set(HW_EXIT_USAGE, "merkle leaf index %" PRIu64
		    " out of range for tree size %" PRIu64 " of %" PRIu64,
		    index, size, t->n);
	while (b - a > 1) {
		k = split(b - a);
		if (index < a + k) {
			range_root(t, a + k, b, proof[n++]);
			b = a + k;
		} else {
			range_root(t, a, a + k, proof[n++]);
			a += k;
		}
	}
	reverse(proof, n);
	*len = n;
	return 0;
}

/*
 * PROOF(m, D[n]) = SUBPROOF(m, D[n], true) of RFC 9162 2.1.4.1, walked from
 * the root down like the inclusion proof; the subtree the walk ends on is
 * given too unless it is the whole old tree (the flag stayed true).
 *
 * The RFC defines proofs only for 0 < m < n.  m == n gets the empty
 * proof; m == 0 gets the empty proof as well (the empty tree is a prefix
 * of every tree, the reading of C2SP tlog-witness), which the verifier
 * accepts only with the empty tree's root as the old root.
 */
int
merkle_tree_consistency(const struct merkle_tree *t, uint64_t size1,
    uint64_t size2, mhash proof[MERKLE_MAX_PROOF], size_t *len)
{
	uint64_t a = 0, b = size2, k;
	size_t n = 0;
	int whole = 1;

	if (size1 > size2 || size2 > t->n || size2 > MERKLE_MAX_SIZE)
		return hw_err_set(HW_EXIT_USAGE, "merkle consistency from "
		    "size %" PRIu64 " to %" PRIu64 " out of range for a tree "
		    "of %" PRIu64, size1, size2, t->n);
	while (size1 > 0 && size1 != b) {
		k = split(b - a);
		if (size1 <= a + k) {
			range_root(t, a + k, b, proof[n++]);
			b = a + k;
		} else {
			range_root(t, a, a + k, proof[n++]);
			a += k;
			whole = 0;
		}
	}
	if (!whole)
		range_root(t, a, b, proof[n++]);
	reverse(proof, n);
	*len = n;
	return 0;
}

/* ---- verification without the tree ---- */

static int
refuse(const char *what)
{
	return hw_err_set(HW_EXIT_DATA, "%s", what);
}

/*
 * RFC 9162 2.1.3.2 step by step.  Every failure, an index outside the
 * tree included, is code 65: the arguments are the claim being checked.
 */
int
merkle_verify_inclusion(uint64_t index, uint64_t size,
    const mhash leaf_hash, const mhash *proof, size_t len, const mhash root)
{
	uint64_t fn = index, sn = size - 1;
	mhash r;
	size_t i;

	if (index >= size || len > MERKLE_MAX_PROOF)
		return refuse("inclusion proof out of range");
	memcpy(r, leaf_hash, sizeof r);
	for (i = 0; i < len; i++) {
		if (sn == 0)
			return refuse("inclusion proof too long");
		if ((fn & 1) || fn == sn) {
			merkle_node_hash(proof[i], r, r);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			merkle_node_hash(r, proof[i], r);
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (sn != 0 || !hash_eq(r, root))
		return refuse("inclusion proof does not verify");
	return 0;
}

/*
 * The edge cases RFC 9162 2.1.4.2 leaves out (it assumes 0 < size1 <
 * size2): equal sizes need an empty proof and equal roots; size1 == 0
 * needs an empty proof and root1 the empty tree's root (and, at size2 ==
 * 0, root2 too).
 */
static int
verify_trivial(uint64_t size1, uint64_t size2, const mhash root1,
    const mhash root2, size_t len)
{
	mhash empty;

	empty_root(empty);
	if (len != 0)
		return refuse("consistency proof not empty");
	if (size1 == 0 && !hash_eq(root1, empty))
		return refuse("consistency proof: not the empty tree's root");
	if (size1 == size2 && !hash_eq(root1, root2))
		return refuse("consistency proof: different roots, same size");
	return 0;
}

/* RFC 9162 2.1.4.2, steps 2 to 7, for 0 < size1 < size2 and len > 0 */
static int
verify_path(uint64_t size1, uint64_t size2, const mhash root1,
    const mhash root2, const mhash *proof, size_t len)
{
	uint64_t fn = size1 - 1, sn = size2 - 1;
	size_t i = 0;
	mhash fr, sr;

	memcpy(fr, (size1 & (size1 - 1)) == 0 ? root1 : proof[i++], sizeof fr);
	memcpy(sr, fr, sizeof sr);
	while (fn & 1) {
		fn >>= 1;
		sn >>= 1;
	}
	for (; i < len; i++) {
		if (sn == 0)
			return refuse("consistency proof too long");
		if ((fn & 1) || fn == sn) {
			merkle_node_hash(proof[i], fr, fr);
			merkle_node_hash(proof[i], sr, sr);
			while (!(fn & 1) && fn != 0) {
				fn >>= 1;
				sn >>= 1;
			}
		} else {
			merkle_node_hash(sr, proof[i], sr);
		}
		fn >>= 1;
		sn >>= 1;
	}
	if (sn != 0 || !hash_eq(fr, root1) || !hash_eq(sr, root2))
		return refuse("consistency proof does not verify");
	return 0;
}

int
merkle_verify_consistency(uint64_t size1, uint64_t size2,
    const mhash root1, const mhash root2, const mhash *proof, size_t len)
{
	if (size1 > size2 || size2 > MERKLE_MAX_SIZE || len > MERKLE_MAX_PROOF)
		return refuse("consistency proof out of range");
	if (size1 == 0 || size1 == size2)
		return verify_trivial(size1, size2, root1, root2, len);
	if (len == 0)
		return refuse("consistency proof empty");
	return verify_path(size1, size2, root1, root2, proof, len);
}
