/*
 * hw-audit - verify, export and checkpoint audit logs; signer registries
 * and the local signer; Merkle proofs
 */
#include <getopt.h>
#include <string.h>

#include "verbs.h"

static const char usage[] =
    "usage: hw-audit verify --session ID\n"
    "       hw-audit verify [FILE | -]\n"
    "       hw-audit export --session ID [--output PATH]\n"
    "       hw-audit checkpoint --session ID --output DIR --deployment-id ID\n"
    "                --retention-policy ID --retain-until YYYY-MM-DD\n"
    "                [--key PEM [--signer-id ID] [--key-id ID]\n"
    "                 [--key-version V] | --profile NAME] [--cacert PATH]\n"
    "       hw-audit verify-checkpoint DIR\n"
    "                [--public-key PEM | --profile NAME]\n"
    "       hw-audit signer init-local\n"
    "       hw-audit signer serve-local [--registry PATH] [--profile NAME]\n"
    "       hw-audit signer list [--registry PATH]\n"
    "       hw-audit signer select NAME | signer default\n"
    "       hw-audit prove inclusion --session ID SEQ\n"
    "       hw-audit prove consistency OLD_DIR NEW_DIR\n"
    "       hw-audit prove consistency --session ID OLD_SIZE\n"
    "       hw-audit verify-proof [FILE | -] [--root-from DIR [--public-key PEM]]\n"
    "       hw-audit verify-proof [FILE | -] --from OLD --to NEW\n"
    "                [--public-key PEM | --profile NAME]\n"
    "       hw-audit -h | --version\n";

static void
warn_shadowed(const char *path, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "hw-audit: warning: the signer registry '%s' takes "
	    "precedence over the one written\n", path);
}

/* run runs verb arg[0] with its n - 1 operands; -2 asks for the usage */
static int
run(const struct audit_cmd *o, int n, char **arg)
{
	const char *verb = n > 0 ? arg[0] : "", *a1 = n > 1 ? arg[1] : "";

	if (o->registry && strcmp(verb, "signer"))
		verb = "";	/* --registry is serve-local's alone */
	if (o->cacert && (strcmp(verb, "checkpoint") || o->key))
		verb = "";	/* --cacert is a signer's, for checkpoint */
	if (!strcmp(verb, "verify") && n <= 2 && !(o->session && n == 2))
		return audit_cmd_verify(o, n == 2 ? a1 : NULL, stdout);
	if (!strcmp(verb, "export") && n == 1 && o->session)
		return audit_cmd_export(o, stdout);
	if (!strcmp(verb, "checkpoint") && n == 1 && o->session &&
	    o->output && o->cp.deployment_id && o->cp.policy_id &&
	    o->cp.retain_until && !(o->key && o->profile))
		return audit_cmd_checkpoint(o, stdout);
	if (!strcmp(verb, "verify-checkpoint") && n == 2 &&
	    !(o->pubkey && o->profile))
		return audit_cmd_verify_checkpoint(o, a1, stdout);
	if (!strcmp(verb, "signer") && n == 2 && !strcmp(a1, "serve-local"))
		return audit_cmd_signer_serve(o, stdout);
	if (!strcmp(verb, "signer") && n == 2 && !strcmp(a1, "list") &&
	    !o->profile)
		return audit_cmd_signer_list(o, stdout);
	if (!strcmp(verb, "signer") && n == 3 && !strcmp(a1, "select") &&
	    !o->registry && !o->profile)
		return audit_cmd_signer_select(arg[2], stdout);
	if (!strcmp(verb, "signer") && n == 2 && !strcmp(a1, "default") &&
	    !o->registry && !o->profile)
		return audit_cmd_signer_select(NULL, stdout);
	if (!strcmp(verb, "signer") && n == 2 && !strcmp(a1, "init-local") &&
	    !o->registry && !o->profile)
		return audit_cmd_signer_init(stdout, warn_shadowed, NULL);
	if (!strcmp(verb, "prove") && n == 3 && o->session &&
	    !strcmp(a1, "inclusion"))
		return audit_cmd_prove_inclusion(o, arg[2], stdout);
	if (!strcmp(verb, "prove") && n == 3 && o->session &&
	    !strcmp(a1, "consistency"))
		return audit_cmd_prove_consistency(o, arg[2], stdout);
	if (!strcmp(verb, "prove") && n == 4 && !o->session &&
	    !strcmp(a1, "consistency"))
		return audit_cmd_prove_bundles(arg[2], arg[3], stdout);
	if (!strcmp(verb, "verify-proof") && n <= 2 && !o->from && !o->to &&
	    !o->profile)
		return audit_cmd_verify_proof(o, n == 2 ? a1 : NULL, stdout);
	if (!strcmp(verb, "verify-proof") && n <= 2 && o->from && o->to &&
	    !o->root_from && !(o->pubkey && o->profile))
		return audit_cmd_verify_proof(o, n == 2 ? a1 : NULL, stdout);
	return -2;
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
		{ "from", required_argument, NULL, 'F' },
		{ "to", required_argument, NULL, 'T' },
		{ "profile", required_argument, NULL, 'P' },
		{ "registry", required_argument, NULL, 'g' },
		{ "cacert", required_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct audit_cmd o;
	int c, rc;

	audit_cmd_init(&o);
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
		case 'F': o.from = optarg; break;
		case 'T': o.to = optarg; break;
		case 'P': o.profile = optarg; break;
		case 'g': o.registry = optarg; break;
		case 'C': o.cacert = optarg; break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-audit", 0);
		case 'V': puts("hw-audit " HW_VERSION);
			return prog_finish("hw-audit", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	if ((rc = run(&o, argc - optind, argv + optind)) == -2) {
		fputs(usage, stderr);
		return HW_EXIT_USAGE;
	}
	rc = rc < 0 ? prog_fail("hw-audit") : 0;
	return prog_finish("hw-audit", rc);
}
