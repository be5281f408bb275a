/*
 * agent - the session's one owner while it runs: the model client and
 * its stream, the agent loop (turns, review, tools, condensation).
 */
#ifndef HW_AGENT_H
#define HW_AGENT_H

#include "agent/tools/tools.h"
#include "session/session.h"

/* ---- the agent loop (agent.c) ---- */

struct agent_opts {
	int stream;		/* print transient records on stdout */
	int auto_low_risk;	/* Low-Risk Automation, else review every set */
	int max_iterations;	/* model calls in one run (AGENT_ITERATIONS) */
};
#define AGENT_ITERATIONS 100
/*
 * agent_run continues session s from its durable events until a stable
 * boundary: an action set waiting for review, the agent idle or finished,
 * or a recorded error: it answers an unanswered message, runs a decided
 * set that has not run, or returns 0 with nothing to do.  It holds the
 * writer lease for the whole run and serves the session's control socket
 * meanwhile; while another agent runs the session it returns -1, code
 * 75, having done nothing (a short holder is waited for: session_take).
 * The model route comes from the environment (model_route_from_env).  A
 * session found running lost its process: the unknown outcome is recorded
 * (HW-AGENT-006 when an approved member started, else 007) and nothing is
 * repeated.  Returns 0 at a boundary, -1 with the error otherwise (code 1
 * when the run ended on a recorded error).
 */
int agent_run(struct session *s, const struct agent_opts *o);


/* ---- server-sent events (sse.c) ---- */

#define SSE_LINE_MAX (8u << 20)

/*
 * An incremental parser of a text/event-stream body (the WHATWG "event
 * stream interpretation"), pure: no I/O, so any split of the same bytes
 * gives the same events.  Lines end in CRLF, LF or CR (a CRLF split
 * between two feeds is one end); a leading UTF-8 BOM is dropped; lines
 * starting with ':' are comments; "data:" with or without the one space
 * after the colon adds a line to the event's data (several are joined
 * with "\n"); other fields (event, id, retry) are ignored; a blank line
 * dispatches the event if it has data.  on_event(ctx, data, n) gets the
 * data (NUL-terminated, n bytes; valid until it returns) and returns 0,
 * or -1 to stop the parse.
 */
struct sse {
	struct buf line;	/* the current, unterminated line */
	struct buf data;	/* the pending event's data */
	int ndata;		/* data fields in the pending event */
	int cr;			/* the last byte fed ended a line with CR */
	int first;		/* no line ended yet (a BOM may lead) */
	int failed;
	int (*on_event)(void *ctx, const char *data, size_t n);
	void *ctx;
};
void sse_init(struct sse *s,
    int (*on_event)(void *ctx, const char *data, size_t n), void *ctx);
/*
 * sse_feed parses n more bytes.  Returns 0, or -1 (and every later call
 * too) when on_event returned -1 or when a line or an event's data grows
 * past SSE_LINE_MAX bytes (code 65, "an event-stream line is longer than
 * 8388608 bytes").
 */
int sse_feed(struct sse *s, const char *p, size_t n);
/*
 * sse_end is the end of the stream: like a browser, it drops an
 * unterminated last line and an event with no blank line after it, and
 * returns 1 when it dropped anything, else 0 (-1 after a failure).
 */
int sse_end(struct sse *s);
void sse_release(struct sse *s);

/* ---- model client (model.c) ---- */

/*
 * The agent's LLM client: one route (LiteLLM naming, "openai/NAME" or
 * "anthropic/NAME", plus a base URL): POST base_url/chat/completions of an
 * OpenAI-compatible API, or Anthropic's Messages API (anthropic.c,
 * behind provider.h), with tools and streaming.  Failures are reported with a stable code from
 * the reference's table (HW-AGENT-008 ... 012) and a fixed sentence per
 * code: never the provider's text, the key or the URL.
 */
