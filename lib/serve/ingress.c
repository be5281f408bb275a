/*
 * ingress.c - the gateway's ingress policy: which configurations may
 * start, and which requests reach the routes (reference 4)
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "serve/serve.h"

static int
cfg_err(const char *fmt, const char *arg)
{
	return hw_err_set(HW_EXIT_USAGE, "HW-INGRESS-001: %s%s%s%s", fmt,
	    arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
}

/* to16 writes a v4 (mapped) or v6 address; -1 if s is neither */
static int
to16(const char *s, unsigned char out[16])
{
	struct in_addr a4;

	if (inet_pton(AF_INET6, s, out) == 1)
		return 0;
	if (inet_pton(AF_INET, s, &a4) != 1)
		return -1;
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &a4, 4);
	return 0;
}

static int
mapped(const unsigned char a[16])
{
	static const unsigned char pre[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(a, pre, 12);
}

static int
loop16(const unsigned char a[16])
{
	static const unsigned char one[16] = { [15] = 1 };

	return mapped(a) ? a[12] == 127 : !memcmp(a, one, 16);
}

static int
sa16(const struct sockaddr *sa, unsigned char out[16])
{
	if (!sa)
		return -1;
	if (sa->sa_family == AF_INET6) {
		memcpy(out, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	if (sa->sa_family != AF_INET)
		return -1;
	memset(out, 0, 10);
	out[10] = out[11] = 0xff;
	memcpy(out + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	return 0;
}

int
ingress_loopback(const struct sockaddr *sa)
{
	unsigned char a[16];

	return sa16(sa, a) == 0 && loop16(a);
}

static int
cidr_parse(const char *s, struct cidr *c)
{
	char ip[64], *slash, *end;
	long bits;
	int v4;

	if (strlen(s) >= sizeof ip)
		return -1;
	strcpy(ip, s);
	if (!(slash = strchr(ip, '/')))
		return -1;
	*slash++ = '\0';
	v4 = !strchr(ip, ':');
	bits = strtol(slash, &end, 10);
	if (*end || end == slash || bits < 1 || bits > (v4 ? 32 : 128) ||
	    to16(ip, c->addr) < 0 || (v4 && strchr(ip, ':')))
		return -1;
	c->bits = (int)bits + (v4 ? 96 : 0);
	return 0;
}

/* host_ok: a DNS name or bracketed IPv6, lowercased into out */
static int
host_ok(const char *h, size_t n, char *out, size_t on)
{
	size_t i;

	if (!n || n >= on)
		return 0;
	if (h[0] == '[') {
		unsigned char a[16];
		char tmp[64];

		if (h[n - 1] != ']' || n - 2 >= sizeof tmp)
			return 0;
		memcpy(tmp, h + 1, n - 2);
		tmp[n - 2] = '\0';
		if (inet_pton(AF_INET6, tmp, a) != 1)
			return 0;
	} else {
		for (i = 0; i < n; i++)
			if (!isalnum((unsigned char)h[i]) && h[i] != '.' &&
			    h[i] != '-')
				return 0;
	}
	for (i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)h[i]);
	out[n] = '\0';
	return 1;
}

/*
 * origin_norm checks an origin: http or https and an authority, nothing
 * else; the default port is dropped.  Writes scheme and authority.
 */
static int
origin_norm(const char *o, struct ingress *g)
{
	const char *a, *colon;
	char host[256];
	size_t hn;
	long port = 0;
	char *end;

	if (!strncasecmp(o, "http://", 7))
		strcpy(g->scheme, "http"), a = o + 7;
	else if (!strncasecmp(o, "https://", 8))
		strcpy(g->scheme, "https"), a = o + 8;
	else
		return -1;
	if (strpbrk(a, "/?#@* \t\r\n\\") || !*a)
		return -1;
	colon = a[0] == '[' ? strstr(a, "]:") : strrchr(a, ':');
	if (colon && a[0] == '[')
		colon++;
	hn = colon ? (size_t)(colon - a) : strlen(a);
	if (!host_ok(a, hn, host, sizeof host))
		return -1;
	if (colon) {
		port = strtol(colon + 1, &end, 10);
		if (*end || end == colon + 1 || port < 1 || port > 65535)
			return -1;
	}
	if ((port == 80 && !strcmp(g->scheme, "http")) ||
	    (port == 443 && !strcmp(g->scheme, "https")))
		port = 0;
	if (port)
		snprintf(g->authority, sizeof g->authority, "%s:%ld", host,
		    port);
	else
		snprintf(g->authority, sizeof g->authority, "%s", host);
	snprintf(g->origin, sizeof g->origin, "%s://%s", g->scheme,
	    g->authority);
	return 0;
}

/* origin_loopback: the origin's host is localhost or a loopback IP */
static int
origin_loopback(const struct ingress *g)
{
	char h[300], *c;
	unsigned char a[16];

	snprintf(h, sizeof h, "%s", g->authority);
	if (h[0] == '[') {
		if ((c = strchr(h, ']')))
			*c = '\0';
		memmove(h, h + 1, strlen(h));
	} else if ((c = strrchr(h, ':'))) {
		*c = '\0';
	}
	return !strcmp(h, "localhost") || (to16(h, a) == 0 && loop16(a));
}

static int
token_char(int c)
{
	return isalnum(c) || strchr("!#$%&'*+-.^_`|~", c);
}

static const char *const reserved_headers[] = {
	"host", "origin", "authorization", "cookie", "set-cookie",
	"content-length", "content-type", "transfer-encoding", "connection",
	"upgrade", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest",
	"sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
	"forwarded", "x-forwarded-for", "x-forwarded-host",
	"x-forwarded-prefix", "x-forwarded-proto", "x-forwarded-port",
	"x-forwarded-server", "x-forwarded-uri", "x-real-ip",
	"x-original-url", "x-rewrite-url", "x-forwarded-context",
	"x-proxycontextpath", NULL
};

static int
identity_parse(struct ingress *g, const char *s)
{
	const char *colon = strchr(s, ':');
	size_t n, i;

	if (!colon || colon == s || (size_t)(colon - s) >= sizeof g->id_name)
		return cfg_err("the identity header must be NAME:VALUE with "
		    "an HTTP token name", NULL);
	n = (size_t)(colon - s);
	for (i = 0; i < n; i++)
		if (!token_char((unsigned char)s[i]))
			return cfg_err("the identity header name is not an "
			    "HTTP token", NULL);
	for (i = 0; i < n; i++)
		g->id_name[i] = (char)tolower((unsigned char)s[i]);
	g->id_name[n] = '\0';
	for (i = 0; reserved_headers[i]; i++)
		if (!strcmp(g->id_name, reserved_headers[i]))
			return cfg_err("the identity header may not be",
			    g->id_name);
	n = strlen(colon + 1);
	if (n < 1 || n > INGRESS_IDENTITY_MAX || strpbrk(colon + 1, "\r\n"))
		return cfg_err("the identity value must have 1-512 characters "
		    "and no CR or LF", NULL);
	memcpy(g->id_value, colon + 1, n + 1);
	return 0;
}

/* bind_check: a literal IP or localhost; sets wildcard and bind_authority */
static int
bind_check(struct ingress *g, const char *host, int port, int *loop)
{
	unsigned char a[16];
	static const unsigned char zero[16];

	if (!strcmp(host, "localhost")) {
		*loop = 1;
		snprintf(g->bind_authority, sizeof g->bind_authority,
		    "localhost:%d", port);
		return 0;
	}
	if (to16(host, a) < 0)
		return cfg_err("the bind host must be a literal IP address or "
		    "localhost, not", host);
	g->wildcard = !memcmp(a, zero, 16) || (mapped(a) && !memcmp(a + 12,
	    zero, 4));
	*loop = loop16(a);
	snprintf(g->bind_authority, sizeof g->bind_authority,
	    strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, port);
	return 0;
}

static int
base_norm(struct ingress *g, const char *b)
{
	size_t n;

	if (!b)
		return 0;
	n = strlen(b);
	if (b[0] != '/' || n >= sizeof g->base || strpbrk(b, "%?#\\ \t\r\n") ||
	    strstr(b, "//") || strstr(b, "/./") || strstr(b, "/../"))
		return cfg_err("the base path must be an absolute path without "
		    "'%', '?', '#', empty, '.' or '..' segments:", b);
	memcpy(g->base, b, n + 1);
	while (n > 0 && g->base[n - 1] == '/')
		g->base[--n] = '\0';
	if ((n >= 2 && !strcmp(g->base + n - 2, "/.")) ||
	    (n >= 3 && !strcmp(g->base + n - 3, "/..")))
		return cfg_err("the base path has a '.' or '..' segment:", b);
	return 0;
}

static int
mode_checks(struct ingress *g, const struct serve_opts *o, int loop,
    int port)
{
	switch (g->mode) {
	case INGRESS_DIRECT:
		if (!loop && !(g->wildcard && o->loopback_publication))
			return cfg_err("direct-loopback needs a loopback bind "
			    "(a wildcard one only with "
			    "--host-loopback-publication), not", o->host);
		if (g->nsources || g->id_name[0] || o->strips_prefix)
			return cfg_err("direct-loopback takes no trusted "
			    "source, identity header or prefix stripping",
			    NULL);
		if (!o->origin)
			snprintf(g->origin, sizeof g->origin, "http://%s",
			    g->wildcard ? "" : g->bind_authority);
		if (!o->origin && g->wildcard)
			snprintf(g->origin, sizeof g->origin,
			    "http://127.0.0.1:%d", port);
		if (!o->origin && origin_norm(g->origin, g) < 0)
			return cfg_err("cannot make an origin of", g->origin);
		if (!origin_loopback(g))
			return cfg_err("direct-loopback needs a loopback "
			    "origin, not", g->origin);
		return 0;
	case INGRESS_JUPYTER:
		if (!loop)
			return cfg_err("jupyter-proxy needs a loopback bind, "
			    "not", o->host);
		if (!o->origin || !g->base[0] || !o->strips_prefix)
			return cfg_err("jupyter-proxy needs --origin, a base "
			    "path other than '/' and --proxy-strips-prefix",
			    NULL);
		if (g->nsources || g->id_name[0])
			return cfg_err("jupyter-proxy takes no trusted source "
			    "or identity header", NULL);
		return 0;
	case INGRESS_TRUSTED:
		if (!o->origin || !g->nsources)
			return cfg_err("trusted-proxy needs --origin and at "
			    "least one --trusted-source", NULL);
		if (o->loopback_publication)
			return cfg_err("trusted-proxy cannot be combined with "
			    "--host-loopback-publication", NULL);
		return 0;
	}
	return 0;
}

int
ingress_config(struct ingress *g, const struct serve_opts *o, int port)
{
	const char *m = o->mode ? o->mode : "direct-loopback";
	int loop = 0;
	size_t i;

	memset(g, 0, sizeof *g);
	if (!strcmp(m, "direct-loopback"))
		g->mode = INGRESS_DIRECT;
	else if (!strcmp(m, "jupyter-proxy"))
		g->mode = INGRESS_JUPYTER;
	else if (!strcmp(m, "trusted-proxy"))
		g->mode = INGRESS_TRUSTED;
	else
		return cfg_err("unknown ingress mode", m);
	if (port < 1 || port > 65535)
		return cfg_err("the port must be 1-65535", NULL);
	if (bind_check(g, o->host, port, &loop) < 0 ||
	    base_norm(g, o->base_path) < 0)
		return -1;
	if (o->origin && origin_norm(o->origin, g) < 0)
		return cfg_err("the origin must be http(s)://HOST[:PORT] with "
		    "nothing more, not", o->origin);
	for (i = 0; i < o->nsources; i++) {
		if (cidr_parse(o->sources[i], &g->sources[i]) < 0)
			return cfg_err("a trusted source must be an address "
			    "range ADDRESS/BITS, bits at least 1, not",
			    o->sources[i]);
		g->nsources++;
	}
	if (o->identity && identity_parse(g, o->identity) < 0)
		return -1;
	g->publication = o->loopback_publication;
	g->strip = o->strips_prefix;
	return mode_checks(g, o, loop, port);
}

void
ingress_csp(const struct ingress *g, char *out, size_t n)
{
	snprintf(out, n, "default-src 'none'; script-src 'self'; "
	    "style-src 'self' 'unsafe-inline'; font-src 'self'; "
	    "form-action 'self'; img-src 'self' data:; "
	    "connect-src 'self' %s://%s; frame-ancestors 'self'; "
	    "base-uri 'none'", strcmp(g->scheme, "https") ? "ws" : "wss",
	    g->authority);
}
