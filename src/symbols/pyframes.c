#define _GNU_SOURCE
#include "pyframes.h"

#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "errbuf.h"
#include "probebinary.h"
#include "procmaps.h"
#include "utf8.h"
#include "util.h"

/* ---- finding the interpreter in a process -------------------------------- */

/* The files a process maps at offset 0 (their first mapping): the
 * executable is looked for by its path, libpython among the files whose
 * name says python (extension modules, "*.cpython-311-*.so", too). */
struct mapped_file {
	char path[PATH_MAX];
	uint64_t start;
};

struct find_mapped {
	const char *path; /* looked for (NULL: every file whose name has "python") */
	const char *not;  /* with path NULL: a file passed over */
	struct mapped_file *files;
	size_t n, cap;
};

static int note_mapping(const struct procmaps_entry *e, void *arg)
{
	struct find_mapped *f = arg;
	if (!e->path[0] || e->path[0] == '[' || e->offset != 0)
		return 0;
	if (f->path ? strcmp(e->path, f->path) != 0
		    : !strstr(file_base_name(e->path), "python") || !strcmp(e->path, f->not))
		return 0;
	grow_array((void **)&f->files, &f->cap, f->n + 1, sizeof(*f->files));
	snprintf(f->files[f->n].path, sizeof(f->files[f->n].path), "%s", e->path);
	f->files[f->n++].start = e->start;
	return f->path != NULL; /* the executable: its first mapping is enough */
}

/* The address of the file's first loadable segment (the one at file
 * offset 0), which its mapping at offset 0 starts at once loaded. */
static bool first_load_vaddr(const char *path, uint64_t *vaddr)
{
	char err[256];
	int fd;
	Elf *elf = probes_open_elf(path, &fd, err, sizeof(err));
	if (!elf)
		return false;
	size_t nph;
	bool ok = false;
	if (elf_getphdrnum(elf, &nph) == 0)
		for (size_t i = 0; i < nph && !ok; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset == 0) {
				*vaddr = ph.p_vaddr;
				ok = true;
			}
		}
	elf_end(elf);
	close(fd);
	return ok;
}

/* Tries the file a mapping of pid names (its path as pid sees it). */
static int try_mapped(pid_t pid, const struct mapped_file *m, struct py_process *p, char *err,
		      size_t errlen)
{
	char *open_path = procmaps_root_path(pid, m->path);
	int r = pyruntime_read(open_path, &p->layout, err, errlen);
	uint64_t base;
	if (r == 1 && !first_load_vaddr(open_path, &base)) {
		r = errbuf_set(err, errlen, "%s has no loadable segment at its start", m->path);
	} else if (r == 1) {
		p->bias = m->start - base;
		p->path = open_path;
		return 1;
	}
	free(open_path);
	return r;
}

int pyprocess_open(pid_t pid, struct py_process *p, char *err, size_t errlen)
{
	*p = (struct py_process){.pid = pid};
	char exe[PATH_MAX];
	if (procmaps_exe(pid, exe, sizeof(exe))) {
		errbuf_set(err, errlen, "process %d is not there (or not ours to read)", (int)pid);
		return -1;
	}
	/* The executable itself (a static python), else a library whose name
	 * says python (libpython3.X.so). */
	struct find_mapped m = {.path = exe};
	if (procmaps_each(pid, note_mapping, &m) < 0)
		return errbuf_set(err, errlen, "cannot read the mappings of process %d", (int)pid);
	struct find_mapped libs = {.not = exe};
	procmaps_each(pid, note_mapping, &libs);
	int r = 0;
	for (size_t i = 0; r == 0 && i < m.n; i++)
		r = try_mapped(pid, &m.files[i], p, err, errlen);
	for (size_t i = 0; r == 0 && i < libs.n; i++)
		r = try_mapped(pid, &libs.files[i], p, err, errlen);
	free(m.files);
	free(libs.files);
	return r;
}

void pyprocess_free(struct py_process *p)
{
	free(p->path);
	p->path = NULL;
}

