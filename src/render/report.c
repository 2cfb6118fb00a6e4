#include "report.h"
#include "valuereport.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "latency.h"
#include "linecalls.h"
#include "printable.h"
#include "util.h"

struct function_stat {
	const char *name; /* display label (interned) */
	enum frame_kind kind;
	uint64_t self, total;
	size_t last_sample; /* sample index + 1 that last counted total */
};

struct thread_stat {
	uint32_t thread;
	uint64_t samples;
};

struct summary {
	struct function_stat *funcs;
	size_t nfuncs;
	struct thread_stat *threads;
	size_t nthreads;
	uint64_t samples; /* weighted */
	uint64_t broken;  /* of which with a "[broken stack: ...]" root */
};

#define BROKEN_STACK_PREFIX "[broken stack: "

static const char *label_of(struct profile *p, uint32_t frame)
{
	const struct frame *f = frames_get(p->frames, frame);
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s%s", f->name, frames_kind_suffix(f->kind));
	return frames_strdup(p->frames, buf);
}

/* Maps frame ids to function slots: frames with the same name and kind are
 * one function (profile_function_frame), as in flame graphs; with `lines`,
 * one slot per line of a function (profile_line_frame). */
static size_t *function_index(struct profile *p, struct summary *s, bool lines)
{
	size_t nframes = frames_count(p->frames);
	size_t *idx = xcalloc(nframes + 1, sizeof(*idx));
	for (uint32_t id = 1; id <= nframes; id++) /* may add frames */
		idx[id] = lines ? profile_line_frame(p, id) : profile_function_frame(p, id);
	size_t nall = frames_count(p->frames);
	size_t *slot_of = xcalloc(nall + 1, sizeof(*slot_of)); /* function frame -> slot + 1 */
	size_t cap = 0;
	for (uint32_t id = 1; id <= nframes; id++) {
		size_t fn = idx[id];
		if (!slot_of[fn]) {
			grow_array((void **)&s->funcs, &cap, s->nfuncs + 1, sizeof(*s->funcs));
			s->funcs[s->nfuncs] = (struct function_stat){
				.name = label_of(p, (uint32_t)fn),
				.kind = frames_get(p->frames, (uint32_t)fn)->kind};
			slot_of[fn] = ++s->nfuncs;
		}
		idx[id] = slot_of[fn] - 1;
	}
	free(slot_of);
	return idx;
}

static bool frame_is_broken_stack(const struct profile *p, uint32_t frame)
{
	const struct frame *fr = frames_get(p->frames, frame);
	return fr && fr->kind == FRAME_UNKNOWN &&
	       strncmp(fr->name, BROKEN_STACK_PREFIX, strlen(BROKEN_STACK_PREFIX)) == 0;
}

static void summarize(struct profile *p, const struct view *f, bool lines,
		      struct summary *s)
{
	memset(s, 0, sizeof(*s));
	if (f && f->time == VIEW_WALL)
		view_state_frame(p, TSTATE_RUNNING, -1); /* "[running]" has a row */
	size_t *fidx = function_index(p, s, lines);
	size_t nframes = frames_count(p->frames);
	uint64_t *per_thread = xcalloc(p->nthreads + 1, sizeof(*per_thread));
	size_t cap = 256;
	uint32_t *stack = xmalloc(cap * sizeof(*stack));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *smp = &p->samples[i];
		if (!view_takes(f, p, smp))
			continue;
		uint64_t w = view_weight(f, p, smp);
		s->samples += w;
		per_thread[smp->thread] += w;
		size_t depth = profile_stack_frames(p, smp->stack, stack, cap);
		if (depth + 1 > cap) {
			cap = depth + 1;
			stack = xrealloc(stack, cap * sizeof(*stack));
			profile_stack_frames(p, smp->stack, stack, cap);
		}
		uint32_t leaf = view_leaf_frame(f, p, smp);
		if (leaf)
			stack[depth++] = leaf;
		if (depth && frame_is_broken_stack(p, stack[0]))
			s->broken += w;
		for (size_t d = 0; d < depth; d++) {
			if (stack[d] > nframes)
				continue;
			struct function_stat *fs = &s->funcs[fidx[stack[d]]];
			if (fs->last_sample != i + 1) {
				fs->total += w;
				fs->last_sample = i + 1;
			}
			if (d == depth - 1)
				fs->self += w;
		}
	}
	free(stack);
	free(fidx);
	s->threads = xcalloc(p->nthreads + 1, sizeof(*s->threads));
	for (size_t t = 0; t < p->nthreads; t++)
		if (per_thread[t])
			s->threads[s->nthreads++] = (struct thread_stat){(uint32_t)t, per_thread[t]};
	free(per_thread);
}

