/*
 * draftline_fuzz - draft_event_line against the tree on any line: it reads
 * nothing outside the line, and for a line that json_parse_canon finds
 * canonical and draft_check takes it writes what json_canon writes for
 * event_build's tree of the draft, a line json_canon_ascii takes when no
 * key of the draft holds an escape and not otherwise; and for such a line
 * fastev_check_at, told where draft_event_line put the members' values,
 * decides as fastev_check does, and the audit records agree.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"
#include "store/fastev.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const char now[] = "2026-12-06T12:00:00Z";
	static const char hash[] = "sha256:0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	char *s = malloc(n ? n : 1), err[128];
	struct arena a;
	struct buf fast, tree, ra, rb;
	struct event_at at;
	struct fastev fa, fb;
	struct jval *d;
	int c = 0, took, ka;

	/* a copy of exactly n bytes, so that reading past them is caught */
	memcpy(s, data, n);
	arena_init(&a);
	buf_init(&fast);
	buf_init(&tree);
	buf_init(&ra);
	buf_init(&rb);
	took = draft_event_line(&fast, s, n, "s1", 7, now, hash, &at);
	d = json_parse_canon(&a, s, n, err, sizeof err, &c);
	if (d && c && d->t == J_OBJECT && draft_check(&a, d, 1, err,
	    sizeof err) == 0) {
		if (!took)
			abort();	/* a canonical draft left to the tree */
		json_canon(&tree, event_build(&a, "s1", 7, json_get_str(d,
		    "kind"), json_get(d, "payload"), now, hash));
		if (fast.len != tree.len || memcmp(fast.p, tree.p, tree.len))
			abort();	/* not the tree's bytes */
		/* what fastev_check_at takes without looking */
		if ((c == 2) != json_canon_ascii(fast.p, fast.len))
			abort();
		ka = c == 2 && fastev_check_at(&fa, fast.p, fast.len, at.off,
		    at.len, "s1", 7);
		if (c == 2 && ka != fastev_check(&fb, fast.p, fast.len, "s1",
		    7))
			abort();	/* the two checks decide apart */
		if (ka && (fastev_record(&fa, "s1", hash, &ra, NULL),
		    fastev_record(&fb, "s1", hash, &rb, NULL), ra.len !=
		    rb.len || memcmp(ra.p, rb.p, ra.len)))
			abort();	/* their records differ */
	}
	buf_release(&ra);
	buf_release(&rb);
	buf_release(&fast);
	buf_release(&tree);
	arena_release(&a);
	free(s);
	return 0;
}
