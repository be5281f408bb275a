/*
 * resources.c - the resource planner: memory available to a runtime (RAM
 * from /proc and the cgroups, GPUs from nvidia-smi or Slurm's sinfo) and
 * the context window and budgets a model gets from it
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/model.h"

#define KIB 1024LL
#define MIB (1024LL * 1024)
#define GIB (1024LL * 1024 * 1024)
#define TOKEN_BYTES 131072LL
#define OUT_MAX (1u << 20)

static const int64_t tiers[] = { 18432, 32768, 65536, 131072, 262144,
	524288, 1048576 };

/* sysroot: where /proc and /sys are read (HW_TEST_SYSROOT, for tests) */
static char *
sys_path(const char *p)
{
	const char *root = getenv("HW_TEST_SYSROOT");

	return xasprintf("%s%s", root && *root ? root : "", p);
}

/* read_num: the first integer of a small file; 1 read, 0 none or "max" */
static int
read_num(const char *p, int64_t *v)
{
	char *path = sys_path(p);
	struct buf b;
	int rc = 0;

	buf_init(&b);
	if (read_file(path, 4096, &b) == 0 && b.len) {
		char *s = buf_cstr(&b), *end;
		long long x;

		errno = 0;
		x = strtoll(s, &end, 10);
		if (end != s && errno == 0 && x >= 0 && (*end == '\n' ||
		    *end == 0)) {
			*v = x;
			rc = 1;
		}
	}
	buf_release(&b);
	free(path);
	return rc;
}

static int64_t
meminfo_available(void)
{
	char *path = sys_path("/proc/meminfo"), *s, *l;
	int64_t v = -1;
	struct buf b;

	buf_init(&b);
	if (read_file(path, 1u << 20, &b) == 0) {
		s = buf_cstr(&b);
		if ((l = strstr(s, "MemAvailable:")) && (l == s ||
		    l[-1] == '\n')) {
			long long kb = strtoll(l + 13, NULL, 10);

			if (kb > 0)
				v = kb * KIB;
		}
	}
	buf_release(&b);
	free(path);
	return v;
}

/* cgroup_dir: this process's cgroup below the hierarchy of ctl ("" v2) */
static char *
cgroup_dir(const char *ctl)
{
	char *path = sys_path("/proc/self/cgroup"), *s, *line, *save = NULL;
	char *r = NULL;
	struct buf b;

	buf_init(&b);
	if (read_file(path, 1u << 16, &b) == 0 && b.len) {
		s = buf_cstr(&b);
		for (line = strtok_r(s, "\n", &save); line && !r;
		    line = strtok_r(NULL, "\n", &save)) {
			char *c1 = strchr(line, ':'), *c2;

			if (!c1 || !(c2 = strchr(c1 + 1, ':')))
				continue;
			if ((!*ctl && c2 == c1 + 1 && !strncmp(line, "0:", 2))
			    || (*ctl && (size_t)(c2 - c1 - 1) == strlen(ctl) &&
			    !strncmp(c1 + 1, ctl, strlen(ctl))))
				r = xstrdup(strcmp(c2 + 1, "/") ? c2 + 1 : "");
		}
	}
	buf_release(&b);
	free(path);
	return r ? r : xstrdup("");
}

/* cgroup_room: limit - usage of files lim and use in base + dir or base */
static int64_t
cgroup_room(const char *base, const char *dir, const char *lim,
    const char *use)
{
	int64_t l, u;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		char *pl = xasprintf("%s%s/%s", base, pass ? "" : dir, lim);
		char *pu = xasprintf("%s%s/%s", base, pass ? "" : dir, use);
		int ok = read_num(pl, &l) && read_num(pu, &u);

		free(pl), free(pu);
		if (ok)
			return l > u ? l - u : 0;
		if (!*dir)
			break;
	}
	return -1;
}

int64_t
ram_available(void)
{
	int64_t best = meminfo_available(), v;
	char *d2 = cgroup_dir(""), *d1 = cgroup_dir("memory");

	v = cgroup_room("/sys/fs/cgroup", d2, "memory.max",
	    "memory.current");
	if (v >= 0 && (best < 0 || v < best))
		best = v;
	v = cgroup_room("/sys/fs/cgroup/memory", d1,
	    "memory.limit_in_bytes", "memory.usage_in_bytes");
	if (v >= 0 && (best < 0 || v < best))
		best = v;
	free(d2), free(d1);
	return best;
}

/*
 * capture runs argv (found on PATH) with stdin and stderr on /dev/null and
 * its standard output (at most OUT_MAX bytes) in out: its exit status, or
 * -1 when it could not be run (127: not found)
 */
