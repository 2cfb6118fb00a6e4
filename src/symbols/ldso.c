#define _GNU_SOURCE
#include "ldso.h"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "util.h"

#define LD_SO_CACHE "/etc/ld.so.cache"
#define MAX_OBJECTS 1024 /* a program loading more libraries is not modelled further */

bool ldso_name_matches(const char *base, const char *want)
{
	size_t n = strlen(want);
	if (strcmp(base, want) == 0)
		return true;
	return n && strncmp(base, want, n) == 0 && (base[n] == '.' || base[n] == '-') &&
	       strstr(base + n, ".so") != NULL;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* --- ELF identity: the loader skips files of another class or machine -- */

struct elf_ident {
	int cls, machine;
};

static bool read_ident(const char *path, struct elf_ident *id)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	unsigned char h[20];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, h, sizeof(h));
	close(fd);
	if (n != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0)
		return false;
	id->cls = h[EI_CLASS];
	id->machine = h[EI_DATA] == ELFDATA2MSB ? (h[18] << 8 | h[19]) : (h[19] << 8 | h[18]);
	return true;
}

/* A loadable candidate: an ELF file of the wanted class and machine (0 = any). */
static bool compatible(const char *path, int cls, int machine)
{
	struct elf_ident id;
	if (!read_ident(path, &id))
		return false;
	return (!cls || id.cls == cls) && (!machine || id.machine == machine);
}

/* --- /etc/ld.so.cache ------------------------------------------------------ */

#define CACHEMAGIC_OLD "ld.so-1.7.0"
#define CACHEMAGIC_NEW "glibc-ld.so.cache1.1"
#define CACHE_HWCAP_EXTENSION (1ull << 62)

struct cache_entry_old {
	int32_t flags;
	uint32_t key, value;
};

struct cache_entry_new {
	int32_t flags;
	uint32_t key, value;
	uint32_t osversion_unused;
	uint64_t hwcap;
};

struct cache_header_new {
	char magic[sizeof(CACHEMAGIC_NEW) - 1];
	uint32_t nlibs;
	uint32_t len_strings;
	uint8_t flags;
	uint8_t padding[3];
	uint32_t extension_offset;
	uint32_t unused[3];
};

static char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		grow_array((void **)&buf, &cap, len + 65536, 1);
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (n == 0)
			break;
	}
	fclose(f);
	buf[len] = 0;
	*size = len;
	return buf;
}

/* The string at `off` of a cache whose strings start at `base`, or NULL. */
static const char *cache_str(const char *buf, size_t size, size_t base, uint32_t off)
{
	size_t at = base + off;
	if (at >= size || !memchr(buf + at, 0, size - at))
		return NULL;
	return buf + at;
}

char *ldso_cache_lookup(const char *cache_path, const char *name, bool prefix, int elf_class,
			int machine)
{
	size_t size;
	char *buf = read_file(cache_path, &size);
	if (!buf)
		return NULL;
	char *found = NULL;
	size_t hdr = 0; /* where the new-format table starts */
	bool have_new = false;
	if (size >= sizeof(struct cache_header_new) &&
	    memcmp(buf, CACHEMAGIC_NEW, sizeof(CACHEMAGIC_NEW) - 1) == 0) {
		have_new = true;
	} else if (size >= sizeof(CACHEMAGIC_OLD) - 1 + 4 &&
		   memcmp(buf, CACHEMAGIC_OLD, sizeof(CACHEMAGIC_OLD) - 1) == 0) {
		uint32_t nold;
		memcpy(&nold, buf + sizeof(CACHEMAGIC_OLD) - 1, 4);
		size_t entries = sizeof(CACHEMAGIC_OLD) - 1 + 4;
		size_t end = entries + (size_t)nold * sizeof(struct cache_entry_old);
		size_t aligned = (end + 7) & ~(size_t)7;
		if (aligned + sizeof(struct cache_header_new) <= size &&
		    memcmp(buf + aligned, CACHEMAGIC_NEW, sizeof(CACHEMAGIC_NEW) - 1) == 0) {
			have_new = true;
			hdr = aligned;
		} else if (end <= size) {
			/* Old format only: strings follow the entries. */
			for (uint32_t i = 0; i < nold && !found; i++) {
				struct cache_entry_old e;
				memcpy(&e, buf + entries + i * sizeof(e), sizeof(e));
				const char *k = cache_str(buf, size, end, e.key);
				const char *v = cache_str(buf, size, end, e.value);
				if (!k || !v || !(prefix ? ldso_name_matches(k, name) : strcmp(k, name) == 0))
					continue;
				if (compatible(v, elf_class, machine))
					found = xstrdup(v);
			}
		}
	}
	if (have_new) {
		struct cache_header_new h;
		memcpy(&h, buf + hdr, sizeof(h));
		size_t entries = hdr + sizeof(h);
		if (entries + (size_t)h.nlibs * sizeof(struct cache_entry_new) > size)
			h.nlibs = 0; /* truncated: use nothing */
		for (uint32_t i = 0; i < h.nlibs && !found; i++) {
			struct cache_entry_new e;
			memcpy(&e, buf + entries + i * sizeof(e), sizeof(e));
			if (e.hwcap & CACHE_HWCAP_EXTENSION)
				continue; /* a glibc-hwcaps subdirectory: not modelled */
			/* New-format string offsets count from the table's header. */
			const char *k = cache_str(buf, size, hdr, e.key);
			const char *v = cache_str(buf, size, hdr, e.value);
			if (!k || !v || !(prefix ? ldso_name_matches(k, name) : strcmp(k, name) == 0))
				continue;
			if (compatible(v, elf_class, machine))
				found = xstrdup(v);
		}
	}
	free(buf);
	return found;
}

