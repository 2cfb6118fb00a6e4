/* recording_write — a profile into a .sonde file: the tables of
 * recording_schema_sql filled in one transaction of an in-memory database,
 * whose bytes are then written atomically (outfile), or rescued where there
 * is room. The contract is in recording.h. */
#define _GNU_SOURCE
#include "recording.h"

#include <inttypes.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "errbuf.h"
#include "outfile.h"
#include "recording_schema.h"
#include "syscalls.h"
#include "util.h"
#include "values.h"
#include "view.h"

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
		sqlite3_bind_text(st, 6, recording_kind_name(f->kind), -1, SQLITE_STATIC);
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
		sqlite3_bind_text(pr, 9, q->branch ? "branch" : q->point >= 0 ? "line" : "function", -1,
				  SQLITE_STATIC);
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
	if (rc || prepare(db,
			  "INSERT INTO branches(probe, location, line, jump, jumps, outcome, to_line,"
			  " to_file, instruction, source, copies, mixed) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
			  &sp, err, errlen))
		return -1;
	for (size_t i = 0; i < p->nprobes && !rc; i++) {
		const struct probe_branch *b = p->probes[i].branch;
		if (!b)
			continue;
		sqlite3_bind_int64(sp, 1, (sqlite3_int64)i);
		sqlite3_bind_text(sp, 2, b->at, -1, SQLITE_STATIC);
		sqlite3_bind_int64(sp, 3, b->line);
		sqlite3_bind_int64(sp, 4, b->jump);
		sqlite3_bind_int64(sp, 5, b->jumps);
		sqlite3_bind_text(sp, 6, b->taken ? "taken" : "not-taken", -1, SQLITE_STATIC);
		sqlite3_bind_int64(sp, 7, b->to_line);
		if (b->to_file)
			sqlite3_bind_text(sp, 8, b->to_file, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(sp, 8);
		sqlite3_bind_text(sp, 9, b->insn, -1, SQLITE_STATIC);
		if (b->source)
			sqlite3_bind_text(sp, 10, b->source, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(sp, 10);
		sqlite3_bind_int64(sp, 11, b->copies);
		sqlite3_bind_int64(sp, 12, b->mixed);
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
	    exec_sql(img->db, recording_schema_sql, inner, sizeof(inner)) ||
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
