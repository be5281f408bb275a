/* checkpoint.c - signed audit checkpoints: statement, bundle, note, checks */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"

#define STATEMENT_SCHEMA "heartwood.audit-checkpoint-statement.v1"
#define SIGNATURE_SCHEMA "heartwood.audit-checkpoint-signature.v1"
#define CHECKPOINT_SCHEMA "heartwood.audit-checkpoint.v2"
#define RETENTION_SCHEMA "heartwood.audit-retention.v1"
#define CHECKPOINT_MAX (64 * 1024)
#define NOTE_NAMES 16		/* signatures a note verifier must accept */

/* valid_date: YYYY-MM-DD naming a real day */
static int
valid_date(const char *s)
{
	struct tm tm = { 0 };
	char back[11];
	char *end;

	if (strlen(s) != 10 || !(end = strptime(s, "%Y-%m-%d", &tm)) || *end)
		return 0;
	tm.tm_isdst = -1;
	if (timegm(&tm) == (time_t)-1)
		return 0;
	strftime(back, sizeof back, "%Y-%m-%d", &tm);
	return strcmp(back, s) == 0;
}

struct jval *
checkpoint_statement(struct arena *a, const struct audit_sum *m,
    const struct checkpoint_opts *o)
{
	struct jval *st = json_obj(a), *ret = json_obj(a);
	char now[32];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
	json_add(a, ret, "policy_id", json_str(a, o->policy_id));
	json_add(a, ret, "retain_until", json_str(a, o->retain_until));
	json_add(a, ret, "schema_version", json_str(a, RETENTION_SCHEMA));
	json_add(a, st, "audit_content_sha256", json_str(a, m->content_sha));
	json_add(a, st, "audit_event_count", json_int(a, m->count));
	json_add(a, st, "audit_filename", json_str(a, "audit.jsonl"));
	json_add(a, st, "audit_schema_version", json_str(a, AUDIT_SCHEMA));
	json_add(a, st, "audit_size_bytes", json_int(a, (int64_t)m->size));
	json_add(a, st, "created_at", json_str(a, now));
	json_add(a, st, "deployment_id", json_str(a, o->deployment_id));
	json_add(a, st, "retention", ret);
	json_add(a, st, "schema_version", json_str(a, STATEMENT_SCHEMA));
	json_add(a, st, "session_id", json_str(a, m->session_id));
	json_add(a, st, "terminal_event_hash", m->count ?
	    json_str(a, m->terminal) : json_new(a, J_NULL));
	return st;
}

/* signed_bytes: domain string, NUL, canonical {algorithm..statement} */
static void
signed_bytes(struct arena *a, const struct jval *sig,
    const struct jval *statement, struct buf *out)
{
	static const char *const keys[] = { "algorithm", "key_id",
		"key_version", "public_key_sha256", "signer_id", NULL };
	struct jval *o = json_obj(a);
	const char *const *k;

	for (k = keys; *k; k++)
		json_add(a, o, *k, json_get(sig, *k));
	json_add(a, o, "statement", (struct jval *)statement);
	buf_clear(out);
	buf_add(out, SIGNATURE_SCHEMA, sizeof SIGNATURE_SCHEMA);  /* + NUL */
	json_canon(out, o);
}

struct jval *
checkpoint_sign(struct arena *a, struct jval *statement,
    const struct signkey *k, const struct checkpoint_opts *o)
{
	struct jval *sig = json_obj(a), *cp = json_obj(a);
	struct buf msg, b64;
	unsigned char raw[80];
	size_t n;

	json_add(a, sig, "algorithm", json_str(a, sig_alg_name(k->alg)));
	json_add(a, sig, "key_id", json_str(a, o->key_id));
	json_add(a, sig, "key_version", json_str(a, o->key_version));
	json_add(a, sig, "public_key_sha256", json_str(a, k->fingerprint));
	json_add(a, sig, "schema_version", json_str(a, SIGNATURE_SCHEMA));
	json_add(a, sig, "signer_id", json_str(a, o->signer_id));
	buf_init(&msg);
	buf_init(&b64);
	signed_bytes(a, sig, statement, &msg);
	if (key_sign(k, msg.p, msg.len, raw, &n) < 0) {
		cp = NULL;
		goto out;
	}
	b64_encode(&b64, raw, n);
	json_add(a, sig, "value", json_strn(a, b64.p, b64.len));
	json_add(a, cp, "schema_version", json_str(a, CHECKPOINT_SCHEMA));
	json_add(a, cp, "signature", sig);
	json_add(a, cp, "statement", statement);
out:
	buf_release(&msg);
	buf_release(&b64);
	return cp;
}

