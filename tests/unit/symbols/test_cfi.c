/* Unit tests for the unwind tables (cfi) and their cache (cficache).
 *
 *  - Every row of the tables of the nofp targets (gcc and clang, -O2
 *    without frame pointers, and a .debug_frame-only build), of Debian's
 *    libc and of sqlite3, redis-server and libpython 3.11 where installed is
 *    checked against binutils' `readelf --debug-dump=frames-interp`, the
 *    reference: the test rebuilds the table from readelf's rows (and its raw
 *    dump for the DWARF expressions) and compares them at every boundary.
 *  - Live stacks: the nofp targets are stopped in their leaf (by a signal
 *    anywhere in a frameless loop, or in libc's raise) and in a qsort
 *    comparator, and unwound with cfi_unwind_step through /proc/PID/mem;
 *    the frames, named by sonde's symbolizer, must be the chain the program
 *    is built to have, down to _start.
 *  - Hostile CFI sections built by hand, the unwinder's rules on a fake
 *    stack, and the cache's budget, eviction and counters. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cfi.h"
#include "cficache.h"
#include "procmaps.h"
#include "sonde_abi.h"
#include "symbols.h"
#include "util.h"

#define NOFP_GCC TARGET_DIR "/nofp-gcc"
#define NOFP_CLANG TARGET_DIR "/nofp-clang"
#define LIBNOFP_GCC TARGET_DIR "/libnofp-gcc.so"
#define LIBNOFP_CLANG TARGET_DIR "/libnofp-clang.so"
#define NOFP_DF TARGET_DIR "/nofp-df"
#define NOFP_DF_STRIPPED TARGET_DIR "/nofp-df-stripped"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ---- readelf as the reference ------------------------------------------- */

/* What readelf's raw dump says about one CIE or FDE (an FDE's includes its
 * CIE's). */
struct raw_entry {
	bool eh_frame;
	uint64_t offset;
	uint64_t cie;            /* FDE: its CIE's offset */
	bool is_cie;
	bool signal;             /* CIE augmentation has 'S' */
	int ra_reg;              /* CIE: return address column */
	bool undef_rbp, undef_rsp;
	int ncfa_expr;           /* distinct DW_CFA_def_cfa_expression texts */
	char cfa_expr[256];      /* the (first) one, inside its parentheses */
	bool sig_rip, sig_rsp, sig_rbp; /* the signal frame's register expressions */
};

struct raw_dump {
	struct raw_entry *e;
	size_t n, cap;
};

static struct raw_entry *raw_find(struct raw_dump *d, bool eh_frame, uint64_t offset)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->e[i].eh_frame == eh_frame && d->e[i].offset == offset)
			return &d->e[i];
	return NULL;
}

static FILE *readelf(const char *what, const char *path)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "readelf --wide --debug-dump=%s '%s' 2>/dev/null", what, path);
	FILE *f = popen(cmd, "r");
	cr_assert(f, "cannot run readelf");
	return f;
}

/* Which section a "Contents of the ... section" line starts; -1: not one. */
static int section_line(const char *line)
{
	if (strncmp(line, "Contents of the ", 16) != 0)
		return -1;
	return strstr(line, ".eh_frame") ? 1 : strstr(line, ".debug_frame") ? 0 : -1;
}

static void raw_read(const char *path, struct raw_dump *d)
{
	FILE *f = readelf("frames", path);
	char line[4096];
	bool eh = true;
	struct raw_entry *cur = NULL;
	while (fgets(line, sizeof(line), f)) {
		int sec = section_line(line);
		if (sec >= 0) {
			eh = sec;
			cur = NULL;
			continue;
		}
		unsigned long long off, len, id, cie;
		char kind[8];
		if (sscanf(line, "%llx %llx %llx %7s", &off, &len, &id, kind) == 4 &&
		    (strcmp(kind, "CIE") == 0 || strcmp(kind, "FDE") == 0)) {
			grow_array((void **)&d->e, &d->cap, d->n + 1, sizeof(*d->e));
			cur = &d->e[d->n++];
			*cur = (struct raw_entry){ .eh_frame = eh, .offset = off,
						   .is_cie = kind[0] == 'C', .ra_reg = -1 };
			const char *c = strstr(line, "cie=");
			if (!cur->is_cie && c && sscanf(c, "cie=%llx", &cie) == 1)
				cur->cie = cie;
			continue;
		}
		if (!cur)
			continue;
		char *s = line + strspn(line, " ");
		s[strcspn(s, "\n")] = 0;
		int n;
		if (strncmp(s, "Augmentation:", 13) == 0 && strchr(s, '"'))
			cur->signal = strchr(strchr(s, '"') + 1, 'S') != NULL;
		else if (sscanf(s, "Return address column: %d", &n) == 1)
			cur->ra_reg = n;
		else if (strncmp(s, "DW_CFA_undefined: r6 ", 21) == 0)
			cur->undef_rbp = true;
		else if (strncmp(s, "DW_CFA_undefined: r7 ", 21) == 0)
			cur->undef_rsp = true;
		else if (strncmp(s, "DW_CFA_def_cfa_expression (", 27) == 0) {
			char *in = s + 27;
			in[strlen(in) - 1] = 0; /* the closing parenthesis */
			if (cur->ncfa_expr == 0 || strcmp(cur->cfa_expr, in) != 0)
				cur->ncfa_expr++;
			snprintf(cur->cfa_expr, sizeof(cur->cfa_expr), "%s", in);
		} else if (strcmp(s, "DW_CFA_expression: r16 (rip) (DW_OP_breg7 (rsp): 168)") == 0)
			cur->sig_rip = true;
		else if (strcmp(s, "DW_CFA_expression: r7 (rsp) (DW_OP_breg7 (rsp): 160)") == 0)
			cur->sig_rsp = true;
		else if (strcmp(s, "DW_CFA_expression: r6 (rbp) (DW_OP_breg7 (rsp): 120)") == 0)
			cur->sig_rbp = true;
	}
	pclose(f);
	/* An FDE runs its CIE's instructions first. */
	for (size_t i = 0; i < d->n; i++) {
		struct raw_entry *e = &d->e[i];
		struct raw_entry *c = e->is_cie ? NULL : raw_find(d, e->eh_frame, e->cie);
		if (!c)
			continue;
		e->signal = c->signal;
		e->ra_reg = c->ra_reg;
		e->undef_rbp |= c->undef_rbp;
		e->undef_rsp |= c->undef_rsp;
		if (c->ncfa_expr && (e->ncfa_expr == 0 || strcmp(e->cfa_expr, c->cfa_expr) != 0)) {
			if (e->ncfa_expr == 0)
				snprintf(e->cfa_expr, sizeof(e->cfa_expr), "%s", c->cfa_expr);
			e->ncfa_expr++;
		}
		e->sig_rip |= c->sig_rip;
		e->sig_rsp |= c->sig_rsp;
		e->sig_rbp |= c->sig_rbp;
	}
}

static int dwarf_regno(const char *name)
{
	static const char *const regs[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
					    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15" };
	for (int i = 0; i < 16; i++)
		if (strcmp(name, regs[i]) == 0)
			return i;
	return -1;
}

static bool fits(long v, int bits) /* v / 8 in `bits` signed bits, v a multiple of 8 */
{
	long lim = 1L << (bits - 1);
	return v % 8 == 0 && v / 8 >= -lim && v / 8 < lim;
}

#define SKIP "?" /* readelf cannot tell: any answer is accepted */

/* Does text match the scanf pattern whole? (%n at its end is set only if
 * the scan got there.) */
#define MATCHES(text, fmt, ...) (end = -1, sscanf(text, fmt "%n", __VA_ARGS__, &end), \
				 end >= 0 && (text)[end] == 0)

