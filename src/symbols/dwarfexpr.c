/* dwarfexpr — one DWARF location expression at one address -> fetch
 * operations (see dwarfexpr.h). */
#include "dwarfexpr.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "cfi.h"
#include "errbuf.h"
#include "util.h"

uint8_t dwarfexpr_op_code(enum cap_op op)
{
	static const uint8_t codes[] = {
		[CAP_OP_ADD] = FETCH_ADD, [CAP_OP_SUB] = FETCH_SUB, [CAP_OP_MUL] = FETCH_MUL,
		[CAP_OP_DIV] = FETCH_DIV, [CAP_OP_MOD] = FETCH_MOD, [CAP_OP_SHL] = FETCH_SHL,
		[CAP_OP_SHR] = FETCH_SHR, [CAP_OP_BAND] = FETCH_AND, [CAP_OP_BOR] = FETCH_OR,
		[CAP_OP_BXOR] = FETCH_XOR, [CAP_OP_EQ] = FETCH_EQ, [CAP_OP_NE] = FETCH_NE,
		[CAP_OP_LT] = FETCH_LT, [CAP_OP_LE] = FETCH_LE, [CAP_OP_GT] = FETCH_GT,
		[CAP_OP_GE] = FETCH_GE, [CAP_OP_LAND] = FETCH_LAND, [CAP_OP_LOR] = FETCH_LOR,
		[CAP_OP_NEG] = FETCH_NEG, [CAP_OP_NOT] = FETCH_NOT, [CAP_OP_BNOT] = FETCH_BNOT,
	};
	return (unsigned)op < sizeof(codes) ? codes[op] : FETCH_END;
}

int dwarfexpr_emit(struct sonde_fetch_op *ops, int *n, int max, struct sonde_fetch_op op)
{
	if (*n >= max)
		return -1;
	ops[(*n)++] = op;
	return 0;
}

/* The name of an operation sonde cannot read, for its error (buf: when it
 * has no name here). */
static const char *op_name(unsigned atom, char *buf, size_t size)
{
	switch (atom) {
	case DW_OP_skip: return "DW_OP_skip";
	case DW_OP_bra: return "DW_OP_bra";
	case DW_OP_call2: return "DW_OP_call2";
	case DW_OP_call4: return "DW_OP_call4";
	case DW_OP_call_ref: return "DW_OP_call_ref";
	case DW_OP_form_tls_address: return "DW_OP_form_tls_address";
	case DW_OP_GNU_push_tls_address: return "DW_OP_GNU_push_tls_address";
	case DW_OP_implicit_pointer: return "DW_OP_implicit_pointer";
	case DW_OP_GNU_implicit_pointer: return "DW_OP_GNU_implicit_pointer";
	case DW_OP_GNU_parameter_ref: return "DW_OP_GNU_parameter_ref";
	case DW_OP_bit_piece: return "DW_OP_bit_piece";
	case DW_OP_xderef: return "DW_OP_xderef";
	case DW_OP_xderef_size: return "DW_OP_xderef_size";
	case DW_OP_push_object_address: return "DW_OP_push_object_address";
	case DW_OP_rot: return "DW_OP_rot";
	case DW_OP_pick: return "DW_OP_pick";
	case DW_OP_abs: return "DW_OP_abs";
	case DW_OP_deref_type: case DW_OP_GNU_deref_type: return "DW_OP_deref_type";
	case DW_OP_const_type: case DW_OP_GNU_const_type: return "DW_OP_const_type";
	case DW_OP_regval_type: case DW_OP_GNU_regval_type: return "DW_OP_regval_type";
	case DW_OP_convert: case DW_OP_GNU_convert: return "DW_OP_convert";
	case DW_OP_reinterpret: case DW_OP_GNU_reinterpret: return "DW_OP_reinterpret";
	case DW_OP_implicit_value: return "DW_OP_implicit_value";
	case DW_OP_piece: return "DW_OP_piece";
	}
	snprintf(buf, size, "DW_OP 0x%x", atom);
	return buf;
}

/* What translating an expression works with: its surroundings at the
 * address, and the program being written. */
struct translation {
	const struct dwarfexpr_op *fb; /* the function's frame base; NULL: none */
	size_t nfb;
	uint32_t cfa_rule;           /* the CFA rule at the address; 0: none */
	struct sonde_fetch_op *ops;  /* the program: ops[max], n written */
	int n, max;
	char *err;
	size_t errlen;
};

/* Where a segment leaves its value: where (enum dwarfexpr_where), and reg
 * for DWARFEXPR_REG. */
struct place {
	int where, reg;
};

