/* err.c - the last error, and allocation that dies on OOM */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw.h"

static _Thread_local char errmsg[1024];
static _Thread_local int errcode;

int
hw_err_set(int code, const char *fmt, ...)
{
	char tmp[sizeof errmsg];
	va_list ap;

	/* through a copy, so a new message may quote hw_err_msg() */
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	memcpy(errmsg, tmp, sizeof errmsg);
	errcode = code;
	return -1;
}

int
hw_err_sys(const char *fmt, ...)
{
	va_list ap;
	int e = errno;
	size_t n;

	char tmp[sizeof errmsg];

	va_start(ap, fmt);
	vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	memcpy(errmsg, tmp, sizeof errmsg);
	n = strlen(errmsg);
	snprintf(errmsg + n, sizeof errmsg - n, ": %s", strerror(e));
	errcode = HW_EXIT_IO;
	errno = e;
	return -1;
}

const char *
hw_err_msg(void)
{
	return errmsg[0] ? errmsg : "unknown error";
}

int
hw_err_code(void)
{
	return errcode ? errcode : HW_EXIT_FAIL;
}

void
hw_err_print(const char *prog)
{
	const char *m = hw_err_msg();

	fprintf(stderr, "%s: ", prog);
	tty_put(stderr, m, strlen(m), 0);
	fputc('\n', stderr);
}

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
