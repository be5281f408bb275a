/*
 * subscription.c - the ChatGPT subscription sign-in of the connection
 * openai-subscription: the OAuth 2.0 device authorization grant (RFC
 * 8628), the owner-only token file outside the project, refresh and sign
 * out (hw-model(1) SUBSCRIPTION).  Tokens are registered for redaction
 * as soon as they are read or received, and no message holds a token or
 * any text of the authorization server.
 */
#include <curl/curl.h>
#include <sodium.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf/conf.h"

#define ANSWER_MAX (64u << 10)
#define TOKEN_FILE_MAX (64u << 10)
#define TOKEN_MAX 16384
#define FIELD_MAX 2048
#define REFRESH_AHEAD_S 60
#define DEVICE_GRANT "urn:ietf:params:oauth:grant-type:device_code"

/* ---- where the tokens live ---- */

char *
sub_token_file(void)
{
	char *cfg = user_dir("XDG_CONFIG_HOME", ".config"), *p;

	if (!cfg)
		return NULL;
	p = path_join(cfg, "heartwood/credentials/" SUB_CONNECTION ".json");
	free(cfg);
	return p;
}

/*
 * private_dir: path is a directory of this user that nobody else may
 * enter (created 0700 when create and it is missing)
 */
static int
private_dir(const char *path, int create)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno != ENOENT || !create)
			return errno == ENOENT ? 0 : hw_err_sys("cannot stat "
			    "'%s'", path);
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return hw_err_sys("cannot create directory '%s'", path);
		if (lstat(path, &st) < 0)
			return hw_err_sys("cannot stat '%s'", path);
	}
	if (S_ISLNK(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
		    "symbolic link", path);
	if (!S_ISDIR(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a "
		    "directory", path);
	if (st.st_uid != geteuid())
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': owned by uid "
		    "%lu, not by you", path, (unsigned long)st.st_uid);
	if (st.st_mode & 077)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': others may "
		    "enter it (mode %04o; want 0700)", path,
		    (unsigned)st.st_mode & 07777);
	return 0;
}

/* token_dirs: the directories up to the token file's, checked (created) */
static int
token_dirs(const char *file, int create)
{
	char *dir = xstrdup(file), *s;
	int rc = -1;

	*strrchr(dir, '/') = 0;			/* .../heartwood/credentials */
	s = strrchr(dir, '/');
	*s = 0;					/* .../heartwood */
	if (create) {
		char *up = xstrdup(dir);

		*strrchr(up, '/') = 0;		/* the config home */
		if (*up && mkdir(up, 0700) < 0 && errno != EEXIST) {
			hw_err_sys("cannot create directory '%s'", up);
			free(up);
			goto out;
		}
		free(up);
	}
	if (create ? ensure_dir(dir) < 0 : owned_path(dir) < 0)
		goto out;
	*s = '/';
	rc = private_dir(dir, create);
out:
	free(dir);
	return rc;
}

/*
 * token_check: the token file fd (of path) is a regular file of this
 * user that nobody else may read or write
 */
static int
token_check(const char *path, const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a regular "
		    "file", path);
	if (st->st_uid != geteuid())
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': owned by uid "
		    "%lu, not by you", path, (unsigned long)st->st_uid);
	if (st->st_mode & 077)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': others may "
		    "read or write it (mode %04o; want 0600)", path,
		    (unsigned)st->st_mode & 07777);
	return 0;
}

void
sub_tokens_release(struct sub_tokens *t)
{
	char **s[] = { &t->access, &t->refresh, &t->account };

	for (size_t i = 0; i < 3; i++) {
		if (*s[i])
			mem_wipe(*s[i], strlen(*s[i]));
		free(*s[i]);
	}
	memset(t, 0, sizeof *t);
}

