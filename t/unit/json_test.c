/*
 * json_test - canonical JSON against the reference vectors and edge cases,
 * the record hashes of the reference fixtures, and the bounded parser.
 * With --canon it reads JSON lines on stdin and prints each canonical form
 * (used by t/0002-canonical.bats to compare with Python on random values).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "store/store.h"
#include "base/jsontext.h"
#include "tap.h"

#define FIX "t/fixtures/reference/"

static struct arena A;

static char *
canon_of(const char *in, size_t n, char *err, size_t errsz)
{
	static struct buf b;
	struct jval *v = json_parse(&A, in, n, err, errsz);

	if (!v)
		return NULL;
	buf_clear(&b);
	json_canon(&b, v);
	return buf_cstr(&b);
}

static char *
canon(const char *in)
{
	char err[128];

	return canon_of(in, strlen(in), err, sizeof err);
}

static void
vectors(void)
{
	FILE *f = fopen(FIX "canonical-json.jsonl", "r");
	char *line = NULL, err[128], hex[65];
	size_t cap = 0;
	ssize_t n;
	int count = 0;

	ok(f != NULL, "vector file opens");
	while (f && (n = getline(&line, &cap, f)) > 0) {
		struct jval *o = json_parse(&A, line, (size_t)n, err, sizeof err);
		struct jval *in = json_get(o, "input");
		const char *want = json_get_str(o, "canonical");
		const char *sha = json_get_str(o, "sha256");
		char *got = canon_of(in->u.s, in->n, err, sizeof err);

		is_str(got, want, "vector %d canonical", count);
		{
			int c1 = -1, c2 = -1, isfloat = strpbrk(want, ".eE") &&
			    want[0] == '[';

			json_parse_canon(&A, want, strlen(want), err,
			    sizeof err, &c1);
			json_parse_canon(&A, in->u.s, in->n, err, sizeof err,
			    &c2);
			ok(isfloat ? c1 == 0 : c1 != 0, "vector %d: canonical "
			    "text is recognized (%d)", count, c1);
			ok((c2 != 0) == (!isfloat && in->n == strlen(want) &&
			    !memcmp(in->u.s, want, in->n)), "vector %d: input "
			    "recognized as canonical only when it is", count);
		}
		if (got) {
			sha256_hex(got, strlen(got), hex);
			is_str(hex, sha, "vector %d sha256", count);
		}
		count++;
	}
	ok(count >= 10, "read %d vectors", count);
	free(line);
	if (f)
		fclose(f);
}

static void
edges(void)
{
	is_str(canon("\"\\u2028\\u0085\\u007f\""), "\"\\u2028\\u0085\\u007f\"",
	    "U+2028, U+0085 and DEL are escaped");
	is_str(canon("\"\xe2\x80\xa8\xc2\x85\x7f\""),
	    "\"\\u2028\\u0085\\u007f\"", "raw U+2028, U+0085, DEL escaped");
	is_str(canon("\"\xf0\x9f\x98\x80\""), "\"\\ud83d\\ude00\"",
	    "astral character as a surrogate pair");
	is_str(canon("\"\\ud800 lone\""), "\"\\ud800 lone\"",
	    "lone surrogate escape survives");
	is_str(canon("{\"\\ud83d\\ude00\":1,\"\\uffff\":2,\"\\ud800\":3}"),
	    "{\"\\ud800\":3,\"\\uffff\":2,\"\\ud83d\\ude00\":1}",
	    "keys sort by code point, not UTF-16 unit");
	is_str(canon("{\"b\":{\"d\":1,\"c\":2},\"a\":[]}"),
	    "{\"a\":[],\"b\":{\"c\":2,\"d\":1}}", "nested keys sort");
	is_str(canon("[0.1,1e-07,1e+16,100.0,1e16,1E-5,0.0001,-0.0]"),
	    "[0.1,1e-07,1e+16,100.0,1e+16,1e-05,0.0001,-0.0]",
	    "floats in Python repr form");
	is_str(canon("[9999999999999998.0,1e22,123456789012345678]"),
	    "[9999999999999998.0,1e+22,123456789012345678]",
	    "float exponent threshold and exact ints");
	is_str(canon("[340282366920938463463374607431768211456,-0]"),
	    "[340282366920938463463374607431768211456,0]",
	    "integers of any size; -0 is 0");
	is_str(canon("[2.5e-324,1.7976931348623157e308]"),
	    "[5e-324,1.7976931348623157e+308]", "float extremes");
	is_str(canon(" {\"a\" : \"/\" } "), "{\"a\":\"/\"}",
	    "whitespace dropped, slash unescaped");
	is_str(canon("\"\\/\\b\\f\\n\\r\\t\\u0001\""),
	    "\"/\\b\\f\\n\\r\\t\\u0001\"", "short and control escapes");
}

static void
canonical_flag(void)
{
	static const struct { const char *s; int want; } cases[] = {
		{ "{\"a\":1,\"b\":[true,null,\"x\"]}", 2 },
		{ "\"\\u007f \\u00e9 \\ud83d\\ude00 \\ud800\"", 2 },
		{ "\"\\u001f\\n\\\"\\\\\"", 2 },
		/* canonical, but a key holds an escape (1) */
		{ "{\"a\\nb\":1}", 1 }, { "{\"x\":{\"\\u00e9\":\"\\n\"}}", 1 },
		{ "\"\\u00E9\"", 0 }, { "\"\\/\"", 0 }, { " {}", 0 },
		{ "{\"b\":1,\"a\":2}", 0 }, { "\"\x7f\"", 0 },
		{ "\"\xc3\xa9\"", 0 }, { "-0", 0 }, { "\"\\u0041\"", 0 },
		{ "\"\\u000a\"", 0 }, { "[1,2 ]", 0 }, { "1.5", 0 },
		{ "{\"a\":{\"d\":1,\"c\":2}}", 0 }, { "-12", 2 },
		{ NULL, 0 }
	};
	char err[128];
	int i, c;

	for (i = 0; cases[i].s; i++) {
		c = -1;
		ok(json_parse_canon(&A, cases[i].s, strlen(cases[i].s), err,
		    sizeof err, &c) && c == cases[i].want,
		    "canonical flag %d for case %d", cases[i].want, i);
	}
}

