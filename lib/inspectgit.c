/* inspectgit.c - what changed in the workspace: git, or the session's edits */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "hw.h"

extern char **environ;

struct change {
	char *path;
	const char *status;	/* added, modified or deleted */
	struct jval *ids;	/* action ids, session changes only */
};

struct changes {
	struct arena a;
	struct change *v;
	size_t n, cap;
	const char *status;	/* the list's status */
	const char *source;	/* git, session-actions or unavailable */
	const char *message;
	int git, truncated, unsupported, inited;
	git_repository *repo;
	git_oid base;
	int has_base;		/* 0: the empty tree (HEAD is unborn) */
	char *prefix;		/* the project's path in the work tree */
};

static void
changes_add(struct changes *c, const char *path, size_t n, const char *st)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 64;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = (struct change){ arena_strndup(&c->a, path, n), st,
	    json_new(&c->a, J_ARRAY) };
}

static int
cmp_change(const void *x, const void *y)
{
	return strcmp(((const struct change *)x)->path,
	    ((const struct change *)y)->path);
}

/* path_valid: a valid project-relative file path with no reserved part */
static int
path_valid(const char *path)
{
	const char *s, *e;

	if (!*path || !strcmp(path, ".") || inspect_path_ok(path) < 0)
		return 0;
	for (s = path; *s; s = e + !!*e) {
		e = s + strcspn(s, "/");
		if (inspect_reserved(s, (size_t)(e - s)))
			return 0;
	}
	return 1;
}

/* path_fit: a valid, unreserved path to nothing or to a regular file */
static int
path_fit(int root, const char *path)
{
	return path_valid(path) && inspect_regular(root, path) >= 0;
}

/* git_env keeps the caller's GIT_* variables away from libgit2 */
static void
git_env(void)
{
	char **e, *name;

	for (e = environ; *e;) {
		if (strncmp(*e, "GIT_", 4)) {
			e++;
			continue;
		}
		name = strndup(*e, strcspn(*e, "="));
		if (!name || unsetenv(name) < 0) {
			free(name);
			e++;
			continue;
		}
		free(name);
	}
	setenv("GIT_OPTIONAL_LOCKS", "0", 1);
	setenv("GIT_TERMINAL_PROMPT", "0", 1);
}

static void
git_fail(struct changes *c)
{
	const git_error *e = git_error_last();

	c->status = c->source = "unavailable";
	c->message = arena_strndup(&c->a, e && e->message ? e->message :
	    "git failed", e && e->message ? strlen(e->message) : 10);
}

/* peel_commit: the commit ref points at, into out */
static int
peel_commit(git_reference *ref, git_oid *out)
{
	git_object *o;

	if (git_reference_peel(&o, ref, GIT_OBJECT_COMMIT) < 0)
		return -1;
	git_oid_cpy(out, git_object_id(o));
	git_object_free(o);
	return 0;
}

/*
 * find_base: the upstream of the current branch, else the merge-base of
 * HEAD with the default branch (origin/HEAD), else HEAD; no base (the
 * empty tree) when HEAD is unborn.
 */
static int
find_base(struct changes *c)
{
	git_reference *head = NULL, *up = NULL, *def = NULL;
	git_oid hid, did;
	int r;

	if ((r = git_repository_head_unborn(c->repo)) != 0)
		return r < 0 ? -1 : 0;
	if (git_repository_head(&head, c->repo) < 0 || peel_commit(head,
	    &hid) < 0) {
		git_reference_free(head);
		return -1;
	}
	c->has_base = 1;
	if (git_reference_is_branch(head) && git_branch_upstream(&up,
	    head) == 0 && peel_commit(up, &c->base) == 0)
		goto out;
	if (git_reference_lookup(&def, c->repo,
	    "refs/remotes/origin/HEAD") == 0 && peel_commit(def, &did) == 0 &&
	    git_merge_base(&c->base, c->repo, &hid, &did) == 0)
		goto out;
	git_oid_cpy(&c->base, &hid);
out:
	git_error_clear();
	git_reference_free(def);
	git_reference_free(up);
	git_reference_free(head);
	return 0;
}

