/*
 * hw.h - the one header of heartwood's shared library.
 *
 * Conventions: functions return 0 on success and -1 on failure after
 * recording the failure with hw_err_set() (the last error, like errno);
 * callers print it with hw_err_print() and exit with hw_err_code().  The
 * library never exits, except xmalloc() and friends, which die on OOM.
 */
#ifndef HW_H
#define HW_H

#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define HW_VERSION "0.1.0"
/*
 * What this version implements and what is planned, as heartwood
 * --version and doctor print them; the README says the same in its
 * "Implemented:" and "Planned, not yet implemented:" paragraphs (t/0610).
 */
#define HW_IMPLEMENTED "hw-append, hw-audit, hw-session, hw-agent, " \
	"hw-inspect, hw, heartwood (full-screen and plain), and hw-model's " \
	"replay model."
#define HW_PLANNED "hw-serve (the browser gateway), the notebook bridge, " \
	"hw-skill (Agent Skills) and hw-model's managed models (download, " \
	"import, bundles, the runtime launcher)."

/* Exit codes: one table for the whole suite, documented in hw(7). */
enum hw_exit {
	HW_EXIT_OK = 0,
	HW_EXIT_FAIL = 1,	/* failed or declined (conflict, refused) */
	HW_EXIT_USAGE = 2,
	HW_EXIT_DATA = 65,	/* integrity failure or malformed data */
	HW_EXIT_NOINPUT = 66,	/* missing input */
	HW_EXIT_UNAVAILABLE = 69,
	HW_EXIT_NOTREADY = 70,
	HW_EXIT_IO = 74,	/* I/O error, including a failed sync */
	HW_EXIT_BUSY = 75,	/* session busy or recovery required */
	HW_EXIT_INTR = 130,
};

/* ---- errors (err.c) ---- */

/*
 * hw_err_set records the last error: an exit code from enum hw_exit and a
 * message without the program name.  Always returns -1 so callers can
 * write "return hw_err_set(...)".
 */
int hw_err_set(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* hw_err_sys is hw_err_set with ": strerror(errno)" appended, code 74. */
int hw_err_sys(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *hw_err_msg(void);
int hw_err_code(void);
/*
 * hw_err_print writes "prog: message\n" to stderr, the message escaped by
 * tty_escape (no newline kept), since it may quote any subject.
 */
void hw_err_print(const char *prog);
/* Fatal allocation helpers: die with a message when memory runs out. */
void *xmalloc(size_t n) __attribute__((returns_nonnull, malloc));
void *xcalloc(size_t n, size_t m) __attribute__((returns_nonnull, malloc));
void *xrealloc(void *p, size_t n) __attribute__((returns_nonnull));
char *xstrdup(const char *s) __attribute__((returns_nonnull, malloc));
/* xasprintf: a newly allocated formatted string */
char *xasprintf(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), returns_nonnull, malloc));

/* ---- growable byte buffer (buf.c) ---- */

struct buf {
	char *p;
	size_t len, cap;
};
void buf_init(struct buf *b);
void buf_release(struct buf *b);
void buf_clear(struct buf *b);	/* length 0, memory kept */
void buf_add(struct buf *b, const void *p, size_t n);
/* buf_reserve makes room for n more bytes (and a NUL) without adding. */
void buf_reserve(struct buf *b, size_t n);
void buf_addc(struct buf *b, char c);
void buf_adds(struct buf *b, const char *s);
void buf_printf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * buf_add_utf8 appends code point cp as UTF-8; a lone surrogate is
 * written as its 3-byte (WTF-8) form.
 */
void buf_add_utf8(struct buf *b, uint32_t cp);
/* buf_cstr NUL-terminates (not counted in len) and returns b->p. */
char *buf_cstr(struct buf *b);

/* ---- arena allocator (buf.c): many small objects, freed at once ---- */

struct arena {
	struct arena_chunk *head;
	struct arena_chunk *spare;	/* cleared chunks, kept for reuse */
};
void arena_init(struct arena *a);
void *arena_alloc(struct arena *a, size_t n);	/* 8-aligned, zeroed */
void *arena_alloc_raw(struct arena *a, size_t n);	/* not zeroed */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_clear(struct arena *a);	/* forgets everything, keeps memory */
void arena_release(struct arena *a);

/* ---- JSON values (json.c) ---- */

enum jtype {
	J_NULL, J_FALSE, J_TRUE, J_INT, J_FLOAT, J_STRING, J_ARRAY, J_OBJECT
};

struct jmember;
/*
 * A parsed JSON value.  Strings hold UTF-8 (lone surrogates from \u escapes
 * are kept as 3-byte WTF-8 so they survive a round trip) and may contain
 * NUL; n is their length.  Integers keep their exact decimal text in s so
 * that numbers of any size hash exactly; floats keep their double.  Object
 * members keep input order; duplicate keys are refused by the parser.
 */
struct jval {
	enum jtype t;
	unsigned char plain;	/* J_STRING: no byte canonical JSON escapes */
	size_t n;		/* string/int length, array/object count */
	union {
		const char *s;		/* J_STRING, J_INT */
		double d;		/* J_FLOAT */
		struct jval **a;	/* J_ARRAY */
		struct jmember *m;	/* J_OBJECT */
	} u;
};
struct jmember {
	const char *k;
	size_t kn;
	struct jval *v;
};

#define JSON_MAX_DEPTH 128

/*
 * json_parse parses exactly one JSON text of n bytes (surrounding
 * whitespace allowed) into values allocated from arena a.  The input must
 * be valid UTF-8; NaN, Infinity, float overflow, duplicate keys and nesting
 * deeper than JSON_MAX_DEPTH are refused.  On failure returns NULL and
 * writes a reason (with a byte column) to err, errsz bytes.
 */
struct jval *json_parse(struct arena *a, const char *s, size_t n,
    char *err, size_t errsz);
/*
 * json_parse_canon is json_parse that also reports whether the text was
 * already in canonical form (then its bytes are what json_canon would
 * write, and may be hashed as they are).  It may say no for some
 * canonical texts (those with floats), never yes for one that is not.
 */
struct jval *json_parse_canon(struct arena *a, const char *s, size_t n,
    char *err, size_t errsz, int *canonical);
/* json_canon appends the canonical form (see hw-store(5)) of v to b. */
void json_canon(struct buf *b, const struct jval *v);
/* json_canon_at is json_canon that sets *at to where node begins in b. */
void json_canon_at(struct buf *b, const struct jval *v,
    const struct jval *node, size_t *at);
/* json_canon_str appends the canonical JSON string literal for s. */
void json_canon_str(struct buf *b, const char *s, size_t n);
/* json_fmt_double appends Python's repr() of a finite double. */
void json_fmt_double(struct buf *b, double d);
/* json_equal is value equality (ints by text, objects by key set). */
int json_equal(const struct jval *x, const struct jval *y);

/* Lookups and constructors (values live in the given arena). */
struct jval *json_get(const struct jval *obj, const char *key);
const char *json_get_str(const struct jval *obj, const char *key);
/* json_get_int: 0 and *out when key holds an int fitting int64, else -1. */
int json_get_int(const struct jval *obj, const char *key, int64_t *out);
int json_is_str(const struct jval *v, const char *s);
struct jval *json_new(struct arena *a, enum jtype t);
struct jval *json_str(struct arena *a, const char *s);
struct jval *json_strn(struct arena *a, const char *s, size_t n);
struct jval *json_int(struct arena *a, int64_t i);
struct jval *json_bool(struct arena *a, int b);
struct jval *json_obj(struct arena *a);
/*
 * json_set replaces key's value if present, else appends the member;
 * json_add appends without looking.  key is not copied: it must be a
 * string literal or outlive the value (arena-owned).
 */
void json_set(struct arena *a, struct jval *obj, const char *key,
    struct jval *v);
void json_add(struct arena *a, struct jval *obj, const char *key,
    struct jval *v);
void json_push(struct arena *a, struct jval *arr, struct jval *v);
/* json_copy deep-copies v into arena a. */
struct jval *json_copy(struct arena *a, const struct jval *v);
/* json_keys_exact: 0 when obj has exactly the NULL-terminated keys. */
int json_keys_exact(const struct jval *obj, const char *const *keys);

/* ---- SHA-256 (sha256.c, OpenSSL libcrypto) ---- */

#define SHA256_HEX 64
struct sha256 {
	void *ctx;
};
void sha256_init(struct sha256 *h);
void sha256_update(struct sha256 *h, const void *p, size_t n);
void sha256_final(struct sha256 *h, unsigned char out[32]);
void sha256_release(struct sha256 *h);
/* sha256_hex writes 64 lowercase hex digits and a NUL to out. */
void sha256_hex(const void *p, size_t n, char out[SHA256_HEX + 1]);
void hex_encode(const unsigned char *p, size_t n, char *out);
/* sha256_thread_done frees the calling thread's sha256_hex context. */
void sha256_thread_done(void);
/*
 * json_hash writes "sha256:" + hex of the canonical form of v to out
 * (72 bytes with NUL); scratch is reused between calls.
 */
#define HW_HASH_LEN 71
void json_hash(const struct jval *v, struct buf *scratch,
    char out[HW_HASH_LEN + 1]);

/* ---- files (file.c) ---- */

/*
 * fsync_dir syncs the directory holding path (or path itself when isdir);
 * EBADF, EINVAL, ENOSYS and ENOTSUP are ignored as in the reference.
 */
int fsync_dir(const char *dirpath);
/* fsync_parent syncs the directory that holds path. */
int fsync_parent(const char *path);
/*
 * atomic_replace writes n bytes to path through a 0600 temp file in the
 * same directory: write, fsync, rename, fsync the directory.  A target
 * that exists and is not a regular file is refused.
 */
int atomic_replace(const char *path, const void *p, size_t n);
/*
 * temp_write creates a 0600 temporary file .NAME-XXXXXX beside path,
 * writes n bytes of p (if p) and then all of srcfd (if >= 0), syncs and
 * closes it, and returns its name (malloc'd), or NULL.
 */
char *temp_write(const char *path, const void *p, size_t n, int srcfd);
/* atomic_write_json writes canonical JSON of v plus "\n" atomically. */
int atomic_write_json(const char *path, const struct jval *v);
/*
 * read_file reads a regular, non-symlink file of at most max bytes into
 * b (replacing its content).  ENOENT gives code 66 and errno ENOENT.
 */
int read_file(const char *path, size_t max, struct buf *b);
/* read_fd reads all of fd (at most max bytes) into b, named name. */
int read_fd(int fd, const char *name, size_t max, struct buf *b);
/*
 * read_json_file reads and parses a JSON object file into arena a.
 * Returns NULL with the error set; errno is ENOENT when it is missing.
 */
struct jval *read_json_file(const char *path, size_t max, struct arena *a);
/*
 * open_append opens O_APPEND|O_CREAT|O_NOFOLLOW 0600, regular file only,
 * and refuses a file that owned_check refuses.
 */
int open_append(const char *path, int *created);
/*
 * owned_check refuses (65) what st describes unless the effective uid owns
 * it (root too: a store of another uid is refused by owner, not access)
 * and neither group nor others can write it.  owned_path does the same
 * for path itself (lstat); a missing path passes.
 */
struct stat;
int owned_check(const char *path, const struct stat *st);
int owned_path(const char *path);
/* write_all loops write(2) until n bytes are written. */
int write_all(int fd, const void *p, size_t n, const char *what);
/* durable_unlink removes a regular file and syncs its directory. */
int durable_unlink(const char *path);
/*
 * ensure_dir creates path 0700 if missing; refuses symlinks, non-dirs and
 * a directory that owned_check refuses.
 */
int ensure_dir(const char *path);
/*
 * Text meets a terminal (ttyescape.c).  tty_escape appends the n bytes of
 * s to b so that a terminal shows them and acts on none: C0 controls
 * (but tab, and newline when lines is set) and DEL as \xNN; C1 controls
 * (U+0080-009F), the bidirectional embeddings, overrides and isolates
 * (U+202A-202E, U+2066-2069) and the direction marks (U+200E, U+200F,
 * U+061C) as \uXXXX; a byte that is not valid UTF-8 as \xNN; the rest
 * as it is.  Every printer of untrusted text to a terminal goes through
 * it.  tty_put writes the escaped text to f.
 */
void tty_escape(struct buf *b, const char *s, size_t n, int lines);
void tty_put(FILE *f, const char *s, size_t n, int lines);
/*
 * user_dir: the user's directory named by the XDG variable var when it is
 * absolute (else ignored), otherwise ~/rel (HOME, or the password entry);
 * a new allocation, or NULL with the error set (66).
 */
char *user_dir(const char *var, const char *rel);
/* path_join: "a/b" in a new allocation. */
char *path_join(const char *a, const char *b);

