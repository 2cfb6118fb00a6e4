/* pycall.bpf.h — a py: probe's calls (sonde_abi.h's struct
 * sonde_py_match): which Python calls entering the probe's site are the
 * function's, and the values of the arguments it captures, read from the
 * call's frame. For spans.bpf.c's span_enter (static functions; the maps'
 * shapes are common.bpf.h's, as every shared map's). Memory is read with
 * bpf_probe_read_user only: nothing of the process changes. */
#ifndef SONDE_PYCALL_BPF_H
#define SONDE_PYCALL_BPF_H

#include "common.bpf.h"

/* Whether n bytes at addr (user memory) are want's first n, n < TEXT:
 * read into a zeroed buffer and compared a word at a time with want (zero
 * past its length), so no loop's bound hangs on n (the verifier would walk
 * each n apart). */
static __always_inline int py_text_is(__u64 addr, __u32 n, const char *want, __u32 *fault)
{
	__u32 zero = 0;
	struct py_text *t = bpf_map_lookup_elem(&py_text_scratch, &zero);
	if (!t || n >= SONDE_PY_MATCH_TEXT)
		return 0;
	__u64 *have = (__u64 *)t->s;
	const __u64 *w = (const __u64 *)want;
	for (int k = 0; k < SONDE_PY_MATCH_TEXT / 8; k++)
		have[k] = 0;
	/* The mask on the register the read takes (the compiler would drop
	 * it after the check above, and the verifier loses the bound). */
	__u32 size = n;
	asm volatile("%[size] &= 63" : [size] "+r"(size));
	if (bpf_probe_read_user(t->s, size, (void *)addr)) {
		*fault = 1;
		return 0;
	}
	__u64 diff = 0;
	for (int k = 0; k < SONDE_PY_MATCH_TEXT / 8; k++)
		diff |= have[k] ^ w[k];
	return diff == 0;
}

/* A compact ASCII string's length, or -1 for any other string (or none);
 * a failed read sets *fault. */
static __always_inline long py_ascii_len(__u64 str, __u32 *fault)
{
	__u64 len = 0;
	__u32 state = 0;
	if (!str)
		return -1;
	if (!user_read(&len, sizeof(len), str + SONDE_PY_STR_LENGTH) ||
	    !user_read(&state, sizeof(state), str + SONDE_PY_STR_STATE)) {
		*fault = 1;
		return -1;
	}
	if ((state & (SONDE_PY_STR_ASCII | SONDE_PY_STR_COMPACT)) !=
	    (SONDE_PY_STR_ASCII | SONDE_PY_STR_COMPACT))
		return -1;
	return (long)len;
}

/* The frame of the call entering now: the evaluator's second argument, or
 * (frame_from_runtime) the current frame of the thread holding the GIL,
 * which must be this thread. 0 when it cannot be read. */
static __always_inline __u64 py_call_frame(struct pt_regs *ctx, const struct sonde_py_match *m)
{
	if (!m->frame_from_runtime)
		return PT_REGS_PARM2(ctx);
	__u64 runtime = PT_REGS_IP(ctx) + (__u64)m->runtime_from_site;
	__u64 ts = 0, id = 0, cframe = 0, frame = 0;
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 fsbase = BPF_CORE_READ(task, thread.fsbase);
	if (!user_read(&ts, sizeof(ts), runtime + m->runtime_tstate_current) || !ts ||
	    !user_read(&id, sizeof(id), ts + m->tstate_thread_id) || id != fsbase ||
	    !user_read(&cframe, sizeof(cframe), ts + m->tstate_frame) || !cframe ||
	    !user_read(&frame, sizeof(frame), cframe + m->cframe_current_frame))
		return 0;
	return frame;
}

/* What one look at a py: probe's ways compares (a bpf_loop's state: each
 * way is verified once, not once for each way before it): the file name's
 * and the qualified name's lengths, and where their characters are in
 * user memory (fdata, qdata). */
struct py_way_look {
	const struct sonde_py_match *m;
	__u64 fdata, qdata;
	__u32 flen, qlen, found;
	__u32 fault; /* a read failed: the verdict is not to be kept */
};

