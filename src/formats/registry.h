/* registry — the one table of the profile formats sonde reads and writes.
 *
 * Each format's own module defines its entry (pprof.c ends with
 * `const struct format_entry format_pprof = {...}`, declared in pprof.h);
 * registry.c lists the entries, one line each. Everything that names,
 * detects, reads or writes a format asks the table: --from/--to, the format
 * an output name chooses, detection from the content, formats_load and
 * formats_convert, `convert --help`'s list and the "sonde reads ..."
 * messages. Adding a format is its module and its line in registry.c. */
#ifndef SONDE_REGISTRY_H
#define SONDE_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "filebuf.h"
#include "infile.h"
#include "profile.h"
#include "view.h"

struct format_conversion; /* formats.h */

/* What detection sees of an input: its head (the whole input when
 * `complete`), of which the first `text` bytes are whole lines. */
struct format_head {
	const uint8_t *data;
	size_t len, text;
	bool complete;
};

/* An input being read: opened (and its format found) by formats.c. */
struct format_input {
	const char *path;
	struct infile in;
	struct filebuf whole; /* the input whole, once a reader or detection needed it */
};

/* Folded output like stackcollapse-perf.pl's modes (and what a conversion
 * keeps). */
struct folded_modes {
	bool pid, tid, kernel, jit, addrs;
	const char *event; /* perf script: only this event (default: the first) */
	bool show_overhead; /* keep samples of sonde's own machinery ("[sonde]"),
			     * which other formats cannot mark */
	/* What time the output counts (view.h): on-CPU samples (default), or,
	 * of a recording made with --off-cpu, off-CPU or wall-clock time in
	 * microseconds. */
	enum view_time time;
};

/* What a writer may use besides the profile. */
struct format_write_options {
	const char *input; /* the input's name (a title) */
	const struct folded_modes *modes;
};

struct format_entry {
	const char *name;	     /* for --from/--to, and in messages */
	const char *const *aliases;  /* other names --from/--to take; NULL-terminated, or NULL */
	const char *const *suffixes; /* output names that choose it; NULL-terminated, or NULL */
	const char *what;	     /* in lists: "sonde reads perf script, folded stacks, ..." */
	const char *about;	     /* more words for --help, or NULL */

	/* Detection (registry_detect; none of them: only with --from). detect
	 * decides from the head. A format only the whole input can confirm (a
	 * protobuf one) gives detect_whole instead, and detect_head: may an
	 * input that starts so be one? Only then is the input read whole. */
	bool (*detect)(const struct format_head *h);
	bool (*detect_whole)(const uint8_t *data, size_t len);
	bool (*detect_head)(const uint8_t *data, size_t len);

	/* Reading: at most one. read_lines and read_whole say what is wrong in
	 * err (formats.c names the file and the format); read_input writes the
	 * whole message. */
	struct profile *(*read_lines)(struct infile *in, char *err, size_t errlen);
	struct profile *(*read_whole)(const uint8_t *data, size_t len, char *err, size_t errlen);
	struct profile *(*read_input)(struct format_input *x, char *err, size_t errlen);

	/* Writing: at most one. write streams to an output that formats.c
	 * commits, or removes when it returns -1 (errno may say why); save
	 * writes `path` itself, atomically (-1 with err). */
	int (*write)(FILE *f, struct profile *p, const struct format_write_options *o);
	int (*save)(const struct profile *p, const char *path, char *err, size_t errlen);
	/* The output keeps sonde's own samples apart ("[sonde]"): they are not
	 * dropped before writing it. */
	bool marks_overhead;

	/* A conversion to `direct_to` that bypasses the profile model (perf
	 * script -> folded, streamed with stackcollapse-perf.pl's rules over
	 * the records read_lines reads): the input streamed to out with c's
	 * modes (never NULL), what was left out of it in c's note
	 * (input_note_format). Returns 0, or -1 with err (without the file's
	 * name). */
	const struct format_entry *direct_to;
	int (*direct)(struct infile *in, FILE *out, const struct format_conversion *c, char *err,
		      size_t errlen);
};

/* The table, in the order detection tries it (a stricter format before a
 * looser one) and --help lists it; NULL-terminated. */
extern const struct format_entry *const registry_formats[];

bool registry_can_read(const struct format_entry *e);
bool registry_can_write(const struct format_entry *e);

/* The format named `name` (its name or an alias), or NULL. */
const struct format_entry *registry_find(const char *name);

/* The format an output file name chooses by its ending (the longest
 * matching suffix), or NULL. */
const struct format_entry *registry_for_output(const char *path);

/* Detects the format of an input opened in x (its head, then, when the head
 * may start a format that needs it, the input whole, kept in x->whole). *found is NULL when no
 * format recognizes it. Returns 0, or -1 with err (the input unreadable). */
int registry_detect(struct format_input *x, const struct format_entry **found, char *err,
		    size_t errlen);

/* Text for messages and help, into buf (truncated to len):
 *  registry_list_names: "sonde, perf-script, ..., speedscope or chrome";
 *  registry_list_readable: "sonde recordings, perf script, ... and nflxprofile";
 *  registry_describe: `convert --help`'s table, a line or more per format
 *  (names, in/out, what, output names), each line ending in '\n'. */
void registry_list_names(char *buf, size_t len);
void registry_list_readable(char *buf, size_t len);
void registry_describe(char *buf, size_t len);

#endif
