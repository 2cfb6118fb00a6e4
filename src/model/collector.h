/* collector — turns the engine's ring-buffer records into profile samples.
 *
 * Symbolizes each sample as it arrives, while its process is most likely
 * still alive (stacks are symbolized immediately, so processes that exit
 * later lose nothing), builds the root-first stack (user frames, each address
 * expanded into its inline chain, then kernel frames on top) and interns it
 * into the profile. Follows exec so that maps are re-read. */
#ifndef SONDE_COLLECTOR_H
#define SONDE_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "symbols.h"

struct collector_stats {
	uint64_t samples;       /* samples added to the profile (off-CPU intervals too) */
	uint64_t offcpu_intervals; /* of which off-CPU intervals */
	uint64_t wakers;           /* and wakers of them */
	uint64_t sample_bytes;  /* ring-buffer bytes of the sample records (their 8-byte
				 * ring headers included) */
	uint64_t empty_stacks;  /* samples with neither a user nor a kernel stack */
	uint64_t stack_errors;  /* stack captures the kernel reported as failed */
	uint64_t bad_records;   /* records of unexpected size or kind (never expected) */
	uint64_t execs, exits, forks;
	uint64_t spans;       /* completed traced calls received */
	uint64_t open_spans;  /* traced calls still running at the end */
	uint64_t sample_spans_truncated; /* samples in more nested calls than they carry */
	uint64_t broken_stacks;       /* user stacks cut where a return address was not code */
	uint64_t broken_stack_frames; /* the addresses cut off them */
	uint64_t overhead_samples; /* on-CPU samples that interrupted sonde's own probe machinery */
	uint64_t after_end;        /* records taken after the end (collector_set_end): left out */
	uint64_t returns_restored; /* return addresses a uretprobe had replaced, put back */
	uint64_t python_frames;    /* Python frames the samples carried */
	/* Thread states (record --threads): threads' records received, passes,
	 * and the passes' own run time summed (ns, each pass timed itself). */
	uint64_t thread_samples, thread_passes, thread_pass_ns;
	/* Threads' stacks from when they left the CPU, sent by passes (each
	 * once); rows whose stacks' record was lost (the row has none). */
	uint64_t thread_stacks, thread_stacks_missing;
};

struct collector;

/* The collector adds to `p` and resolves with `syms`; it owns neither. */
struct collector *collector_new(struct profile *p, struct symbolizer *syms);
void collector_free(struct collector *c);

/* Whether to keep each thread's last on-CPU sample's stack, which
 * thread-state rows name when it is newer than the stack the thread last
 * left the CPU with: only while thread states are on (off by default: no
 * work per sample for it). */
void collector_keep_last_stacks(struct collector *c, bool on);

/* What one record added to the profile: its samples and calls (spans)
 * from these indexes on, so that whoever joins them (the session's
 * span-sample join) needs no look into the profile to find them. */
struct collector_added {
	size_t first_sample, nsamples;
	size_t first_span, nspans;
};

/* Handles one ring-buffer record; `added` (may be NULL) says what it
 * added. A record it refuses is counted (bad_records) and adds nothing. */
void collector_handle(struct collector *c, const void *data, size_t size,
		      struct collector_added *added);

/* Whether a record is the kernel's note of a fork (a new task: its tid
 * in *child, the record's CLOCK_MONOTONIC time in *time_ns). */
bool collector_fork_of(const void *data, size_t size, uint32_t *child, uint64_t *time_ns);

/* Whether a record holds a stack of a process's (a sample, an off-CPU
 * interval, a thread's stacks at a thread-state pass): its pid in *pid. */
bool collector_stack_of(const void *data, size_t size, uint32_t *pid);

/* Whether a record is the kernel's note of an exec (the process's program
 * replaced: its pid in *pid, the record's CLOCK_MONOTONIC time in
 * *time_ns). */
bool collector_exec_of(const void *data, size_t size, uint32_t *pid, uint64_t *time_ns);

/* Maps a sample's event index (as the BPF side numbers them) to the
 * profile's event index, and sets its weight. */
void collector_set_event(struct collector *c, uint32_t bpf_index, const char *name,
			 uint64_t weight);

/* The recording ended at end_ns (CLOCK_MONOTONIC ns): samples and
 * off-CPU intervals taken from then on are left out (counted: after_end),
 * and an interval that ends after it is cut there. */
void collector_set_end(struct collector *c, uint64_t end_ns);

/* A traced call still in flight when profiling ended (read from the
 * kernel's thread state). The probe is the profile's probe index. */
struct collector_open_span {
	uint32_t tid, probe;
	uint32_t depth;    /* 1: the thread's outermost traced call */
	uint64_t span_id, parent_id, start_ns;
	uint64_t own_ns;   /* sonde's own cost inside it so far */
};

/* Records it: it counts with its elapsed time until end_ns, less own_ns. */
void collector_add_open_span(struct collector *c, const struct collector_open_span *o,
			     uint64_t end_ns);

void collector_get_stats(const struct collector *c, struct collector_stats *out);

#endif
