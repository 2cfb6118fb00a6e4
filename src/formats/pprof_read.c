/* pprof_read — a profile.proto message into a profile (pprof_read, pprof.h
 * says what comes back): pass 1 reads everything but the samples, every
 * string index and id is checked, locations become frames, then pass 2
 * reads the samples into stacks. Any inconsistency is one line of error. */
#define _GNU_SOURCE
#include "pprof.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "errbuf.h"
#include "pb.h"
#include "pprofproto.h"
#include "strpool.h"
#include "util.h"

#define NO_THREAD_COMM "pprof"

struct rstr {
	const uint8_t *p;
	size_t len;
};

struct rvtype {
	uint64_t type, unit;
};

struct rmapping {
	uint64_t id, start, offset, filename, build_id;
};

struct rfunction {
	uint64_t id, name, system_name, filename;
};

struct rline {
	uint64_t function_id;
	int64_t line;
};

struct rlocation {
	uint64_t id, mapping_id, address;
	size_t first, n; /* into lines */
};

struct reader {
	struct profile *p;
	char *err;
	size_t errlen;
	struct rstr *strs;
	size_t nstrs, strs_cap;
	char **cstrs; /* NUL-terminated copies, made when needed */
	struct rvtype *types;
	size_t ntypes, types_cap;
	struct rvtype period_type;
	bool has_period_type;
	uint64_t period, time_nanos, duration_nanos, default_type;
	uint64_t *comments;
	size_t ncomments, comments_cap;
	struct rmapping *maps;
	size_t nmaps, maps_cap;
	struct rfunction *funcs;
	size_t nfuncs, funcs_cap;
	struct rline *lines;
	size_t nlines, lines_cap;
	struct rlocation *locs;
	size_t nlocs, locs_cap;
	size_t nsamples;
	struct strpool map_ids, func_ids, loc_ids;
	uint32_t *loc_frames; /* per location, root first */
	size_t nloc_frames, loc_frames_cap;
	size_t *loc_first;  /* into loc_frames */
	struct strpool stacks; /* location id lists -> index into stack_node */
	uint32_t *stack_node;
	size_t stack_node_cap;
	struct strpool threads, events; /* memo: (pid, tid, comm) / event name -> index */
	uint64_t expanded;
	/* the sample being read */
	uint64_t *ids;
	size_t nids, ids_cap;
	uint64_t *vals;
	size_t nvals, vals_cap;
	size_t value_index;
	uint32_t default_event;
};

static const char *cstr(struct reader *r, uint64_t i)
{
	if (i >= r->nstrs)
		return "";
	if (!r->cstrs[i]) {
		char *s = xmalloc(r->strs[i].len + 1);
		if (r->strs[i].len)
			memcpy(s, r->strs[i].p, r->strs[i].len);
		s[r->strs[i].len] = 0;
		r->cstrs[i] = s;
	}
	return r->cstrs[i];
}

static bool str_is(const struct reader *r, uint64_t i, const char *s)
{
	size_t n = strlen(s);
	return i < r->nstrs && r->strs[i].len == n && memcmp(r->strs[i].p, s, n) == 0;
}

static int read_u64(struct pb_reader *m, enum pb_wire wire, uint64_t *v)
{
	return wire == PB_VARINT ? pb_read_varint(m, v) : -1;
}

/* The varint fields of a message that land in uint64_t (or int64_t)
 * members: field number -> member offset, FIELD_DROP for a varint read and
 * dropped. Other fields are skipped whatever their wire type. */
struct u64_field {
	uint32_t field;
	size_t offset;
};
#define FIELD_DROP SIZE_MAX

static int read_u64_field(struct pb_reader *m, uint32_t f, enum pb_wire wire, void *obj,
			  const struct u64_field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (fields[i].field != f)
			continue;
		uint64_t drop;
		if (fields[i].offset == FIELD_DROP)
			return read_u64(m, wire, &drop);
		return read_u64(m, wire, (uint64_t *)((char *)obj + fields[i].offset));
	}
	return pb_skip(m, wire);
}

static int read_u64_message(struct pb_reader *m, void *obj, const struct u64_field *fields,
			    size_t n)
{
	while (!pb_reader_done(m)) {
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(m, &f, &wire) || read_u64_field(m, f, wire, obj, fields, n))
			return -1;
	}
	return 0;
}

