/* fnbinary — a binary opened with its functions (fnbinary.h). */
#define _GNU_SOURCE
#include "fnbinary.h"

#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfsyms.h"
#include "errbuf.h"
#include "probebinary.h"
#include "probes.h"
#include "util.h"

int fn_binary_open(const char *binary, struct fn_binary *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	b->fd = b->dbg.fd = -1;
	char *path = strchr(binary, '/') ? (access(binary, R_OK) == 0 ? xstrdup(binary) : NULL)
					  : probes_which(binary);
	if (!path)
		return errbuf_set(err, errlen, "cannot find %s: give its path, or a program in PATH",
				  binary);
	b->elf = probes_open_elf(path, &b->fd, err, errlen);
	if (!b->elf) {
		free(path);
		b->fd = -1;
		return -1;
	}
	b->path = path;
	read_symbols(b->elf, &b->fl, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM);
	bool have_dbg = find_debug_file(b->elf, path, &b->dbg);
	if (!have_dbg)
		b->dbg = (struct debug_file){.fd = -1};
	if (!b->fl.had_symtab && have_dbg)
		read_symbols(b->dbg.elf, &b->fl, SYMBOLS_ELF_SYMTAB);
	return 0;
}

void fn_binary_release(struct fn_binary *b)
{
	function_list_free(&b->fl);
	if (b->elf)
		elf_end(b->elf);
	if (b->dbg.elf)
		elf_end(b->dbg.elf);
	b->elf = b->dbg.elf = NULL;
}

void fn_binary_close(struct fn_binary *b)
{
	fn_binary_release(b);
	if (b->fd >= 0)
		close(b->fd);
	if (b->dbg.fd >= 0)
		close(b->dbg.fd);
	free(b->path);
	memset(b, 0, sizeof(*b));
	b->fd = b->dbg.fd = -1;
}
