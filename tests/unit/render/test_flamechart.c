/* flamechart: consecutive samples sharing a prefix merge into one box per
 * level, gaps break boxes, span filtering, errors, colours identical to
 * flamesvg's, a well-formed document, and the samples are the view engine's
 * (on-CPU only). Boxes are read back from the
 * document's data-* attributes. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "flamechart.h"
#include "flamesvg.h"
#include "profile.h"
#include "sonde_abi.h"
#include "unitkit.h"
#include "view.h"
#include "viewtree.h"

#define MS 1000000ULL

static uint32_t fr(struct profile *p, const char *name)
{
	return frames_intern(p->frames, name, "/bin/x", "", 0, FRAME_USER);
}

/* One sample of `event` weighing `weight` at t ns on (tid, comm) with a
 * stack of user frames given root first as a ';'-separated string, then
 * frame `leaf` (0: none); linked to span `span` when nonzero. */
struct test_event {
	uint64_t t;
	uint32_t tid;
	const char *comm;
	const char *stack;
	uint64_t span;
	uint32_t event;
	uint64_t weight;
	uint32_t leaf;
};

static void add_event(struct profile *p, const struct test_event *e)
{
	uint32_t frames[32];
	size_t n = 0;
	char *copy = strdup(e->stack), *save = NULL;
	for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save))
		frames[n++] = fr(p, tok);
	free(copy);
	if (e->leaf)
		frames[n++] = e->leaf;
	struct sample s = {.time_ns = e->t,
			   .weight = e->weight,
			   .event = e->event,
			   .thread = profile_thread_intern(p, 100, e->tid, e->comm),
			   .stack = profile_stack_intern(p, frames, n)};
	struct span_link link = {.span_id = e->span, .probe = 0};
	cr_assert_eq(profile_add_sample(p, &s, e->span ? &link : NULL, e->span ? 1 : 0), 0);
}

/* One on-CPU sample (weight 1, the profile's first event). */
static void add(struct profile *p, uint64_t t, uint32_t tid, const char *comm, const char *stack,
		uint64_t span)
{
	add_event(p, &(struct test_event){.t = t, .tid = tid, .comm = comm, .stack = stack,
					  .span = span, .weight = 1});
}

struct box {
	char name[128];
	unsigned long long start, dur, samples;
	int depth;
	unsigned rgb[3];
};

static size_t read_boxes(const char *svg, struct box *out, size_t max)
{
	size_t n = 0;
	for (const char *g = strstr(svg, "<g class=\"f\""); g && n < max;
	     g = strstr(g + 1, "<g class=\"f\"")) {
		const char *end = strstr(g, "</g>");
		struct box *b = &out[n++];
		char v[64];
		cr_assert(svg_attr(g, end, "data-name", b->name, sizeof(b->name)));
		cr_assert(svg_attr(g, end, "data-start", v, sizeof(v)));
		b->start = strtoull(v, NULL, 10);
		cr_assert(svg_attr(g, end, "data-dur", v, sizeof(v)));
		b->dur = strtoull(v, NULL, 10);
		cr_assert(svg_attr(g, end, "data-samples", v, sizeof(v)));
		b->samples = strtoull(v, NULL, 10);
		cr_assert(svg_attr(g, end, "data-depth", v, sizeof(v)));
		b->depth = atoi(v);
		const char *fill = strstr(g, " fill=\"rgb(");
		cr_assert(fill && fill < end);
		cr_assert_eq(sscanf(fill, " fill=\"rgb(%u,%u,%u)", &b->rgb[0], &b->rgb[1], &b->rgb[2]), 3);
	}
	return n;
}

/* The box named `name` at `depth` starting at `start`, or NULL. */
static const struct box *find(const struct box *b, size_t n, const char *name, int depth,
			      unsigned long long start)
{
	for (size_t i = 0; i < n; i++)
		if (b[i].depth == depth && b[i].start == start && strcmp(b[i].name, name) == 0)
			return &b[i];
	return NULL;
}

static size_t count_named(const struct box *b, size_t n, const char *name)
{
	size_t c = 0;
	for (size_t i = 0; i < n; i++)
		c += strcmp(b[i].name, name) == 0;
	return c;
}

static char *render(const struct profile *p, const struct flamechart_options *o, int want_rc,
		    char *err, size_t errlen)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	cr_assert_not_null(f);
	int rc = flamechart_write_svg(f, p, o, err, errlen);
	fclose(f);
	cr_assert_eq(rc, want_rc, "flamechart_write_svg returned %d (%s)", rc, err ? err : "");
	return buf;
}

