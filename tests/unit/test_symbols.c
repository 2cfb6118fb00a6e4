/* Unit tests for the symbolizer: every answer about the test targets is
 * checked against binutils' addr2line (the reference users trust), plus live
 * processes, separate debug info (libc6-dbg), the kernel, stripped binaries
 * and addresses that cannot be resolved. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbols.h"

#define SYMTARGET TARGET_DIR "/symtarget"
#define SYMLIB TARGET_DIR "/libsymlib.so"
#define MAX_FRAMES 64
#define BATCH 200

/* ---- addr2line as the reference ---------------------------------------- */

struct a2l_frame {
	char name[512];
	char loc[1024]; /* "file:line" without addr2line's "(discriminator N)" */
};

struct a2l_answer {
	int n;
	struct a2l_frame f[MAX_FRAMES];
};

static void chomp_location(char *loc)
{
	loc[strcspn(loc, "\n")] = '\0';
	char *disc = strstr(loc, " (discriminator ");
	if (disc)
		*disc = '\0';
}

/* Runs `addr2line -a -f -i -e bin` on up to BATCH addresses; -a prints each
 * address first, which is how the answers are told apart. */
static void addr2line_batch(const char *bin, const uint64_t *addrs, size_t n,
			    struct a2l_answer *out)
{
	char *cmd = NULL;
	size_t len = 0;
	FILE *c = open_memstream(&cmd, &len);
	fprintf(c, "addr2line -a -f -i -e '%s'", bin);
	for (size_t i = 0; i < n; i++)
		fprintf(c, " 0x%" PRIx64, addrs[i]);
	fclose(c);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "cannot run addr2line");
	char line[2048];
	long cur = -1;
	while (fgets(line, sizeof(line), p)) {
		if (strncmp(line, "0x", 2) == 0 && strlen(line) == 19) {
			cur++;
			cr_assert_lt(cur, (long)n);
			out[cur].n = 0;
			continue;
		}
		cr_assert_geq(cur, 0);
		struct a2l_answer *a = &out[cur];
		cr_assert_lt(a->n, MAX_FRAMES);
		struct a2l_frame *f = &a->f[a->n++];
		snprintf(f->name, sizeof(f->name), "%.*s", (int)strcspn(line, "\n"), line);
		cr_assert_not_null(fgets(line, sizeof(line), p), "addr2line output cut short");
		chomp_location(line);
		snprintf(f->loc, sizeof(f->loc), "%.1023s", line);
	}
	cr_assert_eq(pclose(p), 0, "addr2line failed");
	free(cmd);
	cr_assert_eq(cur + 1, (long)n, "addr2line answered %ld of %zu addresses", cur + 1, n);
}

/* A frame printed the way addr2line prints it. */
static const char *frame_name(const struct sym_frame *f)
{
	return f->kind == FRAME_UNKNOWN ? "??" : f->name;
}

static void frame_location(const struct sym_frame *f, char *buf, size_t size)
{
	if (f->kind == FRAME_UNKNOWN && f->file[0] == '\0')
		snprintf(buf, size, "??:0");
	else if (f->line == 0)
		snprintf(buf, size, "%s:?", f->file[0] ? f->file : "??");
	else
		snprintf(buf, size, "%s:%" PRIu32, f->file[0] ? f->file : "??", f->line);
}

/* Resolves `addr` and checks every frame against addr2line's answer for the
 * address actually looked up (addr - 1 for a return address). */
static void expect_like_addr2line(struct symbolizer *s, const char *bin, uint64_t addr,
				  bool is_return, const struct a2l_answer *want)
{
	struct sym_frame f[MAX_FRAMES];
	int n = symbols_file(s, bin, addr, is_return, f, MAX_FRAMES);
	cr_assert_eq(n, want->n, "%s 0x%" PRIx64 "%s: %d frames, addr2line has %d", bin, addr,
		     is_return ? " (return)" : "", n, want->n);
	for (int i = 0; i < n; i++) {
		char loc[1024];
		frame_location(&f[i], loc, sizeof(loc));
		cr_assert_str_eq(frame_name(&f[i]), want->f[i].name, "0x%" PRIx64 " frame %d", addr, i);
		/* A file symbol with an empty name: addr2line prints ":?", a frame
		 * cannot tell "" from unknown and prints "??:?" (documented). */
		const char *want_loc = strcmp(want->f[i].loc, ":?") == 0 ? "??:?" : want->f[i].loc;
		cr_assert_str_eq(loc, want_loc, "0x%" PRIx64 " frame %d (%s)", addr, i,
				 want->f[i].name);
		cr_assert_eq(f[i].kind, f[i].kind == FRAME_UNKNOWN ? FRAME_UNKNOWN
				 : i == n - 1			  ? FRAME_USER
								  : FRAME_INLINED);
	}
}

