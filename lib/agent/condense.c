/*
 * condense.c - the condenser: when the conversation outgrows the model's
 * budget, its older part is summarized in pieces and replaced
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/loop.h"

/* ---- the condenser ---- */

/* tokens: a rough count of what message i sends (4 bytes a token) */
static size_t
tokens(const struct jval *m)
{
	struct buf b;
	size_t n;

	buf_init(&b);
	json_canon(&b, m);
	n = b.len / 4 + 4;
	buf_release(&b);
	return n;
}

/* budget: the input budget in tokens, 0 when neither known nor learnt */
static int64_t
budget(const struct agent *ag)
{
	int64_t max = ag->route.max_input_tokens;

	return ag->learnt > 0 && (max <= 0 || ag->learnt < max) ? ag->learnt :
	    max;
}

/*
 * cut: where the kept tail starts, or 0 when nothing should be forgotten.
 * Over the token budget (hard) the tail keeps half of it; over
 * CONDENSE_EVENTS messages (soft) it keeps the last half of those.  The
 * tail never starts with a tool result, whose call must stay with it, and
 * the cut must forget at least a tenth of the messages.
 */
size_t
ag_cut(struct agent *ag)
{
	size_t n = ag->messages->n, i, total = 0, tail = 0, at;
	int64_t max = budget(ag);

	for (i = 0; i < n; i++)
		total += tokens(ag->messages->u.a[i]);
	if (max > 0 && total > (size_t)(max * 3 / 4)) {
		for (at = n; at > KEEP_FIRST + 1; at--) {
			tail += tokens(ag->messages->u.a[at - 1]);
			if (tail > (size_t)(max * 3 / 8))
				break;
		}
	} else if (n > CONDENSE_EVENTS) {
		at = n - (CONDENSE_EVENTS / 2 - KEEP_FIRST - 1);
	} else {
		return 0;
	}
	while (at < n && json_is_str(json_get(ag->messages->u.a[at], "role"),
	    "tool"))
		at++;
	if (at >= n)
		return 0;	/* the newest message always stays */
	return at > KEEP_FIRST && (at - KEEP_FIRST) * 10 >= n ? at : 0;
}

/*
 * shrink learns from a refusal as too large: the budget becomes half of
 * what was sent (or of the budget in force, when smaller).  -1 once it
 * would fall below MIN_BUDGET: the refusal then stands.
 */
int
ag_shrink(struct agent *ag, size_t sent)
{
	int64_t b = budget(ag), half;

	if (b <= 0 || (size_t)b > sent)
		b = (int64_t)sent;
	half = b / 2;
	if (half < MIN_BUDGET)
		return -1;
	ag->learnt = half;
	return 0;
}

/*
 * piece: the end of the next piece to summarize, from KEEP_FIRST (the
 * summary so far, once there is one) up to at: at most three quarters of
 * the budget, the share a turn may fill before it is condensed
 * (PIECE_TOKENS when none is known), and never less than two messages,
 * so every piece moves on.  A message larger than a piece on its own is
 * cut short in the request (piece_text).
 */
static size_t
piece(const struct agent *ag, size_t at, size_t *limit)
{
	int64_t b = budget(ag);
	size_t end = KEEP_FIRST, sum = 0, k;

	*limit = b > 0 ? (size_t)(b * 3 / 4) : PIECE_TOKENS;
	while (end < at) {
		k = tokens(ag->messages->u.a[end]);
		if (end >= KEEP_FIRST + 2 && sum + k > *limit)
			break;
		sum += k;
		end++;
	}
	return end;
}

/* piece_text: messages [KEEP_FIRST, end) as JSON lines, in limit tokens */
static void
piece_text(const struct agent *ag, size_t end, size_t limit,
    struct buf *b)
{
	size_t i, cap = limit * 4, room;
	struct buf one;