static long py_way_step(__u64 i, void *arg)
{
	struct py_way_look *l = arg;
	const struct sonde_py_match *m = l->m;
	if (i >= m->n || i >= SONDE_PY_MATCH_WAYS)
		return 1;
	const struct sonde_py_way *w = &m->way[i & (SONDE_PY_MATCH_WAYS - 1)];
	if (l->qlen != w->qual_len || l->flen < w->file_len)
		return 0;
	__u32 at = l->flen - w->file_len;
	if (at) {
		char sep = 0;
		if (bpf_probe_read_user(&sep, 1, (void *)(l->fdata + at - 1)))
			l->fault = 1;
		if (sep != '/')
			return 0;
	}
	if (py_text_is(l->qdata, w->qual_len, w->qual, &l->fault) &&
	    py_text_is(l->fdata + at, w->file_len, w->file, &l->fault)) {
		l->found = 1;
		return 1;
	}
	return 0;
}

/* Whether a code object's file name and qualified name (str objects) are
 * one of m's ways (compact ASCII names only); *fault set when a read
 * failed (memory not paged in: the answer may change). */
static __always_inline int py_names_match(const struct sonde_py_match *m, __u64 file, __u64 qual,
					  __u32 *fault)
{
	long flen = py_ascii_len(file, fault), qlen = py_ascii_len(qual, fault);
	if (flen <= 0 || qlen <= 0)
		return 0;
	struct py_way_look l = {.m = m, .fdata = file + m->ascii_data,
				.qdata = qual + m->ascii_data, .flen = (__u32)flen,
				.qlen = (__u32)qlen};
	bpf_loop(SONDE_PY_MATCH_WAYS, py_way_step, &l, 0);
	*fault |= l.fault;
	return l.found;
}

/* The search of a code object's local names for the captures' (one name
 * and one capture a round). */
struct py_locals_look {
	const struct sonde_py_match *m;
	__u64 names; /* co_localsplusnames, a tuple */
	__u64 nnames;
	__s16 *local;
	__u32 fault;
};

static long py_locals_step(__u64 i, void *arg)
{
	struct py_locals_look *l = arg;
	const struct sonde_py_match *m = l->m;
	__u64 k = i / SONDE_CAPTURES, c = i % SONDE_CAPTURES;
	if (k >= l->nnames)
		return 1;
	if (c >= m->ncaptures || l->local[c & (SONDE_CAPTURES - 1)] >= 0)
		return 0;
	__u64 name = 0;
	if (!user_read(&name, sizeof(name), l->names + m->tuple_items + 8 * k)) {
		l->fault = 1;
		return 1;
	}
	long len = py_ascii_len(name, &l->fault);
	if (len != m->capture_len[c & (SONDE_CAPTURES - 1)])
		return 0;
	if (py_text_is(name + m->ascii_data, (__u32)len, m->capture[c & (SONDE_CAPTURES - 1)],
		       &l->fault))
		l->local[c & (SONDE_CAPTURES - 1)] = (__s16)k;
	return 0;
}

/* Where m's captures are among the locals of the code object whose
 * co_localsplusnames is names, into local. Returns 0, or -1 when a read
 * failed (the indexes may be wrong: not to be kept). */
static __always_inline int py_locals_find(const struct sonde_py_match *m, __u64 names,
					  __s16 *local)
{
	struct py_locals_look l = {.m = m, .local = local, .names = names};
	if (!names || !user_read(&l.nnames, sizeof(l.nnames), names + m->var_size))
		return -1;
	if (l.nnames > SONDE_PY_LOCALS)
		l.nnames = SONDE_PY_LOCALS;
	bpf_loop(SONDE_PY_LOCALS * SONDE_CAPTURES, py_locals_step, &l, 0);
	return l.fault ? -1 : 0;
}

/* One captured value into rec's slot c: the object in the frame's local,
 * as its type says (enum sonde_py_value). */
struct py_values_look {
	const struct sonde_py_match *m;
	struct py_call *call;
	struct sonde_values *rec;
	__u32 faults;
};

