/* nflx_read — an nflxprofile into a profile (nflx_read, nflx.h says what
 * comes back): the message parsed and checked (parse_profile), the nodes
 * sorted by id and linked to their parents, then each sample's node
 * resolved to a comm and a stack (build). Malformed or inconsistent input is
 * one line of error. */
#include "nflx.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "errbuf.h"
#include "hashmap.h"
#include "nflxproto.h"
#include "order.h"
#include "pb.h"
#include "util.h"

/* Limits: a file past them is not a profile anyone recorded. */
#define NFLX_MAX_SAMPLES ((size_t)1 << 27)
#define NFLX_MAX_NODES ((size_t)1 << 25)
#define NFLX_MAX_SECONDS 1e10 /* absolute times up to the year 2286 */

struct str {
	const uint8_t *p;
	size_t len;
};

struct rnode {
	uint32_t id;
	bool has_parent;      /* Node.parent */
	bool has_pid, has_tid;
	uint32_t parent;      /* Node.parent (an id) */
	uint32_t pid, tid;
	struct str name, libtype, file;
	uint32_t line;
	struct str msg;       /* the Node message, for children and stack */
	/* resolution */
	uint32_t up;          /* parent's index, or NONE */
	uint32_t from_kids;   /* parent's index from children lists, or NONE */
	uint8_t state;
	uint8_t level;        /* 0 root, 1 process, 2 deeper */
	uint32_t stack;
	const char *comm;
};

#define NONE UINT32_MAX

enum { UNSEEN = 0, BUSY, DONE };

struct reader {
	char *err;
	size_t errlen;
	const uint8_t *data;

	bool has_start, has_end, has_idle;
	double start_time, end_time;
	uint64_t idle;
	struct str title;

	uint32_t *samples;
	size_t nsamples, samples_cap;
	double *deltas;
	size_t ndeltas, deltas_cap;
	uint32_t *cpus, *pids, *tids;
	size_t ncpus, cpus_cap, npids, pids_cap, ntids, tids_cap;
	uint64_t *values;
	size_t nvalues, values_cap;

	struct rnode *nodes;
	size_t nnodes, nodes_cap;

	struct str (*params)[2];
	size_t nparams, params_cap;

	/* per-thread cache: (pid, tid, comm) -> thread index */
	struct hashmap threads; /* hash of (pid, tid, comm) -> thread (hashed keys) */

	char *scratch;
	size_t scratch_cap;
	uint32_t *path;
};

static size_t at(const struct reader *r, const struct pb_reader *pr)
{
	return (size_t)(pr->p - r->data);
}

static int malformed(struct reader *r, const struct pb_reader *pr, const char *what)
{
	return errbuf_set(r->err, r->errlen,
			  "truncated or malformed %s near byte %zu", what, at(r, pr));
}

/* A NUL-terminated copy of a string field (a NUL inside ends it). */
static const char *cstr(struct reader *r, struct str s)
{
	grow_array((void **)&r->scratch, &r->scratch_cap, s.len + 1, 1);
	if (s.len)
		memcpy(r->scratch, s.p, s.len);
	r->scratch[s.len] = 0;
	return r->scratch;
}

static bool str_is(struct str s, const char *lit)
{
	size_t n = strlen(lit);
	return s.len == n && memcmp(s.p, lit, n) == 0;
}

static int read_str(struct pb_reader *pr, enum pb_wire wire, struct str *s)
{
	struct pb_reader sub;
	if (wire != PB_LEN || pb_read_len(pr, &sub))
		return -1;
	s->p = sub.p;
	s->len = (size_t)(sub.end - sub.p);
	return 0;
}

static int read_u32(struct pb_reader *pr, enum pb_wire wire, uint32_t *v)
{
	uint64_t x;
	if (wire != PB_VARINT || pb_read_varint(pr, &x))
		return -1;
	*v = (uint32_t)x; /* protobuf truncates 64-bit varints into uint32 */
	return 0;
}

/* A packed or repeated uint32 field being read into r's array *v (*n of
 * *cap used); `what` names the field in errors. */
struct u32vec {
	struct reader *r;
	uint32_t **v;
	size_t *n, *cap;
	bool ids; /* node ids: must fit 32 bits */
	const char *what;
};

