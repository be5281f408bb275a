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

/* ---- the Responses API of the ChatGPT subscription (responses.c) ---- */

/*
 * responses_request appends to b the Responses request of the chat
 * messages and function tools model_complete takes: system messages
 * joined into "instructions"; user text as input_text messages,
 * assistant text as output_text messages, each tool call as a
 * function_call item {call_id, name, arguments} and each tool message as
 * a function_call_output item {call_id, output}; tools as function tools
 * {type, name, description, parameters, strict false} with tool_choice
 * auto; parallel_tool_calls false, store false, stream true, and
 * max_output_tokens from r->max_output_tokens when set.
 */
void responses_request(const struct model_route *r,
    const struct jval *messages, const struct jval *tools, struct buf *b);
/*
 * responses_event applies one event of a Responses stream
 * (response.output_text.delta, response.output_item.added/done of
 * function_call items, response.function_call_arguments.delta,
 * response.completed or .incomplete with usage, error, response.failed;
 * other types are skipped) and responses_message a whole response; both
 * 0, or -1 with st->code set: an error's code, or MODEL_CONFIG for an
 * event without its fields, a delta of no call, a call without call_id
 * or name.  responses_end: every call's arguments a JSON object ({} when
 * empty; -1, malformed, if not).  responses_error_code classifies an
 * error object ({"type","code","message"}) of an answer with HTTP status
 * (0 inside a stream) by the status, code and type, never the message.
 */
int responses_event(struct model_stream *st, const struct jval *o);
int responses_message(struct model_stream *st, const struct jval *o);
int responses_end(struct model_stream *st);
const char *responses_error_code(const struct jval *err, long status);

#endif
