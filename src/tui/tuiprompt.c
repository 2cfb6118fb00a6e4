/* tuiprompt — the search and command prompts and their line editor. The
 * contract is in tuiprompt.h. */
#define _GNU_SOURCE
#include "tuiprompt.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printable.h"
#include "tuioverlay.h"
#include "util.h"

void tuiprompt_open(struct tui *t, enum prompt p)
{
	t->prompt = p;
	t->edit.len = t->edit.cur = 0;
	t->edit.buf[0] = 0;
	t->hist_pos = t->nhistory;
	if (p == PROMPT_SEARCH) {
		free(t->search_saved);
		t->search_saved = t->search ? xstrdup(t->search) : NULL;
		t->search_saved_exact = t->search_exact;
	}
}

static void edit_set(struct lineedit *e, const char *s)
{
	snprintf(e->buf, sizeof(e->buf), "%s", s);
	e->len = e->cur = strlen(e->buf);
}

void tuiprompt_open_with(struct tui *t, enum prompt p, const char *text)
{
	tuiprompt_open(t, p);
	edit_set(&t->edit, text);
}

static void edit_insert(struct lineedit *e, char c)
{
	if (e->len + 1 >= sizeof(e->buf))
		return;
	memmove(e->buf + e->cur + 1, e->buf + e->cur, e->len - e->cur + 1);
	e->buf[e->cur++] = c;
	e->len++;
}

static void edit_delete(struct lineedit *e, size_t from, size_t to)
{
	memmove(e->buf + from, e->buf + to, e->len - to + 1);
	e->len -= to - from;
	e->cur = from;
}

/* Line editing keys common to both prompts; false when not one of them. */
static bool edit_key(struct lineedit *e, int ch)
{
	switch (ch) {
	case KEY_BACKSPACE: case 127: case 8:
		if (e->cur)
			edit_delete(e, e->cur - 1, e->cur);
		return true;
	case KEY_DC: case KEY_CTRL('d'):
		if (e->cur < e->len)
			edit_delete(e, e->cur, e->cur + 1);
		return true;
	case KEY_CTRL('u'): edit_delete(e, 0, e->cur); return true;
	case KEY_CTRL('k'): e->buf[e->cur] = 0, e->len = e->cur; return true;
	case KEY_CTRL('w'): {
		size_t p = e->cur;
		while (p && e->buf[p - 1] == ' ')
			p--;
		while (p && e->buf[p - 1] != ' ')
			p--;
		edit_delete(e, p, e->cur);
		return true;
	}
	case KEY_LEFT: if (e->cur) e->cur--; return true;
	case KEY_RIGHT: if (e->cur < e->len) e->cur++; return true;
	case KEY_HOME: case KEY_CTRL('a'): e->cur = 0; return true;
	case KEY_END: case KEY_CTRL('e'): e->cur = e->len; return true;
	}
	if ((ch >= 32 && ch < 127) || (ch >= 128 && ch < 256)) {
		edit_insert(e, (char)ch);
		return true;
	}
	return false;
}

static void history_add(struct tui *t, const char *line)
{
	if (t->nhistory && !strcmp(t->history[t->nhistory - 1], line))
		return;
	if (t->nhistory == HISTORY_MAX) {
		free(t->history[0]);
		memmove(t->history, t->history + 1, (HISTORY_MAX - 1) * sizeof(*t->history));
		t->nhistory--;
	}
	t->history[t->nhistory++] = xstrdup(line);
}

static void history_move(struct tui *t, int dir)
{
	if (dir < 0 && t->hist_pos == 0)
		return;
	if (dir > 0 && t->hist_pos >= t->nhistory)
		return;
	if (t->hist_pos == t->nhistory)
		snprintf(t->hist_stash, sizeof(t->hist_stash), "%s", t->edit.buf);
	t->hist_pos += dir;
	edit_set(&t->edit, t->hist_pos == t->nhistory ? t->hist_stash : t->history[t->hist_pos]);
}

/* Runs a command line through the session and shows its answer: the first
 * line on the message line, a longer answer in an overlay. */
int tuiprompt_run(struct tui *t, const char *line)
{
	const char *p = line + strspn(line, " \t");
	if (!strcmp(p, "q") || !strcmp(p, "quit") || !strcmp(p, "exit"))
		return 1;
	if (!t->exec) {
		tuistate_set_msg(t, MSG_ERROR, "commands are not available here");
		return 0;
	}
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	if (!f) {
		tuistate_set_msg(t, MSG_ERROR, "cannot run '%s': out of memory", line);
		return 0;
	}
	int rc = t->exec(t->exec_arg, line, f);
	fclose(f);
	while (len && (out[len - 1] == '\n' || out[len - 1] == '\r'))
		out[--len] = 0;
	char *nl = strchr(out, '\n');
	char raw[MSG_MAX], first[MSG_MAX];
	snprintf(raw, sizeof(raw), "%.*s", nl ? (int)(nl - out) : (int)len, out);
	printable_copy(first, sizeof(first), raw);
	if (rc < 0)
		tuistate_set_msg(t, MSG_ERROR, "%s", first[0] ? first : "command failed");
	else
		tuistate_set_msg(t, MSG_INFO, "%s", first[0] ? first : "ok");
	if (nl && rc >= 0) {
		char title[96];
		snprintf(title, sizeof(title), ":%.80s", p);
		tuioverlay_open_text(t, title, out);
	}
	free(out);
	t->refresh_wanted = true;
	return 0;
}

static int prompt_accept(struct tui *t)
{
	enum prompt p = t->prompt;
	t->prompt = PROMPT_NONE;
	if (p == PROMPT_SEARCH) {
		free(t->search_saved);
		t->search_saved = NULL;
		tuistate_search_set(t, t->edit.buf, false);
		if (t->search) {
			t->focus = FOCUS_FLAME;
			tuistate_search_jump(t, 0);
		}
		return 0;
	}
	if (!t->edit.buf[strspn(t->edit.buf, " \t")])
		return 0;
	history_add(t, t->edit.buf);
	return tuiprompt_run(t, t->edit.buf);
}

static void prompt_cancel(struct tui *t)
{
	if (t->prompt == PROMPT_SEARCH) {
		tuistate_search_set(t, t->search_saved, t->search_saved_exact);
		free(t->search_saved);
		t->search_saved = NULL;
	}
	t->prompt = PROMPT_NONE;
}

int tuiprompt_key(struct tui *t, int ch)
{
	switch (ch) {
	case '\n': case '\r': case KEY_ENTER: return prompt_accept(t);
	case KEY_ESC: prompt_cancel(t); return 0;
	case KEY_UP: case KEY_DOWN:
		if (t->prompt == PROMPT_COMMAND)
			history_move(t, ch == KEY_UP ? -1 : 1);
		return 0;
	case KEY_BACKSPACE: case 127: case 8:
		if (!t->edit.len) { /* backspace on an empty line leaves, as in vim */
			prompt_cancel(t);
			return 0;
		}
		break;
	}
	edit_key(&t->edit, ch);
	if (t->prompt == PROMPT_SEARCH) /* highlight as the user types */
		tuistate_search_apply(t, t->edit.buf, false);
	return 0;
}
