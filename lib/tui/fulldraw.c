/* fulldraw.c - drawing the full-screen terminal from its state */
#define NCURSES_WIDECHAR 1
#include <curses.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <langinfo.h>
#include <locale.h>
#include <strings.h>
#include <unistd.h>
#include <wchar.h>

#include "tui/tui.h"
#include "tui/full.h"

/* One screen row of wrapped text: n bytes at s, after indent blanks */
struct row {
	const char *s;
	size_t n;
	int tone, attr, indent;
};

struct rows {
	struct row *r;
	size_t n, cap;
};

/* One piece of the transcript, in the order of key */
struct item {
	int64_t key;
	size_t order;
	int tone;
	const char *text;
};

static int
tone_attr(const struct full *f, int tone)
{
	if (tone == TONE_DIM)
		return A_DIM;
	return f->color && tone > TONE_PLAIN ? COLOR_PAIR(tone) : 0;
}

/*
 * glyph measures the character at s (n bytes left): its bytes, its
 * columns in *cols, and in *sub what to draw instead (0: itself).  Without
 * a UTF-8 locale, "·" is drawn as "-" and any other non-ASCII as "?".
 */
static size_t
glyph(const struct full *f, const char *s, size_t n, int *cols, int *sub)
{
	unsigned char c = (unsigned char)*s;
	mbstate_t st = { 0 };
	wchar_t wc;
	size_t k = 1;
	int w;

	*cols = 1;
	*sub = c == '\t' ? ' ' : 0;
	if (c < 0x80)
		return 1;
	if (f->utf8) {
		k = mbrtowc(&wc, s, n, &st);
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0)
			return *sub = '?', 1;
		w = wcwidth(wc);
		*cols = w < 0 ? 1 : w;
		*sub = w < 0 ? '?' : 0;
		return k;
	}
	if (n >= 2 && c == 0xc2 && (unsigned char)s[1] == 0xb7)
		return *sub = '-', 2;
	k = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
	for (size_t i = 1; i < k; i++)
		if (i >= n || ((unsigned char)s[i] & 0xc0) != 0x80)
			return *sub = '?', i;
	return *sub = '?', k;
}

/* put draws s (n bytes) at y, x in at most max columns; returns columns */
static int
put(const struct full *f, int y, int x, const char *s, size_t n, int max)
{
	int used = 0, w, sub;
	size_t k;

	if (y < 0 || y >= LINES || x >= COLS)
		return 0;
	move(y, x);
	while (n && *s && used < max) {
		k = glyph(f, s, n, &w, &sub);
		if (used + w > max)
			break;
		if (sub)
			addch((chtype)sub);
		else
			addnstr(s, (int)k);
		used += w;
		s += k;
		n -= k;
	}
	return used;
}

static int
puts_at(const struct full *f, int y, int x, const char *s, int max)
{
	return put(f, y, x, s, strlen(s), max);
}

/* width is the columns of s (n bytes) */
static int
width(const struct full *f, const char *s, size_t n)
{
	int used = 0, w, sub;
	size_t k;

	while (n && *s) {
		k = glyph(f, s, n, &w, &sub);
		used += w;
		s += k;
		n -= k;
	}
	return used;
}

static void
rows_add(struct rows *rs, const char *s, size_t n, int tone, int attr,
    int indent)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 64;
		rs->r = xrealloc(rs->r, rs->cap * sizeof *rs->r);
	}
	rs->r[rs->n++] = (struct row){ s, n, tone, attr, indent };
}

/* cut: the bytes of the longest prefix of s that fits w columns, broken
 * after a blank when one is near the end */
static size_t
cut(const struct full *f, const char *s, size_t n, int w)
{
	size_t i = 0, blank = 0, k;
	int used = 0, cw, sub;

	while (i < n) {
		k = glyph(f, s + i, n - i, &cw, &sub);
		if (used + cw > w)
			break;
		used += cw;
		i += k;
		if (s[i - 1] == ' ')
			blank = i;
	}
	if (i < n && blank > i / 2)
		return blank;
	return i ? i : (n ? 1 : 0);
}