/* open_repo: 1 with c->repo and c->prefix set, 0 if not in a work tree */
static int
open_repo(struct changes *c)
{
	char cwd[PATH_MAX];
	const char *wd;
	size_t n;
	int r;

	git_env();
	c->inited = git_libgit2_init() > 0;
	r = git_repository_open_ext(&c->repo, ".", 0, NULL);
	if (r == GIT_ENOTFOUND)
		return 0;
	if (r < 0)
		return -1;
	if (!(wd = git_repository_workdir(c->repo)) || !getcwd(cwd,
	    sizeof cwd - 1))
		return 0;
	strcat(cwd, "/");
	n = strlen(wd);
	if (strncmp(cwd, wd, n))
		return 0;
	c->prefix = xstrdup(cwd + n);
	return 1;
}

static void
git_delta_add(struct changes *c, int root, const git_diff_delta *d)
{
	const char *path, *st;
	size_t pn = strlen(c->prefix);

	switch (d->status) {
	case GIT_DELTA_ADDED:
	case GIT_DELTA_UNTRACKED:
		st = "added", path = d->new_file.path;
		break;
	case GIT_DELTA_DELETED:
		st = "deleted", path = d->old_file.path;
		break;
	case GIT_DELTA_UNMODIFIED:
	case GIT_DELTA_IGNORED:
		return;
	default:
		st = "modified", path = d->new_file.path;
	}
	if (strncmp(path, c->prefix, pn))
		return;
	path += pn;
	if (!path_fit(root, path)) {
		c->unsupported = 1;
		return;
	}
	changes_add(c, path, strlen(path), st);
}

/*
 * Diffing a large work tree is mostly lstat and readdir, one path after
 * another, where git status spreads its lstat calls over threads.  So a
 * large tree is split in two at a top-level name near the middle of the
 * index, and each half is diffed on a thread of its own, with its own
 * repository handle (libgit2 objects are not shared between threads).
 * Literal pathspecs, where a directory stands for everything below it,
 * keep each half's iterators inside it; the lists are joined and sorted.
 */
#define SPLIT_MIN 4096		/* index entries worth a second thread */

struct half {
	const char *workdir;
	const git_oid *base;	/* NULL: the empty tree */
	git_strarray spec;
	int literal;
	git_repository *repo;
	git_diff *diff;
	int rc;
	/* the second half's thread: set up while the tree is being split */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int go;			/* 1: diff spec, -1: the split failed, stop */
};

static void half_run(struct half *h);

/*
 * half_thread opens its own handle and loads the index while the first
 * thread splits the tree, then waits for its half.
 */
static void *
half_thread(void *arg)
{
	struct half *h = arg;
	git_index *idx;
	int go;

	if (git_repository_open(&h->repo, h->workdir) == 0 &&
	    git_repository_index(&idx, h->repo) == 0)
		git_index_free(idx);	/* the handle keeps it loaded */
	pthread_mutex_lock(&h->mu);
	while (!h->go)
		pthread_cond_wait(&h->cv, &h->mu);
	go = h->go;
	pthread_mutex_unlock(&h->mu);
	h->rc = -1;
	if (go > 0 && h->repo)
		half_run(h);
	return NULL;
}

static void
half_go(struct half *h, int go)
{
	pthread_mutex_lock(&h->mu);
	h->go = go;
	pthread_cond_signal(&h->cv);
	pthread_mutex_unlock(&h->mu);
}

static void
half_run(struct half *h)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;
	git_commit *commit = NULL;
	git_tree *tree = NULL;

	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	    GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SKIP_BINARY_CHECK;
	if (h->literal)
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	o.pathspec = h->spec;
	h->rc = -1;
	if (h->base && (git_commit_lookup(&commit, h->repo, h->base) < 0 ||
	    git_commit_tree(&tree, commit) < 0))
		goto out;
	if (git_diff_tree_to_workdir_with_index(&h->diff, h->repo, tree,
	    &o) == 0)
		h->rc = 0;
out:
	git_tree_free(tree);
	git_commit_free(commit);
}

struct name {
	char *s;
	size_t w;		/* index entries under it */
};

struct names {
	struct name *v;
	char **spec;		/* prefix + each name, in order */
	size_t n, cap;
};

static int
cmp_name(const void *x, const void *y)
{
	return strcmp(((const struct name *)x)->s, ((const struct name *)y)->s);
}

