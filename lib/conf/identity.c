/*
 * identity.c - the credential class managed-identity: the platform's own
 * identity, on Terra the VM's service account, whose access token the
 * GCE metadata server gives; held in this process's memory only
 * (hw-policy(7) CREDENTIALS)
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "conf/conf.h"

#define METADATA_HOST "metadata.google.internal"
#define TOKEN_PATH "/computeMetadata/v1/instance/service-accounts/default/token"
#define ANSWER_MAX (64u << 10)
#define TOKEN_MAX 8192
#define EXPIRES_MAX 86400
#define TIMEOUT_MS 5000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *cached;		/* the token, or NULL */
static int64_t refresh_at;	/* now_ms() past which it is fetched anew */

struct answer {
	struct buf b;
	struct buf_sink k;	/* into b, ANSWER_MAX at most */
};

/* metadata_host: GCE_METADATA_HOST (HOST or HOST:PORT) or the default */
static int
metadata_host(const char **host)
{
	const char *h = getenv("GCE_METADATA_HOST");
	size_t n;

	*host = METADATA_HOST;
	if (!h || !*h)
		return 0;
	n = strlen(h);
	if (n > 253 || strspn(h, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") != n || *h == ':')
		return hw_err_set(HW_EXIT_USAGE, "invalid GCE_METADATA_HOST: "
		    "expected a host name or address, with an optional :PORT");
	*host = h;
	return 0;
}

static long
timeout_ms(void)
{
	const char *v = getenv("HW_METADATA_TIMEOUT_MS");
	int64_t ms;

	if (!v || parse_seq(v, &ms) < 0 || ms < 1 || ms > 600000)
		return TIMEOUT_MS;
	return (long)ms;
}

/*
 * fetch: one GET of the token; 0 with the answer and *status, -1 with
 * *transient when a retry may help
 */
static int
fetch(const char *host, struct answer *ans, long *status, int *transient)
{
	struct curl_slist *h = NULL;
	char *url = xasprintf("http://%s" TOKEN_PATH, host);
	long ms = timeout_ms();
	CURLcode rc;
	CURL *c;

	*status = 0;
	*transient = 1;
	if (!(c = curl_easy_init())) {
		free(url);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "managed identity: "
		    "cannot start an HTTP client");
	}
	h = curl_slist_append(h, "Metadata-Flavor: Google");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &ans->k);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	free(url);
	if (ans->k.over) {
		*transient = 0;
		return hw_err_set(HW_EXIT_DATA, "managed identity: the "
		    "metadata server's answer is longer than %u bytes",
		    ANSWER_MAX);
	}
	if (rc != CURLE_OK)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "managed identity: the "
		    "metadata server at '%s' did not answer: %s", host,
		    rc == CURLE_OPERATION_TIMEDOUT ? "timed out" :
		    curl_easy_strerror(rc));
	if (*status != 200) {
		*transient = *status >= 500;
		return hw_err_set(HW_EXIT_UNAVAILABLE, "managed identity: the "
		    "metadata server at '%s' answered HTTP %ld (is a service "
		    "account attached to this VM?)", host, *status);
	}
	return 0;
}

/* token_ok: an access token: printable ASCII, no spaces, not too long */
static int
token_ok(const struct jval *v)
{
	if (!v || v->t != J_STRING || v->n < 8 || v->n > TOKEN_MAX ||
	    strlen(v->u.s) != v->n)
		return 0;
	for (size_t i = 0; i < v->n; i++)
		if (!isgraph((unsigned char)v->u.s[i]))
			return 0;
	return 1;
}

