/*
 * sign_test - keys, signatures, canonical base64 and signed notes (sign.c):
 * the RFC 8032 Ed25519 vectors 1-3, the golang.org/x/mod/sumdb/note
 * PeterNeumann key and note, sign/verify round trips for Ed25519 and P-256
 * checked against the openssl command and python3-cryptography
 * (t/sign_check.py), and the key file rules.  Keys of other types are made
 * with openssl genpkey in a temporary directory; the openssl and python
 * parts are skipped when those programs are missing.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit/audit.h"
#include "tap.h"

static char D[64];		/* the temporary directory */
static int have_openssl, have_python;

#define skip(why) ok(1, "# SKIP %s", why)

static size_t
unhex(const char *h, unsigned char *out)
{
	size_t n = 0;
	unsigned v;

	while (h[0] && h[1] && sscanf(h, "%2x", &v) == 1) {
		out[n++] = (unsigned char)v;
		h += 2;
	}
	return n;
}

static const char *
P(const char *name)
{
	static char path[4][256];
	static int i;

	i = (i + 1) % 4;
	snprintf(path[i], sizeof path[i], "%s/%s", D, name);
	return path[i];
}

static void
put(const char *name, const void *p, size_t n, mode_t mode)
{
	int fd;

	unlink(P(name));
	fd = open(P(name), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, p, n) != (ssize_t)n || fchmod(fd, mode) < 0)
		printf("# cannot write %s\n", P(name));
	if (fd >= 0)
		close(fd);
}

/* sh runs a shell command with D as $D and returns its exit status. */
static int __attribute__((format(printf, 1, 2)))
sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	st = system(cmd);
	return st >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* sh_out: the first line a command prints, or "" */
static const char * __attribute__((format(printf, 1, 2)))
sh_out(const char *fmt, ...)
{
	static char out[512];
	char cmd[2048];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof cmd, fmt, ap);
	va_end(ap);
	out[0] = '\0';
	if ((f = popen(cmd, "r"))) {
		if (!fgets(out, sizeof out, f))
			out[0] = '\0';
		pclose(f);
	}
	out[strcspn(out, "\n")] = '\0';
	return out;
}

/* esc: s with newlines shown as \\n, for test names */
static const char *
esc(const char *s)
{
	static char out[128];
	size_t i = 0;

	for (; *s && i + 3 < sizeof out; s++) {
		if (*s == '\n')
			out[i++] = '\\', out[i++] = 'n';
		else
			out[i++] = *s;
	}
	out[i] = '\0';
	return out;
}

static int
err_has(int code, const char *part)
{
	int pass = hw_err_code() == code && strstr(hw_err_msg(), part);

	if (!pass)
		printf("#   error %d: %s\n", hw_err_code(), hw_err_msg());
	return pass;
}

/* write a PKCS#8 v1 PEM of an Ed25519 seed, mode 0600 */
static void
put_seed(const char *name, const unsigned char seed[32])
{
	static const unsigned char pre[16] = { 0x30, 0x2e, 0x02, 0x01, 0x00,
		0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
		0x20 };
	unsigned char der[48];
	struct buf b;

	memcpy(der, pre, 16);
	memcpy(der + 16, seed, 32);
	buf_init(&b);
	buf_adds(&b, "-----BEGIN PRIVATE KEY-----\n");
	b64_encode(&b, der, sizeof der);
	buf_adds(&b, "\n-----END PRIVATE KEY-----\n");
	put(name, b.p, b.len, 0600);
	buf_release(&b);
}

static void
put_pem(const char *name, const char *label, const unsigned char *der,
    size_t n, mode_t mode)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "-----BEGIN %s-----\n", label);
	b64_encode(&b, der, n);
	buf_printf(&b, "\n-----END %s-----\n", label);
	put(name, b.p, b.len, mode);
	buf_release(&b);
}

/* ---- RFC 8032 section 7.1, tests 1-3 ---- */

static const struct {
	const char *sk, *pk, *msg, *sig;
} rfc8032[] = {
	{ "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
	  "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
	  "",
	  "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
	  "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b" },
	{ "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
	  "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
	  "72",
	  "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
	  "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00" },
	{ "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
	  "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
	  "af82",
	  "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
	  "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a" },
};

static const unsigned char spki_pre[12] = { 0x30, 0x2a, 0x30, 0x05, 0x06,
	0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00 };

static void
rfc8032_vectors(void)
{
	unsigned char seed[32], pk[32], msg[8], want[64], sig[80], spki[44];
	size_t i, mlen, slen = 0;
	struct signkey k, pub;

	for (i = 0; i < 3; i++) {
		unhex(rfc8032[i].sk, seed);
		unhex(rfc8032[i].pk, pk);
		mlen = unhex(rfc8032[i].msg, msg);
		unhex(rfc8032[i].sig, want);
		put_seed("rfc.pem", seed);
		ok(key_load_private(P("rfc.pem"), &k) == 0 && k.alg ==
		    SIG_ED25519 && k.has_private, "RFC 8032 test %zu: PKCS#8 "
		    "seed loads", i + 1);
		ok(!memcmp(k.ed_pk, pk, 32), "RFC 8032 test %zu: public key",
		    i + 1);
		ok(key_sign(&k, msg, mlen, sig, &slen) == 0 && slen == 64 &&
		    !memcmp(sig, want, 64), "RFC 8032 test %zu: signature",
		    i + 1);
		memcpy(spki, spki_pre, 12);
		memcpy(spki + 12, pk, 32);
		put_pem("rfc.pub", "PUBLIC KEY", spki, 44, 0644);
		ok(key_load_public(P("rfc.pub"), &pub) == 0 &&
		    !pub.has_private && key_verify(&pub, msg, mlen, want, 64)
		    == 0, "RFC 8032 test %zu: verifies with the SPKI key",
		    i + 1);
		is_str(pub.fingerprint, k.fingerprint, "RFC 8032 test %zu: "
		    "private and public fingerprints agree", i + 1);
		want[i * 7] ^= 0x10;
		ok(key_verify(&pub, msg, mlen, want, 64) < 0 &&
		    hw_err_code() == HW_EXIT_DATA, "RFC 8032 test %zu: a "
		    "flipped signature bit fails", i + 1);
		key_release(&k);
		key_release(&pub);
	}
}

