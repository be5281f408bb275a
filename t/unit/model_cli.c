/*
 * model_cli - the model client (model.c) from the command line, for
 * t/0510-model-client.bats; with no arguments, the TAP unit tests of
 * model_route_from_env.
 *
 *   model_cli --route
 *	prints the route the environment describes, as JSON
 *   model_cli [--retries N] --complete MESSAGES.json [TOOLS.json]
 *	calls model_complete on that route (with N retries instead of the
 *	route's, to test a remote route's count on loopback) and prints
 *	one line, {"deltas":N,"reply":REPLY} or {"code":"HW-AGENT-0NN"},
 *	the error going to stderr as "model_cli: SENTENCE"
 */
#include <stdlib.h>

#include "agent/agent.h"
#include "tap.h"

#define PROG "model_cli"

/* ---- the unit tests ---- */

static const char *const vars[] = {
	"HW_MODEL", "HW_BASE_URL", "HW_API_KEY_ENV", "HW_MAX_INPUT_TOKENS",
	"HW_MAX_OUTPUT_TOKENS", NULL
};

/* env sets the five variables (NULL unsets) */
static void
env(const char *model, const char *url, const char *key_env,
    const char *in, const char *out)
{
	const char *v[] = { model, url, key_env, in, out };
	int i;

	for (i = 0; vars[i]; i++)
		if (v[i])
			setenv(vars[i], v[i], 1);
		else
			unsetenv(vars[i]);
}

#define URL "http://127.0.0.1:8000/v1"

/* refused: the route is refused with code 2 and message msg */
static void
refused(const char *what, const char *msg)
{
	struct model_route r;

	ok(model_route_from_env(&r) == -1 && hw_err_code() == HW_EXIT_USAGE,
	    "%s: refused with code 2", what);
	is_str(hw_err_msg(), msg, "%s: message", what);
	ok(!r.model && !r.base_url && !r.key_env, "%s: nothing kept", what);
}

static void
route_refusals(void)
{
	env(NULL, URL, NULL, NULL, NULL);
	refused("no HW_MODEL", "HW_MODEL is not set");
	env("gpt-4o", URL, NULL, NULL, NULL);
	refused("no provider", "invalid HW_MODEL 'gpt-4o': expected "
	    "openai/NAME, anthropic/NAME or chatgpt/NAME");
	env("openai/", URL, NULL, NULL, NULL);
	refused("an empty name", "invalid HW_MODEL 'openai/': expected "
	    "openai/NAME, anthropic/NAME or chatgpt/NAME");
	env("anthropic/", URL, NULL, NULL, NULL);
	refused("an empty anthropic name", "invalid HW_MODEL 'anthropic/': "
	    "expected openai/NAME, anthropic/NAME or chatgpt/NAME");
	env("openai/a b", URL, NULL, NULL, NULL);
	refused("a space", "invalid HW_MODEL 'openai/a b': expected "
	    "openai/NAME, anthropic/NAME or chatgpt/NAME");
	env("openai/m", NULL, NULL, NULL, NULL);
	refused("no HW_BASE_URL", "HW_BASE_URL is not set");
	env("openai/m", "ftp://127.0.0.1/v1", NULL, NULL, NULL);
	refused("ftp", "invalid HW_BASE_URL: it must be an http or https URL");
	env("openai/m", "https://user:sk-MARKER@api.example.com/v1", NULL, NULL,
	    NULL);
	refused("user information", "invalid HW_BASE_URL: it must not contain "
	    "user information");
	env("openai/m", "https://api.example.com/v1?key=sk-MARKER", NULL, NULL,
	    NULL);
	refused("a query", "invalid HW_BASE_URL: it must not have a query or "
	    "a fragment");
	env("openai/m", "https://api.example.com/v1#x", NULL, NULL, NULL);
	refused("a fragment", "invalid HW_BASE_URL: it must not have a query "
	    "or a fragment");
	env("openai/m", "http://127.0.0.1:99999/v1", NULL, NULL, NULL);
	refused("a bad port", "invalid HW_BASE_URL: the port is invalid");
	env("openai/m", "http:///v1", NULL, NULL, NULL);
	refused("no host", "invalid HW_BASE_URL: the host is missing or too "
	    "long");
	env("openai/m", "http://[::1/v1", NULL, NULL, NULL);
	refused("an unclosed bracket", "invalid HW_BASE_URL: the host has an "
	    "unclosed '['");
}

