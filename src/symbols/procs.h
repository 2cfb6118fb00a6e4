/* procs — the processes the symbolizer has seen: each one's mappings from
 * /proc/PID/maps and the binary each mapping maps.
 *
 * A process's maps are read on first use and kept after it exits, so
 * samples of processes that went away are still symbolized: a read that
 * fails, or finds no maps where there were some (a zombie), marks the
 * process gone and keeps what was read. A lookup that misses every mapping
 * re-reads the maps once for that address (a new mmap, dlopen); an address
 * that still misses is remembered and not read for again. A re-read keeps
 * the binaries of the mappings that did not change. Mapped files are opened
 * through /proc/PID/map_files or /proc/PID/root (procmaps_open_mapped), so
 * deleted files and containers work; a mapping whose file cannot be opened
 * is not tried again. Paths are interned in the table's strings. */
#ifndef SONDE_PROCS_H
#define SONDE_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "binaries.h"
#include "hashmap.h"
#include "strpool.h"

struct perfmap;

struct mapping {
	uint64_t start, end, offset;
	uint64_t dev, inode;
	const char *path; /* interned; "" for anonymous memory */
	bool exec;        /* mapped executable */
	bool deleted;
	bool open_failed;
	struct binary *bin;
};

struct process {
	pid_t pid;
	bool loaded; /* maps read since the last exec */
	uint64_t read_ns; /* CLOCK_MONOTONIC when the maps were last read */
	bool gone;   /* reading maps failed: it exited; keep what we have */
	struct mapping *maps;
	size_t nmaps, maps_cap;
	/* Addresses that still missed right after a re-read: do not re-read
	 * for them again (a bad address must not cost a file read each time). */
	struct hashmap misses; /* addresses (values unused): unmapped ones, and with
				* the top bit set, return addresses in non-code */
	struct perfmap *jit;    /* its /tmp/perf-PID.map, once JIT code is seen */
	uint64_t jit_since_ns;  /* CLOCK_MONOTONIC when it was looked for */
	uint64_t jit_read_ns;   /* ... and last read */
	const char *jit_module; /* "/tmp/perf-PID.map", the JIT frames' module */
};

struct process_table {
	struct strpool *strings; /* where mapping paths are interned (the symbolizer's) */
	struct hashmap by_pid;   /* pid -> struct process * */
	uint64_t maps_reads;     /* /proc/PID/maps reads */
};

/* The process `pid`, created (maps not read yet) when unknown. */
struct process *process_get(struct process_table *t, pid_t pid);
/* The process `pid`, or NULL when it was never seen. */
struct process *process_find(const struct process_table *t, pid_t pid);
/* Frees every process, with its perf map. */
void process_table_free(struct process_table *t);

/* Reads /proc/PID/maps now: 0, or -1 when the process is gone (keeping the
 * maps it had). */
int process_read_maps(struct process_table *t, struct process *p);
/* Drops the maps (the address space was replaced); read again on next use. */
void process_forget_maps(struct process *p);
/* The mapping holding addr in the maps as last read, or NULL. */
struct mapping *process_mapping_at(struct process *p, uint64_t addr);
/* The mapping holding addr, reading the maps first when they were not read,
 * and again once on a miss. NULL when none does. */
struct mapping *process_find_mapping(struct process_table *t, struct process *p, uint64_t addr);

/* The binary mapping `m` of process `pid` maps, opened on first use (the
 * vDSO from our own copy), or NULL: anonymous memory, or a file that could
 * not be opened. */
struct binary *mapping_binary(struct binary_cache *c, pid_t pid, struct mapping *m);

#endif
