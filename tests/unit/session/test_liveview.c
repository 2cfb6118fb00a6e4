/* liveview: the `top -b` snapshot of a hand-built view, line by line — the
 * header, hottest functions (shares, ties by name), hottest stacks (ranked by
 * self weight, root first, cut to the leaf-most 8 with "...;", ties in name
 * order whatever order the stacks were added in), probe blocks with
 * percentiles and slow calls; the EWMA form (shares and rates, no counts);
 * the empty window; drops; the JSON of the status (the control socket's
 * `status` data), exact; and live_view_free owning everything (the
 * sanitizer build checks for leaks). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#endif
#ifdef HAVE_ASAN
#include <sanitizer/allocator_interface.h>
#endif

#include "flame.h"
#include "frames.h"
#include "liveview.h"

#define MS 1000000ULL
#define NOW (100ULL * 1000000000ULL)

struct fixture {
	struct frame_table *ft;
	uint32_t main_, run, work_hot, work_cold, handle, slow_path, sys, a[7];
};

static void fixture_init(struct fixture *f)
{
	f->ft = frames_new();
	f->main_ = frames_intern(f->ft, "main", "", "", 0, FRAME_USER);
	f->run = frames_intern(f->ft, "run", "", "", 0, FRAME_USER);
	/* Interned in an order unlike the names' order. */
	f->work_hot = frames_intern(f->ft, "work_hot", "", "", 0, FRAME_USER);
	f->work_cold = frames_intern(f->ft, "work_cold", "", "", 0, FRAME_USER);
	f->slow_path = frames_intern(f->ft, "slow_path", "", "", 0, FRAME_USER);
	f->handle = frames_intern(f->ft, "handle_request", "", "", 0, FRAME_USER);
	f->sys = frames_intern(f->ft, "do_syscall_64", "", "", 0, FRAME_KERNEL);
	for (int i = 0; i < 7; i++) {
		char name[16];
		snprintf(name, sizeof(name), "a%d", i + 1);
		f->a[i] = frames_intern(f->ft, name, "", "", 0, FRAME_USER);
	}
}

/* Stacks (weights): main;run;work_hot 40, main;run;handle_request;slow_path
 * 20, main;run;work_cold 20, main;run 10, main;run;a1..a7;do_syscall_64 10.
 * `reverse` adds them in the opposite order. */
static struct flame_tree *make_flame(struct fixture *f, bool reverse, uint64_t scale)
{
	struct flame_tree *t = flame_new(f->ft);
	uint32_t s1[] = {f->main_, f->run, f->work_hot};
	uint32_t s2[] = {f->main_, f->run, f->work_cold};
	uint32_t s3[] = {f->main_, f->run, f->handle, f->slow_path};
	uint32_t s4[] = {f->main_, f->run};
	uint32_t s5[] = {f->main_, f->run, f->a[0], f->a[1], f->a[2], f->a[3],
			 f->a[4], f->a[5], f->a[6], f->sys};
	struct {
		uint32_t *s;
		size_t n;
		uint64_t w;
	} st[] = {{s1, 3, 40}, {s2, 3, 20}, {s3, 4, 20}, {s4, 2, 10}, {s5, 10, 10}};
	for (size_t i = 0; i < 5; i++) {
		size_t k = reverse ? 4 - i : i;
		cr_assert_eq(flame_add(t, st[k].s, st[k].n, st[k].w * scale), 0);
	}
	return t;
}

static struct live_view *make_view(struct fixture *f, bool reverse, bool ewma)
{
	uint64_t scale = ewma ? 1000 : 1; /* as live.c scales decayed weights */
	struct live_view *v = calloc(1, sizeof(*v));
	v->flame = make_flame(f, reverse, scale);
	v->total = (double)v->flame->root->total;
	v->fractional = ewma;
	v->now_ns = NOW;
	struct live_hot hot[] = {
		{f->main_, 0, 100},     {f->work_cold, 20, 20}, {f->sys, 10, 10},
		{f->work_hot, 40, 40},  {f->handle, 0, 20},     {f->slow_path, 20, 20},
		{f->run, 10, 100},
	};
	v->nhot = sizeof(hot) / sizeof(hot[0]);
	v->hot = calloc(v->nhot, sizeof(*v->hot));
	for (size_t i = 0; i < v->nhot; i++) {
		size_t k = reverse ? v->nhot - 1 - i : i;
		v->hot[i] = hot[k];
		v->hot[i].self *= (double)scale;
		v->hot[i].total *= (double)scale;
	}

