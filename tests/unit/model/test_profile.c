/* Unit tests for the profile model, the folded writer, the recording file
 * (save/load round trip, refusal of foreign files) and the JSON report. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flame.h"
#include "folded.h"
#include "latency.h"
#include "linecalls.h"
#include "profile.h"
#include "query.h"
#include "recording.h"
#include "report.h"
#include "unitkit.h"
#include "viewtree.h"

/* main;a;b x3, main;a x1, main;c;schedule[k] x2 (in "my prog"), main;inl[i] x1 */
static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t m = unit_frame(p, "main", FRAME_USER), a = unit_frame(p, "a", FRAME_USER),
		 b = unit_frame(p, "b", FRAME_USER), c = unit_frame(p, "c", FRAME_USER),
		 k = unit_frame(p, "schedule", FRAME_KERNEL),
		 i = unit_frame(p, "inl", FRAME_INLINED),
		 semi = unit_frame(p, "ns;fn", FRAME_USER);
	uint32_t prog = profile_thread_intern(p, 100, 101, "prog"),
		 my_prog = profile_thread_intern(p, 100, 102, "my prog");
	unit_add(p, (struct unit_sample){.thread = prog, .stack = UNIT_STACK(p, m, a, b), .count = 3});
	unit_add(p, (struct unit_sample){.thread = prog, .stack = UNIT_STACK(p, m, a)});
	unit_add(p, (struct unit_sample){.thread = my_prog, .stack = UNIT_STACK(p, m, c, k),
					 .count = 2});
	unit_add(p, (struct unit_sample){.thread = prog, .stack = UNIT_STACK(p, m, i)});
	unit_add(p, (struct unit_sample){.thread = prog, .stack = UNIT_STACK(p, m, semi)});
	return p;
}

Test(profile, stack_trie_shares_prefixes)
{
	struct profile *p = profile_new();
	uint32_t x = unit_frame(p, "x", FRAME_USER), y = unit_frame(p, "y", FRAME_USER);
	uint32_t s1 = profile_stack_intern(p, (uint32_t[]){x, y}, 2);
	uint32_t s2 = profile_stack_intern(p, (uint32_t[]){x, y}, 2);
	uint32_t s3 = profile_stack_intern(p, (uint32_t[]){x}, 1);
	cr_assert_eq(s1, s2);
	cr_assert_eq(p->nodes[s1].parent, s3, "x;y's parent is x");
	uint32_t out[4];
	cr_assert_eq(profile_stack_frames(p, s1, out, 4), 2);
	cr_assert_eq(out[0], x);
	cr_assert_eq(out[1], y);
	cr_assert_eq(profile_stack_intern(p, NULL, 0), 0, "empty stack is node 0");
	profile_free(p);
}

Test(folded, exact_output)
{
	struct profile *p = sample_profile();
	char *out = folded_of(p);
	cr_assert_str_eq(out, "my_prog;main;c;schedule_[k] 2\n"
			      "prog;main;a 1\n"
			      "prog;main;a;b 3\n"
			      "prog;main;inl_[i] 1\n"
			      "prog;main;ns:fn 1\n");
	free(out);
	profile_free(p);
}

Test(folded, root_modes)
{
	struct profile *p = sample_profile();
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_TID);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	folded_write(f, t, false);
	fclose(f);
	cr_assert(strstr(buf, "prog-100/101;main;a;b 3\n"), "got: %s", buf);
	cr_assert(strstr(buf, "my_prog-100/102;main;c;schedule 2\n"), "unannotated: %s", buf);
	free(buf);
	flame_free(t);
	profile_free(p);
}

Test(flame, totals_and_self)
{
	struct profile *p = sample_profile();
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_NONE);
	cr_assert_eq(t->root->total, 8);
	cr_assert_eq(t->root->nchildren, 1);
	const struct flame_node *main_node = t->root->children[0];
	cr_assert_eq(main_node->total, 8);
	cr_assert_eq(main_node->self, 0);
	flame_free(t);
	profile_free(p);
}

Test(recording, round_trip_preserves_everything)
{
	struct profile *p = sample_profile();
	profile_meta_set(p, "event", "cpu-clock");
	profile_meta_set(p, "duration_s", "1.5");
	char path[] = "/tmp/sonde-unit-XXXXXX";
	int fd = mkstemp(path);
	close(fd);
	char err[256];
	cr_assert_eq(recording_save(p, path, err, sizeof(err)), 0, "%s", err);
	struct profile *q = recording_load(path, err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, p->nsamples);
	cr_assert_str_eq(profile_meta_get(q, "event"), "cpu-clock");
	cr_assert_str_eq(profile_meta_get(q, "format"), RECORDING_FORMAT);
	char *a = folded_of(p), *b = folded_of(q);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
	unlink(path);
	profile_free(p);
	profile_free(q);
}

