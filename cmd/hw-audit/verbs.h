/*
 * the verbs of hw-audit(1) and its signer commands
 */
#ifndef HW_AUDIT_VERBS_H
#define HW_AUDIT_VERBS_H

#include "audit/audit.h"
#include "conf/conf.h"
#include "session/session.h"

/* ---- the hw-audit verbs (verbs.c) ---- */

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
 * registry's default profile, creating nothing (signers.c).
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

#endif
