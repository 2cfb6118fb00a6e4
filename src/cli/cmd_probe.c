/* sonde probe — what a probe spec can see, before tracing anything.
 *
 *   sonde probe -e BINARY --vars SPEC   the variables visible at each of the
 *                                       spec's addresses, with their types,
 *                                       and whether each is readable there
 *
 * SPEC is a probe location as --trace takes it (FUNC, LIB:FUNC, globs; the
 * function's entry). A variable readable at some of the addresses only says
 * at how many. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dwarfvar.h"
#include "printable.h"
#include "probes.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("usage: sonde probe -e BINARY --vars SPEC\n"
	      "\n"
	      "Lists the variables visible at the addresses SPEC names in BINARY (FUNC:\n"
	      "its entry, as --trace 'FUNC VAR...' reads them): arguments, locals of the\n"
	      "scopes holding the address, the compile unit's globals, each with its C\n"
	      "type and whether sonde can read it there (\"yes\", \"yes (location list)\",\n"
	      "or why not: optimized out, not available at this address, an operation\n"
	      "sonde cannot read). Other globals of the program can be captured too.\n"
	      "  -e BINARY    the program or library (a path or a program in PATH)\n"
	      "  --vars SPEC  FUNC, LIB:FUNC, or a glob\n"
	      "  -h, --help   show this help\n",
	      f);
}

struct row {
	char *name, *type, *where, *readable;
	int readable_at; /* addresses where it is readable */
	int seen;        /* addresses where it is visible */
};

static void add_rows(struct row **rows, int *n, const struct dwarfvar_visible *v, int nv)
{
	for (int i = 0; i < nv; i++) {
		struct row *r = NULL;
		for (int k = 0; k < *n && !r; k++)
			if (!strcmp((*rows)[k].name, v[i].name) && !strcmp((*rows)[k].type, v[i].type))
				r = &(*rows)[k];
		if (!r) {
			*rows = xrealloc(*rows, (size_t)(*n + 1) * sizeof(**rows));
			r = &(*rows)[(*n)++];
			*r = (struct row){.name = xstrdup(v[i].name), .type = xstrdup(v[i].type),
					  .where = xstrdup(v[i].where), .readable = xstrdup(v[i].readable)};
		} else if (strncmp(v[i].readable, "yes", 3) != 0 || r->readable_at == r->seen) {
			free(r->readable);
			r->readable = xstrdup(v[i].readable); /* why not, somewhere */
		}
		r->seen++;
		r->readable_at += strncmp(v[i].readable, "yes", 3) == 0;
	}
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{"vars", required_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *binary = NULL, *vars = NULL;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "e:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			binary = optarg;
			break;
		case 'V':
			vars = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!binary || !vars || optind != argc) {
		errorf("probe needs -e BINARY and --vars SPEC (see sonde probe --help)");
		return 2;
	}
	struct probe_scope scope = {.executable = binary};
	struct probe_target *t;
	char note[512], err[512];
	int n = probes_resolve(vars, &scope, &t, note, sizeof(note), err, sizeof(err));
	if (n < 0) {
		errorf("%s", err);
		return 1;
	}
	struct printable keep = {0};
	int rc = 0;
	/* One table per function: the addresses of one spec that share a
	 * name (a line's instances, once FILE:LINE probes exist) together. */
	for (int i = 0, j; i < n && !rc; i = j) {
		struct row *rows = NULL;
		int nrows = 0;
		for (j = i; j < n && strcmp(t[j].function, t[i].function) == 0; j++) {
			struct dwarfvar_visible *v;
			int nv = dwarfvar_list(t[j].binary, t[j].offset, &v, err, sizeof(err));
			if (nv < 0) {
				errorf("%s", err);
				rc = 1;
				break;
			}
			add_rows(&rows, &nrows, v, nv);
			dwarfvar_visible_free(v, nv);
		}
		int naddr = j - i;
		if (!rc) {
			printf("%s in %s, %d address%s (file offset%s", printable(&keep, t[i].function),
			       printable(&keep, t[i].binary), naddr, naddr == 1 ? "" : "es",
			       naddr == 1 ? "" : "s");
			for (int k = i; k < j; k++)
				printf(" 0x%llx", (unsigned long long)t[k].offset);
			printf("):\n  %-9s %-28s %-20s %s\n", "WHERE", "TYPE", "NAME", "READABLE");
		}
		for (int k = 0; k < nrows; k++) {
			struct row *r = &rows[k];
			char at[96] = "";
			if (r->seen < naddr)
				snprintf(at, sizeof(at), "visible at %d of %d addresses; ", r->seen, naddr);
			if (r->readable_at && r->readable_at < r->seen)
				snprintf(at + strlen(at), sizeof(at) - strlen(at),
					 "readable at %d of them; elsewhere ", r->readable_at);
			if (!rc)
				printf("  %-9s %-28s %-20s %s%s\n", r->where, printable(&keep, r->type),
				       printable(&keep, r->name), at, printable(&keep, r->readable));
			free(r->name);
			free(r->type);
			free(r->where);
			free(r->readable);
		}
		free(rows);
	}
	printable_free(&keep);
	probes_free(t, n);
	return rc;
}
