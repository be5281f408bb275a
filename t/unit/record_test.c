/*
 * record_test - the scrubber, content minimization per kind, the migration
 * registry, session ids and titles, the bounded JSON Lines reader,
 * releasing a session that was never initialized, and a canonical
 * draft's event line written from its bytes.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "store/store.h"
#include "store/fastev.h"
#include "tap.h"

static struct arena A;

static struct jval *
J(const char *s)
{
	char err[128];
	struct jval *v = json_parse(&A, s, strlen(s), err, sizeof err);

	if (!v)
		printf("# bad test JSON %s: %s\n", s, err);
	return v;
}

static const char *
C(const struct jval *v)
{
	static struct buf b;

	buf_clear(&b);
	json_canon(&b, v);
	return buf_cstr(&b);
}

static void
scrubber(void)
{
	struct jval *v = J("{\"API_Key\":1,\"db_password_hash\":2,"
	    "\"mySecretThing\":3,\"refresh_token\":4,\"tokens\":5,"
	    "\"nested\":[{\"Patient-ID\":6,\"ok\":7}],\"name\":8,"
	    "\"agent_name\":9,\"Date Of Birth\":10,\"openai_apikey\":11}");

	scrub(&A, v);
	is_str(C(v), "{\"API_Key\":\"[scrubbed]\",\"Date Of Birth\":"
	    "\"[scrubbed]\",\"agent_name\":9,\"db_password_hash\":"
	    "\"[scrubbed]\",\"mySecretThing\":\"[scrubbed]\",\"name\":"
	    "\"[scrubbed]\",\"nested\":[{\"Patient-ID\":\"[scrubbed]\","
	    "\"ok\":7}],\"openai_apikey\":\"[scrubbed]\",\"refresh_token\":"
	    "\"[scrubbed]\",\"tokens\":5}", "scrubber normalizes keys");
}

struct mcase {
	const char *kind, *payload, *want;
};

static const struct mcase cases[] = {
	{ "command.received", "{\"actor_id\":\"h\",\"command_id\":\"c\","
	  "\"command_hash\":\"x\",\"command_kind\":\"chat\",\"extra\":1}",
	  "{\"actor_id\":\"h\",\"command_hash\":\"x\",\"command_id\":"
	  "\"c\",\"command_kind\":\"chat\"" },
	{ "user_message.recorded", "{\"content\":\"h\xc3\xa9\xf0\x9f"
	  "\x98\x80\"}", "{\"actor_id\":\"\",\"command_id\":\"\","
	  "\"content_chars\":3" },
	{ "agent_message.emitted", "{\"content\":\"secret plan\","
	  "\"source_event_id\":\"s\"}", "{\"content_chars\":11" },
	{ "approval.recorded", "{\"command_id\":\"c\",\"group_id\":\"g\","
	  "\"decision\":\"approved\",\"tool_call_ids\":[\"a\",\"b\"]}",
	  "{\"action_count\":2,\"command_id\":\"c\",\"decision\":"
	  "\"approved\",\"group_id\":\"g\"" },
	{ "tool_call.proposed", "{\"tool_call_id\":\"t\",\"tool_name\":"
	  "\"terminal\",\"risk\":\"low\",\"arguments\":{\"command\":"
	  "\"ls\"},\"summary\":\"s\"}", "{\"risk\":\"low\","
	  "\"tool_call_id\":\"t\",\"tool_name\":\"terminal\"" },
	{ "confirmation.requested", "{\"request\":[]}",
	  "{\"request\":\"invalid\"" },
	{ "confirmation.requested", "{\"request\":{\"request_id\":\"r\","
	  "\"summary\":\"s\",\"risk\":\"high\"}}", "{\"request\":{"
	  "\"request_id\":\"r\",\"risk\":\"high\"}" },
	{ "task.plan.updated", "{\"tasks\":[{\"title\":\"a\",\"status\":"
	  "\"done\"},{\"title\":\"b\",\"status\":\"todo\"},{\"title\":"
	  "\"c\",\"status\":\"done\"}]}", "{\"status_counts\":{\"done\":"
	  "2,\"todo\":1},\"task_count\":3" },
	{ "error.recorded", "{\"backend_id\":\"b\",\"code\":"
	  "\"HW-AGENT-006\",\"reason\":\"/home/x\",\"group_id\":\"g\","
	  "\"affects_lifecycle\":false}", "{\"backend_id\":\"b\","
	  "\"code\":\"HW-AGENT-006\",\"reason\":\"[scrubbed]\"" },
	{ "audit.export.recorded", "{\"path\":\"/p\",\"event_count\":3,"
	  "\"scrubbed\":true}", "{\"event_count\":3,\"scrubbed\":true" },
	{ "model.usage.updated", "{\"usage\":{\"model_name\":\"m\","
	  "\"prompt_tokens\":5,\"other\":1}}", "{\"usage\":{"
	  "\"model_name\":\"m\",\"prompt_tokens\":5}" },
	{ "policy.decision.recorded", "{\"x\":1}",
	  "{\"payload_omitted\":true" },
	{ NULL, NULL, NULL }
};

static void
minimization(void)
{
	const struct mcase *c;
	char want[512];

	for (c = cases; c->kind; c++) {
		snprintf(want, sizeof want, "%s,\"session_event_hash\":\"H\"}",
		    c->want);
		char *w = xstrdup(C(J(want)));

		is_str(C(minimize(&A, c->kind, J(c->payload), "H")), w,
		    "minimize %s", c->kind);
		free(w);
	}
}

static void
migration(void)
{
	struct jval *v1 = J("{\"schema_version\":\"heartwood.project-state.v1\"}");
	struct jval *m;
	const char *before = xstrdup(C(v1));

	m = migrate(&A, "project_state", v1);
	ok(m && json_equal(m, project_state_marker(&A)),
	    "project-state v1 migrates to the exact v2 marker");
	is_str(C(v1), before, "migration leaves its input unchanged");
	ok(!migrate(&A, "project_state", J("{\"schema_version\":"
	    "\"heartwood.project-state.v1\",\"x\":1}")),
	    "v1 marker with extra keys is refused");
	m = migrate(&A, "openhands_state", J("{\"schema_version\":"
	    "\"heartwood.openhands-state.unversioned\",\"openhands_sdk_version\""
	    ":\"1.0\",\"content_policy\":\"p\"}"));
	is_str(m ? json_get_str(m, "adopted_from") : NULL, "unversioned",
	    "openhands unversioned step adds adopted_from");
	ok(!migrate(&A, "session_event", J("{\"schema_version\":"
	    "\"heartwood.session-event.v9\",\"payload\":{\"p\":\"SECRET\"}}")) &&
	    strstr(hw_err_msg(), "heartwood.session-event.v9") &&
	    !strstr(hw_err_msg(), "SECRET"), "unknown version refused: %s",
	    hw_err_msg());
	ok(!migrate(&A, "session_event", J("{\"schema_version\":\"x\\ny\"}")) &&
	    !strchr(hw_err_msg(), '\n'), "hostile version not echoed");
	ok(!migrate(&A, "session_event", J("{}")), "missing version refused");
	free((void *)before);
}

/*
 * encoding: audit_canon writes exactly json_canon(audit_record(...)) for
 * every kind, with and without a previous hash, and points at the digits
 * of the event hash in the payload and at the previous hash.
 */
