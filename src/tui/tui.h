/* tui — the ncurses interface of `sonde top`.
 *
 * The TUI only displays and reads keys; the live run's event loop
 * (liverun.h) drives it. tui_attach registers it there: each refresh the
 * TUI builds a struct live_view and draws it (tui_draw), after every wake it
 * reads the keys waiting (tui_handle_input), and `q` stops the run. Commands
 * typed at the `:` prompt go to the exec callback (the live run), whose
 * one-line answer (or first line of it) is shown on the message line.
 *
 * Screen (top to bottom): two status lines (the first starts with
 * "sonde top"); the call tree (the largest panel: the left 60% from 140
 * columns on, else the upper part); the hottest functions and the probe
 * latency panels (right column when wide; below the tree otherwise, side by
 * side from 100 columns); the message / prompt line (the bottom row).
 * Keys (? shows them):
 *   up/down/PgUp/PgDn/Home/End (j/k/g/G)  move
 *   right/+/l  expand (again: first child)  left/-/h  collapse (again: parent)
 *   Enter/Space  expand or collapse      e/E  expand all below / collapse all
 *   /  search (case-sensitive substring of the function label)
 *   n/N  next/previous match             Esc  clear the search
 *   z  zoom into the selected subtree    Z/Backspace  back to the previous zoom
 *   i  invert (leaf functions first, callers below)
 *   Tab/Shift-Tab  focus: tree / hottest functions / probes
 *   Enter on a hottest function: find it in the tree (exact label match)
 *   x  the explorer pane on the selected function (tuiexplore.h)
 *   p  pause display                     < >  refresh interval /2 x2 (0.1..60 s)
 *   :  command prompt (history, :q quits) ?  help      q  quit
 * Expansion, selection, zoom and search are kept across refreshes by path
 * (the frame ids from the root), so a live tree does not jump about (see
 * tuitree.h). */
#ifndef SONDE_TUI_H
#define SONDE_TUI_H

#include <stdbool.h>
#include <stdio.h>

#include "liverun.h"
#include "liveview.h"

/* Runs one command line; writes its answer to out. Returns 0, or -1 when the
 * command failed (the answer then is its one-line error). */
typedef int (*tui_exec_fn)(void *arg, const char *line, FILE *out);

struct tui_options {
	double refresh_s; /* initial refresh interval (seconds, > 0) */
	tui_exec_fn exec;
	void *exec_arg;
	const char *source_dir; /* the explorer pane's --source-dir, or NULL (kept) */
};

struct tui;

/* Takes over the terminal (initscr, cbreak, noecho, keypad, non-blocking
 * input). Returns NULL with one line in err when stdin/stdout is not a
 * terminal or the terminal cannot be set up. */
struct tui *tui_open(const struct tui_options *o, char *err, size_t errlen);

/* Puts the UI on a live run (for the whole run; close it only after
 * liverun_run returned): stdin is watched on the run's loop, keys are read
 * after every wake (a terminal resize arrives as a key), the view is drawn
 * at once and then every refresh interval (not while paused), commands at
 * the prompt run through liverun_exec (replacing o->exec), and quitting
 * stops the run. Returns 0, or -1 with err. */
int tui_attach(struct tui *t, struct liverun *r, char *err, size_t errlen);

/* Gives the terminal back (and frees the last view tui_attach built). */
void tui_close(struct tui *t);

/* Draws a view. The TUI keeps the pointer to redraw after keys until the
 * next tui_draw(); the caller frees a view only after replacing it. */
void tui_draw(struct tui *t, const struct live_view *v);

/* Reads and handles every key waiting (never blocks), then redraws. Returns
 * 1 when the user asked to quit, else 0. Call it when stdin is readable, and
 * also when the wait was interrupted (EINTR): a terminal resize (SIGWINCH)
 * arrives as a key. (tui_draw also follows the terminal's size.) */
int tui_handle_input(struct tui *t);

/* The refresh interval now (the user may change it with < and >). */
double tui_refresh_interval(const struct tui *t);

/* True while the user paused refreshing (p): top keeps gathering but does
 * not call tui_draw with new views. */
bool tui_paused(const struct tui *t);

/* True once after the user did something whose effect top should show now
 * rather than at the next refresh: a command ran, the refresh interval
 * changed, or the display was resumed. Reading it clears it. */
bool tui_refresh_wanted(struct tui *t);

#endif
