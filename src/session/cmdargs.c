/* cmdargs — each command's words after its name into a struct command,
 * with an error that shows the right usage. */
#include "cmdargs.h"

#include <ctype.h>
#include <string.h>

#include "cmdsuggest.h"
#include "cmdvalues.h"
#include "errbuf.h"
#include "session.h"
#include "util.h"

int need_args(const struct command_info *ci, char *err, size_t errlen)
{
	return errbuf_set(err, errlen, "%s needs %s: %s", ci->name, ci->takes, ci->example);
}

int too_many(const struct command_info *ci, char *err, size_t errlen)
{
	if (!ci->takes)
		return errbuf_set(err, errlen, "%s takes no arguments: %s", ci->name, ci->example);
	return errbuf_set(err, errlen,
			  "too many words for %s (it takes %s; quote a name that has spaces): %s",
			  ci->name, ci->takes, ci->example);
}

/* A FUNC/EVENT/NAME/FILE word into c->arg. */
int take_arg(const struct command_info *ci, const char *what, const char *word,
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
				  word_show(word, sb), ci->name, n, sizeof(c->arg) - 1);
	}
	memcpy(c->arg, word, n + 1);
	return 0;
}

/* trace, untrace, in, save: one word. */
int parse_one_arg(const struct command_info *ci, const struct words *w, struct command *c,
			 char *err, size_t errlen)
{
	if (w->n < 2)
		return need_args(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	c->kind = ci->kind;
	return take_arg(ci, ci->argname, w->w[1], c, err, errlen);
}

/* trace LOCATION [VAR...] [if EXPR]: the words after "trace", joined by
 * spaces (capexpr.h splits the location from the rest). */
int parse_trace(const struct command_info *ci, const struct words *w, struct command *c,
		       char *err, size_t errlen)
{
	if (w->n < 2)
		return need_args(ci, err, errlen);
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
int parse_no_arg(const struct command_info *ci, const struct words *w, struct command *c,
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

int parse_sample(const struct command_info *ci, const struct words *w, struct command *c,
			char *err, size_t errlen)
{
	static const char *const keywords[] = {"off", "event"};
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need_args(ci, err, errlen);
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
				  word_show(a, sb), COMMAND_HZ_MAX);
	case NUMBER_BAD:
		break;
	}
	const char *near = suggest_name(a, keywords, 2);
	if (near && !isdigit((unsigned char)a[0]))
		return errbuf_set(err, errlen,
				  "unknown sample setting '%s' (did you mean %s?): %s", word_show(a, sb),
				  near, ci->example);
	return errbuf_set(err, errlen,
			  "bad sampling rate '%s': give HZ (a whole number, 1 to %d), off, or event EVENT: %s",
			  word_show(a, sb), COMMAND_HZ_MAX, ci->example);
}

int parse_sample_in(const struct command_info *ci, const struct words *w, struct command *c,
			   char *err, size_t errlen)
{
	if (w->n < 2)
		return need_args(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	if (is_off(w, 1)) {
		c->kind = CMD_SAMPLE_IN_OFF;
		return 0;
	}
	c->kind = CMD_SAMPLE_IN;
	return take_arg(ci, "FUNC", w->w[1], c, err, errlen);
}

/* "branch LOCATION [taken|not-taken]" unquoted: its words joined into
 * c->arg. Returns 1 when done (0 in *rc, or -1 with err), 0 when the
 * words are not a branch's. */
static int take_branch(const struct command_info *ci, const struct words *w, size_t most,
		       struct command *c, int *rc, char *err, size_t errlen)
{
	if (w->n < 3 || w->quoted[1] || strcmp(w->w[1], "branch") != 0)
		return 0;
	if (w->n > most) {
		*rc = too_many(ci, err, errlen);
		return 1;
	}
	char spec[COMMAND_LINE_MAX + MAX_WORDS + 1];
	size_t len = 0;
	for (size_t i = 1; i < w->n && i < MAX_WORDS; i++)
		len += (size_t)snprintf(spec + len, sizeof(spec) - len, "%s%s", i > 1 ? " " : "",
					w->w[i]);
	c->kind = ci->kind;
	*rc = take_arg(ci, "branch", spec, c, err, errlen);
	return 1;
}

int parse_untrace(const struct command_info *ci, const struct words *w, struct command *c,
		  char *err, size_t errlen)
{
	int rc;
	if (take_branch(ci, w, 3, c, &rc, err, errlen))
		return rc;
	return parse_one_arg(ci, w, c, err, errlen);
}

int parse_sample_when(const struct command_info *ci, const struct words *w,
			     struct command *c, char *err, size_t errlen)
{
	int rc;
	if (take_branch(ci, w, 4, c, &rc, err, errlen))
		return rc;
	if (w->n < 2)
		return need_args(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	if (is_off(w, 1)) {
		c->kind = CMD_SAMPLE_WHEN_OFF;
		return 0;
	}
	c->kind = CMD_SAMPLE_WHEN;
	return take_arg(ci, "FILE:LINE", w->w[1], c, err, errlen);
}

int parse_sample_slow(const struct command_info *ci, const struct words *w, struct command *c,
			     char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4], sb2[SHOW_MAX + 4], derr[256];
	if (w->n < 2)
		return need_args(ci, err, errlen);
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
				  word_show(w->w[2], sb), word_show(w->w[2], sb2));
	if (duration_parse(w->w[2], &c->ns, derr, sizeof(derr)))
		return errbuf_set(err, errlen,
				  "sample-slow %s: %s (sample-slow handle_request 5ms)",
				  word_show(w->w[1], sb), derr);
	return 0;
}

int parse_view(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char terr[256];
	if (w->n < 2)
		return need_args(ci, err, errlen);
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
				  ci->name, word_show(w->w[2], sb), word_show(w->w[2], sb2), word_show(w->w[2], sb3));
	}
	if (threshold_word(w->w[2], &c->threshold, terr, sizeof(terr)))
		return errbuf_set(err, errlen, "%s: %s", ci->name, terr);
	c->has_threshold = true;
	return 0;
}

