/*
 * platform.c - where heartwood runs: the platform adapter, detected from
 * environment markers only, and each adapter's capability manifest
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"

/* The default policy endpoints of the generic and Terra adapters */
#define LOOPBACK_CHAT "http://127.0.0.1:8765/v1/chat/completions"
#define LOOPBACK_MODELS "http://127.0.0.1:8765/v1/models"
#define HOSTED_CHAT \
	LOOPBACK_CHAT " https://api.openai.com/v1/chat/completions " \
	"https://api.openai.com/v1/responses " \
	"https://api.anthropic.com/v1/messages " \
	"https://chatgpt.com/backend-api/codex/responses"
#define HOSTED_MODELS \
	LOOPBACK_MODELS " https://api.openai.com/v1/models " \
	"https://api.anthropic.com/v1/models"
#define HOSTED_KEYS \
	"OPENAI_API_KEY ANTHROPIC_API_KEY STANFORD_AI_API_KEY " \
	"subscription:openai"
#define ALL_SOURCES \
	"heartwood stanford-ai-api-gateway openai-subscription openai " \
	"anthropic custom"

static const struct platform_adapter adapters[] = {
	{ "generic", "Workstation or container", "terminal web notebook",
	  "direct", "loopback jupyter trusted", "loopback", "llama-cpp vllm",
	  "none", "project directory", "process keyring mounted-file",
	  ALL_SOURCES, HOSTED_KEYS, HOSTED_CHAT, HOSTED_MODELS,
	  "fixtures/synthetic" },
	{ "terra", "Terra", "terminal notebook", "unavailable",
	  "loopback jupyter trusted", "jupyter", "llama-cpp vllm",
	  "provisioned", "dedicated directory under /home/jupyter "
	  "(HEARTWOOD_PLATFORM_HOME overrides)",
	  "process mounted-file managed-identity", ALL_SOURCES, HOSTED_KEYS,
	  HOSTED_CHAT, HOSTED_MODELS, "" },
	{ "carina", "Stanford Carina", "terminal", "unavailable",
	  "loopback trusted", "loopback", "vllm", "slurm",
	  "approved project storage (/projects/...)",
	  "process mounted-file", "heartwood stanford-ai-api-gateway",
	  "", LOOPBACK_CHAT, LOOPBACK_MODELS, "" },
};

const struct platform_adapter *
platform_adapter(const char *id)
{
	for (size_t i = 0; i < sizeof adapters / sizeof adapters[0]; i++)
		if (!strcmp(adapters[i].id, id))
			return &adapters[i];
	return NULL;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* prefixed: some variable of the environment starts with p */
static int
prefixed(const char *p)
{
	extern char **environ;
	size_t n = strlen(p);

	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, p, n) && strchr(*e + n, '='))
			return 1;
	return 0;
}

void
platform_detect(struct platform_detection *d)
{
	const char *forced = env("HEARTWOOD_PLATFORM");
	const char *cl = env("SLURM_CLUSTER_NAME");
	int terra, carina;

	memset(d, 0, sizeof *d);
	terra = env("GOOGLE_PROJECT") || prefixed("WORKSPACE_");
	carina = env("HEARTWOOD_CARINA") || (cl && (!strcmp(cl, "carina") ||
	    !strcmp(cl, "carina2")));
	d->confidence = 1.0;
	if (forced && !strcmp(forced, "terra")) {
		d->id = "terra";
		d->evidence = "HEARTWOOD_PLATFORM=terra";
		return;
	}
	if (forced && !strcmp(forced, "carina"))
		carina = 1;
	if (terra && carina) {
		/* the stronger evidence: a marker naming Carina itself */
		d->id = "carina";
		d->confidence = 0.5;
		d->evidence = "Terra and Carina markers";
		d->note = "ambiguous: the environment has markers of Terra "
		    "and of Carina; Carina was chosen (set HEARTWOOD_PLATFORM "
		    "to terra or carina to decide)";
		return;
	}
	if (terra || carina) {
		d->id = terra ? "terra" : "carina";
		d->evidence = terra ? (env("GOOGLE_PROJECT") ?
		    "GOOGLE_PROJECT" : "WORKSPACE_*") : forced ?
		    "HEARTWOOD_PLATFORM=carina" : env("HEARTWOOD_CARINA") ?
		    "HEARTWOOD_CARINA" : "SLURM_CLUSTER_NAME";
		return;
	}
	d->id = "generic";
	if (prefixed("DX_") || prefixed("SB_")) {
		d->confidence = 0.0;
		d->recognised = prefixed("DX_") ? "dnanexus" : "seven-bridges";
		d->evidence = prefixed("DX_") ? "DX_*" : "SB_*";
		d->note = prefixed("DX_") ? "DNAnexus was recognised but has "
		    "no adapter: the generic adapter is used" : "Seven "
		    "Bridges was recognised but has no adapter: the generic "
		    "adapter is used";
		return;
	}
	d->evidence = "no platform markers";
}

