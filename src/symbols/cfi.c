/* cfi — unwind tables from CFI, and the unwinder. See cfi.h for the
 * contract and the table format.
 *
 * The build runs each FDE's CFA program once, from its start to its end,
 * emitting a row whenever the location advances (the usual approach of
 * in-kernel unwinders; a libdw query per address would run the program
 * from the start again for every row). Every FDE's rows are a chunk; the
 * chunks are then sorted, overlaps dropped, gaps between them marked
 * CFI_CFA_NONE, and equal neighbours merged. */
#define _GNU_SOURCE
#include "cfi.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ehframe.h"
#include "errbuf.h"
#include "order.h"
#include "sonde_abi.h"
#include "util.h"

_Static_assert(sizeof(struct cfi_row) == sizeof(struct sonde_unwind_row), "the kernel's row");

#define REG_RBP 6
#define REG_RSP 7
#define REG_RIP 16     /* the return address column on x86_64 */
#define MAX_REMEMBER 64 /* DW_CFA_remember_state depth (compilers use 1 or 2) */

/* ---- packing rules ------------------------------------------------------ */

static uint32_t rule_pack(unsigned cfa, unsigned rbp, int64_t rbp_off, uint32_t param)
{
	uint32_t r = (cfa & 0xf) | (rbp & 0x3) << 4;
	if (rbp == CFI_RBP_AT_CFA)
		r |= ((uint32_t)(rbp_off / 8) & 0x3f) << 6;
	return r | param << 12;
}

/* Does v fit in `bits` signed bits once divided by 8 (and is a multiple)? */
static bool fits8(int64_t v, unsigned bits)
{
	int64_t lim = (int64_t)1 << (bits - 1);
	return v % 8 == 0 && v / 8 >= -lim && v / 8 < lim;
}

static uint32_t param_off(int64_t off) { return (uint32_t)(off / 8) & 0xfffff; }

static uint32_t param_ab(int64_t a, unsigned b)
{
	return ((uint32_t)(a / 8) & 0xfff) | (uint32_t)(b & 0xff) << 12;
}

/* ---- the state a CFA program computes ----------------------------------- */

enum rule_how {
	RULE_DEFAULT,    /* not mentioned: the ABI's rule (rsp: the CFA; rbp: same value) */
	RULE_SAME,       /* DW_CFA_same_value */
	RULE_UNDEF,      /* DW_CFA_undefined */
	RULE_OFFSET,     /* saved at CFA + n */
	RULE_VAL_OFFSET, /* is CFA + n */
	RULE_REGISTER,   /* in register n */
	RULE_EXPR,       /* saved at the address the expression computes */
	RULE_VAL_EXPR,   /* is the expression's value */
};

struct reg_rule {
	uint8_t how;
	int64_t n;
	const uint8_t *expr, *expr_end;
};

enum cfa_how { CFA_UNSET, CFA_REG_OFF, CFA_EXPR, CFA_BAD };

/* Only the registers an rip/rsp/rbp unwinder needs are tracked. */
enum { TR_RBP, TR_RSP, TR_RA, NTRACKED };

struct frame_state {
	uint8_t cfa_how;
	uint64_t cfa_reg;
	int64_t cfa_off;
	const uint8_t *cfa_expr, *cfa_expr_end;
	struct reg_rule reg[NTRACKED];
};

static int tracked(const struct ehframe_cie *cie, uint64_t reg)
{
	if (reg == cie->ra_reg)
		return TR_RA;
	if (reg == REG_RBP)
		return TR_RBP;
	if (reg == REG_RSP)
		return TR_RSP;
	return -1;
}

/* ---- classifying a state into a packed rule ----------------------------- */

/* A DWARF expression read as a list of operations; only what CFA
 * expressions of x86_64 code use is recognised. */
struct op {
	uint8_t atom;
	int64_t n;   /* breg offset, plus_uconst operand */
	uint64_t reg; /* breg register */
};

/* Decodes up to max operations; returns how many, or -1 for anything not
 * in the small set the patterns below use. */
static int expr_decode(const uint8_t *p, const uint8_t *end, struct op *ops, int max)
{
	int n = 0;
	while (p < end) {
		if (n == max)
			return -1;
		struct op *o = &ops[n++];
		*o = (struct op){ .atom = *p++ };
		if (o->atom >= DW_OP_breg0 && o->atom <= DW_OP_breg31) {
			o->reg = o->atom - DW_OP_breg0;
			o->atom = DW_OP_bregx;
			if (!ehframe_read_sleb(&p, end, &o->n))
				return -1;
		} else if (o->atom == DW_OP_bregx) {
			if (!ehframe_read_uleb(&p, end, &o->reg) || !ehframe_read_sleb(&p, end, &o->n))
				return -1;
		} else if (o->atom == DW_OP_plus_uconst) {
			uint64_t u;
			if (!ehframe_read_uleb(&p, end, &u) || u > INT32_MAX)
				return -1;
			o->n = (int64_t)u;
		} else if (o->atom >= DW_OP_lit0 && o->atom <= DW_OP_lit31) {
			o->n = o->atom - DW_OP_lit0;
			o->atom = DW_OP_lit0;
		} else if (o->atom != DW_OP_deref && o->atom != DW_OP_and && o->atom != DW_OP_ge &&
			   o->atom != DW_OP_shl && o->atom != DW_OP_plus) {
			return -1;
		}
	}
	return n;
}

