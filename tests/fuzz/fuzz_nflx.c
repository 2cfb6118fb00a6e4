/* Fuzzes the nflxprofile reader and detector. Whatever the reader accepts
 * must write back and read again (the writer never makes a file its own
 * reader refuses). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nflx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	nflx_detect(data, size);
	struct profile *p = nflx_read(data, size, err, sizeof(err));
	if (!p)
		return 0;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f || nflx_write(f, p) != 0)
		abort();
	fclose(f);
	if (!nflx_detect((const uint8_t *)buf, len))
		abort();
	struct profile *q = nflx_read((const uint8_t *)buf, len, err, sizeof(err));
	if (!q || q->nsamples != p->nsamples) {
		fprintf(stderr, "re-reading a written profile failed: %s\n", q ? "count" : err);
		abort();
	}
	profile_free(q);
	profile_free(p);
	free(buf);
	return 0;
}
