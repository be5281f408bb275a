/* path.c - the rules of a project-relative request path */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"

/* control (Cc) and format (Cf) characters, refused in request paths */
static int
is_cc_cf(uint32_t c)
{
	static const uint32_t cf[][2] = {
		{ 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c },
		{ 0x6dd, 0x6dd }, { 0x70f, 0x70f }, { 0x890, 0x891 },
		{ 0x8e2, 0x8e2 }, { 0x180e, 0x180e }, { 0x200b, 0x200f },
		{ 0x202a, 0x202e }, { 0x2060, 0x2064 }, { 0x2066, 0x206f },
		{ 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0x110bd, 0x110bd },
		{ 0x110cd, 0x110cd }, { 0x13430, 0x1343f },
		{ 0x1bca0, 0x1bca3 }, { 0x1d173, 0x1d17a },
		{ 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
	};
	size_t i;

	if (c < 0x20 || (c >= 0x7f && c <= 0x9f))
		return 1;
	for (i = 0; i < sizeof cf / sizeof cf[0]; i++)
		if (c >= cf[i][0] && c <= cf[i][1])
			return 1;
	return 0;
}

int
path_reserved(const char *name, size_t n)
{
	return (n == 4 && !strncasecmp(name, ".git", 4)) ||
	    (n == 10 && !strncasecmp(name, ".heartwood", 10));
}

int
path_segment_ok(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c;
	size_t i;
	int k;

	if (n == 0 || (n == 1 && s[0] == '.') ||
	    (n == 2 && s[0] == '.' && s[1] == '.'))
		return 0;
	for (i = 0; i < n; i += k) {
		if (p[i] > 0x20 && p[i] < 0x7f && p[i] != '\\' && p[i] != '/') {
			k = 1;	/* printable ASCII: the common case */
			continue;
		}
		if ((k = utf8_decode(p + i, n - i, &c)) <= 0 || c == '\\' ||
		    c == '/' || is_cc_cf(c))
			return 0;
	}
	return 1;
}

int
path_ok(const char *path)
{
	const char *s = path, *e;

	if (!*path || !strcmp(path, "."))
		return 0;
	for (;;) {
		e = strchr(s, '/');
		if (!path_segment_ok(s, e ? (size_t)(e - s) : strlen(s)))
			return -1;
		if (!e)
			return 0;
		s = e + 1;
	}
}
