#define _GNU_SOURCE
#include "recording.h"

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "errbuf.h"
#include "outfile.h"
#include "owncost.h"
#include "registry.h"
#include "util.h"
#include "syscalls.h"
#include "values.h"
#include "view.h"

static const char *const schema_sql =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE events(id INTEGER PRIMARY KEY, name TEXT NOT NULL);"
	"CREATE TABLE frames(id INTEGER PRIMARY KEY, name TEXT NOT NULL, module TEXT NOT NULL,"
	" file TEXT NOT NULL, line INTEGER NOT NULL, kind TEXT NOT NULL,"
	" system_name TEXT NOT NULL DEFAULT '');"
	"CREATE TABLE stacks(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES stacks(id),"
	" frame INTEGER NOT NULL REFERENCES frames(id), depth INTEGER NOT NULL);"
	"CREATE TABLE threads(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, tid INTEGER NOT NULL,"
	" comm TEXT NOT NULL);"
	"CREATE TABLE samples(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"
	" cpu INTEGER NOT NULL, thread INTEGER NOT NULL REFERENCES threads(id),"
	" event INTEGER NOT NULL REFERENCES events(id), stack INTEGER REFERENCES stacks(id),"
	" weight INTEGER NOT NULL);"
	"CREATE TABLE probes(id INTEGER PRIMARY KEY, name TEXT NOT NULL, binary TEXT NOT NULL,"
	" offset INTEGER NOT NULL, entered INTEGER NOT NULL DEFAULT 0,"
	" raw_ns INTEGER NOT NULL DEFAULT 0, own_ns INTEGER NOT NULL DEFAULT 0,"
	" all_calls INTEGER NOT NULL DEFAULT 1, kind TEXT NOT NULL DEFAULT 'function',"
	" point INTEGER);"
	"CREATE TABLE point_calls(point_probe INTEGER NOT NULL REFERENCES probes(id),"
	" probe INTEGER NOT NULL REFERENCES probes(id), calls INTEGER NOT NULL,"
	" hit INTEGER NOT NULL,"
	" PRIMARY KEY(point_probe, probe));"
	"CREATE TABLE probe_hist(probe INTEGER NOT NULL REFERENCES probes(id),"
	" bucket INTEGER NOT NULL, count INTEGER NOT NULL, PRIMARY KEY(probe, bucket));"
	"CREATE TABLE spans(id INTEGER PRIMARY KEY, probe INTEGER NOT NULL REFERENCES probes(id),"
	" thread INTEGER NOT NULL REFERENCES threads(id), parent INTEGER, depth INTEGER NOT NULL,"
	" start_ns INTEGER NOT NULL, duration_ns INTEGER NOT NULL, open INTEGER NOT NULL,"
	" raw_duration_ns INTEGER, points INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE sample_spans(sample INTEGER NOT NULL REFERENCES samples(id),"
	" position INTEGER NOT NULL, span INTEGER NOT NULL, probe INTEGER NOT NULL,"
	" PRIMARY KEY(sample, position));"
	/* The join's other way, "the samples of this call": without it, SQL
	 * that asks it of each call (EXISTS, IN) scans every row per call. */
	"CREATE INDEX sample_spans_by_span ON sample_spans(span);"
	/* Captured values (docs/recording.md): what each probe captures, each
	 * hit of a capturing probe, and its values. */
	"CREATE TABLE captures(id INTEGER PRIMARY KEY, probe INTEGER NOT NULL REFERENCES probes(id),"
	" name TEXT NOT NULL, type TEXT NOT NULL, kind TEXT NOT NULL);"
	"CREATE TABLE probe_predicates(probe INTEGER PRIMARY KEY REFERENCES probes(id),"
	" predicate TEXT NOT NULL);"
	"CREATE TABLE hits(id INTEGER PRIMARY KEY, probe INTEGER NOT NULL REFERENCES probes(id),"
	" thread INTEGER NOT NULL REFERENCES threads(id), time_ns INTEGER NOT NULL, span INTEGER);"
	"CREATE TABLE hit_values(hit INTEGER NOT NULL REFERENCES hits(id),"
	" capture INTEGER NOT NULL REFERENCES captures(id), status TEXT NOT NULL,"
	" value INTEGER NOT NULL, text TEXT, PRIMARY KEY(hit, capture));"
	/* Thread states (record --threads; docs/recording.md): every target
	 * thread at every pass, running or not. */
	"CREATE TABLE thread_samples(id INTEGER PRIMARY KEY, time_ns INTEGER NOT NULL,"
	" thread INTEGER NOT NULL REFERENCES threads(id), state TEXT NOT NULL,"
	" state_ns INTEGER NOT NULL, syscall TEXT, syscall_nr INTEGER, syscall_ns INTEGER,"
	" span INTEGER, probe INTEGER REFERENCES probes(id), span_ns INTEGER,"
	" before_start INTEGER NOT NULL, stack INTEGER REFERENCES stacks(id), stack_ns INTEGER,"
	" stack_from TEXT);"
	/* Every frame of every stack, outermost depth 1: the join users want. */
	"CREATE VIEW stack_frames(stack, depth, frame) AS"
	" WITH RECURSIVE walk(stack, node) AS ("
	"  SELECT id, id FROM stacks"
	"  UNION ALL SELECT walk.stack, stacks.parent FROM walk JOIN stacks ON stacks.id = walk.node"
	"  WHERE stacks.parent IS NOT NULL)"
	" SELECT walk.stack, stacks.depth, stacks.frame FROM walk JOIN stacks ON stacks.id = walk.node;";

