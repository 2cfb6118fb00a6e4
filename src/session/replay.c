#define _GNU_SOURCE
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "sessionstate.h"
#include "util.h"

static void on_replay_wake(void *arg)
{
	session_check_end(arg); /* a signal ends the run */
}

/* A recording's time: its metadata, else its samples' span; the end is
 * never before its last sample or call. */
static void replay_times(const struct profile *p, double *start_s, double *end_s)
{
	const char *a = profile_meta_get(p, "start_ns"), *b = profile_meta_get(p, "end_ns");
	uint64_t lo = a ? strtoull(a, NULL, 10) : UINT64_MAX, hi = b ? strtoull(b, NULL, 10) : 0;
	for (size_t i = 0; i < p->nsamples && (!a || !b); i++) {
		uint64_t t = p->samples[i].time_ns;
		if (!a && t < lo)
			lo = t;
		if (!b && t > hi)
			hi = t;
	}
	/* Records drained after the end was taken may end a little later. */
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].time_ns > hi)
			hi = p->samples[i].time_ns;
	for (size_t i = 0; i < p->nspans; i++)
		if (!p->spans[i].open && span_end_ns(&p->spans[i]) > hi)
			hi = span_end_ns(&p->spans[i]);
	if (lo == UINT64_MAX)
		lo = hi;
	*start_s = (double)lo / 1e9;
	*end_s = (double)(hi > lo ? hi : lo) / 1e9;
}

struct session *session_replay(struct profile *p, const char *path, struct session_options *o,
			       char *err, size_t errlen)
{
	if (session_ready_file_prepare(o, err, errlen))
		return NULL;
	struct session *s = xcalloc(1, sizeof(*s));
	s->probes = xcalloc(SESSION_MAX_PROBES, sizeof(*s->probes));
	s->o = o;
	s->prof = p;
	s->replay_path = xstrdup(path);
	s->sample_in_probe = s->sample_slow_probe = -1;
	s->wake_timer = s->end_timer = -1;
	s->loop = loop_new(err, errlen);
	if (!s->loop || loop_catch_signals(s->loop, session_on_signal, s, err, errlen)) {
		s->prof = NULL; /* the caller keeps it on failure */
		session_free(s);
		return NULL;
	}
	loop_on_wake(s->loop, on_replay_wake, s);
	for (size_t i = 0; i < p->nprobes && i < SESSION_MAX_PROBES; i++) {
		struct probe_counts *c = &s->probes[i].counted_before;
		memcpy(c->hist, p->probes[i].hist, sizeof(c->hist));
		c->entered = p->probes[i].entered;
		c->raw_ns = p->probes[i].raw_ns;
		c->own_ns = p->probes[i].own_ns;
	}
	replay_times(p, &s->start_mono, &s->end_mono);
	s->ended = true;
	return s;
}
