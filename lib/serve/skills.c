/*
 * skills.c - the gateway's skill settings routes (reference 3.1): the
 * same library calls as hw-skill(1), answered as JSON
 */
#include <sys/stat.h>

#include <string.h>

#include "serve/gw.h"
#include "skill/skill.h"

/* what a body may hold: a name and whether it must be there */
struct field {
	const char *name;
	enum jtype t;		/* J_STRING or J_TRUE (a boolean) */
	int required;
};

/*
 * body_fields parses the request body as one JSON object holding only the
 * fields given, each of its type, into *out; otherwise it answers the
 * request itself (400 not UTF-8 or not JSON, 422 anything else) and
 * returns 0 with *out NULL
 */
static enum MHD_Result
body_fields(struct req *r, struct arena *a, const struct field *f,
    struct jval **out)
{
	const char *p = r->body.p ? r->body.p : "";
	struct jval *v, *x;
	char err[128];
	size_t i, j;

	*out = NULL;
	if (!valid_utf8(p, r->body.len))
		return reply_error(r, 400, NULL, "the request body is not "
		    "UTF-8");
	if (r->body.len == 0)
		v = json_obj(a);
	else if (!(v = json_parse(a, p, r->body.len, err, sizeof err)))
		return reply_error(r, 400, NULL, "the request body is not "
		    "JSON: %s", err);
	if (v->t != J_OBJECT)
		return reply_error(r, 422, NULL, "the request body must be an "
		    "object");
	for (i = 0; i < v->n; i++) {
		for (j = 0; f[j].name && strcmp(f[j].name, v->u.m[i].k); j++)
			;
		if (!f[j].name)
			return reply_error(r, 422, NULL, "request contains "
			    "unsupported fields");
	}
	for (j = 0; f[j].name; j++) {
		x = json_get(v, f[j].name);
		if (!x && f[j].required)
			return reply_error(r, 422, NULL, "`%s` is required",
			    f[j].name);
		if (x && (f[j].t == J_STRING ? x->t != J_STRING ||
		    strlen(x->u.s) != x->n : x->t != J_TRUE && x->t != J_FALSE))
			return reply_error(r, 422, NULL, "`%s` must be a %s",
			    f[j].name, f[j].t == J_STRING ? "string" :
			    "boolean");
	}
	*out = v;
	return MHD_YES;
}

/* lines_reply answers the JSON lines in b as the array key of an object */
static enum MHD_Result
lines_reply(struct req *r, const char *key, const struct buf *b)
{
	struct buf out;
	size_t i, start = 0;
	int first = 1;
	enum MHD_Result ret;

	buf_init(&out);
	buf_printf(&out, "{\"%s\":[", key);
	for (i = 0; i < b->len; i++) {
		if (b->p[i] != '\n')
			continue;
		if (i > start) {
			if (!first)
				buf_addc(&out, ',');
			buf_add(&out, b->p + start, i - start);
			first = 0;
		}
		start = i + 1;
	}
	buf_adds(&out, "]}");
	ret = reply(r, 200, "application/json", out.p, out.len);
	buf_release(&out);
	return ret;
}

/* one_reply answers the one JSON line in b, or the error behind rc */
static enum MHD_Result
one_reply(struct req *r, int rc, struct buf *b)
{
	while (b->len && b->p[b->len - 1] == '\n')
		b->len--;
	if (rc < 0)
		return reply_hw(r);
	return reply(r, 200, "application/json", b->p ? b->p : "{}", b->p ?
	    b->len : 2);
}

static enum MHD_Result
skills_list(struct req *r)
{
	struct buf b;
	enum MHD_Result ret;

	buf_init(&b);
	ret = skill_list(&b) < 0 ? reply_hw(r) : lines_reply(r, "skills", &b);
	buf_release(&b);
	return ret;
}

static enum MHD_Result
skills_refresh(struct req *r)
{
	static const struct field f[] = { { "source", J_STRING, 0 }, { 0 } };
	struct arena a;
	struct jval *v;
	struct buf b;
	enum MHD_Result ret;

	arena_init(&a);
	buf_init(&b);
	if ((ret = body_fields(r, &a, f, &v)) == MHD_YES && v)
		ret = skill_refresh(json_get_str(v, "source"), &b) < 0 ?
		    reply_hw(r) : lines_reply(r, "sources", &b);
	buf_release(&b);
	arena_release(&a);
	return ret;
}