static void
key_refusals(void)
{
	env("openai/m", URL, "1KEY", NULL, NULL);
	refused("a key name with a leading digit", "invalid HW_API_KEY_ENV: "
	    "expected a variable name matching [A-Za-z_][A-Za-z0-9_]*");
	env("openai/m", URL, "MY-KEY", NULL, NULL);
	refused("a key name with a dash", "invalid HW_API_KEY_ENV: expected a "
	    "variable name matching [A-Za-z_][A-Za-z0-9_]*");
	unsetenv("HW_TEST_KEY");
	env("openai/m", URL, "HW_TEST_KEY", NULL, NULL);
	refused("an unset key", "invalid HW_API_KEY_ENV 'HW_TEST_KEY': that "
	    "variable is not set or is empty");
	setenv("HW_TEST_KEY", "", 1);
	refused("an empty key", "invalid HW_API_KEY_ENV 'HW_TEST_KEY': that "
	    "variable is not set or is empty");
	env("openai/m", "http://10.0.0.1:8000/v1", NULL, NULL, NULL);
	refused("a remote route without a key", "a route without a key "
	    "(credential class none) must use a loopback endpoint: give the "
	    "key's variable (HW_API_KEY_ENV) or file (HW_API_KEY_FILE)");
	env("openai/m", URL, NULL, "many", NULL);
	refused("input tokens", "invalid HW_MAX_INPUT_TOKENS: expected a "
	    "decimal integer from 0 to 1000000000");
	env("openai/m", URL, NULL, NULL, "-5");
	refused("output tokens", "invalid HW_MAX_OUTPUT_TOKENS: expected a "
	    "decimal integer from 0 to 1000000000");
	env("openai/m", URL, NULL, NULL, "1000000001");
	refused("too many output tokens", "invalid HW_MAX_OUTPUT_TOKENS: "
	    "expected a decimal integer from 0 to 1000000000");
}

/* accepted: the route r the environment gives, checked by the caller */
static int
accepted(const char *what, struct model_route *r)
{
	int rc = model_route_from_env(r);

	ok(rc == 0, "%s: accepted%s%s", what, rc ? ": " : "", rc ?
	    hw_err_msg() : "");
	return rc;
}

static void
route_accepted(void)
{
	struct model_route r;

	env("openai/Qwen/Qwen3-8B", "http://127.0.0.1:8000/v1/", NULL, "32768",
	    "4096");
	if (accepted("loopback", &r) == 0) {
		is_str(r.base_url, URL, "loopback: trailing '/' dropped");
		ok(r.loopback && r.timeout_s == 600 && r.retries == 1 &&
		    !r.key_env, "loopback: 600 s, 1 retry, credential-free");
		ok(r.max_input_tokens == 32768 && r.max_output_tokens == 4096,
		    "loopback: budgets");
		model_route_release(&r);
	}
	setenv("HW_TEST_KEY", "sk-MARKER-123", 1);
	env("openai/gpt-4o", "https://API.example.com", "HW_TEST_KEY", NULL,
	    NULL);
	if (accepted("remote", &r) == 0) {
		ok(!r.loopback && r.timeout_s == 180 && r.retries == 2,
		    "remote: 180 s, 2 retries");
		is_str(r.key_env, "HW_TEST_KEY", "remote: the key's name, not "
		    "its value");
		ok(r.max_input_tokens == 0 && r.max_output_tokens == 0,
		    "remote: no budgets");
		model_route_release(&r);
	}
	env("openai/m", "http://[::1]:8080/v1", NULL, NULL, NULL);
	if (accepted("[::1]", &r) == 0)
		ok(r.loopback, "[::1] is loopback");
	model_route_release(&r);
	env("openai/m", "http://LocalHost/v1", NULL, NULL, NULL);
	if (accepted("localhost", &r) == 0)
		ok(r.loopback, "localhost is loopback");
	model_route_release(&r);
	env("openai/m", "http://127.1.2.3:1/v1", NULL, NULL, NULL);
	if (accepted("127.1.2.3", &r) == 0)
		ok(r.loopback, "127.0.0.0/8 is loopback");
	model_route_release(&r);
	env("openai/m", "http://10.0.0.1:8000/v1", "HW_TEST_KEY", NULL, NULL);
	if (accepted("10.0.0.1", &r) == 0)
		ok(!r.loopback && r.retries == 2, "10.0.0.1 is not loopback");
	model_route_release(&r);
}

