#include "pyruntime.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarfdie.h"
#include "elfsyms.h"
#include "errbuf.h"
#include "ldso.h"
#include "probebinary.h"
#include "util.h"

/* ---- the table: each version's facts -------------------------------------
 * Read from the DWARF of pyenv's builds of 3.10.13, 3.11.7, 3.12.1 and
 * 3.13.0 (x86-64, release builds): the offsets are those of CPython's
 * Include/internal/pycore_{runtime,interp,frame}.h, cpython/pystate.h,
 * cpython/code.h, cpython/unicodeobject.h and cpython/bytesobject.h of
 * those versions. Within a minor version they do not move. */
#define N PY_NO_FIELD
static const struct py_layout table[] = {
	{.major = 3, .minor = 10, .source = PY_FROM_TABLE,
	 .runtime_interpreters_head = 32, .interp_threads_head = 8, .tstate_next = 8,
	 .tstate_thread_id = 176, .tstate_native_thread_id = N,
	 .tstate_frame = 24, .cframe_current_frame = N,
	 .frame_previous = 24, .frame_code = 32, .frame_instr = 96, .instr_kind = PY_INSTR_INDEX,
	 .frame_is_entry = N, .frame_owner = N,
	 .code_filename = 104, .code_name = 112, .code_qualname = N, .code_firstlineno = 40,
	 .code_linetable = 120, .code_code = 48,
	 .ascii_data = 48, .bytes_data = 32, .var_size = 16,
	 .runtime_tstate_current = 568, .frame_localsplus = N, .code_localsplusnames = N,
	 .tuple_items = 24, .type_flags = 168, .type_name = 24, .long_digits = 24,
	 .compact_utf8 = 56, .compact_data = 72},
	{.major = 3, .minor = 11, .source = PY_FROM_TABLE,
	 .runtime_interpreters_head = 40, .interp_threads_head = 16, .tstate_next = 8,
	 .tstate_thread_id = 152, .tstate_native_thread_id = 160,
	 .tstate_frame = 56, .cframe_current_frame = 8,
	 .frame_previous = 48, .frame_code = 32, .frame_instr = 56, .instr_kind = PY_INSTR_POINTER,
	 .frame_is_entry = 68, .frame_owner = N,
	 .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 72,
	 .code_linetable = 136, .code_code = 184,
	 .ascii_data = 48, .bytes_data = 32, .var_size = 16,
	 .runtime_tstate_current = 576, .frame_localsplus = 72, .code_localsplusnames = 96,
	 .tuple_items = 24, .type_flags = 168, .type_name = 24, .long_digits = 24,
	 .compact_utf8 = 56, .compact_data = 72},
	{.major = 3, .minor = 12, .source = PY_FROM_TABLE,
	 .runtime_interpreters_head = 40, .interp_threads_head = 72, .tstate_next = 8,
	 .tstate_thread_id = 136, .tstate_native_thread_id = 144,
	 .tstate_frame = 56, .cframe_current_frame = 0,
	 .frame_previous = 8, .frame_code = 0, .frame_instr = 56, .instr_kind = PY_INSTR_POINTER,
	 .frame_is_entry = N, .frame_owner = 70,
	 .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 68,
	 .code_linetable = 136, .code_code = 192,
	 .ascii_data = 40, .bytes_data = 32, .var_size = 16,
	 .runtime_tstate_current = N, .frame_localsplus = 72, .code_localsplusnames = 96,
	 .tuple_items = 24, .type_flags = 168, .type_name = 24, .long_digits = 24,
	 .compact_utf8 = 48, .compact_data = 56},
	{.major = 3, .minor = 13, .source = PY_FROM_TABLE,
	 .runtime_interpreters_head = 632, .interp_threads_head = 7344, .tstate_next = 8,
	 .tstate_thread_id = 152, .tstate_native_thread_id = 160,
	 .tstate_frame = 72, .cframe_current_frame = N,
	 .frame_previous = 8, .frame_code = 0, .frame_instr = 56, .instr_kind = PY_INSTR_POINTER,
	 .frame_is_entry = N, .frame_owner = 70,
	 .code_filename = 112, .code_name = 120, .code_qualname = 128, .code_firstlineno = 68,
	 .code_linetable = 136, .code_code = 200,
	 .ascii_data = 40, .bytes_data = 32, .var_size = 16,
	 .runtime_tstate_current = N, .frame_localsplus = 72, .code_localsplusnames = 96,
	 .tuple_items = 24, .type_flags = 168, .type_name = 24, .long_digits = 24,
	 .compact_utf8 = 48, .compact_data = 56},
};
#undef N