/* parse: the answer strictly: access_token, expires_in, token_type */
static int
parse(const struct answer *ans, char **tok, int64_t *expires)
{
	static const char *const keys[] = { "access_token", "expires_in",
		"token_type", NULL };
	const char *type;
	struct arena a;
	struct jval *v;
	char err[128];
	int rc = -1;

	arena_init(&a);
	if (!(v = json_parse(&a, ans->b.p ? ans->b.p : "", ans->b.len, err,
	    sizeof err)) || v->t != J_OBJECT) {
		hw_err_set(HW_EXIT_DATA, "managed identity: the metadata "
		    "server's answer is not a JSON object");
		goto out;
	}
	if (json_keys_exact(v, keys) < 0 || !token_ok(json_get(v,
	    "access_token"))) {
		hw_err_set(HW_EXIT_DATA, "managed identity: the metadata "
		    "server's answer must hold exactly access_token (a token "
		    "of 8 to %d printable characters), expires_in and "
		    "token_type", TOKEN_MAX);
		goto out;
	}
	if (json_get_int(v, "expires_in", expires) < 0 || *expires < 1 ||
	    *expires > EXPIRES_MAX) {
		hw_err_set(HW_EXIT_DATA, "managed identity: the metadata "
		    "server's expires_in must be whole seconds from 1 to %d",
		    EXPIRES_MAX);
		goto out;
	}
	if (!(type = json_get_str(v, "token_type")) || strcasecmp(type,
	    "Bearer")) {
		hw_err_set(HW_EXIT_DATA, "managed identity: the metadata "
		    "server's token_type must be Bearer");
		goto out;
	}
	*tok = xstrdup(json_get_str(v, "access_token"));
	rc = 0;
out:
	arena_release(&a);
	return rc;
}

/* obtain: a fresh token in *tok and its lifetime, one retry */
static int
obtain(char **tok, int64_t *expires)
{
	struct answer ans;
	const char *host;
	long status;
	int try, transient, rc = -1;

	if (metadata_host(&host) < 0)
		return -1;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	for (try = 0; try < 2; try++) {
		buf_init(&ans.b);
		ans.k = (struct buf_sink){ &ans.b, ANSWER_MAX, 0 };
		rc = fetch(host, &ans, &status, &transient);
		if (rc == 0)
			rc = parse(&ans, tok, expires);
		buf_wipe(&ans.b);
		if (rc == 0 || !transient)
			break;
	}
	return rc;
}

static void
forget(void)
{
	if (cached)
		mem_wipe(cached, strlen(cached));
	free(cached);
	cached = NULL;
	refresh_at = 0;
}

int
identity_token(char **tok)
{
	int64_t now = now_ms(), expires = 0;
	char *fresh = NULL;
	int rc = 0;

	*tok = NULL;
	pthread_mutex_lock(&lock);
	if (!cached || now >= refresh_at) {
		if (obtain(&fresh, &expires) < 0) {
			rc = -1;
			goto out;
		}
		redact_secret(fresh, strlen(fresh));
		forget();
		cached = fresh;
		/* a minute early, or at half the life of a short one */
		refresh_at = now + (expires > 120 ? expires - 60 :
		    expires / 2) * 1000;
	}
	*tok = xstrdup(cached);
out:
	pthread_mutex_unlock(&lock);
	return rc;
}

int
identity_ready(void)
{
	char *tok;

	if (identity_token(&tok) < 0)
		return -1;
	mem_wipe(tok, strlen(tok));
	free(tok);
	return 0;
}

/*
 * identity_allowed: the platform identity is used only where the adapter
 * lists managed-identity among its credential backends
 */
int
identity_allowed(const char *id)
{
	struct platform_detection pd;
	const struct platform_adapter *ad;

	platform_detect(&pd);
	ad = platform_adapter(pd.id);
	if (ad && platform_has_backend(ad, "managed-identity"))
		return 0;
	return hw_err_set(HW_EXIT_USAGE, "connection '%s' uses the platform "
	    "identity (credential_kind managed-identity), which platform "
	    "'%s' does not offer (its credential backends: %s): only Terra's "
	    "VMs have one; give the key's variable (HW_API_KEY_ENV) or file "
	    "(HW_API_KEY_FILE) instead", id, pd.id, ad ? ad->backends : "");
}
