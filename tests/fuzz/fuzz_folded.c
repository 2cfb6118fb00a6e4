/* Fuzzes the folded-stacks reader and detector. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	char err[256];
	folded_detect(text, size);
	profile_free(folded_read(text, size, err, sizeof(err)));
	free(text);
	return 0;
}
