/* Unit tests for the view (model/view.h): each condition a view sets, the
 * span classes, and the rule for samples whose call has no record, offline
 * and live. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "query.h"
#include "view.h"
#include "sonde_abi.h"
#include "viewtree.h"

#define MS 1000000ull

enum { S_SLOW, S_FAST, S_OTHER, S_OPEN, S_LOST, S_OVERHEAD, S_RECURSIVE, S_EXACT, NSAMPLES };

/* Threads: srv (pid 100, tid 100), worker (pid 100, tid 101), other (pid
 * 200, tid 200). Probe 0 "work" (threshold 2ms in the tests), probe 1
 * "outer". One sample of each kind, in that order, at 1000 * (index + 1) ns,
 * weight index + 1 (so every subset has its own total):
 *   S_SLOW      srv,    in work call 1 (5ms)
 *   S_FAST      worker, in work call 2 (1ms), inside outer call 9
 *   S_OTHER     other,  in no call
 *   S_OPEN      srv,    in work call 3, still running at the end (3ms so far)
 *   S_LOST      srv,    in work call 4, which has no record
 *   S_OVERHEAD  srv,    in work call 1, leaf "[sonde]"
 *   S_RECURSIVE worker, in work call 5 (1ms) and, nested, work call 6 (5ms)
 *   S_EXACT     worker, in work call 7 (exactly 2ms) */
static struct profile *fixture(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t m = frames_intern(p->frames, "main", "/bin/x", "x.c", 1, FRAME_USER);
	uint32_t w = frames_intern(p->frames, "work", "/bin/x", "x.c", 2, FRAME_USER);
	uint32_t o = frames_intern(p->frames, "[sonde]", "", "", 0, FRAME_OVERHEAD);
	uint32_t plain = profile_stack_intern(p, (uint32_t[]){m, w}, 2);
	uint32_t over = profile_stack_intern(p, (uint32_t[]){m, w, o}, 3);
	uint32_t srv = profile_thread_intern(p, 100, 100, "srv");
	uint32_t worker = profile_thread_intern(p, 100, 101, "worker");
	uint32_t other = profile_thread_intern(p, 200, 200, "other");
	cr_assert_eq(profile_probe_add(p, "work", "/bin/x", 0x10), 0);
	cr_assert_eq(profile_probe_add(p, "outer", "/bin/x", 0x20), 1);
	struct span spans[] = {
		{.id = 1, .start_ns = 500, .duration_ns = 5 * MS, .probe = 0, .thread = srv},
		{.id = 2, .start_ns = 1500, .duration_ns = 1 * MS, .probe = 0, .thread = worker},
		{.id = 3, .start_ns = 3500, .duration_ns = 3 * MS, .probe = 0, .thread = srv,
		 .open = true},
		{.id = 5, .start_ns = 6500, .duration_ns = 1 * MS, .probe = 0, .thread = worker},
		{.id = 6, .start_ns = 6600, .duration_ns = 5 * MS, .probe = 0, .thread = worker},
		{.id = 7, .start_ns = 7500, .duration_ns = 2 * MS, .probe = 0, .thread = worker},
		{.id = 9, .start_ns = 1400, .duration_ns = 9 * MS, .probe = 1, .thread = worker},
	};
	for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++)
		cr_assert_geq(profile_span_add(p, &spans[i]), 0);
	struct {
		uint32_t thread, stack;
		struct span_link links[2];
		size_t nlinks;
	} smp[NSAMPLES] = {
		[S_SLOW] = {srv, plain, {{1, 0}}, 1},
		[S_FAST] = {worker, plain, {{9, 1}, {2, 0}}, 2},
		[S_OTHER] = {other, plain, {{0}}, 0},
		[S_OPEN] = {srv, plain, {{3, 0}}, 1},
		[S_LOST] = {srv, plain, {{4, 0}}, 1},
		[S_OVERHEAD] = {srv, over, {{1, 0}}, 1},
		[S_RECURSIVE] = {worker, plain, {{5, 0}, {6, 0}}, 2},
		[S_EXACT] = {worker, plain, {{7, 0}}, 1},
	};
	for (int i = 0; i < NSAMPLES; i++) {
		struct sample s = {.time_ns = 1000ull * (uint64_t)(i + 1),
				   .weight = (uint64_t)i + 1,
				   .thread = smp[i].thread,
				   .stack = smp[i].stack};
		cr_assert_eq(profile_add_sample(p, &s, smp[i].links, smp[i].nlinks), 0);
	}
	return p;
}