Test(recording, refuses_foreign_and_corrupt_files)
{
	char err[256];
	char path[] = "/tmp/sonde-unit-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_eq(write(fd, "hello, not sqlite\n", 18), 18);
	close(fd);
	cr_assert_null(recording_load(path, err, sizeof(err)));
	cr_assert(strstr(err, "not a readable sonde recording (file is not a database)"), "%s", err);
	unlink(path);
	cr_assert_null(recording_load("/nonexistent/x.sonde", err, sizeof(err)));
	cr_assert(strstr(err, "cannot read"), "%s", err);
}

Test(recording, failed_save_leaves_no_file)
{
	struct profile *p = sample_profile();
	char err[256];
	cr_assert_neq(recording_save(p, "/nonexistent/dir/x.sonde", err, sizeof(err)), 0);
	cr_assert_neq(recording_check_writable("/nonexistent/dir/x.sonde", err, sizeof(err)), 0);
	cr_assert(strstr(err, "cannot write"), "%s", err);
	profile_free(p);
}

Test(report, json_functions_self_and_total)
{
	struct profile *p = sample_profile();
	profile_meta_set(p, "duration_s", "2.0");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report_options o = {.source = "t"};
	cr_assert_eq(report_write_json(f, p, &o), 0);
	fclose(f);
	cr_assert(strstr(buf, "\"samples\": 8"), "%s", buf);
	cr_assert(strstr(buf, "{\"name\": \"main\", \"kind\": \"user\", \"self\": 0, \"total\": 8}"), "%s", buf);
	cr_assert(strstr(buf, "{\"name\": \"a\", \"kind\": \"user\", \"self\": 1, \"total\": 4}"), "%s", buf);
	cr_assert(strstr(buf, "{\"name\": \"schedule_[k]\", \"kind\": \"kernel\", \"self\": 2, \"total\": 2}"), "%s", buf);
	cr_assert(strstr(buf, "\"duration_s\": 2.0"), "%s", buf);
	free(buf);
	profile_free(p);
}

Test(report, recursion_counts_total_once)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	uint32_t r = unit_frame(p, "rec", FRAME_USER);
	unit_add(p, (struct unit_sample){.thread = profile_thread_intern(p, 100, 1, "prog"),
					 .stack = UNIT_STACK(p, r, r, r),
					 .count = 2});
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report_options o = {0};
	report_write_json(f, p, &o);
	fclose(f);
	cr_assert(strstr(buf, "{\"name\": \"rec\", \"kind\": \"user\", \"self\": 2, \"total\": 2}"), "%s", buf);
	free(buf);
	profile_free(p);
}

/* No samples: no arrays to sort (qsort(NULL, 0) is undefined; the
 * sanitizer build runs this). Found by fuzz_writers. */
Test(report, empty_profile)
{
	struct profile *p = profile_new();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct report_options o = {.source = "empty"};
	cr_assert_eq(report_write_text(f, p, &o), 0);
	cr_assert_eq(report_write_json(f, p, &o), 0);
	fclose(f);
	cr_assert(strstr(buf, "  samples:   0\n"), "%s", buf);
	cr_assert(strstr(buf, "\"samples\": 0"), "%s", buf);
	free(buf);
	profile_free(p);
}

/* A sample with no frames and no process name is written " 3"; that reads
 * back (it did not: found by fuzz_writers). */