/* word_in: w is one of the space-separated words of s */
int
word_in(const char *s, const char *w)
{
	size_t n = strlen(w), k;

	for (; *s; s += k) {
		s += strspn(s, " ");
		k = strcspn(s, " ");
		if (k == n && !strncmp(s, w, n))
			return 1;
	}
	return 0;
}

int
platform_has_backend(const struct platform_adapter *p, const char *w)
{
	return word_in(p->backends, w);
}

const char *
platform_isolated_sources(const struct platform_adapter *p)
{
	const char *v = env("HEARTWOOD_ISOLATED_SOURCES");
	size_t n;

	if (!v || !platform_has_backend(p, "managed-identity"))
		return "";
	n = strlen(v);
	if (n > 1024 || strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789._- ")
	    != n)
		return "";
	return v;
}

/* words: the space-separated words of s as a JSON array */
static struct jval *
words(struct arena *a, const char *s)
{
	struct jval *arr = json_new(a, J_ARRAY);
	size_t n;

	while (*s) {
		s += strspn(s, " ");
		if (!(n = strcspn(s, " ")))
			break;
		json_push(a, arr, json_strn(a, s, n));
		s += n;
	}
	return arr;
}

struct jval *
platform_manifest(struct arena *a, const struct platform_adapter *p)
{
	struct jval *m = json_obj(a), *pol = json_obj(a);

	json_add(a, m, "schema_version", json_str(a,
	    "heartwood.platform-capabilities.v1"));
	json_add(a, m, "platform_id", json_str(a, p->id));
	json_add(a, m, "display_name", json_str(a, p->display));
	json_add(a, m, "interfaces", words(a, p->interfaces));
	json_add(a, m, "browser_route", json_str(a, p->browser));
	json_add(a, m, "ingress_modes", words(a, p->ingress));
	json_add(a, m, "default_ingress_mode", json_str(a, p->ingress_default));
	json_add(a, m, "managed_runtimes", words(a, p->runtimes));
	json_add(a, m, "scheduler", json_str(a, p->scheduler));
	json_add(a, m, "storage_root", json_str(a, p->storage));
	json_add(a, m, "credential_backends", words(a, p->backends));
	json_add(a, m, "model_sources", words(a, p->sources));
	json_add(a, m, "platform_isolated_sources", words(a,
	    platform_isolated_sources(p)));
	json_add(a, m, "credential_allowlist", words(a, p->credentials));
	json_add(a, m, "data_mounts", words(a, p->mounts));
	json_add(a, m, "validation_level", json_str(a, "ci"));
	json_add(a, pol, "allowed_model_endpoints", words(a, p->endpoints));
	json_add(a, pol, "allowed_model_catalog_endpoints",
	    words(a, p->catalog));
	json_add(a, m, "default_policy_endpoints", pol);
	return m;
}

/* ---- readiness checks ---- */

static void
put(struct platform_check *c, size_t *n, const char *id, const char *status,
    const char *code, const char *summary, const char *next)
{
	c[*n].id = id;
	c[*n].status = status;
	c[*n].code = code;
	c[*n].summary = summary;
	c[*n].next = next;
	(*n)++;
}

/* dir_ok: path is an absolute directory this process may write */
static int
dir_ok(const char *path)
{
	struct stat st;

	return path && *path == '/' && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode) && access(path, W_OK | X_OK) == 0;
}

/* gpu_visible: the environment names a GPU for this process or job */
static int
gpu_visible(void)
{
	static const char *const vars[] = { "CUDA_VISIBLE_DEVICES",
		"NVIDIA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS",
		NULL };

	for (size_t i = 0; vars[i]; i++) {
		const char *v = env(vars[i]);

		if (v && strcmp(v, "none") && strcmp(v, "void") &&
		    strcmp(v, "-1") && strcmp(v, "NoDevFiles"))
			return 1;
	}
	return 0;
}

