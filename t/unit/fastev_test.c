/*
 * fastev_test - fastev against the tree: every line of a corpus (each kind
 * it knows, every escape a content can hold, every way an envelope can be
 * wrong) is taken by both with the same audit record, or left to the
 * tree; the lines it must take, it takes.  And json_canon_ascii never
 * calls canonical what json_parse_canon does not.
 */
#include <stdlib.h>

#include "fastev_cmp.h"
#include "tap.h"

static struct arena A;

#define HASH "\"sha256:8ac0bea97db0cf3891c14863f15a824f5510c651f092b62f" \
	"16855c992911e17e\""

/* line: an event of session s1 at sequence 3 with these parts */
static const char *
line(const char *kind, const char *payload, const char *prev)
{
	static char b[8192];

	snprintf(b, sizeof b, "{\"event_id\":\"s1-event-000003\",\"kind\":\"%s\","
	    "\"occurred_at\":\"2026-01-01T00:00:00Z\",\"payload\":%s,"
	    "\"previous_event_hash\":%s,\"schema_version\":"
	    "\"heartwood.session-event.v1\",\"sequence\":3,\"session_id\":"
	    "\"s1\"}", kind, payload, prev);
	return b;
}

/* same: both agree; want: fastev must take it (1) or leave it (0) */
static void
same(const char *l, int want, const char *what)
{
	char why[16384] = "";
	int k = fastev_compare(&A, l, strlen(l), "s1", 3, why, sizeof why);

	ok(k >= 0 && k == want, "%s: %s", want ? "taken" : "left to the tree",
	    what);
	if (k < 0 || k != want)
		printf("#   %s\n#   line %s\n", k < 0 ? why : "", l);
}

struct pcase {
	const char *kind, *payload;
	int fast;
};

