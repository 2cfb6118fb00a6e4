/* flamediff: two trees on separate frame tables merge by label with exact
 * per-side counts; shares are normalized per side; towers present on one
 * side only stay visible; colours follow the sign and size of each frame's
 * total-share delta; the top-growth summary counts recursion once. The SVG is
 * read back from its own markup (data-* attributes, rect geometry, fill). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "flamediff.h"
#include "flamesvg.h"
#include "frames.h"
#include "unitkit.h"

/* ---- two recordings: A (base) and B (cmp) on separate frame tables ----- */

static struct frame_table *frames_a, *frames_b;
static struct flame_tree *tree_a, *tree_b;
static struct flamediff *diff;

static void setup(void)
{
	frames_a = frames_new();
	frames_b = frames_new();
	/* B's table gets unrelated frames first, so equal names have other ids */
	frames_intern(frames_b, "unrelated_1", "", "", 0, FRAME_USER);
	frames_intern(frames_b, "unrelated_2", "", "", 0, FRAME_KERNEL);
	tree_a = flame_new(frames_a);
	tree_b = flame_new(frames_b);
	diff = NULL;
}

static void teardown(void)
{
	flamediff_free(diff);
	flame_free(tree_a);
	flame_free(tree_b);
	frames_free(frames_a);
	frames_free(frames_b);
}

TestSuite(flamediff, .init = setup, .fini = teardown);

/* Adds a stack of user frames given by name, root first, NULL-terminated. */
static void add_stack(struct flame_tree *t, struct frame_table *ft, uint64_t count,
		      const char *const *names)
{
	uint32_t ids[32];
	size_t n = 0;
	for (; names[n]; n++)
		ids[n] = frames_intern(ft, names[n], "", "", 0, FRAME_USER);
	cr_assert_eq(flame_add(t, ids, n, count), 0);
}
#define STACK_A(count, ...) \
	add_stack(tree_a, frames_a, count, (const char *const[]){__VA_ARGS__, NULL})
#define STACK_B(count, ...) \
	add_stack(tree_b, frames_b, count, (const char *const[]){__VA_ARGS__, NULL})

static void make_diff(void)
{
	diff = flamediff_new(tree_a, tree_b);
	cr_assert_not_null(diff);
}

/* ---- finding merged nodes by label path -------------------------------- */

static const struct flame_node *child_labelled(const struct flame_node *n, const char *label)
{
	char buf[256];
	for (size_t i = 0; i < n->nchildren; i++) {
		flame_frame_label(flamediff_tree(diff), n->children[i]->frame, true, buf,
				  sizeof(buf));
		if (strcmp(buf, label) == 0)
			return n->children[i];
	}
	return NULL;
}

/* The node at a path of labels below the root ("all" for no labels). */
static const struct flame_node *node_at(const char *const *labels)
{
	const struct flame_node *n = flamediff_tree(diff)->root;
	for (size_t i = 0; labels[i] && n; i++)
		n = child_labelled(n, labels[i]);
	cr_assert_not_null(n, "no merged node at the path starting %s", labels[0]);
	return n;
}
#define NODE(...) node_at((const char *const[]){__VA_ARGS__, NULL})
#define ROOT() node_at((const char *const[]){NULL})

static struct flamediff_node_info info_of(const struct flame_node *n)
{
	struct flamediff_node_info i;
	flamediff_info(diff, n, &i);
	return i;
}

static void assert_counts(const struct flame_node *n, uint64_t base_total, uint64_t base_self,
			  uint64_t cmp_total, uint64_t cmp_self)
{
	struct flamediff_node_info i = info_of(n);
	cr_assert_eq(i.base_total, base_total, "base_total %llu", (unsigned long long)i.base_total);
	cr_assert_eq(i.base_self, base_self, "base_self %llu", (unsigned long long)i.base_self);
	cr_assert_eq(i.cmp_total, cmp_total, "cmp_total %llu", (unsigned long long)i.cmp_total);
	cr_assert_eq(i.cmp_self, cmp_self, "cmp_self %llu", (unsigned long long)i.cmp_self);
}

/* ---- rendering and reading back ---------------------------------------- */