static size_t
terra_checks(struct platform_check *c, const char *root)
{
	const char *home = env("HEARTWOOD_PLATFORM_HOME");
	const char *gpu = env("HEARTWOOD_GPU_RUNTIME");
	const char *disk = home ? home : "/home/jupyter";
	size_t n = 0, k = strlen(disk);

	if (!dir_ok(disk))
		put(c, &n, "terra-project-storage", "fail", "HW-TERRA-001",
		    home ? "HEARTWOOD_PLATFORM_HOME is not a directory you "
		    "may write" : "the persistent disk /home/jupyter is not "
		    "a directory you may write", "Attach the persistent "
		    "disk, or set HEARTWOOD_PLATFORM_HOME to a directory on "
		    "it.");
	else if (strncmp(root, disk, k) || (root[k] && root[k] != '/'))
		put(c, &n, "terra-project-storage", "warning", "HW-TERRA-001",
		    "the project is not on the persistent disk: it is lost "
		    "when the cloud environment is deleted", "Move the "
		    "project under /home/jupyter (or HEARTWOOD_PLATFORM_HOME).");
	else
		put(c, &n, "terra-project-storage", "pass", NULL, "the project "
		    "is on the persistent disk", NULL);
	if (!gpu)
		put(c, &n, "terra-gpu", "warning", "HW-TERRA-002", "no GPU "
		    "runtime is declared", "Set HEARTWOOD_GPU_RUNTIME to vllm "
		    "(a GPU cloud environment) or none.");
	else if (strcmp(gpu, "vllm") && strcmp(gpu, "none"))
		put(c, &n, "terra-gpu", "fail", "HW-TERRA-002",
		    "HEARTWOOD_GPU_RUNTIME must be vllm or none",
		    "Set HEARTWOOD_GPU_RUNTIME to vllm or none.");
	else if (!strcmp(gpu, "vllm") && !gpu_visible())
		put(c, &n, "terra-gpu", "warning", "HW-TERRA-002", "the vLLM "
		    "runtime is declared but no GPU is visible", "Recreate "
		    "the cloud environment with a GPU, or set "
		    "HEARTWOOD_GPU_RUNTIME=none.");
	else
		put(c, &n, "terra-gpu", "pass", NULL, strcmp(gpu, "none") ?
		    "a GPU is visible for the vLLM runtime" : "no GPU runtime: "
		    "managed models run on the CPU (llama.cpp)", NULL);
	return n;
}

static size_t
carina_checks(struct platform_check *c)
{
	const char *scratch = env("LOCAL_SCRATCH_JOB");
	size_t n = 0;

	if (env("SLURM_JOB_ID"))
		put(c, &n, "slurm-allocation", "pass", NULL, "running inside "
		    "a Slurm allocation (SLURM_JOB_ID)", NULL);
	else
		put(c, &n, "slurm-allocation", "warning", "HW-COMPUTE-001",
		    "no Slurm allocation: a managed model needs one, asked "
		    "for before srun", "Start heartwood inside an allocation "
		    "(srun or salloc), or use the Stanford AI API Gateway.");
	if (!scratch)
		put(c, &n, "job-scratch", "warning", "HW-COMPUTE-002",
		    "LOCAL_SCRATCH_JOB is not set: a managed model cannot be "
		    "staged", "Run inside an allocation with job scratch.");
	else if (!dir_ok(scratch))
		put(c, &n, "job-scratch", "fail", "HW-COMPUTE-002",
		    "LOCAL_SCRATCH_JOB is not an absolute directory you may "
		    "write", "Request an allocation with usable job scratch.");
	else
		put(c, &n, "job-scratch", "pass", NULL, "job scratch is "
		    "usable for staging a managed model", NULL);
	if (gpu_visible())
		put(c, &n, "gpu", "pass", NULL, "a GPU is visible to the job",
		    NULL);
	else
		put(c, &n, "gpu", "warning", "HW-COMPUTE-003", "no GPU is "
		    "visible (CUDA_VISIBLE_DEVICES, SLURM_JOB_GPUS)",
		    "Request a GPU in the allocation (--gpus 1).");
	return n;
}

size_t
platform_checks(const char *id, const char *root,
    struct platform_check out[PLATFORM_CHECKS_MAX])
{
	if (!strcmp(id, "terra"))
		return terra_checks(out, root);
	if (!strcmp(id, "carina"))
		return carina_checks(out);
	return 0;
}
