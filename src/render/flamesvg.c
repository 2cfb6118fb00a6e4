#define _GNU_SOURCE
#include "flamesvg.h"

#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "util.h"
#include "xml.h"

/* Geometry and typography: flamegraph.pl's, which users' eyes are used to. */
enum {
	DEFAULT_WIDTH = 1200,
	MIN_IMAGE_WIDTH = 100, /* below this there is no room for the controls */
	FRAME_HEIGHT = 16,     /* one stack level; the box is 1 px less, for a gap */
	FONT_SIZE = 12,
	TITLE_FONT_SIZE = 17,
	MARGIN_X = 10,              /* left and right of the root box */
	TITLE_BAND = 3 * FONT_SIZE, /* title and controls above the frames */
	SUBTITLE_BAND = 18,         /* added to the title band when there is a subtitle */
	DETAIL_BAND = 2 * FONT_SIZE + 10, /* the hover detail line below the frames */
};
#define DEFAULT_MINWIDTH 0.1
/* Labels are drawn in a monospace font, whose advance is about 0.6 em, so a
 * label's width can be known here without measuring text. */
#define CHAR_WIDTH (0.6 * FONT_SIZE)
#define LABEL_PAD 3.0       /* between a box's left edge and its label */
#define MIN_LABEL_CHARS 3   /* narrower boxes get no label at all */
#define COLOR_SEED 0x666c616d65ULL /* "flame": fixed, so colours never change */

/* ---- options and layout ---------------------------------------------- */

void flamesvg_default_options(struct flamesvg_options *o)
{
	memset(o, 0, sizeof(*o));
	o->width = DEFAULT_WIDTH;
	o->minwidth = DEFAULT_MINWIDTH;
	o->count_name = "samples";
	/* title stays NULL: its default depends on `icicle`, known only at write time */
}

static struct flamesvg_options options_resolve(const struct flamesvg_options *given)
{
	struct flamesvg_options o;
	if (given)
		o = *given;
	else
		flamesvg_default_options(&o);
	if (!o.title)
		o.title = o.icicle ? "Icicle Graph" : "Flame Graph";
	if (o.subtitle && !*o.subtitle)
		o.subtitle = NULL;
	if (o.width <= 0)
		o.width = DEFAULT_WIDTH;
	if (o.width < MIN_IMAGE_WIDTH)
		o.width = MIN_IMAGE_WIDTH;
	if (!(o.minwidth >= 0)) /* also catches NaN */
		o.minwidth = DEFAULT_MINWIDTH;
	if (!o.count_name)
		o.count_name = "samples";
	return o;
}

/* Where everything goes: computed once before anything is written. */
struct layout {
	double x0;         /* left edge of the root box */
	double span;       /* width of the root box */
	double px_per_sample;
	int frames_top;    /* y of the highest frame row */
	int levels;        /* frame rows drawn: deepest drawn depth + 1 */
	int height;        /* of the whole image */
};

struct svg_writer {
	FILE *out;
	const struct flame_tree *tree;
	struct flamesvg_options opt;
	struct layout layout;
	uint64_t total; /* the root's count: 100% */
};

static double node_width(const struct svg_writer *w, const struct flame_node *n)
{
	return (double)n->total * w->layout.px_per_sample;
}

/* The root is always drawn, even for an empty profile, so the image is never
 * blank; other nodes only when they have samples and are wide enough to see. */
static bool node_is_drawn(const struct svg_writer *w, const struct flame_node *n)
{
	if (!n->parent)
		return true;
	return n->total > 0 && node_width(w, n) >= w->opt.minwidth;
}

/* Pixel rows are ints: the image's height must stay one, so frames deeper
 * than this (a tree of well over 100 million levels) are not drawn. */
#define MAX_DEPTH ((size_t)INT32_MAX / FRAME_HEIGHT - 64)

struct deepest {
	const struct svg_writer *w;
	size_t depth;
};

static enum flame_step note_depth(struct flame_node *n, size_t depth, void *arg)
{
	struct deepest *d = arg;
	if (depth > MAX_DEPTH || !node_is_drawn(d->w, n))
		return FLAME_STEP_OVER;
	if (depth > d->depth)
		d->depth = depth;
	return FLAME_STEP_INTO;
}

static int deepest_drawn_depth(const struct svg_writer *w)
{
	struct deepest d = {w, 0};
	flame_visit(w->tree->root, &(struct flame_visitor){.enter = note_depth}, &d);
	return (int)d.depth;
}