static int by_total(const void *a, const void *b)
{
	const struct function_stat *x = a, *y = b;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_self(const void *a, const void *b)
{
	const struct function_stat *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return by_total(a, b);
}

static int by_thread_samples(const void *a, const void *b)
{
	const struct thread_stat *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples < y->samples ? 1 : -1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void free_summary(struct summary *s)
{
	free(s->funcs);
	free(s->threads);
}

/* A table of the top functions (or source lines): its title, the name of
 * its last column, the order of its rows (by_self or by_total). */
struct function_table {
	const char *title;
	const char *column;
	int (*cmp)(const void *, const void *);
};

static const struct function_table line_tables[] = {
	{"Top source lines by self samples:", "FUNCTION:LINE", by_self},
	{"Top source lines by total samples (self + callees):", "FUNCTION:LINE", by_total},
};

static const struct function_table function_tables[] = {
	{"Top functions by self samples:", "FUNCTION", by_self},
	{"Top functions by total samples (self + callees):", "FUNCTION", by_total},
};

static void text_function_table(FILE *out, const struct function_table *table, struct summary *s,
				int top, struct printable *keep)
{
	int (*cmp)(const void *, const void *) = table->cmp;
	if (s->nfuncs) /* an empty profile has no array at all */
		qsort(s->funcs, s->nfuncs, sizeof(*s->funcs), cmp);
	fprintf(out, "\n%s\n  %7s %8s %7s %8s  %s\n", table->title, "SELF%", "SELF", "TOTAL%",
		"TOTAL", table->column);
	int shown = 0;
	for (size_t i = 0; i < s->nfuncs && shown < top; i++) {
		const struct function_stat *f = &s->funcs[i];
		if ((cmp == by_self ? f->self : f->total) == 0)
			break;
		fprintf(out, "  %6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64 "  %s\n",
			pct(f->self, s->samples), f->self, pct(f->total, s->samples), f->total,
			printable(keep, f->name));
		shown++;
	}
}

struct probe_summary {
	struct latency_stats st; /* st.count: every call, completed or running */
	struct latency_modes modes;
	struct latency_hist hist;
	uint64_t kernel_calls; /* completed calls counted in the kernel */
	size_t open;           /* calls still running at the end */
	size_t records;        /* completed calls kept with a record (span) */
};

static void summarize_probe(const struct profile *p, uint32_t probe, struct probe_summary *ps)
{
	memset(ps, 0, sizeof(*ps));
	const struct probe_info *pi = &p->probes[probe];
	size_t n;
	uint64_t *d = profile_probe_durations(p, probe, &n);
	latency_compute(d, n, &ps->st);
	latency_auto_threshold(d, n, &ps->modes);
	ps->st.count = profile_probe_calls(p, probe);
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		ps->kernel_calls += pi->hist[b];
	for (size_t i = 0; i < p->nspans; i++) {
		if (p->spans[i].probe != probe)
			continue;
		ps->open += p->spans[i].open;
		ps->records += !p->spans[i].open;
		if (!pi->all_calls && ps->kernel_calls && p->spans[i].open)
			latency_hist_add(&ps->hist, p->spans[i].duration_ns, 1);
	}
	if (pi->all_calls || !ps->kernel_calls) {
		for (size_t i = 0; i < n; i++)
			latency_hist_add(&ps->hist, d[i], 1);
	} else {
		/* Every log-linear bucket lies in one log2 bucket. */
		for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++) {
			uint64_t lo, hi;
			latency_loglin_bounds(b, &lo, &hi);
			if (pi->hist[b])
				latency_hist_add(&ps->hist, lo, pi->hist[b]);
		}
	}
	free(d);
}

/* sonde's own cost over the whole recording: samples that interrupted its
 * probe machinery, and the time it took inside traced calls. */
struct overhead_summary {
	uint64_t samples, all_samples; /* "[sonde]" samples, all on-CPU samples */
	uint64_t own_ns, raw_ns;        /* inside traced calls, summed over probes */
};

static void summarize_overhead(const struct profile *p, struct overhead_summary *o)
{
	memset(o, 0, sizeof(*o));
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct sample *s = &p->samples[i];
		/* A share of the on-CPU samples: off-CPU intervals and their
		 * wakers weigh nanoseconds, not samples. */
		if (profile_sample_is_offcpu(p, s) || profile_sample_is_waker(p, s))
			continue;
		o->all_samples += s->weight;
		if (profile_sample_is_overhead(p, s))
			o->samples += s->weight;
	}
	for (size_t i = 0; i < p->nprobes; i++) {
		/* Nested probes' own cost is inside their callers' too: count
		 * each probe's own share once, at the outermost level, by
		 * taking the largest raw total (the outermost probe's). */
		if (p->probes[i].raw_ns > o->raw_ns) {
			o->raw_ns = p->probes[i].raw_ns;
			o->own_ns = p->probes[i].own_ns;
		}
	}
}

/* What the run's samples were charged as measured, and what each probe's
 * own calls said was left (owncost.h). */
