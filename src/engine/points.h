/* points — point probes (lines): uprobes at a line's addresses sharing one
 * slot and a point bit, each address with a capture program of its own.
 * Implements engine_attach_point and engine_set_point_fetch (engine.h). */
#ifndef SONDE_POINTS_H
#define SONDE_POINTS_H

#endif