/* Every `step` bytes of .text of `bin`, plus the byte after its end. */
static size_t text_addresses(const char *bin, unsigned step, uint64_t **out)
{
	elf_version(EV_CURRENT);
	int fd = open(bin, O_RDONLY);
	cr_assert_geq(fd, 0, "cannot open %s", bin);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	uint64_t lo = 0, hi = 0;
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text") == 0) {
			lo = sh.sh_addr;
			hi = sh.sh_addr + sh.sh_size;
		}
	}
	elf_end(elf);
	close(fd);
	cr_assert_lt(lo, hi, "%s has no .text", bin);
	size_t n = 0;
	*out = malloc(((hi - lo) / step + 2) * sizeof(**out));
	for (uint64_t a = lo; a < hi; a += step)
		(*out)[n++] = a;
	(*out)[n++] = hi;
	return n;
}

static void cross_check(const char *bin, unsigned step, bool is_return)
{
	struct symbolizer *s = symbols_new();
	uint64_t *addrs;
	size_t n = text_addresses(bin, step, &addrs);
	struct a2l_answer *want = malloc(BATCH * sizeof(*want));
	for (size_t i = 0; i < n; i += BATCH) {
		size_t m = n - i < BATCH ? n - i : BATCH;
		uint64_t looked_up[BATCH];
		for (size_t j = 0; j < m; j++)
			looked_up[j] = addrs[i + j] - (is_return ? 1 : 0);
		addr2line_batch(bin, looked_up, m, want);
		for (size_t j = 0; j < m; j++)
			expect_like_addr2line(s, bin, addrs[i + j], is_return, &want[j]);
	}
	free(want);
	free(addrs);
	symbols_free(s);
}

/* ---- helpers ----------------------------------------------------------- */

static uint64_t nm_address(const char *bin, const char *symbol)
{
	char cmd[1024], line[1024];
	snprintf(cmd, sizeof(cmd), "nm '%s'", bin);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	uint64_t addr = 0;
	while (fgets(line, sizeof(line), p)) {
		char type, name[512];
		unsigned long long a;
		if (sscanf(line, "%llx %c %511s", &a, &type, name) == 3 && strcmp(name, symbol) == 0)
			addr = a;
	}
	pclose(p);
	cr_assert_neq(addr, 0, "%s not found in %s", symbol, bin);
	return addr;
}

struct served {
	pid_t pid;
	int n;
	char names[8][64];
	uint64_t addrs[8];
};

