/*
 * platform.c - where heartwood runs: the platform adapter, detected from
 * environment markers only, and each adapter's capability manifest
 */
#include <stdlib.h>
#include <string.h>

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
	json_add(a, m, "platform_isolated_sources", json_new(a, J_ARRAY));
	json_add(a, m, "credential_allowlist", words(a, p->credentials));
	json_add(a, m, "data_mounts", words(a, p->mounts));
	json_add(a, m, "validation_level", json_str(a, "ci"));
	json_add(a, pol, "allowed_model_endpoints", words(a, p->endpoints));
	json_add(a, pol, "allowed_model_catalog_endpoints",
	    words(a, p->catalog));
	json_add(a, m, "default_policy_endpoints", pol);
	return m;
}
