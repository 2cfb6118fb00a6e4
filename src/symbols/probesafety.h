/* probesafety — the functions and addresses a probe would break: the
 * entry point, a function that never returns (DW_AT_noreturn), an address
 * inside an instruction (decoded from the start of the function holding it),
 * and first instructions the kernel's uprobes refuse or mis-step (insn.h),
 * past which a function's entry probe moves when it can. */
#ifndef SONDE_PROBESAFETY_H
#define SONDE_PROBESAFETY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "insn.h"
#include "probedebug.h"
#include "probesyms.h"

struct symbols_fdes;


/* What is read once per binary to tell, lazily. */
struct safety {
	Elf *elf;
	int fd;             /* the binary, whose bytes are the code */
	int dwarf_fd;       /* the binary or its debug file */
	Elf *debug_elf;
	Dwarf *dw;
	bool dw_tried;
	struct symbols_fdes *fdes;
	const struct function_list *fl;
	uint64_t entry;     /* e_entry, 0 if none */
};

enum unsafe {
	SAFE,
	UNSAFE_ENTRY,    /* the process's entry point: never called, never returns */
	UNSAFE_NORETURN, /* DW_AT_noreturn */
	UNSAFE_INSIDE,   /* the address is inside an instruction */
	UNSAFE_INSN,     /* the kernel cannot step its first instructions (insn.h) */
};

/* What the safety checks read for a binary's functions fl: the binary
 * (elf, fd) and its separate debug file, if any. End with safety_end. */
struct safety safety_of(Elf *elf, int fd, const struct debug_file *dbg,
			const struct function_list *fl);
void safety_end(struct safety *c);

/* Where a function's entry probe goes, or why it cannot go there. */
struct safe_site {
	uint64_t site;   /* f's address, or past first instructions the kernel
			  * cannot step (insn_entry_site) */
	char moved[400]; /* then why it moved, for a note; else "" */
	char why[400];   /* when unsafe: why, short (for a glob's note) */
	bool trap_known; /* the code at site was decoded: trap is how the kernel takes it */
	enum insn_trap trap;
};

/* Why a span probe on f would break the target (SAFE: it would not), and
 * where its entry probe goes, in *s. */
enum unsafe check_safe(struct safety *c, const struct elf_function *f, struct safe_site *s);

/* The one line refusing func of binary for reason u (why: check_safe's). */
void explain_unsafe(enum unsafe u, const char *func, const char *binary, const char *why,
		    char *err, size_t errlen);

/* Why the kernel cannot probe the code at vaddr (file offset off), in why;
 * false when it can. */
bool line_site_unsafe(struct safety *c, uint64_t vaddr, uint64_t off, char *why, size_t size);

/* The function holding vaddr: a symbol around it (with its end), else the
 * start of its unwind table entry (*end 0: not known). False when neither
 * covers it. */
bool safety_function_of(struct safety *c, uint64_t vaddr, uint64_t *start, uint64_t *end,
			const char **name);

/* The code from vaddr to end (at most 1 MiB), read from the binary: how
 * many bytes (0: none), in *buf (malloc'd). */
size_t safety_read_code(struct safety *c, uint64_t vaddr, uint64_t end, uint8_t **buf);

#endif
