/*
 * bundle_fuzz - what verify-checkpoint, verify-proof and the local signer
 * read from outside.  The first byte picks the reader, the rest is its
 * input:
 *
 *	C  checkpoint.json: the statement check, then the signature record
 *	   against a fixed Ed25519 public key (the seed corpus holds a
 *	   bundle it signed, so mutations reach the signature itself)
 *	S  a statement alone
 *	P  a proof file (hw-audit verify-proof without a bundle)
 *	R  a signer request body (POST /v1/checkpoints/sign)
 */
#include <string.h>

#include "audit/audit.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

/* the public half of the key that signed corpus/bundle/checkpoint-ed25519 */
static const char pubhex[] =
    "544ff3311d3bfb6faadbd0e37911a27431d843666cf1d02d96759c8e8a5f7660";

static void
fixed_key(struct signkey *k)
{
	size_t i;

	memset(k, 0, sizeof *k);
	k->alg = SIG_ED25519;
	for (i = 0; i < 32; i++) {
		unsigned v;

		sscanf(pubhex + 2 * i, "%2x", &v);
		k->ed_pk[i] = (unsigned char)v;
	}
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	const char *p = (const char *)data + 1;
	struct signkey k;
	struct arena a;
	struct jval *v;
	struct buf out;
	char err[1200];

	if (n < 1)
		return 0;
	n--;
	arena_init(&a);
	buf_init(&out);
	switch (data[0]) {
	case 'C':
		if (!(v = json_parse(&a, p, n, err, sizeof err)) ||
		    v->t != J_OBJECT)
			break;
		if (checkpoint_statement_check(json_get(v, "statement")) < 0)
			break;
		fixed_key(&k);
		checkpoint_signature_check(&a, json_get(v, "signature"),
		    json_get(v, "statement"), &k);
		break;
	case 'S':
		if ((v = json_parse(&a, p, n, err, sizeof err)))
			checkpoint_statement_check(v);
		break;
	case 'P':
		proof_verify(p, n, NULL, NULL, &out);
		break;
	case 'R':
		signer_request_statement(&a, p, n, err, sizeof err);
		break;
	}
	buf_release(&out);
	arena_release(&a);
	return 0;
}