static void
encoding(void)
{
	static const char hex[] = "0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	const char *prev[] = { NULL, "sha256:aa" };
	struct buf got;
	const struct mcase *c;
	struct jval *ev;
	char eh[HW_HASH_LEN + 1];
	const char *want;
	size_t at, pat = 0, i, bad = 0, badmark = 0, badprev = 0, n = 0;

	buf_init(&got);
	snprintf(eh, sizeof eh, "sha256:%s", hex);
	for (c = cases; c->kind; c++)
		for (i = 0; i < 2; i++, n++) {
			ev = event_build(&A, "s-1.x", (int64_t)(n * 999), c->kind,
			    J(c->payload), "2026-12-02T00:00:00Z", prev[i]);
			buf_clear(&got);
			at = audit_canon(&A, ev, eh, &got, &pat);
			if (strcmp(buf_cstr(&got), C(audit_record(&A, ev, eh))) &&
			    !bad++)
				printf("# %s: %s\n#   want %s\n", c->kind,
				    buf_cstr(&got), C(audit_record(&A, ev, eh)));
			badmark += at + 64 > got.len ||
			    memcmp(got.p + at, hex, 64);
			/* the previous hash's text, then the next key */
			want = prev[i] ? "\"sha256:aa\",\"schema_version\"" :
			    "null,\"schema_version\"";
			badprev += pat + strlen(want) > got.len ||
			    memcmp(got.p + pat, want, strlen(want));
		}
	ok(bad == 0, "audit_canon is json_canon(audit_record) for %zu "
	    "events: %zu differ", n, bad);
	ok(badmark == 0, "and marks the event hash's digits: %zu wrong",
	    badmark);
	ok(badprev == 0, "and where the previous hash is: %zu wrong", badprev);
	buf_release(&got);
}

