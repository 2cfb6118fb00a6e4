#include "insn.h"

#include <capstone/capstone.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "errbuf.h"

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

/* --- what the kernel's uprobes take (arch/x86/kernel/uprobes.c) ---------- */

#if defined(__x86_64__)
/* One-byte opcodes the kernel's table of good 64-bit instructions leaves
 * out: invalid in 64-bit mode (push/pop of segment registers, daa..aas,
 * pusha/popa, bound, 0x82, far call/jmp, aam/aad/salc, into), and those
 * that trap or fault in user space (ins/outs, in/out, int3, int n, iret,
 * int1, hlt, cli/sti). 0x62, 0xc4 and 0xc5 are the EVEX and VEX prefixes
 * in 64-bit mode, looked at before. */
static bool opcode_refused(uint8_t op)
{
	static const uint8_t refused[] = {0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f,
					  0x37, 0x3f, 0x60, 0x61, 0x62, 0x6c, 0x6d, 0x6e, 0x6f,
					  0x82, 0x9a, 0xc4, 0xc5, 0xcc, 0xcd, 0xce, 0xcf, 0xd4,
					  0xd5, 0xd6, 0xe4, 0xe5, 0xe6, 0xe7, 0xea, 0xec, 0xed,
					  0xee, 0xef, 0xf1, 0xf4, 0xfa, 0xfb};
	for (size_t i = 0; i < sizeof(refused); i++)
		if (refused[i] == op)
			return true;
	return false;
}

/* The vector encoding of the instruction at code ("AVX, VEX-encoded"), or
 * NULL for a legacy one. In 64-bit mode 0xc4/0xc5 always start a VEX
 * prefix and 0x62 an EVEX one; 0x8f an XOP one when its map is 8 or more
 * (else it is pop). */
static const char *vector_encoding(const uint8_t *code, size_t len)
{
	size_t i = 0;
	while (i < len && i < 15 &&
	       (code[i] == 0x66 || code[i] == 0x67 || code[i] == 0xf2 || code[i] == 0xf3 ||
		code[i] == 0xf0 || code[i] == 0x26 || code[i] == 0x2e || code[i] == 0x36 ||
		code[i] == 0x3e || code[i] == 0x64 || code[i] == 0x65))
		i++;
	if (i >= len)
		return NULL;
	if (code[i] == 0x62)
		return "AVX-512, EVEX-encoded";
	if (code[i] == 0xc4 || code[i] == 0xc5)
		return "AVX, VEX-encoded";
	if (code[i] == 0x8f && i + 1 < len && (code[i + 1] & 0x1f) >= 8)
		return "XOP-encoded";
	return NULL;
}

/* The first instruction of code, decoded: its text ("vmovd %esi, %xmm0")
 * in text and its length; 0 when it does not decode. */
static size_t decode_one(const uint8_t *code, size_t size, char *text, size_t textlen)
{
	csh cs;
	size_t len = 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return 0;
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT); /* as objdump and perf print it */
	cs_insn *insn = NULL;
	if (cs_disasm(cs, code, size, 0, 1, &insn) == 1) {
		len = insn->size;
		snprintf(text, textlen, "%s%s%s", insn->mnemonic, insn->op_str[0] ? " " : "",
			 insn->op_str);
		cs_free(insn, 1);
	}
	cs_close(&cs);
	return len;
}
#endif

