/*
 * signer.c - checkpoint signer registries (TOML), the HTTP(S) signer
 * client, and the local development signer (init-local, serve-local).
 *
 * A registry pins each signer's identity: its algorithm, signer id, key
 * id and version, and the fingerprint of a trusted public key kept
 * beside it.  Whatever a signer returns is checked against that pin and
 * verified before it is used, so a registry profile and the local signer
 * produce checkpoints that verify the same way.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>
#include <microhttpd.h>
#include <sodium.h>

#include "audit/audit.h"

#define REGISTRY_MAX (256 * 1024)
#define TOKEN_MAX 65536
#define ENDPOINT_MAX 2048
#define BODY_MAX 65536
#define TIMEOUT_MAX 120.0
#define TIMEOUT_DEFAULT 15.0
#define CA_BUNDLE_MAX (4 * 1024 * 1024)
#define SIGN_REQUEST_SCHEMA "heartwood.audit-checkpoint-sign-request.v1"
#define CHECKPOINT_SCHEMA "heartwood.audit-checkpoint.v2"
#define LOCAL_PROFILE "local-development"
#define LOCAL_ENDPOINT "http://127.0.0.1:8771" SIGNER_ENDPOINT_PATH
#define LOCAL_KEY_ID "local-checkpoint-signing"
#define LOCAL_PRIVATE "local-checkpoint-private.pem"
#define LOCAL_PUBLIC "local-checkpoint-public.pem"
#define LOCAL_TOKEN "local-checkpoint-token"
#define REGISTRY_NAME "checkpoint-signers.toml"

/* printable: s when it is short printable ASCII, for error messages */
static const char *
printable(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n > 64)
		return "...";
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return "...";
	return s;
}

/* ---- discovery ---- */

int
registry_user_dir(char **dir)
{
	char *c = user_dir("XDG_CONFIG_HOME", ".config");

	*dir = NULL;
	if (!c)
		return -1;
	*dir = path_join(c, "heartwood");
	free(c);
	return 0;
}

/* exists: 1 if path names anything (a dangling symlink too), 0, or -1 */
static int
exists(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	return hw_err_sys("cannot look for '%s'", path);
}

int
registry_find(char **path)
{
	const char *env = getenv(SIGNER_REGISTRY_ENV);
	char *dir = NULL;
	int e;

	*path = NULL;
	if (env && *env) {
		if (env[0] != '/')
			return hw_err_set(HW_EXIT_USAGE, "%s must be an "
			    "absolute path", SIGNER_REGISTRY_ENV);
		*path = xstrdup(env);
		return 0;
	}
	if ((e = exists(SIGNER_REGISTRY_ETC)) != 0) {
		if (e > 0)
			*path = xstrdup(SIGNER_REGISTRY_ETC);
		return e > 0 ? 0 : -1;
	}
	if (registry_user_dir(&dir) < 0)
		return 0;	/* no home: an empty registry */
	*path = path_join(dir, REGISTRY_NAME);
	free(dir);
	if ((e = exists(*path)) <= 0) {
		free(*path);
		*path = NULL;
	}
	return e < 0 ? -1 : 0;
}

/* ---- reading the registry ---- */

static int __attribute__((format(printf, 2, 3)))
file_refused(const char *what, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return hw_err_set(HW_EXIT_DATA, "refusing %s: %s", what, msg);
}

/*
 * open_checked opens path (no symbolic link) and checks its type, size
 * and ownership: owner_only wants mode & 066 == 0 and the effective uid,
 * otherwise not group- or other-writable and root or the effective uid.
 */
static int
open_checked(const char *what, const char *path, off_t max, int owner_only)
{
	struct stat st;
	uid_t me = geteuid();
	unsigned mode;
	int fd, e;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ELOOP)
			return file_refused(what, "it is a symbolic link");
		hw_err_sys("cannot open %s", what);
		if (e == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		close(fd);
		return hw_err_sys("cannot stat %s", what);
	}
	mode = (unsigned)st.st_mode & 07777;
	e = !S_ISREG(st.st_mode) ? file_refused(what, "not a regular file") :
	    st.st_size > max ? file_refused(what, "larger than %lld bytes",
	    (long long)max) :
	    owner_only && (mode & 066) ? file_refused(what, "group or others "
	    "can read or write it (mode %04o)", mode) :
	    !owner_only && (mode & 022) ? file_refused(what, "group or others "
	    "can write it (mode %04o)", mode) :
	    owner_only && st.st_uid != me ? file_refused(what, "owned by uid "
	    "%lu, not by the effective uid %lu", (unsigned long)st.st_uid,
	    (unsigned long)me) :
	    st.st_uid != me && st.st_uid != 0 ? file_refused(what, "owned by "
	    "uid %lu, neither root nor the effective uid %lu",
	    (unsigned long)st.st_uid, (unsigned long)me) : 0;
	if (e < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
registry_read(const char *path, struct buf *b)
{
	char what[PATH_MAX + 32];
	int fd, rc;

	snprintf(what, sizeof what, "signer registry '%s'", path);
	if ((fd = open_checked(what, path, REGISTRY_MAX, 0)) < 0)
		return -1;
	rc = read_fd(fd, path, REGISTRY_MAX, b);
	close(fd);
	return rc;
}

/* ---- validating the registry ---- */

static int __attribute__((format(printf, 3, 4)))
invalid(const struct signer_registry *r, const char *profile,
    const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (profile)
		return hw_err_set(HW_EXIT_DATA, "invalid signer registry '%s': "
		    "profile '%s': %s", r->path, profile, msg);
	return hw_err_set(HW_EXIT_DATA, "invalid signer registry '%s': %s",
	    r->path, msg);
}

static int
profile_id_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9')))
		return 0;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		    *s == '_' || *s == '-'))
			return 0;
	return 1;
}


