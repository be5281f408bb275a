/*
 * sign.c - Ed25519 (libsodium) and ECDSA P-256 (libcrypto) keys and
 * signatures, canonical base64, and C2SP signed notes.
 *
 * Ed25519 keys are parsed from their fixed-layout DER here, so that the
 * seed never passes through a general ASN.1 parser; P-256 keys go through
 * libcrypto's EVP_PKEY.  Both are read from PEM by one strict PEM reader
 * that wants exactly one block with the expected label, which is what
 * refuses encrypted and traditional ("EC PRIVATE KEY") forms before
 * libcrypto could ask for a password.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sodium.h>

#include "audit/audit.h"

#define KEY_FILE_MAX 65536
#define NOTE_MAX_SIGS 16
#define EM_DASH_SP "\xe2\x80\x94 "

/*
 * PKCS#8 v1 of Ed25519 (RFC 8410):
 * SEQ { INT 0, SEQ { OID 1.3.101.112 }, OCTETS { OCTETS[32] seed } }
 */
static const unsigned char ed_pkcs8_v1[16] = {
	0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20
};
/* v2 (OneAsymmetricKey) with the public key as [1] and no attributes */
static const unsigned char ed_pkcs8_v2[16] = {
	0x30, 0x51, 0x02, 0x01, 0x01, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70,
	0x04, 0x22, 0x04, 0x20
};
static const unsigned char ed_pkcs8_v2_pub[3] = { 0x81, 0x21, 0x00 };
/* the AlgorithmIdentifier of Ed25519 (no parameters) */
static const unsigned char ed_algid[7] = {
	0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70
};
static const unsigned char ed_spki[12] = {
	0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00
};

static int
sodium_ready(void)
{
	static int done;

	/* sodium_init is idempotent and thread-safe: the flag saves calls */
	if (!done && sodium_init() < 0)
		return hw_err_set(HW_EXIT_UNAVAILABLE,
		    "libsodium cannot be initialized");
	done = 1;
	return 0;
}

int
key_text(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > 512)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return 0;
	return 1;
}

const char *
sig_alg_name(enum sig_alg alg)
{
	return alg == SIG_ED25519 ? "ed25519" : alg == SIG_P256 ?
	    "ecdsa-p256-sha256" : "unknown";
}

/* ---- key files and PEM ---- */

static int __attribute__((format(printf, 3, 4)))
key_err(const char *what, const char *path, const char *fmt, ...)
{
	char reason[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof reason, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "cannot load %s '%s': %s", what, path,
	    reason);
}

static int
key_open_error(const char *what, const char *path)
{
	int e = errno;

	if (e == ELOOP)
		return key_err(what, path, "it is a symbolic link");
	hw_err_sys("cannot load %s '%s'", what, path);
	if (e == ENOENT)
		hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
	errno = e;
	return -1;
}

/*
 * A private key file: mode & 077 == 0 and owned by the effective uid.  A
 * public key file: not group- or other-writable, owned by root or the
 * effective uid.  Both: regular, at most KEY_FILE_MAX bytes.
 */
static int
key_file_check(const char *what, const char *path, const struct stat *st,
    int private)
{
	uid_t me = geteuid();
	unsigned mode = (unsigned)st->st_mode & 07777;

	if (!S_ISREG(st->st_mode))
		return key_err(what, path, "not a regular file");
	if (st->st_size > KEY_FILE_MAX)
		return key_err(what, path, "larger than %d bytes",
		    KEY_FILE_MAX);
	if (private && (mode & 077))
		return key_err(what, path, "group or others can access it "
		    "(mode %04o)", mode);
	if (!private && (mode & 022))
		return key_err(what, path, "group or others can write it "
		    "(mode %04o)", mode);
	if (private && st->st_uid != me)
		return key_err(what, path, "owned by uid %lu, not by the "
		    "effective uid %lu", (unsigned long)st->st_uid,
		    (unsigned long)me);
	if (!private && st->st_uid != me && st->st_uid != 0)
		return key_err(what, path, "owned by uid %lu, neither root "
		    "nor the effective uid %lu", (unsigned long)st->st_uid,
		    (unsigned long)me);
	return 0;
}

static int
key_file_read(const char *what, const char *path, int private,
    struct buf *b)
{
	struct stat st;
	char chunk[4096];
	ssize_t r;
	int fd, rc = -1;