static char *render(const struct flamediff_options *o, const struct flamesvg_options *svg)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	cr_assert_eq(flamediff_write_svg(f, diff, o, svg), 0);
	fclose(f);
	return buf;
}

static char *render_width(enum flamediff_width width)
{
	struct flamediff_options o = {.width = width, .base_name = "fast", .cmp_name = "slow"};
	return render(&o, NULL);
}

static const struct svg_frame *find(const struct svg_frame *f, size_t n, const char *name)
{
	const struct svg_frame *d = svg_find_frame(f, n, name);
	cr_assert_not_null(d, "%s is not drawn", name);
	return d;
}

#define SPAN (1200.0 - 2 * 10) /* the root box at the default image width */

static bool reddish(const struct svg_frame *d)
{
	return d->rgb[0] > d->rgb[2] + 30;
}

static bool bluish(const struct svg_frame *d)
{
	return d->rgb[2] > d->rgb[0] + 30;
}

static bool neutral(const struct svg_frame *d)
{
	return d->rgb[0] == d->rgb[2] && d->rgb[0] == d->rgb[1] && d->rgb[0] >= 235;
}

/* ---- merging ----------------------------------------------------------- */

Test(flamediff, merged_counts_are_exact_per_side)
{
	STACK_A(3, "main", "a");
	STACK_A(1, "main", "b");
	STACK_A(2, "main");
	STACK_B(5, "main", "a");
	STACK_B(2, "main", "a", "x");
	STACK_B(7, "main", "c");
	make_diff();

	assert_counts(ROOT(), 6, 0, 14, 0);
	assert_counts(NODE("main"), 6, 2, 14, 0);
	assert_counts(NODE("main", "a"), 3, 3, 7, 5);
	assert_counts(NODE("main", "a", "x"), 0, 0, 2, 2);
	assert_counts(NODE("main", "b"), 1, 1, 0, 0);
	assert_counts(NODE("main", "c"), 0, 0, 7, 7);

	struct flamediff_node_info a = info_of(NODE("main", "a"));
	cr_assert_float_eq(a.base_share, 0.5, 1e-12);
	cr_assert_float_eq(a.cmp_share, 0.5, 1e-12);
	cr_assert_float_eq(a.delta, 0, 1e-12);
	struct flamediff_node_info c = info_of(NODE("main", "c"));
	cr_assert_float_eq(c.delta, 0.5, 1e-12);
	struct flamediff_node_info b = info_of(NODE("main", "b"));
	cr_assert_float_eq(b.delta, -1.0 / 6, 1e-12);

	const struct flame_node *main_node = NODE("main");
	cr_assert_eq(main_node->nchildren, 3, "a, b and c once each");
	const char *order[] = {"a", "b", "c"};
	for (size_t i = 0; i < 3; i++)
		cr_assert_str_eq(flamediff_label(diff, main_node->children[i]), order[i],
				 "children alphabetical");
	cr_assert_str_eq(flamediff_label(diff, ROOT()), "all");
}

Test(flamediff, frames_match_by_label_not_id_or_module)
{
	uint32_t a[] = {frames_intern(frames_a, "main", "/bin/a", "a.c", 10, FRAME_USER),
			frames_intern(frames_a, "read", "", "", 0, FRAME_USER)};
	uint32_t b[] = {frames_intern(frames_b, "main", "/bin/b", "b.c", 20, FRAME_USER),
			frames_intern(frames_b, "read", "[kernel.kallsyms]", "", 0,
				      FRAME_KERNEL)};
	cr_assert_neq(a[0], b[0], "the test needs different ids");
	flame_add(tree_a, a, 2, 4);
	flame_add(tree_b, b, 2, 8);
	make_diff();

	assert_counts(NODE("main"), 4, 0, 8, 0);
	assert_counts(NODE("main", "read"), 4, 4, 0, 0);
	assert_counts(NODE("main", "read_[k]"), 0, 0, 8, 8);
	cr_assert_eq(ROOT()->nchildren, 1, "one main, whatever the module");
}

