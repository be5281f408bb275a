/*
 * proj.h - the reducer's state, shared by reduce.c (events in) and emit.c
 * (the projection out) only
 */
#ifndef HW_SESSION_PROJ_H
#define HW_SESSION_PROJ_H

#define SUMMARY_MAX 240		/* characters in labels and summaries */
/*
 * The lists the projection shows are bounded so that its size, and the
 * cost of each update while following, does not grow with the log: the
 * most recent entries only; the log itself has them all.
 */
#define SHOWN_MAX 1000

/* recent: encoded entries, "," joined, of which the last SHOWN_MAX show */
struct recent {
	struct buf b;
	size_t *off;		/* where each live entry starts in b */
	size_t first, n, cap;	/* live entries are off[first..n) */
};

enum state {
	ST_PROPOSED, ST_AWAITING, ST_APPROVED, ST_REJECTED, ST_RUNNING,
	ST_SUCCEEDED, ST_FAILED, ST_UNKNOWN
};
extern const char *const state_name[];

enum decision { DEC_NONE, DEC_APPROVED, DEC_REJECTED };
extern const char *const decision_name[];

struct action {
	struct jval *tool_call_id, *action_id, *tool_name, *risk, *summary;
	struct jval *arguments, *details, *paths;
	const char *group;	/* group id, NULL until review is requested */
	enum state state;
	enum decision decision;
	int has_outcome, broken;
	struct jval *exit_code, *out_summary, *result, *truncated;
	int64_t proposed_seq, updated_seq;
};

struct group {
	const char *id;
	const char **members;	/* tool_call_ids, in request order */
	size_t n, cap;
	enum decision decision;
	int64_t seq;		/* of its last confirmation.requested */
	int elsewhere;		/* an approval not made by this user here */
};

struct usage {
	const char *id;
	int64_t calls, prompt, completion, cache_read, cache_write, reasoning;
	struct jval *model, *window;
	double cost;
	int known;
};

struct subagent {
	struct jval *invocation, *task, *name, *role, *status, *parent_sid;
	struct jval *parent_action;
	struct jval *failure, *cost, *budget;	/* this run's price, limit */
	struct jval *conversation;	/* where its conversation is kept */
};

/* an approval and whether this user's binding backed it when reduced */
struct approval {
	struct jval *ev;
	int bound;
};

struct proj {
	struct arena a;		/* everything kept lives here */
	struct arena t;		/* scratch for one call */
	struct arena plan;	/* the last task plan only */
	struct buf scratch;
	char *sid;
	int64_t count, revision, workspace;
	struct recent activity, conversation;
	struct action **actions;
	size_t nactions, capactions;
	struct smap by_call;	/* tool_call_id -> struct action */
	struct group **groups;
	size_t ngroups, capgroups;
	struct smap by_group;	/* group id -> struct group */
	struct group **open;	/* the groups with no decision, in order */
	size_t nopen, capopen;
	const char *status;	/* lifecycle status */
	int unrecoverable;
	struct jval *error_reason;
	int user_messages;
	int last_denied;	/* the last decided group was rejected */
	struct jval *endpoint, *model_decision, *model_reason;
	struct jval *policy_id, *isolation;	/* of the last decision */
	struct jval *cmd_id, *cmd_kind, *cmd_message;	/* last command */
	int cmd_rejected;
	struct jval *tasks;	/* the last plan, as given */
	struct usage total;
	struct usage **purposes;
	size_t npurposes;
	struct subagent **subagents;
	size_t nsubagents;
	struct smap by_invocation;
	struct approval *approvals;	/* every approved approval.recorded */
	size_t napprovals, capapprovals;
	char epoch[129];
	int64_t stream_rev, stream_at;	/* streamRevision; the revision */
	struct buf stream;		/* the transient text */
	char why[512];
};

/*
 * The projection snapshot (snap.c) keeps every field above that events
 * set; its version, SNAP_SCHEMA (session.h), changes with struct proj.
 */

/* ---- small helpers ---- */

static inline struct jval *
keep(struct proj *p, const struct jval *v)
{
	return v ? json_copy(&p->a, v) : NULL;
}

static inline const char *
keep_str(struct proj *p, const struct jval *v)
{
	return v && v->t == J_STRING ? arena_strndup(&p->a, v->u.s, v->n) :
	    NULL;
}

static inline struct jval *
str_or_null(struct jval *v)
{
	return v && v->t == J_STRING ? v : NULL;
}

static inline int
is(const struct jval *v, const char *s)
{
	return json_is_str(v, s);
}

static inline void
grow(void *arrp, size_t n, size_t *cap, size_t size)
{
	void **arr = arrp;

	if (n < *cap)
		return;
	*cap = *cap ? 2 * *cap : 16;
	*arr = xrealloc(*arr, *cap * size);
}

/* bounded: s cut to SUMMARY_MAX characters, at a character boundary */
static inline struct jval *
bounded(struct arena *a, const struct jval *s)
{
	size_t i, chars = 0;

	if (!s || s->t != J_STRING)
		return NULL;
	for (i = 0; i < s->n; i++)
		if (((unsigned char)s->u.s[i] & 0xc0) != 0x80 &&
		    chars++ == SUMMARY_MAX)
			return json_strn(a, s->u.s, i);
	return (struct jval *)s;
}

/* set adds member k (never already there), null for a NULL v */
static inline void
set(struct arena *a, struct jval *o, const char *k, struct jval *v)
{
	json_add(a, o, k, v ? v : json_new(a, J_NULL));
}

/* recent_shown: the shown entries' bytes, without the leading "," */
static inline const char *
recent_shown(const struct recent *r, size_t *len)
{
	size_t at = r->n > r->first ? r->off[r->first] : r->b.len;

	*len = r->b.len - at;
	return r->b.p + at;
}

#endif
