/* insn: which first instructions the kernel's uprobes refuse or mis-step
 * (Linux 6.18's arch/x86/kernel/uprobes.c reads a VEX/EVEX opcode byte as
 * a legacy one), and where an entry probe goes instead. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "insn.h"

static int refused(const uint8_t *code, size_t n, const char *want)
{
	char why[256] = "";
	int r = insn_unprobeable(code, n, why, sizeof(why));
	if (r && want)
		cr_expect(strstr(why, want), "'%s' does not say '%s'", why, want);
	return r;
}

Test(insn, vector_encodings_are_never_probed)
{
	/* vmovd %esi,%xmm0: 0x6e reads as outs, refused when mapped */
	static const uint8_t vmovd[] = {0xc5, 0xf9, 0x6e, 0xc6};
	/* vpbroadcastb %xmm0,%xmm1 (VEX3): 0x78 reads as js, "emulated" */
	static const uint8_t vpbroadcastb[] = {0xc4, 0xe2, 0x79, 0x78, 0xc8};
	/* vpbroadcastb %esi,%ymm17 (EVEX), the AVX-512 repro */
	static const uint8_t evex[] = {0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce};
	/* vpcmov (XOP, AMD): 8f with map >= 8 */
	static const uint8_t xop[] = {0x8f, 0xe8, 0x78, 0xa2, 0xc2, 0x10};
	/* with a prefix in front: still VEX */
	static const uint8_t prefixed[] = {0x66, 0xc5, 0xf9, 0x6e, 0xc6};
	cr_expect(refused(vmovd, sizeof(vmovd), "VEX"));
	cr_expect(refused(vmovd, sizeof(vmovd), "vmovd"));
	cr_expect(refused(vpbroadcastb, sizeof(vpbroadcastb), "VEX"));
	cr_expect(refused(evex, sizeof(evex), "EVEX"));
	cr_expect(refused(xop, sizeof(xop), "XOP"));
	cr_expect(refused(prefixed, sizeof(prefixed), "VEX"));
	/* pop %rax is 8f /0: not XOP */
	static const uint8_t pop_mem[] = {0x8f, 0x00};
	cr_expect(!refused(pop_mem, sizeof(pop_mem), NULL));
}