static int
fingerprint_ok(const char *s)
{
	size_t i;

	if (strlen(s) != HW_HASH_LEN || strncmp(s, "sha256:", 7))
		return 0;
	for (i = 7; i < HW_HASH_LEN; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return 0;
	return 1;
}

static int
loopback_ip(const char *host, int bracketed)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (bracketed)
		return inet_pton(AF_INET6, host, &a6) == 1 &&
		    IN6_IS_ADDR_LOOPBACK(&a6);
	return inet_pton(AF_INET, host, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127;
}

/* endpoint_chars: no controls, spaces or non-ASCII; at most 2048 */
static int
endpoint_chars(const struct signer_registry *r, const struct signer_profile *p)
{
	const unsigned char *s = (const unsigned char *)p->endpoint;

	if (strlen(p->endpoint) > ENDPOINT_MAX)
		return invalid(r, p->id, "endpoint is longer than %d "
		    "characters", ENDPOINT_MAX);
	for (; *s; s++) {
		if (*s < 0x20 || *s == 0x7f)
			return invalid(r, p->id, "endpoint contains a control "
			    "character");
		if (*s == ' ' || *s > 0x7e)
			return invalid(r, p->id, "endpoint contains a space or "
			    "a non-ASCII character");
	}
	return 0;
}

/* endpoint_host splits [host]:port or host:port of the authority a..e */
static int
endpoint_host(const struct signer_registry *r, struct signer_profile *p,
    const char *a, const char *e, int *bracketed)
{
	const char *h = a, *he, *port = NULL;
	char *end;
	long v;

	if ((*bracketed = *a == '[')) {
		if (!(he = memchr(a, ']', (size_t)(e - a))))
			return invalid(r, p->id, "endpoint has an unclosed "
			    "'['");
		h = a + 1;
		port = he + 1 < e ? he + 1 : NULL;
		if (port && *port != ':')
			return invalid(r, p->id, "endpoint host is invalid");
	} else {
		he = memchr(a, ':', (size_t)(e - a));
		port = he;
		he = he ? he : e;
	}
	if (he == h || (size_t)(he - h) >= sizeof p->host)
		return invalid(r, p->id, "endpoint host is missing or too "
		    "long");
	memcpy(p->host, h, (size_t)(he - h));
	p->host[he - h] = 0;
	p->port = p->https ? 443 : 80;
	if (port) {
		v = strtol(port + 1, &end, 10);
		if (end != e || port + 1 == e || port[1] < '0' ||
		    port[1] > '9' || e - port > 6 || v < 1 || v > 65535)
			return invalid(r, p->id, "endpoint port is invalid");
		p->port = (int)v;
	}
	return 0;
}

static int
host_ok(const char *h, int bracketed)
{
	struct in6_addr a6;

	if (bracketed)
		return inet_pton(AF_INET6, h, &a6) == 1;
	for (; *h; h++)
		if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') ||
		    (*h >= '0' && *h <= '9') || *h == '.' || *h == '-' ||
		    *h == '_'))
			return 0;
	return 1;
}

static int
endpoint_check(const struct signer_registry *r, struct signer_profile *p)
{
	const char *u = p->endpoint, *a, *path;
	int br;

	if (endpoint_chars(r, p) < 0)
		return -1;
	if (!strncasecmp(u, "https://", 8))
		p->https = 1, a = u + 8;
	else if (!strncasecmp(u, "http://", 7))
		a = u + 7;
	else
		return invalid(r, p->id, "endpoint must be an http or https "
		    "URL");
	path = a + strcspn(a, "/?#");
	if (memchr(a, '@', (size_t)(path - a)))
		return invalid(r, p->id, "endpoint must not contain user "
		    "information");
	if (strchr(u, '?'))
		return invalid(r, p->id, "endpoint must not have a query");
	if (strchr(u, '#'))
		return invalid(r, p->id, "endpoint must not have a fragment");
	if (strcmp(path, SIGNER_ENDPOINT_PATH))
		return invalid(r, p->id, "endpoint path must be exactly %s",
		    SIGNER_ENDPOINT_PATH);
	if (endpoint_host(r, p, a, path, &br) < 0)
		return -1;
	if (!host_ok(p->host, br))
		return invalid(r, p->id, "endpoint host is invalid");
	if (p->https)
		return 0;
	if (!p->development)
		return invalid(r, p->id, "http endpoints are allowed only in "
		    "development mode; use https");
	if (!loopback_ip(p->host, br))
		return invalid(r, p->id, "an http endpoint must name a numeric "
		    "loopback IP address such as 127.0.0.1%s",
		    strcasecmp(p->host, "localhost") ? "" :
		    ", not 'localhost'");
	return 0;
}

static const char *const profile_keys[] = {
	"mode", "endpoint", "signer_id", "key_id", "key_version",
	"algorithm", "public_key_sha256", "trusted_public_key",
	/* optional */
	"authorization_token_file", "timeout_seconds", "ca_bundle", NULL
};
#define PROFILE_REQUIRED 8

/* profile_strings: known keys only, strings without NUL, required ones */
static int
profile_strings(const struct signer_registry *r, const char *id,
    const struct jval *t, const char **vals)
{
	const struct jval *v;
	size_t i, j;

	for (i = 0; i < t->n; i++) {
		for (j = 0; profile_keys[j]; j++)
			if (!strcmp(t->u.m[i].k, profile_keys[j]))
				break;
		if (!profile_keys[j])
			return invalid(r, id, "unknown key '%s'",
			    printable(t->u.m[i].k));
	}
	for (j = 0; profile_keys[j]; j++) {
		v = json_get(t, profile_keys[j]);
		vals[j] = NULL;
		if (!v && j < PROFILE_REQUIRED)
			return invalid(r, id, "missing '%s'", profile_keys[j]);
		if (!v || !strcmp(profile_keys[j], "timeout_seconds"))
			continue;
		if (v->t != J_STRING || strlen(v->u.s) != v->n)
			return invalid(r, id, "'%s' must be a string",
			    profile_keys[j]);
		vals[j] = v->u.s;
	}
	return 0;
}

static int
profile_timeout(const struct signer_registry *r, struct signer_profile *p,
    const struct jval *v)
{
	p->timeout = TIMEOUT_DEFAULT;
	if (!v)
		return 0;
	if (v->t == J_TRUE || v->t == J_FALSE)
		return invalid(r, p->id, "timeout_seconds must be a number, "
		    "not a boolean");
	if (v->t == J_INT)
		p->timeout = strtod(v->u.s, NULL);
	else if (v->t == J_FLOAT)
		p->timeout = v->u.d;
	else
		return invalid(r, p->id, "timeout_seconds must be a number");
	if (!(p->timeout > 0 && p->timeout <= TIMEOUT_MAX))
		return invalid(r, p->id, "timeout_seconds must be more than 0 "
		    "and at most %g", TIMEOUT_MAX);
	return 0;
}

/* profile_values checks each value's own rules, then the endpoint */
static int
profile_values(const struct signer_registry *r, struct signer_profile *p)
{
	if (strcmp(p->mode, "production") && strcmp(p->mode, "development"))
		return invalid(r, p->id, "mode must be 'production' or "
		    "'development'");
	p->development = !strcmp(p->mode, "development");
	if (!valid_session_id(p->signer_id))
		return invalid(r, p->id, "signer_id is not a safe identifier");
	if (!key_text(p->key_id) || !key_text(p->key_version))
		return invalid(r, p->id, "key_id and key_version must be 1 to "
		    "512 printable ASCII characters without spaces");
	if (strcmp(p->algorithm, "ed25519") && strcmp(p->algorithm,
	    "ecdsa-p256-sha256"))
		return invalid(r, p->id, "algorithm must be 'ed25519' or "
		    "'ecdsa-p256-sha256'");
	if (!fingerprint_ok(p->public_key_sha256))
		return invalid(r, p->id, "public_key_sha256 must be 'sha256:' "
		    "and 64 lowercase hex digits");
	if (p->trusted_public_key[0] != '/')
		return invalid(r, p->id, "trusted_public_key must be an "
		    "absolute path");
	if (p->token_file && p->token_file[0] != '/')
		return invalid(r, p->id, "authorization_token_file must be an "
		    "absolute path");
	if (!p->token_file && p->development)
		return invalid(r, p->id, "a development profile needs "
		    "authorization_token_file");
	if (p->ca_bundle && p->ca_bundle[0] != '/')
		return invalid(r, p->id, "ca_bundle must be an absolute path");
	if (endpoint_check(r, p) < 0)
		return -1;
	if (p->ca_bundle && !p->https)
		return invalid(r, p->id, "ca_bundle applies to an https "
		    "endpoint only");
	return 0;
}