	/* O_NONBLOCK so that a FIFO is refused by fstat, not waited on */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return key_open_error(what, path);
	if (fstat(fd, &st) < 0) {
		hw_err_sys("cannot load %s '%s'", what, path);
		goto out;
	}
	if (key_file_check(what, path, &st, private) < 0)
		goto out;
	/* one allocation, so that no stale copy of a secret is left behind */
	buf_reserve(b, (size_t)st.st_size + 1);
	for (;;) {
		r = read(fd, chunk, sizeof chunk);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			hw_err_sys("cannot read %s '%s'", what, path);
			goto out;
		}
		if (r == 0)
			break;
		if (b->len + (size_t)r > KEY_FILE_MAX) {
			key_err(what, path, "larger than %d bytes",
			    KEY_FILE_MAX);
			goto out;
		}
		buf_add(b, chunk, (size_t)r);
	}
	rc = 0;
out:
	mem_wipe(chunk, sizeof chunk);
	close(fd);
	return rc;
}

/* next_line returns the line at *p (without "\n" or a final "\r"). */
static const char *
next_line(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	const char *e = nl ? nl : end;

	*p = nl ? nl + 1 : end;
	*len = (size_t)(e - s);
	if (*len && s[*len - 1] == '\r')
		(*len)--;
	return s;
}

static int
blank(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n == 0;
}

/* pem_label: *label and *n when line is "-----BEGIN X-----" (or END). */
static int
pem_label(const char *line, size_t len, const char *kw, const char **label,
    size_t *n)
{
	size_t k = strlen(kw);

	if (len < 10 + k + 5 || memcmp(line, "-----", 5) ||
	    memcmp(line + 5, kw, k) || line[5 + k] != ' ' ||
	    memcmp(line + len - 5, "-----", 5))
		return 0;
	*label = line + 6 + k;
	*n = len - 11 - k;
	return 1;
}

/*
 * pem_body gathers the base64 lines after a BEGIN line up to the END line
 * with the same label.
 */
static int
pem_body(const char **p, const char *end, const char *label,
    struct buf *b64)
{
	const char *line, *got;
	size_t len, glen;

	for (;;) {
		if (*p >= end)
			return hw_err_set(HW_EXIT_DATA, "PEM block has no END "
			    "line");
		line = next_line(p, end, &len);
		if (pem_label(line, len, "END", &got, &glen))
			break;
		buf_add(b64, line, len);
	}
	if (glen != strlen(label) || memcmp(got, label, glen))
		return hw_err_set(HW_EXIT_DATA, "PEM END line does not match "
		    "BEGIN");
	return 0;
}

/*
 * pem_decode wants exactly one "-----BEGIN label-----" block, blank lines
 * at most around it, and canonical base64 lines inside (no headers).
 */
static int
pem_decode(const struct buf *text, const char *label, const char *what,
    const char *path, struct buf *der)
{
	const char *p = text->p, *end = text->p + text->len, *line, *got;
	size_t len, glen;
	struct buf b64;
	int rc = -1;

	buf_init(&b64);
	buf_reserve(&b64, text->len);	/* no stale copies of a secret */
	do
		line = next_line(&p, end, &len);
	while (p < end && blank(line, len));
	if (!pem_label(line, len, "BEGIN", &got, &glen)) {
		key_err(what, path, "not a PEM file");
		goto out;
	}
	if (glen != strlen(label) || memcmp(got, label, glen)) {
		key_err(what, path, "PEM block is '%.*s', want '%s' (%s)",
		    (int)(glen > 40 ? 40 : glen), got, label,
		    strcmp(label, "PUBLIC KEY") ? "unencrypted PKCS#8" :
		    "SubjectPublicKeyInfo");
		goto out;
	}
	if (pem_body(&p, end, label, &b64) < 0) {
		key_err(what, path, "%s", hw_err_msg());
		goto out;
	}
	while (p < end) {
		line = next_line(&p, end, &len);
		if (!blank(line, len)) {
			key_err(what, path, "text after the PEM block");
			goto out;
		}
	}
	if (b64_decode_canonical(b64.p, b64.len, der) < 0 || !der->len) {
		key_err(what, path, der->len || b64.len ? "PEM body is not "
		    "canonical base64" : "PEM block is empty");
		goto out;
	}
	rc = 0;
out:
	buf_wipe(&b64);
	return rc;
}

