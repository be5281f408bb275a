/* receipt.c - command envelopes, receipts and idempotent retries */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/store.h"
#include "store/logs.h"

#define RECEIPT_MAX (64 * 1024)

static const char *const command_kinds[] = {
	"approve", "deny", "chat", "pause", "resume", "replay",
	"audit.export", NULL
};

static int
bad(const char *fmt, ...)
{
	char what[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "command envelope is invalid: %s",
	    what);
}

/*
 * shown writes where + the name s (n bytes, from the input) quoted to out
 * if it is short and printable, else a placeholder that does not echo it.
 */
static const char *
shown(const char *where, const char *s, size_t n, char out[80])
{
	size_t i;

	for (i = 0; i < n && n <= 64; i++)
		if (!(s[i] >= 0x21 && s[i] <= 0x7e) || s[i] == '\'' ||
		    s[i] == '\\')
			break;
	if (n == 0 || i < n)
		snprintf(out, 80, "%s(name not shown)", where);
	else
		snprintf(out, 80, "'%s%.*s'", where, (int)n, s);
	return out;
}

/* only: -1 unless every key of obj is in keys; names the first that is not */
static int
only(const struct jval *obj, const char *const *keys, const char *where)
{
	const char *const *k;
	char name[80];
	size_t i;

	for (i = 0; i < obj->n; i++) {
		for (k = keys; *k; k++)
			if (strlen(*k) == obj->u.m[i].kn &&
			    !memcmp(*k, obj->u.m[i].k, obj->u.m[i].kn))
				break;
		if (!*k)
			return bad("unknown field %s", shown(where,
			    obj->u.m[i].k, obj->u.m[i].kn, name));
	}
	return 0;
}

/*
 * string checks that field key of obj (named "where" + key in errors) is
 * a string when present, and present and non-empty when required.
 */
static int
string(const struct jval *obj, const char *key, const char *where,
    int required)
{
	const struct jval *v = json_get(obj, key);

	if (!v)
		return required ? bad("%s%s is missing", where, key) : 0;
	if (v->t != J_STRING)
		return bad("%s%s is not a string", where, key);
	if (required && v->n == 0)
		return bad("%s%s is empty", where, key);
	return 0;
}

/* payload_check: the payload keys each kind takes */
static int
payload_check(const char *kind, const struct jval *pl)
{
	static const char *const none[] = { NULL };
	static const char *const chat[] = { "prompt", NULL };
	static const char *const review[] = { "target_type", "target_id",
		NULL };
	const struct jval *tt;

	if (!strcmp(kind, "chat"))
		return only(pl, chat, "payload.") < 0 ||
		    string(pl, "prompt", "payload.", 1) < 0 ? -1 : 0;
	if (strcmp(kind, "approve") && strcmp(kind, "deny"))
		return only(pl, none, "payload.");
	if (only(pl, review, "payload.") < 0 ||
	    string(pl, "target_type", "payload.", 0) < 0 ||
	    string(pl, "target_id", "payload.", 1) < 0)
		return -1;
	tt = json_get(pl, "target_type");
	if (tt && !json_is_str(tt, "action-set"))
		return bad("payload.target_type must be 'action-set'");
	return 0;
}