static int
profile_load(const struct signer_registry *r, const char *id,
    const struct jval *t, struct signer_profile *p)
{
	const char *v[11];

	p->id = id;
	if (!profile_id_ok(id))
		return invalid(r, NULL, "invalid profile id '%s': it must "
		    "match ^[a-z0-9][a-z0-9_-]*$", printable(id));
	if (t->t != J_OBJECT)
		return invalid(r, id, "a profile must be a table");
	if (profile_strings(r, id, t, v) < 0)
		return -1;
	p->mode = v[0];
	p->endpoint = v[1];
	p->signer_id = v[2];
	p->key_id = v[3];
	p->key_version = v[4];
	p->algorithm = v[5];
	p->public_key_sha256 = v[6];
	p->trusted_public_key = v[7];
	p->token_file = v[8];
	p->ca_bundle = v[10];
	if (profile_timeout(r, p, json_get(t, "timeout_seconds")) < 0)
		return -1;
	return profile_values(r, p);
}

static int
registry_validate(struct signer_registry *r, const struct jval *doc)
{
	static const char *const top[] = { "schema_version",
		"default_profile", "profiles", NULL };
	const struct jval *profiles;
	size_t i, j;

	for (i = 0; i < doc->n; i++) {
		for (j = 0; top[j] && strcmp(doc->u.m[i].k, top[j]); j++)
			;
		if (!top[j])
			return invalid(r, NULL, "unknown top-level key '%s'",
			    printable(doc->u.m[i].k));
	}
	for (j = 0; top[j]; j++)
		if (!json_get(doc, top[j]))
			return invalid(r, NULL, "missing '%s'", top[j]);
	if (!json_is_str(json_get(doc, "schema_version"),
	    SIGNER_REGISTRY_SCHEMA))
		return invalid(r, NULL, "schema_version must be '%s'",
		    SIGNER_REGISTRY_SCHEMA);
	if (!(r->default_profile = json_get_str(doc, "default_profile")))
		return invalid(r, NULL, "default_profile must be a string");
	profiles = json_get(doc, "profiles");
	if (profiles->t != J_OBJECT)
		return invalid(r, NULL, "'profiles' must be a table");
	r->profiles = arena_alloc(&r->a, (profiles->n + 1) *
	    sizeof *r->profiles);
	for (i = 0; i < profiles->n; i++, r->n++)
		if (profile_load(r, profiles->u.m[i].k, profiles->u.m[i].v,
		    &r->profiles[i]) < 0)
			return -1;
	for (i = 0; i < r->n; i++)
		if (!strcmp(r->profiles[i].id, r->default_profile))
			return 0;
	return invalid(r, NULL, "default_profile '%s' is not a profile",
	    printable(r->default_profile));
}

int
registry_load(struct signer_registry *r, const char *path)
{
	struct jval *doc;
	struct buf b;
	int rc = -1;

	memset(r, 0, sizeof *r);
	arena_init(&r->a);
	buf_init(&b);
	if (path)
		r->path = xstrdup(path);
	else if (registry_find(&r->path) < 0)
		goto out;
	if (!r->path) {
		rc = 0;
		goto out;
	}
	if (registry_read(r->path, &b) < 0)
		goto out;
	if ((doc = toml_parse(&r->a, b.p, b.len, r->path)))
		rc = registry_validate(r, doc);
out:
	buf_release(&b);
	return rc;
}

void
registry_release(struct signer_registry *r)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->profiles[i].key_loaded)
			key_release(&r->profiles[i].key);
	arena_release(&r->a);
	free(r->path);
	memset(r, 0, sizeof *r);
}

int
registry_profile(struct signer_registry *r, const char *name,
    struct signer_profile **out)
{
	struct signer_profile *p = NULL;
	size_t i;

	if (!r->path)
		return hw_err_set(HW_EXIT_USAGE, "no checkpoint signer "
		    "registry found (set %s, or run 'hw-audit signer "
		    "init-local')", SIGNER_REGISTRY_ENV);
	name = name ? name : r->default_profile;
	for (i = 0; i < r->n && !p; i++)
		if (!strcmp(r->profiles[i].id, name))
			p = &r->profiles[i];
	if (!p)
		return hw_err_set(HW_EXIT_USAGE, "no profile '%s' in signer "
		    "registry '%s'", printable(name), r->path);
	if (!p->key_loaded) {
		if (key_load_public(p->trusted_public_key, &p->key) < 0)
			return -1;
		p->key_loaded = 1;
	}
	if (strcmp(p->key.fingerprint, p->public_key_sha256))
		return invalid(r, p->id, "the fingerprint of "
		    "trusted_public_key is not public_key_sha256");
	if (strcmp(sig_alg_name(p->key.alg), p->algorithm))
		return invalid(r, p->id, "trusted_public_key is not an %s key",
		    p->algorithm);
	*out = p;
	return 0;
}

int
path_outside_project(const char *what, const char *path)
{
	char real[PATH_MAX], cwd[PATH_MAX];
	size_t n;
	int e;

	if (!realpath(path, real)) {
		e = errno;
		hw_err_sys("cannot resolve %s '%s'", what, path);
		if (e == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "%s", hw_err_msg());
		return -1;
	}
	if (!realpath(".", cwd))
		return hw_err_sys("cannot resolve the current directory");
	n = strlen(cwd);
	if (n == 1 || (!strncmp(real, cwd, n) && (real[n] == '/' ||
	    real[n] == 0)))
		return hw_err_set(HW_EXIT_USAGE, "refusing %s '%s': it is "
		    "inside the project directory '%s'", what, path, cwd);
	return 0;
}

/* ---- the bearer token ---- */

static int
token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	    (c >= '0' && c <= '9') || (c && strchr("-._~+/", c));
}

static int
token_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == '\v' || c == '\f';
}

/* token_valid strips white space in place and checks the token syntax */
static int
token_valid(struct buf *t)
{
	size_t s = 0, e = t->len, i;

	while (s < e && token_space(t->p[s]))
		s++;
	while (e > s && token_space(t->p[e - 1]))
		e--;
	memmove(t->p, t->p + s, e - s);
	mem_wipe(t->p + (e - s), t->len - (e - s));
	t->len = e - s;
	for (i = 0; i < t->len && token_char(t->p[i]); i++)
		;
	if (i == 0)
		return 0;
	while (i < t->len && t->p[i] == '=')
		i++;
	return i == t->len;
}