static bool op_is(const struct op *o, uint8_t atom, int64_t n)
{
	return o->atom == atom && o->n == n;
}

/* The CFA rule of an expression, or CFI_CFA_UNSUPPORTED:
 *  PLT stubs:  breg7 A; breg16 0; lit15; and; litB; ge; lit3; shl; plus
 *  saved sp:   breg6|breg7 A; deref [; plus_uconst 8*B] */
static uint32_t classify_cfa_expr(const uint8_t *p, const uint8_t *end)
{
	struct op o[9];
	int n = expr_decode(p, end, o, 9);
	if (n == 9 && o[0].atom == DW_OP_bregx && o[0].reg == REG_RSP &&
	    o[1].atom == DW_OP_bregx && o[1].reg == REG_RIP && o[1].n == 0 &&
	    op_is(&o[2], DW_OP_lit0, 15) && o[3].atom == DW_OP_and && o[4].atom == DW_OP_lit0 &&
	    o[5].atom == DW_OP_ge && op_is(&o[6], DW_OP_lit0, 3) && o[7].atom == DW_OP_shl &&
	    o[8].atom == DW_OP_plus && o[0].n >= 8 && fits8(o[0].n, 12))
		return rule_pack(CFI_CFA_PLT, 0, 0, param_ab(o[0].n, (unsigned)o[4].n));
	if ((n == 2 || n == 3) && o[0].atom == DW_OP_bregx &&
	    (o[0].reg == REG_RSP || o[0].reg == REG_RBP) && o[1].atom == DW_OP_deref &&
	    fits8(o[0].n, 12)) {
		int64_t add = n == 3 ? o[2].n : 0;
		if (n == 3 && o[2].atom != DW_OP_plus_uconst)
			return CFI_CFA_UNSUPPORTED;
		if (add % 8 || add / 8 > 255)
			return CFI_CFA_UNSUPPORTED;
		unsigned kind = o[0].reg == REG_RSP ? CFI_CFA_DEREF_RSP : CFI_CFA_DEREF_RBP;
		return rule_pack(kind, 0, 0, param_ab(o[0].n, (unsigned)(add / 8)));
	}
	return CFI_CFA_UNSUPPORTED;
}

/* Is the rule "saved at rsp + off" (DW_CFA_expression: breg7 off)? */
static bool rule_at_rsp(const struct reg_rule *r, int64_t off)
{
	struct op o[1];
	return r->how == RULE_EXPR && expr_decode(r->expr, r->expr_end, o, 1) == 1 &&
	       o[0].atom == DW_OP_bregx && o[0].reg == REG_RSP && o[0].n == off;
}

/* A signal trampoline's FDE ('S'): CFA = *(rsp + 160), rip, rsp and rbp
 * saved in the ucontext at rsp. Anything else there is not followed. */
static uint32_t classify_signal(const struct frame_state *s)
{
	struct op o[2];
	if (s->cfa_how == CFA_EXPR && expr_decode(s->cfa_expr, s->cfa_expr_end, o, 2) == 2 &&
	    o[0].atom == DW_OP_bregx && o[0].reg == REG_RSP && o[0].n == CFI_SIGNAL_RSP &&
	    o[1].atom == DW_OP_deref && rule_at_rsp(&s->reg[TR_RA], CFI_SIGNAL_RIP) &&
	    rule_at_rsp(&s->reg[TR_RSP], CFI_SIGNAL_RSP) &&
	    rule_at_rsp(&s->reg[TR_RBP], CFI_SIGNAL_RBP))
		return CFI_CFA_SIGNAL;
	return CFI_CFA_UNSUPPORTED;
}