/* 3 samples a;b then 2 samples a;c, 10 ms apart at 100 Hz. */
static struct profile *abc_profile(void)
{
	struct profile *p = profile_new();
	profile_meta_set(p, "frequency_hz", "100");
	uint64_t t0 = 5000 * MS;
	for (int i = 0; i < 3; i++)
		add(p, t0 + (uint64_t)i * 10 * MS, 7, "app", "a;b", 0);
	for (int i = 3; i < 5; i++)
		add(p, t0 + (uint64_t)i * 10 * MS, 7, "app", "a;c", 0);
	return p;
}

Test(flamechart, consecutive_samples_merge)
{
	struct profile *p = abc_profile();
	char err[256] = "";
	struct flamechart_options o = {.tid = 7};
	char *svg = render(p, &o, 0, err, sizeof(err));
	struct box b[16];
	size_t n = read_boxes(svg, b, 16);
	cr_assert_eq(n, 4, "root, a, b, c: got %zu boxes", n);
	const struct box *root = find(b, n, "app (tid 7)", 0, 0);
	const struct box *a = find(b, n, "a", 1, 0);
	const struct box *bb = find(b, n, "b", 2, 0);
	const struct box *c = find(b, n, "c", 2, 30 * MS);
	cr_assert(root && a && bb && c);
	cr_assert_eq(root->dur, 50 * MS);
	cr_assert_eq(a->dur, 50 * MS, "a spans 5 samples");
	cr_assert_eq(a->samples, 5);
	cr_assert_eq(bb->dur, 30 * MS);
	cr_assert_eq(bb->samples, 3);
	cr_assert_eq(c->dur, 20 * MS);
	cr_assert_eq(c->samples, 2);
	cr_assert_not_null(strstr(svg, ">0 ms</text>"), "time axis from the thread's start");
	svg_assert_well_formed(svg, "");
	free(svg);
	profile_free(p);
}

Test(flamechart, samples_out_of_order_and_gaps)
{
	struct profile *p = profile_new();
	profile_meta_set(p, "frequency_hz", "100");
	/* added out of order; a 70 ms gap between 20 and 100 ms */
	add(p, 100 * MS, 7, "app", "a;b", 0);
	add(p, 0, 7, "app", "a;b", 0);
	add(p, 20 * MS, 7, "app", "a;b", 0);
	add(p, 10 * MS, 7, "app", "a;b", 0);
	add(p, 110 * MS, 7, "app", "a;b", 0);
	char err[256] = "";
	struct flamechart_options o = {.tid = 7};
	char *svg = render(p, &o, 0, err, sizeof(err));
	struct box b[16];
	size_t n = read_boxes(svg, b, 16);
	cr_assert_eq(count_named(b, n, "a"), 2, "the gap breaks the box");
	const struct box *a1 = find(b, n, "a", 1, 0), *a2 = find(b, n, "a", 1, 100 * MS);
	cr_assert(a1 && a2);
	cr_assert_eq(a1->dur, 30 * MS);
	cr_assert_eq(a1->samples, 3);
	cr_assert_eq(a2->dur, 20 * MS);
	const struct box *root = find(b, n, "app (tid 7)", 0, 0);
	cr_assert(root);
	cr_assert_eq(root->dur, 120 * MS);
	free(svg);
	profile_free(p);
}

Test(flamechart, interval_from_samples_without_frequency)
{
	struct profile *p = profile_new(); /* no frequency_hz: median gap, 5 ms */
	for (int i = 0; i < 4; i++)
		add(p, (uint64_t)i * 5 * MS, 9, "x", "m;f", 0);
	add(p, 500 * MS, 9, "x", "m;g", 0);
	char err[256] = "";
	struct flamechart_options o = {.tid = 9};
	char *svg = render(p, &o, 0, err, sizeof(err));
	struct box b[16];
	size_t n = read_boxes(svg, b, 16);
	const struct box *f = find(b, n, "f", 2, 0), *g = find(b, n, "g", 2, 500 * MS);
	cr_assert(f && g);
	cr_assert_eq(f->dur, 20 * MS);
	cr_assert_eq(g->dur, 5 * MS);
	free(svg);
	profile_free(p);
}

