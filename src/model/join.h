/* join — the one span <-> sample join of sonde: the samples taken inside
 * traced calls that have not ended yet, by span id, until each call's
 * record arrives.
 *
 * A sample carries the calls in flight when it was taken (its span links);
 * a call's record comes when it ends, after its samples. Whoever wants a
 * call with its samples (`record`'s slow calls, a live session's latest
 * slow calls, a replay) notes each sample as it is added to the profile
 * (join_add_sample) and takes the call's samples when its record is added
 * (join_take). A call whose record never comes (still running, or lost) is
 * forgotten by join_sweep once its first sample is older than what the
 * caller keeps.
 *
 * Samples are named by their index in the profile. When the profile drops
 * its oldest samples (profile_trim), join_shift keeps the names right.
 * Bounded: past `max_links` samples noted (a sample in two calls counts
 * twice), samples are not noted and the drop is counted (join_dropped). */
#ifndef SONDE_JOIN_H
#define SONDE_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "profile.h"

struct join;

/* The bound every caller uses: samples noted in calls not ended yet, 8
 * bytes each (32 MiB at most). Past it, samples are not noted and the drop
 * is counted: at 999 Hz on 64 CPUs that is over a minute of samples all
 * inside calls that have not ended. */
#define JOIN_MAX_LINKS (1u << 22)

/* The caller owns the join; join_free releases it (NULL: nothing). */
struct join *join_new(size_t max_links);
void join_free(struct join *j);

/* Notes sample `index` of p in every traced call it was taken in; with
 * `only` (span id -> anything), only in those calls. */
void join_add_sample(struct join *j, const struct profile *p, size_t index,
		     const struct hashmap *only);

/* The samples noted in call span_id (indexes into p->samples, in the order
 * they were noted), and forgets the call. *n is 0 (and the result NULL)
 * when it has none. The array stays valid until the next call on j. */
const uint32_t *join_take(struct join *j, uint64_t span_id, size_t *n);

/* Forgets the calls whose first noted sample was taken before cutoff_ns:
 * their records never came while their samples were held. UINT64_MAX
 * forgets every call. Returns how many were forgotten. */
size_t join_sweep(struct join *j, uint64_t cutoff_ns);

/* The profile dropped its first `nsamples` samples (profile_trim): the
 * indexes noted shift down; samples that were dropped are no longer
 * given by join_take. */
void join_shift(struct join *j, size_t nsamples);

/* Samples not noted because the join was full; calls held; bytes held. */
uint64_t join_dropped(const struct join *j);
size_t join_calls(const struct join *j);
size_t join_bytes(const struct join *j);

#endif
