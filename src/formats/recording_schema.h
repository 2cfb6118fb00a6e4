/* recording_schema — the tables of a .sonde file (docs/recording.md), on
 * both sides: the SQL the writer creates them with, the names of frame
 * kinds in them, and the reader's check, before it reads anything, that a
 * file's tables are plain tables with the columns it reads (a view, a
 * virtual table or a generated column of that name would run whatever the
 * file brings). The checks record in the loader which optional columns and
 * tables a file has (recordings made before them lack them) and refuse
 * with recording_load_fail (recording_loader.h). Private to formats. */
#ifndef SONDE_RECORDING_SCHEMA_H
#define SONDE_RECORDING_SCHEMA_H

#include "profile.h"

struct loader;

/* Creates every table, index and view of a recording. */
extern const char *const recording_schema_sql;

/* A frame kind's name in the frames table, and back (FRAME_UNKNOWN for a
 * name it does not know). */
const char *recording_kind_name(enum frame_kind k);
enum frame_kind recording_kind_from_name(const char *s);

/* The meta table, checked first: a file that is not a recording is told so
 * by it. Returns 0, or -1 with the loader's err. */
int recording_check_meta_table(struct loader *l);
/* Every other table the reader reads (point_calls and thread_samples when
 * present); sets the loader's column and table flags. */
int recording_check_data_tables(struct loader *l);
/* The tables of captured values, once the reader has seen captures. */
int recording_check_value_tables(struct loader *l);

#endif
