/* Fuzzes the USDT readers (usdt.h): the input is read as a file's
 * .note.stapsdt notes (through libelf, from a memfd), and each of its
 * lines as an operand spec. A file gives probes or fails with one line; a
 * probe has its provider, name and argument text, at most USDT_MAX_ARGS
 * operands of 1, 2, 4 or 8 bytes; a spec parses to the same or fails.
 * abort()s on a violation so the fuzzer reports the input. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "usdt.h"

static void check_arg(const struct usdt_arg *a)
{
	if (a->size != 1 && a->size != 2 && a->size != 4 && a->size != 8) {
		fprintf(stderr, "an operand of %u bytes\n", a->size);
		abort();
	}
	if ((a->kind == USDT_ARG_REG || a->kind == USDT_ARG_MEM) && (a->reg < 0 || a->reg > 16)) {
		fprintf(stderr, "register %d\n", a->reg);
		abort();
	}
}

static void read_as_file(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-usdt", MFD_CLOEXEC);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	char path[64], err[512] = "";
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	struct usdt_probe *p = NULL;
	int n = usdt_read(path, &p, err, sizeof(err));
	if (n < 0 && (!err[0] || strchr(err, '\n'))) {
		fprintf(stderr, "a failure without one line of error\n");
		abort();
	}
	for (int i = 0; i < n; i++) {
		if (!p[i].provider || !p[i].name || !p[i].args_text || p[i].nargs > USDT_MAX_ARGS) {
			fprintf(stderr, "probe %d is incomplete\n", i);
			abort();
		}
		for (int k = 0; k < p[i].nargs; k++)
			check_arg(&p[i].args[k]);
	}
	if (n > 0)
		usdt_free(p, n);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_as_file(data, size);
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct usdt_arg a;
		if (usdt_parse_arg(line, &a) == 0)
			check_arg(&a);
	}
	free(text);
	return 0;
}
