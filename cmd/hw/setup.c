/* setup.c - hw setup: choose the model route and save it, never a key */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "setup.h"

struct source {
	const char *name, *about, *url, *key_env, *model_id;
	int provider;		/* ROUTE_OPENAI, ROUTE_ANTHROPIC or
				   ROUTE_SUBSCRIPTION */
};

static const struct source sources[] = {
	{ "heartwood", "the managed local runtime, no key",
	    "http://127.0.0.1:8765/v1", NULL, "heartwood-managed-model" },
	{ "openai", "OpenAI's API", "https://api.openai.com/v1",
	    "OPENAI_API_KEY", NULL },
	{ "anthropic", "Anthropic's OpenAI-compatible API",
	    "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", NULL },
	{ "anthropic-messages", "Anthropic's own Messages API",
	    "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY", NULL,
	    ROUTE_ANTHROPIC },
	{ "openai-subscription", "Sign in with ChatGPT: the Responses API",
	    SUB_BASE_URL, NULL, NULL, ROUTE_SUBSCRIPTION },
	{ "custom", "any OpenAI-compatible endpoint: give its base URL",
	    NULL, NULL, NULL },
};
#define NSOURCES (sizeof sources / sizeof sources[0])

static const char *const what[3] = { "--model-id", "--base-url",
	"--api-key-env" };

/* the chosen route; strings are malloc'd */
struct choice {
	const struct source *src;
	char *model_id, *base_url, *key_env;
};

int
setup_key_like(const char *s)
{
	static const char *const pre[] = { "sk-", "sk_", "pk-", "rk-",
		"xai-", "gsk_", "hf_", "ghp_", "gho_", "github_pat_",
		"glpat-", "AIza", "Bearer ", "bearer ", NULL };
	size_t n = strlen(s), hex = strspn(s, "0123456789abcdefABCDEF");
	int lower = 0, upper = 0, digit = 0;

	for (size_t i = 0; pre[i]; i++)
		if (!strncmp(s, pre[i], strlen(pre[i])))
			return 1;
	if (n < 32)
		return 0;
	if (hex == n)
		return 1;
	for (const char *p = s; *p; p++) {
		lower |= *p >= 'a' && *p <= 'z';
		upper |= *p >= 'A' && *p <= 'Z';
		digit |= *p >= '0' && *p <= '9';
		if (!(*p >= 'a' && *p <= 'z') && !(*p >= 'A' && *p <= 'Z') &&
		    !(*p >= '0' && *p <= '9'))
			return 0;
	}
	return lower && upper && digit;
}

static int
refuse_key(void)
{
	return hw_err_set(HW_EXIT_USAGE, "that looks like a key: hw setup "
	    "never takes one, only the name of the variable that holds it "
	    "(--api-key-env NAME)");
}

static const struct source *
find_source(const char *name)
{
	for (size_t i = 0; i < NSOURCES; i++)
		if (!strcmp(sources[i].name, name))
			return &sources[i];
	return NULL;
}

static int
bad_source(const char *name)
{
	if (setup_key_like(name))
		return refuse_key();
	return hw_err_set(HW_EXIT_USAGE, "unknown model source '%s': want "
	    "heartwood, openai, anthropic, anthropic-messages, "
	    "openai-subscription or custom", name);
}

/* allowed: the key variable is on the credential allowlist */
static int
allowed(const char *k)
{
	int ok;

	if (!k || (ok = credential_allowed(k)) > 0)
		return 0;
	if (ok < 0)
		return -1;
	return hw_err_set(HW_EXIT_USAGE, "'%s' is not on the credential "
	    "allowlist (%s): add it to [credentials] allowlist in your own "
	    "heartwood/config.toml (under $XDG_CONFIG_HOME or ~/.config) to "
	    "read a key from it", k, credential_builtin_allowlist());
}

/* check checks value v of field k (0 model id, 1 URL, 2 key name) alone */
static int
check(int k, const char *v)
{
	struct model_route r;
	const char *t[3] = { "m", "http://127.0.0.1", NULL };

	if (setup_key_like(v))
		return refuse_key();
	t[k] = v;
	if (model_route_set(&r, t[0], t[1], t[2], what, 0) < 0)
		return -1;
	model_route_release(&r);
	return k == 2 ? allowed(v) : 0;
}

/*
 * bare_id drops the provider prefix of an id given in LiteLLM form
 * (openai/ID is ID: the route adds the source's provider itself, so
 * anthropic/ID is ID for anthropic-messages); -1 when nothing is left
 */
