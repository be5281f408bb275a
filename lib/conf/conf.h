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
 * with source, provider (omitted when NULL or "openai"), model_id,
 * base_url and api_key_env (omitted when key_env is NULL), checked by
 * the caller, the same way and under the same lock
 * as config_set_mode; the store must exist.  model_route_from_env reads
 * the table back when the environment names no route.
 */
int config_set_route(const char *source, const char *provider,
    const char *model_id, const char *base_url, const char *key_env);
/* config_set_table replaces table name of the configuration with table */
int config_set_table(const char *name, const struct jval *table);
/* config_set_tables replaces n tables at once: one atomic rewrite */
int config_set_tables(const char *const *names,
    const struct jval *const *tables, size_t n);
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

enum { ROUTE_OPENAI, ROUTE_ANTHROPIC, ROUTE_SUBSCRIPTION };
struct model_route {
	char *model;		/* "PROVIDER/NAME"; NAME is sent as "model" */
	int provider;		/* ROUTE_OPENAI, ROUTE_ANTHROPIC,
				   ROUTE_SUBSCRIPTION (chatgpt/NAME) */
	char *base_url;		/* no trailing '/'; see route_call_url */
	char *key_env;		/* the key's variable name, or NULL */
	char *key_file;		/* or the key file's path (class file) */
	char *key;		/* the key read from key_file; never shown */
	int loopback;		/* host 127.0.0.0/8, ::1 or localhost */
	long timeout_s;		/* 600 loopback, 180 otherwise */
	int retries;		/* 1 loopback, 2 otherwise */
	int64_t max_input_tokens, max_output_tokens;	/* 0: none */
	int from_env;		/* HW_MODEL and HW_BASE_URL, not hw setup */
	int managed;		/* credential class managed-identity */
	int isolated;		/* and its source is platform-isolated */
	const char *account;	/* chatgpt/: the signed-in ChatGPT account
				   id for a call (borrowed), or NULL */
};
/*
 * model_route_from_env fills r (all strings malloc'd) from HW_MODEL
 * (required: "openai/NAME" for an OpenAI-compatible API, or
 * "anthropic/NAME" for Anthropic's Messages API, NAME not empty, the
 * whole at most 256
 * printable ASCII characters without spaces), HW_BASE_URL (required: an http or https URL without user
 * information, query or fragment, at most 2048 bytes; trailing '/'
 * dropped), HW_API_KEY_ENV (optional, empty meaning unset: a name
 * matching [A-Za-z_][A-Za-z0-9_]* of a set, non-empty variable; without
 * it the route is credential-free) or HW_API_KEY_FILE (credential class
 * file: an absolute path to a regular file, not a symbolic link, of this
 * user and mode 0600 or stricter, holding the key on one line, read into
 * r->key), never both; a route without a key (class none) must be
 * loopback; and HW_MAX_INPUT_TOKENS /
 * HW_MAX_OUTPUT_TOKENS (optional decimal integers, 0 to 1e9).  A missing
 * or bad value is code 2 with a message naming the variable (never the
 * key, nor the URL, which could carry a secret); r is then released.
 * When neither HW_MODEL nor HW_BASE_URL is set, the route is the [model]
 * table hw setup saved in CONFIG_FILE instead (model_id, base_url,
 * api_key_env, checked the same way, messages naming "[model] FIELD", and
 * provider: "openai", the default, or "anthropic"); the
 * environment always wins, as a whole.
 * model_route_release frees r's strings and is safe on a zeroed route.
 */
int model_route_from_env(struct model_route *r);
void model_route_release(struct model_route *r);
/*
 * route_provider: "openai" or "anthropic" (r may be NULL: "openai");
 * route_model_name: the NAME of r->model, as it is sent
 */
const char *route_provider(const struct model_route *r);
const char *route_model_name(const struct model_route *r);
/*
 * model_route_set fills r from a model id NAME (r->model is then
 * "openai/NAME", so NAME is sent as it is), a base URL and an optional
 * key variable name, checked as model_route_from_env checks HW_MODEL,
 * HW_BASE_URL and HW_API_KEY_ENV, what[0..2] naming the three values in
 * messages; the key variable must be set only when need_set.  Timeouts,
 * retries and budgets are left 0.  On error r is released.
 * route_set_provider makes r a route of provider (ROUTE_OPENAI,
 * ROUTE_ANTHROPIC): r->model becomes PROVIDER/NAME.
 */
