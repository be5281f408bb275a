/*
 * hw setup
 */
#ifndef HW_SETUP_H
#define HW_SETUP_H

#include "client/client.h"

/* ---- hw setup (setup.c) ---- */

/*
 * setup_run chooses the model route and saves it with config_set_route
 * (creating the store), then prints it as one JSON line on stdout.
 * NULL fields are asked for on the terminal (stdin must be one) unless
 * non_interactive, which needs source, model_id and yes.  Sources:
 * heartwood (a managed model, managed.c: downloaded when missing and
 * yes_download or the terminal allows it, then hw-model select ID, which
 * saves the route to http://127.0.0.1:PORT/v1, 8765 unless port, no key),
 * openai and anthropic (their OpenAI-compatible APIs, keys in
 * $OPENAI_API_KEY and $ANTHROPIC_API_KEY unless key_env names another),
 * anthropic-messages (Anthropic's own Messages API, provider anthropic,
 * the key as for anthropic), custom (base_url required, key optional).  A key is never taken: a
 * value that looks like one is refused without being shown.  Returns 0,
 * -1 with the error (code 2 for a bad choice, 1 when cancelled).
 */
struct setup_opts {
	const char *source, *model_id, *base_url, *key_env;
	const char *port;	/* the managed runtime's, heartwood only */
	int non_interactive, yes, yes_download;
};
int setup_run(const struct setup_opts *o);
/* setup_key_like: s looks like a secret (sk-..., a long random word) */
int setup_key_like(const char *s);
/* setup_yes asks question on the terminal: 0 for y or yes, else -1 (1) */
int setup_yes(const char *question);

/* ---- hw setup --model-source heartwood (managed.c) ---- */

/*
 * The heartwood source goes through hw-model's verbs: managed_recommend
 * runs hw-model recommend --json (its answer parsed in a); managed_choice
 * is its choice id, or NULL; managed_fetch downloads id by its catalog id
 * (hw-model download ID) unless .heartwood/models/ID is there, after
 * --yes-download or a [y/N] on the terminal (declined: 1; refused
 * without asking under --non-interactive: 1), refusing an id the catalog
 * does not list (66) and a context window under 18432 (64) before any
 * download; managed_select runs hw-model select ID [--port PORT].  A
 * program that fails has printed why: its status is the error's code.
 * managed_id_ok: 0 for [a-z0-9._-], at most 128, no "..", no leading . or
 * -, else 2.  managed_port: 0 for 1 to 65535, else 2.
 */
struct jval *managed_recommend(struct arena *a);
const struct jval *managed_choice(const struct jval *rec, const char *id);
int managed_fetch(const struct setup_opts *o, const char *id);
int managed_select(const char *id, const char *port);
int managed_id_ok(const char *id);
int managed_port(const char *port);

/* ---- hw policy, hw platform (policy.c) ---- */

/* wf_policy: hw policy ARGS; wf_platform: hw platform ARGS */
int wf_policy(int n, char **av);
int wf_platform(int n, char **av);

#endif
