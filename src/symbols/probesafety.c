/* probesafety — where a probe would break the target (probesafety.h). */
#define _GNU_SOURCE
#include "probesafety.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "errbuf.h"
#include "insn.h"
#include "fderanges.h"
#include "util.h"


/* Is the subprogram at vaddr, among the children of `parent`, noreturn? */
static bool subprogram_noreturn(Dwarf_Die *parent, uint64_t vaddr, int depth)
{
	Dwarf_Die child;
	if (depth > 8 || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr lo;
		if (tag == DW_TAG_subprogram &&
		    (dwarf_lowpc(&child, &lo) == 0 || dwarf_entrypc(&child, &lo) == 0) && lo == vaddr) {
			Dwarf_Attribute a;
			bool flag = false;
			/* _integrate: the flag may sit on the declaration */
			return dwarf_attr_integrate(&child, DW_AT_noreturn, &a) &&
			       dwarf_formflag(&a, &flag) == 0 && flag;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) &&
		    subprogram_noreturn(&child, vaddr, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool noreturn_in_dwarf(struct safety *c, uint64_t vaddr)
{
	if (!c->dw_tried) {
		c->dw_tried = true;
		c->dw = dwarf_begin(c->dwarf_fd, DWARF_C_READ);
	}
	Dwarf_Die cu;
	return c->dw && dwarf_addrdie(c->dw, vaddr, &cu) && subprogram_noreturn(&cu, vaddr, 0);
}

/* Decodes from `start` (a known instruction start) to vaddr. */
static enum insn_reach reach_from(struct safety *c, uint64_t start, uint64_t vaddr,
				  uint64_t *inside_of)
{
	uint64_t off;
	if (vaddr - start > (1u << 20) || vaddr_to_offset(c->elf, start, &off))
		return INSN_UNDECODED;
	size_t len = (size_t)(vaddr - start) + 16;
	uint8_t *buf = xmalloc(len);
	ssize_t got = pread(c->fd, buf, len, (off_t)off);
	enum insn_reach r = got > (ssize_t)(vaddr - start)
				    ? insn_reaches(buf, (size_t)got, start, vaddr, inside_of)
				    : INSN_UNDECODED;
	free(buf);
	return r;
}

/* Is vaddr inside an instruction? Decoded from the start of the function
 * holding it by the unwind tables, and from that of any symbol around it:
 * a symbol can start anywhere (a wrong size, a label in hand-written code). */
static bool inside_instruction(struct safety *c, uint64_t vaddr, uint64_t *insn_at,
			       const char **container)
{
	if (!c->fdes)
		c->fdes = symbols_fdes_read(c->elf, c->debug_elf);
	uint64_t start;
	*container = NULL;
	if (symbols_fdes_find(c->fdes, vaddr, &start) && start < vaddr &&
	    reach_from(c, start, vaddr, insn_at) == INSN_INSIDE) {
		for (size_t i = 0; i < c->fl->n; i++)
			if (c->fl->f[i].vaddr == start)
				*container = function_shown(&c->fl->f[i]);
		return true;
	}
	for (size_t i = 0; i < c->fl->n; i++) {
		const struct elf_function *g = &c->fl->f[i];
		if (g->vaddr < vaddr && vaddr < g->vaddr + g->size &&
		    reach_from(c, g->vaddr, vaddr, insn_at) == INSN_INSIDE) {
			*container = g->name;
			return true;
		}
	}
	return false;
}

/* The bytes of the function at vaddr: its symbol's size (at least 64, at
 * most 64 KiB). Returns how many were read (0: none), in *buf (malloc'd). */
static size_t read_function_code(struct safety *c, uint64_t vaddr, uint64_t size, uint8_t **buf)
{
	uint64_t off;
	*buf = NULL;
	if (vaddr_to_offset(c->elf, vaddr, &off))
		return 0;
	size_t len = size < 64 ? 64 : size > 65536 ? 65536 : (size_t)size;
	*buf = xmalloc(len);
	ssize_t got = pread(c->fd, *buf, len, (off_t)off);
	if (got <= 0) {
		free(*buf);
		*buf = NULL;
		return 0;
	}
	return (size_t)got;
}

/* Why a span probe on f would break the target, with the details in why
 * (for a glob's note, short) or err (for a refused name). *site is where
 * its entry probe goes: f's address, or past first instructions the
 * kernel cannot step (insn_entry_site; then `moved` says so, else ""). */
enum unsafe check_safe(struct safety *c, const struct elf_function *f, struct safe_site *s)
{
	uint64_t *site = &s->site;
	char *moved = s->moved, *why = s->why;
	size_t movedlen = sizeof(s->moved), size = sizeof(s->why);
	uint64_t insn_at = 0;
	const char *container = NULL;
	*site = f->vaddr;
	moved[0] = 0;
	s->trap_known = false;
	if (c->entry && f->vaddr == c->entry) {
		errbuf_set(why, size, "the entry point, never returns");
		return UNSAFE_ENTRY;
	}
	if (noreturn_in_dwarf(c, f->vaddr)) {
		errbuf_set(why, size, "never returns");
		return UNSAFE_NORETURN;
	}
	if (inside_instruction(c, f->vaddr, &insn_at, &container)) {
		errbuf_set(why, size, "inside the instruction at 0x%llx%s%s",
			 (unsigned long long)insn_at, container ? " of " : "",
			 container ? container : "");
		return UNSAFE_INSIDE;
	}
	uint8_t *code;
	size_t len = read_function_code(c, f->vaddr, f->size, &code);
	if (len == 0)
		return SAFE;
	int r = insn_entry_site(code, len, f->vaddr, site, moved, movedlen);
	if (r >= 0 && *site >= f->vaddr && *site - f->vaddr < len) {
		/* Decoded once, here: the engine needs no second read. */
		s->trap = insn_trap_kind(code + (*site - f->vaddr), len - (*site - f->vaddr));
		s->trap_known = true;
	}
	free(code);
	if (r < 0) {
		errbuf_set(why, size, "%s", moved);
		moved[0] = 0;
		return UNSAFE_INSN;
	}
	return SAFE;
}

void explain_unsafe(enum unsafe u, const char *func, const char *binary, const char *why,
			   char *err, size_t errlen)
{
	switch (u) {
	case UNSAFE_ENTRY:
		errbuf_set(err, errlen,
			   "cannot trace %s: it is the entry point of %s, which is jumped to, not "
			   "called, and never returns (a return probe there overwrites the process's "
			   "arguments); trace main instead",
			   func, binary);
		break;
	case UNSAFE_NORETURN:
		errbuf_set(err, errlen,
			   "cannot trace %s: it never returns (noreturn in the debug info of %s), so "
			   "its calls have no end to time; trace its callers instead",
			   func, binary);
		break;
	case UNSAFE_INSN:
		errbuf_set(err, errlen, "cannot trace %s in %s: %s", func, binary, why);
		break;
	default:
		errbuf_set(err, errlen,
			   "cannot trace %s: its address in %s is %s, and a breakpoint there would "
			   "change that instruction; its symbol does not start a function",
			   func, binary, why);
		break;
	}
}

/* What the safety checks read for a binary's functions fl: the binary
 * (elf, fd) and its separate debug file, if any. */
struct safety safety_of(Elf *elf, int fd, const struct debug_file *dbg,
			       const struct function_list *fl)
{
	GElf_Ehdr eh;
	return (struct safety){.elf = elf,
			       .fd = fd,
			       .dwarf_fd = dbg->fd >= 0 ? dbg->fd : fd,
			       .debug_elf = dbg->elf,
			       .fl = fl,
			       .entry = gelf_getehdr(elf, &eh) ? eh.e_entry : 0};
}

/* Why the kernel cannot probe the code at vaddr, in why; false when it can. */
bool line_site_unsafe(struct safety *c, uint64_t vaddr, uint64_t off, char *why,
			     size_t size)
{
	uint64_t insn_at = 0;
	const char *container = NULL;
	if (inside_instruction(c, vaddr, &insn_at, &container)) {
		errbuf_set(why, size, "0x%llx is inside the instruction at 0x%llx%s%s",
			 (unsigned long long)vaddr, (unsigned long long)insn_at,
			 container ? " of " : "", container ? container : "");
		return true;
	}
	uint8_t code[16];
	ssize_t got = pread(c->fd, code, sizeof(code), (off_t)off);
	char what[128];
	if (got > 0 && insn_unprobeable(code, (size_t)got, what, sizeof(what))) {
		errbuf_set(why, size, "0x%llx is %s", (unsigned long long)vaddr, what);
		return true;
	}
	return false;
}

bool safety_function_of(struct safety *c, uint64_t vaddr, uint64_t *start, uint64_t *end,
			const char **name)
{
	for (size_t i = 0; i < c->fl->n; i++) {
		const struct elf_function *g = &c->fl->f[i];
		if (!g->ifunc && g->vaddr <= vaddr && vaddr < g->vaddr + g->size) {
			*start = g->vaddr;
			*end = g->vaddr + g->size;
			*name = function_shown(g);
			return true;
		}
	}
	if (!c->fdes)
		c->fdes = symbols_fdes_read(c->elf, c->debug_elf);
	*end = 0;
	*name = NULL;
	return symbols_fdes_find(c->fdes, vaddr, start);
}

size_t safety_read_code(struct safety *c, uint64_t vaddr, uint64_t end, uint8_t **buf)
{
	*buf = NULL;
	uint64_t off;
	if (end <= vaddr || end - vaddr > (1u << 20) || vaddr_to_offset(c->elf, vaddr, &off))
		return 0;
	size_t len = (size_t)(end - vaddr);
	*buf = xmalloc(len);
	ssize_t got = pread(c->fd, *buf, len, (off_t)off);
	if (got <= 0) {
		free(*buf);
		*buf = NULL;
		return 0;
	}
	return (size_t)got;
}

void safety_end(struct safety *c)
{
	if (c->dw)
		dwarf_end(c->dw);
	symbols_fdes_free(c->fdes);
}
