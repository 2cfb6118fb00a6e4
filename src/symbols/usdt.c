#define _GNU_SOURCE
#include "usdt.h"

#include <ctype.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "errbuf.h"
#include "probebinary.h"
#include "util.h"

#define NT_STAPSDT 3

/* x86-64 register names, each width, to DWARF numbers. */
static const struct {
	const char *names[4]; /* 64, 32, 16, 8 bits */
	int dwarf;
} REGS[] = {
	{{"rax", "eax", "ax", "al"}, 0},     {{"rdx", "edx", "dx", "dl"}, 1},
	{{"rcx", "ecx", "cx", "cl"}, 2},     {{"rbx", "ebx", "bx", "bl"}, 3},
	{{"rsi", "esi", "si", "sil"}, 4},    {{"rdi", "edi", "di", "dil"}, 5},
	{{"rbp", "ebp", "bp", "bpl"}, 6},    {{"rsp", "esp", "sp", "spl"}, 7},
	{{"r8", "r8d", "r8w", "r8b"}, 8},    {{"r9", "r9d", "r9w", "r9b"}, 9},
	{{"r10", "r10d", "r10w", "r10b"}, 10}, {{"r11", "r11d", "r11w", "r11b"}, 11},
	{{"r12", "r12d", "r12w", "r12b"}, 12}, {{"r13", "r13d", "r13w", "r13b"}, 13},
	{{"r14", "r14d", "r14w", "r14b"}, 14}, {{"r15", "r15d", "r15w", "r15b"}, 15},
	{{"rip", "eip", NULL, NULL}, 16},
};

/* The DWARF number of register name (after '%', n bytes), or -1. */
static int reg_number(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(REGS) / sizeof(REGS[0]); i++)
		for (int w = 0; w < 4; w++)
			if (REGS[i].names[w] && strlen(REGS[i].names[w]) == n &&
			    strncmp(REGS[i].names[w], name, n) == 0)
				return REGS[i].dwarf;
	return -1;
}

