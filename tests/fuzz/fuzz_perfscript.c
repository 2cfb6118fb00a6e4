/* Fuzzes the perf script reader: the collapse in every mode (written to
 * /dev/null), the profile reader and the detector, on arbitrary bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfscript.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		return 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	char err[256];
	/* The first byte picks the options, so every mode gets its share. */
	unsigned m = size ? data[0] : 0;
	struct collapse_options o = {
		.pid = m & 1, .tid = m & 2, .kernel = m & 4, .jit = m & 8, .addrs = m & 16,
		.event = (m & 32) ? "cycles" : NULL,
	};
	perfscript_collapse(text, size, &o, devnull, err, sizeof(err));
	perfscript_detect(text, size);
	profile_free(perfscript_read(text, size, err, sizeof(err)));
	free(text);
	return 0;
}
