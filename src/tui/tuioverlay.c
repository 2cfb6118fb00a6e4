/* tuioverlay — the help and long answers over the screen. The contract is
 * in tuioverlay.h. */
#include "tuioverlay.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const help_lines[] = {
	"Call tree (percentages of the shown root: the whole tree, or the zoom)",
	"  Up/Down  j/k        move",
	"  PgUp/PgDn Home/End  a page up/down, first/last row",
	"  Right  +  l         expand; again: go to the first child",
	"  Left  -  h          collapse; again: go to the parent",
	"  Enter  Space        expand / collapse",
	"  e                   expand everything below the selection",
	"  E                   collapse everything",
	"  z                   zoom into the selected function",
	"  Z  Backspace        zoom out: back to the previous zoom",
	"  i                   invert: leaf functions first, their callers below",
	"",
	"Search",
	"  /                   search function names (case-sensitive substring)",
	"  n  N                next / previous match (opens the tree to show it)",
	"  Esc                 clear the search",
	"",
	"Panels",
	"  Tab  Shift-Tab      focus: call tree -> hottest functions -> probes",
	"  Enter (hottest)     find that function in the call tree",
	"  Up/Down (probes)    choose the probe whose histogram and slow calls show",
	"  The bottom line shows the selected function's hottest source line",
	"  (where it ran, or the call it was in) when its binary has line info",
	"",
	"Explorer pane (x on a function of the call tree or the hottest list)",
	"  Up/Down PgUp/PgDn   move over the function's source lines",
	"  l / b               trace the line / its branches (taken, not taken)",
	"  w / W               sample only in calls where the line ran (a branch",
	"                      line: where its jump was taken / not taken)",
	"  c                   :trace LINE ... to complete with variables to read",
	"  u                   untrace the line's probes   a  its instructions",
	"  Enter / p           a function called on the line / the caller",
	"  Backspace           back to the function before   x Esc q  close",
	"  SITES: addresses a line probe uses (! the kernel cannot step one),",
	"  BR: conditional jumps, SELF/TOTAL: samples held (the line ran / ran",
	"  or called; sampled), PROBES: what the probes there counted (exact)",
	"",
	"Display",
	"  p                   pause / resume (data keeps being gathered)",
	"  <  >                refresh twice as often / half as often (0.1s..60s)",
	"  :                   command prompt (Up/Down: history, Ctrl-U: clear)",
	"                      :help lists the commands, :help CMD explains one",
	"  ?                   this help",
	"  q                   quit",
};

void tuioverlay_close(struct tui *t)
{
	for (size_t i = 0; i < t->nolines; i++)
		free(t->olines[i]);
	free(t->olines);
	t->olines = NULL;
	t->nolines = t->otop = 0;
	t->overlay = OVERLAY_NONE;
}

static void overlay_add(struct tui *t, const char *s, size_t n)
{
	t->olines = xrealloc(t->olines, (t->nolines + 1) * sizeof(*t->olines));
	char *line = xmalloc(n * 8 + 1), *o = line;
	for (size_t i = 0; i < n; i++) { /* tabs to spaces: one byte, one column */
		if (s[i] == '\t') {
			do
				*o++ = ' ';
			while ((o - line) % 8);
		} else {
			*o++ = (unsigned char)s[i] < 32 ? '?' : s[i];
		}
	}
	*o = 0;
	t->olines[t->nolines++] = line;
}

void tuioverlay_open_text(struct tui *t, const char *title, const char *text)
{
	tuioverlay_close(t);
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		overlay_add(t, p, n);
		p += n + (e != NULL);
	}
	snprintf(t->otitle, sizeof(t->otitle), "%s", title);
	t->overlay = OVERLAY_TEXT;
}

void tuioverlay_open_help(struct tui *t)
{
	tuioverlay_close(t);
	for (size_t i = 0; i < sizeof(help_lines) / sizeof(help_lines[0]); i++)
		overlay_add(t, help_lines[i], strlen(help_lines[i]));
	snprintf(t->otitle, sizeof(t->otitle), "sonde top: keys");
	t->overlay = OVERLAY_HELP;
}

int tuioverlay_body_height(void)
{
	int h = LINES - 4;
	return h > 1 ? h - 2 : 1;
}