/* Starts `bin serve` and reads the "name 0xaddr" lines it prints. */
static void serve_start(const char *bin, struct served *sv)
{
	int fds[2];
	cr_assert_eq(pipe(fds), 0);
	sv->pid = fork();
	cr_assert_geq(sv->pid, 0);
	if (sv->pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		execl(bin, bin, "serve", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	FILE *f = fdopen(fds[0], "r");
	char line[256];
	sv->n = 0;
	while (sv->n < 5 && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		if (sscanf(line, "%63s %llx", sv->names[sv->n], &a) == 2)
			sv->addrs[sv->n++] = a;
	}
	fclose(f);
	cr_assert_eq(sv->n, 5, "%s serve printed %d addresses", bin, sv->n);
}

static void serve_stop(struct served *sv)
{
	kill(sv->pid, SIGKILL);
	waitpid(sv->pid, NULL, 0);
}

/* Start address and path of the mapping at file offset 0 of the first
 * mapped file whose path contains `needle`. */
static bool find_mapping(pid_t pid, const char *needle, uint64_t *start, char *path, size_t size)
{
	char maps[64], line[1024];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(maps, "r");
	cr_assert_not_null(f);
	bool found = false;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, off;
		int pos = 0;
		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %n", &lo, &off, &pos) < 2 || !pos)
			continue;
		char *p = line + pos;
		p[strcspn(p, "\n")] = '\0';
		if (off == 0 && strstr(p, needle)) {
			*start = lo;
			snprintf(path, size, "%s", p);
			found = true;
		}
	}
	fclose(f);
	return found;
}

static struct sym_frame resolve_user(struct symbolizer *s, pid_t pid, uint64_t addr, bool ret)
{
	struct sym_frame f[SYM_MAX_INLINE];
	int n = symbols_user(s, pid, addr, ret, f, SYM_MAX_INLINE);
	cr_assert_geq(n, 1);
	return f[n - 1]; /* the out-of-line function */
}

static char *temp_copy(const char *src, const char *suffix)
{
	char *dst;
	cr_assert_neq(asprintf(&dst, "/tmp/sonde-test-%d-%s", (int)getpid(), suffix), -1);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", src, dst);
	cr_assert_eq(system(cmd), 0);
	return dst;
}

/* ---- tests ------------------------------------------------------------- */

Test(symbols, symtarget_matches_addr2line_everywhere_in_text)
{
	cross_check(SYMTARGET, 1, false);
}

Test(symbols, return_addresses_use_the_call_site)
{
	cross_check(SYMTARGET, 3, true);
}

Test(symbols, shared_library_matches_addr2line)
{
	cross_check(SYMLIB, 1, false);
	struct symbolizer *s = symbols_new();
	struct sym_frame f[4];
	cr_assert_eq(symbols_file(s, SYMLIB, nm_address(SYMLIB, "symlib_sum"), false, f, 4), 1);
	cr_assert_str_eq(f[0].name, "symlib_sum");
	cr_assert_str_eq(f[0].module, SYMLIB);
	cr_assert(strstr(f[0].file, "libsymlib.c"));
	symbols_free(s);
}

/* Scans symtarget_outer for the inlined code and checks the whole chain. */
Test(symbols, inline_chain_innermost_first)
{
	struct symbolizer *s = symbols_new();
	uint64_t outer = nm_address(SYMTARGET, "symtarget_outer");
	uint64_t addrs[64];
	for (int i = 0; i < 64; i++)
		addrs[i] = outer + (uint64_t)i;
	struct a2l_answer *want = malloc(64 * sizeof(*want));
	addr2line_batch(SYMTARGET, addrs, 64, want);
	int inlined = 0;
	for (int i = 0; i < 64; i++) {
		if (want[i].n < 2 || strcmp(want[i].f[0].name, "symtarget_inlined") != 0)
			continue;
		struct sym_frame f[SYM_MAX_INLINE];
		int n = symbols_file(s, SYMTARGET, addrs[i], false, f, SYM_MAX_INLINE);
		cr_assert_geq(n, 2);
		cr_assert_eq(f[0].kind, FRAME_INLINED);
		cr_assert_str_eq(f[0].name, "symtarget_inlined");
		cr_assert_eq(f[n - 1].kind, FRAME_USER);
		cr_assert_str_eq(f[n - 1].name, "symtarget_outer");
		cr_assert_gt(f[n - 1].line, 0);
		expect_like_addr2line(s, SYMTARGET, addrs[i], false, &want[i]);
		inlined++;
	}
	cr_assert_gt(inlined, 0, "addr2line shows no inlined code in symtarget_outer");
	free(want);
	symbols_free(s);
}

Test(symbols, live_process_addresses)
{
	struct served sv;
	serve_start(SYMTARGET, &sv);
	struct symbolizer *s = symbols_new();
	cr_assert_eq(symbols_note_process(s, sv.pid), 0);
	for (int i = 0; i < sv.n; i++) {
		struct sym_frame f = resolve_user(s, sv.pid, sv.addrs[i], false);
		cr_expect_str_eq(f.name, sv.names[i], "address 0x%" PRIx64, sv.addrs[i]);
		cr_expect_eq(f.kind, FRAME_USER);
		cr_expect_gt(f.line, 0);
		const char *want_module = strcmp(sv.names[i], "symlib_sum") == 0 ? "libsymlib.so"
										 : "symtarget";
		cr_expect(strstr(f.module, want_module), "module %s for %s", f.module, sv.names[i]);
		/* As a return address one byte further, it is still the same function. */
		cr_expect_str_eq(resolve_user(s, sv.pid, sv.addrs[i] + 1, true).name, sv.names[i]);
	}
	serve_stop(&sv);

	/* The process is gone: its maps were kept, answers stay the same. */
	struct sym_frame f = resolve_user(s, sv.pid, sv.addrs[0], false);
	cr_expect_str_eq(f.name, sv.names[0]);
	/* An exec replaced the address space: nothing is known any more. */
	symbols_note_exec(s, sv.pid);
	f = resolve_user(s, sv.pid, sv.addrs[0], false);
	cr_expect_eq(f.kind, FRAME_UNKNOWN);
	cr_expect_str_eq(f.name, "[unknown]");

	struct symbols_stats st;
	symbols_get_stats(s, &st);
	cr_expect_eq(st.binaries_opened, 2, "symtarget and libsymlib.so, once each");
	cr_expect_geq(st.maps_reads, 1);
	cr_expect_eq(st.lookups, (uint64_t)sv.n * 2 + 2);
	cr_expect_eq(st.unresolved, 1);
	symbols_free(s);
}

Test(symbols, libc_gets_lines_from_separate_debug_info)
{
	if (access("/usr/lib/debug/.build-id", F_OK) != 0)
		cr_skip_test("no /usr/lib/debug/.build-id: install libc6-dbg for this test");
	struct served sv;
	serve_start(SYMTARGET, &sv);
	uint64_t base;
	char libc[512];
	cr_assert(find_mapping(sv.pid, "/libc.so", &base, libc, sizeof(libc)));
	/* libc ships without .symtab: getpid comes from the dynamic symbols. */
	char cmd[1024], line[512];
	snprintf(cmd, sizeof(cmd), "nm -D '%s'", libc);
	FILE *p = popen(cmd, "r");
	uint64_t vaddr = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    strncmp(name, "getpid@", 7) == 0)
			vaddr = a;
	}
	pclose(p);
	cr_assert_neq(vaddr, 0, "getpid not in %s", libc);

	struct symbolizer *s = symbols_new();
	/* libc's first PT_LOAD is at vaddr 0: runtime address = base + vaddr. */
	struct sym_frame live = resolve_user(s, sv.pid, base + vaddr, false);
	struct sym_frame file[4];
	cr_assert_eq(symbols_file(s, libc, vaddr, false, file, 4), 1);
	serve_stop(&sv);
	cr_expect(strstr(live.name, "getpid"), "name %s", live.name);
	cr_expect_neq(live.file[0], '\0', "no source file for %s", live.name);
	cr_expect_gt(live.line, 0);
	cr_expect_str_eq(live.name, file[0].name);
	cr_expect_str_eq(live.file, file[0].file);
	cr_expect_eq(live.line, file[0].line);
	symbols_free(s);
}

