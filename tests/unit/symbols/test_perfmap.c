/* Unit tests for perf maps (/tmp/perf-PID.map): the line format, later lines
 * overriding earlier ones (checked against a plain "newest line that covers
 * the address" on random maps), incremental reads of a growing file that
 * outlive its removal, and the symbolizer naming JIT code of a live process
 * and of one that has exited and removed its map. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perfmap.h"
#include "symbols.h"

static struct perfmap *map_of(const char *text)
{
	struct perfmap *m = perfmap_new(0);
	size_t n = strlen(text);
	cr_assert_eq(perfmap_add_text(m, text, n, false), n);
	return m;
}

static const char *name_at(const struct perfmap *m, uint64_t addr)
{
	const struct perfmap_sym *f = perfmap_find(m, addr);
	return f ? f->name : "(none)";
}

Test(perfmap, lines_name_ranges)
{
	struct perfmap *m = map_of("1000 10 foo\n"
				   "0x2000 0X20 LazyCompile:*bar /app/x.js:3  \n"
				   "  3000\t8\tStub:CEntry\r\n");
	cr_expect_str_eq(name_at(m, 0x1000), "foo");
	cr_expect_str_eq(name_at(m, 0x100f), "foo");
	cr_expect_str_eq(name_at(m, 0x1010), "(none)");
	cr_expect_str_eq(name_at(m, 0xfff), "(none)");
	/* the name runs to the end of the line, blanks included */
	cr_expect_str_eq(name_at(m, 0x201f), "LazyCompile:*bar /app/x.js:3  ");
	cr_expect_str_eq(name_at(m, 0x3007), "Stub:CEntry");
	struct perfmap_stats st;
	perfmap_get_stats(m, &st);
	cr_expect_eq(st.lines, 3);
	cr_expect_eq(st.bad_lines, 0);
	perfmap_free(m);
}

Test(perfmap, bad_lines_are_counted_and_skipped)
{
	struct perfmap *m = map_of("zz 10 x\n"                       /* not hex */
				   "1000\n"                          /* no size */
				   "1000 10\n"                       /* no name */
				   "1000 10   \n"                     /* blank name */
				   "1000g 10 x\n"                    /* junk in the start */
				   "ffffffffffffff00 200 wraps\n"    /* range wraps */
				   "12345678901234567 1 too_long\n"  /* 17 digits */
				   "\n"                              /* empty: nothing */
				   "4000 0 empty_range\n"            /* good, covers nothing */
				   "5000 10 good\n");
	struct perfmap_stats st;
	perfmap_get_stats(m, &st);
	cr_expect_eq(st.bad_lines, 7);
	cr_expect_eq(st.lines, 2);
	size_t n;
	const struct perfmap_sym *syms = perfmap_syms(m, &n);
	cr_assert_eq(n, 1);
	cr_expect_eq(syms[0].start, 0x5000);
	cr_expect_str_eq(syms[0].name, "good");
	perfmap_free(m);
}

Test(perfmap, a_later_line_overrides_its_range)
{
	/* one batch: c over the start of a, b inside a */
	struct perfmap *m = map_of("1000 100 a\n1040 40 b\n1000 20 c\n");
	size_t n;
	const struct perfmap_sym *s = perfmap_syms(m, &n);
	cr_assert_eq(n, 4);
	uint64_t want[4][2] = {{0x1000, 0x1020}, {0x1020, 0x1040}, {0x1040, 0x1080}, {0x1080, 0x1100}};
	const char *names[4] = {"c", "a", "b", "a"};
	for (size_t i = 0; i < 4; i++) {
		cr_expect_eq(s[i].start, want[i][0], "piece %zu", i);
		cr_expect_eq(s[i].end, want[i][1], "piece %zu", i);
		cr_expect_str_eq(s[i].name, names[i]);
	}
	/* a later read over all of them */
	cr_assert_eq(perfmap_add_text(m, "1010 e0 d\n", 10, false), 10);
	s = perfmap_syms(m, &n);
	cr_assert_eq(n, 3);
	cr_expect_str_eq(name_at(m, 0x100f), "c");
	cr_expect_str_eq(name_at(m, 0x1010), "d");
	cr_expect_str_eq(name_at(m, 0x10ef), "d");
	cr_expect_str_eq(name_at(m, 0x10f0), "a");
	perfmap_free(m);
}

