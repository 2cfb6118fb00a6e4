#define _GNU_SOURCE
#include "speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "json.h"
#include "order.h"
#include "registry.h"
#include "util.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"
/* When samples have times but the sampling interval is not known and cannot
 * be estimated (no thread has two samples): sonde's default 99 Hz. */
#define FALLBACK_INTERVAL_NS (1e9 / 99.0)

struct ss {
	FILE *out;
	struct profile *p;
	bool has_times;
	uint64_t base;          /* ns subtracted from every time */
	double interval_ns;     /* 1e9 / frequency_hz, 0 when unknown */
	uint32_t *canon;        /* frame id -> its group's frame id */
	uint32_t *frame_index;  /* group's frame id -> its index in shared.frames + 1 */
	uint32_t *probe_index;  /* probe -> its frame's index + 1 */
	uint32_t nframes;       /* frames written to shared.frames */
	uint32_t *stack_buf;
	size_t stack_cap;
	bool first_profile;
};

static uint64_t rel(const struct ss *s, uint64_t t)
{
	return t > s->base ? t - s->base : 0;
}

/* ---- ordering ---------------------------------------------------------- */


/* The items of one kind that are grouped by thread (samples, spans): how
 * many, each one's thread, and their order within a thread. */
struct thread_items {
	size_t n;
	uint32_t (*thread_of)(const struct profile *, size_t);
	int (*cmp)(const void *, const void *, void *);
};

/* Groups the indices of p's items by thread: on return idx holds the items
 * of thread t at idx[off[t] .. off[t+1]), each group sorted with the
 * items' cmp. */
static void group_by_thread(struct profile *p, const struct thread_items *items, size_t nthreads,
			    uint32_t **idx_out, size_t **off_out)
{
	size_t nitems = items->n;
	uint32_t (*thread_of)(const struct profile *, size_t) = items->thread_of;
	size_t *off = xcalloc(nthreads + 2, sizeof(*off));
	uint32_t *idx = xmalloc((nitems ? nitems : 1) * sizeof(*idx));
	for (size_t i = 0; i < nitems; i++) {
		uint32_t t = thread_of(p, i);
		off[(t < nthreads ? t : nthreads) + 1]++;
	}
	for (size_t t = 0; t <= nthreads; t++)
		off[t + 1] += off[t];
	size_t *pos = xmalloc((nthreads + 1) * sizeof(*pos));
	memcpy(pos, off, (nthreads + 1) * sizeof(*pos));
	for (size_t i = 0; i < nitems; i++) {
		uint32_t t = thread_of(p, i);
		idx[pos[t < nthreads ? t : nthreads]++] = (uint32_t)i;
	}
	free(pos);
	for (size_t t = 0; t <= nthreads; t++)
		if (off[t + 1] - off[t] > 1)
			qsort_r(idx + off[t], off[t + 1] - off[t], sizeof(*idx), items->cmp, p);
	*idx_out = idx;
	*off_out = off;
}

static uint32_t sample_thread(const struct profile *p, size_t i)
{
	return p->samples[i].thread;
}

static uint32_t span_thread(const struct profile *p, size_t i)
{
	return p->spans[i].thread;
}

/* ---- frames ------------------------------------------------------------ */

const char *speedscope_frame_place(const struct frame *f)
{
	if (f->file && *f->file)
		return f->file;
	return f->module ? f->module : "";
}

uint32_t *speedscope_frame_groups(const struct frame_table *t, uint32_t **line_out)
{
	size_t nf = frames_count(t);
	uint32_t *canon = xcalloc(nf + 1, sizeof(*canon));
	uint32_t *line = xcalloc(nf + 1, sizeof(*line));
	struct hashmap groups = {0}; /* hash of (name, place) -> canonical frame id (hashed keys) */
	hashmap_reserve(&groups, nf);
	bool *mixed = xcalloc(nf + 1, sizeof(*mixed));
	for (uint32_t id = 1; id <= nf; id++) {
		const struct frame *f = frames_get(t, id);
		if (!f)
			continue;
		const char *place = speedscope_frame_place(f);
		uint64_t h = hash_str(f->name, hash_str(place, 0x7373));
		size_t pos;
		for (const uint64_t *v = hashmap_first(&groups, h, &pos); v && !canon[id];
		     v = hashmap_again(&groups, h, &pos)) {
			uint32_t c = (uint32_t)*v;
			const struct frame *g = frames_get(t, c);
			if (strcmp(g->name, f->name) == 0 &&
			    strcmp(speedscope_frame_place(g), place) == 0) {
				canon[id] = c;
				if (line[c] != f->line)
					mixed[c] = true;
			}
		}
		if (!canon[id]) {
			canon[id] = id;
			line[id] = f->line;
			hashmap_add(&groups, h, id);
		}
	}
	for (uint32_t id = 1; id <= nf; id++)
		if (mixed[id])
			line[id] = 0;
	free(mixed);
	hashmap_free(&groups);
	*line_out = line;
	return canon;
}