static const struct pcase payloads[] = {
	{ "agent_message.emitted", "{\"content\":\"hello\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"a\\nb\\\"c\\\\d\\te\\u0001f"
	  "\\u007f\\b\\f\\r\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\ud83d\\ude00x\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\ud83dx\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\ude00\\ud83d\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\ud83d\\ud83d\\ude00\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\ud83d\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\u00e9t\\u00e9 \\u4e2d\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\u0000\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\"}", 1 },
	{ "agent_message.emitted", "{}", 1 },
	{ "agent_message.emitted", "{\"content\":5}", 1 },
	{ "agent_message.emitted", "{\"content\":null}", 1 },
	{ "agent_message.emitted", "{\"content\":[\"a\",{\"b\":\"}\"}]}", 1 },
	{ "agent_message.emitted", "{\"a\":{\"password\":\"p\"},\"content\":"
	  "\"x\",\"z\":[1,[2,{}],\"]\"]}", 1 },
	{ "agent_message.emitted", "{\"content\":\"a/b\"}", 1 },
	{ "agent_message.emitted", "{\"content\":\"\\u00E9\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"caf\xc3\xa9\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"a\\/b\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"\\u0041\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"\\u000a\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"\\ud83d\\uDE00\"}", 0 },
	{ "agent_message.emitted", "{\"content\": \"x\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"x\",\"a\":1}", 0 },
	{ "agent_message.emitted", "{\"content\":\"x\",\"content\":\"y\"}", 0 },
	{ "agent_message.emitted", "{\"content\":\"\x7f\"}", 0 },
	{ "agent_message.emitted", "{\"content\":1.5}", 0 },
	{ "agent_message.emitted", "{\"content\":-0}", 0 },
	{ "agent_message.emitted", "{\"con\\ttent\":\"x\"}", 0 },
	{ "user_message.recorded", "{\"actor_id\":\"h\",\"command_id\":\"c\","
	  "\"content\":\"hi\\n\"}", 1 },
	{ "user_message.recorded", "{\"content\":\"hi\"}", 1 },
	{ "user_message.recorded", "{\"actor_id\":7,\"command_id\":null,"
	  "\"content\":\"hi\"}", 1 },
	{ "user_message.recorded", "{\"actor_id\":true,\"command_id\":"
	  "\"\\u2028\"}", 1 },
	{ "user_message.recorded", "{\"actor_id\":{\"password\":\"x\"},"
	  "\"content\":\"hi\"}", 0 },
	{ "user_message.recorded", "{\"command_id\":[\"c\"]}", 0 },
	{ "tool.execution.recorded", "{\"action_id\":\"a\",\"backend_id\":\"b\","
	  "\"exit_code\":0,\"result\":\"big\",\"tool_call_id\":\"t\","
	  "\"tool_name\":\"terminal\"}", 1 },
	{ "tool.execution.recorded", "{\"exit_code\":-1,\"result\":{\"x\":"
	  "[1,2]}}", 1 },
	{ "tool.execution.recorded", "{\"exit_code\":123456789012345678901234"
	  "567890}", 1 },
	{ "tool.execution.recorded", "{}", 1 },
	{ "tool.execution.recorded", "{\"exit_code\":{\"a\":1}}", 0 },
	{ "tool.execution.recorded", "{\"exit_code\":1.5}", 0 },
	{ "tool.execution.recorded", "{\"exit_code\":1e3}", 0 },
	{ "tool_call.proposed", "{\"arguments\":{\"command\":\"ls\"},\"risk\":"
	  "\"LOW\",\"tool_call_id\":\"t\",\"tool_name\":\"terminal\"}", 1 },
	{ "confirmation.resolved", "{\"decision\":\"approved\",\"group_id\":"
	  "\"g\",\"tool_call_id\":\"t\"}", 1 },
	{ "agent.lifecycle.updated", "{\"status\":\"running\"}", 1 },
	{ "session.paused", "{\"command_id\":\"c\"}", 1 },
	{ "session.resumed", "{}", 1 },
	{ "audit.export.recorded", "{\"event_count\":3,\"scrubbed\":true}", 1 },
	{ "command.received", "{\"actor_id\":\"h\",\"command_hash\":\"x\","
	  "\"command_id\":\"c\",\"command_kind\":\"chat\"}", 1 },
	{ "command.received", "{\"actor_id\":\"h\",\"command_id\":\"c\","
	  "\"command_hash\":\"x\"}", 0 },
	{ "command.received", "{\"command_id\":\"\"}", 1 },
	{ "command.received", "{\"command_id\":7,\"command_kind\":\"x\"}", 1 },
	{ "command.received", "{\"command_id\":null}", 1 },
	{ "command.received", "{}", 1 },
	{ "command.received", "{\"command_id\":\"c\\n\"}", 0 },
	{ "command.received", "{\"command_id\":\"\\u00e9\"}", 0 },
	{ "command.received", "{\"command_id\":[\"c\"]}", 0 },
	{ "confirmation.requested", "{\"request\":{}}", 1 },
	{ "confirmation.requested", "{\"request\":{\"a\":1,\"group_id\":"
	  "\"g\",\"request_id\":\"r\",\"risk\":\"LOW\",\"tool_call_id\":"
	  "\"t\",\"tool_name\":\"terminal\",\"zz\":{\"x\":[1]}}}", 1 },
	{ "confirmation.requested", "{\"request\":\"x\"}", 1 },
	{ "confirmation.requested", "{\"request\":null}", 1 },
	{ "confirmation.requested", "{\"request\":[{}]}", 1 },
	{ "confirmation.requested", "{}", 1 },
	{ "confirmation.requested", "{\"a\":{\"request\":{}},\"b\":1}", 1 },
	{ "confirmation.requested", "{\"request\":{\"password\":\"p\","
	  "\"risk\":\"x\"}}", 1 },
	{ "confirmation.requested", "{\"request\":{\"risk\":{\"a\":1}}}", 0 },
	{ "confirmation.requested", "{\"request\":{\"risk\":{\"password\":"
	  "\"p\"}}}", 0 },
	{ "confirmation.requested", "{\"request\":{\"risk\":[]}}", 0 },
	{ "model.usage.updated", "{\"usage\":{}}", 1 },
	{ "model.usage.updated", "{\"usage\":{\"accumulated_cost\":0,"
	  "\"cache_read_tokens\":1,\"cache_write_tokens\":2,\"call_count\":"
	  "3,\"completion_tokens\":4,\"context_window\":5,\"model_name\":"
	  "\"m\\\"x\",\"prompt_tokens\":6,\"reasoning_tokens\":null,"
	  "\"usage_id\":\"u\"}}", 1 },
	{ "model.usage.updated", "{\"usage\":5}", 1 },
	{ "model.usage.updated", "{\"usage\":[]}", 1 },
	{ "model.usage.updated", "{}", 1 },
	{ "model.usage.updated", "{\"usage\":{\"prompt_tokens\":[1]}}", 0 },
	{ "model.usage.updated", "{\"usage\":{\"prompt_tokens\":1.5}}", 0 },
	{ "model_call.decision.recorded", "{}", 1 },
	{ "model_call.decision.recorded", "{\"decision\":{\"decision\":"
	  "\"allow\",\"endpoint\":\"e\",\"extra\":true},\"model_profile\":"
	  "{\"action_confirmation_mode\":\"ask\",\"backend_id\":\"b\"},"
	  "\"x\":1}", 1 },
	{ "model_call.decision.recorded", "{\"decision\":\"x\","
	  "\"model_profile\":false}", 1 },
	{ "subagent.updated", "{}", 1 },
	{ "subagent.updated", "{\"subagent\":{\"agent_name\":\"a\","
	  "\"parent_action_id\":null,\"status\":\"done\",\"zz\":1}}", 1 },
	{ "policy.decision.recorded", "{}", 1 },
	{ "policy.decision.recorded", "{\"password\":\"p\",\"x\":[1]}", 1 },
	{ "approval.recorded", "{\"decision\":\"approved\",\"tool_call_ids\":"
	  "[\"a\"]}", 1 },
	{ "approval.recorded", "{\"command_id\":\"c\",\"decision\":\"denied\","
	  "\"group_id\":\"g\",\"tool_call_ids\":[]}", 1 },
	{ "approval.recorded", "{\"tool_call_ids\":[[1,[2]],{\"a\":[3]},"
	  "\"],\",4,null]}", 1 },
	{ "approval.recorded", "{\"tool_call_ids\":\"[a,b]\"}", 1 },
	{ "approval.recorded", "{\"tool_call_ids\":{\"a\":1}}", 1 },
	{ "approval.recorded", "{}", 1 },
	{ "approval.recorded", "{\"decision\":[\"approved\"]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[]}", 1 },
	{ "task.plan.updated", "{}", 1 },
	{ "task.plan.updated", "{\"tasks\":{\"status\":\"done\"}}", 1 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":\"done\",\"title\":"
	  "\"a\"},{\"status\":\"todo\"},{\"status\":\"done\"},{},1,"
	  "\"x\",[{\"status\":\"no\"}],{\"status\":\"unknown\"},"
	  "{\"status\":\"Done\"},{\"status\":\"\"}]}", 1 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":\"b\"},"
	  "{\"status\":\"a\"},{\"status\":\"ab\"},{\"status\":\"a b\"},"
	  "{\"status\":\"A\"},{\"status\":\"~\"}]}", 1 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":\"password\"}]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":3}]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":null}]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":\"a\\nb\"}]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":[\"x\"]}]}", 0 },
	{ "task.plan.updated", "{\"tasks\":[{\"status\":\"a\"},{\"status\":"
	  "\"b\"},{\"status\":\"c\"},{\"status\":\"d\"},{\"status\":\"e\"},"
	  "{\"status\":\"f\"},{\"status\":\"g\"},{\"status\":\"h\"},"
	  "{\"status\":\"i\"},{\"status\":\"j\"},{\"status\":\"k\"},"
	  "{\"status\":\"l\"},{\"status\":\"m\"},{\"status\":\"n\"},"
	  "{\"status\":\"o\"},{\"status\":\"p\"},{\"status\":\"q\"}]}", 0 },
	{ "error.recorded", "{\"reason\":\"r\"}", 0 },
	{ "no.such.kind", "{}", 0 },
};

