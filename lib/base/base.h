/*
 * base - the floor everything stands on: errors and the exit-code table,
 * buffers and arenas, JSON and canonical encoding, JSON Lines, SHA-256,
 * files and durable writes, locks, UTF-8, Unicode tables, TOML, hash
 * maps, time and ids, redaction of credentials, terminal-safe text.
 * Knows nothing of sessions.
 *
 * Conventions: functions return 0 on success and -1 on failure after
 * recording the failure with hw_err_set() (the last error, like errno);
 * callers print it with hw_err_print() and exit with hw_err_code().  The
 * library never exits, except xmalloc() and friends, which die on OOM.
 */
#ifndef HW_BASE_H
#define HW_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define HW_VERSION "0.1.0"
/*
 * What this version implements and what is planned, as heartwood
 * --version and doctor print them; the README says the same in its
 * "Implemented:" paragraph, and in a "Planned, not yet implemented:" one
 * while something is (t/0610).  HW_PLANNED is "" when nothing is planned:
 * then --version and doctor print no "Planned" line and doctor --json says
 * "planned": "".
 */
#define HW_IMPLEMENTED "hw-append, hw-audit, hw-session, hw-agent, " \
	"hw-inspect, hw-serve (the browser gateway and UI), hw-skill, hw, " \
	"heartwood (full-screen and plain), the notebook bridge, " \
	"managed-identity credentials (Terra's metadata server), and " \
	"hw-model's replay model, pinned downloads, imports, bundles, " \
	"connections, discovery, catalog files, recommendations, resource " \
	"plans, selection and runtime launch (loopback, Slurm), and the " \
	"ChatGPT subscription sign-in with its Responses route, on the " \
	"terminal and in the browser UI."
#define HW_PLANNED ""

/* Exit codes: one table for the whole suite, documented in hw(7). */
enum hw_exit {
	HW_EXIT_OK = 0,
	HW_EXIT_FAIL = 1,	/* failed or declined (conflict, refused) */
	HW_EXIT_USAGE = 2,
	HW_EXIT_CONFIG = 64,	/* configuration error (hw-model run) */
	HW_EXIT_DATA = 65,	/* integrity failure or malformed data */
	HW_EXIT_NOINPUT = 66,	/* missing input */
	HW_EXIT_UNAVAILABLE = 69,
	HW_EXIT_NOTREADY = 70,
	HW_EXIT_OSFILE = 72,	/* a system location is missing (scratch) */
	HW_EXIT_CANTCREAT = 73,	/* an output cannot be created (scratch) */
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
/* buf_reserve makes room for n more bytes (and a NUL) without adding. */
void buf_reserve(struct buf *b, size_t n);
/*
 * buf_add appends n bytes; inline, since the records are built of many
 * short pieces, most of them literals the compiler copies in place
 */
static inline void
buf_add(struct buf *b, const void *p, size_t n)
{
	if (n == 0)
		return;		/* p may be NULL: memcpy must not see it */
	if (b->len + n + 1 > b->cap)
		buf_reserve(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}
/* BUF_LIT appends a string literal, its length known at compile time */
#define BUF_LIT(b, lit) buf_add((b), (lit), sizeof(lit) - 1)
/*
 * buf_sink is a libcurl CURLOPT_WRITEFUNCTION (its CURLOPT_WRITEDATA a
 * struct buf_sink): it appends to b, and refuses the write that would
 * take b past max bytes (the transfer ends with CURLE_WRITE_ERROR),
 * setting over.
 */
struct buf_sink {
	struct buf *b;
	size_t max;
	int over;
};
size_t buf_sink(char *p, size_t sz, size_t n, void *ctx);
static inline void
buf_addc(struct buf *b, char c)
{
	if (b->len + 2 > b->cap)
		buf_reserve(b, 1);
	b->p[b->len++] = c;
}
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

/*
 * mem_wipe zeroes n bytes at p in a way the compiler keeps (secrets);
 * buf_wipe wipes b's whole allocation and releases it.
 */
void mem_wipe(void *p, size_t n);
void buf_wipe(struct buf *b);

/* ---- base64 (b64.c) ---- */

/* b64_encode appends standard base64 with padding. */
void b64_encode(struct buf *b, const void *p, size_t n);
/*
 * b64_decode_canonical replaces out's content with the decoding of
 * standard padded base64 that re-encodes to exactly the same text (no
 * whitespace, no non-zero pad bits); -1 if not, recording no error (the
 * caller says what was not base64).
 */
int b64_decode_canonical(const char *s, size_t n, struct buf *out);

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
 * write, and may be hashed as they are): *canonical is 0 when it was not,
 * 1 when it was and a key holds an escape, 2 when it was and no key does
 * (what json_canon_ascii takes).  It may say no for some canonical texts
 * (those with floats), never yes for one that is not.
 */
struct jval *json_parse_canon(struct arena *a, const char *s, size_t n,
    char *err, size_t errsz, int *canonical);
/*
 * json_canon_ascii is 1 when the n bytes at s are a JSON text that
 * json_parse_canon takes and finds canonical, all of it ASCII, with no
 * escape in any key; else 0 (the text may still be JSON, or canonical).
 * It builds nothing: it is how a canonical record is checked without a
 * tree.
 */
int json_canon_ascii(const char *s, size_t n);
/*
 * json_canon_members is json_canon_ascii that also notes, in text order,
 * the members of the top object and of the objects that are their values
 * (a member's key, without quotes, and its value's text; parent -1 for a
 * top member, else its top member's index in m), in one reading; 0 when
 * they are more than cap (the text then goes unnoted, not refused).
 */
struct jtextmember {
	const char *k;
	size_t kn;
	const char *v;
	size_t vn;
	int parent;
};
int json_canon_members(const char *s, size_t n, struct jtextmember *m,
    size_t cap, size_t *nm);
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
 * sha256_many hashes each job's message (the byte pre first when has_pre,
 * then n bytes at p) to its 32 bytes at out, several at a time in the
 * lanes sha256_lanes picks (sha256x16.c), or one by one through libcrypto.
 */
