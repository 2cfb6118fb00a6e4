/* pprof_write — a profile into gzipped profile.proto (pprof_write, pprof.h
 * says what goes where): the string table, functions, mappings and
 * locations interned as the samples need them, then the parts written in
 * the message's field order through one gzip stream. */
#define _GNU_SOURCE
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "pb.h"
#include "pprofproto.h"
#include "strpool.h"
#include "util.h"

struct writer {
	struct profile *p;
	struct strpool strs;  /* string -> string_table index */
	struct strpool funcs; /* (name, file) string indices -> function id - 1 */
	struct strpool maps;  /* filename string index -> mapping id - 1 */
	struct strpool locs;  /* frame ids, innermost first -> location id - 1 */
	struct pb_buf samples, mappings, locations, functions;
	uint32_t *func_of; /* frame id -> function id, 0 = not yet */
	size_t nfunc_of;
	uint32_t *loc_of;  /* stack node -> location of the frame group ending there */
	uint32_t *next_of; /* stack node -> the node under that group */
	uint32_t *comm_of; /* thread -> string index of its comm */
	uint32_t *group;
	size_t group_cap;
	uint64_t *ids;
	size_t ids_cap;
	uint32_t k_thread, k_pid, k_tid, k_timestamp, k_nanoseconds, k_span_id, k_span_name,
		k_event;
};

static uint32_t sid(struct writer *w, const char *s)
{
	return strpool_add(&w->strs, s, strlen(s), NULL);
}

/* A label key or unit, interned on first use (so unused ones are not in the
 * file). */
static uint32_t lazy_sid(struct writer *w, uint32_t *k, const char *s)
{
	if (!*k)
		*k = sid(w, s);
	return *k;
}

static const struct frame *frame_at(const struct writer *w, uint32_t id)
{
	static const struct frame unknown = {"[unknown]", "", "", 0, FRAME_UNKNOWN, ""};
	const struct frame *f = frames_get(w->p->frames, id);
	return f ? f : &unknown;
}

static uint32_t function_id(struct writer *w, uint32_t frame)
{
	if (frame < w->nfunc_of && w->func_of[frame])
		return w->func_of[frame];
	const struct frame *f = frame_at(w, frame);
	/* system_name: the linkage name of a demangled C++ or Rust name */
	const char *sys = f->system_name && *f->system_name ? f->system_name : f->name;
	uint32_t key[3] = {sid(w, f->name), sid(w, f->file), sid(w, sys)};
	bool added;
	uint32_t id = strpool_add(&w->funcs, key, sizeof(key), &added) + 1;
	if (added) {
		struct pb_buf m = {0};
		pb_put_uint(&m, 1, id);
		pb_put_uint(&m, 2, key[0]); /* name */
		pb_put_uint(&m, 3, key[2]); /* system_name */
		if (key[1])
			pb_put_uint(&m, 4, key[1]); /* filename */
		pb_put_message(&w->functions, P_FUNCTION, &m);
		pb_buf_free(&m);
	}
	if (frame < w->nfunc_of)
		w->func_of[frame] = id;
	return id;
}

/* The mapping of a frame's module; 0 (none) for frames without one. */
static uint32_t mapping_id(struct writer *w, const struct frame *f)
{
	const char *file = f->module;
	if (!*file) {
		if (f->kind != FRAME_KERNEL)
			return 0;
		file = KERNEL_MAPPING;
	}
	uint32_t fs = sid(w, file);
	bool added;
	uint32_t id = strpool_add(&w->maps, &fs, sizeof(fs), &added) + 1;
	if (added) {
		struct pb_buf m = {0};
		pb_put_uint(&m, 1, id);
		pb_put_uint(&m, 5, fs); /* filename */
		pb_put_uint(&m, 7, 1);	/* has_functions */
		pb_put_uint(&m, 8, 1);	/* has_filenames */
		pb_put_uint(&m, 9, 1);	/* has_line_numbers */
		pb_put_uint(&m, 10, 1); /* has_inline_frames */
		pb_put_message(&w->mappings, P_MAPPING, &m);
		pb_buf_free(&m);
	}
	return id;
}

/* The location of the frame group whose innermost frame is `node`'s: the
 * node's frame, and while it is inlined, the frames under it down to the one
 * they were inlined into. Sets next_of[node] to the node under the group. */
