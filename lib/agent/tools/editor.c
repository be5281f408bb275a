/*
 * editor.c - the file_editor tool (reference §5.3), confined to the
 * project and out of .heartwood (edpath.c says how).  Messages follow
 * OpenHands' editor, which the models know.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/tools/tools.h"
#include "agent/tools/edpath.h"
#include "agent/tools/edtext.h"

#define CONTEXT 4		/* snippet lines around an edit */

struct hist {
	char *key;		/* the file's canonical path */
	struct buf text[EDITOR_HISTORY];
	int n;
	struct hist *next;
};

struct editor {
	struct ed_where w;
	struct hist *hist;
};

struct editor *
editor_new(const char *root)
{
	struct editor *e = xcalloc(1, sizeof *e);

	if (ed_where_init(&e->w, root) < 0) {
		free(e);
		return NULL;
	}
	return e;
}

void
editor_free(struct editor *e)
{
	struct hist *h, *next;
	int i;

	if (!e)
		return;
	for (h = e->hist; h; h = next) {
		next = h->next;
		for (i = 0; i < EDITOR_HISTORY; i++)
			buf_release(&h->text[i]);
		free(h->key);
		free(h);
	}
	ed_where_release(&e->w);
	free(e);
}

int
editor_readable(struct editor *e, const char *dir)
{
	return ed_readable(&e->w, dir);
}

/* ---- history ---- */

static struct hist *
hist_find(struct editor *e, const char *key, int create)
{
	struct hist *h;

	for (h = e->hist; h; h = h->next)
		if (strcmp(h->key, key) == 0)
			return h;
	if (!create)
		return NULL;
	h = xcalloc(1, sizeof *h);
	h->key = xstrdup(key);
	h->next = e->hist;
	e->hist = h;
	return h;
}

static void
hist_push(struct editor *e, const char *key, const char *p, size_t n)
{
	struct hist *h = hist_find(e, key, 1);
	struct buf drop;

	if (h->n == EDITOR_HISTORY) {
		drop = h->text[0];
		memmove(h->text, h->text + 1, (EDITOR_HISTORY - 1) *
		    sizeof h->text[0]);
		h->text[EDITOR_HISTORY - 1] = drop;
		h->n--;
	}
	buf_clear(&h->text[h->n]);
	buf_add(&h->text[h->n], p, n);
	h->n++;
}

/* ---- reading and writing ---- */

/* read_text: NULL when the file is read into b, else the message. */
static char *
read_text(struct target *t, struct buf *b)
{
	int fd;

	if (t->st.st_size > (off_t)EDITOR_MAX_FILE)
		return xasprintf("File validation failed for %s: File is too "
		    "large (%.1fMB). Maximum allowed size is %uMB.", t->abs,
		    (double)t->st.st_size / 1024 / 1024,
		    EDITOR_MAX_FILE >> 20);
	if ((fd = ed_open_final(t, O_RDONLY)) < 0)
		return xasprintf("Ran into %s while trying to read %s",
		    strerror(errno), t->abs);
	if (read_fd(fd, t->abs, EDITOR_MAX_FILE, b) < 0) {
		close(fd);
		return xasprintf("Ran into an error while trying to read %s: "
		    "%s", t->abs, hw_err_msg());
	}
	close(fd);
	if (memchr(b->p, 0, b->len) || !valid_utf8(b->p, b->len))
		return xasprintf("File validation failed for %s: File appears "
		    "to be binary and this file type cannot be read or edited "
		    "by this tool.", t->abs);
	return NULL;
}

/*
 * write_text writes p to the target through a synced temporary file in
 * its directory: renamed over it, keeping its mode (replace), or linked
 * into place, never replacing anything (create).  NULL or the message.
 */
