/* cfitables — builds the unwind table (src/symbols/cfi.h) of each file given
 * and prints what it holds and how long the build took; with --dump, every
 * row. Used by bench/cfi.sh.
 * usage: cfitables [--dump] [--runs N] FILE... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cfi.h"

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

int main(int argc, char **argv)
{
	bool want_dump = false;
	int runs = 1, i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--dump") == 0)
			want_dump = true;
		else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
			runs = atoi(argv[++i]);
		else
			break;
	}
	if (i == argc || runs < 1) {
		fprintf(stderr, "usage: cfitables [--dump] [--runs N] FILE...\n");
		return 2;
	}
	static const char *const kinds[16] = { "none", "rsp", "rbp", "plt", "deref_rsp",
					       "deref_rbp", "reg", "signal", "end" };
	int status = 0;
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