static int push_u32(void *arg, uint64_t x)
{
	struct u32vec *a = arg;
	if (a->ids && x > UINT32_MAX)
		return -1;
	if (*a->n >= NFLX_MAX_SAMPLES)
		return -1;
	grow_array((void **)a->v, a->cap, *a->n + 1, sizeof(**a->v));
	(*a->v)[(*a->n)++] = (uint32_t)x;
	return 0;
}

static int push_u64(void *arg, uint64_t x)
{
	struct reader *r = arg;
	if (r->nvalues >= NFLX_MAX_SAMPLES)
		return -1;
	grow_array((void **)&r->values, &r->values_cap, r->nvalues + 1, sizeof(*r->values));
	r->values[r->nvalues++] = x;
	return 0;
}

static int read_u32s(struct pb_reader *pr, enum pb_wire wire, struct u32vec *a)
{
	struct reader *r = a->r;
	if (pb_read_uints(pr, wire, push_u32, a)) {
		if (*a->n >= NFLX_MAX_SAMPLES)
			return errbuf_set(r->err, r->errlen,
					  "too many %s (more than %zu)", a->what, NFLX_MAX_SAMPLES);
		return malformed(r, pr, a->what);
	}
	return 0;
}

static int push_delta(struct reader *r, double d)
{
	if (r->ndeltas >= NFLX_MAX_SAMPLES)
		return errbuf_set(r->err, r->errlen,
				  "too many time_deltas (more than %zu)", NFLX_MAX_SAMPLES);
	grow_array((void **)&r->deltas, &r->deltas_cap, r->ndeltas + 1, sizeof(*r->deltas));
	r->deltas[r->ndeltas++] = d;
	return 0;
}

static int read_deltas(struct reader *r, struct pb_reader *pr, enum pb_wire wire)
{
	double d;
	if (wire == PB_I64) {
		if (pb_read_double(pr, &d))
			return malformed(r, pr, "time_deltas");
		return push_delta(r, d);
	}
	struct pb_reader sub;
	if (wire != PB_LEN || pb_read_len(pr, &sub) || (sub.end - sub.p) % 8)
		return malformed(r, pr, "time_deltas");
	while (!pb_reader_done(&sub))
		if (pb_read_double(&sub, &d) || push_delta(r, d))
			return -1;
	return 0;
}

static int check_child(void *arg, uint64_t v)
{
	(void)arg;
	return v > UINT32_MAX ? -1 : 0;
}

/* Parses a File message {1 file_name, 2 line, 3 column}. */
static int parse_file(struct pb_reader *m, struct str *name, uint32_t *line)
{
	uint32_t field;
	enum pb_wire wire;
	while (!pb_reader_done(m)) {
		if (pb_read_tag(m, &field, &wire))
			return -1;
		if (field == 1) {
			if (read_str(m, wire, name))
				return -1;
		} else if (field == 2) {
			if (read_u32(m, wire, line))
				return -1;
		} else if (pb_skip(m, wire)) {
			return -1;
		}
	}
	return 0;
}

/* Parses a Node's scalar fields (children and stack are only checked). */
static int parse_node(struct pb_reader *m, struct rnode *n)
{
	uint32_t field, u;
	enum pb_wire wire;
	struct pb_reader sub;
	n->msg.p = m->p;
	n->msg.len = (size_t)(m->end - m->p);
	while (!pb_reader_done(m)) {
		if (pb_read_tag(m, &field, &wire))
			return -1;
		int rc = 0;
		switch (field) {
		case N_FUNCTION_NAME:
			rc = read_str(m, wire, &n->name);
			break;
		case N_LIBTYPE:
			rc = read_str(m, wire, &n->libtype);
			break;
		case N_CHILDREN:
			rc = pb_read_uints(m, wire, check_child, NULL);
			break;
		case N_PARENT:
			rc = read_u32(m, wire, &n->parent);
			n->has_parent = true;
			break;
		case N_PID:
			rc = read_u32(m, wire, &n->pid);
			n->has_pid = true;
			break;
		case N_TID:
			rc = read_u32(m, wire, &n->tid);
			n->has_tid = true;
			break;
		case N_HIT_COUNT:
		case N_CPU:
			rc = read_u32(m, wire, &u);
			break;
		case N_VALUE:
			rc = wire == PB_VARINT ? pb_skip(m, wire) : -1;
			break;
		case N_STACK:
			rc = wire == PB_LEN ? pb_skip(m, wire) : -1;
			break;
		case N_FILE:
			rc = wire == PB_LEN ? pb_read_len(m, &sub) : -1;
			if (!rc)
				rc = parse_file(&sub, &n->file, &n->line);
			break;
		default:
			rc = pb_skip(m, wire);
			break;
		}
		if (rc)
			return -1;
	}
	return 0;
}