/* wrap adds s as rows of w columns, rows after the first indented */
static void
wrap(const struct full *f, struct rows *rs, const char *s, int w, int tone,
    int attr, int indent)
{
	const char *end, *nl;
	size_t n, k;
	int first, iw;

	if (w < 2)
		w = 2;
	iw = indent < w / 2 ? indent : 0;
	for (; s; s = nl ? nl + 1 : NULL) {
		nl = strchr(s, '\n');
		end = nl ? nl : s + strlen(s);
		n = (size_t)(end - s);
		first = 1;
		do {
			k = cut(f, s, n, first ? w : w - iw);
			rows_add(rs, s, k, tone, attr, first ? 0 : iw);
			first = 0;
			s += k;
			n -= k;
		} while (n);
	}
}

/* draw_rows draws rows from first on lines y0..y0+h-1 */
static void
draw_rows(const struct full *f, const struct rows *rs, size_t first, int y0,
    int h, int x0, int w)
{
	const struct row *r;

	for (int y = 0; y < h && first + (size_t)y < rs->n; y++) {
		r = &rs->r[first + (size_t)y];
		attron(r->attr | tone_attr(f, r->tone));
		put(f, y0 + y, x0 + r->indent, r->s, r->n, w - r->indent);
		attroff(r->attr | tone_attr(f, r->tone));
	}
}

/* ---- the transcript ---- */

static int
role_tone(const char *role)
{
	if (!role)
		return TONE_PLAIN;
	if (!strcmp(role, "user"))
		return TONE_USER;
	if (!strcmp(role, "agent"))
		return TONE_AGENT;
	if (!strcmp(role, "error"))
		return TONE_ERROR;
	return TONE_DIM;
}

static int
item_cmp(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void
item_add(struct item **v, size_t *n, struct arena *a, int64_t key, int tone,
    struct buf *b)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n] = (struct item){ key, *n, tone,
		arena_strndup(a, b->p ? b->p : "", b->len) };
	++*n;
	buf_clear(b);
}

/*
 * runtime adds the runtime block after the transcript: the task plan as
 * [x] and [ ] items, the model activity, and the suggested next steps.
 */
static void
runtime(const struct full *f, struct arena *a, struct item **v, size_t *n,
    struct buf *b)
{
	const struct jval *plan = json_get(f->proj, "taskPlan");
	const struct jval *sug = json_get(f->proj, "suggestions");
	const struct jval *u = json_get(f->proj, "usage"), *x;
	int64_t calls = 0, in = 0, out = 0;

	for (size_t i = 0; plan && plan->t == J_ARRAY && i < plan->n; i++) {
		x = plan->u.a[i];
		buf_adds(b, json_is_str(json_get(x, "status"), "done") ?
		    "[x] " : "[ ] ");
		term_safe(b, json_get_str(x, "title"));
		item_add(v, n, a, INT64_MAX - 1, TONE_TOOL, b);
	}
	json_get_int(u, "callCount", &calls);
	json_get_int(u, "promptTokens", &in);
	json_get_int(u, "completionTokens", &out);
	if (calls > 0) {
		buf_printf(b, "Model activity: %lld call%s · %lld tokens · ",
		    (long long)calls, calls == 1 ? "" : "s",
		    (long long)(in + out));
		term_safe(b, json_get_str(u, "modelName"));
		item_add(v, n, a, INT64_MAX - 1, TONE_DIM, b);
	}
	for (size_t i = 0; sug && sug->t == J_ARRAY && i < sug->n; i++) {
		buf_adds(b, "Suggested: ");
		term_safe(b, json_get_str(sug->u.a[i], "label"));
		item_add(v, n, a, INT64_MAX - 1, TONE_DIM, b);
	}
}