/*
 * Fault injection for crash tests: when HW_FAULT_KILL_AT=N is set, the
 * N-th call of fault_point() (counting from 1) kills the process with
 * SIGKILL.  Every write, sync, rename and truncate boundary of a commit
 * calls it.  HW_FAULT_TRACE=1 prints each point's name to stderr.  With
 * HW_FAULT_TORN=1 an "*-append" point returns 1 instead: the caller writes
 * half of its bytes and then calls fault_kill(), leaving a torn line.
 */
int fault_point(const char *name);
void fault_kill(void);

/* ---- locks (lock.c): flock(2) only ---- */

/*
 * lock_open opens (creating 0600, O_NOFOLLOW) the lock file path and
 * takes an exclusive flock; blocking unless nonblock.  Returns the fd, or
 * -1: busy (errno EWOULDBLOCK, code 75) or storage without native locks
 * (code 74, "native locks unavailable").  The file is never unlinked.
 */
int lock_open(const char *path, int nonblock);
void lock_close(int fd);
/*
 * A session's writer lease handed to a child without a gap: the parent
 * adds lease_pass(&fa, fd) to its posix_spawn (the locked descriptor kept
 * open across exec; the environment returned names it in HW_LEASE_FD and
 * is freed with free(); NULL when fd is -1: use environ), then closes its
 * own copy.  The child calls lease_take_env first in main; its
 * session_lease then takes the handed descriptor through lease_open when
 * it is the lock of that session and holds it, and otherwise opens the
 * lock as lock_open does.
 */
#define LEASE_ENV "HW_LEASE_FD"
void lease_take_env(void);
int lease_open(const char *path);
char **lease_pass(posix_spawn_file_actions_t *fa, int fd);

/* ---- credential redaction (redact.c) ---- */

/*
 * The credential values a process knows of are never written or shown:
 * every text it stores or prints has each of them, and the forms they are
 * commonly written in, replaced by REDACT_MARKER first.  The forms are the
 * exact bytes; standard and URL-safe base64 at each of the three
 * alignments in a group of three bytes (the characters that do not depend
 * on the neighbouring bytes, padding left out); hex; and percent-encoding,
 * of every byte or of all but RFC 3986's unreserved ones (hex digits in
 * either case).  A value (or form) shorter than REDACT_MIN bytes is never
 * matched, so that a one-letter "key" cannot wipe every text.
 *
 * The registry is process-wide.  On first use it holds the values of the
 * built-in credential allowlist (OPENAI_API_KEY, ANTHROPIC_API_KEY,
 * STANFORD_AI_API_KEY, HEARTWOOD_CUSTOM_MODEL_API_KEY) and of the variable
 * HW_API_KEY_ENV names, when set;
 * redact_secret and redact_env add more (before any thread is started).
 * redact_secret returns 1 when v added something, 0 when v is too short
 * or already known.  redact_count: the forms held.
 */
#define REDACT_MARKER "[REDACTED:credential]"
#define REDACT_MIN 8
int redact_secret(const char *v, size_t n);
void redact_env(const char *name);
size_t redact_count(void);
/*
 * redact_buf appends p (n bytes) to out with every match replaced, the
 * earliest first (the longest of those that start together), and returns
 * how many it replaced.  redact_json does the same in place to every
 * string and object key of v (new strings come from a; a key that then
 * equals another of its object's gets "#2", "#3" ... added).
 */
size_t redact_buf(struct buf *out, const char *p, size_t n);
size_t redact_json(struct arena *a, struct jval *v);
/*
 * A text shown while it grows (streamed model text): after each
 * redact_stream_update with the whole text so far, shown holds what may
 * be shown of it, redacted, without the tail that could still become a
 * match when more arrives.  The text must only grow.
 */
struct redact_stream {
	struct buf shown;
	size_t done;		/* bytes of the text that shown covers */
};
void redact_stream_init(struct redact_stream *rs);
void redact_stream_release(struct redact_stream *rs);
void redact_stream_clear(struct redact_stream *rs);
void redact_stream_update(struct redact_stream *rs, const char *text,
    size_t n);

/* ---- JSON Lines reader (jsonl.c) ---- */

#define JSONL_LINE_MAX (8u << 20)

/*
 * A bounded, streaming line reader over a file descriptor.  Lines are split
 * on '\n' only.  name is used in "name:line:" error prefixes.
 */
struct jsonl {
	int fd;
	const char *name;
	size_t max;
	char *buf;
	size_t start, end, cap;
	long lineno;
	off_t offset;		/* file offset of the next line's first byte */
	int eof;
	int partial;		/* set at EOF when bytes after the last '\n' */
};
void jsonl_init(struct jsonl *r, int fd, const char *name, size_t max);
void jsonl_release(struct jsonl *r);
/*
 * jsonl_next returns 1 with *line and *len for each complete line (the
 * '\n' replaced by NUL in the reader's buffer), 0 at EOF, -1
 * on error (over-long line, read error).  A final unterminated tail is not
 * returned: r->partial is set and r->offset marks where it begins.
 */
int jsonl_next(struct jsonl *r, char **line, size_t *len);
/* jsonl_ready is true when a complete line is already buffered or fd polls readable. */
int jsonl_ready(struct jsonl *r);
/*
 * jsonl_parse parses a line (bounded: valid UTF-8, an object) into arena
 * a, setting a "name:line: reason" error on failure (code 65).
 */
struct jval *jsonl_parse(struct jsonl *r, struct arena *a, char *line,
    size_t len);
/* jsonl_parse_canon also says whether the line was canonical. */
struct jval *jsonl_parse_canon(struct jsonl *r, struct arena *a, char *line,
    size_t len, int *canonical);

/* ---- program support (prog.c) ---- */

/*
 * prog_finish flushes and closes stdout and returns code, or 74 with a
 * message when stdout could not be written (e.g. hw-x >/dev/full).
 */
int prog_finish(const char *prog, int code);
/* prog_fail prints the last error as "prog: message" and returns its code. */
int prog_fail(const char *prog);

/* ---- time and ids (util.c) ---- */

/* utc_now writes YYYY-MM-DDTHH:MM:SSZ (21 bytes with NUL). */
void utc_now(char out[21]);
int valid_session_id(const char *id);
/* media_is_json: a Content-Type of application/json, any case, any params */
int media_is_json(const char *ct);
/* parse_seq: a decimal integer >= 0 with nothing around it, else -1 */
int parse_seq(const char *s, int64_t *out);
/* random_hex writes 2n hex digits and NUL from n random bytes. */
int random_hex(char *out, size_t n);
int valid_utf8(const char *s, size_t n);

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

/* ---- records (record.c) ---- */

#define EVENT_SCHEMA "heartwood.session-event.v1"
#define AUDIT_SCHEMA "heartwood.audit-event.v1"

int event_kind_valid(const char *kind);
/*
 * scrub replaces, recursively and in place, the value of every sensitive
 * key with the string "[scrubbed]" (see hw-store(5)).
 */
void scrub(struct arena *a, struct jval *v);
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
/*
 * event_build makes a session event; prev is the audit chain head or NULL.
 */
struct jval *event_build(struct arena *a, const char *sid, int64_t seq,
    const char *kind, struct jval *payload, const char *occurred_at,
    const char *prev);
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
 * hex digits of the payload's session_event_hash.
 */
size_t audit_canon(struct arena *a, const struct jval *event,
    const char *ehash, struct buf *out);
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

/* ---- Python's Unicode rules (unitab.c, generated by mk/unitab) ---- */

/*
 * uni_key_char is what code point c adds to a key the scrubber
 * normalizes: 0 for none (not alphanumeric), the ASCII character of its
 * lowercase, or 0x80 for any alphanumeric character above ASCII.
 */
int uni_key_char(uint32_t c);
/* uni_printable: Python's str.isprintable() of the one character c. */
int uni_printable(uint32_t c);

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
	struct arena ca;	/* commit scratch, reused batch to batch */
	struct buf cev, cau, cscratch;
	int64_t au_synced_ms;	/* when the audit log was last synced */
	int64_t count;		/* committed pairs */
	char head[HW_HASH_LEN + 1];	/* audit chain head, "" when empty */
	/*
	 * bind, when set, is called by session_commit with each event and
	 * its hash before anything of the batch is written; -1 fails the
	 * commit.  Decisions made here set it to decision_bind (trust.c).
	 */
	int (*bind)(struct session *s, const struct jval *ev,
	    const char *ehash);
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
 * session_unlease syncs, removes .writer.json (only if it is ours) and
 * releases the lease.  After a failed commit it keeps .writer.json so the
 * next owner recovers.
 */
int session_unlease(struct session *s);
/*
 * session_hand_over lets go as session_unlease does but returns the still
 * locked descriptor, for a child to take (lease_pass); -1 with the error
 * when the session was not leased or could not be synced (the lock is
 * then released).
 */
int session_hand_over(struct session *s);
/*
 * session_commit commits n validated drafts ({"kind","payload"} objects)
 * as one batch under the snapshot lock: the event lines are appended and
 * synced, then their audit records are appended.  On success the canonical
 * event lines are appended to ack (each with "\n") and may be shown as
 * durable: the event is on disk, and its audit record is a pure function
 * of it and the chain head, which recovery rebuilds if a crash loses it.
 * The audit log is synced at most every AUDIT_SYNC_MS or AUDIT_SYNC_MAX
 * records, and always before the lease is released.  Any failure marks the
 * session broken, except this one: a batch in which an event or audit line
 * would be longer than JSONL_LINE_MAX (the readers' bound) is refused with
 * code 65 before anything is written.  Each draft's payload is redacted
 * (redact_json) in place first.
 */
#define AUDIT_SYNC_MS 1000
#define AUDIT_SYNC_MAX 4096
int session_commit(struct session *s, struct jval *const *drafts, size_t n,
    struct buf *ack);

/* session_sync_audit syncs audit records written since the last sync. */
int session_sync_audit(struct session *s);

/* metadata */
int session_read_meta(struct session *s, struct arena *a, struct jval **meta);
int session_rename(struct session *s, const char *title);
/* title_normalize collapses whitespace into out; -1 if empty or > 120. */
int title_normalize(const char *in, char *out, size_t outsz);

/* ---- verification and recovery (logs.c) ---- */

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
 * logs_verify reads events.jsonl and audit.jsonl in step, fully checking
 * both logs and their pairing (hw-store(5)), calling fn for each event.  It
 * holds the snapshot lock for the duration.  Memory does not grow with
 * the log.  On failure: code 65 and "sequence N: reason".  Sets s->count and
 * s->head.  Files that do not exist count as empty.
 */
int logs_verify(struct session *s, event_fn fn, void *ctx);
/*
 * logs_verify_early is logs_verify calling fn from a second thread with
 * each event in order once the event itself checks out, before its audit
 * record is checked: faster, and right for a caller that discards what it
 * built when the verification fails.
 */
int logs_verify_early(struct session *s, event_fn fn, void *ctx);
/*
 * logs_verify_audit is logs_verify calling fn with each verified audit
 * record instead: its canonical line (no "\n") and its hash.
 */
typedef int (*audit_fn)(void *ctx, const char *line, size_t n,
    const char *hash);
int logs_verify_audit(struct session *s, audit_fn fn, void *ctx);
/*
 * A logtail follows a growing session: logtail_read verifies, under the
 * snapshot lock, every complete pair after the ones it has delivered and
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
 * writes an accepted receipt, commits command.received, then calls more()
 * repeatedly to get batches of drafts to commit (more returns the count,
 * 0 at the end, -1 on error), printing acks through flush(), and completes
 * the receipt.
 */
struct command_io {
	int (*more)(void *ctx, struct jval ***drafts);
	int (*flush)(void *ctx, struct buf *ack);
	void *ctx;
};
int command_run(struct session *s, struct arena *a, struct jval *cmd,
    struct command_io *io, int *replayed);
/* receipts_interrupted: -1 (code 75) if any receipt is still accepted. */
int receipts_interrupted(struct session *s);

/* ---- string-keyed hash map (smap.c) ---- */

/*
 * An open-addressing map from byte strings to pointers.  Keys are not
 * copied: each must outlive the map.  Entries cannot be removed.
 */
struct smap_ent {
	const char *k;
	size_t n;
	void *v;
};
struct smap {
	struct smap_ent *e;
	size_t cap, used;
};
void smap_init(struct smap *m);
void smap_release(struct smap *m);
/* smap_get: the value stored under k (n bytes), NULL if none */
void *smap_get(const struct smap *m, const char *k, size_t n);
/* smap_put stores v under k, replacing any value there */
void smap_put(struct smap *m, const char *k, size_t n, void *v);

/* ---- the session projection (project.c) ---- */

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
/*
 * proj_decided_unrun: the group id of the last decided set when no agent
 * has taken it up (the lifecycle still waits for confirmation and nothing
 * is pending), NULL otherwise.
 */
const char *proj_decided_unrun(const struct proj *p);

/* ---- session views (views.c) ---- */

/*
 * session_settle completes what a dead writer left (a lease, recovery,
 * release); a live writer is left alone.  -1 with its error otherwise.
 */
int session_settle(struct session *s);
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
 * While hw-agent runs a session it owns the writer lease; other processes
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
 * makes any socket file already there a dead owner's, replaced here.  Its
 * projection starts empty: give it every committed event, in order, with
 * control_seen.  NULL with the error when the socket cannot be made.
 */
