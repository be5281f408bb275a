/*
 * routes.c - the REST routes (reference 3.1): the project, the sessions,
 * their commands, events and projection, the workspace views and the
 * action settings, each over the library every other client uses
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/gw.h"

/* a body field's wanted type */
struct field {
	const char *name;
	enum jtype t;		/* J_TRUE: a boolean */
	int required;
};

/*
 * body_parse holds r's body to the fields: 400 when it is not UTF-8 or
 * not JSON, 422 when it is not an object, has a field not listed, or a
 * field of the wrong type or missing.  NULL with the answer queued.
 */
static struct jval *
body_parse(struct req *r, struct arena *a, const struct field *f,
    enum MHD_Result *ret)
{
	struct jval *v;
	struct jmember *m;
	char err[128];
	size_t i, j;
	const char *kind;

	if (!valid_utf8(r->body.p ? r->body.p : "", r->body.len)) {
		*ret = reply_error(r, 400, NULL, "the request body is not "
		    "UTF-8");
		return NULL;
	}
	if (!r->body.len)	/* no body: no fields */
		return json_obj(a);
	if (!(v = json_parse(a, r->body.p, r->body.len, err, sizeof err))) {
		*ret = reply_error(r, 400, NULL, "the request body is not "
		    "JSON: %s", err);
		return NULL;
	}
	if (v->t != J_OBJECT) {
		*ret = reply_error(r, 422, NULL, "the request body must be a "
		    "JSON object");
		return NULL;
	}
	for (i = 0; i < v->n; i++) {
		m = &v->u.m[i];
		for (j = 0; f && f[j].name && strcmp(f[j].name, m->k); j++)
			;
		if (!f || !f[j].name) {
			*ret = reply_error(r, 422, NULL, "request contains "
			    "unsupported fields: %.200s", m->k);
			return NULL;
		}
		if (m->v->t != f[j].t && !(f[j].t == J_TRUE &&
		    m->v->t == J_FALSE)) {
			kind = f[j].t == J_STRING ? "a string" : f[j].t ==
			    J_TRUE ? "a boolean" : f[j].t == J_INT ?
			    "an integer" : "an object";
			*ret = reply_error(r, 422, NULL, "`%s` must be %s",
			    f[j].name, kind);
			return NULL;
		}
	}
	for (j = 0; f && f[j].name; j++)
		if (f[j].required && !json_get(v, f[j].name)) {
			*ret = reply_error(r, 422, NULL, "`%s` is required",
			    f[j].name);
			return NULL;
		}
	return v;
}

/* blank: a session nothing was opened for, which releases nothing */
static void
blank(struct session *s)
{
	memset(s, 0, sizeof *s);
	s->lease_fd = s->ev_fd = s->au_fd = -1;
}

/* with_session opens session sid of the project; 1 exists, 0 not, -1 */
static int
with_session(struct project *p, struct session *s, const char *sid)
{
	blank(s);
	if (session_init(s, p, sid) < 0)
		return -1;
	if (project_open(p, 0) < 0)
		return hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
	return session_exists(s);
}

static void
done_session(struct project *p, struct session *s)
{
	session_release(s);
	project_release(p);
}

/* summary appends session s's summary object (no newline) to b */
static int
summary(struct session *s, struct buf *b)
{
	char *mem = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&mem, &n);
	int rc;

	if (!f)
		return hw_err_sys("cannot make a memory stream");
	rc = session_summary(s, f);
	fclose(f);
	if (rc == 0) {
		while (n && mem[n - 1] == '\n')
			n--;
		buf_add(b, mem, n);
	}
	free(mem);
	return rc;
}

static enum MHD_Result
sessions_list(struct req *r)
{
	struct project p = { 0 };
	struct session s;
	struct dirent **names = NULL;
	struct buf b;
	int n = 0, i, first = 1;
	enum MHD_Result ret;

	buf_init(&b);
	buf_adds(&b, "{\"sessions\":[");
	if (project_open(&p, 0) == 0 && (n = scandir(p.sessions, &names, NULL,
	    alphasort)) < 0)
		n = 0;
	/* newest first: ids carry their creation time */
	for (i = n - 1; i >= 0; i--) {
		if (valid_session_id(names[i]->d_name) && session_init(&s, &p,
		    names[i]->d_name) == 0) {
			if (session_exists(&s) == 1 && access(s.metadata,
			    F_OK) == 0) {
				size_t at = b.len;

				if (!first)
					buf_addc(&b, ',');
				if (summary(&s, &b) < 0)
					b.len = at;
				else
					first = 0;
			}
			session_release(&s);
		}
		free(names[i]);
	}
	free(names);
	project_release(&p);
	buf_adds(&b, "]}");
	ret = reply_buf(r, 200, &b);
	buf_release(&b);
	return ret;
}

