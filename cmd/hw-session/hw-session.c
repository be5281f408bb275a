/*
 * hw-session - create, list, show, rename and replay sessions; project,
 * follow and command them
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session/session.h"

static const char usage[] =
    "usage: hw-session new [--title TITLE]\n"
    "       hw-session list\n"
    "       hw-session show ID\n"
    "       hw-session rename ID TITLE\n"
    "       hw-session replay ID\n"
    "       hw-session project ID [--until SEQ] [--events FILE | -]\n"
    "       hw-session follow ID [--after SEQ] [--stream FILE | -]\n"
    "                [--idle-exit SECONDS]\n"
    "       hw-session command ID\n"
    "       hw-session -h | --version\n";

/* open_existing: 1 when the session exists, 0 when not, -1 on error */
static int
open_existing(struct project *p, struct session *s, const char *id)
{
	if (session_init(s, p, id) < 0)
		return -1;
	if (project_open(p, 0) < 0)
		return hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
	return session_exists(s);
}

static int
cmd_new(const char *title)
{
	struct project p = { 0 };
	struct session s;
	char id[64], stamp[20], hex[9], norm[512];
	time_t t = time(NULL);
	struct tm tm;
	int i, rc = -1;

	memset(&s, 0, sizeof s);
	if (title && title_normalize(title, norm, sizeof norm) < 0)
		return hw_err_set(HW_EXIT_USAGE, "invalid title: it must have "
		    "1-120 characters that are not all whitespace");
	if (project_open(&p, 1) < 0)
		goto out;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
	for (i = 0; i < 10; i++) {
		if (random_hex(hex, 4) < 0)
			goto out;
		snprintf(id, sizeof id, "session-%s-%s", stamp, hex);
		session_release(&s);
		if (session_init(&s, &p, id) < 0)
			goto out;
		if (session_exists(&s) == 0)
			break;
	}
	if (i == 10) {
		hw_err_set(HW_EXIT_FAIL, "cannot find an unused session id");
		goto out;
	}
	if (session_register(&s, title ? norm : "Untitled session") == 0)
		rc = session_summary(&s, stdout);
out:
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
cmd_list(void)
{
	struct project p = { 0 };
	struct session s;
	struct dirent **names;
	int n, i, rc = 0;

	if (project_open(&p, 0) < 0) {
		project_release(&p);
		return hw_err_code() == HW_EXIT_NOINPUT ? 0 : -1;
	}
	n = scandir(p.sessions, &names, NULL, alphasort);
	if (n < 0) {
		project_release(&p);
		return hw_err_sys("cannot list '.heartwood/sessions'");
	}
	for (i = 0; i < n; i++) {
		/* one broken session must not hide the others */
		if (valid_session_id(names[i]->d_name) &&
		    session_init(&s, &p, names[i]->d_name) == 0) {
			/* without metadata.json its registration never
			   finished, and no event can have been committed */
			if (session_exists(&s) == 1 &&
			    access(s.metadata, F_OK) == 0 &&
			    session_summary(&s, stdout) < 0) {
				fprintf(stderr, "hw-session: warning: session "
				    "'%s': %s\n", s.id, hw_err_msg());
				rc = -1;
			}
			session_release(&s);
		}
		free(names[i]);
	}
	free(names);
	project_release(&p);
	return rc < 0 ? hw_err_set(HW_EXIT_DATA, "some sessions could not be "
	    "listed") : 0;
}

static int
print_event(void *ctx, const char *line, size_t n, const struct jval *ev)
{
	(void)ctx, (void)ev;
	fwrite(line, 1, n, stdout);
	putchar('\n');
	return ferror(stdout) ? hw_err_sys("cannot write 'stdout'") : 0;
}

static int
cmd_project(const char *id, int64_t until, const char *events)
{
	struct project p = { 0 };
	struct session s;
	struct buf b;
	int k, fd = -1, rc = -1;

	buf_init(&b);
	memset(&s, 0, sizeof s);
	if (events) {
		fd = strcmp(events, "-") ? open(events, O_RDONLY | O_CLOEXEC) :
		    STDIN_FILENO;
		if (session_init(&s, &p, id) < 0)
			;
		else if (fd < 0 && errno == ENOENT)
			hw_err_set(HW_EXIT_NOINPUT, "no events file '%s'", events);
		else if (fd < 0)
			hw_err_sys("cannot open '%s'", events);
		else
			rc = session_project_stream(id, fd, strcmp(events, "-") ?
			    events : "stdin", until, &b);
		if (fd > STDIN_FILENO)
			close(fd);
	} else if ((k = open_existing(&p, &s, id)) >= 0) {
		rc = session_project(&s, k, until, &b);
	}
	if (rc == 0) {
		buf_addc(&b, '\n');
		fwrite(b.p, 1, b.len, stdout);
	}
	buf_release(&b);
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
cmd_follow(const char *id, const struct follow_opts *o)
{
	struct project p = { 0 };
	struct session s;
	int k, rc = -1;

	if ((k = open_existing(&p, &s, id)) >= 0)
		rc = session_follow(&s, k, o, stdout);
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
cmd_command(const char *id, int *declined)
{
	struct project p = { 0 };
	struct session s;
	int rc = -1;

	memset(&s, 0, sizeof s);
	if (session_init(&s, &p, id) == 0)
		rc = session_command(&s, stdin, stdout, declined);
	session_release(&s);
	project_release(&p);
	return rc;
}

static int
cmd_session(const char *verb, const char *id, const char *title)
{
	struct project p = { 0 };
	struct session s;
	char norm[512];
	int k, rc = -1;

	if ((k = open_existing(&p, &s, id)) < 0)
		goto out;
	if (k == 0) {
		/* a replay of nothing prints nothing and creates nothing */
		rc = !strcmp(verb, "replay") ? 0 : hw_err_set(HW_EXIT_NOINPUT,
		    "no session '%s'", id);
		goto out;
	}
	if (!strcmp(verb, "show"))
		rc = session_summary(&s, stdout);
	else if (!strcmp(verb, "rename")) {
		if (title_normalize(title, norm, sizeof norm) < 0)
			rc = hw_err_set(HW_EXIT_USAGE, "invalid title: it must "
			    "have 1-120 characters that are not all "
			    "whitespace");
		else if (session_rename(&s, norm) == 0)
			rc = session_summary(&s, stdout);
	} else {
		if (session_settle(&s) == 0)
			rc = logs_verify_full(&s, print_event, NULL);
	}
	if (rc < 0 && !strcmp(verb, "replay") && hw_err_code() ==
	    HW_EXIT_DATA)
		hw_err_set(HW_EXIT_DATA, "replay '%s': %s", id, hw_err_msg());
out:
	session_release(&s);
	project_release(&p);
	return rc;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "title", required_argument, NULL, 't' },
		{ "until", required_argument, NULL, 'u' },
		{ "events", required_argument, NULL, 'e' },
		{ "after", required_argument, NULL, 'a' },
		{ "stream", required_argument, NULL, 's' },
		{ "idle-exit", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *title = NULL, *verb;
	struct follow_opts fo = { -1, NULL, 0 };
	int64_t until = -1;
	const char *events = NULL;
	int c, rc, n, have_until = 0, have_follow = 0, declined = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "ht:", opts, NULL)) != -1) {
		switch (c) {
		case 't': title = optarg; break;
		case 'e': events = optarg; have_until = 1; break;
		case 'u':
			if (parse_seq(optarg, &until) < 0) {
				fprintf(stderr, "hw-session: invalid --until "
				    "'%s': want a sequence number\n", optarg);
				return HW_EXIT_USAGE;
			}
			have_until = 1;
			break;
		case 'a':
			if (parse_seq(optarg, &fo.after) < 0) {
				fprintf(stderr, "hw-session: invalid --after "
				    "'%s': want a sequence number\n", optarg);
				return HW_EXIT_USAGE;
			}
			have_follow = 1;
			break;
		case 's': fo.stream = optarg; have_follow = 1; break;
		case 'i':
			fo.idle_exit = strtod(optarg, &end);
			if (*end || end == optarg || !(fo.idle_exit > 0)) {
				fprintf(stderr, "hw-session: invalid "
				    "--idle-exit '%s': want seconds > 0\n",
				    optarg);
				return HW_EXIT_USAGE;
			}
			have_follow = 1;
			break;
		case 'h': fputs(usage, stdout); return prog_finish("hw-session", 0);
		case 'V': puts("hw-session " HW_VERSION);
			return prog_finish("hw-session", 0);
		default: fputs(usage, stderr); return HW_EXIT_USAGE;
		}
	}
	n = argc - optind;
	verb = n > 0 ? argv[optind] : "";
	if (!strcmp(verb, "new") && n == 1)
		rc = cmd_new(title);
	else if (title)
		rc = (fputs(usage, stderr), -2);
	else if (!strcmp(verb, "project") && n == 2 && !have_follow)
		rc = cmd_project(argv[optind + 1], until, events);
	else if (!strcmp(verb, "follow") && n == 2 && !have_until)
		rc = cmd_follow(argv[optind + 1], &fo);
	else if (have_until || have_follow)
		rc = (fputs(usage, stderr), -2);
	else if (!strcmp(verb, "command") && n == 2)
		rc = cmd_command(argv[optind + 1], &declined);
	else if (!strcmp(verb, "list") && n == 1)
		rc = cmd_list();
	else if ((!strcmp(verb, "show") || !strcmp(verb, "replay")) && n == 2)
		rc = cmd_session(verb, argv[optind + 1], NULL);
	else if (!strcmp(verb, "rename") && n == 3)
		rc = cmd_session(verb, argv[optind + 1], argv[optind + 2]);
	else
		rc = (fputs(usage, stderr), -2);
	if (rc == -2)
		return HW_EXIT_USAGE;
	rc = rc < 0 ? prog_fail("hw-session") : declined ? HW_EXIT_FAIL : 0;
	return prog_finish("hw-session", rc);
}
