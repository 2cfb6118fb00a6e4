#include "command.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "errbuf.h"
#include "probes.h"
#include "session.h"
#include "util.h"

#define MAX_WORDS 32 /* stored: trace takes a spec of many words, the others at most 4 */
#define SHOW_MAX 40                /* bytes of a word quoted in an error */
#define PERCENTILE_DECIMALS_MAX 12 /* so every percentile prints back exactly */
#define SUGGEST_LEN_MAX 32         /* longer words are not typos of a name */

/* ==== errors ================================================================ */

/* A word as shown inside an error: at most SHOW_MAX bytes (cut at a UTF-8
 * character boundary), then "...". */
static const char *show(const char *word, char buf[SHOW_MAX + 4])
{
	size_t n = strlen(word);
	if (n <= SHOW_MAX)
		return word;
	n = SHOW_MAX;
	while (n > 0 && ((unsigned char)word[n] & 0xc0) == 0x80)
		n--;
	memcpy(buf, word, n);
	memcpy(buf + n, "...", 4);
	return buf;
}

/* ==== words ================================================================= */

struct words {
	size_t n;                /* words on the line, stored or not */
	char *w[MAX_WORDS];      /* the first MAX_WORDS */
	bool quoted[MAX_WORDS];  /* some part of the word was in quotes */
	char buf[COMMAND_LINE_MAX + MAX_WORDS + 1];
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Control characters other than tab (line breaks are checked before). */
static bool is_control(unsigned char c)
{
	return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* Splits line[0..len) into words: blanks separate, "..." quotes (with \" and
 * \\), '#' at the start of a word ends the line. */
static int words_split(const char *line, size_t len, struct words *w, char *err, size_t errlen)
{
	size_t i = 0, used = 0;
	w->n = 0;
	for (;;) {
		while (i < len && is_blank(line[i]))
			i++;
		if (i == len || line[i] == '#')
			return 0;
		bool store = w->n < MAX_WORDS, quoted = false;
		char *out = w->buf + used;
		size_t k = 0;
		while (i < len && !is_blank(line[i])) {
			if (line[i] != '"') {
				if (store)
					out[k++] = line[i];
				i++;
				continue;
			}
			quoted = true;
			i++;
			for (;;) {
				if (i == len)
					return errbuf_set(err, errlen,
							  "unterminated quote: end the quoted word with \", "
							  "e.g. trace \"operator new(unsigned long)\"");
				char c = line[i];
				if (c == '"') {
					i++;
					break;
				}
				if (c == '\\') {
					if (i + 1 == len)
						return errbuf_set(err, errlen,
								  "unterminated quote: the line ends in a backslash "
								  "inside a quoted word; end it with \"");
					unsigned char e = (unsigned char)line[i + 1];
					if (e != '"' && e != '\\') {
						if (e > 0x20 && e < 0x7f)
							return errbuf_set(err, errlen,
									  "unknown escape \\%c in a quoted word: only \\\" "
									  "and \\\\ are escapes (\\\\ for a backslash)",
									  e);
						return errbuf_set(err, errlen,
								  "unknown escape \\ followed by byte 0x%02x in a "
								  "quoted word: only \\\" and \\\\ are escapes",
								  e);
					}
					c = (char)e;
					i++;
				}
				if (store)
					out[k++] = c;
				i++;
			}
		}
		if (store) {
			out[k] = 0;
			w->w[w->n] = out;
			w->quoted[w->n] = quoted;
			used += k + 1;
		}
		w->n++;
	}
}

/* ==== small parsers ========================================================= */

static const char DIGITS[] = "0123456789";

enum number_result { NUMBER_OK, NUMBER_BAD, NUMBER_TOO_LARGE };

/* Digits only (no sign, no spaces), value <= max. */
static enum number_result number_parse(const char *s, uint64_t max, uint64_t *out)
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
static int threshold_word(const char *s, struct threshold *t, char *err, size_t errlen)
{
	if (s[0] == 'p') {
		const char *dot = strchr(s, '.');
		if (dot && strspn(dot + 1, DIGITS) > PERCENTILE_DECIMALS_MAX) {
			char sb[SHOW_MAX + 4];
			return errbuf_set(err, errlen,
					  "bad threshold '%s': a percentile takes at most %d decimals, e.g. "
					  "p99.999",
					  show(s, sb), PERCENTILE_DECIMALS_MAX);
		}
	}
	return threshold_parse(s, t, err, errlen);
}

static bool is_threshold(const char *s)
{
	struct threshold t;
	return *s && threshold_word(s, &t, NULL, 0) == 0;
}

static bool is_duration(const char *s)
{
	uint64_t ns;
	return duration_parse(s, &ns, NULL, 0) == 0;
}

/* Where an unquoted FUNC:SUFFIX word splits (the last single colon, as
 * probes_split finds it, with a valid suffix), or -1. */
static int colon_split(const char *word, bool (*valid)(const char *))
{
	int colon = probes_split(word);
	if (colon <= 0 || !word[colon + 1] || !valid(word + colon + 1))
		return -1;
	return colon;
}

/* "5", "2.5": a number that lacks its unit. */
static bool is_bare_number(const char *s)
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

enum span_result { SPAN_OK, SPAN_BAD, SPAN_TOO_LARGE };

/* A window or half-life: plain seconds ("10", "2.5"), minutes or hours
 * ("5m", "1.5h"), or a duration_parse duration. Exact: decimals are scaled in
 * integers and rounded to the nearest ns. */
static enum span_result span_parse(const char *s, uint64_t *ns)
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

/* ==== suggestions =========================================================== */

/* Optimal string alignment distance (a swap of neighbours counts 1),
 * ASCII case-insensitive. Both strings at most SUGGEST_LEN_MAX bytes. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t d[SUGGEST_LEN_MAX + 1][SUGGEST_LEN_MAX + 1];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[n][m];
}

static bool has_prefix_nocase(const char *name, const char *prefix)
{
	for (; *prefix; prefix++, name++)
		if (tolower((unsigned char)*prefix) != tolower((unsigned char)*name))
			return false;
	return true;
}

/* The candidate nearest to word: the smallest edit distance when it is at
 * most 1 (names of up to 3 letters) or 2; else the shortest name the word
 * (2 letters or more) begins; else NULL. */
static const char *suggest(const char *word, const char *const *names, size_t count)
{
	size_t len = strlen(word);
	if (len == 0 || len > SUGGEST_LEN_MAX)
		return NULL;
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		size_t d = edit_distance(word, names[i]);
		size_t limit = strlen(names[i]) <= 3 ? 1 : 2;
		if (d <= limit && d < best_d) {
			best = names[i];
			best_d = d;
		}
	}
	if (best)
		return best;
	if (len < 2)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) > len && has_prefix_nocase(names[i], word) &&
		    (!best || strlen(names[i]) < strlen(best)))
			best = names[i];
	return best;
}