/* token_read reads a token file into t, which the caller wipes */
static int
token_read(const char *path, struct buf *t)
{
	char what[PATH_MAX + 32];
	ssize_t r;
	int fd;

	snprintf(what, sizeof what, "token file '%s'", path);
	if ((fd = open_checked(what, path, TOKEN_MAX, 1)) < 0)
		return -1;
	buf_reserve(t, TOKEN_MAX + 1);	/* one buffer: no stray copies */
	do {
		r = read(fd, t->p + t->len, TOKEN_MAX + 1 - t->len);
		if (r > 0)
			t->len += (size_t)r;
	} while ((r > 0 && t->len <= TOKEN_MAX) || (r < 0 && errno == EINTR));
	close(fd);
	if (r < 0)
		return hw_err_sys("cannot read %s", what);
	if (t->len > TOKEN_MAX)
		return file_refused(what, "larger than %d bytes", TOKEN_MAX);
	if (!token_valid(t))
		return file_refused(what, "it does not hold one bearer token "
		    "of the characters A-Z a-z 0-9 - . _ ~ + / and trailing "
		    "'='");
	buf_cstr(t);
	return 0;
}

/* ---- the signer client ---- */

struct sink {
	struct buf b;
	int over;
	int refused;		/* the listener check set the error */
	const char *endpoint;
};

static size_t
sink_write(char *p, size_t size, size_t n, void *ctx)
{
	struct sink *s = ctx;

	if (s->b.len + size * n > BODY_MAX) {
		s->over = 1;
		return 0;
	}
	buf_add(&s->b, p, size * n);
	return size * n;
}

/* ---- the listener's owner ---- */

/*
 * proc_addr writes ip:port as /proc/net/tcp (v6 0) or tcp6 (v6 1) show a
 * socket's address: each 32-bit word as the kernel holds it, in hex, and
 * the port.  An IPv4 address is written v4-mapped for tcp6.
 */
static int
proc_addr(const char *ip, int port, int v6, char *out, size_t n)
{
	struct in6_addr a6 = { 0 };
	struct in_addr a4;
	uint32_t w[4];

	if (inet_pton(AF_INET, ip, &a4) == 1) {
		if (!v6) {
			snprintf(out, n, "%08X:%04X", (unsigned)a4.s_addr,
			    (unsigned)port);
			return 0;
		}
		a6.s6_addr[10] = a6.s6_addr[11] = 0xff;
		memcpy(&a6.s6_addr[12], &a4, 4);
	} else if (!v6 || inet_pton(AF_INET6, ip, &a6) != 1)
		return -1;
	memcpy(w, &a6, sizeof w);
	snprintf(out, n, "%08X%08X%08X%08X:%04X", (unsigned)w[0],
	    (unsigned)w[1], (unsigned)w[2], (unsigned)w[3], (unsigned)port);
	return 0;
}

/*
 * socket_uid finds the socket whose local address is local and whose peer
 * is remote in the table at path; 1 and its owner's uid, 0, or -1.
 */
static int
socket_uid(const char *path, const char *local, const char *remote,
    unsigned long *uid)
{
	char line[512], l[72], r[72];
	int found = 0;
	FILE *f;

	if (!(f = fopen(path, "re")))
		return errno == ENOENT ? 0 : -1;
	while (!found && fgets(line, sizeof line, f))
		found = sscanf(line, " %*u: %71s %71s %*x %*x:%*x %*x:%*x "
		    "%*x %lu", l, r, uid) == 3 && !strcmp(l, local) &&
		    !strcmp(r, remote);
	fclose(f);
	return found;
}

/*
 * listener_check runs once curl has connected and before it sends a byte:
 * a plain http signer is on loopback, where any local user may have taken
 * the port, so the connection must lead to a socket of the effective uid
 * (an accepted socket keeps the owner of the socket that listened).
 */
static int
listener_check(void *ctx, char *peer_ip, char *local_ip, int peer_port,
    int local_port)
{
	struct sink *s = ctx;
	char peer[72], local[72];
	unsigned long uid = 0;
	int v6, rc = 0;

	for (v6 = 0; v6 < 2 && rc == 0; v6++)
		if (proc_addr(peer_ip, peer_port, v6, peer, sizeof peer) == 0 &&
		    proc_addr(local_ip, local_port, v6, local,
		    sizeof local) == 0)
			rc = socket_uid(v6 ? "/proc/net/tcp6" : "/proc/net/tcp",
			    peer, local, &uid);
	if (rc == 1 && uid == (unsigned long)geteuid())
		return CURL_PREREQFUNC_OK;
	s->refused = 1;
	v6 = strchr(peer_ip, ':') != NULL;
	if (rc == 1)
		hw_err_set(HW_EXIT_DATA, "refusing signer '%s': the listener "
		    "on %s%s%s:%d belongs to uid %lu, not to the effective uid "
		    "%lu", s->endpoint, v6 ? "[" : "", peer_ip, v6 ? "]" : "",
		    peer_port, uid, (unsigned long)geteuid());
	else
		hw_err_set(HW_EXIT_DATA, "refusing signer '%s': cannot find "
		    "who owns the listener on %s%s%s:%d", s->endpoint,
		    v6 ? "[" : "", peer_ip, v6 ? "]" : "", peer_port);
	return CURL_PREREQFUNC_ABORT;
}

static struct curl_slist *
request_headers(const struct buf *token)
{
	struct curl_slist *h = NULL;
	struct buf auth;

	h = curl_slist_append(h, "Accept: application/json");
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	if (token->len) {
		buf_init(&auth);
		buf_reserve(&auth, token->len + 32);
		buf_adds(&auth, "Authorization: Bearer ");
		buf_add(&auth, token->p, token->len);
		h = curl_slist_append(h, buf_cstr(&auth));
		buf_wipe(&auth);
	}
	return h;
}

static void
client_options(CURL *c, const struct signer_profile *p, const struct buf *body,
    struct curl_slist *h, struct sink *s, char *errbuf)
{
	long ms = (long)(p->timeout * 1000);

	curl_easy_setopt(c, CURLOPT_URL, p->endpoint);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, p->https ? "https" : "http");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->p);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms > 0 ? ms : 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms > 0 ? ms : 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, sink_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)BODY_MAX);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "hw-audit/" HW_VERSION);
	if (p->https)
		return;
	/* a loopback signer is never reached by proxy, nor unchecked */
	curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(c, CURLOPT_PREREQFUNCTION, listener_check);
	curl_easy_setopt(c, CURLOPT_PREREQDATA, s);
}

