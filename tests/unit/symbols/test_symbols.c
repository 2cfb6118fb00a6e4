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
#include "util.h"

#define SYMTARGET TARGET_DIR "/symtarget"
#define SYMLIB TARGET_DIR "/libsymlib.so"
#define STRIPSYM_FULL TARGET_DIR "/stripsym-full"       /* all symbols, DWARF */
#define STRIPSYM_DWARF TARGET_DIR "/stripsym"           /* hidden_hot's symbol stripped */
#define STRIPSYM_NODEBUG TARGET_DIR "/stripsym-nodebug" /* ... and no DWARF */
#define LIBSQLITE "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0"
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

/* The same, but file names are left out: only function names and line
 * numbers (see libc_names_and_lines_match_addr2line). */
static void expect_names_and_lines_like_addr2line(struct symbolizer *s, const char *bin,
						  uint64_t addr, bool is_return,
						  const struct a2l_answer *want)
{
	struct sym_frame f[MAX_FRAMES];
	int n = symbols_file(s, bin, addr, is_return, f, MAX_FRAMES);
	cr_assert_eq(n, want->n, "0x%" PRIx64, addr);
	for (int x = 0; x < n; x++) {
		char loc[1024];
		frame_location(&f[x], loc, sizeof(loc));
		cr_assert_str_eq(frame_name(&f[x]), want->f[x].name, "0x%" PRIx64, addr);
		cr_assert_str_eq(strrchr(loc, ':'), strrchr(want->f[x].loc, ':'),
				 "0x%" PRIx64 ": %s vs %s", addr, loc, want->f[x].loc);
	}
}

typedef void like_addr2line_fn(struct symbolizer *s, const char *bin, uint64_t addr,
			       bool is_return, const struct a2l_answer *want);

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

/* ---- the naming rule, from binutils' view of the binary ----------------- */

/* Inside a symbol sonde answers as addr2line does. Past a symbol's end
 * addr2line still names the symbol; sonde names the function the unwind
 * table says holds the address. The expectation is built from other
 * tools' output: symbols from `nm -S` (of the file sonde takes them from),
 * FDE ranges from `readelf --debug-dump=frames`, file offsets from the
 * program headers. */
struct nm_sym {
	uint64_t value, size; /* size 0: nm printed none */
	char name[256];
};

/* objdump's "ADDR <NAME@plt>:" labels of a binary's PLT sections; returns
 * how many, NAME@plt in names[i] at addrs[i]. */
static size_t objdump_plt_labels(const char *bin, uint64_t *addrs, char (*names)[256], size_t max)
{
	char cmd[1024], line[1024];
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt -j .plt.sec -j .plt.got '%s' 2>/dev/null", bin);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	size_t n = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char name[256];
		if (n < max && sscanf(line, "%llx <%255[^>]>:", &a, name) == 2 &&
		    strstr(name, "@plt") && !strchr(name, '+') && !strchr(name, '-')) {
			addrs[n] = a;
			snprintf(names[n], sizeof(names[n]), "%s", name);
			n++;
		}
	}
	pclose(p);
	return n;
}

/* Code the file names without a symbol (sonde's pltnames): .init, .fini
 * and each PLT entry objdump names. */
struct file_named {
	uint64_t start, end;
	char name[256];
};

struct symbol_view {
	struct nm_sym *syms; /* code symbols by value */
	size_t nsyms;
	struct { uint64_t start, end; } *fdes;
	size_t nfdes;
	char label[256]; /* the binary's base name */
	struct { uint64_t offset, vaddr, filesz; } segs[16];
	size_t nsegs;
	struct file_named *named;
	size_t nnamed;
};

static void file_named_add(struct symbol_view *v, uint64_t start, uint64_t end, const char *name)
{
	v->named = realloc(v->named, (v->nnamed + 1) * sizeof(*v->named));
	v->named[v->nnamed].start = start;
	v->named[v->nnamed].end = end;
	snprintf(v->named[v->nnamed++].name, sizeof(v->named[0].name), "%s", name);
}

