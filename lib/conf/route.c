/* route.c - the model route: from the environment or the saved config */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>
#include <sodium.h>

#include "conf/conf.h"

#define MODEL_MAX 256
#define URL_MAX 2048
#define KEY_ENV_MAX 128
#define TOKENS_MAX 1000000000
#define KEY_FILE_MAX 4096	/* a key file's path, and its size */

static int
env_missing(const char *name)
{
	return hw_err_set(HW_EXIT_USAGE, "%s is not set", name);
}

/* name_ok: NAME of "openai/NAME": not empty, printable, no spaces */
static int
name_ok(const char *name)
{
	return *name && strlen(name) <= MODEL_MAX - 7 &&
	    printable_ascii(name, 0);
}

/* the providers a route may name, as LiteLLM prefixes its ids */
static const char *const providers[] = { "openai", "anthropic", "chatgpt" };

/* provider_of: the provider a model id's prefix names, or -1 */
static int
provider_of(const char *m, size_t *len)
{
	size_t i, n;

	for (i = 0; i < sizeof providers / sizeof providers[0]; i++) {
		n = strlen(providers[i]);
		if (!strncmp(m, providers[i], n) && m[n] == '/') {
			*len = n + 1;
			return (int)i;
		}
	}
	return -1;
}

static int
route_model(struct model_route *r, const char *m)
{
	size_t n = 0;
	int p = provider_of(m, &n);

	if (p < 0 || !name_ok(m + n)) {
		if (strlen(m) <= 64 && printable_ascii(m, 1))
			return hw_err_set(HW_EXIT_USAGE, "invalid HW_MODEL "
			    "'%s': expected openai/NAME, anthropic/NAME or "
			    "chatgpt/NAME", m);
		return hw_err_set(HW_EXIT_USAGE, "invalid HW_MODEL: expected "
		    "openai/NAME, anthropic/NAME or chatgpt/NAME, at most %d "
		    "printable ASCII characters", MODEL_MAX);
	}
	r->model = xstrdup(m);
	r->provider = p;
	return 0;
}

const char *
route_provider(const struct model_route *r)
{
	return providers[r && (r->provider == ROUTE_ANTHROPIC ||
	    r->provider == ROUTE_SUBSCRIPTION) ? r->provider : ROUTE_OPENAI];
}

const char *
route_model_name(const struct model_route *r)
{
	const char *s = strchr(r->model, '/');

	return s ? s + 1 : r->model;
}

static int
route_model_id(struct model_route *r, const char *id, const char *what)
{
	if (!name_ok(id)) {
		if (strlen(id) <= 64 && printable_ascii(id, 1))
			return hw_err_set(HW_EXIT_USAGE, "invalid %s '%s': "
			    "expected printable ASCII without spaces", what,
			    id);
		return hw_err_set(HW_EXIT_USAGE, "invalid %s: expected at "
		    "most %d printable ASCII characters without spaces", what,
		    MODEL_MAX - 7);
	}
	r->model = xasprintf("%s/%s", route_provider(r), id);
	return 0;
}

/*
 * route_saved_provider: [model] provider, "openai" (the default) or
 * "anthropic", into r->provider
 */
static int
route_saved_provider(struct model_route *r, const struct jval *m)
{
	const struct jval *v = json_get(m, "provider");
	size_t i;

	if (!v)
		return 0;
	for (i = 0; v->t == J_STRING && i < sizeof providers /
	    sizeof providers[0]; i++)
		if (!strcmp(v->u.s, providers[i])) {
			r->provider = (int)i;
			return 0;
		}
	return hw_err_set(HW_EXIT_USAGE, "invalid " CONFIG_FILE " [model] "
	    "provider: expected openai, anthropic or chatgpt");
}

static int
bad_url(const char *what, const char *why)
{
	return hw_err_set(HW_EXIT_USAGE, "invalid %s: %s", what, why);
}

static int
loopback_host(const char *h, int bracketed)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (bracketed)
		return inet_pton(AF_INET6, h, &a6) == 1 &&
		    IN6_IS_ADDR_LOOPBACK(&a6);
	if (!strcasecmp(h, "localhost"))
		return 1;
	return inet_pton(AF_INET, h, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127;
}