static uint32_t classify(const struct ehframe_cie *cie, const struct frame_state *s)
{
	if (cie->ra_reg != REG_RIP)
		return CFI_CFA_UNSUPPORTED;
	if (cie->signal_frame)
		return classify_signal(s);
	const struct reg_rule *ra = &s->reg[TR_RA], *sp = &s->reg[TR_RSP], *bp = &s->reg[TR_RBP];
	if (ra->how == RULE_UNDEF)
		return CFI_CFA_END;
	if (ra->how != RULE_OFFSET || ra->n != -8)
		return CFI_CFA_UNSUPPORTED;
	if (sp->how != RULE_DEFAULT && !(sp->how == RULE_VAL_OFFSET && sp->n == 0))
		return CFI_CFA_UNSUPPORTED;
	uint32_t cfa;
	if (s->cfa_how == CFA_REG_OFF) {
		int64_t off = s->cfa_off;
		if (s->cfa_reg == REG_RSP && off >= 8 && fits8(off, 20))
			cfa = rule_pack(CFI_CFA_RSP, 0, 0, param_off(off));
		else if (s->cfa_reg == REG_RBP && fits8(off, 20))
			cfa = rule_pack(CFI_CFA_RBP, 0, 0, param_off(off));
		else if (s->cfa_reg < REG_RIP && s->cfa_reg != REG_RSP && s->cfa_reg != REG_RBP &&
			 fits8(off, 12))
			cfa = rule_pack(CFI_CFA_REG, 0, 0, param_ab(off, (unsigned)s->cfa_reg));
		else
			return CFI_CFA_UNSUPPORTED;
	} else if (s->cfa_how == CFA_EXPR) {
		cfa = classify_cfa_expr(s->cfa_expr, s->cfa_expr_end);
		if (cfa == CFI_CFA_UNSUPPORTED)
			return cfa;
	} else {
		return CFI_CFA_UNSUPPORTED;
	}
	switch (bp->how) {
	case RULE_DEFAULT:
	case RULE_SAME:
		return cfa;
	case RULE_UNDEF:
		return cfa | CFI_RBP_UNDEFINED << 4;
	case RULE_OFFSET:
		if (fits8(bp->n, 6))
			return cfa | rule_pack(0, CFI_RBP_AT_CFA, bp->n, 0);
		return cfa | CFI_RBP_UNSUPPORTED << 4;
	default:
		return cfa | CFI_RBP_UNSUPPORTED << 4;
	}
}

/* ---- the builder ------------------------------------------------------- */

struct tmp_row {
	uint64_t pc;
	uint32_t rule;
};

/* The rows of one FDE, [start, end). */
struct chunk {
	uint64_t start, end;
	size_t first, n;
	bool debug_frame;
};

struct builder {
	struct tmp_row *rows;
	size_t nrows, rows_cap;
	struct chunk *chunks;
	size_t nchunks, chunks_cap;
	const struct ehframe_section *sec;
	struct run *run;
	uint64_t bad;
};

/* Appends a row to the current (last) chunk: a later state at the same
 * address replaces the earlier, an equal neighbour is merged. */
static void chunk_emit(struct builder *b, uint64_t pc, uint32_t rule)
{
	struct chunk *c = &b->chunks[b->nchunks - 1];
	if (c->n && b->rows[b->nrows - 1].pc == pc) {
		b->nrows--;
		c->n--;
	}
	if (c->n && b->rows[b->nrows - 1].rule == rule)
		return;
	grow_array((void **)&b->rows, &b->rows_cap, b->nrows + 1, sizeof(*b->rows));
	b->rows[b->nrows++] = (struct tmp_row){ pc, rule };
	c->n++;
}

/* One CFA program being run. */
struct run {
	const struct ehframe_section *sec;
	const struct ehframe_cie *cie;
	struct builder *b;
	struct frame_state st;
	const struct frame_state *init; /* after the CIE's instructions; NULL while running them */
	struct frame_state stack[MAX_REMEMBER];
	unsigned depth;
	uint64_t loc, end;
	bool done; /* the location reached the FDE's end */
};

static void set_rule(struct run *r, uint64_t reg, uint8_t how, int64_t n)
{
	int t = tracked(r->cie, reg);
	if (t >= 0)
		r->st.reg[t] = (struct reg_rule){ .how = how, .n = n };
}

/* n * data alignment factor, without overflow. */
static bool factored(const struct run *r, int64_t n, int64_t *out)
{
	return !__builtin_mul_overflow(n, r->cie->data_align, out);
}

static bool advance_to(struct run *r, uint64_t loc)
{
	if (!r->init || loc < r->loc)
		return false; /* CIE programs do not advance; locations only grow */
	if (loc > r->end)
		loc = r->end;
	if (loc > r->loc) {
		chunk_emit(r->b, r->loc, classify(r->cie, &r->st));
		r->loc = loc;
	}
	r->done = r->loc >= r->end;
	return true;
}

static bool advance_by(struct run *r, uint64_t delta)
{
	uint64_t d, loc;
	if (__builtin_mul_overflow(delta, r->cie->code_align, &d) ||
	    __builtin_add_overflow(r->loc, d, &loc))
		return false;
	return advance_to(r, loc);
}

static bool read_fixed(struct run *r, const uint8_t **pp, const uint8_t *end, size_t size,
		       uint64_t *out)
{
	if ((size_t)(end - *pp) < size)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)(*pp)[r->sec->big_endian ? size - 1 - i : i] << (8 * i);
	*pp += size;
	*out = v;
	return true;
}