/* ---- round trips ---- */

static int
python_check(const char *pub, enum sig_alg alg, const char *msgf,
    const char *sigf)
{
	return sh("/usr/bin/python3 t/sign_check.py '%s' %s '%s' '%s' "
	    ">/dev/null 2>&1", P(pub), sig_alg_name(alg), P(msgf), P(sigf));
}

static int
pem_lines_ok(const struct buf *b, const char *label)
{
	char begin[64], end[64];
	const char *p = b->p, *nl;

	snprintf(begin, sizeof begin, "-----BEGIN %s-----\n", label);
	snprintf(end, sizeof end, "-----END %s-----\n", label);
	if (b->len < strlen(begin) || strncmp(p, begin, strlen(begin)) ||
	    b->len < strlen(end) || memcmp(b->p + b->len - strlen(end), end,
	    strlen(end)))
		return 0;
	for (; (nl = memchr(p, '\n', b->len - (size_t)(p - b->p))); p = nl + 1)
		if (nl - p > 64)
			return 0;
	return 1;
}

static void
pem_round_trip(const struct signkey *k, const char *tag,
    const unsigned char *sig, size_t slen, const char *msg)
{
	struct signkey k2, pub;
	struct buf b;

	buf_init(&b);
	ok(key_pem_private(k, &b) == 0 && pem_lines_ok(&b, "PRIVATE KEY"),
	    "%s: PKCS#8 PEM with lines of at most 64", tag);
	put("rt.pem", b.p, b.len, 0600);
	ok(key_load_private(P("rt.pem"), &k2) == 0 && k2.alg == k->alg &&
	    !strcmp(k2.fingerprint, k->fingerprint), "%s: private PEM "
	    "round trip keeps the key", tag);
	buf_clear(&b);
	ok(key_pem_public(k, &b) == 0 && pem_lines_ok(&b, "PUBLIC KEY"),
	    "%s: SPKI PEM", tag);
	put("rt.pub", b.p, b.len, 0644);
	ok(key_load_public(P("rt.pub"), &pub) == 0 && !strcmp(
	    pub.fingerprint, k->fingerprint) && key_verify(&pub, msg,
	    strlen(msg), sig, slen) == 0, "%s: public PEM round trip "
	    "verifies", tag);
	if (have_openssl) {
		ok(sh("openssl pkey -in '%s' -noout 2>/dev/null",
		    P("rt.pem")) == 0, "%s: openssl reads our private PEM",
		    tag);
		is_str(sh_out("openssl pkey -in '%s' -pubout -outform DER | "
		    "sha256sum | sed 's/^/sha256:/; s/ .*//'", P("rt.pem")),
		    k->fingerprint, "%s: fingerprint = sha256 of openssl's "
		    "DER SPKI", tag);
	} else {
		skip("no openssl command");
		skip("no openssl command");
	}
	key_release(&k2);
	key_release(&pub);
	buf_release(&b);
}

static void
python_round_trip(const struct signkey *k, const char *msg,
    const unsigned char *sig, size_t slen)
{
	const char *tag = sig_alg_name(k->alg);
	unsigned char bad[80];
	struct buf b;

	if (!have_python) {
		skip("no python3-cryptography");
		return;
	}
	buf_init(&b);
	key_pem_public(k, &b);
	put("py.pub", b.p, b.len, 0644);
	put("py.msg", msg, strlen(msg), 0644);
	put("py.sig", sig, slen, 0644);
	ok(python_check("py.pub", k->alg, "py.msg", "py.sig") == 0,
	    "%s: t/sign_check.py (python3-cryptography) verifies", tag);
	is_str(sh_out("/usr/bin/python3 t/sign_check.py '%s' %s '%s' '%s'",
	    P("py.pub"), tag, P("py.msg"), P("py.sig")), k->fingerprint,
	    "%s: python's SPKI fingerprint is ours", tag);
	memcpy(bad, sig, slen);
	bad[slen / 2] ^= 0x01;
	put("py.bad", bad, slen, 0644);
	ok(python_check("py.pub", k->alg, "py.msg", "py.bad") == 1,
	    "%s: t/sign_check.py refuses a flipped bit (exit 1)", tag);
	ok(python_check("py.pub", k->alg == SIG_ED25519 ? SIG_P256 :
	    SIG_ED25519, "py.msg", "py.sig") == 1, "%s: t/sign_check.py "
	    "refuses the wrong algorithm (exit 1)", tag);
	buf_release(&b);
}

