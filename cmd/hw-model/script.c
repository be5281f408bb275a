/* script.c - the turns of a replay model script (hw-model(1)) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

#define TOKENS_MAX 1000000000000LL

static const char *const turn_keys[] = { "content", "tool_calls", "usage",
	"expect", "fail", NULL };
static const char *const call_keys[] = { "id", "name", "arguments", NULL };
static const char *const usage_keys[] = { "prompt_tokens",
	"completion_tokens", "cost", NULL };

/* where names the line (and the value within it) in errors */
struct where {
	const char *name;
	long line;
	size_t turn;		/* 1-based */
};

static int __attribute__((format(printf, 2, 3)))
bad(const struct where *w, const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", w->name, w->line, why);
}

/* shown writes a key for an error message: printable ASCII, at most 64 */
static const char *
shown(const char *k, size_t n, char out[68])
{
	size_t i, m = n > 64 ? 64 : n;

	for (i = 0; i < m; i++)
		out[i] = k[i] >= 0x20 && k[i] < 0x7f ? k[i] : '?';
	strcpy(out + m, n > 64 ? "..." : "");
	return out;
}

/* unknown: -1 with the error when obj has a key not in keys */
static int
unknown(const struct where *w, const char *ctx, const struct jval *obj,
    const char *const *keys)
{
	size_t i, j;
	char k[68];

	for (i = 0; i < obj->n; i++) {
		for (j = 0; keys[j]; j++)
			if (strlen(keys[j]) == obj->u.m[i].kn &&
			    !memcmp(keys[j], obj->u.m[i].k, obj->u.m[i].kn))
				break;
		if (!keys[j])
			return bad(w, "%s%sunknown field '%s'", ctx,
			    *ctx ? ": " : "", shown(obj->u.m[i].k,
			    obj->u.m[i].kn, k));
	}
	return 0;
}

/* text: a non-empty string without NUL, else NULL */
static const char *
text(const struct jval *v)
{
	if (!v || v->t != J_STRING || v->n == 0 || memchr(v->u.s, 0, v->n))
		return NULL;
	return v->u.s;
}

static int
parse_call(struct arena *a, const struct where *w, const struct jval *v,
    size_t i, struct replay_call *c)
{
	const struct jval *args;
	struct buf b;
	char ctx[48];

	snprintf(ctx, sizeof ctx, "'tool_calls[%zu]'", i);
	if (v->t != J_OBJECT)
		return bad(w, "%s must be an object", ctx);
	if (unknown(w, ctx, v, call_keys) < 0)
		return -1;
	if (json_get(v, "id") && !(c->id = text(json_get(v, "id"))))
		return bad(w, "'tool_calls[%zu].id' must be a non-empty "
		    "string", i);
	if (!c->id) {
		snprintf(ctx, sizeof ctx, "call-%zu-%zu", w->turn, i + 1);
		c->id = arena_strndup(a, ctx, strlen(ctx));
	}
	if (!(c->name = text(json_get(v, "name"))))
		return bad(w, "'tool_calls[%zu].name' must be a non-empty "
		    "string", i);
	args = json_get(v, "arguments");
	if (!args || args->t != J_OBJECT)
		return bad(w, "'tool_calls[%zu].arguments' must be an object",
		    i);
	buf_init(&b);
	json_canon(&b, args);
	c->args = arena_strndup(a, b.p, b.len);
	c->args_n = b.len;
	buf_release(&b);
	return 0;
}

static int
parse_calls(struct arena *a, const struct where *w, const struct jval *v,
    struct replay_turn *t)
{
	size_t i, j;

	if (v->t != J_ARRAY || v->n == 0)
		return bad(w, "'tool_calls' must be a non-empty array");
	t->calls = arena_alloc(a, v->n * sizeof *t->calls);
	for (i = 0; i < v->n; i++) {
		if (parse_call(a, w, v->u.a[i], i, &t->calls[i]) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(t->calls[j].id, t->calls[i].id))
				return bad(w, "'tool_calls[%zu].id' repeats "
				    "the id of 'tool_calls[%zu]'", i, j);
	}
	t->ncalls = v->n;
	return 0;
}

static int
tokens(const struct where *w, const struct jval *u, const char *key,
    int64_t *out)
{
	const struct jval *v = json_get(u, key);

	*out = 0;
	if (v && (json_get_int(u, key, out) < 0 || *out < 0 ||
	    *out > TOKENS_MAX))
		return bad(w, "'usage.%s' must be a whole number from 0 to "
		    "%lld", key, TOKENS_MAX);
	return 0;
}

static int
parse_usage(const struct where *w, const struct jval *u,
    struct replay_turn *t)
{
	const struct jval *c;

