/* calibrate — measures, on the machine sonde runs on, the part of sonde's
 * own cost that its BPF programs cannot time themselves, so that durations
 * of traced calls can be corrected for it.
 *
 * BPF times its own handlers (bpf_ktime_get_ns at their start and end) and
 * charges that to the thread. What it cannot see is the kernel's work around
 * a handler: the breakpoint trap and single-step of a uprobe, the return
 * trampoline of a uretprobe, the timer interrupt of a sample. Three numbers
 * stand for it (struct engine_calibration):
 *
 * The first two depend on how the kernel handles the probed instruction
 * (emulated or single-stepped: engine_insn_class), so they are measured
 * per class, each on an empty function of sonde's own that starts with an
 * instruction of that class:
 *
 *  - call_unseen_ns: a traced call, as an enclosing call sees it, costs its
 *    full price (measured here by timing a loop of calls to an empty
 *    function of sonde's own, with and without sonde's span probes on it)
 *    minus what its two handlers timed themselves;
 *  - self_unseen_ns: the part of that which falls inside the call's own
 *    measured interval (the empty function's measured duration: it does
 *    nothing, so all of it is trap exit and return trampoline entry);
 *  - sample_unseen_ns: what of one sample's cost to the interrupted thread
 *    the sampler cannot measure in the run (a thread of sonde's spins
 *    reading CLOCK_MONOTONIC while a cpu-clock sampler runs on its CPU; the
 *    sampler notes when each sample was taken, how late after its timer's
 *    expiry it ran and for how long; the gap in the thread's readings at
 *    that moment is the sample's whole cost, and the median over ~300 of
 *    the gap minus the lateness and run time is kept: the interrupt's exit).
 *    The lateness and run time are measured for every sample of the run
 *    and charged as they were (the lateness up to late_cap_ns, 3 medians
 *    + 2 us: more is the CPU held from the interrupt, not the sample's
 *    doing). Medians, never a tail's percentile: on a busy machine the
 *    gaps' tail is preemption at the interrupt's exit (71 us at the 90th
 *    percentile with another process on every core), and taking it out of
 *    every sampled call made them look fast.
 *
 * Call figures are the least over 200 single calls: trap costs have a
 * stable floor and a tail of random delay; subtracting the floor never
 * makes a call look shorter than it was. Takes about a third of a second;
 * the calibration probes have ids of their own, are attached together (one
 * uprobe_multi link for their entries, one for their returns: removing
 * links waits for the kernel per link, and a short session's exit waits
 * for that) and removed in the background (engine_detach_calibration). */
#ifndef SONDE_CALIBRATE_H
#define SONDE_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "engine.h"

struct calibration_result {
	struct engine_calibration calib; /* what was set in the engine */
	struct engine_trap_costs classes[INSN_CLASSES]; /* per first instruction */
	double class_full_ns[INSN_CLASSES]; /* a traced call's whole cost to its caller */
	double class_handler_ns[INSN_CLASSES]; /* of which the handlers timed themselves */
	double call_full_ns;    /* the push class's (the usual prologue) */
	double call_handler_ns;
	double sample_full_ns;  /* a sample's whole cost to the interrupted thread */
	double sample_handler_ns; /* of which the sampler timed itself */
	double sample_late_ns;  /* how late after its timer the sampler ran (median) */
	double sample_exit_ns;  /* the rest of its interrupt, timed (median; 0: not timed) */
	unsigned long samples;  /* samples taken while calibrating */
};

/* Calibrates the traced-call costs and, with `samples`, the sample cost,
 * sets the result in the engine and returns 0; or returns -1 with one line
 * in err (then the engine keeps zeros: durations are corrected by what BPF
 * timed only). */
int calibrate_run(struct engine *e, bool samples, struct calibration_result *out, char *err,
		  size_t errlen);

#endif