static void
round_trip(enum sig_alg alg)
{
	const char *tag = sig_alg_name(alg), *msg = "checkpoint bytes\n";
	unsigned char sig[80], bad[80];
	size_t slen = 0;
	struct signkey k, other;
	char *m;
	int r;

	ok(key_generate(alg, &k) == 0 && k.has_private && k.alg == alg,
	    "%s: key_generate", tag);
	ok(strlen(k.fingerprint) == HW_HASH_LEN && !strncmp(k.fingerprint,
	    "sha256:", 7), "%s: fingerprint shape", tag);
	r = key_sign(&k, msg, strlen(msg), sig, &slen);
	ok(r == 0 && (alg == SIG_ED25519 ? slen == 64 : slen >= 8 && slen <=
	    72 && sig[0] == 0x30), "%s: sign (%zu bytes)", tag, slen);
	ok(key_verify(&k, msg, strlen(msg), sig, slen) == 0, "%s: verify",
	    tag);
	m = xstrdup(msg);
	m[3] ^= 1;
	ok(key_verify(&k, m, strlen(m), sig, slen) < 0 && err_has(
	    HW_EXIT_DATA, "does not verify"), "%s: flipped message bit fails",
	    tag);
	memcpy(bad, sig, slen);
	bad[slen - 5] ^= 0x04;
	ok(key_verify(&k, msg, strlen(msg), bad, slen) < 0, "%s: flipped "
	    "signature bit fails", tag);
	ok(key_verify(&k, msg, strlen(msg), sig, slen - 1) < 0, "%s: "
	    "truncated signature fails", tag);
	key_generate(alg, &other);
	ok(key_verify(&other, msg, strlen(msg), sig, slen) < 0, "%s: wrong "
	    "key fails", tag);
	key_release(&other);
	key_generate(alg == SIG_ED25519 ? SIG_P256 : SIG_ED25519, &other);
	ok(key_verify(&other, msg, strlen(msg), sig, slen) < 0, "%s: key of "
	    "the other algorithm fails", tag);
	key_release(&other);
	pem_round_trip(&k, tag, sig, slen, msg);
	python_round_trip(&k, msg, sig, slen);
	free(m);
	key_release(&k);
}

static void
p256_garbage(void)
{
	static const unsigned char small[8] = { 0x30, 0x06, 0x02, 0x01, 0x01,
		0x02, 0x01, 0x01 };
	const char *msg = "m";
	unsigned char sig[80], zero[72] = { 0 }, ext[81];
	size_t slen = 0;
	struct signkey k;

	key_generate(SIG_P256, &k);
	key_sign(&k, msg, 1, sig, &slen);
	ok(key_verify(&k, msg, 1, (const unsigned char *)"garbage", 7) < 0 &&
	    err_has(HW_EXIT_DATA, "ecdsa-p256-sha256 signature does not "
	    "verify"), "P-256: garbage DER fails");
	ok(key_verify(&k, msg, 1, zero, sizeof zero) < 0, "P-256: zero "
	    "bytes fail");
	ok(key_verify(&k, msg, 1, zero, 0) < 0, "P-256: empty signature "
	    "fails");
	ok(key_verify(&k, msg, 1, small, sizeof small) < 0, "P-256: "
	    "well-formed DER (r=1, s=1) fails");
	memcpy(ext, sig, slen);
	ext[slen] = 0;
	ok(key_verify(&k, msg, 1, ext, slen + 1) < 0, "P-256: a valid "
	    "signature with a trailing byte fails");
	ext[0] = 0x30;
	ext[1] = 0x81;
	memcpy(ext + 2, sig + 1, slen - 1);
	ok(key_verify(&k, msg, 1, ext, slen + 1) < 0, "P-256: the same "
	    "signature with a long-form (BER) length fails");
	ok(key_verify(&k, msg, 1, sig, slen) == 0, "P-256: and in DER "
	    "verifies");
	key_release(&k);
}

/* ---- keys made by the openssl command ---- */

static void
openssl_ed25519(void)
{
	const char *msg = "made by openssl\n";
	unsigned char sig[80];
	size_t slen = 0;
	struct signkey k, pub;
	struct buf b;

	buf_init(&b);
	sh("cd '%s' && openssl genpkey -algorithm ed25519 -out o-ed.pem && "
	    "chmod 600 o-ed.pem && openssl pkey -in o-ed.pem -pubout -out "
	    "o-ed.pub", D);
	put("o.msg", msg, strlen(msg), 0644);
	ok(key_load_private(P("o-ed.pem"), &k) == 0 && k.alg == SIG_ED25519,
	    "openssl Ed25519: private key loads");
	ok(key_load_public(P("o-ed.pub"), &pub) == 0 && !strcmp(
	    pub.fingerprint, k.fingerprint), "openssl Ed25519: public key "
	    "loads with the same fingerprint");
	key_sign(&k, msg, strlen(msg), sig, &slen);
	put("o-ed.sig", sig, slen, 0644);
	ok(sh("cd '%s' && openssl pkeyutl -verify -pubin -inkey o-ed.pub "
	    "-rawin -in o.msg -sigfile o-ed.sig >/dev/null", D) == 0,
	    "openssl Ed25519: openssl verifies our signature");
	sh("cd '%s' && openssl pkeyutl -sign -inkey o-ed.pem -rawin -in "
	    "o.msg -out o-ed.osig", D);
	ok(read_file(P("o-ed.osig"), 1024, &b) == 0 && key_verify(&pub, msg,
	    strlen(msg), (unsigned char *)b.p, b.len) == 0,
	    "openssl Ed25519: we verify openssl's signature");
	key_release(&k);
	key_release(&pub);
	buf_release(&b);
}

