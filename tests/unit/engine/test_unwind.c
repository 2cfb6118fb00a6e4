/* Unit tests for unwind: the in-kernel unwinder's tables as user space
 * keeps them, in real BPF maps (created here as the BPF object declares
 * them; root needed, skipped otherwise), for live processes:
 *  - a process's mappings are sorted, and each binary's rows in the
 *    kernel's array are exactly its table's;
 *  - two processes of one program share each table; a table leaves the
 *    rows when the last process using it is gone (its entry dropped, as
 *    the BPF exit handler does);
 *  - the budget: tables that do not fit are refused and counted, the rows
 *    used never exceed it, and a python process with 50 extension modules
 *    mapped (pyenv's 3.11, skipped when not installed) stays within it. */
#define _GNU_SOURCE
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cfi.h"
#include "procmaps.h"
#include "sonde_abi.h"
#include "unwind.h"

#define NOFP_GCC TARGET_DIR "/nofp-gcc"
#define PYTHON311 "/root/.pyenv/versions/3.11.7/bin/python3.11"

struct maps {
	int procs, mappings, rows, files, found;
	uint32_t capacity;
};

static struct maps maps_new(uint32_t capacity)
{
	if (geteuid() != 0)
		cr_skip_test("needs root to create BPF maps");
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	struct maps m = {
		.procs = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_procs", 4,
					sizeof(struct sonde_unwind_proc), SONDE_UNWIND_PROCS, NULL),
		.mappings = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_mappings", 4,
					   sizeof(struct sonde_unwind_mapping),
					   SONDE_UNWIND_MAP_SLOTS, &mm),
		.rows = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_rows", 4,
				       sizeof(struct sonde_unwind_row), capacity, &mm),
		.files = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_files",
					sizeof(struct sonde_unwind_file_key),
					sizeof(struct sonde_unwind_file), SONDE_UNWIND_FILES, NULL),
		.found = bpf_map_create(BPF_MAP_TYPE_HASH, "unwind_found", 4,
					sizeof(struct sonde_unwind_found_set), SONDE_UNWIND_PROCS, NULL),
		.capacity = capacity,
	};
	cr_assert(m.procs >= 0 && m.mappings >= 0 && m.rows >= 0 && m.files >= 0 && m.found >= 0,
		  "bpf_map_create failed");
	return m;
}

static const struct unwind_maps *fds_of(const struct maps *m)
{
	static struct unwind_maps fds;
	fds = (struct unwind_maps){ m->procs, m->mappings, m->rows, m->files, m->found };
	return &fds;
}

static void maps_close(struct maps *m)
{
	close(m->procs);
	close(m->mappings);
	close(m->rows);
	close(m->files);
	close(m->found);
}

static bool maps_has(pid_t pid, const char *needle)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* Starts argv with stdout to /dev/null; waits (up to 10 s) until its
 * maps name `ready` (a library it loads last). */
static pid_t start(char *const argv[], const char *ready)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed test leaves none behind */
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	cr_assert(pid > 0);
	for (int i = 0; i < 1000 && !maps_has(pid, ready); i++)
		usleep(10000);
	cr_assert(maps_has(pid, ready), "%s never mapped %s", argv[0], ready);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* What the exit handler (bpf/tasks.bpf.c) does for the last thread. */
static void exited(struct maps *m, struct unwind *u, pid_t pid)
{
	uint32_t key = (uint32_t)pid;
	bpf_map_delete_elem(m->procs, &key);
	unwind_on_exit(u, pid);
}

/* The process's mappings from the kernel's maps. */
static uint32_t kernel_mappings(struct maps *m, pid_t pid, struct sonde_unwind_mapping *out,
				uint32_t max)
{
	struct sonde_unwind_proc p;
	uint32_t key = (uint32_t)pid;
	cr_assert_eq(bpf_map_lookup_elem(m->procs, &key, &p), 0, "no entry for PID %d", (int)pid);
	cr_assert_leq(p.n, max);
	for (uint32_t i = 0; i < p.n; i++) {
		uint32_t k = p.first + i;
		cr_assert_eq(bpf_map_lookup_elem(m->mappings, &k, &out[i]), 0);
	}
	return p.n;
}

struct find {
	const char *name;
	uint64_t start, end, offset, dev, inode;
	char path[4096];
};

static int find_exec(const struct procmaps_entry *e, void *arg)
{
	struct find *f = arg;
	if (!e->exec || !strstr(e->path, f->name))
		return 0;
	f->start = e->start;
	f->end = e->end;
	f->offset = e->offset;
	f->dev = e->dev;
	f->inode = e->inode;
	snprintf(f->path, sizeof(f->path), "%s", e->path);
	return 1;
}

