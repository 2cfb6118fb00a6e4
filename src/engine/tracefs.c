#include "tracefs.h"

#include "errbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define TRACEFS_MAGIC_NUMBER 0x74726163
#define DEBUGFS_MAGIC_NUMBER 0x64626720

static int is_fs(const char *path, long magic)
{
	struct statfs st;
	return statfs(path, &st) == 0 && (long)st.f_type == magic;
}

const char *tracefs_path(char *err, size_t errlen)
{
	static const char *const primary = "/sys/kernel/tracing";
	static const char *const legacy = "/sys/kernel/debug/tracing";

	if (is_fs(primary, TRACEFS_MAGIC_NUMBER))
		return primary;
	if (is_fs(legacy, TRACEFS_MAGIC_NUMBER))
		return legacy;
	if (mount("tracefs", primary, "tracefs", 0, NULL) == 0)
		return primary;
	int e = errno;
	/* Old kernels expose tracing only under debugfs. */
	if (is_fs("/sys/kernel/debug", DEBUGFS_MAGIC_NUMBER) && access(legacy, F_OK) == 0)
		return legacy;
	errbuf_set(err, errlen,
		   "tracefs is not mounted and mounting it at %s failed (%s); run as root or "
		   "mount it: mount -t tracefs tracefs %s",
		   primary, strerror(e), primary);
	return NULL;
}

long tracefs_tracepoint_id(const char *category, const char *name, char *err, size_t errlen)
{
	const char *root = tracefs_path(err, errlen);
	if (!root)
		return -1;
	char path[512];
	snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, category, name);
	FILE *f = fopen(path, "r");
	if (!f) {
		errbuf_set(err, errlen,
			   "unknown tracepoint %s:%s (no %s); list them with: ls %s/events/%s",
			   category, name, path, root, category);
		return -1;
	}
	long id = -1;
	if (fscanf(f, "%ld", &id) != 1)
		id = -1;
	fclose(f);
	if (id < 0)
		errbuf_set(err, errlen, "cannot read the id of tracepoint %s:%s from %s", category,
			   name, path);
	return id;
}