/* names_add adds a name of n bytes weighing w (runs of one name merge) */
static void
names_add(struct names *t, const char *s, size_t n, size_t w)
{
	struct name *last = t->n ? &t->v[t->n - 1] : NULL;

	if (last && strlen(last->s) == n && !memcmp(last->s, s, n)) {
		last->w += w;
		return;
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->v = xrealloc(t->v, t->cap * sizeof *t->v);
	}
	t->v[t->n++] = (struct name){ xasprintf("%.*s", (int)n, s), w };
}

static void
names_release(struct names *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->v[i].s);
		if (t->spec)
			free(t->spec[i]);
	}
	free(t->v);
	free(t->spec);
}

/*
 * base_names adds the names the base tree has in the project, which a
 * change may name when the index and the disk no longer do.
 */
static void
base_names(struct changes *c, struct names *t)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL, *sub = NULL;
	git_tree_entry *te = NULL;
	const git_tree *at = NULL;
	char *dir = xstrdup(c->prefix);
	const char *p;
	size_t i, n = strlen(dir);

	if (n)
		dir[n - 1] = '\0';	/* the prefix ends in '/' */
	if (c->has_base && git_commit_lookup(&commit, c->repo, &c->base) == 0 &&
	    git_commit_tree(&tree, commit) == 0)
		at = !n ? tree : git_tree_entry_bypath(&te, tree, dir) == 0 &&
		    git_tree_lookup(&sub, c->repo, git_tree_entry_id(te)) == 0 ?
		    sub : NULL;
	for (i = 0; at && i < git_tree_entrycount(at); i++) {
		p = git_tree_entry_name(git_tree_entry_byindex(at, i));
		names_add(t, p, strlen(p), 0);
	}
	git_error_clear();
	git_tree_free(sub);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(commit);
	free(dir);
}

/*
 * split_tree fills a and b with the literal pathspecs of two halves of
 * the project (prefix + each top-level name, from the index, the base and
 * the directory), balanced by index entries; 0 when the tree is too small or
 * will not split.
 */
static int
split_tree(struct changes *c, struct names *t, git_strarray *a,
    git_strarray *b)
{
	size_t pn = strlen(c->prefix), i, j, k, total = 0, acc = 0;
	const git_index_entry *e;
	git_index *idx = NULL;
	struct dirent *d;
	const char *p, *sl;
	DIR *dir;
	char *dp;

	if (git_repository_index(&idx, c->repo) < 0)
		return 0;
	for (i = 0; (e = git_index_get_byindex(idx, i)); i++) {
		if (strncmp(e->path, c->prefix, pn))
			continue;
		p = e->path + pn;
		sl = strchr(p, '/');
		names_add(t, p, sl ? (size_t)(sl - p) : strlen(p), 1);
		total++;
	}
	git_index_free(idx);
	if (total < SPLIT_MIN)
		return 0;
	base_names(c, t);
	dp = xasprintf("%s%s", git_repository_workdir(c->repo), c->prefix);
	if ((dir = opendir(dp))) {
		while ((d = readdir(dir)))
			if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") &&
			    strcmp(d->d_name, ".git"))
				names_add(t, d->d_name, strlen(d->d_name), 0);
		closedir(dir);
	}
	free(dp);
	qsort(t->v, t->n, sizeof *t->v, cmp_name);
	for (i = j = 0; i < t->n; i++)
		if (j && !strcmp(t->v[j - 1].s, t->v[i].s)) {
			t->v[j - 1].w += t->v[i].w;
			free(t->v[i].s);
		} else
			t->v[j++] = t->v[i];
	t->n = j;
	for (k = 0; k + 1 < t->n && (acc += t->v[k].w) < total / 2; k++)
		;
	if (k + 1 >= t->n)
		return 0;
	t->spec = xcalloc(t->n, sizeof *t->spec);
	for (i = 0; i < t->n; i++)
		t->spec[i] = xasprintf("%s%s", c->prefix, t->v[i].s);
	a->strings = t->spec, a->count = k + 1;
	b->strings = t->spec + k + 1, b->count = t->n - k - 1;
	return 1;
}