/* ---- reading its memory --------------------------------------------------- */

static bool rd(const struct py_process *p, uint64_t addr, void *buf, size_t n)
{
	if (!addr)
		return false;
	struct iovec local = {.iov_base = buf, .iov_len = n};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = n};
	return process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static bool rd_ptr(const struct py_process *p, uint64_t addr, uint64_t *v)
{
	return rd(p, addr, v, sizeof(*v));
}

/* ---- threads and frames --------------------------------------------------- */

/* The thread state's current frame. */
static uint64_t current_frame(const struct py_process *p, uint64_t tstate)
{
	const struct py_layout *l = &p->layout;
	uint64_t f = 0;
	if (!rd_ptr(p, tstate + l->tstate_frame, &f))
		return 0;
	if (l->cframe_current_frame != PY_NO_FIELD && f &&
	    !rd_ptr(p, f + l->cframe_current_frame, &f))
		return 0;
	return f;
}

/* The frame's code object and instruction; false for a frame with no code
 * of its own (the evaluation loop's entry frame, 3.12 on). */
static bool frame_code(const struct py_process *p, uint64_t frame, struct py_frame *out)
{
	const struct py_layout *l = &p->layout;
	if (l->frame_owner != PY_NO_FIELD) {
		uint8_t owner;
		if (rd(p, frame + l->frame_owner, &owner, 1) && owner == PY_OWNED_BY_CSTACK)
			return false;
	}
	out->lasti = -1;
	if (!rd_ptr(p, frame + l->frame_code, &out->code) || !out->code)
		return false;
	if (l->instr_kind == PY_INSTR_INDEX) {
		int32_t lasti;
		if (rd(p, frame + l->frame_instr, &lasti, sizeof(lasti)) && lasti >= 0)
			out->lasti = lasti;
	} else {
		uint64_t instr;
		if (rd_ptr(p, frame + l->frame_instr, &instr))
			out->lasti = pycode_lasti(l, out->code, instr);
	}
	return true;
}

int64_t pycode_lasti(const struct py_layout *l, uint64_t code, uint64_t instr)
{
	if (l->instr_kind == PY_INSTR_INDEX)
		return (int32_t)(uint32_t)instr >= 0 ? (int32_t)(uint32_t)instr : -1;
	uint64_t start = code + l->code_code;
	if (instr < start || instr - start >= (1u << 30))
		return -1;
	return (int64_t)((instr - start) / 2);
}

static void read_frames(const struct py_process *p, uint64_t tstate, size_t max,
			struct py_thread *t)
{
	const struct py_layout *l = &p->layout;
	t->frames = xcalloc(max + 1, sizeof(*t->frames));
	uint64_t f = current_frame(p, tstate);
	size_t steps = 0;
	while (f && t->n < max && steps++ < 4 * max) {
		if (frame_code(p, f, &t->frames[t->n]))
			t->n++;
		if (!rd_ptr(p, f + l->frame_previous, &f)) {
			t->cut = true;
			return;
		}
	}
	t->cut = f != 0;
}

/* Most threads an interpreter's list is followed for (a loop in a list
 * being changed as it is read ends there). */
#define MAX_THREADS 4096

int pyprocess_threads(const struct py_process *p, size_t max_frames, struct py_thread **out,
		      char *err, size_t errlen)
{
	const struct py_layout *l = &p->layout;
	uint64_t runtime = p->bias + l->runtime_vaddr, interp, tstate;
	*out = NULL;
	if (!rd_ptr(p, runtime + l->runtime_interpreters_head, &interp) || !interp ||
	    !rd_ptr(p, interp + l->interp_threads_head, &tstate))
		return errbuf_set(err, errlen,
				  "cannot read the interpreter of process %d at 0x%llx: not "
				  "initialized yet, or not Python %u.%u",
				  (int)p->pid, (unsigned long long)runtime, l->major, l->minor);
	struct py_thread *t = NULL;
	size_t n = 0, cap = 0;
	while (tstate && n < MAX_THREADS) {
		grow_array((void **)&t, &cap, n + 1, sizeof(*t));
		struct py_thread *th = &t[n++];
		*th = (struct py_thread){0};
		rd_ptr(p, tstate + l->tstate_thread_id, &th->thread_id);
		if (l->tstate_native_thread_id != PY_NO_FIELD)
			rd_ptr(p, tstate + l->tstate_native_thread_id, &th->native_thread_id);
		read_frames(p, tstate, max_frames, th);
		if (!rd_ptr(p, tstate + l->tstate_next, &tstate))
			break;
	}
	*out = t;
	return (int)n;
}

