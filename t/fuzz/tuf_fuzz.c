/*
 * tuf_fuzz - the TUF metadata parser and verifier: the first byte picks
 * the role type, the rest is parsed as a metadata document of that type,
 * and what parses is verified against itself (a root) or a root parsed
 * from the seed, checked against its hashes, and canonicalized twice: the
 * OLPC form of a document, when it parses again, gives the same bytes.
 */
#include <string.h>

#include "tuf/tuf.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static void
canon_twice(const struct tuf_md *md)
{
	struct arena a;
	struct jval *v;
	struct buf b;
	char err[128];

	arena_init(&a);
	buf_init(&b);
	v = json_parse(&a, md->canon.p, md->canon.len, err, sizeof err);
	if (v && tuf_canon(&b, v) == 0 && (b.len != md->canon.len ||
	    memcmp(b.p, md->canon.p, b.len)))
		__builtin_trap();
	buf_release(&b);
	arena_release(&a);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const char *const roles[] = { "root", "timestamp", "snapshot",
		"targets" };
	struct tuf_md *md;
	enum tuf_type type;
	size_t i;

	if (n < 1)
		return 0;
	type = (enum tuf_type)(data[0] % 4);
	md = tuf_md_parse(data + 1, n - 1, type, "fuzz");
	if (!md)
		return 0;
	canon_twice(md);
	if (type == TUF_ROOT) {
		for (i = 0; i < 4; i++)
			tuf_md_verify(md, roles[i], md);
	} else if (type == TUF_TARGETS) {
		for (i = 0; i < md->nroles; i++)
			tuf_md_verify(md, md->roles[i].name, md);
		for (i = 0; i < md->targets->n; i++)
			tuf_hashes_check(json_get(md->targets->u.m[i].v,
			    "hashes"), data, n, "fuzz");
	} else if (md->type == TUF_TIMESTAMP && md->snapmeta.hashes) {
		tuf_hashes_check(md->snapmeta.hashes, data, n, "fuzz");
	}
	tuf_md_free(md);
	return 0;
}
