#include "symstack.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* symbols_user_not_code's name of the kernel's uprobe page (the return
 * trampoline, the single-step slots): never the program's code. */
#define UPROBES_PAGE "[broken stack: uprobes]"

static bool in_uprobes_page(struct symbolizer *s, pid_t pid, uint64_t addr)
{
	const char *where = symbols_user_not_code(s, pid, addr);
	return where && strcmp(where, UPROBES_PAGE) == 0;
}

/* A traced call's return address was replaced with the uretprobe
 * trampoline's: put the real ones back, innermost first (the leaf is never
 * one: a leaf in the trampoline is sonde's own machinery). */
static int restore_hijacked_returns(struct symbolizer *s, pid_t pid, const struct symstack_user *u,
				    uint64_t *ips, int nips)
{
	int restored = 0;
	uint32_t k = 0, n = u->nreturns;
	for (int i = 1; i < nips && k < n; i++) {
		const char *where = symbols_user_not_code(s, pid, ips[i]);
		if (!where)
			continue;
		if (strcmp(where, UPROBES_PAGE) != 0)
			break; /* truly broken here: the cut below decides */
		while (k < n && (u->chained >> k & 1))
			k++; /* shares its slot with the next instance */
		if (k >= n)
			break;
		ips[i] = u->returns[k++];
		restored++;
	}
	return restored;
}

/* A frame-pointer walk through code built without frame pointers reads
 * "return addresses" from wherever the frame register points. The first
 * one that cannot be code (heap, stack, data, the uprobe trampoline, no
 * mapping) is where the stack broke: it and every address beyond it (found
 * through the same bad frame) become one marker frame at the stack's root
 * (see symbols_user_not_code). Returns how many addresses are kept. */
static int cut_broken_stack(struct symbolizer *s, pid_t pid, const uint64_t *ips, int nips,
			    struct symstack_info *info)
{
	for (int i = 1; i < nips; i++) {
		const char *marker = symbols_user_not_code(s, pid, ips[i]);
		if (!marker)
			continue;
		info->broken = marker;
		info->broken_addresses = nips - i;
		return i;
	}
	return nips;
}

int symstack_user(struct symbolizer *s, pid_t pid, const struct symstack_user *u,
		  struct sym_frame *out, size_t max, struct symstack_info *info)
{
	*info = (struct symstack_info){0};
	if (u->n <= 0)
		return 0;
	uint64_t ips[u->n];
	memcpy(ips, u->ips, (size_t)u->n * sizeof(*ips));
	int nips = u->n;
	if (in_uprobes_page(s, pid, ips[0])) {
		info->leaf_in_uprobes = true;
		memmove(ips, ips + 1, (size_t)(nips - 1) * sizeof(*ips));
		nips--;
	}
	if (u->returns)
		info->returns_restored = restore_hijacked_returns(s, pid, u, ips, nips);
	nips = cut_broken_stack(s, pid, ips, nips, info);
	size_t n = 0;
	for (int i = 0; i < nips && n < max; i++) {
		struct sym_frame sf[SYM_MAX_INLINE];
		int k = symbols_user(s, pid, ips[i], i > 0, sf, SYM_MAX_INLINE);
		for (int j = 0; j < k && n < max; j++)
			out[n++] = sf[j];
	}
	if (info->broken && n < max)
		out[n++] = (struct sym_frame){.name = info->broken, .module = "", .file = "",
					      .kind = FRAME_UNKNOWN};
	return (int)n;
}

/* Kernel functions that run only for sonde's own probes: the uprobe trap
 * and single-step, the uretprobe trampoline, the BPF handlers. */
static bool kernel_name_is_probe_machinery(const char *name)
{
	static const char *const prefixes[] = {
		"uprobe_", "uretprobe_", "__uprobe_", "handler_chain", "handle_swbp",
		"__do_sys_uretprobe", "__x64_sys_uretprobe", "arch_uprobe_", "bpf_prog_",
		"asm_exc_int3", "exc_int3", "do_int3", "asm_exc_debug", "exc_debug_user",
		"push_emulate_op", "handle_trampoline",
	};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

bool symstack_kernel(struct symbolizer *s, const uint64_t *ips, int n, struct sym_frame *out)
{
	bool machinery = false;
	for (int i = 0; i < n; i++) {
		symbols_kernel(s, ips[i], &out[i]);
		machinery = machinery || kernel_name_is_probe_machinery(out[i].name);
	}
	return machinery;
}

/* The frame of the interpreter's loop that runs Python frames. */
static bool eval_loop_frame(const struct sym_frame *f)
{
	return f->name && strcmp(f->name, "_PyEval_EvalFrameDefault") == 0;
}

static void put(struct sym_frame *out, size_t max, int *k, const struct sym_frame *f)
{
	if ((size_t)*k < max)
		out[*k] = *f;
	(*k)++;
}

int symstack_mix_python(const struct sym_frame *native, int n, bool broken,
			const struct sym_frame *py, const struct pysyms_frame *raw, int npy,
			struct sym_frame *out, size_t max)
{
	int loops = 0, k = 0, p = 0;
	for (int i = 0; i < n; i++)
		loops += eval_loop_frame(&native[i]);
	int seen = 0;
	for (int i = 0; i < n; i++) {
		if (!loops && i == n - broken) /* no loop frame: Python goes outermost */
			while (p < npy)
				put(out, max, &k, &py[p++]);
		if (!eval_loop_frame(&native[i]) || p >= npy) {
			put(out, max, &k, &native[i]);
			continue;
		}
		/* This loop frame's run (the last one's: every run left). */
		bool last = ++seen == loops;
		while (p < npy) {
			bool ends = raw[p].run_start;
			put(out, max, &k, &py[p++]);
			if (ends && !last)
				break;
		}
	}
	while (p < npy) /* a stack without frames */
		put(out, max, &k, &py[p++]);
	return k < (int)max ? k : (int)max;
}

/* Puts the sample's Python frames into its user stack (out->user). */
static void add_python(struct symbolizer *s, const struct symstack_sample *in,
		       struct symstack_frames *out)
{
	struct pysyms *ps = symbols_python(s);
	int npy = in->npython;
	struct sym_frame *py = xmalloc((size_t)npy * sizeof(*py));
	for (int i = 0; i < npy; i++)
		if (!pysyms_name(ps, in->pid, &in->python[i], in->now_ns, &py[i])) {
			free(py);
			return; /* not a Python process it knows (any more) */
		}
	/* The mix has every native and Python frame at most. */
	size_t room = (size_t)out->nuser + (size_t)npy;
	struct sym_frame *mixed = xmalloc((room + 1) * sizeof(*mixed));
	int n = symstack_mix_python(out->user, out->nuser, out->info.broken != NULL, py,
				    in->python, npy, mixed,
				    room < out->user_max ? room : out->user_max);
	memcpy(out->user, mixed, (size_t)n * sizeof(*mixed));
	out->nuser = n;
	free(mixed);
	free(py);
}

void symstack_resolve(struct symbolizer *s, const struct symstack_sample *in,
		      struct symstack_frames *out)
{
	out->nuser = 0;
	out->info = (struct symstack_info){0};
	if (in->pid != 0 && in->user.n > 0)
		out->nuser = symstack_user(s, in->pid, &in->user, out->user, out->user_max, &out->info);
	if (in->pid != 0 && in->npython > 0)
		add_python(s, in, out);
	bool machinery = symstack_kernel(s, in->kernel_ips, in->nkernel, out->kernel);
	out->overhead = in->pid != 0 && (machinery || out->info.leaf_in_uprobes);
}
