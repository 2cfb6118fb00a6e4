/* tuidraw — the screen drawn from the state. The contract is in tuidraw.h.
 *
 * Structure: styles, small helpers that draw clipped text, the layout, then
 * one function per panel (status, call tree, hottest functions, probes,
 * message line or prompt, the overlay's box) and the whole screen. The call
 * tree's rows come from tuitree; this file only draws them. */
#define _GNU_SOURCE
#include "tuidraw.h"

#include <curses.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "printable.h"
#include "tuilayout.h"
#include "tuiexplore.h"
#include "tuioverlay.h"
#include "util.h"

/* What things look like; style() maps them to colours or plain attributes. */
enum style {
	ST_NORMAL,
	ST_STATUS,     /* the status bar */
	ST_DROPS,      /* non-zero drops in the status bar */
	ST_PAUSED,
	ST_LABEL,      /* "window", "view": names of values */
	ST_VALUE,
	ST_TITLE,      /* a panel's title bar */
	ST_TITLE_FOCUS,
	ST_HEADER,     /* column labels */
	ST_SEL,        /* selected row of the focused panel */
	ST_SEL_IDLE,   /* selected row of another panel */
	ST_HOT,        /* >= 5% */
	ST_WARM,       /* >= 0.5% */
	ST_MATCH,      /* search match */
	ST_ZOOM,       /* zoom breadcrumb */
	ST_ERROR,
	ST_HINT,
	ST_DIM,        /* untraced probes */
	ST_BAR,        /* histogram bars */
	ST_BORDER,
};

/* ---- styles ------------------------------------------------------------------ */

enum { CP_STATUS = 1, CP_DROPS, CP_TITLE, CP_TITLE_FOCUS, CP_HOT, CP_WARM, CP_MATCH,
       CP_ZOOM, CP_ERROR, CP_BAR, CP_LABEL, CP_PAUSED };

void tuidraw_init_colors(struct tui *t)
{
	t->colors = has_colors() && start_color() == OK;
	if (!t->colors)
		return;
	use_default_colors();
	init_pair(CP_STATUS, COLOR_WHITE, COLOR_BLUE);
	init_pair(CP_DROPS, COLOR_WHITE, COLOR_RED);
	init_pair(CP_TITLE, COLOR_CYAN, -1);
	init_pair(CP_TITLE_FOCUS, COLOR_BLACK, COLOR_CYAN);
	init_pair(CP_HOT, COLOR_RED, -1);
	init_pair(CP_WARM, COLOR_GREEN, -1);
	init_pair(CP_MATCH, COLOR_BLACK, COLOR_YELLOW);
	init_pair(CP_ZOOM, COLOR_MAGENTA, -1);
	init_pair(CP_ERROR, COLOR_RED, -1);
	init_pair(CP_BAR, COLOR_GREEN, -1);
	init_pair(CP_LABEL, COLOR_CYAN, -1);
	init_pair(CP_PAUSED, COLOR_BLACK, COLOR_YELLOW);
}

static attr_t style(const struct tui *t, enum style s)
{
	bool c = t->colors;
	switch (s) {
	case ST_NORMAL: return A_NORMAL;
	case ST_STATUS: return c ? COLOR_PAIR(CP_STATUS) | A_BOLD : A_REVERSE;
	case ST_DROPS: return c ? COLOR_PAIR(CP_DROPS) | A_BOLD : A_BOLD | A_UNDERLINE;
	case ST_PAUSED: return c ? COLOR_PAIR(CP_PAUSED) | A_BOLD : A_BOLD | A_UNDERLINE;
	case ST_LABEL: return c ? COLOR_PAIR(CP_LABEL) : A_NORMAL;
	case ST_VALUE: return A_BOLD;
	case ST_TITLE: return c ? COLOR_PAIR(CP_TITLE) | A_BOLD : A_BOLD | A_UNDERLINE;
	case ST_TITLE_FOCUS: return c ? COLOR_PAIR(CP_TITLE_FOCUS) | A_BOLD : A_REVERSE | A_BOLD;
	case ST_HEADER: return A_BOLD;
	case ST_SEL: return A_REVERSE;
	case ST_SEL_IDLE: return A_BOLD | A_UNDERLINE;
	case ST_HOT: return c ? COLOR_PAIR(CP_HOT) | A_BOLD : A_BOLD;
	case ST_WARM: return c ? COLOR_PAIR(CP_WARM) : A_NORMAL;
	case ST_MATCH: return c ? COLOR_PAIR(CP_MATCH) : A_UNDERLINE | A_BOLD;
	case ST_ZOOM: return c ? COLOR_PAIR(CP_ZOOM) | A_BOLD : A_BOLD;
	case ST_ERROR: return c ? COLOR_PAIR(CP_ERROR) | A_BOLD : A_BOLD | A_REVERSE;
	case ST_HINT: return A_DIM;
	case ST_DIM: return A_DIM;
	case ST_BAR: return c ? COLOR_PAIR(CP_BAR) : A_NORMAL;
	case ST_BORDER: return c ? COLOR_PAIR(CP_TITLE) : A_NORMAL;
	}
	return A_NORMAL;
}

/* ---- drawing helpers --------------------------------------------------------- */

/* Draws at most up to column xmax (exclusive); returns the column after the
 * text. Never wraps. */
static int put(int y, int x, int xmax, attr_t a, const char *s)
{
	if (x >= xmax || x < 0)
		return x;
	int n = (int)strnlen(s, (size_t)(xmax - x));
	attrset(a);
	mvaddnstr(y, x, s, n);
	attrset(A_NORMAL);
	return x + n;
}

