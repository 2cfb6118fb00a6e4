/* perfmap — what reading a JIT's perf map costs (src/symbols/perfmap.h).
 *
 * usage: perfmap [LINES] [RUNS]
 * Makes a map of LINES (100000) lines like Node's ("START SIZE
 * JS:*name /app/file.js:L:C"), at random addresses in 64 MiB, some
 * overlapping (code the JIT moved or reused), and measures, best of RUNS (5):
 *   whole:  reading the map at once (a reader that starts over each time)
 *   append: reading one more line into the loaded map (what sonde does
 *           when a JIT has appended a line since its last read)
 *   lookup: naming one address
 * Prints one line: LINES, ranges, the three times, and whole / append. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "perfmap.h"

#define BASE ((uint64_t)0x7f0000000000)
#define APPENDS 2000
#define LOOKUPS 2000000

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	int lines = argc > 1 ? atoi(argv[1]) : 100000, runs = argc > 2 ? atoi(argv[2]) : 5;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	for (int i = 0; i < lines; i++)
		fprintf(f, "%" PRIx64 " %" PRIx64 " JS:*function_%d /app/node_modules/pkg/lib/file%d.js:%d:%d\n",
			BASE + next() % (64 << 20), 0x40 + next() % 0x400, i, i % 50, i % 900, i % 40);
	fclose(f);
	char (*extra)[96] = malloc(APPENDS * sizeof(*extra));
	double whole = 1e9, append = 1e9, lookup = 1e9;
	size_t ranges = 0;
	uint64_t *addrs = malloc(LOOKUPS * sizeof(*addrs));
	for (int i = 0; i < LOOKUPS; i++)
		addrs[i] = BASE + next() % (64 << 20);
	volatile size_t hits = 0;
	for (int r = 0; r < runs; r++) {
		struct perfmap *m = perfmap_new(0);
		double t0 = now();
		perfmap_add_text(m, text, len, false);
		double t1 = now();
		if (t1 - t0 < whole)
			whole = t1 - t0;
		perfmap_syms(m, &ranges);
		int n[APPENDS];
		for (int i = 0; i < APPENDS; i++)
			n[i] = snprintf(extra[i], sizeof(extra[i]), "%" PRIx64 " %x JS:*late_%d /app/late.js:1:1\n",
					BASE + next() % (64 << 20), 0x80, i);
		t0 = now();
		for (int i = 0; i < APPENDS; i++)
			perfmap_add_text(m, extra[i], (size_t)n[i], false);
		t1 = now();
		if ((t1 - t0) / APPENDS < append)
			append = (t1 - t0) / APPENDS;
		t0 = now();
		for (int i = 0; i < LOOKUPS; i++)
			hits += perfmap_find(m, addrs[i]) != NULL;
		t1 = now();
		if ((t1 - t0) / LOOKUPS < lookup)
			lookup = (t1 - t0) / LOOKUPS;
		perfmap_free(m);
	}
	printf("%d lines (%zu KiB), %zu ranges: whole %.1f ms, append %.3f ms, lookup %.0f ns; "
	       "whole / append %.0fx\n",
	       lines, len / 1024, ranges, whole * 1e3, append * 1e3, lookup * 1e9, whole / append);
	free(addrs);
	free(extra);
	free(text);
	return 0;
}
