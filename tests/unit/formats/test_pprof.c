/* Unit tests for pprof (profile.proto) writing, reading and detection:
 * round trips through folded stacks, labels, inline chains, kernel/JIT/
 * unknown frame kinds, aggregation, filters, hand-built foreign profiles,
 * refusal of inconsistent ones, every truncation and single-byte corruption
 * of a small file, and decoding by an independent implementation
 * (pprof-format, via node tests/js/check_pprof.mjs). */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filebuf.h"
#include "flame.h"
#include "folded.h"
#include "pb.h"
#include "pprof.h"
#include "profile.h"
#include "unitkit.h"
#include "viewtree.h"

#define APP "/usr/bin/app"

/* Two threads; an inline chain of two, a single inlined frame, kernel frames
 * (vmlinux, a module, a module-less one), unknown frames, a JIT frame, a
 * second event, spans. */
static struct profile *sample_profile(void)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	profile_event_intern(p, "page-faults");
	profile_meta_set(p, "frequency_hz", "99");
	profile_meta_set(p, "start_unix_s", "1700000000.250000");
	profile_meta_set(p, "duration_s", "2.500000");
	profile_meta_set(p, "command_line", "sonde record -o x.sonde -- ./app --fast");
	uint32_t app = profile_thread_intern(p, 100, 100, "app");
	uint32_t worker = profile_thread_intern(p, 100, 101, "worker thread");
	uint32_t main_ = unit_frame_at(p, "main", APP, 10, FRAME_USER),
		 work20 = unit_frame_at(p, "work", APP, 20, FRAME_USER),
		 work22 = unit_frame_at(p, "work", APP, 22, FRAME_USER),
		 outer = unit_frame_at(p, "inl_outer", APP, 30, FRAME_INLINED),
		 inner = unit_frame_at(p, "inl_inner", APP, 40, FRAME_INLINED),
		 readf = unit_frame_at(p, "read_file", APP, 50, FRAME_USER),
		 sys = frames_intern(p->frames, "do_syscall_64", "[kernel.kallsyms]", "", 0,
				     FRAME_KERNEL),
		 ext4 = frames_intern(p->frames, "ext4_file_read_iter", "[ext4]", "", 0,
				      FRAME_KERNEL),
		 kunk = frames_intern(p->frames, "[unknown]", "[kernel.kallsyms]", "", 0,
				      FRAME_UNKNOWN),
		 start = frames_intern(p->frames, "start_thread", "/lib/libc.so.6", "", 0,
				       FRAME_USER),
		 uunk = frames_intern(p->frames, "[app+0x1234]", APP, "", 0, FRAME_UNKNOWN),
		 sched = frames_intern(p->frames, "schedule", "", "", 0, FRAME_KERNEL),
		 jit = frames_intern(p->frames, "Interpreter", "/tmp/perf-4242.map", "", 0,
				     FRAME_JIT),
		 semi = unit_frame_at(p, "ns;fn", APP, 60, FRAME_USER);
	uint32_t probe = profile_probe_add(p, "handle_request", APP, 0x1000);
	uint32_t probe2 = profile_probe_add(p, "parse", APP, 0x2000);
	profile_span_add(p, &(struct span){.id = 42,
					   .start_ns = 1000000,
					   .duration_ns = 50000,
					   .probe = probe,
					   .thread = app,
					   .depth = 1});
	profile_span_add(p, &(struct span){.id = 43,
					   .parent = 42,
					   .start_ns = 1001000,
					   .duration_ns = 1000,
					   .probe = probe2,
					   .thread = app,
					   .depth = 2});
	struct span_link links[2] = {{42, probe}, {43, probe2}};

	/* Samples 1 us apart, in this order, on CPU 1. */
	uint32_t chain = UNIT_STACK(p, main_, work20, outer, inner);
	unit_add(p, (struct unit_sample){.thread = app, .stack = chain, .time_ns = 1001000,
					 .count = 3, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = app, .stack = chain, .time_ns = 1004000,
					 .cpu = 1, .links = links, .nlinks = 2});
	unit_add(p, (struct unit_sample){.thread = app, .stack = UNIT_STACK(p, main_, work22),
					 .time_ns = 1005000, .count = 2, .cpu = 1, .links = links,
					 .nlinks = 1});
	unit_add(p, (struct unit_sample){.thread = app,
					 .stack = UNIT_STACK(p, main_, work22, outer),
					 .time_ns = 1007000, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = worker,
					 .stack = UNIT_STACK(p, main_, readf, sys, ext4, kunk),
					 .time_ns = 1008000, .count = 2, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = worker,
					 .stack = UNIT_STACK(p, start, uunk, sched),
					 .time_ns = 1010000, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = app, .stack = UNIT_STACK(p, main_, jit),
					 .time_ns = 1011000, .weight = 5, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = app, .stack = UNIT_STACK(p, main_, semi),
					 .time_ns = 1012000, .event = 1, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = worker,
					 .stack = profile_stack_intern(p, NULL, 0), /* empty */
					 .time_ns = 1013000, .cpu = 1});
	return p;
}

