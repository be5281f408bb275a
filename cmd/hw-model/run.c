/* run.c - hw-model run: the runtime launcher's six stages */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "conf/conf.h"
#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"
#define MODELS ".heartwood/models"

static const char run_usage[] =
    "usage: hw-model run [MODEL-ID] [--runtime llama-cpp|vllm] [--port N]\n"
    "                [--startup-timeout SECONDS] [--slurm [--yes]]\n";

struct run {
	const char *id, *runtime;
	int64_t port, timeout;
	int slurm, yes;
	struct model_info mi;
	struct resource_plan plan;
	struct gpu_inv inv;
	struct launch l;
	char *model_dir, *cache_dir, *log;
	struct arena a;
};

/* on_path: 1 when prog is an executable file in a directory of PATH */
static int
on_path(const char *prog)
{
	const char *path = getenv("PATH");
	char *p, *dir, *save = NULL;
	int found = 0;

	if (!path)
		return 0;
	p = xstrdup(path);
	for (dir = strtok_r(p, ":", &save); dir && !found;
	    dir = strtok_r(NULL, ":", &save)) {
		char *f = xasprintf("%s/%s", dir, prog);
		struct stat st;

		found = stat(f, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(f, X_OK) == 0;
		free(f);
	}
	free(p);
	return found;
}

/* verify_runtime: heartwood-vllm __heartwood_verify_runtime__ passes */
static int
verify_runtime(struct run *r)
{
	struct launch v = { .log_fd = r->l.log_fd };
	int rc;

	memcpy(v.envp, r->l.envp, sizeof v.envp);
	v.argv[0] = (char *)"heartwood-vllm";
	v.argv[1] = (char *)"__heartwood_verify_runtime__";
	if (launch_start(&v) < 0)
		return -1;
	while (waitpid(v.pid, &v.status, 0) < 0)
		if (errno != EINTR)
			return hw_err_sys("cannot wait for heartwood-vllm");
	rc = WIFEXITED(v.status) ? WEXITSTATUS(v.status) : 128;
	if (rc != 0)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "the vLLM runtime is "
		    "not usable here: 'heartwood-vllm "
		    "__heartwood_verify_runtime__' failed (status %d; see "
		    "%s)", rc, r->log);
	return 0;
}

/* stage 1: the model, verified; then its plan */
static int
stage_model(struct run *r)
{
	if (local_selection(&r->a, &r->id, r->port ? NULL : &r->port) < 0)
		return -1;
	if (model_info_load(MODELS, r->id, 1, &r->mi, &r->a) < 0)
		return hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
	if (r->runtime && strcmp(r->runtime, r->mi.runtime))
		return hw_err_set(HW_EXIT_CONFIG, "model '%s' runs on %s, not "
		    "%s", r->id, r->mi.runtime, r->runtime);
	if (!(r->model_dir = realpath(r->mi.dir, NULL)))
		return hw_err_sys("cannot resolve '%s'", r->mi.dir);
	fprintf(stderr, "hw-model: model '%s' verified\n", r->id);
	return 0;
}

/* confirmed: the researcher said yes to the srun command line */
static int
confirmed(struct run *r)
{
	char line[16];
	size_t i;

	fputs("hw-model: on this Slurm job, stage the model to "
	    "$LOCAL_SCRATCH_JOB and launch:\n ", stderr);
	for (i = 0; i < r->l.argc; i++)
		fprintf(stderr, " %s", r->l.argv[i]);
	fputs("\n", stderr);
	if (r->yes)
		return 0;
	fputs("hw-model: launch it through srun? [y/N] ", stderr);
	fflush(stderr);
	if (!fgets(line, sizeof line, stdin) || (strcmp(line, "y\n") &&
	    strcmp(line, "yes\n") && strcmp(line, "y") && strcmp(line, "yes")))
		return hw_err_set(HW_EXIT_FAIL, "not confirmed: nothing was "
		    "staged or started");
	return 0;
}

