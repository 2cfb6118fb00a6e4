#include "filebuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util.h"

static int gunzip(const uint8_t *in, size_t len, struct filebuf *out, char *err, size_t errlen)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 32) != Z_OK) { /* 32: accept gzip and zlib headers */
		snprintf(err, errlen, "cannot start decompression");
		return -1;
	}
	size_t cap = len * 4 + 4096, n = 0;
	uint8_t *buf = xmalloc(cap + 1);
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	int r;
	do {
		if (n == cap) {
			if (cap >= FILEBUF_MAX) {
				snprintf(err, errlen, "decompressed data larger than %zu bytes",
					 FILEBUF_MAX);
				inflateEnd(&z);
				free(buf);
				return -1;
			}
			cap = cap * 2 > FILEBUF_MAX ? FILEBUF_MAX : cap * 2;
			buf = xrealloc(buf, cap + 1);
		}
		z.next_out = buf + n;
		z.avail_out = (uInt)((cap - n) > UINT32_MAX ? UINT32_MAX : (cap - n));
		r = inflate(&z, Z_NO_FLUSH);
		n = cap - z.avail_out;
		if (r == Z_BUF_ERROR && z.avail_in == 0)
			break; /* input ended before the stream did */
	} while (r == Z_OK || (r == Z_BUF_ERROR && n == cap));
	inflateEnd(&z);
	if (r != Z_STREAM_END) {
		snprintf(err, errlen, "corrupt or truncated gzip data");
		free(buf);
		return -1;
	}
	buf[n] = 0;
	out->data = buf;
	out->len = n;
	out->was_gzip = true;
	return 0;
}

int filebuf_from_memory(const void *data, size_t len, struct filebuf *out, char *err,
			size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const uint8_t *d = data;
	if (len >= 2 && d[0] == 0x1f && d[1] == 0x8b)
		return gunzip(d, len, out, err, errlen);
	out->data = xmalloc(len + 1);
	memcpy(out->data, d, len);
	out->data[len] = 0;
	out->len = len;
	return 0;
}

int filebuf_read(const char *path, struct filebuf *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = xmalloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			if (cap >= FILEBUF_MAX) {
				snprintf(err, errlen, "%s is larger than %zu bytes", path, FILEBUF_MAX);
				free(buf);
				if (f != stdin)
					fclose(f);
				return -1;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
	}
	int bad = ferror(f);
	if (f != stdin)
		fclose(f);
	if (bad) {
		snprintf(err, errlen, "error reading %s", path);
		free(buf);
		return -1;
	}
	char inner[256];
	int rc = filebuf_from_memory(buf, n, out, inner, sizeof(inner));
	free(buf);
	if (rc)
		snprintf(err, errlen, "%s: %s", path, inner);
	return rc;
}

void filebuf_free(struct filebuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
