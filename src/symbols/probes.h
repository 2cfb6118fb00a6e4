/* probes — turns a probe spec into the functions to attach uprobes to.
 *
 * Specs: FUNC (in the target's executable), BINARY:FUNC (a path, or a
 * program's name: the executable's name as given — a symlink's name too —
 * its real file's name, a running target's command name or executable, or
 * a program in PATH), LIB:FUNC (a shared library by name, e.g. libc:malloc
 * or libc.so.6:malloc), and shell globs in FUNC (handle_*). C++ names with
 * "::" are not split.
 *
 * LIB is found as the target will find it: in a running target (the
 * processes in the scope) among the files it has mapped — a LIB none of
 * them maps is an error that says so; for a command not started yet, as the
 * dynamic loader will load it for that executable (see ldso.h: DT_NEEDED,
 * RPATH/RUNPATH with $ORIGIN, LD_LIBRARY_PATH, /etc/ld.so.cache, system
 * directories).
 *
 * Functions come from the ELF .symtab and .dynsym (STT_FUNC and IFUNC,
 * defined, non-zero). An IFUNC symbol's address is its resolver, called
 * once at load time: it is traced at the implementation the target uses,
 * read from a running target process's GOT (see ifunc.h), else from sonde's
 * own when it loads the same file (a command sonde starts gets the same
 * CPU, file and environment); an IFUNC neither has loaded is refused by
 * name and left out of globs. Functions also come, when the binary has no
 * .symtab, from the .symtab
 * of its separate debug file (/usr/lib/debug/.build-id/xx/rest.debug or
 * .gnu_debuglink: what a -dbgsym package installs). The file offset of the
 * entry is derived from the PT_LOAD program headers, which is what the
 * kernel's uprobes want. Aliases at one address are attached once. */
#ifndef SONDE_PROBES_H
#define SONDE_PROBES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ldso.h"

struct probe_target {
	char *function; /* symbol name */
	char *binary;   /* path to attach to */
	uint64_t offset; /* file offset of the function's entry */
	uint64_t size;   /* symbol size in bytes (0 if unknown) */
	uint64_t dev, ino; /* the file's identity: one file reached by two paths is one */
	char *ifunc_impl;  /* for an IFUNC symbol, the implementation probed instead */
	pid_t ifunc_asked; /* the process that said so (0: sonde's own) */
};

/* Where a spec is resolved. */
struct probe_scope {
	const char *executable;      /* the target's main binary (a path), or NULL */
	const char *const *exe_names; /* other names it goes by (a symlink's name) */
	int nexe_names;
	const pid_t *pids;           /* running target processes, whose maps are searched */
	int npids;                   /* 0: the target does not run yet (or -a) */
	const struct ldso_env *env;  /* the environment a command will get (npids == 0) */
};

/* Resolves `spec` in `scope`. Returns the number of functions found (>= 1)
 * in *out (free with probes_free), or -1 with one line in err: binary not
 * found, a library no running target maps, no such function (with the
 * nearest names), no debug info for a function missing from .dynsym, no
 * match for a glob, or a function a span probe would break:
 *  - the entry point (e_entry, e.g. _start): jumped to, never returns; a
 *    return probe there overwrites the process's arguments;
 *  - a function that never returns (DW_AT_noreturn, where debug info is
 *    installed): its calls have no end;
 *  - a symbol that starts inside an instruction (decoding from the start of
 *    the function holding it, by its FDE or an enclosing symbol, does not
 *    reach it): the breakpoint would rewrite that instruction.
 * A glob leaves such functions out and describes them in `note` (one line,
 * "" when none; note may be NULL). */
int probes_resolve(const char *spec, const struct probe_scope *scope,
		   struct probe_target **out, char *note, size_t notelen, char *err,
		   size_t errlen);

void probes_free(struct probe_target *t, int n);

/* Splits "BINARY:FUNC" at its separating colon (not one of a "::"). Returns
 * the index of the colon or -1 when the spec has no binary part. */
int probes_split(const char *spec);

/* Finds a program the way execvp would (PATH search when there is no '/').
 * Returns a malloc'd path or NULL. */
char *probes_which(const char *program);

/* The separate debug file of an ELF file (by build-id, then
 * .gnu_debuglink; see probes_resolve). Returns its fd with *debug_elf open
 * on it (the caller ends both), or -1 when none is installed. */
typedef struct Elf Elf;
int probes_debug_file(Elf *elf, const char *binary, Elf **debug_elf);

#endif
