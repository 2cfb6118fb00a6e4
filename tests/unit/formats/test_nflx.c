/* Unit tests for the nflxprofile writer, reader and detector: round trips
 * (folded output, times, threads, weights), the encoding decoded field by
 * field as FORMATS.md describes it, hand-made files (children-only trees,
 * Node.stack files, broken ones) and truncation at every length. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "folded.h"
#include "nflx.h"
#include "pb.h"
#include "profile.h"
#include "unitkit.h"

#define T0 5000000000ull /* monotonic ns at the start */

/* Two processes ("prog" with two threads, "my prog"), user, kernel and
 * inlined frames, an empty stack, samples out of time order. */
static struct profile *sample_profile(bool wall, uint64_t weight)
{
	struct profile *p = profile_new();
	profile_event_intern(p, "cpu-clock");
	profile_meta_set(p, "event", "cpu-clock");
	profile_meta_set(p, "command_line", "sonde record -- prog");
	if (wall) {
		profile_meta_set(p, "start_ns", "5000000000");
		profile_meta_set(p, "end_ns", "5900000000");
		profile_meta_set(p, "start_unix_s", "1700000000.250000");
	}
	uint32_t m = unit_frame(p, "main", FRAME_USER), a = unit_frame(p, "a", FRAME_USER),
		 b = unit_frame(p, "b", FRAME_USER), k = unit_frame(p, "schedule", FRAME_KERNEL),
		 sys = unit_frame(p, "do_syscall_64", FRAME_KERNEL),
		 i = unit_frame(p, "inl", FRAME_INLINED),
		 b2 = unit_frame_at(p, "b", "/bin/x", 99, FRAME_USER);
	uint32_t p1 = profile_thread_intern(p, 100, 101, "prog"),
		 p2 = profile_thread_intern(p, 100, 102, "prog"),
		 my1 = profile_thread_intern(p, 200, 200, "my prog"),
		 my2 = profile_thread_intern(p, 200, 201, "my prog");
	uint32_t mab = UNIT_STACK(p, m, a, b), msk = UNIT_STACK(p, m, sys, k);
	unit_add(p, (struct unit_sample){.thread = p1, .stack = mab, .time_ns = T0 + 30000000});
	unit_add(p, (struct unit_sample){.thread = p1, .stack = UNIT_STACK(p, m, a, b2),
					 .time_ns = T0 + 10000000, .weight = weight, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = p2, .stack = UNIT_STACK(p, m, a),
					 .time_ns = T0 + 20000123, .cpu = 2});
	unit_add(p, (struct unit_sample){.thread = my1, .stack = msk, .time_ns = T0 + 40000456,
					 .weight = weight, .cpu = 3});
	unit_add(p, (struct unit_sample){.thread = my1, .stack = msk, .time_ns = T0 + 40000456,
					 .cpu = 3});
	unit_add(p, (struct unit_sample){.thread = p1, .stack = UNIT_STACK(p, m, i),
					 .time_ns = T0 + 812345678});
	unit_add(p, (struct unit_sample){.thread = my2, .stack = profile_stack_intern(p, NULL, 0),
					 .time_ns = T0 + 500000001, .cpu = 1});
	unit_add(p, (struct unit_sample){.thread = p2, .stack = mab, .time_ns = T0 + 600000000,
					 .cpu = 2});
	return p;
}

static uint8_t *encode(struct profile *p, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	cr_assert_eq(nflx_write(f, p), 0);
	fclose(f);
	*len = n;
	return (uint8_t *)buf;
}

static struct profile *decode(const uint8_t *data, size_t len)
{
	char err[256] = "";
	struct profile *p = nflx_read(data, len, err, sizeof(err));
	cr_assert(p, "nflx_read failed: %s", err);
	return p;
}

static uint64_t meta_u64(const struct profile *p, const char *key)
{
	const char *v = profile_meta_get(p, key);
	cr_assert(v, "no meta %s", key);
	return strtoull(v, NULL, 10);
}

/* Samples' indices sorted by time (stable). */
static size_t *by_time(const struct profile *p)
{
	size_t *o = malloc(p->nsamples * sizeof(*o) + 1);
	for (size_t i = 0; i < p->nsamples; i++)
		o[i] = i;
	for (size_t i = 1; i < p->nsamples; i++)
		for (size_t j = i; j > 0 && p->samples[o[j - 1]].time_ns > p->samples[o[j]].time_ns;
		     j--) {
			size_t t = o[j];
			o[j] = o[j - 1];
			o[j - 1] = t;
		}
	return o;
}