int model_route_set(struct model_route *r, const char *id, const char *url,
    const char *key_env, const char *const what[3], int need_set);
int route_set_provider(struct model_route *r, int provider);
/*
 * route_subscription_set fills r as model_route_set does, for the
 * subscription route (chatgpt/NAME at url, no key: it signs in)
 */
int route_subscription_set(struct model_route *r, const char *id,
    const char *url, const char *const what[3]);

/*
 * credential_file_read: in *key (malloc'd; wipe it) the key of credential
 * class file: path absolute, a regular file (not a symbolic link) of this
 * user that nobody else may read or write, at most 4096 bytes, the key
 * alone on one line.  Messages name what and the path, never the key.
 */
int credential_file_read(const char *path, const char *what, char **key);
/* printable_ascii: s is 0x21-0x7e only, or 0x20-0x7e when spaces */
int printable_ascii(const char *s, int spaces);
/*
 * identity_token: in *tok (malloc'd; wipe it) the access token of the
 * platform identity (credential class managed-identity): the service
 * account of the Google Cloud VM heartwood runs on, from the metadata
 * server (http://metadata.google.internal, or GCE_METADATA_HOST: HOST or
 * HOST:PORT), asked with Metadata-Flavor: Google, no proxy, no redirect,
 * within 5 s (HW_METADATA_TIMEOUT_MS, for tests) and once more after a
 * failure to connect, a timeout or a 5xx.  The answer (at most 64 KiB)
 * must be exactly {access_token, expires_in (1 to 86400 s), token_type
 * Bearer}.  The token is held in this process's memory only, registered
 * for redaction, and fetched anew a minute before it expires (at half
 * its life when that is under two minutes).  Thread-safe.  -1 with a
 * message that never holds the token.  identity_ready: the token is
 * fetched (and kept), so that a route is known to work before a run.
 * identity_allowed: 0 when the platform's adapter lists managed-identity
 * among its credential backends, else -1 (code 2) saying that connection
 * id cannot use it here.
 */
int identity_token(char **tok);
int identity_ready(void);
int identity_allowed(const char *id);
/*
 * route_identity: for a route without a key variable or file (which
 * the caller checks: the resolution order is a value of this process,
 * the environment or a file, then the platform identity), the connection of the catalog whose
 * credential_kind is managed-identity and whose base_url is the
 * route's: then r->managed, refused (code 2) unless the platform's
 * adapter lists managed-identity among its credential backends, and
 * r->isolated when the connection's id is one of the adapter's
 * platform-isolated sources.  1 when the route uses the platform
 * identity, 0 when no such connection exists, -1 with the error.
 */
int route_identity(struct model_route *r);

/* ---- model connections (connections.c) ---- */

/*
 * The connection catalog (heartwood.model-connections.v1, hw-model(1)):
 * the built-in heartwood connection, the platform's (those among its
 * adapter's model sources) and the user's own, from
 * connections_user_file() ($XDG_CONFIG_HOME/heartwood/
 * model-connections.json, malloc'd; never the project's).
 * connections_load puts the catalog document in *out: every connection
 * with all its fields, null where unset.  A bad user file is 65 naming
 * it, the entry and the rule.  connection_check checks one connection
 * (user: of the user's file) the same way.  connection_find: the
 * connection id of a catalog or list, or NULL.
 */
#define CONNECTIONS_SCHEMA "heartwood.model-connections.v1"
char *connections_user_file(void);
int connections_load(struct arena *a, const char *platform,
    struct jval **out);
