/*
 * commit.c - what the agent commits: drafts of its events, their text
 * bounded, the lifecycle, errors, usage
 */
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/loop.h"

/* ---- committing ---- */

struct jval *
ag_draft(struct agent *ag, const char *kind)
{
	struct jval *d = json_obj(&ag->t), *p = json_obj(&ag->t);

	json_add(&ag->t, d, "kind", json_str(&ag->t, kind));
	json_add(&ag->t, d, "payload", p);
	return d;
}

struct jval *
ag_payload(struct jval *d)
{
	return json_get(d, "payload");
}

void
ag_put(struct agent *ag, struct jval *o, const char *k, struct jval *v)
{
	json_add(&ag->t, o, k, v ? v : json_new(&ag->t, J_NULL));
}

struct jval *
ag_str(struct agent *ag, const char *s)
{
	return json_str(&ag->t, s);
}

/* char_start: the largest cut <= at that does not split a UTF-8 character */
static size_t
char_start(const char *p, size_t at)
{
	while (at > 0 && ((unsigned char)p[at] & 0xC0) == 0x80)
		at--;
	return at;
}

/* chars_prefix: the bytes of the first `chars` characters of s */
size_t
ag_chars_prefix(const char *s, size_t chars)
{
	size_t i = 0, n = strlen(s);

	for (; i < n && chars > 0; chars--)
		for (i++; i < n && ((unsigned char)s[i] & 0xC0) == 0x80; i++)
			;
	return i;
}

/* text: the model's text p (n bytes), cut at TEXT_MAX with a note */
struct jval *
ag_text(struct agent *ag, const char *p, size_t n)
{
	struct buf b;
	struct jval *v;
	size_t cut;

	if (n <= TEXT_MAX)
		return json_strn(&ag->t, p ? p : "", n);
	cut = char_start(p, TEXT_MAX);
	buf_init(&b);
	buf_add(&b, p, cut);
	buf_printf(&b, "\n\n[cut by heartwood: the text held %zu bytes; the "
	    "first %zu are kept]", n, cut);
	v = json_strn(&ag->t, b.p, b.len);
	buf_release(&b);
	return v;
}

/* commit makes the drafts durable, then ingests them */
int
ag_commit(struct agent *ag, struct jval **d, size_t n)
{
	struct buf ack;
	struct arena a;
	struct jval *ev;
	char *line, *nl, err[128];
	int rc = -1;

	buf_init(&ack);
	arena_init(&a);
	if (session_commit(ag->s, d, NULL, n, &ack) < 0)
		goto out;
	for (line = ack.p; line && line < ack.p + ack.len; line = nl + 1) {
		nl = memchr(line, '\n', (size_t)(ack.p + ack.len - line));
		arena_clear(&a);
		if (!(ev = json_parse(&a, line, (size_t)(nl - line), err,
		    sizeof err))) {
			hw_err_set(HW_EXIT_DATA, "committed event: %s", err);
			goto out;
		}
		ag_ingest(ag, ev);
	}
	rc = 0;
out:
	buf_release(&ack);
	arena_release(&a);
	return rc;
}

int
ag_commit1(struct agent *ag, struct jval *d)
{
	return ag_commit(ag, &d, 1);
}

struct jval *
ag_lifecycle(struct agent *ag, const char *status)
{
	struct jval *d = ag_draft(ag, "agent.lifecycle.updated");

	ag_put(ag, ag_payload(d), "status", ag_str(ag, status));
	return d;
}

struct jval *
ag_error_draft(struct agent *ag, const char *code, const char *reason)
{
	struct jval *d = ag_draft(ag, "error.recorded");

	ag_put(ag, ag_payload(d), "backend_id", ag_str(ag, "hw-agent"));
	ag_put(ag, ag_payload(d), "code", ag_str(ag, code));
	ag_put(ag, ag_payload(d), "reason", ag_str(ag, reason));
	return d;
}

struct jval *
ag_cost(struct agent *ag, double cost, int unknown)
{
	struct jval *v;

	if (unknown)
		return NULL;
	v = json_new(&ag->t, J_FLOAT);
	v->u.d = cost;
	return v;
}

struct jval *
ag_usage_draft(struct agent *ag, const char *id, const struct counts *c,
    const struct model_reply *r)
{
	struct jval *d = ag_draft(ag, "model.usage.updated"), *u = json_obj(&ag->t);


	ag_put(ag, u, "usage_id", ag_str(ag, id));
	ag_put(ag, u, "model_name", ag_str(ag, ag->route.model));
	ag_put(ag, u, "call_count", json_int(&ag->t, c->calls));
	ag_put(ag, u, "prompt_tokens", json_int(&ag->t, c->prompt));
	ag_put(ag, u, "completion_tokens", json_int(&ag->t, c->completion));
	ag_put(ag, u, "cache_read_tokens", json_int(&ag->t,
	    r->cache_read_tokens > 0 ? r->cache_read_tokens : 0));
	ag_put(ag, u, "cache_write_tokens", json_int(&ag->t, 0));
	ag_put(ag, u, "reasoning_tokens", json_int(&ag->t,
	    r->reasoning_tokens > 0 ? r->reasoning_tokens : 0));
	ag_put(ag, u, "context_window", ag->route.max_input_tokens > 0 ?
	    json_int(&ag->t, ag->route.max_input_tokens) : NULL);
	ag_put(ag, u, "accumulated_cost", ag_cost(ag, c->cost, c->unknown));
	ag_put(ag, ag_payload(d), "usage", u);
	return d;
}

struct counts *
ag_total(const struct agent *ag, struct counts *t)
{
	size_t i;

	t->calls = ag->use[0].calls + ag->use[1].calls;
	t->prompt = ag->use[0].prompt + ag->use[1].prompt;
	t->completion = ag->use[0].completion + ag->use[1].completion;
	t->cost = ag->use[0].cost + ag->use[1].cost;
	t->unknown = ag->use[0].unknown || ag->use[1].unknown;
	for (i = 0; i < ag->nsu; i++) {
		t->calls += ag->su[i].c.calls;
		t->prompt += ag->su[i].c.prompt;
		t->completion += ag->su[i].c.completion;
		t->cost += ag->su[i].c.cost;
		t->unknown |= ag->su[i].c.unknown;
	}
	return t;
}

void
ag_count(struct counts *c, const struct model_reply *r)
{
	c->calls++;
	c->prompt += r->prompt_tokens > 0 ? r->prompt_tokens : 0;
	c->completion += r->completion_tokens > 0 ? r->completion_tokens : 0;
	if (r->cost_known)
		c->cost += r->cost;
	else
		c->unknown = 1;
}

/* stop records an error that ends the run (recoverable unless fatal) */
int
ag_stop(struct agent *ag, const char *code, const char *reason)
{
	arena_clear(&ag->t);
	if (ag_commit1(ag, ag_error_draft(ag, code, reason)) < 0)
		return -1;
	return hw_err_set(HW_EXIT_FAIL, "%s: %s", code, reason);
}
