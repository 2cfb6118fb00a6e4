// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c — the sampler: `sample_perf` runs on perf software events
 * (cpu-clock, page-faults, ...) opened per CPU by user space, `sample_tp` on
 * any tracepoint user space attaches it to. Both read the thread's spans in
 * flight (written by spans.bpf.c), apply the in-kernel filters, and emit a
 * `struct sonde_sample` with user and kernel stacks into the ring buffer
 * (no stack-id map, so no collisions), only as long as the frames walked.
 * The stacks are taken as stacks.bpf.h says (the off-CPU programs share it). */
#include "stacks.bpf.h"

const volatile __u32 sample_event_index = 0; /* event index for sample_perf */
const volatile __u32 tp_event_index = 0;     /* event index for sample_tp */

/* The sample being built: too large for the BPF stack, and sent with only
 * the frames walked, so not reserved in the ring buffer at full size. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sample);
} sample_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sampler_config);
} sampler_cfg SEC(".maps");

__u64 calib_samples = 0; /* samples of calib.calib_tid, for calibration */
/* When each of the first SONDE_CALIB_TIMES calibration samples was taken,
 * how late after its timer, and how long the program ran: user space finds
 * the gap in its own timeline that each one made, and what of it the
 * program did not measure. */
__u64 calib_times[SONDE_CALIB_TIMES] = {};
__u64 calib_late[SONDE_CALIB_TIMES] = {};
__u64 calib_run[SONDE_CALIB_TIMES] = {};
__u64 calib_exit[SONDE_CALIB_TIMES] = {};
/* What samples of the session were charged (count, and their lateness, run
 * time and interrupt exit, measured): the cost per sample as measured in
 * the run. */
__u64 charged_samples = 0, charged_late_ns = 0, charged_run_ns = 0;
__u64 charged_exits = 0, charged_exit_ns = 0;

/* A timer sample whose interrupt has not ended yet, per CPU: the thread it
 * interrupted and when its program ended. sample_irq_exit charges the rest
 * of the interrupt to that thread; when the sample woke sonde's reader, the
 * irq_work interrupt that does it follows the timer's (a self-IPI, held
 * while the timer's interrupt runs), and sample_work_exit charges up to its
 * end. */
enum { TAIL_NONE, TAIL_IN_TIMER, TAIL_WAKEUP_DUE, TAIL_IN_WORK };

struct sample_tail {
	__u32 tid;
	__u32 calib_i; /* index in calib_exit, or SONDE_CALIB_TIMES */
	__u64 end_ns;  /* when the last part timed ended */
	__u64 exit_ns; /* what was timed of the interrupts so far */
	__u32 state;   /* TAIL_* */
	__u32 wakeup;  /* the sample's record forced a wake-up */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sample_tail);
} sample_tails SEC(".maps");

/* Longer than this after the program, the interrupt's end is not its own
 * (the tracepoint missed it: a later interrupt's exit). */
#define SAMPLE_TAIL_MAX_NS 1000000ull
/* The irq_work interrupt of a wake-up comes this soon after the timer's
 * ends (~10 us on a virtual machine), or it is not the sample's. */
#define SAMPLE_WORK_DUE_NS 100000ull

/* Applies the in-kernel sampling decisions to the thread's span stack:
 * "only inside probe P" and "only when P's current call already ran longer
 * than T". Returns 1 to take the sample. */
static __always_inline int sampler_wants(const struct sonde_thread_state *st, __u64 now)
{
	__u32 zero = 0;
	struct sonde_sampler_config *cfg = bpf_map_lookup_elem(&sampler_cfg, &zero);
	if (!cfg || (!cfg->only_in_probe && !cfg->only_slow_probe && !cfg->when_points))
		return 1;
	if (!st)
		return 0;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	if (cfg->only_in_probe || cfg->only_slow_probe) {
		int in_ok = !cfg->only_in_probe, slow_ok = !cfg->only_slow_probe;
		for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
			if (i >= depth)
				break;
			const struct sonde_span_frame *f = &st->frames[i];
			if (f->probe + 1 == cfg->only_in_probe)
				in_ok = 1;
			if (f->probe + 1 == cfg->only_slow_probe &&
			    now - f->start_ns > cfg->only_slow_ns)
				slow_ok = 1;
		}
		if (!in_ok || !slow_ok)
			return 0;
	}
	/* "Only in calls that hit line L" (--sample-when): a call in flight
	 * carries L's bit (its own hits and those of its returned callees). */
	__u64 when = cfg->when_points, seen = 0;
	if (!when)
		return 1;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		seen |= st->frames[i].points;
	}
	return (seen & when) != 0;
}

