// SPDX-License-Identifier: GPL-2.0
/* sampler.bpf.c — the sampler: `sample_perf` runs on perf software events
 * (cpu-clock, page-faults, ...) opened per CPU by user space, `sample_tp` on
 * any tracepoint user space attaches it to. Both read the thread's spans in
 * flight (written by spans.bpf.c), apply the in-kernel filters, and emit a
 * `struct sonde_sample` with user and kernel stacks straight into the ring
 * buffer (no stack-id map, so no collisions). */
#include "common.bpf.h"

const volatile __u32 sample_event_index = 0; /* event index for sample_perf */
const volatile __u32 tp_event_index = 0;     /* event index for sample_tp */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct sonde_sampler_config);
} sampler_cfg SEC(".maps");

__u64 calib_samples = 0; /* samples of calib.calib_tid, for calibration */
/* When each of the first SONDE_CALIB_TIMES calibration samples was taken:
 * user space finds the gap in its own timeline that each one made. */
__u64 calib_times[SONDE_CALIB_TIMES] = {};

/* Applies the in-kernel sampling decisions to the thread's span stack:
 * "only inside probe P" and "only when P's current call already ran longer
 * than T". Returns 1 to take the sample. */
static __always_inline int sampler_wants(const struct sonde_thread_state *st, __u64 now)
{
	__u32 zero = 0;
	struct sonde_sampler_config *cfg = bpf_map_lookup_elem(&sampler_cfg, &zero);
	if (!cfg || (!cfg->only_in_probe && !cfg->only_slow_probe))
		return 1;
	if (!st)
		return 0;
	int in_ok = !cfg->only_in_probe, slow_ok = !cfg->only_slow_probe;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		const struct sonde_span_frame *f = &st->frames[i];
		if (f->probe + 1 == cfg->only_in_probe)
			in_ok = 1;
		if (f->probe + 1 == cfg->only_slow_probe && now - f->start_ns > cfg->only_slow_ns)
			slow_ok = 1;
	}
	return in_ok && slow_ok;
}

/* A sample interrupted the thread: mark the calls in flight as sampled, so
 * their return sends a record, and give them ids for the sample to name. */
static __always_inline void sample_mark(struct sonde_thread_state *st)
{
	if (!st)
		return;
	__u32 depth = st->depth < SONDE_SPAN_DEPTH ? st->depth : SONDE_SPAN_DEPTH;
	for (__u32 i = 0; i < SONDE_SPAN_DEPTH; i++) {
		if (i >= depth)
			break;
		st->frames[i].flags |= SONDE_FRAME_SAMPLED;
		span_id_of(&st->frames[i]);
	}
}

/* Charges a sample's cost (measured run time of the sampler plus the
 * calibrated interrupt entry/exit) to the thread. */
static __always_inline void sample_charge(struct sonde_thread_state *st, __u64 t0)
{
	if (st)
		st->own_ns += bpf_ktime_get_ns() - t0 + calib.sample_unseen_ns;
}

/* The return addresses uretprobes replaced with their trampoline on this
 * thread's stack, innermost first, from the kernel's own list; bit i of
 * *chained marks an instance that shares its stack slot with the next one.
 * Costs nothing per traced call: it is read only when sampling. */
static __always_inline __u32 hijacked_returns(__u64 *out, __u32 *chained)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct return_instance *ri = BPF_CORE_READ(task, utask, return_instances);
	__u32 n = 0, mask = 0;
	for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
		if (!ri)
			break;
		out[i] = BPF_CORE_READ(ri, orig_ret_vaddr);
		if (BPF_CORE_READ(ri, chained))
			mask |= 1u << i;
		n = i + 1;
		ri = BPF_CORE_READ(ri, next);
	}
	*chained = mask;
	return n;
}

static __always_inline int emit_sample(void *ctx, __u32 event)
{
	__u64 t0 = bpf_ktime_get_ns();
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32, tid = (__u32)pid_tgid;

	/* System-wide mode keeps the idle task (pid 0), as perf does: idle time
	 * is part of the picture and heatmaps need it to tell idle apart. */
	if (!is_target(tgid))
		return 0;
	struct sonde_thread_state *st = bpf_map_lookup_elem(&threads, &tid);
	/* The calibrating thread's samples take the whole path (stacks, ring
	 * buffer) so that their cost is a real sample's; user space discards
	 * them. */
	if (calib.calib_tid && tid == calib.calib_tid) {
		__u64 i = __sync_fetch_and_add(&calib_samples, 1);
		if (i < SONDE_CALIB_TIMES)
			calib_times[i & (SONDE_CALIB_TIMES - 1)] = t0;
	} else if (!sampler_wants(st, t0)) {
		sample_charge(st, t0);
		return 0;
	}
	sample_mark(st);

	struct sonde_sample *s = bpf_ringbuf_reserve(&events, sizeof(*s), 0);
	if (!s) {
		count(SONDE_CNT_LOST_SAMPLES);
		sample_charge(st, t0);
		return 0;
	}
	fill_hdr(&s->hdr, SONDE_REC_SAMPLE, pid_tgid, t0);
	s->event = event;
	s->_pad2 = 0;
	s->nreturns = hijacked_returns(s->returns, &s->returns_chained);
	s->nspans = 0;
	s->span_depth = st ? st->depth : 0;
	if (st) {
		for (__u32 i = 0; i < SONDE_SAMPLE_SPANS; i++) {
			if (i >= st->depth || i >= SONDE_SPAN_DEPTH)
				break;
			s->span_ids[i] = st->frames[i].span_id;
			s->span_probes[i] = st->frames[i].probe;
			s->nspans = i + 1;
		}
	}
	/* The frame-pointer walk skips the caller of a leaf that has not set up
	 * its frame (stackless leaves, prologues); user space finds that caller's
	 * return address among these words with the leaf's CFI. */
	struct pt_regs *uregs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	s->user_sp = uregs ? BPF_CORE_READ(uregs, sp) : 0;
	if (!s->user_sp || bpf_probe_read_user(s->user_stack_top, sizeof(s->user_stack_top),
					       (void *)s->user_sp))
		__builtin_memset(s->user_stack_top, 0, sizeof(s->user_stack_top));
	s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
	bpf_ringbuf_submit(s, span_submit_flags());
	sample_charge(st, t0);
	return 0;
}

SEC("perf_event")
int sample_perf(struct bpf_perf_event_data *ctx)
{
	return emit_sample(ctx, sample_event_index);
}

SEC("tracepoint")
int sample_tp(void *ctx)
{
	return emit_sample(ctx, tp_event_index);
}
