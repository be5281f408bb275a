/*
 * anthropic_test - Anthropic's Messages API behind the model client
 * (anthropic.c): the request built from the agent's chat messages and
 * tools, and a corpus of Messages event streams, each fed whole, split in
 * two at every byte offset and one byte at a time, which must all give
 * the same reply, deltas and outcome as the expected one.
 */
#include <stdlib.h>

#include "feed.h"

#define EV(type, data) "event: " type "\ndata: " data "\n\n"
#define START EV("message_start", "{\"type\":\"message_start\"," \
	"\"message\":{\"type\":\"message\",\"content\":[],\"usage\":" \
	"{\"input_tokens\":10,\"cache_read_input_tokens\":5," \
	"\"output_tokens\":1}}}")
#define STOP(reason) EV("message_delta", "{\"type\":\"message_delta\"," \
	"\"delta\":{\"stop_reason\":\"" reason "\"},\"usage\":" \
	"{\"output_tokens\":7}}") \
	EV("message_stop", "{\"type\":\"message_stop\"}")

static const struct stream corpus[] = {
	{ "text and a tool call in pieces, CRLF, a ping",
	  START
	  "event: ping\r\ndata: {\"type\":\"ping\"}\r\n\r\n"
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":0,\"delta\":{\"type\":\"text_delta\","
	  "\"text\":\"I will \"}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"look.\"}}")
	  EV("content_block_stop", "{\"type\":\"content_block_stop\","
	  "\"index\":0}")
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	  "\"toolu_1\",\"name\":\"terminal\",\"input\":{}}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
	  "\"partial_json\":\"\"}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
	  "\"partial_json\":\"{\\\"command\\\": \\\"l\"}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":1,\"delta\":{\"type\":\"input_json_delta\","
	  "\"partial_json\":\"s -a\\\"}\"}}")
	  EV("content_block_stop", "{\"type\":\"content_block_stop\","
	  "\"index\":1}")
	  STOP("tool_use"),
	  "0 - deltas=2 streamed=\"I will look.\" "
	  "{\"content\":\"I will look.\","
	  "\"finish\":\"tool_calls\",\"tool_calls\":[{\"arguments\":"
	  "\"{\\\"command\\\": \\\"ls -a\\\"}\",\"id\":\"toolu_1\",\"name\":"
	  "\"terminal\"}],\"usage\":{\"cache_read_tokens\":5,"
	  "\"completion_tokens\":7,\"prompt_tokens\":15,"
	  "\"reasoning_tokens\":null}}" },
	{ "a tool with no input deltas has {}",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	  "\"t\",\"name\":\"think\",\"input\":{}}}")
	  EV("content_block_stop", "{\"type\":\"content_block_stop\","
	  "\"index\":0}")
	  STOP("tool_use"),
	  "0 - deltas=0 streamed=\"\" {\"content\":\"\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":\"{}\",\"id\":\"t\","
	  "\"name\":\"think\"}],\"usage\":{\"cache_read_tokens\":5,"
	  "\"completion_tokens\":7,\"prompt_tokens\":15,"
	  "\"reasoning_tokens\":null}}" },
	{ "end_turn is stop; max_tokens is length",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Hi\"}}")
	  EV("content_block_stop", "{\"type\":\"content_block_stop\","
	  "\"index\":0}")
	  STOP("max_tokens"),
	  "0 - deltas=1 streamed=\"Hi\" {\"content\":\"Hi\",\"finish\":"
	  "\"length\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":5,"
	  "\"completion_tokens\":7,\"prompt_tokens\":15,"
	  "\"reasoning_tokens\":null}}" },
	{ "an error event: overloaded is transient",
	  START
	  EV("error", "{\"type\":\"error\",\"error\":{\"type\":"
	  "\"overloaded_error\",\"message\":\"Overloaded\"}}"),
	  "-1 HW-AGENT-012 deltas=0 streamed=\"\" " },
	{ "an error event: authentication",
	  EV("error", "{\"type\":\"error\",\"error\":{\"type\":"
	  "\"authentication_error\",\"message\":\"bad key\"}}"),
	  "-1 HW-AGENT-008 deltas=0 streamed=\"\" " },
	{ "an unknown block type",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"image\"}}"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "a text_delta in a tool block",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":"
	  "\"t\",\"name\":\"think\",\"input\":{}}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "a second block before the first stopped",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}"),
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "an event without a type",
	  "data: {\"index\":0}\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "cut before the stop reason",
	  START
	  EV("content_block_start", "{\"type\":\"content_block_start\","
	  "\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
	  EV("content_block_delta", "{\"type\":\"content_block_delta\","
	  "\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hal\"}}"),
	  "-1 HW-AGENT-012 deltas=1 streamed=\"Hal\" " },
};

