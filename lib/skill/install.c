/* install.c - the project's installed skills: install, index, log, remove */
#include <errno.h>
#include <ftw.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "skill/skill.h"
#include "store/store.h"
#include "tuf/tuf.h"

#define INDEX_SCHEMA "heartwood.skill-installations.v1"
#define LIFECYCLE_LOCK ".heartwood/skills/.lifecycle.lock"
#define ARTIFACTS ".heartwood/skills/artifacts/sha256"

static int
layout(void)
{
	struct project p;
	int rc = project_open(&p, 1);

	project_release(&p);
	if (rc < 0 || ensure_dir(".heartwood/skills") < 0 ||
	    ensure_dir(".heartwood/skills/artifacts") < 0 ||
	    ensure_dir(ARTIFACTS) < 0 || ensure_dir(".heartwood/audit") < 0)
		return -1;
	return lock_open(LIFECYCLE_LOCK, 0);
}

struct jval *
skill_index_read(struct arena *a)
{
	struct jval *v = read_json_file(SKILL_INDEX, 16u << 20, a), *r;

	if (!v)
		return errno == ENOENT ? json_new(a, J_ARRAY) : NULL;
	r = json_get(v, "installations");
	if (!json_is_str(json_get(v, "schema_version"), INDEX_SCHEMA) || !r ||
	    r->t != J_ARRAY)
		return hw_err_set(HW_EXIT_DATA, "invalid skill index '%s'",
		    SKILL_INDEX), NULL;
	return r;
}

static int
rec_cmp(const void *x, const void *y)
{
	return strcmp(json_get_str(*(struct jval *const *)x, "name"),
	    json_get_str(*(struct jval *const *)y, "name"));
}

static int
index_write(struct arena *a, struct jval *recs)
{
	struct jval *v = json_obj(a);

	if (recs->n)	/* none left: no array to sort */
		qsort(recs->u.a, recs->n, sizeof *recs->u.a, rec_cmp);
	json_add(a, v, "schema_version", json_str(a, INDEX_SCHEMA));
	json_add(a, v, "installations", recs);
	return atomic_write_json(SKILL_INDEX, v);
}

/* log_event appends one event about rec to the installation log */
static int
log_event(struct arena *a, const char *kind, const struct jval *rec,
    const char *decision)
{
	static const char *const keep[] = { "name", "skill_id", "version",
		"tree_sha256", "source_kind", "source_id", "source_revision",
		"review", "controlled_data_ready", NULL };
	struct jval *d = json_obj(a), *p = json_obj(a);
	const char *const *k;
	struct buf ack;
	int rc;

	json_add(a, p, "actor", json_str(a, "human"));
	for (k = keep; *k; k++)
		json_add(a, p, *k, json_get(rec, *k) ? json_copy(a,
		    json_get(rec, *k)) : json_new(a, J_NULL));
	if (decision)
		json_add(a, p, "decision", json_str(a, decision));
	json_add(a, d, "kind", json_str(a, kind));
	json_add(a, d, "payload", p);
	buf_init(&ack);
	rc = chainlog_append(SKILL_LOG, SKILL_LOG_ID, &d, 1, &ack);
	buf_release(&ack);
	return rc;
}

static struct jval *
local_record(struct arena *a, const struct skill_info *si)
{
	struct jval *r = json_obj(a);
	const struct jval *p = si->meta.policy;

	json_add(a, r, "name", json_str(a, si->meta.name));
	json_add(a, r, "skill_id", json_str(a, json_get_str(p, "id")));
	json_add(a, r, "version", json_str(a, json_get_str(p, "version")));
	json_add(a, r, "tree_sha256", json_str(a, si->tree.tree_sha256));
	json_add(a, r, "source_kind", json_str(a, "local"));
	json_add(a, r, "source_id", json_str(a, "local"));
	json_add(a, r, "source_revision", json_new(a, J_NULL));
	json_add(a, r, "catalog_target", json_new(a, J_NULL));
	json_add(a, r, "review", json_str(a, "local-unreviewed"));
	json_add(a, r, "controlled_data_ready", json_bool(a, 0));
	json_add(a, r, "status", json_str(a, "active"));
	json_add(a, r, "revocation_reason", json_new(a, J_NULL));
	return r;
}

/* inside_project: path resolves inside the current directory, outside
 * .heartwood; its resolved form goes to out (malloc'd) */