/* The rule cfi_rule_format should print for a CFA expression. */
static void expect_cfa_expr(const struct raw_entry *e, char *out, size_t size)
{
	int a, b, reg, end;
	unsigned u;
	char name[8];
	const char *x = e->cfa_expr;
	snprintf(out, size, "unsupported");
	if (e->ncfa_expr != 1) {
		snprintf(out, size, SKIP);
		return;
	}
	if (MATCHES(x, "DW_OP_breg7 (rsp): %d; DW_OP_breg16 (rip): 0; DW_OP_lit15; DW_OP_and; "
		       "DW_OP_lit%d; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus", &a, &b)) {
		if (a >= 8 && fits(a, 12))
			snprintf(out, size, "plt(rsp%+d, %d)", a, b);
	} else if (MATCHES(x, "DW_OP_breg%d (%7[a-z]): %d; DW_OP_deref; DW_OP_plus_uconst: %u",
			   &reg, name, &a, &u)) {
		if ((reg == 6 || reg == 7) && fits(a, 12) && u % 8 == 0 && u / 8 <= 255)
			snprintf(out, size, "*(%s%+d)%+d", name, a, (int)u);
	} else if (MATCHES(x, "DW_OP_breg%d (%7[a-z]): %d; DW_OP_deref", &reg, name, &a)) {
		if ((reg == 6 || reg == 7) && fits(a, 12))
			snprintf(out, size, "*(%s%+d)+0", name, a);
	}
}

/* One row of readelf's frames-interp table as the rule cfi.c must give it
 * (cfi_rule_format's text), by the classification cfi.h states. */
static void expect_rule(const struct raw_entry *e, char **names, char **vals, int ncols,
			char *out, size_t size)
{
	const char *cfa = NULL, *ra = NULL, *rsp = NULL, *rbp = NULL;
	for (int i = 0; i < ncols; i++) {
		if (strcmp(names[i], "CFA") == 0)
			cfa = vals[i];
		else if (strcmp(names[i], "ra") == 0)
			ra = vals[i];
		else if (strcmp(names[i], "rsp") == 0)
			rsp = vals[i];
		else if (strcmp(names[i], "rbp") == 0)
			rbp = vals[i];
	}
	if (e->signal) {
		bool ok = cfa && strcmp(cfa, "exp") == 0 && e->ncfa_expr == 1 &&
			  strcmp(e->cfa_expr, "DW_OP_breg7 (rsp): 160; DW_OP_deref") == 0 &&
			  e->sig_rip && e->sig_rsp && e->sig_rbp;
		snprintf(out, size, ok ? "signal" : "unsupported");
		return;
	}
	if (e->ra_reg != 16 || !cfa || !ra) {
		snprintf(out, size, "unsupported");
		return;
	}
	if (strcmp(ra, "u") == 0) {
		snprintf(out, size, "end");
		return;
	}
	if (strcmp(ra, "c-8") != 0 ||
	    (rsp && strcmp(rsp, "v+0") != 0 && !(strcmp(rsp, "u") == 0 && !e->undef_rsp))) {
		snprintf(out, size, "unsupported");
		return;
	}
	char reg[16];
	int off;
	if (strcmp(cfa, "exp") == 0) {
		expect_cfa_expr(e, out, size);
		if (strcmp(out, "unsupported") == 0 || strcmp(out, SKIP) == 0)
			return;
	} else if (sscanf(cfa, "%15[a-z0-9]%d", reg, &off) == 2) {
		int r = dwarf_regno(reg);
		if (r == 7 && off >= 8 && fits(off, 20))
			snprintf(out, size, "rsp%+d", off);
		else if (r == 6 && fits(off, 20))
			snprintf(out, size, "rbp%+d", off);
		else if (r >= 0 && r != 6 && r != 7 && fits(off, 12))
			snprintf(out, size, "r%d%+d", r, off);
		else {
			snprintf(out, size, "unsupported");
			return;
		}
	} else {
		snprintf(out, size, "unsupported");
		return;
	}
	size_t len = strlen(out);
	if (!rbp || strcmp(rbp, "s") == 0 || (strcmp(rbp, "u") == 0 && !e->undef_rbp))
		return;
	if (strcmp(rbp, "u") == 0)
		snprintf(out, size, SKIP); /* "u": undefined, or not saved yet */
	else if (sscanf(rbp, "c%d", &off) == 1 && fits(off, 6))
		snprintf(out + len, size - len, " rbp=c%+d", off);
	else
		snprintf(out + len, size - len, " rbp=unsupported");
}

struct ref_row {
	uint64_t pc;
	char rule[64];
};

struct ref_fde {
	bool eh_frame;
	uint64_t start, end;
	struct ref_row *rows;
	size_t n, cap;
};

struct ref {
	struct ref_fde *f;
	size_t n, cap;
	struct ref_row *rows; /* the merged table */
	size_t nrows, rows_cap;
	size_t skipped; /* rows readelf cannot decide */
};

/* readelf's frames-interp columns, split: a register rule "r9 (r9)" is one. */
static int split_cols(char *line, char **cols, int max)
{
	int n = 0;
	for (char *tok = strtok(line, " \n"); tok && n < max; tok = strtok(NULL, " \n")) {
		if (tok[0] == '(' && n > 0)
			continue; /* the register's name after its number */
		cols[n++] = tok;
	}
	return n;
}

static void ref_push(struct ref *r, uint64_t pc, const char *rule)
{
	if (r->nrows && r->rows[r->nrows - 1].pc == pc)
		r->nrows--;
	if (r->nrows && strcmp(r->rows[r->nrows - 1].rule, rule) == 0)
		return;
	grow_array((void **)&r->rows, &r->rows_cap, r->nrows + 1, sizeof(*r->rows));
	r->rows[r->nrows].pc = pc;
	snprintf(r->rows[r->nrows].rule, sizeof(r->rows[0].rule), "%s", rule);
	r->nrows++;
}

static int ref_fde_cmp(const void *pa, const void *pb)
{
	const struct ref_fde *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->eh_frame == b->eh_frame ? 0 : a->eh_frame ? -1 : 1;
}

/* The table readelf describes: every FDE's rows (an FDE without a table
 * has its CIE's), sorted, overlaps dropped as cfi.h says, gaps "none". */
