/*
 * rawsync - the raw durable-append limit that bench/append compares
 * hw-append against: append the lines of two files with nothing but
 * write(2) and fdatasync(2), a group of lines at a time.
 *
 * usage: rawsync protocol|pair|single BATCH EVENTS AUDIT OUTDIR
 *
 * protocol: the commit protocol of hw-store(5): per group, write the
 *         group's event lines to OUTDIR/events.jsonl and fdatasync it,
 *         then write its audit lines to OUTDIR/audit.jsonl; fdatasync the
 *         audit log once at the end.
 * pair:   per group, write and fdatasync the event lines, then write and
 *         fdatasync the audit lines (two syncs per group).
 * single: one log; per group, one write of each event line followed by
 *         its audit line to OUTDIR/single.jsonl, and one fdatasync.
 *
 * session: protocol, with the other syscalls hw-append makes on a new
 *         session around it: OUTDIR/s made and OUTDIR synced; two small
 *         files (the metadata and the writer's lease) each written to a
 *         temporary name, synced, renamed and the directory synced; both
 *         logs created and the directory synced; within the loop, the
 *         audit log's writeback started (sync_file_range, not waited
 *         for) after every 256 KiB of audit lines; at the
 *         end, the lease removed and the directory synced, and a small
 *         file (the verified head) written and renamed.
 *
 * BATCH is the number of lines per group (1: one group per event).
 * Prints "SECONDS SYNCS" for the append loop alone (session: from the
 * directory's making to the verified head's rename), on stdout; reading
 * EVENTS and AUDIT is never timed.
 */
#include <err.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

struct lines {
	char *p;		/* the whole file */
	size_t *off;		/* off[i]: start of line i; off[n]: the end */
	size_t n;
};

static void
lines_load(struct lines *l, const char *path)
{
	FILE *f;
	long len;
	size_t i, cap = 1024;

	if (!(f = fopen(path, "rb")) || fseek(f, 0, SEEK_END) < 0 ||
	    (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0)
		err(1, "cannot read '%s'", path);
	l->p = malloc((size_t)len + 1);
	l->off = malloc(cap * sizeof *l->off);
	if (!l->p || !l->off)
		err(1, "malloc");
	if (fread(l->p, 1, (size_t)len, f) != (size_t)len)
		err(1, "cannot read '%s'", path);
	fclose(f);
	if (len == 0 || l->p[len - 1] != '\n')
		errx(1, "'%s' does not end with a newline", path);
	l->n = 0;
	l->off[0] = 0;
	for (i = 0; i < (size_t)len; i++) {
		if (l->p[i] != '\n')
			continue;
		if (++l->n + 1 > cap &&
		    !(l->off = realloc(l->off, (cap *= 2) * sizeof *l->off)))
			err(1, "realloc");
		l->off[l->n] = i + 1;
	}
}

/* interleave builds event 0, audit 0, event 1, ... as one line set */
static void
interleave(struct lines *out, const struct lines *ev, const struct lines *au)
{
	size_t i, k = 0, le, la;

	out->n = 2 * ev->n;
	out->p = malloc(ev->off[ev->n] + au->off[au->n]);
	out->off = malloc((out->n + 1) * sizeof *out->off);
	if (!out->p || !out->off)
		err(1, "malloc");
	out->off[0] = 0;
	for (i = 0; i < ev->n; i++) {
		le = ev->off[i + 1] - ev->off[i];
		la = au->off[i + 1] - au->off[i];
		memcpy(out->p + out->off[k], ev->p + ev->off[i], le);
		out->off[k + 1] = out->off[k] + le;
		k++;
		memcpy(out->p + out->off[k], au->p + au->off[i], la);
		out->off[k + 1] = out->off[k] + la;
		k++;
	}
}

static int
create(const char *dir, const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
	    0600);
	if (fd < 0)
		err(1, "cannot create '%s'", path);
	return fd;
}

/* append writes lines [i, j) of l to fd and syncs it */
static void
append_nosync(int fd, const struct lines *l, size_t i, size_t j)
{
	const char *p = l->p + l->off[i];
	size_t len = l->off[j] - l->off[i];
	ssize_t w;

	while (len > 0) {
		if ((w = write(fd, p, len)) < 0)
			err(1, "write");
		p += w;
		len -= (size_t)w;
	}
}

