/* Deep stacks: every writer and tree walk takes a stack far deeper than the
 * C stack allows recursion over (flame's SVG writer crashed at 100,000
 * frames, the folded writer at 1,000,000), and writes exact output for it:
 * the folded line, the SVG's frames and deepest level, the diff's growth,
 * the nflxprofile and recording round trips, the TUI tree's rows and the
 * live view's stack line. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chrometrace.h"
#include "flame.h"
#include "flamechart.h"
#include "flamediff.h"
#include "flamesvg.h"
#include "folded.h"
#include "heatmap.h"
#include "liveview.h"
#include "nflx.h"
#include "pprof.h"
#include "profile.h"
#include "recording.h"
#include "report.h"
#include "speedscope.h"
#include "tuitree.h"
#include "viewtree.h"

#define DEEP 1000000   /* the folded writer's crash */
#define DEEP_SVG 100000 /* flame's crash; SVG output is ~350 bytes a level, and
			 * the writers that never recursed are checked here too */
#define SEC 1000000000ULL

TestSuite(deep, .timeout = 240);

/* One thread "deep": a stack of `depth` frames f0 f1 .. f6 f0 .. (root
 * first) with weight 3 at 1.0 s and weight 1 at 1.5 s, and the stack a;b
 * with weight 2 at 1.25 s. */
static struct profile *deep_profile(size_t depth)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "samples");
	uint32_t f[7];
	for (int i = 0; i < 7; i++) {
		char name[8];
		snprintf(name, sizeof(name), "f%d", i);
		f[i] = frames_intern(p->frames, name, "/bin/deep", "", 0, FRAME_USER);
	}
	uint32_t *frames = malloc(depth * sizeof(*frames));
	for (size_t i = 0; i < depth; i++)
		frames[i] = f[i % 7];
	uint32_t ab[2] = {frames_intern(p->frames, "a", "/bin/deep", "", 0, FRAME_USER),
			  frames_intern(p->frames, "b", "/bin/deep", "", 0, FRAME_USER)};
	uint32_t thread = profile_thread_intern(p, 42, 42, "deep");
	struct sample s = {.time_ns = SEC, .weight = 3, .thread = thread,
			   .stack = profile_stack_intern(p, frames, depth)};
	profile_add_sample(p, &s, NULL, 0);
	s = (struct sample){.time_ns = SEC + SEC / 4, .weight = 2, .thread = thread,
			    .stack = profile_stack_intern(p, ab, 2)};
	profile_add_sample(p, &s, NULL, 0);
	s = (struct sample){.time_ns = SEC + SEC / 2, .weight = 1, .thread = thread,
			    .stack = profile_stack_intern(p, frames, depth)};
	profile_add_sample(p, &s, NULL, 0);
	free(frames);
	profile_meta_set(p, "start_ns", "1000000000");
	return p;
}

struct mem {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	cr_assert_not_null(m->f);
	return m->f;
}

static void mem_close(struct mem *m)
{
	cr_assert_eq(fclose(m->f), 0);
}

/* A byte loop, not strstr: the sanitizer's strstr measures the whole
 * haystack on every call, which is quadratic over megabytes of output. */
static size_t count(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle), len = strlen(hay);
	for (size_t i = 0; i + k <= len; i++)
		n += hay[i] == needle[0] && memcmp(hay + i, needle, k) == 0;
	return n;
}

Test(deep, folded_writes_the_whole_stack)
{
	struct profile *p = deep_profile(DEEP);
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	struct mem m;
	cr_assert_eq(folded_write(mem_open(&m), t, true), 0);
	mem_close(&m);
	const char *deep = "deep;a;b 2\ndeep;f0;f1;f2;f3;f4;f5;f6;f0;";
	cr_assert_eq(strncmp(m.buf, deep, strlen(deep)), 0, "%.60s", m.buf);
	cr_assert_eq(count(m.buf, "\n"), 2);
	cr_assert_eq(count(m.buf, ";"), 2 + DEEP);
	/* the leaf, frame DEEP-1, is f((DEEP-1) % 7) = f0 for 10^6 */
	cr_assert_str_eq(m.buf + m.len - 6, ";f0 4\n");
	free(m.buf);
	flame_free(t);
	profile_free(p);
}

