/* tui — the ncurses interface of `sonde top`; see tui.h.
 *
 * Structure: the state of the screen (struct tui), then small helpers that
 * draw clipped text, the layout, one function per panel (status, call tree,
 * hottest functions, probes, message line, overlays), then the key handling
 * (normal keys per focused panel, the line editor of the prompts, overlays).
 * The call tree's navigation state (expansion, selection, zoom, search,
 * all kept by path) is tuitree's job; this file only draws it and maps keys.
 *
 * Everything is drawn on stdscr: erase() + draw + refresh() every time, so
 * curses sends only what changed (no clear(), no flicker). */
#define _GNU_SOURCE
#include "tui.h"

#include <curses.h>
#include <locale.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "errbuf.h"
#include "liverun.h"
#include "printable.h"
#include "tuitree.h"
#include "util.h"

#define REFRESH_MIN_S 0.1
#define REFRESH_MAX_S 60.0
#define HISTORY_MAX 32
#define EDIT_MAX 1024
#define LABEL_MAX 512
#define MSG_MAX 512
#define WIDE_COLS 140   /* from this width the tree gets the left 60% */
#define SPLIT_COLS 100  /* stacked: hot and probes side by side from here */
#define KEY_ESC 27
#define KEY_CTRL(c) ((c) & 0x1f)

enum focus { FOCUS_FLAME, FOCUS_HOT, FOCUS_PROBES, FOCUS_COUNT };
enum prompt { PROMPT_NONE, PROMPT_SEARCH, PROMPT_COMMAND };
enum overlay { OVERLAY_NONE, OVERLAY_HELP, OVERLAY_TEXT };
enum msg_kind { MSG_NONE, MSG_INFO, MSG_ERROR };

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

struct rect {
	int y, x, h, w;
};

struct layout {
	struct rect status, flame, hot, probes, msg;
	int vsep_x, vsep_y, vsep_h;     /* a vertical separator (x < 0: none) */
	int vsep2_x, vsep2_y, vsep2_h;
};

struct lineedit {
	char buf[EDIT_MAX];
	size_t len, cur;
};

struct tui {
	struct tui_options o;
	SCREEN *screen;
	bool colors;
	double refresh_s;
	bool paused;
	bool refresh_wanted;
	const struct live_view *view;  /* kept until the next tui_draw */
	struct liverun *run;           /* attached to (tui_attach), or NULL */
	struct live_view *owned;       /* attached: the view drawn, built by us */

	/* call tree: [0] callees (normal), [1] inverted (callers) */
	struct tuitree *tree[2];
	bool inverted;
	struct flame_tree *inv;        /* inverted tree of `view`, owned */

	enum focus focus;
	size_t hot_sel, hot_top;
	uint32_t hot_sel_frame;        /* keeps the hot cursor on its function */
	size_t probe_sel, probe_top;
	char probe_sel_name[128];

	char *search;                  /* NULL: no search */
	bool search_exact;
	char *search_saved;            /* restored when the prompt is cancelled */
	bool search_saved_exact;
	bool search_wrapped;

	enum prompt prompt;
	struct lineedit edit;
	char *history[HISTORY_MAX];    /* oldest first */
	size_t nhistory;
	size_t hist_pos;               /* == nhistory: the line being typed */
	char hist_stash[EDIT_MAX];

	enum msg_kind msg_kind;
	char msg[MSG_MAX];

	enum overlay overlay;
	char **olines;
	size_t nolines, otop;
	char otitle[96];

	struct layout lay;
};

/* ---- styles ------------------------------------------------------------------ */

enum { CP_STATUS = 1, CP_DROPS, CP_TITLE, CP_TITLE_FOCUS, CP_HOT, CP_WARM, CP_MATCH,
       CP_ZOOM, CP_ERROR, CP_BAR, CP_LABEL, CP_PAUSED };

static void colors_init(struct tui *t)
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

