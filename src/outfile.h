/* outfile — output files that are either complete or absent.
 *
 * Writes go to a temporary file beside the destination; outfile_commit
 * checks every write succeeded and renames it into place, outfile_abort
 * removes it. "-" means standard output (no atomicity possible there). */
#ifndef SONDE_OUTFILE_H
#define SONDE_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

struct outfile {
	FILE *f;
	char *path; /* destination */
	char *tmp;  /* NULL for stdout */
};

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);
int outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);

#endif
