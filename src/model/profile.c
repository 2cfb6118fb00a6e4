#include "profile.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

struct profile *profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	p->frames = frames_new();
	grow_array((void **)&p->nodes, &p->nodes_cap, 1, sizeof(*p->nodes));
	p->nodes[0] = (struct stack_node){0, 0, 0};
	p->nnodes = 1;
	p->offcpu_event = UINT32_MAX;
	p->waker_event = UINT32_MAX;
	p->main_event = UINT32_MAX;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	frames_free(p->frames);
	free(p->nodes);
	hashmap_free(&p->node_index);
	free(p->threads);
	hashmap_free(&p->thread_index);
	free(p->samples);
	for (size_t i = 0; i < p->nevents; i++)
		free(p->events[i]);
	free(p->events);
	for (size_t i = 0; i < p->nmeta; i++) {
		free(p->meta[i].key);
		free(p->meta[i].value);
	}
	free(p->meta);
	free(p->span_links);
	for (size_t i = 0; i < p->nprobes; i++) {
		free(p->probes[i].name);
		free(p->probes[i].binary);
		free(p->probes[i].predicate);
		if (p->probes[i].branch) {
			free(p->probes[i].branch->at);
			free(p->probes[i].branch->insn);
			free(p->probes[i].branch->source);
			free(p->probes[i].branch->to_file);
			free(p->probes[i].branch);
		}
	}
	free(p->probes);
	free(p->point_calls);
	for (size_t i = 0; i < p->ncaptures; i++) {
		free(p->captures[i].name);
		free(p->captures[i].type);
		for (uint32_t k = 0; k < p->captures[i].nenums; k++)
			free(p->captures[i].enums[k].name);
		free(p->captures[i].enums);
	}
	free(p->captures);
	free(p->hits);
	free(p->thread_samples);
	free(p->hit_values);
	free(p->spans);
	hashmap_free(&p->span_index);
	free(p->function_of);
	free(p->line_of);
	free(p);
}

uint32_t profile_stack_child(struct profile *p, uint32_t parent, uint32_t frame)
{
	bool added;
	uint64_t *node = hashmap_put(&p->node_index, (uint64_t)parent << 32 | frame, &added);
	if (!added)
		return (uint32_t)*node;
	grow_array((void **)&p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*p->nodes));
	uint32_t id = (uint32_t)p->nnodes++;
	p->nodes[id] = (struct stack_node){parent, frame, p->nodes[parent].depth + 1};
	*node = id;
	return id;
}

uint32_t profile_stack_intern(struct profile *p, const uint32_t *frames, size_t n)
{
	uint32_t node = 0;
	for (size_t i = 0; i < n; i++)
		node = profile_stack_child(p, node, frames[i]);
	return node;
}

size_t profile_stack_frames(const struct profile *p, uint32_t node, uint32_t *out, size_t max)
{
	size_t depth = node < p->nnodes ? p->nodes[node].depth : 0;
	size_t i = depth;
	while (node && node < p->nnodes && i > 0) {
		i--;
		if (i < max)
			out[i] = p->nodes[node].frame;
		node = p->nodes[node].parent;
	}
	return depth;
}

/* comm strings are interned, so the pointer stands for the name. */
static uint64_t thread_hash(uint32_t pid, uint32_t tid, const char *comm)
{
	uintptr_t v[3] = {pid, tid, (uintptr_t)comm};
	return hash_bytes(v, sizeof(v), 9);
}

uint32_t profile_thread_intern(struct profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	comm = frames_strdup(p->frames, comm);
	uint64_t h = thread_hash(pid, tid, comm);
	size_t pos;
	for (const uint64_t *v = hashmap_first(&p->thread_index, h, &pos); v;
	     v = hashmap_again(&p->thread_index, h, &pos)) {
		const struct thread_info *t = &p->threads[*v];
		if (t->tid == tid && t->pid == pid && t->comm == comm)
			return (uint32_t)*v;
	}
	grow_array((void **)&p->threads, &p->threads_cap, p->nthreads + 1, sizeof(*p->threads));
	p->threads[p->nthreads] = (struct thread_info){pid, tid, comm};
	hashmap_add(&p->thread_index, h, p->nthreads);
	return (uint32_t)p->nthreads++;
}

