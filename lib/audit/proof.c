/* proof.c - RFC 9162 inclusion and consistency proofs of audit logs */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"

static void
put_hex(struct buf *b, const mhash h)
{
	char hex[65];

	hex_encode(h, 32, hex);
	buf_printf(b, "\"%s\"", hex);
}

static void
put_proof(struct buf *b, const mhash *p, size_t len)
{
	size_t i;

	buf_addc(b, '[');
	for (i = 0; i < len; i++) {
		if (i)
			buf_addc(b, ',');
		put_hex(b, p[i]);
	}
	buf_addc(b, ']');
}

static int
tree_of(struct audit_sum *m, struct merkle_tree *t)
{
	mhash *leaves = m->leaves;

	m->leaves = NULL;
	m->cap = 0;
	merkle_tree_build(t, leaves, (uint64_t)m->count);
	return 0;
}

int
proof_inclusion(struct session *s, int64_t seq, struct buf *out)
{
	struct mcache c;
	struct arena a;
	struct buf rec;
	struct jval *v;
	mhash proof[MERKLE_MAX_PROOF], root;
	char err[128];
	size_t len;
	int rc = -1;

	arena_init(&a);
	buf_init(&rec);
	if (mcache_open(s, &c) < 0 || mcache_record(s, &c, seq, &rec) < 0)
		goto out;
	if (!(v = json_parse(&a, rec.p, rec.len, err, sizeof err))) {
		hw_err_set(HW_EXIT_DATA, "sequence %lld: %s", (long long)seq,
		    err);
		goto out;
	}
	if (merkle_tree_root(&c.t, c.t.n, root) < 0 ||
	    merkle_tree_inclusion(&c.t, c.t.n, (uint64_t)seq, proof, &len) < 0)
		goto out;
	buf_printf(out, "{\"kind\":\"inclusion\",\"leaf_index\":%lld,"
	    "\"proof\":", (long long)seq);
	put_proof(out, proof, len);
	buf_adds(out, ",\"record\":");
	json_canon(out, v);
	buf_adds(out, ",\"root\":");
	put_hex(out, root);
	buf_printf(out, ",\"tree_size\":%lld}", (long long)c.count);
	rc = 0;
out:
	mcache_close(&c);
	buf_release(&rec);
	arena_release(&a);
	return rc;
}

int
proof_consistency_session(struct session *s, int64_t size1, struct buf *out)
{
	struct mcache c;
	mhash proof[MERKLE_MAX_PROOF], r1, r2;
	size_t len = 0;
	int rc = -1;

	if (mcache_open(s, &c) < 0)
		goto out;
	if (size1 < 1) {
		hw_err_set(HW_EXIT_USAGE, "invalid size '%lld': a consistency "
		    "proof starts from a tree of at least one record (RFC 9162)",
		    (long long)size1);
		goto out;
	}
	if (size1 > c.count) {
		hw_err_set(HW_EXIT_DATA, "the log holds %lld records, fewer than "
		    "%lld: it was truncated", (long long)c.count,
		    (long long)size1);
		goto out;
	}
	if (merkle_tree_root(&c.t, (uint64_t)size1, r1) < 0 ||
	    merkle_tree_root(&c.t, c.t.n, r2) < 0 ||
	    merkle_tree_consistency(&c.t, (uint64_t)size1, c.t.n, proof,
	    &len) < 0)
		goto out;
	buf_adds(out, "{\"kind\":\"consistency\",\"proof\":");
	put_proof(out, proof, len);
	buf_adds(out, ",\"root1\":");
	put_hex(out, r1);
	buf_adds(out, ",\"root2\":");
	put_hex(out, r2);
	buf_printf(out, ",\"size1\":%lld,\"size2\":%lld}", (long long)size1,
	    (long long)c.count);
	rc = 0;
out:
	mcache_close(&c);
	return rc;
}

/* bundle_log verifies DIR/audit.jsonl into m. */
static int
bundle_log(const char *dir, struct audit_sum *m)
{
	char *path = path_join(dir, "audit.jsonl");
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd < 0) {
		rc = hw_err_sys("cannot open '%s'", path);
		if (errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
	} else {
		rc = audit_verify_fd(fd, path, m);
		if (rc < 0)
			hw_err_set(HW_EXIT_DATA, "'%s': %s", path, hw_err_msg());
		close(fd);
	}
	free(path);
	return rc;
}

