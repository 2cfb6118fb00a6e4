/* latency_auto — the `auto` threshold of latency.h (latency_auto_threshold):
 * the density of call durations, its modes, and the valley the threshold
 * goes in. Split from latency.c, whose other parts are plain statistics and
 * parsing. */
#include "latency.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

/* ==== the auto threshold =================================================== */

#define KDE_MAX_VALUES 65536          /* values that feed the density */
#define KDE_MIN_POINTS 512            /* grid points, at least */
#define KDE_MAX_POINTS 8192           /* and at most */
#define KDE_POINTS_PER_BANDWIDTH 4.0  /* so each kernel spans several points */
#define KDE_PAD_BANDWIDTHS 3.0        /* grid margin beyond min and max */
#define KDE_KERNEL_CUTOFF 5.0         /* bandwidths; the Gaussian is ~4e-6 there */
/* The kernel histogram counts 1 ns buckets below 16 ns and buckets of at
 * most 1/16 of their start above: in log(16 ns + duration) every bucket is
 * at most log(17/16) wide, so no bandwidth is narrower than that (the
 * buckets' ripples would be taken for modes), and 0 ns is a finite distance
 * below the rest (as far below 16 ns as 16 ns is below 48 ns), not
 * infinitely far as in log(duration). */
#define KDE_SHIFT_NS 16.0
#define KDE_MIN_BANDWIDTH 0.0606      /* log(17/16) */
#define MODE_MIN_SHARE 0.002          /* of all calls: a rare far tail is a mode */
#define MODE_MIN_CALLS 10
#define VALLEY_MAX_RATIO 0.8          /* valley / smaller peak, for distinct modes */
#define VALLEY_NOISE_SIGMAS 2.5       /* and the dip must exceed the noise this much */
#define VALLEY_TIE_SHARE 0.005        /* of the smaller peak: valleys this close tie */

/* Density of log(KDE_SHIFT_NS + ns) on an even grid: point i is at x0 + i *
 * dx. The scale is arbitrary; only ratios are used. */
struct kde {
	double *f;
	size_t npoints;
	double x0, dx;
};

/* log(KDE_SHIFT_NS + ns) of a subsample at evenly spaced ranks: on sorted
 * input this keeps the shape of the distribution, deterministically.
 * Ascending. */
static double *log_values_take(const uint64_t *sorted, size_t n, size_t *m)
{
	*m = n < KDE_MAX_VALUES ? n : KDE_MAX_VALUES;
	double *y = xmalloc(*m * sizeof(*y));
	for (size_t i = 0; i < *m; i++) {
		size_t rank = (size_t)(((2 * (uint64_t)i + 1) * n) / (2 * (uint64_t)*m));
		y[i] = log(KDE_SHIFT_NS + (double)sorted[rank]);
	}
	return y;
}

/* Silverman's rule of thumb, 0.9 * min(sd, IQR / 1.34) * m^-1/5, falling
 * back to sd when most values are equal (IQR 0). y is ascending. */
static double silverman_bandwidth(const double *y, size_t m)
{
	double mean = 0, var = 0;
	for (size_t i = 0; i < m; i++)
		mean += y[i];
	mean /= (double)m;
	for (size_t i = 0; i < m; i++)
		var += (y[i] - mean) * (y[i] - mean);
	double spread = sqrt(var / (double)m);
	double iqr = y[3 * m / 4] - y[m / 4];
	if (iqr > 0 && iqr / 1.34 < spread)
		spread = iqr / 1.34;
	double h = 0.9 * spread * pow((double)m, -0.2);
	return h > KDE_MIN_BANDWIDTH ? h : KDE_MIN_BANDWIDTH;
}

static size_t kde_grid_points(double range, double h)
{
	double want = ceil(range / h * KDE_POINTS_PER_BANDWIDTH) + 1;
	if (want < KDE_MIN_POINTS)
		return KDE_MIN_POINTS;
	if (want > KDE_MAX_POINTS)
		return KDE_MAX_POINTS;
	return (size_t)want;
}

/* Linear binning: each value's unit weight is split between its two
 * neighbouring grid points, so the convolution below costs grid x kernel
 * width instead of values x grid. */
