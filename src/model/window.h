/* window — streaming, bounded-memory aggregation of samples for live views.
 *
 * Samples arrive continuously: (time_ns, stack node id, weight), optionally
 * with a thread index. A window keeps them in a ring of per-second buckets
 * and answers two views at any time:
 *
 *   - sliding: the weight of every stack over the last N seconds;
 *   - EWMA:    an exponentially weighted moving average of all time, with a
 *              configurable half-life.
 *
 * Memory is bounded whatever the run length: by the ring's capacity times
 * the distinct stacks per second, plus one "history" entry per distinct
 * stack seen (see EWMA). Nothing grows with the number of samples.
 *
 * Time. Second s is [origin + s·1e9, origin + (s+1)·1e9) ns; a sample's
 * second is floor((time_ns - origin_ns) / 1e9). The origin is 0 (whole
 * CLOCK_MONOTONIC seconds) unless window_set_origin() sets it before the
 * first sample. Bucket s "ends" at origin + (s+1)·1e9. Times are taken to
 * be below 2^63 ns (292 years: any Linux clock).
 *
 * Ring. With capacity C the ring holds the seconds (head - C, head], where
 * head is the newest second seen by window_add() or window_advance(). A
 * sample later than head moves head forward first (buckets whose second
 * leaves the ring are evicted — folded into the EWMA history — and
 * recycled); a sample whose second is <= head - C (or before the origin) is
 * dropped and counted in window_stats(). A bogus far-future timestamp
 * therefore empties the ring: callers feed monotonic clocks.
 *
 * Each bucket holds an open-addressing hash map stack -> summed weight
 * (uint64, exact) and one thread -> summed weight. A recycled bucket keeps
 * its maps' storage (cleared, shrunk only when it was at most 1/8 full), so
 * a long run over a stable set of stacks allocates nothing after the ring
 * has wrapped once: window_memory_bytes() stays flat.
 *
 * Views never move the ring; they take `now_ns` and use the buckets whose
 * second is <= now's second (whole buckets: the partial current second is
 * included, samples in later seconds are not).
 *
 * Sliding view. window_sum_last(w, now, S, out) merges the buckets of the
 * ceil(S) seconds ending with now's second: seconds
 * nowsec - ceil(S) + 1 .. nowsec (so S = 5 at now = 19.4 s covers
 * [15 s, 20 s)). S is clamped to the ring capacity; S <= 0 gives nothing.
 *
 * EWMA view. Each bucket contributes weight · 2^(-age/h), age = (now -
 * bucket end) in seconds, clamped at 0 (the current partial second counts
 * fully), h the half-life. So at a second boundary the newest complete
 * bucket counts 1, the one before 2^(-1/h), ...: a constant rate of r per
 * second kept for N seconds reads r·(1 - 2^(-N/h)) / (1 - 2^(-1/h)), tending
 * to r / (1 - 2^(-1/h)). The value is a decayed *sum* (weight units), not a
 * per-second rate; multiply by (1 - 2^(-1/h)) for a rate.
 *   Buckets leaving the ring are absorbed into a history map (stack ->
 * decayed weight, referenced to one time) that is decayed by a single factor
 * when read. With a fixed half-life the EWMA is exact (up to floating-point
 * rounding) over all samples the ring accepted, not only the ring: eviction
 * never changes it. Reading at a now earlier than the newest absorbed
 * bucket's end takes the history as of that end (no negative ages).
 *   window_set_halflife() recomputes the ring part exactly with the new
 * rate; the history cannot be (its buckets are gone), so it is approximated
 * as the old-rate EWMA at the end of its newest absorbed bucket, which then
 * decays at the new rate (exact for history mass at that end, approximate
 * for older mass). History entries whose weight underflows (< DBL_MIN) are
 * dropped.
 *
 * Outputs go to a caller-owned `struct stack_weights`, overwritten (n reset)
 * and grown as needed, sorted by key ascending; free with
 * stack_weights_free(). Reads use a scratch map owned by the window (so
 * they take a non-const window and allocate nothing once warm; it keeps the
 * size of the largest view read, at most one entry per distinct key). A
 * window is not thread-safe. */
