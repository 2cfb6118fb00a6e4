#include "pystacks.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "enginestate.h"
#include "errbuf.h"
#include "sonde.skel.h"
#include "unwind.h"

/* A field of the layout as the kernel takes it. */
static uint32_t field(uint32_t off)
{
	return off == PY_NO_FIELD ? SONDE_PY_NO_FIELD : off;
}

int engine_set_python(struct engine *e, pid_t tgid, const struct py_layout *l,
		      uint64_t runtime_addr, char *err, size_t errlen)
{
	struct sonde_py_proc pp = {
		.runtime = runtime_addr,
		.runtime_interpreters_head = field(l->runtime_interpreters_head),
		.interp_threads_head = field(l->interp_threads_head),
		.tstate_next = field(l->tstate_next),
		.tstate_thread_id = field(l->tstate_thread_id),
		.tstate_frame = field(l->tstate_frame),
		.cframe_current_frame = field(l->cframe_current_frame),
		.frame_previous = field(l->frame_previous),
		.frame_code = field(l->frame_code),
		.frame_instr = field(l->frame_instr),
		.frame_is_entry = field(l->frame_is_entry),
		.frame_owner = field(l->frame_owner),
		.instr_index = l->instr_kind == PY_INSTR_INDEX,
	};
	/* The walk needs these; the others may be missing in a version. */
	if (pp.runtime_interpreters_head == SONDE_PY_NO_FIELD ||
	    pp.interp_threads_head == SONDE_PY_NO_FIELD || pp.tstate_next == SONDE_PY_NO_FIELD ||
	    pp.tstate_thread_id == SONDE_PY_NO_FIELD || pp.tstate_frame == SONDE_PY_NO_FIELD ||
	    pp.frame_previous == SONDE_PY_NO_FIELD || pp.frame_code == SONDE_PY_NO_FIELD ||
	    pp.frame_instr == SONDE_PY_NO_FIELD)
		return errbuf_set(err, errlen, "the layout of Python %u.%u lacks a field the walk needs",
				  l->major, l->minor);
	uint32_t key = (uint32_t)tgid;
	if (bpf_map_update_elem(bpf_map__fd(e->skel->maps.py_procs), &key, &pp, BPF_ANY))
		return errbuf_set(err, errlen, "cannot give process %d its Python frames: %s%s",
				  (int)tgid, strerror(errno),
				  errno == E2BIG ? " (too many Python processes at once)" : "");
	/* -X perf: its trampolines walked through. 3.12 lays the copies back
	 * to back, 3.13 16 bytes apart (as their perf maps show); the perf
	 * map's own entries decide once it names two. A shape of code the
	 * unwinder does not know leaves stacks ending there, as before. */
	if (e->unwind && l->trampoline_size &&
	    unwind_python_trampolines(e->unwind, tgid, l->trampoline_code, l->trampoline_size,
				      l->minor == 12 ? l->trampoline_size : 16, err, errlen))
		return 1;
	return 0;
}

void engine_forget_python(struct engine *e, pid_t tgid)
{
	uint32_t key = (uint32_t)tgid;
	bpf_map_delete_elem(bpf_map__fd(e->skel->maps.py_procs), &key);
}