static void check_round_trip(bool wall, uint64_t weight)
{
	struct profile *p = sample_profile(wall, weight);
	size_t len;
	uint8_t *data = encode(p, &len);
	cr_assert(nflx_detect(data, len));
	struct profile *q = decode(data, len);

	char *f1 = folded_of(p), *f2 = folded_of(q);
	cr_assert_str_eq(f2, f1);
	cr_assert_eq(q->nsamples, p->nsamples);
	cr_assert_str_eq(profile_meta_get(q, "source_format"), "nflxprofile");
	cr_assert_str_eq(profile_meta_get(q, "command_line"), "sonde record -- prog");
	cr_assert_eq(q->nevents, 1);
	cr_assert_str_eq(q->events[0], "cpu-clock");

	/* Times relative to the start, to 1 us; threads; cpus; weights. */
	uint64_t p0 = wall ? meta_u64(p, "start_ns") : 0;
	uint64_t q0 = wall ? meta_u64(q, "start_ns") : 0;
	if (wall) {
		double unix_s = strtod(profile_meta_get(q, "start_unix_s"), NULL);
		cr_assert(fabs(unix_s - 1700000000.25) < 1e-6, "start_unix_s %f", unix_s);
		cr_assert(llabs((long long)(meta_u64(q, "end_ns") - q0) - 900000000) < 1000);
	}
	size_t *o = by_time(p);
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *a = &p->samples[o[i]], *b = &q->samples[i];
		long long da = (long long)(a->time_ns - p0), db = (long long)(b->time_ns - q0);
		cr_assert(llabs(da - db) <= 1000, "sample %zu: %lld vs %lld ns", i, da, db);
		const struct thread_info *ta = &p->threads[a->thread], *tb = &q->threads[b->thread];
		cr_assert_eq(tb->pid, ta->pid);
		cr_assert_eq(tb->tid, ta->tid);
		cr_assert_str_eq(tb->comm, ta->comm);
		cr_assert_eq(b->cpu, a->cpu);
		cr_assert_eq(b->weight, a->weight);
	}
	/* Stacks keep their frame kinds. */
	for (size_t i = 0; i < q->nsamples; i++) {
		uint32_t fa[8], fb[8];
		size_t na = profile_stack_frames(p, p->samples[o[i]].stack, fa, 8);
		size_t nb = profile_stack_frames(q, q->samples[i].stack, fb, 8);
		cr_assert_eq(na, nb);
		for (size_t k = 0; k < na; k++) {
			cr_assert_str_eq(frames_get(q->frames, fb[k])->name,
					 frames_get(p->frames, fa[k])->name);
			cr_assert_eq(frames_get(q->frames, fb[k])->kind,
				     frames_get(p->frames, fa[k])->kind);
		}
	}

	/* Writing the read profile gives the same bytes. */
	size_t len2;
	uint8_t *data2 = encode(q, &len2);
	struct profile *r = decode(data2, len2);
	char *f3 = folded_of(r);
	cr_assert_str_eq(f3, f1);
	for (size_t i = 0; i < r->nsamples; i++)
		cr_assert(llabs((long long)(r->samples[i].time_ns - q->samples[i].time_ns)) <= 1000);

	free(o);
	free(f1);
	free(f2);
	free(f3);
	free(data);
	free(data2);
	profile_free(p);
	profile_free(q);
	profile_free(r);
}

Test(nflx, round_trip_wall_clock)
{
	check_round_trip(true, 1);
}

Test(nflx, round_trip_monotonic_and_weights)
{
	check_round_trip(false, 10101010);
}

/* --- decoding the bytes independently ------------------------------------ */

struct decoded {
	double start, end;
	uint64_t samples[64], pids[64], tids[64], cpus[64];
	size_t nsamples, npids, ntids, ncpus, ndeltas, nvalues;
	double deltas[64];
	struct {
		uint32_t id, parent, nchildren;
		uint32_t children[16];
		bool has_parent, has_hits;
		char name[64], libtype[16];
	} nodes[64];
	size_t nnodes;
	char params[16][2][64];
	size_t nparams;
	char title[128];
};

static void copy_str(struct pb_reader *r, char *out, size_t size)
{
	struct pb_reader s;
	cr_assert_eq(pb_read_len(r, &s), 0);
	size_t n = (size_t)(s.end - s.p);
	cr_assert_lt(n, size);
	memcpy(out, s.p, n);
	out[n] = 0;
}