static int read_node_entry(struct reader *r, struct pb_reader *pr, enum pb_wire wire)
{
	struct pb_reader e, v = {0};
	uint32_t field;
	uint64_t key = 0;
	bool has_value = false;
	if (wire != PB_LEN || pb_read_len(pr, &e))
		return malformed(r, pr, "nodes entry");
	while (!pb_reader_done(&e)) {
		if (pb_read_tag(&e, &field, &wire))
			return malformed(r, &e, "nodes entry");
		if (field == 1) {
			if (wire != PB_VARINT || pb_read_varint(&e, &key))
				return malformed(r, &e, "nodes entry");
		} else if (field == 2) {
			if (wire != PB_LEN || pb_read_len(&e, &v))
				return malformed(r, &e, "nodes entry");
			has_value = true;
		} else if (pb_skip(&e, wire)) {
			return malformed(r, &e, "nodes entry");
		}
	}
	if (key > UINT32_MAX)
		return errbuf_set(r->err, r->errlen,
				  "node id %llu out of range", (unsigned long long)key);
	if (r->nnodes >= NFLX_MAX_NODES)
		return errbuf_set(r->err, r->errlen,
				  "too many nodes (more than %zu)", NFLX_MAX_NODES);
	grow_array((void **)&r->nodes, &r->nodes_cap, r->nnodes + 1, sizeof(*r->nodes));
	struct rnode *n = &r->nodes[r->nnodes++];
	memset(n, 0, sizeof(*n));
	n->id = (uint32_t)key;
	n->msg.p = (const uint8_t *)""; /* an absent value is an empty Node */
	if (has_value) {
		struct pb_reader m = v;
		if (parse_node(&m, n))
			return errbuf_set(r->err, r->errlen,
					  "node %u: truncated or malformed near byte %zu", n->id,
					  at(r, &m));
	}
	return 0;
}

static int read_param(struct reader *r, struct pb_reader *pr, enum pb_wire wire)
{
	struct pb_reader e;
	uint32_t field;
	struct str kv[2] = {{0}, {0}};
	if (wire != PB_LEN || pb_read_len(pr, &e))
		return malformed(r, pr, "params entry");
	while (!pb_reader_done(&e)) {
		if (pb_read_tag(&e, &field, &wire))
			return malformed(r, &e, "params entry");
		if (field == 1 || field == 2) {
			if (read_str(&e, wire, &kv[field - 1]))
				return malformed(r, &e, "params entry");
		} else if (pb_skip(&e, wire)) {
			return malformed(r, &e, "params entry");
		}
	}
	grow_array((void **)&r->params, &r->params_cap, r->nparams + 1, sizeof(*r->params));
	r->params[r->nparams][0] = kv[0];
	r->params[r->nparams][1] = kv[1];
	r->nparams++;
	return 0;
}