Test(flamediff, trees_may_be_freed_after_merging)
{
	STACK_A(2, "main", "a");
	STACK_B(2, "main", "a");
	make_diff();
	flame_free(tree_a);
	flame_free(tree_b);
	frames_free(frames_a);
	frames_free(frames_b);
	tree_a = tree_b = NULL;
	frames_a = frames_b = NULL;
	assert_counts(NODE("main", "a"), 2, 2, 2, 2);
	char *svg = render(NULL, NULL);
	cr_assert(strstr(svg, "data-name=\"a\""));
	free(svg);
}

Test(flamediff, node_from_another_tree_gets_zeros)
{
	STACK_A(2, "main");
	make_diff();
	struct flamediff_node_info i = info_of(tree_a->root);
	cr_assert_eq(i.base_total + i.cmp_total, 0);
	cr_assert_eq(i.delta, 0);
}

/* ---- normalization and widths ------------------------------------------ */

static int assert_zero_delta(const struct flame_node *n, int depth, void *arg)
{
	(void)depth, (void)arg;
	struct flamediff_node_info i = info_of(n);
	cr_assert_eq(i.delta, 0, "%s: delta %g", flamediff_label(diff, n), i.delta);
	cr_assert_eq(i.base_share, i.cmp_share);
	return 0;
}

Test(flamediff, same_shape_with_ten_times_the_samples_has_no_delta)
{
	STACK_A(3, "main", "parse");
	STACK_A(6, "main", "run", "work");
	STACK_A(1, "main", "run");
	STACK_B(30, "main", "parse");
	STACK_B(60, "main", "run", "work");
	STACK_B(10, "main", "run");
	make_diff();

	flame_walk(flamediff_tree(diff), assert_zero_delta, NULL);
	cr_assert_eq(flamediff_max_delta(diff), 0);
	assert_counts(NODE("main", "run", "work"), 6, 6, 60, 60);

	char *svg = render(NULL, NULL);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	cr_assert_eq(n, 5);
	for (size_t i = 0; i < n; i++)
		cr_assert(neutral(&f[i]), "%s is rgb(%u,%u,%u)", f[i].name, f[i].rgb[0],
			  f[i].rgb[1], f[i].rgb[2]);
	cr_assert_float_eq(find(f, n, "work")->width, 0.6 * SPAN, 0.01);
	free(svg);
}

Test(flamediff, tree_weights_follow_the_width_basis)
{
	STACK_A(8, "main", "work");
	STACK_A(2, "main", "gone");
	STACK_B(30, "main", "work");
	STACK_B(10, "main", "new");
	make_diff();

	/* UNION by default: mean of the shares, in parts per billion */
	cr_assert_eq(ROOT()->total, 1000000000);
	cr_assert_eq(NODE("main", "work")->total, 775000000); /* (0.8 + 0.75) / 2 */
	cr_assert_eq(NODE("main", "gone")->total, 100000000); /* (0.2 + 0) / 2 */
	cr_assert_eq(NODE("main", "new")->total, 125000000);  /* (0 + 0.25) / 2 */

	flamediff_set_width(diff, FLAMEDIFF_WIDTH_CMP);
	cr_assert_eq(NODE("main", "work")->total, 750000000);
	cr_assert_eq(NODE("main", "gone")->total, 0, "kept in the tree with no width");
	cr_assert_eq(NODE("main", "new")->total, 250000000);

	flamediff_set_width(diff, FLAMEDIFF_WIDTH_BASE);
	cr_assert_eq(NODE("main", "work")->total, 800000000);
	cr_assert_eq(NODE("main", "gone")->total, 200000000);
	cr_assert_eq(NODE("main", "new")->total, 0);
	cr_assert_eq(ROOT()->total, 1000000000);
}

Test(flamediff, tiny_share_keeps_a_nonzero_weight)
{
	STACK_A(1, "main", "rare");
	STACK_A(3999999999ULL, "main", "common");
	STACK_B(1, "main", "common");
	make_diff();
	cr_assert_eq(NODE("main", "rare")->total, 1, "1/4e9 rounds to 0 ppb, kept at 1");
}

/* ---- missing towers ---------------------------------------------------- */

