/* hw-serve - the browser gateway: REST, SSE and WebSocket on loopback */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "serve/serve.h"

static const char usage[] =
    "usage: hw-serve [--host ADDR] [--port N]\n"
    "                [--ingress direct-loopback | jupyter-proxy | "
    "trusted-proxy]\n"
    "                [--origin URL] [--base-path PATH] "
    "[--trusted-source CIDR]...\n"
    "                [--proxy-strips-prefix] [--identity-header NAME:VALUE]\n"
    "                [--host-loopback-publication] [--web-root DIR]\n"
    "       hw-serve -h | --version\n";

static int
parse_port(const char *s, int *port)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || end == s || v < 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

/* serve_until_signal prints {url, pid} and waits for SIGINT or SIGTERM */
static int
serve_until_signal(const struct serve_opts *o)
{
	struct gateway *gw;
	sigset_t set;
	int port, sig = 0;
	struct buf b;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	/* every thread started from here on leaves them to sigwait */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if (!(gw = gateway_start(o, &port)))
		return -1;
	buf_init(&b);
	buf_printf(&b, "{\"listen\":\"http://%s\",\"pid\":%ld,\"url\":",
	    gateway_listen(gw), (long)getpid());
	json_canon_str(&b, gateway_url(gw), strlen(gateway_url(gw)));
	buf_adds(&b, "}\n");
	fwrite(b.p, 1, b.len, stdout);
	buf_release(&b);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		gateway_stop(gw);
		return hw_err_sys("cannot write 'stdout'");
	}
	sigwait(&set, &sig);
	gateway_stop(gw);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "host", required_argument, NULL, 'H' },
		{ "port", required_argument, NULL, 'p' },
		{ "ingress", required_argument, NULL, 'i' },
		{ "origin", required_argument, NULL, 'o' },
		{ "base-path", required_argument, NULL, 'b' },
		{ "trusted-source", required_argument, NULL, 's' },
		{ "proxy-strips-prefix", no_argument, NULL, 'S' },
		{ "identity-header", required_argument, NULL, 'I' },
		{ "host-loopback-publication", no_argument, NULL, 'P' },
		{ "web-root", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	struct serve_opts o = { .host = "127.0.0.1", .port = 8767 };
	struct rlimit rl;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'H': o.host = optarg; break;
		case 'p':
			if (parse_port(optarg, &o.port) < 0) {
				fprintf(stderr, "hw-serve: invalid --port '%s': "
				    "want 0-65535\n", optarg);
				return HW_EXIT_USAGE;
			}
			break;
		case 'i': o.mode = optarg; break;
		case 'o': o.origin = optarg; break;
		case 'b': o.base_path = optarg; break;
		case 's':
			if (o.nsources == INGRESS_SOURCES_MAX) {
				fprintf(stderr, "hw-serve: more than %d "
				    "--trusted-source\n", INGRESS_SOURCES_MAX);
				return HW_EXIT_USAGE;
			}
			o.sources[o.nsources++] = optarg;
			break;
		case 'S': o.strips_prefix = 1; break;
		case 'I': o.identity = optarg; break;
		case 'P': o.loopback_publication = 1; break;
		case 'w': o.web_root = optarg; break;
		case 'h': fputs(usage, stdout);
			return prog_finish("hw-serve", 0);
		case 'V': puts("hw-serve " HW_VERSION);
			return prog_finish("hw-serve", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fputs(usage, stderr);
		return HW_EXIT_USAGE;
	}
	signal(SIGPIPE, SIG_IGN);
	/* a closed 0, 1 or 2 would be a client's socket soon */
	while ((c = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0 && c < 3)
		fcntl(c, F_SETFD, 0);
	if (c > 2)
		close(c);
	/* a thousand streams want a descriptor each */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (serve_until_signal(&o) < 0)
		return prog_finish("hw-serve", prog_fail("hw-serve"));
	return prog_finish("hw-serve", 0);
}