uint32_t profile_event_intern(struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (strcmp(p->events[i], name) == 0)
			return (uint32_t)i;
	grow_array((void **)&p->events, &p->events_cap, p->nevents + 1, sizeof(*p->events));
	p->events[p->nevents] = xstrdup(name);
	if (strcmp(name, PROFILE_EVENT_OFFCPU) == 0)
		p->offcpu_event = (uint32_t)p->nevents;
	if (strcmp(name, PROFILE_EVENT_WAKER) == 0)
		p->waker_event = (uint32_t)p->nevents;
	if (p->main_event == UINT32_MAX && p->offcpu_event != p->nevents &&
	    p->waker_event != p->nevents)
		p->main_event = (uint32_t)p->nevents;
	return (uint32_t)p->nevents++;
}

int profile_add_sample(struct profile *p, const struct sample *s, const struct span_link *links,
		       size_t n)
{
	if (s->weight > PROFILE_MAX_WEIGHT - p->weight_added)
		return -1;
	p->weight_added += s->weight;
	grow_array((void **)&p->samples, &p->samples_cap, p->nsamples + 1, sizeof(*p->samples));
	struct sample *d = &p->samples[p->nsamples++];
	*d = *s;
	d->links = (uint32_t)p->nspan_links;
	d->nlinks = (uint32_t)n;
	if (n) {
		grow_array((void **)&p->span_links, &p->span_links_cap, p->nspan_links + n,
			   sizeof(*p->span_links));
		memcpy(p->span_links + p->nspan_links, links, n * sizeof(*links));
		p->nspan_links += n;
	}
	return 0;
}

int profile_sample_add_weight(struct profile *p, size_t index, uint64_t weight)
{
	if (weight > PROFILE_MAX_WEIGHT - p->weight_added)
		return -1;
	p->weight_added += weight;
	p->samples[index].weight += weight;
	return 0;
}

bool profile_weight_ns_fits(const struct profile *p, double ns_per_weight)
{
	/* At least one weight's worth, so the interval itself fits; in doubles,
	 * with a margin for their rounding near 2^63. */
	double weight = p->weight_added ? (double)p->weight_added : 1;
	return !(ns_per_weight > 0) || weight * ns_per_weight < 9.2e18;
}

void profile_probe_set_branch(struct profile *p, uint32_t probe, const struct probe_branch *b)
{
	if (probe >= p->nprobes || p->probes[probe].branch)
		return;
	struct probe_branch *c = xmalloc(sizeof(*c));
	*c = *b;
	c->at = xstrdup(b->at ? b->at : "");
	c->insn = xstrdup(b->insn ? b->insn : "");
	c->source = b->source ? xstrdup(b->source) : NULL;
	c->to_file = b->to_file && *b->to_file ? xstrdup(b->to_file) : NULL;
	p->probes[probe].branch = c;
}

int profile_branch_other(const struct profile *p, uint32_t probe)
{
	const struct probe_branch *b = probe < p->nprobes ? p->probes[probe].branch : NULL;
	for (size_t i = 0; b && i < p->nprobes; i++) {
		const struct probe_branch *o = p->probes[i].branch;
		if (o && i != probe && o->taken != b->taken && o->jump == b->jump &&
		    !strcmp(o->at, b->at) && !strcmp(p->probes[i].binary, p->probes[probe].binary))
			return (int)i;
	}
	return -1;
}

