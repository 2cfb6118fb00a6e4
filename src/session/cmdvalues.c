/* cmdvalues — the values a command's words hold: numbers, thresholds,
 * durations, FUNC:SUFFIX words, spans of time (command_parse_span). */
#include "cmdvalues.h"

#include <string.h>

#include "cmdwords.h"
#include "errbuf.h"
#include "probes.h"
#include "util.h"

static const char DIGITS[] = "0123456789";

/* Digits only (no sign, no spaces), value <= max. */
enum number_result number_parse(const char *s, uint64_t max, uint64_t *out)
{
	size_t n = strspn(s, DIGITS);
	if (n == 0 || s[n])
		return NUMBER_BAD;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return NUMBER_TOO_LARGE;
		v = v * 10 + d;
	}
	*out = v;
	return NUMBER_OK;
}

/* threshold_parse, with percentiles limited to PERCENTILE_DECIMALS_MAX
 * decimals: up to that, the decimal is exact in a double's arithmetic, so the
 * value prints back to the same double. */
int threshold_word(const char *s, struct threshold *t, char *err, size_t errlen)
{
	if (s[0] == 'p') {
		const char *dot = strchr(s, '.');
		if (dot && strspn(dot + 1, DIGITS) > PERCENTILE_DECIMALS_MAX) {
			char sb[SHOW_MAX + 4];
			return errbuf_set(err, errlen,
					  "bad threshold '%s': a percentile takes at most %d decimals, e.g. "
					  "p99.999",
					  word_show(s, sb), PERCENTILE_DECIMALS_MAX);
		}
	}
	return threshold_parse(s, t, err, errlen);
}

bool is_threshold(const char *s)
{
	struct threshold t;
	return *s && threshold_word(s, &t, NULL, 0) == 0;
}

bool is_duration(const char *s)
{
	uint64_t ns;
	return duration_parse(s, &ns, NULL, 0) == 0;
}

/* Where an unquoted FUNC:SUFFIX word splits (the last single colon, as
 * probes_split finds it, with a valid suffix), or -1. */
int colon_split(const char *word, bool (*valid)(const char *))
{
	int colon = probes_split(word);
	if (colon <= 0 || !word[colon + 1] || !valid(word + colon + 1))
		return -1;
	return colon;
}

/* "5", "2.5": a number that lacks its unit. */
bool is_bare_number(const char *s)
{
	size_t whole = strspn(s, DIGITS), frac = 0;
	const char *p = s + whole;
	if (*p == '.') {
		frac = strspn(p + 1, DIGITS);
		if (!frac)
			return false;
		p += 1 + frac;
	}
	return whole + frac > 0 && !*p;
}

/* A window or half-life: plain seconds ("10", "2.5"), minutes or hours
 * ("5m", "1.5h"), or a duration_parse duration. Exact: decimals are scaled in
 * integers and rounded to the nearest ns. */
enum span_result span_parse(const char *s, uint64_t *ns)
{
	size_t nwhole = strspn(s, DIGITS), nfrac = 0;
	const char *frac = s + nwhole, *end = frac;
	bool number = nwhole > 0;
	if (*end == '.') {
		frac = end + 1;
		nfrac = strspn(frac, DIGITS);
		end = frac + nfrac;
		number = nfrac > 0; /* "5." is not a number, ".5" is */
	}
	uint64_t unit = 0;
	if (strcmp(end, "") == 0)
		unit = 1000000000ULL;
	else if (strcmp(end, "m") == 0)
		unit = 60 * 1000000000ULL;
	else if (strcmp(end, "h") == 0)
		unit = 3600 * 1000000000ULL;
	if (!number || !unit) {
		if (duration_parse(s, ns, NULL, 0) == 0)
			return SPAN_OK;
		/* duration_parse refuses bad text and huge values alike: a number
		 * with a unit it knows was too large */
		char one[16];
		if (number && strlen(end) < 8) {
			snprintf(one, sizeof(one), "1%s", end);
			if (duration_parse(one, ns, NULL, 0) == 0)
				return SPAN_TOO_LARGE;
		}
		return SPAN_BAD;
	}
	unsigned __int128 whole = 0;
	for (size_t i = 0; i < nwhole; i++) {
		whole = whole * 10 + (unsigned)(s[i] - '0');
		if (whole > UINT64_MAX)
			return SPAN_TOO_LARGE;
	}
	whole *= unit;
	unsigned __int128 f = 0, denom = 1;
	for (size_t i = 0; i < nfrac && i < 18; i++) { /* 18 digits resolve 0.1ns of an hour */
		f = f * 10 + (unsigned)(frac[i] - '0');
		denom *= 10;
	}
	unsigned __int128 total = whole + (f * unit + denom / 2) / denom;
	if (total > UINT64_MAX)
		return SPAN_TOO_LARGE;
	*ns = (uint64_t)total;
	return SPAN_OK;
}

int command_parse_span(const char *s, uint64_t *ns)
{
	return s && span_parse(s, ns) == SPAN_OK ? 0 : -1;
}
