/* latency — statistics of call durations: percentiles, log2 histograms,
 * duration and threshold parsing, and the `auto` threshold that finds the
 * valley between the typical calls and the slow ones.
 *
 * Pure user-space math: no I/O except latency_hist_print, no global state.
 * Durations are nanoseconds (uint64_t). Arrays said to be "sorted" are in
 * ascending order. A call is "slow", "slower than T", when its duration is
 * > T: a call of exactly T is not, in every count and view. */
#ifndef SONDE_LATENCY_H
#define SONDE_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- summary statistics ------------------------------------------------ */

struct latency_stats {
	uint64_t count;
	double mean_ns;
	uint64_t min_ns, max_ns;
	uint64_t p50_ns, p90_ns, p95_ns, p99_ns, p999_ns;
};

/* Sorts `d` in place (ascending) and fills `out`. n == 0 gives all zeros.
 * Percentiles are by latency_percentile (nearest rank). */
void latency_compute(uint64_t *d, size_t n, struct latency_stats *out);

/* Percentile of an ascending array by the nearest-rank method: the smallest
 * value such that at least pct% of values are <= it, i.e. sorted[ceil(pct/100
 * * n) - 1]. pct in (0, 100]; below that range gives the minimum, above it
 * the maximum. n == 0 -> 0. */
uint64_t latency_percentile(const uint64_t *sorted, size_t n, double pct);

/* ---- log2 histogram ------------------------------------------------------ */

/* log2 histogram like bcc's funclatency: bucket k holds durations in
 * [2^k, 2^(k+1)) ns (bucket 0 holds 0 and 1; bucket 63 ends at UINT64_MAX). */
#define LATENCY_HIST_BUCKETS 64
struct latency_hist {
	uint64_t buckets[LATENCY_HIST_BUCKETS];
};

/* Adds `count` calls of duration `ns` (counts saturate at UINT64_MAX). */
void latency_hist_add(struct latency_hist *h, uint64_t ns, uint64_t count);

/* The bucket index of a duration, 0..63. */
unsigned latency_hist_bucket(uint64_t ns);

/* Prints the non-empty range of buckets (lowest to highest non-empty bucket,
 * empty ones in between included) as aligned rows
 *     "  1.02us -> 2.05us  : 12     |****      |"
 * where lo -> hi is the bucket's [2^k, 2^(k+1)) in human units chosen per row
 * (duration_format, so numbers stay short), and the bar is `width` characters
 * scaled to the largest bucket (a non-empty bucket always gets at least one
 * '*'). width <= 0 prints no bar. An empty histogram prints nothing. */
void latency_hist_print(FILE *out, const struct latency_hist *h, int width);

/* ---- log-linear histogram ------------------------------------------------ */

/* The kernel's histogram of call durations (bpf/sonde_abi.h): values below
 * 16 ns have a bucket each; every power of two above is cut into 16 equal
 * buckets, so a bucket is at most 1/16 of its lower bound wide. It nests in
 * the log2 histogram: each log2 bucket is 16 whole log-linear ones. */
#define LATENCY_LOGLIN_SUB_BITS 4 /* the kernel's SONDE_HIST_SUB_BITS (collector.c checks) */
#define LATENCY_LOGLIN_BUCKETS ((64 - LATENCY_LOGLIN_SUB_BITS + 1) << LATENCY_LOGLIN_SUB_BITS)

/* The bucket of a duration, 0..LATENCY_LOGLIN_BUCKETS-1. */
unsigned latency_loglin_bucket(uint64_t ns);

/* [lo, hi) of a bucket (hi saturates at UINT64_MAX); its middle. */
void latency_loglin_bounds(unsigned b, uint64_t *lo, uint64_t *hi);
uint64_t latency_loglin_mid(unsigned b);

/* Durations that stand for the calls a histogram counts, ascending: every
 * call when there are at most `max`, else `max` of them at evenly spaced
 * ranks; within a bucket, values are spread evenly over [lo, hi). Rank-based
 * figures (percentiles, the auto threshold, shares above a threshold) read
 * on them are those of the histogram. *n receives the values returned,
 * *total the calls counted (may be NULL). The array is malloc'ed (NULL when
 * empty). */
uint64_t *latency_loglin_durations(const uint64_t *counts, size_t max, size_t *n,
				   uint64_t *total);

/* Of `count` calls in bucket b, spread evenly over it as
 * latency_loglin_durations spreads them, those standing above ns. */
