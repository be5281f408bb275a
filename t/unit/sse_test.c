/*
 * sse_test - the event-stream parser and the chat-completion stream
 * assembler (sse.c, model.c) over a corpus of streams shaped like those
 * of llama.cpp, vLLM and OpenAI: each is fed whole, split in two at every
 * byte offset, and one byte at a time, and every feeding must give the
 * same reply, the same deltas and the same outcome as the expected one.
 * Also the non-streamed chat.completion fallback and the bounds.
 */
#include <stdlib.h>

#include "feed.h"

/*
 * The corpus.  Expected replies are written as feed_run() prints them; "%s"
 * is not used, so they are compared byte for byte.
 */
static const struct stream corpus[] = {
	{ "llama.cpp: role, content, a streamed call, usage with the finish",
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"role\":\"assistant\",\"content\":null}}],\"object\":"
	  "\"chat.completion.chunk\"}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"content\":\"Let me \"}}]}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"content\":\"look. \\u00e9\\u4e2d\"}}]}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":"
	  "\"function\",\"function\":{\"name\":\"terminal\",\"arguments\":"
	  "\"\"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	  "\"{\\\"command\\\": \"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":null,\"index\":0,\"delta\":"
	  "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":"
	  "\"\\\"ls -la\\\"}\"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"finish_reason\":\"tool_calls\",\"index\":0,"
	  "\"delta\":{}}],\"usage\":{\"completion_tokens\":12,"
	  "\"prompt_tokens\":100,\"total_tokens\":112},\"timings\":"
	  "{\"predicted_ms\":1.5}}\n\n"
	  "data: [DONE]\n\n",
	  "0 - deltas=2 streamed=\"Let me look. \\u00e9\\u4e2d\" "
	  "{\"content\":\"Let me look. \\u00e9\\u4e2d\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":\"{\\\"command\\\": "
	  "\\\"ls -la\\\"}\",\"id\":\"call_abc\",\"name\":\"terminal\"}],"
	  "\"usage\":{\"cache_read_tokens\":null,\"completion_tokens\":12,"
	  "\"prompt_tokens\":100,\"reasoning_tokens\":null}}" },
	{ "vLLM: content, finish, then a usage-only chunk",
	  "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\","
	  "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
	  "\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}],"
	  "\"usage\":null}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},"
	  "\"finish_reason\":null}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},"
	  "\"finish_reason\":\"stop\",\"stop_reason\":null}]}\n\n"
	  "data: {\"id\":\"chatcmpl-1\",\"choices\":[],\"usage\":"
	  "{\"prompt_tokens\":7,\"total_tokens\":9,\"completion_tokens\":2}}"
	  "\n\n"
	  "data: [DONE]\n\n",
	  "0 - deltas=2 streamed=\"Hello!\" {\"content\":\"Hello!\",\"finish\":"
	  "\"stop\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":2,\"prompt_tokens\":7,\"reasoning_tokens\":"
	  "null}}" },
	{ "OpenAI: cached and reasoning tokens in the usage chunk",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
	  "\"content\":\"\",\"refusal\":null},\"finish_reason\":null}],"
	  "\"usage\":null}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},"
	  "\"finish_reason\":null}],\"usage\":null}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
	  "\"length\"}],\"usage\":null}\n\n"
	  "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":2006,"
	  "\"completion_tokens\":300,\"total_tokens\":2306,"
	  "\"prompt_tokens_details\":{\"cached_tokens\":1920},"
	  "\"completion_tokens_details\":{\"reasoning_tokens\":64}}}\n\n"
	  "data: [DONE]\n\n",
	  "0 - deltas=1 streamed=\"Hi\" {\"content\":\"Hi\",\"finish\":"
	  "\"length\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":1920,"
	  "\"completion_tokens\":300,\"prompt_tokens\":2006,"
	  "\"reasoning_tokens\":64}}" },
	{ "interleaved indexes, the second call first",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"think\","
	  "\"arguments\":\"{\\\"th\"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"terminal\","
	  "\"arguments\":\"{\\\"co\"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":1,\"function\":{\"arguments\":\"ought\\\": \\\"x\\\"}\"}},"
	  "{\"index\":0,\"function\":{\"arguments\":\"mmand\\\": \"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":0,\"function\":{\"arguments\":\"\\\"pwd\\\"}\"}}]}}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
	  "\"tool_calls\"}]}\n\n"
	  "data: [DONE]\n\n",
	  "0 - deltas=0 streamed=\"\" {\"content\":\"\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":\"{\\\"command\\\": "
	  "\\\"pwd\\\"}\",\"id\":\"a\",\"name\":\"terminal\"},{\"arguments\":"
	  "\"{\\\"thought\\\": \\\"x\\\"}\",\"id\":\"b\",\"name\":\"think\"}],"
	  "\"usage\":{\"cache_read_tokens\":null,\"completion_tokens\":null,"
	  "\"prompt_tokens\":null,\"reasoning_tokens\":null}}" },
	{ "whole calls in one chunk, content in the same delta",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Two.\","
	  "\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\","
	  "\"function\":{\"name\":\"terminal\",\"arguments\":"
	  "\"{\\\"command\\\":\\\"ls\\\"}\"}},{\"index\":1,\"id\":\"c2\","
	  "\"type\":\"function\",\"function\":{\"name\":\"finish\","
	  "\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"
	  "data: [DONE]\n\n",
	  "0 - deltas=1 streamed=\"Two.\" {\"content\":\"Two.\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":"
	  "\"{\\\"command\\\":\\\"ls\\\"}\",\"id\":\"c1\",\"name\":"
	  "\"terminal\"},{\"arguments\":\"{}\",\"id\":\"c2\",\"name\":"
	  "\"finish\"}],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "no index, no id: whole calls as some servers send them",
	  "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":"
	  "{\"name\":\"think\",\"arguments\":{\"thought\":\"a\"}}}]}}]}\n\n"
	  "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"k2\","
	  "\"function\":{\"name\":\"finish\",\"arguments\":\"{}\"}}]},"
	  "\"finish_reason\":\"tool_calls\"}]}\n\n",
	  "0 - deltas=0 streamed=\"\" {\"content\":\"\",\"finish\":"
	  "\"tool_calls\",\"tool_calls\":[{\"arguments\":"
	  "\"{\\\"thought\\\":\\\"a\\\"}\",\"id\":\"call_0\",\"name\":"
	  "\"think\"},{\"arguments\":\"{}\",\"id\":\"k2\",\"name\":"
	  "\"finish\"}],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "CRLF, BOM, comments, data: without the space, other fields",
	  "\xef\xbb\xbf: keep-alive\r\n\r\n"
	  "event: message\r\nid: 1\r\nretry: 100\r\n"
	  "data:{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}"
	  "\r\n\r\n"
	  ":\r\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},"
	  "\"finish_reason\":\"stop\"}]}\r\n\r\n"
	  "data: [DONE]\r\n\r\n",
	  "0 - deltas=2 streamed=\"ab\" {\"content\":\"ab\",\"finish\":"
	  "\"stop\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "lone CR line ends and a data field over several lines",
	  "data: {\"choices\":[{\"index\":0,\r"
	  "data:  \"delta\":{\"content\":\"x\\ny\"},\r"
	  "data: \"finish_reason\":\"stop\"}]}\r\r"
	  "data: [DONE]\r\r",
	  "0 - deltas=1 streamed=\"x\\ny\" {\"content\":\"x\\ny\",\"finish\":"
	  "\"stop\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "no [DONE] after a finish_reason: accepted",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},"
	  "\"finish_reason\":\"stop\"}]}\n\n",
	  "0 - deltas=1 streamed=\"ok\" {\"content\":\"ok\",\"finish\":"
	  "\"stop\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "[DONE] without a finish_reason: accepted, finish empty",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}"
	  "\n\ndata: [DONE]\n\n"
	  "data: this is after the end and never read\n\n",
	  "0 - deltas=1 streamed=\"ok\" {\"content\":\"ok\",\"finish\":\"\","
	  "\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
	{ "dropped: neither a finish_reason nor [DONE]",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"par\"}}]}"
	  "\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
	  "\"tial\"}}]}\n\n"
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"con",
	  "-1 HW-AGENT-012 deltas=2 streamed=\"partial\" " },
	{ "dropped: [DONE] without its blank line is not an event",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}"
	  "\n\ndata: [DONE]\n",
	  "-1 HW-AGENT-012 deltas=1 streamed=\"x\" " },
	{ "empty stream",
	  "",
	  "-1 HW-AGENT-012 deltas=0 streamed=\"\" " },
	{ "malformed JSON in a chunk",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}"
	  "\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"}"
	  "\n\ndata: [DONE]\n\n",
	  "-1 HW-AGENT-011 deltas=1 streamed=\"a\" " },
	{ "a chunk that is not an object",
	  "data: [1,2]\n\ndata: [DONE]\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "content of the wrong type",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":5}}]}\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "a negative tool-call index",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":-1,\"id\":\"a\",\"function\":{\"name\":\"x\"}}]}}]}\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "a tool call that never gets a name",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{"
	  "\"index\":0,\"id\":\"a\",\"function\":{\"arguments\":\"{}\"}}]},"
	  "\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
	  "-1 HW-AGENT-011 deltas=0 streamed=\"\" " },
	{ "an error chunk with a 429 code",
	  "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}"
	  "\n\ndata: {\"error\":{\"code\":429,\"message\":\"slow down, "
	  "sk-MARKER\"}}\n\n",
	  "-1 HW-AGENT-010 deltas=1 streamed=\"a\" " },
	{ "an error chunk with a 500 code",
	  "data: {\"error\":{\"code\":500,\"message\":\"boom\"}}\n\n",
	  "-1 HW-AGENT-012 deltas=0 streamed=\"\" " },
	{ "an error chunk for the quota",
	  "data: {\"error\":{\"code\":\"insufficient_quota\",\"type\":"
	  "\"insufficient_quota\"}}\n\n",
	  "-1 HW-AGENT-009 deltas=0 streamed=\"\" " },
	{ "other choices are ignored; empty data events too",
	  "data:\n\n"
	  "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"no\"}},"
	  "{\"index\":0,\"delta\":{\"content\":\"yes\"},\"finish_reason\":"
	  "\"stop\"}]}\n\n",
	  "0 - deltas=1 streamed=\"yes\" {\"content\":\"yes\",\"finish\":"
	  "\"stop\",\"tool_calls\":[],\"usage\":{\"cache_read_tokens\":null,"
	  "\"completion_tokens\":null,\"prompt_tokens\":null,"
	  "\"reasoning_tokens\":null}}" },
};