/* Reads a block (uleb length, bytes) into [*bs, *be). */
static bool read_block(const uint8_t **pp, const uint8_t *end, const uint8_t **bs,
		       const uint8_t **be)
{
	uint64_t len;
	if (!ehframe_read_uleb(pp, end, &len) || len > (uint64_t)(end - *pp))
		return false;
	*bs = *pp;
	*be = *pp + len;
	*pp = *be;
	return true;
}

/* Runs instructions [p, end). False when they are malformed. Every
 * iteration consumes at least one byte, so the loop is bounded by the
 * program's length. */
/* An operation of the three kinds the high two bits encode (with their
 * operand in the low six). Returns whether it was read. */
static bool run_primary(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t u;
	int64_t f;
	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		return advance_by(r, op & 0x3f);
	case DW_CFA_offset:
		if (!ehframe_read_uleb(p, end, &u) || u > INT64_MAX || !factored(r, (int64_t)u, &f))
			return false;
		set_rule(r, op & 0x3f, RULE_OFFSET, f);
		return true;
	default: { /* DW_CFA_restore */
		int t = tracked(r->cie, op & 0x3f);
		if (t >= 0)
			r->st.reg[t] = r->init ? r->init->reg[t] : (struct reg_rule){ 0 };
		return true;
	}
	}
}

/* An operation that sets one register's rule. Returns -1 when op is not
 * one, else whether it was read. */
static int run_register_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t reg, u, v;
	int64_t s, f;
	const uint8_t *bs, *be;
	switch (op) {
	case DW_CFA_offset_extended:
	case DW_CFA_val_offset:
	case DW_CFA_GNU_negative_offset_extended:
		if (!ehframe_read_uleb(p, end, &reg) || !ehframe_read_uleb(p, end, &u) ||
		    u > INT64_MAX || !factored(r, (int64_t)u, &f))
			return false;
		if (op == DW_CFA_GNU_negative_offset_extended && f == INT64_MIN)
			return false;
		set_rule(r, reg, op == DW_CFA_val_offset ? RULE_VAL_OFFSET : RULE_OFFSET,
			 op == DW_CFA_GNU_negative_offset_extended ? -f : f);
		return true;
	case DW_CFA_offset_extended_sf:
	case DW_CFA_val_offset_sf:
		if (!ehframe_read_uleb(p, end, &reg) || !ehframe_read_sleb(p, end, &s) ||
		    !factored(r, s, &f))
			return false;
		set_rule(r, reg, op == DW_CFA_val_offset_sf ? RULE_VAL_OFFSET : RULE_OFFSET, f);
		return true;
	case DW_CFA_restore_extended: {
		if (!ehframe_read_uleb(p, end, &reg))
			return false;
		int t = tracked(r->cie, reg);
		if (t >= 0)
			r->st.reg[t] = r->init ? r->init->reg[t] : (struct reg_rule){ 0 };
		return true;
	}
	case DW_CFA_undefined:
	case DW_CFA_same_value:
		if (!ehframe_read_uleb(p, end, &reg))
			return false;
		set_rule(r, reg, op == DW_CFA_undefined ? RULE_UNDEF : RULE_SAME, 0);
		return true;
	case DW_CFA_register:
		if (!ehframe_read_uleb(p, end, &reg) || !ehframe_read_uleb(p, end, &v))
			return false;
		set_rule(r, reg, RULE_REGISTER, (int64_t)(v & INT64_MAX));
		return true;
	case DW_CFA_expression:
	case DW_CFA_val_expression: {
		if (!ehframe_read_uleb(p, end, &reg) || !read_block(p, end, &bs, &be))
			return false;
		int t = tracked(r->cie, reg);
		if (t >= 0)
			r->st.reg[t] = (struct reg_rule){
				.how = op == DW_CFA_expression ? RULE_EXPR : RULE_VAL_EXPR,
				.expr = bs, .expr_end = be };
		return true;
	}
	}
	return -1;
}

/* An operation that defines the CFA. Returns -1 when op is not one, else
 * whether it was read. */
static int run_cfa_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t reg = 0, u = 0;
	int64_t s, f = 0;
	const uint8_t *bs, *be;
	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf: {
		/* The register (def_cfa*), then the offset: unsigned and
		 * not factored, or signed (_sf) and factored. */
		bool with_reg = op == DW_CFA_def_cfa || op == DW_CFA_def_cfa_sf;
		bool sf = op == DW_CFA_def_cfa_sf || op == DW_CFA_def_cfa_offset_sf;
		if (with_reg && !ehframe_read_uleb(p, end, &reg))
			return false;
		if (sf ? !ehframe_read_sleb(p, end, &s) || !factored(r, s, &f)
		       : !ehframe_read_uleb(p, end, &u) || u > INT64_MAX)
			return false;
		if (with_reg) {
			r->st.cfa_how = CFA_REG_OFF;
			r->st.cfa_reg = reg;
		} else {
			/* Only defined on a register+offset rule. */
			r->st.cfa_how = r->st.cfa_how == CFA_REG_OFF ? CFA_REG_OFF : CFA_BAD;
		}
		r->st.cfa_off = sf ? f : (int64_t)u;
		return true;
	}
	case DW_CFA_def_cfa_register:
		if (!ehframe_read_uleb(p, end, &reg))
			return false;
		r->st.cfa_how = r->st.cfa_how == CFA_REG_OFF ? CFA_REG_OFF : CFA_BAD;
		r->st.cfa_reg = reg;
		return true;
	case DW_CFA_def_cfa_expression:
		if (!read_block(p, end, &bs, &be))
			return false;
		r->st.cfa_how = CFA_EXPR;
		r->st.cfa_expr = bs;
		r->st.cfa_expr_end = be;
		return true;
	}
	return -1;
}

