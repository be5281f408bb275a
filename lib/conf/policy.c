/*
 * policy.c - the model policy engine: endpoint normalization, policy
 * profiles and evaluate, whose decision is recorded before any byte of a
 * model call leaves the machine (hw-policy(7))
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

#define ENDPOINT_MAX 2048

static const char *const tiers[] = { "autonomous", "supervised",
	"experimental", NULL };
static const char *const modes[] = { "always-confirm", "confirm-risky",
	NULL };

static char *
astr(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

static char * __attribute__((format(printf, 2, 3)))
aprintf(struct arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s, *r;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return astr(a, "(out of memory)");
	r = astr(a, s);
	free(s);
	return r;
}

static int
known(const char *const *set, const char *s)
{
	for (; *set; set++)
		if (!strcmp(*set, s))
			return 1;
	return 0;
}

static int
member(const struct strs *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return 1;
	return 0;
}

static int
bad(const char *why)
{
	return hw_err_set(HW_EXIT_USAGE, "invalid endpoint: %s", why);
}

/* authority: check a..e of an http(s) URL; lowercased into b */
static int
authority(struct buf *b, const char *a, const char *e)
{
	const char *h = a, *he, *port;
	struct in6_addr a6;
	char host[256];
	long v = 0;
	char *end;

	if (*a == '[') {
		if (!(he = memchr(a, ']', (size_t)(e - a))))
			return bad("the host has an unclosed '['");
		h = a + 1;
		port = he + 1 < e ? he + 1 : NULL;
		if (port && *port != ':')
			return bad("the host is invalid");
	} else {
		port = memchr(a, ':', (size_t)(e - a));
		he = port ? port : e;
	}
	if (he == h || (size_t)(he - h) >= sizeof host)
		return bad("the host is missing or too long");
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = 0;
	for (char *c = host; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (*a == '[' ? inet_pton(AF_INET6, host, &a6) != 1 :
	    strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789.-_") !=
	    strlen(host))
		return bad("the host is invalid");
	if (port) {
		v = strtol(port + 1, &end, 10);
		if (end != e || port + 1 == e || !isdigit((unsigned char)
		    port[1]) || e - port > 6 || v < 1 || v > 65535)
			return bad("the port is invalid");
	}
	if (*a == '[')
		buf_printf(b, "[%s]", host);
	else
		buf_adds(b, host);
	if (port)
		buf_printf(b, ":%ld", v);
	return 0;
}

int
endpoint_normalize(const char *in, char **out)
{
	const char *s, *a, *path;
	struct buf b;
	size_t n;
	int local;

	*out = NULL;
	if (strlen(in) > ENDPOINT_MAX)
		return bad("it is longer than 2048 bytes");
	for (s = in; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return bad("it must be printable ASCII without spaces");
	n = strspn(in, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789+.-");
	if (!n || in[n] != ':' || !isalpha((unsigned char)in[0]))
		return bad("a scheme is required");
	if (strchr(in, '#'))
		return bad("a fragment is not allowed");
	if (strchr(in, '?'))
		return bad("a query is not allowed");
	local = n == 5 && !strncasecmp(in, "local", 5);
	if (!local && !(n == 4 && !strncasecmp(in, "http", 4)) &&
	    !(n == 5 && !strncasecmp(in, "https", 5)))
		return bad("the scheme must be http, https or local");
	if (strncmp(in + n, "://", 3))
		return bad("an authority ('//HOST') is required");
	a = in + n + 3;
	path = a + strcspn(a, "/");
	if (memchr(a, '@', (size_t)(path - a)))
		return bad("user information is not allowed");
	if (path == a)
		return bad("the host is missing");
	buf_init(&b);
	for (size_t i = 0; i < n; i++)
		buf_addc(&b, (char)tolower((unsigned char)in[i]));
	buf_adds(&b, "://");
	if (local)
		buf_add(&b, a, (size_t)(path - a));
	else if (authority(&b, a, path) < 0) {
		buf_release(&b);
		return -1;
	}
	buf_adds(&b, *path ? path : "/");
	*out = xstrdup(buf_cstr(&b));
	buf_release(&b);
	return 0;
}

/* split: the space-separated words of s into l (in a) */
static void
split(struct arena *a, const char *s, struct strs *l)
{
	size_t n, cap = 0;

	l->v = NULL;
	l->n = 0;
	for (const char *p = s; *p; p += n) {
		p += strspn(p, " \t");
		if (!(n = strcspn(p, " \t")))
			break;
		cap++;
	}
	l->v = arena_alloc(a, (cap ? cap : 1) * sizeof *l->v);
	while (*s) {
		s += strspn(s, " \t");
		if (!(n = strcspn(s, " \t")))
			break;
		l->v[l->n++] = arena_strndup(a, s, n);
		s += n;
	}
}

/* endpoints: normalize every entry of l, naming field on error */
static int
endpoints(struct arena *a, struct strs *l, const char *field)
{
	char *norm;

	for (size_t i = 0; i < l->n; i++) {
		if (endpoint_normalize(l->v[i], &norm) < 0)
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] %s: "
			    "entry %zu: %s", CONFIG_FILE, field, i + 1,
			    hw_err_msg());
		l->v[i] = astr(a, norm);
		free(norm);
	}
	return 0;
}

static int
checked(const struct strs *l, const char *const *set, const char *field)
{
	for (size_t i = 0; i < l->n; i++)
		if (!known(set, l->v[i]))
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] %s: "
			    "unknown value '%.64s'", CONFIG_FILE, field,
			    l->v[i]);
	return 0;
}

