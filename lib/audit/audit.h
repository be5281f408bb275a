/*
 * audit - what is proved about a store: full verification, the
 * content-free export, RFC 9162 Merkle trees and proofs, the on-disk tree
 * cache, checkpoints, keys and signatures, signed notes, checkpoint
 * signers and their registry.
 */
#ifndef HW_AUDIT_H
#define HW_AUDIT_H

#include "store/store.h"

/* ---- RFC 9162 Merkle trees (merkle.c) ---- */

/*
 * Leaves are hashed SHA-256(0x00 || leaf), interior nodes
 * SHA-256(0x01 || left || right); the root of the empty tree is
 * SHA-256("").  Hashes are 32 raw bytes.
 */
#define MERKLE_MAX_PROOF 64
typedef unsigned char mhash[32];

void merkle_leaf_hash(const void *leaf, size_t n, mhash out);
void merkle_node_hash(const mhash left, const mhash right, mhash out);

/*
 * A streaming root over leaf hashes pushed in order: O(log n) memory.
 * Leaves wait in pend until MERKLE_BATCH of them make a perfect subtree,
 * whose nodes are then hashed a level at a time, many at once.
 */
#define MERKLE_BATCH 64
struct merkle_stream {
	mhash stack[64];	/* roots of the perfect subtrees so far */
	uint64_t size;		/* the leaves pushed */
	mhash pend[MERKLE_BATCH];	/* the last npend of them, not yet
					   under the stack */
	unsigned npend;
};
void merkle_stream_init(struct merkle_stream *m);
void merkle_stream_push(struct merkle_stream *m, const mhash leaf_hash);
void merkle_stream_root(const struct merkle_stream *m, mhash out);

/*
 * A tree held as every level of perfect subtrees over n leaf hashes
 * (about 2n hashes), so that the root of any prefix and every proof take
 * O(log n) hash operations and no pass over the leaves.  Not thread-safe
 * (one shared SHA-256 context).
 */
struct merkle_tree {
	uint64_t n;
	mhash *level[64];	/* level[k][i]: root of leaves [i<<k, (i+1)<<k) */
	uint64_t count[64];
	int levels;
};
/* merkle_tree_build takes ownership of leaves (n hashes, malloc'd). */
void merkle_tree_build(struct merkle_tree *t, mhash *leaves, uint64_t n);
void merkle_tree_release(struct merkle_tree *t);
/* merkle_tree_root: root of the first size leaves (size <= t->n). */
int merkle_tree_root(const struct merkle_tree *t, uint64_t size, mhash out);
/*
 * merkle_tree_inclusion writes the RFC 9162 inclusion proof of leaf index
 * in the tree of the first size leaves; merkle_tree_consistency the proof
 * that the tree of size1 leaves is a prefix of the tree of size2.  *len is
 * the number of hashes.  -1 (code 2) on out-of-range arguments.
 */
int merkle_tree_inclusion(const struct merkle_tree *t, uint64_t size,
    uint64_t index, mhash proof[MERKLE_MAX_PROOF], size_t *len);
int merkle_tree_consistency(const struct merkle_tree *t, uint64_t size1,
    uint64_t size2, mhash proof[MERKLE_MAX_PROOF], size_t *len);
/*
 * Verification without the tree (RFC 9162 2.1.3.2 and 2.1.4.2): 0, or -1
 * with code 65.  size1 == 0 accepts only an empty proof and root1 equal to
 * SHA-256(""); equal sizes only an empty proof and equal roots.  A root
 * stands for its size only through a signed checkpoint: take both from the
 * same one.
 */
int merkle_verify_inclusion(uint64_t index, uint64_t size,
    const mhash leaf_hash, const mhash *proof, size_t len, const mhash root);
int merkle_verify_consistency(uint64_t size1, uint64_t size2,
    const mhash root1, const mhash root2, const mhash *proof, size_t len);

/* ---- keys, signatures, base64, signed notes (sign.c) ---- */

enum sig_alg { SIG_ED25519 = 1, SIG_P256 = 2 };