/* The kernel's rows for the binary named `name` in pid are its table's. */
static void check_rows(struct maps *m, pid_t pid, const char *name)
{
	struct find f = { .name = name };
	cr_assert_eq(procmaps_each(pid, find_exec, &f), 1, "%s is not mapped", name);
	static struct sonde_unwind_mapping ms[SONDE_UNWIND_MAPPINGS];
	uint32_t n = kernel_mappings(m, pid, ms, SONDE_UNWIND_MAPPINGS);
	const struct sonde_unwind_mapping *mp = NULL;
	for (uint32_t i = 0; i < n; i++) {
		if (i > 0)
			cr_assert_gt(ms[i].start, ms[i - 1].start, "mappings out of order");
		cr_assert_lt(ms[i].start, ms[i].end);
		if (ms[i].start == f.start)
			mp = &ms[i];
	}
	cr_assert(mp, "no mapping of %s at %#lx", name, (unsigned long)f.start);
	int fd = open(f.path, O_RDONLY);
	char err[256];
	struct cfi_table *t = cfi_table_from_fd(fd, f.path, err, sizeof(err));
	close(fd);
	cr_assert(t && t->nrows > 0, "%s has no table: %s", f.path, err);
	uint64_t vaddr;
	cr_assert(cfi_table_vaddr(t, f.offset, &vaddr));
	cr_assert_eq(mp->count, t->nrows, "%s: %u rows in the kernel, %u in its table", name,
		     mp->count, t->nrows);
	cr_assert_eq(mp->adj, f.start - vaddr + t->base);
	for (uint32_t i = 0; i < t->nrows; i++) {
		struct sonde_unwind_row r;
		uint32_t k = mp->first + i;
		cr_assert_eq(bpf_map_lookup_elem(m->rows, &k, &r), 0);
		cr_assert(r.pc == t->rows[i].pc && r.rule == t->rows[i].rule,
			  "%s row %u differs in the kernel", name, i);
	}
	cfi_table_free(t);
}

Test(unwind, rows_in_the_kernel_are_the_tables_and_shared_until_the_last_user)
{
	struct maps m = maps_new(1u << 20);
	char err[256];
	struct unwind *u = unwind_new(fds_of(&m), m.capacity, err, sizeof(err));
	cr_assert(u, "%s", err);
	char *const argv[] = { NOFP_GCC, "spin", NULL };
	pid_t a = start(argv, "libnofp-gcc.so"), b = start(argv, "libnofp-gcc.so");

	cr_assert_eq(unwind_load_pid(u, a, err, sizeof(err)), 0, "%s", err);
	check_rows(&m, a, "nofp-gcc");
	check_rows(&m, a, "libnofp-gcc.so");
	check_rows(&m, a, "libc.so");
	struct unwind_stats one, two, left, none;
	unwind_get_stats(u, &one);
	cr_assert_geq(one.tables, 4, "nofp-gcc, libnofp, libc, ld.so: %lu tables",
		      (unsigned long)one.tables);
	cr_assert_eq(one.processes, 1);

	/* A second process of the same program: no new table. */
	cr_assert_eq(unwind_load_pid(u, b, err, sizeof(err)), 0, "%s", err);
	unwind_get_stats(u, &two);
	cr_assert_eq(two.tables, one.tables);
	cr_assert_eq(two.rows, one.rows);
	cr_assert_eq(two.tables_loaded, one.tables_loaded);
	cr_assert_eq(two.processes, 2);
	check_rows(&m, b, "libc.so");

	/* Reloading a process changes nothing it holds. */
	cr_assert_eq(unwind_load_pid(u, b, err, sizeof(err)), 0, "%s", err);
	unwind_get_stats(u, &two);
	cr_assert_eq(two.rows, one.rows);

	/* One gone: the tables stay for the other; both gone: none left. */
	stop(a);
	exited(&m, u, a);
	unwind_get_stats(u, &left);
	cr_assert_eq(left.tables, one.tables);
	cr_assert_eq(left.processes, 1);
	stop(b);
	exited(&m, u, b);
	unwind_get_stats(u, &none);
	cr_assert_eq(none.tables, 0);
	cr_assert_eq(none.rows, 0);
	cr_assert_eq(none.processes, 0);
	cr_assert_eq(none.tables_unloaded, one.tables);

	/* The rows freed are whole again: the same tables fit once more. */
	pid_t c = start(argv, "libnofp-gcc.so");
	cr_assert_eq(unwind_load_pid(u, c, err, sizeof(err)), 0, "%s", err);
	check_rows(&m, c, "libc.so");
	stop(c);
	exited(&m, u, c);
	unwind_free(u);
	maps_close(&m);
}