static int parse_profile(struct reader *r, const uint8_t *data, size_t len)
{
	struct pb_reader pr;
	pb_reader_init(&pr, data, len);
	uint32_t field;
	enum pb_wire wire;
	while (!pb_reader_done(&pr)) {
		if (pb_read_tag(&pr, &field, &wire))
			return malformed(r, &pr, "protobuf field");
		int rc = 0;
		switch (field) {
		case P_START_TIME:
		case P_END_TIME: {
			double d;
			if (wire != PB_I64 || pb_read_double(&pr, &d))
				return malformed(r, &pr, field == P_START_TIME ? "start_time" : "end_time");
			if (field == P_START_TIME) {
				r->start_time = d;
				r->has_start = true;
			} else {
				r->end_time = d;
				r->has_end = true;
			}
			break;
		}
		case P_SAMPLES:
			rc = read_u32s(&pr, wire,
				       &(struct u32vec){.r = r, .v = &r->samples, .n = &r->nsamples,
							.cap = &r->samples_cap, .ids = true,
							.what = "samples"});
			break;
		case P_TIME_DELTAS:
			rc = read_deltas(r, &pr, wire);
			break;
		case P_NODES:
			rc = read_node_entry(r, &pr, wire);
			break;
		case P_TITLE:
			if (read_str(&pr, wire, &r->title))
				return malformed(r, &pr, "title");
			break;
		case P_DESCRIPTION: {
			struct str s;
			if (read_str(&pr, wire, &s))
				return malformed(r, &pr, "description");
			break;
		}
		case P_PARAMS:
			rc = read_param(r, &pr, wire);
			break;
		case P_SAMPLES_CPU:
			rc = read_u32s(&pr, wire,
				       &(struct u32vec){.r = r, .v = &r->cpus, .n = &r->ncpus,
							.cap = &r->cpus_cap, .ids = false,
							.what = "samples_cpu"});
			break;
		case P_SAMPLES_PID:
			rc = read_u32s(&pr, wire,
				       &(struct u32vec){.r = r, .v = &r->pids, .n = &r->npids,
							.cap = &r->pids_cap, .ids = false,
							.what = "samples_pid"});
			break;
		case P_SAMPLES_TID:
			rc = read_u32s(&pr, wire,
				       &(struct u32vec){.r = r, .v = &r->tids, .n = &r->ntids,
							.cap = &r->tids_cap, .ids = false,
							.what = "samples_tid"});
			break;
		case P_SAMPLES_VALUE:
			if (pb_read_uints(&pr, wire, push_u64, r)) {
				if (r->nvalues >= NFLX_MAX_SAMPLES)
					return errbuf_set(r->err, r->errlen,
							  "too many samples_value (more than %zu)",
							  NFLX_MAX_SAMPLES);
				return malformed(r, &pr, "samples_value");
			}
			break;
		case P_IDLE_SAMPLE_COUNT:
			if (wire != PB_VARINT || pb_read_varint(&pr, &r->idle))
				return malformed(r, &pr, "idle_sample_count");
			r->has_idle = true;
			break;
		default:
			if (pb_skip(&pr, wire))
				return malformed(r, &pr, "protobuf field");
			break;
		}
		if (rc)
			return -1;
	}
	return 0;
}

/* The nodes are sorted by id with order_u32: it is their first member. */
_Static_assert(offsetof(struct rnode, id) == 0, "rnode's id comes first");

/* Index of node `id`, or NONE. */
static uint32_t find_node(const struct reader *r, uint32_t id)
{
	size_t k = ORDER_PARTITION(r->nnodes, i, r->nodes[i].id < id);
	return k < r->nnodes && r->nodes[k].id == id ? (uint32_t)k : NONE;
}

static const struct str *param(const struct reader *r, const char *key)
{
	const struct str *v = NULL;
	for (size_t i = 0; i < r->nparams; i++)
		if (str_is(r->params[i][0], key))
			v = &r->params[i][1]; /* the last one wins, as in a map */
	return v;
}

static bool flag(const struct reader *r, const char *key)
{
	const struct str *v = param(r, key);
	return v && str_is(*v, "true");
}

static enum frame_kind kind_of(struct str libtype, const char *name)
{
	if (str_is(libtype, "kernel"))
		return FRAME_KERNEL;
	if (str_is(libtype, "jit"))
		return FRAME_JIT;
	if (str_is(libtype, "inlined"))
		return FRAME_INLINED;
	size_t n = strlen(name);
	if (libtype.len == 0 && n > 1 && name[0] == '[' && name[n - 1] == ']')
		return FRAME_UNKNOWN;
	return FRAME_USER;
}

