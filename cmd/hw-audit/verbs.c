/*
 * verbs.c - the hw-audit verbs: each runs one operation end to end
 * (open the session, take the lease, verify, sign ...) and writes its
 * result line to a stream
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

/* A checkpoint being made: the options and the identity it signs with. */
struct cp_job {
	const struct audit_cmd *c;
	struct checkpoint_opts cp;
	struct signer_profile *signer;	/* signing through a registry */
};

void
audit_cmd_init(struct audit_cmd *c)
{
	memset(c, 0, sizeof *c);
	c->cp.signer_id = "local-development";
	c->cp.key_id = "local-checkpoint-signing";
	c->cp.key_version = "v1";
}

static void
emit(struct buf *b, FILE *out)
{
	buf_addc(b, '\n');
	fwrite(b->p, 1, b->len, out);
}

static void
emit_sum(const struct audit_sum *m, FILE *out)
{
	struct buf b;

	buf_init(&b);
	audit_sum_json(m, &b);
	emit(&b, out);
	buf_release(&b);
}

/* open_session opens an existing session (66 if there is none). */
static int
open_session(struct project *p, struct session *s, const char *id)
{
	if (session_init(s, p, id) < 0)
		return -1;
	if (project_open(p, 0) < 0)
		return -1;
	if (session_exists(s) != 1)
		return hw_err_code() == HW_EXIT_DATA ? -1 :
		    hw_err_set(HW_EXIT_NOINPUT, "no session '%s'", id);
	return 0;
}