/* An int's value (ob_size or lv_tag at 16, 30-bit digits after): 0, or
 * -1 when its digits cannot be read. */
static __always_inline int py_int_value(const struct sonde_py_match *m, __u64 obj,
					struct sonde_values *rec, __u32 c)
{
	__u64 tag = 0, ndig, mag;
	__u32 d[3] = {0, 0, 0};
	int neg;
	if (!user_read(&tag, sizeof(tag), obj + 16))
		return -1;
	if (m->long_tag) {
		ndig = tag >> 3;
		neg = (tag & 3) == 2;
	} else {
		neg = (__s64)tag < 0;
		ndig = neg ? -tag : tag;
	}
	if (ndig > 3) {
		rec->pytype[c] = SONDE_PYV_BIGINT;
		rec->value[c] = neg ? -ndig : ndig;
		return 0;
	}
	if (ndig >= 1 && !user_read(&d[0], 4, obj + m->long_digits))
		return -1;
	if (ndig >= 2 && !user_read(&d[1], 4, obj + m->long_digits + 4))
		return -1;
	if (ndig >= 3 && !user_read(&d[2], 4, obj + m->long_digits + 8))
		return -1;
	mag = (__u64)d[0] | (__u64)d[1] << 30 | (__u64)d[2] << 60;
	if (d[2] >= 16 || (neg && mag > (1ull << 63))) {
		rec->pytype[c] = SONDE_PYV_BIGINT;
		rec->value[c] = neg ? -ndig : ndig;
	} else if (neg) {
		rec->pytype[c] = SONDE_PYV_INT;
		rec->value[c] = -mag;
	} else {
		rec->pytype[c] = mag > (1ull << 63) - 1 ? SONDE_PYV_UINT : SONDE_PYV_INT;
		rec->value[c] = mag;
	}
	return 0;
}

/* A str's first characters (its length in characters in value). */
/* A str's first characters (its length in characters in value): 0, or -1
 * when a read failed. A str that is not compact (a subclass's, as an enum
 * member's) is shown by its type's name (type_name, its tp_name). */
static __always_inline int py_str_value(const struct sonde_py_match *m, __u64 obj,
					struct sonde_values *rec, __u32 c, __u64 type_name)
{
	__u64 len = 0, utf8 = 0, n;
	__u32 state = 0;
	char *out = rec->str[c & (SONDE_CAPTURES - 1)];
	if (!user_read(&len, sizeof(len), obj + SONDE_PY_STR_LENGTH) ||
	    !user_read(&state, sizeof(state), obj + SONDE_PY_STR_STATE))
		return -1;
	rec->value[c] = len;
	__u32 kind = (state >> 2) & 7;
	if (!(state & SONDE_PY_STR_COMPACT) || (!(state & SONDE_PY_STR_ASCII) && kind != 1 &&
						 kind != 2 && kind != 4)) {
		rec->pytype[c] = SONDE_PYV_OTHER;
		return bpf_probe_read_user_str(out, SONDE_CAPTURE_STR, (void *)type_name) < 0 ? -1 : 0;
	}
	if (state & SONDE_PY_STR_ASCII) {
		n = len < SONDE_CAPTURE_STR - 1 ? len : SONDE_CAPTURE_STR - 1;
		rec->pytype[c] = SONDE_PYV_STR;
		return n && bpf_probe_read_user(out, n & (SONDE_CAPTURE_STR - 1),
						(void *)(obj + m->ascii_data))
			       ? -1
			       : 0;
	}
	if (!user_read(&utf8, sizeof(utf8), obj + m->compact_utf8))
		return -1;
	if (utf8) { /* its UTF-8 copy (a character cut at the end is trimmed in user space) */
		rec->pytype[c] = SONDE_PYV_STR;
		return bpf_probe_read_user_str(out, SONDE_CAPTURE_STR, (void *)utf8) < 0 ? -1 : 0;
	}
	rec->pytype[c] = kind == 1 ? SONDE_PYV_STR1 : kind == 2 ? SONDE_PYV_STR2 : SONDE_PYV_STR4;
	n = len * kind;
	if (n > SONDE_CAPTURE_STR - 4)
		n = SONDE_CAPTURE_STR - 4; /* whole characters of any kind: 60 bytes */
	return n && bpf_probe_read_user(out, n & (SONDE_CAPTURE_STR - 1),
					(void *)(obj + m->compact_data))
		       ? -1
		       : 0;
}

