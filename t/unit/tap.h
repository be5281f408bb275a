/* tap.h - a tiny TAP producer for the C unit tests of lib/ */
#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_fail;

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static void __attribute__((format(printf, 4, 5)))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", pass ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!pass) {
		tap_fail++;
		printf("#   failed at %s:%d\n", file, line);
	}
}

/* is_str compares two strings and shows both on failure. */
#define is_str(got, want, ...) do { \
	const char *g_ = (got), *w_ = (want); \
	int p_ = g_ && w_ && strcmp(g_, w_) == 0; \
	ok(p_, __VA_ARGS__); \
	if (!p_) \
		printf("#   got:  %s\n#   want: %s\n", g_ ? g_ : "(null)", \
		    w_ ? w_ : "(null)"); \
} while (0)

static int
tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}

#endif