void pythreads_free(struct py_thread *t, int n)
{
	for (int i = 0; i < n; i++)
		free(t[i].frames);
	free(t);
}

/* ---- code objects ---------------------------------------------------------- */

/* Most characters of a name or path read. */
#define MAX_STR 4096

/* A str object's text as UTF-8 (compact strings: every name and path the
 * compiler makes), or NULL. */
static char *read_str(const struct py_process *p, uint64_t obj)
{
	const struct py_layout *l = &p->layout;
	uint32_t state;
	int64_t len;
	if (!rd(p, obj + 32, &state, sizeof(state)) || !rd(p, obj + 16, &len, sizeof(len)) ||
	    len < 0 || len > MAX_STR)
		return NULL;
	unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	/* A non-ASCII compact string's characters follow PyCompactUnicodeObject. */
	uint64_t data = obj + (ascii ? l->ascii_data : l->compact_data);
	unsigned width = ascii ? 1 : kind;
	size_t bytes = (size_t)len * width;
	uint8_t *raw = xmalloc(bytes + 1);
	char *s = NULL;
	if (rd(p, data, raw, bytes) || bytes == 0) {
		s = xmalloc((size_t)len * 4 + 1);
		utf8_from_units(raw, (size_t)len, width, s, (size_t)len * 4 + 1);
	}
	free(raw);
	return s;
}

/* Whether obj is a code object: its type's tp_name is "code". */
static bool is_code(const struct py_process *p, uint64_t obj)
{
	uint64_t type, name;
	char buf[8];
	return rd_ptr(p, obj + 8, &type) && rd_ptr(p, type + 24, &name) &&
	       rd(p, name, buf, 5) && memcmp(buf, "code", 5) == 0;
}

/* The addresses of a code object's name and file objects. */
static bool code_names(const struct py_process *p, uint64_t code, uint64_t *name, uint64_t *file)
{
	const struct py_layout *l = &p->layout;
	uint32_t name_at = l->code_qualname != PY_NO_FIELD ? l->code_qualname : l->code_name;
	return rd_ptr(p, code + name_at, name) && rd_ptr(p, code + l->code_filename, file);
}

int pycode_read(const struct py_process *p, uint64_t code, struct py_code *out)
{
	const struct py_layout *l = &p->layout;
	*out = (struct py_code){0};
	uint64_t table;
	int32_t first;
	if (!is_code(p, code) || !code_names(p, code, &out->name_obj, &out->file_obj) ||
	    !rd(p, code + l->code_firstlineno, &first, sizeof(first)) ||
	    !rd_ptr(p, code + l->code_linetable, &table))
		return -1;
	out->qualname = read_str(p, out->name_obj);
	out->filename = read_str(p, out->file_obj);
	if (!out->qualname || !out->filename) {
		pycode_free(out);
		return -1;
	}
	out->first_line = first;
	int64_t size;
	if (rd(p, table + l->var_size, &size, sizeof(size)) && size > 0 && size <= (1 << 20)) {
		out->table = xmalloc((size_t)size);
		out->ntable = (size_t)size;
		if (!rd(p, table + l->bytes_data, out->table, (size_t)size)) {
			free(out->table);
			out->table = NULL;
			out->ntable = 0;
		}
	}
	return 0;
}

