/*
 * script_fuzz - the text formats read from files: replay scripts and the
 * TOML of signer registries and the project configuration, and with
 * arrays that of the model catalog files.
 */
#include "hw-model/replay.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	struct replay_script s;
	struct arena a;

	replay_script_init(&s);
	replay_script_parse(&s, "fuzz", (const char *)data, n);
	replay_script_release(&s);
	arena_init(&a);
	toml_parse(&a, (const char *)data, n, "fuzz");
	arena_clear(&a);
	toml_parse_ext(&a, (const char *)data, n, "fuzz", TOML_ARRAYS);
	arena_release(&a);
	return 0;
}
