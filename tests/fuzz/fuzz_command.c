/* Fuzzes the command language: any bytes must parse or fail with one line,
 * and every command that parses must print (command_format) as one line that
 * parses back to the same command, and print the same again. abort()s on a
 * mismatch so the fuzzer reports the input.
 *
 * Each input is tried twice: as a whole line, and as the arguments of a
 * command named by its first byte, so the fuzzer reaches every command's
 * argument parsing without first having to discover the names. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"

static const char *const NAMES[] = {"trace", "untrace", "sample", "sample-in", "sample-slow",
				    "in", "slow", "fast", "all", "window", "ewma", "filter",
				    "reset", "save", "status", "help", "sample event",
				    "filter tid", "filter comm", "slow f", "sample-slow f", "by"};
#define NNAMES (sizeof(NAMES) / sizeof(NAMES[0]))

static void check_line(const char *line)
{
	struct command c, back;
	char err[512], text[COMMAND_FORMAT_MAX], text2[COMMAND_FORMAT_MAX], err2[512];
	if (command_parse(line, &c, err, sizeof(err)) != 0) {
		if (!err[0] || strchr(err, '\n') || strchr(err, '\r') || c.kind != CMD_NONE) {
			fprintf(stderr, "bad error for '%s': '%s'\n", line, err);
			abort();
		}
		return;
	}
	if (err[0]) {
		fprintf(stderr, "success with an error: '%s'\n", err);
		abort();
	}
	command_format(&c, text, sizeof(text));
	if (strlen(text) >= sizeof(text) - 1 || strchr(text, '\n') || strchr(text, '\r')) {
		fprintf(stderr, "bad format of '%s': '%s'\n", line, text);
		abort();
	}
	if (command_parse(text, &back, err2, sizeof(err2)) != 0) {
		fprintf(stderr, "'%s' formats as '%s', which does not parse: %s\n", line, text, err2);
		abort();
	}
	if (!command_equal(&c, &back)) {
		fprintf(stderr, "'%s' formats as '%s', which parses to another command\n", line, text);
		abort();
	}
	command_format(&back, text2, sizeof(text2));
	if (strcmp(text, text2) != 0) {
		fprintf(stderr, "'%s' formats as '%s', then as '%s'\n", line, text, text2);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	if (!line)
		return 0;
	memcpy(line, data, size);
	line[size] = 0;
	check_line(line);

	if (size > 0) {
		const char *name = NAMES[data[0] % NNAMES];
		size_t n = strlen(name);
		char *with_name = malloc(n + 1 + size);
		if (with_name) {
			memcpy(with_name, name, n);
			with_name[n] = ' ';
			memcpy(with_name + n + 1, data + 1, size - 1);
			with_name[n + size] = 0;
			check_line(with_name);
			free(with_name);
		}
	}
	free(line);
	return 0;
}
