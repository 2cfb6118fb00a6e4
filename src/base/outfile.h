/* outfile — output files that are either complete or absent, and that never
 * replace anything but a regular file.
 *
 * What happens depends on what the output path names when it is opened:
 *  - nothing, or a regular file: the output goes to a new temporary file
 *    beside it, PATH.tmp.<random>, created exclusively (O_EXCL|O_NOFOLLOW:
 *    a file or link planted at that name is never written through), and
 *    outfile_commit renames it over PATH only when every write succeeded.
 *    outfile_abort, a failed commit, and a signal that would end the process
 *    (SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGXFSZ while their default
 *    action is in place) remove it.
 *  - "-": standard output.
 *  - a device, FIFO or socket, or a symbolic link to one (/dev/null,
 *    /dev/stdout on a pipe or terminal): written through. Nothing is
 *    created, truncated or renamed there; no atomicity is possible.
 *  - a symbolic link to a regular file (or to nothing): refused, naming the
 *    target. Writing through it would let a planted link aim the output at
 *    another file; replacing it would destroy the link.
 *  - a directory: refused.
 *
 * A write that fails (a full disk, a quota) does not stop the writer: the
 * stream goes on counting what it is given, so the failure is reported at
 * commit with the destination, the reason, the size the whole output
 * needed and the room its filesystem had ("cannot write PATH: No space left
 * on device: it needs 52.4 MB and its filesystem has 32.0 kB free"). A
 * device written through says only why ("writing PATH failed: ...").
 * Errors are one line in err. */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile_sink; /* the file behind the stream: counts, keeps the first error */

struct outfile {
	FILE *f;    /* write here */
	char *path; /* destination, as given */
	char *tmp;  /* the temporary file; NULL when written through */
	dev_t tmp_dev; /* the temporary file's identity: commit renames it only */
	ino_t tmp_ino; /* while the name still leads to the file created here */
	struct outfile_sink *sink; /* NULL for standard output */
};

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);

/* For outputs that only make sense as a regular file (a recording, an
 * SQLite database): "-" and destinations that would be written through are
 * refused, naming `what` is written ("a recording (an SQLite database)"). */
int outfile_open_regular(struct outfile *o, const char *path, const char *what, char *err,
			 size_t errlen);

/* Checks, without leaving anything behind, that outfile_open_regular(path)
 * would succeed now: the destination is allowed and its directory takes a
 * new file. For commands that would otherwise lose work done before saving. */
int outfile_check_regular(const char *path, const char *what, char *err, size_t errlen);

/* Checks every write succeeded and that the temporary file's name still
 * leads to the file created here, then renames it into place (or flushes
 * and closes what was written through). Returns 0, or -1 with err, the
 * temporary file removed. Either way o is released. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file; o is released. */
void outfile_abort(struct outfile *o);

/* Writes `len` bytes to `path` as one complete regular file
 * (outfile_open_regular, write, outfile_commit). Returns 0, or -1 with err. */
int outfile_write_regular(const char *path, const char *what, const void *data, size_t len,
			  char *err, size_t errlen);

/* Gzip mode: a stream that gzips what is written to it (zlib's fastest
 * level) into `under`, for outputs whose format is gzipped (pprof). fclose
 * it to end the gzip stream: EOF when compressing or writing to `under`
 * failed. `under` stays open (its own errors are its own: check them after).
 * Returns NULL when zlib cannot start (out of memory). */
FILE *outfile_gzip(FILE *under);

/* "52.4 MB": a size for messages. */
const char *outfile_size_text(uint64_t bytes, char *buf, size_t size);

#endif
