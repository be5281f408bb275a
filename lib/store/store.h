/*
 * store - the persisted session: the project and session layout, the
 * writer lease, the two hash-chained logs and how a commit lands in both,
 * recovery, the chain check, records and their minimization, schema
 * migrations, command receipts, the standalone chained log.
 */
#ifndef HW_STORE_H
#define HW_STORE_H

#include "base/base.h"

/* ---- schema versions and the migration registry (migrate.c) ---- */

/*
 * migrate upgrades a persisted envelope of the named format ("session_event",
 * "audit_event", "project_state", ...) to the current version.  Returns v
 * itself when already current, a migrated copy in arena a otherwise, or NULL
 * with code 65 and "unsupported persisted schema for KIND: VERSION" (the
 * version is shown only when it is a plain identifier; content never is).
 * The input is never modified.
 */
struct jval *migrate(struct arena *a, const char *format, struct jval *v);
/* current_version returns the current schema_version of a format. */
const char *current_version(const char *format);
/* project_state_marker builds the exact current state.json value. */
struct jval *project_state_marker(struct arena *a);

/* ---- records (record.c, draftline.c) ---- */

#define EVENT_SCHEMA "heartwood.session-event.v1"
#define AUDIT_SCHEMA "heartwood.audit-event.v1"

int event_kind_valid(const char *kind);
/*
 * scrub replaces, recursively and in place, the value of every sensitive
 * key with the string "[scrubbed]" (see hw-store(5)).
 */
void scrub(struct arena *a, struct jval *v);
/*
 * minimize_copied: the payload keys a kind's minimized payload copies,
 * when that is all it is (NULL otherwise), but for a count: *count names
 * it, the length of the payload's list at *of (NULL: none).  key_sensitive:
 * the key is one scrub replaces.
 */
const char *const *minimize_copied(const char *kind, const char **count,
    const char **of);
/*
 * minimize_subs: for a kind whose minimized payload is sub-objects (at
 * key, the listed keys of the payload's object at key), the list, ended
 * by a NULL key; NULL for any other kind.  invalid: where the payload has
 * no object at key, the string "invalid" stands there instead (else an
 * empty object for a value that is no object, nothing for none).
 * minimize_omits: the kind's minimized payload is {"payload_omitted":true}.
 */
struct minimize_sub {
	const char *key;
	const char *const *keys;
	int invalid;
};
const struct minimize_sub *minimize_subs(const char *kind);
int minimize_omits(const char *kind);
int key_sensitive(const char *k, size_t kn);
/* minimize builds the content-minimized, scrubbed audit payload. */
struct jval *minimize(struct arena *a, const char *kind,
    const struct jval *payload, const char *event_hash);
/*
 * record_id writes a record's id, SID-WHAT-SEQ with SEQ at least six
 * digits ("session-main-event-000042").
 */
#define RECORD_ID_MAX 200
void record_id(char out[RECORD_ID_MAX], const char *sid, const char *what,
    int64_t seq);
/* record_id_seq appends seq >= 0 as record_id writes it */
void record_id_seq(struct buf *b, int64_t seq);
/*
 * event_build makes a session event; prev is the audit chain head or NULL.
 */
struct jval *event_build(struct arena *a, const char *sid, int64_t seq,
    const char *kind, struct jval *payload, const char *occurred_at,
    const char *prev);
/*
 * draft_event_line appends to out the canonical text of event_build's
 * event for the draft whose line (n bytes) json_parse_canon found
 * canonical and draft_check took, without building it: the payload's
 * canonical text is the draft's own bytes (the draft redacted to nothing
 * new).  0, out unchanged, for a line of another shape.  at, when not
 * NULL, gets where the event's eight members' values are in the line, in
 * the order of their keys (event_id, kind, occurred_at, payload,
 * previous_event_hash, schema_version, sequence, session_id): offsets
 * from the line's first byte, and lengths.
 */
struct event_at {
	size_t off[8], len[8];
};
int draft_event_line(struct buf *out, const char *line, size_t n,
    const char *sid, int64_t seq, const char *now, const char *prev,
    struct event_at *at);