/* token_str: a token's text: printable ASCII, at most TOKEN_MAX bytes */
static int
token_str(const struct jval *o, const char *key, char **out)
{
	const char *v = json_get_str(o, key);
	size_t i, n;

	if (!v || !(n = strlen(v)) || n > TOKEN_MAX)
		return -1;
	for (i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return -1;
	*out = xstrdup(v);
	redact_secret(v, n);
	return 0;
}

static int
parse_tokens(const struct jval *o, struct sub_tokens *t)
{
	memset(t, 0, sizeof *t);
	if (!o || o->t != J_OBJECT ||
	    !json_is_str(json_get(o, "schema_version"), SUB_TOKENS_SCHEMA) ||
	    token_str(o, "access_token", &t->access) < 0 ||
	    token_str(o, "refresh_token", &t->refresh) < 0 ||
	    json_get_int(o, "expires_at", &t->expires_at) < 0) {
		sub_tokens_release(t);
		return -1;
	}
	if (json_get(o, "account_id"))
		token_str(o, "account_id", &t->account);
	return 0;
}

int
sub_tokens_load(struct sub_tokens *t)
{
	char *path = sub_token_file();
	struct arena a;
	struct jval *o;
	struct stat st;
	struct buf b;
	char err[128];
	int fd = -1, rc = -1;

	memset(t, 0, sizeof *t);
	arena_init(&a);
	buf_init(&b);
	if (!path || token_dirs(path, 0) < 0)
		goto out;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC |
	    O_NONBLOCK)) < 0) {
		if (errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "not signed in to ChatGPT: "
			    "run 'hw-model subscription sign-in'");
		else if (errno == ELOOP)
			hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a "
			    "symbolic link", path);
		else
			hw_err_sys("cannot open '%s'", path);
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		hw_err_sys("cannot stat '%s'", path);
		goto out;
	}
	if (token_check(path, &st) < 0 || read_fd(fd, path, TOKEN_FILE_MAX,
	    &b) < 0)
		goto out;
	o = valid_utf8(b.p ? b.p : "", b.len) ? json_parse(&a, b.p ? b.p : "",
	    b.len, err, sizeof err) : NULL;
	if (parse_tokens(o, t) < 0) {
		hw_err_set(HW_EXIT_DATA, "refusing '%s': not a token file of "
		    "heartwood (%s); sign in again", path, SUB_TOKENS_SCHEMA);
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	buf_wipe(&b);
	arena_release(&a);
	free(path);
	return rc;
}

int
sub_tokens_writable(void)
{
	char *path = sub_token_file();
	struct stat st;
	int rc = -1;

	if (!path || token_dirs(path, 1) < 0)
		goto out;
	if (lstat(path, &st) == 0 && (S_ISLNK(st.st_mode) ?
	    hw_err_set(HW_EXIT_DATA, "refusing '%s': it is a symbolic link",
	    path) : token_check(path, &st)) < 0)
		goto out;
	rc = 0;
out:
	free(path);
	return rc;
}

int
sub_tokens_save(const struct sub_tokens *t)
{
	char *path = sub_token_file();
	struct arena a;
	struct jval *o;
	struct buf b;
	int rc = -1;

	arena_init(&a);
	buf_init(&b);
	if (!path || sub_tokens_writable() < 0)
		goto out;
	o = json_obj(&a);
	json_add(&a, o, "access_token", json_str(&a, t->access));
	if (t->account)
		json_add(&a, o, "account_id", json_str(&a, t->account));
	json_add(&a, o, "expires_at", json_int(&a, t->expires_at));
	json_add(&a, o, "refresh_token", json_str(&a, t->refresh));
	json_add(&a, o, "schema_version", json_str(&a, SUB_TOKENS_SCHEMA));
	json_add(&a, o, "vendor", json_str(&a, "openai"));
	json_canon(&b, o);
	buf_addc(&b, '\n');
	rc = atomic_replace(path, b.p, b.len);
out:
	buf_wipe(&b);
	arena_release(&a);
	free(path);
	return rc;
}

int
sub_sign_out(int *was)
{
	char *path = sub_token_file();
	struct stat st;
	int rc = -1;

	*was = 0;
	if (!path || token_dirs(path, 0) < 0)
		goto out;
	if (lstat(path, &st) < 0) {
		rc = errno == ENOENT ? 0 : hw_err_sys("cannot stat '%s'", path);
		goto out;
	}
	/* a link is removed, never followed: nothing else is touched */
	if (unlink(path) < 0) {
		hw_err_sys("cannot remove '%s'", path);
		goto out;
	}
	*was = 1;
	rc = fsync_parent(path);
out:
	free(path);
	return rc;
}

/* ---- the authorization server ---- */

