/* tail.c - reading what was committed after a point, for followers */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "store/logs.h"

/*
 * The tail of a growing session: pairs are verified as they appear, each
 * batch under the snapshot lock, from where the last batch ended.
 */
struct logtail {
	struct vstate v;
	off_t evoff, auoff;
};

struct logtail *
logtail_open(struct session *s)
{
	struct logtail *t = xcalloc(1, sizeof *t);

	vstate_init(&t->v, s);
	return t;
}

void
logtail_close(struct logtail *t)
{
	if (!t)
		return;
	vstate_release(&t->v);
	free(t);
}

/* tail_reader opens path at off; a log shorter than off was cut */
static int
tail_reader(struct reader *rd, const char *path, const char *name, off_t off,
    int64_t lineno)
{
	off_t size;

	if (reader_open(rd, path, name) < 0)
		return -1;
	size = rd->fd < 0 ? 0 : lseek(rd->fd, 0, SEEK_END);
	if (size < off) {
		reader_close(rd);
		return hw_err_set(HW_EXIT_DATA, "%s is shorter than the %lld "
		    "bytes already verified: it was cut or replaced", name,
		    (long long)off);
	}
	if (rd->fd >= 0 && lseek(rd->fd, off, SEEK_SET) < 0) {
		reader_close(rd);
		return hw_err_sys("cannot seek '%s'", path);
	}
	rd->r.offset = off;
	rd->r.lineno = (long)lineno;
	return 0;
}

int64_t
logtail_read(struct logtail *t, event_fn fn, void *ctx)
{
	struct vstate *v = &t->v;
	struct reader er, ar;
	int64_t got = 0;
	int lock, rc = -1;

	if ((lock = lock_open(v->s->snapshot_lock, 0)) < 0)
		return -1;
	if (tail_reader(&er, v->s->events, "events.jsonl", t->evoff, v->i) < 0)
		goto out0;
	if (tail_reader(&ar, v->s->audit, "audit.jsonl", t->auoff, v->i) < 0)
		goto out1;
	for (;;) {
		/* a pair still being written, or left by a crash, waits */
		if (reader_next(&er) < 0 || reader_next(&ar) < 0)
			goto out2;
		if (!er.more || !ar.more || got == LOGTAIL_BATCH)
			break;
		arena_clear(&v->a);
		if (check_event(v, &er) < 0 || check_audit(v, &ar) < 0 ||
		    (fn && fn(ctx, v->evline.p, v->evline.len, v->ev) < 0))
			goto out2;
		v->i++;
		got++;
		t->evoff = er.r.offset;
		t->auoff = ar.r.offset;
	}
	rc = 0;
out2:
	reader_close(&ar);
out1:
	reader_close(&er);
out0:
	lock_close(lock);
	return rc < 0 ? -1 : got;
}