/*
 * A signing or verifying key.  Ed25519 goes through libsodium, ECDSA P-256
 * (SHA-256, DER signatures) through libcrypto.  spki is the DER
 * SubjectPublicKeyInfo; fingerprint is "sha256:" + hex of SHA-256(spki).
 */
struct signkey {
	enum sig_alg alg;
	int has_private;
	unsigned char ed_pk[32], ed_sk[64];
	void *pkey;			/* EVP_PKEY * for P-256 */
	unsigned char spki[128];
	size_t spki_len;
	char fingerprint[HW_HASH_LEN + 1];
};
/* sig_alg_name: "ed25519" or "ecdsa-p256-sha256". */
const char *sig_alg_name(enum sig_alg alg);
/*
 * key_load_private reads an unencrypted PKCS#8 PEM private key: a regular,
 * non-symlink file of at most 64 KiB, mode & 077 == 0, owned by the
 * effective uid.  key_load_public reads a PEM SubjectPublicKeyInfo: a
 * regular non-symlink file of at most 64 KiB, not group- or
 * other-writable, owned by root or the effective uid.  Only Ed25519 and
 * P-256 keys are accepted.  Errors are code 65 (bad key or file) or 66.
 */
int key_load_private(const char *path, struct signkey *k);
/* (On failure the key is left zeroed; key_release is safe on it.) */
int key_load_public(const char *path, struct signkey *k);
int key_generate(enum sig_alg alg, struct signkey *k);
/* key_pem_private / key_pem_public append PEM text to b. */
int key_pem_private(const struct signkey *k, struct buf *b);
int key_pem_public(const struct signkey *k, struct buf *b);
void key_release(struct signkey *k);
/* key_sign: Ed25519 gives 64 bytes, P-256 a DER signature (<= 72). */
int key_sign(const struct signkey *k, const void *msg, size_t n,
    unsigned char sig[80], size_t *siglen);
/* key_verify: 0 when sig is a valid signature of msg, else -1 (code 65). */
int key_verify(const struct signkey *k, const void *msg, size_t n,
    const unsigned char *sig, size_t siglen);


/*
 * C2SP signed notes with Ed25519 signatures.  note_sign appends to out the
 * body (which must end in "\n"), a blank line and "\u2014 NAME SIG" where
 * SIG is base64(key id || signature) and the key id is the first 4 bytes
 * of SHA-256(NAME || 0x0A || 0x01 || public key).  note_verify checks a
 * note against one known key by name; unknown signers are ignored, and a
 * note with no valid signature by the key is refused.  On success *body
 * (malloc'd) is the signed text.  note_vkey appends the verifier key
 * "NAME+hex(key id)+base64(0x01 || public key)".
 */
int note_sign(const char *name, const struct signkey *k, const char *body,
    struct buf *out);
int note_verify(const char *name, const unsigned char pk[32],
    const char *note, size_t n, char **body);
void note_vkey(const char *name, const unsigned char pk[32], struct buf *out);

/* ---- audit verification, export and checkpoints (audit.c) ---- */

/*
 * What a verified audit log adds up to: its records, the chain head, the
 * SHA-256 and size of its canonical export bytes, and its RFC 9162 Merkle
 * root (leaf = a record's canonical JSON, without the newline).
 */
struct audit_sum {
	int64_t count;
	char terminal[HW_HASH_LEN + 1];
	char content_sha[HW_HASH_LEN + 1];
	uint64_t size;
	mhash root;
	char session_id[129];
	struct sha256 content;
	struct merkle_stream tree;
	int keep_leaves;	/* keep every leaf hash, for proofs */
	mhash *leaves;
	uint64_t cap;
	int64_t capture;	/* keep the record at this index (-1: none) */
	struct buf captured;
};
void audit_sum_init(struct audit_sum *m, int keep_leaves);
void audit_sum_release(struct audit_sum *m);
/* audit_verify_session fully verifies a session's paired logs. */
int audit_verify_session(struct session *s, struct audit_sum *m);
/*
 * audit_verify_fd verifies a bare audit export read from fd: any
 * equivalent JSON, whitespace-only lines skipped, one session, the chain
 * and every hash.  Errors: code 65, "sequence N: reason".
 */