/* The gzipped pprof of a profile. */
static uint8_t *encode(struct profile *p, const struct pprof_options *o, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	cr_assert_eq(pprof_write(f, p, o), 0);
	fclose(f);
	return (uint8_t *)buf;
}

/* The profile.proto bytes of a profile (gunzipped). */
static struct filebuf encode_raw(struct profile *p, const struct pprof_options *o)
{
	size_t len;
	uint8_t *gz = encode(p, o, &len);
	cr_assert(len > 18 && gz[0] == 0x1f && gz[1] == 0x8b, "output is gzip");
	struct filebuf fb;
	char err[256];
	cr_assert_eq(filebuf_from_memory(gz, len, &fb, err, sizeof(err)), 0, "%s", err);
	cr_assert(fb.was_gzip);
	free(gz);
	return fb;
}

static struct profile *roundtrip(struct profile *p, const struct pprof_options *o)
{
	struct filebuf fb = encode_raw(p, o);
	cr_assert(pprof_detect(fb.data, fb.len));
	char err[256];
	struct profile *q = pprof_read(fb.data, fb.len, err, sizeof(err));
	cr_assert(q, "pprof_read: %s", err);
	filebuf_free(&fb);
	return q;
}

Test(pprof, roundtrip_same_folded_stacks)
{
	struct profile *p = sample_profile();
	struct profile *q = roundtrip(p, NULL);
	char *a = folded_of(p), *b = folded_of(q);
	cr_assert_str_eq(b, a);
	cr_assert(strstr(a, "inl_outer_[i];inl_inner_[i]"), "test covers an inline chain");
	cr_assert(strstr(a, "ext4_file_read_iter_[k]"));
	cr_assert(strstr(a, "Interpreter_[j]"));
	cr_assert(strstr(a, "schedule_[k]"));
	cr_assert_eq(viewtree_total_weight(q, NULL), viewtree_total_weight(p, NULL));
	cr_assert_eq(q->nsamples, p->nsamples);
	/* One sonde sample per pprof Sample, in order: threads, times, events. */
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i], *t = &q->samples[i];
		cr_assert_eq(t->time_ns, s->time_ns);
		cr_assert_eq(t->weight, s->weight);
		const struct thread_info *ts = &p->threads[s->thread],
					 *tt = &q->threads[t->thread];
		cr_assert_eq(tt->pid, ts->pid);
		cr_assert_eq(tt->tid, ts->tid);
		cr_assert_str_eq(tt->comm, ts->comm);
		if (s->event == 1)
			cr_assert_str_eq(q->events[t->event], "page-faults");
	}
	cr_assert_eq(q->nthreads, 2);
	cr_assert_str_eq(profile_meta_get(q, "source_format"), "pprof");
	cr_assert_str_eq(profile_meta_get(q, "event"), "samples");
	cr_assert_str_eq(profile_meta_get(q, "frequency_hz"), "99");
	cr_assert_str_eq(profile_meta_get(q, "start_unix_s"), "1700000000.250000");
	cr_assert_str_eq(profile_meta_get(q, "duration_s"), "2.500000");
	cr_assert_str_eq(profile_meta_get(q, "sample_types"), "samples/count,cpu/nanoseconds");
	cr_assert_str_eq(profile_meta_get(q, "comments"),
			 "sonde record -o x.sonde -- ./app --fast");
	/* Modules, files and lines survive, not only names. */
	bool found = false;
	for (size_t i = 1; i <= frames_count(q->frames); i++) {
		const struct frame *f = frames_get(q->frames, (uint32_t)i);
		if (strcmp(f->name, "work") == 0 && f->line == 22 && strcmp(f->module, APP) == 0 &&
		    strcmp(f->file, "x.c") == 0)
			found = true;
	}
	cr_assert(found, "work at x.c:22 in " APP);
	free(a);
	free(b);
	profile_free(p);
	profile_free(q);
}

