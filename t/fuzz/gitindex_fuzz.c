/*
 * gitindex_fuzz - hw-inspect's reader of git's index.  The input gets a
 * correct SHA-1 trailer, so the checks past the checksum are what is
 * fuzzed; a taken index must hold entries in git's order with non-empty
 * paths.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "inspect/gitindex.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	unsigned char sum[EVP_MAX_MD_SIZE];
	unsigned int sn;
	struct gindex g;
	size_t i;

	memset(&g, 0, sizeof g);
	buf_add(&g.file, data, n);
	if (!EVP_Digest(data, n, sum, &sn, EVP_sha1(), NULL))
		abort();
	buf_add(&g.file, sum, sn);
	if (gindex_parse(&g))
		for (i = 0; i < g.n; i++)
			if (!g.e[i].path[0] || (i && strcmp(g.e[i - 1].path,
			    g.e[i].path) > 0))
				abort();
	gindex_release(&g);
	return 0;
}