/* envelopes: the line with one part changed, as text */
static void
envelopes(void)
{
	const char *base = line("agent_message.emitted", "{\"content\":\"x\"}",
	    "null");
	static const struct {
		const char *from, *to, *what;
		int fast;
	} e[] = {
		{ "null", HASH, "a hash before it", 1 },
		{ "null", "\"\"", "an empty string before it", 1 },
		{ "null", "\"abc\"", "a short string before it", 1 },
		{ "null", "\"sha256:\\n\"", "an escape before it", 1 },
		{ "null", "5", "a number before it", 0 },
		{ "null", "{}", "an object before it", 0 },
		{ "\"sequence\":3", "\"sequence\":4", "another sequence", 0 },
		{ "\"sequence\":3", "\"sequence\":\"3\"", "a string sequence", 0 },
		{ "\"sequence\":3", "\"sequence\":03", "a leading zero", 0 },
		{ "\"sequence\":3", "\"sequence\":3.0", "a float sequence", 0 },
		{ "\"session_id\":\"s1\"", "\"session_id\":\"s2\"",
		  "another session", 0 },
		{ "\"session_id\":\"s1\"", "\"session_id\":\"s\\u0031\"",
		  "an escaped session", 0 },
		{ "session-event.v1", "session-event.v0", "an older version", 0 },
		{ "\"event_id\":\"s1-event-000003\"", "\"event_id\":\"\"",
		  "an empty event_id", 0 },
		{ "\"event_id\":\"s1-event-000003\"", "\"event_id\":7",
		  "a number event_id", 0 },
		{ "\"occurred_at\":\"2026-01-01T00:00:00Z\"", "\"occurred_at\":"
		  "\"\"", "an empty time", 0 },
		{ "\"kind\":\"agent_message.emitted\"", "\"kind\":\"agent_message"
		  "\\u002eemitted\"", "an escaped kind", 0 },
		{ "\"payload\":{\"content\":\"x\"}", "\"payload\":[]",
		  "a list payload", 0 },
		{ ",\"session_id\":\"s1\"}", ",\"session_id\":\"s1\",\"zz\":1}",
		  "a ninth member", 0 },
		{ ",\"session_id\":\"s1\"}", "}", "no session_id", 0 },
		{ "{\"event_id\"", "{\"zz\":1,\"event_id\"", "keys out of order",
		  0 },
		{ "{\"event_id\"", " {\"event_id\"", "white space first", 0 },
	};
	char l[8300], *at;
	size_t i;

	same(base, 1, "the plain envelope");
	for (i = 0; i < sizeof e / sizeof *e; i++) {
		at = strstr(base, e[i].from);
		if (!at) {
			ok(0, "no '%s' in the line", e[i].from);
			continue;
		}
		snprintf(l, sizeof l, "%.*s%s%s", (int)(at - base), base,
		    e[i].to, at + strlen(e[i].from));
		same(l, e[i].fast, e[i].what);
	}
	same("[]", 0, "a list");
	same("", 0, "nothing");
	snprintf(l, sizeof l, "%s ", base);
	same(l, 0, "white space last");
}

