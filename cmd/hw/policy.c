/*
 * policy.c - hw policy and hw platform: the model policy and the platform
 * adapter, as the agent sees them (hw-policy(7))
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "setup.h"

static int
emit(const struct jval *v)
{
	struct buf b;
	int rc = 0;

	buf_init(&b);
	json_canon(&b, v);
	buf_addc(&b, '\n');
	if (fwrite(b.p, 1, b.len, stdout) != b.len || fflush(stdout) != 0)
		rc = hw_err_sys("cannot write 'stdout'");
	buf_release(&b);
	return rc;
}

static int
policy_usage(void)
{
	return hw_err_set(HW_EXIT_USAGE, "usage: hw policy [show] | normalize "
	    "ENDPOINT | evaluate ENDPOINT [--catalog] [--tier TIER] [--mode "
	    "MODE] [--credential REF]");
}

/* profile: the policy of the active route (or the default without one) */
static int
profile(struct arena *a, struct policy_profile *p, struct model_route *r,
    int *routed, struct jval **cfgp, const char **why)
{
	struct platform_detection pd;
	struct jval *cfg;

	platform_detect(&pd);
	*routed = model_route_from_env(r) == 0;
	if (why)
		*why = *routed ? NULL : json_str(a, hw_err_msg())->u.s;
	if (config_load(a, &cfg) < 0)
		return -1;
	if (cfgp)
		*cfgp = cfg;
	return policy_for_route(a, cfg, pd.id, *routed ? r : NULL, p);
}

/*
 * hw policy show: the profile and its decision on the active route, as
 * the agent's next turn would record it
 */
static int
show(void)
{
	struct model_route r = { 0 };
	struct policy_profile p;
	struct policy_decision d;
	struct arena a;
	struct jval *o, *dec, *att, *cfg;
	const char *tier = getenv("HW_CAPABILITY_TIER"), *why;
	char *ep;
	int routed, rc = -1;

	arena_init(&a);
	if (profile(&a, &p, &r, &routed, &cfg, &why) < 0)
		goto out;
	o = json_obj(&a);
	json_add(&a, o, "policy", policy_to_json(&a, &p));
	json_add(&a, o, "credential_isolation", json_str(&a,
	    route_isolation(routed ? &r : NULL)));
	/* why there is no route: never a key, which no message names */
	json_add(&a, o, "route_error", why ? json_str(&a, why) :
	    json_new(&a, J_NULL));
	if (routed) {
		ep = xasprintf("%s/chat/completions", r.base_url);
		rc = policy_evaluate(&a, &p, ep, 0, tier && *tier ? tier :
		    "supervised", config_mode(cfg), route_credential_ref(&r),
		    &d);
		free(ep);
		if (rc < 0)
			goto out;
		policy_record(&a, &p, &d, "readiness-model-route", NULL,
		    "readiness", tier && *tier ? tier : "supervised", &dec,
		    &att);
		json_add(&a, o, "decision", dec);
	} else
		json_add(&a, o, "decision", json_new(&a, J_NULL));
	rc = emit(o);
out:
	model_route_release(&r);
	arena_release(&a);
	return rc;
}

static int
normalize(const char *ep)
{
	char *n;

	if (endpoint_normalize(ep, &n) < 0)
		return -1;
	puts(n);
	free(n);
	return fflush(stdout) ? hw_err_sys("cannot write 'stdout'") : 0;
}

/* evaluate: the decision on ep; 0 allow, 1 deny, -1 an error */
static int
evaluate(int n, char **av)
{
	const char *tier = "supervised", *mode = "always-confirm";
	const char *cred = NULL, **slot;
	struct model_route r = { 0 };
	struct policy_profile p;
	struct policy_decision d;
	struct arena a;
	struct jval *o, *dec, *att;
	int catalog = 0, routed, rc = -1;

	static const char *const names[] = { "--tier", "--mode",
		"--credential" };
	const char **slots[] = { &tier, &mode, &cred };

	for (int i = 1; i < n; i++) {
		size_t k, len;

		if (!strcmp(av[i], "--catalog")) {
			catalog = 1;
			continue;
		}
		for (k = 0; k < 3; k++) {
			len = strlen(names[k]);
			if (!strncmp(av[i], names[k], len) && (av[i][len] ==
			    '=' || (!av[i][len] && i + 1 < n)))
				break;
		}
		if (k == 3)
			return policy_usage();
		slot = slots[k];
		*slot = av[i][len] == '=' ? av[i] + len + 1 : av[++i];
	}
	arena_init(&a);
	if (profile(&a, &p, &r, &routed, NULL, NULL) < 0 ||
	    policy_evaluate(&a, &p, av[0], catalog, tier, mode, cred, &d) < 0)
		goto out;
	policy_record(&a, &p, &d, "hw-policy-evaluate", NULL, catalog ?
	    "catalog-discovery" : "evaluate", tier, &dec, &att);
	o = json_obj(&a);
	json_add(&a, o, "decision", dec);
	json_add(&a, o, "attestation", att);
	if ((rc = emit(o)) == 0 && strcmp(d.decision, "allow"))
		rc = hw_err_set(HW_EXIT_FAIL, "%s", d.reason);
out:
	model_route_release(&r);
	arena_release(&a);
	return rc;
}

int
wf_policy(int n, char **av)
{
	if (n == 0 || (n == 1 && !strcmp(av[0], "show")))
		return show();
	if (!strcmp(av[0], "normalize") && n == 2)
		return normalize(av[1]);
	if (!strcmp(av[0], "evaluate") && n >= 2)
		return evaluate(n - 1, av + 1);
	return policy_usage();
}

/* hw platform: the detected platform and its adapter's manifest */
int
wf_platform(int n, char **av)
{
	struct platform_detection d;
	struct arena a;
	struct jval *o, *conf;
	const char *id;
	int rc;

	if (n > 1 || (n == 1 && strcmp(av[0], "show")))
		return hw_err_set(HW_EXIT_USAGE, "usage: hw platform [show]");
	platform_detect(&d);
	arena_init(&a);
	o = json_obj(&a);
	id = d.id;
	json_add(&a, o, "schema_version", json_str(&a,
	    "heartwood.platform-detection.v1"));
	json_add(&a, o, "platform_id", json_str(&a, id));
	conf = json_new(&a, J_FLOAT);
	conf->u.d = d.confidence;
	json_add(&a, o, "confidence", conf);
	json_add(&a, o, "evidence", json_str(&a, d.evidence));
	json_add(&a, o, "recognised", d.recognised ? json_str(&a,
	    d.recognised) : json_new(&a, J_NULL));
	json_add(&a, o, "note", d.note ? json_str(&a, d.note) :
	    json_new(&a, J_NULL));
	json_add(&a, o, "capabilities", platform_manifest(&a,
	    platform_adapter(id)));
	rc = emit(o);
	arena_release(&a);
	return rc;
}