Test(folded, empty_stack_round_trip)
{
	char err[256];
	const char *in = "; 3\np;a 2\n";
	struct profile *p = folded_read(in, strlen(in), err, sizeof(err));
	cr_assert_not_null(p, "%s", err);
	char *text = folded_of(p);
	cr_assert_str_eq(text, " 3\np;a 2\n");
	struct profile *q = folded_read(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	cr_assert_eq(q->nsamples, 2);
	cr_assert_eq(viewtree_total_weight(q, NULL), 5);
	cr_assert_eq(q->nodes[q->samples[0].stack].depth, 0);
	free(text);
	profile_free(q);
	profile_free(p);
}

Test(folded, read_round_trip)
{
	struct profile *p = sample_profile();
	char *text = folded_of(p);
	char err[256];
	struct profile *q = folded_read(text, strlen(text), err, sizeof(err));
	cr_assert_not_null(q, "%s", err);
	char *again = folded_of(q);
	cr_assert_str_eq(again, text);
	cr_assert(folded_detect(text, strlen(text)));
	free(text);
	free(again);
	profile_free(p);
	profile_free(q);
}

Test(folded, read_rejects_garbage)
{
	char err[256];
	const char *bad = "main;foo 3\nthis line has no count\n";
	cr_assert_null(folded_read(bad, strlen(bad), err, sizeof(err)));
	cr_assert(strstr(err, "line 2"), "%s", err);
	cr_assert_not(folded_detect("{\"traceEvents\": []}\n", 20));
	const char *bin = "a;b 1\n\0\1\2 5\n";
	cr_assert_null(folded_read(bin, 12, err, sizeof(err)));
}

/* A live session trims its raw store: kept samples keep their links, spans
 * stay findable by id, and the oldest go first. */
Test(profile, trim_keeps_links_and_span_index)
{
	struct profile *p = profile_new();
	uint32_t f[1] = {unit_frame(p, "work", FRAME_USER)};
	uint32_t st = profile_stack_intern(p, f, 1);
	uint32_t th = profile_thread_intern(p, 100, 100, "x");
	for (uint64_t i = 0; i < 10; i++) {
		struct span_link l[2] = {{.span_id = 100 + i, .probe = 0}, {.span_id = 200 + i, .probe = 1}};
		struct sample s = {.time_ns = i * 1000, .weight = 1, .thread = th, .stack = st};
		profile_add_sample(p, &s, l, i % 3); /* 0, 1 or 2 links */
		struct span sp = {.id = 100 + i, .start_ns = i * 1000, .duration_ns = 10, .probe = 0};
		cr_assert_eq(profile_span_add(p, &sp), (int64_t)i);
	}
	/* Drop 4 samples, spans ending before 3000, and keep at most 5 spans. */
	size_t removed = profile_trim(p, 4, 3000, 5);
	cr_assert_eq(p->nsamples, 6);
	cr_assert_eq(p->samples[0].time_ns, 4000);
	for (size_t i = 0; i < p->nsamples; i++) {
		uint64_t orig = i + 4;
		cr_assert_eq(p->samples[i].nlinks, orig % 3);
		for (uint32_t k = 0; k < p->samples[i].nlinks; k++)
			cr_assert_eq(p->span_links[p->samples[i].links + k].span_id,
				     (k ? 200 : 100) + orig);
	}
	cr_assert_eq(removed, 5); /* 3 too old, then 2 beyond the cap of 5 */
	cr_assert_eq(p->nspans, 5);
	for (uint64_t id = 100; id < 110; id++)
		cr_assert_eq(profile_span_find(p, id) >= 0, id >= 105, "span %llu",
			     (unsigned long long)id);
	struct span sp = {.id = 999, .start_ns = 1, .duration_ns = 1};
	cr_assert_eq(profile_span_add(p, &sp), 5);
	cr_assert_eq(profile_span_find(p, 999), 5);
	profile_free(p);
}

static uint64_t slow_at_5ms(void *arg, uint32_t probe)
{
	(void)arg, (void)probe;
	return 5000000;
}

/* "Slower than T" is duration > T wherever calls are counted: the query's
 * count (report --slow's "N of M calls") and the line report's slow calls
 * agree with the spans table's `duration_ns > T`, a call of exactly T is in
 * neither, and calls with a record count by their duration, not spread over
 * their histogram bucket (regression: the report said 94 calls over 5 ms
 * where the spans table had 95). */
Test(profile, slower_than_is_over_not_at)
{
	struct profile *p = profile_new();
	uint32_t th = profile_thread_intern(p, 100, 100, "srv");
	uint32_t work = profile_probe_add(p, "work", "/bin/t", 0x1000);
	uint32_t line = profile_probe_add(p, "t.c:12", "/bin/t", 0x1010);
	p->probes[line].point = 0;
	uint64_t id = 0, over = 0;
	for (int i = 0; i < 1000; i++) {
		/* 900 fast calls counted in the histogram only; 20 kept around
		 * 5 ms (5.000000 ms itself among them), 80 at 8-9 ms */
		uint64_t d = i < 900   ? 100000 + (uint64_t)i * 100
			     : i < 920 ? 4990000 + (uint64_t)(i - 900) * 10000
				       : 8000000 + (uint64_t)(i - 920) * 10000;
		p->probes[work].hist[latency_loglin_bucket(d)]++;
		if (i < 900)
			continue;
		struct span sp = {.id = ++id, .start_ns = (uint64_t)i * 10000000, .duration_ns = d,
				  .raw_duration_ns = d, .probe = work, .thread = th, .depth = 1,
				  .points = 1};
		cr_assert_geq(profile_span_add(p, &sp), 0);
		over += d > 5000000;
	}
	cr_assert_eq(over, 98);
	profile_point_calls_set(p, line, work, 1000, 100);

	cr_assert_eq(profile_probe_calls_over(p, work, 5000000), over);
	struct span_query q;
	char err[256], text[512];
	cr_assert_eq(query_parse(p, SPAN_SLOW, "work:5ms", &q, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(q.slow_calls, over);
	query_describe(&q, p, NULL, text, sizeof(text));
	cr_assert(strstr(text, "98 of 1000 calls"), "%s", text);

	struct line_in_calls in[2];
	cr_assert_eq(line_calls_of(p, line, slow_at_5ms, NULL, in), 1);
	cr_assert_eq(in[0].slow, over, "line report: %llu slow calls",
		     (unsigned long long)in[0].slow);
	cr_assert_eq(in[0].slow_hit, over);
	/* A threshold within the fast calls, which have no record: those
	 * are taken as spread evenly over their buckets. */
	uint64_t fast_over = profile_probe_calls_over(p, work, 145000);
	cr_assert(fast_over >= 100 + 440 && fast_over <= 100 + 460, "%llu",
		  (unsigned long long)fast_over);
	profile_free(p);
}
