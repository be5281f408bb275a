/*
 * scope.c - the scope analyzer: a tool call is LOW only when it is
 * provably read-only and inside the project.  A terminal command must be
 * plain words (no expansion, substitution, grouping, background or
 * assignment), joined by ; && || and |, each segment an allowlisted
 * command with allowlisted options, every path inside the project and
 * out of .heartwood, and no redirection but to /dev/null or between the
 * standard streams.  Anything else is at least MEDIUM; a write reaching
 * .git, .heartwood or outside the project, a pipe into an interpreter or
 * a shell handed to the network is HIGH.  Paths are taken relative to
 * the current directory (the agent's is the project root).
 */
#include <glob.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "agent/tools/tools.h"

/* where a word points */
enum place { P_IN, P_GIT, P_HW, P_OUT, P_DEV };

struct word {
	char *s;		/* quotes removed */
	int glob, tilde, dyn;	/* unquoted * ? [, leading ~, $ or ` */
};

struct redir {
	char op[4];		/* ">", ">>", "<", ">&", "<<" */
	struct word target;
};

struct seg {
	struct word *w;
	size_t nw;
	struct redir *r;
	size_t nr;
	int piped;		/* its input is the previous segment's output */
};

struct parsed {
	struct seg *seg;
	size_t nseg;
	int unsafe;		/* ( ) { } & ! or an unfinished quote */
};

/* ---- a small shell lexer ---- */

static void
word_add(struct seg *g, struct word *w)
{
	g->w = xrealloc(g->w, (g->nw + 1) * sizeof *g->w);
	g->w[g->nw++] = *w;
}

static struct seg *
seg_new(struct parsed *p, int piped)
{
	p->seg = xrealloc(p->seg, (p->nseg + 1) * sizeof *p->seg);
	memset(&p->seg[p->nseg], 0, sizeof *p->seg);
	p->seg[p->nseg].piped = piped;
	return &p->seg[p->nseg++];
}

/* lex_word reads one word at s[*i]; its flags say what bash would do */
static void
lex_word(struct parsed *p, const char *s, size_t *i, struct word *w)
{
	struct buf b;
	char q = 0;
	size_t j = *i;

	buf_init(&b);
	memset(w, 0, sizeof *w);
	w->tilde = s[j] == '~';
	for (; s[j]; j++) {
		char c = s[j];

		if (q == '\'') {
			if (c == '\'')
				q = 0;
			else
				buf_addc(&b, c);
			continue;
		}
		if (c == '\\') {
			if (!s[j + 1])
				break;
			buf_addc(&b, s[++j]);
			continue;
		}
		if (c == '$' || c == '`')
			w->dyn = 1;
		if (q == '"') {
			if (c == '"')
				q = 0;
			else
				buf_addc(&b, c);
			continue;
		}
		if (c == '\'' || c == '"') {
			q = c;
			continue;
		}
		if (strchr(" \t\n;&|<>()", c))
			break;
		if (strchr("*?[", c))
			w->glob = 1;
		if (strchr("{}!", c))
			p->unsafe = 1;
		buf_addc(&b, c);
	}
	if (q)
		p->unsafe = 1;
	w->s = xstrdup(buf_cstr(&b));
	buf_release(&b);
	*i = j;
}

static void
lex(struct parsed *p, const char *s)
{
	struct seg *g = seg_new(p, 0);
	struct redir *r;
	struct word w;
	size_t i = 0, k;

	while (s[i]) {
		if (s[i] == ' ' || s[i] == '\t') {
			i++;
		} else if (s[i] == ';' || s[i] == '\n' ||
		    (s[i] == '&' && s[i + 1] == '&') ||
		    (s[i] == '|' && s[i + 1] == '|')) {
			i += s[i] == s[i + 1] && s[i] != ';' && s[i] != '\n' ?
			    2 : 1;
			g = seg_new(p, 0);
		} else if (s[i] == '|') {
			i++;
			g = seg_new(p, 1);
		} else if (s[i] == '(' || s[i] == ')' || (s[i] == '&' &&
		    s[i + 1] != '>')) {
			p->unsafe = 1;
			i++;
		} else if (s[i] == '<' || s[i] == '>' || (s[i] == '&' &&
		    s[i + 1] == '>')) {
			g->r = xrealloc(g->r, (g->nr + 1) * sizeof *g->r);
			r = &g->r[g->nr++];
			memset(r, 0, sizeof *r);
			for (k = 0; k < 3 && strchr("<>&|", s[i]); i++)
				r->op[k++] = s[i];
			while (s[i] == ' ' || s[i] == '\t')
				i++;
			lex_word(p, s, &i, &r->target);
		} else {
			lex_word(p, s, &i, &w);
			/* 2>file: the digits were the descriptor */
			if ((s[i] == '<' || s[i] == '>') && w.s[0] &&
			    strspn(w.s, "0123456789") == strlen(w.s) &&
			    !w.dyn) {
				free(w.s);
				continue;
			}
			word_add(g, &w);
		}
	}
}

