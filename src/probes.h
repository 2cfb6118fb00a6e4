/* probes — turns a probe spec into the functions to attach uprobes to.
 *
 * Specs: FUNC (in the target's executable), BINARY:FUNC (a path, or the
 * executable's base name), LIB:FUNC (a shared library by name, e.g.
 * libc:malloc or libc.so.6:malloc, found in the target's maps or, before the
 * target runs, in the standard library directories), and shell globs in FUNC
 * (handle_*). C++ names with "::" are not split.
 *
 * Functions come from the ELF .symtab and .dynsym (STT_FUNC and IFUNC,
 * defined, non-zero); the file offset of the entry is derived from the
 * PT_LOAD program headers, which is what the kernel's uprobes want. Aliases
 * at one address are attached once. */
#ifndef SONDE_PROBES_H
#define SONDE_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_target {
	char *function; /* symbol name */
	char *binary;   /* path to attach to */
	uint64_t offset; /* file offset of the function's entry */
	uint64_t size;   /* symbol size in bytes (0 if unknown) */
};

/* Resolves `spec`. `executable` is the target's main binary (a path), used
 * for FUNC and for BINARY given as its base name; `pid` (or 0) is a running
 * target whose maps are searched for libraries. Returns the number of
 * functions found (>= 1) in *out (free with probes_free), or -1 with one line
 * in err: binary not found, no symbol table, no such function (with the
 * nearest names), no match for a glob. */
int probes_resolve(const char *spec, const char *executable, pid_t pid,
		   struct probe_target **out, char *err, size_t errlen);

void probes_free(struct probe_target *t, int n);

/* Splits "BINARY:FUNC" at its separating colon (not one of a "::"). Returns
 * the index of the colon or -1 when the spec has no binary part. */
int probes_split(const char *spec);

/* Finds a program the way execvp would (PATH search when there is no '/').
 * Returns a malloc'd path or NULL. */
char *probes_which(const char *program);

#endif
