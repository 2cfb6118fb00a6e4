/* Unit tests for lines (source line -> probe addresses), checked against
 * binutils: `readelf --debug-dump=decodedline` says where the line begins
 * statements, `addr2line -f -i` which function instance holds each
 * address. The target (tests/targets/lines) has one line inlined in two
 * functions, built by gcc and clang at -O0 and -O2. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capexpr.h"
#include "dwarfvar.h"
#include "insn.h"
#include "lines.h"
#include "sonde_abi.h"

#define LINES_SRC SRC_DIR "/tests/targets/lines/lines.c"

static unsigned hit_line(void)
{
	FILE *f = fopen(LINES_SRC, "r");
	cr_assert(f, "cannot read %s", LINES_SRC);
	char buf[512];
	unsigned n = 0, found = 0;
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, "LINE_HIT") && strstr(buf, "hits +="))
			found = n;
	}
	fclose(f);
	cr_assert(found, "no LINE_HIT line in %s", LINES_SRC);
	return found;
}

/* readelf's statement rows of lines.c:line (addresses, at most max). */
static size_t readelf_stmts(const char *bin, unsigned line, uint64_t *out, size_t max)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "readelf --wide --debug-dump=decodedline '%s'", bin);
	FILE *p = popen(cmd, "r");
	cr_assert(p, "cannot run readelf");
	char buf[1024];
	size_t n = 0;
	while (fgets(buf, sizeof(buf), p)) {
		char file[512], addr[64], rest[64] = "";
		unsigned l;
		/* "lines.c   19   0x11c9   [view]   [x]" */
		int k = sscanf(buf, "%511s %u %63s %63[^\n]", file, &l, addr, rest);
		if (k < 3 || l != line || strncmp(addr, "0x", 2) != 0)
			continue;
		size_t lf = strlen(file);
		if (lf < 7 || strcmp(file + lf - 7, "lines.c") != 0)
			continue;
		size_t lr = strlen(rest);
		while (lr && (rest[lr - 1] == ' ' || rest[lr - 1] == '\t'))
			rest[--lr] = 0;
		if (lr == 0 || rest[lr - 1] != 'x')
			continue; /* not a statement */
		uint64_t a = strtoull(addr, NULL, 16);
		bool dup = false;
		for (size_t i = 0; i < n; i++)
			dup |= out[i] == a;
		if (!dup && n < max)
			out[n++] = a;
	}
	pclose(p);
	return n;
}

/* The outermost function addr2line names for an address (the caller of
 * the inlined instance). */
static void outer_function(const char *bin, uint64_t addr, char *out, size_t size)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "addr2line -f -i -e '%s' 0x%" PRIx64, bin, addr);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	char buf[512];
	int i = 0;
	out[0] = 0;
	while (fgets(buf, sizeof(buf), p)) {
		if (i++ % 2 == 0) {
			buf[strcspn(buf, "\n")] = 0;
			snprintf(out, size, "%.255s", buf);
		}
	}
	pclose(p);
}

static Dwarf *open_dw(const char *bin, int *fd)
{
	*fd = open(bin, O_RDONLY);
	cr_assert(*fd >= 0, "cannot open %s", bin);
	Dwarf *dw = dwarf_begin(*fd, DWARF_C_READ);
	cr_assert(dw, "%s has no DWARF", bin);
	return dw;
}