int pyruntime_table(unsigned major, unsigned minor, struct py_layout *out)
{
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].major == major && table[i].minor == minor) {
			*out = table[i];
			out->micro = -1;
			return 0;
		}
	return -1;
}

const char *pyruntime_source_name(enum py_layout_source s)
{
	switch (s) {
	case PY_FROM_DEBUG_OFFSETS:
		return "debug offsets";
	case PY_FROM_DWARF:
		return "DWARF";
	case PY_FROM_TABLE:
		break;
	}
	return "table";
}

/* ---- the file ------------------------------------------------------------ */

struct py_symbols {
	bool runtime, version;
	uint64_t runtime_vaddr, version_vaddr;
	uint64_t tramp_start, tramp_end; /* 0: not there */
	uint64_t evaluator; /* py_trampoline_evaluator's address, 0: not there */
};

static void note_symbol(const struct elf_symbol *s, void *arg)
{
	struct py_symbols *ps = arg;
	if (!s->name || s->shndx == 0 /* SHN_UNDEF: another file's */)
		return;
	if (!strcmp(s->name, "_PyRuntime")) {
		ps->runtime = true;
		ps->runtime_vaddr = s->value;
	} else if (!strcmp(s->name, "Py_Version") && s->size == 8) {
		ps->version = true;
		ps->version_vaddr = s->value;
	} else if (!strcmp(s->name, "_Py_trampoline_func_start")) {
		ps->tramp_start = s->value;
	} else if (!strcmp(s->name, "_Py_trampoline_func_end")) {
		ps->tramp_end = s->value;
	} else if (!strcmp(s->name, "py_trampoline_evaluator")) {
		ps->evaluator = s->value;
	}
}

/* n bytes of the file's initialized contents at vaddr (through the PT_LOAD
 * segment holding them). False when no segment has them in the file. */
static bool read_vaddr(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t n)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph))
		return false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr + n > ph.p_filesz)
			continue;
		off_t off = (off_t)(ph.p_offset + (vaddr - ph.p_vaddr));
		return pread(fd, buf, n, off) == (ssize_t)n;
	}
	return false;
}

/* 3.10 has no Py_Version: its minor version from the file's name
 * (python3.10, libpython3.10.so.1.0). */
static bool version_from_name(const char *path, unsigned *major, unsigned *minor)
{
	const char *base = file_base_name(path);
	const char *p = strstr(base, "python");
	if (!p)
		return false;
	p += strlen("python");
	unsigned a, b;
	int used = 0;
	if (sscanf(p, "%u.%u%n", &a, &b, &used) != 2 || used == 0)
		return false;
	if (p[used] && p[used] != '.' && p[used] != 'd' && p[used] != 'm')
		return false;
	*major = a;
	*minor = b;
	return true;
}

/* ---- _Py_DebugOffsets (3.13) ---------------------------------------------
 * Its layout in 3.13 (Include/internal/pycore_runtime.h): positions of the
 * 64-bit offsets sonde reads. */
#define DEBUG_OFFSETS_SIZE 584
static const char debug_cookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};

static uint32_t u64_at(const unsigned char *d, size_t pos)
{
	uint64_t v;
	memcpy(&v, d + pos, sizeof(v));
	return v > UINT32_MAX ? PY_NO_FIELD : (uint32_t)v;
}

/* Fills l (the table's 3.13 entry) from the debug offsets at the start of
 * _PyRuntime. Returns 1 when they are there and say 3.13, 0 when not (no
 * cookie), -1 with err when they say something sonde cannot use. */
