/*
 * fastev_fuzz - fastev against the tree on any line: what fastev takes,
 * the tree takes with the same audit record (t/unit/fastev_cmp.h), and
 * json_canon_ascii calls nothing canonical that json_parse_canon does not.
 */
#include <stdlib.h>

#include "../unit/fastev_cmp.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const int64_t seqs[] = { 0, 3 };
	const char *s = (const char *)data;
	struct arena a;
	char why[16384], err[128];
	size_t i;
	int c = 0;

	arena_init(&a);
	if (json_canon_ascii(s, n) && (!json_parse_canon(&a, s, n, err,
	    sizeof err, &c) || !c))
		abort();
	for (i = 0; i < sizeof seqs / sizeof *seqs; i++)
		if (fastev_compare(&a, s, n, "s1", seqs[i], why,
		    sizeof why) < 0) {
			fprintf(stderr, "fastev_fuzz: %s\n", why);
			abort();
		}
	arena_release(&a);
	return 0;
}