struct control *control_open(struct session *s);
/* control_seen reduces ev unless the projection has it; c may be NULL */
void control_seen(struct control *c, const struct jval *ev);
/* control_proj: the projection control_seen keeps */
const struct proj *control_proj(const struct control *c);
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

/* ---- RFC 9162 Merkle trees (merkle.c) ---- */

/*
 * Leaves are hashed SHA-256(0x00 || leaf), interior nodes
 * SHA-256(0x01 || left || right); the root of the empty tree is
 * SHA-256("").  Hashes are 32 raw bytes.
 */
#define MERKLE_MAX_PROOF 64
typedef unsigned char mhash[32];

void merkle_leaf_hash(const void *leaf, size_t n, mhash out);
void merkle_node_hash(const mhash left, const mhash right, mhash out);

/* A streaming root over leaf hashes pushed in order: O(log n) memory. */
struct merkle_stream {
	mhash stack[64];	/* roots of the perfect subtrees so far */
	uint64_t size;
};
void merkle_stream_init(struct merkle_stream *m);
void merkle_stream_push(struct merkle_stream *m, const mhash leaf_hash);
void merkle_stream_root(const struct merkle_stream *m, mhash out);

/*
 * A tree held as every level of perfect subtrees over n leaf hashes
 * (about 2n hashes), so that the root of any prefix and every proof take
 * O(log n) hash operations and no pass over the leaves.  Not thread-safe
 * (one shared SHA-256 context).
 */
struct merkle_tree {
	uint64_t n;
	mhash *level[64];	/* level[k][i]: root of leaves [i<<k, (i+1)<<k) */
	uint64_t count[64];
	int levels;
};
/* merkle_tree_build takes ownership of leaves (n hashes, malloc'd). */
void merkle_tree_build(struct merkle_tree *t, mhash *leaves, uint64_t n);
void merkle_tree_release(struct merkle_tree *t);
/* merkle_tree_root: root of the first size leaves (size <= t->n). */
int merkle_tree_root(const struct merkle_tree *t, uint64_t size, mhash out);
/*
 * merkle_tree_inclusion writes the RFC 9162 inclusion proof of leaf index
 * in the tree of the first size leaves; merkle_tree_consistency the proof
 * that the tree of size1 leaves is a prefix of the tree of size2.  *len is
 * the number of hashes.  -1 (code 2) on out-of-range arguments.
 */
int merkle_tree_inclusion(const struct merkle_tree *t, uint64_t size,
    uint64_t index, mhash proof[MERKLE_MAX_PROOF], size_t *len);
int merkle_tree_consistency(const struct merkle_tree *t, uint64_t size1,
    uint64_t size2, mhash proof[MERKLE_MAX_PROOF], size_t *len);
/*
 * Verification without the tree (RFC 9162 2.1.3.2 and 2.1.4.2): 0, or -1
 * with code 65.  size1 == 0 accepts only an empty proof and root1 equal to
 * SHA-256(""); equal sizes only an empty proof and equal roots.  A root
 * stands for its size only through a signed checkpoint: take both from the
 * same one.
 */
int merkle_verify_inclusion(uint64_t index, uint64_t size,
    const mhash leaf_hash, const mhash *proof, size_t len, const mhash root);
int merkle_verify_consistency(uint64_t size1, uint64_t size2,
    const mhash root1, const mhash root2, const mhash *proof, size_t len);

/* ---- keys, signatures, base64, signed notes (sign.c) ---- */

enum sig_alg { SIG_ED25519 = 1, SIG_P256 = 2 };

/*
 * A signing or verifying key.  Ed25519 goes through libsodium, ECDSA P-256
 * (SHA-256, DER signatures) through libcrypto.  spki is the DER
 * SubjectPublicKeyInfo; fingerprint is "sha256:" + hex of SHA-256(spki).
 */
struct signkey {
	enum sig_alg alg;
	int has_private;
	unsigned char ed_pk[32], ed_sk[64];
	void *pkey;			/* EVP_PKEY * for P-256 */
	unsigned char spki[128];
	size_t spki_len;
	char fingerprint[HW_HASH_LEN + 1];
};
/* sig_alg_name: "ed25519" or "ecdsa-p256-sha256". */
const char *sig_alg_name(enum sig_alg alg);
/*
 * key_load_private reads an unencrypted PKCS#8 PEM private key: a regular,
 * non-symlink file of at most 64 KiB, mode & 077 == 0, owned by the
 * effective uid.  key_load_public reads a PEM SubjectPublicKeyInfo: a
 * regular non-symlink file of at most 64 KiB, not group- or
 * other-writable, owned by root or the effective uid.  Only Ed25519 and
 * P-256 keys are accepted.  Errors are code 65 (bad key or file) or 66.
 */
int key_load_private(const char *path, struct signkey *k);
/* (On failure the key is left zeroed; key_release is safe on it.) */
int key_load_public(const char *path, struct signkey *k);
int key_generate(enum sig_alg alg, struct signkey *k);
/* key_pem_private / key_pem_public append PEM text to b. */
int key_pem_private(const struct signkey *k, struct buf *b);
int key_pem_public(const struct signkey *k, struct buf *b);
void key_release(struct signkey *k);
/* key_sign: Ed25519 gives 64 bytes, P-256 a DER signature (<= 72). */
int key_sign(const struct signkey *k, const void *msg, size_t n,
    unsigned char sig[80], size_t *siglen);
/* key_verify: 0 when sig is a valid signature of msg, else -1 (code 65). */
int key_verify(const struct signkey *k, const void *msg, size_t n,
    const unsigned char *sig, size_t siglen);

/* buf_wipe zeroes b's memory (secrets) and releases it. */
void buf_wipe(struct buf *b);
/* b64_encode appends standard base64 with padding. */
void b64_encode(struct buf *b, const void *p, size_t n);
/*
 * b64_decode_canonical replaces out's content with the decoding of
 * standard padded base64 that re-encodes to exactly the same text (no
 * whitespace, no non-zero pad bits); -1 if not.
 */
int b64_decode_canonical(const char *s, size_t n, struct buf *out);

/*
 * C2SP signed notes with Ed25519 signatures.  note_sign appends to out the
 * body (which must end in "\n"), a blank line and "\u2014 NAME SIG" where
 * SIG is base64(key id || signature) and the key id is the first 4 bytes
 * of SHA-256(NAME || 0x0A || 0x01 || public key).  note_verify checks a
 * note against one known key by name; unknown signers are ignored, and a
 * note with no valid signature by the key is refused.  On success *body
 * (malloc'd) is the signed text.  note_vkey appends the verifier key
 * "NAME+hex(key id)+base64(0x01 || public key)".
 */
int note_sign(const char *name, const struct signkey *k, const char *body,
    struct buf *out);
int note_verify(const char *name, const unsigned char pk[32],
    const char *note, size_t n, char **body);
void note_vkey(const char *name, const unsigned char pk[32], struct buf *out);

/* ---- audit verification, export and checkpoints (audit.c) ---- */

/*
 * What a verified audit log adds up to: its records, the chain head, the
 * SHA-256 and size of its canonical export bytes, and its RFC 9162 Merkle
 * root (leaf = a record's canonical JSON, without the newline).
 */
struct audit_sum {
	int64_t count;
	char terminal[HW_HASH_LEN + 1];
	char content_sha[HW_HASH_LEN + 1];
	uint64_t size;
	mhash root;
	char session_id[129];
	struct sha256 content;
	struct merkle_stream tree;
	int keep_leaves;	/* keep every leaf hash, for proofs */
	mhash *leaves;
	uint64_t cap;
	int64_t capture;	/* keep the record at this index (-1: none) */
	struct buf captured;
};
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
void audit_sum_init(struct audit_sum *m, int keep_leaves);
void audit_sum_release(struct audit_sum *m);
/* audit_verify_session fully verifies a session's paired logs. */
int audit_verify_session(struct session *s, struct audit_sum *m);
/*
 * audit_verify_fd verifies a bare audit export read from fd: any
 * equivalent JSON, whitespace-only lines skipped, one session, the chain
 * and every hash.  Errors: code 65, "sequence N: reason".
 */
int audit_verify_fd(int fd, const char *name, struct audit_sum *m);
/* audit_sum_json appends the verification result object. */
void audit_sum_json(const struct audit_sum *m, struct buf *b);
/* path_outside_store: -1 (code 2) when path's directory is in .heartwood. */
int path_outside_store(const char *path);
/*
 * publish_new_file writes a 0600 file that must not exist yet: through a
 * synced temporary file that is linked into place, so it never replaces
 * anything and never appears partial (code 1 if the path exists).
 */
int publish_new_file(const char *path, const void *p, size_t n);
/*
 * audit_export (lease held) commits audit.export.recorded, re-verifies the
 * session including it, and writes the canonical export atomically to the
 * session's audit-export.jsonl; with output, also a copy there, which must
 * be outside .heartwood and must not exist.
 */
int audit_export(struct session *s, struct audit_sum *m, const char *output);

/* ---- checkpoints (checkpoint.c) ---- */

struct checkpoint_opts {
	const char *deployment_id, *policy_id, *retain_until;
	const char *signer_id, *key_id, *key_version;
};
/* checkpoint_statement builds heartwood.audit-checkpoint-statement.v1. */
struct jval *checkpoint_statement(struct arena *a, const struct audit_sum *m,
    const struct checkpoint_opts *o);
/*
 * checkpoint_sign signs the statement (domain string, NUL, canonical JSON
 * of the signature fields and the statement) and returns the
 * heartwood.audit-checkpoint.v2 object, or NULL.
 */
struct jval *checkpoint_sign(struct arena *a, struct jval *statement,
    const struct signkey *k, const struct checkpoint_opts *o);
/* checkpoint_note_body: the C2SP tlog-checkpoint body of a verified log. */
void checkpoint_note_body(const struct audit_sum *m, const char *deployment,
    struct buf *b);
/*
 * checkpoint_publish stages audit.jsonl (copied from auditpath) and
 * checkpoint.json in a temporary directory beside output, syncs them and
 * renames it into place under <parent>/.<name>.lock; an existing output is
 * never replaced (code 1) and a failure leaves no partial bundle.
 */
int checkpoint_publish(const char *output, const char *auditpath,
    const struct jval *cp);
/*
 * checkpoint_verify runs every check of a bundle in the reference's order
 * (hw-audit(1)); on success *out is the checkpoint and m its export.
 */
int checkpoint_verify(const char *dir, const char *pubkey, struct arena *a,
    struct audit_sum *m, struct jval **out);
/* checkpoint_args_ok checks the identifiers and the retention date. */
/* key_text: 1 to 512 characters in 0x21-0x7e (key ids and versions). */
int key_text(const char *s);
int checkpoint_args_ok(const struct checkpoint_opts *o);

/* ---- the on-disk Merkle tree of a session (mcache.c) ---- */

/*
 * A session's tree as level files under .merkle/ in its directory, kept
 * in step with audit.jsonl: mcache_open (under .merkle/lock) checks the
 * cache against the log, rebuilds it if it does not match, extends it
 * with the records appended since (checking their chain and hashes), and
 * maps the levels as c->t, so proofs read O(log n) nodes.
 */
struct mcache {
	char *dir;
	int lock;
	int fd[64];
	void *map[64];
	size_t maplen[64];
	struct merkle_tree t;	/* levels point into the maps */
	int64_t count;
	int offs;		/* record offsets in audit.jsonl */
};
int mcache_open(struct session *s, struct mcache *c);
void mcache_close(struct mcache *c);
/* mcache_record puts audit record seq's line (no "\n") in out. */
int mcache_record(struct session *s, struct mcache *c, int64_t seq,
    struct buf *out);

/* ---- Merkle proofs of audit logs (proof.c) ---- */

/*
 * proof_inclusion appends, from the session's Merkle cache, the canonical
 * proof that its record seq is in the tree of all its records:
 * {"kind":"inclusion","leaf_index","proof":[hex],"record","root","tree_size"}.
 */
int proof_inclusion(struct session *s, int64_t seq, struct buf *out);
/*
 * proof_consistency verifies the audit.jsonl of two checkpoint bundles and
 * appends the proof that the newer extends the older:
 * {"kind":"consistency","proof","root1","root2","size1","size2"}.  A newer
 * log that is shorter or does not contain the older tree is code 65.
 */
int proof_consistency(const char *olddir, const char *newdir,
    struct buf *out);
/*
 * proof_consistency_session proves, from the session's Merkle cache, that
 * its log extends the tree of its first size1 records.  Like
 * proof_inclusion, it checks the audit chain (through the cache), not the
 * pairing with the event log: hw-audit verify does that.
 */
int proof_consistency_session(struct session *s, int64_t size1,
    struct buf *out);