/* --- the objects the loader loads ------------------------------------------ */

struct object {
	char *path;   /* as found */
	char *name;   /* the name it was needed by */
	char *soname; /* DT_SONAME, or NULL */
	char **needed;
	size_t nneeded, needed_cap;
	char *rpath, *runpath;
	char *interp; /* PT_INTERP (the executable's dynamic loader), or NULL */
	bool nodeflib;
	int loader; /* the object that needed it; -1 for the executable */
	int cls, machine;
	char how[256]; /* where it was found */
	bool preload;  /* LD_PRELOAD or /etc/ld.so.preload */
};

struct search {
	const struct ldso_env *env;
	struct object *objs;
	size_t nobjs, cap;
	int cls, machine; /* of the executable (0: unknown) */
	char how[256];
};

static void object_free(struct object *o)
{
	free(o->path);
	free(o->name);
	free(o->soname);
	for (size_t i = 0; i < o->nneeded; i++)
		free(o->needed[i]);
	free(o->needed);
	free(o->rpath);
	free(o->runpath);
	free(o->interp);
}

/* Reads the dynamic section: needed names, RPATH, RUNPATH, SONAME, flags. */
static int read_object(const char *path, struct object *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -1;
	}
	o->cls = eh.e_ident[EI_CLASS];
	o->machine = eh.e_machine;
	size_t nph = 0;
	if (elf_getphdrnum(elf, &nph) == 0) {
		for (size_t i = 0; i < nph && !o->interp; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_INTERP)
				continue;
			size_t size;
			const char *raw = elf_rawfile(elf, &size);
			if (raw && ph.p_offset < size && ph.p_filesz <= size - ph.p_offset &&
			    ph.p_filesz > 1 && memchr(raw + ph.p_offset, 0, ph.p_filesz))
				o->interp = xstrdup(raw + ph.p_offset);
		}
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || sh.sh_entsize == 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn d;
			if (!gelf_getdyn(data, (int)i, &d) || d.d_tag == DT_NULL)
				break;
			const char *s = NULL;
			if (d.d_tag == DT_NEEDED || d.d_tag == DT_RPATH || d.d_tag == DT_RUNPATH ||
			    d.d_tag == DT_SONAME)
				s = elf_strptr(elf, sh.sh_link, d.d_un.d_val);
			switch (d.d_tag) {
			case DT_NEEDED:
				if (s) {
					grow_array((void **)&o->needed, &o->needed_cap, o->nneeded + 1,
						   sizeof(*o->needed));
					o->needed[o->nneeded++] = xstrdup(s);
				}
				break;
			case DT_RPATH:
				if (s && !o->rpath)
					o->rpath = xstrdup(s);
				break;
			case DT_RUNPATH:
				if (s && !o->runpath)
					o->runpath = xstrdup(s);
				break;
			case DT_SONAME:
				if (s && !o->soname)
					o->soname = xstrdup(s);
				break;
			case DT_FLAGS_1:
				o->nodeflib = (d.d_un.d_val & DF_1_NODEFLIB) != 0;
				break;
			}
		}
		break;
	}
	/* When both are given the loader ignores DT_RPATH. */
	if (o->runpath) {
		free(o->rpath);
		o->rpath = NULL;
	}
	elf_end(elf);
	close(fd);
	return 0;
}