int
command_check(struct arena *a, struct jval *cmd, const char *sid,
    char hash[HW_HASH_LEN + 1])
{
	static const char *const keys[] = { "schema_version", "command_id",
		"session_id", "kind", "actor_id", "created_at", "payload",
		NULL };
	const char *const *k;
	struct jval *v;
	struct buf scratch;
	char name[80];

	if (!cmd || cmd->t != J_OBJECT)
		return bad("not a JSON object");
	if (string(cmd, "schema_version", "", 1) < 0)
		return -1;
	v = json_get(cmd, "schema_version");
	if (!migrate(a, "session_command", cmd))
		return bad("unsupported schema_version %s", shown("", v->u.s,
		    v->n, name));
	if (only(cmd, keys, "") < 0 || string(cmd, "command_id", "", 1) < 0 ||
	    string(cmd, "session_id", "", 1) < 0 ||
	    string(cmd, "kind", "", 1) < 0 ||
	    string(cmd, "actor_id", "", 0) < 0 ||
	    string(cmd, "created_at", "", 1) < 0)
		return -1;
	if (!json_is_str(json_get(cmd, "session_id"), sid))
		return bad("session_id does not name this session");
	v = json_get(cmd, "kind");
	for (k = command_kinds; *k; k++)
		if (json_is_str(v, *k))
			break;
	if (!*k)
		return bad("unknown command kind %s", shown("", v->u.s, v->n,
		    name));
	if (!json_get(cmd, "actor_id"))
		json_set(a, cmd, "actor_id", json_str(a, "human"));
	if (!json_get(cmd, "payload"))
		json_set(a, cmd, "payload", json_obj(a));
	if (json_get(cmd, "payload")->t != J_OBJECT)
		return bad("payload is not an object");
	if (payload_check(*k, json_get(cmd, "payload")) < 0)
		return -1;
	buf_init(&scratch);
	json_hash(cmd, &scratch, hash);
	buf_release(&scratch);
	return 0;
}

static char *
receipt_path(struct session *s, const struct jval *cid)
{
	char hex[SHA256_HEX + 1], name[SHA256_HEX + 8];

	sha256_hex(cid->u.s, cid->n, hex);
	snprintf(name, sizeof name, "%s.json", hex);
	return path_join(s->commands, name);
}

int
receipt_check(const struct jval *v, const char *sid, const struct jval *cid)
{
	const char *state;
	int64_t first, last;

	state = json_get_str(v, "state");
	if (!json_is_str(json_get(v, "session_id"), sid) ||
	    (cid && !json_equal(json_get(v, "command_id"), cid)) ||
	    !json_get_str(v, "command_hash") || !state ||
	    json_get_int(v, "first_sequence", &first) < 0 || first < 0 ||
	    (strcmp(state, "accepted") == 0 ?
	    json_get(v, "last_sequence") && json_get(v,
	    "last_sequence")->t != J_NULL :
	    strcmp(state, "completed") != 0 ||
	    json_get_int(v, "last_sequence", &last) < 0 || last < first))
		return -1;
	return 0;
}

/* receipt_read loads and validates a receipt; *r NULL when absent. */
static int
receipt_read(struct session *s, struct arena *a, const char *path,
    const struct jval *cid, struct jval **r)
{
	struct jval *v;

	*r = NULL;
	if (!(v = read_json_file(path, RECEIPT_MAX, a)))
		return errno == ENOENT ? 0 : -1;
	if (!(v = migrate(a, "session_command_receipt", v)))
		return hw_err_set(HW_EXIT_DATA, "'%s': %s", path,
		    hw_err_msg());
	if (receipt_check(v, s->id, cid) < 0)
		return hw_err_set(HW_EXIT_DATA, "receipt '%s' is invalid",
		    path);
	*r = v;
	return 0;
}

static int
receipt_write(struct session *s, const char *path, const struct jval *cid,
    const char *hash, int64_t first, int64_t last)
{
	struct arena a;
	struct jval *r;
	int rc;

	arena_init(&a);
	r = json_obj(&a);
	json_set(&a, r, "schema_version", json_str(&a,
	    current_version("session_command_receipt")));
	json_set(&a, r, "session_id", json_str(&a, s->id));
	json_set(&a, r, "command_id", json_copy(&a, cid));
	json_set(&a, r, "command_hash", json_str(&a, hash));
	json_set(&a, r, "state", json_str(&a, last < 0 ? "accepted" :
	    "completed"));
	json_set(&a, r, "first_sequence", json_int(&a, first));
	json_set(&a, r, "last_sequence", last < 0 ? json_new(&a, J_NULL) :
	    json_int(&a, last));
	rc = atomic_write_json(path, r);
	arena_release(&a);
	return rc;
}

