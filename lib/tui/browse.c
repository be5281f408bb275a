/* browse.c - /files, /show and /changes: hw-inspect's views as text */
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

#define DIFF_CELLS 4000000	/* past this many, a diff replaces all lines */

static const char *
str_or(const struct jval *v, const char *key, const char *dflt)
{
	const char *s = json_get_str(v, key);

	return s ? s : dflt;
}

/* put writes s escaped for the terminal (newlines kept) */
static void
put(FILE *f, const char *s, size_t n)
{
	tty_put(f, s, n, 1);
}

/* puts1 writes s escaped, on one line */
static void
puts1(FILE *f, const char *s)
{
	tty_put(f, s, strlen(s), 0);
}

static void
show_tree(FILE *f, const struct jval *v)
{
	const struct jval *es = json_get(v, "entries"), *e;
	int64_t d;

	fputs("Project files · ", f);
	puts1(f, str_or(v, "path", "."));
	fputc('\n', f);
	if (!strcmp(str_or(v, "status", ""), "unavailable"))
		fputs("[unavailable]\n", f);
	for (size_t i = 0; es && es->t == J_ARRAY && i < es->n; i++) {
		e = es->u.a[i];
		d = 1;
		json_get_int(e, "depth", &d);
		for (int64_t k = 0; k < d && k < 64; k++)
			fputs("  ", f);
		put(f, str_or(e, "name", "?"), strlen(str_or(e, "name", "?")));
		fputs(json_is_str(json_get(e, "kind"), "directory") ? "/\n" :
		    "\n", f);
	}
	if (json_get(v, "truncated") && json_get(v, "truncated")->t == J_TRUE)
		fputs("[truncated]\n", f);
}

static void
show_file(FILE *f, const struct jval *v)
{
	const struct jval *c = json_get(v, "content");

	fputs("File · ", f);
	puts1(f, str_or(v, "path", "?"));
	fputs(" · ", f);
	puts1(f, str_or(v, "status", "?"));
	fputc('\n', f);
	if (c && c->t == J_STRING) {
		put(f, c->u.s, c->n);
		if (c->n && c->u.s[c->n - 1] != '\n')
			fputc('\n', f);
	} else if (json_get_str(v, "message")) {
		puts1(f, json_get_str(v, "message"));
		fputc('\n', f);
	}
	if (json_get(v, "truncated") && json_get(v, "truncated")->t == J_TRUE)
		fputs("[truncated]\n", f);
}

static void
show_changes(FILE *f, const struct jval *v)
{
	const struct jval *cs = json_get(v, "changes"), *c;
	const char *src = str_or(v, "source", ""), *st;

	fprintf(f, "Project changes · %s\n", !strcmp(src, "git") ? "Git" :
	    !strcmp(src, "session-actions") ? "Session actions" :
	    "Unavailable");
	for (size_t i = 0; cs && cs->t == J_ARRAY && i < cs->n; i++) {
		c = cs->u.a[i];
		st = str_or(c, "status", "");
		fprintf(f, "%s  ", !strcmp(st, "added") ? "A" :
		    !strcmp(st, "deleted") ? "D" : "M");
		put(f, str_or(c, "path", "?"), strlen(str_or(c, "path", "?")));
		fputc('\n', f);
	}
	/* the inspector drops the paths it cannot show and says so */
	if (json_is_str(json_get(v, "status"), "unsupported"))
		fputs("The list is incomplete: changed paths whose names "
		    "cannot be shown were left out (a control or format "
		    "character such as a bidirectional override, a "
		    "backslash, .git or .heartwood in any letter case, or "
		    "not a regular file).\n", f);
	else if (cs && cs->t == J_ARRAY && !cs->n)
		fputs("No changes.\n", f);
	if (json_get(v, "truncated") && json_get(v, "truncated")->t == J_TRUE)
		fputs("[truncated]\n", f);
}

struct lines {
	const char **p;		/* starts of lines */
	size_t *n;		/* their lengths, without "\n" */
	size_t count;
};

static void
lines_split(struct lines *l, const struct jval *v)
{
	const char *s = v && v->t == J_STRING ? v->u.s : "";
	size_t len = v && v->t == J_STRING ? v->n : 0, i = 0, start;

	l->count = 0;
	l->p = xcalloc(len + 1, sizeof *l->p);
	l->n = xcalloc(len + 1, sizeof *l->n);
	while (i < len) {
		start = i;
		while (i < len && s[i] != '\n')
			i++;
		l->p[l->count] = s + start;
		l->n[l->count++] = i - start;
		i += i < len;
	}
}