int audit_verify_fd(int fd, const char *name, struct audit_sum *m);
/* audit_sum_json appends the verification result object. */
void audit_sum_json(const struct audit_sum *m, struct buf *b);
/* path_outside_store: -1 (code 2) when path's directory is in .heartwood. */
int path_outside_store(const char *path);
/*
 * publish_new_file writes a 0600 file that must not exist yet: through a
 * synced temporary file that is linked into place, so it never replaces
 * anything and never appears partial (code 1 if the path exists).
 */
int publish_new_file(const char *path, const void *p, size_t n);
/*
 * audit_export (lease held) commits audit.export.recorded, re-verifies the
 * session including it, and writes the canonical export atomically to the
 * session's audit-export.jsonl; with output, also a copy there, which must
 * be outside .heartwood and must not exist.
 */
int audit_export(struct session *s, struct audit_sum *m, const char *output);

/* ---- checkpoints (checkpoint.c) ---- */

struct checkpoint_opts {
	const char *deployment_id, *policy_id, *retain_until;
	const char *signer_id, *key_id, *key_version;
};
/* checkpoint_statement builds heartwood.audit-checkpoint-statement.v1. */
struct jval *checkpoint_statement(struct arena *a, const struct audit_sum *m,
    const struct checkpoint_opts *o);
/*
 * checkpoint_sign signs the statement (domain string, NUL, canonical JSON
 * of the signature fields and the statement) and returns the
 * heartwood.audit-checkpoint.v2 object, or NULL.
 */
struct jval *checkpoint_sign(struct arena *a, struct jval *statement,
    const struct signkey *k, const struct checkpoint_opts *o);
/* checkpoint_note_body: the C2SP tlog-checkpoint body of a verified log. */
void checkpoint_note_body(const struct audit_sum *m, const char *deployment,
    struct buf *b);
/*
 * checkpoint_publish stages audit.jsonl (copied from auditpath) and
 * checkpoint.json in a temporary directory beside output, syncs them and
 * renames it into place under <parent>/.<name>.lock; an existing output is
 * never replaced (code 1) and a failure leaves no partial bundle.
 */
int checkpoint_publish(const char *output, const char *auditpath,
    const struct jval *cp);
/*
 * checkpoint_verify runs every check of a bundle in the reference's order
 * (hw-audit(1)); on success *out is the checkpoint and m its export.
 */
int checkpoint_verify(const char *dir, const char *pubkey, struct arena *a,
    struct audit_sum *m, struct jval **out);
/* checkpoint_args_ok checks the identifiers and the retention date. */
/* key_text: 1 to 512 characters in 0x21-0x7e (key ids and versions). */
int key_text(const char *s);
int checkpoint_args_ok(const struct checkpoint_opts *o);

/* ---- the on-disk Merkle tree of a session (mcache.c) ---- */

/*
 * A session's tree as level files under .merkle/ in its directory, kept
 * in step with audit.jsonl: mcache_open (under .merkle/lock) checks the
 * cache against the log, rebuilds it if it does not match, extends it
 * with the records appended since (checking their chain and hashes), and
 * maps the levels as c->t, so proofs read O(log n) nodes.
 */
struct mcache {
	char *dir;
	int lock;
	int fd[64];
	void *map[64];
	size_t maplen[64];
	struct merkle_tree t;	/* levels point into the maps */
	int64_t count;
	int offs;		/* record offsets in audit.jsonl */
};
int mcache_open(struct session *s, struct mcache *c);
void mcache_close(struct mcache *c);
/* mcache_record puts audit record seq's line (no "\n") in out. */
int mcache_record(struct session *s, struct mcache *c, int64_t seq,
    struct buf *out);

/* ---- Merkle proofs of audit logs (proof.c) ---- */

/*
 * proof_inclusion appends, from the session's Merkle cache, the canonical
 * proof that its record seq is in the tree of all its records:
 * {"kind":"inclusion","leaf_index","proof":[hex],"record","root","tree_size"}.
 */