static double *kde_bin(const struct kde *k, const double *y, size_t m)
{
	double *bins = xcalloc(k->npoints, sizeof(*bins));
	for (size_t i = 0; i < m; i++) {
		double t = (y[i] - k->x0) / k->dx;
		size_t j = (size_t)t;
		if (j >= k->npoints - 1) {
			bins[k->npoints - 1] += 1;
			continue;
		}
		double w = t - (double)j;
		bins[j] += 1 - w;
		bins[j + 1] += w;
	}
	return bins;
}

static void kde_convolve(struct kde *k, const double *bins, double h)
{
	size_t reach = (size_t)ceil(KDE_KERNEL_CUTOFF * h / k->dx);
	if (reach > k->npoints - 1)
		reach = k->npoints - 1;
	double *kernel = xmalloc((reach + 1) * sizeof(*kernel));
	for (size_t d = 0; d <= reach; d++) {
		double z = (double)d * k->dx / h;
		kernel[d] = exp(-0.5 * z * z);
	}
	for (size_t i = 0; i < k->npoints; i++) {
		size_t from = i > reach ? i - reach : 0;
		size_t to = i + reach < k->npoints ? i + reach : k->npoints - 1;
		double sum = 0;
		for (size_t j = from; j <= to; j++)
			sum += bins[j] * kernel[j > i ? j - i : i - j];
		k->f[i] = sum;
	}
	free(kernel);
}

/* The density of log(duration); free k->f. */
static void kde_estimate(const uint64_t *sorted, size_t n, struct kde *k)
{
	size_t m;
	double *y = log_values_take(sorted, n, &m);
	double h = silverman_bandwidth(y, m);
	k->x0 = y[0] - KDE_PAD_BANDWIDTHS * h;
	double x1 = y[m - 1] + KDE_PAD_BANDWIDTHS * h;
	k->npoints = kde_grid_points(x1 - k->x0, h);
	k->dx = (x1 - k->x0) / (double)(k->npoints - 1);
	k->f = xmalloc(k->npoints * sizeof(*k->f));
	double *bins = kde_bin(k, y, m);
	kde_convolve(k, bins, h);
	free(bins);
	free(y);
}

/* The duration at grid point i, in whole ns within [0, UINT64_MAX]. */
static uint64_t kde_point_ns(const struct kde *k, size_t i)
{
	double ns = round(exp(k->x0 + (double)i * k->dx) - KDE_SHIFT_NS);
	if (ns < 0)
		return 0;
	if (ns >= 18446744073709551616.0)
		return UINT64_MAX;
	return (uint64_t)ns;
}

/* The lowest point strictly between grid points a < b: the middle of the
 * longest run of points within `tol` of the minimum, so a flat valley (an
 * empty gap) gives its middle even when stray calls dot it, and among equally
 * long runs the one nearest `a` wins. */
static size_t kde_valley(const struct kde *k, size_t a, size_t b, double tol)
{
	double lowest = k->f[a + 1];
	for (size_t i = a + 1; i < b; i++)
		if (k->f[i] < lowest)
			lowest = k->f[i];
	size_t best_start = a + 1, best_len = 0, run_start = 0, run_len = 0;
	for (size_t i = a + 1; i < b; i++) {
		if (k->f[i] > lowest + tol) {
			run_len = 0;
			continue;
		}
		if (run_len++ == 0)
			run_start = i;
		if (run_len > best_len) {
			best_len = run_len;
			best_start = run_start;
		}
	}
	return best_start + (best_len ? (best_len - 1) / 2 : 0);
}

/* Local maxima of the density, with the valley between each neighbouring
 * pair: valley[j] lies between peak[j] and peak[j + 1]. */
struct peaks {
	size_t *peak, *valley;
	size_t n;
};

