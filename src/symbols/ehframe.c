/* ehframe — the entries of a CFI section. See ehframe.h for the contract. */
#include "ehframe.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "util.h"

bool ehframe_section_find(Elf *elf, bool eh_frame, struct ehframe_section *out)
{
	const char *want = eh_frame ? ".eh_frame" : ".debug_frame";
	size_t shstrndx;
	const unsigned char *ident = elf ? (const unsigned char *)elf_getident(elf, NULL) : NULL;
	if (!ident || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		const char *name = gelf_getshdr(scn, &shdr) ? elf_strptr(elf, shstrndx, shdr.sh_name)
							   : NULL;
		if (!name || strcmp(name, want) != 0)
			continue;
		Elf_Data *data = shdr.sh_type == SHT_NOBITS ? NULL : elf_rawdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size == 0)
			return false;
		*out = (struct ehframe_section){
			.data = data->d_buf, .size = data->d_size, .addr = shdr.sh_addr,
			.eh_frame = eh_frame, .big_endian = ident[EI_DATA] == ELFDATA2MSB,
			.addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4,
		};
		return true;
	}
	return false;
}

bool ehframe_read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;
	uint8_t byte;
	do {
		if (p >= end || shift >= 64)
			return false;
		byte = *p++;
		v |= (uint64_t)(byte & 0x7f) << shift;
		shift += 7;
	} while (byte & 0x80);
	*pp = p;
	*out = v;
	return true;
}

bool ehframe_read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
	const uint8_t *start = *pp;
	uint64_t v;
	if (!ehframe_read_uleb(pp, end, &v))
		return false;
	unsigned bits = 7 * (unsigned)(*pp - start);
	if (bits < 64 && (v >> (bits - 1)) & 1)
		v |= ~(uint64_t)0 << bits;
	*out = (int64_t)v;
	return true;
}

/* An unsigned value of `size` bytes in the section's byte order. */
static uint64_t read_unsigned(const uint8_t *p, size_t size, bool big_endian)
{
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

bool ehframe_read_pointer(const struct ehframe_section *sec, const uint8_t **pp,
			  const uint8_t *end, uint8_t enc, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t field = sec->addr + (uint64_t)(p - sec->data);
	size_t size = 0;
	bool is_signed = false;
	uint64_t v = 0;
	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect) || p > end)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: size = sec->addr_size; break;
	case DW_EH_PE_udata2: size = 2; break;
	case DW_EH_PE_udata4: size = 4; break;
	case DW_EH_PE_udata8: size = 8; break;
	case DW_EH_PE_sdata2: size = 2; is_signed = true; break;
	case DW_EH_PE_sdata4: size = 4; is_signed = true; break;
	case DW_EH_PE_sdata8: size = 8; is_signed = true; break;
	case DW_EH_PE_uleb128:
		if (!ehframe_read_uleb(&p, end, &v))
			return false;
		break;
	case DW_EH_PE_sleb128: {
		int64_t s;
		if (!ehframe_read_sleb(&p, end, &s))
			return false;
		v = (uint64_t)s;
		break;
	}
	default:
		return false;
	}
	if (size) {
		if ((size_t)(end - p) < size)
			return false;
		v = read_unsigned(p, size, sec->big_endian);
		if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
			v |= ~(uint64_t)0 << (8 * size);
		p += size;
	}
	switch (enc & 0x70) {
	case DW_EH_PE_absptr: break;
	case DW_EH_PE_pcrel: v += field; break;
	default: return false; /* text-, data- and function-relative: not for FDEs */
	}
	*pp = p;
	*out = v;
	return true;
}

/* Reads what the FDEs need from a CIE's augmentation. .debug_frame CIEs
 * have none (absolute addresses). False when the CIE cannot be used. */
static bool cie_read_augmentation(const struct ehframe_section *sec, const Dwarf_CIE *cie,
				  struct ehframe_cie *out)
{
	const char *aug = cie->augmentation;
	out->fde_encoding = DW_EH_PE_absptr;
	if (!aug || aug[0] == '\0')
		return true;
	if (!sec->eh_frame || aug[0] != 'z' || !cie->augmentation_data)
		return false;
	out->has_z = true;
	bool seen_r = false;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	for (const char *c = aug + 1; *c; c++) {
		switch (*c) {
		case 'R':
		case 'L':
			if (p >= end)
				return false;
			if (*c == 'R') {
				out->fde_encoding = *p;
				seen_r = true;
			}
			p++;
			break;
		case 'P': {
			if (p >= end)
				return false;
			uint8_t penc = *p++;
			uint64_t ignored;
			/* The personality routine is often an indirect pointer:
			 * read it as a direct one, only to step over it. */
			if (!ehframe_read_pointer(sec, &p, end, penc & 0x7f, &ignored))
				return false;
			break;
		}
		case 'S':
			out->signal_frame = true;
			break;
		case 'B':
		case 'G':
			break;
		default:
			/* Data of an unknown letter cannot be stepped over: what
			 * came before it holds if it gave the encoding ('z'
			 * sizes the FDEs' own data). */
			return seen_r;
		}
	}
	return true;
}

