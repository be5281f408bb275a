/*
 * tuf - a client of The Update Framework, specification 1.0: the trusted
 * root and its rotation, timestamp, snapshot, targets and delegations,
 * rollback and freeze protection, fast-forward recovery, consistent
 * snapshots, and targets fetched at most their listed length with every
 * listed hash checked.  Uses only base.
 *
 * Signatures: ecdsa-sha2-nistp256 (PEM SubjectPublicKeyInfo keys, hex DER
 * signatures) and rsassa-pss-sha256 (PEM keys, hex signatures) through
 * libcrypto, ed25519 (hex keys and signatures) through libsodium.  The
 * signed bytes are the OLPC canonical JSON of "signed", rebuilt from the
 * parsed tree; a metadata file is stored byte for byte as it was received.
 *
 * Errors follow base: -1 with hw_err_set; a repository that fails a check
 * gives 65, a fetch that fails 69 (network) or 66 (not found), a local
 * file that cannot be written 74.
 */
#ifndef HW_TUF_H
#define HW_TUF_H

#include <time.h>

#include "base/base.h"

/* The caps of one update (python-tuf's ngclient defaults). */
#define TUF_ROOT_MAX 512000
#define TUF_TIMESTAMP_MAX 16384
#define TUF_SNAPSHOT_MAX 2000000
#define TUF_TARGETS_MAX 5000000
#define TUF_MAX_ROOT_ROTATIONS 32
#define TUF_MAX_DELEGATIONS 32

/* ---- OLPC canonical JSON (canon.c) ---- */

/*
 * tuf_canon appends the OLPC canonical JSON of v to b: keys sorted by
 * byte (UTF-8 code point order), no whitespace, strings as their raw
 * bytes with only '"' and '\' escaped, integers as decimal.  Returns -1
 * (no error recorded) when v holds a float, which it cannot represent.
 */
int tuf_canon(struct buf *b, const struct jval *v);

/* ---- keys and signatures (key.c) ---- */

enum tuf_keykind { TUF_KEY_ED25519, TUF_KEY_ECDSA, TUF_KEY_RSAPSS };

struct tuf_key {
	const char *id;		/* the keyid, as listed (arena memory) */
	enum tuf_keykind kind;
	void *pkey;		/* EVP_PKEY for ECDSA and RSA */
	unsigned char ed[32];
};

/*
 * tuf_key_parse reads the key object v ({keytype, scheme, keyval:
 * {public}}) listed as id into k.  Key types and schemes other than the
 * three above are refused (65), like a malformed key.  tuf_key_release
 * frees what it holds.
 */
int tuf_key_parse(struct tuf_key *k, const char *id, const struct jval *v);
void tuf_key_release(struct tuf_key *k);
/* tuf_key_verify: 1 when the hex signature sig is k's over msg, else 0. */
int tuf_key_verify(const struct tuf_key *k, const char *sig,
    const void *msg, size_t n);

/* ---- metadata (meta.c) ---- */

enum tuf_type { TUF_ROOT, TUF_TIMESTAMP, TUF_SNAPSHOT, TUF_TARGETS };

/* A role as root or a delegation lists it. */
struct tuf_role {
	const char *name;
	const char **keyids;
	size_t nkeyids;
	int64_t threshold;
	int terminating;
	const struct jval *paths;	/* delegations: one of these two */
	const struct jval *prefixes;
};

/* A meta entry of timestamp or snapshot (META_FILE). */
struct tuf_metafile {
	int64_t version;
	int64_t length;			/* -1 when not listed */
	const struct jval *hashes;	/* NULL when not listed */
};

/*
 * One metadata document, parsed and checked for form (not signatures):
 * raw holds the bytes as received, canon the canonical bytes of signed.
 */
struct tuf_md {
	enum tuf_type type;
	char *name;			/* the role, once trusted (malloc'd) */
	int64_t version;
	time_t expires;
	struct arena a;
	struct buf raw, canon;
	const struct jval *sigs;
	/* root: its keys and four roles; targets: its delegations */
	int consistent;
	struct tuf_key *keys;
	size_t nkeys;
	struct tuf_role *roles;
	size_t nroles;
	int delegations;		/* targets: has a delegations object */
	/*
	 * succinct hash-bin delegation: roles[0] holds its keys, its name
	 * is name_prefix, and it stands for every bin NAME_PREFIX-HEX
	 */
	int succinct;
	int bit_length;
	/* timestamp: snapshot.json; snapshot: every entry of meta */
	const struct jval *meta;
	struct tuf_metafile snapmeta;
	/* targets: the targets object */
	const struct jval *targets;
};

/*
 * tuf_md_parse parses the n bytes of p as a metadata document that must be
 * of type want, into a new *md (free with tuf_md_free).  Everything but
 * signatures is checked: the spec version's major is 1, version >= 1,
 * expires in the form 2030-01-01T00:00:00Z, signatures with distinct key
 * ids, and the fields of the type.  NULL with 65 on any failure.
 */
struct tuf_md *tuf_md_parse(const void *p, size_t n, enum tuf_type want,
    const char *what);
void tuf_md_free(struct tuf_md *md);
/*
 * tuf_md_verify checks that md is signed by a threshold of the keys that
 * delegator lists for role (root for the top-level roles, a targets
 * document for its delegations); each key id counts once.  0 or -1 (65).
 */
int tuf_md_verify(const struct tuf_md *delegator, const char *role,
    const struct tuf_md *md);
