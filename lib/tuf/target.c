/* target.c - the search of the delegation tree and target downloads */
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuf/tuf.h"

/* in_pattern: each '/'-separated part of path matches the pattern's */
static int
in_pattern(const char *path, const char *pat)
{
	char *p = xstrdup(path), *q = xstrdup(pat), *ps = p, *qs = q, *a, *b;
	int ok = 1;

	for (;;) {
		a = strsep(&ps, "/");
		b = strsep(&qs, "/");
		if (!a || !b) {
			ok = !a && !b;
			break;
		}
		if (fnmatch(b, a, FNM_NOESCAPE) != 0) {
			ok = 0;
			break;
		}
	}
	free(p);
	free(q);
	return ok;
}

static int
delegated(const struct tuf_role *r, const char *path)
{
	char hex[SHA256_HEX + 1];
	size_t i;

	if (r->paths) {
		for (i = 0; i < r->paths->n; i++)
			if (in_pattern(path, r->paths->u.a[i]->u.s))
				return 1;
		return 0;
	}
	sha256_hex(path, strlen(path), hex);
	for (i = 0; i < r->prefixes->n; i++)
		if (!strncmp(hex, r->prefixes->u.a[i]->u.s,
		    r->prefixes->u.a[i]->n))
			return 1;
	return 0;
}

struct visit {
	const char *role, *parent;
};

static int
visited(const char **seen, size_t n, const char *role)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(seen[i], role))
			return 1;
	return 0;
}

static int
found(const struct tuf_md *md, const char *path, struct tuf_target *t)
{
	const struct jval *v = json_get(md->targets, path);

	if (!v)
		return 0;
	t->path = xstrdup(path);
	json_get_int(v, "length", &t->length);
	t->hashes = json_get(v, "hashes");
	return 1;
}

int
tuf_target_find(struct tuf_updater *u, const char *path,
    struct tuf_target *t)
{
	struct visit *stack = xcalloc(16, sizeof *stack);
	const char *seen[TUF_MAX_DELEGATIONS + 1];
	size_t top = 0, cap = 16, nseen = 0, i, n, first, nbins = 0;
	char *bins[TUF_MAX_DELEGATIONS + 2], *bin;
	const struct tuf_md *md, *parent;
	int rc = 0;

	memset(t, 0, sizeof *t);
	if (!u->refreshed && tuf_refresh(u) < 0) {
		free(stack);
		return -1;
	}
	stack[top++] = (struct visit){ "targets", NULL };
	while (top > 0 && nseen <= TUF_MAX_DELEGATIONS && rc == 0) {
		struct visit v = stack[--top];

		if (visited(seen, nseen, v.role))
			continue;
		parent = v.parent ? tuf_load_targets(u, v.parent, NULL) :
		    u->root;
		if (!(md = tuf_load_targets(u, v.role, parent))) {
			rc = -1;
			break;
		}
		if ((rc = found(md, path, t)))
			break;
		seen[nseen++] = md->name;
		first = top;
		if (md->succinct) {
			/* one bin, terminating: nothing else is searched */
			top = 0;
			first = 0;
			bin = bins[nbins++] = tuf_bin_name(md, path);
			stack[top++] = (struct visit){ bin, md->name };
			continue;
		}
		for (i = 0; i < md->nroles; i++) {
			if (!delegated(&md->roles[i], path))
				continue;
			if (top == cap)
				stack = xrealloc(stack, (cap *= 2) *
				    sizeof *stack);
			stack[top++] = (struct visit){ md->roles[i].name,
			    md->name };
			if (md->roles[i].terminating) {
				/* nothing outside this subtree is searched */
				memmove(stack, stack + first,
				    (top - first) * sizeof *stack);
				top -= first;
				first = 0;
				break;
			}
		}
		/* the first child is searched first */
		for (i = first, n = top; i + 1 < n; i++, n--) {
			struct visit x = stack[i];

			stack[i] = stack[n - 1];
			stack[n - 1] = x;
		}
	}
	while (nbins > 0)
		free(bins[--nbins]);
	free(stack);
	return rc;
}

char *
tuf_target_local(const struct tuf_target *t)
{
	struct buf b;

	buf_init(&b);
	tuf_quote(&b, t->path, NULL);
	return buf_cstr(&b);
}

static int
check(const struct tuf_target *t, const struct buf *b)
{
	if ((int64_t)b->len != t->length)
		return hw_err_set(HW_EXIT_DATA, "target '%s' is %zu bytes, not "
		    "the %lld listed", t->path, b->len, (long long)t->length);
	return tuf_hashes_check(t->hashes, b->p, b->len, t->path);
}

int
tuf_target_cached(const struct tuf_target *t, const char *dir)
{
	char *name = tuf_target_local(t), *path = path_join(dir, name);
	struct buf b;
	int ok;

	buf_init(&b);
	ok = read_file(path, (size_t)t->length, &b) == 0 && check(t, &b) == 0;
	buf_release(&b);
	free(path);
	free(name);
	return ok;
}

int
tuf_target_fetch(struct tuf_updater *u, const struct tuf_target *t,
    const char *base_url, struct buf *out)
{
	const char *slash = strrchr(t->path, '/');
	struct buf url;
	long status;
	size_t n = strlen(base_url);
	int rc;

	if (!u->turl || strcmp(u->turl, base_url)) {
		tuf_fetcher_release(&u->tf);
		free(u->turl);
		u->turl = xstrdup(base_url);
		if (tuf_fetcher_init(&u->tf, base_url) < 0)
			return -1;
	}
	buf_init(&url);
	buf_adds(&url, base_url);
	if (!n || base_url[n - 1] != '/')
		buf_addc(&url, '/');
	if (u->root->consistent) {
		if (slash)
			buf_add(&url, t->path, (size_t)(slash - t->path) + 1);
		buf_printf(&url, "%s.%s", t->hashes->u.m[0].v->u.s,
		    slash ? slash + 1 : t->path);
	} else {
		buf_adds(&url, t->path);
	}
	rc = tuf_fetch(&u->tf, buf_cstr(&url), (size_t)t->length, out,
	    &status);
	buf_release(&url);
	if (rc == 0)
		rc = check(t, out);
	return rc;
}

/*
 * store writes a target atomically (a temporary file beside it, renamed)
 * but without fsync: a target is checked against its length and hashes
 * whenever it is used again, so one torn by a crash is fetched again.
 */
static int
store(const char *dir, const char *name, const struct buf *b)
{
	char *tmp = xasprintf("%s/.%s-XXXXXX", dir, name);
	char *path = path_join(dir, name);
	int fd = mkstemp(tmp), rc = -1;

	if (fd < 0) {
		hw_err_sys("cannot create a file in '%s'", dir);
		goto out;
	}
	if (write_all(fd, b->p, b->len, tmp) == 0 && close(fd) == 0) {
		fd = -1;
		if (rename(tmp, path) == 0)
			rc = 0;
		else
			hw_err_sys("cannot rename into '%s'", path);
	}
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
out:
	free(tmp);
	free(path);
	return rc;
}

int
tuf_target_download(struct tuf_updater *u, const struct tuf_target *t,
    const char *base_url, const char *dir)
{
	char *name;
	struct buf b;
	int rc;

	buf_init(&b);
	if ((rc = tuf_target_fetch(u, t, base_url, &b)) == 0) {
		name = tuf_target_local(t);
		rc = store(dir, name, &b);
		free(name);
	}
	buf_release(&b);
	return rc;
}