/*
 * event_fixed holds what the event lines of a batch share, as canonical
 * text made once (event_fixed_init, on one zeroed or set before; its
 * buffers are kept until event_fixed_release): the id up to its sequence
 * ("SID-event-), the timestamp, the session id and the previous hash that
 * every event but a session's first has (NULL: none has one).
 * draft_event_line_fixed is draft_event_line with them; prev says whether
 * this event has the previous hash or null.
 */
struct event_fixed {
	const char *sid;
	struct buf idp, now, sidq, prev;
};
void event_fixed_init(struct event_fixed *fx, const char *sid,
    const char *now, const char *prev);
void event_fixed_release(struct event_fixed *fx);
int draft_event_line_fixed(struct buf *out, const char *line, size_t n,
    const struct event_fixed *fx, int64_t seq, int prev,
    struct event_at *at);
/*
 * audit_build makes the paired audit record of a validated event whose
 * canonical hash is ehash, and writes its event_hash to out.
 */
struct jval *audit_build(struct arena *a, const struct jval *event,
    const char *ehash, struct buf *scratch, char out[HW_HASH_LEN + 1]);
/*
 * audit_encode appends the canonical line (with "\n") of the paired audit
 * record of a validated event to line, encoding it once, and writes its
 * event_hash to out.
 */
void audit_encode(struct arena *a, const struct jval *event, const char *ehash,
    struct buf *scratch, struct buf *line, char out[HW_HASH_LEN + 1]);
/*
 * audit_encode in two steps: audit_record builds the paired record with
 * event_hash null, audit_encode_record hashes and encodes it.
 */
struct jval *audit_record(struct arena *a, const struct jval *event,
    const char *ehash);
void audit_encode_record(const struct jval *rec, struct buf *scratch,
    struct buf *line, char out[HW_HASH_LEN + 1]);
/*
 * audit_canon appends to out what json_canon(audit_record(...)) would,
 * without building the record, and returns the offset in out of the 64
 * hex digits of the payload's session_event_hash; prev_at, when not NULL,
 * is set to where the previous_event_hash's text begins in out.
 */
size_t audit_canon(struct arena *a, const struct jval *event,
    const char *ehash, struct buf *out, size_t *prev_at);
/*
 * audit_line hashes the canonical record in rec (event_hash null) into out
 * and appends the stored line, with that hash and "\n", to line.
 */
void audit_line(const struct buf *rec, struct buf *line,
    char out[HW_HASH_LEN + 1]);
/*
 * audit_hash_line is audit_hash for a line already known to be a complete
 * canonical audit record with a string event_hash: it hashes the line with
 * that value replaced by null.  -1 when the line does not have that shape.
 */
int audit_hash_line(const char *line, size_t n, char out[HW_HASH_LEN + 1]);
/* audit_hash recomputes an audit record's event_hash (event_hash as null). */
void audit_hash(struct arena *a, const struct jval *rec, struct buf *scratch,
    char out[HW_HASH_LEN + 1]);
/*
 * event_check and audit_check validate a (migrated) record's shape, filling
 * defaults (payload {}, hashes null).  On failure they write a reason to err.
 */
int event_check(struct arena *a, struct jval *v, char *err, size_t errsz);
int audit_check(struct arena *a, struct jval *v, char *err, size_t errsz);
/* pair_check: reason written and -1 unless event/audit are a valid pair. */
int pair_check(const struct jval *ev, const char *ehash,
    const struct jval *au, char *err, size_t errsz);
/*
 * draft_check validates {"kind","payload"} input, filling payload {}; the
 * kind must be a session event kind unless any_kind (standalone logs).
 */
int draft_check(struct arena *a, struct jval *d, int any_kind, char *err,
    size_t errsz);
/* utf8_count is Python's len() of a UTF-8 (WTF-8) string. */
size_t utf8_count(const char *s, size_t n);
/*
 * py_str appends Python's str() of the JSON value v as json.loads would
 * give it: a string as it is, None, True, False, an int's digits, a
 * float's repr, and the repr of lists and dicts (keys in input order).
 */
void py_str(struct buf *b, const struct jval *v);

/* ---- project and session store (store.c) ---- */

struct project {
	char *root;		/* ".heartwood" */
	char *sessions;		/* ".heartwood/sessions" */
};

