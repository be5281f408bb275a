/*
 * ws_fuzz - what hw-serve reads from a browser before anything is routed.
 * The first byte picks the reader, the rest is its input:
 *
 *	W  a stream of client WebSocket frames (ws_parse, frame after frame):
 *	   a frame never claims more bytes than it was given, its payload
 *	   stays within the bound, and a masked frame made from any payload
 *	   parses back to that payload
 *	I  a raw request target (path and query) and the Origin header for
 *	   the ingress policy of a jupyter-proxy gateway: a request let in
 *	   has an internal path that is absolute and free of '%', '\', '.'
 *	   and '..' segments
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t n);

static void
frames(const unsigned char *p, size_t n)
{
	struct buf pl, again, out;
	long used;
	int op, fin, op2, fin2;
	size_t i;

	buf_init(&pl);
	buf_init(&again);
	buf_init(&out);
	while ((used = ws_parse(p, n, &op, &fin, &pl)) > 0) {
		if ((size_t)used > n || pl.len > WS_FRAME_MAX)
			abort();
		/* masked again by a client, it parses to the same payload */
		buf_clear(&out);
		ws_frame(&out, op, pl.p, pl.len);
		out.p[0] = (char)(fin ? out.p[0] : out.p[0] & 0x7f);
		out.p[1] = (char)(out.p[1] | 0x80);
		buf_reserve(&out, 4);
		memmove(out.p + (out.len - pl.len) + 4, out.p + (out.len -
		    pl.len), pl.len);
		memcpy(out.p + (out.len - pl.len), "\x01\x02\x03\x04", 4);
		for (i = 0; i < pl.len; i++)
			out.p[out.len - pl.len + 4 + i] ^= "\x01\x02\x03\x04"[i & 3];
		out.len += 4;
		if (ws_parse((unsigned char *)out.p, out.len, &op2, &fin2,
		    &again) != (long)out.len || op2 != op || fin2 != fin ||
		    again.len != pl.len || (pl.len && memcmp(again.p, pl.p,
		    pl.len)))
			abort();
		p += used;
		n -= (size_t)used;
	}
	buf_release(&pl);
	buf_release(&again);
	buf_release(&out);
}

static void
target(const unsigned char *data, size_t n)
{
	static struct ingress g;
	static int ready;
	struct serve_opts o = {
		.host = "127.0.0.1", .mode = "jupyter-proxy",
		.origin = "https://hub.example.org", .base_path = "/u/p",
		.strips_prefix = 1,
	};
	struct sockaddr_in peer = { .sin_family = AF_INET };
	const char *names[2] = { "Host", "Origin" };
	const char *values[2] = { "hub.example.org", NULL };
	struct ingress_req r;
	char *s = malloc(n + 1), *nl, *q, path[4096], why[512];

	if (!ready && ingress_config(&g, &o, 8767) == 0)
		ready = 1;
	if (!ready)
		abort();
	memcpy(s, data, n);
	s[n] = '\0';
	values[1] = (nl = strchr(s, '\n')) ? nl + 1 : "https://hub.example.org";
	if (nl)
		*nl = '\0';
	if ((q = strchr(s, '?')))
		*q++ = '\0';
	peer.sin_addr.s_addr = htonl(0x7f000001);
	r = (struct ingress_req){ names, values, 2,
	    (const struct sockaddr *)&peer, s, q, 0 };
	if (ingress_check(&g, &r, path, sizeof path, why, sizeof why) == 0 &&
	    (path[0] != '/' || strpbrk(path, "%\\") || strstr(path, "/./") ||
	    strstr(path, "/../") || strstr(path, "//")))
		abort();
	free(s);
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t n)
{
	if (n < 1)
		return 0;
	if (data[0] == 'W')
		frames(data + 1, n - 1);
	else if (data[0] == 'I')
		target(data + 1, n - 1);
	return 0;
}
