#define _GNU_SOURCE
#include "probes.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "demangle.h"
#include "elfsyms.h"
#include "errbuf.h"
#include "fderanges.h"
#include "ifunc.h"
#include "insn.h"
#include "lines.h"
#include "procmaps.h"
#include "util.h"

struct elf_function {
	char *name;
	uint64_t vaddr, size;
	bool ifunc; /* STT_GNU_IFUNC: vaddr is the resolver */
	/* A C++ or Rust name demangled (function_list_demangle): without and
	 * with its parameters; NULL when not mangled. */
	char *readable, *signature;
};

struct function_list {
	struct elf_function *f;
	size_t n, cap;
	bool had_symtab; /* a .symtab was read (the binary's or its debug file's) */
	bool demangled;  /* readable and signature are filled */
};

/* Fills every mangled function's demangled names (once: only a spec that
 * no linkage name matches needs them). */
static void function_list_demangle(struct function_list *l)
{
	if (l->demangled)
		return;
	l->demangled = true;
	for (size_t i = 0; i < l->n; i++) {
		struct elf_function *f = &l->f[i];
		f->readable = demangle_short(f->name);
		f->signature = f->readable ? demangle_full(f->name) : NULL;
	}
}

/* The name a function is shown by: demangled when it is C++ or Rust. */
static const char *function_shown(const struct elf_function *f)
{
	return f->readable ? f->readable : f->name;
}

/* Does `spec` name function f: its linkage name, or (once demangled) its
 * readable name ("shop::Cart::total") or whole signature ("shop::Cart::
 * total(int) const"); a glob matches any of them. */
static bool function_named(const struct elf_function *f, const char *spec, bool glob)
{
	const char *names[3] = {f->name, f->readable, f->signature};
	for (int i = 0; i < 3; i++) {
		if (!names[i])
			continue;
		if (glob ? fnmatch(spec, names[i], 0) == 0 : strcmp(spec, names[i]) == 0)
			return true;
	}
	return false;
}

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

static void list_add(struct function_list *l, const char *name, uint64_t vaddr, uint64_t size,
		     bool ifunc)
{
	grow_array((void **)&l->f, &l->cap, l->n + 1, sizeof(*l->f));
	l->f[l->n++] = (struct elf_function){xstrdup(name), vaddr, size, ifunc, NULL, NULL};
}

static void list_free(struct function_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->f[i].name);
		free(l->f[i].readable);
		free(l->f[i].signature);
	}
	free(l->f);
}

/* Keeps a defined function symbol (STT_FUNC or STT_GNU_IFUNC) with a
 * name and a non-zero address. */
static void add_function(const struct elf_symbol *sym, void *arg)
{
	struct function_list *l = arg;
	if ((sym->type != STT_FUNC && sym->type != STT_GNU_IFUNC) || sym->shndx == SHN_UNDEF ||
	    sym->value == 0 || !sym->name || !*sym->name)
		return;
	list_add(l, sym->name, sym->value, sym->size, sym->type == STT_GNU_IFUNC);
}