/*
 * every_position: a special byte at each position of strings around the
 * 8-byte words the scanner reads, as input and as encoded output, and in
 * a key; the canonical form must be what a byte-by-byte encoder writes.
 */
static void
every_position(void)
{
	static const struct { const char *in, *out; } sp[] = {
		{ "\\n", "\\n" }, { "\\\"", "\\\"" }, { "\\\\", "\\\\" },
		{ "\x7f", "\\u007f" }, { "\xc3\xa9", "\\u00e9" },
		{ "\\u0001", "\\u0001" }, { "\xf0\x9f\x98\x80", "\\ud83d\\ude00" },
	};
	char in[128], want[128], *got;
	size_t i, k, len, bad = 0;

	for (i = 0; i < sizeof sp / sizeof *sp; i++)
		for (len = 1; len < 30; len++)
			for (k = 0; k < len; k++) {
				snprintf(in, sizeof in, "{\"%.*s%s%.*s\":\"%.*s%s%.*s\"}",
				    (int)k, "abcdefghijklmnopqrstuvwxyz0123",
				    sp[i].in, (int)(len - k - 1), "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
				    (int)k, "abcdefghijklmnopqrstuvwxyz0123",
				    sp[i].in, (int)(len - k - 1), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
				snprintf(want, sizeof want, "{\"%.*s%s%.*s\":\"%.*s%s%.*s\"}",
				    (int)k, "abcdefghijklmnopqrstuvwxyz0123",
				    sp[i].out, (int)(len - k - 1), "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
				    (int)k, "abcdefghijklmnopqrstuvwxyz0123",
				    sp[i].out, (int)(len - k - 1), "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
				got = canon(in);
				if (!got || strcmp(got, want)) {
					if (!bad++)
						printf("# %s gave %s, not %s\n", in,
						    got ? got : "an error", want);
				}
			}
	ok(bad == 0, "a special byte at every position: %zu wrong", bad);
}

/*
 * plain_runs: plain_run against the table, with the bytes ending at a
 * page nothing may read past: every boundary byte at every place of
 * strings up to 150 bytes, and every byte at places around its words
 */
static size_t
want_run(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n && plain[p[i]])
		i++;
	return i;
}

static void
plain_runs(void)
{
	static const unsigned char edge[] = { 0x00, 0x1f, 0x20, 0x21, 0x22,
	    0x23, 0x5b, 0x5c, 0x5d, 0x7e, 0x7f, 0x80, 0xc3, 0xff };
	static const size_t at[] = { 0, 1, 7, 8, 62, 63, 64, 65, 127, 128 };
	long pg = sysconf(_SC_PAGESIZE);
	unsigned char *m = mmap(NULL, 2 * (size_t)pg, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *end = m + pg, *p;
	size_t e, len, k, bad = 0;
	unsigned b;

	if (m == MAP_FAILED || mprotect(end, (size_t)pg, PROT_NONE) < 0) {
		ok(0, "plain_run: no guard page");
		return;
	}
	for (e = 0; e < sizeof edge; e++)
		for (len = 0; len <= 150; len++)
			for (k = 0; k <= len; k++) {
				p = end - len;
				memset(p, 'a', len);
				if (k < len)
					p[k] = edge[e];
				bad += plain_run(p, end) != want_run(p, len);
			}
	for (b = 0; b < 256; b++)
		for (k = 0; k < sizeof at / sizeof *at; k++) {
			p = end - 130;
			memset(p, '~', 130);
			p[at[k]] = (unsigned char)b;
			bad += plain_run(p, end) != want_run(p, 130);
		}
	munmap(m, 2 * (size_t)pg);
	ok(bad == 0, "plain_run: %zu wrong", bad);
}

static void
refused(void)
{
	static const char *const bad[] = {
		"{\"a\":1,\"a\":2}", "[1,]", "{\"a\" 1}", "NaN", "Infinity",
		"[1e400]", "01", "1.", "\"\x01\"", "\"\xc3\x28\"",
		"\"\xed\xa0\x80\"", "\"\xc0\xaf\"", "\"\\x\"", "\"\\u12\"",
		"[1] x", "", "tru", "{\"a\":1", "\"abc", "[-]", NULL
	};
	char deep[600], err[128];
	int i;

	for (i = 0; bad[i]; i++)
		ok(json_parse(&A, bad[i], strlen(bad[i]), err, sizeof err) ==
		    NULL && err[0], "refuses %s (%s)", i == 9 || i == 10 ||
		    i == 11 || i == 8 ? "bad bytes" : bad[i], err);
	memset(deep, '[', 200);
	memset(deep + 200, ']', 200);
	ok(!json_parse(&A, deep, 400, err, sizeof err) &&
	    strstr(err, "nesting"), "refuses nesting past %d", JSON_MAX_DEPTH);
	ok(json_parse(&A, deep + 200 - JSON_MAX_DEPTH, 2 * JSON_MAX_DEPTH,
	    err, sizeof err) != NULL, "accepts nesting of %d", JSON_MAX_DEPTH);
}

static void
fixture_hashes(void)
{
	struct buf s;
	struct jval *ev = read_json_file(FIX "session-event-v1.json", 65536, &A);
	struct jval *au = read_json_file(FIX "audit-event-v1.json", 65536, &A);
	char h[HW_HASH_LEN + 1], eh[HW_HASH_LEN + 1], err[200];
	struct buf raw;

	buf_init(&s);
	buf_init(&raw);
	json_hash(ev, &s, eh);
	is_str(eh, "sha256:cde42a6be229b40a5adf701f3808ccbd7b27a0a5c01df79ef"
	    "197ec2081aa160d", "session event fixture hash");
	audit_hash(&A, au, &s, h);
	is_str(h, json_get_str(au, "event_hash"), "audit fixture hash");
	is_str(json_get_str(json_get(au, "payload"), "session_event_hash"), eh,
	    "audit binds the event");
	read_file(FIX "audit-event-v1.json", 65536, &raw);
	buf_clear(&s);
	json_canon(&s, au);
	buf_addc(&s, '\n');
	ok(s.len == raw.len && !memcmp(s.p, raw.p, s.len),
	    "audit fixture bytes are canonical");
	ok(event_check(&A, ev, err, sizeof err) == 0, "event fixture valid");
	ok(audit_check(&A, au, err, sizeof err) == 0, "audit fixture valid");
	ok(pair_check(ev, eh, au, err, sizeof err) == 0, "fixtures pair");
	buf_release(&s);
	buf_release(&raw);
}

static int
canon_stdin(void)
{
	char *line = NULL, err[128], *c;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;

	while ((n = getline(&line, &cap, stdin)) > 0) {
		arena_clear(&A);
		if ((c = canon_of(line, (size_t)n, err, sizeof err)))
			puts(c);
		else {
			printf("ERROR %s\n", err);
			rc = 1;
		}
	}
	free(line);
	return rc;
}

int
main(int argc, char **argv)
{
	arena_init(&A);
	if (argc > 1 && strcmp(argv[1], "--canon") == 0)
		return canon_stdin();
	vectors();
	edges();
	canonical_flag();
	every_position();
	plain_runs();
	refused();
	fixture_hashes();
	return tap_done();
}