static int
capture(char *const argv[], struct buf *out)
{
	int fd[2], st;
	pid_t pid;
	char blk[4096];
	ssize_t n;

	if (pipe(fd) < 0)
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]), close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);

		dup2(fd[1], 1);
		if (nul >= 0)
			dup2(nul, 0), dup2(nul, 2);
		close(fd[0]), close(fd[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], blk, sizeof blk)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (out->len + (size_t)n <= OUT_MAX)
			buf_add(out, blk, (size_t)n);
	}
	close(fd[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* field: the next '|' or ',' separated field of *s, trimmed */
static char *
field(char **s, int sep)
{
	char *f = *s, *e;

	if (!f)
		return NULL;
	if ((e = strchr(f, sep)))
		*e = 0, *s = e + 1;
	else
		*s = NULL;
	while (*f == ' ')
		f++;
	for (e = f + strlen(f); e > f && (e[-1] == ' ' || e[-1] == '\r');)
		*--e = 0;
	return f;
}

static int
parse_i64(const char *s, int64_t *v)
{
	char *end;
	long long x;

	errno = 0;
	x = strtoll(s, &end, 10);
	if (!*s || *end || errno || x < 0)
		return -1;
	*v = x;
	return 0;
}

static void
gpu_add(struct gpu_inv *inv, const struct gpu_dev *g, struct arena *a)
{
	struct gpu_dev *v;

	if (inv->n == inv->cap) {
		inv->cap = inv->cap ? 2 * inv->cap : 8;
		v = arena_alloc(a, inv->cap * sizeof *v);
		if (inv->n)
			memcpy(v, inv->v, inv->n * sizeof *v);
		inv->v = v;
	}
	inv->v[inv->n++] = *g;
}

/*
 * nvidia_smi: gpu_inventory's GPUs; nvidia-smi missing or failing (no
 * driver, no device) is no GPU, an answer out of shape an error
 */
static int
nvidia_smi(struct gpu_inv *inv, struct arena *a)
{
	struct gpu_list *l = arena_alloc(a, sizeof *l);
	size_t i;

	if (gpu_inventory(l) < 0)
		return hw_err_code() == HW_EXIT_DATA ? -1 : 0;
	for (i = 0; i < l->n; i++) {
		struct gpu_dev g = { 0 };

		g.index = l->v[i].index;
		g.total = l->v[i].memory_total;
		g.free = l->v[i].memory_free;
		g.name = arena_strndup(a, l->v[i].name, strlen(l->v[i].name));
		g.driver = arena_strndup(a, l->v[i].driver,
		    strlen(l->v[i].driver));
		g.cc = arena_strndup(a, l->v[i].compute_cap,
		    strlen(l->v[i].compute_cap));
		gpu_add(inv, &g, a);
	}
	inv->source = "nvidia-smi";
	return 0;
}

/* known_gpu: a GPU model's memory per device in bytes, 0 if unknown */
static int64_t
known_gpu(const char *type)
{
	static const struct { const char *name; int64_t bytes; } t[] = {
		{ "l40s", 48000000000LL }, { "t4", 16000000000LL } };
	size_t i;

	for (i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcasecmp(type, t[i].name))
			return t[i].bytes;
	return 0;
}

/* gres: the GPUs of one partition's %G, "gpu:TYPE:N[(S:..)]" entries */
static void
gres(struct gpu_inv *inv, const char *part, char *g, struct arena *a)
{
	char *e, *p = g;
	int64_t i;

	while ((e = field(&p, ','))) {
		char *t1, *t2, *paren = strchr(e, '(');
		int64_t n;
		struct gpu_dev d = { 0 };

		if (paren)
			*paren = 0;
		if (strncmp(e, "gpu:", 4) || !(t1 = e + 4) ||
		    !(t2 = strchr(t1, ':')))
			continue;
		*t2++ = 0;
		if (parse_i64(t2, &n) < 0 || n > 64)
			continue;
		d.name = arena_strndup(a, t1, strlen(t1));
		d.total = d.free = known_gpu(t1);
		d.partition = part;
		for (i = 0; i < n; i++) {
			d.index = i;
			gpu_add(inv, &d, a);
		}
		if (!inv->partition)
			inv->partition = part;
	}
}

/*
 * sinfo: the partitions that are up; the GPUs of the first partition with
 * the most GPUs of a known model, one entry per device
 */
static int
sinfo(struct gpu_inv *inv, struct arena *a)
{
	static char *const argv[] = { "sinfo", "--noheader",
		"--format=%P|%G|%a|%m|%c", NULL };
	struct gpu_inv best = { 0 };
	struct buf b;
	char *s, *line, *save = NULL;
	int rc;

	buf_init(&b);
	if ((rc = capture(argv, &b)) != 0) {
		buf_release(&b);
		return rc == 127 ? 0 : hw_err_set(HW_EXIT_UNAVAILABLE,
		    "sinfo failed (status %d)", rc);
	}
	s = buf_cstr(&b);
	for (line = strtok_r(s, "\n", &save); line;
	    line = strtok_r(NULL, "\n", &save)) {
		char *p = line, *f[5];
		struct gpu_inv one = { 0 };
		int i;

		for (i = 0; i < 5; i++)
			f[i] = field(&p, '|');
		if (!f[4] || p || strcmp(f[2], "up"))
			continue;
		if (f[0][0] && f[0][strlen(f[0]) - 1] == '*')
			f[0][strlen(f[0]) - 1] = 0;
		gres(&one, arena_strndup(a, f[0], strlen(f[0])), f[1], a);
		if (one.n && one.v[0].total && one.n > best.n)
			best = one;
	}
	buf_release(&b);
	*inv = best;
	inv->source = "sinfo";
	return 0;
}

int
gpu_devices(struct gpu_inv *inv, struct arena *a)
{
	memset(inv, 0, sizeof *inv);
	if (nvidia_smi(inv, a) < 0)
		return -1;
	if (inv->n)
		return 0;
	memset(inv, 0, sizeof *inv);
	if (sinfo(inv, a) < 0)
		return -1;
	if (!inv->n)
		inv->source = NULL;
	return 0;
}

/* version_lt: dotted version a below b ("525.60.13", "8.9") */
static int
version_lt(const char *a, const char *b)
{
	while (*a || *b) {
		long x = strtol(a, (char **)&a, 10);
		long y = strtol(b, (char **)&b, 10);

		if (x != y)
			return x < y;
		if (*a == '.')
			a++;
		if (*b == '.')
			b++;
		if ((*a && (*a < '0' || *a > '9')) ||
		    (*b && (*b < '0' || *b > '9')))
			break;
	}
	return 0;
}

static int
cmp_free(const void *x, const void *y)
{
	const struct gpu_dev *a = x, *b = y;

	return a->free < b->free ? 1 : a->free > b->free ? -1 : 0;
}

static const char *
cc_needed(const struct model_info *mi)
{
	const char *p = mi->precision ? mi->precision : "";

	if (strcasestr(p, "fp8") || strcasestr(mi->id, "fp8"))
		return "8.9";
	if ((mi->model_type && !strcmp(mi->model_type, "gpt_oss")) ||
	    strcasestr(p, "mxfp4") || strcasestr(mi->id, "gpt-oss"))
		return "8.0";
	return "7.5";
}

/* gpu_memory: the tp largest devices' free memory, after the checks */
static int
gpu_memory(const struct model_info *mi, struct gpu_inv *inv,
    struct resource_plan *p)
{
	const char *cc = cc_needed(mi);
	size_t i;

	if (!inv->n)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "model '%s' runs on "
		    "vLLM, which needs a GPU: none found (nvidia-smi, sinfo)",
		    mi->id);
	if ((int64_t)inv->n < mi->tp)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "model '%s' needs %lld "
		    "GPUs (tensor parallel), %zu found", mi->id,
		    (long long)mi->tp, inv->n);
	qsort(inv->v, inv->n, sizeof *inv->v, cmp_free);
	p->eager = 1;
	for (i = 0; i < (size_t)mi->tp; i++) {
		const struct gpu_dev *g = &inv->v[i];

		if (g->cc && version_lt(g->cc, cc))
			return hw_err_set(HW_EXIT_UNAVAILABLE, "GPU %lld "
			    "('%s'): compute capability %s, model '%s' "
			    "needs %s", (long long)g->index, g->name, g->cc,
			    mi->id, cc);
		if (g->driver && version_lt(g->driver, "525.60.13"))
			return hw_err_set(HW_EXIT_UNAVAILABLE, "GPU %lld: "
			    "driver %s, vLLM needs 525.60.13 or later",
			    (long long)g->index, g->driver);
		p->available += g->free;
		if (g->free > 20 * GIB)
			p->eager = 0;
	}
	return 0;
}

