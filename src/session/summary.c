#define _GNU_SOURCE
#include "summary.h"

#include <sys/utsname.h>
#include <sys/wait.h>

#include "drops.h"
#include "perfmap.h"
#include "printable.h"
#include "pysyms.h"
#include "sessionstate.h"
#include "trace.h"
#include "unwind.h"

static void set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	profile_meta_set(p, key, buf);
}

static void set_meta_double(struct profile *p, const char *key, double v)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%.6f", v);
	profile_meta_set(p, key, buf);
}

void summary_add_metadata(struct session *s, double end_mono)
{
	struct profile *p = s->prof;
	const struct session_options *o = s->o;
	char buf[4096];
	size_t off = 0;
	buf[0] = 0;
	for (int i = 0; i < s->argc && off < sizeof(buf) - 1; i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", s->argv[i]);
	profile_meta_set(p, "command_line", buf);
	profile_meta_set(p, "event", o->no_sampling ? "none" : o->event);
	set_meta_u64(p, "frequency_hz", o->no_sampling || o->period ? 0 : o->freq);
	set_meta_u64(p, "period", o->period);
	struct utsname u;
	if (uname(&u) == 0) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		profile_meta_set(p, "kernel", buf);
		profile_meta_set(p, "hostname", u.nodename);
	}
	set_meta_u64(p, "start_ns", (uint64_t)(s->start_mono * 1e9));
	set_meta_u64(p, "end_ns", (uint64_t)(end_mono * 1e9));
	set_meta_double(p, "duration_s", end_mono - s->start_mono);
	set_meta_double(p, "setup_s", s->start_mono - s->setup_mono);
	set_meta_double(p, "start_unix_s", s->start_wall);
	struct engine_stats es;
	struct collector_stats cs;
	engine_get_stats(s->eng, &es);
	collector_get_stats(s->col, &cs);
	for (int k = 0; k < ENGINE_COUNTERS; k++)
		set_meta_u64(p, drops_key(k), es.count[k]);
	profile_meta_set(p, "unwind", session_unwind_name(o->unwind));
	/* Earlier recordings timed every call of a probe with a predicate. */
	set_meta_u64(p, "predicates_select_calls", 1);
	set_meta_u64(p, "off_cpu", engine_offcpu_on(s->eng) || o->off_cpu);
	if (engine_offcpu_on(s->eng) || o->off_cpu) {
		set_meta_u64(p, "min_block_ns", o->min_block_ns);
		set_meta_u64(p, "offcpu_cut_at_end", s->offcpu_cut);
	}
	set_meta_u64(p, "records_after_end", cs.after_end);
	set_meta_u64(p, "wakers", o->wakers);
	if (o->threads) {
		set_meta_u64(p, "thread_states_hz", o->threads_hz ? o->threads_hz : o->freq);
		set_meta_u64(p, "thread_state_passes", cs.thread_passes);
		set_meta_u64(p, "thread_state_samples", cs.thread_samples);
		set_meta_u64(p, "thread_state_pass_ns", cs.thread_pass_ns);
		set_meta_u64(p, "thread_stacks", cs.thread_stacks);
		set_meta_u64(p, "thread_stacks_missing", cs.thread_stacks_missing);
	}
	struct unwind_stats us;
	engine_unwind_stats(s->eng, &us);
	set_meta_u64(p, "unwind_tables_loaded", us.tables_loaded);
	set_meta_u64(p, "unwind_over_budget", us.over_budget);
	set_meta_u64(p, "unwind_miss_reloads", us.miss_reloads);
	set_meta_u64(p, "sample_bytes", cs.sample_bytes);
	set_meta_u64(p, "stack_errors", cs.stack_errors);
	set_meta_u64(p, "broken_stacks", cs.broken_stacks);
	set_meta_u64(p, "broken_stack_frames", cs.broken_stack_frames);
	struct symbols_stats ss;
	symbols_get_stats(s->syms, &ss);
	set_meta_u64(p, "jit_frames", ss.jit_frames);
	set_meta_u64(p, "jit_map_lines", ss.jit_map_lines);
	set_meta_u64(p, "jit_map_bad_lines", ss.jit_map_bad_lines);
	set_meta_u64(p, "jit_map_skipped_bytes", ss.jit_map_skipped_bytes);
	set_meta_u64(p, "pending_dropped", s->join ? join_dropped(s->join) : 0);
	set_meta_u64(p, "pending_forgotten", s->join_forgotten);
	set_meta_u64(p, "followed_processes", s->follows);
	set_meta_u64(p, "follow_failures", s->follow_failures);
	set_meta_u64(p, "follow_delay_max_ns", s->follow_delay_max_ns);
	set_meta_u64(p, "follow_delay_mean_ns", s->follows ? s->follow_delay_sum_ns / s->follows : 0);
	set_meta_u64(p, "exact_children", o->exact_children);
	/* sonde's own cost: what calibration found BPF cannot time, and the
	 * samples that landed in sonde's own machinery. */
	set_meta_u64(p, "calib_call_unseen_ns", s->calib.classes[INSN_PUSH].call_unseen_ns);
	set_meta_u64(p, "calib_self_unseen_ns", s->calib.classes[INSN_PUSH].self_unseen_ns);
	set_meta_u64(p, "calib_sstep_self_unseen_ns", s->calib.classes[INSN_SSTEP].self_unseen_ns);
	set_meta_double(p, "calib_sstep_full_ns", s->calib.class_full_ns[INSN_SSTEP]);
	set_meta_u64(p, "calib_sample_unseen_ns", s->calib.calib.sample_unseen_ns);
	set_meta_u64(p, "calib_sample_late_cap_ns", s->calib.calib.late_cap_ns);
	set_meta_double(p, "calib_sample_late_ns", s->calib.sample_late_ns);
	set_meta_double(p, "calib_sample_exit_ns", s->calib.sample_exit_ns);
	set_meta_u64(p, "calib_sample_exit_cap_ns", s->calib.calib.exit_cap_ns);
	/* What the run's samples were charged, measured as they were taken
	 * (beside the calibration's figures: bench/README.md compares them). */
	struct engine_sample_charges ch;
	engine_sample_charges(s->eng, &ch);
	set_meta_u64(p, "sample_charges", ch.samples);
	set_meta_double(p, "sample_charged_late_ns", ch.samples ? (double)ch.late_ns / (double)ch.samples : 0);
	set_meta_double(p, "sample_charged_run_ns", ch.samples ? (double)ch.run_ns / (double)ch.samples : 0);
	set_meta_u64(p, "sample_exits_charged", ch.exits);
	set_meta_double(p, "sample_charged_exit_ns", ch.exits ? (double)ch.exit_ns / (double)ch.exits : 0);
	set_meta_double(p, "calib_call_full_ns", s->calib.call_full_ns);
	set_meta_double(p, "calib_sample_full_ns", s->calib.sample_full_ns);
	set_meta_double(p, "calib_ms", s->calib_ms);
	set_meta_u64(p, "overhead_samples", cs.overhead_samples);
	profile_meta_set(p, "target",
			 o->system_wide ? "system-wide" : o->cmd ? "command" : "pids");
	if (o->sample_in)
		profile_meta_set(p, "sample_in", o->sample_in);
	if (o->sample_slow)
		profile_meta_set(p, "sample_slow", o->sample_slow);
}