static int read_debug_offsets(Elf *elf, int fd, uint64_t vaddr, struct py_layout *l, char *err,
			      size_t errlen)
{
	unsigned char d[DEBUG_OFFSETS_SIZE];
	if (!read_vaddr(elf, fd, vaddr, d, sizeof(d)) || memcmp(d, debug_cookie, 8))
		return 0;
	uint64_t version, free_threaded;
	memcpy(&version, d + 8, 8);
	memcpy(&free_threaded, d + 16, 8);
	unsigned major = (unsigned)(version >> 24) & 0xff, minor = (unsigned)(version >> 16) & 0xff;
	if (major != 3 || minor != 13) {
		errbuf_set(err, errlen,
			   "Python %u.%u: sonde reads the interpreters of Python 3.10 to 3.13", major,
			   minor);
		return -1;
	}
	if (free_threaded) {
		errbuf_set(err, errlen,
			   "a free-threaded build of Python %u.%u: sonde reads the default builds only",
			   major, minor);
		return -1;
	}
	l->micro = (int)(version >> 8) & 0xff;
	l->runtime_interpreters_head = u64_at(d, 40);
	l->interp_threads_head = u64_at(d, 72);
	l->tstate_next = u64_at(d, 168);
	l->tstate_frame = u64_at(d, 184);
	l->tstate_thread_id = u64_at(d, 192);
	l->tstate_native_thread_id = u64_at(d, 200);
	l->frame_previous = u64_at(d, 232);
	l->frame_code = u64_at(d, 240);
	l->frame_instr = u64_at(d, 248);
	l->frame_owner = u64_at(d, 264);
	l->code_filename = u64_at(d, 280);
	l->code_name = u64_at(d, 288);
	l->code_qualname = u64_at(d, 296);
	l->code_linetable = u64_at(d, 304);
	l->code_firstlineno = u64_at(d, 312);
	l->code_code = u64_at(d, 344);
	l->var_size = u64_at(d, 520);
	l->bytes_data = u64_at(d, 528);
	l->ascii_data = u64_at(d, 560);
	l->source = PY_FROM_DEBUG_OFFSETS;
	return 1;
}

/* ---- DWARF ----------------------------------------------------------------
 * Each field of the layout, where the version's headers declare it: the
 * structure (or typedef of one) and the member's path in it. */
struct dwarf_field {
	size_t at; /* offsetof(struct py_layout, field) */
	const char *type, *path;
	unsigned from, to; /* the minor versions (3.from to 3.to) that have it there */
};

#define F(field, type, path, from, to) {offsetof(struct py_layout, field), type, path, from, to}
static const struct dwarf_field dwarf_fields[] = {
	F(runtime_interpreters_head, "pyruntimestate", "interpreters.head", 10, 13),
	F(interp_threads_head, "_is", "tstate_head", 10, 10),
	F(interp_threads_head, "_is", "threads.head", 11, 13),
	F(tstate_next, "_ts", "next", 10, 13),
	F(tstate_thread_id, "_ts", "thread_id", 10, 13),
	F(tstate_native_thread_id, "_ts", "native_thread_id", 11, 13),
	F(tstate_frame, "_ts", "frame", 10, 10),
	F(tstate_frame, "_ts", "cframe", 11, 12),
	F(tstate_frame, "_ts", "current_frame", 13, 13),
	F(cframe_current_frame, "_PyCFrame", "current_frame", 11, 12),
	F(frame_previous, "_frame", "f_back", 10, 10),
	F(frame_previous, "_PyInterpreterFrame", "previous", 11, 13),
	F(frame_code, "_frame", "f_code", 10, 10),
	F(frame_code, "_PyInterpreterFrame", "f_code", 11, 12),
	F(frame_code, "_PyInterpreterFrame", "f_executable", 13, 13),
	F(frame_instr, "_frame", "f_lasti", 10, 10),
	F(frame_instr, "_PyInterpreterFrame", "prev_instr", 11, 12),
	F(frame_instr, "_PyInterpreterFrame", "instr_ptr", 13, 13),
	F(frame_is_entry, "_PyInterpreterFrame", "is_entry", 11, 11),
	F(frame_owner, "_PyInterpreterFrame", "owner", 12, 13),
	F(code_filename, "PyCodeObject", "co_filename", 10, 13),
	F(code_name, "PyCodeObject", "co_name", 10, 13),
	F(code_qualname, "PyCodeObject", "co_qualname", 11, 13),
	F(code_firstlineno, "PyCodeObject", "co_firstlineno", 10, 13),
	F(code_linetable, "PyCodeObject", "co_linetable", 10, 13),
	F(code_code, "PyCodeObject", "co_code", 10, 10),
	F(code_code, "PyCodeObject", "co_code_adaptive", 11, 13),
	F(bytes_data, "PyBytesObject", "ob_sval", 10, 13),
	F(runtime_tstate_current, "pyruntimestate", "gilstate.tstate_current", 10, 11),
	F(frame_localsplus, "_PyInterpreterFrame", "localsplus", 11, 13),
	F(code_localsplusnames, "PyCodeObject", "co_localsplusnames", 11, 13),
	F(tuple_items, "PyTupleObject", "ob_item", 10, 13),
	F(type_flags, "PyTypeObject", "tp_flags", 10, 13),
	F(type_name, "PyTypeObject", "tp_name", 10, 13),
	F(long_digits, "PyLongObject", "ob_digit", 10, 11),
	F(long_digits, "PyLongObject", "long_value.ob_digit", 12, 13),
	F(compact_utf8, "PyCompactUnicodeObject", "utf8", 10, 13),
	F(var_size, "PyVarObject", "ob_size", 10, 13),
};
#undef F

