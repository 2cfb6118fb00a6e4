#define _GNU_SOURCE
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "errbuf.h"
#include "util.h"

#define RAW_CHUNK ((size_t)64 << 10)   /* bytes read from the source at a time */
#define OUT_CHUNK ((size_t)256 << 10)  /* room made in buf before each read */

static void init(struct infile *in)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

int infile_open(struct infile *in, const char *path, char *err, size_t errlen)
{
	bool is_stdin = strcmp(path, "-") == 0;
	init(in);
	in->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		errbuf_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
		infile_close(in);
		return -1;
	}
	in->close_fd = !is_stdin;
	struct stat st;
	if (fstat(in->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		errbuf_set(err, errlen, "cannot read %s: it is a directory", path);
		infile_close(in);
		return -1;
	}
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode))
		in->file_size = (uint64_t)st.st_size;
	return 0;
}

void infile_from_memory(struct infile *in, const void *data, size_t len)
{
	init(in);
	static const uint8_t empty[1];
	in->mem = data ? data : empty;
	in->mem_len = data ? len : 0;
}

/* Up to n raw (possibly compressed) bytes from the source: >0, 0 at its
 * end, -1 with err. */
static ssize_t read_source(struct infile *in, uint8_t *to, size_t n, char *err, size_t errlen)
{
	if (in->fd < 0) {
		size_t left = in->mem_len - in->mem_pos;
		if (n > left)
			n = left;
		memcpy(to, in->mem + in->mem_pos, n);
		in->mem_pos += n;
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t got = read(in->fd, to, n);
		if (got >= 0)
			return got;
		if (errno != EINTR) {
			errbuf_set(err, errlen, "read error: %s", strerror(errno));
			return -1;
		}
	}
}

/* Makes room for `more` bytes after the unconsumed ones: exactly that much
 * when `exact` (a file whose size is known), else doubling. */
static void reserve(struct infile *in, size_t more, bool exact)
{
	if (in->start && in->end + more > in->cap) {
		memmove(in->buf, in->buf + in->start, in->end - in->start);
		in->end -= in->start;
		in->start = 0;
	}
	if (in->end + more > in->cap) {
		size_t cap = exact ? in->end + more : in->cap ? in->cap : OUT_CHUNK;
		while (cap < in->end + more)
			cap *= 2;
		in->buf = xrealloc(in->buf, cap + 1); /* + 1: room for a NUL */
		in->cap = cap;
	}
}

/* The first bytes decide gzip or not: 1f 8b. */
static int start(struct infile *in, char *err, size_t errlen)
{
	if (in->started)
		return 0;
	in->started = true;
	in->zin = xmalloc(RAW_CHUNK);
	size_t n = 0;
	while (n < 2) {
		ssize_t got = read_source(in, in->zin + n, RAW_CHUNK - n, err, errlen);
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		n += (size_t)got;
	}
	in->gzip = n >= 2 && in->zin[0] == 0x1f && in->zin[1] == 0x8b;
	if (!in->gzip) {
		if (n) {
			reserve(in, n, false);
			memcpy(in->buf + in->end, in->zin, n);
			in->end += n;
		}
		in->eof = n == 0;
		return 0;
	}
	in->z = xcalloc(1, sizeof(*in->z));
	if (inflateInit2(in->z, 15 + 32) != Z_OK) { /* 32: gzip and zlib headers */
		errbuf_set(err, errlen, "cannot start decompression");
		return -1;
	}
	in->z->next_in = in->zin;
	in->z->avail_in = (uInt)n;
	return 0;
}

/* Adds decompressed bytes to buf: 1 when some came, 0 at the end, -1 with
 * err. */
static int fill(struct infile *in, char *err, size_t errlen)
{
	if (start(in, err, errlen))
		return -1;
	if (in->eof)
		return 0;
	if (in->cap - in->end < 4096)
		reserve(in, OUT_CHUNK, false);
	if (!in->gzip) {
		ssize_t got = read_source(in, in->buf + in->end, in->cap - in->end, err, errlen);
		if (got < 0)
			return -1;
		in->end += (size_t)got;
		in->eof = got == 0;
		return got > 0;
	}
	size_t before = in->end;
	while (in->end == before && !in->eof) {
		if (in->z->avail_in == 0) {
			ssize_t got = read_source(in, in->zin, RAW_CHUNK, err, errlen);
			if (got < 0)
				return -1;
			if (got == 0) {
				errbuf_set(err, errlen, "corrupt or truncated gzip data");
				return -1;
			}
			in->z->next_in = in->zin;
			in->z->avail_in = (uInt)got;
		}
		size_t room = in->cap - in->end;
		in->z->next_out = in->buf + in->end;
		in->z->avail_out = (uInt)(room > UINT32_MAX ? UINT32_MAX : room);
		int r = inflate(in->z, Z_NO_FLUSH);
		in->end = (size_t)(in->z->next_out - in->buf);
		if (r == Z_STREAM_END) {
			in->eof = true; /* what follows the first member is ignored */
		} else if (r != Z_OK && !(r == Z_BUF_ERROR && in->z->avail_in == 0)) {
			errbuf_set(err, errlen, "corrupt or truncated gzip data");
			return -1;
		}
	}
	return in->end > before;
}