/* ==== the commands ========================================================== */

struct command_info;
typedef int (*command_parser)(const struct command_info *ci, const struct words *w,
			      struct command *c, char *err, size_t errlen);

struct command_info {
	const char *name;
	enum command_kind kind;  /* the main kind; parsers pick variants */
	command_parser parse;
	const char *argname;     /* of a one-word argument: "FUNC", "FILE" */
	const char *synopsis;    /* in the list of all commands */
	const char *summary;     /* ditto */
	const char *takes;       /* what its arguments are; NULL: none */
	const char *example;     /* the right usage, shown with errors */
	const char *detail;      /* help COMMAND: after "usage:" + synopsis */
};

static int need(const struct command_info *ci, char *err, size_t errlen)
{
	return errbuf_set(err, errlen, "%s needs %s: %s", ci->name, ci->takes, ci->example);
}

static int too_many(const struct command_info *ci, char *err, size_t errlen)
{
	if (!ci->takes)
		return errbuf_set(err, errlen, "%s takes no arguments: %s", ci->name, ci->example);
	return errbuf_set(err, errlen,
			  "too many words for %s (it takes %s; quote a name that has spaces): %s",
			  ci->name, ci->takes, ci->example);
}

/* A FUNC/EVENT/NAME/FILE word into c->arg. */
static int take_arg(const struct command_info *ci, const char *what, const char *word,
		    struct command *c, char *err, size_t errlen)
{
	size_t n = strlen(word);
	if (n == 0)
		return errbuf_set(err, errlen,
				  "%s needs a non-empty %s: %s", ci->name, what, ci->example);
	if (n >= sizeof(c->arg)) {
		char sb[SHOW_MAX + 4];
		return errbuf_set(err, errlen,
				  "%s '%s' is too long for %s (%zu bytes; at most %zu)", what,
				  show(word, sb), ci->name, n, sizeof(c->arg) - 1);
	}
	memcpy(c->arg, word, n + 1);
	return 0;
}

/* trace, untrace, in, save: one word. */
static int parse_one_arg(const struct command_info *ci, const struct words *w, struct command *c,
			 char *err, size_t errlen)
{
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	c->kind = ci->kind;
	return take_arg(ci, ci->argname, w->w[1], c, err, errlen);
}

/* trace LOCATION [VAR...] [if EXPR]: the words after "trace", joined by
 * spaces (capexpr.h splits the location from the rest). */
static int parse_trace(const struct command_info *ci, const struct words *w, struct command *c,
		       char *err, size_t errlen)
{
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > MAX_WORDS)
		return too_many(ci, err, errlen);
	char spec[COMMAND_LINE_MAX + MAX_WORDS + 1];
	size_t len = 0;
	for (size_t i = 1; i < w->n; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%s", i > 1 ? " " : "",
					w->w[i]);
	c->kind = ci->kind;
	return take_arg(ci, ci->argname, spec, c, err, errlen);
}

/* all, reset, status. */
static int parse_no_arg(const struct command_info *ci, const struct words *w, struct command *c,
			char *err, size_t errlen)
{
	if (w->n > 1)
		return too_many(ci, err, errlen);
	c->kind = ci->kind;
	return 0;
}

static bool is_off(const struct words *w, size_t i)
{
	return !w->quoted[i] && strcmp(w->w[i], "off") == 0;
}