/* items: the conversation, the actions and the notes in one order */
static size_t
items(const struct full *f, struct arena *a, struct item **v)
{
	const struct jval *c = json_get(f->proj, "conversation");
	const struct jval *acts = json_get(f->proj, "actions"), *x;
	int64_t seq, rev = -1;
	size_t n = 0;
	struct buf b;

	buf_init(&b);
	*v = NULL;
	for (size_t i = 0; c && c->t == J_ARRAY && i < c->n; i++) {
		x = c->u.a[i];
		seq = -1;
		json_get_int(x, "sequence", &seq);
		term_entry_text(&b, x);
		item_add(v, &n, a, seq * 2, role_tone(json_get_str(x, "role")),
		    &b);
	}
	for (size_t i = 0; acts && acts->t == J_ARRAY && i < acts->n; i++) {
		x = acts->u.a[i];
		seq = -1;
		json_get_int(x, "proposedSequence", &seq);
		term_action_text(&b, x);
		item_add(v, &n, a, seq * 2, TONE_ACTION, &b);
	}
	for (size_t i = 0; i < f->nnotes; i++) {
		buf_adds(&b, f->notes[i].text);
		item_add(v, &n, a, f->notes[i].after * 2 + 1, f->notes[i].tone,
		    &b);
	}
	if (n > 1)
		qsort(*v, n, sizeof **v, item_cmp);
	if (!n) {
		buf_adds(&b, "Type a task for the agent below, or /help.  F1 F2 "
		    "F3 (or Tab) switch tabs, Ctrl-P opens the commands, Esc "
		    "pauses the agent, Ctrl-Q leaves.");
		item_add(v, &n, a, -2, TONE_DIM, &b);
	}
	runtime(f, a, v, &n, &b);
	json_get_int(f->proj, "revision", &rev);
	if (f->stream && f->stream_rev >= rev) {
		buf_adds(&b, "Agent: ");
		term_safe(&b, f->stream);
		item_add(v, &n, a, INT64_MAX, TONE_AGENT, &b);
	}
	buf_release(&b);
	return n;
}

static void
draw_transcript(struct full *f, struct arena *a, int y0, int h)
{
	struct rows rs = { 0 };
	struct item *v;
	size_t n = items(f, a, &v), first;

	for (size_t i = 0; i < n; i++)
		wrap(f, &rs, v[i].text, COLS - 2, v[i].tone, 0, 6);
	if (f->scroll > rs.n)
		f->scroll = rs.n;
	first = rs.n > (size_t)h + f->scroll ? rs.n - (size_t)h - f->scroll :
	    0;
	draw_rows(f, &rs, first, y0, h, 1, COLS - 2);
	free(rs.r);
	free(v);
}

/* ---- the review panel ---- */

static int
risk_tone(const char *risk)
{
	if (risk && !strcmp(risk, "low"))
		return TONE_AGENT;
	if (risk && !strcmp(risk, "medium"))
		return TONE_ACTION;
	if (risk && !strcmp(risk, "high"))
		return TONE_ERROR;
	return TONE_OTHER;
}

static void
panel_rows(const struct full *f, struct arena *a, struct rows *rs, int w)
{
	const struct jval *acts, *x;
	size_t n = term_pending_count(f->proj, &acts);
	struct buf b;

	buf_init(&b);
	buf_printf(&b, "One decision for the whole set: allow all %zu once, "
	    "or reject all %zu.  Members cannot be decided one by one.", n,
	    n);
	wrap(f, rs, arena_strndup(a, b.p, b.len), w, TONE_DIM, 0, 0);
	if (term_pending_elsewhere(f->proj)) {
		buf_clear(&b);
		term_safe(&b, json_get_str(json_get(f->proj,
		    "researcherStatus"), "detail"));
		wrap(f, rs, arena_strndup(a, b.p, b.len), w, TONE_ERROR,
		    A_BOLD, 0);
	}
	for (size_t i = 0; i < n; i++) {
		x = acts->u.a[i];
		buf_clear(&b);
		term_member_text(&b, x, i);
		wrap(f, rs, arena_strndup(a, b.p, b.len), w,
		    risk_tone(json_get_str(x, "risk")), A_BOLD, 3);
		buf_clear(&b);
		term_task_text(&b, x);
		if (b.len)	/* after its "\n" */
			wrap(f, rs, arena_strndup(a, b.p + 1, b.len - 1), w,
			    TONE_PLAIN, 0, 3);
		buf_clear(&b);
		buf_adds(&b, "   ");
		json_canon(&b, json_get(x, "arguments"));
		wrap(f, rs, arena_strndup(a, b.p, b.len), w, TONE_PLAIN, 0, 3);
	}
	buf_release(&b);
}

