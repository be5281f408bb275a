/*
 * model.c - the agent's LLM client: an OpenAI-compatible route from the
 * environment, chat-completion streams assembled into one reply, and
 * the libcurl exchange with its retries.
 *
 * Whatever a provider says goes no further than the classification of
 * its failure: callers see one of five codes and a fixed sentence, so
 * provider text, keys and URLs never reach events, audit or stderr.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <sodium.h>

#include "agent/provider.h"

#define ERROR_BODY_MAX 65536
#define CONNECT_MS 10000L
#define WAIT_MAX_S 8
#define LOCAL_KEY "local-model"

/* fail: the fixed sentence of code, *out set; always -1 */
static int
fail(const char *code, const char **out)
{
	return model_fail(code, out);
}

static int
retryable(const char *code)
{
	return !strcmp(code, MODEL_RATE) || !strcmp(code, MODEL_TRANSIENT);
}

static int
str_has(const struct jval *v, const char *what)
{
	return v && v->t == J_STRING && strstr(v->u.s, what);
}

/*
 * error_code classifies an error object ({"code","type","message"}) of
 * a response with HTTP status (0 inside a stream), looking only at its
 * code and type, never at the message.
 */
static const char *
error_code(const struct jval *err, long status)
{
	const struct jval *c = json_get(err, "code"), *t = json_get(err,
	    "type");
	const char *k;
	int64_t n;

	if (str_has(c, "insufficient_quota") || str_has(t,
	    "insufficient_quota"))
		return MODEL_QUOTA;
	if (!status && json_get_int(err, "code", &n) == 0)
		status = n;
	if ((k = model_status_code(status)))
		return k;
	if (str_has(c, "rate_limit") || str_has(t, "rate_limit"))
		return MODEL_RATE;
	return status >= 200 && status < 300 ? MODEL_TRANSIENT :
	    status ? MODEL_CONFIG : MODEL_TRANSIENT;
}

/* ---- assembling a stream ---- */

static int
malformed(struct model_stream *st)
{
	return model_malformed(st);
}


static int
stream_event(void *ctx, const char *data, size_t n);

void
model_stream_init(struct model_stream *st, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx)
{
	memset(st, 0, sizeof *st);
	st->out = out;
	st->on_delta = on_delta;
	st->ctx = ctx;
	st->block = -1;
	arena_init(&st->a);
	sse_init(&st->sse, stream_event, st);
}

void
model_stream_release(struct model_stream *st)
{
	sse_release(&st->sse);
	arena_release(&st->a);
	free(st->index);
	st->index = NULL;
}

/*
 * call_slot finds the call a fragment continues, or starts one.  Without
 * an index (some servers send whole calls so), a fragment with a new id
 * starts a call and any other continues the last.
 */
static int
call_slot(struct model_stream *st, const struct jval *frag, size_t *slot)
{
	struct model_reply *m = st->out;
	const struct jval *iv = json_get(frag, "index");
	const char *id = json_get_str(frag, "id");
	int64_t idx;
	size_t i;

	if (iv && (json_get_int(frag, "index", &idx) < 0 || idx < 0))
		return malformed(st);
	if (!iv) {
		if (m->ncalls && (!id || !*id || (m->calls[m->ncalls - 1].id &&
		    !strcmp(m->calls[m->ncalls - 1].id, id)))) {
			*slot = m->ncalls - 1;
			return 0;
		}
		idx = m->ncalls ? st->index[m->ncalls - 1] + 1 : 0;
	}
	for (i = 0; i < m->ncalls; i++)
		if (st->index[i] == idx) {
			*slot = i;
			return 0;
		}
	if (m->ncalls >= MODEL_CALLS_MAX)
		return malformed(st);
	return model_new_call(st, idx, slot);
}

static int
opt_string(const struct jval *v)
{
	return !v || v->t == J_NULL || v->t == J_STRING;
}

/* keep_first sets *dst to v's text unless it is already set */
static void
keep_first(char **dst, const struct jval *v)
{
	if (*dst || !v || v->t != J_STRING || !v->n)
		return;
	*dst = xmalloc(v->n + 1);
	memcpy(*dst, v->u.s, v->n);
	(*dst)[v->n] = 0;
}

