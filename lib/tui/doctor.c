/* doctor.c - heartwood doctor: a read-only readiness report */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"
#include "tui/tui.h"

struct report {
	struct arena *a;
	struct jval *checks;
	int fails, setup;	/* a check failed; setup is required */
};

/*
 * check adds one check; a non-pass one carries its code, a title and the
 * next action.  status is "pass", "warning" or "fail".
 */
static void
check(struct report *r, const char *id, const char *status, const char *code,
    const char *summary, const char *next)
{
	struct arena *a = r->a;
	struct jval *c = json_obj(a);

	json_add(a, c, "check_id", json_str(a, id));
	json_add(a, c, "status", json_str(a, status));
	json_add(a, c, "summary", json_str(a, summary));
	if (strcmp(status, "pass")) {
		json_add(a, c, "code", json_str(a, code));
		json_add(a, c, "title", json_str(a, id));
		json_add(a, c, "next_action", json_str(a, next));
		json_add(a, c, "documentation_path",
		    json_str(a, "man/heartwood.1"));
	}
	json_push(a, r->checks, c);
	r->fails += !strcmp(status, "fail");
}

static void
check_boundary(struct report *r, const char *root)
{
	const char *home = getenv("HOME");

	if (!strcmp(root, "/") || (home && !strcmp(root, home)))
		check(r, "project-boundary", "fail", "HW-PROJECT-003",
		    "the project may not be / or your home directory",
		    "Change to a project directory.");
	else
		check(r, "project-boundary", "pass", NULL,
		    "the project is the current directory", NULL);
}

static void
check_storage(struct report *r)
{
	struct stat st;

	if (lstat(".heartwood", &st) < 0 && errno == ENOENT) {
		if (access(".", W_OK) == 0)
			check(r, "project-storage", "pass", NULL, "no "
			    ".heartwood yet; it is made on first use", NULL);
		else
			check(r, "project-storage", "fail", "HW-PROJECT-001",
			    "the project directory is not writable",
			    "Make the directory writable or use another.");
	} else if (!S_ISDIR(st.st_mode)) {
		check(r, "project-storage", "fail", "HW-PROJECT-001",
		    ".heartwood is not a directory (or is a symbolic link)",
		    "Move .heartwood aside.");
	} else if (access(".heartwood", W_OK | X_OK) < 0) {
		check(r, "project-storage", "fail", "HW-PROJECT-001",
		    ".heartwood is not writable", "Fix its permissions.");
	} else {
		check(r, "project-storage", "pass", NULL,
		    ".heartwood is present and writable", NULL);
	}
}

static void
check_state(struct report *r)
{
	struct arena a;
	struct jval *v;
	const char *ver;

	arena_init(&a);
	v = read_json_file(".heartwood/state.json", 65536, &a);
	ver = json_get_str(v, "schema_version");
	if (!v && errno == ENOENT)
		check(r, "project-state", "warning", "HW-PROJECT-002",
		    "heartwood has not been used in this project yet",
		    "Review the project, then start heartwood here.");
	else if (!v || !ver)
		check(r, "project-state", "fail", "HW-PROJECT-002",
		    "the project state .heartwood/state.json is unreadable",
		    "Restore .heartwood/state.json from a backup.");
	else
		check(r, "project-state", "pass", NULL,
		    "the project state is readable", NULL);
	arena_release(&a);
}

/* check_config: the configuration, the review mode and their coherence */
static void
check_config(struct report *r, const struct model_route *route)
{
	struct arena a;
	struct jval *cfg;
	const char *mode;

	arena_init(&a);
	if (config_load(&a, &cfg) < 0) {
		check(r, "configuration", "fail", "HW-SETUP-001",
		    hw_err_msg(), "Fix or remove .heartwood/config.toml.");
		goto out;
	}
	check(r, "configuration", "pass", NULL, cfg ? "the configuration is "
	    "readable" : "no configuration; the defaults apply", NULL);
	mode = config_mode(cfg);
	check(r, "action-confirmation", "pass", NULL,
	    strcmp(mode, "confirm-risky") ? "action review: Review Every "
	    "Action" : "action review: Low-Risk Automation", NULL);
	if (!strcmp(mode, "confirm-risky") && route &&
	    !route_unattended_ok(route))
		check(r, "configuration-coherence", "fail", "HW-SETUP-002",
		    "Low-Risk Automation needs a credential-free or "
		    "platform-isolated model route",
		    "Run: heartwood actions set ask-every-time");
	else
		check(r, "configuration-coherence", "pass", NULL,
		    "the review mode suits the model route", NULL);
out:
	arena_release(&a);
}

