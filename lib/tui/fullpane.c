/* fullpane.c - the full-screen terminal's Files and Changes tabs:
 * hw-inspect's tree and changes as lists, and the chosen row's view */
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"
#include "tui/full.h"

/* inspect_json runs hw-inspect argv and parses its answer into a */
static struct jval *
inspect_json(struct arena *a, char *const argv[])
{
	struct buf b;
	struct jval *v = NULL;
	char err[128];
	int rc;

	buf_init(&b);
	rc = driver_run("hw-inspect", argv, NULL, 0, &b);
	if (rc == 0 && !(v = json_parse(a, b.p ? b.p : "", b.len, err,
	    sizeof err)))
		hw_err_set(HW_EXIT_DATA, "hw-inspect answered what heartwood "
		    "cannot read");
	else if (rc > 0)
		hw_err_set(rc, "hw-inspect failed with status %d", rc);
	buf_release(&b);
	return v;
}

void
full_pane_clear(struct pane *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->rows[i].path), free(p->rows[i].label);
	free(p->rows);
	free(p->title);
	free(p->view);
	p->rows = NULL;
	p->n = p->sel = p->top = p->vtop = 0;
	p->title = p->view = NULL;
}

static void
pane_add(struct pane *p, const char *path, struct buf *label)
{
	p->rows = xrealloc(p->rows, (p->n + 1) * sizeof *p->rows);
	p->rows[p->n].path = path ? xstrdup(path) : NULL;
	p->rows[p->n++].label = xstrdup(buf_cstr(label));
	buf_clear(label);
}

void
full_pane_view(struct full *f, struct pane *p)
{
	char *argv[] = { "hw-inspect", "file", NULL, "--session",
		(char *)f->t->sid, NULL };
	char *text = NULL;
	size_t n = 0;
	FILE *m;

	if (p->sel >= p->n || !p->rows[p->sel].path)
		return;
	argv[2] = p->rows[p->sel].path;
	if (p == &f->changes)
		argv[1] = "diff";
	else
		argv[3] = NULL;
	m = full_memstream(&text, &n);
	if (term_inspect(m, argv) < 0)
		fprintf(m, "%s\n", hw_err_msg());
	fclose(m);
	free(p->view);
	p->view = text;
	p->vtop = 0;
	full_drain_err(f);
	f->dirty = 1;
}

static void
tree_rows(struct pane *p, const struct jval *v)
{
	const struct jval *es = json_get(v, "entries"), *e;
	int dir;
	int64_t d;
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; es && es->t == J_ARRAY && i < es->n; i++) {
		e = es->u.a[i];
		d = 1;
		json_get_int(e, "depth", &d);
		for (int64_t k = 1; k < d && k < 32; k++)
			buf_adds(&b, "  ");
		term_safe(&b, json_get_str(e, "name"));
		dir = json_is_str(json_get(e, "kind"), "directory");
		if (dir)
			buf_addc(&b, '/');
		pane_add(p, dir ? NULL : json_get_str(e, "path"), &b);
	}
	if (json_get(v, "truncated") && json_get(v, "truncated")->t == J_TRUE)
		buf_adds(&b, "[truncated]"), pane_add(p, NULL, &b);
	buf_release(&b);
}

static void
change_rows(struct pane *p, const struct jval *v)
{
	const struct jval *cs = json_get(v, "changes"), *c;
	const char *st;
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; cs && cs->t == J_ARRAY && i < cs->n; i++) {
		c = cs->u.a[i];
		st = json_get_str(c, "status");
		buf_adds(&b, st && !strcmp(st, "added") ? "A  " : st &&
		    !strcmp(st, "deleted") ? "D  " : "M  ");
		term_safe(&b, json_get_str(c, "path"));
		pane_add(p, json_get_str(c, "path"), &b);
	}
	buf_release(&b);
}

/* pane_fill takes hw-inspect's answer v (NULL: it failed) into p */
static void
pane_fill(struct full *f, struct pane *p, const struct jval *v)
{
	const char *src, *msg;
	struct buf b;

	buf_init(&b);
	if (!v) {
		p->title = xstrdup(p == &f->files ? "Project files" :
		    "Project changes");
		p->view = xstrdup(hw_err_msg());
	} else if (p == &f->files) {
		buf_adds(&b, "Project files · ");
		term_safe(&b, json_get_str(v, "path"));
		if (json_is_str(json_get(v, "status"), "unavailable"))
			buf_adds(&b, " [unavailable]");
		p->title = xstrdup(buf_cstr(&b));
		tree_rows(p, v);
	} else {
		src = json_get_str(v, "source");
		buf_printf(&b, "Project changes · %s", src && !strcmp(src,
		    "git") ? "Git" : src && !strcmp(src, "session-actions") ?
		    "Session actions" : "Unavailable");
		p->title = xstrdup(buf_cstr(&b));
		change_rows(p, v);
		msg = json_get_str(v, "message");
		if (!p->n)
			p->view = xstrdup(msg && json_is_str(json_get(v,
			    "status"), "unavailable") ? msg : "No changes.");
	}
	buf_release(&b);
}

void
full_pane_load(struct full *f, struct pane *p, const char *dir)
{
	char *keep = p->sel < p->n && p->rows[p->sel].path ?
	    xstrdup(p->rows[p->sel].path) : NULL;
	char *tree[] = { "hw-inspect", "tree", NULL, NULL };
	char *chg[] = { "hw-inspect", "changes", "--session",
		(char *)f->t->sid, NULL };
	struct arena a;

	if (dir) {
		free(p->dir);
		p->dir = xstrdup(dir);
	}
	tree[2] = p->dir ? p->dir : ".";
	arena_init(&a);
	full_pane_clear(p);
	json_get_int(f->proj, "workspaceRevision", &p->rev);
	p->loaded = 1;
	pane_fill(f, p, inspect_json(&a, p == &f->files ? tree : chg));
	/* the row chosen before, when it is still listed; else a file */
	for (size_t i = 0; keep && i < p->n; i++)
		if (p->rows[i].path && !strcmp(p->rows[i].path, keep))
			p->sel = i;
	while (p->sel + 1 < p->n && !p->rows[p->sel].path)
		p->sel++;
	full_pane_view(f, p);
	full_drain_err(f);
	arena_release(&a);
	free(keep);
	f->dirty = 1;
}

void
full_show_path(struct full *f, struct pane *p, const char *path)
{
	struct buf b;

	for (size_t i = 0; i < p->n; i++) {
		if (p->rows[i].path && !strcmp(p->rows[i].path, path)) {
			p->sel = i;
			full_pane_view(f, p);
			return;
		}
	}
	/* not listed (deeper than the tree, or not a change): shown alone */
	buf_init(&b);
	term_safe(&b, path);
	pane_add(p, path, &b);
	p->sel = p->n - 1;
	full_pane_view(f, p);
	buf_release(&b);
}
