/*
 * project.c - the project routes (readiness, capabilities, the startup
 * plan, "Use this project") and the action settings routes
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/gw.h"
#include "tui/tui.h"

/*
 * report parses into a what hw doctor prints: its readiness report
 * (iface NULL) or the startup plan for iface and port, whose platform,
 * capabilities and phase are therefore those of every other interface
 */
static struct jval *
report(struct arena *a, const char *iface, long port)
{
	char *mem = NULL, err[128];
	size_t n = 0;
	FILE *f = open_memstream(&mem, &n);
	struct jval *v = NULL;

	if (!f)
		return NULL;
	if (iface)
		term_plan(f, iface, (int)port, 0);
	else
		term_doctor(f, 1);
	fclose(f);
	if (mem)
		v = json_parse(a, mem, n, err, sizeof err);
	free(mem);
	return v;
}

/*
 * here: the startup plan for iface, reached through this gateway's own
 * URL unless the caller asked for another port
 */
static struct jval *
here(struct req *r, struct arena *a, const char *iface, long port,
    int asked)
{
	struct jval *v = report(a, iface, port);

	if (v && !asked && !strcmp(iface, "web"))
		json_set(a, v, "access_url", json_str(a, r->gw->url));
	return v;
}

/* reply_plan: 200 with v, or 500 when hw doctor's output was no JSON */
static enum MHD_Result
reply_plan(struct req *r, struct jval *v)
{
	if (!v)
		return reply_error(r, 500, NULL, "the readiness report could "
		    "not be made");
	return reply_json(r, 200, v);
}

static enum MHD_Result
startup(struct req *r)
{
	char iface[16] = "web", port[8] = "8767", *end;
	struct arena a;
	long pn;
	int ki = query_get(r, "interface", iface, sizeof iface);
	int kp = query_get(r, "port", port, sizeof port);
	enum MHD_Result ret;

	if (ki < 0 || (strcmp(iface, "terminal") && strcmp(iface, "web") &&
	    strcmp(iface, "notebook")))
		return reply_error(r, 422, NULL, "`interface` must be "
		    "terminal, web or notebook");
	pn = strtol(port, &end, 10);
	if (kp < 0 || *end || end == port || pn < 1 || pn > 65535)
		return reply_error(r, 400, NULL, "`port` must be an integer "
		    "1-65535");
	arena_init(&a);
	ret = reply_plan(r, here(r, &a, iface, pn, kp > 0));
	arena_release(&a);
	return ret;
}

static enum MHD_Result
initialize(struct req *r)
{
	struct project p = { 0 };
	struct arena a;
	struct jval *v = NULL;
	char err[128];
	enum MHD_Result ret;

	arena_init(&a);
	if (r->body.len && !valid_utf8(r->body.p, r->body.len))
		ret = reply_error(r, 400, NULL, "the request body is not "
		    "UTF-8");
	else if (r->body.len && !(v = json_parse(&a, r->body.p, r->body.len,
	    err, sizeof err)))
		ret = reply_error(r, 400, NULL, "the request body is not "
		    "JSON: %s", err);
	else if (r->body.len && (v->t != J_OBJECT || v->n))
		ret = reply_error(r, 422, NULL, "request contains unsupported "
		    "fields");
	else if (project_open(&p, 1) < 0)
		ret = reply_hw(r);
	else
		ret = reply_plan(r, here(r, &a, "web", 8767, 0));
	project_release(&p);
	arena_release(&a);
	return ret;
}

enum MHD_Result
project_route(struct req *r, const char *rest, int get, int post)
{
	struct arena a;
	struct jval *v;
	enum MHD_Result ret;

	if (!strcmp(rest, "initialize"))
		return post ? initialize(r) : reply_405(r, "POST");
	if (strcmp(rest, "readiness") && strcmp(rest, "capabilities") &&
	    strcmp(rest, "startup"))
		return reply_error(r, 404, NULL, "unknown route");
	if (!get)
		return reply_405(r, "GET, HEAD");
	if (!strcmp(rest, "startup"))
		return startup(r);
	arena_init(&a);
	v = report(&a, NULL, 0);
	ret = reply_plan(r, !strcmp(rest, "readiness") ? v : json_get(json_get(
	    v, "platform"), "capabilities"));
	arena_release(&a);
	return ret;
}

