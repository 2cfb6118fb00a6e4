/* spans — span probes: a batch of functions of one binary attached all or
 * none (entry and return uprobes, a slot each), sonde's own calibration
 * probes, and their detaching. Implements engine_attach_probes,
 * engine_detach_span, engine_discard_span,
 * engine_attach_calibration and engine_detach_calibration (engine.h). */
#ifndef SONDE_SPANS_H
#define SONDE_SPANS_H

#endif