Test(perfmap, an_unfinished_line_waits_for_its_newline)
{
	struct perfmap *m = perfmap_new(0);
	const char *text = "1000 10 first\n2000 10 sec";
	cr_expect_eq(perfmap_add_text(m, text, strlen(text), false), 14);
	cr_expect_str_eq(name_at(m, 0x2000), "(none)");
	cr_expect_eq(perfmap_add_text(m, "2000 10 second\n", 15, false), 15);
	cr_expect_str_eq(name_at(m, 0x2000), "second");
	/* once the writer is gone, a last line without newline counts */
	cr_expect_eq(perfmap_add_text(m, "3000 10 last", 12, true), 12);
	cr_expect_str_eq(name_at(m, 0x3000), "last");
	perfmap_free(m);
}

/* Random maps, read in random batches, against the definition: the newest
 * line that covers an address names it. */
Test(perfmap, random_maps_agree_with_newest_line_wins)
{
	enum { SPACE = 512, LINES = 400, ROUNDS = 40 };
	srand(12345);
	for (int round = 0; round < ROUNDS; round++) {
		struct perfmap *m = perfmap_new(0);
		int owner[SPACE];
		char names[LINES][16];
		for (int a = 0; a < SPACE; a++)
			owner[a] = -1;
		for (int i = 0; i < LINES;) {
			int batch = 1 + rand() % (round % 2 ? 3 : 60);
			char *text = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&text, &len);
			for (int k = 0; k < batch && i < LINES; k++, i++) {
				int start = rand() % SPACE, size = 1 + rand() % (round % 3 ? 8 : 64);
				if (start + size > SPACE)
					size = SPACE - start;
				snprintf(names[i], sizeof(names[i]), "f%d", i);
				fprintf(f, "%x %x %s\n", start, size, names[i]);
				for (int a = start; a < start + size; a++)
					owner[a] = i;
			}
			fclose(f);
			cr_assert_eq(perfmap_add_text(m, text, len, false), len);
			free(text);
		}
		size_t n;
		const struct perfmap_sym *s = perfmap_syms(m, &n);
		for (size_t k = 1; k < n; k++)
			cr_assert(s[k - 1].end <= s[k].start, "ranges overlap or are unsorted");
		for (int a = 0; a < SPACE; a++) {
			const char *want = owner[a] < 0 ? "(none)" : names[owner[a]];
			cr_assert_str_eq(name_at(m, (uint64_t)a), want, "round %d, address %#x", round,
					 a);
		}
		perfmap_free(m);
	}
}

/* ---- the file of a process ---------------------------------------------------- */

static void map_path(pid_t pid, char *buf, size_t size)
{
	snprintf(buf, size, "/tmp/perf-%d.map", (int)pid);
}

Test(perfmap, the_file_is_read_incrementally_and_outlives_its_removal)
{
	char path[64];
	map_path(getpid(), path, sizeof(path));
	FILE *w = fopen(path, "w");
	cr_assert_not_null(w);
	struct perfmap *m = perfmap_new(getpid());
	fputs("1000 10 one\n2000 10 tw", w);
	fflush(w);
	int got = perfmap_refresh(m, false);
	if (got != 1)
		unlink(path);
	cr_assert_eq(got, 1);
	cr_expect(perfmap_is_open(m));
	cr_expect_str_eq(name_at(m, 0x1000), "one");
	cr_expect_eq(perfmap_refresh(m, false), 0, "nothing new: nothing read");
	fputs("o\n", w);
	fflush(w);
	unlink(path); /* the process's tmp is gone: the open file still reads */
	fputs("3000 10 three\n", w);
	fflush(w);
	cr_expect_eq(perfmap_refresh(m, false), 2);
	cr_expect_str_eq(name_at(m, 0x2000), "two");
	cr_expect_str_eq(name_at(m, 0x3000), "three");
	/* rewritten from the start (shorter): the map starts over */
	cr_assert_eq(ftruncate(fileno(w), 0), 0);
	rewind(w);
	fputs("4000 10 four\n", w);
	fflush(w);
	cr_expect_eq(perfmap_refresh(m, false), 1);
	cr_expect_str_eq(name_at(m, 0x1000), "(none)");
	cr_expect_str_eq(name_at(m, 0x4000), "four");
	struct perfmap_stats st;
	perfmap_get_stats(m, &st);
	cr_expect_eq(st.restarts, 1);
	fclose(w);
	perfmap_free(m);
}

