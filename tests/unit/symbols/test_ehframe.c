/* ehframe: every FDE of real binaries (a test target, libc) at the offset
 * and [start, end) that `readelf --debug-dump=frames` prints, with its CIE's
 * factors, return column, pointer encoding and 'S'; a hand-built .eh_frame
 * whose every entry is known (a good FDE, one the linker discarded, one
 * naming an FDE as its CIE, a good one after it; and the same cut short);
 * and the LEB128 and pointer readers on known bytes. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ehframe.h"

#define SYMTARGET TARGET_DIR "/symtarget"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ---- readelf as the reference ------------------------------------------ */

struct ref_cie {
	uint64_t off, code_align, ra;
	int64_t data_align;
	char aug[16];
	int enc; /* the 'R' byte when the augmentation is "zR...", else -1 */
};

struct ref_fde {
	uint64_t off, start, end, cie;
};

struct ref {
	struct ref_cie *cies;
	struct ref_fde *fdes;
	size_t ncies, nfdes;
};

static void read_reference(const char *bin, struct ref *r)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s'", bin);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "cannot run readelf");
	*r = (struct ref){0};
	size_t cap_c = 0, cap_f = 0;
	char line[1024];
	bool in_eh = false;
	struct ref_cie *cur = NULL;
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "Contents of the ", 16) == 0) {
			in_eh = strstr(line, ".eh_frame section") != NULL;
			continue;
		}
		if (!in_eh)
			continue;
		uint64_t off, len, id, cie, lo, hi;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " FDE cie=%" SCNx64
				 " pc=%" SCNx64 "..%" SCNx64,
			   &off, &len, &id, &cie, &lo, &hi) == 6) {
			if (r->nfdes == cap_f)
				r->fdes = realloc(r->fdes, (cap_f = cap_f * 2 + 64) * sizeof(*r->fdes));
			r->fdes[r->nfdes++] = (struct ref_fde){off, lo, hi, cie};
			cur = NULL;
		} else if (sscanf(line, "%" SCNx64 " %" SCNx64 " %" SCNx64 " CIE", &off, &len, &id) ==
				   3 &&
			   strstr(line, " CIE")) {
			if (r->ncies == cap_c)
				r->cies = realloc(r->cies, (cap_c = cap_c * 2 + 16) * sizeof(*r->cies));
			cur = &r->cies[r->ncies++];
			*cur = (struct ref_cie){.off = off, .enc = -1};
		} else if (cur) {
			unsigned enc;
			sscanf(line, " Augmentation: \"%15[^\"]\"", cur->aug);
			sscanf(line, " Code alignment factor: %" SCNu64, &cur->code_align);
			sscanf(line, " Data alignment factor: %" SCNd64, &cur->data_align);
			sscanf(line, " Return address column: %" SCNu64, &cur->ra);
			if (strncmp(cur->aug, "zR", 2) == 0 &&
			    sscanf(line, " Augmentation data: %x", &enc) == 1)
				cur->enc = (int)enc;
		}
	}
	pclose(p);
	cr_assert_gt(r->nfdes, 0, "readelf printed no FDE of %s", bin);
}

static const struct ref_cie *ref_cie_at(const struct ref *r, uint64_t off)
{
	for (size_t i = 0; i < r->ncies; i++)
		if (r->cies[i].off == off)
			return &r->cies[i];
	return NULL;
}

struct walk {
	const struct ref *r;
	const char *bin;
	size_t next; /* the reference FDE expected next */
};

static bool check_fde(const struct ehframe_fde *fde, void *arg)
{
	struct walk *w = arg;
	/* readelf prints the FDEs ehframe skips (empty or start 0): pass them */
	while (w->next < w->r->nfdes &&
	       (w->r->fdes[w->next].start == 0 ||
		w->r->fdes[w->next].end == w->r->fdes[w->next].start))
		w->next++;
	cr_assert_lt(w->next, w->r->nfdes, "%s: an FDE readelf does not print at 0x%" PRIx64, w->bin,
		     fde->offset);
	const struct ref_fde *want = &w->r->fdes[w->next++];
	cr_assert_eq(fde->offset, want->off, "%s: FDE at 0x%" PRIx64 ", readelf's at 0x%" PRIx64,
		     w->bin, fde->offset, want->off);
	cr_assert(fde->start == want->start && fde->end == want->end,
		  "%s: FDE 0x%" PRIx64 " covers 0x%" PRIx64 "..0x%" PRIx64 ", readelf 0x%" PRIx64
		  "..0x%" PRIx64,
		  w->bin, fde->offset, fde->start, fde->end, want->start, want->end);
	const struct ref_cie *c = ref_cie_at(w->r, want->cie);
	cr_assert_not_null(c, "%s: readelf printed no CIE 0x%" PRIx64, w->bin, want->cie);
	cr_assert_eq(fde->cie->code_align, c->code_align);
	cr_assert_eq(fde->cie->data_align, c->data_align);
	cr_assert_eq(fde->cie->ra_reg, c->ra);
	cr_assert_eq(fde->cie->signal_frame, strchr(c->aug, 'S') != NULL, "%s: CIE 0x%" PRIx64 " \"%s\"",
		     w->bin, c->off, c->aug);
	if (c->enc >= 0)
		cr_assert_eq(fde->cie->fde_encoding, c->enc);
	cr_assert(fde->insns <= fde->insns_end);
	return true;
}

