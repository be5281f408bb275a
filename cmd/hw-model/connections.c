/*
 * connections.c - hw-model connections and discover: the connection
 * catalog, and a connection's models behind the policy's catalog
 * allowlist, the decision recorded, the answer cached
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "catalog.h"
#include "conf/conf.h"
#include "manage.h"
#include "model/model.h"
#include "store/store.h"

#define PROG "hw-model"
#define DECISION_LOG ".heartwood/audit/model-catalog.jsonl"
#define DECISION_LOG_ID "project-model-catalog"
#define CACHE_DIR ".heartwood/cache/model-catalog"
#define CACHE_SCHEMA "heartwood.model-catalog-cache.v1"
#define CACHE_TTL_MS 300000
#define CACHE_MAX (32u << 20)
#define TIMEOUT_MS 30000L

/* wall_ms: the wall clock, which a cache's age is measured by */
static int64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int
mkdir_private(const char *path)
{
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return hw_err_sys("cannot create '%s'", path);
	return ensure_dir(path);
}

/* ---- hw-model connections ---- */

static const char connections_usage[] =
    "usage: hw-model connections [--json]\n";

static void
show_text(const struct jval *doc)
{
	const struct jval *l = json_get(doc, "connections");
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; i < l->n; i++) {
		const struct jval *c = l->u.a[i];
		const char *cat = json_get_str(c, "catalog_endpoint");

		buf_clear(&b);
		buf_printf(&b, "%-24s %-17s %-9s %s\n",
		    json_get_str(c, "connection_id"),
		    json_get_str(c, "protocol"), json_get_str(c, "source"),
		    cat ? cat : json_get_str(c, "base_url"));
		tty_put(stdout, b.p, b.len, 1);
	}
	buf_release(&b);
}

int
verb_connections(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct platform_detection pd;
	struct jval *doc;
	struct arena a;
	int c, json = 0, rc;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'h')
			return fputs(connections_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(connections_usage);
	}
	if (optind != argc)
		return manage_usage_err(connections_usage);
	platform_detect(&pd);
	arena_init(&a);
	if ((rc = connections_load(&a, pd.id, &doc)) == 0) {
		if (json)
			manage_print_json(doc);
		else
			show_text(doc);
	}
	arena_release(&a);
	return rc < 0 ? prog_fail(PROG) : prog_finish(PROG, 0);
}

/* ---- hw-model discover ---- */

static const char discover_usage[] =
    "usage: hw-model discover CONNECTION [--refresh]\n";

struct disc {
	struct arena a;
	const struct jval *conn;
	const char *id, *url, *cred;
	char fp[SHA256_HEX + 1];	/* what the cache is valid for */
	char *cache;
};

/* record: the policy's decision, in the project's catalog decision log */
static int
record(struct disc *d, const struct policy_profile *p,
    const struct policy_decision *pd, const char *tier)
{
	struct jval *dec, *att, *draft = json_obj(&d->a);
	struct jval *pl = json_obj(&d->a);
	char rnd[17], *did;
	struct buf ack;
	int rc;

	if (random_hex(rnd, 8) < 0)
		return -1;
	did = xasprintf("model-catalog-%s-%s", d->id, rnd);
	policy_record(&d->a, p, pd, did, NULL, "catalog-discovery", tier, &dec,
	    &att);
	free(did);
	json_add(&d->a, pl, "connection_id", json_str(&d->a, d->id));
	json_add(&d->a, pl, "decision", dec);
	json_add(&d->a, pl, "attestation", att);
	json_add(&d->a, draft, "kind", json_str(&d->a,
	    "model_call.decision.recorded"));
	json_add(&d->a, draft, "payload", pl);
	if (manage_mkdir_heartwood() < 0 || mkdir_private(".heartwood/audit") <
	    0)
		return -1;
	buf_init(&ack);
	rc = chainlog_append(DECISION_LOG, DECISION_LOG_ID, &draft, 1, &ack);
	buf_release(&ack);
	return rc;
}

