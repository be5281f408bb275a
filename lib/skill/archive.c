/* archive.c - a catalog archive, extracted member by member (libarchive) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "skill/skill.h"

static int
bad(const char *name, const char *member, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid archive of skill '%s': member "
	    "'%s' %s", name, member, why);
}

/* aerr: libarchive's message for ar, without its line end */
static const char *
aerr(struct archive *ar, char *buf, size_t n)
{
	const char *e = archive_error_string(ar);

	snprintf(buf, n, "%s", e ? e : "unreadable");
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

static const struct jval *
listed(const struct jval *files, const char *path, size_t *at)
{
	size_t i;

	for (i = 0; i < files->n; i++)
		if (json_is_str(json_get(files->u.a[i], "path"), path)) {
			*at = i;
			return files->u.a[i];
		}
	return NULL;
}

static int
mkparents(int dir, const char *path)
{
	char *d = xstrdup(path), *p;

	for (p = strchr(d, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdirat(dir, d, 0755) < 0 && errno != EEXIST) {
			hw_err_sys("cannot create '%s'", d);
			free(d);
			return -1;
		}
		*p = '/';
	}
	free(d);
	return 0;
}

/* write_member streams the member's data to path, at most its size */
static int
write_member(struct archive *ar, int dir, const char *name, const char *m,
    const struct jval *f)
{
	const char *path = m + strlen(name) + 1;
	char why[200];
	unsigned char chunk[65536], d[32];
	char hex[SHA256_HEX + 1];
	struct sha256 h;
	int64_t size, got = 0;
	la_ssize_t r;
	int fd, rc = -1;

	json_get_int(f, "size", &size);
	if (mkparents(dir, path) < 0)
		return -1;
	fd = openat(dir, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600);
	if (fd < 0)
		return hw_err_sys("cannot create '%s'", path);
	sha256_init(&h);
	while ((r = archive_read_data(ar, chunk, sizeof chunk)) > 0) {
		if ((got += r) > size) {
			bad(name, m, "is larger than declared");
			goto out;
		}
		sha256_update(&h, chunk, (size_t)r);
		if (write_all(fd, chunk, (size_t)r, path) < 0)
			goto out;
	}
	if (r < 0) {
		hw_err_set(HW_EXIT_DATA, "invalid archive of skill '%s': "
		    "member '%s': %s", name, m, aerr(ar, why, sizeof why));
		goto out;
	}
	sha256_final(&h, d);
	hex_encode(d, 32, hex);
	if (got != size)
		bad(name, m, "is not its declared size");
	else if (!json_is_str(json_get(f, "sha256"), hex))
		bad(name, m, "does not have its sha256");
	else if (fchmod(fd, json_get(f, "executable")->t == J_TRUE ? 0755 :
	    0644) < 0 || fsync(fd) < 0)
		hw_err_sys("cannot write '%s'", path);
	else
		rc = 0;
out:
	sha256_release(&h);
	close(fd);
	return rc;
}

static int
one(struct archive *ar, struct archive_entry *ae, int dir,
    const struct jval *e, char *seen, struct smap *folded)
{
	const char *name = json_get_str(e, "name");
	const struct jval *files = json_get(e, "files"), *f;
	const char *m = archive_entry_pathname_utf8(ae);
	size_t n = strlen(name), at;
	char *fold;
	int64_t size;

	if (!m)
		m = archive_entry_pathname(ae);
	if (!m)
		return bad(name, "?", "has no name");
	if (strncmp(m, name, n) || m[n] != '/' ||
	    !(f = listed(files, m + n + 1, &at)))
		return bad(name, m, "is not NAME/PATH of a listed file");
	if (seen[at])
		return bad(name, m, "appears twice");
	seen[at] = 1;
	fold = skill_fold(m);
	if (smap_get(folded, fold, strlen(fold))) {
		free(fold);
		return bad(name, m, "collides with another member after case "
		    "folding");
	}
	smap_put(folded, fold, strlen(fold), fold);
	if (archive_entry_filetype(ae) != AE_IFREG ||
	    archive_entry_hardlink(ae) || archive_entry_symlink(ae))
		return bad(name, m, "is not a regular file");
	json_get_int(f, "size", &size);
	if (!archive_entry_size_is_set(ae) || archive_entry_size(ae) != size)
		return bad(name, m, "does not declare its listed size");
	return write_member(ar, dir, name, m, f);
}

int
skill_extract(const void *zip, size_t len, const struct jval *e, int dir)
{
	const struct jval *files = json_get(e, "files");
	struct archive *ar = archive_read_new();
	struct archive_entry *ae;
	struct smap folded;
	char *seen = xcalloc(files->n + 1, 1), why[200];
	size_t i, members = 0;
	int r, rc = 0;

	smap_init(&folded);
	archive_read_support_format_zip_seekable(ar);
	if (archive_read_open_memory(ar, zip, len) != ARCHIVE_OK)
		rc = hw_err_set(HW_EXIT_DATA, "invalid archive of skill '%s': "
		    "%s", json_get_str(e, "name"), aerr(ar, why, sizeof why));
	while (rc == 0 && (r = archive_read_next_header(ar, &ae)) !=
	    ARCHIVE_EOF) {
		if (r != ARCHIVE_OK || ++members > SKILL_MAX_FILES)
			rc = hw_err_set(HW_EXIT_DATA, "invalid archive of "
			    "skill '%s': %s", json_get_str(e, "name"),
			    r != ARCHIVE_OK ?
			    aerr(ar, why, sizeof why) : "too many members");
		else
			rc = one(ar, ae, dir, e, seen, &folded);
	}
	for (i = 0; rc == 0 && i < files->n; i++)
		if (!seen[i])
			rc = bad(json_get_str(e, "name"), json_get_str(
			    files->u.a[i], "path"), "is listed but missing");
	for (i = 0; i < folded.cap; i++)
		if (folded.e[i].k)
			free(folded.e[i].v);
	smap_release(&folded);
	free(seen);
	archive_read_free(ar);
	return rc;
}