/* The structures looked for, found in one pass over the compile units'
 * top-level entries. */
static const char *const dwarf_types[] = {"pyruntimestate", "_is", "_ts", "_PyCFrame",
					  "_frame", "_PyInterpreterFrame", "PyCodeObject",
					  "PyBytesObject", "PyVarObject", "PyASCIIObject",
					  "PyTupleObject", "PyTypeObject", "PyLongObject",
					  "PyCompactUnicodeObject"};
#define NTYPES (sizeof(dwarf_types) / sizeof(dwarf_types[0]))

/* A structure's definition (through a typedef of it): not a declaration. */
static bool struct_definition(Dwarf_Die *d, Dwarf_Die *out)
{
	Dwarf_Die t = *d;
	if (dwarf_tag(&t) == DW_TAG_typedef && !dwarfdie_type(&t, &t))
		return false;
	if (dwarf_tag(&t) != DW_TAG_structure_type || dwarf_hasattr(&t, DW_AT_declaration))
		return false;
	*out = t;
	return true;
}

static void find_types(Dwarf *dw, Dwarf_Die found[NTYPES], bool have[NTYPES])
{
	size_t left = NTYPES;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (left && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, d;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &d) == 0) {
			do {
				int tag = dwarf_tag(&d);
				if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
					continue;
				const char *name = dwarf_diename(&d);
				for (size_t i = 0; name && i < NTYPES; i++)
					if (!have[i] && !strcmp(name, dwarf_types[i]) &&
					    struct_definition(&d, &found[i])) {
						have[i] = true;
						left--;
					}
			} while (left && dwarf_siblingof(&d, &d) == 0);
		}
		off = next;
	}
}

/* The byte offset of member path ("a.b") in structure s, or PY_NO_FIELD. */
static uint32_t member_offset(Dwarf_Die *s, const char *path)
{
	char part[64];
	Dwarf_Die cur = *s;
	uint64_t off = 0;
	while (*path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(part))
			return PY_NO_FIELD;
		memcpy(part, path, n);
		part[n] = 0;
		path += n + (path[n] == '.');
		Dwarf_Die m;
		if (!dwarfdie_find_member(&cur, part, &m, &off, 0))
			return PY_NO_FIELD;
		if (*path && (!dwarfdie_type(&m, &cur) || !dwarfdie_strip(&cur)))
			return PY_NO_FIELD;
	}
	return off > UINT32_MAX ? PY_NO_FIELD : (uint32_t)off;
}

/* Sets each field l's version has from the structures found. False (with
 * the first one missing named in missing) when one is not there. */
static bool set_fields(Dwarf_Die found[NTYPES], const bool have[NTYPES], struct py_layout *l,
		       char *missing, size_t missing_len)
{
	for (size_t i = 0; i < sizeof(dwarf_fields) / sizeof(dwarf_fields[0]); i++) {
		const struct dwarf_field *f = &dwarf_fields[i];
		if (l->minor < f->from || l->minor > f->to)
			continue;
		size_t t = 0;
		while (t < NTYPES && strcmp(dwarf_types[t], f->type))
			t++;
		uint32_t v = t < NTYPES && have[t] ? member_offset(&found[t], f->path) : PY_NO_FIELD;
		if (v == PY_NO_FIELD) {
			snprintf(missing, missing_len, "%s.%s", f->type, f->path);
			return false;
		}
		memcpy((char *)l + f->at, &v, sizeof(v));
	}
	return true;
}

