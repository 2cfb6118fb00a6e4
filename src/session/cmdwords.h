/* cmdwords — the words of one command line, as command.h's syntax has
 * them: blanks separate, "..." quotes (with \" and \\), '#' at the start of
 * a word ends the line. Also how a word is shown inside an error (cut to
 * SHOW_MAX bytes at a character boundary). Internal to the command rooms. */
#ifndef SONDE_CMDWORDS_H
#define SONDE_CMDWORDS_H

#include <stdbool.h>
#include <stddef.h>

#include "command.h"

#define MAX_WORDS 32 /* stored: trace takes a spec of many words, the others at most 4 */
#define SHOW_MAX 40  /* bytes of a word quoted in an error */

struct words {
	size_t n;                /* words on the line, stored or not */
	char *w[MAX_WORDS];      /* the first MAX_WORDS */
	bool quoted[MAX_WORDS];  /* some part of the word was in quotes */
	char buf[COMMAND_LINE_MAX + MAX_WORDS + 1];
};

/* A word as shown inside an error: at most SHOW_MAX bytes (cut at a UTF-8
 * character boundary), then "...". Returns word itself or buf. */
const char *word_show(const char *word, char buf[SHOW_MAX + 4]);

/* Control characters other than tab (line breaks are checked before). */
bool char_is_control(unsigned char c);

/* Splits line[0..len) into words: 0, or -1 with one line in err (an
 * unfinished quote, an unknown escape). */
int words_split(const char *line, size_t len, struct words *w, char *err, size_t errlen);

#endif
