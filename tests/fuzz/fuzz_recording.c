/* Fuzzes the recording loader: arbitrary bytes as a .sonde file must give a
 * clean error or a profile, never a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[] = "/tmp/sonde-fuzz-rec-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return 0;
	}
	close(fd);
	char err[256];
	struct profile *p = recording_load(path, err, sizeof(err));
	profile_free(p);
	unlink(path);
	return 0;
}