struct sha256_job {
	const void *p;
	size_t n;
	unsigned char pre;
	int has_pre;
	unsigned char *out;
};
void sha256_many(const struct sha256_job *jobs, size_t n);
/*
 * sha256x16.c: the lanes.  sha256_x2 (two messages' rounds interleaved in
 * the SHA extensions) and sha256_x16 (sixteen messages in AVX-512 lanes)
 * run where their _ok says the CPU can; sha256_lanes says which
 * sha256_many uses: 2 where the CPU can, else 16 where it can, else 1 (no
 * lanes: libcrypto), unless HW_SHA256_LANES names one of the three.
 */
int sha256_x2_ok(void);
int sha256_x16_ok(void);
int sha256_lanes(void);
void sha256_x2(const struct sha256_job *jobs, size_t n);
void sha256_x16(const struct sha256_job *jobs, size_t n);
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
 * unsynced_replace: atomic_replace with neither sync, for derived data
 * whose reader checks it and rebuilds it from what is durable: after a
 * crash the file may be the old one, the new one, or unreadable.
 */
int unsynced_replace(const char *path, const void *p, size_t n);
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
 * redact_secret and redact_env add more, at any time and from any thread
 * (a lock keeps redaction off the registry while it grows).
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
/* now_ms: milliseconds of the monotonic clock, for deadlines */
int64_t now_ms(void);
int valid_session_id(const char *id);
/* media_is_json: a Content-Type of application/json, any case, any params */
int media_is_json(const char *ct);
/* parse_seq: a decimal integer >= 0 with nothing around it, else -1 */
int parse_seq(const char *s, int64_t *out);
/* random_hex writes 2n hex digits and NUL from n random bytes. */
int random_hex(char *out, size_t n);
int valid_utf8(const char *s, size_t n);

/* ---- Python's Unicode rules (unitab.c, generated by mk/unitab) ---- */

/*
 * uni_key_char is what code point c adds to a key the scrubber
 * normalizes: 0 for none (not alphanumeric), the ASCII character of its
 * lowercase, or 0x80 for any alphanumeric character above ASCII.
 */
int uni_key_char(uint32_t c);
/* uni_printable: Python's str.isprintable() of the one character c. */
int uni_printable(uint32_t c);

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

/* ---- TOML subset (toml.c) ---- */

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
/*
 * toml_parse_ext: toml_parse with flags; TOML_ARRAYS also accepts arrays
 * (J_ARRAY) of at most TOML_ARRAY_MAX scalars of one kind (strings,
 * integers, floats or booleans), on one line or over several, with
 * comments and a trailing comma; nested arrays and arrays of tables are
 * still refused.
 */
#define TOML_ARRAYS 1
#define TOML_ARRAY_MAX 4096
struct jval *toml_parse_ext(struct arena *a, const char *s, size_t n,
    const char *name, int flags);
/* toml_quote appends NUL-terminated s as a TOML basic string. */
void toml_quote(struct buf *b, const char *s);

/* ---- UTF-8 (utf8.c): the one decoder ---- */

/*
 * utf8_decode decodes the strict UTF-8 character at s (n > 0 bytes; no
 * surrogates, no overlong forms): its length (1 to 4) with the code point
 * in *cp, 0 when invalid, -1 when s ends inside a character that could
 * still be valid.  utf8_len is its length, 0 for either failure.
 */
int utf8_decode(const void *s, size_t n, uint32_t *cp);
size_t utf8_len(const void *s, size_t n);
/* utf8_repair replaces each byte of b that is not valid UTF-8 by U+FFFD. */
void utf8_repair(struct buf *b);

/* ---- project-relative paths (path.c) ---- */

/*
 * path_ok: 0 for a valid request path, a project-relative path of
 * '/'-separated segments that are not empty, "." or "..", hold no '\\'
 * and no control or format character ("" and "." are the root); -1 if not.
 * path_reserved: 1 if the segment name (n bytes) is .git or .heartwood,
 * ASCII case-insensitively.
 */
int path_ok(const char *path);
/* path_segment_ok: 1 if the n bytes at s are one valid segment, else 0 */
int path_segment_ok(const char *s, size_t n);
int path_reserved(const char *name, size_t n);

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
/* self_dir: the directory of the running executable, malloc'd, or NULL */
char *self_dir(void);

#endif
