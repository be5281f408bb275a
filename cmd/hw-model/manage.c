/* manage.c - hw-model inspect and download */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"
#define MODELS ".heartwood/models"


static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void
manage_on_progress(void *arg, const char *path, int64_t have, int64_t total,
    int done)
{
	struct progress *p = arg;
	double t = now();
	struct buf b;

	if (!done && t - p->last < 0.25)
		return;
	p->last = t;
	buf_init(&b);
	if (p->mode == PROGRESS_JSON) {
		buf_adds(&b, "{\"event\":\"");
		buf_adds(&b, done ? "verified" : "progress");
		buf_adds(&b, "\",\"path\":");
		json_canon_str(&b, path, strlen(path));
		buf_printf(&b, ",\"bytes\":%lld,\"total\":%lld}\n",
		    (long long)have, (long long)total);
		fwrite(b.p, 1, b.len, stderr);
	} else if (p->mode == PROGRESS_BAR) {
		int pct = total ? (int)(100 * have / total) : 100;

		tty_escape(&b, path, strlen(path), 0);
		fprintf(stderr, "\r%-40.40s %3d%% %8.1f MiB%s", buf_cstr(&b),
		    pct, (double)have / 1048576.0, done ? "\n" : "");
	}
	fflush(stderr);
	buf_release(&b);
}

int
manage_print_json(const struct jval *v)
{
	struct buf b;

	buf_init(&b);
	json_canon(&b, v);
	buf_addc(&b, '\n');
	fwrite(b.p, 1, b.len, stdout);
	buf_release(&b);
	return 0;
}

int
manage_usage_err(const char *u)
{
	fputs(u, stderr);
	return HW_EXIT_USAGE;
}

static const char inspect_usage[] =
    "usage: hw-model inspect OWNER/NAME [--revision REV]\n"
    "                [--runtime llama-cpp|vllm]\n";

static int
runtime_parse(const char *s, enum model_runtime *rt)
{
	if (!strcmp(s, "llama-cpp"))
		*rt = RUNTIME_LLAMA;
	else if (!strcmp(s, "vllm"))
		*rt = RUNTIME_VLLM;
	else
		return -1;
	return 0;
}

/* vllm_present: the vLLM runtime on PATH (heartwood-vllm or vllm) */
static int
vllm_present(void)
{
	const char *path = getenv("PATH");
	char *p, *dir, *save = NULL;
	int found = 0;

	if (!path)
		return 0;
	p = xstrdup(path);
	for (dir = strtok_r(p, ":", &save); dir && !found;
	    dir = strtok_r(NULL, ":", &save)) {
		char *a = xasprintf("%s/heartwood-vllm", dir);
		char *b = xasprintf("%s/vllm", dir);

		found = access(a, X_OK) == 0 || access(b, X_OK) == 0;
		free(a), free(b);
	}
	free(p);
	return found;
}

int
manage_inspect(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "revision", required_argument, NULL, 'r' },
		{ "runtime", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	enum model_runtime rt = RUNTIME_AUTO;
	const char *rev = NULL;
	struct jval *plan;
	struct arena a;
	struct hub h;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'r')
			rev = optarg;
		else if (c == 't' && runtime_parse(optarg, &rt) == 0)
			;
		else if (c == 'h')
			return fputs(inspect_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(inspect_usage);
	}
	if (argc - optind != 1)
		return manage_usage_err(inspect_usage);
	if (rt == RUNTIME_AUTO)
		rt = vllm_present() ? RUNTIME_VLLM : RUNTIME_LLAMA;
	if (hub_init(&h) < 0)
		return prog_fail(PROG);
	arena_init(&a);
	plan = model_inspect(&h, argv[optind], rev, rt, &a);
	if (plan)
		manage_print_json(plan);
	hub_release(&h);
	arena_release(&a);
	return plan ? prog_finish(PROG, 0) : prog_fail(PROG);
}

static const char download_usage[] =
    "usage: hw-model download PLAN [--model-id ID]\n"
    "                [--progress auto|bar|json|none]\n"
    "       hw-model download CATALOG-ID [--catalog FILE] [--snapshots FILE]\n"
    "                [--progress auto|bar|json|none]\n";

int
manage_progress_parse(const char *s, int *mode)
{
	if (!strcmp(s, "auto"))
		*mode = isatty(2) ? PROGRESS_BAR : PROGRESS_NONE;
	else if (!strcmp(s, "bar"))
		*mode = PROGRESS_BAR;
	else if (!strcmp(s, "json"))
		*mode = PROGRESS_JSON;
	else if (!strcmp(s, "none"))
		*mode = PROGRESS_NONE;
	else
		return -1;
	return 0;
}