static int putf(int y, int x, int xmax, attr_t a, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static int putf(int y, int x, int xmax, attr_t a, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return put(y, x, xmax, a, buf);
}

/* Where a run of text on one row goes: row y from column x (each put on
 * the pen moves x past what it drew) up to column xmax, in attr. */
struct pen {
	int y, x, xmax;
	attr_t attr;
};

/* Text right-aligned so that it ends at xmax. */
static void put_right(int y, int xmin, int xmax, attr_t a, const char *s)
{
	int n = (int)strlen(s);
	int x = xmax - n < xmin ? xmin : xmax - n;
	put(y, x, xmax, a, s);
}

static void fill(int y, int x, int xmax, attr_t a)
{
	if (x >= xmax)
		return;
	attrset(a);
	mvhline(y, x, ' ', xmax - x);
	attrset(A_NORMAL);
}

/* Cuts a text to `width` columns, marking the cut with "..". */
static void clip(char *s, int width)
{
	if (width < 0)
		width = 0;
	if ((int)strlen(s) <= width)
		return;
	if (width >= 4) {
		s[width - 2] = '.';
		s[width - 1] = '.';
	}
	s[width] = 0;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

/* "812", "12.3k", "4.56M": rates and counts in a few columns. */
static const char *human(double x, char *buf, size_t size)
{
	if (x < 0)
		x = 0;
	if (x < 1000)
		snprintf(buf, size, x < 10 && x != (double)(long)x ? "%.1f" : "%.0f", x);
	else if (x < 1e6)
		snprintf(buf, size, "%.*fk", x < 1e4 ? 2 : x < 1e5 ? 1 : 0, x / 1e3);
	else if (x < 1e9)
		snprintf(buf, size, "%.*fM", x < 1e7 ? 2 : x < 1e8 ? 1 : 0, x / 1e6);
	else
		snprintf(buf, size, "%.2fG", x / 1e9);
	return buf;
}

static const char *elapsed(double s, char *buf, size_t size)
{
	long v = (long)s;
	if (v < 60)
		snprintf(buf, size, "%lds", v);
	else if (v < 3600)
		snprintf(buf, size, "%ldm%02lds", v / 60, v % 60);
	else
		snprintf(buf, size, "%ldh%02ldm", v / 3600, v / 60 % 60);
	return buf;
}

static const char *dur(uint64_t ns, char *buf, size_t size)
{
	return ns ? duration_format(ns, buf, size) : (snprintf(buf, size, "-"), buf);
}

/* ---- status lines ------------------------------------------------------------ */

/* Draws "label value" and a gap (narrower on narrow terminals) with the
 * pen's attributes (labels in ST_LABEL when it has none), moving it past
 * them; to p->xmax when they do not fit. */
static void put_pair(const struct tui *t, struct pen *p, const char *label, const char *value)
{
	int y = p->y, x = p->x, xmax = p->xmax;
	attr_t base = p->attr;
	int need = (int)strlen(value) + (label && *label ? (int)strlen(label) + 1 : 0);
	if (x + need > xmax) { /* a value is shown whole or not at all */
		p->x = xmax;
		return;
	}
	if (label && *label) {
		/* Colour pairs do not combine: on the status bar labels keep its colour. */
		x = put(y, x, xmax, base ? base : style(t, ST_LABEL), label);
		x = put(y, x, xmax, base, " ");
	}
	x = put(y, x, xmax, base | A_BOLD, value);
	p->x = put(y, x, xmax, base, COLS >= 120 ? "   " : "  ");
}

/* First line: what is profiled and how fast data comes (and is lost). */
static void draw_status_main(struct tui *t, const struct live_status *s)
{
	const struct rect r = t->lay.status;
	attr_t bar = style(t, ST_STATUS);
	int xmax = r.w;
	char a[64], b[64];
	fill(r.y, 0, xmax, bar);
	if (t->paused) {
		xmax -= 9;
		put(r.y, xmax, xmax + 8, style(t, ST_PAUSED), " PAUSED ");
	}
	int x = put(r.y, 0, xmax, bar | A_BOLD, COLS >= 120 ? "sonde top   " : "sonde top  ");
	if (!s) {
		put(r.y, x, xmax, bar, "waiting for data...");
		return;
	}
	/* The numbers matter more than the target, which gets the room left
	 * (at most a third of the line); numbers are never cut. */
	char ev[64], calls[64], drops[64], target[sizeof(s->target)];
	snprintf(ev, sizeof(ev), "%s events/s", human(s->samples_per_s, a, sizeof(a)));
	snprintf(calls, sizeof(calls), "%s calls/s", human(s->calls_per_s, b, sizeof(b)));
	snprintf(drops, sizeof(drops), "drops %llu", (unsigned long long)s->drops);
	int gap = COLS >= 120 ? 3 : 2;
	int numbers = (int)(strlen(ev) + strlen(calls) + strlen(drops)) + 3 * gap;
	int room = xmax - x - numbers;
	if (room > r.w / 3)
		room = r.w / 3;
	printable_copy(target, sizeof(target), s->target);
	clip(target, room - gap);
	struct pen pen = {.y = r.y, .x = x, .xmax = xmax, .attr = bar};
	if (room - gap >= 8)
		put_pair(t, &pen, "", target);
	if (pen.x + numbers - gap > xmax)
		return;
	put_pair(t, &pen, "", ev);
	put_pair(t, &pen, "", calls);
	put(r.y, pen.x, xmax, s->drops ? style(t, ST_DROPS) : bar, drops);
}

/* Second line: what is shown and how. */
static void draw_status_view(struct tui *t, const struct live_status *s)
{
	int y = t->lay.status.y + 1, xmax = t->lay.status.w;
	char a[64], b[64];
	snprintf(b, sizeof(b), "%.1fs", t->refresh_s);
	struct pen pen = {.y = y, .x = 0, .xmax = xmax, .attr = 0};
	if (!s) {
		put_pair(t, &pen, "refresh", b);
		return;
	}
	put_pair(t, &pen, "window", s->window);
	put_pair(t, &pen, "view", s->view);
	if (s->window_weight > 0 && t->view) { /* the view's share of the window */
		char pct[32];
		snprintf(pct, sizeof(pct), "%.1f%% of the window", 100.0 * t->view->total / s->window_weight);
		put_pair(t, &pen, "", pct);
	}
	put_pair(t, &pen, "filter", s->filter);
	put_pair(t, &pen, "refresh", b);
	put_pair(t, &pen, "sampling", s->sampling);
	put_pair(t, &pen, "up", elapsed(s->elapsed_s, b, sizeof(b)));
	put_pair(t, &pen, "samples", human((double)s->samples, a, sizeof(a)));
	if (s->drops && s->drops_detail[0])
		put(y, pen.x, xmax, style(t, ST_ERROR), s->drops_detail);
}

static void draw_status(struct tui *t)
{
	const struct live_status *s = t->view ? &t->view->status : NULL;
	draw_status_main(t, s);
	if (t->lay.status.h >= 2)
		draw_status_view(t, s);
}

/* ---- panels ------------------------------------------------------------------ */

static void draw_title(const struct tui *t, struct rect r, int y, enum focus f, const char *title,
		       const char *right)
{
	attr_t a = style(t, t->focus == f ? ST_TITLE_FOCUS : ST_TITLE);
	int xmax = r.x + r.w;
	fill(y, r.x, xmax, t->focus == f ? a : A_NORMAL);
	int x = put(y, r.x, xmax, a, " ");
	x = put(y, x, xmax, a, title);
	if (right && *right && x + (int)strlen(right) + 2 < xmax) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s ", right);
		put_right(y, x, xmax, t->focus == f ? a : style(t, ST_HINT), buf);
	}
}

/* Where a panel draws below its title bar: rows y to ymax (exclusive),
 * columns r.x to xmax (exclusive). */
struct panel {
	struct rect r;
	int y, ymax, xmax;
};

/* What every panel does first: nothing when it has no rows; else its title
 * bar (`right` on its right when it fits) and, in *p, the room below it. */
static bool panel_open(const struct tui *t, struct rect r, enum focus f, const char *title,
		       const char *right, struct panel *p)
{
	if (r.h <= 0)
		return false;
	draw_title(t, r, r.y, f, title, right);
	*p = (struct panel){r, r.y + 1, r.y + r.h, r.x + r.w};
	return true;
}

/* A list panel's position, "selected/count", for its title bar ("" when
 * the list is empty). */
static const char *list_position(size_t sel, size_t n, char *buf, size_t size)
{
	buf[0] = 0;
	if (n)
		snprintf(buf, size, "%zu/%zu", sel + 1, n);
	return buf;
}

/* Draws a label with the pen, the parts matching the search highlighted
 * (when `match`), moving it past the label. */
static void put_label(const struct tui *t, struct pen *pen, const char *label, bool match)
{
	int y = pen->y, x = pen->x, xmax = pen->xmax;
	attr_t a = pen->attr;
	char vis[LABEL_MAX];
	printable_copy(vis, sizeof(vis), label);
	clip(vis, xmax - x);
	attr_t hl = style(t, ST_MATCH);
	if (!match || !t->search) {
		pen->x = put(y, x, xmax, a, vis);
		return;
	}
	if (t->search_exact) {
		pen->x = put(y, x, xmax, hl, vis);
		return;
	}
	size_t plen = strlen(t->search);
	char *p = vis;
	for (char *m; (m = strstr(p, t->search)) != NULL; p = m + plen) {
		char save = *m;
		*m = 0;
		x = put(y, x, xmax, a, p);
		*m = save;
		char seg[LABEL_MAX];
		snprintf(seg, sizeof(seg), "%.*s", (int)plen, m);
		x = put(y, x, xmax, hl, seg);
	}
	pen->x = put(y, x, xmax, a, p);
}

static attr_t heat(const struct tui *t, double p)
{
	return p >= 5.0 ? style(t, ST_HOT) : p >= 0.5 ? style(t, ST_WARM) : A_NORMAL;
}

/* The zoom breadcrumb: "zoom: all > main > run   45.2% of all"; a path too
 * long for the line keeps its deepest part, which says where we are. */
static void draw_breadcrumb(const struct tui *t, struct rect r, int y)
{
	const struct flame_tree *ft = tuistate_flame(t);
	const struct flame_node *z = tuitree_display_root(tuistate_tree(t));
	const struct flame_node *chain[256];
	size_t depth = 0;
	for (const struct flame_node *n = z; n && n->parent && depth < 256; n = n->parent)
		chain[depth++] = n;
	char tmp[4096] = "all", lab[LABEL_MAX];
	size_t len = 3;
	while (depth-- > 0 && len < sizeof(tmp) - 1) {
		tuistate_frame_label(t->view, chain[depth]->frame, lab, sizeof(lab));
		int w = snprintf(tmp + len, sizeof(tmp) - len, " > %s", lab);
		if (w > 0)
			len = len + (size_t)w < sizeof(tmp) ? len + (size_t)w : sizeof(tmp) - 1;
	}
	char share[64];
	snprintf(share, sizeof(share), "   %.1f%% of all",
		 pct((double)z->total, ft && ft->root ? (double)ft->root->total : 0));
	const char *hint = "   Z: zoom out";
	int xmax = r.x + r.w;
	int x = put(y, r.x, xmax, style(t, ST_ZOOM), "zoom: ");
	int room = xmax - x - (int)strlen(share);
	if ((int)(strlen(tmp) + strlen(hint)) <= room)
		room -= (int)strlen(hint);
	else
		hint = "";
	if ((int)strlen(tmp) > room && room > 3) {
		x = put(y, x, xmax, style(t, ST_ZOOM), "...");
		x = put(y, x, xmax, style(t, ST_ZOOM), tmp + strlen(tmp) - (size_t)(room - 3));
	} else {
		x = put(y, x, x + (room > 0 ? room : 0), style(t, ST_ZOOM), tmp);
	}
	x = put(y, x, xmax, A_BOLD, share);
	put(y, x, xmax, style(t, ST_HINT), hint);
}

static void draw_tree_row(const struct tui *t, struct rect r, int y, size_t i, double base,
			  bool selected)
{
	struct tuitree_row row;
	if (!tuitree_row(tuistate_tree(t), i, &row))
		return;
	bool focused = selected && t->focus == FOCUS_FLAME;
	attr_t sel = focused ? style(t, ST_SEL) : selected ? style(t, ST_SEL_IDLE) : 0;
	int xmax = r.x + r.w;
	if (focused)
		fill(y, r.x, xmax, sel);
	double tp = pct((double)row.node->total, base), sp = pct((double)row.node->self, base);
	int x = putf(y, r.x, xmax, focused ? sel : heat(t, tp) | sel, "%5.1f%%", tp);
	x = put(y, x, xmax, sel, " ");
	if (t->inverted) {
		/* Inverted, a function's weight is all its own time; a caller's
		 * "self" would mean nothing, so it is left blank. */
		bool leaf_fn = row.node->parent && !row.node->parent->parent;
		x = leaf_fn ? putf(y, x, xmax, focused ? sel : heat(t, tp) | sel, "%5.1f%%", tp)
			    : put(y, x, xmax, sel, "      ");
	} else {
		x = putf(y, x, xmax, focused ? sel : heat(t, sp) | sel, "%5.1f%%", sp);
	}
	x = put(y, x, xmax, sel, "  ");
	/* Indent two columns a level; very deep rows stop indenting at half
	 * the room and show their depth instead. */
	int room = xmax - x, ind = row.depth * 2, most = room / 2 - 4;
	if (ind > most && most > 0) {
		char d[16];
		snprintf(d, sizeof(d), "%d ", row.depth);
		int pad = most - (int)strlen(d);
		fill(y, x, x + (pad > 0 ? pad : 0), sel);
		x = put(y, x + (pad > 0 ? pad : 0), xmax, sel | style(t, ST_HINT), d);
	} else {
		fill(y, x, x + ind < xmax ? x + ind : xmax, sel);
		x += ind;
	}
	const char *mark = !row.expandable ? "    " : row.expanded ? "[-] " : "[+] ";
	x = put(y, x, xmax, sel, mark);
	char lab[LABEL_MAX];
	tuistate_frame_label(t->view, row.node->frame, lab, sizeof(lab));
	put_label(t, &(struct pen){.y = y, .x = x, .xmax = xmax, .attr = sel}, lab, row.match);
}

static void draw_flame(struct tui *t)
{
	struct tuitree *tt = tuistate_tree(t);
	const struct flame_node *root = tuitree_display_root(tt);
	size_t n = tuitree_nrows(tt);
	char right[96] = "", a[32];
	if (root && t->view && !t->view->fractional)
		snprintf(right, sizeof(right), "%s samples",
			 human((double)root->total, a, sizeof(a)));
	if (n)
		snprintf(right + strlen(right), sizeof(right) - strlen(right), "%srow %ld/%zu",
			 right[0] ? "   " : "", tuitree_selected(tt) + 1, n);
	struct panel p;
	if (!panel_open(t, t->lay.flame, FOCUS_FLAME,
			t->inverted ? "CALL TREE (inverted: callers below each function)" : "CALL TREE",
			right, &p))
		return;
	const struct rect r = p.r;
	int y = p.y, ymax = p.ymax, xmax = p.xmax;
	if (root && tuitree_zoom_depth(tt) && y < ymax)
		draw_breadcrumb(t, r, y++);
	if (y < ymax)
		put(y++, r.x, xmax, style(t, ST_HEADER),
		    t->inverted ? "TOTAL%  SELF%  FUNCTION  (callers below)"
				: "TOTAL%  SELF%  FUNCTION");
	if (!n) {
		if (y < ymax)
			put(y, r.x + 2, xmax, style(t, ST_HINT),
			    t->view ? "no samples in this view yet" : "waiting for data...");
		return;
	}
	size_t top = tuitree_top(tt, (size_t)(ymax - y));
	long sel = tuitree_selected(tt);
	double base = (double)root->total;
	for (size_t i = top; i < n && y < ymax; i++, y++)
		draw_tree_row(t, r, y, i, base, (long)i == sel);
}

/* Keeps a cursor in a list visible in `height` rows. */
static void scroll_follow(size_t sel, size_t n, size_t height, size_t *top)
{
	if (!height)
		return;
	if (*top + height > n)
		*top = n > height ? n - height : 0;
	if (sel < *top)
		*top = sel;
	else if (sel >= *top + height)
		*top = sel - height + 1;
}

static void draw_hot(struct tui *t)
{
	const struct live_view *v = t->view;
	size_t n = v ? v->nhot : 0;
	char pos[32];
	struct panel p;
	if (!panel_open(t, t->lay.hot, FOCUS_HOT, "HOTTEST FUNCTIONS",
			list_position(t->hot_sel, n, pos, sizeof(pos)), &p))
		return;
	const struct rect r = p.r;
	int y = p.y, ymax = p.ymax, xmax = p.xmax;
	if (y < ymax)
		put(y++, r.x, xmax, style(t, ST_HEADER), " SELF%  TOTAL%  FUNCTION");
	if (!n) {
		if (y < ymax)
			put(y, r.x + 2, xmax, style(t, ST_HINT), "no samples yet");
		return;
	}
	scroll_follow(t->hot_sel, n, (size_t)(ymax > y ? ymax - y : 0), &t->hot_top);
	for (size_t i = t->hot_top; i < n && y < ymax; i++, y++) {
		const struct live_hot *h = &v->hot[i];
		bool selected = i == t->hot_sel, focused = selected && t->focus == FOCUS_HOT;
		attr_t sel = focused ? style(t, ST_SEL) : selected ? style(t, ST_SEL_IDLE) : 0;
		if (focused)
			fill(y, r.x, xmax, sel);
		double sp = pct(h->self, v->total), tp = pct(h->total, v->total);
		int x = putf(y, r.x, xmax, focused ? sel : heat(t, sp) | sel, "%5.1f%%", sp);
		x = put(y, x, xmax, sel, "  ");
		x = putf(y, x, xmax, focused ? sel : heat(t, tp) | sel, "%5.1f%%", tp);
		x = put(y, x, xmax, sel, "  ");
		char lab[LABEL_MAX];
		tuistate_frame_label(v, h->frame, lab, sizeof(lab));
		put_label(t, &(struct pen){.y = y, .x = x, .xmax = xmax, .attr = sel}, lab, false);
	}
}

/* The probe table's columns; narrow panels drop the least useful first. */
struct probe_col {
	const char *head;
	int width;
	int drop; /* order of dropping, 0 = never */
};
static const struct probe_col probe_cols[] = {
	{"CALLS/S", 8, 0}, {"P50", 8, 3}, {"P95", 8, 1},
	{"P99", 8, 0},     {"MAX", 8, 4}, {"CALLS", 9, 2},
};
#define NPROBE_COLS (sizeof(probe_cols) / sizeof(probe_cols[0]))
#define PROBE_NAME_MIN 12

static void probe_cols_fit(int width, bool *shown, int *name_w)
{
	int used = 0;
	for (size_t c = 0; c < NPROBE_COLS; c++)
		shown[c] = true, used += probe_cols[c].width;
	for (int d = 1; width - used < PROBE_NAME_MIN && d <= 4; d++)
		for (size_t c = 0; c < NPROBE_COLS; c++)
			if (probe_cols[c].drop == d)
				shown[c] = false, used -= probe_cols[c].width;
	*name_w = width - used > 1 ? width - used - 1 : 1;
}

static void probe_cells(const struct live_probe_view *pv, char cells[NPROBE_COLS][32])
{
	human(pv->calls_per_s, cells[0], 32);
	dur(pv->p50_ns, cells[1], 32);
	dur(pv->p95_ns, cells[2], 32);
	dur(pv->p99_ns, cells[3], 32);
	dur(pv->max_ns, cells[4], 32);
	human((double)pv->total_calls, cells[5], 32);
	if (pv->total_calls < 1000000)
		snprintf(cells[5], 32, "%llu", (unsigned long long)pv->total_calls);
}

static void draw_probe_row(const struct tui *t, struct rect r, int y, size_t i, const bool *shown,
			   int name_w)
{
	const struct live_probe_view *pv = &t->view->probes[i];
	bool selected = i == t->probe_sel, focused = selected && t->focus == FOCUS_PROBES;
	attr_t a = focused ? style(t, ST_SEL) : selected ? style(t, ST_SEL_IDLE) : 0;
	if (!pv->attached)
		a |= style(t, ST_DIM);
	int xmax = r.x + r.w;
	if (focused)
		fill(y, r.x, xmax, a);
	/* An untraced probe keeps its marker visible: the name is cut first. */
	const char *mark = pv->attached ? "" : name_w >= 24 ? " (untraced)" : " (off)";
	char name[LABEL_MAX];
	printable_copy(name, sizeof(name), pv->name);
	clip(name, name_w - (int)strlen(mark));
	snprintf(name + strlen(name), sizeof(name) - strlen(name), "%s", mark);
	clip(name, name_w);
	int x = putf(y, r.x, xmax, a, "%-*s ", name_w, name);
	char cells[NPROBE_COLS][32];
	probe_cells(pv, cells);
	for (size_t c = 0; c < NPROBE_COLS; c++)
		if (shown[c])
			x = putf(y, x, xmax, a, "%*s", probe_cols[c].width, cells[c]);
}

/* The log2 histogram of a probe: one row per non-empty bucket (the fullest
 * ones when they do not all fit), "lo - hi  count  bar". Returns the next
 * row. */
static int draw_histogram(const struct tui *t, const struct live_probe_view *pv, struct rect r,
			  int y, int ymax)
{
	const uint64_t *b = pv->hist.buckets;
	uint64_t most = 0, sum = 0;
	int nonempty = 0;
	for (int k = 0; k < LATENCY_HIST_BUCKETS; k++) {
		most = b[k] > most ? b[k] : most;
		sum += b[k];
		nonempty += b[k] != 0;
	}
	int xmax = r.x + r.w;
	if (!nonempty) {
		if (y < ymax)
			put(y++, r.x + 2, xmax, style(t, ST_HINT), "no calls in the window");
		return y;
	}
	/* With too little room, leave out the emptiest buckets. */
	uint64_t floor_count = 0;
	int room = ymax - y;
	while (nonempty > room && room > 0) {
		uint64_t next = UINT64_MAX;
		int cnt = 0;
		for (int k = 0; k < LATENCY_HIST_BUCKETS; k++)
			if (b[k] > floor_count && b[k] < next)
				next = b[k];
		floor_count = next;
		for (int k = 0; k < LATENCY_HIST_BUCKETS; k++)
			cnt += b[k] > floor_count;
		nonempty = cnt;
	}
	for (int k = 0; k < LATENCY_HIST_BUCKETS && y < ymax; k++) {
		if (!b[k] || b[k] <= floor_count)
			continue;
		char lo[32], hi[32], count[32];
		duration_format(k ? (uint64_t)1 << k : 0, lo, sizeof(lo));
		if (k < 63)
			duration_format((uint64_t)1 << (k + 1), hi, sizeof(hi));
		else
			snprintf(hi, sizeof(hi), "inf");
		if (t->view->fractional)
			snprintf(count, sizeof(count), "%.1f%%", pct((double)b[k], (double)sum));
		else
			snprintf(count, sizeof(count), "%llu", (unsigned long long)b[k]);
		int x = putf(y, r.x, xmax, 0, "  %7s - %-7s %8s ", lo, hi, count);
		int bw = xmax - x - 1;
		if (bw > 0) {
			int len = (int)((double)b[k] / (double)most * bw + 0.5);
			char bar[512];
			len = tuilayout_clamp(len, 1, bw < (int)sizeof(bar) - 1 ? bw : (int)sizeof(bar) - 1);
			memset(bar, '#', (size_t)len);
			bar[len] = 0;
			put(y, x, xmax, style(t, ST_BAR), bar);
		}
		y++;
	}
	return y;
}

static int draw_slow_calls(const struct tui *t, const struct live_probe_view *pv, struct rect r,
			   int y, int ymax)
{
	int xmax = r.x + r.w;
	char a[32], b[32];
	if (!pv->nslow || y >= ymax)
		return y;
	putf(y++, r.x, xmax, style(t, ST_HEADER), "SLOW CALLS (> %s%s%s), newest first",
	     dur(pv->slow_threshold_ns, a, sizeof(a)),
	     pv->slow_threshold_note[0] ? ", " : "", pv->slow_threshold_note);
	for (size_t i = 0; i < pv->nslow && y < ymax; i++, y++) {
		const struct live_slow_call *c = &pv->slow[i];
		char lab[LABEL_MAX] = "";
		if (c->top_frame)
			tuistate_frame_label(t->view, c->top_frame, lab, sizeof(lab));
		uint64_t now = t->view->now_ns;
		double ago = now > c->end_ns ? (double)(now - c->end_ns) / 1e9 : 0;
		int x = putf(y, r.x, xmax, 0, "  %7s  tid %-7u %4u samples  %6s ago  ",
			     duration_format(c->duration_ns, a, sizeof(a)), c->tid, c->samples,
			     elapsed(ago, b, sizeof(b)));
		if (lab[0])
			put_label(t, &(struct pen){.y = y, .x = x, .xmax = xmax}, lab, false);
		/* With off-CPU recording: where the call's time went, on the
		 * next line. */
		char split[512];
		if (live_slow_call_split(t->view, c, split, sizeof(split))[0] && y + 1 < ymax)
			putf(++y, r.x + 11, xmax, style(t, ST_HINT), "%s", split);
	}
	return y;
}

static void draw_probes(struct tui *t)
{
	const struct live_view *v = t->view;
	size_t n = v ? v->nprobes : 0;
	char pos[32];
	struct panel p;
	if (!panel_open(t, t->lay.probes, FOCUS_PROBES, "PROBE LATENCY",
			list_position(t->probe_sel, n, pos, sizeof(pos)), &p))
		return;
	const struct rect r = p.r;
	int y = p.y, ymax = p.ymax, xmax = p.xmax;
	if (!n) {
		if (y < ymax)
			put(y, r.x + 2, xmax, style(t, ST_HINT),
			    "no probes: type : trace FUNC to add a probe");
		return;
	}
	bool shown[NPROBE_COLS];
	int name_w;
	probe_cols_fit(r.w, shown, &name_w);
	if (y < ymax) {
		int x = putf(y, r.x, xmax, style(t, ST_HEADER), "%-*s ", name_w, "PROBE");
		for (size_t c = 0; c < NPROBE_COLS; c++)
			if (shown[c])
				x = putf(y, x, xmax, style(t, ST_HEADER), "%*s",
					 probe_cols[c].width, probe_cols[c].head);
		y++;
	}
	/* Probe rows take at most half the room; the rest shows the details
	 * of the selected one. */
	int list_h = tuilayout_clamp((int)n, 1, (ymax - y) / 2 > 1 ? (ymax - y) / 2 : 1);
	scroll_follow(t->probe_sel, n, (size_t)list_h, &t->probe_top);
	for (size_t i = t->probe_top; i < n && i < t->probe_top + (size_t)list_h && y < ymax; i++)
		draw_probe_row(t, r, y++, i, shown, name_w);
	const struct live_probe_view *pv = &v->probes[t->probe_sel];
	if (y < ymax) {
		char a[32] = "";
		if (pv->slow_threshold_ns)
			duration_format(pv->slow_threshold_ns, a, sizeof(a));
		char name[LABEL_MAX];
		printable_copy(name, sizeof(name), pv->name);
		putf(y++, r.x, xmax, style(t, ST_HEADER), "%s: latency in the window%s%s%s%s%s", name,
		     a[0] ? ", slow > " : "", a,
		     a[0] && pv->slow_threshold_note[0] ? " (" : "", a[0] ? pv->slow_threshold_note : "",
		     a[0] && pv->slow_threshold_note[0] ? ")" : "");
	}
	int slow_rows = pv->nslow ? tuilayout_clamp((int)pv->nslow + 1, 0, (ymax - y) / 2) : 0;
	y = draw_histogram(t, pv, r, y, ymax - slow_rows);
	draw_slow_calls(t, pv, r, y, ymax);
}

static void draw_separators(const struct tui *t)
{
	const struct layout *l = &t->lay;
	attrset(style(t, ST_BORDER));
	if (l->vsep_x >= 0)
		mvvline(l->vsep_y, l->vsep_x, ACS_VLINE, l->vsep_h);
	if (l->vsep2_x >= 0)
		mvvline(l->vsep2_y, l->vsep2_x, ACS_VLINE, l->vsep2_h);
	attrset(A_NORMAL);
}

/* ---- message line and prompts ------------------------------------------------ */

/* The line editor's text, scrolled so the cursor shows; leaves the cursor
 * position in *cx. */
static void draw_prompt(const struct tui *t, int y, int xmax, int *cx)
{
	const char *lead = t->prompt == PROMPT_SEARCH ? "/" : ":";
	int x = put(y, 0, xmax, A_BOLD, lead);
	int room = xmax - x - 1;
	size_t start = t->edit.cur > (size_t)room ? t->edit.cur - (size_t)room : 0;
	char vis[4 * EDIT_MAX], before[EDIT_MAX];
	printable_copy(vis, sizeof(vis), t->edit.buf + start);
	put(y, x, xmax, A_NORMAL, vis);
	/* the cursor after what precedes it, as drawn (escapes are wider) */
	snprintf(before, sizeof(before), "%.*s", (int)(t->edit.cur - start), t->edit.buf + start);
	*cx = x + (int)strlen(printable_copy(vis, sizeof(vis), before));
}

/* With no other message, the line tells where the search stands. */
static void search_status(const struct tui *t, char *buf, size_t size, bool *err)
{
	size_t k, m = tuitree_matches(tuistate_tree(t), &k);
	*err = m == 0;
	if (!m)
		snprintf(buf, size, "no match for '%s'%s", t->search,
			 tuitree_zoom_depth(tuistate_tree(t)) ? " under the zoom (Z: zoom out)" : "");
	else if (k)
		snprintf(buf, size, "match %zu of %zu for '%s'%s   (n/N: next/previous, Esc: clear)",
			 k, m, t->search, t->search_wrapped ? " (wrapped)" : "");
	else
		snprintf(buf, size, "%zu match%s for '%s'   (n/N: next/previous, Esc: clear)", m,
			 m == 1 ? "" : "es", t->search);
}

/* The function of the selected row in the focused panel (tree or hottest
 * functions), or 0. */
static uint32_t selected_function(const struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v)
		return 0;
	if (t->focus == FOCUS_HOT)
		return t->hot_sel < v->nhot ? v->hot[t->hot_sel].frame : 0;
	struct tuitree_row row;
	if (t->focus != FOCUS_FLAME || tuitree_selected(tuistate_tree(t)) < 0 ||
	    !tuitree_row(tuistate_tree(t), (size_t)tuitree_selected(tuistate_tree(t)), &row))
		return 0;
	return row.node->frame;
}

