/* tuf.c - hw-skill tuf: the TUF client's own command-line face */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "skill.h"
#include "tuf/tuf.h"

struct tufopts {
	const char *mdir, *murl, *tdir, *turl;
	const char **names;
	size_t nnames;
};

static int
tuf_fail(void)
{
	hw_err_print("hw-skill");
	return HW_EXIT_FAIL;
}

static void
print_versions(const struct tuf_updater *u)
{
	printf("{\"root\":%lld,\"snapshot\":%lld,\"targets\":%lld,"
	    "\"timestamp\":%lld}\n", (long long)u->root->version,
	    (long long)u->snapshot->version, (long long)u->roles[0]->version,
	    (long long)u->timestamp->version);
}

static int
download_one(struct tuf_updater *u, const struct tufopts *o, const char *name)
{
	struct tuf_target t;
	struct buf line;
	char *local;
	int rc, fresh = 0;

	rc = tuf_target_find(u, name, &t);
	if (rc == 0)
		hw_err_set(HW_EXIT_FAIL, "no role lists target '%s'", name);
	if (rc <= 0)
		return -1;
	if (!tuf_target_cached(&t, o->tdir)) {
		if (tuf_target_download(u, &t, o->turl, o->tdir) < 0) {
			free(t.path);
			return -1;
		}
		fresh = 1;
	}
	local = tuf_target_local(&t);
	buf_init(&line);
	buf_adds(&line, "{\"downloaded\":");
	buf_adds(&line, fresh ? "true" : "false");
	buf_adds(&line, ",\"file\":");
	json_canon_str(&line, local, strlen(local));
	buf_printf(&line, ",\"length\":%lld,\"target\":", (long long)t.length);
	json_canon_str(&line, name, strlen(name));
	buf_adds(&line, "}\n");
	fwrite(line.p, 1, line.len, stdout);
	fflush(stdout);
	buf_release(&line);
	free(local);
	free(t.path);
	return 0;
}

static int
run(const char *verb, struct tufopts *o)
{
	struct tuf_updater u;
	size_t i;
	int rc = -1;

	if (tuf_updater_init(&u, o->mdir, o->murl) < 0)
		goto out;
	if (!strcmp(verb, "refresh")) {
		if ((rc = tuf_refresh(&u)) == 0)
			print_versions(&u);
		goto out;
	}
	for (i = 0, rc = 0; i < o->nnames && rc == 0; i++)
		rc = download_one(&u, o, o->names[i]);
out:
	tuf_updater_release(&u);
	return rc < 0 ? tuf_fail() : prog_finish("hw-skill", 0);
}

int
skill_tuf_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "metadata-dir", required_argument, NULL, 'm' },
		{ "metadata-url", required_argument, NULL, 'u' },
		{ "target-name", required_argument, NULL, 'n' },
		{ "target-dir", required_argument, NULL, 'd' },
		{ "target-base-url", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 }
	};
	struct tufopts o = { 0 };
	const char *verb;
	int c, rc;

	o.names = xcalloc((size_t)argc + 1, sizeof *o.names);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+", lopts, NULL)) != -1) {
		switch (c) {
		case 'm': o.mdir = optarg; break;
		case 'u': o.murl = optarg; break;
		case 'n': o.names[o.nnames++] = optarg; break;
		case 'd': o.tdir = optarg; break;
		case 'b': o.turl = optarg; break;
		default: free(o.names); return skill_usage_error();
		}
	}
	verb = optind < argc ? argv[optind] : "";
	if (!o.mdir || (!strcmp(verb, "init") ? argc - optind != 2 ||
	    o.murl || o.nnames || o.tdir || o.turl :
	    !strcmp(verb, "refresh") ? argc - optind != 1 || !o.murl ||
	    o.nnames || o.tdir || o.turl :
	    !strcmp(verb, "download") ? argc - optind != 1 || !o.murl ||
	    !o.nnames || !o.tdir || !o.turl : 1)) {
		free(o.names);
		return skill_usage_error();
	}
	if (!strcmp(verb, "init"))
		rc = tuf_init_root(o.mdir, argv[optind + 1]) < 0 ? tuf_fail() :
		    prog_finish("hw-skill", 0);
	else
		rc = run(verb, &o);
	free(o.names);
	return rc;
}