static void text_sample_cost(FILE *out, const struct profile *p)
{
	uint64_t n = profile_meta_u64(p, "sample_charges");
	uint64_t exits = profile_meta_u64(p, "sample_exits_charged");
	char b[4][32], timed[96] = "";
	if (exits)
		snprintf(timed, sizeof(timed), "%s of interrupt exit timed in %" PRIu64 " of them, + ",
			 duration_format((uint64_t)profile_meta_double(p, "sample_charged_exit_ns"),
					 b[3], 32),
			 exits);
	if (n)
		fprintf(out,
			"  a sample as measured in this run: %s of sampler, %s late after its "
			"timer, and %s%s of interrupt exit (calibrated), over %" PRIu64 " samples\n",
			duration_format((uint64_t)profile_meta_double(p, "sample_charged_run_ns"), b[0], 32),
			duration_format((uint64_t)profile_meta_double(p, "sample_charged_late_ns"), b[1],
					32),
			timed, duration_format(profile_meta_u64(p, "calib_sample_unseen_ns"), b[2], 32), n);
	for (size_t i = 0; i < p->nprobes; i++) {
		const struct probe_info *pi = &p->probes[i];
		char key[320];
		struct printable keep = {0};
		snprintf(key, sizeof(key), "sample_residual_ns:%s", pi->name);
		const char *res = profile_meta_get(p, key);
		snprintf(key, sizeof(key), "sample_residual_unknown:%s", pi->name);
		const char *unknown = profile_meta_get(p, key);
		if (res) {
			long long r = strtoll(res, NULL, 10);
			fprintf(out,
				"  %s: each sample left %s%s that nothing measured (the calls without "
				"one say so), taken out of its sampled calls; those within +-%s a "
				"sample of a threshold are on neither side of it\n",
				printable(&keep, pi->name), r < 0 ? "-" : "",
				duration_format((uint64_t)(r < 0 ? -r : r), b[0], 32),
				duration_format(pi->sample_uncertainty_ns, b[1], 32));
		} else if (unknown) {
			fprintf(out,
				"  %s: too few calls to tell what samples cost its calls beyond what "
				"was measured (%s): its sampled calls keep that cost\n",
				printable(&keep, pi->name), printable(&keep, unknown));
		}
		printable_free(&keep);
	}
}

static void text_overhead(FILE *out, const struct profile *p)
{
	struct overhead_summary o;
	summarize_overhead(p, &o);
	if (!p->nprobes && !o.samples)
		return;
	char b[3][32];
	fprintf(out, "\nsonde's own cost:\n");
	fprintf(out,
		"  %" PRIu64 " samples (%.2f%%) were taken inside sonde's probe machinery (frame "
		"[sonde]); left out of the views above%s\n",
		o.samples, pct(o.samples, o.all_samples),
		o.samples ? " (--show-overhead keeps them)" : "");
	if (o.raw_ns)
		fprintf(out,
			"  inside traced calls: %s of %s measured (%.2f%%), taken out of the call "
			"durations above\n",
			duration_format(o.own_ns, b[0], 32), duration_format(o.raw_ns, b[1], 32),
			100.0 * (double)o.own_ns / (double)o.raw_ns);
	if (profile_meta_get(p, "calib_call_full_ns")) {
		char c[2][32];
		fprintf(out,
			"  calibrated on this machine: a traced call costs %s (%s of it inside "
			"the call itself), %s where the kernel single-steps the probed "
			"instruction (%s inside); a sample %s\n",
			duration_format((uint64_t)profile_meta_double(p, "calib_call_full_ns"), b[0], 32),
			duration_format(profile_meta_u64(p, "calib_self_unseen_ns"), b[1], 32),
			duration_format((uint64_t)profile_meta_double(p, "calib_sstep_full_ns"), c[0], 32),
			duration_format(profile_meta_u64(p, "calib_sstep_self_unseen_ns"), c[1], 32),
			duration_format((uint64_t)profile_meta_double(p, "calib_sample_full_ns"), b[2],
					32));
	}
	text_sample_cost(out, p);
}

static void json_overhead(FILE *out, const struct profile *p)
{
	struct overhead_summary o;
	summarize_overhead(p, &o);
	fprintf(out,
		"  \"overhead\": {\"samples\": %" PRIu64 ", \"share\": %.6f, \"calls_own_ns\": %" PRIu64
		", \"calls_raw_ns\": %" PRIu64 ", \"calib_call_ns\": %.0f, \"calib_self_unseen_ns\": %" PRIu64
		", \"calib_sample_ns\": %.0f},\n",
		o.samples, o.all_samples ? (double)o.samples / (double)o.all_samples : 0, o.own_ns,
		o.raw_ns, profile_meta_double(p, "calib_call_full_ns"),
		profile_meta_u64(p, "calib_self_unseen_ns"),
		profile_meta_double(p, "calib_sample_full_ns"));
}

/* A function probe's slow threshold for the line reports: auto, else p95
 * (as its own section says). */
static uint64_t report_slow_ns(void *arg, uint32_t probe)
{
	struct probe_summary ps;
	summarize_probe(arg, probe, &ps);
	return ps.modes.found ? ps.modes.threshold_ns : ps.st.p95_ns;
}

static size_t line_in_calls(const struct profile *p, uint32_t line, struct line_in_calls *out)
{
	return line_calls_of(p, line, report_slow_ns, (void *)p, out);
}

static double share(uint64_t part, uint64_t whole)
{
	return line_calls_share(part, whole);
}