/* field: [policy] k as a list, or the default d; -1 if not a string */
static int
field(struct arena *a, const struct jval *t, const char *k, const char *d,
    struct strs *l)
{
	const struct jval *v = json_get(t, k);

	if (v && v->t != J_STRING)
		return hw_err_set(HW_EXIT_USAGE, "%s [policy] %s: expected a "
		    "string of space-separated entries", CONFIG_FILE, k);
	split(a, v ? v->u.s : d, l);
	return 0;
}

int
policy_load(struct arena *a, const struct jval *cfg, const char *platform,
    struct policy_profile *p)
{
	const struct platform_adapter *ad = platform_adapter(platform);
	const struct jval *t = json_get(cfg, "policy"), *v;
	const char *s;

	memset(p, 0, sizeof *p);
	if (!ad)
		return hw_err_set(HW_EXIT_USAGE, "unknown platform '%.32s'",
		    platform);
	if (t && t->t != J_OBJECT)
		return hw_err_set(HW_EXIT_USAGE, "%s: policy must be a table",
		    CONFIG_FILE);
	p->platform_id = ad->id;
	p->policy_id = aprintf(a, "%s-default", ad->id);
	p->deny_egress_by_default = 1;
	p->aggregate_count_floor = 20;
	p->notes = "";
	if ((s = json_get_str(t, "schema_version")) &&
	    strcmp(s, "heartwood.policy-profile.v1"))
		return hw_err_set(HW_EXIT_USAGE, "%s [policy] schema_version: "
		    "expected heartwood.policy-profile.v1", CONFIG_FILE);
	if ((v = json_get(t, "policy_id"))) {
		if (v->t != J_STRING || !v->n || v->n > 64 ||
		    strspn(v->u.s, "abcdefghijklmnopqrstuvwxyz"
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") != v->n)
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] "
			    "policy_id: expected 1 to 64 letters, digits, "
			    "'-', '_' or '.'", CONFIG_FILE);
		p->policy_id = v->u.s;
	}
	if ((v = json_get(t, "deny_egress_by_default"))) {
		if (v->t != J_TRUE && v->t != J_FALSE)
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] "
			    "deny_egress_by_default: expected true or false",
			    CONFIG_FILE);
		p->deny_egress_by_default = v->t == J_TRUE;
	}
	if (json_get(t, "aggregate_count_floor")) {
		if (json_get_int(t, "aggregate_count_floor",
		    &p->aggregate_count_floor) < 0 ||
		    p->aggregate_count_floor < 20)
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] "
			    "aggregate_count_floor: expected an integer of at "
			    "least 20", CONFIG_FILE);
	}
	if ((v = json_get(t, "notes"))) {
		if (v->t != J_STRING)
			return hw_err_set(HW_EXIT_USAGE, "%s [policy] notes: "
			    "expected a string", CONFIG_FILE);
		p->notes = v->u.s;
	}
	if (field(a, t, "allowed_model_endpoints", ad->endpoints,
	    &p->endpoints) < 0 ||
	    field(a, t, "allowed_model_catalog_endpoints", ad->catalog,
	    &p->catalog) < 0 ||
	    field(a, t, "allowed_capability_tiers", "supervised experimental",
	    &p->tiers) < 0 ||
	    field(a, t, "allowed_action_confirmation_modes",
	    "always-confirm confirm-risky", &p->modes) < 0 ||
	    field(a, t, "credential_allowlist", ad->credentials,
	    &p->credentials) < 0)
		return -1;
	if (endpoints(a, &p->endpoints, "allowed_model_endpoints") < 0 ||
	    endpoints(a, &p->catalog, "allowed_model_catalog_endpoints") < 0 ||
	    checked(&p->tiers, tiers, "allowed_capability_tiers") < 0 ||
	    checked(&p->modes, modes, "allowed_action_confirmation_modes") < 0)
		return -1;
	return 0;
}

