#include "filebuf.h"

#include "errbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int filebuf_from_infile(struct infile *in, const char *what, struct filebuf *out, char *err,
			size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct infile_limit lim = {.max = FILEBUF_MAX, .what = what};
	int rc = infile_read_all(in, &lim, &out->data, &out->len, err, errlen);
	out->was_gzip = in->gzip;
	return rc;
}

int filebuf_read(const char *path, struct filebuf *out, char *err, size_t errlen)
{
	struct infile in;
	memset(out, 0, sizeof(*out));
	if (infile_open(&in, path, err, errlen))
		return -1;
	char inner[256];
	int rc = filebuf_from_infile(&in, "profile", out, inner, sizeof(inner));
	infile_close(&in);
	if (rc)
		errbuf_set(err, errlen, "%s: %s", path, inner);
	return rc;
}

int filebuf_from_memory(const void *data, size_t len, struct filebuf *out, char *err,
			size_t errlen)
{
	struct infile in;
	infile_from_memory(&in, data, len);
	int rc = filebuf_from_infile(&in, "profile", out, err, errlen);
	infile_close(&in);
	return rc;
}

void filebuf_free(struct filebuf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}
