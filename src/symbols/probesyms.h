/* probesyms — a binary's functions as probe specs name them: the defined
 * function symbols of .symtab and .dynsym (and IFUNCs), their demangled
 * names, the file offset of an address, and what to say when a name is
 * not there (the nearest names; a function that exists only inlined). */
#ifndef SONDE_PROBESYMS_H
#define SONDE_PROBESYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Elf Elf;

struct elf_function {
	char *name;
	uint64_t vaddr, size;
	bool ifunc; /* STT_GNU_IFUNC: vaddr is the resolver */
	/* A C++ or Rust name demangled (function_list_demangle): without and
	 * with its parameters; NULL when not mangled. */
	char *readable, *signature;
};

struct function_list {
	struct elf_function *f;
	size_t n, cap;
	bool had_symtab; /* a .symtab was read (the binary's or its debug file's) */
	bool demangled;  /* readable and signature are filled */
};

/* Fills every mangled function's demangled names (once: only a spec that
 * no linkage name matches needs them). */
void function_list_demangle(struct function_list *l);

/* The name a function is shown by: demangled when it is C++ or Rust. */
const char *function_shown(const struct elf_function *f);

/* Does `spec` name function f: its linkage name, or (once demangled) its
 * readable name or whole signature; a glob matches any of them. */
bool function_named(const struct elf_function *f, const char *spec, bool glob);

/* Adds the functions of .symtab and/or .dynsym (tables: SYMBOLS_ELF_*) to l. */
void read_symbols(Elf *elf, struct function_list *l, unsigned tables);

void function_list_free(struct function_list *l);

/* File offset of a virtual address, through the executable PT_LOAD segment
 * holding it: 0, or -1 when none does. */
int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off);

/* "a, b, c": the three names closest to `want` by edit distance, names
 * containing `want` first ("" when none is near). */
void nearest_names(const struct function_list *l, const char *want, char *buf, size_t size);

/* When func is not a symbol, it may still exist in the DWARF of fd,
 * inlined into its callers: says so and where in err, and returns true. */
bool describe_inlined_only(int fd, const char *func, const char *binary, char *err,
			   size_t errlen);

#endif
