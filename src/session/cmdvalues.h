/* cmdvalues — the small parsers of a command's values: a number with a
 * maximum, a threshold (percentiles at most PERCENTILE_DECIMALS_MAX
 * decimals, so that every one prints back exactly), a duration, where a
 * FUNC:SUFFIX word splits, a number lacking its unit, a span of time (window,
 * ewma). The parsers of commands (cmdargs) and command_format use them. */
#ifndef SONDE_CMDVALUES_H
#define SONDE_CMDVALUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "latency.h"

#define PERCENTILE_DECIMALS_MAX 12 /* so every percentile prints back exactly */

enum number_result { NUMBER_OK, NUMBER_BAD, NUMBER_TOO_LARGE };

/* Digits only (no sign, no spaces), value <= max. */
enum number_result number_parse(const char *s, uint64_t max, uint64_t *out);

/* threshold_parse, with percentiles limited to PERCENTILE_DECIMALS_MAX
 * decimals: 0, or -1 with one line in err. */
int threshold_word(const char *s, struct threshold *t, char *err, size_t errlen);

bool is_threshold(const char *s);
bool is_duration(const char *s);

/* Where an unquoted FUNC:SUFFIX word splits (the last single colon, as
 * probes_split finds it, with a suffix valid() takes), or -1. */
int colon_split(const char *word, bool (*valid)(const char *));

/* "5", "2.5": a number that lacks its unit. */
bool is_bare_number(const char *s);

enum span_result { SPAN_OK, SPAN_BAD, SPAN_TOO_LARGE };

/* A window or half-life: plain seconds ("10", "2.5"), minutes or hours
 * ("5m", "1.5h"), or a duration_parse duration; exact to the nearest ns. */
enum span_result span_parse(const char *s, uint64_t *ns);

#endif