static int
tool_fragment(struct model_stream *st, const struct jval *frag)
{
	const struct jval *fn, *id, *name = NULL, *args = NULL;
	struct model_tool_call *c;
	size_t slot = 0;

	if (!frag || frag->t != J_OBJECT)
		return malformed(st);
	id = json_get(frag, "id");
	if ((fn = json_get(frag, "function")) && fn->t != J_NULL) {
		if (fn->t != J_OBJECT)
			return malformed(st);
		name = json_get(fn, "name");
		args = json_get(fn, "arguments");
	}
	if (!opt_string(id) || !opt_string(name) || (args &&
	    args->t != J_STRING && args->t != J_NULL && args->t != J_OBJECT))
		return malformed(st);
	if (call_slot(st, frag, &slot) < 0)
		return -1;
	c = &st->out->calls[slot];
	keep_first(&c->id, id);
	keep_first(&c->name, name);
	if (args && args->t == J_STRING)
		buf_add(&c->args, args->u.s, args->n);
	else if (args && args->t == J_OBJECT)	/* some servers send objects */
		json_canon(&c->args, args);
	return 0;
}

static int
add_content(struct model_stream *st, const struct jval *v)
{
	if (!opt_string(v))
		return malformed(st);
	if (!v || v->t != J_STRING || !v->n)
		return 0;
	return model_add_text(st, v->u.s, v->n);
}

static int
set_finish(struct model_stream *st, const struct jval *v)
{
	if (!opt_string(v))
		return malformed(st);
	if (!v || v->t != J_STRING)
		return 0;
	snprintf(st->out->finish, sizeof st->out->finish, "%.*s",
	    (int)(v->n < sizeof st->out->finish ? v->n :
	    sizeof st->out->finish - 1), v->u.s);
	st->finished = 1;
	return 0;
}

static void
usage_count(const struct jval *o, const char *key, int64_t *out)
{
	int64_t v;

	if (json_get_int(o, key, &v) == 0 && v >= 0)
		*out = v;
}

/*
 * usage_cost: 1 and the price in *out when v is the call's cost in US
 * dollars as some routes report it (usage.cost: a number from 0 to a
 * million); anything else leaves the cost unknown
 */
static int
usage_cost(const struct jval *v, double *out)
{
	double d;

	if (!v || (v->t != J_FLOAT && v->t != J_INT))
		return 0;
	d = v->t == J_FLOAT ? v->u.d : strtod(v->u.s, NULL);
	if (!(d >= 0 && d <= 1e6))
		return 0;
	*out = d;
	return 1;
}

static void
set_usage(struct model_reply *m, const struct jval *u)
{
	if (!u || u->t != J_OBJECT)
		return;
	usage_count(u, "prompt_tokens", &m->prompt_tokens);
	usage_count(u, "completion_tokens", &m->completion_tokens);
	usage_count(json_get(u, "prompt_tokens_details"), "cached_tokens",
	    &m->cache_read_tokens);
	usage_count(json_get(u, "completion_tokens_details"),
	    "reasoning_tokens", &m->reasoning_tokens);
	m->cost_known = usage_cost(json_get(u, "cost"), &m->cost);
}

/* message applies a delta (streamed) or a message (not streamed) */
static int
message(struct model_stream *st, const struct jval *d)
{
	const struct jval *calls;
	size_t i;

	if (!d || d->t == J_NULL)
		return 0;
	if (d->t != J_OBJECT)
		return malformed(st);
	if (add_content(st, json_get(d, "content")) < 0)
		return -1;
	calls = json_get(d, "tool_calls");
	if (!calls || calls->t == J_NULL)
		return 0;
	if (calls->t != J_ARRAY)
		return malformed(st);
	for (i = 0; i < calls->n; i++)
		if (tool_fragment(st, calls->u.a[i]) < 0)
			return -1;
	return 0;
}

/* choice0: the choice with index 0 (or no index) of a chunk, or NULL */
static int
choice0(struct model_stream *st, const struct jval *o,
    const struct jval **out)
{
	const struct jval *ch = json_get(o, "choices"), *c;
	int64_t idx;
	size_t i;

	*out = NULL;
	if (!ch || ch->t == J_NULL)
		return 0;
	if (ch->t != J_ARRAY)
		return malformed(st);
	for (i = 0; i < ch->n; i++) {
		c = ch->u.a[i];
		if (c->t != J_OBJECT)
			return malformed(st);
		if (json_get(c, "index") && (json_get_int(c, "index",
		    &idx) < 0 || idx != 0))
			continue;
		*out = c;
		return 0;
	}
	return 0;
}

