/* stage.c - a verified model copied to node-local scratch and verified */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "model/model.h"

#define BLOCK (1u << 20)

struct stg {
	const char *src;
	char *root, *partial, *final, *lock;
	const volatile int *cancel;
	int64_t bytes;
};

static int
copy_file(struct stg *s, const char *rel, char *blk)
{
	char *src = path_join(s->src, rel), *dst = path_join(s->partial, rel);
	ssize_t r = 0;
	int in = -1, out = -1, rc = -1;

	if (model_mkparents(s->partial, rel) < 0)
		goto out;
	if ((in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		hw_err_set(HW_EXIT_CANTCREAT, "cannot open '%s': %s", src,
		    strerror(errno));
		goto out;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
	    0600);
	if (out < 0) {
		hw_err_set(HW_EXIT_CANTCREAT, "cannot create '%s': %s", dst,
		    strerror(errno));
		goto out;
	}
	while (!(s->cancel && *s->cancel) && (r = read(in, blk, BLOCK)) > 0)
		if (write_all(out, blk, (size_t)r, dst) < 0) {
			hw_err_set(HW_EXIT_CANTCREAT, "%s", hw_err_msg());
			goto out;
		}
	if (s->cancel && *s->cancel) {
		hw_err_set(HW_EXIT_INTR, "staging interrupted");
		goto out;
	}
	if (r < 0 || fsync(out) < 0) {
		hw_err_set(HW_EXIT_CANTCREAT, "cannot copy '%s': %s", src,
		    strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(src), free(dst);
	return rc;
}

/* copy_all: every file of the model (SHA256SUMS too) into partial */
static int
copy_all(struct stg *s)
{
	struct model_files l;
	struct statvfs sv;
	char *blk;
	size_t i;
	int rc = 0;

	if (statvfs(s->root, &sv) < 0)
		return hw_err_set(HW_EXIT_CANTCREAT, "cannot measure free "
		    "space of '%s': %s", s->root, strerror(errno));
	if ((int64_t)sv.f_bavail * (int64_t)sv.f_frsize < s->bytes)
		return hw_err_set(HW_EXIT_CANTCREAT, "not enough free space in "
		    "'%s': %lld bytes needed", s->root, (long long)s->bytes);
	if (rm_tree(s->partial) < 0)
		return -1;
	if (mkdir(s->partial, 0700) < 0)
		return hw_err_set(HW_EXIT_CANTCREAT, "cannot create '%s': %s",
		    s->partial, strerror(errno));
	if (model_walk(s->src, &l) < 0)
		return -1;
	blk = xmalloc(BLOCK);
	for (i = 0; rc == 0 && i < l.n; i++)
		rc = copy_file(s, l.v[i], blk);
	free(blk);
	model_files_release(&l);
	return rc;
}

/* stage: reuse a staged copy that verifies, else copy and verify anew */
static int
stage(struct stg *s, int *reused)
{
	struct stat st;
	int code;

	*reused = 0;
	if (lstat(s->final, &st) == 0) {
		if (S_ISDIR(st.st_mode) && sums_verify(s->final, NULL,
		    NULL) == 0) {
			*reused = 1;
			return 0;
		}
		if (rm_tree(s->final) < 0)
			return -1;
	}
	if (copy_all(s) < 0)
		goto fail;
	if (sums_verify(s->partial, NULL, NULL) < 0) {
		hw_err_set(HW_EXIT_IO, "the staged copy does not verify: %s",
		    hw_err_msg());
		goto fail;
	}
	if (rename(s->partial, s->final) < 0) {
		hw_err_set(HW_EXIT_CANTCREAT, "cannot publish '%s': %s",
		    s->final, strerror(errno));
		goto fail;
	}
	if (sums_verify(s->final, NULL, NULL) < 0)
		return hw_err_set(HW_EXIT_IO, "the staged copy does not "
		    "verify: %s", hw_err_msg());
	return 0;
fail:
	code = hw_err_code();
	{
		char *msg = xstrdup(hw_err_msg());

		rm_tree(s->partial);
		hw_err_set(code, "%s", msg);
		free(msg);
	}
	return -1;
}

char *
model_stage(const char *dir, const char *id, int64_t bytes,
    const char *scratch, const volatile int *cancel, int *reused)
{
	struct stg s = { .src = dir, .cancel = cancel, .bytes = bytes };
	struct stat st;
	char *r = NULL;
	int lk;

	if (!scratch || scratch[0] != '/' || stat(scratch, &st) < 0 ||
	    !S_ISDIR(st.st_mode) || access(scratch, W_OK) < 0) {
		hw_err_set(HW_EXIT_OSFILE, "LOCAL_SCRATCH_JOB is %s: the "
		    "node-local scratch of the job is needed", scratch ?
		    "not an absolute path to a writable directory" :
		    "not set");
		return NULL;
	}
	s.root = path_join(scratch, "heartwood-models");
	if (mkdir(s.root, 0700) < 0 && errno != EEXIST) {
		hw_err_set(HW_EXIT_CANTCREAT, "cannot create '%s': %s", s.root,
		    strerror(errno));
		goto out;
	}
	if (ensure_dir(s.root) < 0) {
		hw_err_set(HW_EXIT_OSFILE, "%s", hw_err_msg());
		goto out;
	}
	s.final = path_join(s.root, id);
	s.partial = xasprintf("%s/.%s.partial", s.root, id);
	s.lock = xasprintf("%s/.%s.lock", s.root, id);
	if ((lk = lock_open(s.lock, 1)) < 0) {
		if (errno == EWOULDBLOCK)
			hw_err_set(HW_EXIT_BUSY, "'%s': another run is staging "
			    "this model", id);
		goto out;
	}
	if (stage(&s, reused) == 0)
		r = xstrdup(s.final);
	lock_close(lk);
out:
	free(s.root), free(s.partial), free(s.final), free(s.lock);
	return r;
}
