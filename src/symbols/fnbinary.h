/* fnbinary — a binary opened for what a listing reads of it (probe
 * --lines, explore): the file found (a path, or a program in PATH), its
 * ELF open, its functions read (.symtab and .dynsym; its separate debug
 * file's .symtab when it has none) and that debug file found. */
#ifndef SONDE_FNBINARY_H
#define SONDE_FNBINARY_H

#include <stddef.h>

#include "probedebug.h"
#include "probesyms.h"

struct fn_binary {
	char *path;   /* the file found (malloc'd) */
	int fd;
	Elf *elf;
	struct function_list fl;
	struct debug_file dbg; /* fd -1: none */
};

/* Opens binary into *b: 0, or -1 with one line in err (not found, not an
 * ELF file) and nothing to free. */
int fn_binary_open(const char *binary, struct fn_binary *b, char *err, size_t errlen);

/* Ends the ELF handles and the function list, but leaves path, fd and
 * dbg.fd to the caller (DWARF read from them lives on). */
void fn_binary_release(struct fn_binary *b);

/* Releases b and closes and frees the rest too. */
void fn_binary_close(struct fn_binary *b);

#endif
