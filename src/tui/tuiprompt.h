/* tuiprompt — the two prompts of the message line: `/` (a search,
 * highlighted as it is typed; Enter jumps to the first match, Esc puts the
 * previous search back) and `:` (a command line with a history of the last
 * HISTORY_MAX lines, Up/Down; Enter runs it through the exec callback and
 * shows its answer: the first line as the message, a longer one in an
 * overlay; q, quit and exit quit). Both edit one line (struct lineedit):
 * Left/Right/Home/End (Ctrl-A/E), Backspace, Delete (Ctrl-D), Ctrl-U/K/W;
 * Backspace on an empty line leaves the prompt. Drawn by tuidraw. */
#ifndef SONDE_TUIPROMPT_H
#define SONDE_TUIPROMPT_H

#include "tuistate.h"

/* Opens a prompt with an empty line. */
void tuiprompt_open(struct tui *t, enum prompt p);

/* Opens a prompt with `text` typed in (the cursor after it). */
void tuiprompt_open_with(struct tui *t, enum prompt p, const char *text);

/* Runs a command line through the session as the `:` prompt does: its
 * answer's first line on the message line, a longer one in an overlay.
 * Returns 1 when it asked to quit, else 0. */
int tuiprompt_run(struct tui *t, const char *line);

/* One key while a prompt is open; returns 1 when the command asked to
 * quit, else 0. */
int tuiprompt_key(struct tui *t, int ch);

#endif