/* A frame; its kind (frames_kind_name) when it is not plain user code: a
 * key speedscope's schema allows and its viewer passes over, for other
 * readers to tell Python, kernel and JIT frames by. */
static void write_frame(struct ss *s, const char *name, const char *file, uint32_t line,
			enum frame_kind kind)
{
	fputs(s->nframes ? ",\n{\"name\":" : "\n{\"name\":", s->out);
	json_write_string(s->out, name);
	if (file && *file) {
		fputs(",\"file\":", s->out);
		json_write_string(s->out, file);
		if (line)
			fprintf(s->out, ",\"line\":%" PRIu32, line);
	}
	if (kind != FRAME_USER)
		fprintf(s->out, ",\"kind\":\"%s\"", frames_kind_name(kind));
	fputc('}', s->out);
	s->nframes++;
}

/* Writes shared.frames: every frame (group) some sample's stack uses, then
 * one frame per probe when there are spans. */
static void write_frames(struct ss *s)
{
	struct profile *p = s->p;
	size_t nf = frames_count(p->frames);
	uint32_t *line;
	s->canon = speedscope_frame_groups(p->frames, &line);
	s->frame_index = xcalloc(nf + 1, sizeof(*s->frame_index));
	s->probe_index = xcalloc(p->nprobes + 1, sizeof(*s->probe_index));
	unsigned char *used = xcalloc(p->nnodes + 1, 1);
	for (size_t i = 0; i < p->nsamples; i++)
		for (uint32_t n = p->samples[i].stack; n && n < p->nnodes && !used[n];
		     n = p->nodes[n].parent)
			used[n] = 1;
	fputs("\"shared\":{\"frames\":[", s->out);
	for (size_t n = 1; n < p->nnodes; n++) {
		uint32_t f = p->nodes[n].frame;
		if (!used[n] || f == 0 || f > nf)
			continue;
		uint32_t c = s->canon[f];
		if (!c || s->frame_index[c])
			continue;
		const struct frame *fr = frames_get(p->frames, c);
		write_frame(s, fr->name, speedscope_frame_place(fr), line[c], fr->kind);
		s->frame_index[c] = s->nframes;
	}
	free(used);
	free(line);
	for (size_t i = 0; i < p->nspans; i++) {
		uint32_t pr = p->spans[i].probe;
		uint32_t slot = pr < p->nprobes ? pr : (uint32_t)p->nprobes;
		if (s->probe_index[slot])
			continue;
		if (pr < p->nprobes)
			write_frame(s, p->probes[pr].name, p->probes[pr].binary, 0, FRAME_USER);
		else
			write_frame(s, "(unknown probe)", "", 0, FRAME_USER);
		s->probe_index[slot] = s->nframes;
	}
	fputs("]}", s->out);
}

/* ---- profiles ---------------------------------------------------------- */

/* A profile's head: its type, its thread (named with a suffix), its unit
 * and its bounds. */
struct profile_head {
	const char *type;
	const struct thread_info *thread;
	const char *suffix;
	const char *unit;
	uint64_t start, end;
};

static void begin_profile(struct ss *s, const struct profile_head *h)
{
	const struct thread_info *t = h->thread;
	fputs(s->first_profile ? "\n{" : ",\n{", s->out);
	s->first_profile = false;
	fprintf(s->out, "\"type\":\"%s\",\"name\":", h->type);
	char *name = xasprintf("%s (%" PRIu32 "/%" PRIu32 ")%s", t->comm ? t->comm : "?", t->pid,
			       t->tid, h->suffix);
	json_write_string(s->out, name);
	free(name);
	fprintf(s->out, ",\"unit\":\"%s\",\"startValue\":%" PRIu64 ",\"endValue\":%" PRIu64,
		h->unit, h->start, h->end);
}

static void write_stack(struct ss *s, uint32_t node)
{
	struct profile *p = s->p;
	size_t depth = node && node < p->nnodes ? p->nodes[node].depth : 0;
	if (depth > s->stack_cap) {
		s->stack_cap = depth;
		s->stack_buf = xrealloc(s->stack_buf, depth * sizeof(*s->stack_buf));
	}
	size_t n = depth ? profile_stack_frames(p, node, s->stack_buf, depth) : 0;
	if (n > depth)
		n = depth;
	fputc('[', s->out);
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		uint32_t f = s->stack_buf[i];
		if (f == 0 || f > frames_count(p->frames) || !s->frame_index[s->canon[f]])
			continue;
		fprintf(s->out, first ? "%" PRIu32 : ",%" PRIu32, s->frame_index[s->canon[f]] - 1);
		first = false;
	}
	fputc(']', s->out);
}

