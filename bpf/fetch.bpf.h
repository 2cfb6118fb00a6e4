/* fetch.bpf.h — the one interpreter of fetch programs (sonde_abi.h, "Fetch
 * programs"): captures and predicates at any probe address. A program is
 * translated in user space; here it is only run, one operation per round
 * of a bpf_loop, so the verifier checks one round and any program ends
 * after SONDE_FETCH_OPS rounds.
 *
 * fetch_prog_of(key, gen) finds a program; fetch_run(ctx, prog,
 * id, span_id, pid_tgid) evaluates the program in
 * the per-CPU scratch record and sends it as a SONDE_REC_VALUES record,
 * unless its predicate failed. The maps are defined in fetch.bpf.c. */
#ifndef SONDE_FETCH_BPF_H
#define SONDE_FETCH_BPF_H

#include "common.bpf.h"

typedef struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SONDE_MAX_PROBES + SONDE_POINT_PROGS);
	__type(key, __u32);
	__type(value, struct sonde_fetch_prog);
} sonde_fetch_progs_map;
extern sonde_fetch_progs_map fetch_progs SEC(".maps");

/* The machine's state and the record being filled, per CPU. */
struct fetch_scratch {
	__u64 regs[SONDE_FETCH_REGS];
	__s64 stack[SONDE_FETCH_STACK];
	__u64 bias;
	__u32 sp;
	__u32 fault;   /* the value being computed read memory that failed */
	__u32 dropped; /* the predicate failed */
	__u32 faults;  /* failed reads of this hit */
	struct sonde_values rec;
};
typedef struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fetch_scratch);
} sonde_fetch_scratch_map;
extern sonde_fetch_scratch_map fetch_scratch SEC(".maps");

struct fetch_loop {
	struct sonde_fetch_prog *prog;
	struct fetch_scratch *s;
};

#define FETCH_SMASK (SONDE_FETCH_STACK - 1)

static __always_inline __s64 fetch_ext(__u64 v, __u32 bytes, int sign)
{
	if (bytes == 0 || bytes >= 8)
		return (__s64)v;
	__u32 shift = 64 - bytes * 8;
	return sign ? ((__s64)(v << shift)) >> shift : (__s64)((v << shift) >> shift);
}

static __always_inline __s64 fetch_binary(__u8 code, int sign, __s64 l, __s64 r)
{
	__u64 ul = (__u64)l, ur = (__u64)r;
	switch (code) {
	case FETCH_ADD: return l + r;
	case FETCH_SUB: return l - r;
	case FETCH_MUL: return (__s64)(ul * ur);
	case FETCH_DIV:
	case FETCH_MOD: {
		/* BPF's division is unsigned (no sdiv before cpu v4): signs by hand.
		 * Division by zero gives 0, as in BPF. */
		if (!ur)
			return 0;
		if (!sign)
			return code == FETCH_DIV ? (__s64)(ul / ur) : (__s64)(ul % ur);
		__u64 al = l < 0 ? -ul : ul, ar = r < 0 ? -ur : ur;
		if (code == FETCH_DIV) {
			__u64 q = al / ar;
			return (l < 0) != (r < 0) ? -(__s64)q : (__s64)q;
		}
		__u64 m = al % ar;
		return l < 0 ? -(__s64)m : (__s64)m;
	}
	case FETCH_AND: return l & r;
	case FETCH_OR: return l | r;
	case FETCH_XOR: return l ^ r;
	case FETCH_SHL: return (__s64)(ul << (ur & 63));
	case FETCH_SHR: return sign ? l >> (ur & 63) : (__s64)(ul >> (ur & 63));
	case FETCH_EQ: return l == r;
	case FETCH_NE: return l != r;
	case FETCH_LT: return sign ? l < r : ul < ur;
	case FETCH_LE: return sign ? l <= r : ul <= ur;
	case FETCH_GT: return sign ? l > r : ul > ur;
	case FETCH_GE: return sign ? l >= r : ul >= ur;
	case FETCH_LAND: return l && r;
	case FETCH_LOR: return l || r;
	}
	return 0;
}

static __always_inline void fetch_push(struct fetch_scratch *s, __s64 v)
{
	s->stack[s->sp & FETCH_SMASK] = v;
	s->sp++;
}

static __always_inline __s64 fetch_pop(struct fetch_scratch *s)
{
	s->sp--;
	return s->stack[s->sp & FETCH_SMASK];
}

