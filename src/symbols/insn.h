/* insn — where machine instructions begin, decoded with capstone.
 *
 * A uprobe replaces the first byte of the instruction at its address with
 * a breakpoint. At an address inside an instruction it overwrites part of
 * an operand instead: the probe never fires and the program computes with
 * the changed bytes. Only an address that decoding from a known start
 * (a function's first instruction) reaches is safe. */
#ifndef SONDE_INSN_H
#define SONDE_INSN_H

#include <stddef.h>
#include <stdint.h>

enum insn_reach {
	INSN_REACHED,   /* an instruction begins at the address */
	INSN_INSIDE,    /* the address is inside the instruction at *inside_of */
	INSN_UNDECODED, /* decoding stopped before it (unknown bytes, or not x86-64) */
};

/* Decodes `code` — the bytes at virtual address `start`, up to and past
 * `addr` — one instruction after another from `start`, and says whether
 * one begins at `addr`. On INSN_INSIDE, *inside_of is the address of the
 * instruction that holds it. */
enum insn_reach insn_reaches(const uint8_t *code, size_t size, uint64_t start, uint64_t addr,
			     uint64_t *inside_of);

/* Says, in why, when the kernel's uprobes refuse the instruction at
 * `code` (its first bytes, `size` of them) and returns 1; else 0. x86-64:
 * a lock or ES/CS/SS/DS segment prefix, and instructions a breakpoint
 * cannot stand in for (int3, int n, into, iret, int1, hlt, in/out,
 * cli/sti), as the kernel's uprobe_analyze_insn decides. */
int insn_unprobeable(const uint8_t *code, size_t size, char *why, size_t whylen);

#endif
