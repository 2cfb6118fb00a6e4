/* dwarfvar — variables at a probe address, from DWARF, translated into a
 * fetch program (bpf/sonde_abi.h, "Fetch programs").
 *
 * Input: a binary, a probe address in it (a file offset: a function's
 * entry, a line's address) and what to read there (capexpr.h). Output: one
 * bounded program the kernel's interpreter runs at each hit, and how to
 * show each value. Names are looked up in the scopes holding the address,
 * innermost first (blocks, inlined calls, the function, its compile unit),
 * then among the globals of every compile unit. Each variable's location
 * is the DWARF expression in force at that address (location lists are
 * resolved there); the frame base (DW_OP_fbreg over DW_OP_call_frame_cfa)
 * is folded from the binary's CFI at that address; static addresses get
 * the load bias at run time (PIE, libraries).
 *
 * Each expression is translated by dwarfexpr.h (which says which DWARF
 * operations are read); DW_OP_entry_value gives "not available at this
 * address", a variable without a location there is "optimized out". At a
 * function's entry, an argument whose location is a stack slot the
 * prologue fills (-O0) is read where the x86-64 calling convention puts it.
 *
 * Errors are one line: no DWARF (and how to get it), a name not visible
 * (with the names that are), no such member (with the members), an index
 * out of bounds, a type a predicate cannot compare, an operation sonde
 * cannot read. x86-64 only (register numbers). */
#ifndef SONDE_DWARFVAR_H
#define SONDE_DWARFVAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capdesc.h"
#include "capexpr.h"

/* The program is the kernel's (sonde_abi.h): only the engine, which puts
 * it in the kernel, and the code that writes or checks it read it. */
struct sonde_fetch_prog;
struct fetch_build {
	struct sonde_fetch_prog *prog; /* owned; gen and layout are the engine's */
	struct capture_desc desc[CAPTURE_MAX];
	int ndesc;
};

/* Translates `spec` at `file_offset` of `binary` into out (free with
 * dwarfvar_build_free). Returns 0, or -1 with one line in err. */
int dwarfvar_compile(const char *binary, uint64_t file_offset, const struct cap_spec *spec,
		     struct fetch_build *out, char *err, size_t errlen);

void dwarfvar_build_free(struct fetch_build *b);

/* A variable visible at an address (sonde probe --vars). */
struct dwarfvar_visible {
	char *name;
	char *type;
	char *where;    /* "argument", "local", "global" */
	char *readable; /* "yes", or why not ("optimized out", "DW_OP_entry_value: ...") */
};

/* The variables visible at `file_offset` of `binary`, innermost scope
 * first, then the compile unit's globals. Returns how many (in *out, free
 * with dwarfvar_visible_free), or -1 with one line in err. */
int dwarfvar_list(const char *binary, uint64_t file_offset, struct dwarfvar_visible **out,
		  char *err, size_t errlen);
void dwarfvar_visible_free(struct dwarfvar_visible *v, int n);

#endif
