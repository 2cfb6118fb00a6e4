/* infile — an input profile read as a stream: a file, standard input or
 * bytes in memory, gunzipped on the fly when it is gzip.
 *
 * What it offers the readers, so that no input is held whole unless its
 * format needs it:
 *  - the head: the first INFILE_HEAD bytes (decompressed), to detect the
 *    format without reading further;
 *  - lines, one at a time (text formats are parsed as they stream: memory
 *    holds one line, at most INFILE_MAX_LINE bytes);
 *  - or the rest whole, up to a cap given by the caller (formats that need
 *    random access), refused before reading when a regular file's size
 *    already says it is too large.
 * The head is part of what lines and the whole read return: peeking it
 * consumes nothing. Every failure (unreadable, corrupt or truncated gzip, a
 * line or a file over its cap) is -1 with one line in err; only
 * infile_open's names the file, the others are for the caller to prefix
 * with the input's name. */
#ifndef SONDE_INFILE_H
#define SONDE_INFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INFILE_HEAD ((size_t)1 << 20)      /* what detection sees */
#define INFILE_MAX_LINE ((size_t)16 << 20) /* a longer line is not a text profile */

struct infile {
	int fd;              /* -1 for memory */
	bool close_fd;       /* not standard input */
	uint64_t file_size;  /* a regular file's size, else 0 */
	const uint8_t *mem;  /* memory source (not copied) */
	size_t mem_len, mem_pos;
	bool gzip;
	bool started; /* the first bytes were read: gzip or not is known */
	struct z_stream_s *z; /* zlib's stream, while inflating */
	uint8_t *zin; /* compressed bytes read, not yet inflated */
	uint8_t *buf; /* decompressed bytes: [start, end) not yet consumed */
	size_t start, end, cap;
	bool eof; /* nothing more to come into buf */
	size_t lineno;
};

/* Opens `path` ("-" = standard input). Returns 0, or -1 with err. */
int infile_open(struct infile *in, const char *path, char *err, size_t errlen);

/* Bytes in memory (kept by the caller until infile_close). */
void infile_from_memory(struct infile *in, const void *data, size_t len);

/* The first min(INFILE_HEAD, input size) bytes, decompressed. *complete
 * says whether that is the whole input. Returns 0, or -1 with err. */
int infile_head(struct infile *in, const uint8_t **head, size_t *len, bool *complete, char *err,
		size_t errlen);

/* The next line, without its '\n' (a last line without one counts; a '\r'
 * is left to the reader; NUL bytes are ordinary). *line stays valid until
 * the next call. Returns 1, 0 at the end, or -1 with err (a line longer
 * than INFILE_MAX_LINE, a read error). in->lineno counts the lines. */
int infile_line(struct infile *in, const char **line, size_t *len, char *err, size_t errlen);

/* How much a whole read may take: `max` bytes; `what` names the format in
 * the message that refuses more ("pprof"). */
struct infile_limit {
	size_t max;
	const char *what;
};

/* Everything not yet consumed, in one malloc'd buffer (NUL-terminated, the
 * NUL not counted), refused when larger than lim->max bytes, or when gzip
 * that inflates past 64 MiB to over 200 times the compressed bytes (a bomb:
 * refused as it inflates). Returns 0, or -1 with err. */
int infile_read_all(struct infile *in, const struct infile_limit *lim, uint8_t **data, size_t *len,
		    char *err, size_t errlen);

void infile_close(struct infile *in);

#endif