/* In which calls of the function probes one outcome of a jump happened. */
static void text_outcome_calls(FILE *out, const struct profile *p, uint32_t probe,
			       struct line_in_calls *in, struct printable *keep)
{
	const struct probe_branch *b = p->probes[probe].branch;
	size_t n = line_in_calls(p, probe, in);
	for (size_t k = 0; k < n; k++) {
		char d[32];
		fprintf(out, "    %s in %.1f%% of the calls of %s (%" PRIu64 " of %" PRIu64 ")",
			b->taken ? "taken" : "not taken", share(in[k].hit, in[k].calls),
			printable(keep, p->probes[in[k].probe].name), in[k].hit, in[k].calls);
		if (in[k].slow)
			fprintf(out, " and in %.1f%% of its slow calls (over %s: %" PRIu64 " of %" PRIu64
				     " with a record)",
				share(in[k].slow_hit, in[k].slow),
				duration_format(in[k].slow_ns, d, sizeof(d)), in[k].slow_hit, in[k].slow);
		fprintf(out, "\n");
	}
}

/* " (-> 1313)", or "" when the line is not known. */
static const char *to_line(const struct probe_branch *b, char *buf, size_t size)
{
	if (b && b->to_line)
		snprintf(buf, size, ", -> %s%s%u", b->to_file ? b->to_file : "", b->to_file ? ":" : "",
			 b->to_line);
	else
		buf[0] = 0;
	return buf;
}

/* Branch probes: each location's jumps in order, each with its two
 * outcomes (a probe each), and the calls each happened in. */
static void text_branches(FILE *out, const struct profile *p, struct printable *keep)
{
	struct line_in_calls *in = xcalloc(p->nprobes + 1, sizeof(*in));
	bool *shown = xcalloc(p->nprobes + 1, sizeof(*shown));
	for (size_t i = 0; i < p->nprobes; i++) {
		const struct probe_branch *b = p->probes[i].branch;
		if (!b || shown[i])
			continue;
		fprintf(out, "\nBranch %s", printable(keep, b->at));
		if (b->source)
			fprintf(out, " %s", printable(keep, b->source));
		fprintf(out, "\n");
		/* This location's jumps, by index; each its taken then not taken. */
		for (unsigned jump = 1; jump <= b->jumps; jump++) {
			int taken = -1, not_taken = -1;
			for (size_t k = i; k < p->nprobes; k++) {
				const struct probe_branch *o = p->probes[k].branch;
				if (!o || shown[k] || o->jump != jump || strcmp(o->at, b->at) ||
				    strcmp(p->probes[k].binary, p->probes[i].binary))
					continue;
				*(o->taken ? &taken : &not_taken) = (int)k;
				shown[k] = true;
			}
			if (taken < 0 && not_taken < 0)
				continue;
			const struct probe_branch *tb = taken >= 0 ? p->probes[taken].branch : NULL;
			const struct probe_branch *nb = not_taken >= 0 ? p->probes[not_taken].branch : NULL;
			const struct probe_branch *any = tb ? tb : nb;
			uint64_t t = taken >= 0 ? p->probes[taken].entered : 0;
			uint64_t f = not_taken >= 0 ? p->probes[not_taken].entered : 0;
			char lt[32], lf[32];
			fprintf(out, "  jump %u of %u (%s", jump, b->jumps, printable(keep, any->insn));
			if (any->copies > 1)
				fprintf(out, ", at %u addresses", any->copies);
			fprintf(out, "): ran %" PRIu64 " times: ", t + f);
			if (any->mixed)
				fprintf(out, "(its copies test different conditions: each copy's own way) ");
			if (tb)
				fprintf(out, "taken %.1f%% (%" PRIu64 "%s)", share(t, t + f), t,
					to_line(tb, lt, sizeof(lt)));
			if (nb)
				fprintf(out, "%snot taken %.1f%% (%" PRIu64 "%s)", tb ? ", " : "",
					share(f, t + f), f, to_line(nb, lf, sizeof(lf)));
			fprintf(out, "\n");
			if (taken >= 0)
				text_outcome_calls(out, p, (uint32_t)taken, in, keep);
			if (not_taken >= 0)
				text_outcome_calls(out, p, (uint32_t)not_taken, in, keep);
		}
	}
	free(shown);
	free(in);
}

static void text_lines(FILE *out, const struct profile *p, struct printable *keep)
{
	struct line_in_calls *in = xcalloc(p->nprobes + 1, sizeof(*in));
	for (size_t i = 0; i < p->nprobes; i++) {
		const struct probe_info *pi = &p->probes[i];
		if (pi->point < 0 || pi->branch)
			continue;
		fprintf(out, "\nLine %s: ran %" PRIu64 " times\n", printable(keep, pi->name),
			pi->entered);
		size_t n = line_in_calls(p, (uint32_t)i, in);
		for (size_t k = 0; k < n; k++) {
			char b[32];
			/* With a predicate, only hits where it held mark their call. */
			fprintf(out, "  %s in %.1f%% of the calls of %s (%" PRIu64 " of %" PRIu64 ")",
				pi->predicate ? "matched" : "ran", share(in[k].hit, in[k].calls),
				printable(keep, p->probes[in[k].probe].name), in[k].hit, in[k].calls);
			if (in[k].slow)
				fprintf(out, " and in %.1f%% of its slow calls (over %s: %" PRIu64
					     " of %" PRIu64 " with a record)",
					share(in[k].slow_hit, in[k].slow),
					duration_format(in[k].slow_ns, b, sizeof(b)), in[k].slow_hit,
					in[k].slow);
			fprintf(out, "\n");
		}
		valuereport_text(out, p, (uint32_t)i, keep);
	}
	free(in);
}

