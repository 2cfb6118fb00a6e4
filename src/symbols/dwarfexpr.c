/* dwarfexpr — one DWARF location expression at one address -> fetch
 * operations (see dwarfexpr.h). */
#include "dwarfexpr.h"

#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "cfi.h"
#include "errbuf.h"
#include "util.h"

int dwarfexpr_emit(struct sonde_fetch_op *ops, int *n, int max, uint8_t code, uint8_t a,
		   uint16_t b, int64_t imm)
{
	if (*n >= max)
		return -1;
	ops[(*n)++] = (struct sonde_fetch_op){.code = code, .a = a, .b = b, .imm = imm};
	return 0;
}

static const char *op_name(unsigned atom)
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
	static char buf[32];
	snprintf(buf, sizeof(buf), "DW_OP 0x%x", atom);
	return buf;
}

/* The CFA at the probe address as a register + offset (the CFI row's rule). */
static int cfa_ops(uint32_t rule, struct sonde_fetch_op *ops, int *n, int max, char *err,
		   size_t errlen)
{
	unsigned kind = rule ? cfi_rule_cfa(rule) : CFI_CFA_NONE;
	if (kind == CFI_CFA_RSP || kind == CFI_CFA_RBP) {
		int reg = kind == CFI_CFA_RSP ? 7 : 6;
		if (dwarfexpr_emit(ops, n, max, FETCH_REG, (uint8_t)reg, 0, cfi_rule_cfa_off(rule)))
			return errbuf_set(err, errlen, "program too long");
		return 0;
	}
	char text[64] = "none";
	if (rule)
		cfi_rule_format(rule, text, sizeof(text));
	return errbuf_set(err, errlen,
			  "its frame base is DW_OP_call_frame_cfa, and the CFA at this address "
			  "(%s) is not a register plus an offset: sonde cannot fold it",
			  text);
}