/* .init and .fini by their sections, PLT entries by objdump's labels, each
 * as long as its section's entries. */
static void file_named_load(struct symbol_view *v, const char *bin, Elf *elf)
{
	struct { uint64_t lo, hi, entsize; } plts[3];
	size_t nplts = 0, shstrndx;
	cr_assert_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
	for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (strcmp(name, ".init") == 0 || strcmp(name, ".fini") == 0)
			file_named_add(v, sh.sh_addr, sh.sh_addr + sh.sh_size,
				       name[1] == 'i' ? "_init" : "_fini");
		else if (nplts < 3 && (strcmp(name, ".plt") == 0 || strcmp(name, ".plt.sec") == 0 ||
				       strcmp(name, ".plt.got") == 0)) {
			plts[nplts].lo = sh.sh_addr;
			plts[nplts].hi = sh.sh_addr + sh.sh_size;
			plts[nplts++].entsize = sh.sh_entsize ? sh.sh_entsize : 16;
		}
	}
	enum { MAX = 4096 };
	uint64_t *addrs = malloc(MAX * sizeof(*addrs));
	char (*names)[256] = malloc(MAX * sizeof(*names));
	size_t n = objdump_plt_labels(bin, addrs, names, MAX);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < nplts; j++)
			if (addrs[i] >= plts[j].lo && addrs[i] < plts[j].hi)
				file_named_add(v, addrs[i], addrs[i] + plts[j].entsize, names[i]);
	free(names);
	free(addrs);
}

static void read_nm(const char *cmd, struct symbol_view *v)
{
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p, "cannot run %s", cmd);
	char line[1024];
	while (fgets(line, sizeof(line), p)) {
		unsigned long long value, size = 0;
		char type, name[256];
		if (sscanf(line, "%llx %llx %c %255s", &value, &size, &type, name) != 4) {
			size = 0;
			if (sscanf(line, "%llx %c %255s", &value, &type, name) != 3)
				continue;
		}
		if (!strchr("tTwWiI", type))
			continue;
		v->syms = realloc(v->syms, (v->nsyms + 1) * sizeof(*v->syms));
		struct nm_sym *sym = &v->syms[v->nsyms++];
		sym->value = value;
		sym->size = size;
		snprintf(sym->name, sizeof(sym->name), "%s", name);
		/* nm -D prints versions ("memcpy@@GLIBC_2.14"); ELF names have none. */
		sym->name[strcspn(sym->name, "@")] = '\0';
	}
	pclose(p);
}

/* `symfile` is where sonde takes symbols from: the binary itself, or its
 * separate debug file when that has the full .symtab. */
static void symbol_view_load(const char *bin, const char *symfile, struct symbol_view *v)
{
	memset(v, 0, sizeof(*v));
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "nm -S -n '%s' 2>/dev/null", symfile);
	read_nm(cmd, v);
	if (v->nsyms == 0) { /* no .symtab: the dynamic symbols */
		snprintf(cmd, sizeof(cmd), "nm -D -S -n '%s' 2>/dev/null", symfile);
		read_nm(cmd, v);
	}
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s' 2>/dev/null", bin);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	char line[1024];
	while (fgets(line, sizeof(line), p)) {
		unsigned long long lo, hi;
		const char *pc = strstr(line, " FDE ") ? strstr(line, "pc=") : NULL;
		if (!pc || sscanf(pc, "pc=%llx..%llx", &lo, &hi) != 2 || lo == 0 || hi <= lo)
			continue;
		v->fdes = realloc(v->fdes, (v->nfdes + 1) * sizeof(*v->fdes));
		v->fdes[v->nfdes].start = lo;
		v->fdes[v->nfdes++].end = hi;
	}
	pclose(p);
	cr_assert_gt(v->nfdes, 0, "readelf shows no FDE in %s", bin);
	snprintf(v->label, sizeof(v->label), "%s", strrchr(bin, '/') ? strrchr(bin, '/') + 1 : bin);
	elf_version(EV_CURRENT);
	int fd = open(bin, O_RDONLY);
	cr_assert_geq(fd, 0);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t phnum = 0;
	elf_getphdrnum(elf, &phnum);
	for (size_t i = 0; i < phnum && v->nsegs < 16; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			v->segs[v->nsegs].offset = ph.p_offset;
			v->segs[v->nsegs].vaddr = ph.p_vaddr;
			v->segs[v->nsegs++].filesz = ph.p_filesz;
		}
	}
	file_named_load(v, bin, elf);
	elf_end(elf);
	close(fd);
}