static int emit(struct translation *tr, uint8_t code, uint8_t a, uint16_t b, int64_t imm)
{
	if (dwarfexpr_emit(tr->ops, &tr->n, tr->max,
			   (struct sonde_fetch_op){.code = code, .a = a, .b = b, .imm = imm}))
		return errbuf_set(tr->err, tr->errlen, "location too long for sonde's %d operations",
				  SONDE_FETCH_OPS);
	return 0;
}

/* The CFA at the probe address as a register + offset (the CFI row's rule). */
static int cfa_ops(struct translation *tr)
{
	uint32_t rule = tr->cfa_rule;
	unsigned kind = rule ? cfi_rule_cfa(rule) : CFI_CFA_NONE;
	if (kind == CFI_CFA_RSP || kind == CFI_CFA_RBP) {
		int reg = kind == CFI_CFA_RSP ? 7 : 6;
		if (dwarfexpr_emit(tr->ops, &tr->n, tr->max,
				   (struct sonde_fetch_op){.code = FETCH_REG, .a = (uint8_t)reg,
							   .imm = cfi_rule_cfa_off(rule)}))
			return errbuf_set(tr->err, tr->errlen, "program too long");
		return 0;
	}
	char text[64] = "none";
	if (rule)
		cfi_rule_format(rule, text, sizeof(text));
	return errbuf_set(tr->err, tr->errlen,
			  "its frame base is DW_OP_call_frame_cfa, and the CFA at this address "
			  "(%s) is not a register plus an offset: sonde cannot fold it",
			  text);
}

/* The operations that become one fetch operation with no operand: its code,
 * and b (1: the signed form). */
static const struct {
	uint8_t atom, code, b;
} plain_ops[] = {
	{DW_OP_plus, FETCH_ADD, 0},  {DW_OP_minus, FETCH_SUB, 0}, {DW_OP_mul, FETCH_MUL, 0},
	{DW_OP_div, FETCH_DIV, 1},   {DW_OP_mod, FETCH_MOD, 0},   {DW_OP_and, FETCH_AND, 0},
	{DW_OP_or, FETCH_OR, 0},     {DW_OP_xor, FETCH_XOR, 0},   {DW_OP_shl, FETCH_SHL, 0},
	{DW_OP_shr, FETCH_SHR, 0},   {DW_OP_shra, FETCH_SHR, 1},  {DW_OP_neg, FETCH_NEG, 0},
	{DW_OP_not, FETCH_BNOT, 0},  {DW_OP_eq, FETCH_EQ, 1},     {DW_OP_ne, FETCH_NE, 1},
	{DW_OP_lt, FETCH_LT, 1},     {DW_OP_le, FETCH_LE, 1},     {DW_OP_gt, FETCH_GT, 1},
	{DW_OP_ge, FETCH_GE, 1},     {DW_OP_dup, FETCH_DUP, 0},   {DW_OP_drop, FETCH_DROP, 0},
	{DW_OP_swap, FETCH_SWAP, 0}, {DW_OP_over, FETCH_OVER, 0},
};

/* An operation of plain_ops: 1 emitted, 0 not one of them, -1 too long. */
static int translate_plain(struct translation *tr, unsigned atom)
{
	for (size_t k = 0; k < sizeof(plain_ops) / sizeof(plain_ops[0]); k++)
		if (plain_ops[k].atom == atom)
			return emit(tr, plain_ops[k].code, 0, plain_ops[k].b, 0) ? -1 : 1;
	return 0;
}

/* DW_OP_reg*, regx (the value is in a register: the expression ends), breg*,
 * bregx (a register plus an offset). 1 emitted, 2 the value's place is
 * set (*pl), 0 not one of them, -1 with err. */
static int translate_register(struct translation *tr, const struct dwarfexpr_op *op, bool last,
			      struct place *pl)
{
	unsigned atom = op->atom;
	char *err = tr->err;
	size_t errlen = tr->errlen;
	if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
		unsigned r = atom - DW_OP_reg0;
		if (!last)
			return errbuf_set(err, errlen, "DW_OP_reg%u not at the end", r);
		if (r >= SONDE_FETCH_REGS)
			return errbuf_set(err, errlen, "it is in DWARF register %u "
						       "(not a general register)", r);
		*pl = (struct place){DWARFEXPR_REG, (int)r};
		return 2;
	}
	if (atom == DW_OP_regx) {
		if (!last || op->number >= SONDE_FETCH_REGS)
			return errbuf_set(err, errlen, "it is in DWARF register %llu "
						       "(not a general register)",
					  (unsigned long long)op->number);
		*pl = (struct place){DWARFEXPR_REG, (int)op->number};
		return 2;
	}
	if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
		unsigned r = atom - DW_OP_breg0;
		if (r >= SONDE_FETCH_REGS)
			return errbuf_set(err, errlen, "DW_OP_breg%u: not a general register", r);
		return emit(tr, FETCH_REG, (uint8_t)r, 0, (int64_t)op->number) ? -1 : 1;
	}
	if (atom == DW_OP_bregx) {
		if (op->number >= SONDE_FETCH_REGS)
			return errbuf_set(err, errlen, "DW_OP_bregx %llu: not a general register",
					  (unsigned long long)op->number);
		return emit(tr, FETCH_REG, (uint8_t)op->number, 0, (int64_t)op->number2) ? -1 : 1;
	}
	return 0;
}

