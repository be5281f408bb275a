/*
 * discover.c - a connection's model list: GET {base}/models through
 * libcurl (OpenAI-compatible, OpenAI and Anthropic shapes), turned into
 * heartwood.model-catalog.v1 entries
 */
#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"

#define BODY_MAX (16u << 20)
#define ENTRIES_MAX 10000
#define PAGES_MAX 100

static struct curl_slist *
headers(const struct discover_req *r)
{
	struct curl_slist *h = curl_slist_append(NULL,
	    "Accept: application/json");
	struct buf b;

	buf_init(&b);
	if (r->key && !strcmp(r->protocol, "anthropic")) {
		buf_printf(&b, "x-api-key: %s", r->key);
		h = curl_slist_append(h, buf_cstr(&b));
	} else if (r->key) {
		buf_printf(&b, "Authorization: Bearer %s", r->key);
		h = curl_slist_append(h, buf_cstr(&b));
	}
	buf_wipe(&b);
	if (r->api_version) {
		buf_init(&b);
		buf_printf(&b, "anthropic-version: %s", r->api_version);
		h = curl_slist_append(h, buf_cstr(&b));
		buf_release(&b);
	}
	return h;
}

static void
wipe_headers(struct curl_slist *h)
{
	for (struct curl_slist *p = h; p; p = p->next)
		mem_wipe(p->data, strlen(p->data));
	curl_slist_free_all(h);
}

/* once: one GET; 0, or 1 when it may be tried again, -1 when not */
static int
once(const struct discover_req *r, struct curl_slist *h, struct buf *b)
{
	CURL *c = curl_easy_init();
	struct buf_sink sink = { b, BODY_MAX, 0 };
	long code = 0;
	CURLcode rc;
	int out = -1;

	if (!c)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot start libcurl");
	buf_clear(b);
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, r->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "heartwood/" HW_VERSION);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "identity");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	if (!strncmp(r->url, "http://", 7))
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	/* never the body in a message: a provider may echo the key there */
	if (rc == CURLE_WRITE_ERROR)
		hw_err_set(HW_EXIT_DATA, "cannot discover models at '%s': the "
		    "answer is over 16 MiB", r->url);
	else if (rc != CURLE_OK) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot discover models at "
		    "'%s': %s", r->url, curl_easy_strerror(rc));
		out = 1;
	} else if (code != 200) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot discover models at "
		    "'%s': status %ld%s", r->url, code, code == 401 ||
		    code == 403 ? " (the key was refused)" : "");
		out = code >= 500 || code == 429 ? 1 : -1;
	} else
		out = 0;
	return out;
}

/* chat_only: an OpenAI model id that is not a chat model */
static int
not_chat(const char *id)
{
	static const char *const parts[] = { "embedding", "whisper", "tts",
		"dall-e", "moderation", "transcribe", "realtime", "audio",
		"image", NULL };

	for (size_t i = 0; parts[i]; i++)
		if (strstr(id, parts[i]))
			return 1;
	return 0;
}

static int
id_ok(const struct jval *v)
{
	if (!v || v->t != J_STRING || !v->n || v->n > 249)
		return 0;
	for (size_t i = 0; i < v->n; i++)
		if (v->u.s[i] < 0x21 || v->u.s[i] > 0x7e)
			return 0;
	return 1;
}

/* context: the model's context window when its entry says, else 0 */
static int64_t
context(const struct jval *m)
{
	static const char *const keys[] = { "max_model_len", "context_window",
		"context_length", "max_input_tokens", NULL };
	int64_t v;

	for (size_t i = 0; keys[i]; i++)
		if (json_get_int(m, keys[i], &v) == 0 && v > 0)
			return v;
	if (json_get_int(json_get(m, "meta"), "n_ctx_train", &v) == 0 &&
	    v > 0)
		return v;
	return 0;
}

static struct jval *
entry(const struct discover_req *r, const struct jval *m, struct arena *a)
{
	const struct jval *id = json_get(m, "id");
	const struct jval *dn = json_get(m, "display_name");
	struct jval *e = json_obj(a), *tools;
	const char *why = NULL;
	int64_t ctx = context(m);

	if (!id_ok(id))
		why = "the model id is not 1 to 249 printable ASCII "
		    "characters without spaces";
	else if (!strcmp(r->protocol, "openai") && not_chat(id->u.s))
		why = "not a chat model: it cannot run the agent";
	else if (ctx && ctx < MODEL_CONTEXT_MIN)
		why = "its context window is below the agent's minimum of "
		    "18432 tokens";
	if (why || !strcmp(r->protocol, "openai-compatible"))
		tools = why ? json_bool(a, 0) : json_new(a, J_NULL);
	else
		tools = json_bool(a, 1);
	json_add(a, e, "schema_version", json_str(a, MODEL_CATALOG_SCHEMA));
	json_add(a, e, "connection_id", json_str(a, r->connection_id));
	json_add(a, e, "model_id", json_copy(a, id));
	json_add(a, e, "display_name", dn && dn->t == J_STRING && dn->n ?
	    json_copy(a, dn) : json_copy(a, id));
	if (id_ok(id)) {
		struct buf x;

		buf_init(&x);
		buf_printf(&x, "%s%s", r->prefix, id->u.s);
		json_add(a, e, "execution_model", json_strn(a, x.p, x.len));
		buf_release(&x);
	} else
		json_add(a, e, "execution_model", json_new(a, J_NULL));
	json_add(a, e, "availability", json_str(a, why ? "unavailable" :
	    "available"));
	json_add(a, e, "reason", why ? json_str(a, why) : json_new(a, J_NULL));
	json_add(a, e, "context_window", ctx ? json_int(a, ctx) :
	    json_new(a, J_NULL));
	json_add(a, e, "supports_tools", tools);
	return e;
}