static void ref_build(const char *path, struct ref *r)
{
	struct raw_dump raw = { 0 };
	raw_read(path, &raw);
	FILE *f = readelf("frames-interp", path);
	char line[4096], copy[4096];
	char *names[64], *cols[64];
	char name_buf[4096] = "";
	int nnames = 0;
	bool eh = true;
	struct ref_fde *cur = NULL;
	const struct raw_entry *cur_raw = NULL;
	/* CIE rows, by (section, offset): the first row of each CIE's table. */
	struct { bool eh; uint64_t off; char rule[64]; } cies[256];
	int ncies = 0;
	bool in_cie = false;
	while (fgets(line, sizeof(line), f)) {
		int sec = section_line(line);
		if (sec >= 0) {
			eh = sec;
			cur = NULL;
			continue;
		}
		unsigned long long off, len, id, cie, lo, hi;
		char kind[8];
		if (sscanf(line, "%llx %llx %llx %7s", &off, &len, &id, kind) == 4 &&
		    (strcmp(kind, "CIE") == 0 || strcmp(kind, "FDE") == 0)) {
			cur = NULL;
			in_cie = kind[0] == 'C';
			cur_raw = raw_find(&raw, eh, off);
			cr_assert(cur_raw, "%s: entry %llx missing from the raw dump", path, off);
			if (in_cie) {
				cr_assert(ncies < 256);
				cies[ncies].eh = eh;
				cies[ncies].off = off;
				cies[ncies].rule[0] = 0;
				ncies++;
				continue;
			}
			const char *pc = strstr(line, "pc=");
			cr_assert(pc && sscanf(pc, "pc=%llx..%llx", &lo, &hi) == 2, "%s", line);
			cr_assert(sscanf(strstr(line, "cie="), "cie=%llx", &cie) == 1);
			grow_array((void **)&r->f, &r->cap, r->n + 1, sizeof(*r->f));
			cur = &r->f[r->n++];
			*cur = (struct ref_fde){ .eh_frame = eh, .start = lo, .end = hi };
			/* Until a table says otherwise, its CIE's row. */
			for (int i = 0; i < ncies; i++)
				if (cies[i].eh == eh && cies[i].off == cie && cies[i].rule[0]) {
					grow_array((void **)&cur->rows, &cur->cap, 1, sizeof(*cur->rows));
					cur->rows[0].pc = lo;
					snprintf(cur->rows[0].rule, sizeof(cur->rows[0].rule), "%s",
						 cies[i].rule);
					cur->n = 1;
				}
			continue;
		}
		snprintf(copy, sizeof(copy), "%s", line);
		char *tok = copy + strspn(copy, " ");
		if (strncmp(tok, "LOC", 3) == 0) {
			snprintf(name_buf, sizeof(name_buf), "%s", line);
			nnames = split_cols(name_buf, names, 64);
			continue;
		}
		int ncols = split_cols(copy, cols, 64);
		unsigned long long loc;
		if (ncols < 2 || ncols != nnames || strlen(cols[0]) != 16 ||
		    sscanf(cols[0], "%llx", &loc) != 1)
			continue;
		char rule[64];
		expect_rule(cur_raw, names + 1, cols + 1, ncols - 1, rule, sizeof(rule));
		if (in_cie) {
			if (ncies && cies[ncies - 1].rule[0] == 0)
				snprintf(cies[ncies - 1].rule, sizeof(cies[0].rule), "%s", rule);
			continue;
		}
		if (!cur || loc < cur->start || loc >= cur->end)
			continue;
		if (cur->n && cur->rows[0].pc == cur->start && cur->n == 1 && loc == cur->start)
			cur->n = 0; /* the table's own first row replaces the CIE's */
		grow_array((void **)&cur->rows, &cur->cap, cur->n + 1, sizeof(*cur->rows));
		cur->rows[cur->n].pc = loc;
		snprintf(cur->rows[cur->n].rule, sizeof(cur->rows[0].rule), "%s", rule);
		cur->n++;
	}
	pclose(f);
	free(raw.e);

	/* FDEs of functions the linker dropped start at 0. */
	size_t kept = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->f[i].start != 0 && r->f[i].end > r->f[i].start)
			r->f[kept++] = r->f[i];
		else
			free(r->f[i].rows);
	r->n = kept;
	qsort(r->f, r->n, sizeof(*r->f), ref_fde_cmp);
	kept = 0;
	for (size_t i = 0; i < r->n; i++) {
		if (kept && r->f[i].start < r->f[kept - 1].end) {
			if (!r->f[kept - 1].eh_frame && r->f[i].eh_frame) {
				free(r->f[kept - 1].rows);
				r->f[kept - 1] = r->f[i];
			} else {
				free(r->f[i].rows);
			}
			continue;
		}
		r->f[kept++] = r->f[i];
	}
	r->n = kept;
	for (size_t i = 0; i < r->n; i++) {
		for (size_t k = 0; k < r->f[i].n; k++) {
			ref_push(r, r->f[i].rows[k].pc, r->f[i].rows[k].rule);
			r->skipped += strcmp(r->f[i].rows[k].rule, SKIP) == 0;
		}
		ref_push(r, r->f[i].end, "none");
	}
}

static void ref_free(struct ref *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i].rows);
	free(r->f);
	free(r->rows);
}

static const char *ref_rule_at(const struct ref *r, uint64_t pc)
{
	const char *rule = "none";
	for (size_t lo = 0, hi = r->nrows; lo < hi;) {
		size_t mid = (lo + hi) / 2;
		if (r->rows[mid].pc <= pc) {
			rule = r->rows[mid].rule;
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return rule;
}

static void table_rule_at(const struct cfi_table *t, uint64_t pc, char *buf, size_t size)
{
	const struct cfi_row *row = cfi_table_find(t, pc);
	cfi_rule_format(row ? row->rule : CFI_CFA_NONE, buf, size);
}

static struct cfi_table *table_of(const char *path)
{
	char err[256];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert(fd >= 0, "%s: %s", path, strerror(errno));
	struct cfi_table *t = cfi_table_from_fd(fd, path, err, sizeof(err));
	close(fd);
	cr_assert(t, "%s", err);
	return t;
}

/* The table of path agrees with readelf at every boundary of either. */
static void check_against_readelf(const char *path, uint32_t min_rows)
{
	struct cfi_table *t = table_of(path);
	struct ref r = { 0 };
	ref_build(path, &r);
	cr_assert_geq(t->nrows, min_rows, "%s: %u rows", path, t->nrows);
	cr_assert_eq(t->fdes_bad, 0, "%s: %" PRIu64 " bad FDEs", path, t->fdes_bad);
	/* Structure: sorted, merged, ends with "none". */
	for (uint32_t i = 1; i < t->nrows; i++) {
		cr_assert_lt(t->rows[i - 1].pc, t->rows[i].pc, "%s: row %u not sorted", path, i);
		cr_assert_neq(t->rows[i - 1].rule, t->rows[i].rule, "%s: row %u not merged", path, i);
	}
	cr_assert_eq(cfi_rule_cfa(t->rows[t->nrows - 1].rule), CFI_CFA_NONE);
	char got[64];
	size_t checked = 0;
	for (size_t i = 0; i < r.nrows; i++) {
		const char *want = ref_rule_at(&r, r.rows[i].pc);
		if (strcmp(want, SKIP) == 0)
			continue;
		table_rule_at(t, r.rows[i].pc, got, sizeof(got));
		cr_assert_str_eq(got, want, "%s at 0x%" PRIx64 ": sonde '%s', readelf '%s'", path,
				 r.rows[i].pc, got, want);
		checked++;
	}
	for (uint32_t i = 0; i < t->nrows; i++) {
		uint64_t pc = t->base + t->rows[i].pc;
		const char *want = ref_rule_at(&r, pc);
		if (strcmp(want, SKIP) == 0)
			continue;
		table_rule_at(t, pc, got, sizeof(got));
		cr_assert_str_eq(got, want, "%s at 0x%" PRIx64 ": sonde '%s', readelf '%s'", path, pc,
				 got, want);
	}
	/* Without undecidable rows, the two tables are the same rows. */
	if (r.skipped == 0)
		cr_assert_eq(t->nrows, r.nrows, "%s: %u rows, readelf's %zu", path, t->nrows, r.nrows);
	cr_assert_leq(r.skipped, r.nrows / 1000, "%s: %zu undecidable rows", path, r.skipped);
	cr_assert_geq(checked, min_rows / 2);
	ref_free(&r);
	cfi_table_free(t);
}

Test(cfi_readelf, nofp_gcc) { check_against_readelf(NOFP_GCC, 30); }
Test(cfi_readelf, nofp_clang) { check_against_readelf(NOFP_CLANG, 30); }
Test(cfi_readelf, libnofp_gcc) { check_against_readelf(LIBNOFP_GCC, 4); }
Test(cfi_readelf, libnofp_clang) { check_against_readelf(LIBNOFP_CLANG, 4); }
Test(cfi_readelf, debug_frame_only) { check_against_readelf(NOFP_DF, 30); }
Test(cfi_readelf, libc) { check_against_readelf(LIBC, 20000); }

static void check_installed(const char *path, uint32_t min_rows)
{
	if (access(path, R_OK) != 0)
		cr_skip_test("%s is not installed", path);
	check_against_readelf(path, min_rows);
}

Test(cfi_readelf, sqlite3) { check_installed("/usr/bin/sqlite3", 3000); }
Test(cfi_readelf, redis_server) { check_installed("/usr/bin/redis-server", 30000); }
/* The loader (a signal frame, CFA on other registers) and OpenSSL's
 * assembly (saved stack pointers: CFA = *(rsp + A) + 8). */
Test(cfi_readelf, ld_so) { check_installed("/lib64/ld-linux-x86-64.so.2", 2000); }
Test(cfi_readelf, libcrypto) { check_installed("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", 50000); }

Test(cfi_readelf, libpython311)
{
	FILE *p = popen("ls /root/.pyenv/versions/3.11*/lib/libpython3.11.so.1.0 2>/dev/null | head -1",
			"r");
	char path[512] = "";
	if (p && fgets(path, sizeof(path), p))
		path[strcspn(path, "\n")] = 0;
	if (p)
		pclose(p);
	if (!path[0])
		cr_skip_test("pyenv's python 3.11 is not installed");
	check_against_readelf(path, 50000);
}

/* The .debug_frame only build: its code has no .eh_frame, the rows come
 * from .debug_frame, and a copy stripped of it finds the same rows in its
 * separate debug file (.gnu_debuglink). */
Test(cfi_readelf, separate_debug_file)
{
	struct cfi_table *full = table_of(NOFP_DF), *stripped = table_of(NOFP_DF_STRIPPED);
	cr_assert(full->from_debug_frame && !full->from_debug_file);
	cr_assert(stripped->from_debug_frame && stripped->from_debug_file);
	cr_assert_eq(full->nrows, stripped->nrows);
	cr_assert_eq(full->base, stripped->base);
	cr_assert_eq(memcmp(full->rows, stripped->rows, full->nrows * sizeof(*full->rows)), 0);
	cfi_table_free(full);
	cfi_table_free(stripped);
}

/* ---- live stacks ------------------------------------------------------- */

struct tracee {
	pid_t pid;
	int mem; /* /proc/PID/mem */
};

static bool tracee_read(void *ctx, uint64_t addr, uint64_t *value)
{
	const struct tracee *t = ctx;
	return pread(t->mem, value, 8, (off_t)addr) == 8;
}

/* Starts exe under ptrace, stopped after exec. */
static struct tracee tracee_start(const char *exe, const char *mode)
{
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		execl(exe, exe, mode, (char *)NULL);
		_exit(127);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "%s did not start", exe);
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(long)PTRACE_O_EXITKILL);
	char mem[64];
	snprintf(mem, sizeof(mem), "/proc/%d/mem", pid);
	struct tracee t = { pid, open(mem, O_RDONLY | O_CLOEXEC) };
	cr_assert(t.mem >= 0);
	return t;
}