/* The detail line: where the selected function spends most of its samples,
 * "FUNCTION  hottest line FILE:LINE (N% of its samples)". False when no
 * line is known (no debug info, a kernel function, the process root). */
static bool selected_detail(const struct tui *t, char *buf, size_t size)
{
	const struct live_view *v = t->view;
	uint32_t fn = selected_function(t);
	if (!fn || fn >= v->nlines || !v->lines[fn].frame || !v->flame)
		return false;
	const struct live_line *ln = &v->lines[fn];
	const struct frame *f = frames_get(v->flame->frames, ln->frame);
	if (!f || !f->line)
		return false;
	const char *slash = strrchr(f->file, '/');
	char lab[LABEL_MAX], raw[LABEL_MAX + 2 * MSG_MAX];
	tuistate_frame_label(v, fn, lab, sizeof(lab));
	snprintf(raw, sizeof(raw), "%s  hottest line %s:%u (%.1f%% of its samples)", lab,
		 slash ? slash + 1 : f->file[0] ? f->file : "??", f->line,
		 pct(ln->weight, ln->total));
	printable_copy(buf, size, raw);
	return true;
}

static void draw_message(const struct tui *t, int *cx)
{
	const struct rect r = t->lay.msg;
	int xmax = r.w - 1; /* the bottom-right cell cannot be written safely */
	*cx = -1;
	if (t->prompt != PROMPT_NONE) {
		draw_prompt(t, r.y, xmax, cx);
		return;
	}
	if (t->msg_kind != MSG_NONE) {
		put(r.y, 0, xmax, t->msg_kind == MSG_ERROR ? style(t, ST_ERROR) : A_NORMAL, t->msg);
		return;
	}
	if (t->search) {
		char buf[MSG_MAX];
		bool err;
		search_status(t, buf, sizeof(buf), &err);
		put(r.y, 0, xmax, err ? style(t, ST_ERROR) : A_NORMAL, buf);
		return;
	}
	char detail[MSG_MAX];
	if (selected_detail(t, detail, sizeof(detail))) {
		static const char hint[] = "   ? help";
		int room = xmax - (int)strlen(hint);
		clip(detail, room > 0 ? room : xmax);
		int x = put(r.y, 0, xmax, A_NORMAL, detail);
		put_right(r.y, x, xmax, style(t, ST_HINT), hint);
		return;
	}
	put(r.y, 0, xmax, style(t, ST_HINT),
	    "? help  / search  : command  Tab focus  z zoom  i invert  p pause  q quit");
}