static void
codes(void)
{
	const char *c[] = { MODEL_AUTH, MODEL_QUOTA, MODEL_RATE, MODEL_CONFIG,
		MODEL_TRANSIENT };
	int i, j, distinct = 1;

	for (i = 0; i < 5; i++)
		for (j = 0; j < i; j++)
			if (!strcmp(model_code_message(c[i]),
			    model_code_message(c[j])))
				distinct = 0;
	ok(distinct, "each code has its own sentence");
	is_str(model_code_message("HW-AGENT-999"), "the model call failed",
	    "an unknown code has a sentence too");
}

static int
unit(void)
{
	route_refusals();
	key_refusals();
	route_accepted();
	codes();
	return tap_done();
}

/* ---- the command ---- */

static void
route_json(const struct model_route *r)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "{\"base_url\":");
	json_canon_str(&b, r->base_url, strlen(r->base_url));
	buf_adds(&b, ",\"key_env\":");
	if (r->key_env)
		json_canon_str(&b, r->key_env, strlen(r->key_env));
	else
		buf_adds(&b, "null");
	buf_printf(&b, ",\"loopback\":%s,\"max_input_tokens\":%lld,"
	    "\"max_output_tokens\":%lld,\"model\":", r->loopback ? "true" :
	    "false", (long long)r->max_input_tokens,
	    (long long)r->max_output_tokens);
	json_canon_str(&b, r->model, strlen(r->model));
	buf_printf(&b, ",\"retries\":%d,\"timeout_s\":%ld}\n", r->retries,
	    r->timeout_s);
	fwrite(b.p, 1, b.len, stdout);
	buf_release(&b);
}

static void
count(void *ctx, const char *s, size_t n)
{
	(void)s;
	(void)n;
	++*(size_t *)ctx;
}

static int
complete(const struct model_route *r, const char *mpath, const char *tpath)
{
	struct jval *messages, *tools = NULL;
	struct model_reply m;
	struct arena a;
	struct buf b;
	const char *code = NULL;
	size_t deltas = 0;
	char err[128];
	int rc;

	arena_init(&a);
	buf_init(&b);
	model_reply_init(&m);
	if (read_file(mpath, 1 << 24, &b) < 0 || !(messages = json_parse(&a,
	    b.p, b.len, err, sizeof err)) || (tpath && (read_file(tpath,
	    1 << 24, &b) < 0 || !(tools = json_parse(&a, b.p, b.len, err,
	    sizeof err))))) {
		fprintf(stderr, PROG ": cannot read the input\n");
		return HW_EXIT_NOINPUT;
	}
	rc = model_complete(r, messages, tools, &m, count, &deltas, &code);
	buf_clear(&b);
	if (rc == 0) {
		buf_printf(&b, "{\"deltas\":%zu,\"reply\":", deltas);
		model_reply_json(&b, &m);
		buf_adds(&b, "}\n");
	} else
		buf_printf(&b, "{\"code\":\"%s\"}\n", code);
	fwrite(b.p, 1, b.len, stdout);
	rc = rc ? prog_fail(PROG) : 0;
	model_reply_release(&m);
	buf_release(&b);
	arena_release(&a);
	return rc;
}

int
main(int argc, char **argv)
{
	struct model_route r;
	int rc;

	if (argc == 1)
		return unit();
	if (model_route_from_env(&r) < 0)
		return prog_fail(PROG);
	if (argc > 2 && !strcmp(argv[1], "--retries")) {
		r.retries = atoi(argv[2]);
		argc -= 2;
		argv += 2;
	}
	if (argc == 2 && !strcmp(argv[1], "--route")) {
		route_json(&r);
		rc = 0;
	} else if ((argc == 3 || argc == 4) && !strcmp(argv[1],
	    "--complete"))
		rc = complete(&r, argv[2], argc == 4 ? argv[3] : NULL);
	else {
		fprintf(stderr, "usage: " PROG " [--retries N] [--route | "
		    "--complete MESSAGES [TOOLS]]\n");
		rc = HW_EXIT_USAGE;
	}
	model_route_release(&r);
	return prog_finish(PROG, rc);
}
