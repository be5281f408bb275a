/* zipread.c - a ZIP (ZIP64) central directory read strictly, for bundles */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/model.h"

#define EOCD_MIN 22
#define TAIL_MAX (65535 + EOCD_MIN)
#define CD_MAX (256u << 20)

static uint16_t
u16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t
u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
u64(const unsigned char *p)
{
	return (uint64_t)u32(p) | (uint64_t)u32(p + 4) << 32;
}

static int
bad(const char *path, const char *why)
{
	return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': %s", path, why);
}

static int
pread_all(int fd, void *p, size_t n, uint64_t off, const char *path)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(fd, (char *)p + got, n - got,
		    (off_t)(off + got));

		if (r < 0)
			return hw_err_sys("cannot read '%s'", path);
		if (r == 0)
			return bad(path, "truncated");
		got += (size_t)r;
	}
	return 0;
}

/* eocd: where the central directory is and how many entries it has */
static int
eocd(struct zipdir *z, int fd, const char *path)
{
	unsigned char *t, z64[56], loc[20];
	size_t n = z->size < TAIL_MAX ? (size_t)z->size : TAIL_MAX, i;
	uint64_t at;
	int rc = -1;

	if (z->size < EOCD_MIN)
		return bad(path, "too short for a ZIP file");
	t = xmalloc(n);
	if (pread_all(fd, t, n, z->size - n, path) < 0)
		goto out;
	for (i = n - EOCD_MIN + 1; i-- > 0;)
		if (u32(t + i) == 0x06054b50 && i + EOCD_MIN + u16(t + i + 20)
		    == n)
			break;
	if (i == (size_t)-1) {
		bad(path, "no end of central directory");
		goto out;
	}
	at = z->size - n + i;
	z->count = u16(t + i + 10);
	z->cd_size = u32(t + i + 12);
	z->cd_off = u32(t + i + 16);
	if (u16(t + i + 4) || u16(t + i + 6) || u16(t + i + 8) != z->count) {
		bad(path, "a multi-disk archive");
		goto out;
	}
	if (z->count == 0xffff || z->cd_size == 0xffffffff ||
	    z->cd_off == 0xffffffff) {
		if (at < 20 || pread_all(fd, loc, 20, at - 20, path) < 0 ||
		    u32(loc) != 0x07064b50 || u64(loc + 8) + 56 > at - 20 ||
		    pread_all(fd, z64, 56, u64(loc + 8), path) < 0 ||
		    u32(z64) != 0x06064b50) {
			hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': a "
			    "broken ZIP64 end of central directory", path);
			goto out;
		}
		z->count = u64(z64 + 32);
		z->cd_size = u64(z64 + 40);
		z->cd_off = u64(z64 + 48);
		at = u64(loc + 8);
	}
	if (z->cd_off > at || z->cd_size > at - z->cd_off) {
		bad(path, "a truncated central directory");
		goto out;
	}
	rc = 0;
out:
	free(t);
	return rc;
}

/* zip64: the sizes and offset the extra field 0x0001 carries */
static int
zip64(const unsigned char *x, size_t n, struct zipent *e, int need_u,
    int need_c, int need_o)
{
	while (n >= 4) {
		size_t len = u16(x + 2), k = 0;

		if (len + 4 > n)
			return -1;
		if (u16(x) == 1) {
			if (need_u && (k + 8 > len || (e->size = u64(x + 4 +
			    k), k += 8, 0)))
				return -1;
			if (need_c && (k + 8 > len || (e->csize = u64(x + 4 +
			    k), k += 8, 0)))
				return -1;
			if (need_o && (k + 8 > len || (e->offset = u64(x + 4 +
			    k), k += 8, 0)))
				return -1;
			return 0;
		}
		x += len + 4, n -= len + 4;
	}
	return need_u || need_c || need_o ? -1 : 0;
}

static int
entry(struct zipdir *z, const unsigned char *p, size_t left, size_t *used,
    struct zipent *e, const char *path)
{
	size_t nl, xl, cl;
	uint32_t mode;

