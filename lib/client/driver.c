/* driver.c - finding and running the suite's programs, and the workflows
 * that compose them (hw(1)) */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"

extern char **environ;

#define DRIVER_OUT_MAX (256u << 20)	/* a captured projection */

static driver_show_fn text_out;	/* driver_text: print for a person */
static int64_t text_base = -1;	/* the last event of our command */

void
driver_text(driver_show_fn show)
{
	text_out = show;
}

static int
is_exec(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    access(path, X_OK) == 0;
}

char *
driver_find(const char *name)
{
	char *dir = self_dir(), *path, *list, *d, *save = NULL;
	const char *env = getenv("PATH");

	if (dir) {
		path = path_join(dir, name);
		free(dir);
		if (is_exec(path))
			return path;
		free(path);
	}
	list = xstrdup(env ? env : "/usr/local/bin:/usr/bin:/bin");
	for (d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":",
	    &save)) {
		path = path_join(*d ? d : ".", name);
		if (is_exec(path)) {
			free(list);
			return path;
		}
		free(path);
	}
	free(list);
	hw_err_set(HW_EXIT_UNAVAILABLE, "cannot find program '%s'", name);
	return NULL;
}

int
driver_exec(const char *name, char *const argv[])
{
	char *path = driver_find(name);

	if (!path)
		return -1;
	if (fflush(stdout) != 0)
		return hw_err_sys("cannot write 'stdout'");
	execve(path, argv, environ);
	hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run '%s': %s", path,
	    strerror(errno));
	free(path);
	return -1;
}

/*
 * pump writes in to fd *w and reads fd r into out until both are done, so
 * that a child answering while it reads never blocks against us.
 */
static int
pump(int *w, const char *in, size_t n, int r, struct buf *out)
{
	struct pollfd pf[2];
	size_t off = 0;
	char chunk[65536];
	ssize_t k;

	while (*w >= 0 || r >= 0) {
		pf[0] = (struct pollfd){ .fd = *w, .events = POLLOUT };
		pf[1] = (struct pollfd){ .fd = r, .events = POLLIN };
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return hw_err_sys("poll");
		}
		if (*w >= 0 && pf[0].revents) {
			k = write(*w, in + off, n - off);
			if (k > 0)
				off += (size_t)k;
			if (k < 0 || off == n) {	/* EPIPE: it stopped reading */
				close(*w);
				*w = -1;
			}
		}
		if (r >= 0 && pf[1].revents) {
			k = read(r, chunk, sizeof chunk);
			if (k <= 0) {
				r = -1;
			} else if (out->len + (size_t)k > DRIVER_OUT_MAX) {
				return hw_err_set(HW_EXIT_DATA, "the output of "
				    "a program is larger than %u bytes",
				    DRIVER_OUT_MAX);
			} else {
				buf_add(out, chunk, (size_t)k);
			}
		}
	}
	return 0;
}

static int
wait_child(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return hw_err_sys("waitpid");
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

int
driver_run(const char *name, char *const argv[], const char *in, size_t n,
    struct buf *out)
{
	posix_spawn_file_actions_t fa;
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	char *path = NULL;
	pid_t pid;
	int rc = -1, err, pumped = 0;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	posix_spawn_file_actions_init(&fa);
	if (fflush(stdout) != 0) {
		hw_err_sys("cannot write 'stdout'");
		goto out;
	}
	if (!(path = driver_find(name)))
		goto out;
	if ((in && pipe2(inp, O_CLOEXEC) < 0) ||
	    (out && pipe2(outp, O_CLOEXEC) < 0)) {
		hw_err_sys("pipe");
		goto out;
	}
	if (in)
		posix_spawn_file_actions_adddup2(&fa, inp[0], 0);
	if (out)
		posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	err = posix_spawn(&pid, path, &fa, NULL, argv, environ);
	if (err) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot run '%s': %s", path,
		    strerror(err));
		goto out;
	}
	if (inp[0] >= 0)
		close(inp[0]), inp[0] = -1;
	if (outp[1] >= 0)
		close(outp[1]), outp[1] = -1;
	pumped = pump(&inp[1], in, n, out ? outp[0] : -1, out);
	rc = wait_child(pid);
	if (pumped < 0)
		rc = -1;
