/* kallsyms — kernel symbols from /proc/kallsyms: the function holding a
 * kernel address.
 *
 * The file is read once (kallsyms_load), every line "ADDR TYPE NAME" or
 * "ADDR TYPE NAME\t[MODULE]"; a symbol of the kernel itself has the module
 * KERNEL_MODULE. Several names can share an address: the text one comes
 * first, then file order. The symbol holding an address is the last one at
 * or below it, if it is text (T, t, W, w); past the last symbol nothing
 * bounds the range, so nothing is named there. With kptr_restrict the file
 * shows every address as 0: no symbol is kept. Names live until
 * kallsyms_free(). */
#ifndef SONDE_KALLSYMS_H
#define SONDE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strpool.h"

#define KERNEL_MODULE "[kernel.kallsyms]"

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module; /* interned */
	bool is_text;
};

struct kallsyms {
	struct ksym *syms; /* sorted by address, text first */
	size_t n;
	bool loaded;  /* kallsyms_load ran (whether or not it found symbols) */
	char **names; /* the names, one allocation each */
	size_t nnames, names_cap;
};

/* Reads /proc/kallsyms into `k` (zeroed); module names are interned in
 * `strings`. An unreadable file leaves no symbols. */
void kallsyms_load(struct kallsyms *k, struct strpool *strings);
/* The text symbol holding addr, or NULL. */
const struct ksym *kallsyms_find(const struct kallsyms *k, uint64_t addr);
void kallsyms_free(struct kallsyms *k);

#endif