static void peaks_find(const struct kde *k, struct peaks *p)
{
	p->peak = xmalloc(k->npoints * sizeof(*p->peak));
	p->valley = xmalloc(k->npoints * sizeof(*p->valley));
	p->n = 0;
	for (size_t i = 0; i < k->npoints; i++) {
		double left = i > 0 ? k->f[i - 1] : 0;
		double right = i + 1 < k->npoints ? k->f[i + 1] : 0;
		/* > on the left, >= on the right: a plateau counts once */
		if (k->f[i] > left && k->f[i] >= right)
			p->peak[p->n++] = i;
	}
	for (size_t j = 0; j + 1 < p->n; j++)
		p->valley[j] = kde_valley(k, p->peak[j], p->peak[j + 1], 0);
}

static void peaks_free(struct peaks *p)
{
	free(p->peak);
	free(p->valley);
}

/* Removes peak j; its basin joins the neighbours, and the valley between
 * the new neighbours is their lowest point. */
static void peaks_remove(struct peaks *p, const struct kde *k, size_t j)
{
	memmove(&p->peak[j], &p->peak[j + 1], (p->n - j - 1) * sizeof(*p->peak));
	p->n--;
	if (p->n == 0)
		return;
	/* valleys j - 1 and j (either may not exist) become one at j - 1 */
	size_t drop = j < p->n ? j : j - 1;
	memmove(&p->valley[drop], &p->valley[drop + 1], (p->n - drop - 1) * sizeof(*p->valley));
	if (j > 0 && j < p->n)
		p->valley[j - 1] = kde_valley(k, p->peak[j - 1], p->peak[j], 0);
}

/* Values < ns in sorted. */
static size_t count_below(const uint64_t *sorted, size_t n, uint64_t ns)
{
	return ORDER_PARTITION(n, i, sorted[i] < ns);
}

/* Calls in the basin of peak j: from the valley below it to the one above. */
static size_t peaks_basin_calls(const struct peaks *p, const struct kde *k, const uint64_t *sorted,
				size_t n, size_t j)
{
	size_t below = j > 0 ? count_below(sorted, n, kde_point_ns(k, p->valley[j - 1])) : 0;
	size_t above = j + 1 < p->n ? count_below(sorted, n, kde_point_ns(k, p->valley[j])) : n;
	return above - below;
}

/* How clearly the valley between peaks j and j + 1 separates them: the dip
 * below the smaller peak over the dip required, < 1 when not clear. The
 * dip must be a fair part of the peak, and well above the noise of the
 * estimate: f sums one kernel weight per value, so Var(f) is about
 * f / sqrt(2) (Poisson counts under a Gaussian kernel), and in a sparse tail
 * a few values can make a deep-looking valley by chance. */
static double peaks_valley_clarity(const struct peaks *p, const struct kde *k, size_t j)
{
	double smaller = fmin(k->f[p->peak[j]], k->f[p->peak[j + 1]]);
	double valley = k->f[p->valley[j]];
	double noise = sqrt((smaller + valley) / sqrt(2.0));
	double required = fmax((1 - VALLEY_MAX_RATIO) * smaller, VALLEY_NOISE_SIGMAS * noise);
	return (smaller - valley) / required;
}

/* The neighbouring pair with the least clear valley; returns its clarity. */
static double peaks_least_clear_valley(const struct peaks *p, const struct kde *k, size_t *pair)
{
	double least = INFINITY;
	for (size_t j = 0; j + 1 < p->n; j++) {
		double clarity = peaks_valley_clarity(p, k, j);
		if (clarity < least) {
			least = clarity;
			*pair = j;
		}
	}
	return least;
}

static size_t peaks_smallest_basin(const struct peaks *p, const struct kde *k,
				   const uint64_t *sorted, size_t n, size_t *calls)
{
	size_t smallest = 0;
	*calls = SIZE_MAX;
	for (size_t j = 0; j < p->n; j++) {
		size_t c = peaks_basin_calls(p, k, sorted, n, j);
		if (c < *calls) {
			*calls = c;
			smallest = j;
		}
	}
	return smallest;
}

/* Calls that sonde's correction for its own cost brought to 0 ns or a few
 * pile up at the bottom: that is the limit of what can be told apart (the
 * correction's error is tens of ns), not a kind of call. A peak below
 * FLOOR_MODE_NS joins the mode above it. */
#define FLOOR_MODE_NS 16