/* The typical gap between consecutive samples of a thread (median). */
static double median_gap(const struct profile *p, const uint32_t *idx, const size_t *off,
			 size_t nthreads)
{
	size_t n = 0;
	uint64_t *gaps = xmalloc((p->nsamples ? p->nsamples : 1) * sizeof(*gaps));
	for (size_t t = 0; t < nthreads; t++)
		for (size_t k = off[t] + 1; k < off[t + 1]; k++) {
			uint64_t a = p->samples[idx[k - 1]].time_ns, b = p->samples[idx[k]].time_ns;
			if (b > a)
				gaps[n++] = b - a;
		}
	double m = 0;
	if (n) {
		/* a partial selection would do; sorting is simple and fast enough */
		qsort(gaps, n, sizeof(*gaps), order_u64);
		m = (double)gaps[n / 2];
	}
	free(gaps);
	return m;
}

/* Returns 0, or -1 (errno EOVERFLOW, nothing written) when the thread's
 * end time would not fit 64 bits (sample times near 2^64 ns). */
static int write_sampled(struct ss *s, uint32_t t, const uint32_t *idx, size_t n,
			 double est_gap)
{
	struct profile *p = s->p;
	uint64_t *w = xmalloc(n * sizeof(*w));
	uint64_t sum = 0;
	for (size_t k = 0; k < n; k++) {
		const struct sample *x = &p->samples[idx[k]];
		if (!s->has_times) {
			w[k] = x->weight;
		} else if (s->interval_ns > 0) {
			w[k] = (uint64_t)llround((double)x->weight * s->interval_ns);
		} else {
			double g = est_gap;
			if (k + 1 < n) {
				uint64_t next = p->samples[idx[k + 1]].time_ns;
				double gap = next > x->time_ns ? (double)(next - x->time_ns) : 0;
				if (gap < g)
					g = gap;
			}
			if (!(g < 9.2e18)) { /* gaps of centuries: not a sampled thread */
				free(w);
				errno = EOVERFLOW;
				return -1;
			}
			w[k] = (uint64_t)llround(g);
		}
		if (w[k] > UINT64_MAX - sum) { /* only weights x interval: checked */
			free(w);
			errno = EOVERFLOW;
			return -1;
		}
		sum += w[k];
	}
	uint64_t start = s->has_times ? rel(s, p->samples[idx[0]].time_ns) : 0;
	if (start > UINT64_MAX - sum) {
		free(w);
		errno = EOVERFLOW;
		return -1;
	}
	begin_profile(s, &(struct profile_head){.type = "sampled",
						.thread = &p->threads[t],
						.suffix = "",
						.unit = s->has_times ? "nanoseconds" : "none",
						.start = start,
						.end = start + sum});
	fputs(",\"samples\":[", s->out);
	for (size_t k = 0; k < n; k++) {
		if (k)
			fputc(',', s->out);
		write_stack(s, p->samples[idx[k]].stack);
	}
	fputs("],\"weights\":[", s->out);
	for (size_t k = 0; k < n; k++)
		fprintf(s->out, k ? ",%" PRIu64 : "%" PRIu64, w[k]);
	fputs("]}", s->out);
	free(w);
	return 0;
}

struct open_call {
	uint64_t end;
	uint32_t frame;
};

static void write_event(struct ss *s, bool *first, char type, uint64_t at, uint32_t frame)
{
	fprintf(s->out, "%s{\"type\":\"%c\",\"at\":%" PRIu64 ",\"frame\":%" PRIu32 "}",
		*first ? "" : ",", type, at, frame);
	*first = false;
}

/* Spans of one thread, sorted outer first, as balanced O/C events. */
static void write_evented(struct ss *s, uint32_t t, const uint32_t *idx, size_t n)
{
	struct profile *p = s->p;
	uint64_t start = rel(s, p->spans[idx[0]].start_ns), end = start;
	for (size_t k = 0; k < n; k++) {
		uint64_t e = rel(s, span_end_ns(&p->spans[idx[k]]));
		if (e > end)
			end = e;
	}
	begin_profile(s, &(struct profile_head){.type = "evented",
						.thread = &p->threads[t],
						.suffix = " traced calls",
						.unit = "nanoseconds",
						.start = start,
						.end = end});
	fputs(",\"events\":[", s->out);
	struct open_call *stack = xmalloc(n * sizeof(*stack));
	size_t sp = 0;
	bool first = true;
	for (size_t k = 0; k < n; k++) {
		const struct span *x = &p->spans[idx[k]];
		uint64_t a = rel(s, x->start_ns), b = rel(s, span_end_ns(x));
		while (sp && stack[sp - 1].end <= a) {
			sp--;
			write_event(s, &first, 'C', stack[sp].end, stack[sp].frame);
		}
		if (sp && b > stack[sp - 1].end)
			b = stack[sp - 1].end; /* overlaps its caller's end: cut there */
		uint32_t slot = x->probe < p->nprobes ? x->probe : (uint32_t)p->nprobes;
		uint32_t frame = s->probe_index[slot] - 1;
		write_event(s, &first, 'O', a, frame);
		stack[sp++] = (struct open_call){b, frame};
	}
	while (sp) {
		sp--;
		write_event(s, &first, 'C', stack[sp].end, stack[sp].frame);
	}
	free(stack);
	fputs("]}", s->out);
}

