/*
 * http.c - the gateway on libmicrohttpd: each request is read with a
 * bounded body, held to the ingress policy once, then routed; every
 * response carries the security headers
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/gw.h"

#define CONN_MAX 4096			/* connections at once */
#define CONN_TIMEOUT_S 30		/* an idle or slow connection */
#define POOL_THREADS 4

/* the headers, for the ingress policy */
struct hlist {
	const char *names[128], *values[128];
	size_t n;
	int over;
};

static enum MHD_Result
collect_header(void *cls, enum MHD_ValueKind kind, const char *k,
    const char *v)
{
	struct hlist *h = cls;

	(void)kind;
	if (h->n == 128) {
		h->over = 1;
		return MHD_NO;
	}
	h->names[h->n] = k;
	h->values[h->n++] = v ? v : "";
	return MHD_YES;
}

static int
is_websocket(struct MHD_Connection *c)
{
	const char *u = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
	    "Upgrade");

	return u && !strcasecmp(u, "websocket");
}

/* admit applies the ingress policy once; 0 or the refusal queued (1) */
static int
admit(struct req *r, enum MHD_Result *ret)
{
	struct hlist h = { .n = 0 };
	const union MHD_ConnectionInfo *ci;
	struct ingress_req ir;
	char why[512];
	int st;

	MHD_get_connection_values(r->c, MHD_HEADER_KIND, collect_header, &h);
	if (h.over) {
		*ret = reply_error(r, 431, "HW-INGRESS-002", "too many headers");
		return 1;
	}
	ci = MHD_get_connection_info(r->c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	ir.names = h.names;
	ir.values = h.values;
	ir.nheaders = h.n;
	ir.peer = ci ? ci->client_addr : NULL;
	ir.path = r->uri;
	ir.query = r->query;
	ir.websocket = is_websocket(r->c);
	if (!(st = ingress_check(&r->gw->g, &ir, r->path, sizeof r->path, why,
	    sizeof why)))
		return 0;
	*ret = reply_error(r, (unsigned)st, "HW-INGRESS-002", "%s", why);
	return 1;
}

static void *
on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct req *r = xcalloc(1, sizeof *r);
	char *q;

	r->gw = cls;
	r->c = c;
	r->uri = xstrdup(strlen(uri) > URI_MAX ? "" : uri);
	if ((q = strchr(r->uri, '?'))) {
		*q = '\0';
		r->query = q + 1;
	}
	buf_init(&r->body);
	return r;
}

static void
on_done(void *cls, struct MHD_Connection *c, void **con_cls,
    enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)cls, (void)c, (void)toe;
	if (!r)
		return;
	buf_release(&r->body);
	free(r->uri);
	free(r);
	*con_cls = NULL;
}

/* the raw URI is kept: nothing is decoded before the policy looks */
static size_t
no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
	(void)cls, (void)c;
	return strlen(s);
}

static enum MHD_Result
first_call(struct req *r, const char *method)
{
	const char *cl;
	enum MHD_Result ret;
	char *end;
	unsigned long long n;

	r->started = 1;
	r->method = method;
	if (!r->uri[0])
		return reply_error(r, 414, NULL, "the request target is longer "
		    "than %d bytes", URI_MAX);
	if (admit(r, &ret))
		return ret;
	cl = MHD_lookup_connection_value(r->c, MHD_HEADER_KIND,
	    "Content-Length");
	if (cl) {
		n = strtoull(cl, &end, 10);
		if (*end || n > BODY_MAX)
			return reply_error(r, 413, NULL, "the request body is "
			    "larger than %u bytes", BODY_MAX);
	}
	return MHD_YES;
}

static enum MHD_Result
on_request(void *cls, struct MHD_Connection *c, const char *url,
    const char *method, const char *version, const char *upload,
    size_t *upload_size, void **con_cls)
{
	struct req *r = *con_cls;

	(void)cls, (void)url, (void)version;
	if (!r)
		return MHD_NO;
	if (!r->started)
		return first_call(r, method);
	if (r->done) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (*upload_size) {
		/* libmicrohttpd answers only once the body is read: the rest
		   of one too large is read and dropped */
		if (r->too_big || r->body.len + *upload_size > BODY_MAX) {
			r->too_big = 1;
			buf_release(&r->body);
		} else {
			buf_add(&r->body, upload, *upload_size);
		}
		*upload_size = 0;
		return MHD_YES;
	}
	(void)c;
	if (r->too_big)
		return reply_error(r, 413, NULL, "the request body is larger "
		    "than %u bytes", BODY_MAX);
	return route(r);
}

static char *
data_path(const char *env, const char *rel)
{
	const char *v = getenv(env);
	char *dd;
	char *p;

	if (v && *v)
		return xstrdup(v);
	if (!(dd = datadir_path()))
		return path_join("share", rel);
	p = path_join(dd, rel);
	free(dd);
	return p;
}

struct gateway *
gateway_start(const struct serve_opts *o, int *port)
{
	struct gateway *gw = xcalloc(1, sizeof *gw);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	const union MHD_DaemonInfo *di;
	struct ingress probe;

	/* a bad policy is refused before anything is bound */
	if (ingress_config(&probe, o, o->port ? o->port : 8767) < 0)
		goto fail;
	memset(&ss, 0, sizeof ss);
	if (strchr(o->host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)o->port);
		inet_pton(AF_INET6, o->host, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)o->port);
		inet_pton(AF_INET, strcmp(o->host, "localhost") ? o->host :
		    "127.0.0.1", &s4->sin_addr);
	}
	gw->web_root = o->web_root ? xstrdup(o->web_root) :
	    data_path("HW_WEB_ROOT", "www");
	gw->lib_root = xstrdup(getenv("HW_WEB_LIBS") && *getenv("HW_WEB_LIBS")
	    ? getenv("HW_WEB_LIBS") : "/usr/share/javascript");
	gw->hub = hub_new(gw);
	gw->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
	    MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_ALLOW_UPGRADE |
	    (strchr(o->host, ':') ? MHD_USE_IPv6 : 0), 0, NULL, NULL,
	    on_request, gw,
	    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, gw,
	    MHD_OPTION_NOTIFY_COMPLETED, on_done, gw,
	    MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, gw,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
	    MHD_OPTION_THREAD_POOL_SIZE, (unsigned)POOL_THREADS,
	    MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024),
	    MHD_OPTION_END);
	if (!gw->d) {
		hw_err_set(HW_EXIT_UNAVAILABLE, "cannot listen on '%s' port "
		    "%d", o->host, o->port);
		goto fail;
	}
	di = MHD_get_daemon_info(gw->d, MHD_DAEMON_INFO_BIND_PORT);
	*port = di ? di->port : o->port;
	(void)sl;
	if (ingress_config(&gw->g, o, *port) < 0)
		goto fail;
	ingress_csp(&gw->g, gw->csp, sizeof gw->csp);
	snprintf(gw->url, sizeof gw->url, "%s%s/", gw->g.origin, gw->g.base);
	return gw;
fail:
	gateway_stop(gw);
	return NULL;
}

const char *
gateway_url(const struct gateway *gw)
{
	return gw->url;
}

const char *
gateway_listen(const struct gateway *gw)
{
	return gw->g.bind_authority;
}

void
gateway_stop(struct gateway *gw)
{
	if (!gw)
		return;
	hub_close(gw->hub);
	/* before: a request waiting for a sign-in's code ends with it */
	subscription_end();
	if (gw->d)
		MHD_stop_daemon(gw->d);
	subscription_end();
	hub_free(gw->hub);
	free(gw->web_root);
	free(gw->lib_root);
	free(gw);
}
