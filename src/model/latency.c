#include "latency.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ==== summary statistics ================================================== */

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

uint64_t latency_percentile(const uint64_t *sorted, size_t n, double pct)
{
	if (n == 0)
		return 0;
	if (!(pct > 0)) /* also NaN */
		return sorted[0];
	if (pct >= 100)
		return sorted[n - 1];
	double rank = pct * (double)n / 100.0;
	/* 99.9 has no exact binary form, so pct * n can land a hair above a
	 * whole rank; that hair is rounding, not a fraction of a call. */
	size_t r = (size_t)ceil(rank - rank * 1e-12);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return sorted[r - 1];
}

static double mean_of(const uint64_t *d, size_t n)
{
	long double sum = 0; /* a uint64_t sum could overflow */
	for (size_t i = 0; i < n; i++)
		sum += d[i];
	return (double)(sum / n);
}

void latency_compute(uint64_t *d, size_t n, struct latency_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(d, n, sizeof(*d), compare_u64);
	out->count = n;
	out->mean_ns = mean_of(d, n);
	out->min_ns = d[0];
	out->max_ns = d[n - 1];
	out->p50_ns = latency_percentile(d, n, 50);
	out->p90_ns = latency_percentile(d, n, 90);
	out->p95_ns = latency_percentile(d, n, 95);
	out->p99_ns = latency_percentile(d, n, 99);
	out->p999_ns = latency_percentile(d, n, 99.9);
}

/* ==== durations ============================================================ */

/* Below 1000 of a unit, 3 significant digits need this many decimals. The
 * cut-offs are where printf's rounding would add a fourth digit. */
static int decimals_for(double v)
{
	return v < 9.995 ? 2 : v < 99.95 ? 1 : 0;
}

