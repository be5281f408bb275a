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
 * heartwood (the managed runtime, http://127.0.0.1:8765/v1, no key),
 * openai and anthropic (their OpenAI-compatible APIs, keys in
 * $OPENAI_API_KEY and $ANTHROPIC_API_KEY unless key_env names another),
 * anthropic-messages (Anthropic's own Messages API, provider anthropic,
 * the key as for anthropic), custom (base_url required, key optional).  A key is never taken: a
 * value that looks like one is refused without being shown.  Returns 0,
 * -1 with the error (code 2 for a bad choice, 1 when cancelled).
 */
struct setup_opts {
	const char *source, *model_id, *base_url, *key_env;
	int non_interactive, yes;
};
int setup_run(const struct setup_opts *o);
/* setup_key_like: s looks like a secret (sk-..., a long random word) */
int setup_key_like(const char *s);

/* ---- hw policy, hw platform (policy.c) ---- */

/* wf_policy: hw policy ARGS; wf_platform: hw platform ARGS */
int wf_policy(int n, char **av);
int wf_platform(int n, char **av);

#endif
