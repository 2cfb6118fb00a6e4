/* offcpucut — the off-CPU intervals still going when a recording ends.
 *
 * An interval is sent when its thread runs again (bpf/offcpu.bpf.c). A
 * thread that sleeps through the end of a recording would send it after
 * the end, as long after as it sleeps on (a 10 s sleep in an 8 s
 * recording), and the time it is away after the end is no part of the
 * recording. So at the end the kernel side stops (offcpu_until_ns: nothing
 * stashed or sent from then on) and every thread still away has its
 * interval cut at the end, as perf users count a sleep through the end of
 * a profile: from when it left to the end, never beyond. A wait that
 * began before the recording (or before off-CPU recording was turned on)
 * is not in it, as before. */
#ifndef SONDE_OFFCPUCUT_H
#define SONDE_OFFCPUCUT_H

#include <stdint.h>

#include "records.h"

struct offcpu_cut {
	int stash_fd;      /* the map offcpu_stash (struct sonde_offcpu_entry) */
	uint64_t since_ns; /* waits that began before were not recorded */
	uint64_t until_ns; /* the recording's end */
	uint64_t min_ns;   /* shorter intervals are counted, not recorded */
};

struct offcpu_cut_counts {
	uint64_t cut;   /* intervals delivered, cut at the end */
	uint64_t below; /* intervals shorter than min_ns once cut: counted only */
};

/* Delivers to fn each interval waiting in the stash that began in
 * [since_ns, until_ns): a struct sonde_sample record with off_ns =
 * until_ns - when the thread left, as the ring buffer would have brought
 * it. Call it once the kernel side stopped at until_ns and the ring buffer
 * is drained. Counts into *out. */
void offcpu_cut_open(const struct offcpu_cut *c, engine_record_fn fn, void *arg,
		     struct offcpu_cut_counts *out);

#endif
