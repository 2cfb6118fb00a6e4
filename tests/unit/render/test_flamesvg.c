/* flamesvg: the SVG is well-formed, drawn to scale, coloured by kind and
 * name, and honours its options. Frames are read back from the document's
 * own markup (data-* attributes and the rect's geometry). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "flamesvg.h"
#include "frames.h"
#include "unitkit.h"

/* ---- building trees --------------------------------------------------- */

static struct frame_table *frames;
static struct flame_tree *tree;

static void setup(void)
{
	frames = frames_new();
	tree = flame_new(frames);
}

static void teardown(void)
{
	flame_free(tree);
	frames_free(frames);
}

TestSuite(flamesvg, .init = setup, .fini = teardown);

static uint32_t frame_of(const char *name, enum frame_kind kind)
{
	return frames_intern(frames, name, "", "", 0, kind);
}

/* Adds a stack given as user-frame names, root first, NULL-terminated. */
static void add_stack(struct flame_tree *t, uint64_t count, const char *const *names)
{
	uint32_t ids[32];
	size_t n = 0;
	while (names[n]) {
		ids[n] = frame_of(names[n], FRAME_USER);
		n++;
	}
	cr_assert_eq(flame_add(t, ids, n, count), 0);
}
#define STACK(t, count, ...) add_stack(t, count, (const char *const[]){__VA_ARGS__, NULL})

/* ---- rendering and reading back --------------------------------------- */

static char *render(const struct flame_tree *t, const struct flamesvg_options *o)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	cr_assert_eq(flamesvg_write(f, t, o), 0);
	fclose(f);
	return buf;
}


static int image_height(const char *svg)
{
	const char *s = strstr(svg, "<svg");
	return (int)svg_attr_num(s, strchr(s, '>'), "height");
}

static double hue_of(const unsigned rgb[3])
{
	double r = rgb[0] / 255.0, g = rgb[1] / 255.0, b = rgb[2] / 255.0;
	double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), c = mx - mn;
	if (c == 0)
		return 0;
	double h = mx == r ? fmod((g - b) / c, 6) : mx == g ? (b - r) / c + 2 : (r - g) / c + 4;
	h *= 60;
	return h < 0 ? h + 360 : h;
}

/* ---- tests ------------------------------------------------------------ */

Test(flamesvg, output_is_well_formed_xml)
{
	STACK(tree, 5, "main", "run", "work");
	STACK(tree, 2, "main", "idle");
	flame_sort(tree);
	char *svg = render(tree, NULL);
	cr_assert(strstr(svg, "<svg"));
	cr_assert(strstr(svg, "<script"));
	cr_assert(strstr(svg, "<title>all (7 samples, 100.00%)</title>"));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, widths_are_proportional_to_counts)
{
	STACK(tree, 3, "main", "a");
	STACK(tree, 1, "main", "b");
	flame_sort(tree);
	char *svg = render(tree, NULL);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	cr_assert_eq(n, 4);
	const struct svg_frame *root = svg_find_frame(f, n, "all"), *a = svg_find_frame(f, n, "a"), *b = svg_find_frame(f, n, "b");
	cr_assert(root && a && b);
	cr_assert_float_eq(root->width, 1200 - 2 * 10, 0.01);
	cr_assert_float_eq(a->width, 3 * b->width, 0.5);
	cr_assert_float_eq(a->width + b->width, root->width, 0.5);
	cr_assert_float_eq(b->x, a->x + a->width, 0.5, "children sit side by side in order");
	cr_assert_eq(a->total, 3);
	cr_assert_eq(a->self, 3);
	cr_assert_eq(svg_find_frame(f, n, "main")->self, 0);
	free(svg);
}

Test(flamesvg, minwidth_omits_tiny_frames_and_their_depth)
{
	STACK(tree, 100000, "main", "big");
	STACK(tree, 1, "main", "tiny", "deeper", "deepest");
	flame_sort(tree);
	struct svg_frame f[16];

	char *svg = render(tree, NULL);
	size_t n = svg_read_frames(svg, f, 16);
	cr_assert_null(svg_find_frame(f, n, "tiny"), "0.012 px wide: below the default 0.1 px");
	cr_assert_null(svg_find_frame(f, n, "deepest"));
	int short_height = image_height(svg);
	free(svg);

	struct flamesvg_options o;
	flamesvg_default_options(&o);
	o.minwidth = 0;
	svg = render(tree, &o);
	n = svg_read_frames(svg, f, 16);
	cr_assert_not_null(svg_find_frame(f, n, "tiny"));
	cr_assert_not_null(svg_find_frame(f, n, "deepest"));
	cr_assert_eq(image_height(svg) - short_height, 2 * 16, "image sized to drawn depth");
	free(svg);
}