static void
openssl_p256(void)
{
	const char *msg = "made by openssl\n";
	unsigned char sig[80];
	size_t slen = 0;
	struct signkey k, pub, cpub;
	struct buf b;

	buf_init(&b);
	sh("cd '%s' && openssl genpkey -algorithm EC -pkeyopt "
	    "ec_paramgen_curve:P-256 -out o-p.pem && chmod 600 o-p.pem && "
	    "openssl pkey -in o-p.pem -pubout -out o-p.pub && openssl ec "
	    "-pubin -in o-p.pub -conv_form compressed -pubout -out o-pc.pub "
	    "2>/dev/null", D);
	put("o.msg", msg, strlen(msg), 0644);
	ok(key_load_private(P("o-p.pem"), &k) == 0 && k.alg == SIG_P256,
	    "openssl P-256: private key loads");
	ok(key_load_public(P("o-p.pub"), &pub) == 0 && !strcmp(
	    pub.fingerprint, k.fingerprint), "openssl P-256: public key "
	    "loads with the same fingerprint");
	key_sign(&k, msg, strlen(msg), sig, &slen);
	put("o-p.sig", sig, slen, 0644);
	ok(sh("cd '%s' && openssl dgst -sha256 -verify o-p.pub -signature "
	    "o-p.sig o.msg >/dev/null", D) == 0, "openssl P-256: openssl "
	    "verifies our signature");
	sh("cd '%s' && openssl dgst -sha256 -sign o-p.pem -out o-p.osig "
	    "o.msg", D);
	ok(read_file(P("o-p.osig"), 1024, &b) == 0 && key_verify(&pub, msg,
	    strlen(msg), (unsigned char *)b.p, b.len) == 0,
	    "openssl P-256: we verify openssl's signature");
	ok(key_load_public(P("o-pc.pub"), &cpub) == 0 && !strcmp(
	    cpub.fingerprint, pub.fingerprint) && cpub.spki_len == 91,
	    "openssl P-256: a compressed-point SPKI has the uncompressed "
	    "fingerprint");
	ok(key_verify(&cpub, msg, strlen(msg), sig, slen) == 0,
	    "openssl P-256: and verifies");
	key_release(&k);
	key_release(&pub);
	key_release(&cpub);
	buf_release(&b);
}

static const struct {
	const char *name, *gen, *err;
} foreign[] = {
	{ "rsa", "-algorithm RSA -pkeyopt rsa_keygen_bits:1024",
	  "unsupported key type RSA" },
	{ "p384", "-algorithm EC -pkeyopt ec_paramgen_curve:secp384r1",
	  "EC key on curve secp384r1, want P-256" },
	{ "ed448", "-algorithm ed448", "unsupported key type ED448" },
	{ "x25519", "-algorithm x25519", "unsupported key type X25519" },
};