#define NFIELDS(a) (sizeof(a) / sizeof(*(a)))

static int read_value_type(struct pb_reader *m, struct rvtype *vt)
{
	static const struct u64_field fields[] = {{1, offsetof(struct rvtype, type)},
						  {2, offsetof(struct rvtype, unit)}};
	*vt = (struct rvtype){0};
	return read_u64_message(m, vt, fields, NFIELDS(fields));
}

static int read_mapping(struct pb_reader *m, struct rmapping *mp)
{
	static const struct u64_field fields[] = {
		{1, offsetof(struct rmapping, id)},	  {2, offsetof(struct rmapping, start)},
		{3, FIELD_DROP},				  {4, offsetof(struct rmapping, offset)},
		{5, offsetof(struct rmapping, filename)}, {6, offsetof(struct rmapping, build_id)},
		{7, FIELD_DROP},				  {8, FIELD_DROP},
		{9, FIELD_DROP},				  {10, FIELD_DROP},
	};
	*mp = (struct rmapping){0};
	return read_u64_message(m, mp, fields, NFIELDS(fields));
}

static int read_function(struct pb_reader *m, struct rfunction *fn)
{
	static const struct u64_field fields[] = {
		{1, offsetof(struct rfunction, id)},	      {2, offsetof(struct rfunction, name)},
		{3, offsetof(struct rfunction, system_name)}, {4, offsetof(struct rfunction, filename)},
		{5, FIELD_DROP},
	};
	*fn = (struct rfunction){0};
	return read_u64_message(m, fn, fields, NFIELDS(fields));
}

/* line is int64 in profile.proto: its varint is the same two's complement
 * bits, stored through its unsigned type. */
static int read_line(struct pb_reader *m, struct rline *ln)
{
	static const struct u64_field fields[] = {{1, offsetof(struct rline, function_id)},
						  {2, offsetof(struct rline, line)}};
	*ln = (struct rline){0};
	return read_u64_message(m, ln, fields, NFIELDS(fields));
}

static int read_location(struct reader *r, struct pb_reader *m, struct rlocation *loc)
{
	static const struct u64_field fields[] = {
		{1, offsetof(struct rlocation, id)},
		{2, offsetof(struct rlocation, mapping_id)},
		{3, offsetof(struct rlocation, address)},
		{5, FIELD_DROP},
	};
	*loc = (struct rlocation){.first = r->nlines};
	while (!pb_reader_done(m)) {
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(m, &f, &wire))
			return -1;
		if (f == 4) {
			struct pb_reader sub;
			if (wire != PB_LEN || pb_read_len(m, &sub))
				return -1;
			grow_array((void **)&r->lines, &r->lines_cap, r->nlines + 1,
				   sizeof(*r->lines));
			if (read_line(&sub, &r->lines[r->nlines]))
				return -1;
			r->nlines++;
			loc->n++;
			continue;
		}
		if (read_u64_field(m, f, wire, loc, fields, NFIELDS(fields)))
			return -1;
	}
	return 0;
}

static int push_comment(void *arg, uint64_t v)
{
	struct reader *r = arg;
	grow_array((void **)&r->comments, &r->comments_cap, r->ncomments + 1,
		   sizeof(*r->comments));
	r->comments[r->ncomments++] = v;
	return 0;
}

static const char *field_name(uint32_t f)
{
	static const char *names[] = {
		"",
		"sample_type",
		"sample",
		"mapping",
		"location",
		"function",
		"string_table",
		"drop_frames",
		"keep_frames",
		"time_nanos",
		"duration_nanos",
		"period_type",
		"period",
		"comment",
		"default_sample_type",
		"doc_url",
	};
	return f < sizeof(names) / sizeof(*names) ? names[f] : "unknown field";
}

