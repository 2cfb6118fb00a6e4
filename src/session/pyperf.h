/* pyperf (private to session) — whether a py: probe can see the target's
 * Python calls: they go through the trampoline evaluator the probe is on
 * only in a process whose perf trampolines are on (python -X perf,
 * PYTHONPERFSUPPORT=1, or sys.activate_stack_trampoline(), which writes
 * /tmp/perf-PID.map). Without them the probe would count no call at all,
 * silently: sonde says so instead. */
#ifndef SONDE_PYPERF_H
#define SONDE_PYPERF_H

#include <stddef.h>

#include "sessionstate.h"

/* 0 when each running target process, or else the command to start (its
 * arguments, and the environment it gets: sonde's), has its trampolines
 * on; -1 with one line in why naming the first that has not. */
int pyperf_check(struct session *s, char *why, size_t whylen);

#endif
