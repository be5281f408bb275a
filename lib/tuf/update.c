/* update.c - the TUF client workflow: root, timestamp, snapshot, targets */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tuf/tuf.h"

static char *
local_path(const struct tuf_updater *u, const char *role)
{
	struct buf b;

	buf_init(&b);
	buf_adds(&b, u->mdir);
	buf_addc(&b, '/');
	tuf_quote(&b, role, NULL);
	buf_adds(&b, ".json");
	return buf_cstr(&b);
}

static int
persist(const struct tuf_updater *u, const char *role, const struct buf *raw)
{
	char *path = local_path(u, role);
	int rc = atomic_replace(path, raw->p, raw->len);

	free(path);
	return rc;
}

static void
forget(const struct tuf_updater *u, const char *role)
{
	char *path = local_path(u, role);

	if (unlink(path) == 0)
		fsync_parent(path);
	free(path);
}

/*
 * load_local: the stored metadata of role, parsed, or NULL (what is
 * missing or malformed is only not trusted; the error is not kept).
 */
static struct tuf_md *
load_local(const struct tuf_updater *u, const char *role,
    enum tuf_type type, size_t max, struct buf *raw)
{
	char *path = local_path(u, role);
	struct tuf_md *md = NULL;
	int rc = read_file(path, max, raw);

	if (rc == 0)
		md = tuf_md_parse(raw->p, raw->len, type, path);
	free(path);
	return md;
}

static int
fetch_md(struct tuf_updater *u, const char *role, int64_t version,
    size_t max, struct buf *out, long *status)
{
	struct buf url;
	int rc;

	buf_init(&url);
	buf_adds(&url, u->murl);
	if (version > 0)
		buf_printf(&url, "%lld.", (long long)version);
	tuf_quote(&url, role, NULL);
	buf_adds(&url, ".json");
	rc = tuf_fetch(&u->f, buf_cstr(&url), max, out, status);
	buf_release(&url);
	return rc;
}

static int
expired(const struct tuf_updater *u, const struct tuf_md *md,
    const char *role)
{
	if (u->now < md->expires)
		return 0;
	return hw_err_set(HW_EXIT_DATA, "metadata '%s' version %lld has "
	    "expired", role, (long long)md->version);
}

int
tuf_init_root(const char *mdir, const char *rootfile)
{
	struct tuf_md *md;
	struct buf b;
	char *path;
	int rc = -1;

	buf_init(&b);
	if (read_file(rootfile, TUF_ROOT_MAX, &b) < 0)
		goto out;
	if (!(md = tuf_md_parse(b.p, b.len, TUF_ROOT, rootfile)))
		goto out;
	tuf_md_free(md);
	path = path_join(mdir, "root.json");
	rc = atomic_replace(path, b.p, b.len);
	free(path);
out:
	buf_release(&b);
	return rc;
}

int
tuf_updater_init(struct tuf_updater *u, const char *mdir, const char *murl)
{
	struct buf raw;
	size_t n = strlen(murl);

	memset(u, 0, sizeof *u);
	u->mdir = xstrdup(mdir);
	u->murl = n && murl[n - 1] == '/' ? xstrdup(murl) :
	    xasprintf("%s/", murl);
	if (tuf_fetcher_init(&u->f, u->murl) < 0)
		return -1;
	buf_init(&raw);
	u->root = load_local(u, "root", TUF_ROOT, TUF_ROOT_MAX, &raw);
	buf_release(&raw);
	if (!u->root) {
		if (hw_err_code() != HW_EXIT_DATA)
			return hw_err_set(HW_EXIT_NOINPUT, "no trusted root in "
			    "'%s': %s", mdir, hw_err_msg());
		return -1;
	}
	return tuf_md_verify(u->root, "root", u->root);
}