static char *
write_text(struct target *t, const char *p, size_t n, int replace)
{
	char hex[13], tmp[32];
	struct stat st;
	int fd, rc, e;

	if (random_hex(hex, 6) < 0)
		return xasprintf("Ran into %s while trying to write to %s",
		    hw_err_msg(), t->abs);
	snprintf(tmp, sizeof tmp, ".hw-edit-%s", hex);
	fd = openat(t->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, replace ? 0600 : 0666);
	if (fd < 0)
		return xasprintf("Ran into %s while trying to write to %s",
		    strerror(errno), t->abs);
	rc = write_all(fd, p, n, t->abs);
	if (rc == 0 && replace)
		rc = fchmod(fd, t->st.st_mode & 07777);
	if (rc == 0)
		rc = fsync(fd);
	e = errno;
	close(fd);
	if (rc == 0 && replace && (fstatat(t->dirfd, t->base, &st,
	    AT_SYMLINK_NOFOLLOW) < 0 || st.st_ino != t->st.st_ino ||
	    st.st_dev != t->st.st_dev))
		rc = -1, e = ESTALE;
	if (rc == 0) {
		rc = replace ? renameat(t->dirfd, tmp, t->dirfd, t->base) :
		    linkat(t->dirfd, tmp, t->dirfd, t->base, 0);
		e = errno;
	}
	if (rc < 0 || !replace)
		unlinkat(t->dirfd, tmp, 0);
	if (rc < 0)
		return e == EEXIST ? xasprintf("Invalid `path` parameter: %s. "
		    "File already exists at: %s. Cannot overwrite files using "
		    "command `create`.", t->abs, t->abs) :
		    xasprintf("Ran into %s while trying to write to %s",
		    strerror(e), t->abs);
	fsync(t->dirfd);
	return NULL;
}

/* ---- arguments ---- */

struct eargs {
	const char *cmd;
	const struct jval *path, *file_text, *old_str, *new_str;
	const struct jval *insert_line, *view_range;
};

static const struct jval *
opt(const struct jval *args, const char *key)
{
	const struct jval *v = json_get(args, key);

	return v && v->t == J_NULL ? NULL : v;
}

/* need: NULL when key is there and a string, else the message */
static char *
need_str(const struct eargs *a, const struct jval *v, const char *key)
{
	if (!v)
		return xasprintf("Parameter `%s` is required for command: %s.",
		    key, a->cmd);
	if (v->t != J_STRING)
		return xasprintf("Invalid `%s` parameter: it must be a "
		    "string.", key);
	return NULL;
}

/* text_ok: NULL when v can be written to a text file */
static char *
text_ok(const struct jval *v, const char *key)
{
	if (memchr(v->u.s, 0, v->n) || !valid_utf8(v->u.s, v->n))
		return xasprintf("Invalid `%s` parameter: it contains a NUL "
		    "character or a lone surrogate; this tool only writes "
		    "text.", key);
	return NULL;
}

static void
json_list(struct buf *b, const struct jval *v)
{
	size_t i;

	if (v->t != J_ARRAY) {
		json_canon(b, v);
		return;
	}
	buf_addc(b, '[');
	for (i = 0; i < v->n; i++) {
		if (i)
			buf_adds(b, ", ");
		json_canon(b, v->u.a[i]);
	}
	buf_addc(b, ']');
}

/* ---- commands ---- */

static char *
view_dir_entries(struct target *t, int fd, const char *prefix,
    struct buf *out, int depth, int *hidden)
{
	struct dirent *d;
	struct stat st;
	char **names = NULL;
	size_t n = 0, i;
	DIR *dir = fdopendir(fd);

