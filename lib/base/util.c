/* util.c - time stamps, ids, randomness */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>

#include "base/base.h"

void
utc_now(char out[21])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static int
alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9');
}

int
valid_session_id(const char *id)
{
	size_t i, n = strlen(id);

	if (n < 1 || n > 128 || !alnum(id[0]))
		return 0;
	for (i = 1; i < n; i++)
		if (!alnum(id[i]) && id[i] != '_' && id[i] != '.' &&
		    id[i] != '-')
			return 0;
	return 1;
}

int
random_hex(char *out, size_t n)
{
	unsigned char b[64];
	ssize_t r;

	if (n > sizeof b)
		return hw_err_set(HW_EXIT_FAIL, "random_hex: too long");
	do
		r = getrandom(b, n, 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)n)
		return hw_err_sys("cannot read random bytes");
	hex_encode(b, n, out);
	return 0;
}

int
parse_seq(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || end == s)
		return -1;
	*out = v;
	return 0;
}

int
media_is_json(const char *ct)
{
	size_t n;

	if (!ct)
		return 0;
	n = strcspn(ct, ";");
	while (n && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
		n--;
	return n == 16 && !strncasecmp(ct, "application/json", 16);
}

int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
