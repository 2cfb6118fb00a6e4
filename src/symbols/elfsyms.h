/* elfsyms — the symbols of an ELF file: the one walk over its symbol
 * tables (symbols_elf_each, which probes uses to find functions too), and
 * the symbolizer's table of the symbols that can name code, searched the
 * way binutils' addr2line searches it.
 *
 * The table (elf_symtab_build) holds .symtab's symbols, else .dynsym's (a
 * stripped binary keeps that one), leaving out data, TLS, section and file
 * symbols and the hidden local sizeless markers annotation plugins emit.
 * To those it adds the names objdump gives code no symbol names (pltnames:
 * "NAME@plt", "_init", "_fini") where no symbol starts at their address.
 * elf_symtab_find gives the nearest symbol at or below an address in a
 * section, even when its size does not reach the address (addr2line names
 * it all the same); among symbols at one address it picks binutils' one.
 * Names point into the ELF's string table (they live as long as the Elf)
 * or, for the added ones, into the table's own pool. */
#ifndef SONDE_ELFSYMS_H
#define SONDE_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

typedef struct Elf Elf;

/* One symbol of an ELF symbol table, as symbols_elf_each gives it: the
 * fields of the ELF symbol, and the source file binutils would name for
 * it. A file symbol (STT_FILE) names the symbols after it, but a global
 * symbol only while no file symbol has followed a symbol: the global
 * symbols of a linked binary come after all the files. */
struct elf_symbol {
	const char *name; /* in the ELF's string table (alive with the Elf), or NULL */
	const char *file; /* the STT_FILE name naming it, or NULL */
	uint64_t value, size;
	uint32_t index;   /* its position in the table (the null symbol 0 is never given) */
	uint32_t shndx;   /* its section, or SHN_UNDEF, SHN_ABS, ... */
	uint8_t type;     /* STT_* (never STT_FILE: those are taken as files) */
	uint8_t bind;     /* STB_* */
	uint8_t visibility; /* STV_* */
};

/* The symbol tables symbols_elf_each reads, as a mask. */
#define SYMBOLS_ELF_SYMTAB (1u << 2)  /* 1 << SHT_SYMTAB */
#define SYMBOLS_ELF_DYNSYM (1u << 11) /* 1 << SHT_DYNSYM */

/* The one walk over an ELF file's symbols: calls fn for every symbol of
 * each table the mask `tables` names (.symtab, .dynsym), in section then
 * table order. Returns the mask of those tables the file has (readable or
 * not), so a caller knows whether a .symtab was there. */
unsigned symbols_elf_each(Elf *elf, unsigned tables,
			  void (*fn)(const struct elf_symbol *sym, void *arg), void *arg);

/* One entry of the symbolizer's table. */
struct elf_sym {
	uint64_t value;
	uint64_t size;    /* never 0: a sizeless symbol counts as 1 byte */
	const char *name; /* in the ELF string table (alive as long as the Dwfl) or `added` */
	const char *file; /* STT_FILE name addr2line would report, or NULL */
	uint32_t shndx;
	uint32_t order; /* position in the table: the first of equals wins */
	/* The nearest earlier sized symbol of the section still open at this
	 * one's value (see elf_symtab_link), or -1. */
	int32_t enclosing;
	bool sizeless; /* st_size 0: hand-written code that did not say its size */
	bool is_func;
	bool is_notype;
};

struct elf_symtab {
	struct elf_sym *syms; /* sorted by (shndx, value, order) */
	size_t n, cap;
	struct strpool added; /* the names pltnames gave */
};

/* Fills `t` (zeroed) from the symbol file's .symtab, else its .dynsym, and
 * the PLT and .init/.fini names of code_elf, the file holding the code (the
 * same file, or the one a separate debug file `elf` describes: its sections
 * of the same index and name). */
void elf_symtab_build(struct elf_symtab *t, Elf *elf, Elf *code_elf);
void elf_symtab_free(struct elf_symtab *t);

/* The nearest symbol at or below `addr` in section `shndx` (an index of the
 * file the table was built from), or NULL: the one binutils picks among
 * several at the same address. */
const struct elf_sym *elf_symtab_find(const struct elf_symtab *t, uint32_t shndx, uint64_t addr);

/* A symbol covers [value, value + size) and nothing past its end. */
static inline bool elf_sym_covers(const struct elf_sym *s, uint64_t addr)
{
	return addr - s->value < s->size;
}

/* Whether the file has a .symtab section. */
bool elf_has_symtab(Elf *elf);

#endif
