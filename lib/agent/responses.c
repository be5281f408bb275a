/*
 * responses.c - OpenAI's Responses API behind the model client, the route
 * the ChatGPT subscription unlocks: the request from the agent's chat
 * messages and tools (input items, function tools), and the response or
 * its event stream read into the same reply (text, function calls in
 * output order, stop reason, usage) the chat-completions route gives.
 */
#include <stdio.h>
#include <string.h>

#include "agent/provider.h"

/* ---- the request ---- */

static int
has_text(const struct jval *v)
{
	return v && v->t == J_STRING && v->n;
}

/* message: an input message item of role with one content part */
static struct jval *
message(struct arena *a, const char *role, const char *part,
    const struct jval *text)
{
	struct jval *m = json_obj(a), *c = json_new(a, J_ARRAY), *p;

	p = json_obj(a);
	json_add(a, p, "type", json_str(a, part));
	json_add(a, p, "text", json_copy(a, text));
	json_push(a, c, p);
	json_add(a, m, "type", json_str(a, "message"));
	json_add(a, m, "role", json_str(a, role));
	json_add(a, m, "content", c);
	return m;
}

/* calls: the function_call items of an assistant's tool calls */
static void
calls(struct arena *a, struct jval *out, const struct jval *m)
{
	const struct jval *l = json_get(m, "tool_calls"), *f;
	struct jval *it;
	size_t i;

	for (i = 0; l && l->t == J_ARRAY && i < l->n; i++) {
		f = json_get(l->u.a[i], "function");
		if (!json_get_str(l->u.a[i], "id") || !json_get_str(f, "name"))
			continue;
		it = json_obj(a);
		json_add(a, it, "type", json_str(a, "function_call"));
		json_add(a, it, "call_id", json_copy(a, json_get(l->u.a[i],
		    "id")));
		json_add(a, it, "name", json_copy(a, json_get(f, "name")));
		json_add(a, it, "arguments", json_get_str(f, "arguments") ?
		    json_copy(a, json_get(f, "arguments")) : json_str(a,
		    "{}"));
		json_push(a, out, it);
	}
}

static void
output(struct arena *a, struct jval *out, const struct jval *m)
{
	const struct jval *id = json_get(m, "tool_call_id");
	struct jval *it;

	if (!id || id->t != J_STRING)
		return;
	it = json_obj(a);
	json_add(a, it, "type", json_str(a, "function_call_output"));
	json_add(a, it, "call_id", json_copy(a, id));
	json_add(a, it, "output", has_text(json_get(m, "content")) ?
	    json_copy(a, json_get(m, "content")) : json_str(a, ""));
	json_push(a, out, it);
}

/* input: the chat messages as input items, system text aside */
static struct jval *
input(struct arena *a, const struct jval *messages, struct buf *system)
{
	struct jval *out = json_new(a, J_ARRAY);
	const struct jval *m, *content;
	const char *role;
	size_t i;

	for (i = 0; i < messages->n; i++) {
		m = messages->u.a[i];
		role = json_get_str(m, "role");
		content = json_get(m, "content");
		if (!role)
			continue;
		if (!strcmp(role, "system") && has_text(content)) {
			if (system->len)
				buf_adds(system, "\n\n");
			buf_add(system, content->u.s, content->n);
		} else if (!strcmp(role, "user") && has_text(content))
			json_push(a, out, message(a, "user", "input_text",
			    content));
		else if (!strcmp(role, "assistant")) {
			if (has_text(content))
				json_push(a, out, message(a, "assistant",
				    "output_text", content));
			calls(a, out, m);
		} else if (!strcmp(role, "tool"))
			output(a, out, m);
	}
	return out;
}

/* tool: {type function, name, description, parameters}, or NULL */
static struct jval *
tool(struct arena *a, const struct jval *t)
{
	const struct jval *f = json_get(t, "function"), *p;
	struct jval *o;

	if (!json_get_str(f, "name"))
		return NULL;
	o = json_obj(a);
	json_add(a, o, "type", json_str(a, "function"));
	json_add(a, o, "name", json_copy(a, json_get(f, "name")));
	if (json_get_str(f, "description"))
		json_add(a, o, "description", json_copy(a, json_get(f,
		    "description")));
	if ((p = json_get(f, "parameters")) && p->t == J_OBJECT)
		json_add(a, o, "parameters", json_copy(a, p));
	json_add(a, o, "strict", json_bool(a, 0));
	return o;
}