/* The rest: moving to the next row, remembering and restoring the state,
 * and what changes nothing sonde reads. Returns whether op was read (an
 * unknown one cannot be: its operands cannot be stepped over). */
static bool run_other_op(struct run *r, uint8_t op, const uint8_t **p, const uint8_t *end)
{
	uint64_t u;
	switch (op) {
	case DW_CFA_nop:
	case DW_CFA_GNU_window_save:
		return true;
	case DW_CFA_set_loc:
		return ehframe_read_pointer(r->sec, p, end, r->cie->fde_encoding, &u) &&
		       advance_to(r, u);
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4: {
		size_t size = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
		return read_fixed(r, p, end, size, &u) && advance_by(r, u);
	}
	case DW_CFA_remember_state:
		if (r->depth == MAX_REMEMBER)
			return false;
		r->stack[r->depth++] = r->st;
		return true;
	case DW_CFA_restore_state:
		if (r->depth == 0)
			return false;
		r->st = r->stack[--r->depth];
		return true;
	case DW_CFA_GNU_args_size:
		return ehframe_read_uleb(p, end, &u);
	}
	return false;
}

static bool run_program(struct run *r, const uint8_t *p, const uint8_t *end)
{
	while (p < end && !r->done) {
		uint8_t op = *p++;
		if (op & 0xc0) {
			if (!run_primary(r, op, &p, end))
				return false;
			continue;
		}
		int read = run_register_op(r, op, &p, end);
		if (read < 0)
			read = run_cfa_op(r, op, &p, end);
		if (read < 0)
			read = run_other_op(r, op, &p, end);
		if (!read)
			return false;
	}
	return true;
}

/* Rows of one FDE, as a new chunk. A malformed program makes its range
 * one CFI_CFA_UNSUPPORTED row: the function is there, its CFI unusable
 * (a frame-pointer guess there could be wrong). */
static bool builder_add_fde(const struct ehframe_fde *fde, void *arg)
{
	struct builder *b = arg;
	grow_array((void **)&b->chunks, &b->chunks_cap, b->nchunks + 1, sizeof(*b->chunks));
	b->chunks[b->nchunks++] = (struct chunk){ .start = fde->start, .end = fde->end,
						  .first = b->nrows,
						  .debug_frame = !b->sec->eh_frame };
	struct run *r = b->run; /* reused: its remember stack is large */
	r->sec = b->sec;
	r->cie = fde->cie;
	r->b = b;
	r->st = (struct frame_state){ 0 };
	r->init = NULL;
	r->depth = 0;
	r->loc = fde->start;
	r->end = fde->end;
	r->done = false;
	bool ok = run_program(r, fde->cie->insns, fde->cie->insns_end) && r->depth == 0;
	struct frame_state init = r->st;
	r->init = &init;
	ok = ok && run_program(r, fde->insns, fde->insns_end);
	if (ok && !r->done)
		chunk_emit(b, r->loc, classify(r->cie, &r->st));
	if (!ok) {
		struct chunk *c = &b->chunks[b->nchunks - 1];
		b->nrows = c->first;
		c->n = 0;
		chunk_emit(b, fde->start, CFI_CFA_UNSUPPORTED);
		b->bad++;
	}
	return true;
}

static int chunk_cmp(const void *pa, const void *pb)
{
	const struct chunk *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->debug_frame != b->debug_frame)
		return a->debug_frame ? 1 : -1;
	return a->end < b->end ? -1 : a->end > b->end;
}

static void table_push(struct cfi_table *t, size_t *cap, uint64_t pc, uint32_t rule)
{
	uint32_t off = (uint32_t)(pc - t->base);
	if (t->nrows && t->rows[t->nrows - 1].pc == off) {
		t->nrows--;
	}
	if (t->nrows && t->rows[t->nrows - 1].rule == rule)
		return;
	grow_array((void **)&t->rows, cap, (size_t)t->nrows + 1, sizeof(*t->rows));
	t->rows[t->nrows++] = (struct cfi_row){ off, rule };
}