int insn_unprobeable(const uint8_t *code, size_t size, char *why, size_t whylen)
{
#if defined(__x86_64__)
	char text[256]; /* mnemonic[32] and op_str[160] */
	size_t len = decode_one(code, size, text, sizeof(text));
	if (len == 0) {
		errbuf_set(why, whylen, "bytes that do not decode as an instruction (0x%02x...)",
			 size ? code[0] : 0);
		return 1;
	}
	size_t i = 0;
	bool opsize = false;
	for (; i < len && i < 15; i++) {
		uint8_t b = code[i];
		if (b == 0xf0) {
			errbuf_set(why, whylen, "a lock-prefixed instruction (%s), which uprobes refuse",
				 text);
			return 1;
		}
		if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e) {
			errbuf_set(why, whylen, "an instruction with a segment prefix (0x%02x), which "
				 "uprobes refuse", b);
			return 1;
		}
		if (b == 0x66)
			opsize = true;
		else if (b != 0xf2 && b != 0xf3 && b != 0x64 && b != 0x65 && b != 0x67)
			break;
	}
	if (i < len && (code[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (i >= len)
		return 0;
	uint8_t op = code[i];
	const char *vector = vector_encoding(code, len);
	if (vector) {
		errbuf_set(why, whylen, "%s (%s), which the kernel's uprobes refuse or step wrongly",
			 text, vector);
		return 1;
	}
	if (opcode_refused(op)) {
		errbuf_set(why, whylen, "%s, which uprobes cannot probe", text);
		return 1;
	}
	if (op == 0x8e && i + 1 < len && ((code[i + 1] >> 3) & 7) == 2) {
		errbuf_set(why, whylen, "%s (a mov to %%ss), which uprobes refuse", text);
		return 1;
	}
	bool branch = op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
		      (op == 0x0f && i + 1 < len && code[i + 1] >= 0x80 && code[i + 1] <= 0x8f);
	if (branch && opsize) {
		errbuf_set(why, whylen, "%s (a branch with an operand-size prefix), which uprobes "
			 "refuse", text);
		return 1;
	}
#else
	(void)code, (void)size, (void)why, (void)whylen;
#endif
	return 0;
}

#if defined(__x86_64__)
/* Why an instruction the probe would step over must not be (NULL: it may).
 * Only a VEX/EVEX/XOP instruction that works on registers alone and
 * writes a vector or mask register may: capstone 4's list of what an
 * instruction reads and writes is not to be trusted (it has vmovdqu's
 * store and lock cmpxchg writing nothing), so the rule is read from the
 * encoding and the operands. With no memory operand nothing is stored
 * (vmaskmovdqu stores through %rdi all the same: refused by name); the
 * destination, the first operand in Intel order, is the only register
 * written but for pcmpestri/pcmpistri's %ecx. */
static const char *why_not_stepped_over(csh cs, const uint8_t *bytes, size_t len,
					const cs_insn *insn, char *buf, size_t buflen)
{
	if (!vector_encoding(bytes, len))
		return "it is not a computation on vector registers";
	const cs_x86 *x = &insn->detail->x86;
	for (int k = 0; k < x->op_count; k++)
		if (x->operands[k].type != X86_OP_REG)
			return "it reads or writes memory";
	static const char *const implicit[] = {"vmaskmovdqu", "vpcmpestri", "vpcmpistri"};
	for (size_t k = 0; k < sizeof(implicit) / sizeof(implicit[0]); k++)
		if (strcmp(insn->mnemonic, implicit[k]) == 0)
			return "it writes memory or a general-purpose register";
	if (x->op_count == 0) /* vzeroupper, vzeroall */
		return NULL;
	unsigned r = x->operands[0].reg;
	bool vector = (r >= X86_REG_XMM0 && r <= X86_REG_XMM31) ||
		      (r >= X86_REG_YMM0 && r <= X86_REG_YMM31) ||
		      (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31) || (r >= X86_REG_K0 && r <= X86_REG_K7);
	if (!vector) {
		snprintf(buf, buflen, "it writes %%%s", cs_reg_name(cs, r));
		return buf;
	}
	return NULL;
}

/* A direct branch or call of the function's code whose target lies in
 * (start, site]: the moved probe would fire there again. Its address in
 * *from. */
static bool branch_lands_between(csh cs, const uint8_t *code, size_t size, uint64_t start,
				 uint64_t site, uint64_t *from)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t at = start;
	bool found = false;
	while (insn && !found && cs_disasm_iter(cs, &p, &left, &at, insn)) {
		const cs_detail *d = insn->detail;
		bool branch = false;
		for (int g = 0; g < d->groups_count; g++)
			branch |= d->groups[g] == X86_GRP_JUMP || d->groups[g] == X86_GRP_CALL;
		if (!branch || d->x86.op_count != 1 || d->x86.operands[0].type != X86_OP_IMM)
			continue;
		uint64_t target = (uint64_t)d->x86.operands[0].imm;
		if (target > start && target <= site) {
			*from = insn->address;
			found = true;
		}
	}
	if (insn)
		cs_free(insn, 1);
	return found;
}
#endif

int insn_entry_site(const uint8_t *code, size_t size, uint64_t start, uint64_t *site, char *why,
		    size_t whylen)
{
	*site = start;
	why[0] = 0;
#if defined(__x86_64__)
	char first[256];
	if (!insn_unprobeable(code, size, first, sizeof(first)))
		return 0;
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		errbuf_set(why, whylen, "its first instruction is %s", first);
		return -1;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t at = start;
	char skipped[160] = "", stop[64];
	size_t slen = 0;
	int r = -1;
	for (int k = 0; insn && k < 16; k++) {
		const uint8_t *here = p;
		uint64_t here_at = at;
		char bad[256];
		if (k > 0 && !insn_unprobeable(here, left, bad, sizeof(bad))) {
			uint64_t from = 0;
			if (branch_lands_between(cs, code, size, start, here_at, &from)) {
				errbuf_set(why, whylen,
					 "its first instruction is %s, and the probe cannot move "
					 "past it: the branch at 0x%llx lands there",
					 first, (unsigned long long)from);
				break;
			}
			*site = here_at;
			errbuf_set(why, whylen, "placed at +%llu, after %s: the first is %s",
				 (unsigned long long)(here_at - start), skipped, first);
			r = 0;
			break;
		}
		if (!cs_disasm_iter(cs, &p, &left, &at, insn)) {
			errbuf_set(why, whylen,
				 "its first instruction is %s, and the bytes at 0x%llx after it do "
				 "not decode",
				 first, (unsigned long long)here_at);
			break;
		}
		const char *no = why_not_stepped_over(cs, here, insn->size, insn, stop,
						      sizeof(stop));
		if (no) {
			errbuf_set(why, whylen,
				 "its first instruction is %s, and the probe cannot move past %s: "
				 "%s",
				 first, k == 0 ? "it" : insn->mnemonic, no);
			break;
		}
		int w = snprintf(skipped + slen, sizeof(skipped) - slen, "%s%s", slen ? ", " : "",
				 insn->mnemonic);
		slen = w < 0 || (size_t)w >= sizeof(skipped) - slen ? sizeof(skipped) - 1
								   : slen + (size_t)w;
	}
	if (r < 0 && !why[0])
		errbuf_set(why, whylen,
			 "its first instruction is %s, and no instruction the kernel can step "
			 "follows soon enough",
			 first);
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return r;
#else
	(void)code, (void)size;
	return 0;
#endif
}

/* --- how the kernel takes a probed instruction ----------------------------- */

#if defined(__x86_64__)
/* The kind of a decoded instruction (capstone's id, its bytes b[0..len)).
 * What the kernel emulates (arch/x86/kernel/uprobes.c) is push of a
 * register (50+r; 41 50+r for %r8-%r15) and relative branches and calls
 * (e8, e9, eb, 70-7f, 0f 80-8f), here without any prefix. An operand-size
 * prefix followed by 0f counts as a nop (66 0f 1f: nopw), whatever follows:
 * so sonde has always classed it, and a nop's trap costs, no more than a
 * single step's, under-correct an SSE instruction's (66 0f ef: pxor) but
 * never over-correct it. */
static enum insn_trap trap_of(unsigned id, const uint8_t *b, size_t len)
{
	if (len == 1)
		return id == X86_INS_PUSH ? INSN_TRAP_EMULATED
		       : id == X86_INS_NOP ? INSN_TRAP_NOP
					   : INSN_TRAP_STEPPED;
	if (id == X86_INS_PUSH && len == 2 && b[0] == 0x41 && (b[1] & 0xf8) == 0x50)
		return INSN_TRAP_EMULATED;
	bool branch = b[0] == 0xe8 || b[0] == 0xe9 || b[0] == 0xeb || (b[0] & 0xf0) == 0x70 ||
		      (b[0] == 0x0f && (b[1] & 0xf0) == 0x80);
	if (branch)
		return INSN_TRAP_EMULATED;
	if (id == X86_INS_ENDBR64 && len == 4)
		return INSN_TRAP_ENDBR;
	if ((id == X86_INS_NOP && ((b[0] == 0x0f && b[1] == 0x1f) || (b[0] == 0x66 && b[1] == 0x90))) ||
	    (b[0] == 0x66 && b[1] == 0x0f))
		return INSN_TRAP_NOP;
	return INSN_TRAP_STEPPED;
}
#endif

enum insn_trap insn_trap_kind(const uint8_t *code, size_t size)
{
	enum insn_trap t = INSN_TRAP_STEPPED;
#if defined(__x86_64__)
	csh cs;
	if (size < 2 || cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return t;
	cs_insn *insn = NULL;
	if (cs_disasm(cs, code, size, 0, 1, &insn) == 1) {
		t = trap_of(insn->id, insn->bytes, insn->size);
		cs_free(insn, 1);
	}
	cs_close(&cs);
#else
	(void)code, (void)size;
#endif
	return t;
}

enum insn_trap insn_trap_at(const char *path, uint64_t file_offset)
{
	uint8_t b[16]; /* the longest x86 instruction is 15 bytes */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return INSN_TRAP_STEPPED;
	ssize_t n = pread(fd, b, sizeof(b), (off_t)file_offset);
	close(fd);
	return n > 0 ? insn_trap_kind(b, (size_t)n) : INSN_TRAP_STEPPED;
}

#if defined(__x86_64__)
/* capstone for x86-64 with details, AT&T syntax (as objdump prints): 0,
 * or -1. */
static int open_detailed(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return -1;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(*cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	return 0;
}

/* The condition of the jump capstone decoded (detail on), or -1 when it is
 * no conditional jump; *why says when sonde cannot evaluate it. */
static int branch_cond(const cs_insn *insn, char *why, size_t whylen)
{
	const cs_x86 *x = &insn->detail->x86;
	uint8_t op = x->opcode[0];
	bool addr32 = x->prefix[3] == 0x67;
	why[0] = 0;
	if (op >= 0x70 && op <= 0x7f)
		return op & 0xf;
	if (op == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f)
		return x->opcode[1] & 0xf;
	if (op == 0xe3)
		return addr32 ? INSN_COND_ECXZ : INSN_COND_RCXZ;
	if (op >= 0xe0 && op <= 0xe2) {
		if (addr32)
			errbuf_set(why, whylen, "a %.15s counting in %%ecx", insn->mnemonic);
		return op == 0xe2 ? INSN_COND_LOOP : op == 0xe1 ? INSN_COND_LOOPE : INSN_COND_LOOPNE;
	}
	return -1;
}
#endif

int insn_branches(const uint8_t *code, size_t size, uint64_t start, uint64_t lo, uint64_t hi,
		  struct insn_branch *out, int max)
{
#if defined(__x86_64__)
	if (lo < start || hi <= lo || hi - start > size)
		return -1;
	csh cs;
	if (open_detailed(&cs))
		return -1;
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size; /* the last instruction may end past hi */
	uint64_t at = start;
	int n = 0;
	bool at_lo = lo == start;
	while (insn && at < hi) {
		uint64_t here = at;
		if (!cs_disasm_iter(cs, &p, &left, &at, insn))
			break;
		at_lo |= here == lo;
		if (here < lo)
			continue;
		char why[64];
		int cond = branch_cond(insn, why, sizeof(why));
		if (cond < 0 || n >= max)
			continue;
		struct insn_branch *b = &out[n++];
		b->addr = here;
		b->next = at;
		b->target = insn->detail->x86.op_count > 0 &&
					    insn->detail->x86.operands[0].type == X86_OP_IMM
				    ? (uint64_t)insn->detail->x86.operands[0].imm
				    : 0;
		b->cond = (enum insn_cond)cond;
		snprintf(b->text, sizeof(b->text), "%.15s %.40s", insn->mnemonic, insn->op_str);
		snprintf(b->unsupported, sizeof(b->unsupported), "%s", why);
	}
	bool decoded = at >= hi && at_lo;
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return decoded ? n : -1;
#else
	(void)code, (void)size, (void)start, (void)lo, (void)hi, (void)out, (void)max;
	return -1;
#endif
}

int insn_list(const uint8_t *code, size_t size, uint64_t start, struct insn_info **out)
{
	*out = NULL;
#if defined(__x86_64__)
	csh cs;
	if (open_detailed(&cs))
		return -1;
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = size, n = 0, cap = 0;
	uint64_t at = start;
	struct insn_info *v = NULL;
	while (insn && cs_disasm_iter(cs, &p, &left, &at, insn)) {
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct insn_info *w = realloc(v, cap * sizeof(*v));
			if (!w)
				break;
			v = w;
		}
		struct insn_info *i = &v[n++];
		memset(i, 0, sizeof(*i));
		i->addr = insn->address;
		i->size = (uint8_t)insn->size;
		snprintf(i->text, sizeof(i->text), "%.15s%s%.60s", insn->mnemonic,
			 insn->op_str[0] ? " " : "", insn->op_str);
		const cs_detail *d = insn->detail;
		bool jump = false, ret = false, call = false;
		for (int g = 0; g < d->groups_count; g++) {
			jump |= d->groups[g] == X86_GRP_JUMP;
			ret |= d->groups[g] == X86_GRP_RET;
			call |= d->groups[g] == X86_GRP_CALL;
		}
		bool direct = d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM;
		char why[64];
		/* (capstone leaves loop/loope/loopne out of its jump group) */
		int cond = branch_cond(insn, why, sizeof(why));
		if (direct && (jump || call || cond >= 0))
			i->target = (uint64_t)d->x86.operands[0].imm;
		i->call = call;
		if (cond >= 0) {
			i->flow = INSN_FLOW_COND;
			i->cond = (enum insn_cond)cond;
		} else if (jump) {
			i->flow = direct ? INSN_FLOW_JUMP : INSN_FLOW_INDIRECT;
		} else if (ret) {
			i->flow = INSN_FLOW_RETURN;
		} else if (insn->id == X86_INS_UD2 || insn->id == X86_INS_HLT ||
			   insn->id == X86_INS_INT3) {
			i->flow = INSN_FLOW_STOP;
		}
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	*out = v;
	return (int)n;
#else
	(void)code, (void)size, (void)start;
	return -1;
#endif
}