Test(flamediff, frame_only_in_base_is_drawn_in_union_and_base_modes)
{
	STACK_A(8, "main", "work");
	STACK_A(2, "main", "gone", "deeper");
	STACK_B(10, "main", "work");
	make_diff();

	struct flamediff_node_info g = info_of(NODE("main", "gone"));
	cr_assert_float_eq(g.base_share, 0.2, 1e-12);
	cr_assert_eq(g.cmp_share, 0);
	cr_assert_float_eq(g.delta, -0.2, 1e-12);

	struct svg_frame f[16];
	char *svg = render_width(FLAMEDIFF_WIDTH_UNION);
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *gone = svg_find_frame(f, n, "gone");
	cr_assert_not_null(gone, "a vanished tower stays visible");
	cr_assert_float_eq(gone->width, 0.1 * SPAN, 0.01, "mean of 20%% and 0%%");
	cr_assert(bluish(gone));
	cr_assert_eq(gone->rgb[0], 80, "one-sided and >= 1%%: full intensity");
	find(f, n, "deeper");
	cr_assert(strstr(gone->title, "only in fast"), "%s", gone->title);
	free(svg);

	svg = render_width(FLAMEDIFF_WIDTH_BASE);
	n = svg_read_frames(svg, f, 16);
	gone = find(f, n, "gone");
	cr_assert_float_eq(gone->width, 0.2 * SPAN, 0.01);
	cr_assert(strstr(svg, "width: fast"));
	free(svg);

	svg = render_width(FLAMEDIFF_WIDTH_CMP);
	n = svg_read_frames(svg, f, 16);
	cr_assert_null(svg_find_frame(f, n, "gone"), "the classic view loses it");
	cr_assert_null(svg_find_frame(f, n, "deeper"));
	cr_assert_float_eq(find(f, n, "work")->width, SPAN, 0.01);
	free(svg);
}

Test(flamediff, frame_only_in_cmp_is_red_and_absent_from_base_mode)
{
	STACK_A(10, "main", "work");
	STACK_B(9, "main", "work");
	STACK_B(1, "main", "new");
	make_diff();

	struct svg_frame f[16];
	char *svg = render_width(FLAMEDIFF_WIDTH_UNION);
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *fresh = find(f, n, "new");
	cr_assert(reddish(fresh));
	cr_assert_eq(fresh->rgb[2], 60, "one-sided and >= 1%%: full intensity");
	free(svg);

	svg = render_width(FLAMEDIFF_WIDTH_BASE);
	n = svg_read_frames(svg, f, 16);
	cr_assert_null(svg_find_frame(f, n, "new"));
	free(svg);
}

Test(flamediff, small_one_sided_frame_is_still_clearly_tinted)
{
	STACK_A(1000, "main", "work");
	STACK_A(500, "main", "shrinks");
	STACK_B(1500, "main", "work");
	STACK_B(1, "main", "blip"); /* 0.07%: tiny next to the 33-point max delta */
	make_diff();
	char *svg = render(NULL, NULL);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *blip = find(f, n, "blip");
	cr_assert(reddish(blip));
	cr_assert_leq(blip->rgb[1], 155, "at least half way from white to red: g %u",
		      blip->rgb[1]);
	free(svg);
}

/* ---- colours and details ----------------------------------------------- */

Test(flamediff, colours_follow_sign_and_size_of_delta)
{
	STACK_A(2, "main", "grow");
	STACK_A(4, "main", "little");
	STACK_A(10, "main", "shrink");
	STACK_A(4, "main", "same");
	STACK_B(9, "main", "grow");   /* +35 points */
	STACK_B(5, "main", "little"); /* +5 points */
	STACK_B(2, "main", "shrink"); /* -40 points: the largest change */
	STACK_B(4, "main", "same");
	make_diff();
	cr_assert_float_eq(flamediff_max_delta(diff), 0.4, 1e-12);

	char *svg = render(NULL, NULL);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *grow = find(f, n, "grow"), *little = find(f, n, "little"),
			   *shrink = find(f, n, "shrink"), *same = find(f, n, "same");
	cr_assert(reddish(grow), "grow rgb(%u,%u,%u)", grow->rgb[0], grow->rgb[1], grow->rgb[2]);
	cr_assert_gt(little->rgb[0], little->rgb[2], "a small growth is still reddish");
	cr_assert_gt(little->rgb[1], grow->rgb[1], "and paler than a large one");
	cr_assert(bluish(shrink));
	cr_assert_eq(shrink->rgb[0], 80, "the largest |delta| is full intensity");
	cr_assert(neutral(same), "same rgb(%u,%u,%u)", same->rgb[0], same->rgb[1], same->rgb[2]);
	cr_assert(neutral(find(f, n, "main")));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamediff, inner_frames_are_coloured_by_their_own_delta)
{
	STACK_A(5, "main", "mid", "leaf");
	STACK_A(5, "main", "other");
	STACK_B(9, "main", "mid", "leaf");
	STACK_B(1, "main", "other");
	make_diff();
	char *svg = render_width(FLAMEDIFF_WIDTH_UNION);
	struct svg_frame f[16];
	size_t n = svg_read_frames(svg, f, 16);
	const struct svg_frame *mid = find(f, n, "mid");
	cr_assert(reddish(mid), "a frame with no self samples still shows its change");
	cr_assert(bluish(find(f, n, "other")));
	cr_assert(strstr(mid->title, "fast 50.00% (5 samples), slow 90.00% (9 samples), "
				     "delta +40.00 pp"),
		  "%s", mid->title);
	cr_assert(strstr(mid->title, "ppb"), "drawn counts are weights: %s", mid->title);
	free(svg);
}

