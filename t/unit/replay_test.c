/*
 * replay_test - the replay model's script parser (defaults, every rule,
 * line numbers) and its renderers (the completion object, the event-stream
 * styles, bytes:N, drop), which must be pure functions of their input.
 */
#include <stdlib.h>

#include "hw-model/replay.h"
#include "tap.h"

static int
parse(struct replay_script *s, const char *text)
{
	replay_script_release(s);
	replay_script_init(s);
	return replay_script_parse(s, "t.jsonl", text, strlen(text));
}

static void
parser(void)
{
	struct replay_script s;
	const struct replay_turn *t;

	replay_script_init(&s);
	ok(parse(&s, "{\"content\":\"hi\",\"tool_calls\":[{\"name\":\"a\","
	    "\"arguments\":{\"z\":1,\"a\":[true]}},{\"id\":\"x\",\"name\":"
	    "\"b\",\"arguments\":{}}],\"usage\":{\"prompt_tokens\":3},"
	    "\"expect\":\"seen\"}\n\n  \n{\"fail\":\"drop\"}\n{\"fail\":429,"
	    "\"expect\":\"again\"}") == 0, "a script of three turns parses");
	ok(s.n == 3, "blank lines are skipped");
	t = &s.turns[0];
	ok(t->content_n == 2 && !memcmp(t->content, "hi", 2) &&
	    t->ncalls == 2 && t->prompt_tokens == 3 &&
	    t->completion_tokens == 0 && !strcmp(t->expect, "seen") &&
	    t->fail == 0 && t->line == 1, "the first turn's fields");
	is_str(t->calls[0].id, "call-1-1", "a missing id is call-TURN-INDEX");
	is_str(t->calls[0].args, "{\"a\":[true],\"z\":1}",
	    "arguments are kept as canonical JSON text");
	is_str(t->calls[1].id, "x", "a given id is kept");
	ok(s.turns[1].fail == REPLAY_DROP && s.turns[1].line == 4 &&
	    !s.turns[1].content, "drop, with its line number");
	ok(s.turns[2].fail == 429 && s.turns[2].expect, "429 with expect");
	ok(parse(&s, "{\"content\":null}") == 0 && !s.turns[0].content,
	    "null content is absent");
	ok(parse(&s, "{}\n{\"usage\":{\"completion_tokens\":-2}}") < 0 &&
	    hw_err_code() == HW_EXIT_DATA, "a bad line is code 65");
	is_str(hw_err_msg(), "t.jsonl:2: 'usage.completion_tokens' must be "
	    "a whole number from 0 to 1000000000000", "and names its line");
	ok(parse(&s, "{\"tool_calls\":[{\"name\":\"a\",\"arguments\":{},"
	    "\"\\u0001x\":1}]}") < 0, "an unknown call field is refused");
	is_str(hw_err_msg(), "t.jsonl:1: 'tool_calls[0]': unknown field "
	    "'?x'", "an unprintable key is shown safely");
	ok(parse(&s, "{\"expect\":\"a\\u0000b\"}") < 0,
	    "expect with a NUL is refused");
	ok(parse(&s, "") < 0, "an empty script is refused");
	is_str(hw_err_msg(), "t.jsonl: the script holds no turns",
	    "with its message");
	replay_script_release(&s);
}

static const char turn_text[] = "{\"content\":\"h\\u00e9llo w\\ud83d\\ude00"
    "rld\",\"tool_calls\":[{\"id\":\"c1\",\"name\":\"terminal\","
    "\"arguments\":{\"command\":\"echo one two three\"}},{\"id\":\"c2\","
    "\"name\":\"think\",\"arguments\":{\"thought\":\"x\"}}],"
    "\"usage\":{\"prompt_tokens\":7,\"completion_tokens\":2}}";

static void
completion(const struct replay_turn *t)
{
	struct buf b;

	buf_init(&b);
	replay_render_completion(&b, t, 4);
	is_str(buf_cstr(&b), "{\"id\":\"replay-4\",\"object\":"
	    "\"chat.completion\",\"created\":0,\"model\":\"heartwood-replay\","
	    "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\","
	    "\"content\":\"h\\u00e9llo w\\ud83d\\ude00rld\",\"tool_calls\":"
	    "[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":"
	    "\"terminal\",\"arguments\":\"{\\\"command\\\":\\\"echo one two "
	    "three\\\"}\"}},{\"id\":\"c2\",\"type\":\"function\",\"function\":"
	    "{\"name\":\"think\",\"arguments\":\"{\\\"thought\\\":\\\"x\\\"}\"}}"
	    "]},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":"
	    "7,\"completion_tokens\":2,\"total_tokens\":9}}",
	    "the completion object");
	buf_release(&b);
}