	if (u->t != J_OBJECT)
		return bad(w, "'usage' must be an object");
	if (unknown(w, "'usage'", u, usage_keys) < 0 ||
	    tokens(w, u, "prompt_tokens", &t->prompt_tokens) < 0 ||
	    tokens(w, u, "completion_tokens", &t->completion_tokens) < 0)
		return -1;
	if ((c = json_get(u, "cost"))) {
		t->cost = c->t == J_FLOAT ? c->u.d : c->t == J_INT ?
		    strtod(c->u.s, NULL) : -1;
		if (!(t->cost >= 0 && t->cost <= 1e6))
			return bad(w, "'usage.cost' must be a number of US "
			    "dollars from 0 to 1000000");
		t->has_cost = 1;
	}
	return 0;
}

static int
parse_fail(const struct where *w, const struct jval *turn,
    struct replay_turn *t)
{
	static const char *const moot[] = { "content", "tool_calls", "usage",
		NULL };
	const struct jval *v = json_get(turn, "fail");
	int64_t code = 0;
	size_t i;

	if (json_is_str(v, "drop")) {
		t->fail = REPLAY_DROP;
		return 0;
	}
	if (json_get_int(turn, "fail", &code) < 0 || (code != 401 &&
	    code != 403 && code != 429 && code != 500))
		return bad(w, "'fail' must be 401, 403, 429, 500 or \"drop\"");
	t->fail = (int)code;
	for (i = 0; moot[i]; i++)
		if (json_get(turn, moot[i]))
			return bad(w, "'%s' means nothing in a turn that "
			    "fails with %d", moot[i], t->fail);
	return 0;
}

static int
parse_turn(struct arena *a, const struct where *w, const struct jval *v,
    struct replay_turn *t)
{
	const struct jval *c;

	memset(t, 0, sizeof *t);
	t->line = w->line;
	if (unknown(w, "", v, turn_keys) < 0)
		return -1;
	if ((c = json_get(v, "content")) && c->t != J_NULL) {
		if (c->t != J_STRING)
			return bad(w, "'content' must be a string or null");
		t->content = c->u.s;
		t->content_n = c->n;
	}
	if ((c = json_get(v, "tool_calls")) && parse_calls(a, w, c, t) < 0)
		return -1;
	if ((c = json_get(v, "usage")) && parse_usage(w, c, t) < 0)
		return -1;
	if ((c = json_get(v, "expect")) && !(t->expect = text(c)))
		return bad(w, "'expect' must be a non-empty string");
	if (json_get(v, "fail") && parse_fail(w, v, t) < 0)
		return -1;
	return 0;
}

static int
blank(const char *p, size_t n)
{
	while (n && (*p == ' ' || *p == '\t' || *p == '\r'))
		p++, n--;
	return n == 0;
}

/* one_line parses line text p (n bytes, not NUL-terminated) as a turn */
static int
one_line(struct replay_script *s, struct where *w, const char *p, size_t n,
    size_t *cap)
{
	struct jval *v;
	char err[128];

	if (!(v = json_parse(&s->a, p, n, err, sizeof err)))
		return bad(w, "%s", err);
	if (v->t != J_OBJECT)
		return bad(w, "a turn must be a JSON object");
	if (s->n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		s->turns = xrealloc(s->turns, *cap * sizeof *s->turns);
	}
	w->turn = s->n + 1;
	if (parse_turn(&s->a, w, v, &s->turns[s->n]) < 0)
		return -1;
	s->n++;
	return 0;
}

void
replay_script_init(struct replay_script *s)
{
	memset(s, 0, sizeof *s);
	arena_init(&s->a);
}

void
replay_script_release(struct replay_script *s)
{
	free(s->turns);
	arena_release(&s->a);
	memset(s, 0, sizeof *s);
}

int
replay_script_parse(struct replay_script *s, const char *name,
    const char *p, size_t n)
{
	struct where w = { name, 0, 0 };
	const char *end = p + n, *nl;
	size_t cap = 0;

	s->n = 0;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		w.line++;
		if (!blank(p, (size_t)(nl - p)) &&
		    one_line(s, &w, p, (size_t)(nl - p), &cap) < 0)
			return -1;
		p = nl + 1;
	}
	if (s->n == 0)
		return hw_err_set(HW_EXIT_DATA, "%s: the script holds no turns",
		    name);
	return 0;
}

/* (symbolic links are followed: a script is input, not a store file) */
int
replay_script_load(struct replay_script *s, const char *path)
{
	struct stat st;
	struct buf b;
	int fd, rc = -1;

	buf_init(&b);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		hw_err_sys("cannot open '%s'", path);
		if (errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
		goto out;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		hw_err_set(HW_EXIT_DATA, "refusing to read '%s': not a "
		    "regular file", path);
	else if (read_fd(fd, path, REPLAY_SCRIPT_MAX, &b) == 0)
		rc = replay_script_parse(s, path, b.p, b.len);
	close(fd);
out:
	buf_release(&b);
	return rc;
}