/*
 * project_open checks the layout of .heartwood in the current directory.
 * With create, it initializes a missing or empty store (under .state.lock)
 * and migrates the state marker; without, a missing store gives code 66
 * and errno ENOENT and creates nothing.  A symlinked or invalid layout is
 * refused (code 65).
 */
int project_open(struct project *p, int create);
void project_release(struct project *p);

/*
 * A batch built by commit_build and not yet written: its event and audit
 * lines (each with "\n"), where in them each event's chain hashes go, and
 * the chain after it once commit_chain has hashed it.
 */
struct commit_slot {
	size_t ev, evn;		/* its event line in ev (without "\n") */
	size_t evprev;		/* the previous hash's digits there, or 0 */
	size_t au, aun;		/* its audit line in au (without "\n") */
	size_t auevent;		/* the event hash's digits there */
	size_t auprev;		/* the previous hash's digits there, or 0 */
};
struct commit_set {
	struct buf ev, au;
	struct commit_slot *slot;
	size_t n, cap;
	size_t chained;		/* the events before it are hashed */
	int64_t from;		/* the sequence of its first event */
	char at[21];		/* its events' timestamp */
	struct event_fixed fx;	/* and what else they share */
	char head0[HW_HASH_LEN + 1];	/* the audit chain head before it */
	char head[HW_HASH_LEN + 1];	/* the head after what is hashed */
	char ehash[HW_HASH_LEN + 1];	/* its last event's hash, or "" */
};

struct session {
	struct project *proj;
	char id[129];
	char *dir, *events, *audit, *journal, *writer_json, *writer_lock;
	char *snapshot_lock, *commands, *metadata, *metadata_lock;
	int lease_fd;		/* -1 unless this process holds the lease */
	char token[33];
	int stale;		/* a previous writer died holding the lease */
	int broken;		/* a write or sync failed: no more commits */
	int ev_fd, au_fd;	/* append descriptors while leased */
	int64_t au_unsynced;	/* audit records written, not yet synced */
	size_t au_unkicked;	/* audit bytes written since the last kick */
	struct arena ca;	/* commit scratch, reused batch to batch */
	struct commit_set cset;	/* session_commit's batch */
	struct buf crec;	/* commit_build's audit record, unstored */
	int64_t au_synced_ms;	/* when the audit log was last synced */
	int64_t count;		/* committed pairs */
	char head[HW_HASH_LEN + 1];	/* audit chain head, "" when empty */
	char ehash[HW_HASH_LEN + 1];	/* the last event's hash, or "" */
	struct cmd_bloom *bloom;	/* its command ids (verified, committed) */
	int committed;		/* a batch was committed under this lease */
	/*
	 * bind, when set, is called by session_commit with each event and
	 * its hash before anything of the batch is written; -1 fails the
	 * commit.  Decisions made here set it to decision_bind (trust.c).
	 */
	int (*bind)(struct session *s, const struct jval *ev,
	    const char *ehash);
	/*
	 * While leased (received_known): the command_id of every
	 * command.received in the log, read as the lease was taken and
	 * added to by command_run, so that a new command needs no second
	 * reading of the log to find an old one of its id.
	 */
	struct smap received;
	struct arena ra;
	int received_known;
};

/* session_init validates id (code 2 for a bad id) and builds paths only. */
int session_init(struct session *s, struct project *p, const char *id);
void session_release(struct session *s);
/* session_exists: 1 if the directory exists, 0 if not, -1 if invalid. */
int session_exists(struct session *s);
/*
 * session_register creates the session directory and metadata.json when
 * missing; title NULL picks the default.
 */
int session_register(struct session *s, const char *title);
/*
 * session_lease takes the writer lease (one non-blocking attempt; code 75
 * naming the holder's pid and host when busy), writes .writer.json, runs
 * recovery if the previous writer died or a reference journal is present,
 * verifies both logs and loads the chain head.
 */
int session_lease(struct session *s);
/*
 * session_unlease syncs, leaves the verified head where the logs end when
 * it committed (hw-store(5)), removes .writer.json (only if it is ours) and
 * releases the lease.  After a failed commit it keeps .writer.json so the
 * next owner recovers.
 */
int session_unlease(struct session *s);
/*
 * session_head_leave writes the verified head where the leased logs end
 * (hw-store(5)) when the session committed since the last one, its audit
 * records synced; session_unlease does it too.  -1 (74) when the write
 * fails.
 */
