/*
 * stream_test - session_commit_stream with an opener: the first batch is
 * built while the session is made ready on another thread, from where the
 * caller guessed the session starts, and built again when the opener
 * leaves the session elsewhere (another writer came first) or in a later
 * second; an opener's failure is the stream's, with nothing written; with
 * no thread to be had (HW_TEST_NO_THREADS), the opening comes first.  Run
 * in a scratch directory of its own.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/store.h"
#include "tap.h"

#define DRAFTS 2500	/* three batches */

struct ctx {
	struct project *p;
	long acks;		/* lines flushed */
	int64_t first;		/* the first flushed event's sequence */
	char first_at[21];	/* and its timestamp */
	int others;		/* drafts another writer commits first */
	int late;		/* end the opening in a later second */
	char opened[21];	/* the second the opening ended in */
};

static int
flush(void *arg, struct buf *ack)
{
	struct ctx *c = arg;
	struct arena a;
	struct jval *ev;
	const char *nl;

	if (ack->len && c->acks == 0) {
		arena_init(&a);
		nl = memchr(ack->p, '\n', ack->len);
		ev = json_parse(&a, ack->p, (size_t)(nl - ack->p), NULL, 0);
		if (!ev || json_get_int(ev, "sequence", &c->first) < 0)
			c->first = -1;
		snprintf(c->first_at, sizeof c->first_at, "%s",
		    ev ? json_get_str(ev, "occurred_at") : "");
		arena_release(&a);
	}
	for (nl = ack->p; (nl = memchr(nl, '\n', ack->len - (size_t)(nl -
	    ack->p))); nl++)
		c->acks++;
	return 0;
}

/*
 * another: c->others events committed to s's session by another writer
 * (a session of its own, as another process would hold), before s is
 * leased
 */
static int
another(struct session *s, struct ctx *c)
{
	struct session o;
	struct arena a;
	struct jval *d[1];
	struct buf ack;
	const char *text = "{\"kind\":\"agent_message.emitted\","
	    "\"payload\":{\"content\":\"first\"}}";
	int i, rc;

	arena_init(&a);
	buf_init(&ack);
	d[0] = json_parse(&a, text, strlen(text), NULL, 0);
	rc = session_init(&o, c->p, s->id) < 0 || session_register(&o,
	    NULL) < 0 || session_lease(&o) < 0 ? -1 : 0;
	for (i = 0; rc == 0 && i < c->others; i++)
		rc = session_commit(&o, d, NULL, 1, &ack);
	if (session_unlease(&o) < 0)
		rc = -1;
	session_release(&o);
	buf_release(&ack);
	arena_release(&a);
	return rc;
}

static int
opener(struct session *s, void *arg)
{
	struct ctx *c = arg;
	int rc = 0;

	if (project_open(c->p, 1) < 0 || (c->others && another(s, c) < 0) ||
	    session_register(s, NULL) < 0 || session_lease(s) < 0)
		return -1;
	if (c->late) {
		char was[21];

		utc_now(was);
		do {
			usleep(20000);
			utc_now(c->opened);
		} while (!strcmp(was, c->opened));
	}
	utc_now(c->opened);
	return rc;
}

static int
refuse(struct session *s, void *arg)
{
	(void)s;
	(void)arg;
	return hw_err_set(HW_EXIT_DATA, "opener says no");
}

/* stream: DRAFTS drafts from drafts.jsonl into session id */
static int
stream(const char *id, struct project *p, struct ctx *c,
    int (*opens)(struct session *, void *))
{
	struct draft_batch in;
	struct session s;
	struct buf ack;
	char msg[1024];
	int fd, n, code, rc = -1;

	c->p = p;
	if ((fd = open("drafts.jsonl", O_RDONLY)) < 0)
		return -1;
	draft_batch_init(&in, fd, "drafts.jsonl", 0);
	buf_init(&ack);
	if (session_init(&s, p, id) == 0 && (n = draft_batch_read(&in)) > 0)
		rc = session_commit_stream(&s, &in, n, &ack, flush, c, opens);
	code = hw_err_code();
	snprintf(msg, sizeof msg, "%s", hw_err_msg());
	session_unlease(&s);
	session_release(&s);
	project_release(p);	/* each stream's opener opens it again */
	buf_release(&ack);
	draft_batch_release(&in);
	close(fd);
	if (rc < 0)
		hw_err_set(code, "%s", msg);	/* the stream's, kept */
	return rc;
}

static int
verified(struct project *p, const char *id, int64_t n)
{
	struct session s;
	int rc;

	rc = session_init(&s, p, id) == 0 && logs_verify_full(&s, NULL,
	    NULL) == 0 && s.count == n;
	session_release(&s);
	return rc;
}

int
main(void)
{
	char dir[] = "/tmp/stream_test.XXXXXX", rm[64];
	struct project p = { 0 };
	struct stat st;
	struct ctx c;
	FILE *f;
	int i;

	if (!mkdtemp(dir) || chdir(dir) < 0 || !(f = fopen("drafts.jsonl",
	    "w"))) {
		printf("Bail out! no scratch directory\n");
		return 1;
	}
	for (i = 0; i < DRAFTS; i++)
		fprintf(f, "{\"kind\":\"agent_message.emitted\",\"payload\":"
		    "{\"content\":\"message %d\"}}\n", i);
	fclose(f);

	memset(&c, 0, sizeof c);
	ok(stream("plain", &p, &c, opener) == 0 && c.acks == DRAFTS &&
	    c.first == 0, "a new session's drafts, built while it opens");
	ok(verified(&p, "plain", DRAFTS), "its logs verify");

	memset(&c, 0, sizeof c);
	c.others = 3;
	ok(stream("behind", &p, &c, opener) == 0 && c.acks == DRAFTS,
	    "another writer's events came first");
	ok(c.first == 3, "the first batch is built again after them "
	    "(first acknowledged: %lld)", (long long)c.first);
	ok(verified(&p, "behind", DRAFTS + 3), "the logs verify");

	/* with no thread to be had, the opening comes first */
	setenv("HW_TEST_NO_THREADS", "1", 1);
	memset(&c, 0, sizeof c);
	c.others = 3;
	ok(stream("alone", &p, &c, opener) == 0 && c.acks == DRAFTS &&
	    c.first == 3, "with no thread, the session opened first: its "
	    "first batch after the other writer's (first acknowledged: %lld)",
	    (long long)c.first);
	ok(verified(&p, "alone", DRAFTS + 3), "the logs verify");
	unsetenv("HW_TEST_NO_THREADS");

	memset(&c, 0, sizeof c);
	c.late = 1;
	ok(stream("late", &p, &c, opener) == 0 && c.acks == DRAFTS,
	    "an opening that ends in a later second");
	ok(strcmp(c.first_at, c.opened) >= 0, "no event is older than the "
	    "opening (%s, opened %s)", c.first_at, c.opened);
	ok(verified(&p, "late", DRAFTS), "the logs verify");

	memset(&c, 0, sizeof c);
	i = stream("refused", &p, &c, refuse);
	ok(i < 0 && hw_err_code() == HW_EXIT_DATA && strstr(hw_err_msg(),
	    "opener says no"), "an opener's failure is the stream's");
	ok(c.acks == 0 && stat(".heartwood/sessions/refused", &st) < 0,
	    "nothing acknowledged, nothing made");

	project_release(&p);
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
	if (chdir("/") < 0 || system(rm) != 0)
		printf("# cannot remove %s\n", dir);
	return tap_done();
}
