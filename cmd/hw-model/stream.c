/*
 * stream.c - what the replay model answers for a turn: a chat.completion
 * object, or a server-sent event stream in one of several chunking styles.
 * Everything here is a pure function of the turn, its number and the style.
 */
#include <stdlib.h>
#include <string.h>

#include "replay.h"

enum pkind { P_CONTENT, P_HEAD, P_ARGS };

/* a piece of a streamed message: text, or a tool call's head or arguments */
struct piece {
	enum pkind k;
	size_t call;
	const char *s;
	size_t n;
};

struct render {
	const struct replay_turn *t;
	size_t number;
	const struct replay_style *st;
	struct replay_sse *out;
	struct buf ev, delta;
	struct piece *p;
	size_t np, cap;
};

static const char *
finish_reason(const struct replay_turn *t)
{
	return t->ncalls ? "tool_calls" : "stop";
}

static void
head(struct buf *b, size_t number, const char *object)
{
	buf_printf(b, "{\"id\":\"replay-%zu\",\"object\":\"%s\",\"created\":0,"
	    "\"model\":\"" REPLAY_MODEL "\",", number, object);
}

static void
usage(struct buf *b, const struct replay_turn *t)
{
	buf_printf(b, "\"usage\":{\"prompt_tokens\":%lld,"
	    "\"completion_tokens\":%lld,\"total_tokens\":%lld",
	    (long long)t->prompt_tokens, (long long)t->completion_tokens,
	    (long long)(t->prompt_tokens + t->completion_tokens));
	if (t->has_cost)
		buf_printf(b, ",\"cost\":%.17g", t->cost);
	buf_addc(b, '}');
}

static void
content(struct buf *b, const struct replay_turn *t)
{
	if (t->content)
		json_canon_str(b, t->content, t->content_n);
	else
		buf_adds(b, "null");
}

/* call appends tool call i whole, with "index" first when indexed */
static void
call(struct buf *b, const struct replay_turn *t, size_t i, int indexed)
{
	const struct replay_call *c = &t->calls[i];

	buf_addc(b, '{');
	if (indexed)
		buf_printf(b, "\"index\":%zu,", i);
	buf_adds(b, "\"id\":");
	json_canon_str(b, c->id, strlen(c->id));
	buf_adds(b, ",\"type\":\"function\",\"function\":{\"name\":");
	json_canon_str(b, c->name, strlen(c->name));
	buf_adds(b, ",\"arguments\":");
	json_canon_str(b, c->args, c->args_n);
	buf_adds(b, "}}");
}

static void
calls(struct buf *b, const struct replay_turn *t, int indexed)
{
	size_t i;

	buf_adds(b, ",\"tool_calls\":[");
	for (i = 0; i < t->ncalls; i++) {
		if (i)
			buf_addc(b, ',');
		call(b, t, i, indexed);
	}
	buf_addc(b, ']');
}

void
replay_render_completion(struct buf *b, const struct replay_turn *t,
    size_t number)
{
	head(b, number, "chat.completion");
	buf_adds(b, "\"choices\":[{\"index\":0,\"message\":{\"role\":"
	    "\"assistant\",\"content\":");
	content(b, t);
	if (t->ncalls)
		calls(b, t, 0);
	buf_printf(b, "},\"finish_reason\":\"%s\"}],", finish_reason(t));
	usage(b, t);
	buf_addc(b, '}');
}

/* ---- the event stream ---- */

void
replay_sse_init(struct replay_sse *s)
{
	memset(s, 0, sizeof *s);
	buf_init(&s->body);
}

void
replay_sse_release(struct replay_sse *s)
{
	buf_release(&s->body);
	free(s->ends);
	memset(s, 0, sizeof *s);
}

/* add_end marks the end of one write at offset off of the body */
static void
add_end(struct replay_sse *s, size_t off)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->ends = xrealloc(s->ends, s->cap * sizeof *s->ends);
	}
	s->ends[s->n++] = off;
}

static void
event(struct render *r, const char *data)
{
	const char *eol = r->st->crlf ? "\r\n" : "\n";
	struct replay_sse *s = r->out;

	if (r->st->comments && s->n) {
		buf_printf(&s->body, ": keep-alive%s", eol);
		add_end(s, s->body.len);
	}
	buf_printf(&s->body, "data: %s%s%s", data, eol, eol);
	add_end(s, s->body.len);
}