static void
drop_roles(struct tuf_updater *u)
{
	size_t i;

	tuf_md_free(u->timestamp);
	tuf_md_free(u->snapshot);
	for (i = 0; i < u->nroles; i++)
		tuf_md_free(u->roles[i]);
	free(u->roles);
	u->timestamp = u->snapshot = NULL;
	u->roles = NULL;
	u->nroles = 0;
}

void
tuf_updater_release(struct tuf_updater *u)
{
	drop_roles(u);
	tuf_md_free(u->root);
	tuf_fetcher_release(&u->f);
	tuf_fetcher_release(&u->tf);
	free(u->mdir);
	free(u->murl);
	free(u->turl);
	memset(u, 0, sizeof *u);
}

/* same_keys: role lists the same key ids in both roots */
static int
same_keys(const struct tuf_md *a, const struct tuf_md *b, const char *role)
{
	const struct tuf_role *x = tuf_md_role(a, role), *y =
	    tuf_md_role(b, role);
	size_t i, j;

	if (x->nkeyids != y->nkeyids)
		return 0;
	for (i = 0; i < x->nkeyids; i++) {
		for (j = 0; j < y->nkeyids; j++)
			if (!strcmp(x->keyids[i], y->keyids[j]))
				break;
		if (j == y->nkeyids)
			return 0;
	}
	return 1;
}

static int
next_root(struct tuf_updater *u, const struct buf *raw)
{
	struct tuf_md *md = tuf_md_parse(raw->p, raw->len, TUF_ROOT,
	    "root");

	if (!md)
		return -1;
	if (tuf_md_verify(u->root, "root", md) < 0 ||
	    tuf_md_verify(md, "root", md) < 0)
		goto fail;
	if (md->version != u->root->version + 1) {
		hw_err_set(HW_EXIT_DATA, "root version %lld follows %lld",
		    (long long)md->version, (long long)u->root->version);
		goto fail;
	}
	if (persist(u, "root", raw) < 0)
		goto fail;
	tuf_md_free(u->root);
	u->root = md;
	return 0;
fail:
	tuf_md_free(md);
	return -1;
}

static int
update_root(struct tuf_updater *u, struct buf *raw)
{
	int64_t v, first = u->root->version + 1;
	struct tuf_md *old = NULL;
	long status;
	int rc = 0;

	for (v = first; v < first + TUF_MAX_ROOT_ROTATIONS && rc == 0; v++) {
		if (fetch_md(u, "root", v, TUF_ROOT_MAX, raw, &status) < 0) {
			if (status == 404 || status == 403)
				break;
			return -1;
		}
		if (!old) {
			/* keep the first trusted root to compare keys */
			old = u->root;
			u->root = tuf_md_parse(old->raw.p, old->raw.len,
			    TUF_ROOT, "root");
		}
		rc = next_root(u, raw);
	}
	if (old && rc == 0 && (!same_keys(old, u->root, "timestamp") ||
	    !same_keys(old, u->root, "snapshot"))) {
		/* fast-forward recovery: the old versions are not a floor */
		forget(u, "timestamp");
		forget(u, "snapshot");
	}
	tuf_md_free(old);
	if (rc < 0)
		return -1;
	return expired(u, u->root, "root");
}

static struct tuf_md *
load_verified(struct tuf_updater *u, const char *role, enum tuf_type type,
    size_t max, struct buf *raw)
{
	struct tuf_md *md = load_local(u, role, type, max, raw);

	if (md && tuf_md_verify(u->root, role, md) < 0) {
		tuf_md_free(md);
		md = NULL;
	}
	return md;
}

