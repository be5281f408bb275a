/*
 * risk.c - the rule risk analyzers of reference §5.4: OpenHands'
 * policy rails and pattern analyzer over a tool call's arguments, and the
 * model's own security_risk.  Patterns are POSIX extended expressions
 * (with glibc's \b, \s and \w), matched case-insensitively on normalized
 * text.
 */
#include <pthread.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/tools/tools.h"

#define EXTRACT_CAP 30000	/* characters read from one call */

enum { P_EXEC_HIGH, P_INJECT_HIGH, P_EXEC_MEDIUM, P_INJECT_MEDIUM, P_RAIL };

struct pattern {
	int kind;
	const char *id;		/* OpenHands' detector or rail id */
	const char *re;
	regex_t rx;
};

static struct pattern patterns[] = {
	{ P_EXEC_HIGH, "exec.destruct.rm_rf", "\\brm\\s+(-[frR]{2,}|-[rR]\\s+-f"
	    "|-f\\s+-[rR]|--recursive\\s+--force|--force\\s+--recursive)\\b" },
	{ P_EXEC_HIGH, "exec.destruct.sudo_rm", "\\bsudo\\s+rm\\b" },
	{ P_EXEC_HIGH, "exec.destruct.mkfs", "\\bmkfs\\.\\w+" },
	{ P_EXEC_HIGH, "exec.destruct.dd_raw_disk",
	    "\\bdd\\b.{0,100}of=/dev/" },
	{ P_EXEC_HIGH, "exec.code.eval_call", "\\beval\\s*\\(" },
	{ P_EXEC_HIGH, "exec.code.exec_call", "\\bexec\\s*\\(" },
	{ P_EXEC_HIGH, "exec.code.os_system", "\\bos\\.system\\s*\\(" },
	{ P_EXEC_HIGH, "exec.code.subprocess", "\\bsubprocess\\.(call|run|Popen"
	    "|check_output|check_call)\\s*\\(" },
	{ P_EXEC_HIGH, "exec.net.curl_pipe_exec",
	    "\\bcurl\\b[^|]{0,200}\\|\\s*(ba)?sh\\b" },
	{ P_EXEC_HIGH, "exec.net.wget_pipe_exec",
	    "\\bwget\\b[^|]{0,200}\\|\\s*(ba)?sh\\b" },
	{ P_INJECT_HIGH, "inject.override", "\\b(ignore|disregard|forget|"
	    "override|bypass)\\s+(all\\s+)?(previous|prior|above)\\s+"
	    "(instructions?|prompts?|rules?|directives?)\\b" },
	{ P_EXEC_MEDIUM, "exec.net.curl", "\\bcurl\\b.{0,100}https?://" },
	{ P_EXEC_MEDIUM, "exec.net.wget", "\\bwget\\b.{0,100}https?://" },
	{ P_INJECT_MEDIUM, "inject.mode_switch",
	    "\\byou\\s+are\\s+now\\s+(in\\s+)?(\\w+\\s+)?mode\\b" },
	{ P_INJECT_MEDIUM, "inject.identity",
	    "\\bpretend\\s+(you\\s+are|to\\s+be)\\s+(a\\s+)?different\\b" },
	/* the rails' pieces, matched per argument string */
	{ P_RAIL, "fetch", "\\b(curl|wget)\\b" },
	{ P_RAIL, "pipe-to-exec", "\\|\\s*(ba)?sh\\b|\\|\\s*python[23]?\\b"
	    "|\\|\\s*perl\\b|\\|\\s*ruby\\b" },
	{ P_RAIL, "raw-disk-op", "\\bdd\\b.{0,100}of=/dev/|\\bmkfs\\." },
	{ P_RAIL, "critical-path", "\\brm\\b.{0,60}\\s(/(\\s|$|\\*)|~/?(\\s|$)"
	    "|/(etc|usr|var|home|boot)\\b)" },
};
#define NPATTERNS (sizeof patterns / sizeof patterns[0])
enum { R_FETCH = NPATTERNS - 4, R_PIPE, R_DISK, R_CRITICAL };