int session_head_leave(struct session *s);
/*
 * session_commit commits n validated drafts ({"kind","payload"} objects)
 * as one batch under the snapshot lock: the event lines are appended and
 * synced, then their audit records are appended.  On success the canonical
 * event lines are appended to ack (each with "\n") and may be shown as
 * durable: the event is on disk, and its audit record is a pure function
 * of it and the chain head, which recovery rebuilds if a crash loses it.
 * After every AUDIT_KICK_BYTES of audit records the audit log's writeback
 * is started without waiting for it (sync_file_range), so that the disk
 * takes them while the next batches are built; the audit log is synced
 * by a commit that finds its last sync AUDIT_SYNC_MS or more behind, and
 * always before the lease is released.  Any failure marks the
 * session broken, except this one: a batch in which an event or audit line
 * would be longer than JSONL_LINE_MAX (the readers' bound) is refused with
 * code 65 before anything is written.  Each draft's payload is redacted
 * (redact_json) in place first.  lines, when not NULL, holds each draft's
 * line as draft_batch_read kept it: a canonical draft's event line is then
 * written from its bytes (draft_event_line) and its audit record made from
 * that line by fastev, as verify makes it, without a tree; the bytes are
 * the ones the tree gives (t/unit/record_test, t/fuzz/draftline_fuzz).
 */
#define AUDIT_SYNC_MS 1000
#define AUDIT_KICK_BYTES (256u << 10)
/* a draft's line as read, kept when it was canonical */
struct draft_line {
	const char *p;		/* NULL: not kept */
	size_t n;
	int ascii;		/* no key holds an escape: json_canon_ascii
				   takes the line and the event line made
				   from it (draft_event_line) */
};
int session_commit(struct session *s, struct jval *const *drafts,
    const struct draft_line *lines, size_t n, struct buf *ack);

/*
 * session_commit is commit_build, commit_chain and commit_write, which a
 * caller may run apart, so that one batch is built while the one before it
 * is hashed and the one before that written (session_commit_stream).
 * commit_build makes c from the n drafts (lines as above) as the events
 * from sequence from on, with placeholder digits for the chain's hashes,
 * which depend on the batches before it; it writes nothing, reads nothing
 * the other two change, and fails (nothing built) as session_commit fails
 * before writing.  With a bound callback (s->bind, handed each event's hash
 * as it is made) it hashes as it goes and builds only at the session's
 * head.  commit_chain hashes c's chain from head (the audit chain head
 * before it, "" at the start) into its lines, and sets c->head to the
 * head after it.  commit_write appends and syncs c as session_commit does,
 * and refuses a c that is not hashed from what the session holds; a failed
 * write or sync marks the session broken.  Each may run on its own thread;
 * a commit_set is in one of them at a time, and commit_write never runs at
 * the same time as another.
 */
int commit_build(struct session *s, struct jval *const *drafts,
    const struct draft_line *lines, size_t n, int64_t from,
    struct commit_set *c);
int commit_chain(struct session *s, struct commit_set *c, const char *head);
int commit_write(struct session *s, const struct commit_set *c);
void commit_set_release(struct commit_set *c);

/* session_sync_audit syncs audit records written since the last sync. */
int session_sync_audit(struct session *s);

/* metadata */
int session_read_meta(struct session *s, struct arena *a, struct jval **meta);
int session_rename(struct session *s, const char *title);
/* title_normalize collapses whitespace into out; -1 if empty or > 120. */
int title_normalize(const char *in, char *out, size_t outsz);

/* ---- the audit chain, one record at a time (chain.c) ---- */

/* Where a chained audit log stands: the next record must continue it. */
struct chain_pos {
	int64_t count;		/* the next record's sequence */
	const char *head;	/* the last event_hash, "" before the first */
	const char *session_id;	/* the log's session, or NULL for any */
};
/*
 * audit_chain_check checks a parsed audit record (v, from line, which
 * json_parse_canon found canonical or not) as the next record at `at`:
 * its version and shape, session, sequence, link and event_hash, which it
 * writes to hash.  With canon, *canon and *canon_len give the record's
 * canonical line: the line itself when it already is, else scratch.
 * Errors: code 65 and the reason, without the sequence.
 */
