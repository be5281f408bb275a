/*
 * managed.c - hw setup's "Run with Heartwood": a managed model chosen
 * with hw-model recommend, downloaded by its catalog id with the
 * researcher's consent, and selected with hw-model select
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "setup.h"

#define CONTEXT_MIN 18432	/* the agent's minimum context window */
#define MODELS ".heartwood/models"

/* hwmodel runs hw-model with argv; its stdout to out (or ours) */
static int
hwmodel(const char *const *argv, struct buf *out)
{
	return driver_run("hw-model", (char *const *)argv, NULL, 0, out);
}

struct jval *
managed_recommend(struct arena *a)
{
	static const char *const argv[] = { "hw-model", "recommend", "--json",
		NULL };
	struct jval *v = NULL;
	struct buf out;
	char err[160];
	int rc;

	buf_init(&out);
	if ((rc = hwmodel(argv, &out)) == 0 &&
	    !(v = json_parse(a, out.p ? out.p : "", out.len, err,
	    sizeof err)))
		hw_err_set(HW_EXIT_DATA, "hw-model recommend: %s", err);
	else if (rc > 0)
		hw_err_set(rc, "hw-model recommend failed");
	buf_release(&out);
	return v;
}

int
managed_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (!n || n > 128 || strstr(id, "..") || *id == '.' || *id == '-' ||
	    strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return hw_err_set(HW_EXIT_USAGE, "invalid managed model id "
		    "'%s': expected [a-z0-9._-], as hw-model catalog lists "
		    "them", id);
	return 0;
}

int
managed_port(const char *port)
{
	int64_t n;

	if (parse_seq(port, &n) < 0 || n < 1 || n > 65535)
		return hw_err_set(HW_EXIT_USAGE, "invalid --port '%.32s': "
		    "expected 1 to 65535", port);
	return 0;
}

/* installed: models/<id> is a directory (hw-model select verifies it) */
static int
installed(const char *id)
{
	char *p = path_join(MODELS, id);
	struct stat st;
	int yes = lstat(p, &st) == 0 && S_ISDIR(st.st_mode);

	free(p);
	return yes;
}

const struct jval *
managed_choice(const struct jval *rec, const char *id)
{
	const struct jval *cs = json_get(rec, "choices");

	for (size_t i = 0; cs && cs->t == J_ARRAY && i < cs->n; i++)
		if (json_is_str(json_get(cs->u.a[i], "model_id"), id))
			return cs->u.a[i];
	return NULL;
}

/* consent: --yes-download, else a [y/N] on a terminal (1 declined) */
static int
consent(const struct setup_opts *o, const char *id, const struct jval *ch)
{
	int64_t size = 0;
	char *q;
	int yes;

	json_get_int(ch, "size_bytes", &size);
	if (o->yes_download)
		return 0;
	if (o->non_interactive)
		return hw_err_set(HW_EXIT_FAIL, "managed model '%s' is not "
		    "downloaded: --yes-download lets hw setup download it "
		    "(%lld bytes from %s)", id, (long long)size,
		    json_get_str(ch, "source_repository"));
	q = xasprintf("Download %s (%lld bytes from %s at %s) into %s? "
	    "[y/N]", id, (long long)size,
	    json_get_str(ch, "source_repository"),
	    json_get_str(ch, "source_revision"), MODELS);
	yes = setup_yes(q);
	free(q);
	return yes;
}

int
managed_fetch(const struct setup_opts *o, const char *id)
{
	const char *argv[] = { "hw-model", "download", id, NULL };
	const struct jval *rec, *ch;
	struct arena a;
	struct buf out;
	int64_t ctx;
	int rc = -1;

	if (managed_id_ok(id) < 0)
		return -1;
	if (installed(id))
		return 0;
	arena_init(&a);
	buf_init(&out);
	if (!(rec = managed_recommend(&a)))
		goto out;
	if (!(ch = managed_choice(rec, id))) {
		hw_err_set(HW_EXIT_NOINPUT, "no managed model or catalog "
		    "entry '%s' (hw-model catalog lists them)", id);
		goto out;
	}
	if (json_get_int(ch, "context_window", &ctx) == 0 &&
	    ctx < CONTEXT_MIN) {
		hw_err_set(HW_EXIT_CONFIG, "catalog entry '%s' has a context "
		    "window of %lld tokens, under the agent's minimum of %d: "
		    "it is for load and query tests only", id,
		    (long long)ctx, CONTEXT_MIN);
		goto out;
	}
	if ((rc = consent(o, id, ch)) != 0)
		goto out;
	if ((rc = hwmodel(argv, &out)) > 0)
		hw_err_set(rc, "the download of '%s' failed", id);
out:
	buf_release(&out);
	arena_release(&a);
	return rc == 0 ? 0 : -1;
}

int
managed_select(const char *id, const char *port)
{
	const char *argv[] = { "hw-model", "select", id, port ? "--port" :
		NULL, port, NULL };
	struct buf out;
	int rc;

	buf_init(&out);
	rc = hwmodel(argv, &out);
	buf_release(&out);
	if (rc > 0)
		return hw_err_set(rc, "hw-model select '%s' failed", id);
	return rc;
}