/* Pass 1: everything but the samples, which are only counted. */
static int read_top(struct reader *r, const uint8_t *data, size_t len)
{
	struct pb_reader top;
	pb_reader_init(&top, data, len);
	while (!pb_reader_done(&top)) {
		size_t at = (size_t)(top.p - data);
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(&top, &f, &wire))
			return errbuf_set(r->err, r->errlen,
					  "not a profile.proto message: bad field tag at byte %zu",
					  at);
		struct pb_reader sub;
		int rc = 0;
		bool len_field = f == P_SAMPLE_TYPE || f == P_SAMPLE || f == P_MAPPING ||
				 f == P_LOCATION || f == P_FUNCTION || f == P_STRING_TABLE ||
				 f == P_PERIOD_TYPE;
		if (len_field) {
			if (wire != PB_LEN || pb_read_len(&top, &sub))
				goto bad;
		}
		switch (f) {
		case P_SAMPLE_TYPE:
			grow_array((void **)&r->types, &r->types_cap, r->ntypes + 1,
				   sizeof(*r->types));
			rc = read_value_type(&sub, &r->types[r->ntypes++]);
			break;
		case P_SAMPLE:
			if (++r->nsamples > PPROF_MAX_SAMPLES)
				return errbuf_set(r->err, r->errlen,
						  "more than %u samples: refusing to load",
						  PPROF_MAX_SAMPLES);
			break;
		case P_MAPPING:
			grow_array((void **)&r->maps, &r->maps_cap, r->nmaps + 1,
				   sizeof(*r->maps));
			rc = read_mapping(&sub, &r->maps[r->nmaps++]);
			break;
		case P_LOCATION:
			grow_array((void **)&r->locs, &r->locs_cap, r->nlocs + 1,
				   sizeof(*r->locs));
			rc = read_location(r, &sub, &r->locs[r->nlocs]);
			r->nlocs++;
			break;
		case P_FUNCTION:
			grow_array((void **)&r->funcs, &r->funcs_cap, r->nfuncs + 1,
				   sizeof(*r->funcs));
			rc = read_function(&sub, &r->funcs[r->nfuncs++]);
			break;
		case P_STRING_TABLE:
			grow_array((void **)&r->strs, &r->strs_cap, r->nstrs + 1,
				   sizeof(*r->strs));
			r->strs[r->nstrs++] = (struct rstr){sub.p, (size_t)(sub.end - sub.p)};
			break;
		case P_PERIOD_TYPE:
			r->has_period_type = true;
			rc = read_value_type(&sub, &r->period_type);
			break;
		case P_TIME_NANOS:
			rc = read_u64(&top, wire, &r->time_nanos);
			break;
		case P_DURATION_NANOS:
			rc = read_u64(&top, wire, &r->duration_nanos);
			break;
		case P_PERIOD:
			rc = read_u64(&top, wire, &r->period);
			break;
		case P_DEFAULT_SAMPLE_TYPE:
			rc = read_u64(&top, wire, &r->default_type);
			break;
		case P_COMMENT:
			rc = pb_read_uints(&top, wire, push_comment, r);
			break;
		default:
			rc = pb_skip(&top, wire);
			break;
		}
		if (rc)
			goto bad;
		continue;
	bad:
		return errbuf_set(r->err, r->errlen,
				  "malformed or truncated %s (field %u at byte %zu)", field_name(f),
				  f, at);
	}
	return 0;
}

static int check_str(struct reader *r, uint64_t i, const char *what, uint64_t id)
{
	if (i < r->nstrs)
		return 0;
	return errbuf_set(r->err, r->errlen,
			  "%s %" PRIu64 " refers to string %" PRIu64 " of a table of %zu", what, id,
			  i, r->nstrs);
}

static int check_strings(struct reader *r)
{
	if (r->nstrs == 0)
		return errbuf_set(r->err, r->errlen, "no string table");
	if (r->strs[0].len != 0)
		return errbuf_set(r->err, r->errlen, "string_table[0] is not the empty string");
	for (size_t i = 0; i < r->ntypes; i++)
		if (check_str(r, r->types[i].type, "sample_type", i) ||
		    check_str(r, r->types[i].unit, "sample_type", i))
			return -1;
	if (r->has_period_type && (check_str(r, r->period_type.type, "period_type", 0) ||
				   check_str(r, r->period_type.unit, "period_type", 0)))
		return -1;
	if (check_str(r, r->default_type, "default_sample_type", 0))
		return -1;
	for (size_t i = 0; i < r->ncomments; i++)
		if (check_str(r, r->comments[i], "comment", i))
			return -1;
	for (size_t i = 0; i < r->nmaps; i++)
		if (check_str(r, r->maps[i].filename, "mapping", r->maps[i].id) ||
		    check_str(r, r->maps[i].build_id, "mapping", r->maps[i].id))
			return -1;
	for (size_t i = 0; i < r->nfuncs; i++)
		if (check_str(r, r->funcs[i].name, "function", r->funcs[i].id) ||
		    check_str(r, r->funcs[i].system_name, "function", r->funcs[i].id) ||
		    check_str(r, r->funcs[i].filename, "function", r->funcs[i].id))
			return -1;
	return 0;
}