/* The samples a view takes, as a bit set by sample index. */
static unsigned taken(const struct view *v, const struct profile *p)
{
	unsigned set = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		if (view_takes(v, p, &p->samples[i]))
			set |= 1u << i;
	return set;
}

#define BIT(x) (1u << (x))
#define ALL_BUT_OVERHEAD (((1u << NSAMPLES) - 1) & ~BIT(S_OVERHEAD))

Test(view, no_view_takes_all_but_sondes_own_cost)
{
	struct profile *p = fixture();
	cr_assert_eq(taken(NULL, p), ALL_BUT_OVERHEAD);
	struct view v = {0};
	cr_assert_eq(taken(&v, p), ALL_BUT_OVERHEAD);
	v.show_overhead = true;
	cr_assert_eq(taken(&v, p), (1u << NSAMPLES) - 1);
	/* 1 + 2 + ... + 8, less S_OVERHEAD's weight 6 */
	cr_assert_eq(viewtree_total_weight(p, NULL), 36 - 6);
	profile_free(p);
}

Test(view, time_range_is_inclusive)
{
	struct profile *p = fixture();
	struct view v = {.has_range = true, .start_ns = 2000, .end_ns = 4000};
	cr_assert_eq(taken(&v, p), BIT(S_FAST) | BIT(S_OTHER) | BIT(S_OPEN));
	v.start_ns = v.end_ns = 3000;
	cr_assert_eq(taken(&v, p), BIT(S_OTHER));
	v.start_ns = 3001;
	v.end_ns = 3999;
	cr_assert_eq(taken(&v, p), 0);
	profile_free(p);
}

Test(view, pid_tid_and_comm_each_and_together)
{
	struct profile *p = fixture();
	unsigned srv = BIT(S_SLOW) | BIT(S_OPEN) | BIT(S_LOST);
	unsigned worker = BIT(S_FAST) | BIT(S_RECURSIVE) | BIT(S_EXACT);
	struct view v = {.pid = 100};
	cr_assert_eq(taken(&v, p), srv | worker);
	v = (struct view){.pid = 200};
	cr_assert_eq(taken(&v, p), BIT(S_OTHER));
	v = (struct view){.tid = 101};
	cr_assert_eq(taken(&v, p), worker);
	v = (struct view){.comm = "srv"};
	cr_assert_eq(taken(&v, p), srv);
	v = (struct view){.comm = "sr"};
	cr_assert_eq(taken(&v, p), 0, "a name matches whole, not by prefix");
	v = (struct view){.comm = ""};
	cr_assert_eq(taken(&v, p), ALL_BUT_OVERHEAD, "an empty name is no filter");
	v = (struct view){.pid = 100, .comm = "worker"};
	cr_assert_eq(taken(&v, p), worker);
	v = (struct view){.pid = 200, .comm = "worker"};
	cr_assert_eq(taken(&v, p), 0, "every filter given must hold");
	v = (struct view){.pid = 100, .tid = 200};
	cr_assert_eq(taken(&v, p), 0);
	v = (struct view){.pid = -1, .tid = -1};
	cr_assert_eq(taken(&v, p), ALL_BUT_OVERHEAD, "negative ids are no filter");
	profile_free(p);
}