static void
openssl_refused(void)
{
	char name[64];
	struct signkey k;
	size_t i;

	for (i = 0; i < sizeof foreign / sizeof *foreign; i++) {
		sh("cd '%s' && openssl genpkey %s -out f-%s.pem 2>/dev/null && "
		    "chmod 600 f-%s.pem && openssl pkey -in f-%s.pem -pubout "
		    "-out f-%s.pub", D, foreign[i].gen, foreign[i].name,
		    foreign[i].name, foreign[i].name, foreign[i].name);
		snprintf(name, sizeof name, "f-%s.pem", foreign[i].name);
		ok(key_load_private(P(name), &k) < 0 && err_has(HW_EXIT_DATA,
		    foreign[i].err), "%s private key refused", foreign[i].name);
		snprintf(name, sizeof name, "f-%s.pub", foreign[i].name);
		ok(key_load_public(P(name), &k) < 0 && err_has(HW_EXIT_DATA,
		    foreign[i].err), "%s public key refused", foreign[i].name);
	}
	sh("cd '%s' && openssl genpkey -algorithm ed25519 -aes-128-cbc -pass "
	    "pass:x -out enc.pem && chmod 600 enc.pem", D);
	ok(key_load_private(P("enc.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "PEM block is 'ENCRYPTED PRIVATE KEY', want 'PRIVATE KEY'"),
	    "encrypted PKCS#8 refused without a password prompt");
	sh("cd '%s' && openssl pkey -in o-p.pem -traditional -out trad.pem && "
	    "chmod 600 trad.pem", D);
	ok(key_load_private(P("trad.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "PEM block is 'EC PRIVATE KEY'"), "traditional SEC1 EC key "
	    "refused");
}

/* ---- key file rules ---- */

static const unsigned char seed1[32] = { 1, 2, 3 };

static void
file_kinds(void)
{
	struct signkey k;

	put_seed("ok.pem", seed1);
	ok(key_load_private(P("ok.pem"), &k) == 0, "0600 private key loads");
	key_release(&k);
	ok(key_load_private(P("missing.pem"), &k) < 0 && err_has(
	    HW_EXIT_NOINPUT, "cannot load private key"), "missing private "
	    "key: code 66");
	ok(key_load_public(P("missing.pub"), &k) < 0 && err_has(
	    HW_EXIT_NOINPUT, "cannot load public key"), "missing public "
	    "key: code 66");
	unlink(P("link.pem"));
	if (symlink("ok.pem", P("link.pem")) < 0)
		printf("# symlink failed\n");
	ok(key_load_private(P("link.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "it is a symbolic link"), "symlinked private key refused");
	ok(key_load_public(P("link.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "it is a symbolic link"), "symlinked public key refused");
	mkdir(P("dir.pem"), 0700);
	ok(key_load_private(P("dir.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "not a regular file"), "directory refused");
	mkfifo(P("fifo.pem"), 0600);
	ok(key_load_private(P("fifo.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "not a regular file"), "FIFO refused without blocking");
}

static void
file_modes(void)
{
	static const struct {
		mode_t mode;
		int private, good;
	} m[] = {
		{ 0600, 1, 1 }, { 0400, 1, 1 }, { 0640, 1, 0 }, { 0604, 1, 0 },
		{ 0610, 1, 0 }, { 0644, 0, 1 }, { 0444, 0, 1 }, { 0600, 0, 1 },
		{ 0664, 0, 0 }, { 0646, 0, 0 }, { 0620, 0, 0 },
	};
	struct signkey k;
	struct buf b;
	size_t i;
	int r;

	buf_init(&b);
	put_seed("mode.pem", seed1);
	key_load_private(P("mode.pem"), &k);
	key_pem_public(&k, &b);
	key_release(&k);
	put("mode.pub", b.p, b.len, 0644);
	for (i = 0; i < sizeof m / sizeof *m; i++) {
		chmod(P(m[i].private ? "mode.pem" : "mode.pub"), m[i].mode);
		r = m[i].private ? key_load_private(P("mode.pem"), &k) :
		    key_load_public(P("mode.pub"), &k);
		if (m[i].good)
			ok(r == 0, "%s key mode %04o accepted", m[i].private ?
			    "private" : "public", (unsigned)m[i].mode);
		else
			ok(r < 0 && err_has(HW_EXIT_DATA, m[i].private ?
			    "group or others can access it" :
			    "group or others can write it"), "%s key mode %04o "
			    "refused", m[i].private ? "private" : "public",
			    (unsigned)m[i].mode);
		key_release(&k);
	}
	buf_release(&b);
}

static void
file_size_owner(void)
{
	struct signkey k;
	struct buf b;

	buf_init(&b);
	put_seed("size.pem", seed1);
	read_file(P("size.pem"), 4096, &b);
	while (b.len < 65536)
		buf_addc(&b, '\n');
	put("size.pem", b.p, b.len, 0600);
	ok(key_load_private(P("size.pem"), &k) == 0, "a 65536-byte key file "
	    "loads");
	key_release(&k);
	buf_addc(&b, '\n');
	put("size.pem", b.p, b.len, 0600);
	ok(key_load_private(P("size.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "larger than 65536 bytes"), "a 65537-byte key file is refused");
	put("size.pub", b.p, b.len, 0644);
	ok(key_load_public(P("size.pub"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "larger than 65536 bytes"), "a 65537-byte public key is refused");
	buf_release(&b);
	if (geteuid() != 0) {
		skip("not root: cannot give a key file to another owner");
		skip("not root");
		skip("not root");
		return;
	}
	put_seed("owner.pem", seed1);
	ok(chown(P("owner.pem"), 65534, 65534) == 0 && key_load_private(
	    P("owner.pem"), &k) < 0 && err_has(HW_EXIT_DATA, "owned by uid "
	    "65534, not by the effective uid 0"), "private key of another "
	    "owner refused");
	key_load_private(P("ok.pem"), &k);
	buf_init(&b);
	key_pem_public(&k, &b);
	key_release(&k);
	put("owner.pub", b.p, b.len, 0644);
	buf_release(&b);
	ok(chown(P("owner.pub"), 0, 0) == 0 && key_load_public(P("owner.pub"),
	    &k) == 0, "public key owned by root loads");
	key_release(&k);
	ok(chown(P("owner.pub"), 65534, 65534) == 0 && key_load_public(
	    P("owner.pub"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "owned by uid 65534, neither root"), "public key of another "
	    "owner refused");
}

/* ---- PKCS#8 and SPKI layouts ---- */

static void
der_layouts(void)
{
	static const unsigned char v2pre[16] = { 0x30, 0x51, 0x02, 0x01, 0x01,
		0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
		0x20 };
	unsigned char der[160], pk[32];
	struct signkey k;

	memcpy(der, v2pre, 16);
	unhex(rfc8032[0].sk, der + 16);
	memcpy(der + 48, "\x81\x21\x00", 3);
	unhex(rfc8032[0].pk, der + 51);
	memcpy(pk, der + 51, 32);
	put_pem("v2.pem", "PRIVATE KEY", der, 83, 0600);
	ok(key_load_private(P("v2.pem"), &k) == 0 && !memcmp(k.ed_pk, pk, 32),
	    "PKCS#8 v2 Ed25519 with its public key loads");
	key_release(&k);
	der[60] ^= 1;
	put_pem("v2.pem", "PRIVATE KEY", der, 83, 0600);
	ok(key_load_private(P("v2.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "does not match its seed"), "PKCS#8 v2 with a wrong public key "
	    "refused");
	/* v2 with an attributes [0] element: SEQUENCE length 0x72 */
	der[1] = 0x72;
	memmove(der + 48 + 33, der + 48, 35);
	memcpy(der + 48, "\xa0\x1f\x30\x1d", 4);
	memset(der + 52, 0x41, 29);
	put_pem("v2.pem", "PRIVATE KEY", der, 116, 0600);
	ok(key_load_private(P("v2.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "unsupported Ed25519 PKCS#8 layout"), "PKCS#8 v2 with attributes "
	    "refused clearly");
	memcpy(der, v2pre, 16);
	der[1] = 0x2e;
	der[4] = 0x00;
	put_pem("v1x.pem", "PRIVATE KEY", der, 49, 0600);
	ok(key_load_private(P("v1x.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "unsupported Ed25519 PKCS#8 layout"), "PKCS#8 v1 with a trailing "
	    "byte refused");
	memcpy(der, spki_pre, 12);
	memset(der + 12, 0, 32);
	der[12] = 1;		/* the identity point: small order */
	put_pem("id.pub", "PUBLIC KEY", der, 44, 0644);
	ok(key_load_public(P("id.pub"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "not a valid Ed25519 public key"), "small-order Ed25519 public "
	    "key refused");
	unhex(rfc8032[0].pk, der + 12);
	put_pem("x.pub", "PUBLIC KEY", der, 45, 0644);
	ok(key_load_public(P("x.pub"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "malformed Ed25519 SubjectPublicKeyInfo"), "Ed25519 SPKI with a "
	    "trailing byte refused");
}

/* pem_der: the DER of k's private PEM */
static void
pem_der(const struct signkey *k, struct buf *der)
{
	struct buf pem, b64;
	char *p, *e;

	buf_init(&pem);
	buf_init(&b64);
	key_pem_private(k, &pem);
	p = strchr(buf_cstr(&pem), '\n') + 1;
	e = strstr(p, "-----END");
	for (; p < e; p++)
		if (*p != '\n')
			buf_addc(&b64, *p);
	b64_decode_canonical(b64.p, b64.len, der);
	buf_release(&pem);
	buf_release(&b64);
}

static void
p256_der(void)
{
	struct signkey k, pub;
	struct buf b, der;

	buf_init(&b);
	buf_init(&der);
	key_generate(SIG_P256, &k);
	buf_add(&der, k.spki, k.spki_len);
	buf_addc(&der, 0);
	put_pem("p-x.pub", "PUBLIC KEY", (unsigned char *)der.p, der.len,
	    0644);
	ok(key_load_public(P("p-x.pub"), &pub) < 0 && err_has(HW_EXIT_DATA,
	    "not a valid SubjectPublicKeyInfo"), "P-256 SPKI with a trailing "
	    "byte refused");
	put_pem("p-t.pub", "PUBLIC KEY", k.spki, k.spki_len - 1, 0644);
	ok(key_load_public(P("p-t.pub"), &pub) < 0 && err_has(HW_EXIT_DATA,
	    "not a valid SubjectPublicKeyInfo"), "truncated P-256 SPKI "
	    "refused");
	key_release(&k);
	/* the public point of another key in a PKCS#8 key (its last bytes) */
	key_generate(SIG_P256, &k);
	key_generate(SIG_P256, &pub);
	pem_der(&k, &b);
	pem_der(&pub, &der);
	ok(b.len == 138 && der.len == 138, "P-256 PKCS#8 is 138 bytes");
	memcpy(b.p + 73, der.p + 73, 65);
	put_pem("p-m.pem", "PRIVATE KEY", (unsigned char *)b.p, b.len, 0600);
	key_release(&k);
	ok(key_load_private(P("p-m.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "does not match its private key"), "P-256 PKCS#8 with another "
	    "key's public point refused");
	key_release(&pub);
	buf_release(&b);
	buf_release(&der);
}

/* subst: fmt with its "%s" replaced by s */
static void
subst(char *out, size_t n, const char *fmt, const char *s)
{
	const char *at = strstr(fmt, "%s");

	if (at)
		snprintf(out, n, "%.*s%s%s", (int)(at - fmt), fmt, s, at + 2);
	else
		snprintf(out, n, "%s", fmt);
}

static void
pem_syntax(void)
{
	static const char body[] =
	    "MC4CAQAwBQYDK2VwBCIEIAECAwAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
	static const struct {
		const char *text, *err;
	} bad[] = {
		{ "hello\n", "not a PEM file" },
		{ "", "not a PEM file" },
		{ "-----BEGIN PRIVATE KEY-----\n%s\n", "no END line" },
		{ "-----BEGIN PRIVATE KEY-----\n%s\n-----END PUBLIC KEY-----\n",
		  "END line does not match" },
		{ "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n"
		  "trailing\n", "text after the PEM block" },
		{ "-----BEGIN PRIVATE KEY-----\n%s\n-----END PRIVATE KEY-----\n"
		  "-----BEGIN PRIVATE KEY-----\n", "text after the PEM block" },
		{ "-----BEGIN PRIVATE KEY-----\n%s=\n"
		  "-----END PRIVATE KEY-----\n",
		  "not canonical base64" },
		{ "-----BEGIN PRIVATE KEY-----\n %s\n"
		  "-----END PRIVATE KEY-----\n",
		  "not canonical base64" },
		{ "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n",
		  "PEM block is empty" },
		{ "-----BEGIN PUBLIC KEY-----\n%s\n-----END PUBLIC KEY-----\n",
		  "PEM block is 'PUBLIC KEY', want 'PRIVATE KEY'" },
	};
	char text[512];
	struct signkey k;
	size_t i;

	for (i = 0; i < sizeof bad / sizeof *bad; i++) {
		subst(text, sizeof text, bad[i].text, body);
		put("syn.pem", text, strlen(text), 0600);
		ok(key_load_private(P("syn.pem"), &k) < 0 && err_has(
		    HW_EXIT_DATA, bad[i].err), "PEM refused: %s", bad[i].err);
	}
	snprintf(text, sizeof text, "\r\n\n-----BEGIN PRIVATE KEY-----\r\n%s"
	    "\r\n-----END PRIVATE KEY-----\r\n\n", body);
	put("syn.pem", text, strlen(text), 0600);
	ok(key_load_private(P("syn.pem"), &k) == 0, "PEM with CRLF lines and "
	    "blank lines around the block loads");
	key_release(&k);
	ok(key_load_public(P("ok.pem"), &k) < 0 && err_has(HW_EXIT_DATA,
	    "PEM block is 'PRIVATE KEY', want 'PUBLIC KEY'"), "a private key "
	    "given as the public key is refused");
}

/* ---- base64 ---- */

static void
base64(void)
{
	static const char *const enc[][2] = {
		{ "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" },
		{ "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
		{ "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" },
	};
	static const char *const refused[] = {
		"Zh==", "Zg", "Zg==\n", "Zg=", "Z===", "====", "Zm9=",
		"Zg==Zg==", " Zg==", "Zm-v", "Zm_v", "Zm9v\n", "Zm 9v",
		"Zg=\n", "=Zg=",
	};
	struct buf b, d;
	size_t i;

	buf_init(&b);
	buf_init(&d);
	for (i = 0; i < sizeof enc / sizeof *enc; i++) {
		buf_clear(&b);
		b64_encode(&b, enc[i][0], strlen(enc[i][0]));
		is_str(buf_cstr(&b), enc[i][1], "base64 of \"%s\"", enc[i][0]);
		ok(b64_decode_canonical(enc[i][1], strlen(enc[i][1]), &d) ==
		    0 && d.len == strlen(enc[i][0]) && !memcmp(d.p ? d.p : "",
		    enc[i][0], d.len), "decode \"%s\"", enc[i][1]);
	}
	buf_adds(&d, "junk");
	ok(b64_decode_canonical("Zg==", 4, &d) == 0 && d.len == 1 &&
	    d.p[0] == 'f', "decoding replaces the buffer's content");
	for (i = 0; i < sizeof refused / sizeof *refused; i++) {
		ok(b64_decode_canonical(refused[i], strlen(refused[i]), &d) < 0
		    && d.len == 0 && hw_err_code() == HW_EXIT_DATA,
		    "refused: \"%s\"", esc(refused[i]));
	}
	buf_release(&b);
	buf_release(&d);
}

/* ---- C2SP signed notes: the golang.org/x/mod/sumdb/note vectors ---- */

#define PETER_VKEY \
	"PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
#define PETER_SKEY_DATA "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz"
#define ENOCH_VKEY \
	"EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop"
#define NOTE_TEXT "If you think cryptography is the answer to your problem,\n" \
	"then you don't know what your problem is.\n"
#define PETER_SIG "\xe2\x80\x94 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFu" \
	"pLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n"
#define ENOCH_SIG "\xe2\x80\x94 EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+" \
	"MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n"

static unsigned char peter_pk[32], enoch_pk[32];

/* vkey_pk decodes the public key of "name+id+base64(0x01 || key)" */
static void
vkey_pk(const char *vkey, unsigned char pk[32])
{
	const char *b = strrchr(vkey, '+') + 1;
	struct buf d;

	buf_init(&d);
	if (b64_decode_canonical(b, strlen(b), &d) == 0 && d.len == 33 &&
	    d.p[0] == 1)
		memcpy(pk, d.p + 1, 32);
	buf_release(&d);
}

static int
verify_str(const char *name, const unsigned char pk[32], const char *note,
    char **body)
{
	free(*body);
	*body = NULL;
	return note_verify(name, pk, note, strlen(note), body);
}

static void
note_vectors(void)
{
	struct buf b, d;
	struct signkey k;
	char *body = NULL;

	buf_init(&b);
	buf_init(&d);
	vkey_pk(PETER_VKEY, peter_pk);
	vkey_pk(ENOCH_VKEY, enoch_pk);
	note_vkey("PeterNeumann", peter_pk, &b);
	is_str(buf_cstr(&b), PETER_VKEY, "note_vkey: PeterNeumann key id "
	    "c74f20a3 and verifier key");
	buf_clear(&b);
	note_vkey("EnochRoot", enoch_pk, &b);
	is_str(buf_cstr(&b), ENOCH_VKEY, "note_vkey: EnochRoot key id "
	    "af0cfe78");
	/* the signer key's data is 0x01 || the Ed25519 seed */
	b64_decode_canonical(PETER_SKEY_DATA, strlen(PETER_SKEY_DATA), &d);
	put_seed("peter.pem", (unsigned char *)d.p + 1);
	ok(key_load_private(P("peter.pem"), &k) == 0 && !memcmp(k.ed_pk,
	    peter_pk, 32), "PeterNeumann signer key loads as PKCS#8");
	buf_clear(&b);
	ok(note_sign("PeterNeumann", &k, NOTE_TEXT, &b) == 0,
	    "note_sign PeterNeumann");
	is_str(buf_cstr(&b), NOTE_TEXT "\n" PETER_SIG, "note_sign reproduces "
	    "the Go note byte for byte");
	ok(verify_str("PeterNeumann", peter_pk, NOTE_TEXT "\n" PETER_SIG,
	    &body) == 0, "note_verify accepts the Go note");
	is_str(body, NOTE_TEXT, "note_verify returns the text");
	ok(verify_str("PeterNeumann", peter_pk, NOTE_TEXT "\n" PETER_SIG
	    ENOCH_SIG, &body) == 0 && body && !strcmp(body, NOTE_TEXT),
	    "a signature by an unknown key is ignored");
	ok(verify_str("EnochRoot", enoch_pk, NOTE_TEXT "\n" PETER_SIG
	    ENOCH_SIG, &body) == 0, "EnochRoot's signature verifies too");
	ok(verify_str("PeterNeumann", peter_pk, NOTE_TEXT "\n" ENOCH_SIG,
	    &body) < 0 && err_has(HW_EXIT_DATA, "no signature by key "
	    "PeterNeumann+c74f20a3") && !body, "no signature by the key: "
	    "refused");
	ok(verify_str("PeterNeumann", enoch_pk, NOTE_TEXT "\n" PETER_SIG,
	    &body) < 0 && err_has(HW_EXIT_DATA, "no signature by key "
	    "PeterNeumann+"), "same name, other key id: ignored, so refused");
	key_release(&k);
	buf_release(&b);
	buf_release(&d);
	free(body);
}

static void
note_refusals(void)
{
	static const char *const malformed[] = {
		NOTE_TEXT,
		NOTE_TEXT "\n",
		NOTE_TEXT "\n\xe2\x80\x94 PeterNeumann x08go/ZJkuBS9UG/Sffcv"
		"IAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6R"
		"yyBwJnAM=",
		"\x01" NOTE_TEXT "\n" PETER_SIG,
		"\xff" NOTE_TEXT "\n" PETER_SIG,
		NOTE_TEXT "\n\xe2\x80\x94 Bad Name x08go/ZJkuBS9UG/SffcvIAQx"
		"VBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyB"
		"wJnAM=\n",
		NOTE_TEXT "\n" PETER_SIG "Unexpected line.\n",
		"\n" PETER_SIG,
		NOTE_TEXT "\n- PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLL"
		"r8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n",
		NOTE_TEXT "\n\xe2\x80\x94 PeterNeumann\n",
		NOTE_TEXT "\n\xe2\x80\x94 PeterNeumann AAAA\n",
		NOTE_TEXT "\r\n" PETER_SIG,
	};
	char *body = NULL, sig[256], note[8192];
	size_t i;

	for (i = 0; i < sizeof malformed / sizeof *malformed; i++)
		ok(verify_str("PeterNeumann", peter_pk, malformed[i], &body) <
		    0 && err_has(HW_EXIT_DATA, "signed note") && !body,
		    "malformed note %zu refused", i);
	ok(verify_str("PeterNeumann", peter_pk, "If you think cryptographY is"
	    " the answer to your problem,\nthen you don't know what your "
	    "problem is.\n\n" PETER_SIG, &body) < 0 && err_has(HW_EXIT_DATA,
	    "invalid signature for key PeterNeumann+c74f20a3"),
	    "tampered text: invalid signature");
	/* Go's test: 4 more base64 characters inside the signature */
	snprintf(sig, sizeof sig, "%.60sABCD%s", PETER_SIG, PETER_SIG + 60);
	snprintf(note, sizeof note, "%s\n%s", NOTE_TEXT, sig);
	ok(verify_str("PeterNeumann", peter_pk, note, &body) < 0 && err_has(
	    HW_EXIT_DATA, "invalid signature for key PeterNeumann+c74f20a3"),
	    "lengthened signature: invalid signature");
	snprintf(note, sizeof note, "%s\n%s%s", NOTE_TEXT, PETER_SIG, sig);
	ok(verify_str("PeterNeumann", peter_pk, note, &body) < 0,
	    "a good and a bad signature by the key: refused");
	strcpy(note, NOTE_TEXT "\n");
	for (i = 0; i < 15; i++)
		strcat(note, ENOCH_SIG);
	strcat(note, PETER_SIG);
	ok(verify_str("PeterNeumann", peter_pk, note, &body) == 0,
	    "16 signature lines accepted");
	strcat(note, ENOCH_SIG);
	ok(verify_str("PeterNeumann", peter_pk, note, &body) < 0 && err_has(
	    HW_EXIT_DATA, "more than 16 signatures"), "17 signature lines "
	    "refused");
	ok(verify_str("Peter Neumann", peter_pk, NOTE_TEXT "\n" PETER_SIG,
	    &body) < 0, "a verifier name with a space is refused");
	free(body);
}

static void
note_round_trip(void)
{
	static const char text[] = "heartwood.example/audit\n7\n\nblank line "
	    "above, \xc3\xa9 UTF-8\n";
	static const char *const names[] = { "a b", "a+b", "", "a\xc2\xa0"
		"b", "a\xe3\x80\x80" "b", "a\tb" };
	struct signkey k, p;
	struct buf b;
	char *body = NULL;
	size_t i;

	buf_init(&b);
	key_generate(SIG_ED25519, &k);
	ok(note_sign("heartwood.example/log", &k, text, &b) == 0 &&
	    verify_str("heartwood.example/log", k.ed_pk, buf_cstr(&b), &body)
	    == 0 && body && !strcmp(body, text), "note round trip, blank line "
	    "in the text");
	ok(verify_str("heartwood.example/lo", k.ed_pk, buf_cstr(&b), &body) <
	    0, "another name does not match");
	for (i = 0; i < sizeof names / sizeof *names; i++)
		ok(note_sign(names[i], &k, text, &b) < 0 && err_has(
		    HW_EXIT_DATA, "bad signed-note key name"), "note_sign "
		    "refuses key name %zu", i);
	ok(note_sign("n", &k, "no newline", &b) < 0 && err_has(HW_EXIT_DATA,
	    "bad signed-note text"), "note_sign refuses text without a final "
	    "newline");
	ok(note_sign("n", &k, "", &b) < 0, "note_sign refuses empty text");
	ok(note_sign("n", &k, "tab\there\n", &b) < 0, "note_sign refuses a "
	    "control character");
	key_generate(SIG_P256, &p);
	ok(note_sign("n", &p, text, &b) < 0 && err_has(HW_EXIT_DATA,
	    "need an Ed25519 private key"), "note_sign refuses a P-256 key");
	key_release(&p);
	key_release(&k);
	buf_release(&b);
	free(body);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(D, sizeof D, "%s/sign_test.XXXXXX", tmp && *tmp && strlen(
	    tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(D)) {
		printf("Bail out! cannot make a temporary directory\n");
		return 1;
	}
	have_openssl = sh("openssl version >/dev/null 2>&1") == 0;
	have_python = sh("/usr/bin/python3 -c 'import cryptography' "
	    ">/dev/null 2>&1") == 0;
	rfc8032_vectors();
	round_trip(SIG_ED25519);
	round_trip(SIG_P256);
	p256_garbage();
	base64();
	note_vectors();
	note_refusals();
	note_round_trip();
	file_kinds();
	file_modes();
	file_size_owner();
	der_layouts();
	p256_der();
	pem_syntax();
	if (have_openssl) {
		openssl_ed25519();
		openssl_p256();
		openssl_refused();
	} else {
		skip("no openssl command: interoperability and key types");
	}
	sh("rm -rf '%s'", D);
	return tap_done();
}