/* The machine's multiarch directory name (x86_64-linux-gnu, ...), or NULL. */
static const char *multiarch(int machine)
{
	switch (machine) {
	case EM_X86_64:
		return "x86_64-linux-gnu";
	case EM_AARCH64:
		return "aarch64-linux-gnu";
	case EM_386:
		return "i386-linux-gnu";
	case EM_RISCV:
		return "riscv64-linux-gnu";
	case EM_PPC64:
		return "powerpc64le-linux-gnu";
	case EM_S390:
		return "s390x-linux-gnu";
	}
	return NULL;
}

/* Expands $ORIGIN, $LIB and $PLATFORM (also as ${...}) in one directory. */
static char *expand_dst(const char *dir, const char *origin, int cls, int machine)
{
	char lib[64];
	const char *ma = multiarch(machine);
	struct stat st;
	char madir[80];
	snprintf(madir, sizeof(madir), "/lib/%s", ma ? ma : "");
	if (ma && stat(madir, &st) == 0)
		snprintf(lib, sizeof(lib), "lib/%s", ma);
	else
		snprintf(lib, sizeof(lib), "%s", cls == ELFCLASS64 ? "lib64" : "lib");
	struct utsname u;
	const char *platform = uname(&u) == 0 ? u.machine : "";
	static const struct {
		const char *name;
		int which;
	} dst[] = {{"${ORIGIN}", 0}, {"$ORIGIN", 0}, {"${LIB}", 1},
		   {"$LIB", 1},      {"${PLATFORM}", 2}, {"$PLATFORM", 2}};
	char *out = NULL;
	size_t len = 0, cap = 0;
	for (const char *p = dir; *p;) {
		const char *rep = NULL;
		size_t skip = 1;
		for (size_t i = 0; *p == '$' && i < sizeof(dst) / sizeof(dst[0]); i++) {
			size_t n = strlen(dst[i].name);
			if (strncmp(p, dst[i].name, n) == 0) {
				rep = dst[i].which == 0 ? origin : dst[i].which == 1 ? lib : platform;
				skip = n;
				break;
			}
		}
		size_t add = rep ? strlen(rep) : 1;
		grow_array((void **)&out, &cap, len + add + 1, 1);
		memcpy(out + len, rep ? rep : p, add);
		len += add;
		p += skip;
	}
	grow_array((void **)&out, &cap, len + 1, 1);
	out[len] = 0;
	return out;
}

static char *dir_of(const char *path)
{
	char *d = xstrdup(path);
	char *slash = strrchr(d, '/');
	if (!slash) {
		free(d);
		return xstrdup(".");
	}
	if (slash == d)
		slash[1] = 0;
	else
		*slash = 0;
	return d;
}

/* A file of that name in one directory, or NULL. For a prefix name (no
 * ".so" in it), NAME.so* then NAME-*.so*, in sorted order. */
static char *find_in_dir(const char *dir, const char *name, bool prefix, int cls, int machine)
{
	if (!prefix) {
		char *cand = xasprintf("%s/%s", *dir ? dir : ".", name);
		if (compatible(cand, cls, machine))
			return cand;
		free(cand);
		return NULL;
	}
	static const char *const patterns[] = {"%s/%s.so*", "%s/%s-*.so*"};
	char *found = NULL;
	for (size_t p = 0; p < 2 && !found; p++) {
		char *pattern = xasprintf(patterns[p], *dir ? dir : ".", name);
		glob_t g;
		if (glob(pattern, 0, NULL, &g) == 0)
			for (size_t k = 0; k < g.gl_pathc && !found; k++)
				if (ldso_name_matches(base_of(g.gl_pathv[k]), name) &&
				    compatible(g.gl_pathv[k], cls, machine))
					found = xstrdup(g.gl_pathv[k]);
		globfree(&g);
		free(pattern);
	}
	return found;
}

/* A path list the loader searches: its directories, separated by one of
 * seps (":", also ";" for LD_LIBRARY_PATH), $ORIGIN in them standing for
 * origin (NULL: "."). */
struct path_list {
	const char *list;
	const char *seps;
	const char *origin;
};

/* Searches a path list's directories in order. */
static char *find_in_list(const struct path_list *l, const char *name, bool prefix, int cls,
			  int machine)
{
	const char *list = l->list, *origin = l->origin;
	if (!list || !*list)
		return NULL;
	char *copy = xstrdup(list), *found = NULL;
	char *rest = copy, *dir;
	while (!found && (dir = strsep(&rest, l->seps))) {
		char *d = expand_dst(*dir ? dir : ".", origin ? origin : ".", cls, machine);
		found = find_in_dir(d, name, prefix, cls, machine);
		free(d);
	}
	free(copy);
	return found;
}