static long py_value_step(__u64 i, void *arg)
{
	struct py_values_look *l = arg;
	const struct sonde_py_match *m = l->m;
	struct sonde_values *rec = l->rec;
	if (i >= m->ncaptures || i >= SONDE_CAPTURES)
		return 1;
	__u32 c = i & (SONDE_CAPTURES - 1);
	__u64 *words = (__u64 *)rec->str[c];
	for (int k = 0; k < SONDE_CAPTURE_STR / 8; k++)
		words[k] = 0;
	rec->status[c] = SONDE_VAL_OK;
	rec->value[c] = 0;
	__s16 at = l->call->local[c];
	__u64 obj = 0, type = 0, flags = 0, name = 0;
	if (at < 0) {
		rec->pytype[c] = SONDE_PYV_NO_LOCAL;
		return 0;
	}
	if (!user_read(&obj, sizeof(obj), l->call->frame + m->frame_localsplus + 8 * (__u64)at)) {
		rec->status[c] = SONDE_VAL_FAULT;
		l->faults++;
		return 0;
	}
	if (!obj) {
		rec->pytype[c] = SONDE_PYV_UNBOUND;
		return 0;
	}
	if (!user_read(&type, sizeof(type), obj + 8) ||
	    !user_read(&flags, sizeof(flags), type + m->type_flags) ||
	    !user_read(&name, sizeof(name), type + m->type_name)) {
		rec->status[c] = SONDE_VAL_FAULT;
		l->faults++;
		return 0;
	}
	if (flags & SONDE_PY_TP_UNICODE) {
		if (py_str_value(m, obj, rec, c, name)) {
			rec->status[c] = SONDE_VAL_FAULT;
			l->faults++;
		}
		return 0;
	}
	/* The type's name tells bool from int, and float and None apart. */
	if (bpf_probe_read_user_str(rec->str[c], SONDE_CAPTURE_STR, (void *)name) < 0)
		rec->str[c][0] = 0;
	__u64 w0 = words[0], w1 = words[1];
	if (flags & SONDE_PY_TP_LONG) {
		if (w0 == 0x6c6f6f62ull) { /* "bool" */
			__u64 tag = 0;
			if (!user_read(&tag, sizeof(tag), obj + 16)) {
				rec->status[c] = SONDE_VAL_FAULT;
				l->faults++;
			}
			rec->pytype[c] = SONDE_PYV_BOOL;
			rec->value[c] = m->long_tag ? (tag >> 3) != 0 : tag != 0;
		} else if (py_int_value(m, obj, rec, c)) {
			rec->status[c] = SONDE_VAL_FAULT;
			l->faults++;
		}
		words[0] = 0;
		return 0;
	}
	if (w0 == 0x74616f6c66ull) { /* "float" */
		rec->pytype[c] = SONDE_PYV_FLOAT;
		if (!user_read(&rec->value[c], sizeof(rec->value[c]), obj + 16)) {
			rec->status[c] = SONDE_VAL_FAULT;
			l->faults++;
		}
	} else if (w0 == 0x65707954656e6f4eull && (w1 & 0xff) == 0) { /* "NoneType" */
		rec->pytype[c] = SONDE_PYV_NONE;
	} else {
		rec->pytype[c] = SONDE_PYV_OTHER;
		return 0;
	}
	words[0] = words[1] = 0;
	return 0;
}

/* Reads the captures of the call py_call_scratch holds into rec; returns
 * the failed reads. */
static __always_inline __u32 py_values_read(const struct sonde_py_match *m, struct py_call *call,
					    struct sonde_values *rec)
{
	struct py_values_look l = {.m = m, .call = call, .rec = rec};
	bpf_loop(SONDE_CAPTURES, py_value_step, &l, 0);
	return l.faults;
}

#endif