static int
by_id(const void *x, const void *y)
{
	const struct jval *a = json_get(*(struct jval *const *)x, "model_id");
	const struct jval *b = json_get(*(struct jval *const *)y, "model_id");
	size_t n = a->n < b->n ? a->n : b->n;
	int c = memcmp(a->u.s, b->u.s, n);

	return c ? c : (a->n > b->n) - (a->n < b->n);
}

/*
 * page: the answer's data[] appended to out as entries; *next (in a) the
 * after_id of the next page when an Anthropic list says it has more
 */
static int
page(const struct discover_req *r, const struct buf *b, struct jval *out,
    const char **next, struct arena *a)
{
	struct jval *v, *data, *more;
	const char *last;
	char err[160];

	*next = NULL;
	if (!(v = json_parse(a, b->p ? b->p : "", b->len, err, sizeof err)) ||
	    v->t != J_OBJECT)
		return hw_err_set(HW_EXIT_DATA, "invalid model list from "
		    "'%s': %s", r->url, v ? "not a JSON object" : err);
	data = json_get(v, "data");
	if (!data || data->t != J_ARRAY)
		return hw_err_set(HW_EXIT_DATA, "invalid model list from "
		    "'%s': no data array", r->url);
	if (out->n + data->n > ENTRIES_MAX)
		return hw_err_set(HW_EXIT_DATA, "invalid model list from "
		    "'%s': more than %d models", r->url, ENTRIES_MAX);
	for (size_t i = 0; i < data->n; i++) {
		const struct jval *m = data->u.a[i];

		if (m->t != J_OBJECT || !json_get(m, "id") ||
		    json_get(m, "id")->t != J_STRING)
			return hw_err_set(HW_EXIT_DATA, "invalid model list "
			    "from '%s': data[%zu] has no string id", r->url,
			    i);
		json_push(a, out, entry(r, m, a));
	}
	more = json_get(v, "has_more");
	last = json_get_str(v, "last_id");
	if (!strcmp(r->protocol, "anthropic") && more && more->t == J_TRUE) {
		if (!data->n || !last || !*last || strlen(last) > 249 ||
		    strspn(last, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
		    "QRSTUVWXYZ0123456789._:-@") != strlen(last))
			return hw_err_set(HW_EXIT_DATA, "invalid model list "
			    "from '%s': has_more without a usable last_id",
			    r->url);
		*next = last;
	}
	return 0;
}

/* sorted: out sorted by model_id, duplicates dropped */
static struct jval *
sorted(struct jval *out)
{
	size_t i, k;

	if (out->n > 1)
		qsort(out->u.a, out->n, sizeof *out->u.a, by_id);
	for (i = k = 0; i < out->n; i++)
		if (!k || by_id(&out->u.a[k - 1], &out->u.a[i]))
			out->u.a[k++] = out->u.a[i];
	out->n = k;
	return out;
}

/* get: one page at url, tried again once as r says; 0 or -1 */
static int
get(const struct discover_req *r, const char *url, struct curl_slist *h,
    struct buf *b)
{
	struct discover_req one = *r;
	int rc = -1;

	one.url = url;
	for (int attempt = 0; attempt <= r->retries; attempt++) {
		if (attempt) {
			struct timespec ts = { 1, 0 };

			nanosleep(&ts, NULL);
		}
		if ((rc = once(&one, h, b)) <= 0)
			break;
	}
	return rc == 0 ? 0 : -1;
}

struct jval *
model_discover(const struct discover_req *r, struct arena *a)
{
	struct jval *out = json_new(a, J_ARRAY);
	const char *next = NULL;
	struct curl_slist *h;
	struct buf b, url;
	int rc = 0, pages = 0;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	h = headers(r);
	buf_init(&b);
	buf_init(&url);
	/* Anthropic pages its list: at most 1000 a page, PAGES_MAX pages */
	do {
		buf_clear(&url);
		buf_adds(&url, r->url);
		if (!strcmp(r->protocol, "anthropic"))
			buf_adds(&url, "?limit=1000");
		if (next)
			buf_printf(&url, "&after_id=%s", next);
		if (++pages > PAGES_MAX)
			rc = hw_err_set(HW_EXIT_DATA, "invalid model list from "
			    "'%s': more than %d pages", r->url, PAGES_MAX);
		else
			rc = get(r, buf_cstr(&url), h, &b) < 0 ||
			    page(r, &b, out, &next, a) < 0 ? -1 : 0;
	} while (rc == 0 && next);
	wipe_headers(h);
	buf_wipe(&b);
	buf_release(&url);
	return rc == 0 ? sorted(out) : NULL;
}