bool pycode_same(const struct py_process *p, uint64_t code, const struct py_code *c)
{
	uint64_t name, file;
	return is_code(p, code) && code_names(p, code, &name, &file) && name == c->name_obj &&
	       file == c->file_obj;
}

void pycode_free(struct py_code *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->table);
	*c = (struct py_code){0};
}

int pycode_describe(const struct py_process *p, uint64_t code, int64_t lasti,
		    struct py_code_info *out)
{
	*out = (struct py_code_info){0};
	struct py_code c;
	if (pycode_read(p, code, &c))
		return -1;
	int line = c.table ? pycode_line(p->layout.minor, c.table, c.ntable, c.first_line, lasti)
			   : -1;
	out->qualname = c.qualname;
	out->filename = c.filename;
	out->line = line > 0 ? line : c.first_line;
	free(c.table);
	return 0;
}

void pycode_info_free(struct py_code_info *c)
{
	free(c->qualname);
	free(c->filename);
	c->qualname = c->filename = NULL;
}

/* ---- line tables ------------------------------------------------------------ */

/* 3.10 (Objects/lnotab_notes.txt): pairs of (bytes of bytecode, signed
 * line delta; -128: no line), from the first line, over byte offsets. */
static int line_310(const uint8_t *t, size_t n, int line, int64_t lasti)
{
	int64_t addr = 2 * lasti, end = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		int64_t start = end;
		end += t[i];
		int8_t delta = (int8_t)t[i + 1];
		bool none = delta == -128;
		if (!none)
			line += delta;
		if (start <= addr && addr < end)
			return none ? -1 : line;
	}
	return -1;
}

/* A location table's unsigned and signed varints: 6 bits a byte, 0x40
 * says another follows; the signed one keeps its sign in bit 0. */
static bool varint(const uint8_t *t, size_t n, size_t *i, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *i < n && shift < 64; shift += 6) {
		uint8_t b = t[(*i)++];
		*v |= (uint64_t)(b & 0x3f) << shift;
		if (!(b & 0x40))
			return true;
	}
	return false;
}

static bool svarint(const uint8_t *t, size_t n, size_t *i, int64_t *v)
{
	uint64_t u;
	if (!varint(t, n, i, &u))
		return false;
	*v = u & 1 ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
	return true;
}

/* 3.11 on (Objects/locations.md): entries of a first byte (bit 7 set; a
 * code in bits 3-6; bits 0-2: how many code units, less one) and what the
 * code says follows: 15 no location; 14 the long form (line delta, end
 * line, columns); 13 a line delta alone; 10-12 the line moves by code - 10,
 * two column bytes; 0-9 the same line, one column byte. */
static int line_311(const uint8_t *t, size_t n, int line, int64_t lasti)
{
	int64_t unit = 0;
	size_t i = 0;
	while (i < n) {
		uint8_t first = t[i++];
		if (!(first & 0x80))
			return -1; /* not at an entry: a table sonde cannot read */
		unsigned code = (first >> 3) & 15;
		int64_t len = (first & 7) + 1, delta = 0;
		bool none = false;
		uint64_t skip;
		switch (code) {
		case 15:
			none = true;
			break;
		case 14:
			if (!svarint(t, n, &i, &delta) || !varint(t, n, &i, &skip) ||
			    !varint(t, n, &i, &skip) || !varint(t, n, &i, &skip))
				return -1;
			break;
		case 13:
			if (!svarint(t, n, &i, &delta))
				return -1;
			break;
		case 10:
		case 11:
		case 12:
			delta = code - 10;
			i += 2;
			break;
		default:
			i += 1;
			break;
		}
		line += (int)delta;
		if (unit <= lasti && lasti < unit + len)
			return none ? -1 : line;
		unit += len;
	}
	return -1;
}

int pycode_line(unsigned minor, const uint8_t *table, size_t n, int first_line, int64_t lasti)
{
	if (lasti < 0)
		return -1;
	return minor <= 10 ? line_310(table, n, first_line, lasti)
			   : line_311(table, n, first_line, lasti);
}
