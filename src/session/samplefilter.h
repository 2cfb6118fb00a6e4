/* samplefilter — what the sampler keeps: samples in calls of a function
 * (sample-in), in its slow calls (sample-slow), after a line ran
 * (sample-when); what it gathers (off-CPU, thread states, the event and
 * its rate). The session_set_* functions of session.h are its API. */
#ifndef SONDE_SAMPLEFILTER_H
#define SONDE_SAMPLEFILTER_H

#include <stddef.h>

#include "sessionstate.h"

/* At the start: the sampling decisions the options ask for (--sample-in,
 * --sample-slow, --sample-when). Returns 0, or -1 with err. */
int samplefilter_setup(struct session *s, char *err, size_t errlen);

#endif