/* DW_OP_lit*, addr, addrx, const*: a number pushed. 1 emitted, 0 not one
 * of them, -1 with err. */
static int translate_number(struct translation *tr, const struct dwarfexpr_op *op)
{
	unsigned atom = op->atom;
	if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31)
		return emit(tr, FETCH_CONST, 0, 0, atom - DW_OP_lit0) ? -1 : 1;
	switch (atom) {
	case DW_OP_addr:
		return emit(tr, FETCH_ADDR, 0, 0, (int64_t)op->number) ? -1 : 1;
	case DW_OP_addrx:
	case DW_OP_GNU_addr_index:
		/* The caller replaced the index by the address (number2 = 1). */
		if (!op->number2)
			return errbuf_set(tr->err, tr->errlen, "DW_OP_addrx without its address");
		return emit(tr, FETCH_ADDR, 0, 0, (int64_t)op->number) ? -1 : 1;
	case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
	case DW_OP_const8u: case DW_OP_constu: case DW_OP_constx:
	case DW_OP_GNU_const_index:
	case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
	case DW_OP_const8s: case DW_OP_consts:
		return emit(tr, FETCH_CONST, 0, 0, (int64_t)op->number) ? -1 : 1;
	}
	return 0;
}

static int translate_one(struct translation *tr, const struct dwarfexpr_op *e, size_t n,
			 int depth, struct place *pl);

/* DW_OP_fbreg: the frame base (translated here: a frame base has none of
 * its own) plus the offset. */
static int translate_fbreg(struct translation *tr, const struct dwarfexpr_op *op, int depth)
{
	if (depth > 0 || !tr->fb || tr->nfb == 0)
		return errbuf_set(tr->err, tr->errlen, "DW_OP_fbreg, but its function has "
						       "no frame base");
	struct place base;
	if (translate_one(tr, tr->fb, tr->nfb, depth + 1, &base))
		return -1;
	if (base.where == DWARFEXPR_REG) {
		if (emit(tr, FETCH_REG, (uint8_t)base.reg, 0, 0))
			return -1;
	} else if (base.where != DWARFEXPR_MEM && base.where != DWARFEXPR_VAL) {
		return errbuf_set(tr->err, tr->errlen, "a frame base sonde cannot read");
	}
	if (emit(tr, FETCH_CONST, 0, 0, (int64_t)op->number) || emit(tr, FETCH_ADD, 0, 0, 0))
		return -1;
	return 0;
}

/* The operations of no family above: 1 emitted, 2 the value's place is set
 * (*pl: the expression ends), -1 with err (one sonde cannot read). */
static int translate_other(struct translation *tr, const struct dwarfexpr_op *e, size_t n,
			   size_t i, int depth, struct place *pl)
{
	const struct dwarfexpr_op *op = &e[i];
	char *err = tr->err;
	size_t errlen = tr->errlen;
	switch (op->atom) {
	case DW_OP_fbreg:
		return translate_fbreg(tr, op, depth) ? -1 : 1;
	case DW_OP_call_frame_cfa:
		return cfa_ops(tr) ? -1 : 1;
	case DW_OP_deref:
		return emit(tr, FETCH_DEREF, 8, 0, 0) ? -1 : 1;
	case DW_OP_deref_size:
		if (op->number != 1 && op->number != 2 && op->number != 4 && op->number != 8)
			return errbuf_set(err, errlen, "DW_OP_deref_size %llu",
					  (unsigned long long)op->number);
		return emit(tr, FETCH_DEREF, (uint8_t)op->number, 0, 0) ? -1 : 1;
	case DW_OP_plus_uconst:
		if (emit(tr, FETCH_CONST, 0, 0, (int64_t)op->number) || emit(tr, FETCH_ADD, 0, 0, 0))
			return -1;
		return 1;
	case DW_OP_nop:
		return 1;
	case DW_OP_stack_value:
		if (i + 1 != n)
			return errbuf_set(err, errlen, "DW_OP_stack_value not at the end");
		pl->where = DWARFEXPR_VAL;
		return 2;
	case DW_OP_implicit_value: {
		if (n != 1 || op->number > 8)
			return errbuf_set(err, errlen, "DW_OP_implicit_value of %llu bytes "
						       "(sonde reads up to 8)",
					  (unsigned long long)op->number);
		uint64_t v = 0;
		memcpy(&v, (const void *)(uintptr_t)op->number2, op->number);
		if (emit(tr, FETCH_CONST, 0, 0, (int64_t)v))
			return -1;
		pl->where = DWARFEXPR_VAL;
		return 2;
	}
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		pl->where = DWARFEXPR_UNAVAILABLE;
		return 2;
	}
	char name[32];
	return errbuf_set(err, errlen, "its location uses %s, which sonde cannot read",
			  op_name(op->atom, name, sizeof(name)));
}