Test(pprof, labels_and_inline_locations_in_the_file)
{
	struct profile *p = sample_profile();
	struct filebuf fb = encode_raw(p, NULL);
	const char *keys[] = {
		"thread",	 "pid",	  "tid",	 "timestamp_ns",   "span_id",
		"span_name",	 "event", "nanoseconds", "handle_request", "[kernel.kallsyms]",
		"worker thread", "42",	  "43"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++)
		cr_assert(memmem(fb.data, fb.len, keys[i], strlen(keys[i])), "string %s", keys[i]);
	filebuf_free(&fb);
	profile_free(p);
}

Test(pprof, aggregate_merges_samples)
{
	struct profile *p = sample_profile();
	struct profile *q = roundtrip(p, &(struct pprof_options){.aggregate = true});
	char *a = folded_of(p), *b = folded_of(q);
	cr_assert_str_eq(b, a);
	cr_assert_eq(viewtree_total_weight(q, NULL), viewtree_total_weight(p, NULL));
	cr_assert_lt(q->nsamples, p->nsamples);
	cr_assert_eq(q->nsamples, 8); /* distinct (stack, thread, event) */
	for (size_t i = 0; i < q->nsamples; i++)
		cr_assert_eq(q->samples[i].time_ns, 0);
	struct filebuf fb = encode_raw(p, &(struct pprof_options){.aggregate = true});
	cr_assert_null(memmem(fb.data, fb.len, "timestamp_ns", 12));
	cr_assert_null(memmem(fb.data, fb.len, "span_id", 7));
	filebuf_free(&fb);
	free(a);
	free(b);
	profile_free(p);
	profile_free(q);
}

Test(pprof, filter_selects_samples)
{
	struct profile *p = sample_profile();
	struct view f = {.tid = 101};
	struct profile *q = roundtrip(p, &(struct pprof_options){.filter = &f});
	cr_assert_eq(viewtree_total_weight(q, NULL), viewtree_total_weight(p, &f));
	for (size_t i = 0; i < q->nsamples; i++)
		cr_assert_eq(q->threads[q->samples[i].thread].tid, 101);
	profile_free(p);
	profile_free(q);
}

Test(pprof, no_frequency_means_one_value_and_period_by_count)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cache-misses");
	profile_meta_set(p, "frequency_hz", "0");
	profile_meta_set(p, "period", "10000");
	uint32_t th = profile_thread_intern(p, 7, 7, "x");
	uint32_t f = frames_intern(p->frames, "f", "", "", 0, FRAME_USER);
	unit_add(p, (struct unit_sample){.thread = th, .stack = UNIT_STACK(p, f),
					 .time_ns = 1001000, .count = 3, .weight = 10000});
	struct profile *q = roundtrip(p, NULL);
	cr_assert_str_eq(profile_meta_get(q, "sample_types"), "samples/count");
	cr_assert_str_eq(profile_meta_get(q, "period"), "10000");
	cr_assert_eq(viewtree_total_weight(q, NULL), 30000);
	profile_free(p);
	profile_free(q);
}

Test(pprof, empty_profile)
{
	struct profile *p = profile_new();
	struct profile *q = roundtrip(p, NULL);
	cr_assert_eq(q->nsamples, 0);
	profile_free(p);
	profile_free(q);
}

/* --- hand-built profiles --------------------------------------------------- */

struct proto {
	struct pb_buf top;
	const char **strs;
	size_t nstrs;
};

static void value_type(struct pb_buf *b, uint32_t field, uint64_t type, uint64_t unit)
{
	struct pb_buf m = {0};
	pb_put_uint(&m, 1, type);
	pb_put_uint(&m, 2, unit);
	pb_put_message(b, field, &m);
	pb_buf_free(&m);
}