/* The entry of unwind_files the sampler finds for the mapping of `name` in
 * pid (keyed as the kernel knows the inode: /proc/PID/maps' device and
 * inode), turned into a mapping as the sampler does (find_by_file). False
 * when there is none. */
static bool mapping_by_file(struct maps *m, pid_t pid, const char *name,
			    struct sonde_unwind_mapping *out)
{
	struct find f = { .name = name };
	cr_assert_eq(procmaps_each(pid, find_exec, &f), 1, "%s is not mapped", name);
	struct sonde_unwind_file_key key = { (uint64_t)major(f.dev) << 20 | minor(f.dev), f.inode };
	struct sonde_unwind_file uf;
	if (bpf_map_lookup_elem(m->files, &key, &uf) != 0)
		return false;
	struct stat st;
	cr_assert_eq(stat(f.path, &st), 0);
	cr_assert_eq(uf.size, (uint64_t)st.st_size);
	cr_assert_eq(uf.mtime_sec, st.st_mtim.tv_sec);
	cr_assert_eq(uf.mtime_nsec, (uint32_t)st.st_mtim.tv_nsec);
	for (uint32_t i = 0; i < uf.nsegs && i < SONDE_UNWIND_FILE_SEGS; i++) {
		if (f.offset - uf.segs[i].offset < uf.segs[i].filesz) {
			uint64_t vaddr = f.offset - uf.segs[i].offset + uf.segs[i].vaddr;
			*out = (struct sonde_unwind_mapping){ f.start, f.end, f.start - vaddr + uf.base,
							      uf.first, uf.count };
			return true;
		}
	}
	cr_assert_fail("%s: no segment holds offset %#lx", name, (unsigned long)f.offset);
	return false;
}

Test(unwind, a_loaded_table_is_found_by_its_file_as_the_maps_give_it)
{
	struct maps m = maps_new(1u << 20);
	char err[256];
	struct unwind *u = unwind_new(fds_of(&m), m.capacity, err, sizeof(err));
	cr_assert(u, "%s", err);
	char *const argv[] = { NOFP_GCC, "spin", NULL };
	pid_t a = start(argv, "libnofp-gcc.so"), b = start(argv, "libnofp-gcc.so");
	cr_assert_eq(unwind_load_pid(u, a, err, sizeof(err)), 0, "%s", err);
	/* b's maps were never read: what the sampler finds by file for b's
	 * mappings is what user space makes of them when it reads them. */
	const char *names[] = { "nofp-gcc", "libnofp-gcc.so", "libc.so" };
	struct sonde_unwind_mapping found[3];
	for (int i = 0; i < 3; i++)
		cr_assert(mapping_by_file(&m, b, names[i], &found[i]), "%s not found by file", names[i]);
	cr_assert_eq(unwind_load_pid(u, b, err, sizeof(err)), 0, "%s", err);
	static struct sonde_unwind_mapping ms[SONDE_UNWIND_MAPPINGS];
	uint32_t n = kernel_mappings(&m, b, ms, SONDE_UNWIND_MAPPINGS);
	for (int i = 0; i < 3; i++) {
		bool same = false;
		for (uint32_t k = 0; k < n; k++)
			same |= memcmp(&ms[k], &found[i], sizeof(found[i])) == 0;
		cr_assert(same, "%s: found by file as %#lx-%#lx adj %#lx rows %u+%u, not as loaded",
			  names[i], (unsigned long)found[i].start, (unsigned long)found[i].end,
			  (unsigned long)found[i].adj, found[i].first, found[i].count);
	}
	/* Gone with the last process using the table. */
	stop(a);
	exited(&m, u, a);
	struct sonde_unwind_mapping x;
	cr_assert(mapping_by_file(&m, b, "libc.so", &x));
	/* A preloaded binary stays findable with no process using it. */
	cr_assert_eq(unwind_preload(u, NOFP_GCC), 0);
	struct find lib = { .name = "libnofp-gcc.so" };
	cr_assert_eq(procmaps_each(b, find_exec, &lib), 1);
	stop(b);
	exited(&m, u, b);
	struct sonde_unwind_file_key key = { (uint64_t)major(lib.dev) << 20 | minor(lib.dev), lib.inode };
	struct sonde_unwind_file uf;
	cr_assert_neq(bpf_map_lookup_elem(m.files, &key, &uf), 0, "libnofp-gcc.so outlived its users");
	pid_t c = start(argv, "libnofp-gcc.so");
	cr_assert(mapping_by_file(&m, c, "nofp-gcc", &x), "the preloaded program is not found by file");
	cr_assert(!mapping_by_file(&m, c, "libnofp-gcc.so", &x));
	stop(c);
	unwind_free(u);
	maps_close(&m);
}

