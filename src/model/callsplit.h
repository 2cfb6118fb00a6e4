/* callsplit — where one traced call's wall-clock time went: on the CPU
 * (its on-CPU samples, each worth the sampling interval) and off it (its
 * off-CPU intervals, record --off-cpu), by state frame ("[sleeping:
 * read]", view.h), each with the function under the traced one it waited
 * in (that of its largest interval). `sonde slow --off-cpu` prints it for
 * each slow call; the live session keeps it with each slow call it lists
 * (the TUI's probe panel, top -b). */
#ifndef SONDE_CALLSPLIT_H
#define SONDE_CALLSPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define CALL_SPLIT_STATES 8 /* states kept per call (the rest: in off_ns only) */

struct call_split {
	uint32_t on_samples; /* on-CPU samples inside the call */
	uint32_t nstates;
	uint64_t off_ns;     /* every off-CPU interval inside it (bounded: call_split_bound) */
	/* Set by call_split_bound: the on-CPU time, and whether it is the
	 * bound (the duration less off_ns) rather than the samples' estimate. */
	uint64_t on_ns;
	bool on_capped;
	struct {
		uint32_t state;  /* the interval's state frame */
		uint32_t callee; /* the frame under the traced function it waited in,
				  * 0: in the traced function itself */
		uint64_t ns, largest;
	} off[CALL_SPLIT_STATES];
};

/* The frame under the function named `traced` on a stack (root first),
 * 0 when none (the function itself ran or waited, or is not there). */
uint32_t call_split_callee(const struct profile *p, const uint32_t *stack, size_t depth,
			   const char *traced);

/* Adds a sample taken inside a call of the function named `traced` (an
 * on-CPU sample or an off-CPU interval; wakers are not the call's time
 * and are left out). */
void call_split_add(struct call_split *c, struct profile *p, const struct sample *s,
		    const char *traced);

/* Bounds the split by the call's duration, once every sample is added:
 * what every output shows. On the CPU is an estimate, on_samples x
 * sample_ns (one sampling interval each, 0 when sampling is not by
 * frequency): a call that waited nearly all its time may still hold a
 * sample or two, each worth a whole interval. The call was either on the
 * CPU or off it (waits under --min-block are not recorded), so duration_ns
 * less off_ns bounds its CPU time from above: on_ns is the estimate, or
 * that bound when the estimate is more (on_capped). off_ns is at most
 * duration_ns (durations have sonde's own cost taken out). So on_ns +
 * off_ns <= duration_ns. */
void call_split_bound(struct call_split *c, uint64_t sample_ns, uint64_t duration_ns);

/* The on-CPU part as text: "on-CPU ~1.00ms" (the samples' estimate), or
 * "on-CPU <=26.0us" (the bound). Returns buf. */
const char *call_split_on_text(const struct call_split *c, char *buf, size_t size);

/* The states' indices into c->off, largest first (ties: the first seen
 * first): c->nstates of them to order[]. What every output of the split
 * lists them by (the text below, the live status's JSON). */
void call_split_order(const struct call_split *c, uint32_t order[CALL_SPLIT_STATES]);

/* The off-CPU part as text (frame names from `frames`, the profile's): "off-CPU 6.94ms: [sleeping: read] 6.94ms in
 * wait_pipe, [runnable] 12us in (self)", the `show` largest states.
 * Returns buf. */
const char *call_split_off_text(const struct call_split *c, const struct frame_table *frames,
				int show, char *buf, size_t size);

#endif
