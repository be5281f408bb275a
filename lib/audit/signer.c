/*
 * signer.c - checkpoint signer registries (TOML): discovery, reading,
 * validation, profiles, bearer tokens.
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
#include "audit/signers.h"

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
int
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
int
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
int
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
