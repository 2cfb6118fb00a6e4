#define _GNU_SOURCE
#include "query.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "ldso.h"
#include "probes.h"
#include "util.h"

/* A path as the user gave it: without the /proc/PID/root prefix sonde
 * opens a running target's files through. */
static const char *user_path(const char *path)
{
	int n = 0;
	if (sscanf(path, "/proc/%*d/root%n", &n) == 0 && n > 0 && path[n] == '/')
		return path + n;
	return path;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void list_probes(const struct profile *p, char *buf, size_t size)
{
	size_t off = 0;
	buf[0] = 0;
	for (size_t i = 0; i < p->nprobes && off < size; i++)
		off += (size_t)snprintf(buf + off, size - off, p->probes[i].point < 0 ? "%s%s (%s)" : "%s%s",
					i ? ", " : "", p->probes[i].name,
					base_of(user_path(p->probes[i].binary)));
}

/* Whether the two paths are one file (where this machine has both). */
static bool same_file(const char *a, const char *b)
{
	char *ra = realpath(a, NULL), *rb = realpath(b, NULL);
	bool same = ra && rb && strcmp(ra, rb) == 0;
	free(ra);
	free(rb);
	return same;
}

/* Does `part`, the BINARY of a BINARY:FUNC spec, name the file `binary`? */
static bool names_binary(const char *binary, const char *part)
{
	const char *path = user_path(binary);
	if (strchr(part, '/'))
		return strcmp(path, part) == 0 || same_file(binary, part);
	const char *base = base_of(path);
	if (strcmp(base, part) == 0 || ldso_name_matches(base, part))
		return true;
	char *real = realpath(binary, NULL);
	bool named = real && strcmp(base_of(real), part) == 0;
	free(real);
	return named;
}

/* The function a function probe traces: its name without the BASE: a
 * second function of one name gets. */
static const char *probe_function(const struct probe_info *pi)
{
	int colon = probes_split(pi->name);
	const char *base = base_of(pi->binary);
	if (colon > 0 && (size_t)colon == strlen(base) && strncmp(pi->name, base, (size_t)colon) == 0)
		return pi->name + colon + 1;
	return pi->name;
}

int query_probe(const struct profile *p, const char *spec)
{
	int id = profile_probe_find(p, spec);
	if (id >= 0)
		return id;
	int colon = probes_split(spec);
	char *part = colon > 0 ? xasprintf("%.*s", colon, spec) : NULL;
	const char *func = colon > 0 ? spec + colon + 1 : spec;
	for (size_t i = 0; i < p->nprobes && id < 0; i++) {
		const struct probe_info *pi = &p->probes[i];
		if (pi->point < 0 && strcmp(probe_function(pi), func) == 0 &&
		    (!part || names_binary(pi->binary, part)))
			id = (int)i;
	}
	free(part);
	return id;
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
	if (cls != SPAN_IN && colon > 0 && query_probe(p, arg) < 0) {
		func[colon] = 0;
		thr = arg + colon + 1;
	}
	q->probe = query_probe(p, func);
	char terr[256];
	bool thr_ok = threshold_parse(thr, &q->threshold, terr, sizeof(terr)) == 0;
	if (q->probe >= 0 && !thr_ok) {
		errbuf_set(err, errlen, "%s", terr);
		free(func);
		return -1;
	}
	if (q->probe < 0 && !thr_ok) { /* no FUNC:THRESHOLD: the argument names no probe */
		free(func);
		func = xstrdup(arg);
	}
	if (q->probe < 0) {
		char names[512];
		list_probes(p, names, sizeof(names));
		if (p->nprobes)
			errbuf_set(err, errlen, "'%s' was not traced in this recording; traced: %s", func,
				   names);
		else
			errbuf_set(err, errlen,
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