/* Lets it run until it stops with SIGSTOP; its registers. */
static void tracee_wait_stop(struct tracee *t, struct user_regs_struct *regs)
{
	int st;
	for (;;) {
		cr_assert_eq(waitpid(t->pid, &st, 0), t->pid);
		cr_assert(WIFSTOPPED(st), "the target ended (status %d)", st);
		if (WSTOPSIG(st) == SIGSTOP)
			break;
		ptrace(PTRACE_CONT, t->pid, NULL, (void *)(long)WSTOPSIG(st));
	}
	cr_assert_eq(ptrace(PTRACE_GETREGS, t->pid, NULL, regs), 0);
}

static void tracee_end(struct tracee *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->mem);
}

struct map_lookup {
	uint64_t pc;
	bool found;
	uint64_t start, offset;
	char path[512];
};

static int find_mapping(const struct procmaps_entry *e, void *arg)
{
	struct map_lookup *m = arg;
	if (m->pc < e->start || m->pc >= e->end)
		return 0;
	m->found = e->path[0] == '/';
	m->start = e->start;
	m->offset = e->offset;
	snprintf(m->path, sizeof(m->path), "%s", e->path);
	return 1;
}

#define MAX_WALK 64

struct walk {
	uint64_t pc[MAX_WALK];
	char name[MAX_WALK][128];
	int n;
	enum cfi_step last;
	int fp_steps;
};

/* Unwinds the stopped tracee from its registers as the kernel will: per
 * frame, the mapping of its pc, that binary's table and load bias, one
 * step. Names every frame with the symbolizer. */
static void walk_stack(struct tracee *t, const struct user_regs_struct *regs, struct cfi_cache *c,
		       struct symbolizer *s, struct walk *w)
{
	uint64_t gprs[17] = { regs->rax, regs->rdx, regs->rcx, regs->rbx, regs->rsi, regs->rdi,
			      regs->rbp, regs->rsp, regs->r8,  regs->r9,  regs->r10, regs->r11,
			      regs->r12, regs->r13, regs->r14, regs->r15, regs->rip };
	struct cfi_regs r = { .rip = regs->rip, .rsp = regs->rsp, .rbp = regs->rbp,
			      .rbp_known = true, .exact_pc = true, .gprs = gprs };
	*w = (struct walk){ .last = CFI_STEP_CFI };
	while (w->n < MAX_WALK) {
		bool is_return = !r.exact_pc;
		struct map_lookup m = { .pc = is_return ? r.rip - 1 : r.rip };
		procmaps_each(t->pid, find_mapping, &m);
		const struct cfi_table *tab = NULL;
		uint64_t bias = 0, vaddr;
		if (m.found) {
			char path[600], err[256];
			snprintf(path, sizeof(path), "/proc/%d/root%s", t->pid, m.path);
			tab = cfi_cache_get(c, path, err, sizeof(err));
			if (tab && cfi_table_vaddr(tab, m.pc - m.start + m.offset, &vaddr))
				bias = m.pc - vaddr;
		}
		/* A signal handler "returns" to the first instruction of the
		 * trampoline (no call precedes it): named at its pc. */
		const struct cfi_row *row = tab ? cfi_table_find(tab, m.pc - bias) : NULL;
		if (row && cfi_rule_cfa(row->rule) == CFI_CFA_SIGNAL)
			is_return = false;
		w->pc[w->n] = r.rip;
		struct sym_frame fr[SYM_MAX_INLINE];
		int nf = symbols_user(s, t->pid, r.rip, is_return, fr, SYM_MAX_INLINE);
		snprintf(w->name[w->n], sizeof(w->name[0]), "%s", nf > 0 ? fr[nf - 1].name : "?");
		w->n++;
		enum cfi_step st = cfi_unwind_step(tab, bias, &r, tracee_read, t);
		if (tab)
			cfi_cache_put(c, tab);
		w->fp_steps += st == CFI_STEP_FP;
		w->last = st;
		if (st != CFI_STEP_CFI && st != CFI_STEP_FP)
			break;
	}
}

static void walk_print(const struct walk *w)
{
	for (int i = 0; i < w->n; i++)
		fprintf(stderr, "  #%d 0x%" PRIx64 " %s\n", i, w->pc[i], w->name[i]);
	fprintf(stderr, "  stopped: %s\n", cfi_step_name(w->last));
}

static int walk_find(const struct walk *w, const char *name, int from)
{
	for (int i = from; i < w->n; i++)
		if (strcmp(w->name[i], name) == 0)
			return i;
	return -1;
}

/* The walk holds `chain` (innermost first) as consecutive frames from
 * frame `at`, and goes on through libc's start code to _start, where the
 * CFI says the stack ends; every step was by the tables. */