/* Sorted, non-overlapping chunks (.eh_frame wins over .debug_frame) into
 * the table's rows, gaps marked CFI_CFA_NONE. */
static void builder_finish(struct builder *b, struct cfi_table *t)
{
	if (b->nchunks == 0)
		return;
	qsort(b->chunks, b->nchunks, sizeof(*b->chunks), chunk_cmp);
	size_t nkept = 0;
	for (size_t i = 0; i < b->nchunks; i++) {
		struct chunk *c = &b->chunks[i];
		struct chunk *last = nkept ? &b->chunks[nkept - 1] : NULL;
		if (last && c->start < last->end) {
			if (last->debug_frame && !c->debug_frame)
				b->chunks[nkept - 1] = *c; /* .eh_frame replaces it */
			else if (last->debug_frame == c->debug_frame)
				t->fdes_overlap++;
			continue;
		}
		b->chunks[nkept++] = *c;
	}
	t->base = b->chunks[0].start;
	size_t cap = 0;
	for (size_t i = 0; i < nkept; i++) {
		const struct chunk *c = &b->chunks[i];
		if (c->end - t->base > UINT32_MAX) {
			b->bad += nkept - i; /* beyond what a 32-bit pc reaches */
			break;
		}
		for (size_t k = 0; k < c->n; k++)
			table_push(t, &cap, b->rows[c->first + k].pc, b->rows[c->first + k].rule);
		table_push(t, &cap, c->end, CFI_CFA_NONE);
		t->fdes++;
		t->from_debug_frame |= c->debug_frame;
	}
	for (uint32_t i = 0; i < t->nrows; i++) {
		t->rows_by_cfa[cfi_rule_cfa(t->rows[i].rule)]++;
		t->rows_rbp_unsupported += cfi_rule_rbp(t->rows[i].rule) == CFI_RBP_UNSUPPORTED;
	}
}

static void builder_add_section(struct builder *b, const struct ehframe_section *sec)
{
	struct ehframe_counts counts = { 0 };
	b->sec = sec;
	ehframe_each_fde(sec, builder_add_fde, b, &counts);
	b->sec = NULL;
	b->bad += counts.bad;
}

static void builder_add_elf(struct builder *b, Elf *elf, bool eh_frame)
{
	struct ehframe_section sec;
	if (elf && ehframe_section_find(elf, eh_frame, &sec))
		builder_add_section(b, &sec);
}

/* The rows into t, and the builder's memory freed. */
static void builder_done(struct builder *b, struct cfi_table *t)
{
	builder_finish(b, t);
	t->fdes_bad = b->bad;
	free(b->rows);
	free(b->chunks);
	free(b->run);
}

static const Dwfl_Callbacks debug_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* .debug_frame of the separate debug file of the binary open on fd, found
 * as the symbolizer finds it (libdwfl: build-id, .gnu_debuglink). */
static void builder_add_debug_file(struct builder *b, struct cfi_table *t, int fd,
				   const char *path)
{
	Dwfl *dwfl = dwfl_begin(&debug_callbacks);
	int dfd = dup(fd);
	if (!dwfl || dfd < 0) {
		if (dfd >= 0)
			close(dfd);
		if (dwfl)
			dwfl_end(dwfl);
		return;
	}
	dwfl_report_begin(dwfl);
	Dwfl_Module *mod = dwfl_report_elf(dwfl, "cfi", path, dfd, 0, true);
	dwfl_report_end(dwfl, NULL, NULL);
	Dwarf_Addr bias;
	Elf *main_elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	Dwarf *dw = mod ? dwfl_module_getdwarf(mod, &bias) : NULL;
	Elf *debug = dw ? dwarf_getelf(dw) : NULL;
	if (debug && debug != main_elf) {
		size_t before = b->nchunks;
		builder_add_elf(b, debug, false);
		t->from_debug_file = b->nchunks > before;
	}
	if (!mod)
		close(dfd);
	dwfl_end(dwfl);
}

/* Bytes of code the FDEs read so far describe (overlaps counted twice:
 * an estimate). */
static uint64_t builder_coverage(const struct builder *b)
{
	uint64_t n = 0;
	for (size_t i = 0; i < b->nchunks; i++)
		n += b->chunks[i].end - b->chunks[i].start;
	return n;
}

/* Bytes of code in the file's sections. */
static uint64_t exec_bytes(Elf *elf)
{
	uint64_t n = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_PROGBITS &&
		    (shdr.sh_flags & SHF_EXECINSTR))
			n += shdr.sh_size;
	}
	return n;
}

static void table_read_ids(struct cfi_table *t, Elf *elf)
{
	const void *id;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
	if (n > 0 && (size_t)n <= sizeof(t->build_id)) {
		memcpy(t->build_id, id, (size_t)n);
		t->build_id_len = (uint8_t)n;
	}
	size_t phnum;
	if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0 || phnum > 65536)
		return;
	t->segs = xcalloc(phnum, sizeof(*t->segs));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			t->segs[t->nsegs++] = (struct cfi_segment){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	}
}