/* File names are left out on purpose: binutils 2.40 reads DWARF 5 line
 * rows whose file register still holds its initial 1 as file entry 0, which
 * is wrong for code from included files (see bench/README.md); function
 * names and line numbers do not depend on it. */
Test(symbols, libc_names_and_lines_match_addr2line)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	if (access("/usr/lib/debug/.build-id", F_OK) != 0 || access(libc, R_OK) != 0)
		cr_skip_test("needs %s and libc6-dbg", libc);
	uint64_t *addrs;
	size_t n = text_addresses(libc, 4099, &addrs);
	struct a2l_answer *want = malloc(BATCH * sizeof(*want));
	struct symbolizer *s = symbols_new();
	for (size_t i = 0; i < n; i += BATCH) {
		size_t m = n - i < BATCH ? n - i : BATCH;
		addr2line_batch(libc, addrs + i, m, want);
		for (size_t j = 0; j < m; j++) {
			struct sym_frame f[MAX_FRAMES];
			int k = symbols_file(s, libc, addrs[i + j], false, f, MAX_FRAMES);
			cr_assert_eq(k, want[j].n, "0x%" PRIx64, addrs[i + j]);
			for (int x = 0; x < k; x++) {
				char loc[1024];
				frame_location(&f[x], loc, sizeof(loc));
				cr_assert_str_eq(frame_name(&f[x]), want[j].f[x].name);
				cr_assert_str_eq(strrchr(loc, ':'), strrchr(want[j].f[x].loc, ':'),
						 "0x%" PRIx64 ": %s vs %s", addrs[i + j], loc,
						 want[j].f[x].loc);
			}
		}
	}
	symbols_free(s);
	free(want);
	free(addrs);
}

