/*
 * subscription.c - hw-model subscription sign-in|status|sign-out: the
 * ChatGPT sign-in of the connection openai-subscription (lib/conf
 * subscription.c); records on stdout, the code for people on stderr
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "catalog.h"
#include "conf/conf.h"
#include "manage.h"

#define PROG "hw-model"

static const char sub_usage[] =
    "usage: hw-model subscription sign-in|status|sign-out\n";

/* record: {"connection_id", "status", ...} on stdout */
static void
record(struct arena *a, struct jval *o, const char *status)
{
	json_add(a, o, "connection_id", json_str(a, SUB_CONNECTION));
	json_add(a, o, "status", json_str(a, status));
	manage_print_json(o);
	fflush(stdout);
}

static void
show_code(const struct sub_device *d)
{
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "To sign in with ChatGPT, open %s\nand enter the code "
	    "%s (it expires in %lld minutes).\n", d->verification_uri,
	    d->user_code, (long long)(d->expires_in + 59) / 60);
	tty_put(stderr, b.p, b.len, 1);
	buf_release(&b);
}

static int
sign_in(struct arena *a)
{
	struct sub_device d;
	struct sub_tokens t;
	struct jval *o = json_obj(a);
	int rc;

	if (sub_tokens_writable() < 0 || sub_device_start(&d) < 0)
		return -1;
	json_add(a, o, "verification_url", json_str(a, d.verification_uri));
	if (d.verification_uri_complete)
		json_add(a, o, "verification_url_complete", json_str(a,
		    d.verification_uri_complete));
	json_add(a, o, "user_code", json_str(a, d.user_code));
	json_add(a, o, "poll_interval_seconds", json_int(a, d.interval));
	json_add(a, o, "expires_in", json_int(a, d.expires_in));
	record(a, o, "pending");
	show_code(&d);
	rc = sub_device_wait(&d, &t);
	sub_device_release(&d);
	if (rc < 0)
		return -1;
	rc = sub_tokens_save(&t);
	o = json_obj(a);
	json_add(a, o, "expires_at", json_int(a, t.expires_at));
	sub_tokens_release(&t);
	if (rc == 0) {
		record(a, o, "complete");
		fputs("hw-model: signed in with ChatGPT\n", stderr);
	}
	return rc;
}

static int
status(struct arena *a)
{
	struct sub_tokens t;
	struct jval *o = json_obj(a);
	char *path = sub_token_file();
	int rc = sub_tokens_load(&t);

	if (rc < 0 && hw_err_code() != HW_EXIT_NOINPUT) {
		free(path);
		return -1;
	}
	json_add(a, o, "token_file", path ? json_str(a, path) :
	    json_new(a, J_NULL));
	free(path);
	json_add(a, o, "credential_reference", json_str(a,
	    SUB_CREDENTIAL_REF));
	if (rc == 0) {
		json_add(a, o, "expires_at", json_int(a, t.expires_at));
		json_add(a, o, "access_token_expired", json_bool(a,
		    t.expires_at <= (int64_t)time(NULL)));
	}
	sub_tokens_release(&t);
	record(a, o, rc == 0 ? "signed-in" : "signed-out");
	return 0;
}

static int
sign_out(struct arena *a)
{
	int was;

	if (sub_sign_out(&was) < 0)
		return -1;
	record(a, json_obj(a), "signed-out");
	fputs(was ? "hw-model: signed out of ChatGPT\n" :
	    "hw-model: not signed in to ChatGPT\n", stderr);
	return 0;
}

int
verb_subscription(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct arena a;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'h')
			return fputs(sub_usage, stdout), prog_finish(PROG, 0);
		return manage_usage_err(sub_usage);
	}
	if (optind + 1 != argc)
		return manage_usage_err(sub_usage);
	arena_init(&a);
	if (!strcmp(argv[optind], "sign-in"))
		rc = sign_in(&a);
	else if (!strcmp(argv[optind], "status"))
		rc = status(&a);
	else if (!strcmp(argv[optind], "sign-out"))
		rc = sign_out(&a);
	else {
		arena_release(&a);
		return manage_usage_err(sub_usage);
	}
	arena_release(&a);
	return rc < 0 ? prog_fail(PROG) : prog_finish(PROG, 0);
}