int audit_chain_check(struct arena *a, struct buf *scratch, struct jval *v,
    const char *line, size_t n, int canonical, const struct chain_pos *at,
    char hash[HW_HASH_LEN + 1], const char **canon, size_t *canon_len);

/* ---- verification, recovery, commit (logs.c, recover.c, commit.c) ---- */

/*
 * The loaders' checks, apart from the files, for the fuzzer:
 * journal_check validates a reference .pending-commit.json document j
 * for session sid (migrating it and both records; *ev and *au the
 * records, ehash the event's hash); receipt_check a migrated receipt,
 * 0 or -1 (cid NULL: any command).
 */
int journal_check(struct arena *a, struct jval *j, const char *sid,
    struct jval **ev, struct jval **au, char ehash[HW_HASH_LEN + 1]);
int receipt_check(const struct jval *v, const char *sid,
    const struct jval *cid);

/*
 * A verified event handed to a callback: its canonical line (no "\n") and
 * parsed value (valid until the callback returns).
 */
typedef int (*event_fn)(void *ctx, const char *line, size_t n,
    const struct jval *ev);

/*
 * A position in the paired logs: the first count pairs, ending at byte off
 * of each log, their last line starting at start and hashing (its raw
 * bytes, newline included) to sha, in the file (dev, ino); head and ehash
 * are the audit chain head and the last event's hash there.  It is what a
 * verifier knew at the end of a check (the verified head), or where a
 * cache built from the logs stands (the projection snapshot).
 */
/*
 * The command ids of a log's command.received events, as a Bloom filter:
 * bloom_has is 0 only for an id none of them has (4 bits of 16384 per id,
 * taken from the SHA-256 of the id's string).
 */
#define CMD_BLOOM_BITS 16384
struct cmd_bloom {
	unsigned char b[CMD_BLOOM_BITS / 8];
};
struct logend {
	dev_t dev;
	ino_t ino;
	off_t start, off;
	char sha[65];
};
struct logpos {
	int64_t count;
	struct logend ev, au;
	char head[HW_HASH_LEN + 1];
	char ehash[HW_HASH_LEN + 1];
	struct cmd_bloom commands;	/* of the count's command.received */
};
/* logpos_json / logpos_parse: to and from JSON (parse: -1, no error set) */
struct jval *logpos_json(struct arena *a, const struct logpos *p);
int logpos_parse(const struct jval *o, struct logpos *p);
/*
 * logpos_holds: 1 when the open logs efd and afd are still the files p
 * was taken of, at least as long, each with its last line at p unchanged
 * and whole; 0 otherwise (also on any read error).
 */
int logpos_holds(const struct logpos *p, int efd, int afd);
/*
 * logs_writer_end: where the lease holder's logs end, everything in them
 * verified when it took the lease or committed by it since (-1 when that
 * is not known: nothing verified, a failed commit, no lease).
 */
int logs_writer_end(struct session *s, struct logpos *p);
/*
 * private_read parses the small JSON file at path when it is a regular
 * file (never a symbolic link) of the effective user, of mode 0600 or
 * stricter, and at most max bytes; NULL otherwise (a cache that is not
 * ours or not whole is not read).
 */
struct jval *private_read(const char *path, size_t max, struct arena *a);
/* private_bytes: the same checks, the bytes into b; 0, or -1 (no error) */
int private_bytes(const char *path, size_t max, struct buf *b);
/*
 * cache_write replaces the cache file at path atomically with p (n
 * bytes), mode 0600, unsynced (unsynced_replace); a symbolic link there
 * is removed, not followed.
 * cache_write_json writes canonical JSON of v and "\n" so.
 */
int cache_write(const char *path, const void *p, size_t n);
int cache_write_json(const char *path, const struct jval *v);

/*
 * logs_verify reads events.jsonl and audit.jsonl in step, checking both
 * logs and their pairing (hw-store(5)) after the session's verified head
 * (.verified-head.json), or from the start when there is none that holds,
 * calling fn for each event: those the head covers are read and checked
 * as events (shape, sequence, session) but not hashed nor paired again.
 * It holds the snapshot lock for the duration and writes nothing (a lease
 * holder that commits leaves the head when it lets go: session_unlease).
 * Memory does not grow with the log.
 * On failure: code 65 and "sequence N: reason".  Sets s->count and
 * s->head.  Files that do not exist count as empty.
 */