static int index_ids(struct reader *r, struct strpool *t, const void *items, size_t n, size_t size,
		     const char *what)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t id;
		memcpy(&id, (const uint8_t *)items + i * size,
		       sizeof(id)); /* id is each struct's first member */
		if (id == 0)
			return errbuf_set(r->err, r->errlen, "a %s has id 0", what);
		bool added;
		strpool_add(t, &id, sizeof(id), &added);
		if (!added)
			return errbuf_set(r->err, r->errlen, "two %ss have id %" PRIu64, what, id);
	}
	return 0;
}

static bool is_kernel_file(const char *f)
{
	if (strncmp(f, KERNEL_MAPPING, strlen(KERNEL_MAPPING)) == 0)
		return true;
	const char *base = strrchr(f, '/');
	base = base ? base + 1 : f;
	if (strncmp(base, "vmlinux", 7) == 0)
		return true;
	const char *ko = strstr(base, ".ko");
	if (ko && (ko[3] == 0 || ko[3] == '.'))
		return true; /* ext4.ko, ext4.ko.zst */
	size_t n = strlen(f);
	if (n > 2 && f[0] == '[' && f[n - 1] == ']') {
		/* "[ext4]" is a kernel module as kallsyms names them; these are
		 * the user-space pseudo-files of /proc/PID/maps. */
		static const char *user[] = {"[vdso]",	  "[vsyscall]", "[vvar]", "[vectors]",
					     "[sigpage]", "[stack]",	"[heap]", "[uprobes]"};
		for (size_t i = 0; i < sizeof(user) / sizeof(*user); i++)
			if (strcmp(f, user[i]) == 0)
				return false;
		return strncmp(f, "[anon", 5) != 0 && strncmp(f, "[stack:", 7) != 0 &&
		       strncasecmp(f, "[jit", 4) != 0 && strncmp(f, "[vvar", 5) != 0;
	}
	return false;
}

static bool is_jit_file(const char *f)
{
	const char *base = strrchr(f, '/');
	base = base ? base + 1 : f;
	if (strncasecmp(f, "[jit", 4) == 0)
		return true;
	if (strncmp(base, "perf-", 5) != 0)
		return false;
	const char *c = base + 5;
	if (!(*c >= '0' && *c <= '9'))
		return false;
	while (*c >= '0' && *c <= '9')
		c++;
	return strcmp(c, ".map") == 0;
}

static bool bracketed(const char *s)
{
	size_t n = strlen(s);
	return n >= 2 && s[0] == '[' && s[n - 1] == ']';
}

