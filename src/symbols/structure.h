/* structure — a function's structure, as `sonde explore` shows it and the
 * probes are placed on it: from DWARF its source lines (each with the
 * addresses a line probe would use, one per instance of its code), its
 * lexical blocks and the calls inlined into it; from capstone its
 * instructions, basic blocks, the edges between them, loops (the back edges
 * of a depth-first walk from its entry: an edge to a block still on the
 * walk's path) and conditional jumps (each with its source line and the
 * lines its two ways go to).
 *
 * A block starts at the function's entry, at each target of a jump inside
 * the function, and after each jump, return or trap; it ends before the
 * next start. A jump out of the function (a tail call) and an indirect
 * jump (a switch's table) end a block with no successor inside: `exits`
 * says so. */
#ifndef SONDE_STRUCTURE_H
#define SONDE_STRUCTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insn.h"

struct structure_insn {
	struct insn_info i;
	unsigned line;     /* its line (0: none), in file (NULL: none) */
	const char *file;  /* a path of the line table, owned by the structure */
	int block;         /* the block holding it */
	char *refused;     /* why a probe here is refused (insn.h), malloc'd; NULL: it is not */
	char *callee;      /* a direct call's function in the binary (malloc'd), else NULL */
};

struct structure_block {
	uint64_t lo, hi;     /* [lo, hi) */
	int first, n;        /* its instructions: insns[first .. first + n) */
	int succ[2], nsucc;  /* successors (block indexes): the jump's target first */
	bool exits;          /* it leaves the function: ret, tail call, indirect jump, trap */
	bool loop_head;      /* a back edge goes to it */
	bool reachable;      /* the entry leads to it (else padding, or reached by an
			      * indirect jump only) */
	unsigned lo_line, hi_line; /* the lines of its instructions in the function's file */
};

/* A back edge: from block `from` to loop head `head`. */
struct structure_loop {
	int head, from;
};

/* A lexical block or an inlined call inside the function (DWARF). */
struct structure_scope {
	bool inlined;        /* an inlined call (name the callee); else a lexical block */
	char *name;          /* malloc'd; NULL for a lexical block */
	uint64_t lo, hi;     /* its lowest and highest addresses (its ranges' span) */
	int depth;           /* 1: directly in the function */
	unsigned call_line;  /* an inlined call: its line in call_file */
	char *call_file;     /* malloc'd base name, or NULL */
	unsigned decl_line;  /* where the callee or block begins in the source */
};

/* A source line of the function's file, from its first line to its last. */
struct structure_line {
	unsigned line;
	int sites;       /* addresses a line probe would use (0: no statement here) */
	int insns;       /* instructions whose line this is */
	int branches;    /* conditional jumps on it */
	bool refused;    /* a line probe would be refused (the kernel cannot step one site) */
	bool branch_refused; /* a branch probe would be: the kernel cannot take one of its jumps */
	char *text;      /* the source text (malloc'd), NULL when the file was not found */
};

struct structure {
	char *binary;        /* the file read */
	char *function;      /* its symbol's name */
	uint64_t lo, hi;     /* its addresses */
	char *file;          /* the function's source file as DWARF names it (malloc'd) */
	char *source_path;   /* where its text was read (malloc'd), NULL when not found */
	struct structure_insn *insns;
	int ninsns;
	struct structure_block *blocks;
	int nblocks;
	struct structure_loop *loops;
	int nloops;
	struct structure_scope *scopes;
	int nscopes;
	struct structure_line *lines;
	int nlines;
	bool has_dwarf;      /* false: instructions and blocks only */
	void *dwarf;         /* keeps the insns' file names alive */
	int fd, debug_fd;
};

/* What to explore: a function (func) or the function holding a line
 * (file, line), in binary (a path or a program in PATH); source_dir, when
 * set, is tried before the paths DWARF gives (the file's name under it,
 * then its path below the compilation directory). */
struct structure_query {
	const char *binary;
	const char *func;
	const char *file;
	unsigned line;
	const char *source_dir;
};

/* Builds q's structure in *out: 0, or -1 with one line in err (binary or
 * function not found, with the nearest names; a line with no code; code
 * that does not decode). Free with structure_free. */
int structure_build(const struct structure_query *q, struct structure *out, char *err,
		    size_t errlen);

void structure_free(struct structure *s);

/* A function of a binary, for listings (explore without FUNC). */
struct structure_fn {
	char *name;        /* malloc'd */
	uint64_t vaddr, size;
	char *file;        /* its entry's source file (malloc'd base name), or NULL */
	unsigned line;     /* its entry's line (0: not known) */
};

/* The functions of binary (.symtab, else .dynsym; a separate debug file's
 * when it has no .symtab), by address, each with where its code begins in
 * the source when DWARF says: how many in *out (free with
 * structure_fns_free), or -1 with err. */
int structure_functions(const char *binary, struct structure_fn **out, char *err, size_t errlen);
void structure_fns_free(struct structure_fn *f, int n);

/* The index of the line row for `line` (-1: outside the function's lines). */
int structure_line_index(const struct structure *s, unsigned line);

#endif