Test(symbols, kernel_symbol_from_kallsyms)
{
	if (geteuid() != 0)
		cr_skip_test("kallsyms addresses need root");
	FILE *f = fopen("/proc/kallsyms", "r");
	cr_assert_not_null(f);
	char line[512];
	uint64_t addr = 0;
	while (!addr && fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    strcmp(name, "schedule") == 0)
			addr = a;
	}
	fclose(f);
	if (!addr)
		cr_skip_test("kallsyms hides addresses (kptr_restrict)");
	struct symbolizer *s = symbols_new();
	struct sym_frame k;
	symbols_kernel(s, addr + 4, &k);
	cr_expect_eq(k.kind, FRAME_KERNEL);
	cr_expect_str_eq(k.name, "schedule");
	cr_expect_str_eq(k.module, "[kernel.kallsyms]");
	symbols_kernel(s, 0, &k);
	cr_expect_eq(k.kind, FRAME_UNKNOWN);
	cr_expect_str_eq(k.name, "[unknown]");
	symbols_kernel(s, UINT64_MAX, &k);
	cr_expect_eq(k.kind, FRAME_UNKNOWN);
	symbols_free(s);
}

Test(symbols, bogus_input_gives_unknown_frames)
{
	struct symbolizer *s = symbols_new();
	struct sym_frame f[SYM_MAX_INLINE];
	pid_t self = getpid();
	uint64_t bogus[] = { 0, 1, 0xdead00000000ULL, UINT64_MAX, UINT64_MAX - 4096 };
	for (size_t i = 0; i < sizeof(bogus) / sizeof(*bogus); i++) {
		for (int ret = 0; ret < 2; ret++) {
			cr_assert_eq(symbols_user(s, self, bogus[i], ret, f, SYM_MAX_INLINE), 1);
			cr_expect_eq(f[0].kind, FRAME_UNKNOWN);
			cr_expect_str_eq(f[0].name, "[unknown]");
			cr_expect_str_eq(f[0].file, "");
		}
	}
	/* A pid that never existed (above the kernel's pid_max limit). */
	cr_assert_eq(symbols_user(s, 4194304 + 17, 0x400000, false, f, SYM_MAX_INLINE), 1);
	cr_expect_eq(f[0].kind, FRAME_UNKNOWN);
	cr_expect_eq(symbols_note_process(s, 4194304 + 17), -1);
	/* Anonymous memory has no module. */
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert_neq(anon, MAP_FAILED);
	cr_assert_eq(symbols_user(s, self, (uintptr_t)anon + 16, false, f, SYM_MAX_INLINE), 1);
	cr_expect_eq(f[0].kind, FRAME_UNKNOWN);
	munmap(anon, 4096);
	/* max == 0 fills nothing. */
	cr_expect_eq(symbols_user(s, self, 0, false, f, 0), 0);
	/* Files that are not ELF, or not there. */
	cr_expect_eq(symbols_file(s, "/nonexistent/binary", 0x1000, false, f, 4), -1);
	cr_expect_eq(symbols_file(s, SRC_DIR "/Makefile", 0x1000, false, f, 4), -1);
	cr_expect_eq(symbols_file(s, "/proc/self/maps", 0x1000, false, f, 4), -1);
	/* An address outside every section of a real binary. */
	cr_assert_eq(symbols_file(s, SYMTARGET, 0x7fff00000000ULL, false, f, 4), 1);
	cr_expect_eq(f[0].kind, FRAME_UNKNOWN);
	cr_expect_str_eq(f[0].name, "[symtarget+0x7fff00000000]");
	symbols_free(s);
}

Test(symbols, vdso_is_named_or_resolved)
{
	struct symbolizer *s = symbols_new();
	uint64_t base;
	char path[64];
	if (!find_mapping(getpid(), "[vdso]", &base, path, sizeof(path)))
		cr_skip_test("no vDSO mapped");
	for (uint64_t off = 0; off < 8192; off += 64) {
		struct sym_frame f[SYM_MAX_INLINE];
		int n = symbols_user(s, getpid(), base + off, false, f, SYM_MAX_INLINE);
		cr_assert_geq(n, 1);
		if (f[0].kind == FRAME_UNKNOWN)
			cr_expect(f[0].name[0] == '[', "unknown vdso frame named %s", f[0].name);
		else
			cr_expect_str_eq(f[0].module, "[vdso]");
	}
	symbols_free(s);
}

