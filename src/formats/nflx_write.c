/* nflx_write — a profile into an nflxprofile (nflx_write, nflx.h says what
 * goes where): the samples in time order, their leaves in a call tree of
 * root -> comm -> functions, the times as deltas a reader sums back without
 * drift, then the tree, the title, the params and the per-sample columns. */
#define _GNU_SOURCE
#include "nflx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "nflxproto.h"
#include "pb.h"
#include "util.h"

static const char *libtype_of(enum frame_kind kind)
{
	/* Process names and unresolved frames have no libtype. */
	return kind <= FRAME_JIT ? frames_kind_name(kind) : "";
}

struct wnode {
	uint32_t parent;
	const char *name;
	const char *libtype;
	uint64_t hits;
};

struct writer {
	struct profile *p;
	struct wnode *nodes;
	size_t n, cap;
	struct hashmap child; /* (parent node, frame) -> node */
	struct hashmap leaf;  /* (comm node, stack node) -> node */
	uint32_t *buf;
	size_t buf_cap;
};

static uint32_t wnode_child(struct writer *w, uint32_t parent, uint32_t frame, const char *name,
			    const char *libtype)
{
	bool added;
	uint64_t *id = hashmap_put(&w->child, pair_key(parent, frame), &added);
	if (!added)
		return (uint32_t)*id;
	*id = w->n;
	grow_array((void **)&w->nodes, &w->cap, w->n + 1, sizeof(*w->nodes));
	w->nodes[w->n] = (struct wnode){parent, name, libtype, 0};
	return (uint32_t)w->n++;
}

/* The tree node of a sample's leaf: root -> comm -> frames root first. */
static uint32_t sample_leaf(struct writer *w, const struct sample *s)
{
	struct profile *p = w->p;
	const struct thread_info *t = &p->threads[s->thread];
	uint32_t comm_frame = frames_intern(p->frames, t->comm, "", "", 0, FRAME_PROCESS);
	uint32_t node = wnode_child(w, 0, comm_frame, t->comm, "");
	uint64_t id;
	uint64_t key = pair_key(node, s->stack);
	if (hashmap_get(&w->leaf, key, &id))
		return (uint32_t)id;
	size_t depth = p->nodes[s->stack].depth;
	grow_array((void **)&w->buf, &w->buf_cap, depth + 1, sizeof(*w->buf));
	profile_stack_frames(p, s->stack, w->buf, depth);
	for (size_t i = 0; i < depth; i++) {
		uint32_t fn = profile_function_frame(p, w->buf[i]);
		const struct frame *f = frames_get(p->frames, fn);
		node = wnode_child(w, node, fn, f ? f->name : "", f ? libtype_of(f->kind) : "");
	}
	hashmap_set(&w->leaf, key, node);
	return node;
}

/* The samples' indexes sorted by time, ties in the samples' order (n + 1
 * entries, for n = 0). */
static uint32_t *samples_by_time(const struct profile *p)
{
	size_t n = p->nsamples;
	uint32_t *ord = xmalloc((n + 1) * sizeof(*ord));
	for (size_t i = 0; i < n; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, n, sizeof(*ord), profile_cmp_sample_index, (void *)p);
	return ord;
}

/* Absolute seconds of a CLOCK_MONOTONIC time. */
struct clock_map {
	bool wall;
	double unix_s;
	uint64_t base_ns;
};

static double to_seconds(const struct clock_map *c, uint64_t t)
{
	if (!c->wall)
		return (double)t / 1e9;
	return c->unix_s + (double)(int64_t)(t - c->base_ns) / 1e9;
}

static bool meta_u64(const struct profile *p, const char *key, uint64_t *v)
{
	const char *s = profile_meta_get(p, key);
	if (!s || !*s)
		return false;
	char *end;
	unsigned long long x = strtoull(s, &end, 10);
	if (*end)
		return false;
	*v = x;
	return true;
}

static bool meta_double(const struct profile *p, const char *key, double *v)
{
	const char *s = profile_meta_get(p, key);
	if (!s || !*s)
		return false;
	char *end;
	double x = strtod(s, &end);
	if (*end || !isfinite(x))
		return false;
	*v = x;
	return true;
}