static int parse_sample(const struct command_info *ci, const struct words *w, struct command *c,
			char *err, size_t errlen)
{
	static const char *const keywords[] = {"off", "event"};
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need(ci, err, errlen);
	const char *a = w->w[1];
	if (strcmp(a, "off") == 0) {
		if (w->n > 2)
			return errbuf_set(err, errlen,
					  "too many words for sample off: it takes nothing more: sample off");
		c->kind = CMD_SAMPLE_OFF;
		return 0;
	}
	if (strcmp(a, "off-cpu") == 0) {
		if (w->n == 2) {
			c->kind = CMD_SAMPLE_OFFCPU;
			return 0;
		}
		if (w->n == 3 && strcmp(w->w[2], "off") == 0) {
			c->kind = CMD_SAMPLE_OFFCPU_OFF;
			return 0;
		}
		return errbuf_set(err, errlen,
				  "sample off-cpu takes nothing or off: sample off-cpu or sample "
				  "off-cpu off");
	}
	if (strcmp(a, "threads") == 0) {
		c->kind = CMD_SAMPLE_THREADS;
		c->hz = 0;
		if (w->n == 2)
			return 0;
		if (w->n == 3 && is_off(w, 2)) {
			c->kind = CMD_SAMPLE_THREADS_OFF;
			return 0;
		}
		if (w->n == 3 && number_parse(w->w[2], SESSION_THREADS_HZ_MAX, &c->hz) == NUMBER_OK &&
		    c->hz > 0)
			return 0;
		return errbuf_set(err, errlen,
				  "sample threads takes nothing, passes a second (1 to %d) or off: "
				  "sample threads, sample threads 20 or sample threads off",
				  SESSION_THREADS_HZ_MAX);
	}
	if (strcmp(a, "event") == 0) {
		if (w->n < 3)
			return errbuf_set(err, errlen,
					  "sample event needs EVENT: sample event page-faults (or a tracepoint: "
					  "sample event sched:sched_switch)");
		if (w->n > 3)
			return errbuf_set(err, errlen,
					  "too many words for sample event (it takes one EVENT): sample event "
					  "page-faults");
		c->kind = CMD_SAMPLE_EVENT;
		return take_arg(ci, "EVENT", w->w[2], c, err, errlen);
	}
	uint64_t hz;
	switch (number_parse(a, COMMAND_HZ_MAX, &hz)) {
	case NUMBER_OK:
		if (hz == 0)
			return errbuf_set(err, errlen,
					  "sampling rate 0 is out of range: HZ is 1 to %d (sample off stops "
					  "sampling): sample 999",
					  COMMAND_HZ_MAX);
		if (w->n > 2)
			return errbuf_set(err, errlen,
					  "too many words for sample %s: it takes one HZ: sample 999",
					  a);
		c->kind = CMD_SAMPLE_HZ;
		c->hz = hz;
		return 0;
	case NUMBER_TOO_LARGE:
		return errbuf_set(err, errlen,
				  "sampling rate %s is out of range: HZ is 1 to %d samples per second: sample 999",
				  show(a, sb), COMMAND_HZ_MAX);
	case NUMBER_BAD:
		break;
	}
	const char *near = suggest(a, keywords, 2);
	if (near && !isdigit((unsigned char)a[0]))
		return errbuf_set(err, errlen,
				  "unknown sample setting '%s' (did you mean %s?): %s", show(a, sb),
				  near, ci->example);
	return errbuf_set(err, errlen,
			  "bad sampling rate '%s': give HZ (a whole number, 1 to %d), off, or event EVENT: %s",
			  show(a, sb), COMMAND_HZ_MAX, ci->example);
}

static int parse_sample_in(const struct command_info *ci, const struct words *w, struct command *c,
			   char *err, size_t errlen)
{
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	if (is_off(w, 1)) {
		c->kind = CMD_SAMPLE_IN_OFF;
		return 0;
	}
	c->kind = CMD_SAMPLE_IN;
	return take_arg(ci, "FUNC", w->w[1], c, err, errlen);
}

static int parse_sample_when(const struct command_info *ci, const struct words *w,
			     struct command *c, char *err, size_t errlen)
{
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	if (is_off(w, 1)) {
		c->kind = CMD_SAMPLE_WHEN_OFF;
		return 0;
	}
	c->kind = CMD_SAMPLE_WHEN;
	return take_arg(ci, "FILE:LINE", w->w[1], c, err, errlen);
}

static int parse_sample_slow(const struct command_info *ci, const struct words *w, struct command *c,
			     char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4], sb2[SHOW_MAX + 4], derr[256];
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 3)
		return too_many(ci, err, errlen);
	if (w->n == 2) {
		if (is_off(w, 1)) {
			c->kind = CMD_SAMPLE_SLOW_OFF;
			return 0;
		}
		int colon = w->quoted[1] ? -1 : colon_split(w->w[1], is_duration);
		if (colon < 0)
			return errbuf_set(err, errlen,
					  "sample-slow needs FUNC and a duration: %s", ci->example);
		char func[COMMAND_LINE_MAX + 1];
		memcpy(func, w->w[1], (size_t)colon);
		func[colon] = 0;
		c->kind = CMD_SAMPLE_SLOW;
		if (take_arg(ci, "FUNC", func, c, err, errlen))
			return -1;
		duration_parse(w->w[1] + colon + 1, &c->ns, NULL, 0);
		return 0;
	}
	c->kind = CMD_SAMPLE_SLOW;
	if (take_arg(ci, "FUNC", w->w[1], c, err, errlen))
		return -1;
	if (is_bare_number(w->w[2]))
		return errbuf_set(err, errlen,
				  "sample-slow: duration '%s' needs a unit (ns, us, ms or s): sample-slow "
				  "handle_request %sms",
				  show(w->w[2], sb), show(w->w[2], sb2));
	if (duration_parse(w->w[2], &c->ns, derr, sizeof(derr)))
		return errbuf_set(err, errlen,
				  "sample-slow %s: %s (sample-slow handle_request 5ms)",
				  show(w->w[1], sb), derr);
	return 0;
}

static int parse_view(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char terr[256];
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 3)
		return too_many(ci, err, errlen);
	c->kind = ci->kind;
	threshold_parse(NULL, &c->threshold, NULL, 0); /* the default, p95 */
	if (w->n == 2) {
		int colon = w->quoted[1] ? -1 : colon_split(w->w[1], is_threshold);
		if (colon < 0)
			return take_arg(ci, "FUNC", w->w[1], c, err, errlen);
		char func[COMMAND_LINE_MAX + 1];
		memcpy(func, w->w[1], (size_t)colon);
		func[colon] = 0;
		if (take_arg(ci, "FUNC", func, c, err, errlen))
			return -1;
		threshold_word(w->w[1] + colon + 1, &c->threshold, NULL, 0);
		c->has_threshold = true;
		return 0;
	}
	if (take_arg(ci, "FUNC", w->w[1], c, err, errlen))
		return -1;
	if (is_bare_number(w->w[2])) {
		char sb[SHOW_MAX + 4], sb2[SHOW_MAX + 4], sb3[SHOW_MAX + 4];
		return errbuf_set(err, errlen,
				  "%s: bad threshold '%s': a bare number is ambiguous; write p%s for a "
				  "percentile or %sms for a duration (or auto)",
				  ci->name, show(w->w[2], sb), show(w->w[2], sb2), show(w->w[2], sb3));
	}
	if (threshold_word(w->w[2], &c->threshold, terr, sizeof(terr)))
		return errbuf_set(err, errlen, "%s: %s", ci->name, terr);
	c->has_threshold = true;
	return 0;
}