static void function(struct pb_buf *b, uint64_t id, uint64_t name, uint64_t file)
{
	struct pb_buf m = {0};
	pb_put_uint(&m, 1, id);
	pb_put_uint(&m, 2, name);
	pb_put_uint(&m, 4, file);
	pb_put_message(b, 5, &m);
	pb_buf_free(&m);
}

static void mapping(struct pb_buf *b, uint64_t id, uint64_t file, uint64_t start)
{
	struct pb_buf m = {0};
	pb_put_uint(&m, 1, id);
	pb_put_uint(&m, 2, start);
	pb_put_uint(&m, 3, start + 0x10000);
	pb_put_uint(&m, 5, file);
	pb_put_message(b, 3, &m);
	pb_buf_free(&m);
}

/* A location with lines (function id, line) innermost first. */
static void location(struct pb_buf *b, uint64_t id, uint64_t map, uint64_t addr,
		     const uint64_t *lines, size_t n)
{
	struct pb_buf m = {0};
	pb_put_uint(&m, 1, id);
	if (map)
		pb_put_uint(&m, 2, map);
	if (addr)
		pb_put_uint(&m, 3, addr);
	for (size_t i = 0; i < n; i++) {
		struct pb_buf l = {0};
		pb_put_uint(&l, 1, lines[2 * i]);
		pb_put_uint(&l, 2, lines[2 * i + 1]);
		pb_put_message(&m, 4, &l);
		pb_buf_free(&l);
	}
	pb_put_message(b, 4, &m);
	pb_buf_free(&m);
}

static void sample(struct pb_buf *b, const uint64_t *locs, size_t nlocs, const uint64_t *vals,
		   size_t nvals)
{
	struct pb_buf m = {0};
	pb_put_packed_uint(&m, 1, locs, nlocs);
	pb_put_packed_uint(&m, 2, vals, nvals);
	pb_put_message(b, 2, &m);
	pb_buf_free(&m);
}

static void strings(struct pb_buf *b, const char *const *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pb_put_string(b, 6, s[i]);
}

/* A Go-like CPU profile: samples/count + cpu/nanoseconds, one inline chain,
 * a kernel mapping named vmlinux, an unsymbolized location, no labels. */
static struct pb_buf go_profile(void)
{
	static const char *s[] = {"",
				  "samples",
				  "count",
				  "cpu",
				  "nanoseconds",
				  "main.main",
				  "main.go",
				  "main.hot",
				  "runtime.add",
				  "/bin/goprog",
				  "/boot/vmlinux-6.1",
				  "sys_read",
				  "thread",
				  "pid",
				  "tid",
				  "app",
				  "my comment"};
	struct pb_buf b = {0};
	value_type(&b, 1, 1, 2);
	value_type(&b, 1, 3, 4);
	mapping(&b, 1, 9, 0x400000);
	mapping(&b, 2, 10, 0xffffffff81000000ull);
	function(&b, 1, 5, 6);
	function(&b, 2, 7, 6);
	function(&b, 3, 8, 6);
	function(&b, 4, 11, 0);
	location(&b, 1, 1, 0x401000, (uint64_t[]){1, 10}, 1);
	location(&b, 2, 1, 0x402000, (uint64_t[]){3, 77, 2, 20},
		 2); /* runtime.add inlined in main.hot */
	location(&b, 3, 2, 0xffffffff81001000ull, (uint64_t[]){4, 0}, 1);
	location(&b, 4, 1, 0x403000, NULL, 0);
	sample(&b, (uint64_t[]){2, 1}, 2, (uint64_t[]){7, 70000000}, 2);
	sample(&b, (uint64_t[]){3, 1}, 2, (uint64_t[]){2, 20000000}, 2);
	sample(&b, (uint64_t[]){4, 1}, 2, (uint64_t[]){1, 10000000}, 2);
	sample(&b, (uint64_t[]){1}, 1, (uint64_t[]){0, 0}, 2); /* zero: dropped */
	strings(&b, s, sizeof(s) / sizeof(*s));
	pb_put_uint(&b, 9, 1700000000000000000ull);
	pb_put_uint(&b, 10, 3000000000ull);
	value_type(&b, 11, 3, 4);
	pb_put_uint(&b, 12, 10000000);
	pb_put_uint(&b, 13, 16);
	return b;
}