int logs_verify(struct session *s, event_fn fn, void *ctx);
/*
 * logs_verify_full is logs_verify from the first record, whatever the
 * head says: for replay, export, verify, checkpoints and anything else
 * that hands out persisted history.
 */
int logs_verify_full(struct session *s, event_fn fn, void *ctx);
/*
 * logs_verify_since is logs_verify calling fn only with the events after
 * *from (a position a cache was taken at), when from holds for the logs
 * (logpos_holds) and is no further than they verify; *used says whether it
 * did (set before fn is first called), else fn gets every event.  *end,
 * when not NULL, gets the position verified to (count 0 for empty logs).
 * fn runs on a second thread as with logs_verify_early.
 */
int logs_verify_since(struct session *s, const struct logpos *from,
    int *used, event_fn fn, void *ctx, struct logpos *end);
/*
 * logs_verify_early is logs_verify calling fn from a second thread with
 * each event in order once the event itself checks out, before its audit
 * record is checked: faster, and right for a caller that discards what it
 * built when the verification fails.
 */
int logs_verify_early(struct session *s, event_fn fn, void *ctx);
/*
 * logs_verify_audit is logs_verify_full calling fn with each verified
 * audit record instead: its canonical line (no "\n"), its hash and, when
 * not NULL, the line's Merkle leaf hash (RFC 9162: SHA-256 of a 0x00 byte
 * and the line), computed with the other hashes of its batch.
 */
typedef int (*audit_fn)(void *ctx, const char *line, size_t n,
    const char *hash, const unsigned char *leaf);
int logs_verify_audit(struct session *s, audit_fn fn, void *ctx);
/*
 * A logtail (tail.c) follows a growing session: logtail_read verifies,
 * under the snapshot lock, every complete pair after the ones it has delivered and
 * calls fn (may be NULL) with each event in order.  A pair not yet whole
 * waits for the next call.  At most LOGTAIL_BATCH pairs are read under one
 * hold of the lock, so writers wait for no more than that: a caller that
 * gets LOGTAIL_BATCH calls again.  Returns the count delivered, or -1 (65
 * when the logs are invalid or were cut below what was already verified).
 */
#define LOGTAIL_BATCH 65536
struct logtail;
struct logtail *logtail_open(struct session *s);
int64_t logtail_read(struct logtail *t, event_fn fn, void *ctx);
void logtail_close(struct logtail *t);
/*
 * logs_recover repairs what a crashed writer left (lease required): it
 * verifies the committed prefix, truncates unterminated tails, and appends
 * the audit records of events that have none.  Anything else fails closed
 * with nothing changed.  Also completes a reference .pending-commit.json.
 */
int logs_recover(struct session *s);
/*
 * session_received_add records command id as received (s->received).
 */
void session_received_add(struct session *s, const char *id);
/*
 * session_lease_read is session_lease that also hands each verified event
 * to fn (may be NULL) during that one verification, so that a writer
 * reads the session once per command: after a recovery the repaired logs
 * are read again.  Busy (75) is found before fn is called.
 */
int session_lease_read(struct session *s, event_fn fn, void *ctx);
/*
 * session_lease_since is session_lease_read handing fn only the events
 * from position from on (logs_verify_since: *used says whether from held;
 * when it did not, fn gets every event).  A caller that keeps its own
 * state of the events up to a position (the agent's snapshot) reads only
 * what came after it.
 */
int session_lease_since(struct session *s, const struct logpos *from,
    int *used, event_fn fn, void *ctx);

/* ---- command receipts (receipt.c) ---- */

/*
 * command_check validates a heartwood.session-command.v1 envelope for
 * session sid strictly (no unknown field, each field's type, the payload
 * keys of its kind), filling the defaults actor_id "human" and payload {},
 * and writes its command_hash.  Errors: code 65, naming the field.
 */
int command_check(struct arena *a, struct jval *cmd, const char *sid,
    char hash[HW_HASH_LEN + 1]);