static void check_binary(const char *bin, size_t at_least, bool want_signal)
{
	struct ref r;
	read_reference(bin, &r);
	elf_version(EV_CURRENT);
	int fd = open(bin, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "open %s", bin);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct ehframe_section sec;
	cr_assert(ehframe_section_find(elf, true, &sec), "%s: no .eh_frame", bin);
	cr_assert(sec.eh_frame && !sec.big_endian && sec.addr_size == 8);
	struct walk w = {&r, bin, 0};
	struct ehframe_counts counts = {0};
	ehframe_each_fde(&sec, check_fde, &w, &counts);
	size_t usable = 0, signal = 0;
	for (size_t i = 0; i < r.nfdes; i++)
		usable += r.fdes[i].start != 0 && r.fdes[i].end > r.fdes[i].start;
	for (size_t i = 0; i < r.ncies; i++)
		signal += strchr(r.cies[i].aug, 'S') != NULL;
	cr_expect_eq(counts.fdes, usable, "%s: %" PRIu64 " FDEs, readelf %zu", bin, counts.fdes,
		     usable);
	cr_expect_eq(counts.bad, 0);
	cr_expect_geq(usable, at_least, "%s: only %zu FDEs", bin, usable);
	if (want_signal)
		cr_expect_gt(signal, 0, "%s: no 'S' CIE to check", bin);
	elf_end(elf);
	close(fd);
	free(r.cies);
	free(r.fdes);
}

/* A test target's FDEs, one by one, are readelf's. */
Test(ehframe, target_as_readelf)
{
	check_binary(SYMTARGET, 5, false);
}

/* libc's thousands of FDEs too, among them the signal trampoline's
 * ("zRS"), and CIEs with personality data ("zPLR"). */
Test(ehframe, libc_as_readelf)
{
	if (access(LIBC, R_OK) != 0)
		cr_skip_test("no " LIBC);
	check_binary(LIBC, 1000, true);
}

/* ---- a hand-built .eh_frame --------------------------------------------- */

#define SEC_ADDR 0x1000

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4); /* little endian: the host, x86-64 */
}

/* The section, every offset known:
 *   0  CIE "zR", code 1, data -8, RA 16, FDE pointers pcrel|sdata4
 *  24  FDE 0x4000..0x4040 (insns: advance_loc 1, def_cfa_offset 16, nop)
 *  44  FDE whose start is 0 (discarded by the linker): skipped
 *  64  FDE whose CIE pointer names the FDE at 24: bad
 *  84  FDE 0x5000..0x5020
 * 104  zero terminator */
static size_t build_section(uint8_t *b)
{
	memset(b, 0, 128);
	static const uint8_t cie[24] = {
		20, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
		0x0c, 7, 8, 0x90, 1, 0, 0,
	};
	memcpy(b, cie, sizeof(cie));
	struct {
		uint32_t off, cie_off, len;
		uint64_t start;
	} fdes[] = {{24, 0, 0x40, 0x4000}, {44, 0, 0x10, 0}, {64, 24, 0x10, 0x4800},
		    {84, 0, 0x20, 0x5000}};
	for (size_t i = 0; i < 4; i++) {
		uint8_t *f = b + fdes[i].off;
		put32(f, 16);
		put32(f + 4, fdes[i].off + 4 - fdes[i].cie_off);
		put32(f + 8, (uint32_t)(fdes[i].start - (SEC_ADDR + fdes[i].off + 8)));
		put32(f + 12, fdes[i].len);
		f[16] = 0;  /* augmentation data length */
		f[17] = 0x41; /* DW_CFA_advance_loc 1 */
		f[18] = 0x0e; /* DW_CFA_def_cfa_offset 16 */
		f[19] = 16;
	}
	return 108;
}

struct seen {
	struct ehframe_fde f[8];
	struct ehframe_cie c[8];
	size_t n, stop_after;
};

static bool keep(const struct ehframe_fde *fde, void *arg)
{
	struct seen *s = arg;
	cr_assert_lt(s->n, 8);
	s->c[s->n] = *fde->cie;
	s->f[s->n++] = *fde;
	return s->n != s->stop_after;
}

static struct ehframe_section section_of(const uint8_t *b, size_t size)
{
	return (struct ehframe_section){.data = b, .size = size, .addr = SEC_ADDR, .eh_frame = true,
					.addr_size = 8};
}

/* Each entry as built: two FDEs with their ranges, offsets, CIE and
 * instructions; the discarded one skipped, the one with a bad CIE counted
 * bad, and the walk going on past it. */