static void read_packed(struct pb_reader *r, enum pb_wire wire, uint64_t *out, size_t *n)
{
	cr_assert_eq(wire, PB_LEN, "repeated scalars are packed");
	struct pb_reader s;
	cr_assert_eq(pb_read_len(r, &s), 0);
	while (!pb_reader_done(&s)) {
		cr_assert_lt(*n, 64);
		cr_assert_eq(pb_read_varint(&s, &out[(*n)++]), 0);
	}
}

static void decode_fields(const uint8_t *data, size_t len, struct decoded *d)
{
	memset(d, 0, sizeof(*d));
	struct pb_reader r, s, e;
	pb_reader_init(&r, data, len);
	uint32_t field;
	enum pb_wire wire;
	uint64_t v;
	while (!pb_reader_done(&r)) {
		cr_assert_eq(pb_read_tag(&r, &field, &wire), 0);
		switch (field) {
		case 1:
			cr_assert_eq(wire, PB_I64);
			cr_assert_eq(pb_read_double(&r, &d->start), 0);
			break;
		case 2:
			cr_assert_eq(wire, PB_I64);
			cr_assert_eq(pb_read_double(&r, &d->end), 0);
			break;
		case 3:
			read_packed(&r, wire, d->samples, &d->nsamples);
			break;
		case 4:
			cr_assert_eq(wire, PB_LEN);
			cr_assert_eq(pb_read_len(&r, &s), 0);
			cr_assert_eq((s.end - s.p) % 8, 0);
			while (!pb_reader_done(&s))
				cr_assert_eq(pb_read_double(&s, &d->deltas[d->ndeltas++]), 0);
			break;
		case 5: {
			cr_assert_eq(wire, PB_LEN);
			cr_assert_lt(d->nnodes, 64);
			cr_assert_eq(pb_read_len(&r, &e), 0);
			size_t k = d->nnodes++;
			while (!pb_reader_done(&e)) {
				cr_assert_eq(pb_read_tag(&e, &field, &wire), 0);
				if (field == 1) {
					cr_assert_eq(pb_read_varint(&e, &v), 0);
					d->nodes[k].id = (uint32_t)v;
					continue;
				}
				cr_assert_eq(field, 2);
				cr_assert_eq(pb_read_len(&e, &s), 0);
				while (!pb_reader_done(&s)) {
					cr_assert_eq(pb_read_tag(&s, &field, &wire), 0);
					if (field == 1) {
						copy_str(&s, d->nodes[k].name, 64);
					} else if (field == 4) {
						copy_str(&s, d->nodes[k].libtype, 16);
					} else {
						cr_assert_eq(wire, PB_VARINT,
							     "node field %u: varint (children unpacked)",
							     field);
						cr_assert_eq(pb_read_varint(&s, &v), 0);
						if (field == 2)
							d->nodes[k].has_hits = true;
						if (field == 3)
							d->nodes[k].children[d->nodes[k].nchildren++] =
								(uint32_t)v;
						if (field == 5) {
							d->nodes[k].parent = (uint32_t)v;
							d->nodes[k].has_parent = true;
						}
					}
				}
			}
			break;
		}
		case 6:
			copy_str(&r, d->title, sizeof(d->title));
			break;
		case 8:
			cr_assert_eq(pb_read_len(&r, &e), 0);
			while (!pb_reader_done(&e)) {
				cr_assert_eq(pb_read_tag(&e, &field, &wire), 0);
				cr_assert(field == 1 || field == 2);
				copy_str(&e, d->params[d->nparams][field - 1], 64);
			}
			d->nparams++;
			break;
		case 9:
			read_packed(&r, wire, d->cpus, &d->ncpus);
			break;
		case 10:
			read_packed(&r, wire, d->pids, &d->npids);
			break;
		case 11:
			read_packed(&r, wire, d->tids, &d->ntids);
			break;
		case 12: {
			uint64_t vals[64];
			read_packed(&r, wire, vals, &d->nvalues);
			break;
		}
		default:
			cr_assert_fail("unexpected field %u", field);
		}
	}
}

static int node_index(const struct decoded *d, uint32_t id)
{
	for (size_t i = 0; i < d->nnodes; i++)
		if (d->nodes[i].id == id)
			return (int)i;
	return -1;
}

static const char *param_of(const struct decoded *d, const char *key)
{
	for (size_t i = 0; i < d->nparams; i++)
		if (strcmp(d->params[i][0], key) == 0)
			return d->params[i][1];
	return NULL;
}

