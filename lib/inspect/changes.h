/*
 * changes.h - the list of changes, shared by git.c (which makes it) and
 * diff.c (which reads one) only
 */
#ifndef HW_INSPECT_CHANGES_H
#define HW_INSPECT_CHANGES_H

#include <git2.h>

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

/* changes_load fills c; -1 only for a refused request or a bad session */
int changes_load(struct changes *c, int root, const char *sid);
void changes_release(struct changes *c);
/* find_change: the change of the n bytes of path, or NULL */
struct change *find_change(struct changes *c, const char *path, size_t n);
/* cstr: s as a JSON string, or null for NULL */
struct jval *cstr(struct arena *a, const char *s);

#endif