static void layout_compute(struct svg_writer *w)
{
	struct layout *l = &w->layout;
	l->x0 = MARGIN_X;
	l->span = w->opt.width - 2 * MARGIN_X;
	l->px_per_sample = w->total ? l->span / (double)w->total : 0;
	l->frames_top = TITLE_BAND + (w->opt.subtitle ? SUBTITLE_BAND : 0);
	l->levels = deepest_drawn_depth(w) + 1;
	l->height = l->frames_top + l->levels * FRAME_HEIGHT + DETAIL_BAND;
}

/* Flame graphs grow up from the bottom; icicle graphs hang down from the top. */
static int frame_y(const struct svg_writer *w, int depth)
{
	const struct layout *l = &w->layout;
	if (w->opt.icicle)
		return l->frames_top + depth * FRAME_HEIGHT;
	return l->frames_top + (l->levels - 1 - depth) * FRAME_HEIGHT;
}

/* A box's label: the whole name when it fits, else its start and "..", and
 * nothing when not even MIN_LABEL_CHARS fit. The script applies the same
 * rule when zooming changes the widths. */
static void put_label(FILE *out, const char *name, double box_width)
{
	double room = floor((box_width - 2 * LABEL_PAD) / CHAR_WIDTH);
	if (room >= 0)
		xml_put_fitted(out, name, (size_t)room, MIN_LABEL_CHARS);
}

/* ---- colours ---------------------------------------------------------- */

/* A hue family per kind of code, so mixed-mode stacks read at a glance. */
struct hue_family {
	double hue_lo, hue_hi; /* degrees */
};
static const struct hue_family FAMILY_USER = {0, 22};     /* red to red-orange */
static const struct hue_family FAMILY_KERNEL = {28, 40};  /* orange */
static const struct hue_family FAMILY_CXX = {50, 60};     /* yellow */
static const struct hue_family FAMILY_JIT = {95, 130};    /* green */
static const struct hue_family FAMILY_INLINED = {175, 190}; /* aqua */
static const struct hue_family FAMILY_BLOCKED = {205, 240}; /* blues: off the CPU */
static const struct hue_family FAMILY_PYTHON = {270, 300};  /* violet */

static struct hue_family family_of(const struct frame *f)
{
	if (!f) /* the root */
		return FAMILY_USER;
	switch (f->kind) {
	case FRAME_KERNEL: return FAMILY_KERNEL;
	case FRAME_JIT: return FAMILY_JIT;
	case FRAME_INLINED: return FAMILY_INLINED;
	case FRAME_PYTHON: return FAMILY_PYTHON;
	case FRAME_STATE:
		return strcmp(f->name, "[running]") == 0 ? FAMILY_USER : FAMILY_BLOCKED;
	case FRAME_USER:
		return strstr(f->name, "::") ? FAMILY_CXX : FAMILY_USER;
	case FRAME_PROCESS:
	case FRAME_UNKNOWN:
	default: return FAMILY_USER;
	}
}

static void hsl_to_rgb(double h, double s, double l, unsigned char rgb[3])
{
	double c = (1 - fabs(2 * l - 1)) * s;
	double hp = fmod(h, 360) / 60;
	double x = c * (1 - fabs(fmod(hp, 2) - 1));
	double r = 0, g = 0, b = 0;
	if (hp < 1)
		r = c, g = x;
	else if (hp < 2)
		r = x, g = c;
	else if (hp < 3)
		g = c, b = x;
	else if (hp < 4)
		g = x, b = c;
	else if (hp < 5)
		r = x, b = c;
	else
		r = c, b = x;
	double m = l - c / 2;
	rgb[0] = (unsigned char)lround((r + m) * 255);
	rgb[1] = (unsigned char)lround((g + m) * 255);
	rgb[2] = (unsigned char)lround((b + m) * 255);
}

/* A number in [0, 1] from 16 bits of h. */
static double hash_unit(uint64_t h, int which)
{
	return (double)(h >> (16 * which) & 0xffff) / 0xffff;
}

/* The shade within the family comes from the function's name alone, so the
 * same function looks the same in every graph; lightness stays high enough
 * for black labels. */
static void palette_color_in(const struct frame *f, bool blocked, unsigned char rgb[3])
{
	struct hue_family fam = blocked ? FAMILY_BLOCKED : family_of(f);
	uint64_t h = hash_str(f ? f->name : "all", COLOR_SEED);
	double hue = fam.hue_lo + (fam.hue_hi - fam.hue_lo) * hash_unit(h, 0);
	double sat = 0.70 + 0.20 * hash_unit(h, 1);
	double light = 0.55 + 0.10 * hash_unit(h, 2);
	hsl_to_rgb(hue, sat, light, rgb);
}

