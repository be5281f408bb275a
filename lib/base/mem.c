/* mem.c - allocation that dies on OOM, the one exit of the library */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static void *
oom(void *p)
{
	if (!p) {
		fputs("heartwood: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *
xmalloc(size_t n)
{
	return oom(malloc(n ? n : 1));
}

void *
xcalloc(size_t n, size_t m)
{
	return oom(calloc(n ? n : 1, m ? m : 1));
}

void *
xrealloc(void *p, size_t n)
{
	return oom(realloc(p, n ? n : 1));
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	return oom(n < 0 ? NULL : s);
}

char *
xstrdup(const char *s)
{
	return oom(strdup(s));
}
