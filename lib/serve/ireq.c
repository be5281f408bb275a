/*
 * ireq.c - the per-request checks of the ingress policy, applied once to
 * every request before it is routed (reference 4, steps 1-8)
 */
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "serve/serve.h"

static const char *const forwarding[] = {
	"forwarded", "x-forwarded-for", "x-forwarded-host",
	"x-forwarded-prefix", "x-forwarded-proto", "x-forwarded-port",
	"x-forwarded-server", "x-forwarded-uri", "x-real-ip",
	"x-original-url", "x-rewrite-url", "x-forwarded-context",
	"x-proxycontextpath", NULL
};

static int
refuse(int status, char *why, size_t wn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, wn, fmt, ap);
	va_end(ap);
	return status;
}

static int
in_list(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (!strcasecmp(name, *list))
			return 1;
	return 0;
}

/* hdr: the value of header name (NULL if absent); *count how many */
static const char *
hdr(const struct ingress_req *r, const char *name, int *count)
{
	const char *v = NULL;
	size_t i;

	*count = 0;
	for (i = 0; i < r->nheaders; i++)
		if (!strcasecmp(r->names[i], name)) {
			++*count;
			v = r->values[i];
		}
	return v;
}

static int
once(const struct ingress_req *r, const char *name)
{
	int k;

	hdr(r, name, &k);
	return k <= 1;
}

/* step 1: ASCII names; no repeat of the headers that must be single */
static int
headers_ok(const struct ingress_req *r, char *why, size_t wn)
{
	static const char *const single[] = {
		"host", "origin", "sec-fetch-site", NULL
	};
	size_t i;
	const char *c;

	for (i = 0; i < r->nheaders; i++) {
		for (c = r->names[i]; *c; c++)
			if ((unsigned char)*c > 0x7e || (unsigned char)*c <
			    0x21)
				return refuse(400, why, wn, "header names must "
				    "be ASCII");
		if ((in_list(r->names[i], single) || in_list(r->names[i],
		    forwarding)) && !once(r, r->names[i]))
			return refuse(400, why, wn, "repeated header '%s'",
			    r->names[i]);
	}
	return 0;
}

static int
ip16(const char *s, unsigned char a[16])
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };

	if (inet_pton(AF_INET6, s, &s6.sin6_addr) == 1) {
		memcpy(a, &s6.sin6_addr, 16);
		return 0;
	}
	if (inet_pton(AF_INET, s, &s4.sin_addr) != 1)
		return -1;
	memset(a, 0, 10);
	a[10] = a[11] = 0xff;
	memcpy(a + 12, &s4.sin_addr, 4);
	return 0;
}

static int
in_sources(const struct ingress *g, const unsigned char a[16])
{
	size_t i;
	int full, rest;

	for (i = 0; i < g->nsources; i++) {
		full = g->sources[i].bits / 8, rest = g->sources[i].bits % 8;
		if (memcmp(g->sources[i].addr, a, (size_t)full))
			continue;
		if (!rest || ((g->sources[i].addr[full] ^ a[full]) &
		    (0xff << (8 - rest))) == 0)
			return 1;
	}
	return 0;
}

static int
peer16(const struct sockaddr *sa, unsigned char a[16])
{
	char s[INET6_ADDRSTRLEN];

	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->
		    sin6_addr, s, sizeof s);
	else if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr,
		    s, sizeof s);
	else
		return -1;
	return ip16(s, a);
}

static int
private_peer(const unsigned char a[16])
{
	static const unsigned char pre[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(a, pre, 12))
		return a[12] == 10 || (a[12] == 172 && (a[13] & 0xf0) == 16) ||
		    (a[12] == 192 && a[13] == 168) ||
		    (a[12] == 169 && a[13] == 254);
	return (a[0] & 0xfe) == 0xfc || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80);
}

/* step 2: where the connection comes from */
static int
source_ok(const struct ingress *g, const struct ingress_req *r, char *why,
    size_t wn)
{
	unsigned char a[16];

	if (peer16(r->peer, a) < 0)
		return refuse(403, why, wn, "the client address is unknown");
	if (g->mode == INGRESS_TRUSTED) {
		if (!in_sources(g, a))
			return refuse(403, why, wn, "the client is not a "
			    "trusted proxy source");
		return 0;
	}
	if (ingress_loopback(r->peer))
		return 0;
	if (g->mode == INGRESS_DIRECT && g->publication && private_peer(a))
		return 0;
	return refuse(403, why, wn, "the client is not on the loopback "
	    "interface");
}

