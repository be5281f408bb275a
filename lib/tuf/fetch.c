/* fetch.c - metadata and targets over HTTP(S) or from a confined file:// */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "tuf/tuf.h"

#define USER_AGENT "heartwood-skill-client/1"
#define TIMEOUT_MS 60000L

void
tuf_quote(struct buf *b, const char *s, const char *keep)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p;

	for (p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p) ||
		    (keep && strchr(keep, *p))) {
			buf_addc(b, (char)*p);
			continue;
		}
		buf_addc(b, '%');
		buf_addc(b, hex[*p >> 4]);
		buf_addc(b, hex[*p & 15]);
	}
}

int
tuf_fetcher_init(struct tuf_fetcher *f, const char *base_url)
{
	static int global;
	size_t n;

	memset(f, 0, sizeof *f);
	f->timeout_ms = TIMEOUT_MS;
	if (!strncmp(base_url, "file://", 7)) {
		if (base_url[7] != '/')
			return hw_err_set(HW_EXIT_USAGE, "file URL '%s' is not "
			    "absolute", base_url);
		f->confine = xstrdup(base_url + 7);
		n = strlen(f->confine);
		while (n > 1 && f->confine[n - 1] == '/')
			f->confine[--n] = '\0';
		return 0;
	}
	if (strncmp(base_url, "http://", 7) && strncmp(base_url, "https://", 8))
		return hw_err_set(HW_EXIT_USAGE, "URL '%s' is not http, https "
		    "or file", base_url);
	if (!global++)
		curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!(f->curl = curl_easy_init()))
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot start libcurl");
	return 0;
}

void
tuf_fetcher_release(struct tuf_fetcher *f)
{
	if (f->curl)
		curl_easy_cleanup(f->curl);
	free(f->confine);
	memset(f, 0, sizeof *f);
}

static int
http_get(struct tuf_fetcher *f, const char *url, size_t max,
    struct buf *out, long *status)
{
	struct buf_sink s = { out, max, 0 };
	CURL *c = f->curl;
	CURLcode rc;

	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, USER_AGENT);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, f->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, f->timeout_ms);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, NULL);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)max);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	if (*status == 404 || *status == 403)
		return hw_err_set(HW_EXIT_NOINPUT, "cannot fetch '%s': HTTP "
		    "%ld",
		    url, *status);
	if (s.over || rc == CURLE_FILESIZE_EXCEEDED)
		return hw_err_set(HW_EXIT_DATA, "cannot fetch '%s': more than "
		    "%zu bytes", url, max);
	if (rc != CURLE_OK)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot fetch '%s': %s",
		    url, curl_easy_strerror(rc));
	if (*status != 200)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot fetch '%s': "
		    "HTTP %ld", url, *status);
	return 0;
}

/* walk opens rel under dir one component at a time, never following */
static int
walk(int dir, char *rel)
{
	char *comp, *save = NULL, *next;
	int fd = dup(dir), sub;

	for (comp = strtok_r(rel, "/", &save); comp && fd >= 0; comp = next) {
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(comp, "..") || !strcmp(comp, ".")) {
			close(fd);
			errno = EACCES;
			return -1;
		}
		sub = openat(fd, comp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC |
		    (next ? O_DIRECTORY : O_NONBLOCK));
		close(fd);
		fd = sub;
	}
	return fd;
}

static int
file_get(struct tuf_fetcher *f, const char *url, size_t max,
    struct buf *out, long *status)
{
	size_t n = strlen(f->confine);
	const char *path = url + 7;
	char *rel;
	struct stat st;
	int dir, fd, rc;

	if (strncmp(url, "file://", 7) || strncmp(path, f->confine, n) ||
	    path[n] != '/' || strstr(path, "//"))
		return hw_err_set(HW_EXIT_DATA, "URL '%s' is outside the "
		    "repository", url);
	if ((dir = open(f->confine, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return hw_err_sys("cannot open '%s'", f->confine);
	rel = xstrdup(path + n + 1);
	fd = walk(dir, rel);
	free(rel);
	close(dir);
	if (fd < 0 && errno == ENOENT) {
		*status = 404;
		return hw_err_set(HW_EXIT_NOINPUT, "cannot fetch '%s': not "
		    "found", url);
	}
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return hw_err_set(HW_EXIT_DATA, "cannot fetch '%s': not a "
		    "regular file inside the repository", url);
	}
	rc = read_fd(fd, url, max, out);
	close(fd);
	if (rc < 0)
		return hw_err_set(HW_EXIT_DATA, "cannot fetch '%s': more than "
		    "%zu bytes or unreadable", url, max);
	*status = 200;
	return 0;
}

int
tuf_fetch(struct tuf_fetcher *f, const char *url, size_t max,
    struct buf *out, long *status)
{
	buf_clear(out);
	*status = 0;
	if (f->confine)
		return file_get(f, url, max, out, status);
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8))
		return hw_err_set(HW_EXIT_DATA, "URL '%s' is not http or https",
		    url);
	return http_get(f, url, max, out, status);
}
