/*
 * anthropic.c - Anthropic's Messages API behind the model client: the
 * request from the agent's chat messages and tools, and the message or
 * its event stream read into the same reply (text, tool calls in block
 * order, stop reason, usage) the OpenAI-compatible route gives.
 */
#include <string.h>

#include "agent/provider.h"

enum { NO_BLOCK, TEXT_BLOCK, TOOL_BLOCK };

/* ---- the request ---- */

/*
 * turn appends content blocks to the last message when it has role,
 * else starts a message of that role
 */
static struct jval *
turn(struct arena *a, struct jval *out, const char *role)
{
	struct jval *m = out->n ? out->u.a[out->n - 1] : NULL, *c;

	if (m && json_is_str(json_get(m, "role"), role))
		return json_get(m, "content");
	m = json_obj(a);
	c = json_new(a, J_ARRAY);
	json_add(a, m, "role", json_str(a, role));
	json_add(a, m, "content", c);
	json_push(a, out, m);
	return c;
}

static int
has_text(const struct jval *v)
{
	return v && v->t == J_STRING && v->n;
}

static struct jval *
text_block(struct arena *a, const struct jval *text)
{
	struct jval *b = json_obj(a);

	json_add(a, b, "type", json_str(a, "text"));
	json_add(a, b, "text", json_copy(a, text));
	return b;
}

/* tool_use: a tool_use block of an assistant's tool call c, or NULL */
static struct jval *
tool_use(struct arena *a, const struct jval *c)
{
	const struct jval *f = json_get(c, "function");
	const char *args = json_get_str(f, "arguments");
	struct jval *b, *in = NULL;
	char err[128];

	if (!json_get_str(c, "id") || !json_get_str(f, "name"))
		return NULL;
	if (args)
		in = json_parse(a, args, json_get(f, "arguments")->n, err,
		    sizeof err);
	if (!in || in->t != J_OBJECT)
		in = json_obj(a);
	b = json_obj(a);
	json_add(a, b, "type", json_str(a, "tool_use"));
	json_add(a, b, "id", json_copy(a, json_get(c, "id")));
	json_add(a, b, "name", json_copy(a, json_get(f, "name")));
	json_add(a, b, "input", in);
	return b;
}

static void
assistant(struct arena *a, struct jval *out, const struct jval *m)
{
	const struct jval *calls = json_get(m, "tool_calls");
	struct jval *b, *c = NULL;
	size_t i;

	if (has_text(json_get(m, "content")))
		json_push(a, c = turn(a, out, "assistant"), text_block(a,
		    json_get(m, "content")));
	for (i = 0; calls && calls->t == J_ARRAY && i < calls->n; i++)
		if ((b = tool_use(a, calls->u.a[i])))
			json_push(a, c ? c : (c = turn(a, out, "assistant")),
			    b);
}

static void
tool_result(struct arena *a, struct jval *out, const struct jval *m)
{
	const struct jval *id = json_get(m, "tool_call_id");
	struct jval *b;

	if (!id || id->t != J_STRING)
		return;
	b = json_obj(a);
	json_add(a, b, "type", json_str(a, "tool_result"));
	json_add(a, b, "tool_use_id", json_copy(a, id));
	if (has_text(json_get(m, "content")))
		json_add(a, b, "content", json_copy(a, json_get(m,
		    "content")));
	json_push(a, turn(a, out, "user"), b);
}

/* convert: the chat messages as Messages turns, system text aside */
static struct jval *
convert(struct arena *a, const struct jval *messages, struct buf *system)
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
			json_push(a, turn(a, out, "user"), text_block(a,
			    content));
		else if (!strcmp(role, "assistant"))
			assistant(a, out, m);
		else if (!strcmp(role, "tool"))
			tool_result(a, out, m);
	}
	return out;
}

/* tool: {name, description, input_schema} of a function tool, or NULL */
static struct jval *
tool(struct arena *a, const struct jval *t)
{
	const struct jval *f = json_get(t, "function"), *p;
	struct jval *o;

	if (!json_get_str(f, "name"))
		return NULL;
	o = json_obj(a);
	json_add(a, o, "name", json_copy(a, json_get(f, "name")));
	if (json_get_str(f, "description"))
		json_add(a, o, "description", json_copy(a, json_get(f,
		    "description")));
	if ((p = json_get(f, "parameters")) && p->t == J_OBJECT)
		json_add(a, o, "input_schema", json_copy(a, p));
	else {
		p = json_obj(a);
		json_add(a, (struct jval *)p, "type", json_str(a, "object"));
		json_add(a, o, "input_schema", (struct jval *)p);
	}
	return o;
}

