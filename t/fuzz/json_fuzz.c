/*
 * json_fuzz - the JSON parser and the canonical encoder: whatever parses
 * re-encodes to a canonical text that parses again to the same text.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	struct arena a;
	struct buf b, c;
	struct jval *v, *w;
	char err[200];
	int canonical = 0;

	arena_init(&a);
	buf_init(&b);
	buf_init(&c);
	if ((v = json_parse_canon(&a, (const char *)data, n, err, sizeof err,
	    &canonical))) {
		json_canon(&b, v);
		/* a text said to be canonical is its own encoding */
		if (canonical && (b.len != n || memcmp(b.p, data, n)))
			abort();
		if (!(w = json_parse(&a, b.p, b.len, err, sizeof err)))
			abort();
		json_canon(&c, w);
		if (b.len != c.len || memcmp(b.p, c.p, b.len))
			abort();
	}
	buf_release(&b);
	buf_release(&c);
	arena_release(&a);
	return 0;
}
