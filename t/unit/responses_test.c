/*
 * responses_test - the Responses API of the ChatGPT subscription behind
 * the model client (responses.c): a corpus of Responses event streams,
 * each fed whole, split in two at every byte offset and one byte at a
 * time, which must all give the same reply, deltas and outcome as the
 * expected one.
 */
#include <stdlib.h>

#include "agent/provider.h"
#include "tap.h"

struct seen {
	struct buf text;
	size_t calls;
};

static void
on_delta(void *ctx, const char *s, size_t n)
{
	struct seen *d = ctx;

	buf_add(&d->text, s, n);
	d->calls++;
}

/* run feeds p in pieces ending at cuts[i] (the last at n) */
static char *
run(const char *p, size_t n, const size_t *cuts, size_t ncuts)
{
	struct model_reply m;
	struct model_stream st;
	struct seen d = { { 0 }, 0 };
	struct buf out;
	size_t i, at = 0, end;
	int rc = 0;

	model_reply_init(&m);
	buf_init(&d.text);
	buf_init(&out);
	model_stream_init(&st, &m, on_delta, &d);
	st.provider = ROUTE_SUBSCRIPTION;
	for (i = 0; i <= ncuts && rc == 0; i++) {
		end = i < ncuts ? cuts[i] : n;
		rc = model_stream_feed(&st, p + at, end - at);
		at = end;
	}
	if (rc == 0)
		rc = model_stream_end(&st);
	buf_printf(&out, "%d %s deltas=%zu streamed=", rc, st.code ? st.code :
	    "-", d.calls);
	json_canon_str(&out, d.text.p ? d.text.p : "", d.text.len);
	buf_addc(&out, ' ');
	if (rc == 0)
		model_reply_json(&out, &m);
	model_stream_release(&st);
	model_reply_release(&m);
	buf_release(&d.text);
	return buf_cstr(&out);
}

struct stream {
	const char *name, *text, *want;
};

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

static void
splits(const struct stream *s)
{
	size_t n = strlen(s->text), k, *cuts, bad = 0, first = 0;
	char *whole, *got;

	whole = run(s->text, n, NULL, 0);
	is_str(whole, s->want, "%s: whole", s->name);
	for (k = 0; k <= n; k++) {
		got = run(s->text, n, &k, 1);
		if (strcmp(got, whole) && !bad++)
			first = k;
		free(got);
	}
	ok(!bad, "%s: split in two at each of %zu offsets (%zu differ, "
	    "first at %zu)", s->name, n + 1, bad, first);
	cuts = xcalloc(n + 1, sizeof *cuts);
	for (k = 0; k < n; k++)
		cuts[k] = k;
	got = run(s->text, n, cuts, n);
	is_str(got, whole, "%s: one byte at a time", s->name);
	free(got);
	free(cuts);
	free(whole);
}

int
main(void)
{
	size_t i;

	for (i = 0; i < sizeof corpus / sizeof corpus[0]; i++)
		splits(&corpus[i]);
	return tap_done();
}