/* One segment of an expression (no DW_OP_piece inside). */
static int translate_one(const struct dwarfexpr_op *e, size_t n, const struct dwarfexpr_op *fb,
			 size_t nfb,
			 uint32_t cfa_rule, struct sonde_fetch_op *ops, int *no, int max, int *where,
			 int *reg, int depth, char *err, size_t errlen)
{
	*where = DWARFEXPR_MEM;
	if (n == 0)
		return errbuf_set(err, errlen, "an empty location");
#define E(code, a, b, imm)                                                                       \
	do {                                                                                     \
		if (dwarfexpr_emit(ops, no, max, code, a, b, imm))                                       \
			return errbuf_set(err, errlen, "location too long for sonde's %d operations", \
					  SONDE_FETCH_OPS);                                       \
	} while (0)
	for (size_t i = 0; i < n; i++) {
		unsigned atom = e[i].atom;
		bool last = i + 1 == n;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			E(FETCH_CONST, 0, 0, atom - DW_OP_lit0);
		} else if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
			unsigned r = atom - DW_OP_reg0;
			if (!last)
				return errbuf_set(err, errlen, "DW_OP_reg%u not at the end", r);
			if (r >= SONDE_FETCH_REGS)
				return errbuf_set(err, errlen, "it is in DWARF register %u "
							       "(not a general register)", r);
			*where = DWARFEXPR_REG;
			*reg = (int)r;
			return 0;
		} else if (atom == DW_OP_regx) {
			if (!last || e[i].number >= SONDE_FETCH_REGS)
				return errbuf_set(err, errlen, "it is in DWARF register %llu "
							       "(not a general register)",
						  (unsigned long long)e[i].number);
			*where = DWARFEXPR_REG;
			*reg = (int)e[i].number;
			return 0;
		} else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			unsigned r = atom - DW_OP_breg0;
			if (r >= SONDE_FETCH_REGS)
				return errbuf_set(err, errlen, "DW_OP_breg%u: not a general register", r);
			E(FETCH_REG, (uint8_t)r, 0, (int64_t)e[i].number);
		} else if (atom == DW_OP_bregx) {
			if (e[i].number >= SONDE_FETCH_REGS)
				return errbuf_set(err, errlen, "DW_OP_bregx %llu: not a general register",
						  (unsigned long long)e[i].number);
			E(FETCH_REG, (uint8_t)e[i].number, 0, (int64_t)e[i].number2);
		} else {
			switch (atom) {
			case DW_OP_addr:
				E(FETCH_ADDR, 0, 0, (int64_t)e[i].number);
				break;
			case DW_OP_addrx:
			case DW_OP_GNU_addr_index:
				/* The caller replaced the index by the address (number2 = 1). */
				if (!e[i].number2)
					return errbuf_set(err, errlen, "DW_OP_addrx without its address");
				E(FETCH_ADDR, 0, 0, (int64_t)e[i].number);
				break;
			case DW_OP_const1u: case DW_OP_const2u: case DW_OP_const4u:
			case DW_OP_const8u: case DW_OP_constu: case DW_OP_constx:
			case DW_OP_GNU_const_index:
				E(FETCH_CONST, 0, 0, (int64_t)e[i].number);
				break;
			case DW_OP_const1s: case DW_OP_const2s: case DW_OP_const4s:
			case DW_OP_const8s: case DW_OP_consts:
				E(FETCH_CONST, 0, 0, (int64_t)e[i].number);
				break;
			case DW_OP_fbreg: {
				if (!fb || nfb == 0)
					return errbuf_set(err, errlen, "DW_OP_fbreg, but its function has "
								       "no frame base");
				if (depth > 0)
					return errbuf_set(err, errlen, "a frame base that uses DW_OP_fbreg");
				int w, r;
				if (translate_one(fb, nfb, NULL, 0, cfa_rule, ops, no, max, &w, &r,
						  depth + 1, err, errlen))
					return -1;
				if (w == DWARFEXPR_REG)
					E(FETCH_REG, (uint8_t)r, 0, 0);
				else if (w != DWARFEXPR_MEM && w != DWARFEXPR_VAL)
					return errbuf_set(err, errlen, "a frame base sonde cannot read");
				E(FETCH_CONST, 0, 0, (int64_t)e[i].number);
				E(FETCH_ADD, 0, 0, 0);
				break;
			}
			case DW_OP_call_frame_cfa:
				if (cfa_ops(cfa_rule, ops, no, max, err, errlen))
					return -1;
				break;
			case DW_OP_deref:
				E(FETCH_DEREF, 8, 0, 0);
				break;
			case DW_OP_deref_size:
				if (e[i].number != 1 && e[i].number != 2 && e[i].number != 4 &&
				    e[i].number != 8)
					return errbuf_set(err, errlen, "DW_OP_deref_size %llu",
							  (unsigned long long)e[i].number);
				E(FETCH_DEREF, (uint8_t)e[i].number, 0, 0);
				break;
			case DW_OP_plus_uconst:
				E(FETCH_CONST, 0, 0, (int64_t)e[i].number);
				E(FETCH_ADD, 0, 0, 0);
				break;
			case DW_OP_plus: E(FETCH_ADD, 0, 0, 0); break;
			case DW_OP_minus: E(FETCH_SUB, 0, 0, 0); break;
			case DW_OP_mul: E(FETCH_MUL, 0, 0, 0); break;
			case DW_OP_div: E(FETCH_DIV, 0, 1, 0); break;
			case DW_OP_mod: E(FETCH_MOD, 0, 0, 0); break;
			case DW_OP_and: E(FETCH_AND, 0, 0, 0); break;
			case DW_OP_or: E(FETCH_OR, 0, 0, 0); break;
			case DW_OP_xor: E(FETCH_XOR, 0, 0, 0); break;
			case DW_OP_shl: E(FETCH_SHL, 0, 0, 0); break;
			case DW_OP_shr: E(FETCH_SHR, 0, 0, 0); break;
			case DW_OP_shra: E(FETCH_SHR, 0, 1, 0); break;
			case DW_OP_neg: E(FETCH_NEG, 0, 0, 0); break;
			case DW_OP_not: E(FETCH_BNOT, 0, 0, 0); break;
			case DW_OP_eq: E(FETCH_EQ, 0, 1, 0); break;
			case DW_OP_ne: E(FETCH_NE, 0, 1, 0); break;
			case DW_OP_lt: E(FETCH_LT, 0, 1, 0); break;
			case DW_OP_le: E(FETCH_LE, 0, 1, 0); break;
			case DW_OP_gt: E(FETCH_GT, 0, 1, 0); break;
			case DW_OP_ge: E(FETCH_GE, 0, 1, 0); break;
			case DW_OP_dup: E(FETCH_DUP, 0, 0, 0); break;
			case DW_OP_drop: E(FETCH_DROP, 0, 0, 0); break;
			case DW_OP_swap: E(FETCH_SWAP, 0, 0, 0); break;
			case DW_OP_over: E(FETCH_OVER, 0, 0, 0); break;
			case DW_OP_nop: break;
			case DW_OP_stack_value:
				if (!last)
					return errbuf_set(err, errlen, "DW_OP_stack_value not at the end");
				*where = DWARFEXPR_VAL;
				return 0;
			case DW_OP_implicit_value: {
				if (n != 1 || e[i].number > 8)
					return errbuf_set(err, errlen, "DW_OP_implicit_value of %llu bytes "
								       "(sonde reads up to 8)",
							  (unsigned long long)e[i].number);
				uint64_t v = 0;
				memcpy(&v, (const void *)(uintptr_t)e[i].number2, e[i].number);
				E(FETCH_CONST, 0, 0, (int64_t)v);
				*where = DWARFEXPR_VAL;
				return 0;
			}
			case DW_OP_entry_value:
			case DW_OP_GNU_entry_value:
				*where = DWARFEXPR_UNAVAILABLE;
				return 0;
			default:
				return errbuf_set(err, errlen, "its location uses %s, which sonde cannot "
							       "read",
						  op_name(atom));
			}
		}
	}
