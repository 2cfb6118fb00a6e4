/* usdt — a binary's statically defined probes (SDT: DTRACE_PROBE and
 * systemtap's <sys/sdt.h>, as Python, libc, Node and PostgreSQL have
 * them), read from its .note.stapsdt notes: each one's provider, name,
 * address (a nop the compiler placed), semaphore (a 2-byte counter the
 * program reads to skip the work of a probe nobody watches; 0: none) and
 * its arguments' operand specs ("-4@%eax 8@(%rbx) 8@-16(%rbp)
 * 8@sym(%rip) $5"), each of a size and sign; a symbol's operand is the
 * variable at the symbol's address (USDT_ARG_ADDR), looked up in the
 * file's symbol tables. Addresses are turned into
 * file offsets, as uprobes take them (the semaphore's as the kernel's
 * reference counter offset). Prelinked binaries: the note's base against
 * the .stapsdt.base section. x86-64 operands. */
#ifndef SONDE_USDT_H
#define SONDE_USDT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USDT_MAX_ARGS 12

enum usdt_arg_kind {
	USDT_ARG_REG,   /* the register's value */
	USDT_ARG_MEM,   /* the bytes at register + offset */
	USDT_ARG_CONST, /* an immediate */
	USDT_ARG_ADDR,  /* the bytes at a static address: offset its vaddr in the
			 * file (a variable, sym(%rip) or sym+8(%rip), resolved by
			 * usdt_read from the file's symbol tables) */
};

#define USDT_SYMBOL_MAX 128

struct usdt_arg {
	enum usdt_arg_kind kind;
	unsigned size;  /* 1, 2, 4 or 8 bytes */
	bool is_signed;
	int reg;        /* DWARF register number (16: rip) */
	int64_t offset; /* MEM: the displacement; CONST: the value; ADDR: the vaddr */
	/* A rip-relative operand naming a symbol (sym+8(%rip)), as parsed:
	 * kind MEM, reg 16, offset the +8; "" for any other. */
	char symbol[USDT_SYMBOL_MAX];
	uint64_t symbol_value; /* ADDR: the symbol's value it was resolved to */
};

struct usdt_probe {
	char *provider, *name;
	uint64_t vaddr, file_offset;       /* the probe's address */
	uint64_t semaphore_vaddr;          /* 0: none */
	uint64_t semaphore_offset;         /* its file offset */
	char *args_text;                   /* as the note has it */
	struct usdt_arg args[USDT_MAX_ARGS];
	int nargs;                         /* -1: an operand it cannot read */
};

/* A span pair's key: the arguments at the positions where both probes
 * have an 8-byte unsigned value (a pointer, an id: Python's file and
 * function names, PostgreSQL's query, Ruby's class and method) read from
 * a register or memory at a register, the same operand at every site of
 * each probe; up to USDT_PAIR_KEYS of them. n == 0: none. */
#define USDT_PAIR_KEYS 3
struct usdt_pair_key {
	int n;
	int positions[USDT_PAIR_KEYS];
	struct usdt_arg entry[USDT_PAIR_KEYS], ret[USDT_PAIR_KEYS];
};

/* The probes of the ELF file at path, in note order (*out malloc'd: free
 * with usdt_free). Returns how many (0: none), or -1 with one line in err
 * (not an ELF file it can read, a note it cannot make sense of). */
int usdt_read(const char *path, struct usdt_probe **out, char *err, size_t errlen);
void usdt_free(struct usdt_probe *p, int n);

/* Parses one operand spec ("-4@%eax", "8@-16(%rbp)", "8@sym(%rip)" with
 * its displacement resolved by the assembler, "$5"). Returns 0 or -1. Pure. */
int usdt_parse_arg(const char *text, struct usdt_arg *out);

#endif