static int
update_timestamp(struct tuf_updater *u, struct buf *raw)
{
	struct tuf_md *old, *md;
	long status;

	old = load_verified(u, "timestamp", TUF_TIMESTAMP, TUF_TIMESTAMP_MAX,
	    raw);
	if (fetch_md(u, "timestamp", 0, TUF_TIMESTAMP_MAX, raw, &status) < 0)
		goto fail;
	if (!(md = tuf_md_parse(raw->p, raw->len, TUF_TIMESTAMP,
	    "timestamp")))
		goto fail;
	if (tuf_md_verify(u->root, "timestamp", md) < 0)
		goto fail_md;
	if (old && md->version < old->version) {
		hw_err_set(HW_EXIT_DATA, "timestamp version %lld is older than "
		    "the trusted %lld", (long long)md->version,
		    (long long)old->version);
		goto fail_md;
	}
	if (old && md->version == old->version) {
		/* nothing new: keep the trusted one */
		tuf_md_free(md);
		u->timestamp = old;
		return 0;
	}
	if (old && md->snapmeta.version < old->snapmeta.version) {
		hw_err_set(HW_EXIT_DATA, "timestamp lists snapshot version "
		    "%lld, older than the trusted %lld",
		    (long long)md->snapmeta.version,
		    (long long)old->snapmeta.version);
		goto fail_md;
	}
	if (expired(u, md, "timestamp") < 0 || persist(u, "timestamp", raw) < 0)
		goto fail_md;
	tuf_md_free(old);
	u->timestamp = md;
	return 0;
fail_md:
	tuf_md_free(md);
fail:
	tuf_md_free(old);
	return -1;
}

/* length_hashes: raw against what a META_FILE lists of it */
static int
length_hashes(const struct tuf_metafile *mf, const struct buf *raw,
    const char *what)
{
	if (mf->length >= 0 && (size_t)mf->length != raw->len)
		return hw_err_set(HW_EXIT_DATA, "metadata '%s' is %zu bytes, "
		    "not the %lld listed", what, raw->len,
		    (long long)mf->length);
	return mf->hashes ? tuf_hashes_check(mf->hashes, raw->p, raw->len,
	    what) : 0;
}

/* no_rollback: every role old lists, md lists at the same or a later version */
static int
no_rollback(const struct tuf_md *old, const struct tuf_md *md)
{
	struct tuf_metafile a, b;
	const struct jval *nv;
	size_t i;

	for (i = 0; i < old->meta->n; i++) {
		nv = json_get(md->meta, old->meta->u.m[i].k);
		if (!nv)
			return hw_err_set(HW_EXIT_DATA, "snapshot no longer "
			    "lists '%s'", old->meta->u.m[i].k);
		tuf_metafile_parse(old->meta->u.m[i].v, &a, "snapshot");
		tuf_metafile_parse(nv, &b, "snapshot");
		if (b.version < a.version)
			return hw_err_set(HW_EXIT_DATA, "snapshot lists '%s' "
			    "version %lld, older than the trusted %lld",
			    old->meta->u.m[i].k, (long long)b.version,
			    (long long)a.version);
	}
	return 0;
}

static int
snapshot_final(const struct tuf_updater *u, const struct tuf_md *md)
{
	if (md->version != u->timestamp->snapmeta.version)
		return hw_err_set(HW_EXIT_DATA, "snapshot version %lld is not "
		    "the %lld timestamp lists", (long long)md->version,
		    (long long)u->timestamp->snapmeta.version);
	return expired(u, md, "snapshot");
}

static int
update_snapshot(struct tuf_updater *u, struct buf *raw)
{
	const struct tuf_metafile *mf = &u->timestamp->snapmeta;
	struct tuf_md *old, *md = NULL;
	long status;

	if (expired(u, u->timestamp, "timestamp") < 0)
		return -1;
	old = load_verified(u, "snapshot", TUF_SNAPSHOT, TUF_SNAPSHOT_MAX, raw);
	if (old && snapshot_final(u, old) == 0) {
		u->snapshot = old;
		return 0;
	}
	if (fetch_md(u, "snapshot", u->root->consistent ? mf->version : 0,
	    mf->length >= 0 ? (size_t)mf->length : TUF_SNAPSHOT_MAX, raw,
	    &status) < 0 || length_hashes(mf, raw, "snapshot") < 0)
		goto fail;
	if (!(md = tuf_md_parse(raw->p, raw->len, TUF_SNAPSHOT, "snapshot")))
		goto fail;
	if (tuf_md_verify(u->root, "snapshot", md) < 0 ||
	    (old && no_rollback(old, md) < 0) || snapshot_final(u, md) < 0 ||
	    persist(u, "snapshot", raw) < 0)
		goto fail;
	tuf_md_free(old);
	u->snapshot = md;
	return 0;
fail:
	tuf_md_free(md);
	tuf_md_free(old);
	return -1;
}