static pthread_once_t compile_once = PTHREAD_ONCE_INIT;
static int compile_failed;

static void
compile_all(void)
{
	size_t i;

	for (i = 0; i < NPATTERNS; i++)
		if (regcomp(&patterns[i].rx, patterns[i].re,
		    REG_EXTENDED | REG_ICASE | REG_NOSUB) != 0)
			compile_failed = 1;
}

static int
matches(size_t i, const char *s)
{
	return regexec(&patterns[i].rx, s, 0, NULL, 0) == 0;
}

/* ---- normalization ---- */

/* decode: the code point at s (length *k), or -1 for an invalid byte */
static long
decode(const unsigned char *s, size_t n, size_t *k)
{
	uint32_t cp;
	int r = utf8_decode(s, n, &cp);

	*k = r > 0 ? (size_t)r : 1;
	return r > 0 ? (long)cp : -1;
}

/* invisible: the characters OpenHands strips before matching */
static int
invisible(long c)
{
	static const long set[] = {
		0xad, 0x34f, 0x61c, 0x115f, 0x1160, 0x1680, 0x180b, 0x180c,
		0x180d, 0x180e, 0x180f, 0x2009, 0x200a, 0x2800, 0x3164,
		0xfeff, 0xffa0, 0xfff9, 0xfffa, 0xfffb, 0xfffc,
	};
	size_t i;

	if ((c >= 0x01 && c <= 0x08) || c == 0x0b || c == 0x0c ||
	    (c >= 0x0e && c <= 0x1f) || (c >= 0x7f && c <= 0x9f) ||
	    (c >= 0x200b && c <= 0x200f) || (c >= 0x202a && c <= 0x202e) ||
	    (c >= 0x2060 && c <= 0x2064) || (c >= 0x2066 && c <= 0x206f) ||
	    (c >= 0xfe00 && c <= 0xfe0f) || (c >= 0xe0000 && c <= 0xe007f) ||
	    (c >= 0xe0100 && c <= 0xe01ef))
		return 1;
	for (i = 0; i < sizeof set / sizeof set[0]; i++)
		if (set[i] == c)
			return 1;
	return 0;
}

