/* Unit tests for probe specs (symbols/probes): splitting BINARY:FUNC and
 * [BINARY:]FILE:LINE, finding a program as execvp would, and resolving
 * specs in the test targets (a name, a glob, a library by path) to the file
 * offsets nm and the program headers give, with the refusals a spec can
 * meet (no such function, with the nearest names; the entry point). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "insn.h"
#include "capexpr.h"
#include "probebranch.h"
#include "probes.h"

#define COUNTED TARGET_DIR "/counted"
#define LIBCOUNTED TARGET_DIR "/libcounted.so"

Test(probes, split_finds_the_binarys_colon_not_a_cxx_scope)
{
	cr_assert_eq(probes_split("libc:malloc"), 4);
	cr_assert_eq(probes_split("malloc"), -1);
	cr_assert_eq(probes_split("ns::f"), -1);
	cr_assert_eq(probes_split("libfoo.so:ns::f"), 9);
	cr_assert_eq(probes_split("/usr/lib/x.so:f"), 13);
	cr_assert_eq(probes_split("handle_*"), -1);
}

Test(probes, split_line_takes_the_last_all_digit_part)
{
	char *bin = NULL, *file = NULL;
	unsigned line = 0;
	cr_assert_eq(probes_split_line("server.c:1312", &bin, &file, &line), 1);
	cr_assert_null(bin);
	cr_assert_str_eq(file, "server.c");
	cr_assert_eq(line, 1312);
	free(file);
	cr_assert_eq(probes_split_line("redis-server:src/t_list.c:42", &bin, &file, &line), 1);
	cr_assert_str_eq(bin, "redis-server");
	cr_assert_str_eq(file, "src/t_list.c");
	cr_assert_eq(line, 42);
	free(bin);
	free(file);
	bin = file = NULL;
	cr_assert_eq(probes_split_line("libc:malloc", &bin, &file, &line), 0);
	cr_assert_eq(probes_split_line("server.c:12x", &bin, &file, &line), 0);
	cr_assert_eq(probes_split_line("malloc", &bin, &file, &line), 0);
	cr_assert_null(bin);
	cr_assert_null(file);
}

Test(probes, which_searches_path_as_execvp)
{
	char *sh = probes_which("sh");
	cr_assert_not_null(sh);
	cr_assert_eq(sh[0], '/', "'%s'", sh);
	cr_assert_eq(access(sh, X_OK), 0, "'%s'", sh);
	free(sh);
	char *given = probes_which(COUNTED);
	cr_assert_str_eq(given, COUNTED);
	free(given);
	cr_assert_null(probes_which("sonde-no-such-program-here"));
}

/* The file offset nm's symbol address has (the targets are linked with
 * their first PT_LOAD at offset 0 and vaddr 0, text at the same offset). */
static uint64_t nm_address(const char *binary, const char *sym)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' | awk '$3 == \"%s\" {print $1}'", binary,
		 sym);
	FILE *f = popen(cmd, "r");
	cr_assert_not_null(f);
	char buf[64] = "";
	char *got = fgets(buf, sizeof(buf), f);
	pclose(f);
	cr_assert_not_null(got, "nm has no %s in %s", sym, binary);
	char *end;
	uint64_t v = strtoull(buf, &end, 16);
	cr_assert(end != buf && (*end == '\n' || *end == 0), "nm said '%s'", buf);
	return v;
}

static const struct probe_scope no_process = {0};

Test(probes, a_function_by_path_resolves_to_its_entry)
{
	char note[256], err[512];
	struct probes_found found = {.note = note, .notelen = sizeof(note)};
	int n = probes_resolve(COUNTED ":counted_loop", &no_process, &found, err, sizeof(err));
	struct probe_target *t = found.t;
	cr_assert_eq(n, 1, "%s", err);
	cr_assert_str_eq(t[0].function, "counted_loop");
	cr_assert_str_eq(t[0].binary, COUNTED);
	cr_assert_eq(t[0].offset - t[0].entry_skip, nm_address(COUNTED, "counted_loop"));
	cr_assert_neq(t[0].ino, 0);
	cr_assert_eq(t[0].line, 0);
	/* The entry's instruction was decoded once, when it was checked: as
	 * reading it from the file again says. */
	cr_assert(t[0].trap_known);
	cr_assert_eq(t[0].trap, insn_trap_at(t[0].binary, t[0].offset));
	probes_free(t, n);
}