uint32_t profile_probe_add(struct profile *p, const char *name, const char *binary,
			   uint64_t offset)
{
	grow_array((void **)&p->probes, &p->probes_cap, p->nprobes + 1, sizeof(*p->probes));
	struct probe_info *pr = &p->probes[p->nprobes];
	memset(pr, 0, sizeof(*pr));
	pr->name = xstrdup(name);
	pr->binary = xstrdup(binary ? binary : "");
	pr->offset = offset;
	pr->point = -1;
	return (uint32_t)p->nprobes++;
}

void profile_point_calls_set(struct profile *p, uint32_t point_probe, uint32_t probe,
			     uint64_t calls, uint64_t hit)
{
	for (size_t i = 0; i < p->npoint_calls; i++)
		if (p->point_calls[i].point_probe == point_probe && p->point_calls[i].probe == probe) {
			p->point_calls[i].calls = calls;
			p->point_calls[i].hit = hit;
			return;
		}
	grow_array((void **)&p->point_calls, &p->point_calls_cap, p->npoint_calls + 1,
		   sizeof(*p->point_calls));
	p->point_calls[p->npoint_calls++] = (struct point_calls){point_probe, probe, calls, hit};
}

int profile_probe_find(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nprobes; i++)
		if (strcmp(p->probes[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* Indexes the spans anew (after some were dropped and the rest moved). */
static void span_reindex(struct profile *p)
{
	hashmap_recycle(&p->span_index);
	for (size_t i = 0; i < p->nspans; i++)
		hashmap_set(&p->span_index, p->spans[i].id, i);
}

int64_t profile_span_find(const struct profile *p, uint64_t id)
{
	uint64_t i;
	return hashmap_get(&p->span_index, id, &i) ? (int64_t)i : -1;
}

int64_t profile_span_add(struct profile *p, const struct span *sp)
{
	if (sp->id == 0 || profile_span_find(p, sp->id) >= 0)
		return -1;
	grow_array((void **)&p->spans, &p->spans_cap, p->nspans + 1, sizeof(*p->spans));
	p->spans[p->nspans] = *sp;
	/* Sources that know no raw duration (other formats, old recordings):
	 * the measured duration is the only one there is. */
	if (sp->raw_duration_ns < sp->duration_ns)
		p->spans[p->nspans].raw_duration_ns = sp->duration_ns;
	hashmap_set(&p->span_index, sp->id, p->nspans);
	p->nspans++;
	return (int64_t)p->nspans - 1;
}

static bool probe_hist_empty(const struct probe_info *pi)
{
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		if (pi->hist[b])
			return false;
	return true;
}

/* The histogram stands for the calls unless the spans hold all of them (or
 * there is no histogram: a profile built from spans alone). */
static bool probe_uses_hist(const struct profile *p, uint32_t probe)
{
	const struct probe_info *pi = &p->probes[probe];
	return !pi->all_calls && !probe_hist_empty(pi);
}

uint64_t *profile_probe_durations(const struct profile *p, uint32_t probe, size_t *n)
{
	if (probe < p->nprobes && probe_uses_hist(p, probe)) {
		/* Calls still running are not in the kernel's histogram. */
		uint64_t *counts = xmalloc(sizeof(p->probes[probe].hist));
		memcpy(counts, p->probes[probe].hist, sizeof(p->probes[probe].hist));
		for (size_t i = 0; i < p->nspans; i++)
			if (p->spans[i].probe == probe && p->spans[i].open)
				counts[latency_loglin_bucket(p->spans[i].duration_ns)]++;
		uint64_t *d = latency_hist_durations(counts, n);
		free(counts);
		return d ? d : xmalloc(sizeof(*d));
	}
	uint64_t *d = xmalloc((p->nspans + 1) * sizeof(*d));
	size_t k = 0;
	for (size_t i = 0; i < p->nspans; i++)
		if (p->spans[i].probe == probe)
			d[k++] = p->spans[i].duration_ns;
	qsort(d, k, sizeof(*d), order_u64);
	*n = k;
	return d;
}

uint64_t profile_probe_calls_over(const struct profile *p, uint32_t probe, uint64_t ns)
{
	bool hist = probe < p->nprobes && probe_uses_hist(p, probe);
	uint64_t *unrecorded = NULL, over = 0;
	if (hist) {
		unrecorded = xmalloc(sizeof(p->probes[probe].hist));
		memcpy(unrecorded, p->probes[probe].hist, sizeof(p->probes[probe].hist));
	}
	for (size_t i = 0; i < p->nspans; i++) {
		const struct span *sp = &p->spans[i];
		if (sp->probe != probe)
			continue;
		over += sp->duration_ns > ns;
		/* Calls still running are not in the kernel's histogram. */
		unsigned b = latency_loglin_bucket(sp->duration_ns);
		if (hist && !sp->open && unrecorded[b])
			unrecorded[b]--;
	}
	for (unsigned b = 0; hist && b < LATENCY_LOGLIN_BUCKETS; b++)
		if (unrecorded[b])
			over += latency_loglin_count_over(b, unrecorded[b], ns);
	free(unrecorded);
	return over;
}

uint64_t profile_probe_calls(const struct profile *p, uint32_t probe)
{
	uint64_t calls = 0, open = 0, spans = 0;
	for (size_t i = 0; i < p->nspans; i++)
		if (p->spans[i].probe == probe) {
			spans++;
			open += p->spans[i].open;
		}
	if (probe >= p->nprobes || !probe_uses_hist(p, probe))
		return spans;
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		calls += p->probes[probe].hist[b];
	return calls + open;
}

void profile_meta_set(struct profile *p, const char *key, const char *value)
{
	for (size_t i = 0; i < p->nmeta; i++) {
		if (strcmp(p->meta[i].key, key) == 0) {
			free(p->meta[i].value);
			p->meta[i].value = xstrdup(value);
			return;
		}
	}
	grow_array((void **)&p->meta, &p->meta_cap, p->nmeta + 1, sizeof(*p->meta));
	p->meta[p->nmeta++] = (struct meta_entry){xstrdup(key), xstrdup(value)};
}

const char *profile_meta_get(const struct profile *p, const char *key)
{
	for (size_t i = 0; i < p->nmeta; i++)
		if (strcmp(p->meta[i].key, key) == 0)
			return p->meta[i].value;
	return NULL;
}

uint64_t profile_meta_u64(const struct profile *p, const char *key)
{
	const char *v = profile_meta_get(p, key);
	return v && *v ? strtoull(v, NULL, 10) : 0;
}

double profile_meta_double(const struct profile *p, const char *key)
{
	const char *v = profile_meta_get(p, key);
	return v && *v ? strtod(v, NULL) : 0.0;
}

bool input_note_format(uint64_t skipped_lines, uint64_t unterminated_records, char *buf,
		       size_t n)
{
	int k = 0;
	buf[0] = 0;
	if (skipped_lines)
		k = snprintf(buf, n, "%" PRIu64 " line%s of the input skipped (not part of a record)",
			     skipped_lines, skipped_lines == 1 ? "" : "s");
	if (unterminated_records && k >= 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k,
			 "%sthe last record left out: no blank line ends it (a capture cut short; "
			 "stackcollapse-perf.pl leaves it out too)",
			 k ? "; " : "");
	return skipped_lines || unterminated_records;
}

bool profile_input_note(const struct profile *p, char *buf, size_t n)
{
	return input_note_format(profile_meta_u64(p, "input_skipped_lines"),
				 profile_meta_u64(p, "input_unterminated_records"), buf, n);
}

uint64_t profile_time_base(const struct profile *p, bool has_times)
{
	uint64_t base = profile_meta_u64(p, "start_ns");
	if (base == 0)
		base = UINT64_MAX;
	if (has_times)
		for (size_t i = 0; i < p->nsamples; i++)
			if (p->samples[i].time_ns && p->samples[i].time_ns < base)
				base = p->samples[i].time_ns;
	for (size_t i = 0; i < p->nspans; i++)
		if (p->spans[i].start_ns < base)
			base = p->spans[i].start_ns;
	return base == UINT64_MAX ? 0 : base;
}

uint64_t profile_sample_call(const struct profile *p, const struct sample *s, uint32_t probe)
{
	for (uint32_t i = 0; i < s->nlinks; i++) {
		const struct span_link *l = &p->span_links[s->links + i];
		if (l->probe == probe)
			return l->span_id;
	}
	return 0;
}

int profile_cmp_sample_index(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct sample *x = &p->samples[i], *y = &p->samples[j];
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return i < j ? -1 : i > j;
}

int profile_cmp_span_index(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct span *x = &p->spans[i], *y = &p->spans[j];
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->duration_ns != y->duration_ns)
		return x->duration_ns > y->duration_ns ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return i < j ? -1 : i > j;
}

uint64_t span_end_ns(const struct span *sp)
{
	return sp->duration_ns > UINT64_MAX - sp->start_ns ? UINT64_MAX
							   : sp->start_ns + sp->duration_ns;
}

bool profile_sample_is_offcpu(const struct profile *p, const struct sample *s)
{
	return s->event == p->offcpu_event;
}

bool profile_sample_is_waker(const struct profile *p, const struct sample *s)
{
	return s->event == p->waker_event;
}

bool profile_sample_is_overhead(const struct profile *p, const struct sample *s)
{
	if (s->stack == 0 || s->stack >= p->nnodes)
		return false;
	const struct frame *leaf = frames_get(p->frames, p->nodes[s->stack].frame);
	return leaf && leaf->kind == FRAME_OVERHEAD;
}

size_t profile_drop_overhead(struct profile *p)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->nsamples; i++)
		if (!profile_sample_is_overhead(p, &p->samples[i]))
			p->samples[kept++] = p->samples[i];
	size_t dropped = p->nsamples - kept;
	p->nsamples = kept; /* their span links stay, unreferenced */
	return dropped;
}