Test(view, one_call_by_its_span_id)
{
	/* A sample is in call N when N is among its calls in flight, whatever
	 * the probe or depth; the other conditions still hold. */
	struct profile *p = fixture();
	struct view v = {.span_id = 1};
	cr_assert_eq(taken(&v, p), BIT(S_SLOW));
	v.show_overhead = true;
	cr_assert_eq(taken(&v, p), BIT(S_SLOW) | BIT(S_OVERHEAD));
	v = (struct view){.span_id = 9}; /* "outer", enclosing call 2 */
	cr_assert_eq(taken(&v, p), BIT(S_FAST));
	v = (struct view){.span_id = 6}; /* nested in call 5 */
	cr_assert_eq(taken(&v, p), BIT(S_RECURSIVE));
	v = (struct view){.span_id = 4}; /* no record: the samples name it all the same */
	cr_assert_eq(taken(&v, p), BIT(S_LOST));
	v = (struct view){.span_id = 2, .tid = 100};
	cr_assert_eq(taken(&v, p), 0, "every condition given must hold");
	v = (struct view){.span_id = 8};
	cr_assert_eq(taken(&v, p), 0);
	profile_free(p);
}

/* The calls a view takes (view_takes_call), as a bit set by span id. */
static unsigned calls_taken(const struct view *v, const struct profile *p)
{
	unsigned set = 0;
	for (size_t i = 0; i < p->nspans; i++)
		if (view_takes_call(v, p, &p->spans[i]))
			set |= 1u << p->spans[i].id;
	return set;
}

Test(view, calls_by_class_and_by_the_thread_and_time_filters)
{
	struct profile *p = fixture();
	/* work's calls: 1 (srv, 5ms), 2 (worker, 1ms), 3 (srv, 3ms so far,
	 * still running), 5 (worker, 1ms), 6 (worker, 5ms), 7 (worker, 2ms);
	 * outer's: 9 (worker, 9ms). */
	struct view v = {0};
	cr_assert_eq(calls_taken(&v, p), BIT(1) | BIT(2) | BIT(3) | BIT(5) | BIT(6) | BIT(7) | BIT(9));
	cr_assert_eq(calls_taken(NULL, p), calls_taken(&v, p));
	v = (struct view){.span_class = SPAN_IN, .probe = 1};
	cr_assert_eq(calls_taken(&v, p), BIT(9));
	v = (struct view){.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS};
	cr_assert_eq(calls_taken(&v, p), BIT(1) | BIT(3) | BIT(6));
	v.span_class = SPAN_FAST;
	cr_assert_eq(calls_taken(&v, p), BIT(2) | BIT(5) | BIT(7), "2 ms exactly is fast");
	v = (struct view){.span_class = SPAN_BAND, .probe = 0, .band_lo_ns = 1 * MS,
			  .band_hi_ns = 2 * MS};
	cr_assert_eq(calls_taken(&v, p), BIT(2) | BIT(5) | BIT(7));
	v.span_class = SPAN_NOT_BAND;
	cr_assert_eq(calls_taken(&v, p), BIT(1) | BIT(3) | BIT(6));
	/* The thread filters, as for samples. */
	v = (struct view){.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS, .tid = 101};
	cr_assert_eq(calls_taken(&v, p), BIT(6));
	v.tid = 0;
	v.comm = "srv";
	cr_assert_eq(calls_taken(&v, p), BIT(1) | BIT(3));
	v.comm = NULL;
	v.pid = 200;
	cr_assert_eq(calls_taken(&v, p), 0);
	/* A time range takes the calls that started in it. */
	v = (struct view){.has_range = true, .start_ns = 1000, .end_ns = 4000};
	cr_assert_eq(calls_taken(&v, p), BIT(2) | BIT(3) | BIT(9));
	v.span_id = 3;
	cr_assert_eq(calls_taken(&v, p), BIT(3));
	/* A sample's class is its outermost call's: for every sample in a call
	 * of work that has a record, each class takes both or neither. */
	enum span_class classes[] = {SPAN_IN, SPAN_SLOW, SPAN_FAST, SPAN_BAND, SPAN_NOT_BAND};
	for (size_t c = 0; c < sizeof(classes) / sizeof(classes[0]); c++) {
		v = (struct view){.span_class = classes[c], .probe = 0, .threshold_ns = 2 * MS,
				  .band_lo_ns = 1 * MS, .band_hi_ns = 2 * MS, .show_overhead = true};
		for (size_t i = 0; i < p->nsamples; i++) {
			const struct sample *s = &p->samples[i];
			for (uint32_t k = 0; k < s->nlinks; k++) {
				const struct span_link *l = &p->span_links[s->links + k];
				int64_t span = profile_span_find(p, l->span_id);
				if (l->probe != 0)
					continue;
				if (span >= 0)
					cr_assert_eq(view_takes(&v, p, s),
						     view_takes_call(&v, p, &p->spans[span]),
						     "class %d, sample %zu", (int)classes[c], i);
				break; /* the outermost call decides */
			}
		}
	}
	profile_free(p);
}

