/*
 * serve - the browser gateway: the ingress policy, the REST routes over
 * the same commands and projection as every other client, the live
 * transports (server-sent events and WebSocket) and the static UI.
 */
#ifndef HW_SERVE_H
#define HW_SERVE_H

#include <netinet/in.h>
#include <sys/socket.h>

#include "client/client.h"
#include "inspect/inspect.h"

/* ---- the ingress policy (ingress.c) ---- */

#define INGRESS_SOURCES_MAX 16
#define INGRESS_QUERY_MAX 8192
#define INGRESS_IDENTITY_MAX 512

enum ingress_mode { INGRESS_DIRECT, INGRESS_JUPYTER, INGRESS_TRUSTED };

/* what hw-serve was asked for, as its options say it */
struct serve_opts {
	const char *host;		/* "127.0.0.1" unless given */
	int port;			/* 8767 unless given; 0: any free port */
	const char *mode;		/* NULL: direct-loopback */
	const char *origin;		/* the external origin, or NULL */
	const char *base_path;		/* NULL: none */
	const char *sources[INGRESS_SOURCES_MAX];
	size_t nsources;
	int strips_prefix;		/* --proxy-strips-prefix */
	const char *identity;		/* NAME:VALUE, or NULL */
	int loopback_publication;	/* --host-loopback-publication */
	const char *web_root;		/* NULL: share/www of the data dir */
};

struct cidr {
	unsigned char addr[16];		/* IPv4 as ::ffff:a.b.c.d */
	int bits;			/* of the 128 */
};

/* the policy checked once at start: every request is held to it */
struct ingress {
	enum ingress_mode mode;
	char origin[300];		/* scheme://authority, normalized */
	char scheme[6];			/* "http" or "https" */
	char authority[280];		/* host[:port] of the origin */
	char bind_authority[280];	/* host:port hw-serve listens on */
	char base[256];			/* "" or "/p" without a trailing / */
	int wildcard;			/* bound to 0.0.0.0 or :: */
	int publication;		/* the host-loopback assertion */
	int strip;			/* the proxy strips the base path */
	struct cidr sources[INGRESS_SOURCES_MAX];
	size_t nsources;
	char id_name[64], id_value[INGRESS_IDENTITY_MAX + 1];
};

/*
 * ingress_config checks o (its port being the one bound) and fills g: -1
 * with code 2 and "HW-INGRESS-001: reason" when the configuration is
 * unsafe or inconsistent (reference 4), hw-serve refusing to start.
 */
int ingress_config(struct ingress *g, const struct serve_opts *o, int port);

/* one request as the policy sees it */
struct ingress_req {
	const char *const *names;	/* its header names, as sent */
	const char *const *values;
	size_t nheaders;
	const struct sockaddr *peer;	/* the connected client */
	const char *path;		/* the raw path, nothing decoded */
	const char *query;		/* after '?', raw, or NULL */
	int websocket;			/* an upgrade to WebSocket */
};

/*
 * ingress_check applies every per-request check of the policy, in the
 * reference's order, to r.  0 with the internal path (the base path
 * taken off) in path (of size n); otherwise the HTTP status (400, 403 or
 * 404) with the reason in why (of size wn), each with the code
 * HW-INGRESS-002.
 */
int ingress_check(const struct ingress *g, const struct ingress_req *r,
    char *path, size_t n, char *why, size_t wn);
/* ingress_loopback: 1 when sa is a loopback address */
int ingress_loopback(const struct sockaddr *sa);
/*
 * ingress_csp writes the Content-Security-Policy of the static UI for
 * g's origin into out (of size n).
 */
void ingress_csp(const struct ingress *g, char *out, size_t n);

/* ---- RFC 6455 framing (ws.c) ---- */

#define WS_FRAME_MAX (1u << 20)		/* a client frame's payload */

/* ws_accept writes the Sec-WebSocket-Accept value of key (29 bytes + NUL) */
void ws_accept(const char *key, char out[29]);
/* ws_frame appends one unmasked server frame of opcode with payload p */
void ws_frame(struct buf *out, int opcode, const void *p, size_t n);
/*
 * ws_parse reads one client frame from the n bytes at p: 0 when more
 * bytes are needed, -1 when the frame breaks RFC 6455 (unmasked, a
 * reserved bit or opcode, a control frame that is fragmented or longer
 * than 125 bytes, a payload over WS_FRAME_MAX), else the number of bytes
 * the frame took, with *opcode, *fin and the unmasked payload in pl.
 */
long ws_parse(const unsigned char *p, size_t n, int *opcode, int *fin,
    struct buf *pl);

/* ---- the gateway (http.c, routes.c, hub.c) ---- */

struct gateway;
/*
 * gateway_start checks the policy, listens and starts serving in its own
 * threads; *port gets the port bound.  NULL with the error (code 2 for
 * the policy, 69 when the socket cannot be had).
 */
struct gateway *gateway_start(const struct serve_opts *o, int *port);
/* gateway_url: where a browser reaches it, origin and base path + "/" */
const char *gateway_url(const struct gateway *gw);
/* gateway_listen: the address and port it listens on, "127.0.0.1:8767" */
const char *gateway_listen(const struct gateway *gw);
/* gateway_stop stops serving, closes every connection and frees gw. */
void gateway_stop(struct gateway *gw);

#endif
