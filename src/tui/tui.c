/* tui — the ncurses interface of `sonde top`; see tui.h.
 *
 * This file opens and closes the terminal, takes new views and keys, and
 * puts the UI on a live run. The rest of the tui layer: the screen's state
 * (tuistate), where the panels go (tuilayout), drawing it (tuidraw), keys
 * (tuikeys), the prompts (tuiprompt), the overlay (tuioverlay); the call
 * tree's navigation state (expansion, selection, zoom, search, all kept by
 * path) is tuitree's. */
#define _GNU_SOURCE
#include "tui.h"

#include <curses.h>
#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include "errbuf.h"
#include "liverun.h"
#include "tuidraw.h"
#include "tuiexplore.h"
#include "tuikeys.h"
#include "tuioverlay.h"
#include "tuistate.h"
#include "util.h"

/* ---- public ------------------------------------------------------------------ */

struct tui *tui_open(const struct tui_options *o, char *err, size_t errlen)
{
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		errbuf_set(err, errlen,
			   "top needs a terminal on stdin and stdout; use top -b for text output");
		return NULL;
	}
	setlocale(LC_CTYPE, ""); /* ncursesw draws UTF-8 names only with a locale */
	SCREEN *s = newterm(NULL, stdout, stdin);
	if (!s) {
		const char *term = getenv("TERM");
		errbuf_set(err, errlen,
			   "cannot use the terminal type '%s': set TERM (e.g. xterm-256color) or use top -b",
			   term ? term : "");
		return NULL;
	}
	set_term(s);
	struct tui *t = xcalloc(1, sizeof(*t));
	t->screen = s;
	t->exec = o->exec;
	t->exec_arg = o->exec_arg;
	t->refresh_s = o->refresh_s > 0 ? o->refresh_s : 1.0;
	t->source_dir = o->source_dir;
	t->refresh_s = t->refresh_s < REFRESH_MIN_S ? REFRESH_MIN_S
		      : t->refresh_s > REFRESH_MAX_S ? REFRESH_MAX_S : t->refresh_s;
	t->tree[0] = tuitree_new();
	t->tree[1] = tuitree_new();
	cbreak(); /* not raw(): Ctrl-C stays a signal for top */
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	tuidraw_init_colors(t);
	return t;
}

void tui_close(struct tui *t)
{
	if (!t)
		return;
	live_view_free(t->owned);
	endwin();
	delscreen(t->screen);
	tuitree_free(t->tree[0]);
	tuitree_free(t->tree[1]);
	flame_free(t->inv);
	tuioverlay_close(t);
	tuiexplore_close(t);
	for (size_t i = 0; i < t->nhistory; i++)
		free(t->history[i]);
	free(t->search);
	free(t->search_saved);
	free(t);
}

void tui_draw(struct tui *t, const struct live_view *v)
{
	t->view = v;
	tuistate_sync_trees(t);
	tuistate_cursors_follow(t);
	tuistate_cursors_commit(t);
	tuiexplore_refresh(t);
	tuidraw_redraw(t);
}

int tui_handle_input(struct tui *t)
{
	int ch, quit = 0;
	bool any = false;
	while (!quit && (ch = getch()) != ERR) {
		any = true;
		quit = tuikeys_handle(t, ch);
	}
	if (any && !quit)
		tuidraw_redraw(t);
	return quit;
}

/* ---- on a live run ------------------------------------------------------------- */

static int run_exec(void *arg, const char *line, FILE *out)
{
	return liverun_exec(arg, line, out);
}

/* Every wake: the keys waiting (a resize arrives as one, also when no key
 * made stdin readable). */
static void on_wake(void *arg)
{
	struct tui *t = arg;
	if (tui_handle_input(t))
		liverun_stop(t->run);
	else if (tui_refresh_wanted(t))
		liverun_refresh_now(t->run);
}

static void show(void *arg, struct live_view *v)
{
	struct tui *t = arg;
	tui_draw(t, v);
	live_view_free(t->owned);
	t->owned = v;
}

static bool paused(void *arg)
{
	return tui_paused(arg);
}

static double interval(void *arg)
{
	return tui_refresh_interval(arg);
}

int tui_attach(struct tui *t, struct liverun *r, char *err, size_t errlen)
{
	if (loop_add_fd(liverun_loop(r), STDIN_FILENO, NULL, NULL, err, errlen))
		return -1;
	t->run = r;
	t->exec = run_exec;
	t->exec_arg = r;
	loop_on_wake(liverun_loop(r), on_wake, t);
	/* The rows a tall terminal can show of a list. */
	liverun_set_display(r, &(struct liverun_display){show, interval, paused, 200, t});
	liverun_refresh_now(r); /* something on the screen at once */
	return 0;
}

double tui_refresh_interval(const struct tui *t)
{
	return t->refresh_s;
}

bool tui_paused(const struct tui *t)
{
	return t->paused;
}

bool tui_refresh_wanted(struct tui *t)
{
	bool w = t->refresh_wanted;
	t->refresh_wanted = false;
	return w;
}