static void peaks_merge_floor(struct peaks *p, const struct kde *k)
{
	while (p->n > 1 && kde_point_ns(k, p->peak[0]) < FLOOR_MODE_NS)
		peaks_remove(p, k, 0);
}

/* Merges ripples until every remaining mode is distinct (clear valleys),
 * large enough, and there are at most LATENCY_MAX_MODES. The least
 * significant goes first, since each merge changes its neighbours. */
static void peaks_merge_insignificant(struct peaks *p, const struct kde *k, const uint64_t *sorted,
				      size_t n)
{
	double min_calls = fmax(MODE_MIN_SHARE * (double)n, MODE_MIN_CALLS);
	while (p->n > 1) {
		size_t pair = 0, calls;
		if (peaks_least_clear_valley(p, k, &pair) < 1) {
			bool left_lower = k->f[p->peak[pair]] < k->f[p->peak[pair + 1]];
			peaks_remove(p, k, left_lower ? pair : pair + 1);
			continue;
		}
		size_t j = peaks_smallest_basin(p, k, sorted, n, &calls);
		if ((double)calls < min_calls || p->n > LATENCY_MAX_MODES) {
			peaks_remove(p, k, j);
			continue;
		}
		break;
	}
}

static void modes_fill(struct latency_modes *out, const struct peaks *p, const struct kde *k,
		       const uint64_t *sorted, size_t n)
{
	out->nmodes = p->n;
	for (size_t j = 0; j < p->n; j++) {
		struct latency_mode *m = &out->modes[j];
		m->ns = kde_point_ns(k, p->peak[j]);
		m->share = (double)peaks_basin_calls(p, k, sorted, n, j) / (double)n;
		m->lo_ns = j > 0 ? kde_point_ns(k, p->valley[j - 1]) : sorted[0];
		m->hi_ns = j + 1 < p->n ? kde_point_ns(k, p->valley[j])
					: sorted[n - 1] + (sorted[n - 1] < UINT64_MAX);
	}
}

/* The mode with the largest share (the lowest on a tie). */
static size_t modes_main(const struct latency_modes *m)
{
	size_t best = 0;
	for (size_t j = 1; j < m->nmodes; j++)
		if (m->modes[j].share > m->modes[best].share)
			best = j;
	return best;
}

/* Two neighbouring modes less than this far apart (in 16 ns + duration) are
 * sub-modes of one kind of call: the same work with a cache miss, a
 * preemption or the cost of a sample. */
#define NEAR_RATIO 2.0

/* A group of modes holding this many times the share of every group above
 * it is the slow calls whatever lies beyond it. */
#define SLOW_SHARE_DOMINANCE 3.0

/* A group above the main mode holding this share of the main group's calls,
 * within this ratio of the main mode, is of the typical calls too (redis'
 * SET/GET at 0.3 us and at 1-1.5 us, 17-25% of the calls; a slow mode 20x
 * away holding 10% is the slow one). */
#define TYPICAL_SHARE 0.1
#define TYPICAL_RATIO 8.0

/* A farther valley must score this many times the nearer one's to win: on
 * a near tie, everything above the typical calls counts as slow. */
#define FARTHER_VALLEY_MARGIN 1.25

/* How modes stand around the valleys, for the choice of one. */
struct valley_view {
	const struct latency_modes *m;
	const struct peaks *p;
	const struct kde *k;
	size_t main;                    /* the main mode */
	size_t group[LATENCY_MAX_MODES]; /* group of each mode: chains of near modes */
	size_t ngroups;
};

/* The distance between modes j and j + 1 in log(16 ns + duration). */
static double modes_distance(const struct valley_view *w, size_t j)
{
	return (double)(w->p->peak[j + 1] - w->p->peak[j]) * w->k->dx;
}

/* How far apart the calls on either side of valley j are: the distance
 * between their mean log(16 ns + duration), read on the density. A small
 * hump just above the main mode moves the mean above a farther valley
 * little, a far mode much. */
static double valley_separation(const struct valley_view *w, size_t j)
{
	const struct kde *k = w->k;
	size_t v = w->p->valley[j];
	double mass[2] = {0, 0}, moment[2] = {0, 0};
	for (size_t i = 0; i < k->npoints; i++) {
		int side = i > v;
		mass[side] += k->f[i];
		moment[side] += k->f[i] * (double)i;
	}
	if (mass[0] <= 0 || mass[1] <= 0)
		return 0;
	return (moment[1] / mass[1] - moment[0] / mass[0]) * k->dx;
}

