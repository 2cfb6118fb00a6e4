/* Unit tests for ldso (finding a library as the dynamic loader will): every
 * library ldd lists — ldd is the loader itself, run in trace mode, so it is
 * the reference — must be found at the same file, for system programs and
 * for targets with RUNPATH ($ORIGIN), old-style RPATH, LD_LIBRARY_PATH and
 * LD_PRELOAD; and ld.so.cache files written here byte by byte. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ldso.h"

#define COUNTED TARGET_DIR "/counted"
#define RUNPATH_PROG TARGET_DIR "/privcount_runpath"
#define RPATH_PROG TARGET_DIR "/privcount_rpath"
#define DECOY_DIR TARGET_DIR "/decoy-lib"

static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return a && b && stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* Runs ldd on `bin` with the given environment and checks every
 * "name => path" line against ldso_find. Returns how many it checked. */
static int check_against_ldd(const char *bin, const char *ld_library_path, const char *ld_preload)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "env -u LD_LIBRARY_PATH -u LD_PRELOAD %s%s%s %s%s%s ldd %s",
		 ld_library_path ? "LD_LIBRARY_PATH='" : "", ld_library_path ? ld_library_path : "",
		 ld_library_path ? "'" : "", ld_preload ? "LD_PRELOAD='" : "",
		 ld_preload ? ld_preload : "", ld_preload ? "'" : "", bin);
	FILE *p = popen(cmd, "r");
	cr_assert(p, "cannot run %s", cmd);
	struct ldso_env env = {ld_library_path, ld_preload};
	char line[2048];
	int checked = 0;
	while (fgets(line, sizeof(line), p)) {
		char name[512], path[1024];
		if (sscanf(line, " %511s => %1023s", name, path) != 2 || path[0] != '/')
			continue;
		char how[512];
		char *got = ldso_find(bin, name, &env, how, sizeof(how));
		cr_expect(same_file(got, path), "%s needs %s: ldd says %s, ldso_find %s (%s)", bin,
			  name, path, got ? got : "nothing", how);
		free(got);
		checked++;
	}
	pclose(p);
	return checked;
}

Test(ldso, system_programs_as_ldd)
{
	const char *bins[] = {"/usr/bin/sqlite3", "/bin/ls", "/usr/bin/ssh", "/usr/bin/python3",
			      "/usr/bin/redis-check-rdb", "/usr/bin/jq"};
	int total = 0;
	for (size_t i = 0; i < sizeof(bins) / sizeof(bins[0]); i++)
		if (access(bins[i], X_OK) == 0)
			total += check_against_ldd(bins[i], NULL, NULL);
	cr_assert_gt(total, 5, "checked only %d libraries", total);
}

Test(ldso, runpath_with_origin)
{
	cr_assert_eq(check_against_ldd(RUNPATH_PROG, NULL, NULL), 2);
	char *got = ldso_find(RUNPATH_PROG, "libprivcount", NULL, NULL, 0);
	cr_assert(same_file(got, TARGET_DIR "/private-lib/libprivcount.so"), "got %s", got);
	free(got);
	/* Only the RUNPATH leads there: no system directory has it. */
	got = ldso_find("/bin/true", "libprivcount", NULL, NULL, 0);
	cr_assert_null(got, "found %s without the RUNPATH", got);
}

Test(ldso, ld_library_path_before_runpath)
{
	cr_assert_eq(check_against_ldd(RUNPATH_PROG, DECOY_DIR, NULL), 2);
	struct ldso_env env = {DECOY_DIR, NULL};
	char how[512];
	char *got = ldso_find(RUNPATH_PROG, "libprivcount", &env, how, sizeof(how));
	cr_assert(same_file(got, DECOY_DIR "/libprivcount.so"), "got %s", got);
	cr_assert(strstr(how, "LD_LIBRARY_PATH"), "how: %s", how);
	free(got);
}

Test(ldso, rpath_before_ld_library_path)
{
	cr_assert_eq(check_against_ldd(RPATH_PROG, DECOY_DIR, NULL), 2);
	struct ldso_env env = {DECOY_DIR, NULL};
	char how[512];
	char *got = ldso_find(RPATH_PROG, "libprivcount", &env, how, sizeof(how));
	cr_assert(same_file(got, TARGET_DIR "/rpath-lib/libprivcount.so"), "got %s", got);
	cr_assert(strstr(how, "RPATH"), "how: %s", how);
	free(got);
}

Test(ldso, preload_first)
{
	const char *preload = DECOY_DIR "/libprivcount.so";
	/* ldd lists the preload without "=>"; libprivcount.so is not loaded again. */
	cr_assert_eq(check_against_ldd(RUNPATH_PROG, NULL, preload), 1);
	struct ldso_env env = {NULL, preload};
	char *got = ldso_find(RUNPATH_PROG, "libprivcount", &env, NULL, 0);
	cr_assert(same_file(got, preload), "got %s", got);
	free(got);
}