static void check_svg(bool icicle)
{
	struct profile *p = deep_profile(DEEP_SVG);
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	flame_sort(t);
	struct flamesvg_options o;
	flamesvg_default_options(&o);
	o.icicle = icicle;
	struct mem m;
	cr_assert_eq(flamesvg_write(mem_open(&m), t, &o), 0);
	mem_close(&m);
	/* all, deep, a, b and the DEEP_SVG levels of the deep stack */
	cr_assert_eq(count(m.buf, "<g class=\"f\""), DEEP_SVG + 4);
	char last[64];
	snprintf(last, sizeof(last), "data-depth=\"%d\"", DEEP_SVG + 1);
	cr_assert_eq(count(m.buf, last), 1);
	snprintf(last, sizeof(last), "data-depth=\"%d\"", DEEP_SVG + 2);
	cr_assert_eq(count(m.buf, last), 0);
	cr_assert_str_eq(m.buf + m.len - 7, "</svg>\n");
	free(m.buf);
	flame_free(t);
	profile_free(p);
}

Test(deep, flame_svg_draws_every_level)
{
	check_svg(false);
}

Test(deep, icicle_svg_draws_every_level)
{
	check_svg(true);
}

/* Base: the profile; cmp: only a;b. a and b grow from 2/6 of the samples
 * to all of them. */
Test(deep, flamediff_merges_and_draws_deep_trees)
{
	struct profile *p = deep_profile(DEEP_SVG);
	struct flame_tree *base = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	struct flame_tree *cmp = flame_new(p->frames);
	uint32_t ab[3] = {base->root->children[0]->frame, frames_intern(p->frames, "a", "", "", 0,
									   FRAME_USER),
			  frames_intern(p->frames, "b", "", "", 0, FRAME_USER)};
	flame_add(cmp, ab, 3, 5);
	struct flamediff *d = flamediff_new(base, cmp);
	struct flamediff_top top[4];
	size_t n = flamediff_top_growth(d, top, 4);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(top[0].label, "a");
	cr_assert_str_eq(top[1].label, "b");
	cr_assert_float_eq(top[0].delta, 1.0 - 2.0 / 6, 1e-9);
	struct mem m;
	cr_assert_eq(flamediff_write_svg(mem_open(&m), d, NULL, NULL), 0);
	mem_close(&m);
	cr_assert_eq(count(m.buf, "<g class=\"f\""), DEEP_SVG + 4);
	free(m.buf);
	flamediff_free(d);
	flame_free(cmp);
	flame_free(base);
	profile_free(p);
}

/* These writers never recursed: 10^5 frames keep the sanitizer build quick. */
Test(deep, pprof_speedscope_and_chrome_write_deep_stacks)
{
	struct profile *p = deep_profile(DEEP_SVG);
	struct mem m;
	cr_assert_eq(pprof_write(mem_open(&m), p, NULL), 0);
	mem_close(&m);
	cr_assert_gt(m.len, 1000);
	free(m.buf);
	cr_assert_eq(speedscope_write(mem_open(&m), p, "deep"), 0);
	mem_close(&m);
	/* a sample is an array of DEEP_SVG frame indexes */
	cr_assert_gt(count(m.buf, ","), 2 * DEEP_SVG);
	free(m.buf);
	cr_assert_eq(chrometrace_write(mem_open(&m), p), 0);
	mem_close(&m);
	cr_assert_gt(m.len, (size_t)DEEP_SVG);
	free(m.buf);
	profile_free(p);
}

