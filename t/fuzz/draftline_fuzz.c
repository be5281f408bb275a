/*
 * draftline_fuzz - draft_event_line against the tree on any line: it reads
 * nothing outside the line, and for a line that json_parse_canon finds
 * canonical and draft_check takes it writes what json_canon writes for
 * event_build's tree of the draft, a line json_canon_ascii takes when no
 * key of the draft holds an escape (fastev_check_built) and not otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const char now[] = "2026-12-06T12:00:00Z";
	static const char hash[] = "sha256:0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	char *s = malloc(n ? n : 1), err[128];
	struct arena a;
	struct buf fast, tree;
	struct jval *d;
	int c = 0, took;

	/* a copy of exactly n bytes, so that reading past them is caught */
	memcpy(s, data, n);
	arena_init(&a);
	buf_init(&fast);
	buf_init(&tree);
	took = draft_event_line(&fast, s, n, "s1", 7, now, hash, NULL);
	d = json_parse_canon(&a, s, n, err, sizeof err, &c);
	if (d && c && d->t == J_OBJECT && draft_check(&a, d, 1, err,
	    sizeof err) == 0) {
		if (!took)
			abort();	/* a canonical draft left to the tree */
		json_canon(&tree, event_build(&a, "s1", 7, json_get_str(d,
		    "kind"), json_get(d, "payload"), now, hash));
		if (fast.len != tree.len || memcmp(fast.p, tree.p, tree.len))
			abort();	/* not the tree's bytes */
		/* what fastev_check_built takes without looking */
		if ((c == 2) != json_canon_ascii(fast.p, fast.len))
			abort();
	}
	buf_release(&fast);
	buf_release(&tree);
	arena_release(&a);
	free(s);
	return 0;
}