/* decide: the catalog allowlist's decision, recorded; -1 when denied */
static int
decide(struct disc *d)
{
	struct platform_detection pdt;
	struct policy_profile p;
	struct policy_decision pd;
	struct jval *cfg;
	const char *tier = getenv("HW_CAPABILITY_TIER");

	if (!tier || !*tier)
		tier = "supervised";
	platform_detect(&pdt);
	if (config_load(&d->a, &cfg) < 0 ||
	    policy_load(&d->a, cfg, pdt.id, &p) < 0 ||
	    policy_evaluate(&d->a, &p, d->url, 1, tier, config_mode(cfg),
	    d->cred, &pd) < 0 || record(d, &p, &pd, tier) < 0)
		return -1;
	if (strcmp(pd.decision, "allow"))
		return hw_err_set(HW_EXIT_FAIL, "discovery of '%s' refused: %s",
		    d->id, pd.reason);
	return 0;
}

static void
fingerprint(struct disc *d)
{
	struct jval *o = json_obj(&d->a);
	struct buf b;

	json_add(&d->a, o, "url", json_str(&d->a, d->url));
	json_add(&d->a, o, "connection", json_copy(&d->a, d->conn));
	buf_init(&b);
	json_canon(&b, o);
	sha256_hex(b.p, b.len, d->fp);
	buf_release(&b);
}

/* without_mac: the canonical bytes of o's members but "mac" */
static void
without_mac(struct arena *a, const struct jval *o, struct buf *b)
{
	struct jval *c = json_obj(a);

	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->u.m[i].k, "mac"))
			json_add(a, c, o->u.m[i].k, o->u.m[i].v);
	json_canon(b, c);
}

/* cached: the fresh models this user's heartwood cached, or NULL */
static const struct jval *
cached(struct disc *d)
{
	static const char *const keys[] = { "connection_id", "fetched_at_ms",
		"fingerprint", "mac", "models", "schema_version", NULL };
	const struct jval *o, *m;
	char mac[65];
	int64_t at, now = wall_ms();
	struct buf b;
	int ok;

	if (!(o = read_json_file(d->cache, CACHE_MAX, &d->a)))
		return NULL;	/* missing or unreadable: asked again */
	if (json_keys_exact(o, keys) < 0 || !json_is_str(json_get(o,
	    "schema_version"), CACHE_SCHEMA) || !json_is_str(json_get(o,
	    "fingerprint"), d->fp) || json_get_int(o, "fetched_at_ms",
	    &at) < 0 || at > now || now - at >= CACHE_TTL_MS ||
	    !(m = json_get(o, "models")) || m->t != J_ARRAY)
		return NULL;
	buf_init(&b);
	without_mac(&d->a, o, &b);
	ok = user_mac("model-catalog", b.p, b.len, mac) == 0 &&
	    json_is_str(json_get(o, "mac"), mac);
	buf_release(&b);
	return ok ? m : NULL;
}

/* store: the models in the cache, owner-only, no link followed */
static int
store(struct disc *d, struct jval *models)
{
	struct jval *o = json_obj(&d->a);
	struct stat st;
	char mac[65];
	struct buf b;
	int rc;

	json_add(&d->a, o, "connection_id", json_str(&d->a, d->id));
	json_add(&d->a, o, "fetched_at_ms", json_int(&d->a, wall_ms()));
	json_add(&d->a, o, "fingerprint", json_str(&d->a, d->fp));
	json_add(&d->a, o, "models", models);
	json_add(&d->a, o, "schema_version", json_str(&d->a, CACHE_SCHEMA));
	buf_init(&b);
	without_mac(&d->a, o, &b);
	rc = user_mac("model-catalog", b.p, b.len, mac);
	buf_release(&b);
	if (rc < 0)
		return -1;
	json_add(&d->a, o, "mac", json_str(&d->a, mac));
	if (mkdir_private(".heartwood/cache") < 0 ||
	    mkdir_private(CACHE_DIR) < 0)
		return -1;
	/* a link planted where the cache goes is removed, never followed */
	if (lstat(d->cache, &st) == 0 && !S_ISREG(st.st_mode) &&
	    unlink(d->cache) < 0)
		return hw_err_sys("cannot replace '%s'", d->cache);
	return atomic_write_json(d->cache, o);
}

