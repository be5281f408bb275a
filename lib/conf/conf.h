/*
 * conf - what the project and this user configured: the project's
 * config.toml, and the per-user trust state (decision bindings, route
 * confirmations, credential allowlists) kept outside the project.
 */
#ifndef HW_CONF_H
#define HW_CONF_H

#include "store/store.h"

/* ---- the project configuration (config.c) ---- */

/*
 * config_load parses .heartwood/config.toml into *cfg (NULL when there is
 * none); config_mode is its action review mode, "always-confirm" (the
 * default) or "confirm-risky" (only when this user chose it here: see
 * config_mode_unconfirmed); config_set_mode rewrites the file with the
 * mode under .heartwood/.config.lock, keeping what else it holds.
 */
#define CONFIG_FILE ".heartwood/config.toml"
int config_load(struct arena *a, struct jval **cfg);
const char *config_mode(const struct jval *cfg);
/*
 * config_mode_unconfirmed: cfg asks for confirm-risky, which this user
 * has not chosen here (hw-agent mode, heartwood actions set), so that
 * config_mode is "always-confirm" (hw-store(5) TRUST)
 */
int config_mode_unconfirmed(const struct jval *cfg);
int config_set_mode(const char *mode);
/*
 * config_set_route replaces the [model] table (heartwood.model-route.v1)
 * with source, model_id, base_url and api_key_env (omitted when key_env
 * is NULL), checked by the caller, the same way and under the same lock
 * as config_set_mode; the store must exist.  model_route_from_env reads
 * the table back when the environment names no route.
 */
int config_set_route(const char *source, const char *model_id,
    const char *base_url, const char *key_env);
/*
 * config_signer_profile is cfg's [audit] signer_profile, the signer
 * profile the project selected (hw-audit signer select), or NULL;
 * config_set_signer_profile sets it, or removes it for NULL, as
 * config_set_mode writes; the store must exist.
 */
const char *config_signer_profile(const struct jval *cfg);
int config_set_signer_profile(const char *id);

/* ---- what this user decided and chose here (trust.c) ---- */

/*
 * The project directory, .heartwood/ included, is not trusted: it may
 * come from a clone, an archive or another user.  What this user decided
 * and chose on this machine lives in the user state directory,
 * $XDG_STATE_HOME/heartwood (when absolute) or ~/.local/state/heartwood,
 * 0700 and refused when it is not the user's or others may use it.
 * user_state_dir puts its path (malloc'd) in *dir: 1, 0 when it does not
 * exist and !create, -1 with the error.
 */
int user_state_dir(char **dir, int create);
/*
 * decision_bind is a session's bind hook: for an approval.recorded event
 * it appends the event's binding, a MAC under the user's decision key
 * (decision.key, 32 random bytes, 0600, created on first use) over the
 * event hash, sequence, session id, group, decision and the project's
 * real path, to projects/<24 hex of sha256(path)>/decisions/<sid>.jsonl
 * and syncs it; other events pass.  decision_bound: 1 when event ev
 * (an approval.recorded of session sid in this project) has a valid
 * binding, else 0, with the reason when a key or file was refused in why
 * ("" otherwise).  It never fails and keeps the last error as it was.
 */
int decision_bind(struct session *s, const struct jval *ev,
    const char *ehash);
/* decision_ready: the key can be used (created if needed), or -1 */
int decision_ready(void);
/*
 * user_mac: in out (65 bytes) the hex HMAC-SHA-256 of p (n bytes) under a
 * key derived for purpose what from the decision key (created if need
 * be): a cache this user's heartwood wrote carries it, so one that came
 * with a clone, an archive or another user is never believed.  -1 with
 * the error when there is no key.
 */
int user_mac(const char *what, const void *p, size_t n, char out[65]);
int decision_bound(const char *sid, const struct jval *ev, char *why,
    size_t whysz);
/*
 * trust_confirm records that this user chose value for setting what
 * ("model_route", "confirmation_mode") in this project, in
 * projects/<id>/confirmed.json; trust_confirmed: 1 when they did, 0 when
 * not (or no state exists), -1 with the error.  route_fingerprint is the
 * hash a route is confirmed by: its model, base URL and key variable.
 */
int trust_confirm(const char *what, const char *value);
int trust_confirmed(const char *what, const char *value);
struct model_route;
void route_fingerprint(const struct model_route *r,
    char out[HW_HASH_LEN + 1]);
/*
 * credential_allowed: 1 when a key may be read from variable name: the
 * reference's allowlist (credential_builtin_allowlist(), for messages)
 * or a name in the whitespace-separated [credentials] allowlist of the
 * user's $XDG_CONFIG_HOME/heartwood/config.toml (never the project's);
 * 0 if not, -1 with the error when that file is unreadable.
 */
int credential_allowed(const char *name);
const char *credential_builtin_allowlist(void);

/* ---- the model route (route.c) ---- */

struct model_route {
	char *model;		/* "openai/NAME"; NAME is sent as "model" */
	char *base_url;		/* no trailing '/'; + "/chat/completions" */
	char *key_env;		/* the key's variable name, or NULL */
	int loopback;		/* host 127.0.0.0/8, ::1 or localhost */
	long timeout_s;		/* 600 loopback, 180 otherwise */
	int retries;		/* 1 loopback, 2 otherwise */
	int64_t max_input_tokens, max_output_tokens;	/* 0: none */
};
/*
 * model_route_from_env fills r (all strings malloc'd) from HW_MODEL
 * (required: "openai/NAME", NAME not empty, the whole at most 256
 * printable ASCII characters without spaces), HW_BASE_URL (required: an http or https URL without user
 * information, query or fragment, at most 2048 bytes; trailing '/'
 * dropped), HW_API_KEY_ENV (optional, empty meaning unset: a name
 * matching [A-Za-z_][A-Za-z0-9_]* of a set, non-empty variable; without
 * it the route is credential-free) and HW_MAX_INPUT_TOKENS /
 * HW_MAX_OUTPUT_TOKENS (optional decimal integers, 0 to 1e9).  A missing
 * or bad value is code 2 with a message naming the variable (never the
 * key, nor the URL, which could carry a secret); r is then released.
 * When neither HW_MODEL nor HW_BASE_URL is set, the route is the [model]
 * table hw setup saved in CONFIG_FILE instead (model_id, base_url,
 * api_key_env, checked the same way, messages naming "[model] FIELD"); the
 * environment always wins, as a whole.
 * model_route_release frees r's strings and is safe on a zeroed route.
 */
int model_route_from_env(struct model_route *r);
void model_route_release(struct model_route *r);
/*
 * model_route_set fills r from a model id NAME (r->model is then
 * "openai/NAME", so NAME is sent as it is), a base URL and an optional
 * key variable name, checked as model_route_from_env checks HW_MODEL,
 * HW_BASE_URL and HW_API_KEY_ENV, what[0..2] naming the three values in
 * messages; the key variable must be set only when need_set.  Timeouts,
 * retries and budgets are left 0.  On error r is released.
 */
int model_route_set(struct model_route *r, const char *id, const char *url,
    const char *key_env, const char *const what[3], int need_set);


#endif
