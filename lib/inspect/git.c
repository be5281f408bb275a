/* git.c - what changed in the workspace: git, or the session's edits */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "inspect/inspect.h"
#include "inspect/changes.h"
#include "inspect/gitindex.h"

extern char **environ;

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

	if (!*path || !strcmp(path, ".") || path_ok(path) < 0)
		return 0;
	for (s = path; *s; s = e + !!*e) {
		e = s + strcspn(s, "/");
		if (path_reserved(s, (size_t)(e - s)))
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
	/* a deleted file may have become a directory: nothing is read there */
	if (!(strcmp(st, "deleted") ? path_fit(root, path) : path_valid(path))) {
		c->unsupported = 1;
		return;
	}
	changes_add(c, path, strlen(path), st);
}

/*
 * libgit2 compares the work tree with the index by an lstat of every
 * path, each walked from the root of the file system, one after another;
 * that is most of the time a large work tree takes.  So a stat pass of
 * our own goes first, on both cores: it walks the directories the index
 * names from the project's descriptor (openat with O_NOFOLLOW, fstatat of
 * one component, nothing opened but directories).  An entry whose stat
 * data and mode match the index's, and that is not racily clean, is
 * unchanged in the work tree.  Two cases are certain without libgit2, as
 * libgit2 itself decides them without reading the file: a regular file
 * of another size is modified, and a missing one is deleted.  Everything
 * else (a conflicted or flagged entry, another mode or type, the same
 * size with other times, a directory gone or replaced, a name on disk the
 * index does not know) is in doubt.  Meanwhile the base tree is diffed
 * against the index; a staged path is in doubt too.  libgit2 then decides
 * exactly the paths in doubt, as literal pathspecs; a path in none of the
 * lists matches the base and its stat data, which libgit2 reports as
 * unmodified.  Where the pass cannot help (a case-insensitive index, an
 * index that cannot be stat'ed, most of the tree in doubt) libgit2
 * diffs the whole project.
 */
#define PASS_MIN 256		/* index entries worth a second thread */
#define PASS_QUEUE 256		/* directories waiting, open, at most */

struct task {			/* a directory to check, open */
	int fd;
	const char *dir;	/* project-relative */
	size_t lo, hi;		/* the entries below it */
};

struct spass {
	struct gindex_entry *e;	/* under the project, paths from it */
	size_t n;
	struct timespec stamp;	/* the index file's mtime */
	const char *prefix;	/* the project's path in the work tree */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct task q[PASS_QUEUE];
	size_t nq;
	int busy;		/* threads checking a directory */
};

/* a path list: work-tree paths, each with a status byte before it */
struct plist {
	struct arena a;
	char **v;
	size_t n, cap;
};

struct worker {
	struct spass *p;
	struct plist doubt;	/* for libgit2 to decide ('?'; names on disk
				   the index does not know: 'f' a regular
				   file, 'u' anything else) */
	struct plist sure;	/* decided here: 'm' modified, 'd' deleted,
				   'a' added (untracked) */
};

/* plist_add adds st, prefix and dir/name (dir "" for the project) */
static void
plist_add(struct plist *l, int st, const char *prefix, const char *dir,
    const char *name, size_t n)
{
	size_t pn = strlen(prefix), dn = strlen(dir);
	char *s;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 256;
		l->v = xrealloc(l->v, l->cap * sizeof *l->v);
	}
	l->v[l->n++] = s = arena_alloc_raw(&l->a, 1 + pn + dn + 1 + n + 1);
	*s++ = (char)st;
	memcpy(s, prefix, pn);
	memcpy(s += pn, dir, dn);
	if (dn)
		s[dn++] = '/';
	memcpy(s + dn, name, n);
	s[dn + n] = '\0';
}

/* cmp_path orders plist entries by path, past the status byte */
static int
cmp_path(const void *x, const void *y)
{
	return strcmp(*(char *const *)x + 1, *(char *const *)y + 1);
}

/* plist_sort orders l by path, past the status byte */
static void
plist_sort(struct plist *l)
{
	if (l->n)
		qsort(l->v, l->n, sizeof *l->v, cmp_path);
}