#ifndef SONDE_WINDOW_H
#define SONDE_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "flame.h"
#include "profile.h"

/* Key reserved as "none": not a valid stack id or thread index. */
#define WINDOW_NO_THREAD UINT32_MAX

#define WINDOW_DEFAULT_HALFLIFE 10.0 /* seconds */

struct window;

/* (key, weight) pairs; key is a stack node id (or a thread index for the
 * window_thread_* views). */
struct stack_weights {
	uint32_t *stack;
	double *weight;
	size_t n, cap;
};

struct window_stats {
	uint64_t samples;         /* samples accepted */
	uint64_t weight;          /* their summed weight */
	uint64_t dropped;         /* samples dropped: too old, before the origin, bad key */
	uint64_t dropped_weight;  /* their summed weight */
	uint64_t evicted;         /* non-empty buckets absorbed into the history */
};

/* A window of `seconds` one-second buckets (>= 1; NULL for 0), half-life
 * WINDOW_DEFAULT_HALFLIFE. */
struct window *window_new(size_t seconds);
void window_free(struct window *w);

/* Sets the time of second 0. Only before the first window_add/advance:
 * returns 0, or -1 (nothing changed) afterwards. */
int window_set_origin(struct window *w, uint64_t origin_ns);

/* Adds a sample. `stack` must not be UINT32_MAX. Returns 0 when counted, -1
 * when dropped (counted in the stats). */
int window_add(struct window *w, uint64_t time_ns, uint32_t stack, uint64_t weight);

/* Same, also counting the weight for thread index `thread`
 * (WINDOW_NO_THREAD = none). */
int window_add_thread(struct window *w, uint64_t time_ns, uint32_t stack, uint32_t thread,
		      uint64_t weight);

/* Moves the ring forward to now's second without samples (evicting the
 * seconds that leave it). A `now_ns` not later than the newest second is a
 * no-op (a `now_ns` before the origin too). */
void window_advance(struct window *w, uint64_t now_ns);

/* Sliding view: stack -> weight over the last ceil(seconds) seconds ending
 * with now's (see above). Returns the total weight. */
double window_sum_last(struct window *w, uint64_t now_ns, double seconds,
		       struct stack_weights *out);

/* Sets the EWMA half-life in seconds (> 0 and finite); returns 0, or -1 and
 * leaves it unchanged. See above for how the history is carried over. */
int window_set_halflife(struct window *w, double seconds);
double window_halflife(const struct window *w);

/* EWMA view at now: stack -> decayed weight. Returns the total. */
double window_ewma(struct window *w, uint64_t now_ns, struct stack_weights *out);

/* The same two views by thread index (samples added with a thread only). */
double window_thread_sum_last(struct window *w, uint64_t now_ns, double seconds,
			      struct stack_weights *out);
double window_thread_ewma(struct window *w, uint64_t now_ns, struct stack_weights *out);

void window_stats(const struct window *w, struct window_stats *out);

/* The ring's capacity in seconds. */
size_t window_seconds(const struct window *w);

/* Bytes the window holds (structure, ring, every map's storage). */
size_t window_memory_bytes(const struct window *w);

void stack_weights_free(struct stack_weights *sw);

/* Sum of the weights. */
double stack_weights_total(const struct stack_weights *sw);

/* A flame tree of stack weights: every entry's stack from p's trie (root
 * first, frames merged by function through profile_function_frame, like
 * viewtree_flame; no process level), counted llround(weight · scale).
 * Entries whose count rounds to <= 0 are skipped; so are stack ids not in
 * the profile. The caller frees it with flame_free(). */
struct flame_tree *window_flame(struct profile *p, const struct stack_weights *sw,
				double scale);

#endif