/* duration_format on a double, so histogram bounds up to 2^64 print too. */
static const char *format_ns(double ns, char *buf, size_t size)
{
	static const struct {
		const char *name;
		double scale;
	} units[] = {{"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
	const size_t nunits = sizeof(units) / sizeof(units[0]);

	if (ns < 1000) {
		snprintf(buf, size, "%.0fns", ns);
		return buf;
	}
	for (size_t i = 0; i < nunits; i++) {
		double v = ns / units[i].scale;
		/* 999.5 would print as "1000": the next unit says it shorter */
		if (v < 999.5) {
			snprintf(buf, size, "%.*f%s", decimals_for(v), v, units[i].name);
			return buf;
		}
	}
	snprintf(buf, size, "%.0fs", ns / 1e9);
	return buf;
}

const char *duration_format(uint64_t ns, char *buf, size_t size)
{
	return format_ns((double)ns, buf, size);
}

struct duration_unit {
	const char *suffix;
	uint64_t ns;
};

/* The units durations are written in, smallest first. */
static const struct duration_unit canonical_units[] = {
	{"ns", 1},
	{"us", 1000},
	{"ms", 1000000},
	{"s", 1000000000},
};

/* Other spellings accepted on input. */
static const struct duration_unit unit_aliases[] = {
	{"\xc2\xb5s", 1000}, /* µs, MICRO SIGN */
	{"\xce\xbcs", 1000}, /* μs, GREEK SMALL LETTER MU */
};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct duration_unit *duration_unit_of(const char *suffix)
{
	for (size_t i = 0; i < COUNT_OF(canonical_units); i++)
		if (strcmp(suffix, canonical_units[i].suffix) == 0)
			return &canonical_units[i];
	for (size_t i = 0; i < COUNT_OF(unit_aliases); i++)
		if (strcmp(suffix, unit_aliases[i].suffix) == 0)
			return &unit_aliases[i];
	return NULL;
}

/* A decimal number as written: digits, optionally '.' and more digits. */
struct decimal {
	const char *whole, *frac; /* first digit of each part */
	size_t nwhole, nfrac;
	const char *end;          /* first character after the number */
};

static const char DIGITS[] = "0123456789";

/* Reads a decimal at s; false when there is none ("", ".", "5.", "-1"). */
static bool decimal_scan(const char *s, struct decimal *d)
{
	d->whole = s;
	d->nwhole = strspn(s, DIGITS);
	s += d->nwhole;
	d->frac = s;
	d->nfrac = 0;
	if (*s == '.') {
		d->frac = s + 1;
		d->nfrac = strspn(d->frac, DIGITS);
		if (d->nfrac == 0)
			return false;
		s = d->frac + d->nfrac;
	}
	d->end = s;
	return d->nwhole + d->nfrac > 0;
}

/* The decimal times `unit`, rounded to the nearest integer, computed in
 * integers so "0.1ms" is exactly 100000. False on overflow. */
static bool decimal_scale(const struct decimal *d, uint64_t unit, uint64_t *out)
{
	uint64_t whole = 0;
	for (size_t i = 0; i < d->nwhole; i++) {
		unsigned digit = (unsigned)(d->whole[i] - '0');
		if (whole > (UINT64_MAX - digit) / 10)
			return false;
		whole = whole * 10 + digit;
	}
	if (whole > UINT64_MAX / unit)
		return false;
	whole *= unit;

	/* unit <= 1e9 ns, so 10 digits resolve at least 0.1 ns: the half-ns
	 * where rounding turns is representable, and truncating later digits
	 * cannot cross it. */
	uint64_t frac = 0, denom = 1;
	for (size_t i = 0; i < d->nfrac && i < 10; i++) {
		frac = frac * 10 + (unsigned)(d->frac[i] - '0');
		denom *= 10;
	}
	uint64_t frac_scaled = (frac * unit + denom / 2) / denom; /* < 1e10 * 1e9: fits */
	if (whole > UINT64_MAX - frac_scaled)
		return false;
	*out = whole + frac_scaled;
	return true;
}

/* The decimal as a double, correctly rounded for up to 17 significant
 * digits (one integer division), and independent of the C locale. */
static double decimal_value(const struct decimal *d)
{
	uint64_t mantissa = 0;
	int exp10 = 0;
	for (size_t i = 0; i < d->nwhole; i++) {
		if (mantissa < 10000000000000000ULL)
			mantissa = mantissa * 10 + (unsigned)(d->whole[i] - '0');
		else
			exp10++;
	}
	for (size_t i = 0; i < d->nfrac && mantissa < 10000000000000000ULL; i++) {
		mantissa = mantissa * 10 + (unsigned)(d->frac[i] - '0');
		exp10--;
	}
	return exp10 >= 0 ? (double)mantissa * pow(10, exp10) : (double)mantissa / pow(10, -exp10);
}

int duration_parse(const char *s, uint64_t *ns, char *err, size_t errlen)
{
	const char *text = s ? s : "";
	struct decimal d;
	const struct duration_unit *unit;

	if (text[0] == '-')
		return errbuf_set(err, errlen,
				  "bad duration '%s': a duration cannot be negative; use e.g. 750us",
				  text);
	if (!decimal_scan(text, &d) || !(unit = duration_unit_of(d.end)))
		return errbuf_set(err, errlen,
				  "bad duration '%s': use a number with ns, us, ms or s, e.g. 750us",
				  text);
	if (!decimal_scale(&d, unit->ns, ns))
		return errbuf_set(err, errlen,
				  "bad duration '%s': too large; durations go up to 18446744073s",
				  text);
	return 0;
}

/* ==== log2 histogram ======================================================= */

unsigned latency_loglin_bucket(uint64_t ns)
{
	return sonde_hist_bucket(ns); /* the kernel's own, so both always agree */
}

void latency_loglin_bounds(unsigned b, uint64_t *lo, uint64_t *hi)
{
	enum { SUB = 1u << LATENCY_LOGLIN_SUB_BITS };
	if (b < SUB) {
		*lo = b;
		*hi = b + 1;
		return;
	}
	if (b >= LATENCY_LOGLIN_BUCKETS)
		b = LATENCY_LOGLIN_BUCKETS - 1;
	unsigned k = b / SUB + LATENCY_LOGLIN_SUB_BITS - 1;
	uint64_t sub = b % SUB;
	unsigned shift = k - LATENCY_LOGLIN_SUB_BITS;
	*lo = (SUB + sub) << shift;
	*hi = (sub == SUB - 1 && k == 63) ? UINT64_MAX : (SUB + sub + 1) << shift;
}

uint64_t latency_loglin_mid(unsigned b)
{
	uint64_t lo, hi;
	latency_loglin_bounds(b, &lo, &hi);
	return lo + (hi - lo) / 2;
}

/* The value of the call at `pos` (0-based) of `count` in bucket b. */
static uint64_t loglin_spread(unsigned b, uint64_t pos, uint64_t count)
{
	uint64_t lo, hi;
	latency_loglin_bounds(b, &lo, &hi);
	double at = ((double)pos + 0.5) / (double)count;
	uint64_t v = lo + (uint64_t)((double)(hi - lo) * at);
	return v < hi ? v : hi - 1;
}

uint64_t *latency_loglin_durations(const uint64_t *counts, size_t max, size_t *n,
				   uint64_t *total)
{
	uint64_t all = 0;
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		all = counts[b] > UINT64_MAX - all ? UINT64_MAX : all + counts[b];
	if (total)
		*total = all;
	*n = 0;
	if (!all || !max)
		return NULL;
	size_t m = all <= max ? (size_t)all : max;
	uint64_t *d = xmalloc(m * sizeof(*d));
	/* The i-th value is the call of rank (i + 0.5) * all / m (all of them
	 * when m == all). */
	unsigned b = 0;
	uint64_t below = 0; /* calls in buckets before b */
	for (size_t i = 0; i < m; i++) {
		uint64_t rank = m == all ? i : (uint64_t)(((double)i + 0.5) * (double)all / (double)m);
		if (rank >= all)
			rank = all - 1;
		while (b < LATENCY_LOGLIN_BUCKETS && below + counts[b] <= rank)
			below += counts[b++];
		d[i] = loglin_spread(b, rank - below, counts[b]);
	}
	*n = m;
	return d;
}

unsigned latency_hist_bucket(uint64_t ns)
{
	return ns < 2 ? 0 : 63 - (unsigned)__builtin_clzll(ns);
}

void latency_hist_add(struct latency_hist *h, uint64_t ns, uint64_t count)
{
	uint64_t *b = &h->buckets[latency_hist_bucket(ns)];
	*b = count > UINT64_MAX - *b ? UINT64_MAX : *b + count;
}

/* Bucket k spans [2^k, 2^(k+1)), except bucket 0 which starts at 0. As
 * doubles because the last bucket ends at 2^64. */
static double bucket_low_ns(unsigned k)
{
	return k == 0 ? 0 : ldexp(1, (int)k);
}

static double bucket_high_ns(unsigned k)
{
	return ldexp(1, (int)k + 1);
}

/* The lowest and highest non-empty buckets; false when all are empty. */
static bool hist_nonempty_range(const struct latency_hist *h, unsigned *first, unsigned *last)
{
	bool any = false;
	for (unsigned k = 0; k < LATENCY_HIST_BUCKETS; k++) {
		if (!h->buckets[k])
			continue;
		if (!any)
			*first = k;
		*last = k;
		any = true;
	}
	return any;
}

struct hist_columns {
	int lo, hi, count; /* widths */
	uint64_t largest;
};

static struct hist_columns hist_columns_measure(const struct latency_hist *h, unsigned first,
						unsigned last)
{
	struct hist_columns c = {0};
	char buf[32];
	for (unsigned k = first; k <= last; k++) {
		int lo = (int)strlen(format_ns(bucket_low_ns(k), buf, sizeof(buf)));
		int hi = (int)strlen(format_ns(bucket_high_ns(k), buf, sizeof(buf)));
		int count = snprintf(buf, sizeof(buf), "%" PRIu64, h->buckets[k]);
		c.lo = lo > c.lo ? lo : c.lo;
		c.hi = hi > c.hi ? hi : c.hi;
		c.count = count > c.count ? count : c.count;
		if (h->buckets[k] > c.largest)
			c.largest = h->buckets[k];
	}
	return c;
}

/* Stars for a bucket: scaled to the largest bucket, and at least one for any
 * non-empty bucket so a rare outlier stays visible. */
static int hist_bar_length(uint64_t count, uint64_t largest, int width)
{
	if (!count)
		return 0;
	int stars = (int)((double)count * width / (double)largest);
	return stars > 0 ? stars : 1;
}

static void hist_print_bar(FILE *out, int stars, int width)
{
	fputs(" |", out);
	for (int i = 0; i < width; i++)
		fputc(i < stars ? '*' : ' ', out);
	fputc('|', out);
}

void latency_hist_print(FILE *out, const struct latency_hist *h, int width)
{
	unsigned first = 0, last = 0;
	if (!hist_nonempty_range(h, &first, &last))
		return;
	struct hist_columns c = hist_columns_measure(h, first, last);
	char lo[32], hi[32];
	for (unsigned k = first; k <= last; k++) {
		format_ns(bucket_low_ns(k), lo, sizeof(lo));
		format_ns(bucket_high_ns(k), hi, sizeof(hi));
		fprintf(out, "  %*s -> %-*s : %*" PRIu64, c.lo, lo, c.hi, hi, c.count, h->buckets[k]);
		if (width > 0)
			hist_print_bar(out, hist_bar_length(h->buckets[k], c.largest, width), width);
		fputc('\n', out);
	}
}

/* ==== thresholds =========================================================== */

#define THRESHOLD_FORMS "use a percentile (p95, p99.9), a duration (750us, 5ms, 1.5s) or auto"

static int percentile_parse(const char *s, struct threshold *out, char *err, size_t errlen)
{
	struct decimal d;
	if (!decimal_scan(s + 1, &d) || *d.end)
		return errbuf_set(err, errlen, "bad threshold '%s': " THRESHOLD_FORMS, s);
	double pct = decimal_value(&d);
	if (!(pct > 0 && pct < 100))
		return errbuf_set(err, errlen,
				  "bad threshold '%s': a percentile must be above p0 and below p100, e.g. "
				  "p95 or p99.9 (or use a duration such as 750us, or auto)",
				  s);
	*out = (struct threshold){.kind = THRESHOLD_PERCENTILE, .percentile = pct};
	return 0;
}

int threshold_parse(const char *s, struct threshold *out, char *err, size_t errlen)
{
	if (!s || !*s) {
		*out = (struct threshold){.kind = THRESHOLD_PERCENTILE, .percentile = 95};
		return 0;
	}
	if (strcmp(s, "auto") == 0) {
		*out = (struct threshold){.kind = THRESHOLD_AUTO};
		return 0;
	}
	if (s[0] == 'p')
		return percentile_parse(s, out, err, errlen);
	uint64_t ns;
	if (duration_parse(s, &ns, NULL, 0) == 0) {
		*out = (struct threshold){.kind = THRESHOLD_ABSOLUTE, .ns = ns};
		return 0;
	}
	return errbuf_set(err, errlen, "bad threshold '%s': " THRESHOLD_FORMS, s);
}

/* The shortest "%g" text that reads back as the same double. */
/* The fewest decimals that read back to v, in plain notation: %g would
 * write 90 as "9e+01", which is exact but no threshold anyone types. */
static void format_shortest(double v, char *buf, size_t size)
{
	for (int decimals = 0; decimals <= 17; decimals++) {
		snprintf(buf, size, "%.*f", decimals, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* ns in the largest unit that keeps a non-zero integer part, with every
 * significant decimal: exact, unlike duration_format. */
static void format_duration_exact(uint64_t ns, char *buf, size_t size)
{
	const struct duration_unit *unit = &canonical_units[0];
	for (size_t i = 1; i < COUNT_OF(canonical_units); i++)
		if (ns >= canonical_units[i].ns)
			unit = &canonical_units[i];
	uint64_t whole = ns / unit->ns, frac = ns % unit->ns;
	if (!frac) {
		snprintf(buf, size, "%" PRIu64 "%s", whole, unit->suffix);
		return;
	}
	int digits = 0; /* of a full fraction: 3 for us, 6 for ms, 9 for s */
	for (uint64_t x = unit->ns; x > 1; x /= 10)
		digits++;
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, size, "%" PRIu64 ".%0*" PRIu64 "%s", whole, digits, frac, unit->suffix);
}

const char *threshold_format(const struct threshold *t, char *buf, size_t size)
{
	char num[40];
	switch (t->kind) {
	case THRESHOLD_PERCENTILE:
		format_shortest(t->percentile, num, sizeof(num));
		snprintf(buf, size, "p%s", num);
		break;
	case THRESHOLD_ABSOLUTE:
		format_duration_exact(t->ns, buf, size);
		break;
	case THRESHOLD_AUTO:
		snprintf(buf, size, "auto");
		break;
	}
	return buf;
}

/* ==== the auto threshold =================================================== */

#define KDE_MAX_VALUES 65536          /* values that feed the density */
#define KDE_MIN_POINTS 512            /* grid points, at least */
#define KDE_MAX_POINTS 8192           /* and at most */
#define KDE_POINTS_PER_BANDWIDTH 4.0  /* so each kernel spans several points */
#define KDE_PAD_BANDWIDTHS 3.0        /* grid margin beyond min and max */
#define KDE_KERNEL_CUTOFF 5.0         /* bandwidths; the Gaussian is ~4e-6 there */
#define KDE_MIN_BANDWIDTH 0.01        /* log units: modes closer than ~1% are one */
#define MODE_MIN_SHARE 0.01           /* of all calls */
#define MODE_MIN_CALLS 10
#define VALLEY_MAX_RATIO 0.8          /* valley / smaller peak, for distinct modes */
#define VALLEY_NOISE_SIGMAS 2.5       /* and the dip must exceed the noise this much */
#define VALLEY_TIE_SHARE 0.005        /* of the smaller peak: valleys this close tie */

/* Density of log(ns) on an even grid: point i is at log-ns x0 + i * dx. The
 * scale is arbitrary; only ratios are used. */
struct kde {
	double *f;
	size_t npoints;
	double x0, dx;
};

/* log of a subsample at evenly spaced ranks: on sorted input this keeps the
 * shape of the distribution, deterministically. Ascending. */
static double *log_values_take(const uint64_t *sorted, size_t n, size_t *m)
{
	*m = n < KDE_MAX_VALUES ? n : KDE_MAX_VALUES;
	double *y = xmalloc(*m * sizeof(*y));
	for (size_t i = 0; i < *m; i++) {
		size_t rank = (size_t)(((2 * (uint64_t)i + 1) * n) / (2 * (uint64_t)*m));
		uint64_t ns = sorted[rank];
		y[i] = log((double)(ns ? ns : 1));
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

/* The duration at grid point i, in whole ns within [1, UINT64_MAX]. */
static uint64_t kde_point_ns(const struct kde *k, size_t i)
{
	double ns = round(exp(k->x0 + (double)i * k->dx));
	if (ns < 1)
		return 1;
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
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (sorted[mid] < ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
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

/* A mode within SLOW_MIN_RATIO of the main mode's location is its shoulder
 * (e.g. the same work with a cache miss or a preemption), not "the slow
 * calls". */
#define SLOW_MIN_RATIO 1.5

/* The main mode's cluster: the modes after it each within SLOW_MIN_RATIO of
 * the one before (fast calls split by jitter, a cache state, or the cost of
 * a sample, are still fast calls). Returns the cluster's last mode. */
static size_t modes_main_cluster_end(const struct latency_modes *m, size_t main)
{
	size_t end = main;
	while (end + 1 < m->nmodes &&
	       (double)m->modes[end + 1].ns < SLOW_MIN_RATIO * (double)m->modes[end].ns)
		end++;
	return end;
}

/* A mode holding this many times the share of every mode above it is the
 * slow mode whatever lies beyond it. */
#define SLOW_SHARE_DOMINANCE 3.0

/* The largest-share mode above valley `v` (between modes v and v + 1). */
static size_t modes_largest_above(const struct latency_modes *m, size_t v)
{
	size_t best = v + 1;
	for (size_t j = v + 2; j < m->nmodes; j++)
		if (m->modes[j].share > m->modes[best].share)
			best = j;
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
	size_t main = modes_main(out);
	const struct latency_mode *mm = &out->modes[main];
	if (out->nmodes == 0)
		return no_threshold(out, "no mode found");
	if (out->nmodes == 1)
		return no_threshold(out, "unimodal: one mode at %s",
				    duration_format(mm->ns, a, sizeof(a)));
	size_t cluster_end = modes_main_cluster_end(out, main);
	if (cluster_end + 1 >= out->nmodes)
		return no_threshold(out, "no mode slower than the main one (%s, %.0f%% of calls) among %zu modes",
				    duration_format(mm->ns, a, sizeof(a)), 100 * mm->share, out->nmodes);

	/* The valleys that may hold the threshold: from the main cluster up
	 * to the slow mode. The slow mode is the largest-share mode above the
	 * cluster when it holds over SLOW_SHARE_DOMINANCE times the share of
	 * every mode above it (a small far hump, e.g. slow calls that were
	 * also preempted, is on the slow side). When modes above it hold
	 * comparable shares, shares cannot tell which is the slow one: humps
	 * of fast calls lengthened by interrupts or trap jitter (2-4x the
	 * main mode, 1-2% of the calls each) can hold more calls than the
	 * real slow mode (1%); then the farthest comparable mode bounds the
	 * search and the clearest valley decides. */
	size_t largest = modes_largest_above(out, cluster_end);
	size_t last = largest;
	for (size_t j = largest + 1; j < out->nmodes; j++)
		if (SLOW_SHARE_DOMINANCE * out->modes[j].share >= out->modes[largest].share)
			last = j;
	/* Of those valleys, the deepest relative to its lower neighbouring
	 * peak: a narrow dip beside a small extra mode must not beat the gap
	 * before the slow mode, even when that gap is partly filled (calls
	 * preempted on a busy machine). Valleys within VALLEY_TIE_SHARE of
	 * each other (e.g. two empty gaps) tie, and the one nearest the main
	 * mode wins: everything above the typical calls counts as slow. */
	size_t best = cluster_end;
	double best_ratio = INFINITY;
	for (size_t j = cluster_end; j < last; j++) {
		double lower = fmin(k->f[p->peak[j]], k->f[p->peak[j + 1]]);
		double ratio = lower > 0 ? k->f[p->valley[j]] / lower : 1.0;
		if (ratio < best_ratio - VALLEY_TIE_SHARE) {
			best_ratio = ratio;
			best = j;
		}
	}
	size_t slow = modes_largest_above(out, best);
	/* Within it, the middle of the widest near-lowest stretch; "near" is
	 * relative to the smaller peak, so a tall, narrow main mode's own tail
	 * does not count as valley. */
	double smaller = fmin(k->f[p->peak[best]], k->f[p->peak[best + 1]]);
	double tol = VALLEY_TIE_SHARE * smaller;
	size_t v = kde_valley(k, p->peak[best], p->peak[best + 1], tol);
	const struct latency_mode *ms = &out->modes[slow];
	out->found = true;
	out->threshold_ns = kde_point_ns(k, v);
	snprintf(out->reason, sizeof(out->reason),
		 "threshold %s between the main mode at %s (%.0f%% of calls) and the slow one at %s (%.0f%%)",
		 duration_format(out->threshold_ns, a, sizeof(a)), duration_format(mm->ns, b, sizeof(b)),
		 100 * mm->share, duration_format(ms->ns, c, sizeof(c)), 100 * ms->share);
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
	peaks_merge_insignificant(&p, &k, sorted, n);
	modes_fill(out, &p, &k, sorted, n);
	int rc = modes_place_threshold(out, &p, &k);
	peaks_free(&p);
	free(k.f);
	return rc;
}

bool threshold_equal(const struct threshold *a, const struct threshold *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case THRESHOLD_PERCENTILE:
		return a->percentile == b->percentile;
	case THRESHOLD_ABSOLUTE:
		return a->ns == b->ns;
	case THRESHOLD_AUTO:
		return true;
	}
	return false;
}

uint64_t threshold_resolve(const struct threshold *t, const uint64_t *sorted, size_t n,
			   struct latency_modes *modes_out)
{
	struct latency_modes local;
	struct latency_modes *modes = modes_out ? modes_out : &local;
	memset(modes, 0, sizeof(*modes));
	switch (t->kind) {
	case THRESHOLD_ABSOLUTE:
		return t->ns;
	case THRESHOLD_PERCENTILE:
		return latency_percentile(sorted, n, t->percentile);
	case THRESHOLD_AUTO:
		if (latency_auto_threshold(sorted, n, modes) == 0)
			return modes->threshold_ns;
		return latency_percentile(sorted, n, 95);
	}
	return 0;
}