static const char *const kind_names[] = {
	[FRAME_USER] = "user",       [FRAME_KERNEL] = "kernel", [FRAME_INLINED] = "inlined",
	[FRAME_JIT] = "jit",         [FRAME_PROCESS] = "process", [FRAME_UNKNOWN] = "unknown",
	[FRAME_OVERHEAD] = "overhead", [FRAME_STATE] = "state",
};

static enum frame_kind kind_from_name(const char *s)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (kind_names[i] && strcmp(kind_names[i], s) == 0)
			return (enum frame_kind)i;
	return FRAME_UNKNOWN;
}

/* For the messages that refuse a destination. */
#define WHAT "a recording (an SQLite database)"

int recording_check_writable(const char *path, char *err, size_t errlen)
{
	return outfile_check_regular(path, WHAT, err, errlen);
}

static int exec_sql(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		errbuf_set(err, errlen, "SQLite: %s", msg ? msg : "unknown error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **st, char *err, size_t errlen)
{
	if (sqlite3_prepare_v2(db, sql, -1, st, NULL) != SQLITE_OK) {
		errbuf_set(err, errlen, "SQLite: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static int step_done(sqlite3 *db, sqlite3_stmt *st, char *err, size_t errlen)
{
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	if (r != SQLITE_DONE) {
		errbuf_set(err, errlen, "SQLite: %s", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

static int save_meta_and_events(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (prepare(db, "INSERT INTO meta(key, value) VALUES (?, ?)", &st, err, errlen))
		return -1;
	int rc = 0;
	char version[16];
	snprintf(version, sizeof(version), "%d", RECORDING_VERSION);
	const char *fixed[][2] = {{"format", RECORDING_FORMAT}, {"version", version}};
	for (size_t i = 0; i < 2 && !rc; i++) {
		sqlite3_bind_text(st, 1, fixed[i][0], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, fixed[i][1], -1, SQLITE_STATIC);
		rc = step_done(db, st, err, errlen);
	}
	for (size_t i = 0; i < p->nmeta && !rc; i++) {
		if (!strcmp(p->meta[i].key, "format") || !strcmp(p->meta[i].key, "version"))
			continue;
		sqlite3_bind_text(st, 1, p->meta[i].key, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 2, p->meta[i].value, -1, SQLITE_STATIC);
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	if (rc || prepare(db, "INSERT INTO events(id, name) VALUES (?, ?)", &st, err, errlen))
		return -1;
	for (size_t i = 0; i < p->nevents && !rc; i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		sqlite3_bind_text(st, 2, p->events[i], -1, SQLITE_STATIC);
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

static int save_frames_and_stacks(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc = 0;
	if (prepare(db,
		    "INSERT INTO frames(id, name, module, file, line, kind, system_name)"
		    " VALUES (?,?,?,?,?,?,?)",
		    &st, err, errlen))
		return -1;
	size_t nframes = frames_count(p->frames);
	for (uint32_t id = 1; id <= nframes && !rc; id++) {
		const struct frame *f = frames_get(p->frames, id);
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_text(st, 2, f->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 3, f->module, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, f->file, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, f->line);
		sqlite3_bind_text(st, 6, kind_names[f->kind], -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 7, f->system_name ? f->system_name : "", -1, SQLITE_STATIC);
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	if (rc || prepare(db, "INSERT INTO stacks(id, parent, frame, depth) VALUES (?,?,?,?)", &st,
			  err, errlen))
		return -1;
	for (size_t i = 1; i < p->nnodes && !rc; i++) {
		const struct stack_node *n = &p->nodes[i];
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		if (n->parent)
			sqlite3_bind_int64(st, 2, n->parent);
		else
			sqlite3_bind_null(st, 2);
		sqlite3_bind_int64(st, 3, n->frame);
		sqlite3_bind_int64(st, 4, n->depth);
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

static int save_threads_and_samples(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	int rc = 0;
	if (prepare(db, "INSERT INTO threads(id, pid, tid, comm) VALUES (?,?,?,?)", &st, err, errlen))
		return -1;
	for (size_t i = 0; i < p->nthreads && !rc; i++) {
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i);
		sqlite3_bind_int64(st, 2, p->threads[i].pid);
		sqlite3_bind_int64(st, 3, p->threads[i].tid);
		sqlite3_bind_text(st, 4, p->threads[i].comm, -1, SQLITE_STATIC);
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	if (rc || prepare(db,
			  "INSERT INTO samples(id, time_ns, cpu, thread, event, stack, weight)"
			  " VALUES (?,?,?,?,?,?,?)",
			  &st, err, errlen))
		return -1;
	sqlite3_stmt *link;
	if (prepare(db, "INSERT INTO sample_spans(sample, position, span, probe) VALUES (?,?,?,?)",
		    &link, err, errlen)) {
		sqlite3_finalize(st);
		return -1;
	}
	for (size_t i = 0; i < p->nsamples && !rc; i++) {
		const struct sample *s = &p->samples[i];
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)s->time_ns);
		sqlite3_bind_int64(st, 3, s->cpu);
		sqlite3_bind_int64(st, 4, s->thread);
		sqlite3_bind_int64(st, 5, s->event);
		if (s->stack)
			sqlite3_bind_int64(st, 6, s->stack);
		else
			sqlite3_bind_null(st, 6);
		sqlite3_bind_int64(st, 7, (sqlite3_int64)s->weight);
		rc = step_done(db, st, err, errlen);
		for (uint32_t k = 0; k < s->nlinks && !rc; k++) {
			const struct span_link *l = &p->span_links[s->links + k];
			sqlite3_bind_int64(link, 1, (sqlite3_int64)i + 1);
			sqlite3_bind_int64(link, 2, k);
			sqlite3_bind_int64(link, 3, (sqlite3_int64)l->span_id);
			sqlite3_bind_int64(link, 4, l->probe);
			rc = step_done(db, link, err, errlen);
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(link);
	return rc;
}

static uint64_t ns_since(uint64_t now, uint64_t since)
{
	return now > since ? now - since : 0;
}

static int save_thread_samples(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *st;
	if (!p->nthread_samples)
		return 0;
	if (prepare(db,
		    "INSERT INTO thread_samples(id, time_ns, thread, state, state_ns, syscall,"
		    " syscall_nr, syscall_ns, span, probe, span_ns, before_start, stack, stack_ns,"
		    " stack_from) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		    &st, err, errlen))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < p->nthread_samples && !rc; i++) {
		const struct thread_sample *t = &p->thread_samples[i];
		sqlite3_bind_int64(st, 1, (sqlite3_int64)i + 1);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)t->time_ns);
		sqlite3_bind_int64(st, 3, t->thread);
		sqlite3_bind_text(st, 4, view_state_name(t->state), -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 5, (sqlite3_int64)ns_since(t->time_ns, t->state_since_ns));
		char nr[32];
		const char *sc = t->syscall >= 0 ? syscalls_name(t->syscall) : NULL;
		if (t->syscall == TSTATE_SYSCALL_UNKNOWN) {
			sqlite3_bind_text(st, 6, "?", -1, SQLITE_STATIC);
			sqlite3_bind_null(st, 7);
			sqlite3_bind_null(st, 8);
		}
		if (t->syscall >= 0 && !sc) {
			snprintf(nr, sizeof(nr), "syscall %d", (int)t->syscall);
			sc = nr;
		}
		if (sc) {
			sqlite3_bind_text(st, 6, sc, -1, SQLITE_TRANSIENT);
			sqlite3_bind_int64(st, 7, t->syscall);
			sqlite3_bind_int64(st, 8,
					   (sqlite3_int64)ns_since(t->time_ns, t->syscall_since_ns));
		} else if (t->syscall != TSTATE_SYSCALL_UNKNOWN) {
			for (int c = 6; c <= 8; c++)
				sqlite3_bind_null(st, c);
		}
		if (t->span_id) {
			sqlite3_bind_int64(st, 9, (sqlite3_int64)t->span_id);
			sqlite3_bind_int64(st, 10, t->probe);
			sqlite3_bind_int64(st, 11, (sqlite3_int64)ns_since(t->time_ns, t->span_start_ns));
		} else {
			for (int c = 9; c <= 11; c++)
				sqlite3_bind_null(st, c);
		}
		sqlite3_bind_int64(st, 12, t->flags);
		if (t->stack) {
			sqlite3_bind_int64(st, 13, t->stack);
			sqlite3_bind_int64(st, 14, (sqlite3_int64)ns_since(t->time_ns, t->stack_ns));
			sqlite3_bind_text(st, 15, t->stack_on_cpu ? "sample" : "left", -1,
					  SQLITE_STATIC);
		} else {
			for (int c = 13; c <= 15; c++)
				sqlite3_bind_null(st, c);
		}
		rc = step_done(db, st, err, errlen);
	}
	sqlite3_finalize(st);
	return rc;
}

static int save_probes_and_spans(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *pr, *hist, *sp;
	if (prepare(db,
		    "INSERT INTO probes(id, name, binary, offset, entered, raw_ns, own_ns, all_calls,"
		    " kind, point) VALUES (?,?,?,?,?,?,?,?,?,?)",
		    &pr, err,
		    errlen))
		return -1;
	if (prepare(db, "INSERT INTO probe_hist(probe, bucket, count) VALUES (?,?,?)", &hist, err,
		    errlen)) {
		sqlite3_finalize(pr);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < p->nprobes && !rc; i++) {
		const struct probe_info *q = &p->probes[i];
		sqlite3_bind_int64(pr, 1, (sqlite3_int64)i);
		sqlite3_bind_text(pr, 2, q->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(pr, 3, q->binary, -1, SQLITE_STATIC);
		sqlite3_bind_int64(pr, 4, (sqlite3_int64)q->offset);
		sqlite3_bind_int64(pr, 5, (sqlite3_int64)q->entered);
		sqlite3_bind_int64(pr, 6, (sqlite3_int64)q->raw_ns);
		sqlite3_bind_int64(pr, 7, (sqlite3_int64)q->own_ns);
		sqlite3_bind_int64(pr, 8, q->all_calls);
		sqlite3_bind_text(pr, 9, q->point >= 0 ? "line" : "function", -1, SQLITE_STATIC);
		if (q->point >= 0)
			sqlite3_bind_int64(pr, 10, q->point);
		else
			sqlite3_bind_null(pr, 10);
		rc = step_done(db, pr, err, errlen);
		for (int b = 0; b < LATENCY_LOGLIN_BUCKETS && !rc; b++) {
			if (!q->hist[b])
				continue;
			sqlite3_bind_int64(hist, 1, (sqlite3_int64)i);
			sqlite3_bind_int64(hist, 2, b);
			sqlite3_bind_int64(hist, 3, (sqlite3_int64)q->hist[b]);
			rc = step_done(db, hist, err, errlen);
		}
	}
	sqlite3_finalize(pr);
	sqlite3_finalize(hist);
	if (rc || prepare(db,
			  "INSERT INTO spans(id, probe, thread, parent, depth, start_ns, duration_ns,"
			  " open, raw_duration_ns, points) VALUES (?,?,?,?,?,?,?,?,?,?)",
			  &sp, err, errlen))
		return -1;
	for (size_t i = 0; i < p->nspans && !rc; i++) {
		const struct span *x = &p->spans[i];
		sqlite3_bind_int64(sp, 1, (sqlite3_int64)x->id);
		sqlite3_bind_int64(sp, 2, x->probe);
		sqlite3_bind_int64(sp, 3, x->thread);
		if (x->parent)
			sqlite3_bind_int64(sp, 4, (sqlite3_int64)x->parent);
		else
			sqlite3_bind_null(sp, 4);
		sqlite3_bind_int64(sp, 5, x->depth);
		sqlite3_bind_int64(sp, 6, (sqlite3_int64)x->start_ns);
		sqlite3_bind_int64(sp, 7, (sqlite3_int64)x->duration_ns);
		sqlite3_bind_int64(sp, 8, x->open);
		sqlite3_bind_int64(sp, 9, (sqlite3_int64)x->raw_duration_ns);
		sqlite3_bind_int64(sp, 10, (sqlite3_int64)x->points);
		rc = step_done(db, sp, err, errlen);
	}
	sqlite3_finalize(sp);
	if (rc || prepare(db, "INSERT INTO point_calls(point_probe, probe, calls, hit) VALUES (?,?,?,?)",
			  &sp, err, errlen))
		return -1;
	for (size_t i = 0; i < p->npoint_calls && !rc; i++) {
		sqlite3_bind_int64(sp, 1, p->point_calls[i].point_probe);
		sqlite3_bind_int64(sp, 2, p->point_calls[i].probe);
		sqlite3_bind_int64(sp, 3, (sqlite3_int64)p->point_calls[i].calls);
		sqlite3_bind_int64(sp, 4, (sqlite3_int64)p->point_calls[i].hit);
		rc = step_done(db, sp, err, errlen);
	}
	sqlite3_finalize(sp);
	return rc;
}

static int save_values(sqlite3 *db, const struct profile *p, char *err, size_t errlen)
{
	sqlite3_stmt *cap, *pred, *hit, *val;
	if (prepare(db, "INSERT INTO captures(id, probe, name, type, kind) VALUES (?,?,?,?,?)", &cap,
		    err, errlen))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < p->ncaptures && !rc; i++) {
		const struct probe_capture *c = &p->captures[i];
		sqlite3_bind_int64(cap, 1, (sqlite3_int64)i);
		sqlite3_bind_int64(cap, 2, c->probe);
		sqlite3_bind_text(cap, 3, c->name, -1, SQLITE_STATIC);
		sqlite3_bind_text(cap, 4, c->type, -1, SQLITE_STATIC);
		sqlite3_bind_text(cap, 5, values_kind_name(c->kind), -1, SQLITE_STATIC);
		rc = step_done(db, cap, err, errlen);
	}
	sqlite3_finalize(cap);
	if (rc || prepare(db, "INSERT INTO probe_predicates(probe, predicate) VALUES (?,?)", &pred,
			  err, errlen))
		return -1;
	for (size_t i = 0; i < p->nprobes && !rc; i++) {
		if (!p->probes[i].predicate)
			continue;
		sqlite3_bind_int64(pred, 1, (sqlite3_int64)i);
		sqlite3_bind_text(pred, 2, p->probes[i].predicate, -1, SQLITE_STATIC);
		rc = step_done(db, pred, err, errlen);
	}
	sqlite3_finalize(pred);
	if (rc || prepare(db, "INSERT INTO hits(id, probe, thread, time_ns, span) VALUES (?,?,?,?,?)",
			  &hit, err, errlen))
		return -1;
	if (prepare(db,
		    "INSERT INTO hit_values(hit, capture, status, value, text) VALUES (?,?,?,?,?)",
		    &val, err, errlen)) {
		sqlite3_finalize(hit);
		return -1;
	}
	for (size_t h = 0; h < p->nhits && !rc; h++) {
		const struct probe_hit *x = &p->hits[h];
		sqlite3_bind_int64(hit, 1, (sqlite3_int64)h);
		sqlite3_bind_int64(hit, 2, x->probe);
		sqlite3_bind_int64(hit, 3, x->thread);
		sqlite3_bind_int64(hit, 4, (sqlite3_int64)x->time_ns);
		if (x->span_id)
			sqlite3_bind_int64(hit, 5, (sqlite3_int64)x->span_id);
		else
			sqlite3_bind_null(hit, 5);
		rc = step_done(db, hit, err, errlen);
		for (uint32_t i = 0; i < x->n && !rc; i++) {
			const struct hit_value *v = &p->hit_values[x->first + i];
			sqlite3_bind_int64(val, 1, (sqlite3_int64)h);
			sqlite3_bind_int64(val, 2, v->capture);
			sqlite3_bind_text(val, 3, values_status_name(v->status), -1, SQLITE_STATIC);
			sqlite3_bind_int64(val, 4, (sqlite3_int64)v->num);
			if (v->text)
				sqlite3_bind_text(val, 5, v->text, -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(val, 5);
			rc = step_done(db, val, err, errlen);
		}
	}
	sqlite3_finalize(hit);
	sqlite3_finalize(val);
	return rc;
}

struct recording_image {
	sqlite3 *db; /* an in-memory database, which owns the bytes */
	const unsigned char *bytes;
	sqlite3_int64 size;
};

struct recording_image *recording_build(const struct profile *p, char *err, size_t errlen)
{
	struct recording_image *img = xcalloc(1, sizeof(*img));
	/* memdb: the database is one contiguous buffer, handed out without a
	 * copy; it may grow past memdb's default 1 GiB limit. */
	if (sqlite3_open_v2("file:recording?vfs=memdb", &img->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK) {
		errbuf_set(err, errlen, "cannot build the recording in memory: %s",
			   img->db ? sqlite3_errmsg(img->db) : "out of memory");
		recording_image_free(img);
		return NULL;
	}
	sqlite3_int64 limit = INT64_MAX;
	sqlite3_file_control(img->db, "main", SQLITE_FCNTL_SIZE_LIMIT, &limit);
	char inner[256];
	if (exec_sql(img->db, "PRAGMA journal_mode=OFF; BEGIN;", inner, sizeof(inner)) ||
	    exec_sql(img->db, schema_sql, inner, sizeof(inner)) ||
	    save_meta_and_events(img->db, p, inner, sizeof(inner)) ||
	    save_frames_and_stacks(img->db, p, inner, sizeof(inner)) ||
	    save_threads_and_samples(img->db, p, inner, sizeof(inner)) ||
	    save_probes_and_spans(img->db, p, inner, sizeof(inner)) ||
	    save_values(img->db, p, inner, sizeof(inner)) ||
	    save_thread_samples(img->db, p, inner, sizeof(inner)) ||
	    exec_sql(img->db, "COMMIT;", inner, sizeof(inner))) {
		errbuf_set(err, errlen, "cannot build the recording in memory: %s", inner);
		recording_image_free(img);
		return NULL;
	}
	img->bytes = sqlite3_serialize(img->db, "main", &img->size, SQLITE_SERIALIZE_NOCOPY);
	if (!img->bytes) {
		errbuf_set(err, errlen, "cannot build the recording in memory: SQLite gave no image");
		recording_image_free(img);
		return NULL;
	}
	return img;
}

size_t recording_image_size(const struct recording_image *img)
{
	return (size_t)img->size;
}

int recording_image_write(const struct recording_image *img, const char *path, char *err,
			  size_t errlen)
{
	return outfile_write_regular(path, WHAT, img->bytes, (size_t)img->size, err, errlen);
}

int recording_image_rescue(const struct recording_image *img, const char *path, char *saved,
			   size_t savedlen)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *home = getenv("HOME");
	const char *dirs[] = {tmpdir && *tmpdir ? tmpdir : "/tmp", "/var/tmp", home};
	char *copy = xstrdup(path);
	const char *base = basename(copy);
	int rc = -1;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && rc; i++) {
		struct statvfs vfs;
		if (!dirs[i] || statvfs(dirs[i], &vfs) < 0 ||
		    (uint64_t)vfs.f_bavail * vfs.f_frsize < (uint64_t)img->size)
			continue; /* no room: do not fill it to find out */
		char *at = xasprintf("%s/rescued-%d-%s", dirs[i], (int)getpid(), base);
		char err[512];
		if (recording_image_write(img, at, err, sizeof(err)) == 0) {
			snprintf(saved, savedlen, "%s", at);
			rc = 0;
		}
		free(at);
	}
	free(copy);
	return rc;
}

void recording_image_free(struct recording_image *img)
{
	if (!img)
		return;
	sqlite3_close(img->db);
	free(img);
}

int recording_save(const struct profile *p, const char *path, char *err, size_t errlen)
{
	struct recording_image *img = recording_build(p, err, errlen);
	if (!img)
		return -1;
	int rc = recording_image_write(img, path, err, errlen);
	recording_image_free(img);
	return rc;
}

/* --- loading ------------------------------------------------------------- */

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

struct loader {
	sqlite3 *db;
	long long steps_left; /* SQLite steps still allowed (LOAD_STEPS_PER_BYTE) */
	size_t max_id;        /* frame and stack ids are dense: at most one per byte */
	bool probe_totals;    /* probes has entered, raw_ns, own_ns */
	bool probe_all_calls; /* probes has all_calls (log-linear histograms) */
	bool span_raw;        /* spans has raw_duration_ns */
	bool frame_system_names; /* frames has system_name */
	bool probe_kind;      /* probes has kind and point (line probes) */
	bool span_points;     /* spans has points */
	bool has_point_calls; /* the point_calls table exists */
	bool has_thread_samples; /* the thread_samples table exists */
	bool thread_stacks;   /* thread_samples has stack, stack_ns, stack_from */
	struct profile *p;
	uint32_t *frame_map; /* file frame id -> profile frame id */
	size_t nframe_map;
	uint32_t *stack_map; /* file stack id -> profile node id */
	size_t nstack_map;
	const char *path;
	char *err;
	size_t errlen;
};

static int load_fail(struct loader *l, const char *what)
{
	return errbuf_set(l->err, l->errlen, "%s is not a readable sonde recording (%s)", l->path,
			  what);
}

/* A failed step: SQLite's reason, or ours when the step budget ran out. */
static int load_fail_sqlite(struct loader *l)
{
	if (l->steps_left <= 0)
		return load_fail(l, "reading it makes SQLite work far longer than a recording of its "
				    "size needs: a hostile or corrupt file");
	return load_fail(l, sqlite3_errmsg(l->db));
}

static int count_steps(void *arg)
{
	struct loader *l = arg;
	l->steps_left -= LOAD_PROGRESS_EVERY;
	return l->steps_left <= 0; /* non-zero interrupts the statement */
}

/* The tables the loader reads and the columns it reads from each; a column
 * starting with '?' may be missing (recordings made before it existed). */
static const struct table_spec {
	const char *name;
	const char *columns[16];
} tables_read[] = {
	{"meta", {"key", "value"}},
	{"events", {"id", "name"}},
	{"frames", {"id", "name", "module", "file", "line", "kind", "?system_name"}},
	{"stacks", {"id", "parent", "frame", "depth"}},
	{"threads", {"id", "pid", "tid", "comm"}},
	{"probes",
	 {"id", "name", "binary", "offset", "?entered", "?raw_ns", "?own_ns", "?all_calls",
	  "?point"}},
	{"probe_hist", {"probe", "bucket", "count"}},
	{"spans",
	 {"id", "probe", "thread", "parent", "depth", "start_ns", "duration_ns", "open",
	  "?raw_duration_ns", "?points"}},
	{"samples", {"id", "time_ns", "cpu", "thread", "event", "stack", "weight"}},
	{"sample_spans", {"sample", "position", "span", "probe"}},
};

/* Tables of captured values, absent from recordings made before them. */
static const struct table_spec tables_values[] = {
	{"captures", {"id", "probe", "name", "type", "kind"}},
	{"probe_predicates", {"probe", "predicate"}},
	{"hits", {"id", "probe", "thread", "time_ns", "span"}},
	{"hit_values", {"hit", "capture", "status", "value", "text"}},
};

/* 1 when `table` has `column` as a plain stored column, 0 when it has no
 * such column, -1 (with err) when the column is computed (a generated
 * column runs an expression on every read). */
static int column_state(struct loader *l, const char *table, const char *column)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT hidden FROM pragma_table_xinfo(?) WHERE name = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	int hidden = r == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return load_fail_sqlite(l);
	if (r == SQLITE_ROW && hidden) {
		char what[160];
		snprintf(what, sizeof(what), "%s.%s is a generated column, not stored data", table,
			 column);
		return load_fail(l, what);
	}
	return r == SQLITE_ROW;
}

/* A table the loader reads must be a plain table with the columns it reads:
 * a view or a virtual table of that name would run whatever query the file
 * brings (an endless recursive one, billions of rows) inside `report`. */
static int check_table(struct loader *l, const struct table_spec *spec)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db,
			       "SELECT type, sql FROM sqlite_master WHERE name = ? COLLATE NOCASE"
			       " AND type IN ('table', 'view')",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	sqlite3_bind_text(st, 1, spec->name, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	const char *type = r == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
	const char *sql = r == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 1) : NULL;
	char what[160] = "";
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		snprintf(what, sizeof(what), "%s", sqlite3_errmsg(l->db));
	else if (!type)
		snprintf(what, sizeof(what), "no %s table%s", spec->name,
			 spec == &tables_read[0] ? ": not a sonde recording, or corrupt" : "");
	else if (strcmp(type, "table") != 0)
		snprintf(what, sizeof(what), "%s is a %s, not a table", spec->name, type);
	else if (sql && strncasecmp(sql, "CREATE VIRTUAL", 14) == 0)
		snprintf(what, sizeof(what), "%s is a virtual table, not a table", spec->name);
	sqlite3_finalize(st);
	if (what[0])
		return l->steps_left <= 0 ? load_fail_sqlite(l) : load_fail(l, what);
	for (size_t c = 0; c < sizeof(spec->columns) / sizeof(spec->columns[0]); c++) {
		const char *col = spec->columns[c];
		if (!col)
			break;
		bool optional = col[0] == '?';
		int has = column_state(l, spec->name, col + optional);
		if (has < 0)
			return -1;
		if (!has && !optional) {
			snprintf(what, sizeof(what), "table %s has no column %s", spec->name, col);
			return load_fail(l, what);
		}
		if (!strcmp(col, "?entered"))
			l->probe_totals = has;
		else if (!strcmp(col, "?all_calls"))
			l->probe_all_calls = has;
		else if (!strcmp(col, "?raw_duration_ns"))
			l->span_raw = has;
		else if (!strcmp(col, "?system_name"))
			l->frame_system_names = has;
		else if (!strcmp(col, "?point"))
			l->probe_kind = has;
		else if (!strcmp(col, "?points"))
			l->span_points = has;
		else if (!strcmp(col, "?stack"))
			l->thread_stacks = has;
		else if (!strcmp(col, "?stack_ns") || !strcmp(col, "?stack_from"))
			l->thread_stacks = l->thread_stacks && has;
	}
	return 0;
}

/* All tables but meta, which is checked (and read) first: a file that is
 * not a recording is told so by its meta table. */
static const struct table_spec point_calls_table = {"point_calls",
						    {"point_probe", "probe", "calls", "hit"}};
/* Absent from recordings made before thread states. */
static const struct table_spec thread_samples_table = {
	"thread_samples",
	{"time_ns", "thread", "state", "state_ns", "syscall", "syscall_nr", "syscall_ns", "span",
	 "probe", "span_ns", "before_start", "?stack", "?stack_ns", "?stack_from"}};

/* 1 when the file has a table of this name, 0 when not, -1 (err). */
static int has_table(struct loader *l, const char *name)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT 1 FROM sqlite_master WHERE name = ? COLLATE NOCASE",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return load_fail_sqlite(l);
	return r == SQLITE_ROW;
}

static int check_data_tables(struct loader *l)
{
	for (size_t t = 1; t < sizeof(tables_read) / sizeof(tables_read[0]); t++)
		if (check_table(l, &tables_read[t]))
			return -1;
	/* Recordings made before line probes have no point_calls table. */
	int has = has_table(l, "point_calls");
	if (has < 0 || (has && check_table(l, &point_calls_table)))
		return -1;
	l->has_point_calls = has;
	has = has_table(l, "thread_samples");
	if (has < 0 || (has && check_table(l, &thread_samples_table)))
		return -1;
	l->has_thread_samples = has;
	return 0;
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
		return load_fail_sqlite(l);
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
			return load_fail(l, "a thread sample has a bad thread, state or probe");
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
				return load_fail(l, "a thread sample has a negative syscall_nr");
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
				return load_fail(l, "a thread sample has a bad stack or stack_from");
			}
			ts.stack = l->stack_map[stack];
			ts.stack_ns = t - (uint64_t)sqlite3_column_int64(st, 12);
			ts.stack_on_cpu = strcmp(from, "sample") == 0;
		}
		profile_add_thread_sample(l->p, &ts);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
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
			return load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 id = sqlite3_column_int64(st, 0), pt = sqlite3_column_int64(st, 1);
			if (id < 0 || (size_t)id >= l->p->nprobes || pt < 0 || pt >= 64) {
				sqlite3_finalize(st);
				return load_fail(l, "a line probe has a bad id or point");
			}
			l->p->probes[id].point = (int)pt;
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return load_fail_sqlite(l);
	}
	if (l->span_points) {
		if (sqlite3_prepare_v2(l->db, "SELECT id, points FROM spans WHERE points != 0", -1,
				       &st, NULL) != SQLITE_OK)
			return load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			int64_t i = profile_span_find(l->p, (uint64_t)sqlite3_column_int64(st, 0));
			if (i >= 0)
				l->p->spans[i].points = (uint64_t)sqlite3_column_int64(st, 1);
		}
		sqlite3_finalize(st);
		if (r != SQLITE_DONE)
			return load_fail_sqlite(l);
	}
	if (l->has_point_calls) {
		if (sqlite3_prepare_v2(l->db, "SELECT point_probe, probe, calls, hit FROM point_calls", -1,
				       &st, NULL) != SQLITE_OK)
			return load_fail_sqlite(l);
		while ((r = sqlite3_step(st)) == SQLITE_ROW) {
			sqlite3_int64 pp = sqlite3_column_int64(st, 0), fp = sqlite3_column_int64(st, 1);
			if (pp < 0 || fp < 0 || (size_t)pp >= l->p->nprobes ||
			    (size_t)fp >= l->p->nprobes) {
				sqlite3_finalize(st);
				return load_fail(l, "a point_calls row refers to a missing probe");
			}
			profile_point_calls_set(l->p, (uint32_t)pp, (uint32_t)fp,
						(uint64_t)sqlite3_column_int64(st, 2),
						(uint64_t)sqlite3_column_int64(st, 3));
		}
		sqlite3_finalize(st);
	}
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
}

static int load_meta(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	int r;
	size_t rows = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (++rows > LOAD_MAX_META) {
			sqlite3_finalize(st);
			return load_fail(l, "more than 10000 meta rows");
		}
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (k && v)
			profile_meta_set(l->p, k, v);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return load_fail_sqlite(l);
	const char *fmt = profile_meta_get(l->p, "format");
	const char *ver = profile_meta_get(l->p, "version");
	if (!fmt || strcmp(fmt, RECORDING_FORMAT) != 0)
		return load_fail(l, "its meta table does not say format=" RECORDING_FORMAT);
	if (!ver || atoi(ver) != RECORDING_VERSION) {
		snprintf(l->err, l->errlen,
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
		return load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (l->p->nevents >= LOAD_MAX_EVENTS) {
			sqlite3_finalize(st);
			return load_fail(l, "more than 10000 events");
		}
		const char *n = (const char *)sqlite3_column_text(st, 0);
		profile_event_intern(l->p, n ? n : "?");
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
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
		return load_fail_sqlite(l);
	size_t cap = 0;
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 id = sqlite3_column_int64(st, 0);
		if (id <= 0 || (size_t)id > l->max_id) {
			sqlite3_finalize(st);
			return load_fail(l, "frame id out of range");
		}
		const char *kind = (const char *)sqlite3_column_text(st, 5);
		uint32_t fid = frames_intern(l->p->frames, (const char *)sqlite3_column_text(st, 1),
					     (const char *)sqlite3_column_text(st, 2),
					     (const char *)sqlite3_column_text(st, 3),
					     (uint32_t)sqlite3_column_int64(st, 4),
					     kind_from_name(kind ? kind : ""));
		if (l->frame_system_names)
			frames_set_system_name(l->p->frames, fid,
					       (const char *)sqlite3_column_text(st, 6));
		id_map_set(&l->frame_map, &l->nframe_map, &cap, (size_t)id, fid);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
}

/* Parents are stored before children (ids grow with depth of creation), but
 * ORDER BY depth makes the load independent of that. */
static int load_stacks(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT id, parent, frame FROM stacks ORDER BY depth, id", -1,
			       &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
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
			return load_fail(l, "stack id out of range");
		}
		if (parent < 0 ||
		    (parent && ((size_t)parent >= l->nstack_map || !l->stack_map[parent])) || frame <= 0 ||
		    (size_t)frame >= l->nframe_map || !l->frame_map[frame]) {
			sqlite3_finalize(st);
			return load_fail(l, "a stack refers to a missing frame or parent");
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
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
}

static int load_threads(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT id, pid, tid, comm FROM threads ORDER BY id", -1, &st,
			       NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)l->p->nthreads) {
			sqlite3_finalize(st);
			return load_fail(l, "thread ids are not dense");
		}
		const char *comm = (const char *)sqlite3_column_text(st, 3);
		size_t before = l->p->nthreads;
		profile_thread_intern(l->p, (uint32_t)sqlite3_column_int64(st, 1),
				      (uint32_t)sqlite3_column_int64(st, 2), comm ? comm : "?");
		if (l->p->nthreads != before + 1) {
			sqlite3_finalize(st);
			return load_fail(l, "a thread is listed twice");
		}
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
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
		return load_fail_sqlite(l);
	int r;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		const char *bin = (const char *)sqlite3_column_text(st, 2);
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)l->p->nprobes) {
			sqlite3_finalize(st);
			return load_fail(l, "probe ids are not dense");
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
		return load_fail_sqlite(l);
	if (sqlite3_prepare_v2(l->db, "SELECT probe, bucket, count FROM probe_hist", -1, &st, NULL) !=
	    SQLITE_OK)
		return load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 0), b = sqlite3_column_int64(st, 1);
		if (probe < 0 || (size_t)probe >= l->p->nprobes || b < 0 ||
		    b >= (loglin ? LATENCY_LOGLIN_BUCKETS : 64)) {
			sqlite3_finalize(st);
			return load_fail(l, "a histogram row refers to a missing probe or bucket");
		}
		/* A log2 bucket [2^b, 2^(b+1)) counts in the log-linear bucket
		 * starting at 2^b; those recordings take figures from spans. */
		unsigned into = loglin ? (unsigned)b : latency_loglin_bucket(b ? 1ull << b : 0);
		l->p->probes[probe].hist[into] += (uint64_t)sqlite3_column_int64(st, 2);
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
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
	return load_fail(l, bad);
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
		return load_fail_sqlite(l);
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
			return load_fail(l, "a span refers to a missing probe or thread");
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
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
}

/* Captures, predicates, hits and their values (none in older recordings). */
static int load_values(struct loader *l)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(l->db, "SELECT count(*) FROM sqlite_master WHERE name = 'captures'",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	int r = sqlite3_step(st);
	bool present = r == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
	sqlite3_finalize(st);
	if (!present)
		return 0;
	for (size_t t = 0; t < sizeof(tables_values) / sizeof(tables_values[0]); t++)
		if (check_table(l, &tables_values[t]))
			return -1;
	struct profile *p = l->p;
	if (sqlite3_prepare_v2(l->db, "SELECT id, probe, name, type, kind FROM captures ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 1);
		const char *name = (const char *)sqlite3_column_text(st, 2);
		const char *type = (const char *)sqlite3_column_text(st, 3);
		int kind = values_kind_from_name((const char *)sqlite3_column_text(st, 4));
		if (sqlite3_column_int64(st, 0) != (sqlite3_int64)p->ncaptures || probe < 0 ||
		    (size_t)probe >= p->nprobes || kind < 0 || !name || !type) {
			sqlite3_finalize(st);
			return load_fail(l, "a capture is not dense, names a missing probe or an unknown "
					    "kind");
		}
		size_t before = p->ncaptures;
		values_capture_intern(p, (uint32_t)probe, name, type, (enum capture_kind)kind, NULL, 0);
		if (p->ncaptures != before + 1) {
			sqlite3_finalize(st);
			return load_fail(l, "a capture is listed twice");
		}
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return load_fail_sqlite(l);
	if (sqlite3_prepare_v2(l->db, "SELECT probe, predicate FROM probe_predicates", -1, &st,
			       NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		sqlite3_int64 probe = sqlite3_column_int64(st, 0);
		const char *pred = (const char *)sqlite3_column_text(st, 1);
		if (probe < 0 || (size_t)probe >= p->nprobes || !pred) {
			sqlite3_finalize(st);
			return load_fail(l, "a predicate names a missing probe");
		}
		free(p->probes[probe].predicate);
		p->probes[probe].predicate = xstrdup(pred);
	}
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return load_fail_sqlite(l);
	/* Hits in id order, each with its values (ordered by capture). */
	if (sqlite3_prepare_v2(l->db,
			       "SELECT h.id, h.probe, h.thread, h.time_ns, h.span, v.capture, v.status,"
			       " v.value, v.text FROM hits h LEFT JOIN hit_values v ON v.hit = h.id"
			       " ORDER BY h.id, v.capture",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	struct probe_hit cur = {0};
	struct hit_value vals[SONDE_CAPTURES];
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
		    p->captures[capture].probe != cur.probe || nvals == SONDE_CAPTURES) {
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
		return load_fail(l, bad);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
}

static int load_samples(struct loader *l)
{
	sqlite3_stmt *st, *links;
	if (sqlite3_prepare_v2(l->db,
			       "SELECT id, time_ns, cpu, thread, event, stack, weight FROM samples"
			       " ORDER BY id",
			       -1, &st, NULL) != SQLITE_OK)
		return load_fail_sqlite(l);
	if (sqlite3_prepare_v2(l->db,
			       "SELECT sample, span, probe FROM sample_spans ORDER BY sample, position",
			       -1, &links, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return load_fail_sqlite(l);
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
			return load_fail(l, "a sample refers to a missing thread, event or stack");
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
			return load_fail(l, bad);
		}
	}
	sqlite3_finalize(st);
	sqlite3_finalize(links);
	return r == SQLITE_DONE ? 0 : load_fail_sqlite(l);
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
	int rc = check_table(&l, &tables_read[0]) || load_meta(&l) || check_data_tables(&l) ||
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
/* ========================================================================= */

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
