/*
 * bundled.c - the bundled skills: the ones shipped in the data
 * directory's skills/, reviewed with the release
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "skill/skill.h"

static int
by_name(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

size_t
skill_bundled_load(struct arena *a, const struct jval *recs,
    struct skill_bundled **v)
{
	char *data = datadir_path(), *top, **names = NULL;
	struct jval *p;
	struct dirent *d;
	size_t n = 0, i, j;
	DIR *dp;

	*v = NULL;
	top = data ? xasprintf("%s/skills", data) : NULL;
	free(data);
	if (!top || !(dp = opendir(top))) {
		free(top);
		return 0;
	}
	while ((d = readdir(dp)))
		if (d->d_name[0] != '.') {
			names = xrealloc(names, (n + 1) * sizeof *names);
			names[n++] = xstrdup(d->d_name);
		}
	closedir(dp);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	*v = xcalloc(n ? n : 1, sizeof **v);
	for (i = 0; i < n; i++) {
		struct skill_bundled *b = &(*v)[i];

		b->dir = xasprintf("%s/%s", top, names[i]);
		free(names[i]);
		b->rec = json_obj(a);
		if (skill_inspect(b->dir, &b->si) < 0) {
			b->why = arena_strndup(a, hw_err_msg(),
			    strlen(hw_err_msg()));
			json_add(a, b->rec, "name", json_str(a,
			    strrchr(b->dir, '/') + 1));
		} else {
			p = b->si.meta.policy;
			json_add(a, b->rec, "name", json_str(a,
			    b->si.meta.name));
			json_add(a, b->rec, "skill_id", json_copy(a,
			    json_get(p, "id")));
			json_add(a, b->rec, "version", json_copy(a,
			    json_get(p, "version")));
			json_add(a, b->rec, "tree_sha256", json_str(a,
			    b->si.tree.tree_sha256));
			b->why = skill_compatible(&b->si);
		}
		for (j = 0; !b->why && j < recs->n; j++)
			if (json_equal(json_get(recs->u.a[j], "name"),
			    json_get(b->rec, "name")) || json_equal(json_get(
			    recs->u.a[j], "skill_id"), json_get(b->rec,
			    "skill_id")))
				b->why = "an installed skill of its name or id "
				    "takes its place";
		json_add(a, b->rec, "status", json_str(a, b->why ?
		    "unsupported" : "active"));
		json_add(a, b->rec, "review", json_str(a,
		    "repository-reviewed"));
	}
	free(names);
	free(top);
	return n;
}

void
skill_bundled_release(struct skill_bundled *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].dir);
		skill_info_release(&v[i].si);
	}
	free(v);
}

int
skill_bundled_has(const char *name, const char *id)
{
	struct arena a;
	struct skill_bundled *bv;
	size_t i, n;
	int hit = 0;

	arena_init(&a);
	n = skill_bundled_load(&a, json_new(&a, J_ARRAY), &bv);
	for (i = 0; i < n; i++)
		hit |= json_is_str(json_get(bv[i].rec, "name"), name) ||
		    (id && json_is_str(json_get(bv[i].rec, "skill_id"), id));
	skill_bundled_release(bv, n);
	arena_release(&a);
	return hit;
}