static void put_param(struct pb_buf *out, const char *key, const char *value)
{
	struct pb_buf e = {0};
	pb_put_string(&e, 1, key);
	pb_put_string(&e, 2, value);
	pb_put_message(out, P_PARAMS, &e);
	pb_buf_free(&e);
}


/* The clock (wall seconds when the recording knows its wall start) and the
 * profile's first and last seconds on it: the samples', widened to
 * start_ns/end_ns when those lie beyond them. */
static void time_span(const struct profile *p, const uint32_t *ord,
		      struct clock_map *c, double *start_out, double *end_out)
{
	size_t n = p->nsamples;
	*c = (struct clock_map){0};
	uint64_t start_ns = 0, end_ns = 0;
	bool has_start = meta_u64(p, "start_ns", &start_ns);
	bool has_end = meta_u64(p, "end_ns", &end_ns);
	if (meta_double(p, "start_unix_s", &c->unix_s)) {
		c->wall = true;
		c->base_ns = has_start ? start_ns : n ? p->samples[ord[0]].time_ns : 0;
	}
	double start_time, end_time;
	if (n) {
		uint64_t first = p->samples[ord[0]].time_ns, last = p->samples[ord[n - 1]].time_ns;
		start_time = to_seconds(c, has_start && start_ns < first ? start_ns : first);
		end_time = to_seconds(c, has_end && end_ns > last ? end_ns : last);
	} else {
		start_time = has_start ? to_seconds(c, start_ns) : c->wall ? c->unix_s : 0;
		end_time = has_end ? to_seconds(c, end_ns) : start_time;
	}
	if (start_time < 0) /* rounding just before the epoch */
		start_time = 0;
	if (end_time < start_time)
		end_time = start_time;
	*start_out = start_time;
	*end_out = end_time;
}

/* The per-sample fields, in time order. */
struct columns {
	uint64_t *ids, *pids, *tids, *cpus, *values;
	double *deltas;
	bool weighted; /* a weight is not 1: samples_value is written */
};

/* Fills the columns, putting each sample's leaf in the tree (and counting
 * its hit) on the way. */
static void fill_columns(struct writer *w, const uint32_t *ord,
			 const struct clock_map *c, double start_time, struct columns *col)
{
	const struct profile *p = w->p;
	size_t n = p->nsamples;
	col->ids = xmalloc((n + 1) * sizeof(*col->ids));
	col->pids = xmalloc((n + 1) * sizeof(*col->pids));
	col->tids = xmalloc((n + 1) * sizeof(*col->tids));
	col->cpus = xmalloc((n + 1) * sizeof(*col->cpus));
	col->values = xmalloc((n + 1) * sizeof(*col->values));
	col->deltas = xmalloc((n + 1) * sizeof(*col->deltas));
	col->weighted = false;
	/* Each delta aims at the sample's time from the running sum a reader
	 * computes (same operations, same order), so rounding never piles up. */
	double cur = start_time;
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &p->samples[ord[i]];
		uint32_t leaf = sample_leaf(w, s);
		w->nodes[leaf].hits++;
		col->ids[i] = leaf;
		col->pids[i] = p->threads[s->thread].pid;
		col->tids[i] = p->threads[s->thread].tid;
		col->cpus[i] = s->cpu;
		col->values[i] = s->weight;
		col->weighted |= s->weight != 1;
		double d = to_seconds(c, s->time_ns) - cur;
		if (!(d > 0))
			d = 0;
		col->deltas[i] = d;
		cur += d;
	}
}

static void columns_free(struct columns *col)
{
	free(col->ids);
	free(col->pids);
	free(col->tids);
	free(col->cpus);
	free(col->values);
	free(col->deltas);
}

/* The tree, one `nodes` map entry per node in id order, each with its
 * children listed. */