int
receipts_interrupted(struct session *s)
{
	struct arena a;
	struct dirent *e;
	struct jval *r;
	DIR *d;
	char *p;
	int rc = 0;

	if (!(d = opendir(s->commands)))
		return errno == ENOENT ? 0 : hw_err_sys("cannot open '%s'",
		    s->commands);
	arena_init(&a);
	while (rc == 0 && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n != SHA256_HEX + 5 || strcmp(e->d_name + SHA256_HEX,
		    ".json"))
			continue;
		p = path_join(s->commands, e->d_name);
		if (receipt_read(s, &a, p, NULL, &r) < 0)
			rc = -1;
		else if (r && json_is_str(json_get(r, "state"), "accepted"))
			rc = hw_err_set(HW_EXIT_BUSY, "session '%s' has an "
			    "interrupted command '%.200s': it was accepted but "
			    "never completed, and will not run again; continue "
			    "in a new session", s->id,
			    json_get_str(r, "command_id"));
		free(p);
		arena_clear(&a);
	}
	closedir(d);
	arena_release(&a);
	return rc;
}

/* A pass over the verified events that finds a command's events. */
struct find {
	const struct jval *cid;
	const char *hash;
	int64_t first, last;	/* range wanted; last -1: until next command */
	int64_t found, seen;
	int conflict;
	struct buf *out;
};

static int
find_fn(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	struct find *f = ctx;
	const struct jval *p = json_get(ev, "payload");
	int64_t seq;
	int isrecv = json_is_str(json_get(ev, "kind"), "command.received");

	json_get_int(ev, "sequence", &seq);
	if (f->first < 0 && isrecv && json_equal(json_get(p, "command_id"),
	    f->cid)) {
		f->first = seq;
		f->conflict = !json_is_str(json_get(p, "command_hash"),
		    f->hash);
	} else if (f->first >= 0 && f->last < 0 && seq > f->first && isrecv)
		f->last = seq - 1;
	if (f->first >= 0 && seq >= f->first && (f->last < 0 ||
	    seq <= f->last)) {
		if (seq > f->first && isrecv)
			f->conflict = 3;	/* runs into the next command */
		else if (seq == f->first && (!isrecv ||
		    !json_equal(json_get(p, "command_id"), f->cid) ||
		    !json_is_str(json_get(p, "command_hash"), f->hash)))
			f->conflict = 2;
		buf_add(f->out, line, n);
		buf_addc(f->out, '\n');
		f->found = seq;
		f->seen++;
	}
	return 0;
}

static int
conflict(const struct jval *cid)
{
	return hw_err_set(HW_EXIT_FAIL, "command '%.200s' was already "
	    "submitted with different content", cid->u.s);
}

static int
replay_receipt(struct session *s, struct jval *r, const struct jval *cid,
    const char *hash, struct buf *ack)
{
	struct find f = { cid, hash, 0, 0, -1, 0, 0, ack };
	size_t mark = ack->len;

	if (!json_is_str(json_get(r, "command_hash"), hash))
		return conflict(cid);
	if (json_is_str(json_get(r, "state"), "accepted"))
		return hw_err_set(HW_EXIT_BUSY, "command '%.200s' was "
		    "interrupted after it was accepted; it will not run "
		    "again", cid->u.s);
	json_get_int(r, "first_sequence", &f.first);
	json_get_int(r, "last_sequence", &f.last);
	if (logs_verify_full(s, find_fn, &f) < 0)
		return -1;
	if (f.seen != f.last - f.first + 1 || f.conflict) {
		ack->len = mark;
		return hw_err_set(HW_EXIT_DATA, "receipt of command '%.200s' "
		    "does not match the persisted events", cid->u.s);
	}
	return 0;
}