static void
draw_button(const struct full *f, int y, int x, const char *label, int on,
    int first)
{
	int attr = on ? A_REVERSE | A_BOLD : first ? A_BOLD : 0;

	attron(attr);
	puts_at(f, y, x, label, COLS - x);
	attroff(attr);
}

/* draw_panel draws the review panel on lines y0..y0+h-1 */
static void
draw_panel(struct full *f, struct arena *a, int y0, int h)
{
	size_t n = term_pending_count(f->proj, NULL);
	struct rows rs = { 0 };
	char title[80], reject[48], allow[48];
	int body = h - 3, x;

	mvhline(y0, 0, ACS_HLINE, COLS);
	snprintf(title, sizeof title, " Review Agent Actions · %zu Action%s ",
	    n, n == 1 ? "" : "s");
	attron(A_BOLD | tone_attr(f, TONE_ACTION));
	puts_at(f, y0, 2, title, COLS - 4);
	attroff(A_BOLD | tone_attr(f, TONE_ACTION));
	panel_rows(f, a, &rs, COLS - 2);
	if (rs.n <= (size_t)body)
		f->pscroll = 0;
	else if (f->pscroll > rs.n - (size_t)body)
		f->pscroll = rs.n - (size_t)body;
	draw_rows(f, &rs, f->pscroll, y0 + 1, body, 1, COLS - 2);
	if (rs.n > (size_t)body + f->pscroll)
		puts_at(f, y0 + h - 2, COLS - 24, "(more: Down or PgDn)", 22);
	snprintf(reject, sizeof reject, "[ Reject %zu Action%s ]", n,
	    n == 1 ? "" : "s");
	snprintf(allow, sizeof allow, "[ Allow %zu Action%s Once ]", n,
	    n == 1 ? "" : "s");
	x = 2;
	draw_button(f, y0 + h - 1, x, reject, f->review && f->button == 0, 1);
	x += width(f, reject, strlen(reject)) + 3;
	draw_button(f, y0 + h - 1, x, allow, f->review && f->button == 1, 0);
	free(rs.r);
}

static void
draw_conversation(struct full *f, struct arena *a, int y0, int h)
{
	struct rows rs = { 0 };
	int ph;

	if (!term_pending_count(f->proj, NULL)) {
		draw_transcript(f, a, y0, h);
		return;
	}
	panel_rows(f, a, &rs, COLS - 2);
	ph = (int)rs.n + 3;
	free(rs.r);
	if (ph > h * 2 / 3)
		ph = h * 2 / 3;
	if (ph < 5)
		ph = h < 5 ? h : 5;
	draw_transcript(f, a, y0, h - ph);
	draw_panel(f, a, y0 + h - ph, ph);
}

/* ---- Files and Changes ---- */

static int
diff_tone(const char *line, int changes)
{
	if (!changes)
		return TONE_PLAIN;
	if (!strncmp(line, "+++", 3) || !strncmp(line, "---", 3))
		return TONE_DIM;
	if (*line == '+')
		return TONE_AGENT;
	if (*line == '-')
		return TONE_ERROR;
	if (*line == '@')
		return TONE_USER;
	return TONE_PLAIN;
}

static void
draw_view(struct full *f, struct pane *p, int y0, int h, int x0, int w)
{
	const char *s = p->view, *nl;
	size_t line = 0, lines = 0;
	int y = 0, tone;

	for (const char *c = s; c && *c; c++)
		lines += *c == '\n';
	if (p->vtop && p->vtop >= lines)
		p->vtop = lines ? lines - 1 : 0;
	for (; s && *s && y < h; s = nl ? nl + 1 : NULL, line++) {
		nl = strchr(s, '\n');
		if (line < p->vtop)
			continue;
		tone = diff_tone(s, p == &f->changes);
		attron(tone_attr(f, tone));
		put(f, y0 + y++, x0, s, nl ? (size_t)(nl - s) : strlen(s), w);
		attroff(tone_attr(f, tone));
	}
}