Test(symbols, stripped_binary_never_crashes)
{
	char *stripped = temp_copy(SYMTARGET, "stripped");
	char *nodebug = temp_copy(SYMTARGET, "nodebug");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "strip '%s' && strip --strip-debug '%s'", stripped, nodebug);
	cr_assert_eq(system(cmd), 0);

	/* Without DWARF the names still come from .symtab, like addr2line's. */
	cross_check(nodebug, 2, false);
	/* Fully stripped: .dynsym names or "[file+0xoffset]", as addr2line's ??. */
	cross_check(stripped, 2, false);
	struct symbolizer *s = symbols_new();
	struct sym_frame f[4];
	uint64_t plain = nm_address(SYMTARGET, "symtarget_plain");
	cr_assert_eq(symbols_file(s, stripped, plain, false, f, 4), 1);
	char want[256];
	snprintf(want, sizeof(want), "[%s+0x%" PRIx64 "]", strrchr(stripped, '/') + 1, plain);
	cr_expect(f[0].kind == FRAME_UNKNOWN && strcmp(f[0].name, want) == 0,
		  "%s resolved to %s, expected %s", stripped, f[0].name, want);
	cr_assert_eq(symbols_file(s, nodebug, plain, false, f, 4), 1);
	cr_expect_str_eq(f[0].name, "symtarget_plain");
	cr_expect_str_eq(f[0].file, "");
	symbols_free(s);
	unlink(stripped);
	unlink(nodebug);
	free(stripped);
	free(nodebug);
}

/* A mapping made after the maps were read (dlopen, mmap) is found by the
 * one re-read a miss triggers. */
Test(symbols, new_mapping_is_found_by_rereading_maps)
{
	struct symbolizer *s = symbols_new();
	cr_assert_eq(symbols_note_process(s, getpid()), 0);
	int fd = open(SYMLIB, O_RDONLY);
	cr_assert_geq(fd, 0);
	struct stat st;
	fstat(fd, &st);
	void *base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	cr_assert_neq(base, MAP_FAILED);
	close(fd);
	/* The whole file mapped from offset 0; in this library's text segment
	 * file offsets equal virtual addresses. */
	uint64_t vaddr = nm_address(SYMLIB, "symlib_sum");
	struct sym_frame f = resolve_user(s, getpid(), (uintptr_t)base + vaddr, false);
	cr_expect_str_eq(f.name, "symlib_sum");
	struct symbols_stats stats;
	symbols_get_stats(s, &stats);
	cr_expect_eq(stats.maps_reads, 2);
	munmap(base, (size_t)st.st_size);
	symbols_free(s);
}

Test(symbols, deleted_binary_of_a_live_process)
{
	char *copy = temp_copy(SYMTARGET, "deleted");
	struct served sv;
	serve_start(copy, &sv);
	unlink(copy);
	struct symbolizer *s = symbols_new();
	for (int i = 0; i < sv.n; i++)
		cr_expect_str_eq(resolve_user(s, sv.pid, sv.addrs[i], false).name, sv.names[i]);
	serve_stop(&sv);
	symbols_free(s);
	free(copy);
}

Test(symbols, same_file_under_two_names_is_parsed_once)
{
	char *link;
	cr_assert_neq(asprintf(&link, "/tmp/sonde-test-%d-link", (int)getpid()), -1);
	unlink(link);
	cr_assert_eq(symlink(SYMTARGET, link), 0);
	struct symbolizer *s = symbols_new();
	struct sym_frame a[4], b[4];
	uint64_t plain = nm_address(SYMTARGET, "symtarget_plain");
	cr_assert_eq(symbols_file(s, SYMTARGET, plain, false, a, 4), 1);
	cr_assert_eq(symbols_file(s, link, plain, false, b, 4), 1);
	cr_expect_eq(a[0].name, b[0].name, "interned strings are shared");
	for (int i = 0; i < 1000; i++)
		symbols_file(s, SYMTARGET, plain, false, a, 4);
	struct symbols_stats st;
	symbols_get_stats(s, &st);
	cr_expect_eq(st.binaries_opened, 1);
	cr_expect_eq(st.lookups, 1002);
	cr_expect_eq(st.unresolved, 0);
	symbols_free(s);
	unlink(link);
	free(link);
}
