/* dwarfvar's translator against hand-written DWARF location expressions
 * (each operation sonde reads, the frame base folded from a CFI rule,
 * pieces, and the operations it refuses by name), capexpr's parser, and
 * dwarfvar_compile against the captures target's real DWARF. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dwarf.h>
#include <stdio.h>
#include <string.h>

#include "capexpr.h"
#include "dwarfexpr.h"
#include "dwarfvar.h"
#include "sonde_abi.h"

#define OP(a, n1, n2)                                                                        \
	((struct dwarfexpr_op){.atom = (a), .number = (uint64_t)(n1), .number2 = (uint64_t)(n2)})
#define NOPS(x) (sizeof(x) / sizeof((x)[0]))

/* CFI rules (sonde_abi.h): CFA = rsp + 8, CFA = rbp + 16, CFA = *(rsp+8). */
#define RULE_RSP8 (CFI_CFA_RSP | (1u << 12))
#define RULE_RBP16 (CFI_CFA_RBP | (2u << 12))
#define RULE_DEREF (CFI_CFA_DEREF_RSP | (1u << 12))

enum { W_MEM = DWARFEXPR_MEM, W_REG = DWARFEXPR_REG, W_VAL = DWARFEXPR_VAL, W_UNAVAILABLE = DWARFEXPR_UNAVAILABLE };

struct want {
	uint8_t code, a;
	uint16_t b;
	int64_t imm;
};

/* dwarfexpr_translate with its input and output spelled out. */
/* An expression alone, or with its frame base's and the CFA rule. */
#define EXPR(ops_, n_) ((struct dwarfexpr_input){.expr = (ops_), .n = (n_)})
#define EXPR_FB(ops_, n_, fb_, nfb_, rule_)                                                    \
	((struct dwarfexpr_input){                                                             \
		.expr = (ops_), .n = (n_), .fb = (fb_), .nfb = (nfb_), .cfa_rule = (rule_)})

static void translates(struct dwarfexpr_input in, int where, const struct want *want, int nwant)
{
	struct sonde_fetch_op ops[SONDE_FETCH_OPS];
	char err[256] = "";
	struct dwarfexpr_output out = {.ops = ops, .max = SONDE_FETCH_OPS, .where = -1, .reg = -1};
	int got = dwarfexpr_translate(&in, &out, err, sizeof(err));
	cr_assert_eq(got, nwant, "%d ops, want %d (%s)", got, nwant, err);
	cr_assert_eq(out.where, where, "where %d, want %d", out.where, where);
	for (int i = 0; i < nwant; i++) {
		cr_assert_eq(ops[i].code, want[i].code, "op %d: code %d, want %d", i, ops[i].code,
			     want[i].code);
		cr_assert_eq(ops[i].a, want[i].a, "op %d: a %d, want %d", i, ops[i].a, want[i].a);
		cr_assert_eq(ops[i].b, want[i].b, "op %d: b %d, want %d", i, ops[i].b, want[i].b);
		cr_assert_eq(ops[i].imm, want[i].imm, "op %d: imm %lld, want %lld", i,
			     (long long)ops[i].imm, (long long)want[i].imm);
	}
}

static void refuses(struct dwarfexpr_input in, const char *why)
{
	struct sonde_fetch_op ops[SONDE_FETCH_OPS];
	char err[256] = "";
	struct dwarfexpr_output out = {.ops = ops, .max = SONDE_FETCH_OPS, .where = -1, .reg = -1};
	cr_assert_eq(dwarfexpr_translate(&in, &out, err, sizeof(err)), -1);
	cr_assert(strstr(err, why), "error '%s' lacks '%s'", err, why);
	cr_assert_null(strchr(err, '\n'));
}

/* Translates in with room for max operations: out's where and reg. */
static int translate_into(struct dwarfexpr_input in, struct sonde_fetch_op *ops, int max,
			  struct dwarfexpr_output *out)
{
	char err[256] = "";
	*out = (struct dwarfexpr_output){.ops = ops, .max = max, .where = -1, .reg = -1};
	return dwarfexpr_translate(&in, out, err, sizeof(err));
}

