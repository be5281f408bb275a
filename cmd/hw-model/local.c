/* local.c - hw-model plan and select: the planner and the selection */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"
#define MODELS ".heartwood/models"
#define MANAGED_SCHEMA "heartwood.managed-model.v1"

int
local_selection(struct arena *a, const char **id, int64_t *port)
{
	struct jval *cfg;
	const struct jval *m;

	if (config_load(a, &cfg) < 0)
		return hw_err_set(HW_EXIT_CONFIG, "%s", hw_err_msg());
	m = json_get(cfg, "managed_model");
	if (port && json_get_int(m, "port", port) < 0)
		*port = LAUNCH_PORT;
	if (port && (*port < 1 || *port > 65535))
		return hw_err_set(HW_EXIT_CONFIG, CONFIG_FILE " [managed_model]"
		    " port is not 1 to 65535");
	if (*id)
		return 0;
	if (!(*id = json_get_str(m, "model_id")))
		return hw_err_set(HW_EXIT_CONFIG, "no model selected: name one "
		    "or run 'hw-model select ID'");
	return 0;
}

int
local_plan(const struct model_info *mi, struct gpu_inv *inv, int64_t *ram,
    struct resource_plan *p, struct arena *a)
{
	*ram = ram_available();
	memset(inv, 0, sizeof *inv);
	if (!mi->gguf && gpu_devices(inv, a) < 0)
		return -1;
	return resource_plan(mi, inv, *ram, p);
}

static void
print_plan_text(const struct model_info *mi, const struct gpu_inv *inv,
    const struct resource_plan *p)
{
	size_t i;

	printf("model     %s (%s, %lld bytes)\n", mi->id, mi->runtime,
	    (long long)mi->size);
	if (p->available > 0)
		printf("memory    %s, %lld bytes available (%lld usable)\n",
		    p->memory, (long long)p->available,
		    (long long)(p->available / 5 * 4));
	else
		printf("memory    %s, unknown\n", p->memory);
	for (i = 0; i < inv->n; i++)
		printf("gpu       %lld %s, %lld of %lld bytes free%s%s\n",
		    (long long)inv->v[i].index, inv->v[i].name,
		    (long long)inv->v[i].free, (long long)inv->v[i].total,
		    inv->v[i].partition ? ", partition " : "",
		    inv->v[i].partition ? inv->v[i].partition : "");
	printf("context   %lld tokens: %lld in, %lld out\n",
	    (long long)p->context, (long long)p->input, (long long)p->output);
	printf("messages  %lld characters at most\n",
	    (long long)p->message_chars);
	printf("estimate  %lld bytes\n", (long long)p->estimate);
	if (!mi->gguf)
		printf("vllm      tensor parallel %lld%s\n", (long long)p->tp,
		    p->eager ? ", --enforce-eager" : "");
}

static const char plan_usage[] =
    "usage: hw-model plan [MODEL-ID] [--json]\n";

int
manage_plan(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct model_info mi = { 0 };
	struct resource_plan p;
	struct gpu_inv inv;
	const char *id = NULL;
	struct arena a;
	int64_t ram;
	int c, json = 0, rc = -1;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'h')
			return fputs(plan_usage, stdout), prog_finish(PROG, 0);
		else
			return manage_usage_err(plan_usage);
	}
	if (argc - optind > 1)
		return manage_usage_err(plan_usage);
	id = argc > optind ? argv[optind] : NULL;
	arena_init(&a);
	if (local_selection(&a, &id, NULL) == 0 &&
	    model_info_load(MODELS, id, 0, &mi, &a) == 0 &&
	    (rc = local_plan(&mi, &inv, &ram, &p, &a)) == 0) {
		if (json)
			manage_print_json(resource_plan_json(&mi, &inv, ram,
			    &p, &a));
		else
			print_plan_text(&mi, &inv, &p);
	}
	model_info_release(&mi);
	arena_release(&a);
	return rc == 0 ? prog_finish(PROG, 0) : prog_fail(PROG);
}

static const char select_usage[] =
    "usage: hw-model select MODEL-ID [--port N]\n";

