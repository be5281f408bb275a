/* smap.c - a string-keyed open-addressing hash map */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static uint64_t
hash_bytes(const char *k, size_t n)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)k[i];
		h *= 1099511628211ULL;
	}
	return h;
}

void
smap_init(struct smap *m)
{
	memset(m, 0, sizeof *m);
}

void
smap_release(struct smap *m)
{
	free(m->e);
	memset(m, 0, sizeof *m);
}

static struct smap_ent *
slot_for(const struct smap *m, const char *k, size_t n)
{
	size_t i = (size_t)hash_bytes(k, n) & (m->cap - 1);
	struct smap_ent *e;

	for (;; i = (i + 1) & (m->cap - 1)) {
		e = &m->e[i];
		if (!e->k || (e->n == n && memcmp(e->k, k, n) == 0))
			return e;
	}
}

void *
smap_get(const struct smap *m, const char *k, size_t n)
{
	struct smap_ent *e;

	if (!m->cap)
		return NULL;
	e = slot_for(m, k, n);
	return e->k ? e->v : NULL;
}

void
smap_put(struct smap *m, const char *k, size_t n, void *v)
{
	struct smap_ent *old = m->e, *e;
	size_t i, oldcap = m->cap;

	if (2 * (m->used + 1) > m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->e = xcalloc(m->cap, sizeof *m->e);
		m->used = 0;
		for (i = 0; i < oldcap; i++)
			if (old[i].k) {
				*slot_for(m, old[i].k, old[i].n) = old[i];
				m->used++;
			}
		free(old);
	}
	e = slot_for(m, k, n);
	if (!e->k) {
		e->k = k;
		e->n = n;
		m->used++;
	}
	e->v = v;
}