int proof_inclusion(struct session *s, int64_t seq, struct buf *out);
/*
 * proof_consistency verifies the audit.jsonl of two checkpoint bundles and
 * appends the proof that the newer extends the older:
 * {"kind":"consistency","proof","root1","root2","size1","size2"}.  A newer
 * log that is shorter or does not contain the older tree is code 65.
 */
int proof_consistency(const char *olddir, const char *newdir,
    struct buf *out);
/*
 * proof_consistency_session proves, from the session's Merkle cache, that
 * its log extends the tree of its first size1 records.  Like
 * proof_inclusion, it checks the audit chain (through the cache), not the
 * pairing with the event log: hw-audit verify does that.
 */
int proof_consistency_session(struct session *s, int64_t size1,
    struct buf *out);
/*
 * proof_verify checks a proof without the log; with root_from (a bundle
 * directory, signature-checked when pubkey is given) the proof's tree
 * must be that bundle's.  Appends {"kind",...,"verified":true}, and for a
 * consistency proof both trees (root1, root2, size1, size2).  A
 * consistency proof from size 0 is refused (RFC 9162: 0 < size1).
 */
int proof_verify(const char *text, size_t n, const char *root_from,
    const char *pubkey, struct buf *out);

/* The tree a verified checkpoint vouches for. */
struct tree_head {
	int64_t size;
	mhash root;
	char session_id[129];
};
struct signer_profile;
/*
 * tree_head_load verifies the checkpoint at path, a bundle directory
 * (checkpoint_verify) or its C2SP signed note (a regular file, Ed25519),
 * with pubkey or else profile p's trusted key (then a bundle's signature
 * identity must be p's and a note must be signed under p's signer id; with
 * pubkey any name whose signature by the key verifies will do), and
 * fills h.  Errors: 66 (no such path), 65.
 */
int tree_head_load(const char *path, const char *pubkey,
    const struct signer_profile *p, struct tree_head *h);
/*
 * proof_verify_between checks a consistency proof and binds it: size1 and
 * root1 must be old's tree (the checkpoint named from), size2 and root2
 * new's (to), both of one session.  Appends as proof_verify.  Code 65.
 */
int proof_verify_between(const char *text, size_t n,
    const struct tree_head *old, const char *from,
    const struct tree_head *new, const char *to, struct buf *out);

/* ---- checkpoint signers (signer.c, signclient.c, localsigner.c) */

#define SIGNER_REGISTRY_ENV "HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY"
#define SIGNER_REGISTRY_ETC "/etc/heartwood/checkpoint-signers.toml"
#define SIGNER_REGISTRY_SCHEMA "heartwood.checkpoint-signer-registry.v1"
#define SIGNER_ENDPOINT_PATH "/v1/checkpoints/sign"

/*
 * One validated registry profile.  Strings point into the registry's
 * arena.  key is loaded (and checked against algorithm and
 * public_key_sha256) by registry_profile, not by registry_load.
 */
struct signer_profile {
	const char *id, *mode, *endpoint, *signer_id, *key_id, *key_version;
	const char *algorithm, *public_key_sha256, *trusted_public_key;
	const char *token_file;		/* NULL when not given */
	const char *ca_bundle;		/* https only; NULL: the system's CAs */
	double timeout;			/* seconds, 0 < timeout <= 120 */
	int development, https;
	char host[64];			/* without brackets */
	int port;
	int key_loaded;
	struct signkey key;
};

/*
 * A signer registry: path is NULL when discovery found none (an empty
 * registry, n == 0).
 */
struct signer_registry {
	char *path;
	struct arena a;
	const char *default_profile;
	struct signer_profile *profiles;
	size_t n;
};

/*
 * registry_find writes the one registry that discovery selects into
 * *path (malloc'd), or NULL: $HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY (must
 * be absolute; a missing file is an error), else /etc/heartwood/
 * checkpoint-signers.toml if it exists, else $XDG_CONFIG_HOME (when
 * absolute) or ~/.config, plus heartwood/checkpoint-signers.toml, if it
 * exists.  Registries are never merged.
 */