#define MODEL_AUTH "HW-AGENT-008"	/* 401/403, or the key is unset */
#define MODEL_QUOTA "HW-AGENT-009"	/* 402, 429 insufficient_quota */
#define MODEL_RATE "HW-AGENT-010"	/* 429 after the retries */
#define MODEL_CONFIG "HW-AGENT-011"	/* other 3xx/4xx, malformed reply */
#define MODEL_TRANSIENT "HW-AGENT-012"	/* 5xx, network, cut stream */
#define MODEL_INTERRUPTED "interrupted"	/* the wait hook stopped it */
#define MODEL_BODY_MAX (32u << 20)	/* response body or stream */
#define MODEL_CALLS_MAX 128		/* tool calls in one reply */
struct model_tool_call {
	char *id;		/* the server's, else "call_K" (K its slot) */
	char *name;
	struct buf args;	/* the arguments JSON text as streamed */
};
/*
 * One assistant reply.  Tool calls are in the order of their stream
 * index.  content and args hold valid UTF-8 (they may hold NUL), and are
 * NUL-terminated after model_complete.  Token counts are -1 when the
 * server did not report them (cache_read from
 * usage.prompt_tokens_details.cached_tokens, reasoning from
 * usage.completion_tokens_details.reasoning_tokens).
 */
struct model_reply {
	struct buf content;
	struct model_tool_call *calls;
	size_t ncalls;
	char finish[32];	/* "stop", "tool_calls", "length"; "" if none */
	int64_t prompt_tokens, completion_tokens, cache_read_tokens,
	    reasoning_tokens;
	double cost;		/* usage.cost in US dollars, if cost_known */
	int cost_known;		/* the route reported the call's price */
	int too_large;		/* refused as too large: 413, or error.code
				   context_length_exceeded (still 011) */
};
void model_reply_init(struct model_reply *m);
void model_reply_release(struct model_reply *m);
/*
 * model_reply_json appends m as one canonical JSON object:
 * {"content","finish","tool_calls":[{"arguments","id","name"}],
 * "usage":{"cache_read_tokens","completion_tokens","prompt_tokens",
 * "reasoning_tokens"}}, unreported counts as null.
 */
void model_reply_json(struct buf *b, const struct model_reply *m);

/*
 * A chat-completion stream being assembled into a reply: the pure half of
 * model_complete, exposed for tests.  model_stream_feed takes body bytes
 * in any split; each "data:" event is a chat.completion.chunk (choice 0
 * only; delta.content appended and passed to on_delta(ctx, s, n) when not
 * empty; delta.tool_calls fragments stitched by index, id and name kept
 * from the first fragment that has them, arguments concatenated; a
 * finish_reason; a usage object, possibly in a chunk with "choices": [])
 * or "[DONE]", after which nothing is read.  A chunk with an "error"
 * member fails with the code its status (error.code) implies.
 * model_stream_end accepts a stream that ended after [DONE] or after a
 * finish_reason, and reports any other end as MODEL_TRANSIENT.  Both
 * return 0, or -1 with st->code set (MODEL_CONFIG for a malformed
 * chunk, an over-long line or more than MODEL_CALLS_MAX calls) and the
 * error set to the code's fixed sentence.  st->delivered counts the
 * on_delta calls.
 */
struct model_stream {
	struct model_reply *out;
	struct sse sse;
	struct arena a;		/* one chunk's values */
	int64_t *index;		/* each call's stream index */
	void (*on_delta)(void *ctx, const char *s, size_t n);
	void *ctx;
	int done, finished;
	size_t delivered;
	const char *code;
	int provider;		/* ROUTE_OPENAI (model_stream_init's) or
				   ROUTE_ANTHROPIC: Messages events */
	int64_t block;		/* Anthropic: the open block's index, or -1 */
	int kind;		/* its type */
	size_t slot;		/* a tool_use block's call */
	int from_start;		/* its input came with the block's start */
};
void model_stream_init(struct model_stream *st, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx);
int model_stream_feed(struct model_stream *st, const char *p, size_t n);
int model_stream_end(struct model_stream *st);
void model_stream_release(struct model_stream *st);
/*
 * model_reply_parse fills out from a non-streamed chat.completion object
 * of n bytes (choices[0].message, finish_reason, usage), passing the
 * content to on_delta once.  0, or -1 with *code as model_stream_feed.
 */
int model_reply_parse(const char *p, size_t n, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code);