/* check_signed_in: the subscription route's sign-in, its tokens unshown */
static int
check_signed_in(struct report *r)
{
	struct sub_tokens t;

	if (sub_tokens_load(&t) < 0) {
		check(r, "model-credential", "warning", "HW-MODEL-001",
		    hw_err_msg(), "Run 'hw-model subscription sign-in'.");
		return 0;
	}
	sub_tokens_release(&t);
	check(r, "model-credential", "pass", NULL, "signed in with ChatGPT "
	    "(subscription:openai; the tokens are not shown)", NULL);
	return 0;
}

/* check_model: the route from the environment or hw setup; never a key */
static int
check_model(struct report *r, struct model_route *route)
{
	struct arena *a = r->a;
	char *s;

	if (model_route_from_env(route) < 0) {
		check(r, "model", "warning", "HW-MODEL-001", hw_err_msg(),
		    "Run 'hw setup', or set HW_MODEL=openai/NAME and HW_BASE_URL.");
		r->setup = 1;
		return -1;
	}
	s = xasprintf("model %s at %s (provider %s: %s)", route->model,
	    route->base_url, route_provider(route),
	    route->provider == ROUTE_ANTHROPIC ? "Messages API" :
	    route->provider == ROUTE_SUBSCRIPTION ? "Responses API, signed "
	    "in with ChatGPT" : "OpenAI-compatible chat completions");
	check(r, "model", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	if (route->provider == ROUTE_SUBSCRIPTION)
		return check_signed_in(r);
	if (route->managed && identity_ready() < 0) {
		check(r, "model-credential", "fail", "HW-CREDENTIAL-001",
		    hw_err_msg(), "Attach a service account to the VM, or "
		    "give the key's variable (HW_API_KEY_ENV) or file "
		    "(HW_API_KEY_FILE).");
		return 0;
	}
	s = route->key_env ? xasprintf("the key is read from $%s (not shown)",
	    route->key_env) : route->key_file ? xasprintf("the key is read "
	    "from the file %s (not shown)", route->key_file) :
	    route->managed ? xstrdup("the key is the platform identity's "
	    "token (managed-identity), held in memory only (not shown)") :
	    xstrdup("no credential: the route takes none");
	check(r, "model-credential", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	return 0;
}

/*
 * check_managed: the managed model hw-model select chose, whether it
 * verifies (every byte of what changed since the last verify is read) and
 * whether its runtime answers; nothing
 * when none is selected
 */
static void
check_managed(struct report *r)
{
	struct arena *a = r->a;
	struct model_info mi;
	const struct jval *m;
	struct jval *cfg;
	const char *id;
	int64_t port;
	char *s;

	if (config_load(a, &cfg) < 0 || !(m = json_get(cfg, "managed_model")) ||
	    !(id = json_get_str(m, "model_id")))
		return;
	if (model_info_load(".heartwood/models", id, 1, &mi, a) < 0) {
		s = xasprintf("the managed model: %s", hw_err_msg());
		check(r, "managed-model", "warning", "HW-MODEL-002",
		    json_str(a, s)->u.s, "Download or import the model again, "
		    "or run 'hw-model select ID' with another.");
		free(s);
		r->setup = 1;
		return;
	}
	s = xasprintf("managed model %s (%s, %s): verified", id, mi.runtime,
	    json_is_str(json_get(m, "qualification"), "qualified") ?
	    "qualified" : "unvalidated");
	check(r, "managed-model", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	model_info_release(&mi);
	if (json_get_int(m, "port", &port) < 0 || port < 1 || port > 65535)
		port = LAUNCH_PORT;
	if (launch_probe(port)) {
		s = xasprintf("the runtime answers at http://127.0.0.1:%lld/v1",
		    (long long)port);
		check(r, "managed-runtime", "pass", NULL, json_str(a, s)->u.s,
		    NULL);
	} else {
		s = xasprintf("the runtime does not answer at "
		    "http://127.0.0.1:%lld/v1", (long long)port);
		check(r, "managed-runtime", "warning", "HW-MODEL-003",
		    json_str(a, s)->u.s, "Run: hw-model run");
	}
	free(s);
}

/*
 * check_policy: the platform, and the model policy's decision on the
 * active route with its credential isolation, as the agent's next turn
 * would record them (the decision and isolation go in *dec and *iso)
 */
static void
check_policy(struct report *r, const struct model_route *route,
    const struct platform_detection *pd, struct jval **dec, const char **iso)
{
	struct arena *a = r->a;
	struct policy_profile p;
	struct policy_decision d;
	struct jval *cfg, *att;
	const char *tier = getenv("HW_CAPABILITY_TIER");
	char *s, *ep;

	s = xasprintf("platform: %s (%s)%s%s", pd->id,
	    platform_adapter(pd->id)->display, pd->note ? "; " : "",
	    pd->note ? pd->note : "");
	/* informational: an ambiguous detection says so in its note */
	check(r, "platform", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	*dec = json_new(a, J_NULL);
	*iso = route_isolation(route);
	s = xasprintf("credential isolation: %s", *iso);
	check(r, "credential-isolation", "pass", NULL, json_str(a, s)->u.s,
	    NULL);
	free(s);
	if (!route)
		return;
	if (!tier || !*tier)
		tier = "supervised";
	if (config_load(a, &cfg) < 0 ||
	    policy_for_route(a, cfg, pd->id, route, &p) < 0) {
		check(r, "policy", "fail", "HW-SETUP-001", hw_err_msg(),
		    "Fix [policy] in .heartwood/config.toml (hw-policy(7)).");
		return;
	}
	ep = route_call_url(route, 0);
	if (policy_evaluate(a, &p, ep, 0, tier, config_mode(cfg),
	    route_credential_ref(route), &d) < 0) {
		free(ep);
		check(r, "policy", "fail", "HW-SETUP-001", hw_err_msg(),
		    "Set HW_CAPABILITY_TIER to supervised, experimental or "
		    "autonomous.");
		return;
	}
	free(ep);
	policy_record(a, &p, &d, "readiness-model-route", NULL, "readiness",
	    tier, dec, &att);
	/* a denied route cannot be used: setup is needed, not recovery */
	if (strcmp(d.decision, "allow")) {
		check(r, "policy", "warning", "HW-MODEL-001", d.reason,
		    "Change [policy] in .heartwood/config.toml, or choose "
		    "another route with 'hw setup'.");
		r->setup = 1;
	} else
		check(r, "policy", "pass", NULL, d.reason, NULL);
}

/* check_platform: the adapter's own readiness checks */
static void
check_platform(struct report *r, const struct platform_detection *pd,
    const char *root)
{
	struct platform_check c[PLATFORM_CHECKS_MAX];
	size_t n = platform_checks(pd->id, root, c);

	for (size_t i = 0; i < n; i++)
		check(r, c[i].id, c[i].status, c[i].code, c[i].summary,
		    c[i].next);
}

static void
check_programs(struct report *r)
{
	static const char *const progs[] = { "hw-session", "hw-agent",
		"hw-audit", "hw-model", NULL };
	char *p;

	for (size_t i = 0; progs[i]; i++) {
		if ((p = driver_find(progs[i]))) {
			free(p);
			continue;
		}
		p = xasprintf("%s is not installed", progs[i]);
		check(r, "agent-runtime", "fail", "HW-AGENT-001",
		    json_str(r->a, p)->u.s, "Install the heartwood suite.");
		free(p);
		return;
	}
	check(r, "agent-runtime", "pass", NULL, "hw-session, hw-agent, "
	    "hw-audit and hw-model (the offline replay model) are installed",
	    NULL);
}

/* check_browser: the browser route is direct, through hw-serve */
static void
check_browser(struct report *r)
{
	char *p = driver_find("hw-serve");

	if (p)
		check(r, "browser-route", "pass", NULL, "browser route: "
		    "direct; 'hw serve' serves this project on "
		    "http://127.0.0.1:8767/ (loopback only)", NULL);
	else
		check(r, "browser-route", "warning", "HW-AGENT-001",
		    "browser route: unavailable, hw-serve is not installed",
		    "Install the heartwood suite, or use the terminal.");
	free(p);
}

/* check_sessions: a session with an interrupted command takes none */
static void
check_sessions(struct report *r)
{
	DIR *d = opendir(".heartwood/sessions");
	struct dirent *e;
	char *why = NULL, *n;
	int k = 0;

	while (d && (e = readdir(d)))
		if (valid_session_id(e->d_name) && (n =
		    driver_interrupted(e->d_name))) {
			k++;
			if (why)
				free(n);
			else
				why = n;
		}
	if (d)
		closedir(d);
	if (!why) {
		check(r, "session-commands", "pass", NULL, "no session has an "
		    "interrupted command", NULL);
		return;
	}
	if (k > 1) {
		n = xasprintf("%s (and %d more sessions)", why, k - 1);
		free(why);
		why = n;
	}
	check(r, "session-commands", "fail", "HW-AGENT-005", json_str(r->a,
	    why)->u.s, "Continue in a new session (hw sessions new); "
	    "hw-session list names each session that needs attention.");
	free(why);
}

static void
print_text(FILE *out, const struct jval *rep)
{
	const struct jval *cs = json_get(rep, "checks"), *c;
	const char *st;

	fprintf(out, "Readiness: %s\n", json_get_str(rep, "state"));
	for (size_t i = 0; i < cs->n; i++) {
		c = cs->u.a[i];
		st = json_get_str(c, "status");
		fprintf(out, "[%s] %s\n", !strcmp(st, "pass") ? "OK" :
		    !strcmp(st, "fail") ? "FAIL" : "NOTE",
		    json_get_str(c, "summary"));
		if (strcmp(st, "pass"))
			fprintf(out, "       %s · %s\n", json_get_str(c, "code"),
			    json_get_str(c, "next_action"));
	}
	fputs("Implemented: " HW_IMPLEMENTED "\n", out);
	if (HW_PLANNED[0])
		fputs("Planned, not yet implemented: " HW_PLANNED "\n", out);
}

/*
 * build_report fills r (its arena set) with the readiness report of the
 * current directory and returns it: {state, platform_id, project_root,
 * state_root, evidence, checks, implemented, planned}.
 */
static struct jval *
build_report(struct report *r)
{
	struct arena *a = r->a;
	struct model_route route = { 0 };
	struct platform_detection pd;
	struct jval *rep, *dec, *plat;
	const char *iso;
	struct buf b;
	char root[PATH_MAX];
	int routed;

	buf_init(&b);
	if (!getcwd(root, sizeof root))
		strcpy(root, ".");
	r->checks = json_new(a, J_ARRAY);
	check_boundary(r, root);
	check_storage(r);
	check_state(r);
	routed = check_model(r, &route) == 0;
	check_managed(r);
	check_config(r, routed ? &route : NULL);
	platform_detect(&pd);
	check_policy(r, routed ? &route : NULL, &pd, &dec, &iso);
	check_platform(r, &pd, root);
	check_programs(r);
	check_browser(r);
	check_sessions(r);
	rep = json_obj(a);
	json_add(a, rep, "state", json_str(a, r->fails ? "recovery-required" :
	    r->setup ? "setup-required" : "ready"));
	json_add(a, rep, "platform_id", json_str(a, pd.id));
	plat = json_obj(a);
	json_add(a, plat, "confidence", json_new(a, J_FLOAT));
	json_get(plat, "confidence")->u.d = pd.confidence;
	json_add(a, plat, "evidence", json_str(a, pd.evidence));
	json_add(a, plat, "note", pd.note ? json_str(a, pd.note) :
	    json_new(a, J_NULL));
	json_add(a, plat, "capabilities", platform_manifest(a,
	    platform_adapter(pd.id)));
	json_add(a, rep, "platform", plat);
	json_add(a, rep, "policy_decision", dec);
	json_add(a, rep, "credential_isolation", json_str(a, iso));
	json_add(a, rep, "project_root", json_str(a, root));
	buf_printf(&b, "%s/.heartwood", root);
	json_add(a, rep, "state_root", json_str(a, buf_cstr(&b)));
	json_add(a, rep, "evidence", json_new(a, J_ARRAY));
	json_push(a, json_get(rep, "evidence"), json_str(a, pd.evidence));
	json_add(a, rep, "checks", r->checks);
	json_add(a, rep, "implemented", json_str(a, HW_IMPLEMENTED));
	json_add(a, rep, "planned", json_str(a, HW_PLANNED));
	model_route_release(&route);
	buf_release(&b);
	return rep;
}

/* print_json writes v as one canonical line to out */
static int
print_json(FILE *out, const struct jval *v)
{
	struct buf b;

	buf_init(&b);
	json_canon(&b, v);
	fprintf(out, "%s\n", buf_cstr(&b));
	buf_release(&b);
	if (fflush(out) != 0 || ferror(out))
		return hw_err_sys("cannot write 'stdout'");
	return 0;
}

int
term_doctor(FILE *out, int json)
{
	struct arena a;
	struct report r = { .a = &a };
	struct jval *rep;
	int rc;

	arena_init(&a);
	rep = build_report(&r);
	if (json) {
		rc = print_json(out, rep);
	} else {
		print_text(out, rep);
		rc = fflush(out) != 0 || ferror(out) ?
		    hw_err_sys("cannot write 'stdout'") : 0;
	}
	if (rc == 0 && r.fails)
		rc = HW_EXIT_FAIL;
	arena_release(&a);
	return rc;
}

/* first_check: the first check of rep with status st (and id, if given) */
static const struct jval *
first_check(const struct jval *rep, const char *st, const char *id)
{
	const struct jval *cs = json_get(rep, "checks"), *c;

	for (size_t i = 0; cs && i < cs->n; i++) {
		c = cs->u.a[i];
		if (json_is_str(json_get(c, "status"), st) &&
		    (!id || json_is_str(json_get(c, "check_id"), id)))
			return c;
	}
	return NULL;
}

/* supported: whether interface iface has its program here */
static int
supported(const char *iface)
{
	char *p;

	if (strcmp(iface, "web"))
		return 1;
	if (!(p = driver_find("hw-serve")))
		return 0;
	free(p);
	return 1;
}

/*
 * plan_phase: the phase of reference 5 and why, from the report: a
 * failed check or an unsupported interface is recovery-required, then
 * the project not yet used is project-review, no model route
 * connection-required, else ready
 */
static const char *
plan_phase(const struct jval *rep, const char *iface,
    const struct jval **why)
{
	if ((*why = first_check(rep, "fail", NULL)))
		return "recovery-required";
	if (!supported(iface))
		return "recovery-required";
	if ((*why = first_check(rep, "warning", "project-state")))
		return "project-review";
	if ((*why = first_check(rep, "warning", "model")))
		return "connection-required";
	return "ready";
}

static struct jval *
build_plan(struct report *r, const char *iface, int port)
{
	struct arena *a = r->a;
	struct jval *rep = build_report(r), *plan = json_obj(a);
	const struct jval *why;
	const char *phase = plan_phase(rep, iface, &why), *sum, *next;
	char *url = NULL;

	if (!strcmp(iface, "web"))
		url = xasprintf("http://127.0.0.1:%d/", port);
	if (why) {
		sum = json_get_str(why, "summary");
		next = json_get_str(why, "next_action");
	} else if (strcmp(phase, "ready")) {
		sum = "the web interface needs hw-serve, which is not installed";
		next = "Install hw-serve, or use the terminal or a notebook.";
	} else {
		sum = "heartwood is ready in this project";
		next = !strcmp(iface, "terminal") ? "Run heartwood." :
		    !strcmp(iface, "web") ? "Open the access URL." :
		    "Send a task with NotebookSession().chat(...).";
	}
	json_add(a, plan, "phase", json_str(a, phase));
	json_add(a, plan, "interface", json_str(a, iface));
	json_add(a, plan, "platform_id",
	    json_copy(a, json_get(rep, "platform_id")));
	json_add(a, plan, "project_root",
	    json_copy(a, json_get(rep, "project_root")));
	json_add(a, plan, "state_root",
	    json_copy(a, json_get(rep, "state_root")));
	json_add(a, plan, "summary", json_str(a, sum));
	json_add(a, plan, "next_action", json_str(a, next));
	json_add(a, plan, "access_url", url ? json_str(a, url) :
	    json_new(a, J_NULL));
	json_add(a, plan, "requires_compute", json_bool(a, 0));
	json_add(a, plan, "requires_confirmation", json_bool(a, 0));
	json_add(a, plan, "interface_supported", json_bool(a,
	    supported(iface)));
	json_add(a, plan, "readiness", rep);
	json_add(a, plan, "capabilities", json_copy(a,
	    json_get(json_get(rep, "platform"), "capabilities")));
	free(url);
	return plan;
}

int
term_plan(FILE *out, const char *iface, int port, int init)
{
	struct arena a;
	struct report r = { .a = &a };
	struct project p = { 0 };
	struct jval *plan;
	const char *phase;
	int rc = 0;

	arena_init(&a);
	if (init) {
		build_report(&r);
		if (r.fails) {
			rc = HW_EXIT_FAIL;
		} else if (project_open(&p, 1) < 0) {
			rc = -1;
			goto out;
		}
		arena_clear(&a);
		r = (struct report){ .a = &a };
	}
	plan = build_plan(&r, iface, port);
	phase = json_get_str(plan, "phase");
	if (print_json(out, plan) < 0)
		rc = -1;
	else if (!strcmp(phase, "recovery-required"))
		rc = HW_EXIT_FAIL;
out:
	project_release(&p);
	arena_release(&a);
	return rc;
}
