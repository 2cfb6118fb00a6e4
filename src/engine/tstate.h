/* tstate — the threads that exist when thread-state sampling starts, read
 * from /proc into the kernel's thread-state map (struct sonde_thread_now).
 *
 * The tracepoints learn a thread's state when it next changes; a thread
 * blocked since before sonde started (a read on a quiet pipe) would be
 * missing until it wakes. So each existing thread is added with what
 * /proc says now: its state (/proc/PID/task/TID/stat: R running, S and I
 * sleeping, D uninterruptible, T and t stopped) and its system call
 * (/proc/PID/task/TID/syscall), since now, flagged SONDE_TSTATE_SEEDED
 * (and SONDE_TSTATE_SYSCALL_SEEDED): the times are lower bounds. An entry
 * the tracepoints wrote already is left alone. */
#ifndef SONDE_TSTATE_H
#define SONDE_TSTATE_H

#include <stdint.h>
#include <sys/types.h>

/* The kernel's thread states: the map thread_now, the pass's slots
 * (tstate_tids) and the count of slots taken (the global tstate_next,
 * in the object's mapped .bss: taken atomically, as the BPF side does). */
struct tstate_maps {
	int now_fd, tids_fd;
	uint64_t *next;
	uint32_t nslots;
};

/* Seeds every thread of process pid. Returns the threads added. */
int tstate_seed_process(const struct tstate_maps *m, pid_t pid);

/* Seeds every thread of every process. Returns the threads added. */
int tstate_seed_all(const struct tstate_maps *m);

#endif
