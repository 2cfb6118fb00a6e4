#include "pytramp.h"

#include <string.h>

#include "sonde_abi.h"

/* CPython's Python/asm_trampoline.S on x86-64 (3.12, 3.13). */
static const uint8_t KNOWN_SHAPE[] = {
	0x48, 0x83, 0xec, 0x08, /* sub $8, %rsp */
	0xff, 0xd1,             /* call *%rcx */
	0x48, 0x83, 0xc4, 0x08, /* add $8, %rsp */
	0xc3,                   /* ret */
};

/* CFA = rsp + off, the caller's rbp this frame's. */
static uint32_t rsp_rule(int off)
{
	return CFI_CFA_RSP | (uint32_t)(off / 8) << 12;
}

bool pytramp_rows(const uint8_t *code, uint32_t n, struct cfi_row *rows, uint32_t *nrows)
{
	if (n != sizeof(KNOWN_SHAPE) || memcmp(code, KNOWN_SHAPE, n) != 0)
		return false;
	rows[0] = (struct cfi_row){0, rsp_rule(8)};   /* entry: the return address at rsp */
	rows[1] = (struct cfi_row){4, rsp_rule(16)};  /* after sub: 8 more */
	rows[2] = (struct cfi_row){10, rsp_rule(8)};  /* after add: at the ret */
	rows[3] = (struct cfi_row){11, CFI_CFA_NONE}; /* padding up to the stride */
	*nrows = PYTRAMP_ROWS;
	return true;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

bool pytramp_arena(const struct perfmap *m, uint64_t start, uint64_t end, uint32_t size,
		   uint32_t default_stride, uint32_t *stride)
{
	size_t n;
	const struct perfmap_sym *s = perfmap_syms(m, &n);
	uint64_t g = 0;
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i].start < start || s[i].start >= end || strncmp(s[i].name, "py::", 4) != 0)
			continue;
		if (s[i].end - s[i].start != size)
			return false; /* not the interpreter's copy */
		/* Copies are handed out in order from the arena's start: the
		 * distances from it are multiples of the stride, the least
		 * common one the stride itself once two neighbours are named. */
		g = gcd(g, s[i].start - start);
		found++;
	}
	if (!found)
		return false;
	uint64_t st = g ? g : default_stride;
	if (found == 1 && g && g != default_stride)
		st = g % default_stride == 0 ? default_stride : 0;
	if (st < size || st > 256)
		return false;
	*stride = (uint32_t)st;
	return true;
}