Test(dwarfvar, registers)
{
	struct dwarfexpr_op reg5[] = {OP(DW_OP_reg5, 0, 0)};
	struct sonde_fetch_op ops[4];
	struct dwarfexpr_output out;
	cr_assert_eq(translate_into(EXPR(reg5, 1), ops, 4, &out), 0);
	cr_assert_eq(out.where, W_REG);
	cr_assert_eq(out.reg, 5);
	struct dwarfexpr_op regx[] = {OP(DW_OP_regx, 14, 0)};
	cr_assert_eq(translate_into(EXPR(regx, 1), ops, 4, &out), 0);
	cr_assert_eq(out.reg, 14);
	struct dwarfexpr_op xmm[] = {OP(DW_OP_reg17, 0, 0)};
	refuses(EXPR(xmm, 1), "DWARF register 17");
	struct dwarfexpr_op breg[] = {OP(DW_OP_breg6, (uint64_t)-24, 0)};
	translates(EXPR(breg, 1), W_MEM, (struct want[]){{FETCH_REG, 6, 0, -24}}, 1);
	struct dwarfexpr_op bregx[] = {OP(DW_OP_bregx, 3, 40)};
	translates(EXPR(bregx, 1), W_MEM, (struct want[]){{FETCH_REG, 3, 0, 40}}, 1);
}

Test(dwarfvar, frame_base_from_cfi)
{
	struct dwarfexpr_op fb_cfa[] = {OP(DW_OP_call_frame_cfa, 0, 0)};
	struct dwarfexpr_op var[] = {OP(DW_OP_fbreg, (uint64_t)-20, 0)};
	translates(EXPR_FB(var, 1, fb_cfa, 1, RULE_RSP8), W_MEM,
		   (struct want[]){{FETCH_REG, 7, 0, 8}, {FETCH_CONST, 0, 0, -20}, {FETCH_ADD, 0, 0, 0}},
		   3);
	translates(EXPR_FB(var, 1, fb_cfa, 1, RULE_RBP16), W_MEM,
		   (struct want[]){{FETCH_REG, 6, 0, 16}, {FETCH_CONST, 0, 0, -20}, {FETCH_ADD, 0, 0, 0}},
		   3);
	refuses(EXPR_FB(var, 1, fb_cfa, 1, RULE_DEREF), "cannot fold");
	refuses(EXPR_FB(var, 1, fb_cfa, 1, 0), "cannot fold");
	refuses(EXPR_FB(var, 1, NULL, 0, RULE_RSP8), "no frame base");
	/* clang's frame base: a register. */
	struct dwarfexpr_op fb_rbp[] = {OP(DW_OP_reg6, 0, 0)};
	translates(EXPR_FB(var, 1, fb_rbp, 1, 0), W_MEM,
		   (struct want[]){{FETCH_REG, 6, 0, 0}, {FETCH_CONST, 0, 0, -20}, {FETCH_ADD, 0, 0, 0}},
		   3);
	struct dwarfexpr_op cfa[] = {OP(DW_OP_call_frame_cfa, 0, 0), OP(DW_OP_plus_uconst, 16, 0)};
	translates(EXPR_FB(cfa, 2, NULL, 0, RULE_RSP8), W_MEM,
		   (struct want[]){{FETCH_REG, 7, 0, 8}, {FETCH_CONST, 0, 0, 16}, {FETCH_ADD, 0, 0, 0}},
		   3);
}

