/* hw-append - commit event drafts as paired, hash-chained records */
#include <getopt.h>
#include <string.h>
#include <unistd.h>

#include "store/store.h"

static const char usage[] =
    "usage: hw-append --session ID [--command FILE]\n"
    "       hw-append --file PATH [--log-id ID]\n"
    "       hw-append -h | --version\n";

#define BATCH_MAX 1024
#define BATCH_BYTES (4u << 20)

struct input {
	struct jsonl r;
	struct arena a;
	struct jval *drafts[BATCH_MAX];
	int any_kind;		/* --file: event types are free-form */
	int failed;		/* a bad line ended the input */
};

/*
 * read_batch takes one line (waiting for it) and then whatever complete
 * lines are already waiting, up to the batch bounds.  A bad line ends the
 * batch before it and the input after it.
 */
static int
read_batch(struct input *in)
{
	size_t n = 0, bytes = 0, len;
	char *line, err[200];
	struct jval *d;
	int r;

	arena_clear(&in->a);
	while (!in->failed && n < BATCH_MAX && bytes < BATCH_BYTES &&
	    (n == 0 || jsonl_ready(&in->r))) {
		if ((r = jsonl_next(&in->r, &line, &len)) <= 0) {
			if (r < 0 || in->r.partial) {
				if (r == 0)
					hw_err_set(HW_EXIT_DATA, "%s:%ld: "
					    "unterminated last line",
					    in->r.name, in->r.lineno + 1);
				in->failed = 1;
			}
			break;
		}
		if (len == strspn(line, " \t\r"))
			continue;
		if (!(d = jsonl_parse(&in->r, &in->a, line, len))) {
			in->failed = 1;
			break;
		}
		if (draft_check(&in->a, d, in->any_kind, err,
		    sizeof err) < 0) {
			hw_err_set(HW_EXIT_DATA, "%s:%ld: %s", in->r.name,
			    in->r.lineno, err);
			in->failed = 1;
			break;
		}
		in->drafts[n++] = d;
		bytes += len;
	}
	return (int)n;
}

static int
more(void *ctx, struct jval ***drafts)
{
	struct input *in = ctx;
	int n = read_batch(in);

	*drafts = in->drafts;
	return n == 0 && in->failed ? -1 : n;
}

static int
flush_ack(void *ctx, struct buf *ack)
{
	(void)ctx;
	fwrite(ack->p, 1, ack->len, stdout);
	if (fflush(stdout) != 0)
		return hw_err_sys("cannot write 'stdout'");
	return 0;
}

/*
 * commit_batch commits n drafts and prints their events.  A batch refused
 * before anything was written (a line over the readers' bound) is tried
 * again a draft at a time, so that, as with a bad input line, the drafts
 * before the refused one are committed and nothing after it.
 */
static int
commit_batch(struct session *s, struct jval **d, size_t n, struct buf *ack)
{
	size_t i;
	int rc;

	buf_clear(ack);
	if ((rc = session_commit(s, d, n, ack)) == 0)
		return flush_ack(NULL, ack);
	if (n == 1 || s->broken || hw_err_code() != HW_EXIT_DATA)
		return rc;
	for (i = 0; i < n; i++) {
		buf_clear(ack);
		if (session_commit(s, d + i, 1, ack) < 0 ||
		    flush_ack(NULL, ack) < 0)
			return -1;
	}
	return 0;
}

/* open_session creates what is missing and takes the writer lease */
static int
open_session(struct session *s, struct project *p)
{
	if (project_open(p, 1) < 0 || session_register(s, NULL) < 0 ||
	    session_lease(s) < 0)
		return -1;
	return 0;
}

static int
run_session(const char *id, const char *cmdfile, struct input *in)
{
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *cmd = NULL;
	struct buf ack;
	int n, rc = -1, replayed;

	arena_init(&a);
	buf_init(&ack);
	if (session_init(&s, &p, id) < 0)
		goto out;
	if (cmdfile && !(cmd = read_json_file(cmdfile, JSONL_LINE_MAX, &a)))
		goto out;
	if (cmd) {
		struct command_io io = { more, flush_ack, in };
		char hash[HW_HASH_LEN + 1];

		if (command_check(&a, cmd, id, hash) < 0 ||
		    open_session(&s, &p) < 0)
			goto out;
		rc = command_run(&s, &a, cmd, &io, &replayed);
		goto out;
	}
	n = read_batch(in);
	if (n == 0) {
		rc = in->failed ? -1 : 0;
		goto out;
	}
	if (open_session(&s, &p) < 0 || receipts_interrupted(&s) < 0)
		goto out;
	do {
		if (commit_batch(&s, in->drafts, (size_t)n, &ack) < 0)
			goto out;
	} while ((n = read_batch(in)) > 0);
	rc = in->failed ? -1 : 0;
out:
	if (session_unlease(&s) < 0 && rc == 0)
		rc = -1;
	session_release(&s);
	project_release(&p);
	buf_release(&ack);
	arena_release(&a);
	return rc;
}

static int
run_file(const char *path, const char *logid, struct input *in)
{
	struct buf ack;
	int n, rc = 0;

	if (!valid_session_id(logid))
		return hw_err_set(HW_EXIT_USAGE, "invalid log id '%s'", logid);
	buf_init(&ack);
	in->any_kind = 1;
	if (chainlog_recover(path) < 0)
		rc = -1;
	while (rc == 0 && (n = read_batch(in)) > 0) {
		buf_clear(&ack);
		if (chainlog_append(path, logid, in->drafts, (size_t)n,
		    &ack) < 0 || flush_ack(NULL, &ack) < 0)
			rc = -1;
	}
	if (rc == 0 && in->failed)
		rc = -1;
	buf_release(&ack);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "session", required_argument, NULL, 's' },
		{ "command", required_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'f' },
		{ "log-id", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *session = NULL, *cmdfile = NULL, *file = NULL;
	const char *logid = "project-skills";
	struct input in;
	int c, rc;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': session = optarg; break;
		case 'c': cmdfile = optarg; break;
		case 'f': file = optarg; break;
		case 'l': logid = optarg; break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-append", 0);
		case 'V': puts("hw-append " HW_VERSION);
			return prog_finish("hw-append", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	if (optind != argc || !session == !file || (file && cmdfile)) {
		fputs(usage, stderr);
		return HW_EXIT_USAGE;
	}
	memset(&in, 0, sizeof in);
	jsonl_init(&in.r, STDIN_FILENO, "<stdin>", JSONL_LINE_MAX);
	arena_init(&in.a);
	rc = session ? run_session(session, cmdfile, &in) :
	    run_file(file, logid, &in);
	rc = rc < 0 ? prog_fail("hw-append") : 0;
	jsonl_release(&in.r);
	arena_release(&in.a);
	return prog_finish("hw-append", rc);
}