int connection_check(const struct jval *c, const char *where, int user);
const struct jval *connection_find(const struct jval *list, const char *id);
/*
 * connection_credential_ref: what policy sees of c's credential (the
 * variable's name, the file's path, managed-identity, or NULL);
 * connection_key: in *key (malloc'd, registered for redaction; NULL for
 * credential_kind none) the key itself, from the environment or the key
 * file, never from an argument; messages never hold it.
 * endpoint_loopback: a normalized http(s) endpoint's host is loopback.
 */
const char *connection_credential_ref(const struct jval *c);
int connection_key(const struct jval *c, char **key);
int endpoint_loopback(const char *ep);

/* ---- the ChatGPT subscription sign-in (subscription.c) ---- */

/*
 * The connection openai-subscription signs in with the OAuth 2.0 device
 * authorization grant (RFC 8628) at the issuer SUB_ISSUER, or
 * HW_SUBSCRIPTION_ISSUER (https, or http on loopback: tests' stand-ins):
 * POST ISSUER/oauth/device/code {client_id, scope}, then
 * POST ISSUER/oauth/token with the device code's grant, and later
 * grant_type=refresh_token, both form-encoded.  Messages never hold a
 * token or any text of the server; tokens are registered for redaction
 * (redact_secret) the moment they are read or received.
 */
#define SUB_CONNECTION "openai-subscription"
#define SUB_ISSUER "https://auth.openai.com"
#define SUB_DEVICE_PATH "/oauth/device/code"
#define SUB_TOKEN_PATH "/oauth/token"
#define SUB_CLIENT_ID "app_EMoamEEZ73f0CkXaXp7hrann"
#define SUB_SCOPE "openid profile email offline_access"
#define SUB_BASE_URL "https://chatgpt.com/backend-api/codex"
#define SUB_CREDENTIAL_REF "subscription:openai"
#define SUB_TOKENS_SCHEMA "heartwood.subscription-tokens.v1"
#define SUB_EXPIRED "the ChatGPT sign-in has expired or was revoked: sign " \
	"in again with 'hw-model subscription sign-in'"
/*
 * The tokens (heartwood.subscription-tokens.v1), kept in sub_token_file()
 * ($XDG_CONFIG_HOME/heartwood/credentials/openai-subscription.json, or
 * under ~/.config; malloc'd), never in a project: the directory 0700 and
 * the file 0600, both this user's, written atomically, never through a
 * symbolic link; anything else is refused (65), as is a file that is not
 * a token file.  sub_tokens_load: 66 when not signed in.
 * sub_sign_out removes the file (*was: there was one; a link is removed,
 * not followed).
 */
struct sub_tokens {
	char *access, *refresh;	/* wipe: sub_tokens_release */
	char *account;		/* the ChatGPT account id, or NULL */
	int64_t expires_at;	/* the access token's, Unix seconds */
};
char *sub_token_file(void);
int sub_tokens_load(struct sub_tokens *t);
int sub_tokens_save(const struct sub_tokens *t);
/* sub_tokens_writable: the checks of sub_tokens_save, before a sign-in */
int sub_tokens_writable(void);
void sub_tokens_release(struct sub_tokens *t);
int sub_sign_out(int *was);
/* sub_issuer: the issuer's URL (malloc'd), or NULL (2) when it is bad */
char *sub_issuer(void);
/*
 * sub_device_start asks for a code: d holds the device code, the user
 * code, the verification URL (https, or loopback http) and the interval.
 * sub_device_poll asks once: 0 and t on approval, 1 while pending
 * (slow_down adds 5 s to d->interval), -1 with the reason (expired,
 * denied, refused).  sub_device_wait polls every interval until the end
 * (HW_SUBSCRIPTION_POLL_MS, at most 1000, is a second's length: tests).
 */
struct sub_device {
	char *issuer, *device_code, *user_code;
	char *verification_uri, *verification_uri_complete;
	int64_t interval, expires_in, deadline_ms;
};
int sub_device_start(struct sub_device *d);
int sub_device_poll(struct sub_device *d, struct sub_tokens *t);
int sub_device_wait(struct sub_device *d, struct sub_tokens *t);
void sub_device_release(struct sub_device *d);
/*
 * sub_refresh trades t's refresh token for new tokens and saves them
 * (a refusal, 400 or 401, is 1 with SUB_EXPIRED; t is kept then).
 * sub_access_token: the saved tokens in t, refreshed first when force or
 * when the access token expires within a minute.
 */
