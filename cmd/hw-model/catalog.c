/*
 * catalog.c - hw-model catalog and recommend: the managed catalog files
 * and the model recommended for this platform and its GPUs
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "conf/conf.h"
#include "manage.h"
#include "model/model.h"

#define PROG "hw-model"

struct jval *
catalog_open(struct catalog_files *f, struct arena *a)
{
	char *dd = NULL;
	struct jval *v;

	if (!f->catalog || !f->snapshots) {
		if (!(dd = datadir_path()))
			return NULL;
		if (!f->catalog)
			f->catalog = f->own[0] = path_join(dd,
			    "models/model-catalog.toml");
		if (!f->snapshots)
			f->snapshots = f->own[1] = path_join(dd,
			    "models/snapshots.toml");
		free(dd);
	}
	v = catalog_load(f->catalog, f->snapshots, a);
	return v;
}

static void
line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
line(const char *fmt, ...)
{
	struct buf b;
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	buf_init(&b);
	buf_adds(&b, s);
	tty_put(stdout, b.p, b.len, 1);
	buf_release(&b);
	free(s);
}

static const char catalog_usage[] =
    "usage: hw-model catalog [--catalog FILE] [--snapshots FILE] [--json]\n";

static void
catalog_text(const struct jval *c)
{
	const struct jval *ms = json_get(c, "models");
	const struct jval *ss = json_get(c, "snapshots");

	for (size_t i = 0; i < ms->n; i++) {
		const struct jval *m = json_get(ms->u.a[i], "artifact");
		const char *q = json_get_str(m, "qualification");
		int64_t size = 0;

		json_get_int(m, "artifact_size_bytes", &size);
		line("artifact %-36s llama-cpp %12lld %s\n",
		    json_get_str(ms->u.a[i], "model_id"), (long long)size,
		    q ? q : "unvalidated");
	}
	for (size_t i = 0; i < ss->n; i++) {
		const struct jval *s = ss->u.a[i];
		int64_t size = 0;

		json_get_int(s, "expected_size_bytes", &size);
		line("snapshot %-36s vllm      %12lld %s %s\n",
		    json_get_str(s, "snapshot_id"), (long long)size,
		    json_get_str(s, "qualification"), json_get_str(s, "tier"));
	}
}

/* common options of catalog and recommend */
static int
opts(int argc, char **argv, const char *usage, struct catalog_files *f,
    int *json, int *gpus)
{
	static const struct option lo[] = {
		{ "catalog", required_argument, NULL, 'c' },
		{ "snapshots", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int64_t n;
	int c;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'c')
			f->catalog = optarg;
		else if (c == 's')
			f->snapshots = optarg;
		else if (c == 'j')
			*json = 1;
		else if (c == 'g' && gpus) {
			if (parse_seq(optarg, &n) < 0 || n < 1 || n > GPUS_MAX)
				return hw_err_set(HW_EXIT_USAGE, "invalid "
				    "--gpus '%.32s': expected 1 to %d", optarg,
				    GPUS_MAX), -2;
			*gpus = (int)n;
		} else if (c == 'h') {
			fputs(usage, stdout);
			return 1;
		} else
			return -1;
	}
	return optind == argc ? 0 : -1;
}

int
verb_catalog(int argc, char **argv)
{
	struct catalog_files f = { 0 };
	struct jval *c;
	struct arena a;
	int json = 0, rc;

	if ((rc = opts(argc, argv, catalog_usage, &f, &json, NULL)) != 0)
		return rc > 0 ? prog_finish(PROG, 0) :
		    manage_usage_err(catalog_usage);
	arena_init(&a);
	if ((c = catalog_open(&f, &a))) {
		if (json)
			manage_print_json(c);
		else
			catalog_text(c);
	}
	free(f.own[0]), free(f.own[1]);
	arena_release(&a);
	return c ? prog_finish(PROG, 0) : prog_fail(PROG);
}

static const char recommend_usage[] =
    "usage: hw-model recommend [--gpus N] [--json] [--catalog FILE]\n"
    "                [--snapshots FILE]\n";

static void
recommend_text(const struct jval *r)
{
	const struct jval *w = json_get(r, "recommended");
	const struct jval *cs = json_get(r, "choices");

	if (w && w->t == J_OBJECT)
		line("recommended: %s (%s)\n", json_get_str(w, "model_id"),
		    json_get_str(w, "label"));
	else
		line("recommended: none on %s with %zu GPU(s)\n",
		    json_get_str(r, "platform_id"), json_get(r, "gpus")->n);
	for (size_t i = 0; i < cs->n; i++) {
		const char *why = json_get_str(cs->u.a[i], "reason");

		line("  %-44s %s\n", json_get_str(cs->u.a[i], "model_id"),
		    why ? why : "candidate");
	}
}

int
verb_recommend(int argc, char **argv)
{
	struct platform_detection pd;
	struct catalog_files f = { 0 };
	struct gpu_list *gl = xcalloc(1, sizeof *gl);
	struct jval *c, *r = NULL;
	struct arena a;
	int json = 0, gpus = 0, rc;

	if ((rc = opts(argc, argv, recommend_usage, &f, &json, &gpus)) != 0) {
		free(gl);
		if (rc == -2)
			return prog_fail(PROG);
		return rc > 0 ? prog_finish(PROG, 0) :
		    manage_usage_err(recommend_usage);
	}
	platform_detect(&pd);
	arena_init(&a);
	if ((c = catalog_open(&f, &a)) && (rc = gpu_inventory(gl)) < 0 &&
	    hw_err_code() == HW_EXIT_UNAVAILABLE) {
		/* no driver or no device: a machine without a GPU */
		fprintf(stderr, "%s: %s; recommending as for no GPU\n", PROG,
		    hw_err_msg());
		memset(gl, 0, sizeof *gl);
		gl->missing = 1;
		rc = 0;
	}
	if (c && rc == 0 && (r = model_recommend(c, pd.id, gl, gpus, &a))) {
		if (json)
			manage_print_json(r);
		else
			recommend_text(r);
	}
	free(f.own[0]), free(f.own[1]);
	free(gl);
	arena_release(&a);
	return r ? prog_finish(PROG, 0) : prog_fail(PROG);
}
