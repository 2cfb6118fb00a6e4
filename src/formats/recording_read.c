/* recording_read — a .sonde file into a profile: the file's tables checked
 * first (recording_schema), then read table by table within a budget of
 * SQLite steps, every id checked before it is used; and the formats
 * registry's entry. The contract is in recording.h (recording_load,
 * format_recording) and recording_loader.h (the refusals). */
#define _GNU_SOURCE
#include "recording.h"

#include <errno.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errbuf.h"
#include "owncost.h"
#include "recording_loader.h"
#include "recording_schema.h"
#include "registry.h"
#include "util.h"
#include "values.h"
#include "view.h"

/* What a hostile file may cost the loader: every table is read once and
 * sorted at most once, so a recording's load takes a number of SQLite steps
 * proportional to its size (measured: 0.1-0.5 per byte of file, about 25
 * million steps a second). Far more means the file makes SQLite loop. */
#define LOAD_STEPS_PER_BYTE 16
#define LOAD_STEPS_MIN 20000000ll
#define LOAD_PROGRESS_EVERY 10000 /* steps between two checks of the budget */
/* meta and events are small lists (dozens of keys, a few events) kept in
 * arrays searched by name: a file with millions of rows there is not a
 * recording. */
#define LOAD_MAX_META 10000
#define LOAD_MAX_EVENTS 10000
/* No value a recording holds comes near this: frame names are the longest. */
#define LOAD_MAX_VALUE_BYTES (16 << 20)

int recording_load_fail(struct loader *l, const char *what)
{
	return errbuf_set(l->err, l->errlen, "%s is not a readable sonde recording (%s)", l->path,
			  what);
}

/* A failed step: SQLite's reason, or ours when the step budget ran out. */
int recording_load_fail_sqlite(struct loader *l)
{
	if (l->steps_left <= 0)
		return recording_load_fail(l, "reading it makes SQLite work far longer than a recording of its "
				    "size needs: a hostile or corrupt file");
	return recording_load_fail(l, sqlite3_errmsg(l->db));
}

static int count_steps(void *arg)
{
	struct loader *l = arg;
	l->steps_left -= LOAD_PROGRESS_EVERY;
	return l->steps_left <= 0; /* non-zero interrupts the statement */
}

/* Thread states (none in older recordings), in pass order. */
static int load_thread_samples(struct loader *l)
{
	if (!l->has_thread_samples)
		return 0;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db,
			       l->thread_stacks
				       ? "SELECT time_ns, thread, state, state_ns, syscall_nr, syscall_ns,"
					 " span, probe, span_ns, before_start, syscall, stack, stack_ns,"
					 " stack_from FROM thread_samples ORDER BY id"
				       : "SELECT time_ns, thread, state, state_ns, syscall_nr, syscall_ns,"
					 " span, probe, span_ns, before_start, syscall FROM thread_samples"
					 " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 time = sqlite3_column_int64(st, 0), thread = sqlite3_column_int64(st, 1);
		const char *state = (const char *)sqlite3_column_text(st, 2);
		int s = state ? view_state_parse(state) : -1;
		bool in_call = sqlite3_column_type(st, 6) != SQLITE_NULL;
		sqlite3_int64 probe = sqlite3_column_int64(st, 7);
		if (thread < 0 || (size_t)thread >= l->p->nthreads || s < 0 || time < 0 ||
		    (in_call && (probe < 0 || (size_t)probe >= l->p->nprobes))) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a thread sample has a bad thread, state or probe");
		}
		uint64_t t = (uint64_t)time;
		struct thread_sample ts = {
			.time_ns = t,
			.state_since_ns = t - (uint64_t)sqlite3_column_int64(st, 3),
			.thread = (uint32_t)thread,
			.state = (uint8_t)s,
			.syscall = -1,
			.flags = (uint8_t)sqlite3_column_int64(st, 9),
		};
		if (sqlite3_column_type(st, 4) != SQLITE_NULL) {
			ts.syscall = (int32_t)sqlite3_column_int64(st, 4);
			ts.syscall_since_ns = t - (uint64_t)sqlite3_column_int64(st, 5);
			if (ts.syscall < 0) {
				sqlite3_finalize(st);
				return recording_load_fail(l, "a thread sample has a negative syscall_nr");
			}
		} else if (sqlite3_column_type(st, 10) == SQLITE_TEXT &&
			   strcmp((const char *)sqlite3_column_text(st, 10), "?") == 0) {
			ts.syscall = TSTATE_SYSCALL_UNKNOWN;
		}
		if (in_call) {
			ts.span_id = (uint64_t)sqlite3_column_int64(st, 6);
			ts.probe = (uint32_t)probe;
			ts.span_start_ns = t - (uint64_t)sqlite3_column_int64(st, 8);
		}
		if (l->thread_stacks && sqlite3_column_type(st, 11) != SQLITE_NULL) {
			sqlite3_int64 stack = sqlite3_column_int64(st, 11);
			const char *from = (const char *)sqlite3_column_text(st, 13);
			if (stack <= 0 || (size_t)stack >= l->nstack_map || !l->stack_map[stack] ||
			    !from || (strcmp(from, "left") && strcmp(from, "sample"))) {
				sqlite3_finalize(st);
				return recording_load_fail(l, "a thread sample has a bad stack or stack_from");
			}
			ts.stack = l->stack_map[stack];
			ts.stack_ns = t - (uint64_t)sqlite3_column_int64(st, 12);
			ts.stack_on_cpu = strcmp(from, "sample") == 0;
		}
		profile_add_thread_sample(l->p, &ts);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* Line probes: each probe's point bit, each span's points, and the calls
 * of function probes that hit each line (absent from older recordings). */