static uint32_t intern_frame(struct profile *p, struct reader *r, struct str name,
			     struct str libtype, struct str file, uint32_t line)
{
	char *fname = xstrdup(cstr(r, file));
	const char *n = cstr(r, name);
	uint32_t id = frames_intern(p->frames, n, "", fname, line, kind_of(libtype, n));
	free(fname);
	return id;
}

/* Sets the parent index of every node: from Node.parent with has_parent,
 * else from the children lists (each falls back to the other source). */
static int link_nodes(struct reader *r, bool has_parent)
{
	for (size_t i = 0; i < r->nnodes; i++)
		r->nodes[i].from_kids = NONE;
	for (size_t i = 0; i < r->nnodes; i++) {
		struct rnode *n = &r->nodes[i];
		struct pb_reader m;
		pb_reader_init(&m, n->msg.p, n->msg.len);
		uint32_t field;
		enum pb_wire wire;
		while (!pb_reader_done(&m)) {
			if (pb_read_tag(&m, &field, &wire))
				return errbuf_set(r->err, r->errlen, "node %u: malformed", n->id);
			if (field != N_CHILDREN) {
				if (pb_skip(&m, wire))
					return errbuf_set(r->err, r->errlen,
							  "node %u: malformed", n->id);
				continue;
			}
			/* packed or not; values were checked by parse_node */
			struct pb_reader sub = m;
			uint64_t v;
			if (wire == PB_LEN) {
				if (pb_read_len(&m, &sub))
					return errbuf_set(r->err, r->errlen,
							  "node %u: malformed", n->id);
			} else {
				if (pb_read_varint(&m, &v))
					return errbuf_set(r->err, r->errlen,
							  "node %u: malformed", n->id);
				sub.end = m.p;
			}
			while (!pb_reader_done(&sub)) {
				if (pb_read_varint(&sub, &v) || v > UINT32_MAX)
					return errbuf_set(r->err, r->errlen,
							  "node %u: malformed children", n->id);
				uint32_t c = find_node(r, (uint32_t)v);
				if (c == NONE)
					return errbuf_set(r->err, r->errlen,
							  "node %u: child %u does not exist", n->id,
							  (uint32_t)v);
				if (c == i)
					return errbuf_set(r->err, r->errlen,
							  "node %u is its own child", n->id);
				if (r->nodes[c].from_kids != NONE && r->nodes[c].from_kids != i)
					return errbuf_set(r->err, r->errlen,
							  "node %u is a child of both %u and %u",
							  (uint32_t)v, r->nodes[r->nodes[c].from_kids].id,
							  n->id);
				r->nodes[c].from_kids = (uint32_t)i;
			}
		}
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		struct rnode *n = &r->nodes[i];
		uint32_t from_field = NONE;
		if (n->has_parent) {
			from_field = find_node(r, n->parent);
			if (from_field == NONE && n->id != 0)
				return errbuf_set(r->err, r->errlen,
						  "node %u: parent %u does not exist", n->id, n->parent);
		}
		if (has_parent)
			n->up = from_field != NONE ? from_field : n->from_kids;
		else
			n->up = n->from_kids != NONE ? n->from_kids : from_field;
	}
	return 0;
}

/* Resolves a node's comm and stack through its ancestors (parent mode). */
static int resolve_parent(struct reader *r, struct profile *p, uint32_t idx)
{
	size_t depth = 0;
	uint32_t cur = idx;
	while (r->nodes[cur].state != DONE) {
		if (r->nodes[cur].state == BUSY)
			return errbuf_set(r->err, r->errlen,
					  "parent cycle through node %u", r->nodes[cur].id);
		r->nodes[cur].state = BUSY;
		r->path[depth++] = cur;
		uint32_t up = r->nodes[cur].up;
		if (up == NONE)
			return errbuf_set(r->err, r->errlen,
					  "node %u is not connected to the root (node 0)",
					  r->nodes[cur].id);
		cur = up;
	}
	while (depth > 0) {
		struct rnode *n = &r->nodes[r->path[--depth]];
		const struct rnode *par = &r->nodes[n->up];
		n->level = par->level < 2 ? par->level + 1 : 2;
		if (!n->has_pid && par->has_pid && par->level > 0) { /* Node.pid of the process */
			n->has_pid = true;
			n->pid = par->pid;
		}
		if (!n->has_tid && par->has_tid && par->level > 0) {
			n->has_tid = true;
			n->tid = par->tid;
		}
		if (n->level == 1) {
			n->comm = frames_strdup(p->frames, cstr(r, n->name));
			n->stack = 0;
		} else {
			n->comm = par->comm;
			uint32_t f = intern_frame(p, r, n->name, n->libtype, n->file, n->line);
			n->stack = profile_stack_child(p, par->stack, f);
		}
		n->state = DONE;
	}
	return 0;
}