static void text_probes(FILE *out, const struct profile *p, struct printable *keep)
{
	for (size_t i = 0; i < p->nprobes; i++) {
		if (p->probes[i].point >= 0)
			continue; /* text_lines */
		struct probe_summary ps;
		summarize_probe(p, (uint32_t)i, &ps);
		char b[7][32];
		const struct probe_info *pi = &p->probes[i];
		fprintf(out, "\nTraced calls of %s", printable(keep, pi->name));
		/* Decided at entry: the calls where it failed were counted entered
		 * only, and nothing below is about them. */
		if (pi->predicate && profile_meta_u64(p, "predicates_select_calls"))
			fprintf(out, " where %s", printable(keep, pi->predicate));
		else if (pi->predicate)
			fprintf(out, " (every call: recorded before a predicate selected calls)");
		fprintf(out, ": %" PRIu64 " calls", ps.st.count);
		if (ps.open)
			fprintf(out, " (%zu still running at the end, counted with their elapsed time)",
				ps.open);
		fprintf(out, "; the kernel counted %" PRIu64 " completed", ps.kernel_calls);
		if (pi->entered)
			fprintf(out, " of %" PRIu64 " entered", pi->entered);
		fprintf(out, "; %zu kept with a record", ps.records);
		if (pi->all_calls && ps.kernel_calls > ps.records)
			fprintf(out, " (%" PRIu64 " records lost: ring buffer full, or not in a live "
				     "session's window)",
				ps.kernel_calls - ps.records);
		else if (!pi->all_calls)
			fprintf(out, " (those samples landed in, and the slowest; figures from the "
				     "kernel's histogram, within 3.2%%)");
		if (!pi->all_calls && profile_meta_u64(p, "lost_spans"))
			fprintf(out, "; %" PRIu64 " call records of the recording lost (ring buffer full)",
				profile_meta_u64(p, "lost_spans"));
		if (pi->raw_ns && ps.kernel_calls)
			fprintf(out, "\n  durations without sonde's own cost (%s per call taken out)",
				duration_format(pi->own_ns / ps.kernel_calls, b[0], 32));
		fprintf(out, "\n  mean %s  p50 %s  p90 %s  p95 %s  p99 %s  p99.9 %s  max %s\n",
			duration_format((uint64_t)ps.st.mean_ns, b[0], 32),
			duration_format(ps.st.p50_ns, b[1], 32), duration_format(ps.st.p90_ns, b[2], 32),
			duration_format(ps.st.p95_ns, b[3], 32), duration_format(ps.st.p99_ns, b[4], 32),
			duration_format(ps.st.p999_ns, b[5], 32), duration_format(ps.st.max_ns, b[6], 32));
		latency_hist_print(out, &ps.hist, 40);
		fprintf(out, "  modes:");
		for (size_t m = 0; m < ps.modes.nmodes; m++)
			fprintf(out, "%s %s (%.1f%% of calls)", m ? "," : "",
				duration_format(ps.modes.modes[m].ns, b[0], 32),
				100.0 * ps.modes.modes[m].share);
		if (ps.modes.found)
			fprintf(out, "; auto threshold %s %s\n",
				duration_format(ps.modes.threshold_ns, b[0], 32), ps.modes.reason);
		else
			fprintf(out, "%sauto: no second mode; using p95 = %s (%s)\n",
				ps.modes.nmodes ? "; " : " ", duration_format(ps.st.p95_ns, b[0], 32),
				ps.modes.reason);
		valuereport_text(out, p, (uint32_t)i, keep);
	}
}

/* A line probe: its hits, and in which calls of the function probes. */
static void json_line_probe(FILE *out, const struct profile *p, uint32_t i)
{
	const struct probe_info *pi = &p->probes[i];
	const struct probe_branch *b = pi->branch;
	if (b) {
		fprintf(out, ", \"branch\": {\"at\": ");
		json_write_string(out, b->at);
		fprintf(out, ", \"line\": %u, \"jump\": %u, \"jumps\": %u, \"outcome\": \"%s\", "
			     "\"to_line\": %u, \"copies\": %u, \"insn\": ",
			b->line, b->jump, b->jumps, b->taken ? "taken" : "not-taken", b->to_line,
			b->copies);
		json_write_string(out, b->insn);
		fprintf(out, ", \"to_file\": ");
		if (b->to_file)
			json_write_string(out, b->to_file);
		else
			fprintf(out, "null");
		fprintf(out, ", \"source\": ");
		if (b->source)
			json_write_string(out, b->source);
		else
			fprintf(out, "null");
		int other = profile_branch_other(p, i);
		fprintf(out, ", \"mixed\": %s, \"other\": %" PRIu64 "}", b->mixed ? "true" : "false",
			other >= 0 ? p->probes[other].entered : 0);
	}
	fprintf(out, ", \"kind\": \"%s\", \"calls\": %" PRIu64 ", \"entered\": %" PRIu64
		     ", \"kernel_calls\": %" PRIu64 ", \"records\": 0,\n     \"in_calls\": [",
		b ? "branch" : "line", pi->entered, pi->entered, pi->entered);
	struct line_in_calls *in = xcalloc(p->nprobes + 1, sizeof(*in));
	size_t n = line_in_calls(p, i, in);
	for (size_t k = 0; k < n; k++) {
		fprintf(out, "%s{\"probe\": ", k ? ", " : "");
		json_write_string(out, p->probes[in[k].probe].name);
		fprintf(out,
			", \"calls\": %" PRIu64 ", \"hit\": %" PRIu64 ", \"share\": %.4f"
			", \"slow_ns\": %" PRIu64 ", \"slow_recorded\": %" PRIu64
			", \"slow_hit\": %" PRIu64 ", \"slow_share\": %.4f}",
			in[k].calls, in[k].hit, share(in[k].hit, in[k].calls) / 100, in[k].slow_ns,
			in[k].slow, in[k].slow_hit, share(in[k].slow_hit, in[k].slow) / 100);
	}
	free(in);
	fprintf(out, "]");
	valuereport_json(out, p, i);
	fprintf(out, "}");
}

