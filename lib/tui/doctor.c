/* doctor.c - heartwood doctor: a read-only readiness report */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	if (!strcmp(mode, "confirm-risky") && route && route->key_env)
		check(r, "configuration-coherence", "fail", "HW-SETUP-002",
		    "Low-Risk Automation needs a credential-free model route",
		    "Run: heartwood actions set ask-every-time");
	else
		check(r, "configuration-coherence", "pass", NULL,
		    "the review mode suits the model route", NULL);
out:
	arena_release(&a);
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
	s = xasprintf("model %s at %s", route->model, route->base_url);
	check(r, "model", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	s = route->key_env ? xasprintf("the key is read from $%s (not shown)",
	    route->key_env) : xstrdup("no credential: the route takes none");
	check(r, "model-credential", "pass", NULL, json_str(a, s)->u.s, NULL);
	free(s);
	return 0;
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
	fputs("Implemented: " HW_IMPLEMENTED "\nPlanned, not yet "
	    "implemented: " HW_PLANNED "\n", out);
}

int
term_doctor(FILE *out, int json)
{
	struct arena a;
	struct report r = { .a = &a };
	struct model_route route = { 0 };
	struct jval *rep;
	struct buf b;
	char root[PATH_MAX];
	int routed, rc;

	arena_init(&a);
	buf_init(&b);
	if (!getcwd(root, sizeof root))
		strcpy(root, ".");
	r.checks = json_new(&a, J_ARRAY);
	check_boundary(&r, root);
	check_storage(&r);
	check_state(&r);
	routed = check_model(&r, &route) == 0;
	check_config(&r, routed ? &route : NULL);
	check_programs(&r);
	check_browser(&r);
	check_sessions(&r);
	rep = json_obj(&a);
	json_add(&a, rep, "state", json_str(&a, r.fails ? "recovery-required" :
	    r.setup ? "setup-required" : "ready"));
	json_add(&a, rep, "platform_id", json_str(&a, "generic"));
	json_add(&a, rep, "project_root", json_str(&a, root));
	buf_printf(&b, "%s/.heartwood", root);
	json_add(&a, rep, "state_root", json_str(&a, buf_cstr(&b)));
	json_add(&a, rep, "evidence", json_new(&a, J_ARRAY));
	json_add(&a, rep, "checks", r.checks);
	json_add(&a, rep, "implemented", json_str(&a, HW_IMPLEMENTED));
	json_add(&a, rep, "planned", json_str(&a, HW_PLANNED));
	if (json) {
		b.len = 0;
		json_canon(&b, rep);
		fprintf(out, "%s\n", buf_cstr(&b));
	} else {
		print_text(out, rep);
	}
	rc = r.fails ? HW_EXIT_FAIL : 0;
	if (fflush(out) != 0 || ferror(out))
		rc = hw_err_sys("cannot write 'stdout'");
	model_route_release(&route);
	buf_release(&b);
	arena_release(&a);
	return rc;
}