/* Fills l (the table's entry for its version) from the file's DWARF.
 * Returns 1 when every field was there, 0 when the file has no DWARF or
 * lacks one (*missing names it). */
static int read_dwarf(Elf *elf, struct py_layout *l, char *missing, size_t missing_len)
{
	missing[0] = 0;
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	if (!dw)
		return 0;
	/* A file with only .eh_frame has no compile units: no DWARF either. */
	Dwarf_Off next;
	size_t hsize;
	if (dwarf_nextcu(dw, 0, &next, &hsize, NULL, NULL, NULL) != 0) {
		dwarf_end(dw);
		return 0;
	}
	Dwarf_Die found[NTYPES];
	bool have[NTYPES] = {false};
	find_types(dw, found, have);
	struct py_layout d = *l;
	bool ok = set_fields(found, have, &d, missing, missing_len);
	size_t ascii = 0;
	while (ascii < NTYPES && strcmp(dwarf_types[ascii], "PyASCIIObject"))
		ascii++;
	Dwarf_Word size;
	if (ok && (!have[ascii] || dwarf_aggregate_size(&found[ascii], &size) != 0)) {
		snprintf(missing, missing_len, "PyASCIIObject's size");
		ok = false;
	}
	size_t compact = 0;
	while (compact < NTYPES && strcmp(dwarf_types[compact], "PyCompactUnicodeObject"))
		compact++;
	Dwarf_Word compact_size = 0;
	if (ok && (!have[compact] || dwarf_aggregate_size(&found[compact], &compact_size) != 0)) {
		snprintf(missing, missing_len, "PyCompactUnicodeObject's size");
		ok = false;
	}
	if (ok) {
		d.ascii_data = (uint32_t)size;
		d.compact_data = (uint32_t)compact_size;
		d.source = PY_FROM_DWARF;
		*l = d;
	}
	dwarf_end(dw);
	return ok;
}

int pyruntime_read(const char *path, struct py_layout *out, char *err, size_t errlen)
{
	int fd;
	Elf *elf = probes_open_elf(path, &fd, err, errlen);
	if (!elf)
		return -1;
	struct py_symbols ps = {0};
	symbols_elf_each(elf, SYMBOLS_ELF_SYMTAB | SYMBOLS_ELF_DYNSYM, note_symbol, &ps);
	int r = 0;
	if (!ps.runtime)
		goto out;
	unsigned major = 0, minor = 0;
	int micro = -1;
	uint64_t hex;
	if (ps.version && read_vaddr(elf, fd, ps.version_vaddr, &hex, sizeof(hex))) {
		major = (unsigned)(hex >> 24) & 0xff;
		minor = (unsigned)(hex >> 16) & 0xff;
		micro = (int)(hex >> 8) & 0xff;
	} else if (!version_from_name(path, &major, &minor)) {
		r = errbuf_set(err, errlen,
			       "%s defines _PyRuntime but says neither its version (no Py_Version) "
			       "nor, in its name, which Python it is",
			       display_path(path));
		goto out;
	}
	if (pyruntime_table(major, minor, out)) {
		r = errbuf_set(err, errlen,
			       "%s is Python %u.%u: sonde reads the interpreters of Python 3.10 to "
			       "3.13 (its stacks stay native)",
			       display_path(path), major, minor);
		goto out;
	}
	out->micro = micro;
	out->runtime_vaddr = ps.runtime_vaddr;
	out->evaluator_vaddr = ps.evaluator;
	if (ps.tramp_start && ps.tramp_end > ps.tramp_start &&
	    ps.tramp_end - ps.tramp_start <= sizeof(out->trampoline_code) &&
	    read_vaddr(elf, fd, ps.tramp_start, out->trampoline_code, ps.tramp_end - ps.tramp_start)) {
		out->trampoline_vaddr = ps.tramp_start;
		out->trampoline_size = (uint32_t)(ps.tramp_end - ps.tramp_start);
	}
	r = minor >= 13 ? read_debug_offsets(elf, fd, ps.runtime_vaddr, out, err, errlen) : 0;
	if (r < 0)
		goto out;
	char missing[64];
	if (r == 0 && !read_dwarf(elf, out, missing, sizeof(missing))) {
		if (missing[0])
			snprintf(out->why_table, sizeof(out->why_table), "its DWARF lacks %s", missing);
		else
			snprintf(out->why_table, sizeof(out->why_table), "no DWARF");
	}
	r = 1;
out:
	elf_end(elf);
	close(fd);
	return r;
}