/* ---- the explorer pane ------------------------------------------------------- */

/* A source line with tabs as spaces (8 columns), printable. */
static void source_text(const char *s, char *buf, size_t size)
{
	size_t o = 0, col = 0;
	for (; s && *s && o + 1 < size; s++) {
		if (*s == '\t') {
			do
				buf[o++] = ' ';
			while (++col % 8 && o + 1 < size);
		} else {
			buf[o++] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
			col++;
		}
	}
	buf[o] = 0;
}

static void draw_explore(struct tui *t)
{
	const struct tuiexplore *e = t->explore;
	int y0 = t->lay.status.y + t->lay.status.h, y1 = t->lay.msg.y; /* rows [y0, y1) */
	int xmax = COLS;
	for (int y = y0; y < y1; y++)
		fill(y, 0, xmax, A_NORMAL);
	if (y1 - y0 < 4)
		return;
	char lab[LABEL_MAX];
	if (!e->built) {
		putf(y0, 0, xmax, style(t, ST_TITLE_FOCUS), " explore %s ", e->at.func);
		put(y0 + 2, 2, xmax, style(t, ST_ERROR), e->err);
		put(y1 - 1, 0, xmax, style(t, ST_HINT), "Backspace back  x/Esc close");
		return;
	}
	const struct structure *s = &e->s;
	printable_copy(lab, sizeof(lab), s->function);
	fill(y0, 0, xmax, style(t, ST_TITLE_FOCUS));
	int x = putf(y0, 0, xmax, style(t, ST_TITLE_FOCUS), " explore %s  (%s)  %d blocks, %d loop%s",
		     lab, strrchr(s->binary, '/') ? strrchr(s->binary, '/') + 1 : s->binary,
		     s->nblocks, s->nloops, s->nloops == 1 ? "" : "s");
	putf(y0, x, xmax, style(t, ST_TITLE_FOCUS), "   %llu samples held with it on the stack",
	     (unsigned long long)e->samples);
	putf(y0 + 1, 0, xmax, style(t, ST_HEADER), "  LINE SITES BR   SELF  TOTAL  %-30s %s", "PROBES (exact)",
	     s->source_path ? "SOURCE" : "SOURCE (not found: instructions)");
	int body = y1 - y0 - 3;
	size_t n = tuiexplore_nrows(e);
	struct tuiexplore *me = t->explore;
	if (me->cursor >= (int)n)
		me->cursor = n ? (int)n - 1 : 0;
	if (me->cursor < me->top)
		me->top = me->cursor;
	if (me->cursor >= me->top + body)
		me->top = me->cursor - body + 1;
	for (int r = 0; r < body && (size_t)(me->top + r) < n; r++) {
		struct tuiexplore_row row;
		if (!tuiexplore_row(e, (size_t)(me->top + r), &row))
			break;
		int y = y0 + 2 + r;
		bool sel = me->top + r == me->cursor;
		attr_t a = sel ? style(t, ST_SEL) : A_NORMAL;
		if (sel)
			fill(y, 0, xmax, a);
		const struct structure_line *l = &s->lines[row.line];
		char text[LABEL_MAX];
		if (row.insn >= 0) {
			const struct structure_insn *si = &s->insns[row.insn];
			printable_copy(text, sizeof(text), si->i.text);
			putf(y, 0, xmax, sel ? a : style(t, ST_DIM), "%51s %#llx  %-34s B%d%s", "",
			     (unsigned long long)si->i.addr, text, si->block,
			     si->refused ? "  (no probe here)" : "");
			continue;
		}
		char sites[8] = "", br[8] = "", probes[96];
		if (l->sites)
			snprintf(sites, sizeof(sites), "%d%s", l->sites, l->refused ? "!" : "");
		if (l->branches)
			snprintf(br, sizeof(br), "%d%s", l->branches, l->branch_refused ? "!" : "");
		tuiexplore_line_probes(t, l->line, probes, sizeof(probes));
		const struct line_samples *c = e->counts ? &e->counts[row.line] : NULL;
		double share = c && e->samples ? 100.0 * (double)c->total / (double)e->samples : 0;
		x = putf(y, 0, xmax, a, "%6u %5s %2s ", l->line, sites, br);
		if (c && c->total)
			x = putf(y, x, xmax, sel ? a : heat(t, share) | a, "%6llu %6llu  ",
				 (unsigned long long)c->self, (unsigned long long)c->total);
		else
			x = put(y, x, xmax, a, "               ");
		x = putf(y, x, xmax, sel ? a : (probes[0] ? style(t, ST_VALUE) : a), "%-30.30s ", probes);
		if (l->text) {
			source_text(l->text, text, sizeof(text));
			put(y, x, xmax, a, text);
		} else if (!s->source_path) {
			/* no source: the line's first instruction */
			for (int i = 0; i < s->ninsns; i++)
				if (s->insns[i].line == l->line && s->insns[i].file && s->file &&
				    !strcmp(s->insns[i].file, s->file)) {
					printable_copy(text, sizeof(text), s->insns[i].i.text);
					putf(y, x, xmax, a | style(t, ST_DIM), "%#llx %s%s",
					     (unsigned long long)s->insns[i].i.addr, text,
					     l->insns > 1 ? " ..." : "");
					break;
				}
		}
	}
	put(y1 - 1, 0, xmax, style(t, ST_HINT),
	    "l line probe  b branch  w/W sample-when (taken/not)  c capture  u untrace  a asm  "
	    "Enter callee  p caller  Bksp back  x close");
}