	if (!dir) {
		close(fd);
		return xasprintf("Ran into %s while trying to list %s",
		    strerror(errno), t->abs);
	}
	while ((d = readdir(dir))) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (d->d_name[0] == '.') {
			*hidden += depth == 0;
			continue;
		}
		names = xrealloc(names, (n + 1) * sizeof *names);
		names[n++] = xstrdup(d->d_name);
	}
	qsort(names, n, sizeof *names, ed_strcmp_ptr);
	for (i = 0; i < n; i++) {
		int isdir = fstatat(dirfd(dir), names[i], &st,
		    AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
		char *sub = xasprintf("%s/%s", prefix, names[i]);

		buf_printf(out, "\n%s%s", sub, isdir ? "/" : "");
		if (isdir && depth == 0) {
			int cfd = openat(dirfd(dir), names[i], O_RDONLY |
			    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int ignore = 0;

			if (cfd >= 0)
				free(view_dir_entries(t, cfd, sub, out, 1,
				    &ignore));
		}
		free(sub);
		free(names[i]);
	}
	free(names);
	closedir(dir);
	return NULL;
}

static char *
view_dir(struct target *t, const struct eargs *a, struct tool_result *out)
{
	struct buf list;
	char *err;
	int fd, hidden = 0;

	if (a->view_range)
		return xstrdup("Invalid `view_range` parameter: The "
		    "`view_range` parameter is not allowed when `path` points "
		    "to a directory.");
	if ((fd = strcmp(t->base, ".") == 0 ? dup(t->dirfd) :
	    ed_open_final(t, O_RDONLY | O_DIRECTORY)) < 0)
		return xasprintf("Ran into %s while trying to list %s",
		    strerror(errno), t->abs);
	buf_init(&list);
	buf_printf(&list, "Here's the files and directories up to 2 levels "
	    "deep in %s, excluding hidden items:\n%s/", t->abs, t->abs);
	if ((err = view_dir_entries(t, fd, t->abs, &list, 0, &hidden))) {
		buf_release(&list);
		return err;
	}
	if (hidden)
		buf_printf(&list, "\n\n%d hidden files/directories in this "
		    "directory are excluded. You can use 'ls -la %s' to see "
		    "them.", hidden, t->abs);
	ed_clip(&out->output, list.p, list.len, ed_dir_clipped);
	buf_release(&list);
	return NULL;
}

static char *
view_range(struct target *t, const struct eargs *a, const struct buf *text,
    struct tool_result *out)
{
	const struct jval *vr = a->view_range;
	size_t nl = ed_num_lines(text->p, text->len), len;
	int64_t s = 0, e = 0;	/* set below; the compiler cannot tell */
	const char *p;
	struct buf v;
	char *msg = NULL, *warn = NULL;

	if (vr->t != J_ARRAY || vr->n != 2 || vr->u.a[0]->t != J_INT ||
	    vr->u.a[1]->t != J_INT || vr->u.a[0]->n > 18 ||
	    vr->u.a[1]->n > 18)
		msg = xstrdup("It should be a list of two integers.");
	else {
		s = strtoll(vr->u.a[0]->u.s, NULL, 10);
		e = strtoll(vr->u.a[1]->u.s, NULL, 10);
		if (s < 1 || (size_t)s > nl)
			msg = xasprintf("Its first element `%lld` should be "
			    "within the range of lines of the file: [1, %zu].",
			    (long long)s, nl);
		else if (e == -1)
			e = (int64_t)nl;
		else if (e > (int64_t)nl) {
			warn = xasprintf("NOTE: We only show up to %zu since "
			    "there're only %zu lines in this file.\n", nl, nl);
			e = (int64_t)nl;
		}
		if (!msg && e < s)
			msg = xasprintf("Its second element `%lld` should be "
			    "greater than or equal to the first element "
			    "`%lld`.", (long long)e, (long long)s);
	}
	if (msg) {
		buf_init(&v);
		json_list(&v, vr);
		buf_cstr(&v);
		free(warn);
		warn = xasprintf("Invalid `view_range` parameter: %s. %s",
		    v.p, msg);
		buf_release(&v);
		free(msg);
		return warn;
	}
	if (warn)
		buf_adds(&out->output, warn);
	free(warn);
	ed_lines(text->p, text->len, (size_t)s, (size_t)e, &p, &len);
	ed_make_output(&out->output, p, len, t->abs, (size_t)s);
	return NULL;
}

static char *
cmd_view(struct editor *e, struct target *t, const struct eargs *a,
    struct tool_result *out)
{
	struct buf text;
	char *err;

	(void)e;
	if (S_ISDIR(t->st.st_mode))
		return view_dir(t, a, out);
	buf_init(&text);
	if (!(err = read_text(t, &text))) {
		if (a->view_range)
			err = view_range(t, a, &text, out);
		else
			ed_make_output(&out->output, text.p, text.len, t->abs, 1);
	}
	buf_release(&text);
	return err;
}

static char *
cmd_create(struct editor *e, struct target *t, const struct eargs *a,
    struct tool_result *out)
{
	char *err;

	(void)e;
	if ((err = need_str(a, a->file_text, "file_text")) ||
	    (err = text_ok(a->file_text, "file_text")))
		return err;
	if (a->file_text->n > EDITOR_MAX_FILE)
		return xasprintf("Invalid `file_text` parameter: files are "
		    "limited to %uMB.", EDITOR_MAX_FILE >> 20);
	if ((err = write_text(t, a->file_text->u.s, a->file_text->n, 0)))
		return err;
	buf_printf(&out->output, "File created successfully at: %s", t->abs);
	return NULL;
}

/* edited: write the new text, keep the old in history, show a snippet */
static char *
edited(struct editor *e, struct target *t, const struct buf *old,
    const struct buf *new, size_t from, size_t to, const char *desc,
    const char *advice, struct tool_result *out)
{
	const char *p;
	size_t len;
	char *err;

	if (new->len > EDITOR_MAX_FILE)
		return xasprintf("No change was made: %s would grow past the "
		    "%uMB limit.", t->abs, EDITOR_MAX_FILE >> 20);
	if ((err = write_text(t, new->p, new->len, 1)))
		return err;
	hist_push(e, t->abs, old->p, old->len);
	buf_printf(&out->output, "The file %s has been edited. ", t->abs);
	ed_lines(new->p, new->len, from, to, &p, &len);
	ed_make_output(&out->output, p, len, desc, from);
	buf_adds(&out->output, advice);
	return NULL;
}

/* occurrences: where needle occurs in s (non-overlapping), at most max */
static size_t
occurrences(const char *s, size_t n, const char *needle, size_t nn,
    size_t *at, size_t max)
{
	size_t i = 0, c = 0;
	const char *p;

	while (i + nn <= n && (p = memmem(s + i, n - i, needle, nn))) {
		if (c < max)
			at[c] = (size_t)(p - s);
		c++;
		i = (size_t)(p - s) + nn;
	}
	return c;
}

static char *
multiple(const struct buf *text, const char *old, size_t on)
{
	struct buf b;
	size_t i = 0, line, last = 0, first = 1;
	const char *p;
	char *msg;

	buf_init(&b);
	buf_addc(&b, '[');
	while (i + on <= text->len &&
	    (p = memmem(text->p + i, text->len - i, old, on))) {
		line = ed_count_char(text->p, (size_t)(p - text->p), '\n') + 1;
		if (first || line != last)
			buf_printf(&b, "%s%zu", first ? "" : ", ", line);
		first = 0;
		last = line;
		i = (size_t)(p - text->p) + on;
	}
	buf_addc(&b, ']');
	buf_cstr(&b);
	msg = xasprintf("No replacement was performed. Multiple occurrences of "
	    "old_str `%.*s` in lines %s. Please ensure it is unique.",
	    (int)on, old, b.p);
	buf_release(&b);
	return msg;
}

static void
trim(const char **s, size_t *n)
{
	while (*n && strchr(" \t\n\r\v\f", (*s)[0]))
		(*s)++, (*n)--;
	while (*n && strchr(" \t\n\r\v\f", (*s)[*n - 1]))
		(*n)--;
}

static char *
replace(struct editor *e, struct target *t, const struct eargs *a,
    const struct buf *text, struct tool_result *out)
{
	const char *old = a->old_str->u.s, *new = a->new_str ?
	    a->new_str->u.s : "";
	size_t on = a->old_str->n, nn = a->new_str ? a->new_str->n : 0;
	size_t at, count, line, from, to;
	struct buf b;
	char *err, *desc;

	count = on ? occurrences(text->p, text->len, old, on, &at, 1) : 0;
	if (!count) {
		trim(&old, &on);
		count = on ? occurrences(text->p, text->len, old, on, &at, 1) :
		    0;
	}
	if (!count)
		return xasprintf("No replacement was performed, old_str `%.*s` "
		    "did not appear verbatim in %s.", (int)on, old, t->abs);
	if (count > 1)
		return multiple(text, old, on);
	buf_init(&b);
	buf_add(&b, text->p, at);
	buf_add(&b, new, nn);
	buf_add(&b, text->p + at + on, text->len - at - on);
	line = ed_count_char(text->p, at, '\n') + 1;
	from = line > CONTEXT ? line - CONTEXT : 1;
	to = line + CONTEXT + ed_count_char(new, nn, '\n');
	desc = xasprintf("a snippet of %s", t->abs);
	err = edited(e, t, text, &b, from, to, desc, "Review the changes "
	    "and make sure they are as expected. Edit the file again if "
	    "necessary.", out);
	free(desc);
	buf_release(&b);
	return err;
}

static char *
cmd_str_replace(struct editor *e, struct target *t, const struct eargs *a,
    struct tool_result *out)
{
	struct buf text;
	char *err;

	if ((err = need_str(a, a->old_str, "old_str")))
		return err;
	if (a->new_str && (err = need_str(a, a->new_str, "new_str")))
		return err;
	if (a->new_str && (err = text_ok(a->new_str, "new_str")))
		return err;
	if (!a->old_str->n)
		return xstrdup("Invalid `old_str` parameter: it must not be "
		    "empty.");
	if (a->new_str && a->new_str->n == a->old_str->n &&
	    memcmp(a->new_str->u.s, a->old_str->u.s, a->old_str->n) == 0)
		return xasprintf("Invalid `new_str` parameter: %s. No "
		    "replacement was performed. `new_str` and `old_str` must "
		    "be different.", a->new_str->u.s);
	buf_init(&text);
	if (!(err = read_text(t, &text)))
		err = replace(e, t, a, &text, out);
	buf_release(&text);
	return err;
}

static char *
insert(struct editor *e, struct target *t, const struct eargs *a,
    const struct buf *text, struct tool_result *out)
{
	size_t nl = ed_num_lines(text->p, text->len), at, il, added, to;
	const char *s = a->new_str->u.s, *end = s + a->new_str->n, *p;
	int64_t v;
	struct buf b;
	char *err;

	if (a->insert_line->n > 18)
		v = -1;
	else
		v = strtoll(a->insert_line->u.s, NULL, 10);
	if (v < 0 || (uint64_t)v > nl)
		return xasprintf("Invalid `insert_line` parameter: %s. It "
		    "should be within the range of allowed values: [0, %zu]",
		    a->insert_line->u.s, nl);
	il = (size_t)v;
	at = ed_line_at(text->p, text->len, il + 1);
	buf_init(&b);
	buf_add(&b, text->p, at);
	if (at == text->len && at && text->p[at - 1] != '\n')
		buf_addc(&b, '\n');
	for (added = 1, p = s; (p = memchr(p, '\n', (size_t)(end - p))); p++)
		added++;
	buf_add(&b, s, a->new_str->n);
	buf_addc(&b, '\n');
	buf_add(&b, text->p + at, text->len - at);
	to = il + CONTEXT + added;
	if (to > nl + added)
		to = nl + added;
	err = edited(e, t, text, &b, il > CONTEXT ? il - CONTEXT + 1 : 1, to,
	    "a snippet of the edited file", "Review the changes and make sure "
	    "they are as expected (correct indentation, no duplicate lines, "
	    "etc). Edit the file again if necessary.", out);
	buf_release(&b);
	return err;
}

static char *
cmd_insert(struct editor *e, struct target *t, const struct eargs *a,
    struct tool_result *out)
{
	struct buf text;
	char *err;

	if (!a->insert_line)
		return xstrdup("Parameter `insert_line` is required for "
		    "command: insert.");
	if (a->insert_line->t != J_INT)
		return xstrdup("Invalid `insert_line` parameter: it must be an "
		    "integer.");
	if ((err = need_str(a, a->new_str, "new_str")) ||
	    (err = text_ok(a->new_str, "new_str")))
		return err;
	buf_init(&text);
	if (!(err = read_text(t, &text)))
		err = insert(e, t, a, &text, out);
	buf_release(&text);
	return err;
}

static char *
cmd_undo(struct editor *e, struct target *t, const struct eargs *a,
    struct tool_result *out)
{
	struct hist *h = hist_find(e, t->abs, 0);
	struct buf text, *old;
	char *err;

	(void)a;
	buf_init(&text);
	if ((err = read_text(t, &text))) {
		buf_release(&text);
		return err;
	}
	buf_release(&text);
	if (!h || !h->n)
		return xasprintf("No edit history found for %s.", t->abs);
	old = &h->text[h->n - 1];
	if ((err = write_text(t, old->p, old->len, 1)))
		return err;
	h->n--;
	buf_printf(&out->output, "Last edit to %s undone successfully. ",
	    t->abs);
	ed_make_output(&out->output, old->p, old->len, t->abs, 1);
	buf_clear(old);
	return NULL;
}

/* ---- the tool ---- */

typedef char *(*cmd_fn)(struct editor *, struct target *,
    const struct eargs *, struct tool_result *);

static const struct {
	const char *name;
	cmd_fn fn;
} commands[] = {
	{ "view", cmd_view },
	{ "create", cmd_create },
	{ "str_replace", cmd_str_replace },
	{ "insert", cmd_insert },
	{ "undo_edit", cmd_undo },
};

/* summary_path appends rel without control characters, at most 200 bytes */
static void
summary_path(struct buf *b, const char *rel)
{
	size_t i, n = strlen(rel);

	if (n > 200) {
		n = 200;
		while (n && ((unsigned char)rel[n] & 0xc0) == 0x80)
			n--;
	}
	buf_addc(b, ' ');
	for (i = 0; i < n; i++)
		buf_addc(b, (unsigned char)rel[i] < 0x20 || rel[i] == 0x7f ?
		    '?' : rel[i]);
	if (n < strlen(rel))
		buf_adds(b, "...");
}

/* check_target applies the rules every command shares (§5.3) */
static char *
check_target(const struct target *t, const char *cmd)
{
	int is_create = strcmp(cmd, "create") == 0;

	if (is_create && t->exists)
		return xasprintf("Invalid `path` parameter: %s. File already "
		    "exists at: %s. Cannot overwrite files using command "
		    "`create`.", t->abs, t->abs);
	if (is_create)
		return NULL;
	if (!t->exists || S_ISLNK(t->st.st_mode))
		return xasprintf("Invalid `path` parameter: %s. The path %s "
		    "does not exist. Please provide a valid path.", t->abs,
		    t->abs);
	if (S_ISDIR(t->st.st_mode) && strcmp(cmd, "view") != 0)
		return xasprintf("Invalid `path` parameter: %s. The path %s is "
		    "a directory and only the `view` command can be used on "
		    "directories.", t->abs, t->abs);
	if (!S_ISDIR(t->st.st_mode) && !S_ISREG(t->st.st_mode))
		return xasprintf("Invalid `path` parameter: %s. It is not a "
		    "regular file or a directory.", t->abs);
	return NULL;
}

/* find_command: the index of args' command, or -1 after an error */
static int
find_command(const struct jval *args, struct tool_result *out)
{
	const struct jval *c = opt(args, "command");
	size_t i, k = sizeof commands / sizeof commands[0];

	for (i = 0; c && c->t == J_STRING && i < k; i++)
		if (strcmp(c->u.s, commands[i].name) == 0)
			return (int)i;
	buf_adds(&out->summary, " invalid command");
	if (!c)
		tool_error(out, "Parameter `command` is required for "
		    "file_editor.");
	else
		tool_error(out, "Unrecognized command %s. The allowed commands "
		    "for the file_editor tool are: view, create, str_replace, "
		    "insert, undo_edit",
		    c->t == J_STRING ? c->u.s : "(not a string)");
	return -1;
}

int
editor_run(struct editor *e, const struct jval *args,
    struct tool_result *out)
{
	struct eargs a;
	struct target t;
	char *err = NULL;
	int i;

	buf_adds(&out->summary, "file_editor");
	if ((i = find_command(args, out)) < 0)
		return 0;
	memset(&a, 0, sizeof a);
	a.cmd = commands[i].name;
	a.path = opt(args, "path");
	a.file_text = opt(args, "file_text");
	a.old_str = opt(args, "old_str");
	a.new_str = opt(args, "new_str");
	a.insert_line = opt(args, "insert_line");
	a.view_range = opt(args, "view_range");
	buf_printf(&out->summary, " %s", a.cmd);
	memset(&t, 0, sizeof t);
	t.dirfd = -1;
	if ((err = need_str(&a, a.path, "path")) ||
	    (err = ed_resolve(&e->w, a.path->u.s, a.path->n, a.cmd, &t))) {
		if (t.rel && !t.outside && !ed_has_heartwood(t.rel))
			summary_path(&out->summary, t.rel);
		else if (t.rel)
			buf_adds(&out->summary, " (inside .heartwood)");
		else if (t.abs)
			buf_adds(&out->summary, " (outside the project)");
		else
			buf_adds(&out->summary, " (no such path)");
	} else {
		summary_path(&out->summary, t.outside ? t.abs : t.rel);
		if (!(err = check_target(&t, a.cmd)))
			err = commands[i].fn(e, &t, &a, out);
	}
	ed_target_release(&t);
	if (err) {
		buf_adds(&out->summary, " (error)");
		tool_error(out, "%s", err);
		free(err);
	}
	return 0;
}
