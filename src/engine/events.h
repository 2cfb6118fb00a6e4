/* events — what a sample is taken on: perf software events or tracepoints.
 *
 * Event specs as users write them (perf's names):
 *   cpu-clock (default), task-clock, page-faults (alias faults), minor-faults,
 *   major-faults, context-switches (cs), cpu-migrations (migrations), or any
 *   tracepoint as category:name (sched:sched_switch, block:block_rq_insert). */
#ifndef SONDE_EVENTS_H
#define SONDE_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum event_type {
	EVENT_SOFTWARE,   /* perf_event_open(PERF_TYPE_SOFTWARE, config) per CPU */
	EVENT_TRACEPOINT, /* a tracepoint, every hit is a sample */
};

struct event_spec {
	char name[128]; /* canonical name, e.g. "cpu-clock" or "sched:sched_switch" */
	enum event_type type;
	uint64_t config;    /* PERF_COUNT_SW_* for software events */
	char category[64];  /* tracepoint category */
	char tp_name[64];   /* tracepoint name */
	bool time_based;    /* cpu-clock/task-clock: -F makes sense */
};

/* Parses a spec. Returns 0, or -1 with one line in err saying what is wrong
 * and listing the valid names. Tracepoint existence is checked later, when
 * the event is opened. */
int events_parse(const char *spec, struct event_spec *out, char *err, size_t errlen);

/* Opens the perf event for one CPU (pid -1: every task on that CPU) and
 * returns its fd, or -1 with a message in err. `freq` > 0 samples at that
 * rate; otherwise every `period` events. Tracepoints are opened with
 * period 1. */
int events_open_cpu(const struct event_spec *e, int cpu, uint64_t freq, uint64_t period,
		    char *err, size_t errlen);

/* Online CPU ids from /sys/devices/system/cpu/online. Returns the count
 * (fills at most max), or -1. */
int events_online_cpus(int *cpus, int max);

#endif
