#define _GNU_SOURCE
#include "chrometrace.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "json.h"
#include "registry.h"
#include "speedscope.h"
#include "util.h"

#define DEFAULT_INTERVAL_NS (1e9 / 99.0) /* sonde's default sampling rate */
#define PROFILER_CAT "disabled-by-default-v8.cpu_profiler"

struct ct {
	FILE *out;
	struct profile *p;
	bool has_times;
	uint64_t base;
	double interval_ns;
	uint32_t *track;      /* thread -> the first thread with its pid/tid */
	bool first_event;
	uint32_t next_node;   /* V8 node ids, unique in the file */
	uint32_t next_profile;
	uint32_t *v8id;       /* stack node -> V8 node id in the current thread */
	uint32_t *canon;      /* frame id -> its group (speedscope_frame_groups) */
	uint32_t *line;       /* group -> its line, 0 unknown */
};

static uint64_t rel(const struct ct *c, uint64_t t)
{
	return t > c->base ? t - c->base : 0;
}

/* µs with ns precision: 1234567 ns -> 1234.567 */
static void write_us(FILE *f, uint64_t ns)
{
	fprintf(f, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

static const char *comm_of(const struct thread_info *t)
{
	return t->comm ? t->comm : "?";
}

static void begin_event(struct ct *c)
{
	fputs(c->first_event ? "\n" : ",\n", c->out);
	c->first_event = false;
}

/* ---- threads ----------------------------------------------------------- */

static int cmp_thread(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct thread_info *x = &p->threads[i], *y = &p->threads[j];
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* Threads by pid then tid; fills c->track. */
static uint32_t *sorted_threads(struct ct *c)
{
	struct profile *p = c->p;
	size_t n = p->nthreads;
	uint32_t *order = xmalloc((n ? n : 1) * sizeof(*order));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_thread, p);
	c->track = xmalloc((n ? n : 1) * sizeof(*c->track));
	for (size_t k = 0; k < n; k++) {
		const struct thread_info *t = &p->threads[order[k]];
		if (k && t->pid == p->threads[order[k - 1]].pid &&
		    t->tid == p->threads[order[k - 1]].tid)
			c->track[order[k]] = c->track[order[k - 1]];
		else
			c->track[order[k]] = order[k];
	}
	return order;
}

static void write_metadata(struct ct *c, const uint32_t *order)
{
	struct profile *p = c->p;
	size_t n = p->nthreads;
	for (size_t k = 0; k < n; k++) {
		const struct thread_info *t = &p->threads[order[k]];
		if (k && t->pid == p->threads[order[k - 1]].pid)
			continue;
		/* first thread of this pid; prefer its main thread's name */
		const struct thread_info *named = t;
		for (size_t j = k; j < n && p->threads[order[j]].pid == t->pid; j++)
			if (p->threads[order[j]].tid == t->pid) {
				named = &p->threads[order[j]];
				break;
			}
		begin_event(c);
		fprintf(c->out,
			"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			",\"ts\":0,\"args\":{\"name\":",
			t->pid, t->pid);
		json_write_string(c->out, comm_of(named));
		fputs("}}", c->out);
	}
	for (size_t k = 0; k < n; k++) {
		uint32_t i = order[k];
		if (c->track[i] != i)
			continue;
		const struct thread_info *t = &p->threads[i];
		begin_event(c);
		fprintf(c->out,
			"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			",\"ts\":0,\"args\":{\"name\":",
			t->pid, t->tid);
		json_write_string(c->out, comm_of(t));
		fputs("}}", c->out);
	}
}

/* ---- grouping ---------------------------------------------------------- */


/* Groups item indices by track (items of unknown threads go to the group
 * nthreads, which is not written): group t is idx[off[t] .. off[t+1]). */
static void group(struct ct *c, size_t nitems, bool spans, uint32_t **idx_out, size_t **off_out)
{
	struct profile *p = c->p;
	size_t nt = p->nthreads;
	size_t *off = xcalloc(nt + 2, sizeof(*off));
	uint32_t *idx = xmalloc((nitems ? nitems : 1) * sizeof(*idx));
	uint32_t *key = xmalloc((nitems ? nitems : 1) * sizeof(*key));
	for (size_t i = 0; i < nitems; i++) {
		uint32_t t = spans ? p->spans[i].thread : p->samples[i].thread;
		key[i] = t < nt ? c->track[t] : (uint32_t)nt;
		off[key[i] + 1]++;
	}
	for (size_t t = 0; t <= nt; t++)
		off[t + 1] += off[t];
	size_t *pos = xmalloc((nt + 1) * sizeof(*pos));
	memcpy(pos, off, (nt + 1) * sizeof(*pos));
	for (size_t i = 0; i < nitems; i++)
		idx[pos[key[i]]++] = (uint32_t)i;
	free(pos);
	free(key);
	for (size_t t = 0; t <= nt; t++)
		if (off[t + 1] - off[t] > 1)
			qsort_r(idx + off[t], off[t + 1] - off[t], sizeof(*idx),
				spans ? profile_cmp_span_index : profile_cmp_sample_index, p);
	*idx_out = idx;
	*off_out = off;
}

/* ---- spans ------------------------------------------------------------- */

static void write_spans(struct ct *c, const struct thread_info *t, const uint32_t *idx, size_t n)
{
	struct profile *p = c->p;
	uint64_t *ends = xmalloc((n ? n : 1) * sizeof(*ends));
	size_t sp = 0;
	for (size_t k = 0; k < n; k++) {
		const struct span *x = &p->spans[idx[k]];
		uint64_t a = rel(c, x->start_ns), b = rel(c, span_end_ns(x));
		while (sp && ends[sp - 1] <= a)
			sp--;
		if (sp && b > ends[sp - 1])
			b = ends[sp - 1]; /* overlaps its caller's end: cut there */
		ends[sp++] = b;
		begin_event(c);
		fputs("{\"ph\":\"X\",\"name\":", c->out);
		json_write_string(c->out,
				  x->probe < p->nprobes ? p->probes[x->probe].name : "(unknown probe)");
		fputs(",\"cat\":\"sonde\",\"ts\":", c->out);
		write_us(c->out, a);
		fputs(",\"dur\":", c->out);
		write_us(c->out, b - a);
		fprintf(c->out,
			",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"args\":{\"span_id\":%" PRIu64
			",\"parent\":%" PRIu64 "%s}}",
			t->pid, t->tid, x->id, x->parent, x->open ? ",\"open\":true" : "");
	}
	free(ends);
}

/* ---- samples ----------------------------------------------------------- */

/* A call-tree node as sent: its V8 id, its parent's (0 for the root) and its
 * frame group (0 for the root). */
struct v8node {
	uint32_t id, parent, frame;
};

struct chunk {
	struct v8node *nodes; /* new in this chunk, parents first */
	size_t nnodes, nodes_cap;
	uint32_t *touched; /* stack nodes given a V8 id in this thread */
	size_t ntouched, touched_cap;
	uint32_t *path;
	size_t path_cap;
	struct hashmap tree; /* this thread's tree: (parent V8 id, frame group) -> V8 id */
};

static void chunk_add_node(struct chunk *ch, uint32_t id, uint32_t parent, uint32_t frame)
{
	grow_array((void **)&ch->nodes, &ch->nodes_cap, ch->nnodes + 1, sizeof(*ch->nodes));
	ch->nodes[ch->nnodes++] = (struct v8node){id, parent, frame};
}

/* The V8 node id of a stack node, making the nodes of it and its ancestors
 * (queued for the chunk, parents first) when new. Stack nodes whose frames
 * are of one group (same function and place, other lines) share a node. */
static uint32_t v8_node(struct ct *c, struct chunk *ch, uint32_t root, uint32_t node)
{
	struct profile *p = c->p;
	if (node == 0 || node >= p->nnodes)
		return root;
	if (c->v8id[node])
		return c->v8id[node];
	size_t n = 0;
	uint32_t x = node;
	for (; x && x < p->nnodes && !c->v8id[x]; x = p->nodes[x].parent) {
		grow_array((void **)&ch->path, &ch->path_cap, n + 1, sizeof(*ch->path));
		ch->path[n++] = x;
	}
	uint32_t parent = x && x < p->nnodes ? c->v8id[x] : root;
	size_t nf = frames_count(p->frames);
	while (n) {
		x = ch->path[--n];
		uint32_t f = p->nodes[x].frame;
		uint32_t group = f && f <= nf ? c->canon[f] : 0;
		uint64_t key = (uint64_t)parent << 32 | group;
		bool added;
		uint64_t *v8 = hashmap_put(&ch->tree, key, &added);
		if (added) {
			*v8 = ++c->next_node;
			chunk_add_node(ch, (uint32_t)*v8, parent, group);
		}
		uint32_t id = (uint32_t)*v8;
		c->v8id[x] = id;
		grow_array((void **)&ch->touched, &ch->touched_cap, ch->ntouched + 1,
			   sizeof(*ch->touched));
		ch->touched[ch->ntouched++] = x;
		parent = id;
	}
	return c->v8id[node];
}

static void write_call_frame(FILE *f, const char *name, const char *url, int64_t line)
{
	fputs("\"callFrame\":{\"functionName\":", f);
	json_write_string(f, name);
	fputs(",\"url\":", f);
	json_write_string(f, url ? url : "");
	fprintf(f, ",\"lineNumber\":%" PRId64 ",\"columnNumber\":-1}", line);
}

static void write_chunk_nodes(struct ct *c, struct chunk *ch)
{
	struct profile *p = c->p;
	for (size_t k = 0; k < ch->nnodes; k++) {
		const struct v8node *v = &ch->nodes[k];
		if (k)
			fputc(',', c->out);
		if (!v->parent) {
			fprintf(c->out, "{\"id\":%" PRIu32 ",", v->id);
			write_call_frame(c->out, "(root)", "", -1);
			fputc('}', c->out);
			continue;
		}
		fprintf(c->out, "{\"id\":%" PRIu32 ",\"parent\":%" PRIu32 ",", v->id, v->parent);
		const struct frame *fr = v->frame ? frames_get(p->frames, v->frame) : NULL;
		if (!fr)
			write_call_frame(c->out, "(unknown)", "", -1);
		else
			write_call_frame(c->out, fr->name, speedscope_frame_place(fr),
					 c->line[v->frame] ? (int64_t)c->line[v->frame] - 1 : -1);
		fputc('}', c->out);
	}
}

static void write_samples(struct ct *c, struct chunk *ch, const struct thread_info *t,
			  const uint32_t *idx, size_t n)
{
	struct profile *p = c->p;
	/* whole µs per sample; deltas of the rounded times do not drift */
	uint64_t *us = xmalloc(n * sizeof(*us));
	uint32_t *ids = xmalloc((n < CHROMETRACE_CHUNK_SAMPLES ? n : CHROMETRACE_CHUNK_SAMPLES) *
				sizeof(*ids));
	for (size_t k = 0; k < n; k++) {
		uint64_t ns = c->has_times ? rel(c, p->samples[idx[k]].time_ns)
					   : (uint64_t)((double)k * c->interval_ns);
		us[k] = (ns + 500) / 1000;
	}
	uint32_t id = ++c->next_profile;
	uint32_t root = ++c->next_node;
	begin_event(c);
	fprintf(c->out,
		"{\"ph\":\"P\",\"name\":\"Profile\",\"cat\":\"" PROFILER_CAT "\",\"id\":\"0x%" PRIx32
		"\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"ts\":%" PRIu64
		",\"args\":{\"data\":{\"startTime\":%" PRIu64 "}}}",
		id, t->pid, t->tid, us[0], us[0]);
	ch->ntouched = 0;
	hashmap_clear(&ch->tree);
	for (size_t from = 0; from < n; from += CHROMETRACE_CHUNK_SAMPLES) {
		size_t to = n - from > CHROMETRACE_CHUNK_SAMPLES ? from + CHROMETRACE_CHUNK_SAMPLES
								 : n;
		ch->nnodes = 0;
		if (from == 0)
			chunk_add_node(ch, root, 0, 0);
		for (size_t k = from; k < to; k++)
			ids[k - from] = v8_node(c, ch, root, p->samples[idx[k]].stack);
		begin_event(c);
		fprintf(c->out,
			"{\"ph\":\"P\",\"name\":\"ProfileChunk\",\"cat\":\"" PROFILER_CAT
			"\",\"id\":\"0x%" PRIx32 "\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
			",\"ts\":%" PRIu64 ",\"args\":{\"data\":{\"cpuProfile\":{\"nodes\":[",
			id, t->pid, t->tid, us[from]);
		write_chunk_nodes(c, ch);
		fputs("],\"samples\":[", c->out);
		for (size_t k = from; k < to; k++)
			fprintf(c->out, k > from ? ",%" PRIu32 : "%" PRIu32, ids[k - from]);
		fputs("]},\"timeDeltas\":[", c->out);
		for (size_t k = from; k < to; k++)
			fprintf(c->out, k > from ? ",%" PRIu64 : "%" PRIu64,
				us[k] - (k ? us[k - 1] : us[0]));
		fputs("]}}}", c->out);
	}
	for (size_t k = 0; k < ch->ntouched; k++)
		c->v8id[ch->touched[k]] = 0;
	free(ids);
	free(us);
}

int chrometrace_write(FILE *out, struct profile *p)
{
	struct ct c = {.out = out, .p = p, .first_event = true};
	for (size_t i = 0; i < p->nsamples && !c.has_times; i++)
		c.has_times = p->samples[i].time_ns != 0;
	c.base = profile_time_base(p, c.has_times);
	uint64_t hz = profile_meta_u64(p, "frequency_hz");
	c.interval_ns = hz ? 1e9 / (double)hz : DEFAULT_INTERVAL_NS;

	fputs("{\"traceEvents\":[", out);
	uint32_t *order = sorted_threads(&c);
	write_metadata(&c, order);

	size_t nt = p->nthreads;
	uint32_t *idx;
	size_t *off;
	group(&c, p->nspans, true, &idx, &off);
	for (size_t k = 0; k < nt; k++) {
		uint32_t t = order[k];
		if (off[t + 1] > off[t])
			write_spans(&c, &p->threads[t], idx + off[t], off[t + 1] - off[t]);
	}
	free(idx);
	free(off);

	group(&c, p->nsamples, false, &idx, &off);
	c.v8id = xcalloc(p->nnodes + 1, sizeof(*c.v8id));
	c.canon = speedscope_frame_groups(p->frames, &c.line);
	struct chunk ch = {0};
	for (size_t k = 0; k < nt; k++) {
		uint32_t t = order[k];
		if (off[t + 1] > off[t])
			write_samples(&c, &ch, &p->threads[t], idx + off[t], off[t + 1] - off[t]);
	}
	free(ch.nodes);
	free(ch.touched);
	free(ch.path);
	hashmap_free(&ch.tree);
	free(c.canon);
	free(c.line);
	free(c.v8id);
	free(idx);
	free(off);
	free(order);
	free(c.track);

	/* No displayTimeUnit: Perfetto releases of 2020-2021 took "ns" to mean ts is in ns. */
	fputs("\n]}\n", out);
	if (fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static int write_chrometrace(FILE *f, struct profile *p, const struct format_write_options *o)
{
	(void)o;
	return chrometrace_write(f, p);
}

const struct format_entry format_chrometrace = {
	.name = "chrome",
	.aliases = (const char *const[]){"perfetto", NULL},
	.suffixes = (const char *const[]){".trace.json", ".chrome.json", ".perfetto.json", NULL},
	.what = "Chrome Trace Event JSON",
	.about = "for Perfetto and chrome://tracing",
	.write = write_chrometrace,
};