/* ---- the event-stream parser alone ---- */

static int
collect(void *ctx, const char *data, size_t n)
{
	struct buf *b = ctx;

	buf_addc(b, '[');
	buf_add(b, data, n);
	buf_addc(b, ']');
	return 0;
}

static void
sse_events(void)
{
	static const char in[] = "data\n\ndata:\ndata\n\n: c\ndata: a\n"
	    "data:  b\nignored: x\nevent: e\n\ndata: tail-without-blank\n";
	struct sse s;
	struct buf b;

	buf_init(&b);
	sse_init(&s, collect, &b);
	ok(sse_feed(&s, in, sizeof in - 1) == 0, "sse: feed");
	ok(sse_end(&s) == 1, "sse: an event without its blank line is "
	    "dropped at the end");
	is_str(buf_cstr(&b), "[][\n][a\n b]", "sse: data fields, joined");
	sse_release(&s);
	buf_release(&b);
}

static void
sse_line_limit(void)
{
	struct model_reply m;
	struct model_stream st;
	char *big = xmalloc(1 << 20);
	int rc = 0, i;

	memset(big, 'x', 1 << 20);
	model_reply_init(&m);
	model_stream_init(&st, &m, NULL, NULL);
	rc = model_stream_feed(&st, "data: ", 6);
	for (i = 0; i < 8 && rc == 0; i++)
		rc = model_stream_feed(&st, big, 1 << 20);
	ok(rc == -1 && st.code && !strcmp(st.code, MODEL_CONFIG),
	    "a line over 8 MiB is HW-AGENT-011");
	is_str(hw_err_msg(), model_code_message(MODEL_CONFIG),
	    "with the fixed sentence");
	ok(model_stream_feed(&st, "\n\n", 2) == -1, "and stays failed");
	model_stream_release(&st);
	model_reply_release(&m);
	free(big);
}

