/*
 * record_fuzz - the loaders of persisted records: one JSON object through
 * the migration registry and the event, audit and command checks, the
 * receipt check, the reference commit journal's check, and the migration
 * of every other persisted format.
 */
#include <string.h>

#include "store/store.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	static const char *const formats[] = { "session_event",
		"audit_event", NULL };
	static const char *const others[] = { "jsonl_append", "project_state",
		"session_metadata", "session_command", NULL };
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
	if (!(v = json_parse(&a, (const char *)data, n, err, sizeof err)) ||
	    v->t != J_OBJECT)
		goto out;
	command_check(&a, v, "session-main", hash);
	arena_clear(&a);
	v = json_parse(&a, (const char *)data, n, err, sizeof err);
	if ((m = migrate(&a, "session_command_receipt", v)))
		receipt_check(m, "session-main", NULL);
	arena_clear(&a);
	v = json_parse(&a, (const char *)data, n, err, sizeof err);
	journal_check(&a, v, "session-main", &m, &m, hash);
	for (f = others; *f; f++) {
		arena_clear(&a);
		v = json_parse(&a, (const char *)data, n, err, sizeof err);
		migrate(&a, *f, v);
	}
out:
	arena_release(&a);
	return 0;
}
