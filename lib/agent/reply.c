/*
 * reply.c - the model client's failure codes and replies, shared by the
 * providers: model.c (OpenAI-compatible chat completions) and
 * anthropic.c (Messages), which call this file and nothing of each other
 * but anthropic.c's interface (provider.h).
 */
#include <stdlib.h>
#include <string.h>

#include "agent/provider.h"

/* ---- failure codes ---- */

static const struct {
	const char *code, *msg;
	int exit;
} codes[] = {
	{ MODEL_AUTH, "the model provider rejected the credentials",
	    HW_EXIT_FAIL },
	{ MODEL_QUOTA, "the model provider reports that the quota is "
	    "exhausted", HW_EXIT_FAIL },
	{ MODEL_RATE, "the model provider is limiting the request rate",
	    HW_EXIT_UNAVAILABLE },
	{ MODEL_CONFIG, "the model request was refused or the reply was "
	    "malformed; check the model route", HW_EXIT_DATA },
	{ MODEL_TRANSIENT, "the model provider failed or could not be "
	    "reached", HW_EXIT_UNAVAILABLE },
};

const char *
model_code_message(const char *code)
{
	size_t i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (code && !strcmp(code, codes[i].code))
			return codes[i].msg;
	return "the model call failed";
}

int
model_fail(const char *code, const char **out)
{
	size_t i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (!strcmp(code, codes[i].code))
			hw_err_set(codes[i].exit, "%s", codes[i].msg);
	if (out)
		*out = code;
	return -1;
}

/* status_code: the code an HTTP status (or error.code) implies */
const char *
model_status_code(long status)
{
	if (status == 401 || status == 403)
		return MODEL_AUTH;
	if (status == 402)
		return MODEL_QUOTA;
	if (status == 429)
		return MODEL_RATE;
	if (status == 408 || status >= 500)
		return MODEL_TRANSIENT;
	if (status >= 300)
		return MODEL_CONFIG;
	return NULL;
}

/* ---- replies ---- */

void
model_reply_init(struct model_reply *m)
{
	memset(m, 0, sizeof *m);
	buf_init(&m->content);
	m->prompt_tokens = m->completion_tokens = -1;
	m->cache_read_tokens = m->reasoning_tokens = -1;
}

void
model_reply_release(struct model_reply *m)
{
	size_t i;

	for (i = 0; i < m->ncalls; i++) {
		free(m->calls[i].id);
		free(m->calls[i].name);
		buf_release(&m->calls[i].args);
	}
	free(m->calls);
	buf_release(&m->content);
	model_reply_init(m);
}

static void
json_text(struct buf *b, const char *s, size_t n)
{
	json_canon_str(b, s ? s : "", s ? n : 0);
}

static void
json_count(struct buf *b, const char *key, int64_t v)
{
	buf_printf(b, "\"%s\":", key);
	if (v < 0)
		buf_adds(b, "null");
	else
		buf_printf(b, "%lld", (long long)v);
}

void
model_reply_json(struct buf *b, const struct model_reply *m)
{
	const struct model_tool_call *c;
	size_t i;

	buf_adds(b, "{\"content\":");
	json_text(b, m->content.p, m->content.len);
	buf_adds(b, ",\"finish\":");
	json_text(b, m->finish, strlen(m->finish));
	buf_adds(b, ",\"tool_calls\":[");
	for (i = 0; i < m->ncalls; i++) {
		c = &m->calls[i];
		buf_adds(b, i ? ",{\"arguments\":" : "{\"arguments\":");
		json_text(b, c->args.p, c->args.len);
		buf_adds(b, ",\"id\":");
		json_text(b, c->id, c->id ? strlen(c->id) : 0);
		buf_adds(b, ",\"name\":");
		json_text(b, c->name, c->name ? strlen(c->name) : 0);
		buf_addc(b, '}');
	}
	buf_adds(b, "],\"usage\":{");
	json_count(b, "cache_read_tokens", m->cache_read_tokens);
	buf_addc(b, ',');
	json_count(b, "completion_tokens", m->completion_tokens);
	buf_addc(b, ',');
	json_count(b, "prompt_tokens", m->prompt_tokens);
	buf_addc(b, ',');
	json_count(b, "reasoning_tokens", m->reasoning_tokens);
	buf_adds(b, "}}");
}

/* ---- assembling a reply ---- */

int
model_malformed(struct model_stream *st)
{
	st->code = MODEL_CONFIG;
	return model_fail(MODEL_CONFIG, NULL);
}

int
model_failed(struct model_stream *st, const char *code)
{
	st->code = code;
	return model_fail(code, NULL);
}

/* new_call inserts an empty call with stream index idx, in index order */
static size_t
new_call(struct model_stream *st, int64_t idx)
{
	struct model_reply *m = st->out;
	size_t at = m->ncalls;

	m->calls = xrealloc(m->calls, (m->ncalls + 1) * sizeof *m->calls);
	st->index = xrealloc(st->index, (m->ncalls + 1) * sizeof *st->index);
	while (at > 0 && st->index[at - 1] > idx)
		at--;
	memmove(&m->calls[at + 1], &m->calls[at], (m->ncalls - at) *
	    sizeof *m->calls);
	memmove(&st->index[at + 1], &st->index[at], (m->ncalls - at) *
	    sizeof *st->index);
	memset(&m->calls[at], 0, sizeof m->calls[at]);
	buf_init(&m->calls[at].args);
	st->index[at] = idx;
	m->ncalls++;
	return at;
}

int
model_new_call(struct model_stream *st, int64_t idx, size_t *slot)
{
	if (st->out->ncalls >= MODEL_CALLS_MAX)
		return model_malformed(st);
	*slot = new_call(st, idx);
	return 0;
}

int
model_add_text(struct model_stream *st, const char *s, size_t n)
{
	if (st->out->content.len + n > MODEL_BODY_MAX)
		return model_malformed(st);
	buf_add(&st->out->content, s, n);
	st->delivered++;
	if (st->on_delta)
		st->on_delta(st->ctx, s, n);
	return 0;
}
