#define _GNU_SOURCE
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util.h"

struct outfile_sink {
	int fd;
	uint64_t offered; /* bytes the writer gave, written or not */
	int error;        /* the first write's errno, 0 while all went well */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
	struct outfile_sink *s = cookie;
	s->offered += n;
	for (size_t done = 0; !s->error && done < n;) {
		ssize_t w = write(s->fd, buf + done, n - done);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			s->error = w < 0 ? errno : EIO;
		else
			done += (size_t)w;
	}
	/* Accepted either way: the writer goes on, so the size the whole
	 * output needs is known when the failure is reported. */
	return (ssize_t)n;
}

static int sink_close(void *cookie)
{
	struct outfile_sink *s = cookie;
	if (close(s->fd) < 0 && !s->error)
		s->error = errno;
	return 0;
}

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
	if (fd < 0) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		free(o->tmp);
		free(o->path);
		memset(o, 0, sizeof(*o));
		return -1;
	}
	o->sink = xcalloc(1, sizeof(*o->sink));
	o->sink->fd = fd;
	o->f = fopencookie(o->sink, "w",
			   (cookie_io_functions_t){.write = sink_write, .close = sink_close});
	if (!o->f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		free(o->sink);
		free(o->tmp);
		free(o->path);
		memset(o, 0, sizeof(*o));
		return -1;
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

const char *outfile_size_text(uint64_t bytes, char *buf, size_t size)
{
	if (bytes >= (uint64_t)1 << 30)
		snprintf(buf, size, "%.1f GB", (double)bytes / (double)(1u << 30));
	else if (bytes >= (uint64_t)1 << 20)
		snprintf(buf, size, "%.1f MB", (double)bytes / (double)(1u << 20));
	else if (bytes >= 1024)
		snprintf(buf, size, "%.1f kB", (double)bytes / 1024.0);
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)bytes);
	return buf;
}

/* Why a write failed, with what it needed: for a full disk or quota, the
 * size of the whole output and the room on the destination's filesystem. */
static void write_failed(const struct outfile *o, int error, uint64_t needed, char *err,
			 size_t errlen)
{
	if (error != ENOSPC && error != EDQUOT && error != EFBIG) {
		snprintf(err, errlen, "writing %s failed: %s", o->path, strerror(error));
		return;
	}
	char need[32], room[32];
	char *dir = xstrdup(o->path);
	struct statvfs vfs; /* a file size limit (EFBIG) is not about room */
	bool known = error != EFBIG && statvfs(dirname(dir), &vfs) == 0;
	uint64_t free_bytes = known ? (uint64_t)vfs.f_bavail * vfs.f_frsize : 0;
	snprintf(err, errlen, "cannot write %s: %s: it needs %s%s%s%s", o->path, strerror(error),
		 outfile_size_text(needed, need, sizeof(need)),
		 known ? " and its filesystem has " : "",
		 known ? outfile_size_text(free_bytes, room, sizeof(room)) : "",
		 known ? " free" : "");
	free(dir);
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
		fclose(o->f); /* flushes into the sink, which keeps the first error */
		if (o->sink->error) {
			unlink(o->tmp); /* first: the room it took is free again */
			write_failed(o, o->sink->error, o->sink->offered, err, errlen);
			rc = -1;
		} else if (rename(o->tmp, o->path) < 0) {
			snprintf(err, errlen, "cannot move output into place at %s: %s", o->path,
				 strerror(errno));
			unlink(o->tmp);
			rc = -1;
		}
	}
	free(o->sink);
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
	free(o->sink);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}

int outfile_write_all(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
	struct outfile o;
	if (outfile_open(&o, path, err, errlen))
		return -1;
	fwrite(data, 1, len, o.f);
	return outfile_commit(&o, err, errlen);
}
