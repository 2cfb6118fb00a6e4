/* Fuzzes the splitting of a --trace spec into its parts, as
 * attach_probe_spec (session.c) and probes_resolve (probes.c) do it:
 * "[BINARY:]FILE:LINE [VAR...] [if EXPR]" or "[BINARY:]FUNC [VAR...] [if
 * EXPR]". Any bytes must split into a location and a tail that are the
 * spec itself with only blanks between them; the location, split again,
 * must give itself whole (nothing of a capture stays in it, no location
 * is cut twice); a line location's parts must give it back exactly
 * (BINARY:FILE:LINE), with the line its digits; the binary's colon must be
 * a single one (not half of a C++ "::"); and the tail must parse into
 * captures or fail with one line (capexpr.h). abort()s on a violation so
 * the fuzzer reports the input. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capexpr.h"
#include "probes.h"

static void check(int ok, const char *what, const char *spec)
{
	if (!ok) {
		fprintf(stderr, "%s, for spec '%s'\n", what, spec);
		abort();
	}
}

static void check_line_parts(const char *loc)
{
	char *binary, *file;
	unsigned line = 0;
	if (!probes_split_line(loc, &binary, &file, &line))
		return;
	check(file != NULL, "a line spec without its file", loc);
	const char *digits = strrchr(loc, ':') + 1;
	check(line == (unsigned)strtoul(digits, NULL, 10), "the line is not the spec's digits", loc);
	char back[CAPEXPR_MAX_TEXT * 2 + 32];
	snprintf(back, sizeof(back), "%s%s%s:%s", binary ? binary : "", binary ? ":" : "", file,
		 digits);
	check(strcmp(back, loc) == 0, "BINARY:FILE:LINE does not give the spec back", loc);
	free(binary);
	free(file);
}

static void check_binary_colon(const char *loc)
{
	int colon = probes_split(loc);
	size_t len = strlen(loc);
	if (colon < 0)
		return;
	check((size_t)colon > 0 && (size_t)colon < len && loc[colon] == ':',
	      "the binary's colon is not a colon inside the spec", loc);
	check(loc[colon - 1] != ':' && loc[colon + 1] != ':',
	      "the binary's colon is half of a \"::\"", loc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > CAPEXPR_MAX_TEXT)
		return 0;
	char *spec = malloc(size + 1);
	if (!spec)
		return 0;
	memcpy(spec, data, size);
	spec[size] = 0;
	size_t len = strlen(spec); /* a NUL in the bytes ends the spec, as in argv */

	const char *tail;
	size_t n = capexpr_split_spec(spec, &tail);
	check(n <= len && tail >= spec + n && tail <= spec + len, "split outside the spec", spec);
	for (const char *c = spec + n; c < tail; c++)
		check(*c == ' ' || *c == '\t', "something other than blanks between location and tail",
		      spec);
	check(*tail != ' ' && *tail != '\t', "the tail begins with a blank", spec);

	char *loc = strndup(spec, n);
	const char *tail2;
	size_t n2 = capexpr_split_spec(loc, &tail2);
	check(n2 == n && *tail2 == 0, "the location split again is not itself", spec);
	check_line_parts(loc);
	check_binary_colon(loc);

	struct cap_spec cs;
	char err[512] = "";
	if (capexpr_parse(tail, &cs, err, sizeof(err)) == 0) {
		check(cs.ncaptures <= CAPEXPR_MAX_CAPTURES, "too many captures", spec);
		check(!cs.pred || cs.pred_text, "a predicate without its text", spec);
		check(*tail || (cs.ncaptures == 0 && !cs.pred), "captures from an empty tail", spec);
		capexpr_free(&cs);
	} else {
		check(err[0] && !strchr(err, '\n'), "a failure that is not one line", spec);
	}
	free(loc);
	free(spec);
	return 0;
}