Test(flamechart, busiest_thread_by_default)
{
	struct profile *p = abc_profile();
	add(p, 5000 * MS, 8, "other", "z", 0);
	char err[256] = "";
	struct flamechart_options o = {0};
	char *svg = render(p, &o, 0, err, sizeof(err));
	cr_assert_not_null(strstr(svg, "data-name=\"app (tid 7)\""));
	cr_assert_null(strstr(svg, "data-name=\"z\""));
	free(svg);
	o.tid = 8;
	svg = render(p, &o, 0, err, sizeof(err));
	cr_assert_not_null(strstr(svg, "data-name=\"z\""));
	cr_assert_null(strstr(svg, "data-name=\"a\""));
	free(svg);

	/* tid 0 is the CPUs' idle task: not a thread to default to */
	for (int i = 0; i < 20; i++)
		add(p, 6000 * MS + (uint64_t)i * MS, 0, "swapper", "native_safe_halt", 0);
	o.tid = 0;
	svg = render(p, &o, 0, err, sizeof(err));
	cr_assert_not_null(strstr(svg, "data-name=\"app (tid 7)\""));
	free(svg);
	profile_free(p);
}

Test(flamechart, span_filtering)
{
	struct profile *p = profile_new();
	profile_meta_set(p, "frequency_hz", "1000");
	uint32_t probe = profile_probe_add(p, "handle_request", "/bin/x", 0x1000);
	uint32_t th = profile_thread_intern(p, 100, 7, "app");
	struct span sp = {.id = 42, .start_ns = 1005 * MS, .duration_ns = 30 * MS, .probe = probe,
			  .thread = th, .depth = 1};
	cr_assert_geq(profile_span_add(p, &sp), 0);
	add(p, 1000 * MS, 7, "app", "main;idle", 0);
	add(p, 1010 * MS, 7, "app", "main;handle_request;parse", 42);
	add(p, 1011 * MS, 7, "app", "main;handle_request;parse", 42);
	add(p, 1020 * MS, 7, "app", "main;handle_request;reply", 42);
	add(p, 1040 * MS, 7, "app", "main;idle", 0);
	char err[256] = "";
	struct flamechart_options o = {.span_id = 42};
	char *svg = render(p, &o, 0, err, sizeof(err));
	struct box b[32];
	size_t n = read_boxes(svg, b, 32);
	cr_assert_eq(count_named(b, n, "idle"), 0, "only the span's samples");
	const struct box *root = find(b, n, "handle_request (span 42)", 0, 0);
	cr_assert(root);
	cr_assert_eq(root->dur, 30 * MS, "x spans the span");
	cr_assert_eq(root->samples, 3);
	const struct box *parse = find(b, n, "parse", 3, 5 * MS);
	const struct box *reply = find(b, n, "reply", 3, 15 * MS);
	cr_assert(parse && reply);
	cr_assert_eq(parse->dur, 2 * MS, "1 ms cap, then the next sample");
	cr_assert_eq(parse->samples, 2);
	cr_assert_eq(reply->dur, 1 * MS);
	svg_assert_well_formed(svg, "");
	free(svg);

	/* the span's thread named explicitly is fine, another is not */
	o.tid = 7;
	free(render(p, &o, 0, err, sizeof(err)));
	o.tid = 8;
	free(render(p, &o, -1, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "span 42"), "message: %s", err);
	profile_free(p);
}

Test(flamechart, errors)
{
	struct profile *p = abc_profile();
	char err[256] = "";
	struct flamechart_options o = {.tid = 12345};
	free(render(p, &o, -1, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "12345"), "message: %s", err);
	o = (struct flamechart_options){.span_id = 99};
	err[0] = '\0';
	free(render(p, &o, -1, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "99"), "message: %s", err);
	free(render(p, &o, -1, NULL, 0)); /* no buffer for the message: still fine */
	profile_free(p);

	struct profile *e = profile_new();
	o = (struct flamechart_options){0};
	free(render(e, &o, -1, err, sizeof(err)));
	cr_assert_not_null(strstr(err, "no samples"), "message: %s", err);
	profile_free(e);
}

/* A recording made with --off-cpu --wakers: the chart of a call, or of a
 * thread, takes exactly the samples the view engine takes for that call or
 * thread (view.h): its on-CPU samples, never its off-CPU intervals, the
 * wakers of its waits or sonde's own cost. */
static size_t taken_by_view(const struct profile *p, const struct view *v)
{
	size_t n = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		n += view_takes(v, p, &p->samples[i]);
	return n;
}

static size_t boxes_named(const struct flamechart_layout *l, const char *name)
{
	size_t n = 0;
	for (size_t i = 0; i < l->nboxes; i++)
		n += l->boxes[i].fn != UINT32_MAX && strcmp(l->ff->name[l->boxes[i].fn], name) == 0;
	return n;
}