/* One segment of an expression (no DW_OP_piece inside) into tr's program;
 * *pl where it leaves its value. 0, or -1 with err. */
static int translate_one(struct translation *tr, const struct dwarfexpr_op *e, size_t n,
			 int depth, struct place *pl)
{
	pl->where = DWARFEXPR_MEM;
	if (n == 0)
		return errbuf_set(tr->err, tr->errlen, "an empty location");
	for (size_t i = 0; i < n; i++) {
		int r = translate_number(tr, &e[i]);
		if (r == 0)
			r = translate_register(tr, &e[i], i + 1 == n, pl);
		if (r == 0)
			r = translate_plain(tr, e[i].atom);
		if (r == 0)
			r = translate_other(tr, e, n, i, depth, pl);
		if (r < 0)
			return -1;
		if (r == 2)
			return 0;
	}
	return 0;
}

/* An expression in pieces: each part's value, or'ed into place (the whole
 * is at most 8 bytes). A part without a location is unknown: the whole is
 * too. Returns the number of operations, or -1 with err. */
static int translate_pieces(struct translation *tr, const struct dwarfexpr_op *expr, size_t n,
			    int *where)
{
	uint64_t bits = 0;
	if (dwarfexpr_emit(tr->ops, &tr->n, tr->max, (struct sonde_fetch_op){.code = FETCH_CONST}))
		return errbuf_set(tr->err, tr->errlen, "location too long");
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (expr[i].atom != DW_OP_piece)
			continue;
		uint64_t size = expr[i].number;
		if (bits + size * 8 > 64)
			return errbuf_set(tr->err, tr->errlen, "its value is in pieces of more than 8 "
							       "bytes (sonde reads up to 8)");
		if (i == start) {
			*where = DWARFEXPR_UNAVAILABLE;
			return errbuf_set(tr->err, tr->errlen, "a piece of it is optimized out here");
		}
		struct place part;
		if (translate_one(tr, expr + start, i - start, 0, &part))
			return -1;
		if (part.where == DWARFEXPR_UNAVAILABLE) {
			*where = DWARFEXPR_UNAVAILABLE;
			return tr->n;
		}
		int rc = 0;
		if (part.where == DWARFEXPR_REG) {
			rc = dwarfexpr_emit(tr->ops, &tr->n, tr->max,
					    (struct sonde_fetch_op){.code = FETCH_REG,
								    .a = (uint8_t)part.reg});
		} else if (part.where == DWARFEXPR_MEM) {
			uint8_t width = size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1;
			rc = dwarfexpr_emit(tr->ops, &tr->n, tr->max,
					    (struct sonde_fetch_op){.code = FETCH_DEREF, .a = width});
		}
		rc |= dwarfexpr_emit(tr->ops, &tr->n, tr->max,
				     (struct sonde_fetch_op){.code = FETCH_PIECE, .a = (uint8_t)size,
							     .b = (uint16_t)bits});
		if (rc)
			return errbuf_set(tr->err, tr->errlen, "location too long");
		bits += size * 8;
		start = i + 1;
	}
	*where = DWARFEXPR_VAL;
	return tr->n;
}

int dwarfexpr_translate(const struct dwarfexpr_input *in, struct dwarfexpr_output *out, char *err,
			size_t errlen)
{
	struct translation tr = {.fb = in->fb,
				 .nfb = in->nfb,
				 .cfa_rule = in->cfa_rule,
				 .ops = out->ops,
				 .max = out->max,
				 .err = err,
				 .errlen = errlen};
	const struct dwarfexpr_op *expr = in->expr;
	size_t n = in->n;
	int *where = &out->where, *reg = &out->reg;
	size_t npieces = 0;
	for (size_t i = 0; i < n; i++)
		npieces += expr[i].atom == DW_OP_piece;
	if (npieces)
		return translate_pieces(&tr, expr, n, where);
	struct place pl;
	if (translate_one(&tr, expr, n, 0, &pl)) {
		*where = pl.where;
		return -1;
	}
	*where = pl.where;
	if (pl.where == DWARFEXPR_REG)
		*reg = pl.reg;
	return tr.n;
}
