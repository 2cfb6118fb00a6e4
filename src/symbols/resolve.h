/* resolve — one address in one binary to its frames, uncached.
 *
 * The answers are meant to be the ones `addr2line -f -i -e BIN ADDR` gives,
 * because that is what users check a profile against. So the lookup follows
 * binutils' rules rather than libdwfl's conveniences:
 *  - the function is the DWARF subprogram/inlined_subroutine with the
 *    smallest range around the address (deepest inline), named through
 *    abstract_origin/specification; callers come from the DIE nesting with
 *    DW_AT_call_file/DW_AT_call_line;
 *  - where DWARF has no function, the ELF symbol is the nearest preceding
 *    function symbol of the same section, ties broken as binutils does,
 *    taken from the separate debug file's .symtab when DWARF came from there,
 *    else .symtab, else .dynsym.
 * Two deliberate differences. Past a symbol's end addr2line still names
 * the symbol, which in stripped code (static functions have no symbol)
 * names whole functions after the small one before them; sonde names the
 * function the unwind table (.eh_frame FDEs) says holds the address, see
 * symbols.h. And binutils 2.40 reads DWARF 5 line rows whose
 * file register still holds its initial 1 as file entry 0; we report the
 * file the line table says (see bench/README.md).
 * libdw parses DWARF (DIEs, line tables, attributes: cuindex.h), libdwfl
 * finds separate debug info (build-id, .gnu_debuglink: binaries.h).
 *
 * Frame names are interned in the namer's strings; a C++ or Rust linkage
 * name is demangled once (demangle_short) and kept as the frame's
 * system_name. An address no function holds, or a function without a
 * name, is "[module+0xOFFSET]" (FRAME_UNKNOWN) with OFFSET a file offset,
 * the same in every process. The cache of answers is the caller's
 * (symbols.c). */

#ifndef SONDE_RESOLVE_H
#define SONDE_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "binaries.h"
#include "hashmap.h"
#include "strpool.h"
#include "symframe.h"

#define RESOLVE_MAX_CHAIN 128 /* inline chain kept per address (C++ reaches 30+) */

/* What names frames. */
struct frame_namer {
	struct strpool *strings; /* the symbolizer's */
	/* interned linkage name -> interned demangled name (the linkage
	 * name itself when it is not mangled) */
	struct hashmap demangled;
};

/* The frames of ELF virtual address `vaddr` of `b`, innermost first, into
 * out[RESOLVE_MAX_CHAIN]; is_return looks up vaddr - 1 (symbols_user).
 * Always at least one frame; returns how many. */
int binary_resolve(struct frame_namer *nm, struct binary *b, uint64_t vaddr, bool is_return,
		   struct sym_frame *out);

/* "[base+0xoff]", interned. */
const char *unknown_frame_name(struct strpool *strings, const char *base, uint64_t off);

#endif