/* Interns every location's frames, root first (its last line first). */
static int build_locations(struct reader *r)
{
	struct profile *p = r->p;
	r->loc_first = xcalloc(r->nlocs + 1, sizeof(*r->loc_first));
	for (size_t i = 0; i < r->nlocs; i++) {
		const struct rlocation *loc = &r->locs[i];
		r->loc_first[i] = r->nloc_frames;
		const char *module = "";
		uint64_t rel = loc->address;
		if (loc->mapping_id) {
			uint32_t m;
			if (!strpool_find(&r->map_ids, &loc->mapping_id, sizeof(loc->mapping_id), &m))
				return errbuf_set(r->err, r->errlen,
						  "location %" PRIu64
						  " refers to unknown mapping %" PRIu64,
						  loc->id, loc->mapping_id);
			module = cstr(r, r->maps[m].filename);
			if (loc->address >= r->maps[m].start)
				rel = loc->address - r->maps[m].start + r->maps[m].offset;
		}
		enum frame_kind base = is_kernel_file(module) ? FRAME_KERNEL
				       : is_jit_file(module)  ? FRAME_JIT
							      : FRAME_USER;
		size_t need = loc->n ? loc->n : 1;
		grow_array((void **)&r->loc_frames, &r->loc_frames_cap, r->nloc_frames + need,
			   sizeof(*r->loc_frames));
		if (loc->n == 0) {
			/* Not symbolized: name the address, as sonde names unknown frames. */
			char name[512];
			const char *label = strrchr(module, '/');
			label = label ? label + 1 : module;
			if (!*label && !loc->address)
				snprintf(name, sizeof(name), "[unknown]");
			else if (!*label)
				snprintf(name, sizeof(name), "[unknown+0x%" PRIx64 "]", loc->address);
			else
				snprintf(name, sizeof(name), "[%.400s+0x%" PRIx64 "]", label, rel);
			r->loc_frames[r->nloc_frames++] =
				frames_intern(p->frames, name, module, "", 0, FRAME_UNKNOWN);
			continue;
		}
		for (size_t k = loc->n; k-- > 0;) {
			const struct rline *ln = &r->lines[loc->first + k];
			uint32_t fi;
			if (!strpool_find(&r->func_ids, &ln->function_id, sizeof(ln->function_id), &fi))
				return errbuf_set(r->err, r->errlen,
						  "location %" PRIu64
						  " refers to unknown function %" PRIu64,
						  loc->id, ln->function_id);
			const struct rfunction *fn = &r->funcs[fi];
			const char *name = cstr(r, fn->name);
			if (!*name)
				name = cstr(r, fn->system_name);
			if (!*name)
				name = "[unknown]";
			enum frame_kind kind = k + 1 < loc->n	 ? FRAME_INLINED
					       : bracketed(name) ? FRAME_UNKNOWN
								 : base;
			uint32_t line = ln->line < 0		? 0
					: ln->line > UINT32_MAX ? UINT32_MAX
								: (uint32_t)ln->line;
			uint32_t id = frames_intern(p->frames, name, module, cstr(r, fn->filename),
						    line, kind);
			const char *sys = cstr(r, fn->system_name);
			if (strcmp(sys, name) != 0)
				frames_set_system_name(p->frames, id, sys);
			r->loc_frames[r->nloc_frames++] = id;
		}
	}
	r->loc_first[r->nlocs] = r->nloc_frames;
	return 0;
}

static int push_id(void *arg, uint64_t v)
{
	struct reader *r = arg;
	if (r->nids >= PPROF_MAX_DEPTH)
		return -1;
	grow_array((void **)&r->ids, &r->ids_cap, r->nids + 1, sizeof(*r->ids));
	r->ids[r->nids++] = v;
	return 0;
}

static int push_val(void *arg, uint64_t v)
{
	struct reader *r = arg;
	if (r->nvals < r->ntypes) {
		grow_array((void **)&r->vals, &r->vals_cap, r->nvals + 1, sizeof(*r->vals));
		r->vals[r->nvals] = v;
	}
	r->nvals++; /* counted past the types, to say how many there were */
	return 0;
}

static uint32_t event_index(struct reader *r, const char *name)
{
	bool added;
	uint32_t i = strpool_add(&r->events, name, strlen(name), &added);
	if (added) {
		struct profile *p = r->p;
		grow_array((void **)&p->events, &p->events_cap, p->nevents + 1,
			   sizeof(*p->events));
		p->events[p->nevents++] = xstrdup(name);
	}
	return i;
}

static uint32_t thread_index(struct reader *r, uint32_t pid, uint32_t tid, const char *comm)
{
	struct profile *p = r->p;
	comm = frames_strdup(p->frames, comm);
	uint64_t key[2] = {(uint64_t)pid << 32 | tid, (uint64_t)(uintptr_t)comm};
	bool added;
	uint32_t i = strpool_add(&r->threads, key, sizeof(key), &added);
	if (added)
		profile_thread_intern(p, pid, tid, comm); /* new key: appended at index i */
	return i;
}

struct rlabels {
	uint64_t comm, event; /* string indices */
	bool has_comm, has_event;
	uint64_t pid, tid, time;
};