Test(nflx, encoding_field_by_field)
{
	struct profile *p = sample_profile(true, 1);
	size_t len;
	uint8_t *data = encode(p, &len);
	struct decoded d;
	decode_fields(data, len, &d);

	/* start = start_unix_s (+ first sample after start_ns: 10 ms) */
	cr_assert(fabs(d.start - 1700000000.25) < 1e-6, "start_time %f", d.start);
	cr_assert(fabs(d.end - 1700000001.15) < 1e-6, "end_time %f", d.end);
	cr_assert_eq(d.nsamples, 8);
	cr_assert_eq(d.ndeltas, d.nsamples);
	cr_assert_eq(d.npids, d.nsamples);
	cr_assert_eq(d.ntids, d.nsamples);
	cr_assert_eq(d.ncpus, d.nsamples);
	cr_assert_eq(d.nvalues, 0, "no samples_value when every weight is 1");
	cr_assert_str_eq(param_of(&d, "has_parent"), "true");
	cr_assert_str_eq(param_of(&d, "has_samples_pid"), "true");
	cr_assert_str_eq(param_of(&d, "has_samples_tid"), "true");
	cr_assert_str_eq(param_of(&d, "has_samples_cpu"), "true");
	cr_assert_null(param_of(&d, "hasValues"));
	cr_assert_str_eq(param_of(&d, "sonde.command_line"), "sonde record -- prog");
	cr_assert_str_eq(d.title, "sonde: sonde record -- prog");

	/* Sample times: start + running sum, non-decreasing, as recorded. */
	static const double rel[] = {0.010, 0.020000123, 0.030, 0.040000456, 0.040000456,
				     0.500000001, 0.600, 0.812345678};
	double t = d.start;
	for (size_t i = 0; i < d.ndeltas; i++) {
		cr_assert_geq(d.deltas[i], 0);
		t += d.deltas[i];
		cr_assert(fabs(t - d.start - rel[i]) < 1e-6, "sample %zu at %f", i, t - d.start);
	}
	cr_assert_eq(d.pids[0], 100);
	cr_assert_eq(d.tids[0], 101);
	cr_assert_eq(d.pids[3], 200);
	cr_assert_eq(d.cpus[3], 3);

	/* The tree: node 0 "root", every sample id a node, parents and children
	 * agree, hit counts present, level 1 is the process name. */
	int root = node_index(&d, 0);
	cr_assert_geq(root, 0);
	cr_assert_str_eq(d.nodes[root].name, "root");
	cr_assert_not(d.nodes[root].has_parent);
	for (size_t i = 0; i < d.nsamples; i++)
		cr_assert_geq(node_index(&d, (uint32_t)d.samples[i]), 0);
	for (size_t i = 0; i < d.nnodes; i++) {
		cr_assert(d.nodes[i].has_hits);
		for (uint32_t c = 0; c < d.nodes[i].nchildren; c++) {
			int k = node_index(&d, d.nodes[i].children[c]);
			cr_assert_geq(k, 0);
			cr_assert(d.nodes[k].has_parent);
			cr_assert_eq(d.nodes[k].parent, d.nodes[i].id);
		}
		if (d.nodes[i].id)
			cr_assert(d.nodes[i].has_parent);
	}
	cr_assert_eq(d.nodes[root].nchildren, 2);
	int c0 = node_index(&d, d.nodes[root].children[0]);
	int c1 = node_index(&d, d.nodes[root].children[1]);
	cr_assert_str_eq(d.nodes[c0].name, "prog");
	cr_assert_str_eq(d.nodes[c1].name, "my prog");
	cr_assert_str_eq(d.nodes[c0].libtype, "");
	/* the first sample: prog;main;a;b (two lines of b merged) */
	int leaf = node_index(&d, (uint32_t)d.samples[0]);
	cr_assert_str_eq(d.nodes[leaf].name, "b");
	cr_assert_str_eq(d.nodes[leaf].libtype, "user");
	/* the kernel leaf */
	leaf = node_index(&d, (uint32_t)d.samples[3]);
	cr_assert_str_eq(d.nodes[leaf].name, "schedule");
	cr_assert_str_eq(d.nodes[leaf].libtype, "kernel");
	leaf = node_index(&d, (uint32_t)d.samples[7]);
	cr_assert_str_eq(d.nodes[leaf].name, "inl");
	cr_assert_str_eq(d.nodes[leaf].libtype, "inlined");
	/* the empty stack: the process node itself */
	cr_assert_eq(d.samples[5], d.nodes[c1].id);

	free(data);
	profile_free(p);
}