static void symbol_view_free(struct symbol_view *v)
{
	free(v->syms);
	free(v->fdes);
	free(v->named);
}

/* "[label+0xOFFSET]" of a virtual address, as sonde names unknown code. */
static void offset_name(const struct symbol_view *v, uint64_t vaddr, char *buf, size_t size)
{
	uint64_t off = vaddr;
	for (size_t i = 0; i < v->nsegs; i++)
		if (vaddr - v->segs[i].vaddr < v->segs[i].filesz)
			off = vaddr - v->segs[i].vaddr + v->segs[i].offset;
	snprintf(buf, size, "[%.200s+0x%" PRIx64 "]", v->label, off);
}

static bool fde_holding(const struct symbol_view *v, uint64_t pc, uint64_t *start)
{
	for (size_t i = 0; i < v->nfdes; i++)
		if (pc >= v->fdes[i].start && pc < v->fdes[i].end) {
			*start = v->fdes[i].start;
			return true;
		}
	return false;
}

static bool sym_covers(const struct nm_sym *sym, uint64_t pc)
{
	return pc == sym->value || pc - sym->value < sym->size;
}

enum expectation {
	EXPECT_ADDR2LINE,   /* addr2line's answer */
	EXPECT_SYMBOL,      /* one frame named after a symbol (FRAME_USER) */
	EXPECT_UNNAMED,     /* an unnamed function: "[label+0xSTART]" */
	EXPECT_NO_FUNCTION, /* no function at all: "[label+0xADDRESS]" */
};

/* What the rule says about one address, given addr2line's answer; `name`
 * is set for all but EXPECT_ADDR2LINE. */
static enum expectation rule_expects(const struct symbol_view *v, uint64_t addr, bool is_return,
				     const struct a2l_answer *want, char *name, size_t size)
{
	uint64_t pc = addr - (is_return ? 1 : 0);
	const char *a2l_name = want->f[want->n - 1].name;
	/* The nearest symbols at or below pc (all of that value). */
	size_t hi = 0;
	while (hi < v->nsyms && v->syms[hi].value <= pc)
		hi++;
	size_t lo = hi;
	while (lo > 0 && v->syms[lo - 1].value == v->syms[hi - 1].value)
		lo--;
	/* Code the file names without a symbol, where no symbol starts. */
	for (size_t i = 0; i < v->nnamed; i++) {
		bool symbol_there = false;
		for (size_t j = 0; j < v->nsyms; j++)
			symbol_there |= v->syms[j].value == v->named[i].start;
		if (pc >= v->named[i].start && pc < v->named[i].end && !symbol_there) {
			snprintf(name, size, "%s", v->named[i].name);
			return EXPECT_SYMBOL;
		}
	}
	bool nearest_sizeless = hi > lo, named_by_nearest = false;
	for (size_t i = lo; i < hi; i++) {
		if (sym_covers(&v->syms[i], pc))
			return EXPECT_ADDR2LINE; /* inside a symbol */
		nearest_sizeless &= v->syms[i].size == 0;
		named_by_nearest |= strcmp(v->syms[i].name, a2l_name) == 0;
	}
	offset_name(v, addr, name, size);
	uint64_t start;
	bool in_fde = fde_holding(v, pc, &start);
	if (strcmp(a2l_name, "??") == 0) { /* no symbol in its section */
		if (!in_fde)
			return EXPECT_NO_FUNCTION;
		offset_name(v, start, name, size);
		return EXPECT_UNNAMED;
	}
	if (!named_by_nearest) /* DWARF named it, and sonde reads the same DWARF */
		return EXPECT_ADDR2LINE;
	for (size_t i = 0; i < lo; i++) /* an earlier symbol reaching over pc */
		if (v->syms[i].size && sym_covers(&v->syms[i], pc)) {
			snprintf(name, size, "%s", v->syms[i].name);
			return EXPECT_SYMBOL;
		}
	if (!in_fde)
		return nearest_sizeless ? EXPECT_ADDR2LINE : EXPECT_NO_FUNCTION;
	if (nearest_sizeless && v->syms[lo].value >= start)
		return EXPECT_ADDR2LINE; /* a sizeless symbol inside the function */
	for (size_t i = 0; i < v->nsyms; i++)
		if (v->syms[i].value == start) {
			snprintf(name, size, "%s", v->syms[i].name);
			return EXPECT_SYMBOL;
		}
	offset_name(v, start, name, size);
	return EXPECT_UNNAMED;
}