static uint32_t location_of(struct writer *w, uint32_t node)
{
	if (w->loc_of[node])
		return w->loc_of[node];
	const struct profile *p = w->p;
	size_t n = 0;
	uint32_t at = node;
	for (;;) {
		grow_array((void **)&w->group, &w->group_cap, n + 1, sizeof(*w->group));
		w->group[n++] = p->nodes[at].frame;
		uint32_t parent = p->nodes[at].parent;
		if (frame_at(w, p->nodes[at].frame)->kind != FRAME_INLINED || parent == 0 ||
		    parent >= p->nnodes)
			break;
		at = parent;
	}
	w->next_of[node] = p->nodes[at].parent < p->nnodes ? p->nodes[at].parent : 0;
	bool added;
	uint32_t id = strpool_add(&w->locs, w->group, n * sizeof(*w->group), &added) + 1;
	if (added) {
		struct pb_buf m = {0};
		pb_put_uint(&m, 1, id);
		uint32_t map = mapping_id(w, frame_at(w, w->group[n - 1]));
		if (map)
			pb_put_uint(&m, 2, map);
		for (size_t i = 0; i < n; i++) {
			struct pb_buf line = {0};
			pb_put_uint(&line, 1, function_id(w, w->group[i]));
			uint32_t l = frame_at(w, w->group[i])->line;
			if (l)
				pb_put_uint(&line, 2, l);
			pb_put_message(&m, 4, &line);
			pb_buf_free(&line);
		}
		pb_put_message(&w->locations, P_LOCATION, &m);
		pb_buf_free(&m);
	}
	w->loc_of[node] = id;
	return id;
}

static void put_label_str(struct pb_buf *m, uint32_t key, uint32_t str)
{
	struct pb_buf l = {0};
	pb_put_uint(&l, 1, key);
	pb_put_uint(&l, 2, str);
	pb_put_message(m, 3, &l);
	pb_buf_free(&l);
}

static void put_label_num(struct pb_buf *m, uint32_t key, uint64_t num, uint32_t unit)
{
	struct pb_buf l = {0};
	pb_put_uint(&l, 1, key);
	pb_put_uint(&l, 3, num);
	if (unit)
		pb_put_uint(&l, 4, unit);
	pb_put_message(m, 3, &l);
	pb_buf_free(&l);
}

/* What one pprof Sample says: a stack of a thread and event, its values,
 * and the sample itself (for its time and spans; NULL when aggregated). */
struct pprof_sample {
	uint32_t stack, thread, event;
	const uint64_t *vals;
	size_t nvals;
	const struct sample *s;
};

static void put_sample(struct writer *w, struct pb_buf *m, const struct pprof_sample *x)
{
	const struct profile *p = w->p;
	uint32_t stack = x->stack, thread = x->thread, event = x->event;
	const struct sample *s = x->s;
	size_t n = 0;
	for (uint32_t node = stack < p->nnodes ? stack : 0; node; node = w->next_of[node]) {
		uint32_t loc = location_of(w, node);
		grow_array((void **)&w->ids, &w->ids_cap, n + 1, sizeof(*w->ids));
		w->ids[n++] = loc;
	}
	m->len = 0;
	if (n)
		pb_put_packed_uint(m, 1, w->ids, n);
	pb_put_packed_uint(m, 2, x->vals, x->nvals);
	if (thread < p->nthreads) {
		const struct thread_info *t = &p->threads[thread];
		put_label_str(m, lazy_sid(w, &w->k_thread, "thread"), w->comm_of[thread]);
		put_label_num(m, lazy_sid(w, &w->k_pid, "pid"), t->pid, 0);
		put_label_num(m, lazy_sid(w, &w->k_tid, "tid"), t->tid, 0);
	}
	if (p->nevents > 1 && event < p->nevents)
		put_label_str(m, lazy_sid(w, &w->k_event, "event"), sid(w, p->events[event]));
	if (s && s->time_ns)
		put_label_num(m, lazy_sid(w, &w->k_timestamp, "timestamp_ns"), s->time_ns,
			      lazy_sid(w, &w->k_nanoseconds, "nanoseconds"));
	for (uint32_t i = 0; s && i < s->nlinks; i++) {
		if ((size_t)s->links + i >= p->nspan_links)
			break;
		const struct span_link *l = &p->span_links[s->links + i];
		char id[24];
		snprintf(id, sizeof(id), "%" PRIu64, l->span_id);
		put_label_str(m, lazy_sid(w, &w->k_span_id, "span_id"), sid(w, id));
		if (l->probe < p->nprobes)
			put_label_str(m, lazy_sid(w, &w->k_span_name, "span_name"),
				      sid(w, p->probes[l->probe].name));
	}
	pb_put_message(&w->samples, P_SAMPLE, m);
}