static void valley_view_init(struct valley_view *w, const struct latency_modes *m,
			     const struct peaks *p, const struct kde *k)
{
	*w = (struct valley_view){.m = m, .p = p, .k = k, .main = modes_main(m)};
	for (size_t j = 0; j < m->nmodes; j++) {
		if (j > 0 && modes_distance(w, j - 1) >= log(NEAR_RATIO))
			w->ngroups++;
		w->group[j] = w->ngroups;
	}
	w->ngroups++;
}

static double group_share(const struct valley_view *w, size_t g)
{
	double share = 0;
	for (size_t j = 0; j < w->m->nmodes; j++)
		if (w->group[j] == g)
			share += w->m->modes[j].share;
	return share;
}

/* The last group the threshold may go below: the largest-share group above
 * the main one when it holds over SLOW_SHARE_DOMINANCE times the share of
 * every group above it (a small far hump, e.g. slow calls that were also
 * preempted, stays on the slow side), else the farthest group of
 * comparable share (humps of fast calls lengthened by interrupts, 2-4x the
 * main mode, can hold more calls than the real slow mode). Groups of
 * typical calls right above the main one (group_typical) are a second
 * common kind of call, not the slow one: the largest is looked for above
 * them (redis' SET/GET calls in two modes 3.5-5x apart, 70-77% and 17-25%,
 * with LRANGE at 5% 24-75x above them). */
/* The mode (its duration) a group starts with. */
static uint64_t group_first_ns(const struct valley_view *w, size_t g)
{
	for (size_t j = 0; j < w->m->nmodes; j++)
		if (w->group[j] == g)
			return w->m->modes[j].ns;
	return 0;
}

/* A group above the main one of typical calls: TYPICAL_SHARE of the main
 * group's calls or more, less than TYPICAL_RATIO times the main mode. */
static bool group_typical(const struct valley_view *w, size_t g)
{
	double main_share = group_share(w, w->group[w->main]);
	uint64_t main_ns = w->m->modes[w->main].ns;
	return group_share(w, g) >= TYPICAL_SHARE * main_share &&
	       (double)group_first_ns(w, g) < TYPICAL_RATIO * (double)(main_ns ? main_ns : 1);
}

static size_t valley_last_group(const struct valley_view *w)
{
	size_t first = w->group[w->main] + 1;
	while (first + 1 < w->ngroups && group_typical(w, first))
		first++;
	size_t largest = first;
	for (size_t g = first + 1; g < w->ngroups; g++)
		if (group_share(w, g) > group_share(w, largest))
			largest = g;
	size_t last = largest;
	for (size_t g = largest + 1; g < w->ngroups; g++)
		if (SLOW_SHARE_DOMINANCE * group_share(w, g) >= group_share(w, largest))
			last = g;
	return last;
}

/* The highest density peak among modes [from, to). */
static double peaks_highest(const struct valley_view *w, size_t from, size_t to)
{
	double high = 0;
	for (size_t j = from; j < to; j++)
		high = fmax(high, w->k->f[w->p->peak[j]]);
	return high;
}

/* How well the valley between modes j and j + 1 separates the calls: its
 * depth under the lower of the highest peaks on either side (1: empty, 0:
 * no dip), times the separation of the calls on either side. */
static double valley_score(const struct valley_view *w, size_t j)
{
	double lower = fmin(peaks_highest(w, 0, j + 1), peaks_highest(w, j + 1, w->m->nmodes));
	double depth = lower > 0 ? 1 - w->k->f[w->p->valley[j]] / lower : 0;
	return depth * valley_separation(w, j);
}

/* The valley the threshold goes in (between modes j and j + 1), or
 * SIZE_MAX when the main mode is the slowest. Candidates are the valleys
 * between groups above the main mode's, up to valley_last_group; only
 * when there is none, those between sub-modes above the main mode. The
 * best score wins, a nearer one on a near tie. */