static int
run_new(struct session *s, struct arena *a, struct jval *cmd,
    const char *path, const char *hash, struct command_io *io)
{
	struct jval *cid = json_get(cmd, "command_id"), *d, *p, **more, **all;
	struct buf ack;
	int64_t first = s->count;
	int n = 0, rc = -1;

	if (receipt_write(s, path, cid, hash, first, -1) < 0)
		return -1;
	d = json_obj(a);
	p = json_obj(a);
	json_set(a, p, "actor_id", json_copy(a, json_get(cmd, "actor_id")));
	json_set(a, p, "command_id", json_copy(a, cid));
	json_set(a, p, "command_hash", json_str(a, hash));
	json_set(a, p, "command_kind", json_copy(a, json_get(cmd, "kind")));
	json_set(a, d, "kind", json_str(a, "command.received"));
	json_set(a, d, "payload", p);
	buf_init(&ack);
	/* what the command records commits with its command.received */
	if (io->first && (n = io->first(io->ctx, &more)) < 0)
		goto out;
	all = arena_alloc(a, (size_t)(n + 1) * sizeof *all);
	all[0] = d;
	if (n > 0)
		memcpy(all + 1, more, (size_t)n * sizeof *all);
	if (session_commit(s, all, NULL, (size_t)n + 1, &ack) < 0)
		goto out;
	session_received_add(s, cid->u.s);
	if (io->flush(io->ctx, &ack) < 0)
		goto out;
	while ((n = io->more(io->ctx, &more)) > 0) {
		buf_clear(&ack);
		if (session_commit(s, more, NULL, (size_t)n, &ack) < 0 ||
		    io->flush(io->ctx, &ack) < 0)
			goto out;
	}
	if (n < 0)
		goto out;
	rc = receipt_write(s, path, cid, hash, first, s->count - 1);
out:
	buf_release(&ack);
	return rc;
}

int
command_run(struct session *s, struct arena *a, struct jval *cmd,
    struct command_io *io, int *replayed)
{
	struct jval *cid = json_get(cmd, "command_id"), *r;
	char hash[HW_HASH_LEN + 1], *path;
	struct buf ack;
	int rc = -1;

	*replayed = 0;
	if (command_check(a, cmd, s->id, hash) < 0)
		return -1;
	if (ensure_dir(s->commands) < 0)
		return -1;
	path = receipt_path(s, cid);
	buf_init(&ack);
	if (receipt_read(s, a, path, cid, &r) < 0)
		goto out;
	if (r) {
		if ((rc = replay_receipt(s, r, cid, hash, &ack)) == 0) {
			*replayed = 1;
			rc = io->flush(io->ctx, &ack);
		}
		goto out;
	}
	if (receipts_interrupted(s) < 0)
		goto out;
	/* legacy: a command.received without a receipt; the lease's own
	   reading of the log says whether there is one to look for */
	if (!s->received_known || smap_get(&s->received, cid->u.s,
	    strlen(cid->u.s))) {
		struct find f = { cid, hash, -1, -1, -1, 0, 0, &ack };

		struct logpos h;
		int used = 0;

		/*
		 * Where the head's filter of command ids does not have this
		 * one, only the tail after the head is searched.  History
		 * found goes out verified whole.
		 */
		if (head_load(s, &h) == 0 && !bloom_has(&h.commands, cid) &&
		    logs_verify_since(s, &h, &used, find_fn, &f, NULL) < 0)
			goto out;
		if (!used || f.first >= 0) {
			f = (struct find){ cid, hash, -1, -1, -1, 0, 0, &ack };
			buf_clear(&ack);
			if (logs_verify_full(s, find_fn, &f) < 0)
				goto out;
		}
		if (f.first >= 0) {
			if (f.conflict) {
				conflict(cid);
				goto out;
			}
			*replayed = 1;
			if (receipt_write(s, path, cid, hash, f.first,
			    f.found) < 0)
				goto out;
			rc = io->flush(io->ctx, &ack);
			goto out;
		}
	}
	rc = run_new(s, a, cmd, path, hash, io);
out:
	buf_release(&ack);
	free(path);
	return rc;
}
