/* record.c - session events, audit records, minimization and the scrubber */
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static const char *const kinds[] = {
	"command.received", "approval.recorded", "policy.decision.recorded",
	"model_call.decision.recorded", "user_message.recorded",
	"agent_message.emitted", "tool_call.proposed",
	"confirmation.requested", "confirmation.resolved",
	"tool.execution.recorded", "agent.lifecycle.updated",
	"task.plan.updated", "model.usage.updated", "subagent.updated",
	"session.paused", "session.resumed", "audit.export.recorded",
	"error.recorded", NULL
};

int
event_kind_valid(const char *kind)
{
	const char *const *k;

	for (k = kinds; *k; k++)
		if (**k == *kind && strcmp(*k, kind) == 0)
			return 1;
	return 0;
}

static const char *const scrub_exact[] = {
	"apikey", "arguments", "authorization", "clientsecret", "content",
	"dateofbirth", "dob", "email", "individualid", "mrn", "name",
	"password", "path", "patientid", "participant", "participantid",
	"personid", "prompt", "record", "records", "response", "result",
	"results", "row", "rows", "secret", "summary", "subject", "subjectid",
	"tablerows", "token", "value", "values", NULL
};

static int
ends_with(const char *s, size_t n, const char *suf)
{
	size_t m = strlen(suf);

	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

/* next_cp decodes one WTF-8 code point (trusted input) and advances *p */
static uint32_t
next_cp(const unsigned char **p)
{
	const unsigned char *q = *p;
	uint32_t cp;

	if (*q < 0x80) {
		cp = *q;
		*p = q + 1;
	} else if (*q >= 0xf0) {
		cp = (uint32_t)(q[0] & 7) << 18 | (uint32_t)(q[1] & 0x3f) << 12 |
		    (uint32_t)(q[2] & 0x3f) << 6 | (q[3] & 0x3f);
		*p = q + 4;
	} else if (*q >= 0xe0) {
		cp = (uint32_t)(q[0] & 0xf) << 12 | (uint32_t)(q[1] & 0x3f) << 6 |
		    (q[2] & 0x3f);
		*p = q + 3;
	} else {
		cp = (uint32_t)(q[0] & 0x1f) << 6 | (q[1] & 0x3f);
		*p = q + 2;
	}
	return cp;
}

/*
 * normalize_key writes the reference's normal form of a key,
 * "".join(c for c in k.lower() if c.isalnum()), to norm (kn + 1 bytes),
 * every character above ASCII as 0x80: no listed word holds one.
 */
static size_t
normalize_key(const char *k, size_t kn, char *norm)
{
	const unsigned char *p = (const unsigned char *)k, *end = p + kn;
	size_t n = 0;
	int c;

	while (p < end) {
		if (*p < 0x80) {
			/* ASCII inline: the common case, on every verify */
			c = *p++;
			c = c >= 'A' && c <= 'Z' ? c - 'A' + 'a' :
			    (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ?
			    c : 0;
		} else if (end - p < 2 || (*p >= 0xe0 && end - p < 3) ||
		    (*p >= 0xf0 && end - p < 4)) {
			c = 0x80;	/* cut short: not a word's letter */
			p = end;
		} else
			c = uni_key_char(next_cp(&p));
		if (c)
			norm[n++] = (char)c;
	}
	norm[n] = '\0';
	return n;
}

static int
sensitive(const char *k, size_t kn)
{
	char small[256], *norm = kn < sizeof small ? small : xmalloc(kn + 1);
	const char *const *w;
	size_t n = normalize_key(k, kn, norm);
	int hit = 0;

	for (w = scrub_exact; *w && !hit; w++)
		hit = (*w)[0] == norm[0] && strcmp(norm, *w) == 0;
	hit = hit || strstr(norm, "password") || strstr(norm, "secret") ||
	    ends_with(norm, n, "apikey") || ends_with(norm, n, "token");
	if (norm != small)
		free(norm);
	return hit;
}

void
scrub(struct arena *a, struct jval *v)
{
	size_t i;

	if (v->t == J_ARRAY)
		for (i = 0; i < v->n; i++)
			scrub(a, v->u.a[i]);
	if (v->t != J_OBJECT)
		return;
	for (i = 0; i < v->n; i++) {
		if (sensitive(v->u.m[i].k, v->u.m[i].kn))
			v->u.m[i].v = json_str(a, "[scrubbed]");
		else
			scrub(a, v->u.m[i].v);
	}
}

size_t
utf8_count(const char *s, size_t n)
{
	size_t i = 0, c = n;
	uint64_t x;

	/* less the continuation bytes (10xxxxxx), eight at a time */
	for (; n - i >= 8; i += 8) {
		memcpy(&x, s + i, 8);
		c -= (size_t)__builtin_popcountll(x & ~(x << 1) &
		    0x8080808080808080ULL);
	}
	for (; i < n; i++)
		c -= ((unsigned char)s[i] & 0xc0) == 0x80;
	return c;
}

/* copy_keys copies the listed keys of src that are present into dst. */
static void
copy_keys(struct arena *a, struct jval *dst, const struct jval *src,
    const char *const *keys)
{
	struct jval *v;

	for (; *keys; keys++)
		if ((v = json_get(src, *keys)))
			json_set(a, dst, *keys, json_copy(a, v));
}

/* sub copies the listed keys of the object at src[key], when it is one. */
static void
sub(struct arena *a, struct jval *dst, const struct jval *src,
    const char *key, const char *const *keys)
{
	struct jval *in = json_get(src, key), *out;

	if (!in)
		return;
	out = json_obj(a);
	if (in->t == J_OBJECT)
		copy_keys(a, out, in, keys);
	json_set(a, dst, key, out);
}

/* list_len and str_len: Python's len() of a list or a str, else 0 */
static int64_t
list_len(const struct jval *v)
{
	return v && v->t == J_ARRAY ? (int64_t)v->n : 0;
}

static int64_t
str_len(const struct jval *v)
{
	return v && v->t == J_STRING ? (int64_t)utf8_count(v->u.s, v->n) : 0;
}

/* py_repr_str appends Python's repr() of a str */
static void
py_repr_str(struct buf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + n, *at;
	char q = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
	uint32_t c;

	buf_addc(b, q);
	while (p < end) {
		at = p;
		c = next_cp(&p);
		if (c == (uint32_t)q || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c == '\t')
			buf_adds(b, "\\t");
		else if (c == '\n')
			buf_adds(b, "\\n");
		else if (c == '\r')
			buf_adds(b, "\\r");
		else if (uni_printable(c))
			buf_add(b, at, (size_t)(p - at));
		else if (c <= 0xff)
			buf_printf(b, "\\x%02x", (unsigned)c);
		else if (c <= 0xffff)
			buf_printf(b, "\\u%04x", (unsigned)c);
		else
			buf_printf(b, "\\U%08x", (unsigned)c);
	}
	buf_addc(b, q);
}

static void
py_repr(struct buf *b, const struct jval *v)
{
	size_t i;

	switch (v->t) {
	case J_STRING:
		py_repr_str(b, v->u.s, v->n);
		break;
	case J_ARRAY:
		buf_addc(b, '[');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_adds(b, ", ");
			py_repr(b, v->u.a[i]);
		}
		buf_addc(b, ']');
		break;
	case J_OBJECT:
		buf_addc(b, '{');
		for (i = 0; i < v->n; i++) {
			if (i)
				buf_adds(b, ", ");
			py_repr_str(b, v->u.m[i].k, v->u.m[i].kn);
			buf_adds(b, ": ");
			py_repr(b, v->u.m[i].v);
		}
		buf_addc(b, '}');
		break;
	default:
		py_str(b, v);
	}
}

void
py_str(struct buf *b, const struct jval *v)
{
	switch (v->t) {
	case J_NULL:
		buf_adds(b, "None");
		break;
	case J_FALSE:
		buf_adds(b, "False");
		break;
	case J_TRUE:
		buf_adds(b, "True");
		break;
	case J_INT:
		/* json.loads("-0") is the int 0 */
		if (v->n == 2 && !memcmp(v->u.s, "-0", 2))
			buf_addc(b, '0');
		else
			buf_add(b, v->u.s, v->n);
		break;
	case J_FLOAT:
		json_fmt_double(b, v->u.d);
		break;
	case J_STRING:
		buf_add(b, v->u.s, v->n);
		break;
	default:
		py_repr(b, v);
	}
}

/* count_key adds one to counts[k], a key that may hold NUL */
static void
count_key(struct arena *a, struct jval *counts, const char *k, size_t kn)
{
	size_t i;

	for (i = 0; i < counts->n; i++)
		if (counts->u.m[i].kn == kn && !memcmp(counts->u.m[i].k, k, kn)) {
			counts->u.m[i].v = json_int(a,
			    atoll(counts->u.m[i].v->u.s) + 1);
			return;
		}
	json_add(a, counts, "", json_int(a, 1));
	counts->u.m[counts->n - 1].k = arena_strndup(a, k, kn);
	counts->u.m[counts->n - 1].kn = kn;
}

/*
 * plan_counts: task_count is len(tasks) of a list, and status_counts
 * counts str(task.get("status", "unknown")) of each task that is an
 * object, as the reference does; anything else counts nothing.
 */
static void
plan_counts(struct arena *a, struct jval *out, const struct jval *p)
{
	struct jval *tasks = json_get(p, "tasks"), *counts = json_obj(a), *st;
	struct buf key;
	size_t i;

	buf_init(&key);
	json_set(a, out, "task_count", json_int(a, list_len(tasks)));
	for (i = 0; list_len(tasks) && i < tasks->n; i++) {
		if (tasks->u.a[i]->t != J_OBJECT)
			continue;
		buf_clear(&key);
		if ((st = json_get(tasks->u.a[i], "status")))
			py_str(&key, st);
		else
			buf_adds(&key, "unknown");
		count_key(a, counts, key.p, key.len);
	}
	json_set(a, out, "status_counts", counts);
	buf_release(&key);
}

#define K(...) (const char *const[]){ __VA_ARGS__, NULL }

/*
 * the kinds whose minimized payload is some of their payload's keys, and
 * for some a count: the length of the payload's list at of (0 for none)
 */
static const struct {
	const char *kind;
	const char *const *keys;
	const char *count, *of;
} copied[] = {
	{ "command.received", K("actor_id", "command_id", "command_hash",
	  "command_kind") },
	{ "tool_call.proposed", K("tool_call_id", "tool_name", "risk") },
	{ "confirmation.resolved", K("group_id", "tool_call_id", "decision") },
	{ "tool.execution.recorded", K("backend_id", "tool_call_id",
	  "action_id", "tool_name", "exit_code") },
	{ "agent.lifecycle.updated", K("status") },
	{ "session.paused", K("command_id") },
	{ "session.resumed", K("command_id") },
	{ "audit.export.recorded", K("event_count", "scrubbed") },
	{ "approval.recorded", K("command_id", "group_id", "decision"),
	  "action_count", "tool_call_ids" },
};

const char *const *
minimize_copied(const char *kind, const char **count, const char **of)
{
	size_t i;

	for (i = 0; i < sizeof copied / sizeof *copied; i++)
		if (!strcmp(kind, copied[i].kind)) {
			*count = copied[i].count;
			*of = copied[i].of;
			return copied[i].keys;
		}
	return NULL;
}

/* the kinds whose minimized payload is sub-objects of their payload's */
static const struct {
	const char *kind;
	const struct minimize_sub *subs;
} subbed[] = {
	{ "model_call.decision.recorded", (const struct minimize_sub[]){
	  { "decision", K("decision_id", "policy_profile_id", "endpoint",
	    "capability_tier", "decision"), 0 },
	  { "model_profile", K("backend_id", "profile_id", "capability_tier",
	    "action_confirmation_mode"), 0 },
	  { NULL, NULL, 0 } } },
	{ "confirmation.requested", (const struct minimize_sub[]){
	  { "request", K("request_id", "group_id", "tool_call_id",
	    "tool_name", "risk"), 1 },
	  { NULL, NULL, 0 } } },
	{ "model.usage.updated", (const struct minimize_sub[]){
	  { "usage", K("usage_id", "model_name", "call_count",
	    "prompt_tokens", "completion_tokens", "cache_read_tokens",
	    "cache_write_tokens", "reasoning_tokens", "context_window",
	    "accumulated_cost"), 0 },
	  { NULL, NULL, 0 } } },
	{ "subagent.updated", (const struct minimize_sub[]){
	  { "subagent", K("invocation_id", "task_id", "agent_name",
	    "role_label", "status", "parent_session_id",
	    "parent_action_id"), 0 },
	  { NULL, NULL, 0 } } },
};

/* the kinds minimized by their own rules (minimize_own) */
static const char *const own[] = { "user_message.recorded",
	"agent_message.emitted", "task.plan.updated", "error.recorded", NULL };

const struct minimize_sub *
minimize_subs(const char *kind)
{
	size_t i;

	for (i = 0; i < sizeof subbed / sizeof *subbed; i++)
		if (!strcmp(kind, subbed[i].kind))
			return subbed[i].subs;
	return NULL;
}

int
minimize_omits(const char *kind)
{
	const char *const *k, *count, *of;

	for (k = own; *k; k++)
		if (!strcmp(kind, *k))
			return 0;
	return !minimize_copied(kind, &count, &of) && !minimize_subs(kind);
}

int
key_sensitive(const char *k, size_t kn)
{
	return sensitive(k, kn);
}

/* minimize_own: the kinds of own[] */
static void
minimize_own(struct arena *a, struct jval *o, const char *kind,
    const struct jval *p)
{
	struct jval *v;

	if (!strcmp(kind, "user_message.recorded")) {
		v = json_get(p, "actor_id");
		json_set(a, o, "actor_id", v ? json_copy(a, v) :
		    json_str(a, ""));
		v = json_get(p, "command_id");
		json_set(a, o, "command_id", v ? json_copy(a, v) :
		    json_str(a, ""));
		json_set(a, o, "content_chars", json_int(a,
		    str_len(json_get(p, "content"))));
	} else if (!strcmp(kind, "agent_message.emitted"))
		json_set(a, o, "content_chars", json_int(a,
		    str_len(json_get(p, "content"))));
	else if (!strcmp(kind, "task.plan.updated"))
		plan_counts(a, o, p);
	else if (!strcmp(kind, "error.recorded")) {
		copy_keys(a, o, p, K("backend_id", "code", "command"));
		if (json_get(p, "reason"))
			json_set(a, o, "reason", json_str(a, "[scrubbed]"));
	}
}

static void
minimize_kind(struct arena *a, struct jval *o, const char *kind,
    const struct jval *p)
{
	const char *count, *of, *const *keys = minimize_copied(kind, &count,
	    &of);
	const struct minimize_sub *sb = minimize_subs(kind);
	const struct jval *v;

	if (keys) {
		copy_keys(a, o, p, keys);
		if (count)
			json_set(a, o, count, json_int(a,
			    list_len(json_get(p, of))));
	} else if (sb)
		for (; sb->key; sb++) {
			v = json_get(p, sb->key);
			if (sb->invalid && (!v || v->t != J_OBJECT))
				json_set(a, o, sb->key, json_str(a, "invalid"));
			else
				sub(a, o, p, sb->key, sb->keys);
		}
	else if (!minimize_omits(kind))
		minimize_own(a, o, kind, p);
	else
		json_set(a, o, "payload_omitted", json_bool(a, 1));
}

struct jval *
minimize(struct arena *a, const char *kind, const struct jval *payload,
    const char *event_hash)
{
	struct jval *o = json_obj(a);

	minimize_kind(a, o, kind, payload);
	json_set(a, o, "session_event_hash", json_str(a, event_hash));
	scrub(a, o);
	return o;
}

static struct jval *
str_or_null(struct arena *a, const char *s)
{
	return s && *s ? json_str(a, s) : json_new(a, J_NULL);
}

void
record_id(char out[RECORD_ID_MAX], const char *sid, const char *what,
    int64_t seq)
{
	char digits[24];
	size_t ns = strlen(sid), nw = strlen(what), nd = 0;
	uint64_t u = (uint64_t)seq;

	/* "%s-%s-%06lld" without printf, which showed in verify's profile */
	if (seq < 0 || ns + nw + 2 + 20 >= RECORD_ID_MAX) {
		snprintf(out, RECORD_ID_MAX, "%s-%s-%06lld", sid, what,
		    (long long)seq);
		return;
	}
	do
		digits[nd++] = (char)('0' + u % 10);
	while ((u /= 10) > 0);
	while (nd < 6)
		digits[nd++] = '0';
	memcpy(out, sid, ns);
	out[ns] = '-';
	memcpy(out + ns + 1, what, nw);
	out += ns + 1 + nw;
	*out++ = '-';
	while (nd > 0)
		*out++ = digits[--nd];
	*out = '\0';
}

static int
member_order(const void *x, const void *y)
{
	const struct jmember *a = x, *b = y;
	int c = memcmp(a->k, b->k, a->kn < b->kn ? a->kn : b->kn);

	return c ? c : (a->kn > b->kn) - (a->kn < b->kn);
}

/* stored_order puts every object in v in canonical member order */
static void
stored_order(struct jval *v)
{
	size_t i;

	if (v->t == J_ARRAY)
		for (i = 0; i < v->n; i++)
			stored_order(v->u.a[i]);
	if (v->t != J_OBJECT || v->n == 0)
		return;	/* an empty object may have no members array */
	qsort(v->u.m, v->n, sizeof *v->u.m, member_order);
	for (i = 0; i < v->n; i++)
		stored_order(v->u.m[i].v);
}

struct jval *
event_build(struct arena *a, const char *sid, int64_t seq, const char *kind,
    struct jval *payload, const char *occurred_at, const char *prev)
{
	struct jval *e = json_obj(a), *tasks = json_get(payload, "tasks");
	char id[RECORD_ID_MAX];
	size_t i;

	/*
	 * A status's str() lists an object's members in the order the
	 * event is stored in, which is canonical here: minimize from that,
	 * as a verifier reading the stored line will.
	 */
	if (!strcmp(kind, "task.plan.updated") && tasks &&
	    tasks->t == J_ARRAY)
		for (i = 0; i < tasks->n; i++)
			stored_order(tasks->u.a[i]);
	record_id(id, sid, "event", seq);
	/* members in canonical order, so encoding need not sort them */
	json_add(a, e, "event_id", json_str(a, id));
	json_add(a, e, "kind", json_str(a, kind));
	json_add(a, e, "occurred_at", json_str(a, occurred_at));
	json_add(a, e, "payload", payload);
	json_add(a, e, "previous_event_hash", str_or_null(a, prev));
	json_add(a, e, "schema_version", json_str(a, EVENT_SCHEMA));
	json_add(a, e, "sequence", json_int(a, seq));
	json_add(a, e, "session_id", json_str(a, sid));
	return e;
}

int
audit_hash_line(const char *line, size_t n, char out[HW_HASH_LEN + 1])
{
	static const char head[] = "{\"event_hash\":\"sha256:";
	static const char null[] = "{\"event_hash\":null";
	static _Thread_local struct sha256 h;
	unsigned char d[32];
	const size_t tail = 15 + HW_HASH_LEN + 1;	/* past the hash's '"' */

	if (n <= tail || memcmp(line, head, sizeof head - 1) ||
	    line[tail - 1] != '"')
		return -1;
	if (!h.ctx)
		sha256_init(&h);
	sha256_update(&h, null, sizeof null - 1);
	sha256_update(&h, line + tail, n - tail);
	sha256_final(&h, d);
	memcpy(out, "sha256:", 7);
	hex_encode(d, 32, out + 7);
	return 0;
}

void
audit_hash(struct arena *a, const struct jval *rec, struct buf *scratch,
    char out[HW_HASH_LEN + 1])
{
	struct jval tmp = *rec;
	struct jmember *m = arena_alloc(a, (rec->n + 1) * sizeof *m);
	size_t i;
	int found = 0;

	/* a shallow copy whose event_hash is null; the key stays present */
	memcpy(m, rec->u.m, rec->n * sizeof *m);
	for (i = 0; i < rec->n; i++)
		if (m[i].kn == 10 && memcmp(m[i].k, "event_hash", 10) == 0) {
			m[i].v = json_new(a, J_NULL);
			found = 1;
		}
	if (!found) {
		m[tmp.n].k = "event_hash";
		m[tmp.n].kn = 10;
		m[tmp.n].v = json_new(a, J_NULL);
		tmp.n++;
	}
	tmp.u.m = m;
	json_hash(&tmp, scratch, out);
}

struct jval *
audit_record(struct arena *a, const struct jval *event, const char *ehash)
{
	struct jval *r = json_obj(a);
	const char *sid = json_get_str(event, "session_id");
	const char *kind = json_get_str(event, "kind");
	int64_t seq = 0;
	char id[RECORD_ID_MAX];

	json_get_int(event, "sequence", &seq);
	record_id(id, sid, "audit", seq);
	/* members in canonical order, so encoding need not sort them */
	json_add(a, r, "event_hash", json_new(a, J_NULL));
	json_add(a, r, "event_id", json_str(a, id));
	json_add(a, r, "event_type", json_str(a, kind));
	json_add(a, r, "occurred_at", json_get(event, "occurred_at"));
	json_add(a, r, "payload", minimize(a, kind, json_get(event,
	    "payload"), ehash));
	json_add(a, r, "previous_event_hash", json_get(event,
	    "previous_event_hash"));
	json_add(a, r, "schema_version", json_str(a, AUDIT_SCHEMA));
	json_add(a, r, "sequence", json_int(a, seq));
	json_add(a, r, "session_id", json_str(a, sid));
	return r;
}

struct jval *
audit_build(struct arena *a, const struct jval *event, const char *ehash,
    struct buf *scratch, char out[HW_HASH_LEN + 1])
{
	struct jval *r = audit_record(a, event, ehash);

	json_hash(r, scratch, out);
	json_set(a, r, "event_hash", json_str(a, out));
	return r;
}

/*
 * audit_canon writes the members in the order audit_record adds them,
 * which is canonical order, with the same values; a unit test holds the
 * two byte for byte.
 */
size_t
audit_canon(struct arena *a, const struct jval *event, const char *ehash,
    struct buf *out, size_t *prev_at)
{
	const struct jval *sid = json_get(event, "session_id");
	const struct jval *kind = json_get(event, "kind");
	struct jval *pl;
	int64_t seq = 0;
	char id[RECORD_ID_MAX];
	size_t at = 0;

	json_get_int(event, "sequence", &seq);
	record_id(id, sid->u.s, "audit", seq);
	buf_adds(out, "{\"event_hash\":null,\"event_id\":");
	json_canon_str(out, id, strlen(id));
	buf_adds(out, ",\"event_type\":");
	json_canon(out, kind);
	buf_adds(out, ",\"occurred_at\":");
	json_canon(out, json_get(event, "occurred_at"));
	buf_adds(out, ",\"payload\":");
	pl = minimize(a, kind->u.s, json_get(event, "payload"), ehash);
	json_canon_at(out, pl, json_get(pl, "session_event_hash"), &at);
	buf_adds(out, ",\"previous_event_hash\":");
	if (prev_at)
		*prev_at = out->len;
	json_canon(out, json_get(event, "previous_event_hash"));
	buf_adds(out, ",\"schema_version\":\"" AUDIT_SCHEMA "\",\"sequence\":");
	json_canon(out, json_int(a, seq));
	buf_adds(out, ",\"session_id\":");
	json_canon(out, sid);
	buf_addc(out, '}');
	return at + 1 + 7;	/* past the quote and "sha256:" */
}

void
audit_line(const struct buf *rec, struct buf *line, char out[HW_HASH_LEN + 1])
{
	static const char head[] = "{\"event_hash\":null";

	memcpy(out, "sha256:", 7);
	sha256_hex(rec->p, rec->len, out + 7);
	/* "event_hash" sorts first: splice the hash in for the stored form */
	buf_adds(line, "{\"event_hash\":\"");
	buf_adds(line, out);
	buf_addc(line, '"');
	buf_add(line, rec->p + sizeof head - 1, rec->len - (sizeof head - 1));
	buf_addc(line, '\n');
}

void
audit_encode(struct arena *a, const struct jval *event, const char *ehash,
    struct buf *scratch, struct buf *line, char out[HW_HASH_LEN + 1])
{
	buf_clear(scratch);
	audit_canon(a, event, ehash, scratch, NULL);
	audit_line(scratch, line, out);
}

void
audit_encode_record(const struct jval *rec, struct buf *scratch,
    struct buf *line, char out[HW_HASH_LEN + 1])
{
	buf_clear(scratch);
	json_canon(scratch, rec);
	audit_line(scratch, line, out);
}

static int
fail(char *err, size_t errsz, const char *msg)
{
	snprintf(err, errsz, "%s", msg);
	return -1;
}

/* known_keys: -1 unless every key of v is in the list. */
static int
known_keys(const struct jval *v, const char *const *keys)
{
	size_t i;
	const char *const *k;

	for (i = 0; i < v->n; i++) {
		for (k = keys; *k; k++)
			/* a key may hold NUL: lengths first, then bytes */
			if ((*k)[0] == v->u.m[i].k[0] &&
			    strnlen(*k, v->u.m[i].kn + 1) == v->u.m[i].kn &&
			    memcmp(*k, v->u.m[i].k, v->u.m[i].kn) == 0)
				break;
		if (!*k)
			return -1;
	}
	return 0;
}

static int
nonempty_str(const struct jval *v)
{
	return v && v->t == J_STRING && v->n > 0;
}

static int
hash_or_null(const struct jval *v)
{
	return v && (v->t == J_NULL || v->t == J_STRING);
}

/* common checks of the two envelopes, filling defaults */
static int
record_common(struct arena *a, struct jval *v, const char *const *keys,
    char *err, size_t errsz)
{
	struct jval *sid = json_get(v, "session_id");
	int64_t seq;

	if (known_keys(v, keys) < 0)
		return fail(err, errsz, "unknown field");
	if (!nonempty_str(json_get(v, "event_id")))
		return fail(err, errsz, "event_id is missing or empty");
	if (!sid || sid->t != J_STRING || strlen(sid->u.s) != sid->n ||
	    !valid_session_id(sid->u.s))
		return fail(err, errsz, "session_id is invalid");
	if (json_get_int(v, "sequence", &seq) < 0 || seq < 0)
		return fail(err, errsz, "sequence is not a non-negative "
		    "integer");
	if (!nonempty_str(json_get(v, "occurred_at")))
		return fail(err, errsz, "occurred_at is missing or empty");
	if (!json_get(v, "payload"))
		json_set(a, v, "payload", json_obj(a));
	if (json_get(v, "payload")->t != J_OBJECT)
		return fail(err, errsz, "payload is not an object");
	if (!json_get(v, "previous_event_hash"))
		json_set(a, v, "previous_event_hash", json_new(a, J_NULL));
	if (!hash_or_null(json_get(v, "previous_event_hash")))
		return fail(err, errsz, "previous_event_hash is not a string "
		    "or null");
	return 0;
}

int
event_check(struct arena *a, struct jval *v, char *err, size_t errsz)
{
	const char *kind;

	if (record_common(a, v, K("schema_version", "event_id", "session_id",
	    "sequence", "kind", "occurred_at", "payload",
	    "previous_event_hash"), err, errsz) < 0)
		return -1;
	kind = json_get_str(v, "kind");
	if (!kind || !event_kind_valid(kind))
		return fail(err, errsz, "unknown event kind");
	return 0;
}

int
audit_check(struct arena *a, struct jval *v, char *err, size_t errsz)
{
	if (record_common(a, v, K("schema_version", "event_id", "session_id",
	    "sequence", "event_type", "occurred_at", "payload",
	    "previous_event_hash", "event_hash"), err, errsz) < 0)
		return -1;
	if (!nonempty_str(json_get(v, "event_type")))
		return fail(err, errsz, "event_type is missing or empty");
	if (!json_get(v, "event_hash"))
		json_set(a, v, "event_hash", json_new(a, J_NULL));
	if (!hash_or_null(json_get(v, "event_hash")))
		return fail(err, errsz, "event_hash is not a string or null");
	return 0;
}

int
pair_check(const struct jval *ev, const char *ehash, const struct jval *au,
    char *err, size_t errsz)
{
	static const char *const same[] = { "sequence", "session_id",
		"occurred_at", "previous_event_hash", NULL };
	const char *const *k;

	for (k = same; *k; k++)
		if (!json_equal(json_get(ev, *k), json_get(au, *k))) {
			snprintf(err, errsz, "event and audit record differ "
			    "in %s", *k);
			return -1;
		}
	if (!json_equal(json_get(ev, "kind"), json_get(au, "event_type")))
		return fail(err, errsz, "audit event_type differs from the "
		    "event kind");
	if (!json_is_str(json_get(json_get(au, "payload"),
	    "session_event_hash"), ehash))
		return fail(err, errsz, "audit session_event_hash does not "
		    "match the session event");
	return 0;
}

int
draft_check(struct arena *a, struct jval *d, int any_kind, char *err,
    size_t errsz)
{
	struct jval *k = json_get(d, "kind"), *p;

	if (known_keys(d, K("kind", "payload")) < 0)
		return fail(err, errsz, "unknown key in draft (expected kind "
		    "and payload)");
	if (!k || k->t != J_STRING)
		return fail(err, errsz, "draft has no string kind");
	if (k->n == 0 || strlen(k->u.s) != k->n ||
	    (!any_kind && !event_kind_valid(k->u.s))) {
		snprintf(err, errsz, "unknown event kind");
		return -1;
	}
	if (!(p = json_get(d, "payload")))
		json_set(a, d, "payload", json_obj(a));
	else if (p->t != J_OBJECT)
		return fail(err, errsz, "draft payload is not an object");
	return 0;
}
