/* Unit tests for the symbolizer's sorted tables, searched with
 * ORDER_PARTITION: which entry each lookup gives at, just below and just
 * past every boundary (kernel symbols, FDE ranges, ELF code symbols, a
 * process's mappings). Tables are built by hand, sorted as their builders
 * sort them. */
#include <criterion/criterion.h>
#include <stdint.h>

#include "elfsyms.h"
#include "fderanges.h"
#include "kallsyms.h"
#include "procs.h"

static const char *ksym_name(const struct kallsyms *k, uint64_t addr)
{
	const struct ksym *s = kallsyms_find(k, addr);
	return s ? s->name : "(none)";
}

Test(symtables, kallsyms_last_text_symbol_at_or_below)
{
	/* Sorted by address, text first among equals (as kallsyms_load sorts). */
	struct ksym syms[] = {
		{0x1000, "a", KERNEL_MODULE, true},  {0x1000, "a_alias", KERNEL_MODULE, true},
		{0x2000, "data", KERNEL_MODULE, false}, {0x3000, "c", KERNEL_MODULE, true},
		{0x4000, "last", KERNEL_MODULE, true},
	};
	struct kallsyms k = {.syms = syms, .n = 5, .loaded = true};
	cr_expect_str_eq(ksym_name(&k, 0xfff), "(none)");
	cr_expect_str_eq(ksym_name(&k, 0x1000), "a");
	cr_expect_str_eq(ksym_name(&k, 0x1fff), "a");
	cr_expect_str_eq(ksym_name(&k, 0x2000), "(none)"); /* a data symbol bounds a */
	cr_expect_str_eq(ksym_name(&k, 0x3abc), "c");
	cr_expect_str_eq(ksym_name(&k, 0x3fff), "c");
	/* Past the last symbol nothing bounds it. */
	cr_expect_str_eq(ksym_name(&k, 0x4000), "(none)");
	cr_expect_str_eq(ksym_name(&k, UINT64_MAX), "(none)");
	struct kallsyms empty = {.loaded = true};
	cr_expect_null(kallsyms_find(&empty, 0x1000));
}

static uint64_t fde_start(const struct fde_table *t, uint64_t pc)
{
	const struct fde_range *r = fde_table_find(t, pc);
	return r ? r->start : 0;
}

Test(symtables, fde_ranges_hold_start_to_end)
{
	struct fde_range r[] = {{0x100, 0x200}, {0x200, 0x250}, {0x300, 0x400}};
	struct fde_table t = {.r = r, .n = 3};
	cr_expect_eq(fde_start(&t, 0xff), 0);
	cr_expect_eq(fde_start(&t, 0x100), 0x100);
	cr_expect_eq(fde_start(&t, 0x1ff), 0x100);
	cr_expect_eq(fde_start(&t, 0x200), 0x200);
	cr_expect_eq(fde_start(&t, 0x24f), 0x200);
	cr_expect_eq(fde_start(&t, 0x250), 0); /* a gap between FDEs */
	cr_expect_eq(fde_start(&t, 0x2ff), 0);
	cr_expect_eq(fde_start(&t, 0x3ff), 0x300);
	cr_expect_eq(fde_start(&t, 0x400), 0);
	struct fde_table empty = {0};
	cr_expect_null(fde_table_find(&empty, 0x100));
}

static const char *elf_name(const struct elf_symtab *t, uint32_t shndx, uint64_t addr)
{
	const struct elf_sym *s = elf_symtab_find(t, shndx, addr);
	return s ? s->name : "(none)";
}

Test(symtables, elf_symbol_nearest_below_in_its_section)
{
	/* Sorted by (section, value, table order), as elf_symtab_build sorts. */
	struct elf_sym syms[] = {
		{.value = 0x10, .size = 0x10, .name = "f", .shndx = 1, .order = 1, .enclosing = -1,
		 .is_func = true},
		{.value = 0x10, .size = 1, .name = "f_label", .shndx = 1, .order = 2, .enclosing = 0,
		 .sizeless = true, .is_notype = true},
		{.value = 0x40, .size = 0x20, .name = "g", .shndx = 1, .order = 3, .enclosing = -1,
		 .is_func = true},
		{.value = 0x0, .size = 0x8, .name = "h", .shndx = 2, .order = 4, .enclosing = -1,
		 .is_func = true},
	};
	struct elf_symtab t = {.syms = syms, .n = 4};
	cr_expect_str_eq(elf_name(&t, 1, 0xf), "(none)");
	cr_expect_str_eq(elf_name(&t, 1, 0x10), "f"); /* the function, not the label */
	cr_expect_str_eq(elf_name(&t, 1, 0x1f), "f");
	cr_expect_str_eq(elf_name(&t, 1, 0x30), "f"); /* past its end: still the nearest below */
	cr_expect_str_eq(elf_name(&t, 1, 0x40), "g");
	cr_expect_str_eq(elf_name(&t, 1, UINT64_MAX), "g");
	cr_expect_str_eq(elf_name(&t, 2, 0x0), "h");
	cr_expect_str_eq(elf_name(&t, 2, 0x100), "h");
	cr_expect_str_eq(elf_name(&t, 0, 0x100), "(none)"); /* no symbols in section 0 */
	cr_expect_str_eq(elf_name(&t, 3, 0x0), "(none)");  /* nor after the last section */
	cr_expect(elf_sym_covers(&syms[0], 0x1f));
	cr_expect(!elf_sym_covers(&syms[0], 0x20));
}

static uint64_t mapping_start(struct process *p, uint64_t addr)
{
	const struct mapping *m = process_mapping_at(p, addr);
	return m ? m->start : 0;
}

Test(symtables, mapping_holds_start_to_end)
{
	struct mapping maps[] = {
		{.start = 0x1000, .end = 0x2000, .path = "/a"},
		{.start = 0x3000, .end = 0x4000, .path = "/b"},
	};
	struct process p = {.maps = maps, .nmaps = 2, .loaded = true};
	cr_expect_eq(mapping_start(&p, 0xfff), 0);
	cr_expect_eq(mapping_start(&p, 0x1000), 0x1000);
	cr_expect_eq(mapping_start(&p, 0x1fff), 0x1000);
	cr_expect_eq(mapping_start(&p, 0x2000), 0);
	cr_expect_eq(mapping_start(&p, 0x3000), 0x3000);
	cr_expect_eq(mapping_start(&p, 0x4000), 0);
}
