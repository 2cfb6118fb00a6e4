#define _GNU_SOURCE
#include "samplefilter.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "probebranch.h"
#include "sessionstate.h"
#include "trace.h"
#include "util.h"

/* The probe a sample-in / sample-slow names (one function), traced now if it
 * is not yet. */
static int probe_for_function(struct session *s, const char *func, char *err, size_t errlen)
{
	int n = 0;
	int id = trace_attach(s, func, &n, err, errlen);
	if (id >= 0 && n != 1) {
		errbuf_set(err, errlen, "'%s' names %d functions: the in-kernel sampling filter takes one",
			   func, n);
		return -1;
	}
	return id;
}

/* The kernel slot of the probe id the session's filter names (NULL: off). */
static const struct engine_probe_ref *filter_ref(const struct session *s, int probe)
{
	return probe >= 0 ? &s->probes[probe].kernel : NULL;
}

static int push_sampler_filter(struct session *s, char *err, size_t errlen)
{
	if (engine_set_sampler_filter(s->eng, filter_ref(s, s->sample_in_probe),
				      filter_ref(s, s->sample_slow_probe), s->sample_slow_ns)) {
		errbuf_set(err, errlen, "cannot set the in-kernel sampling filter: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int session_set_sample_in(struct session *s, const char *func, char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int probe = -1;
	if (func && (probe = probe_for_function(s, func, err, errlen)) < 0)
		return -1;
	int old = s->sample_in_probe;
	s->sample_in_probe = probe;
	if (push_sampler_filter(s, err, errlen)) {
		s->sample_in_probe = old;
		return -1;
	}
	return 0;
}

int session_set_sample_slow(struct session *s, const char *func, uint64_t ns, char *err,
			    size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	int probe = -1;
	if (func && (probe = probe_for_function(s, func, err, errlen)) < 0)
		return -1;
	int old = s->sample_slow_probe;
	uint64_t old_ns = s->sample_slow_ns;
	s->sample_slow_probe = probe;
	s->sample_slow_ns = func ? ns : 0;
	if (push_sampler_filter(s, err, errlen)) {
		s->sample_slow_probe = old;
		s->sample_slow_ns = old_ns;
		return -1;
	}
	return 0;
}

/* The outcome probe of "branch LOCATION[#K] taken|not-taken", its branch
 * probe traced now if it is not yet: its id, or -1 with err. */
static int branch_outcome_for(struct session *s, const char *spec, char *err, size_t errlen)
{
	size_t n = strlen(spec);
	while (n && (spec[n - 1] == ' ' || spec[n - 1] == '\t'))
		n--;
	size_t w = n;
	while (w && spec[w - 1] != ' ' && spec[w - 1] != '\t')
		w--;
	bool taken = n - w == 5 && !strncmp(spec + w, "taken", 5);
	bool not_taken = n - w == 9 && !strncmp(spec + w, "not-taken", 9);
	if (!taken && !not_taken)
		return errbuf_set(err, errlen,
				  "%s: say which way the jump goes: '%s taken' or '%s not-taken'", spec,
				  spec, spec);
	char *probe_spec = strndup(spec, w);
	char *location = NULL;
	unsigned index = 0;
	int count = 0, first = -1;
	if (probebranch_split(probe_spec, &location, &index, err, errlen) == 0)
		first = trace_attach(s, probe_spec, &count, err, errlen);
	int id = -1;
	const struct probe_branch *b = first >= 0 ? s->prof->probes[first].branch : NULL;
	if (b && b->jumps > 1 && !index) {
		char list[512] = "";
		size_t off = 0;
		for (size_t i = 0; i < s->prof->nprobes && off < sizeof(list); i++) {
			const struct probe_branch *o = s->prof->probes[i].branch;
			if (o && o->taken && !strcmp(o->at, b->at) &&
			    !strcmp(s->prof->probes[i].binary, s->prof->probes[first].binary)) {
				int k = snprintf(list + off, sizeof(list) - off, "%s#%u (%s)",
						 off ? ", " : "", o->jump, o->insn);
				off = k < 0 ? sizeof(list) : off + (size_t)k;
			}
		}
		errbuf_set(err, errlen,
			   "%s has %u conditional jumps: say which, as branch %s#K %s; its jumps: %s",
			   b->at, b->jumps, b->at, taken ? "taken" : "not-taken", list);
	} else if (b) {
		char *name = trace_branch_name(b->at, index ? index : 1, b->jumps, taken);
		id = profile_probe_find(s->prof, name);
		if (id < 0)
			errbuf_set(err, errlen, "%s: no probe %s was placed", spec, name);
		free(name);
	} else if (first >= 0) {
		errbuf_set(err, errlen, "%s is no branch probe", probe_spec);
	}
	free(location);
	free(probe_spec);
	return id;
}

int session_set_sample_when(struct session *s, const char *line, char *err, size_t errlen)
{
	int probe = -1;
	if (line && probebranch_is(line)) {
		if ((probe = branch_outcome_for(s, line, err, errlen)) < 0)
			return -1;
	} else if (line) {
		int n = 0;
		char why[512];
		probe = trace_attach(s, line, &n, why, sizeof(why));
		if (probe < 0) {
			errbuf_set(err, errlen, "%s", why);
			return -1;
		}
		if (s->prof->probes[probe].point < 0) {
			errbuf_set(err, errlen,
				   "%s is a function: sample-when takes a line (FILE:LINE); for "
				   "samples inside a function's calls use sample-in",
				   line);
			return -1;
		}
	}
	if (engine_set_sample_when(s->eng, filter_ref(s, probe))) {
		errbuf_set(err, errlen, "cannot set the in-kernel sampling filter: %s", strerror(errno));
		return -1;
	}
	s->sample_when_probe = probe;
	return 0;
}

int samplefilter_setup(struct session *s, char *err, size_t errlen)
{
	char why[512];
	if (s->o->sample_when && session_set_sample_when(s, s->o->sample_when, why, sizeof(why))) {
		errbuf_set(err, errlen, "--sample-when: %s", why);
		return -1;
	}
	if (s->o->sample_in && session_set_sample_in(s, s->o->sample_in, why, sizeof(why))) {
		errbuf_set(err, errlen, "--sample-in: %s", why);
		return -1;
	}
	if (s->o->sample_slow) {
		int colon = probes_split(s->o->sample_slow);
		if (colon <= 0) {
			errbuf_set(err, errlen, "--sample-slow needs FUNC:DURATION (e.g. handle_request:5ms)");
			return -1;
		}
		uint64_t ns;
		char *func = strndup(s->o->sample_slow, (size_t)colon);
		if (duration_parse(s->o->sample_slow + colon + 1, &ns, why, sizeof(why))) {
			errbuf_set(err, errlen, "--sample-slow %s: %s", s->o->sample_slow, why);
			free(func);
			return -1;
		}
		int r = session_set_sample_slow(s, func, ns, why, sizeof(why));
		free(func);
		if (r) {
			errbuf_set(err, errlen, "--sample-slow: %s", why);
			return -1;
		}
	}
	return 0;
}

int session_set_offcpu(struct session *s, bool on, char *err, size_t errlen)
{
	if (engine_set_offcpu(s->eng, on, s->o->min_block_ns, err, errlen))
		return -1;
	if (on)
		collector_set_event(s->col, ENGINE_EVENT_OFFCPU, PROFILE_EVENT_OFFCPU, 1);
	s->o->off_cpu = on || s->o->off_cpu; /* the recording holds intervals */
	return 0;
}

int session_set_threads(struct session *s, bool on, uint64_t hz, char *err, size_t errlen)
{
	if (on && !hz)
		hz = SESSION_THREADS_HZ;
	if (engine_set_threads(s->eng, on ? hz : 0, err, errlen))
		return -1;
	collector_keep_last_stacks(s->col, on);
	if (on) { /* the recording holds thread states (and says at what rate) */
		s->o->threads = true;
		s->o->threads_hz = hz;
	}
	return 0;
}

int session_set_sampling(struct session *s, const char *event, uint64_t freq, uint64_t period,
			 char *err, size_t errlen)
{
	if (session_refuse_replay(s, err, errlen))
		return -1;
	struct event_spec ev;
	if (event && events_parse(event, &ev, err, errlen))
		return -1;
	if (event && !ev.time_based && !period && !freq)
		period = 1;
	/* Samples of the old event still in the ring buffer keep its label. */
	while (engine_poll(s->eng, 0) > 0)
		;
	if (engine_set_sampling(s->eng, event ? &ev : NULL, period ? 0 : freq, period, err,
				errlen))
		return -1;
	if (!event) {
		s->o->no_sampling = true;
		return 0;
	}
	collector_set_event(s->col, 0, ev.name, 1);
	free(s->event_name);
	s->event_name = xstrdup(event);
	s->o->event = s->event_name;
	s->o->freq = period ? s->o->freq : freq;
	s->o->period = period;
	s->o->no_sampling = false;
	return 0;
}