/* approved: the researcher's approval must be in the body, and true */
static int
approved(struct req *r, const struct jval *v, enum MHD_Result *ret)
{
	if (json_get(v, "approved")->t == J_TRUE)
		return 1;
	*ret = reply_error(r, 409, NULL, "the install was not approved: "
	    "nothing was installed");
	return 0;
}

static enum MHD_Result
skills_catalog(struct req *r, int install)
{
	static const struct field fi[] = { { "name", J_STRING, 1 },
		{ "source", J_STRING, 0 }, { 0 } };
	static const struct field fx[] = { { "name", J_STRING, 1 },
		{ "source", J_STRING, 0 }, { "approved", J_TRUE, 1 },
		{ "expected_tree_sha256", J_STRING, 1 }, { 0 } };
	struct arena a;
	struct jval *v;
	struct buf b;
	enum MHD_Result ret;
	int rc;

	arena_init(&a);
	buf_init(&b);
	if ((ret = body_fields(r, &a, install ? fx : fi, &v)) == MHD_YES &&
	    v && (!install || approved(r, v, &ret))) {
		rc = install ? skill_catalog_install(json_get_str(v, "name"),
		    json_get_str(v, "expected_tree_sha256"),
		    json_get_str(v, "source"), &b) :
		    skill_catalog_inspect(json_get_str(v, "name"),
		    json_get_str(v, "source"), &b);
		ret = one_reply(r, rc, &b);
	}
	buf_release(&b);
	arena_release(&a);
	return ret;
}

static enum MHD_Result
skills_local(struct req *r, int install)
{
	static const struct field fi[] = { { "path", J_STRING, 1 }, { 0 } };
	static const struct field fx[] = { { "path", J_STRING, 1 },
		{ "approved", J_TRUE, 1 },
		{ "expected_tree_sha256", J_STRING, 1 }, { 0 } };
	struct skill_info si;
	struct stat st;
	struct arena a;
	struct jval *v;
	struct buf b;
	enum MHD_Result ret;
	int rc;

	arena_init(&a);
	buf_init(&b);
	if ((ret = body_fields(r, &a, install ? fx : fi, &v)) == MHD_YES &&
	    v && (!install || approved(r, v, &ret))) {
		if (lstat(json_get_str(v, "path"), &st) < 0) {
			ret = reply_error(r, 404, NULL, "no skill directory "
			    "'%s'", json_get_str(v, "path"));
			goto out;
		}
		if (install) {
			rc = skill_local_install(json_get_str(v, "path"),
			    json_get_str(v, "expected_tree_sha256"), &b);
		} else {
			if ((rc = skill_inspect(json_get_str(v, "path"),
			    &si)) == 0)
				skill_info_json(&si, "local-unreviewed", &b);
			skill_info_release(&si);	/* a failed one too */
		}
		ret = one_reply(r, rc, &b);
	}
out:
	buf_release(&b);
	arena_release(&a);
	return ret;
}

static enum MHD_Result
skills_remove(struct req *r, const char *name)
{
	struct buf b;
	enum MHD_Result ret;

	buf_init(&b);
	ret = one_reply(r, skill_remove(name, &b), &b);
	buf_release(&b);
	return ret;
}

enum MHD_Result
skills_route(struct req *r, const char *rest, const char *method)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	int post = !strcmp(method, "POST");

	if (!*rest)
		return get ? skills_list(r) : reply_405(r, "GET, HEAD");
	if (!strcmp(rest, "/refresh") || !strcmp(rest, "/inspect") ||
	    !strcmp(rest, "/install") || !strcmp(rest, "/local/inspect") ||
	    !strcmp(rest, "/local/install")) {
		if (!post)
			return reply_405(r, "POST");
		if (!strcmp(rest, "/refresh"))
			return skills_refresh(r);
		if (!strncmp(rest, "/local/", 7))
			return skills_local(r, !strcmp(rest, "/local/install"));
		return skills_catalog(r, !strcmp(rest, "/install"));
	}
	if (rest[0] == '/' && rest[1] && !strchr(rest + 1, '/'))
		return !strcmp(method, "DELETE") ? skills_remove(r, rest + 1) :
		    reply_405(r, "DELETE");
	return reply_error(r, 404, NULL, "unknown route");
}