/* Resolves a node whose stack is in Node.stack (has_node_stack). */
static int resolve_node_stack(struct reader *r, struct profile *p, uint32_t idx)
{
	struct rnode *n = &r->nodes[idx];
	if (n->state == DONE)
		return 0;
	struct pb_reader m;
	pb_reader_init(&m, n->msg.p, n->msg.len);
	uint32_t field, stack = 0;
	enum pb_wire wire;
	while (!pb_reader_done(&m)) {
		if (pb_read_tag(&m, &field, &wire))
			return errbuf_set(r->err, r->errlen, "node %u: malformed", n->id);
		if (field != N_STACK) {
			if (pb_skip(&m, wire))
				return errbuf_set(r->err, r->errlen, "node %u: malformed", n->id);
			continue;
		}
		struct pb_reader sf;
		if (pb_read_len(&m, &sf))
			return errbuf_set(r->err, r->errlen, "node %u: malformed stack", n->id);
		struct str name = {0}, libtype = {0}, file = {0};
		uint32_t line = 0;
		while (!pb_reader_done(&sf)) {
			int rc;
			struct pb_reader fm;
			if (pb_read_tag(&sf, &field, &wire))
				return errbuf_set(r->err, r->errlen,
						  "node %u: malformed stack frame", n->id);
			if (field == 1)
				rc = read_str(&sf, wire, &name);
			else if (field == 2)
				rc = read_str(&sf, wire, &libtype);
			else if (field == 3)
				rc = wire != PB_LEN || pb_read_len(&sf, &fm) ||
				     parse_file(&fm, &file, &line);
			else
				rc = pb_skip(&sf, wire);
			if (rc)
				return errbuf_set(r->err, r->errlen,
						  "node %u: malformed stack frame", n->id);
		}
		stack = profile_stack_child(p, stack, intern_frame(p, r, name, libtype, file, line));
	}
	n->comm = frames_strdup(p->frames, cstr(r, n->name));
	n->stack = stack;
	n->state = DONE;
	return 0;
}

static uint32_t thread_of(struct reader *r, struct profile *p, uint32_t pid, uint32_t tid,
			  const char *comm)
{
	/* comm is interned: its pointer identifies it */
	uint64_t h = hash_bytes(&comm, sizeof(comm), pair_key(pid, tid));
	size_t pos;
	for (const uint64_t *v = hashmap_first(&r->threads, h, &pos); v;
	     v = hashmap_again(&r->threads, h, &pos)) {
		const struct thread_info *t = &p->threads[*v];
		if (t->pid == pid && t->tid == tid && t->comm == comm)
			return (uint32_t)*v;
	}
	uint32_t idx = profile_thread_intern(p, pid, tid, comm);
	hashmap_add(&r->threads, h, idx);
	return idx;
}

/* start_ns moved by `seconds` (either sign), clamped at 0. The offset is
 * taken relative to the start for nanosecond precision where it matters, and
 * kept unsigned: times up to NFLX_MAX_SECONDS apart (1e19 ns) do not fit an
 * int64_t. */
static uint64_t ns_after(uint64_t start_ns, double seconds)
{
	double ns = seconds * 1e9;
	if (ns >= 0) {
		if (ns >= (double)(UINT64_MAX - start_ns))
			return UINT64_MAX;
		return start_ns + (uint64_t)(ns + 0.5);
	}
	uint64_t back = -ns >= (double)start_ns ? start_ns : (uint64_t)(-ns + 0.5);
	return back >= start_ns ? 0 : start_ns - back;
}