static void
ids(void)
{
	char t[512], long_id[130], long_title[200];

	ok(valid_session_id("session-main"), "session-main is valid");
	ok(valid_session_id("a") && valid_session_id("A.b_c-9"), "short ids");
	ok(!valid_session_id("..") && !valid_session_id(".a") &&
	    !valid_session_id("a/b") && !valid_session_id("") &&
	    !valid_session_id("-a") && !valid_session_id("a b"),
	    "hostile ids refused");
	memset(long_id, 'a', 129);
	long_id[129] = '\0';
	ok(!valid_session_id(long_id), "129 characters refused");
	long_id[128] = '\0';
	ok(valid_session_id(long_id), "128 characters accepted");
	ok(title_normalize("  a \t b\n c  ", t, sizeof t) == 0 &&
	    !strcmp(t, "a b c"), "title whitespace collapsed: '%s'", t);
	ok(title_normalize(" \t ", t, sizeof t) < 0, "blank title refused");
	memset(long_title, 'x', 121);
	long_title[121] = '\0';
	ok(title_normalize(long_title, t, sizeof t) < 0, "121 refused");
	long_title[120] = '\0';
	ok(title_normalize(long_title, t, sizeof t) == 0, "120 accepted");
}

/* naive_count: code points the slow way, for utf8_count to match */
static size_t
naive_count(const char *s, size_t n)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += ((unsigned char)s[i] & 0xc0) != 0x80;
	return c;
}

static void
counts(void)
{
	/* 1-, 2-, 3- and 4-byte characters, so that words split them */
	static const char mix[] = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	char s[200];
	size_t n, i, bad = 0;

	ok(utf8_count("", 0) == 0, "nothing counts 0");
	ok(utf8_count(mix, 10) == 4, "a, e acute, euro, emoji: 4");
	for (n = 0; n < sizeof s; n++) {
		for (i = 0; i < n; i++)
			s[i] = mix[(i * 7 + n) % 10];
		bad += utf8_count(s, n) != naive_count(s, n);
	}
	ok(bad == 0, "every length 0-199, at every alignment: %zu wrong", bad);
}

static int
pipe_of(const char *data, size_t n)
{
	int p[2];

	if (pipe(p) < 0 || write(p[1], data, n) != (ssize_t)n)
		abort();
	close(p[1]);
	return p[0];
}

