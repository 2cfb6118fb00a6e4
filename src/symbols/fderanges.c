/* fderanges — function ranges from the unwind tables. See fderanges.h
 * for the contract. */
#include "fderanges.h"

#include <stdlib.h>

#include "ehframe.h"
#include "order.h"
#include "util.h"

static bool fde_table_add(const struct ehframe_fde *fde, void *arg)
{
	struct fde_table *t = arg;
	grow_array((void **)&t->r, &t->cap, t->n + 1, sizeof(*t->r));
	t->r[t->n++] = (struct fde_range){ fde->start, fde->end };
	return true;
}

/* Adds every FDE of one CFI section of elf. */
static void fde_table_add_section(struct fde_table *t, Elf *elf, bool eh_frame)
{
	struct ehframe_section sec;
	if (elf && ehframe_section_find(elf, eh_frame, &sec))
		ehframe_each_fde(&sec, fde_table_add, t, NULL);
}

static int fde_range_cmp(const void *pa, const void *pb)
{
	const struct fde_range *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end < b->end ? -1 : a->end > b->end;
}

/* .eh_frame of the binary, else .debug_frame of the binary or of its
 * separate debug file (code built without unwind tables for exceptions). */
void fde_table_build(struct fde_table *t, Elf *elf, Elf *debug_elf)
{
	fde_table_add_section(t, elf, true);
	if (t->n == 0)
		fde_table_add_section(t, elf, false);
	if (t->n == 0 && debug_elf && debug_elf != elf)
		fde_table_add_section(t, debug_elf, false);
	if (t->n)
		qsort(t->r, t->n, sizeof(*t->r), fde_range_cmp);
}

const struct fde_range *fde_table_find(const struct fde_table *t, uint64_t pc)
{
	size_t lo = ORDER_PARTITION(t->n, i, t->r[i].start <= pc);
	return lo > 0 && pc < t->r[lo - 1].end ? &t->r[lo - 1] : NULL;
}

struct symbols_fdes {
	struct fde_table t;
};

struct symbols_fdes *symbols_fdes_read(Elf *elf, Elf *debug_elf)
{
	struct symbols_fdes *f = xcalloc(1, sizeof(*f));
	fde_table_build(&f->t, elf, debug_elf);
	return f;
}

bool symbols_fdes_find(const struct symbols_fdes *f, uint64_t vaddr, uint64_t *start)
{
	const struct fde_range *r = f ? fde_table_find(&f->t, vaddr) : NULL;
	if (r)
		*start = r->start;
	return r != NULL;
}

void symbols_fdes_free(struct symbols_fdes *f)
{
	if (!f)
		return;
	fde_table_free(&f->t);
	free(f);
}

void fde_table_free(struct fde_table *t)
{
	free(t->r);
	*t = (struct fde_table){0};
}