static void
plist_release(struct plist *l)
{
	free(l->v);
	arena_release(&l->a);
}

/* name_plain: a name the walk may stat or open (no "", ".", ".." or .git) */
static int
name_plain(const char *s)
{
	return *s && strcmp(s, ".") && strcmp(s, "..") && strcasecmp(s, ".git");
}

/*
 * stat_check: 0 if the file at fd/name is as the index entry recorded
 * it, 'm' or 'd' if certainly modified or deleted, '?' if in doubt.  A
 * regular file of the recorded size whose other stat data differ, or that
 * is racily clean, is unchanged when its bytes are the recorded blob.
 */
static int
stat_check(const struct spass *p, int fd, const char *name,
    const struct gindex_entry *e)
{
	struct stat st;
	uint32_t mode;

	if (e->odd || !name_plain(name))
		return '?';
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 'd' : '?';
	if (S_ISREG(st.st_mode))
		mode = st.st_mode & 0100 ? 0100755 : 0100644;
	else if (S_ISLNK(st.st_mode))
		mode = 0120000;
	else
		return '?';
	if (mode != e->mode)
		return '?';
	if ((uint32_t)st.st_size != e->size)
		return S_ISREG(st.st_mode) && e->size ? 'm' : '?';
	if ((int32_t)st.st_mtim.tv_sec == e->ms &&
	    (uint32_t)st.st_mtim.tv_nsec == e->mns &&
	    (int32_t)st.st_ctim.tv_sec == e->cs &&
	    (uint32_t)st.st_ctim.tv_nsec == e->cns &&
	    (uint32_t)st.st_ino == e->ino && st.st_uid == e->uid &&
	    st.st_gid == e->gid && (st.st_mtim.tv_sec < p->stamp.tv_sec ||
	    (st.st_mtim.tv_sec == p->stamp.tv_sec &&
	    st.st_mtim.tv_nsec < p->stamp.tv_nsec)))
		return 0;
	return S_ISREG(st.st_mode) && (uint64_t)st.st_size == e->size &&
	    gindex_same_blob(fd, name, e) ? 0 : '?';
}