static void
pem_write(struct buf *b, const char *label, const unsigned char *der,
    size_t n)
{
	struct buf t;
	size_t i;

	buf_init(&t);
	b64_encode(&t, der, n);
	buf_reserve(b, t.len + t.len / 64 + 2 * strlen(label) + 40);
	buf_printf(b, "-----BEGIN %s-----\n", label);
	for (i = 0; i < t.len; i += 64) {
		buf_add(b, t.p + i, t.len - i < 64 ? t.len - i : 64);
		buf_addc(b, '\n');
	}
	buf_printf(b, "-----END %s-----\n", label);
	buf_wipe(&t);
}

/* ---- key material ---- */

static void
fingerprint_set(struct signkey *k)
{
	memcpy(k->fingerprint, "sha256:", 7);
	sha256_hex(k->spki, k->spki_len, k->fingerprint + 7);
}

static void
ed_public_set(struct signkey *k)
{
	k->alg = SIG_ED25519;
	memcpy(k->spki, ed_spki, sizeof ed_spki);
	memcpy(k->spki + sizeof ed_spki, k->ed_pk, 32);
	k->spki_len = sizeof ed_spki + 32;
	fingerprint_set(k);
}

/*
 * The SPKI of a P-256 key, always with the uncompressed point, so that
 * the fingerprint is the same whichever form the key file used.
 */
static int
p256_public_set(struct signkey *k)
{
	unsigned char *p = k->spki;
	int n;

	k->alg = SIG_P256;
	if (!EVP_PKEY_set_utf8_string_param(k->pkey,
	    OSSL_PKEY_PARAM_EC_POINT_CONVERSION_FORMAT,
	    OSSL_PKEY_EC_POINT_CONVERSION_FORMAT_UNCOMPRESSED) ||
	    (n = i2d_PUBKEY(k->pkey, NULL)) <= 0 ||
	    (size_t)n > sizeof k->spki || i2d_PUBKEY(k->pkey, &p) != n) {
		ERR_clear_error();
		return hw_err_set(HW_EXIT_DATA, "cannot encode the P-256 "
		    "public key");
	}
	k->spki_len = (size_t)n;
	fingerprint_set(k);
	return 0;
}

/* p256_check: pk is an EC key on P-256 (named curve). */
static int
p256_check(EVP_PKEY *pk, const char *what, const char *path)
{
	const char *type = EVP_PKEY_get0_type_name(pk);
	char group[80];
	size_t len;

	if (EVP_PKEY_is_a(pk, "ED25519"))
		return key_err(what, path, "unsupported Ed25519 key encoding");
	if (!EVP_PKEY_is_a(pk, "EC"))
		return key_err(what, path, "unsupported key type %s, want "
		    "Ed25519 or ECDSA P-256", type ? type : "(unknown)");
	if (!EVP_PKEY_get_group_name(pk, group, sizeof group, &len)) {
		ERR_clear_error();
		return key_err(what, path, "EC key without a named curve, "
		    "want P-256");
	}
	if (strcmp(group, "prime256v1") && strcmp(group, "P-256"))
		return key_err(what, path, "EC key on curve %s, want P-256",
		    group);
	return 0;
}

static int
is_ed_pkcs8(const struct buf *der)
{
	const unsigned char *d = (const unsigned char *)der->p;

	return der->len >= 12 && d[0] == 0x30 && d[2] == 0x02 &&
	    d[3] == 0x01 && !memcmp(d + 5, ed_algid, sizeof ed_algid);
}

static int
ed_load_private(struct signkey *k, const struct buf *der, const char *what,
    const char *path)
{
	const unsigned char *d = (const unsigned char *)der->p;

	if (der->len == 48 && !memcmp(d, ed_pkcs8_v1, 16)) {
		crypto_sign_seed_keypair(k->ed_pk, k->ed_sk, d + 16);
	} else if (der->len == 83 && !memcmp(d, ed_pkcs8_v2, 16) &&
	    !memcmp(d + 48, ed_pkcs8_v2_pub, 3)) {
		crypto_sign_seed_keypair(k->ed_pk, k->ed_sk, d + 16);
		if (sodium_memcmp(d + 51, k->ed_pk, 32))
			return key_err(what, path, "the public key in the "
			    "PKCS#8 v2 key does not match its seed");
	} else {
		return key_err(what, path, "unsupported Ed25519 PKCS#8 "
		    "layout (want v1, or v2 without attributes)");
	}
	k->has_private = 1;
	ed_public_set(k);
	return 0;
}