Test(perfmap, a_map_of_many_reads_is_read_at_once)
{
	char path[64];
	map_path(getpid(), path, sizeof(path));
	FILE *w = fopen(path, "w");
	cr_assert_not_null(w);
	enum { LINES = 200000 }; /* about 7 MiB: several reads of the file */
	for (int i = 0; i < LINES; i++)
		fprintf(w, "%x 10 LazyCompile:*function_number_%d /app/file.js:%d\n", 0x1000 + i * 0x10,
			i, i);
	fclose(w);
	struct perfmap *m = perfmap_new(getpid());
	int got = perfmap_refresh(m, false);
	unlink(path); /* read or not, it goes */
	cr_assert_eq(got, LINES);
	size_t n;
	perfmap_syms(m, &n);
	cr_expect_eq(n, LINES);
	cr_expect_str_eq(name_at(m, 0x1000 + 123456 * 0x10 + 5),
			 "LazyCompile:*function_number_123456 /app/file.js:123456");
	perfmap_free(m);
}

Test(perfmap, a_line_longer_than_a_read_is_skipped_whole)
{
	char path[64];
	map_path(getpid(), path, sizeof(path));
	FILE *w = fopen(path, "w");
	cr_assert_not_null(w);
	fputs("1000 10 before\n2000 10 ", w);
	for (int i = 0; i < 3 << 20; i++) /* 3 MiB of name: no JIT's */
		fputc('x', w);
	fputs("\n3000 10 after\n", w);
	fclose(w);
	struct perfmap *m = perfmap_new(getpid());
	int got = perfmap_refresh(m, false);
	unlink(path); /* read or not, it goes */
	cr_assert_eq(got, 3);
	cr_expect_str_eq(name_at(m, 0x1000), "before");
	cr_expect_str_eq(name_at(m, 0x2000), "(none)");
	cr_expect_str_eq(name_at(m, 0x3000), "after");
	struct perfmap_stats st;
	perfmap_get_stats(m, &st);
	cr_expect_eq(st.lines, 2);
	cr_expect_eq(st.bad_lines, 1);
	perfmap_free(m);
}

Test(perfmap, no_file_no_map)
{
	pid_t child = fork();
	cr_assert_geq(child, 0);
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	char path[64];
	map_path(child, path, sizeof(path));
	unlink(path);
	struct perfmap *m = perfmap_new(child);
	cr_expect_eq(perfmap_refresh(m, false), -1);
	cr_expect_not(perfmap_is_open(m));
	cr_expect_null(perfmap_find(m, 0x1000));
	perfmap_free(m);
}

/* ---- the symbolizer ---------------------------------------------------------- */

/* A child that maps anonymous executable memory, names two functions in it
 * in its perf map (and leaves a third range unnamed), prints the mapping's
 * address, and waits for a line on stdin; then maps a second region, names
 * a function there, prints its address, removes its map and exits. */
struct jitter {
	pid_t pid;
	FILE *to, *from;
	uint64_t first, second;
};

