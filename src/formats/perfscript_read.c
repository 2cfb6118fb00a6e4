/* perfscript_read — perf script records into a profile (perfscript_read,
 * perfscript_read_lines; perfscript.h says what comes back): one sample per
 * record, its frames named as the collapse names them and interned root
 * first, threads and events interned by key. */
#include "perfscript.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "perfscriptscan.h"

struct record {
	bool open;
	uint32_t pid, tid, cpu, event, thread;
	uint64_t time_ns, weight;
	bool has_time;
	bool weight_too_large; /* its period is more than a profile holds */
	size_t line;           /* of its header */
};

struct reader {
	struct profile *p;
	struct table threads, events; /* key -> index + 1 */
	struct buf name, mod, tmp, key;
	uint32_t *frames; /* of the open record, in perf's order (leaf first) */
	size_t nframes, frames_cap;
	struct group *groups;
	size_t ngroups, groups_cap;
	uint32_t *root_first;
	size_t root_cap;
	struct fields fields;
	struct record rec;
	bool any_time, too_many_events, java;
	uint64_t start_ns, end_ns;
};

/* Real captures have a handful of events; the profile looks names up one by
 * one, so hostile text with millions of them is refused. */
#define MAX_EVENTS 4096

static uint32_t intern_event(struct reader *r, struct sv name)
{
	bool added;
	struct count *x = perfscript_table_get(&r->events, name.p, name.n, &added);
	if (added) {
		if (r->p->nevents >= MAX_EVENTS) {
			r->too_many_events = true;
			return 0;
		}
		r->tmp.n = 0;
		buf_add(&r->tmp, name.p, name.n);
		buf_addc(&r->tmp, 0);
		x->u = profile_event_intern(r->p, r->tmp.p);
	}
	return (uint32_t)x->u;
}

static uint32_t intern_thread(struct reader *r, uint32_t pid, uint32_t tid, struct sv comm)
{
	r->key.n = 0;
	buf_add(&r->key, &pid, sizeof(pid));
	buf_add(&r->key, &tid, sizeof(tid));
	buf_add(&r->key, comm.p, comm.n);
	bool added;
	struct count *x = perfscript_table_get(&r->threads, r->key.p, r->key.n, &added);
	if (added) {
		r->tmp.n = 0;
		buf_add(&r->tmp, comm.p, comm.n);
		buf_addc(&r->tmp, 0);
		x->u = profile_thread_intern(r->p, pid, tid, r->tmp.p);
	}
	return (uint32_t)x->u;
}

/* Adds the open record as a sample. Returns 0, or -1 with err when its
 * weight would take the profile past PROFILE_MAX_WEIGHT. */
static int read_end(void *arg, char *err, size_t errlen)
{
	struct reader *r = arg;
	if (!r->rec.open)
		return 0;
	grow_array((void **)&r->root_first, &r->root_cap, r->nframes + 1, sizeof(*r->root_first));
	size_t k = 0;
	for (size_t g = r->ngroups; g-- > 0;)
		for (size_t i = 0; i < r->groups[g].n; i++)
			r->root_first[k++] = r->frames[r->groups[g].first + i];
	struct sample s = {
		.time_ns = r->rec.time_ns,
		.weight = r->rec.weight,
		.cpu = r->rec.cpu,
		.thread = r->rec.thread,
		.event = r->rec.event,
		.stack = profile_stack_intern(r->p, r->root_first, k),
	};
	if (profile_add_sample(r->p, &s, NULL, 0)) {
		errbuf_set(err, errlen,
			   "line %zu: the periods add up to more than %" PRIu64
			   " (the most one profile holds)",
			   r->rec.line, PROFILE_MAX_WEIGHT);
		return -1;
	}
	if (r->rec.has_time) {
		if (!r->any_time || r->rec.time_ns < r->start_ns)
			r->start_ns = r->rec.time_ns;
		if (!r->any_time || r->rec.time_ns > r->end_ns)
			r->end_ns = r->rec.time_ns;
		r->any_time = true;
	}
	r->rec.open = false;
	r->nframes = r->ngroups = 0;
	return 0;
}

static void start_record(struct reader *r, const struct record_head *rh, size_t line)
{
	struct record *rec = &r->rec;
	memset(rec, 0, sizeof(*rec));
	rec->open = true;
	rec->line = line;
	rec->pid = rh->h.pid.p ? u32_of(rh->h.pid) : 0;
	rec->tid = u32_of(rh->h.tid);
	rec->cpu = rh->cpu;
	rec->time_ns = rh->time_ns;
	rec->has_time = rh->has_time;
	rec->weight = 1;
	if (rh->period.n) {
		uint64_t w = u64_sat(rh->period);
		rec->weight = w ? w : 1;
		rec->weight_too_large = w > PROFILE_MAX_WEIGHT;
	}
	rec->event = intern_event(r, rh->event.n ? rh->event : (struct sv){"samples", 7});
	rec->thread = intern_thread(r, rec->pid, rec->tid, rh->h.comm);
}