/* What a cross check holds for all of a binary's addresses: sonde's
 * symbolizer, the binary, its symbols as the rule reads them, whether the
 * addresses are return addresses, and how an address the rule leaves to
 * addr2line is checked. */
struct cross_checking {
	struct symbolizer *s;
	const char *bin;
	const struct symbol_view *v;
	bool is_return;
	like_addr2line_fn *like;
};

/* Checks one address against the rule; returns true when sonde names a
 * function there that addr2line names after another symbol. */
static bool expect_by_rule(const struct cross_checking *c, uint64_t addr,
			   const struct a2l_answer *want)
{
	struct symbolizer *s = c->s;
	const char *bin = c->bin;
	bool is_return = c->is_return;
	char name[512];
	enum expectation e = rule_expects(c->v, addr, is_return, want, name, sizeof(name));
	if (e == EXPECT_ADDR2LINE) {
		c->like(s, bin, addr, is_return, want);
		return false;
	}
	struct sym_frame f[MAX_FRAMES];
	int n = symbols_file(s, bin, addr, is_return, f, MAX_FRAMES);
	cr_assert_eq(n, 1, "0x%" PRIx64 ": %d frames", addr, n);
	cr_assert_str_eq(f[0].name, name, "0x%" PRIx64 " (addr2line: %s)", addr,
			 want->f[want->n - 1].name);
	cr_assert_eq(f[0].unnamed_function, e == EXPECT_UNNAMED, "0x%" PRIx64, addr);
	cr_assert_eq(f[0].kind, e == EXPECT_SYMBOL ? FRAME_USER : FRAME_UNKNOWN, "0x%" PRIx64,
		     addr);
	return e != EXPECT_NO_FUNCTION && strcmp(want->f[want->n - 1].name, "??") != 0;
}

/* Every `step` bytes of .text against addr2line and the rule; returns at
 * how many addresses sonde names a function addr2line names after another
 * symbol (past that symbol's end). */
static size_t cross_check_with(const char *bin, const char *symfile, unsigned step,
			       bool is_return, like_addr2line_fn *like)
{
	struct symbolizer *s = symbols_new();
	struct symbol_view v;
	symbol_view_load(bin, symfile, &v);
	uint64_t *addrs;
	size_t n = text_addresses(bin, step, &addrs), differ = 0;
	struct a2l_answer *want = malloc(BATCH * sizeof(*want));
	struct cross_checking c = {.s = s, .bin = bin, .v = &v, .is_return = is_return, .like = like};
	for (size_t i = 0; i < n; i += BATCH) {
		size_t m = n - i < BATCH ? n - i : BATCH;
		uint64_t looked_up[BATCH];
		for (size_t j = 0; j < m; j++)
			looked_up[j] = addrs[i + j] - (is_return ? 1 : 0);
		addr2line_batch(bin, looked_up, m, want);
		for (size_t j = 0; j < m; j++)
			differ += expect_by_rule(&c, addrs[i + j], &want[j]);
	}
	free(want);
	free(addrs);
	symbol_view_free(&v);
	symbols_free(s);
	return differ;
}