static bool odd_weight(const struct profile *p, const struct sample *s)
{
	(void)p;
	return s->weight % 2 == 1;
}

Test(view, exclude)
{
	struct profile *p = fixture();
	struct view v = {.exclude = odd_weight};
	/* even weights: indexes 1, 3, 5 (overhead, left out), 7 */
	cr_assert_eq(taken(&v, p), BIT(S_FAST) | BIT(S_OPEN) | BIT(S_EXACT));
	profile_free(p);
}

Test(view, in_takes_every_sample_inside_a_call_record_or_not)
{
	struct profile *p = fixture();
	struct view v = {.span_class = SPAN_IN, .probe = 0};
	cr_assert_eq(taken(&v, p), BIT(S_SLOW) | BIT(S_FAST) | BIT(S_OPEN) | BIT(S_LOST) |
				       BIT(S_RECURSIVE) | BIT(S_EXACT));
	v.probe = 1;
	cr_assert_eq(taken(&v, p), BIT(S_FAST), "outer: a call that is not the innermost");
	profile_free(p);
}

Test(view, slow_and_fast_by_the_outermost_call)
{
	struct profile *p = fixture();
	struct view v = {.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS};
	/* S_OPEN: still running at the end, counted with the 3ms it had run */
	cr_assert_eq(taken(&v, p), BIT(S_SLOW) | BIT(S_OPEN));
	v.span_class = SPAN_FAST;
	/* S_RECURSIVE: its outermost call (1ms) decides, not the nested 5ms one;
	 * S_EXACT: a call of exactly the threshold is not slower than it */
	cr_assert_eq(taken(&v, p), BIT(S_FAST) | BIT(S_RECURSIVE) | BIT(S_EXACT));
	v.threshold_ns = 2 * MS - 1;
	cr_assert_eq(taken(&v, p), BIT(S_FAST) | BIT(S_RECURSIVE));
	v.span_class = SPAN_SLOW;
	cr_assert_eq(taken(&v, p), BIT(S_SLOW) | BIT(S_OPEN) | BIT(S_EXACT));
	v = (struct view){.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS, .pid = 200};
	cr_assert_eq(taken(&v, p), 0, "the other conditions hold too");
	profile_free(p);
}

