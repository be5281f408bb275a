/*
 * skillmd_fuzz - a SKILL.md: the frontmatter's YAML subset, every field
 * check and the policy, on any bytes.  A parse that succeeds must give a
 * name and a policy, and the policy must be canonical JSON that parses.
 */
#include <string.h>

#include "skill/skill.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	struct skill_meta m;
	struct arena a, b;
	struct buf out;
	char *s, err[100];

	arena_init(&a);
	s = arena_strndup(&a, (const char *)data, n);
	if (skill_meta_parse(&a, s, n, &m) == 0) {
		if (!m.name || !m.policy)
			__builtin_trap();
		buf_init(&out);
		json_canon(&out, m.policy);
		arena_init(&b);
		if (!json_parse(&b, buf_cstr(&out), out.len, err, sizeof err))
			__builtin_trap();
		arena_release(&b);
		buf_release(&out);
	}
	arena_release(&a);
	return 0;
}