Test(dwarfvar, addresses_and_constants)
{
	struct dwarfexpr_op addr[] = {OP(DW_OP_addr, 0x4010, 0)};
	translates(EXPR(addr, 1), W_MEM, (struct want[]){{FETCH_ADDR, 0, 0, 0x4010}}, 1);
	/* DW_OP_addrx once its address is looked up (number2 = 1). */
	struct dwarfexpr_op addrx[] = {OP(DW_OP_addrx, 0x5020, 1)};
	translates(EXPR(addrx, 1), W_MEM, (struct want[]){{FETCH_ADDR, 0, 0, 0x5020}}, 1);
	struct dwarfexpr_op lits[] = {OP(DW_OP_lit7, 0, 0), OP(DW_OP_const1s, (uint64_t)-2, 0),
				      OP(DW_OP_minus, 0, 0), OP(DW_OP_constu, 1000, 0), OP(DW_OP_plus, 0, 0),
				      OP(DW_OP_stack_value, 0, 0)};
	translates(EXPR(lits, NOPS(lits)), W_VAL,
		   (struct want[]){{FETCH_CONST, 0, 0, 7}, {FETCH_CONST, 0, 0, -2},
				   {FETCH_SUB, 0, 0, 0}, {FETCH_CONST, 0, 0, 1000}, {FETCH_ADD, 0, 0, 0}},
		   5);
	uint8_t bytes[4] = {0x78, 0x56, 0x34, 0x12};
	struct dwarfexpr_op imp[] = {OP(DW_OP_implicit_value, 4, (uintptr_t)bytes)};
	translates(EXPR(imp, 1), W_VAL, (struct want[]){{FETCH_CONST, 0, 0, 0x12345678}}, 1);
	struct dwarfexpr_op big[] = {OP(DW_OP_implicit_value, 16, (uintptr_t)bytes)};
	refuses(EXPR(big, 1), "DW_OP_implicit_value of 16 bytes");
}

Test(dwarfvar, dereferences)
{
	struct dwarfexpr_op e[] = {OP(DW_OP_breg7, 8, 0), OP(DW_OP_deref, 0, 0),
				   OP(DW_OP_plus_uconst, 16, 0), OP(DW_OP_deref_size, 4, 0)};
	translates(EXPR(e, NOPS(e)), W_MEM,
		   (struct want[]){{FETCH_REG, 7, 0, 8}, {FETCH_DEREF, 8, 0, 0},
				   {FETCH_CONST, 0, 0, 16}, {FETCH_ADD, 0, 0, 0}, {FETCH_DEREF, 4, 0, 0}},
		   5);
	struct dwarfexpr_op odd[] = {OP(DW_OP_breg7, 8, 0), OP(DW_OP_deref_size, 3, 0)};
	refuses(EXPR(odd, 2), "DW_OP_deref_size 3");
}

Test(dwarfvar, pieces)
{
	/* A 64-bit value in two 32-bit registers, and one half in memory. */
	struct dwarfexpr_op e[] = {OP(DW_OP_reg0, 0, 0), OP(DW_OP_piece, 4, 0), OP(DW_OP_reg1, 0, 0),
				   OP(DW_OP_piece, 4, 0)};
	translates(EXPR(e, NOPS(e)), W_VAL,
		   (struct want[]){{FETCH_CONST, 0, 0, 0}, {FETCH_REG, 0, 0, 0}, {FETCH_PIECE, 4, 0, 0},
				   {FETCH_REG, 1, 0, 0}, {FETCH_PIECE, 4, 32, 0}},
		   5);
	struct dwarfexpr_op m[] = {OP(DW_OP_breg7, 16, 0), OP(DW_OP_piece, 2, 0), OP(DW_OP_lit1, 0, 0),
				   OP(DW_OP_stack_value, 0, 0), OP(DW_OP_piece, 2, 0)};
	translates(EXPR(m, NOPS(m)), W_VAL,
		   (struct want[]){{FETCH_CONST, 0, 0, 0}, {FETCH_REG, 7, 0, 16}, {FETCH_DEREF, 2, 0, 0},
				   {FETCH_PIECE, 2, 0, 0}, {FETCH_CONST, 0, 0, 1}, {FETCH_PIECE, 2, 16, 0}},
		   6);
	struct dwarfexpr_op wide[] = {OP(DW_OP_reg0, 0, 0), OP(DW_OP_piece, 8, 0), OP(DW_OP_reg1, 0, 0),
				      OP(DW_OP_piece, 8, 0)};
	refuses(EXPR(wide, NOPS(wide)), "more than 8 bytes");
	struct dwarfexpr_op hole[] = {OP(DW_OP_piece, 4, 0), OP(DW_OP_reg1, 0, 0), OP(DW_OP_piece, 4, 0)};
	refuses(EXPR(hole, NOPS(hole)), "optimized out");
}