static char *find_in_system_dirs(const char *name, bool prefix, int cls, int machine)
{
	const char *ma = multiarch(machine ? machine :
#if defined(__x86_64__)
					   EM_X86_64
#elif defined(__aarch64__)
					   EM_AARCH64
#else
					   0
#endif
	);
	char dirs[6][64];
	int n = 0;
	if (ma) {
		snprintf(dirs[n++], sizeof(dirs[0]), "/lib/%s", ma);
		snprintf(dirs[n++], sizeof(dirs[0]), "/usr/lib/%s", ma);
	}
	if (cls != ELFCLASS32) {
		snprintf(dirs[n++], sizeof(dirs[0]), "/lib64");
		snprintf(dirs[n++], sizeof(dirs[0]), "/usr/lib64");
	}
	snprintf(dirs[n++], sizeof(dirs[0]), "/lib");
	snprintf(dirs[n++], sizeof(dirs[0]), "/usr/lib");
	for (int i = 0; i < n; i++) {
		char *f = find_in_dir(dirs[i], name, prefix, cls, machine);
		if (f)
			return f;
	}
	return NULL;
}

/* Looks `name` up as the loader does for a name needed by object `from`
 * (-1: dlopen without a caller). Sets s->how. */
static char *search_name(struct search *s, int from, const char *name, bool prefix)
{
	int cls = s->cls, machine = s->machine;
	if (strchr(name, '/')) {
		snprintf(s->how, sizeof(s->how), "named by path");
		return compatible(name, cls, machine) ? xstrdup(name) : NULL;
	}
	const struct object *loader = from >= 0 ? &s->objs[from] : NULL;
	char *found = NULL;
	/* DT_RPATH of the needing object and its loaders up to the
	 * executable, unless the needing object has a DT_RUNPATH. */
	if (!loader || !loader->runpath) {
		for (int i = from; i >= 0 && !found; i = s->objs[i].loader) {
			const struct object *o = &s->objs[i];
			if (!o->rpath)
				continue;
			char *origin = dir_of(o->path);
			struct path_list rpath = {.list = o->rpath, .seps = ":", .origin = origin};
			found = find_in_list(&rpath, name, prefix, cls, machine);
			free(origin);
			if (found)
				snprintf(s->how, sizeof(s->how), "through the RPATH of %s", o->path);
		}
	}
	if (!found && s->env && s->env->ld_library_path) {
		struct path_list env = {.list = s->env->ld_library_path, .seps = ":;"};
		found = find_in_list(&env, name, prefix, cls, machine);
		if (found)
			snprintf(s->how, sizeof(s->how), "through LD_LIBRARY_PATH");
	}
	if (!found && loader && loader->runpath) {
		char *origin = dir_of(loader->path);
		struct path_list runpath = {.list = loader->runpath, .seps = ":", .origin = origin};
		found = find_in_list(&runpath, name, prefix, cls, machine);
		free(origin);
		if (found)
			snprintf(s->how, sizeof(s->how), "through the RUNPATH of %s", loader->path);
	}
	const struct object *flags_from = loader ? loader : s->nobjs ? &s->objs[0] : NULL;
	bool nodeflib = flags_from && flags_from->nodeflib;
	if (!found && !nodeflib) {
		found = ldso_cache_lookup(LD_SO_CACHE, name, prefix, cls, machine);
		if (found)
			snprintf(s->how, sizeof(s->how), "through " LD_SO_CACHE);
	}
	if (!found && !nodeflib) {
		found = find_in_system_dirs(name, prefix, cls, machine);
		if (found)
			snprintf(s->how, sizeof(s->how), "in the system library directories");
	}
	return found;
}

/* Is `name` already loaded (by the name it was needed by, its soname or
 * its path)? */
static bool loaded(const struct search *s, const char *name)
{
	for (size_t i = 1; i < s->nobjs; i++) {
		const struct object *o = &s->objs[i];
		if (strcmp(o->name, name) == 0 || strcmp(o->path, name) == 0 ||
		    (o->soname && strcmp(o->soname, name) == 0))
			return true;
	}
	return false;
}

