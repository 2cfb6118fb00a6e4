/* Fuzzes every writer and tree walk with profiles built from the input.
 *
 * Input: folded stacks, then (after a NUL byte, optional) shape bytes that
 * give the samples times, threads and CPUs, add traced calls the samples
 * fall in, and can deepen the first stack by 4096 frames (deep stacks
 * crashed the SVG and folded writers once). Everything runs on a thread
 * with a 128 KiB stack, so a recursion over a stack's depth crashes at that
 * depth already, not only past the main thread's megabytes. The profile is
 * written as folded, SVG (flame and icicle), differential SVG, pprof (plain
 * and aggregated), speedscope, Chrome trace, nflxprofile, heatmap (SVG and
 * HTML), flame chart (a thread, a call) and report (text, JSON), and walked
 * by the TUI tree. Every writer must succeed (pprof and speedscope may
 * refuse counts that do not fit: EOVERFLOW), and what folded, pprof and
 * nflxprofile write must read back with the same total weight. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chrometrace.h"
#include "filebuf.h"
#include "flame.h"
#include "flamechart.h"
#include "flamediff.h"
#include "flamesvg.h"
#include "folded.h"
#include "heatmap.h"
#include "nflx.h"
#include "pprof.h"
#include "report.h"
#include "speedscope.h"
#include "tuitree.h"
#include "util.h"
#include "view.h"
#include "viewtree.h"

#define SEC 1000000000ULL
#define DEEP_FRAMES 4096 /* added to the first stack when the "deepen" byte is 0xff */
#define THREAD_STACK (128 * 1024)

struct shape {
	const uint8_t *p, *end;
};

/* The next shape byte; 0 once they run out. */
static uint8_t next(struct shape *s)
{
	return s->p < s->end ? *s->p++ : 0;
}

static void fail(const char *what, const char *detail)
{
	fprintf(stderr, "%s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

/* A copy of `in` in a new profile with times, threads, CPUs, traced calls
 * and a deepened first stack as the shape bytes say. */
static struct profile *shaped(struct profile *in, struct shape *sh)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "samples");
	size_t deepen = next(sh) == 0xff ? DEEP_FRAMES : 0; /* rarely: deep is slow to write */
	uint8_t flags = next(sh);
	if (flags & 1)
		profile_meta_set(p, "frequency_hz", flags & 2 ? "99" : "997");
	uint32_t probe = profile_probe_add(p, "handle", "/bin/fuzz", 0);
	uint32_t *frames = NULL;
	size_t cap = 0;
	uint64_t t = SEC;
	for (size_t i = 0; i < in->nsamples; i++) {
		const struct sample *s = &in->samples[i];
		size_t depth = in->nodes[s->stack].depth;
		size_t extra = i == 0 ? deepen : 0;
		grow_array((void **)&frames, &cap, depth + extra + 1, sizeof(*frames));
		profile_stack_frames(in, s->stack, frames, depth);
		for (size_t k = 0; k < depth; k++) {
			const struct frame *f = frames_get(in->frames, frames[k]);
			frames[k] = frames_intern(p->frames, f->name, f->module, f->file, f->line,
						  f->kind);
		}
		for (size_t k = 0; k < extra; k++) /* the stack again and again */
			frames[depth + k] = depth ? frames[k % depth] : frames_intern(p->frames, "d", "",
										    "", 0, FRAME_USER);
		uint8_t a = next(sh), b = next(sh), c = next(sh);
		t += (uint64_t)(a | b << 8) * 1000000; /* up to 65 s apart */
		const struct thread_info *th = &in->threads[s->thread];
		struct sample out = {
			.time_ns = t,
			.weight = s->weight,
			.cpu = c & 3,
			.thread = profile_thread_intern(p, 100 + (c >> 2 & 1), 100 + (c >> 2 & 3),
							th->comm),
			.stack = profile_stack_intern(p, frames, depth + extra),
		};
		/* Every other sample with c's top bit falls in a call of `handle`
		 * that starts just before it on its thread. */
		struct span_link link = {.span_id = i + 1, .probe = probe};
		bool in_call = c & 0x80;
		if (in_call) {
			struct span sp = {.id = i + 1, .start_ns = t - 1000, .duration_ns = (uint64_t)a * 1000,
					  .raw_duration_ns = (uint64_t)a * 1000 + 10, .probe = probe,
					  .thread = out.thread, .depth = 1, .open = b & 1};
			profile_span_add(p, &sp);
		}
		if (profile_add_sample(p, &out, in_call ? &link : NULL, in_call))
			fail("a sample the input profile held was refused", NULL);
	}
	free(frames);
	return p;
}

