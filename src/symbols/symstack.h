/* symstack — a sampled stack resolved in one call: the whole user stack
 * (the uprobe page at the leaf, hijacked returns put back, the cut where a
 * frame-pointer walk went astray, every address to its frames with inline
 * chains), then the whole kernel stack (names, and whether a frame is the
 * kernel's uprobe machinery, which runs only for sonde's own probes). The
 * collector hands a record's addresses over once and gets frames back; it
 * does not climb down into the symbolizer per address. */
#ifndef SONDE_SYMSTACK_H
#define SONDE_SYMSTACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pysyms.h"
#include "symbols.h"

/* A user stack as the sampler walked it. */
struct symstack_user {
	const uint64_t *ips; /* leaf first */
	int n;
	/* A frame-pointer walk leaves the uretprobe trampoline's address where
	 * a traced call's return address was: the real ones, innermost first
	 * (bit i of `chained`: returns[i] shares its stack slot with the next
	 * one), are put back. A table walk put them back itself: NULL. */
	const uint64_t *returns;
	uint32_t nreturns;
	uint32_t chained;
};

/* What resolving the user stack found besides its frames. */
struct symstack_info {
	bool leaf_in_uprobes;  /* the leaf was in the uprobe page: sonde's own */
	int returns_restored;  /* hijacked returns put back */
	const char *broken;    /* the stack was cut here ("[broken stack: heap]"...,
				* its root frame), else NULL */
	int broken_addresses;  /* addresses left out behind the cut */
};

/* Frames one user stack can give, at most: each address's inline chain and
 * the broken-stack marker. */
#define SYMSTACK_MAX(naddresses) ((size_t)(naddresses) * SYM_MAX_INLINE + 1)

/* Resolves process pid's user stack into out (innermost first, at most
 * max, SYMSTACK_MAX(u->n) for all) and returns how many frames; *info says
 * what else it found. A leaf in the uprobe page is not the program's: it is
 * left out (info->leaf_in_uprobes). The broken-stack marker, when the stack
 * was cut, is the last (outermost) frame. */
int symstack_user(struct symbolizer *s, pid_t pid, const struct symstack_user *u,
		  struct sym_frame *out, size_t max, struct symstack_info *info);

/* Resolves a kernel stack (leaf first) into out[0 .. n) (one frame an
 * address) and says whether a frame is the kernel's uprobe or BPF
 * machinery: a sample that interrupted sonde's own probe handling. */
bool symstack_kernel(struct symbolizer *s, const uint64_t *ips, int n, struct sym_frame *out);

/* A sampled stack: its kernel addresses (leaf first), and its process's
 * user stack (pid 0, a kernel thread or the idle task: none). */
struct symstack_sample {
	const uint64_t *kernel_ips;
	int nkernel;
	pid_t pid;
	struct symstack_user user;
	/* The thread's Python frames (innermost first), when its process runs
	 * Python and symbols_python knows it; now_ns: when they are named
	 * (pysyms_name). */
	const struct pysyms_frame *python;
	int npython;
	uint64_t now_ns;
};

/* Both halves resolved, each innermost first: user[0 .. nuser) (the
 * caller's buffer of user_max frames) and kernel[0 .. nkernel) (one frame
 * an address). overhead: the sample is sonde's own machinery (a kernel
 * frame of the uprobe path, or a user leaf in the uprobe page), said only
 * for a process's sample. */
struct symstack_frames {
	struct sym_frame *user;
	size_t user_max;
	int nuser;
	struct sym_frame *kernel;
	bool overhead;
	struct symstack_info info;
};

/* The one call a sample's stack makes into the symbolizer: the user stack
 * (symstack_user), then the kernel stack (symstack_kernel). A sample with
 * Python frames has them in its user stack in place of the evaluation
 * loop's frames (symstack_mix_python). */
void symstack_resolve(struct symbolizer *s, const struct symstack_sample *in,
		      struct symstack_frames *out);

/* Mixed mode: native[0 .. n) (innermost first) with each run of the
 * Python frames py[0 .. npy) (innermost first; a run ends with the frame
 * whose run_start is set) in place of one frame of the C evaluation loop
 * (_PyEval_EvalFrameDefault), the innermost run in the innermost loop
 * frame. Runs left over when the loop frames are fewer go with the last
 * loop frame; with no loop frame at all (a native walk cut short), the
 * Python frames go outermost, before a broken-stack marker (broken).
 * Writes at most max frames to out; returns how many. Pure. */
int symstack_mix_python(const struct sym_frame *native, int n, bool broken,
			const struct sym_frame *py, const struct pysyms_frame *raw, int npy,
			struct sym_frame *out, size_t max);

#endif
