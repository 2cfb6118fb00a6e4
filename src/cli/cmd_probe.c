/* sonde probe — where probes can go and what they can see, before tracing.
 *
 *   sonde probe -e BINARY --lines FUNC  FUNC's source lines (as perf probe -L
 *                                       does), each line where a line probe
 *                                       (--trace FILE:LINE) can go marked
 *                                       with how many addresses it has: one
 *                                       per copy of the line's code (inlined
 *                                       instances count apart; probes.h,
 *                                       lines.h). Lines of other files
 *                                       inlined into FUNC follow.
 *   sonde probe -e BINARY --vars SPEC   the variables visible at each of the
 *                                       spec's addresses, with their types,
 *                                       and whether each is readable there
 *   sonde probe -e BINARY --python      the CPython interpreter BINARY runs
 *                                       (pyruntime.h): its version, file,
 *                                       and the layout sonde walks its
 *                                       frames with, and where that came from
 *   sonde probe -e BINARY --usdt        its statically defined probes (usdt.h):
 *                                       names as --trace 'usdt:...' takes
 *                                       them, arguments, semaphores
 *
 * SPEC is a probe location as --trace takes it (FUNC, LIB:FUNC, globs: the
 * function's entry; FILE:LINE: the line's addresses). A variable readable
 * at some of the addresses only says at how many. */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "dwarfvar.h"
#include "errbuf.h"
#include "lines.h"
#include "printable.h"
#include "probes.h"
#include "probebinary.h"
#include "pyframes.h"
#include "pyruntime.h"
#include "optval.h"
#include "usdt.h"
#include "util.h"

static void usage(FILE *f)
{
	fputs("usage: sonde probe -e BINARY --lines FUNC\n"
	      "       sonde probe -e BINARY --vars SPEC\n"
	      "       sonde probe -e BINARY --python\n"
	      "       sonde probe -p PID --python\n"
	      "       sonde probe -e BINARY --usdt\n"
	      "\n"
	      "--lines lists FUNC's source lines, marking each line a line probe can go on\n"
	      "(sonde record|top --trace FILE:LINE) with how many addresses it has: one per\n"
	      "copy of its code (every inlined instance, every out-of-line copy).\n"
	      "--vars lists the variables visible at the addresses SPEC names in BINARY\n"
	      "(FUNC: its entry, as --trace 'FUNC VAR...' reads them): arguments, locals of\n"
	      "the scopes holding the address, the compile unit's globals, each with its C\n"
	      "type and whether sonde can read it there (\"yes\", \"yes (location list)\",\n"
	      "or why not: optimized out, not available at this address, an operation\n"
	      "sonde cannot read). Other globals of the program can be captured too.\n"
	      "--python says which CPython BINARY runs (the program, or the libpython it\n"
	      "loads), and the offsets sonde reads its threads' Python frames with: from\n"
	      "the interpreter's own _Py_DebugOffsets (3.13), its DWARF, or sonde's table\n"
	      "of each version (3.10 to 3.13), and whether that table agrees. With -p PID,\n"
	      "of the interpreter that process runs, and then each of its threads' Python\n"
	      "frames, innermost first, as sonde reads them from its memory (without\n"
	      "stopping it).\n"
	      "--usdt lists BINARY's statically defined probes (.note.stapsdt: Python,\n"
	      "libc, Node, PostgreSQL have them), one a line as --trace takes them\n"
	      "(usdt:BINARY:PROVIDER:NAME), with their arguments' operands and semaphore.\n"
	      "  -e, --exe BINARY   the program or library (a path, or a program in PATH)\n"
	      "  -p, --pid PID      with --python: a running Python process\n"
	      "  --lines FUNC       the function whose lines to list\n"
	      "  --vars SPEC        FUNC, LIB:FUNC, a glob, or FILE:LINE\n"
	      "  --python           the Python interpreter BINARY runs\n"
	      "  --usdt             BINARY's USDT probes\n"
	      "  -h, --help         show this help\n"
	      "--lines and --vars need debug info (DWARF) in BINARY: its own, or a\n"
	      "separate debug file (a -dbgsym package, libc6-dbg, debuginfod-find).\n",
	      f);
}

/* Lines without code between two with code, past which "..." is printed. */
#define GAP_SHOWN 4

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
		if (code && rows[k].refused)
			printf("      -  %4u  %s\n  ^ no line probe here: %s\n", l,
			       printable_text(keep, text), printable(keep, rows[k].refused));
		else if (code)
			printf("  %5d  %4u  %s\n", rows[k].sites, l, printable_text(keep, text));
		else
			printf("         %4u  %s\n", l, printable_text(keep, text));
	}
	free(buf);
	if (src)
		fclose(src);
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