Test(view, a_call_without_record_is_in_neither_slow_nor_fast)
{
	struct profile *p = fixture();
	struct view slow = {.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS};
	struct view fast = slow;
	fast.span_class = SPAN_FAST;
	struct view in = {.span_class = SPAN_IN, .probe = 0};
	const struct sample *lost = &p->samples[S_LOST];
	cr_assert(view_takes(&in, p, lost));
	cr_assert_not(view_takes(&slow, p, lost));
	cr_assert_not(view_takes(&fast, p, lost));
	/* so slow and fast split in, less the samples of unknown duration */
	cr_assert_eq(taken(&slow, p) | taken(&fast, p), taken(&in, p) & ~BIT(S_LOST));
	cr_assert_eq(taken(&slow, p) & taken(&fast, p), 0);
	cr_assert_eq(view_count_unknown(&slow, p), S_LOST + 1, "its weight");
	cr_assert_eq(view_count_unknown(&fast, p), S_LOST + 1);
	cr_assert_eq(view_count_unknown(&in, p), S_LOST + 1);
	struct view elsewhere = slow;
	elsewhere.tid = 101;
	cr_assert_eq(view_count_unknown(&elsewhere, p), 0, "counted within the view's filters");
	cr_assert_eq(view_count_unknown(NULL, p), 0);
	profile_free(p);
}

Test(view, live_waits_for_records_and_thresholds)
{
	struct profile *p = fixture();
	struct view v = {.span_class = SPAN_SLOW, .probe = 0, .threshold_ns = 2 * MS};
	const struct sample *lost = &p->samples[S_LOST], *slow = &p->samples[S_SLOW];
	struct view_live now = {.now_ns = lost->time_ns};
	/* a record that may still come: wait */
	cr_assert_eq(view_decide(&v, p, lost, &now), VIEW_WAIT);
	now.now_ns = lost->time_ns + 2 * MS + VIEW_RECORD_SLACK_NS;
	cr_assert_eq(view_decide(&v, p, lost, &now), VIEW_WAIT, "not yet past the slack");
	/* no record the threshold plus the slack after the sample: the call was
	 * still running, so it is slow */
	now.now_ns++;
	cr_assert_eq(view_decide(&v, p, lost, &now), VIEW_TAKE);
	v.span_class = SPAN_FAST;
	cr_assert_eq(view_decide(&v, p, lost, &now), VIEW_SKIP);
	/* samples with a record are decided at once */
	now.now_ns = slow->time_ns;
	cr_assert_eq(view_decide(&v, p, slow, &now), VIEW_SKIP);
	v.span_class = SPAN_SLOW;
	cr_assert_eq(view_decide(&v, p, slow, &now), VIEW_TAKE);
	/* no threshold yet: slow and fast wait; in, and the filters, do not */
	now.threshold_unknown = true;
	cr_assert_eq(view_decide(&v, p, slow, &now), VIEW_WAIT);
	cr_assert_eq(view_decide(&v, p, &p->samples[S_OTHER], &now), VIEW_SKIP);
	v.tid = 101;
	cr_assert_eq(view_decide(&v, p, slow, &now), VIEW_SKIP);
	v = (struct view){.span_class = SPAN_IN, .probe = 0};
	cr_assert_eq(view_decide(&v, p, lost, &now), VIEW_TAKE);
	/* offline (every record in): never wait */
	v.span_class = SPAN_SLOW;
	v.threshold_ns = 2 * MS;
	for (size_t i = 0; i < p->nsamples; i++)
		cr_assert_neq(view_decide(&v, p, &p->samples[i], NULL), VIEW_WAIT);
	profile_free(p);
}

/* A band [lo, hi] brushed on a histogram: both ends included, the outermost
 * call decides, calls without a record are in neither side; live, a sample
 * whose record has not come waits until the band's end plus the slack has
 * passed (it is then beyond the band), whether or not a threshold is
 * known. */