/* window, ewma. */
static int parse_span(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	const char *what = ci->kind == CMD_WINDOW ? "window" : "half-life";
	uint64_t ns = 0;
	switch (span_parse(w->w[1], &ns)) {
	case SPAN_OK:
		break;
	case SPAN_TOO_LARGE:
		return errbuf_set(err, errlen,
				  "%s '%s' is too large: %s", what, show(w->w[1], sb), ci->example);
	case SPAN_BAD:
		return errbuf_set(err, errlen,
				  "bad %s '%s': use seconds (10), or a number with s, m or h (30s, 5m, 1h), or "
				  "ms/us/ns: %s",
				  what, show(w->w[1], sb), ci->example);
	}
	if (ns < 1000000000ULL)
		return errbuf_set(err, errlen,
				  "%s '%s' is too short: at least 1s (samples are kept in 1-second buckets): %s",
				  what, show(w->w[1], sb), ci->example);
	c->kind = ci->kind;
	c->ns = ns;
	return 0;
}

static int parse_filter(const struct command_info *ci, const struct words *w, struct command *c,
			char *err, size_t errlen)
{
	static const char *const keywords[] = {"pid", "tid", "comm", "clear"};
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need(ci, err, errlen);
	const char *a = w->w[1];
	if (strcmp(a, "clear") == 0) {
		if (w->n > 2)
			return errbuf_set(err, errlen,
					  "too many words for filter clear: it takes nothing more: filter clear");
		c->kind = CMD_FILTER_CLEAR;
		return 0;
	}
	if (strcmp(a, "pid") == 0 || strcmp(a, "tid") == 0) {
		/* The same rules for both: a positive pid_t. */
		bool pid = a[0] == 'p';
		const char *what = pid ? "process" : "thread";
		const char *eg = pid ? "filter pid 4242" : "filter tid 4243";
		if (w->n < 3)
			return errbuf_set(err, errlen, "filter %s needs a %s id: %s", a, what, eg);
		if (w->n > 3)
			return errbuf_set(err, errlen, "too many words for filter %s (it takes one %s id): %s",
				    a, what, eg);
		uint64_t id;
		switch (number_parse(w->w[2], INT32_MAX, &id)) {
		case NUMBER_OK:
			if (id == 0)
				return errbuf_set(err, errlen, "bad %s id '0': %s ids start at 1: %s", what,
					    what, eg);
			c->kind = pid ? CMD_FILTER_PID : CMD_FILTER_TID;
			*(pid ? &c->pid : &c->tid) = (int64_t)id;
			return 0;
		case NUMBER_TOO_LARGE:
			return errbuf_set(err, errlen, "bad %s id '%s': too large (at most %d): %s", what,
				    show(w->w[2], sb), INT32_MAX, eg);
		case NUMBER_BAD:
			break;
		}
		return errbuf_set(err, errlen, "bad %s id '%s': give a positive whole number: %s", what,
			    show(w->w[2], sb), eg);
	}
	if (strcmp(a, "comm") == 0) {
		if (w->n < 3)
			return errbuf_set(err, errlen,
					  "filter comm needs a thread NAME: filter comm nginx");
		if (w->n > 3)
			return errbuf_set(err, errlen,
					  "too many words for filter comm (it takes one NAME; quote a name that "
					  "has spaces): filter comm \"Web Content\"");
		size_t n = strlen(w->w[2]);
		if (n > COMMAND_COMM_MAX) {
			char cut[COMMAND_COMM_MAX + 1];
			memcpy(cut, w->w[2], COMMAND_COMM_MAX);
			cut[COMMAND_COMM_MAX] = 0;
			return errbuf_set(err, errlen,
					  "thread name '%s' is longer than %d bytes, and the kernel keeps only "
					  "the first %d (filter comm \"%s\" would match)",
					  show(w->w[2], sb), COMMAND_COMM_MAX, COMMAND_COMM_MAX, cut);
		}
		c->kind = CMD_FILTER_COMM;
		return take_arg(ci, "NAME", w->w[2], c, err, errlen);
	}
	const char *near = suggest(a, keywords, 4);
	if (near)
		return errbuf_set(err, errlen, "unknown filter '%s' (did you mean %s?): %s", show(a, sb), near,
			    ci->example);
	return errbuf_set(err, errlen, "unknown filter '%s': use pid N, tid N, comm NAME or clear: %s",
		    show(a, sb),
		    ci->example);
}

static const struct command_info *info_find(const char *name);
static const char *suggest_command(const char *word);

static int parse_help(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4];
	if (w->n > 2)
		return too_many(ci, err, errlen);
	c->kind = CMD_HELP;
	if (w->n == 1)
		return 0;
	if (!info_find(w->w[1])) {
		const char *near = suggest_command(w->w[1]);
		if (near)
			return errbuf_set(err, errlen,
					  "no command '%s' to help with: did you mean %s? (help lists "
					  "the commands)", show(w->w[1], sb), near);
		return errbuf_set(err, errlen,
				  "no command '%s' to help with: help lists the commands",
				  show(w->w[1], sb));
	}
	return take_arg(ci, "COMMAND", w->w[1], c, err, errlen);
}

