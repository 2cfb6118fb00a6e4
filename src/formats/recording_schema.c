/* recording_schema — the tables of a .sonde file. The contract is in
 * recording_schema.h. */
#define _GNU_SOURCE
#include "recording_schema.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "recording_loader.h"

const char *const recording_schema_sql =
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
	/* A branch probe's outcomes (docs/recording.md): what each of its
	 * point probes counts. */
	"CREATE TABLE branches(probe INTEGER PRIMARY KEY REFERENCES probes(id),"
	" location TEXT NOT NULL, line INTEGER NOT NULL, jump INTEGER NOT NULL,"
	" jumps INTEGER NOT NULL, outcome TEXT NOT NULL, to_line INTEGER NOT NULL, to_file TEXT,"
	" instruction TEXT NOT NULL, source TEXT, copies INTEGER NOT NULL,"
	" mixed INTEGER NOT NULL DEFAULT 0);"
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

/* ---- frame kinds ---------------------------------------------------------- */

static const char *const kind_names[] = {
	[FRAME_USER] = "user",       [FRAME_KERNEL] = "kernel", [FRAME_INLINED] = "inlined",
	[FRAME_JIT] = "jit",         [FRAME_PROCESS] = "process", [FRAME_UNKNOWN] = "unknown",
	[FRAME_OVERHEAD] = "overhead", [FRAME_STATE] = "state", [FRAME_PYTHON] = "python",
};

enum frame_kind recording_kind_from_name(const char *s)
{
	for (size_t i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (kind_names[i] && strcmp(kind_names[i], s) == 0)
			return (enum frame_kind)i;
	return FRAME_UNKNOWN;
}

const char *recording_kind_name(enum frame_kind k)
{
	return kind_names[k];
}

/* ---- the check of a file's tables ---------------------------------------- */

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
		return recording_load_fail_sqlite(l);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, column, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	int hidden = r == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return recording_load_fail_sqlite(l);
	if (r == SQLITE_ROW && hidden) {
		char what[160];
		snprintf(what, sizeof(what), "%s.%s is a generated column, not stored data", table,
			 column);
		return recording_load_fail(l, what);
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
		return recording_load_fail_sqlite(l);
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
		return l->steps_left <= 0 ? recording_load_fail_sqlite(l) : recording_load_fail(l, what);
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
			return recording_load_fail(l, what);
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
/* Absent from recordings made before branch probes. */
static const struct table_spec branches_table = {
	"branches",
	{"probe", "location", "line", "jump", "jumps", "outcome", "to_line", "to_file", "instruction",
	 "source", "copies", "mixed"}};
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
		return recording_load_fail_sqlite(l);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	int r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW && r != SQLITE_DONE)
		return recording_load_fail_sqlite(l);
	return r == SQLITE_ROW;
}

int recording_check_data_tables(struct loader *l)
{
	for (size_t t = 1; t < sizeof(tables_read) / sizeof(tables_read[0]); t++)
		if (check_table(l, &tables_read[t]))
			return -1;
	/* Recordings made before line probes have no point_calls table. */
	int has = has_table(l, "point_calls");
	if (has < 0 || (has && check_table(l, &point_calls_table)))
		return -1;
	l->has_point_calls = has;
	has = has_table(l, "branches");
	if (has < 0 || (has && check_table(l, &branches_table)))
		return -1;
	l->has_branches = has;
	has = has_table(l, "thread_samples");
	if (has < 0 || (has && check_table(l, &thread_samples_table)))
		return -1;
	l->has_thread_samples = has;
	return 0;
}


int recording_check_meta_table(struct loader *l)
{
	return check_table(l, &tables_read[0]);
}

int recording_check_value_tables(struct loader *l)
{
	for (size_t t = 0; t < sizeof(tables_values) / sizeof(tables_values[0]); t++)
		if (check_table(l, &tables_values[t]))
			return -1;
	return 0;
}