/* apply applies one chunk (streamed) or completion (not) to the reply */
static int
apply(struct model_stream *st, const struct jval *o, const char *part)
{
	const struct jval *c, *err;

	if (o->t != J_OBJECT)
		return malformed(st);
	if ((err = json_get(o, "error")) && err->t != J_NULL) {
		st->code = error_code(err, 0);
		return fail(st->code, NULL);
	}
	if (choice0(st, o, &c) < 0)
		return -1;
	if (c && (message(st, json_get(c, part)) < 0 ||
	    set_finish(st, json_get(c, "finish_reason")) < 0))
		return -1;
	set_usage(st->out, json_get(o, "usage"));
	return 0;
}

static int
stream_event(void *ctx, const char *data, size_t n)
{
	struct model_stream *st = ctx;
	struct jval *o;
	char err[128];

	if (st->done || n == 0)
		return 0;
	if (n == 6 && !memcmp(data, "[DONE]", 6)) {
		st->done = 1;
		return 0;
	}
	arena_clear(&st->a);
	if (!valid_utf8(data, n) || !(o = json_parse(&st->a, data, n, err,
	    sizeof err)))
		return malformed(st);
	if (st->provider == ROUTE_ANTHROPIC)
		return anthropic_event(st, o);
	if (st->provider == ROUTE_SUBSCRIPTION)
		return responses_event(st, o);
	return apply(st, o, "delta");
}

int
model_stream_feed(struct model_stream *st, const char *p, size_t n)
{
	if (st->code)
		return -1;
	if (st->done)
		return 0;
	if (sse_feed(&st->sse, p, n) < 0)
		return st->code ? -1 : malformed(st);
	return 0;
}

/* finish_calls names unnamed calls and refuses calls without a name */
static int
finish_calls(struct model_stream *st)
{
	struct model_reply *m = st->out;
	size_t i;

	for (i = 0; i < m->ncalls; i++) {
		if (!m->calls[i].name)
			return malformed(st);
		if (!m->calls[i].id)
			m->calls[i].id = xasprintf("call_%zu", i);
		buf_cstr(&m->calls[i].args);
	}
	buf_cstr(&m->content);
	return 0;
}

int
model_stream_end(struct model_stream *st)
{
	if (st->code)
		return -1;
	if (!st->done)
		sse_end(&st->sse);
	if (!st->done && !st->finished) {
		st->code = MODEL_TRANSIENT;
		return fail(MODEL_TRANSIENT, NULL);
	}
	if (st->provider == ROUTE_ANTHROPIC && anthropic_end(st) < 0)
		return -1;
	if (st->provider == ROUTE_SUBSCRIPTION && responses_end(st) < 0)
		return -1;
	return finish_calls(st);
}

/* reply_parse: model_reply_parse for a provider */
static int
reply_parse(int provider, const char *p, size_t n, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code)
{
	struct model_stream st;
	struct jval *o;
	char err[128];
	int rc = -1;

	model_stream_init(&st, out, on_delta, ctx);
	st.provider = provider;
	if (!valid_utf8(p, n) || !(o = json_parse(&st.a, p, n, err,
	    sizeof err)))
		malformed(&st);
	else if ((provider == ROUTE_ANTHROPIC ? anthropic_message(&st, o) :
	    provider == ROUTE_SUBSCRIPTION ? responses_message(&st, o) :
	    apply(&st, o, "message")) == 0 && (provider != ROUTE_SUBSCRIPTION ||
	    responses_end(&st) == 0))
		rc = finish_calls(&st);
	if (rc < 0 && code)
		*code = st.code;
	model_stream_release(&st);
	return rc;
}

int
model_reply_parse(const char *p, size_t n, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code)
{
	return reply_parse(ROUTE_OPENAI, p, n, out, on_delta, ctx, code);
}

/* ---- the exchange ---- */

enum mode { UNDECIDED, STREAM, WHOLE, REFUSED };

/* One attempt: the transfer's state, shared with the write callback. */
struct xfer {
	CURL *c;
	enum mode mode;
	long status;
	struct model_stream st;
	struct buf body;	/* a whole reply, or a refusal's first bytes */
	size_t total;
	int stopped;		/* [DONE] read: the rest is not wanted */
	const char *code;	/* set when the callback failed */
};


