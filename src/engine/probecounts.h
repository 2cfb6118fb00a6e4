/* probecounts — what the kernel counted per probe, summed over CPUs: the
 * histograms of completed calls, the totals, and the calls that hit a
 * point. Implements engine_read_hist, engine_read_probe_stats and
 * engine_read_point_calls (engine.h). */
#ifndef SONDE_PROBECOUNTS_H
#define SONDE_PROBECOUNTS_H

#endif
