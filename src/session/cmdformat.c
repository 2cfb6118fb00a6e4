/* cmdformat — command_format (command.h): a command back as the canonical
 * text command_parse reads back to it; words quoted only when needed. */
#include "command.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cmdvalues.h"

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
