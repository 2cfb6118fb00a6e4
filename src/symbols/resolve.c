/* resolve — an address in a binary to frames, as addr2line names them.
 * See resolve.h for the contract. */
#include "resolve.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuindex.h"
#include "demangle.h"
#include "elfsyms.h"
#include "fderanges.h"

/* The ELF symbol naming the function at pc where DWARF names none, or NULL
 * (then *fde, when set, is the unnamed function's extent). A symbol covers
 * [value, value + size) and nothing past it: beyond, the function is the
 * one whose FDE holds pc, named by the symbol starting where the FDE
 * starts, if any. A sizeless symbol (assembly) reaches as far as the next
 * symbol, as in addr2line, unless an FDE holding pc begins after it. */
static const struct elf_sym *binary_function_symbol(struct binary *b, uint64_t pc,
						    const struct fde_range **fde)
{
	*fde = NULL;
	const struct elf_sym *best = binary_symbol_at(b, pc);
	if (best && elf_sym_covers(best, pc))
		return best;
	for (int32_t i = best ? best->enclosing : -1; i >= 0; i = b->symtab.syms[i].enclosing)
		if (elf_sym_covers(&b->symtab.syms[i], pc))
			return &b->symtab.syms[i];
	*fde = binary_fde_at(b, pc);
	if (!*fde)
		return best && best->sizeless ? best : NULL;
	if (best && best->sizeless && best->value >= (*fde)->start)
		return best;
	const struct elf_sym *at = binary_symbol_at(b, (*fde)->start);
	return at && at->value == (*fde)->start ? at : NULL;
}

/* The name addr2line gives a DWARF function: the linkage name if any, else
 * DW_AT_name; where DW_AT_name is not a symbol name (C++) or is missing,
 * the ELF symbol starting at the function's entry. */
static const char *dwarf_function_name(const struct binary *b, const struct dwarf_answer *ans,
				       int32_t f)
{
	const char *name = cu_index_linkage_name(ans->cu, f);
	if (name)
		return name;
	name = cu_index_name(ans->cu, f);
	if (name && cu_index_name_is_symbol(ans->cu))
		return name;
	uint64_t entry = cu_index_entry_pc(ans->cu, f) + ans->bias;
	const struct elf_sym *sym = binary_symbol_at(b, entry);
	if (sym && sym->value == entry)
		return sym->name;
	return name;
}

const char *unknown_frame_name(struct strpool *strings, const char *base, uint64_t off)
{
	char buf[PATH_MAX + 40];
	snprintf(buf, sizeof(buf), "[%s+0x%" PRIx64 "]", base, off);
	return strpool_intern(strings, buf);
}

/* "[module+0xoffset]" names the file offset, the same for every process. */
static const char *binary_unknown_name(struct frame_namer *nm, const struct binary *b,
				       uint64_t vaddr)
{
	return unknown_frame_name(nm->strings, b->label, binary_vaddr_to_offset(b, vaddr));
}

/* Names a frame from a linkage name: demangled when it is a C++ or Rust
 * one (once per name), the linkage name kept as its system name. */
static void frame_name(struct frame_namer *nm, struct sym_frame *f, const char *linkage)
{
	const char *raw = strpool_intern(nm->strings, linkage);
	uint64_t known;
	const char *shown;
	if (hashmap_get(&nm->demangled, (uint64_t)(uintptr_t)raw, &known)) {
		shown = (const char *)(uintptr_t)known;
	} else {
		char *d = demangle_short(raw);
		shown = d ? strpool_intern(nm->strings, d) : raw;
		free(d);
		*hashmap_put(&nm->demangled, (uint64_t)(uintptr_t)raw, NULL) = (uint64_t)(uintptr_t)shown;
	}
	f->name = shown;
	f->system_name = shown != raw ? raw : NULL;
}

/* Innermost first: the inlined functions' chain from the DIE nesting, each
 * caller at the call site of the function it inlined. */
static int frames_from_dwarf(struct frame_namer *nm, struct binary *b, uint64_t vaddr,
			     const struct dwarf_answer *ans, struct sym_frame *out)
{
	struct cu_index *cu = ans->cu;
	int32_t f = ans->func;
	int n = 0;
	out[n++] = (struct sym_frame){
		.file = ans->has_line ? cu_index_path(cu, nm->strings, ans->file) : "",
		.line = ans->line,
		.discriminator = ans->discriminator,
	};
	for (;;) {
		const char *name = dwarf_function_name(b, ans, f);
		if (name)
			frame_name(nm, &out[n - 1], name);
		else
			out[n - 1].name = binary_unknown_name(nm, b, vaddr);
		out[n - 1].module = b->path;
		out[n - 1].kind = FRAME_INLINED;
		/* Not inlined: the caller is -1. */
		int32_t caller = cu_index_inlined_into(cu, f);
		if (caller < 0 || n == RESOLVE_MAX_CHAIN)
			break;
		out[n++] = (struct sym_frame){
			.file = cu_index_path(cu, nm->strings, cu_index_call_file(cu, f)),
			.line = cu_index_call_line(cu, f),
		};
		f = caller;
	}
	out[n - 1].kind = FRAME_USER;
	return n;
}

static int frame_from_symbol(struct frame_namer *nm, struct binary *b, const struct elf_sym *sym,
			     const struct dwarf_answer *ans, struct sym_frame *out)
{
	*out = (struct sym_frame){
		.module = b->path,
		.file = ans->has_line ? cu_index_path(ans->cu, nm->strings, ans->file)
				      : strpool_intern(nm->strings, sym->file),
		.line = ans->has_line ? ans->line : 0,
		.discriminator = ans->discriminator,
		.kind = FRAME_USER,
	};
	frame_name(nm, out, sym->name);
	return 1;
}

/* Resolves without the cache; always at least one frame. */
int binary_resolve(struct frame_namer *nm, struct binary *b, uint64_t vaddr, bool is_return,
			  struct sym_frame *out)
{
	uint64_t pc = is_return ? vaddr - 1 : vaddr;
	struct dwarf_answer ans = { .func = -1 };
	const struct fde_range *fde = NULL;
	if (b->valid && binary_section_at(b, pc)) {
		dwarf_index_lookup(&b->dw, pc, &ans);
		if (ans.func >= 0)
			return frames_from_dwarf(nm, b, vaddr, &ans, out);
		const struct elf_sym *sym = binary_function_symbol(b, pc, &fde);
		if (sym)
			return frame_from_symbol(nm, b, sym, &ans, out);
	}
	/* An unnamed function is one frame, named by its start; an address in
	 * no function at all by itself. */
	*out = (struct sym_frame){
		.name = binary_unknown_name(nm, b, fde ? fde->start : vaddr),
		.module = b->path,
		.file = ans.has_line ? cu_index_path(ans.cu, nm->strings, ans.file) : "",
		.line = ans.line,
		.discriminator = ans.discriminator,
		.kind = FRAME_UNKNOWN,
		.unnamed_function = fde != NULL,
	};
	return 1;
}