static void
reader(void)
{
	static const char data[] = "{\"a\":1}\r\n\n{\"b\":\"x\xe2\x80\xa8y\"}\n"
	    "tail";
	struct jsonl r;
	char *line;
	size_t len;
	int fd = pipe_of(data, sizeof data - 1);

	jsonl_init(&r, fd, "in", 64);
	ok(jsonl_next(&r, &line, &len) == 1 && len == 8 && line[7] == '\r',
	    "splits on \\n only, keeps \\r");
	ok(jsonl_next(&r, &line, &len) == 1 && len == 0, "empty line");
	ok(jsonl_next(&r, &line, &len) == 1 && r.lineno == 3 &&
	    memmem(line, len, "\xe2\x80\xa8", 3), "U+2028 is not a newline");
	ok(jsonl_next(&r, &line, &len) == 0 && r.partial && r.offset == 24,
	    "unterminated tail reported, not returned");
	jsonl_release(&r);
	close(fd);

	{
		char big[200];

		memset(big, 'x', sizeof big);
		big[199] = '\n';
		fd = pipe_of(big, sizeof big);
		jsonl_init(&r, fd, "in", 64);
		ok(jsonl_next(&r, &line, &len) < 0 &&
		    strstr(hw_err_msg(), "in:1: line longer than 64"),
		    "over-long line: %s", hw_err_msg());
		jsonl_release(&r);
		close(fd);
	}
	fd = pipe_of("{\"a\":\"\xff\"}\n[1]\n", 15);
	jsonl_init(&r, fd, "in", 64);
	jsonl_next(&r, &line, &len);
	ok(!jsonl_parse(&r, &A, line, len) && strstr(hw_err_msg(), "in:1:") &&
	    strstr(hw_err_msg(), "UTF-8"), "invalid UTF-8: %s", hw_err_msg());
	jsonl_next(&r, &line, &len);
	ok(!jsonl_parse(&r, &A, line, len) && strstr(hw_err_msg(),
	    "in:2: not a JSON object"), "non-object: %s", hw_err_msg());
	jsonl_release(&r);
	close(fd);
}

/* record_id writes what "%s-%s-%06lld" would */
static void
record_ids(void)
{
	static const int64_t seqs[] = { 0, 7, 42, 999999, 1000000,
		123456789, INT64_MAX, -1, INT64_MIN };
	char got[RECORD_ID_MAX], want[RECORD_ID_MAX];
	size_t i;

	for (i = 0; i < sizeof seqs / sizeof *seqs; i++) {
		record_id(got, "session-main", "audit", seqs[i]);
		snprintf(want, sizeof want, "%s-%s-%06lld", "session-main",
		    "audit", (long long)seqs[i]);
		is_str(got, want, "record_id of %lld", (long long)seqs[i]);
	}
}

/* a session never initialized holds no descriptor: releasing it closes none */
static void
release_zeroed(void)
{
	struct session s;
	int fd = open("/dev/null", O_RDONLY), keep = dup(0);

	dup2(fd, 0);
	memset(&s, 0, sizeof s);
	session_release(&s);
	ok(fcntl(0, F_GETFD) != -1,
	    "releasing a zeroed session leaves fd 0 open");
	ok(s.ev_fd == -1 && s.au_fd == -1 && s.lease_fd == -1,
	    "and leaves it released");
	dup2(keep, 0);
	close(keep);
	close(fd);
}

/*
 * draft_lines: draft_event_line writes from a canonical draft's bytes what
 * json_canon writes for event_build's tree, and leaves other shapes alone
 */