Test(view, band_and_not_band)
{
	struct profile *p = fixture();
	struct view band = {.span_class = SPAN_BAND, .probe = 0, .band_lo_ns = 1 * MS,
			    .band_hi_ns = 3 * MS};
	struct view not_band = band;
	not_band.span_class = SPAN_NOT_BAND;
	struct view in = {.span_class = SPAN_IN, .probe = 0};
	/* 1ms (S_FAST), 3ms so far (S_OPEN), 1ms outermost (S_RECURSIVE), 2ms */
	cr_assert_eq(taken(&band, p),
		     BIT(S_FAST) | BIT(S_OPEN) | BIT(S_RECURSIVE) | BIT(S_EXACT));
	cr_assert_eq(taken(&not_band, p), BIT(S_SLOW));
	cr_assert_eq(taken(&band, p) | taken(&not_band, p), taken(&in, p) & ~BIT(S_LOST));
	band.band_lo_ns = 1 * MS + 1;
	not_band.band_lo_ns = 1 * MS + 1;
	cr_assert_eq(taken(&band, p), BIT(S_OPEN) | BIT(S_EXACT));
	cr_assert_eq(taken(&not_band, p), BIT(S_SLOW) | BIT(S_FAST) | BIT(S_RECURSIVE));
	cr_assert_eq(view_count_unknown(&band, p), S_LOST + 1);
	/* live */
	const struct sample *lost = &p->samples[S_LOST];
	struct view_live now = {.now_ns = lost->time_ns + 3 * MS + VIEW_RECORD_SLACK_NS,
				.threshold_unknown = true};
	cr_assert_eq(view_decide(&band, p, lost, &now), VIEW_WAIT);
	cr_assert_eq(view_decide(&not_band, p, lost, &now), VIEW_WAIT);
	now.now_ns++;
	cr_assert_eq(view_decide(&band, p, lost, &now), VIEW_SKIP);
	cr_assert_eq(view_decide(&not_band, p, lost, &now), VIEW_TAKE);
	cr_assert_eq(view_decide(&band, p, &p->samples[S_EXACT], &now), VIEW_TAKE,
		     "a band needs no threshold");
	profile_free(p);
}

Test(view, query_names_the_samples_of_unknown_duration)
{
	struct profile *p = fixture();
	char err[256], text[512];
	struct span_query q;
	cr_assert_eq(query_parse(p, SPAN_SLOW, "work:2ms", &q, err, sizeof(err)), 0, "%s", err);
	struct view v = {0};
	query_apply(&q, &v);
	cr_assert_eq(v.span_class, SPAN_SLOW);
	cr_assert_eq(v.threshold_ns, 2 * MS);
	query_describe(&q, p, &v, text, sizeof(text));
	cr_assert(strstr(text, "; 5 samples in calls with no record are in neither slow nor fast"),
		  "%s", text);
	v.tid = 101;
	query_describe(&q, p, &v, text, sizeof(text));
	cr_assert_null(strstr(text, "no record"), "%s", text);
	cr_assert_eq(query_parse(p, SPAN_IN, "work", &q, err, sizeof(err)), 0, "%s", err);
	query_describe(&q, p, NULL, text, sizeof(text));
	cr_assert_null(strstr(text, "no record"), "in takes them: %s", text);
	profile_free(p);
}

Test(view, durations_of_counts_are_the_same_offline_and_live)
{
	uint64_t counts[LATENCY_LOGLIN_BUCKETS] = {0};
	counts[latency_loglin_bucket(1000)] = 900;
	counts[latency_loglin_bucket(50000)] = 100;
	size_t n;
	uint64_t *d = latency_hist_durations(counts, &n);
	cr_assert_eq(n, 1000);
	struct threshold p95 = {.kind = THRESHOLD_PERCENTILE, .percentile = 95};
	uint64_t lo, hi, t = threshold_resolve(&p95, d, n, NULL);
	latency_loglin_bounds(latency_loglin_bucket(50000), &lo, &hi);
	cr_assert(t >= lo && t < hi, "p95 in the slow calls' bucket: %lu", (unsigned long)t);
	free(d);
	/* a recording that keeps histograms reads its calls through the same
	 * function (profile_probe_durations) */
	struct profile *p = profile_new();
	profile_probe_add(p, "f", "/bin/x", 0);
	memcpy(p->probes[0].hist, counts, sizeof(counts));
	size_t m;
	uint64_t *e = profile_probe_durations(p, 0, &m);
	d = latency_hist_durations(counts, &n);
	cr_assert_eq(m, n);
	cr_assert_arr_eq(e, d, n * sizeof(*d));
	free(d);
	free(e);
	profile_free(p);
	cr_assert_null(latency_hist_durations((uint64_t[LATENCY_LOGLIN_BUCKETS]){0}, &n));
	cr_assert_eq(n, 0);
}