Test(flamechart, takes_the_samples_the_view_engine_takes)
{
	struct profile *p = profile_new();
	profile_meta_set(p, "frequency_hz", "1000");
	uint32_t cpu = profile_event_intern(p, "cpu-clock");
	uint32_t off = profile_event_intern(p, PROFILE_EVENT_OFFCPU);
	uint32_t wake = profile_event_intern(p, PROFILE_EVENT_WAKER);
	cr_assert_eq(cpu, 0);
	uint32_t probe = profile_probe_add(p, "handle_request", "/bin/x", 0x1000);
	uint32_t th = profile_thread_intern(p, 100, 7, "app");
	struct span sp = {.id = 42, .start_ns = 1000 * MS, .duration_ns = 30 * MS, .probe = probe,
			  .thread = th, .depth = 1};
	cr_assert_geq(profile_span_add(p, &sp), 0);
	uint32_t asleep = view_state_frame(p, TSTATE_SLEEPING, 0 /* read */);
	uint32_t wakes = view_waker_frame(p, "app");
	uint32_t own = frames_intern(p->frames, "[sonde]", "", "", 0, FRAME_OVERHEAD);
	/* In call 42 on tid 7: 3 on-CPU samples, one of sonde's own cost, a
	 * 10 ms wait in read and the stack of the thread that ended it (tid
	 * 9). Outside it: one on-CPU sample; and tid 8 spends the run off CPU
	 * (12 waits: more records than tid 7 has samples). */
	add(p, 1001 * MS, 7, "app", "main;handle_request;parse", 42);
	add(p, 1002 * MS, 7, "app", "main;handle_request;parse", 42);
	add_event(p, &(struct test_event){.t = 1003 * MS, .tid = 7, .comm = "app",
					  .stack = "main;handle_request;parse", .span = 42,
					  .event = cpu, .weight = 1, .leaf = own});
	add_event(p, &(struct test_event){.t = 1004 * MS, .tid = 7, .comm = "app",
					  .stack = "main;handle_request;recv", .span = 42,
					  .event = off, .weight = 10 * MS, .leaf = asleep});
	add_event(p, &(struct test_event){.t = 1004 * MS, .tid = 9, .comm = "helper",
					  .stack = "helper_main;send", .span = 42,
					  .event = wake, .weight = 10 * MS, .leaf = wakes});
	add(p, 1015 * MS, 7, "app", "main;handle_request;reply", 42);
	add(p, 1050 * MS, 7, "app", "main;idle", 0);
	for (int i = 0; i < 12; i++)
		add_event(p, &(struct test_event){.t = 1000 * MS + (uint64_t)i * 5 * MS, .tid = 8,
						  .comm = "sleeper", .stack = "sleeper_main;wait",
						  .event = off, .weight = 5 * MS, .leaf = asleep});

	char err[256] = "";
	struct flamechart_layout l;
	/* The call: 3 on-CPU samples. */
	struct flamechart_options o = {.span_id = 42};
	cr_assert_eq(flamechart_layout(p, &o, &l, err, sizeof(err)), 0, "%s", err);
	struct view v = {.span_id = 42};
	cr_assert_eq(taken_by_view(p, &v), 3);
	cr_assert_eq(l.nsamples, 3);
	cr_assert_eq(l.boxes[0].samples, 3);
	cr_assert_eq(boxes_named(&l, "[sonde]"), 0);
	cr_assert_eq(boxes_named(&l, "[sleeping: read]"), 0);
	cr_assert_eq(boxes_named(&l, "recv"), 0, "the off-CPU interval's stack");
	cr_assert_eq(boxes_named(&l, "send"), 0, "the waker's stack");
	cr_assert_eq(boxes_named(&l, "parse"), 1);
	flamechart_layout_free(&l);
	/* With sonde's own cost: 4, one box [sonde] under parse. */
	o.show_overhead = v.show_overhead = true;
	cr_assert_eq(flamechart_layout(p, &o, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(taken_by_view(p, &v), 4);
	cr_assert_eq(l.nsamples, 4);
	cr_assert_eq(boxes_named(&l, "[sonde]"), 1);
	flamechart_layout_free(&l);

	/* The thread, by default the busiest: tid 7's 4 on-CPU samples (but
	 * sonde's own), not tid 8, whose records are all off-CPU intervals. */
	o = (struct flamechart_options){0};
	v = (struct view){.tid = 7};
	cr_assert_eq(flamechart_layout(p, &o, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(l.root_label, "app (tid 7)");
	cr_assert_eq(taken_by_view(p, &v), 4);
	cr_assert_eq(l.nsamples, 4);
	cr_assert_eq(boxes_named(&l, "[sleeping: read]"), 0);
	cr_assert_eq(boxes_named(&l, "idle"), 1);
	flamechart_layout_free(&l);
	/* Named, tid 8 has nothing a chart draws: an empty chart. */
	o.tid = 8;
	cr_assert_eq(flamechart_layout(p, &o, &l, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(l.nsamples, 0);
	cr_assert_eq(boxes_named(&l, "wait"), 0);
	flamechart_layout_free(&l);
	profile_free(p);

	/* Only off-CPU intervals: no thread to default to, and says why. */
	p = profile_new();
	profile_event_intern(p, "cpu-clock");
	off = profile_event_intern(p, PROFILE_EVENT_OFFCPU);
	add_event(p, &(struct test_event){.t = 1000 * MS, .tid = 8, .comm = "sleeper",
					  .stack = "sleeper_main;wait", .event = off,
					  .weight = 5 * MS});
	o = (struct flamechart_options){0};
	cr_assert_eq(flamechart_layout(p, &o, &l, err, sizeof(err)), -1);
	cr_assert(strstr(err, "on-CPU"), "%s", err);
	profile_free(p);
}

/* The chart's colours are flamesvg's, for every kind. */
Test(flamechart, colours_match_flamesvg)
{
	struct profile *p = profile_new();
	uint32_t fs[4] = {frames_intern(p->frames, "main", "/bin/x", "", 0, FRAME_USER),
			  frames_intern(p->frames, "ns::Cls::fn", "/bin/x", "", 0, FRAME_USER),
			  frames_intern(p->frames, "Lcom/x;::run", "", "", 0, FRAME_JIT),
			  frames_intern(p->frames, "do_sys_open", "[kernel.kallsyms]", "", 0,
					FRAME_KERNEL)};
	struct sample s = {.time_ns = 1000, .weight = 1,
			   .thread = profile_thread_intern(p, 1, 1, "t"),
			   .stack = profile_stack_intern(p, fs, 4)};
	profile_add_sample(p, &s, NULL, 0);
	char err[256] = "";
	struct flamechart_options o = {0};
	char *chart = render(p, &o, 0, err, sizeof(err));
	struct box cb[16];
	size_t cn = read_boxes(chart, cb, 16);
	cr_assert_eq(cn, 5);

	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_NONE);
	char *svg = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&svg, &size);
	cr_assert_eq(flamesvg_write(f, t, NULL), 0);
	fclose(f);
	flame_free(t);
	const char *names[4] = {"main", "ns::Cls::fn", "Lcom/x;::run_[j]", "do_sys_open_[k]"};
	for (int i = 0; i < 4; i++) {
		const struct box *b = find(cb, cn, names[i], i + 1, 0);
		cr_assert(b, "%s in the chart", names[i]);
		char key[128];
		snprintf(key, sizeof(key), "data-name=\"%s\"", names[i]);
		const char *g = strstr(svg, key);
		cr_assert(g, "%s in the flame graph", names[i]);
		unsigned rgb[3];
		cr_assert_eq(sscanf(strstr(g, " fill=\"rgb("), " fill=\"rgb(%u,%u,%u)", &rgb[0],
				    &rgb[1], &rgb[2]),
			     3);
		cr_assert(rgb[0] == b->rgb[0] && rgb[1] == b->rgb[1] && rgb[2] == b->rgb[2],
			  "%s: chart rgb(%u,%u,%u), flame graph rgb(%u,%u,%u)", names[i], b->rgb[0],
			  b->rgb[1], b->rgb[2], rgb[0], rgb[1], rgb[2]);
	}
	free(svg);
	free(chart);
	profile_free(p);
}

Test(flamechart, escaping_and_width)
{
	struct profile *p = profile_new();
	add(p, 0, 3, "a<b>&\"c\"", "x<y>&z;\xff\x01", 0);
	add(p, 1 * MS, 3, "a<b>&\"c\"", "x<y>&z;\xff\x01", 0);
	char err[256] = "";
	struct flamechart_options o = {.width = 300, .title = "T & <t>"};
	char *svg = render(p, &o, 0, err, sizeof(err));
	cr_assert_not_null(strstr(svg, "width=\"300\""));
	cr_assert_not_null(strstr(svg, "T &amp; &lt;t&gt;"));
	cr_assert_not_null(strstr(svg, "data-name=\"x&lt;y&gt;&amp;z\""));
	cr_assert_not_null(strstr(svg, "data-name=\"\xef\xbf\xbd?\""));
	svg_assert_well_formed(svg, "");
	free(svg);
	profile_free(p);
}