static void json_probes(FILE *out, const struct profile *p)
{
	fprintf(out, "  \"probes\": [");
	for (size_t i = 0; i < p->nprobes; i++) {
		if (p->probes[i].point >= 0) {
			fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
			json_write_string(out, p->probes[i].name);
			fprintf(out, ", \"binary\": ");
			json_write_string(out, p->probes[i].binary);
			json_line_probe(out, p, (uint32_t)i);
			continue;
		}
		struct probe_summary ps;
		summarize_probe(p, (uint32_t)i, &ps);
		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		json_write_string(out, p->probes[i].name);
		fprintf(out, ", \"binary\": ");
		json_write_string(out, p->probes[i].binary);
		fprintf(out,
			", \"kind\": \"function\", \"entered\": %" PRIu64 ", \"own_ns\": %" PRIu64
			", \"raw_ns\": %" PRIu64
			", \"calls\": %" PRIu64 ", \"open\": %zu, \"kernel_calls\": %" PRIu64
			", \"records\": %zu, \"all_calls\": %s, \"mean_ns\": %.0f, \"min_ns\": %" PRIu64 ", \"p50_ns\": %" PRIu64
			", \"p90_ns\": %" PRIu64 ", \"p95_ns\": %" PRIu64 ", \"p99_ns\": %" PRIu64
			", \"p999_ns\": %" PRIu64 ", \"max_ns\": %" PRIu64 ",\n     \"hist\": [",
			p->probes[i].entered, p->probes[i].own_ns, p->probes[i].raw_ns, ps.st.count,
			ps.open, ps.kernel_calls, ps.records, p->probes[i].all_calls ? "true" : "false",
			ps.st.mean_ns, ps.st.min_ns, ps.st.p50_ns,
			ps.st.p90_ns, ps.st.p95_ns, ps.st.p99_ns, ps.st.p999_ns, ps.st.max_ns);
		int first = 1;
		for (unsigned b = 0; b < LATENCY_HIST_BUCKETS; b++) {
			if (!ps.hist.buckets[b])
				continue;
			uint64_t lo = b ? (1ull << b) : 0, hi = b < 63 ? (2ull << b) - 1 : UINT64_MAX;
			fprintf(out, "%s{\"lo_ns\": %" PRIu64 ", \"hi_ns\": %" PRIu64
				     ", \"count\": %" PRIu64 "}",
				first ? "" : ", ", lo, hi, ps.hist.buckets[b]);
			first = 0;
		}
		fprintf(out, "],\n     \"auto\": {\"found\": %s, \"threshold_ns\": %" PRIu64
			     ", \"reason\": ",
			ps.modes.found ? "true" : "false", ps.modes.found ? ps.modes.threshold_ns : 0);
		json_write_string(out, ps.modes.reason);
		fprintf(out, ", \"modes\": [");
		for (size_t m = 0; m < ps.modes.nmodes; m++)
			fprintf(out, "%s{\"ns\": %" PRIu64 ", \"share\": %.4f}", m ? ", " : "",
				ps.modes.modes[m].ns, ps.modes.modes[m].share);
		fprintf(out, "]}");
		valuereport_json(out, p, (uint32_t)i);
		fprintf(out, "}");
	}
	fprintf(out, "\n  ],\n");
}

/* How user stacks were walked and, with tables, how many ended early and
 * why (the kernel's counts: every sample the sampler walked, those of
 * sonde's own machinery included). */