/* route_table: the agent's route to the runtime, confirmed by this user */
static struct jval *
route_table(int64_t port, struct arena *a)
{
	static const char *const what[3] = { "model", "base url", "key" };
	struct model_route r;
	struct jval *t;
	char url[64], fp[HW_HASH_LEN + 1];

	snprintf(url, sizeof url, "http://127.0.0.1:%lld/v1",
	    (long long)port);
	if (model_route_set(&r, LAUNCH_SERVED_ID, url, NULL, what, 0) < 0)
		return NULL;
	route_fingerprint(&r, fp);
	model_route_release(&r);
	if (trust_confirm("model_route", fp) < 0)
		return NULL;
	t = json_obj(a);
	json_add(a, t, "schema_version", json_str(a,
	    "heartwood.model-route.v1"));
	json_add(a, t, "source", json_str(a, "heartwood"));
	json_add(a, t, "model_id", json_str(a, LAUNCH_SERVED_ID));
	json_add(a, t, "base_url", json_str(a, url));
	return t;
}

static struct jval *
managed_table(const struct model_info *mi, int64_t port, struct arena *a)
{
	struct platform_detection pd;
	struct jval *t = json_obj(a);

	platform_detect(&pd);
	json_add(a, t, "schema_version", json_str(a, MANAGED_SCHEMA));
	json_add(a, t, "model_id", json_str(a, mi->id));
	json_add(a, t, "path", json_str(a, mi->dir));
	json_add(a, t, "runtime", json_str(a, mi->runtime));
	json_add(a, t, "served_model_id", json_str(a, LAUNCH_SERVED_ID));
	json_add(a, t, "qualification", json_str(a,
	    model_info_validated_on(mi, pd.id) ? "qualified" :
	    "unvalidated"));
	json_add(a, t, "platform_id", json_str(a, pd.id));
	json_add(a, t, "port", json_int(a, port));
	return t;
}

/*
 * port_policy: the default policy lists the managed runtime's endpoints
 * on port 8765 only; on another port they are added as hw setup adds a
 * custom API's ([policy] PLATFORM-custom-api)
 */
static int
port_policy(int64_t port)
{
	static const char *const what[3] = { "model", "base url", "key" };
	struct model_route r;
	char url[64];
	int rc;

	snprintf(url, sizeof url, "http://127.0.0.1:%lld/v1",
	    (long long)port);
	if (model_route_set(&r, LAUNCH_SERVED_ID, url, NULL, what, 0) < 0)
		return -1;
	rc = policy_custom_api(&r);
	model_route_release(&r);
	return rc;
}

static int
select_model(const char *id, int64_t port, struct arena *a)
{
	static const char *const names[] = { "model", "managed_model" };
	const struct jval *tables[2];
	struct model_info mi;
	struct project pr = { 0 };
	int rc;

	if (model_info_load(MODELS, id, 1, &mi, a) < 0)
		return -1;
	if (mi.context < MODEL_CONTEXT_MIN) {
		hw_err_set(HW_EXIT_CONFIG, "model '%s' has a context window "
		    "of %lld tokens, under the agent's minimum of %d: it is "
		    "for load and query tests only", id,
		    (long long)mi.context, MODEL_CONTEXT_MIN);
		model_info_release(&mi);
		return -1;
	}
	rc = project_open(&pr, 1);
	project_release(&pr);
	if (rc == 0 && (tables[0] = route_table(port, a)) &&
	    (tables[1] = managed_table(&mi, port, a)) &&
	    config_set_tables(names, tables, 2) == 0 &&
	    (port == LAUNCH_PORT || port_policy(port) == 0)) {
		struct jval *o = json_copy(a, tables[1]);

		json_add(a, o, "base_url", json_get(tables[0], "base_url"));
		manage_print_json(o);
	} else {
		rc = -1;
	}
	model_info_release(&mi);
	return rc;
}

int
manage_select(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int64_t port = LAUNCH_PORT;
	struct arena a;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'p' && parse_seq(optarg, &port) == 0 && port > 0 &&
		    port <= 65535)
			;
		else if (c == 'h')
			return fputs(select_usage, stdout),
			    prog_finish(PROG, 0);
		else
			return manage_usage_err(select_usage);
	}
	if (argc - optind != 1)
		return manage_usage_err(select_usage);
	arena_init(&a);
	rc = select_model(argv[optind], port, &a);
	arena_release(&a);
	return rc == 0 ? prog_finish(PROG, 0) : prog_fail(PROG);
}
