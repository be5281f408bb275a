/*
 * the replay model of hw-model(1)
 */
#ifndef HW_REPLAY_H
#define HW_REPLAY_H

#include "base/base.h"

/* ---- the replay model (script.c, stream.c, serve.c) ---- */

/*
 * hw-model serve --replay serves the turns of a script, one per request,
 * as an OpenAI-compatible model on loopback, so that the agent, the demo
 * and the tests run offline and byte-for-byte deterministically.  It says
 * what it is wherever it appears: its model id is REPLAY_MODEL.
 */
#define REPLAY_MODEL "heartwood-replay"
#define REPLAY_SCRIPT_MAX (64u << 20)	/* a script file, in bytes */
#define REPLAY_BODY_MAX (8u << 20)	/* a request body; more is 413 */
#define REPLAY_BYTES_MAX 1048576	/* the largest N of bytes:N */
#define REPLAY_DROP 1			/* replay_turn.fail: "drop" */

/* One scripted tool call; strings are NUL-free and never empty. */
struct replay_call {
	const char *id, *name;
	const char *args;	/* canonical JSON text of the arguments */
	size_t args_n;
};
/*
 * One scripted turn.  content is NULL when absent or null (it may hold
 * NUL: content_n is its length); expect is NULL when absent; fail is 0,
 * 401, 403, 429, 500 or REPLAY_DROP.  Tokens default to 0.
 */
struct replay_turn {
	long line;			/* in the script, from 1 */
	const char *content;
	size_t content_n;
	struct replay_call *calls;
	size_t ncalls;
	int64_t prompt_tokens, completion_tokens;
	double cost;			/* usage.cost, when has_cost */
	int has_cost;
	const char *expect;
	int fail;
};
/* A parsed script: n >= 1 turns, all owned by the script (arena a). */
struct replay_script {
	struct arena a;
	struct replay_turn *turns;
	size_t n;
};
void replay_script_init(struct replay_script *s);
void replay_script_release(struct replay_script *s);
/*
 * replay_script_parse validates and parses a whole script of n bytes, one
 * JSON object per line (lines holding only white space are skipped), as
 * hw-model(1) specifies: unknown fields are refused at every level.
 * Errors: code 65 and "name:LINE: reason", or "name: the script holds no
 * turns".  A failed parse may leave turns behind: release the script.
 * replay_script_load reads the file at path (a regular file of at most
 * REPLAY_SCRIPT_MAX bytes; missing is code 66) and parses it.
 */
int replay_script_parse(struct replay_script *s, const char *name,
    const char *p, size_t n);
int replay_script_load(struct replay_script *s, const char *path);

/* How a streamed answer is cut into chunks and writes (hw-model(1)). */
enum replay_chunking {
	REPLAY_WHOLE, REPLAY_LLAMA, REPLAY_VLLM, REPLAY_INTERLEAVED,
	REPLAY_BYTES
};
struct replay_style {
	enum replay_chunking chunking;
	size_t bytes;		/* REPLAY_BYTES: the size of each write */
	int crlf;		/* end lines with CR LF */
	int comments;		/* ": keep-alive" lines between events */
};
/*
 * replay_style_parse sets st->chunking (and st->bytes) from "whole",
 * "llama", "vllm", "interleaved" or "bytes:N", N from 1 to
 * REPLAY_BYTES_MAX; anything else is code 2.  crlf and comments are left
 * alone.
 */
int replay_style_parse(struct replay_style *st, const char *spec);

/*
 * A rendered event-stream body and how it is written: write i is the
 * bytes from ends[i - 1] (0 for the first) to ends[i].
 */
struct replay_sse {
	struct buf body;
	size_t *ends;
	size_t n, cap;
};
void replay_sse_init(struct replay_sse *s);
void replay_sse_release(struct replay_sse *s);
/*
 * replay_render_completion appends the chat.completion object of turn t,
 * the number-th served (from 1; its id is "replay-NUMBER").
 * replay_render_sse replaces out's content with the whole event stream of
 * the turn in style st, ending with "data: [DONE]"; include_usage is the
 * request's stream_options.include_usage.  replay_render_drop renders the
 * first half of the first event only (what "drop" sends before it closes
 * the connection).  Each is a pure function of its arguments.
 */
void replay_render_completion(struct buf *b, const struct replay_turn *t,
    size_t number);
void replay_render_sse(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st, int include_usage);
void replay_render_drop(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st);

struct replay_serve_opts {
	const char *prog;	/* names the lines logged on stderr */
	const char *script;	/* the script's path */
	int port;		/* 0: a free port */
	struct replay_style style;
	int exit_when_done;
	const char *served_name;	/* also listed by /v1/models, or NULL */
};
/*
 * replay_serve loads o->script and serves its turns on 127.0.0.1:o->port
 * (hw-model(1)): once it listens it writes one JSON line describing the
 * endpoint to out, flushes it, and writes a banner to stderr; it then
 * logs each request's method, path, turn and status (never a header or a
 * body) to stderr.  Returns 0 after SIGINT or SIGTERM, or, with
 * exit_when_done, once the response to the last turn is complete; -1 if
 * the script is invalid (65, 66), it cannot listen (69), or out cannot be
 * written (74).  SIGINT, SIGTERM and SIGUSR1 are blocked while it runs.
 */
int replay_serve(const struct replay_serve_opts *o, FILE *out);

#endif