/*
 * proof_verify checks a proof without the log; with root_from (a bundle
 * directory, signature-checked when pubkey is given) the proof's tree
 * must be that bundle's.  Appends {"kind",...,"verified":true}, and for a
 * consistency proof both trees (root1, root2, size1, size2).  A
 * consistency proof from size 0 is refused (RFC 9162: 0 < size1).
 */
int proof_verify(const char *text, size_t n, const char *root_from,
    const char *pubkey, struct buf *out);

/* The tree a verified checkpoint vouches for. */
struct tree_head {
	int64_t size;
	mhash root;
	char session_id[129];
};
struct signer_profile;
/*
 * tree_head_load verifies the checkpoint at path, a bundle directory
 * (checkpoint_verify) or its C2SP signed note (a regular file, Ed25519),
 * with pubkey or else profile p's trusted key (then a bundle's signature
 * identity must be p's and a note must be signed under p's signer id; with
 * pubkey any name whose signature by the key verifies will do), and
 * fills h.  Errors: 66 (no such path), 65.
 */
int tree_head_load(const char *path, const char *pubkey,
    const struct signer_profile *p, struct tree_head *h);
/*
 * proof_verify_between checks a consistency proof and binds it: size1 and
 * root1 must be old's tree (the checkpoint named from), size2 and root2
 * new's (to), both of one session.  Appends as proof_verify.  Code 65.
 */
int proof_verify_between(const char *text, size_t n,
    const struct tree_head *old, const char *from,
    const struct tree_head *new, const char *to, struct buf *out);

/* ---- TOML subset (toml.c), checkpoint signers (signer.c) ---- */

/*
 * toml_parse parses the TOML subset that signer registries use into a JSON
 * object allocated from arena a: "key = value" lines at the top level and
 * under [a.b] table headers (bare or basic-string keys); basic strings
 * with TOML's escapes, decimal integers (J_INT, 64-bit), floats (J_FLOAT,
 * finite) and booleans; comments and blank lines; "\n" or "\r\n" line
 * ends; UTF-8 only.  Everything else (literal and multi-line strings,
 * arrays, inline tables, dotted keys, dates, arrays of tables, inf, nan,
 * hex/octal/binary) and every duplicate key or table is refused: NULL with
 * code 65 and "name:line: reason".
 */
struct jval *toml_parse(struct arena *a, const char *s, size_t n,
    const char *name);
/* toml_quote appends NUL-terminated s as a TOML basic string. */
void toml_quote(struct buf *b, const char *s);

#define SIGNER_REGISTRY_ENV "HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY"
#define SIGNER_REGISTRY_ETC "/etc/heartwood/checkpoint-signers.toml"
#define SIGNER_REGISTRY_SCHEMA "heartwood.checkpoint-signer-registry.v1"
#define SIGNER_ENDPOINT_PATH "/v1/checkpoints/sign"

/*
 * One validated registry profile.  Strings point into the registry's
 * arena.  key is loaded (and checked against algorithm and
 * public_key_sha256) by registry_profile, not by registry_load.
 */
struct signer_profile {
	const char *id, *mode, *endpoint, *signer_id, *key_id, *key_version;
	const char *algorithm, *public_key_sha256, *trusted_public_key;
	const char *token_file;		/* NULL when not given */
	const char *ca_bundle;		/* https only; NULL: the system's CAs */
	double timeout;			/* seconds, 0 < timeout <= 120 */
	int development, https;
	char host[64];			/* without brackets */
	int port;
	int key_loaded;
	struct signkey key;
};

/*
 * A signer registry: path is NULL when discovery found none (an empty
 * registry, n == 0).
 */
struct signer_registry {
	char *path;
	struct arena a;
	const char *default_profile;
	struct signer_profile *profiles;
	size_t n;
};

/*
 * registry_find writes the one registry that discovery selects into
 * *path (malloc'd), or NULL: $HEARTWOOD_CHECKPOINT_SIGNER_REGISTRY (must
 * be absolute; a missing file is an error), else /etc/heartwood/
 * checkpoint-signers.toml if it exists, else $XDG_CONFIG_HOME (when
 * absolute) or ~/.config, plus heartwood/checkpoint-signers.toml, if it
 * exists.  Registries are never merged.
 */
int registry_find(char **path);
/*
 * registry_user_dir writes the user registry directory
 * ($XDG_CONFIG_HOME or ~/.config, plus "heartwood") to *dir (malloc'd).
 */
int registry_user_dir(char **dir);
/*
 * registry_load reads and validates the registry at path, or the one
 * discovery selects when path is NULL (possibly none: r->path NULL).  The
 * file is regular, not a symbolic link, at most 256 KiB, not group- or
 * other-writable, owned by root or the effective uid; its content follows
 * hw-audit(1) exactly.  Errors: code 65 (invalid registry), 66, 74.
 * registry_release is safe on a zeroed or failed registry.
 */
int registry_load(struct signer_registry *r, const char *path);
void registry_release(struct signer_registry *r);
/*
 * registry_profile selects profile name (NULL: the default), loads its
 * trusted public key and checks that the key's type and fingerprint are
 * the profile's.  No registry or no such profile is code 2.
 */
int registry_profile(struct signer_registry *r, const char *name,
    struct signer_profile **out);
/*
 * path_outside_project: -1 (code 2) when path resolves to the current
 * directory or below it; what names the file in the message.
 */
int path_outside_project(const char *what, const char *path);
/*
 * signer_sign asks the profile's signer to sign statement over HTTP(S)
 * (no redirects, the profile's timeout, a response of at most 64 KiB of
 * application/json) and returns the heartwood.audit-checkpoint.v2 object
 * once the returned signature carries the profile's pinned identity and
 * verifies against its trusted key; NULL with code 65 (or 69 when the
 * signer cannot be reached) otherwise.  The token never appears in an
 * error.
 */
struct jval *signer_sign(struct arena *a, struct signer_profile *p,
    struct jval *statement);
/*
 * signer_token_check reads the profile's token file (if it names one) the
 * way signer_sign will: regular, not a symbolic link, at most 64 KiB,
 * mode & 066 == 0, owned by the effective uid, one bearer token.
 */
int signer_token_check(const struct signer_profile *p);
/*
 * signer_identity_check: 0 when a signature's algorithm, signer_id,
 * key_id, key_version and public_key_sha256 are the profile's, else -1
 * (code 65) naming the first that differs.
 */
int signer_identity_check(const struct signer_profile *p,
    const struct jval *sig);
/*
 * signer_init_local creates the local development signer in the user
 * registry directory (0700): an Ed25519 key pair, a token and, last, a
 * registry with the profile local-development, every file 0600.  It
 * refuses to replace any file (code 1) and removes what it wrote when it
 * fails.  Appends a JSON summary (paths and fingerprint, no token) to out.
 */
int signer_init_local(struct buf *out);
/*
 * signer_serve_local serves POST /v1/checkpoints/sign and GET /healthz
 * for the development profile name (NULL: the default) of the registry at
 * path (NULL: discovery) on the loopback address and port of its
 * endpoint, signing with local-checkpoint-private.pem beside the
 * registry.  ready(url, ctx) is called once it listens.  Returns 0 after
 * SIGINT or SIGTERM, -1 if it cannot start.
 */
int signer_serve_local(const char *path, const char *name,
    void (*ready)(const char *url, void *ctx), void *ctx);
/*
 * signer_request_statement is the signer's check of a request body: UTF-8
 * JSON, exactly {schema_version, statement} of the sign-request schema,
 * and a valid statement, which it returns (from arena a); NULL with the
 * reason the 422 reply gives in why.
 */
struct jval *signer_request_statement(struct arena *a,
    const char *body, size_t n, char *why, size_t whysz);
/*
 * From checkpoint.c, the checks verify-checkpoint applies:
 * checkpoint_statement_check validates a statement (code 65);
 * checkpoint_signature_check validates a signature record's fields, that
 * k's fingerprint and algorithm are the record's, and the signature over
 * statement.
 */
int checkpoint_statement_check(const struct jval *st);
int checkpoint_signature_check(struct arena *a, const struct jval *sig,
    const struct jval *st, const struct signkey *k);

/* ---- the hw-audit verbs (auditcmd.c) ---- */

/*
 * The options of one hw-audit command, for any program that offers its
 * verbs.  Strings are borrowed (from argv, say) and never freed; identity
 * is set when the caller was given --signer-id, --key-id or --key-version.
 * audit_cmd_init zeroes c and sets the default signing identity of cp
 * (local-development, local-checkpoint-signing, v1); callers then fill in
 * what they were given.  Nothing needs releasing.
 */
struct audit_cmd {
	const char *session, *output;
	const char *key, *pubkey;	/* PEM files */
	const char *root_from;		/* a checkpoint bundle directory */
	const char *from, *to;		/* checkpoints a proof runs between */
	const char *profile, *registry;
	const char *cacert;		/* checkpoint: the signer's CA bundle */
	int identity;
	struct checkpoint_opts cp;
};
void audit_cmd_init(struct audit_cmd *c);
/*
 * Each verb below is the whole operation of the hw-audit verb of that name
 * (hw-audit(1)), with the same checks and messages: it returns 0 after
 * writing its result to out, one line of canonical JSON, or -1 with the
 * error set (hw_err_code() is the exit code) and nothing written.  Write
 * errors on out are left for the caller to find with ferror(out).  The
 * caller checks the command's shape (which options and how many operands
 * go with each verb) and shows its usage; the checks made here are errors
 * like any other, a bad argument being code 2.  Nothing goes to stderr.
 *
 * audit_cmd_verify verifies session c->session, or else the bare export
 * in file (stdin when file is NULL or "-"; missing is code 66), and
 * writes audit_sum_json().  audit_cmd_export runs audit_export() with
 * the session's lease held (refusing while a command receipt is still
 * accepted, code 75), copying the export to c->output if set.
 */
int audit_cmd_verify(const struct audit_cmd *c, const char *file, FILE *out);
int audit_cmd_export(const struct audit_cmd *c, FILE *out);
/*
 * audit_cmd_checkpoint exports session c->session under its lease and
 * publishes the signed checkpoint bundle c->output (never replacing it or
 * its .note), writing the checkpoint object.  It signs with c->key and
 * the identity in c->cp (and writes the C2SP note OUTPUT.note for an
 * Ed25519 key); without c->key, through profile c->profile (or the
 * default) of the discovered signer registry, whose identity it takes:
 * c->identity set is then code 2, as is finding no registry.
 * audit_cmd_verify_checkpoint verifies bundle dir against c->pubkey, or
 * else against the registry profile's trusted key and identity, and
 * writes {"merkle_root","signature","statement","verified":true}.
 */
int audit_cmd_checkpoint(const struct audit_cmd *c, FILE *out);
int audit_cmd_verify_checkpoint(const struct audit_cmd *c, const char *dir,
    FILE *out);
/*
 * audit_cmd_signer_init runs signer_init_local() and writes its summary.
 * When another registry takes precedence over the one just written, it
 * calls shadowed(that registry's path, ctx) first, if shadowed is not
 * NULL, so the caller can warn.  audit_cmd_signer_serve runs
 * signer_serve_local() on c->registry and c->profile, writing (and
 * flushing) {"listening":URL} once it listens; it returns 0 after SIGINT
 * or SIGTERM.
 */
int audit_cmd_signer_init(FILE *out,
    void (*shadowed)(const char *path, void *ctx), void *ctx);
int audit_cmd_signer_serve(const struct audit_cmd *c, FILE *out);
/*
 * audit_cmd_signer_list writes each profile of the registry (c->registry,
 * or discovery's; none is code 1) as {algorithm, ca_bundle, default,
 * endpoint, key_id, key_version, mode, profile_id, public_key_sha256,
 * selected, signer_id, trusted_public_key}.  audit_cmd_signer_select
 * checks profile id of discovery's registry as a checkpoint would use it,
 * saves it as the project's [audit] signer_profile (creating the store)
 * and writes its line; id NULL removes the selection and writes the
 * registry's default profile, creating nothing (signercmd.c).
 */
int audit_cmd_signer_list(const struct audit_cmd *c, FILE *out);
int audit_cmd_signer_select(const char *id, FILE *out);
/*
 * audit_cmd_prove_inclusion and audit_cmd_prove_consistency write the
 * proof of record seq, or of the tree of the first size records, from the
 * Merkle cache of session c->session; seq and size are decimal text (code
 * 2 when invalid).  audit_cmd_prove_bundles writes the consistency proof
 * between two checkpoint bundles.  audit_cmd_verify_proof checks the
 * proof in file (stdin when NULL or "-"; at most 1 MiB) with
 * proof_verify(), c->root_from and c->pubkey; or with c->from and c->to,
 * with proof_verify_between() against those checkpoints, verified with
 * c->pubkey or else the registry's profile c->profile or default.
 */
int audit_cmd_prove_inclusion(const struct audit_cmd *c, const char *seq,
    FILE *out);
int audit_cmd_prove_consistency(const struct audit_cmd *c, const char *size,
    FILE *out);
int audit_cmd_prove_bundles(const char *olddir, const char *newdir,
    FILE *out);
