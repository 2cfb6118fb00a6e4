/* cfitables — builds the unwind table (src/symbols/cfi.h) of each file given
 * and prints what it holds and how long the build took (the best of N
 * runs); with --dump, every row. With --libdw, times the alternative
 * instead: libdw's per-address query (dwarf_cfi_addrframe) once per row,
 * each query's answer saying where the next row starts. Used by
 * bench/cfi.sh.
 * usage: cfitables [--dump | --libdw] [--runs N] FILE... */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <unistd.h>

#include "cfi.h"
#include "ehframe.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void dump(const struct cfi_table *t)
{
	for (uint32_t i = 0; i < t->nrows; i++) {
		char rule[64];
		cfi_rule_format(t->rows[i].rule, rule, sizeof(rule));
		printf("%016llx %s\n", (unsigned long long)(t->base + t->rows[i].pc), rule);
	}
}

struct libdw_run {
	Dwarf_CFI *cfi;
	uint64_t rows, failed;
};

/* Walks one FDE's range row by row with libdw. */
static bool libdw_fde(const struct ehframe_fde *fde, void *arg)
{
	struct libdw_run *r = arg;
	for (uint64_t pc = fde->start; pc < fde->end;) {
		Dwarf_Frame *frame;
		Dwarf_Addr start, end;
		if (dwarf_cfi_addrframe(r->cfi, pc, &frame) != 0) {
			r->failed++;
			break;
		}
		dwarf_frame_info(frame, &start, &end, NULL);
		Dwarf_Op *ops;
		size_t nops;
		dwarf_frame_cfa(frame, &ops, &nops);
		free(frame);
		r->rows++;
		if (end <= pc)
			break;
		pc = end;
	}
	return true;
}

/* The libdw alternative on path: rows and milliseconds. */
static bool libdw_time(const char *path, uint64_t *rows, double *ms)
{
	int fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct ehframe_section sec;
	if (!elf || !ehframe_section_find(elf, true, &sec)) {
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		return false;
	}
	double s = now_ms();
	struct libdw_run r = { .cfi = dwarf_getcfi_elf(elf) };
	if (r.cfi)
		ehframe_each_fde(&sec, libdw_fde, &r, NULL);
	*ms = now_ms() - s;
	*rows = r.rows;
	elf_end(elf);
	close(fd);
	return r.cfi != NULL;
}

int main(int argc, char **argv)
{
	bool want_dump = false, want_libdw = false;
	int runs = 1, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--dump") == 0)
			want_dump = true;
		else if (strcmp(argv[i], "--libdw") == 0)
			want_libdw = true;
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			break;
	}
	if (i == argc || runs < 1) {
		fprintf(stderr, "usage: cfitables [--dump | --libdw] [--runs N] FILE...\n");
		return 2;
	}
	static const char *const kinds[16] = { "none", "rsp", "rbp", "plt", "deref_rsp",
					       "deref_rbp", "reg", "signal", "end" };
	int status = 0;
	for (; i < argc && want_libdw; i++) {
		uint64_t rows = 0;
		double best = 0, ms;
		for (int r = 0; r < runs; r++) {
			if (!libdw_time(argv[i], &rows, &ms)) {
				fprintf(stderr, "cfitables: %s: libdw has no CFI for it\n", argv[i]);
				status = 1;
				break;
			}
			if (r == 0 || ms < best)
				best = ms;
		}
		printf("%s: libdw, one query per row: %llu rows, %.2f ms\n", argv[i],
		       (unsigned long long)rows, best);
	}
	for (; i < argc; i++) {
		char err[512];
		double best = 0;
		struct cfi_table *t = NULL;
		for (int r = 0; r < runs; r++) {
			FILE *f = fopen(argv[i], "rb");
			if (!f)
				break;
			double s = now_ms();
			cfi_table_free(t);
			t = cfi_table_from_fd(fileno(f), argv[i], err, sizeof(err));
			double e = now_ms() - s;
			fclose(f);
			if (r == 0 || e < best)
				best = e;
		}
		if (!t) {
			fprintf(stderr, "cfitables: %s: cannot build a table\n", argv[i]);
			status = 1;
			continue;
		}
		if (want_dump) {
			dump(t);
		} else {
			printf("%s: %u rows, %zu bytes, %.2f ms, %llu FDEs (%llu bad, %llu overlapping)",
			       argv[i], t->nrows, cfi_table_bytes(t), best,
			       (unsigned long long)t->fdes, (unsigned long long)t->fdes_bad,
			       (unsigned long long)t->fdes_overlap);
			for (int k = 0; k < 16; k++)
				if (t->rows_by_cfa[k])
					printf(", %s %llu", kinds[k] ? kinds[k] : "unsupported",
					       (unsigned long long)t->rows_by_cfa[k]);
			printf(", rbp unsupported %llu\n", (unsigned long long)t->rows_rbp_unsupported);
		}
		cfi_table_free(t);
	}
	return status;
}