/* chunk sends one chat.completion.chunk with r->delta as its delta */
static void
chunk(struct render *r, const char *finish, int with_usage)
{
	buf_clear(&r->ev);
	head(&r->ev, r->number, "chat.completion.chunk");
	buf_adds(&r->ev, "\"choices\":[{\"index\":0,\"delta\":");
	buf_add(&r->ev, r->delta.p, r->delta.len);
	if (finish)
		buf_printf(&r->ev, ",\"finish_reason\":\"%s\"}]", finish);
	else
		buf_adds(&r->ev, ",\"finish_reason\":null}]");
	if (with_usage) {
		buf_addc(&r->ev, ',');
		usage(&r->ev, r->t);
	}
	buf_addc(&r->ev, '}');
	event(r, buf_cstr(&r->ev));
}

static void
delta(struct render *r, const char *json)
{
	buf_clear(&r->delta);
	buf_adds(&r->delta, json);
}

static void
usage_chunk(struct render *r)
{
	buf_clear(&r->ev);
	head(&r->ev, r->number, "chat.completion.chunk");
	buf_adds(&r->ev, "\"choices\":[],");
	usage(&r->ev, r->t);
	buf_addc(&r->ev, '}');
	event(r, buf_cstr(&r->ev));
}

static void
done(struct render *r)
{
	event(r, "[DONE]");
}

static void
render_whole(struct render *r, int include_usage)
{
	buf_clear(&r->delta);
	buf_adds(&r->delta, "{\"role\":\"assistant\",\"content\":");
	content(&r->delta, r->t);
	if (r->t->ncalls)
		calls(&r->delta, r->t, 1);
	buf_addc(&r->delta, '}');
	chunk(r, NULL, 0);
	delta(r, "{}");
	chunk(r, finish_reason(r->t), 0);
	if (include_usage)
		usage_chunk(r);
	done(r);
}

/* ---- pieces, for the styles that stream a little at a time ---- */

static void
piece(struct render *r, enum pkind k, size_t i, const char *s, size_t n)
{
	if (r->np == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 64;
		r->p = xrealloc(r->p, r->cap * sizeof *r->p);
	}
	r->p[r->np++] = (struct piece){ k, i, s, n };
}

/* text_pieces cuts the content into pieces of `each` code points */
static void
text_pieces(struct render *r, size_t each)
{
	const char *s = r->t->content, *end = s + r->t->content_n, *q;
	size_t cps;

	while (s && s < end) {
		for (q = s, cps = 0; q < end && cps < each; cps++)
			do
				q++;
			while (q < end && ((unsigned char)*q & 0xc0) == 0x80);
		piece(r, P_CONTENT, 0, s, (size_t)(q - s));
		s = q;
	}
}

/*
 * A call streams as items: its head (id and name), then its arguments in
 * pieces of `each` bytes (the canonical text is ASCII, so any cut is
 * safe).  With first_in_head the first piece rides in the head.
 */
static size_t
call_items(const struct replay_call *c, size_t each, int first_in_head)
{
	size_t pieces = (c->args_n + each - 1) / each;

	return first_in_head ? pieces : pieces + 1;
}

static void
call_item(struct render *r, size_t i, size_t j, size_t each,
    int first_in_head)
{
	const struct replay_call *c = &r->t->calls[i];
	size_t off, n;

	if (j == 0 && !first_in_head) {
		piece(r, P_HEAD, i, "", 0);
		return;
	}
	off = (first_in_head ? j : j - 1) * each;
	n = c->args_n - off < each ? c->args_n - off : each;
	piece(r, j == 0 ? P_HEAD : P_ARGS, i, c->args + off, n);
}

/* tool_pieces: each call in turn, or round robin across them */
static void
tool_pieces(struct render *r, size_t each, int first_in_head, int rr)
{
	size_t i, j, more = 1;

	for (i = 0; !rr && i < r->t->ncalls; i++)
		for (j = 0; j < call_items(&r->t->calls[i], each,
		    first_in_head); j++)
			call_item(r, i, j, each, first_in_head);
	for (j = 0; rr && more; j++)
		for (i = 0, more = 0; i < r->t->ncalls; i++)
			if (j < call_items(&r->t->calls[i], each,
			    first_in_head)) {
				call_item(r, i, j, each, first_in_head);
				more = 1;
			}
}