static int list_lines(const char *binary, const char *func)
{
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

static int list_vars(const char *binary, const char *vars)
{
	struct probe_scope scope = {.executable = binary};
	char note[512], err[512];
	struct probes_found found = {.note = note, .notelen = sizeof(note)};
	int n = probes_resolve(vars, &scope, &found, err, sizeof(err));
	struct probe_target *t = found.t;
	if (n < 0) {
		errorf("%s", err);
		return 1;
	}
	struct printable keep = {0};
	int rc = 0;
	/* One table per function: the addresses of one spec that share a
	 * name (a line's instances in one function) together. */
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
			printf("):\n");
			if (t[i].moved) /* the variables are read where the probe goes */
				printf("  the entry probe is %s\n", printable(&keep, t[i].moved));
			printf("  %-9s %-28s %-20s %s\n", "WHERE", "TYPE", "NAME", "READABLE");
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

/* An offset, or "-" for a field the version does not have. */
static const char *field_text(uint32_t v, char *buf, size_t size)
{
	if (v == PY_NO_FIELD)
		return "-";
	snprintf(buf, size, "+%u", v);
	return buf;
}

/* Each thread's Python frames, innermost first. */
static int show_threads(const struct py_process *pp)
{
	char err[512];
	struct py_thread *t;
	int n = pyprocess_threads(pp, 256, &t, err, sizeof(err));
	if (n < 0) {
		errorf("probe: %s", err);
		return 1;
	}
	struct printable keep = {0};
	for (int i = 0; i < n; i++) {
		printf("thread %llu (pthread 0x%llx): %zu Python frame%s%s\n",
		       (unsigned long long)t[i].native_thread_id,
		       (unsigned long long)t[i].thread_id, t[i].n, t[i].n == 1 ? "" : "s",
		       t[i].cut ? " (more not read)" : "");
		for (size_t k = 0; k < t[i].n; k++) {
			struct py_code_info c;
			if (pycode_describe(pp, t[i].frames[k].code, t[i].frames[k].lasti, &c)) {
				printf("  [code at 0x%llx: not readable]\n",
				       (unsigned long long)t[i].frames[k].code);
				continue;
			}
			printf("  %s", printable_text(&keep, c.qualname));
			printf(" (%s:%d)\n", printable_text(&keep, c.filename), c.line);
			pycode_info_free(&c);
		}
	}
	printable_free(&keep);
	pythreads_free(t, n);
	return 0;
}

static int show_python(const char *binary, pid_t pid)
{
	char err[512] = "";
	struct py_layout l;
	char *path = NULL;
	struct py_process pp = {0};
	int r;
	if (pid > 0) {
		r = pyprocess_open(pid, &pp, err, sizeof(err));
		if (r == 1) {
			l = pp.layout;
			path = xstrdup(display_path(pp.path));
		}
	} else {
		char *exe = probes_which(binary);
		r = pyruntime_find(exe ? exe : binary, &l, &path, err, sizeof(err));
		free(exe);
	}
	if (r < 0) {
		errorf("probe: %s", err);
		return 1;
	}
	if (r == 0) {
		if (pid > 0)
			errorf("probe: process %d runs no CPython interpreter sonde knows: neither "
			       "its program nor a python library it maps defines _PyRuntime",
			       (int)pid);
		else
			errorf("probe: %s runs no CPython interpreter sonde knows: neither it nor a "
			       "library it loads defines _PyRuntime",
			       binary);
		return 1;
	}
	char a[16], b[16], c[16], d[16], e[16], f[16];
	printf("Python %u.%u", l.major, l.minor);
	if (l.micro >= 0)
		printf(".%d", l.micro);
	printf(" in %s (_PyRuntime at 0x%llx)\n", path, (unsigned long long)l.runtime_vaddr);
	printf("layout from: %s", pyruntime_source_name(l.source));
	if (l.source == PY_FROM_TABLE)
		printf(" (%s)", l.why_table);
	printf("\n");
	printf("runtime: interpreters.head %s\n", field_text(l.runtime_interpreters_head, a, 16));
	printf("interpreter: first thread %s\n", field_text(l.interp_threads_head, a, 16));
	printf("thread: next %s, thread_id %s, native_thread_id %s, frame %s, cframe's frame %s\n",
	       field_text(l.tstate_next, a, 16), field_text(l.tstate_thread_id, b, 16),
	       field_text(l.tstate_native_thread_id, c, 16), field_text(l.tstate_frame, d, 16),
	       field_text(l.cframe_current_frame, e, 16));
	printf("frame: previous %s, code %s, instruction %s (%s), is_entry %s, owner %s\n",
	       field_text(l.frame_previous, a, 16), field_text(l.frame_code, b, 16),
	       field_text(l.frame_instr, c, 16),
	       l.instr_kind == PY_INSTR_INDEX ? "index" : "pointer",
	       field_text(l.frame_is_entry, d, 16), field_text(l.frame_owner, e, 16));
	printf("code: filename %s, name %s, qualname %s, firstlineno %s, linetable %s, "
	       "bytecode %s\n",
	       field_text(l.code_filename, a, 16), field_text(l.code_name, b, 16),
	       field_text(l.code_qualname, c, 16), field_text(l.code_firstlineno, d, 16),
	       field_text(l.code_linetable, e, 16), field_text(l.code_code, f, 16));
	printf("strings: ASCII data %s, bytes data %s, size %s\n", field_text(l.ascii_data, a, 16),
	       field_text(l.bytes_data, b, 16), field_text(l.var_size, c, 16));
	char g[16], h[16], k[16];
	printf("call: tstate_current %s, localsplus %s, localsplusnames %s\n",
	       field_text(l.runtime_tstate_current, a, 16), field_text(l.frame_localsplus, b, 16),
	       field_text(l.code_localsplusnames, c, 16));
	printf("objects: tuple items %s, tp_flags %s, tp_name %s, digits %s, utf8 %s, "
	       "compact data %s\n",
	       field_text(l.tuple_items, d, 16), field_text(l.type_flags, e, 16),
	       field_text(l.type_name, f, 16), field_text(l.long_digits, g, 16),
	       field_text(l.compact_utf8, h, 16), field_text(l.compact_data, k, 16));
	struct usdt_probe *notes = NULL;
	char nerr[256];
	int nnotes = l.minor == 11 ? usdt_read(path, &notes, nerr, sizeof(nerr)) : 0;
	if (l.evaluator_vaddr)
		printf("py: probes: on py_trampoline_evaluator (0x%llx), in processes run with -X perf\n",
		       (unsigned long long)l.evaluator_vaddr);
	else if (nnotes > 0)
		printf("py: probes: through function__entry,function__return (the GIL holder's "
		       "current frame), with the line probe's semaphore raised\n");
	else
		printf("py: probes: none (%s)\n",
		       l.minor == 11 ? "no SDT notes"
		       : l.minor < 12 ? "neither -X perf trampolines nor USDT probes"
				      : "no py_trampoline_evaluator symbol");
	if (nnotes > 0)
		usdt_free(notes, nnotes);
	char why[160];
	if (l.source != PY_FROM_TABLE) {
		bool same = pyruntime_matches_table(&l, why, sizeof(why));
		printf("sonde's table for %u.%u: %s%s\n", l.major, l.minor,
		       same ? "the same" : "differs: ", same ? "" : why);
	}
	free(path);
	int rc = pid > 0 ? show_threads(&pp) : 0;
	pyprocess_free(&pp);
	return rc;
}

static int show_usdt(const char *binary)
{
	char err[512];
	char *path = probes_which(binary);
	struct usdt_probe *p;
	int n = usdt_read(path ? path : binary, &p, err, sizeof(err));
	if (n < 0) {
		errorf("probe: %s", err);
		free(path);
		return 1;
	}
	if (n == 0)
		printf("%s has no USDT probes (no .note.stapsdt)\n", path ? path : binary);
	for (int i = 0; i < n; i++) {
		printf("usdt:%s:%s:%s", path ? path : binary, p[i].provider, p[i].name);
		if (p[i].args_text[0])
			printf("  args: %s", p[i].args_text);
		if (p[i].nargs < 0)
			printf(" (an operand sonde cannot read)");
		if (p[i].semaphore_vaddr)
			printf("  semaphore: 0x%llx", (unsigned long long)p[i].semaphore_vaddr);
		printf("\n");
	}
	usdt_free(p, n);
	free(path);
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	const char *binary = NULL, *func = NULL, *vars = NULL;
	bool python = false, usdt = false;
	pid_t pid = 0;
	enum { OPT_LINES = 1000, OPT_VARS, OPT_PYTHON, OPT_USDT };
	static const struct option longopts[] = {{"exe", required_argument, NULL, 'e'},
						 {"pid", required_argument, NULL, 'p'},
						 {"lines", required_argument, NULL, OPT_LINES},
						 {"vars", required_argument, NULL, OPT_VARS},
						 {"python", no_argument, NULL, OPT_PYTHON},
						 {"usdt", no_argument, NULL, OPT_USDT},
						 {"help", no_argument, NULL, 'h'},
						 {0}};
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "e:p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'e':
			binary = optarg;
			break;
		case 'p': {
			uint64_t v;
			if (optval_count("--pid", optarg, 1, INT32_MAX, &v))
				return 2;
			pid = (pid_t)v;
			break;
		}
		case OPT_LINES:
			func = optarg;
			break;
		case OPT_VARS:
			vars = optarg;
			break;
		case OPT_PYTHON:
			python = true;
			break;
		case OPT_USDT:
			usdt = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if ((!binary == !pid) || (pid && !python) ||
	    (func != NULL) + (vars != NULL) + python + usdt != 1 || optind != argc) {
		errorf("probe: give -e BINARY and one of --lines FUNC, --vars SPEC, --python or "
		       "--usdt, or -p PID --python (sonde probe --help)");
		return 2;
	}
	if (usdt)
		return show_usdt(binary);
	if (python)
		return show_python(binary, pid);
	return func ? list_lines(binary, func) : list_vars(binary, vars);
}