struct recording_image *session_recording(struct session *s, char *err, size_t errlen)
{
	struct profile *p = s->prof;
	if (s->replay_path) /* as it was read, metadata included */
		return recording_build(p, err, errlen);
	if (!s->ended) /* what already reached the ring buffer belongs in it */
		while (engine_poll(s->eng, 0) > 0)
			;
	/* The recording holds every call counted so far: the kernel's live
	 * histograms plus what untraced probes gathered before. */
	if (!s->ended)
		for (size_t i = 0; i < p->nprobes; i++)
			trace_refresh_probe(s, (uint32_t)i);
	summary_add_metadata(s, s->ended ? s->end_mono : session_now_s(CLOCK_MONOTONIC));
	/* Say in the file how many of the calls the kernel counted have no
	 * record in it: those that did not need one (no sample, not slow),
	 * and those a live session no longer holds. */
	uint64_t counted = 0, kept_calls = 0;
	for (size_t i = 0; i < p->nprobes; i++)
		for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
			counted += p->probes[i].hist[b];
	for (size_t i = 0; i < p->nspans; i++)
		kept_calls += !p->spans[i].open;
	set_meta_u64(p, "calls_not_kept", counted > kept_calls ? counted - kept_calls : 0);
	return recording_build(p, err, errlen);
}