static bool parse_uint_str(const struct rstr *s, uint64_t *v)
{
	if (s->len == 0 || s->len > 20)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < s->len; i++) {
		if (s->p[i] < '0' || s->p[i] > '9' || x > UINT64_MAX / 10)
			return false;
		x = x * 10 + (s->p[i] - '0');
	}
	*v = x;
	return true;
}

static int read_label(struct reader *r, struct pb_reader *m, struct rlabels *out, size_t sample)
{
	uint64_t key = 0, str = 0, num = 0, unit = 0;
	while (!pb_reader_done(m)) {
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(m, &f, &wire))
			return errbuf_set(r->err, r->errlen, "sample %zu: malformed label", sample);
		uint64_t *dst = f == 1	 ? &key
				: f == 2 ? &str
				: f == 3 ? &num
				: f == 4 ? &unit
					 : NULL;
		if (dst ? read_u64(m, wire, dst) : pb_skip(m, wire))
			return errbuf_set(r->err, r->errlen, "sample %zu: malformed label", sample);
	}
	if (check_str(r, key, "label of sample", sample) ||
	    check_str(r, str, "label of sample", sample) ||
	    check_str(r, unit, "label of sample", sample))
		return -1;
	uint64_t v;
	if (str_is(r, key, "thread")) {
		out->comm = str;
		out->has_comm = true;
	} else if (str_is(r, key, "event")) {
		out->event = str;
		out->has_event = true;
	} else if (str_is(r, key, "pid"))
		out->pid = str && parse_uint_str(&r->strs[str], &v) ? v : num;
	else if (str_is(r, key, "tid"))
		out->tid = str && parse_uint_str(&r->strs[str], &v) ? v : num;
	else if (str_is(r, key, "timestamp_ns"))
		out->time = num;
	return 0;
}

/* The stack node of a sample's location ids (leaf first), memoized. */
static int sample_stack(struct reader *r, size_t sample, uint32_t *node_out)
{
	size_t keylen = r->nids * sizeof(*r->ids);
	uint32_t memo;
	if (strpool_find(&r->stacks, r->ids, keylen, &memo)) {
		*node_out = r->stack_node[memo];
		return 0;
	}
	struct profile *p = r->p;
	uint32_t node = 0;
	size_t depth = 0;
	for (size_t i = r->nids; i-- > 0;) {
		uint32_t li;
		if (!strpool_find(&r->loc_ids, &r->ids[i], sizeof(r->ids[i]), &li))
			return errbuf_set(r->err, r->errlen,
					  "sample %zu refers to unknown location %" PRIu64, sample,
					  r->ids[i]);
		size_t first = r->loc_first[li], n = r->loc_first[li + 1] - first;
		depth += n;
		r->expanded += n;
		if (depth > PPROF_MAX_DEPTH)
			return errbuf_set(r->err, r->errlen,
					  "sample %zu: stack deeper than %u frames", sample,
					  PPROF_MAX_DEPTH);
		if (r->expanded > PPROF_MAX_EXPANDED)
			return errbuf_set(r->err, r->errlen,
					  "stacks expand to more than %u frames: refusing to load",
					  PPROF_MAX_EXPANDED);
		for (size_t k = 0; k < n; k++)
			node = profile_stack_child(p, node, r->loc_frames[first + k]);
	}
	uint32_t idx = strpool_add(&r->stacks, r->ids, keylen, NULL);
	grow_array((void **)&r->stack_node, &r->stack_node_cap, (size_t)idx + 1,
		   sizeof(*r->stack_node));
	r->stack_node[idx] = node;
	*node_out = node;
	return 0;
}