static int
p256_load_private(struct signkey *k, const struct buf *der,
    const char *what, const char *path)
{
	const unsigned char *p = (const unsigned char *)der->p;
	PKCS8_PRIV_KEY_INFO *info;
	EVP_PKEY_CTX *ctx;
	int ok;

	info = d2i_PKCS8_PRIV_KEY_INFO(NULL, &p, (long)der->len);
	if (info && p == (const unsigned char *)der->p + der->len)
		k->pkey = EVP_PKCS82PKEY(info);
	PKCS8_PRIV_KEY_INFO_free(info);
	ERR_clear_error();
	if (!k->pkey)
		return key_err(what, path, "not a valid PKCS#8 private key");
	if (p256_check(k->pkey, what, path) < 0)
		return -1;
	/* libcrypto takes the public point in the file on trust */
	ctx = EVP_PKEY_CTX_new_from_pkey(NULL, k->pkey, NULL);
	ok = ctx && EVP_PKEY_pairwise_check(ctx) == 1;
	EVP_PKEY_CTX_free(ctx);
	ERR_clear_error();
	if (!ok)
		return key_err(what, path, "the public key in the PKCS#8 key "
		    "does not match its private key");
	k->has_private = 1;
	return p256_public_set(k);
}

int
key_load_private(const char *path, struct signkey *k)
{
	static const char what[] = "private key";
	struct buf text, der;
	int rc = -1;

	memset(k, 0, sizeof *k);
	buf_init(&text);
	buf_init(&der);
	if (sodium_ready() < 0 || key_file_read(what, path, 1, &text) < 0 ||
	    pem_decode(&text, "PRIVATE KEY", what, path, &der) < 0)
		goto out;
	if (is_ed_pkcs8(&der))
		rc = ed_load_private(k, &der, what, path);
	else
		rc = p256_load_private(k, &der, what, path);
out:
	buf_wipe(&text);
	buf_wipe(&der);
	if (rc < 0)
		key_release(k);
	return rc;
}

static int
ed_load_public(struct signkey *k, const struct buf *der, const char *what,
    const char *path)
{
	if (der->len != 44 || memcmp(der->p, ed_spki, sizeof ed_spki))
		return key_err(what, path, "malformed Ed25519 "
		    "SubjectPublicKeyInfo");
	memcpy(k->ed_pk, der->p + sizeof ed_spki, 32);
	/* canonical, on the curve, not of small order */
	if (!crypto_core_ed25519_is_valid_point(k->ed_pk))
		return key_err(what, path, "not a valid Ed25519 public key");
	ed_public_set(k);
	return 0;
}

/*
 * A P-256 SPKI must be DER that libcrypto re-encodes to the same bytes
 * (before the point is normalized to uncompressed form), so that no two
 * files mean the same key with trailing or non-canonical bytes.
 */
static int
p256_load_public(struct signkey *k, const struct buf *der, const char *what,
    const char *path)
{
	const unsigned char *p = (const unsigned char *)der->p;
	unsigned char *re = NULL;
	int n, same;

	k->pkey = d2i_PUBKEY(NULL, &p, (long)der->len);
	ERR_clear_error();
	if (!k->pkey || p != (const unsigned char *)der->p + der->len)
		return key_err(what, path, "not a valid "
		    "SubjectPublicKeyInfo");
	if (p256_check(k->pkey, what, path) < 0)
		return -1;
	n = i2d_PUBKEY(k->pkey, &re);
	same = n > 0 && (size_t)n == der->len && !memcmp(re, der->p, der->len);
	OPENSSL_free(re);
	ERR_clear_error();
	if (!same)
		return key_err(what, path, "SubjectPublicKeyInfo is not in "
		    "canonical DER");
	return p256_public_set(k);
}

int
key_load_public(const char *path, struct signkey *k)
{
	static const char what[] = "public key";
	const unsigned char *d;
	struct buf text, der;
	int rc = -1;

	memset(k, 0, sizeof *k);
	buf_init(&text);
	buf_init(&der);
	if (sodium_ready() < 0 || key_file_read(what, path, 0, &text) < 0 ||
	    pem_decode(&text, "PUBLIC KEY", what, path, &der) < 0)
		goto out;
	d = (const unsigned char *)der.p;
	if (der.len >= 9 && d[0] == 0x30 && !memcmp(d + 2, ed_algid,
	    sizeof ed_algid))
		rc = ed_load_public(k, &der, what, path);
	else
		rc = p256_load_public(k, &der, what, path);
out:
	buf_release(&text);
	buf_release(&der);
	if (rc < 0)
		key_release(k);
	return rc;
}

