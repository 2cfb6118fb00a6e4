/* probedebug — a binary's separate debug file and its DWARF
 * (probedebug.h), and probes_debug_file (probes.h). */
#define _GNU_SOURCE
#include "probedebug.h"

#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probebinary.h"
#include "probes.h"
#include "util.h"


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
bool find_debug_file(Elf *elf, const char *binary, struct debug_file *d)
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

/* The DWARF of a binary: its own, or its separate debug file's. */
Dwarf *open_dwarf(int fd, const struct debug_file *dbg)
{
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw && dbg->fd >= 0)
		dw = dwarf_begin(dbg->fd, DWARF_C_READ);
	return dw;
}

int probes_debug_file(Elf *elf, const char *binary, Elf **debug_elf)
{
	struct debug_file d = {.fd = -1};
	if (!find_debug_file(elf, binary, &d))
		return -1;
	*debug_elf = d.elf;
	return d.fd;
}
