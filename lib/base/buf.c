/* buf.c - growable byte buffers and a bump arena */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/base.h"

void
buf_init(struct buf *b)
{
	b->p = NULL;
	b->len = b->cap = 0;
}

void
buf_release(struct buf *b)
{
	free(b->p);
	buf_init(b);
}

void
buf_clear(struct buf *b)
{
	b->len = 0;
}

static void
buf_grow(struct buf *b, size_t n)
{
	size_t cap;

	if (b->len + n + 1 <= b->cap)
		return;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	b->p = xrealloc(b->p, cap);
	b->cap = cap;
}

size_t
buf_sink(char *p, size_t sz, size_t n, void *ctx)
{
	struct buf_sink *k = ctx;

	if (k->b->len > k->max || (sz && n > (k->max - k->b->len) / sz)) {
		k->over = 1;
		return 0;
	}
	buf_add(k->b, p, sz * n);
	return sz * n;
}

void
buf_reserve(struct buf *b, size_t n)
{
	buf_grow(b, n);
}

void
buf_adds(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	buf_grow(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
buf_add_utf8(struct buf *b, uint32_t cp)
{
	if (cp < 0x80) {
		buf_addc(b, (char)cp);
	} else if (cp < 0x800) {
		buf_addc(b, (char)(0xc0 | cp >> 6));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		/* lone surrogates land here too, as WTF-8 */
		buf_addc(b, (char)(0xe0 | cp >> 12));
		buf_addc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	} else {
		buf_addc(b, (char)(0xf0 | cp >> 18));
		buf_addc(b, (char)(0x80 | (cp >> 12 & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp >> 6 & 0x3f)));
		buf_addc(b, (char)(0x80 | (cp & 0x3f)));
	}
}

char *
buf_cstr(struct buf *b)
{
	buf_grow(b, 0);
	b->p[b->len] = '\0';
	return b->p;
}

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_CHUNK (64 * 1024)

void
arena_init(struct arena *a)
{
	a->head = a->spare = NULL;
}

void *
arena_alloc(struct arena *a, size_t n)
{
	void *p = arena_alloc_raw(a, n);

	memset(p, 0, (n + 15) & ~(size_t)15);
	return p;
}

void *
arena_alloc_raw(struct arena *a, size_t n)
{
	struct arena_chunk *c = a->head;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (!c || c->size - c->used < n) {
		size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;

		if (a->spare && a->spare->size >= n) {
			c = a->spare;
			a->spare = c->next;
		} else {
			c = xmalloc(sizeof *c + size);
			c->size = size;
		}
		c->used = 0;
		c->next = a->head;
		a->head = c;
	}
	p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc_raw(a, n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void
arena_clear(struct arena *a)
{
	struct arena_chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		c->next = a->spare;
		a->spare = c;
	}
	a->head = NULL;
}

static void
free_chunks(struct arena_chunk *c)
{
	struct arena_chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

void
arena_release(struct arena *a)
{
	free_chunks(a->head);
	free_chunks(a->spare);
	a->head = a->spare = NULL;
}

void
mem_wipe(void *p, size_t n)
{
	sodium_memzero(p, n);
}

void
buf_wipe(struct buf *b)
{
	if (b->p)
		mem_wipe(b->p, b->cap);
	buf_release(b);
}