static void palette_color(const struct frame *f, unsigned char rgb[3])
{
	palette_color_in(f, false, rgb);
}

void flamesvg_color(const char *name, enum frame_kind kind, unsigned char rgb[3])
{
	struct frame f = {.name = name, .module = "", .file = "", .kind = kind};
	palette_color(name ? &f : NULL, rgb);
}


static void node_color(const struct svg_writer *w, const struct flame_node *n,
		       unsigned char rgb[3])
{
	if (w->opt.color && w->opt.color(n, w->opt.color_arg, rgb))
		return;
	palette_color_in(frames_get(w->tree->frames, n->frame), w->opt.all_blocked, rgb);
}

/* ---- the document ----------------------------------------------------- */

static void write_prologue(const struct svg_writer *w)
{
	FILE *out = w->out;
	int width = w->opt.width, height = w->layout.height;
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\">\n",
		width, height, width, height);
}

/* Presentation lives in CSS so the script only toggles classes: a CSS fill
 * beats the rect's fill attribute, which keeps the palette colour for reset. */
static void write_style(const struct svg_writer *w)
{
	struct assets_int sizes[] = {
		{"FONT_SIZE", FONT_SIZE}, {"TITLE_FONT_SIZE", TITLE_FONT_SIZE}, {NULL, 0}};
	static const char *const css[] = {asset_flame_css, NULL};
	assets_svg_style(w->out, css, assets_fill_ints, sizes);
}

static void write_background(const struct svg_writer *w)
{
	fprintf(w->out,
		"<defs><linearGradient id=\"bg\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
		"<stop offset=\"5%%\" stop-color=\"#f4f4f4\"/>"
		"<stop offset=\"95%%\" stop-color=\"#e8e8d8\"/></linearGradient></defs>\n"
		"<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#bg)\"/>\n",
		w->opt.width, w->layout.height);
}

static void write_titles(const struct svg_writer *w)
{
	FILE *out = w->out;
	double center = w->opt.width / 2.0;
	fprintf(out, "<text id=\"title\" x=\"%.2f\" y=\"%d\">", center, 2 * FONT_SIZE);
	xml_put_text(out, w->opt.title);
	fputs("</text>\n", out);
	if (w->opt.subtitle) {
		fprintf(out, "<text id=\"subtitle\" x=\"%.2f\" y=\"%d\">", center,
			2 * FONT_SIZE + SUBTITLE_BAND);
		xml_put_text(out, w->opt.subtitle);
		fputs("</text>\n", out);
	}
}

/* Zoom and search controls along the top, the detail line and the search
 * result along the bottom. Hidden controls appear when they can do something. */
void flamesvg_write_controls(FILE *out, int width, int height)
{
	int right = width - MARGIN_X;
	int top = 2 * FONT_SIZE, bottom = height - FONT_SIZE;
	fprintf(out, "<text id=\"unzoom\" class=\"ctl hide\" x=\"%d\" y=\"%d\">Reset Zoom</text>\n",
		MARGIN_X, top);
	fprintf(out, "<text id=\"search\" class=\"ctl\" x=\"%d\" y=\"%d\">Search</text>\n", right,
		top);
	fprintf(out,
		"<text id=\"resetsearch\" class=\"ctl hide\" x=\"%d\" y=\"%d\">Reset Search</text>\n",
		right - 70, top);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", MARGIN_X, bottom);
	fprintf(out, "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n", right, bottom);
}

/* "name (1,234 samples, 12.34%; extra)" */
static void write_frame_title(const struct svg_writer *w, const struct flame_node *n,
			      const char *name)
{
	FILE *out = w->out;
	char count[32], extra[256];
	double percent = w->total ? 100.0 * (double)n->total / (double)w->total : 0;
	fputs("<title>", out);
	xml_put_text(out, name);
	fprintf(out, " (%s ", format_count(n->total, count));
	xml_put_text(out, w->opt.count_name);
	fprintf(out, ", %.2f%%", percent);
	const char *more = w->opt.extra_info
				   ? w->opt.extra_info(n, w->opt.color_arg, extra, sizeof(extra))
				   : NULL;
	if (more && *more) {
		fputs("; ", out);
		xml_put_text(out, more);
	}
	fputs(")</title>", out);
}

/* The display name, with its "_[k]"-style kind suffix; malloc'd. */
static char *node_label(const struct svg_writer *w, const struct flame_node *n)
{
	const struct frame *f = frames_get(w->tree->frames, n->frame);
	size_t size = (f ? strlen(f->name) : 0) + 16; /* room for "all" or a suffix */
	char *label = xmalloc(size);
	flame_frame_label(w->tree, n->frame, true, label, size);
	return label;
}

