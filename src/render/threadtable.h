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

/* The same rows as one JSON object (the `threads` command's data, sonde
 * serve's /api/threads):
 *   {"time_ns":N|null,"ago_ns":N|null,
 *    "counts":{"running":N,"runnable":N,"sleeping":N,"uninterruptible":N,
 *              "disk":N,"stopped":N},
 *    "threads":[{"tid":N,"pid":N,"comm":S,"state":S,"state_ns":N,
 *                "state_lower_bound":B,"syscall":S|null,"syscall_ns":N|null,
 *                "syscall_lower_bound":B,"call":S|null,"call_ns":N|null,
 *                "span_id":N|null,"stack":S,"frames":[[NAME,KIND],...],
 *                "stack_ns":N|null}, ...]}
 * in the table's order. time_ns: the pass's (null: no pass yet); ago_ns:
 * how long before now_ns it was taken; syscall as the SYSCALL column ("?":
 * not known, null: none); stack: the STACK column's text; frames: the
 * whole stack, innermost first, with frames_kind_name's kinds; stack_ns:
 * when it was taken. */
void threadtable_write_json(FILE *f, const struct profile *p, const struct threadstate_row *rows,
			    size_t n, uint64_t time_ns, uint64_t now_ns);

#endif