static int read_sample(struct reader *r, struct pb_reader *m, size_t sample)
{
	r->nids = r->nvals = 0;
	struct rlabels lab = {0};
	while (!pb_reader_done(m)) {
		uint32_t f;
		enum pb_wire wire;
		if (pb_read_tag(m, &f, &wire))
			return errbuf_set(r->err, r->errlen, "sample %zu is malformed", sample);
		if (f == 1) {
			if (pb_read_uints(m, wire, push_id, r)) {
				if (r->nids >= PPROF_MAX_DEPTH)
					return errbuf_set(r->err, r->errlen,
							  "sample %zu: more than %u locations",
							  sample, PPROF_MAX_DEPTH);
				return errbuf_set(r->err, r->errlen,
						  "sample %zu has malformed location ids", sample);
			}
		} else if (f == 2) {
			if (pb_read_uints(m, wire, push_val, r))
				return errbuf_set(r->err, r->errlen,
						  "sample %zu has malformed values", sample);
		} else if (f == 3) {
			struct pb_reader sub;
			if (wire != PB_LEN || pb_read_len(m, &sub))
				return errbuf_set(r->err, r->errlen,
						  "sample %zu: malformed label", sample);
			if (read_label(r, &sub, &lab, sample))
				return -1;
		} else if (pb_skip(m, wire)) {
			return errbuf_set(r->err, r->errlen, "sample %zu is malformed", sample);
		}
	}
	if (r->nvals != r->ntypes)
		return errbuf_set(r->err, r->errlen,
				  "sample %zu has %zu values for %zu sample types", sample, r->nvals,
				  r->ntypes);
	int64_t value = (int64_t)r->vals[r->value_index];
	if (value < 0)
		return errbuf_set(r->err, r->errlen,
				  "sample %zu has a negative value (diff profiles are not supported)",
				  sample);
	struct sample s = {.weight = (uint64_t)value, .time_ns = lab.time};
	if (sample_stack(r, sample, &s.stack))
		return -1;
	if (value == 0)
		return 0;
	s.thread = thread_index(r, (uint32_t)lab.pid, (uint32_t)lab.tid,
				lab.has_comm ? cstr(r, lab.comm) : NO_THREAD_COMM);
	s.event = lab.has_event ? event_index(r, cstr(r, lab.event)) : r->default_event;
	if (profile_add_sample(r->p, &s, NULL, 0))
		return errbuf_set(r->err, r->errlen,
				  "sample %zu: the values add up to more than %" PRIu64
			       " (the most one profile holds)",
				  sample, PROFILE_MAX_WEIGHT);
	return 0;
}

static int read_samples(struct reader *r, const uint8_t *data, size_t len)
{
	struct pb_reader top;
	pb_reader_init(&top, data, len);
	size_t n = 0;
	while (!pb_reader_done(&top)) {
		uint32_t f;
		enum pb_wire wire;
		struct pb_reader sub;
		if (pb_read_tag(&top, &f, &wire))
			return errbuf_set(r->err, r->errlen,
					  "malformed protobuf"); /* pass 1 read it: cannot happen */
		if (f != P_SAMPLE) {
			if (pb_skip(&top, wire))
				return errbuf_set(r->err, r->errlen, "malformed protobuf");
			continue;
		}
		if (pb_read_len(&top, &sub))
			return errbuf_set(r->err, r->errlen, "malformed protobuf");
		if (read_sample(r, &sub, n++))
			return -1;
	}
	return 0;
}

static void set_meta_seconds(struct profile *p, const char *key, uint64_t ns)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%" PRIu64 ".%06" PRIu64, ns / 1000000000,
		 ns % 1000000000 / 1000);
	profile_meta_set(p, key, buf);
}

static void set_meta_u64(struct profile *p, const char *key, uint64_t v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	profile_meta_set(p, key, buf);
}

