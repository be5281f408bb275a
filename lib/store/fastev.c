/*
 * fastev.c - a canonical session event checked, and its audit record
 * written, without a tree: what check_event and audit_canon do, on the
 * line's own bytes, for the events of the kinds that make up nearly all of
 * a log's bytes.  Anything else (another kind, an escape where a name or a
 * number is read, a container where a copied value is, a line that is not
 * canonical ASCII) is left to the tree: fastev never refuses a line, so
 * every error is the tree's, word for word.  t/unit/fastev_test and
 * t/fuzz/fastev_fuzz hold the two paths to the same bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "base/jsontext.h"
#include "store/store.h"
#include "store/fastev.h"

/* str_end: past the string whose opening quote p is at, in checked text */
static const char *
str_end(const char *p, const char *end)
{
	const char *q = p + 1, *b;

	for (;;) {
		q = memchr(q, '"', (size_t)(end - q));
		/* escaped when an odd run of backslashes comes before it */
		for (b = q; b[-1] == '\\'; b--)
			;
		if ((q - b) % 2 == 0)
			return q + 1;
		q++;
	}
}

/*
 * value_end: past the value at p in checked canonical text ending at end
 * (so that the value ends, at depth 0, before ',', '}' or ']')
 */
static const char *
value_end(const char *p, const char *end)
{
	int depth = 0;

	do {
		if (*p == '"') {
			p = str_end(p, end);
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if (*p == '}' || *p == ']')
			depth--;
		p++;
	} while (depth > 0 || (*p != ',' && *p != '}' && *p != ']'));
	return p;
}

/*
 * member: the next member of the checked object whose '{' or last member's
 * end *p is at; 0 past the last.  Keys hold no escape (json_canon_ascii).
 */
static int
member(const char **p, const char *end, struct span *key, struct span *val)
{
	const char *q = *p;

	if (*q == '}' || q[1] == '}')
		return 0;
	key->s = q + 2;
	q = memchr(key->s, '"', (size_t)(end - key->s));
	key->n = (size_t)(q - key->s);
	val->s = q + 2;
	*p = value_end(val->s, end);
	val->n = (size_t)(*p - val->s);
	return 1;
}

static int
is(const struct span *sp, const char *s)
{
	return sp->n == strlen(s) && !memcmp(sp->s, s, sp->n);
}

/* a string's quoted span with no escape, and at least lo characters */
static int
plain_str(const struct span *v, size_t lo)
{
	return v->n >= lo + 2 && v->s[0] == '"' &&
	    !memchr(v->s, '\\', v->n);
}

/*
 * chars: Python's len() of the string at the quoted span v, as the tree
 * reads it (utf8_count of the decoded bytes): one for each byte that is
 * not an escape and for each escape, one for a surrogate pair's two
 */
static int64_t
chars(const struct span *v)
{
	const char *p = v->s + 1, *end = v->s + v->n - 1, *q;
	int64_t n = 0;
	unsigned hi;

	while (p < end) {
		/* the bytes up to the next escape, and the escape */
		if (!(q = memchr(p, '\\', (size_t)(end - p))))
			return n + (end - p);
		n += q - p + 1;
		p = q;
		if (p[1] != 'u') {
			p += 2;
			continue;
		}
		hi = (unsigned)strtoul((char[]){ p[2], p[3], p[4], p[5], 0 },
		    NULL, 16);
		p += 6;
		if (hi >= 0xd800 && hi <= 0xdbff && end - p >= 6 &&
		    p[0] == '\\' && p[1] == 'u' && (p[2] == 'd' &&
		    (p[3] == 'c' || p[3] == 'd' || p[3] == 'e' || p[3] == 'f')))
			p += 6;	/* json_canon_ascii let only lowercase by */
	}
	return n;
}

/*
 * scrubbed: key_sensitive of a key, which is always one of the fixed
 * names of the minimization (a string of static storage): remembered by
 * its address, on each thread
 */
static int
scrubbed(const char *key)
{
	static _Thread_local struct {
		const char *key;
		int hit;
	} seen[16];
	static _Thread_local unsigned nseen;
	unsigned i;
	int hit;

	for (i = 0; i < nseen; i++)
		if (seen[i].key == key)
			return seen[i].hit;
	hit = key_sensitive(key, strlen(key));
	if (nseen < sizeof seen / sizeof *seen) {
		seen[nseen].key = key;
		seen[nseen++].hit = hit;
	}
	return hit;
}

/* out: one member of the minimized payload */
static int
put(struct fastev *f, const char *key, const char *s, size_t n)
{
	if (f->nout == FASTEV_OUT || scrubbed(key))
		return 0;	/* the tree's scrub would replace it */
	f->out[f->nout] = (struct fastev_out){ key, strlen(key), { s, n }, 0,
	    0, 0 };
	f->nout++;
	return 1;
}

/* put_obj: at key, an object of the sub-members from from on */
static int
put_obj(struct fastev *f, const char *key, size_t from)
{
	if (!put(f, key, NULL, 0))
		return 0;
	f->out[f->nout - 1].obj = 1;
	f->out[f->nout - 1].sub = from;
	f->out[f->nout - 1].nsub = f->nsub - from;
	return 1;
}

/*
 * put_sub: the sub-object at key of the minimized payload: of the object
 * at v, the members sb lists, as copied values; an empty one for another
 * value (the tree's sub), but for sb->invalid, which says "invalid"
 */
static int
put_sub(struct fastev *f, const struct minimize_sub *sb,
    const struct span *v)
{
	const char *p = v->s, *end = v->s + v->n;
	const char *const *k;
	struct span key, val;
	size_t from = f->nsub;

	if (v->s[0] != '{')
		return sb->invalid ? put(f, sb->key, "\"invalid\"", 9) :
		    put(f, sb->key, "{}", 2);
	/* the members in the object's order, which is key order */
	while (member(&p, end, &key, &val))
		for (k = sb->keys; *k; k++) {
			if (!is(&key, *k))
				continue;
			if (f->nsub == FASTEV_SUB || scrubbed(*k) ||
			    val.s[0] == '{' || val.s[0] == '[')
				return 0;	/* scrubbed, or a container */
			f->sub[f->nsub++] = (struct fastev_out){ *k,
			    strlen(*k), val, 0, 0, 0 };
		}
	return put_obj(f, sb->key, from);
}

/* decimal: n >= 0 in d (24 bytes), its length */
static size_t
decimal(char *d, int64_t n)
{
	char t[24];
	size_t k = 0, i;

	do
		t[k++] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	for (i = 0; i < k; i++)
		d[i] = t[k - 1 - i];
	d[k] = '\0';
	return k;
}

static int
put_count(struct fastev *f, const char *key, int64_t n)
{
	char *d = f->digits[f->nout < FASTEV_OUT ? f->nout : 0];

	return put(f, key, d, decimal(d, n));
}

/* a copied value: a scalar's span is its canonical text, as json_copy's */
static int
put_copy(struct fastev *f, const char *key, const struct span *v)
{
	return v->s[0] != '{' && v->s[0] != '[' && put(f, key, v->s, v->n);
}

/* list_count: Python's len() of the list at v, 0 for any other value */
static int64_t
list_count(const struct span *v)
{
	const char *p = v->s, *end = v->s + v->n;
	int64_t n = 0;

	if (*p != '[' || p[1] == ']')
		return 0;
	for (;;) {
		p = value_end(p + 1, end);
		n++;
		if (*p != ',')
			return n;
	}
}

/*
 * put_plan: a task plan's task_count (the length of the list at tasks)
 * and status_counts (of its objects, how many hold each status, "unknown"
 * for none), as plan_counts makes them, for statuses that are strings
 * with no escape and no key scrub replaces
 */
static int
put_plan(struct fastev *f, const struct span *tasks)
{
	const char *p = tasks->s, *end = p ? p + tasks->n : NULL, *q;
	struct span e, key, val, st;
	size_t i, j, from = f->nsub;
	struct fastev_out t;
	int64_t n = 0;

	if (p && *p == '[' && p[1] != ']')
		for (;;) {
			e.s = p + 1;
			p = value_end(e.s, end);
			e.n = (size_t)(p - e.s);
			n++;
			if (*e.s == '{') {
				st = (struct span){ "\"unknown\"", 9 };
				for (q = e.s; member(&q, e.s + e.n, &key, &val);)
					if (is(&key, "status"))
						st = val;
				/* py_str of anything else is the tree's */
				if (!plain_str(&st, 0))
					return 0;
				for (i = from; i < f->nsub; i++)
					if (f->sub[i].kn == st.n - 2 && !memcmp(
					    f->sub[i].key, st.s + 1, st.n - 2))
						break;
				if (i == f->nsub) {
					if (i == FASTEV_SUB || key_sensitive(
					    st.s + 1, st.n - 2))
						return 0;
					f->sub[f->nsub++] = (struct fastev_out){
					    st.s + 1, st.n - 2, { NULL, 0 }, 0,
					    0, 0 };
					f->subcount[i] = 0;
				}
				f->subcount[i]++;
			}
			if (*p != ',')
				break;
		}
	/* the counts' text, in key order */
	for (i = from; i < f->nsub; i++) {
		f->sub[i].val.s = f->subdigits[i];
		f->sub[i].val.n = decimal(f->subdigits[i], f->subcount[i]);
		for (j = i; j > from && key_cmp(f->sub[j - 1].key,
		    f->sub[j - 1].kn, f->sub[j].key, f->sub[j].kn) > 0; j--) {
			t = f->sub[j];
			f->sub[j] = f->sub[j - 1];
			f->sub[j - 1] = t;
		}
	}
	return put_obj(f, "status_counts", from) &&
	    put_count(f, "task_count", n);
}

/* has_out: the minimized payload has a member key */
static int
has_out(const struct fastev *f, const char *key)
{
	size_t i;

	for (i = 0; i < f->nout; i++)
		if (f->out[i].key == key)
			return 1;
	return 0;
}

/* the subs of kind whose key is key, NULL for none */
static const struct minimize_sub *
sub_at(const struct minimize_sub *sb, const struct span *key)
{
	for (; sb && sb->key; sb++)
		if (is(key, sb->key))
			return sb;
	return NULL;
}

/* what fastev does for a kind (form_of) */
struct form {
	char kind[64];
	size_t n;		/* strlen(kind); 0: an empty entry */
	int fast;		/* a valid kind whose minimization fastev knows */
	const char *const *keys, *count, *of;	/* minimize_copied */
	const struct minimize_sub *subs;
	int agent, user, cmd, tasks, omit;
};

/*
 * form_of: the form of the kind at k (n bytes, n < 64), from a cache of
 * each thread's recent kinds: the lookups by name cost as much as the
 * rest of a message's check
 */
static const struct form *
form_of(const char *k, size_t n)
{
	static _Thread_local struct form cache[16];
	struct form *m = &cache[(n * 31 + (unsigned char)k[n - 1] * 7 +
	    (unsigned char)k[n / 2]) % 16];

	if (m->n == n && !memcmp(m->kind, k, n))
		return m;
	memset(m, 0, sizeof *m);
	memcpy(m->kind, k, n);
	m->n = n;
	if (!event_kind_valid(m->kind))
		return m;
	m->keys = minimize_copied(m->kind, &m->count, &m->of);
	m->subs = minimize_subs(m->kind);
	m->agent = !strcmp(m->kind, "agent_message.emitted");
	m->user = !strcmp(m->kind, "user_message.recorded");
	m->cmd = !strcmp(m->kind, "command.received");
	m->tasks = !strcmp(m->kind, "task.plan.updated");
	m->omit = !m->keys && !m->subs && !m->agent && !m->user &&
	    !m->tasks && minimize_omits(m->kind);
	/* anything else is minimized by rules fastev leaves to the tree */
	m->fast = m->keys || m->subs || m->agent || m->user || m->tasks ||
	    m->omit;
	return m;
}

/*
 * payload_next: the payload's next member, from the canonical scan's
 * notes when fastev_check made them, else read from the text at *p
 */
static int
payload_next(const struct fastev *f, const char **p, size_t *at,
    struct span *key, struct span *val)
{
	if (!f->pm)
		return member(p, f->payload.s + f->payload.n, key, val);
	if (*at == f->npm)
		return 0;
	*key = (struct span){ f->pm[*at].k, f->pm[*at].kn };
	*val = (struct span){ f->pm[*at].v, f->pm[*at].vn };
	(*at)++;
	return 1;
}

/* minimize_kind's work for the kinds fastev knows */
static int
plan(struct fastev *f, const struct form *m)
{
	const char *const *k;
	const struct minimize_sub *sb;
	int64_t items = 0;
	const char *p = f->payload.s;
	struct span key, val, content = { NULL, 0 };
	struct span actor = { "\"\"", 2 }, command = { "\"\"", 2 };
	struct span list = { NULL, 0 };
	size_t at = 0;

	while (payload_next(f, &p, &at, &key, &val)) {
		for (k = m->keys; k && *k; k++)
			if (is(&key, *k) && !put_copy(f, *k, &val))
				return 0;
		if ((sb = sub_at(m->subs, &key)) && !put_sub(f, sb, &val))
			return 0;
		if (m->of && is(&key, m->of))
			items = list_count(&val);
		if (m->tasks && is(&key, "tasks"))
			list = val;
		if (is(&key, "content") && val.s[0] == '"')
			content = val;
		else if (m->user && is(&key, "actor_id"))
			actor = val;
		else if (m->user && is(&key, "command_id"))
			command = val;
		/* the session's command filter takes the id's decoded bytes */
		if (m->cmd && is(&key, "command_id") && val.s[0] == '"') {
			if (!plain_str(&val, 0))
				return 0;
			f->cid = (struct span){ val.s + 1, val.n - 2 };
		}
	}
	/* an invalid sub-object the payload does not hold at all */
	for (sb = m->subs; sb && sb->key; sb++)
		if (sb->invalid && !has_out(f, sb->key) &&
		    !put(f, sb->key, "\"invalid\"", 9))
			return 0;
	if (m->omit)
		return put(f, "payload_omitted", "true", 4);
	if (m->tasks)
		return put_plan(f, &list);
	if (m->count && !put_count(f, m->count, items))
		return 0;
	if (m->user && (!put_copy(f, "actor_id", &actor) ||
	    !put_copy(f, "command_id", &command)))
		return 0;
	return m->keys || m->subs || put_count(f, "content_chars", content.s ?
	    chars(&content) : 0);
}

static const char *const envelope_keys[] = { "event_id", "kind",
	"occurred_at", "payload", "previous_event_hash", "schema_version",
	"sequence", "session_id" };

/*
 * envelope: the event's eight members' values (val, in the order of
 * envelope_keys[]) checked as check_event checks them, and its kind's
 * minimization planned
 */
static int
envelope(struct fastev *f, const struct span *val, const char *sid,
    int64_t seq)
{
	const struct form *m;
	char want[32];

	/* what is read before it is written (not the whole, a kilobyte) */
	f->nout = f->nsub = 0;
	f->cid = (struct span){ NULL, 0 };
	f->kind = val[1];
	f->occurred_at = val[2];
	f->payload = val[3];
	f->prev = val[4];
	f->seq = val[6];
	f->sid = val[7];
	if (seq < 0)
		return 0;
	decimal(want, seq);
	if (!plain_str(&val[0], 1) || !plain_str(&f->kind, 1) ||
	    f->kind.n - 2 >= sizeof m->kind || !plain_str(&f->occurred_at, 1) ||
	    f->payload.s[0] != '{' || !(is(&f->prev, "null") ||
	    f->prev.s[0] == '"') || !is(&val[5], "\"" EVENT_SCHEMA "\"") ||
	    !is(&f->seq, want) || f->sid.n != strlen(sid) + 2 ||
	    memcmp(f->sid.s + 1, sid, f->sid.n - 2) || f->sid.s[0] != '"')
		return 0;
	m = form_of(f->kind.s + 1, f->kind.n - 2);
	f->seqn = seq;
	return m->fast && plan(f, m);
}

/* the members the canonical scan notes: an event's eight and a payload's */
#define FASTEV_MEMBERS 64

int
fastev_check(struct fastev *f, const char *line, size_t n, const char *sid,
    int64_t seq)
{
	struct jtextmember m[FASTEV_MEMBERS];
	struct span val[8];
	size_t i, k = 0, nm, top[8];
	int rc;

	/* one reading checks the text and finds the members */
	if (!n || line[0] != '{' || !json_canon_members(line, n, m,
	    FASTEV_MEMBERS, &nm))
		return 0;
	for (i = 0; i < nm; i++) {
		if (m[i].parent >= 0)
			continue;
		if (k == 8)
			return 0;	/* a ninth member: the tree refuses it */
		if (m[i].kn != strlen(envelope_keys[k]) ||
		    memcmp(m[i].k, envelope_keys[k], m[i].kn))
			return 0;
		val[k] = (struct span){ m[i].v, m[i].vn };
		top[k++] = i;
	}
	if (k != 8)
		return 0;
	/* the payload's members lie between it and the next top member */
	f->pm = m + top[3] + 1;
	f->npm = top[4] - top[3] - 1;
	rc = envelope(f, val, sid, seq);
	f->pm = NULL;		/* m goes with this frame */
	return rc;
}

int
fastev_check_at(struct fastev *f, const char *line, size_t n,
    const size_t off[8], const size_t len[8], const char *sid, int64_t seq)
{
	struct span val[8];
	size_t i;

	for (i = 0; i < 8; i++) {
		if (off[i] > n || len[i] == 0 || len[i] > n - off[i])
			return 0;
		val[i] = (struct span){ line + off[i], len[i] };
	}
	f->pm = NULL;
	return envelope(f, val, sid, seq);
}

static int
out_order(const void *x, const void *y)
{
	return strcmp(((const struct fastev_out *)x)->key,
	    ((const struct fastev_out *)y)->key);
}


/* put_member: "key": and the value, an object of sub-members for obj */
static void
put_member(struct buf *rec, const struct fastev *f, const struct fastev_out *o)
{
	size_t i;

	buf_addc(rec, '"');
	buf_add(rec, o->key, o->kn);
	BUF_LIT(rec, "\":");
	if (!o->obj) {
		buf_add(rec, o->val.s, o->val.n);
		return;
	}
	buf_addc(rec, '{');
	for (i = 0; i < o->nsub; i++) {
		if (i)
			buf_addc(rec, ',');
		put_member(rec, f, &f->sub[o->sub + i]);
	}
	buf_addc(rec, '}');
}

/*
 * put_audit_id: the record's id as json_canon_str writes record_id's; its
 * text up to the sequence, "SID-audit-, made once for each session id on
 * each thread when the id needs no escape (a session's id never does)
 */
static void
put_audit_id(struct buf *rec, const char *sid, int64_t seq)
{
	static _Thread_local char last[RECORD_ID_MAX], pre[RECORD_ID_MAX + 1];
	static _Thread_local size_t npre;
	char id[RECORD_ID_MAX];
	size_t i, ns = strlen(sid);

	if (seq >= 0 && ns + sizeof "-audit-" - 1 + 20 < RECORD_ID_MAX) {
		if (strcmp(last, sid)) {
			for (i = 0; i < ns && sid[i] >= 0x20 && sid[i] < 0x7f &&
			    sid[i] != '"' && sid[i] != '\\'; i++)
				;
			npre = 0;
			if (i == ns) {
				pre[0] = '"';
				memcpy(pre + 1, sid, ns);
				memcpy(pre + 1 + ns, "-audit-", 7);
				npre = ns + 8;
			}
			memcpy(last, sid, ns + 1);
		}
		if (npre) {
			buf_add(rec, pre, npre);
			record_id_seq(rec, seq);
			buf_addc(rec, '"');
			return;
		}
	}
	record_id(id, sid, "audit", seq);
	json_canon_str(rec, id, strlen(id));
}

size_t
fastev_record(struct fastev *f, const char *sid, const char *ehash,
    struct buf *rec, size_t *prev_at)
{
	size_t i, mark = 0;
	int hashed = 0, first = 1;

	BUF_LIT(rec, "{\"event_hash\":null,\"event_id\":");
	put_audit_id(rec, sid, f->seqn);
	BUF_LIT(rec, ",\"event_type\":");
	buf_add(rec, f->kind.s, f->kind.n);
	BUF_LIT(rec, ",\"occurred_at\":");
	buf_add(rec, f->occurred_at.s, f->occurred_at.n);
	BUF_LIT(rec, ",\"payload\":{");
	qsort(f->out, f->nout, sizeof *f->out, out_order);
	/* the members in key order, the event's hash in its place */
	for (i = 0; i <= f->nout; i++) {
		if (!hashed && (i == f->nout || strcmp(f->out[i].key,
		    "session_event_hash") > 0)) {
			if (!first)
				buf_addc(rec, ',');
			BUF_LIT(rec, "\"session_event_hash\":\"");
			mark = rec->len + 7;	/* past "sha256:" */
			buf_add(rec, ehash, HW_HASH_LEN);
			buf_addc(rec, '"');
			hashed = 1;
			first = 0;
		}
		if (i == f->nout)
			break;
		if (!first)
			buf_addc(rec, ',');
		put_member(rec, f, &f->out[i]);
		first = 0;
	}
	BUF_LIT(rec, "},\"previous_event_hash\":");
	if (prev_at)
		*prev_at = rec->len;
	buf_add(rec, f->prev.s, f->prev.n);
	BUF_LIT(rec, ",\"schema_version\":\"" AUDIT_SCHEMA "\",\"sequence\":");
	buf_add(rec, f->seq.s, f->seq.n);
	BUF_LIT(rec, ",\"session_id\":");
	buf_add(rec, f->sid.s, f->sid.n);
	buf_addc(rec, '}');
	return mark;
}

void
fastev_prev(const struct fastev *f, char prev[HW_HASH_LEN + 1])
{
	if (f->prev.s[0] != '"')
		prev[0] = '\0';		/* null */
	else if (plain_str(&f->prev, HW_HASH_LEN) &&
	    f->prev.n == HW_HASH_LEN + 2) {
		memcpy(prev, f->prev.s + 1, HW_HASH_LEN);
		prev[HW_HASH_LEN] = '\0';
	} else
		strcpy(prev, "?");	/* no hash: it follows no head */
}
