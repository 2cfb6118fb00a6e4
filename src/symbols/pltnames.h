/* pltnames — names for code no symbol names but whose job the file itself
 * says, as objdump gives them: "NAME@plt" for each x86-64 PLT entry (.plt,
 * .plt.sec, .plt.got) whose indirect jump goes through a GOT slot that a
 * JUMP_SLOT or GLOB_DAT relocation binds to NAME, and "_init" / "_fini"
 * for the .init and .fini sections (a stripped library keeps their code
 * but not the symbols; the loader calls them).
 *
 * Read from the file that holds the code (a separate debug file has the
 * sections but not their bytes). An entry whose jump is not through a
 * bound slot (PLT0, the lazy stubs beside .plt.sec, IRELATIVE slots) gets
 * no name: it stays unnamed rather than misnamed. */
#ifndef SONDE_PLTNAMES_H
#define SONDE_PLTNAMES_H

#include <stdint.h>

typedef struct Elf Elf;

/* One synthesized name; `name` lives only during the callback. */
struct plt_name {
	const char *name;
	const char *section; /* the section's name, alive with the Elf */
	uint64_t value, size;
	uint32_t shndx;      /* the section's index in the file read */
};

/* Calls fn for every name the file's code sections give, in section then
 * address order. Nothing for a file that is not x86-64. */
void plt_names_each(Elf *elf, void (*fn)(const struct plt_name *n, void *arg), void *arg);

#endif