void
anthropic_request(const struct model_route *r,
    const struct jval *messages, const struct jval *tools, struct buf *b)
{
	struct jval *o, *ts, *t;
	struct buf system;
	struct arena a;
	size_t i;

	arena_init(&a);
	buf_init(&system);
	o = json_obj(&a);
	json_add(&a, o, "messages", convert(&a, messages, &system));
	json_add(&a, o, "model", json_str(&a, route_model_name(r)));
	json_add(&a, o, "max_tokens", json_int(&a, r->max_output_tokens > 0 ?
	    r->max_output_tokens : ANTHROPIC_MAX_TOKENS));
	json_add(&a, o, "stream", json_bool(&a, 1));
	if (system.len)
		json_add(&a, o, "system", json_strn(&a, system.p, system.len));
	ts = json_new(&a, J_ARRAY);
	for (i = 0; tools && tools->t == J_ARRAY && i < tools->n; i++)
		if ((t = tool(&a, tools->u.a[i])))
			json_push(&a, ts, t);
	if (ts->n)
		json_add(&a, o, "tools", ts);
	json_canon(b, o);
	buf_release(&system);
	arena_release(&a);
}

/* ---- replies ---- */

static void
count(const struct jval *u, const char *key, int64_t *out, int add)
{
	int64_t v;

	if (json_get_int(u, key, &v) < 0 || v < 0)
		return;
	*out = add && *out >= 0 ? *out + v : v;
}

/*
 * usage: input_tokens, with the cache's reads and writes, is what the
 * prompt cost (the OpenAI route's prompt_tokens count cached ones too)
 */
static void
usage(struct model_reply *m, const struct jval *u)
{
	if (!u || u->t != J_OBJECT)
		return;
	if (json_get(u, "input_tokens")) {
		count(u, "input_tokens", &m->prompt_tokens, 0);
		count(u, "cache_read_input_tokens", &m->prompt_tokens, 1);
		count(u, "cache_creation_input_tokens", &m->prompt_tokens, 1);
		count(u, "cache_read_input_tokens", &m->cache_read_tokens, 0);
	}
	count(u, "output_tokens", &m->completion_tokens, 0);
}