static struct jval *
list(struct arena *a, const struct strs *l)
{
	struct jval *arr = json_new(a, J_ARRAY);

	for (size_t i = 0; i < l->n; i++)
		json_push(a, arr, json_str(a, l->v[i]));
	return arr;
}

struct jval *
policy_to_json(struct arena *a, const struct policy_profile *p)
{
	struct jval *o = json_obj(a);

	json_add(a, o, "schema_version", json_str(a,
	    "heartwood.policy-profile.v1"));
	json_add(a, o, "policy_id", json_str(a, p->policy_id));
	json_add(a, o, "platform_id", json_str(a, p->platform_id));
	json_add(a, o, "deny_egress_by_default",
	    json_bool(a, p->deny_egress_by_default));
	json_add(a, o, "allowed_model_endpoints", list(a, &p->endpoints));
	json_add(a, o, "allowed_model_catalog_endpoints", list(a, &p->catalog));
	json_add(a, o, "allowed_capability_tiers", list(a, &p->tiers));
	json_add(a, o, "allowed_action_confirmation_modes", list(a, &p->modes));
	json_add(a, o, "credential_allowlist", list(a, &p->credentials));
	json_add(a, o, "aggregate_count_floor",
	    json_int(a, p->aggregate_count_floor));
	json_add(a, o, "notes", json_str(a, p->notes));
	return o;
}

static void
deny(struct policy_decision *d, const char *rule, const char *reason)
{
	d->decision = "deny";
	d->rule = rule;
	d->reason = reason;
}

int
policy_evaluate(struct arena *a, const struct policy_profile *p,
    const char *endpoint, int catalog, const char *tier, const char *mode,
    const char *credential, struct policy_decision *d)
{
	const char *how = "change [policy] in " CONFIG_FILE
	    " (hw-policy(7)) or choose another route with 'hw setup'";
	const struct strs *allow = catalog ? &p->catalog : &p->endpoints;
	char *norm;

	memset(d, 0, sizeof *d);
	/* 1: an unknown tier or mode is an error, not a decision */
	if (!known(tiers, tier))
		return hw_err_set(HW_EXIT_USAGE, "unknown capability tier "
		    "'%.32s': want autonomous, supervised or experimental",
		    tier);
	if (!known(modes, mode))
		return hw_err_set(HW_EXIT_USAGE, "unknown confirmation mode "
		    "'%.32s': want always-confirm or confirm-risky", mode);
	/* 2: an endpoint that does not normalize */
	if (endpoint_normalize(endpoint, &norm) < 0) {
		d->endpoint = "[invalid-endpoint]";
		deny(d, "invalid-endpoint", aprintf(a, "denied by policy "
		    "'%s' (rule invalid-endpoint): the endpoint is not a "
		    "valid model endpoint (%s); %s", p->policy_id,
		    hw_err_msg(), how));
		return 0;
	}
	d->endpoint = astr(a, norm);
	free(norm);
	/* 3, 4: the tier and the review mode */
	if (!member(&p->tiers, tier)) {
		deny(d, "capability-tier", aprintf(a, "denied by policy "
		    "'%s' (rule capability-tier): capability tier '%s' is not "
		    "in allowed_capability_tiers; %s", p->policy_id, tier,
		    how));
		return 0;
	}
	if (!member(&p->modes, mode)) {
		deny(d, "confirmation-mode", aprintf(a, "denied by policy "
		    "'%s' (rule confirmation-mode): confirmation mode '%s' is "
		    "not in allowed_action_confirmation_modes; %s",
		    p->policy_id, mode, how));
		return 0;
	}
	/* 5: the credential reference */
	if (credential && !member(&p->credentials, credential)) {
		deny(d, "credential-allowlist", aprintf(a, "denied by "
		    "policy '%s' (rule credential-allowlist): credential "
		    "reference '%.128s' is not in credential_allowlist; %s",
		    p->policy_id, credential, how));
		return 0;
	}
	/* 6: egress only to an allowlisted endpoint, exactly */
	if (p->deny_egress_by_default && !member(allow, d->endpoint)) {
		deny(d, "egress-allowlist", aprintf(a, "denied by policy "
		    "'%s' (rule egress-allowlist): endpoint '%s' is not in "
		    "%s; %s", p->policy_id, d->endpoint, catalog ?
		    "allowed_model_catalog_endpoints" :
		    "allowed_model_endpoints", how));
		return 0;
	}
	/* 7 */
	d->decision = "allow";
	d->rule = "allowed";
	d->reason = aprintf(a, "allowed by policy '%s'%s", p->policy_id,
	    p->deny_egress_by_default ? ": the endpoint is allowlisted" :
	    ": egress is not denied by default");
	return 0;
}

