/*
 * session - a session as its clients see it: the projection reducer,
 * views over the logs, following, typed commands and their dispatch, the
 * control socket (its server and its client), action settings.
 */
#ifndef HW_SESSION_H
#define HW_SESSION_H

#include "conf/conf.h"
#include "audit/audit.h"

/* ---- the session projection (reduce.c, emit.c) ---- */

/*
 * A proj is the one reducer from a session's durable events (and transient
 * stream records) to its heartwood.session-projection.v1 view.  Reduction
 * is incremental: applying events one at a time, in any number of calls
 * with emissions between them, gives exactly what one pass gives.  It
 * copies what it keeps, so the events may be freed after each call.
 */
struct proj;
struct proj *proj_new(const char *session_id);
void proj_free(struct proj *p);
/*
 * proj_save: the reducer's state as JSON, in a (every field events set:
 * the projection snapshot's "state"); proj_load: a proj from it, NULL
 * when o is not that.  SNAP_SCHEMA, their version, changes with struct
 * proj and with anything the reducer does differently: a state of
 * another version is not read.
 */
#define SNAP_SCHEMA "heartwood.projection-snapshot.v3"
struct jval *proj_save(struct arena *a, const struct proj *p);
struct proj *proj_load(const char *sid, const struct jval *o);
/*
 * proj_apply reduces the next verified event (its sequence must follow the
 * last one's).  It does not fail: content that contradicts the history
 * (a duplicate proposal, the execution of a rejected action, a second
 * outcome ...) becomes an integrity failure in the projection.
 */
void proj_apply(struct proj *p, const struct jval *ev);
/* proj_event is proj_apply as an event_fn, the proj being ctx */
int proj_event(void *ctx, const char *line, size_t n, const struct jval *ev);
/*
 * proj_stream applies one transient record {"epoch": STRING, "revision":
 * INT, "streamRevision": INT, "text": STRING}: a new epoch replaces the
 * stream; within an epoch, records at or below the current (revision,
 * streamRevision) are stale.  Returns 1 if the projection changed, 0 if
 * the record was stale, -1 (code 65) if it is malformed.
 */
int proj_stream(struct proj *p, const struct jval *rec);
/* proj_emit appends the projection to b as one canonical JSON object. */
void proj_emit(struct proj *p, struct buf *b);
/* the projection's revision: the last sequence reduced, -1 if none */
int64_t proj_revision(const struct proj *p);
/*
 * proj_available: 1 if a command of this kind would be applied now, 0 if
 * it must be recorded as not applied; *why gets the reason.  Approvals
 * must also name the pending action set (target, may be NULL).
 */
int proj_available(struct proj *p, const char *kind,
    const char *target, const char **why);
/*
 * proj_pending: the pending action set's group id and its member
 * tool_call_ids in order (NULL when nothing is pending).
 */
const char *proj_pending(const struct proj *p, const char *const **ids,
    size_t *n);

/* ---- session views (views.c) ---- */

/*
 * session_settle completes what a dead writer left (a lease, recovery,
 * release); a live writer is left alone.  -1 with its error otherwise.
 */
int session_settle(struct session *s);
/*
 * session_reduce verifies the session's logs (logs_verify_since) and sets
 * *out to the projection of every event (never NULL, even on failure; the
 * caller frees it): from the projection snapshot (.projection-snapshot.json,
 * hw-store(5)) when it is this version's, whole and at a position the
 * logs still hold, else from the first event.  A snapshot never changes
 * what is projected.
 */
int session_reduce(struct session *s, struct proj **out);
/*
 * session_take_reduce: session_take with session_reduce's projection read
 * in the lease's one verification, so the tail is read once; *out as
 * session_reduce's, and the return as session_take's.
 */
int session_take_reduce(struct session *s, struct proj **out);
/*
 * snapshot_leave writes the snapshot of p, the projection of every event
 * of s, when s is leased and committed (logs_writer_end), before the
 * lease goes.  -1 when the write fails (code 74, as any write's).
 */
int snapshot_leave(struct session *s, const struct proj *p);
/*
 * session_project verifies the session's logs and appends its projection
 * to out, reduced through sequence until (all when until < 0).  A session
 * that does not exist (exists 0) has the empty projection.
 */
int session_project(struct session *s, int exists, int64_t until,
    struct buf *out);
/*
 * session_project_stream is session_project over a stream of session
 * events (replay's output) read from fd, called name in errors: each must
 * be a valid event of session sid, in sequence from 0.  It has no audit
 * log to check the chain against; put it after replay for that.
 */
int session_project_stream(const char *sid, int fd, const char *name,
    int64_t until, struct buf *out);
/*
 * session_summary writes one line to out, {session_id, title, status,
 * created_at, updated_at, event_count}, status being empty, idle,
 * waiting, paused, error or recovery-required (with the reason), read off
 * the verified logs.
 */
int session_summary(struct session *s, FILE *out);

/* ---- following a session (follow.c) ---- */

struct follow_opts {
	int64_t after;		/* only events with sequence > after; -1 all */
	const char *stream;	/* transient records: a path, "-", or NULL */
	double idle_exit;	/* exit 0 after this long unchanged; 0 never */
};
/*
 * session_follow prints {"events": [...], "projection": {...}} lines to
 * out as the session grows, each pair from one snapshot: first the events
 * after o->after with the projection of everything so far, then one line
 * per batch of new events or transient change.  Returns 0 at SIGINT,
 * SIGTERM, a closed out, or idle_exit; -1 on an integrity failure (65).
 * A session that does not exist yet (exists 0) is waited for.
 */
int session_follow(struct session *s, int exists,
    const struct follow_opts *o, FILE *out);