/*
 * tuf_md_role: delegator's role named name (for a succinct delegation,
 * the role of every bin name), or NULL.
 */
const struct tuf_role *tuf_md_role(const struct tuf_md *delegator,
    const char *name);
/*
 * tuf_bin_name: the name of the hash bin of a succinct delegation that
 * path falls in, PREFIX-HEX with as many digits as the last bin needs;
 * malloc'd.
 */
char *tuf_bin_name(const struct tuf_md *md, const char *path);
/* tuf_metafile_parse: a META_FILE object into mf; -1 (65) if malformed. */
int tuf_metafile_parse(const struct jval *v, struct tuf_metafile *mf,
    const char *what);
/*
 * tuf_hashes_check: 0 when the n bytes of p match every hash of the hashes
 * object (sha256, sha384, sha512; any other algorithm fails), else -1 (65).
 */
int tuf_hashes_check(const struct jval *hashes, const void *p, size_t n,
    const char *what);
/* tuf_parse_time: "YYYY-MM-DDTHH:MM:SSZ" as UTC seconds; -1 if not. */
int tuf_parse_time(const char *s, time_t *out);

/* ---- fetching (fetch.c) ---- */

/*
 * A fetcher reads http://, https:// (through libcurl, no redirects, the
 * user agent heartwood-skill-client/1) or file:// URLs; a file:// fetch
 * is confined to the directory the fetcher was made for (no "..", no
 * symlinks, regular files only).  tuf_fetch returns 0 with the body in
 * out, or -1: code 66 with *status 404 or 403 for a file that is not
 * there, 65 for a body over max bytes, 69 for anything else.
 */
struct tuf_fetcher {
	void *curl;
	char *confine;		/* file://: the directory, else NULL */
	long timeout_ms;
};
int tuf_fetcher_init(struct tuf_fetcher *f, const char *base_url);
void tuf_fetcher_release(struct tuf_fetcher *f);
int tuf_fetch(struct tuf_fetcher *f, const char *url, size_t max,
    struct buf *out, long *status);
/* tuf_quote appends s percent-encoded: every byte but A-Z a-z 0-9 -._~ */
void tuf_quote(struct buf *b, const char *s, const char *keep);

/* ---- the updater (update.c, target.c) ---- */

struct tuf_updater {
	char *mdir;			/* local metadata directory */
	char *murl;			/* metadata base URL,
	    with a final '/' */
	time_t now;			/* read once per update */
	struct tuf_fetcher f;		/* metadata */
	struct tuf_fetcher tf;		/* targets, made on first use */
	char *turl;			/* what tf was made for */
	struct tuf_md *root, *timestamp, *snapshot;
	struct tuf_md **roles;		/* targets and delegated roles */
	size_t nroles;
	int refreshed;
};

/*
 * tuf_load_targets: the trusted targets metadata of role (delegated by
 * parent), from what is stored when it is still what snapshot lists, else
 * fetched, checked and stored.  Needs a refreshed snapshot.  The updater
 * owns what it returns.
 */
struct tuf_md *tuf_load_targets(struct tuf_updater *u, const char *role,
    const struct tuf_md *parent);
/*
 * tuf_init_root copies the root metadata file rootfile into mdir as
 * root.json (atomically), after parsing it as root metadata.  No network.
 */
int tuf_init_root(const char *mdir, const char *rootfile);
/*
 * tuf_updater_init loads the trusted root.json of mdir, which must be
 * signed by a threshold of its own keys.  murl is the metadata base URL.
 */
int tuf_updater_init(struct tuf_updater *u, const char *mdir,
    const char *murl);
void tuf_updater_release(struct tuf_updater *u);
/*
 * tuf_refresh runs the client workflow: the time is read once, root is
 * rotated (N+1.root.json until 404), then timestamp, snapshot and
 * targets.  Each file is stored in mdir as it was received only after it
 * passed every check, atomically; a failure leaves what was stored
 * before it.  A timestamp of the version already trusted ends the update
 * of the timestamp quietly.
 */
int tuf_refresh(struct tuf_updater *u);

/* A target as the role that has it lists it. */
struct tuf_target {
	char *path;
	int64_t length;
	const struct jval *hashes;	/* in the listing role's arena */
};
/*
 * tuf_target_find searches the delegation tree for path (refreshing first
 * when needed): pre-order, depth first, each role once, a terminating
 * delegation ends the search, at most TUF_MAX_DELEGATIONS roles visited.
 * Returns 1 with *t filled (free t->path), 0 when no role lists it, -1.
 */
int tuf_target_find(struct tuf_updater *u, const char *path,
    struct tuf_target *t);
/*
 * tuf_target_local: the file name a target is stored under in a target
 * directory (the path percent-encoded with nothing kept); malloc'd.
 */
char *tuf_target_local(const struct tuf_target *t);
/*
 * tuf_target_cached: 1 when dir holds t with its length and hashes, 0 not.
 */
int tuf_target_cached(const struct tuf_target *t, const char *dir);
/*
 * tuf_target_download fetches t from base_url (with consistent snapshots
 * the file name gets the first listed hash as prefix), reading at most
 * its length, checks every hash and stores it in dir atomically.
 */
int tuf_target_download(struct tuf_updater *u, const struct tuf_target *t,
    const char *base_url, const char *dir);
/*
 * tuf_target_fetch is tuf_target_download into memory (out) instead.
 */
int tuf_target_fetch(struct tuf_updater *u, const struct tuf_target *t,
    const char *base_url, struct buf *out);

#endif
