/*
 * connections.c - the model connection catalog
 * (heartwood.model-connections.v1): the built-in heartwood connection,
 * the platform's connections and the user's own, each checked strictly
 * (hw-model(1) CONNECTIONS)
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf/conf.h"

#define USER_FILE_MAX (1u << 20)
#define CONNECTIONS_MAX 256
#define STATIC_MODELS_MAX 1024

static const char *const fields[] = { "connection_id", "label", "protocol",
	"model_prefix", "source", "credential_kind", "policy_endpoint",
	"catalog_endpoint", "base_url", "api_key_env", "api_key_file",
	"api_version", "aws_region_name", "aws_profile_name", "description",
	"static_models", "subscription_vendor", NULL };
static const char *const protocols[] = { "anthropic", "openai",
	"openai-compatible", "static", "subscription", NULL };
static const char *const kinds[] = { "environment", "file",
	"managed-identity", "none", NULL };

/*
 * The built-in connection and the platform's: a platform offers those
 * whose id is among its adapter's model sources (platform.c)
 */
struct builtin {
	const char *id, *label, *protocol, *prefix, *source, *kind, *base;
	const char *policy, *catalog, *key_env, *version, *description;
	const char *vendor;	/* subscription_vendor */
};
static const struct builtin builtins[] = {
	{ "heartwood", "Run with Heartwood", "openai-compatible", "openai/",
	  "built-in", "none", "http://127.0.0.1:8765/v1",
	  "http://127.0.0.1:8765/v1/chat/completions",
	  "http://127.0.0.1:8765/v1/models", NULL, NULL,
	  "the managed local model heartwood runs on loopback" },
	{ "stanford-ai-api-gateway", "Stanford AI API Gateway",
	  "openai-compatible", "openai/", "platform", "environment",
	  "https://aiapi-prod.stanford.edu/v1",
	  "https://aiapi-prod.stanford.edu/v1/chat/completions",
	  "https://aiapi-prod.stanford.edu/v1/models", "STANFORD_AI_API_KEY",
	  NULL, "institution-managed providers" },
	{ "openai", "OpenAI API", "openai", "openai/", "platform",
	  "environment", "https://api.openai.com/v1",
	  "https://api.openai.com/v1/chat/completions",
	  "https://api.openai.com/v1/models", "OPENAI_API_KEY", NULL,
	  "hosted provider" },
	{ "anthropic", "Anthropic API", "anthropic", "anthropic/", "platform",
	  "environment", "https://api.anthropic.com/v1",
	  "https://api.anthropic.com/v1/messages",
	  "https://api.anthropic.com/v1/models", "ANTHROPIC_API_KEY",
	  "2023-06-01", "hosted provider" },
	{ SUB_CONNECTION, "Sign in with ChatGPT", "subscription", "chatgpt/",
	  "platform", "managed-identity", SUB_BASE_URL,
	  SUB_BASE_URL "/responses", NULL, NULL, NULL,
	  "hosted provider: your ChatGPT subscription, signed in with "
	  "'hw-model subscription sign-in'", "openai" },
};

static int
in(const char *const *set, const char *s)
{
	for (; *set; set++)
		if (!strcmp(*set, s))
			return 1;
	return 0;
}

/* secret_key: a key that looks like it holds a secret itself */
static int
secret_key(const char *k)
{
	static const char *const parts[] = { "secret", "token", "password",
		"passwd", "authorization", "bearer", "cookie", "private",
		"credential_value", NULL };
	char low[64];
	size_t n = strlen(k), i;

	if (n >= sizeof low)
		n = sizeof low - 1;
	for (i = 0; i < n; i++)
		low[i] = (char)tolower((unsigned char)k[i]);
	low[n] = 0;
	for (i = 0; parts[i]; i++)
		if (strstr(low, parts[i]))
			return 1;
	return !strcmp(low, "key") || !strcmp(low, "apikey") ||
	    (n > 4 && (!strcmp(low + n - 4, "_key") ||
	    !strcmp(low + n - 4, "-key")));
}