static void add_object(struct search *s, const char *path, const char *name, int loader,
		       const char *how)
{
	struct object o = {0};
	if (read_object(path, &o))
		return; /* the loader would fail here; nothing to follow */
	snprintf(o.how, sizeof(o.how), "%s", how);
	o.path = xstrdup(path);
	o.name = xstrdup(name);
	o.loader = loader;
	grow_array((void **)&s->objs, &s->cap, s->nobjs + 1, sizeof(*s->objs));
	s->objs[s->nobjs++] = o;
}

static bool object_is(const struct object *o, const char *want)
{
	return ldso_name_matches(o->name, want) || ldso_name_matches(base_of(o->path), want) ||
	       (o->soname && ldso_name_matches(o->soname, want));
}

/* Adds the names in a preload list (separated by spaces, tabs, newlines or
 * colons, as ld.so reads LD_PRELOAD and /etc/ld.so.preload). */
static void preload_list(struct search *s, const char *list)
{
	if (!list)
		return;
	char *copy = xstrdup(list), *rest = copy, *name;
	while ((name = strsep(&rest, " \t\n:"))) {
		if (!*name || loaded(s, name))
			continue;
		char *path = search_name(s, 0, name, false);
		size_t before = s->nobjs;
		if (path)
			add_object(s, path, name, 0, s->how);
		if (s->nobjs > before)
			s->objs[before].preload = true;
		free(path);
	}
	free(copy);
}

/* Reads the executable and finds every object the loader loads for it,
 * in load order (preloads first, then breadth-first, as
 * _dl_map_object_deps loads them) into s->objs (objs[0]: the executable).
 * Nothing when the executable cannot be read. */
static void load_all(struct search *s, const char *executable)
{
	struct object exe = {0};
	if (read_object(executable, &exe) != 0)
		return;
	exe.path = realpath(executable, NULL);
	if (!exe.path)
		exe.path = xstrdup(executable);
	exe.name = xstrdup(executable);
	exe.loader = -1;
	s->cls = exe.cls;
	s->machine = exe.machine;
	grow_array((void **)&s->objs, &s->cap, 1, sizeof(*s->objs));
	s->objs[s->nobjs++] = exe;
	if (s->env)
		preload_list(s, s->env->ld_preload);
	size_t size;
	char *preload = read_file("/etc/ld.so.preload", &size);
	preload_list(s, preload);
	free(preload);
	for (size_t i = 0; i < s->nobjs && s->nobjs < MAX_OBJECTS; i++) {
		for (size_t k = 0; k < s->objs[i].nneeded; k++) {
			const char *name = s->objs[i].needed[k];
			if (loaded(s, name))
				continue;
			char *path = search_name(s, (int)i, name, false);
			if (path)
				add_object(s, path, name, (int)i, s->how);
			free(path);
		}
	}
}

static void search_free(struct search *s)
{
	for (size_t i = 0; i < s->nobjs; i++)
		object_free(&s->objs[i]);
	free(s->objs);
}

char *ldso_find(const char *executable, const char *want, const struct ldso_env *env,
		char *how, size_t howlen)
{
	struct search s = {.env = env};
	bool prefix = strstr(want, ".so") == NULL && !strchr(want, '/');
	char *found = NULL;
	if (how && howlen)
		how[0] = 0;
	if (executable)
		load_all(&s, executable);
	/* The first match in load order (preloads first). */
	for (size_t i = 1; i < s.nobjs && !found; i++) {
		const struct object *o = &s.objs[i];
		if (!object_is(o, want))
			continue;
		found = xstrdup(o->path);
		if (how && o->preload)
			snprintf(how, howlen, "preloaded, found %s", o->how);
		else if (how)
			snprintf(how, howlen, "needed by %s, found %s", s.objs[o->loader].path,
				 o->how);
	}
	if (!found) {
		/* What dlopen(want) from the executable would find. */
		found = search_name(&s, s.nobjs ? 0 : -1, want, prefix);
		if (found && how)
			snprintf(how, howlen, "not needed by the program; found %s", s.how);
	}
	search_free(&s);
	return found;
}

int ldso_each_object(const char *executable, const struct ldso_env *env,
		     int (*fn)(const char *path, void *arg), void *arg)
{
	struct search s = {.env = env};
	load_all(&s, executable);
	if (!s.nobjs)
		return -1;
	int r = 0;
	for (size_t i = 0; i < s.nobjs && r == 0; i++)
		r = fn(s.objs[i].path, arg);
	if (r == 0 && s.objs[0].interp)
		r = fn(s.objs[0].interp, arg);
	search_free(&s);
	return r;
}