/* One operation. Returns 1 to stop the loop. */
static long fetch_step(__u32 i, void *arg)
{
	struct fetch_loop *l = arg;
	struct fetch_scratch *s = l->s;
	struct sonde_fetch_op *op = &l->prog->ops[i & (SONDE_FETCH_OPS - 1)];
	__u8 code = op->code;
	if (i >= l->prog->nops || code == FETCH_END)
		return 1;
	/* After a failed read, skip to the end of the value. */
	if (s->fault && code != FETCH_EMIT && code != FETCH_EMIT_STR && code != FETCH_PRED &&
	    code != FETCH_STATUS)
		return 0;
	__u32 slot = op->a & (SONDE_CAPTURES - 1);
	switch (code) {
	case FETCH_CONST:
		fetch_push(s, op->imm);
		break;
	case FETCH_REG:
		fetch_push(s, (__s64)s->regs[op->a < SONDE_FETCH_REGS ? op->a : 0] + op->imm);
		break;
	case FETCH_ADDR:
		fetch_push(s, op->imm + (__s64)s->bias);
		break;
	case FETCH_DEREF: {
		__u64 addr = (__u64)fetch_pop(s), v = 0;
		__u32 n = op->a;
		long err;
		if (n == 1) err = bpf_probe_read_user(&v, 1, (void *)addr);
		else if (n == 2) err = bpf_probe_read_user(&v, 2, (void *)addr);
		else if (n == 4) err = bpf_probe_read_user(&v, 4, (void *)addr);
		else err = bpf_probe_read_user(&v, 8, (void *)addr);
		if (err) {
			s->fault = 1;
			s->faults++;
			break;
		}
		fetch_push(s, fetch_ext(v, n, op->b));
		break;
	}
	case FETCH_EXT:
		fetch_push(s, fetch_ext((__u64)fetch_pop(s), op->a, op->b));
		break;
	case FETCH_PIECE: {
		__u64 v = (__u64)fetch_pop(s), acc = (__u64)fetch_pop(s);
		__u64 mask = op->a >= 8 ? ~0ull : (1ull << (op->a * 8)) - 1;
		fetch_push(s, (__s64)(acc | (v & mask) << (op->b & 63)));
		break;
	}
	case FETCH_DUP: {
		__s64 v = fetch_pop(s);
		fetch_push(s, v);
		fetch_push(s, v);
		break;
	}
	case FETCH_DROP:
		fetch_pop(s);
		break;
	case FETCH_SWAP: {
		__s64 r = fetch_pop(s), l2 = fetch_pop(s);
		fetch_push(s, r);
		fetch_push(s, l2);
		break;
	}
	case FETCH_OVER: {
		__s64 r = fetch_pop(s), l2 = fetch_pop(s);
		fetch_push(s, l2);
		fetch_push(s, r);
		fetch_push(s, l2);
		break;
	}
	case FETCH_NEG:
		fetch_push(s, -fetch_pop(s));
		break;
	case FETCH_NOT:
		fetch_push(s, !fetch_pop(s));
		break;
	case FETCH_BNOT:
		fetch_push(s, ~fetch_pop(s));
		break;
	case FETCH_PRED:
		if (s->fault || !fetch_pop(s)) {
			s->dropped = 1;
			return 1;
		}
		break;
	case FETCH_EMIT:
		s->rec.status[slot] = s->fault ? SONDE_VAL_FAULT : SONDE_VAL_OK;
		s->rec.value[slot] = s->fault ? 0 : (__u64)fetch_pop(s);
		s->fault = 0;
		s->sp = 0;
		break;
	case FETCH_EMIT_STR: {
		s->rec.str[slot][0] = 0;
		if (s->fault) {
			s->rec.status[slot] = SONDE_VAL_FAULT;
		} else {
			__u64 addr = (__u64)fetch_pop(s);
			/* 1..SONDE_CAPTURE_STR bytes, in a form the verifier can bound. */
			__u64 n = ((__u64)op->imm - 1) & (SONDE_CAPTURE_STR - 1);
			s->rec.value[slot] = addr;
			long got = bpf_probe_read_user_str(s->rec.str[slot], n + 1, (void *)addr);
			if (got < 0) {
				s->rec.str[slot][0] = 0;
				s->faults++;
			}
			s->rec.status[slot] = got < 0 ? SONDE_VAL_FAULT : SONDE_VAL_OK;
		}
		s->fault = 0;
		s->sp = 0;
		break;
	}
	case FETCH_STATUS:
		s->rec.status[slot] = (__u8)op->b;
		s->rec.value[slot] = 0;
		s->fault = 0;
		s->sp = 0;
		break;
	default:
		if (code >= FETCH_ADD && code <= FETCH_LOR) {
			__s64 r = fetch_pop(s), l2 = fetch_pop(s);
			fetch_push(s, fetch_binary(code, op->b, l2, r));
		}
		break;
	}
	return 0;
}