static FILE *devnull;

static void check_folded_round_trip(struct profile *p, const struct flame_tree *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || folded_write_kinds(f, t, FOLDED_ANNOTATE_ALL))
		fail("folded_write failed", NULL);
	fclose(f);
	char err[256];
	struct profile *q = folded_read(buf, len, err, sizeof(err));
	if (!q)
		fail("folded output does not read back", err);
	if (viewtree_total_weight(q, NULL) != viewtree_total_weight(p, NULL))
		fail("folded round trip changed the total weight", NULL);
	profile_free(q);
	free(buf);
}

static void check_svgs(struct flame_tree *t, uint8_t shape)
{
	struct flamesvg_options o;
	flamesvg_default_options(&o);
	o.minwidth = shape & 1 ? 0 : 0.1;
	if (flamesvg_write(devnull, t, &o))
		fail("flamesvg_write failed", NULL);
	o.icicle = true;
	o.width = 100 + shape;
	if (flamesvg_write(devnull, t, &o))
		fail("flamesvg_write (icicle) failed", NULL);
}

static void check_diff(struct profile *p)
{
	/* before and after the middle of the profile's time */
	uint64_t first = p->nsamples ? p->samples[0].time_ns : 0;
	uint64_t last = p->nsamples ? p->samples[p->nsamples - 1].time_ns : 0;
	uint64_t mid = first + (last - first) / 2;
	struct view a = {.has_range = true, .start_ns = 0, .end_ns = mid};
	struct view b = {.has_range = true, .start_ns = mid + 1, .end_ns = UINT64_MAX};
	struct flame_tree *ta = viewtree_flame(p, &a, FLAME_ROOT_COMM);
	struct flame_tree *tb = viewtree_flame(p, &b, FLAME_ROOT_COMM);
	struct flamediff *d = flamediff_new(ta, tb);
	if (flamediff_write_svg(devnull, d, NULL, NULL))
		fail("flamediff_write_svg failed", NULL);
	struct flamediff_top top[8];
	flamediff_top_growth(d, top, 8);
	flamediff_free(d);
	flame_free(ta);
	flame_free(tb);
}

/* pprof may refuse counts whose nanoseconds do not fit; what it writes
 * reads back (up to the reader's depth limit) with the same weight. */
static void check_pprof(struct profile *p, bool deep)
{
	for (int aggregate = 0; aggregate < 2; aggregate++) {
		struct pprof_options o = {.aggregate = aggregate};
		char *gz = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&gz, &len);
		errno = 0;
		int rc = pprof_write(f, p, &o);
		fclose(f);
		if (rc && errno != EOVERFLOW)
			fail("pprof_write failed", NULL);
		if (!rc && !deep) {
			char err[256];
			struct filebuf fb;
			if (filebuf_from_memory(gz, len, &fb, err, sizeof(err)))
				fail("pprof output does not gunzip", err);
			struct profile *q = pprof_read(fb.data, fb.len, err, sizeof(err));
			if (!q)
				fail("pprof output does not read back", err);
			if (viewtree_total_weight(q, NULL) != viewtree_total_weight(p, NULL))
				fail("pprof round trip changed the total weight", NULL);
			profile_free(q);
			filebuf_free(&fb);
		}
		free(gz);
	}
}