/* deep: a payload nested n deep, past the parser's bound or not */
static void
deep(void)
{
	char p[1024], l[8192];
	int n, i, k;

	for (n = 120; n <= 130; n += 10) {
		k = 0;
		k += snprintf(p + k, sizeof p - k, "{\"content\":\"x\",\"d\":");
		for (i = 0; i < n; i++)
			p[k++] = '[';
		for (i = 0; i < n; i++)
			p[k++] = ']';
		snprintf(p + k, sizeof p - k, "}");
		snprintf(l, sizeof l, "%s", line("agent_message.emitted", p,
		    "null"));
		same(l, n + 2 <= JSON_MAX_DEPTH, n > 126 ? "nested past the "
		    "bound" : "nested within the bound");
	}
}

#define CA(t) json_canon_ascii((t), strlen(t))

/* canon: json_canon_ascii says yes only where json_parse_canon does */
static void
canon(void)
{
	static const char *const texts[] = { "{}", "[]", "0", "-1", "-0", "1.0",
		"\"a\"", "\"\\u00e9\"", "\"\\u00E9\"", "\"\\/\"", "{\"b\":1,"
		"\"a\":2}", "{\"a\":1,\"b\":2}", "[1,2,]", "{\"a\":}", "tru",
		"true", "null", "nul", "\"\\ud800\\udc00\"", "\"\\ud800\\uDC00\"",
		"\"\\x\"", "\"", "[", "{\"a\":1", "01", "[01]", "\"\\u12\"",
		"{\"a\\n\":1}", "\"\\u0020\"", "\"\\u001f\"", " 1", "1 ",
		"[\"\x01\"]", NULL };
	const char *const *t;
	char err[128];
	int c, bad = 0;

	for (t = texts; *t; t++) {
		arena_clear(&A);
		c = 0;
		if (json_canon_ascii(*t, strlen(*t)) && (!json_parse_canon(&A,
		    *t, strlen(*t), err, sizeof err, &c) || !c)) {
			printf("#   canonical to the scan only: %s\n", *t);
			bad++;
		}
	}
	ok(!bad, "json_canon_ascii: never canonical where the parser "
	    "says not");
	ok(CA("{\"a\":[1,{\"b\":\"\\u00e9\\n\"}],\"c\":null}") &&
	    CA("\"\\ud800\\udc00\"") && CA("[true,false,null,-12,\"\\\"\"]"),
	    "json_canon_ascii: canonical text is canonical");
}