int
manage_mkdir_heartwood(void)
{
	if (mkdir(".heartwood", 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create '.heartwood'");
	return ensure_dir(".heartwood");
}

static struct jval *
read_plan(const char *path, struct arena *a)
{
	struct buf b;
	struct jval *v;
	char err[160];

	buf_init(&b);
	if ((!strcmp(path, "-") ? read_fd(0, "stdin", 64u << 20, &b) :
	    read_file(path, 64u << 20, &b)) < 0) {
		buf_release(&b);
		return NULL;
	}
	if (!(v = json_parse(a, b.p ? b.p : "", b.len, err, sizeof err)))
		hw_err_set(HW_EXIT_DATA, "invalid plan '%s': %s", path, err);
	buf_release(&b);
	return v;
}

/*
 * pick: the plan and candidate to download: catalog id arg (never "-"
 * and without '/') when the catalog lists it, else the plan file arg;
 * the hub is set up (*hub_up) for a catalog id, whose plan asks it
 */
static const struct jval *
pick(const char *arg, const char *id, struct catalog_files *f,
    struct jval **plan, struct hub *h, int *hub_up, struct arena *a)
{
	const struct jval *cat = NULL;
	struct stat st;
	int snap;

	if (strcmp(arg, "-") && !strchr(arg, '/')) {
		cat = catalog_open(f, a);
		if (cat && catalog_entry(cat, arg, &snap)) {
			if (id)
				return hw_err_set(HW_EXIT_USAGE, "--model-id "
				    "applies to a plan, not to catalog entry "
				    "'%s'", arg), NULL;
			if (hub_init(h) < 0)
				return NULL;
			*hub_up = 1;
			*plan = model_catalog_plan(h, cat, arg, a);
			return *plan ? json_get(*plan, "candidates")->u.a[0] :
			    NULL;
		}
		if (stat(arg, &st) < 0 && errno == ENOENT) {
			if (cat)
				hw_err_set(HW_EXIT_NOINPUT, "no catalog entry "
				    "or plan file '%s' (hw-model catalog "
				    "lists the entries)", arg);
			return NULL;
		}
	}
	if (!(*plan = read_plan(arg, a)))
		return NULL;
	return model_plan_pick(*plan, id);
}

/* small: a warning for a catalog model the agent cannot use */
static void
small(const struct jval *plan)
{
	int64_t ctx;

	if (json_get(plan, "catalog_id") && json_get_int(plan,
	    "context_window", &ctx) == 0 && ctx < MODEL_CONTEXT_MIN)
		fprintf(stderr, PROG ": warning: '%s' has a context window of "
		    "%lld tokens, under the agent's %d: it is for load and "
		    "query tests only, and hw-model select refuses it\n",
		    json_get_str(plan, "catalog_id"), (long long)ctx,
		    MODEL_CONTEXT_MIN);
}

int
manage_download(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "model-id", required_argument, NULL, 'm' },
		{ "progress", required_argument, NULL, 'p' },
		{ "catalog", required_argument, NULL, 'c' },
		{ "snapshots", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct progress pr = { isatty(2) ? PROGRESS_BAR : PROGRESS_NONE, 0 };
	struct catalog_files f = { 0 };
	const struct jval *cand = NULL;
	const char *id = NULL;
	struct jval *plan = NULL, *r = NULL;
	struct arena a;
	struct hub h;
	int c, up = 0;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'm')
			id = optarg;
		else if (c == 'p' && manage_progress_parse(optarg, &pr.mode) == 0)
			;
		else if (c == 'c')
			f.catalog = optarg;
		else if (c == 's')
			f.snapshots = optarg;
		else if (c == 'h')
			return fputs(download_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(download_usage);
	}
	if (argc - optind != 1)
		return manage_usage_err(download_usage);
	arena_init(&a);
	if ((cand = pick(argv[optind], id, &f, &plan, &h, &up, &a)) &&
	    (up || (up = hub_init(&h) == 0)) &&
	    manage_mkdir_heartwood() == 0) {
		h.progress = pr.mode == PROGRESS_NONE ? NULL :
		    manage_on_progress;
		h.progress_arg = &pr;
		small(plan);
		r = model_download(&h, plan, cand, MODELS, &a);
	}
	if (r)
		manage_print_json(r);
	free(f.own[0]), free(f.own[1]);
	if (up)
		hub_release(&h);
	arena_release(&a);
	return r ? prog_finish(PROG, 0) : prog_fail(PROG);
}

static const char import_usage[] =
    "usage: hw-model import PATH --source-repository OWNER/NAME\n"
    "                --source-revision COMMIT --license-posture TEXT\n"
    "                [--context-window N] [--progress auto|bar|json|none]\n";

volatile int manage_cancelled;

static void
on_signal(int sig)
{
	(void)sig;
	manage_cancelled = 1;
}

void
manage_catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int
manage_import(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "source-repository", required_argument, NULL, 'r' },
		{ "source-revision", required_argument, NULL, 's' },
		{ "license-posture", required_argument, NULL, 'l' },
		{ "context-window", required_argument, NULL, 'c' },
		{ "progress", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct progress pr = { isatty(2) ? PROGRESS_BAR : PROGRESS_NONE, 0 };
	struct model_import im = { .cancel = &manage_cancelled };
	struct jval *r = NULL;
	struct arena a;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'r')
			im.repo = optarg;
		else if (c == 's')
			im.rev = optarg;
		else if (c == 'l')
			im.license = optarg;
		else if (c == 'c' && parse_seq(optarg, &im.context) == 0 &&
		    im.context > 0)
			;
		else if (c == 'p' && manage_progress_parse(optarg, &pr.mode) == 0)
			;
		else if (c == 'h')
			return fputs(import_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(import_usage);
	}
	if (argc - optind != 1 || !im.repo || !im.rev || !im.license)
		return manage_usage_err(import_usage);
	im.path = argv[optind];
	im.progress = pr.mode == PROGRESS_NONE ? NULL : manage_on_progress;
	im.progress_arg = &pr;
	manage_catch_signals();
	arena_init(&a);
	if (manage_mkdir_heartwood() == 0)
		r = model_import(&im, MODELS, &a);
	if (r)
		manage_print_json(r);
	arena_release(&a);
	return r ? prog_finish(PROG, 0) : prog_fail(PROG);
}