static void text_unwind(FILE *out, struct profile *p)
{
	const char *mode = profile_meta_get(p, "unwind");
	if (!mode)
		return; /* a recording from before --unwind */
	if (strcmp(mode, "fp") == 0) {
		fprintf(out, "  unwind:    fp (frame pointers)\n");
		return;
	}
	static const char *const ends[][2] = {
		{"stacks_end_no_table", "no table"},
		{"stacks_end_table_miss", "table miss"},
		{"stacks_end_read_fault", "read fault"},
		{"stacks_end_depth", "depth limit"},
		{"stacks_end_unsupported", "unsupported rule or bad frame"},
	};
	uint64_t complete = profile_meta_u64(p, "stacks_complete"), early = 0;
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		early += profile_meta_u64(p, ends[i][0]);
	fprintf(out, "  unwind:    %s (%s): %" PRIu64 " user stacks complete, %" PRIu64
		" ended early",
		strcmp(mode, "cfi") == 0 ? "cfi" : "auto",
		strcmp(mode, "cfi") == 0 ? "unwind tables" : "unwind tables, else frame pointers",
		complete, early);
	const char *sep = ": ";
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		uint64_t n = profile_meta_u64(p, ends[i][0]);
		if (!n)
			continue;
		fprintf(out, "%s%" PRIu64 " %s", sep, n, ends[i][1]);
		sep = ", ";
	}
	fprintf(out, "\n");
}

/* The event of the view's on-CPU samples: the one --event named, else the
 * profile's main event when it has several, else what the file says. */
static const char *view_event_name(const struct profile *p, const struct view *v)
{
	if (v->event_plus1)
		return p->events[v->event_plus1 - 1];
	size_t oncpu = 0;
	for (size_t i = 0; i < p->nevents; i++)
		oncpu += i != p->offcpu_event && i != p->waker_event;
	if (oncpu > 1 && p->main_event != UINT32_MAX)
		return p->events[p->main_event];
	return profile_meta_get(p, "event");
}

/* The profile's other on-CPU events, for the event line ("" when none). */
static void other_events(const struct profile *p, const char *shown, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	for (size_t i = 0; i < p->nevents && k < n; i++) {
		if (i == p->offcpu_event || i == p->waker_event || (shown && !strcmp(p->events[i], shown)))
			continue;
		int w = snprintf(buf + k, n - k, "%s%s", k ? ", " : "", p->events[i]);
		if (w < 0)
			break;
		k += (size_t)w;
	}
}

int report_write_text(FILE *out, struct profile *p, const struct report_options *o)
{
	struct summary s;
	summarize(p, &o->filter, o->lines, &s);
	int top = o->top > 0 ? o->top : 20;
	/* Names, paths and metadata come from the file: shown, never obeyed. */
	struct printable keep = {0};
	const char *event_name = view_event_name(p, &o->filter);
	const char *event = printable(&keep, event_name);
	char others[256];
	other_events(p, event_name, others, sizeof(others));
	uint64_t hz = profile_meta_u64(p, "frequency_hz"), period = profile_meta_u64(p, "period");
	fprintf(out, "Recording: %s\n", o->source ? printable(&keep, o->source) : "-");
	if (profile_meta_get(p, "command_line"))
		fprintf(out, "  command:   %s\n",
			printable(&keep, profile_meta_get(p, "command_line")));
	if (event) {
		fprintf(out, "  event:     %s", event);
		if (hz)
			fprintf(out, " at %" PRIu64 " Hz", hz);
		else if (period)
			fprintf(out, " every %" PRIu64 " events", period);
		if (others[0])
			fprintf(out, " (also in the file: %s; --event picks one)",
				printable(&keep, others));
		fprintf(out, "\n");
	}
	fprintf(out, "  duration:  %.2f s\n", profile_meta_double(p, "duration_s"));
	if (o->view)
		fprintf(out, "  view:      %s\n", printable(&keep, o->view));
	if (o->filter.time == VIEW_OFF_CPU)
		fprintf(out, "  counts:    nanoseconds off the CPU (--off-cpu: off-CPU intervals only)\n");
	else if (o->filter.time == VIEW_WAKERS)
		fprintf(out, "  counts:    nanoseconds of the waits each waker ended (--wakers)\n");
	else if (o->filter.time == VIEW_WALL)
		fprintf(out, "  counts:    nanoseconds of wall-clock time (--wall: an on-CPU sample "
			     "counts %" PRIu64 " ns, \"[running]\"; off-CPU intervals their time)\n",
			o->filter.sample_ns);
	fprintf(out, "  %s   %" PRIu64 "\n", view_counts_time(&o->filter) ? "time ns:" : "samples:",
		s.samples);
	uint64_t lost_samples = profile_meta_u64(p, "lost_samples");
	uint64_t lost_spans = profile_meta_u64(p, "lost_spans");
	fprintf(out, "  lost:      %" PRIu64 " samples, %" PRIu64 " call records%s\n", lost_samples,
		lost_spans,
		lost_samples || lost_spans ? " (ring buffer full: raise --buffer-mb or lower -F)" : "");
	char note[512];
	if (profile_input_note(p, note, sizeof(note)))
		fprintf(out, "  input:     %s\n", printable(&keep, note));
	if (s.broken)
		fprintf(out,
			"  broken:    %" PRIu64 " (%.2f%%) with a user stack cut where a return address "
			"was not code (frame \"[broken stack: ...]\")\n",
			s.broken, pct(s.broken, s.samples));
	text_unwind(out, p);
	const struct function_table *tables = o->lines ? line_tables : function_tables;
	for (size_t i = 0; i < sizeof(line_tables) / sizeof(*line_tables); i++) /* self, total */
		text_function_table(out, &tables[i], &s, top, &keep);
	if (s.nthreads) /* an empty profile has no array at all */
		qsort(s.threads, s.nthreads, sizeof(*s.threads), by_thread_samples);
	fprintf(out, "\nThreads:\n  %8s %7s %8s %8s  %s\n", "SAMPLES", "%", "PID", "TID", "COMM");
	for (size_t i = 0; i < s.nthreads && (int)i < top; i++) {
		const struct thread_info *t = &p->threads[s.threads[i].thread];
		fprintf(out, "  %8" PRIu64 " %6.2f%% %8u %8u  %s\n", s.threads[i].samples,
			pct(s.threads[i].samples, s.samples), t->pid, t->tid, printable(&keep, t->comm));
	}
	text_probes(out, p, &keep);
	text_lines(out, p, &keep);
	text_branches(out, p, &keep);
	if (o->by) { /* checked by the caller (valuereport_by_check) */
		char err[512];
		struct valuereport_by by = {.p = p, .v = &o->filter, .var = o->by};
		valuereport_by_text(out, &by, &keep, err, sizeof(err));
	}
	text_overhead(out, p);
	free_summary(&s);
	printable_free(&keep);
	return ferror(out) ? -1 : 0;
}