/* Time views (view_time): a profile with two on-CPU samples (weight 1 each,
 * at 1000 Hz) and two off-CPU intervals (3 ms sleeping in read, 2 ms
 * runnable), all in call 1 of "work" (10 ms). */
static struct profile *time_fixture(void)
{
	struct profile *p = profile_new();
	uint32_t cpu = profile_event_intern(p, "cpu-clock");
	uint32_t off = profile_event_intern(p, PROFILE_EVENT_OFFCPU);
	profile_meta_set(p, "frequency_hz", "1000");
	uint32_t m = frames_intern(p->frames, "main", "/bin/x", "x.c", 1, FRAME_USER);
	uint32_t w = frames_intern(p->frames, "work", "/bin/x", "x.c", 2, FRAME_USER);
	uint32_t sl = view_state_frame(p, TSTATE_SLEEPING, 0 /* read */);
	uint32_t rn = view_state_frame(p, TSTATE_RUNNABLE, 0);
	uint32_t t = profile_thread_intern(p, 100, 100, "srv");
	cr_assert_eq(profile_probe_add(p, "work", "/bin/x", 0x10), 0);
	struct span sp = {.id = 1, .start_ns = 0, .duration_ns = 10 * MS, .probe = 0, .thread = t};
	cr_assert_geq(profile_span_add(p, &sp), 0);
	struct span_link l = {1, 0};
	struct sample s[] = {
		{.time_ns = 1, .weight = 1, .thread = t, .event = cpu,
		 .stack = profile_stack_intern(p, (uint32_t[]){m, w}, 2)},
		{.time_ns = 2, .weight = 1, .thread = t, .event = cpu,
		 .stack = profile_stack_intern(p, (uint32_t[]){m, w}, 2)},
		{.time_ns = 3, .weight = 3 * MS, .thread = t, .event = off,
		 .stack = profile_stack_intern(p, (uint32_t[]){m, w, sl}, 3)},
		{.time_ns = 4, .weight = 2 * MS, .thread = t, .event = off,
		 .stack = profile_stack_intern(p, (uint32_t[]){m, w, rn}, 3)},
	};
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(profile_add_sample(p, &s[i], &l, 1), 0);
	return p;
}

Test(view, time_views_take_and_weigh_their_samples)
{
	struct profile *p = time_fixture();
	char err[256];
	cr_assert_str_eq(frames_get(p->frames, view_state_frame(p, TSTATE_SLEEPING, 0))->name,
			 "[sleeping: read]");
	cr_assert_str_eq(frames_get(p->frames, view_state_frame(p, TSTATE_DISK, 74))->name,
			 "[disk: fsync]");
	cr_assert_str_eq(frames_get(p->frames, view_state_frame(p, TSTATE_RUNNABLE, 0))->name,
			 "[runnable]");
	/* The default view: on-CPU samples only, whatever else the profile has. */
	cr_assert_eq(viewtree_total_weight(p, NULL), 2);
	struct view v = {0};
	cr_assert_eq(viewtree_total_weight(p, &v), 2);
	cr_assert(!view_counts_time(&v));
	cr_assert_eq(view_set_time(&v, p, VIEW_OFF_CPU, err, sizeof(err)), 0);
	cr_assert_eq(viewtree_total_weight(p, &v), 5 * MS);
	cr_assert(view_counts_time(&v));
	cr_assert_eq(view_set_time(&v, p, VIEW_WALL, err, sizeof(err)), 0);
	cr_assert_eq(v.sample_ns, MS);
	cr_assert_eq(viewtree_total_weight(p, &v), 7 * MS);
	/* --wall --in work: 2 samples at 1 ms each, 3 ms asleep, 2 ms runnable. */
	v.span_class = SPAN_IN;
	v.probe = 0;
	struct flame_tree *t = viewtree_flame(p, &v, FLAME_ROOT_NONE);
	cr_assert_eq(t->root->total, 7 * MS);
	flame_free(t);
	/* [running] on top of the on-CPU samples of a wall view. */
	cr_assert_str_eq(frames_get(p->frames, view_leaf_frame(&v, p, &p->samples[0]))->name,
			 "[running]");
	cr_assert_eq(view_leaf_frame(&v, p, &p->samples[2]), 0);
	profile_free(p);
}

