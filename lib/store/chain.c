/* chain.c - one audit record as the next link of a chain */
#include <string.h>

#include "store/store.h"

int
audit_chain_check(struct arena *a, struct buf *scratch, struct jval *v,
    const char *line, size_t n, int canonical, const struct chain_pos *at,
    char hash[HW_HASH_LEN + 1], const char **canon, size_t *canon_len)
{
	char err[200];
	struct jval *p, *parsed = v;
	const char *sid;
	int64_t seq;
	int fast;

	/* the line stands for the record only if complete and not migrated */
	fast = canonical && v->n == 9;
	if (!(v = migrate(a, "audit_event", v)))
		return -1;
	fast = fast && v == parsed;
	if (audit_check(a, v, err, sizeof err) < 0)
		return hw_err_set(HW_EXIT_DATA, "audit record is invalid: %s",
		    err);
	json_get_int(v, "sequence", &seq);
	if (seq != at->count)
		return hw_err_set(HW_EXIT_DATA, "audit record has sequence "
		    "%lld", (long long)seq);
	sid = json_get_str(v, "session_id");
	if (at->session_id && strcmp(sid, at->session_id))
		return hw_err_set(HW_EXIT_DATA, "audit record belongs to "
		    "another session");
	p = json_get(v, "previous_event_hash");
	if (at->head[0] ? !json_is_str(p, at->head) : p->t != J_NULL)
		return hw_err_set(HW_EXIT_DATA, "audit chain is broken: "
		    "previous_event_hash does not match");
	if (!(fast && audit_hash_line(line, n, hash) == 0)) {
		fast = 0;
		audit_hash(a, v, scratch, hash);
	}
	if (!json_is_str(json_get(v, "event_hash"), hash))
		return hw_err_set(HW_EXIT_DATA, "audit event_hash does not "
		    "match the record");
	if (canon) {
		if (!fast) {
			buf_clear(scratch);
			json_canon(scratch, v);
			line = scratch->p;
			n = scratch->len;
		}
		*canon = line;
		*canon_len = n;
	}
	return 0;
}