/* How late after its timer's expiry (the interrupt's entry) a timer sample's
 * program runs: the hrtimer of a cpu-clock or task-clock event is forwarded
 * only after the overflow handler returns, so its expiry is still the one
 * that fired. 0 for other events (no timer interrupt). */
static __always_inline __u64 timer_lateness(struct bpf_perf_event_data *ctx, __u64 now)
{
	struct bpf_perf_event_data_kern *k = (void *)ctx;
	struct perf_event *ev = NULL;
	if (bpf_probe_read_kernel(&ev, sizeof(ev), &k->event) || !ev)
		return 0;
	/* The kernel moves cpu-clock and task-clock to PMUs of their own and
	 * rewrites attr.type (6.x): the type asked for is in orig_type. */
	__u32 type = bpf_core_field_exists(ev->orig_type) ? BPF_CORE_READ(ev, orig_type)
							   : BPF_CORE_READ(ev, attr.type);
	__u64 config = BPF_CORE_READ(ev, attr.config);
	if (type != PERF_TYPE_SOFTWARE ||
	    (config != PERF_COUNT_SW_CPU_CLOCK && config != PERF_COUNT_SW_TASK_CLOCK))
		return 0;
	__s64 expires = BPF_CORE_READ(ev, hw.hrtimer.node.expires);
	if (expires <= 0 || (__u64)expires > now || now - (__u64)expires > 1000000000ull)
		return 0;
	return now - (__u64)expires;
}

/* Charges a sample's cost to the thread: the sampler's measured run time,
 * its measured lateness up to the cap, and the calibrated exit. A timer
 * sample (late > 0) leaves its tail pending for sample_irq_exit. */
static __always_inline void sample_charge(struct sonde_thread_state *st, __u32 tid, __u64 t0,
					  __u64 late, __u64 calib_i, __u64 flags)
{
	__u64 end = bpf_ktime_get_ns();
	__u64 run = end - t0;
	__u64 charged_late = late < calib.late_cap_ns ? late : calib.late_cap_ns;
	if (st)
		st->own_ns += run + charged_late + calib.sample_unseen_ns;
	__sync_fetch_and_add(&charged_samples, 1);
	__sync_fetch_and_add(&charged_late_ns, charged_late);
	__sync_fetch_and_add(&charged_run_ns, run);
	__u32 zero = 0;
	struct sample_tail *tail = bpf_map_lookup_elem(&sample_tails, &zero);
	if (tail && late) {
		if (calib_i < SONDE_CALIB_TIMES)
			calib_exit[calib_i & (SONDE_CALIB_TIMES - 1)] = 0;
		tail->tid = tid;
		tail->calib_i = (__u32)calib_i;
		tail->end_ns = end;
		tail->exit_ns = 0;
		tail->state = TAIL_IN_TIMER;
		tail->wakeup = (flags & BPF_RB_FORCE_WAKEUP) != 0;
	}
}

static __always_inline int emit_sample(void *ctx, __u32 event, __u64 t0, __u64 late)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;

	/* System-wide mode keeps the idle task (pid 0), as perf does: idle time
	 * is part of the picture and heatmaps need it to tell idle apart. */
	if (!is_target(tgid))
		return 0;
	struct sonde_thread_state *st = thread_state_of_walker(tid);
	/* The calibrating thread's samples take the whole path (stacks, ring
	 * buffer) so that their cost is a real sample's; user space discards
	 * them. */
	__u64 calib_i = SONDE_CALIB_TIMES;
	if (calib.calib_tid && tid == calib.calib_tid) {
		__u64 i = __sync_fetch_and_add(&calib_samples, 1);
		if (i < SONDE_CALIB_TIMES) {
			calib_i = i;
			calib_times[i & (SONDE_CALIB_TIMES - 1)] = t0;
			calib_late[i & (SONDE_CALIB_TIMES - 1)] = late;
		}
	} else if (!sampler_wants(st, t0)) {
		sample_charge(st, tid, t0, late, calib_i, 0);
		return 0;
	}
	sample_mark(st);

	__u32 zero = 0;
	struct sonde_sample *s = bpf_map_lookup_elem(&sample_scratch, &zero);
	if (!s)
		return 0;
	fill_hdr(&s->hdr, SONDE_REC_SAMPLE, pid_tgid, t0);
	s->event = event;
	s->off_ns = 0;
	s->off_state = SONDE_OFF_NONE;
	s->syscall = -1;
	stacks_fill_spans(s, st);
	stacks_fill(ctx, s, tgid);
	__u64 size = stacks_record_bytes(s);
	__u64 flags = stacks_submit_flags(s, t0);
	if (bpf_ringbuf_output(&events, s, size, flags))
		count(SONDE_CNT_LOST_SAMPLES);
	if (calib_i < SONDE_CALIB_TIMES)
		calib_run[calib_i & (SONDE_CALIB_TIMES - 1)] = bpf_ktime_get_ns() - t0;
	sample_charge(st, tid, t0, late, calib_i, flags);
	return 0;
}

