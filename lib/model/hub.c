/* hub.c - the model hub over libcurl: endpoint, token, JSON, ranged files */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"

#define JSON_MAX (16u << 20)
#define CONNECT_MS 30000L
#define BLOCK (1u << 20)

static int
loopback_host(const char *h)
{
	return !strcmp(h, "localhost") || !strncmp(h, "127.", 4) ||
	    !strcmp(h, "[::1]") || !strcmp(h, "::1");
}

/* check_endpoint: https anywhere, http on loopback; nothing but a base */
static int
check_endpoint(const char *url, int *loop)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *user = NULL, *query = NULL,
	    *frag = NULL;
	int rc = -1;

	if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
		hw_err_set(HW_EXIT_USAGE, "invalid HF_ENDPOINT '%s': not a "
		    "URL", url);
		goto out;
	}
	curl_url_get(u, CURLUPART_USER, &user, 0);
	curl_url_get(u, CURLUPART_QUERY, &query, 0);
	curl_url_get(u, CURLUPART_FRAGMENT, &frag, 0);
	*loop = loopback_host(host);
	if (user || query || frag)
		hw_err_set(HW_EXIT_USAGE, "invalid HF_ENDPOINT '%s': a user, "
		    "query or fragment", url);
	else if (strcmp(scheme, "https") && !(*loop &&
	    !strcmp(scheme, "http")))
		hw_err_set(HW_EXIT_USAGE, "invalid HF_ENDPOINT '%s': https "
		    "is required but on loopback", url);
	else
		rc = 0;
out:
	curl_free(scheme), curl_free(host), curl_free(user);
	curl_free(query), curl_free(frag);
	curl_url_cleanup(u);
	return rc;
}

/* token_file reads an owner-only token file; missing is no token */
static int
token_file(struct hub *h, const char *path)
{
	struct stat st;
	struct buf b;
	size_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : hw_err_set(HW_EXIT_DATA,
		    "cannot read token file '%s': %s", path,
		    errno == ELOOP ? "a symlink" : strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return hw_err_set(HW_EXIT_DATA, "refusing token file '%s': "
		    "not a regular file that only its owner can read", path);
	}
	buf_init(&b);
	if (read_fd(fd, path, 64 * 1024, &b) < 0) {
		close(fd);
		buf_wipe(&b);
		return -1;
	}
	close(fd);
	for (n = b.len; n && strchr(" \t\r\n", b.p[n - 1]); n--)
		;
	if (n)
		h->token = xasprintf("%.*s", (int)n, b.p);
	buf_wipe(&b);
	return 0;
}

static int
load_token(struct hub *h)
{
	const char *t = getenv("HF_TOKEN"), *p = getenv("HF_TOKEN_PATH");
	char *dflt = NULL;
	int rc;

	if (t && *t) {
		h->token = xstrdup(t);
		return 0;
	}
	if (p && *p)
		return token_file(h, p);
	if ((p = getenv("HF_HOME")) && *p) {
		dflt = path_join(p, "token");
	} else {
		char *c = user_dir("XDG_CACHE_HOME", ".cache");

		if (!c)
			return 0;
		dflt = xasprintf("%s/huggingface/token", c);
		free(c);
	}
	rc = token_file(h, dflt);
	free(dflt);
	return rc;
}

int
hub_init(struct hub *h)
{
	const char *e = getenv("HF_ENDPOINT");
	size_t n;
	int loop;

	memset(h, 0, sizeof *h);
	h->retry_ms[0] = 1000, h->retry_ms[1] = 4000;
	if (!e || !*e)
		return hw_err_set(HW_EXIT_USAGE, "no hub: set HF_ENDPOINT to "
		    "the model hub's address");
	if (check_endpoint(e, &loop) < 0)
		return -1;
	n = strlen(e);
	while (n && e[n - 1] == '/')
		n--;
	h->endpoint = xasprintf("%.*s", (int)n, e);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (load_token(h) < 0) {
		hub_release(h);
		return -1;
	}
	if (h->token)
		redact_secret(h->token, strlen(h->token));
	return 0;
}