/* http_answer checks what the transfer gave: status, type, size */
static int
http_answer(CURL *c, CURLcode rc, const struct signer_profile *p,
    const struct sink *s, const char *errbuf)
{
	char *ct = NULL;
	long status = 0;

	if (s->refused)
		return -1;
	if (s->over || rc == CURLE_FILESIZE_EXCEEDED)
		return hw_err_set(HW_EXIT_DATA, "signer '%s': the response is "
		    "larger than %d bytes", p->endpoint, BODY_MAX);
	if (rc == CURLE_PEER_FAILED_VERIFICATION)
		return hw_err_set(HW_EXIT_DATA, "signer '%s': its TLS "
		    "certificate does not verify (%s); name its CA with "
		    "--cacert PATH or the profile's ca_bundle", p->endpoint,
		    *errbuf ? errbuf : curl_easy_strerror(rc));
	if (rc != CURLE_OK)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot reach signer "
		    "'%s': %s", p->endpoint, *errbuf ? errbuf :
		    curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct);
	if (status >= 300 && status < 400)
		return hw_err_set(HW_EXIT_DATA, "signer '%s' answered with a "
		    "redirect (HTTP %ld): redirects are refused", p->endpoint,
		    status);
	if (status != 200)
		return hw_err_set(HW_EXIT_DATA, "signer '%s' refused to sign "
		    "(HTTP %ld)", p->endpoint, status);
	if (!media_is_json(ct))
		return hw_err_set(HW_EXIT_DATA, "signer '%s': the response is "
		    "not application/json", p->endpoint);
	return 0;
}

/*
 * ca_trust makes the profile's CA bundle, checked as a registry is, the
 * only trust anchors of an https signer (the system's CAs otherwise)
 */
static int
ca_trust(CURL *c, const struct signer_profile *p)
{
	struct curl_blob blob;
	char what[PATH_MAX + 32];
	struct buf b;
	int fd, rc;

	if (!p->https || !p->ca_bundle)
		return 0;
	snprintf(what, sizeof what, "CA bundle '%s'", p->ca_bundle);
	if ((fd = open_checked(what, p->ca_bundle, CA_BUNDLE_MAX, 0)) < 0)
		return -1;
	buf_init(&b);
	if ((rc = read_fd(fd, p->ca_bundle, CA_BUNDLE_MAX, &b)) == 0) {
		blob = (struct curl_blob){ b.p, b.len, CURL_BLOB_COPY };
		if (curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob) !=
		    CURLE_OK || curl_easy_setopt(c, CURLOPT_CAPATH, NULL) !=
		    CURLE_OK)
			rc = hw_err_set(HW_EXIT_UNAVAILABLE, "libcurl cannot "
			    "take the CA bundle '%s'", p->ca_bundle);
	}
	close(fd);
	buf_release(&b);
	return rc;
}

static int
http_post(const struct signer_profile *p, const struct buf *body,
    const struct buf *token, struct sink *s)
{
	static int ready;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *h;
	CURLcode rc;
	CURL *c;
	int ret;

	if (!ready && curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return hw_err_set(HW_EXIT_UNAVAILABLE, "libcurl cannot be "
		    "initialized");
	ready = 1;
	if (!(c = curl_easy_init()))
		return hw_err_set(HW_EXIT_UNAVAILABLE, "libcurl cannot be "
		    "initialized");
	if (ca_trust(c, p) < 0) {
		curl_easy_cleanup(c);
		return -1;
	}
	h = request_headers(token);
	client_options(c, p, body, h, s, errbuf);
	rc = curl_easy_perform(c);
	ret = http_answer(c, rc, p, s, errbuf);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	return ret;
}

int
signer_identity_check(const struct signer_profile *p, const struct jval *sig)
{
	const char *f[5][2] = {
		{ "algorithm", p->algorithm }, { "signer_id", p->signer_id },
		{ "key_id", p->key_id }, { "key_version", p->key_version },
		{ "public_key_sha256", p->public_key_sha256 },
	};
	int i;

	for (i = 0; i < 5; i++)
		if (!json_is_str(json_get(sig, f[i][0]), f[i][1]))
			return hw_err_set(HW_EXIT_DATA, "the signature's %s is "
			    "not the one signer profile '%s' pins", f[i][0],
			    p->id);
	return 0;
}

/* signature_accept parses and checks a signer's answer */
static struct jval *
signature_accept(struct arena *a, const struct signer_profile *p,
    const struct buf *b, struct jval *statement)
{
	struct jval *sig, *cp;
	char err[128];

	if (!valid_utf8(b->p, b->len) || !(sig = json_parse(a, b->p, b->len,
	    err, sizeof err)) || sig->t != J_OBJECT)
		return hw_err_set(HW_EXIT_DATA, "signer '%s': the response is "
		    "not a JSON object", p->endpoint), NULL;
	if (signer_identity_check(p, sig) < 0)
		return NULL;
	if (checkpoint_signature_check(a, sig, statement, &p->key) < 0)
		return hw_err_set(HW_EXIT_DATA, "signer '%s': %s", p->endpoint,
		    hw_err_msg()), NULL;
	cp = json_obj(a);
	json_add(a, cp, "schema_version", json_str(a, CHECKPOINT_SCHEMA));
	json_add(a, cp, "signature", sig);
	json_add(a, cp, "statement", statement);
	return cp;
}

struct jval *
signer_sign(struct arena *a, struct signer_profile *p, struct jval *statement)
{
	struct jval *req = json_obj(a), *cp = NULL;
	struct buf body, token;
	struct sink s = { .endpoint = p->endpoint };

	buf_init(&body);
	buf_init(&token);
	buf_init(&s.b);
	if (!p->key_loaded) {
		hw_err_set(HW_EXIT_DATA, "signer profile '%s' has no trusted "
		    "key loaded", p->id);
		goto out;
	}
	if (p->token_file && token_read(p->token_file, &token) < 0)
		goto out;
	json_add(a, req, "schema_version", json_str(a, SIGN_REQUEST_SCHEMA));
	json_add(a, req, "statement", statement);
	json_canon(&body, req);
	if (http_post(p, &body, &token, &s) == 0) {
		buf_cstr(&s.b);	/* a pointer even for an empty body */
		cp = signature_accept(a, p, &s.b, statement);
	}
out:
	buf_wipe(&token);
	buf_release(&body);
	buf_release(&s.b);
	return cp;
}

int
signer_token_check(const struct signer_profile *p)
{
	struct buf t;
	int rc = 0;

	buf_init(&t);
	if (p->token_file)
		rc = token_read(p->token_file, &t);
	buf_wipe(&t);
	return rc;
}

/* ---- init-local ---- */

/* token_urlsafe: 32 random bytes as unpadded URL-safe base64, "\n" */
static void
token_urlsafe(struct buf *out)
{
	static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop"
	    "qrstuvwxyz0123456789-_";
	unsigned char r[33] = { 0 };
	uint32_t v;
	int i;

	randombytes_buf(r, 32);
	for (i = 0; i < 33; i += 3) {
		v = (uint32_t)r[i] << 16 | (uint32_t)r[i + 1] << 8 | r[i + 2];
		buf_addc(out, abc[v >> 18 & 63]);
		buf_addc(out, abc[v >> 12 & 63]);
		buf_addc(out, abc[v >> 6 & 63]);
		if (i + 3 < 33)
			buf_addc(out, abc[v & 63]);
	}
	buf_addc(out, '\n');	/* 43 characters: 256 bits, no padding */
	mem_wipe(r, sizeof r);
}

static void
local_registry(struct buf *b, const char *fp, const char *pub,
    const char *token)
{
	buf_adds(b, "# heartwood checkpoint signer registry, written by "
	    "'hw-audit signer init-local'\n");
	buf_adds(b, "schema_version = ");
	toml_quote(b, SIGNER_REGISTRY_SCHEMA);
	buf_adds(b, "\ndefault_profile = \"" LOCAL_PROFILE "\"\n\n");
	buf_adds(b, "[profiles." LOCAL_PROFILE "]\n");
	buf_adds(b, "mode = \"development\"\n");
	buf_adds(b, "endpoint = \"" LOCAL_ENDPOINT "\"\n");
	buf_adds(b, "signer_id = \"" LOCAL_PROFILE "\"\n");
	buf_adds(b, "key_id = \"" LOCAL_KEY_ID "\"\n");
	buf_adds(b, "key_version = \"v1\"\n");
	buf_adds(b, "algorithm = \"ed25519\"\n");
	buf_printf(b, "public_key_sha256 = \"%s\"\n", fp);
	buf_adds(b, "trusted_public_key = ");
	toml_quote(b, pub);
	buf_adds(b, "\nauthorization_token_file = ");
	toml_quote(b, token);
	buf_adds(b, "\ntimeout_seconds = 15\n");
}

/*
 * make_dirs creates the missing directories of dir, each 0700, recording
 * them in made (deepest last) so that a failure can remove them.
 */
static int
make_dirs(const char *dir, char **made, int *nmade, int max)
{
	char *parent, *tmp;
	int e, rc = 0;

	if ((e = exists(dir)) != 0)
		return e < 0 ? -1 : 0;
	tmp = xstrdup(dir);
	parent = dirname(tmp);
	if (strcmp(parent, dir) && *nmade < max - 1)
		rc = make_dirs(parent, made, nmade, max);
	free(tmp);
	if (rc < 0)
		return -1;
	if (mkdir(dir, 0700) < 0)
		return hw_err_sys("cannot create directory '%s'", dir);
	made[(*nmade)++] = xstrdup(dir);
	return 0;
}

static int
local_dir(const char *dir, char **made, int *nmade, int max)
{
	struct stat st;

	if (make_dirs(dir, made, nmade, max) < 0)
		return -1;
	if (lstat(dir, &st) < 0)
		return hw_err_sys("cannot stat '%s'", dir);
	if (!S_ISDIR(st.st_mode))
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': not a "
		    "directory (or a symbolic link)", dir);
	if (st.st_mode & 022)
		return hw_err_set(HW_EXIT_DATA, "refusing '%s': group or "
		    "others can write it", dir);
	return 0;
}