/*
 * model_complete sends messages (a JSON array of chat messages) and tools
 * (an array of {"type":"function","function":{...}}, or NULL; sent only
 * when not empty) to r as {"messages","model":NAME,"stream":true,
 * "stream_options":{"include_usage":true},"tools"?,"max_tokens"?} and
 * reads the reply into out (initialized by the caller; replaced on each
 * attempt), calling on_delta (may be NULL) for each content delta as it
 * arrives.  A response of type application/json is read as one
 * chat.completion; anything else as an event stream.
 *
 * The key is read from getenv(r->key_env) on each call and sent as
 * "Authorization: Bearer KEY" ("Bearer local-model" on a credential-free
 * route), or on an Anthropic route as "x-api-key: KEY" with
 * "anthropic-version: 2023-06-01" (the request and reply as
 * anthropic_request and anthropic_event say, at route_call_url); the
 * header's memory is wiped after the request.  libcurl is
 * held to http/https, no redirects, TLS verification, r->timeout_s for
 * the whole exchange, 10 s to connect, no proxy on a loopback route, and
 * MODEL_BODY_MAX bytes.
 *
 * 429, 408, 5xx, connection failures, timeouts and cut streams are tried
 * again up to r->retries times, after 1, 2, 4, 8 s (or Retry-After, at
 * most 8 s), unless content was already passed to on_delta: the caller
 * then decides.  401, 403, other 4xx and malformed replies are not.
 * Returns 0, or -1 with *code one of MODEL_AUTH ... MODEL_TRANSIENT and
 * hw_err set to that code's fixed sentence (exit code 1 for MODEL_AUTH
 * and MODEL_QUOTA, 65 for MODEL_CONFIG, 69 otherwise).
 *
 * Test knobs, read on each call: HW_MODEL_RETRY_WAIT_MS caps each wait
 * and HW_MODEL_TIMEOUT_MS replaces r->timeout_s (and caps the connect
 * timeout).
 */
int model_complete(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code);
/*
 * model_on_wait sets a hook that model_complete calls while it waits on
 * the model (about once a second even when nothing arrives, oftener as
 * data flows), so that the caller can serve others meanwhile; when the
 * hook returns nonzero the call ends at once with MODEL_INTERRUPTED, which
 * is never retried.  Process-wide; NULL removes it.
 */
void model_on_wait(int (*hook)(void *ctx), void *ctx);
/* model_code_message: the fixed sentence of a failure code. */
const char *model_code_message(const char *code);

/* ---- the agent's prompts (prompts.c) ---- */

/* The agent's prompt files, under the data directory's prompts/. */
#define PROMPT_SYSTEM "system.txt"	/* the system message */
#define PROMPT_REJECTED "rejected.txt"	/* a rejected set's tool result */
#define PROMPT_CONDENSE "condense.txt"	/* the condenser's instruction */
/*
 * prompt_read reads DIR/prompts/NAME into b, NUL-terminated, without one
 * final "\n" (a file that ends its one line is the same prompt as one that
 * does not).  A prompt that is missing, unreadable, not a regular file,
 * empty, over 64 KiB, holds a NUL or is not UTF-8 is never used: -1 with
 * code 69 and "cannot read prompt 'PATH': REASON".
 */
int prompt_read(const char *dir, const char *name, struct buf *b);

/* the three prompts of one agent run, read once when it starts */
struct prompts {
	struct buf system, rejected, condense;
};
void prompts_init(struct prompts *p);
/* prompts_load reads all three from datadir_path(); -1 as prompt_read. */
int prompts_load(struct prompts *p);
void prompts_release(struct prompts *p);

/* ---- research specialists (specialist.c) ---- */

/*
 * A specialist (reference §5.6): DATADIR/specialists/NAME.md, a YAML
 * frontmatter between "---" lines then its system prompt.  Strings live
 * in the catalog's arena.
 */
struct specialist {
	const char *path, *name, *description, *prompt;
	const char *label, *capability, *availability, *reason;
	const char **skills, **tools;
	size_t nskills, ntools;
	int order, iterations, available;
	double budget;		/* US dollars a run may cost */
};
struct specialists {
	struct arena a;
	struct specialist *v;	/* by heartwood.order */
	size_t n;
};
void specialists_init(struct specialists *c);
void specialists_release(struct specialists *c);
/*
 * specialists_load reads every *.md of datadir_path()'s specialists/ (none
 * when it does not exist) and checks each strictly: 0, or -1 (code 65)
 * with "invalid specialist 'PATH': RULE" for the first file (by name)
 * that breaks a rule; c then holds none.
 */
int specialists_load(struct specialists *c);
const struct specialist *specialist_find(const struct specialists *c,
    const char *name);
/* specialists_available: how many may be delegated to */
size_t specialists_available(const struct specialists *c);
/* specialist_json: one catalog entry, canonical JSON (no prompt) */
void specialist_json(struct buf *b, const struct specialist *x);
/*
 * specialists_list_json loads the catalog and appends
 * {"schema_version":"heartwood.specialists.v1","specialists":[...]}; -1
 * as specialists_load.
 */
int specialists_list_json(struct buf *b);

#endif
