#include "latency.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "order.h"
#include "sonde_abi.h" /* sonde_hist_bucket: the kernel's own bucketing */
#include "util.h"

/* ==== summary statistics ================================================== */


/* The index latency_percentile reads in n > 0 ascending values. */
static size_t percentile_index(size_t n, double pct)
{
	if (!(pct > 0)) /* also NaN */
		return 0;
	if (pct >= 100)
		return n - 1;
	double rank = pct * (double)n / 100.0;
	/* 99.9 has no exact binary form, so pct * n can land a hair above a
	 * whole rank; that hair is rounding, not a fraction of a call. */
	size_t r = (size_t)ceil(rank - rank * 1e-12);
	if (r < 1)
		r = 1;
	if (r > n)
		r = n;
	return r - 1;
}

uint64_t latency_percentile(const uint64_t *sorted, size_t n, double pct)
{
	return n ? sorted[percentile_index(n, pct)] : 0;
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
	qsort(d, n, sizeof(*d), order_u64);
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

/* All calls the histogram counts (saturating). */
static uint64_t loglin_total(const uint64_t *counts)
{
	uint64_t all = 0;
	for (unsigned b = 0; b < LATENCY_LOGLIN_BUCKETS; b++)
		all = counts[b] > UINT64_MAX - all ? UINT64_MAX : all + counts[b];
	return all;
}

/* The rank of the call the i-th of m stand-in values is: (i + 0.5) * all /
 * m (every call when m == all). */
static uint64_t loglin_rank(size_t i, size_t m, uint64_t all)
{
	uint64_t rank = m == all ? i : (uint64_t)(((double)i + 0.5) * (double)all / (double)m);
	return rank < all ? rank : all - 1;
}

/* Where a walk through the buckets is: bucket b, `below` calls before it. */
struct loglin_walk {
	unsigned b;
	uint64_t below;
};

/* The value of the call of `rank`, walking on from w (ranks ascend). */
static uint64_t loglin_walk_to(const uint64_t *counts, struct loglin_walk *w, uint64_t rank)
{
	while (w->b < LATENCY_LOGLIN_BUCKETS && w->below + counts[w->b] <= rank)
		w->below += counts[w->b++];
	return loglin_spread(w->b, rank - w->below, counts[w->b]);
}

uint64_t *latency_loglin_durations(const uint64_t *counts, size_t max, size_t *n,
				   uint64_t *total)
{
	uint64_t all = loglin_total(counts);
	if (total)
		*total = all;
	*n = 0;
	if (!all || !max)
		return NULL;
	size_t m = all <= max ? (size_t)all : max;
	uint64_t *d = xmalloc(m * sizeof(*d));
	struct loglin_walk w = {0};
	for (size_t i = 0; i < m; i++)
		d[i] = loglin_walk_to(counts, &w, loglin_rank(i, m, all));
	*n = m;
	return d;
}

uint64_t latency_loglin_count_over(unsigned b, uint64_t count, uint64_t ns)
{
	/* The spread values ascend with their position: find the first over ns. */
	return count - ORDER_PARTITION(count, i, loglin_spread(b, i, count) <= ns);
}

uint64_t latency_loglin_percentile(const uint64_t *counts, size_t max, double pct)
{
	uint64_t all = loglin_total(counts);
	if (!all || !max)
		return 0;
	size_t m = all <= max ? (size_t)all : max;
	struct loglin_walk w = {0};
	return loglin_walk_to(counts, &w, loglin_rank(percentile_index(m, pct), m, all));
}

uint64_t *latency_hist_durations(const uint64_t *counts, size_t *n)
{
	return latency_loglin_durations(counts, LATENCY_DURATIONS_MAX, n, NULL);
}

uint64_t latency_hist_percentile(const uint64_t *counts, double pct)
{
	return latency_loglin_percentile(counts, LATENCY_DURATIONS_MAX, pct);
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