static int load_points(struct loader *l)
{
	sqlite3_stmt *st;
	int r = SQLITE_DONE;
	if (l->probe_kind) {
		if (sqlite3_prepare_v2(l->db, "SELECT id, point FROM probes WHERE point IS NOT NULL",
				       -1, &st, NULL) != SQLITE_OK)
			return recording_load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 id = sqlite3_column_int64(st, 0), pt = sqlite3_column_int64(st, 1);
			if (id < 0 || (size_t)id >= l->p->nprobes || pt < 0 || pt >= 64) {
				sqlite3_finalize(st);
				return recording_load_fail(l, "a line probe has a bad id or point");
			}
			l->p->probes[id].point = (int)pt;
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return recording_load_fail_sqlite(l);
	}
	if (l->span_points) {
		if (sqlite3_prepare_v2(l->db, "SELECT id, points FROM spans WHERE points != 0", -1,
				       &st, NULL) != SQLITE_OK)
			return recording_load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t i = profile_span_find(l->p, (uint64_t)sqlite3_column_int64(st, 0));
			if (i >= 0)
				l->p->spans[i].points = (uint64_t)sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return recording_load_fail_sqlite(l);
	}
	if (l->has_point_calls) {
		if (sqlite3_prepare_v2(l->db, "SELECT point_probe, probe, calls, hit FROM point_calls", -1,
				       &st, NULL) != SQLITE_OK)
			return recording_load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 pp = sqlite3_column_int64(st, 0), fp = sqlite3_column_int64(st, 1);
			if (pp < 0 || fp < 0 || (size_t)pp >= l->p->nprobes ||
			    (size_t)fp >= l->p->nprobes) {
				sqlite3_finalize(st);
				return recording_load_fail(l, "a point_calls row refers to a missing probe");
			}
			profile_point_calls_set(l->p, (uint32_t)pp, (uint32_t)fp,
						(uint64_t)sqlite3_column_int64(st, 2),
						(uint64_t)sqlite3_column_int64(st, 3));
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return recording_load_fail_sqlite(l);
	}
	if (l->has_branches) {
		if (sqlite3_prepare_v2(l->db,
				       "SELECT probe, location, line, jump, jumps, outcome, to_line,"
				       " instruction, source, copies, to_file, mixed FROM branches",
				       -1, &st, NULL) != SQLITE_OK)
			return recording_load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 id = sqlite3_column_int64(st, 0);
			const char *outcome = (const char *)sqlite3_column_text(st, 5);
			if (id < 0 || (size_t)id >= l->p->nprobes || l->p->probes[id].point < 0 ||
			    !outcome || (strcmp(outcome, "taken") && strcmp(outcome, "not-taken"))) {
				sqlite3_finalize(st);
				return recording_load_fail(
					l, "a branches row names no line probe or no outcome (taken, not-taken)");
			}
			struct probe_branch b = {
				.at = (char *)sqlite3_column_text(st, 1),
				.line = (unsigned)sqlite3_column_int64(st, 2),
				.jump = (unsigned)sqlite3_column_int64(st, 3),
				.jumps = (unsigned)sqlite3_column_int64(st, 4),
				.taken = strcmp(outcome, "taken") == 0,
				.to_line = (unsigned)sqlite3_column_int64(st, 6),
				.insn = (char *)sqlite3_column_text(st, 7),
				.source = (char *)sqlite3_column_text(st, 8),
				.copies = (unsigned)sqlite3_column_int64(st, 9),
				.to_file = (char *)sqlite3_column_text(st, 10),
				.mixed = sqlite3_column_int64(st, 11) != 0};
			profile_probe_set_branch(l->p, (uint32_t)id, &b);
		}
		sqlite3_finalize(st);
	}
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

