/* tuiexplore — the explorer pane of `sonde top`. The contract is in
 * tuiexplore.h. */
#define _GNU_SOURCE
#include "tuiexplore.h"

#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explorer.h"
#include "frames.h"
#include "liverun.h"
#include "printable.h"
#include "probes.h"
#include "tuiprompt.h"
#include "util.h"

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;
	return s ? s + 1 : p ? p : "";
}

static void fn_free(struct tuiexplore_fn *f)
{
	free(f->func);
	free(f->module);
	f->func = f->module = NULL;
}

static struct tuiexplore_fn fn_copy(const char *func, const char *module)
{
	return (struct tuiexplore_fn){xstrdup(func), xstrdup(module ? module : "")};
}

/* Builds the pane's structure for e->at (an error kept when it fails),
 * its source looked for under source_dir first. */
static void build(struct tuiexplore *e, const char *source_dir)
{
	if (e->built)
		structure_free(&e->s);
	free(e->counts);
	e->counts = NULL;
	e->built = false;
	e->err[0] = 0;
	e->cursor = e->top = 0;
	if (!e->at.module[0]) {
		snprintf(e->err, sizeof(e->err), "%s: its binary is not known (a kernel or JIT frame?)",
			 e->at.func);
		return;
	}
	struct structure_query q = {.binary = e->at.module, .func = e->at.func, .source_dir = source_dir};
	if (structure_build(&q, &e->s, e->err, sizeof(e->err)) == 0) {
		e->built = true;
		/* the cursor on the function's first line with code */
		for (int k = 0; k < e->s.nlines; k++)
			if (e->s.lines[k].sites) {
				e->cursor = k;
				break;
			}
	}
}

/* A frame's function: a non-inlined frame at or above the node. */
static const struct frame *function_frame(const struct live_view *v, const struct flame_node *n,
					  const struct flame_node **at)
{
	for (; n && n->frame; n = n->parent) {
		const struct frame *f = frames_get(v->flame->frames, n->frame);
		if (f && f->kind != FRAME_INLINED) {
			if (at)
				*at = n;
			return f;
		}
	}
	return NULL;
}

/* The binary of a function known by name only (the live view's frames are
 * functions, name and kind): the module of a frame of that name among the
 * session's raw frames. */
static const char *module_of(const struct tui *t, const char *name)
{
	const struct profile *p = t->run ? liverun_profile(t->run) : NULL;
	size_t n = p ? frames_count(p->frames) : 0;
	for (uint32_t id = 1; id <= n; id++) {
		const struct frame *f = frames_get(p->frames, id);
		if (f && f->module[0] && f->module[0] != '[' && strcmp(f->name, name) == 0)
			return f->module;
	}
	return NULL;
}

/* Shows func of module (e->at taken over), says so (with hint) or why not. */
static void explore_at(struct tui *t, const char *func, const char *module, const char *hint)
{
	struct tuiexplore *e = t->explore;
	e->at = fn_copy(func, module);
	build(e, t->source_dir);
	tuiexplore_refresh(t);
	if (!e->built)
		tuistate_set_msg(t, MSG_ERROR, "explore: %s", e->err);
	else
		tuistate_set_msg(t, MSG_INFO, "exploring %s%s", e->s.function, hint);
}

static void open_on(struct tui *t, const char *func, const char *module, const struct flame_node *n)
{
	struct tuiexplore *e = t->explore;
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		t->explore = e;
	} else {
		fn_free(&e->at);
	}
	for (size_t i = 0; i < e->ncallers; i++)
		fn_free(&e->callers[i]);
	e->ncallers = 0;
	/* the tree's callers, nearest first */
	size_t cap = 0;
	const struct flame_node *up = n ? n->parent : NULL;
	while (up && up->frame) {
		const struct flame_node *at = NULL;
		const struct frame *f = function_frame(t->view, up, &at);
		if (!f)
			break;
		grow_array((void **)&e->callers, &cap, e->ncallers + 1, sizeof(*e->callers));
		e->callers[e->ncallers++] = fn_copy(f->name, f->module[0] ? f->module : module_of(t, f->name));
		up = at->parent;
	}
	explore_at(t, func, module,
		   ": l line probe, b branch, w/W sample-when, c capture, u untrace, Enter callee, "
		   "p caller, x close");
}

