#include "insn.h"

#include <capstone/capstone.h>
#include <stdio.h>

enum insn_reach insn_reaches(const uint8_t *code, size_t size, uint64_t start, uint64_t addr,
			     uint64_t *inside_of)
{
#if defined(__x86_64__)
	if (addr == start)
		return INSN_REACHED;
	if (addr < start || addr - start >= size)
		return INSN_UNDECODED;
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return INSN_UNDECODED;
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t at = start;
	enum insn_reach r = INSN_UNDECODED;
	while (insn && at < addr && cs_disasm_iter(cs, &p, &left, &at, insn)) {
		if (at > addr) {
			*inside_of = insn->address;
			r = INSN_INSIDE;
			break;
		}
		if (at == addr)
			r = INSN_REACHED;
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return r;
#else
	(void)code, (void)size, (void)start, (void)inside_of;
	return addr == start ? INSN_REACHED : INSN_UNDECODED;
#endif
}

int insn_unprobeable(const uint8_t *code, size_t size, char *why, size_t whylen)
{
#if defined(__x86_64__)
	size_t i = 0;
	for (; i < size && i < 15; i++) {
		uint8_t b = code[i];
		if (b == 0xf0) {
			snprintf(why, whylen, "a lock-prefixed instruction, which uprobes refuse");
			return 1;
		}
		if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e) {
			snprintf(why, whylen, "an instruction with a segment prefix (0x%02x), which "
				 "uprobes refuse", b);
			return 1;
		}
		if (b != 0xf2 && b != 0xf3 && b != 0x64 && b != 0x65 && b != 0x66 && b != 0x67)
			break;
	}
	if (i < size && (code[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (i >= size)
		return 0;
	static const struct {
		uint8_t op;
		const char *name;
	} bad[] = {{0xcc, "int3"}, {0xcd, "int"}, {0xce, "into"}, {0xcf, "iret"},
		   {0xf1, "int1"}, {0xf4, "hlt"}, {0xe4, "in"},   {0xe5, "in"},
		   {0xe6, "out"},  {0xe7, "out"}, {0xec, "in"},   {0xed, "in"},
		   {0xee, "out"},  {0xef, "out"}, {0xfa, "cli"},  {0xfb, "sti"}};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++)
		if (code[i] == bad[k].op) {
			snprintf(why, whylen, "a%s %s instruction, which uprobes cannot probe",
				 bad[k].name[0] == 'i' ? "n" : "", bad[k].name);
			return 1;
		}
#else
	(void)code, (void)size, (void)why, (void)whylen;
#endif
	return 0;
}