/* One frame: <g> with exact counts for scripts, <title>, <rect>, <text>. */
static void write_frame(const struct svg_writer *w, const struct flame_node *n, int depth,
			uint64_t start)
{
	FILE *out = w->out;
	char *name = node_label(w, n);
	unsigned char rgb[3];
	node_color(w, n, rgb);
	double x = w->layout.x0 + (double)start * w->layout.px_per_sample;
	double width = n->parent ? node_width(w, n) : w->layout.span;
	int y = frame_y(w, depth);

	fputs("<g class=\"f\" data-name=\"", out);
	xml_put_text(out, name);
	fprintf(out, "\" data-start=\"%llu\" data-total=\"%llu\" data-self=\"%llu\" data-depth=\"%d\">",
		(unsigned long long)start, (unsigned long long)n->total,
		(unsigned long long)n->self, depth);
	write_frame_title(w, n, name);
	fprintf(out,
		"<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"rgb(%u,%u,%u)\" "
		"rx=\"2\" ry=\"2\"/>",
		x, y, width, FRAME_HEIGHT - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + LABEL_PAD, y + FRAME_HEIGHT - 4.5);
	put_label(out, name, width);
	fputs("</text></g>\n", out);
	free(name);
}

/* Pre-order, children left to right from the node's start; a node too narrow
 * to draw hides its whole subtree. Stops early once the stream has failed.
 * next_start[d] is where the next node at depth d starts: its parent's start,
 * plus the totals of the siblings before it (drawn or not). */
struct frames_writer {
	const struct svg_writer *w;
	uint64_t *next_start;
	size_t cap;
};

static enum flame_step write_node(struct flame_node *n, size_t depth, void *arg)
{
	struct frames_writer *fw = arg;
	if (ferror(fw->w->out))
		return FLAME_STEP_STOP;
	grow_array((void **)&fw->next_start, &fw->cap, depth + 2, sizeof(*fw->next_start));
	uint64_t start = depth ? fw->next_start[depth] : 0;
	if (depth)
		fw->next_start[depth] += n->total;
	if (depth > MAX_DEPTH || !node_is_drawn(fw->w, n))
		return FLAME_STEP_OVER;
	write_frame(fw->w, n, (int)depth, start);
	fw->next_start[depth + 1] = start;
	return FLAME_STEP_INTO;
}

static void write_frames(const struct svg_writer *w)
{
	fputs("<g id=\"frames\">\n", w->out);
	struct frames_writer fw = {.w = w};
	flame_visit(w->tree->root, &(struct flame_visitor){.enter = write_node}, &fw);
	free(fw.next_start);
	fputs("</g>\n", w->out);
}

/* The interactive part: flamecontrols.js and flame.js, with the geometry.
 * Placed last so every element it looks up already exists when it runs. */
static void write_script(const struct svg_writer *w)
{
	static const char *const scripts[] = {asset_flamecontrols_js, asset_flame_js, NULL};
	assets_svg_script(w->out, scripts,
			  "var CFG = {x0: %.2f, span: %.2f, total: %llu, charWidth: %.2f, "
			  "labelPad: %.1f, minLabelChars: %d};\n",
			  w->layout.x0, w->layout.span, (unsigned long long)w->total, CHAR_WIDTH,
			  LABEL_PAD, MIN_LABEL_CHARS);
}

static void write_document(const struct svg_writer *w)
{
	write_prologue(w);
	write_style(w);
	write_background(w);
	write_titles(w);
	flamesvg_write_controls(w->out, w->opt.width, w->layout.height);
	write_frames(w);
	write_script(w);
	fputs("</svg>\n", w->out);
}

/* stdio errors are sticky, so one check after the last write covers them all;
 * the flush makes buffered write errors (a full disk) show up here. */
static int stream_result(FILE *out)
{
	int saved = errno;
	errno = 0;
	if (fflush(out) == 0 && !ferror(out)) {
		errno = saved;
		return 0;
	}
	if (!errno)
		errno = EIO;
	return -1;
}

int flamesvg_write(FILE *out, const struct flame_tree *t, const struct flamesvg_options *o)
{
	struct svg_writer w = {.out = out, .tree = t, .opt = options_resolve(o)};
	w.total = t->root->total;
	layout_compute(&w);

	/* SVG numbers need a '.' decimal point whatever locale the program runs in. */
	locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	locale_t previous = c_numeric ? uselocale(c_numeric) : (locale_t)0;
	write_document(&w);
	if (c_numeric) {
		uselocale(previous);
		freelocale(c_numeric);
	}
	return stream_result(out);
}