static int
git_collect(struct changes *c, int root)
{
	struct names t = { 0 };
	struct half h[2] = { { 0 }, { 0 } };
	pthread_t th;
	char *spec = c->prefix;
	size_t i, k, nh = 1;
	int rc = -1, started = 0;

	if (find_base(c) < 0)
		return -1;
	for (k = 0; k < 2; k++) {
		h[k].workdir = git_repository_workdir(c->repo);
		h[k].base = c->has_base ? &c->base : NULL;
	}
	h[0].repo = c->repo;	/* the first half uses the open handle */
	pthread_mutex_init(&h[1].mu, NULL);
	pthread_cond_init(&h[1].cv, NULL);
	if (sysconf(_SC_NPROCESSORS_ONLN) >= 2)
		started = pthread_create(&th, NULL, half_thread, &h[1]) == 0;
	if (started && split_tree(c, &t, &h[0].spec, &h[1].spec)) {
		h[0].literal = h[1].literal = 1;
		nh = 2;
	} else if (*spec) {
		h[0].spec.strings = &spec;
		h[0].spec.count = 1;
	}
	if (started)
		half_go(&h[1], nh == 2 ? 1 : -1);
	half_run(&h[0]);
	if (started)
		pthread_join(th, NULL);
	for (k = 0; k < nh; k++)
		if (h[k].rc < 0)
			goto out;
	for (k = 0; k < nh; k++)
		for (i = 0; i < git_diff_num_deltas(h[k].diff); i++)
			git_delta_add(c, root, git_diff_get_delta(h[k].diff, i));
	rc = 0;
out:
	for (k = 0; k < nh; k++)
		git_diff_free(h[k].diff);
	git_repository_free(h[1].repo);
	pthread_cond_destroy(&h[1].cv);
	pthread_mutex_destroy(&h[1].mu);
	names_release(&t);
	return rc;
}

/* ---- the non-git fallback: the session's typed file edits ---- */

static const char *
action_path(const struct jval *act, const char *cwd, size_t *n)
{
	const struct jval *ap = json_get(act, "affectedPaths");
	const struct jval *d = json_get(act, "details"), *p = NULL;
	size_t cn = strlen(cwd);

	if (ap && ap->t == J_ARRAY && ap->n > 0)
		p = json_get(ap->u.a[0], "path");
	if (!p || p->t != J_STRING)
		p = json_get(d, "path");
	if (!p || p->t != J_STRING)
		return NULL;
	*n = p->n;
	if (p->n > cn && !strncmp(p->u.s, cwd, cn) && p->u.s[cn] == '/') {
		*n = p->n - cn - 1;
		return p->u.s + cn + 1;
	}
	return p->u.s;
}

static struct change *
find_change(struct changes *c, const char *path, size_t n)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (strlen(c->v[i].path) == n && !memcmp(c->v[i].path, path, n))
			return &c->v[i];
	return NULL;
}

/* session_edit folds one succeeded file-editor action into the list */
static void
session_edit(struct changes *c, const struct jval *act, const char *cwd)
{
	const struct jval *d = json_get(act, "details");
	const char *op = json_get_str(d, "operation"), *path, *id;
	struct change *ch;
	size_t n;
	char *tmp;

	if (!op || !(path = action_path(act, cwd, &n)))
		return;
	tmp = strndup(path, n);
	if (!tmp || strlen(tmp) != n || !path_valid(tmp)) {
		free(tmp);
		return;
	}
	free(tmp);
	ch = find_change(c, path, n);
	if (!strcmp(op, "undo_edit")) {
		if (ch)
			*ch = c->v[--c->n];
		return;
	}
	if (strcmp(op, "create") && strcmp(op, "str_replace") &&
	    strcmp(op, "insert"))
		return;
	if (!ch) {
		changes_add(c, path, n, strcmp(op, "create") ? "modified" :
		    "added");
		ch = &c->v[c->n - 1];
	}
	if ((id = json_get_str(act, "actionId"))) {
		size_t i;

		for (i = 0; i < ch->ids->n; i++)
			if (json_is_str(ch->ids->u.a[i], id))
				break;
		if (i == ch->ids->n)
			json_push(&c->a, ch->ids, json_str(&c->a, id));
	}
}