static void
draft_lines(void)
{
	static const char *const drafts[] = {
		"{\"kind\":\"agent_message.emitted\",\"payload\":"
		    "{\"content\":\"hi\"}}",
		"{\"kind\":\"agent_message.emitted\"}",
		"{\"kind\":\"agent_message.emitted\",\"payload\":{}}",
		"{\"kind\":\"tool_call.proposed\",\"payload\":{\"a\":[1,"
		    "{\"b\":null}],\"c\":\"\\\"q\\\\\\n\\u00e9\\ud83d\\ude00\"}}",
		"{\"kind\":\"task.plan.updated\",\"payload\":{\"tasks\":"
		    "[{\"id\":\"1\",\"status\":\"pending\",\"title\":\"t\"}]}}",
		"{\"kind\":\"agent_message.emitted\",\"payload\":"
		    "{\"a\\nb\":1}}",
	};
	static const char *const shapes[] = {
		"", "{", "{\"kind\":", "{\"kind\":\"a", "{\"kind\":\"a\\",
		"{\"kind\":\"a\"", "{\"kind\":\"a\"}x", "{\"kind\":1}",
		"{\"kind\":\"a\",\"payload\":{}", "{\"kind\":\"a\",\"payload\":}",
		"{\"kind\":\"a\",\"payloads\":{}}", "{\"kind\" :\"a\"}",
		"{\"kind\":\"a\",\"payload\":{\"x\":1}",
	};
	static const char hash[] = "sha256:0123456789abcdef0123456789abcdef"
	    "0123456789abcdef0123456789abcdef";
	static const char now[] = "2026-12-06T12:00:00Z";
	const char *prevs[] = { NULL, hash };
	const int64_t seqs[] = { 0, 1234567 };
	struct buf fast, tree;
	struct jval *d, *ev;
	struct event_at at;
	struct buf val;
	char err[128];
	struct fastev f;
	size_t i, j, k, m, bad, fast_taken = 0;
	int c, took;

	buf_init(&fast);
	buf_init(&tree);
	buf_init(&val);
	for (i = 0; i < sizeof drafts / sizeof *drafts; i++) {
		d = json_parse_canon(&A, drafts[i], strlen(drafts[i]), err,
		    sizeof err, &c);
		ok(d && c && draft_check(&A, d, 0, err, sizeof err) == 0,
		    "draft %zu is canonical and a draft", i);
		for (j = 0; d && j < 2; j++)
			for (k = 0; k < 2; k++) {
				buf_clear(&fast);
				buf_clear(&tree);
				ok(draft_event_line(&fast, drafts[i],
				    strlen(drafts[i]), "s1", seqs[j], now,
				    prevs[k], &at) == 1, "draft %zu taken", i);
				ev = event_build(&A, "s1", seqs[j],
				    json_get_str(d, "kind"), json_get(d,
				    "payload"), now, prevs[k]);
				json_canon(&tree, ev);
				is_str(buf_cstr(&fast), buf_cstr(&tree),
				    "draft %zu, seq %zu, prev %zu: the tree's "
				    "bytes", i, j, k);
				/* each member's value where it says */
				for (m = 0, bad = 0; m < 8 && ev->n == 8;
				    m++) {
					buf_clear(&val);
					json_canon(&val, ev->u.m[m].v);
					bad += at.len[m] != val.len ||
					    at.off[m] + at.len[m] > fast.len ||
					    memcmp(fast.p + at.off[m], val.p,
					    val.len);
				}
				ok(ev->n == 8 && bad == 0, "draft %zu, seq "
				    "%zu, prev %zu: the values' places (%zu "
				    "wrong)", i, j, k, bad);
				/* which fastev_check_at takes as they are */
				took = c == 2 && fastev_check_at(&f, fast.p,
				    fast.len, at.off, at.len, "s1", seqs[j]);
				ok(c != 2 || took == fastev_check(&f,
				    fast.p, fast.len, "s1", seqs[j]),
				    "draft %zu, seq %zu, prev %zu: "
				    "fastev_check_at decides as fastev_check",
				    i, j, k);
				fast_taken += took;
				/* fastev_check_built's premise */
				ok(json_canon_ascii(fast.p, fast.len) ==
				    (c == 2), "draft %zu: json_canon_ascii "
				    "takes its event line when no key holds an "
				    "escape (%d)", i, c);
			}
	}
	for (i = 0; i < sizeof shapes / sizeof *shapes; i++) {
		buf_clear(&fast);
		ok(draft_event_line(&fast, shapes[i], strlen(shapes[i]), "s1",
		    0, now, NULL, NULL) == 0 && fast.len == 0,
		    "shape %zu is left to the tree", i);
	}
	ok(draft_event_line(&fast, NULL, 0, "s1", 0, now, NULL, NULL) == 0,
	    "no line is left to the tree");
	ok(fast_taken >= 8, "fastev_check_at took %zu of them", fast_taken);
	buf_release(&val);
	buf_release(&fast);
	buf_release(&tree);
}

int
main(void)
{
	arena_init(&A);
	release_zeroed();
	scrubber();
	minimization();
	encoding();
	migration();
	ids();
	counts();
	record_ids();
	reader();
	draft_lines();
	return tap_done();
}
