/* edtext.c - the file editor's text: lines, clipping, `cat -n` output */
#include <stdlib.h>
#include <string.h>

#include "agent/tools/tools.h"
#include "agent/tools/edtext.h"

#define CLIP_CHARS 16000	/* OpenHands' MAX_RESPONSE_LEN_CHAR */

const char ed_file_clipped[] =
    "<response clipped><NOTE>Due to the max output limit, only part of "
    "this file has been shown to you. You should use `view_range` to view "
    "the file in chunks, or search with `grep -n` in the terminal to find "
    "the line numbers of what you are looking for.</NOTE>";
const char ed_dir_clipped[] =
    "<response clipped><NOTE>Due to the max output limit, only part of "
    "this directory has been shown to you. You should use `ls -la` in the "
    "terminal instead to view large directories incrementally.</NOTE>";

size_t
ed_count_char(const char *s, size_t n, char c)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++)
		k += s[i] == c;
	return k;
}

int
ed_strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t
ed_num_lines(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += s[i] == '\n';
	return c + (n && s[n - 1] != '\n');
}

/* line_at: the offset where line k (1-based) starts; n past the last */
size_t
ed_line_at(const char *s, size_t n, size_t k)
{
	size_t i = 0;

	while (k > 1 && i < n) {
		const char *nl = memchr(s + i, '\n', n - i);

		if (!nl)
			return n;
		i = (size_t)(nl - s) + 1;
		k--;
	}
	return i;
}

/* lines: s's lines from..to (1-based, inclusive), without the last '\n' */
void
ed_lines(const char *s, size_t n, size_t from, size_t to, const char **p,
    size_t *len)
{
	size_t a = ed_line_at(s, n, from), b = ed_line_at(s, n, to + 1);

	if (b > a && s[b - 1] == '\n')
		b--;
	*p = s + a;
	*len = b > a ? b - a : 0;
}

/* clip cuts s at CLIP_CHARS characters and adds notice if it was longer. */
void
ed_clip(struct buf *b, const char *s, size_t n, const char *notice)
{
	size_t i = 0, chars = 0;

	while (i < n && chars < CLIP_CHARS) {
		i++;
		while (i < n && ((unsigned char)s[i] & 0xc0) == 0x80)
			i++;
		chars++;
	}
	buf_add(b, s, i);
	if (i < n)
		buf_adds(b, notice);
}

/* make_output appends OpenHands' `cat -n` rendering of s. */
void
ed_make_output(struct buf *out, const char *s, size_t n, const char *desc,
    size_t start)
{
	struct buf c;
	size_t i = 0, k = start;

	buf_init(&c);
	ed_clip(&c, s, n, ed_file_clipped);
	buf_printf(out, "Here's the result of running `cat -n` on %s:\n", desc);
	for (;;) {
		const char *nl = c.len > i ? memchr(c.p + i, '\n', c.len - i) :
		    NULL;
		size_t end = nl ? (size_t)(nl - c.p) : c.len;

		buf_printf(out, "%6zu\t", k++);
		buf_add(out, c.p + i, end - i);
		buf_addc(out, '\n');
		if (!nl)
			break;
		i = end + 1;
	}
	buf_release(&c);
}