int registry_find(char **path);
/*
 * registry_user_dir writes the user registry directory
 * ($XDG_CONFIG_HOME or ~/.config, plus "heartwood") to *dir (malloc'd).
 */
int registry_user_dir(char **dir);
/*
 * registry_load reads and validates the registry at path, or the one
 * discovery selects when path is NULL (possibly none: r->path NULL).  The
 * file is regular, not a symbolic link, at most 256 KiB, not group- or
 * other-writable, owned by root or the effective uid; its content follows
 * hw-audit(1) exactly.  Errors: code 65 (invalid registry), 66, 74.
 * registry_release is safe on a zeroed or failed registry.
 */
int registry_load(struct signer_registry *r, const char *path);
void registry_release(struct signer_registry *r);
/*
 * registry_profile selects profile name (NULL: the default), loads its
 * trusted public key and checks that the key's type and fingerprint are
 * the profile's.  No registry or no such profile is code 2.
 */
int registry_profile(struct signer_registry *r, const char *name,
    struct signer_profile **out);
/*
 * path_outside_project: -1 (code 2) when path resolves to the current
 * directory or below it; what names the file in the message.
 */
int path_outside_project(const char *what, const char *path);
/*
 * signer_sign asks the profile's signer to sign statement over HTTP(S)
 * (no redirects, the profile's timeout, a response of at most 64 KiB of
 * application/json) and returns the heartwood.audit-checkpoint.v2 object
 * once the returned signature carries the profile's pinned identity and
 * verifies against its trusted key; NULL with code 65 (or 69 when the
 * signer cannot be reached) otherwise.  The token never appears in an
 * error.
 */
struct jval *signer_sign(struct arena *a, struct signer_profile *p,
    struct jval *statement);
/*
 * signer_token_check reads the profile's token file (if it names one) the
 * way signer_sign will: regular, not a symbolic link, at most 64 KiB,
 * mode & 066 == 0, owned by the effective uid, one bearer token.
 */
int signer_token_check(const struct signer_profile *p);
/*
 * signer_identity_check: 0 when a signature's algorithm, signer_id,
 * key_id, key_version and public_key_sha256 are the profile's, else -1
 * (code 65) naming the first that differs.
 */
int signer_identity_check(const struct signer_profile *p,
    const struct jval *sig);
/*
 * signer_init_local creates the local development signer in the user
 * registry directory (0700): an Ed25519 key pair, a token and, last, a
 * registry with the profile local-development, every file 0600.  It
 * refuses to replace any file (code 1) and removes what it wrote when it
 * fails.  Appends a JSON summary (paths and fingerprint, no token) to out.
 */
int signer_init_local(struct buf *out);
/*
 * signer_serve_local serves POST /v1/checkpoints/sign and GET /healthz
 * for the development profile name (NULL: the default) of the registry at
 * path (NULL: discovery) on the loopback address and port of its
 * endpoint, signing with local-checkpoint-private.pem beside the
 * registry.  ready(url, ctx) is called once it listens.  Returns 0 after
 * SIGINT or SIGTERM, -1 if it cannot start.
 */
int signer_serve_local(const char *path, const char *name,
    void (*ready)(const char *url, void *ctx), void *ctx);
/*
 * signer_request_statement is the signer's check of a request body: UTF-8
 * JSON, exactly {schema_version, statement} of the sign-request schema,
 * and a valid statement, which it returns (from arena a); NULL with the
 * reason the 422 reply gives in why.
 */
struct jval *signer_request_statement(struct arena *a,
    const char *body, size_t n, char *why, size_t whysz);
/*
 * From checkpoint.c, the checks verify-checkpoint applies:
 * checkpoint_statement_check validates a statement (code 65);
 * checkpoint_signature_check validates a signature record's fields, that
 * k's fingerprint and algorithm are the record's, and the signature over
 * statement.
 */
int checkpoint_statement_check(const struct jval *st);
int checkpoint_signature_check(struct arena *a, const struct jval *sig,
    const struct jval *st, const struct signkey *k);

#endif
