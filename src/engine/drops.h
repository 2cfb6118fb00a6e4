/* drops — the kernel's drop counters as a person reads them. The table
 * SONDE_COUNTERS (sonde_abi.h, which only drops.c reads) gives each counter's meta key, the summary
 * sentence that shows it and its phrase there, and whether the live status
 * counts it among its drops; everything here is built from that table, so a
 * new counter is shown without edits elsewhere. */
#ifndef SONDE_DROPS_H
#define SONDE_DROPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* The sentences (the `group` column). */
enum drops_group {
	DROPS_ANY = -1,   /* every counter */
	DROPS_LOST,       /* "lost 3 samples, 0 calls, ... (ring buffer full ...)" */
	DROPS_UNTIMED,    /* "untimed: 2 calls nested too deep, ..." */
	DROPS_CHILDREN,   /* "1 child processes not followed (target map full)" */
	DROPS_UNWIND,     /* user stacks by how they ended: "90 complete, 3 no table, ..." */
	DROPS_MISSES,     /* "2 table misses" */
	DROPS_VALUES,     /* "3 failed reads of captured values" */
	DROPS_OFFCPU,     /* "off-CPU intervals: 0 not kept (...), 812 shorter than --min-block" */
	DROPS_PYTHON,     /* "Python stacks: 980 complete, 2 cut (...), 5 of threads without ..." */
};

/* Counter k's key in a recording's meta table ("lost_samples"; k is an
 * index of engine_stats.count, "" past them). */
const char *drops_key(int k);

/* The sum of a group's counters (DROPS_ANY: all); with live_only, of those
 * the live status counts among its drops. */
uint64_t drops_sum(const struct engine_stats *es, enum drops_group g, bool live_only);

/* A group's counters with their phrases, in table order, into buf (which it
 * returns): "3 samples, 0 calls, 1 process events". */
const char *drops_list(const struct engine_stats *es, enum drops_group g, char *buf, size_t size);

#endif