int64_t profile_event_find(const struct profile *p, const char *name)
{
	for (size_t i = 0; i < p->nevents; i++)
		if (strcmp(p->events[i], name) == 0)
			return (int64_t)i;
	return -1;
}

size_t profile_keep_event(struct profile *p, uint32_t event)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		if (s->event == event || profile_sample_is_offcpu(p, s) || profile_sample_is_waker(p, s))
			p->samples[kept++] = *s;
	}
	size_t dropped = p->nsamples - kept;
	p->nsamples = kept; /* their span links stay, unreferenced */
	p->main_event = event;
	return dropped;
}

uint32_t profile_function_frame(struct profile *p, uint32_t frame)
{
	const struct frame *f = frames_get(p->frames, frame);
	if (!f)
		return frame;
	if (frame >= p->nfunction_of) {
		size_t n = frames_count(p->frames) + 1;
		p->function_of = xrealloc(p->function_of, n * sizeof(*p->function_of));
		memset(p->function_of + p->nfunction_of, 0,
		       (n - p->nfunction_of) * sizeof(*p->function_of));
		p->nfunction_of = n;
	}
	if (!p->function_of[frame]) {
		const char *name = f->name;
		enum frame_kind kind = f->kind;
		p->function_of[frame] = frames_intern(p->frames, name, "", "", 0, kind);
	}
	return p->function_of[frame];
}