void
resource_budgets(struct resource_plan *p)
{
	int64_t out = p->context / 8;

	out = out < 512 ? 512 : out > 4096 ? 4096 : out;
	if (out > p->context - 16384)
		out = p->context - 16384;
	p->output = out;
	p->input = p->context - out;
	p->message_chars = 4 * p->input > 30000 ? 4 * p->input : 30000;
}

/* choose: the context from what is usable (0.8 of available memory) */
static int
choose(const struct model_info *mi, struct resource_plan *p)
{
	int64_t raw;
	size_t i;

	if (mi->size <= 0 || p->available <= 0) {
		p->context = MODEL_CONTEXT_MIN;
		return 0;
	}
	/* floor((0.8 avail - weights - fixed) / 128 KiB), exactly */
	raw = 4 * p->available - 5 * (p->weights + p->fixed);
	raw = raw < 0 ? -1 : raw / (5 * TOKEN_BYTES);
	p->room = raw;
	if (raw > mi->context)
		raw = mi->context;
	if (raw < MODEL_CONTEXT_MIN)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "model '%s' does not "
		    "fit: %lld bytes available leave room for %lld tokens of "
		    "context, %d needed", mi->id, (long long)p->available,
		    (long long)(raw < 0 ? 0 : raw), MODEL_CONTEXT_MIN);
	for (i = sizeof tiers / sizeof tiers[0]; i-- > 0;)
		if (tiers[i] <= raw)
			break;
	p->context = tiers[i];
	return 0;
}

