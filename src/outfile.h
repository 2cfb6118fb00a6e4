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
 * Errors are one line in err ("cannot write PATH: why"). */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile {
	FILE *f;    /* write here (NULL for outfile_open_named) */
	char *path; /* destination, as given */
	char *tmp;  /* the temporary file; NULL when written through */
	dev_t tmp_dev; /* the temporary file's identity: commit renames it only */
	ino_t tmp_ino; /* while the name still leads to the file created here */
	int held_fd;   /* named outputs: keeps that inode from being reused */
};

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);

/* For writers that open the file by name themselves (SQLite): only a
 * temporary file is made (o->tmp, empty, o->f NULL), so "-" and destinations
 * that would be written through are refused, naming `what` is written ("a
 * recording (an SQLite database)"). The writer must not follow a symbolic
 * link at o->tmp (SQLITE_OPEN_NOFOLLOW); commit checks the name still leads
 * to the file created here. */
int outfile_open_named(struct outfile *o, const char *path, const char *what, char *err,
		       size_t errlen);

/* Checks, without leaving anything behind, that outfile_open_named(path)
 * would succeed now: the destination is allowed and its directory takes a
 * new file. For commands that would otherwise lose work done before saving. */
int outfile_check_named(const char *path, const char *what, char *err, size_t errlen);

/* Checks every write succeeded, then renames the temporary file into place
 * (or flushes and closes what was written through). Returns 0, or -1 with
 * err, the temporary file removed. Either way o is released. */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Closes and removes the temporary file; o is released. */
void outfile_abort(struct outfile *o);

#endif
