/* recording — the .sonde file: an SQLite database with a documented schema
 * (docs/recording.md), so users can query it with SQL.
 *
 * Saving is atomic: the database is built in memory, written to a temporary
 * file next to the destination and renamed over it only when complete, so an
 * interrupted or failed save never leaves a partial file at the destination
 * (outfile's rules: a recording needs a regular file, so standard output,
 * devices, FIFOs and symbolic links are refused).
 * Loading checks that the file is a sonde recording of a version this build
 * reads, and refuses anything else with one clear line. */
#ifndef SONDE_RECORDING_H
#define SONDE_RECORDING_H

#include <stddef.h>

#include "profile.h"

#define RECORDING_FORMAT "sonde-recording"
#define RECORDING_VERSION 1

/* Checks that `path` can be written (outfile_check_regular: an allowed
 * destination whose directory takes a new file). Returns 0, or -1 with one
 * line in err. Call before starting work that would be lost. */
int recording_check_writable(const char *path, char *err, size_t errlen);

/* Writes the whole profile to `path`. Returns 0, or -1 with err (and no file
 * left at path). */
int recording_save(const struct profile *p, const char *path, char *err, size_t errlen);

/* The same in two steps, so that a recording that could not be written
 * (a full disk) is not lost: recording_build makes the file's bytes in
 * memory (NULL with err), recording_image_write writes them to a path
 * (outfile: complete or absent; a full disk is reported with the size
 * needed and the room there was), as often as needed. */
struct recording_image;
struct recording_image *recording_build(const struct profile *p, char *err, size_t errlen);
size_t recording_image_size(const struct recording_image *img);
int recording_image_write(const struct recording_image *img, const char *path, char *err,
			  size_t errlen);
/* When writing to `path` failed: writes the image where there is room, as
 * "rescued-PID-NAME" in $TMPDIR (else /tmp), /var/tmp or $HOME, the first
 * whose filesystem has room. Returns 0 with the path in `saved`, or -1 when
 * none had. */
int recording_image_rescue(const struct recording_image *img, const char *path, char *saved,
			   size_t savedlen);
void recording_image_free(struct recording_image *img);

/* Reads a recording. Returns a new profile, or NULL with err. */
struct profile *recording_load(const char *path, char *err, size_t errlen);

/* The entry of the formats registry (registry.h). */
struct format_entry;
extern const struct format_entry format_recording;

#endif
