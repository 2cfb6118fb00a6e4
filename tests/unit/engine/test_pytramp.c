/* pytramp: the rows of one -X perf trampoline copy, from the bytes of the
 * interpreter's own template (only the x86-64 shape CPython has), and
 * which anonymous mappings hold copies by the perf map, at which stride. */
#include <criterion/criterion.h>
#include <string.h>

#include "pytramp.h"
#include "sonde_abi.h"

static const uint8_t SHAPE[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd1,
				0x48, 0x83, 0xc4, 0x08, 0xc3};

/* The rule holding at key in rows[0 .. n). */
static uint32_t rule_at(const struct cfi_row *rows, uint32_t n, uint32_t key)
{
	uint32_t r = CFI_CFA_NONE;
	for (uint32_t i = 0; i < n && rows[i].pc <= key; i++)
		r = rows[i].rule;
	return r;
}

Test(pytramp, the_rows_of_cpythons_trampoline)
{
	struct cfi_row rows[PYTRAMP_ROWS];
	uint32_t n;
	cr_assert(pytramp_rows(SHAPE, sizeof(SHAPE), rows, &n));
	/* A return address from its call *%rcx is looked up at pc - 1 = 5:
	 * CFA rsp + 16 (the sub's 8 and the return address), rbp the same. */
	uint32_t r = rule_at(rows, n, 5);
	cr_expect_eq(cfi_rule_cfa(r), CFI_CFA_RSP);
	cr_expect_eq(cfi_rule_cfa_off(r), 16);
	cr_expect_eq(cfi_rule_rbp(r), CFI_RBP_SAME);
	cr_expect_eq(cfi_rule_cfa_off(rule_at(rows, n, 0)), 8, "at entry");
	cr_expect_eq(cfi_rule_cfa_off(rule_at(rows, n, 10)), 8, "at its ret");
	cr_expect_eq(cfi_rule_cfa(rule_at(rows, n, 13)), CFI_CFA_NONE, "padding to the stride");
}

Test(pytramp, another_shape_is_refused)
{
	uint8_t other[sizeof(SHAPE)];
	memcpy(other, SHAPE, sizeof(SHAPE));
	other[3] = 0x10; /* sub $16, %rsp */
	struct cfi_row rows[PYTRAMP_ROWS];
	uint32_t n;
	cr_expect(!pytramp_rows(other, sizeof(other), rows, &n));
	cr_expect(!pytramp_rows(SHAPE, sizeof(SHAPE) - 1, rows, &n));
}

static struct perfmap *map_of(const char *text)
{
	struct perfmap *m = perfmap_new(0);
	perfmap_add_text(m, text, strlen(text), true);
	return m;
}

Test(pytramp, arenas_and_strides_from_the_perf_map)
{
	uint32_t stride = 0;
	/* 3.12: copies back to back (11 bytes). */
	struct perfmap *m = map_of("7f0000000000 b py::f:a.py\n7f000000000b b py::g:a.py\n"
				   "7f0000000016 b py::h:a.py\n");
	cr_expect(pytramp_arena(m, 0x7f0000000000, 0x7f0000010000, 11, 11, &stride));
	cr_expect_eq(stride, 11);
	cr_expect(!pytramp_arena(m, 0x7f0000010000, 0x7f0000020000, 11, 11, &stride),
		  "a mapping the map names nothing in is not an arena");
	perfmap_free(m);
	/* 3.13: 16 bytes apart. */
	m = map_of("7f0000000000 b py::f:a.py\n7f0000000010 b py::g:a.py\n");
	cr_expect(pytramp_arena(m, 0x7f0000000000, 0x7f0000010000, 11, 16, &stride));
	cr_expect_eq(stride, 16);
	perfmap_free(m);
	/* One copy named: the stride the version gives. */
	m = map_of("7f0000000000 b py::f:a.py\n");
	cr_expect(pytramp_arena(m, 0x7f0000000000, 0x7f0000010000, 11, 16, &stride));
	cr_expect_eq(stride, 16);
	perfmap_free(m);
	/* Code of another size, or not Python's, is not the interpreter's. */
	m = map_of("7f0000000000 40 py::f:a.py\n");
	cr_expect(!pytramp_arena(m, 0x7f0000000000, 0x7f0000010000, 11, 11, &stride));
	perfmap_free(m);
	m = map_of("7f0000000000 b LazyCompile:f\n");
	cr_expect(!pytramp_arena(m, 0x7f0000000000, 0x7f0000010000, 11, 11, &stride));
	perfmap_free(m);
}
