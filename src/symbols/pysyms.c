#define _GNU_SOURCE
#include "pysyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "probebinary.h"
#include "strpool.h"
#include "util.h"

/* An entry is checked against the process again after this long. */
#define RECHECK_NS 1000000000ull

struct code_entry {
	uint64_t code;
	struct py_code c;
	bool readable;
	const char *name, *file; /* interned */
	uint64_t checked_ns;
};

struct py_proc_entry {
	struct py_process p;
	struct hashmap by_code; /* code address -> index in codes */
	struct code_entry *codes;
	size_t ncodes, codes_cap;
	uint64_t exited_ns; /* when it was seen gone (0: alive) */
};

struct pysyms {
	struct py_proc_entry *procs;
	size_t nprocs, procs_cap;
	struct strpool strings;
	struct pysyms_stats stats;
};

struct pysyms *pysyms_new(void)
{
	return xcalloc(1, sizeof(struct pysyms));
}

static void proc_clear(struct py_proc_entry *e)
{
	for (size_t i = 0; i < e->ncodes; i++)
		pycode_free(&e->codes[i].c);
	free(e->codes);
	hashmap_free(&e->by_code);
	pyprocess_free(&e->p);
}

void pysyms_free(struct pysyms *ps)
{
	if (!ps)
		return;
	for (size_t i = 0; i < ps->nprocs; i++)
		proc_clear(&ps->procs[i]);
	free(ps->procs);
	strpool_free(&ps->strings);
	free(ps);
}

static struct py_proc_entry *proc_of(const struct pysyms *ps, pid_t pid)
{
	for (size_t i = 0; i < ps->nprocs; i++)
		if (ps->procs[i].p.pid == pid)
			return &ps->procs[i];
	return NULL;
}

void pysyms_add(struct pysyms *ps, struct py_process *p)
{
	struct py_proc_entry *e = proc_of(ps, p->pid);
	if (e) {
		proc_clear(e);
	} else {
		grow_array((void **)&ps->procs, &ps->procs_cap, ps->nprocs + 1, sizeof(*ps->procs));
		e = &ps->procs[ps->nprocs++];
	}
	*e = (struct py_proc_entry){.p = *p};
	*p = (struct py_process){0};
}

bool pysyms_has(const struct pysyms *ps, pid_t pid)
{
	return proc_of(ps, pid) != NULL;
}

void pysyms_forget(struct pysyms *ps, pid_t pid)
{
	struct py_proc_entry *e = proc_of(ps, pid);
	if (!e)
		return;
	proc_clear(e);
	*e = ps->procs[--ps->nprocs];
}

void pysyms_exited(struct pysyms *ps, pid_t pid, uint64_t now_ns)
{
	struct py_proc_entry *e = proc_of(ps, pid);
	if (e && !e->exited_ns)
		e->exited_ns = now_ns ? now_ns : 1;
}

void pysyms_sweep(struct pysyms *ps, uint64_t now_ns, uint64_t hold_ns)
{
	for (size_t i = 0; i < ps->nprocs;) {
		struct py_proc_entry *e = &ps->procs[i];
		if (e->exited_ns && now_ns - e->exited_ns >= hold_ns) {
			ps->stats.processes_forgotten++;
			proc_clear(e);
			*e = ps->procs[--ps->nprocs];
		} else {
			i++;
		}
	}
}

/* A path's directory part that ends where a module path begins, or NULL. */
static const char *module_root(const char *path)
{
	static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
	const char *best = NULL;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		const char *at = strstr(path, roots[i]);
		if (at)
			best = at + strlen(roots[i]);
	}
	if (best)
		return best;
	/* .../lib/python3.11/json/encoder.py */
	for (const char *at = strstr(path, "/lib/python"); at; at = strstr(at + 1, "/lib/python")) {
		const char *slash = strchr(at + strlen("/lib/python"), '/');
		if (slash)
			best = slash + 1;
	}
	return best;
}