void tuiexplore_open_selected(struct tui *t)
{
	const struct live_view *v = t->view;
	if (!v || !v->flame) {
		tuistate_set_msg(t, MSG_ERROR, "nothing to explore yet");
		return;
	}
	if (t->focus == FOCUS_HOT && t->hot_sel < v->nhot) {
		const struct frame *f = frames_get(v->flame->frames, v->hot[t->hot_sel].frame);
		if (f)
			open_on(t, f->name, module_of(t, f->name), NULL);
		return;
	}
	struct tuitree_row row;
	long s = tuitree_selected(tuistate_tree(t));
	const struct frame *f = NULL;
	const struct flame_node *at = NULL;
	if (s >= 0 && tuitree_row(tuistate_tree(t), (size_t)s, &row) && !t->inverted)
		f = function_frame(v, row.node, &at);
	if (!f) {
		tuistate_set_msg(t, MSG_ERROR, "select a function in the call tree (not inverted) to explore");
		return;
	}
	open_on(t, f->name, f->module[0] ? f->module : module_of(t, f->name), at);
}

static void fns_free(struct tuiexplore_fn *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fn_free(&v[i]);
	free(v);
}

void tuiexplore_close(struct tui *t)
{
	struct tuiexplore *e = t->explore;
	if (!e)
		return;
	if (e->built)
		structure_free(&e->s);
	fn_free(&e->at);
	fns_free(e->back, e->nback);
	fns_free(e->callers, e->ncallers);
	free(e->counts);
	free(e);
	t->explore = NULL;
}

void tuiexplore_refresh(struct tui *t)
{
	struct tuiexplore *e = t->explore;
	if (!e || !e->built || !e->s.nlines || !t->run)
		return;
	const struct profile *p = liverun_profile(t->run);
	if (!p)
		return;
	struct explorer_counts c;
	explorer_counts_fill(&c, p, &e->s, "live");
	free(e->counts);
	e->counts = c.lines; /* taken */
	e->samples = c.samples;
}

size_t tuiexplore_nrows(const struct tuiexplore *e)
{
	if (!e->built)
		return 0;
	size_t n = (size_t)e->s.nlines;
	if (e->asm_lines)
		for (int k = 0; k < e->s.nlines; k++)
			n += (size_t)e->s.lines[k].insns;
	return n;
}

/* Whether instruction i is on line k of the function's file. */
static bool insn_on(const struct structure *s, int i, int k)
{
	const struct structure_insn *si = &s->insns[i];
	return si->file && s->file && !strcmp(si->file, s->file) && si->line == s->lines[k].line;
}

bool tuiexplore_row(const struct tuiexplore *e, size_t i, struct tuiexplore_row *out)
{
	if (!e->built)
		return false;
	if (!e->asm_lines) {
		if (i >= (size_t)e->s.nlines)
			return false;
		*out = (struct tuiexplore_row){(int)i, -1};
		return true;
	}
	size_t at = 0;
	for (int k = 0; k < e->s.nlines; k++) {
		if (at++ == i) {
			*out = (struct tuiexplore_row){k, -1};
			return true;
		}
		for (int n = 0; n < e->s.ninsns; n++)
			if (insn_on(&e->s, n, k) && at++ == i) {
				*out = (struct tuiexplore_row){k, n};
				return true;
			}
	}
	return false;
}

/* Whether a probe's location ("[BIN:]FILE:LINE") names line of e's file. */
static bool names_line(const struct tuiexplore *e, const char *at, unsigned line)
{
	char *bin = NULL, *file = NULL;
	unsigned l = 0;
	bool on = at && probes_split_line(at, &bin, &file, &l) == 1 && l == line &&
		  !strcmp(base_name(file), base_name(e->s.file)) &&
		  (!bin || !strcmp(base_name(bin), base_name(e->s.binary)));
	free(bin);
	free(file);
	return on;
}