/* endpoint_loopback: the normalized http(s) endpoint's host is loopback */
int
endpoint_loopback(const char *ep)
{
	const char *a = strstr(ep, "://"), *e;
	char host[256];
	struct in6_addr a6;
	struct in_addr a4;
	size_t n;

	if (!a)
		return 0;
	a += 3;
	e = a + strcspn(a, "/");
	if (*a == '[') {
		const char *c = memchr(a, ']', (size_t)(e - a));

		if (!c || (size_t)(c - a - 1) >= sizeof host)
			return 0;
		memcpy(host, a + 1, (size_t)(c - a - 1));
		host[c - a - 1] = 0;
		return inet_pton(AF_INET6, host, &a6) == 1 &&
		    IN6_IS_ADDR_LOOPBACK(&a6);
	}
	n = strcspn(a, ":/");
	if (n >= sizeof host)
		return 0;
	memcpy(host, a, n);
	host[n] = 0;
	if (!strcmp(host, "localhost"))
		return 1;
	return inet_pton(AF_INET, host, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127;
}

/* origin_len: the length of ep's "scheme://authority" */
static size_t
origin_len(const char *ep)
{
	const char *a = strstr(ep, "://");

	return a ? (size_t)(a + 3 - ep) + strcspn(a + 3, "/") : 0;
}

static int __attribute__((format(printf, 3, 4)))
refuse(const char *where, const char *id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (id)
		return hw_err_set(HW_EXIT_DATA, "%s: connection '%s': %s",
		    where, id, msg);
	return hw_err_set(HW_EXIT_DATA, "%s: %s", where, msg);
}

/* text: a string field without NUL or control characters, or NULL */
static const char *
text(const struct jval *c, const char *k, int *bad)
{
	const struct jval *v = json_get(c, k);

	if (!v || v->t == J_NULL)
		return NULL;
	if (v->t != J_STRING || !v->n || strlen(v->u.s) != v->n || v->n >
	    2048) {
		*bad = 1;
		return NULL;
	}
	for (size_t i = 0; i < v->n; i++)
		if ((unsigned char)v->u.s[i] < 0x20 || v->u.s[i] == 0x7f) {
			*bad = 1;
			return NULL;
		}
	return v->u.s;
}

/* endpoint: field k normalized already and http(s); its value or NULL */
static int
endpoint(const char *where, const char *id, const char *k, const char *v)
{
	char *norm;
	int same;

	if (endpoint_normalize(v, &norm) < 0)
		return refuse(where, id, "%s: %s", k, hw_err_msg());
	same = !strcmp(norm, v);
	free(norm);
	if (!same)
		return refuse(where, id, "%s: must already be normalized "
		    "(hw-policy(7)): lowercase scheme and host, and a path", k);
	if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8))
		return refuse(where, id, "%s: must be an http or https URL",
		    k);
	if (!strncmp(v, "http://", 7) && !endpoint_loopback(v))
		return refuse(where, id, "%s: http is allowed only on a "
		    "loopback host: use https", k);
	return 0;
}