/* window, ewma. */
int parse_span(const struct command_info *ci, const struct words *w, struct command *c,
		      char *err, size_t errlen)
{
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need_args(ci, err, errlen);
	if (w->n > 2)
		return too_many(ci, err, errlen);
	const char *what = ci->kind == CMD_WINDOW ? "window" : "half-life";
	uint64_t ns = 0;
	switch (span_parse(w->w[1], &ns)) {
	case SPAN_OK:
		break;
	case SPAN_TOO_LARGE:
		return errbuf_set(err, errlen,
				  "%s '%s' is too large: %s", what, word_show(w->w[1], sb), ci->example);
	case SPAN_BAD:
		return errbuf_set(err, errlen,
				  "bad %s '%s': use seconds (10), or a number with s, m or h (30s, 5m, 1h), or "
				  "ms/us/ns: %s",
				  what, word_show(w->w[1], sb), ci->example);
	}
	if (ns < 1000000000ULL)
		return errbuf_set(err, errlen,
				  "%s '%s' is too short: at least 1s (samples are kept in 1-second buckets): %s",
				  what, word_show(w->w[1], sb), ci->example);
	c->kind = ci->kind;
	c->ns = ns;
	return 0;
}

int parse_filter(const struct command_info *ci, const struct words *w, struct command *c,
			char *err, size_t errlen)
{
	static const char *const keywords[] = {"pid", "tid", "comm", "clear"};
	char sb[SHOW_MAX + 4];
	if (w->n < 2)
		return need_args(ci, err, errlen);
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
				    word_show(w->w[2], sb), INT32_MAX, eg);
		case NUMBER_BAD:
			break;
		}
		return errbuf_set(err, errlen, "bad %s id '%s': give a positive whole number: %s", what,
			    word_show(w->w[2], sb), eg);
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
					  word_show(w->w[2], sb), COMMAND_COMM_MAX, COMMAND_COMM_MAX, cut);
		}
		c->kind = CMD_FILTER_COMM;
		return take_arg(ci, "NAME", w->w[2], c, err, errlen);
	}
	const char *near = suggest_name(a, keywords, 4);
	if (near)
		return errbuf_set(err, errlen, "unknown filter '%s' (did you mean %s?): %s", word_show(a, sb), near,
			    ci->example);
	return errbuf_set(err, errlen, "unknown filter '%s': use pid N, tid N, comm NAME or clear: %s",
		    word_show(a, sb),
		    ci->example);
}