Test(dwarfvar, unavailable_and_refused)
{
	struct dwarfexpr_op entry[] = {OP(DW_OP_entry_value, 0, 0), OP(DW_OP_stack_value, 0, 0)};
	struct sonde_fetch_op ops[8];
	struct dwarfexpr_output out;
	cr_assert_geq(translate_into(EXPR(entry, 2), ops, 8, &out), 0);
	cr_assert_eq(out.where, W_UNAVAILABLE);
	struct dwarfexpr_op bra[] = {OP(DW_OP_lit1, 0, 0), OP(DW_OP_bra, 2, 0)};
	refuses(EXPR(bra, 2), "its location uses DW_OP_bra, which sonde cannot read");
	struct dwarfexpr_op tls[] = {OP(DW_OP_const8u, 16, 0), OP(DW_OP_form_tls_address, 0, 0)};
	refuses(EXPR(tls, 2), "DW_OP_form_tls_address");
	struct dwarfexpr_op impl[] = {OP(DW_OP_implicit_pointer, 0x40, 0)};
	refuses(EXPR(impl, 1), "DW_OP_implicit_pointer");
	struct dwarfexpr_op midreg[] = {OP(DW_OP_reg3, 0, 0), OP(DW_OP_lit1, 0, 0)};
	refuses(EXPR(midreg, 2), "not at the end");
}

Test(dwarfvar, program_too_long)
{
	struct dwarfexpr_op e[SONDE_FETCH_OPS + 1];
	for (size_t i = 0; i < NOPS(e); i++)
		e[i] = OP(DW_OP_lit1, 0, 0);
	refuses(EXPR(e, NOPS(e)), "too long");
}

/* ---- the parser ---------------------------------------------------------- */