Test(pprof, reads_foreign_profile)
{
	struct pb_buf b = go_profile();
	cr_assert(pprof_detect(b.data, b.len));
	char err[256];
	struct profile *q = pprof_read(b.data, b.len, err, sizeof(err));
	cr_assert(q, "%s", err);
	cr_assert_eq(q->nsamples, 3);
	cr_assert_eq(viewtree_total_weight(q, NULL), 10);
	char *f = folded_of(q);
	cr_assert_str_eq(f, "pprof;main.main;[goprog+0x3000] 1\n"
			    "pprof;main.main;main.hot;runtime.add_[i] 7\n"
			    "pprof;main.main;sys_read_[k] 2\n");
	free(f);
	cr_assert_eq(q->nthreads, 1);
	cr_assert_eq(q->threads[0].pid, 0);
	cr_assert_str_eq(profile_meta_get(q, "event"), "samples");
	cr_assert_str_eq(profile_meta_get(q, "frequency_hz"), "100");
	cr_assert_str_eq(profile_meta_get(q, "duration_s"), "3.000000");
	cr_assert_str_eq(profile_meta_get(q, "comments"), "my comment");
	const struct frame *leaf = frames_get(q->frames, q->nodes[q->samples[0].stack].frame);
	cr_assert_str_eq(leaf->name, "runtime.add");
	cr_assert_eq(leaf->line, 77);
	cr_assert_str_eq(leaf->module, "/bin/goprog");
	cr_assert_str_eq(leaf->file, "main.go");
	profile_free(q);
	pb_buf_free(&b);
}

Test(pprof, weight_from_default_or_first_type)
{
	static const char *s[] = {"", "alloc_space", "bytes", "inuse_space", "f"};
	struct pb_buf b = {0};
	value_type(&b, 1, 1, 2);
	value_type(&b, 1, 3, 2);
	function(&b, 1, 4, 0);
	location(&b, 1, 0, 0, (uint64_t[]){1, 0}, 1);
	sample(&b, (uint64_t[]){1}, 1, (uint64_t[]){100, 5}, 2);
	strings(&b, s, 5);
	char err[256];
	struct profile *q = pprof_read(b.data, b.len, err, sizeof(err));
	cr_assert(q, "%s", err);
	cr_assert_eq(viewtree_total_weight(q, NULL), 100);
	cr_assert_str_eq(profile_meta_get(q, "event"), "alloc_space");
	profile_free(q);
	pb_put_uint(&b, 14, 3); /* default_sample_type = inuse_space */
	q = pprof_read(b.data, b.len, err, sizeof(err));
	cr_assert(q, "%s", err);
	cr_assert_eq(viewtree_total_weight(q, NULL), 5);
	cr_assert_str_eq(profile_meta_get(q, "event"), "inuse_space");
	profile_free(q);
	pb_buf_free(&b);
}

/* A valid minimal profile with one piece changed by `variant`. */
static struct pb_buf bad_profile(int variant)
{
	static const char *s[] = {"", "samples", "count", "f", "thread"};
	struct pb_buf b = {0};
	value_type(&b, 1, 1, variant == 1 ? 99 : 2);
	function(&b, 1, variant == 2 ? 1000 : 3, 0);
	if (variant == 3)
		function(&b, 1, 3, 0);
	location(&b, 1, variant == 4 ? 5 : 0, 0, (uint64_t[]){variant == 5 ? 9 : 1, 0}, 1);
	if (variant == 6)
		location(&b, 0, 0, 0, (uint64_t[]){1, 0}, 1);
	uint64_t vals[2] = {variant == 8 ? (uint64_t)-3 : 1, 1};
	sample(&b, (uint64_t[]){variant == 7 ? 2 : 1}, 1, vals, variant == 9 ? 2 : 1);
	if (variant == 10) { /* label with a bad string index */
		struct pb_buf l = {0}, smp = {0};
		pb_put_uint(&l, 1, 4);
		pb_put_uint(&l, 2, 77);
		pb_put_packed_uint(&smp, 1, (uint64_t[]){1}, 1);
		pb_put_packed_uint(&smp, 2, (uint64_t[]){1}, 1);
		pb_put_message(&smp, 3, &l);
		pb_put_message(&b, 2, &smp);
		pb_buf_free(&l);
		pb_buf_free(&smp);
	}
	if (variant == 11)
		pb_put_string(&b, 6, "not empty");
	if (variant != 12)
		strings(&b, s, 5);
	if (variant == 13)
		pb_put_tag(&b, 2, PB_VARINT), pb_put_varint(&b, 1); /* sample as a varint */
	if (variant == 14)
		pb_put_uint(&b, 13, 1000); /* comment: bad string index */
	return b;
}

