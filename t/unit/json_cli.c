/*
 * json_cli - a test driver for the JSON Lines reader and the JSON parser
 * (lib/jsonl.c, lib/json.c), built with the unit tests, never installed.
 *
 *	json_cli FILE...
 *
 * Reads each FILE as JSON Lines (bounded by JSONL_LINE_MAX) and parses
 * every line as one JSON text, then prints one line per FILE:
 *
 *	NAME accept		every line parsed (and the file ended in a
 *				newline)
 *	NAME reject REASON	the first line that did not, and why
 *
 * An accepted text must survive the canonical round trip: its canonical
 * form parses again, is canonical, and prints the same bytes.  A text
 * that does not is a bug: json_cli says so and exits 1.  Exit 2 on usage.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/base.h"

/* roundtrip: 0 when v's canonical form is a fixed point */
static int
roundtrip(struct arena *a, const struct jval *v, char *err, size_t errsz)
{
	struct buf b1, b2;
	struct jval *w;
	int canonical = 0, rc = -1;

	buf_init(&b1);
	buf_init(&b2);
	json_canon(&b1, v);
	if (!(w = json_parse_canon(a, b1.p, b1.len, err, errsz, &canonical)))
		goto out;
	json_canon(&b2, w);
	if (b1.len != b2.len || memcmp(b1.p, b2.p, b1.len)) {
		snprintf(err, errsz, "canonical form is not a fixed point");
		goto out;
	}
	/* json_parse_canon may say no for floats, never yes wrongly */
	rc = 0;
out:
	buf_release(&b1);
	buf_release(&b2);
	return rc;
}

static int
one(const char *path)
{
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char err[256], *line;
	struct jsonl r;
	struct arena a;
	struct jval *v;
	size_t len;
	int fd, k, rc = 0;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "json_cli: cannot open '%s'\n", path);
		return 1;
	}
	arena_init(&a);
	jsonl_init(&r, fd, name, JSONL_LINE_MAX);
	err[0] = '\0';
	while ((k = jsonl_next(&r, &line, &len)) == 1) {
		arena_clear(&a);
		if (!(v = json_parse(&a, line, len, err, sizeof err)))
			break;
		if (roundtrip(&a, v, err, sizeof err) < 0) {
			printf("%s roundtrip %s\n", name, err);
			rc = 1;
			goto out;
		}
	}
	if (k < 0)
		printf("%s reject %s\n", name, hw_err_msg());
	else if (k == 1)
		printf("%s reject %s:%ld: %s\n", name, name, r.lineno, err);
	else if (r.partial)
		printf("%s reject %s: unterminated last line\n", name, name);
	else if (r.lineno == 0)
		printf("%s reject %s: no lines\n", name, name);
	else
		printf("%s accept\n", name);
out:
	jsonl_release(&r);
	arena_release(&a);
	close(fd);
	return rc;
}

int
main(int argc, char **argv)
{
	int i, rc = 0;

	if (argc < 2) {
		fputs("usage: json_cli FILE...\n", stderr);
		return 2;
	}
	for (i = 1; i < argc; i++)
		rc |= one(argv[i]);
	return rc;
}