int
key_generate(enum sig_alg alg, struct signkey *k)
{
	memset(k, 0, sizeof *k);
	if (alg == SIG_ED25519) {
		if (sodium_ready() < 0)
			return -1;
		crypto_sign_keypair(k->ed_pk, k->ed_sk);
		k->has_private = 1;
		ed_public_set(k);
		return 0;
	}
	if (alg != SIG_P256)
		return hw_err_set(HW_EXIT_USAGE, "unknown signature algorithm");
	k->pkey = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
	if (!k->pkey) {
		ERR_clear_error();
		return hw_err_set(HW_EXIT_DATA, "cannot generate a P-256 key");
	}
	k->has_private = 1;
	if (p256_public_set(k) < 0) {
		key_release(k);
		return -1;
	}
	return 0;
}

int
key_pem_private(const struct signkey *k, struct buf *b)
{
	unsigned char der[48];
	BIO *bio;
	char *p;
	long n;

	if (!k->has_private)
		return hw_err_set(HW_EXIT_DATA, "the key has no private part");
	if (k->alg == SIG_ED25519) {
		memcpy(der, ed_pkcs8_v1, 16);
		memcpy(der + 16, k->ed_sk, 32);	/* seed || pk */
		pem_write(b, "PRIVATE KEY", der, sizeof der);
		mem_wipe(der, sizeof der);
		return 0;
	}
	/* PEM_write_bio_PrivateKey writes PKCS#8 ("PRIVATE KEY") */
	if (!(bio = BIO_new(BIO_s_secmem())) ||
	    !PEM_write_bio_PrivateKey(bio, k->pkey, NULL, NULL, 0, NULL,
	    NULL) || (n = BIO_get_mem_data(bio, &p)) <= 0) {
		BIO_free(bio);
		ERR_clear_error();
		return hw_err_set(HW_EXIT_DATA, "cannot encode the P-256 "
		    "private key");
	}
	buf_reserve(b, (size_t)n);
	buf_add(b, p, (size_t)n);
	BIO_free(bio);
	return 0;
}

int
key_pem_public(const struct signkey *k, struct buf *b)
{
	if (!k->spki_len)
		return hw_err_set(HW_EXIT_DATA, "the key has no public part");
	pem_write(b, "PUBLIC KEY", k->spki, k->spki_len);
	return 0;
}

void
key_release(struct signkey *k)
{
	EVP_PKEY_free(k->pkey);
	mem_wipe(k, sizeof *k);
}

/* ---- signatures ---- */

static int
p256_sign(const struct signkey *k, const void *msg, size_t n,
    unsigned char sig[80], size_t *siglen)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t len = 80;
	int ok;

	ok = ctx && EVP_DigestSignInit_ex(ctx, NULL, "SHA256", NULL, NULL,
	    k->pkey, NULL) == 1 && EVP_DigestSign(ctx, sig, &len,
	    msg, n) == 1;
	EVP_MD_CTX_free(ctx);
	ERR_clear_error();
	if (!ok)
		return hw_err_set(HW_EXIT_DATA, "ECDSA P-256 signing failed");
	*siglen = len;
	return 0;
}

int
key_sign(const struct signkey *k, const void *msg, size_t n,
    unsigned char sig[80], size_t *siglen)
{
	unsigned long long len;

	if (!k->has_private)
		return hw_err_set(HW_EXIT_DATA, "cannot sign: the key has no "
		    "private part");
	if (k->alg == SIG_P256)
		return p256_sign(k, msg, n, sig, siglen);
	if (k->alg != SIG_ED25519 || sodium_ready() < 0)
		return hw_err_set(HW_EXIT_DATA, "cannot sign: unknown key");
	crypto_sign_detached(sig, &len, msg, n, k->ed_sk);
	*siglen = (size_t)len;
	return 0;
}

