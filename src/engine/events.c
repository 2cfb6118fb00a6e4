#define _GNU_SOURCE
#include "events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "errbuf.h"
#include "tracefs.h"

static const struct {
	const char *name;
	const char *alias;
	uint64_t config;
	bool time_based;
} software_events[] = {
	{"cpu-clock", NULL, PERF_COUNT_SW_CPU_CLOCK, true},
	{"task-clock", NULL, PERF_COUNT_SW_TASK_CLOCK, true},
	{"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS, false},
	{"minor-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
	{"major-faults", NULL, PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
	{"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES, false},
	{"cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS, false},
};

#define N_SOFTWARE (sizeof(software_events) / sizeof(software_events[0]))

static bool valid_tp_part(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!(*s == '_' || *s == '-' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

int events_parse(const char *spec, struct event_spec *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < N_SOFTWARE; i++) {
		if (strcmp(spec, software_events[i].name) == 0 ||
		    (software_events[i].alias && strcmp(spec, software_events[i].alias) == 0)) {
			out->type = EVENT_SOFTWARE;
			out->config = software_events[i].config;
			out->time_based = software_events[i].time_based;
			snprintf(out->name, sizeof(out->name), "%s", software_events[i].name);
			return 0;
		}
	}
	const char *colon = strchr(spec, ':');
	if (colon && strchr(colon + 1, ':') == NULL) {
		size_t cl = (size_t)(colon - spec);
		if (cl > 0 && cl < sizeof(out->category) && strlen(colon + 1) < sizeof(out->tp_name)) {
			memcpy(out->category, spec, cl);
			out->category[cl] = 0;
			snprintf(out->tp_name, sizeof(out->tp_name), "%s", colon + 1);
			if (valid_tp_part(out->category) && valid_tp_part(out->tp_name)) {
				out->type = EVENT_TRACEPOINT;
				snprintf(out->name, sizeof(out->name), "%s:%s", out->category,
					 out->tp_name);
				return 0;
			}
		}
	}
	errbuf_set(err, errlen,
		   "unknown event '%s': use cpu-clock, task-clock, page-faults, minor-faults, "
		   "major-faults, context-switches, cpu-migrations, or a tracepoint as category:name "
		   "(e.g. sched:sched_switch)",
		   spec);
	return -1;
}

int events_open_cpu(const struct event_spec *e, int cpu, uint64_t freq, uint64_t period,
		    char *err, size_t errlen)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	if (e->type == EVENT_SOFTWARE) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = e->config;
		if (freq > 0) {
			attr.freq = 1;
			attr.sample_freq = freq;
		} else {
			attr.sample_period = period ? period : 1;
		}
	} else {
		long id = tracefs_tracepoint_id(e->category, e->tp_name, err, errlen);
		if (id < 0)
			return -1;
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = (uint64_t)id;
		attr.sample_period = 1;
	}
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int er = errno;
		if (er == EACCES || er == EPERM)
			errbuf_set(err, errlen,
				   "not allowed to open perf event %s (%s): run as root or grant "
				   "CAP_PERFMON and CAP_BPF",
				   e->name, strerror(er));
		else
			errbuf_set(err, errlen, "cannot open perf event %s on CPU %d: %s", e->name,
				   cpu, strerror(er));
		return -1;
	}
	return fd;
}

int events_online_cpus(int *cpus, int max)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	if (!f)
		return -1;
	char buf[4096];
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",\n", &save); tok; tok = strtok_r(NULL, ",\n", &save)) {
		int a, b;
		if (sscanf(tok, "%d-%d", &a, &b) == 2) {
		} else if (sscanf(tok, "%d", &a) == 1) {
			b = a;
		} else {
			continue;
		}
		for (int c = a; c <= b; c++)
			if (n < max)
				cpus[n++] = c;
	}
	return n;
}