static size_t cross_check(const char *bin, unsigned step, bool is_return)
{
	return cross_check_with(bin, bin, step, is_return, expect_like_addr2line);
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

static uint64_t nm_size(const char *bin, const char *symbol)
{
	char cmd[1024], line[1024];
	snprintf(cmd, sizeof(cmd), "nm -S '%s'", bin);
	FILE *p = popen(cmd, "r");
	cr_assert_not_null(p);
	uint64_t size = 0;
	while (fgets(line, sizeof(line), p)) {
		char type, name[512];
		unsigned long long a, sz;
		if (sscanf(line, "%llx %llx %c %511s", &a, &sz, &type, name) == 4 &&
		    strcmp(name, symbol) == 0)
			size = sz;
	}
	pclose(p);
	cr_assert_neq(size, 0, "%s has no size in %s", symbol, bin);
	return size;
}

/* addr2line's function name for one address. */
static void addr2line_name(const char *bin, uint64_t addr, char *name, size_t size)
{
	struct a2l_answer *a = malloc(sizeof(*a));
	addr2line_batch(bin, &addr, 1, a);
	snprintf(name, size, "%s", a->f[a->n - 1].name);
	free(a);
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
	/* An exec reported late, whose time is before the maps were read: the
	 * maps are already the new image's, and the only ones there will be. */
	symbols_note_exec(s, sv.pid, 1);
	f = resolve_user(s, sv.pid, sv.addrs[0], false);
	cr_expect_str_eq(f.name, sv.names[0], "maps read after the exec were dropped");
	/* An exec after they were read replaced the address space: nothing is
	 * known any more. */
	symbols_note_exec(s, sv.pid, monotonic_ns());
	f = resolve_user(s, sv.pid, sv.addrs[0], false);
	cr_expect_eq(f.kind, FRAME_UNKNOWN);
	cr_expect_str_eq(f.name, "[unknown]");

	struct symbols_stats st;
	symbols_get_stats(s, &st);
	cr_expect_eq(st.binaries_opened, 2, "symtarget and libsymlib.so, once each");
	cr_expect_geq(st.maps_reads, 1);
	cr_expect_eq(st.lookups, (uint64_t)sv.n * 2 + 3); /* + the kept one, after the late exec */
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
	/* Symbols come from the debug file's .symtab, found by build-id. */
	char cmd[1024], line[512], debug[512] = "";
	snprintf(cmd, sizeof(cmd), "readelf -n '%s'", libc);
	FILE *p = popen(cmd, "r");
	while (fgets(line, sizeof(line), p)) {
		char id[128];
		if (sscanf(line, " Build ID: %127s", id) == 1)
			snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id,
				 id + 2);
	}
	pclose(p);
	if (!debug[0] || access(debug, R_OK) != 0)
		cr_skip_test("no debug file for %s: install libc6-dbg", libc);
	cross_check_with(libc, debug, 4099, false, expect_names_and_lines_like_addr2line);
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

/* ---- names past a symbol's end ----------------------------------------- */

/* hidden_hot has no symbol in stripsym-nodebug: addr2line names its code
 * after shown_before, the symbol before it; sonde names every address of it
 * "[stripsym-nodebug+0xSTART]", START its start by the FDE readelf shows. */
Test(symbols, an_unnamed_function_is_one_frame_named_by_its_fde)
{
	uint64_t hot = nm_address(STRIPSYM_FULL, "hidden_hot");
	uint64_t size = nm_size(STRIPSYM_FULL, "hidden_hot");
	uint64_t before = nm_address(STRIPSYM_FULL, "shown_before");
	uint64_t before_end = before + nm_size(STRIPSYM_FULL, "shown_before");
	struct symbol_view v;
	symbol_view_load(STRIPSYM_NODEBUG, STRIPSYM_NODEBUG, &v);
	for (size_t i = 0; i < v.nsyms; i++)
		cr_assert(v.syms[i].value <= before || v.syms[i].value > hot,
			  "%s lies between shown_before and hidden_hot", v.syms[i].name);
	cr_assert(before < hot && before_end <= hot);
	uint64_t start;
	cr_assert(fde_holding(&v, hot, &start) && start == hot,
		  "readelf shows no FDE starting at hidden_hot (0x%" PRIx64 ")", hot);
	char want[256], a2l[512];
	offset_name(&v, hot, want, sizeof(want));
	struct symbolizer *s = symbols_new();
	struct a2l_answer *a2l_dwarf = malloc(sizeof(*a2l_dwarf));
	for (uint64_t a = hot; a < hot + size; a++) {
		addr2line_name(STRIPSYM_NODEBUG, a, a2l, sizeof(a2l));
		cr_assert_str_eq(a2l, "shown_before", "addr2line at 0x%" PRIx64, a);
		for (int ret = 0; ret < 2; ret++) {
			if (ret && a == hot)
				continue; /* a return address at hot is the call before it */
			struct sym_frame f[4];
			cr_assert_eq(symbols_file(s, STRIPSYM_NODEBUG, a, ret, f, 4), 1);
			cr_assert_str_eq(f[0].name, want, "0x%" PRIx64 "%s", a, ret ? " (return)" : "");
			cr_assert_eq(f[0].kind, FRAME_UNKNOWN);
			cr_assert(f[0].unnamed_function);
			cr_assert_str_eq(f[0].module, STRIPSYM_NODEBUG);
			/* With DWARF, DWARF names it, as addr2line does. */
			cr_assert_eq(symbols_file(s, STRIPSYM_DWARF, a, ret, f, 4), 1);
			cr_assert_str_eq(f[0].name, "hidden_hot");
			cr_assert_eq(f[0].kind, FRAME_USER);
			uint64_t looked_up = a - (uint64_t)ret;
			addr2line_batch(STRIPSYM_DWARF, &looked_up, 1, a2l_dwarf);
			expect_like_addr2line(s, STRIPSYM_DWARF, a, ret, a2l_dwarf);
		}
	}
	/* shown_before keeps its own bytes; the padding after it (clang aligns
	 * functions) is no function. */
	for (uint64_t a = before; a < hot; a++) {
		struct sym_frame f[4];
		cr_assert_eq(symbols_file(s, STRIPSYM_NODEBUG, a, false, f, 4), 1);
		if (a < before_end)
			cr_assert_str_eq(f[0].name, "shown_before");
		else
			cr_assert(f[0].kind == FRAME_UNKNOWN && !f[0].unnamed_function,
				  "padding 0x%" PRIx64 " named %s", a, f[0].name);
	}
	free(a2l_dwarf);
	symbols_free(s);
	symbol_view_free(&v);
}

/* stripsym_asm_sizeless has no ELF size and no FDE: it reaches up to the
 * next function, as in addr2line; the unnamed function after it has an FDE
 * and so its own name. */
Test(symbols, a_sizeless_symbol_reaches_only_to_the_next_fde)
{
	uint64_t sizeless = nm_address(STRIPSYM_FULL, "stripsym_asm_sizeless");
	struct symbol_view v;
	symbol_view_load(STRIPSYM_FULL, STRIPSYM_FULL, &v);
	uint64_t next = UINT64_MAX, next_end = 0, start;
	for (size_t i = 0; i < v.nfdes; i++)
		if (v.fdes[i].start > sizeless && v.fdes[i].start < next) {
			next = v.fdes[i].start;
			next_end = v.fdes[i].end;
		}
	cr_assert(next - sizeless <= 16, "no FDE right after stripsym_asm_sizeless");
	cr_assert(!fde_holding(&v, sizeless, &start), "stripsym_asm_sizeless has an FDE");
	char want[256], a2l[512];
	offset_name(&v, next, want, sizeof(want));
	struct symbolizer *s = symbols_new();
	for (uint64_t a = sizeless; a < next_end; a++) {
		struct sym_frame f[4];
		cr_assert_eq(symbols_file(s, STRIPSYM_FULL, a, false, f, 4), 1);
		addr2line_name(STRIPSYM_FULL, a, a2l, sizeof(a2l));
		cr_assert_str_eq(a2l, "stripsym_asm_sizeless", "addr2line at 0x%" PRIx64, a);
		cr_assert_str_eq(f[0].name, a < next ? "stripsym_asm_sizeless" : want,
				 "0x%" PRIx64, a);
		cr_assert_eq(f[0].unnamed_function, a >= next);
	}
	symbols_free(s);
	symbol_view_free(&v);
}

/* The whole .text of the stripped targets by the rule: inside symbols
 * addr2line's answers, past their ends the FDE's function. */
Test(symbols, stripped_symbol_targets_follow_the_rule_everywhere)
{
	cr_expect_gt(cross_check(STRIPSYM_NODEBUG, 1, false), 0,
		     "no address past a symbol's end: the test tests nothing");
	cr_expect_gt(cross_check(STRIPSYM_NODEBUG, 2, true), 0);
	cr_expect_gt(cross_check(STRIPSYM_DWARF, 1, false), 0);
	cr_expect_eq(cross_check(STRIPSYM_FULL, 1, false), 8,
		     "only the unnamed assembly function (8 bytes) differs from addr2line");
}

/* A Debian library without debug info: its static functions have no
 * symbol, and their code follows small exported functions. */
Test(symbols, debian_library_without_debug_info_follows_the_rule)
{
	if (access(LIBSQLITE, R_OK) != 0)
		cr_skip_test("%s is not installed (Debian package libsqlite3-0)", LIBSQLITE);
	cr_expect_gt(cross_check(LIBSQLITE, 97, false), 100,
		     "few addresses past symbols' ends in %s", LIBSQLITE);
}

/* ---- PLT entries and .init ------------------------------------------- */

/* Every PLT entry objdump names has that name in sonde, at its first byte
 * and inside it; the lazy resolver's PLT0 none. `at_least` entries. */
static void plt_named_like_objdump(const char *bin, size_t at_least)
{
	enum { MAX = 4096 };
	uint64_t *addrs = malloc(MAX * sizeof(*addrs));
	char (*names)[256] = malloc(MAX * sizeof(*names));
	size_t n = objdump_plt_labels(bin, addrs, names, MAX), bad = n;
	char got[512] = "";
	struct symbolizer *s = symbols_new();
	for (size_t i = 0; i < n && bad == n; i++)
		for (uint64_t d = 0; d < 8 && bad == n; d += 5) {
			struct sym_frame f[4];
			if (symbols_file(s, bin, addrs[i] + d, false, f, 4) != 1 ||
			    strcmp(f[0].name, names[i]) != 0 || f[0].kind != FRAME_USER) {
				snprintf(got, sizeof(got), "%s at 0x%" PRIx64 " named %s, objdump %s", bin,
					 addrs[i] + d, f[0].name, names[i]);
				bad = i;
			}
		}
	symbols_free(s);
	free(names);
	free(addrs);
	cr_assert_geq(n, at_least, "%s: objdump names %zu PLT entries", bin, n);
	cr_assert_eq(bad, n, "%s", got);
}

Test(symbols, plt_entries_are_named_as_objdump_names_them)
{
	if (access(LIBSQLITE, R_OK) != 0)
		cr_skip_test("%s is not installed (Debian package libsqlite3-0)", LIBSQLITE);
	plt_named_like_objdump(LIBSQLITE, 1000);          /* lazy .plt, and .plt.got */
	plt_named_like_objdump(TARGET_DIR "/threads-ibtplt", 10); /* .plt.sec */
	plt_named_like_objdump("/lib/x86_64-linux-gnu/libc.so.6", 10);
	/* PLT0 pushes the link map and jumps to the resolver: no function. */
	struct symbolizer *s = symbols_new();
	char cmd[512], line[256];
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) if ($i == \".plt\") print $(i + 2) }'", LIBSQLITE);
	FILE *p = popen(cmd, "r");
	cr_assert(p && fgets(line, sizeof(line), p));
	pclose(p);
	uint64_t plt0 = strtoull(line, NULL, 16);
	struct sym_frame f[4];
	cr_assert_eq(symbols_file(s, LIBSQLITE, plt0, false, f, 4), 1);
	cr_assert_eq(f[0].kind, FRAME_UNKNOWN, "PLT0 named %s", f[0].name);
	symbols_free(s);
}

