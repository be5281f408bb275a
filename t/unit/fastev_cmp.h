/*
 * fastev_cmp.h - the check that holds fastev to the tree: for one line,
 * what check_event and audit_canon make of it against what fastev makes of
 * it (t/unit/fastev_test, t/fuzz/fastev_fuzz)
 */
#ifndef FASTEV_CMP_H
#define FASTEV_CMP_H

#include <stdio.h>
#include <string.h>

#include "store/store.h"
#include "store/fastev.h"
#include "store/logs.h"

/* follows: the tree's check of the chain head on ev, and fastev's on prev */
static int
cmp_follows_tree(const struct jval *ev, const char *head)
{
	const struct jval *p = json_get(ev, "previous_event_hash");

	return head[0] ? json_is_str(p, head) : p->t == J_NULL;
}

static int
cmp_follows_fast(const char *prev, const char *head)
{
	return head[0] ? strcmp(prev, head) == 0 : prev[0] == '\0';
}

/*
 * fastev_compare: 1 when fastev took the line and agrees with the tree in
 * everything (the line taken, the audit record's bytes, where the hash's
 * digits and the previous hash are, whether it follows each of some chain
 * heads, what it adds to the session's command filter), 0 when fastev
 * left it to the tree, -1 (why says what) when they differ.  a is scratch.
 */
static int
fastev_compare(struct arena *a, const char *line, size_t n, const char *sid,
    int64_t seq, char *why, size_t whysz)
{
	static const char other[] = "sha256:0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	struct cmd_bloom bt, bf;
	struct buf tree, fast;
	struct jval *j, *ev;
	struct fastev f;
	char err[200], ehash[HW_HASH_LEN + 1], prev[HW_HASH_LEN + 1];
	const char *heads[3] = { "", other, NULL };
	const struct jval *p;
	size_t mt, mf, pt = 0, pf = 1, i;
	int canonical = 0, rc = -1, took;
	int64_t s;

	arena_clear(a);
	buf_init(&tree);
	buf_init(&fast);
	took = fastev_check(&f, line, n, sid, seq);
	/* the tree's way, as check_event's fast case */
	j = n ? json_parse_canon(a, line, n, err, sizeof err, &canonical) :
	    NULL;
	ev = j && j->t == J_OBJECT && canonical && j->n == 8 ?
	    migrate(a, "session_event", j) : NULL;
	if (ev != j || !ev || event_check(a, ev, err, sizeof err) < 0 ||
	    json_get_int(ev, "sequence", &s) < 0 || s != seq ||
	    !json_is_str(json_get(ev, "session_id"), sid)) {
		snprintf(why, whysz, "the tree does not take it as canonical");
		rc = took ? -1 : 0;
		goto out;
	}
	if (!took) {
		rc = 0;
		goto out;
	}
	memcpy(ehash, "sha256:", 7);
	sha256_hex(line, n, ehash + 7);
	mt = audit_canon(a, ev, ehash, &tree, &pt);
	mf = fastev_record(&f, sid, ehash, &fast, &pf);
	fastev_prev(&f, prev);
	p = json_get(ev, "previous_event_hash");
	/* a chain head is a hash (or "" before the first record) */
	if (p->t == J_STRING && p->n == HW_HASH_LEN && !strncmp(p->u.s,
	    "sha256:", 7) && strspn(p->u.s + 7, "0123456789abcdef") == 64)
		heads[2] = p->u.s;
	if (tree.len != fast.len || memcmp(tree.p, fast.p, tree.len)) {
		snprintf(why, whysz, "records differ:\n#   tree %.*s\n#   fast "
		    "%.*s", (int)tree.len, tree.p, (int)fast.len, fast.p);
		goto out;
	}
	if (mt != mf || pt != pf) {
		snprintf(why, whysz, "hash at %zu, not %zu; previous hash at "
		    "%zu, not %zu", mf, mt, pf, pt);
		goto out;
	}
	memset(&bt, 0, sizeof bt);
	memset(&bf, 0, sizeof bf);
	bloom_note(&bt, ev);
	if (f.cid.s)
		bloom_note_id(&bf, f.cid.s, f.cid.n);
	if (memcmp(&bt, &bf, sizeof bt)) {
		snprintf(why, whysz, "the command filters differ");
		goto out;
	}
	for (i = 0; i < 3; i++)
		if (heads[i] && cmp_follows_tree(ev, heads[i]) !=
		    cmp_follows_fast(prev, heads[i])) {
			snprintf(why, whysz, "follows '%s' differently", heads[i]);
			goto out;
		}
	rc = 1;
out:
	buf_release(&tree);
	buf_release(&fast);
	return rc;
}

#endif