int
proof_consistency(const char *olddir, const char *newdir, struct buf *out)
{
	struct audit_sum a, b;
	struct merkle_tree t;
	mhash proof[MERKLE_MAX_PROOF], r1;
	size_t len;
	int rc = -1;

	audit_sum_init(&a, 0);
	audit_sum_init(&b, 1);
	memset(&t, 0, sizeof t);
	if (bundle_log(olddir, &a) < 0 || bundle_log(newdir, &b) < 0)
		goto out;
	if (a.count && b.count && strcmp(a.session_id, b.session_id)) {
		hw_err_set(HW_EXIT_DATA, "the checkpoints are of different "
		    "sessions");
		goto out;
	}
	if (a.count == 0) {
		hw_err_set(HW_EXIT_DATA, "the older checkpoint is of an empty "
		    "log: a consistency proof starts from a tree of at least "
		    "one record (RFC 9162)");
		goto out;
	}
	if (b.count < a.count) {
		hw_err_set(HW_EXIT_DATA, "the newer log holds %lld records, "
		    "fewer than the %lld of the older checkpoint: it was "
		    "truncated", (long long)b.count, (long long)a.count);
		goto out;
	}
	tree_of(&b, &t);
	if (merkle_tree_root(&t, (uint64_t)a.count, r1) < 0 ||
	    memcmp(r1, a.root, sizeof r1)) {
		hw_err_set(HW_EXIT_DATA, "the newer log does not extend the "
		    "older checkpoint: its first %lld records differ",
		    (long long)a.count);
		goto out;
	}
	if (merkle_tree_consistency(&t, (uint64_t)a.count, t.n, proof,
	    &len) < 0)
		goto out;
	buf_adds(out, "{\"kind\":\"consistency\",\"proof\":");
	put_proof(out, proof, len);
	buf_adds(out, ",\"root1\":");
	put_hex(out, a.root);
	buf_adds(out, ",\"root2\":");
	put_hex(out, b.root);
	buf_printf(out, ",\"size1\":%lld,\"size2\":%lld}", (long long)a.count,
	    (long long)b.count);
	rc = 0;
out:
	merkle_tree_release(&t);
	audit_sum_release(&a);
	audit_sum_release(&b);
	return rc;
}

static int
unhex(const struct jval *v, mhash out)
{
	size_t i;
	unsigned int x;

	if (!v || v->t != J_STRING || v->n != 64)
		return -1;
	for (i = 0; i < 32; i++) {
		if (sscanf(v->u.s + 2 * i, "%2x", &x) != 1 ||
		    !strchr("0123456789abcdef", v->u.s[2 * i]) ||
		    !strchr("0123456789abcdef", v->u.s[2 * i + 1]))
			return -1;
		out[i] = (unsigned char)x;
	}
	return 0;
}

static int
proof_hashes(const struct jval *arr, mhash *p, size_t *len)
{
	size_t i;

	if (!arr || arr->t != J_ARRAY || arr->n > MERKLE_MAX_PROOF)
		return -1;
	for (i = 0; i < arr->n; i++)
		if (unhex(arr->u.a[i], p[i]) < 0)
			return -1;
	*len = arr->n;
	return 0;
}

static int
bad_proof(const char *what)
{
	return hw_err_set(HW_EXIT_DATA, "proof is invalid: %s", what);
}

static int
verify_inclusion(struct arena *a, const struct jval *j, mhash root,
    int64_t *size)
{
	struct jval *rec = json_get(j, "record");
	mhash proof[MERKLE_MAX_PROOF], leaf;
	char h[HW_HASH_LEN + 1], err[200];
	struct buf b;
	int64_t idx;
	size_t len;
	int rc;

	if (json_get_int(j, "leaf_index", &idx) < 0 ||
	    json_get_int(j, "tree_size", size) < 0 || idx < 0 || *size < 1 ||
	    unhex(json_get(j, "root"), root) < 0 ||
	    proof_hashes(json_get(j, "proof"), proof, &len) < 0 || !rec ||
	    rec->t != J_OBJECT)
		return bad_proof("malformed inclusion proof");
	buf_init(&b);
	rc = audit_check(a, rec, err, sizeof err);
	audit_hash(a, rec, &b, h);
	if (rc < 0 || !json_is_str(json_get(rec, "event_hash"), h)) {
		buf_release(&b);
		return bad_proof("the record's event_hash does not match it");
	}
	buf_clear(&b);
	json_canon(&b, rec);
	merkle_leaf_hash(b.p, b.len, leaf);
	buf_release(&b);
	if (merkle_verify_inclusion((uint64_t)idx, (uint64_t)*size, leaf,
	    proof, len, root) < 0)
		return bad_proof("the record is not in the tree at that "
		    "index");
	return 0;
}

/* A consistency proof's two trees. */
struct trees {
	int64_t size1, size2;
	mhash root1, root2;
};