static void set_meta_fmt(struct profile *p, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_meta_fmt(struct profile *p, const char *key, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	profile_meta_set(p, key, buf);
}

/* The start time in range, and every per-sample field as long as the
 * samples (or absent). */
static int check_counts(const struct reader *r)
{
	size_t n = r->nsamples;
	if (!r->has_start)
		return errbuf_set(r->err, r->errlen, "no start_time (a required field)");
	if (!isfinite(r->start_time) || r->start_time < 0 || r->start_time > NFLX_MAX_SECONDS)
		return errbuf_set(r->err, r->errlen, "start_time %g out of range", r->start_time);
	if (r->has_end && !isfinite(r->end_time))
		return errbuf_set(r->err, r->errlen, "end_time is not a number");
	if (r->ndeltas != n)
		return errbuf_set(r->err, r->errlen,
				  "%zu samples but %zu time_deltas", n, r->ndeltas);
	if (r->npids && r->npids != n)
		return errbuf_set(r->err, r->errlen,
				  "%zu samples but %zu samples_pid", n, r->npids);
	if (r->ntids && r->ntids != n)
		return errbuf_set(r->err, r->errlen,
				  "%zu samples but %zu samples_tid", n, r->ntids);
	if (r->ncpus && r->ncpus != n)
		return errbuf_set(r->err, r->errlen,
				  "%zu samples but %zu samples_cpu", n, r->ncpus);
	if (r->nvalues && r->nvalues != n)
		return errbuf_set(r->err, r->errlen,
				  "%zu samples but %zu samples_value", n, r->nvalues);
	return 0;
}

/* The nodes sorted by id (each id once) and linked to their parents, the
 * root (if any) resolved: its index in *root, else NONE. */
static int index_nodes(struct reader *r, struct profile *p, uint32_t *root_out)
{
	if (r->nnodes)
		qsort(r->nodes, r->nnodes, sizeof(*r->nodes), order_u32);
	for (size_t i = 1; i < r->nnodes; i++)
		if (r->nodes[i].id == r->nodes[i - 1].id)
			return errbuf_set(r->err, r->errlen,
					  "node %u appears twice", r->nodes[i].id);
	if (link_nodes(r, flag(r, "has_parent")))
		return -1;
	uint32_t root = find_node(r, 0);
	if (root != NONE) {
		r->nodes[root].state = DONE;
		r->nodes[root].level = 0;
		r->nodes[root].comm = frames_strdup(p->frames, "");
		r->nodes[root].stack = 0;
	}
	*root_out = root;
	return 0;
}

/* Metadata: ours back from the "sonde.KEY" params, then what this file
 * says (its title). */
static void meta_from_params(struct reader *r, struct profile *p)
{
	for (size_t i = 0; i < r->nparams; i++) {
		struct str k = r->params[i][0];
		size_t pl = strlen(PARAM_PREFIX);
		if (k.len > pl && memcmp(k.p, PARAM_PREFIX, pl) == 0) {
			char *key = xstrdup(cstr(r, (struct str){k.p + pl, k.len - pl}));
			profile_meta_set(p, key, cstr(r, r->params[i][1]));
			free(key);
		}
	}
	if (r->title.len && !profile_meta_get(p, "title"))
		profile_meta_set(p, "title", cstr(r, r->title));
}

/* One sample per entry of `samples`, its node resolved to a comm and a
 * stack, its time start_ns plus the deltas summed so far; *last_ns: the
 * latest time (start_ns at least). */
static int add_samples(struct reader *r, struct profile *p, uint32_t root, uint32_t event,
		       uint64_t start_ns, uint64_t *last_ns)
{
	bool node_stack = flag(r, "has_node_stack");
	double cur = r->start_time;
	*last_ns = start_ns;
	for (size_t i = 0; i < r->nsamples; i++) {
		uint32_t idx = find_node(r, r->samples[i]);
		if (idx == NONE)
			return errbuf_set(r->err, r->errlen,
					  "sample %zu: node %u does not exist", i, r->samples[i]);
		if (node_stack && idx != root ? resolve_node_stack(r, p, idx)
					      : resolve_parent(r, p, idx))
			return -1;
		const struct rnode *nd = &r->nodes[idx];
		cur += r->deltas[i];
		if (!isfinite(cur) || cur < 0 || cur > NFLX_MAX_SECONDS)
			return errbuf_set(r->err, r->errlen,
					  "sample %zu: time %g s out of range", i, cur);
		uint32_t pid = r->npids ? r->pids[i] : nd->has_pid ? nd->pid : 0;
		uint32_t tid = r->ntids ? r->tids[i] : nd->has_tid ? nd->tid : pid;
		struct sample s = {
			.time_ns = ns_after(start_ns, cur - r->start_time),
			.weight = r->nvalues ? r->values[i] : 1,
			.cpu = r->ncpus ? r->cpus[i] : 0,
			.thread = thread_of(r, p, pid, tid, nd->comm),
			.event = event,
			.stack = nd->stack,
		};
		if (s.weight > PROFILE_MAX_WEIGHT)
			return errbuf_set(r->err, r->errlen,
					  "sample %zu: value %" PRIu64 " is too large (at most %" PRIu64 ")",
					  i, s.weight, PROFILE_MAX_WEIGHT);
		if (profile_add_sample(p, &s, NULL, 0))
			return errbuf_set(r->err, r->errlen,
					  "sample %zu: the values add up to more than %" PRIu64
				       " (the most one profile holds)",
					  i, PROFILE_MAX_WEIGHT);
		if (s.time_ns > *last_ns)
			*last_ns = s.time_ns;
	}
	return 0;
}

/* The times a reader of the profile finds: start and end (end_time when it
 * lies past the last sample), the wall start, the duration. */
static void set_time_meta(const struct reader *r, struct profile *p, uint64_t start_ns,
			  uint64_t last_ns)
{
	uint64_t end_ns = last_ns;
	if (r->has_end && r->end_time > r->start_time && r->end_time <= NFLX_MAX_SECONDS) {
		uint64_t e = ns_after(start_ns, r->end_time - r->start_time);
		if (e > end_ns)
			end_ns = e;
	}
	profile_meta_set(p, "source_format", "nflxprofile");
	set_meta_fmt(p, "start_ns", "%llu", (unsigned long long)start_ns);
	set_meta_fmt(p, "end_ns", "%llu", (unsigned long long)end_ns);
	set_meta_fmt(p, "start_unix_s", "%.9f", r->start_time);
	set_meta_fmt(p, "duration_s", "%.6f", (double)(end_ns - start_ns) / 1e9);
	if (r->has_idle)
		set_meta_fmt(p, "idle_samples", "%llu", (unsigned long long)r->idle);
}

static int build(struct reader *r, struct profile *p)
{
	uint32_t root = NONE;
	if (check_counts(r) || index_nodes(r, p, &root))
		return -1;
	r->path = xmalloc((r->nnodes + 1) * sizeof(*r->path));
	meta_from_params(r, p);
	const char *ev = profile_meta_get(p, "event");
	uint32_t event = profile_event_intern(p, ev && *ev && strcmp(ev, "none") ? ev : "samples");
	uint64_t start_ns = (uint64_t)(r->start_time * 1e9 + 0.5), last_ns;
	if (add_samples(r, p, root, event, start_ns, &last_ns))
		return -1;
	set_time_meta(r, p, start_ns, last_ns);
	return 0;
}

static void reader_free(struct reader *r)
{
	free(r->samples);
	free(r->deltas);
	free(r->cpus);
	free(r->pids);
	free(r->tids);
	free(r->values);
	free(r->nodes);
	free(r->params);
	free(r->scratch);
	free(r->path);
	hashmap_free(&r->threads);
}

struct profile *nflx_read(const uint8_t *data, size_t len, char *err, size_t errlen)
{
	struct reader r = {.err = err, .errlen = errlen, .data = data};
	struct profile *p = NULL;
	if (!data || len == 0) {
		errbuf_set(r.err, r.errlen, "empty file");
		goto out;
	}
	if (parse_profile(&r, data, len))
		goto out;
	p = profile_new();
	if (build(&r, p)) {
		profile_free(p);
		p = NULL;
	}
out:
	if (!p)
		errbuf_prefix(err, errlen, "nflxprofile: ");
	reader_free(&r);
	return p;
}