int audit_cmd_verify_proof(const struct audit_cmd *c, const char *file,
    FILE *out);


/* ---- the agent loop (agent.c) ---- */

struct agent_opts {
	int stream;		/* print transient records on stdout */
	int auto_low_risk;	/* Low-Risk Automation, else review every set */
	int max_iterations;	/* model calls in one run (AGENT_ITERATIONS) */
};
#define AGENT_ITERATIONS 100
/*
 * agent_run continues session s from its durable events until a stable
 * boundary: an action set waiting for review, the agent idle or finished,
 * or a recorded error.  It takes the writer lease for the whole run.  The
 * model route comes from the environment (model_route_from_env).  A
 * session found running lost its process: the unknown outcome is recorded
 * (HW-AGENT-006 when an approved member started, else 007) and nothing is
 * repeated.  Returns 0 at a boundary, -1 with the error otherwise (code 1
 * when the run ended on a recorded error).
 */
int agent_run(struct session *s, const struct agent_opts *o);


/* ---- the project configuration (config.c) ---- */

/*
 * config_load parses .heartwood/config.toml into *cfg (NULL when there is
 * none); config_mode is its action review mode, "always-confirm" (the
 * default) or "confirm-risky" (only when this user chose it here: see
 * config_mode_unconfirmed); config_set_mode rewrites the file with the
 * mode under .heartwood/.config.lock, keeping what else it holds.
 */
#define CONFIG_FILE ".heartwood/config.toml"
int config_load(struct arena *a, struct jval **cfg);
const char *config_mode(const struct jval *cfg);
/*
 * config_mode_unconfirmed: cfg asks for confirm-risky, which this user
 * has not chosen here (hw-agent mode, heartwood actions set), so that
 * config_mode is "always-confirm" (hw-store(5) TRUST)
 */
int config_mode_unconfirmed(const struct jval *cfg);
int config_set_mode(const char *mode);
/*
 * config_set_route replaces the [model] table (heartwood.model-route.v1)
 * with source, model_id, base_url and api_key_env (omitted when key_env
 * is NULL), checked by the caller, the same way and under the same lock
 * as config_set_mode; the store must exist.  model_route_from_env reads
 * the table back when the environment names no route.
 */
int config_set_route(const char *source, const char *model_id,
    const char *base_url, const char *key_env);
/*
 * config_signer_profile is cfg's [audit] signer_profile, the signer
 * profile the project selected (hw-audit signer select), or NULL;
 * config_set_signer_profile sets it, or removes it for NULL, as
 * config_set_mode writes; the store must exist.
 */
const char *config_signer_profile(const struct jval *cfg);
int config_set_signer_profile(const char *id);

/* ---- what this user decided and chose here (trust.c) ---- */

/*
 * The project directory, .heartwood/ included, is not trusted: it may
 * come from a clone, an archive or another user.  What this user decided
 * and chose on this machine lives in the user state directory,
 * $XDG_STATE_HOME/heartwood (when absolute) or ~/.local/state/heartwood,
 * 0700 and refused when it is not the user's or others may use it.
 * user_state_dir puts its path (malloc'd) in *dir: 1, 0 when it does not
 * exist and !create, -1 with the error.
 */
int user_state_dir(char **dir, int create);
/*
 * decision_bind is a session's bind hook: for an approval.recorded event
 * it appends the event's binding, a MAC under the user's decision key
 * (decision.key, 32 random bytes, 0600, created on first use) over the
 * event hash, sequence, session id, group, decision and the project's
 * real path, to projects/<24 hex of sha256(path)>/decisions/<sid>.jsonl
 * and syncs it; other events pass.  decision_bound: 1 when event ev
 * (an approval.recorded of session sid in this project) has a valid
 * binding, else 0, with the reason when a key or file was refused in why
 * ("" otherwise).  It never fails and keeps the last error as it was.
 */
int decision_bind(struct session *s, const struct jval *ev,
    const char *ehash);
/* decision_ready: the key can be used (created if needed), or -1 */
int decision_ready(void);
int decision_bound(const char *sid, const struct jval *ev, char *why,
    size_t whysz);
/*
 * trust_confirm records that this user chose value for setting what
 * ("model_route", "confirmation_mode") in this project, in
 * projects/<id>/confirmed.json; trust_confirmed: 1 when they did, 0 when
 * not (or no state exists), -1 with the error.  route_fingerprint is the
 * hash a route is confirmed by: its model, base URL and key variable.
 */
int trust_confirm(const char *what, const char *value);
int trust_confirmed(const char *what, const char *value);
struct model_route;
void route_fingerprint(const struct model_route *r,
    char out[HW_HASH_LEN + 1]);
/*
 * credential_allowed: 1 when a key may be read from variable name: the
 * reference's allowlist (credential_builtin_allowlist(), for messages)
 * or a name in the whitespace-separated [credentials] allowlist of the
 * user's $XDG_CONFIG_HOME/heartwood/config.toml (never the project's);
 * 0 if not, -1 with the error when that file is unreadable.
 */
int credential_allowed(const char *name);
const char *credential_builtin_allowlist(void);

/* ---- hw setup (setup.c) ---- */

/*
 * setup_run chooses the model route and saves it with config_set_route
 * (creating the store), then prints it as one JSON line on stdout.
 * NULL fields are asked for on the terminal (stdin must be one) unless
 * non_interactive, which needs source, model_id and yes.  Sources:
 * heartwood (the managed runtime, http://127.0.0.1:8765/v1, no key),
 * openai and anthropic (their OpenAI-compatible APIs, keys in
 * $OPENAI_API_KEY and $ANTHROPIC_API_KEY unless key_env names another),
 * custom (base_url required, key optional).  A key is never taken: a
 * value that looks like one is refused without being shown.  Returns 0,
 * -1 with the error (code 2 for a bad choice, 1 when cancelled).
 */
struct setup_opts {
	const char *source, *model_id, *base_url, *key_env;
	int non_interactive, yes;
};
int setup_run(const struct setup_opts *o);
/* setup_key_like: s looks like a secret (sk-..., a long random word) */
int setup_key_like(const char *s);

/* ---- the replay model (replayscript.c, replaysse.c, replaymodel.c) ---- */

/*
 * hw-model serve --replay serves the turns of a script, one per request,
 * as an OpenAI-compatible model on loopback, so that the agent, the demo
 * and the tests run offline and byte-for-byte deterministically.  It says
 * what it is wherever it appears: its model id is REPLAY_MODEL.
 */
#define REPLAY_MODEL "heartwood-replay"
#define REPLAY_SCRIPT_MAX (64u << 20)	/* a script file, in bytes */
#define REPLAY_BODY_MAX (8u << 20)	/* a request body; more is 413 */
#define REPLAY_BYTES_MAX 1048576	/* the largest N of bytes:N */
#define REPLAY_DROP 1			/* replay_turn.fail: "drop" */

/* One scripted tool call; strings are NUL-free and never empty. */
struct replay_call {
	const char *id, *name;
	const char *args;	/* canonical JSON text of the arguments */
	size_t args_n;
};
/*
 * One scripted turn.  content is NULL when absent or null (it may hold
 * NUL: content_n is its length); expect is NULL when absent; fail is 0,
 * 401, 403, 429, 500 or REPLAY_DROP.  Tokens default to 0.
 */
struct replay_turn {
	long line;			/* in the script, from 1 */
	const char *content;
	size_t content_n;
	struct replay_call *calls;
	size_t ncalls;
	int64_t prompt_tokens, completion_tokens;
	const char *expect;
	int fail;
};
/* A parsed script: n >= 1 turns, all owned by the script (arena a). */
struct replay_script {
	struct arena a;
	struct replay_turn *turns;
	size_t n;
};
void replay_script_init(struct replay_script *s);
void replay_script_release(struct replay_script *s);
/*
 * replay_script_parse validates and parses a whole script of n bytes, one
 * JSON object per line (lines holding only white space are skipped), as
 * hw-model(1) specifies: unknown fields are refused at every level.
 * Errors: code 65 and "name:LINE: reason", or "name: the script holds no
 * turns".  A failed parse may leave turns behind: release the script.
 * replay_script_load reads the file at path (a regular file of at most
 * REPLAY_SCRIPT_MAX bytes; missing is code 66) and parses it.
 */
int replay_script_parse(struct replay_script *s, const char *name,
    const char *p, size_t n);
int replay_script_load(struct replay_script *s, const char *path);

/* How a streamed answer is cut into chunks and writes (hw-model(1)). */
enum replay_chunking {
	REPLAY_WHOLE, REPLAY_LLAMA, REPLAY_VLLM, REPLAY_INTERLEAVED,
	REPLAY_BYTES
};
struct replay_style {
	enum replay_chunking chunking;
	size_t bytes;		/* REPLAY_BYTES: the size of each write */
	int crlf;		/* end lines with CR LF */
	int comments;		/* ": keep-alive" lines between events */
};
/*
 * replay_style_parse sets st->chunking (and st->bytes) from "whole",
 * "llama", "vllm", "interleaved" or "bytes:N", N from 1 to
 * REPLAY_BYTES_MAX; anything else is code 2.  crlf and comments are left
 * alone.
 */
int replay_style_parse(struct replay_style *st, const char *spec);

/*
 * A rendered event-stream body and how it is written: write i is the
 * bytes from ends[i - 1] (0 for the first) to ends[i].
 */
struct replay_sse {
	struct buf body;
	size_t *ends;
	size_t n, cap;
};
void replay_sse_init(struct replay_sse *s);
void replay_sse_release(struct replay_sse *s);
/*
 * replay_render_completion appends the chat.completion object of turn t,
 * the number-th served (from 1; its id is "replay-NUMBER").
 * replay_render_sse replaces out's content with the whole event stream of
 * the turn in style st, ending with "data: [DONE]"; include_usage is the
 * request's stream_options.include_usage.  replay_render_drop renders the
 * first half of the first event only (what "drop" sends before it closes
 * the connection).  Each is a pure function of its arguments.
 */
void replay_render_completion(struct buf *b, const struct replay_turn *t,
    size_t number);
void replay_render_sse(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st, int include_usage);
void replay_render_drop(struct replay_sse *out, const struct replay_turn *t,
    size_t number, const struct replay_style *st);

struct replay_serve_opts {
	const char *prog;	/* names the lines logged on stderr */
	const char *script;	/* the script's path */
	int port;		/* 0: a free port */
	struct replay_style style;
	int exit_when_done;
};
/*
 * replay_serve loads o->script and serves its turns on 127.0.0.1:o->port
 * (hw-model(1)): once it listens it writes one JSON line describing the
 * endpoint to out, flushes it, and writes a banner to stderr; it then
 * logs each request's method, path, turn and status (never a header or a
 * body) to stderr.  Returns 0 after SIGINT or SIGTERM, or, with
 * exit_when_done, once the response to the last turn is complete; -1 if
 * the script is invalid (65, 66), it cannot listen (69), or out cannot be
 * written (74).  SIGINT, SIGTERM and SIGUSR1 are blocked while it runs.
 */
int replay_serve(const struct replay_serve_opts *o, FILE *out);

/*
 * actions_set_mode sets the project's review mode ("always-confirm" or
 * "confirm-risky"), refused while any session has a run active (75) or an
 * action set waiting for review (1).
 */
int actions_set_mode(const char *mode);

/* ---- server-sent events (sse.c) ---- */

#define SSE_LINE_MAX (8u << 20)

/*
 * An incremental parser of a text/event-stream body (the WHATWG "event
 * stream interpretation"), pure: no I/O, so any split of the same bytes
 * gives the same events.  Lines end in CRLF, LF or CR (a CRLF split
 * between two feeds is one end); a leading UTF-8 BOM is dropped; lines
 * starting with ':' are comments; "data:" with or without the one space
 * after the colon adds a line to the event's data (several are joined
 * with "\n"); other fields (event, id, retry) are ignored; a blank line
 * dispatches the event if it has data.  on_event(ctx, data, n) gets the
 * data (NUL-terminated, n bytes; valid until it returns) and returns 0,
 * or -1 to stop the parse.
 */
struct sse {
	struct buf line;	/* the current, unterminated line */
	struct buf data;	/* the pending event's data */
	int ndata;		/* data fields in the pending event */
	int cr;			/* the last byte fed ended a line with CR */
	int first;		/* no line ended yet (a BOM may lead) */
	int failed;
	int (*on_event)(void *ctx, const char *data, size_t n);
	void *ctx;
};
void sse_init(struct sse *s,
    int (*on_event)(void *ctx, const char *data, size_t n), void *ctx);
/*
 * sse_feed parses n more bytes.  Returns 0, or -1 (and every later call
 * too) when on_event returned -1 or when a line or an event's data grows
 * past SSE_LINE_MAX bytes (code 65, "an event-stream line is longer than
 * 8388608 bytes").
 */
int sse_feed(struct sse *s, const char *p, size_t n);
/*
 * sse_end is the end of the stream: like a browser, it drops an
 * unterminated last line and an event with no blank line after it, and
 * returns 1 when it dropped anything, else 0 (-1 after a failure).
 */