void
policy_record(struct arena *a, const struct policy_profile *p,
    const struct policy_decision *d, const char *decision_id,
    const char *session_id, const char *purpose, const char *tier,
    struct jval **decision, struct jval **attestation)
{
	struct jval *dec = json_obj(a), *att = json_obj(a);
	char now[21];

	utc_now(now);
	json_add(a, dec, "schema_version", json_str(a,
	    "heartwood.model-call-decision.v1"));
	json_add(a, dec, "decision_id", json_str(a, decision_id));
	json_add(a, dec, "policy_profile_id", json_str(a, p->policy_id));
	json_add(a, dec, "endpoint", json_str(a, d->endpoint));
	json_add(a, dec, "capability_tier", json_str(a, tier));
	json_add(a, dec, "decision", json_str(a, d->decision));
	json_add(a, dec, "reason", json_str(a, d->reason));
	json_add(a, att, "schema_version", json_str(a,
	    "heartwood.egress-attestation-record.v1"));
	json_add(a, att, "record_id", json_str(a, decision_id));
	json_add(a, att, "session_id", session_id ? json_str(a, session_id) :
	    json_new(a, J_NULL));
	json_add(a, att, "decision_id", json_str(a, decision_id));
	json_add(a, att, "policy_profile_id", json_str(a, p->policy_id));
	json_add(a, att, "platform_id", json_str(a, p->platform_id));
	json_add(a, att, "endpoint", json_str(a, d->endpoint));
	json_add(a, att, "purpose", json_str(a, purpose));
	json_add(a, att, "decision", json_str(a, d->decision));
	json_add(a, att, "rule", json_str(a, d->rule));
	json_add(a, att, "occurred_at", json_str(a, astr(a, now)));
	json_add(a, att, "reason", json_str(a, d->reason));
	*decision = dec;
	*attestation = att;
}

char *
route_call_url(const struct model_route *r, int catalog)
{
	size_t n = strlen(r->base_url);
	int v1 = n >= 3 && !strcmp(r->base_url + n - 3, "/v1");

	if (r->provider == ROUTE_SUBSCRIPTION)
		return xasprintf("%s%s", r->base_url, catalog ? "/models" :
		    "/responses");
	if (r->provider == ROUTE_ANTHROPIC)
		return xasprintf("%s%s", r->base_url, catalog ?
		    (v1 ? "/models" : "/v1/models") :
		    (v1 ? "/messages" : "/v1/messages"));
	return xasprintf("%s%s", r->base_url, catalog ? "/models" :
	    "/chat/completions");
}

char *
route_endpoint(const struct model_route *r, int catalog)
{
	char *u = route_call_url(r, catalog);
	char *norm;

	if (endpoint_normalize(u, &norm) < 0)
		norm = NULL;
	free(u);
	return norm;
}

const char *
route_credential_ref(const struct model_route *r)
{
	if (r && r->provider == ROUTE_SUBSCRIPTION)
		return SUB_CREDENTIAL_REF;
	return !r ? NULL : r->key_env ? r->key_env : r->key_file ?
	    r->key_file : r->managed ? "managed-identity" : NULL;
}

