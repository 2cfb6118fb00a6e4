/* dwarfexpr — one DWARF location expression, as in force at a probe
 * address, translated into fetch operations (bpf/sonde_abi.h, "Fetch
 * programs") for the kernel's interpreter. dwarfvar.h resolves names,
 * types and location lists and calls this for the expression at hand.
 *
 * Read: DW_OP_reg*, regx, breg*, bregx, fbreg (over the function's frame
 * base: a register, or DW_OP_call_frame_cfa folded from the CFI rule at
 * the address), call_frame_cfa, addr, addrx (the caller puts the address
 * from .debug_addr in number, 1 in number2), lit*, const*, constu/s,
 * constx, stack_value, deref, deref_size, plus_uconst, plus, minus, mul,
 * div, mod, and, or, xor, shl, shr, shra, neg, not, eq..ge, dup, drop,
 * swap, over, nop, piece (a value of at most 8 bytes), implicit_value (at
 * most 8 bytes), and entry_value (as "not available here"). Any other
 * operation is refused by name. x86-64 register numbers (0..16). */
#ifndef SONDE_DWARFEXPR_H
#define SONDE_DWARFEXPR_H

#include <stddef.h>
#include <stdint.h>

#include "capexpr.h"
#include "sonde_abi.h"

/* One operation of a location expression: libdw's Dwarf_Op without its
 * offset (the caller copies atom, number and number2 from what libdw
 * gives), so this header leaves libdw to the symbols layer. For
 * DW_OP_implicit_value, number2 points at the value's bytes, as in libdw. */
struct dwarfexpr_op {
	uint8_t atom;
	uint64_t number, number2;
};

/* Where an expression leaves its value. */
enum dwarfexpr_where {
	DWARFEXPR_MEM,         /* its address is on the stack */
	DWARFEXPR_REG,         /* it is in a register (the whole location is DW_OP_reg*) */
	DWARFEXPR_VAL,         /* the value itself is on the stack */
	DWARFEXPR_UNAVAILABLE, /* not computable here (DW_OP_entry_value) */
};

/* A location expression and what it is read against. */
struct dwarfexpr_input {
	const struct dwarfexpr_op *expr;
	size_t n;
	const struct dwarfexpr_op *fb; /* the frame base's expression (NULL: none) */
	size_t nfb;
	uint32_t cfa_rule; /* the CFA rule at the address (a struct cfi_row rule; 0: none) */
};

/* Where the translation goes: ops[max], and where it leaves the value. */
struct dwarfexpr_output {
	struct sonde_fetch_op *ops;
	int max;
	int where; /* enum dwarfexpr_where */
	int reg;   /* DWARFEXPR_REG: the register */
};

/* Translates in's expression into out->ops. Returns the number of
 * operations written and sets out->where (and out->reg for DWARFEXPR_REG),
 * or -1 with one line in err naming what it cannot read. */
int dwarfexpr_translate(const struct dwarfexpr_input *in, struct dwarfexpr_output *out, char *err,
			size_t errlen);

/* Appends op (its code and operands; _pad is 0) to ops[max] (*n of them
 * used). Returns 0, or -1 when full. */
int dwarfexpr_emit(struct sonde_fetch_op *ops, int *n, int max, struct sonde_fetch_op op);

/* The fetch code of a capture expression's operator: a binary one's
 * (FETCH_ADD ...), a unary one's (FETCH_NEG, FETCH_NOT, FETCH_BNOT). */
uint8_t dwarfexpr_op_code(enum cap_op op);

#endif
