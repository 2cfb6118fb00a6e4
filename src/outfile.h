/* outfile — output files that are either complete or absent.
 *
 * Writes go to a temporary file beside the destination; outfile_commit
 * checks every write succeeded and renames it into place, outfile_abort
 * removes it. "-" means standard output (no atomicity possible there).
 *
 * A write that fails (a full disk, a quota) does not stop the writer: the
 * stream goes on counting what it is given, so the failure is reported at
 * commit with the destination, the reason, the size the whole output
 * needed and the room its filesystem had. */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct outfile_sink; /* the temporary file behind the stream */

struct outfile {
	FILE *f;
	char *path; /* destination */
	char *tmp;  /* NULL for stdout */
	struct outfile_sink *sink;
};

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);
int outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);

/* Writes `len` bytes to `path` as one complete file (outfile_open, write,
 * outfile_commit). Returns 0, or -1 with err. */
int outfile_write_all(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* "52.4 MB": a size for messages. */
const char *outfile_size_text(uint64_t bytes, char *buf, size_t size);

#endif