static struct jval *
mode_entry(struct arena *a, const char *mode, const char *value,
    const char *label)
{
	struct jval *m = json_obj(a);

	json_add(a, m, "mode", json_str(a, mode));
	json_add(a, m, "value", json_str(a, value));
	json_add(a, m, "label", json_str(a, label));
	json_add(a, m, "allowed", json_bool(a, 1));
	return m;
}

static enum MHD_Result
action_settings(struct req *r)
{
	struct arena a;
	struct jval *cfg = NULL, *o, *modes;
	enum MHD_Result ret;

	arena_init(&a);
	if (config_load(&a, &cfg) < 0) {
		arena_release(&a);
		return reply_hw(r);
	}
	o = json_obj(&a);
	json_add(&a, o, "confirmation_mode", json_str(&a, config_mode(cfg)));
	json_add(&a, o, "scope_description", json_str(&a, "Applies to every "
	    "session of this project."));
	modes = json_new(&a, J_ARRAY);
	json_push(&a, modes, mode_entry(&a, "always-confirm", "ask-every-time",
	    "Review Every Action"));
	json_push(&a, modes, mode_entry(&a, "confirm-risky",
	    "auto-approve-low-risk", "Low-Risk Automation"));
	json_add(&a, o, "modes", modes);
	ret = reply_json(r, 200, o);
	arena_release(&a);
	return ret;
}

static enum MHD_Result
action_set(struct req *r)
{
	struct arena a;
	struct jval *v;
	char err[128];
	const char *mode;
	enum MHD_Result ret;

	arena_init(&a);
	if (!valid_utf8(r->body.p ? r->body.p : "", r->body.len))
		ret = reply_error(r, 400, NULL, "the request body is not "
		    "UTF-8");
	else if (!(v = json_parse(&a, r->body.p ? r->body.p : "", r->body.len,
	    err, sizeof err)))
		ret = reply_error(r, 400, NULL, "the request body is not "
		    "JSON: %s", err);
	else if (v->t != J_OBJECT || (v->n && (v->n != 1 ||
	    strcmp(v->u.m[0].k, "mode"))))
		ret = reply_error(r, 422, NULL, "request contains unsupported "
		    "fields");
	else if (!json_get(v, "mode"))
		ret = reply_error(r, 422, NULL, "`mode` is required");
	else if (!(mode = json_get_str(v, "mode")))
		ret = reply_error(r, 422, NULL, "`mode` must be a string");
	else if (strcmp(mode, "always-confirm") && strcmp(mode,
	    "confirm-risky"))
		ret = reply_error(r, 422, NULL, "`mode` must be always-confirm "
		    "or confirm-risky");
	else if (actions_set_mode(mode) < 0)
		ret = reply_error(r, hw_err_code() == HW_EXIT_BUSY ? 409 : 422,
		    NULL, "%s", hw_err_msg());
	else {
		arena_release(&a);
		return action_settings(r);
	}
	arena_release(&a);
	return ret;
}

/*
 * the specialist catalogue as the agent reads it (specialists_load); an
 * invalid file is the installation's fault: 500 naming it
 */
static enum MHD_Result
specialist_settings(struct req *r)
{
	enum MHD_Result ret;
	struct buf b;

	buf_init(&b);
	ret = specialists_list_json(&b) < 0 ? reply_error(r, 500, NULL, "%s",
	    hw_err_msg()) : reply_buf(r, 200, &b);
	buf_release(&b);
	return ret;
}

enum MHD_Result
settings_route(struct req *r, const char *rest, int get, int put)
{
	if (!strcmp(rest, "specialists"))
		return get ? specialist_settings(r) : reply_405(r, "GET, HEAD");
	if (!strcmp(rest, "actions"))
		return get ? action_settings(r) : reply_405(r, "GET, HEAD");
	if (!strcmp(rest, "actions/confirmation"))
		return put ? action_set(r) : reply_405(r, "PUT");
	return reply_error(r, 404, NULL, "unknown route");
}
