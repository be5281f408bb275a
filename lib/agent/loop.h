/*
 * loop.h - the agent loop's state, shared by agent.c (the loop),
 * history.c (the conversation from events) and condense.c only
 */
#ifndef HW_AGENT_LOOP_H
#define HW_AGENT_LOOP_H

#define STUCK_REPEATS 3		/* the same action set this often in a row */
#define CONDENSE_EVENTS 240	/* messages before a soft condensation */
#define KEEP_FIRST 2		/* the system message and the first ask */
#define PIECE_TOKENS 65536	/* one condensation request, budget unknown */
#define MIN_BUDGET 1024		/* tokens: below it a refusal is final */
#define SHRINKS 8		/* refusals as too large, then it fails */
/*
 * What is recorded of a reply stays well inside the readers' line bound
 * (JSONL_LINE_MAX) however its text is escaped (at most 6 bytes a byte):
 * text over TEXT_MAX bytes is cut with a note; a tool call with a name
 * over NAME_MAX or arguments over ARGS_MAX bytes of canonical JSON (which
 * a cut would change) refuses the reply as HW-AGENT-011.
 */
#define TEXT_MAX (1u << 20)
#define ARGS_MAX (4u << 20)
#define NAME_MAX_ 256
#define SUMMARY_CHARS 240	/* a proposal's summary, as the projection */
enum { USE_AGENT, USE_CONDENSER };

/*
 * The prompts (the system message, the tool result of a rejected set and
 * the condenser's instruction) are files of the data directory's prompts/,
 * read once a run (prompts_load): hw-agent(1) FILES.
 */

struct member {
	const char *id, *name, *action;
	struct jval *args;
	const char *group;
	int decided, approved, started, done;
};

struct set {
	const char *group;
	struct member **m;
	size_t n, cap;
	int decided, approved;
	int elsewhere;		/* approved, but not by this user here */
	const char *why;	/* rejected automatically: the reason */
	struct buf fingerprint;	/* tool names and arguments, for stuck */
};

struct agent {
	struct session *s;
	struct agent_opts o;
	struct arena a;		/* the conversation and the sets live here */
	struct arena t;		/* per step */
	struct buf scratch;
	struct jval *messages;	/* the model's view, derived from events */
	struct jval *open;	/* the assistant message calls attach to */
	struct smap members;
	struct set **sets;
	size_t nsets, capsets;
	const char *status;	/* the last lifecycle status */
	int64_t count;		/* events seen */
	int fatal;		/* an unrecoverable error is recorded */
	struct model_route route;
	struct toolbox *tb;
	struct jval *tools;
	struct counts {
		int64_t calls, prompt, completion;
		double cost;	/* US dollars the routes reported */
		int unknown;	/* some call's price was not reported */
	} use[2];		/* USE_AGENT, USE_CONDENSER: this session */
	int64_t *mseq;		/* the sequence each message came from */
	int64_t learnt;		/* a budget a "too large" refusal taught */
	size_t mcap;
	char epoch[33];
	int64_t stream_rev;
	struct buf stream;
	struct redact_stream shown;	/* of stream: what may be shown */
	struct control *ctl;	/* commands from other processes */
	struct proj *pj;	/* what ctl applies commands against */
	int paused;		/* the lifecycle's last word was a pause */
	int routed;		/* the policy's decision is recorded */
	int wait_failed;	/* serving while the model was asked failed */
	struct jval *held;	/* user messages that wait for tool results */
	char elsewhere_why[512];	/* a refused key or bindings file */
	size_t awaiting;	/* calls of the last response without one */
	struct prompts prompts;	/* read once, when the run starts */
	struct specialists spec;	/* the catalog, checked at start */
	struct jval *skills;	/* the active skills, checked at start */
	struct spec_use {
		char *id;	/* "specialist:NAME" */
		struct counts c;
	} *su;			/* the specialists' usage, this session */
	size_t nsu;
};

/*
 * The agent's snapshot (snap.c, .agent-snapshot in the session directory,
 * owner-only and under the user's MAC): ag_snap_load puts the state it
 * holds into ag (fresh from prepare) and its position into *at, 0; -1
 * with ag as it was when there is none that is whole, ours and of this
 * version.  ag_snap_save writes ag's state as at, which it must be of
 * (0 without a key to seal it with: no snapshot then).
 * ag_forget drops every event's effect, for a snapshot the logs no
 * longer hold.
 */
int ag_snap_load(struct agent *ag, struct logpos *at);
int ag_snap_save(struct agent *ag, const struct logpos *at);
void ag_forget(struct agent *ag);
/* new_set / set_add: a set of the history, and a member into it */
struct set *ag_new_set(struct agent *ag, const char *group);
void ag_set_add(struct agent *ag, struct set *s, struct member *x);