uint32_t profile_line_frame(struct profile *p, uint32_t frame)
{
	const struct frame *f = frames_get(p->frames, frame);
	if (!f || f->line == 0)
		return profile_function_frame(p, frame);
	if (frame >= p->nline_of) {
		size_t n = frames_count(p->frames) + 1;
		p->line_of = xrealloc(p->line_of, n * sizeof(*p->line_of));
		memset(p->line_of + p->nline_of, 0, (n - p->nline_of) * sizeof(*p->line_of));
		p->nline_of = n;
	}
	if (!p->line_of[frame]) {
		/* Interning may move the table: copy what is needed first. */
		uint32_t line = f->line;
		enum frame_kind kind = f->kind;
		size_t size = strlen(f->name) + 16;
		char *name = xmalloc(size);
		snprintf(name, size, "%s:%" PRIu32, f->name, line);
		/* Line 0: the result is its own function and line frame. */
		p->line_of[frame] = frames_intern(p->frames, name, "", "", 0, kind);
		free(name);
	}
	return p->line_of[frame];
}

void profile_add_thread_sample(struct profile *p, const struct thread_sample *ts)
{
	grow_array((void **)&p->thread_samples, &p->thread_samples_cap, p->nthread_samples + 1,
		   sizeof(*ts));
	p->thread_samples[p->nthread_samples++] = *ts;
}