Test(nflx, weights_written_as_values)
{
	struct profile *p = sample_profile(false, 7);
	size_t len;
	uint8_t *data = encode(p, &len);
	struct decoded d;
	decode_fields(data, len, &d);
	cr_assert_eq(d.nvalues, d.nsamples);
	cr_assert_str_eq(param_of(&d, "hasValues"), "true");
	cr_assert(fabs(d.start - 5.01) < 1e-9, "monotonic seconds: %f", d.start);
	free(data);
	profile_free(p);
}

Test(nflx, empty_profile)
{
	struct profile *p = profile_new();
	size_t len;
	uint8_t *data = encode(p, &len);
	cr_assert(nflx_detect(data, len));
	struct decoded d;
	decode_fields(data, len, &d);
	cr_assert_eq(d.nsamples, 0);
	cr_assert_eq(d.nnodes, 1);
	cr_assert_str_eq(d.nodes[0].name, "root");
	struct profile *q = decode(data, len);
	cr_assert_eq(q->nsamples, 0);
	cr_assert_eq(q->nthreads, 0);
	free(data);
	profile_free(p);
	profile_free(q);
}

Test(nflx, truncation_at_every_length)
{
	struct profile *p = sample_profile(true, 3);
	size_t len;
	uint8_t *data = encode(p, &len);
	size_t failed = 0;
	for (size_t n = 0; n < len; n++) {
		uint8_t *copy = malloc(n + 1); /* exact size: ASan sees overreads */
		memcpy(copy, data, n);
		char err[256] = "";
		nflx_detect(copy, n);
		struct profile *q = nflx_read(copy, n, err, sizeof(err));
		if (q) {
			if (q->nsamples) {
				char *f = folded_of(q);
				free(f);
			}
			profile_free(q);
		} else {
			cr_assert(err[0], "no error at length %zu", n);
			cr_assert_null(strchr(err, '\n'));
			failed++;
		}
		free(copy);
	}
	cr_assert_gt(failed, len / 2);
	/* every single-byte corruption is survived too */
	for (size_t n = 0; n < len; n++) {
		for (int bit = 0; bit < 8; bit += 3) {
			uint8_t *copy = malloc(len);
			memcpy(copy, data, len);
			copy[n] ^= (uint8_t)(1u << bit);
			char err[256];
			nflx_detect(copy, len);
			profile_free(nflx_read(copy, len, err, sizeof(err)));
			free(copy);
		}
	}
	free(data);
	profile_free(p);
}

/* --- hand-made files -------------------------------------------------------- */

struct hnode {
	uint32_t id;
	const char *name, *libtype;
	int parent; /* -1: none */
	const uint32_t *children;
	size_t nchildren;
	bool packed_children;
	const char *stack[4]; /* Node.stack names (has_node_stack) */
	int pid;              /* -1: none */
};

static void put_node(struct pb_buf *b, const struct hnode *h)
{
	struct pb_buf n = {0}, e = {0};
	pb_put_string(&n, 1, h->name);
	pb_put_uint(&n, 2, 0);
	if (h->packed_children) {
		uint64_t c[16];
		for (size_t i = 0; i < h->nchildren; i++)
			c[i] = h->children[i];
		pb_put_packed_uint(&n, 3, c, h->nchildren);
	} else {
		for (size_t i = 0; i < h->nchildren; i++)
			pb_put_uint(&n, 3, h->children[i]);
	}
	if (h->libtype)
		pb_put_string(&n, 4, h->libtype);
	if (h->parent >= 0)
		pb_put_uint(&n, 5, (uint64_t)h->parent);
	if (h->pid >= 0)
		pb_put_uint(&n, 6, (uint64_t)h->pid);
	for (size_t i = 0; i < 4 && h->stack[i]; i++) {
		struct pb_buf sf = {0}, file = {0};
		pb_put_string(&sf, 1, h->stack[i]);
		pb_put_string(&sf, 2, "jit");
		pb_put_string(&file, 1, "app.js");
		pb_put_uint(&file, 2, 10 + i);
		pb_put_message(&sf, 3, &file);
		pb_put_message(&n, 10, &sf);
		pb_buf_free(&sf);
		pb_buf_free(&file);
	}
	pb_put_uint(&e, 1, h->id);
	pb_put_message(&e, 2, &n);
	pb_put_message(b, 5, &e);
	pb_buf_free(&n);
	pb_buf_free(&e);
}