int usdt_parse_arg(const char *text, struct usdt_arg *out)
{
	*out = (struct usdt_arg){0};
	char *end;
	long size = strtol(text, &end, 10);
	if (end == text || *end != '@' || size == 0 || labs(size) > 8 ||
	    (labs(size) & (labs(size) - 1)))
		return -1;
	out->size = (unsigned)labs(size);
	out->is_signed = size < 0;
	const char *op = end + 1;
	if (*op == '$') { /* an immediate */
		out->kind = USDT_ARG_CONST;
		out->offset = strtoll(op + 1, &end, 0);
		return end != op + 1 && *end == 0 ? 0 : -1;
	}
	if (*op == '%') { /* a register */
		out->kind = USDT_ARG_REG;
		out->reg = reg_number(op + 1, strlen(op + 1));
		return out->reg >= 0 && out->reg != 16 ? 0 : -1;
	}
	/* [displacement](%reg), the displacement a number; or, rip-relative,
	 * a symbol and a number (sym, sym+8, sym-4: gcc writes a variable's
	 * operand as the assembler takes it, the name left to the linker). */
	out->kind = USDT_ARG_MEM;
	const char *paren = strchr(op, '(');
	if (!paren || paren[1] != '%')
		return -1;
	const char *disp = op;
	size_t sym = strspn(op, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_.$@0123456789");
	if (sym && !(op[0] >= '0' && op[0] <= '9') && op + sym <= paren) {
		if (sym >= sizeof(out->symbol))
			return -1;
		memcpy(out->symbol, op, sym);
		out->symbol[sym] = 0;
		disp = op + sym;
	}
	if (disp != paren) {
		out->offset = strtoll(disp, &end, 0);
		if (end != paren || (out->symbol[0] && *disp != '+' && *disp != '-'))
			return -1;
	}
	const char *close = strchr(paren, ')');
	if (!close || close[1])
		return -1;
	out->reg = reg_number(paren + 2, (size_t)(close - paren - 2));
	if (out->symbol[0] && out->reg != 16)
		return -1; /* a symbol is an address only rip-relative */
	return out->reg >= 0 ? 0 : -1;
}

/* The operands of a note's argument text; -1 when one cannot be read. */
static int parse_args(const char *text, struct usdt_arg *args)
{
	int n = 0;
	char *copy = xstrdup(text), *save = NULL;
	for (char *tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (n == USDT_MAX_ARGS || usdt_parse_arg(tok, &args[n]) != 0) {
			n = -1;
			break;
		}
		n++;
	}
	free(copy);
	return n;
}

/* The section named name, or NULL. */
static Elf_Scn *section_named(Elf *elf, const char *name, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	for (Elf_Scn *s = elf_nextscn(elf, NULL); s; s = elf_nextscn(elf, s)) {
		const char *n;
		if (gelf_getshdr(s, sh) && (n = elf_strptr(elf, shstrndx, sh->sh_name)) &&
		    strcmp(n, name) == 0)
			return s;
	}
	return NULL;
}

/* File offset of vaddr through any PT_LOAD segment holding it in the file. */
static bool file_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr &&
		    vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* One note's description into p: 0, or -1 (malformed). */
static int read_note(Elf *elf, const uint8_t *d, size_t n, int64_t base_diff,
		     struct usdt_probe *p)
{
	if (n < 3 * 8 + 3)
		return -1;
	uint64_t pc, base, sema;
	memcpy(&pc, d, 8);
	memcpy(&base, d + 8, 8);
	memcpy(&sema, d + 16, 8);
	const char *s = (const char *)d + 24, *end = (const char *)d + n;
	const char *provider = s, *name = memchr(s, 0, (size_t)(end - s));
	if (!name || ++name >= end)
		return -1;
	const char *args = memchr(name, 0, (size_t)(end - name));
	if (!args || ++args > end || !memchr(args, 0, (size_t)(end - args)))
		return -1;
	p->provider = xstrdup(provider);
	p->name = xstrdup(name);
	p->args_text = xstrdup(args);
	p->vaddr = pc + (base_diff && base ? (uint64_t)base_diff - base : 0);
	p->semaphore_vaddr = sema ? sema + (base_diff && base ? (uint64_t)base_diff - base : 0) : 0;
	p->nargs = parse_args(args, p->args);
	if (!file_offset(elf, p->vaddr, &p->file_offset) ||
	    (p->semaphore_vaddr && !file_offset(elf, p->semaphore_vaddr, &p->semaphore_offset)))
		return -1;
	return 0;
}

/* The symbols rip-relative operands name, looked up. */
struct wanted_symbols {
	struct usdt_probe *p;
	size_t np;
};

/* A resolved operand's reg: the one symbol of its name found so far, or
 * (AMBIGUOUS) several at different addresses (two files' static variables
 * of one name), which no one can tell apart. */
#define SYMBOL_FOUND (-1)
#define SYMBOL_AMBIGUOUS (-2)

static void resolve_symbol(const struct elf_symbol *s, void *arg)
{
	struct wanted_symbols *w = arg;
	/* A variable (or an untyped label) of this file: not another file's
	 * (SHN_UNDEF), nor thread-local (no one static address). */
	if (!s->name || s->shndx == 0 || (s->type != STT_OBJECT && s->type != STT_NOTYPE))
		return;
	for (size_t i = 0; i < w->np; i++)
		for (int k = 0; k < w->p[i].nargs; k++) {
			struct usdt_arg *a = &w->p[i].args[k];
			if (!a->symbol[0] || strcmp(a->symbol, s->name))
				continue;
			if (a->kind == USDT_ARG_MEM) {
				a->kind = USDT_ARG_ADDR;
				a->offset += (int64_t)s->value;
				a->reg = SYMBOL_FOUND;
				a->symbol_value = s->value;
			} else if (a->kind == USDT_ARG_ADDR && a->symbol_value != s->value) {
				a->reg = SYMBOL_AMBIGUOUS; /* .symtab and .dynsym agree on one */
			}
		}
}

/* Turns each sym(%rip) operand into the variable's address; a probe with
 * one whose symbol the file does not define, or defines twice, cannot be
 * read (nargs -1). */
static void resolve_symbols(Elf *elf, struct usdt_probe *p, size_t np)
{
	struct wanted_symbols w = {p, np};
	bool any = false;
	for (size_t i = 0; i < np && !any; i++)
		for (int k = 0; k < p[i].nargs; k++)
			any |= p[i].args[k].symbol[0] != 0;
	if (!any)
		return;
	symbols_elf_each(elf, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM, resolve_symbol, &w);
	for (size_t i = 0; i < np; i++)
		for (int k = 0; k < p[i].nargs; k++) {
			const struct usdt_arg *a = &p[i].args[k];
			if (a->symbol[0] && (a->kind == USDT_ARG_MEM || a->reg == SYMBOL_AMBIGUOUS)) {
				p[i].nargs = -1;
				break;
			}
		}
}

int usdt_read(const char *path, struct usdt_probe **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd;
	Elf *elf = probes_open_elf(path, &fd, err, errlen);
	if (!elf)
		return -1;
	GElf_Shdr sh, base_sh;
	/* Prelinked: the notes' addresses are off by what the base moved. */
	int64_t base_diff = section_named(elf, ".stapsdt.base", &base_sh) ? (int64_t)base_sh.sh_addr : 0;
	Elf_Scn *scn = section_named(elf, ".note.stapsdt", &sh);
	struct usdt_probe *p = NULL;
	size_t np = 0, cap = 0;
	int r = 0;
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	for (size_t off = 0, name_off, desc_off; data && r == 0;) {
		GElf_Nhdr nh;
		size_t next = gelf_getnote(data, off, &nh, &name_off, &desc_off);
		if (next == 0)
			break;
		off = next;
		if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
		    memcmp((const char *)data->d_buf + name_off, "stapsdt", 8) != 0)
			continue;
		grow_array((void **)&p, &cap, np + 1, sizeof(*p));
		p[np] = (struct usdt_probe){0};
		if (read_note(elf, (const uint8_t *)data->d_buf + desc_off, nh.n_descsz, base_diff,
			      &p[np])) {
			r = errbuf_set(err, errlen, "%s has an SDT note sonde cannot read (note %zu)",
				       display_path(path), np + 1);
			usdt_free(p, (int)np + 1);
			p = NULL;
			break;
		}
		np++;
	}
	if (r == 0)
		resolve_symbols(elf, p, np);
	elf_end(elf);
	close(fd);
	if (r < 0)
		return -1;
	*out = p;
	return (int)np;
}

void usdt_free(struct usdt_probe *p, int n)
{
	for (int i = 0; i < n; i++) {
		free(p[i].provider);
		free(p[i].name);
		free(p[i].args_text);
	}
	free(p);
}