static int
bare_id(char *id, const struct source *src)
{
	const char *pre = src->provider == ROUTE_ANTHROPIC ? "anthropic/" :
	    src->provider == ROUTE_SUBSCRIPTION ? "chatgpt/" : "openai/";
	size_t n = strlen(pre);

	if (strncmp(id, pre, n))
		return 0;
	if (!id[n])
		return hw_err_set(HW_EXIT_USAGE, "invalid model id '%s': the "
		    "name after %s is empty", id, pre);
	memmove(id, id + n, strlen(id + n) + 1);
	return 0;
}

/* flags checks what was given on the command line */
static int
flags(const struct setup_opts *o)
{
	const char *v[3] = { o->model_id, o->base_url, o->key_env };
	const struct source *s = NULL;

	if (o->non_interactive && (!o->source || !o->model_id || !o->yes))
		return hw_err_set(HW_EXIT_USAGE, "setup --non-interactive "
		    "needs --model-source, --model-id and --yes");
	if (!o->non_interactive && !isatty(0))
		return hw_err_set(HW_EXIT_USAGE, "setup asks its questions "
		    "on a terminal; in a script use --non-interactive --yes "
		    "--model-source SOURCE --model-id ID");
	if (o->source && !(s = find_source(o->source)))
		return bad_source(o->source);
	for (int k = 0; k < 3; k++)
		if (v[k] && check(k, v[k]) < 0)
			return -1;
	if (o->port && managed_port(o->port) < 0)
		return -1;
	if (s && s->url && o->base_url)
		return hw_err_set(HW_EXIT_USAGE, "--base-url applies only to "
		    "--model-source custom");
	if (s && s->provider == ROUTE_SUBSCRIPTION && o->key_env)
		return hw_err_set(HW_EXIT_USAGE, "--model-source "
		    "openai-subscription signs in with ChatGPT and takes no "
		    "--api-key-env");
	if (s && !s->url && !o->base_url && o->non_interactive)
		return hw_err_set(HW_EXIT_USAGE, "--model-source custom needs "
		    "--base-url");
	return 0;
}

/* ask prompts on stderr and reads a line: NULL at the end of input */
static char *
ask(const char *prompt, const char *dflt)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (dflt)
		fprintf(stderr, "%s [%s]: ", prompt, dflt);
	else
		fprintf(stderr, "%s: ", prompt);
	fflush(stderr);
	if ((n = getline(&line, &cap, stdin)) < 0) {
		free(line);
		fputc('\n', stderr);
		return NULL;
	}
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' ||
	    line[n - 1] == ' ' || line[n - 1] == '\t'))
		line[--n] = '\0';
	if (!*line && dflt) {
		free(line);
		return xstrdup(dflt);
	}
	return line;
}

static int
cancelled(void)
{
	return hw_err_set(HW_EXIT_FAIL, "setup cancelled; nothing was saved");
}

static int
ask_source(struct choice *c)
{
	char *a;

	fputs("Model sources:\n", stderr);
	for (size_t i = 0; i < NSOURCES; i++)
		fprintf(stderr, "  %zu) %-10s %s%s%s\n", i + 1,
		    sources[i].name, sources[i].about,
		    sources[i].url ? ", " : "",
		    sources[i].url ? sources[i].url : "");
	while (!c->src) {
		if (!(a = ask("Model source (1-6 or a name)", NULL)))
			return cancelled();
		if (*a >= '1' && *a <= '0' + (int)NSOURCES && !a[1])
			c->src = &sources[*a - '1'];
		else if (!(c->src = find_source(a)) && bad_source(a) < 0)
			fprintf(stderr, "hw: %s\n", hw_err_msg());
		free(a);
	}
	return 0;
}

/* ask_field asks for field k until it is valid or may stay empty */
static int
ask_field(int k, const char *prompt, const char *dflt, int empty_ok,
    char **out)
{
	char *a;

	for (;;) {
		if (!(a = ask(prompt, dflt)))
			return cancelled();
		if (!*a && empty_ok) {
			free(a);
			return 0;
		}
		if (*a && check(k, a) == 0) {
			*out = a;
			return 0;
		}
		fprintf(stderr, "hw: %s\n", *a ? hw_err_msg() :
		    "an answer is needed");
		free(a);
	}
}

/* show: hw-model recommend's choice for this machine and the catalog */
static const char *
show(const struct jval *rec)
{
	const struct jval *w = json_get(rec, "recommended");
	const struct jval *cs = json_get(rec, "choices");
	const char *id = w && w->t == J_OBJECT ?
	    json_get_str(w, "model_id") : NULL;

	fputs("Managed models (hw-model catalog):\n", stderr);
	for (size_t i = 0; cs && cs->t == J_ARRAY && i < cs->n; i++) {
		const char *why = json_get_str(cs->u.a[i], "reason");
		int64_t ctx = 0;

		json_get_int(cs->u.a[i], "context_window", &ctx);
		fprintf(stderr, "  %-44s context %lld%s%s\n",
		    json_get_str(cs->u.a[i], "model_id"), (long long)ctx,
		    why ? ": " : "", why ? why : "");
	}
	if (id)
		fprintf(stderr, "Recommended here: %s\n", id);
	else
		fputs("None is recommended on this machine: name one, or a "
		    "model already in .heartwood/models.\n", stderr);
	return id;
}

