/* unwind — the in-kernel unwinder's tables, as user space keeps them.
 *
 * The sampler (bpf/sampler.bpf.c) walks user stacks with three maps:
 *   unwind_procs     tgid -> where its mappings are in unwind_mappings
 *   unwind_mappings  every process's executable mappings, each process's
 *                    sorted by address, each with its binary's rows
 *                    ([first, count) in unwind_rows) and the adjustment
 *                    turning a pc into a row key
 *   unwind_rows      every loaded binary's rows back to back (struct
 *                    cfi_row, src/symbols/cfi.h), sized by the budget
 * The two arrays are mmapped and written in place; each holds extents
 * (first fit, merged when freed; reused only 10 ms after being given back,
 * so a walk that began on the old entries never sees them change).
 * This module fills them. A process's mappings are read from
 * /proc/PID/maps when it becomes a target, after it execs, and when the
 * sampler met a pc outside them (a sample's table_miss: dlopen, a JIT
 * region, a child process): such a reload happens at most every
 * UNWIND_RELOAD_MIN_MS per process, and when reloads find nothing new (the
 * pc is in no mapping at all: a frame-pointer guess through code without
 * frame pointers), at most every twice as long as the last time, up to
 * UNWIND_RELOAD_MAX_MS, unless the process mapped new code since (its
 * executable mappings hash otherwise: a dlopen reloads at once). (Right after an exec only the program and ld.so are
 * mapped; its libraries come a few milliseconds later.) Each binary's table is built once (symbols/
 * cficache, by build-id; the file is opened through /proc/PID/map_files, so
 * a binary replaced or deleted on disk after it was mapped is still the one
 * mapped) and placed in the rows once, however many processes map it; it
 * leaves the rows when no process uses it any more. A table that does not
 * fit in the rows left (first fit, after merging free space) is refused and
 * counted: its binary is walked by frame pointers. Every table in the rows
 * is also findable by the file it was read from (unwind_files: device,
 * inode, size, modification time): a pc in no mapping user space has read
 * — a library mapped since, by exec or dlopen — is looked up by the
 * sampler itself (bpf_find_vma) and, when its file's table is loaded,
 * walked at once; user space still reads the maps at the miss. Mappings past
 * SONDE_UNWIND_MAPPINGS, files that cannot be read, binaries without CFI and
 * anonymous code (JIT, vdso) have no table either: frame pointers. */
#ifndef SONDE_UNWIND_H
#define SONDE_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define UNWIND_RELOAD_MIN_MS 5
#define UNWIND_RELOAD_MAX_MS 1000

struct unwind;

struct unwind_stats {
	uint64_t loads;            /* processes' mappings read and sent to the kernel */
	uint64_t load_failures;    /* processes whose maps could not be read (gone) */
	uint64_t miss_reloads;     /* of the loads, those a table miss asked for */
	uint64_t tables_loaded;    /* tables placed in the rows (again after an unload) */
	uint64_t tables_unloaded;  /* tables removed: no process used them any more */
	uint64_t over_budget;      /* tables refused: no room left in the rows */
	uint64_t no_table;         /* mappings left to frame pointers: no CFI, unreadable,
				    * anonymous, or past SONDE_UNWIND_MAPPINGS */
	uint64_t mappings_dropped; /* of those, past SONDE_UNWIND_MAPPINGS */
	uint64_t tables;           /* tables in the rows now */
	uint64_t rows;             /* rows in use now */
	uint64_t row_capacity;     /* the rows array's size (the budget / 8) */
	uint64_t processes;        /* processes with tables now */
	uint64_t trampoline_arenas; /* mappings of Python trampolines walked through (loads) */
};

/* The BPF maps' fds (not closed by this module). */
struct unwind_maps {
	int procs_fd;    /* unwind_procs */
	int mappings_fd; /* unwind_mappings: mmapable, SONDE_UNWIND_MAP_SLOTS */
	int rows_fd;     /* unwind_rows: mmapable, row_capacity */
	int files_fd;    /* unwind_files */
	int found_fd;    /* unwind_found */
};

/* Returns NULL with err when the arrays cannot be mapped into memory. */
struct unwind *unwind_new(const struct unwind_maps *maps, uint32_t row_capacity, char *err,
			  size_t errlen);
void unwind_free(struct unwind *u);

/* (Re)reads pid's mappings and loads their tables: at attach and after
 * exec. Returns 0, or -1 with err (the process is gone, its maps cannot be
 * read, the kernel refused the update). */
int unwind_load_pid(struct unwind *u, pid_t pid, char *err, size_t errlen);

/* Builds the table of the binary at path and keeps it in the rows until
 * unwind_free, findable by its file: a command about to be run then has
 * its program's, libraries' and loader's tables from its first sample on,
 * before user space reads its maps. Returns 0, or -1 (no table: cannot
 * read, no CFI, over the budget). */
int unwind_preload(struct unwind *u, const char *path);

/* A sample of pid met a pc outside its tables: reload, unless the last
 * load was too recent (see above). */
void unwind_on_miss(struct unwind *u, pid_t pid);

/* A thread of pid exited: when the kernel dropped the process's tables
 * (its last thread), the binaries only it used leave the rows. */
void unwind_on_exit(struct unwind *u, pid_t pid);

/* Process pid runs Python with -X perf trampolines (pytramp.h): the size
 * bytes of code each copy is, and the stride between copies to assume in
 * an arena the perf map names only one copy of. Its anonymous mappings
 * that hold copies by the perf map are walked through from now on (its
 * maps are read again). Returns 0, or -1 with one line (a shape of code it
 * does not know). */
int unwind_python_trampolines(struct unwind *u, pid_t pid, const uint8_t *code, uint32_t size,
			      uint32_t stride, char *err, size_t errlen);

void unwind_get_stats(const struct unwind *u, struct unwind_stats *out);

#endif
