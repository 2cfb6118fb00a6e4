/* sonde symbolize — addresses to function and source line.
 *
 *   sonde symbolize -e BINARY [ADDR...]   output identical to addr2line -f -i -C -e
 *   sonde symbolize -p PID ADDR...        runtime addresses of a live process
 *
 * With no addresses on the command line they are read from stdin, one per
 * line. The -e form exists so the symbolizer can be checked against (and
 * timed against) binutils' addr2line on the same input. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "demangle.h"
#include "errbuf.h"
#include "printable.h"
#include "symbols.h"
#include "util.h"

/* addr2line prints whole inline chains; C++ can nest deeper than the
 * SYM_MAX_INLINE a profiler keeps. */
#define CHAIN_MAX 128

struct symbolize_opts {
	const char *binary; /* -e */
	pid_t pid;          /* -p, 0 when not given */
	bool show_address;  /* -a: each answer starts with the address */
	bool mangled;       /* --mangled: C++ and Rust names as linked */
	char **addrs;
	int naddrs;
};

static void print_usage(FILE *f)
{
	fputs("usage: sonde symbolize [-a] [--mangled] -e BINARY [ADDR...]\n"
	      "       sonde symbolize [-a] [--mangled] -p PID [ADDR...]\n"
	      "\n"
	      "Prints the function and source line of each address (hex, 0x optional),\n"
	      "innermost inlined function first. Without ADDRs, reads one per line\n"
	      "from stdin.\n"
	      "\n"
	      "  -e BINARY  addresses are ELF virtual addresses in BINARY; the output\n"
	      "             matches `addr2line -f -i -C -e BINARY`, except past a symbol's\n"
	      "             end: addr2line names the symbol, sonde the function that\n"
	      "             holds the address (by DWARF, else \"[BINARY+0xSTART]\" with\n"
	      "             START the function's start from .eh_frame)\n"
	      "  -p PID     addresses are runtime addresses in process PID; prints\n"
	      "             \"function file:line\" per frame\n"
	      "  -a         print each address (as 0x%016x) before its frames\n"
	      "  C++ and Rust names are demangled with their parameters, as by\n"
	      "  `addr2line -C` (and `-p` prints them so too);\n"
	      "  --mangled  prints the linkage names instead, as addr2line without -C\n"
	      "  -h, --help show this help\n",
	      f);
}

/* Returns 0, 1 when help was shown, or -1 after reporting the error. */
static int parse_args(int argc, char **argv, struct symbolize_opts *o)
{
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			print_usage(stdout);
			return 1;
		} else if (strcmp(a, "-a") == 0 || strcmp(a, "--addresses") == 0) {
			o->show_address = true;
		} else if (strcmp(a, "--mangled") == 0) {
			o->mangled = true;
		} else if (strcmp(a, "--") == 0) {
			i++;
			break;
		} else if (strcmp(a, "-e") == 0 || strcmp(a, "-p") == 0) {
			if (i + 1 >= argc) {
				errorf("symbolize: %s needs an argument (see sonde symbolize --help)", a);
				return -1;
			}
			const char *v = argv[++i];
			if (a[1] == 'e') {
				o->binary = v;
			} else {
				char *end;
				long pid = strtol(v, &end, 10);
				if (*end || pid <= 0) {
					errorf("symbolize: bad pid '%s': expected a positive number", v);
					return -1;
				}
				o->pid = (pid_t)pid;
			}
		} else if (a[0] == '-') {
			errorf("symbolize: unknown option '%s' (see sonde symbolize --help)", a);
			return -1;
		} else {
			break;
		}
	}
	o->addrs = argv + i;
	o->naddrs = argc - i;
	if (!o->binary == !o->pid) {
		errorf("symbolize: give exactly one of -e BINARY or -p PID (see sonde symbolize --help)");
		return -1;
	}
	return 0;
}

/* Hex with or without 0x; like addr2line, text that is not hex reads as 0. */
static uint64_t parse_address(const char *s)
{
	return strtoull(s, NULL, 16);
}

/* addr2line's two lines per frame. Its discriminator belongs to the
 * innermost line, yet addr2line repeats it on every frame; so do we.
 * Where addr2line would name an address past a symbol's end after that
 * symbol, the function holding it is unnamed: "[binary+0xSTART]". */