void tuiexplore_line_probes(const struct tui *t, unsigned line, char *buf, size_t size)
{
	const struct tuiexplore *e = t->explore;
	buf[0] = 0;
	const struct live_view *v = t->view;
	const struct profile *p = t->run ? liverun_profile(t->run) : NULL;
	if (!e || !e->built || !v || !p)
		return;
	size_t off = 0;
	unsigned more = 0;
	bool branch_shown = false;
	for (size_t i = 0; i < v->nprobes && i < p->nprobes; i++) {
		const struct probe_info *pi = &p->probes[i];
		const struct probe_branch *b = pi->branch;
		if (!v->probes[i].attached)
			continue;
		if (!b && pi->point >= 0 && names_line(e, pi->name, line)) {
			int w = snprintf(buf + off, size - off, "%sline %llu", off ? " " : "",
					 (unsigned long long)v->probes[i].total_calls);
			off = w < 0 || (size_t)w >= size - off ? size - 1 : off + (size_t)w;
		} else if (b && b->taken && names_line(e, b->at, line)) {
			if (branch_shown) {
				more++;
				continue;
			}
			int o = profile_branch_other(p, (uint32_t)i);
			double tk = (double)v->probes[i].total_calls;
			double nt = o >= 0 && (size_t)o < v->nprobes ? (double)v->probes[o].total_calls : 0;
			int w = snprintf(buf + off, size - off, "%sT %.1f%% N %.1f%% of %.0f", off ? " " : "",
					 tk + nt > 0 ? 100 * tk / (tk + nt) : 0,
					 tk + nt > 0 ? 100 * nt / (tk + nt) : 0, tk + nt);
			off = w < 0 || (size_t)w >= size - off ? size - 1 : off + (size_t)w;
			branch_shown = true;
		}
	}
	if (more && off < size)
		snprintf(buf + off, size - off, " +%u", more);
}

/* The probe spec of line k: "BIN:FILE:LINE" by base names (the session
 * finds a running program's binary and a library by them). */
static void line_spec(const struct tuiexplore *e, int k, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%s:%u", base_name(e->s.binary), base_name(e->s.file),
		 e->s.lines[k].line);
}

/* Runs a command as the prompt does (its answer on the message line). */
static void run(struct tui *t, const char *fmt, const char *spec)
{
	char line[EDIT_MAX];
	snprintf(line, sizeof(line), fmt, spec);
	tuiprompt_run(t, line);
}

static void go_to(struct tui *t, const char *func, const char *module, bool remember)
{
	struct tuiexplore *e = t->explore;
	if (remember) {
		size_t cap = e->nback;
		grow_array((void **)&e->back, &cap, e->nback + 1, sizeof(*e->back));
		e->back[e->nback++] = e->at;
	} else {
		fn_free(&e->at);
	}
	explore_at(t, func, module, "");
}

/* Enter: the first function called on the cursor's line. */
static void callee_key(struct tui *t, int k, int insn)
{
	struct tuiexplore *e = t->explore;
	for (int i = 0; i < e->s.ninsns; i++) {
		const struct structure_insn *si = &e->s.insns[i];
		if ((insn >= 0 ? i == insn : insn_on(&e->s, i, k)) && si->callee) {
			char *callee = xstrdup(si->callee), *module = xstrdup(e->s.binary);
			go_to(t, callee, module, true);
			free(callee);
			free(module);
			return;
		}
	}
	tuistate_set_msg(t, MSG_ERROR, "no call to a function of %s on line %u",
			 base_name(e->s.binary), e->s.lines[k].line);
}