Test(flamesvg, icicle_puts_the_root_on_top)
{
	STACK(tree, 4, "main", "child");
	flame_sort(tree);
	struct svg_frame f[8];
	struct flamesvg_options o;
	flamesvg_default_options(&o);

	char *svg = render(tree, &o);
	svg_read_frames(svg, f, 8);
	cr_assert_gt(f[0].y, f[2].y, "flame: root below its descendants");
	cr_assert(strstr(svg, ">Flame Graph</text>"));
	free(svg);

	o.icicle = true;
	svg = render(tree, &o);
	svg_read_frames(svg, f, 8);
	cr_assert_lt(f[0].y, f[1].y, "icicle: root above its descendants");
	cr_assert_lt(f[1].y, f[2].y);
	cr_assert(strstr(svg, ">Icicle Graph</text>"));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, names_are_escaped)
{
	STACK(tree, 10, "main", "a<b>&\"c'");
	flame_sort(tree);
	char *svg = render(tree, NULL);
	cr_assert(strstr(svg, "data-name=\"a&lt;b&gt;&amp;&quot;c&apos;\""));
	cr_assert(strstr(svg, "<title>a&lt;b&gt;&amp;&quot;c&apos; (10 samples, 100.00%)"));
	cr_assert_null(strstr(svg, "a<b>"));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, invalid_utf8_and_control_chars_stay_well_formed)
{
	STACK(tree, 10, "main", "bad\xff\xfe\xc0\xaf utf8", "ctl\x01\x1b\x7f\ttab",
	      "cut\xe2\x82", "surrogate\xed\xa0\x80", "ok \xc3\xa9\xe2\x82\xac");
	flame_sort(tree);
	char *svg = render(tree, NULL);
	cr_assert(strstr(svg, "ctl????tab"), "control characters drawn as '?'");
	cr_assert(strstr(svg, "ok \xc3\xa9\xe2\x82\xac"), "valid UTF-8 kept");
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, title_subtitle_width_and_unit_options)
{
	STACK(tree, 8, "main", "x");
	flame_sort(tree);
	struct flamesvg_options o;
	flamesvg_default_options(&o);
	o.title = "My <Profile>";
	o.subtitle = "pid 42 & friends";
	o.width = 800;
	o.count_name = "ns";
	char *svg = render(tree, &o);
	cr_assert(strstr(svg, ">My &lt;Profile&gt;</text>"));
	cr_assert(strstr(svg, ">pid 42 &amp; friends</text>"));
	cr_assert(strstr(svg, "width=\"800\""));
	cr_assert(strstr(svg, "<title>x (8 ns, 100.00%)</title>"));
	struct svg_frame f[8];
	svg_read_frames(svg, f, 8);
	cr_assert_float_eq(f[0].width, 800 - 20, 0.01);
	cr_assert_float_eq(f[0].x, 10, 0.01);
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, labels_are_truncated_to_fit)
{
	STACK(tree, 20, "main", "a_function_with_a_rather_long_name_that_cannot_fit");
	STACK(tree, 200, "main", "wide");
	STACK(tree, 1, "main", "wide", "z"); /* narrower than 3 characters */
	flame_sort(tree);
	char *svg = render(tree, NULL);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *longer = svg_find_frame(f, n, "a_function_with_a_rather_long_name_that_cannot_fit");
	cr_assert_not_null(longer);
	size_t len = strlen(longer->label);
	cr_assert_gt(len, 2);
	cr_assert_str_eq(longer->label + len - 2, "..");
	cr_assert_leq(len * 0.6 * 12, longer->width, "label fits its box");
	cr_assert_str_eq(svg_find_frame(f, n, "wide")->label, "wide");
	cr_assert_str_eq(svg_find_frame(f, n, "z")->label, "");
	free(svg);
}

static const struct svg_frame *add_kind_and_find(const char *name, enum frame_kind kind,
					     struct svg_frame *f, size_t max, char **svg)
{
	uint32_t ids[] = {frame_of("main", FRAME_USER), frame_of(name, kind)};
	flame_add(tree, ids, 2, 1);
	free(*svg);
	*svg = render(tree, NULL);
	size_t n = svg_read_frames(*svg, f, max);
	char label[160];
	snprintf(label, sizeof(label), "%s%s", name, frames_kind_suffix(kind));
	return svg_find_frame(f, n, label);
}

/* Hue ranges of the conventional families (degrees). */
static void assert_family(const char *name, enum frame_kind kind, double lo, double hi)
{
	struct svg_frame f[64];
	char *svg = NULL;
	const struct svg_frame *d = add_kind_and_find(name, kind, f, 64, &svg);
	cr_assert_not_null(d, "%s not drawn", name);
	double h = hue_of(d->rgb);
	cr_assert(h >= lo && h <= hi, "%s: hue %.1f not in [%.0f, %.0f]", name, h, lo, hi);
	free(svg);
}

Test(flamesvg, colour_families_by_kind)
{
	const char *names[] = {"alpha", "do_sys_open", "process_request", "x", "zz_top"};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		assert_family(names[i], FRAME_USER, 0, 24);     /* red */
		assert_family(names[i], FRAME_KERNEL, 26, 45);  /* orange */
		assert_family(names[i], FRAME_INLINED, 170, 195); /* aqua */
		assert_family(names[i], FRAME_JIT, 90, 140);    /* green */
		assert_family(names[i], FRAME_PROCESS, 0, 24);  /* like user */
	}
	assert_family("ns::Widget::draw", FRAME_USER, 46, 65); /* yellow */
	/* Python's own names (a user frame of the same label would be found first) */
	const char *py_names[] = {"app.handle", "app.Server.handle", "json.dumps", "work.main_loop"};
	for (size_t i = 0; i < sizeof(py_names) / sizeof(*py_names); i++)
		assert_family(py_names[i], FRAME_PYTHON, 268, 302); /* violet */
}

