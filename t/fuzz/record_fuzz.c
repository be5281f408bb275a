/*
 * record_fuzz - the loaders of persisted records: one JSON object through
 * the migration registry and the event, audit and command checks.
 */
#include <string.h>

#include "hw.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const char *const formats[] = { "session_event",
		"audit_event", NULL };
	const char *const *f;
	struct arena a;
	struct jval *v, *m;
	char err[200], hash[HW_HASH_LEN + 1];

	arena_init(&a);
	for (f = formats; *f; f++) {
		arena_clear(&a);
		if (!(v = json_parse(&a, (const char *)data, n, err,
		    sizeof err)) || v->t != J_OBJECT)
			break;
		if (!(m = migrate(&a, *f, v)))
			continue;
		if (!strcmp(*f, "session_event"))
			event_check(&a, m, err, sizeof err);
		else
			audit_check(&a, m, err, sizeof err);
	}
	arena_clear(&a);
	if ((v = json_parse(&a, (const char *)data, n, err, sizeof err)) &&
	    v->t == J_OBJECT)
		command_check(&a, v, "session-main", hash);
	arena_release(&a);
	return 0;
}
