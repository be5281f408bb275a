/* hw-append - commit event drafts as paired, hash-chained records */
#include <errno.h>
#include <getopt.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "store/store.h"

static const char usage[] =
    "usage: hw-append --session ID [--command FILE]\n"
    "       hw-append --file PATH [--log-id ID]\n"
    "       hw-append -h | --version\n";

static int
flush_ack(void *ctx, struct buf *ack)
{
	(void)ctx;
	fwrite(ack->p, 1, ack->len, stdout);
	if (fflush(stdout) != 0)
		return hw_err_sys("cannot write 'stdout'");
	return 0;
}

static int
more(void *ctx, struct jval ***drafts)
{
	struct draft_batch *in = ctx;
	int n = draft_batch_read(in);

	*drafts = in->drafts;
	return n == 0 && in->failed ? -1 : n;
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

/* open_ready: open_session, and no command left interrupted */
static int
open_ready(struct session *s, void *ctx)
{
	if (open_session(s, ctx) < 0 || receipts_interrupted(s) < 0)
		return -1;
	return 0;
}

static int
run_session(const char *id, const char *cmdfile, struct draft_batch *in)
{
	struct project p = { 0 };
	struct session s;
	struct arena a;
	struct jval *cmd = NULL;
	struct buf ack;
	struct stat st;
	int n, rc = -1, replayed;

	arena_init(&a);
	buf_init(&ack);
	if (session_init(&s, &p, id) < 0)
		goto out;
	if (cmdfile && !(cmd = read_json_file(cmdfile, JSONL_LINE_MAX, &a)))
		goto out;
	if (cmd) {
		struct command_io io = { NULL, more, flush_ack, in };
		char hash[HW_HASH_LEN + 1];

		if (command_check(&a, cmd, id, hash) < 0 ||
		    open_session(&s, &p) < 0)
			goto out;
		rc = command_run(&s, &a, cmd, &io, &replayed);
		goto out;
	}
	n = draft_batch_read(in);
	if (n == 0) {
		rc = in->failed ? -1 : 0;
		goto out;
	}
	/*
	 * A session not made yet starts at 0: its first batch is built while
	 * it is made and leased.
	 */
	if (lstat(s.dir, &st) < 0 && errno == ENOENT)
		rc = session_commit_stream(&s, in, n, &ack, flush_ack, &p,
		    open_ready);
	else if (open_ready(&s, &p) == 0)
		rc = session_commit_stream(&s, in, n, &ack, flush_ack, NULL,
		    NULL);
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
run_file(const char *path, const char *logid, struct draft_batch *in)
{
	struct buf ack;
	int n, rc = 0;

	if (!valid_session_id(logid))
		return hw_err_set(HW_EXIT_USAGE, "invalid log id '%s'", logid);
	buf_init(&ack);
	in->any_kind = 1;
	if (chainlog_recover(path) < 0)
		rc = -1;
	while (rc == 0 && (n = draft_batch_read(in)) > 0) {
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
	struct draft_batch in;
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
	draft_batch_init(&in, STDIN_FILENO, "<stdin>", 0);
	rc = session ? run_session(session, cmdfile, &in) :
	    run_file(file, logid, &in);
	rc = rc < 0 ? prog_fail("hw-append") : 0;
	draft_batch_release(&in);
	return prog_finish("hw-append", rc);
}
