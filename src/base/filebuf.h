/* filebuf — a whole input in memory, gunzipped when it is gzip.
 *
 * For formats that need random access (pprof, nflxprofile): everything
 * else streams through infile. Sizes are capped so a hostile file cannot
 * exhaust memory: a regular file over the cap is refused before it is read,
 * and decompression stops at the cap (a "zip bomb") with an error. */
#ifndef SONDE_FILEBUF_H
#define SONDE_FILEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "infile.h"

#define FILEBUF_MAX ((size_t)1 << 30) /* 1 GiB, once gunzipped */

struct filebuf {
	uint8_t *data; /* NUL-terminated for text parsers (not counted in len) */
	size_t len;
	bool was_gzip;
};

/* Reads `path` ("-" = standard input). Returns 0, or -1 with one line in err
 * (unreadable, too large, corrupt or truncated gzip). */
int filebuf_read(const char *path, struct filebuf *out, char *err, size_t errlen);

/* Same, from memory (gunzips when gzip). */
int filebuf_from_memory(const void *data, size_t len, struct filebuf *out, char *err,
			size_t errlen);

/* What is left of an open input; `what` names its format for the message
 * when it is over FILEBUF_MAX ("pprof"). */
int filebuf_from_infile(struct infile *in, const char *what, struct filebuf *out, char *err,
			size_t errlen);

void filebuf_free(struct filebuf *b);

#endif