static void check_chain(const struct walk *w, int at, const char *const *chain, int n)
{
	bool ok = at >= 0 && at + n <= w->n;
	for (int i = 0; ok && i < n; i++)
		ok = strcmp(w->name[at + i], chain[i]) == 0;
	ok = ok && w->last == CFI_STEP_END && w->fp_steps == 0 && strcmp(w->name[w->n - 1], "_start") == 0;
	if (!ok)
		walk_print(w);
	cr_assert(ok, "the unwound stack is not the program's chain down to _start");
}

static const char *const nofp_chain[] = { "leaf_spin", "stage_b", "nofp_lib_stage", "stage_a",
					  "run", "main" };

/* Stopped by a signal anywhere in the frameless loop of leaf_spin: 20 times
 * at whatever instruction it is (once it got there: start-up may be slow
 * on a loaded machine). */
static void unwind_spin(const char *exe)
{
	struct tracee t = tracee_start(exe, "spin");
	struct cfi_cache *c = cfi_cache_new(64 << 20);
	struct symbolizer *s = symbols_new();
	ptrace(PTRACE_CONT, t.pid, NULL, NULL);
	int samples = 0, tries = 0;
	while (samples < 20) {
		struct timespec ts = { 0, 2000000 + 500000 * samples };
		nanosleep(&ts, NULL);
		kill(t.pid, SIGSTOP);
		struct user_regs_struct regs;
		tracee_wait_stop(&t, &regs);
		struct walk w;
		walk_stack(&t, &regs, c, s, &w);
		if (samples > 0 || strcmp(w.name[0], "leaf_spin") == 0) {
			check_chain(&w, 0, nofp_chain, 6);
			samples++;
		} else {
			cr_assert_lt(++tries, 2500, "%s never reached leaf_spin", exe);
		}
		ptrace(PTRACE_CONT, t.pid, NULL, NULL); /* the SIGSTOP is dropped */
	}
	struct cfi_cache_stats st;
	cfi_cache_get_stats(c, &st);
	cr_assert_geq(st.tables_built, 3, "the program, its library, libc: %" PRIu64,
		      st.tables_built);
	symbols_free(s);
	cfi_cache_free(c);
	tracee_end(&t);
}

Test(cfi_unwind, spin_gcc) { unwind_spin(NOFP_GCC); }
Test(cfi_unwind, spin_clang) { unwind_spin(NOFP_CLANG); }

/* Runs exe in mode until it stops itself (SIGSTOP), and unwinds it. */
static void walk_stopped(const char *exe, const char *mode, struct walk *w)
{
	struct tracee t = tracee_start(exe, mode);
	struct cfi_cache *c = cfi_cache_new(64 << 20);
	struct symbolizer *s = symbols_new();
	ptrace(PTRACE_CONT, t.pid, NULL, NULL);
	struct user_regs_struct regs;
	tracee_wait_stop(&t, &regs);
	walk_stack(&t, &regs, c, s, w);
	symbols_free(s);
	cfi_cache_free(c);
	tracee_end(&t);
}

/* Stopped inside libc's raise, called by leaf_spin. */
static void unwind_stop(const char *exe)
{
	struct walk w;
	walk_stopped(exe, "stop", &w);
	int at = walk_find(&w, "leaf_spin", 0);
	cr_assert_gt(at, 0, "libc's frames come first");
	check_chain(&w, at, nofp_chain, 6);
}

Test(cfi_unwind, raise_gcc) { unwind_stop(NOFP_GCC); }
Test(cfi_unwind, raise_clang) { unwind_stop(NOFP_CLANG); }

/* Interrupted in leaf_spin by a signal whose handler stops: through the
 * signal frame the kernel pushed (libc's __restore_rt, a CFI_CFA_SIGNAL
 * row), back to the interrupted leaf at its exact pc. */
static void unwind_signal(const char *exe)
{
	struct walk w;
	walk_stopped(exe, "signal", &w);
	static const char *const chain[] = { "on_signal", "__restore_rt", "leaf_spin", "stage_b",
					     "nofp_lib_stage", "stage_a", "run", "main" };
	check_chain(&w, walk_find(&w, "on_signal", 0), chain, 8);
}

Test(cfi_unwind, signal_gcc) { unwind_signal(NOFP_GCC); }
Test(cfi_unwind, signal_clang) { unwind_signal(NOFP_CLANG); }

/* A comparator called by libc's qsort: cmp_keys, then libc's merge sort
 * (msort_with_tmp, recursive), qsort, and the program again. */
static void unwind_qsort(const char *exe)
{
	struct walk w;
	walk_stopped(exe, "qsort", &w);
	int cmp = walk_find(&w, "cmp_keys", 0);
	int i = cmp + 1;
	while (i > 0 && i < w.n && strcmp(w.name[i], "msort_with_tmp") == 0)
		i++;
	bool ok = cmp > 0 && i - cmp >= 3 && i < w.n && strstr(w.name[i], "qsort");
	if (!ok)
		walk_print(&w);
	cr_assert(ok, "cmp_keys is not called from msort_with_tmp and qsort");
	while (i < w.n && strstr(w.name[i], "qsort"))
		i++;
	static const char *const chain[] = { "sort_keys", "main" };
	check_chain(&w, i, chain, 2);
}

Test(cfi_unwind, qsort_gcc) { unwind_qsort(NOFP_GCC); }
Test(cfi_unwind, qsort_clang) { unwind_qsort(NOFP_CLANG); }

/* ---- hostile and hand-made sections ------------------------------------- */

#define SEC_ADDR 0x10000
#define FN_START 0x20000

struct sec {
	uint8_t b[4096];
	size_t n;
};

