/*
 * ingress_test - the source-address checks of hw-serve's ingress policy,
 * which the bats suites cannot reach from loopback: a direct gateway
 * takes loopback clients only, and private or link-local ones too only
 * under the host-loopback publication assertion; a Jupyter gateway
 * loopback only; a trusted one its ranges only, IPv4 and IPv6.
 */
#include <arpa/inet.h>
#include <string.h>

#include "serve/serve.h"
#include "tap.h"

/* status: what ingress_check answers a GET /sessions from addr */
static int
status(const struct ingress *g, const char *addr, const char *host)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	const char *names[] = { "Host" }, *values[] = { host };
	struct ingress_req r = { names, values, 1, NULL, "/sessions", NULL, 0 };
	char path[256], why[256];

	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1)
		r.peer = (struct sockaddr *)&s4;
	else if (inet_pton(AF_INET6, addr, &s6.sin6_addr) == 1)
		r.peer = (struct sockaddr *)&s6;
	return ingress_check(g, &r, path, sizeof path, why, sizeof why);
}

/* forwarded: a trusted proxy's GET /hw/sessions from addr */
static int
forwarded(const struct ingress *g, const char *addr)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in s4 = { .sin_family = AF_INET };
	const char *names[] = { "Host", "X-Forwarded-For",
	    "X-Forwarded-Host", "X-Forwarded-Proto", "X-Forwarded-Prefix" };
	const char *values[] = { "lab.example.org", "192.0.2.7",
	    "lab.example.org", "https", "/hw" };
	struct ingress_req r = { names, values, 5, NULL, "/hw/sessions", NULL,
	    0 };
	char path[256], why[256];
	int st;

	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1)
		r.peer = (struct sockaddr *)&s4;
	else if (inet_pton(AF_INET6, addr, &s6.sin6_addr) == 1)
		r.peer = (struct sockaddr *)&s6;
	st = ingress_check(g, &r, path, sizeof path, why, sizeof why);
	return st ? st : strcmp(path, "/sessions") ? -1 : 0;
}

int
main(void)
{
	struct ingress g;
	struct serve_opts direct = { .host = "127.0.0.1" };
	struct serve_opts pub = { .host = "0.0.0.0",
	    .loopback_publication = 1 };
	struct serve_opts jup = { .host = "127.0.0.1",
	    .mode = "jupyter-proxy", .origin = "https://hub.example.org",
	    .base_path = "/p", .strips_prefix = 1 };
	struct serve_opts tr = { .host = "::", .mode = "trusted-proxy",
	    .origin = "https://lab.example.org", .base_path = "/hw",
	    .sources = { "10.1.0.0/16", "fd00:1::/32" }, .nsources = 2 };

	ok(ingress_config(&g, &direct, 8767) == 0, "direct: configured");
	ok(status(&g, "127.0.0.1", "127.0.0.1:8767") == 0, "direct: loopback");
	ok(status(&g, "127.8.9.10", "127.0.0.1:8767") == 0,
	    "direct: all of 127/8");
	ok(status(&g, "::1", "127.0.0.1:8767") == 0, "direct: ::1");
	ok(status(&g, "::ffff:127.0.0.1", "127.0.0.1:8767") == 0,
	    "direct: mapped loopback");
	ok(status(&g, "192.168.1.5", "127.0.0.1:8767") == 403,
	    "direct: a private client without the assertion is 403");
	ok(status(&g, "192.0.2.9", "127.0.0.1:8767") == 403,
	    "direct: another client is 403");

	ok(ingress_config(&g, &pub, 8767) == 0, "published: configured");
	is_str(g.origin, "http://127.0.0.1:8767", "published: origin");
	ok(status(&g, "172.17.0.1", "127.0.0.1:8767") == 0,
	    "published: a container bridge");
	ok(status(&g, "169.254.3.4", "127.0.0.1:8767") == 0,
	    "published: link-local");
	ok(status(&g, "fe80::1", "127.0.0.1:8767") == 0,
	    "published: IPv6 link-local");
	ok(status(&g, "172.32.0.1", "127.0.0.1:8767") == 403,
	    "published: 172.32/16 is not private");
	ok(status(&g, "192.0.2.9", "127.0.0.1:8767") == 403,
	    "published: a public client is 403");
	ok(status(&g, "172.17.0.1", "0.0.0.0:8767") == 403,
	    "published: the wildcard is no Host");

	ok(ingress_config(&g, &jup, 8767) == 0, "jupyter: configured");
	ok(status(&g, "127.0.0.1", "hub.example.org") == 0,
	    "jupyter: loopback");
	ok(status(&g, "10.0.0.1", "hub.example.org") == 403,
	    "jupyter: a private client is 403");

	ok(ingress_config(&g, &tr, 8767) == 0, "trusted: configured");
	ok(forwarded(&g, "10.1.255.255") == 0, "trusted: in the v4 range");
	ok(forwarded(&g, "fd00:1:ffff::9") == 0, "trusted: in the v6 range");
	ok(forwarded(&g, "::ffff:10.1.0.1") == 0, "trusted: mapped v4");
	ok(status(&g, "10.1.255.255", "lab.example.org") == 403,
	    "trusted: in range, but without forwarding headers");
	ok(forwarded(&g, "10.2.0.1") == 403, "trusted: out of range");
	ok(forwarded(&g, "fd00:2::1") == 403, "trusted: out of the v6 range");
	ok(forwarded(&g, "127.0.0.1") == 403,
	    "trusted: loopback is no source unless listed");
	tr.sources[0] = "10.1.0.0/0";
	ok(ingress_config(&g, &tr, 8767) < 0, "trusted: /0 is refused");
	tr.sources[0] = "10.1.0.0/33";
	ok(ingress_config(&g, &tr, 8767) < 0, "trusted: /33 is refused");
	return tap_done();
}
