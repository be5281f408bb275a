/* sha256.c - SHA-256 through libcrypto (uses the CPU's SHA extensions) */
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"

/* fetched once: an implicit fetch per digest costs a lock and a lookup */
static const EVP_MD *
md(void)
{
	static EVP_MD *m;

	if (!m)
		m = EVP_MD_fetch(NULL, "SHA256", NULL);
	return m;
}

void
sha256_init(struct sha256 *h)
{
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || !EVP_DigestInit_ex(h->ctx, md(), NULL)) {
		fputs("heartwood: libcrypto SHA-256 unavailable\n", stderr);
		abort();
	}
}

void
sha256_update(struct sha256 *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->ctx, p, n);
}

void
sha256_final(struct sha256 *h, unsigned char out[32])
{
	unsigned int n = 32;

	EVP_DigestFinal_ex(h->ctx, out, &n);
	EVP_DigestInit_ex(h->ctx, md(), NULL);
}

void
sha256_release(struct sha256 *h)
{
	EVP_MD_CTX_free(h->ctx);
	h->ctx = NULL;
}

void
hex_encode(const unsigned char *p, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = d[p[i] >> 4];
		out[2 * i + 1] = d[p[i] & 15];
	}
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
json_hash(const struct jval *v, struct buf *scratch, char out[HW_HASH_LEN + 1])
{
	buf_clear(scratch);
	json_canon(scratch, v);
	memcpy(out, "sha256:", 7);
	sha256_hex(scratch->p, scratch->len, out + 7);
}