/*
 * command_run handles one command under the lease: an exact retry of a
 * completed command appends its original events to ack and sets *replayed;
 * a conflict is code 1; an accepted receipt is code 75.  Otherwise it
 * writes an accepted receipt, commits command.received together with the
 * drafts first() gives (first may be NULL; it returns the count, 0 for
 * none, -1 on error), so that no reader sees the command received and
 * not yet decided, then calls more() repeatedly to get batches of drafts
 * to commit (the same way, 0 at the end), printing acks through flush(),
 * and completes the receipt.
 */
struct command_io {
	int (*first)(void *ctx, struct jval ***drafts);
	int (*more)(void *ctx, struct jval ***drafts);
	int (*flush)(void *ctx, struct buf *ack);
	void *ctx;
};
int command_run(struct session *s, struct arena *a, struct jval *cmd,
    struct command_io *io, int *replayed);
/* receipts_interrupted: -1 (code 75) if any receipt is still accepted. */
int receipts_interrupted(struct session *s);

/* ---- standalone chained JSONL log (chainlog.c) ---- */

/*
 * chainlog_append appends n drafts to the chained log at path as audit
 * records with session_id logid, through the .PATH.pending journal under
 * .PATH.lock; each record's canonical line is appended to ack after it is
 * durable.
 */
int chainlog_append(const char *path, const char *logid,
    struct jval *const *drafts, size_t n, struct buf *ack);
int chainlog_recover(const char *path);

/* ---- drafts in batches (batch.c) ---- */

#define BATCH_MAX 1024
#define BATCH_BYTES (4u << 20)

/* drafts read from one input, a batch at a time, into a */
struct draft_batch {
	struct jsonl r;
	struct arena a;
	struct jval *drafts[BATCH_MAX];
	struct draft_line lines[BATCH_MAX];
	int any_kind;		/* --file: event types are free-form */
	int failed;		/* a bad line ended the input */
};
void draft_batch_init(struct draft_batch *in, int fd, const char *name,
    int any_kind);
void draft_batch_release(struct draft_batch *in);
/*
 * draft_batch_read takes one draft line (waiting for it) and then whatever
 * complete lines are already waiting, up to BATCH_MAX lines and
 * BATCH_BYTES, into in->drafts (each checked by draft_check), and each
 * canonical line into in->lines (for session_commit); the count.  A bad
 * line ends the batch before it and the input after it (in->failed, with
 * the error set).
 */
int draft_batch_read(struct draft_batch *in);
typedef int (*batch_flush_fn)(void *ctx, struct buf *ack);
/*
 * session_commit_batch commits n drafts (lines as session_commit takes
 * them) and hands their acknowledged events to flush.  A batch refused
 * before anything was written (a line over the readers' bound) is tried
 * again a draft at a time, so that the drafts before the refused one are
 * committed and nothing after it.
 */
int session_commit_batch(struct session *s, struct jval **d,
    const struct draft_line *lines, size_t n, struct buf *ack,
    batch_flush_fn flush, void *ctx);
/*
 * session_commit_stream commits the n drafts already read into in, and
 * then every batch draft_batch_read takes from in, handing each batch's
 * acknowledged events to flush, as a loop of session_commit_batch would;
 * but when lines are already waiting, batches are read and built here
 * while the ones before them are hashed and written (and flushed) on two
 * threads, at most three batches under way.  A batch is acknowledged only
 * after its own sync, at once (never waiting for input), and written only
 * after the one before it; a batch refused whole is tried again a draft
 * at a time, once the ones before it are acknowledged.  -1 on the first
 * failure (in->failed: a bad line, after the drafts before it were
 * committed).
 *
 * open, when not NULL, makes the session ready for its first commit (it
 * creates the session and takes the lease, say, and commits nothing
 * through s, whose commit scratch the build is using); it runs on a thread
 * of its own while the first batch is built from s->count as the caller left
 * it, the caller's guess at where the session starts (0 for one not made
 * yet).  Once open returns, a batch built from anywhere else, or in an
 * earlier second than the one open ended in, is built again: nothing is
 * hashed or written before.  open's failure is the stream's.
 */
int session_commit_stream(struct session *s, struct draft_batch *in, int n,
    struct buf *ack, batch_flush_fn flush, void *ctx,
    int (*open)(struct session *s, void *ctx));

#endif
