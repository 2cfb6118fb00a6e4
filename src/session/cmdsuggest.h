/* cmdsuggest — "did you mean ...?": the name among names[0..count) that a
 * mistyped word most likely meant: the nearest by edit distance (a swap of
 * neighbours counts 1, case aside; at most 1 for names of 3 bytes or less, 2
 * for longer), else the shortest name the word begins. NULL when none is
 * near, or the word is empty or longer than any name's typo could be. */
#ifndef SONDE_CMDSUGGEST_H
#define SONDE_CMDSUGGEST_H

#include <stddef.h>

const char *suggest_name(const char *word, const char *const *names, size_t count);

#endif