static size_t valley_choose(const struct valley_view *w, bool *between_groups)
{
	size_t main_group = w->group[w->main], last = 0;
	*between_groups = main_group + 1 < w->ngroups;
	if (*between_groups)
		last = valley_last_group(w);
	size_t best = SIZE_MAX;
	double best_score = 0;
	for (size_t j = w->main; j + 1 < w->m->nmodes; j++) {
		bool across = w->group[j + 1] != w->group[j];
		if (*between_groups && (!across || w->group[j + 1] > last))
			continue;
		double score = valley_score(w, j);
		if (best == SIZE_MAX || score > FARTHER_VALLEY_MARGIN * best_score) {
			best = j;
			best_score = score;
		}
	}
	return best;
}

/* The largest-share mode above valley j. */
static size_t modes_largest_above(const struct latency_modes *m, size_t j)
{
	size_t best = j + 1;
	for (size_t i = j + 2; i < m->nmodes; i++)
		if (m->modes[i].share > m->modes[best].share)
			best = i;
	return best;
}

__attribute__((format(printf, 2, 3))) static int no_threshold(struct latency_modes *out,
							      const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
	out->found = false;
	out->threshold_ns = 0;
	return -1;
}

/* Picks the main and slow modes and places the threshold between them. */
static int modes_place_threshold(struct latency_modes *out, const struct peaks *p,
				 const struct kde *k)
{
	char a[32], b[32], c[32];
	if (out->nmodes == 0)
		return no_threshold(out, "no mode found");
	struct valley_view w;
	valley_view_init(&w, out, p, k);
	const struct latency_mode *mm = &out->modes[w.main];
	if (out->nmodes == 1)
		return no_threshold(out, "unimodal: one mode at %s",
				    duration_format(mm->ns, a, sizeof(a)));
	bool between_groups;
	size_t best = valley_choose(&w, &between_groups);
	if (best == SIZE_MAX)
		return no_threshold(out,
				    "no mode slower than the main mode at %s (%.1f%% of calls) among %zu modes",
				    duration_format(mm->ns, a, sizeof(a)), 100 * mm->share, out->nmodes);
	/* Within it, the middle of the widest near-lowest stretch; "near" is
	 * relative to the smaller peak, so a tall, narrow main mode's own tail
	 * does not count as valley. */
	double smaller = fmin(k->f[p->peak[best]], k->f[p->peak[best + 1]]);
	size_t v = kde_valley(k, p->peak[best], p->peak[best + 1], VALLEY_TIE_SHARE * smaller);
	const struct latency_mode *ms = &out->modes[modes_largest_above(out, best)];
	out->found = true;
	out->threshold_ns = kde_point_ns(k, v);
	snprintf(out->reason, sizeof(out->reason),
		 "between the main mode at %s (%.1f%% of calls) and the slow one at %s (%.1f%%)%s",
		 duration_format(mm->ns, b, sizeof(b)), 100 * mm->share,
		 duration_format(ms->ns, c, sizeof(c)), 100 * ms->share,
		 between_groups ? "" : ", less than 2x apart: no mode farther");
	return 0;
}

int latency_auto_threshold(const uint64_t *sorted, size_t n, struct latency_modes *out)
{
	memset(out, 0, sizeof(*out));
	if (n < LATENCY_AUTO_MIN_CALLS)
		return no_threshold(out, "too few calls (%zu) to find modes; need at least %d", n,
				    LATENCY_AUTO_MIN_CALLS);
	struct kde k;
	struct peaks p;
	kde_estimate(sorted, n, &k);
	peaks_find(&k, &p);
	peaks_merge_floor(&p, &k);
	peaks_merge_insignificant(&p, &k, sorted, n);
	modes_fill(out, &p, &k, sorted, n);
	int rc = modes_place_threshold(out, &p, &k);
	peaks_free(&p);
	free(k.f);
	return rc;
}

const char *latency_auto_note(const struct latency_modes *m, char *buf, size_t size)
{
	if (m->found)
		snprintf(buf, size, "auto: %s", m->reason);
	else
		snprintf(buf, size, LATENCY_AUTO_FALLBACK);
	return buf;
}
