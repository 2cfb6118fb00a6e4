/* filebuf — a whole input file in memory, gunzipped when it is gzip.
 *
 * Profile files are read whole (formats like pprof need random access).
 * Sizes are capped so a hostile file cannot exhaust memory: the file itself
 * and its decompressed form (a "zip bomb" stops at the cap with an error). */
#ifndef SONDE_FILEBUF_H
#define SONDE_FILEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FILEBUF_MAX ((size_t)4 << 30) /* 4 GiB, compressed or not */

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

void filebuf_free(struct filebuf *b);

#endif