int sse_end(struct sse *s);
void sse_release(struct sse *s);

/* ---- model client (model.c) ---- */

/*
 * The agent's LLM client: one OpenAI-compatible route (LiteLLM naming,
 * "openai/NAME" plus a base URL) and POST base_url/chat/completions with
 * tools and streaming.  Failures are reported with a stable code from
 * the reference's table (HW-AGENT-008 ... 012) and a fixed sentence per
 * code: never the provider's text, the key or the URL.
 */
#define MODEL_AUTH "HW-AGENT-008"	/* 401/403, or the key is unset */
#define MODEL_QUOTA "HW-AGENT-009"	/* 402, 429 insufficient_quota */
#define MODEL_RATE "HW-AGENT-010"	/* 429 after the retries */
#define MODEL_CONFIG "HW-AGENT-011"	/* other 3xx/4xx, malformed reply */
#define MODEL_TRANSIENT "HW-AGENT-012"	/* 5xx, network, cut stream */
#define MODEL_INTERRUPTED "interrupted"	/* the wait hook stopped it */
#define MODEL_BODY_MAX (32u << 20)	/* response body or stream */
#define MODEL_CALLS_MAX 128		/* tool calls in one reply */

struct model_route {
	char *model;		/* "openai/NAME"; NAME is sent as "model" */
	char *base_url;		/* no trailing '/'; + "/chat/completions" */
	char *key_env;		/* the key's variable name, or NULL */
	int loopback;		/* host 127.0.0.0/8, ::1 or localhost */
	long timeout_s;		/* 600 loopback, 180 otherwise */
	int retries;		/* 1 loopback, 2 otherwise */
	int64_t max_input_tokens, max_output_tokens;	/* 0: none */
};
/*
 * model_route_from_env fills r (all strings malloc'd) from HW_MODEL
 * (required: "openai/NAME", NAME not empty, the whole at most 256
 * printable ASCII characters without spaces), HW_BASE_URL (required: an http or https URL without user
 * information, query or fragment, at most 2048 bytes; trailing '/'
 * dropped), HW_API_KEY_ENV (optional, empty meaning unset: a name
 * matching [A-Za-z_][A-Za-z0-9_]* of a set, non-empty variable; without
 * it the route is credential-free) and HW_MAX_INPUT_TOKENS /
 * HW_MAX_OUTPUT_TOKENS (optional decimal integers, 0 to 1e9).  A missing
 * or bad value is code 2 with a message naming the variable (never the
 * key, nor the URL, which could carry a secret); r is then released.
 * When neither HW_MODEL nor HW_BASE_URL is set, the route is the [model]
 * table hw setup saved in CONFIG_FILE instead (model_id, base_url,
 * api_key_env, checked the same way, messages naming "[model] FIELD"); the
 * environment always wins, as a whole.
 * model_route_release frees r's strings and is safe on a zeroed route.
 */
int model_route_from_env(struct model_route *r);
void model_route_release(struct model_route *r);
/*
 * model_route_set fills r from a model id NAME (r->model is then
 * "openai/NAME", so NAME is sent as it is), a base URL and an optional
 * key variable name, checked as model_route_from_env checks HW_MODEL,
 * HW_BASE_URL and HW_API_KEY_ENV, what[0..2] naming the three values in
 * messages; the key variable must be set only when need_set.  Timeouts,
 * retries and budgets are left 0.  On error r is released.
 */
int model_route_set(struct model_route *r, const char *id, const char *url,
    const char *key_env, const char *const what[3], int need_set);

struct model_tool_call {
	char *id;		/* the server's, else "call_K" (K its slot) */
	char *name;
	struct buf args;	/* the arguments JSON text as streamed */
};
/*
 * One assistant reply.  Tool calls are in the order of their stream
 * index.  content and args hold valid UTF-8 (they may hold NUL), and are
 * NUL-terminated after model_complete.  Token counts are -1 when the
 * server did not report them (cache_read from
 * usage.prompt_tokens_details.cached_tokens, reasoning from
 * usage.completion_tokens_details.reasoning_tokens).
 */
struct model_reply {
	struct buf content;
	struct model_tool_call *calls;
	size_t ncalls;
	char finish[32];	/* "stop", "tool_calls", "length"; "" if none */
	int64_t prompt_tokens, completion_tokens, cache_read_tokens,
	    reasoning_tokens;
	int too_large;		/* refused as too large: 413, or error.code
				   context_length_exceeded (still 011) */
};
void model_reply_init(struct model_reply *m);
void model_reply_release(struct model_reply *m);
/*
 * model_reply_json appends m as one canonical JSON object:
 * {"content","finish","tool_calls":[{"arguments","id","name"}],
 * "usage":{"cache_read_tokens","completion_tokens","prompt_tokens",
 * "reasoning_tokens"}}, unreported counts as null.
 */
void model_reply_json(struct buf *b, const struct model_reply *m);

/*
 * A chat-completion stream being assembled into a reply: the pure half of
 * model_complete, exposed for tests.  model_stream_feed takes body bytes
 * in any split; each "data:" event is a chat.completion.chunk (choice 0
 * only; delta.content appended and passed to on_delta(ctx, s, n) when not
 * empty; delta.tool_calls fragments stitched by index, id and name kept
 * from the first fragment that has them, arguments concatenated; a
 * finish_reason; a usage object, possibly in a chunk with "choices": [])
 * or "[DONE]", after which nothing is read.  A chunk with an "error"
 * member fails with the code its status (error.code) implies.
 * model_stream_end accepts a stream that ended after [DONE] or after a
 * finish_reason, and reports any other end as MODEL_TRANSIENT.  Both
 * return 0, or -1 with st->code set (MODEL_CONFIG for a malformed
 * chunk, an over-long line or more than MODEL_CALLS_MAX calls) and the
 * error set to the code's fixed sentence.  st->delivered counts the
 * on_delta calls.
 */
struct model_stream {
	struct model_reply *out;
	struct sse sse;
	struct arena a;		/* one chunk's values */
	int64_t *index;		/* each call's stream index */
	void (*on_delta)(void *ctx, const char *s, size_t n);
	void *ctx;
	int done, finished;
	size_t delivered;
	const char *code;
};
void model_stream_init(struct model_stream *st, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx);
int model_stream_feed(struct model_stream *st, const char *p, size_t n);
int model_stream_end(struct model_stream *st);
void model_stream_release(struct model_stream *st);
/*
 * model_reply_parse fills out from a non-streamed chat.completion object
 * of n bytes (choices[0].message, finish_reason, usage), passing the
 * content to on_delta once.  0, or -1 with *code as model_stream_feed.
 */
int model_reply_parse(const char *p, size_t n, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code);

/*
 * model_complete sends messages (a JSON array of chat messages) and tools
 * (an array of {"type":"function","function":{...}}, or NULL; sent only
 * when not empty) to r as {"messages","model":NAME,"stream":true,
 * "stream_options":{"include_usage":true},"tools"?,"max_tokens"?} and
 * reads the reply into out (initialized by the caller; replaced on each
 * attempt), calling on_delta (may be NULL) for each content delta as it
 * arrives.  A response of type application/json is read as one
 * chat.completion; anything else as an event stream.
 *
 * The key is read from getenv(r->key_env) on each call and sent as
 * "Authorization: Bearer KEY" ("Bearer local-model" on a credential-free
 * route); the header's memory is wiped after the request.  libcurl is
 * held to http/https, no redirects, TLS verification, r->timeout_s for
 * the whole exchange, 10 s to connect, no proxy on a loopback route, and
 * MODEL_BODY_MAX bytes.
 *
 * 429, 408, 5xx, connection failures, timeouts and cut streams are tried
 * again up to r->retries times, after 1, 2, 4, 8 s (or Retry-After, at
 * most 8 s), unless content was already passed to on_delta: the caller
 * then decides.  401, 403, other 4xx and malformed replies are not.
 * Returns 0, or -1 with *code one of MODEL_AUTH ... MODEL_TRANSIENT and
 * hw_err set to that code's fixed sentence (exit code 1 for MODEL_AUTH
 * and MODEL_QUOTA, 65 for MODEL_CONFIG, 69 otherwise).
 *
 * Test knobs, read on each call: HW_MODEL_RETRY_WAIT_MS caps each wait
 * and HW_MODEL_TIMEOUT_MS replaces r->timeout_s (and caps the connect
 * timeout).
 */
int model_complete(const struct model_route *r, const struct jval *messages,
    const struct jval *tools, struct model_reply *out,
    void (*on_delta)(void *ctx, const char *s, size_t n), void *ctx,
    const char **code);
/*
 * model_on_wait sets a hook that model_complete calls while it waits on
 * the model (about once a second even when nothing arrives, oftener as
 * data flows), so that the caller can serve others meanwhile; when the
 * hook returns nonzero the call ends at once with MODEL_INTERRUPTED, which
 * is never retried.  Process-wide; NULL removes it.
 */
void model_on_wait(int (*hook)(void *ctx), void *ctx);
/* model_code_message: the fixed sentence of a failure code. */
const char *model_code_message(const char *code);

/* ---- agent tools (tools.c, terminal.c, editor.c, toolrisk.c) ---- */

/*
 * The tools the agent's model calls, after review (reference §5.2-§5.5):
 * terminal, file_editor, task_tracker, finish and think.  A toolbox runs
 * them for one agent run; nothing here prints or touches the store.
 */
enum risk { RISK_UNKNOWN, RISK_LOW, RISK_MEDIUM, RISK_HIGH };
/* risk_name: "UNKNOWN", "LOW", "MEDIUM" or "HIGH". */
const char *risk_name(enum risk r);

#define TOOL_OUTPUT_MAX_CHARS 16000	/* characters: code points */
#define TOOL_OUTPUT_MAX_LINES 240
#define TERMINAL_TIMEOUT_DEFAULT 120	/* seconds */
#define TERMINAL_TIMEOUT_MAX 3600
#define EDITOR_MAX_FILE (10u << 20)	/* bytes: 10 MB */
#define EDITOR_HISTORY 10		/* undo entries kept per file */

/*
 * The result of one call.  output is what the model sees: valid UTF-8,
 * at most TOOL_OUTPUT_MAX_CHARS characters and TOOL_OUTPUT_MAX_LINES
 * lines (head and tail kept, one marker line between; truncated is then
 * 1).  exit_code: for terminal the command's status, or -1 when it timed
 * out or is still running (waiting for input); for the other tools 0
 * (ok) or 1 (an error observation).  summary is one short line for the
 * audit-safe summary: the tool, the operation and at most a
 * project-relative path, never file contents or command text, e.g.
 * "terminal exited 0" or "file_editor create clean.py".
 * tool_result_init zeroes; tool_result_release frees (and re-inits).
 */
struct tool_result {
	struct buf output;
	int exit_code;
	int truncated;
	struct buf summary;
};
void tool_result_init(struct tool_result *r);
void tool_result_release(struct tool_result *r);

/*
 * toolbox_new makes the tools of one agent run, confined to root (NULL:
 * the current directory), which it resolves with realpath(3).  scrub is
 * a NULL-terminated list of environment variable NAMES (credential
 * variables) that the terminal's shell sees set to "" (may be NULL;
 * read during the call only).  The shell starts at the first terminal
 * call.  NULL with hw_err set when
 * the root cannot be resolved or opened.  It makes the calling process
 * not dumpable (PR_SET_DUMPABLE 0), so that the tools cannot read its
 * memory or environment.  toolbox_free ends the shell
 * and its process group (SIGKILL) and frees everything; NULL is fine.
 */
struct toolbox;
struct toolbox *toolbox_new(const char *root, const char *const *scrub);
void toolbox_free(struct toolbox *tb);

/*
 * The terminal's sandbox (sandbox.c).  sandbox_init chooses a back end
 * by HW_SANDBOX: "auto" (the default: bwrap, else landlock), "bwrap",
 * "landlock" or "none"; one that does not work here leaves kind
 * SANDBOX_NONE and the reason in why.  Inside, only root's contents
 * (without .git and .heartwood) and a private temporary directory are
 * writable, no socket but TCP/UDP (and only when net) can be opened,
 * and the agent's process can be neither seen nor signalled.
 * sandbox_prepare (before each shell start) rereads the project's
 * top-level names; -1 with hw_err set.  sandbox_argv and sandbox_exe
 * give the program to exec for path/argv (argv allocated, NULL-ended);
 * sandbox_enter confines the calling process, between fork and exec
 * (async-signal-safe; -1 with errno).  toolbox_sandbox is the terminal's.
 */
enum sandbox_kind { SANDBOX_NONE, SANDBOX_LANDLOCK, SANDBOX_BWRAP };
struct sandbox {
	enum sandbox_kind kind;
	char *root;
	char *scratch;		/* landlock: the private TMPDIR */
	char **argv;		/* bwrap: its arguments up to "--" */
	size_t nargv;
	int ruleset;		/* landlock: the ruleset, else -1 */
	int abi;		/* landlock's ABI */
	int net;		/* the network is allowed */
	char why[256];		/* SANDBOX_NONE: why */
};
void sandbox_init(struct sandbox *sb, const char *root, int net);
void sandbox_release(struct sandbox *sb);
int sandbox_prepare(struct sandbox *sb);
const char *sandbox_name(enum sandbox_kind k);
char **sandbox_argv(const struct sandbox *sb, const char *path,
    char *const argv[]);