static enum MHD_Result
sessions_create(struct req *r, int main_session)
{
	static const struct field f[] = {
		{ "title", J_STRING, 0 }, { NULL, 0, 0 }
	};
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *v;
	struct buf b;
	char id[64], stamp[20], hex[9], norm[512];
	const char *title;
	enum MHD_Result ret = MHD_NO;
	time_t t = time(NULL);
	struct tm tm;
	int i, exists = 0;

	arena_init(&a);
	buf_init(&b);
	blank(&s);
	if (!(v = body_parse(r, &a, f, &ret)))
		goto out;
	title = json_get_str(v, "title");
	if (title && title_normalize(title, norm, sizeof norm) < 0) {
		ret = reply_error(r, 422, NULL, "`title` must have 1-120 "
		    "characters that are not all whitespace");
		goto out;
	}
	if (project_open(&p, 1) < 0)
		goto fail;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	for (i = 0; i < 10; i++) {
		if (main_session)
			snprintf(id, sizeof id, "session-main");
		else if (random_hex(hex, 4) < 0)
			goto fail;
		else
			snprintf(id, sizeof id, "session-%s-%s", stamp, hex);
		session_release(&s);
		if (session_init(&s, &p, id) < 0)
			goto fail;
		if ((exists = session_exists(&s) == 1 && access(s.metadata,
		    F_OK) == 0) == 0 || main_session)
			break;
	}
	if (!exists && session_register(&s, title ? norm : main_session ?
	    "Main session" : "Untitled session") < 0)
		goto fail;
	if (summary(&s, &b) < 0)
		goto fail;
	ret = reply_buf(r, exists ? 200 : 201, &b);
	goto out;
fail:
	ret = reply_hw(r);
out:
	session_release(&s);
	project_release(&p);
	buf_release(&b);
	arena_release(&a);
	return ret;
}

static enum MHD_Result
session_show(struct req *r, const char *sid, int rename)
{
	static const struct field f[] = {
		{ "title", J_STRING, 1 }, { NULL, 0, 0 }
	};
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *v = NULL;
	struct buf b;
	char norm[512];
	int k;
	enum MHD_Result ret = MHD_NO;

	arena_init(&a);
	buf_init(&b);
	if (rename && !(v = body_parse(r, &a, f, &ret))) {
		arena_release(&a);
		return ret;
	}
	k = with_session(&p, &s, sid);
	if (k == 0)
		ret = reply_error(r, 404, NULL, "no session '%s'", sid);
	else if (k < 0)
		ret = reply_hw(r);
	else if (rename && title_normalize(json_get_str(v, "title"), norm,
	    sizeof norm) < 0)
		ret = reply_error(r, 422, NULL, "`title` must have 1-120 "
		    "characters that are not all whitespace");
	else if ((rename && session_rename(&s, norm) < 0) ||
	    summary(&s, &b) < 0)
		ret = reply_hw(r);
	else
		ret = reply_buf(r, 200, &b);
	done_session(&p, &s);
	buf_release(&b);
	arena_release(&a);
	return ret;
}

/* the kinds after which the agent has something to do */
static int
continues(const char *kind)
{
	return !strcmp(kind, "chat") || !strcmp(kind, "approve") ||
	    !strcmp(kind, "deny") || !strcmp(kind, "resume");
}