/* ask_managed asks for the managed model, the recommended one first */
static int
ask_managed(struct choice *c)
{
	struct arena a;
	const struct jval *rec;
	char *v;
	int rc = -1;

	arena_init(&a);
	if (!(rec = managed_recommend(&a)))
		goto out;
	v = (char *)show(rec);
	for (;;) {
		char *ans = ask("Managed model id", v);

		if (!ans) {
			rc = cancelled();
			break;
		}
		if (*ans && managed_id_ok(ans) == 0) {
			c->model_id = ans;
			rc = 0;
			break;
		}
		fprintf(stderr, "hw: %s\n", *ans ? hw_err_msg() :
		    "an answer is needed");
		free(ans);
	}
out:
	arena_release(&a);
	return rc;
}

static int
ask_all(const struct setup_opts *o, struct choice *c)
{
	const char *kd;

	if (!c->src && ask_source(c) < 0)
		return -1;
	if (!c->model_id && !strcmp(c->src->name, "heartwood"))
		return ask_managed(c);
	if (!c->model_id && ask_field(0, "Model id", c->src->model_id, 0,
	    &c->model_id) < 0)
		return -1;
	if (!c->src->url && !c->base_url && ask_field(1, "Base URL "
	    "(http or https, such as http://127.0.0.1:8000/v1)", NULL, 0,
	    &c->base_url) < 0)
		return -1;
	if (o->key_env || !strcmp(c->src->name, "heartwood") ||
	    c->src->provider == ROUTE_SUBSCRIPTION)
		return 0;
	kd = c->src->key_env;
	return ask_field(2, kd ? "Name of the variable that holds the key" :
	    "Name of the variable that holds the key (Enter for none)", kd,
	    1, &c->key_env);
}

int
setup_yes(const char *question)
{
	char *a;
	int yes;

	if (!(a = ask(question, NULL)))
		return cancelled();
	yes = !strcasecmp(a, "y") || !strcasecmp(a, "yes");
	free(a);
	return yes ? 0 : cancelled();
}

static int
confirm(const struct model_route *r)
{
	fprintf(stderr, "Save model %s at %s", r->model, r->base_url);
	if (r->provider == ROUTE_SUBSCRIPTION)
		fputs(", signed in with ChatGPT,", stderr);
	if (r->key_env)
		fprintf(stderr, ", the key read from $%s,", r->key_env);
	fprintf(stderr, " to %s?", CONFIG_FILE);
	return setup_yes(" [y/N]");
}

static int
print_route(const struct choice *c, const struct model_route *r)
{
	struct arena a;
	struct jval *o;
	struct buf b;
	int rc = 0;

	arena_init(&a);
	buf_init(&b);
	o = json_obj(&a);
	json_add(&a, o, "api_key_env", r->key_env ? json_str(&a, r->key_env) :
	    json_new(&a, J_NULL));
	json_add(&a, o, "base_url", json_str(&a, r->base_url));
	json_add(&a, o, "model", json_str(&a, r->model));
	json_add(&a, o, "model_id", json_str(&a, c->model_id));
	json_add(&a, o, "source", json_str(&a, c->src->name));
	json_canon(&b, o);
	buf_addc(&b, '\n');
	if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		rc = hw_err_sys("cannot write 'stdout'");
	buf_release(&b);
	arena_release(&a);
	return rc;
}

/*
 * signed_in: the ChatGPT sign-in the subscription route needs: kept when
 * there is one; otherwise the device flow, which only a person at a
 * terminal can complete (so never under --non-interactive)
 */
static int
signed_in(const struct setup_opts *o)
{
	struct sub_device d;
	struct sub_tokens t;
	struct buf b;
	int rc;

	if (sub_tokens_load(&t) == 0) {
		sub_tokens_release(&t);
		return 0;
	}
	if (hw_err_code() != HW_EXIT_NOINPUT)
		return -1;
	if (o->non_interactive)
		return hw_err_set(HW_EXIT_USAGE, "the first setup of "
		    "openai-subscription is interactive: run 'hw setup' on a "
		    "terminal, or 'hw-model subscription sign-in' first");
	if (sub_tokens_writable() < 0 || sub_device_start(&d) < 0)
		return -1;
	buf_init(&b);
	buf_printf(&b, "To sign in with ChatGPT, open %s\nand enter the "
	    "code %s.\n", d.verification_uri, d.user_code);
	tty_put(stderr, b.p, b.len, 1);
	buf_release(&b);
	rc = sub_device_wait(&d, &t);
	sub_device_release(&d);
	if (rc < 0)
		return -1;
	rc = sub_tokens_save(&t);
	sub_tokens_release(&t);
	if (rc == 0)
		fputs("hw: signed in with ChatGPT\n", stderr);
	return rc;
}

