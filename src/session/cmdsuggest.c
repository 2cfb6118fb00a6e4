/* cmdsuggest — the name a mistyped word most likely meant. */
#include "cmdsuggest.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SUGGEST_LEN_MAX 32 /* longer words are not typos of a name */

/* Optimal string alignment distance (a swap of neighbours counts 1),
 * ASCII case-insensitive. Both strings at most SUGGEST_LEN_MAX bytes. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	size_t d[SUGGEST_LEN_MAX + 1][SUGGEST_LEN_MAX + 1];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	}
	return d[n][m];
}

static bool has_prefix_nocase(const char *name, const char *prefix)
{
	for (; *prefix; prefix++, name++)
		if (tolower((unsigned char)*prefix) != tolower((unsigned char)*name))
			return false;
	return true;
}

/* The candidate nearest to word: the smallest edit distance when it is at
 * most 1 (names of up to 3 letters) or 2; else the shortest name the word
 * (2 letters or more) begins; else NULL. */
const char *suggest_name(const char *word, const char *const *names, size_t count)
{
	size_t len = strlen(word);
	if (len == 0 || len > SUGGEST_LEN_MAX)
		return NULL;
	const char *best = NULL;
	size_t best_d = SIZE_MAX;
	for (size_t i = 0; i < count; i++) {
		size_t d = edit_distance(word, names[i]);
		size_t limit = strlen(names[i]) <= 3 ? 1 : 2;
		if (d <= limit && d < best_d) {
			best = names[i];
			best_d = d;
		}
	}
	if (best)
		return best;
	if (len < 2)
		return NULL;
	for (size_t i = 0; i < count; i++)
		if (strlen(names[i]) > len && has_prefix_nocase(names[i], word) &&
		    (!best || strlen(names[i]) < strlen(best)))
			best = names[i];
	return best;
}