struct thread_rank {
	uint32_t thread;
	size_t samples;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct thread_rank *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

int speedscope_write(FILE *out, struct profile *p, const char *name)
{
	struct ss s = {.out = out, .p = p, .first_profile = true};
	for (size_t i = 0; i < p->nsamples && !s.has_times; i++)
		s.has_times = p->samples[i].time_ns != 0;
	s.base = profile_time_base(p, s.has_times);
	uint64_t hz = profile_meta_u64(p, "frequency_hz");
	s.interval_ns = hz ? 1e9 / (double)hz : 0;
	if (s.has_times && !profile_weight_ns_fits(p, s.interval_ns)) {
		errno = EOVERFLOW; /* weights in nanoseconds would not fit */
		return -1;
	}

	fputs("{\"$schema\":\"" SCHEMA_URL "\",\n", out);
	write_frames(&s);

	size_t nt = p->nthreads;
	uint32_t *sidx, *spidx;
	size_t *soff, *spoff;
	struct thread_items samples = {p->nsamples, sample_thread, profile_cmp_sample_index};
	struct thread_items spans = {p->nspans, span_thread, profile_cmp_span_index};
	group_by_thread(p, &samples, nt, &sidx, &soff);
	group_by_thread(p, &spans, nt, &spidx, &spoff);
	double est_gap = 0;
	if (s.has_times && s.interval_ns <= 0) {
		est_gap = median_gap(p, sidx, soff, nt);
		if (est_gap <= 0)
			est_gap = FALLBACK_INTERVAL_NS;
	}

	/* Busiest thread first; samples/spans of unknown threads are left out. */
	struct thread_rank *rank = xmalloc((nt ? nt : 1) * sizeof(*rank));
	for (size_t t = 0; t < nt; t++)
		rank[t] = (struct thread_rank){(uint32_t)t, soff[t + 1] - soff[t]};
	qsort(rank, nt, sizeof(*rank), cmp_rank);

	fputs(",\n\"profiles\":[", out);
	int rc = 0;
	for (size_t r = 0; r < nt && !rc; r++) {
		uint32_t t = rank[r].thread;
		if (soff[t + 1] > soff[t])
			rc = write_sampled(&s, t, sidx + soff[t], soff[t + 1] - soff[t], est_gap);
	}
	for (size_t r = 0; r < nt; r++) {
		uint32_t t = rank[r].thread;
		if (spoff[t + 1] > spoff[t])
			write_evented(&s, t, spidx + spoff[t], spoff[t + 1] - spoff[t]);
	}
	if (s.first_profile) {
		/* Nothing to show: one empty profile, which speedscope opens. */
		fputs("\n{\"type\":\"sampled\",\"name\":", out);
		json_write_string(out, name ? name : "sonde");
		fputs(",\"unit\":\"none\",\"startValue\":0,\"endValue\":0,\"samples\":[],"
		      "\"weights\":[]}",
		      out);
	}
	fputs("],\n\"name\":", out);
	json_write_string(out, name ? name : "sonde");
	fputs(",\"activeProfileIndex\":0,\"exporter\":\"sonde\"}\n", out);

	free(rank);
	free(sidx);
	free(soff);
	free(spidx);
	free(spoff);
	free(s.canon);
	free(s.frame_index);
	free(s.probe_index);
	free(s.stack_buf);
	if (rc || fflush(out) != 0 || ferror(out))
		return -1;
	return 0;
}

/* ========================================================================= */
/* The registry's entry                                                      */
/* ========================================================================= */

static int write_speedscope(FILE *f, struct profile *p, const struct format_write_options *o)
{
	return speedscope_write(f, p, o->input);
}

const struct format_entry format_speedscope = {
	.name = "speedscope",
	.suffixes = (const char *const[]){".speedscope.json", NULL},
	.what = "speedscope JSON",
	.write = write_speedscope,
};