char *
sub_issuer(void)
{
	const char *v = getenv("HW_SUBSCRIPTION_ISSUER");
	char *n = NULL;

	if (!v || !*v)
		return xstrdup(SUB_ISSUER);
	if (strlen(v) > FIELD_MAX || endpoint_normalize(v, &n) < 0 ||
	    strncmp(n, "http", 4) || (strncmp(n, "https://", 8) &&
	    !endpoint_loopback(n))) {
		free(n);
		hw_err_set(HW_EXIT_USAGE, "invalid HW_SUBSCRIPTION_ISSUER: "
		    "expected an https URL, or http on loopback, without user "
		    "information, query or fragment");
		return NULL;
	}
	free(n);
	n = xstrdup(v);
	while (*n && n[strlen(n) - 1] == '/')
		n[strlen(n) - 1] = 0;
	return n;
}

/* form_add: "&k=v" form-encoded; the value's copies are wiped */
static void
form_add(CURL *c, struct buf *b, const char *k, const char *v)
{
	char *e = curl_easy_escape(c, v, 0);

	if (b->len)
		buf_addc(b, '&');
	buf_printf(b, "%s=%s", k, e ? e : "");
	if (e) {
		mem_wipe(e, strlen(e));
		curl_free(e);
	}
}

/*
 * post_form: POST the form fields (k, v pairs, NULL-ended) to
 * issuer PATH; *status the HTTP status, *o the answer parsed (NULL when
 * it is not a JSON object).  -1 only when no answer came (69).
 */
static int
post_form(const char *issuer, const char *path, const char *const *kv,
    struct arena *a, long *status, struct jval **o)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char *url = xasprintf("%s%s", issuer, path), err[128];
	struct buf form, ans;
	struct buf_sink sink = { &ans, ANSWER_MAX, 0 };
	CURLcode rc = CURLE_FAILED_INIT;
	char *n = NULL;

	buf_init(&form);
	buf_init(&ans);
	*o = NULL;
	*status = 0;
	if (c) {
		for (; kv[0]; kv += 2)
			form_add(c, &form, kv[0], kv[1]);
		h = curl_slist_append(h, "Accept: application/json");
		h = curl_slist_append(h, "Content-Type: "
		    "application/x-www-form-urlencoded");
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, buf_cstr(&form));
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
		curl_easy_setopt(c, CURLOPT_USERAGENT, "heartwood/" HW_VERSION);
		if (endpoint_normalize(url, &n) == 0 && endpoint_loopback(n))
			curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
		free(n);
		rc = curl_easy_perform(c);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
	}
	if (rc == CURLE_OK && ans.len && valid_utf8(ans.p, ans.len) &&
	    (*o = json_parse(a, ans.p, ans.len, err, sizeof err)) &&
	    (*o)->t != J_OBJECT)
		*o = NULL;
	curl_slist_free_all(h);
	if (c)
		curl_easy_cleanup(c);
	buf_wipe(&form);
	buf_wipe(&ans);
	free(url);
	if (rc != CURLE_OK)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "the ChatGPT "
		    "authorization server could not be reached");
	return 0;
}

/* field: a displayable field of the server's answer (printable ASCII) */
static char *
field(const struct jval *o, const char *key)
{
	const char *v = json_get_str(o, key);
	size_t i, n;

	if (!v || !(n = strlen(v)) || n > FIELD_MAX)
		return NULL;
	for (i = 0; i < n; i++)
		if (v[i] < 0x21 || v[i] > 0x7e)
			return NULL;
	return xstrdup(v);
}

void
sub_device_release(struct sub_device *d)
{
	free(d->issuer);
	if (d->device_code)
		mem_wipe(d->device_code, strlen(d->device_code));
	free(d->device_code);
	free(d->user_code);
	free(d->verification_uri);
	free(d->verification_uri_complete);
	memset(d, 0, sizeof *d);
}

/* verification_ok: a URL the user may be sent to: https, or loopback */
static int
verification_ok(const char *u)
{
	char *n = NULL;
	int ok = u && endpoint_normalize(u, &n) == 0 && (!strncmp(n,
	    "https://", 8) || (!strncmp(n, "http://", 7) &&
	    endpoint_loopback(n)));

	free(n);
	return ok;
}

