/* cfi — unwind tables for x86_64, compiled from a binary's call frame
 * information, and the unwinder that follows them.
 *
 * Code built without frame pointers (Debian's libc, libpython, most -O2
 * programs) can only be unwound with the CFI the compiler emits for
 * exceptions: .eh_frame (or DWARF's .debug_frame), a byte-code program per
 * function saying, for every instruction, where the canonical frame address
 * (CFA: the caller's stack pointer) and the saved registers are. Running
 * those programs in the kernel at every sample is out of the question, so
 * they are run once per binary here, into a table of rows sorted by address:
 * from this address on, the CFA is rsp+16 and the caller's rbp is at CFA-24.
 * The in-kernel unwinder binary-searches that table in a bounded loop.
 *
 * Rows come from every FDE of .eh_frame, plus the FDEs of .debug_frame that
 * no .eh_frame FDE overlaps; when those describe less than half of the
 * binary's code, the .debug_frame of its separate debug file is read too
 * (found by build-id or .gnu_debuglink, as the symbolizer finds it).
 * Consecutive identical rows are merged. A rule the kernel cannot follow is
 * not dropped nor guessed: its rows say CFI_CFA_UNSUPPORTED (or
 * CFI_RBP_UNSUPPORTED for the saved rbp), so the unwinder stops there and
 * says why. An FDE whose program is malformed (truncated or unknown
 * instructions, remember_state deeper than 64, a location going back) is
 * one CFI_CFA_UNSUPPORTED row over its range; one whose range cannot be
 * read (a bad CIE or pointer) gives none. Both are counted.
 *
 * Only what an x86_64 unwinder that tracks rip, rsp and rbp needs is kept:
 * the CFA rule, the rbp rule, and a check that the return address is at
 * CFA-8 and the caller's rsp is the CFA, as the ABI has it (a row where they
 * are not is UNSUPPORTED). Other callee-saved registers are not tracked: no
 * CFA rule in practice depends on them past the function that saved them.
 */
#ifndef SONDE_CFI_H
#define SONDE_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The table format (rows, rules, their decoding) is the contract with the
 * in-kernel unwinder: it is in bpf/sonde_abi.h, which cfi.c (that writes
 * rows) and the engine (that loads them) include, and this header not, so
 * that the kernel's ABI goes no further up than they do. */
struct cfi_row { /* struct sonde_unwind_row (cfi.c asserts it) */
	uint32_t pc;
	uint32_t rule;
};
_Static_assert(sizeof(struct cfi_row) == 8, "the row is 8 bytes: the BPF contract");

/* A binary's table. */
struct cfi_table {
	uint64_t base;         /* ELF vaddr of rows[0] */
	struct cfi_row *rows;
	uint32_t nrows;
	uint8_t build_id[64];  /* GNU build-id, build_id_len bytes (0: none) */
	uint8_t build_id_len;
	/* PT_LOAD segments, to turn a mapping's file offset into a vaddr. */
	struct cfi_segment { uint64_t offset, vaddr, filesz; } *segs;
	uint32_t nsegs;
	/* What the build found. */
	uint64_t fdes;          /* FDEs that gave rows */
	uint64_t fdes_bad;      /* FDEs or CIEs that could not be read, or whose program
				 * was malformed (their range is left without rows) */
	uint64_t fdes_overlap;  /* FDEs dropped for overlapping an earlier one */
	uint64_t rows_by_cfa[16]; /* rows by CFA kind, after merging */
	uint64_t rows_rbp_unsupported;
	bool from_debug_frame;  /* some rows came from .debug_frame */
	bool from_debug_file;   /* ... of the separate debug file */
};

/* Bytes a table holds (what a cache's budget counts). */
size_t cfi_table_bytes(const struct cfi_table *t);

/* Builds the table of the ELF file open on fd (not closed; `path` names it
 * for finding separate debug info, may be NULL). Returns NULL with one line
 * in err when the file is not ELF; a binary without CFI gives a table with
 * no rows. */
struct cfi_table *cfi_table_from_fd(int fd, const char *path, char *err, size_t errlen);

/* Builds the table of one CFI section's bytes, loaded at addr (x86_64:
 * little-endian, 8-byte addresses): the builder without ELF around it, for
 * tests and fuzzing. Never NULL. */
struct cfi_table *cfi_table_from_section(const void *data, size_t size, uint64_t addr,
					 bool eh_frame);

void cfi_table_free(struct cfi_table *t);

/* The row holding ELF vaddr (exactly the BPF lookup), or NULL when vaddr
 * is below the table (a CFI_CFA_NONE answer). */
const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr);

/* The ELF vaddr of a file offset (a mapping's offset), by PT_LOAD. */
bool cfi_table_vaddr(const struct cfi_table *t, uint64_t offset, uint64_t *vaddr);

/* A row's rule as text ("rsp+16 rbp=c-16", "plt", "end", ...): tests, dumps. */
void cfi_rule_format(uint32_t rule, char *buf, size_t size);

/* ==== The reference unwinder: what the in-kernel one must do ============ */

struct cfi_regs {
	uint64_t rip, rsp, rbp;
	bool rbp_known;  /* false once a frame's rbp rule could not be followed */
	/* rip is where execution stopped (the interrupted frame, a frame under
	 * a signal frame), not a return address: looked up as is, not rip-1. */
	bool exact_pc;
	/* DWARF registers 0..16 of this frame when all are known (the
	 * interrupted frame), else NULL: only CFI_CFA_REG rows need them. */
	const uint64_t *gprs;
};

enum cfi_step {
	CFI_STEP_CFI,         /* unwound by the table */
	CFI_STEP_FP,          /* unwound by frame pointer (no table, or no row) */
	CFI_STEP_END,         /* the outermost frame: the stack is complete */
	CFI_STEP_UNSUPPORTED, /* the row's rule cannot be followed here */
	CFI_STEP_NO_RBP,      /* the rule needs rbp, which an earlier frame lost */
	CFI_STEP_READ_FAULT,  /* stack memory could not be read */
	CFI_STEP_BAD_FRAME,   /* the result cannot be a caller: the CFA is not above
			       * rsp, or the return address is 0 */
};

/* Reads the 8 bytes at addr of the target; false when it cannot. */
typedef bool (*cfi_read_fn)(void *ctx, uint64_t addr, uint64_t *value);

/* One step: from the frame in *r, whose rip is in a mapping with load bias
 * `bias` covered by table t (NULL: no table for that mapping), computes the
 * caller's rip, rsp and rbp into *r and returns CFI_STEP_CFI or _FP, or
 * says why not (leaving *r as it was):
 *   row = lookup(exact_pc ? rip : rip - 1)
 *   NONE (or no table): frame pointers: needs rbp known and >= rsp;
 *         rip' = *(rbp + 8), rsp' = rbp + 16, rbp' = *rbp
 *   END: stop, complete. UNSUPPORTED: stop.
 *   SIGNAL: rip' = *(rsp + 168), rsp' = *(rsp + 160), rbp' = *(rsp + 120),
 *         exact_pc' = true
 *   else: CFA from the row; rip' = *(CFA - 8); rsp' = CFA;
 *         rbp' = SAME: rbp; AT_CFA: *(CFA + off); else unknown
 *   every step: rsp' > rsp (the stack only grows down, so walks end) and
 *   rip' != 0; exact_pc' = false and gprs' = NULL unless said. */
enum cfi_step cfi_unwind_step(const struct cfi_table *t, uint64_t bias, struct cfi_regs *r,
			      cfi_read_fn read, void *ctx);

const char *cfi_step_name(enum cfi_step s);

#endif