	v->nprobes = 2;
	v->probes = calloc(2, sizeof(*v->probes));
	struct live_probe_view *p = &v->probes[0];
	p->name = strdup("handle_request");
	p->attached = true;
	p->calls = ewma ? 1234.567 : 1234;
	p->calls_per_s = 123.4;
	p->p50_ns = 1200 * 1000;
	p->p90_ns = 2 * MS;
	p->p95_ns = 3100 * 1000;
	p->p99_ns = 10200 * 1000;
	p->max_ns = 15 * MS;
	p->total_calls = 56789;
	p->entered = 60000; /* with a predicate: the others failed it */
	p->predicated = true;
	p->slow_threshold_ns = 3100 * 1000;
	p->slow[0] = (struct live_slow_call){.end_ns = NOW - 1500 * MS, .duration_ns = 12300 * 1000,
					     .pid = 1234, .tid = 1235, .samples = 4,
					     .top_frame = f->slow_path, .span_id = 77};
	p->slow[1] = (struct live_slow_call){.end_ns = NOW - 2500 * MS, .duration_ns = 5 * MS,
					     .pid = 1234, .tid = 1236, .samples = 0, .top_frame = 0,
					     .span_id = 78};
	p->nslow = 2;
	p = &v->probes[1];
	p->name = strdup("libc:malloc");
	p->attached = false;
	p->total_calls = 100;
	p->entered = 100;

	struct live_status *st = &v->status;
	snprintf(st->target, sizeof(st->target), "PID 1234 (server)");
	snprintf(st->sampling, sizeof(st->sampling), "cpu-clock @ 999 Hz");
	snprintf(st->window, sizeof(st->window), ewma ? "EWMA half-life 10s" : "last 10s");
	snprintf(st->view, sizeof(st->view), "all");
	snprintf(st->filter, sizeof(st->filter), "none");
	st->elapsed_s = 12.34;
	st->samples_per_s = 998.1;
	st->calls_per_s = 120;
	st->samples = 12345;
	st->calls = 1234;
	st->held_s = 12;
	st->memory_bytes = 3565158; /* 3.4 MiB */
	return v;
}

static char *print(const struct live_view *v, size_t top_n)
{
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	live_view_print(out, v, top_n);
	fclose(out);
	return text;
}

static const char *HEADER_SLIDING =
	"--- sonde top at 12.3s ---\n"
	"target:   PID 1234 (server)\n"
	"sampling: cpu-clock @ 999 Hz\n"
	"window:   last 10s, 100 samples in view\n"
	"view:     all\n"
	"filter:   none\n"
	"elapsed:  12.3 s\n"
	"rates:    998.1 samples/s, 120.0 calls/s (last 5 s)\n"
	"received: 12345 samples, 1234 calls\n"
	"drops:    0\n"
	"held:     12.0 s of raw data, 3.4 MiB\n";

static const char *TABLES =
	"\n"
	"HOTTEST FUNCTIONS\n"
	" SELF%  TOTAL%  FUNCTION\n"
	"  40.0    40.0  work_hot\n"
	"  20.0    20.0  slow_path\n"
	"  20.0    20.0  work_cold\n"
	"  10.0   100.0  run\n"
	"  10.0    10.0  do_syscall_64_[k]\n"
	"\n"
	"HOTTEST STACKS\n"
	"SHARE%  STACK (root first, leaf last)\n"
	"  40.0  main;run;work_hot\n"
	"  20.0  main;run;handle_request;slow_path\n"
	"  20.0  main;run;work_cold\n"
	"  10.0  main;run\n"
	"  10.0  ...;a1;a2;a3;a4;a5;a6;a7;do_syscall_64_[k]\n";