static struct cfi_table *table_build(Elf *elf, int fd, const char *path, char *err,
				     size_t errlen)
{
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		errbuf_set(err, errlen, "%s: not an ELF file", path ? path : "image");
		return NULL;
	}
	struct cfi_table *t = xcalloc(1, sizeof(*t));
	table_read_ids(t, elf);
	struct builder b = { .run = xcalloc(1, sizeof(*b.run)) };
	builder_add_elf(&b, elf, true);
	builder_add_elf(&b, elf, false);
	if (fd >= 0 && builder_coverage(&b) * 2 < exec_bytes(elf))
		builder_add_debug_file(&b, t, fd, path);
	builder_done(&b, t);
	return t;
}

struct cfi_table *cfi_table_from_fd(int fd, const char *path, char *err, size_t errlen)
{
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct cfi_table *t = table_build(elf, fd, path, err, errlen);
	if (elf)
		elf_end(elf);
	return t;
}

struct cfi_table *cfi_table_from_section(const void *data, size_t size, uint64_t addr,
					 bool eh_frame)
{
	struct ehframe_section sec = { .data = data, .size = size, .addr = addr,
				       .eh_frame = eh_frame, .addr_size = 8 };
	struct cfi_table *t = xcalloc(1, sizeof(*t));
	struct builder b = { .run = xcalloc(1, sizeof(*b.run)) };
	builder_add_section(&b, &sec);
	builder_done(&b, t);
	return t;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rows);
	free(t->segs);
	free(t);
}

size_t cfi_table_bytes(const struct cfi_table *t)
{
	return sizeof(*t) + (size_t)t->nrows * sizeof(*t->rows) +
	       (size_t)t->nsegs * sizeof(*t->segs);
}

const struct cfi_row *cfi_table_find(const struct cfi_table *t, uint64_t vaddr)
{
	if (!t || t->nrows == 0 || vaddr < t->base || vaddr - t->base > UINT32_MAX)
		return NULL;
	uint32_t key = (uint32_t)(vaddr - t->base);
	/* The last row with pc <= key. */
	size_t k = ORDER_PARTITION(t->nrows, i, t->rows[i].pc <= key);
	return k ? &t->rows[k - 1] : NULL;
}

bool cfi_table_vaddr(const struct cfi_table *t, uint64_t offset, uint64_t *vaddr)
{
	for (uint32_t i = 0; i < t->nsegs; i++) {
		const struct cfi_segment *s = &t->segs[i];
		if (offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return true;
		}
	}
	return false;
}

void cfi_rule_format(uint32_t rule, char *buf, size_t size)
{
	static const char *const rbp[] = { "", " rbp=c%+d", " rbp=undef", " rbp=unsupported" };
	char rb[32];
	snprintf(rb, sizeof(rb), rbp[cfi_rule_rbp(rule)], cfi_rule_rbp_off(rule));
	switch (cfi_rule_cfa(rule)) {
	case CFI_CFA_NONE: snprintf(buf, size, "none"); return;
	case CFI_CFA_RSP: snprintf(buf, size, "rsp%+d%s", cfi_rule_cfa_off(rule), rb); return;
	case CFI_CFA_RBP: snprintf(buf, size, "rbp%+d%s", cfi_rule_cfa_off(rule), rb); return;
	case CFI_CFA_PLT:
		snprintf(buf, size, "plt(rsp%+d, %u)%s", cfi_rule_a(rule), cfi_rule_b(rule), rb);
		return;
	case CFI_CFA_DEREF_RSP:
	case CFI_CFA_DEREF_RBP:
		snprintf(buf, size, "*(%s%+d)%+d%s",
			 cfi_rule_cfa(rule) == CFI_CFA_DEREF_RSP ? "rsp" : "rbp", cfi_rule_a(rule),
			 8 * (int)cfi_rule_b(rule), rb);
		return;
	case CFI_CFA_REG:
		snprintf(buf, size, "r%u%+d%s", cfi_rule_b(rule), cfi_rule_a(rule), rb);
		return;
	case CFI_CFA_SIGNAL: snprintf(buf, size, "signal"); return;
	case CFI_CFA_END: snprintf(buf, size, "end"); return;
	default: snprintf(buf, size, "unsupported"); return;
	}
}

/* ---- the unwinder ------------------------------------------------------ */

const char *cfi_step_name(enum cfi_step s)
{
	switch (s) {
	case CFI_STEP_CFI: return "cfi";
	case CFI_STEP_FP: return "frame pointer";
	case CFI_STEP_END: return "end of stack";
	case CFI_STEP_UNSUPPORTED: return "unsupported rule";
	case CFI_STEP_NO_RBP: return "rbp lost";
	case CFI_STEP_READ_FAULT: return "read fault";
	case CFI_STEP_BAD_FRAME: return "bad frame";
	}
	return "?";
}