/* verify_file verifies a bare export: file, or stdin for NULL or "-" */
static int
verify_file(const char *file, struct audit_sum *m)
{
	int fd = STDIN_FILENO, rc;

	if (file && strcmp(file, "-") &&
	    (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
		rc = hw_err_sys("cannot open '%s'", file);
		if (errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
	} else
		rc = audit_verify_fd(fd, file ? file : "<stdin>", m);
	if (fd > STDIN_FILENO)
		close(fd);
	return rc;
}

int
audit_cmd_verify(const struct audit_cmd *c, const char *file, FILE *out)
{
	struct project p = { 0 };
	struct session s;
	struct audit_sum m;
	int rc;

	audit_sum_init(&m, 0);
	memset(&s, 0, sizeof s);
	if (c->session) {
		rc = open_session(&p, &s, c->session);
		if (rc == 0)
			rc = audit_verify_session(&s, &m);
	} else
		rc = verify_file(file, &m);
	if (rc == 0)
		emit_sum(&m, out);
	audit_sum_release(&m);
	session_release(&s);
	project_release(&p);
	return rc;
}

/* leased runs fn with the session's writer lease held */
static int
leased(const char *id, int (*fn)(struct session *, const void *, FILE *),
    const void *ctx, FILE *out)
{
	struct project p = { 0 };
	struct session s;
	int rc;

	memset(&s, 0, sizeof s);
	rc = open_session(&p, &s, id);
	if (rc == 0 && (rc = session_lease(&s)) == 0) {
		rc = receipts_interrupted(&s) < 0 ? -1 : fn(&s, ctx, out);
		if (session_unlease(&s) < 0)
			rc = -1;
	}
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
do_export(struct session *s, const void *ctx, FILE *out)
{
	const struct audit_cmd *c = ctx;
	struct audit_sum m;
	int rc;

	audit_sum_init(&m, 0);
	if ((rc = audit_export(s, &m, c->output)) == 0)
		emit_sum(&m, out);
	audit_sum_release(&m);
	return rc;
}

int
audit_cmd_export(const struct audit_cmd *c, FILE *out)
{
	return leased(c->session, do_export, c, out);
}

static int
write_note(const struct cp_job *j, const struct audit_sum *m,
    const struct signkey *k)
{
	struct buf body, note;
	char *path = xasprintf("%s.note", j->c->output);
	int rc;

	buf_init(&body);
	buf_init(&note);
	checkpoint_note_body(m, j->cp.deployment_id, &body);
	rc = note_sign(j->cp.signer_id, k, buf_cstr(&body), &note);
	if (rc == 0)
		rc = publish_new_file(path, note.p, note.len);
	buf_release(&body);
	buf_release(&note);
	free(path);
	return rc;
}

static int
do_checkpoint(struct session *s, const void *ctx, FILE *out)
{
	const struct cp_job *j = ctx;
	const char *output = j->c->output;
	struct audit_sum m;
	struct signkey k;
	struct arena a;
	struct jval *cp;
	struct buf b;
	char *exp = path_join(s->dir, "audit-export.jsonl");
	char *note = xasprintf("%s.note", output);
	int rc = -1;

	audit_sum_init(&m, 0);
	arena_init(&a);
	buf_init(&b);
	memset(&k, 0, sizeof k);
	if ((!j->signer && key_load_private(j->c->key, &k) < 0) ||
	    path_outside_store(output) < 0)
		goto out;
	if (access(output, F_OK) == 0 || access(note, F_OK) == 0) {
		hw_err_set(HW_EXIT_FAIL, "refusing to replace existing '%s'",
		    access(output, F_OK) == 0 ? output : note);
		goto out;
	}
	if (audit_export(s, &m, NULL) < 0)
		goto out;
	cp = checkpoint_statement(&a, &m, &j->cp);
	cp = j->signer ? signer_sign(&a, j->signer, cp) :
	    checkpoint_sign(&a, cp, &k, &j->cp);
	if (!cp || checkpoint_publish(output, exp, cp) < 0)
		goto out;
	if (!j->signer && k.alg == SIG_ED25519 && write_note(j, &m, &k) < 0) {
		hw_err_set(hw_err_code(), "checkpoint '%s' is published, but "
		    "its signed note is not: %s", output, hw_err_msg());
		goto out;
	}
	json_canon(&b, cp);
	emit(&b, out);
	rc = 0;
out:
	key_release(&k);
	audit_sum_release(&m);
	arena_release(&a);
	buf_release(&b);
	free(exp);
	free(note);
	return rc;
}

/* selected_profile: --profile, else the project's selection, else default */
static int
selected_profile(struct signer_registry *r, const struct audit_cmd *c,
    struct signer_profile **p)
{
	struct jval *cfg = NULL;
	struct arena a;
	int rc = -1;

	if (c->profile)
		return registry_profile(r, c->profile, p);
	arena_init(&a);
	if (config_load(&a, &cfg) == 0)
		rc = registry_profile(r, config_signer_profile(cfg), p);
	arena_release(&a);
	return rc;
}

/*
 * active_profile loads the registry and selects --profile, the project's
 * selection (hw-audit signer select) or the registry's default;
 * the registry and the profile's files must lie outside the project.
 */
static int
active_profile(struct signer_registry *r, const struct audit_cmd *c,
    const char *verb, struct signer_profile **p)
{
	if (registry_load(r, NULL) < 0)
		return -1;
	if (!r->path && !c->profile)
		return hw_err_set(HW_EXIT_USAGE, "%s needs %s or a signer "
		    "registry, and none was found (see 'hw-audit signer "
		    "init-local')", verb, strcmp(verb, "checkpoint") ?
		    "--public-key" : "--key");
	if (selected_profile(r, c, p) < 0 ||
	    path_outside_project("signer registry", r->path) < 0 ||
	    path_outside_project("trusted public key",
	    (*p)->trusted_public_key) < 0)
		return -1;
	if (strcmp(verb, "checkpoint"))
		return 0;
	if (c->cacert)
		(*p)->ca_bundle = c->cacert;	/* --cacert wins */
	if ((*p)->ca_bundle && (!(*p)->https ? hw_err_set(HW_EXIT_USAGE,
	    "--cacert applies to an https signer only") :
	    path_outside_project("CA bundle", (*p)->ca_bundle)) < 0)
		return -1;
	if (!(*p)->token_file)
		return 0;
	return path_outside_project("token file", (*p)->token_file) < 0 ?
	    -1 : signer_token_check(*p);
}

int
audit_cmd_checkpoint(const struct audit_cmd *c, FILE *out)
{
	struct signer_registry r;
	struct cp_job j = { c, c->cp, NULL };
	int rc = -1;

	if (c->key)
		return checkpoint_args_ok(&j.cp) < 0 ? -1 :
		    leased(c->session, do_checkpoint, &j, out);
	memset(&r, 0, sizeof r);
	if (c->identity)
		rc = hw_err_set(HW_EXIT_USAGE, "--signer-id, --key-id and "
		    "--key-version go with --key; a profile pins its own");
	else if (active_profile(&r, c, "checkpoint", &j.signer) == 0) {
		j.cp.signer_id = j.signer->signer_id;
		j.cp.key_id = j.signer->key_id;
		j.cp.key_version = j.signer->key_version;
		rc = checkpoint_args_ok(&j.cp) < 0 ? -1 :
		    leased(c->session, do_checkpoint, &j, out);
	}
	registry_release(&r);
	return rc;
}

/* verified_json builds the result of a verified checkpoint */
static void
verified_json(struct arena *a, const struct audit_sum *m,
    const struct jval *cp, struct buf *b)
{
	struct jval *r = json_obj(a);
	char root[65];

	hex_encode(m->root, 32, root);
	json_add(a, r, "merkle_root", json_str(a, root));
	json_add(a, r, "signature", json_get(cp, "signature"));
	json_add(a, r, "statement", json_get(cp, "statement"));
	json_add(a, r, "verified", json_bool(a, 1));
	json_canon(b, r);
}

int
audit_cmd_verify_checkpoint(const struct audit_cmd *c, const char *dir,
    FILE *out)
{
	struct signer_registry reg;
	struct signer_profile *p = NULL;
	struct audit_sum m;
	struct arena a;
	struct jval *cp;
	struct buf b;
	int rc;

	memset(&reg, 0, sizeof reg);
	if (!c->pubkey && active_profile(&reg, c, "verify-checkpoint",
	    &p) < 0) {
		registry_release(&reg);
		return -1;
	}
	audit_sum_init(&m, 0);
	arena_init(&a);
	buf_init(&b);
	rc = checkpoint_verify(dir, p ? p->trusted_public_key : c->pubkey,
	    &a, &m, &cp);
	if (rc == 0 && p)
		rc = signer_identity_check(p, json_get(cp, "signature"));
	if (rc == 0) {
		verified_json(&a, &m, cp, &b);
		emit(&b, out);
	}
	buf_release(&b);
	arena_release(&a);
	audit_sum_release(&m);
	registry_release(&reg);
	return rc;
}

int
audit_cmd_signer_init(FILE *out,
    void (*shadowed)(const char *path, void *ctx), void *ctx)
{
	struct buf b;
	char *found = NULL, *dir = NULL, *ours = NULL;
	int rc;

	buf_init(&b);
	if ((rc = signer_init_local(&b)) == 0) {
		/* a registry found first would hide the one just written */
		if (registry_user_dir(&dir) == 0)
			ours = path_join(dir, "checkpoint-signers.toml");
		if (registry_find(&found) == 0 && found && ours &&
		    strcmp(found, ours) && shadowed)
			shadowed(found, ctx);
		emit(&b, out);
	}
	free(found);
	free(ours);
	free(dir);
	buf_release(&b);
	return rc;
}

static void
print_ready(const char *url, void *ctx)
{
	FILE *out = ctx;

	fprintf(out, "{\"listening\":\"%s\"}\n", url);
	fflush(out);
}

int
audit_cmd_signer_serve(const struct audit_cmd *c, FILE *out)
{
	return signer_serve_local(c->registry, c->profile, print_ready, out);
}

/* prove_session writes a proof from the session's Merkle cache */
static int
prove_session(const struct audit_cmd *c, int incl, const char *arg,
    FILE *out)
{
	struct project p = { 0 };
	struct session s;
	struct buf b;
	char *end;
	long long num;
	int rc;

	buf_init(&b);
	memset(&s, 0, sizeof s);
	num = strtoll(arg, &end, 10);
	if (*end || end == arg || num < 0)
		rc = hw_err_set(HW_EXIT_USAGE, "invalid %s '%s'", incl ?
		    "sequence" : "size", arg);
	else if ((rc = open_session(&p, &s, c->session)) == 0)
		rc = incl ? proof_inclusion(&s, num, &b) :
		    proof_consistency_session(&s, num, &b);
	if (rc == 0)
		emit(&b, out);
	buf_release(&b);
	session_release(&s);
	project_release(&p);
	return rc;
}

int
audit_cmd_prove_inclusion(const struct audit_cmd *c, const char *seq,
    FILE *out)
{
	return prove_session(c, 1, seq, out);
}

int
audit_cmd_prove_consistency(const struct audit_cmd *c, const char *size,
    FILE *out)
{
	return prove_session(c, 0, size, out);
}

int
audit_cmd_prove_bundles(const char *olddir, const char *newdir, FILE *out)
{
	struct buf b;
	int rc;

	buf_init(&b);
	if ((rc = proof_consistency(olddir, newdir, &b)) == 0)
		emit(&b, out);
	buf_release(&b);
	return rc;
}

/* between checks a proof against the checkpoints c->from and c->to */
static int
between(const struct audit_cmd *c, const struct buf *in, struct buf *res)
{
	struct signer_registry reg;
	struct signer_profile *p = NULL;
	struct tree_head old, new;
	int rc = -1;

	memset(&reg, 0, sizeof reg);
	if ((c->pubkey || active_profile(&reg, c, "verify-proof", &p) == 0) &&
	    tree_head_load(c->from, c->pubkey, p, &old) == 0 &&
	    tree_head_load(c->to, c->pubkey, p, &new) == 0)
		rc = proof_verify_between(in->p, in->len, &old, c->from, &new,
		    c->to, res);
	registry_release(&reg);
	return rc;
}

int
audit_cmd_verify_proof(const struct audit_cmd *c, const char *file,
    FILE *out)
{
	struct buf in, res;
	int rc;

	buf_init(&in);
	buf_init(&res);
	rc = file && strcmp(file, "-") ? read_file(file, 1 << 20, &in) :
	    read_fd(STDIN_FILENO, "<stdin>", 1 << 20, &in);
	if (rc == 0)
		rc = c->from ? between(c, &in, &res) : proof_verify(in.p,
		    in.len, c->root_from, c->pubkey, &res);
	if (rc == 0)
		emit(&res, out);
	buf_release(&in);
	buf_release(&res);
	return rc;
}