static void
decide(struct xfer *x)
{
	char *ct = NULL;

	curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
	curl_easy_getinfo(x->c, CURLINFO_CONTENT_TYPE, &ct);
	if (x->status < 200 || x->status > 299)
		x->mode = REFUSED;
	else
		x->mode = media_is_json(ct) ? WHOLE : STREAM;
}

static size_t
on_write(char *p, size_t size, size_t nmemb, void *ctx)
{
	struct xfer *x = ctx;
	size_t n = size * nmemb;

	if (x->mode == UNDECIDED)
		decide(x);
	if (n > MODEL_BODY_MAX - x->total) {
		x->code = MODEL_CONFIG;
		return 0;
	}
	x->total += n;
	if (x->mode == STREAM) {
		if (model_stream_feed(&x->st, p, n) < 0) {
			x->code = x->st.code;
			return 0;
		}
		x->stopped = x->st.done;
		return x->stopped ? 0 : n;
	}
	if (x->mode == WHOLE)
		buf_add(&x->body, p, n);
	else if (x->body.len < ERROR_BODY_MAX)
		buf_add(&x->body, p, n < ERROR_BODY_MAX - x->body.len ? n :
		    ERROR_BODY_MAX - x->body.len);
	return n;
}

/* refusal_code classifies a non-2xx answer by its status and error body */
static const char *
refusal_code(struct xfer *x)
{
	struct arena a;
	struct jval *o;
	const char *k;
	char err[128];

	arena_init(&a);
	o = x->body.len && valid_utf8(x->body.p, x->body.len) ? json_parse(&a,
	    x->body.p, x->body.len, err, sizeof err) : NULL;
	k = x->st.provider == ROUTE_ANTHROPIC ? anthropic_error_code(
	    json_get(o, "error"), x->status) :
	    x->st.provider == ROUTE_SUBSCRIPTION ? responses_error_code(
	    json_get(o, "error"), x->status) : error_code(json_get(o,
	    "error"), x->status);
	x->st.out->too_large = x->status == 413 || str_has(json_get(json_get(o,
	    "error"), "code"), "context_length_exceeded");
	arena_release(&a);
	return k;
}

static const char *
curl_code(CURLcode rc)
{
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_TOO_MANY_REDIRECTS:
	case CURLE_FILESIZE_EXCEEDED:
		return MODEL_CONFIG;
	default:
		return MODEL_TRANSIENT;
	}
}

