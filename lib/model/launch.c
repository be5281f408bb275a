/*
 * launch.c - a model runtime started on loopback: its command line, its
 * allowlisted environment, its log, the health check and the stop
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"

#define BODY_MAX (1u << 20)

extern char **environ;

static void
arg(struct launch *l, const char *s)
{
	if (l->argc + 1 >= sizeof l->argv / sizeof l->argv[0])
		abort();
	l->argv[l->argc++] = xstrdup(s);
	l->argv[l->argc] = NULL;
}

static void
argn(struct launch *l, long long v)
{
	char s[32];

	snprintf(s, sizeof s, "%lld", v);
	arg(l, s);
}

void
launch_command(struct launch *l)
{
	char *p;

	if (l->slurm) {
		arg(l, "srun");
		arg(l, "--nodes=1");
		arg(l, "--ntasks=1");
		if (!l->mi->gguf) {
			p = xasprintf("--gpus=%lld", (long long)l->plan->tp);
			arg(l, p);
			free(p);
		}
	}
	if (l->mi->gguf) {
		arg(l, "llama-server");
		arg(l, "--model");
		p = path_join(l->model_dir, l->mi->artifact);
		arg(l, p);
		free(p);
		arg(l, "--jinja");
		arg(l, "--alias");
		arg(l, LAUNCH_SERVED_ID);
		arg(l, "--host");
		arg(l, "127.0.0.1");
		arg(l, "--port");
		argn(l, l->port);
		arg(l, "--ctx-size");
		argn(l, l->plan->context);
		return;
	}
	arg(l, "heartwood-vllm");
	arg(l, "serve");
	arg(l, l->model_dir);
	arg(l, "--host");
	arg(l, "127.0.0.1");
	arg(l, "--port");
	argn(l, l->port);
	arg(l, "--served-model-name");
	arg(l, LAUNCH_SERVED_ID);
	arg(l, "--max-model-len");
	argn(l, l->plan->context);
	arg(l, "--tensor-parallel-size");
	argn(l, l->plan->tp);
	arg(l, "--enable-auto-tool-choice");
	arg(l, "--tool-call-parser");
	arg(l, l->mi->parser ? l->mi->parser : "hermes");
	if (l->plan->eager)
		arg(l, "--enforce-eager");
}

static void
env_add(struct launch *l, const char *k, const char *v)
{
	if (l->envc + 1 >= sizeof l->envp / sizeof l->envp[0])
		abort();
	l->envp[l->envc++] = xasprintf("%s=%s", k, v);
	l->envp[l->envc] = NULL;
}

/* the variables a runtime may inherit: no credential, no proxy */
static const char *const keep[] = { "PATH", "HOME", "USER", "LOGNAME",
	"LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "CUDA_VISIBLE_DEVICES",
	"NVIDIA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH",
	"OMP_NUM_THREADS", "SLURM_JOB_ID", "SLURM_STEP_GPUS",
	"SLURM_JOB_GPUS", NULL };

void
launch_environment(struct launch *l)
{
	static const char *const caches[][2] = {
		{ "HF_HOME", "huggingface" },
		{ "HF_HUB_CACHE", "huggingface/hub" },
		{ "TORCH_HOME", "torch" },
		{ "XDG_CACHE_HOME", "xdg" },
		{ "TRITON_CACHE_DIR", "triton" },
		{ "VLLM_CACHE_ROOT", "vllm" } };
	size_t i;
	char *p;

	for (i = 0; keep[i]; i++)
		if ((!l->slurm || strncmp(keep[i], "SLURM_", 6)) &&
		    getenv(keep[i]))
			env_add(l, keep[i], getenv(keep[i]));
	for (i = 0; l->slurm && environ[i]; i++)
		if (!strncmp(environ[i], "SLURM_", 6) && strchr(environ[i],
		    '=') && l->envc + 16 < sizeof l->envp / sizeof l->envp[0]) {
			l->envp[l->envc++] = xstrdup(environ[i]);
			l->envp[l->envc] = NULL;
		}
	for (i = 0; i < sizeof caches / sizeof caches[0]; i++) {
		p = xasprintf("%s/%s", l->cache_dir, caches[i][1]);
		env_add(l, caches[i][0], p);
		free(p);
	}
	env_add(l, "HF_HUB_OFFLINE", "1");
	env_add(l, "TRANSFORMERS_OFFLINE", "1");
	env_add(l, "HF_HUB_DISABLE_TELEMETRY", "1");
	env_add(l, "VLLM_NO_USAGE_STATS", "1");
	env_add(l, "DO_NOT_TRACK", "1");
	if (!l->mi->gguf) {
		env_add(l, "VLLM_USE_FLASHINFER_SAMPLER", "0");
		env_add(l, "VLLM_V1_USE_OUTLINES_CACHE", "0");
	}
}