const char *sandbox_exe(const struct sandbox *sb, const char *path);
const char *sandbox_tmpdir(const struct sandbox *sb);
int sandbox_enter(const struct sandbox *sb);
const struct sandbox *toolbox_sandbox(struct toolbox *tb);

/*
 * tool_schemas appends to arr (a J_ARRAY) the OpenAI "tools" entries,
 * {"type":"function","function":{"name","description","parameters"}},
 * of terminal, file_editor, task_tracker, finish and think, in that
 * order.  Each parameters object lists "summary" (string) first and, for
 * tools that are not read-only, "security_risk" (enum UNKNOWN, LOW,
 * MEDIUM, HIGH; optional) last; only type, description, properties,
 * required, items and enum are used.  Everything lives in arena a.
 */
void tool_schemas(struct arena *a, struct jval *arr);
/* tool_read_only: 1 for finish and think, else 0. */
int tool_read_only(const char *name);
/*
 * tool_rule_risk runs the rule analyzers of reference §5.4 over a call
 * and returns the higher of the two (LOW, MEDIUM or HIGH): the policy
 * rails (fetch piped to a shell or interpreter, dd of=/dev/, mkfs.,
 * recursive force-delete of /, ~, /etc, /usr, /var, /home, /boot) over
 * each argument string, and the patterns over the tool name and argument
 * strings (HIGH: rm -rf-style deletes, sudo rm, mkfs.*, dd of=/dev/,
 * eval(, exec(, os.system(, subprocess.*(, curl|sh, wget|sh; MEDIUM:
 * curl or wget of an http(s) URL) and, together with the summary, for
 * prompt injection (HIGH: "ignore previous instructions" and the like;
 * MEDIUM: role-play phrases).  Text is normalized first (invisible and
 * control characters dropped, fullwidth forms folded, whitespace
 * collapsed) and read up to 30,000 characters.  summary and
 * security_risk are not scanned as arguments.  An internal error counts
 * as HIGH.  The scope analyzer (tool_scope_risk) is the third, and the
 * highest of the three is the result.
 */
enum risk tool_rule_risk(const char *name, const struct jval *args);
/*
 * tool_scope_risk (toolscope.c), part of tool_rule_risk: LOW only for a
 * call provably read-only and inside the project (the current directory);
 * a terminal command must be allowlisted readers with allowlisted
 * arguments, no expansion, substitution, interpreter or writing
 * redirection; HIGH for a write reaching .git, .heartwood or outside the
 * project, a pipe into an interpreter or a network shell; else MEDIUM.
 */
enum risk tool_scope_risk(const char *name, const struct jval *args);
/*
 * tool_model_risk is the model's own security_risk argument, exactly
 * "LOW", "MEDIUM" or "HIGH"; RISK_UNKNOWN when it is missing, anything
 * else, or the tool is read-only.
 */
enum risk tool_model_risk(const char *name, const struct jval *args);
/*
 * tool_run executes one approved call and fills out (its previous
 * content replaced).  Tool-level failures are observations, not errors:
 * bad or missing arguments, an unknown tool, a path outside the project
 * or inside .heartwood, a missing file, a failed write in the project all
 * give exit_code 1 and a message in output.  -1 (hw_err set) only when
 * heartwood itself fails: no pipe, no fork, no bash, a broken pipe
 * to our own shell.
 *
 * terminal: {command, is_input, timeout, reset}.  One bash (--noprofile
 * --norc, on pipes, stdout and stderr together, its own session and
 * process group) per toolbox, so the working directory and exported
 * variables persist; it starts in the root with the parent's environment
 * minus every HW_* variable and with the scrub names set to "".  Each
 * command is run through eval; output is read until a per-command random
 * sentinel carrying $? appears.  timeout (seconds, default 120, at most
 * 3600) over: SIGINT to the process group, then, if the shell is not
 * back within 2 seconds, SIGKILL and a new shell at the next call (the
 * note says so); exit_code -1.  A command found blocked reading the
 * terminal's input returns early with exit_code -1, still running: then
 * is_input sends command plus "\n" to it ("C-c" sends SIGINT instead),
 * and an empty command waits for more output; a new command is refused
 * until it ends.  is_input with nothing running is an error observation.
 * reset kills the shell and its group, starts a new one, and then runs
 * command if it is not empty.  A command that ends the shell (exit) gets
 * its status, and the next call starts a new shell.
 *
 * file_editor: {command, path, file_text, old_str, new_str, insert_line,
 * view_range}, reference §5.3: view, create, str_replace, insert,
 * undo_edit.  path, relative (to the root) or absolute, is resolved
 * following symbolic links (the parent, for a path that does not exist
 * yet); it must lie in the root and have no ".heartwood" component.  The
 * file is then reached from the root one component at a time with
 * O_NOFOLLOW, so a path changed in between is refused rather than
 * followed.  Writes go through a synced temporary file in the same
 * directory, renamed (linked, for create, which never replaces) into
 * place, keeping the file's mode.  Undo history: EDITOR_HISTORY entries
 * per file, in memory; create records none.  Binary (a NUL byte or
 * invalid UTF-8, images included) and files over EDITOR_MAX_FILE are
 * refused.
 *
 * task_tracker: {command: view|plan, task_list}.  finish {message}:
 * output "finished".  think {thought}: "Your thought has been logged.".
 */
int tool_run(struct toolbox *tb, const char *name, const struct jval *args,
    struct tool_result *out);
/*
 * tool_plan: when the last tool_run was a successful task_tracker plan,
 * the plan as [{"title","status"}] in arena a (status todo, in-progress
 * or done; notes dropped), for task.plan.updated; otherwise NULL.
 */
struct jval *tool_plan(struct toolbox *tb, struct arena *a);

/*
 * tool_output_bound keeps b (valid UTF-8) within max_chars characters and
 * max_lines lines.  Over either, it keeps a head and a tail (each under
 * half of both caps, cut on character boundaries) and one marker line
 * between them, "[... N lines (M characters) omitted ...]", counting
 * what it drops plus omitted_lines/omitted_chars the caller already took
 * from that middle (a non-zero omitted_chars always cuts).  Returns 1
 * when it cut, 0 when b was left alone.
 */
int tool_output_bound(struct buf *b, size_t max_chars, size_t max_lines,
    size_t omitted_chars, size_t omitted_lines);
/* utf8_repair replaces each byte of b that is not valid UTF-8 by U+FFFD. */
void utf8_repair(struct buf *b);

/*
 * The parts of a toolbox, for tools.c (callers use tool_run).  Each _run
 * takes the call's arguments (an object) and fills out's output,
 * exit_code and summary, with tool_run's error rules; tool_error sets an
 * error observation (exit_code 1) and returns 0.  terminal_new copies
 * root and builds the shell's environment; editor_new opens root (NULL
 * with hw_err set if it cannot).
 */
struct terminal;
struct terminal *terminal_new(const char *root, const char *const *scrub);
void terminal_free(struct terminal *t);
/*
 * terminal_sandbox chooses the shell's sandbox on its first call (see
 * struct sandbox) and returns it; the terminal keeps it.
 */
const struct sandbox *terminal_sandbox(struct terminal *t);
int terminal_run(struct terminal *t, const struct jval *args,
    struct tool_result *out);
/*
 * terminal_on_wait sets a hook that terminal_run calls while a command
 * runs and is quiet (every quarter of a second), so that the caller can
 * serve others meanwhile.  Process-wide; NULL removes it.
 */
void terminal_on_wait(void (*hook)(void *ctx), void *ctx);
struct editor;
struct editor *editor_new(const char *root);
void editor_free(struct editor *e);
int editor_run(struct editor *e, const struct jval *args,
    struct tool_result *out);
