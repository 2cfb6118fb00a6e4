/* cficache — the unwind tables of the binaries targets map (see cfi.h), one
 * per binary, kept within a memory budget.
 *
 * A binary is known by its GNU build-id (one file reached by two paths, or
 * a library of a container identical to the host's, is one table), by
 * device, inode, size and modification time when it has none (a file
 * replaced on disk is another binary). Tables are built on first use and
 * kept while they fit: a new table that does not fit evicts the least
 * recently used tables nobody holds; one that still does not fit is refused
 * and counted. Binaries without CFI and files that are not ELF are
 * remembered too (at no cost in the budget), so they are read once. */
#ifndef SONDE_CFICACHE_H
#define SONDE_CFICACHE_H

#include <stddef.h>
#include <stdint.h>

struct cfi_table; /* cfi.h: the kernel's rows, which only its readers include */
struct cfi_cache;

struct cfi_cache_stats {
	uint64_t tables_built;     /* tables built (again after an eviction: counted again) */
	uint64_t rows_built;       /* rows of those tables */
	uint64_t unsupported_rows; /* of those, rows with a CFA rule the kernel cannot follow */
	uint64_t no_cfi;           /* binaries without any CFI */
	uint64_t not_elf;          /* files that could not be read as ELF */
	uint64_t hits;             /* answers from the cache */
	uint64_t evictions;        /* tables dropped to make room, least recently used first */
	uint64_t over_budget;      /* tables refused: they did not fit */
	uint64_t tables;           /* tables held now */
	uint64_t bytes;            /* bytes held now (cfi_table_bytes), never above the budget */
};

/* A cache holding at most `budget` bytes of tables. */
struct cfi_cache *cfi_cache_new(size_t budget);
void cfi_cache_free(struct cfi_cache *c);

/* The table of the ELF file at `path` (a target's file may be reached
 * through /proc/PID/root/... or /proc/PID/map_files/...), or open on fd
 * (not closed; path then only names it, may be NULL). Returns a reference
 * to give back with cfi_cache_put (the table is not evicted while held),
 * or NULL with one line in err: cannot open, not ELF, no CFI, or too large
 * for what the budget leaves. */
const struct cfi_table *cfi_cache_get(struct cfi_cache *c, const char *path, char *err,
				      size_t errlen);
const struct cfi_table *cfi_cache_get_fd(struct cfi_cache *c, int fd, const char *path,
					 char *err, size_t errlen);
void cfi_cache_put(struct cfi_cache *c, const struct cfi_table *t);

void cfi_cache_get_stats(const struct cfi_cache *c, struct cfi_cache_stats *out);

#endif