static const struct command_info commands[] = {
	{"trace", CMD_TRACE, parse_trace, "FUNC", "trace FUNC [VAR...] [if EXPR]",
	 "trace calls of FUNC (also LIB:FUNC, globs)", "FUNC",
	 "trace handle_request",
	 "Traces every call of FUNC (a uprobe and a uretprobe) while the session runs:\n"
	 "calls, durations, and which samples were taken inside each call.\n"
	 "FUNC is a function of the target's executable, BINARY:FUNC, LIB:FUNC\n"
	 "(libc:malloc), or a glob (handle_*: one probe per match). All of them or\n"
	 "none: at most 252 are traced at once, and a glob naming more is refused.\n"
	 "An IFUNC (libc:strlen) is traced at the implementation the target uses.\n"
	 "The entry point (_start), functions that never return and symbols inside\n"
	 "an instruction are refused; a glob leaves them out and says so.\n"
	 "Quote a name that has spaces: trace \"operator new(unsigned long)\".\n"
	 "VARs are read at each call's entry (C paths: len, req->hdr.size, buf[3], *p,\n"
	 "&x, globals; char arrays and char * as strings); `if EXPR` keeps only the\n"
	 "calls where it holds (comparisons, && || !, arithmetic), decided in the kernel\n"
	 "at their entry: the probe's calls, latencies, slow calls and the samples in\n"
	 "them are those calls (`status` says how many entered in all).\n"
	 "FILE:LINE (also BINARY:FILE:LINE, LIB:FILE:LINE) traces a source line:\n"
	 "its hits, at every inlined or out-of-line copy of its code, and in which\n"
	 "traced calls it ran (sonde probe -e BINARY --lines FUNC lists them); VARs\n"
	 "after a line are read at each hit, from what is in scope there (sonde probe\n"
	 "-e BINARY --vars FILE:LINE), and a hit failing `if EXPR` sends nothing.\n"
	 "e.g.  trace handle_request\n"
	 "      trace libc:malloc\n"
	 "      trace handle_request req->hdr.size req->path if req->hdr.size > 4096\n"
	 "      trace server.c:1312\n"
	 "      trace server.c:1312 len fd if len > 4096"},
	{"untrace", CMD_UNTRACE, parse_one_arg, "FUNC", "untrace FUNC", "stop tracing FUNC", "FUNC",
	 "untrace handle_request",
	 "Detaches the probes of FUNC (as it was given to trace). The calls seen so far\n"
	 "stay in the data. It answers at once: the kernel removes the uprobes in the\n"
	 "background, and their places are free for new probes.\n"
	 "e.g.  untrace handle_request"},
	{"sample", CMD_SAMPLE_HZ, parse_sample, NULL,
	 "sample HZ|off|event E|off-cpu",
	 "rate, stop, event, off-CPU, threads",
	 "a rate in Hz, off, event EVENT, off-cpu or threads",
	 "sample 999, sample off, sample event page-faults, sample off-cpu or sample threads",
	 "sample HZ: take HZ samples per second per CPU (1 to 100000) on the current\n"
	 "  event (cpu-clock unless changed).\n"
	 "sample off: stop sampling; tracing goes on.\n"
	 "sample event EVENT: sample on EVENT: cpu-clock, task-clock, page-faults,\n"
	 "  minor-faults, major-faults, context-switches, cpu-migrations, or a\n"
	 "  tracepoint category:name (sched:sched_switch).\n"
	 "sample off-cpu: also record where threads wait (record --off-cpu): an\n"
	 "  off-CPU interval each time a target thread is switched out and back in;\n"
	 "  sample off-cpu off stops it.\n"
	 "sample threads [HZ]: also sample every target thread's state, running or\n"
	 "  not (record --threads, sonde threads): HZ passes a second over all\n"
	 "  threads (default 10, at most 1000), each thread's state, system call,\n"
	 "  traced call in flight and last stack; save keeps them (table\n"
	 "  thread_samples). sample threads off stops it.\n"
	 "e.g.  sample 999\n"
	 "      sample event sched:sched_switch"},
	{"sample-in", CMD_SAMPLE_IN, parse_sample_in, NULL, "sample-in FUNC | off",
	 "sample only while FUNC runs on the thread", "FUNC or off",
	 "sample-in handle_request or sample-in off",
	 "Samples only while FUNC runs on the thread (decided in the kernel, so\n"
	 "overhead and data shrink too). FUNC is traced for the purpose if it is not\n"
	 "already. sample-in off samples everywhere again. (A function named off:\n"
	 "sample-in \"off\".)\n"
	 "e.g.  sample-in handle_request"},
	{"sample-when", CMD_SAMPLE_WHEN, parse_sample_when, NULL, "sample-when FILE:LINE | off",
	 "sample only in calls during which a line ran", "FILE:LINE or off",
	 "sample-when server.c:1312 or sample-when off",
	 "Samples only in calls of the traced functions during which the line\n"
	 "FILE:LINE (also BINARY:FILE:LINE) has run: a hit marks the innermost\n"
	 "traced call in flight, and the calls around it once it returns; the mark\n"
	 "ends with the call. Decided in the kernel. The line is traced for the\n"
	 "purpose if it is not already; trace the function too.\n"
	 "sample-when off samples everywhere again.\n"
	 "e.g.  sample-when server.c:1312"},
	{"sample-slow", CMD_SAMPLE_SLOW, parse_sample_slow, NULL, "sample-slow FUNC DUR | off",
	 "sample only once a call of FUNC runs past DUR", "FUNC and a duration",
	 "sample-slow handle_request 5ms or sample-slow off",
	 "Samples only once the current call of FUNC has run longer than DUR, a\n"
	 "duration with its unit (750us, 5ms, 1.5s), decided in the kernel. FUNC is\n"
	 "traced for the purpose if it is not already. FUNC:DUR works too.\n"
	 "sample-slow off samples everywhere again.\n"
	 "e.g.  sample-slow handle_request 5ms"},
	{"in", CMD_VIEW_IN, parse_one_arg, "FUNC", "in FUNC", "view the samples taken inside calls of FUNC",
	 "FUNC", "in handle_request",
	 "Views show the samples taken while a call of FUNC was running on their\n"
	 "thread. all goes back to every sample.\n"
	 "e.g.  in handle_request"},
	{"slow", CMD_VIEW_SLOW, parse_view, NULL, "slow FUNC [THRESHOLD]",
	 "view samples in calls slower than THRESHOLD",
	 "FUNC and optionally a THRESHOLD", "slow handle_request or slow handle_request p99",
	 "Views show the samples inside calls of FUNC slower than THRESHOLD, and\n"
	 "their difference against the other calls. THRESHOLD: p95 (the default),\n"
	 "pNN or pNN.N, a duration (750us, 5ms, 1.5s), or auto (the valley between\n"
	 "the typical calls and the slow ones). It is resolved over the data in view,\n"
	 "so changing it needs no new data. FUNC:THRESHOLD works too.\n"
	 "e.g.  slow handle_request\n"
	 "      slow handle_request auto"},
	{"fast", CMD_VIEW_FAST, parse_view, NULL, "fast FUNC [THRESHOLD]",
	 "view samples in the other calls of FUNC", "FUNC and optionally a THRESHOLD",
	 "fast handle_request or fast handle_request 2ms",
	 "Views show the samples inside calls of FUNC that are not slower than\n"
	 "THRESHOLD: the complement of slow within FUNC's calls. THRESHOLD as for\n"
	 "slow (p95 by default).\n"
	 "e.g.  fast handle_request 2ms"},
	{"all", CMD_VIEW_ALL, parse_no_arg, NULL, "all", "view every sample again (undo in/slow/fast)",
	 NULL, "all", "Views show every sample again (undoes in, slow and fast; filters stay).\n"},
	{"window", CMD_WINDOW, parse_span, NULL, "window DURATION", "views cover the last DURATION",
	 "a DURATION", "window 10s",
	 "Views cover the last DURATION of data: seconds (10, 2.5), a number with\n"
	 "s, m or h (30s, 5m, 1h), or ms/us/ns; at least 1s, as samples are kept\n"
	 "in 1-second buckets.\n"
	 "e.g.  window 10s\n"
	 "      window 5m"},
	{"ewma", CMD_EWMA, parse_span, NULL, "ewma HALFLIFE",
	 "views decay all data with this half-life", "a HALFLIFE", "ewma 30s",
	 "Views show an exponentially weighted average of all the data, in which\n"
	 "data HALFLIFE old counts half. HALFLIFE as for window (at least 1s).\n"
	 "window goes back to a sliding window.\n"
	 "e.g.  ewma 30s"},
	{"filter", CMD_FILTER_TID, parse_filter, NULL, "filter pid|tid N|comm NAME|clear",
	 "one process, thread or thread name",
	 "pid N, tid N, comm NAME or clear", "filter tid 4243, filter comm nginx or filter clear",
	 "filter pid N: views show only the samples of process N.\n"
	 "filter tid N: only the samples of thread N.\n"
	 "filter comm NAME: only threads named NAME (at most 15 bytes: the kernel\n"
	 "  keeps no more of a name; quote a name with spaces).\n"
	 "filter clear: no filters. A filter replaces the one before.\n"
	 "The latest slow calls and `by` are of the filtered threads' calls too.\n"
	 "e.g.  filter tid 4243\n"
	 "      filter comm \"Web Content\""},
	{"reset", CMD_RESET, parse_no_arg, NULL, "reset", "drop the data collected so far", NULL,
	 "reset", "Drops the samples and calls collected so far; probes and settings stay.\n"},
	{"save", CMD_SAVE, parse_one_arg, "FILE", "save FILE", "write the data so far as a recording",
	 "a FILE", "save run.sonde",
	 "Writes the data collected so far to FILE, a .sonde recording (sonde report\n"
	 "and sonde flame read it). FILE is a regular file, replaced when complete;\n"
	 "devices, FIFOs and symbolic links are refused. When FILE cannot be written\n"
	 "(a full disk), the recording stays in memory and the next save writes it to\n"
	 "the FILE it names; one still unsaved when the session ends goes to $TMPDIR\n"
	 "(or /tmp).\n"
	 "e.g.  save run.sonde"},
	{"by", CMD_BY, parse_one_arg, "VAR", "by VAR", "split the view's calls by a captured value",
	 "a VAR", "by req->color",
	 "With a view on a traced function (in, slow, fast FUNC) that captures VAR\n"
	 "(trace 'FUNC VAR'): FUNC's calls over the data held, split by the value VAR\n"
	 "had at their entry: per value, its calls, its calls the view takes, and the\n"
	 "samples the view takes inside them.\n"
	 "e.g.  slow handle_request p95\n"
	 "      by req->color"},
	{"status", CMD_STATUS, parse_no_arg, NULL, "status",
	 "probes, sampling, view, window and filters", NULL, "status",
	 "Shows the probes, the sampling settings, the view, the window and the\n"
	 "filters, and how much was collected and dropped.\n"},
	{"threads", CMD_THREADS, parse_no_arg, NULL, "threads",
	 "the thread table (sample threads first)", NULL, "threads",
	 "Shows the last pass of the thread-state sampler (sample threads turns it\n"
	 "on), as sonde threads does: every target thread by state (running,\n"
	 "runnable, disk, uninterruptible, sleeping, stopped), with the time in it,\n"
	 "the system call it is in and the time in it, the traced call in flight and\n"
	 "its elapsed time, and the stack it last left the CPU with (innermost\n"
	 "first). A time that began before sonde did is a lower bound (\">1.20s\").\n"
	 "e.g.  sample threads\n"
	 "      threads"},
	{"help", CMD_HELP, parse_help, NULL, "help [COMMAND]", "list the commands, or one in detail",
	 "an optional COMMAND", "help or help slow",
	 "help lists the commands; help COMMAND shows one in detail.\n"
	 "Syntax: one command per line, words separated by spaces. Quote a word\n"
	 "that has spaces: \"operator new(unsigned long)\" (inside quotes \\\" is a quote\n"
	 "and \\\\ a backslash). # starts a comment.\n"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command_info *info_find(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static const char *suggest_command(const char *word)
{
	const char *names[NCOMMANDS];
	for (size_t i = 0; i < NCOMMANDS; i++)
		names[i] = commands[i].name;
	return suggest(word, names, NCOMMANDS);
}

static void command_list(char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < NCOMMANDS && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "", commands[i].name);
}

/* ==== parse ================================================================= */

int command_parse(const char *line, struct command *cmd, char *err, size_t errlen)
{
	memset(cmd, 0, sizeof(*cmd));
	if (err && errlen)
		err[0] = 0;
	if (!line)
		return 0;

	size_t len = strnlen(line, COMMAND_LINE_MAX + 3);
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	if (len > COMMAND_LINE_MAX) {
		size_t total = len + strlen(line + len);
		return errbuf_set(err, errlen,
				  "line too long (%zu bytes; at most %d)", total, COMMAND_LINE_MAX);
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];
		if (ch == '\n' || ch == '\r')
			return errbuf_set(err, errlen,
					  "more than one line: give one command per line");
		if (is_control(ch))
			return errbuf_set(err, errlen,
					  "control character 0x%02x at byte %zu: a command is printable text", ch,
					  i + 1);
	}

	struct words w;
	if (words_split(line, len, &w, err, errlen))
		return -1;
	if (w.n == 0)
		return 0;

	const struct command_info *ci = info_find(w.w[0]);
	if (!ci) {
		char sb[SHOW_MAX + 4], list[256];
		const char *near = suggest_command(w.w[0]);
		if (near)
			return errbuf_set(err, errlen,
					  "unknown command '%s': did you mean %s? (help lists the commands)",
					  show(w.w[0], sb), near);
		command_list(list, sizeof(list));
		return errbuf_set(err, errlen,
				  "unknown command '%s' (commands: %s)", show(w.w[0], sb), list);
	}
	if (ci->parse(ci, &w, cmd, err, errlen)) {
		memset(cmd, 0, sizeof(*cmd));
		return -1;
	}
	if (err && errlen)
		err[0] = 0;
	return 0;
}

/* ==== format ================================================================ */

struct text {
	char *buf;
	size_t size, len; /* len may pass size: the text is then truncated */
};

static void text_put(struct text *t, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, t->len++)
		if (t->len + 1 < t->size)
			t->buf[t->len] = s[i];
	if (t->size)
		t->buf[t->len < t->size ? t->len : t->size - 1] = 0;
}