int
sub_device_start(struct sub_device *d)
{
	const char *kv[] = { "client_id", SUB_CLIENT_ID, "scope", SUB_SCOPE,
		NULL };
	struct arena a;
	struct jval *o;
	long status;
	int rc = -1;

	memset(d, 0, sizeof *d);
	arena_init(&a);
	if (!(d->issuer = sub_issuer()) || post_form(d->issuer,
	    SUB_DEVICE_PATH, kv, &a, &status, &o) < 0)
		goto out;
	if (status != 200 || !o) {
		hw_err_set(status >= 500 || status == 429 ? HW_EXIT_UNAVAILABLE :
		    HW_EXIT_FAIL, "the ChatGPT authorization server refused "
		    "the sign-in (HTTP %ld)", status);
		goto out;
	}
	d->device_code = field(o, "device_code");
	d->user_code = field(o, "user_code");
	d->verification_uri = field(o, "verification_uri");
	if (json_get(o, "verification_uri_complete"))
		d->verification_uri_complete = field(o,
		    "verification_uri_complete");
	if (json_get_int(o, "expires_in", &d->expires_in) < 0)
		d->expires_in = -1;
	if (!json_get(o, "interval"))
		d->interval = 5;
	else if (json_get_int(o, "interval", &d->interval) < 0)
		d->interval = -1;
	if (!d->device_code || !d->user_code || !verification_ok(
	    d->verification_uri) || (json_get(o,
	    "verification_uri_complete") && !verification_ok(
	    d->verification_uri_complete)) || d->expires_in <= 0 ||
	    d->expires_in > 86400 || d->interval < 0 || d->interval > 3600) {
		hw_err_set(HW_EXIT_DATA, "the ChatGPT authorization server's "
		    "answer is malformed");
		goto out;
	}
	redact_secret(d->device_code, strlen(d->device_code));
	d->deadline_ms = now_ms() + d->expires_in * 1000;
	rc = 0;
out:
	if (rc < 0)
		sub_device_release(d);
	arena_release(&a);
	return rc;
}

/*
 * account_of: the ChatGPT account id that id_token's claims name
 * ("https://api.openai.com/auth": {"chatgpt_account_id"}), which the Codex
 * endpoint wants with each call, or NULL.  The token is not verified (its
 * signature is the account server's business): only an id of letters,
 * digits, '-' and '_' up to 128 is taken, to be sent back as a header.
 */