int sub_refresh(struct sub_tokens *t);
int sub_access_token(int force, struct sub_tokens *t);

/* ---- the platform (platform.c) ---- */

/*
 * A platform adapter's capability manifest (hw-policy(7)): words are
 * space-separated.  platform_adapter: the adapter of id (generic, terra,
 * carina), or NULL.  platform_detect reads environment markers only:
 * GOOGLE_PROJECT or WORKSPACE_* (Terra), HEARTWOOD_CARINA or
 * SLURM_CLUSTER_NAME carina/carina2 (Carina), HEARTWOOD_PLATFORM=terra
 * or carina; DX_* and SB_* are recognised without an adapter (generic,
 * confidence 0, a note), Terra and Carina markers together are
 * ambiguous (Carina, confidence 0.5, a note).  platform_manifest: the
 * manifest as JSON (heartwood.platform-capabilities.v1) in a.
 */
struct platform_adapter {
	const char *id, *display, *interfaces, *browser, *ingress;
	const char *ingress_default, *runtimes, *scheduler, *storage;
	const char *backends, *sources, *credentials, *endpoints, *catalog;
	const char *mounts;
};
/*
 * platform_isolated_sources: the sources (connection ids, space
 * separated) adapter p declares platform-isolated: no built-in adapter
 * does; on an adapter whose credential backends hold managed-identity,
 * the platform's operator declares them in HEARTWOOD_ISOLATED_SOURCES
 * (words of lowercase letters, digits, '.', '_', '-'; any other value
 * declares none).  platform_has_backend: word w is among p's credential
 * backends.
 */
const char *platform_isolated_sources(const struct platform_adapter *p);
int platform_has_backend(const struct platform_adapter *p, const char *w);
int word_in(const char *s, const char *w);
struct platform_detection {
	const char *id;		/* the adapter used */
	double confidence;
	const char *evidence;	/* the markers that decided */
	const char *recognised;	/* a platform without adapter, or NULL */
	const char *note;	/* NULL, or why the confidence is low */
};
const struct platform_adapter *platform_adapter(const char *id);
void platform_detect(struct platform_detection *d);
struct jval *platform_manifest(struct arena *a,
    const struct platform_adapter *p);
/*
 * platform_checks: the readiness checks of adapter id for the project at
 * root, from the environment and the file system only: Terra's
 * terra-project-storage (HW-TERRA-001: the persistent disk /home/jupyter
 * or HEARTWOOD_PLATFORM_HOME) and terra-gpu (HW-TERRA-002:
 * HEARTWOOD_GPU_RUNTIME vllm with a visible GPU, or none); Carina's
 * slurm-allocation (HW-COMPUTE-001: SLURM_JOB_ID), job-scratch
 * (HW-COMPUTE-002: LOCAL_SCRATCH_JOB) and gpu (HW-COMPUTE-003); none for
 * generic.  Returns how many it wrote (static strings).
 */
#define PLATFORM_CHECKS_MAX 4
struct platform_check {
	const char *id, *status, *code, *summary, *next;
};
size_t platform_checks(const char *id, const char *root,
    struct platform_check out[PLATFORM_CHECKS_MAX]);

/* ---- the model policy (policy.c) ---- */

/*
 * A policy profile (heartwood.policy-profile.v1): the platform adapter's
 * default (policy_id PLATFORM-default), each field of which the [policy]
 * table of CONFIG_FILE may replace (lists as space-separated strings).
 * Every endpoint is held normalized; tiers and modes are checked.
 */
struct strs {
	const char **v;
	size_t n;
};
struct policy_profile {
	const char *policy_id, *platform_id;
	int deny_egress_by_default;
	struct strs endpoints, catalog, tiers, modes, credentials;
	int64_t aggregate_count_floor;
	const char *notes;
};
/*
 * endpoint_normalize: in *out (malloc'd) the normalized endpoint: a
 * scheme is required; fragments, user information and queries are
 * refused; http and https have their scheme and host lowercased, an IPv6
 * host bracketed, an explicit port kept and an empty path made "/";
 * local://AUTHORITY/PATH is allowed; other schemes are refused.  -1 with
 * why (never the input) in the error.
 */