static void put_param(struct pb_buf *b, const char *k, const char *v)
{
	struct pb_buf e = {0};
	pb_put_string(&e, 1, k);
	pb_put_string(&e, 2, v);
	pb_put_message(b, 8, &e);
	pb_buf_free(&e);
}

static void put_samples(struct pb_buf *b, const uint64_t *ids, size_t n, double step)
{
	double deltas[16];
	for (size_t i = 0; i < n; i++)
		deltas[i] = step;
	pb_put_packed_uint(b, 3, ids, n);
	pb_put_packed_double(b, 4, deltas, n);
}

static struct profile *read_buf(struct pb_buf *b, char *err)
{
	struct profile *p = nflx_read(b->data, b->len, err, 256);
	return p;
}

/* root(0) -> proc(1) -> f(2) -> g(3), proc -> h(4) */
static void put_tree(struct pb_buf *b, bool parents, bool children, bool packed)
{
	static const uint32_t c0[] = {1}, c1[] = {2, 4}, c2[] = {3};
	struct hnode n[] = {
		{0, "root", NULL, -1, c0, 1, packed, {0}, -1},
		{1, "java", NULL, 0, c1, 2, packed, {0}, 42},
		{2, "f", "user", 1, c2, 1, packed, {0}, -1},
		{3, "g", "kernel", 2, NULL, 0, packed, {0}, -1},
		{4, "h", "jit", 1, NULL, 0, packed, {0}, -1},
	};
	for (size_t i = 0; i < 5; i++) {
		if (!parents)
			n[i].parent = -1;
		if (!children)
			n[i].nchildren = 0;
		put_node(b, &n[i]);
	}
}

static void check_tree(struct profile *p)
{
	char *f = folded_of(p);
	cr_assert_str_eq(f, "java;f;g_[k] 2\njava;h_[j] 1\n");
	free(f);
	cr_assert_eq(p->threads[p->samples[0].thread].pid, 42, "Node.pid without samples_pid");
	double t = (double)p->samples[2].time_ns / 1e9;
	cr_assert(fabs(t - 100.75) < 1e-6, "%f", t);
}

Test(nflx, parents_from_children_lists)
{
	for (int packed = 0; packed < 2; packed++) {
		struct pb_buf b = {0};
		pb_put_double(&b, 1, 100.0);
		pb_put_double(&b, 2, 101.0);
		put_samples(&b, (uint64_t[]){3, 4, 3}, 3, 0.25);
		put_tree(&b, false, true, packed);
		cr_assert(nflx_detect(b.data, b.len));
		char err[256] = "";
		struct profile *p = read_buf(&b, err);
		cr_assert(p, "%s", err);
		check_tree(p);
		cr_assert_eq(meta_u64(p, "start_ns"), 100000000000ull);
		cr_assert_eq(meta_u64(p, "end_ns"), 101000000000ull);
		profile_free(p);
		pb_buf_free(&b);
	}
}

Test(nflx, parents_from_parent_fields)
{
	struct pb_buf b = {0};
	pb_put_double(&b, 1, 100.0);
	pb_put_double(&b, 2, 101.0);
	put_samples(&b, (uint64_t[]){3, 4, 3}, 3, 0.25);
	put_tree(&b, true, false, false);
	put_param(&b, "has_parent", "true");
	char err[256] = "";
	struct profile *p = read_buf(&b, err);
	cr_assert(p, "%s", err);
	check_tree(p);
	profile_free(p);
	pb_buf_free(&b);
}

Test(nflx, node_stacks)
{
	/* nflxprofile's own V8 converter: flat nodes named after the process,
	 * the stack root first in Node.stack. */
	struct pb_buf b = {0};
	pb_put_double(&b, 1, 10.0);
	pb_put_double(&b, 2, 11.0);
	put_samples(&b, (uint64_t[]){7, 8, 7}, 3, 0.1);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, NULL, 0, false, {0}, -1});
	put_node(&b, &(struct hnode){7, "node", NULL, -1, NULL, 0, false, {"main", "run"}, 9});
	put_node(&b, &(struct hnode){8, "node", NULL, -1, NULL, 0, false, {"main"}, 9});
	put_param(&b, "has_node_stack", "true");
	put_param(&b, "has_samples_pid", "true");
	pb_put_packed_uint(&b, 10, (uint64_t[]){9, 9, 9}, 3);
	cr_assert(nflx_detect(b.data, b.len));
	char err[256] = "";
	struct profile *p = read_buf(&b, err);
	cr_assert(p, "%s", err);
	char *f = folded_of(p);
	cr_assert_str_eq(f, "node;main_[j] 1\nnode;main_[j];run_[j] 2\n");
	free(f);
	const struct frame *fr0 = frames_get(p->frames, p->nodes[p->samples[0].stack].frame);
	cr_assert_str_eq(fr0->file, "app.js");
	cr_assert_eq(fr0->line, 11);
	cr_assert_eq(p->threads[p->samples[0].thread].pid, 9);
	profile_free(p);
	pb_buf_free(&b);
}