int report_write_json(FILE *out, struct profile *p, const struct report_options *o)
{
	struct summary s;
	summarize(p, &o->filter, o->lines, &s);
	fprintf(out, "{\n  \"source\": ");
	json_write_string(out, o->source ? o->source : "");
	fprintf(out, ",\n  \"event\": ");
	json_write_string(out, view_event_name(p, &o->filter));
	fprintf(out,
		",\n  \"frequency_hz\": %" PRIu64 ",\n  \"period\": %" PRIu64
		",\n  \"samples\": %" PRIu64 ",\n  \"lost\": %" PRIu64 ",\n  \"lost_spans\": %" PRIu64
		",\n  \"broken_stacks\": %" PRIu64 ",\n  \"duration_s\": %.6f,\n",
		profile_meta_u64(p, "frequency_hz"), profile_meta_u64(p, "period"), s.samples,
		profile_meta_u64(p, "lost_samples"), profile_meta_u64(p, "lost_spans"), s.broken,
		profile_meta_double(p, "duration_s"));
	if (profile_meta_get(p, "unwind")) {
		fprintf(out, "  \"unwind\": ");
		json_write_string(out, profile_meta_get(p, "unwind"));
		fprintf(out,
			",\n  \"stacks_complete\": %" PRIu64 ",\n  \"stacks_ended_early\": {\"no_table\": %" PRIu64
			", \"table_miss\": %" PRIu64 ", \"read_fault\": %" PRIu64 ", \"depth_limit\": %" PRIu64
			", \"unsupported\": %" PRIu64 "},\n",
			profile_meta_u64(p, "stacks_complete"), profile_meta_u64(p, "stacks_end_no_table"),
			profile_meta_u64(p, "stacks_end_table_miss"),
			profile_meta_u64(p, "stacks_end_read_fault"), profile_meta_u64(p, "stacks_end_depth"),
			profile_meta_u64(p, "stacks_end_unsupported"));
	}
	if (s.nfuncs) /* an empty profile has no array at all */
		qsort(s.funcs, s.nfuncs, sizeof(*s.funcs), by_total);
	fprintf(out, "  \"unit\": \"%s\",\n", view_counts_time(&o->filter) ? "ns" : "samples");
	if (o->view) {
		fprintf(out, "  \"view\": ");
		json_write_string(out, o->view);
		fprintf(out, ",\n");
	}
	json_probes(out, p);
	if (o->by) { /* checked by the caller (valuereport_by_check) */
		char err[512];
		valuereport_by_json(out, p, &o->filter, o->by, err, sizeof(err));
	}
	json_overhead(out, p);
	fprintf(out, "  \"%s\": [", o->lines ? "lines" : "functions");
	size_t shown = 0;
	for (size_t i = 0; i < s.nfuncs; i++) {
		if (!s.funcs[i].total)
			continue;
		fprintf(out, "%s\n    {\"name\": ", shown++ ? "," : "");
		json_write_string(out, s.funcs[i].name);
		fprintf(out, ", \"kind\": \"%s\", \"self\": %" PRIu64 ", \"total\": %" PRIu64 "}",
			frames_kind_name(s.funcs[i].kind), s.funcs[i].self, s.funcs[i].total);
	}
	fprintf(out, "\n  ],\n  \"threads\": [");
	if (s.nthreads) /* an empty profile has no array at all */
		qsort(s.threads, s.nthreads, sizeof(*s.threads), by_thread_samples);
	for (size_t i = 0; i < s.nthreads; i++) {
		const struct thread_info *t = &p->threads[s.threads[i].thread];
		fprintf(out, "%s\n    {\"pid\": %u, \"tid\": %u, \"comm\": ", i ? "," : "", t->pid,
			t->tid);
		json_write_string(out, t->comm);
		fprintf(out, ", \"samples\": %" PRIu64 "}", s.threads[i].samples);
	}
	fprintf(out, "\n  ]\n}\n");
	free_summary(&s);
	return ferror(out) ? -1 : 0;
}