static void
piece_delta(struct render *r, const struct piece *p)
{
	const struct replay_call *c = &r->t->calls[p->call];

	buf_clear(&r->delta);
	if (p->k == P_CONTENT) {
		buf_adds(&r->delta, "{\"content\":");
		json_canon_str(&r->delta, p->s, p->n);
		buf_addc(&r->delta, '}');
		return;
	}
	buf_printf(&r->delta, "{\"tool_calls\":[{\"index\":%zu,", p->call);
	if (p->k == P_HEAD) {
		buf_adds(&r->delta, "\"id\":");
		json_canon_str(&r->delta, c->id, strlen(c->id));
		buf_adds(&r->delta, ",\"type\":\"function\",\"function\":"
		    "{\"name\":");
		json_canon_str(&r->delta, c->name, strlen(c->name));
		buf_addc(&r->delta, ',');
	} else
		buf_adds(&r->delta, "\"function\":{");
	buf_adds(&r->delta, "\"arguments\":");
	json_canon_str(&r->delta, p->s, p->n);
	buf_adds(&r->delta, "}}]}");
}

/*
 * llama.cpp's shape: a role chunk with null content, content three code
 * points at a time, each call's id and name with its first arguments, the
 * finish reason and the usage on the last chunk (always, as llama.cpp
 * does).
 */
static void
render_llama(struct render *r)
{
	size_t i;

	text_pieces(r, 3);
	tool_pieces(r, 5, 1, 0);
	delta(r, "{\"role\":\"assistant\",\"content\":null}");
	chunk(r, r->np ? NULL : finish_reason(r->t), r->np == 0);
	for (i = 0; i < r->np; i++) {
		piece_delta(r, &r->p[i]);
		chunk(r, i + 1 == r->np ? finish_reason(r->t) : NULL,
		    i + 1 == r->np);
	}
	done(r);
}

/*
 * vLLM's shape (and, with round robin, interleaved calls): a role chunk,
 * pieces, a finish chunk, and a usage-only chunk when the client asked for
 * stream_options.include_usage.
 */
static void
render_pieces(struct render *r, int rr, int include_usage)
{
	size_t i;

	text_pieces(r, 4);
	tool_pieces(r, rr ? 3 : 6, 0, rr);
	delta(r, rr ? "{\"role\":\"assistant\"}" :
	    "{\"role\":\"assistant\",\"content\":\"\"}");
	chunk(r, NULL, 0);
	for (i = 0; i < r->np; i++) {
		piece_delta(r, &r->p[i]);
		chunk(r, NULL, 0);
	}
	delta(r, "{}");
	chunk(r, finish_reason(r->t), 0);
	if (include_usage)
		usage_chunk(r);
	done(r);
}

/* bytes:N keeps the body and cuts it into N-byte writes instead */
static void
rewrite_bytes(struct replay_sse *s, size_t each)
{
	size_t off;

	s->n = 0;
	for (off = each; off < s->body.len; off += each)
		add_end(s, off);
	add_end(s, s->body.len);
}

void
replay_render_sse(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st, int include_usage)
{
	struct render r = { .t = t, .number = number, .st = st, .out = out };

	buf_init(&r.ev);
	buf_init(&r.delta);
	buf_clear(&out->body);
	out->n = 0;
	if (st->chunking == REPLAY_LLAMA)
		render_llama(&r);
	else if (st->chunking == REPLAY_VLLM)
		render_pieces(&r, 0, include_usage);
	else if (st->chunking == REPLAY_INTERLEAVED)
		render_pieces(&r, 1, include_usage);
	else
		render_whole(&r, include_usage);
	if (st->chunking == REPLAY_BYTES)
		rewrite_bytes(out, st->bytes);
	free(r.p);
	buf_release(&r.ev);
	buf_release(&r.delta);
}

void
replay_render_drop(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st)
{
	struct replay_style whole = *st;

	whole.chunking = REPLAY_WHOLE;
	whole.comments = 0;
	replay_render_sse(out, t, number, &whole, 0);
	out->body.len = out->ends[0] / 2;
	out->ends[0] = out->body.len;
	out->n = 1;
}

int
replay_style_parse(struct replay_style *st, const char *spec)
{
	static const char *const names[] = { "whole", "llama", "vllm",
		"interleaved" };
	int64_t n;
	size_t i;

	for (i = 0; i < 4; i++)
		if (!strcmp(spec, names[i])) {
			st->chunking = (enum replay_chunking)i;
			return 0;
		}
	if (!strncmp(spec, "bytes:", 6) && parse_seq(spec + 6, &n) == 0 &&
	    n >= 1 && n <= REPLAY_BYTES_MAX) {
		st->chunking = REPLAY_BYTES;
		st->bytes = (size_t)n;
		return 0;
	}
	return hw_err_set(HW_EXIT_USAGE, "invalid chunking '%s': expected "
	    "whole, llama, vllm, interleaved or bytes:N with N from 1 to %d",
	    spec, REPLAY_BYTES_MAX);
}