static int
verify_consistency(const struct jval *j, struct trees *t)
{
	mhash proof[MERKLE_MAX_PROOF];
	size_t len;

	if (json_get_int(j, "size1", &t->size1) < 0 ||
	    json_get_int(j, "size2", &t->size2) < 0 || t->size1 < 0 ||
	    t->size2 < t->size1 || unhex(json_get(j, "root1"), t->root1) < 0 ||
	    unhex(json_get(j, "root2"), t->root2) < 0 ||
	    proof_hashes(json_get(j, "proof"), proof, &len) < 0)
		return bad_proof("malformed consistency proof");
	if (t->size1 == 0)
		return bad_proof("a consistency proof starts from a tree of at "
		    "least one record (RFC 9162)");
	if (merkle_verify_consistency((uint64_t)t->size1, (uint64_t)t->size2,
	    t->root1, t->root2, proof, len) < 0)
		return bad_proof("the newer tree does not extend the older");
	return 0;
}

static void
put_trees(struct buf *out, const struct trees *t)
{
	buf_adds(out, "{\"kind\":\"consistency\",\"root1\":");
	put_hex(out, t->root1);
	buf_adds(out, ",\"root2\":");
	put_hex(out, t->root2);
	buf_printf(out, ",\"size1\":%lld,\"size2\":%lld,\"tree_size\":%lld,"
	    "\"verified\":true}", (long long)t->size1, (long long)t->size2,
	    (long long)t->size2);
}

int
proof_verify(const char *text, size_t n, const char *root_from,
    const char *pubkey, struct buf *out)
{
	struct arena a;
	struct jval *j, *cp;
	struct audit_sum m;
	struct trees t;
	mhash root;
	int64_t size;
	char err[128];
	int rc = -1, incl = 0;

	arena_init(&a);
	audit_sum_init(&m, 0);
	if (!(j = json_parse(&a, text, n, err, sizeof err)) ||
	    j->t != J_OBJECT) {
		bad_proof("not a JSON object");
		goto out;
	}
	if (json_is_str(json_get(j, "kind"), "inclusion"))
		rc = verify_inclusion(&a, j, root, &size), incl = 1;
	else if (json_is_str(json_get(j, "kind"), "consistency")) {
		rc = verify_consistency(j, &t);
		size = t.size2;
		memcpy(root, t.root2, sizeof root);
	} else
		rc = bad_proof("unknown kind");
	if (rc == 0 && root_from) {
		rc = pubkey ? checkpoint_verify(root_from, pubkey, &a, &m, &cp) :
		    bundle_log(root_from, &m);
		if (rc == 0 && (m.count != size || memcmp(m.root, root, 32)))
			rc = bad_proof("its tree is not the tree of the "
			    "checkpoint");
	}
	if (rc == 0 && incl)
		buf_printf(out, "{\"kind\":\"inclusion\",\"tree_size\":%lld,"
		    "\"verified\":true}", (long long)size);
	else if (rc == 0)
		put_trees(out, &t);
out:
	audit_sum_release(&m);
	arena_release(&a);
	return rc;
}

/* bound: 0 when the proof's tree (size, root) is h, the tree of what */
static int
bound(const char *which, int64_t size, const mhash root,
    const struct tree_head *h, const char *what)
{
	char got[65], want[65];

	if (size == h->size && !memcmp(root, h->root, sizeof h->root))
		return 0;
	hex_encode(root, 32, got);
	hex_encode(h->root, 32, want);
	return hw_err_set(HW_EXIT_DATA, "proof is invalid: its %s tree (size "
	    "%lld, root %s) is not that of checkpoint '%s' (size %lld, root "
	    "%s)", which, (long long)size, got, what, (long long)h->size,
	    want);
}

int
proof_verify_between(const char *text, size_t n, const struct tree_head *old,
    const char *from, const struct tree_head *new, const char *to,
    struct buf *out)
{
	struct arena a;
	struct jval *j;
	struct trees t;
	char err[128];
	int rc = -1;

	arena_init(&a);
	if (!(j = json_parse(&a, text, n, err, sizeof err)) ||
	    j->t != J_OBJECT)
		bad_proof("not a JSON object");
	else if (!json_is_str(json_get(j, "kind"), "consistency"))
		bad_proof(json_is_str(json_get(j, "kind"), "inclusion") ?
		    "--from and --to bind a consistency proof, not an "
		    "inclusion proof" : "unknown kind");
	else if (strcmp(old->session_id, new->session_id))
		hw_err_set(HW_EXIT_DATA, "proof is invalid: checkpoint '%s' is "
		    "of session '%s' and '%s' of session '%s'", from,
		    old->session_id, to, new->session_id);
	else if (verify_consistency(j, &t) == 0 &&
	    bound("older", t.size1, t.root1, old, from) == 0 &&
	    bound("newer", t.size2, t.root2, new, to) == 0) {
		put_trees(out, &t);
		rc = 0;
	}
	arena_release(&a);
	return rc;
}