/* events counts the "data: " lines of a rendered stream */
static size_t
events(const struct replay_sse *s)
{
	size_t n = 0, i;

	for (i = 0; i + 6 <= s->body.len; i++)
		if (!memcmp(s->body.p + i, "data: ", 6) &&
		    (i == 0 || s->body.p[i - 1] == '\n'))
			n++;
	return n;
}

static void
streams(const struct replay_turn *t)
{
	struct replay_style st = { REPLAY_WHOLE, 0, 0, 0 };
	struct replay_sse whole, other;
	size_t i, ok_ends = 1;

	replay_sse_init(&whole);
	replay_sse_init(&other);
	replay_render_sse(&whole, t, 1, &st, 1);
	ok(events(&whole) == 4 && whole.n == 4, "whole: 3 chunks and [DONE], "
	    "one write each");
	ok(whole.body.len > 14 && !memcmp(whole.body.p + whole.body.len - 14,
	    "data: [DONE]\n\n", 14), "ending with [DONE]");
	replay_render_sse(&other, t, 1, &st, 1);
	ok(other.body.len == whole.body.len && !memcmp(other.body.p,
	    whole.body.p, whole.body.len), "rendering is deterministic");
	st.chunking = REPLAY_BYTES;
	st.bytes = 10;
	replay_render_sse(&other, t, 1, &st, 1);
	for (i = 0; i < other.n; i++)
		if (other.ends[i] != (i + 1 == other.n ? other.body.len :
		    10 * (i + 1)))
			ok_ends = 0;
	ok(other.body.len == whole.body.len && !memcmp(other.body.p,
	    whole.body.p, whole.body.len) && ok_ends,
	    "bytes:10 is whole's body in 10-byte writes");
	st.chunking = REPLAY_WHOLE;
	st.comments = st.crlf = 1;
	replay_render_sse(&other, t, 1, &st, 0);
	ok(other.n == 5 && strstr(buf_cstr(&other.body),
	    "\r\n\r\n: keep-alive\r\ndata: "), "comments between events, "
	    "CR LF, no usage chunk unasked");
	replay_render_drop(&other, t, 1, &st);
	ok(other.n == 1 && other.body.len == other.ends[0] &&
	    other.body.len > 20 && !memchr(other.body.p, '\n',
	    other.body.len), "drop: half of the first event");
	st.chunking = REPLAY_LLAMA;
	st.comments = st.crlf = 0;
	replay_render_sse(&other, t, 1, &st, 0);
	ok(strstr(buf_cstr(&other.body), "{\"content\":\"h\\u00e9l\"}") &&
	    strstr(other.body.p, "{\"content\":\"lo \"}") &&
	    strstr(other.body.p, "{\"content\":\"w\\ud83d\\ude00r\"}"),
	    "llama: three code points a chunk");
	ok(strstr(other.body.p, "\"finish_reason\":\"tool_calls\"}],\"usage\""
	    ":{\"prompt_tokens\":7,\"completion_tokens\":2,\"total_tokens\":9}"
	    "}\n\ndata: [DONE]\n\n"), "llama: finish and usage last");
	st.chunking = REPLAY_INTERLEAVED;
	replay_render_sse(&other, t, 1, &st, 0);
	ok(strstr(other.body.p, "{\"tool_calls\":[{\"index\":0,\"id\":\"c1\"")
	    < strstr(other.body.p, "{\"tool_calls\":[{\"index\":1,\"id\":"
	    "\"c2\"") && strstr(other.body.p, "{\"tool_calls\":[{\"index\":1,"
	    "\"id\":\"c2\"") < strstr(other.body.p, "{\"arguments\":\"{\\\"c\"}"),
	    "interleaved: both heads before the first piece");
	replay_sse_release(&whole);
	replay_sse_release(&other);
}

static void
styles(void)
{
	struct replay_style st = { REPLAY_WHOLE, 0, 0, 0 };

	ok(replay_style_parse(&st, "vllm") == 0 &&
	    st.chunking == REPLAY_VLLM, "vllm");
	ok(replay_style_parse(&st, "bytes:1048576") == 0 &&
	    st.chunking == REPLAY_BYTES && st.bytes == 1048576, "bytes:max");
	ok(replay_style_parse(&st, "bytes:1048577") < 0 &&
	    hw_err_code() == HW_EXIT_USAGE, "bytes over the max is usage");
	ok(replay_style_parse(&st, "bytes:") < 0 &&
	    replay_style_parse(&st, "bytes:+1") < 0 &&
	    replay_style_parse(&st, "Whole") < 0, "and so are malformed ones");
}

int
main(void)
{
	struct replay_script s;

	parser();
	replay_script_init(&s);
	if (replay_script_parse(&s, "turn", turn_text, strlen(turn_text)) < 0)
		printf("# %s\n", hw_err_msg());
	ok(s.n == 1, "the rendering turn parses");
	if (s.n == 1) {
		completion(&s.turns[0]);
		streams(&s.turns[0]);
	}
	styles();
	replay_script_release(&s);
	return tap_done();
}
