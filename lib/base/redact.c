/*
 * redact.c - credential values, and the forms they are commonly written
 * in, replaced by a marker before any text is stored or shown
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

/* the built-in credential allowlist (trust.c, hw-agent(1)) */
static const char *const builtin_env[] = { "OPENAI_API_KEY",
	"ANTHROPIC_API_KEY", "STANFORD_AI_API_KEY",
	"HEARTWOOD_CUSTOM_MODEL_API_KEY", NULL };

struct needle {
	char *p;
	size_t n;
};

static struct {
	struct needle *v;
	size_t n, cap;
	size_t longest;
} reg;

static pthread_once_t reg_once = PTHREAD_ONCE_INIT;
/* taken to read reg, and to add to it, once it is loaded */
static pthread_rwlock_t reg_lock = PTHREAD_RWLOCK_INITIALIZER;
static void add_secret(const char *v, size_t n);

static void
add_env(const char *name)
{
	const char *v = name && *name ? getenv(name) : NULL;

	if (v)
		add_secret(v, strlen(v));
}

static void
reg_load(void)
{
	const char *const *e;

	for (e = builtin_env; *e; e++)
		add_env(*e);
	add_env(getenv("HW_API_KEY_ENV"));
}

static void
reg_ready(void)
{
	pthread_once(&reg_once, reg_load);
}

/* add keeps one needle, once; short ones are never matched */
static void
add(const char *p, size_t n)
{
	size_t i;

	if (n < REDACT_MIN)
		return;
	for (i = 0; i < reg.n; i++)
		if (reg.v[i].n == n && !memcmp(reg.v[i].p, p, n))
			return;
	if (reg.n == reg.cap) {
		reg.cap = reg.cap ? 2 * reg.cap : 16;
		reg.v = xrealloc(reg.v, reg.cap * sizeof *reg.v);
	}
	reg.v[reg.n].p = xmalloc(n);
	memcpy(reg.v[reg.n].p, p, n);
	reg.v[reg.n++].n = n;
	if (n > reg.longest)
		reg.longest = n;
}

/*
 * add_b64: the part of the base64 of v that does not depend on what
 * surrounds v, when v starts `at` bytes (0-2) into a group of three:
 * the characters that also carry a neighbour's bits are left out at both
 * ends, and so is the padding.  url: the URL-safe alphabet.
 */
static void
add_b64(const char *v, size_t n, size_t at, int url)
{
	static const size_t head[3] = { 0, 2, 3 }, tail[3] = { 0, 3, 2 };
	struct buf in, out;
	size_t i, drop;

	buf_init(&in);
	buf_init(&out);
	buf_add(&in, "\0\0", at);
	buf_add(&in, v, n);
	b64_encode(&out, in.p, in.len);
	for (i = 0; url && i < out.len; i++)
		out.p[i] = out.p[i] == '+' ? '-' : out.p[i] == '/' ? '_' :
		    out.p[i];
	drop = head[at] + tail[in.len % 3];
	if (out.len > drop)
		add(out.p + head[at], out.len - drop);
	buf_wipe(&in);
	buf_wipe(&out);
}

/* add_hex: hex, or percent-encoding (pct) of every byte or (all == 0)
 * of those outside RFC 3986's unreserved set, in either case */
static void
add_hex(const char *v, size_t n, int pct, int all, int upper)
{
	const char *d = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)v;
	struct buf b;
	size_t i;

	buf_init(&b);
	for (i = 0; i < n; i++) {
		if (pct && !all && (strchr("-._~", u[i]) ||
		    (u[i] >= '0' && u[i] <= '9') || ((u[i] | 0x20) >= 'a' &&
		    (u[i] | 0x20) <= 'z'))) {
			buf_addc(&b, (char)u[i]);
			continue;
		}
		if (pct)
			buf_addc(&b, '%');
		buf_addc(&b, d[u[i] >> 4]);
		buf_addc(&b, d[u[i] & 15]);
	}
	add(b.p, b.len);
	buf_wipe(&b);
}

static void
add_secret(const char *v, size_t n)
{
	size_t at;
	int url, upper;

	if (n < REDACT_MIN)
		return;
	add(v, n);
	for (at = 0; at < 3; at++)
		for (url = 0; url < 2; url++)
			add_b64(v, n, at, url);
	for (upper = 0; upper < 2; upper++) {
		add_hex(v, n, 0, 1, upper);
		add_hex(v, n, 1, 0, upper);
		add_hex(v, n, 1, 1, upper);
	}
}

int
redact_secret(const char *v, size_t n)
{
	size_t before;

	int added;

	reg_ready();
	pthread_rwlock_wrlock(&reg_lock);
	before = reg.n;
	if (v)
		add_secret(v, n);
	added = reg.n > before;
	pthread_rwlock_unlock(&reg_lock);
	return added;
}

void
redact_env(const char *name)
{
	reg_ready();
	pthread_rwlock_wrlock(&reg_lock);
	add_env(name);
	pthread_rwlock_unlock(&reg_lock);
}

size_t
redact_count(void)
{
	size_t n;

	reg_ready();
	pthread_rwlock_rdlock(&reg_lock);
	n = reg.n;
	pthread_rwlock_unlock(&reg_lock);
	return n;
}

/*
 * next_at: the earliest match at or after `from`, the longest when two
 * start together; pos[] caches each needle's next match (SIZE_MAX: none)
 */