/* ---- typed commands (dispatch.c) ---- */

/*
 * session_command reads heartwood.session-command.v1 envelopes, one per
 * line, from in; for each it validates the envelope strictly, takes the
 * writer lease and applies it through its receipt: an available command
 * records what it means, an unavailable one is recorded as not applied
 * (command.received plus a non-lifecycle error.recorded) and sets
 * *declined.  Prints {"events": [...], "projection": {...}} per command.
 * The lease is taken at the first valid envelope and held to the end of
 * in.  The first line that fails (invalid, a conflict, busy, I/O) stops
 * the run: -1 with "command line N: reason"; earlier lines stay applied.
 */
int session_command(struct session *s, FILE *in, FILE *out, int *declined);
/*
 * session_command_line is session_command for the one envelope of n bytes
 * at line (no newline needed): its answer line is appended to out, and
 * the lease, if this call took it, is released before it returns.
 */
int session_command_line(struct session *s, const char *line, size_t n,
    struct buf *out, int *declined);
/* a command envelope is small: a prompt of up to about 1 MiB */
#define COMMAND_LINE_MAX (1u << 20)
/*
 * command_apply applies one parsed envelope cmd (in arena a, which also
 * takes its drafts) to session s, which the caller leases, through its
 * receipt as session_command does.  p is the projection of every event
 * committed so far; the command's new events advance it, and seen (may be
 * NULL) is told of each of them, in order, after p.  Appends the answer
 * line {"events": [...], "projection": {...}} and "\n" to out, and sets
 * *declined when the command was recorded as not applied.  Errors are
 * command_run's, and append nothing.
 */
int command_apply(struct session *s, struct proj *p, struct arena *a,
    struct jval *cmd, event_fn seen, void *ctx, struct buf *out,
    int *declined);
/* command_declined: 1 if ev records that cmd was not applied */
int command_declined(const struct jval *ev, const struct jval *cmd);

/* ---- the control socket (control.c) ---- */

/*
 * While hw-agent runs a session it holds the writer lease, the only
 * process that holds it for longer than one command; other processes
 * reach the session through it, on the Unix stream socket CONTROL_SOCK in
 * the session directory (0600, for the same uid only).  A client sends
 * one command envelope line per connection; the owner applies it with
 * command_apply between its steps and answers one line, the answer or
 * {"code": N, "error": MESSAGE}, then closes.
 */
#define CONTROL_SOCK "control.sock"
#define CONTROL_READ_MS 2000	/* the owner's wait for a whole line */
#define CONTROL_WRITE_MS 5000	/* and for its answer to make progress */
#define CONTROL_ACCEPT_MAX 16	/* connections served by one poll */
#define CONTROL_WAIT_S 30	/* a client's wait (HW_CONTROL_WAIT_S) */
struct control;
/*
 * control_open listens on s's control socket; s must be leased, which
 * makes any socket file already there a dead owner's, replaced here.  p
 * is the projection of every event committed so far, which the caller
 * keeps (and frees after control_close); commands applied here advance
 * it.  NULL with the error when the socket cannot be made.
 */
struct control *control_open(struct session *s, struct proj *p);
/*
 * control_poll serves, without waiting for any to arrive, the connections
 * already pending (at most CONTROL_ACCEPT_MAX): each from another uid is
 * closed unread; each line is applied with command_apply, seen (ctx)
 * being told of the events it commits.  A connection's failure (a bad
 * line, a refused command, a slow client) is answered to it and does not
 * fail the poll.  -1 only when the session can take no more commits.
 * c may be NULL.
 */
int control_poll(struct control *c, event_fn seen, void *ctx);
/* control_close stops listening and removes the socket; c may be NULL. */
void control_close(struct control *c);
/*
 * control_send is the client: it sends cmd (checked) to the owner of s,
 * waits for it at most CONTROL_WAIT_S seconds (HW_CONTROL_WAIT_S, 1 to
 * 86400) and appends its answer line to out (past the wait: -1, code 75,
 * and the owner, finding the connection closed, does not apply cmd):
 * 1, with *declined set when cmd was recorded as not applied.  0 when no
 * owner answered (no socket, a dead owner's, or the run ended first),
 * leaving the last error alone.  -1 with the owner's {"error"} (its code
 * and message) or the failure to talk to it.
 */
int control_send(struct session *s, const struct jval *cmd, struct buf *out,
    int *declined);

/*
 * control_live: 1 when a process of this user listens on s's control
 * socket (a running agent), 0 otherwise.
 */
int control_live(struct session *s);
/*
 * session_take takes s's writer lease for one command, reading every
 * event into fn (session_lease_read).  While another process holds it
 * and serves no control socket (a command under its short lease, an
 * agent starting or ending), it tries again every CONTROL_RETRY_MS for up
 * to LEASE_WAIT_S seconds (HW_LEASE_WAIT_S, 0 to 86400).  0 when
 * leased; 1, at once and without the lease, when the holder is a running
 * agent (control_live); -1 with the error (75 past the wait).
 */
#define CONTROL_RETRY_MS 50
#define LEASE_WAIT_S 5
int session_take(struct session *s, event_fn fn, void *ctx);
/* session_take_since: session_take from a position (session_lease_since) */
int session_take_since(struct session *s, const struct logpos *from,
    int *used, event_fn fn, void *ctx);

/* ---- action settings (actions.c) ---- */

/*
 * actions_set_mode sets the project's review mode ("always-confirm" or
 * "confirm-risky"), refused while any session has a run active (75) or an
 * action set waiting for review (1).
 */
int actions_set_mode(const char *mode);

#endif
