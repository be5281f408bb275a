/*
 * commit_test - a batch's chain: commit_build leaves placeholders for the
 * chain's hashes, commit_chain hashes them from a head, and commit_write
 * writes only a batch hashed from the head the session holds; a batch
 * built with a bound callback is hashed as it is built, each event's hash
 * handed over as it is made.  Run in a scratch directory of its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"

#define N 3

static struct arena A;
static struct jval *drafts[N];
static struct draft_line lines[N];

/* three drafts: two canonical (built from their lines), one spaced out */
static void
make_drafts(void)
{
	static const char *const text[N] = {
		"{\"kind\":\"agent_message.emitted\",\"payload\":"
		    "{\"content\":\"one\"}}",
		"{ \"kind\": \"agent_message.emitted\", \"payload\": "
		    "{ \"content\": \"two\" } }",
		"{\"kind\":\"tool_call.proposed\",\"payload\":{\"arguments\":"
		    "{\"command\":\"ls\"},\"tool\":\"shell\"}}",
	};
	char err[128];
	int c, i;

	for (i = 0; i < N; i++) {
		drafts[i] = json_parse_canon(&A, text[i], strlen(text[i]), err,
		    sizeof err, &c);
		lines[i].p = c ? text[i] : NULL;
		lines[i].n = strlen(text[i]);
		lines[i].ascii = c == 2;
	}
}

static off_t
size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* count and ehashes: what the bound callback was handed */
static int bound;
static char bound_hash[N][HW_HASH_LEN + 1];

static int
bind_note(struct session *s, const struct jval *ev, const char *ehash)
{
	(void)s;
	(void)ev;
	if (bound < N)
		snprintf(bound_hash[bound], sizeof bound_hash[bound], "%s",
		    ehash);
	bound++;
	return 0;
}

/* verified: the session's logs verify from the first record, n events */
static int
verified(struct session *s, int64_t n)
{
	return logs_verify_full(s, NULL, NULL) == 0 && s->count == n;
}

int
main(void)
{
	char dir[] = "/tmp/commit_test.XXXXXX", wrong[HW_HASH_LEN + 1];
	char line_hash[HW_HASH_LEN + 1], rm[64];
	struct project p = { 0 };
	struct session s;
	struct commit_set c, d;
	off_t ev, au;
	int i;

	arena_init(&A);
	memset(&c, 0, sizeof c);
	memset(&d, 0, sizeof d);
	if (!mkdtemp(dir) || chdir(dir) < 0) {
		printf("Bail out! no scratch directory\n");
		return 1;
	}
	make_drafts();
	if (session_init(&s, &p, "s") < 0 || project_open(&p, 1) < 0 ||
	    session_register(&s, NULL) < 0 || session_lease(&s) < 0) {
		printf("Bail out! cannot open a session: %s\n", hw_err_msg());
		return 1;
	}
	snprintf(wrong, sizeof wrong, "sha256:%064d", 7);

	/* the first batch: placeholders until it is hashed */
	ok(commit_build(&s, drafts, lines, N, 0, &c) == 0, "a batch is built");
	ok(commit_write(&s, &c) < 0 && hw_err_code() == HW_EXIT_IO &&
	    strstr(hw_err_msg(), "does not follow the session's head"),
	    "a batch not yet hashed is not written");
	ok(commit_chain(&s, &c, wrong) < 0 && strstr(hw_err_msg(),
	    "event 0 cannot follow a chain head"),
	    "the first event follows no head");
	commit_set_release(&c);
	ok(commit_build(&s, drafts, lines, N, 0, &c) == 0 &&
	    commit_chain(&s, &c, "") == 0 && commit_write(&s, &c) == 0,
	    "hashed from the start, it is written");
	ok(verified(&s, N), "and the logs verify");

	/* the second: built ahead, hashed from the wrong head, refused */
	ev = size_of(s.events);
	au = size_of(s.audit);
	ok(commit_build(&s, drafts, lines, N, N, &d) == 0,
	    "the next batch is built");
	ok(commit_chain(&s, &d, "") < 0 && strstr(hw_err_msg(),
	    "event 3 has no chain head to follow"),
	    "a later event needs a head");
	commit_set_release(&d);
	memset(&d, 0, sizeof d);
	ok(commit_build(&s, drafts, lines, N, N, &d) == 0 &&
	    commit_chain(&s, &d, wrong) == 0, "and hashed from another head");
	ok(commit_write(&s, &d) < 0 && strstr(hw_err_msg(),
	    "does not follow the session's head"),
	    "which the session does not hold: refused");
	ok(size_of(s.events) == ev && size_of(s.audit) == au && !s.broken,
	    "nothing written, the session not broken");
	commit_set_release(&d);
	memset(&d, 0, sizeof d);
	ok(commit_build(&s, drafts, lines, N, N, &d) == 0 &&
	    commit_chain(&s, &d, c.head) == 0 && commit_write(&s, &d) == 0,
	    "hashed from the first batch's head, it is written");
	ok(!strcmp(d.head, s.head) && !strcmp(d.ehash, s.ehash),
	    "and the session's head is the batch's");
	ok(verified(&s, 2 * N), "the logs verify");

	/* built with a bound callback: hashed as it goes, at the head */
	s.bind = bind_note;
	ok(commit_build(&s, drafts, lines, N, 0, &c) < 0 &&
	    strstr(hw_err_msg(), "built at its head"),
	    "a bound batch is built only at the session's head");
	ok(commit_build(&s, drafts, lines, N, 2 * N, &c) == 0 && bound == N,
	    "a bound batch hands over each event's hash");
	for (i = 0; i < N; i++) {
		sha256_hex(c.ev.p + c.slot[i].ev, c.slot[i].evn, line_hash + 7);
		memcpy(line_hash, "sha256:", 7);
		ok(!strcmp(bound_hash[i], line_hash),
		    "event %d's hash is its line's", i);
	}
	ok(commit_chain(&s, &c, wrong) < 0 && strstr(hw_err_msg(),
	    "hashed from one chain head cannot follow another"),
	    "it is not hashed again from another head");
	ok(commit_chain(&s, &c, s.head) == 0 && commit_write(&s, &c) == 0,
	    "from its own it is written");
	ok(verified(&s, 3 * N), "the logs verify");

	commit_set_release(&c);
	commit_set_release(&d);
	session_unlease(&s);
	session_release(&s);
	project_release(&p);
	arena_release(&A);
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	if (chdir("/") < 0 || system(rm) != 0)
		printf("# cannot remove %s\n", dir);
	return tap_done();
}