/*
 * url_host checks the authority a..e and sets r->loopback: NULL, or why
 * it is refused
 */
static const char *
url_host(struct model_route *r, const char *a, const char *e)
{
	char host[256];
	const char *he, *port, *h = a;
	struct in6_addr a6;
	int br = *a == '[';
	long v;
	char *end;

	if (br) {
		if (!(he = memchr(a, ']', (size_t)(e - a))))
			return "the host has an unclosed '['";
		h = a + 1;
		port = he + 1 < e ? he + 1 : NULL;
		if (port && *port != ':')
			return "the host is invalid";
	} else {
		port = memchr(a, ':', (size_t)(e - a));
		he = port ? port : e;
	}
	if (he == h || (size_t)(he - h) >= sizeof host)
		return "the host is missing or too long";
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = 0;
	if (br ? inet_pton(AF_INET6, host, &a6) != 1 :
	    strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789.-_") != strlen(host))
		return "the host is invalid";
	if (port) {
		v = strtol(port + 1, &end, 10);
		if (end != e || port + 1 == e || port[1] < '0' ||
		    port[1] > '9' || e - port > 6 || v < 1 || v > 65535)
			return "the port is invalid";
	}
	r->loopback = loopback_host(host, br);
	return NULL;
}

static int
route_url(struct model_route *r, const char *u, const char *what)
{
	const char *a, *path, *why;
	size_t n;

	if (strlen(u) > URL_MAX || !printable_ascii(u, 0))
		return bad_url(what, "it must be at most 2048 printable ASCII "
		    "characters without spaces");
	if (!strncasecmp(u, "https://", 8))
		a = u + 8;
	else if (!strncasecmp(u, "http://", 7))
		a = u + 7;
	else
		return bad_url(what, "it must be an http or https URL");
	path = a + strcspn(a, "/?#");
	if (memchr(a, '@', (size_t)(path - a)))
		return bad_url(what, "it must not contain user information");
	if (strchr(u, '?') || strchr(u, '#'))
		return bad_url(what, "it must not have a query or a fragment");
	if ((why = url_host(r, a, path)))
		return bad_url(what, why);
	for (n = strlen(u); n > (size_t)(path - u) && u[n - 1] == '/'; n--)
		;
	r->base_url = xmalloc(n + 1);
	memcpy(r->base_url, u, n);
	r->base_url[n] = 0;
	return 0;
}

static int
route_key(struct model_route *r, const char *k, const char *what,
    int need_set)
{
	const char *v;
	size_t n;

	if (!k || !*k)
		return 0;
	n = strlen(k);
	if (n > KEY_ENV_MAX || (*k >= '0' && *k <= '9') || strspn(k,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	    != n)
		return hw_err_set(HW_EXIT_USAGE, "invalid %s: expected a "
		    "variable name matching [A-Za-z_][A-Za-z0-9_]*", what);
	if (need_set && (!(v = getenv(k)) || !*v))
		return hw_err_set(HW_EXIT_USAGE, "invalid %s '%s': that "
		    "variable is not set or is empty", what, k);
	r->key_env = xstrdup(k);
	return 0;
}

static int
route_tokens(const char *name, int64_t *out)
{
	const char *v = getenv(name);

	*out = 0;
	if (!v || !*v)
		return 0;
	if (parse_seq(v, out) < 0 || *out > TOKENS_MAX)
		return hw_err_set(HW_EXIT_USAGE, "invalid %s: expected a "
		    "decimal integer from 0 to %d", name, TOKENS_MAX);
	return 0;
}

/*
 * route_key_file: the key of credential class file (credential_file_read),
 * read now into r->key and never named in a message
 */
static int
route_key_file(struct model_route *r, const char *path, const char *what)
{
	if (r->key_env && *path == '/' && strlen(path) <= KEY_FILE_MAX &&
	    printable_ascii(path, 1))
		return hw_err_set(HW_EXIT_USAGE, "invalid %s: a route reads "
		    "its key from a variable or a file, not both", what);
	if (credential_file_read(path, what, &r->key) < 0)
		return -1;
	r->key_file = xstrdup(path);
	return 0;
}

/*
 * route_none: a route without a key variable or file uses the platform
 * identity when a managed-identity connection serves its base URL;
 * otherwise it has no key, which is legal only on loopback.  The
 * subscription route signs in instead (its tokens are read for each
 * call) and takes no key.
 */
static int
route_none(struct model_route *r)
{
	int k;

	if (r->provider == ROUTE_SUBSCRIPTION && (r->key_env || r->key_file))
		return hw_err_set(HW_EXIT_USAGE, "a chatgpt/ route signs in "
		    "with 'hw-model subscription sign-in' and takes no key "
		    "(unset HW_API_KEY_ENV and HW_API_KEY_FILE)");
	if (r->key_env || r->key_file || r->provider == ROUTE_SUBSCRIPTION)
		return 0;
	if ((k = route_identity(r)) != 0)
		return k < 0 ? -1 : 0;
	if (r->loopback)
		return 0;
	return hw_err_set(HW_EXIT_USAGE, "a route without a key (credential "
	    "class none) must use a loopback endpoint: give the key's "
	    "variable (HW_API_KEY_ENV) or file (HW_API_KEY_FILE)");
}

int
model_route_set(struct model_route *r, const char *id, const char *url,
    const char *key_env, const char *const what[3], int need_set)
{
	memset(r, 0, sizeof *r);
	if (route_model_id(r, id, what[0]) < 0 ||
	    route_url(r, url, what[1]) < 0 ||
	    route_key(r, key_env, what[2], need_set) < 0 ||
	    route_none(r) < 0) {
		model_route_release(r);
		return -1;
	}
	return 0;
}

int
route_subscription_set(struct model_route *r, const char *id,
    const char *url, const char *const what[3])
{
	memset(r, 0, sizeof *r);
	r->provider = ROUTE_SUBSCRIPTION;
	if (route_model_id(r, id, what[0]) < 0 ||
	    route_url(r, url, what[1]) < 0) {
		model_route_release(r);
		return -1;
	}
	return 0;
}

int
route_set_provider(struct model_route *r, int provider)
{
	char *m;

	if (provider != ROUTE_OPENAI && provider != ROUTE_ANTHROPIC &&
	    provider != ROUTE_SUBSCRIPTION)
		return hw_err_set(HW_EXIT_USAGE, "unknown model provider");
	r->provider = provider;
	m = xasprintf("%s/%s", route_provider(r), route_model_name(r));
	free(r->model);
	r->model = m;
	return 0;
}

static const char *
env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/*
 * route_allowed: a key is read from project files only out of a variable
 * on the credential allowlist
 */
static int
route_allowed(const char *k, const char *what)
{
	int ok;

	if (!k || !*k || (ok = credential_allowed(k)) > 0)
		return 0;
	if (ok < 0)
		return -1;
	return hw_err_set(HW_EXIT_USAGE, "refusing %s '%.64s': it is not on "
	    "the credential allowlist (%s, and the [credentials] allowlist "
	    "of your own heartwood/config.toml); choose a route with 'hw "
	    "setup'", what, k, credential_builtin_allowlist());
}

/*
 * route_allowed_file: a key file the project names is read only when
 * this user allowed that path (the [credentials] allowlist of their own
 * config.toml), as for variables: a cloned project must not make the
 * agent read and send a file of the user's
 */
static int
route_allowed_file(const char *path)
{
	int ok = credential_allowed(path);

	if (ok > 0)
		return 0;
	if (ok < 0)
		return -1;
	return hw_err_set(HW_EXIT_USAGE, "refusing %s [model] api_key_file "
	    "'%.128s': it is not on the [credentials] allowlist of your own "
	    "heartwood/config.toml", CONFIG_FILE, path);
}

/*
 * route_confirmed: a route read from the project is used only once this
 * user confirmed exactly it here (hw setup); nothing has been sent yet
 */
static int
route_confirmed(const struct model_route *r)
{
	char fp[HW_HASH_LEN + 1];
	int k;

	route_fingerprint(r, fp);
	if ((k = trust_confirmed("model_route", fp)) > 0)
		return 0;
	if (k < 0)
		return -1;
	return hw_err_set(HW_EXIT_USAGE, "the model route in " CONFIG_FILE
	    " was not confirmed by you on this machine (it came with the "
	    "project, or changed since): nothing was sent; run 'hw setup' to "
	    "choose or confirm a route");
}

/* route_saved: the route of hw setup, [model] in the configuration */
static int
route_saved(struct model_route *r)
{
	static const char *const what[3] = {
		CONFIG_FILE " [model] model_id",
		CONFIG_FILE " [model] base_url",
		CONFIG_FILE " [model] api_key_env" };
	struct arena a;
	struct jval *cfg = NULL, *m;
	const char *id, *url, *kf;
	int rc = -1;

	arena_init(&a);
	if (config_load(&a, &cfg) < 0)
		goto out;
	if (!(m = json_get(cfg, "model"))) {
		hw_err_set(HW_EXIT_USAGE, "HW_MODEL is not set, and no route "
		    "was saved: run 'hw setup'");
		goto out;
	}
	if (!(id = json_get_str(m, "model_id")) ||
	    !(url = json_get_str(m, "base_url"))) {
		hw_err_set(HW_EXIT_USAGE, "[model] in " CONFIG_FILE " needs "
		    "model_id and base_url: run 'hw setup'");
		goto out;
	}
	if (route_allowed(json_get_str(m, "api_key_env"), what[2]) < 0)
		goto out;
	if ((kf = json_get_str(m, "api_key_file")) &&
	    route_allowed_file(kf) < 0)
		goto out;
	memset(r, 0, sizeof *r);
	if (route_saved_provider(r, m) < 0 ||
	    route_model_id(r, id, what[0]) < 0 || route_url(r, url,
	    what[1]) < 0 || route_key(r, json_get_str(m, "api_key_env"),
	    what[2], 1) < 0 || (kf && route_key_file(r, kf, CONFIG_FILE
	    " [model] api_key_file") < 0) || route_none(r) < 0 ||
	    route_confirmed(r) < 0) {
		model_route_release(r);
		goto out;
	}
	rc = 0;
out:
	arena_release(&a);
	return rc;
}

/* route_env: HW_MODEL, HW_BASE_URL and HW_API_KEY_ENV */
static int
route_env(struct model_route *r)
{
	if (!env("HW_MODEL"))
		return env_missing("HW_MODEL");
	if (route_model(r, env("HW_MODEL")) < 0)
		return -1;
	if (!env("HW_BASE_URL") && r->provider != ROUTE_SUBSCRIPTION)
		return env_missing("HW_BASE_URL");
	if (route_url(r, env("HW_BASE_URL") ? env("HW_BASE_URL") :
	    SUB_BASE_URL, "HW_BASE_URL") < 0)
		return -1;
	if (route_key(r, env("HW_API_KEY_ENV"), "HW_API_KEY_ENV", 1) < 0)
		return -1;
	if (env("HW_API_KEY_FILE") && route_key_file(r,
	    env("HW_API_KEY_FILE"), "HW_API_KEY_FILE") < 0)
		return -1;
	return route_none(r);
}

int
model_route_from_env(struct model_route *r)
{
	int saved = !env("HW_MODEL") && !env("HW_BASE_URL");

	memset(r, 0, sizeof *r);
	if ((saved ? route_saved(r) : route_env(r)) < 0 ||
	    route_tokens("HW_MAX_INPUT_TOKENS", &r->max_input_tokens) < 0 ||
	    route_tokens("HW_MAX_OUTPUT_TOKENS", &r->max_output_tokens) < 0) {
		model_route_release(r);
		return -1;
	}
	r->from_env = !saved;
	r->timeout_s = r->loopback ? 600 : 180;
	r->retries = r->loopback ? 1 : 2;
	return 0;
}

void
model_route_release(struct model_route *r)
{
	free(r->model);
	free(r->base_url);
	free(r->key_env);
	free(r->key_file);
	if (r->key)
		mem_wipe(r->key, strlen(r->key));
	free(r->key);
	memset(r, 0, sizeof *r);
}
