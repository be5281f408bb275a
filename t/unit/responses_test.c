/*
 * responses_test - the Responses API of the ChatGPT subscription behind
 * the model client (responses.c): a corpus of Responses event streams,
 * each fed whole, split in two at every byte offset and one byte at a
 * time, which must all give the same reply, deltas and outcome as the
 * expected one.
 */
#include <stdlib.h>

#include "feed.h"

#define EV(type, data) "event: " type "\ndata: " data "\n\n"
#define DONE(usage) EV("response.completed", "{\"type\":" \
	"\"response.completed\",\"response\":{\"status\":\"completed\"," \
	"\"usage\":" usage "}}")
#define USAGE "{\"input_tokens\":10,\"output_tokens\":7," \
	"\"input_tokens_details\":{\"cached_tokens\":4}," \
	"\"output_tokens_details\":{\"reasoning_tokens\":2}}"
#define CALL_ADDED(i, id, name) EV("response.output_item.added", \
	"{\"type\":\"response.output_item.added\",\"output_index\":" i \
	",\"item\":{\"type\":\"function_call\",\"call_id\":\"" id \
	"\",\"name\":\"" name "\",\"arguments\":\"\"}}")
#define ARGS(i, d) EV("response.function_call_arguments.delta", \
	"{\"type\":\"response.function_call_arguments.delta\"," \
	"\"output_index\":" i ",\"delta\":\"" d "\"}")
#define TEXT(d) EV("response.output_text.delta", "{\"type\":" \
	"\"response.output_text.delta\",\"output_index\":0,\"delta\":\"" \
	d "\"}")

static const struct stream corpus[] = {
	{ "text and a call in pieces, CRLF, unknown events skipped",
	  "event: response.created\r\ndata: {\"type\":\"response.created\","
	  "\"response\":{}}\r\n\r\n"
	  TEXT("I will ") TEXT("look.")
	  EV("response.output_text.done", "{\"type\":"
	  "\"response.output_text.done\",\"text\":\"I will look.\"}")
	  CALL_ADDED("1", "call_1", "terminal")
	  ARGS("1", "{\\\"command\\\": \\\"l") ARGS("1", "s -a\\\"}")
	  DONE(USAGE),
	  "0 - deltas=2 streamed=\"I will look.\" "
	  "{\"content\":\"I will look.\",\"finish\":\"tool_calls\","
	  "\"tool_calls\":[{\"arguments\":\"{\\\"command\\\": "
	  "\\\"ls -a\\\"}\",\"id\":\"call_1\",\"name\":\"terminal\"}],"
	  "\"usage\":{\"cache_read_tokens\":4,\"completion_tokens\":7,"
	  "\"prompt_tokens\":10,\"reasoning_tokens\":2}}" },
	{ "a call with no arguments has {}",
	  CALL_ADDED("0", "c", "think") DONE("{}"),
	  "0 - deltas=0 streamed=\"\" {\"content\":\"\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":\"{}\",\"id\":"
	  "\"c\",\"name\":\"think\"}],\"usage\":{\"cache_read_tokens\":"
	  "null,\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "an incomplete response is length",
	  TEXT("Hi")
	  EV("response.incomplete", "{\"type\":\"response.incomplete\","
	  "\"response\":{\"status\":\"incomplete\"}}"),
	  "0 - deltas=1 streamed=\"Hi\" {\"content\":\"Hi\",\"finish\":"
	  "\"length\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":"
	  "null,\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "an error event: rate limited, its message unread",
	  EV("error", "{\"type\":\"error\",\"code\":"
	  "\"rate_limit_exceeded\",\"message\":\"secret-ish\"}"),
	  "-1 HW-AGENT-010 deltas=0 streamed=\"\" " },
	{ "response.failed: a server error is transient",
	  EV("response.failed", "{\"type\":\"response.failed\","
	  "\"response\":{\"error\":{\"code\":\"server_error\"}}}"),
	  "-1 HW-AGENT-012 deltas=0 streamed=\"\" " },
	{ "arguments for no announced call",
	  ARGS("2", "{}"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "a call announced twice",
	  CALL_ADDED("0", "c", "think") CALL_ADDED("0", "c", "think"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "arguments that are not an object",
	  CALL_ADDED("0", "c", "think") ARGS("0", "[1]") DONE("{}"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "an event without a type",
	  "data: {\"output_index\":0}\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "cut before the end",
	  TEXT("Hal"),
	  "-1 HW-AGENT-012 deltas=1 streamed=\"Hal\" " },
};

int
main(void)
{
	size_t i;

	feed_route = ROUTE_SUBSCRIPTION;
	for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		splits(&corpus[i]);
	return tap_done();
}
