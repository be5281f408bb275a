/*
 * tuf_test - OLPC canonical JSON as securesystemslib writes it, the
 * metadata time format, percent-encoding of role names, succinct bin
 * names, and the skill digest's path order and digest parsing.
 */
#include <stdlib.h>
#include <string.h>

#include "skill/skill.h"
#include "tuf/tuf.h"
#include "tap.h"

static void
canon_is(const char *in, const char *want)
{
	struct arena a;
	struct jval *v;
	struct buf b;
	char err[100];
	int rc;

	arena_init(&a);
	buf_init(&b);
	v = json_parse(&a, in, strlen(in), err, sizeof err);
	rc = v ? tuf_canon(&b, v) : -2;
	if (want)
		is_str(rc == 0 ? buf_cstr(&b) : "(refused)", want, "canon %s",
		    in);
	else
		ok(rc == -1, "canon refuses %s", in);
	buf_release(&b);
	arena_release(&a);
}

static void
time_is(const char *s, long long want)
{
	time_t t;
	int rc = tuf_parse_time(s, &t);

	if (want < 0)
		ok(rc < 0, "time refuses '%s'", s);
	else
		ok(rc == 0 && (long long)t == want, "time '%s'", s);
}

static void
quote_is(const char *s, const char *want)
{
	struct buf b;

	buf_init(&b);
	tuf_quote(&b, s, NULL);
	is_str(buf_cstr(&b), want, "quote '%s'", s);
	buf_release(&b);
}

static void
digest(void)
{
	char out[SHA256_HEX + 1];
	const char *h = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	char pre[80];

	snprintf(pre, sizeof pre, "sha256:%s", h);
	ok(skill_parse_digest(h, out) == 0 && !strcmp(out, h), "digest");
	ok(skill_parse_digest(pre, out) == 0 && !strcmp(out, h),
	    "digest with sha256:");
	ok(skill_parse_digest("sha256:ABCDEF", out) < 0, "digest short");
	snprintf(pre, sizeof pre, "%.63sA", h);
	ok(skill_parse_digest(pre, out) < 0, "digest upper case");
	snprintf(pre, sizeof pre, "sha512:%s", h);
	ok(skill_parse_digest(pre, out) < 0, "digest of another algorithm");
}

int
main(void)
{
	canon_is("{\"b\":1,\"a\":[true,false,null]}",
	    "{\"a\":[true,false,null],\"b\":1}");
	canon_is("{ \"k\" : \"q\\\"b\\\\s\" }", "{\"k\":\"q\\\"b\\\\s\"}");
	/* controls, DEL and non-ASCII stay raw bytes */
	canon_is("[\"a\\nb\\u0001\\u007f\\u00e9\\ud83d\\ude00/\"]",
	    "[\"a\nb\001\177\xc3\xa9\xf0\x9f\x98\x80/\"]");
	/* keys by byte: "B" < "a" < "\u00e9" < "\U0001F600" */
	canon_is("{\"\\ud83d\\ude00\":1,\"\\u00e9\":2,\"a\":3,\"B\":4}",
	    "{\"B\":4,\"a\":3,\"\xc3\xa9\":2,\"\xf0\x9f\x98\x80\":1}");
	canon_is("[-0,12345678901234567890123]",
	    "[0,12345678901234567890123]");
	canon_is("[1.5]", NULL);
	canon_is("{\"a\":{\"b\":1e3}}", NULL);

	time_is("2030-01-01T00:00:00Z", 1893456000LL);
	time_is("1970-01-01T00:00:00Z", 0);
	time_is("2030-01-01T00:00:00", -1);
	time_is("2030-01-01 00:00:00Z", -1);
	time_is("2030-1-01T00:00:00Z", -1);
	time_is("2030-13-01T00:00:00Z", -1);
	time_is("2030-01-01T00:00:00+00:00", -1);

	quote_is("targets", "targets");
	quote_is("a/b", "a%2Fb");
	quote_is("../z", "..%2Fz");
	quote_is("q?x#y z", "q%3Fx%23y%20z");
	quote_is("~-._", "~-._");
	quote_is("\xc3\xa9", "%C3%A9");

	ok(skill_path_cmp("a/b", "a-b") < 0, "a/b before a-b");
	ok(skill_path_cmp("a-b", "a.b") < 0, "a-b before a.b");
	ok(skill_path_cmp("a", "a/b") < 0, "a before a/b");
	ok(skill_path_cmp("B", "a") < 0, "B before a");
	ok(skill_path_cmp("x/y", "x/y") == 0, "x/y equals x/y");
	ok(skill_path_cmp("\xc3\xa9", "z") > 0, "non-ASCII after z");

	digest();
	return tap_done();
}
