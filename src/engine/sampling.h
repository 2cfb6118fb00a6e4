/* sampling — the sampler: its perf event on every CPU or its tracepoint,
 * what it is told to sample (filters, --sample-when) and the figures of
 * sample calibration it keeps. Implements engine_stop, engine_sampling,
 * engine_set_sampling, engine_attach_perf_fd, engine_detach_fd,
 * engine_set_sampler_filter, engine_set_sample_when, engine_set_calibration,
 * engine_calib_*, engine_sample_charges and engine_times_sample_exits
 * (engine.h). */
#ifndef SONDE_SAMPLING_H
#define SONDE_SAMPLING_H

#include <stddef.h>

struct engine;

/* Opens the session's event (e->opt.event) on every online CPU with the
 * perf-event sampler, or attaches the tracepoint sampler to it. Returns 0,
 * or -1 with err (what was opened stays for engine_stop). */
int attach_sampler_software(struct engine *e, char *err, size_t errlen);
int attach_sampler_tracepoint(struct engine *e, char *err, size_t errlen);

#endif