/* The fetch program at key `key` (a probe's slot, or a point probe's
 * address: sonde_abi.h) under attach generation `gen`, or NULL. */
static __always_inline struct sonde_fetch_prog *fetch_prog_of(__u32 key, __u32 gen)
{
	struct sonde_fetch_prog *prog = bpf_map_lookup_elem(&fetch_progs, &key);
	return prog && prog->nops && prog->gen == gen ? prog : NULL;
}

/* The hit's registers into s->regs, by DWARF's x86-64 numbers: 1, or 0
 * on an architecture sonde does not read registers of. */
static __always_inline int fetch_load_regs(struct pt_regs *ctx, struct fetch_scratch *s)
{
#if defined(__TARGET_ARCH_x86)
	s->regs[0] = ctx->ax;
	s->regs[1] = ctx->dx;
	s->regs[2] = ctx->cx;
	s->regs[3] = ctx->bx;
	s->regs[4] = ctx->si;
	s->regs[5] = ctx->di;
	s->regs[6] = ctx->bp;
	s->regs[7] = ctx->sp;
	s->regs[8] = ctx->r8;
	s->regs[9] = ctx->r9;
	s->regs[10] = ctx->r10;
	s->regs[11] = ctx->r11;
	s->regs[12] = ctx->r12;
	s->regs[13] = ctx->r13;
	s->regs[14] = ctx->r14;
	s->regs[15] = ctx->r15;
	s->regs[16] = ctx->ip;
	return 1;
#else
	return 0;
#endif
}

/* Counts n failed reads of a hit's values (FETCH_FAULT). */
static __always_inline void fetch_count_faults(__u32 n)
{
	__u32 k = SONDE_CNT_FETCH_FAULT;
	__u64 *c = n ? bpf_map_lookup_elem(&counters, &k) : NULL;
	if (c)
		*c += n;
}

/* Sends s->rec, the hit's values, as a SONDE_REC_VALUES record of probe id
 * `id`: the one way values cross, a fetch program's and a py: probe's. */
static __always_inline void fetch_send(struct fetch_scratch *s, __u32 id, __u32 nvalues,
				       __u64 span_id, __u32 layout, __u64 pid_tgid)
{
	fill_hdr(&s->rec.hdr, SONDE_REC_VALUES, pid_tgid, bpf_ktime_get_ns());
	s->rec.probe = id;
	s->rec.nvalues = nvalues;
	s->rec.span_id = span_id;
	s->rec.layout = layout;
	if (bpf_ringbuf_output(&events, &s->rec, sizeof(s->rec), span_submit_flags()))
		count(SONDE_CNT_LOST_VALUES);
}

/* Runs a fetch program at this hit and sends the values (or nothing, when
 * its predicate fails). Returns 0 when its predicate failed, else 1. */
static __always_inline int fetch_run(struct pt_regs *ctx, struct sonde_fetch_prog *prog,
				     __u32 id, __u64 span_id, __u64 pid_tgid)
{
	__u32 zero = 0;
	struct fetch_scratch *s = bpf_map_lookup_elem(&fetch_scratch, &zero);
	if (!s)
		return 1;
	if (!fetch_load_regs(ctx, s))
		return 1; /* user space refuses captures on other architectures */
	/* A uprobe's handler sees ip at the probed instruction. */
	s->bias = s->regs[16] - prog->vaddr;
	s->sp = 0;
	s->fault = 0;
	s->dropped = 0;
	s->faults = 0;
	__builtin_memset(s->rec.pytype, 0, sizeof(s->rec.pytype));
	struct fetch_loop l = {.prog = prog, .s = s};
	bpf_loop(SONDE_FETCH_OPS, fetch_step, &l, 0);
	fetch_count_faults(s->faults);
	if (s->dropped)
		return 0;
	fetch_send(s, id, prog->nvalues, span_id, prog->layout, pid_tgid);
	return 1;
}

#endif