static int
session_collect(struct changes *c, const char *sid)
{
	struct project p = { 0 };
	struct session s;
	struct buf b;
	struct jval *proj, *acts;
	char err[128], cwd[PATH_MAX];
	size_t i;
	int k, rc = -1;

	buf_init(&b);
	memset(&s, 0, sizeof s);
	if (!getcwd(cwd, sizeof cwd)) {
		hw_err_sys("cannot find the current directory");
		goto out;
	}
	if (session_init(&s, &p, sid) < 0)
		goto out;
	if (project_open(&p, 0) < 0) {
		rc = hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
		goto out;
	}
	if ((k = session_exists(&s)) < 0 || session_project(&s, k, -1, &b) < 0)
		goto out;
	if (!(proj = json_parse(&c->a, b.p, b.len, err, sizeof err))) {
		hw_err_set(HW_EXIT_DATA, "cannot parse the projection: %s", err);
		goto out;
	}
	acts = json_get(proj, "actions");
	for (i = 0; acts && acts->t == J_ARRAY && i < acts->n; i++) {
		const struct jval *x = acts->u.a[i];

		if (json_is_str(json_get(x, "state"), "succeeded") &&
		    json_is_str(json_get(json_get(x, "details"), "kind"),
		    "file-editor"))
			session_edit(c, x, cwd);
	}
	rc = 0;
out:
	session_release(&s);
	project_release(&p);
	buf_release(&b);
	return rc;
}

/* changes_load fills c; -1 only for a refused request or a bad session */
static int
changes_load(struct changes *c, int root, const char *sid)
{
	size_t i, j;
	int r;

	memset(c, 0, sizeof *c);
	arena_init(&c->a);
	if ((r = open_repo(c)) < 0) {
		git_fail(c);
		return 0;
	}
	if (r == 1) {
		c->git = 1;
		c->status = "available", c->source = "git";
		if (git_collect(c, root) < 0) {
			c->n = 0;
			git_fail(c);
			return 0;
		}
		if (c->unsupported)
			c->status = "unsupported";
	} else {
		c->status = "non-git", c->source = "session-actions";
		c->message = "not a git work tree: changes come from the "
		    "session's file-editor actions";
		if (session_collect(c, sid) < 0)
			return -1;
	}
	if (c->n)
		qsort(c->v, c->n, sizeof *c->v, cmp_change);
	for (i = j = 0; i < c->n; i++)
		if (!j || strcmp(c->v[j - 1].path, c->v[i].path))
			c->v[j++] = c->v[i];
	c->n = j;
	if (c->n > INSPECT_CHANGES) {
		c->n = INSPECT_CHANGES;
		c->truncated = 1;
		c->status = "truncated";
	}
	return 0;
}

static void
changes_release(struct changes *c)
{
	git_repository_free(c->repo);
	if (c->inited)
		git_libgit2_shutdown();
	free(c->v);
	free(c->prefix);
	arena_release(&c->a);
}

static struct jval *
cstr(struct arena *a, const char *s)
{
	return s ? json_str(a, s) : json_new(a, J_NULL);
}

int
inspect_changes(int root, const char *sid, struct buf *out)
{
	struct changes c;
	struct arena *a;
	struct jval *o, *list, *e;
	size_t i;

	if (changes_load(&c, root, sid) < 0) {
		changes_release(&c);
		return -1;
	}
	a = &c.a;
	list = json_new(a, J_ARRAY);
	for (i = 0; i < c.n; i++) {
		e = json_obj(a);
		json_add(a, e, "path", json_str(a, c.v[i].path));
		json_add(a, e, "status", json_str(a, c.v[i].status));
		json_add(a, e, "source", json_str(a, c.git ? "git" :
		    "session-action"));
		json_add(a, e, "action_ids", c.v[i].ids);
		json_push(a, list, e);
	}
	o = json_obj(a);
	json_add(a, o, "schema_version",
	    json_str(a, "heartwood.workspace-changes.v1"));
	json_add(a, o, "status", json_str(a, c.status));
	json_add(a, o, "source", json_str(a, c.source));
	json_add(a, o, "changes", list);
	json_add(a, o, "truncated", json_bool(a, c.truncated));
	json_add(a, o, "message", cstr(a, c.message));
	json_add(a, o, "limits", inspect_limits(a));
	json_canon(out, o);
	buf_addc(out, '\n');
	changes_release(&c);
	return 0;
}

/* ---- diff ---- */

struct dside {
	const char *status, *message;
	const char *text;
	size_t len;
};

