#define _GNU_SOURCE
#include "query.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probes.h"
#include "util.h"

static void list_probes(const struct profile *p, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < p->nprobes && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s", i ? ", " : "",
					p->probes[i].name);
}

int query_parse(struct profile *p, enum span_class cls, const char *arg, struct span_query *q,
		char *err, size_t errlen)
{
	memset(q, 0, sizeof(*q));
	q->cls = cls;
	char *func = xstrdup(arg);
	const char *thr = NULL;
	/* FUNC:THRESHOLD — unless the whole argument names a probe (BIN:FUNC). */
	int colon = probes_split(arg);
	if (cls != SPAN_IN && colon > 0 && profile_probe_find(p, arg) < 0) {
		func[colon] = 0;
		thr = arg + colon + 1;
	}
	char terr[256];
	if (threshold_parse(thr, &q->threshold, terr, sizeof(terr))) {
		snprintf(err, errlen, "%s", terr);
		free(func);
		return -1;
	}
	q->probe = profile_probe_find(p, func);
	if (q->probe < 0) {
		char names[512];
		list_probes(p, names, sizeof(names));
		if (p->nprobes)
			snprintf(err, errlen, "'%s' was not traced in this recording; traced: %s", func,
				 names);
		else
			snprintf(err, errlen,
				 "'%s' was not traced in this recording (it has no traced functions: "
				 "record with --trace %s)",
				 func, func);
		free(func);
		return -1;
	}
	free(func);
	size_t n;
	uint64_t *d = profile_probe_durations(p, (uint32_t)q->probe, &n);
	q->threshold_ns = threshold_resolve(&q->threshold, d, n, &q->modes);
	free(d);
	q->calls = profile_probe_calls(p, (uint32_t)q->probe);
	q->slow_calls = profile_probe_calls_over(p, (uint32_t)q->probe, q->threshold_ns);
	return 0;
}

void query_apply(const struct span_query *q, struct view *v)
{
	v->span_class = q->cls;
	v->probe = (uint32_t)q->probe;
	v->threshold_ns = q->threshold_ns;
}

/* The threshold as asked for: "p95", "auto", "750us"; auto without a
 * valley uses p95, and "auto" must never stand for that. */
static void threshold_asked(const struct span_query *q, char *buf, size_t size)
{
	if (q->threshold.kind == THRESHOLD_AUTO && !q->modes.found)
		snprintf(buf, size, "auto: no second mode; using p95");
	else
		threshold_format(&q->threshold, buf, size);
}

void query_diff_title(const struct span_query *q, const struct profile *p, char *buf, size_t size)
{
	char thr[32], th[64];
	duration_format(q->threshold_ns, thr, sizeof(thr));
	threshold_asked(q, th, sizeof(th));
	if (q->threshold.kind == THRESHOLD_ABSOLUTE)
		snprintf(buf, size, "Slow vs fast calls of %s (threshold %s)", p->probes[q->probe].name,
			 thr);
	else
		snprintf(buf, size, "Slow vs fast calls of %s (threshold %s, %s)",
			 p->probes[q->probe].name, thr, th);
}

void query_describe(const struct span_query *q, const struct profile *p, const struct view *v,
		    char *buf, size_t size)
{
	const char *name = p->probes[q->probe].name;
	char thr[64], th[64];
	duration_format(q->threshold_ns, thr, sizeof(thr));
	threshold_asked(q, th, sizeof(th));
	switch (q->cls) {
	case SPAN_SLOW:
		snprintf(buf, size, "samples in slow calls of %s (> %s, %s: %zu of %zu calls)", name,
			 thr, th, q->slow_calls, q->calls);
		break;
	case SPAN_FAST:
		snprintf(buf, size, "samples in fast calls of %s (<= %s, %s: %zu of %zu calls)",
			 name, thr, th, q->calls - q->slow_calls, q->calls);
		break;
	default:
		snprintf(buf, size, "samples in calls of %s (%zu calls)", name, q->calls);
		return;
	}
	struct view with = v ? *v : (struct view){0};
	query_apply(q, &with);
	uint64_t unknown = view_count_unknown(&with, p);
	size_t len = strlen(buf);
	if (unknown && len < size)
		snprintf(buf + len, size - len,
			 "; %" PRIu64 " sample%s in calls with no record %s in neither slow nor fast",
			 unknown, unknown == 1 ? "" : "s", unknown == 1 ? "is" : "are");
}