static void
draw_pane(struct full *f, struct pane *p, int y0, int h)
{
	int lw = COLS / 3 < 20 ? 20 : COLS / 3 > 40 ? 40 : COLS / 3, rows;

	attron(A_BOLD);
	puts_at(f, y0, 1, p->title ? p->title : "", COLS - 2);
	attroff(A_BOLD);
	rows = h - 1;
	if (p->sel < p->top)
		p->top = p->sel;
	if (rows > 0 && p->sel >= p->top + (size_t)rows)
		p->top = p->sel - (size_t)rows + 1;
	for (int y = 0; y < rows && p->top + (size_t)y < p->n; y++) {
		size_t i = p->top + (size_t)y;
		int attr = i == p->sel ? A_REVERSE : p->rows[i].path ? 0 :
		    A_DIM;

		attron(attr);
		mvhline(y0 + 1 + y, 0, ' ', lw);
		puts_at(f, y0 + 1 + y, 1, p->rows[i].label, lw - 2);
		attroff(attr);
	}
	if (!p->n)
		puts_at(f, y0 + 1, 1, "(nothing listed)", lw - 2);
	mvvline(y0 + 1, lw, ACS_VLINE, rows);
	draw_view(f, p, y0 + 1, rows, lw + 2, COLS - lw - 3);
}

/* ---- bars ---- */

static void
draw_tabs(const struct full *f)
{
	static const char *const names[TABS] = { "F1 Conversation",
		"F2 Files", "F3 Changes" };
	char right[160];
	int x = 1, w;

	for (int i = 0; i < TABS; i++) {
		attron(i == f->tab ? A_REVERSE | A_BOLD : 0);
		w = puts_at(f, 0, x, " ", 1);
		w += puts_at(f, 0, x + w, names[i], COLS - x - w);
		w += puts_at(f, 0, x + w, " ", 1);
		attroff(i == f->tab ? A_REVERSE | A_BOLD : 0);
		x += w + 1;
	}
	snprintf(right, sizeof right, "Heartwood · %s", f->t->sid);
	w = width(f, right, strlen(right));
	if (x + w + 2 < COLS)
		puts_at(f, 0, COLS - w - 1, right, w);
	mvhline(1, 0, ACS_HLINE, COLS);
}

static void
activity(const struct full *f, char *s, size_t size)
{
	int64_t ms = full_elapsed_ms(f);

	if (f->leaving)
		snprintf(s, size, "pausing before leaving · %llds",
		    (long long)(ms / 1000));
	else if (ms < 10000)
		snprintf(s, size, "Working%.*s", f->animate ?
		    (int)(ms / 500 % 4) : 3, "...");
	else
		snprintf(s, size, "still working · %llds",
		    (long long)(ms / 1000));
}

static void
draw_status(const struct full *f, int y)
{
	size_t n = term_pending_count(f->proj, NULL);
	char act[64];
	struct buf b;
	int w;

	buf_init(&b);
	if (n)
		term_review_text(&b, n);
	else if (f->proj)
		term_status_text(&b, f->proj);
	else
		buf_printf(&b, "Starting · %s", term_mode_label());
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	if (n)
		attron(A_BOLD);
	put(f, y, 1, b.p, b.len, COLS - 2);
	attroff(A_BOLD);
	if (f->pid) {
		activity(f, act, sizeof act);
		w = width(f, act, strlen(act));
		if (width(f, b.p, b.len) + w + 4 < COLS)
			puts_at(f, y, COLS - w - 1, act, w);
	}
	attroff(A_REVERSE);
	buf_release(&b);
}

/* draw_composer draws the input line and says where the cursor goes */
static void
draw_composer(const struct full *f, int y, int *cx)
{
	const char *s = f->input.p ? f->input.p : "";
	size_t n = f->input.len, k;
	int w, cw, sub;

	mvaddstr(y, 0, "> ");
	*cx = 2;
	if (!n) {
		attron(A_DIM);
		puts_at(f, y, 2, f->review ? "Choose Reject or Allow above "
		    "(Left/Right, Enter), or type a /command" :
		    "Ask Heartwood or enter /help", COLS - 3);
		attroff(A_DIM);
		return;
	}
	/* the end of a long line, as it is typed */
	for (w = width(f, s, n); n && w > COLS - 3; s += k, n -= k) {
		k = glyph(f, s, n, &cw, &sub);
		w -= cw;
	}
	*cx = 2 + put(f, y, 2, s, n, COLS - 3);
}