struct find_state {
	struct py_layout *out;
	char **path;
	char *err;
	size_t errlen;
};

static int try_object(const char *path, void *arg)
{
	struct find_state *st = arg;
	int r = pyruntime_read(path, st->out, st->err, st->errlen);
	if (r == 1)
		*st->path = xstrdup(path);
	return r;
}

int pyruntime_find(const char *executable, struct py_layout *out, char **path, char *err,
		   size_t errlen)
{
	*path = NULL;
	struct find_state st = {.out = out, .path = path, .err = err, .errlen = errlen};
	struct ldso_env env = {.ld_library_path = getenv("LD_LIBRARY_PATH")};
	int r = ldso_each_object(executable, &env, try_object, &st);
	if (r == -1 && !*path && !err[0])
		errbuf_set(err, errlen, "%s is not an ELF program sonde can read",
			   display_path(executable));
	return r;
}

/* Each field, for saying which one differs. */
#define FIELD(f, name) {offsetof(struct py_layout, f), name}
static const struct {
	size_t at;
	const char *name;
} named_fields[] = {
	FIELD(runtime_interpreters_head, "_PyRuntime.interpreters.head"),
	FIELD(interp_threads_head, "the interpreter's first thread"),
	FIELD(tstate_next, "_ts.next"),
	FIELD(tstate_thread_id, "_ts.thread_id"),
	FIELD(tstate_native_thread_id, "_ts.native_thread_id"),
	FIELD(tstate_frame, "_ts's current frame"),
	FIELD(cframe_current_frame, "_PyCFrame.current_frame"),
	FIELD(frame_previous, "the frame's previous frame"),
	FIELD(frame_code, "the frame's code"),
	FIELD(frame_instr, "the frame's instruction"),
	FIELD(frame_is_entry, "_PyInterpreterFrame.is_entry"),
	FIELD(frame_owner, "_PyInterpreterFrame.owner"),
	FIELD(code_filename, "co_filename"),
	FIELD(code_name, "co_name"),
	FIELD(code_qualname, "co_qualname"),
	FIELD(code_firstlineno, "co_firstlineno"),
	FIELD(code_linetable, "co_linetable"),
	FIELD(code_code, "the code's bytecode"),
	FIELD(ascii_data, "PyASCIIObject's size"),
	FIELD(bytes_data, "PyBytesObject.ob_sval"),
	FIELD(var_size, "PyVarObject.ob_size"),
	FIELD(runtime_tstate_current, "_PyRuntime.gilstate.tstate_current"),
	FIELD(frame_localsplus, "_PyInterpreterFrame.localsplus"),
	FIELD(code_localsplusnames, "co_localsplusnames"),
	FIELD(tuple_items, "PyTupleObject.ob_item"),
	FIELD(type_flags, "PyTypeObject.tp_flags"),
	FIELD(type_name, "PyTypeObject.tp_name"),
	FIELD(long_digits, "an int's ob_digit"),
	FIELD(compact_utf8, "PyCompactUnicodeObject.utf8"),
	FIELD(compact_data, "PyCompactUnicodeObject's size"),
};
#undef FIELD

bool pyruntime_matches_table(const struct py_layout *l, char *buf, size_t size)
{
	buf[0] = 0;
	struct py_layout t;
	if (pyruntime_table(l->major, l->minor, &t)) {
		snprintf(buf, size, "the table has no Python %u.%u", l->major, l->minor);
		return false;
	}
	for (size_t i = 0; i < sizeof(named_fields) / sizeof(named_fields[0]); i++) {
		uint32_t a, b;
		memcpy(&a, (const char *)l + named_fields[i].at, sizeof(a));
		memcpy(&b, (const char *)&t + named_fields[i].at, sizeof(b));
		if (a != b) {
			snprintf(buf, size, "%s: %d, the table says %d", named_fields[i].name,
				 a == PY_NO_FIELD ? -1 : (int)a, b == PY_NO_FIELD ? -1 : (int)b);
			return false;
		}
	}
	return true;
}