int endpoint_normalize(const char *in, char **out);
/*
 * policy_load: the profile of platform in *p (strings in a), from the
 * adapter's default and cfg's [policy] table (cfg may be NULL).  A bad
 * field is code 2 naming it.  policy_to_json: the profile as JSON.
 */
int policy_load(struct arena *a, const struct jval *cfg,
    const char *platform, struct policy_profile *p);
struct jval *policy_to_json(struct arena *a, const struct policy_profile *p);
/*
 * policy_evaluate: evaluate's seven steps (hw-policy(7)).  An unknown
 * tier or mode is code 2; otherwise d says allow or deny, the rule that
 * decided (invalid-endpoint, capability-tier, confirmation-mode,
 * credential-allowlist, egress-allowlist, allowed), the endpoint as
 * recorded and the reason, which for a denial says how to change the
 * policy.  catalog: use the catalog allowlist.
 */
struct policy_decision {
	const char *decision, *rule, *endpoint, *reason;
};
int policy_evaluate(struct arena *a, const struct policy_profile *p,
    const char *endpoint, int catalog, const char *tier, const char *mode,
    const char *credential, struct policy_decision *d);
/*
 * policy_record: the recorded decision (heartwood.model-call-decision.v1)
 * and egress attestation (heartwood.egress-attestation-record.v1) of d.
 */
void policy_record(struct arena *a, const struct policy_profile *p,
    const struct policy_decision *d, const char *decision_id,
    const char *session_id, const char *purpose, const char *tier,
    struct jval **decision, struct jval **attestation);
/*
 * route_call_url: the URL (malloc'd, as the base URL spells it) a route
 * calls: for an OpenAI-compatible route BASE/chat/completions and the
 * catalog BASE/models; for Anthropic BASE/v1/messages and BASE/v1/models,
 * or BASE/messages and BASE/models when the base already ends in /v1.
 * route_endpoint: the endpoint a route calls, normalized (malloc'd), or
 * NULL with the error; route_credential_ref: its credential reference
 * (the key's variable name, the key file's path, managed-identity) or
 * NULL; route_isolation: the route's credential-isolation status:
 * not-configured (r NULL), credential-free (no key, loopback),
 * platform-isolated (the platform identity of a source the adapter
 * declares isolated: route_identity), application-scrubbed (otherwise).
 * route_unattended_ok: the status lets actions run unreviewed
 * (Low-Risk Automation): credential-free or platform-isolated.
 */
struct model_route;
char *route_call_url(const struct model_route *r, int catalog);
char *route_endpoint(const struct model_route *r, int catalog);
const char *route_credential_ref(const struct model_route *r);
const char *route_isolation(const struct model_route *r);
int route_unattended_ok(const struct model_route *r);
/*
 * policy_custom_api writes the [policy] table PLATFORM-custom-api to
 * CONFIG_FILE: the default with the route's chat endpoint, its
 * /responses twin (not for Anthropic, whose one endpoint is messages),
 * its catalog endpoint and its credential reference added.
 */
int policy_custom_api(const struct model_route *r);
/*
 * policy_add_route adds r's endpoints and credential reference to p, as
 * policy_custom_api does, naming it PLATFORM-custom-api.
 * policy_for_route: the profile a route is evaluated against: cfg's
 * [policy] over the platform's default; a route of the environment
 * (HW_MODEL, HW_BASE_URL) is a custom API chosen for this process: unless
 * [policy] is one the researcher wrote (its id not PLATFORM-custom-api,
 * which hw setup writes for the saved route), it is evaluated against
 * the default with its own endpoints added (policy_add_route).
 */
int policy_add_route(struct arena *a, struct policy_profile *p,
    const struct model_route *r);
int policy_for_route(struct arena *a, const struct jval *cfg,
    const char *platform, const struct model_route *r,
    struct policy_profile *p);

#endif