static int load_meta(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	size_t rows = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (++rows > LOAD_MAX_META) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "more than 10000 meta rows");
		}
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (k && v)
			profile_meta_set(l->p, k, v);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return recording_load_fail_sqlite(l);
	const char *fmt = profile_meta_get(l->p, "format");
	const char *ver = profile_meta_get(l->p, "version");
	if (!fmt || strcmp(fmt, RECORDING_FORMAT) != 0)
		return recording_load_fail(l, "its meta table does not say format=" RECORDING_FORMAT);
	if (!ver || atoi(ver) != RECORDING_VERSION) {
		errbuf_set(l->err, l->errlen,
			 "%s is a sonde recording of version %s; this sonde reads version %d",
			 l->path, ver ? ver : "?", RECORDING_VERSION);
		return -1;
	}
	return 0;
}

static int load_events(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT name FROM events ORDER BY id", -1, &st, NULL) !=
	    SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (l->p->nevents >= LOAD_MAX_EVENTS) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "more than 10000 events");
		}
		const char *n = (const char *)sqlite3_column_text(st, 0);
		profile_event_intern(l->p, n ? n : "?");
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* map[id] = v in a file id -> profile id map, grown as needed (slots
 * between stay 0: no such id). */
static void id_map_set(uint32_t **map, size_t *n, size_t *cap, size_t id, uint32_t v)
{
	grow_array((void **)map, cap, id + 1, sizeof(**map));
	if (id + 1 > *n) {
		memset(*map + *n, 0, (id + 1 - *n) * sizeof(**map));
		*n = id + 1;
	}
	(*map)[id] = v;
}

static int load_frames(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db,
			       l->frame_system_names
				       ? "SELECT id, name, module, file, line, kind, system_name FROM frames"
				       : "SELECT id, name, module, file, line, kind FROM frames",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	size_t cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id <= 0 || (size_t)id > l->max_id) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "frame id out of range");
		}
		const char *kind = (const char *)sqlite3_column_text(st, 5);
		uint32_t fid = frames_intern(l->p->frames, (const char *)sqlite3_column_text(st, 1),
					     (const char *)sqlite3_column_text(st, 2),
					     (const char *)sqlite3_column_text(st, 3),
					     (uint32_t)sqlite3_column_int64(st, 4),
					     recording_kind_from_name(kind ? kind : ""));
		if (l->frame_system_names)
			frames_set_system_name(l->p->frames, fid,
					       (const char *)sqlite3_column_text(st, 6));
		id_map_set(&l->frame_map, &l->nframe_map, &cap, (size_t)id, fid);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* Parents are stored before children (ids grow with depth of creation), but
 * ORDER BY depth makes the load independent of that. */
static int load_stacks(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT id, parent, frame FROM stacks ORDER BY depth, id", -1,
			       &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	size_t cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		sqlite3_int64 parent = sqlite3_column_type(st, 1) == SQLITE_NULL
					       ? 0
					       : sqlite3_column_int64(st, 1);
		sqlite3_int64 frame = sqlite3_column_int64(st, 2);
		if (id <= 0 || (size_t)id > l->max_id) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "stack id out of range");
		}
		if (parent < 0 ||
		    (parent && ((size_t)parent >= l->nstack_map || !l->stack_map[parent])) || frame <= 0 ||
		    (size_t)frame >= l->nframe_map || !l->frame_map[frame]) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a stack refers to a missing frame or parent");
		}
		uint32_t node = profile_stack_child(l->p, parent ? l->stack_map[parent] : 0,
						    l->frame_map[frame]);
		id_map_set(&l->stack_map, &l->nstack_map, &cap, (size_t)id, node);
	}
	sqlite3_finalize(st);
	if (l->nstack_map == 0) {
		l->stack_map = xcalloc(1, sizeof(*l->stack_map));
		l->nstack_map = 1;
	}
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

