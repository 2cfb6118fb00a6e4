/* ifunc: the implementation libc's strlen (an IFUNC) resolved to, in sonde's
 * own process, in another process that chose differently (a Python child
 * told to hide AVX2 from glibc, which says itself what its dlsym got), and
 * through an executable's lazily bound PLT slot, before and after its first
 * call. The reference is always the loader's own answer (dlsym and dladdr
 * in the process that made the choice), never ifunc's reading of a GOT. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ifunc.h"

#define STRLENS TARGET_DIR "/strlens"

/* libc as ifunc_resolve takes it: its file, device, inode, and strlen's
 * IFUNC symbol (the resolver's address); and the loader's answer here. */
struct libc {
	char path[4096];
	int fd;
	Elf *elf;
	uint64_t dev, ino, resolver;
	uint64_t here; /* dlsym's strlen in this process, as a vaddr of the file */
};

static uint64_t dynsym_value(Elf *elf, const char *name, int type)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n = gelf_getsym(d, (int)i, &s) ? elf_strptr(elf, sh.sh_link, s.st_name)
								   : NULL;
			if (n && strcmp(n, name) == 0 && GELF_ST_TYPE(s.st_info) == type)
				return s.st_value;
		}
	}
	return 0;
}

static void libc_open(struct libc *l)
{
	/* libc's own strlen (a handle: not an interceptor a sanitizer puts
	 * first in the global scope); dladdr names its file and load base. */
	void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
	cr_assert_not_null(h, "libc.so.6 is not loaded");
	void *sym = dlsym(h, "strlen");
	Dl_info info;
	cr_assert(sym && dladdr(sym, &info) && info.dli_fname, "dladdr(strlen) failed");
	snprintf(l->path, sizeof(l->path), "%s", info.dli_fname);
	l->here = (uint64_t)(uintptr_t)sym - (uint64_t)(uintptr_t)info.dli_fbase;
	dlclose(h);
	struct stat st;
	cr_assert_eq(stat(l->path, &st), 0, "stat %s", l->path);
	l->dev = st.st_dev;
	l->ino = st.st_ino;
	elf_version(EV_CURRENT);
	l->fd = open(l->path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(l->fd, 0);
	l->elf = elf_begin(l->fd, ELF_C_READ_MMAP, NULL);
	cr_assert_not_null(l->elf);
	l->resolver = dynsym_value(l->elf, "strlen", STT_GNU_IFUNC);
	cr_assert_neq(l->resolver, 0, "%s has no IFUNC strlen", l->path);
	cr_assert_neq(l->here, l->resolver, "dlsym gave the resolver itself");
}

static void libc_close(struct libc *l)
{
	elf_end(l->elf);
	close(l->fd);
}

/* A child running argv with envp; its stdout is *out, its stdin *in. */
static pid_t spawn(char *const argv[], char *const envp[], FILE **out, int *in)
{
	int o[2], i[2];
	cr_assert_eq(pipe(o), 0);
	cr_assert_eq(pipe(i), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(i[0], 0);
		close(o[0]);
		close(i[1]);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(o[1]);
	close(i[0]);
	*out = fdopen(o[0], "r");
	*in = i[1];
	return pid;
}

static void reap(pid_t pid, FILE *out, int in)
{
	close(in);
	fclose(out);
	int status;
	waitpid(pid, &status, 0);
}

/* In sonde's own process the answer is the loader's: strlen's
 * implementation, not its resolver, at the vaddr dlsym gives. */
Test(ifunc, own_process_is_dlsym)
{
	struct libc l;
	libc_open(&l);
	uint64_t impl = 0;
	cr_assert_eq(ifunc_resolve(&(struct ifunc_symbol){l.elf, l.dev, l.ino, "strlen", l.resolver}, getpid(), &impl), 0);
	cr_expect_eq(impl, l.here, "ifunc says 0x%lx, dlsym 0x%lx", (unsigned long)impl,
		     (unsigned long)l.here);
	libc_close(&l);
}

/* Another process read through its GOT: a Python whose glibc is told to
 * hide AVX2 picks another strlen than this process, and ifunc gives that
 * one — the child's choice, which it prints from its own dlsym. */
Test(ifunc, other_process_with_other_choice)
{
	if (access("/usr/bin/python3", X_OK) != 0)
		cr_skip_test("no /usr/bin/python3");
	struct libc l;
	libc_open(&l);
	const char *script =
		"import ctypes, os, sys\n"
		"a = ctypes.cast(ctypes.CDLL('libc.so.6').strlen, ctypes.c_void_p).value\n"
		"for line in open('/proc/self/maps'):\n"
		"    f = line.split()\n"
		"    if len(f) >= 6 and os.path.basename(f[5]) == 'libc.so.6' and int(f[2], 16) == 0:\n"
		"        print('%d %d' % (os.getpid(), a - int(f[0].split('-')[0], 16)), flush=True)\n"
		"        break\n"
		"sys.stdin.read()\n";
	char *argv[] = {"/usr/bin/python3", "-c", (char *)script, NULL};
	char *envp[] = {"GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX512F,-AVX512VL,-EVEX", NULL};
	FILE *out;
	int in;
	pid_t pid = spawn(argv, envp, &out, &in);
	int child = 0;
	unsigned long theirs = 0;
	cr_assert_eq(fscanf(out, "%d %lu", &child, &theirs), 2, "the Python child said nothing");
	cr_assert_eq(child, pid);
	uint64_t impl = 0;
	int r = ifunc_resolve(&(struct ifunc_symbol){l.elf, l.dev, l.ino, "strlen", l.resolver}, pid, &impl);
	reap(pid, out, in);
	cr_assert_eq(r, 0, "no answer for the child");
	cr_expect_eq(impl, theirs, "ifunc says 0x%lx, the child's dlsym 0x%lx",
		     (unsigned long)impl, theirs);
	/* Not this process's answer read by mistake (on a CPU with AVX2). */
	if (__builtin_cpu_supports("avx2"))
		cr_expect_neq(impl, l.here, "the child chose as this process did: 0x%lx",
			      (unsigned long)impl);
	libc_close(&l);
}

/* With no resolver given, only the executable's own slot for "strlen" can
 * answer: a lazily bound PLT slot holds a stub of the executable until the
 * first call (no answer), then the implementation (this process's choice:
 * the same file, CPU and environment). */
Test(ifunc, executable_slot_after_first_call)
{
	struct libc l;
	libc_open(&l);
	char dir[] = "/tmp/sonde-ifunc-XXXXXX";
	cr_assert_not_null(mkdtemp(dir));
	char ready[128], end[128];
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	snprintf(end, sizeof(end), "%s/end", dir);
	char *argv[] = {STRLENS, ready, "100", "strlen", end, NULL};
	char *envp[] = {NULL}; /* no LD_BIND_NOW, no tunables */
	FILE *out;
	int in;
	pid_t pid = spawn(argv, envp, &out, &in);
	int child = 0;
	cr_assert_eq(fscanf(out, " pid=%d", &child), 1, "strlens said nothing");
	cr_assert_eq(child, pid);

	uint64_t impl = 0;
	int before = ifunc_resolve(&(struct ifunc_symbol){l.elf, l.dev, l.ino, "strlen", 0}, pid, &impl);
	cr_expect_eq(before, -1, "an unbound slot answered 0x%lx", (unsigned long)impl);

	FILE *f = fopen(ready, "w");
	cr_assert_not_null(f);
	fclose(f);
	long calls = 0;
	cr_assert_eq(fscanf(out, " calls=%ld", &calls), 1);
	cr_assert_eq(calls, 100);
	impl = 0;
	int after = ifunc_resolve(&(struct ifunc_symbol){l.elf, l.dev, l.ino, "strlen", 0}, pid, &impl);

	f = fopen(end, "w");
	cr_assert_not_null(f);
	fclose(f);
	reap(pid, out, in);
	unlink(ready);
	unlink(end);
	rmdir(dir);
	cr_assert_eq(after, 0, "the bound slot gave no answer");
	cr_expect_eq(impl, l.here, "ifunc says 0x%lx, dlsym 0x%lx", (unsigned long)impl,
		     (unsigned long)l.here);
	libc_close(&l);
}

/* A file the process does not map has no answer: libc's ELF named by the
 * inode of the target program, which this process never maps. */
Test(ifunc, unmapped_file_has_no_answer)
{
	struct libc l;
	libc_open(&l);
	struct stat st;
	cr_assert_eq(stat(STRLENS, &st), 0);
	uint64_t impl = 0x1234;
	cr_expect_eq(ifunc_resolve(&(struct ifunc_symbol){l.elf, st.st_dev, st.st_ino, "strlen", l.resolver}, getpid(),
				   &impl),
		     -1);
	cr_expect_eq(impl, 0x1234, "impl written on failure");
	libc_close(&l);
}