static void check_build(const char *build)
{
	char bin[512];
	snprintf(bin, sizeof(bin), "%s/lines-%s", TARGET_DIR, build);
	unsigned line = hit_line();
	uint64_t stmts[64];
	size_t nstmts = readelf_stmts(bin, line, stmts, 64);
	cr_assert(nstmts >= 2, "%s: readelf has %zu statement rows of line %u", build, nstmts, line);
	int fd;
	Dwarf *dw = open_dw(bin, &fd);
	struct line_site *sites;
	char err[512];
	struct line_lookup q = {.dw = dw, .binary = bin, .file = "lines.c", .line = line};
	int n = lines_resolve(&q, &sites, err, sizeof(err));
	cr_assert_eq(n, 2, "%s: %d sites (%s); expected one in each of two functions", build, n,
		     n < 0 ? err : "");
	char fn[2][256];
	for (int i = 0; i < n; i++) {
		bool stmt = false;
		for (size_t k = 0; k < nstmts; k++)
			stmt |= stmts[k] == sites[i].vaddr;
		cr_expect(stmt, "%s: 0x%" PRIx64 " is no statement row of line %u in readelf", build,
			  sites[i].vaddr, line);
		cr_expect(sites[i].inlined, "%s: 0x%" PRIx64 " is not an inlined instance", build,
			  sites[i].vaddr);
		cr_expect_str_eq(sites[i].function, "count_hit");
		outer_function(bin, sites[i].vaddr, fn[i], sizeof(fn[i]));
		/* The lowest statement row of the line in that function. */
		for (size_t k = 0; k < nstmts; k++) {
			char other[256];
			outer_function(bin, stmts[k], other, sizeof(other));
			if (strcmp(other, fn[i]) == 0)
				cr_expect(stmts[k] >= sites[i].vaddr,
					  "%s: 0x%" PRIx64 " in %s is below the site 0x%" PRIx64, build,
					  stmts[k], other, sites[i].vaddr);
		}
	}
	bool both = (strcmp(fn[0], "handle_request") == 0 && strcmp(fn[1], "handle_batch") == 0) ||
		    (strcmp(fn[1], "handle_request") == 0 && strcmp(fn[0], "handle_batch") == 0);
	cr_expect(both, "%s: sites in %s and %s, expected handle_request and handle_batch", build,
		  fn[0], fn[1]);
	free(sites);
	dwarf_end(dw);
	close(fd);
}

Test(lines, gcc_O0) { check_build("gcc-O0"); }
Test(lines, gcc_O2) { check_build("gcc-O2"); }
Test(lines, clang_O0) { check_build("clang-O0"); }
Test(lines, clang_O2) { check_build("clang-O2"); }

Test(lines, path_suffix_and_errors)
{
	int fd;
	Dwarf *dw = open_dw(TARGET_DIR "/lines-gcc-O2", &fd);
	unsigned line = hit_line();
	struct line_site *sites;
	char err[512];
	/* clang records the path as given: a suffix with a directory matches. */
	struct line_lookup q = {.dw = dw, .binary = "lines-gcc-O2", .file = "lines.c", .line = line};
	cr_expect_eq(lines_resolve(&q, &sites, err, sizeof(err)), 2);
	free(sites);
	q.file = "ines.c";
	cr_expect_eq(lines_resolve(&q, &sites, err, sizeof(err)), -1,
		     "a suffix that is not a whole path component matched");
	cr_expect(strstr(err, "no file ines.c in the debug info of lines-gcc-O2"), "%s", err);
	q.file = "lines.c";
	q.line = line + 1;
	cr_expect_eq(lines_resolve(&q, &sites, err, sizeof(err)), -1);
	char want[128];
	snprintf(want, sizeof(want), "no code at lines.c:%u; nearest lines with code: %u, ", line + 1,
		 line);
	cr_expect(strncmp(err, want, strlen(want)) == 0, "'%s' does not start with '%s'", err, want);
	dwarf_end(dw);
	close(fd);
	cr_expect(lines_file_matches("/a/b/lines.c", "b/lines.c"));
	cr_expect(lines_file_matches("/a/b/lines.c", "/a/b/lines.c"));
	cr_expect(!lines_file_matches("/a/blines.c", "lines.c"));
	cr_expect(!lines_file_matches("lines.c", "x/lines.c"));
}

/* Instructions the kernel's uprobes refuse (arch/x86/kernel/uprobes.c) are
 * refused before attaching, with the reason; ordinary ones pass. */