static enum cfi_step step_fp(struct cfi_regs *r, cfi_read_fn read, void *ctx)
{
	uint64_t ra, rbp;
	if (!r->rbp_known || r->rbp < r->rsp || r->rbp > UINT64_MAX - 16)
		return CFI_STEP_BAD_FRAME;
	if (!read(ctx, r->rbp + 8, &ra) || !read(ctx, r->rbp, &rbp))
		return CFI_STEP_READ_FAULT;
	if (ra == 0)
		return CFI_STEP_BAD_FRAME;
	*r = (struct cfi_regs){ .rip = ra, .rsp = r->rbp + 16, .rbp = rbp, .rbp_known = true };
	return CFI_STEP_FP;
}

static enum cfi_step step_signal(struct cfi_regs *r, cfi_read_fn read, void *ctx)
{
	uint64_t rip, rsp, rbp;
	if (!read(ctx, r->rsp + CFI_SIGNAL_RIP, &rip) || !read(ctx, r->rsp + CFI_SIGNAL_RSP, &rsp) ||
	    !read(ctx, r->rsp + CFI_SIGNAL_RBP, &rbp))
		return CFI_STEP_READ_FAULT;
	if (rip == 0)
		return CFI_STEP_BAD_FRAME;
	/* The interrupted stack may be another one (sigaltstack): no
	 * direction to check, and the walk stays bounded by its depth. */
	*r = (struct cfi_regs){ .rip = rip, .rsp = rsp, .rbp = rbp, .rbp_known = true,
				.exact_pc = true };
	return CFI_STEP_CFI;
}

enum cfi_step cfi_unwind_step(const struct cfi_table *t, uint64_t bias, struct cfi_regs *r,
			      cfi_read_fn read, void *ctx)
{
	uint64_t pc = r->exact_pc ? r->rip : r->rip - 1;
	const struct cfi_row *row = t ? cfi_table_find(t, pc - bias) : NULL;
	uint32_t rule = row ? row->rule : CFI_CFA_NONE;
	uint64_t cfa, tmp;
	switch (cfi_rule_cfa(rule)) {
	case CFI_CFA_NONE:
		return step_fp(r, read, ctx);
	case CFI_CFA_END:
		return CFI_STEP_END;
	case CFI_CFA_SIGNAL:
		return step_signal(r, read, ctx);
	case CFI_CFA_RSP:
		cfa = r->rsp + (int64_t)cfi_rule_cfa_off(rule);
		break;
	case CFI_CFA_RBP:
		if (!r->rbp_known)
			return CFI_STEP_NO_RBP;
		cfa = r->rbp + (int64_t)cfi_rule_cfa_off(rule);
		break;
	case CFI_CFA_PLT:
		cfa = r->rsp + (int64_t)cfi_rule_a(rule) + ((r->rip & 15) >= cfi_rule_b(rule) ? 8 : 0);
		break;
	case CFI_CFA_DEREF_RSP:
	case CFI_CFA_DEREF_RBP: {
		bool on_rsp = cfi_rule_cfa(rule) == CFI_CFA_DEREF_RSP;
		if (!on_rsp && !r->rbp_known)
			return CFI_STEP_NO_RBP;
		if (!read(ctx, (on_rsp ? r->rsp : r->rbp) + (int64_t)cfi_rule_a(rule), &tmp))
			return CFI_STEP_READ_FAULT;
		cfa = tmp + 8 * (uint64_t)cfi_rule_b(rule);
		break;
	}
	case CFI_CFA_REG:
		if (!r->gprs || cfi_rule_b(rule) > REG_RIP)
			return CFI_STEP_UNSUPPORTED;
		cfa = r->gprs[cfi_rule_b(rule)] + (int64_t)cfi_rule_a(rule);
		break;
	default:
		return CFI_STEP_UNSUPPORTED;
	}
	if (cfa <= r->rsp || cfa < 8)
		return CFI_STEP_BAD_FRAME;
	uint64_t ra, rbp = r->rbp;
	bool rbp_known = r->rbp_known;
	if (!read(ctx, cfa - 8, &ra))
		return CFI_STEP_READ_FAULT;
	if (ra == 0)
		return CFI_STEP_BAD_FRAME;
	switch (cfi_rule_rbp(rule)) {
	case CFI_RBP_SAME:
		break;
	case CFI_RBP_AT_CFA:
		if (!read(ctx, cfa + (int64_t)cfi_rule_rbp_off(rule), &rbp))
			return CFI_STEP_READ_FAULT;
		rbp_known = true;
		break;
	default:
		rbp_known = false;
		break;
	}
	*r = (struct cfi_regs){ .rip = ra, .rsp = cfa, .rbp = rbp, .rbp_known = rbp_known };
	return CFI_STEP_CFI;
}