static enum MHD_Result
session_commands(struct req *r, const char *sid)
{
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *v;
	struct buf ans;
	char err[128];
	const char *kind, *env_sid;
	int declined = 0;
	enum MHD_Result ret;

	if (!valid_utf8(r->body.p ? r->body.p : "", r->body.len))
		return reply_error(r, 400, NULL, "the request body is not "
		    "UTF-8");
	arena_init(&a);
	if (!(v = json_parse(&a, r->body.p ? r->body.p : "", r->body.len, err,
	    sizeof err))) {
		arena_release(&a);
		return reply_error(r, 400, NULL, "the request body is not "
		    "JSON: %s", err);
	}
	env_sid = json_get_str(v, "session_id");
	kind = json_get_str(v, "kind");
	if (env_sid && strcmp(env_sid, sid)) {
		/* the reply quotes the envelope, which lives in a */
		ret = reply_error(r, 409, NULL, "the command is for session "
		    "'%.128s', not '%s'", env_sid, sid);
		arena_release(&a);
		return ret;
	}
	buf_init(&ans);
	blank(&s);
	if (session_init(&s, &p, sid) < 0 || session_command_line(&s,
	    r->body.p, r->body.len, &ans, &declined) < 0) {
		ret = reply_hw(r);
	} else {
		while (ans.len && ans.p[ans.len - 1] == '\n')
			ans.len--;
		ret = reply_buf(r, 200, &ans);
		if (!declined && kind && continues(kind))
			hub_continue(r->gw->hub, sid);
	}
	done_session(&p, &s);
	buf_release(&ans);
	arena_release(&a);
	return ret;
}

static int
after_param(struct req *r, int64_t *after, enum MHD_Result *ret)
{
	char v[32];
	int k = query_get(r, "after", v, sizeof v);

	*after = -1;
	if (k == 0)
		return 0;
	if (k < 0 || (strcmp(v, "-1") && parse_seq(v, after) < 0)) {
		*ret = reply_error(r, 400, NULL, "`after` must be an integer "
		    "of at least -1");
		return -1;
	}
	return 0;
}

static enum MHD_Result
session_read(struct req *r, const char *sid, const char *what)
{
	struct project p = { 0 };
	struct session s;
	struct buf b;
	int64_t after = -1;
	int k, rc;
	enum MHD_Result ret = MHD_NO;

	if (!strcmp(what, "events") && after_param(r, &after, &ret) < 0)
		return ret;
	buf_init(&b);
	blank(&s);
	if (!strcmp(what, "projection"))
		rc = hub_project(r->gw->hub, sid, &b);
	else if ((k = with_session(&p, &s, sid)) < 0)
		rc = -1;
	else
		rc = session_pair(&s, k, after, &b);
	ret = rc < 0 ? reply_hw(r) : reply_buf(r, 200, &b);
	done_session(&p, &s);
	buf_release(&b);
	return ret;
}

static enum MHD_Result
audit_download(struct req *r, const char *sid)
{
	struct project p = { 0 };
	struct session s;
	struct buf f, b;
	char *path, name[200];
	int k;
	enum MHD_Result ret;

	buf_init(&f);
	buf_init(&b);
	k = with_session(&p, &s, sid);
	path = k == 1 ? path_join(s.dir, "audit-export.jsonl") : NULL;
	if (k < 0)
		ret = reply_hw(r);
	else if (!path || read_file(path, 64u << 20, &f) < 0)
		ret = reply_error(r, 404, NULL, "session '%s' has no audit "
		    "export: send the audit.export command first", sid);
	else {
		snprintf(name, sizeof name, "%s-audit.jsonl", sid);
		buf_adds(&b, "{\"content\":");
		json_canon_str(&b, f.p ? f.p : "", f.len);
		buf_adds(&b, ",\"filename\":");
		json_canon_str(&b, name, strlen(name));
		buf_addc(&b, '}');
		ret = reply_buf(r, 200, &b);
	}
	free(path);
	done_session(&p, &s);
	buf_release(&f);
	buf_release(&b);
	return ret;
}