static void jitter_start(struct jitter *j)
{
	int in[2], out[2];
	cr_assert_eq(pipe(in), 0);
	cr_assert_eq(pipe(out), 0);
	j->pid = fork();
	cr_assert_geq(j->pid, 0);
	if (j->pid == 0) {
		close(in[1]);
		close(out[0]);
		char path[64], line[16];
		map_path(getpid(), path, sizeof(path));
		FILE *map = fopen(path, "w");
		FILE *to_parent = fdopen(out[1], "w"), *from_parent = fdopen(in[0], "r");
		size_t page = (size_t)sysconf(_SC_PAGESIZE);
		int prot = PROT_READ | PROT_EXEC, flags = MAP_PRIVATE | MAP_ANONYMOUS;
		char *a = mmap(NULL, page, prot, flags, -1, 0);
		fprintf(map, "%lx 40 jit_first\n%lx 40 JS:*second one\n", (unsigned long)a,
			(unsigned long)(a + 0x40));
		fflush(map);
		fprintf(to_parent, "%lx\n", (unsigned long)a);
		fflush(to_parent);
		if (!fgets(line, sizeof(line), from_parent))
			_exit(1);
		char *b = mmap(NULL, page, prot, flags, -1, 0);
		fprintf(map, "%lx 80 jit_late\n", (unsigned long)b);
		fclose(map);
		fprintf(to_parent, "%lx\n", (unsigned long)b);
		fflush(to_parent);
		unlink(path);
		_exit(0);
	}
	close(in[0]);
	close(out[1]);
	j->to = fdopen(in[1], "w");
	j->from = fdopen(out[0], "r");
	unsigned long a;
	cr_assert_eq(fscanf(j->from, "%lx", &a), 1);
	j->first = a;
}

static void jitter_finish(struct jitter *j)
{
	fputs("go\n", j->to);
	fflush(j->to);
	unsigned long b;
	cr_assert_eq(fscanf(j->from, "%lx", &b), 1);
	j->second = b;
	cr_assert_eq(waitpid(j->pid, NULL, 0), j->pid);
	fclose(j->to);
	fclose(j->from);
}

static struct sym_frame user_frame(struct symbolizer *s, pid_t pid, uint64_t addr, bool ret)
{
	struct sym_frame f[SYM_MAX_INLINE];
	cr_assert_eq(symbols_user(s, pid, addr, ret, f, SYM_MAX_INLINE), 1);
	return f[0];
}

Test(perfmap, symbolizer_names_jit_frames_before_and_after_the_process_exits)
{
	struct jitter j;
	jitter_start(&j);
	struct symbolizer *s = symbols_new();
	char module[64];
	map_path(j.pid, module, sizeof(module));

	struct sym_frame f = user_frame(s, j.pid, j.first + 0x10, false);
	cr_expect_str_eq(f.name, "jit_first");
	cr_expect_str_eq(f.module, module);
	cr_expect_eq(f.kind, FRAME_JIT);
	cr_expect_str_eq(user_frame(s, j.pid, j.first + 0x40, false).name, "JS:*second one");
	/* a return address right past a function is a call from inside it */
	cr_expect_str_eq(user_frame(s, j.pid, j.first + 0x40, true).name, "jit_first");
	/* anonymous executable memory the map does not name stays unknown */
	f = user_frame(s, j.pid, j.first + 0x200, false);
	cr_expect_str_eq(f.name, "[unknown]");
	cr_expect_eq(f.kind, FRAME_UNKNOWN);

	/* The process maps and names more code, removes its map and exits: the
	 * map read while it ran still reads, and its mapping is known only
	 * from there. */
	jitter_finish(&j);
	f = user_frame(s, j.pid, j.second + 0x7f, false);
	cr_expect_str_eq(f.name, "jit_late");
	cr_expect_eq(f.kind, FRAME_JIT);
	cr_expect_null(symbols_user_not_code(s, j.pid, j.second + 0x20),
		       "JIT code mapped after the maps were read is code");
	cr_expect_str_eq(user_frame(s, j.pid, j.first + 0x10, false).name, "jit_first");
	struct symbols_stats st;
	symbols_get_stats(s, &st);
	cr_expect_eq(st.jit_frames, 5);
	cr_expect_eq(st.jit_map_lines, 3);
	cr_expect_eq(st.jit_map_bad_lines, 0);
	symbols_free(s);
}
