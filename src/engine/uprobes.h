/* uprobes — attaches and removes sonde's uprobes in two helper processes,
 * so that no signal to sonde, not even SIGKILL, can interrupt the kernel
 * half-way through either.
 *
 * Why: attaching a uprobe writes a breakpoint into every process that maps
 * the file (every process on the machine, for libc), removing one writes
 * the original instruction back, each through get_user_pages_remote. If
 * the thread doing it has a fatal signal pending (SIGKILL, or any signal
 * whose default action ends the process: then the kernel makes it a
 * SIGKILL of every thread), that write fails with -EINTR, the kernel gives
 * up and logs "uprobe: COMM:TID failed to unregister, leaking uprobe"
 * (kernel/events/uprobes.c, uprobe_unregister_nosync: also the clean-up of
 * a failed attach): breakpoints already written stay in those processes
 * until they exit (handled, so they run on, but a program run under
 * valgrind stops there with SIGTRAP). Measured before this module: 4 leaks
 * in 8 runs of sonde killed with kill -9 while attaching 8 libc probes.
 *
 * So sonde never opens a uprobe nor closes its last reference itself:
 * - uprobes_attach asks "sonde-attach" to open it (perf_event_open of the
 *   uprobe PMU with the BPF program linked, as libbpf does) and takes the
 *   link fd back; if sonde dies meanwhile, the helper finishes the attach,
 *   finds no one to give the fd to and closes it, which removes the uprobe;
 * - uprobes_remove hands fds to "sonde-detach", which closes them one by
 *   one in the background (~0.15 s a link: the kernel's time).
 * Both ignore SIGINT, SIGTERM, SIGHUP, SIGPIPE and SIGQUIT and run in their
 * own process group (a terminal's Ctrl-C, a kill of sonde's group do not
 * reach them); they exit when sonde closes their socket or dies, after
 * finishing what they were given. Fds sonde still holds when it dies are
 * closed by its exit, where no signal is pending any more (the kernel
 * drops signals to an exiting process), so those removals complete too.
 *
 * Not covered: a SIGKILL aimed at a helper itself during its work. */
#ifndef SONDE_UPROBES_H
#define SONDE_UPROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct uprobes;

/* Starts the helpers. Call it while sonde has one thread, before opening
 * what they must not keep (they close every fd they inherited at once).
 * Returns NULL with err when they cannot start: then pass NULL to the calls
 * below, which do the work in sonde itself (unsafe as above). */
struct uprobes *uprobes_start(char *err, size_t errlen);

/* Whether this kernel links one BPF program to many uprobes at once
 * (uprobe_multi links: Linux 6.6, used from 6.11, whose PID filter takes
 * the process, not one thread): a program meant for them must be loaded
 * with the expected attach type UPROBES_MULTI_ATTACH_TYPE and attached only
 * with multi set below. Asked of the kernel once; false (with why) on older
 * kernels, and when SONDE_UPROBE_MULTI=0 asks for the one-link-a-uprobe way
 * (to compare both, or to sidestep a kernel bug). */
bool uprobes_multi_available(char *why, size_t whylen);
#define UPROBES_MULTI_ATTACH_TYPE 48 /* BPF_TRACE_UPROBE_MULTI */

/* The most uprobes one uprobes_attach call puts on a file. */
#define UPROBES_MAX_BATCH 4096

/* What uprobes_attach attaches: the BPF program prog_fd as uprobes
 * (retprobe: return probes) at the n file_offsets of binary, for process
 * pid (-1: every process), the i-th with cookies[i] (NULL: all 0). multi:
 * all n in one uprobe_multi link (removed together, with one wait for the
 * kernel's grace period instead of one each: ~0.15 s a uprobe otherwise);
 * else n must be 1 and the uprobe is a perf event. */
struct uprobes_attach_opts {
	int prog_fd;
	const char *binary;
	const uint64_t *file_offsets;
	const uint64_t *cookies;
	/* A USDT probe's semaphore, as a file offset, for each (NULL: none):
	 * the kernel raises the 2-byte counter there while the uprobe is on,
	 * in every process it applies to (a reference counter offset). */
	const uint64_t *ref_ctr_offsets;
	size_t n;
	pid_t pid;
	bool retprobe;
	bool multi;
	/* link_uprobes asks it between two links (NULL: never); true, with
	 * why, ends the attach there (engine_probe_batch.stop). */
	bool (*stop)(void *arg, char *why, size_t whylen);
	void *stop_arg;
};

/* Attaches o's uprobes. Returns the link fd (the caller's; the uprobes
 * live until it is given back with uprobes_remove), or -1 with why
 * (strerror text). */
int uprobes_attach(struct uprobes *u, const struct uprobes_attach_opts *o, char *why,
		   size_t whylen);

/* Removes uprobes: takes the link fds (closes the caller's copies). */
void uprobes_remove(struct uprobes *u, const int *fds, size_t n);

/* Ends the helpers and waits until every uprobe given to uprobes_remove is
 * gone, then frees u. NULL: no-op. */
void uprobes_finish(struct uprobes *u);

#endif
