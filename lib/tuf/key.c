/* key.c - TUF public keys and the check of one signature */
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <sodium.h>

#include "tuf/tuf.h"

#define SIG_MAX 1024	/* bytes: RSA-8192 fits */

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* hex_decode: the bytes of an even-length hex text of at most max bytes */
static int
hex_decode(const char *s, unsigned char *out, size_t max, size_t *n)
{
	size_t i, len = strlen(s);

	if (len % 2 || len / 2 > max)
		return -1;
	for (i = 0; i < len / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]);
		int lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	*n = len / 2;
	return 0;
}

static int
pem_key(struct tuf_key *k, const char *pem, const char *type)
{
	BIO *bio = BIO_new_mem_buf(pem, -1);
	EVP_PKEY *pk = bio ? PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL) : NULL;
	char group[64];
	size_t len;
	int ok = 0;

	BIO_free(bio);
	if (!pk)
		return -1;
	if (k->kind == TUF_KEY_ECDSA)
		ok = EVP_PKEY_is_a(pk, "EC") &&
		    EVP_PKEY_get_group_name(pk, group, sizeof group, &len) &&
		    !strcmp(group, "prime256v1");
	else
		ok = EVP_PKEY_is_a(pk, "RSA") && EVP_PKEY_get_bits(pk) >= 2048;
	if (!ok) {
		EVP_PKEY_free(pk);
		return hw_err_set(HW_EXIT_DATA, "key '%s' is not a %s key",
		    k->id, type);
	}
	k->pkey = pk;
	return 0;
}

int
tuf_key_parse(struct tuf_key *k, const char *id, const struct jval *v)
{
	const char *type = json_get_str(v, "keytype");
	const char *scheme = json_get_str(v, "scheme");
	const struct jval *kv = json_get(v, "keyval");
	const char *pub = kv ? json_get_str(kv, "public") : NULL;
	size_t n;

	memset(k, 0, sizeof *k);
	k->id = id;
	if (!type || !scheme || !pub || kv->t != J_OBJECT)
		return hw_err_set(HW_EXIT_DATA, "key '%s' is malformed", id);
	if (!strcmp(type, "ed25519") && !strcmp(scheme, "ed25519")) {
		k->kind = TUF_KEY_ED25519;
		if (hex_decode(pub, k->ed, 32, &n) < 0 || n != 32)
			return hw_err_set(HW_EXIT_DATA,
			    "key '%s' is not a hex Ed25519 key", id);
		return 0;
	}
	if ((!strcmp(type, "ecdsa") || !strcmp(type, "ecdsa-sha2-nistp256"))
	    && !strcmp(scheme, "ecdsa-sha2-nistp256")) {
		k->kind = TUF_KEY_ECDSA;
		if (pem_key(k, pub, "P-256") < 0)
			return hw_err_set(HW_EXIT_DATA,
			    "key '%s' is not a PEM P-256 key", id);
		return 0;
	}
	if (!strcmp(type, "rsa") && !strcmp(scheme, "rsassa-pss-sha256")) {
		k->kind = TUF_KEY_RSAPSS;
		if (pem_key(k, pub, "RSA") < 0)
			return hw_err_set(HW_EXIT_DATA,
			    "key '%s' is not a PEM RSA key", id);
		return 0;
	}
	return hw_err_set(HW_EXIT_DATA, "key '%s' has the unsupported type "
	    "'%s' and scheme '%s'", id, type, scheme);
}

void
tuf_key_release(struct tuf_key *k)
{
	EVP_PKEY_free(k->pkey);
	k->pkey = NULL;
}

static int
evp_verify(const struct tuf_key *k, const unsigned char *sig, size_t sn,
    const void *msg, size_t n)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	int ok;

	ok = ctx && EVP_DigestVerifyInit_ex(ctx, &pctx, "SHA256", NULL, NULL,
	    k->pkey, NULL) == 1;
	if (ok && k->kind == TUF_KEY_RSAPSS)
		ok = EVP_PKEY_CTX_set_rsa_padding(pctx,
		    RSA_PKCS1_PSS_PADDING) == 1 &&
		    EVP_PKEY_CTX_set_rsa_pss_saltlen(pctx,
		    RSA_PSS_SALTLEN_AUTO) == 1 &&
		    EVP_PKEY_CTX_set_rsa_mgf1_md_name(pctx, "SHA256",
		    NULL) == 1;
	ok = ok && EVP_DigestVerify(ctx, sig, sn, msg, n) == 1;
	EVP_MD_CTX_free(ctx);
	return ok;
}

int
tuf_key_verify(const struct tuf_key *k, const char *sig, const void *msg,
    size_t n)
{
	unsigned char s[SIG_MAX];
	size_t sn;

	if (hex_decode(sig, s, sizeof s, &sn) < 0)
		return 0;
	if (k->kind == TUF_KEY_ED25519)
		return sn == crypto_sign_BYTES &&
		    crypto_sign_verify_detached(s, msg, n, k->ed) == 0;
	return evp_verify(k, s, sn, msg, n);
}