void
hub_release(struct hub *h)
{
	free(h->endpoint);
	if (h->token) {
		mem_wipe(h->token, strlen(h->token));
		free(h->token);
	}
	memset(h, 0, sizeof *h);
}

/* common: the options every request shares */
static void
common(struct hub *h, CURL *c, const char *url)
{
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "heartwood/" HW_VERSION);
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "identity");
	curl_easy_setopt(c, CURLOPT_UNRESTRICTED_AUTH, 0L);
	if (!strncmp(url, "http://", 7))
		curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	if (h->token) {
		/* a bearer set this way goes to the first host only */
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
		curl_easy_setopt(c, CURLOPT_XOAUTH2_BEARER, h->token);
	}
}

struct jval *
hub_get_json(struct hub *h, const char *url, const char *what,
    struct arena *a)
{
	CURL *c = curl_easy_init();
	struct jval *v = NULL;
	struct buf b;
	struct buf_sink sink = { &b, JSON_MAX, 0 };
	char err[160];
	long code = 0;
	CURLcode rc;

	buf_init(&b);
	common(h, c, url);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 120000L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (rc != CURLE_OK)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot ask the hub about "
		    "'%s': %s", what, rc == CURLE_WRITE_ERROR ?
		    "answer over 16 MiB" : curl_easy_strerror(rc));
	else if (code != 200)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot ask the hub about "
		    "'%s': status %ld", what, code);
	else if (!(v = json_parse(a, b.p ? b.p : "", b.len, err,
	    sizeof err)) || v->t != J_OBJECT) {
		hw_err_set(HW_EXIT_DATA, "hub answer about '%s': %s", what,
		    v ? "not a JSON object" : err);
		v = NULL;
	}
	buf_release(&b);
	curl_easy_cleanup(c);
	return v;
}

/* ---- one file, ranged ---- */

enum { SINK_OK, SINK_STATUS, SINK_LONG, SINK_IO, SINK_COMMIT, SINK_RANGE };

struct sink {
	struct hub *h;
	const struct hub_file *f;
	CURL *c;
	int fd, state, started;
	int64_t have, start;
	long status;
	struct sha256 sha;
	EVP_MD_CTX *sha1;
	char commit[80];
};

static void
hashes_reset(struct sink *s)
{
	char pre[40];
	int n = snprintf(pre, sizeof pre, "blob %lld", (long long)s->f->size);

	sha256_release(&s->sha);
	sha256_init(&s->sha);
	EVP_DigestInit_ex(s->sha1, EVP_sha1(), NULL);
	EVP_DigestUpdate(s->sha1, pre, (size_t)n + 1);
}

static void
hashes_add(struct sink *s, const void *p, size_t n)
{
	sha256_update(&s->sha, p, n);
	EVP_DigestUpdate(s->sha1, p, n);
}

/* first_bytes: the answer's status decides whether the range held */
static int
first_bytes(struct sink *s)
{
	curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->status);
	s->started = 1;
	if (s->status == 206 && s->start > 0)
		return 0;
	if (s->status != 200) {
		s->state = SINK_STATUS;
		return -1;
	}
	if (s->have > 0) {	/* the whole file again: start over */
		if (ftruncate(s->fd, 0) < 0 || lseek(s->fd, 0, SEEK_SET) < 0) {
			s->state = SINK_IO;
			return -1;
		}
		s->have = 0;
		hashes_reset(s);
	}
	return 0;
}

static size_t
on_data(char *p, size_t sz, size_t n, void *arg)
{
	struct sink *s = arg;

	n *= sz;
	if (!s->started && first_bytes(s) < 0)
		return 0;
	if (s->have + (int64_t)n > s->f->size) {
		s->state = SINK_LONG;
		return 0;
	}
	fault_point("model-chunk");
	if (write_all(s->fd, p, n, s->f->path) < 0) {
		s->state = SINK_IO;
		return 0;
	}
	hashes_add(s, p, n);
	s->have += (int64_t)n;
	if (s->h->progress)
		s->h->progress(s->h->progress_arg, s->f->path, s->have,
		    s->f->size, 0);
	return n;
}