static int
print_models(const struct jval *m)
{
	for (size_t i = 0; i < m->n; i++)
		manage_print_json(m->u.a[i]);
	return fflush(stdout) ? hw_err_sys("cannot write 'stdout'") : 0;
}

/* static_list: a static connection's models, from the catalog alone */
static struct jval *
static_list(struct disc *d)
{
	const struct jval *sm = json_get(d->conn, "static_models");
	struct jval *out = json_new(&d->a, J_ARRAY);
	const char *pre = json_get_str(d->conn, "model_prefix");

	for (size_t i = 0; i < sm->n; i++) {
		struct jval *e = json_obj(&d->a);
		char *x = xasprintf("%s%s", pre, sm->u.a[i]->u.s);

		json_add(&d->a, e, "schema_version", json_str(&d->a,
		    MODEL_CATALOG_SCHEMA));
		json_add(&d->a, e, "connection_id", json_str(&d->a, d->id));
		json_add(&d->a, e, "model_id", sm->u.a[i]);
		json_add(&d->a, e, "display_name", sm->u.a[i]);
		json_add(&d->a, e, "execution_model", json_str(&d->a, x));
		json_add(&d->a, e, "availability", json_str(&d->a,
		    "available"));
		json_add(&d->a, e, "reason", json_new(&d->a, J_NULL));
		json_add(&d->a, e, "context_window", json_new(&d->a, J_NULL));
		json_add(&d->a, e, "supports_tools", json_new(&d->a, J_NULL));
		json_push(&d->a, out, e);
		free(x);
	}
	return out;
}

static int
fetch(struct disc *d, struct jval **out)
{
	struct discover_req r = {
		.connection_id = d->id, .url = d->url,
		.protocol = json_get_str(d->conn, "protocol"),
		.api_version = json_get_str(d->conn, "api_version"),
		.prefix = json_get_str(d->conn, "model_prefix"),
		.timeout_ms = TIMEOUT_MS, .retries = 1,
	};
	char *key;

	if (connection_key(d->conn, &key) < 0)
		return -1;
	r.key = key;
	*out = model_discover(&r, &d->a);
	if (key) {
		mem_wipe(key, strlen(key));
		free(key);
	}
	return *out ? 0 : -1;
}

static int
discover(struct disc *d, const char *id, int refresh)
{
	struct platform_detection pd;
	const struct jval *doc, *hit;
	struct jval *models, *all;
	const char *proto;

	platform_detect(&pd);
	if (connections_load(&d->a, pd.id, &all) < 0)
		return -1;
	doc = all;
	if (!(d->conn = connection_find(doc, id)))
		return hw_err_set(HW_EXIT_NOINPUT, "no connection '%.64s' "
		    "('hw-model connections' lists them)", id);
	d->id = json_get_str(d->conn, "connection_id");
	proto = json_get_str(d->conn, "protocol");
	if (!strcmp(proto, "static"))
		return print_models(static_list(d));
	if (!strcmp(proto, "subscription"))
		return hw_err_set(HW_EXIT_USAGE, "connection '%s': a "
		    "subscription connection has no model list to discover",
		    d->id);
	d->url = json_get_str(d->conn, "catalog_endpoint");
	d->cred = connection_credential_ref(d->conn);
	/* the policy decides before any byte leaves, even from the cache */
	if (decide(d) < 0)
		return -1;
	fingerprint(d);
	d->cache = xasprintf("%s/%s.json", CACHE_DIR, d->id);
	if (!refresh && (hit = cached(d)))
		return print_models(hit);
	if (fetch(d, &models) < 0 || store(d, models) < 0)
		return -1;
	return print_models(models);
}

int
verb_discover(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "refresh", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct disc d = { 0 };
	int c, refresh = 0, rc;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'r')
			refresh = 1;
		else if (c == 'h')
			return fputs(discover_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(discover_usage);
	}
	if (argc - optind != 1)
		return manage_usage_err(discover_usage);
	arena_init(&d.a);
	rc = discover(&d, argv[optind], refresh);
	free(d.cache);
	arena_release(&d.a);
	return rc < 0 ? prog_fail(PROG) : prog_finish(PROG, 0);
}
