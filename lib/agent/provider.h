/*
 * provider.h - what the model client (model.c) and a provider other
 * than the OpenAI-compatible one (anthropic.c) share; lib/agent only.
 *
 * model.c owns the exchange (libcurl, retries) and the OpenAI-compatible
 * format; reply.c the failure codes and the reply both fill, and calls
 * neither.  A provider builds its request body, reads its replies into the
 * same struct model_reply, and classifies its errors.  Nothing a
 * provider reads of a reply or an error goes further than a failure code.
 */
#ifndef HW_AGENT_PROVIDER_H
#define HW_AGENT_PROVIDER_H

#include "agent/agent.h"

/* ---- failure codes and replies (reply.c) ---- */

/* model_fail sets the fixed sentence of code and *out (if out); -1 */
int model_fail(const char *code, const char **out);
/* model_malformed: st fails as MODEL_CONFIG (its fixed sentence); -1 */
int model_malformed(struct model_stream *st);
/* model_failed: st fails with code (its fixed sentence); -1 */
int model_failed(struct model_stream *st, const char *code);
/*
 * model_add_text appends n bytes of reply text and passes them to the
 * stream's on_delta; -1 (malformed) past MODEL_BODY_MAX
 */
int model_add_text(struct model_stream *st, const char *s, size_t n);
/*
 * model_new_call: the slot of a new, empty call with stream index idx,
 * or -1 (malformed) past MODEL_CALLS_MAX calls
 */
int model_new_call(struct model_stream *st, int64_t idx, size_t *slot);
/* model_status_code: the failure code an HTTP status implies, or NULL */
const char *model_status_code(long status);

/* ---- Anthropic's Messages API (anthropic.c) ---- */

#define ANTHROPIC_VERSION "2023-06-01"
#define ANTHROPIC_MAX_TOKENS 4096	/* without HW_MAX_OUTPUT_TOKENS */
/*
 * anthropic_request appends to b the Messages request of the chat
 * messages and function tools model_complete takes: system messages
 * joined into the top-level "system"; user text, assistant text and
 * tool_calls (tool_use blocks, input parsed from the arguments, {} when
 * they are not an object) and tool messages (tool_result blocks of a
 * user turn) as content blocks, consecutive turns of one role merged;
 * tools as {name, description, input_schema}; max_tokens from
 * r->max_output_tokens, else ANTHROPIC_MAX_TOKENS; stream true.
 */
void anthropic_request(const struct model_route *r,
    const struct jval *messages, const struct jval *tools, struct buf *b);
/*
 * anthropic_event applies one event of a Messages stream (message_start,
 * content_block_start/delta/stop, message_delta, message_stop, ping,
 * error; other types are skipped, as the API's versioning asks) and
 * anthropic_message a whole message; both 0, or -1 with st->code set:
 * the code of an error event, or MODEL_CONFIG for a block of a type other
 * than text and tool_use, a delta of another type or out of its block, or
 * tool input that is not a JSON object once its block ends.
 * anthropic_end: st's calls all closed (-1, malformed, if not).
 */
int anthropic_event(struct model_stream *st, const struct jval *o);
int anthropic_message(struct model_stream *st, const struct jval *o);
int anthropic_end(struct model_stream *st);
/*
 * anthropic_error_code classifies an error object ({"type","message"})
 * of an answer with HTTP status (0 inside a stream) by the status and the
 * error's type, never its message.
 */
const char *anthropic_error_code(const struct jval *err, long status);

#endif
