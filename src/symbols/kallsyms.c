/* kallsyms — kernel symbols from /proc/kallsyms. See kallsyms.h for the
 * contract. */
#include "kallsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"
#include "util.h"

static char *kallsyms_name_dup(struct kallsyms *k, const char *name)
{
	grow_array((void **)&k->names, &k->names_cap, k->nnames + 1, sizeof(*k->names));
	return k->names[k->nnames++] = xstrdup(name);
}

static int ksym_type_rank(char type)
{
	switch (type) {
	case 'T': return 0;
	case 't': return 1;
	case 'W': case 'w': return 2;
	default: return 3;
	}
}

static int ksym_cmp(const void *pa, const void *pb)
{
	const struct ksym *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (int)b->is_text - (int)a->is_text;
}

/* One kallsyms line: "ffffffff81000000 T _stext" or "... t fn\t[module]". */
static bool parse_kallsyms_line(struct kallsyms *t, struct strpool *strings, char *line,
				struct ksym *k, char *type)
{
	char *end;
	unsigned long long addr = strtoull(line, &end, 16);
	if (end == line || end[0] != ' ' || !end[1] || end[2] != ' ')
		return false;
	*type = end[1];
	char *name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	char *tab = strchr(name, '\t');
	const char *module = KERNEL_MODULE;
	if (tab) {
		*tab = '\0';
		module = strpool_intern(strings, tab + 1);
	}
	*k = (struct ksym){
		.addr = addr,
		.name = kallsyms_name_dup(t, name),
		.module = module,
		.is_text = ksym_type_rank(*type) < 3,
	};
	return addr != 0; /* all zero: addresses hidden (kptr_restrict) */
}

void kallsyms_load(struct kallsyms *k, struct strpool *strings)
{
	k->loaded = true;
	FILE *f = fopen("/proc/kallsyms", "re");
	if (!f)
		return;
	size_t cap = 0;
	char *line = NULL;
	size_t linecap = 0;
	while (getline(&line, &linecap, f) > 0) {
		grow_array((void **)&k->syms, &cap, k->n + 1, sizeof(*k->syms));
		char type;
		if (parse_kallsyms_line(k, strings, line, &k->syms[k->n], &type))
			k->n++;
	}
	free(line);
	fclose(f);
	/* Several names can share an address: text first, then file order. */
	if (k->n)
		qsort(k->syms, k->n, sizeof(*k->syms), ksym_cmp);
}

const struct ksym *kallsyms_find(const struct kallsyms *k, uint64_t addr)
{
	size_t lo = ORDER_PARTITION(k->n, i, k->syms[i].addr <= addr);
	/* Past the last symbol nothing bounds the range: not ours to guess. */
	if (lo == 0 || lo == k->n)
		return NULL;
	size_t first = lo - 1;
	while (first > 0 && k->syms[first - 1].addr == k->syms[lo - 1].addr)
		first--;
	return k->syms[first].is_text ? &k->syms[first] : NULL;
}

void kallsyms_free(struct kallsyms *k)
{
	for (size_t i = 0; i < k->nnames; i++)
		free(k->names[i]);
	free(k->names);
	free(k->syms);
	*k = (struct kallsyms){0};
}
