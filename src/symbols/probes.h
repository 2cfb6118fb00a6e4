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
 * kernel's uprobes want. Aliases at one address are attached once.
 *
 * Line specs: FILE:LINE, BINARY:FILE:LINE, LIB:FILE:LINE (FILE a base name
 * or a path suffix) give one target per address where the line begins a
 * statement, one per instance of its code (every inlined copy, every
 * out-of-line copy: see lines.h), from the binary's DWARF or its separate
 * debug file's. Each address is checked to begin an instruction (decoded
 * from its function's start) that the kernel's uprobes accept (insn.h);
 * one that does not refuses the spec with its reason. No DWARF is one line
 * saying how to get it. */
#ifndef SONDE_PROBES_H
#define SONDE_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "insn.h"
#include "ldso.h"

struct usdt_arg;
struct sonde_py_match;

/* A branch probe's jump: its condition (decoded here, evaluated in the
 * kernel on the flags at the jump), its place among the jumps of its line
 * in its instance of the code (1-based, by address), where each outcome
 * goes in the source (0: no line known), and what it is. */
struct branch_jump {
	enum insn_cond cond;
	unsigned index, count;
	unsigned taken_line, fall_line;
	/* the file of each, when it is not the jump's own (inlined code):
	 * a base name (malloc'd), else NULL */
	char *taken_file, *fall_file;
	char *text;   /* the instruction, "jle 0x1189" (malloc'd) */
	char *source; /* the line's source text, trimmed (malloc'd; NULL: not found) */
};

struct probe_target {
	char *function; /* symbol name */
	char *binary;   /* path to attach to */
	uint64_t offset; /* file offset of the function's entry probe */
	uint64_t entry_skip; /* bytes from the function's first instruction to
			      * offset: past instructions the kernel cannot step
			      * (insn_entry_site), 0 almost always */
	char *moved;     /* then why, for a note; else NULL */
	uint64_t size;   /* symbol size in bytes (0 if unknown) */
	uint64_t dev, ino; /* the file's identity: one file reached by two paths is one */
	char *ifunc_impl;  /* for an IFUNC symbol, the implementation probed instead */
	pid_t ifunc_asked; /* the process that said so (0: sonde's own) */
	/* A line probe's address (spec [BINARY:]FILE:LINE): line > 0, location
	 * "FILE:LINE" as given, function the instance holding it. */
	unsigned line;
	char *location;
	bool inlined; /* the address is in an inlined instance */
	/* How the kernel takes the instruction the entry probe replaces
	 * (insn.h), as decoded when the entry was checked; not known: the
	 * engine reads it from the file. */
	bool trap_known;
	enum insn_trap trap;
	/* A USDT probe's address (spec usdt:[BINARY:]PROVIDER:NAME): function
	 * "PROVIDER:NAME", location the spec; its semaphore's file offset (0:
	 * none), which the kernel raises while the probe is on. */
	bool usdt;
	/* A span pair's site (spec usdt:[BINARY:]PROVIDER:ENTRY,RETURN: its
	 * entry probe's sites first, then its return probe's, usdt_return). */
	bool usdt_pair, usdt_return;
	/* A site held only for its semaphore, after a pair's return sites
	 * (py: on 3.11: the line probe, whose semaphore makes the interpreter
	 * fire function__entry): a uprobe that does nothing. */
	bool usdt_hold;
	uint64_t ref_ctr_offset;
	uint64_t usdt_vaddr;          /* its address in the file */
	struct usdt_arg *usdt_args;   /* its operands (malloc'd) */
	int usdt_nargs;               /* -1: one sonde cannot read */
	/* A Python function's calls (spec py:..., probepy.h): function and
	 * location the spec, the target the interpreter's trampoline
	 * evaluator, py which of its calls are the function's (malloc'd). */
	struct sonde_py_match *py;
	/* A conditional jump of a branch probe (spec branch ...,
	 * probebranch.h): location the spec's, line the line it is on. */
	bool branch;
	struct branch_jump jump;
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

/* Where probes_resolve puts what it found: the targets in t (free with
 * probes_free), and in note (notelen bytes; may be NULL) what a glob left
 * out. */
struct probes_found {
	struct probe_target *t;
	char *note;
	size_t notelen;
};

/* Resolves `spec` in `scope`. Returns the number of functions found (>= 1)
 * in out->t, or -1 with one line in err (out->t NULL): binary not
 * found, a library no running target maps, no such function (with the
 * nearest names), no debug info for a function missing from .dynsym, no
 * match for a glob, or a function a span probe would break:
 *  - the entry point (e_entry, e.g. _start): jumped to, never returns; a
 *    return probe there overwrites the process's arguments;
 *  - a function that never returns (DW_AT_noreturn, where debug info is
 *    installed): its calls have no end;
 *  - a symbol that starts inside an instruction (decoding from the start of
 *    the function holding it, by its FDE or an enclosing symbol, does not
 *    reach it): the breakpoint would rewrite that instruction;
 *  - a function whose first instruction the kernel's uprobes refuse or
 *    mis-step (VEX/EVEX-encoded AVX code, a lock prefix...: insn.h) and
 *    whose entry probe cannot move past it. When it can, the target's
 *    offset is the later instruction's (entry_skip, moved).
 * A glob leaves such functions out and describes them in out->note (one
 * line, "" when none). */
int probes_resolve(const char *spec, const struct probe_scope *scope, struct probes_found *out,
		   char *err, size_t errlen);

void probes_free(struct probe_target *t, int n);

/* Whether two py: specs (probepy.h) may name one Python function: a
 * qualified name of each is the same, and one's file ends the other's.
 * Two probes on one function's calls would share each call's stack slot,
 * which the span stack cannot hold: the session refuses the second. */
bool probes_py_may_share(const char *spec_a, const char *spec_b);

/* The lines of a function's code where a line probe can go, for listings
 * (sonde probe --lines): `binary` a path or a program in PATH, `func` a
 * function symbol. Fills *rows (lines.h: file, line, addresses; sorted by
 * file then line; free with probes_lines_free, which also frees what the
 * rows point to) and returns how many, or -1 with one line in err (binary
 * or function not found, no DWARF). */
struct line_row;
struct probes_lines {
	struct line_row *rows;
	int n;
	char *binary;       /* the file read */
	uint64_t lo, hi;    /* the function's addresses */
	void *dwarf;        /* keeps the rows' file names alive */
	int fd, debug_fd;
};
int probes_function_lines(const char *binary, const char *func, struct probes_lines *out,
			  char *err, size_t errlen);
void probes_lines_free(struct probes_lines *l);

/* Splits "BINARY:FUNC" at its separating colon (not one of a "::"). Returns
 * the index of the colon or -1 when the spec has no binary part. */
int probes_split(const char *spec);

/* Whether a name in a spec is a glob (*, ?, [...]). Pure. */
bool probes_is_glob(const char *s);

/* Splits "[BINARY:]FILE:LINE" (the last part all digits): returns 1 with
 * *binary (malloc'd, NULL when absent), *file (malloc'd) and *line; 0 when
 * the spec is not a line spec. */
int probes_split_line(const char *spec, char **binary, char **file, unsigned *line);

/* Finds a program the way execvp would (PATH search when there is no '/').
 * Returns a malloc'd path or NULL. */
char *probes_which(const char *program);

/* The separate debug file of an ELF file (by build-id, then
 * .gnu_debuglink; see probes_resolve). Returns its fd with *debug_elf open
 * on it (the caller ends both), or -1 when none is installed. */
typedef struct Elf Elf;
int probes_debug_file(Elf *elf, const char *binary, Elf **debug_elf);

#endif