static void put(struct sec *s, const void *p, size_t n)
{
	cr_assert_leq(s->n + n, sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void put32(struct sec *s, uint32_t v) { put(s, &v, 4); }

/* A CIE like gcc's ("zR", pc-relative sdata4 addresses, CFA rsp+8, return
 * address at CFA-8) at offset 0, with `aug` and extra initial
 * instructions if given. */
static void put_cie(struct sec *s, const char *aug, const uint8_t *insns, size_t n)
{
	struct sec body = { .n = 0 };
	put32(&body, 0); /* CIE id */
	uint8_t v1 = 1;
	put(&body, &v1, 1);
	put(&body, aug, strlen(aug) + 1);
	const uint8_t head[] = { 1, 0x78 /* -8 */, 16, 1 /* aug data size */, 0x1b,
				 0x0c, 7, 8 /* def_cfa rsp 8 */, 0x90, 1 /* rip at cfa-8 */ };
	put(&body, head, sizeof(head));
	if (n)
		put(&body, insns, n);
	while ((body.n + 4) % 8)
		body.b[body.n++] = 0; /* DW_CFA_nop */
	put32(s, (uint32_t)body.n);
	put(s, body.b, body.n);
}

/* An FDE for [start, start + len) using the CIE at offset cie. */
static void put_fde(struct sec *s, uint32_t cie, uint32_t start, uint32_t len,
		    const uint8_t *insns, size_t n)
{
	size_t at = s->n;
	struct sec body = { .n = 0 };
	put32(&body, (uint32_t)(at + 4 - cie));
	int32_t rel = (int32_t)(start - (SEC_ADDR + at + 8));
	put(&body, &rel, 4);
	put32(&body, len);
	uint8_t zero = 0;
	put(&body, &zero, 1);
	if (n)
		put(&body, insns, n);
	while ((body.n + 4) % 8)
		body.b[body.n++] = 0;
	put32(s, (uint32_t)body.n);
	put(s, body.b, body.n);
}

static struct cfi_table *table_from(struct sec *s)
{
	put32(s, 0); /* terminator */
	return cfi_table_from_section(s->b, s->n, SEC_ADDR, true);
}

/* The table's rows as "pc rule; ..." relative to FN_START. */
static void rows_text(const struct cfi_table *t, char *out, size_t size)
{
	size_t len = 0;
	out[0] = 0;
	for (uint32_t i = 0; i < t->nrows && len < size; i++) {
		char rule[64];
		cfi_rule_format(t->rows[i].rule, rule, sizeof(rule));
		len += (size_t)snprintf(out + len, size - len, "%s%" PRId64 " %s", i ? "; " : "",
					(int64_t)(t->base + t->rows[i].pc) - FN_START, rule);
	}
}

/* The section's table has these rows, and counts these FDEs. */
static void expect_table(struct sec *s, const char *want, uint64_t fdes, uint64_t bad,
			 uint64_t overlap)
{
	struct cfi_table *t = table_from(s);
	char got[1024];
	rows_text(t, got, sizeof(got));
	cr_assert_str_eq(got, want);
	cr_assert_eq(t->fdes, fdes, "%" PRIu64 " FDEs", t->fdes);
	cr_assert_eq(t->fdes_bad, bad, "%" PRIu64 " bad FDEs", t->fdes_bad);
	cr_assert_eq(t->fdes_overlap, overlap, "%" PRIu64 " overlapping FDEs", t->fdes_overlap);
	cfi_table_free(t);
}

/* One FDE of 64 bytes with these instructions. */
static void expect_rows(const uint8_t *insns, size_t n, const char *want, uint64_t bad)
{
	struct sec s = { .n = 0 };
	put_cie(&s, "zR", NULL, 0);
	put_fde(&s, 0, FN_START, 64, insns, n);
	expect_table(&s, want, 1, bad, 0);
}

Test(cfi_section, prologue_rows)
{
	/* push rbp; mov rbp, rsp; ... leave; ret */
	const uint8_t p[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x50, 0x0c, 7, 8 };
	expect_rows(p, sizeof(p), "0 rsp+8; 1 rsp+16 rbp=c-16; 4 rbp+16 rbp=c-16; 20 rsp+8 rbp=c-16; "
				  "64 none", 0);
}

Test(cfi_section, remember_restore_state)
{
	/* the usual epilogue in the middle of a function */
	const uint8_t p[] = { 0x41, 0x0e, 16, 0x0a, 0x42, 0x0e, 8, 0x41, 0x0b, 0x44 };
	expect_rows(p, sizeof(p), "0 rsp+8; 1 rsp+16; 3 rsp+8; 4 rsp+16; 64 none", 0);
}

Test(cfi_section, expressions)
{
	/* PLT: breg7 8; breg16 0; lit15; and; lit11; ge; lit3; shl; plus */
	const uint8_t plt[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	expect_rows(plt, sizeof(plt), "0 plt(rsp+8, 11); 64 none", 0);
	/* OpenSSL's saved stack pointer: breg7 40; deref; plus_uconst 8 */
	const uint8_t deref[] = { 0x41, 0x0f, 5, 0x77, 40, 0x06, 0x23, 8 };
	expect_rows(deref, sizeof(deref), "0 rsp+8; 1 *(rsp+40)+8; 64 none", 0);
	/* anything else: breg7 8; breg0 0; plus */
	const uint8_t other[] = { 0x0f, 5, 0x77, 8, 0x70, 0, 0x22 };
	expect_rows(other, sizeof(other), "0 unsupported; 64 none", 0);
	/* rbp saved by an expression: kept, marked */
	const uint8_t rbp_expr[] = { 0x10, 6, 2, 0x76, 0 };
	expect_rows(rbp_expr, sizeof(rbp_expr), "0 rsp+8 rbp=unsupported; 64 none", 0);
}

Test(cfi_section, what_the_kernel_cannot_follow)
{
	const uint8_t ra_elsewhere[] = { 0x90, 2 }; /* rip at cfa-16 */
	expect_rows(ra_elsewhere, sizeof(ra_elsewhere), "0 unsupported; 64 none", 0);
	const uint8_t ra_undefined[] = { 0x07, 16 };
	expect_rows(ra_undefined, sizeof(ra_undefined), "0 end; 64 none", 0);
	const uint8_t cfa_below[] = { 0x0e, 0 }; /* CFA = rsp: no room for a return address */
	expect_rows(cfa_below, sizeof(cfa_below), "0 unsupported; 64 none", 0);
	const uint8_t odd_offset[] = { 0x0e, 12 };
	expect_rows(odd_offset, sizeof(odd_offset), "0 unsupported; 64 none", 0);
	const uint8_t huge_frame[] = { 0x0e, 0x80, 0x80, 0x80, 0x04 }; /* 8 MiB */
	expect_rows(huge_frame, sizeof(huge_frame), "0 unsupported; 64 none", 0);
	const uint8_t rsp_rule[] = { 0x08, 7 }; /* rsp: same value */
	expect_rows(rsp_rule, sizeof(rsp_rule), "0 unsupported; 64 none", 0);
	const uint8_t other_reg[] = { 0x0c, 10, 0 }; /* CFA = r10 (a stack realignment) */
	expect_rows(other_reg, sizeof(other_reg), "0 r10+0; 64 none", 0);
}

Test(cfi_section, advance_past_the_end)
{
	const uint8_t p[] = { 0x41, 0x0e, 16, 0x04, 0, 0, 0, 1, 0x0e, 32 };
	expect_rows(p, sizeof(p), "0 rsp+8; 1 rsp+16; 64 none", 0);
}

/* Malformed programs make their function unsupported, counted. */
Test(cfi_section, malformed_programs)
{
	uint8_t deep[80];
	memset(deep, 0x0a, sizeof(deep)); /* remember_state 80 times */
	expect_rows(deep, sizeof(deep), "0 unsupported; 64 none", 1);
	const uint8_t pop_empty[] = { 0x0b };
	expect_rows(pop_empty, sizeof(pop_empty), "0 unsupported; 64 none", 1);
	const uint8_t unknown[] = { 0x41, 0x20 };
	expect_rows(unknown, sizeof(unknown), "0 unsupported; 64 none", 1);
	/* 7 bytes: the FDE needs no padding (nops) after them */
	const uint8_t truncated_uleb[] = { 0x0e, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80 };
	expect_rows(truncated_uleb, sizeof(truncated_uleb), "0 unsupported; 64 none", 1);
	const uint8_t block_too_long[] = { 0x0f, 100, 0x77 };
	expect_rows(block_too_long, sizeof(block_too_long), "0 unsupported; 64 none", 1);
	const uint8_t set_loc_back[] = { 0x41, 0x01, 0, 0, 0, 0 }; /* pc-relative 0: the field */
	expect_rows(set_loc_back, sizeof(set_loc_back), "0 unsupported; 64 none", 1);
}

Test(cfi_section, bad_entries)
{
	/* An FDE whose CIE pointer leads nowhere, an unknown augmentation
	 * before 'R', then a good FDE. */
	struct sec s = { .n = 0 };
	put_cie(&s, "zR", NULL, 0);
	size_t cie2 = s.n;
	put_cie(&s, "zXR", NULL, 0);
	put_fde(&s, 3, FN_START, 16, NULL, 0);
	put_fde(&s, (uint32_t)cie2, FN_START + 16, 16, NULL, 0);
	put_fde(&s, 0, FN_START + 32, 16, NULL, 0);
	expect_table(&s, "32 rsp+8; 48 none", 1, 2, 0);
	/* A length past the section's end stops the walk. */
	struct sec cut = { .n = 0 };
	put_cie(&cut, "zR", NULL, 0);
	put32(&cut, 4000);
	put32(&cut, 0);
	struct cfi_table *t = cfi_table_from_section(cut.b, cut.n, SEC_ADDR, true);
	cr_assert_eq(t->nrows, 0);
	cr_assert_eq(t->fdes_bad, 1);
	cfi_table_free(t);
}

Test(cfi_section, overlaps_and_gaps)
{
	struct sec s = { .n = 0 };
	const uint8_t grow[] = { 0x41, 0x0e, 16 };
	put_cie(&s, "zR", NULL, 0);
	put_fde(&s, 0, FN_START + 32, 16, grow, sizeof(grow)); /* out of order */
	put_fde(&s, 0, FN_START, 16, grow, sizeof(grow));
	put_fde(&s, 0, FN_START + 8, 16, NULL, 0);        /* overlaps the one before */
	put_fde(&s, 0, FN_START + 16, 16, NULL, 0);       /* adjacent: rsp+8 continues */
	put_fde(&s, 0, 0, 16, NULL, 0);                   /* a dropped function */
	expect_table(&s, "0 rsp+8; 1 rsp+16; 16 rsp+8; 33 rsp+16; 48 none", 3, 0, 1);
}

/* ---- the unwinder on a fake stack -------------------------------------- */

struct fake_stack {
	uint64_t base; /* address of word 0 */
	uint64_t w[64];
};

static bool fake_read(void *ctx, uint64_t addr, uint64_t *value)
{
	struct fake_stack *f = ctx;
	if (addr < f->base || addr >= f->base + sizeof(f->w) || (addr - f->base) % 8)
		return false;
	*value = f->w[(addr - f->base) / 8];
	return true;
}

/* One function at FN_START: rows "0 rsp+8; 1 rsp+16 rbp=c-16; 4 rbp+16
 * rbp=c-16", a frame-pointer prologue. */
static struct cfi_table *fp_function(void)
{
	struct sec s = { .n = 0 };
	const uint8_t p[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6 };
	put_cie(&s, "zR", NULL, 0);
	put_fde(&s, 0, FN_START, 64, p, sizeof(p));
	return table_from(&s);
}

Test(cfi_step, rules)
{
	struct cfi_table *t = fp_function();
	struct fake_stack f = { .base = 0x7000 };
	const uint64_t bias = 0x555500000000;
	/* At the first instruction: the return address at rsp. */
	f.w[0] = 0x1234;
	struct cfi_regs r = { .rip = bias + FN_START, .rsp = 0x7000, .rbp = 42, .rbp_known = true,
			      .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert(r.rip == 0x1234 && r.rsp == 0x7008 && r.rbp == 42 && r.rbp_known && !r.exact_pc);
	/* After push rbp: rbp saved at CFA-16. */
	f.w[0] = 77;
	f.w[1] = 0x1234;
	r = (struct cfi_regs){ .rip = bias + FN_START + 1, .rsp = 0x7000, .rbp = 42,
			       .rbp_known = true, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert(r.rip == 0x1234 && r.rsp == 0x7010 && r.rbp == 77);
	/* In the body, by rbp; a return address is looked up at pc - 1: the
	 * end of the function still belongs to it. */
	r = (struct cfi_regs){ .rip = bias + FN_START + 64, .rsp = 0x6ff0, .rbp = 0x7000,
			       .rbp_known = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert(r.rip == 0x1234 && r.rsp == 0x7010 && r.rbp == 77);
	/* rbp lost by an earlier frame: the body cannot be unwound. */
	r = (struct cfi_regs){ .rip = bias + FN_START + 8, .rsp = 0x6ff0, .rbp = 0x7000,
			       .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_NO_RBP);
	cr_assert_eq(r.rip, bias + FN_START + 8, "unchanged on failure");
	/* Outside the table: frame pointers. */
	f.w[2] = 0x7020;
	f.w[3] = 0x4321;
	r = (struct cfi_regs){ .rip = bias + FN_START + 100, .rsp = 0x7000, .rbp = 0x7010,
			       .rbp_known = true, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_FP);
	cr_assert(r.rip == 0x4321 && r.rsp == 0x7020 && r.rbp == 0x7020);
	/* A frame pointer below the stack pointer is no frame. */
	r = (struct cfi_regs){ .rip = 5, .rsp = 0x7000, .rbp = 0x6000, .rbp_known = true };
	cr_assert_eq(cfi_unwind_step(NULL, 0, &r, fake_read, &f), CFI_STEP_BAD_FRAME);
	/* Unreadable stack, zero return address. */
	r = (struct cfi_regs){ .rip = bias + FN_START, .rsp = 0x9000, .rbp_known = true,
			       .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_READ_FAULT);
	f.w[0] = 0;
	r = (struct cfi_regs){ .rip = bias + FN_START, .rsp = 0x7000, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, bias, &r, fake_read, &f), CFI_STEP_BAD_FRAME);
	cfi_table_free(t);
}

Test(cfi_step, plt_and_leaf_registers)
{
	struct sec s = { .n = 0 };
	const uint8_t plt[] = { 0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22 };
	const uint8_t r10[] = { 0x0c, 10, 8 };
	put_cie(&s, "zR", NULL, 0);
	put_fde(&s, 0, FN_START, 32, plt, sizeof(plt));
	put_fde(&s, 0, FN_START + 32, 16, r10, sizeof(r10));
	struct cfi_table *t = table_from(&s);
	struct fake_stack f = { .base = 0x7000 };
	f.w[0] = 0x111;
	f.w[1] = 0x222;
	/* In a PLT entry before its push (low nibble < 11): CFA = rsp + 8. */
	struct cfi_regs r = { .rip = FN_START + 16 + 6, .rsp = 0x7000, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, 0, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert_eq(r.rip, 0x111);
	/* After it (>= 11): one more word. */
	r = (struct cfi_regs){ .rip = FN_START + 16 + 11, .rsp = 0x7000, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, 0, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert_eq(r.rip, 0x222);
	/* CFA = r10 + 8: with the interrupted frame's registers only. */
	uint64_t gprs[17] = { 0 };
	gprs[10] = 0x7000;
	r = (struct cfi_regs){ .rip = FN_START + 40, .rsp = 0x6f00, .exact_pc = true, .gprs = gprs };
	cr_assert_eq(cfi_unwind_step(t, 0, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert(r.rip == 0x111 && r.rsp == 0x7008 && !r.gprs);
	r = (struct cfi_regs){ .rip = FN_START + 40, .rsp = 0x6f00, .exact_pc = true };
	cr_assert_eq(cfi_unwind_step(t, 0, &r, fake_read, &f), CFI_STEP_UNSUPPORTED);
	cfi_table_free(t);
}

/* A signal trampoline's FDE ('S' CIE, as glibc's __restore_rt): the
 * interrupted frame's registers come from the ucontext at rsp, and its pc
 * is exact. A variant with another offset is not followed. */
Test(cfi_step, signal_frame)
{
	const uint8_t sig[] = { 0x0f, 4, 0x77, 0xa0, 0x01, 0x06,      /* CFA = *(rsp + 160) */
				0x10, 16, 3, 0x77, 0xa8, 0x01,        /* rip at rsp + 168 */
				0x10, 7, 3, 0x77, 0xa0, 0x01,         /* rsp at rsp + 160 */
				0x10, 6, 3, 0x77, 0xf8, 0x00 };       /* rbp at rsp + 120 */
	struct sec s = { .n = 0 };
	put_cie(&s, "zRS", NULL, 0);
	put_fde(&s, 0, FN_START, 16, sig, sizeof(sig));
	uint8_t other[sizeof(sig)];
	memcpy(other, sig, sizeof(sig));
	other[22] = 0xf0; /* rbp at rsp + 112 */
	put_fde(&s, 0, FN_START + 16, 16, other, sizeof(other));
	struct cfi_table *t = table_from(&s);
	char got[256];
	rows_text(t, got, sizeof(got));
	cr_assert_str_eq(got, "0 signal; 16 unsupported; 32 none");
	struct fake_stack f = { .base = 0x7000 };
	f.w[21] = 0xabc;
	f.w[20] = 0x9000;
	f.w[15] = 0x55;
	/* The handler returned to the trampoline's first instruction: its
	 * FDE starts one byte before, as glibc's does. */
	struct cfi_regs r = { .rip = FN_START + 1, .rsp = 0x7000 };
	cr_assert_eq(cfi_unwind_step(t, 0, &r, fake_read, &f), CFI_STEP_CFI);
	cr_assert(r.rip == 0xabc && r.rsp == 0x9000 && r.rbp == 0x55 && r.rbp_known && r.exact_pc);
	cfi_table_free(t);
}

/* ---- the cache --------------------------------------------------------- */

static size_t bytes_of(const char *path)
{
	struct cfi_table *t = table_of(path);
	size_t n = cfi_table_bytes(t);
	cfi_table_free(t);
	return n;
}

static void run_cmd(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(cfi_cache, hits_by_build_id)
{
	struct cfi_cache *c = cfi_cache_new(1 << 20);
	char err[256];
	const struct cfi_table *a = cfi_cache_get(c, NOFP_GCC, err, sizeof(err));
	cr_assert(a, "%s", err);
	cr_assert_gt(a->build_id_len, 0);
	/* The same file by another path, and a copy of it: one table. */
	char copy[] = "/tmp/sonde-cfi-copy-XXXXXX";
	int fd = mkstemp(copy);
	cr_assert(fd >= 0);
	close(fd);
	run_cmd("cp %s %s", NOFP_GCC, copy);
	const struct cfi_table *b = cfi_cache_get(c, "/proc/self/root" NOFP_GCC, err, sizeof(err));
	const struct cfi_table *d = cfi_cache_get(c, copy, err, sizeof(err));
	cr_assert(a == b && b == d);
	struct cfi_cache_stats st;
	cfi_cache_get_stats(c, &st);
	cr_assert_eq(st.tables_built, 1);
	cr_assert_eq(st.hits, 2);
	cr_assert_eq(st.tables, 1);
	cr_assert_eq(st.bytes, cfi_table_bytes(a));
	cr_assert_eq(st.rows_built, a->nrows);
	cfi_cache_put(c, a);
	cfi_cache_put(c, b);
	cfi_cache_put(c, d);
	unlink(copy);
	cfi_cache_free(c);
}

Test(cfi_cache, budget_and_eviction)
{
	size_t exe = bytes_of(NOFP_GCC), lib = bytes_of(LIBNOFP_GCC), clang = bytes_of(NOFP_CLANG);
	/* Room for the two largest, not for three. */
	size_t budget = exe + clang;
	struct cfi_cache *c = cfi_cache_new(budget);
	char err[256];
	const struct cfi_table *a = cfi_cache_get(c, NOFP_GCC, err, sizeof(err));
	const struct cfi_table *b = cfi_cache_get(c, LIBNOFP_GCC, err, sizeof(err));
	cr_assert(a && b);
	cfi_cache_put(c, a); /* a is now the least recently used, and unheld */
	const struct cfi_table *d = cfi_cache_get(c, NOFP_CLANG, err, sizeof(err));
	cr_assert(d, "%s", err);
	struct cfi_cache_stats st;
	cfi_cache_get_stats(c, &st);
	cr_assert_eq(st.evictions, 1);
	cr_assert_eq(st.tables, 2);
	cr_assert_eq(st.bytes, lib + clang);
	cr_assert_leq(st.bytes, budget);
	/* Held tables are never evicted: a fourth does not fit. */
	const struct cfi_table *e = cfi_cache_get(c, NOFP_GCC, err, sizeof(err));
	cr_assert_null(e);
	cr_assert(strstr(err, "does not fit"), "%s", err);
	cfi_cache_get_stats(c, &st);
	cr_assert_eq(st.over_budget, 1);
	cr_assert_eq(st.tables_built, 4);
	/* Released, it makes room. */
	cfi_cache_put(c, b);
	e = cfi_cache_get(c, NOFP_GCC, err, sizeof(err));
	cr_assert(e, "%s", err);
	cfi_cache_get_stats(c, &st);
	cr_assert_eq(st.evictions, 2);
	cr_assert_eq(st.bytes, exe + clang);
	cfi_cache_put(c, d);
	cfi_cache_put(c, e);
	cfi_cache_free(c);

	/* A table larger than the whole budget: refused once, remembered. */
	c = cfi_cache_new(100);
	cr_assert_null(cfi_cache_get(c, NOFP_GCC, err, sizeof(err)));
	cr_assert(strstr(err, "exceeds the budget"), "%s", err);
	cr_assert_null(cfi_cache_get(c, NOFP_GCC, err, sizeof(err)));
	cfi_cache_get_stats(c, &st);
	cr_assert(st.over_budget == 1 && st.tables_built == 1 && st.hits == 1 && st.bytes == 0);
	cfi_cache_free(c);
}

Test(cfi_cache, binaries_without_cfi_or_build_id)
{
	struct cfi_cache *c = cfi_cache_new(1 << 20);
	char err[256];
	char dir[] = "/tmp/sonde-cfi-XXXXXX";
	cr_assert(mkdtemp(dir));
	char nocfi[128], noid[128];
	snprintf(nocfi, sizeof(nocfi), "%s/nocfi", dir);
	snprintf(noid, sizeof(noid), "%s/noid", dir);
	run_cmd("objcopy --remove-section .eh_frame --remove-section .eh_frame_hdr "
		"--remove-section .debug_frame %s %s", NOFP_GCC, nocfi);
	run_cmd("objcopy --remove-section .note.gnu.build-id %s %s", NOFP_GCC, noid);
	cr_assert_null(cfi_cache_get(c, nocfi, err, sizeof(err)));
	cr_assert(strstr(err, "no unwind tables"), "%s", err);
	cr_assert_null(cfi_cache_get(c, nocfi, err, sizeof(err)));
	cr_assert_null(cfi_cache_get(c, "/etc/passwd", err, sizeof(err)));
	cr_assert(strstr(err, "not an ELF file"), "%s", err);
	/* Without a build-id, the file's identity: a file changed on disk is
	 * another binary. */
	const struct cfi_table *a = cfi_cache_get(c, noid, err, sizeof(err));
	cr_assert(a, "%s", err);
	cr_assert_eq(a->build_id_len, 0);
	cfi_cache_put(c, a);
	cr_assert_eq(cfi_cache_get(c, noid, err, sizeof(err)), a);
	cfi_cache_put(c, a);
	struct timespec later[2] = { { 0, UTIME_OMIT }, { 1000000000, 0 } };
	cr_assert_eq(utimensat(AT_FDCWD, noid, later, 0), 0);
	const struct cfi_table *b = cfi_cache_get(c, noid, err, sizeof(err));
	cr_assert(b);
	cfi_cache_put(c, b);
	struct cfi_cache_stats st;
	cfi_cache_get_stats(c, &st);
	cr_assert_eq(st.no_cfi, 1);
	cr_assert_eq(st.not_elf, 1);
	cr_assert_eq(st.tables_built, 2);
	cr_assert_eq(st.hits, 2);
	cfi_cache_free(c);
	run_cmd("rm -rf %s%s", dir, "");
}
