/*
 * gpu.c - the GPU inventory: nvidia-smi --query-gpu=index,name,
 * memory.total,memory.free,driver_version,compute_cap
 * --format=csv,noheader,nounits, run and parsed strictly
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"

#define OUT_MAX (256u << 10)
#define DEADLINE_MS 20000

static int
bad_line(size_t no, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "nvidia-smi: line %zu: %s", no, why);
}

/* field: the next ", "-separated field of *p (spaces trimmed), in f */
static int
field(const char **p, const char *end, char *f, size_t fsz)
{
	const char *s = *p, *e = memchr(s, ',', (size_t)(end - s));
	size_t n;

	if (!e)
		e = end;
	*p = e < end ? e + 1 : end;
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == ' ')
		e--;
	n = (size_t)(e - s);
	if (!n || n >= fsz)
		return -1;
	memcpy(f, s, n);
	f[n] = 0;
	return 0;
}

static int
mib(const char *s, int64_t *out)
{
	int64_t v;

	if (parse_seq(s, &v) < 0 || v > (INT64_C(1) << 40))
		return -1;
	*out = v * 1048576;
	return 0;
}

int
gpu_parse(const char *text, size_t len, struct gpu_list *l)
{
	const char *p = text, *end = text + len, *nl;
	size_t no = 0;

	memset(l, 0, sizeof *l);
	for (; p < end; p = nl + 1) {
		struct gpu *g;
		char f[6][GPU_NAME_MAX];
		const char *q;
		int64_t idx;

		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			return bad_line(no + 1, "the line does not end");
		no++;
		if (nl == p || (nl == p + 1 && *p == '\r'))
			continue;
		if (l->n == GPUS_MAX)
			return bad_line(no, "more than 64 GPUs");
		q = p;
		for (int i = 0; i < 6; i++)
			if (field(&q, nl[-1] == '\r' ? nl - 1 : nl, f[i],
			    sizeof f[i]) < 0)
				return bad_line(no, "expected index, name, "
				    "memory.total, memory.free, driver_version "
				    "and compute_cap");
		if (q != (nl[-1] == '\r' ? nl - 1 : nl))
			return bad_line(no, "more than six fields");
		g = &l->v[l->n];
		if (parse_seq(f[0], &idx) < 0 || idx > 4096)
			return bad_line(no, "index is not a small integer");
		g->index = (int)idx;
		for (const char *c = f[1]; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				return bad_line(no, "the name is not "
				    "printable ASCII");
		memcpy(g->name, f[1], sizeof g->name);
		if (mib(f[2], &g->memory_total) < 0 ||
		    mib(f[3], &g->memory_free) < 0 ||
		    g->memory_free > g->memory_total)
			return bad_line(no, "memory.total and memory.free "
			    "must be MiB, free at most total");
		if (strspn(f[4], "0123456789.") != strlen(f[4]) ||
		    strlen(f[4]) >= sizeof g->driver)
			return bad_line(no, "driver_version is not a version");
		memcpy(g->driver, f[4], strlen(f[4]) + 1);
		if (strspn(f[5], "0123456789.") != strlen(f[5]) ||
		    !strchr(f[5], '.') || strlen(f[5]) >= sizeof g->compute_cap)
			return bad_line(no, "compute_cap is not N.N");
		memcpy(g->compute_cap, f[5], strlen(f[5]) + 1);
		l->n++;
	}
	return 0;
}

/* run: nvidia-smi's standard output in b; 1 when it is not installed */
static int
run(struct buf *b)
{
	static char *const argv[] = { "nvidia-smi", "--query-gpu=index,name,"
		"memory.total,memory.free,driver_version,compute_cap",
		"--format=csv,noheader,nounits", NULL };
	int fds[2], st = 0, rc = 0;
	int64_t deadline = now_ms() + DEADLINE_MS;
	char chunk[4096];
	pid_t pid;
	ssize_t r;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return hw_err_sys("cannot run nvidia-smi");
	if ((pid = fork()) < 0) {
		close(fds[0]), close(fds[1]);
		return hw_err_sys("cannot run nvidia-smi");
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd pf = { fds[0], POLLIN, 0 };
		int64_t left = deadline - now_ms();

		if (left <= 0 || poll(&pf, 1, (int)left) == 0) {
			kill(pid, SIGKILL);
			rc = hw_err_set(HW_EXIT_UNAVAILABLE, "nvidia-smi did "
			    "not answer within 20 s");
			break;
		}
		if ((r = read(fds[0], chunk, sizeof chunk)) < 0 &&
		    errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (b->len + (size_t)r > OUT_MAX) {
			kill(pid, SIGKILL);
			rc = hw_err_set(HW_EXIT_DATA, "nvidia-smi: the answer "
			    "is over 256 KiB");
			break;
		}
		buf_add(b, chunk, (size_t)r);
	}
	close(fds[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (rc < 0)
		return rc;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return 1;
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		return hw_err_set(HW_EXIT_UNAVAILABLE, "nvidia-smi failed "
		    "(%s %d): no GPU inventory", WIFEXITED(st) ? "exit" :
		    "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return 0;
}

int
gpu_inventory(struct gpu_list *l)
{
	struct buf b;
	int rc;

	memset(l, 0, sizeof *l);
	buf_init(&b);
	rc = run(&b);
	if (rc == 0)
		rc = gpu_parse(b.p ? b.p : "", b.len, l);
	else if (rc == 1) {
		l->missing = 1;
		rc = 0;
	}
	buf_release(&b);
	return rc;
}
