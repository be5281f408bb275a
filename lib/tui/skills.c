/* skills.c - the terminal's /skills: list, inspect, install by digest */
#include <stdlib.h>
#include <string.h>

#include "tui/tui.h"

/* run_skill runs hw-skill with argv; its JSON lines in out */
static int
run_skill(struct term *t, char **argv, struct buf *out)
{
	char *path = driver_find("hw-skill");
	int rc;

	if (!path) {
		fputs("heartwood: /skills needs hw-skill, which is not "
		    "installed\n", t->err);
		return HW_EXIT_UNAVAILABLE;
	}
	free(path);
	rc = driver_run("hw-skill", argv, NULL, 0, out);
	return rc < 0 ? term_fail(t) : rc;
}

static void
put(struct term *t, const char *s)
{
	term_put_safe(t->out, s ? s : "");
}

static void
list_line(struct term *t, const struct jval *v)
{
	const char *why = json_get_str(v, "compatibility_reason");
	const char *revoked = json_get_str(v, "revocation_reason");

	fputs("  ", t->out);
	put(t, json_get_str(v, "name"));
	fputc(' ', t->out);
	put(t, json_get_str(v, "version"));
	fputs(" · ", t->out);
	put(t, json_get_str(v, "status"));
	fputs(" · ", t->out);
	put(t, json_get_str(v, "source"));
	fputs(json_is_str(json_get(v, "review"), "local-unreviewed") ?
	    " · local and unreviewed" : " · reviewed", t->out);
	if (revoked) {
		fputs(" · revoked: ", t->out);
		put(t, revoked);
	} else if (why) {
		fputs(" · not used: ", t->out);
		put(t, why);
	}
	fputc('\n', t->out);
}

static void
inspect_lines(struct term *t, const struct jval *v)
{
	const struct jval *files = json_get(v, "files");
	int64_t size;
	size_t i;

	put(t, json_get_str(v, "name"));
	fputc(' ', t->out);
	put(t, json_get_str(v, "version"));
	fputs(" · ", t->out);
	put(t, json_get_str(v, "status"));
	fputs(" · from ", t->out);
	put(t, json_get_str(v, "source_id"));
	fputc('\n', t->out);
	put(t, json_get_str(v, "description"));
	fputc('\n', t->out);
	for (i = 0; files && i < files->n; i++) {
		json_get_int(files->u.a[i], "size", &size);
		fprintf(t->out, "  %-10s %8lld  ", json_get_str(files->u.a[i],
		    "role") ? json_get_str(files->u.a[i], "role") : "?",
		    (long long)size);
		put(t, json_get_str(files->u.a[i], "path"));
		fputc('\n', t->out);
	}
	fputs("Tree digest: sha256:", t->out);
	put(t, json_get_str(v, "tree_sha256"));
	fputs("\nTo install exactly this, type: /skills install ", t->out);
	put(t, json_get_str(v, "name"));
	fputc(' ', t->out);
	put(t, json_get_str(v, "tree_sha256"));
	fputc('\n', t->out);
}

/* show renders each JSON line of out with each */
static void
show(struct term *t, const struct buf *out,
    void (*each)(struct term *, const struct jval *))
{
	const char *p = out->p, *end = out->p + out->len, *nl;
	struct arena a;
	struct jval *v;
	char err[100];
	int n = 0;

	arena_init(&a);
	for (; p && p < end; p = nl + 1) {
		if (!(nl = memchr(p, '\n', (size_t)(end - p))))
			break;
		arena_clear(&a);
		if ((v = json_parse(&a, p, (size_t)(nl - p), err, sizeof err)))
			each(t, v), n++;
	}
	if (!n)
		fputs("No skills are installed or listed by a source.\n",
		    t->out);
	arena_release(&a);
}

int
term_skills(struct term *t, int n, char **av)
{
	char *list[] = { "hw-skill", "list", NULL };
	char *inspect[] = { "hw-skill", "inspect", n > 1 ? av[1] : NULL,
		NULL };
	char *install[] = { "hw-skill", "install", n > 1 ? av[1] : NULL,
		"--expected-tree-sha256", n > 2 ? av[2] : NULL, NULL };
	struct buf out;
	int rc = -1;

	buf_init(&out);
	if (n == 0) {
		if ((rc = run_skill(t, list, &out)) == 0)
			show(t, &out, list_line);
	} else if (n == 2 && !strcmp(av[0], "inspect")) {
		if ((rc = run_skill(t, inspect, &out)) == 0)
			show(t, &out, inspect_lines);
	} else if (n == 3 && !strcmp(av[0], "install")) {
		if ((rc = run_skill(t, install, &out)) == 0) {
			fputs("Installed ", t->out);
			put(t, av[1]);
			fputs(" with the digest you confirmed; the agent gets "
			    "it from its next run.\n", t->out);
		}
	} else {
		fputs("usage: /skills | /skills inspect NAME | /skills install "
		    "NAME DIGEST\n", t->err);
		rc = HW_EXIT_USAGE;
	}
	fflush(t->out);
	buf_release(&out);
	return rc;
}
