/*
 * hw-audit - verify, export and checkpoint audit logs; signer registries
 * and the local signer; Merkle proofs
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hw.h"

static const char usage[] =
    "usage: hw-audit verify --session ID\n"
    "       hw-audit verify [FILE | -]\n"
    "       hw-audit export --session ID [--output PATH]\n"
    "       hw-audit checkpoint --session ID --output DIR --deployment-id ID\n"
    "                --retention-policy ID --retain-until YYYY-MM-DD\n"
    "                [--key PEM [--signer-id ID] [--key-id ID]\n"
    "                 [--key-version V] | --profile NAME]\n"
    "       hw-audit verify-checkpoint DIR\n"
    "                [--public-key PEM | --profile NAME]\n"
    "       hw-audit signer init-local\n"
    "       hw-audit signer serve-local [--registry PATH] [--profile NAME]\n"
    "       hw-audit prove inclusion --session ID SEQ\n"
    "       hw-audit prove consistency OLD_DIR NEW_DIR\n"
    "       hw-audit prove consistency --session ID OLD_SIZE\n"
    "       hw-audit verify-proof [FILE | -] [--root-from DIR [--public-key PEM]]\n"
    "       hw-audit -h | --version\n";

struct opts {
	const char *session, *output, *key, *pubkey, *root_from;
	const char *profile, *registry;
	int identity;		/* --signer-id, --key-id or --key-version */
	struct checkpoint_opts cp;
	struct signer_profile *signer;	/* signing through a registry */
};