int tool_error(struct tool_result *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* ---- the driver (driver.c): running programs and hw(1)'s workflows ---- */

/*
 * driver_find returns the path (malloc'd) of the program called name:
 * the one beside the running executable (/proc/self/exe) when it is an
 * executable file, else the first in PATH; NULL with code 69 if none.
 */
char *driver_find(const char *name);
/*
 * driver_exec replaces the process with program name (driver_find) run
 * with argv and the current environment, after flushing stdout.  It
 * returns -1 (hw_err set) only when that fails.
 */
int driver_exec(const char *name, char *const argv[]);
/*
 * driver_run runs program name with argv (no shell) and waits for it.
 * Its standard input is the n bytes of in, or ours when in is NULL; its
 * standard output is appended to out, or is ours (flushed first) when out
 * is NULL; its standard error is ours.  Returns its exit status (128 +
 * the signal that killed it), or -1 with hw_err set when it could not be
 * run (69) or talked to (74).
 */
int driver_run(const char *name, char *const argv[], const char *in,
    size_t n, struct buf *out);
/*
 * The workflows below return the exit status of the first program that
 * failed (0 when all succeeded), or -1 with hw_err set when the driver
 * itself failed.  Each program's output passes through to our stdout.
 *
 * driver_command sends one typed command of kind with payload (a JSON
 * object text) to session sid through "hw-session command": command_id
 * "SID-KIND-<32 random hex>", created_at now; its answer is printed.
 * A command recorded as not applied is -1, code 1, with the reason the
 * projection's lastCommandOutcome gives as the message.
 * driver_project returns session sid's projection, parsed into arena a,
 * or NULL with hw_err set (a failed hw-session keeps its exit status).
 */
int driver_command(const char *sid, const char *kind, const char *payload);
/*
 * driver_send is driver_command with the answer appended to ans (which
 * the caller owns) instead of printed; driver_continue runs "hw-agent run"
 * on sid with its stdout appended to out (NULL: passed through), handing
 * it the session's locked lease when lease is not -1 (closed here either
 * way), and returns its exit status, or -1 when it could not be run.
 */
int driver_send(const char *sid, const char *kind, const char *payload,
    struct buf *ans);
int driver_continue(const char *sid, struct buf *out, int lease);
/*
 * driver_owned is 1 when another process owns session sid and takes
 * commands on its control socket (a heartwood terminal, a run of the
 * agent): a command then goes to it, and it runs the agent on, so that
 * driver_ask, driver_decide and driver_resume print the projection
 * instead of running the agent themselves.
 */
int driver_owned(const char *sid);
struct jval *driver_project(const char *sid, struct arena *a);
/*
 * driver_known is 0 when session sid exists, or is session-main (which
 * is Ready before its first command), else -1: code 66 "no session
 * 'SID'", or the store's own error.  It creates nothing.
 */
int driver_known(const char *sid);
/*
 * driver_ready checks that the agent could be run with a model route
 * (model_route_from_env), so that a prompt nobody can answer is not
 * recorded: 0, or -1 with code 70 and a message naming hw setup.
 */
int driver_ready(void);
/*
 * driver_text(1) makes ask, allow, reject, pause and resume print what a
 * person reads (term_show from the command on, hints naming hw allow and
 * hw reject) instead of the command's answer and the projection as JSON
 * lines; hw(1) asks for it when stdout is a terminal and --json is not
 * given.
 */
void driver_text(int on);
/*
 * driver_interrupted: why session sid takes no command (a command receipt
 * left "accepted": receipts_interrupted's message), malloc'd, or NULL
 * when nothing is interrupted or the session cannot be read.  Read-only.
 */
char *driver_interrupted(const char *sid);
/*
 * driver_ask sends a chat command with prompt; driver_decide sends kind
 * "approve" or "deny" for action set group (NULL: the pending one; none
 * pending is code 1, "No actions are awaiting review."); driver_resume
 * sends resume.  Once the command is applied each runs "hw-agent run" and
 * prints the projection it left; the agent's status comes first.
 */
int driver_ask(const char *sid, const char *prompt);
int driver_decide(const char *sid, const char *kind, const char *group);
int driver_resume(const char *sid);
/* driver_pause sends pause to session sid (driver_known first). */
int driver_pause(const char *sid);
/*
 * driver_status writes one canonical JSON line to out: sessionId,
 * researcherStatus and lifecycle from the projection, pendingApproval
 * as null or {groupId, actions: [{actionId, toolName, summary, risk}]},
 * and attention, null or driver_interrupted's reason.
 */
int driver_status(const char *sid, FILE *out);


/* ---- the researcher's terminal (term*.c): heartwood(1) ---- */

/*
 * A terminal on one session.  Its commands go through the driver (the
 * suite's programs), so a session another process owns is reached through
 * that process's control socket.  out takes the transcript, err refusals
 * and errors ("heartwood: reason").  shown is the last conversation and
 * action sequence already printed, so that each step prints what is new.
 */
struct term {
	const char *sid;
	FILE *out, *err;
	int64_t shown;		/* conversation entries up to here printed */
	int64_t acted;		/* action outcomes up to here printed */
	int64_t events;		/* the eventCount last rendered */
	int quit;		/* /exit was given */
	int wake;		/* another process asked the agent to go on */
	void *owner;		/* the session's lease while idle (termown.c) */
	int lease;		/* the lease held for the agent to run next, or -1 */
	char caught_up[128];	/* the decided set term_own last ran on */
	/*
	 * How the mode runs the agent on after an applied command, and shows
	 * what changed; term_init sets plain mode's term_continue and
	 * term_render, full-screen mode its own (termfull.c).
	 */
	int (*go)(struct term *t);
	int (*show)(struct term *t);
	void *ui;		/* the full-screen mode's state */
	int hw_verbs;		/* hints name hw allow and hw reject (hw(1)) */
};
/* term_init: a terminal on session sid; nothing is read or written yet. */
void term_init(struct term *t, const char *sid, FILE *out, FILE *err);
/*
 * term_plain is plain line mode: a banner, then one line at a time from
 * fd, prompted with "heartwood> " on out, until EOF or /exit.  Returns 0,
 * or -1 with the error when out cannot be written or fd read.  A failed
 * command is reported on err and the loop goes on.  While it waits for a
 * line it owns the session (term_own).
 */
int term_plain(struct term *t, int fd);
/* term_render prints what is new in the session, its pending set, status */
int term_render(struct term *t);
/*
 * term_show is term_render on a projection already read: conversation
 * entries after t->shown, actions decided or finished after t->acted, the
 * pending set with each member's arguments under it, the status line.
 */
void term_show(struct term *t, const struct jval *proj);
/*
 * term_own takes the session's writer lease and listens on its control
 * socket, so that other processes' commands (hw allow, hw pause ...) are
 * applied by this terminal; 1 when owned, 0 when the session does not
 * exist yet or another process owns it (its commands then go there).
 * term_disown lets go; the terminal's own commands run unowned.  Taking
 * a session whose decided set no agent has taken up (its decision
 * recorded by a process that could not run the agent on) sets t->wake,
 * once for each set, so that the terminal runs the agent on.
 */
int term_own(struct term *t);
void term_disown(struct term *t);
/*
 * term_read_line reads one line from fd into *line (malloc'd, no "\n"),
 * keeping what follows in in: 1, 0 at EOF, -1 on error.  While it waits
 * it serves the control socket every TERM_TICK_MS: when another process
 * allowed, rejected, resumed or asked, the agent runs from here, and
 * whatever others changed is printed.
 */
int term_read_line(struct term *t, int fd, struct buf *in, char **line);
/*
 * term_catch_interrupt makes SIGINT (Ctrl-C) stop term_read_line and
 * term_plain with code 130, "Interrupted.", after the session is let go;
 * term_was_interrupted says whether it came.
 */
void term_catch_interrupt(void);
int term_was_interrupted(void);
/*
 * term_inspect runs hw-inspect with argv and writes its view as text to
 * out (reference 2.5): "Project files · PATH" with the tree indented two
 * spaces a level, "File · PATH · STATUS" and the content, "Project
 * changes · Git|Session actions|Unavailable" with "A|D|M  path" lines, or
 * "Change · PATH · STATUS" and a unified diff.  Control characters are
 * shown as \xNN.  Returns hw-inspect's status (its messages went to
 * stderr), 1 for a file that is not shown or changes that are
 * unavailable, or -1 with the error.
 */
int term_inspect(FILE *out, char *const argv[]);
/*
 * term_continue runs the agent on session sid (driver_continue, its
 * output dropped) and, when that takes over a second, shows progress on
 * t->err: on a terminal without NO_COLOR an animated "Working..." that
 * becomes "still working · Ns" after 10 s and is erased at the end;
 * otherwise one line every TERM_PROGRESS_LINE_MS with the time elapsed.
 */
#define TERM_PROGRESS_LINE_MS 15000
int term_continue(struct term *t);
/*
 * term_command runs heartwood's subcommand av[0] (n words) for session
 * sid: doctor, actions, audit verify|export, allow|approve|reject|deny,
 * pause, resume, replay (the driver's workflows and programs, their JSON
 * on stdout), files list|show and changes (hw-inspect's views as text),
 * specialists.  Returns the exit status, -1 with the error, or -2 when
 * the words are not a subcommand (the caller prints its usage).
 */
int term_command(const char *sid, int n, char **av);
/*
 * term_line runs one line: "/command [ARG ...]" (arguments split on
 * blanks) or a chat task.  Returns the command's exit status (0, or the
 * code of what failed, already reported on err); sets t->quit on /exit.
 */
int term_line(struct term *t, const char *line);
/*
 * term_prompt runs one task to its next stable boundary and prints what
 * it left (--prompt): 0 at waiting, idle or finished, the agent's code
 * otherwise.
 */
int term_prompt(struct term *t, const char *prompt);
/* term_fullscreen_usable: stdin and stdout are terminals, TERM usable. */
int term_fullscreen_usable(void);
/*
 * term_fullscreen is full-screen mode (ncurses) on the terminal of fds 0
 * and 1: tabs Conversation, Files and Changes, a status bar, the review
 * panel, the command palette and the review-mode dialog over the same
 * projection and commands as plain mode (term_line).  While it runs,
 * standard error is kept in a file and shown in the window.  Returns 0
 * at /exit or Ctrl-Q; -1 with the error when the terminal cannot be set
 * up (nothing has been drawn then; the caller may use plain mode) or
 * with code 130 after Ctrl-C.  The agent runs in the background, with
 * its text streamed into the window; leaving while it runs pauses it
 * first.  At SIGTERM or SIGHUP it closes the window, stops the agent,
 * lets the session go and raises the signal again.
 */
int term_fullscreen(struct term *t);
/*
 * What both modes show, as text appended to b (no newline; control
 * characters as \xNN): term_safe appends s filtered so; term_entry_text
 * a conversation entry "[NNN] Label: content"; term_action_text an action
 * record "Action: summary [tool] · state · outcome"; term_member_text the
 * i-th member of a pending set "N. summary [tool · Risk]";
 * term_review_text "Review required · N actions · one decision";
 * term_status_text "<researcher status> · <review mode label>".
 * term_pending_count is the number of members of the projection's
 * pending set (0 when none), *acts their array when acts is not NULL.
 * term_risk_label is "Low", "Medium", "High" or "Not Classified";
 * term_mode_label the label of the project's review mode.
 */
void term_safe(struct buf *b, const char *s);
void term_entry_text(struct buf *b, const struct jval *e);
void term_action_text(struct buf *b, const struct jval *a);
void term_member_text(struct buf *b, const struct jval *a, size_t i);
void term_review_text(struct buf *b, size_t n);
void term_status_text(struct buf *b, const struct jval *proj);
size_t term_pending_count(const struct jval *proj, const struct jval **acts);
/* term_pending_elsewhere: the pending set was decided elsewhere */
int term_pending_elsewhere(const struct jval *proj);
const char *term_risk_label(const char *r);
const char *term_mode_label(void);
/*
 * term_serve applies what other processes sent on the session's control
 * socket while t owns it (taking it first when it can): 2 when one of
 * them allowed, rejected, resumed or asked, so that the agent must run on
 * (the session has been let go for it, its lease kept in t->lease for the
 * agent to take, or closed by term_disown); 1 when the session changed
 * otherwise since t->events; 0 when nothing came.
 */
int term_serve(struct term *t);
/*
 * term_doctor writes the read-only readiness report of reference 5 for
 * the current directory to out, as text or (json) one canonical object
 * {state, project_root, state_root, evidence, checks}.  It creates
 * nothing.  Returns 0, 1 when the state is recovery-required, or -1 with
 * the error when out cannot be written.
 */
int term_doctor(FILE *out, int json);


/* ---- workspace inspection (inspect.c, inspectgit.c) ---- */

/*
 * Bounded, read-only views of the project (the current directory), each
 * one heartwood.workspace-*.v1 object appended to out as canonical JSON
 * with its status and the active limits.  Every path is project-relative
 * and normalized; .git and .heartwood are reserved at any depth (ASCII
 * case-insensitively).  Traversal is descriptor-anchored from root (a
 * directory descriptor of the project): one component at a time, never
 * following a symlink, never opening anything but a directory or, with
 * O_NONBLOCK, a regular file.  A refused request is -1 with hw_err set:
 * HW-WORKSPACE-001 bad path, -002 reserved, -006 bad depth (code 2);
 * -003 symlink (code 1); -004 not a directory, -005 missing or unopenable
 * (code 66).  Other outcomes are statuses inside the object.
 */
#define INSPECT_TREE_ENTRIES 2000
#define INSPECT_TREE_DEPTH 8
#define INSPECT_FILE_BYTES (512u * 1024)
#define INSPECT_FILE_LINES 10000
#define INSPECT_CHANGES 500
#define INSPECT_DIFF_BYTES (1024u * 1024)

/* inspect_path_ok: 0 for a valid request path ("" and "." are the root). */
int inspect_path_ok(const char *path);
/* inspect_reserved: 1 if name is .git or .heartwood in any case. */
int inspect_reserved(const char *name, size_t n);
/* heartwood.workspace-tree.v1 of dir, depth 1 to INSPECT_TREE_DEPTH. */
int inspect_tree(int root, const char *dir, int depth, struct buf *out);
/* heartwood.workspace-file.v1 of path. */
int inspect_file(int root, const char *path, struct buf *out);
/*
 * heartwood.workspace-changes.v1: through libgit2 when the project is in
 * a git work tree, else from session sid's succeeded file-editor actions.
 */
int inspect_changes(int root, const char *sid, struct buf *out);
/* heartwood.workspace-diff.v1 of path, which must be a current change. */
int inspect_diff(int root, const char *path, const char *sid,
    struct buf *out);

/*
 * Internals shared by inspect.c and inspectgit.c.  A struct ifile is a
 * bounded read of one regular file: status is "available", "truncated",
 * "binary", "unavailable" or "unsupported"; text (arena-owned, NULL unless
 * available or truncated) is valid UTF-8 cut on a character boundary.
 * inspect_read never fails: what went wrong is in status and message.
 */
struct ifile {
	const char *status, *message;
	char *text;
	size_t len, bytes_read, lines;
	int64_t size;
	int truncated;
	dev_t dev;		/* the file that was read, for inspect_same */
	ino_t ino;
	int64_t mtime_ns;
};
void inspect_read(struct arena *a, int root, const char *path,
    size_t max, struct ifile *f);
/*
 * inspect_text checks n bytes read from a source of which more exist when
 * more is set: NUL gives "binary", bad UTF-8 "unsupported"; otherwise it
 * cuts to max bytes on a character boundary and to INSPECT_FILE_LINES
 * lines and fills f.
 */
void inspect_text(struct arena *a, const char *p, size_t n, int more,
    size_t max, struct ifile *f);
/* inspect_regular: 1 if path exists as a regular file (not a symlink),
 * 0 if missing, -1 otherwise. */
int inspect_regular(int root, const char *path);
/* inspect_same: 1 if path is still the file f was read from, unchanged */
int inspect_same(int root, const char *path, const struct ifile *f);
struct jval *inspect_limits(struct arena *a);
struct jval *inspect_strn(struct arena *a, const char *s, size_t n);

/* ---- the data directory (datadir.c) ---- */

/*
 * The data directory holds what the programs read at run time: prompts/,
 * the demo/, the templates/ and the shared completion/ helper (hw(7)
 * FILES).  datadir_path returns it, malloc'd: $HW_DATADIR when set and
 * not empty; else DIR/../share/heartwood, DIR being the directory of the
 * running program (/proc/self/exe), when that is a directory; else
 * DIR/share (the build tree) when that is one; else DIR/../share/heartwood
 * all the same, so that a message names where it was looked for.  NULL
 * (code 69) only when /proc/self/exe cannot be read and HW_DATADIR is
 * unset.
 */
char *datadir_path(void);

/* The agent's prompt files, under the data directory's prompts/. */
#define PROMPT_SYSTEM "system.txt"	/* the system message */
#define PROMPT_REJECTED "rejected.txt"	/* a rejected set's tool result */
#define PROMPT_CONDENSE "condense.txt"	/* the condenser's instruction */
/*
 * prompt_read reads DIR/prompts/NAME into b, NUL-terminated, without one
 * final "\n" (a file that ends its one line is the same prompt as one that
 * does not).  A prompt that is missing, unreadable, not a regular file,
 * empty, over 64 KiB, holds a NUL or is not UTF-8 is never used: -1 with
 * code 69 and "cannot read prompt 'PATH': REASON".
 */
int prompt_read(const char *dir, const char *name, struct buf *b);

/* the three prompts of one agent run, read once when it starts */
struct prompts {
	struct buf system, rejected, condense;
};
void prompts_init(struct prompts *p);
/* prompts_load reads all three from datadir_path(); -1 as prompt_read. */
int prompts_load(struct prompts *p);
void prompts_release(struct prompts *p);

#endif