int
key_verify(const struct signkey *k, const void *msg, size_t n,
    const unsigned char *sig, size_t siglen)
{
	EVP_MD_CTX *ctx;
	int ok = 0;

	if (k->alg == SIG_ED25519) {
		ok = sodium_ready() == 0 && siglen == 64 &&
		    crypto_sign_verify_detached(sig, msg, n, k->ed_pk) == 0;
	} else if (k->alg == SIG_P256 && (ctx = EVP_MD_CTX_new())) {
		/* libcrypto refuses a signature that is not strict DER */
		ok = EVP_DigestVerifyInit_ex(ctx, NULL, "SHA256", NULL, NULL,
		    k->pkey, NULL) == 1 && EVP_DigestVerify(ctx, sig, siglen,
		    msg, n) == 1;
		EVP_MD_CTX_free(ctx);
		ERR_clear_error();
	}
	if (!ok)
		return hw_err_set(HW_EXIT_DATA, "%s signature does not verify",
		    sig_alg_name(k->alg));
	return 0;
}

/* ---- C2SP signed notes ---- */

/* utf8_at decodes the code point at p in valid UTF-8. */
static uint32_t
utf8_at(const unsigned char *p, size_t *len)
{
	if (p[0] < 0x80)
		return *len = 1, p[0];
	if (p[0] < 0xe0)
		return *len = 2, (uint32_t)(p[0] & 0x1f) << 6 | (p[1] & 0x3f);
	if (p[0] < 0xf0)
		return *len = 3, (uint32_t)(p[0] & 0x0f) << 12 |
		    (uint32_t)(p[1] & 0x3f) << 6 | (p[2] & 0x3f);
	return *len = 4, (uint32_t)(p[0] & 0x07) << 18 |
	    (uint32_t)(p[1] & 0x3f) << 12 | (uint32_t)(p[2] & 0x3f) << 6 |
	    (p[3] & 0x3f);
}

/* unicode_space is Go's unicode.IsSpace, which the note reference uses. */
static int
unicode_space(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0d) || c == 0x20 || c == 0x85 ||
	    c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) ||
	    c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f ||
	    c == 0x3000;
}

/* A key name: non-empty UTF-8, no Unicode space, no '+', no control. */
static int
note_name_ok(const char *s, size_t n)
{
	size_t i, len;
	uint32_t c;

	if (!n || !valid_utf8(s, n))
		return 0;
	for (i = 0; i < n; i += len) {
		c = utf8_at((const unsigned char *)s + i, &len);
		if (c == '+' || c < 0x20 || unicode_space(c))
			return 0;
	}
	return 1;
}

/* Note text: UTF-8 with no ASCII control character but newline. */
static int
note_chars_ok(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 && s[i] != '\n')
			return 0;
	return valid_utf8(s, n);
}

static void
note_keyid(const char *name, size_t n, const unsigned char pk[32],
    unsigned char id[4])
{
	struct sha256 h;
	unsigned char d[32];

	sha256_init(&h);
	sha256_update(&h, name, n);
	sha256_update(&h, "\n\x01", 2);
	sha256_update(&h, pk, 32);
	sha256_final(&h, d);
	sha256_release(&h);
	memcpy(id, d, 4);
}

void
note_vkey(const char *name, const unsigned char pk[32], struct buf *out)
{
	unsigned char id[4], typed[33];
	char hex[9];

	note_keyid(name, strlen(name), pk, id);
	hex_encode(id, 4, hex);
	typed[0] = 0x01;
	memcpy(typed + 1, pk, 32);
	buf_printf(out, "%s+%s+", name, hex);
	b64_encode(out, typed, sizeof typed);
}

int
note_sign(const char *name, const struct signkey *k, const char *body,
    struct buf *out)
{
	size_t n = strlen(body), siglen;
	unsigned char blob[4 + 80];

	if (!note_name_ok(name, strlen(name)))
		return hw_err_set(HW_EXIT_DATA, "bad signed-note key name: "
		    "it must be non-empty UTF-8 without spaces or '+'");
	if (k->alg != SIG_ED25519 || !k->has_private)
		return hw_err_set(HW_EXIT_DATA, "signed notes need an Ed25519 "
		    "private key");
	if (!n || body[n - 1] != '\n' || !note_chars_ok(body, n))
		return hw_err_set(HW_EXIT_DATA, "bad signed-note text: it "
		    "must be UTF-8 ending in a newline, without control "
		    "characters");
	note_keyid(name, strlen(name), k->ed_pk, blob);
	if (key_sign(k, body, n, blob + 4, &siglen) < 0)
		return -1;
	buf_add(out, body, n);
	buf_adds(out, "\n" EM_DASH_SP);
	buf_adds(out, name);
	buf_addc(out, ' ');
	b64_encode(out, blob, 4 + siglen);
	buf_addc(out, '\n');
	return 0;
}