static int
emit(struct buf *b)
{
	buf_addc(b, '\n');
	fwrite(b->p, 1, b->len, stdout);
	return 0;
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

static int
cmd_verify(const struct opts *o, const char *file)
{
	struct project p = { 0 };
	struct session s;
	struct audit_sum m;
	struct buf b;
	int fd = STDIN_FILENO, rc;

	audit_sum_init(&m, 0);
	memset(&s, 0, sizeof s);
	if (o->session) {
		rc = open_session(&p, &s, o->session);
		if (rc == 0)
			rc = audit_verify_session(&s, &m);
	} else {
		if (file && strcmp(file, "-") &&
		    (fd = open(file, O_RDONLY | O_CLOEXEC)) < 0) {
			rc = hw_err_sys("cannot open '%s'", file);
			if (errno == ENOENT)
				hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
		} else
			rc = audit_verify_fd(fd, file ? file : "<stdin>", &m);
		if (fd > STDIN_FILENO)
			close(fd);
	}
	if (rc == 0) {
		buf_init(&b);
		audit_sum_json(&m, &b);
		emit(&b);
		buf_release(&b);
	}
	audit_sum_release(&m);
	session_release(&s);
	project_release(&p);
	return rc;
}

/* leased runs fn with the session's writer lease held */
static int
leased(const struct opts *o, int (*fn)(struct session *, const struct opts *))
{
	struct project p = { 0 };
	struct session s;
	int rc;

	memset(&s, 0, sizeof s);
	rc = open_session(&p, &s, o->session);
	if (rc == 0 && (rc = session_lease(&s)) == 0) {
		rc = receipts_interrupted(&s) < 0 ? -1 : fn(&s, o);
		if (session_unlease(&s) < 0)
			rc = -1;
	}
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
do_export(struct session *s, const struct opts *o)
{
	struct audit_sum m;
	struct buf b;
	int rc;

	audit_sum_init(&m, 0);
	if ((rc = audit_export(s, &m, o->output)) == 0) {
		buf_init(&b);
		audit_sum_json(&m, &b);
		emit(&b);
		buf_release(&b);
	}
	audit_sum_release(&m);
	return rc;
}

static int
write_note(const char *output, const struct audit_sum *m,
    const struct opts *o, const struct signkey *k)
{
	struct buf body, note;
	char *path = xasprintf("%s.note", output);
	int rc;

	buf_init(&body);
	buf_init(&note);
	checkpoint_note_body(m, o->cp.deployment_id, &body);
	rc = note_sign(o->cp.signer_id, k, buf_cstr(&body), &note);
	if (rc == 0)
		rc = publish_new_file(path, note.p, note.len);
	buf_release(&body);
	buf_release(&note);
	free(path);
	return rc;
}

static int
do_checkpoint(struct session *s, const struct opts *o)
{
	struct audit_sum m;
	struct signkey k;
	struct arena a;
	struct jval *cp;
	struct buf b;
	char *exp = path_join(s->dir, "audit-export.jsonl");
	char *note = xasprintf("%s.note", o->output);
	int rc = -1;

	audit_sum_init(&m, 0);
	arena_init(&a);
	buf_init(&b);
	memset(&k, 0, sizeof k);
	if ((!o->signer && key_load_private(o->key, &k) < 0) ||
	    path_outside_store(o->output) < 0)
		goto out;
	if (access(o->output, F_OK) == 0 || access(note, F_OK) == 0) {
		hw_err_set(HW_EXIT_FAIL, "refusing to replace existing '%s'",
		    access(o->output, F_OK) == 0 ? o->output : note);
		goto out;
	}
	if (audit_export(s, &m, NULL) < 0)
		goto out;
	cp = checkpoint_statement(&a, &m, &o->cp);
	cp = o->signer ? signer_sign(&a, o->signer, cp) :
	    checkpoint_sign(&a, cp, &k, &o->cp);
	if (!cp || checkpoint_publish(o->output, exp, cp) < 0)
		goto out;
	if (!o->signer && k.alg == SIG_ED25519 &&
	    write_note(o->output, &m, o, &k) < 0)
		goto out;
	json_canon(&b, cp);
	emit(&b);
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

/*
 * active_profile loads the registry and selects --profile or its default;
 * the registry and the profile's files must lie outside the project.
 */
static int
active_profile(struct signer_registry *r, const struct opts *o,
    const char *verb, struct signer_profile **p)
{
	if (registry_load(r, NULL) < 0)
		return -1;
	if (!r->path && !o->profile)
		return hw_err_set(HW_EXIT_USAGE, "%s needs %s or a signer "
		    "registry, and none was found (see 'hw-audit signer "
		    "init-local')", verb, strcmp(verb, "checkpoint") ?
		    "--public-key" : "--key");
	if (registry_profile(r, o->profile, p) < 0 ||
	    path_outside_project("signer registry", r->path) < 0 ||
	    path_outside_project("trusted public key",
	    (*p)->trusted_public_key) < 0)
		return -1;
	if (strcmp(verb, "checkpoint") || !(*p)->token_file)
		return 0;
	return path_outside_project("token file", (*p)->token_file) < 0 ?
	    -1 : signer_token_check(*p);
}

static int
cmd_checkpoint(struct opts *o)
{
	struct signer_registry r;
	int rc = -1;

	if (o->key)
		return checkpoint_args_ok(&o->cp) < 0 ? -1 :
		    leased(o, do_checkpoint);
	memset(&r, 0, sizeof r);
	if (o->identity)
		rc = hw_err_set(HW_EXIT_USAGE, "--signer-id, --key-id and "
		    "--key-version go with --key; a profile pins its own");
	else if (active_profile(&r, o, "checkpoint", &o->signer) == 0) {
		o->cp.signer_id = o->signer->signer_id;
		o->cp.key_id = o->signer->key_id;
		o->cp.key_version = o->signer->key_version;
		rc = checkpoint_args_ok(&o->cp) < 0 ? -1 :
		    leased(o, do_checkpoint);
	}
	registry_release(&r);
	return rc;
}

static int
cmd_verify_checkpoint(const struct opts *o, const char *dir)
{
	struct signer_registry reg;
	struct signer_profile *p = NULL;
	struct audit_sum m;
	struct arena a;
	struct jval *cp, *r;
	struct buf b;
	char root[65];
	int rc;

	memset(&reg, 0, sizeof reg);
	if (!o->pubkey && active_profile(&reg, o, "verify-checkpoint",
	    &p) < 0) {
		registry_release(&reg);
		return -1;
	}
	audit_sum_init(&m, 0);
	arena_init(&a);
	buf_init(&b);
	rc = checkpoint_verify(dir, p ? p->trusted_public_key : o->pubkey,
	    &a, &m, &cp);
	if (rc == 0 && p)
		rc = signer_identity_check(p, json_get(cp, "signature"));
	if (rc == 0) {
		hex_encode(m.root, 32, root);
		r = json_obj(&a);
		json_add(&a, r, "merkle_root", json_str(&a, root));
		json_add(&a, r, "signature", json_get(cp, "signature"));
		json_add(&a, r, "statement", json_get(cp, "statement"));
		json_add(&a, r, "verified", json_bool(&a, 1));
		json_canon(&b, r);
		emit(&b);
	}
	buf_release(&b);
	arena_release(&a);
	audit_sum_release(&m);
	registry_release(&reg);
	return rc;
}

static void
print_ready(const char *url, void *ctx)
{
	(void)ctx;
	printf("{\"listening\":\"%s\"}\n", url);
	fflush(stdout);
}

static int
cmd_signer(const char *what, const struct opts *o)
{
	struct buf b;
	char *found = NULL, *dir = NULL, *ours = NULL;
	int rc = -2;

	if (!strcmp(what, "serve-local"))
		return signer_serve_local(o->registry, o->profile,
		    print_ready, NULL);
	if (strcmp(what, "init-local") || o->registry || o->profile)
		return -2;
	buf_init(&b);
	if ((rc = signer_init_local(&b)) == 0) {
		/* a registry found first would hide the one just written */
		if (registry_user_dir(&dir) == 0)
			ours = path_join(dir, "checkpoint-signers.toml");
		if (registry_find(&found) == 0 && found && ours &&
		    strcmp(found, ours))
			fprintf(stderr, "hw-audit: warning: the signer "
			    "registry '%s' takes precedence over the one "
			    "written\n", found);
		emit(&b);
	}
	free(found);
	free(ours);
	free(dir);
	buf_release(&b);
	return rc;
}

static int
cmd_prove(int n, char **args, const struct opts *o)
{
	struct project p = { 0 };
	struct session s;
	struct buf b;
	char *end;
	long long num = 0;
	int rc = -2, incl = !strcmp(args[0], "inclusion");

	buf_init(&b);
	memset(&s, 0, sizeof s);
	if (o->session && n == 2 && (incl || !strcmp(args[0],
	    "consistency"))) {
		num = strtoll(args[1], &end, 10);
		if (*end || end == args[1] || num < 0)
			rc = hw_err_set(HW_EXIT_USAGE, "invalid %s '%s'", incl ?
			    "sequence" : "size", args[1]);
		else if ((rc = open_session(&p, &s, o->session)) == 0)
			rc = incl ? proof_inclusion(&s, num, &b) :
			    proof_consistency_session(&s, num, &b);
	} else if (!strcmp(args[0], "consistency") && n == 3 && !o->session)
		rc = proof_consistency(args[1], args[2], &b);
	if (rc == 0)
		emit(&b);
	buf_release(&b);
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
cmd_verify_proof(const char *file, const struct opts *o)
{
	struct buf in, out;
	int rc;

	buf_init(&in);
	buf_init(&out);
	rc = file && strcmp(file, "-") ? read_file(file, 1 << 20, &in) :
	    read_fd(STDIN_FILENO, "<stdin>", 1 << 20, &in);
	if (rc == 0 && (rc = proof_verify(in.p, in.len, o->root_from,
	    o->pubkey, &out)) == 0)
		emit(&out);
	buf_release(&in);
	buf_release(&out);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },
		{ "deployment-id", required_argument, NULL, 'd' },
		{ "retention-policy", required_argument, NULL, 'r' },
		{ "retain-until", required_argument, NULL, 'u' },
		{ "key", required_argument, NULL, 'k' },
		{ "signer-id", required_argument, NULL, 'S' },
		{ "key-id", required_argument, NULL, 'K' },
		{ "key-version", required_argument, NULL, 'v' },
		{ "public-key", required_argument, NULL, 'p' },
		{ "root-from", required_argument, NULL, 'R' },
		{ "profile", required_argument, NULL, 'P' },
		{ "registry", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct opts o = { .cp = { NULL, NULL, NULL, "local-development",
	    "local-checkpoint-signing", "v1" } };
	const char *verb;
	int c, n, rc;

	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 's': o.session = optarg; break;
		case 'o': o.output = optarg; break;
		case 'd': o.cp.deployment_id = optarg; break;
		case 'r': o.cp.policy_id = optarg; break;
		case 'u': o.cp.retain_until = optarg; break;
		case 'k': o.key = optarg; break;
		case 'S': o.cp.signer_id = optarg; o.identity = 1; break;
		case 'K': o.cp.key_id = optarg; o.identity = 1; break;
		case 'v': o.cp.key_version = optarg; o.identity = 1; break;
		case 'p': o.pubkey = optarg; break;
		case 'R': o.root_from = optarg; break;
		case 'P': o.profile = optarg; break;
		case 'g': o.registry = optarg; break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-audit", 0);
		case 'V': puts("hw-audit " HW_VERSION);
			return prog_finish("hw-audit", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	n = argc - optind;
	verb = n > 0 ? argv[optind] : "";
	if (o.registry && strcmp(verb, "signer"))
		verb = "";	/* --registry is serve-local's alone */
	if (!strcmp(verb, "verify") && n <= 2 && !(o.session && n == 2))
		rc = cmd_verify(&o, n == 2 ? argv[optind + 1] : NULL);
	else if (!strcmp(verb, "export") && n == 1 && o.session)
		rc = leased(&o, do_export);
	else if (!strcmp(verb, "checkpoint") && n == 1 && o.session &&
	    o.output && o.cp.deployment_id && o.cp.policy_id &&
	    o.cp.retain_until && !(o.key && o.profile))
		rc = cmd_checkpoint(&o);
	else if (!strcmp(verb, "verify-checkpoint") && n == 2 &&
	    !(o.pubkey && o.profile))
		rc = cmd_verify_checkpoint(&o, argv[optind + 1]);
	else if (!strcmp(verb, "signer") && n == 2)
		rc = cmd_signer(argv[optind + 1], &o);
	else if (!strcmp(verb, "prove") && n >= 2)
		rc = cmd_prove(n - 1, argv + optind + 1, &o);
	else if (!strcmp(verb, "verify-proof") && n <= 2)
		rc = cmd_verify_proof(n == 2 ? argv[optind + 1] : NULL, &o);
	else
		rc = -2;
	if (rc == -2) {
		fputs(usage, stderr);
		return HW_EXIT_USAGE;
	}
	rc = rc < 0 ? prog_fail("hw-audit") : 0;
	return prog_finish("hw-audit", rc);
}