struct local_files {
	char *path[4];		/* private, public, token, registry */
	struct buf data[4];
};

static int
local_content(struct local_files *f, struct signkey *k)
{
	int i;

	for (i = 0; i < 4; i++)
		buf_init(&f->data[i]);
	if (key_generate(SIG_ED25519, k) < 0 ||
	    key_pem_private(k, &f->data[0]) < 0 ||
	    key_pem_public(k, &f->data[1]) < 0)
		return -1;
	token_urlsafe(&f->data[2]);
	local_registry(&f->data[3], k->fingerprint, f->path[1], f->path[2]);
	return 0;
}

static void
local_summary(struct buf *out, const struct local_files *f, const char *fp)
{
	buf_adds(out, "{\"default_profile\":\"" LOCAL_PROFILE "\","
	    "\"endpoint\":\"" LOCAL_ENDPOINT "\",\"private_key\":");
	json_canon_str(out, f->path[0], strlen(f->path[0]));
	buf_adds(out, ",\"public_key\":");
	json_canon_str(out, f->path[1], strlen(f->path[1]));
	buf_printf(out, ",\"public_key_sha256\":\"%s\",\"registry\":", fp);
	json_canon_str(out, f->path[3], strlen(f->path[3]));
	buf_adds(out, ",\"token_file\":");
	json_canon_str(out, f->path[2], strlen(f->path[2]));
	buf_addc(out, '}');
}

/* local_write publishes the files in order, the registry last */
static int
local_write(struct local_files *f, int *wrote)
{
	int i, e;

	for (i = 0; i < 4; i++)
		if ((e = exists(f->path[i])) != 0)
			return e < 0 ? -1 : hw_err_set(HW_EXIT_FAIL, "refusing "
			    "to replace existing '%s'", f->path[i]);
	for (i = 0; i < 4; i++) {
		if (publish_new_file(f->path[i], f->data[i].p,
		    f->data[i].len) < 0)
			return -1;
		wrote[i] = 1;
	}
	return 0;
}

int
signer_init_local(struct buf *out)
{
	static const char *const names[4] = { LOCAL_PRIVATE, LOCAL_PUBLIC,
		LOCAL_TOKEN, REGISTRY_NAME };
	struct local_files f = { 0 };
	struct signkey k = { 0 };
	char *dir = NULL, *made[16];
	int nmade = 0, wrote[4] = { 0 }, i, rc = -1;

	for (i = 0; i < 4; i++)
		buf_init(&f.data[i]);
	if (registry_user_dir(&dir) < 0 || local_dir(dir, made, &nmade,
	    16) < 0)
		goto fail;
	for (i = 0; i < 4; i++)
		f.path[i] = path_join(dir, names[i]);
	if (local_content(&f, &k) < 0 || local_write(&f, wrote) < 0)
		goto fail;
	local_summary(out, &f, k.fingerprint);
	rc = 0;
	goto out;
fail:
	for (i = 3; i >= 0; i--)
		if (wrote[i])
			unlink(f.path[i]);
	for (i = nmade - 1; i >= 0; i--)
		rmdir(made[i]);
out:
	for (i = 0; i < 4; i++) {
		buf_wipe(&f.data[i]);
		free(f.path[i]);
	}
	for (i = 0; i < nmade; i++)
		free(made[i]);
	key_release(&k);
	free(dir);
	return rc;
}

/* ---- serve-local ---- */

/*
 * Connection limits.  Every client is on loopback, so a per-address
 * limit would be one global limit that the real client shares with
 * whoever holds it.  Instead: an idle connection is dropped after
 * IDLE_SECONDS, any connection after LIFE_SECONDS (a slow client that
 * sends a byte now and then is never idle), and when CONN_SOFT are
 * open a new connection drops the oldest, so a client that finishes
 * its request quickly is served however many slow ones wait.
 */
#define IDLE_SECONDS 10u
#define LIFE_SECONDS 20
#define CONN_SOFT 32
#define CONN_HARD 128u

struct conn {
	int fd;
	time_t since;
};