Test(ldso, names_and_prefixes)
{
	cr_assert(ldso_name_matches("libc.so.6", "libc"));
	cr_assert(ldso_name_matches("libc-2.36.so", "libc"));
	cr_assert(ldso_name_matches("libc.so.6", "libc.so.6"));
	cr_assert(!ldso_name_matches("libcrypto.so.3", "libc"));
	cr_assert(!ldso_name_matches("libc.so.6", "libc.so"));
	cr_assert(!ldso_name_matches("libcounted", "libc"));
	/* A prefix finds the needed library; one the program does not need is
	 * found where dlopen would find it. */
	char *a = ldso_find("/usr/bin/sqlite3", "libsqlite3", NULL, NULL, 0);
	char *b = ldso_find("/bin/true", "libsqlite3", NULL, NULL, 0);
	char *c = ldso_find(NULL, "libsqlite3.so.0", NULL, NULL, 0);
	cr_assert(a && same_file(a, b) && same_file(a, c), "%s %s %s", a, b, c);
	free(a);
	free(b);
	free(c);
	cr_assert_null(ldso_find("/bin/true", "libnosuchlibrary", NULL, NULL, 0));
}

/* --- ld.so.cache files ---------------------------------------------------- */

struct entry {
	int32_t flags;
	uint32_t key, value, osversion;
	uint64_t hwcap;
};

/* Writes a glibc 2.32+ cache (optionally behind an old-format table) with
 * the given (name, path, hwcap) entries. */
static void write_cache(const char *file, bool old_prefix, const char *const *names,
			const char *const *paths, const uint64_t *hwcaps, int n)
{
	FILE *f = fopen(file, "wb");
	cr_assert(f);
	if (old_prefix) {
		fwrite("ld.so-1.7.0", 1, 11, f);
		uint32_t zero = 0;
		fwrite(&zero, 4, 1, f); /* no old entries */
		static const char pad[8] = {0};
		fwrite(pad, 1, 1, f); /* 15 bytes -> aligned to 16 */
	}
	size_t hdr = 48, strings = hdr + (size_t)n * sizeof(struct entry);
	fwrite("glibc-ld.so.cache1.1", 1, 20, f);
	uint32_t nlibs = (uint32_t)n, len = 0;
	fwrite(&nlibs, 4, 1, f);
	fwrite(&len, 4, 1, f);
	static const char zeros[20] = {0};
	fwrite(zeros, 1, 20, f); /* flags, padding, extension offset, unused */
	size_t off = strings;
	for (int i = 0; i < n; i++) {
		struct entry e = {0x0303, (uint32_t)off, 0, 0, hwcaps[i]};
		off += strlen(names[i]) + 1;
		e.value = (uint32_t)off;
		off += strlen(paths[i]) + 1;
		fwrite(&e, sizeof(e), 1, f);
	}
	for (int i = 0; i < n; i++) {
		fwrite(names[i], 1, strlen(names[i]) + 1, f);
		fwrite(paths[i], 1, strlen(paths[i]) + 1, f);
	}
	fclose(f);
}

Test(ldso, cache_files)
{
	char file[] = "/tmp/sonde-ldcache.XXXXXX";
	int fd = mkstemp(file);
	cr_assert(fd >= 0);
	close(fd);
	const char *names[] = {"libprivcount.so", "libprivcount.so", "libcounted.so"};
	const char *paths[] = {TARGET_DIR "/rpath-lib/libprivcount.so",
			       TARGET_DIR "/private-lib/libprivcount.so", TARGET_DIR "/libcounted.so"};
	/* The first entry is a glibc-hwcaps one: not modelled, skipped. */
	const uint64_t hwcaps[] = {1ull << 62, 0, 0};
	for (int old = 0; old < 2; old++) {
		write_cache(file, old, names, paths, hwcaps, 3);
		char *got = ldso_cache_lookup(file, "libprivcount.so", false, 0, 0);
		cr_assert(same_file(got, paths[1]), "old=%d: got %s", old, got);
		free(got);
		got = ldso_cache_lookup(file, "libcounted", true, 0, 0);
		cr_assert(same_file(got, paths[2]), "old=%d: prefix got %s", old, got);
		free(got);
		cr_assert_null(ldso_cache_lookup(file, "libcounted", false, 0, 0));
		/* Another machine's entry is skipped (EM_AARCH64 = 183 here). */
		cr_assert_null(ldso_cache_lookup(file, "libcounted.so", false, 2, 183 + 1000));
	}
	/* Truncated or foreign files give nothing, never a crash. */
	struct stat st;
	cr_assert(stat(file, &st) == 0);
	for (off_t len = 0; len < st.st_size; len += 7) {
		write_cache(file, true, names, paths, hwcaps, 3);
		cr_assert(truncate(file, len) == 0);
		free(ldso_cache_lookup(file, "libcounted.so", false, 0, 0));
	}
	unlink(file);
	cr_assert_null(ldso_cache_lookup("/nonexistent/ld.so.cache", "libc.so.6", false, 0, 0));
	/* The system's cache: libc. */
	char *libc = ldso_cache_lookup("/etc/ld.so.cache", "libc.so.6", false, 0, 0);
	cr_assert(libc && access(libc, R_OK) == 0, "libc.so.6 not in /etc/ld.so.cache: %s", libc);
	free(libc);
}