/* outcome turns a finished transfer into 0 or a failure code */
static const char *
outcome(struct xfer *x, CURLcode rc, void (*on_delta)(void *, const char *,
    size_t), void *ctx)
{
	const char *k = NULL;

	if (x->code)
		return x->code;
	if (x->mode == UNDECIDED && rc == CURLE_OK)
		decide(x);
	if (x->mode == REFUSED && x->status > 0)
		return refusal_code(x);
	if (rc != CURLE_OK && !x->stopped && (x->mode != STREAM ||
	    !x->st.finished))
		return curl_code(rc);
	if (x->mode == WHOLE) {
		if (reply_parse(x->st.provider, x->body.p ? x->body.p : "",
		    x->body.len, x->st.out, on_delta, ctx, &k) < 0)
			return k;
		x->st.delivered += x->st.out->content.len > 0;
		return NULL;
	}
	return model_stream_end(&x->st) < 0 ? x->st.code : NULL;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static int curl_ready;

static void
curl_start(void)
{
	curl_ready = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

/* knob: a test knob's value in ms, or -1 when unset or invalid */
static long
knob(const char *name)
{
	const char *v = getenv(name);
	int64_t ms;

	if (!v || parse_seq(v, &ms) < 0 || ms > 86400000)
		return -1;
	return (long)ms;
}

/*
 * auth_headers builds the request headers: the key as a bearer token, or
 * for Anthropic as x-api-key with the API version.  The key is copied
 * only into a wiped buffer and the list, which wipe_headers clears
 * before freeing.
 */
static struct curl_slist *
auth_headers(const struct model_route *r, int *ok)
{
	const char *key = r->key ? r->key : r->key_env ? getenv(r->key_env) :
	    LOCAL_KEY;
	struct curl_slist *h = NULL;
	char *token = NULL;
	struct buf auth;

	/* the platform identity's token, fetched anew before it expires */
	if (r->managed)
		key = identity_token(&token) < 0 ? NULL : token;
	*ok = key && *key;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	if (r->provider == ROUTE_ANTHROPIC)
		h = curl_slist_append(h, "anthropic-version: "
		    ANTHROPIC_VERSION);
	if (r->provider == ROUTE_SUBSCRIPTION)
		h = curl_slist_append(h, "Accept: text/event-stream");
	if (r->provider == ROUTE_SUBSCRIPTION && r->account) {
		/* the Codex endpoint's account, from the sign-in's claims */
		buf_init(&auth);
		buf_printf(&auth, "chatgpt-account-id: %s", r->account);
		h = curl_slist_append(h, buf_cstr(&auth));
		buf_release(&auth);
	}
	if (!*ok) {
		free(token);
		return h;
	}
	buf_init(&auth);
	buf_reserve(&auth, strlen(key) + 32);
	buf_adds(&auth, r->provider == ROUTE_ANTHROPIC ? "x-api-key: " :
	    "Authorization: Bearer ");
	buf_adds(&auth, key);
	h = curl_slist_append(h, buf_cstr(&auth));
	buf_wipe(&auth);
	if (token)
		mem_wipe(token, strlen(token));
	free(token);
	return h;
}

static void
wipe_headers(struct curl_slist *h)
{
	struct curl_slist *p;

	for (p = h; p; p = p->next)
		mem_wipe(p->data, strlen(p->data));
	curl_slist_free_all(h);
}

/* the waiting hook (model_on_wait): process-wide, set before any call */
static int (*wait_hook)(void *ctx);
static void *wait_ctx;

void
model_on_wait(int (*hook)(void *ctx), void *ctx)
{
	wait_hook = hook;
	wait_ctx = ctx;
}

/* on_progress gives the hook its turn; a hook that says stop ends it */
static int
on_progress(void *p, curl_off_t dt, curl_off_t dn, curl_off_t ut,
    curl_off_t un)
{
	struct xfer *x = p;

	(void)dt, (void)dn, (void)ut, (void)un;
	if (!wait_hook || !wait_hook(wait_ctx))
		return 0;
	x->code = MODEL_INTERRUPTED;	/* the hook's error stands */
	return 1;
}

static void
options(CURL *c, const struct model_route *r, const char *url,
    const struct buf *body, struct curl_slist *h, struct xfer *x)
{
	long ms = knob("HW_MODEL_TIMEOUT_MS");

	if (ms <= 0)
		ms = r->timeout_s > 0 ? r->timeout_s * 1000 : 180000;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->p);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms < CONNECT_MS ? ms :
	    CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE,
	    (curl_off_t)MODEL_BODY_MAX);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "heartwood/" HW_VERSION);
	if (r->loopback)
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (wait_hook) {
		curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(c, CURLOPT_XFERINFODATA, x);
	}
}

/*
 * attempt makes one exchange; returns NULL or a failure code, with
 * *delivered set when content reached on_delta and *wait_s the server's
 * Retry-After (0 when none).
 */
static const char *
attempt(const struct model_route *r, const char *url, const struct buf *body,
    struct model_reply *out, void (*on_delta)(void *, const char *, size_t),
    void *ctx, int *delivered, long *wait_s)
{
	struct curl_slist *h;
	struct xfer x;
	curl_off_t ra = 0;
	const char *k;
	CURLcode rc;
	int keyed;

	memset(&x, 0, sizeof x);
	if (!(x.c = curl_easy_init()))
		return MODEL_TRANSIENT;
	buf_init(&x.body);
	model_stream_init(&x.st, out, on_delta, ctx);
	x.st.provider = r->provider;
	h = auth_headers(r, &keyed);
	if (keyed) {
		options(x.c, r, url, body, h, &x);
		rc = curl_easy_perform(x.c);
		k = outcome(&x, rc, on_delta, ctx);
		if (curl_easy_getinfo(x.c, CURLINFO_RETRY_AFTER, &ra) !=
		    CURLE_OK)
			ra = 0;
	} else
		k = MODEL_AUTH;
	wipe_headers(h);
	*delivered = x.st.delivered > 0;
	*wait_s = ra > 0 ? (ra > WAIT_MAX_S ? WAIT_MAX_S : (long)ra) : 0;
	model_stream_release(&x.st);
	buf_release(&x.body);
	curl_easy_cleanup(x.c);
	return k;
}

