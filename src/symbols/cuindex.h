/* cuindex — a binary's DWARF indexed by address: which function (out of
 * line, or inlined) holds an address, the chain of its inlined callers, and
 * the source line, as binutils' addr2line finds them.
 *
 * Which compilation unit holds an address comes from the CU DIEs' own
 * ranges (libdwfl's lookup needs .debug_aranges, which clang does not
 * emit, and lets a CU claim the gap up to the next one), built on the first
 * lookup. Per CU, every function DIE (subprogram, inlined_subroutine,
 * entry_point) with its ranges is indexed on the first lookup that lands
 * in it; the function at an address is the one with the smallest range
 * around it (the deepest inline), and its callers follow the DIE nesting
 * (lexical blocks are transparent). The line is the line table's row.
 *
 * Addresses given to dwarf_index_lookup are module addresses (ELF virtual
 * addresses of the binary); the index subtracts the bias of the DWARF's
 * file. Names and file names returned point into libdw's data: they live
 * as long as the Dwarf. */
#ifndef SONDE_CUINDEX_H
#define SONDE_CUINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hashmap.h"
#include "strpool.h"

typedef struct Dwarf Dwarf; /* libdw's, opaque here */

struct cu_index; /* one CU's functions and their ranges */
struct cu_range; /* one range of a CU's code */

/* A binary's DWARF and its index, filled as lookups need it. */
struct dwarf_index {
	Dwarf *dwarf;  /* NULL: the binary has no DWARF */
	uint64_t bias; /* module address - DWARF address */
	struct cu_range *cu_ranges; /* built on the first lookup */
	size_t ncu_ranges;
	bool cu_ranges_built;
	struct hashmap cus; /* CU DIE offset -> struct cu_index * */
};

/* What DWARF says about an address. */
struct dwarf_answer {
	struct cu_index *cu; /* the CU holding it, or NULL */
	int32_t func;        /* innermost function, or -1 */
	uint64_t bias;
	const char *file; /* the line table's file name */
	uint32_t line, discriminator;
	bool has_line;
};

/* Answers for module address pc (ans->func is -1 when no function holds
 * it, has_line false when no line row does). */
void dwarf_index_lookup(struct dwarf_index *dw, uint64_t pc, struct dwarf_answer *ans);
/* Frees the index (not the Dwarf). */
void dwarf_index_free(struct dwarf_index *dw);

/* About function f of a CU (an answer's func, or a caller of it). */
/* DW_AT_linkage_name (or DW_AT_MIPS_linkage_name), or NULL. */
const char *cu_index_linkage_name(struct cu_index *cu, int32_t f);
/* DW_AT_name, through abstract_origin and specification, or NULL. */
const char *cu_index_name(struct cu_index *cu, int32_t f);
/* Whether the CU's language makes DW_AT_name the symbol name (C, not C++). */
bool cu_index_name_is_symbol(const struct cu_index *cu);
/* The DWARF address where its first range begins (where its symbol starts). */
uint64_t cu_index_entry_pc(const struct cu_index *cu, int32_t f);
/* The function an inlined instance was inlined into, or -1 (out of line). */
int32_t cu_index_inlined_into(const struct cu_index *cu, int32_t f);
/* Where an inlined instance was called: DW_AT_call_file (NULL when
 * unknown) and DW_AT_call_line (0). */
const char *cu_index_call_file(const struct cu_index *cu, int32_t f);
uint32_t cu_index_call_line(const struct cu_index *cu, int32_t f);

/* A file name of the CU as addr2line prints it, interned in `strings`:
 * libdw joins a relative name to its line-table directory only; addr2line
 * also puts a relative compilation directory in front. NULL gives "". */
const char *cu_index_path(const struct cu_index *cu, struct strpool *strings, const char *name);

#endif
