/* enginestate — struct engine, the state every part of the engine shares
 * (private to the engine layer: callers see it opaque through engine.h).
 *
 * Who keeps what: load.c loads the skeleton and owns the links of the
 * tracepoints it attaches at start; sampling.c the perf events; offcpu.c
 * the off-CPU and thread-state links; slots.c, spans.c and points.c the
 * per-slot tables and the uprobe attachments; drain.c the ring buffers'
 * consumers; threadslots.c reads the mapped `threads`. */
#ifndef SONDE_ENGINESTATE_H
#define SONDE_ENGINESTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "engine.h"
#include "recordids.h"
#include "sonde_abi.h"

struct sonde_bpf;
struct ring_buffer;
struct bpf_link;
struct uprobes;
struct unwind;

#define MAX_CPUS 1024

struct span_attachment {
	uint32_t probe; /* the caller's id */
	uint32_t slot;  /* the kernel's: attach cookie and map key */
	pid_t pid;      /* the process its uprobes are for, -1: every process */
	int enter, exit; /* link fds (uprobes.h); a uprobe_multi link's fd is
			  * in the attachment of every probe it serves */
};


/* One kernel slot (probe_cfg's key, the cookie's slot): the probe in it
 * and what its config says. */
struct slot {
	uint32_t probe;    /* the caller's id, NO_PROBE when not used */
	uint32_t gen;      /* attach generation */
	uint8_t cls;       /* enum engine_insn_class of its first instruction */
	uint8_t point_bit; /* a point probe's bit + 1; 0: a span probe */
	bool active;       /* as last written to its probe_cfg */
	bool fetch;        /* it has a capture program (probe_cfg.fetch) */
	bool pair;         /* a USDT span pair (probe_cfg.pair), */
	struct engine_pair_key pair_key; /* with this key */
	bool py;           /* a Python function's (probe_cfg.py), */
	struct sonde_py_match py_match; /* these calls */
	/* A capturing point probe's programs, one per address: fetch_progs
	 * keys SONDE_MAX_PROBES + point_progs_first .. + point_progs_n - 1. */
	uint16_t point_progs_first, point_progs_n;
	struct engine_span_policy policy;
};

struct engine {
	struct engine_options opt;
	struct sonde_bpf *skel;
	struct ring_buffer *rb;
	int perf_fds[MAX_CPUS];
	struct bpf_link *perf_links[MAX_CPUS];
	int ncpus;
	struct bpf_link *tp_link;
	/* sample_irq_exit on irq_vectors:local_timer_exit, sample_work_entry
	 * and _exit on irq_work_entry/exit: time the end of a timer sample's
	 * interrupt and of the wake-up it raised (NULL where the tracepoints
	 * are missing: the calibrated median charges them). */
	struct bpf_link *tail_links[3];
	struct bpf_link *task_links[3];
	/* offcpu_switch on sched_switch: while off-CPU intervals (--off-cpu)
	 * or thread states are on (it keeps each thread's last stacks for
	 * both; bss offcpu_intervals says whether it sends intervals). */
	struct bpf_link *offcpu_links[1];
	/* raw_syscalls sys_enter/sys_exit (bpf/threads.bpf.c): while off-CPU
	 * intervals or thread states are on (both read the system call). */
	struct bpf_link *sys_links[2];
	struct bpf_link *tstate_links[2]; /* sched_switch, sched_wakeup: with thread states */
	int tstate_fd;                    /* the pass's perf event, -1 */
	struct bpf_link *tstate_pass;
	struct bpf_link *wakers_link;     /* sched_waking: while --wakers */
	char offcpu_unavailable[512];     /* why off-CPU cannot be recorded ("" when it can) */
	uint64_t offcpu_cut_below;        /* intervals cut at the end, then below the minimum */
	struct span_attachment *spans;
	size_t nspans, spans_cap;
	bool multi; /* uprobes go on in uprobe_multi links (uprobes.h) */
	bool state_programs; /* the off-CPU and thread-state programs are loaded */
	bool thread_programs; /* of those, the thread states' (not in a fixed session without) */
	/* The map `threads`, mapped (struct sonde_thread_state says how a
	 * thread finds its slot). */
	struct sonde_thread_state *thread_slots;
	uint32_t nthread_slots; /* SONDE_THREAD_SLOTS, or 1 with no_spans */
	size_t thread_slots_len;
	struct slot slots[SONDE_MAX_PROBES]; /* by the kernel's probe key */
	bool point_prog_used[SONDE_POINT_PROGS];
	struct sonde_sampler_config sampler; /* the filters in force (slots) */
	struct engine_trap_costs trap_costs[INSN_CLASSES];
	uint64_t open_span_ids; /* ids given to in-flight calls that had none */
	bool spans_paused;      /* engine_pause_spans: no probe counts any more */
	/* Attaches and removes uprobes where no signal to sonde can interrupt
	 * the kernel half-way (uprobes.h); removals in the background: the
	 * kernel takes ~0.2 s per uprobe, which would stall the event loop. A
	 * slot is reused at once: its old uprobes, until the kernel has removed
	 * them, carry an older generation in their cookie, which the BPF
	 * programs ignore. */
	struct uprobes *up;
	uint32_t discarding; /* a probe whose records are dropped, or NO_PROBE */
	struct unwind *unwind; /* NULL with --unwind fp */
	struct ring_buffer *unwind_rb; /* its requests */
};

/* What engine_set_* say in a session whose gathering is fixed. */
extern const char fixed_refusal[];

#endif