static int
inside_project(const char *path, char **out)
{
	char *cwd = realpath(".", NULL), *real = realpath(path, NULL);
	size_t n = cwd ? strlen(cwd) : 0;
	const char *rel;
	int rc = 0;

	if (!cwd || !real) {
		rc = hw_err_sys("cannot resolve '%s'", path);
	} else if (strncmp(real, cwd, n) || real[n] != '/') {
		rc = hw_err_set(HW_EXIT_FAIL, "refusing local skill '%s': it "
		    "is not inside the project", path);
	} else {
		rel = real + n + 1;
		if (!strcmp(rel, ".heartwood") || !strncmp(rel, ".heartwood/",
		    11))
			rc = hw_err_set(HW_EXIT_FAIL, "refusing local skill "
			    "'%s': it is inside .heartwood", path);
	}
	free(cwd);
	if (rc == 0)
		*out = real;
	else
		free(real);
	return rc;
}

/* copy_one copies f from src to dst with exclusive create, checking both */
static int
copy_one(int src, int dst, const struct skill_file *f)
{
	char *slash = strrchr(f->path, '/'), *dir;
	unsigned char chunk[65536], d[32];
	char hex[SHA256_HEX + 1];
	struct sha256 h;
	struct stat a, b;
	ssize_t r;
	int in, out, rc = -1;

	if (slash) {
		dir = xstrdup(f->path);
		for (char *p = strchr(dir, '/'); p; p = strchr(p + 1, '/')) {
			*p = '\0';
			if (mkdirat(dst, dir, 0755) < 0 && errno != EEXIST) {
				hw_err_sys("cannot create '%s'", dir);
				free(dir);
				return -1;
			}
			*p = '/';
		}
		free(dir);
	}
	in = openat(src, f->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC);
	if (in < 0)
		return hw_err_sys("cannot open '%s'", f->path);
	if (fstat(in, &a) < 0 || a.st_dev != f->dev || a.st_ino != f->ino ||
	    (uint64_t)a.st_size != f->size ||
	    a.st_mtim.tv_sec != f->mtime.tv_sec ||
	    a.st_mtim.tv_nsec != f->mtime.tv_nsec) {
		close(in);
		return hw_err_set(HW_EXIT_DATA, "'%s' changed since it was "
		    "inspected", f->path);
	}
	out = openat(dst, f->path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (out < 0) {
		close(in);
		return hw_err_sys("cannot create '%s'", f->path);
	}
	sha256_init(&h);
	while ((r = read(in, chunk, sizeof chunk)) > 0) {
		sha256_update(&h, chunk, (size_t)r);
		if (write_all(out, chunk, (size_t)r, f->path) < 0)
			goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, hex);
	if (r < 0 || fstat(in, &b) < 0) {
		hw_err_sys("cannot read '%s'", f->path);
	} else if (strcmp(hex, f->sha256) || b.st_mtim.tv_sec !=
	    a.st_mtim.tv_sec || b.st_mtim.tv_nsec != a.st_mtim.tv_nsec ||
	    b.st_size != a.st_size) {
		hw_err_set(HW_EXIT_DATA, "'%s' changed while it was copied",
		    f->path);
	} else if (fchmod(out, f->executable ? 0755 : 0644) < 0 ||
	    fsync(out) < 0) {
		hw_err_sys("cannot write '%s'", f->path);
	} else {
		rc = 0;
	}
out:
	sha256_release(&h);
	close(in);
	close(out);
	return rc;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* rm_tree removes a directory this process made, not following links */
static void
rm_tree(const char *path)
{
	nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * materialize copies the inspected skill si from src into
 * ARTIFACTS/TREE/NAME through a temporary directory beside it, inspects
 * the copy again and renames it into place.  An artifact already there
 * with the same digest is kept.
 */
static int
materialize(const char *src, const struct skill_info *si)
{
	char *tdir = xasprintf("%s/%s", ARTIFACTS, si->tree.tree_sha256);
	char *final = xasprintf("%s/%s", tdir, si->meta.name);
	char *tmp = xasprintf("%s/.%s-XXXXXX", tdir, si->meta.name);
	struct skill_info again;
	int sfd = -1, dfd = -1, rc = -1;
	size_t i;

	if (ensure_dir(tdir) < 0)
		goto out;
	if (access(final, F_OK) == 0) {
		if (skill_inspect(final, &again) == 0 &&
		    !strcmp(again.tree.tree_sha256, si->tree.tree_sha256))
			rc = 0;
		else
			hw_err_set(HW_EXIT_DATA, "artifact '%s' is there with "
			    "another digest", final);
		skill_info_release(&again);
		goto out;
	}
	if (!mkdtemp(tmp)) {
		hw_err_sys("cannot create '%s'", tmp);
		goto out;
	}
	sfd = open(src, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || dfd < 0) {
		hw_err_sys("cannot open '%s'", sfd < 0 ? src : tmp);
		goto fail;
	}
	for (i = 0; i < si->tree.n; i++)
		if (copy_one(sfd, dfd, &si->tree.files[i]) < 0)
			goto fail;
	if (fsync(dfd) < 0 || fchmod(dfd, 0755) < 0) {
		hw_err_sys("cannot sync '%s'", tmp);
		goto fail;
	}
	/* the copy is what gets approved: inspect it under its own name */
	if (rename(tmp, final) < 0) {
		hw_err_sys("cannot rename into '%s'", final);
		goto fail;
	}
	rc = skill_inspect(final, &again);
	if (rc == 0 && (strcmp(again.tree.tree_sha256, si->tree.tree_sha256) ||
	    strcmp(again.meta.name, si->meta.name)))
		rc = hw_err_set(HW_EXIT_DATA, "the copy of '%s' has another "
		    "digest", si->meta.name);
	if (rc < 0) {
		skill_info_release(&again);
		rm_tree(final);
		goto out;
	}
	skill_info_release(&again);
	rc = fsync_dir(tdir);
	goto out;
fail:
	rm_tree(tmp);
out:
	if (sfd >= 0)
		close(sfd);
	if (dfd >= 0)
		close(dfd);
	free(tdir);
	free(final);
	free(tmp);
	return rc;
}

static struct jval *
find_rec(struct jval *recs, const char *key, const char *val, size_t *at)
{
	size_t i;

	for (i = 0; i < recs->n; i++)
		if (json_is_str(json_get(recs->u.a[i], key), val)) {
			if (at)
				*at = i;
			return recs->u.a[i];
		}
	return NULL;
}

/*
 * activate ends an approved install whose tree was put in place (placed
 * 0) or not (-1, the error set): a failure is logged with the error kept;
 * otherwise rec joins the index, skill.activated is logged and rec goes
 * to out
 */
static int
activate(struct arena *a, struct jval *recs, struct jval *rec, int placed,
    struct buf *out)
{
	if (placed < 0) {
		char *why = xstrdup(hw_err_msg());
		int code = hw_err_code();

		log_event(a, "skill.installation-failed", rec, NULL);
		hw_err_set(code, "%s", why);
		free(why);
		return -1;
	}
	json_push(a, recs, rec);
	if (index_write(a, recs) < 0 ||
	    log_event(a, "skill.activated", rec, NULL) < 0)
		return -1;
	json_canon(out, rec);
	buf_addc(out, '\n');
	return 0;
}

/* conflict: 1 for an exact retry, 0 for none, -1 for a conflict */
static int
conflict(struct jval *recs, const struct jval *rec)
{
	const char *name = json_get_str(rec, "name");
	struct jval *a = find_rec(recs, "name", name, NULL);
	struct jval *b = find_rec(recs, "skill_id", json_get_str(rec,
	    "skill_id"), NULL);

	if (a && a == b && json_equal(a, rec))
		return 1;
	if (a || b)
		return hw_err_set(HW_EXIT_FAIL, "cannot install '%s': a skill "
		    "with that name or id is installed (hw-skill remove it "
		    "first)", name);
	if (skill_bundled_has(name, json_get_str(rec, "skill_id")))
		return hw_err_set(HW_EXIT_FAIL, "cannot install '%s': a "
		    "bundled skill has that name or id", name);
	return 0;
}

static int
install_locked(struct arena *a, const char *real, const char *want,
    struct skill_info *si, struct buf *out)
{
	struct jval *recs, *rec;
	int rc;

	if (skill_inspect(real, si) < 0 || !(recs = skill_index_read(a)))
		return -1;
	rec = local_record(a, si);
	if ((rc = conflict(recs, rec)) != 0) {
		if (rc > 0)
			json_canon(out, rec), buf_addc(out, '\n');
		return rc > 0 ? 0 : -1;
	}
	if (strcmp(si->tree.tree_sha256, want)) {
		if (log_event(a, "skill.installation-decision", rec,
		    "denied") < 0)
			return -1;
		return hw_err_set(HW_EXIT_FAIL, "refusing to install '%s': its "
		    "tree digest is sha256:%s, not the approved sha256:%s",
		    si->meta.name, si->tree.tree_sha256, want);
	}
	if (log_event(a, "skill.installation-decision", rec, "approved") < 0)
		return -1;
	return activate(a, recs, rec, materialize(real, si), out);
}

int
skill_local_install(const char *path, const char *expected, struct buf *out)
{
	char want[SHA256_HEX + 1], *real = NULL;
	struct skill_info si;
	struct arena a;
	int lock, rc;

	if (skill_parse_digest(expected, want) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid tree digest '%s': "
		    "not 64 lowercase hex digits", expected);
	if (inside_project(path, &real) < 0)
		return -1;
	if ((lock = layout()) < 0) {
		free(real);
		return -1;
	}
	memset(&si, 0, sizeof si);
	arena_init(&si.a);
	arena_init(&a);
	rc = install_locked(&a, real, want, &si, out);
	skill_info_release(&si);
	arena_release(&a);
	lock_close(lock);
	free(real);
	return rc;
}

int
skill_remove(const char *name, struct buf *out)
{
	struct jval *recs, *rec;
	struct arena a;
	size_t at;
	int lock, rc = -1;

	if ((lock = layout()) < 0)
		return -1;
	arena_init(&a);
	if (!(recs = skill_index_read(&a)))
		goto out;
	if (!(rec = find_rec(recs, "name", name, &at))) {
		hw_err_set(HW_EXIT_NOINPUT, "skill '%s' is not installed",
		    name);
		goto out;
	}
	memmove(recs->u.a + at, recs->u.a + at + 1, (recs->n - at - 1) *
	    sizeof *recs->u.a);
	recs->n--;
	if (index_write(&a, recs) < 0 ||
	    log_event(&a, "skill.deactivated", rec, NULL) < 0)
		goto out;
	json_canon(out, rec);
	buf_addc(out, '\n');
	rc = 0;
out:
	arena_release(&a);
	lock_close(lock);
	return rc;
}

/* ---- catalog sources: revocation sync, refresh, install ---- */

/* approved: the administrator approved tree for controlled data */
static int
approved(const struct skill_source *s, const char *tree)
{
	size_t i;

	for (i = 0; tree && i < s->napproved; i++)
		if (!strcmp(s->approved[i], tree))
			return 1;
	return 0;
}

static struct jval *
catalog_record(struct arena *a, const struct skill_source *s,
    const struct jval *e)
{
	struct jval *r = json_obj(a);
	const struct jval *p = json_get(e, "policy");

	json_add(a, r, "name", json_copy(a, json_get(e, "name")));
	json_add(a, r, "skill_id", json_copy(a, json_get(p, "id")));
	json_add(a, r, "version", json_copy(a, json_get(p, "version")));
	json_add(a, r, "tree_sha256", json_copy(a, json_get(e, "tree_sha256")));
	json_add(a, r, "source_kind", json_str(a, "catalog"));
	json_add(a, r, "source_id", json_str(a, s->id));
	json_add(a, r, "source_revision", json_copy(a,
	    json_get(e, "source_revision")));
	json_add(a, r, "catalog_target", json_copy(a, json_get(e, "target")));
	json_add(a, r, "review", json_str(a, "repository-reviewed"));
	json_add(a, r, "controlled_data_ready", json_bool(a,
	    approved(s, json_get_str(e, "tree_sha256"))));
	json_add(a, r, "status", json_str(a, "active"));
	json_add(a, r, "revocation_reason", json_new(a, J_NULL));
	return r;
}

/* why_revoked: why the catalog now revokes the active record rec */
static const char *
why_revoked(const struct skill_catalog *cat, const struct jval *rec)
{
	const struct jval *e = skill_catalog_entry(cat,
	    json_get_str(rec, "name"));

	if (!e)
		return "its entry vanished from the catalog";
	if (json_get(e, "revoked")->t == J_TRUE)
		return json_get_str(e, "revocation_reason");
	if (!json_equal(json_get(e, "tree_sha256"), json_get(rec,
	    "tree_sha256")) || !json_equal(json_get(json_get(e, "policy"),
	    "version"), json_get(rec, "version")) ||
	    !json_equal(json_get(e, "source_revision"), json_get(rec,
	    "source_revision")))
		return "its catalog entry changed";
	return NULL;
}

/* revocation_sync marks revoked what the catalog of cat's source now revokes */
static int
revocation_sync(struct arena *a, struct jval *recs,
    const struct skill_catalog *cat,
    struct buf *out)
{
	const char *why;
	struct jval *r;
	size_t i, n = 0;

	for (i = 0; i < recs->n; i++) {
		r = recs->u.a[i];
		if (!json_is_str(json_get(r, "source_kind"), "catalog") ||
		    !json_is_str(json_get(r, "source_id"), cat->src->id) ||
		    !json_is_str(json_get(r, "status"), "active") ||
		    !(why = why_revoked(cat, r)))
			continue;
		json_set(a, r, "status", json_str(a, "revoked"));
		json_set(a, r, "revocation_reason", json_str(a, why));
		if (n++)
			buf_addc(out, ',');
		json_canon_str(out, json_get_str(r, "name"),
		    strlen(json_get_str(r, "name")));
		if (log_event(a, "skill.deactivated", r, NULL) < 0)
			return -1;
	}
	return n ? index_write(a, recs) : 0;
}

/* refresh_one: cat loaded for s, the index synced; a line to out */
static int
refresh_one(struct arena *a, struct jval *recs, const struct skill_source *s,
    struct skill_catalog *cat, struct buf *out)
{
	if (skill_catalog_load(s, cat) < 0)
		return -1;
	buf_adds(out, "{\"entries\":");
	buf_printf(out, "%zu,\"revoked\":[", cat->entries->n);
	if (revocation_sync(a, recs, cat, out) < 0)
		return -1;
	buf_adds(out, "],\"source\":");
	json_canon_str(out, s->id, strlen(s->id));
	buf_adds(out, "}\n");
	return 0;
}

int
skill_refresh(const char *only, struct buf *out)
{
	struct skill_sources ss;
	struct skill_catalog cat;
	struct jval *recs;
	struct arena a;
	size_t i;
	int lock, rc = -1, any = 0;

	if (skill_sources_load(&ss) < 0)
		return -1;
	if (only && !skill_source_find(&ss, only)) {
		skill_sources_release(&ss);
		return hw_err_set(HW_EXIT_NOINPUT, "no skill source '%s'",
		    only);
	}
	if ((lock = layout()) < 0) {
		skill_sources_release(&ss);
		return -1;
	}
	arena_init(&a);
	if (!(recs = skill_index_read(&a)))
		goto out;
	for (i = 0, rc = 0; i < ss.n && rc == 0; i++) {
		if (only ? strcmp(ss.v[i].id, only) : !ss.v[i].enabled)
			continue;
		any = 1;
		rc = refresh_one(&a, recs, &ss.v[i], &cat, out);
		skill_catalog_release(&cat);
	}
	/* an active install from a source no longer configured is an error */
	for (i = 0; rc == 0 && !only && i < recs->n; i++)
		if (json_is_str(json_get(recs->u.a[i], "source_kind"),
		    "catalog")
		    && json_is_str(json_get(recs->u.a[i], "status"), "active")
		    &&
		    !skill_source_find(&ss, json_get_str(recs->u.a[i],
		    "source_id")))
			rc = hw_err_set(HW_EXIT_DATA, "skill '%s' is installed "
			    "from source '%s', which is no longer configured",
			    json_get_str(recs->u.a[i], "name"), json_get_str(
			    recs->u.a[i], "source_id"));
	(void)any;
out:
	arena_release(&a);
	lock_close(lock);
	skill_sources_release(&ss);
	return rc;
}

/* fetch_archive: the entry's archive, after a second refresh that must
 * find the entry identical */
static int
fetch_archive(const struct skill_source *s, const struct jval *e,
    struct buf *zip)
{
	struct skill_catalog again;
	struct tuf_target t;
	const struct jval *e2;
	char hex[SHA256_HEX + 1];
	int rc = -1;

	if (skill_catalog_load(s, &again) < 0)
		goto out;
	e2 = skill_catalog_entry(&again, json_get_str(e, "name"));
	if (!e2 || !json_equal(e, e2)) {
		hw_err_set(HW_EXIT_FAIL, "the catalog entry of '%s' changed "
		    "during the install", json_get_str(e, "name"));
		goto out;
	}
	if (tuf_target_find(again.u, json_get_str(e, "target"), &t) <= 0)
		goto out;
	rc = tuf_target_fetch(again.u, &t, s->targets_url, zip);
	free(t.path);
	sha256_hex(zip->p ? zip->p : "", zip->len, hex);
	if (rc == 0 && !json_is_str(json_get(e, "archive_sha256"), hex))
		rc = hw_err_set(HW_EXIT_DATA, "the archive of '%s' does not "
		    "have its archive_sha256", json_get_str(e, "name"));
out:
	skill_catalog_release(&again);
	return rc;
}

/* unpack extracts the entry's archive beside its final place, then
 * renames it in and inspects it again */
static int
unpack(const struct jval *e, const struct buf *zip)
{
	const char *name = json_get_str(e, "name"), *tree =
	    json_get_str(e, "tree_sha256");
	char *tdir = xasprintf("%s/%s", ARTIFACTS, tree);
	char *final = xasprintf("%s/%s", tdir, name);
	char *tmp = xasprintf("%s/.%s-XXXXXX", tdir, name);
	struct skill_info si;
	int dir = -1, rc = -1;

	memset(&si, 0, sizeof si);
	if (ensure_dir(tdir) < 0)
		goto out;
	if (access(final, F_OK) == 0) {
		rc = 0;
		goto check;
	}
	if (!mkdtemp(tmp)) {
		hw_err_sys("cannot create '%s'", tmp);
		goto out;
	}
	if ((dir = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW)) < 0 ||
	    skill_extract(zip->p, zip->len, e, dir) < 0 || fsync(dir) < 0 ||
	    fchmod(dir, 0755) < 0 || rename(tmp, final) < 0) {
		if (hw_err_code() == 0)
			hw_err_sys("cannot extract into '%s'", tmp);
		rm_tree(tmp);
		goto out;
	}
	rc = 0;
check:
	if (skill_inspect(final, &si) < 0 || strcmp(si.tree.tree_sha256, tree)
	    || strcmp(si.meta.name, name)) {
		if (rc == 0 && si.meta.name)
			hw_err_set(HW_EXIT_DATA, "the extracted '%s' has "
			    "another digest", name);
		rm_tree(final);
		rc = -1;
	} else {
		rc = fsync_dir(tdir);
	}
out:
	skill_info_release(&si);
	if (dir >= 0)
		close(dir);
	free(tdir);
	free(final);
	free(tmp);
	return rc;
}

/* catalog_locked: steps 2 to 9 for the entry e of source s */
static int
catalog_locked(struct arena *a, struct jval *recs,
    const struct skill_source *s, const struct jval *e, const char *want,
    struct buf *out)
{
	struct jval *rec = catalog_record(a, s, e);
	const char *name = json_get_str(e, "name"), *why;
	struct buf zip;
	int rc;

	if ((rc = conflict(recs, rec)) != 0) {
		if (rc > 0)
			json_canon(out, rec), buf_addc(out, '\n');
		return rc > 0 ? 0 : -1;
	}
	if (json_get(e, "revoked")->t == J_TRUE)
		return hw_err_set(HW_EXIT_FAIL, "refusing to install '%s': it "
		    "is revoked: "
		    "%s", name, json_get_str(e, "revocation_reason"));
	if ((why = skill_entry_unsupported(e)))
		return hw_err_set(HW_EXIT_FAIL, "refusing to install '%s': %s",
		    name, why);
	if (strcmp(json_get_str(e, "tree_sha256"), want)) {
		if (log_event(a, "skill.installation-decision", rec,
		    "denied") < 0)
			return -1;
		return hw_err_set(HW_EXIT_FAIL, "refusing to install '%s': its "
		    "tree digest is sha256:%s, not the approved sha256:%s",
		    name, json_get_str(e, "tree_sha256"), want);
	}
	if (log_event(a, "skill.installation-decision", rec, "approved") < 0)
		return -1;
	buf_init(&zip);
	rc = fetch_archive(s, e, &zip);
	if (rc == 0)
		rc = unpack(e, &zip);
	buf_release(&zip);
	return activate(a, recs, rec, rc, out);
}

static void
inspect_json(struct arena *a, const struct skill_source *s,
    const struct jval *e, struct buf *out)
{
	static const char *const keep[] = { "name", "description", "license",
		"compatibility", "allowed_tools", "policy", "files",
		"tree_sha256", "archive_size", "target", "source_repository",
		"source_revision", "review", "revocation_reason", NULL };
	const struct jval *files = json_get(e, "files");
	const char *const *k, *why = skill_entry_unsupported(e);
	struct jval *v = json_obj(a);
	int64_t total = 0, size;
	size_t i;

	for (k = keep; *k; k++)
		json_add(a, v, *k, json_get(e, *k) ? json_copy(a,
		    json_get(e, *k)) : json_new(a, J_NULL));
	for (i = 0; i < files->n; i++)
		if (json_get_int(files->u.a[i], "size", &size) == 0)
			total += size;
	json_add(a, v, "skill_id", json_copy(a, json_get(json_get(e,
	    "policy"), "id")));
	json_add(a, v, "version", json_copy(a, json_get(json_get(e,
	    "policy"), "version")));
	json_add(a, v, "source", json_str(a, "catalog"));
	json_add(a, v, "source_id", json_str(a, s->id));
	json_add(a, v, "status", json_str(a, json_get(e, "revoked")->t ==
	    J_TRUE ? "revoked" : why ? "unsupported" : "available"));
	json_add(a, v, "file_count", json_int(a, (int64_t)files->n));
	json_add(a, v, "total_size", json_int(a, total));
	json_canon(out, v);
	buf_addc(out, '\n');
}

/* find_entry refreshes the sources in order (or only source) until one
 * lists name; *cat holds that source's catalog */
static const struct jval *
find_entry(struct arena *a, struct jval *recs, const struct skill_sources *ss,
    const char *name, const char *source, struct skill_catalog *cat,
    const struct skill_source **src)
{
	const struct jval *e = NULL;
	struct buf sink;
	size_t i;

	buf_init(&sink);
	for (i = 0; i < ss->n && !e; i++) {
		if (source ? strcmp(ss->v[i].id, source) : !ss->v[i].enabled)
			continue;
		skill_catalog_release(cat);
		if (refresh_one(a, recs, &ss->v[i], cat, &sink) < 0)
			break;
		if ((e = skill_catalog_entry(cat, name)))
			*src = &ss->v[i];
	}
	buf_release(&sink);
	if (!e && i == ss->n)
		hw_err_set(HW_EXIT_NOINPUT, "no catalog lists skill '%s'",
		    name);
	return e;
}

int
skill_catalog_inspect(const char *name, const char *source, struct buf *out)
{
	const struct skill_source *src = NULL;
	struct skill_sources ss;
	struct skill_catalog cat;
	const struct jval *e;
	struct jval *recs;
	struct arena a;
	int lock, rc = -1;

	if (skill_sources_load(&ss) < 0)
		return -1;
	if ((lock = layout()) < 0) {
		skill_sources_release(&ss);
		return -1;
	}
	arena_init(&a);
	memset(&cat, 0, sizeof cat);
	if ((recs = skill_index_read(&a)) &&
	    (e = find_entry(&a, recs, &ss, name, source, &cat, &src))) {
		inspect_json(&a, src, e, out);
		rc = 0;
	}
	skill_catalog_release(&cat);
	arena_release(&a);
	lock_close(lock);
	skill_sources_release(&ss);
	return rc;
}

int
skill_catalog_install(const char *name, const char *expected,
    const char *source, struct buf *out)
{
	char want[SHA256_HEX + 1];
	const struct skill_source *src = NULL;
	struct skill_sources ss;
	struct skill_catalog cat;
	const struct jval *e = NULL;
	struct jval *recs;
	struct arena a;
	int lock, rc = -1;

	if (skill_parse_digest(expected, want) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid tree digest '%s': "
		    "not 64 lowercase hex digits", expected);
	if (skill_sources_load(&ss) < 0)
		return -1;
	if ((lock = layout()) < 0) {
		skill_sources_release(&ss);
		return -1;
	}
	arena_init(&a);
	memset(&cat, 0, sizeof cat);
	if (!(recs = skill_index_read(&a)))
		goto out;
	/* step 1: refresh, in the registry's order; the first entry wins */
	if ((e = find_entry(&a, recs, &ss, name, source, &cat, &src)))
		rc = catalog_locked(&a, recs, src, e, want, out);
out:
	skill_catalog_release(&cat);
	arena_release(&a);
	lock_close(lock);
	skill_sources_release(&ss);
	return rc;
}