static void
backoff(int try, long retry_after_s)
{
	long ms = retry_after_s > 0 ? retry_after_s * 1000 :
	    (1000L << (try < 3 ? try : 3));
	long cap = knob("HW_MODEL_RETRY_WAIT_MS");
	struct timespec ts;

	if (cap >= 0 && cap < ms)
		ms = cap;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void
request_body(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct buf *b)
{
	struct arena a;
	struct jval *o, *so;

	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "messages", (struct jval *)messages);
	json_add(&a, o, "model", json_str(&a, route_model_name(r)));
	json_add(&a, o, "stream", json_bool(&a, 1));
	so = json_obj(&a);
	json_add(&a, so, "include_usage", json_bool(&a, 1));
	json_add(&a, o, "stream_options", so);
	if (tools && tools->t == J_ARRAY && tools->n)
		json_add(&a, o, "tools", (struct jval *)tools);
	if (r->max_output_tokens > 0)
		json_add(&a, o, "max_tokens", json_int(&a,
		    r->max_output_tokens));
	json_canon(b, o);
	arena_release(&a);
}

/* exchange: the attempts of one call; NULL or the last failure's code */
static const char *
exchange(const struct model_route *r, const char *url, const struct buf *body,
    struct model_reply *out, void (*on_delta)(void *, const char *, size_t),
    void *ctx)
{
	const char *k;
	long wait_s;
	int try, delivered;

	for (try = 0;; try++) {
		model_reply_release(out);
		k = attempt(r, url, body, out, on_delta, ctx, &delivered,
		    &wait_s);
		if (!k || !retryable(k) || delivered || try >= r->retries)
			return k;
		backoff(try, wait_s);
	}
}

/*
 * sub_failed: the sign-in could not give a token (not signed in, the
 * refresh refused, the token file refused): MODEL_AUTH, with the sign-in's
 * own message; an authorization server out of reach is MODEL_TRANSIENT
 */
static int
sub_failed(const char **code)
{
	if (code)
		*code = hw_err_code() == HW_EXIT_UNAVAILABLE ? MODEL_TRANSIENT :
		    MODEL_AUTH;
	return -1;
}

/*
 * signed_in: model_complete on the subscription route: the access token
 * (refreshed when it expires within a minute) as the key, and once more
 * after a refresh when the endpoint answers 401
 */
static int
signed_in(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code)
{
	struct model_route rr = *r;
	struct sub_tokens tok;
	const char *k;
	struct buf body;
	char *url;

	if (sub_access_token(0, &tok) < 0)
		return sub_failed(code);
	rr.key = tok.access;
	rr.account = tok.account;
	rr.key_env = rr.key_file = NULL;
	buf_init(&body);
	responses_request(r, messages, tools, &body);
	url = route_call_url(r, 0);
	k = exchange(&rr, url, &body, out, on_delta, ctx);
	if (k && !strcmp(k, MODEL_AUTH) && out->content.len == 0) {
		if (sub_refresh(&tok) < 0) {
			free(url);
			buf_release(&body);
			sub_tokens_release(&tok);
			return sub_failed(code);
		}
		rr.key = tok.access;
		rr.account = tok.account;
		k = exchange(&rr, url, &body, out, on_delta, ctx);
	}
	free(url);
	buf_release(&body);
	sub_tokens_release(&tok);
	return k ? fail(k, code) : 0;
}

int
model_complete(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code)
{
	const char *k = MODEL_CONFIG;
	struct buf body;
	char *url;

	if (!r->model || !r->base_url || strncmp(r->model, route_provider(r),
	    strlen(route_provider(r))) ||
	    !messages || messages->t != J_ARRAY || (tools &&
	    tools->t != J_ARRAY && tools->t != J_NULL))
		return fail(MODEL_CONFIG, code);
	pthread_once(&curl_once, curl_start);
	if (!curl_ready)
		return fail(MODEL_TRANSIENT, code);
	if (r->provider == ROUTE_SUBSCRIPTION)
		return signed_in(r, messages, tools, out, on_delta, ctx, code);
	buf_init(&body);
	if (r->provider == ROUTE_ANTHROPIC)
		anthropic_request(r, messages, tools, &body);
	else
		request_body(r, messages, tools, &body);
	url = route_call_url(r, 0);
	k = exchange(r, url, &body, out, on_delta, ctx);
	free(url);
	buf_release(&body);
	return k ? fail(k, code) : 0;
}