struct cie_cache {
	struct hashmap index; /* section offset -> slot in `cies` */
	struct ehframe_cie *cies;
	bool *valid;
	size_t n, cap, valid_cap;
};

/* The CIE at section offset `off`, read once; NULL when unusable. */
static const struct ehframe_cie *cie_at(const struct ehframe_section *sec, Elf_Data *data,
					const unsigned char *ident, struct cie_cache *cc,
					uint64_t off)
{
	uint64_t slot;
	if (hashmap_get(&cc->index, off, &slot))
		return cc->valid[slot] ? &cc->cies[slot] : NULL;
	Dwarf_Off next;
	Dwarf_CFI_Entry e;
	struct ehframe_cie cie = { 0 };
	bool ok = off < sec->size &&
		  dwarf_next_cfi(ident, data, sec->eh_frame, off, &next, &e) == 0 &&
		  dwarf_cfi_cie_p(&e) && cie_read_augmentation(sec, &e.cie, &cie) &&
		  e.cie.initial_instructions <= e.cie.initial_instructions_end &&
		  e.cie.initial_instructions >= sec->data &&
		  e.cie.initial_instructions_end <= sec->data + sec->size;
	if (ok) {
		cie.code_align = e.cie.code_alignment_factor;
		cie.data_align = e.cie.data_alignment_factor;
		cie.ra_reg = e.cie.return_address_register;
		cie.insns = e.cie.initial_instructions;
		cie.insns_end = e.cie.initial_instructions_end;
	}
	grow_array((void **)&cc->cies, &cc->cap, cc->n + 1, sizeof(*cc->cies));
	grow_array((void **)&cc->valid, &cc->valid_cap, cc->n + 1, sizeof(*cc->valid));
	cc->cies[cc->n] = cie;
	cc->valid[cc->n] = ok;
	hashmap_set(&cc->index, off, cc->n);
	cc->n++;
	return ok ? &cc->cies[cc->n - 1] : NULL;
}

void ehframe_each_fde(const struct ehframe_section *sec,
		      bool (*fn)(const struct ehframe_fde *fde, void *arg), void *arg,
		      struct ehframe_counts *counts)
{
	struct ehframe_counts local = { 0 };
	if (!counts)
		counts = &local;
	/* What dwarf_next_cfi wants: the ELF identification (class and byte
	 * order) and the section as Elf_Data. */
	unsigned char ident[EI_NIDENT] = { 0 };
	ident[EI_CLASS] = sec->addr_size == 8 ? ELFCLASS64 : ELFCLASS32;
	ident[EI_DATA] = sec->big_endian ? ELFDATA2MSB : ELFDATA2LSB;
	Elf_Data data = { .d_buf = (void *)sec->data, .d_size = sec->size, .d_type = ELF_T_BYTE };
	struct cie_cache cc = { 0 };
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	while (off < sec->size) {
		Dwarf_Off entry = off;
		next = (Dwarf_Off)-1;
		int rc = dwarf_next_cfi(ident, &data, sec->eh_frame, off, &next, &e);
		if (rc > 0)
			break;
		if (rc < 0 && (next == (Dwarf_Off)-1 || next <= off)) {
			counts->bad++;
			break;
		}
		off = next;
		if (rc < 0) {
			counts->bad++;
			continue;
		}
		if (dwarf_cfi_cie_p(&e))
			continue;
		const struct ehframe_cie *cie = cie_at(sec, &data, ident, &cc, e.fde.CIE_pointer);
		const uint8_t *p = e.fde.start, *end = e.fde.end;
		uint64_t start, len, aug_len = 0;
		if (!cie || p < sec->data || end > sec->data + sec->size || p > end ||
		    !ehframe_read_pointer(sec, &p, end, cie->fde_encoding, &start) ||
		    !ehframe_read_pointer(sec, &p, end, cie->fde_encoding & 0x0f, &len) ||
		    (cie->has_z && !ehframe_read_uleb(&p, end, &aug_len)) ||
		    aug_len > (uint64_t)(end - p)) {
			counts->bad++;
			continue;
		}
		/* A zero start is a function the linker dropped. */
		if (start == 0 || len == 0 || start + len < start) {
			counts->skipped++;
			continue;
		}
		struct ehframe_fde fde = {
			.start = start, .end = start + len, .insns = p + aug_len, .insns_end = end,
			.cie = cie, .offset = entry,
		};
		counts->fdes++;
		if (!fn(&fde, arg))
			break;
	}
	hashmap_free(&cc.index);
	free(cc.cies);
	free(cc.valid);
}
