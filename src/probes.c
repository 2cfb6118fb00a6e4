#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

struct elf_function {
	char *name;
	uint64_t vaddr, size;
};

struct function_list {
	struct elf_function *f;
	size_t n, cap;
	bool had_symtab; /* a .symtab or .dynsym with functions was found */
};

int probes_split(const char *spec)
{
	for (int i = (int)strlen(spec) - 1; i > 0; i--) {
		if (spec[i] != ':')
			continue;
		if (spec[i - 1] == ':' || spec[i + 1] == ':') {
			i--; /* skip the other half of "::" */
			continue;
		}
		return i;
	}
	return -1;
}

char *probes_which(const char *program)
{
	if (strchr(program, '/'))
		return access(program, X_OK) == 0 ? realpath(program, NULL) : NULL;
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	char *copy = xstrdup(path), *save = NULL;
	char *found = NULL;
	for (char *dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", program);
		if (access(cand, X_OK) == 0)
			found = realpath(cand, NULL);
		free(cand);
	}
	free(copy);
	return found;
}

static void list_add(struct function_list *l, const char *name, uint64_t vaddr, uint64_t size)
{
	grow_array((void **)&l->f, &l->cap, l->n + 1, sizeof(*l->f));
	l->f[l->n++] = (struct elf_function){xstrdup(name), vaddr, size};
}

static void list_free(struct function_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->f[i].name);
	free(l->f);
}

static void read_symbols(Elf *elf, struct function_list *l)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || sh.sh_entsize == 0)
			continue;
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < count; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
			    sym.st_value == 0)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name)
				continue;
			l->had_symtab = true;
			list_add(l, name, sym.st_value, sym.st_size);
		}
	}
}

/* File offset of a virtual address, through the PT_LOAD segment holding it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;
	if (elf_getphdrnum(elf, &n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -1;
}

/* Does the mapped file's base name name this library? "libc" matches
 * libc.so.6 and libc-2.36.so; "libc.so.6" matches itself. */
static bool library_name_matches(const char *base, const char *want)
{
	size_t n = strlen(want);
	if (strcmp(base, want) == 0)
		return true;
	return strncmp(base, want, n) == 0 && (base[n] == '.' || base[n] == '-') &&
	       strstr(base + n, ".so") != NULL;
}

static char *library_in_maps(pid_t pid, const char *want)
{
	char path[64], line[PATH_MAX + 256];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *found = NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/');
		if (!file)
			continue;
		file[strcspn(file, "\n")] = 0;
		const char *base = strrchr(file, '/') + 1;
		if (library_name_matches(base, want))
			found = xasprintf("/proc/%d/root%s", (int)pid, file);
	}
	fclose(f);
	return found;
}