static char *
account_of(const struct jval *o)
{
	const char *jwt = json_get_str(o, "id_token"), *p, *q, *id;
	unsigned char *raw;
	size_t n, len = 0;
	struct arena a;
	char err[128], *out = NULL;

	if (!jwt || !(p = strchr(jwt, '.')) || !(q = strchr(++p, '.')) ||
	    (n = (size_t)(q - p)) == 0 || n > 65536)
		return NULL;
	raw = xmalloc(n);
	arena_init(&a);
	if (sodium_base642bin(raw, n, p, n, NULL, &len, NULL,
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING) == 0 &&
	    (id = json_get_str(json_get(json_parse(&a, (char *)raw, len, err,
	    sizeof err), "https://api.openai.com/auth"),
	    "chatgpt_account_id")) && *id && strlen(id) <= 128 &&
	    strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-_") == strlen(id))
		out = xstrdup(id);
	arena_release(&a);
	free(raw);
	return out;
}

/* granted: the tokens of a 200 answer of the token endpoint into t */
static int
granted(const struct jval *o, struct sub_tokens *t, const char *old_refresh)
{
	int64_t ttl;

	memset(t, 0, sizeof *t);
	if (!o || token_str(o, "access_token", &t->access) < 0 ||
	    (json_get(o, "refresh_token") ? token_str(o, "refresh_token",
	    &t->refresh) < 0 : !old_refresh) ||
	    (json_get(o, "expires_in") && (json_get_int(o, "expires_in",
	    &ttl) < 0 || ttl <= 0 || ttl > 400 * 86400)) ||
	    (json_get(o, "token_type") && !json_is_str(json_get(o,
	    "token_type"), "Bearer") && !json_is_str(json_get(o,
	    "token_type"), "bearer"))) {
		sub_tokens_release(t);
		return hw_err_set(HW_EXIT_DATA, "the ChatGPT authorization "
		    "server's answer is malformed");
	}
	if (!t->refresh)
		t->refresh = xstrdup(old_refresh);
	t->account = account_of(o);
	if (!json_get(o, "expires_in"))
		ttl = 3600;
	t->expires_at = (int64_t)time(NULL) + ttl;
	return 0;
}

int
sub_device_poll(struct sub_device *d, struct sub_tokens *t)
{
	const char *kv[] = { "grant_type", DEVICE_GRANT, "device_code",
		d->device_code, "client_id", SUB_CLIENT_ID, NULL };
	struct arena a;
	struct jval *o;
	const char *e;
	long status;
	int rc = -1;

	arena_init(&a);
	if (now_ms() >= d->deadline_ms) {
		hw_err_set(HW_EXIT_FAIL, "the sign-in code expired before it "
		    "was approved: sign in again");
		goto out;
	}
	if (post_form(d->issuer, SUB_TOKEN_PATH, kv, &a, &status, &o) < 0)
		goto out;
	if (status == 200) {
		rc = granted(o, t, NULL) < 0 ? -1 : 0;
		goto out;
	}
	e = json_get_str(o, "error");
	if (status == 400 && e && !strcmp(e, "authorization_pending"))
		rc = 1;
	else if (status == 400 && e && !strcmp(e, "slow_down")) {
		d->interval += 5;
		rc = 1;
	} else if (status == 400 && e && !strcmp(e, "expired_token"))
		hw_err_set(HW_EXIT_FAIL, "the sign-in code expired before it "
		    "was approved: sign in again");
	else if (status == 400 && e && !strcmp(e, "access_denied"))
		hw_err_set(HW_EXIT_FAIL, "the sign-in was denied at the "
		    "verification page");
	else
		hw_err_set(status >= 500 || status == 429 ? HW_EXIT_UNAVAILABLE :
		    HW_EXIT_FAIL, "the ChatGPT authorization server refused "
		    "the sign-in (HTTP %ld)", status);
out:
	arena_release(&a);
	return rc;
}

/*
 * nap: the poll interval, or what is left of the code's life if that is
 * shorter; HW_SUBSCRIPTION_POLL_MS is a second's length (tests)
 */
static void
nap(const struct sub_device *d)
{
	const char *v = getenv("HW_SUBSCRIPTION_POLL_MS");
	int64_t unit = 1000, ms, left = d->deadline_ms - now_ms();
	struct timespec ts;

	if (v && parse_seq(v, &unit) < 0)
		unit = 1000;
	ms = d->interval * (unit > 1000 ? 1000 : unit);
	if (ms > left)
		ms = left > 0 ? left : 0;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
sub_device_wait(struct sub_device *d, struct sub_tokens *t)
{
	int k;

	for (;;) {
		nap(d);
		if ((k = sub_device_poll(d, t)) <= 0)
			return k;
	}
}

int
sub_refresh(struct sub_tokens *t)
{
	const char *kv[] = { "grant_type", "refresh_token", "refresh_token",
		t->refresh, "client_id", SUB_CLIENT_ID, NULL };
	struct sub_tokens n;
	struct arena a;
	struct jval *o;
	char *issuer;
	long status;
	int rc = -1;

	arena_init(&a);
	if (!(issuer = sub_issuer()) || post_form(issuer, SUB_TOKEN_PATH, kv,
	    &a, &status, &o) < 0)
		goto out;
	if (status == 400 || status == 401) {
		hw_err_set(HW_EXIT_FAIL, SUB_EXPIRED);
		goto out;
	}
	if (status != 200) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "the ChatGPT authorization "
		    "server could not refresh the sign-in (HTTP %ld)", status);
		goto out;
	}
	if (granted(o, &n, t->refresh) < 0)
		goto out;
	if (!n.account && t->account)
		n.account = xstrdup(t->account);
	if (sub_tokens_save(&n) < 0) {
		sub_tokens_release(&n);
		goto out;
	}
	sub_tokens_release(t);
	*t = n;
	rc = 0;
out:
	free(issuer);
	arena_release(&a);
	return rc;
}

int
sub_access_token(int force, struct sub_tokens *t)
{
	if (sub_tokens_load(t) < 0)
		return -1;
	if (!force && t->expires_at - (int64_t)time(NULL) > REFRESH_AHEAD_S)
		return 0;
	if (sub_refresh(t) < 0) {
		sub_tokens_release(t);
		return -1;
	}
	return 0;
}
