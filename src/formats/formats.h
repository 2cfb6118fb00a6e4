/* formats — reading any profile format sonde reads and converting between
 * them, through the formats registry (registry.h: which formats there are,
 * how each is detected, read and written).
 *
 * An input's format is detected from its content (not its name), or forced.
 * Everything goes through the profile model, except the direct conversions
 * a format declares (perf script -> folded, with stackcollapse-perf.pl's
 * exact rules). */
#ifndef SONDE_FORMATS_H
#define SONDE_FORMATS_H

#include <stddef.h>

#include "profile.h"
#include "registry.h"

/* Reads a profile in any readable format; `forced` = NULL detects it from
 * the content. Returns NULL with one line in err. *detected (may be NULL)
 * receives the format read. */
struct profile *formats_load(const char *path, const struct format_entry *forced,
			     const struct format_entry **detected, char *err, size_t errlen);

/* A conversion: `in` (format `from`, or NULL to detect it) to `out` in
 * format `to`; `modes` may be NULL. What the reader left out of the input
 * goes in note (notelen bytes, may be NULL; one line, "" when nothing:
 * profile.h's input_note_format). */
struct format_conversion {
	const char *in;
	const struct format_entry *from;
	const char *out;
	const struct format_entry *to;
	const struct folded_modes *modes;
	char *note;
	size_t notelen;
};

/* Does c, atomically: a failed conversion leaves no file. Returns 0, or -1
 * with err. */
int formats_convert(const struct format_conversion *c, char *err, size_t errlen);

#endif