/* Reads the functions of .symtab and/or .dynsym (tables: SYMBOLS_ELF_*). */
static void read_symbols(Elf *elf, struct function_list *l, unsigned tables)
{
	if (symbols_elf_each(elf, tables, add_function, l) & SYMBOLS_ELF_SYMTAB)
		l->had_symtab = true;
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

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* A path as the user knows it: without the /proc/PID/root prefix sonde
 * opens a running target's files through. */
static const char *display_path(const char *path)
{
	int n = 0;
	if (sscanf(path, "/proc/%*d/root%n", &n) == 0 && n > 0 && path[n] == '/')
		return path + n;
	return path;
}

struct library_search {
	const char *want;
	pid_t pid;
	char *found;
};

static int library_mapping(const struct procmaps_entry *e, void *arg)
{
	struct library_search *ls = arg;
	if (e->path[0] != '/' || !ldso_name_matches(base_name(e->path), ls->want))
		return 0;
	ls->found = procmaps_root_path(ls->pid, e->path);
	return 1;
}

/* The first file a running target maps whose base name names the library. */
static char *library_in_maps(const struct probe_scope *sc, const char *want)
{
	for (int i = 0; i < sc->npids; i++) {
		struct library_search ls = {.want = want, .pid = sc->pids[i]};
		if (procmaps_each(sc->pids[i], library_mapping, &ls) > 0)
			return ls.found;
	}
	return NULL;
}

/* A running target whose executable or command name is `part`: the path of
 * its executable (through /proc/PID/root), or NULL. */
static char *program_in_targets(const struct probe_scope *sc, const char *part)
{
	for (int i = 0; i < sc->npids; i++) {
		char exe[PATH_MAX], comm[PROC_COMM_MAX + 1];
		if (procmaps_exe(sc->pids[i], exe, sizeof(exe)))
			continue;
		bool named = strcmp(part, base_name(exe)) == 0 ||
			     (procmaps_comm(sc->pids[i], comm, sizeof(comm)) == 0 &&
			      procmaps_comm_names(comm, part));
		if (named)
			return procmaps_root_path(sc->pids[i], exe);
	}
	return NULL;
}

static bool looks_like_library(const char *part)
{
	return strncmp(part, "lib", 3) == 0 || strstr(part, ".so") != NULL;
}

static bool is_executable_name(const struct probe_scope *sc, const char *part)
{
	if (!sc->executable)
		return false;
	if (strcmp(base_name(sc->executable), part) == 0)
		return true;
	char *real = realpath(sc->executable, NULL);
	bool same = real && strcmp(base_name(real), part) == 0;
	free(real);
	for (int i = 0; i < sc->nexe_names && !same; i++)
		same = sc->exe_names[i] && procmaps_comm_names(base_name(sc->exe_names[i]), part);
	return same;
}

static char *find_binary(const char *part, const struct probe_scope *sc, char *err, size_t errlen)
{
	if (strchr(part, '/')) {
		if (access(part, R_OK) == 0)
			return xstrdup(part);
		errbuf_set(err, errlen, "cannot read %s: %s", part, strerror(errno));
		return NULL;
	}
	if (is_executable_name(sc, part))
		return xstrdup(sc->executable);
	char *found = NULL;
	if (sc->npids > 0) {
		found = program_in_targets(sc, part);
		if (!found)
			found = library_in_maps(sc, part);
	} else {
		found = ldso_find(sc->executable, part, sc->env, NULL, 0);
	}
	if (!found && !looks_like_library(part))
		found = probes_which(part);
	if (found)
		return found;
	if (sc->npids > 0) {
		char others[64] = "";
		if (sc->npids > 1)
			snprintf(others, sizeof(others), " and %d other process%s", sc->npids - 1,
				 sc->npids == 2 ? "" : "es");
		errbuf_set(err, errlen,
			   "no process of the target maps a library or runs a program named '%s' "
			   "(searched PID %d%s): give the library's path to trace it before it is "
			   "loaded",
			   part, (int)sc->pids[0], others);
	} else if (sc->executable) {
		const char *prog = sc->nexe_names > 0 && sc->exe_names[0] ? sc->exe_names[0]
									 : sc->executable;
		errbuf_set(err, errlen,
			   "cannot find the binary or library '%s': %s would not load it (DT_NEEDED, "
			   "RPATH/RUNPATH, LD_LIBRARY_PATH, /etc/ld.so.cache, system directories) and "
			   "no program of that name is in PATH; give its path",
			   part, base_name(prog));
	} else {
		errbuf_set(err, errlen,
			   "cannot find the binary or library '%s' (not in LD_LIBRARY_PATH, "
			   "/etc/ld.so.cache, the system directories or PATH): give its path",
			   part);
	}
	return NULL;
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
		const char *name = function_shown(&l->f[i]);
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
	errbuf_set(err, errlen,
		   "'%s' exists only inlined in %s (%d place%s: %s%s); trace a caller instead",
		   func, binary, q.nsites, q.nsites == 1 ? "" : "s", q.sites,
		   q.nsites > 3 ? ", ..." : "");
	return true;
}

static bool is_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* The GNU build-id of an ELF file as hex, or "" (size >= 2 * 64 + 1). */
static void build_id_hex(Elf *elf, char *hex, size_t size)
{
	hex[0] = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t off = 0, name_off, desc_off;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((char *)data->d_buf + name_off, "GNU", 4) != 0 || nh.n_descsz == 0 ||
			    nh.n_descsz * 2 + 1 > size)
				continue;
			const unsigned char *d = (const unsigned char *)data->d_buf + desc_off;
			for (size_t i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			return;
		}
	}
}

/* The file name in .gnu_debuglink, or "". */
static void debuglink_name(Elf *elf, char *name, size_t size)
{
	name[0] = 0;
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *sname;
		if (!gelf_getshdr(scn, &sh) || !(sname = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(sname, ".gnu_debuglink") != 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data && data->d_size > 0 && memchr(data->d_buf, 0, data->d_size))
			snprintf(name, size, "%s", (const char *)data->d_buf);
		return;
	}
}

struct debug_file {
	int fd;
	Elf *elf;
};

/* Opens `path` as the debug file of a binary with build-id `id` (or any,
 * when the binary has none): it must hold a .symtab. */
static bool open_debug_candidate(const char *path, const char *id, struct debug_file *d)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool ok = elf && elf_kind(elf) == ELF_K_ELF;
	if (ok && *id) {
		char got[129];
		build_id_hex(elf, got, sizeof(got));
		ok = strcmp(got, id) == 0;
	}
	bool symtab = false;
	for (Elf_Scn *scn = NULL; ok && !symtab && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		symtab = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
	}
	if (!ok || !symtab) {
		if (elf)
			elf_end(elf);
		close(fd);
		return false;
	}
	d->fd = fd;
	d->elf = elf;
	return true;
}

