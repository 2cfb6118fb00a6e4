#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->path = xstrdup(path);
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
	int fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(o->tmp);
		free(o->path);
		memset(o, 0, sizeof(*o));
		return -1;
	}
	return 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int rc = 0;
	if (!o->tmp) {
		if (fflush(o->f) != 0 || ferror(o->f)) {
			snprintf(err, errlen, "writing to standard output failed: %s", strerror(errno));
			rc = -1;
		}
	} else {
		int bad = ferror(o->f);
		int closed = fclose(o->f);
		if (closed != 0 || bad) {
			/* errno is only meaningful for a failed fclose; a stream error
			 * set earlier says nothing more precise. */
			snprintf(err, errlen, "writing %s failed%s%s", o->path, closed ? ": " : "",
				 closed ? strerror(errno) : "");
			unlink(o->tmp);
			rc = -1;
		} else if (rename(o->tmp, o->path) < 0) {
			snprintf(err, errlen, "cannot move output into place at %s: %s", o->path,
				 strerror(errno));
			unlink(o->tmp);
			rc = -1;
		}
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (o->tmp) {
		fclose(o->f);
		unlink(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
