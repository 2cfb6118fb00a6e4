/* perfscript — the text `perf script` prints (one record header line, then
 * the call chain leaf first, one frame a line, then a blank line).
 *
 * One scanner finds the records; two readers take them:
 *  - perfscript_collapse() writes folded stacks as FlameGraph's
 *    stackcollapse-perf.pl does (the revision whose output is the test
 *    corpus in shared/corpus/flamegraph, a14f791);
 *  - perfscript_read() builds sonde's profile model from the same records.
 *
 * Line grammar (what the Perl tool accepts, reproduced byte for byte):
 *  - lines starting with '#' are comments;
 *  - an empty line ends a record;
 *  - a record header is "COMM PID[/TID] ...": COMM is the shortest prefix of
 *    at least two characters (starting with a non-space) followed by
 *    whitespace, digits (optionally "/digits") and whitespace. One number is
 *    the TID (the PID is then "?"); so is a TID of "0". When the line ends
 *    with "[:] [PERIOD] EVENT:" that gives the event and the period (the
 *    sample's count; 1 when absent or "0");
 *  - a stack line is "ADDR SYMBOL (MODULE)" (ADDR: word characters; MODULE
 *    without spaces), leading whitespace optional;
 *  - any other line is skipped (the Perl tool warns and skips it). */
#ifndef SONDE_PERFSCRIPT_H
#define SONDE_PERFSCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "infile.h"
#include "profile.h"

struct collapse_options {
	bool pid;    /* root frame "comm-PID" */
	bool tid;    /* root frame "comm-PID/TID" (wins over pid) */
	bool kernel; /* "_[k]" on kernel frames */
	bool jit;    /* "_[j]" on frames from /tmp/perf-PID.map; --all = kernel && jit */
	bool addrs;  /* unknown symbols as "[module <addr>]" */
	const char *event; /* keep only this event; NULL or "" = the first event seen */
};

/* Writes the folded stacks of `text` (len bytes, text[len] == 0) to `out`,
 * sorted bytewise, identical stacks summed, as `stackcollapse-perf.pl` with
 * the same options, over the records the one scanner of this module finds
 * (perfscript_scan.c, perfscript_scan_records: the same records
 * perfscript_read makes samples of; it differs from the Perl tool only on
 * text perf script does not write: a record no blank line ends before the
 * next header, lines before the first header, NUL bytes). Records of
 * events other than the one kept are left out. Returns 0, or -1 with one
 * line in err (bad input, or writing failed). */
int perfscript_collapse(const char *text, size_t len, const struct collapse_options *o, FILE *out,
			char *err, size_t errlen);

/* Where a collapse goes: the folded stacks to `out`; what it left out of
 * the input to note (notelen bytes; input_note_format, "" when nothing;
 * note may be NULL). */
struct collapse_output {
	FILE *out;
	char *note;
	size_t notelen;
};

/* The same, line by line from an input (memory holds the distinct stacks,
 * not the text) to w; also -1 with err when the input fails (infile_line). */
int perfscript_collapse_lines(struct infile *in, const struct collapse_options *o,
			      const struct collapse_output *w, char *err, size_t errlen);

/* Reads the records into a profile: one sample per record (time_ns from the
 * timestamp in seconds, 0 when absent; cpu from "[NNN]"; thread (pid, tid,
 * comm) with pid 0 when perf printed only one number; the event interned by
 * name, every event kept; weight = the period, or 1), its stack interned
 * root first. Frame names are cleaned as the collapse does by default
 * (offsets stripped, "[unknown]" -> "[module-basename]", arguments dropped,
 * ';' -> ':', quotes removed, Java 'L' prefix removed for comm "java");
 * kinds: FRAME_INLINED for the 2nd.. parts of "a->b" symbols and for module
 * "(inlined)", else FRAME_KERNEL (module "[...]" or "...vmlinux"), FRAME_JIT
 * (/tmp/perf-PID.map), FRAME_UNKNOWN ("[unknown]" symbol), FRAME_USER.
 * The records are the collapse's (perfscript_scan_records); what it left
 * out is in meta input_skipped_lines and input_unterminated_records
 * (profile.h, profile_input_note). Errors (NULL, one line in err): a NUL
 * byte, a first non-comment line that is not a record header, more than
 * 4096 distinct event names.
 * Meta: source_format "perf-script", event (the first), start_ns, end_ns,
 * duration_s (when the records have timestamps). */
struct profile *perfscript_read(const char *text, size_t len, char *err, size_t errlen);

/* The same, line by line from an input; also NULL with err when the input
 * fails (infile_line). */
struct profile *perfscript_read_lines(struct infile *in, char *err, size_t errlen);

/* Does the text look like `perf script` output? (its first non-comment line
 * is a record header and some header is followed by a stack line of a hex
 * address, a symbol and "(module)") */
bool perfscript_detect(const char *text, size_t len);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_perfscript;

#endif