/* A meta value in seconds ("1700000000.250000") as nanoseconds, exactly. */
static uint64_t meta_ns(const struct profile *p, const char *key)
{
	const char *v = profile_meta_get(p, key);
	if (!v || *v < '0' || *v > '9')
		return 0;
	uint64_t s = 0, frac = 0, scale = 1000000000;
	const char *c = v;
	for (; *c >= '0' && *c <= '9'; c++) {
		s = s * 10 + (uint64_t)(*c - '0');
		if (s > 9000000000u)
			return 0; /* past int64 nanoseconds: no time rather than a wrong one */
	}
	if (*c == '.')
		for (c++; *c >= '0' && *c <= '9'; c++)
			if (scale > 1)
				frac += (uint64_t)(*c - '0') * (scale /= 10);
	if (*c)
		return 0;
	return s * 1000000000 + frac;
}

static uint64_t to_u64(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 9.2e18)
		return INT64_MAX;
	return (uint64_t)llround(v);
}

static void put_value_type(struct pb_buf *b, uint32_t field, uint32_t type, uint32_t unit)
{
	struct pb_buf m = {0};
	pb_put_uint(&m, 1, type);
	pb_put_uint(&m, 2, unit);
	pb_put_message(b, field, &m);
	pb_buf_free(&m);
}

static void writer_init(struct writer *w, struct profile *p)
{
	*w = (struct writer){.p = p};
	sid(w, ""); /* index 0 */
	w->nfunc_of = frames_count(p->frames) + 1;
	w->func_of = xcalloc(w->nfunc_of, sizeof(*w->func_of));
	w->loc_of = xcalloc(p->nnodes, sizeof(*w->loc_of));
	w->next_of = xcalloc(p->nnodes, sizeof(*w->next_of));
	w->comm_of = xcalloc(p->nthreads + 1, sizeof(*w->comm_of));
	for (size_t i = 0; i < p->nthreads; i++)
		w->comm_of[i] = sid(w, p->threads[i].comm ? p->threads[i].comm : "");
}

static void writer_free(struct writer *w)
{
	pb_buf_free(&w->samples);
	pb_buf_free(&w->mappings);
	pb_buf_free(&w->locations);
	pb_buf_free(&w->functions);
	strpool_free(&w->strs);
	strpool_free(&w->funcs);
	strpool_free(&w->maps);
	strpool_free(&w->locs);
	free(w->func_of);
	free(w->loc_of);
	free(w->next_of);
	free(w->comm_of);
	free(w->group);
	free(w->ids);
}

/* The message's head: its sample types, "samples"/"count" and, with two
 * values, "cpu"/"nanoseconds". */
static void put_sample_types(struct writer *w, struct pb_buf *head, size_t nvals)
{
	put_value_type(head, P_SAMPLE_TYPE, sid(w, "samples"), sid(w, "count"));
	if (nvals == 2)
		put_value_type(head, P_SAMPLE_TYPE, sid(w, "cpu"),
			       lazy_sid(w, &w->k_nanoseconds, "nanoseconds"));
}

/* One Sample per sample the view takes, with its own time and spans. */
static void put_each_sample(struct writer *w, const struct view *filter, double period_ns,
			    size_t nvals)
{
	const struct profile *p = w->p;
	struct pb_buf msg = {0};
	uint64_t vals[2];
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(filter, p, s))
			continue;
		vals[0] = s->weight;
		vals[1] = to_u64((double)s->weight * period_ns);
		put_sample(w, &msg,
			   &(struct pprof_sample){.stack = s->stack, .thread = s->thread,
						  .event = s->event, .vals = vals, .nvals = nvals,
						  .s = s});
	}
	pb_buf_free(&msg);
}

/* One Sample per (stack, thread, event) of the samples the view takes, in
 * the order each was first seen, their weights summed. */