static int
same(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
	return a->n[i] == b->n[j] && !memcmp(a->p[i], b->p[j], a->n[i]);
}

static void
line_out(FILE *f, char mark, const struct lines *l, size_t i)
{
	fputc(mark, f);
	put(f, l->p[i], l->n[i]);
	fputc('\n', f);
}

/*
 * unified writes one hunk with every line: the longest common subsequence
 * as context, or, past DIFF_CELLS, every line removed and then added.
 */
static void
unified(FILE *f, const struct lines *a, const struct lines *b)
{
	size_t n = a->count, m = b->count, i = 0, j = 0;
	unsigned *t = NULL;

	fprintf(f, "@@ -%zu,%zu +%zu,%zu @@\n", n ? (size_t)1 : 0, n,
	    m ? (size_t)1 : 0, m);
	if ((n + 1) * (m + 1) <= DIFF_CELLS) {
		t = xcalloc((n + 1) * (m + 1), sizeof *t);
		for (size_t x = n; x-- > 0;)
			for (size_t y = m; y-- > 0;)
				t[x * (m + 1) + y] = same(a, x, b, y) ?
				    t[(x + 1) * (m + 1) + y + 1] + 1 :
				    t[(x + 1) * (m + 1) + y] >
				    t[x * (m + 1) + y + 1] ?
				    t[(x + 1) * (m + 1) + y] :
				    t[x * (m + 1) + y + 1];
	}
	while (t && i < n && j < m) {
		if (same(a, i, b, j))
			line_out(f, ' ', a, i++), j++;
		else if (t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1])
			line_out(f, '-', a, i++);
		else
			line_out(f, '+', b, j++);
	}
	while (i < n)
		line_out(f, '-', a, i++);
	while (j < m)
		line_out(f, '+', b, j++);
	free(t);
}

static void
show_diff(FILE *f, const struct jval *v)
{
	const char *path = str_or(v, "path", "?");
	struct lines a, b;

	fputs("Change · ", f);
	puts1(f, path);
	fputs(" · ", f);
	puts1(f, str_or(v, "status", "?"));
	fputc('\n', f);
	if (json_get_str(v, "message")) {
		puts1(f, json_get_str(v, "message"));
		fputc('\n', f);
	}
	lines_split(&a, json_get(v, "original"));
	lines_split(&b, json_get(v, "modified"));
	if (a.count || b.count) {
		fputs("--- a/", f);
		puts1(f, path);
		fputs("\n+++ b/", f);
		puts1(f, path);
		fputc('\n', f);
		unified(f, &a, &b);
	}
	free(a.p), free(a.n), free(b.p), free(b.n);
}

int
term_inspect(FILE *out, char *const argv[])
{
	struct buf b;
	struct arena a;
	struct jval *v;
	const char *schema;
	char err[128];
	int rc;

	buf_init(&b);
	arena_init(&a);
	rc = driver_run("hw-inspect", argv, NULL, 0, &b);
	v = rc >= 0 && b.len ? json_parse(&a, b.p, b.len, err, sizeof err) :
	    NULL;
	schema = json_get_str(v, "schema_version");
	if (!schema) {
		if (rc == 0)
			rc = hw_err_set(HW_EXIT_DATA, "hw-inspect answered "
			    "what heartwood cannot read");
	} else if (!strcmp(schema, "heartwood.workspace-tree.v1")) {
		show_tree(out, v);
	} else if (!strcmp(schema, "heartwood.workspace-file.v1")) {
		show_file(out, v);
	} else if (!strcmp(schema, "heartwood.workspace-changes.v1")) {
		show_changes(out, v);
	} else if (!strcmp(schema, "heartwood.workspace-diff.v1")) {
		show_diff(out, v);
	}
	/*
	 * as the reference: a file not shown, no changes to show, or a list
	 * that is incomplete, is 1
	 */
	if (rc == 0 && schema && strcmp(schema, "heartwood.workspace-tree.v1")
	    && (json_is_str(json_get(v, "status"), "unavailable") ||
	    (!strcmp(schema, "heartwood.workspace-changes.v1") &&
	    json_is_str(json_get(v, "status"), "unsupported")) ||
	    (!strcmp(schema, "heartwood.workspace-file.v1") &&
	    !json_is_str(json_get(v, "status"), "available") &&
	    !json_is_str(json_get(v, "status"), "truncated"))))
		rc = HW_EXIT_FAIL;
	fflush(out);
	arena_release(&a);
	buf_release(&b);
	return rc;
}
