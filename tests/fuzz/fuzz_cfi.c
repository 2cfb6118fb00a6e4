/* Fuzzes the unwind-table builder (src/symbols/cfi.h): the input's first
 * byte says which section it is (bit 0: .debug_frame, else .eh_frame), the
 * rest is the section's bytes. Hostile CFI must never crash or hang it,
 * and whatever rows it makes must be well-formed: sorted, merged, ending
 * in CFI_CFA_NONE, every rule a canonical one of the contract (a CFA on
 * rsp at least 8 above it, no stray bits), and found by the lookup the
 * kernel will do. The unwinder then walks a stack made of the input's bytes
 * through the table: every step must move the stack pointer up. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfi.h"
#include "sonde_abi.h"

#define SEC_ADDR 0x10000

static void fail(const char *what, uint32_t i)
{
	fprintf(stderr, "fuzz_cfi: %s (row %u)\n", what, i);
	abort();
}

static void check_rule(uint32_t rule, uint32_t i)
{
	unsigned cfa = cfi_rule_cfa(rule), rbp = cfi_rule_rbp(rule);
	bool no_params = cfa == CFI_CFA_NONE || cfa == CFI_CFA_END || cfa == CFI_CFA_SIGNAL ||
			 cfa == CFI_CFA_UNSUPPORTED;
	if (cfa > CFI_CFA_END && cfa != CFI_CFA_UNSUPPORTED)
		fail("unknown CFA kind", i);
	if (no_params && rule != cfa)
		fail("stray bits in a rule without parameters", i);
	if (rbp != CFI_RBP_AT_CFA && ((rule >> 6) & 0x3f))
		fail("an rbp offset without an rbp saved at the CFA", i);
	if (cfa == CFI_CFA_RSP && cfi_rule_cfa_off(rule) < 8)
		fail("a CFA on rsp with no room for the return address", i);
	if (cfa == CFI_CFA_PLT && (cfi_rule_a(rule) < 8 || cfi_rule_b(rule) > 31))
		fail("a PLT rule out of range", i);
	if (cfa == CFI_CFA_REG && (cfi_rule_b(rule) >= 16 || cfi_rule_b(rule) == 6 ||
				   cfi_rule_b(rule) == 7))
		fail("a CFA register the unwinder does not hold", i);
}

struct stack {
	uint64_t base;
	const uint8_t *bytes;
	size_t size;
};

static bool stack_read(void *ctx, uint64_t addr, uint64_t *value)
{
	const struct stack *s = ctx;
	if (addr < s->base || addr - s->base > s->size || s->size - (addr - s->base) < 8)
		return false;
	memcpy(value, s->bytes + (addr - s->base), 8);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	struct cfi_table *t = cfi_table_from_section(data + 1, size - 1, SEC_ADDR, !(data[0] & 1));
	uint64_t total = 0;
	for (int k = 0; k < 16; k++)
		total += t->rows_by_cfa[k];
	if (total != t->nrows)
		fail("rows by kind do not add up", 0);
	if (t->nrows && cfi_rule_cfa(t->rows[t->nrows - 1].rule) != CFI_CFA_NONE)
		fail("the last row is not CFI_CFA_NONE", t->nrows - 1);
	for (uint32_t i = 0; i < t->nrows; i++) {
		check_rule(t->rows[i].rule, i);
		if (i && t->rows[i - 1].pc >= t->rows[i].pc)
			fail("rows not sorted", i);
		if (i && t->rows[i - 1].rule == t->rows[i].rule)
			fail("equal rows not merged", i);
		if (cfi_table_find(t, t->base + t->rows[i].pc) != &t->rows[i])
			fail("the lookup misses its own row", i);
		if (t->rows[i].pc && cfi_table_find(t, t->base + t->rows[i].pc - 1) != &t->rows[i - 1])
			fail("the lookup misses the row before", i);
	}
	/* A walk: from each row's address, on a stack of the input's bytes. */
	uint64_t gprs[17] = { 0 };
	struct stack st = { .base = 0x7fff0000, .bytes = data, .size = size };
	for (uint32_t i = 0; i < t->nrows && i < 64; i++) {
		struct cfi_regs r = { .rip = t->base + t->rows[i].pc, .rsp = st.base,
				      .rbp = st.base + 16, .rbp_known = true, .exact_pc = true,
				      .gprs = gprs };
		for (int depth = 0; depth < 16; depth++) {
			uint64_t rsp = r.rsp;
			enum cfi_step s = cfi_unwind_step(t, 0, &r, stack_read, &st);
			if (s != CFI_STEP_CFI && s != CFI_STEP_FP)
				break;
			/* (a signal frame's stack may be another one) */
			if (r.rsp <= rsp && !r.exact_pc)
				fail("a step that does not move the stack pointer up", i);
		}
	}
	cfi_table_free(t);
	return 0;
}