Test(pprof, refuses_inconsistent_profiles)
{
	static const char *expect[] = {
		[1] = "string 99",	    [2] = "string 1000",	[3] = "two functions",
		[4] = "unknown mapping 5",  [5] = "unknown function 9", [6] = "id 0",
		[7] = "unknown location 2", [8] = "negative",		[9] = "2 values for 1",
		[10] = "string 77",	    [11] = "string_table[0]",	[12] = "no string table",
		[13] = "malformed",	    [14] = "string 1000",
	};
	struct pb_buf ok = bad_profile(0);
	char err[256];
	struct profile *q = pprof_read(ok.data, ok.len, err, sizeof(err));
	cr_assert(q, "the unchanged profile reads: %s", err);
	profile_free(q);
	pb_buf_free(&ok);
	for (int v = 1; v <= 14; v++) {
		struct pb_buf b = bad_profile(v);
		err[0] = 0;
		q = pprof_read(b.data, b.len, err, sizeof(err));
		cr_assert_null(q, "variant %d was accepted", v);
		cr_assert(strstr(err, expect[v]), "variant %d: error \"%s\" lacks \"%s\"", v, err,
			  expect[v]);
		cr_assert_null(strchr(err, '\n'), "one line");
		pb_buf_free(&b);
	}
}

Test(pprof, refuses_absurd_stack_depth)
{
	static const char *s[] = {"", "samples", "count", "f"};
	struct pb_buf b = {0};
	value_type(&b, 1, 1, 2);
	function(&b, 1, 3, 0);
	location(&b, 1, 0, 0, (uint64_t[]){1, 0}, 1);
	size_t n = PPROF_MAX_DEPTH + 1;
	uint64_t *locs = malloc(n * sizeof(*locs));
	for (size_t i = 0; i < n; i++)
		locs[i] = 1;
	sample(&b, locs, n, (uint64_t[]){1}, 1);
	strings(&b, s, 4);
	char err[256];
	struct profile *q = pprof_read(b.data, b.len, err, sizeof(err));
	cr_assert_null(q);
	cr_assert(strstr(err, "locations") || strstr(err, "deeper"), "%s", err);
	free(locs);
	pb_buf_free(&b);
}

Test(pprof, detect)
{
	struct profile *p = sample_profile();
	struct filebuf fb = encode_raw(p, NULL);
	cr_assert(pprof_detect(fb.data, fb.len));
	cr_assert_not(pprof_detect(fb.data, fb.len - 1));
	filebuf_free(&fb);
	profile_free(p);
	struct pb_buf g = go_profile();
	cr_assert(pprof_detect(g.data, g.len));
	pb_buf_free(&g);
	const char *texts[] = {"",
			       "main;a;b 3\nmain;c 1\n",
			       "{\"traceEvents\": []}",
			       "SQLite format 3",
			       "\x1f\x8b\x08\x00",
			       "# comment\n"};
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++)
		cr_assert_not(pprof_detect((const uint8_t *)texts[i], strlen(texts[i])), "%zu", i);
}

/* Every prefix and every single-byte corruption of a small file either reads
 * or fails with a message: never a crash (ASan in the sanitizer build). */
