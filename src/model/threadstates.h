/* threadstates — the thread table: every thread of one pass of the
 * thread-state sampler (profile thread_samples, record --threads, sonde
 * threads), with how long each has been in its state, its system call and
 * its outermost traced call in flight, in the order a person reads them:
 * running, runnable, disk, uninterruptible, sleeping, stopped; within a
 * state, the longest in it first. */
#ifndef SONDE_THREADSTATES_H
#define SONDE_THREADSTATES_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

struct threadstate_row {
	const struct thread_sample *ts;
	uint64_t state_ns;   /* time in its state at the pass */
	uint64_t syscall_ns; /* time in its system call (ts->syscall >= 0) */
	uint64_t call_ns;    /* elapsed time of its call in flight (ts->span_id) */
};

/* The rows of the last pass in the profile (caller frees *rows), and that
 * pass's time in *time_ns. Returns how many (0: no pass yet). */
size_t threadstates_last_pass(const struct profile *p, struct threadstate_row **rows,
			      uint64_t *time_ns);

/* How many of the rows are in each state (counts[enum thread_run_state],
 * at least TSTATE_COUNT entries). */
void threadstates_count(const struct threadstate_row *rows, size_t n, size_t *counts);

#endif
