/* render.c - a session's projection as text for a person: what the
 * terminal shows in both modes and what hw(1) prints on a terminal */
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

void
term_init(struct term *t, const char *sid, FILE *out, FILE *err)
{
	*t = (struct term){ .sid = sid, .out = out, .err = err, .shown = -1,
		.acted = -1, .go = term_continue,
		.show = term_render };
}

/* fail reports the last error as "heartwood: message" and returns its code */
int
term_fail(struct term *t)
{
	const char *m = hw_err_msg();

	fputs("heartwood: ", t->err);
	tty_put(t->err, *m ? m : "failed", strlen(*m ? m : "failed"), 0);
	fputc('\n', t->err);
	fflush(t->err);
	return hw_err_code() ? hw_err_code() : HW_EXIT_FAIL;
}

void
term_safe(struct buf *b, const char *s)
{
	if (s)
		tty_escape(b, s, strlen(s), 1);
}

/* safe writes s with control characters as \xNN, keeping newlines */
void
term_put_safe(FILE *f, const char *s)
{
	struct buf b;

	buf_init(&b);
	term_safe(&b, s);
	if (b.len)
		fwrite(b.p, 1, b.len, f);
	buf_release(&b);
}

void
term_put(FILE *f, struct buf *b)
{
	if (b->len)
		fwrite(b->p, 1, b->len, f);
	buf_clear(b);
}

const char *
term_risk_label(const char *r)
{
	if (r && !strcmp(r, "low"))
		return "Low";
	if (r && !strcmp(r, "medium"))
		return "Medium";
	if (r && !strcmp(r, "high"))
		return "High";
	return "Not Classified";
}

const char *
term_mode_label(void)
{
	struct arena a;
	struct jval *cfg;
	const char *m = "always-confirm";

	arena_init(&a);
	if (config_load(&a, &cfg) == 0)
		m = config_mode(cfg);
	arena_release(&a);
	return strcmp(m, "confirm-risky") ? "Review Every Action" :
	    "Low-Risk Automation";
}

static int64_t
seq_of(const struct jval *v, const char *key)
{
	int64_t n = -1;

	json_get_int(v, key, &n);
	return n;
}

void
term_entry_text(struct buf *b, const struct jval *e)
{
	buf_printf(b, "[%03lld] ", (long long)seq_of(e, "sequence"));
	term_safe(b, json_get_str(e, "label"));
	if (!json_get_str(e, "content"))
		return;	/* a trace with no text, such as an audit export */
	buf_adds(b, ": ");
	term_safe(b, json_get_str(e, "content"));
}

void
term_action_text(struct buf *b, const struct jval *a)
{
	const struct jval *o = json_get(a, "outcome");
	const char *tool = json_get_str(a, "toolName");

	buf_adds(b, "Action: ");
	term_safe(b, json_get_str(a, "summary"));
	buf_adds(b, " [");
	term_safe(b, tool ? tool : "?");
	buf_adds(b, "] · ");
	term_safe(b, json_get_str(a, "state"));
	if (o && o->t == J_OBJECT) {
		buf_adds(b, " · ");
		term_safe(b, json_get_str(o, "summary"));
	}
}

void
term_member_text(struct buf *b, const struct jval *a, size_t i)
{
	const char *tool = json_get_str(a, "toolName");

	buf_printf(b, "%zu. ", i + 1);
	term_safe(b, json_get_str(a, "summary"));
	buf_adds(b, " [");
	term_safe(b, tool ? tool : "?");
	buf_printf(b, " · %s]", term_risk_label(json_get_str(a, "risk")));
}

void
term_task_text(struct buf *b, const struct jval *a)
{
	const struct jval *d = json_get(a, "details");
	const char *label = json_get_str(d, "roleLabel");
	const char *cap = json_get_str(d, "capability");
	const char *obj = json_get_str(d, "description");

	if (!json_is_str(json_get(a, "toolName"), "task"))
		return;
	buf_adds(b, "\n     Specialist: ");
	term_safe(b, label ? label : "not in the catalogue");
	if (cap) {
		buf_adds(b, " · ");
		term_safe(b, cap);
	}
	buf_adds(b, " · Objective: ");
	term_safe(b, obj && *obj ? obj : json_get_str(d, "prompt"));
}

void
term_review_text(struct buf *b, size_t n)
{
	buf_printf(b, "Review required · %zu action%s · one decision", n,
	    n == 1 ? "" : "s");
}

void
term_status_text(struct buf *b, const struct jval *proj)
{
	const struct jval *rs = json_get(proj, "researcherStatus");

	term_safe(b, json_get_str(rs, "label") ? json_get_str(rs, "label") :
	    json_get_str(json_get(proj, "lifecycle"), "status"));
	buf_printf(b, " · %s", term_mode_label());
}

size_t
term_pending_count(const struct jval *proj, const struct jval **acts)
{
	const struct jval *p = json_get(proj, "pendingApproval");
	const struct jval *a = json_get(p, "actions");

	if (acts)
		*acts = a && a->t == J_ARRAY ? a : NULL;
	return p && p->t == J_OBJECT && a && a->t == J_ARRAY ? a->n : 0;
}