static size_t
on_header(char *p, size_t sz, size_t n, void *arg)
{
	struct sink *s = arg;
	size_t len = sz * n;
	long long a, b, t;

	if (len > 14 && !strncasecmp(p, "X-Repo-Commit:", 14)) {
		size_t i = 14, j;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		for (j = len; j > i && strchr(" \t\r\n", p[j - 1]); j--)
			;
		if (j - i >= sizeof s->commit || strncmp(p + i, s->f->commit,
		    j - i) || strlen(s->f->commit) != j - i) {
			snprintf(s->commit, sizeof s->commit, "%.*s",
			    (int)(j - i < 72 ? j - i : 72), p + i);
			s->state = SINK_COMMIT;
			return 0;
		}
	}
	if (len > 14 && !strncasecmp(p, "Content-Range:", 14) &&
	    sscanf(p + 14, " bytes %lld-%lld/%lld", &a, &b, &t) == 3 &&
	    (a != s->start || t != s->f->size)) {
		s->state = t != s->f->size ? SINK_LONG : SINK_RANGE;
		return 0;
	}
	return len;
}

static int
transient(CURLcode rc, long status)
{
	if (rc == CURLE_OK)
		return status == 429 || status >= 500;
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_PARTIAL_FILE ||
	    rc == CURLE_RECV_ERROR || rc == CURLE_SEND_ERROR ||
	    rc == CURLE_GOT_NOTHING || rc == CURLE_OPERATION_TIMEDOUT;
}

/* attempt: one GET from s->have on; 0 done, 1 retry, -1 failed */
static int
attempt(struct sink *s)
{
	char range[48];
	CURLcode rc;
	int r = -1;

	s->c = curl_easy_init();
	s->state = SINK_OK, s->started = 0, s->status = 0;
	s->start = s->have;
	common(s->h, s->c, s->f->url);
	curl_easy_setopt(s->c, CURLOPT_FOLLOWLOCATION, 1L);
	curl_easy_setopt(s->c, CURLOPT_MAXREDIRS, 5L);
	curl_easy_setopt(s->c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(s->c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(s->c, CURLOPT_HEADERDATA, s);
	if (s->have > 0) {
		snprintf(range, sizeof range, "%lld-", (long long)s->have);
		curl_easy_setopt(s->c, CURLOPT_RANGE, range);
	}
	rc = curl_easy_perform(s->c);
	if (!s->started)
		curl_easy_getinfo(s->c, CURLINFO_RESPONSE_CODE, &s->status);
	if (s->state == SINK_LONG)
		hw_err_set(HW_EXIT_DATA, "'%s': the hub sent more than its "
		    "size of %lld bytes", s->f->path, (long long)s->f->size);
	else if (s->state == SINK_COMMIT)
		hw_err_set(HW_EXIT_DATA, "'%s': the hub served commit '%s', "
		    "not the pinned '%s'", s->f->path, s->commit,
		    s->f->commit);
	else if (s->state == SINK_RANGE)
		hw_err_set(HW_EXIT_DATA, "'%s': the hub answered another "
		    "range than bytes %lld-", s->f->path,
		    (long long)s->start);
	else if (s->state == SINK_IO)
		;	/* write_all's error stands */
	else if (transient(rc, s->status))
		r = 1;
	else if (rc == CURLE_OK && s->status != 200 && s->status != 206)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot download '%s': status "
		    "%ld", s->f->path, s->status);
	else if (rc != CURLE_OK && s->state == SINK_STATUS)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot download '%s': status "
		    "%ld", s->f->path, s->status);
	else if (rc != CURLE_OK)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot download '%s': %s",
		    s->f->path, curl_easy_strerror(rc));
	else
		r = 0;
	if (r == 1)
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot download '%s': %s",
		    s->f->path, rc == CURLE_OK ? "server error" :
		    curl_easy_strerror(rc));
	curl_easy_cleanup(s->c);
	s->c = NULL;
	return r;
}