static int load_threads(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT id, pid, tid, comm FROM threads ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)l->p->nthreads) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "thread ids are not dense");
		}
		const char *comm = (const char *)sqlite3_column_text(st, 3);
		size_t before = l->p->nthreads;
		profile_thread_intern(l->p, (uint32_t)sqlite3_column_int64(st, 1),
				      (uint32_t)sqlite3_column_int64(st, 2), comm ? comm : "?");
		if (l->p->nthreads != before + 1) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a thread is listed twice");
		}
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

static int load_probes(struct loader *l)
{
	sqlite3_stmt *st;
	/* Recordings made before sonde kept only the calls it needs have no
	 * all_calls column: they hold every call, and log2 histograms. Older
	 * ones have no own-cost totals either. */
	bool totals = l->probe_totals;
	bool loglin = totals && l->probe_all_calls;
	if (sqlite3_prepare_v2(l->db,
			       loglin	? "SELECT id, name, binary, offset, entered, raw_ns, own_ns,"
					  " all_calls FROM probes ORDER BY id"
			       : totals ? "SELECT id, name, binary, offset, entered, raw_ns, own_ns"
					  " FROM probes ORDER BY id"
					: "SELECT id, name, binary, offset FROM probes ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *bin = (const char *)sqlite3_column_text(st, 2);
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)l->p->nprobes) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "probe ids are not dense");
		}
		uint32_t id = profile_probe_add(l->p, name ? name : "?", bin ? bin : "",
						(uint64_t)sqlite3_column_int64(st, 3));
		if (totals) {
			l->p->probes[id].entered = (uint64_t)sqlite3_column_int64(st, 4);
			l->p->probes[id].raw_ns = (uint64_t)sqlite3_column_int64(st, 5);
			l->p->probes[id].own_ns = (uint64_t)sqlite3_column_int64(st, 6);
		}
		l->p->probes[id].all_calls = !loglin || sqlite3_column_int64(st, 7) != 0;
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return recording_load_fail_sqlite(l);
	if (sqlite3_prepare_v2(l->db, "SELECT probe, bucket, count FROM probe_hist", -1, &st, NULL) !=
	    SQLITE_OK)
		return recording_load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
		if (probe < 0 || (size_t)probe >= l->p->nprobes || b < 0 ||
		    b >= (loglin ? LATENCY_LOGLIN_BUCKETS : 64)) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a histogram row refers to a missing probe or bucket");
		}
		/* A log2 bucket [2^b, 2^(b+1)) counts in the log-linear bucket
		 * starting at 2^b; those recordings take figures from spans. */
		unsigned into = loglin ? (unsigned)b : latency_loglin_bucket(b ? 1ull << b : 0);
		l->p->probes[probe].hist[into] += (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* The first of a row's n columns that holds no integer (a NULL is one
 * where bit i of `nullable` says it may be), or -1: SQLite keeps whatever
 * a file puts in an INTEGER column, and reading text as a number gives 0
 * ("samples: 0" from a file whose weights were text). */
static int non_integer_column(sqlite3_stmt *st, int n, unsigned nullable)
{
	for (int i = 0; i < n; i++) {
		int t = sqlite3_column_type(st, i);
		if (t != SQLITE_INTEGER && !(t == SQLITE_NULL && (nullable >> i & 1)))
			return i;
	}
	return -1;
}

/* Fails the load naming a row's column that is not an integer. */
static int load_fail_type(struct loader *l, sqlite3_stmt *st, const char *table, int col)
{
	char bad[256];
	snprintf(bad, sizeof(bad), "%s row %lld: its %s is %s, not an integer", table,
		 (long long)sqlite3_column_int64(st, 0), sqlite3_column_name(st, col),
		 sqlite3_column_type(st, col) == SQLITE_TEXT    ? "text"
		 : sqlite3_column_type(st, col) == SQLITE_FLOAT ? "a real number"
		 : sqlite3_column_type(st, col) == SQLITE_NULL  ? "NULL"
								: "a blob");
	return recording_load_fail(l, bad);
}