uint64_t latency_loglin_count_over(unsigned b, uint64_t count, uint64_t ns);

/* latency_percentile over latency_loglin_durations(counts, max), without
 * building the array: the same number, so a percentile shown beside a
 * threshold resolved on those durations is that threshold's figure. 0 when
 * the histogram is empty; pct 100 gives the largest value. */
uint64_t latency_loglin_percentile(const uint64_t *counts, size_t max, double pct);

/* The durations that stand for the calls of a probe's histogram, as every
 * figure of sonde reads them: latency_loglin_durations with at most
 * LATENCY_DURATIONS_MAX values. A recording's figures
 * (profile_probe_durations) and a live window's thresholds both take them
 * so, and threshold_resolve over them gives the threshold: the same calls
 * give the same threshold offline and live. *n receives the number of
 * values; NULL when there are none. */
#define LATENCY_DURATIONS_MAX (1u << 20)
uint64_t *latency_hist_durations(const uint64_t *counts, size_t *n);

/* latency_percentile over latency_hist_durations(counts): a live window's
 * p50..p99 and max are those a recording of the same calls gives, and
 * those its thresholds resolve to. 0 when there are no calls. */
uint64_t latency_hist_percentile(const uint64_t *counts, double pct);

/* ---- durations ----------------------------------------------------------- */

/* Parses a duration: a decimal number (digits, optionally a '.' and more
 * digits; no sign, exponent or spaces) followed by ns, us, ms, s (also "µs"
 * and "μs"). Bare numbers are rejected. The value is exact: decimal digits
 * are scaled in integers and rounded to the nearest ns (digits beyond 1 ns
 * precision are ignored). Returns 0, or -1 with one line in err (when err is
 * not NULL), e.g. "bad duration '5x': use a number with ns, us, ms or s, e.g.
 * 750us". Rejects negative, NaN, and values above UINT64_MAX ns. */
int duration_parse(const char *s, uint64_t *ns, char *err, size_t errlen);

/* Formats ns compactly with 3 significant digits: "812ns", "3.25us",
 * "14.1ms", "1.50s" (below 1us: integer ns; from 1000 s on: integer
 * seconds). Lossy: for a text that parses back exactly, see threshold_format.
 * Returns buf. */
const char *duration_format(uint64_t ns, char *buf, size_t size);

/* ---- thresholds ------------------------------------------------------------ */

enum threshold_kind { THRESHOLD_PERCENTILE, THRESHOLD_ABSOLUTE, THRESHOLD_AUTO };
struct threshold {
	enum threshold_kind kind;
	double percentile; /* THRESHOLD_PERCENTILE: in (0, 100) */
	uint64_t ns;       /* THRESHOLD_ABSOLUTE */
};

/* Parses "p95", "p99", "p99.9", "pNN.NNN" (a percentile strictly between 0
 * and 100, any number of decimals), an absolute duration ("750us", "5ms",
 * "1.5s", see duration_parse), or "auto". NULL or "" means p95. Returns 0,
 * or -1 with one line in err (when not NULL) that lists the accepted forms. */
int threshold_parse(const char *s, struct threshold *out, char *err, size_t errlen);

/* Writes a canonical text that threshold_parse reads back to the same value:
 * "p95", "p99.9", "750us", "1.5s", "1.234567ms", "auto". Returns buf. */
const char *threshold_format(const struct threshold *t, char *buf, size_t size);

/* True when a and b are the same threshold (the fields their kind uses). */
bool threshold_equal(const struct threshold *a, const struct threshold *b);

/* ---- the auto threshold ------------------------------------------------------ */

/* Fewer calls than this are not enough to tell modes from noise. */
#define LATENCY_AUTO_MIN_CALLS 50

/* Modes of a duration distribution for the `auto` threshold. */
#define LATENCY_MAX_MODES 8
struct latency_mode {
	uint64_t ns;          /* location: the density peak */
	double share;         /* share of calls in its basin [lo_ns, hi_ns) */
	uint64_t lo_ns, hi_ns; /* basin: from valley to valley (first: min, last: max + 1) */
};
struct latency_modes {
	size_t nmodes;                                /* modes found, in ascending duration */
	struct latency_mode modes[LATENCY_MAX_MODES]; /* location, share of calls in its basin */
	bool found;                                   /* a threshold could be placed */
	uint64_t threshold_ns; /* the valley between the main mode and the slow one */
	char reason[192];      /* !found: why (e.g. "unimodal: one mode at 1.20ms");
	                        * found: "between the main mode at A (S% of
	                        * calls) and the slow one at B (S%)", the modes
	                        * as listed; outputs print it after the threshold */
};

