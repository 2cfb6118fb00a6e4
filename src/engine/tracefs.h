/* tracefs — finds (and if needed mounts) the kernel's tracing filesystem.
 *
 * A fresh machine may have neither tracefs nor debugfs mounted. When tracefs
 * is needed and absent, it is mounted at /sys/kernel/tracing (root only)
 * instead of failing. */
#ifndef SONDE_TRACEFS_H
#define SONDE_TRACEFS_H

#include <stddef.h>

/* Returns the tracefs mount point, mounting it if needed; NULL with a
 * message in err when it is not mounted and cannot be. */
const char *tracefs_path(char *err, size_t errlen);

/* The id of tracepoint category:name (tracefs events/CAT/NAME/id), or -1 with
 * a message in err (unknown tracepoint, no tracefs). */
long tracefs_tracepoint_id(const char *category, const char *name, char *err, size_t errlen);

#endif