bool tuiexplore_key(struct tui *t, int ch)
{
	struct tuiexplore *e = t->explore;
	if (!e)
		return false;
	long n = (long)tuiexplore_nrows(e);
	long page = LINES > 8 ? LINES - 8 : 1;
	struct tuiexplore_row row = {-1, -1};
	bool have = e->built && tuiexplore_row(e, (size_t)e->cursor, &row);
	char spec[512];
	if (have)
		line_spec(e, row.line, spec, sizeof(spec));
	switch (ch) {
	case 'x': case 'q': case KEY_ESC:
		tuiexplore_close(t);
		return true;
	case KEY_UP: case 'k': e->cursor = e->cursor > 0 ? e->cursor - 1 : 0; return true;
	case KEY_DOWN: case 'j': e->cursor = e->cursor + 1 < n ? e->cursor + 1 : (int)(n > 0 ? n - 1 : 0); return true;
	case KEY_PPAGE: e->cursor = e->cursor > page ? e->cursor - (int)page : 0; return true;
	case KEY_NPAGE: e->cursor = e->cursor + page < n ? e->cursor + (int)page : (int)(n > 0 ? n - 1 : 0); return true;
	case KEY_HOME: case 'g': e->cursor = 0; return true;
	case KEY_END: case 'G': e->cursor = (int)(n > 0 ? n - 1 : 0); return true;
	case 'a':
		e->asm_lines = !e->asm_lines;
		e->cursor = 0;
		return true;
	case 'p':
		if (!e->ncallers) {
			tuistate_set_msg(t, MSG_ERROR, "no caller known (open the pane from the call tree)");
			return true;
		}
		{
			struct tuiexplore_fn c = e->callers[0];
			memmove(e->callers, e->callers + 1, (e->ncallers - 1) * sizeof(*e->callers));
			e->ncallers--;
			go_to(t, c.func, c.module, true);
			fn_free(&c);
		}
		return true;
	case KEY_BACKSPACE: case 127: case 8:
		if (!e->nback) {
			tuistate_set_msg(t, MSG_ERROR, "no function explored before this one");
			return true;
		}
		{
			struct tuiexplore_fn b = e->back[--e->nback];
			go_to(t, b.func, b.module, false);
			fn_free(&b);
		}
		return true;
	}
	if (!have) {
		bool ours = strchr("lbwWcu\n\r", ch) || ch == KEY_ENTER;
		if (ours)
			tuistate_set_msg(t, MSG_ERROR, "nothing to place a probe on: %s", e->err);
		return ours;
	}
	const struct structure_line *l = &e->s.lines[row.line];
	switch (ch) {
	case 'l': run(t, "trace %s", spec); return true;
	case 'b': run(t, "trace branch %s", spec); return true;
	case 'w':
	case 'W': {
		if (ch == 'W' && !l->branches) {
			tuistate_set_msg(t, MSG_ERROR, "line %u has no conditional jump: w samples when it runs", l->line);
			return true;
		}
		if (!l->branches) {
			run(t, "sample-when %s", spec);
			return true;
		}
		/* a line of several jumps: its first (:sample-when branch LINE#K for another) */
		char which[600];
		snprintf(which, sizeof(which), "%s%s", spec, l->branches > 1 ? "#1" : "");
		run(t, ch == 'w' ? "sample-when branch %s taken" : "sample-when branch %s not-taken", which);
		return true;
	}
	case 'u': {
		/* the line's line probe, and its branch probe's outcomes (by the
		 * spec that placed them) */
		const struct profile *p = t->run ? liverun_profile(t->run) : NULL;
		bool line_probe = false, branch = false;
		for (size_t i = 0; p && i < p->nprobes; i++) {
			const struct probe_info *pi = &p->probes[i];
			line_probe |= !pi->branch && pi->point >= 0 && names_line(e, pi->name, l->line);
			branch |= pi->branch && names_line(e, pi->branch->at, l->line);
		}
		if (!line_probe && !branch)
			tuistate_set_msg(t, MSG_ERROR, "no probe on line %u", l->line);
		if (branch)
			run(t, "untrace branch %s", spec);
		if (line_probe)
			run(t, "untrace %s", spec);
		return true;
	}
	case 'c': {
		char pre[600];
		snprintf(pre, sizeof(pre), "trace %s ", spec);
		tuiprompt_open_with(t, PROMPT_COMMAND, pre);
		return true;
	}
	case '\n': case '\r': case KEY_ENTER:
		callee_key(t, row.line, row.insn);
		return true;
	}
	return false;
}