/* stop: the stop reason, named as the OpenAI route names it */
static int
stop(struct model_stream *st, const struct jval *v)
{
	static const char *const map[][2] = { { "end_turn", "stop" },
		{ "stop_sequence", "stop" }, { "tool_use", "tool_calls" },
		{ "max_tokens", "length" } };
	const char *s;
	size_t i;

	if (!v || v->t == J_NULL)
		return 0;
	if (v->t != J_STRING)
		return model_malformed(st);
	s = v->u.s;
	for (i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(s, map[i][0]))
			s = map[i][1];
	snprintf(st->out->finish, sizeof st->out->finish, "%s", s);
	st->finished = 1;
	return 0;
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

/*
 * block_open: a content block of index idx starts (b: its
 * content_block); a whole message's blocks close at once
 */
static int
block_open(struct model_stream *st, const struct jval *b, int64_t idx)
{
	const char *type = json_get_str(b, "type");
	const struct jval *v, *in;
	struct model_tool_call *c;

	if (!type || st->block >= 0)
		return model_malformed(st);
	st->block = idx;
	if (!strcmp(type, "text")) {
		st->kind = TEXT_BLOCK;
		v = json_get(b, "text");
		if (v && v->t != J_STRING)
			return model_malformed(st);
		return has_text(v) ? model_add_text(st, v->u.s, v->n) : 0;
	}
	if (strcmp(type, "tool_use") || !nonempty_str(json_get(b, "id")) ||
	    !nonempty_str(json_get(b, "name")) ||
	    model_new_call(st, idx, &st->slot) < 0)
		return model_malformed(st);
	st->kind = TOOL_BLOCK;
	c = &st->out->calls[st->slot];
	c->id = dup(json_get(b, "id"));
	c->name = dup(json_get(b, "name"));
	in = json_get(b, "input");
	if (in && in->t != J_OBJECT)
		return model_malformed(st);
	st->from_start = in && in->n;
	if (st->from_start)
		json_canon(&c->args, in);
	return 0;
}

/* block_close: the open block ends; a tool's input must be an object */
static int
block_close(struct model_stream *st)
{
	struct model_tool_call *c;
	struct arena a;
	struct jval *in;
	char err[128];

	if (st->block < 0)
		return model_malformed(st);
	st->block = -1;
	if (st->kind != TOOL_BLOCK)
		return 0;
	c = &st->out->calls[st->slot];
	if (!c->args.len)
		buf_adds(&c->args, "{}");
	arena_init(&a);
	in = valid_utf8(c->args.p, c->args.len) ? json_parse(&a, c->args.p,
	    c->args.len, err, sizeof err) : NULL;
	st->kind = in && in->t == J_OBJECT ? NO_BLOCK : -1;
	arena_release(&a);
	return st->kind < 0 ? model_malformed(st) : 0;
}

/* block_delta: a text_delta or input_json_delta of the open block */
static int
block_delta(struct model_stream *st, const struct jval *o)
{
	const struct jval *d = json_get(o, "delta"), *v;
	const char *type = json_get_str(d, "type");
	struct model_tool_call *c;
	int64_t idx;

	if (json_get_int(o, "index", &idx) < 0 || idx != st->block || !type)
		return model_malformed(st);
	if (!strcmp(type, "text_delta") && st->kind == TEXT_BLOCK) {
		if (!(v = json_get(d, "text")) || v->t != J_STRING)
			return model_malformed(st);
		return v->n ? model_add_text(st, v->u.s, v->n) : 0;
	}
	if (strcmp(type, "input_json_delta") || st->kind != TOOL_BLOCK ||
	    !(v = json_get(d, "partial_json")) || v->t != J_STRING)
		return model_malformed(st);
	c = &st->out->calls[st->slot];
	if (st->from_start && v->n)	/* the deltas say it all */
		buf_clear(&c->args);
	st->from_start = st->from_start && !v->n;
	buf_add(&c->args, v->u.s, v->n);
	return 0;
}

const char *
anthropic_error_code(const struct jval *err, long status)
{
	static const struct {
		const char *type, *code;
	} types[] = {
		{ "authentication_error", MODEL_AUTH },
		{ "permission_error", MODEL_AUTH },
		{ "rate_limit_error", MODEL_RATE },
		{ "overloaded_error", MODEL_TRANSIENT },
		{ "api_error", MODEL_TRANSIENT },
		{ "timeout_error", MODEL_TRANSIENT },
	};
	const char *t = json_get_str(err, "type"), *k;
	size_t i;

	if (t && !strcmp(t, "billing_error"))
		return MODEL_QUOTA;
	if ((k = model_status_code(status)))
		return k;
	for (i = 0; t && i < sizeof types / sizeof types[0]; i++)
		if (!strcmp(t, types[i].type))
			return types[i].code;
	return status ? MODEL_CONFIG : t ? MODEL_CONFIG : MODEL_TRANSIENT;
}

static int
stream_error(struct model_stream *st, const struct jval *o)
{
	return model_failed(st, anthropic_error_code(json_get(o, "error"),
	    0));
}

static int
block_start(struct model_stream *st, const struct jval *o)
{
	int64_t idx;

	if (json_get_int(o, "index", &idx) < 0 || idx < 0)
		return model_malformed(st);
	return block_open(st, json_get(o, "content_block"), idx);
}

static int
block_stop(struct model_stream *st, const struct jval *o)
{
	int64_t idx;

	if (json_get_int(o, "index", &idx) < 0 || idx != st->block)
		return model_malformed(st);
	return block_close(st);
}

int
anthropic_event(struct model_stream *st, const struct jval *o)
{
	const char *type = json_get_str(o, "type");

	if (!type)
		return model_malformed(st);
	if (!strcmp(type, "error"))
		return stream_error(st, o);
	if (!strcmp(type, "message_start")) {
		usage(st->out, json_get(json_get(o, "message"), "usage"));
		return 0;
	}
	if (!strcmp(type, "content_block_start"))
		return block_start(st, o);
	if (!strcmp(type, "content_block_delta"))
		return block_delta(st, o);
	if (!strcmp(type, "content_block_stop"))
		return block_stop(st, o);
	if (!strcmp(type, "message_delta")) {
		usage(st->out, json_get(o, "usage"));
		return stop(st, json_get(json_get(o, "delta"), "stop_reason"));
	}
	if (!strcmp(type, "message_stop"))
		st->done = 1;
	return 0;	/* ping, and types added later */
}

int
anthropic_message(struct model_stream *st, const struct jval *o)
{
	const struct jval *content = json_get(o, "content");
	size_t i;

	if (json_is_str(json_get(o, "type"), "error"))
		return stream_error(st, o);
	if (!json_is_str(json_get(o, "type"), "message") || !content ||
	    content->t != J_ARRAY)
		return model_malformed(st);
	for (i = 0; i < content->n; i++)
		if (block_open(st, content->u.a[i], (int64_t)i) < 0 ||
		    block_close(st) < 0)
			return -1;
	usage(st->out, json_get(o, "usage"));
	if (stop(st, json_get(o, "stop_reason")) < 0)
		return -1;
	st->done = 1;
	return 0;
}

int
anthropic_end(struct model_stream *st)
{
	return st->block >= 0 ? model_malformed(st) : 0;
}