/* stage 3: on Slurm, the model staged to node-local scratch, verified */
static int
stage_scratch(struct run *r)
{
	const char *scratch = getenv("LOCAL_SCRATCH_JOB");
	int reused;
	char *dir;

	if (!r->slurm)
		return 0;
	if (!on_path("srun"))
		return hw_err_set(HW_EXIT_UNAVAILABLE, "srun is not installed "
		    "(not on PATH)");
	if (!scratch || scratch[0] != '/')
		return hw_err_set(HW_EXIT_OSFILE, "LOCAL_SCRATCH_JOB is %s: "
		    "the node-local scratch of the job is needed", scratch ?
		    "not an absolute path" : "not set");
	free(r->model_dir);
	r->model_dir = xasprintf("%s/heartwood-models/%s", scratch, r->id);
	launch_release(&r->l);
	r->l.model_dir = r->model_dir;
	launch_command(&r->l);
	launch_environment(&r->l);
	if (confirmed(r) < 0)
		return -1;
	if (!(dir = model_stage(r->mi.dir, r->id, r->mi.size, scratch,
	    &manage_cancelled, &reused)))
		return -1;
	fprintf(stderr, "hw-model: model '%s' %s %s and verified\n", r->id,
	    reused ? "already staged in" : "staged to", dir);
	free(dir);
	return launch_open_log(&r->l);
}

