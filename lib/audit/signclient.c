/*
 * signclient.c - the HTTP(S) checkpoint signer client: the request, the
 * listener's owner on loopback, the answer checked against the profile
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

/* ---- the signer client ---- */

struct sink {
	struct buf b;
	struct buf_sink k;	/* into b, BODY_MAX at most */
	int refused;		/* the listener check set the error */
	const char *endpoint;
};

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
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, buf_sink);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &s->k);
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
	if (s->k.over || rc == CURLE_FILESIZE_EXCEEDED)
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
	s.k = (struct buf_sink){ &s.b, BODY_MAX, 0 };
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