static void frame_label(const struct live_view *v, uint32_t frame, char *buf, size_t size)
{
	char raw[LABEL_MAX];
	if (v && v->flame)
		flame_frame_label(v->flame, frame, true, raw, sizeof(raw));
	else
		snprintf(raw, sizeof(raw), "#%u", frame);
	printable_copy(buf, size, raw);
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

static void set_msg(struct tui *t, enum msg_kind k, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_msg(struct tui *t, enum msg_kind k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
	t->msg_kind = k;
}

/* ---- the call tree's data ---------------------------------------------------- */

static struct tuitree *cur_tree(const struct tui *t)
{
	return t->tree[t->inverted];
}

static const struct flame_tree *cur_flame(const struct tui *t)
{
	if (t->inverted)
		return t->inv;
	return t->view ? t->view->flame : NULL;
}

/* Adds every stack that ends in a node with self weight, reversed (leaf
 * first), to the inverted tree. path holds the frames from the root's child
 * down to the node being visited. */
struct inverter {
	struct flame_tree *inv;
	uint32_t *path, *rev;
	size_t cap;
};

static enum flame_step invert_node(struct flame_node *n, size_t depth, void *arg)
{
	struct inverter *iv = arg;
	if (depth == 0)
		return FLAME_STEP_INTO;
	if (depth > iv->cap) {
		iv->cap = depth * 2;
		iv->path = xrealloc(iv->path, iv->cap * sizeof(*iv->path));
		iv->rev = xrealloc(iv->rev, iv->cap * sizeof(*iv->rev));
	}
	iv->path[depth - 1] = n->frame;
	if (n->self > 0) {
		for (size_t k = 0; k < depth; k++)
			iv->rev[k] = iv->path[depth - 1 - k];
		flame_add(iv->inv, iv->rev, depth, n->self);
	}
	return FLAME_STEP_INTO;
}

static struct flame_tree *invert_tree(const struct flame_tree *ft)
{
	struct inverter iv = {.inv = flame_new(ft->frames)};
	flame_visit(ft->root, &(struct flame_visitor){.enter = invert_node}, &iv);
	free(iv.path);
	free(iv.rev);
	return iv.inv;
}

/* Gives the trees of the current view to the tree states. The inverted tree
 * is only built while it is shown. */
static void trees_sync(struct tui *t)
{
	const struct flame_tree *ft = t->view ? t->view->flame : NULL;
	tuitree_set_tree(t->tree[0], ft);
	tuitree_set_tree(t->tree[1], NULL);
	flame_free(t->inv);
	t->inv = NULL;
	if (t->inverted && ft) {
		t->inv = invert_tree(ft);
		tuitree_set_tree(t->tree[1], t->inv);
	}
}

static void search_apply(struct tui *t, const char *pattern, bool exact)
{
	for (int i = 0; i < 2; i++)
		tuitree_search(t->tree[i], pattern, exact);
}

static void search_set(struct tui *t, const char *pattern, bool exact)
{
	free(t->search);
	t->search = pattern && *pattern ? xstrdup(pattern) : NULL;
	t->search_exact = exact;
	search_apply(t, t->search, exact);
}

/* ---- layout ------------------------------------------------------------------ */

/* Rows the probe panel would like: title, header, one per probe, the
 * focused probe's histogram and slow calls. */
static int probes_wanted(const struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v || !v->nprobes)
		return 3;
	int buckets = 0;
	const struct live_probe_view *pv = &v->probes[t->probe_sel < v->nprobes ? t->probe_sel : 0];
	for (int k = 0; k < LATENCY_HIST_BUCKETS; k++)
		buckets += pv->hist.buckets[k] != 0;
	int slow = pv->nslow ? (int)pv->nslow + 1 : 0;
	return 2 + (int)v->nprobes + 1 + buckets + slow;
}

static int clampi(int x, int lo, int hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

/* Splits `avail` rows between hot (first) and probes. */
static void split_side(const struct tui *t, int avail, int *hot_h, int *probes_h)
{
	int want = probes_wanted(t);
	int most = t->focus == FOCUS_PROBES ? avail * 2 / 3 : avail / 2;
	if (t->focus == FOCUS_HOT)
		most = avail / 3;
	*probes_h = clampi(want, 3, most > 3 ? most : 3);
	if (*probes_h > avail)
		*probes_h = avail;
	*hot_h = avail - *probes_h;
}

static void layout_compute(struct tui *t)
{
	struct layout *l = &t->lay;
	int rows = LINES, cols = COLS;
	int sh = rows >= 12 ? 2 : 1;
	l->status = (struct rect){0, 0, sh, cols};
	l->msg = (struct rect){rows - 1, 0, 1, cols};
	int by = sh, bh = rows - sh - 1;
	l->vsep_x = l->vsep2_x = -1;
	if (cols >= WIDE_COLS) {
		int fw = cols * 60 / 100;
		l->flame = (struct rect){by, 0, bh, fw};
		l->vsep_x = fw, l->vsep_y = by, l->vsep_h = bh;
		int hot_h, probes_h;
		split_side(t, bh, &hot_h, &probes_h);
		l->hot = (struct rect){by, fw + 1, hot_h, cols - fw - 1};
		l->probes = (struct rect){by + hot_h, fw + 1, probes_h, cols - fw - 1};
		return;
	}
	/* On a short terminal the focused panel gets the room. */
	int fh = bh * (t->focus == FOCUS_FLAME || bh >= 36 ? 55 : 40) / 100;
	if (fh < 4)
		fh = bh < 4 ? bh : 4;
	int lh = bh - fh, ly = by + fh;
	l->flame = (struct rect){by, 0, fh, cols};
	if (cols >= SPLIT_COLS) {
		/* Without probes their panel only needs its hint. */
		int hw = t->view && t->view->nprobes ? cols * 45 / 100 : cols - 50;
		l->hot = (struct rect){ly, 0, lh, hw};
		l->vsep2_x = hw, l->vsep2_y = ly, l->vsep2_h = lh;
		l->probes = (struct rect){ly, hw + 1, lh, cols - hw - 1};
		return;
	}
	int hot_h, probes_h;
	split_side(t, lh, &hot_h, &probes_h);
	l->hot = (struct rect){ly, 0, hot_h, cols};
	l->probes = (struct rect){ly + hot_h, 0, probes_h, cols};
}

/* ---- status lines ------------------------------------------------------------ */

/* Draws "label value" and a gap (narrower on narrow terminals); returns the
 * column after them. */
static int put_pair(const struct tui *t, int y, int x, int xmax, attr_t base, const char *label,
		    const char *value)
{
	int need = (int)strlen(value) + (label && *label ? (int)strlen(label) + 1 : 0);
	if (x + need > xmax) /* a value is shown whole or not at all */
		return xmax;
	if (label && *label) {
		/* Colour pairs do not combine: on the status bar labels keep its colour. */
		x = put(y, x, xmax, base ? base : style(t, ST_LABEL), label);
		x = put(y, x, xmax, base, " ");
	}
	x = put(y, x, xmax, base | A_BOLD, value);
	return put(y, x, xmax, base, COLS >= 120 ? "   " : "  ");
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
	if (room - gap >= 8)
		x = put_pair(t, r.y, x, xmax, bar, "", target);
	if (x + numbers - gap > xmax)
		return;
	x = put_pair(t, r.y, x, xmax, bar, "", ev);
	x = put_pair(t, r.y, x, xmax, bar, "", calls);
	put(r.y, x, xmax, s->drops ? style(t, ST_DROPS) : bar, drops);
}

/* Second line: what is shown and how. */
static void draw_status_view(struct tui *t, const struct live_status *s)
{
	int y = t->lay.status.y + 1, xmax = t->lay.status.w;
	char a[64], b[64];
	snprintf(b, sizeof(b), "%.1fs", t->refresh_s);
	if (!s) {
		put_pair(t, y, 0, xmax, 0, "refresh", b);
		return;
	}
	int x = put_pair(t, y, 0, xmax, 0, "window", s->window);
	x = put_pair(t, y, x, xmax, 0, "view", s->view);
	if (s->window_weight > 0 && t->view) { /* the view's share of the window */
		char pct[32];
		snprintf(pct, sizeof(pct), "%.1f%% of the window", 100.0 * t->view->total / s->window_weight);
		x = put_pair(t, y, x, xmax, 0, "", pct);
	}
	x = put_pair(t, y, x, xmax, 0, "filter", s->filter);
	x = put_pair(t, y, x, xmax, 0, "refresh", b);
	x = put_pair(t, y, x, xmax, 0, "sampling", s->sampling);
	x = put_pair(t, y, x, xmax, 0, "up", elapsed(s->elapsed_s, b, sizeof(b)));
	x = put_pair(t, y, x, xmax, 0, "samples", human((double)s->samples, a, sizeof(a)));
	if (s->drops && s->drops_detail[0])
		put(y, x, xmax, style(t, ST_ERROR), s->drops_detail);
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

/* A list panel's title, with "selected/count" on the right. */
static void draw_list_title(const struct tui *t, struct rect r, enum focus f, const char *title,
			    size_t sel, size_t n)
{
	char right[32] = "";
	if (n)
		snprintf(right, sizeof(right), "%zu/%zu", sel + 1, n);
	draw_title(t, r, r.y, f, title, right);
}

/* Draws a label, the parts matching the search highlighted. */
static int put_label(const struct tui *t, int y, int x, int xmax, attr_t a, const char *label,
		     bool match)
{
	char vis[LABEL_MAX];
	printable_copy(vis, sizeof(vis), label);
	clip(vis, xmax - x);
	attr_t hl = style(t, ST_MATCH);
	if (!match || !t->search)
		return put(y, x, xmax, a, vis);
	if (t->search_exact)
		return put(y, x, xmax, hl, vis);
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
	return put(y, x, xmax, a, p);
}

static attr_t heat(const struct tui *t, double p)
{
	return p >= 5.0 ? style(t, ST_HOT) : p >= 0.5 ? style(t, ST_WARM) : A_NORMAL;
}

/* The zoom breadcrumb: "zoom: all > main > run   45.2% of all"; a path too
 * long for the line keeps its deepest part, which says where we are. */
static void draw_breadcrumb(const struct tui *t, struct rect r, int y)
{
	const struct flame_tree *ft = cur_flame(t);
	const struct flame_node *z = tuitree_display_root(cur_tree(t));
	const struct flame_node *chain[256];
	size_t depth = 0;
	for (const struct flame_node *n = z; n && n->parent && depth < 256; n = n->parent)
		chain[depth++] = n;
	char tmp[4096] = "all", lab[LABEL_MAX];
	size_t len = 3;
	while (depth-- > 0 && len < sizeof(tmp) - 1) {
		frame_label(t->view, chain[depth]->frame, lab, sizeof(lab));
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
	if (!tuitree_row(cur_tree(t), i, &row))
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
	frame_label(t->view, row.node->frame, lab, sizeof(lab));
	put_label(t, y, x, xmax, sel, lab, row.match);
}

static void draw_flame(struct tui *t)
{
	const struct rect r = t->lay.flame;
	if (r.h <= 0)
		return;
	struct tuitree *tt = cur_tree(t);
	const struct flame_node *root = tuitree_display_root(tt);
	size_t n = tuitree_nrows(tt);
	char right[96] = "", a[32];
	if (root && t->view && !t->view->fractional)
		snprintf(right, sizeof(right), "%s samples",
			 human((double)root->total, a, sizeof(a)));
	if (n)
		snprintf(right + strlen(right), sizeof(right) - strlen(right), "%srow %ld/%zu",
			 right[0] ? "   " : "", tuitree_selected(tt) + 1, n);
	draw_title(t, r, r.y, FOCUS_FLAME,
		   t->inverted ? "CALL TREE (inverted: callers below each function)" : "CALL TREE",
		   right);
	int y = r.y + 1, ymax = r.y + r.h, xmax = r.x + r.w;
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
	const struct rect r = t->lay.hot;
	if (r.h <= 0)
		return;
	const struct live_view *v = t->view;
	size_t n = v ? v->nhot : 0;
	draw_list_title(t, r, FOCUS_HOT, "HOTTEST FUNCTIONS", t->hot_sel, n);
	int y = r.y + 1, ymax = r.y + r.h, xmax = r.x + r.w;
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
		frame_label(v, h->frame, lab, sizeof(lab));
		put_label(t, y, x, xmax, sel, lab, false);
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
			len = clampi(len, 1, bw < (int)sizeof(bar) - 1 ? bw : (int)sizeof(bar) - 1);
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
			frame_label(t->view, c->top_frame, lab, sizeof(lab));
		uint64_t now = t->view->now_ns;
		double ago = now > c->end_ns ? (double)(now - c->end_ns) / 1e9 : 0;
		int x = putf(y, r.x, xmax, 0, "  %7s  tid %-7u %4u samples  %6s ago  ",
			     duration_format(c->duration_ns, a, sizeof(a)), c->tid, c->samples,
			     elapsed(ago, b, sizeof(b)));
		if (lab[0])
			x = put_label(t, y, x, xmax, 0, lab, false);
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
	const struct rect r = t->lay.probes;
	if (r.h <= 0)
		return;
	const struct live_view *v = t->view;
	size_t n = v ? v->nprobes : 0;
	draw_list_title(t, r, FOCUS_PROBES, "PROBE LATENCY", t->probe_sel, n);
	int y = r.y + 1, ymax = r.y + r.h, xmax = r.x + r.w;
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
	int list_h = clampi((int)n, 1, (ymax - y) / 2 > 1 ? (ymax - y) / 2 : 1);
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
	int slow_rows = pv->nslow ? clampi((int)pv->nslow + 1, 0, (ymax - y) / 2) : 0;
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
	size_t k, m = tuitree_matches(cur_tree(t), &k);
	*err = m == 0;
	if (!m)
		snprintf(buf, size, "no match for '%s'%s", t->search,
			 tuitree_zoom_depth(cur_tree(t)) ? " under the zoom (Z: zoom out)" : "");
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
	if (t->focus != FOCUS_FLAME || tuitree_selected(cur_tree(t)) < 0 ||
	    !tuitree_row(cur_tree(t), (size_t)tuitree_selected(cur_tree(t)), &row))
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
	frame_label(v, fn, lab, sizeof(lab));
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

/* ---- overlays ---------------------------------------------------------------- */

static const char *const help_lines[] = {
	"Call tree (percentages of the shown root: the whole tree, or the zoom)",
	"  Up/Down  j/k        move",
	"  PgUp/PgDn Home/End  a page up/down, first/last row",
	"  Right  +  l         expand; again: go to the first child",
	"  Left  -  h          collapse; again: go to the parent",
	"  Enter  Space        expand / collapse",
	"  e                   expand everything below the selection",
	"  E                   collapse everything",
	"  z                   zoom into the selected function",
	"  Z  Backspace        zoom out: back to the previous zoom",
	"  i                   invert: leaf functions first, their callers below",
	"",
	"Search",
	"  /                   search function names (case-sensitive substring)",
	"  n  N                next / previous match (opens the tree to show it)",
	"  Esc                 clear the search",
	"",
	"Panels",
	"  Tab  Shift-Tab      focus: call tree -> hottest functions -> probes",
	"  Enter (hottest)     find that function in the call tree",
	"  Up/Down (probes)    choose the probe whose histogram and slow calls show",
	"  The bottom line shows the selected function's hottest source line",
	"  (where it ran, or the call it was in) when its binary has line info",
	"",
	"Display",
	"  p                   pause / resume (data keeps being gathered)",
	"  <  >                refresh twice as often / half as often (0.1s..60s)",
	"  :                   command prompt (Up/Down: history, Ctrl-U: clear)",
	"                      :help lists the commands, :help CMD explains one",
	"  ?                   this help",
	"  q                   quit",
};

static void overlay_free(struct tui *t)
{
	for (size_t i = 0; i < t->nolines; i++)
		free(t->olines[i]);
	free(t->olines);
	t->olines = NULL;
	t->nolines = t->otop = 0;
	t->overlay = OVERLAY_NONE;
}

static void overlay_add(struct tui *t, const char *s, size_t n)
{
	t->olines = xrealloc(t->olines, (t->nolines + 1) * sizeof(*t->olines));
	char *line = xmalloc(n * 8 + 1), *o = line;
	for (size_t i = 0; i < n; i++) { /* tabs to spaces: one byte, one column */
		if (s[i] == '\t') {
			do
				*o++ = ' ';
			while ((o - line) % 8);
		} else {
			*o++ = (unsigned char)s[i] < 32 ? '?' : s[i];
		}
	}
	*o = 0;
	t->olines[t->nolines++] = line;
}

static void overlay_open_text(struct tui *t, const char *title, const char *text)
{
	overlay_free(t);
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		overlay_add(t, p, n);
		p += n + (e != NULL);
	}
	snprintf(t->otitle, sizeof(t->otitle), "%s", title);
	t->overlay = OVERLAY_TEXT;
}

static void overlay_open_help(struct tui *t)
{
	overlay_free(t);
	for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++)
		overlay_add(t, help_lines[i], strlen(help_lines[i]));
	snprintf(t->otitle, sizeof(t->otitle), "sonde top: keys");
	t->overlay = OVERLAY_HELP;
}

static int overlay_body_height(void)
{
	int h = LINES - 4;
	return h > 1 ? h - 2 : 1;
}

static void draw_overlay(const struct tui *t)
{
	size_t longest = strlen(t->otitle) + 8;
	if (longest < 44) /* room for the footer */
		longest = 44;
	for (size_t i = 0; i < t->nolines; i++)
		longest = strlen(t->olines[i]) > longest ? strlen(t->olines[i]) : longest;
	int w = clampi((int)longest + 4, 20, COLS - 2);
	int bh = clampi((int)t->nolines, 1, overlay_body_height());
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

static void redraw(struct tui *t)
{
	size_check();
	erase();
	int cx = -1;
	if (LINES < 6 || COLS < 30) {
		put(0, 0, COLS - 1, A_BOLD, "sonde top: terminal too small");
	} else {
		layout_compute(t);
		draw_status(t);
		draw_flame(t);
		draw_hot(t);
		draw_probes(t);
		draw_separators(t);
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

/* Keeps the hot and probe cursors on the same function / probe when the
 * list changes. */
static void cursors_follow(struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v)
		return;
	for (size_t i = 0; i < v->nhot; i++)
		if (v->hot[i].frame == t->hot_sel_frame) {
			t->hot_sel = i;
			break;
		}
	if (t->hot_sel >= v->nhot)
		t->hot_sel = v->nhot ? v->nhot - 1 : 0;
	for (size_t i = 0; i < v->nprobes; i++)
		if (!strcmp(v->probes[i].name, t->probe_sel_name)) {
			t->probe_sel = i;
			break;
		}
	if (t->probe_sel >= v->nprobes)
		t->probe_sel = v->nprobes ? v->nprobes - 1 : 0;
}

static void cursors_commit(struct tui *t)
{
	const struct live_view *v = t->view;
	if (v && t->hot_sel < v->nhot)
		t->hot_sel_frame = v->hot[t->hot_sel].frame;
	if (v && t->probe_sel < v->nprobes)
		snprintf(t->probe_sel_name, sizeof(t->probe_sel_name), "%s",
			 v->probes[t->probe_sel].name);
}

/* ---- keys: the call tree, the lists ------------------------------------------ */

static int page_rows(const struct rect *r)
{
	return r->h > 4 ? r->h - 3 : 1;
}

static void tree_key(struct tui *t, int ch)
{
	struct tuitree *tt = cur_tree(t);
	long page = page_rows(&t->lay.flame);
	switch (ch) {
	case KEY_UP: case 'k': tuitree_move(tt, -1); break;
	case KEY_DOWN: case 'j': tuitree_move(tt, 1); break;
	case KEY_PPAGE: tuitree_move(tt, -page); break;
	case KEY_NPAGE: tuitree_move(tt, page); break;
	case KEY_HOME: case 'g': tuitree_select(tt, 0); break;
	case KEY_END: case 'G': tuitree_select(tt, (long)tuitree_nrows(tt) - 1); break;
	case KEY_RIGHT: case '+': case 'l':
		if (!tuitree_expand(tt))
			tuitree_select_first_child(tt);
		break;
	case KEY_LEFT: case '-': case 'h':
		if (!tuitree_collapse(tt))
			tuitree_select_parent(tt);
		break;
	case '\n': case '\r': case KEY_ENTER: case ' ':
		if (!tuitree_expand(tt))
			tuitree_collapse(tt);
		break;
	}
}

/* Moves a list cursor by a key; false when the key is not a move. */
static bool list_key(int ch, size_t n, size_t page, size_t *sel)
{
	if (!n)
		return ch == KEY_UP || ch == KEY_DOWN;
	size_t s = *sel;
	switch (ch) {
	case KEY_UP: case 'k': s = s ? s - 1 : 0; break;
	case KEY_DOWN: case 'j': s = s + 1 < n ? s + 1 : n - 1; break;
	case KEY_PPAGE: s = s > page ? s - page : 0; break;
	case KEY_NPAGE: s = s + page < n ? s + page : n - 1; break;
	case KEY_HOME: case 'g': s = 0; break;
	case KEY_END: case 'G': s = n - 1; break;
	default: return false;
	}
	*sel = s;
	return true;
}

/* Selects the first match from the selection on (the selection itself when
 * it matches), and says where it is. */
static void no_match(struct tui *t)
{
	set_msg(t, MSG_ERROR, "no match for '%s'%s", t->search,
		tuitree_zoom_depth(cur_tree(t)) ? " under the zoom (Z: zoom out)" : "");
}

static void search_jump(struct tui *t, int dir)
{
	struct tuitree *tt = cur_tree(t);
	size_t k;
	t->search_wrapped = false;
	if (dir == 0) {
		tuitree_matches(tt, &k);
		if (k)
			return;
		dir = 1;
	}
	if (tuitree_search_next(tt, dir, &t->search_wrapped) < 0)
		no_match(t);
}

static void hot_enter(struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v || t->hot_sel >= v->nhot)
		return;
	char lab[LABEL_MAX];
	if (v->flame)
		flame_frame_label(v->flame, v->hot[t->hot_sel].frame, true, lab, sizeof(lab));
	else
		return;
	search_set(t, lab, true);
	t->focus = FOCUS_FLAME;
	t->search_wrapped = false;
	if (tuitree_search_first(cur_tree(t)) < 0)
		no_match(t);
}

static void hot_key(struct tui *t, int ch)
{
	const struct live_view *v = t->view;
	size_t n = v ? v->nhot : 0;
	if (ch == '\n' || ch == '\r' || ch == KEY_ENTER) {
		hot_enter(t);
		return;
	}
	if (list_key(ch, n, (size_t)page_rows(&t->lay.hot), &t->hot_sel))
		cursors_commit(t);
}

static void probes_key(struct tui *t, int ch)
{
	size_t n = t->view ? t->view->nprobes : 0;
	if (list_key(ch, n, 1, &t->probe_sel))
		cursors_commit(t);
}

/* ---- keys: prompts ----------------------------------------------------------- */

static void prompt_open(struct tui *t, enum prompt p)
{
	t->prompt = p;
	t->edit.len = t->edit.cur = 0;
	t->edit.buf[0] = 0;
	t->hist_pos = t->nhistory;
	if (p == PROMPT_SEARCH) {
		free(t->search_saved);
		t->search_saved = t->search ? xstrdup(t->search) : NULL;
		t->search_saved_exact = t->search_exact;
	}
}

static void edit_set(struct lineedit *e, const char *s)
{
	snprintf(e->buf, sizeof(e->buf), "%s", s);
	e->len = e->cur = strlen(e->buf);
}

static void edit_insert(struct lineedit *e, char c)
{
	if (e->len + 1 >= sizeof(e->buf))
		return;
	memmove(e->buf + e->cur + 1, e->buf + e->cur, e->len - e->cur + 1);
	e->buf[e->cur++] = c;
	e->len++;
}

static void edit_delete(struct lineedit *e, size_t from, size_t to)
{
	memmove(e->buf + from, e->buf + to, e->len - to + 1);
	e->len -= to - from;
	e->cur = from;
}

/* Line editing keys common to both prompts; false when not one of them. */
static bool edit_key(struct lineedit *e, int ch)
{
	switch (ch) {
	case KEY_BACKSPACE: case 127: case 8:
		if (e->cur)
			edit_delete(e, e->cur - 1, e->cur);
		return true;
	case KEY_DC: case KEY_CTRL('d'):
		if (e->cur < e->len)
			edit_delete(e, e->cur, e->cur + 1);
		return true;
	case KEY_CTRL('u'): edit_delete(e, 0, e->cur); return true;
	case KEY_CTRL('k'): e->buf[e->cur] = 0, e->len = e->cur; return true;
	case KEY_CTRL('w'): {
		size_t p = e->cur;
		while (p && e->buf[p - 1] == ' ')
			p--;
		while (p && e->buf[p - 1] != ' ')
			p--;
		edit_delete(e, p, e->cur);
		return true;
	}
	case KEY_LEFT: if (e->cur) e->cur--; return true;
	case KEY_RIGHT: if (e->cur < e->len) e->cur++; return true;
	case KEY_HOME: case KEY_CTRL('a'): e->cur = 0; return true;
	case KEY_END: case KEY_CTRL('e'): e->cur = e->len; return true;
	}
	if ((ch >= 32 && ch < 127) || (ch >= 128 && ch < 256)) {
		edit_insert(e, (char)ch);
		return true;
	}
	return false;
}

static void history_add(struct tui *t, const char *line)
{
	if (t->nhistory && !strcmp(t->history[t->nhistory - 1], line))
		return;
	if (t->nhistory == HISTORY_MAX) {
		free(t->history[0]);
		memmove(t->history, t->history + 1, (HISTORY_MAX - 1) * sizeof(*t->history));
		t->nhistory--;
	}
	t->history[t->nhistory++] = xstrdup(line);
}

static void history_move(struct tui *t, int dir)
{
	if (dir < 0 && t->hist_pos == 0)
		return;
	if (dir > 0 && t->hist_pos >= t->nhistory)
		return;
	if (t->hist_pos == t->nhistory)
		snprintf(t->hist_stash, sizeof(t->hist_stash), "%s", t->edit.buf);
	t->hist_pos += dir;
	edit_set(&t->edit, t->hist_pos == t->nhistory ? t->hist_stash : t->history[t->hist_pos]);
}

/* Runs a command line through the session and shows its answer: the first
 * line on the message line, a longer answer in an overlay. */
static int command_run(struct tui *t, const char *line)
{
	const char *p = line + strspn(line, " \t");
	if (!strcmp(p, "q") || !strcmp(p, "quit") || !strcmp(p, "exit"))
		return 1;
	if (!t->o.exec) {
		set_msg(t, MSG_ERROR, "commands are not available here");
		return 0;
	}
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f) {
		set_msg(t, MSG_ERROR, "cannot run '%s': out of memory", line);
		return 0;
	}
	int rc = t->o.exec(t->o.exec_arg, line, f);
	fclose(f);
	while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = 0;
	char *nl = strchr(out, '\n');
	char raw[MSG_MAX], first[MSG_MAX];
	snprintf(raw, sizeof(raw), "%.*s", nl ? (int)(nl - out) : (int)len, out);
	printable_copy(first, sizeof(first), raw);
	if (rc < 0)
		set_msg(t, MSG_ERROR, "%s", first[0] ? first : "command failed");
	else
		set_msg(t, MSG_INFO, "%s", first[0] ? first : "ok");
	if (nl && rc >= 0) {
		char title[96];
		snprintf(title, sizeof(title), ":%.80s", p);
		overlay_open_text(t, title, out);
	}
	free(out);
	t->refresh_wanted = true;
	return 0;
}

static int prompt_accept(struct tui *t)
{
	enum prompt p = t->prompt;
	t->prompt = PROMPT_NONE;
	if (p == PROMPT_SEARCH) {
		free(t->search_saved);
		t->search_saved = NULL;
		search_set(t, t->edit.buf, false);
		if (t->search) {
			t->focus = FOCUS_FLAME;
			search_jump(t, 0);
		}
		return 0;
	}
	if (!t->edit.buf[strspn(t->edit.buf, " \t")])
		return 0;
	history_add(t, t->edit.buf);
	return command_run(t, t->edit.buf);
}

static void prompt_cancel(struct tui *t)
{
	if (t->prompt == PROMPT_SEARCH) {
		search_set(t, t->search_saved, t->search_saved_exact);
		free(t->search_saved);
		t->search_saved = NULL;
	}
	t->prompt = PROMPT_NONE;
}

static int prompt_key(struct tui *t, int ch)
{
	switch (ch) {
	case '\n': case '\r': case KEY_ENTER: return prompt_accept(t);
	case KEY_ESC: prompt_cancel(t); return 0;
	case KEY_UP: case KEY_DOWN:
		if (t->prompt == PROMPT_COMMAND)
			history_move(t, ch == KEY_UP ? -1 : 1);
		return 0;
	case KEY_BACKSPACE: case 127: case 8:
		if (!t->edit.len) { /* backspace on an empty line leaves, as in vim */
			prompt_cancel(t);
			return 0;
		}
		break;
	}
	edit_key(&t->edit, ch);
	if (t->prompt == PROMPT_SEARCH) /* highlight as the user types */
		search_apply(t, t->edit.buf, false);
	return 0;
}

/* ---- keys: overlays and the rest --------------------------------------------- */

static void overlay_key(struct tui *t, int ch)
{
	size_t page = (size_t)overlay_body_height();
	size_t most = t->nolines > page ? t->nolines - page : 0;
	switch (ch) {
	case 'q': case KEY_ESC: case '\n': case '\r': case KEY_ENTER: case '?':
		overlay_free(t);
		break;
	case KEY_UP: case 'k': t->otop = t->otop ? t->otop - 1 : 0; break;
	case KEY_DOWN: case 'j': t->otop = t->otop < most ? t->otop + 1 : most; break;
	case KEY_PPAGE: t->otop = t->otop > page ? t->otop - page : 0; break;
	case KEY_NPAGE: case ' ': t->otop = t->otop + page < most ? t->otop + page : most; break;
	case KEY_HOME: case 'g': t->otop = 0; break;
	case KEY_END: case 'G': t->otop = most; break;
	case ':':
		overlay_free(t);
		prompt_open(t, PROMPT_COMMAND);
		break;
	}
}

static void invert_toggle(struct tui *t)
{
	t->inverted = !t->inverted;
	trees_sync(t);
	set_msg(t, MSG_INFO, "%s",
		t->inverted ? "inverted: leaf functions first, their callers below (i: back)"
			    : "call tree: callers first, callees below");
}

static void zoom_key(struct tui *t, bool in)
{
	struct tuitree *tt = cur_tree(t);
	if (!in) {
		if (tuitree_zoom_out(tt) < 0)
			set_msg(t, MSG_ERROR, "not zoomed");
		return;
	}
	struct tuitree_row row;
	long s = tuitree_selected(tt);
	if (s < 0 || !tuitree_row(tt, (size_t)s, &row))
		return;
	char lab[LABEL_MAX];
	frame_label(t->view, row.node->frame, lab, sizeof(lab));
	if (tuitree_zoom_in(tt) < 0)
		set_msg(t, MSG_ERROR, "nothing below %s to zoom into", lab);
	else
		set_msg(t, MSG_INFO, "zoomed into %s (Z or Backspace: zoom out)", lab);
}

static void refresh_scale(struct tui *t, double f)
{
	double r = t->refresh_s * f;
	t->refresh_s = r < REFRESH_MIN_S ? REFRESH_MIN_S : r > REFRESH_MAX_S ? REFRESH_MAX_S : r;
	set_msg(t, MSG_INFO, "refresh every %.1fs", t->refresh_s);
	t->refresh_wanted = true;
}

/* Keys that mean the same whichever panel has the focus; false when not
 * one of them. Sets *quit for q. */
static bool global_key(struct tui *t, int ch, int *quit)
{
	switch (ch) {
	case 'q': *quit = 1; return true;
	case '?': overlay_open_help(t); return true;
	case ':': prompt_open(t, PROMPT_COMMAND); return true;
	case '/': prompt_open(t, PROMPT_SEARCH); return true;
	case '\t': t->focus = (t->focus + 1) % FOCUS_COUNT; return true;
	case KEY_BTAB: t->focus = (t->focus + FOCUS_COUNT - 1) % FOCUS_COUNT; return true;
	case 'p':
		t->paused = !t->paused;
		set_msg(t, MSG_INFO, "%s",
			t->paused ? "paused: the display is frozen, data is still gathered (p: resume)"
				  : "resumed");
		t->refresh_wanted = !t->paused;
		return true;
	case '<': refresh_scale(t, 0.5); return true;
	case '>': refresh_scale(t, 2.0); return true;
	case 'i': invert_toggle(t); return true;
	case 'z': zoom_key(t, true); return true;
	case 'Z': case KEY_BACKSPACE: case 127: case 8: zoom_key(t, false); return true;
	case 'e': tuitree_expand_all(cur_tree(t)); return true;
	case 'E': tuitree_collapse_all(cur_tree(t)); return true;
	case KEY_ESC: search_set(t, NULL, false); return true;
	case 'n': case 'N':
		if (!t->search) {
			set_msg(t, MSG_ERROR, "no search: / to search");
			return true;
		}
		t->focus = FOCUS_FLAME;
		search_jump(t, ch == 'n' ? 1 : -1);
		return true;
	}
	return false;
}

/* One key; returns 1 to quit. */
static int key(struct tui *t, int ch)
{
	if (ch == KEY_RESIZE)
		return 0;
	if (t->overlay != OVERLAY_NONE) {
		overlay_key(t, ch);
		return 0;
	}
	if (t->prompt != PROMPT_NONE)
		return prompt_key(t, ch);
	t->msg_kind = MSG_NONE; /* a message answers the last key only */
	t->search_wrapped = false;
	int quit = 0;
	if (global_key(t, ch, &quit))
		return quit;
	switch (t->focus) {
	case FOCUS_FLAME: tree_key(t, ch); break;
	case FOCUS_HOT: hot_key(t, ch); break;
	case FOCUS_PROBES: probes_key(t, ch); break;
	case FOCUS_COUNT: break;
	}
	return 0;
}

/* ---- public ------------------------------------------------------------------ */

struct tui *tui_open(const struct tui_options *o, char *err, size_t errlen)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		errbuf_set(err, errlen,
			   "top needs a terminal on stdin and stdout; use top -b for text output");
		return NULL;
	}
	setlocale(LC_CTYPE, ""); /* ncursesw draws UTF-8 names only with a locale */
	SCREEN *s = newterm(NULL, stdout, stdin);
	if (!s) {
		const char *term = getenv("TERM");
		errbuf_set(err, errlen,
			   "cannot use the terminal type '%s': set TERM (e.g. xterm-256color) or use top -b",
			   term ? term : "");
		return NULL;
	}
	set_term(s);
	struct tui *t = xcalloc(1, sizeof(*t));
	t->screen = s;
	t->o = *o;
	t->refresh_s = o->refresh_s > 0 ? o->refresh_s : 1.0;
	t->refresh_s = t->refresh_s < REFRESH_MIN_S ? REFRESH_MIN_S
		      : t->refresh_s > REFRESH_MAX_S ? REFRESH_MAX_S : t->refresh_s;
	t->tree[0] = tuitree_new();
	t->tree[1] = tuitree_new();
	cbreak(); /* not raw(): Ctrl-C stays a signal for top */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	colors_init(t);
	return t;
}

void tui_close(struct tui *t)
{
	if (!t)
		return;
	live_view_free(t->owned);
	endwin();
	delscreen(t->screen);
	tuitree_free(t->tree[0]);
	tuitree_free(t->tree[1]);
	flame_free(t->inv);
	overlay_free(t);
	for (size_t i = 0; i < t->nhistory; i++)
		free(t->history[i]);
	free(t->search);
	free(t->search_saved);
	free(t);
}

void tui_draw(struct tui *t, const struct live_view *v)
{
	t->view = v;
	trees_sync(t);
	cursors_follow(t);
	cursors_commit(t);
	redraw(t);
}

int tui_handle_input(struct tui *t)
{
	int ch, quit = 0;
	bool any = false;
	while (!quit && (ch = getch()) != ERR) {
		any = true;
		quit = key(t, ch);
	}
	if (any && !quit)
		redraw(t);
	return quit;
}

/* ---- on a live run ------------------------------------------------------------- */

static int run_exec(void *arg, const char *line, FILE *out)
{
	return liverun_exec(arg, line, out);
}

/* Every wake: the keys waiting (a resize arrives as one, also when no key
 * made stdin readable). */
static void on_wake(void *arg)
{
	struct tui *t = arg;
	if (tui_handle_input(t))
		liverun_stop(t->run);
	else if (tui_refresh_wanted(t))
		liverun_refresh_now(t->run);
}

static void show(void *arg)
{
	struct tui *t = arg;
	if (tui_paused(t))
		return;
	struct live_view *v = live_view_build(liverun_live(t->run), 200);
	tui_draw(t, v);
	live_view_free(t->owned);
	t->owned = v;
}

static double interval(void *arg)
{
	return tui_refresh_interval(arg);
}

int tui_attach(struct tui *t, struct liverun *r, char *err, size_t errlen)
{
	if (loop_add_fd(liverun_loop(r), STDIN_FILENO, NULL, NULL, err, errlen))
		return -1;
	t->run = r;
	t->o.exec = run_exec;
	t->o.exec_arg = r;
	loop_on_wake(liverun_loop(r), on_wake, t);
	liverun_set_display(r, &(struct liverun_display){show, interval, t});
	liverun_refresh_now(r); /* something on the screen at once */
	return 0;
}

double tui_refresh_interval(const struct tui *t)
{
	return t->refresh_s;
}

bool tui_paused(const struct tui *t)
{
	return t->paused;
}

bool tui_refresh_wanted(struct tui *t)
{
	bool w = t->refresh_wanted;
	t->refresh_wanted = false;
	return w;
}