Test(ehframe, hand_built_section)
{
	uint8_t b[128];
	struct ehframe_section sec = section_of(b, build_section(b));
	struct seen s = {0};
	struct ehframe_counts counts = {0};
	ehframe_each_fde(&sec, keep, &s, &counts);
	cr_assert_eq(s.n, 2);
	cr_expect_eq(counts.fdes, 2);
	cr_expect_eq(counts.skipped, 1);
	cr_expect_eq(counts.bad, 1);
	cr_expect_eq(s.f[0].offset, 24);
	cr_expect_eq(s.f[0].start, 0x4000);
	cr_expect_eq(s.f[0].end, 0x4040);
	cr_expect_eq(s.f[0].insns, b + 24 + 17, "insns after the augmentation data");
	cr_expect_eq(s.f[0].insns_end, b + 24 + 20);
	cr_expect_eq(s.f[1].offset, 84);
	cr_expect_eq(s.f[1].start, 0x5000);
	cr_expect_eq(s.f[1].end, 0x5020);
	cr_expect_eq(s.c[0].code_align, 1);
	cr_expect_eq(s.c[0].data_align, -8);
	cr_expect_eq(s.c[0].ra_reg, 16);
	cr_expect_eq(s.c[0].fde_encoding, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	cr_expect(s.c[0].has_z && !s.c[0].signal_frame);
	cr_expect_eq(s.c[0].insns, b + 17, "the CIE's instructions follow its augmentation");
	cr_expect_eq(s.c[0].insns_end, b + 24);
	/* counts add up over walks */
	ehframe_each_fde(&sec, keep, &(struct seen){0}, &counts);
	cr_expect_eq(counts.fdes, 4);
}

/* The callback's false ends the walk: one FDE handed over, no more read. */
Test(ehframe, callback_stops_the_walk)
{
	uint8_t b[128];
	struct ehframe_section sec = section_of(b, build_section(b));
	struct seen s = {.stop_after = 1};
	struct ehframe_counts counts = {0};
	ehframe_each_fde(&sec, keep, &s, &counts);
	cr_expect_eq(s.n, 1);
	cr_expect_eq(counts.fdes, 1);
	cr_expect_eq(counts.skipped + counts.bad, 0);
}

/* A section cut inside its last FDE: the entries before it as whole, the
 * cut one counted bad and not handed over. */
Test(ehframe, section_cut_short)
{
	uint8_t b[128];
	build_section(b);
	struct ehframe_section sec = section_of(b, 84 + 10);
	struct seen s = {0};
	struct ehframe_counts counts = {0};
	ehframe_each_fde(&sec, keep, &s, &counts);
	cr_assert_eq(s.n, 1);
	cr_expect_eq(s.f[0].start, 0x4000);
	cr_expect_eq(counts.skipped, 1);
	cr_expect_eq(counts.bad, 2, "bad: %" PRIu64, counts.bad);
}

/* ---- the readers -------------------------------------------------------- */

/* LEB128 on the DWARF standard's own examples; a number running past the
 * end or over 64 bits is refused without moving. */
Test(ehframe, leb128)
{
	const uint8_t u[] = {0xe5, 0x8e, 0x26}, s[] = {0xc0, 0xbb, 0x78}, m1[] = {0x7f};
	const uint8_t *p = u;
	uint64_t v;
	int64_t sv;
	cr_assert(ehframe_read_uleb(&p, u + 3, &v));
	cr_expect_eq(v, 624485);
	cr_expect_eq(p, u + 3);
	p = s;
	cr_assert(ehframe_read_sleb(&p, s + 3, &sv));
	cr_expect_eq(sv, -123456);
	p = m1;
	cr_assert(ehframe_read_sleb(&p, m1 + 1, &sv));
	cr_expect_eq(sv, -1);
	p = u;
	cr_expect_not(ehframe_read_uleb(&p, u + 2, &v), "ran past the end");
	cr_expect_eq(p, u);
	uint8_t big[11];
	memset(big, 0x80, sizeof(big));
	big[10] = 0x01;
	p = big;
	cr_expect_not(ehframe_read_uleb(&p, big + 11, &v), "over 64 bits");
}

/* Pointers: pc-relative sdata4 from the field's own address, absolute
 * udata2 and 8-byte absptr, and the encodings FDEs never use refused. */
Test(ehframe, pointers)
{
	uint8_t b[16] = {0};
	struct ehframe_section sec = section_of(b, sizeof(b));
	put32(b + 4, (uint32_t)-0x20);
	const uint8_t *p = b + 4;
	uint64_t v;
	cr_assert(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_pcrel | DW_EH_PE_sdata4, &v));
	cr_expect_eq(v, SEC_ADDR + 4 - 0x20);
	cr_expect_eq(p, b + 8);
	b[0] = 0x34;
	b[1] = 0x12;
	p = b;
	cr_assert(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_udata2, &v));
	cr_expect_eq(v, 0x1234);
	uint64_t abs = 0x7f0011223344;
	memcpy(b + 8, &abs, 8);
	p = b + 8;
	cr_assert(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_absptr, &v));
	cr_expect_eq(v, abs);
	p = b + 12;
	cr_expect_not(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_udata8, &v), "past the end");
	p = b;
	cr_expect_not(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_datarel | DW_EH_PE_sdata4, &v));
	cr_expect_not(ehframe_read_pointer(&sec, &p, b + 16, DW_EH_PE_omit, &v));
	cr_expect_eq(p, b);
}
