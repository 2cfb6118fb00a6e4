/* sonde probe — where probes can go, before tracing.
 *
 *   sonde probe -e BINARY --lines FUNC
 *
 * prints FUNC's source lines (as perf probe -L does), each line where a
 * line probe (--trace FILE:LINE) can go marked with how many addresses it
 * has: one per copy of the line's code (inlined instances count apart;
 * probes.h, lines.h). Lines of other files inlined into FUNC follow. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "lines.h"
#include "printable.h"
#include "probes.h"
#include "util.h"

/* Lines without code between two with code, past which "..." is printed. */
#define GAP_SHOWN 4

static void usage(FILE *f)
{
	fputs("usage: sonde probe -e BINARY --lines FUNC\n"
	      "\n"
	      "Lists FUNC's source lines, marking each line a line probe can go on\n"
	      "(sonde record|top --trace FILE:LINE) with how many addresses it has: one per\n"
	      "copy of its code (every inlined instance, every out-of-line copy).\n"
	      "  -e, --exe BINARY   the program or library (a path, or a program in PATH)\n"
	      "  --lines FUNC       the function whose lines to list\n"
	      "BINARY needs debug info (DWARF): its own, or a separate debug file\n"
	      "(a -dbgsym package, libc6-dbg, debuginfod-find).\n",
	      f);
}

/* Prints the rows of one file: source text where the file can be read. */
static void print_file(const struct line_row *rows, int n, struct printable *keep)
{
	const char *path = rows[0].file;
	FILE *src = fopen(path, "r");
	printf("%s%s\n", printable(keep, path), src ? "" : " (source not found: line numbers only)");
	printf("  ADDRS  LINE\n");
	unsigned first = rows[0].line, last = rows[n - 1].line;
	char *buf = NULL;
	size_t cap = 0;
	unsigned at = 0; /* lines of src read */
	int k = 0;
	bool gap = false;
	for (unsigned l = first; l <= last; l++) {
		const char *text = "";
		if (src) {
			while (at < l && getline(&buf, &cap, src) >= 0)
				at++;
			if (at == l) {
				buf[strcspn(buf, "\n")] = 0;
				text = buf;
			}
		}
		while (k < n && rows[k].line < l)
			k++;
		bool code = k < n && rows[k].line == l;
		/* Far from any line with code: left out. */
		bool near = code || (k < n && rows[k].line - l <= GAP_SHOWN / 2) ||
			    (k > 0 && l - rows[k - 1].line <= GAP_SHOWN / 2);
		if (!near) {
			if (!gap)
				printf("  ...\n");
			gap = true;
			continue;
		}
		gap = false;
		if (code)
			printf("  %5d  %4u  %s\n", rows[k].sites, l, printable_text(keep, text));
		else
			printf("         %4u  %s\n", l, printable_text(keep, text));
	}
	free(buf);
	if (src)
		fclose(src);
}

int cmd_probe(int argc, char **argv)
{
	const char *binary = NULL, *func = NULL;
	enum { OPT_LINES = 1000 };
	static const struct option longopts[] = {{"exe", required_argument, NULL, 'e'},
						 {"lines", required_argument, NULL, OPT_LINES},
						 {"help", no_argument, NULL, 'h'},
						 {0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "e:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			binary = optarg;
			break;
		case OPT_LINES:
			func = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!binary || !func || optind < argc) {
		errorf("probe: give -e BINARY and --lines FUNC (sonde probe --help)");
		return 2;
	}
	struct probes_lines pl;
	char err[1024];
	if (probes_function_lines(binary, func, &pl, err, sizeof(err)) < 0) {
		errorf("%s", err);
		return 1;
	}
	if (pl.n == 0) {
		errorf("%s in %s has no line table rows: its compile unit has no line "
		       "information",
		       func, pl.binary);
		probes_lines_free(&pl);
		return 1;
	}
	struct printable keep = {0};
	printf("%s in %s: ADDRS = addresses a line probe on the line would use\n",
	       printable(&keep, func), printable(&keep, pl.binary));
	for (int i = 0; i < pl.n;) {
		int j = i;
		while (j < pl.n && strcmp(pl.rows[j].file, pl.rows[i].file) == 0)
			j++;
		printf("\n");
		print_file(pl.rows + i, j - i, &keep);
		i = j;
	}
	printable_free(&keep);
	probes_lines_free(&pl);
	return 0;
}