/* libfoo.so is often a linker script (text): only ELF files are libraries. */
static bool is_elf_file(const char *path)
{
	unsigned char magic[4] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

static char *library_in_dirs(const char *want)
{
	static const char *const dirs[] = {"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu",
					   "/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					   "/lib64", "/usr/lib64", "/lib", "/usr/lib",
					   "/usr/local/lib", NULL};
	const char *ld = getenv("LD_LIBRARY_PATH");
	char *ldcopy = ld ? xstrdup(ld) : NULL, *save = NULL;
	char *found = NULL;
	for (char *d = ldcopy ? strtok_r(ldcopy, ":", &save) : NULL; d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *cand = xasprintf("%s/%s", d, want);
		if (access(cand, R_OK) == 0)
			found = cand;
		else
			free(cand);
	}
	free(ldcopy);
	/* Exact file names first, then "lib<x>.so*" style prefixes. */
	for (int pass = 0; pass < 2 && !found; pass++) {
		for (int i = 0; dirs[i] && !found; i++) {
			if (pass == 0) {
				char *cand = xasprintf("%s/%s", dirs[i], want);
				if (is_elf_file(cand))
					found = cand;
				else
					free(cand);
				continue;
			}
			char *pattern = xasprintf("%s/%s[.-]*so*", dirs[i], want);
			glob_t g;
			if (glob(pattern, 0, NULL, &g) == 0)
				for (size_t k = 0; k < g.gl_pathc && !found; k++)
					if (is_elf_file(g.gl_pathv[k]))
						found = xstrdup(g.gl_pathv[k]);
			globfree(&g);
			free(pattern);
		}
	}
	return found;
}

static char *find_binary(const char *part, const char *executable, pid_t pid, char *err,
			 size_t errlen)
{
	if (strchr(part, '/')) {
		if (access(part, R_OK) == 0)
			return xstrdup(part);
		snprintf(err, errlen, "cannot read %s: %s", part, strerror(errno));
		return NULL;
	}
	if (executable) {
		const char *base = strrchr(executable, '/');
		base = base ? base + 1 : executable;
		if (strcmp(base, part) == 0)
			return xstrdup(executable);
	}
	char *found = pid > 0 ? library_in_maps(pid, part) : NULL;
	if (!found)
		found = library_in_dirs(part);
	if (!found)
		snprintf(err, errlen,
			 "cannot find the binary or library '%s' (not mapped by the target, not in "
			 "the library directories): give its path, e.g. /usr/lib/x86_64-linux-gnu/%s.so",
			 part, part);
	return found;
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > 64 || lb > 64)
		return (size_t)-1;
	size_t row[65];
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cur = row[j];
			size_t sub = prev + (a[i - 1] != b[j - 1]);
			size_t del = row[j] + 1, ins = row[j - 1] + 1;
			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

/* "nearest: a, b, c" — the three names closest to `want` by edit distance,
 * names containing `want` first. */
static void nearest_names(const struct function_list *l, const char *want, char *buf, size_t size)
{
	const char *best[3] = {0};
	size_t bestd[3] = {(size_t)-1, (size_t)-1, (size_t)-1};
	for (size_t i = 0; i < l->n; i++) {
		const char *name = l->f[i].name;
		size_t d = strstr(name, want) ? 0 : edit_distance(want, name);
		bool dup = false;
		for (int k = 0; k < 3; k++)
			dup |= best[k] && strcmp(best[k], name) == 0;
		if (dup)
			continue;
		for (int k = 0; k < 3; k++) {
			if (d < bestd[k]) {
				for (int m = 2; m > k; m--) {
					best[m] = best[m - 1];
					bestd[m] = bestd[m - 1];
				}
				best[k] = name;
				bestd[k] = d;
				break;
			}
		}
	}
	size_t off = 0;
	buf[0] = 0;
	for (int k = 0; k < 3 && best[k] && bestd[k] <= strlen(want) / 2 + 2 && off < size; k++) {
		int w = snprintf(buf + off, size - off, "%s%s", off ? ", " : "", best[k]);
		off = w < 0 ? size : off + (size_t)w; /* truncated: stop at the end */
	}
}

/* --- functions that exist only inlined --------------------------------- */

struct inline_search {
	const char *want;
	char sites[512]; /* "caller (file:line), ..." */
	size_t off;
	int nsites;
	Dwarf_Files *files;
};

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void note_inline_site(struct inline_search *q, const char *caller, Dwarf_Die *site)
{
	Dwarf_Attribute a;
	Dwarf_Word fileidx = 0, line = 0;
	if (dwarf_attr(site, DW_AT_call_file, &a))
		dwarf_formudata(&a, &fileidx);
	if (dwarf_attr(site, DW_AT_call_line, &a))
		dwarf_formudata(&a, &line);
	const char *file = q->files ? dwarf_filesrc(q->files, fileidx, NULL, NULL) : NULL;
	if (q->nsites++ >= 3 || q->off >= sizeof(q->sites))
		return; /* a few examples are enough */
	int w = snprintf(q->sites + q->off, sizeof(q->sites) - q->off, "%s%s at %s:%llu",
			 q->off ? ", " : "", caller ? caller : "?", file ? base_name(file) : "?",
			 (unsigned long long)line);
	q->off = w < 0 ? sizeof(q->sites) : q->off + (size_t)w;
}

/* Walks a DIE tree; `caller` is the enclosing function's name. */
static void find_inlined(struct inline_search *q, Dwarf_Die *die, const char *caller, int depth)
{
	if (depth > 64)
		return;
	Dwarf_Die child;
	if (dwarf_child(die, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name = dwarf_diename(&child); /* follows abstract_origin */
		if (tag == DW_TAG_inlined_subroutine && name && strcmp(name, q->want) == 0)
			note_inline_site(q, caller, &child);
		const char *inner = caller;
		if (tag == DW_TAG_subprogram && name)
			inner = name;
		if (tag == DW_TAG_subprogram || tag == DW_TAG_lexical_block ||
		    tag == DW_TAG_inlined_subroutine || tag == DW_TAG_namespace ||
		    tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			find_inlined(q, &child, inner, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* When FUNC is not a symbol, it may still exist in DWARF, inlined into its
 * callers: say so and where. Returns true when it found inlined copies. */
static bool describe_inlined_only(int fd, const char *func, const char *binary, char *err,
				  size_t errlen)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw)
		return false;
	struct inline_search q = {.want = func};
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			size_t nfiles;
			q.files = NULL;
			dwarf_getsrcfiles(&cu, &q.files, &nfiles);
			find_inlined(&q, &cu, NULL, 0);
		}
		off = next;
	}
	dwarf_end(dw);
	if (!q.nsites)
		return false;
	snprintf(err, errlen,
		 "'%s' exists only inlined in %s (%d place%s: %s%s); trace a caller instead",
		 func, binary, q.nsites, q.nsites == 1 ? "" : "s", q.sites,
		 q.nsites > 3 ? ", ..." : "");
	return true;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

int probes_resolve(const char *spec, const char *executable, pid_t pid,
		   struct probe_target **out, char *err, size_t errlen)
{
	*out = NULL;
	int colon = probes_split(spec);
	char *bin_part = colon > 0 ? strndup(spec, (size_t)colon) : NULL;
	const char *func = colon > 0 ? spec + colon + 1 : spec;
	if (!*func) {
		snprintf(err, errlen, "bad probe '%s': expected FUNC, BINARY:FUNC or LIB:FUNC", spec);
		free(bin_part);
		return -1;
	}
	char *binary = NULL;
	if (bin_part)
		binary = find_binary(bin_part, executable, pid, err, errlen);
	else if (executable)
		binary = xstrdup(executable);
	else
		snprintf(err, errlen, "probe '%s' names no binary and there is no target "
			 "executable: use BINARY:FUNC", spec);
	free(bin_part);
	if (!binary)
		return -1;

	elf_version(EV_CURRENT);
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snprintf(err, errlen, "%s is not an ELF binary sonde can read%s%s", binary,
			 fd < 0 ? ": " : "", fd < 0 ? strerror(errno) : "");
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		free(binary);
		return -1;
	}
	struct function_list fl = {0};
	read_symbols(elf, &fl);
	int n = 0;
	struct probe_target *t = NULL;
	size_t cap = 0;
	if (!fl.had_symtab) {
		snprintf(err, errlen,
			 "%s has no symbol table (stripped): rebuild it with symbols or trace "
			 "another binary",
			 binary);
		n = -1;
	}
	for (size_t i = 0; n >= 0 && i < fl.n; i++) {
		const struct elf_function *f = &fl.f[i];
		if (is_glob(func) ? fnmatch(func, f->name, 0) != 0 : strcmp(func, f->name) != 0)
			continue;
		uint64_t off;
		if (vaddr_to_offset(elf, f->vaddr, &off))
			continue;
		bool seen = false; /* aliases and .symtab/.dynsym duplicates */
		for (int k = 0; k < n && !seen; k++)
			seen = t[k].offset == off;
		if (seen)
			continue;
		grow_array((void **)&t, &cap, (size_t)n + 1, sizeof(*t));
		t[n++] = (struct probe_target){xstrdup(f->name), xstrdup(binary), off, f->size};
	}
	if (n == 0) {
		char near[256];
		nearest_names(&fl, func, near, sizeof(near));
		if (is_glob(func))
			snprintf(err, errlen, "no function in %s matches '%s'", binary, func);
		else if (!describe_inlined_only(fd, func, binary, err, errlen))
			snprintf(err, errlen, "no function '%s' in %s%s%s", func, binary,
				 *near ? "; nearest: " : "", near);
		n = -1;
	}
	list_free(&fl);
	elf_end(elf);
	close(fd);
	free(binary);
	if (n < 0) {
		probes_free(t, 0);
		return -1;
	}
	*out = t;
	return n;
}

void probes_free(struct probe_target *t, int n)
{
	for (int i = 0; i < n; i++) {
		free(t[i].function);
		free(t[i].binary);
	}
	free(t);
}
