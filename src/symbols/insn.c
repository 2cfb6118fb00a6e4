#include "insn.h"

#include <capstone/capstone.h>

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