/* a chain of 1-8 addresses "a, b, c" */
static int
ip_chain(const char *v, size_t max)
{
	char one[64];
	unsigned char a[16];
	size_t n, k = 0;

	for (;;) {
		v += strspn(v, " ");
		n = strcspn(v, ",");
		while (n && v[n - 1] == ' ')
			n--;
		if (!n || n >= sizeof one || ++k > max)
			return 0;
		memcpy(one, v, n);
		one[n] = '\0';
		if (ip16(one, a) < 0)
			return 0;
		v += n;
		v += strspn(v, " ");
		if (!*v)
			return 1;
		if (*v++ != ',')
			return 0;
	}
}

static int
jupyter_forwarding(const struct ingress *g, const struct ingress_req *r,
    char *why, size_t wn)
{
	int k;
	const char *ctx = hdr(r, "x-forwarded-context", &k);
	const char *pcp = hdr(r, "x-proxycontextpath", &k);
	const char *pre = hdr(r, "x-forwarded-prefix", &k);
	const char *fh = hdr(r, "x-forwarded-host", &k);
	const char *fp = hdr(r, "x-forwarded-proto", &k);
	const char *ff = hdr(r, "x-forwarded-for", &k);

	if ((ctx || pcp) && !(ctx && pcp && pre))
		return refuse(403, why, wn, "proxy context headers need "
		    "X-Forwarded-Context, X-ProxyContextPath and "
		    "X-Forwarded-Prefix together");
	if (!fh != !fp)
		return refuse(403, why, wn, "X-Forwarded-Host and "
		    "X-Forwarded-Proto come only as a pair");
	if (ff && !ip_chain(ff, 8))
		return refuse(403, why, wn, "X-Forwarded-For must be 1-8 "
		    "addresses");
	if (fh && (strcasecmp(fh, g->authority) || strcasecmp(fp,
	    g->scheme)))
		return refuse(403, why, wn, "forwarded host or scheme does "
		    "not match the origin");
	if ((ctx && strcmp(ctx, g->base)) || (pcp && strcmp(pcp, g->base)) ||
	    (pre && strcmp(pre, g->base)))
		return refuse(403, why, wn, "a forwarded prefix does not "
		    "match the base path");
	return 0;
}

static int
trusted_forwarding(const struct ingress *g, const struct ingress_req *r,
    char *why, size_t wn)
{
	int k;
	const char *ff = hdr(r, "x-forwarded-for", &k);
	const char *fh = hdr(r, "x-forwarded-host", &k);
	const char *fp = hdr(r, "x-forwarded-proto", &k);
	const char *pre = hdr(r, "x-forwarded-prefix", &k);
	const char *id;

	if (hdr(r, "x-forwarded-context", &k) || hdr(r,
	    "x-proxycontextpath", &k))
		return refuse(403, why, wn, "proxy context headers are "
		    "refused from a trusted proxy");
	if (!ff || !fh || !fp || !pre)
		return refuse(403, why, wn, "a trusted proxy must send "
		    "X-Forwarded-For, -Host, -Proto and -Prefix");
	if (!ip_chain(ff, 1))
		return refuse(403, why, wn, "X-Forwarded-For must be one "
		    "address");
	if (strcasecmp(fh, g->authority) || strcasecmp(fp, g->scheme) ||
	    strcmp(pre, g->base))
		return refuse(403, why, wn, "forwarded host, scheme or prefix "
		    "does not match the origin and base path");
	if (g->id_name[0] && (!(id = hdr(r, g->id_name, &k)) || k != 1 ||
	    strcmp(id, g->id_value)))
		return refuse(403, why, wn, "the identity header is missing "
		    "or wrong");
	return 0;
}

/* step 3: forwarding headers, per mode */
static int
forwarding_ok(const struct ingress *g, const struct ingress_req *r,
    char *why, size_t wn)
{
	static const char *const never[] = {
		"forwarded", "x-original-url", "x-rewrite-url",
		"x-forwarded-port", "x-forwarded-server", "x-forwarded-uri",
		"x-real-ip", NULL
	};
	size_t i;

	for (i = 0; i < r->nheaders; i++) {
		if (g->mode == INGRESS_DIRECT && in_list(r->names[i],
		    forwarding))
			return refuse(403, why, wn, "forwarding header '%s' "
			    "on a direct connection", r->names[i]);
		if (in_list(r->names[i], never))
			return refuse(403, why, wn, "forwarding header '%s' "
			    "is not accepted", r->names[i]);
	}
	if (g->mode == INGRESS_JUPYTER)
		return jupyter_forwarding(g, r, why, wn);
	if (g->mode == INGRESS_TRUSTED)
		return trusted_forwarding(g, r, why, wn);
	return 0;
}