/* commit makes the drafts durable, then ingests them */
int ag_commit(struct agent *ag, struct jval **d, size_t n);
/*
 * condense summarizes messages [KEEP_FIRST, at) in pieces that fit the
 * input budget, each recorded as it is made: the first piece's
 * summary replaces it (ingest: condensed), and the next piece starts
 * with that summary, so the last one covers everything and no request
 * grows with the history.
 */
int ag_condense(struct agent *ag, size_t at);
/*
 * ag_count adds r to c: a call, its tokens and its price, or marks c's
 * cost unknown when the route did not report one.  ag_cost: the cost as
 * recorded (accumulated_cost): a number of US dollars, or NULL (null)
 * when unknown, never 0 for "not reported".
 */
void ag_count(struct counts *c, const struct model_reply *r);
struct jval *ag_cost(struct agent *ag, double cost, int unknown);
/*
 * cut: where the kept tail starts, or 0 when nothing should be forgotten.
 * Over the token budget (hard) the tail keeps half of it; over
 * CONDENSE_EVENTS messages (soft) it keeps the last half of those.  The
 * tail never starts with a tool result, whose call must stay with it, and
 * the cut must forget at least a tenth of the messages.
 */
size_t ag_cut(struct agent *ag);
struct jval *ag_draft(struct agent *ag, const char *kind);
/* ingest: one durable event, in order, into the agent's state */
void ag_ingest(struct agent *ag, const struct jval *ev);
int ag_ingest_fn(void *ctx, const char *line, size_t n, const struct jval *ev);
struct jval *ag_last_message(struct agent *ag);
struct jval *ag_payload(struct jval *d);
/* push appends m, remembering the event it came from */
void ag_push(struct agent *ag, struct jval *m);
void ag_put(struct agent *ag, struct jval *o, const char *k, struct jval *v);
/* request_tokens: what a turn sends, roughly */
size_t ag_request_tokens(const struct agent *ag);
/*
 * shrink learns from a refusal as too large: the budget becomes half of
 * what was sent (or of the budget in force, when smaller).  -1 once it
 * would fall below MIN_BUDGET: the refusal then stands.
 */
int ag_shrink(struct agent *ag, size_t sent);
/* stop records an error that ends the run (recoverable unless fatal) */
int ag_stop(struct agent *ag, const char *code, const char *reason);
struct jval *ag_str(struct agent *ag, const char *s);
/* text: the model's text p (n bytes), cut at TEXT_MAX with a note */
struct jval *ag_text(struct agent *ag, const char *p, size_t n);
struct counts *ag_total(const struct agent *ag, struct counts *t);
struct jval *ag_usage_draft(struct agent *ag, const char *id,
    const struct counts *c, const struct model_reply *r);
struct jval *ag_lifecycle(struct agent *ag, const char *status);
/* chars_prefix: the bytes of the first `chars` characters of s */
size_t ag_chars_prefix(const char *s, size_t chars);
struct jval *ag_error_draft(struct agent *ag, const char *code,
    const char *reason);
int ag_commit1(struct agent *ag, struct jval *d);

/*
 * The task tool (task.c).  specialists_prepare loads the catalog (-1 on
 * an invalid file) and offers the task tool when any is available.
 * task_fields puts a proposal's specialist_label and
 * specialist_capability (null unless a task naming one).  task_refusal:
 * why a call must be rejected without review (a task naming no
 * available specialist, using resume, or without a prompt), else NULL;
 * task_rejection is that decision for the set.  task_run runs an allowed
 * task's specialist (its lineage and usage committed as it goes) and
 * fills r: its answer, or a fixed message when it failed or was
 * interrupted; -1 only when a commit failed.  spec_use: the counts kept
 * under a specialist's usage id.
 */
int ag_specialists_prepare(struct agent *ag);
void ag_task_fields(struct agent *ag, const char *tool,
    const struct jval *args, struct jval *payload);
const char *ag_task_refusal(struct agent *ag, const char *tool,
    const struct jval *args);
struct jval *ag_task_rejection(struct agent *ag, struct member **m,
    size_t n, const char *group, const char *why);
int ag_task_run(struct agent *ag, const struct member *x,
    struct tool_result *r);
struct counts *ag_spec_use(struct agent *ag, const char *id);

/*
 * The invoke_skill tool (invoke.c).  skills_prepare lists the active
 * skills (skill_prompt) into the system prompt and ag->skills, makes
 * their directories readable to file_editor and, when there is one,
 * offers invoke_skill after the other tools.  invoke_skill runs an
 * allowed call: a name of ag->skills whose directory still verifies with
 * the digest it had at start gives its SKILL.md and absolute location;
 * any other name, or a skill changed since, is an error observation that
 * names the active skills.  -1 only as tool_run's.
 */
int ag_skills_prepare(struct agent *ag);
int ag_invoke_skill(struct agent *ag, const struct member *x,
    struct tool_result *r);

#endif