Test(view, time_views_need_off_cpu_intervals_and_a_frequency)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	struct view v = {0};
	char err[256];
	cr_assert_eq(view_set_time(&v, p, VIEW_OFF_CPU, err, sizeof(err)), -1);
	cr_assert(strstr(err, "record --off-cpu"), "%s", err);
	profile_event_intern(p, PROFILE_EVENT_OFFCPU);
	cr_assert_eq(view_set_time(&v, p, VIEW_WALL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "frequency"), "%s", err);
	profile_free(p);
}

Test(view, a_rewritten_profile_counts_the_view_in_microseconds)
{
	struct profile *p = time_fixture();
	char err[256];
	cr_assert_eq(view_profile_rewrite(p, VIEW_WALL, 1000, err, sizeof(err)), 0);
	cr_assert_eq(p->nsamples, 4);
	cr_assert_eq(viewtree_total_weight(p, NULL), 7000);
	const struct frame *leaf = frames_get(p->frames, p->nodes[p->samples[0].stack].frame);
	cr_assert_str_eq(leaf->name, "[running]");
	profile_free(p);
	p = time_fixture();
	cr_assert_eq(view_profile_rewrite(p, VIEW_ON_CPU, 1, err, sizeof(err)), 0);
	cr_assert_eq(p->nsamples, 2);
	cr_assert_eq(viewtree_total_weight(p, NULL), 2);
	profile_free(p);
}

Test(view, wakers_are_only_in_the_wakers_view)
{
	struct profile *p = time_fixture();
	char err[256];
	struct view v = {0};
	cr_assert_eq(view_set_time(&v, p, VIEW_WAKERS, err, sizeof(err)), -1);
	cr_assert(strstr(err, "--wakers"), "%s", err);
	uint32_t wev = profile_event_intern(p, PROFILE_EVENT_WAKER);
	uint32_t h = frames_intern(p->frames, "helper", "/bin/x", "x.c", 3, FRAME_USER);
	uint32_t wk = view_waker_frame(p, "srv");
	cr_assert_str_eq(frames_get(p->frames, wk)->name, "[wakes: srv]");
	struct sample s = {.time_ns = 5, .weight = 3 * MS, .thread = 0, .event = wev,
			   .stack = profile_stack_intern(p, (uint32_t[]){h, wk}, 2)};
	struct span_link l = {1, 0};
	cr_assert_eq(profile_add_sample(p, &s, &l, 1), 0);
	cr_assert_eq(viewtree_total_weight(p, NULL), 2);
	cr_assert_eq(view_set_time(&v, p, VIEW_OFF_CPU, err, sizeof(err)), 0);
	cr_assert_eq(viewtree_total_weight(p, &v), 5 * MS);
	cr_assert_eq(view_set_time(&v, p, VIEW_WALL, err, sizeof(err)), 0);
	cr_assert_eq(viewtree_total_weight(p, &v), 7 * MS);
	cr_assert_eq(view_set_time(&v, p, VIEW_WAKERS, err, sizeof(err)), 0);
	cr_assert_eq(viewtree_total_weight(p, &v), 3 * MS);
	/* --wakers --in work: the woken thread's call. */
	v.span_class = SPAN_IN;
	v.probe = 0;
	cr_assert_eq(viewtree_total_weight(p, &v), 3 * MS);
	profile_free(p);
}