static void expect_error(struct pb_buf *b, const char *needle)
{
	char err[256] = "";
	struct profile *p = read_buf(b, err);
	cr_assert_null(p, "accepted a broken file (wanted: %s)", needle);
	cr_assert(strstr(err, needle), "error \"%s\" lacks \"%s\"", err, needle);
	cr_assert_null(strchr(err, '\n'));
	pb_buf_free(b);
}

Test(nflx, errors)
{
	struct pb_buf b = {0};

	/* a sample's node missing */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){3, 9}, 2, 0.1);
	put_tree(&b, true, true, false);
	expect_error(&b, "node 9 does not exist");

	/* a child missing */
	pb_put_double(&b, 1, 1.0);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, (uint32_t[]){5}, 1, false, {0}, -1});
	expect_error(&b, "child 5 does not exist");

	/* a parent missing */
	pb_put_double(&b, 1, 1.0);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, NULL, 0, false, {0}, -1});
	put_node(&b, &(struct hnode){1, "x", NULL, 6, NULL, 0, false, {0}, -1});
	expect_error(&b, "parent 6 does not exist");

	/* a parent cycle */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){2}, 1, 0.1);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, NULL, 0, false, {0}, -1});
	put_node(&b, &(struct hnode){1, "x", NULL, 2, NULL, 0, false, {0}, -1});
	put_node(&b, &(struct hnode){2, "y", NULL, 1, NULL, 0, false, {0}, -1});
	put_param(&b, "has_parent", "true");
	expect_error(&b, "cycle");

	/* a node cut off from the root */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){1}, 1, 0.1);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, NULL, 0, false, {0}, -1});
	put_node(&b, &(struct hnode){1, "x", NULL, -1, NULL, 0, false, {0}, -1});
	expect_error(&b, "not connected");

	/* two parents */
	pb_put_double(&b, 1, 1.0);
	put_node(&b, &(struct hnode){0, "root", NULL, -1, (uint32_t[]){1, 2}, 2, false, {0}, -1});
	put_node(&b, &(struct hnode){1, "x", NULL, -1, (uint32_t[]){2}, 1, false, {0}, -1});
	put_node(&b, &(struct hnode){2, "y", NULL, -1, NULL, 0, false, {0}, -1});
	expect_error(&b, "child of both");

	/* more deltas than samples */
	pb_put_double(&b, 1, 1.0);
	pb_put_packed_uint(&b, 3, (uint64_t[]){1}, 1);
	pb_put_packed_double(&b, 4, (double[]){0.1, 0.2}, 2);
	put_tree(&b, true, true, false);
	expect_error(&b, "1 samples but 2 time_deltas");

	/* pids that do not match the samples */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){1, 1}, 2, 0.1);
	pb_put_packed_uint(&b, 10, (uint64_t[]){1}, 1);
	put_tree(&b, true, true, false);
	expect_error(&b, "samples_pid");

	/* duplicate node ids */
	pb_put_double(&b, 1, 1.0);
	put_tree(&b, true, true, false);
	put_node(&b, &(struct hnode){3, "z", NULL, 2, NULL, 0, false, {0}, -1});
	expect_error(&b, "node 3 appears twice");

	/* no start_time, a NaN one, an absurd one */
	put_tree(&b, true, true, false);
	expect_error(&b, "start_time");
	pb_put_double(&b, 1, NAN);
	put_tree(&b, true, true, false);
	expect_error(&b, "start_time");
	pb_put_double(&b, 1, 1e300);
	put_tree(&b, true, true, false);
	expect_error(&b, "start_time");

	/* a time delta that is not a number */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){1}, 1, INFINITY);
	put_tree(&b, true, true, false);
	expect_error(&b, "time inf s out of range");
	/* ... or that goes before the epoch */
	pb_put_double(&b, 1, 1.0);
	put_samples(&b, (uint64_t[]){1, 1}, 2, -0.75);
	put_tree(&b, true, true, false);
	expect_error(&b, "sample 1: time -0.5 s out of range");

	/* packed doubles of a bad length, a wrong wire type */
	pb_put_double(&b, 1, 1.0);
	pb_put_bytes(&b, 4, "1234567", 7);
	expect_error(&b, "time_deltas");
	pb_put_uint(&b, 1, 5);
	expect_error(&b, "start_time");

	/* node ids beyond 32 bits */
	pb_put_double(&b, 1, 1.0);
	pb_put_packed_uint(&b, 3, (uint64_t[]){1ull << 40}, 1);
	expect_error(&b, "samples");

	char err[64] = "";
	cr_assert_null(nflx_read((const uint8_t *)"", 0, err, sizeof(err)));
	cr_assert(err[0]);
}