/* ---- dialogs ---- */

static void
box_at(int y0, int x0, int h, int w)
{
	for (int y = y0; y < y0 + h; y++)
		mvhline(y, x0, ' ', w);
	mvhline(y0, x0, ACS_HLINE, w);
	mvhline(y0 + h - 1, x0, ACS_HLINE, w);
	mvvline(y0, x0, ACS_VLINE, h);
	mvvline(y0, x0 + w - 1, ACS_VLINE, h);
	mvaddch(y0, x0, ACS_ULCORNER);
	mvaddch(y0, x0 + w - 1, ACS_URCORNER);
	mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
	mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
}

static void
draw_mode(const struct full *f)
{
	static const char *const label[] = { "Review Every Action",
		"Low-Risk Automation" };
	static const char *const value[] = { "ask-every-time",
		"auto-approve-low-risk" };
	static const char *const about[] = {
		"Pause before every proposed action set.",
		"A set runs by itself only if every member is low risk." };
	const char *lock = full_mode_lock(f), *why;
	int w = COLS - 4 < 76 ? COLS - 4 : 76, h = 14, x0 = (COLS - w) / 2;
	int y0 = (LINES - h) / 2, cur = term_mode_label()[0] == 'L', y;
	char line[160];

	box_at(y0, x0, h, w);
	attron(A_BOLD);
	puts_at(f, y0, x0 + 2, " Action Review ", w - 4);
	attroff(A_BOLD);
	snprintf(line, sizeof line, "Current: %s", label[cur]);
	puts_at(f, y0 + 1, x0 + 2, line, w - 4);
	for (int i = 0; i < 2; i++) {
		y = y0 + 3 + i * 4;
		why = full_mode_unavailable((size_t)i);
		snprintf(line, sizeof line, "%s (%c) %s  %s%s%s", f->msel == i ?
		    ">" : " ", cur == i ? '*' : ' ', label[i], value[i],
		    i == 0 ? "  Recommended" : "", why ? "  Unavailable" : "");
		attron(f->msel == i ? A_REVERSE : 0);
		puts_at(f, y, x0 + 2, line, w - 4);
		attroff(f->msel == i ? A_REVERSE : 0);
		puts_at(f, y + 1, x0 + 8, about[i], w - 10);
		if (why) {
			attron(tone_attr(f, TONE_ACTION));
			puts_at(f, y + 2, x0 + 8, why, w - 10);
			attroff(tone_attr(f, TONE_ACTION));
		}
	}
	if (lock) {
		attron(tone_attr(f, TONE_ACTION) | A_BOLD);
		puts_at(f, y0 + h - 3, x0 + 2, lock, w - 4);
		attroff(tone_attr(f, TONE_ACTION) | A_BOLD);
	}
	attron(A_DIM);
	puts_at(f, y0 + h - 2, x0 + 2, "Up/Down choose · Enter selects · Esc "
	    "closes", w - 4);
	attroff(A_DIM);
}

static void
draw_palette(const struct full *f)
{
	int w = COLS - 4 < 50 ? COLS - 4 : 50, h = 14, x0 = (COLS - w) / 2;
	int y0 = (LINES - h) / 2 > 2 ? (LINES - h) / 2 : 2, k = 0;

	box_at(y0, x0, h, w);
	attron(A_BOLD);
	puts_at(f, y0, x0 + 2, " Commands ", w - 4);
	attroff(A_BOLD);
	mvaddstr(y0 + 1, x0 + 2, "> ");
	put(f, y0 + 1, x0 + 4, f->filter.p ? f->filter.p : "", f->filter.len,
	    w - 6);
	for (size_t i = 0; full_palette[i] && k < h - 4; i++) {
		if (!full_palette_match(f, i))
			continue;
		attron(k == f->msel ? A_REVERSE : 0);
		mvhline(y0 + 3 + k, x0 + 1, ' ', w - 2);
		puts_at(f, y0 + 3 + k, x0 + 2, k == f->msel ? ">" : " ", 1);
		puts_at(f, y0 + 3 + k, x0 + 4, full_palette[i], w - 6);
		attroff(k == f->msel ? A_REVERSE : 0);
		k++;
	}
	if (!k)
		puts_at(f, y0 + 3, x0 + 3, "(no command matches)", w - 6);
}