static struct tuf_md *
trusted_role(const struct tuf_updater *u, const char *role)
{
	size_t i;

	for (i = 0; i < u->nroles; i++)
		if (!strcmp(u->roles[i]->name, role))
			return u->roles[i];
	return NULL;
}

/* check_targets: md is role as snapshot lists it, signed by its delegator */
static int
check_targets(struct tuf_updater *u, const char *role,
    const struct tuf_md *parent, const struct tuf_metafile *mf,
    struct tuf_md *md)
{
	if (tuf_md_verify(parent, role, md) < 0)
		return -1;
	if (md->version != mf->version)
		return hw_err_set(HW_EXIT_DATA, "metadata '%s' version %lld is "
		    "not the %lld snapshot lists", role, (long long)md->version,
		    (long long)mf->version);
	return expired(u, md, role);
}

static struct tuf_md *
fetch_targets(struct tuf_updater *u, const char *role,
    const struct tuf_md *parent, const struct tuf_metafile *mf,
    struct buf *raw)
{
	struct tuf_md *md;
	long status;

	if (fetch_md(u, role, u->root->consistent ? mf->version : 0,
	    mf->length >= 0 ? (size_t)mf->length : TUF_TARGETS_MAX, raw,
	    &status) < 0 || length_hashes(mf, raw, role) < 0)
		return NULL;
	if (!(md = tuf_md_parse(raw->p, raw->len, TUF_TARGETS, role)))
		return NULL;
	if (check_targets(u, role, parent, mf, md) < 0 ||
	    persist(u, role, raw) < 0) {
		tuf_md_free(md);
		return NULL;
	}
	return md;
}

struct tuf_md *
tuf_load_targets(struct tuf_updater *u, const char *role,
    const struct tuf_md *parent)
{
	struct tuf_metafile mf;
	struct tuf_md *md;
	struct buf raw;
	char *name;

	if ((md = trusted_role(u, role)))
		return md;
	name = xasprintf("%s.json", role);
	if (tuf_metafile_parse(json_get(u->snapshot->meta, name), &mf,
	    "snapshot") < 0) {
		hw_err_set(HW_EXIT_DATA, "snapshot does not list '%s'", name);
		free(name);
		return NULL;
	}
	free(name);
	buf_init(&raw);
	md = load_local(u, role, TUF_TARGETS, TUF_TARGETS_MAX, &raw);
	if (md && (length_hashes(&mf, &raw, role) < 0 ||
	    check_targets(u, role, parent, &mf, md) < 0)) {
		tuf_md_free(md);
		md = NULL;
	}
	if (!md)
		md = fetch_targets(u, role, parent, &mf, &raw);
	buf_release(&raw);
	if (!md)
		return NULL;
	md->name = xstrdup(role);
	u->roles = xrealloc(u->roles, (u->nroles + 1) * sizeof *u->roles);
	u->roles[u->nroles++] = md;
	return md;
}

int
tuf_refresh(struct tuf_updater *u)
{
	struct buf raw;
	int rc = -1;

	drop_roles(u);
	u->refreshed = 0;
	/* the one reading of the clock for this update */
	u->now = time(NULL);
	buf_init(&raw);
	if (update_root(u, &raw) < 0 || update_timestamp(u, &raw) < 0 ||
	    update_snapshot(u, &raw) < 0)
		goto out;
	if (!tuf_load_targets(u, "targets", u->root))
		goto out;
	u->refreshed = 1;
	rc = 0;
out:
	buf_release(&raw);
	return rc;
}