struct note_key {
	const char *name;
	size_t namelen;
	const unsigned char *pk;
	unsigned char id[4];
	char hex[9];
};

/*
 * note_line checks one signature line (without its "\n"): 1 when it is a
 * valid signature by key over text, 0 when it is by another key, -1 when
 * it is malformed or by key and does not verify.
 */
static int
note_line(const struct note_key *key, const char *line, size_t len,
    const char *text, size_t tlen, struct buf *raw)
{
	const char *sp, *name = line + 4;
	size_t nlen;

	if (len < 4 || memcmp(line, EM_DASH_SP, 4) ||
	    !(sp = memchr(name, ' ', len - 4)))
		return hw_err_set(HW_EXIT_DATA, "malformed signed note: bad "
		    "signature line");
	nlen = (size_t)(sp - name);
	if (!note_name_ok(name, nlen) || sp + 1 == line + len ||
	    b64_decode_canonical(sp + 1, (size_t)(line + len - sp - 1),
	    raw) < 0 || raw->len < 5)
		return hw_err_set(HW_EXIT_DATA, "malformed signed note: bad "
		    "signature line");
	if (nlen != key->namelen || memcmp(name, key->name, nlen) ||
	    memcmp(raw->p, key->id, 4))
		return 0;
	if (raw->len != 68 || crypto_sign_verify_detached(
	    (const unsigned char *)raw->p + 4, (const unsigned char *)text,
	    tlen, key->pk) != 0)
		return hw_err_set(HW_EXIT_DATA, "signed note: invalid "
		    "signature for key %s+%s", key->name, key->hex);
	return 1;
}

/* note_split finds the last blank line: text before, signatures after. */
static int
note_split(const char *note, size_t n, size_t *tlen)
{
	size_t i;

	if (!note_chars_ok(note, n))
		return hw_err_set(HW_EXIT_DATA, "malformed signed note: not "
		    "UTF-8 text without control characters");
	for (i = n; i >= 2; i--)
		if (note[i - 1] == '\n' && note[i - 2] == '\n')
			break;
	if (i < 2 || i == n || note[n - 1] != '\n')
		return hw_err_set(HW_EXIT_DATA, "malformed signed note: no "
		    "blank line followed by signature lines");
	*tlen = i - 1;
	return 0;
}

static int
note_sigs(const struct note_key *key, const char *note, size_t n,
    size_t tlen)
{
	const char *p = note + tlen + 1, *end = note + n, *nl;
	struct buf raw;
	int count = 0, good = 0, r = 0;

	buf_init(&raw);
	for (; p < end && r >= 0; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (++count > NOTE_MAX_SIGS) {
			r = hw_err_set(HW_EXIT_DATA, "signed note has more "
			    "than %d signatures", NOTE_MAX_SIGS);
			break;
		}
		r = note_line(key, p, (size_t)(nl - p), note, tlen, &raw);
		good += r > 0;
	}
	buf_release(&raw);
	if (r < 0)
		return -1;
	if (!good)
		return hw_err_set(HW_EXIT_DATA, "signed note has no signature "
		    "by key %s+%s", key->name, key->hex);
	return 0;
}

int
note_verify(const char *name, const unsigned char pk[32], const char *note,
    size_t n, char **body)
{
	struct note_key key;
	size_t tlen = 0;

	*body = NULL;
	key.name = name;
	key.namelen = strlen(name);
	key.pk = pk;
	if (!note_name_ok(name, key.namelen))
		return hw_err_set(HW_EXIT_DATA, "bad signed-note key name");
	if (sodium_ready() < 0 || note_split(note, n, &tlen) < 0)
		return -1;
	note_keyid(name, key.namelen, pk, key.id);
	hex_encode(key.id, 4, key.hex);
	if (note_sigs(&key, note, n, tlen) < 0)
		return -1;
	*body = xmalloc(tlen + 1);
	memcpy(*body, note, tlen);
	(*body)[tlen] = '\0';
	return 0;
}