/* The separate debug file of `binary` (as a -dbgsym package or libc6-dbg
 * installs it): by build-id under /usr/lib/debug/.build-id, then by
 * .gnu_debuglink next to the binary, in its .debug/ and under
 * /usr/lib/debug. For a file of a running target (/proc/PID/root/...), the
 * target's root is searched first. Last, debuginfod's client cache (what
 * debuginfod-find fetched: $DEBUGINFOD_CACHE_PATH, else
 * ~/.cache/debuginfod_client/BUILD-ID/debuginfo). */
static bool find_debug_file(Elf *elf, const char *binary, struct debug_file *d)
{
	char id[129], link[256];
	build_id_hex(elf, id, sizeof(id));
	debuglink_name(elf, link, sizeof(link));
	const char *shown = display_path(binary);
	char root[64] = "";
	if (shown != binary)
		snprintf(root, sizeof(root), "%.*s", (int)(shown - binary), binary);
	char *dir = xstrdup(shown);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	else
		snprintf(dir, strlen(dir) + 1, "%s", strlen(dir) ? "." : "");
	const char *roots[2] = {root, ""};
	int nroots = *root ? 2 : 1;
	bool found = false;
	for (int r = 0; r < nroots && !found; r++) {
		if (*id && strlen(id) > 2) {
			char *p = xasprintf("%s/usr/lib/debug/.build-id/%.2s/%s.debug", roots[r], id,
					    id + 2);
			found = open_debug_candidate(p, id, d);
			free(p);
		}
		static const char *const fmts[] = {"%s%s/%s", "%s%s/.debug/%s",
						   "%s/usr/lib/debug%s/%s"};
		for (int k = 0; *link && k < 3 && !found; k++) {
			char *p = xasprintf(fmts[k], roots[r], dir, link);
			if (strcmp(p, binary) != 0)
				found = open_debug_candidate(p, id, d);
			free(p);
		}
	}
	free(dir);
	/* What debuginfod-find fetched (its client cache). */
	if (!found && *id) {
		const char *cache = getenv("DEBUGINFOD_CACHE_PATH"), *xdg = getenv("XDG_CACHE_HOME"),
			   *home = getenv("HOME");
		char *p = cache  ? xasprintf("%s/%s/debuginfo", cache, id)
			  : xdg  ? xasprintf("%s/debuginfod_client/%s/debuginfo", xdg, id)
			  : home ? xasprintf("%s/.cache/debuginfod_client/%s/debuginfo", home, id)
				 : NULL;
		if (p)
			found = open_debug_candidate(p, id, d);
		free(p);
	}
	return found;
}

/* --- functions a span probe would break ------------------------------------ */

/* What is read once per binary to tell, lazily. */
struct safety {
	Elf *elf;
	int fd;             /* the binary, whose bytes are the code */
	int dwarf_fd;       /* the binary or its debug file */
	Elf *debug_elf;
	Dwarf *dw;
	bool dw_tried;
	struct symbols_fdes *fdes;
	const struct function_list *fl;
	uint64_t entry;     /* e_entry, 0 if none */
};

enum unsafe {
	SAFE,
	UNSAFE_ENTRY,    /* the process's entry point: never called, never returns */
	UNSAFE_NORETURN, /* DW_AT_noreturn */
	UNSAFE_INSIDE,   /* the address is inside an instruction */
	UNSAFE_INSN,     /* the kernel cannot step its first instructions (insn.h) */
};