/* steps 4 and 5: Host, Origin, Sec-Fetch-Site */
static int
host_origin_ok(const struct ingress *g, const struct ingress_req *r,
    char *why, size_t wn)
{
	int k;
	const char *h = hdr(r, "host", &k), *o, *sfs;

	if (k != 1 || !h)
		return refuse(400, why, wn, "exactly one Host header is "
		    "required");
	if (strcasecmp(h, g->authority) && (g->wildcard ||
	    strcasecmp(h, g->bind_authority)))
		return refuse(403, why, wn, "Host '%.200s' is not this "
		    "gateway's", h);
	o = hdr(r, "origin", &k);
	if (!o && r->websocket)
		return refuse(403, why, wn, "a WebSocket request needs an "
		    "Origin header");
	if (o && strcasecmp(o, g->origin))
		return refuse(403, why, wn, "Origin '%.200s' is not this "
		    "gateway's", o);
	sfs = hdr(r, "sec-fetch-site", &k);
	if (sfs && strcmp(sfs, "none") && strcmp(sfs, "same-origin"))
		return refuse(403, why, wn, "Sec-Fetch-Site '%.40s' is not "
		    "same-origin", sfs);
	return 0;
}

/* step 6: the raw path */
static int
path_ok_raw(const char *p, char *why, size_t wn)
{
	const char *seg;
	size_t n;

	if (p[0] != '/')
		return refuse(400, why, wn, "the path must be absolute");
	if (strpbrk(p, "%\\?#"))
		return refuse(400, why, wn, "the path may not hold '%%', "
		    "'\\', '?' or '#'");
	if (!valid_utf8(p, strlen(p)))
		return refuse(400, why, wn, "the path is not UTF-8");
	if (!strcmp(p, "/"))
		return 0;
	for (seg = p + 1;; seg += n + 1) {
		n = strcspn(seg, "/");
		if (n == 0 && seg[n] == '/')
			return refuse(400, why, wn, "the path has an empty "
			    "segment");
		if ((n == 1 && seg[0] == '.') || (n == 2 && !strncmp(seg, "..",
		    2)))
			return refuse(400, why, wn, "the path has a '.' or "
			    "'..' segment");
		if (!seg[n])
			return 0;
	}
}

/* step 7: the raw query */
static int
query_ok(const char *q, char *why, size_t wn)
{
	size_t n;

	if (!q)
		return 0;
	n = strlen(q);
	if (n > INGRESS_QUERY_MAX)
		return refuse(400, why, wn, "the query is longer than %d "
		    "bytes", INGRESS_QUERY_MAX);
	if (!valid_utf8(q, n) || strpbrk(q, "\r\n#"))
		return refuse(400, why, wn, "the query must be UTF-8 without "
		    "CR, LF, NUL or '#'");
	return 0;
}

/* step 8: the base path, stripped by the proxy or here */
static int
prefix_ok(const struct ingress *g, const char *p, char *path, size_t n,
    char *why, size_t wn)
{
	size_t bl = strlen(g->base);
	int under = bl && !strncmp(p, g->base, bl) && (p[bl] == '/' ||
	    !p[bl]);

	if (g->strip) {
		if (under)
			return refuse(400, why, wn, "the proxy should have "
			    "taken the base path off");
		snprintf(path, n, "%s", p);
		return 0;
	}
	if (bl && !under)
		return refuse(404, why, wn, "not under the base path");
	snprintf(path, n, "%s", p[bl] ? p + bl : "/");
	return 0;
}

int
ingress_check(const struct ingress *g, const struct ingress_req *r,
    char *path, size_t n, char *why, size_t wn)
{
	int st;

	if ((st = headers_ok(r, why, wn)) || (st = source_ok(g, r, why, wn)) ||
	    (st = forwarding_ok(g, r, why, wn)) ||
	    (st = host_origin_ok(g, r, why, wn)) ||
	    (st = path_ok_raw(r->path, why, wn)) ||
	    (st = query_ok(r->query, why, wn)))
		return st;
	return prefix_ok(g, r->path, path, n, why, wn);
}