struct local_signer {
	struct signkey key;
	struct checkpoint_opts opts;
	struct buf auth;		/* "Bearer TOKEN" */
	pthread_mutex_t mu;		/* guards open and nopen */
	struct conn *open[CONN_SOFT];	/* the connections not yet dropped */
	int nopen;
};

struct request {
	struct buf body;
	int too_big;
};

static enum MHD_Result
reply(struct MHD_Connection *c, unsigned status, const char *json)
{
	struct MHD_Response *r;
	enum MHD_Result ok;

	r = MHD_create_response_from_buffer(strlen(json), (void *)json,
	    MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result
reply_error(struct MHD_Connection *c, unsigned status, const char *why)
{
	struct buf b;
	enum MHD_Result ok;

	buf_init(&b);
	buf_adds(&b, "{\"error\":");
	json_canon_str(&b, why, strlen(why));
	buf_addc(&b, '}');
	ok = reply(c, status, buf_cstr(&b));
	buf_release(&b);
	return ok;
}

static int
client_loopback(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c,
	    MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	const struct in6_addr *a6;

	if (sa && sa->sa_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)(const void *)sa)->
		    sin_addr.s_addr) >> 24 == 127;
	if (!sa || sa->sa_family != AF_INET6)
		return 0;
	a6 = &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
	return IN6_IS_ADDR_LOOPBACK(a6) || (IN6_IS_ADDR_V4MAPPED(a6) &&
	    a6->s6_addr[12] == 127);
}

struct header_count {
	const char *name, *value;
	int n;
};

static enum MHD_Result
count_header(void *cls, enum MHD_ValueKind kind, const char *key,
    const char *value)
{
	struct header_count *h = cls;

	(void)kind;
	if (key && !strcasecmp(key, h->name)) {
		h->n++;
		h->value = value ? value : "";
	}
	return MHD_YES;
}

/* only_header: the value of a header sent exactly once, else NULL */
static const char *
only_header(struct MHD_Connection *c, const char *name)
{
	struct header_count h = { name, NULL, 0 };

	MHD_get_connection_values(c, MHD_HEADER_KIND, count_header, &h);
	return h.n == 1 ? h.value : NULL;
}

static int
authorized(const struct local_signer *s, const char *v)
{
	return v && strlen(v) == s->auth.len &&
	    sodium_memcmp(v, s->auth.p, s->auth.len) == 0;
}

/*
 * precheck applies the checks that headers decide, in the reference's
 * order; it returns the status to answer now, or 0 to read the body.
 */
static unsigned
precheck(const struct local_signer *s, struct MHD_Connection *c,
    const char *url, const char *method)
{
	const char *ct, *cl;

	if (!client_loopback(c))
		return MHD_HTTP_FORBIDDEN;
	if (!strcmp(method, "GET") && !strcmp(url, "/healthz"))
		return MHD_HTTP_OK;
	if (strcmp(method, "POST") || strcmp(url, SIGNER_ENDPOINT_PATH))
		return MHD_HTTP_NOT_FOUND;
	if (!authorized(s, only_header(c, "Authorization")))
		return MHD_HTTP_UNAUTHORIZED;
	ct = only_header(c, "Content-Type");
	if (!ct || strcasecmp(ct, "application/json"))
		return MHD_HTTP_UNSUPPORTED_MEDIA_TYPE;
	cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	if (cl && strtoull(cl, NULL, 10) > BODY_MAX)
		return MHD_HTTP_CONTENT_TOO_LARGE;
	return 0;
}

static enum MHD_Result
reply_status(struct MHD_Connection *c, unsigned status)
{
	switch (status) {
	case MHD_HTTP_OK:
		return reply(c, status, "{\"status\":\"ready\"}");
	case MHD_HTTP_FORBIDDEN:
		return reply_error(c, status, "forbidden: not a loopback "
		    "client");
	case MHD_HTTP_NOT_FOUND:
		return reply_error(c, status, "not found");
	case MHD_HTTP_UNAUTHORIZED:
		return reply_error(c, status, "unauthorized");
	case MHD_HTTP_UNSUPPORTED_MEDIA_TYPE:
		return reply_error(c, status, "the content type must be "
		    "application/json");
	default:
		return reply_error(c, status, "the request body is larger than "
		    "65536 bytes");
	}
}

/* sign_request answers a complete body: 200 with the signature, or 422 */
struct jval *
signer_request_statement(struct arena *a, const char *body, size_t n,
    char *why, size_t whysz)
{
	static const char *const keys[] = { "schema_version", "statement",
		NULL };
	struct jval *req, *st;
	char err[128];

	if (!valid_utf8(body, n) || !(req = json_parse(a, body, n, err,
	    sizeof err)))
		snprintf(why, whysz, "the body is not JSON");
	else if (json_keys_exact(req, keys) < 0 || !json_is_str(json_get(req,
	    "schema_version"), SIGN_REQUEST_SCHEMA))
		snprintf(why, whysz, "the body is not a %s",
		    SIGN_REQUEST_SCHEMA);
	else if (checkpoint_statement_check(st = json_get(req,
	    "statement")) < 0)
		snprintf(why, whysz, "%s", hw_err_msg());
	else
		return st;
	return NULL;
}

static enum MHD_Result
sign_request(struct local_signer *s, struct MHD_Connection *c,
    const struct buf *body)
{
	struct jval *st, *cp = NULL;
	struct arena a;
	struct buf out;
	char why[1200];
	enum MHD_Result ok;

	arena_init(&a);
	buf_init(&out);
	if ((st = signer_request_statement(&a, body->p, body->len, why,
	    sizeof why)) && !(cp = checkpoint_sign(&a, st, &s->key,
	    &s->opts)))
		snprintf(why, sizeof why, "%s", hw_err_msg());
	if (cp) {
		json_canon(&out, json_get(cp, "signature"));
		ok = reply(c, MHD_HTTP_OK, buf_cstr(&out));
	} else
		ok = reply_error(c, MHD_HTTP_UNPROCESSABLE_CONTENT, why);
	buf_release(&out);
	arena_release(&a);
	return ok;
}