void
responses_request(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct buf *b)
{
	struct jval *o, *ts, *t;
	struct buf system;
	struct arena a;
	size_t i;

	arena_init(&a);
	buf_init(&system);
	o = json_obj(&a);
	json_add(&a, o, "input", input(&a, messages, &system));
	json_add(&a, o, "instructions", json_strn(&a, system.p ? system.p :
	    "", system.len));
	json_add(&a, o, "model", json_str(&a, route_model_name(r)));
	json_add(&a, o, "parallel_tool_calls", json_bool(&a, 0));
	json_add(&a, o, "store", json_bool(&a, 0));
	json_add(&a, o, "stream", json_bool(&a, 1));
	if (r->max_output_tokens > 0)
		json_add(&a, o, "max_output_tokens", json_int(&a,
		    r->max_output_tokens));
	ts = json_new(&a, J_ARRAY);
	for (i = 0; tools && tools->t == J_ARRAY && i < tools->n; i++)
		if ((t = tool(&a, tools->u.a[i])))
			json_push(&a, ts, t);
	if (ts->n) {
		json_add(&a, o, "tools", ts);
		json_add(&a, o, "tool_choice", json_str(&a, "auto"));
	}
	json_canon(b, o);
	buf_release(&system);
	arena_release(&a);
}

/* ---- replies ---- */

static void
count(const struct jval *u, const char *key, int64_t *out)
{
	int64_t v;

	if (json_get_int(u, key, &v) == 0 && v >= 0)
		*out = v;
}

static void
usage(struct model_reply *m, const struct jval *u)
{
	if (!u || u->t != J_OBJECT)
		return;
	count(u, "input_tokens", &m->prompt_tokens);
	count(u, "output_tokens", &m->completion_tokens);
	count(json_get(u, "input_tokens_details"), "cached_tokens",
	    &m->cache_read_tokens);
	count(json_get(u, "output_tokens_details"), "reasoning_tokens",
	    &m->reasoning_tokens);
}

const char *
responses_error_code(const struct jval *err, long status)
{
	static const struct {
		const char *code, *k;
	} codes[] = {
		{ "invalid_api_key", MODEL_AUTH },
		{ "token_expired", MODEL_AUTH },
		{ "insufficient_quota", MODEL_QUOTA },
		{ "usage_limit_reached", MODEL_QUOTA },
		{ "rate_limit_exceeded", MODEL_RATE },
		{ "server_error", MODEL_TRANSIENT },
		{ "server_is_overloaded", MODEL_TRANSIENT },
	};
	const char *c = json_get_str(err, "code"), *t = json_get_str(err,
	    "type"), *k;
	size_t i;

	for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if ((c && !strcmp(c, codes[i].code)) || (t && !strcmp(t,
		    codes[i].code)))
			if (status != 401 && status != 403)
				return codes[i].k;
	if ((k = model_status_code(status)))
		return k;
	return status ? MODEL_CONFIG : MODEL_TRANSIENT;
}

static int
nonempty_str(const struct jval *v)
{
	return v && v->t == J_STRING && v->n && !memchr(v->u.s, 0, v->n);
}

static char *
dup(const struct jval *v)
{
	char *s = xmalloc(v->n + 1);

	memcpy(s, v->u.s, v->n);
	s[v->n] = 0;
	return s;
}

/* call_at: the call of output index idx, or -1 */
static int
call_at(struct model_stream *st, int64_t idx, size_t *slot)
{
	size_t i;

	for (i = 0; i < st->out->ncalls; i++)
		if (st->index[i] == idx) {
			*slot = i;
			return 0;
		}
	return -1;
}

/* call_open: a function_call item at output index idx */
static int
call_open(struct model_stream *st, const struct jval *it, int64_t idx)
{
	const struct jval *args = json_get(it, "arguments");
	struct model_tool_call *c;
	size_t slot;

	if (!nonempty_str(json_get(it, "call_id")) ||
	    !nonempty_str(json_get(it, "name")) || (args && args->t !=
	    J_STRING) || call_at(st, idx, &slot) == 0 ||
	    model_new_call(st, idx, &slot) < 0)
		return model_malformed(st);
	c = &st->out->calls[slot];
	c->id = dup(json_get(it, "call_id"));
	c->name = dup(json_get(it, "name"));
	if (args && args->n)
		buf_add(&c->args, args->u.s, args->n);
	return 0;
}