/* stage 2: the plan, the runtime's preflight, the port, the log */
static int
stage_preflight(struct run *r)
{
	char cwd[PATH_MAX];
	int64_t ram;
	int rc;

	if (local_plan(&r->mi, &r->inv, &ram, &r->plan, &r->a) < 0)
		return -1;
	if (!getcwd(cwd, sizeof cwd))
		return hw_err_sys("cannot get the current directory");
	r->cache_dir = xasprintf("%s/" LAUNCH_CACHE, cwd);
	r->log = xstrdup(LAUNCH_LOG);
	r->l = (struct launch){ .mi = &r->mi, .plan = &r->plan,
		.model_dir = r->model_dir, .cache_dir = r->cache_dir,
		.log = r->log, .port = r->port, .timeout_s = r->timeout,
		.log_fd = -1, .slurm = r->slurm };
	launch_command(&r->l);
	launch_environment(&r->l);
	if (!on_path(r->mi.gguf ? "llama-server" : "heartwood-vllm"))
		return hw_err_set(HW_EXIT_UNAVAILABLE, "the runtime '%s' is "
		    "not installed (not on PATH)", r->mi.gguf ?
		    "llama-server" : "heartwood-vllm");
	if (launch_port_free(r->port) < 0 || launch_open_log(&r->l) < 0)
		return -1;
	if (mkdir(r->cache_dir, 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create '%s'", r->cache_dir);
	dprintf(r->l.log_fd, "--- hw-model run %s: context %lld\n", r->id,
	    (long long)r->plan.context);
	rc = r->mi.gguf ? 0 : verify_runtime(r);
	return rc;
}

/* stages 4 and 5: the server started and healthy */
static int
stage_start(struct run *r)
{
	if (launch_start(&r->l) < 0)
		return -1;
	fprintf(stderr, "hw-model: started '%s' (pid %ld) on 127.0.0.1:%lld, "
	    "log %s\n", r->l.argv[0], (long)r->l.pid, (long long)r->port,
	    r->log);
	if (launch_wait_ready(&r->l, &manage_cancelled) == 0)
		return 0;
	if (hw_err_code() == HW_EXIT_INTR) {
		launch_stop(&r->l);
		return -1;
	}
	launch_stop(&r->l);
	hw_err_print(PROG);
	launch_log_tail(r->log, stderr);
	return hw_err_set(HW_EXIT_NOTREADY, "model '%s' did not become "
	    "ready", r->id);
}

static void
ready_line(struct run *r)
{
	struct jval *o = json_obj(&r->a);
	char url[64];

	snprintf(url, sizeof url, "http://127.0.0.1:%lld/v1",
	    (long long)r->port);
	json_add(&r->a, o, "event", json_str(&r->a, "ready"));
	json_add(&r->a, o, "model_id", json_str(&r->a, r->id));
	json_add(&r->a, o, "runtime", json_str(&r->a, r->mi.runtime));
	json_add(&r->a, o, "served_model_id", json_str(&r->a,
	    LAUNCH_SERVED_ID));
	json_add(&r->a, o, "base_url", json_str(&r->a, url));
	json_add(&r->a, o, "context_window", json_int(&r->a,
	    r->plan.context));
	json_add(&r->a, o, "max_input_tokens", json_int(&r->a,
	    r->plan.input));
	json_add(&r->a, o, "max_output_tokens", json_int(&r->a,
	    r->plan.output));
	json_add(&r->a, o, "pid", json_int(&r->a, r->l.pid));
	json_add(&r->a, o, "log", json_str(&r->a, r->log));
	manage_print_json(o);
	fflush(stdout);
}

/*
 * route_check (stage 5): the agent's saved route must name this runtime,
 * or the agent would not use it; a warning, since HW_MODEL may be meant
 */
static void
route_check(struct run *r)
{
	const struct jval *m;
	struct jval *cfg;
	char url[64];

	snprintf(url, sizeof url, "http://127.0.0.1:%lld/v1",
	    (long long)r->port);
	if (config_load(&r->a, &cfg) < 0)
		return;
	m = json_get(cfg, "model");
	if (!json_is_str(json_get(m, "base_url"), url) ||
	    !json_is_str(json_get(m, "model_id"), LAUNCH_SERVED_ID))
		fprintf(stderr, "hw-model: warning: the agent's route is not "
		    "this runtime: run 'hw-model select %s%s' to point it "
		    "here\n", r->id, r->port == LAUNCH_PORT ? "" :
		    " --port N");
}

/* stage 6: in the foreground until a signal or the runtime's exit */
static int
stage_serve(struct run *r)
{
	route_check(r);
	ready_line(r);
	fprintf(stderr, "hw-model: model '%s' ready at http://127.0.0.1:%lld"
	    "/v1 as %s; interrupt to stop it\n", r->id, (long long)r->port,
	    LAUNCH_SERVED_ID);
	while (!manage_cancelled && !launch_child_exited(&r->l))
		usleep(100000);
	if (!manage_cancelled) {
		launch_log_tail(r->log, stderr);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "the runtime '%s' "
		    "exited (%s %d)", r->l.argv[0],
		    WIFSIGNALED(r->l.status) ? "signal" : "status",
		    WIFSIGNALED(r->l.status) ? WTERMSIG(r->l.status) :
		    WEXITSTATUS(r->l.status));
	}
	if (launch_stop(&r->l))
		fprintf(stderr, "hw-model: '%s' did not stop within %d s: "
		    "killed\n", r->l.argv[0], LAUNCH_STOP_SECONDS);
	fprintf(stderr, "hw-model: stopped '%s'\n", r->l.argv[0]);
	return 0;
}

static int
parse_run(struct run *r, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "runtime", required_argument, NULL, 'r' },
		{ "port", required_argument, NULL, 'p' },
		{ "startup-timeout", required_argument, NULL, 't' },
		{ "slurm", no_argument, NULL, 's' },
		{ "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'r' && (!strcmp(optarg, "llama-cpp") ||
		    !strcmp(optarg, "vllm")))
			r->runtime = optarg;
		else if (c == 'p' && parse_seq(optarg, &r->port) == 0 &&
		    r->port > 0 && r->port <= 65535)
			;
		else if (c == 't' && parse_seq(optarg, &r->timeout) == 0 &&
		    r->timeout > 0 && r->timeout <= 86400)
			;
		else if (c == 's')
			r->slurm = 1;
		else if (c == 'y')
			r->yes = 1;
		else if (c == 'h')
			return fputs(run_usage, stdout), 1;
		else
			return manage_usage_err(run_usage), -1;
	}
	if (argc - optind > 1 || (r->yes && !r->slurm))
		return manage_usage_err(run_usage), -1;
	r->id = argc > optind ? argv[optind] : NULL;
	return 0;
}

int
manage_run(int argc, char **argv)
{
	struct run r = { .timeout = 600 };
	int rc;

	if ((rc = parse_run(&r, argc, argv)) != 0)
		return rc > 0 ? prog_finish(PROG, 0) : HW_EXIT_USAGE;
	arena_init(&r.a);
	manage_catch_signals();
	rc = stage_model(&r) < 0 || stage_preflight(&r) < 0 ||
	    stage_scratch(&r) < 0 || stage_start(&r) < 0 ||
	    stage_serve(&r) < 0 ? -1 : 0;
	launch_stop(&r.l);
	launch_release(&r.l);
	model_info_release(&r.mi);
	free(r.model_dir), free(r.cache_dir), free(r.log);
	arena_release(&r.a);
	return rc == 0 ? prog_finish(PROG, 0) : prog_fail(PROG);
}