/*
 * members: json_canon_members says what json_canon_ascii does, and notes
 * the top members and their objects' members, no deeper, with their text
 */
static void
members(void)
{
	static const char *const texts[] = { "{}", "[{\"a\":1}]", "{\"b\":1,"
		"\"a\":2}", "{\"a\":}", "1", "{\"a\":1", NULL };
	const char *t = "{\"a\":{\"x\":[{\"q\":1}],\"y\":{\"z\":2}},"
	    "\"b\":\"s\",\"c\":[{\"r\":3}]}";
	struct jtextmember m[8];
	char got[512];
	size_t nm, i, k = 0;
	int bad = 0;

	for (i = 0; texts[i]; i++)
		if (json_canon_members(texts[i], strlen(texts[i]), m, 8, &nm) !=
		    CA(texts[i]) || (!strcmp(texts[i], "[{\"a\":1}]") && nm))
			bad++;
	ok(!bad, "json_canon_members: canonical where json_canon_ascii says "
	    "so; an array's objects are not noted");
	ok(json_canon_members(t, strlen(t), m, 8, &nm) && nm == 5,
	    "json_canon_members: five members of depth 1 and 2");
	for (i = 0; i < nm && i < 8; i++)
		k += (size_t)snprintf(got + k, sizeof got - k, "%.*s=%.*s@%d;",
		    (int)m[i].kn, m[i].k, (int)m[i].vn, m[i].v, m[i].parent);
	is_str(got, "a={\"x\":[{\"q\":1}],\"y\":{\"z\":2}}@-1;x=[{\"q\":1}]@0;"
	    "y={\"z\":2}@0;b=\"s\"@-1;c=[{\"r\":3}]@-1;",
	    "json_canon_members: keys, values' text and parents");
	ok(!json_canon_members(t, strlen(t), m, 4, &nm),
	    "json_canon_members: more members than room is no");
}

int
main(void)
{
	size_t i;

	arena_init(&A);
	for (i = 0; i < sizeof payloads / sizeof *payloads; i++)
		same(line(payloads[i].kind, payloads[i].payload, "null"),
		    payloads[i].fast, payloads[i].payload);
	envelopes();
	deep();
	canon();
	members();
	arena_release(&A);
	return tap_done();
}