/* ---- the overlay's box ------------------------------------------------------- */

static void draw_overlay(const struct tui *t)
{
	size_t longest = strlen(t->otitle) + 8;
	if (longest < 44) /* room for the footer */
		longest = 44;
	for (size_t i = 0; i < t->nolines; i++)
		longest = strlen(t->olines[i]) > longest ? strlen(t->olines[i]) : longest;
	int w = tuilayout_clamp((int)longest + 4, 20, COLS - 2);
	int bh = tuilayout_clamp((int)t->nolines, 1, tuioverlay_body_height());
	int h = bh + 2, y0 = (LINES - h) / 2, x0 = (COLS - w) / 2;
	if (w < 4 || h < 3 || y0 < 0)
		return;
	for (int y = y0; y < y0 + h; y++)
		fill(y, x0, x0 + w, A_NORMAL);
	attrset(style(t, ST_BORDER));
	mvaddch(y0, x0, ACS_ULCORNER);
	mvhline(y0, x0 + 1, ACS_HLINE, w - 2);
	mvaddch(y0, x0 + w - 1, ACS_URCORNER);
	mvvline(y0 + 1, x0, ACS_VLINE, h - 2);
	mvvline(y0 + 1, x0 + w - 1, ACS_VLINE, h - 2);
	mvaddch(y0 + h - 1, x0, ACS_LLCORNER);
	mvhline(y0 + h - 1, x0 + 1, ACS_HLINE, w - 2);
	mvaddch(y0 + h - 1, x0 + w - 1, ACS_LRCORNER);
	attrset(A_NORMAL);
	putf(y0, x0 + 2, x0 + w - 2, style(t, ST_TITLE), " %s ", t->otitle);
	for (int i = 0; i < bh && t->otop + (size_t)i < t->nolines; i++)
		put(y0 + 1 + i, x0 + 2, x0 + w - 2, A_NORMAL, t->olines[t->otop + (size_t)i]);
	char foot[96];
	size_t last = t->otop + (size_t)bh < t->nolines ? t->otop + (size_t)bh : t->nolines;
	snprintf(foot, sizeof(foot), " q/Esc: close%s  %zu-%zu of %zu ",
		 t->nolines > (size_t)bh ? "  Up/Down: scroll" : "", t->otop + 1, last, t->nolines);
	put_right(y0 + h - 1, x0 + 2, x0 + w - 2, style(t, ST_HINT), foot);
}

/* ---- the whole screen -------------------------------------------------------- */

/* Follows the terminal's size even when top did not pass the KEY_RESIZE
 * along (its poll may not wake up on SIGWINCH). */
static void size_check(void)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 && ws.ws_col > 0 &&
	    (ws.ws_row != LINES || ws.ws_col != COLS))
		resizeterm(ws.ws_row, ws.ws_col);
}

void tuidraw_redraw(struct tui *t)
{
	size_check();
	erase();
	int cx = -1;
	if (LINES < 6 || COLS < 30) {
		put(0, 0, COLS - 1, A_BOLD, "sonde top: terminal too small");
	} else {
		tuilayout_compute(t);
		draw_status(t);
		if (t->explore) {
			draw_explore(t);
		} else {
			draw_flame(t);
			draw_hot(t);
			draw_probes(t);
			draw_separators(t);
		}
		draw_message(t, &cx);
		if (t->overlay != OVERLAY_NONE)
			draw_overlay(t);
	}
	if (cx >= 0 && t->overlay == OVERLAY_NONE) {
		curs_set(1);
		move(t->lay.msg.y, cx < COLS ? cx : COLS - 1);
	} else {
		curs_set(0);
	}
	refresh();
}