int infile_head(struct infile *in, const uint8_t **head, size_t *len, bool *complete, char *err,
		size_t errlen)
{
	while (in->end - in->start < INFILE_HEAD) {
		int r = fill(in, err, errlen);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	size_t n = in->end - in->start;
	*len = n < INFILE_HEAD ? n : INFILE_HEAD;
	*head = in->buf ? in->buf + in->start : (const uint8_t *)"";
	if (complete)
		*complete = in->eof && n <= INFILE_HEAD;
	return 0;
}

int infile_line(struct infile *in, const char **line, size_t *len, char *err, size_t errlen)
{
	size_t scanned = 0; /* bytes after start known to hold no '\n' */
	for (;;) {
		size_t avail = in->end - in->start;
		const uint8_t *from = in->buf ? in->buf + in->start : NULL;
		const uint8_t *nl = avail > scanned ? memchr(from + scanned, '\n', avail - scanned)
						    : NULL;
		size_t n = nl ? (size_t)(nl - from) : avail;
		if (n > INFILE_MAX_LINE) {
			errbuf_set(err, errlen, "line %zu is longer than %zu MiB: no text profile has such "
					        "lines",
				   in->lineno + 1, INFILE_MAX_LINE >> 20);
			return -1;
		}
		if (nl || (in->eof && avail)) {
			in->lineno++;
			*line = (const char *)from;
			*len = n;
			in->start += n + (nl ? 1 : 0);
			return 1;
		}
		if (in->eof && in->started)
			return 0;
		scanned = avail;
		if (fill(in, err, errlen) < 0)
			return -1;
	}
}

static int too_large(struct infile *in, const struct infile_limit *lim, char *err, size_t errlen)
{
	errbuf_set(err, errlen, "larger than %zu MiB%s: sonde reads %s files whole, up to that size",
		   lim->max >> 20, in->gzip ? " once gunzipped" : "", lim->what);
	return -1;
}

/* A whole read of gzip that has grown past BOMB_MIN_BYTES to over
 * BOMB_RATIO times the compressed bytes read is refused there, before the
 * rest is inflated (a 1 MB file of zeros inflates to 1 GB; profiles
 * compress 4-50x). */
#define BOMB_MIN_BYTES ((size_t)64 << 20)
#define BOMB_RATIO 200

static bool inflating_a_bomb(const struct infile *in, size_t out)
{
	if (!in->gzip || !in->z || out < BOMB_MIN_BYTES)
		return false;
	uint64_t compressed = in->z->total_in ? in->z->total_in : 1;
	return out / compressed > BOMB_RATIO;
}

int infile_read_all(struct infile *in, const struct infile_limit *lim, uint8_t **data, size_t *len,
		    char *err, size_t errlen)
{
	size_t max = lim->max;
	*data = NULL;
	*len = 0;
	if (start(in, err, errlen))
		return -1;
	/* A plain regular file says its size: refuse before reading it. */
	if (!in->gzip && in->fd >= 0 && in->file_size) {
		off_t pos = lseek(in->fd, 0, SEEK_CUR);
		uint64_t rest = pos >= 0 && (uint64_t)pos <= in->file_size
					? in->file_size - (uint64_t)pos
					: 0;
		if ((in->end - in->start) + rest > max)
			return too_large(in, lim, err, errlen);
		reserve(in, (size_t)rest + 1, true); /* + 1: room to see the end */
	}
	for (;;) {
		if (in->end - in->start > max)
			return too_large(in, lim, err, errlen);
		if (inflating_a_bomb(in, in->end - in->start)) {
			errbuf_set(err, errlen,
				   "gunzipped, over %d times its compressed size (%zu MiB of %llu KiB so far): "
				   "not a profile but a gzip bomb",
				   BOMB_RATIO, (in->end - in->start) >> 20,
				   (unsigned long long)(in->z->total_in >> 10));
			return -1;
		}
		int r = fill(in, err, errlen);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
	}
	size_t n = in->end - in->start;
	if (in->start)
		memmove(in->buf, in->buf + in->start, n);
	if (!in->buf)
		reserve(in, 1, false);
	in->buf[n] = 0;
	*data = in->buf;
	*len = n;
	in->buf = NULL; /* the caller's now */
	in->start = in->end = in->cap = 0;
	return 0;
}

void infile_close(struct infile *in)
{
	if (in->close_fd && in->fd >= 0)
		close(in->fd);
	if (in->z) {
		inflateEnd(in->z);
		free(in->z);
	}
	free(in->zin);
	free(in->buf);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}