Test(insn, legacy_instructions_the_kernel_refuses)
{
	static const uint8_t lock_add[] = {0xf0, 0x48, 0x83, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t ds_mov[] = {0x3e, 0x8b, 0x07};
	static const uint8_t int3[] = {0xcc};
	static const uint8_t insb[] = {0x6c};
	static const uint8_t mov_ss[] = {0x8e, 0xd0};        /* mov %eax,%ss */
	static const uint8_t call16[] = {0x66, 0xe8, 0, 0}; /* callw */
	static const uint8_t jcc16[] = {0x66, 0x0f, 0x84, 0, 0};
	cr_expect(refused(lock_add, sizeof(lock_add), "lock"));
	cr_expect(refused(ds_mov, sizeof(ds_mov), "segment prefix (0x3e)"));
	cr_expect(refused(int3, sizeof(int3), "int3"));
	cr_expect(refused(insb, sizeof(insb), "insb"));
	cr_expect(refused(mov_ss, sizeof(mov_ss), "%ss"));
	cr_expect(refused(call16, sizeof(call16), "operand-size"));
	cr_expect(refused(jcc16, sizeof(jcc16), "operand-size"));
	/* ordinary first instructions pass */
	static const uint8_t ok[][9] = {
		{0x55},                                           /* push %rbp */
		{0xf3, 0x0f, 0x1e, 0xfa},                         /* endbr64 */
		{0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0},    /* mov %fs:0x28,%rax */
		{0x48, 0x89, 0xf8},                               /* mov %rdi,%rax */
		{0x0f, 0x84, 0x10, 0, 0, 0},                      /* je */
		{0xe8, 0, 0, 0, 0},                               /* call */
		{0x66, 0x0f, 0x6f, 0x06},                         /* movdqa (%rsi),%xmm0: SSE */
		{0x0f, 0x1f, 0x44, 0, 0},                         /* nopl */
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		cr_expect(!refused(ok[i], sizeof(ok[i]), NULL), "instruction %zu refused", i);
}

static int site_of(const uint8_t *code, size_t n, uint64_t *site, char *why, size_t len)
{
	return insn_entry_site(code, n, 0x1000, site, why, len);
}

Test(insn, entry_probe_moves_past_vector_setup)
{
	char why[512];
	uint64_t site = 0;
	/* memset's AVX2 version: vmovd %esi,%xmm0; mov %rdi,%rax; ... */
	static const uint8_t memset_avx2[] = {0xc5, 0xf9, 0x6e, 0xc6, 0x48, 0x89, 0xf8,
					      0x48, 0x83, 0xfa, 0x20, 0xc3};
	cr_assert_eq(site_of(memset_avx2, sizeof(memset_avx2), &site, why, sizeof(why)), 0, "%s",
		     why);
	cr_expect_eq(site, 0x1004);
	cr_expect(strstr(why, "+4, after vmovd"), "%s", why);
	/* rawmemchr's: vmovd, vpbroadcastb (two skipped), mov %edi,%eax */
	static const uint8_t rawmemchr[] = {0xc5, 0xf9, 0x6e, 0xc6, 0xc4, 0xe2, 0x7d,
					    0x78, 0xc0, 0x89, 0xf8, 0xc3};
	cr_assert_eq(site_of(rawmemchr, sizeof(rawmemchr), &site, why, sizeof(why)), 0, "%s", why);
	cr_expect_eq(site, 0x1009);
	/* a safe first instruction stays */
	static const uint8_t plain[] = {0x55, 0x48, 0x89, 0xe5, 0xc3};
	cr_assert_eq(site_of(plain, sizeof(plain), &site, why, sizeof(why)), 0);
	cr_expect_eq(site, 0x1000);
	cr_expect_str_eq(why, "");
}

Test(insn, entry_probe_refused_where_moving_would_change_the_call)
{
	char why[512];
	uint64_t site = 0;
	/* vmovd %xmm0,%eax first: a general-purpose register is written */
	static const uint8_t gpr[] = {0xc5, 0xf9, 0x7e, 0xc0, 0x83, 0xc0, 0x01, 0xc3};
	cr_expect_eq(site_of(gpr, sizeof(gpr), &site, why, sizeof(why)), -1);
	cr_expect(strstr(why, "writes %eax"), "%s", why);
	/* vmovdqu %ymm0,(%rdi) first: memory is written */
	static const uint8_t store[] = {0xc5, 0xfe, 0x7f, 0x07, 0x31, 0xc0, 0xc3};
	cr_expect_eq(site_of(store, sizeof(store), &site, why, sizeof(why)), -1);
	cr_expect(strstr(why, "writes memory"), "%s", why);
	/* the EVEX repro: vpbroadcastb %esi,%ymm17; vmovd %xmm17,%eax */
	static const uint8_t evex[] = {0x62, 0xe2, 0x7d, 0x28, 0x7a, 0xce, 0x62, 0xe1,
				       0x7d, 0x08, 0x7e, 0xc8, 0xc5, 0xf8, 0x77, 0xc3};
	cr_expect_eq(site_of(evex, sizeof(evex), &site, why, sizeof(why)), -1);
	cr_expect(strstr(why, "EVEX") && strstr(why, "writes %eax"), "%s", why);
	/* vpxor; 1: add $3,%esi; dec %edi; jnz 1b: the loop lands on the site */
	static const uint8_t loop[] = {0xc5, 0xf9, 0xef, 0xc0, 0x83, 0xc6, 0x03,
				       0xff, 0xcf, 0x75, 0xf9, 0x89, 0xf0, 0xc3};
	cr_expect_eq(site_of(loop, sizeof(loop), &site, why, sizeof(why)), -1);
	cr_expect(strstr(why, "branch at 0x1009 lands there"), "%s", why);
	/* a lock-prefixed first instruction writes memory: no move */
	static const uint8_t lock[] = {0xf0, 0x48, 0x0f, 0xb1, 0x17, 0xc3};
	cr_expect_eq(site_of(lock, sizeof(lock), &site, why, sizeof(why)), -1);
	cr_expect(strstr(why, "lock"), "%s", why);
}

/* The kind of trap a probed instruction costs (insn_trap_kind): emulated,
 * endbr64, nop or single-stepped, each with its calibrated costs. */
#define KIND(...)                                                                  \
	({                                                                         \
		static const uint8_t c_[] = {__VA_ARGS__, 0, 0, 0, 0, 0, 0, 0, 0}; \
		insn_trap_kind(c_, sizeof(c_));                                    \
	})

Test(insn, emulated_pushes_and_relative_branches)
{
	cr_expect_eq(KIND(0x55), INSN_TRAP_EMULATED);                   /* push %rbp */
	cr_expect_eq(KIND(0x41, 0x54), INSN_TRAP_EMULATED);             /* push %r12 */
	cr_expect_eq(KIND(0xe8, 1, 2, 3, 4), INSN_TRAP_EMULATED);       /* call rel32 */
	cr_expect_eq(KIND(0xe9, 1, 2, 3, 4), INSN_TRAP_EMULATED);       /* jmp rel32 */
	cr_expect_eq(KIND(0xeb, 5), INSN_TRAP_EMULATED);                /* jmp rel8 */
	cr_expect_eq(KIND(0x74, 5), INSN_TRAP_EMULATED);                /* je rel8 */
	cr_expect_eq(KIND(0x0f, 0x84, 1, 2, 3, 4), INSN_TRAP_EMULATED); /* je rel32 */
	/* With a prefix the classes stay as sonde always had them: stepped. */
	cr_expect_eq(KIND(0x48, 0x55), INSN_TRAP_STEPPED);              /* rex.w push */
	cr_expect_eq(KIND(0x66, 0x55), INSN_TRAP_STEPPED);              /* push %bp */
	cr_expect_eq(KIND(0xf2, 0xe9, 1, 2, 3, 4), INSN_TRAP_STEPPED);  /* bnd jmp */
	cr_expect_eq(KIND(0xe2, 3), INSN_TRAP_STEPPED);                 /* loop */
	cr_expect_eq(KIND(0xff, 0xd0), INSN_TRAP_STEPPED);              /* call *%rax */
}

Test(insn, endbr_nops_and_the_rest)
{
	cr_expect_eq(KIND(0xf3, 0x0f, 0x1e, 0xfa), INSN_TRAP_ENDBR);          /* endbr64 */
	cr_expect_eq(KIND(0xf3, 0x0f, 0x1e, 0xfb), INSN_TRAP_STEPPED);        /* endbr32 */
	cr_expect_eq(KIND(0x90), INSN_TRAP_NOP);                              /* nop */
	cr_expect_eq(KIND(0x0f, 0x1f, 0x44, 0, 0), INSN_TRAP_NOP);            /* nopl */
	cr_expect_eq(KIND(0x66, 0x90), INSN_TRAP_NOP);                        /* xchg %ax,%ax */
	cr_expect_eq(KIND(0x66, 0x0f, 0x1f, 0x44, 0, 0), INSN_TRAP_NOP);      /* nopw */
	/* 66 0f: a nop's (smaller) costs, as before: under-corrects, never over. */
	cr_expect_eq(KIND(0x66, 0x0f, 0xef, 0xc0), INSN_TRAP_NOP);            /* pxor */
	cr_expect_eq(KIND(0xf3, 0x90), INSN_TRAP_STEPPED);                    /* pause */
	cr_expect_eq(KIND(0x48, 0x8b, 0x05, 1, 2, 3, 4), INSN_TRAP_STEPPED);  /* mov rip-rel */
	cr_expect_eq(KIND(0x48, 0x89, 0xe5), INSN_TRAP_STEPPED);              /* mov %rsp,%rbp */
	/* Too short, or bytes that do not decode: stepped. */
	static const uint8_t one[] = {0x55};
	cr_expect_eq(insn_trap_kind(one, 1), INSN_TRAP_STEPPED);
	cr_expect_eq(KIND(0x66, 0x0f, 0xb5, 0xd2), INSN_TRAP_STEPPED);        /* lgs %dx: invalid */
}

Test(insn, trap_at_reads_the_file)
{
	char path[] = "/tmp/sonde-insn-XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	static const uint8_t code[] = {0x90, 0x90, 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5};
	cr_assert_eq(write(fd, code, sizeof(code)), (ssize_t)sizeof(code));
	close(fd);
	cr_expect_eq(insn_trap_at(path, 0), INSN_TRAP_NOP);
	cr_expect_eq(insn_trap_at(path, 2), INSN_TRAP_ENDBR);
	cr_expect_eq(insn_trap_at(path, 6), INSN_TRAP_EMULATED);
	cr_expect_eq(insn_trap_at(path, 7), INSN_TRAP_STEPPED);
	cr_expect_eq(insn_trap_at(path, 9), INSN_TRAP_STEPPED); /* one byte left */
	unlink(path);
	cr_expect_eq(insn_trap_at(path, 0), INSN_TRAP_STEPPED); /* gone */
}

/* Conditional jumps found in code, each with its condition (the opcode's
 * low nibble for jcc; the %rcx tests numbered after them), its target and
 * the instruction after it. */
Test(insn, branches_with_their_conditions)
{
	const uint8_t code[] = {
		0x48, 0x39, 0xf7,             /* 0x1000 cmp %rsi,%rdi */
		0x76, 0x10,                   /* 0x1003 jbe 0x1015 */
		0x0f, 0x8f, 0x00, 0x01, 0x00, 0x00, /* 0x1005 jg 0x110b */
		0xe3, 0x02,                   /* 0x100b jrcxz 0x100f */
		0x67, 0xe3, 0x00,             /* 0x100d jecxz 0x1010 */
		0xe2, 0xfe,                   /* 0x1010 loop 0x1010 */
		0xe1, 0xfc,                   /* 0x1012 loope 0x1010 */
		0xeb, 0x00,                   /* 0x1014 jmp: not conditional */
		0x67, 0xe2, 0xfb,             /* 0x1016 loop counting in %ecx */
		0xc3,                         /* 0x1019 ret */
	};
	struct insn_branch b[8];
	int n = insn_branches(code, sizeof(code), 0x1000, 0x1000, 0x101a, b, 8);
	cr_assert_eq(n, 7, "found %d jumps", n);
	cr_expect_eq(b[0].addr, 0x1003);
	cr_expect_eq(b[0].cond, 6); /* be */
	cr_expect_eq(b[0].target, 0x1015);
	cr_expect_eq(b[0].next, 0x1005);
	cr_expect_str_eq(b[0].text, "jbe 0x1015");
	cr_expect_eq(b[1].cond, INSN_COND_G);
	cr_expect_eq(b[1].target, 0x110b);
	cr_expect_eq(b[2].cond, INSN_COND_RCXZ);
	cr_expect_eq(b[3].cond, INSN_COND_ECXZ);
	cr_expect_eq(b[4].cond, INSN_COND_LOOP);
	cr_expect_eq(b[4].target, 0x1010);
	cr_expect_eq(b[5].cond, INSN_COND_LOOPE);
	cr_expect_str_eq(b[5].unsupported, "");
	cr_expect_eq(b[6].addr, 0x1016);
	cr_expect(strstr(b[6].unsupported, "%ecx"), "'%s'", b[6].unsupported);
	/* Only those in [lo, hi), still decoded from the start. */
	n = insn_branches(code, sizeof(code), 0x1000, 0x1005, 0x100d, b, 8);
	cr_expect_eq(n, 2);
	cr_expect_eq(b[0].addr, 0x1005);
	/* max bounds what is stored */
	cr_expect_eq(insn_branches(code, sizeof(code), 0x1000, 0x1000, 0x101a, b, 2), 2);
	/* lo inside an instruction, or bytes short of hi: not decoded */
	cr_expect_eq(insn_branches(code, sizeof(code), 0x1000, 0x1004, 0x101a, b, 8), -1);
	cr_expect_eq(insn_branches(code, 4, 0x1000, 0x1000, 0x101a, b, 8), -1);
}

/* Every instruction with how it passes control on: loop, which capstone
 * leaves out of its jump group, is a conditional jump with its target. */
Test(insn, list_with_flow)
{
	const uint8_t code[] = {
		0xe3, 0x05,       /* 0x2000 jrcxz 0x2007 */
		0x48, 0xff, 0xc0, /* 0x2002 inc %rax */
		0xe2, 0xfb,       /* 0x2005 loop 0x2002 */
		0xe8, 0x00, 0x00, 0x00, 0x00, /* 0x2007 call 0x200c */
		0xeb, 0x00,       /* 0x200c jmp 0x200e */
		0xff, 0xe0,       /* 0x200e jmp *%rax */
		0xc3,             /* 0x2010 ret */
		0x0f, 0x0b,       /* 0x2011 ud2 */
	};
	struct insn_info *v;
	int n = insn_list(code, sizeof(code), 0x2000, &v);
	cr_assert_eq(n, 8, "%d instructions", n);
	cr_expect_eq(v[0].flow, INSN_FLOW_COND);
	cr_expect_eq(v[0].cond, INSN_COND_RCXZ);
	cr_expect_eq(v[0].target, 0x2007);
	cr_expect_eq(v[1].flow, INSN_FLOW_NEXT);
	cr_expect_eq(v[2].flow, INSN_FLOW_COND, "loop is conditional");
	cr_expect_eq(v[2].cond, INSN_COND_LOOP);
	cr_expect_eq(v[2].target, 0x2002);
	cr_expect(v[3].call && v[3].flow == INSN_FLOW_NEXT && v[3].target == 0x200c);
	cr_expect_eq(v[4].flow, INSN_FLOW_JUMP);
	cr_expect_eq(v[4].target, 0x200e);
	cr_expect_eq(v[5].flow, INSN_FLOW_INDIRECT);
	cr_expect_eq(v[6].flow, INSN_FLOW_RETURN);
	cr_expect_eq(v[7].flow, INSN_FLOW_STOP);
	free(v);
}