void profile_trim_thread_samples(struct profile *p, uint64_t before_ns)
{
	size_t skip = 0;
	while (skip < p->nthread_samples && p->thread_samples[skip].time_ns < before_ns)
		skip++;
	if (!skip)
		return; /* also: none kept at all (thread_samples NULL) */
	memmove(p->thread_samples, p->thread_samples + skip,
		(p->nthread_samples - skip) * sizeof(*p->thread_samples));
	p->nthread_samples -= skip;
}

size_t profile_trim(struct profile *p, size_t nsamples_drop, uint64_t span_cutoff_ns,
		    size_t max_spans)
{
	if (nsamples_drop > p->nsamples)
		nsamples_drop = p->nsamples;
	if (nsamples_drop) {
		/* Links are appended in sample order: the kept samples' links are
		 * one suffix of the array. */
		size_t first_link = nsamples_drop < p->nsamples ? p->samples[nsamples_drop].links
								: p->nspan_links;
		memmove(p->samples, p->samples + nsamples_drop,
			(p->nsamples - nsamples_drop) * sizeof(*p->samples));
		p->nsamples -= nsamples_drop;
		memmove(p->span_links, p->span_links + first_link,
			(p->nspan_links - first_link) * sizeof(*p->span_links));
		p->nspan_links -= first_link;
		for (size_t i = 0; i < p->nsamples; i++)
			p->samples[i].links -= (uint32_t)first_link;
	}
	size_t kept = 0;
	for (size_t i = 0; i < p->nspans; i++)
		if (span_end_ns(&p->spans[i]) >= span_cutoff_ns)
			p->spans[kept++] = p->spans[i];
	/* Spans arrive as calls end: the first ones are the oldest. */
	size_t skip = kept > max_spans ? kept - max_spans : 0;
	if (skip)
		memmove(p->spans, p->spans + skip, (kept - skip) * sizeof(*p->spans));
	size_t removed = p->nspans - (kept - skip);
	p->nspans = kept - skip;
	if (removed)
		span_reindex(p);
	/* Hits of capturing probes: those older than the cutoff, then beyond
	 * max_spans the first ones (they arrive about in time order). */
	size_t hkept = 0, vkept = 0, young = 0;
	for (size_t i = 0; i < p->nhits; i++)
		young += p->hits[i].time_ns >= span_cutoff_ns;
	size_t hskip = young > max_spans ? young - max_spans : 0;
	for (size_t i = 0; i < p->nhits; i++) {
		struct probe_hit h = p->hits[i];
		if (h.time_ns < span_cutoff_ns || (hskip && hskip--))
			continue;
		memmove(&p->hit_values[vkept], &p->hit_values[h.first], h.n * sizeof(*p->hit_values));
		h.first = (uint32_t)vkept;
		vkept += h.n;
		p->hits[hkept++] = h;
	}
	p->nhits = hkept;
	p->nhit_values = vkept;
	profile_trim_thread_samples(p, span_cutoff_ns);
	return removed;
}
