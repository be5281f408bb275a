/*
 * config.c - the project configuration, .heartwood/config.toml
 * (heartwood.project-config.v1), as far as the action review mode goes
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "conf/conf.h"

#define CONFIG CONFIG_FILE
#define CONFIG_LOCK ".heartwood/.config.lock"
#define CONFIG_MAX (1u << 20)

int
config_load(struct arena *a, struct jval **cfg)
{
	struct buf b;
	int rc = 0;

	*cfg = NULL;
	buf_init(&b);
	if (read_file(CONFIG, CONFIG_MAX, &b) < 0) {
		rc = errno == ENOENT ? 0 : -1;
	} else if (!(*cfg = toml_parse(a, b.p ? b.p : "", b.len, CONFIG))) {
		rc = -1;
	} else if ((*cfg)->t != J_OBJECT) {
		rc = hw_err_set(HW_EXIT_DATA, "%s is not a table", CONFIG);
	}
	buf_release(&b);
	return rc;
}

/*
 * A mode that lets sets run unreviewed counts only when this user chose it
 * here (trust.c): one that came with the project is Review Every Action.
 */
const char *
config_mode(const struct jval *cfg)
{
	return config_mode_unconfirmed(cfg) || !json_is_str(json_get(json_get(
	    cfg, "action"), "confirmation_mode"), "confirm-risky") ?
	    "always-confirm" : "confirm-risky";
}

int
config_mode_unconfirmed(const struct jval *cfg)
{
	return json_is_str(json_get(json_get(cfg, "action"),
	    "confirmation_mode"), "confirm-risky") &&
	    trust_confirmed("confirmation_mode", "confirm-risky") != 1;
}

/* emit_table writes v's scalars, then its tables under [prefix.key] */
static int
emit_table(struct buf *b, const struct jval *v, const char *prefix)
{
	const struct jval *x;
	char name[512];
	size_t i;
	int pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < v->n; i++) {
			x = v->u.m[i].v;
			if ((x->t == J_OBJECT) != pass)
				continue;
			if (x->t == J_OBJECT) {
				snprintf(name, sizeof name, "%s%s%s", prefix,
				    *prefix ? "." : "", v->u.m[i].k);
				buf_printf(b, "\n[%s]\n", name);
				if (emit_table(b, x, name) < 0)
					return -1;
				continue;
			}
			buf_printf(b, "%s = ", v->u.m[i].k);
			if (x->t == J_STRING)
				toml_quote(b, x->u.s);
			else if (x->t == J_INT)
				buf_add(b, x->u.s, x->n);
			else if (x->t == J_TRUE || x->t == J_FALSE)
				buf_adds(b, x->t == J_TRUE ? "true" : "false");
			else
				return hw_err_set(HW_EXIT_DATA, "%s: cannot "
				    "rewrite the value of '%s'", CONFIG,
				    v->u.m[i].k);
			buf_addc(b, '\n');
		}
	return 0;
}

/* config_update loads the configuration, edits it and writes it back */
static int
config_update(void (*edit)(struct arena *, struct jval *, const void *),
    const void *ctx)
{
	struct platform_detection pd;
	struct arena a;
	struct jval *cfg;
	struct buf b;
	int lock, rc = -1;

	if ((lock = lock_open(CONFIG_LOCK, 0)) < 0)
		return -1;
	arena_init(&a);
	buf_init(&b);
	if (config_load(&a, &cfg) < 0)
		goto out;
	if (!cfg) {
		cfg = json_obj(&a);
		json_add(&a, cfg, "schema_version", json_str(&a,
		    "heartwood.project-config.v1"));
		platform_detect(&pd);
		json_add(&a, cfg, "platform_id", json_str(&a, pd.id));
	}
	edit(&a, cfg, ctx);
	buf_adds(&b, "# heartwood project configuration\n");
	if (emit_table(&b, cfg, "") == 0)
		rc = atomic_replace(CONFIG, b.p, b.len);
out:
	buf_release(&b);
	arena_release(&a);
	lock_close(lock);
	return rc;
}

static void
edit_mode(struct arena *a, struct jval *cfg, const void *mode)
{
	struct jval *act;

	if (!(act = json_get(cfg, "action")) || act->t != J_OBJECT) {
		act = json_obj(a);
		json_set(a, cfg, "action", act);
	}
	json_set(a, act, "schema_version", json_str(a,
	    "heartwood.action-settings.v1"));
	json_set(a, act, "confirmation_mode", json_str(a, mode));
}

int
config_set_mode(const char *mode)
{
	if (strcmp(mode, "always-confirm") && strcmp(mode, "confirm-risky"))
		return hw_err_set(HW_EXIT_USAGE, "unknown mode '%s'", mode);
	return config_update(edit_mode, mode);
}

static void
edit_route(struct arena *a, struct jval *cfg, const void *ctx)
{
	const char *const *v = ctx;
	static const char *const keys[] = { "source", "provider", "model_id",
		"base_url", "api_key_env" };
	struct jval *m = json_obj(a);

	json_add(a, m, "schema_version", json_str(a,
	    "heartwood.model-route.v1"));
	for (size_t i = 0; i < 5; i++)
		if (v[i])
			json_add(a, m, keys[i], json_str(a, v[i]));
	json_set(a, cfg, "model", m);
}

int
config_set_route(const char *source, const char *provider,
    const char *model_id, const char *base_url, const char *key_env)
{
	/* openai, the default, is not written: older routes stay the same */
	const char *v[] = { source, provider && strcmp(provider, "openai") ?
	    provider : NULL, model_id, base_url, key_env };

	return config_update(edit_route, v);
}

static void
edit_table(struct arena *a, struct jval *cfg, const void *ctx)
{
	const void *const *v = ctx;

	json_set(a, cfg, v[0], json_copy(a, v[1]));
}

int
config_set_table(const char *name, const struct jval *table)
{
	const void *v[] = { name, table };

	return config_update(edit_table, v);
}

struct tables {
	const char *const *names;
	const struct jval *const *tables;
	size_t n;
};

static void
edit_tables(struct arena *a, struct jval *cfg, const void *ctx)
{
	const struct tables *t = ctx;

	for (size_t i = 0; i < t->n; i++)
		json_set(a, cfg, t->names[i], json_copy(a, t->tables[i]));
}

int
config_set_tables(const char *const *names, const struct jval *const *tables,
    size_t n)
{
	struct tables t = { names, tables, n };

	return config_update(edit_tables, &t);
}

const char *
config_signer_profile(const struct jval *cfg)
{
	return json_get_str(json_get(cfg, "audit"), "signer_profile");
}

/* drop removes member k of object o, if there is one */
static void
drop(struct jval *o, const char *k)
{
	for (size_t i = 0; o && o->t == J_OBJECT && i < o->n; i++)
		if (!strcmp(o->u.m[i].k, k)) {
			memmove(&o->u.m[i], &o->u.m[i + 1], (o->n - i - 1) *
			    sizeof o->u.m[0]);
			o->n--;
			return;
		}
}

static void
edit_signer(struct arena *a, struct jval *cfg, const void *id)
{
	struct jval *au = json_get(cfg, "audit");

	if (!id) {
		drop(au, "signer_profile");
		if (au && au->t == J_OBJECT && !au->n)
			drop(cfg, "audit");
		return;
	}
	if (!au || au->t != J_OBJECT) {
		au = json_obj(a);
		json_set(a, cfg, "audit", au);
	}
	json_set(a, au, "signer_profile", json_str(a, id));
}

int
config_set_signer_profile(const char *id)
{
	return config_update(edit_signer, id);
}