/* A stripped library keeps .init's code, which the loader calls, but not
 * the _init symbol; its first instruction is where a page fault stops the
 * loader's first call into the library. */
Test(symbols, init_and_fini_of_a_stripped_library_are_named)
{
	if (access(LIBSQLITE, R_OK) != 0)
		cr_skip_test("%s is not installed (Debian package libsqlite3-0)", LIBSQLITE);
	const char *secs[2] = {".init", ".fini"}, *want[2] = {"_init", "_fini"};
	struct symbolizer *s = symbols_new();
	for (int i = 0; i < 2; i++) {
		char cmd[512], line[256];
		snprintf(cmd, sizeof(cmd), "readelf -SW '%s' | awk '{ for (i = 1; i < NF; i++) if ($i == \"%s\") print $(i + 2), $(i + 4) }'",
			 LIBSQLITE, secs[i]);
		FILE *p = popen(cmd, "r");
		cr_assert(p && fgets(line, sizeof(line), p), "%s has no %s", LIBSQLITE, secs[i]);
		pclose(p);
		unsigned long long addr, size;
		cr_assert_eq(sscanf(line, "%llx %llx", &addr, &size), 2);
		for (uint64_t a = addr; a < addr + size; a++) {
			struct sym_frame f[4];
			cr_assert_eq(symbols_file(s, LIBSQLITE, a, false, f, 4), 1);
			cr_assert_str_eq(f[0].name, want[i], "0x%" PRIx64, a);
		}
	}
	symbols_free(s);
}