static void text_puts(struct text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

/* Appends " word", quoted when it must be (or when force). */
static void text_word(struct text *t, const char *word, bool force)
{
	bool quote = force || !*word || word[0] == '#' || strpbrk(word, " \t\"");
	text_puts(t, " ");
	if (!quote) {
		text_puts(t, word);
		return;
	}
	text_puts(t, "\"");
	for (const char *p = word; *p; p++) {
		if (*p == '"' || *p == '\\')
			text_puts(t, "\\");
		text_put(t, p, 1);
	}
	text_puts(t, "\"");
}

/* An exact duration ("1.5s", "1.234567ms"): threshold_format of an absolute
 * threshold reads back to the same ns. */
static void text_duration(struct text *t, uint64_t ns)
{
	char buf[64];
	struct threshold th = {.kind = THRESHOLD_ABSOLUTE, .ns = ns};
	text_puts(t, " ");
	text_puts(t, threshold_format(&th, buf, sizeof(buf)));
}

/* The shortest "pNN.NNN" (up to PERCENTILE_DECIMALS_MAX decimals) that reads
 * back to the same percentile; in integers, so no locale can put a comma in
 * it. */
static void percentile_text(double pct, char *buf, size_t size)
{
	for (int decimals = 0; decimals <= PERCENTILE_DECIMALS_MAX; decimals++) {
		uint64_t scale = 1;
		for (int i = 0; i < decimals; i++)
			scale *= 10;
		double scaled = pct * (double)scale;
		if (!(scaled >= 0 && scaled < 1e17))
			break;
		uint64_t m = (uint64_t)llround(scaled);
		if (decimals)
			snprintf(buf, size, "p%" PRIu64 ".%0*" PRIu64, m / scale, decimals, m % scale);
		else
			snprintf(buf, size, "p%" PRIu64, m);
		struct threshold t;
		if (threshold_parse(buf, &t, NULL, 0) == 0 && t.kind == THRESHOLD_PERCENTILE &&
		    t.percentile == pct)
			return;
	}
	struct threshold t = {.kind = THRESHOLD_PERCENTILE, .percentile = pct};
	threshold_format(&t, buf, size);
}

static void text_threshold(struct text *t, const struct threshold *th)
{
	char buf[64];
	if (th->kind == THRESHOLD_PERCENTILE)
		percentile_text(th->percentile, buf, sizeof(buf));
	else
		threshold_format(th, buf, sizeof(buf));
	text_puts(t, " ");
	text_puts(t, buf);
}

const char *command_format(const struct command *c, char *buf, size_t size)
{
	struct text t = {buf, size, 0};
	char num[32];
	if (size)
		buf[0] = 0;
	const char *name = command_name(c->kind);
	if (!*name)
		return buf;
	text_puts(&t, name);
	switch (c->kind) {
	case CMD_NONE:
	case CMD_VIEW_ALL:
	case CMD_RESET:
	case CMD_STATUS:
	case CMD_THREADS:
		break;
	case CMD_TRACE:
	case CMD_UNTRACE:
	case CMD_VIEW_IN:
	case CMD_SAVE:
	case CMD_BY:
		text_word(&t, c->arg, false);
		break;
	case CMD_SAMPLE_HZ:
		snprintf(num, sizeof(num), " %" PRIu64, c->hz);
		text_puts(&t, num);
		break;
	case CMD_SAMPLE_OFF:
	case CMD_SAMPLE_IN_OFF:
	case CMD_SAMPLE_WHEN_OFF:
	case CMD_SAMPLE_SLOW_OFF:
		text_puts(&t, " off");
		break;
	case CMD_SAMPLE_OFFCPU:
		text_puts(&t, " off-cpu");
		break;
	case CMD_SAMPLE_OFFCPU_OFF:
		text_puts(&t, " off-cpu off");
		break;
	case CMD_SAMPLE_THREADS:
		text_puts(&t, " threads");
		if (c->hz) {
			snprintf(num, sizeof(num), " %" PRIu64, c->hz);
			text_puts(&t, num);
		}
		break;
	case CMD_SAMPLE_THREADS_OFF:
		text_puts(&t, " threads off");
		break;
	case CMD_SAMPLE_EVENT:
		text_puts(&t, " event");
		text_word(&t, c->arg, false);
		break;
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_WHEN:
		text_word(&t, c->arg, strcmp(c->arg, "off") == 0);
		break;
	case CMD_SAMPLE_SLOW:
		text_word(&t, c->arg, strcmp(c->arg, "off") == 0 || colon_split(c->arg, is_duration) >= 0);
		text_duration(&t, c->ns);
		break;
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
		text_word(&t, c->arg, colon_split(c->arg, is_threshold) >= 0);
		if (c->has_threshold)
			text_threshold(&t, &c->threshold);
		break;
	case CMD_WINDOW:
	case CMD_EWMA:
		text_duration(&t, c->ns);
		break;
	case CMD_FILTER_PID:
		snprintf(num, sizeof(num), " pid %" PRId64, c->pid);
		text_puts(&t, num);
		break;
	case CMD_FILTER_TID:
		snprintf(num, sizeof(num), " tid %" PRId64, c->tid);
		text_puts(&t, num);
		break;
	case CMD_FILTER_COMM:
		text_puts(&t, " comm");
		text_word(&t, c->arg, false);
		break;
	case CMD_FILTER_CLEAR:
		text_puts(&t, " clear");
		break;
	case CMD_HELP:
		if (c->arg[0])
			text_word(&t, c->arg, false);
		break;
	}
	return buf;
}

/* ==== equality and names ===================================================== */

static bool uses_arg(enum command_kind k)
{
	switch (k) {
	case CMD_TRACE:
	case CMD_UNTRACE:
	case CMD_SAMPLE_EVENT:
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_WHEN:
	case CMD_SAMPLE_SLOW:
	case CMD_VIEW_IN:
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
	case CMD_FILTER_COMM:
	case CMD_SAVE:
	case CMD_BY:
	case CMD_HELP:
		return true;
	default:
		return false;
	}
}

bool command_equal(const struct command *a, const struct command *b)
{
	if (a->kind != b->kind)
		return false;
	if (uses_arg(a->kind) && strncmp(a->arg, b->arg, sizeof(a->arg)) != 0)
		return false;
	switch (a->kind) {
	case CMD_SAMPLE_HZ:
		return a->hz == b->hz;
	case CMD_SAMPLE_SLOW:
	case CMD_WINDOW:
	case CMD_EWMA:
		return a->ns == b->ns;
	case CMD_FILTER_PID:
		return a->pid == b->pid;
	case CMD_FILTER_TID:
		return a->tid == b->tid;
	case CMD_VIEW_SLOW:
	case CMD_VIEW_FAST:
		if (a->has_threshold != b->has_threshold)
			return false;
		return !a->has_threshold || threshold_equal(&a->threshold, &b->threshold);
	default:
		return true;
	}
}

bool command_changes_gathering(enum command_kind kind)
{
	return kind >= CMD_TRACE && kind <= CMD_SAMPLE_SLOW_OFF;
}

const char *command_name(enum command_kind kind)
{
	switch (kind) {
	case CMD_NONE:
		return "";
	case CMD_TRACE:
		return "trace";
	case CMD_UNTRACE:
		return "untrace";
	case CMD_SAMPLE_HZ:
	case CMD_SAMPLE_OFF:
	case CMD_SAMPLE_EVENT:
	case CMD_SAMPLE_OFFCPU:
	case CMD_SAMPLE_OFFCPU_OFF:
	case CMD_SAMPLE_THREADS:
	case CMD_SAMPLE_THREADS_OFF:
		return "sample";
	case CMD_SAMPLE_IN:
	case CMD_SAMPLE_IN_OFF:
		return "sample-in";
	case CMD_SAMPLE_WHEN:
	case CMD_SAMPLE_WHEN_OFF:
		return "sample-when";
	case CMD_SAMPLE_SLOW:
	case CMD_SAMPLE_SLOW_OFF:
		return "sample-slow";
	case CMD_VIEW_IN:
		return "in";
	case CMD_VIEW_SLOW:
		return "slow";
	case CMD_VIEW_FAST:
		return "fast";
	case CMD_VIEW_ALL:
		return "all";
	case CMD_WINDOW:
		return "window";
	case CMD_EWMA:
		return "ewma";
	case CMD_FILTER_PID:
	case CMD_FILTER_TID:
	case CMD_FILTER_COMM:
	case CMD_FILTER_CLEAR:
		return "filter";
	case CMD_RESET:
		return "reset";
	case CMD_SAVE:
		return "save";
	case CMD_STATUS:
		return "status";
	case CMD_THREADS:
		return "threads";
	case CMD_BY:
		return "by";
	case CMD_HELP:
		return "help";
	}
	return "";
}

/* ==== help ================================================================== */

void command_help(FILE *out, const char *topic)
{
	if (!topic || !*topic) {
		int width = 0;
		for (size_t i = 0; i < NCOMMANDS; i++) {
			int n = (int)strlen(commands[i].synopsis);
			if (n > width)
				width = n;
		}
		for (size_t i = 0; i < NCOMMANDS; i++)
			fprintf(out, "%-*s  %s\n", width, commands[i].synopsis, commands[i].summary);
		return;
	}
	const struct command_info *ci = info_find(topic);
	if (!ci) {
		char sb[SHOW_MAX + 4], list[256];
		const char *near = suggest_command(topic);
		command_list(list, sizeof(list));
		if (near)
			fprintf(out, "no command '%s': did you mean %s? (commands: %s)\n", show(topic, sb),
				near, list);
		else
			fprintf(out, "no command '%s' (commands: %s)\n", show(topic, sb), list);
		return;
	}
	fprintf(out, "usage: %s\n%s", ci->synopsis, ci->detail);
	size_t n = strlen(ci->detail);
	if (n == 0 || ci->detail[n - 1] != '\n')
		fputc('\n', out);
}
