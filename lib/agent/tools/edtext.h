/*
 * edtext.h - the file editor's text helpers, for editor.c and edtext.c
 * only
 */
#ifndef HW_TOOLS_EDTEXT_H
#define HW_TOOLS_EDTEXT_H

#include <stddef.h>

/* OpenHands' notices after a clipped file or directory listing */
extern const char ed_file_clipped[], ed_dir_clipped[];
/* ed_count_char: how many c in the n bytes at s */
size_t ed_count_char(const char *s, size_t n, char c);
/* ed_strcmp_ptr: strcmp of two char * for qsort */
int ed_strcmp_ptr(const void *a, const void *b);
/* ed_num_lines: lines in s, a last one without '\n' counted */
size_t ed_num_lines(const char *s, size_t n);
/* ed_line_at: the offset where line k (1-based) starts; n past the last */
size_t ed_line_at(const char *s, size_t n, size_t k);
/* ed_lines: s's lines from..to (1-based, inclusive), without the last '\n' */
void ed_lines(const char *s, size_t n, size_t from, size_t to, const char **p,
    size_t *len);
/* ed_clip cuts s at CLIP_CHARS characters and adds notice if it was longer. */
void ed_clip(struct buf *b, const char *s, size_t n, const char *notice);
/* ed_make_output appends OpenHands' `cat -n` rendering of s. */
void ed_make_output(struct buf *out, const char *s, size_t n,
    const char *desc, size_t start);

#endif