static void
append(int fd, const struct lines *l, size_t i, size_t j)
{
	append_nosync(fd, l, i, j);
	if (fdatasync(fd) < 0)
		err(1, "fdatasync");
}

/* sync_dir syncs directory dir */
static void
sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || fsync(fd) < 0)
		err(1, "cannot sync '%s'", dir);
	close(fd);
}

/* small writes size bytes to dir/name through a temporary name */
static void
small(const char *dir, const char *name, size_t size, int durable)
{
	char tmp[4096], path[4096], b[8192];
	int fd;

	memset(b, 'x', sizeof b);
	snprintf(tmp, sizeof tmp, "%s/.%s-tmp", dir, name);
	snprintf(path, sizeof path, "%s/%s", dir, name);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
	    0600)) < 0 || write(fd, b, size) != (ssize_t)size ||
	    (durable && fsync(fd) < 0) || close(fd) < 0 ||
	    rename(tmp, path) < 0)
		err(1, "cannot write '%s'", path);
	if (durable)
		sync_dir(dir);
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct lines ev, au, one;
	size_t batch, i, j, syncs = 0, unkicked = 0;
	int single, protocol, session, efd, afd = -1;
	char dir[4096], lease[4200];
	double t0;

	if (argc != 6 || (strcmp(argv[1], "pair") != 0 &&
	    strcmp(argv[1], "single") != 0 &&
	    strcmp(argv[1], "protocol") != 0 &&
	    strcmp(argv[1], "session") != 0) || (batch = strtoul(argv[2],
	    NULL, 10)) == 0) {
		fputs("usage: rawsync protocol|pair|single|session BATCH EVENTS "
		    "AUDIT OUTDIR\n", stderr);
		return 2;
	}
	single = strcmp(argv[1], "single") == 0;
	session = strcmp(argv[1], "session") == 0;
	protocol = session || strcmp(argv[1], "protocol") == 0;
	lines_load(&ev, argv[3]);
	lines_load(&au, argv[4]);
	if (ev.n != au.n)
		errx(1, "'%s' and '%s' differ in length", argv[3], argv[4]);
	snprintf(dir, sizeof dir, "%s", argv[5]);
	t0 = now();
	if (session) {
		snprintf(dir, sizeof dir, "%s/s", argv[5]);
		if (mkdir(dir, 0700) < 0)
			err(1, "cannot make '%s'", dir);
		sync_dir(argv[5]);
		small(dir, "metadata.json", 140, 1);
		small(dir, ".writer.json", 170, 1);
		syncs += 5;
	}
	if (single) {
		interleave(&one, &ev, &au);
		efd = create(dir, "single.jsonl");
	} else {
		efd = create(dir, "events.jsonl");
		afd = create(dir, "audit.jsonl");
	}
	sync_dir(dir);
	syncs += session;
	if (!session)
		t0 = now();	/* the loop alone */
	for (i = 0; i < ev.n; i = j) {
		j = i + batch < ev.n ? i + batch : ev.n;
		if (single) {
			append(efd, &one, 2 * i, 2 * j);
			syncs++;
		} else if (protocol) {
			append(efd, &ev, i, j);
			append_nosync(afd, &au, i, j);
			syncs++;
			/* the writeback hw-append starts and does not wait for */
			if (session && (unkicked += au.off[j] - au.off[i]) >=
			    (256u << 10)) {
				(void)sync_file_range(afd, 0, 0,
				    SYNC_FILE_RANGE_WRITE);
				unkicked = 0;
			}
		} else {
			append(efd, &ev, i, j);
			append(afd, &au, i, j);
			syncs += 2;
		}
	}
	if (protocol) {
		if (fdatasync(afd) < 0)
			err(1, "fdatasync");
		syncs++;
	}
	if (session) {
		snprintf(lease, sizeof lease, "%s/.writer.json", dir);
		if (unlink(lease) < 0)
			err(1, "cannot remove '%s'", lease);
		sync_dir(dir);
		small(dir, ".verified-head.json", 4700, 0);
		syncs++;
	}
	printf("%.6f %zu\n", now() - t0, syncs);
	if (fclose(stdout) != 0)
		err(1, "cannot write 'stdout'");
	return 0;
}