/* Is the subprogram at vaddr, among the children of `parent`, noreturn? */
static bool subprogram_noreturn(Dwarf_Die *parent, uint64_t vaddr, int depth)
{
	Dwarf_Die child;
	if (depth > 8 || dwarf_child(parent, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		Dwarf_Addr lo;
		if (tag == DW_TAG_subprogram &&
		    (dwarf_lowpc(&child, &lo) == 0 || dwarf_entrypc(&child, &lo) == 0) && lo == vaddr) {
			Dwarf_Attribute a;
			bool flag = false;
			/* _integrate: the flag may sit on the declaration */
			return dwarf_attr_integrate(&child, DW_AT_noreturn, &a) &&
			       dwarf_formflag(&a, &flag) == 0 && flag;
		}
		if ((tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
		     tag == DW_TAG_structure_type) &&
		    subprogram_noreturn(&child, vaddr, depth + 1))
			return true;
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static bool noreturn_in_dwarf(struct safety *c, uint64_t vaddr)
{
	if (!c->dw_tried) {
		c->dw_tried = true;
		c->dw = dwarf_begin(c->dwarf_fd, DWARF_C_READ);
	}
	Dwarf_Die cu;
	return c->dw && dwarf_addrdie(c->dw, vaddr, &cu) && subprogram_noreturn(&cu, vaddr, 0);
}

/* Decodes from `start` (a known instruction start) to vaddr. */
static enum insn_reach reach_from(struct safety *c, uint64_t start, uint64_t vaddr,
				  uint64_t *inside_of)
{
	uint64_t off;
	if (vaddr - start > (1u << 20) || vaddr_to_offset(c->elf, start, &off))
		return INSN_UNDECODED;
	size_t len = (size_t)(vaddr - start) + 16;
	uint8_t *buf = xmalloc(len);
	ssize_t got = pread(c->fd, buf, len, (off_t)off);
	enum insn_reach r = got > (ssize_t)(vaddr - start)
				    ? insn_reaches(buf, (size_t)got, start, vaddr, inside_of)
				    : INSN_UNDECODED;
	free(buf);
	return r;
}

/* Is vaddr inside an instruction? Decoded from the start of the function
 * holding it by the unwind tables, and from that of any symbol around it:
 * a symbol can start anywhere (a wrong size, a label in hand-written code). */
static bool inside_instruction(struct safety *c, uint64_t vaddr, uint64_t *insn_at,
			       const char **container)
{
	if (!c->fdes)
		c->fdes = symbols_fdes_read(c->elf, c->debug_elf);
	uint64_t start;
	*container = NULL;
	if (symbols_fdes_find(c->fdes, vaddr, &start) && start < vaddr &&
	    reach_from(c, start, vaddr, insn_at) == INSN_INSIDE) {
		for (size_t i = 0; i < c->fl->n; i++)
			if (c->fl->f[i].vaddr == start)
				*container = function_shown(&c->fl->f[i]);
		return true;
	}
	for (size_t i = 0; i < c->fl->n; i++) {
		const struct elf_function *g = &c->fl->f[i];
		if (g->vaddr < vaddr && vaddr < g->vaddr + g->size &&
		    reach_from(c, g->vaddr, vaddr, insn_at) == INSN_INSIDE) {
			*container = g->name;
			return true;
		}
	}
	return false;
}

/* The bytes of the function at vaddr: its symbol's size (at least 64, at
 * most 64 KiB). Returns how many were read (0: none), in *buf (malloc'd). */
static size_t read_function_code(struct safety *c, uint64_t vaddr, uint64_t size, uint8_t **buf)
{
	uint64_t off;
	*buf = NULL;
	if (vaddr_to_offset(c->elf, vaddr, &off))
		return 0;
	size_t len = size < 64 ? 64 : size > 65536 ? 65536 : (size_t)size;
	*buf = xmalloc(len);
	ssize_t got = pread(c->fd, *buf, len, (off_t)off);
	if (got <= 0) {
		free(*buf);
		*buf = NULL;
		return 0;
	}
	return (size_t)got;
}

/* Why a span probe on f would break the target, with the details in why
 * (for a glob's note, short) or err (for a refused name). *site is where
 * its entry probe goes: f's address, or past first instructions the
 * kernel cannot step (insn_entry_site; then `moved` says so, else ""). */
static enum unsafe check_safe(struct safety *c, const struct elf_function *f, uint64_t *site,
			      char *moved, size_t movedlen, char *why, size_t size)
{
	uint64_t insn_at = 0;
	const char *container = NULL;
	*site = f->vaddr;
	moved[0] = 0;
	if (c->entry && f->vaddr == c->entry) {
		snprintf(why, size, "the entry point, never returns");
		return UNSAFE_ENTRY;
	}
	if (noreturn_in_dwarf(c, f->vaddr)) {
		snprintf(why, size, "never returns");
		return UNSAFE_NORETURN;
	}
	if (inside_instruction(c, f->vaddr, &insn_at, &container)) {
		snprintf(why, size, "inside the instruction at 0x%llx%s%s",
			 (unsigned long long)insn_at, container ? " of " : "",
			 container ? container : "");
		return UNSAFE_INSIDE;
	}
	uint8_t *code;
	size_t len = read_function_code(c, f->vaddr, f->size, &code);
	if (len == 0)
		return SAFE;
	int r = insn_entry_site(code, len, f->vaddr, site, moved, movedlen);
	free(code);
	if (r < 0) {
		snprintf(why, size, "%s", moved);
		moved[0] = 0;
		return UNSAFE_INSN;
	}
	return SAFE;
}

static void explain_unsafe(enum unsafe u, const char *func, const char *binary, const char *why,
			   char *err, size_t errlen)
{
	switch (u) {
	case UNSAFE_ENTRY:
		errbuf_set(err, errlen,
			   "cannot trace %s: it is the entry point of %s, which is jumped to, not "
			   "called, and never returns (a return probe there overwrites the process's "
			   "arguments); trace main instead",
			   func, binary);
		break;
	case UNSAFE_NORETURN:
		errbuf_set(err, errlen,
			   "cannot trace %s: it never returns (noreturn in the debug info of %s), so "
			   "its calls have no end to time; trace its callers instead",
			   func, binary);
		break;
	case UNSAFE_INSN:
		errbuf_set(err, errlen, "cannot trace %s in %s: %s", func, binary, why);
		break;
	default:
		errbuf_set(err, errlen,
			   "cannot trace %s: its address in %s is %s, and a breakpoint there would "
			   "change that instruction; its symbol does not start a function",
			   func, binary, why);
		break;
	}
}

/* Adds "name (why)" to a glob's list of functions it leaves out. */
static void note_skip(char *list, size_t size, size_t *len, const char *name, const char *why)
{
	if (*len >= size)
		return;
	int w = snprintf(list + *len, size - *len, "%s%s (%s)", *len ? ", " : "", name, why);
	*len = w < 0 ? size : *len + (size_t)w;
}

/* --- IFUNC symbols: probe the implementation the target uses ---------------- */

/* The function an IFUNC symbol resolved to, as a function of the list (the
 * symbol at the implementation's address: __strlen_avx2), asking the
 * target's processes that map the file, else sonde's own process (the
 * same file, CPU and environment make the same choice as a command sonde
 * starts will). Fills *impl (name: malloc'd) and *asked (the PID, or 0
 * for sonde itself); -1 when no process knows. */
static int resolve_ifunc(Elf *elf, const struct stat *st, const struct function_list *fl,
			 const struct elf_function *f, const struct probe_scope *sc,
			 struct elf_function *impl, pid_t *asked)
{
	uint64_t vaddr = 0;
	int r = -1;
	for (int i = 0; i < sc->npids && r < 0; i++)
		if ((r = ifunc_resolve(elf, st->st_dev, st->st_ino, f->name, f->vaddr, sc->pids[i],
				       &vaddr)) == 0)
			*asked = sc->pids[i];
	if (r < 0 && (r = ifunc_resolve(elf, st->st_dev, st->st_ino, f->name, f->vaddr, getpid(),
					&vaddr)) == 0)
		*asked = 0;
	if (r < 0)
		return -1;
	*impl = (struct elf_function){NULL, vaddr, 0, false, NULL, NULL};
	for (size_t i = 0; i < fl->n && !impl->name; i++)
		if (fl->f[i].vaddr == vaddr && !fl->f[i].ifunc) {
			impl->name = xstrdup(fl->f[i].name);
			impl->size = fl->f[i].size;
		}
	if (!impl->name)
		impl->name = xasprintf("0x%llx", (unsigned long long)vaddr);
	return 0;
}

/* --- line probes: [BINARY:]FILE:LINE ---------------------------------------- */

int probes_split_line(const char *spec, char **binary, char **file, unsigned *line)
{
	*binary = *file = NULL;
	const char *c = strrchr(spec, ':');
	if (!c || c == spec || !c[1] || strspn(c + 1, "0123456789") != strlen(c + 1) ||
	    strlen(c + 1) > 9)
		return 0;
	*line = (unsigned)strtoul(c + 1, NULL, 10);
	char *prefix = strndup(spec, (size_t)(c - spec));
	int colon = probes_split(prefix);
	*file = xstrdup(colon >= 0 ? prefix + colon + 1 : prefix);
	if (colon > 0)
		*binary = strndup(prefix, (size_t)colon);
	free(prefix);
	return 1;
}

/* What the safety checks read for a binary's functions fl: the binary
 * (elf, fd) and its separate debug file, if any. */
static struct safety safety_of(Elf *elf, int fd, const struct debug_file *dbg,
			       const struct function_list *fl)
{
	GElf_Ehdr eh;
	return (struct safety){.elf = elf,
			       .fd = fd,
			       .dwarf_fd = dbg->fd >= 0 ? dbg->fd : fd,
			       .debug_elf = dbg->elf,
			       .fl = fl,
			       .entry = gelf_getehdr(elf, &eh) ? eh.e_entry : 0};
}

/* The DWARF of a binary: its own, or its separate debug file's. */
static Dwarf *open_dwarf(int fd, const struct debug_file *dbg)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw && dbg->fd >= 0)
		dw = dwarf_begin(dbg->fd, DWARF_C_READ);
	return dw;
}

/* Why the kernel cannot probe the code at vaddr, in why; false when it can. */
static bool line_site_unsafe(struct safety *c, uint64_t vaddr, uint64_t off, char *why,
			     size_t size)
{
	uint64_t insn_at = 0;
	const char *container = NULL;
	if (inside_instruction(c, vaddr, &insn_at, &container)) {
		snprintf(why, size, "0x%llx is inside the instruction at 0x%llx%s%s",
			 (unsigned long long)vaddr, (unsigned long long)insn_at,
			 container ? " of " : "", container ? container : "");
		return true;
	}
	uint8_t code[16];
	ssize_t got = pread(c->fd, code, sizeof(code), (off_t)off);
	char what[128];
	if (got > 0 && insn_unprobeable(code, (size_t)got, what, sizeof(what))) {
		snprintf(why, size, "0x%llx is %s", (unsigned long long)vaddr, what);
		return true;
	}
	return false;
}

/* Every probe address of FILE:LINE (lines.h), all checked safe, or -1 with
 * err: one unsafe address refuses the line, since its hits would be
 * missed. */
static int resolve_line(struct safety *c, const struct debug_file *dbg, const char *binary,
			const struct stat *st, const char *spec, const char *file, unsigned line,
			struct probe_target **out, char *err, size_t errlen)
{
	const char *shown = display_path(binary);
	Dwarf *dw = open_dwarf(c->fd, dbg);
	struct debug_file own = {.fd = -1}; /* a debug file a binary with .symtab has too */
	if (!dw && dbg->fd < 0 && find_debug_file(c->elf, binary, &own))
		dw = open_dwarf(own.fd, &own);
	if (!dw) {
		if (own.elf) {
			elf_end(own.elf);
			close(own.fd);
		}
		errbuf_set(err, errlen,
			   "%s has no debug info (DWARF) to find %s:%u in: install its debug symbols "
			   "(the -dbgsym package of the package that ships it: dpkg -S %s names it; "
			   "libc6-dbg for libc), or fetch them with debuginfod-find debuginfo %s, or "
			   "build it with -g",
			   shown, file, line, shown, shown);
		return -1;
	}
	struct line_site *sites;
	int n = lines_resolve(dw, shown, file, line, &sites, err, errlen);
	struct probe_target *t = n > 0 ? xcalloc((size_t)n, sizeof(*t)) : NULL;
	int k = 0;
	for (int i = 0; i < n; i++) {
		uint64_t off;
		char why[256];
		if (vaddr_to_offset(c->elf, sites[i].vaddr, &off)) {
			errbuf_set(err, errlen, "cannot trace %s: its address 0x%llx is in no executable "
				   "segment of %s", spec, (unsigned long long)sites[i].vaddr, shown);
			k = -1;
			break;
		}
		if (line_site_unsafe(c, sites[i].vaddr, off, why, sizeof(why))) {
			errbuf_set(err, errlen, "cannot trace %s in %s%s: %s; trace a line next to it",
				   spec, sites[i].function ? sites[i].function : shown,
				   sites[i].inlined ? " (inlined)" : "", why);
			k = -1;
			break;
		}
		t[k++] = (struct probe_target){
			.function = xstrdup(sites[i].function ? sites[i].function : "?"),
			.binary = xstrdup(binary),
			.offset = off,
			.dev = (uint64_t)st->st_dev,
			.ino = (uint64_t)st->st_ino,
			.line = line,
			.location = xasprintf("%s:%u", file, line),
			.inlined = sites[i].inlined != 0,
		};
	}
	free(sites);
	dwarf_end(dw);
	if (own.elf) {
		elf_end(own.elf);
		close(own.fd);
	}
	if (k < 0) {
		probes_free(t, n);
		return -1;
	}
	*out = t;
	return n;
}

int probes_resolve(const char *spec, const struct probe_scope *scope,
		   struct probe_target **out, char *note, size_t notelen, char *err, size_t errlen)
{
	*out = NULL;
	if (note && notelen)
		note[0] = 0;
	char *line_file = NULL, *bin_part = NULL;
	unsigned line_no = 0;
	int colon = -1;
	const char *func = spec;
	if (!probes_split_line(spec, &bin_part, &line_file, &line_no)) {
		colon = probes_split(spec);
		bin_part = colon > 0 ? strndup(spec, (size_t)colon) : NULL;
		func = colon > 0 ? spec + colon + 1 : spec;
	} else if (!*line_file || line_no == 0) {
		errbuf_set(err, errlen, "bad probe '%s': expected [BINARY:]FILE:LINE with a line "
			   "number from 1", spec);
		free(bin_part);
		free(line_file);
		return -1;
	}
	if (!*func) {
		errbuf_set(err, errlen, "bad probe '%s': expected FUNC, BINARY:FUNC or LIB:FUNC", spec);
		free(bin_part);
		return -1;
	}
	char *binary = NULL;
	if (bin_part)
		binary = find_binary(bin_part, scope, err, errlen);
	else if (scope->executable)
		binary = xstrdup(scope->executable);
	else
		errbuf_set(err, errlen, "probe '%s' names no binary and there is no target "
			   "executable: use BINARY:FUNC", spec);
	free(bin_part);
	if (!binary) {
		free(line_file);
		return -1;
	}

	elf_version(EV_CURRENT);
	int fd = open(binary, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	struct stat st;
	if (!elf || elf_kind(elf) != ELF_K_ELF || fstat(fd, &st)) {
		errbuf_set(err, errlen, "%s is not an ELF binary sonde can read%s%s",
			   display_path(binary), fd < 0 ? ": " : "", fd < 0 ? strerror(errno) : "");
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		free(binary);
		free(line_file);
		return -1;
	}
	const char *shown = display_path(binary);
	struct function_list fl = {0};
	read_symbols(elf, &fl, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM);
	/* Stripped (only .dynsym: the exported functions): the static ones are
	 * in the debug file, if one is installed. */
	struct debug_file dbg = {.fd = -1};
	if (!fl.had_symtab && find_debug_file(elf, binary, &dbg))
		read_symbols(dbg.elf, &fl, SYMBOLS_ELF_SYMTAB);
	int n = 0, nunsafe = 0, nskipped = 0;
	bool refused = false;
	struct probe_target *t = NULL;
	size_t cap = 0;
	struct safety safety = safety_of(elf, fd, &dbg, &fl);
	char skipped[512] = "";
	size_t skipped_len = 0;
	uint64_t *unsafe_offs = NULL; /* aliases of a refused function are refused too */
	size_t unsafe_cap = 0;
	if (line_file) {
		n = resolve_line(&safety, &dbg, binary, &st, spec, line_file, line_no, &t, err, errlen);
		free(line_file);
		line_file = NULL;
		refused = n < 0;
		goto resolved;
	}
	/* A C++ or Rust function by its demangled name, when no linkage name
	 * is the spec (a glob may match either). */
	bool by_linkage = false;
	for (size_t i = 0; i < fl.n && !by_linkage && !is_glob(func); i++)
		by_linkage = strcmp(fl.f[i].name, func) == 0;
	if (!by_linkage)
		function_list_demangle(&fl);
	for (size_t i = 0; i < fl.n; i++) {
		const struct elf_function *f = &fl.f[i];
		if (!function_named(f, func, is_glob(func)))
			continue;
		struct elf_function impl = {0};
		pid_t asked = 0;
		if (f->ifunc && resolve_ifunc(elf, &st, &fl, f, scope, &impl, &asked)) {
			if (!is_glob(func)) {
				errbuf_set(err, errlen,
					   "%s in %s is an IFUNC (its implementation is chosen when the "
					   "library loads) and no process of the target, nor sonde, has it "
					   "loaded: start the target first (-p), or trace an implementation",
					   f->name, shown);
				refused = true;
				break;
			}
			note_skip(skipped, sizeof(skipped), &skipped_len, f->name,
				  "an IFUNC no process has loaded");
			nskipped++;
			continue;
		}
		const struct elf_function *code = impl.name ? &impl : f; /* where calls go */
		uint64_t off;
		if (vaddr_to_offset(elf, code->vaddr, &off)) {
			free(impl.name);
			continue;
		}
		bool seen = false; /* aliases and .symtab/.dynsym duplicates */
		for (int k = 0; k < n && !seen; k++)
			seen = t[k].offset - t[k].entry_skip == off;
		for (int k = 0; k < nunsafe && !seen; k++)
			seen = unsafe_offs[k] == off;
		if (seen) {
			free(impl.name);
			continue;
		}
		char why[400], moved[400];
		uint64_t site;
		enum unsafe u = check_safe(&safety, code, &site, moved, sizeof(moved), why,
					   sizeof(why));
		if (u != SAFE && !is_glob(func)) {
			explain_unsafe(u, function_shown(f), shown, why, err, errlen);
			free(impl.name);
			refused = true;
			break;
		}
		if (u != SAFE) { /* a glob leaves it out, and says so */
			grow_array((void **)&unsafe_offs, &unsafe_cap, (size_t)nunsafe + 1,
				   sizeof(*unsafe_offs));
			unsafe_offs[nunsafe++] = off;
			nskipped++;
			note_skip(skipped, sizeof(skipped), &skipped_len, function_shown(f), why);
			free(impl.name);
			continue;
		}
		uint64_t site_off = off + (site - code->vaddr);
		bool dup = false; /* an alias's probe moved to the same place */
		for (int k = 0; k < n && !dup; k++)
			dup = t[k].offset == site_off;
		if (dup) {
			free(impl.name);
			continue;
		}
		grow_array((void **)&t, &cap, (size_t)n + 1, sizeof(*t));
		t[n++] = (struct probe_target){.function = xstrdup(function_shown(f)),
					       .binary = xstrdup(binary),
					       .offset = site_off,
					       .entry_skip = site - code->vaddr,
					       .moved = moved[0] ? xstrdup(moved) : NULL,
					       .size = code->size,
					       .dev = (uint64_t)st.st_dev,
					       .ino = (uint64_t)st.st_ino,
					       .ifunc_impl = impl.name,
					       .ifunc_asked = asked};
	}
resolved:
	free(unsafe_offs);
	if (safety.dw)
		dwarf_end(safety.dw);
	symbols_fdes_free(safety.fdes);
	if (nskipped && note && notelen)
		snprintf(note, notelen,
			 "not traced: %d function%s '%s' names that a probe would break or cannot "
			 "reach: %s",
			 nskipped, nskipped == 1 ? "" : "s", func, skipped);
	if (refused) {
		probes_free(t, n);
		t = NULL;
		n = -1;
	} else if (n == 0 && nskipped) {
		errbuf_set(err, errlen, "no function in %s that '%s' names can be traced: %s", shown,
			   func, skipped);
		n = -1;
	} else if (n == 0) {
		char near[256];
		nearest_names(&fl, func, near, sizeof(near));
		if (is_glob(func))
			errbuf_set(err, errlen, "no function in %s matches '%s'%s", shown, func,
				   fl.had_symtab ? "" : " (it has no debug info: only its exported "
						        "functions were searched)");
		else if (describe_inlined_only(dbg.fd >= 0 ? dbg.fd : fd, func, shown, err, errlen))
			;
		else if (!fl.had_symtab)
			errbuf_set(err, errlen,
				   "no symbol %s: %s has no debug info; install its -dbgsym package or "
				   "build with -g",
				   func, shown);
		else
			errbuf_set(err, errlen, "no function '%s' in %s%s%s", func, shown,
				   *near ? "; nearest: " : "", near);
		n = -1;
	}
	list_free(&fl);
	if (dbg.elf) {
		elf_end(dbg.elf);
		close(dbg.fd);
	}
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
		free(t[i].ifunc_impl);
		free(t[i].location);
		free(t[i].moved);
	}
	free(t);
}

/* --- listings: where a line probe can go in a function ---------------------- */

/* Why a line probe on the row's line would be refused (the first of its
 * addresses the kernel cannot step, as resolve_line refuses it), malloc'd;
 * NULL when it would not. */
static char *line_refused(struct safety *c, Dwarf *dw, const char *binary,
			  const struct line_row *row)
{
	struct line_site *sites;
	char ignored[256];
	int n = lines_resolve(dw, binary, row->file, row->line, &sites, ignored, sizeof(ignored));
	char *why = NULL;
	for (int i = 0; i < n && !why; i++) {
		uint64_t off;
		char w[256];
		if (!vaddr_to_offset(c->elf, sites[i].vaddr, &off) &&
		    line_site_unsafe(c, sites[i].vaddr, off, w, sizeof(w)))
			why = xstrdup(w);
	}
	if (n > 0)
		free(sites);
	return why;
}

int probes_function_lines(const char *binary, const char *func, struct probes_lines *out,
			  char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	out->fd = out->debug_fd = -1;
	char *path = strchr(binary, '/') ? (access(binary, R_OK) == 0 ? xstrdup(binary) : NULL)
					 : probes_which(binary);
	if (!path) {
		errbuf_set(err, errlen, "cannot find %s: give its path, or a program in PATH", binary);
		return -1;
	}
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		errbuf_set(err, errlen, "%s is not an ELF binary sonde can read", path);
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
		free(path);
		return -1;
	}
	struct function_list fl = {0};
	read_symbols(elf, &fl, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM);
	struct debug_file dbg = {.fd = -1};
	bool have_dbg = find_debug_file(elf, path, &dbg);
	if (!fl.had_symtab && have_dbg)
		read_symbols(dbg.elf, &fl, SYMBOLS_ELF_SYMTAB);
	const struct elf_function *f = NULL;
	for (size_t i = 0; i < fl.n && !f; i++)
		if (strcmp(fl.f[i].name, func) == 0 && !fl.f[i].ifunc)
			f = &fl.f[i];
	if (!f) {
		function_list_demangle(&fl);
		for (size_t i = 0; i < fl.n && !f; i++)
			if (function_named(&fl.f[i], func, false) && !fl.f[i].ifunc)
				f = &fl.f[i];
	}
	Dwarf *dw = open_dwarf(fd, &dbg);
	int n = -1;
	if (!f) {
		char near[256];
		nearest_names(&fl, func, near, sizeof(near));
		errbuf_set(err, errlen, "no function '%s' in %s%s%s", func, path,
			   *near ? "; nearest: " : "", near);
	} else if (!dw) {
		errbuf_set(err, errlen,
			   "%s has no debug info (DWARF) to list %s's lines: install its debug "
			   "symbols (the -dbgsym package of the package that ships it: dpkg -S %s "
			   "names it), or fetch them with debuginfod-find debuginfo %s, or build it "
			   "with -g",
			   path, func, path, path);
	} else {
		out->lo = f->vaddr;
		out->hi = f->vaddr + (f->size ? f->size : 1);
		n = lines_in_range(dw, out->lo, out->hi, &out->rows, err, errlen);
		/* A line whose addresses (in any instance) the kernel cannot step
		 * is one a line probe refuses: say so where it is listed. */
		struct safety safety = safety_of(elf, fd, &dbg, &fl);
		for (int i = 0; i < n; i++)
			out->rows[i].refused = line_refused(&safety, dw, path, &out->rows[i]);
		symbols_fdes_free(safety.fdes);
	}
	list_free(&fl);
	elf_end(elf);
	if (dbg.elf)
		elf_end(dbg.elf);
	if (n < 0) {
		if (dw)
			dwarf_end(dw);
		close(fd);
		if (dbg.fd >= 0)
			close(dbg.fd);
		free(path);
		return -1;
	}
	out->n = n;
	out->binary = path;
	out->dwarf = dw;
	out->fd = fd;
	out->debug_fd = dbg.fd;
	return n;
}

void probes_lines_free(struct probes_lines *l)
{
	for (int i = 0; i < l->n; i++)
		free(l->rows[i].refused);
	free(l->rows);
	if (l->dwarf)
		dwarf_end(l->dwarf);
	if (l->fd >= 0)
		close(l->fd);
	if (l->debug_fd >= 0)
		close(l->debug_fd);
	free(l->binary);
	memset(l, 0, sizeof(*l));
	l->fd = l->debug_fd = -1;
}

int probes_debug_file(Elf *elf, const char *binary, Elf **debug_elf)
{
	struct debug_file d = {.fd = -1};
	if (!find_debug_file(elf, binary, &d))
		return -1;
	*debug_elf = d.elf;
	return d.fd;
}
