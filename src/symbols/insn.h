/* insn — where machine instructions begin, and which of them the kernel's
 * uprobes can be trusted with, decoded with capstone.
 *
 * A uprobe replaces the first byte of the instruction at its address with
 * a breakpoint. At an address inside an instruction it overwrites part of
 * an operand instead: the probe never fires and the program computes with
 * the changed bytes. Only an address that decoding from a known start
 * (a function's first instruction) reaches is safe.
 *
 * At a breakpoint the kernel runs the original instruction a copy at a
 * time (out of line) or emulates it. Its x86 decoder reads the opcode byte
 * of a VEX (AVX, AVX2), EVEX (AVX-512) or XOP instruction as if it were a
 * one-byte legacy opcode, with what follows (Linux 6.18,
 * arch/x86/kernel/uprobes.c): vmovd's 0x6e reads as outs, refused with
 * ENOTSUPP when the file is mapped (no word to the user, the probe simply
 * never fires); vpbroadcastb's 0x78 reads as js, "emulated" as a jump
 * instead of being run (the function computes garbage, in every process
 * the breakpoint is in); an opcode 0xc2 reads as ret, whose instruction
 * pointer is never fixed up. So no VEX, EVEX or XOP instruction is ever
 * probed, whichever way this kernel would take it. */
#ifndef SONDE_INSN_H
#define SONDE_INSN_H

#include <stdbool.h>
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

/* Says, in why, when the kernel's uprobes refuse or mis-step the
 * instruction at `code` (its first bytes, `size` of them) and returns 1;
 * else 0. x86-64: a VEX, EVEX or XOP encoding (above); a lock or
 * ES/CS/SS/DS segment prefix; an opcode the kernel's table of good
 * instructions leaves out (int3, int n, into, iret, int1, hlt, in/out,
 * ins/outs, cli/sti, the opcodes invalid in 64-bit mode); mov to %ss; a
 * branch with an operand-size prefix; bytes that do not decode. */
int insn_unprobeable(const uint8_t *code, size_t size, char *why, size_t whylen);

/* Where an entry probe on the function whose code (`size` bytes: its
 * symbol's size, or as much as is known) starts at `start` can go: its
 * first instruction when the kernel can step it; else the first one after
 * it that the kernel can, provided every instruction skipped is a plain
 * computation on vector registers (it writes no general-purpose register,
 * no %rsp, no memory, branches nowhere: so the return address is still at
 * the top of the stack for the return probe, and the arguments are where
 * the caller put them) and no branch of the function lands between the
 * two. Returns 0 with *site (start, or the later address; then `why` says
 * which instructions were stepped over and why), or -1 with why naming
 * the instruction that stops it. Not x86-64: *site = start. */
int insn_entry_site(const uint8_t *code, size_t size, uint64_t start, uint64_t *site, char *why,
		    size_t whylen);

/* How the kernel's uprobes take the instruction a probe replaces: some it
 * emulates, the others it single-steps out of line (a second trap inside
 * the call's measured time), so each kind has its own calibrated trap
 * costs. */
enum insn_trap {
	INSN_TRAP_EMULATED, /* push of a register, relative branches and calls */
	INSN_TRAP_ENDBR,    /* endbr64 */
	INSN_TRAP_NOP,      /* nop, multi-byte nop (0f 1f) */
	INSN_TRAP_STEPPED,  /* anything else: single-stepped */
};

/* The kind of the instruction at `code` (its first bytes, `size` of them):
 * INSN_TRAP_STEPPED when fewer than 2 bytes, bytes that do not decode, or
 * not x86-64. */
enum insn_trap insn_trap_kind(const uint8_t *code, size_t size);

/* The same for the instruction at a file offset of a binary, read from the
 * file (INSN_TRAP_STEPPED when it cannot be read). */
enum insn_trap insn_trap_at(const char *path, uint64_t file_offset);

/* A conditional jump's condition: x86's condition codes 0..15 (the low
 * nibble of jcc's opcode: INSN_COND_O, NO, B, AE, E, NE, BE, A, S, NS, P,
 * NP, L, GE, LE, G, each even one's opposite the odd one after it), then
 * the jumps that test %rcx: jrcxz, jecxz, and loop/loope/loopne, which
 * decrement %rcx first and jump while it is not zero (and ZF set / clear).
 * The numbers are the BPF evaluator's too (SONDE_BRANCH_* in sonde_abi.h). */
enum insn_cond {
	INSN_COND_O = 0,
	INSN_COND_E = 4,
	INSN_COND_G = 15,
	INSN_COND_RCXZ = 16,
	INSN_COND_ECXZ = 17,
	INSN_COND_LOOP = 18,
	INSN_COND_LOOPE = 19,
	INSN_COND_LOOPNE = 20,
};

/* A conditional jump found in code. */
struct insn_branch {
	uint64_t addr;   /* where it is */
	uint64_t target; /* where it goes when taken */
	uint64_t next;   /* the instruction after it, where it goes when not */
	enum insn_cond cond;
	char text[64];   /* as objdump prints it, AT&T: "jle 0x1189" */
	/* Why sonde cannot evaluate its outcome ("" when it can): a loop
	 * counting in %ecx (an address-size prefix). */
	char unsupported[64];
};

/* Decodes `code` (the bytes at virtual address `start`, a known beginning
 * of an instruction, through hi) and stores in out (at most max) the
 * conditional jumps whose address is in [lo, hi), in address order.
 * Returns how many it found (it stops counting at max), or -1 when the
 * bytes stop decoding before hi or no instruction begins at lo (lo is then
 * inside one: not code decoding from start reaches). */
int insn_branches(const uint8_t *code, size_t size, uint64_t start, uint64_t lo, uint64_t hi,
		  struct insn_branch *out, int max);

/* How an instruction passes control on, for a function's basic blocks. */
enum insn_flow {
	INSN_FLOW_NEXT,     /* to the next instruction (calls too: they return) */
	INSN_FLOW_COND,     /* a conditional jump: to target, or the next */
	INSN_FLOW_JUMP,     /* a direct jump: to target only */
	INSN_FLOW_INDIRECT, /* a jump through a register or memory (a switch's table) */
	INSN_FLOW_RETURN,   /* ret */
	INSN_FLOW_STOP,     /* ud2, hlt, int3: never goes on */
};

/* One decoded instruction. */
struct insn_info {
	uint64_t addr;
	uint8_t size;
	enum insn_flow flow;
	bool call;        /* a call (target: its callee, when direct) */
	uint64_t target;  /* a direct jump's or call's target, else 0 */
	enum insn_cond cond; /* INSN_FLOW_COND: its condition */
	char text[80];    /* as objdump prints it, AT&T: "jle 0x1189" */
};

/* Every instruction of `code` (size bytes at virtual address start) in
 * *out (malloc'd): how many, decoding stopping at the first bytes that do
 * not decode; -1 when capstone cannot be opened or not x86-64. */
int insn_list(const uint8_t *code, size_t size, uint64_t start, struct insn_info **out);

#endif