int
launch_port_free(int64_t port)
{
	struct sockaddr_in sa;
	int fd, one = 1, rc = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return hw_err_sys("cannot create a socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		rc = hw_err_set(HW_EXIT_UNAVAILABLE, "port 127.0.0.1:%lld is "
		    "taken: %s; stop what listens there or choose --port",
		    (long long)port, strerror(errno));
	close(fd);
	return rc;
}

/* mkdirs: each directory of path, 0700, never through a symlink */
static int
mkdirs(const char *path)
{
	char *p = xstrdup(path), *s;
	int rc = 0;

	for (s = p + 1; rc == 0; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = 0;
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			rc = hw_err_sys("cannot create '%s'", p);
		else if (ensure_dir(p) < 0)
			rc = -1;
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

int
launch_open_log(struct launch *l)
{
	struct stat st;
	char *slash = strrchr(l->log, '/');
	char *dir = slash ? xasprintf("%.*s", (int)(slash - l->log),
	    l->log) : xstrdup(".");
	int fd;

	if (mkdirs(dir) < 0) {
		free(dir);
		return -1;
	}
	free(dir);
	fd = open(l->log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW |
	    O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0)
		return hw_err_sys("cannot open the log '%s'", l->log);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || st.st_nlink != 1 ||
	    fchmod(fd, 0600) < 0) {
		close(fd);
		return hw_err_set(HW_EXIT_IO, "refusing the log '%s': not a "
		    "regular file of yours", l->log);
	}
	l->log_fd = fd;
	return 0;
}

int
launch_start(struct launch *l)
{
	int nul, err[2];
	ssize_t n;
	int e = 0;

	if (pipe2(err, O_CLOEXEC) < 0)
		return hw_err_sys("cannot create a pipe");
	if ((l->pid = fork()) < 0) {
		close(err[0]), close(err[1]);
		return hw_err_sys("cannot fork");
	}
	if (l->pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		nul = open("/dev/null", O_RDONLY);
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(l->log_fd, 1) < 0 ||
		    dup2(l->log_fd, 2) < 0)
			_exit(127);
		execvpe(l->argv[0], l->argv, l->envp);
		e = errno;
		n = write(err[1], &e, sizeof e);
		(void)n;
		_exit(127);
	}
	setpgid(l->pid, l->pid);
	close(err[1]);
	while ((n = read(err[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(err[0]);
	if (n == sizeof e) {
		waitpid(l->pid, NULL, 0);
		l->pid = 0;
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run '%s': %s",
		    l->argv[0], strerror(e));
	}
	return 0;
}

int
launch_probe(int64_t port)
{
	CURL *c = curl_easy_init();
	struct jval *v, *data;
	struct arena a;
	struct buf b;
	struct buf_sink sink = { &b, BODY_MAX, 0 };
	char url[64], err[64];
	long code = 0;
	int ok = 0;
	size_t i;

	if (!c)
		return 0;
	buf_init(&b);
	arena_init(&a);
	snprintf(url, sizeof url, "http://127.0.0.1:%lld/v1/models",
	    (long long)port);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_PROXY, "");
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	if (curl_easy_perform(c) == CURLE_OK &&
	    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK &&
	    code == 200 && (v = json_parse(&a, b.p ? b.p : "", b.len, err,
	    sizeof err)) && (data = json_get(v, "data")) &&
	    data->t == J_ARRAY)
		for (i = 0; i < data->n && !ok; i++)
			ok = json_is_str(json_get(data->u.a[i], "id"),
			    LAUNCH_SERVED_ID);
	curl_easy_cleanup(c);
	arena_release(&a);
	buf_release(&b);
	return ok;
}

/* reaped: 1 when the child has exited (its status in l->status) */
static int
reaped(struct launch *l)
{
	if (l->pid <= 0)
		return 1;
	if (waitpid(l->pid, &l->status, WNOHANG) == l->pid) {
		l->pid = 0;
		return 1;
	}
	return 0;
}

static double
mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int
launch_wait_ready(struct launch *l, const volatile int *cancel)
{
	double start = mono(), next = start + 15, t;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (;;) {
		if (reaped(l))
			return hw_err_set(HW_EXIT_NOTREADY, "the runtime '%s' "
			    "exited (%s %d) before it was ready", l->argv[0],
			    WIFSIGNALED(l->status) ? "signal" : "status",
			    WIFSIGNALED(l->status) ? WTERMSIG(l->status) :
			    WEXITSTATUS(l->status));
		if (launch_probe(l->port))
			return 0;
		if (cancel && *cancel)
			return hw_err_set(HW_EXIT_INTR, "interrupted while "
			    "'%s' was starting", l->argv[0]);
		t = mono();
		if (t - start >= (double)l->timeout_s)
			return hw_err_set(HW_EXIT_NOTREADY, "the runtime '%s' "
			    "was not ready on 127.0.0.1:%lld within %lld s",
			    l->argv[0], (long long)l->port,
			    (long long)l->timeout_s);
		if (t >= next) {
			fprintf(stderr, "hw-model: waiting for '%s' on "
			    "127.0.0.1:%lld (%.0f s of %lld s)\n", l->argv[0],
			    (long long)l->port, t - start,
			    (long long)l->timeout_s);
			next += 15;
		}
		usleep(1000000);
	}
}

int
launch_stop(struct launch *l)
{
	double deadline = mono() + LAUNCH_STOP_SECONDS;

	if (l->pid <= 0)
		return 0;
	kill(-l->pid, SIGTERM);
	kill(l->pid, SIGTERM);
	while (!reaped(l)) {
		if (mono() >= deadline) {
			kill(-l->pid, SIGKILL);
			kill(l->pid, SIGKILL);
			waitpid(l->pid, &l->status, 0);
			l->pid = 0;
			return 1;
		}
		usleep(50000);
	}
	return 0;
}

int
launch_child_exited(struct launch *l)
{
	return reaped(l);
}

void
launch_log_tail(const char *path, FILE *out)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct buf b;
	off_t from;
	char blk[4096];
	ssize_t n;

	if (fd < 0)
		return;
	buf_init(&b);
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
		from = st.st_size > LAUNCH_TAIL_BYTES ?
		    st.st_size - LAUNCH_TAIL_BYTES : 0;
		if (lseek(fd, from, SEEK_SET) == from)
			while ((n = read(fd, blk, sizeof blk)) > 0 &&
			    b.len < LAUNCH_TAIL_BYTES)
				buf_add(&b, blk, (size_t)n);
	}
	close(fd);
	fprintf(out, "hw-model: the last lines of '%s':\n", path);
	tty_put(out, b.p ? b.p : "", b.len, 1);
	if (b.len && b.p[b.len - 1] != '\n')
		fputc('\n', out);
	buf_release(&b);
}

void
launch_release(struct launch *l)
{
	size_t i;

	for (i = 0; i < l->argc; i++)
		free(l->argv[i]);
	for (i = 0; i < l->envc; i++)
		free(l->envp[i]);
	if (l->log_fd > 0)
		close(l->log_fd);
	l->argc = l->envc = 0;
	l->log_fd = -1;
}