	if (left < 46 || u32(p) != 0x02014b50)
		return bad(path, "a broken central directory entry");
	nl = u16(p + 28), xl = u16(p + 30), cl = u16(p + 32);
	if (46 + nl + xl + cl > left)
		return bad(path, "a broken central directory entry");
	*used = 46 + nl + xl + cl;
	e->flags = u16(p + 8);
	e->method = u16(p + 10);
	e->crc = u32(p + 16);
	e->csize = u32(p + 20);
	e->size = u32(p + 24);
	e->offset = u32(p + 42);
	e->name = xasprintf("%.*s", (int)nl, (const char *)p + 46);
	if (strlen(e->name) != nl)
		return bad(path, "a member name with a NUL byte");
	if (zip64(p + 46 + nl, xl, e, e->size == 0xffffffff,
	    e->csize == 0xffffffff, e->offset == 0xffffffff) < 0)
		return bad(path, "a broken ZIP64 extra field");
	mode = u32(p + 38) >> 16;
	e->unix_mode = p[5] == 3 ? mode : 0;
	(void)z;
	return 0;
}

int
zipdir_read(struct zipdir *z, int fd, const char *path, uint64_t max)
{
	unsigned char *cd = NULL, *p;
	struct stat st;
	uint64_t i;
	size_t used = 0;
	int rc = -1;

	memset(z, 0, sizeof *z);
	if (fstat(fd, &st) < 0)
		return hw_err_sys("cannot stat '%s'", path);
	z->size = (uint64_t)st.st_size;
	if (eocd(z, fd, path) < 0)
		return -1;
	if (z->count > max)
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': more "
		    "than %llu entries", path, (unsigned long long)max);
	if (z->cd_size > CD_MAX)
		return bad(path, "a central directory over 256 MiB");
	cd = xmalloc(z->cd_size ? z->cd_size : 1);
	if (pread_all(fd, cd, z->cd_size, z->cd_off, path) < 0)
		goto out;
	z->e = xcalloc(z->count ? z->count : 1, sizeof *z->e);
	for (i = 0, p = cd; i < z->count; i++, p += used) {
		if (entry(z, p, (size_t)(cd + z->cd_size - p), &used, &z->e[i],
		    path) < 0)
			goto out;
		z->n = i + 1;
	}
	if (p != cd + z->cd_size) {
		bad(path, "the central directory and its entry count differ");
		goto out;
	}
	rc = 0;
out:
	free(cd);
	if (rc < 0)
		zipdir_release(z);
	return rc;
}

int
zipent_data(const struct zipdir *z, const struct zipent *e, int fd,
    const char *path, uint64_t *at)
{
	unsigned char h[30];
	char *name;
	size_t nl;
	int same;

	if (e->offset > z->cd_off || pread_all(fd, h, 30, e->offset, path) < 0)
		return bad(path, "a member outside the archive");
	if (u32(h) != 0x04034b50)
		return bad(path, "a broken local header");
	nl = u16(h + 26);
	name = xmalloc(nl + 1);
	if (pread_all(fd, name, nl, e->offset + 30, path) < 0) {
		free(name);
		return -1;
	}
	same = nl == strlen(e->name) && !memcmp(name, e->name, nl);
	free(name);
	if (!same || u16(h + 8) != e->method || (u16(h + 6) & 1))
		return hw_err_set(HW_EXIT_DATA, "invalid bundle '%s': the "
		    "local header of '%s' differs from the central directory",
		    path, e->name);
	*at = e->offset + 30 + nl + u16(h + 28);
	if (*at > z->cd_off || e->size > z->cd_off - *at)
		return bad(path, "a member that runs past the archive");
	return 0;
}

void
zipdir_release(struct zipdir *z)
{
	uint64_t i;

	for (i = 0; i < z->n; i++)
		free(z->e[i].name);
	free(z->e);
	memset(z, 0, sizeof *z);
}