SEC("perf_event")
int sample_perf(struct bpf_perf_event_data *ctx)
{
	__u64 t0 = bpf_ktime_get_ns();
	return emit_sample(ctx, sample_event_index, t0, timer_lateness(ctx, t0));
}

/* Charges the time since the tail's last mark, when the interrupted thread
 * is still current and it is not too long after; 1 when it did. */
static __always_inline int sample_tail_charge(struct sample_tail *tail, __u64 max_gap)
{
	__u64 now = bpf_ktime_get_ns(), end = tail->end_ns;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	if (tid != tail->tid || now < end || now - end > max_gap) {
		tail->state = TAIL_NONE;
		return 0;
	}
	tail->exit_ns += now - end;
	tail->end_ns = now;
	return 1;
}

/* A part of the sample's interrupts ended (the timer's, the wake-up's):
 * charged up to the cap. */
static __always_inline void sample_tail_charge_part(struct sample_tail *tail)
{
	__u64 exit = tail->exit_ns;
	__u32 i = tail->calib_i;
	tail->exit_ns = 0;
	if (i < SONDE_CALIB_TIMES)
		calib_exit[i & (SONDE_CALIB_TIMES - 1)] += exit;
	if (!calib.exit_cap_ns)
		return;
	__u64 charged = exit < calib.exit_cap_ns ? exit : calib.exit_cap_ns;
	struct sonde_thread_state *st = thread_state_of(tail->tid);
	if (st)
		st->own_ns += charged;
	__sync_fetch_and_add(&charged_exit_ns, charged);
}

static __always_inline struct sample_tail *sample_tail_in(__u32 state)
{
	__u32 zero = 0;
	struct sample_tail *tail = bpf_map_lookup_elem(&sample_tails, &zero);
	return tail && tail->state == state ? tail : NULL;
}

/* The end of a timer sample's interrupt (every local timer interrupt ends
 * here, on every CPU: one per-CPU lookup when no sample is pending). */
SEC("raw_tp/local_timer_exit")
int sample_irq_exit(void *ctx)
{
	struct sample_tail *tail = sample_tail_in(TAIL_IN_TIMER);
	if (!tail || !sample_tail_charge(tail, SAMPLE_TAIL_MAX_NS))
		return 0;
	sample_tail_charge_part(tail);
	if (calib.exit_cap_ns)
		__sync_fetch_and_add(&charged_exits, 1);
	tail->state = tail->wakeup ? TAIL_WAKEUP_DUE : TAIL_NONE;
	return 0;
}

/* The wake-up's irq_work begins: the gap since the timer's end is the
 * sample's too (the thread ran nothing in it but the way out and in). */
SEC("raw_tp/irq_work_entry")
int sample_work_entry(void *ctx)
{
	struct sample_tail *tail = sample_tail_in(TAIL_WAKEUP_DUE);
	if (tail && sample_tail_charge(tail, SAMPLE_WORK_DUE_NS))
		tail->state = TAIL_IN_WORK;
	return 0;
}

SEC("raw_tp/irq_work_exit")
int sample_work_exit(void *ctx)
{
	struct sample_tail *tail = sample_tail_in(TAIL_IN_WORK);
	if (tail && sample_tail_charge(tail, SAMPLE_TAIL_MAX_NS)) {
		sample_tail_charge_part(tail);
		tail->state = TAIL_NONE;
	}
	return 0;
}

SEC("tracepoint")
int sample_tp(void *ctx)
{
	return emit_sample(ctx, tp_event_index, bpf_ktime_get_ns(), 0);
}
