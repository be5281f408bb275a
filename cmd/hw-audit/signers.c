/*
 * signers.c - hw-audit signer list, select and default: the profiles of
 * the signer registry, and the one this project selected for checkpoints
 */
#include <string.h>

#include "verbs.h"

/* profile_json appends one profile as a line of canonical JSON */
static void
profile_json(struct buf *b, const struct signer_registry *r,
    const struct signer_profile *p, const char *selected)
{
	struct arena a;
	struct jval *o;

	arena_init(&a);
	o = json_obj(&a);
	json_add(&a, o, "algorithm", json_str(&a, p->algorithm));
	json_add(&a, o, "ca_bundle", p->ca_bundle ? json_str(&a,
	    p->ca_bundle) : json_new(&a, J_NULL));
	json_add(&a, o, "default", json_bool(&a, !strcmp(p->id,
	    r->default_profile)));
	json_add(&a, o, "endpoint", json_str(&a, p->endpoint));
	json_add(&a, o, "key_id", json_str(&a, p->key_id));
	json_add(&a, o, "key_version", json_str(&a, p->key_version));
	json_add(&a, o, "mode", json_str(&a, p->mode));
	json_add(&a, o, "profile_id", json_str(&a, p->id));
	json_add(&a, o, "public_key_sha256", json_str(&a,
	    p->public_key_sha256));
	json_add(&a, o, "selected", json_bool(&a, selected &&
	    !strcmp(p->id, selected)));
	json_add(&a, o, "signer_id", json_str(&a, p->signer_id));
	json_add(&a, o, "trusted_public_key", json_str(&a,
	    p->trusted_public_key));
	json_canon(b, o);
	buf_addc(b, '\n');
	arena_release(&a);
}

static int
no_registry(void)
{
	return hw_err_set(HW_EXIT_FAIL, "no checkpoint signer registry found "
	    "(set %s, or run 'hw-audit signer init-local')",
	    SIGNER_REGISTRY_ENV);
}

int
audit_cmd_signer_list(const struct audit_cmd *c, FILE *out)
{
	struct signer_registry r;
	struct jval *cfg = NULL;
	struct arena a;
	struct buf b;
	int rc = -1;

	arena_init(&a);
	buf_init(&b);
	if (registry_load(&r, c->registry) < 0)
		goto out;
	if (!r.path) {
		no_registry();
		goto out;
	}
	if (config_load(&a, &cfg) < 0)
		goto out;
	for (size_t i = 0; i < r.n; i++)
		profile_json(&b, &r, &r.profiles[i],
		    config_signer_profile(cfg));
	fwrite(b.p, 1, b.len, out);
	rc = 0;
out:
	registry_release(&r);
	buf_release(&b);
	arena_release(&a);
	return rc;
}

/* unselect removes the project's selection, if it has a store and one */
static int
unselect(struct project *pr)
{
	struct jval *cfg = NULL;
	struct arena a;
	int rc = 0;

	if (project_open(pr, 0) < 0)
		return hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
	arena_init(&a);
	if (config_load(&a, &cfg) < 0)
		rc = -1;
	else if (config_signer_profile(cfg))
		rc = config_set_signer_profile(NULL);
	arena_release(&a);
	return rc;
}

int
audit_cmd_signer_select(const char *id, FILE *out)
{
	struct signer_registry r;
	struct signer_profile *p;
	struct project pr = { 0 };
	struct buf b;
	int rc = -1;

	buf_init(&b);
	if (registry_load(&r, NULL) < 0)
		goto out;
	/* the profile must be usable: its key loads and is the pinned one */
	if (registry_profile(&r, id, &p) < 0 || (id ? project_open(&pr, 1) <
	    0 || config_set_signer_profile(id) < 0 : unselect(&pr) < 0))
		goto out;
	profile_json(&b, &r, p, id);
	fwrite(b.p, 1, b.len, out);
	rc = 0;
out:
	project_release(&pr);
	registry_release(&r);
	buf_release(&b);
	return rc;
}