/* A frame's name as asked: a C++ or Rust name with its parameters
 * (`addr2line -C`), or as linked (--mangled). malloc'd or NULL: then
 * f->name. */
static char *shown_name(const struct sym_frame *f, bool mangled)
{
	if (!f->system_name)
		return NULL;
	return mangled ? xstrdup(f->system_name) : demangle_full(f->system_name);
}

static void print_addr2line_frames(const struct sym_frame *f, int n, bool mangled)
{
	struct printable keep = {0}; /* names and paths come from the binary */
	for (int i = 0; i < n; i++) {
		bool unknown = f[i].kind == FRAME_UNKNOWN;
		char *name = shown_name(&f[i], mangled);
		fputs(unknown && !f[i].unnamed_function ? "??"
							: printable(&keep, name ? name : f[i].name),
		      stdout);
		free(name);
		putchar('\n');
		if (unknown && f[i].file[0] == '\0') {
			fputs("??:0\n", stdout);
			continue;
		}
		fputs(f[i].file[0] ? printable(&keep, f[i].file) : "??", stdout);
		if (f[i].line == 0)
			fputs(":?\n", stdout);
		else if (f[0].discriminator)
			printf(":%" PRIu32 " (discriminator %" PRIu32 ")\n", f[i].line,
			       f[0].discriminator);
		else
			printf(":%" PRIu32 "\n", f[i].line);
	}
	printable_free(&keep);
}

static void print_process_frames(const struct sym_frame *f, int n, bool mangled)
{
	struct printable keep = {0};
	for (int i = 0; i < n; i++) {
		char *name = shown_name(&f[i], mangled);
		printf("%s %s:%" PRIu32 "\n", printable(&keep, name ? name : f[i].name),
		       f[i].file[0] ? printable(&keep, f[i].file) : "??", f[i].line);
		free(name);
	}
	printable_free(&keep);
}

/* The binary was checked to be ELF up front, so every lookup answers. */
static void symbolize_one(struct symbolizer *s, const struct symbolize_opts *o, const char *text)
{
	struct sym_frame frames[CHAIN_MAX];
	uint64_t addr = parse_address(text);
	if (o->show_address)
		printf("0x%016" PRIx64 "\n", addr);
	if (o->pid) {
		print_process_frames(frames, symbols_user(s, o->pid, addr, false, frames, CHAIN_MAX),
				     o->mangled);
		return;
	}
	int n = symbols_file(s, o->binary, addr, false, frames, CHAIN_MAX);
	print_addr2line_frames(frames, n > 0 ? n : 0, o->mangled);
}

/* A pipe or terminal on stdin may be a program asking one address at a
 * time (addr2line is used that way): answer each line at once. */
static bool stdin_is_interactive(void)
{
	struct stat st;
	return fstat(STDIN_FILENO, &st) != 0 || !S_ISREG(st.st_mode);
}

static void symbolize_stdin(struct symbolizer *s, const struct symbolize_opts *o)
{
	bool flush_each = stdin_is_interactive();
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, stdin) > 0) {
		symbolize_one(s, o, line);
		if (flush_each)
			fflush(stdout);
	}
	free(line);
}

static int check_input(const struct symbolize_opts *o)
{
	if (o->binary && access(o->binary, R_OK) != 0) {
		errorf("symbolize: cannot read %s: %s", o->binary, strerror(errno));
		return -1;
	}
	if (o->pid && kill(o->pid, 0) != 0 && errno == ESRCH) {
		errorf("symbolize: no process %d: it has exited or never existed", (int)o->pid);
		return -1;
	}
	return 0;
}

int cmd_symbolize(int argc, char **argv)
{
	struct symbolize_opts o = { 0 };
	int rc = parse_args(argc, argv, &o);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (check_input(&o) != 0)
		return 1;
	struct symbolizer *s = symbols_new();
	struct sym_frame probe;
	if (o.binary && symbols_file(s, o.binary, 0, false, &probe, 1) < 0) {
		errorf("symbolize: %s is not an ELF file (or is unreadable as one)", o.binary);
		symbols_free(s);
		return 1;
	}
	if (o.naddrs == 0)
		symbolize_stdin(s, &o);
	for (int i = 0; i < o.naddrs; i++)
		symbolize_one(s, &o, o.addrs[i]);
	symbols_free(s);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		errorf("symbolize: writing the output failed: %s", strerror(errno));
		return 1;
	}
	return 0;
}