out:
	for (int i = 0; i < 2; i++) {
		if (inp[i] >= 0)
			close(inp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	posix_spawn_file_actions_destroy(&fa);
	signal(SIGPIPE, old);
	free(path);
	return rc;
}

/* ---- the workflows ---- */

char *
driver_interrupted(const char *sid)
{
	struct project p = { 0 };
	struct session s;
	char *why = NULL;

	memset(&s, 0, sizeof s);
	if (session_init(&s, &p, sid) == 0 && project_open(&p, 0) == 0 &&
	    session_exists(&s) == 1 && receipts_interrupted(&s) < 0)
		why = xstrdup(hw_err_msg());
	session_release(&s);
	project_release(&p);
	return why;
}

int
driver_known(const char *sid)
{
	struct project p = { 0 };
	struct session s;
	int k;

	if (!strcmp(sid, "session-main"))
		return 0;
	if (session_init(&s, &p, sid) < 0)
		return -1;
	if ((k = project_open(&p, 0)) == 0)
		k = session_exists(&s);
	else if (hw_err_code() == HW_EXIT_NOINPUT)
		k = 0;
	session_release(&s);
	project_release(&p);
	if (k == 0)
		return hw_err_set(HW_EXIT_NOINPUT, "no session '%s'", sid);
	return k < 0 ? -1 : 0;
}

/*
 * declined turns the answer of a command that was not applied into the
 * error "reason": the projection's lastCommandOutcome names our command.
 */
static int
declined(const struct buf *ans, const char *id)
{
	struct arena a;
	struct jval *v, *o;
	const char *msg;
	char err[128];

	arena_init(&a);
	v = json_parse(&a, ans->p ? ans->p : "", ans->len, err, sizeof err);
	o = json_get(json_get(v, "projection"), "lastCommandOutcome");
	msg = json_get_str(o, "message");
	if (msg && json_is_str(json_get(o, "commandId"), id))
		hw_err_set(HW_EXIT_FAIL, "%s", msg);
	else
		hw_err_set(HW_EXIT_FAIL, "the command was not applied");
	arena_release(&a);
	return -1;
}

int
driver_send(const char *sid, const char *kind, const char *payload,
    struct buf *ans)
{
	char hex[33], now[21], *id = NULL;
	struct buf env;
	char *argv[] = { "hw-session", "command", (char *)sid, NULL };
	int rc = -1;

	if (!valid_session_id(sid))
		return hw_err_set(HW_EXIT_USAGE, "invalid session id '%s'", sid);
	if (random_hex(hex, 16) < 0)
		return -1;
	utc_now(now);
	id = xasprintf("%s-%s-%s", sid, kind, hex);
	buf_init(&env);
	buf_printf(&env, "{\"actor_id\":\"human\",\"command_id\":\"%s\","
	    "\"created_at\":\"%s\",\"kind\":\"%s\",\"payload\":%s,"
	    "\"schema_version\":\"heartwood.session-command.v1\","
	    "\"session_id\":\"%s\"}\n", id, now, kind, payload, sid);
	rc = driver_run("hw-session", argv, env.p, env.len, ans);
	if (rc == HW_EXIT_FAIL && ans->len)
		rc = declined(ans, id);
	buf_release(&env);
	free(id);
	return rc;
}

/* last_seq: the sequence of the last event in a command's answer, or -1 */
static int64_t
last_seq(const struct buf *ans)
{
	struct arena a;
	struct jval *ev;
	char err[128];
	int64_t n = -1;

	arena_init(&a);
	ev = json_get(json_parse(&a, ans->p ? ans->p : "", ans->len, err,
	    sizeof err), "events");
	if (ev && ev->t == J_ARRAY && ev->n)
		json_get_int(ev->u.a[ev->n - 1], "sequence", &n);
	arena_release(&a);
	return n;
}

int
driver_command(const char *sid, const char *kind, const char *payload)
{
	struct buf ans;
	int rc;

	buf_init(&ans);
	rc = driver_send(sid, kind, payload, &ans);
	if (text_out)
		text_base = last_seq(&ans);
	else if (ans.len && fwrite(ans.p, 1, ans.len, stdout) != ans.len)
		rc = hw_err_sys("cannot write 'stdout'");
	buf_release(&ans);
	return rc;
}

/*
 * show_text prints for a person what session sid's projection holds
 * after our command (text_base): the replies, what ran and its outcome,
 * the set to review with each member's arguments, the status
 */
static int
show_text(const char *sid)
{
	struct arena a;
	struct jval *proj;
	int rc = 0;

	arena_init(&a);
	if (!(proj = driver_project(sid, &a))) {
		rc = -1;
	} else {
		text_out(sid, proj, text_base);
		if (fflush(stdout) != 0 || ferror(stdout))
			rc = hw_err_sys("cannot write 'stdout'");
	}
	arena_release(&a);
	return rc;
}

/* project_out prints session sid's projection: JSON, or show_text */
static int
project_out(const char *sid)
{
	char *proj[] = { "hw-session", "project", (char *)sid, NULL };

	if (text_out)
		return show_text(sid);
	return driver_run("hw-session", proj, NULL, 0, NULL);
}

int
driver_pause(const char *sid)
{
	int rc;

	if (driver_known(sid) < 0)
		return -1;
	rc = driver_command(sid, "pause", "{}");
	return rc || !text_out ? rc : show_text(sid);
}

struct jval *
driver_project(const char *sid, struct arena *a)
{
	char *argv[] = { "hw-session", "project", (char *)sid, NULL };
	struct buf out;
	struct jval *v = NULL;
	char err[128];
	int rc;

	buf_init(&out);
	rc = driver_run("hw-session", argv, NULL, 0, &out);
	if (rc > 0)
		hw_err_set(rc, "cannot project session '%s'", sid);
	if (rc != 0)
		goto out;
	v = json_parse(a, out.p ? out.p : "", out.len, err, sizeof err);
	if (!v || v->t != J_OBJECT) {
		hw_err_set(HW_EXIT_DATA, "cannot read the projection of "
		    "session '%s': %s", sid, v ? "not an object" : err);
		v = NULL;
	}
out:
	buf_release(&out);
	return v;
}

/*
 * continue_run runs the agent after an applied command and prints the
 * projection it left: the agent's status wins over the projection's.
 */
static int
continue_run(const char *sid)
{
	int rc, prc;

	rc = driver_continue(sid, NULL);
	if (rc < 0)
		return -1;
	prc = project_out(sid);
	return rc ? rc : prc;
}

int
driver_continue(const char *sid, struct buf *out)
{
	char *run[] = { "hw-agent", "run", (char *)sid, NULL };
	int rc = driver_run("hw-agent", run, NULL, 0, out);

	if (rc == HW_EXIT_BUSY) {
		/* hw-agent said why on stderr: the agent that runs goes on */
		rc = 0;
	}
	return rc;
}

int
driver_ready(void)
{
	struct model_route r = { 0 };
	char *msg;

	if (model_route_from_env(&r) == 0) {
		model_route_release(&r);
		return 0;
	}
	msg = xstrdup(hw_err_msg());
	hw_err_set(HW_EXIT_NOTREADY, "the agent is not ready, so nothing was "
	    "recorded: %s%s", msg, strstr(msg, "hw setup") ? "" : "; check "
	    "it with 'hw doctor', or choose a route with 'hw setup'");
	free(msg);
	return -1;
}

int
driver_ask(const char *sid, const char *prompt)
{
	struct buf p;
	int rc;

	if (driver_ready() < 0)
		return -1;
	buf_init(&p);
	buf_adds(&p, "{\"prompt\":");
	json_canon_str(&p, prompt, strlen(prompt));
	buf_addc(&p, '}');
	rc = driver_command(sid, "chat", buf_cstr(&p));
	buf_release(&p);
	return rc ? rc : continue_run(sid);
}

int
driver_decide(const char *sid, const char *kind, const char *group)
{
	struct arena a;
	struct jval *proj;
	struct buf p;
	int rc = -1;

	if (driver_known(sid) < 0)
		return -1;
	arena_init(&a);
	buf_init(&p);
	if (!group) {
		if (!(proj = driver_project(sid, &a)))
			goto out;
		group = json_get_str(json_get(proj, "pendingApproval"),
		    "groupId");
		if (!group) {
			hw_err_set(HW_EXIT_FAIL,
			    "No actions are awaiting review.");
			goto out;
		}
		if (!strcmp(kind, "approve") && json_get(json_get(proj,
		    "pendingApproval"), "decidedElsewhere") &&
		    json_get(json_get(proj, "pendingApproval"),
		    "decidedElsewhere")->t == J_TRUE) {
			hw_err_set(HW_EXIT_FAIL, "action set '%s' was decided "
			    "elsewhere, not by you on this machine, and waits "
			    "for your own decision: look at it with 'hw "
			    "status', then allow it by name (hw allow %s) or "
			    "reject it (hw reject)", group, group);
			goto out;
		}
	}
	buf_adds(&p, "{\"target_id\":");
	json_canon_str(&p, group, strlen(group));
	buf_adds(&p, ",\"target_type\":\"action-set\"}");
	rc = driver_command(sid, kind, buf_cstr(&p));
	if (rc == 0)
		rc = continue_run(sid);
out:
	buf_release(&p);
	arena_release(&a);
	return rc;
}

int
driver_resume(const char *sid)
{
	int rc;

	if (driver_known(sid) < 0)
		return -1;
	rc = driver_command(sid, "resume", "{}");
	return rc ? rc : continue_run(sid);
}

/*
 * pending_summary: {groupId, actions: [{actionId, toolName, summary,
 * risk}], decidedElsewhere}, or null
 */
static struct jval *
pending_summary(struct arena *a, const struct jval *pending)
{
	struct jval *s, *acts, *list, *one, *act;
	static const char *const keys[] = { "actionId", "toolName", "summary",
		"risk" };

	if (!pending || pending->t != J_OBJECT)
		return json_new(a, J_NULL);
	s = json_obj(a);
	json_add(a, s, "groupId", json_copy(a, json_get(pending, "groupId")));
	list = json_new(a, J_ARRAY);
	acts = json_get(pending, "actions");
	for (size_t i = 0; acts && acts->t == J_ARRAY && i < acts->n; i++) {
		act = acts->u.a[i];
		one = json_obj(a);
		for (size_t k = 0; k < 4; k++)
			if (json_get(act, keys[k]))
				json_add(a, one, keys[k],
				    json_copy(a, json_get(act, keys[k])));
		json_push(a, list, one);
	}
	json_add(a, s, "actions", list);
	act = json_get(pending, "decidedElsewhere");
	json_add(a, s, "decidedElsewhere", json_bool(a, act &&
	    act->t == J_TRUE));
	return s;
}

int
driver_status(const char *sid, FILE *out)
{
	struct arena a;
	struct jval *proj, *s, *v;
	struct buf b;
	char *why;
	int rc = -1;

	if (driver_known(sid) < 0)
		return -1;
	arena_init(&a);
	buf_init(&b);
	if (!(proj = driver_project(sid, &a)))
		goto out;
	s = json_obj(&a);
	json_add(&a, s, "sessionId", json_str(&a, sid));
	v = json_get(proj, "researcherStatus");
	json_add(&a, s, "researcherStatus", v ? v : json_new(&a, J_NULL));
	v = json_get(proj, "lifecycle");
	json_add(&a, s, "lifecycle", v ? v : json_new(&a, J_NULL));
	json_add(&a, s, "pendingApproval",
	    pending_summary(&a, json_get(proj, "pendingApproval")));
	why = driver_interrupted(sid);
	json_add(&a, s, "attention", why ? json_str(&a, why) :
	    json_new(&a, J_NULL));
	free(why);
	json_canon(&b, s);
	buf_addc(&b, '\n');
	if (fwrite(b.p, 1, b.len, out) != b.len || fflush(out) != 0) {
		hw_err_sys("cannot write 'stdout'");
		goto out;
	}
	rc = 0;
out:
	buf_release(&b);
	arena_release(&a);
	return rc;
}