static size_t
next_at(const char *p, size_t n, size_t from, size_t *pos, size_t *which)
{
	size_t i, best = SIZE_MAX;
	const char *q;

	for (i = 0; i < reg.n; i++) {
		if (pos[i] != SIZE_MAX && pos[i] < from) {
			q = from < n ? memmem(p + from, n - from, reg.v[i].p,
			    reg.v[i].n) : NULL;
			pos[i] = q ? (size_t)(q - p) : SIZE_MAX;
		}
		if (pos[i] < best || (pos[i] == best && pos[i] != SIZE_MAX &&
		    reg.v[i].n > reg.v[*which].n)) {
			best = pos[i];
			*which = i;
		}
	}
	return best;
}

/* redact_to is redact_buf noting in *last where the last marker ends */
static size_t
redact_to(struct buf *out, const char *p, size_t n, size_t *last)
{
	size_t small[32], *pos, i, at, from = 0, which = 0, count = 0;

	reg_ready();
	*last = out->len;
	pthread_rwlock_rdlock(&reg_lock);
	if (!reg.n || n < REDACT_MIN) {
		pthread_rwlock_unlock(&reg_lock);
		buf_add(out, p, n);
		return 0;
	}
	pos = reg.n <= 32 ? small : xmalloc(reg.n * sizeof *pos);
	for (i = 0; i < reg.n; i++) {
		const char *q = memmem(p, n, reg.v[i].p, reg.v[i].n);

		pos[i] = q ? (size_t)(q - p) : SIZE_MAX;
	}
	while ((at = next_at(p, n, from, pos, &which)) != SIZE_MAX) {
		buf_add(out, p + from, at - from);
		buf_adds(out, REDACT_MARKER);
		*last = out->len;
		from = at + reg.v[which].n;
		count++;
	}
	pthread_rwlock_unlock(&reg_lock);
	buf_add(out, p + from, n - from);
	if (pos != small)
		free(pos);
	return count;
}

size_t
redact_buf(struct buf *out, const char *p, size_t n)
{
	size_t last;

	return redact_to(out, p, n, &last);
}

/* redact_str: s (n bytes) redacted into a; NULL when nothing matched */
static const char *
redact_str(struct arena *a, const char *s, size_t n, size_t *outn)
{
	struct buf b;
	const char *r = NULL;

	buf_init(&b);
	if (redact_buf(&b, s, n)) {
		r = arena_strndup(a, b.p, b.len);
		*outn = b.len;
	}
	buf_release(&b);
	return r;
}

static int
key_taken(const struct jval *o, size_t self, const char *k, size_t kn)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (i != self && o->u.m[i].kn == kn &&
		    !memcmp(o->u.m[i].k, k, kn))
			return 1;
	return 0;
}

/* redact_key: a redacted key gets "#N" when another key is the same */
static size_t
redact_key(struct arena *a, struct jval *o, size_t i)
{
	struct jmember *m = &o->u.m[i];
	const char *k;
	char *t;
	size_t kn, extra;

	if (!(k = redact_str(a, m->k, m->kn, &kn)))
		return 0;
	m->k = k;
	m->kn = kn;
	for (extra = 2; key_taken(o, i, m->k, m->kn); extra++) {
		t = arena_alloc_raw(a, kn + 24);
		memcpy(t, k, kn);
		m->kn = kn + (size_t)snprintf(t + kn, 24, "#%zu", extra);
		m->k = t;
	}
	return 1;
}

size_t
redact_json(struct arena *a, struct jval *v)
{
	const char *s;
	size_t i, n, count = 0;

	if (!v || !redact_count())
		return 0;
	switch (v->t) {
	case J_STRING:
		if ((s = redact_str(a, v->u.s, v->n, &n))) {
			v->u.s = s;
			v->n = n;
			v->plain = 0;
			count++;
		}
		break;
	case J_ARRAY:
		for (i = 0; i < v->n; i++)
			count += redact_json(a, v->u.a[i]);
		break;
	case J_OBJECT:
		for (i = 0; i < v->n; i++) {
			count += redact_key(a, v, i);
			count += redact_json(a, v->u.m[i].v);
		}
		break;
	default:
		break;
	}
	return count;
}

void
redact_stream_init(struct redact_stream *rs)
{
	buf_init(&rs->shown);
	rs->done = 0;
}

void
redact_stream_release(struct redact_stream *rs)
{
	buf_release(&rs->shown);
	rs->done = 0;
}

void
redact_stream_clear(struct redact_stream *rs)
{
	buf_clear(&rs->shown);
	rs->done = 0;
}

/* held: the longest tail of p (n bytes) that begins some needle */
static size_t
held(const char *p, size_t n)
{
	size_t k, i;

	for (k = reg.longest > 1 ? reg.longest - 1 : 0; k > 0; k--) {
		if (k > n)
			continue;
		for (i = 0; i < reg.n; i++)
			if (reg.v[i].n > k && !memcmp(p + n - k, reg.v[i].p, k))
				return k;
	}
	return 0;
}

void
redact_stream_update(struct redact_stream *rs, const char *text, size_t n)
{
	struct buf tmp;
	size_t last, keep, from;

	if (n < rs->done)
		return;
	buf_init(&tmp);
	redact_to(&tmp, text + rs->done, n - rs->done, &last);
	/* only what follows the last marker is the text's own tail */
	pthread_rwlock_rdlock(&reg_lock);
	keep = held(tmp.p + last, tmp.len - last);
	pthread_rwlock_unlock(&reg_lock);
	buf_add(&rs->shown, tmp.p, tmp.len - keep);
	/* the held bytes are the last `keep` of the text itself */
	from = n - keep;
	rs->done = from;
	buf_wipe(&tmp);
}
