/* owncost — what a sample costs a traced call beyond what sonde measured,
 * read from the run's own calls, and taken out of the sampled calls.
 *
 * The kernel side charges each sample what it measures (the sampler's run
 * time, how late it ran after its timer) and a calibrated constant for the
 * interrupt's exit. What no program times is left: the target's caches and
 * TLB refilled after the sampler walked its stacks, the interrupt's exit on
 * this machine now. On redis' ~1 us processCommand it was 1.5 us a sample:
 * a sampled SET looked like an LRANGE at a 2 us threshold.
 *
 * Per function probe: m is the median corrected duration of the calls no
 * sample landed in (read from the kernel's histogram of every call less
 * the sampled calls, or from the spans with --all-calls). The calls
 * compared are those of the fast side: below the valley `auto` finds above
 * the main mode when it lies beyond 2m (latency.h), else of the main mode
 * alone. The median of the one-sample calls there (up to the side's end
 * plus r: their samples' cost spreads them), shifted back by the residual
 * r found so far, against that of the calls without one, gives r (three
 * rounds); on a side of several modes the unsampled calls' median is
 * weighted by duration, as a sample lands in a call in proportion to its
 * length (redis' SET/GET calls at 0.3 and 1 us: the sampled ones are
 * mostly the longer kind), the main mode's [m/2, 2m) plain one otherwise.
 * Then each sampled call's
 * duration loses k * r for its k samples (never below 0, never above its
 * raw duration when r < 0). With fewer than OWNCOST_MIN_SAMPLED one-sample
 * calls or OWNCOST_MIN_UNSAMPLED others in that mode nothing is changed and
 * the probe's result says so: sonde does not guess.
 *
 * What is left is how much one sample's cost varies: the spread (half the
 * 10th-90th percentile range) of the corrected one-sample calls of that
 * side beyond that of the calls without a sample is the probe's
 * sample_uncertainty_ns. A sampled call of k samples closer than k times it
 * to a threshold is in neither the slow nor the fast calls (view.h): on
 * redis, a 1 us SET with a 30 us sample in it cannot be told from a 2.5 us
 * call. */
#ifndef SONDE_OWNCOST_H
#define SONDE_OWNCOST_H

#include <stdbool.h>
#include <stdint.h>

#include "profile.h"

#define OWNCOST_MIN_SAMPLED 20
#define OWNCOST_MIN_UNSAMPLED 100

struct owncost_residual {
	bool known;           /* r was found (and taken out) */
	uint64_t uncertainty_ns; /* per sample (see above) */
	int64_t ns_per_sample; /* r */
	uint64_t mode_ns;     /* m */
	uint64_t sampled;     /* one-sample calls in the mode */
	uint64_t unsampled;   /* calls without a sample in the mode */
	uint64_t calls_changed;
};

/* Finds r for probe and takes it out of its sampled calls' durations.
 * Returns what it found. A profile whose metadata says it was done
 * ("sample_residual_done") is left as it is. */
struct owncost_residual owncost_correct(struct profile *p, uint32_t probe);

/* Every function probe of p, once: records per probe in the metadata
 * ("sample_residual_ns:NAME" and "sample_uncertainty_ns:NAME", or
 * "sample_residual_unknown:NAME" with the calls seen) and marks p done. */
void owncost_correct_all(struct profile *p);

/* Counts the on-CPU samples of every span (span.samples) and reads the
 * probes' uncertainties back from the metadata: for a profile read from a
 * recording. */
void owncost_count(struct profile *p);

#endif