const char *pysyms_module(const char *path, char *buf, size_t size)
{
	/* A frozen module (its code inside the interpreter): "<frozen NAME>". */
	size_t len = strlen(path);
	if (strncmp(path, "<frozen ", 8) == 0 && len > 9 && path[len - 1] == '>') {
		snprintf(buf, size, "%.*s", (int)(len - 9), path + 8);
		return buf;
	}
	const char *root = module_root(path);
	const char *from = root ? root : file_base_name(path);
	snprintf(buf, size, "%s", from);
	size_t n = strlen(buf);
	if (n > 3 && strcmp(buf + n - 3, ".py") == 0)
		buf[n -= 3] = 0;
	if (n > 9 && strcmp(buf + n - 9, "/__init__") == 0)
		buf[n -= 9] = 0;
	if (root)
		for (char *c = buf; *c; c++)
			if (*c == '/')
				*c = '.';
	return buf;
}

/* Reads the code object at code into entry c, naming it. */
static void read_entry(struct pysyms *ps, struct py_proc_entry *e, struct code_entry *c,
		       uint64_t now_ns)
{
	pycode_free(&c->c);
	c->readable = pycode_read(&e->p, c->code, &c->c) == 0;
	c->checked_ns = now_ns;
	ps->stats.codes_read++;
	if (!c->readable) {
		c->name = strpool_intern(&ps->strings, "[unreadable Python code]");
		c->file = strpool_intern(&ps->strings, "");
		return;
	}
	char module[256];
	pysyms_module(c->c.filename, module, sizeof(module));
	char *name = xasprintf("%s.%s", module, c->c.qualname);
	c->name = strpool_intern(&ps->strings, name);
	free(name);
	c->file = strpool_intern(&ps->strings, c->c.filename);
}

static struct code_entry *entry_of(struct pysyms *ps, struct py_proc_entry *e, uint64_t code,
				   uint64_t now_ns)
{
	uint64_t idx;
	if (hashmap_get(&e->by_code, code, &idx)) {
		struct code_entry *c = &e->codes[idx];
		/* An exited process's memory is gone: nothing is made at its
		 * addresses any more, and nothing could be read again. */
		if (!e->exited_ns && now_ns - c->checked_ns >= RECHECK_NS) {
			if (c->readable && pycode_same(&e->p, code, &c->c)) {
				c->checked_ns = now_ns;
			} else {
				ps->stats.codes_reused += c->readable;
				read_entry(ps, e, c, now_ns);
			}
		}
		return c;
	}
	grow_array((void **)&e->codes, &e->codes_cap, e->ncodes + 1, sizeof(*e->codes));
	struct code_entry *c = &e->codes[e->ncodes];
	*c = (struct code_entry){.code = code};
	hashmap_set(&e->by_code, code, e->ncodes++);
	read_entry(ps, e, c, now_ns);
	return c;
}

bool pysyms_name(struct pysyms *ps, pid_t pid, const struct pysyms_frame *f, uint64_t now_ns,
		 struct sym_frame *out)
{
	struct py_proc_entry *e = proc_of(ps, pid);
	if (!e)
		return false;
	struct code_entry *c = entry_of(ps, e, f->code, now_ns);
	int line = -1;
	if (c->readable && c->c.table)
		line = pycode_line(e->p.layout.minor, c->c.table, c->c.ntable, c->c.first_line,
				   pycode_lasti(&e->p.layout, f->code, f->instr));
	ps->stats.unreadable += !c->readable;
	*out = (struct sym_frame){.name = c->name,
				  .module = c->file,
				  .file = c->file,
				  .line = line > 0 ? (uint32_t)line
					  : c->readable && c->c.first_line > 0 ? (uint32_t)c->c.first_line
										: 0,
				  .kind = FRAME_PYTHON};
	return true;
}

void pysyms_get_stats(const struct pysyms *ps, struct pysyms_stats *out)
{
	*out = ps->stats;
	out->processes = ps->nprocs;
}