void session_print_summary(struct session *s, const char *what, FILE *out)
{
	if (s->replay_path) {
		char shown[1024];
		(void)what; /* nothing was gathered: it was read */
		fprintf(out, "sonde: served %zu samples, %zu traced calls with a record (from %s)\n",
			s->prof->nsamples, s->prof->nspans,
			printable_copy(shown, sizeof(shown), s->replay_path));
		return;
	}
	struct engine_stats es;
	struct collector_stats cs;
	engine_get_stats(s->eng, &es);
	collector_get_stats(s->col, &cs);
	char shown[1024]; /* `what` names the output file */
	fprintf(out, "sonde: %s %llu samples", printable_copy(shown, sizeof(shown), what),
		(unsigned long long)(cs.samples - cs.offcpu_intervals - cs.wakers));
	if (s->prof->nprobes) {
		uint64_t calls = 0;
		for (size_t i = 0; i < s->prof->nprobes; i++)
			calls += profile_probe_calls(s->prof, (uint32_t)i);
		fprintf(out, ", %llu traced calls (%llu still running at the end; %llu kept with a record)",
			(unsigned long long)calls, (unsigned long long)cs.open_spans,
			(unsigned long long)cs.spans);
	}
	/* -d counts from when sampling is on: say what came before it. */
	fprintf(out, " in %.2f s (after %.2f s of set-up)", s->end_mono - s->start_mono,
		s->start_mono - s->setup_mono);
	char list[512];
	if (drops_sum(&es, DROPS_LOST, false))
		fprintf(out, "; lost %s (ring buffer full: try --buffer-mb or a lower -F)",
			drops_list(&es, DROPS_LOST, list, sizeof(list)));
	if (s->o->all_calls && s->prof->nprobes) {
		/* Every completed call sends a record: records received plus
		 * records lost must be the kernel's count. Say so if not. */
		uint64_t completed = 0, received = 0;
		for (size_t i = 0; i < s->prof->nprobes; i++)
			for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
				completed += s->prof->probes[i].hist[b];
		for (size_t i = 0; i < s->prof->nspans; i++)
			received += !s->prof->spans[i].open;
		uint64_t lost = es.count[ENGINE_LOST_SPANS];
		if (completed != received + lost)
			fprintf(out, "; the kernel counted %llu completed calls but %llu records "
					"arrived and %llu were lost",
				(unsigned long long)completed, (unsigned long long)received,
				(unsigned long long)lost);
	}
	if (drops_sum(&es, DROPS_CHILDREN, false))
		fprintf(out, "; %s", drops_list(&es, DROPS_CHILDREN, list, sizeof(list)));
	if (s->follows)
		fprintf(out,
			"; %llu new process%s got probes %.2f ms after starting (mean; at most %.2f "
			"ms%s): calls before then not counted (--exact-children counts them)",
			(unsigned long long)s->follows, s->follows == 1 ? "" : "es",
			(double)s->follow_delay_sum_ns / (double)s->follows / 1e6,
			(double)s->follow_delay_max_ns / 1e6,
			s->follow_failures ? ", some had exited" : "");
	if (s->o->off_cpu || drops_sum(&es, DROPS_OFFCPU, false)) {
		char wakers[64] = "";
		if (s->o->wakers)
			snprintf(wakers, sizeof(wakers), " (%llu with their waker)",
				 (unsigned long long)cs.wakers);
		fprintf(out,
			"; off-CPU intervals: %llu kept%s, %llu of them still going at the end "
			"(cut there), %s",
			(unsigned long long)cs.offcpu_intervals, wakers,
			(unsigned long long)s->offcpu_cut,
			drops_list(&es, DROPS_OFFCPU, list, sizeof(list)));
	}
	if (s->o->threads)
		fprintf(out, "; thread states: %llu in %llu passes (%.1f us a pass), %llu stacks%s",
			(unsigned long long)cs.thread_samples, (unsigned long long)cs.thread_passes,
			cs.thread_passes ? (double)cs.thread_pass_ns / (double)cs.thread_passes / 1e3 : 0.0,
			(unsigned long long)cs.thread_stacks,
			cs.thread_stacks_missing ? " (some rows' stacks lost: see lost thread states)"
						 : "");
	if (s->py_processes || drops_sum(&es, DROPS_PYTHON, false)) {
		struct pysyms_stats ps;
		pysyms_get_stats(symbols_python(s->syms), &ps);
		fprintf(out, "; Python: %llu process%s, %llu frames; stacks %s",
			(unsigned long long)s->py_processes, s->py_processes == 1 ? "" : "es",
			(unsigned long long)cs.python_frames,
			drops_list(&es, DROPS_PYTHON, list, sizeof(list)));
		if (ps.unreadable)
			fprintf(out, "; %llu Python frames whose code could not be read",
				(unsigned long long)ps.unreadable);
	}
	uint64_t join_drops = s->join ? join_dropped(s->join) : 0;
	if (drops_sum(&es, DROPS_UNTIMED, false) || join_drops)
		fprintf(out, "; untimed: %s; %llu samples not joined live",
			drops_list(&es, DROPS_UNTIMED, list, sizeof(list)),
			(unsigned long long)join_drops);
	if (s->join_forgotten)
		fprintf(out, "; %llu calls still without a record after 10 min gave up their samples",
			(unsigned long long)s->join_forgotten);
	if (drops_sum(&es, DROPS_VALUES, false))
		fprintf(out, "; %s (shown as read errors)",
			drops_list(&es, DROPS_VALUES, list, sizeof(list)));
	struct symbols_stats ss;
	symbols_get_stats(s->syms, &ss);
	if (ss.jit_map_bad_lines)
		fprintf(out, "; perf maps: %llu bad lines skipped (not START SIZE NAME)",
			(unsigned long long)ss.jit_map_bad_lines);
	if (ss.jit_map_skipped_bytes)
		fprintf(out, "; perf maps: %llu bytes past the first %llu MiB not read",
			(unsigned long long)ss.jit_map_skipped_bytes,
			(unsigned long long)(PERFMAP_MAX_BYTES >> 20));
	fputc('\n', out);
	if (s->o->cmd && target_cmd_exited(&s->cmd) && WIFEXITED(s->cmd.wait_status) &&
	    WEXITSTATUS(s->cmd.wait_status) != 0)
		fprintf(out, "sonde: note: the command exited with status %d\n",
			WEXITSTATUS(s->cmd.wait_status));
}
