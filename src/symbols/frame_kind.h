/* frame_kind — what kind of code a stack frame is: the symbolizer decides
 * it, the frame table (model/frames.h) keeps it, every output shows it. */
#ifndef SONDE_FRAME_KIND_H
#define SONDE_FRAME_KIND_H

enum frame_kind {
	FRAME_USER = 0,    /* user-space function (symbolized or not) */
	FRAME_KERNEL = 1,  /* kernel function: folded suffix "_[k]" */
	FRAME_INLINED = 2, /* function inlined into its caller: suffix "_[i]" */
	FRAME_JIT = 3,     /* JIT code from perf-PID.map: suffix "_[j]" */
	FRAME_PROCESS = 4, /* the process-name root of a folded stack */
	FRAME_UNKNOWN = 5, /* not resolvable: name is "[module+0xoff]" */
	FRAME_OVERHEAD = 6, /* "[sonde]": the sample interrupted sonde's own probe
			     * machinery (uprobe trap, BPF handler, uretprobe
			     * trampoline); left out of views by default */
	FRAME_STATE = 7,    /* where a thread's time went at the leaf: "[running]",
			     * or why it was off the CPU ("[sleeping: read]",
			     * "[runnable]", "[disk: fsync]"): record --off-cpu,
			     * and the --wall views (model/view.h) */
	FRAME_PYTHON = 8,   /* a Python function's frame (symbols/pysyms): in
			     * place of the interpreter's loop that ran it */
};

#endif