void
checkpoint_note_body(const struct audit_sum *m, const char *deployment,
    struct buf *b)
{
	buf_printf(b, "heartwood/%s/%s\n%lld\n", deployment, m->session_id,
	    (long long)m->count);
	b64_encode(b, m->root, 32);
	buf_addc(b, '\n');
}

int
checkpoint_args_ok(const struct checkpoint_opts *o)
{
	char today[11];
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(today, sizeof today, "%Y-%m-%d", &tm);
	if (!valid_session_id(o->deployment_id))
		return hw_err_set(HW_EXIT_USAGE, "invalid deployment id '%s'",
		    o->deployment_id);
	if (!valid_session_id(o->policy_id))
		return hw_err_set(HW_EXIT_USAGE, "invalid retention policy id "
		    "'%s'", o->policy_id);
	if (!valid_date(o->retain_until) || strcmp(o->retain_until, today) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid retain-until '%s': "
		    "expected a date YYYY-MM-DD no earlier than today",
		    o->retain_until);
	if (!valid_session_id(o->signer_id) || !key_text(o->key_id) ||
	    !key_text(o->key_version))
		return hw_err_set(HW_EXIT_USAGE, "invalid signer id, key id or "
		    "key version");
	return 0;
}

/* ---- the bundle: staged, then renamed into place, never over anything */

static int
write_in(int dirfd, const char *name, const void *p, size_t n, int srcfd)
{
	char chunk[65536];
	ssize_t r = 0;
	int fd, rc = 0;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return hw_err_sys("cannot create '%s'", name);
	fault_point("bundle-write");
	if (p && write_all(fd, p, n, name) < 0)
		rc = -1;
	while (rc == 0 && srcfd >= 0 && (r = read(srcfd, chunk, sizeof chunk)) > 0)
		rc = write_all(fd, chunk, (size_t)r, name);
	if (rc == 0 && (r < 0 || fsync(fd) < 0))
		rc = hw_err_sys("cannot write '%s'", name);
	close(fd);
	return rc;
}

static void
remove_staging(const char *dir)
{
	char *a = path_join(dir, "audit.jsonl"), *c = path_join(dir,
	    "checkpoint.json");

	unlink(a);
	unlink(c);
	rmdir(dir);
	free(a);
	free(c);
}

int
checkpoint_publish(const char *output, const char *auditpath,
    const struct jval *cp)
{
	char *t1 = xstrdup(output), *t2 = xstrdup(output), *stage;
	const char *parent = dirname(t1), *name = basename(t2);
	struct buf b;
	int dfd = -1, src = -1, rc = -1;

	/*
	 * No lock: of concurrent publishers each stages its own directory
	 * and renameat2's RENAME_NOREPLACE lets exactly one in.
	 */
	buf_init(&b);
	stage = xasprintf("%s/.%s-XXXXXX", parent, name);
	if (access(output, F_OK) == 0 || errno != ENOENT) {
		hw_err_set(HW_EXIT_FAIL, "refusing to replace existing '%s'",
		    output);
		goto out;
	}
	if (!mkdtemp(stage)) {
		hw_err_sys("cannot create a staging directory for '%s'",
		    output);
		goto out;
	}
	json_canon(&b, cp);
	buf_addc(&b, '\n');
	if ((dfd = open(stage, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    (src = open(auditpath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		hw_err_sys("cannot open '%s'", dfd < 0 ? stage : auditpath);
		goto fail;
	}
	if (write_in(dfd, "audit.jsonl", NULL, 0, src) < 0 ||
	    write_in(dfd, "checkpoint.json", b.p, b.len, -1) < 0 ||
	    (fault_point("bundle-fsync"), fsync(dfd) < 0))
		goto fail;
	fault_point("bundle-rename");
	if (renameat2(AT_FDCWD, stage, AT_FDCWD, output, RENAME_NOREPLACE) < 0) {
		if (errno == EEXIST)
			hw_err_set(HW_EXIT_FAIL, "refusing to replace existing "
			    "'%s'", output);
		else
			hw_err_sys("cannot publish '%s'", output);
		goto fail;
	}
	if (chmod(output, 0700) < 0 || fsync_dir(parent) < 0)
		goto out;
	rc = 0;
	goto out;
fail:
	remove_staging(stage);
out:
	if (src >= 0)
		close(src);
	if (dfd >= 0)
		close(dfd);
	buf_release(&b);
	free(stage);
	free(t1);
	free(t2);
	return rc;
}

/* ---- verify-checkpoint: the checks of the reference, in its order ---- */

static int
bad(const char *what)
{
	return hw_err_set(HW_EXIT_DATA, "checkpoint is invalid: %s", what);
}

static int
check_entries(const char *dir)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int n = 0, other = 0;

	if (lstat(dir, &st) < 0)
		return errno == ENOENT ? hw_err_set(HW_EXIT_NOINPUT,
		    "no checkpoint bundle '%s'", dir) : hw_err_sys(
		    "cannot stat '%s'", dir);
	if (!S_ISDIR(st.st_mode))
		return bad("the bundle is not a directory (or is a symbolic "
		    "link)");
	if (!(d = opendir(dir)))
		return hw_err_sys("cannot open '%s'", dir);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, "audit.jsonl") ||
		    !strcmp(e->d_name, "checkpoint.json"))
			n++;
		else
			other++;
	}
	closedir(d);
	if (n != 2 || other)
		return bad("the bundle must hold exactly audit.jsonl and "
		    "checkpoint.json");
	return 0;
}

