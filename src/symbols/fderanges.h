/* fderanges — where functions begin and end by the unwind tables: every
 * function the compiler emitted has an FDE (in .eh_frame, or .debug_frame)
 * whose range is the whole function, named or not. Symbols can be missing
 * (static functions of stripped libraries) or sizeless (assembly); FDEs say
 * which function an address belongs to all the same.
 *
 * The ranges come from .eh_frame of the binary, else .debug_frame of the
 * binary, else .debug_frame of its separate debug file (code built without
 * unwind tables for exceptions). Two users: the symbolizer names the
 * function past a symbol's end (fde_table), probes checks that an address
 * begins a function (symbols_fdes). */
#ifndef SONDE_FDERANGES_H
#define SONDE_FDERANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Elf Elf;

/* Where functions begin by the unwind tables of an ELF file (.eh_frame,
 * else .debug_frame of it or of its debug file, which may be NULL): the
 * first instruction of the function holding an address, named or not. */
struct symbols_fdes;
struct symbols_fdes *symbols_fdes_read(Elf *elf, Elf *debug_elf);
/* True, with *start, when an FDE holds vaddr. */
bool symbols_fdes_find(const struct symbols_fdes *f, uint64_t vaddr, uint64_t *start);
void symbols_fdes_free(struct symbols_fdes *f);

/* The table itself, for the symbolizer. */
struct fde_range {
	uint64_t start, end; /* ELF virtual addresses, [start, end) */
};

struct fde_table {
	struct fde_range *r; /* sorted by start; FDEs do not overlap */
	size_t n, cap;
};

/* Fills `t` (zeroed) from elf's CFI, else debug_elf's (which may be NULL). */
void fde_table_build(struct fde_table *t, Elf *elf, Elf *debug_elf);
/* The FDE range holding pc, or NULL. */
const struct fde_range *fde_table_find(const struct fde_table *t, uint64_t pc);
void fde_table_free(struct fde_table *t);

#endif