#undef E
	return 0;
}

int dwarfexpr_translate(const struct dwarfexpr_op *expr, size_t n, const struct dwarfexpr_op *fb,
		       size_t nfb, uint32_t cfa_rule, struct sonde_fetch_op *ops, int max,
		       int *where, int *reg, char *err, size_t errlen)
{
	int no = 0;
	size_t npieces = 0;
	for (size_t i = 0; i < n; i++)
		npieces += expr[i].atom == DW_OP_piece;
	if (npieces == 0) {
		if (translate_one(expr, n, fb, nfb, cfa_rule, ops, &no, max, where, reg, 0, err,
				  errlen))
			return -1;
		return no;
	}
	/* Pieces: each part's value, or'ed into place (the whole is at most 8
	 * bytes). A part without a location is unknown: the whole is too. */
	uint64_t bits = 0;
	if (dwarfexpr_emit(ops, &no, max, FETCH_CONST, 0, 0, 0))
		return errbuf_set(err, errlen, "location too long");
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		if (expr[i].atom != DW_OP_piece)
			continue;
		uint64_t size = expr[i].number;
		if (bits + size * 8 > 64)
			return errbuf_set(err, errlen, "its value is in pieces of more than 8 bytes "
						       "(sonde reads up to 8)");
		if (i == start) {
			*where = DWARFEXPR_UNAVAILABLE;
			return errbuf_set(err, errlen, "a piece of it is optimized out here");
		}
		int w, r;
		if (translate_one(expr + start, i - start, fb, nfb, cfa_rule, ops, &no, max, &w, &r,
				  0, err, errlen))
			return -1;
		if (w == DWARFEXPR_UNAVAILABLE) {
			*where = DWARFEXPR_UNAVAILABLE;
			return no;
		}
		int rc = 0;
		if (w == DWARFEXPR_REG)
			rc = dwarfexpr_emit(ops, &no, max, FETCH_REG, (uint8_t)r, 0, 0);
		else if (w == DWARFEXPR_MEM)
			rc = dwarfexpr_emit(ops, &no, max, FETCH_DEREF,
				     (uint8_t)(size >= 8 ? 8 : size >= 4 ? 4 : size >= 2 ? 2 : 1), 0, 0);
		rc |= dwarfexpr_emit(ops, &no, max, FETCH_PIECE, (uint8_t)size, (uint16_t)bits, 0);
		if (rc)
			return errbuf_set(err, errlen, "location too long");
		bits += size * 8;
		start = i + 1;
	}
	*where = DWARFEXPR_VAL;
	return no;
}