Test(flamesvg, same_name_same_colour_in_separate_documents)
{
	STACK(tree, 3, "main", "shared_fn");
	STACK(tree, 9, "main", "other");
	flame_sort(tree);
	char *svg1 = render(tree, NULL);

	struct flame_tree *t2 = flame_new(frames);
	STACK(t2, 1, "start", "deep", "deeper", "shared_fn");
	flame_sort(t2);
	char *svg2 = render(t2, NULL);

	struct svg_frame f1[16], f2[16];
	size_t n1 = svg_read_frames(svg1, f1, 16), n2 = svg_read_frames(svg2, f2, 16);
	const struct svg_frame *a = svg_find_frame(f1, n1, "shared_fn"), *b = svg_find_frame(f2, n2, "shared_fn");
	cr_assert(a && b);
	cr_assert(memcmp(a->rgb, b->rgb, sizeof(a->rgb)) == 0);
	const struct svg_frame *other = svg_find_frame(f1, n1, "other");
	cr_assert(memcmp(a->rgb, other->rgb, sizeof(a->rgb)) != 0, "shades differ by name");
	flame_free(t2);
	free(svg1);
	free(svg2);
}

static bool paint_hot(const struct flame_node *n, void *arg, unsigned char rgb[3])
{
	if (n->frame != *(uint32_t *)arg)
		return false;
	rgb[0] = 1, rgb[1] = 2, rgb[2] = 3;
	return true;
}

static const char *describe(const struct flame_node *n, void *arg, char *buf, size_t size)
{
	(void)arg;
	if (!n->parent)
		return NULL;
	snprintf(buf, size, "+%llu <delta>", (unsigned long long)n->total);
	return buf;
}

Test(flamesvg, colour_override_and_extra_info)
{
	STACK(tree, 5, "main", "hot");
	STACK(tree, 5, "main", "cold");
	flame_sort(tree);
	uint32_t hot = frame_of("hot", FRAME_USER);
	struct flamesvg_options o;
	flamesvg_default_options(&o);
	o.color = paint_hot;
	o.extra_info = describe;
	o.color_arg = &hot;
	char *svg = render(tree, &o);
	struct svg_frame f[8];
	size_t n = svg_read_frames(svg, f, 8);
	const struct svg_frame *h = svg_find_frame(f, n, "hot"), *c = svg_find_frame(f, n, "cold");
	cr_assert(h->rgb[0] == 1 && h->rgb[1] == 2 && h->rgb[2] == 3);
	cr_assert(!(c->rgb[0] == 1 && c->rgb[1] == 2 && c->rgb[2] == 3), "others use the palette");
	cr_assert(strstr(svg, "<title>hot (5 samples, 50.00%; +5 &lt;delta&gt;)</title>"));
	cr_assert(strstr(svg, "<title>all (10 samples, 100.00%)</title>"));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, kernel_suffix_in_names)
{
	uint32_t ids[] = {frame_of("main", FRAME_USER), frame_of("sys_read", FRAME_KERNEL)};
	flame_add(tree, ids, 2, 4);
	char *svg = render(tree, NULL);
	cr_assert(strstr(svg, "data-name=\"sys_read_[k]\""));
	free(svg);
}

Test(flamesvg, empty_tree_is_a_valid_document)
{
	char *svg = render(tree, NULL);
	struct svg_frame f[4];
	cr_assert_eq(svg_read_frames(svg, f, 4), 1, "just the root");
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamesvg, write_failure_returns_minus_one)
{
	STACK(tree, 5, "main", "x");
	FILE *full = fopen("/dev/full", "w");
	if (!full)
		cr_skip_test("/dev/full not available");
	errno = 0;
	cr_assert_eq(flamesvg_write(full, tree, NULL), -1);
	cr_assert_eq(errno, ENOSPC);
	fclose(full);
}

/* The script is browser code; at least make sure it parses. */
Test(flamesvg, script_is_valid_javascript)
{
	if (!have_tool("node"))
		cr_skip_test("node not installed");
	STACK(tree, 5, "main", "x");
	char *svg = render(tree, NULL);
	const char *begin = strstr(strstr(svg, "<script"), "<![CDATA[") + strlen("<![CDATA[");
	const char *end = strstr(begin, "]]>");
	char path[] = "/tmp/flamesvg-XXXXXX.js";
	int fd = mkstemps(path, 3);
	cr_assert_geq(fd, 0);
	FILE *f = fdopen(fd, "w");
	fwrite(begin, 1, (size_t)(end - begin), f);
	fclose(f);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "node --check %s", path);
	int rc = system(cmd);
	unlink(path);
	cr_assert_eq(rc, 0, "node rejected the embedded script");
	free(svg);
}
