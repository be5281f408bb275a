/* diff.c - one changed file's diff against git's base or its first edit */
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

#include "inspect/inspect.h"
#include "inspect/changes.h"

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

	if (!*path || path_ok(path) < 0 || !strcmp(path, "."))
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