int
term_pending_elsewhere(const struct jval *proj)
{
	const struct jval *e = json_get(json_get(proj, "pendingApproval"),
	    "decidedElsewhere");

	return e && e->t == J_TRUE;
}

char *
term_attention(const char *sid)
{
	char *why = driver_interrupted(sid);
	struct arena a;
	struct jval *proj;
	const char *st;

	if (why)
		return why;
	arena_init(&a);
	proj = driver_project(sid, &a);
	st = json_get_str(json_get(proj, "lifecycle"), "status");
	if (st && !strcmp(st, "waiting-for-confirmation") &&
	    json_get(proj, "pendingApproval") &&
	    json_get(proj, "pendingApproval")->t == J_NULL)
		why = xasprintf("an action set was decided but no agent has "
		    "taken it up; continue with 'hw agent run %s'", sid);
	arena_release(&a);
	return why;
}

/* show_conversation prints entries after t->shown as "[NNN] Label: text" */
static void
show_conversation(struct term *t, const struct jval *proj)
{
	const struct jval *c = json_get(proj, "conversation"), *e;
	struct buf b;
	int64_t s;

	buf_init(&b);
	for (size_t i = 0; c && c->t == J_ARRAY && i < c->n; i++) {
		e = c->u.a[i];
		if ((s = seq_of(e, "sequence")) <= t->shown)
			continue;
		term_entry_text(&b, e);
		buf_addc(&b, '\n');
		term_put(t->out, &b);
		t->shown = s;
	}
	buf_release(&b);
}

/* show_outcomes prints each action decided or finished since t->acted */
static void
show_outcomes(struct term *t, const struct jval *proj)
{
	const struct jval *acts = json_get(proj, "actions"), *a;
	int64_t s, top = t->acted;
	const char *st;
	struct buf b;

	buf_init(&b);
	for (size_t i = 0; acts && acts->t == J_ARRAY && i < acts->n; i++) {
		a = acts->u.a[i];
		st = json_get_str(a, "state");
		s = seq_of(a, "updatedSequence");
		if (s <= t->acted || !st || !strcmp(st, "awaiting-review"))
			continue;
		term_action_text(&b, a);
		buf_addc(&b, '\n');
		term_put(t->out, &b);
		top = s > top ? s : top;
	}
	t->acted = top;
	buf_release(&b);
}

static void
show_pending(struct term *t, const struct jval *proj)
{
	const struct jval *acts;
	size_t n = term_pending_count(proj, &acts);
	struct buf b;

	buf_init(&b);
	term_review_text(&b, n);
	buf_printf(&b, "\nReview %zu action(s) as one action set (", n);
	term_safe(&b, json_get_str(json_get(proj, "pendingApproval"),
	    "groupId"));
	buf_adds(&b, "):\n");
	for (size_t i = 0; i < n; i++) {
		buf_adds(&b, "  ");
		term_member_text(&b, acts->u.a[i], i);
		term_task_text(&b, acts->u.a[i]);
		buf_adds(&b, "\n     ");
		json_canon(&b, json_get(acts->u.a[i], "arguments"));
		buf_addc(&b, '\n');
	}
	if (term_pending_elsewhere(proj)) {
		term_safe(&b, json_get_str(json_get(proj, "researcherStatus"),
		    "detail"));
		buf_addc(&b, '\n');
	}
	if (t->hw_verbs)
		buf_printf(&b, "Run 'hw allow' to allow all %zu once, or 'hw "
		    "reject' to reject all %zu.\n", n, n);
	else
		buf_printf(&b, "Type /allow to allow all %zu once, or /reject "
		    "to reject all %zu.\n", n, n);
	term_put(t->out, &b);
	buf_release(&b);
}

static void
show_status_line(struct term *t, const struct jval *proj)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, "Status: ");
	term_status_text(&b, proj);
	buf_addc(&b, '\n');
	term_put(t->out, &b);
	buf_release(&b);
}

void
term_show(struct term *t, const struct jval *proj)
{
	json_get_int(proj, "eventCount", &t->events);
	show_conversation(t, proj);
	show_outcomes(t, proj);
	if (term_pending_count(proj, NULL))
		show_pending(t, proj);
	show_status_line(t, proj);
}

void
term_print(const char *sid, const struct jval *proj, int64_t since)
{
	struct term t;

	term_init(&t, sid, stdout, stderr);
	t.shown = t.acted = since;
	t.hw_verbs = 1;
	term_show(&t, proj);
}

int
term_render(struct term *t)
{
	struct arena a;
	struct jval *proj;
	int rc = 0;

	arena_init(&a);
	if (!(proj = driver_project(t->sid, &a))) {
		rc = term_fail(t);
		goto out;
	}
	term_show(t, proj);
out:
	fflush(t->out);
	arena_release(&a);
	return rc;
}