static void check_nflx(struct profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || nflx_write(f, p))
		fail("nflx_write failed", NULL);
	fclose(f);
	char err[256];
	struct profile *q = nflx_read((const uint8_t *)buf, len, err, sizeof(err));
	if (!q)
		fail("nflxprofile output does not read back", err);
	if (viewtree_total_weight(q, NULL) != viewtree_total_weight(p, NULL))
		fail("nflxprofile round trip changed the total weight", NULL);
	profile_free(q);
	free(buf);
}

static void check_time_views(struct profile *p, uint8_t rows)
{
	struct heatmap h;
	if (heatmap_build(p, NULL, 1 + rows % 64, &h) == 0) {
		if (heatmap_write_svg(devnull, &h, NULL) ||
		    heatmap_write_html_capped(devnull, p, &h, NULL, 1000))
			fail("heatmap writer failed", NULL);
		heatmap_free(&h);
	} else if (errno != E2BIG) {
		fail("heatmap_build failed", strerror(errno));
	}
	char err[256];
	struct flamechart_options co = {0};
	if (p->nsamples && flamechart_write_svg(devnull, p, &co, err, sizeof(err)))
		fail("flamechart_write_svg failed", err);
	if (p->nspans) {
		co.span_id = p->spans[0].id;
		if (flamechart_write_svg(devnull, p, &co, err, sizeof(err)))
			fail("flamechart_write_svg (a call) failed", err);
	}
}

static void check_tui_tree(const struct flame_tree *t)
{
	struct tuitree *tt = tuitree_new();
	tuitree_set_tree(tt, t);
	tuitree_select(tt, 0);
	tuitree_expand_all(tt);
	tuitree_search(tt, "a", false);
	tuitree_search_first(tt);
	tuitree_zoom_in(tt);
	tuitree_set_tree(tt, t);
	tuitree_collapse_all(tt);
	tuitree_free(tt);
}

struct input {
	const uint8_t *data;
	size_t size;
};

static void *write_everything(void *arg)
{
	const uint8_t *data = ((struct input *)arg)->data;
	size_t size = ((struct input *)arg)->size;
	const uint8_t *nul = memchr(data, 0, size);
	size_t text_len = nul ? (size_t)(nul - data) : size;
	char err[256];
	struct profile *in = folded_read((const char *)data, text_len, err, sizeof(err));
	if (!in)
		return NULL;
	struct shape sh = {nul ? nul + 1 : data + size, data + size};
	struct profile *p = shaped(in, &sh);
	profile_free(in);
	bool deep = p->nsamples && p->nodes[p->samples[0].stack].depth > 16384;
	uint8_t look = next(&sh);

	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	flame_sort(t);
	check_folded_round_trip(p, t);
	check_svgs(t, look);
	check_tui_tree(t);
	flame_free(t);
	t = viewtree_flame_lines(p, NULL, FLAME_ROOT_TID);
	if (folded_write(devnull, t, false))
		fail("folded_write (lines) failed", NULL);
	flame_free(t);
	check_diff(p);
	check_pprof(p, deep);
	errno = 0;
	if (speedscope_write(devnull, p, "fuzz") && errno != EOVERFLOW)
		fail("speedscope_write failed", NULL);
	if (chrometrace_write(devnull, p))
		fail("chrometrace_write failed", NULL);
	check_nflx(p);
	check_time_views(p, look);
	struct report_options ro = {.source = "fuzz", .top = 5};
	if (report_write_text(devnull, p, &ro) || report_write_json(devnull, p, &ro))
		fail("report writer failed", NULL);
	profile_free(p);
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	struct input in = {data, size};
	pthread_attr_t attr;
	pthread_t th;
	if (pthread_attr_init(&attr) || pthread_attr_setstacksize(&attr, THREAD_STACK) ||
	    pthread_create(&th, &attr, write_everything, &in) || pthread_join(th, NULL))
		abort();
	pthread_attr_destroy(&attr);
	return 0;
}