static void put_nodes(struct pb_buf *b, const struct writer *w)
{
	/* Children lists in creation order: a child is created after its parent,
	 * so one pass over the nodes in id order fills them. */
	size_t nn = w->n;
	uint32_t *first = xcalloc(nn + 1, sizeof(*first));
	uint32_t *kids = xmalloc(nn * sizeof(*kids));
	for (size_t i = 1; i < nn; i++)
		first[w->nodes[i].parent + 1]++;
	for (size_t i = 0; i < nn; i++)
		first[i + 1] += first[i];
	uint32_t *fill = xmalloc((nn + 1) * sizeof(*fill));
	memcpy(fill, first, (nn + 1) * sizeof(*fill));
	for (size_t i = 1; i < nn; i++)
		kids[fill[w->nodes[i].parent]++] = (uint32_t)i;
	free(fill);

	struct pb_buf node = {0}, entry = {0};
	for (size_t i = 0; i < nn; i++) {
		const struct wnode *wn = &w->nodes[i];
		node.len = 0;
		entry.len = 0;
		pb_put_string(&node, N_FUNCTION_NAME, wn->name);
		pb_put_uint(&node, N_HIT_COUNT, wn->hits);
		/* proto2 `repeated uint32 children = 3;` is not packed */
		for (uint32_t k = first[i]; k < first[i + 1]; k++)
			pb_put_uint(&node, N_CHILDREN, kids[k]);
		if (wn->libtype[0])
			pb_put_string(&node, N_LIBTYPE, wn->libtype);
		if (i)
			pb_put_uint(&node, N_PARENT, wn->parent);
		pb_put_uint(&entry, 1, i);
		pb_put_message(&entry, 2, &node);
		pb_put_message(b, P_NODES, &entry);
	}
	pb_buf_free(&node);
	pb_buf_free(&entry);
	free(first);
	free(kids);
}

/* The title: the profile's own, else "sonde: COMMAND", else "sonde". */
static void put_title(struct pb_buf *b, const struct profile *p)
{
	const char *title = profile_meta_get(p, "title");
	const char *cmd = profile_meta_get(p, "command_line");
	char *t = title ? xstrdup(title) : cmd && *cmd ? xasprintf("sonde: %s", cmd) : xstrdup("sonde");
	pb_put_string(b, P_TITLE, t);
	free(t);
}

/* The feature flags a reader needs, then the metadata as "sonde.KEY". */
static void put_params(struct pb_buf *b, const struct profile *p, bool weighted)
{
	put_param(b, "has_parent", "true");
	if (p->nsamples) {
		put_param(b, "has_samples_cpu", "true");
		put_param(b, "has_samples_pid", "true");
		put_param(b, "has_samples_tid", "true");
		if (weighted)
			put_param(b, "hasValues", "true");
	}
	for (size_t i = 0; i < p->nmeta; i++) {
		char *k = xasprintf(PARAM_PREFIX "%s", p->meta[i].key);
		put_param(b, k, p->meta[i].value);
		free(k);
	}
}

int nflx_write(FILE *out, struct profile *p)
{
	struct writer w = {.p = p};
	wnode_child(&w, UINT32_MAX, 0, "root", ""); /* node 0 */
	size_t n = p->nsamples;
	uint32_t *ord = samples_by_time(p);
	struct clock_map c;
	double start_time, end_time;
	time_span(p, ord, &c, &start_time, &end_time);
	struct columns col;
	fill_columns(&w, ord, &c, start_time, &col);

	struct pb_buf b = {0};
	pb_put_double(&b, P_START_TIME, start_time);
	pb_put_double(&b, P_END_TIME, end_time);
	if (n) {
		pb_put_packed_uint(&b, P_SAMPLES, col.ids, n);
		pb_put_packed_double(&b, P_TIME_DELTAS, col.deltas, n);
	}
	put_nodes(&b, &w);
	put_title(&b, p);
	put_params(&b, p, col.weighted);
	if (n) {
		pb_put_packed_uint(&b, P_SAMPLES_CPU, col.cpus, n);
		pb_put_packed_uint(&b, P_SAMPLES_PID, col.pids, n);
		pb_put_packed_uint(&b, P_SAMPLES_TID, col.tids, n);
		if (col.weighted)
			pb_put_packed_uint(&b, P_SAMPLES_VALUE, col.values, n);
	}

	int rc = 0;
	if (b.len && fwrite(b.data, 1, b.len, out) != b.len)
		rc = -1;
	if (fflush(out) || ferror(out))
		rc = -1;

	pb_buf_free(&b);
	free(ord);
	columns_free(&col);
	free(w.nodes);
	free(w.buf);
	hashmap_free(&w.child);
	hashmap_free(&w.leaf);
	return rc;
}