static int
check_statement(const struct jval *st)
{
	static const char *const keys[] = { "audit_content_sha256",
		"audit_event_count", "audit_filename", "audit_schema_version",
		"audit_size_bytes", "created_at", "deployment_id", "retention",
		"schema_version", "session_id", "terminal_event_hash", NULL };
	static const char *const rkeys[] = { "policy_id", "retain_until",
		"schema_version", NULL };
	const struct jval *ret = json_get(st, "retention"), *th;
	const char *created, *until;
	int64_t count, size;

	if (json_keys_exact(st, keys) < 0 ||
	    !json_is_str(json_get(st, "schema_version"), STATEMENT_SCHEMA))
		return bad("statement fields or version");
	if (!json_get_str(st, "deployment_id") ||
	    !valid_session_id(json_get_str(st, "deployment_id")) ||
	    !json_get_str(st, "session_id") ||
	    !valid_session_id(json_get_str(st, "session_id")))
		return bad("statement deployment_id or session_id");
	created = json_get_str(st, "created_at");
	if (!created || strlen(created) < 20 || !valid_date((char[11]){
	    created[0], created[1], created[2], created[3], created[4],
	    created[5], created[6], created[7], created[8], created[9], 0 }) ||
	    created[10] != 'T' || !(strchr(created + 10, 'Z') ||
	    strchr(created + 10, '+') || strchr(created + 10, '-')))
		return bad("statement created_at");
	if (!json_is_str(json_get(st, "audit_filename"), "audit.jsonl") ||
	    !json_is_str(json_get(st, "audit_schema_version"), AUDIT_SCHEMA))
		return bad("statement audit_filename or audit_schema_version");
	if (json_get_int(st, "audit_event_count", &count) < 0 || count < 0 ||
	    json_get_int(st, "audit_size_bytes", &size) < 0 || size < 0)
		return bad("statement counts");
	th = json_get(st, "terminal_event_hash");
	if (count == 0 ? th->t != J_NULL : !(th->t == J_STRING &&
	    th->n == HW_HASH_LEN && !strncmp(th->u.s, "sha256:", 7)))
		return bad("statement terminal_event_hash");
	if (json_keys_exact(ret, rkeys) < 0 ||
	    !json_is_str(json_get(ret, "schema_version"), RETENTION_SCHEMA) ||
	    !json_get_str(ret, "policy_id") ||
	    !valid_session_id(json_get_str(ret, "policy_id")))
		return bad("statement retention");
	until = json_get_str(ret, "retain_until");
	if (!until || !valid_date(until) || strncmp(until, created, 10) < 0)
		return bad("statement retain_until (a date no earlier than "
		    "created_at)");
	return 0;
}