Test(pprof, truncated_and_corrupted_inputs)
{
	struct profile *p = sample_profile();
	struct filebuf fb = encode_raw(p, NULL);
	char err[256];
	size_t accepted = 0;
	for (size_t n = 0; n < fb.len; n++) {
		uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan sees overreads */
		memcpy(copy, fb.data, n);
		err[0] = 0;
		struct profile *q = pprof_read(copy, n, err, sizeof(err));
		if (q) {
			accepted++;
			cr_assert_leq(q->nsamples, p->nsamples);
			profile_free(q);
		} else {
			cr_assert(err[0], "prefix %zu: NULL without an error", n);
		}
		pprof_detect(copy, n);
		free(copy);
	}
	cr_assert_lt(accepted, fb.len / 2, "most prefixes are refused");
	uint8_t *copy = malloc(fb.len);
	for (size_t i = 0; i < fb.len; i++) {
		for (int x = 0; x < 3; x++) {
			static const uint8_t flips[] = {0xff, 0x80, 0x01};
			memcpy(copy, fb.data, fb.len);
			copy[i] ^= flips[x];
			err[0] = 0;
			struct profile *q = pprof_read(copy, fb.len, err, sizeof(err));
			if (q)
				profile_free(q);
			else
				cr_assert(err[0], "byte %zu: NULL without an error", i);
			pprof_detect(copy, fb.len);
		}
	}
	free(copy);
	filebuf_free(&fb);
	profile_free(p);
}

/* --- the independent decoder ----------------------------------------------- */

static bool have_node(void)
{
	return have_tool("node") &&
	       access(SRC_DIR "/tests/js/node_modules/pprof-format/package.json", R_OK) == 0;
}

static char *run_checker(const char *path)
{
	int rc;
	char *out = node_check_file("check_pprof.mjs", path, &rc);
	cr_assert_eq(rc, 0, "check_pprof.mjs failed: %s", out);
	return out;
}

static void check_with_node(const struct pprof_options *o, const char *const *labels,
			    size_t nlabels, const char *const *absent, size_t nabsent)
{
	struct profile *p = sample_profile();
	char path[] = "/tmp/sonde-pprof-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	FILE *f = fdopen(fd, "w");
	cr_assert_eq(pprof_write(f, p, o), 0);
	fclose(f);
	char *out = run_checker(path);
	unlink(path);
	size_t expect_samples = p->nsamples;
	if (o && o->aggregate)
		expect_samples = 8;
	cr_assert_eq(json_u64(out, "samples"), expect_samples, "%s", out);
	cr_assert_eq(json_u64(out, "total"), viewtree_total_weight(p, NULL), "%s", out);
	cr_assert(strstr(out, "\"sample_types\":[{\"type\":\"samples\",\"unit\":\"count\"},"
			      "{\"type\":\"cpu\",\"unit\":\"nanoseconds\"}]"),
		  "%s", out);
	for (size_t i = 0; i < nlabels; i++) {
		char q[64];
		snprintf(q, sizeof(q), "\"%s\"", labels[i]);
		const char *l = strstr(out, "\"labels\":[");
		cr_assert(l && strstr(l, q), "label %s missing: %s", labels[i], out);
	}
	for (size_t i = 0; i < nabsent; i++) {
		char q[64];
		snprintf(q, sizeof(q), "\"%s\"", absent[i]);
		cr_assert_null(strstr(out, q), "label %s present: %s", absent[i], out);
	}
	cr_assert_eq(json_u64(out, "max_lines"), 3, "inline chain in one location: %s", out);
	cr_assert_eq(json_u64(out, "period"), 10101010, "%s", out);
	cr_assert_eq(json_u64(out, "time_nanos"), 1700000000250000000ull, "%s", out);
	cr_assert(strstr(out, "\"comments\":[\"sonde record -o x.sonde -- ./app --fast\"]"), "%s",
		  out);
	free(out);
	profile_free(p);
}

Test(pprof, independent_decoder_agrees)
{
	if (!have_node())
		cr_skip_test("node or tests/js/node_modules/pprof-format missing (make deps)");
	const char *labels[] = {"event",  "pid", "span_id",	"span_name",
				"thread", "tid", "timestamp_ns"};
	check_with_node(NULL, labels, 7, NULL, 0);
}

Test(pprof, independent_decoder_agrees_aggregated)
{
	if (!have_node())
		cr_skip_test("node or tests/js/node_modules/pprof-format missing (make deps)");
	const char *labels[] = {"pid", "thread", "tid"};
	const char *absent[] = {"span_id", "timestamp_ns"};
	check_with_node(&(struct pprof_options){.aggregate = true}, labels, 3, absent, 2);
}