static int
space(long c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
	    c == 0xa0 || (c >= 0x2000 && c <= 0x2008) || c == 0x2028 ||
	    c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

/*
 * normalize appends s to b as OpenHands' _normalize does, as far as
 * matters for ASCII patterns: NUL and invisible characters dropped,
 * fullwidth ASCII folded (the part of NFKC that can spell a command),
 * whitespace runs collapsed to one space.  Bytes that are not UTF-8 are
 * kept.  At most *budget characters are read; the budget is reduced.
 */
static void
normalize(struct buf *b, const char *s, size_t n, size_t *budget)
{
	size_t i = 0, k;
	int sp = b->len && b->p[b->len - 1] == ' ';

	while (i < n && *budget) {
		long c = decode((const unsigned char *)s + i, n - i, &k);

		(*budget)--;
		if (c >= 0xff01 && c <= 0xff5e)
			c -= 0xff01 - 0x21;
		if (c == 0 || invisible(c)) {
			i += k;
			continue;
		}
		if (space(c)) {
			if (!sp)
				buf_addc(b, ' ');
			sp = 1;
		} else {
			if (c >= 0 && c < 0x80)
				buf_addc(b, (char)c);
			else
				buf_add(b, s + i, k);
			sp = 0;
		}
		i += k;
	}
}

/* ---- argument strings ---- */

struct corpus {
	struct buf exec;	/* tool name and argument strings */
	struct buf all;		/* exec and the summary */
	struct buf *segs;	/* each string on its own, for the rails */
	size_t nsegs;
	size_t budget;
};

static void
add_segment(struct corpus *c, const char *s, size_t n)
{
	struct buf *seg;
	size_t budget = c->budget;

	c->segs = xrealloc(c->segs, (c->nsegs + 1) * sizeof *c->segs);
	seg = &c->segs[c->nsegs++];
	buf_init(seg);
	normalize(seg, s, n, &budget);
	buf_cstr(seg);
	if (c->exec.len)
		buf_addc(&c->exec, ' ');
	normalize(&c->exec, s, n, &c->budget);
}

static void
walk(struct corpus *c, const struct jval *v, int depth)
{
	size_t i;

	if (!v || depth > JSON_MAX_DEPTH || !c->budget)
		return;
	if (v->t == J_STRING)
		add_segment(c, v->u.s, v->n);
	else if (v->t == J_ARRAY)
		for (i = 0; i < v->n; i++)
			walk(c, v->u.a[i], depth + 1);
	else if (v->t == J_OBJECT)
		for (i = 0; i < v->n; i++) {
			const struct jmember *m = &v->u.m[i];

			if (depth == 0 && ((m->kn == 7 &&
			    memcmp(m->k, "summary", 7) == 0) || (m->kn == 13 &&
			    memcmp(m->k, "security_risk", 13) == 0)))
				continue;
			walk(c, m->v, depth + 1);
		}
}

static void
corpus_release(struct corpus *c)
{
	size_t i;

	for (i = 0; i < c->nsegs; i++)
		buf_release(&c->segs[i]);
	free(c->segs);
	buf_release(&c->exec);
	buf_release(&c->all);
}

/* ---- rm with recursive and force flags, token by token ---- */

/*
 * next_segment splits shell text on ;, &&, ||, | and newlines outside
 * quotes (OpenHands' _split_shell_segments); *end is where the next one
 * starts.
 */
static size_t
next_segment(const char *s, size_t i, size_t *end)
{
	int sq = 0, dq = 0;
	size_t j;

	for (j = i; s[j]; j++) {
		if (s[j] == '\\' && !sq && s[j + 1]) {
			j++;
			continue;
		}
		if (s[j] == '\'' && !dq)
			sq = !sq;
		else if (s[j] == '"' && !sq)
			dq = !dq;
		else if (!sq && !dq && (s[j] == ';' || s[j] == '|' ||
		    s[j] == '\n' || (s[j] == '&' && s[j + 1] == '&'))) {
			*end = j + ((s[j] == '&' || s[j] == '|') &&
			    s[j + 1] == s[j] ? 2 : 1);
			return j;
		}
	}
	*end = j;
	return j;
}

static int
is_assignment(const char *t, size_t n)
{
	size_t i;

	if (!n || !(t[0] == '_' || ((t[0] | 32) >= 'a' && (t[0] | 32) <= 'z')))
		return 0;
	for (i = 1; i < n && t[i] != '='; i++)
		if (!(t[i] == '_' || (t[i] >= '0' && t[i] <= '9') ||
		    ((t[i] | 32) >= 'a' && (t[i] | 32) <= 'z')))
			return 0;
	return i < n;
}

/* token: the next word of s[i, end) with quotes removed, into w */
static size_t
token(const char *s, size_t i, size_t end, struct buf *w)
{
	char q = 0;

	buf_clear(w);
	while (i < end && (s[i] == ' ' || s[i] == '\t'))
		i++;
	for (; i < end && (q || (s[i] != ' ' && s[i] != '\t')); i++) {
		if (q && s[i] == q)
			q = 0;
		else if (!q && (s[i] == '\'' || s[i] == '"'))
			q = s[i];
		else if (s[i] == '\\' && q != '\'' && i + 1 < end)
			buf_addc(w, s[++i]);
		else
			buf_addc(w, s[i]);
	}
	buf_cstr(w);
	return i;
}

static int
segment_rm_rf(const char *s, size_t i, size_t end, struct buf *w)
{
	int rec = 0, force = 0, first = 1;
	size_t n;

	while ((i = token(s, i, end, w)), w->len || i < end) {
		if (!w->len)
			continue;
		if (first) {
			if (is_assignment(w->p, w->len))
				continue;
			n = w->len;
			if (!(n >= 2 && strcasecmp(w->p + n - 2, "rm") == 0 &&
			    (n == 2 || w->p[n - 3] == '/')))
				return 0;
			first = 0;
			continue;
		}
		if (strcmp(w->p, "--") == 0)
			break;
		if (w->p[0] == '>' || w->p[0] == '<' ||
		    (w->p[0] >= '0' && w->p[0] <= '9' && strpbrk(w->p, "<>")))
			continue;
		if (strcmp(w->p, "--recursive") == 0)
			rec = 1;
		else if (strcmp(w->p, "--force") == 0)
			force = 1;
		else if (w->p[0] == '-' && w->p[1] && w->p[1] != '-') {
			rec |= strpbrk(w->p + 1, "rR") != NULL;
			force |= strchr(w->p + 1, 'f') != NULL;
		}
	}
	return rec && force;
}

/* rm_recursive_force: some segment of s runs rm with -r and -f */
static int
rm_recursive_force(const char *s)
{
	struct buf w;
	size_t i = 0, end, next;
	int hit = 0;

	buf_init(&w);
	while (!hit && s[i]) {
		end = next_segment(s, i, &next);
		hit = segment_rm_rf(s, i, end, &w);
		i = next;
	}
	buf_release(&w);
	return hit;
}

/* ---- the analyzers ---- */

static enum risk
rails(const struct corpus *c)
{
	size_t i;

	for (i = 0; i < c->nsegs; i++) {
		const char *s = c->segs[i].p;

		if (matches(R_FETCH, s) && matches(R_PIPE, s))
			return RISK_HIGH;
		if (matches(R_DISK, s))
			return RISK_HIGH;
		if (rm_recursive_force(s) && matches(R_CRITICAL, s))
			return RISK_HIGH;
	}
	return RISK_LOW;
}

static enum risk
scan(const struct corpus *c)
{
	static const int order[] = {
		P_EXEC_HIGH, P_INJECT_HIGH, P_EXEC_MEDIUM, P_INJECT_MEDIUM
	};
	size_t i, o;

	for (o = 0; o < 4; o++) {
		if (o == 2) {
			size_t j;

			for (j = 0; j < c->nsegs; j++)
				if (rm_recursive_force(c->segs[j].p))
					return RISK_HIGH;
		}
		for (i = 0; i < NPATTERNS; i++) {
			const char *text = patterns[i].kind == P_EXEC_HIGH ||
			    patterns[i].kind == P_EXEC_MEDIUM ? c->exec.p :
			    c->all.p;

			if (patterns[i].kind == order[o] && matches(i, text))
				return o < 2 ? RISK_HIGH : RISK_MEDIUM;
		}
	}
	return RISK_LOW;
}

enum risk
tool_rule_risk(const char *name, const struct jval *args)
{
	struct corpus c;
	const char *summary;
	enum risk r1, r2;
	size_t budget;

	if (pthread_once(&compile_once, compile_all) != 0 || compile_failed ||
	    !name)
		return RISK_HIGH;
	memset(&c, 0, sizeof c);
	c.budget = EXTRACT_CAP;
	add_segment(&c, name, strlen(name));
	walk(&c, args, 0);
	buf_add(&c.all, c.exec.p, c.exec.len);
	budget = EXTRACT_CAP;
	if ((summary = json_get_str(args, "summary"))) {
		buf_addc(&c.all, ' ');
		normalize(&c.all, summary, strlen(summary), &budget);
	}
	buf_cstr(&c.exec);
	buf_cstr(&c.all);
	r1 = rails(&c);
	r2 = scan(&c);
	corpus_release(&c);
	if (r2 > r1)
		r1 = r2;
	r2 = tool_scope_risk(name, args);
	return r1 > r2 ? r1 : r2;
}

enum risk
tool_model_risk(const char *name, const struct jval *args)
{
	const char *s = json_get_str(args, "security_risk");

	if (!s || tool_read_only(name))
		return RISK_UNKNOWN;
	if (strcmp(s, "LOW") == 0)
		return RISK_LOW;
	if (strcmp(s, "MEDIUM") == 0)
		return RISK_MEDIUM;
	if (strcmp(s, "HIGH") == 0)
		return RISK_HIGH;
	return RISK_UNKNOWN;
}