static int
check_signature_fields(const struct jval *sig, struct buf *raw)
{
	static const char *const keys[] = { "algorithm", "key_id",
		"key_version", "public_key_sha256", "schema_version",
		"signer_id", "value", NULL };
	const char *alg = json_get_str(sig, "algorithm");
	const char *fp = json_get_str(sig, "public_key_sha256");
	const char *v = json_get_str(sig, "value");

	if (json_keys_exact(sig, keys) < 0 ||
	    !json_is_str(json_get(sig, "schema_version"), SIGNATURE_SCHEMA))
		return bad("signature fields or version");
	if (!alg || (strcmp(alg, "ed25519") && strcmp(alg,
	    "ecdsa-p256-sha256")))
		return bad("signature algorithm");
	if (!json_get_str(sig, "signer_id") ||
	    !valid_session_id(json_get_str(sig, "signer_id")) ||
	    !json_get_str(sig, "key_id") ||
	    !key_text(json_get_str(sig, "key_id")) ||
	    !json_get_str(sig, "key_version") ||
	    !key_text(json_get_str(sig, "key_version")))
		return bad("signature signer_id, key_id or key_version");
	if (!fp || strlen(fp) != HW_HASH_LEN || strncmp(fp, "sha256:", 7))
		return bad("signature public_key_sha256");
	if (!v || b64_decode_canonical(v, strlen(v), raw) < 0 ||
	    raw->len < 1 || raw->len > 1024 ||
	    (!strcmp(alg, "ed25519") && raw->len != 64))
		return bad("signature value is not canonical base64 of a "
		    "signature");
	return 0;
}

/* raw_canonical: the file's bytes hash and size as the canonical export's */
static int
raw_matches(const char *path, const struct audit_sum *m)
{
	struct sha256 h;
	unsigned char d[32];
	char hex[SHA256_HEX + 1], chunk[65536];
	uint64_t size = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return hw_err_sys("cannot open '%s'", path);
	sha256_init(&h);
	while ((r = read(fd, chunk, sizeof chunk)) > 0) {
		sha256_update(&h, chunk, (size_t)r);
		size += (uint64_t)r;
	}
	close(fd);
	sha256_final(&h, d);
	sha256_release(&h);
	hex_encode(d, 32, hex);
	if (r < 0)
		return hw_err_sys("cannot read '%s'", path);
	return size == m->size && !strcmp(hex, m->content_sha + 7) ? 0 :
	    bad("audit.jsonl is not in canonical form");
}

static int
matches_export(const struct jval *st, const struct audit_sum *m)
{
	int64_t count, size;

	json_get_int(st, "audit_event_count", &count);
	json_get_int(st, "audit_size_bytes", &size);
	if (m->count && !json_is_str(json_get(st, "session_id"),
	    m->session_id))
		return bad("statement session_id does not match audit.jsonl");
	if (count != m->count)
		return bad("statement audit_event_count does not match "
		    "audit.jsonl");
	if (m->count && !json_is_str(json_get(st, "terminal_event_hash"),
	    m->terminal))
		return bad("statement terminal_event_hash does not match "
		    "audit.jsonl");
	if (!json_is_str(json_get(st, "audit_content_sha256"),
	    m->content_sha))
		return bad("statement audit_content_sha256 does not match "
		    "audit.jsonl");
	if ((uint64_t)size != m->size)
		return bad("statement audit_size_bytes does not match "
		    "audit.jsonl");
	return 0;
}

int
checkpoint_verify(const char *dir, const char *pubkey, struct arena *a,
    struct audit_sum *m, struct jval **out)
{
	char *cpath = path_join(dir, "checkpoint.json");
	char *apath = path_join(dir, "audit.jsonl");
	struct jval *cp, *st, *sig;
	struct buf raw, canon, msg;
	struct signkey k;
	char err[128];
	int fd = -1, rc = -1;

