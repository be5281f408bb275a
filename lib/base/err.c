/* err.c - the last error: set, read, printed for a person */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

static _Thread_local char errmsg[1024];
static _Thread_local int errcode;

/*
 * set_msg makes "message" + tail the last error, through a copy (so a
 * new message may quote hw_err_msg()), with every credential value
 * redacted before it is cut to size, so that no piece of one is left
 */
static void
set_msg(const char *fmt, va_list ap, const char *tail)
{
	char tmp[sizeof errmsg], *full = NULL;
	struct buf b;
	va_list ap2;
	size_t n;
	int r;

	va_copy(ap2, ap);
	r = redact_count() ? vasprintf(&full, fmt, ap2) : -1;
	va_end(ap2);
	if (r < 0) {
		vsnprintf(tmp, sizeof tmp, fmt, ap);
		snprintf(errmsg, sizeof errmsg, "%s%s", tmp, tail);
		return;
	}
	buf_init(&b);
	redact_buf(&b, full, strlen(full));
	redact_buf(&b, tail, strlen(tail));
	n = b.len < sizeof errmsg ? b.len : sizeof errmsg - 1;
	memcpy(errmsg, b.p, n);
	errmsg[n] = 0;
	buf_release(&b);
	free(full);
}

int
hw_err_set(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	set_msg(fmt, ap, "");
	va_end(ap);
	errcode = code;
	return -1;
}

int
hw_err_sys(const char *fmt, ...)
{
	va_list ap;
	int e = errno;
	char tail[256];

	snprintf(tail, sizeof tail, ": %s", strerror(e));
	va_start(ap, fmt);
	set_msg(fmt, ap, tail);
	va_end(ap);
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