/* rehash: the bytes dest already holds feed both digests */
static int
rehash(struct sink *s)
{
	char *blk = xmalloc(BLOCK);
	struct stat st;
	ssize_t r;

	if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		free(blk);
		return hw_err_set(HW_EXIT_DATA, "'%s': not a regular file",
		    s->f->path);
	}
	if (st.st_size > s->f->size && ftruncate(s->fd, 0) < 0) {
		free(blk);
		return hw_err_sys("cannot truncate '%s'", s->f->path);
	}
	while ((r = read(s->fd, blk, BLOCK)) > 0) {
		hashes_add(s, blk, (size_t)r);
		s->have += r;
	}
	free(blk);
	if (r < 0)
		return hw_err_sys("cannot read '%s'", s->f->path);
	return 0;
}

/* check: size and every published digest; sha_out gets the SHA-256 */
static int
check(struct sink *s, char sha_out[SHA256_HEX + 1])
{
	unsigned char d[32], d1[20];
	unsigned int n1 = 20;
	char hex1[41];

	sha256_final(&s->sha, d);
	hex_encode(d, 32, sha_out);
	EVP_DigestFinal_ex(s->sha1, d1, &n1);
	hex_encode(d1, 20, hex1);
	if (s->have != s->f->size)
		return hw_err_set(HW_EXIT_DATA, "'%s': %lld bytes, not the "
		    "published %lld", s->f->path, (long long)s->have,
		    (long long)s->f->size);
	if (s->f->sha256 && strcmp(sha_out, s->f->sha256))
		return hw_err_set(HW_EXIT_DATA, "'%s': SHA-256 %s, not the "
		    "published %s", s->f->path, sha_out, s->f->sha256);
	if (s->f->blob && strcmp(hex1, s->f->blob))
		return hw_err_set(HW_EXIT_DATA, "'%s': git blob %s, not the "
		    "published %s", s->f->path, hex1, s->f->blob);
	return 0;
}

int
hub_fetch(struct hub *h, const struct hub_file *f, const char *dest,
    char sha_out[SHA256_HEX + 1])
{
	struct sink s = { .h = h, .f = f };
	int i, r = 0, rc = -1;

	s.fd = open(dest, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s.fd < 0)
		return hw_err_set(errno == ELOOP ? HW_EXIT_DATA : HW_EXIT_IO,
		    "cannot open '%s': %s", dest,
		    errno == ELOOP ? "a symlink" : strerror(errno));
	s.sha1 = EVP_MD_CTX_new();
	sha256_init(&s.sha);
	hashes_reset(&s);
	if (rehash(&s) < 0)
		goto out;
	for (i = 0; i < 3 && s.have < f->size; i++) {
		if (i > 0) {
			struct timespec ts = { h->retry_ms[i - 1] / 1000,
			    (long)(h->retry_ms[i - 1] % 1000) * 1000000L };

			nanosleep(&ts, NULL);
		}
		if ((r = attempt(&s)) <= 0)
			break;
	}
	if (r < 0 && s.state == SINK_LONG) {
		if (unlink(dest) < 0)
			hw_err_sys("cannot remove '%s'", dest);
		goto out;
	}
	if (r != 0)
		goto out;
	if (check(&s, sha_out) < 0) {
		if (unlink(dest) < 0)
			hw_err_sys("cannot remove '%s'", dest);
		goto out;
	}
	fault_point("model-file-fsync");
	if (fsync(s.fd) < 0) {
		hw_err_sys("cannot sync '%s'", dest);
		goto out;
	}
	if (h->progress)
		h->progress(h->progress_arg, f->path, s.have, f->size, 1);
	rc = 0;
out:
	sha256_release(&s.sha);
	EVP_MD_CTX_free(s.sha1);
	close(s.fd);
	return rc;
}
