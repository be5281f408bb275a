/*
 * localsigner.c - the local development signer: init-local writes its
 * key, token and registry; serve-local answers signing requests on
 * loopback
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