Test(flamediff, titles_and_subtitle)
{
	STACK_A(1000, "main");
	STACK_B(2000, "main");
	make_diff();
	char *svg = render_width(FLAMEDIFF_WIDTH_UNION);
	cr_assert(strstr(svg, ">Differential Flame Graph</text>"));
	cr_assert(strstr(svg, ">red: more in slow (2,000 samples), blue: more in fast "
			      "(1,000 samples); width: mean of both</text>"));
	free(svg);

	struct flamesvg_options so;
	flamesvg_default_options(&so);
	so.title = "handle_request: slow vs fast";
	so.subtitle = "p95 = 12 ms";
	so.icicle = true;
	svg = render(NULL, &so);
	cr_assert(strstr(svg, ">handle_request: slow vs fast</text>"));
	cr_assert(strstr(svg, ">p95 = 12 ms</text>"));
	cr_assert_null(strstr(svg, "red: more in"));
	free(svg);

	so.title = NULL;
	so.subtitle = NULL;
	so.count_name = "ns";
	svg = render(NULL, &so);
	cr_assert(strstr(svg, ">Differential Icicle Graph</text>"));
	cr_assert(strstr(svg, ">red: more in B (2,000 ns), blue: more in A (1,000 ns); "
			      "width: mean of both</text>"),
		  "default side names A and B, the caller's unit for real counts");
	cr_assert(strstr(svg, "<title>main (1,000,000,000 ppb, 100.00%; A 100.00% (1,000 ns), "
			      "B 100.00% (2,000 ns), delta +0.00 pp)</title>"));
	free(svg);
}

Test(flamediff, svg_is_well_formed_with_hostile_names)
{
	STACK_A(3, "main", "a<b>&\"c'");
	STACK_B(5, "main", "x&y", "bad\xff utf8");
	make_diff();
	struct flamediff_options o = {.base_name = "<fast & \"ok\">", .cmp_name = "slow's"};
	char *svg = render(&o, NULL);
	cr_assert(strstr(svg, "more in slow&apos;s"));
	svg_assert_well_formed(svg, "");
	free(svg);
}

Test(flamediff, write_failure_returns_minus_one)
{
	STACK_A(3, "main");
	make_diff();
	FILE *full = fopen("/dev/full", "w");
	if (!full)
		cr_skip_test("/dev/full not available");
	errno = 0;
	cr_assert_eq(flamediff_write_svg(full, diff, NULL, NULL), -1);
	cr_assert_eq(errno, ENOSPC);
	fclose(full);
}

/* ---- top growth -------------------------------------------------------- */