static void add_stackline(struct reader *r, const struct stackline *sl, bool java)
{
	struct sv func = perfscript_strip_offset(sl->func);
	if (func.n && func.p[0] == '(')
		return;
	perfscript_split_arrows(func, &r->fields);
	if (r->fields.n == 0)
		return;
	bool inlined_mod = sv_eq(sl->mod, "inlined");
	r->mod.n = 0;
	if (!sv_eq(sl->mod, "[unknown]") && !inlined_mod)
		buf_add(&r->mod, sl->mod.p, sl->mod.n);
	buf_addc(&r->mod, 0);
	grow_array((void **)&r->groups, &r->groups_cap, r->ngroups + 1, sizeof(*r->groups));
	r->groups[r->ngroups++] = (struct group){r->nframes, 0};
	for (size_t i = 0; i < r->fields.n; i++) {
		r->name.n = 0;
		bool unknown = perfscript_clean_append(&r->name, &r->tmp, r->fields.v[i], sl, false, java);
		buf_addc(&r->name, 0);
		enum frame_kind kind;
		if (i > 0 || inlined_mod)
			kind = FRAME_INLINED;
		else if (perfscript_mod_is_kernel(sl->mod))
			kind = FRAME_KERNEL;
		else if (perfscript_mod_is_jit(sl->mod))
			kind = FRAME_JIT;
		else if (unknown)
			kind = FRAME_UNKNOWN;
		else
			kind = FRAME_USER;
		uint32_t id = frames_intern(r->p->frames, r->name.p, r->mod.p, "", 0, kind);
		grow_array((void **)&r->frames, &r->frames_cap, r->nframes + 1, sizeof(*r->frames));
		r->frames[r->nframes++] = id;
		r->groups[r->ngroups - 1].n++;
	}
}

static void reader_free(struct reader *r)
{
	perfscript_table_free(&r->threads);
	perfscript_table_free(&r->events);
	free(r->name.p);
	free(r->mod.p);
	free(r->tmp.p);
	free(r->key.p);
	free(r->frames);
	free(r->groups);
	free(r->root_first);
	free(r->fields.v);
}

struct profile *perfscript_read(const char *text, size_t len, char *err, size_t errlen)
{
	struct infile in;
	infile_from_memory(&in, text, len);
	struct profile *p = perfscript_read_lines(&in, err, errlen);
	infile_close(&in);
	return p;
}

static int read_begin(void *arg, const struct record_head *rh, size_t line, char *err,
		      size_t errlen)
{
	struct reader *r = arg;
	if (read_end(r, err, errlen))
		return -1;
	start_record(r, rh, line);
	if (r->too_many_events) {
		errbuf_set(err, errlen, "line %zu: more than %d distinct event names", line, MAX_EVENTS);
		return -1;
	}
	if (r->rec.weight_too_large) {
		errbuf_set(err, errlen, "line %zu: the period is too large (at most %" PRIu64 ")", line,
			   PROFILE_MAX_WEIGHT);
		return -1;
	}
	r->java = sv_eq(rh->h.comm, "java");
	return 0;
}

static int read_frame(void *arg, const struct stackline *sl, size_t line, char *err,
		      size_t errlen)
{
	struct reader *r = arg;
	add_stackline(r, sl, r->java);
	if (r->nframes > MAX_RECORD_FRAMES) {
		errbuf_set(err, errlen, "line %zu: %s", line, PERFSCRIPT_TOO_DEEP);
		return -1;
	}
	return 0;
}

struct profile *perfscript_read_lines(struct infile *in, char *err, size_t errlen)
{
	struct reader r = {0};
	r.p = profile_new();
	profile_meta_set(r.p, "source_format", "perf-script");
	struct scan_counts counts;
	struct record_sink k = {&r, read_begin, read_frame, read_end};
	if (perfscript_scan_records(in, &k, &counts, err, errlen)) {
		reader_free(&r);
		profile_free(r.p);
		return NULL;
	}
	char num[64];
	if (r.p->nevents)
		profile_meta_set(r.p, "event", r.p->events[0]);
	if (r.any_time) {
		snprintf(num, sizeof(num), "%" PRIu64, r.start_ns);
		profile_meta_set(r.p, "start_ns", num);
		snprintf(num, sizeof(num), "%" PRIu64, r.end_ns);
		profile_meta_set(r.p, "end_ns", num);
		snprintf(num, sizeof(num), "%.6f", (double)(r.end_ns - r.start_ns) / 1e9);
		profile_meta_set(r.p, "duration_s", num);
	}
	if (counts.skipped_lines) {
		snprintf(num, sizeof(num), "%" PRIu64, counts.skipped_lines);
		profile_meta_set(r.p, "input_skipped_lines", num);
	}
	if (counts.unterminated)
		profile_meta_set(r.p, "input_unterminated_records", "1");
	reader_free(&r);
	return r.p;
}