Test(unwind, a_table_that_does_not_fit_is_refused_and_counted)
{
	/* libc's table alone (about 28 K rows on Debian 12) is larger. */
	struct maps m = maps_new(8192);
	char err[256];
	struct unwind *u = unwind_new(fds_of(&m), m.capacity, err, sizeof(err));
	cr_assert(u, "%s", err);
	char *const argv[] = { NOFP_GCC, "spin", NULL };
	pid_t a = start(argv, "libnofp-gcc.so");
	cr_assert_eq(unwind_load_pid(u, a, err, sizeof(err)), 0, "%s", err);
	struct unwind_stats s;
	unwind_get_stats(u, &s);
	cr_assert_geq(s.over_budget, 1);
	cr_assert_leq(s.rows, m.capacity);
	check_rows(&m, a, "libnofp-gcc.so"); /* the small ones fit */
	struct find f = { .name = "libc.so" };
	cr_assert_eq(procmaps_each(a, find_exec, &f), 1);
	static struct sonde_unwind_mapping ms[SONDE_UNWIND_MAPPINGS];
	uint32_t n = kernel_mappings(&m, a, ms, SONDE_UNWIND_MAPPINGS);
	for (uint32_t i = 0; i < n; i++)
		if (ms[i].start == f.start)
			cr_assert_eq(ms[i].count, 0, "libc should be left to frame pointers");
	stop(a);
	exited(&m, u, a);
	unwind_free(u);
	maps_close(&m);
}

Test(unwind, fifty_binaries_stay_within_the_budget)
{
	if (access(PYTHON311, X_OK) != 0)
		cr_skip_test("pyenv's python 3.11 is not installed");
	/* Every extension module of the standard library that imports, then
	 * a marker library, then sleep. */
	char *const argv[] = {
		PYTHON311, "-c",
		"import os, importlib, sys, time\n"
		"d = os.path.join(sys.prefix, 'lib', 'python3.11', 'lib-dynload')\n"
		"n = 0\n"
		"for f in sorted(os.listdir(d)):\n"
		"    try:\n"
		"        importlib.import_module(f.split('.')[0]); n += 1\n"
		"    except Exception:\n"
		"        pass\n"
		"import ctypes; ctypes.CDLL('" TARGET_DIR "/libnofp-clang.so')\n"
		"time.sleep(60)\n",
		NULL,
	};
	const uint32_t budget = 160 * 1024; /* rows: 1.25 MiB */
	struct maps m = maps_new(budget);
	char err[256];
	struct unwind *u = unwind_new(fds_of(&m), m.capacity, err, sizeof(err));
	cr_assert(u, "%s", err);
	pid_t p = start(argv, "libnofp-clang.so");
	cr_assert_eq(unwind_load_pid(u, p, err, sizeof(err)), 0, "%s", err);
	struct unwind_stats s;
	unwind_get_stats(u, &s);
	cr_log_info("%lu tables, %lu rows of %u, %lu refused", (unsigned long)s.tables,
		    (unsigned long)s.rows, budget, (unsigned long)s.over_budget);
	cr_assert_geq(s.tables, 50, "only %lu binaries with tables", (unsigned long)s.tables);
	cr_assert_leq(s.rows, budget);
	cr_assert_geq(s.over_budget, 1, "the budget was meant to be too small for all of them");
	static struct sonde_unwind_mapping ms[SONDE_UNWIND_MAPPINGS];
	uint32_t n = kernel_mappings(&m, p, ms, SONDE_UNWIND_MAPPINGS);
	uint64_t rows = 0;
	for (uint32_t i = 0; i < n; i++) {
		cr_assert_leq((uint64_t)ms[i].first + ms[i].count, budget);
		rows += ms[i].count;
	}
	cr_assert_geq(rows, s.rows, "every loaded table is used by a mapping");
	check_rows(&m, p, "libnofp-clang.so");
	stop(p);
	exited(&m, u, p);
	unwind_get_stats(u, &s);
	cr_assert_eq(s.rows, 0);
	unwind_free(u);
	maps_close(&m);
}