Test(flamediff, top_growth_sorted_and_recursion_counted_once)
{
	STACK_A(8, "main", "work");
	STACK_A(2, "main", "f", "g");
	STACK_B(6, "main", "f", "f", "f", "g");
	STACK_B(2, "main", "work");
	STACK_B(2, "main", "h", "f");
	make_diff();

	struct flamediff_top top[8];
	size_t n = flamediff_top_growth(diff, top, 8);
	cr_assert_eq(n, 3, "f, g and h grew; work shrank, main is unchanged");
	cr_assert_str_eq(top[0].label, "f");
	cr_assert_float_eq(top[0].cmp_share, 0.8, 1e-12, "6 + 2 samples, recursion once");
	cr_assert_float_eq(top[0].base_share, 0.2, 1e-12);
	cr_assert_float_eq(top[0].delta, 0.6, 1e-12);
	cr_assert_str_eq(top[1].label, "g");
	cr_assert_float_eq(top[1].cmp_share, 0.6, 1e-12);
	cr_assert_float_eq(top[1].delta, 0.4, 1e-12);
	cr_assert_str_eq(top[2].label, "h");
	cr_assert_float_eq(top[2].delta, 0.2, 1e-12);

	cr_assert_eq(flamediff_top_growth(diff, top, 2), 2, "capped at max");
	cr_assert_str_eq(top[1].label, "g");
	cr_assert_eq(flamediff_top_growth(diff, top, 0), 0);
}

Test(flamediff, top_growth_is_normalized)
{
	STACK_A(1, "main", "a");
	STACK_A(1, "main", "b");
	STACK_B(100, "main", "a");
	STACK_B(100, "main", "b");
	make_diff();
	struct flamediff_top top[4];
	cr_assert_eq(flamediff_top_growth(diff, top, 4), 0, "100x samples is not growth");
}

/* ---- empty sides ------------------------------------------------------- */

static void assert_renders_in_every_mode(void)
{
	enum flamediff_width modes[] = {FLAMEDIFF_WIDTH_UNION, FLAMEDIFF_WIDTH_CMP,
					FLAMEDIFF_WIDTH_BASE};
	for (size_t i = 0; i < 3; i++) {
		char *svg = render_width(modes[i]);
		struct svg_frame f[16];
		cr_assert_geq(svg_read_frames(svg, f, 16), 1, "the root at least");
		svg_assert_well_formed(svg, "");
		free(svg);
	}
}

Test(flamediff, empty_base)
{
	STACK_B(4, "main", "new");
	make_diff();
	assert_counts(ROOT(), 0, 0, 4, 0);
	struct flamediff_node_info i = info_of(NODE("main", "new"));
	cr_assert_eq(i.base_share, 0);
	cr_assert_float_eq(i.cmp_share, 1, 1e-12);
	cr_assert_eq(NODE("main", "new")->total, 1000000000, "UNION of one side is that side");

	struct flamediff_top top[4];
	cr_assert_eq(flamediff_top_growth(diff, top, 4), 2, "everything grew");
	cr_assert_str_eq(top[0].label, "main");
	cr_assert_str_eq(top[1].label, "new");

	char *svg = render(NULL, NULL);
	struct svg_frame f[8];
	size_t n = svg_read_frames(svg, f, 8);
	cr_assert(reddish(find(f, n, "new")));
	free(svg);
	assert_renders_in_every_mode();
}

Test(flamediff, empty_cmp)
{
	STACK_A(4, "main", "old");
	make_diff();
	assert_counts(NODE("main", "old"), 4, 4, 0, 0);
	struct flamediff_top top[4];
	cr_assert_eq(flamediff_top_growth(diff, top, 4), 0);
	char *svg = render(NULL, NULL);
	struct svg_frame f[8];
	size_t n = svg_read_frames(svg, f, 8);
	cr_assert(bluish(find(f, n, "old")));
	free(svg);
	assert_renders_in_every_mode();
}

Test(flamediff, both_empty)
{
	make_diff();
	assert_counts(ROOT(), 0, 0, 0, 0);
	cr_assert_eq(flamediff_max_delta(diff), 0);
	struct flamediff_top top[4];
	cr_assert_eq(flamediff_top_growth(diff, top, 4), 0);
	assert_renders_in_every_mode();
}

Test(flamediff, null_trees_are_empty_sides)
{
	STACK_B(2, "main");
	diff = flamediff_new(NULL, tree_b);
	assert_counts(NODE("main"), 0, 0, 2, 2);
	flamediff_free(diff);
	diff = flamediff_new(NULL, NULL);
	assert_counts(ROOT(), 0, 0, 0, 0);
	assert_renders_in_every_mode();
}