/* git_original reads path's blob in the base tree into d */
static void
git_original(struct changes *c, const char *path, struct dside *d)
{
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_tree_entry *te = NULL;
	git_blob *blob = NULL;
	char *full = xasprintf("%s%s", c->prefix, path);
	struct ifile f = { 0 };
	size_t half = INSPECT_DIFF_BYTES / 2, n;

	d->status = "unavailable";
	d->message = "the base version cannot be read";
	if (git_commit_lookup(&commit, c->repo, &c->base) < 0 ||
	    git_commit_tree(&tree, commit) < 0 ||
	    git_tree_entry_bypath(&te, tree, full) < 0 ||
	    git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    git_blob_lookup(&blob, c->repo, git_tree_entry_id(te)) < 0)
		goto out;
	n = (size_t)git_blob_rawsize(blob);
	if (n > half) {
		d->status = "truncated";
		d->message = "the base version is over the diff bound";
		goto out;
	}
	inspect_text(&c->a, git_blob_rawcontent(blob), n, 0, half, &f);
	d->status = f.status, d->message = f.message;
	d->text = f.text, d->len = f.len;
out:
	free(full);
	git_blob_free(blob);
	git_tree_entry_free(te);
	git_tree_free(tree);
	git_commit_free(commit);
}

/* diff_sides decides the diff of change ch into orig and mod */
static const char *
diff_sides(struct changes *c, int root, const struct change *ch,
    struct dside *orig, struct dside *mod, const char **msg, int *cut)
{
	struct ifile f;

	if (!strcmp(ch->status, "deleted")) {
		*msg = "the file was deleted";
		return c->git ? "unsupported" : "non-git";
	}
	inspect_read(&c->a, root, ch->path, INSPECT_DIFF_BYTES / 2, &f);
	*msg = f.message;
	if (!c->git) {
		mod->text = f.text, mod->len = f.len;
		*cut = f.truncated;
		return "non-git";
	}
	if (strcmp(f.status, "available"))
		return f.status;	/* truncated: no baseline either */
	mod->text = f.text, mod->len = f.len;
	if (!strcmp(ch->status, "added") || !c->has_base) {
		orig->text = "", orig->len = 0;
		return "available";
	}
	git_original(c, ch->path, orig);
	*msg = orig->message;
	if (strcmp(orig->status, "available")) {
		orig->text = NULL;
		return orig->status;
	}
	if (!inspect_same(root, ch->path, &f)) {
		orig->text = mod->text = NULL;
		*msg = "the file changed while the diff was read";
		return "unavailable";
	}
	return "available";
}

int
inspect_diff(int root, const char *path, const char *sid, struct buf *out)
{
	struct changes c;
	struct dside orig = { 0 }, mod = { 0 };
	const char *st, *msg = NULL;
	struct change *ch;
	struct jval *o;
	struct arena *a;
	int cut = 0;

	if (!*path || inspect_path_ok(path) < 0 || !strcmp(path, "."))
		return hw_err_set(HW_EXIT_USAGE, "invalid path '%s': "
		    "HW-WORKSPACE-001 not a normalized project-relative file "
		    "path", path);
	if (changes_load(&c, root, sid) < 0) {
		changes_release(&c);
		return -1;
	}
	a = &c.a;
	if (!strcmp(c.source, "unavailable")) {
		st = "unavailable", msg = c.message;
	} else if (!(ch = find_change(&c, path, strlen(path)))) {
		st = "unavailable";
		msg = "the path is not among the current changes";
	} else
		st = diff_sides(&c, root, ch, &orig, &mod, &msg, &cut);
	o = json_obj(a);
	json_add(a, o, "schema_version",
	    json_str(a, "heartwood.workspace-diff.v1"));
	json_add(a, o, "path", json_str(a, path));
	json_add(a, o, "status", json_str(a, st));
	json_add(a, o, "source", json_str(a, !strcmp(c.source,
	    "unavailable") ? "unavailable" : c.git ? "git" : "session-action"));
	json_add(a, o, "original", inspect_strn(a, orig.text, orig.len));
	json_add(a, o, "modified", inspect_strn(a, mod.text, mod.len));
	json_add(a, o, "truncated", json_bool(a, cut || !strcmp(st,
	    "truncated")));
	json_add(a, o, "message", cstr(a, msg));
	json_add(a, o, "limits", inspect_limits(a));
	json_canon(out, o);
	buf_addc(out, '\n');
	changes_release(&c);
	return 0;
}