Test(lines, unprobeable_instructions)
{
	char why[128];
	static const uint8_t lock_add[] = {0xf0, 0x48, 0x83, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01};
	static const uint8_t rex_lock[] = {0x66, 0xf0, 0x0f, 0xb1, 0x17}; /* lock cmpxchg */
	static const uint8_t cs_call[] = {0x2e, 0xff, 0x15, 0, 0, 0, 0};
	static const uint8_t int3[] = {0xcc};
	static const uint8_t hlt[] = {0xf4};
	static const uint8_t push_rbp[] = {0x55};
	static const uint8_t mov_fs[] = {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}; /* mov %fs:0x28 */
	static const uint8_t addq[] = {0x48, 0x83, 0x05, 0xf0, 0x2d, 0, 0, 0x01};
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	cr_expect(insn_unprobeable(lock_add, sizeof(lock_add), why, sizeof(why)));
	cr_expect(strstr(why, "lock"), "%s", why);
	cr_expect(insn_unprobeable(rex_lock, sizeof(rex_lock), why, sizeof(why)));
	cr_expect(insn_unprobeable(cs_call, sizeof(cs_call), why, sizeof(why)));
	cr_expect(strstr(why, "segment prefix (0x2e)"), "%s", why);
	cr_expect(insn_unprobeable(int3, sizeof(int3), why, sizeof(why)));
	cr_expect(strstr(why, "int3"), "%s", why);
	cr_expect(insn_unprobeable(hlt, sizeof(hlt), why, sizeof(why)));
	cr_expect(!insn_unprobeable(push_rbp, sizeof(push_rbp), why, sizeof(why)));
	cr_expect(!insn_unprobeable(mov_fs, sizeof(mov_fs), why, sizeof(why)));
	cr_expect(!insn_unprobeable(addq, sizeof(addq), why, sizeof(why)));
	cr_expect(!insn_unprobeable(endbr, sizeof(endbr), why, sizeof(why)));
}

/* At -O0, the always_inline count_hit's argument v lives in a stack slot of
 * the function it was inlined into (DW_OP_fbreg): read through that
 * function's frame base at each of the line's two addresses (not "no frame
 * base": the inlined function's abstract definition has none). */
static void check_inlined_argument(const char *build)
{
	char bin[512], err[512];
	snprintf(bin, sizeof(bin), "%s/lines-%s", TARGET_DIR, build);
	int fd;
	Dwarf *dw = open_dw(bin, &fd);
	struct line_site *sites;
	struct line_lookup q = {.dw = dw, .binary = bin, .file = "lines.c", .line = hit_line()};
	int n = lines_resolve(&q, &sites, err, sizeof(err));
	cr_assert_eq(n, 2, "%s: %s", build, n < 0 ? err : "not 2 sites");
	struct cap_spec s;
	cr_assert_eq(capexpr_parse("v", &s, err, sizeof(err)), 0, "%s", err);
	for (int i = 0; i < n; i++) {
		struct fetch_build b;
		/* PIE: the text segment's vaddr equals its file offset. */
		cr_assert_eq(dwarfvar_compile(bin, sites[i].vaddr, &s, &b, err, sizeof(err)), 0,
			     "%s at 0x%" PRIx64 ": %s", build, sites[i].vaddr, err);
		cr_assert_eq(b.desc[0].status, CAPTURE_OK, "%s: v is %s", build, b.desc[0].why);
		/* The frame's register (rbp, or rsp + the CFA's offset), the slot's
		 * offset, and a read of 8 bytes there. */
		const struct sonde_fetch_op *op = b.prog->ops;
		cr_expect(op[0].code == FETCH_REG && (op[0].a == 6 || op[0].a == 7),
			  "%s: v's program does not start at the frame (op %u reg %u)", build,
			  op[0].code, op[0].a);
		bool deref = false;
		for (uint32_t k = 0; k < b.prog->nops; k++)
			deref |= op[k].code == FETCH_DEREF && op[k].a == 8;
		cr_expect(deref, "%s: v is not read from its stack slot", build);
		dwarfvar_build_free(&b);
	}
	capexpr_free(&s);
	free(sites);
	dwarf_end(dw);
	close(fd);
}

Test(lines, inlined_argument_frame_base_gcc_O0) { check_inlined_argument("gcc-O0"); }
Test(lines, inlined_argument_frame_base_clang_O0) { check_inlined_argument("clang-O0"); }
