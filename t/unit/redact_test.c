/*
 * redact_test - credential redaction (redact.c): every form at every
 * alignment between arbitrary neighbours, the minimum length, the last
 * error, object keys that would collide, a growing streamed text that
 * never shows a piece of a key, and keys added by one thread while
 * another redacts (the sanitizer build sees any unlocked use).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "base/base.h"
#include "tap.h"

static const char KEY[] = "sk-unit-~~~>>>?>?-5e2b7c90a1";

/* red: p redacted, as a C string (static) */
static const char *
red(const char *p, size_t n)
{
	static struct buf b;

	buf_clear(&b);
	redact_buf(&b, p, n);
	return buf_cstr(&b);
}

/* b64_between: base64 of pre + KEY + post, URL-safe when url */
static const char *
b64_between(const char *pre, const char *post, int url)
{
	static struct buf out;
	struct buf in;
	size_t i;

	buf_init(&in);
	buf_adds(&in, pre);
	buf_adds(&in, KEY);
	buf_adds(&in, post);
	buf_clear(&out);
	b64_encode(&out, in.p, in.len);
	for (i = 0; url && i < out.len; i++)
		out.p[i] = out.p[i] == '+' ? '-' : out.p[i] == '/' ? '_' :
		    out.p[i];
	buf_release(&in);
	return buf_cstr(&out);
}

static void
base64_forms(void)
{
	static const char *const pre[] = { "", "a", "bc", "def", "ghij" };
	static const char *const post[] = { "", "!", "?>", "~~~" };
	size_t i, j;
	int url, all = 1;
	const char *e;

	for (i = 0; i < 5; i++)
		for (j = 0; j < 4; j++)
			for (url = 0; url < 2; url++) {
				e = red(b64_between(pre[i], post[j], url),
				    strlen(b64_between(pre[i], post[j], url)));
				if (!strstr(e, REDACT_MARKER)) {
					all = 0;
					printf("# not redacted: pre '%s' post "
					    "'%s' url %d: %s\n", pre[i],
					    post[j], url, e);
				}
			}
	ok(all, "base64 and base64url of the key between any neighbours");
	e = b64_between("", "", 0);
	ok(strncmp(red(e, strlen(e)), REDACT_MARKER,
	    sizeof REDACT_MARKER - 1) == 0, "the encoding of the key alone "
	    "starts with the marker");
}

static void
other_forms(void)
{
	struct buf b;
	size_t i;
	char hex[2 * sizeof KEY + 1];

	hex_encode((const unsigned char *)KEY, strlen(KEY), hex);
	is_str(red(hex, strlen(hex)), REDACT_MARKER, "hex");
	for (i = 0; hex[i]; i++)
		hex[i] = (char)(hex[i] >= 'a' ? hex[i] - 32 : hex[i]);
	is_str(red(hex, strlen(hex)), REDACT_MARKER, "upper-case hex");
	buf_init(&b);
	buf_adds(&b, "x=");
	for (i = 0; KEY[i]; i++)
		buf_printf(&b, strchr("~-", KEY[i]) || (KEY[i] >= 'a' &&
		    KEY[i] <= 'z') || (KEY[i] >= '0' && KEY[i] <= '9') ?
		    "%c" : "%%%02X", (unsigned char)KEY[i]);
	buf_adds(&b, "&y");
	is_str(red(b.p, b.len), "x=" REDACT_MARKER "&y", "percent-encoding");
	buf_clear(&b);
	for (i = 0; KEY[i]; i++)
		buf_printf(&b, "%%%02x", (unsigned char)KEY[i]);
	is_str(red(b.p, b.len), REDACT_MARKER, "percent-encoding of every "
	    "byte, lower case");
	buf_release(&b);
	buf_init(&b);
	buf_printf(&b, "a%sb%s", KEY, KEY);
	is_str(red(b.p, b.len), "a" REDACT_MARKER "b" REDACT_MARKER,
	    "two in a row");
	is_str(red(KEY, strlen(KEY) - 1), "sk-unit-~~~>>>?>?-5e2b7c90a",
	    "a prefix alone is left");
	buf_release(&b);
}

static void
minimum(void)
{
	ok(redact_secret("1234567", 7) == 0, "a 7-byte value is refused");
	is_str(red("a1234567b", 9), "a1234567b", "and never matched");
	ok(redact_secret("abcdefgh", 8) == 1, "an 8-byte value is taken");
	ok(redact_secret("abcdefgh", 8) == 0, "once");
	is_str(red("xabcdefghx", 10), "x" REDACT_MARKER "x",
	    "and matched");
}