static void
too_many_calls(void)
{
	struct model_reply m;
	struct model_stream st;
	struct buf b;
	int i, rc = 0;

	buf_init(&b);
	for (i = 0; i <= MODEL_CALLS_MAX; i++)
		buf_printf(&b, "data: {\"choices\":[{\"index\":0,\"delta\":{"
		    "\"tool_calls\":[{\"index\":%d,\"id\":\"c%d\",\"function\":"
		    "{\"name\":\"think\",\"arguments\":\"{}\"}}]}}]}\n\n", i,
		    i);
	model_reply_init(&m);
	model_stream_init(&st, &m, NULL, NULL);
	rc = model_stream_feed(&st, b.p, b.len);
	ok(rc == -1 && st.code && !strcmp(st.code, MODEL_CONFIG) &&
	    m.ncalls == MODEL_CALLS_MAX, "%d calls are accepted, one more is "
	    "HW-AGENT-011", MODEL_CALLS_MAX);
	model_stream_release(&st);
	model_reply_release(&m);
	buf_release(&b);
}

/* ---- the non-streamed fallback ---- */

static void
whole_reply(void)
{
	static const char in[] = "{\"id\":\"x\",\"object\":\"chat.completion\","
	    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
	    "\"content\":\"Done.\",\"tool_calls\":[{\"id\":\"t1\",\"type\":"
	    "\"function\",\"function\":{\"name\":\"finish\",\"arguments\":"
	    "\"{\\\"message\\\":\\\"ok\\\"}\"}}]},\"finish_reason\":"
	    "\"tool_calls\"}],\"usage\":{\"prompt_tokens\":5,"
	    "\"completion_tokens\":3}}";
	struct model_reply m;
	struct seen d = { { 0 }, 0 };
	struct buf b;
	const char *code = NULL;

	model_reply_init(&m);
	buf_init(&b);
	buf_init(&d.text);
	ok(model_reply_parse(in, sizeof in - 1, &m, on_delta, &d, &code) == 0,
	    "chat.completion: parsed");
	model_reply_json(&b, &m);
	is_str(buf_cstr(&b), "{\"content\":\"Done.\",\"finish\":\"tool_calls\","
	    "\"tool_calls\":[{\"arguments\":\"{\\\"message\\\":\\\"ok\\\"}\","
	    "\"id\":\"t1\",\"name\":\"finish\"}],\"usage\":{"
	    "\"cache_read_tokens\":null,\"completion_tokens\":3,"
	    "\"prompt_tokens\":5,\"reasoning_tokens\":null}}",
	    "chat.completion: the reply");
	ok(d.calls == 1 && d.text.len == 5, "chat.completion: content passed "
	    "to on_delta once");
	model_reply_release(&m);
	ok(model_reply_parse("{\"choices\":", 11, &m, NULL, NULL, &code) ==
	    -1 && !strcmp(code, MODEL_CONFIG), "chat.completion: truncated "
	    "JSON is HW-AGENT-011");
	ok(model_reply_parse("{\"error\":{\"code\":401}}", 22, &m, NULL, NULL,
	    &code) == -1 && !strcmp(code, MODEL_AUTH), "chat.completion: an "
	    "error object is classified");
	model_reply_release(&m);
	buf_release(&b);
	buf_release(&d.text);
}

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		splits(&corpus[i]);
	sse_events();
	sse_line_limit();
	too_many_calls();
	whole_reply();
	return tap_done();
}