/* pass_push queues a directory for whichever thread is free; 0 if full */
static int
pass_push(struct spass *p, int fd, const char *dir, size_t lo, size_t hi)
{
	int ok;

	pthread_mutex_lock(&p->mu);
	if ((ok = p->nq < PASS_QUEUE)) {
		p->q[p->nq++] = (struct task){ fd, dir, lo, hi };
		pthread_cond_signal(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return ok;
}

/*
 * pass_dir checks the open directory fd at dir against entries [lo, hi),
 * all of which are below it, and closes fd.  The entries below one
 * subdirectory are contiguous in the index's order, so each subdirectory
 * is one range, checked as a task of its own.
 */
static void
pass_dir(struct worker *w, int fd, const char *dir, size_t lo, size_t hi)
{
	struct spass *p = w->p;
	size_t dn = *dir ? strlen(dir) + 1 : 0, i, j, n;
	const char *rest, *sl;
	struct smap known;	/* the names the index has here */
	struct dirent *d;
	char *sub;
	DIR *dh;
	int sfd, st;

	if (!(dh = fdopendir(fd))) {
		close(fd);
		plist_add(&w->doubt, '?', p->prefix, "", dir, strlen(dir));
		return;
	}
	smap_init(&known);
	for (i = lo; i < hi; i = j) {
		rest = p->e[i].path + dn;
		j = i + 1;
		if (!(sl = strchr(rest, '/'))) {
			smap_put(&known, rest, strlen(rest), &known);
			if ((st = stat_check(p, dirfd(dh), rest, &p->e[i])))
				plist_add(st == '?' ? &w->doubt : &w->sure, st,
				    p->prefix, dir, rest, strlen(rest));
			continue;
		}
		n = (size_t)(sl - rest);
		while (j < hi && !strncmp(p->e[j].path + dn, rest, n + 1))
			j++;
		smap_put(&known, rest, n, &known);
		sub = arena_strndup(&w->doubt.a, rest, n);
		if (!name_plain(sub) || (sfd = openat(dirfd(dh), sub, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			plist_add(&w->doubt, '?', p->prefix, dir, sub, n);
			continue;
		}
		sub = arena_strndup(&w->doubt.a, p->e[i].path, dn + n);
		if (!pass_push(p, sfd, sub, i, j))
			pass_dir(w, sfd, sub, i, j);
	}
	/* a name on disk the index does not know: untracked or ignored */
	while ((d = readdir(dh)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, "..") &&
		    (*dir || *p->prefix || strcmp(d->d_name, ".git")) &&
		    !smap_get(&known, d->d_name, strlen(d->d_name)))
			plist_add(&w->doubt, d->d_type == DT_REG ? 'f' : 'u',
			    p->prefix, dir, d->d_name, strlen(d->d_name));
	closedir(dh);
	smap_release(&known);
}

/* pass_work checks queued directories until none is left or coming */
static void *
pass_work(void *arg)
{
	struct worker *w = arg;
	struct spass *p = w->p;
	struct task t;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->nq && p->busy)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->nq)
			break;
		t = p->q[--p->nq];
		p->busy++;
		pthread_mutex_unlock(&p->mu);
		pass_dir(w, t.fd, t.dir, t.lo, t.hi);
		pthread_mutex_lock(&p->mu);
		if (!--p->busy && !p->nq)
			pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* ignore_case: core.ignorecase is set (the pass compares exact names) */
static int
ignore_case(struct changes *c)
{
	git_config *cfg;
	int v = 0;

	if (git_repository_config_snapshot(&cfg, c->repo) < 0)
		return 1;
	if (git_config_get_bool(&v, cfg, "core.ignorecase") < 0)
		v = 0;
	git_config_free(cfg);
	git_error_clear();
	return v;
}

/*
 * pass_load reads the index, copies its entries under the project into p
 * and queues the project; 0 when the pass cannot decide for this index
 * (one gindex_read leaves to libgit2, or names compared without case).
 */
static int
pass_load(struct changes *c, int root, struct gindex *g, struct spass *p)
{
	char *path = xasprintf("%sindex", git_repository_path(c->repo));
	size_t pn = strlen(c->prefix), i;
	int ok, fd;

	ok = gindex_read(g, path);
	free(path);
	/* the stamp is taken before the read: a later rewrite can only make
	   more entries racily clean */
	if (!ok || !g->stamp.tv_sec || ignore_case(c) ||
	    (fd = openat(root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return 0;
	p->stamp = g->stamp;
	p->prefix = c->prefix;
	p->e = xcalloc(g->n + 1, sizeof *p->e);
	for (i = 0; i < g->n; i++)
		if (!strncmp(g->e[i].path, c->prefix, pn)) {
			p->e[p->n] = g->e[i];
			p->e[p->n++].path += pn;
		}
	p->q[p->nq++] = (struct task){ fd, "", 0, p->n };
	return 1;
}

/*
 * index_is_tree: 1 when the index holds exactly tree, known from the tree
 * ids the index keeps for its directories (git's cache tree, which git
 * status reads too), 0 when it does not or cannot be told.  The trees
 * this may build go to an object database in memory: hw-inspect never
 * writes to the repository.
 */
static int
index_is_tree(struct changes *c, const git_tree *tree, git_index *idx)
{
	git_odb *odb = NULL;
	git_odb_backend *mem = NULL;
	git_oid id;
	int same = 0;

	if (!tree || git_index_has_conflicts(idx) ||
	    git_repository_odb(&odb, c->repo) < 0)
		return 0;
	if (git_mempack_new(&mem) == 0 &&
	    git_odb_add_backend(odb, mem, 1000) == 0) {
		mem = NULL;	/* the odb owns it */
		same = git_index_write_tree(&id, idx) == 0 &&
		    git_oid_equal(&id, git_tree_id(tree));
	}
	if (mem)
		mem->free(mem);
	git_odb_free(odb);
	git_error_clear();
	return same;
}

/* staged_add adds the paths the base tree and the index differ on */
static int
staged_add(struct changes *c, git_tree *tree, const struct gindex *g,
    struct plist *l)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;
	const git_diff_delta *d;
	git_index *idx;
	git_diff *diff;
	size_t i, pn = strlen(c->prefix);
	int r;

	/* the cache tree, as read, names the base tree: nothing staged */
	if (tree && g->has_tree && !memcmp(g->tree, git_tree_id(tree)->id, 20))
		return 0;
	if (git_repository_index(&idx, c->repo) < 0)
		return -1;
	if (index_is_tree(c, tree, idx)) {
		git_index_free(idx);
		return 0;
	}
	o.flags = GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SKIP_BINARY_CHECK;
	r = git_diff_tree_to_index(&diff, c->repo, tree, idx, &o);
	git_index_free(idx);
	if (r < 0)
		return -1;
	for (i = 0; i < git_diff_num_deltas(diff); i++) {
		d = git_diff_get_delta(diff, i);
		if (!strncmp(d->old_file.path, c->prefix, pn))
			plist_add(l, '?', "", "", d->old_file.path,
			    strlen(d->old_file.path));
		if (strcmp(d->new_file.path, d->old_file.path) &&
		    !strncmp(d->new_file.path, c->prefix, pn))
			plist_add(l, '?', "", "", d->new_file.path,
			    strlen(d->new_file.path));
	}
	git_diff_free(diff);
	return 0;
}

/*
 * untracked decides the names on disk the index does not know, in w's
 * doubts: one the ignore rules exclude is no change (nothing for libgit2
 * to decide, and a diff would load the index again); a regular file that
 * is not excluded is added (untracked), as libgit2 would list it; other
 * names (directories, links) stay for libgit2.
 */
static void
untracked(git_repository *repo, struct worker *w)
{
	struct plist *l = &w->doubt;
	size_t i, j;
	int ign;

	for (i = j = 0; i < l->n; i++) {
		char *s = l->v[i];

		if ((*s != 'u' && *s != 'f') ||
		    git_ignore_path_is_ignored(&ign, repo, s + 1) < 0)
			l->v[j++] = s;
		else if (ign)
			continue;
		else if (*s == 'f')
			plist_add(&w->sure, 'a', "", "", s + 1, strlen(s + 1));
		else
			l->v[j++] = s;
	}
	l->n = j;
	git_error_clear();
}

/*
 * pass_join gathers the workers' lists into w[0]: a path both staged and
 * decided is in doubt after all.  0 when the whole project is better
 * diffed (most of it, or the project itself, in doubt).
 */
static int
pass_join(struct spass *p, struct worker *w, size_t nw, struct plist *staged)
{
	struct plist *doubt = &w[0].doubt, *sure = &w[0].sure;
	size_t i, k, j;

	for (k = 1; k < nw; k++) {
		for (i = 0; i < w[k].doubt.n; i++)
			plist_add(doubt, '?', "", "", w[k].doubt.v[i] + 1,
			    strlen(w[k].doubt.v[i] + 1));
		for (i = 0; i < w[k].sure.n; i++)
			plist_add(sure, w[k].sure.v[i][0], "", "",
			    w[k].sure.v[i] + 1, strlen(w[k].sure.v[i] + 1));
	}
	plist_sort(staged);
	plist_sort(sure);
	for (i = j = k = 0; i < sure->n; i++) {
		int c = 1;

		while (k < staged->n && (c = cmp_path(&staged->v[k],
		    &sure->v[i])) < 0)
			k++;
		if (c)
			sure->v[j++] = sure->v[i];
	}
	sure->n = j;
	for (i = 0; i < staged->n; i++)
		plist_add(doubt, '?', "", "", staged->v[i] + 1,
		    strlen(staged->v[i] + 1));
	if (doubt->n > PASS_MIN && doubt->n + sure->n > p->n / 2)
		return 0;
	plist_sort(doubt);
	for (i = j = 0; i < doubt->n; i++)
		if (!j || cmp_path(&doubt->v[j - 1], &doubt->v[i]))
			doubt->v[j++] = doubt->v[i];
	doubt->n = j;
	for (i = 0; i < doubt->n; i++) {
		if (!strcmp(doubt->v[i] + 1, p->prefix))
			return 0;	/* the project itself is in doubt */
		doubt->v[i]++;		/* the pathspec: past the status byte */
	}
	return 1;
}

static int
git_collect(struct changes *c, int root)
{
	git_diff_options o = GIT_DIFF_OPTIONS_INIT;
	struct spass p = { 0 };
	struct worker w[2] = { { &p }, { &p } };
	struct plist staged = { 0 };
	struct gindex gi = { 0 };
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	git_diff *diff = NULL;
	pthread_t th;
	char *spec = c->prefix;
	size_t i, pn = strlen(c->prefix);
	int rc = -1, r, pass = 0, thread = 0;

	arena_init(&staged.a);
	for (i = 0; i < 2; i++) {
		arena_init(&w[i].doubt.a);
		arena_init(&w[i].sure.a);
	}
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	o.flags = GIT_DIFF_INCLUDE_UNTRACKED | GIT_DIFF_RECURSE_UNTRACKED_DIRS |
	    GIT_DIFF_INCLUDE_TYPECHANGE | GIT_DIFF_SKIP_BINARY_CHECK;
	if (*spec) {
		o.pathspec.strings = &spec;
		o.pathspec.count = 1;
	}
	if (find_base(c) < 0 || (c->has_base && (git_commit_lookup(&commit,
	    c->repo, &c->base) < 0 || git_commit_tree(&tree, commit) < 0)))
		goto out;
	if (pass_load(c, root, &gi, &p)) {
		if (p.n >= PASS_MIN && sysconf(_SC_NPROCESSORS_ONLN) >= 2)
			thread = pthread_create(&th, NULL, pass_work, &w[1]) ==
			    0;
		r = staged_add(c, tree, &gi, &staged);
		pass_work(&w[0]);
		if (thread)
			pthread_join(th, NULL);
		if (r < 0)
			goto out;
		for (i = 0; i < (size_t)(1 + thread); i++)
			untracked(c->repo, &w[i]);
		pass = pass_join(&p, w, 1 + thread, &staged);
	}
	if (pass) {
		for (i = 0; i < w[0].sure.n; i++) {
			const char *s = w[0].sure.v[i], *path = s + 1 + pn;

			/* a regular file or nothing, found without following;
			   an untracked name was read from the directory only */
			if (*s == 'a' ? !path_fit(root, path) :
			    !path_valid(path))
				c->unsupported = 1;
			else
				changes_add(c, path, strlen(path),
				    *s == 'm' ? "modified" : *s == 'd' ?
				    "deleted" : "added");
		}
		if (!w[0].doubt.n) {
			rc = 0;		/* nothing for libgit2 to decide */
			goto out;
		}
		o.pathspec.strings = w[0].doubt.v;
		o.pathspec.count = w[0].doubt.n;
		o.flags |= GIT_DIFF_DISABLE_PATHSPEC_MATCH;
	}
	if (git_diff_tree_to_workdir_with_index(&diff, c->repo, tree, &o) < 0)
		goto out;
	for (i = 0; i < git_diff_num_deltas(diff); i++)
		git_delta_add(c, root, git_diff_get_delta(diff, i));
	rc = 0;
out:
	git_diff_free(diff);
	gindex_release(&gi);
	git_tree_free(tree);
	git_commit_free(commit);
	while (p.nq)
		close(p.q[--p.nq].fd);
	pthread_cond_destroy(&p.cv);
	pthread_mutex_destroy(&p.mu);
	free(p.e);
	for (i = 0; i < 2; i++) {
		plist_release(&w[i].doubt);
		plist_release(&w[i].sure);
	}
	plist_release(&staged);
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

struct change *
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
int
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

void
changes_release(struct changes *c)
{
	git_repository_free(c->repo);
	if (c->inited)
		git_libgit2_shutdown();
	free(c->v);
	free(c->prefix);
	arena_release(&c->a);
}

struct jval *
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