static void set_meta(struct reader *r)
{
	struct profile *p = r->p;
	profile_meta_set(p, "source_format", "pprof");
	if (r->ntypes) {
		const struct rvtype *t = &r->types[r->value_index];
		profile_meta_set(p, "event", cstr(r, t->type));
		char *all = xstrdup("");
		for (size_t i = 0; i < r->ntypes; i++) {
			char *next =
				xasprintf("%s%s%s/%s", all, i ? "," : "",
					  cstr(r, r->types[i].type), cstr(r, r->types[i].unit));
			free(all);
			all = next;
			if (strlen(all) > 4096)
				break;
		}
		profile_meta_set(p, "sample_types", all);
		free(all);
	}
	if (r->time_nanos && r->time_nanos < (uint64_t)INT64_MAX)
		set_meta_seconds(p, "start_unix_s", r->time_nanos);
	if (r->duration_nanos && r->duration_nanos < (uint64_t)INT64_MAX)
		set_meta_seconds(p, "duration_s", r->duration_nanos);
	if (r->period && r->period < (uint64_t)INT64_MAX) {
		if (r->has_period_type && str_is(r, r->period_type.unit, "nanoseconds")) {
			set_meta_u64(p, "frequency_hz",
				     (uint64_t)llround(1e9 / (double)r->period));
			set_meta_u64(p, "period", 0);
		} else {
			set_meta_u64(p, "frequency_hz", 0);
			set_meta_u64(p, "period", r->period);
		}
	}
	if (r->ncomments) {
		/* Joined by newlines, up to 64 KiB. */
		size_t cap = 0, len = 0;
		char *all = NULL;
		for (size_t i = 0; i < r->ncomments && len < 65536; i++) {
			const struct rstr *c = &r->strs[r->comments[i]];
			size_t n = c->len < 65536 ? c->len : 65536;
			grow_array((void **)&all, &cap, len + n + 2, 1);
			if (i)
				all[len++] = '\n';
			if (n)
				memcpy(all + len, c->p, n);
			len += n;
		}
		all[len] = 0;
		profile_meta_set(p, "comments", all);
		free(all);
	}
}

static void reader_free(struct reader *r)
{
	for (size_t i = 0; r->cstrs && i < r->nstrs; i++)
		free(r->cstrs[i]);
	free(r->cstrs);
	free(r->strs);
	free(r->types);
	free(r->comments);
	free(r->maps);
	free(r->funcs);
	free(r->lines);
	free(r->locs);
	strpool_free(&r->map_ids);
	strpool_free(&r->func_ids);
	strpool_free(&r->loc_ids);
	strpool_free(&r->stacks);
	strpool_free(&r->threads);
	strpool_free(&r->events);
	free(r->loc_frames);
	free(r->loc_first);
	free(r->stack_node);
	free(r->ids);
	free(r->vals);
}

static bool same_str(const struct reader *r, uint64_t a, uint64_t b)
{
	return a < r->nstrs && b < r->nstrs && r->strs[a].len == r->strs[b].len &&
	       (r->strs[a].len == 0 || memcmp(r->strs[a].p, r->strs[b].p, r->strs[a].len) == 0);
}

/* The sample type weights come from: "samples" if there is one, else
 * default_sample_type, else the first. */
static size_t weight_type(const struct reader *r)
{
	for (size_t i = 0; i < r->ntypes; i++)
		if (str_is(r, r->types[i].type, "samples"))
			return i;
	for (size_t i = 0; i < r->ntypes && r->default_type; i++)
		if (same_str(r, r->types[i].type, r->default_type))
			return i;
	return 0;
}

struct profile *pprof_read(const uint8_t *data, size_t len, char *err, size_t errlen)
{
	struct reader r = {.err = err, .errlen = errlen};
	if (errlen)
		err[0] = 0;
	if (read_top(&r, data, len) || check_strings(&r))
		goto fail;
	r.cstrs = xcalloc(r.nstrs, sizeof(*r.cstrs));
	if (r.nsamples && !r.ntypes) {
		errbuf_set(r.err, r.errlen, "samples but no sample_type");
		goto fail;
	}
	r.value_index = weight_type(&r);
	if (index_ids(&r, &r.map_ids, r.maps, r.nmaps, sizeof(*r.maps), "mapping") ||
	    index_ids(&r, &r.func_ids, r.funcs, r.nfuncs, sizeof(*r.funcs), "function") ||
	    index_ids(&r, &r.loc_ids, r.locs, r.nlocs, sizeof(*r.locs), "location"))
		goto fail;
	r.p = profile_new();
	if (build_locations(&r))
		goto fail;
	r.default_event =
		event_index(&r, r.ntypes ? cstr(&r, r.types[r.value_index].type) : "samples");
	if (read_samples(&r, data, len))
		goto fail;
	set_meta(&r);
	reader_free(&r);
	return r.p;
fail:
	if (errlen && !err[0])
		errbuf_set(err, errlen, "malformed profile");
	errbuf_prefix(err, errlen, "pprof: ");
	profile_free(r.p);
	reader_free(&r);
	return NULL;
}
