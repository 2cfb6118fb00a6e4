/* sonde explore — a function's structure (symbols/structure.h) printed
 * (render/explorer.h): its source lines with where line and branch probes
 * go, its basic blocks, loops and inlined calls; with --counts, a
 * recording's samples per line and its probes' exact counts. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "errbuf.h"
#include "explorer.h"
#include "formats.h"
#include "json.h"
#include "outfile.h"
#include "printable.h"
#include "probes.h"
#include "structure.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("usage: sonde explore -e BINARY FUNC|FILE:LINE [--source-dir DIR] [--asm]\n"
	      "                     [--counts RECORDING] [--json] [-o OUT]\n"
	      "       sonde explore -e BINARY [--json]\n"
	      "\n"
	      "Without FUNC: the binary's functions, by address, each with its size and\n"
	      "where its code begins in the source.\n"
	      "Shows a function's structure, where probes go on it: its source lines, each\n"
	      "marked with the addresses a line probe (--trace FILE:LINE) uses (one per copy\n"
	      "of the line's code: inlined and out-of-line copies; ! where the kernel cannot\n"
	      "step one) and its conditional jumps (--trace 'branch FILE:LINE'); then its\n"
	      "basic blocks with their successors, its loops (back edges) and the calls\n"
	      "inlined into it. FILE:LINE explores the function holding the line.\n"
	      "  -e BINARY    the program or library (a path, or a program in PATH)\n"
	      "  --source-dir DIR  look for the source file under DIR first (its path below\n"
	      "               the compilation directory, then its name); where it is not\n"
	      "               found, each line is shown by its instructions\n"
	      "  --asm        each line's instructions too, with their block\n"
	      "  --counts RECORDING  samples per line from a recording of the program (SELF:\n"
	      "               the line ran, TOTAL: it ran or called; sampled), and the exact\n"
	      "               counts of its line and branch probes on these lines\n"
	      "  --json       the same as JSON (lines, blocks, loops, scopes, insns)\n"
	      "  -o OUT       write to OUT instead of standard output\n",
	      f);
}

struct explore_args {
	const char *binary, *target, *source_dir, *counts, *output;
	bool json, asm_lines;
};

static int parse_args(int argc, char **argv, struct explore_args *a, int *exit_code)
{
	enum { OPT_SOURCE_DIR = 1000, OPT_ASM, OPT_COUNTS, OPT_JSON };
	static const struct option opts[] = {{"source-dir", required_argument, NULL, OPT_SOURCE_DIR},
					     {"asm", no_argument, NULL, OPT_ASM},
					     {"counts", required_argument, NULL, OPT_COUNTS},
					     {"json", no_argument, NULL, OPT_JSON},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	memset(a, 0, sizeof(*a));
	a->output = "-";
	*exit_code = 2;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, "e:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e': a->binary = optarg; break;
		case 'o': a->output = optarg; break;
		case OPT_SOURCE_DIR: a->source_dir = optarg; break;
		case OPT_ASM: a->asm_lines = true; break;
		case OPT_COUNTS: a->counts = optarg; break;
		case OPT_JSON: a->json = true; break;
		case 'h':
			usage(stdout);
			*exit_code = 0;
			return -1;
		default:
			errorf("see sonde explore --help");
			return -1;
		}
	}
	if (!a->binary || optind < argc - 1) {
		errorf("explore needs -e BINARY and at most one FUNC or FILE:LINE (see sonde explore --help)");
		return -1;
	}
	a->target = optind < argc ? argv[optind] : NULL;
	return 0;
}

/* explore -e BINARY: its functions. */
static int list_functions(const struct explore_args *a)
{
	char err[1024];
	struct structure_fn *fns;
	int n = structure_functions(a->binary, &fns, err, sizeof(err));
	if (n < 0) {
		errorf("%s", err);
		return 1;
	}
	struct outfile out;
	if (outfile_open(&out, a->output, err, sizeof(err))) {
		errorf("%s", err);
		structure_fns_free(fns, n);
		return 1;
	}
	struct printable keep = {0};
	if (a->json) {
		fputs("{\"functions\": [", out.f);
		for (int i = 0; i < n; i++) {
			fprintf(out.f, "%s\n  {\"name\": ", i ? "," : "");
			json_write_string(out.f, fns[i].name);
			fprintf(out.f, ", \"addr\": %llu, \"size\": %llu, \"file\": ",
				(unsigned long long)fns[i].vaddr, (unsigned long long)fns[i].size);
			if (fns[i].file)
				json_write_string(out.f, fns[i].file);
			else
				fputs("null", out.f);
			fprintf(out.f, ", \"line\": %u}", fns[i].line);
		}
		fputs("]}\n", out.f);
	} else {
		fprintf(out.f, "%d functions in %s (explore one: sonde explore -e %s FUNC)\n", n,
			printable(&keep, a->binary), printable(&keep, a->binary));
		fprintf(out.f, "%18s %8s  %-40s %s\n", "ADDRESS", "BYTES", "FUNCTION", "SOURCE");
		for (int i = 0; i < n; i++) {
			char src[300] = "";
			if (fns[i].file)
				snprintf(src, sizeof(src), "%s:%u", fns[i].file, fns[i].line);
			fprintf(out.f, "%#18llx %8llu  %-40s %s\n", (unsigned long long)fns[i].vaddr,
				(unsigned long long)fns[i].size, printable(&keep, fns[i].name),
				printable(&keep, src));
		}
	}
	printable_free(&keep);
	structure_fns_free(fns, n);
	int rc = outfile_commit(&out, err, sizeof(err));
	if (rc)
		errorf("%s", err);
	return rc ? 1 : 0;
}

int cmd_explore(int argc, char **argv)
{
	struct explore_args a;
	int exit_code;
	if (parse_args(argc, argv, &a, &exit_code))
		return exit_code;
	if (!a.target)
		return list_functions(&a);
	struct structure_query q = {.binary = a.binary, .source_dir = a.source_dir};
	char *bin = NULL, *file = NULL;
	unsigned line = 0;
	if (probes_split_line(a.target, &bin, &file, &line) == 1 && !bin && *file && line) {
		q.file = file;
		q.line = line;
	} else {
		q.func = a.target;
	}
	free(bin);
	char err[1024];
	struct structure s;
	if (structure_build(&q, &s, err, sizeof(err))) {
		errorf("%s", err);
		free(file);
		return 1;
	}
	free(file);
	struct explorer_counts counts = {0};
	struct profile *p = NULL;
	if (a.counts) {
		p = formats_load(a.counts, NULL, NULL, err, sizeof(err));
		if (!p) {
			errorf("%s", err);
			structure_free(&s);
			return 1;
		}
		explorer_counts_fill(&counts, p, &s, a.counts);
	}
	struct explorer_options o = {.asm_lines = a.asm_lines, .counts = a.counts ? &counts : NULL};
	struct outfile out;
	int rc = 1;
	if (outfile_open(&out, a.output, err, sizeof(err))) {
		errorf("%s", err);
	} else {
		if (a.json)
			explorer_json(out.f, &s, &o);
		else
			explorer_text(out.f, &s, &o);
		if (outfile_commit(&out, err, sizeof(err)))
			errorf("%s", err);
		else
			rc = 0;
	}
	explorer_counts_free(&counts);
	if (p)
		profile_free(p);
	structure_free(&s);
	return rc;
}
