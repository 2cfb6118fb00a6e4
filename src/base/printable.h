/* printable — text from outside made safe to print on a terminal.
 *
 * Frame names come from profiles and binaries, process names from the
 * kernel (any process can name itself "\e]2;...\a"), file names and probe
 * specs from users and files: printed raw, their control characters would
 * drive the terminal (move the cursor, retitle the window, hide text) or
 * forge lines. Every text output passes such strings through here:
 * control characters (C0, DEL, and C1 as U+0080..U+009F or as lone bytes)
 * and bytes that are not UTF-8 become visible escapes: \n \r \t \e for the
 * usual ones, \xNN (one per byte) for the others. Everything else, UTF-8
 * included, passes unchanged. */
#ifndef SONDE_PRINTABLE_H
#define SONDE_PRINTABLE_H

#include <stdbool.h>
#include <stddef.h>

/* Keeps the escaped copies made for one output until printable_free, so
 * that several may be used in one printf. A zeroed struct is empty. */
struct printable {
	char **copies;
	size_t n, cap;
};

/* s as it may be printed: s itself when nothing in it needs escaping (no
 * copy), else an escaped copy kept by `keep`. NULL stays NULL. */
const char *printable(struct printable *keep, const char *s);

/* The same for multi-line text (answers, messages): '\n' and '\t' pass. */
const char *printable_text(struct printable *keep, const char *s);

void printable_free(struct printable *keep);

/* Escapes s into buf (always NUL-terminated, cut at a whole escape when
 * too small) and returns buf: for fixed-size labels. */
char *printable_copy(char *buf, size_t size, const char *s);

#endif