/* Finds the modes of the durations and, when there is a mode slower than the
 * main one, the threshold in the valley between them.
 *
 * The density: kernel density estimation on log(16 ns + duration), the
 * coordinate in which the kernel's histogram (1 ns buckets below 16 ns, at
 * most 1/16 of their start wide above) has buckets of about equal width,
 * at most log(17/16); above ~200 ns it is log(duration) within 8%. Gaussian
 * kernel, bandwidth by Silverman's rule on those values but never below
 * log(17/16), so the buckets' ripples are not taken for modes; a grid of at
 * least 512 points between the extremes padded by 3 bandwidths.
 *
 * The modes: the density's local maxima, less the insignificant ones,
 * merged into a neighbour least significant first (at most
 * LATENCY_MAX_MODES remain): a peak below 16 ns (calls sonde's correction
 * for its own cost brought to ~0 ns: the limit of what can be told apart,
 * not a kind of call) joins the mode above; a mode needs 0.2% of the calls
 * and 10 calls (so a rare far tail is a mode), and the valley between two
 * neighbouring modes must be below 80% of the smaller peak and deeper than
 * 2.5 standard errors of the estimate (so the sparse tail of a heavy-tailed
 * distribution does not make modes out of noise). A slow mode holding 2% of
 * the calls is found from about 1000 calls, one holding 1% from about 3000.
 * The main mode holds the largest share of calls. Neighbouring modes less
 * than 2x apart (in 16 ns + duration) are sub-modes, one group: the same
 * work with a cache miss, a preemption or a sample in it.
 *
 * The valley: candidates are the valleys between groups above the main
 * mode's group, up to the largest-share group above it when that group
 * holds over 3x the share of every group above it (a small far hump, e.g.
 * slow calls that were also preempted, stays on the slow side), else up to
 * the farthest group of comparable share (humps of fast calls lengthened by
 * interrupts, 2-4x the main mode, can hold more calls than the real slow
 * mode). Only when there is no group above the main one, the valleys
 * between the sub-modes above the main mode are candidates (the reason
 * then says "less than 2x apart: no mode farther"). Each candidate scores
 * depth x separation: depth is 1 - the valley's density over the lower of
 * the highest peaks on either side (1 for an empty gap), separation the
 * distance between the mean log(16 ns + duration) of the calls below and
 * above it (a small hump just above the main mode moves the mean above a
 * farther valley little, a far slow mode much). The best score wins; a
 * farther valley must score over 1.25x a nearer one, so on a near tie
 * everything above the typical calls counts as slow. The threshold is the
 * middle of the valley's near-lowest stretch (e.g. of an empty gap); the
 * slow mode reported is the largest-share mode above it.
 *
 * The reason names the main and the slow mode as the list has them
 * ("between the main mode at 1.71us (94.2% of calls) and the slow one at
 * 53.5us (5.8%)": duration_format, shares to 0.1%); outputs print it after
 * the threshold (latency_auto_note).
 *
 * `sorted` is ascending. Large inputs are subsampled at evenly spaced ranks
 * (at most 65536 values feed the density; shares are counted on all
 * values). Returns 0 when found, -1 otherwise (fewer than
 * LATENCY_AUTO_MIN_CALLS calls, one mode, or the main mode is the slowest)
 * with reason filled. */
int latency_auto_threshold(const uint64_t *sorted, size_t n, struct latency_modes *out);

/* What every output that shows an auto threshold says of it, after the
 * threshold: "auto: between the main mode at 1.71us (94.2% of calls) and
 * the slow one at 53.5us (5.8%)" (the reason), or LATENCY_AUTO_FALLBACK when
 * no valley was found and the p95 is in force. Returns buf. */
#define LATENCY_AUTO_FALLBACK "auto: no second mode; using p95"
const char *latency_auto_note(const struct latency_modes *m, char *buf, size_t size);

/* Resolves a threshold against data (sorted ascending): percentile ->
 * latency_percentile; absolute -> ns; auto -> latency_auto_threshold, falling
 * back to the p95 when no valley is found (modes_out, if not NULL, receives
 * the analysis either way; for the other kinds it is zeroed). Returns the
 * threshold in ns. A call is "slow" when its duration > threshold. */
uint64_t threshold_resolve(const struct threshold *t, const uint64_t *sorted, size_t n,
			   struct latency_modes *modes_out);

#endif