int
route_unattended_ok(const struct model_route *r)
{
	const char *iso = route_isolation(r);

	return !strcmp(iso, "credential-free") ||
	    !strcmp(iso, "platform-isolated");
}

const char *
route_isolation(const struct model_route *r)
{
	if (!r || !r->base_url)
		return "not-configured";
	if (!r->key_env && !r->key_file && !r->managed && r->loopback &&
	    r->provider != ROUTE_SUBSCRIPTION)
		return "credential-free";
	if (r->managed && r->isolated)
		return "platform-isolated";
	return "application-scrubbed";
}

/* add: s to l (in a) unless it is there */
static void
add(struct arena *a, struct strs *l, const char *s)
{
	const char **v;

	if (!s || member(l, s))
		return;
	v = arena_alloc(a, (l->n + 1) * sizeof *v);
	if (l->n)
		memcpy(v, l->v, l->n * sizeof *v);
	v[l->n++] = astr(a, s);
	l->v = v;
}

int
policy_add_route(struct arena *a, struct policy_profile *p,
    const struct model_route *r)
{
	char *chat = route_endpoint(r, 0), *models = route_endpoint(r, 1);
	char *u = xasprintf("%s/responses", r->base_url), *resp = NULL;
	int rc = -1;

	if (chat && models && endpoint_normalize(u, &resp) == 0) {
		p->policy_id = aprintf(a, "%s-custom-api", p->platform_id);
		add(a, &p->endpoints, chat);
		if (r->provider == ROUTE_OPENAI)
			add(a, &p->endpoints, resp);
		add(a, &p->catalog, models);
		add(a, &p->credentials, route_credential_ref(r));
		rc = 0;
	}
	free(chat);
	free(models);
	free(resp);
	free(u);
	return rc;
}

/* words: l's words as one string, in a */
static struct jval *
words(struct arena *a, const struct strs *l)
{
	struct buf b;
	struct jval *v;

	buf_init(&b);
	for (size_t i = 0; i < l->n; i++)
		buf_printf(&b, "%s%s", b.len ? " " : "", l->v[i]);
	v = json_str(a, buf_cstr(&b));
	buf_release(&b);
	return v;
}

int
policy_custom_api(const struct model_route *r)
{
	struct platform_detection pd;
	struct policy_profile p;
	struct arena a;
	struct jval *t;
	int rc = -1;

	platform_detect(&pd);
	arena_init(&a);
	if (policy_load(&a, NULL, pd.id, &p) < 0 ||
	    policy_add_route(&a, &p, r) < 0)
		goto out;
	t = json_obj(&a);
	json_add(&a, t, "schema_version", json_str(&a,
	    "heartwood.policy-profile.v1"));
	json_add(&a, t, "policy_id", json_str(&a, p.policy_id));
	json_add(&a, t, "deny_egress_by_default", json_bool(&a, 1));
	json_add(&a, t, "allowed_model_endpoints", words(&a, &p.endpoints));
	json_add(&a, t, "allowed_model_catalog_endpoints",
	    words(&a, &p.catalog));
	json_add(&a, t, "allowed_capability_tiers", words(&a, &p.tiers));
	json_add(&a, t, "allowed_action_confirmation_modes",
	    words(&a, &p.modes));
	json_add(&a, t, "credential_allowlist", words(&a, &p.credentials));
	json_add(&a, t, "aggregate_count_floor", json_int(&a, 20));
	json_add(&a, t, "notes", json_str(&a, "written by hw setup for the "
	    "custom API route"));
	rc = config_set_table("policy", t);
out:
	arena_release(&a);
	return rc;
}

int
policy_for_route(struct arena *a, const struct jval *cfg,
    const char *platform, const struct model_route *r,
    struct policy_profile *p)
{
	const char *id = json_get_str(json_get(cfg, "policy"), "policy_id");
	size_t n = id ? strlen(id) : 0;
	int setup = !json_get(cfg, "policy") || (n > 11 &&
	    !strcmp(id + n - 11, "-custom-api"));

	/*
	 * the custom-api policy hw setup wrote belongs to the saved route,
	 * which the environment's route replaces as a whole
	 */
	if (r && r->from_env && setup)
		return policy_load(a, NULL, platform, p) < 0 ? -1 :
		    policy_add_route(a, p, r);
	return policy_load(a, cfg, platform, p);
}
