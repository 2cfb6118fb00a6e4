/* ehframe — reads the entries of a call frame information section
 * (.eh_frame, or DWARF's .debug_frame): every FDE with its address range,
 * its CIE's parameters and both instruction streams, undecoded.
 *
 * Two users: the symbolizer wants where functions begin and end (every
 * function the compiler emitted has an FDE), the unwind-table builder (cfi)
 * wants the CFA programs. Entries are split by libdw (dwarf_next_cfi); the
 * pointer encodings and augmentations are read here, because libdw only
 * reads them inside its per-address queries.
 *
 * Nothing here trusts the bytes: an entry that cannot be read is skipped
 * and counted, every read is bounded by its entry, and the walk ends at the
 * section's end or at the first entry whose length cannot be followed. */
#ifndef SONDE_EHFRAME_H
#define SONDE_EHFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct Elf Elf;

/* A CFI section's bytes and where they are loaded. */
struct ehframe_section {
	const uint8_t *data;
	size_t size;
	uint64_t addr;  /* sh_addr: pc-relative pointers are relative to it */
	bool eh_frame;  /* .eh_frame (GNU pointer encodings) or .debug_frame */
	bool big_endian;
	uint8_t addr_size; /* 4 or 8 */
};

/* Finds ".eh_frame" (eh_frame) or ".debug_frame" in elf. Returns false when
 * the section is absent, empty or has no bytes in this file (NOBITS, as in
 * a separate debug file). */
bool ehframe_section_find(Elf *elf, bool eh_frame, struct ehframe_section *out);

/* What a CIE says about the FDEs that use it. */
struct ehframe_cie {
	uint64_t code_align;  /* code alignment factor */
	int64_t data_align;   /* data alignment factor */
	uint64_t ra_reg;      /* the return address column */
	const uint8_t *insns, *insns_end; /* initial instructions */
	uint8_t fde_encoding; /* DW_EH_PE_* of the FDEs' addresses ('R') */
	bool has_z;           /* 'z': FDEs carry sized augmentation data */
	bool signal_frame;    /* 'S': the FDEs describe signal trampolines */
};

/* One FDE. Pointers point into the section's bytes; `cie` is valid during
 * the callback only. */
struct ehframe_fde {
	uint64_t start, end; /* [start, end), ELF virtual addresses, start > 0 */
	const uint8_t *insns, *insns_end;
	const struct ehframe_cie *cie;
	uint64_t offset;     /* section offset of the FDE */
};

struct ehframe_counts {
	uint64_t fdes;    /* FDEs handed to the callback */
	uint64_t skipped; /* FDEs dropped: start 0 (discarded by the linker) or empty */
	uint64_t bad;     /* entries that could not be read (bad CIE, pointer, bounds) */
};

/* Calls fn for every readable FDE of the section, in section order, until fn
 * returns false. counts (may be NULL) is added to. */
void ehframe_each_fde(const struct ehframe_section *sec,
		      bool (*fn)(const struct ehframe_fde *fde, void *arg), void *arg,
		      struct ehframe_counts *counts);

/* Reads a pointer encoded as DW_EH_PE `enc` at *pp (not past end) and
 * advances past it: absolute and pc-relative values only (what FDE
 * addresses and DW_CFA_set_loc use). False when it cannot. */
bool ehframe_read_pointer(const struct ehframe_section *sec, const uint8_t **pp,
			  const uint8_t *end, uint8_t enc, uint64_t *out);

/* LEB128 readers: false when the number runs past end or over 64 bits. */
bool ehframe_read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out);
bool ehframe_read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out);

#endif