int
resource_plan(const struct model_info *mi, struct gpu_inv *inv,
    int64_t ram, struct resource_plan *p)
{
	memset(p, 0, sizeof *p);
	p->tp = mi->gguf ? 1 : mi->tp;
	if (mi->gguf) {
		p->fixed = 4 * GIB;
		p->weights = mi->size / 4 * 5 + mi->size % 4 * 5 / 4;
		p->memory = "ram";
		p->available = ram;
	} else {
		p->fixed = 2 * GIB;
		p->weights = mi->size / 100 * 115 + mi->size % 100 * 115 / 100;
		p->memory = "gpu";
		if (gpu_memory(mi, inv, p) < 0)
			return -1;
	}
	if (!mi->gguf && !strcmp(mi->qualification, "qualified") &&
	    mi->min_gpu_mem > 0) {
		if (p->available < mi->min_gpu_mem * mi->tp)
			return hw_err_set(HW_EXIT_UNAVAILABLE, "model '%s' "
			    "needs %lld bytes of GPU memory, %lld available",
			    mi->id, (long long)(mi->min_gpu_mem * mi->tp),
			    (long long)p->available);
		p->context = mi->context;
	} else if (choose(mi, p) < 0) {
		return -1;
	}
	p->estimate = p->weights + p->fixed + p->context * TOKEN_BYTES;
	resource_budgets(p);
	return 0;
}

struct jval *
resource_plan_json(const struct model_info *mi, const struct gpu_inv *inv,
    int64_t ram, const struct resource_plan *p, struct arena *a)
{
	struct jval *o = json_obj(a), *g = json_new(a, J_ARRAY);
	size_t i;

	json_add(a, o, "schema_version", json_str(a, RESOURCE_PLAN_SCHEMA));
	json_add(a, o, "model_id", json_str(a, mi->id));
	json_add(a, o, "runtime", json_str(a, mi->runtime));
	json_add(a, o, "model_size_bytes", json_int(a, mi->size));
	json_add(a, o, "memory", json_str(a, p->memory));
	json_add(a, o, "ram_available_bytes", ram < 0 ?
	    json_new(a, J_NULL) : json_int(a, ram));
	json_add(a, o, "available_bytes", p->available <= 0 ?
	    json_new(a, J_NULL) : json_int(a, p->available));
	json_add(a, o, "estimate_bytes", json_int(a, p->estimate));
	json_add(a, o, "context_window", json_int(a, p->context));
	json_add(a, o, "max_input_tokens", json_int(a, p->input));
	json_add(a, o, "max_output_tokens", json_int(a, p->output));
	json_add(a, o, "max_message_chars", json_int(a, p->message_chars));
	json_add(a, o, "tensor_parallel_size", json_int(a, p->tp));
	json_add(a, o, "enforce_eager", json_bool(a, !mi->gguf && p->eager));
	json_add(a, o, "gpu_source", inv->source ? json_str(a, inv->source) :
	    json_new(a, J_NULL));
	for (i = 0; i < inv->n; i++) {
		const struct gpu_dev *d = &inv->v[i];
		struct jval *x = json_obj(a);

		json_add(a, x, "index", json_int(a, d->index));
		json_add(a, x, "name", json_str(a, d->name));
		json_add(a, x, "memory_total_bytes", json_int(a, d->total));
		json_add(a, x, "memory_free_bytes", json_int(a, d->free));
		json_add(a, x, "driver_version", d->driver ?
		    json_str(a, d->driver) : json_new(a, J_NULL));
		json_add(a, x, "compute_capability", d->cc ?
		    json_str(a, d->cc) : json_new(a, J_NULL));
		if (d->partition)
			json_add(a, x, "partition", json_str(a, d->partition));
		json_push(a, g, x);
	}
	json_add(a, o, "gpus", g);
	return o;
}