static enum MHD_Result
workspace(struct req *r, const char *sid, const char *view)
{
	char path[4096] = "", depth[8] = "";
	int kp = query_get(r, "path", path, sizeof path);
	int kd = query_get(r, "depth", depth, sizeof depth);
	int root, rc = -1, d = 1;
	struct buf b;
	enum MHD_Result ret;
	char *end;

	if (kp < 0 || kd < 0)
		return reply_error(r, 400, NULL, "a query value is badly "
		    "encoded");
	if (kd > 0) {
		d = (int)strtol(depth, &end, 10);
		if (*end || end == depth)
			return reply_error(r, 400, NULL, "`depth` must be an "
			    "integer");
	}
	if ((!strcmp(view, "file") || !strcmp(view, "diff")) && kp == 0)
		return reply_error(r, 422, NULL, "`path` is required");
	if ((root = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return reply_error(r, 500, NULL, "cannot open the project");
	buf_init(&b);
	if (!strcmp(view, "tree"))
		rc = inspect_tree(root, kp ? path : ".", d, &b);
	else if (!strcmp(view, "file"))
		rc = inspect_file(root, path, &b);
	else if (!strcmp(view, "changes"))
		rc = inspect_changes(root, sid, &b);
	else
		rc = inspect_diff(root, path, sid, &b);
	close(root);
	ret = rc < 0 ? reply_error(r, hw_err_code() == HW_EXIT_NOINPUT ? 404 :
	    422, NULL, "%s", hw_err_msg()) : reply_buf(r, 200, &b);
	buf_release(&b);
	return ret;
}

/* the per-session routes: /sessions/{id}[/...] */
static enum MHD_Result
session_route(struct req *r, const char *rest, int get, int post)
{
	char sid[130];
	size_t n = strcspn(rest, "/");
	const char *sub = rest + n;
	int patch = !strcmp(r->method, "PATCH");

	if (n >= sizeof sid)
		return reply_error(r, 404, NULL, "unknown session route");
	memcpy(sid, rest, n);
	sid[n] = '\0';
	if (!valid_session_id(sid))
		return reply_error(r, 404, NULL, "invalid session id");
	if (!*sub)
		return get || patch ? session_show(r, sid, patch) :
		    reply_405(r, "GET, HEAD, PATCH");
	if (!strcmp(sub, "/commands"))
		return post ? session_commands(r, sid) : reply_405(r, "POST");
	if (!get)
		return strncmp(sub, "/workspace/", 11) && strcmp(sub,
		    "/events") && strcmp(sub, "/projection") && strcmp(sub,
		    "/audit-export") && strcmp(sub, "/events/stream") ?
		    reply_error(r, 404, NULL, "method not allowed") :
		    reply_405(r, "GET, HEAD");
	if (!strcmp(sub, "/events")) {
		int64_t after;
		enum MHD_Result ret;

		if (after_param(r, &after, &ret) < 0)
			return ret;
		if (MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
		    "Upgrade"))
			return hub_ws(r, sid, after);
		return session_read(r, sid, "events");
	}
	if (!strcmp(sub, "/events/stream")) {
		int64_t after;
		enum MHD_Result ret;

		if (after_param(r, &after, &ret) < 0)
			return ret;
		return hub_sse(r, sid, after);
	}
	if (!strcmp(sub, "/projection"))
		return session_read(r, sid, "projection");
	if (!strcmp(sub, "/audit-export"))
		return audit_download(r, sid);
	if (!strcmp(sub, "/workspace/tree") || !strcmp(sub, "/workspace/file") ||
	    !strcmp(sub, "/workspace/changes") ||
	    !strcmp(sub, "/workspace/diff"))
		return workspace(r, sid, sub + 11);
	return reply_error(r, 404, NULL, "unknown session route");
}

enum MHD_Result
route(struct req *r)
{
	const char *p = r->path, *m = r->method;
	int get = !strcmp(m, "GET") || !strcmp(m, "HEAD");
	int post = !strcmp(m, "POST");

	if (!strncmp(p, "/project/", 9))
		return project_route(r, p + 9, get, post);
	if (!strcmp(p, "/sessions"))
		return get ? sessions_list(r) : post ? sessions_create(r, 0) :
		    reply_405(r, "GET, HEAD, POST");
	if (!strcmp(p, "/sessions/default"))
		return post ? sessions_create(r, 1) : reply_405(r, "POST");
	if (!strncmp(p, "/sessions/", 10))
		return session_route(r, p + 10, get, post);
	if (!strncmp(p, "/settings/skills", 16) && (!p[16] || p[16] == '/'))
		return skills_route(r, p + 16, m);
	if (!strcmp(p, "/settings/credentials"))
		return subscription_status(r, m);
	if (!strcmp(p, "/settings/credentials/" SUB_CONNECTION))
		return subscription_sign_out(r, m);
	if (!strncmp(p, "/settings/models/subscription/", 30))
		return subscription_route(r, p + 29, m);
	if (!strncmp(p, "/settings/", 10))
		return settings_route(r, p + 10, get, !strcmp(m, "PUT"));
	if (!strcmp(p, "/project") || !strcmp(p, "/settings"))
		return reply_error(r, 404, NULL, "unknown route");
	if (!get)
		return reply_405(r, "GET, HEAD");
	return serve_static(r);
}