/* item: an output item (streamed: added, done; or of a whole response) */
static int
item(struct model_stream *st, const struct jval *it, int64_t idx, int done)
{
	const char *type = json_get_str(it, "type");
	const struct jval *args, *c, *p;
	size_t slot, i;

	if (!type)
		return model_malformed(st);
	if (!strcmp(type, "function_call")) {
		if (call_at(st, idx, &slot) < 0)
			return call_open(st, it, idx);
		if (!done)
			return model_malformed(st);
		args = json_get(it, "arguments");
		if (args && args->t != J_STRING)
			return model_malformed(st);
		if (args) {	/* the whole arguments are what counts */
			buf_clear(&st->out->calls[slot].args);
			buf_add(&st->out->calls[slot].args, args->u.s,
			    args->n);
		}
		return 0;
	}
	if (strcmp(type, "message") || !st->finished)
		return 0;	/* reasoning and others; streamed text */
	c = json_get(it, "content");
	for (i = 0; c && c->t == J_ARRAY && i < c->n; i++) {
		p = c->u.a[i];
		if (json_is_str(json_get(p, "type"), "output_text") &&
		    has_text(json_get(p, "text")) && model_add_text(st,
		    json_get(p, "text")->u.s, json_get(p, "text")->n) < 0)
			return -1;
	}
	return 0;
}

static int
args_delta(struct model_stream *st, const struct jval *o)
{
	const struct jval *d = json_get(o, "delta");
	int64_t idx;
	size_t slot;

	if (json_get_int(o, "output_index", &idx) < 0 || !d ||
	    d->t != J_STRING || call_at(st, idx, &slot) < 0)
		return model_malformed(st);
	buf_add(&st->out->calls[slot].args, d->u.s, d->n);
	return 0;
}

/* completed: the response's end, its usage and the stop reason */
static int
completed(struct model_stream *st, const struct jval *resp)
{
	const char *status = json_get_str(resp, "status");

	usage(st->out, json_get(resp, "usage"));
	snprintf(st->out->finish, sizeof st->out->finish, "%s",
	    status && !strcmp(status, "incomplete") ? "length" :
	    st->out->ncalls ? "tool_calls" : "stop");
	st->finished = st->done = 1;
	return 0;
}

static int
indexed_item(struct model_stream *st, const struct jval *o, int done)
{
	int64_t idx;

	if (json_get_int(o, "output_index", &idx) < 0 || idx < 0)
		return model_malformed(st);
	return item(st, json_get(o, "item"), idx, done);
}

int
responses_event(struct model_stream *st, const struct jval *o)
{
	const char *type = json_get_str(o, "type");
	const struct jval *d;

	if (!type)
		return model_malformed(st);
	if (!strcmp(type, "error"))
		return model_failed(st, responses_error_code(o, 0));
	if (!strcmp(type, "response.failed"))
		return model_failed(st, responses_error_code(json_get(
		    json_get(o, "response"), "error"), 0));
	if (!strcmp(type, "response.output_text.delta")) {
		if (!(d = json_get(o, "delta")) || d->t != J_STRING)
			return model_malformed(st);
		return d->n ? model_add_text(st, d->u.s, d->n) : 0;
	}
	if (!strcmp(type, "response.output_item.added"))
		return indexed_item(st, o, 0);
	if (!strcmp(type, "response.output_item.done"))
		return indexed_item(st, o, 1);
	if (!strcmp(type, "response.function_call_arguments.delta"))
		return args_delta(st, o);
	if (!strcmp(type, "response.completed") ||
	    !strcmp(type, "response.incomplete"))
		return completed(st, json_get(o, "response"));
	return 0;	/* created, in_progress, *.done and types added later */
}

int
responses_message(struct model_stream *st, const struct jval *o)
{
	const struct jval *out = json_get(o, "output"), *err;
	size_t i;

	if ((err = json_get(o, "error")) && err->t == J_OBJECT)
		return model_failed(st, responses_error_code(err, 0));
	if (!out || out->t != J_ARRAY)
		return model_malformed(st);
	st->finished = 1;	/* item() takes a message's text whole */
	for (i = 0; i < out->n; i++)
		if (item(st, out->u.a[i], (int64_t)i, 0) < 0)
			return -1;
	return completed(st, o);
}

int
responses_end(struct model_stream *st)
{
	struct arena a;
	struct jval *in;
	char err[128];
	size_t i;
	int ok = 1;

	arena_init(&a);
	for (i = 0; ok && i < st->out->ncalls; i++) {
		struct buf *b = &st->out->calls[i].args;

		if (!b->len)
			buf_adds(b, "{}");
		in = valid_utf8(b->p, b->len) ? json_parse(&a, b->p, b->len,
		    err, sizeof err) : NULL;
		ok = in && in->t == J_OBJECT;
	}
	arena_release(&a);
	return ok ? 0 : model_malformed(st);
}