static const char *PROBES_SLIDING =
	"\n"
	"PROBE handle_request\n"
	"  calls:    1234 in window (123.4/s), 56789 since tracing began\n"
	"  entered:  60000 since tracing began; the calls above are those where its predicate "
	"held\n"
	"  latency:  p50 1.20ms  p90 2.00ms  p95 3.10ms  p99 10.2ms  max 15.0ms\n"
	"  slow:     slower than 3.10ms\n"
	"  latest slow calls (newest first):\n"
	"      DURATION       ENDED       TID  SAMPLES  TOP FUNCTION\n"
	"        12.3ms   1.50s ago      1235        4  slow_path\n"
	"        5.00ms   2.50s ago      1236        0  -\n"
	"\n"
	"PROBE libc:malloc (untraced)\n"
	"  calls:    0 in window (0.0/s), 100 since tracing began\n"
	"  latency:  no calls in this window\n"
	"  slow:     no threshold yet (no calls in the window)\n"
	"  latest slow calls: none\n";

Test(liveview, sliding_snapshot_exact)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	char *text = print(v, 5);
	char want[4096];
	snprintf(want, sizeof(want), "%s%s%s", HEADER_SLIDING, TABLES, PROBES_SLIDING);
	cr_assert_str_eq(text, want);
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

Test(liveview, ties_do_not_depend_on_insertion_order)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *a = make_view(&f, false, false);
	struct live_view *b = make_view(&f, true, false);
	for (size_t top = 0; top <= 8; top++) {
		char *ta = print(a, top), *tb = print(b, top);
		cr_assert_str_eq(ta, tb, "top %zu", top);
		free(ta);
		free(tb);
	}
	live_view_free(a);
	live_view_free(b);
	frames_free(f.ft);
}

Test(liveview, top_n_limits_and_zero_means_all)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	char *text = print(v, 2);
	cr_assert(strstr(text, " SELF%  TOTAL%  FUNCTION\n"
			       "  40.0    40.0  work_hot\n"
			       "  20.0    20.0  slow_path\n"
			       "\n"
			       "HOTTEST STACKS\n"
			       "SHARE%  STACK (root first, leaf last)\n"
			       "  40.0  main;run;work_hot\n"
			       "  20.0  main;run;handle_request;slow_path\n"
			       "\n"
			       "PROBE handle_request\n"),
		  "%s", text);
	free(text);
	text = print(v, 0);
	cr_assert(strstr(text, "  10.0    10.0  do_syscall_64_[k]\n"
			       "   0.0   100.0  main\n"
			       "   0.0    20.0  handle_request\n"
			       "\n"),
		  "%s", text);
	cr_assert(strstr(text, "  10.0  ...;a1;a2;a3;a4;a5;a6;a7;do_syscall_64_[k]\n\nPROBE"),
		  "%s", text);
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