static void
too_small(const struct full *f)
{
	char need[64];

	snprintf(need, sizeof need, "need %dx%d, have %dx%d", FULL_MIN_COLS,
	    FULL_MIN_LINES, COLS, LINES);
	puts_at(f, 0, 0, "terminal too small", COLS);
	puts_at(f, 1, 0, need, COLS);
	puts_at(f, 2, 0, "Ctrl-Q leaves", COLS);
}

void
full_draw(struct full *f)
{
	struct arena a;
	int body = LINES - 5, cx = 0;

	arena_init(&a);
	erase();
	if (COLS < FULL_MIN_COLS || LINES < FULL_MIN_LINES) {
		too_small(f);
		curs_set(0);
		refresh();
		arena_release(&a);
		return;
	}
	draw_tabs(f);
	if (f->tab == TAB_CONV)
		draw_conversation(f, &a, 2, body);
	else
		draw_pane(f, f->tab == TAB_FILES ? &f->files : &f->changes, 2,
		    body);
	draw_status(f, LINES - 3);
	if (f->flash) {
		attron(tone_attr(f, f->flash_tone));
		puts_at(f, LINES - 2, 1, f->flash, COLS - 2);
		attroff(tone_attr(f, f->flash_tone));
	}
	draw_composer(f, LINES - 1, &cx);
	if (f->modal == MODAL_MODE)
		draw_mode(f);
	else if (f->modal == MODAL_PALETTE)
		draw_palette(f);
	curs_set(f->modal || f->review ? 0 : 1);
	move(LINES - 1, cx);
	refresh();
	arena_release(&a);
}

/* ---- the screen ---- */

/* keep_stderr sends standard error to a file, read back into notes */
static int
keep_stderr(struct full *f)
{
	FILE *tmp = tmpfile();

	if (!tmp)
		return hw_err_sys("cannot create a temporary file");
	f->errfd = fcntl(fileno(tmp), F_DUPFD_CLOEXEC, 3);
	fclose(tmp);
	fflush(stderr);
	f->saved_err = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (f->errfd < 0 || f->saved_err < 0 || dup2(f->errfd, 2) < 0) {
		if (f->errfd >= 0)
			close(f->errfd);
		if (f->saved_err >= 0)
			close(f->saved_err);
		return hw_err_sys("cannot keep 'stderr'");
	}
	return 0;
}

static void
colors(struct full *f)
{
	static const short fg[TONES] = { -1, COLOR_RED, COLOR_GREEN,
		COLOR_CYAN, COLOR_YELLOW, COLOR_BLUE, COLOR_MAGENTA, -1 };
	const char *nc = getenv("NO_COLOR");

	f->animate = !(nc && *nc);
	if (!f->animate || !has_colors() || start_color() != OK)
		return;
	use_default_colors();
	for (short i = 1; i < TONES; i++)
		init_pair(i, fg[i], -1);
	f->color = 1;
}

int
full_screen_open(struct full *f, SCREEN **scr)
{
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	f->utf8 = cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
	if (keep_stderr(f) < 0)
		return -1;
	if (!(*scr = newterm(NULL, stdout, stdin))) {
		dup2(f->saved_err, 2);
		close(f->saved_err);
		close(f->errfd);
		return hw_err_set(HW_EXIT_UNAVAILABLE, "cannot use the "
		    "terminal '%s'", getenv("TERM") ? getenv("TERM") : "");
	}
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	colors(f);
	return 0;
}

void
full_screen_aside(struct full *f, int leave)
{
	fflush(stderr);
	if (leave) {
		def_prog_mode();
		endwin();
		fflush(stdout);
		dup2(1, 2);	/* what the program says goes to the screen */
	} else {
		dup2(f->errfd, 2);
		reset_prog_mode();
		clearok(curscr, TRUE);
		f->dirty = 1;
	}
}

void
full_screen_close(struct full *f, SCREEN *scr)
{
	endwin();
	delscreen(scr);
	fflush(stdout);
	dup2(f->saved_err, 2);
	close(f->saved_err);
	close(f->errfd);
}