	buf_init(&one);
	for (i = KEEP_FIRST; i < end; i++) {
		buf_clear(&one);
		json_canon(&one, ag->messages->u.a[i]);
		room = cap / (end - KEEP_FIRST);
		if (one.len > room) {
			one.len = room;	/* canonical JSON is ASCII */
			buf_printf(&one, " [... cut short: too long to "
			    "summarize whole]");
		}
		buf_add(b, one.p, one.len);
		buf_addc(b, '\n');
	}
	buf_release(&one);
}

/*
 * summarize asks the route for a summary of messages [KEEP_FIRST, end)
 * and records it as one condensation; a refusal as too large shrinks
 * the budget and returns 1 (nothing recorded), so the caller tries a
 * smaller piece.
 */
static int
summarize(struct agent *ag, size_t end, size_t limit)
{
	struct arena *t = &ag->t;
	struct jval *msgs, *m, *d[3], *c;
	struct model_reply rep;
	struct counts tot;
	struct buf b;
	const char *code = NULL;
	size_t sent;
	int rc;

	arena_clear(t);
	buf_init(&b);
	piece_text(ag, end, limit, &b);
	sent = b.len / 4;
	msgs = json_new(t, J_ARRAY);
	m = json_obj(t);
	ag_put(ag, m, "role", ag_str(ag, "system"));
	ag_put(ag, m, "content", ag_str(ag, ag->prompts.condense.p));
	json_push(t, msgs, m);
	m = json_obj(t);
	ag_put(ag, m, "role", ag_str(ag, "user"));
	ag_put(ag, m, "content", json_strn(t, b.p ? b.p : "", b.len));
	json_push(t, msgs, m);
	buf_release(&b);
	model_reply_init(&rep);
	if (model_complete(&ag->route, msgs, NULL, &rep, NULL, NULL,
	    &code) < 0) {
		rc = rep.too_large && ag_shrink(ag, sent) == 0 ? 1 : -1;
		model_reply_release(&rep);
		return rc > 0 ? 1 : ag_stop(ag, code ? code : "HW-AGENT-999",
		    hw_err_msg());
	}
	ag_count(&ag->use[USE_CONDENSER], &rep);
	arena_clear(t);
	d[0] = ag_usage_draft(ag, "condenser", &ag->use[USE_CONDENSER], &rep);
	d[1] = ag_usage_draft(ag, "total", ag_total(ag, &tot), &rep);
	d[2] = ag_draft(ag, "agent_message.emitted");
	c = json_obj(t);
	ag_put(ag, c, "from", json_int(t, ag->mseq[KEEP_FIRST]));
	ag_put(ag, c, "through", json_int(t, ag->mseq[end - 1]));
	ag_put(ag, ag_payload(d[2]), "content", ag_text(ag, rep.content.p,
	    rep.content.len));
	ag_put(ag, ag_payload(d[2]), "condensation", c);
	rc = ag_commit(ag, d, 3);
	model_reply_release(&rep);
	return rc;
}

/*
 * condense summarizes messages [KEEP_FIRST, at) in pieces that fit the
 * input budget, each recorded as it is made: the first piece's
 * summary replaces it (ingest: condensed), and the next piece starts
 * with that summary, so the last one covers everything and no request
 * grows with the history.
 */
int
ag_condense(struct agent *ag, size_t at)
{
	size_t end, limit;
	int rc;

	while (at > KEEP_FIRST + 1) {
		end = piece(ag, at, &limit);
		if ((rc = summarize(ag, end, limit)) < 0)
			return -1;
		if (rc == 0)	/* [KEEP_FIRST, end) is one message now */
			at -= end - KEEP_FIRST - 1;
	}
	return 0;
}

/* request_tokens: what a turn sends, roughly */
size_t
ag_request_tokens(const struct agent *ag)
{
	size_t i, n = 0;

	for (i = 0; i < ag->messages->n; i++)
		n += tokens(ag->messages->u.a[i]);
	return n;
}