Test(probes, a_glob_gives_every_match_in_a_library)
{
	char note[256], err[512];
	struct probes_found found = {.note = note, .notelen = sizeof(note)};
	int n = probes_resolve(LIBCOUNTED ":counted_*", &no_process, &found, err, sizeof(err));
	struct probe_target *t = found.t;
	/* counted_add is a static function: .symtab's, not .dynsym's. */
	cr_assert_eq(n, 3, "%d: %s", n, n < 0 ? err : t[0].function);
	bool add = false, ready = false, work = false;
	for (int i = 0; i < n; i++) {
		uint64_t want = nm_address(LIBCOUNTED, t[i].function);
		cr_assert_eq(t[i].offset - t[i].entry_skip, want, "%s", t[i].function);
		cr_assert(t[i].trap_known, "%s", t[i].function);
		cr_assert_eq(t[i].trap, insn_trap_at(t[i].binary, t[i].offset), "%s", t[i].function);
		add |= strcmp(t[i].function, "counted_add") == 0;
		ready |= strcmp(t[i].function, "counted_ready") == 0;
		work |= strcmp(t[i].function, "counted_work") == 0;
	}
	cr_assert(add && ready && work);
	probes_free(t, n);
}

Test(probes, refusals_say_why_in_one_line)
{
	struct probes_found found = {0};
	char err[512];
	cr_assert_eq(probes_resolve(COUNTED ":counted_lop", &no_process, &found, err, sizeof(err)),
		     -1);
	cr_assert(strstr(err, "counted_lop") && strstr(err, "counted_loop"),
		  "names the nearest function: %s", err);
	cr_assert_null(strchr(err, '\n'));
	cr_assert_eq(probes_resolve(COUNTED ":_start", &no_process, &found, err, sizeof(err)), -1);
	cr_assert(strstr(err, "_start") != NULL, "%s", err);
	cr_assert_eq(probes_resolve(TARGET_DIR "/no-such-binary:f", &no_process, &found, err,
				    sizeof(err)),
		     -1);
	cr_assert(strstr(err, "no-such-binary") != NULL, "%s", err);
}

/* A branch spec's location and #K, and the capture splitter keeping
 * "branch" with its location. */
Test(probes, branch_spec_split)
{
	char *loc = NULL, err[256];
	unsigned k = 9;
	cr_assert(probebranch_is("branch server.c:1312"));
	cr_assert(!probebranch_is("branchy"));
	cr_assert(!probebranch_is("branch"));
	cr_assert_eq(probebranch_split("branch  server.c:1312 ", &loc, &k, err, sizeof(err)), 0);
	cr_expect_str_eq(loc, "server.c:1312");
	cr_expect_eq(k, 0);
	free(loc);
	cr_assert_eq(probebranch_split("branch redis-server:t_list.c:42#2", &loc, &k, err, sizeof(err)), 0);
	cr_expect_str_eq(loc, "redis-server:t_list.c:42");
	cr_expect_eq(k, 2);
	free(loc);
	cr_expect_eq(probebranch_split("branch x.c:1#0", &loc, &k, err, sizeof(err)), -1);
	cr_expect(strstr(err, "after # comes which of the line's jumps"), "%s", err);
	cr_expect_eq(probebranch_split("branch x.c:1#2x", &loc, &k, err, sizeof(err)), -1);
	cr_expect_eq(probebranch_split("branch #2", &loc, &k, err, sizeof(err)), -1);
	const char *tail;
	cr_expect_eq(capexpr_split_spec("branch x.c:12", &tail), strlen("branch x.c:12"));
	cr_expect_str_eq(tail, "");
	cr_expect_eq(capexpr_split_spec("branch x.c:12 len", &tail), strlen("branch x.c:12"));
	cr_expect_str_eq(tail, "len");
}