static int
name_ok(const char *k)
{
	size_t n = strlen(k);

	return n && n <= 128 && !isdigit((unsigned char)*k) && strspn(k,
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
	    == n;
}

static int
static_models(const char *where, const char *id, const struct jval *v)
{
	if (v->t != J_ARRAY || !v->n || v->n > STATIC_MODELS_MAX)
		return refuse(where, id, "static_models: expected 1 to %d "
		    "model names", STATIC_MODELS_MAX);
	for (size_t i = 0; i < v->n; i++) {
		const struct jval *m = v->u.a[i];

		if (m->t != J_STRING || !m->n || m->n > 249 ||
		    strspn(m->u.s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
		    "QRSTUVWXYZ0123456789._:/@+-") != m->n)
			return refuse(where, id, "static_models: entry %zu: "
			    "expected a model name of letters, digits and "
			    "._:/@+-", i + 1);
	}
	return 0;
}

/* check_keys: no secret-looking, unknown or mistyped key */
static int
check_keys(const char *where, const char *id, const struct jval *c)
{
	int bad = 0;

	for (size_t i = 0; i < c->n; i++) {
		const char *k = c->u.m[i].k;

		if (strlen(k) != c->u.m[i].kn || secret_key(k))
			return refuse(where, id, "refusing the secret-looking "
			    "key '%.64s': a connection names the variable "
			    "(api_key_env) or the file (api_key_file) that "
			    "holds its key, never the key", k);
		if (!in(fields, k))
			return refuse(where, id, "unknown key '%.64s'", k);
		if (strcmp(k, "static_models") && (text(c, k, &bad), bad))
			return refuse(where, id, "%s: expected a string of "
			    "printable characters (or null)", k);
	}
	return 0;
}

static int
check_credential(const char *where, const char *id, const struct jval *c,
    const char *base)
{
	const char *kind = json_get_str(c, "credential_kind");
	const char *env = json_get_str(c, "api_key_env");
	const char *file = json_get_str(c, "api_key_file");

	if (!kind || !in(kinds, kind))
		return refuse(where, id, "credential_kind: expected "
		    "environment, file, managed-identity or none");
	if (!strcmp(kind, "none") && !endpoint_loopback(base))
		return refuse(where, id, "credential_kind none is allowed "
		    "only on a loopback endpoint");
	if (!strcmp(kind, "environment") ? !env || !name_ok(env) : !!env)
		return refuse(where, id, "api_key_env: %s", env && !strcmp(kind,
		    "environment") ? "expected a variable name matching "
		    "[A-Za-z_][A-Za-z0-9_]*" : !strcmp(kind, "environment") ?
		    "required for credential_kind environment" :
		    "allowed only with credential_kind environment");
	if (!strcmp(kind, "file") ? !file || *file != '/' : !!file)
		return refuse(where, id, "api_key_file: %s", !strcmp(kind,
		    "file") ? "expected an absolute path" :
		    "allowed only with credential_kind file");
	return 0;
}

int
connection_check(const struct jval *c, const char *where, int user)
{
	const char *id, *proto, *prefix, *base, *pol, *cat, *src;
	const struct jval *sm;
	size_t n;
	char *want;
	int rc;

	if (!c || c->t != J_OBJECT)
		return refuse(where, NULL, "a connection must be an object");
	id = json_get_str(c, "connection_id");
	if (!id || !(n = strlen(id)) || n > 64 || strspn(id,
	    "abcdefghijklmnopqrstuvwxyz0123456789._-") != n || !isalnum(
	    (unsigned char)*id))
		return refuse(where, NULL, "connection_id: expected 1 to 64 "
		    "lowercase letters, digits, '.', '_' or '-'");
	if (check_keys(where, id, c) < 0)
		return -1;
	if (!json_get_str(c, "label"))
		return refuse(where, id, "label is required");
	if (!(proto = json_get_str(c, "protocol")) || !in(protocols, proto))
		return refuse(where, id, "protocol: expected anthropic, openai, "
		    "openai-compatible, static or subscription");
	prefix = json_get_str(c, "model_prefix");
	if (!prefix || (n = strlen(prefix)) < 2 || n > 64 ||
	    prefix[n - 1] != '/' || strspn(prefix, "abcdefghijklmnopqrstuvwxyz"
	    "0123456789._-/") != n)
		return refuse(where, id, "model_prefix: expected a prefix such "
		    "as 'openai/' that ends in '/'");
	src = json_get_str(c, "source");
	if (user ? src && strcmp(src, "user") : !src || (strcmp(src,
	    "built-in") && strcmp(src, "platform")))
		return refuse(where, id, "source: %s", user ? "a connection "
		    "of yours has source user" : "expected built-in or "
		    "platform");
	base = json_get_str(c, "base_url");
	pol = json_get_str(c, "policy_endpoint");
	cat = json_get_str(c, "catalog_endpoint");
	if (!base || !pol)
		return refuse(where, id, "base_url and policy_endpoint are "
		    "required");
	if (endpoint(where, id, "base_url", base) < 0 ||
	    endpoint(where, id, "policy_endpoint", pol) < 0 ||
	    (cat && endpoint(where, id, "catalog_endpoint", cat) < 0))
		return -1;
	n = origin_len(base);
	if (origin_len(pol) != n || strncmp(pol, base, n) || (cat &&
	    (origin_len(cat) != n || strncmp(cat, base, n))))
		return refuse(where, id, "base_url, policy_endpoint and "
		    "catalog_endpoint must share one origin");
	if (cat) {
		want = xasprintf("%s/models", base);
		rc = strcmp(want, cat);
		free(want);
		if (rc)
			return refuse(where, id, "catalog_endpoint: must be "
			    "base_url followed by /models");
	}
	sm = json_get(c, "static_models");
	if (!strcmp(proto, "static") ? !sm || static_models(where, id,
	    sm) < 0 : sm && sm->t != J_NULL)
		return strcmp(proto, "static") ? refuse(where, id,
		    "static_models: allowed only with protocol static") :
		    sm ? -1 : refuse(where, id, "static_models: required "
		    "with protocol static");
	if (strcmp(proto, "static") && strcmp(proto, "subscription") && !cat)
		return refuse(where, id, "catalog_endpoint is required for "
		    "protocol %s", proto);
	if (!strcmp(proto, "anthropic") != !!json_get_str(c, "api_version"))
		return refuse(where, id, "api_version: %s", strcmp(proto,
		    "anthropic") ? "allowed only with protocol anthropic" :
		    "required with protocol anthropic (e.g. 2023-06-01)");
	src = json_get_str(c, "subscription_vendor");
	if (!strcmp(proto, "subscription") ? !src || strcmp(src, "openai") :
	    !!src)
		return refuse(where, id, "subscription_vendor: %s",
		    strcmp(proto, "subscription") ? "allowed only with "
		    "protocol subscription" : "expected openai");
	return check_credential(where, id, c, base);
}

/* full: c with every field, null where absent, in the catalog's order */
static struct jval *
full(struct arena *a, const struct jval *c, const char *source)
{
	struct jval *o = json_obj(a), *v;

	for (size_t i = 0; fields[i]; i++) {
		v = json_get(c, fields[i]);
		if (!strcmp(fields[i], "source") && source)
			v = json_str(a, source);
		else if (!strcmp(fields[i], "static_models") && (!v ||
		    v->t == J_NULL))
			v = json_new(a, J_ARRAY);
		json_add(a, o, fields[i], v ? v : json_new(a, J_NULL));
	}
	return o;
}

static struct jval *
from_builtin(struct arena *a, const struct builtin *b)
{
	struct jval *o = json_obj(a);
	const char *const vals[] = { b->id, b->label, b->protocol, b->prefix,
		b->source, b->kind, b->policy, b->catalog, b->base, b->key_env,
		NULL, b->version, NULL, NULL, b->description, NULL,
		b->vendor };

	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
		if (vals[i])
			json_add(a, o, fields[i], json_str(a, vals[i]));
	return o;
}

char *
connections_user_file(void)
{
	char *cfg = user_dir("XDG_CONFIG_HOME", ".config"), *p;

	if (!cfg)
		return NULL;
	p = path_join(cfg, "heartwood/model-connections.json");
	free(cfg);
	return p;
}

/* user_doc: the user's connections (an array), or NULL when no file */
static int
user_doc(struct arena *a, const char *path, const struct jval **list)
{
	static const char *const top[] = { "connections", "schema_version",
		NULL };
	struct jval *doc;
	struct stat st;

	*list = NULL;
	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : hw_err_sys("cannot read '%s'",
		    path);
	if (S_ISLNK(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
		    "symbolic link", path);
	if (owned_check(path, &st) < 0)
		return -1;
	if (!(doc = read_json_file(path, USER_FILE_MAX, a)))
		return -1;
	if (json_keys_exact(doc, top) < 0)
		return refuse(path, NULL, "expected exactly the keys "
		    "schema_version and connections");
	if (!json_is_str(json_get(doc, "schema_version"),
	    CONNECTIONS_SCHEMA))
		return refuse(path, NULL, "schema_version: expected "
		    CONNECTIONS_SCHEMA);
	*list = json_get(doc, "connections");
	if ((*list)->t != J_ARRAY || (*list)->n > CONNECTIONS_MAX)
		return refuse(path, NULL, "connections: expected an array of "
		    "at most %d connections", CONNECTIONS_MAX);
	return 0;
}

int
connections_load(struct arena *a, const char *platform, struct jval **out)
{
	const struct platform_adapter *ad = platform_adapter(platform);
	struct jval *doc = json_obj(a), *list = json_new(a, J_ARRAY);
	const struct jval *mine;
	char *path, where[64];
	int rc = 0;

	*out = NULL;
	if (!ad)
		return hw_err_set(HW_EXIT_USAGE, "unknown platform '%.32s'",
		    platform);
	for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
		if (strcmp(builtins[i].source, "built-in") &&
		    !word_in(ad->sources, builtins[i].id))
			continue;
		json_push(a, list, full(a, from_builtin(a, &builtins[i]),
		    NULL));
	}
	if (!(path = connections_user_file()))
		return -1;
	if (user_doc(a, path, &mine) < 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && mine && i < mine->n; i++) {
		const struct jval *c = mine->u.a[i];
		const char *id;

		snprintf(where, sizeof where, "connections[%zu]", i);
		if (connection_check(c, where, 1) < 0) {
			hw_err_set(HW_EXIT_DATA, "invalid '%s': %s", path,
			    hw_err_msg());
			rc = -1;
			break;
		}
		id = json_get_str(c, "connection_id");
		if (connection_find(list, id)) {
			rc = hw_err_set(HW_EXIT_DATA, "invalid '%s': %s: "
			    "connection '%s' is defined twice (a built-in or "
			    "platform connection, or another of yours)", path,
			    where, id);
			break;
		}
		json_push(a, list, full(a, c, "user"));
	}
	free(path);
	if (rc < 0)
		return -1;
	json_add(a, doc, "schema_version", json_str(a, CONNECTIONS_SCHEMA));
	json_add(a, doc, "platform_id", json_str(a, ad->id));
	json_add(a, doc, "connections", list);
	*out = doc;
	return 0;
}

const struct jval *
connection_find(const struct jval *list, const char *id)
{
	if (list && list->t == J_OBJECT)
		list = json_get(list, "connections");
	for (size_t i = 0; list && i < list->n; i++)
		if (json_is_str(json_get(list->u.a[i], "connection_id"), id))
			return list->u.a[i];
	return NULL;
}

const char *
connection_credential_ref(const struct jval *c)
{
	const char *k = json_get_str(c, "credential_kind");

	if (!k)
		return NULL;
	if (!strcmp(k, "environment"))
		return json_get_str(c, "api_key_env");
	if (!strcmp(k, "file"))
		return json_get_str(c, "api_key_file");
	if (!strcmp(k, "managed-identity"))
		return "managed-identity";
	return NULL;
}

int
connection_key(const struct jval *c, char **key)
{
	const char *k = json_get_str(c, "credential_kind");
	const char *id = json_get_str(c, "connection_id");
	const char *v, *name;

	*key = NULL;
	if (!strcmp(k, "none"))
		return 0;
	if (!strcmp(k, "managed-identity"))
		return identity_allowed(id) < 0 ? -1 : identity_token(key);
	if (!strcmp(k, "file")) {
		if (credential_file_read(json_get_str(c, "api_key_file"),
		    "api_key_file", key) < 0)
			return -1;
		redact_secret(*key, strlen(*key));
		return 0;
	}
	name = json_get_str(c, "api_key_env");
	if (!(v = getenv(name)) || !*v)
		return hw_err_set(HW_EXIT_USAGE, "connection '%s': the "
		    "variable %s that holds its key is not set or is empty",
		    id, name);
	if (strchr(v, '\n') || strchr(v, '\r'))
		return hw_err_set(HW_EXIT_USAGE, "connection '%s': the "
		    "variable %s must hold the key on one line", id, name);
	*key = xstrdup(v);
	redact_secret(*key, strlen(*key));
	return 0;
}
