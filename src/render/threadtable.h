/* threadtable — the thread table as text (sonde threads): one line saying
 * when the pass was and how many threads are in each state, then a row a
 * thread: TID, COMM, STATE, time in it, SYSCALL, time in it, the traced
 * CALL in flight and its ELAPSED time, and last its STACK: the functions
 * of its last user stack, innermost first ("read < wait_read <
 * handle_request < ..."; kernel functions for a thread without user
 * frames), the stack it last left the CPU with, or a running thread's last
 * on-CPU sample's. A time that began before sonde did (a thread found
 * blocked at the start) is a lower bound, shown ">1.20s". Empty fields are
 * "-"; a system call /proc did not say at the start is "?". Rows are cut
 * at `width` characters (0: never). */
#ifndef SONDE_THREADTABLE_H
#define SONDE_THREADTABLE_H

#include <stdio.h>

#include "profile.h"
#include "threadstates.h"

void threadtable_print(FILE *f, const struct profile *p, const struct threadstate_row *rows,
		       size_t n, uint64_t time_ns, size_t width);

/* A thread's whole last stack, innermost frame first, one a line indented
 * by `indent` spaces (kernel frames marked " [k]"); nothing for none. */
void threadtable_print_stack(FILE *f, const struct profile *p, const struct thread_sample *t,
			     int indent);

#endif
