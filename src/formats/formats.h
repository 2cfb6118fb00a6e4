/* formats — every profile format sonde reads and writes, behind one
 * interface, with detection from content (not the file name).
 *
 * In: sonde recordings, perf script text, folded stacks, pprof (gzipped or
 * raw protobuf), nflxprofile. Out: the same plus speedscope JSON and Chrome
 * Trace Event JSON. Everything goes through the profile model, except
 * perf script -> folded, which uses stackcollapse-perf.pl's exact rules. */
#ifndef SONDE_FORMATS_H
#define SONDE_FORMATS_H

#include <stdbool.h>
#include <stddef.h>

#include "profile.h"

enum format {
	FORMAT_UNKNOWN = 0,
	FORMAT_RECORDING,
	FORMAT_PERF_SCRIPT,
	FORMAT_FOLDED,
	FORMAT_PPROF,
	FORMAT_NFLX,
	FORMAT_SPEEDSCOPE,
	FORMAT_CHROME,
};

const char *format_name(enum format f);

/* "sonde", "perf-script" (or "perf"), "folded", "pprof", "nflx"
 * ("nflxprofile"), "speedscope", "chrome" ("perfetto"); FORMAT_UNKNOWN
 * otherwise. */
enum format format_parse(const char *name);

/* The output format a file name suggests (.sonde, .folded, .pb.gz/.pprof,
 * .nflx/.nflxprofile, .speedscope.json, .trace.json/.chrome.json/.perfetto.json),
 * or FORMAT_UNKNOWN. */
enum format format_from_output_name(const char *path);

/* Folded output like stackcollapse-perf.pl's modes (and what a conversion
 * keeps). */
struct folded_modes {
	bool pid, tid, kernel, jit, addrs;
	const char *event; /* perf script: only this event (default: the first) */
	bool show_overhead; /* keep samples of sonde's own machinery ("[sonde]"),
			     * which other formats cannot mark */
};

/* Reads a profile in any input format; `forced` = FORMAT_UNKNOWN detects it
 * from the content. Returns NULL with one line in err. *detected (may be
 * NULL) receives the format read. */
struct profile *formats_load(const char *path, enum format forced, enum format *detected,
			     char *err, size_t errlen);

/* Converts `in` to `out` in format `to` (atomically: a failed conversion
 * leaves no file). Returns 0, or -1 with err. */
int formats_convert(const char *in, enum format from, const char *out, enum format to,
		    const struct folded_modes *modes, char *err, size_t errlen);

#endif