static void put_summed_samples(struct writer *w, const struct view *filter, double period_ns,
			       size_t nvals)
{
	const struct profile *p = w->p;
	struct strpool agg = {0};
	struct {
		uint32_t stack, thread, event;
		uint64_t weight;
	} *sums = NULL;
	size_t sums_cap = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (!view_takes(filter, p, s))
			continue;
		uint32_t key[3] = {s->stack, s->thread, s->event};
		bool added;
		uint32_t k = strpool_add(&agg, key, sizeof(key), &added);
		if (added) {
			grow_array((void **)&sums, &sums_cap, (size_t)k + 1, sizeof(*sums));
			sums[k].stack = s->stack;
			sums[k].thread = s->thread;
			sums[k].event = s->event;
			sums[k].weight = 0;
		}
		sums[k].weight += s->weight;
	}
	struct pb_buf msg = {0};
	uint64_t vals[2];
	for (size_t k = 0; k < strpool_count(&agg); k++) {
		vals[0] = sums[k].weight;
		vals[1] = to_u64((double)sums[k].weight * period_ns);
		put_sample(w, &msg,
			   &(struct pprof_sample){.stack = sums[k].stack, .thread = sums[k].thread,
						  .event = sums[k].event, .vals = vals,
						  .nvals = nvals});
	}
	pb_buf_free(&msg);
	free(sums);
	strpool_free(&agg);
}

/* The message's tail: time, duration, the period and its type, and the
 * command line as a comment. */
static void put_tail(struct writer *w, struct pb_buf *tail, double period_ns)
{
	const struct profile *p = w->p;
	uint64_t start = meta_ns(p, "start_unix_s");
	uint64_t duration = meta_ns(p, "duration_s");
	if (start)
		pb_put_uint(tail, P_TIME_NANOS, start);
	if (duration)
		pb_put_uint(tail, P_DURATION_NANOS, duration);
	double period = profile_meta_double(p, "period");
	if (period_ns > 0) {
		put_value_type(tail, P_PERIOD_TYPE, sid(w, "cpu"),
			       lazy_sid(w, &w->k_nanoseconds, "nanoseconds"));
		pb_put_uint(tail, P_PERIOD, to_u64(period_ns));
	} else if (period >= 1) {
		put_value_type(tail, P_PERIOD_TYPE, sid(w, p->nevents ? p->events[0] : "events"),
			       sid(w, "count"));
		pb_put_uint(tail, P_PERIOD, to_u64(period));
	}
	const char *cmd = profile_meta_get(p, "command_line");
	if (cmd && *cmd)
		pb_put_uint(tail, P_COMMENT, sid(w, cmd));
}

/* Last of the interning: everything else is already put. */
static void put_string_table(const struct writer *w, struct pb_buf *strings)
{
	for (uint32_t i = 0; i < strpool_count(&w->strs); i++)
		pb_put_bytes(strings, P_STRING_TABLE, strpool_str(&w->strs, i),
			     strpool_len(&w->strs, i));
}

/* The parts, one after another, through one gzip stream into out. */
static int write_gzipped(FILE *out, const struct pb_buf *const *parts, size_t nparts)
{
	int rc = 0;
	FILE *gz = outfile_gzip(out);
	if (!gz) {
		rc = -1;
	} else {
		for (size_t i = 0; i < nparts && rc == 0; i++)
			if (parts[i]->len && fwrite(parts[i]->data, 1, parts[i]->len, gz) != parts[i]->len)
				rc = -1;
		if (fclose(gz) != 0)
			rc = -1;
	}
	if (fflush(out) || ferror(out))
		rc = -1;
	return rc;
}

int pprof_write(FILE *out, struct profile *p, const struct pprof_options *o)
{
	static const struct pprof_options defaults = {0};
	if (!o)
		o = &defaults;
	double hz = profile_meta_double(p, "frequency_hz");
	double period_ns = hz > 0 ? 1e9 / hz : 0;
	if (!profile_weight_ns_fits(p, period_ns)) {
		errno = EOVERFLOW; /* the cpu values would not fit pprof's int64 */
		return -1;
	}
	struct writer w;
	writer_init(&w, p);
	size_t nvals = period_ns > 0 ? 2 : 1;
	struct pb_buf head = {0}, tail = {0}, strings = {0};
	put_sample_types(&w, &head, nvals);
	if (o->aggregate)
		put_summed_samples(&w, o->filter, period_ns, nvals);
	else
		put_each_sample(&w, o->filter, period_ns, nvals);
	put_tail(&w, &tail, period_ns);
	put_string_table(&w, &strings);
	const struct pb_buf *parts[] = {&head,	      &w.samples,   &w.mappings, &w.locations,
					&w.functions, &strings,	    &tail};
	int rc = write_gzipped(out, parts, sizeof(parts) / sizeof(*parts));
	pb_buf_free(&head);
	pb_buf_free(&tail);
	pb_buf_free(&strings);
	writer_free(&w);
	return rc;
}