Test(capexpr, captures_and_predicate)
{
	struct cap_spec s;
	char err[256];
	cr_assert_eq(capexpr_parse("len req->hdr.size, buf[3] *p &x if len > 4096 && !(n % 2)", &s,
				   err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(s.ncaptures, 5);
	cr_assert_str_eq(s.texts[1], "req->hdr.size");
	cr_assert_str_eq(s.texts[2], "buf[3]");
	cr_assert_eq(s.captures[1]->kind, CAP_MEMBER);
	cr_assert_eq(s.captures[1]->l->kind, CAP_ARROW);
	cr_assert_eq(s.captures[3]->kind, CAP_DEREF);
	cr_assert_eq(s.captures[4]->kind, CAP_ADDR);
	cr_assert_str_eq(s.pred_text, "len > 4096 && !(n % 2)");
	cr_assert_eq(s.pred->op, CAP_OP_LAND);
	cr_assert_eq(s.pred->l->op, CAP_OP_GT);
	capexpr_free(&s);
	/* Precedence: a + b * c == d || e */
	cr_assert_eq(capexpr_parse("if a + b * c == d || e", &s, err, sizeof(err)), 0);
	cr_assert_eq(s.pred->op, CAP_OP_LOR);
	cr_assert_eq(s.pred->l->op, CAP_OP_EQ);
	cr_assert_eq(s.pred->l->l->op, CAP_OP_ADD);
	cr_assert_eq(s.pred->l->l->r->op, CAP_OP_MUL);
	capexpr_free(&s);
	cr_assert_eq(capexpr_parse("", &s, err, sizeof(err)), 0);
	cr_assert_eq(s.ncaptures, 0);
	cr_assert_null(s.pred);
}

Test(capexpr, errors)
{
	static const char *const bad[][2] = {
		{"-a", "a capture is a variable path"},
		{"a +", "expected a variable"},
		{"if", "\"if\" needs an expression"},
		{"a if b c", "unexpected text after the predicate"},
		{"a[1", "expected \"]\""},
		{"a->", "expected a member name"},
		{"x if 0x", "not a number"},
		{"x if 99999999999999999999", "not a number"},
		{"a $", "unexpected character"},
		{"n n", "captured twice"},
		{"a b c d e f g h i", "too many captures"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cap_spec s;
		char err[256] = "";
		cr_assert_eq(capexpr_parse(bad[i][0], &s, err, sizeof(err)), -1, "'%s' parsed", bad[i][0]);
		cr_assert(strstr(err, bad[i][1]), "'%s': error '%s' lacks '%s'", bad[i][0], err, bad[i][1]);
		cr_assert_eq(s.ncaptures, 0);
	}
	char deep[200];
	memset(deep, '(', 100);
	strcpy(deep + 100, "x");
	struct cap_spec s;
	char err[256];
	char line[256];
	snprintf(line, sizeof(line), "if %s", deep);
	cr_assert_eq(capexpr_parse(line, &s, err, sizeof(err)), -1);
	cr_assert(strstr(err, "nested too deep"), "%s", err);
}

Test(capexpr, split_spec)
{
	const char *tail;
	cr_assert_eq(capexpr_split_spec("handle len if len > 3", &tail), 6);
	cr_assert_str_eq(tail, "len if len > 3");
	cr_assert_eq(capexpr_split_spec("libc:malloc", &tail), 11);
	cr_assert_str_eq(tail, "");
	cr_assert_eq(capexpr_split_spec("operator new(unsigned long)", &tail), 27);
	cr_assert_eq(capexpr_split_spec("ns::f(int, long) const x", &tail), 22);
	cr_assert_str_eq(tail, "x");
	cr_assert_eq(capexpr_split_spec("server.c:1312  len", &tail), 13);
	cr_assert_str_eq(tail, "len");
}

/* ---- against real DWARF -------------------------------------------------- */

Test(dwarfvar, compile_at_handle)
{
	/* handle's entry in captures-gcc-O2: its file offset from the symbol. */
	char cmd[512], path[256];
	snprintf(path, sizeof(path), "%s/captures-gcc-O2", TARGET_DIR);
	snprintf(cmd, sizeof(cmd), "nm %s | awk '$3 == \"handle\" {print $1}'", path);
	FILE *f = popen(cmd, "r");
	unsigned long long addr = 0;
	cr_assert(f && fscanf(f, "%llx", &addr) == 1, "no handle in %s", path);
	pclose(f);
	/* PIE: the text segment's vaddr equals its file offset. */
	struct cap_spec s;
	char err[512];
	cr_assert_eq(capexpr_parse("req->hdr.size req->name req->color n g_generation if n > 0", &s,
				   err, sizeof(err)),
		     0);
	struct fetch_build b;
	cr_assert_eq(dwarfvar_compile(path, addr, &s, &b, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(b.ndesc, 5);
	cr_assert_eq(b.desc[0].kind, CAPTURE_UNSIGNED);
	cr_assert_eq(b.desc[0].size, 2);
	cr_assert_eq(b.desc[1].kind, CAPTURE_STRING);
	cr_assert_eq(b.desc[2].kind, CAPTURE_ENUM);
	cr_assert_eq(b.desc[2].nenums, 3);
	cr_assert_str_eq(b.desc[2].enums[1].name, "GREEN");
	cr_assert_eq(b.desc[2].enums[1].value, 5);
	cr_assert_eq(b.desc[3].kind, CAPTURE_SIGNED);
	cr_assert_eq(b.prog->nvalues, 5);
	cr_assert_eq(b.prog->vaddr, addr);
	cr_assert_eq(b.prog->ops[b.prog->nops - 1].code, FETCH_EMIT);
	bool pred = false, global = false;
	for (uint32_t i = 0; i < b.prog->nops; i++) {
		pred |= b.prog->ops[i].code == FETCH_PRED;
		global |= b.prog->ops[i].code == FETCH_ADDR;
	}
	cr_assert(pred, "no predicate in the program");
	cr_assert(global, "the global is not read at a biased address");
	dwarfvar_build_free(&b);
	capexpr_free(&s);

	struct dwarfvar_visible *v;
	int n = dwarfvar_list(path, addr, &v, err, sizeof(err));
	cr_assert_geq(n, 2, "%s", err);
	cr_assert_str_eq(v[0].name, "req");
	cr_assert_str_eq(v[0].type, "struct request *");
	cr_assert_str_eq(v[0].where, "argument");
	cr_assert_str_eq(v[0].readable, "yes");
	dwarfvar_visible_free(v, n);
}