static enum MHD_Result
handle(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct local_signer *s = cls;
	struct request *rq = *con_cls;
	unsigned status;

	(void)version;
	if (!rq) {
		if ((status = precheck(s, c, url, method)))
			return reply_status(c, status);
		rq = xcalloc(1, sizeof *rq);
		buf_init(&rq->body);
		*con_cls = rq;
		return MHD_YES;
	}
	if (*upload_size) {
		if (rq->body.len + *upload_size > BODY_MAX)
			rq->too_big = 1;
		else
			buf_add(&rq->body, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->too_big)
		return reply_status(c, MHD_HTTP_CONTENT_TOO_LARGE);
	buf_cstr(&rq->body);	/* a pointer even for an empty body */
	return sign_request(s, c, &rq->body);
}

static void
request_done(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode why)
{
	struct request *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)why;
	if (rq) {
		buf_release(&rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

/* conn_drop shuts conn k down (the server thread then closes it) */
static void
conn_drop(struct local_signer *s, int k)
{
	shutdown(s->open[k]->fd, SHUT_RDWR);
	s->open[k] = s->open[--s->nopen];
}

/*
 * conn_notify tracks each connection from its start to its close; the
 * server thread calls it before it closes the socket, so a socket in
 * open is never a closed or reused descriptor.
 */
static void
conn_notify(void *cls, struct MHD_Connection *c, void **ctx,
    enum MHD_ConnectionNotificationCode what)
{
	const union MHD_ConnectionInfo *ci;
	struct local_signer *s = cls;
	struct conn *n = *ctx;
	int k, old = 0;

	pthread_mutex_lock(&s->mu);
	if (what == MHD_CONNECTION_NOTIFY_STARTED) {
		ci = MHD_get_connection_info(c,
		    MHD_CONNECTION_INFO_CONNECTION_FD);
		n = *ctx = xcalloc(1, sizeof *n);
		n->fd = ci ? ci->connect_fd : -1;
		n->since = time(NULL);
		for (k = 1; k < s->nopen; k++)
			if (s->open[k]->since < s->open[old]->since)
				old = k;
		if (s->nopen == CONN_SOFT)
			conn_drop(s, old);
		if (n->fd >= 0)
			s->open[s->nopen++] = n;
	} else if (n) {
		for (k = 0; k < s->nopen; k++)
			if (s->open[k] == n)
				s->open[k] = s->open[--s->nopen];
		free(n);
		*ctx = NULL;
	}
	pthread_mutex_unlock(&s->mu);
}

/* conn_sweep drops the connections open for longer than LIFE_SECONDS */
static void
conn_sweep(struct local_signer *s)
{
	time_t now = time(NULL);
	int k;

	pthread_mutex_lock(&s->mu);
	for (k = s->nopen - 1; k >= 0; k--)
		if (now - s->open[k]->since >= LIFE_SECONDS)
			conn_drop(s, k);
	pthread_mutex_unlock(&s->mu);
}

/* listen_loopback binds host:port itself, to report errors exactly */
static int
listen_loopback(const struct signer_profile *p, int *v6)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in a4 = { .sin_family = AF_INET };
	int fd, one = 1, ok;

	*v6 = !strcmp(p->host, "::1");
	if (!*v6 && strcmp(p->host, "127.0.0.1"))
		return hw_err_set(HW_EXIT_USAGE, "serve-local binds only "
		    "127.0.0.1 or ::1, and the endpoint of profile '%s' names "
		    "'%s'", p->id, p->host);
	fd = socket(*v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return hw_err_sys("cannot create a socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	a4.sin_port = a6.sin6_port = htons((uint16_t)p->port);
	a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a6.sin6_addr = in6addr_loopback;
	if (*v6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	ok = *v6 ? bind(fd, (struct sockaddr *)&a6, sizeof a6) :
	    bind(fd, (struct sockaddr *)&a4, sizeof a4);
	if (ok < 0 || listen(fd, 32) < 0) {
		hw_err_sys("cannot listen on %s%s%s:%d", *v6 ? "[" : "",
		    p->host, *v6 ? "]" : "", p->port);
		close(fd);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "%s", hw_err_msg());
	}
	return fd;
}

/* local_setup loads and cross-checks what serve-local signs with */
static int
local_setup(struct signer_registry *r, const char *name,
    struct signer_profile **pp, struct local_signer *s)
{
	struct signer_profile *p;
	struct buf token;
	char *tmp, *key;
	int rc = -1;

	if (registry_profile(r, name, pp) < 0)
		return -1;
	p = *pp;
	if (!p->development || p->https)
		return hw_err_set(HW_EXIT_USAGE, "serve-local serves only a "
		    "development profile with an http endpoint, and profile "
		    "'%s' is not one", p->id);
	tmp = xstrdup(r->path);
	key = path_join(dirname(tmp), LOCAL_PRIVATE);
	buf_init(&token);
	if (key_load_private(key, &s->key) < 0)
		goto out;
	if (s->key.alg != SIG_ED25519)
		hw_err_set(HW_EXIT_DATA, "the local signer key '%s' is not an "
		    "Ed25519 key", key);
	else if (strcmp(s->key.fingerprint, p->public_key_sha256))
		hw_err_set(HW_EXIT_DATA, "the fingerprint of '%s' is not the "
		    "public_key_sha256 of profile '%s'", key, p->id);
	else if (token_read(p->token_file, &token) == 0) {
		buf_adds(&s->auth, "Bearer ");
		buf_add(&s->auth, token.p, token.len);
		rc = 0;
	}
out:
	s->opts.signer_id = p->signer_id;
	s->opts.key_id = p->key_id;
	s->opts.key_version = p->key_version;
	buf_wipe(&token);
	free(key);
	free(tmp);
	return rc;
}

static struct MHD_Daemon *
local_start(struct local_signer *s, int fd, int v6)
{
	return MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_AUTO | (v6 ? MHD_USE_IPv6 : 0), 0, NULL, NULL, handle, s,
	    MHD_OPTION_LISTEN_SOCKET, fd,
	    MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
	    MHD_OPTION_NOTIFY_CONNECTION, conn_notify, s,
	    MHD_OPTION_CONNECTION_TIMEOUT, IDLE_SECONDS,
	    MHD_OPTION_CONNECTION_LIMIT, CONN_HARD,
	    MHD_OPTION_END);
}

/* local_run serves until SIGINT or SIGTERM */
static int
local_run(struct local_signer *s, const struct signer_profile *p,
    void (*ready)(const char *url, void *ctx), void *ctx)
{
	struct timespec tick = { 1, 0 };
	struct MHD_Daemon *d;
	sigset_t set, old;
	char url[96];
	int fd, v6, sig;

	if ((fd = listen_loopback(p, &v6)) < 0)
		return -1;
	/* blocked before the server thread starts, which inherits it */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (!(d = local_start(s, fd, v6))) {
		close(fd);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot start the local "
		    "signer service");
	}
	snprintf(url, sizeof url, "http://%s%s%s:%d", v6 ? "[" : "", p->host,
	    v6 ? "]" : "", p->port);
	ready(url, ctx);
	while ((sig = sigtimedwait(&set, NULL, &tick)) < 0)
		conn_sweep(s);
	MHD_stop_daemon(d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return 0;
}

int
signer_serve_local(const char *path, const char *name,
    void (*ready)(const char *url, void *ctx), void *ctx)
{
	struct signer_registry r;
	struct signer_profile *p;
	struct local_signer s;
	int rc = -1;

	memset(&s, 0, sizeof s);
	buf_init(&s.auth);
	pthread_mutex_init(&s.mu, NULL);
	if (registry_load(&r, path) == 0 && local_setup(&r, name, &p,
	    &s) == 0)
		rc = local_run(&s, p, ready, ctx);
	pthread_mutex_destroy(&s.mu);
	buf_wipe(&s.auth);
	key_release(&s.key);
	registry_release(&r);
	return rc;
}