static void
parsed_release(struct parsed *p)
{
	size_t i, j;

	for (i = 0; i < p->nseg; i++) {
		for (j = 0; j < p->seg[i].nw; j++)
			free(p->seg[i].w[j].s);
		for (j = 0; j < p->seg[i].nr; j++)
			free(p->seg[i].r[j].target.s);
		free(p->seg[i].w);
		free(p->seg[i].r);
	}
	free(p->seg);
}

/* ---- where a path points ---- */

/* normalize folds . and .. in the absolute path p, in place */
static void
normalize(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		if (in[0] == '.' && (in[1] == '/' || !in[1])) {
			in++;
			continue;
		}
		if (in[0] == '.' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			in += 2;
			while (out > p && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		while (*in && *in != '/')
			*out++ = *in++;
	}
	if (out == p)
		*out++ = '/';
	*out = 0;
}

/* resolve: p with its longest existing prefix through realpath(3) */
static char *
resolve(const char *p)
{
	char *copy = xstrdup(p), *cut, *r;

	for (;;) {
		if ((r = realpath(copy, NULL))) {
			cut = xasprintf("%s%s", r, p + strlen(copy));
			free(r);
			free(copy);
			return cut;
		}
		if (!(cut = strrchr(copy, '/')) || cut == copy)
			break;
		*cut = 0;
	}
	free(copy);
	return xstrdup(p);
}

static int
first_is(const char *rel, const char *name)
{
	size_t n = strlen(name);

	return strncasecmp(rel, name, n) == 0 && (!rel[n] || rel[n] == '/');
}

static enum place
place_of(const char *path)
{
	static const char *const devs[] = { "/dev/null", "/dev/stdout",
		"/dev/stderr", NULL };
	char cwd[PATH_MAX], *full, *real, *rootr;
	const char *const *d;
	enum place pl = P_OUT;
	size_t n;

	for (d = devs; *d; d++)
		if (!strcmp(path, *d))
			return P_DEV;
	if (!getcwd(cwd, sizeof cwd))
		return P_OUT;
	full = path[0] == '/' ? xstrdup(path) : xasprintf("%s/%s", cwd, path);
	normalize(full);
	real = resolve(full);
	rootr = resolve(cwd);
	n = strlen(rootr);
	if (!strncmp(real, rootr, n) && (!real[n] || real[n] == '/')) {
		const char *rel = real[n] ? real + n + 1 : "";

		pl = first_is(rel, ".git") ? P_GIT : first_is(rel,
		    ".heartwood") ? P_HW : P_IN;
	}
	free(full);
	free(real);
	free(rootr);
	return pl;
}

/* word_place: the worst place a word can name (a glob: any match) */
static enum place
word_place(const struct word *w)
{
	enum place worst = P_IN, pl;
	glob_t g;
	size_t i;

	if (w->tilde || w->dyn)
		return P_OUT;
	if (!w->glob)
		return place_of(w->s);
	if (w->s[0] == '.' || strstr(w->s, "/."))
		return P_OUT;	/* .* reaches .. */
	if (glob(w->s, GLOB_NOCHECK, NULL, &g) != 0)
		return P_OUT;
	for (i = 0; i < g.gl_pathc; i++)
		if ((pl = place_of(g.gl_pathv[i])) > worst && pl != P_DEV)
			worst = pl;
	globfree(&g);
	return worst;
}

/* ---- the commands ---- */

static int
listed(const char *s, const char *const *v)
{
	for (; *v; v++)
		if (!strcmp(s, *v))
			return 1;
	return 0;
}

/* an option that makes a reader write, run something, or follow a link */
static int
bad_option(const char *cmd, const char *o)
{
	static const char *const find_bad[] = { "-exec", "-execdir", "-ok",
		"-okdir", "-delete", "-fprint", "-fprint0", "-fprintf",
		"-fls", NULL };
	static const char *const git_bad[] = { "--output", "--ext-diff",
		"-O", "--open-files-in-pager", "--exec", "--upload-pack",
		"--textconv", "-c", "-C", "--git-dir", "--work-tree",
		"--exec-path", "--config-env", "--paginate", "-p", NULL };
	size_t n = strcspn(o, "=");
	char opt[64];

	snprintf(opt, sizeof opt, "%.*s", (int)(n < 63 ? n : 63), o);
	if (!strcmp(cmd, "find"))
		return listed(opt, find_bad);
	if (!strcmp(cmd, "git"))
		return listed(opt, git_bad) || !strncmp(opt, "-O", 2);
	if (!strcmp(cmd, "sort"))
		return !strncmp(opt, "-o", 2) || !strncmp(opt, "-T", 2) ||
		    !strcmp(opt, "--output") || !strcmp(opt,
		    "--temporary-directory") || !strcmp(opt,
		    "--compress-program");
	if (!strcmp(cmd, "file"))
		return !strcmp(opt, "-C") || !strcmp(opt, "--compile");
	if (!strcmp(cmd, "tree"))
		return !strcmp(opt, "-o");
	return 0;
}

static int
git_ok(const struct seg *g)
{
	static const char *const subs[] = { "status", "diff", "log", "show",
		"blame", "ls-files", "rev-parse", "branch", "grep", NULL };
	size_t i = 1;

	while (i < g->nw && g->w[i].s[0] == '-') {
		if (strcmp(g->w[i].s, "--no-pager") && strcmp(g->w[i].s, "-P"))
			return 0;
		i++;
	}
	if (i == g->nw || !listed(g->w[i].s, subs))
		return 0;
	if (!strcmp(g->w[i].s, "branch"))
		for (i++; i < g->nw; i++)
			if (g->w[i].s[0] != '-' || !strcmp(g->w[i].s, "-d") ||
			    !strcmp(g->w[i].s, "-D") || !strcmp(g->w[i].s,
			    "-m") || !strcmp(g->w[i].s, "-M") ||
			    !strncmp(g->w[i].s, "--", 2))
				return 0;
	return 1;
}

static const char *const readers[] = { "ls", "cat", "head", "tail", "wc",
	"grep", "egrep", "fgrep", "find", "git", "pwd", "echo", "true",
	"false", "basename", "dirname", "stat", "realpath", "readlink", "du",
	"diff", "cmp", "sort", "cut", "nl", "file", "tree", "test", "[",
	"sleep", NULL };

/* seg_low: a segment that provably only reads inside the project */
static int
seg_low(const struct seg *g)
{
	size_t i;
	const char *cmd, *v;

	if (!g->nw)
		return g->nr == 0;
	cmd = g->w[0].s;
	if (g->w[0].dyn || g->w[0].glob || g->w[0].tilde ||
	    !listed(cmd, readers) || (!strcmp(cmd, "git") && !git_ok(g)))
		return 0;
	for (i = 1; i < g->nw; i++) {
		const struct word *w = &g->w[i];

		if (w->s[0] == '-' && !w->dyn) {
			if (bad_option(cmd, w->s))
				return 0;
			if ((v = strchr(w->s, '='))) {
				struct word t = *w;

				t.s = (char *)v + 1;
				if (*t.s && word_place(&t) != P_IN)
					return 0;
			} else if (strchr(w->s, '/')) {
				return 0;
			}
			continue;
		}
		if (!strcmp(cmd, "echo") || (!strcmp(cmd, "test") ||
		    !strcmp(cmd, "[")) ? w->dyn || w->glob || w->tilde :
		    word_place(w) != P_IN)
			return 0;
	}
	for (i = 0; i < g->nr; i++) {
		const struct redir *r = &g->r[i];

		if ((!strcmp(r->op, ">&") || !strcmp(r->op, "<&")) &&
		    (!strcmp(r->target.s, "1") || !strcmp(r->target.s, "2")))
			continue;
		if (!strcmp(r->op, "<") && word_place(&r->target) == P_IN)
			continue;
		if ((!strcmp(r->op, ">") || !strcmp(r->op, "&>") ||
		    !strcmp(r->op, ">>")) && !r->target.dyn &&
		    !r->target.tilde && !strcmp(r->target.s, "/dev/null"))
			continue;
		return 0;
	}
	return 1;
}

/* ---- what is HIGH ---- */

static const char *const writers[] = { "rm", "mv", "cp", "ln", "chmod",
	"chown", "chgrp", "touch", "tee", "truncate", "dd", "install",
	"mkdir", "rmdir", "shred", "unlink", "rsync", "tar", "patch", "perl",
	"python", "python3", "ruby", "node", "sh", "bash", "zsh", "dash",
	NULL };
static const char *const interpreters[] = { "sh", "bash", "zsh", "dash",
	"ksh", "python", "python3", "perl", "ruby", "node", "php", "lua",
	"tclsh", "awk", "gawk", "mawk", "source", ".", "eval", "exec",
	"xargs", NULL };

static const char *
base(const char *s)
{
	const char *b = strrchr(s, '/');

	return b ? b + 1 : s;
}

static int
bad_place(const struct word *w)
{
	enum place pl = word_place(w);

	return pl == P_OUT || pl == P_GIT || pl == P_HW;
}

/* writes_with: find or sed given an option that writes */
static int
writes_with(const struct seg *g, const char *cmd)
{
	size_t i;

	for (i = 1; i < g->nw; i++)
		if ((!strcmp(cmd, "find") && bad_option(cmd, g->w[i].s)) ||
		    (!strcmp(cmd, "sed") && (!strncmp(g->w[i].s, "-i", 2) ||
		    !strncmp(g->w[i].s, "--in-place", 10))))
			return 1;
	return 0;
}

static int
seg_high(const struct seg *g)
{
	const char *cmd = g->nw ? base(g->w[0].s) : "";
	size_t i;

	for (i = 0; i < g->nr; i++)
		if (strchr(g->r[i].op, '>') && strcmp(g->r[i].op, ">&") &&
		    bad_place(&g->r[i].target))
			return 1;
	if (!g->nw)
		return 0;
	if (g->piped && listed(cmd, interpreters))
		return 1;
	if ((!strcmp(cmd, "nc") || !strcmp(cmd, "ncat") ||
	    !strcmp(cmd, "netcat") || !strcmp(cmd, "socat")))
		for (i = 1; i < g->nw; i++)
			if (!strcmp(g->w[i].s, "-e") || !strcmp(g->w[i].s,
			    "-c") || strstr(g->w[i].s, "exec"))
				return 1;
	if (!strcmp(cmd, "git") && g->nw > 1 && !strcmp(g->w[1].s, "config"))
		return 1;
	if (!listed(cmd, writers) && !g->w[0].dyn && !writes_with(g, cmd))
		return 0;
	for (i = 1; i < g->nw; i++)
		if (g->w[i].s[0] != '-' && bad_place(&g->w[i]))
			return 1;
	return 0;
}

static enum risk
terminal_scope(const struct jval *args)
{
	const char *cmd = json_get_str(args, "command");
	const struct jval *in = json_get(args, "is_input");
	struct parsed p = { 0 };
	enum risk r = RISK_LOW;
	size_t i;

	if (!cmd)
		return RISK_MEDIUM;
	if (in && in->t == J_TRUE)
		return !*cmd || !strcmp(cmd, "C-c") ? RISK_LOW : RISK_MEDIUM;
	if (!*cmd || !strcmp(cmd, "C-c"))
		return RISK_LOW;
	lex(&p, cmd);
	for (i = 0; i < p.nseg; i++)
		if (seg_high(&p.seg[i]))
			r = RISK_HIGH;
	for (i = 0; r == RISK_LOW && i < p.nseg; i++)
		if (p.unsafe || !seg_low(&p.seg[i]))
			r = RISK_MEDIUM;
	parsed_release(&p);
	return r;
}

static enum risk
editor_scope(const struct jval *args)
{
	const char *cmd = json_get_str(args, "command");
	const char *path = json_get_str(args, "path");
	enum place pl;

	if (!path || !cmd)
		return RISK_LOW;	/* the editor refuses it */
	pl = place_of(path);
	if (!strcmp(cmd, "view"))
		return pl == P_IN ? RISK_LOW : RISK_MEDIUM;
	return pl == P_IN ? RISK_LOW : RISK_HIGH;
}

enum risk
tool_scope_risk(const char *name, const struct jval *args)
{
	if (!name)
		return RISK_HIGH;
	if (!strcmp(name, "terminal"))
		return terminal_scope(args);
	if (!strcmp(name, "file_editor"))
		return editor_scope(args);
	return RISK_LOW;
}