Test(liveview, ewma_shows_shares_and_rates_only)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, true);
	char *text = print(v, 5);
	cr_assert(strstr(text, "window:   EWMA half-life 10s (decayed weights: shares and rates "
			       "only)\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "samples in view"), "%s", text);
	/* Shares are the same as with exact counts (weights scaled by 1000). */
	cr_assert(strstr(text, TABLES), "%s", text);
	cr_assert(strstr(text, "PROBE handle_request\n"
			       "  calls:    123.4/s in window, 56789 since tracing began\n"
			       "  entered:  60000 since tracing began; the calls above are those "
			       "where its predicate held\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "1234 in window"), "%s", text);
	cr_assert_null(strstr(text, "1235 in window"), "%s", text);
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

Test(liveview, empty_window_and_drops)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	flame_free(v->flame);
	v->flame = flame_new(f.ft);
	v->total = 0;
	free(v->hot);
	v->hot = NULL;
	v->nhot = 0;
	v->status.drops = 17;
	snprintf(v->status.drops_detail, sizeof(v->status.drops_detail),
		 "(ring buffer full: 17 samples)");
	char *text = print(v, 5);
	cr_assert(strstr(text, "drops:    17 (ring buffer full: 17 samples)\n"), "%s", text);
	cr_assert(strstr(text, "window:   last 10s, 0 samples in view\n"), "%s", text);
	cr_assert(strstr(text, "held:     12.0 s of raw data, 3.4 MiB\n"
			       "\n"
			       "no samples in this window\n"
			       "\n"
			       "PROBE handle_request\n"),
		  "%s", text);
	cr_assert_null(strstr(text, "HOTTEST"), "%s", text);
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

Test(liveview, snapshots_split_on_their_first_line)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	char *text = print(v, 5);
	cr_assert(!strncmp(text, "--- sonde top at 12.3s ---\n", 27));
	/* The marker appears once: a stream of snapshots splits cleanly. */
	cr_assert_null(strstr(text + 1, "--- sonde top"));
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

/* Bytes the program holds from malloc now: ASan's allocator counts them
 * exactly; glibc's mallinfo2 does when its per-thread cache is off (freed
 * chunks there still count as in use): tests/CMakeLists.txt runs this test
 * with GLIBC_TUNABLES=glibc.malloc.tcache_count=0. Returns false when
 * neither can tell. */
static bool bytes_in_use(size_t *out)
{
#ifdef HAVE_ASAN
	*out = __sanitizer_get_current_allocated_bytes();
	return true;
#else
	const char *t = getenv("GLIBC_TUNABLES");
	if (!t || !strstr(t, "glibc.malloc.tcache_count=0"))
		return false;
	struct mallinfo2 mi = mallinfo2();
	*out = mi.uordblks + mi.hblkhd;
	return true;
#endif
}

/* Freeing a view gives back every byte building it took. */
Test(liveview, free_owns_everything)
{
	live_view_free(NULL);
	struct fixture f;
	fixture_init(&f);
	size_t before, after;
	if (!bytes_in_use(&before))
		cr_skip_test("no allocator count to trust: run with "
			     "GLIBC_TUNABLES=glibc.malloc.tcache_count=0 (CTest does)");
	/* A view as live_view_build makes it: flame, hot rows, probe names;
	 * and a minimal one: nothing but the struct. */
	live_view_free(make_view(&f, false, false));
	live_view_free(calloc(1, sizeof(struct live_view)));
	cr_assert(bytes_in_use(&after));
	cr_assert_eq(after, before, "live_view_free left %zd bytes behind",
		     (ssize_t)after - (ssize_t)before);
	frames_free(f.ft);
}

/* With every sample's weight in the window known, the view's share of it. */
Test(liveview, view_share_of_the_window)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	v->status.window_weight = 400;
	char *text = print(v, 5);
	cr_assert(strstr(text, "window:   last 10s, 100 of 400 samples in view (25.0%)\n"), "%s",
		  text);
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}

Test(liveview, status_json_exact)
{
	struct fixture f;
	fixture_init(&f);
	struct live_view *v = make_view(&f, false, false);
	v->status.drops = 7;
	snprintf(v->status.drops_detail, sizeof(v->status.drops_detail), "(ring \"full\")");
	v->probes[1].slow_threshold_ns = 0; /* not known yet: null */
	v->probes[0].buckets = calloc(2, sizeof(struct live_bucket));
	v->probes[0].buckets[0] = (struct live_bucket){1000000, 1043000, 3};
	v->probes[0].buckets[1] = (struct live_bucket){2000000, 2090000, 1.5};
	v->probes[0].nbuckets = 2;
	/* auto found one mode: the p95, said */
	snprintf(v->probes[0].slow_threshold_note, sizeof(v->probes[0].slow_threshold_note), "%s",
		 LIVE_AUTO_FALLBACK);
	/* A slow call's time split: its states largest first, the function
	 * each waited in (null: the traced one itself), and the TUI's text. */
	struct live_slow_call *c = &v->probes[0].slow[0];
	c->split.on_ns = 4 * MS;
	c->split.off_ns = 7 * MS;
	c->split.nstates = 2;
	c->split.off[0].state = frames_intern(f.ft, "[runnable]", "", "", 0, FRAME_STATE);
	c->split.off[0].ns = 1 * MS;
	c->split.off[1].state = frames_intern(f.ft, "[sleeping: read]", "", "", 0, FRAME_STATE);
	c->split.off[1].callee = f.slow_path;
	c->split.off[1].ns = 6 * MS;
	/* A line probe: its hits, and in which calls of handle_request it ran
	 * (shares as fractions, report --json's names). */
	struct live_probe_view *line = &v->probes[1];
	free((char *)line->name);
	line->name = strdup("lines.c:19");
	line->line = true;
	line->predicate = strdup("v > 0");
	line->in_calls = calloc(1, sizeof(*line->in_calls));
	line->in_calls[0] = (struct line_in_calls){.probe = 0, .calls = 300, .hit = 100,
						   .slow_ns = 3100000, .slow = 8, .slow_hit = 6};
	line->nin_calls = 1;
	char *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	live_view_write_json(out, v);
	fclose(out);
	cr_assert_str_eq(
		text,
		"{\"target\":\"PID 1234 (server)\",\"sampling\":\"cpu-clock @ 999 Hz\","
		"\"window\":\"last 10s\",\"view\":\"all\",\"filter\":\"none\",\"time\":\"on-cpu\","
		"\"elapsed_s\":12.34,"
		"\"samples\":12345,\"samples_per_s\":998.1,\"calls\":1234,\"calls_per_s\":120,"
		"\"drops\":7,\"drops_detail\":\"(ring \\\"full\\\")\",\"held_s\":12,"
		"\"memory_bytes\":3565158,\"probes\":["
		"{\"name\":\"handle_request\",\"attached\":true,\"kind\":\"function\","
		"\"calls_in_window\":1234,"
		"\"calls_per_s\":123.4,\"p50_ns\":1200000,\"p90_ns\":2000000,\"p95_ns\":3100000,"
		"\"p99_ns\":10200000,\"max_ns\":15000000,\"total_calls\":56789,\"entered\":60000,"
		"\"slow_threshold_ns\":3100000,"
		"\"slow_threshold_note\":\"auto: no second mode; using p95\","
		"\"buckets\":[[1000000,1043000,3],[2000000,2090000,1.5]],"
		"\"spec\":null,\"predicate\":null,\"values\":{},\"in_calls\":[],"
		"\"slow\":[{\"span_id\":77,\"duration_ns\":12300000,\"ago_ns\":1500000000,"
		"\"pid\":1234,\"tid\":1235,\"samples\":4,\"on_cpu_ns\":4000000,\"off_cpu_ns\":7000000,"
		"\"top\":\"slow_path\",\"off_cpu\":[{\"state\":\"[sleeping: read]\",\"ns\":6000000,"
		"\"in\":\"slow_path\"},{\"state\":\"[runnable]\",\"ns\":1000000,\"in\":null}],"
		"\"split\":\"on-CPU ~4.00ms off-CPU 7.00ms: [sleeping: read] 6.00ms in slow_path, "
		"[runnable] 1.00ms in (self)\"},"
		"{\"span_id\":78,\"duration_ns\":5000000,\"ago_ns\":2500000000,\"pid\":1234,"
		"\"tid\":1236,\"samples\":0,\"on_cpu_ns\":0,\"off_cpu_ns\":0,\"top\":null,"
		"\"off_cpu\":[],\"split\":\"\"}]},"
		"{\"name\":\"lines.c:19\",\"attached\":false,\"kind\":\"line\","
		"\"calls_in_window\":0,"
		"\"calls_per_s\":0,\"p50_ns\":0,\"p90_ns\":0,\"p95_ns\":0,\"p99_ns\":0,"
		"\"max_ns\":0,\"total_calls\":100,\"entered\":100,\"slow_threshold_ns\":null,"
		"\"slow_threshold_note\":null,\"buckets\":[],\"spec\":null,\"predicate\":\"v > 0\",\"values\":{},"
		"\"in_calls\":[{\"probe\":\"handle_request\",\"calls\":300,\"hit\":100,"
		"\"share\":0.333333,\"slow_ns\":3100000,\"slow_recorded\":8,\"slow_hit\":6,"
		"\"slow_share\":0.75}],\"slow\":[]}]}");
	free(text);
	live_view_free(v);
	frames_free(f.ft);
}