/* Times as far apart as the reader allows (0 and NFLX_MAX_SECONDS, 1e10 s):
 * 1e19 ns does not fit an int64_t, so the offset from the start must not be
 * taken through one (llround overflowed and the result was negated). */
Test(nflx, times_at_the_limits)
{
	struct pb_buf b = {0};
	pb_put_double(&b, 1, 0.0);
	pb_put_double(&b, 2, 1e10);
	pb_put_packed_uint(&b, 3, (uint64_t[]){3, 3}, 2);
	pb_put_packed_double(&b, 4, (double[]){1e10, -1e10}, 2);
	put_tree(&b, true, true, false);
	char err[256] = "";
	struct profile *p = read_buf(&b, err);
	cr_assert(p, "%s", err);
	cr_assert_eq(p->nsamples, 2);
	cr_assert_eq(p->samples[0].time_ns, 10000000000000000000ull);
	cr_assert_eq(p->samples[1].time_ns, 0);
	cr_assert_eq(meta_u64(p, "end_ns"), 10000000000000000000ull);
	profile_free(p);
	pb_buf_free(&b);

	/* and backwards from the latest start: before the epoch clamps to it */
	pb_put_double(&b, 1, 1e10);
	pb_put_packed_uint(&b, 3, (uint64_t[]){3, 3}, 2);
	pb_put_packed_double(&b, 4, (double[]){-1e10, 0.5}, 2);
	put_tree(&b, true, true, false);
	p = read_buf(&b, err);
	cr_assert(p, "%s", err);
	cr_assert_eq(p->samples[0].time_ns, 0);
	/* 1e19 ns from the start, a double resolves 2048 ns */
	cr_assert_lt(llabs((long long)p->samples[1].time_ns - 500000000), 4096);
	profile_free(p);
	pb_buf_free(&b);
}

Test(nflx, detect)
{
	struct profile *p = sample_profile(true, 1);
	size_t len;
	uint8_t *data = encode(p, &len);
	cr_assert(nflx_detect(data, len));
	cr_assert_not(nflx_detect(data, len - 1), "truncated");
	cr_assert_not(nflx_detect(NULL, 0));
	const char *folded = "prog;main;a 3\nprog;main;b 1\n";
	cr_assert_not(nflx_detect((const uint8_t *)folded, strlen(folded)));
	const char *json = "{\"traceEvents\": []}";
	cr_assert_not(nflx_detect((const uint8_t *)json, strlen(json)));

	/* a pprof-like message: sample_type (1, LEN), function (5) with varint
	 * fields inside */
	struct pb_buf b = {0}, fn = {0};
	pb_put_bytes(&b, 1, "\x08\x01\x10\x02", 4);
	pb_put_uint(&fn, 1, 1);
	pb_put_uint(&fn, 2, 3);
	pb_put_message(&b, 5, &fn);
	cr_assert_not(nflx_detect(b.data, b.len));
	pb_buf_free(&b);
	pb_buf_free(&fn);

	/* start_time but no node */
	pb_put_double(&b, 1, 1.0);
	cr_assert_not(nflx_detect(b.data, b.len));
	/* a node entry whose value is not a Node */
	struct pb_buf e = {0};
	pb_put_uint(&e, 1, 0);
	pb_put_bytes(&e, 2, "\x10\x01\x7a\x00", 4); /* field 15 */
	pb_put_message(&b, 5, &e);
	cr_assert_not(nflx_detect(b.data, b.len));
	pb_buf_free(&b);
	pb_buf_free(&e);

	free(data);
	profile_free(p);
}