Test(deep, nflx_round_trip_keeps_the_depth)
{
	struct profile *p = deep_profile(DEEP_SVG);
	struct mem m;
	cr_assert_eq(nflx_write(mem_open(&m), p), 0);
	mem_close(&m);
	char err[256];
	struct profile *q = nflx_read((const uint8_t *)m.buf, m.len, err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 3);
	cr_assert_eq(viewtree_total_weight(q, NULL), 6);
	cr_assert_eq(q->nodes[q->samples[0].stack].depth, DEEP_SVG);
	free(m.buf);
	profile_free(q);
	profile_free(p);
}

Test(deep, recording_round_trip_keeps_the_depth)
{
	struct profile *p = deep_profile(DEEP_SVG);
	char dir[] = "/tmp/sonde-deep-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char path[64];
	snprintf(path, sizeof(path), "%s/deep.sonde", dir);
	char err[256];
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), 0, "%s", err);
	struct profile *q = recording_load(path, err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nodes[q->samples[2].stack].depth, DEEP_SVG);
	unlink(path);
	rmdir(dir);
	profile_free(q);
	profile_free(p);
}

Test(deep, heatmap_chart_and_reports_take_deep_stacks)
{
	struct profile *p = deep_profile(DEEP_SVG);
	struct heatmap h;
	cr_assert_eq(heatmap_build(p, NULL, 50, &h), 0);
	cr_assert_eq(h.cols, 1);
	FILE *null = fopen("/dev/null", "w");
	cr_assert_not_null(null);
	cr_assert_eq(heatmap_write_svg(null, &h, NULL), 0);
	cr_assert_eq(heatmap_write_html(null, p, &h, NULL), 0);
	heatmap_free(&h);
	struct flamechart_options co = {0};
	char err[256] = "";
	cr_assert_eq(flamechart_write_svg(null, p, &co, err, sizeof(err)), 0, "%s", err);
	struct report_options ro = {.source = "deep"};
	struct mem m;
	cr_assert_eq(report_write_text(mem_open(&m), p, &ro), 0);
	mem_close(&m);
	cr_assert(strstr(m.buf, "samples:   6"), "%s", m.buf);
	free(m.buf);
	cr_assert_eq(report_write_json(null, p, &ro), 0);
	fclose(null);
	profile_free(p);
}

Test(deep, tui_tree_flattens_expands_and_searches_deep_trees)
{
	struct profile *p = deep_profile(DEEP);
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	struct tuitree *tt = tuitree_new();
	tuitree_set_tree(tt, t);
	tuitree_select(tt, 0);
	tuitree_expand_all(tt);
	/* deep, a, b and the deep stack's levels */
	cr_assert_eq(tuitree_nrows(tt), DEEP + 3);
	tuitree_search(tt, "f6", true);
	cr_assert_eq(tuitree_matches(tt, NULL), DEEP / 7);
	tuitree_collapse_all(tt);
	cr_assert_eq(tuitree_search_first(tt), 0); /* expands down to the first f6 */
	tuitree_set_tree(tt, t);                   /* the expansion trie is deep now */
	tuitree_free(tt);
	flame_free(t);
	profile_free(p);
}

Test(deep, live_view_prints_the_leaf_end_of_a_deep_stack)
{
	struct profile *p = deep_profile(DEEP);
	struct live_view *v = calloc(1, sizeof(*v));
	v->flame = viewtree_flame(p, NULL, FLAME_ROOT_NONE);
	v->total = 6;
	struct mem m;
	live_view_print(mem_open(&m), v, 5);
	mem_close(&m);
	/* the leaf-most 8 functions of the deep stack, 4 of the 6 samples */
	cr_assert(strstr(m.buf, "  66.7  ...;f0;f1;f2;f3;f4;f5;f6;f0\n"), "%s", m.buf);
	cr_assert(strstr(m.buf, "  33.3  a;b\n"), "%s", m.buf);
	free(m.buf);
	live_view_free(v);
	profile_free(p);
}
