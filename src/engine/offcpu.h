/* offcpu — what happens off the CPU: off-CPU intervals and their wakers,
 * and thread states, with the scheduler and system-call tracepoints they
 * share (attached while either needs them). Implements engine_set_offcpu,
 * engine_offcpu_on, engine_set_wakers, engine_end_offcpu,
 * engine_cut_offcpu and engine_set_threads (engine.h). */
#ifndef SONDE_OFFCPU_H
#define SONDE_OFFCPU_H

#include <stddef.h>

struct engine;

/* Thread states on at e->opt.tstate_freq: their tracepoints, the threads
 * that exist seeded from /proc, the pass. Returns 0, or -1 with err and
 * nothing of it attached. */
int threads_attach(struct engine *e, char *err, size_t errlen);

#endif