static const char *not_code(struct symbolizer *s, uint64_t addr)
{
	const char *m = symbols_user_not_code(s, getpid(), addr);
	return m ? m : "(code)";
}

static int data_word = 1;

Test(symbols, addresses_that_are_not_code_say_where_they_point)
{
	struct symbolizer *s = symbols_new();
	void *heap = malloc(64);
	void *anon = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *jit = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	cr_assert(anon != MAP_FAILED && jit != MAP_FAILED);
	uint64_t stack_lo, stack_hi = 0;
	char line[1024];
	FILE *maps = fopen("/proc/self/maps", "r");
	while (fgets(line, sizeof(line), maps)) {
		unsigned long long lo, hi;
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			stack_lo = lo;
			stack_hi = hi;
		}
	}
	fclose(maps);
	cr_assert_neq(stack_hi, 0, "no [stack] mapping");
	/* A fresh symbolizer reads the maps now: every mapping above exists. */
	cr_expect_str_eq(not_code(s, (uintptr_t)&data_word), "[broken stack: data]");
	cr_expect_str_eq(not_code(s, (uintptr_t)anon + 8), "[broken stack: heap]");
	cr_expect_str_eq(not_code(s, stack_lo + (stack_hi - stack_lo) / 2), "[broken stack: stack]");
	cr_expect_str_eq(not_code(s, (uintptr_t)jit + 8), "(code)", "executable anonymous memory (JIT)");
	cr_expect_str_eq(not_code(s, (uintptr_t)&symbols_new), "(code)");
	cr_expect_str_eq(not_code(s, 16), "[broken stack: unmapped]");
	/* malloc's memory is [heap] or an anonymous mapping: heap either way. */
	cr_expect_str_eq(not_code(s, (uintptr_t)heap), "[broken stack: heap]");
	/* Nothing is known about a process that never existed. */
	cr_expect_null(symbols_user_not_code(s, 4194304 + 17, 16));
	free(heap);
	munmap(anon, 4096);
	munmap(jit, 4096);
	symbols_free(s);
}