/* save creates the store if needed and writes the route */
static int
save(const struct choice *c, const struct model_route *r)
{
	struct project p = { 0 };
	char fp[HW_HASH_LEN + 1];
	int rc = project_open(&p, 1);

	project_release(&p);
	route_fingerprint(r, fp);
	/* confirmed by this user here first, then saved in the project */
	if (rc < 0 || trust_confirm("model_route", fp) < 0 ||
	    config_set_route(c->src->name, route_provider(r), c->model_id,
	    r->base_url, r->key_env) < 0)
		return -1;
	/*
	 * a custom API (and Anthropic's compatibility URL, which the
	 * default policy does not list) gets the custom-api policy
	 */
	if ((!strcmp(c->src->name, "custom") ||
	    !strcmp(c->src->name, "anthropic")) && policy_custom_api(r) < 0)
		return -1;
	if (r->key_env && (!getenv(r->key_env) || !*getenv(r->key_env)))
		fprintf(stderr, "hw: warning: $%s is not set here; the agent "
		    "needs it when it runs\n", r->key_env);
	if ((getenv("HW_MODEL") && *getenv("HW_MODEL")) ||
	    (getenv("HW_BASE_URL") && *getenv("HW_BASE_URL")))
		fprintf(stderr, "hw: warning: HW_MODEL or HW_BASE_URL is set "
		    "and wins over the saved route\n");
	return print_route(c, r);
}

/* run_route saves the route of a hosted or compatible service */
static int
run_route(const struct setup_opts *o, struct choice *c)
{
	struct model_route r = { 0 };
	int rc = -1;

	if (bare_id(c->model_id, c->src) < 0)
		goto out;
	if (!c->key_env && c->src->key_env)
		c->key_env = xstrdup(c->src->key_env);
	if (c->src->provider == ROUTE_SUBSCRIPTION) {
		if (route_subscription_set(&r, c->model_id, c->src->url,
		    what) < 0 || signed_in(o) < 0)
			goto out;
	} else if (model_route_set(&r, c->model_id, c->src->url ?
	    c->src->url : c->base_url, c->key_env, what, 0) < 0 ||
	    allowed(r.key_env) < 0 ||
	    route_set_provider(&r, c->src->provider) < 0)
		goto out;
	if (!o->yes && confirm(&r) < 0)
		goto out;
	rc = save(c, &r);
out:
	model_route_release(&r);
	return rc;
}

/*
 * run_managed: the managed model downloaded when it is not there yet
 * (with consent), the route confirmed, hw-model select, and the way to
 * start it told
 */
static int
run_managed(const struct setup_opts *o, struct choice *c)
{
	struct model_route r = { 0 };
	char *url = xasprintf("http://127.0.0.1:%s/v1", o->port ? o->port :
	    "8765");
	int rc = -1;

	if (managed_fetch(o, c->model_id) < 0 ||
	    model_route_set(&r, c->src->model_id, url, NULL, what, 0) < 0)
		goto out;
	if (!o->yes && confirm(&r) < 0)
		goto out;
	if (managed_select(c->model_id, o->port) < 0)
		goto out;
	rc = print_route(c, &r);
	fprintf(stderr, "hw: managed model %s selected; start it with: "
	    "hw-model run\n", c->model_id);
out:
	model_route_release(&r);
	free(url);
	return rc;
}

int
setup_run(const struct setup_opts *o)
{
	struct choice c = { 0 };
	int rc = -1, managed;

	if (flags(o) < 0)
		return -1;
	c.src = o->source ? find_source(o->source) : NULL;
	c.model_id = o->model_id ? xstrdup(o->model_id) : NULL;
	c.base_url = o->base_url ? xstrdup(o->base_url) : NULL;
	c.key_env = o->key_env ? xstrdup(o->key_env) : NULL;
	if (!o->non_interactive && ask_all(o, &c) < 0)
		goto out;
	managed = !strcmp(c.src->name, "heartwood");
	if (!managed && (o->yes_download || o->port)) {
		rc = hw_err_set(HW_EXIT_USAGE, "--yes-download and --port "
		    "apply only to --model-source heartwood");
		goto out;
	}
	if (managed)
		rc = run_managed(o, &c);
	else
		rc = run_route(o, &c);
out:
	free(c.model_id);
	free(c.base_url);
	free(c.key_env);
	return rc;
}