	buf_init(&raw);
	buf_init(&canon);
	buf_init(&msg);
	memset(&k, 0, sizeof k);
	/* 1, 2: exactly two entries; parse and validate checkpoint.json */
	if (check_entries(dir) < 0)
		goto out;
	if (read_file(cpath, CHECKPOINT_MAX, &raw) < 0)
		goto out;
	/* one read: the bytes are parsed here and compared in step 3 */
	if (!(cp = json_parse(a, raw.p, raw.len, err, sizeof err)) ||
	    cp->t != J_OBJECT) {
		bad("checkpoint.json is not a JSON object");
		goto out;
	}
	st = json_get(cp, "statement");
	sig = json_get(cp, "signature");
	if (!json_is_str(json_get(cp, "schema_version"), CHECKPOINT_SCHEMA) ||
	    cp->n != 3 || !st || st->t != J_OBJECT || !sig ||
	    sig->t != J_OBJECT) {
		bad("checkpoint.json is not a heartwood.audit-checkpoint.v2");
		goto out;
	}
	if (check_statement(st) < 0 || check_signature_fields(sig, &msg) < 0)
		goto out;
	/* 3: checkpoint.json is canonical */
	json_canon(&canon, cp);
	buf_addc(&canon, '\n');
	if (canon.len != raw.len || memcmp(canon.p, raw.p, raw.len)) {
		bad("checkpoint.json is not in canonical form");
		goto out;
	}
	/* 4: the audit file verifies and is canonical */
	if ((fd = open(apath, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		hw_err_sys("cannot open '%s'", apath);
		goto out;
	}
	if (audit_verify_fd(fd, "audit.jsonl", m) < 0 ||
	    raw_matches(apath, m) < 0)
		goto out;
	/* 5: the statement describes this export */
	if (matches_export(st, m) < 0)
		goto out;
	/* 6, 7, 8: the trusted key, its fingerprint, its algorithm */
	if (key_load_public(pubkey, &k) < 0)
		goto out;
	if (!json_is_str(json_get(sig, "public_key_sha256"), k.fingerprint)) {
		bad("the public key's fingerprint is not public_key_sha256");
		goto out;
	}
	if (!json_is_str(json_get(sig, "algorithm"), sig_alg_name(k.alg))) {
		bad("the signature algorithm does not match the key");
		goto out;
	}
	/* 9: the signature */
	b64_decode_canonical(json_get_str(sig, "value"),
	    strlen(json_get_str(sig, "value")), &raw);
	signed_bytes(a, sig, st, &msg);
	if (key_verify(&k, msg.p, msg.len, (unsigned char *)raw.p,
	    raw.len) < 0) {
		bad("the signature does not verify");
		goto out;
	}
	*out = cp;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	key_release(&k);
	buf_release(&raw);
	buf_release(&canon);
	buf_release(&msg);
	free(cpath);
	free(apath);
	return rc;
}

/* ---- the same checks, for the signer client and the local signer ---- */

int
checkpoint_statement_check(const struct jval *st)
{
	if (!st || st->t != J_OBJECT)
		return bad("the statement is not an object");
	return check_statement(st);
}

int
checkpoint_signature_check(struct arena *a, const struct jval *sig,
    const struct jval *st, const struct signkey *k)
{
	struct buf raw, msg;
	int rc = -1;

	buf_init(&raw);
	buf_init(&msg);
	if (!sig || sig->t != J_OBJECT) {
		bad("the signature is not an object");
		goto out;
	}
	if (check_signature_fields(sig, &raw) < 0)
		goto out;
	if (!json_is_str(json_get(sig, "public_key_sha256"), k->fingerprint)) {
		bad("the public key's fingerprint is not public_key_sha256");
		goto out;
	}
	if (!json_is_str(json_get(sig, "algorithm"), sig_alg_name(k->alg))) {
		bad("the signature algorithm does not match the key");
		goto out;
	}
	signed_bytes(a, sig, st, &msg);
	if (key_verify(k, msg.p, msg.len, (unsigned char *)raw.p,
	    raw.len) < 0) {
		bad("the signature does not verify");
		goto out;
	}
	rc = 0;
out:
	buf_release(&raw);
	buf_release(&msg);
	return rc;
}

/* ---- the tree a checkpoint vouches for: its bundle or its signed note */

/* note_names collects the distinct signer names of a note's signatures */
static size_t
note_names(const char *note, size_t n, char names[][129], size_t max)
{
	const char *p, *end = note + n, *nl, *sp;
	size_t i, k = 0, len;

	for (i = n; i >= 2; i--)
		if (note[i - 1] == '\n' && note[i - 2] == '\n')
			break;
	for (p = note + i; i >= 2 && p < end && k < max; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			break;
		if (nl - p < 5 || memcmp(p, "\xe2\x80\x94 ", 4) ||
		    !(sp = memchr(p + 4, ' ', (size_t)(nl - p - 4))))
			continue;
		len = (size_t)(sp - p - 4);
		if (len == 0 || len > 128)
			continue;
		memcpy(names[k], p + 4, len);
		names[k][len] = '\0';
		for (i = 0; i < k && strcmp(names[i], names[k]); i++)
			;
		k += i == k;
	}
	return k;
}

/* note_body_tree parses a tlog-checkpoint body: origin, size, root */
static int
note_body_tree(const char *body, struct tree_head *h)
{
	const char *l2 = strchr(body, '\n'), *l3, *end, *sid;
	struct buf raw;
	char *stop;
	int rc = -1;

	buf_init(&raw);
	if (!l2 || strncmp(body, "heartwood/", 10) || !(l3 = strchr(++l2,
	    '\n')) || !(end = strchr(++l3, '\n')))
		goto out;
	sid = memrchr(body, '/', (size_t)(l2 - 1 - body)) + 1;
	if ((size_t)(l2 - 1 - sid) >= sizeof h->session_id || l2 - 1 == sid)
		goto out;
	memcpy(h->session_id, sid, (size_t)(l2 - 1 - sid));
	h->session_id[l2 - 1 - sid] = '\0';
	if (!valid_session_id(h->session_id) || *l2 < '0' || *l2 > '9' ||
	    (*l2 == '0' && l3 - l2 != 2))
		goto out;
	h->size = strtoll(l2, &stop, 10);
	if (stop != l3 - 1 || h->size < 0 ||
	    b64_decode_canonical(l3, (size_t)(end - l3), &raw) < 0 ||
	    raw.len != 32)
		goto out;
	memcpy(h->root, raw.p, 32);
	rc = 0;
out:
	buf_release(&raw);
	return rc < 0 ? hw_err_set(HW_EXIT_DATA, "malformed checkpoint note: "
	    "expected heartwood/DEPLOYMENT/SESSION, a size and a base64 "
	    "root") : 0;
}

/* note_tree verifies a signed note with an Ed25519 key and reads it */
static int
note_tree(const char *path, const char *pubkey, const char *signer,
    struct tree_head *h)
{
	char names[NOTE_NAMES][129], *body = NULL;
	struct signkey k;
	struct buf note;
	size_t n, i;
	int rc = -1;

	buf_init(&note);
	memset(&k, 0, sizeof k);
	if (read_file(path, CHECKPOINT_MAX, &note) < 0 ||
	    key_load_public(pubkey, &k) < 0)
		goto out;
	if (k.alg != SIG_ED25519) {
		hw_err_set(HW_EXIT_DATA, "signed note '%s': signed notes are "
		    "Ed25519, and the key is not", path);
		goto out;
	}
	if (signer) {
		rc = note_verify(signer, k.ed_pk, note.p, note.len, &body);
	} else {
		/* the key is the anchor; the name only labels its lines */
		n = note_names(note.p, note.len, names, NOTE_NAMES);
		rc = note_verify(n ? names[0] : "-", k.ed_pk, note.p,
		    note.len, &body);
		for (i = 1; rc < 0 && i < n; i++)
			rc = note_verify(names[i], k.ed_pk, note.p, note.len,
			    &body);
	}
	if (rc == 0)
		rc = note_body_tree(body, h);
	if (rc < 0)
		hw_err_set(HW_EXIT_DATA, "signed note '%s': %s", path,
		    hw_err_msg());
out:
	free(body);
	key_release(&k);
	buf_release(&note);
	return rc;
}

int
tree_head_load(const char *path, const char *pubkey,
    const struct signer_profile *p, struct tree_head *h)
{
	struct audit_sum m;
	struct arena a;
	struct jval *cp;
	struct stat st;
	int rc;

	memset(h, 0, sizeof *h);
	if (stat(path, &st) < 0)
		return errno == ENOENT ? hw_err_set(HW_EXIT_NOINPUT, "no "
		    "checkpoint '%s'", path) : hw_err_sys("cannot stat '%s'",
		    path);
	if (p)
		pubkey = p->trusted_public_key;
	if (!S_ISDIR(st.st_mode))
		return note_tree(path, pubkey, p ? p->signer_id : NULL, h);
	audit_sum_init(&m, 0);
	arena_init(&a);
	rc = checkpoint_verify(path, pubkey, &a, &m, &cp);
	if (rc == 0 && p)
		rc = signer_identity_check(p, json_get(cp, "signature"));
	if (rc == 0) {
		h->size = m.count;
		memcpy(h->root, m.root, sizeof h->root);
		snprintf(h->session_id, sizeof h->session_id, "%s",
		    json_get_str(json_get(cp, "statement"), "session_id"));
	}
	arena_release(&a);
	audit_sum_release(&m);
	return rc;
}
