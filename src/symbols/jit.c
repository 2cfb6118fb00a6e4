/* jit — JIT code named from its process's perf map. See jit.h for the
 * contract. */
#include "jit.h"

#include <stdio.h>
#include <string.h>

#include "perfmap.h"
#include "util.h"

/* Where a JIT puts code: anonymous executable memory (maybe named with
 * PR_SET_VMA_ANON_NAME), or, in a process whose perf map was found, memory
 * mapped after the maps were last read (no mapping holds it: the process
 * exited, or mapped it since). Any other address that no mapping holds
 * does not look for a map (a wild one would only cost a failed open). */
bool may_be_jit(const struct process *p, const struct mapping *m)
{
	if (!m)
		return p->jit && perfmap_is_open(p->jit);
	return m->exec && (m->path[0] == '\0' || strncmp(m->path, "[anon:", 6) == 0);
}

/* The perf map's function holding addr (addr - 1 for a return address).
 * What the JIT appended is read on a miss, and every JIT_REREAD_NS anyway:
 * a JIT that rewrites code in place names it anew at the same address. */
#define JIT_REREAD_NS 50000000ull
const struct perfmap_sym *jit_symbol(struct process *p, uint64_t addr, bool is_return)
{
	if (!p->jit) {
		p->jit = perfmap_new(p->pid);
		p->jit_since_ns = monotonic_ns();
	}
	uint64_t pc = is_return && addr > 0 ? addr - 1 : addr;
	uint64_t now = monotonic_ns();
	bool reread = now - p->jit_read_ns >= JIT_REREAD_NS;
	if (reread) {
		perfmap_refresh(p->jit, p->gone);
		p->jit_read_ns = now;
	}
	const struct perfmap_sym *f = perfmap_find(p->jit, pc);
	if (!f && !reread && perfmap_refresh(p->jit, p->gone) > 0)
		f = perfmap_find(p->jit, pc);
	return f;
}

int jit_frame(struct strpool *strings, struct process *p, const struct perfmap_sym *f,
	      struct sym_frame *out)
{
	if (!p->jit_module) {
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)p->pid);
		p->jit_module = strpool_intern(strings, path);
	}
	*out = (struct sym_frame){
		.name = f->name, .module = p->jit_module, .file = "", .kind = FRAME_JIT,
	};
	return 1;
}