/* request: the Messages request of one conversation, exactly */
static void
request(void)
{
	static const char msgs[] = "["
	    "{\"role\":\"system\",\"content\":\"Be careful.\"},"
	    "{\"role\":\"user\",\"content\":\"List the files.\"},"
	    "{\"role\":\"assistant\",\"content\":\"Looking.\",\"tool_calls\":["
	    "{\"id\":\"call-5\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"terminal\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}},"
	    "{\"id\":\"call-6\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"think\",\"arguments\":\"not json\"}}]},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"call-5\",\"content\":"
	    "\"a.txt\"},"
	    "{\"role\":\"tool\",\"tool_call_id\":\"call-6\",\"content\":\"\"},"
	    "{\"role\":\"user\",\"content\":\"Thanks.\"},"
	    "{\"role\":\"system\",\"content\":\"Summary so far.\"}]";
	static const char tools[] = "[{\"type\":\"function\",\"function\":{"
	    "\"name\":\"terminal\",\"description\":\"Run.\",\"parameters\":{"
	    "\"type\":\"object\",\"properties\":{\"command\":{\"type\":"
	    "\"string\"}}}}},{\"type\":\"function\",\"function\":{\"name\":"
	    "\"think\"}}]";
	struct model_route r = { 0 };
	struct arena a;
	struct buf b;
	char err[128];

	arena_init(&a);
	buf_init(&b);
	r.model = "anthropic/claude-x";
	r.provider = ROUTE_ANTHROPIC;
	anthropic_request(&r, json_parse(&a, msgs, sizeof msgs - 1, err,
	    sizeof err), json_parse(&a, tools, sizeof tools - 1, err,
	    sizeof err), &b);
	is_str(buf_cstr(&b), "{\"max_tokens\":4096,\"messages\":["
	    "{\"content\":[{\"text\":\"List the files.\",\"type\":\"text\"}],"
	    "\"role\":\"user\"},"
	    "{\"content\":[{\"text\":\"Looking.\",\"type\":\"text\"},"
	    "{\"id\":\"call-5\",\"input\":{\"command\":\"ls\"},\"name\":"
	    "\"terminal\",\"type\":\"tool_use\"},{\"id\":\"call-6\",\"input\":"
	    "{},\"name\":\"think\",\"type\":\"tool_use\"}],\"role\":"
	    "\"assistant\"},"
	    "{\"content\":[{\"content\":\"a.txt\",\"tool_use_id\":\"call-5\","
	    "\"type\":\"tool_result\"},{\"tool_use_id\":\"call-6\",\"type\":"
	    "\"tool_result\"},{\"text\":\"Thanks.\",\"type\":\"text\"}],"
	    "\"role\":\"user\"}],"
	    "\"model\":\"claude-x\",\"stream\":true,\"system\":"
	    "\"Be careful.\\n\\nSummary so far.\",\"tools\":["
	    "{\"description\":\"Run.\",\"input_schema\":{\"properties\":{"
	    "\"command\":{\"type\":\"string\"}},\"type\":\"object\"},\"name\":"
	    "\"terminal\"},{\"input_schema\":{\"type\":\"object\"},\"name\":"
	    "\"think\"}]}",
	    "request: system aside, blocks, merged turns, tools, budget");
	buf_clear(&b);
	r.max_output_tokens = 512;
	anthropic_request(&r, json_parse(&a, "[]", 2, err, sizeof err), NULL,
	    &b);
	is_str(buf_cstr(&b), "{\"max_tokens\":512,\"messages\":[],\"model\":"
	    "\"claude-x\",\"stream\":true}", "request: the output budget");
	buf_release(&b);
	arena_release(&a);
}

/* whole: a whole (non-streamed) message */
static void
whole(void)
{
	static const char msg[] = "{\"type\":\"message\",\"content\":["
	    "{\"type\":\"text\",\"text\":\"Done.\"},{\"type\":\"tool_use\","
	    "\"id\":\"toolu_2\",\"name\":\"finish\",\"input\":{\"message\":"
	    "\"ok\"}}],\"stop_reason\":\"tool_use\",\"usage\":{"
	    "\"input_tokens\":3,\"output_tokens\":4}}";
	struct model_reply m;
	struct model_stream st;
	struct arena a;
	struct buf out;
	char err[128];

	arena_init(&a);
	buf_init(&out);
	model_reply_init(&m);
	model_stream_init(&st, &m, NULL, NULL);
	st.provider = ROUTE_ANTHROPIC;
	ok(anthropic_message(&st, json_parse(&a, msg, sizeof msg - 1, err,
	    sizeof err)) == 0 && model_stream_end(&st) == 0,
	    "whole: a message is read");
	model_reply_json(&out, &m);
	is_str(buf_cstr(&out), "{\"content\":\"Done.\",\"finish\":"
	    "\"tool_calls\",\"tool_calls\":[{\"arguments\":"
	    "\"{\\\"message\\\":\\\"ok\\\"}\",\"id\":\"toolu_2\",\"name\":"
	    "\"finish\"}],\"usage\":{\"cache_read_tokens\":null,"
	    "\"completion_tokens\":4,\"prompt_tokens\":3,"
	    "\"reasoning_tokens\":null}}", "whole: the same reply");
	model_stream_release(&st);
	model_reply_release(&m);
	buf_release(&out);
	arena_release(&a);
}

int
main(void)
{
	size_t i;

	feed_route = ROUTE_ANTHROPIC;
	for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		splits(&corpus[i]);
	request();
	whole();
	return tap_done();
}
