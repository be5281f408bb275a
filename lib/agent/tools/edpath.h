/*
 * edpath.h - where the file editor's paths lead (edpath.c), for editor.c
 * and edpath.c only
 */
#ifndef HW_TOOLS_EDPATH_H
#define HW_TOOLS_EDPATH_H

#include <stddef.h>
#include <sys/stat.h>

/* What the editor reaches: the project, and directories it only views. */
struct ed_where {
	char *root;		/* the project, canonical */
	int rootfd;
	char **ro;		/* view reads these too: inside .heartwood
				   from the root, or outside it, canonical */
	size_t nro;
};

/* A resolved path: reached without following links. */
struct target {
	char *abs;		/* canonical, for messages */
	char *rel;		/* from the root ("." for it), or from / */
	int outside;		/* rel is from /: a directory view reads */
	int dirfd;		/* its directory */
	const char *base;	/* its name there ("." for the root) */
	int exists;
	struct stat st;		/* lstat of it, when it exists */
};

/* ed_where_init opens root (-1 with hw_err set if it cannot) */
int ed_where_init(struct ed_where *w, const char *root);
void ed_where_release(struct ed_where *w);
/*
 * ed_readable adds dir: relative, from the root, or absolute (resolved
 * now; -1 with hw_err set when it is no directory or is /).
 */
int ed_readable(struct ed_where *w, const char *dir);
/* ed_has_heartwood: a component of rel is exactly .heartwood */
int ed_has_heartwood(const char *rel);
/*
 * ed_resolve fills t for path, or returns an error message (malloc'd)
 * for the model: outside the project, inside .heartwood (but for cmd
 * view under a readable directory), changed meanwhile.
 */
char *ed_resolve(const struct ed_where *w, const char *path, size_t plen,
    const char *cmd, struct target *t);
/* ed_open_final opens t itself, refusing a link or a swapped file */
int ed_open_final(struct target *t, int flags);
void ed_target_release(struct target *t);

#endif