static void
last_error(void)
{
	char big[2000];

	hw_err_set(HW_EXIT_FAIL, "cannot open '%s': no", KEY);
	is_str(hw_err_msg(), "cannot open '" REDACT_MARKER "': no",
	    "the last error holds the marker");
	memset(big, 'x', 1010);
	big[1010] = 0;
	hw_err_set(HW_EXIT_FAIL, "%s%s", big, KEY);
	ok(!strstr(hw_err_msg(), "sk-unit"), "a message cut short keeps no "
	    "piece of a key");
	errno = ENOENT;
	hw_err_sys("cannot read '%s'", KEY);
	is_str(hw_err_msg(), "cannot read '" REDACT_MARKER "': No such file "
	    "or directory", "hw_err_sys too");
}

static void
json_keys(void)
{
	struct arena a;
	struct buf b;
	struct jval *v;
	char err[128];
	static const char in[] = "{\"sk-unit-~~~>>>?>?-5e2b7c90a1\":1,"
	    "\"[REDACTED:credential]\":2,\"[REDACTED:credential]#2\":3,"
	    "\"v\":[\"sk-unit-~~~>>>?>?-5e2b7c90a1\",{\"k\":\"x\"}]}";

	arena_init(&a);
	buf_init(&b);
	v = json_parse(&a, in, strlen(in), err, sizeof err);
	ok(redact_json(&a, v) == 2, "a key and a string redacted");
	json_canon(&b, v);
	is_str(buf_cstr(&b), "{\"[REDACTED:credential]\":2,"
	    "\"[REDACTED:credential]#2\":3,\"[REDACTED:credential]#3\":1,"
	    "\"v\":[\"[REDACTED:credential]\",{\"k\":\"x\"}]}",
	    "a redacted key that meets another gets the next free number");
	buf_clear(&b);
	json_canon(&b, v);
	ok(json_parse(&a, b.p, b.len, err, sizeof err) != NULL,
	    "and the result parses (no duplicate keys)");
	buf_release(&b);
	arena_release(&a);
}

static void
stream(void)
{
	struct redact_stream rs;
	struct buf text;
	size_t i, step, len;
	int shown_piece = 0;
	const char *full = "Key: sk-unit-~~~>>>?>?-5e2b7c90a1, and then "
	    "c2stdW5pdC1+fn4+Pj4/Pj8tNWUyYjdjOTBhMQ== too.";

	len = strlen(full);
	for (step = 1; step <= 7; step++) {
		redact_stream_init(&rs);
		buf_init(&text);
		for (i = 0; i < len; i += step) {
			buf_add(&text, full + i, len - i < step ? len - i :
			    step);
			redact_stream_update(&rs, text.p, text.len);
			if (memmem(rs.shown.p ? rs.shown.p : "", rs.shown.len,
			    "sk-unit", 7) || memmem(rs.shown.p ?
			    rs.shown.p : "", rs.shown.len, "c2stdW5p", 8))
				shown_piece = 1;
		}
		is_str(buf_cstr(&rs.shown), "Key: " REDACT_MARKER ", and then "
		    REDACT_MARKER "Q== too.", "deltas of %zu bytes: all redacted, the "
		    "tail held", step);
		buf_release(&text);
		redact_stream_release(&rs);
	}
	ok(!shown_piece, "no piece of the key was ever shown");
}

enum { ADDED = 600 };

/* adder registers ADDED new keys, each growing the registry */
static void *
adder(void *arg)
{
	char k[32];
	int i;

	(void)arg;
	for (i = 0; i < ADDED; i++) {
		snprintf(k, sizeof k, "thread-key-%06d-x", i);
		redact_secret(k, strlen(k));
	}
	return NULL;
}

static void
threads(void)
{
	static const char text[] = "a text with thread-key-000000-x in it";
	pthread_t t;
	size_t before = redact_count();
	int i, seen = 0;

	ok(pthread_create(&t, NULL, adder, NULL) == 0, "an adding thread");
	for (i = 0; i < 4 * ADDED; i++)
		seen |= !strcmp(red(text, sizeof text - 1),
		    "a text with " REDACT_MARKER " in it");
	pthread_join(t, NULL);
	ok(redact_count() >= before + ADDED, "every key it added is held");
	is_str(red(text, sizeof text - 1), "a text with " REDACT_MARKER
	    " in it", "and redacted once it is");
	(void)seen;
}

int
main(void)
{
	redact_secret(KEY, strlen(KEY));
	base64_forms();
	other_forms();
	minimum();
	last_error();
	json_keys();
	stream();
	threads();
	return tap_done();
}