static int load_spans(struct loader *l)
{
	sqlite3_stmt *st;
	/* raw_duration_ns is absent from older recordings: then raw = corrected. */
	bool has_raw = l->span_raw;
	if (sqlite3_prepare_v2(l->db,
			       has_raw ? "SELECT id, probe, thread, parent, depth, start_ns, duration_ns,"
					 " open, raw_duration_ns FROM spans ORDER BY id"
				       : "SELECT id, probe, thread, parent, depth, start_ns, duration_ns,"
					 " open FROM spans ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		/* parent may be NULL (a call with none), raw_duration_ns too */
		int col = non_integer_column(st, has_raw ? 9 : 8, 1u << 3 | 1u << 8);
		if (col >= 0) {
			int rc = load_fail_type(l, st, "spans", col);
			sqlite3_finalize(st);
			return rc;
		}
		sqlite3_int64 probe = sqlite3_column_int64(st, 1), thread = sqlite3_column_int64(st, 2);
		if (probe < 0 || (size_t)probe >= l->p->nprobes || thread < 0 ||
		    (size_t)thread >= l->p->nthreads) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a span refers to a missing probe or thread");
		}
		struct span sp = {
			.id = (uint64_t)sqlite3_column_int64(st, 0),
			.parent = (uint64_t)sqlite3_column_int64(st, 3),
			.depth = (uint32_t)sqlite3_column_int64(st, 4),
			.start_ns = (uint64_t)sqlite3_column_int64(st, 5),
			.duration_ns = (uint64_t)sqlite3_column_int64(st, 6),
			.open = sqlite3_column_int64(st, 7) != 0,
			.raw_duration_ns = has_raw ? (uint64_t)sqlite3_column_int64(st, 8) : 0,
			.probe = (uint32_t)probe,
			.thread = (uint32_t)thread,
		};
		profile_span_add(l->p, &sp);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* The captures, dense in id order, each of a probe of the recording. */
static int load_captures(struct loader *l)
{
	sqlite3_stmt *st;
	int r;
	struct profile *p = l->p;
	if (sqlite3_prepare_v2(l->db, "SELECT id, probe, name, type, kind FROM captures ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 1);
		const char *name = (const char *)sqlite3_column_text(st, 2);
		const char *type = (const char *)sqlite3_column_text(st, 3);
		int kind = values_kind_from_name((const char *)sqlite3_column_text(st, 4));
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)p->ncaptures || probe < 0 ||
		    (size_t)probe >= p->nprobes || kind < 0 || !name || !type) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a capture is not dense, names a missing probe or an unknown "
					    "kind");
		}
		size_t before = p->ncaptures;
		values_capture_intern(p, &(struct probe_capture){.probe = (uint32_t)probe,
								 .name = (char *)name,
								 .type = (char *)type,
								 .kind = (enum capture_kind)kind});
		if (p->ncaptures != before + 1) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a capture is listed twice");
		}
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* The probes' predicates. */
static int load_predicates(struct loader *l)
{
	sqlite3_stmt *st;
	int r;
	struct profile *p = l->p;
	if (sqlite3_prepare_v2(l->db, "SELECT probe, predicate FROM probe_predicates", -1, &st,
			       NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 0);
		const char *pred = (const char *)sqlite3_column_text(st, 1);
		if (probe < 0 || (size_t)probe >= p->nprobes || !pred) {
			sqlite3_finalize(st);
			return recording_load_fail(l, "a predicate names a missing probe");
		}
		free(p->probes[probe].predicate);
		p->probes[probe].predicate = xstrdup(pred);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* Hits in id order, each with its values (ordered by capture). */
static int load_hits(struct loader *l)
{
	sqlite3_stmt *st;
	int r;
	struct profile *p = l->p;
	if (sqlite3_prepare_v2(l->db,
			       "SELECT h.id, h.probe, h.thread, h.time_ns, h.span, v.capture, v.status,"
			       " v.value, v.text FROM hits h LEFT JOIN hit_values v ON v.hit = h.id"
			       " ORDER BY h.id, v.capture",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	struct probe_hit cur = {0};
	struct hit_value vals[CAPTURE_MAX];
	uint32_t nvals = 0;
	sqlite3_int64 cur_id = -1;
	const char *bad = NULL;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id != cur_id) {
			if (cur_id >= 0)
				values_add_hit(p, &cur, vals, nvals);
			sqlite3_int64 probe = sqlite3_column_int64(st, 1);
			sqlite3_int64 thread = sqlite3_column_int64(st, 2);
			if (probe < 0 || (size_t)probe >= p->nprobes || thread < 0 ||
			    (size_t)thread >= p->nthreads) {
				bad = "a hit names a missing probe or thread";
				break;
			}
			cur = (struct probe_hit){.probe = (uint32_t)probe, .thread = (uint32_t)thread,
						 .time_ns = (uint64_t)sqlite3_column_int64(st, 3),
						 .span_id = (uint64_t)sqlite3_column_int64(st, 4)};
			nvals = 0;
			cur_id = id;
		}
		if (sqlite3_column_type(st, 5) == SQLITE_NULL)
			continue; /* a hit of a probe with a predicate and no captures */
		sqlite3_int64 capture = sqlite3_column_int64(st, 5);
		int status = values_status_from_name((const char *)sqlite3_column_text(st, 6));
		if (capture < 0 || (size_t)capture >= p->ncaptures || status < 0 ||
		    p->captures[capture].probe != cur.probe || nvals == CAPTURE_MAX) {
			bad = "a value names a missing capture, or an unknown status";
			break;
		}
		const char *text = (const char *)sqlite3_column_text(st, 8);
		vals[nvals++] = (struct hit_value){
			.capture = (uint32_t)capture, .status = (uint8_t)status,
			.num = (uint64_t)sqlite3_column_int64(st, 7),
			.text = text ? frames_strdup(p->frames, text) : NULL};
	}
	if (!bad && r == SQLITE_DONE && cur_id >= 0)
		values_add_hit(p, &cur, vals, nvals);
	sqlite3_finalize(st);
	if (bad)
		return recording_load_fail(l, bad);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

/* Captures, predicates, hits and their values (none in older recordings). */
static int load_values(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT count(*) FROM sqlite_master WHERE name = 'captures'",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	int r = sqlite3_step(st);
	bool present = r == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	if (!present)
		return 0;
	if (recording_check_value_tables(l))
		return -1;
	if ((r = load_captures(l)) || (r = load_predicates(l)))
		return r;
	return load_hits(l);
}

static int load_samples(struct loader *l)
{
	sqlite3_stmt *st, *links;
	if (sqlite3_prepare_v2(l->db,
			       "SELECT id, time_ns, cpu, thread, event, stack, weight FROM samples"
			       " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return recording_load_fail_sqlite(l);
	if (sqlite3_prepare_v2(l->db,
			       "SELECT sample, span, probe FROM sample_spans ORDER BY sample, position",
			       -1, &links, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return recording_load_fail_sqlite(l);
	}
	int lr = sqlite3_step(links);
	struct span_link buf[64];
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int col = non_integer_column(st, 7, 1u << 5);
		if (col >= 0) {
			int rc = load_fail_type(l, st, "samples", col);
			sqlite3_finalize(st);
			sqlite3_finalize(links);
			return rc;
		}
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		size_t nl = 0;
		/* Links are ordered by sample id, as samples are: merge the two. */
		while (lr == SQLITE_ROW && sqlite3_column_int64(links, 0) <= id) {
			sqlite3_int64 probe = sqlite3_column_int64(links, 2);
			if (sqlite3_column_int64(links, 0) == id && nl < 64 && probe >= 0 &&
			    (size_t)probe < l->p->nprobes)
				buf[nl++] = (struct span_link){
					(uint64_t)sqlite3_column_int64(links, 1), (uint32_t)probe};
			lr = sqlite3_step(links);
		}
		sqlite3_int64 thread = sqlite3_column_int64(st, 3);
		sqlite3_int64 event = sqlite3_column_int64(st, 4);
		sqlite3_int64 stack = sqlite3_column_type(st, 5) == SQLITE_NULL
					      ? 0
					      : sqlite3_column_int64(st, 5);
		if (thread < 0 || (size_t)thread >= l->p->nthreads || event < 0 ||
		    (size_t)event >= l->p->nevents || stack < 0 || (size_t)stack >= l->nstack_map ||
		    (stack && !l->stack_map[stack])) {
			sqlite3_finalize(st);
			sqlite3_finalize(links);
			return recording_load_fail(l, "a sample refers to a missing thread, event or stack");
		}
		struct sample s = {
			.time_ns = (uint64_t)sqlite3_column_int64(st, 1),
			.cpu = (uint32_t)sqlite3_column_int64(st, 2),
			.thread = (uint32_t)thread,
			.event = (uint32_t)event,
			.stack = l->stack_map[stack],
			.weight = (uint64_t)sqlite3_column_int64(st, 6),
		};
		char bad[128] = "";
		if (sqlite3_column_int64(st, 6) < 0)
			snprintf(bad, sizeof(bad), "sample %lld has a negative weight", (long long)id);
		else if (profile_add_sample(l->p, &s, buf, nl))
			snprintf(bad, sizeof(bad),
				 "at sample %lld the weights add up to more than %" PRIu64, (long long)id,
				 PROFILE_MAX_WEIGHT);
		if (*bad) {
			sqlite3_finalize(st);
			sqlite3_finalize(links);
			return recording_load_fail(l, bad);
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(links);
	return r == SQLITE_DONE ? 0 : recording_load_fail_sqlite(l);
}

struct profile *recording_load(const char *path, char *err, size_t errlen)
{
	struct loader l = {.path = path, .err = err, .errlen = errlen};
	if (access(path, R_OK) < 0) {
		errbuf_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (stat(path, &st) < 0) {
		errbuf_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	if (sqlite3_open_v2(path, &l.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
		errbuf_set(err, errlen, "cannot open %s: %s", path,
			   l.db ? sqlite3_errmsg(l.db) : "out of memory");
		sqlite3_close(l.db);
		return NULL;
	}
	/* The file is untrusted: its schema may not call functions with side
	 * effects, nor have them called from views or triggers. */
	sqlite3_db_config(l.db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(l.db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_limit(l.db, SQLITE_LIMIT_LENGTH, LOAD_MAX_VALUE_BYTES);
	size_t size = st.st_size > 0 ? (size_t)st.st_size : 0;
	l.steps_left = LOAD_STEPS_MIN + (long long)(size < (size_t)1 << 40 ? size : (size_t)1 << 40) *
					       LOAD_STEPS_PER_BYTE;
	l.max_id = size > ((size_t)1 << 20) ? size : (size_t)1 << 20;
	sqlite3_progress_handler(l.db, LOAD_PROGRESS_EVERY, count_steps, &l);
	l.p = profile_new();
	/* in this order, up to the first that fails */
	int rc = recording_check_meta_table(&l) || load_meta(&l) || recording_check_data_tables(&l) ||
		 load_events(&l) || load_frames(&l) || load_stacks(&l) || load_threads(&l) ||
		 load_probes(&l) || load_spans(&l) || load_points(&l) || load_values(&l) ||
		 load_samples(&l) || load_thread_samples(&l);
	sqlite3_close(l.db);
	free(l.frame_map);
	free(l.stack_map);
	if (rc) {
		profile_free(l.p);
		return NULL;
	}
	owncost_count(l.p); /* which calls samples landed in, and how sure that is */
	return l.p;
}

/* ========================================================================= */
/* The registry's entry                                                      */


static bool detect_recording(const struct format_head *h)
{
	return h->len >= 16 && memcmp(h->data, "SQLite format 3", 16) == 0;
}

/* SQLite reads the file in place: by name, and not gzipped. */
static struct profile *read_recording(struct format_input *x, char *err, size_t errlen)
{
	const uint8_t *head; /* read when the format was forced, for in.gzip */
	size_t len;
	char inner[512];
	if (infile_head(&x->in, &head, &len, NULL, inner, sizeof(inner)) == 0 && x->in.gzip) {
		errbuf_set(err, errlen, "%s: a gzipped recording: gunzip it first", x->path);
		return NULL;
	}
	if (strcmp(x->path, "-") == 0) {
		errbuf_set(err, errlen, "a recording cannot be read from standard input: give its "
					"file name");
		return NULL;
	}
	return recording_load(x->path, err, errlen);
}

const struct format_entry format_recording = {
	.name = "sonde",
	.aliases = (const char *const[]){"recording", NULL},
	.suffixes = (const char *const[]){".sonde", NULL},
	.what = "sonde recordings",
	.about = "SQLite",
	.detect = detect_recording,
	.read_input = read_recording,
	.save = recording_save,
	.marks_overhead = true,
};
