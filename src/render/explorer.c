/* explorer — a function's structure as text and JSON (explorer.h). */
#define _GNU_SOURCE
#include "explorer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lines.h"
#include "printable.h"
#include "probes.h"

void explorer_counts_fill(struct explorer_counts *c, const struct profile *p,
			  const struct structure *s, const char *from)
{
	*c = (struct explorer_counts){.from = from, .p = p};
	if (!s->nlines)
		return;
	c->lines = calloc((size_t)s->nlines, sizeof(*c->lines));
	if (!c->lines)
		return;
	struct view v = {0};
	struct line_samples_query q = {.func = s->function,
				       .module = s->binary,
				       .file = s->file,
				       .lo = s->lines[0].line,
				       .n = (size_t)s->nlines};
	c->samples = line_samples_of(p, &v, &q, c->lines);
}

void explorer_counts_free(struct explorer_counts *c)
{
	free(c->lines);
	c->lines = NULL;
}

static const char *flow_name(enum insn_flow f)
{
	static const char *const names[] = {[INSN_FLOW_NEXT] = "next", [INSN_FLOW_COND] = "cond",
					    [INSN_FLOW_JUMP] = "jump", [INSN_FLOW_INDIRECT] = "indirect",
					    [INSN_FLOW_RETURN] = "return", [INSN_FLOW_STOP] = "stop"};
	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

/* Whether a line or branch probe's location names line `line` of s's file. */
static bool probe_on_line(const struct structure *s, const struct probe_info *pi, unsigned line)
{
	const char *at = pi->branch ? pi->branch->at : pi->point >= 0 ? pi->name : NULL;
	char *bin = NULL, *file = NULL;
	unsigned l = 0;
	bool on = at && s->file && probes_split_line(at, &bin, &file, &l) == 1 && l == line &&
		  lines_file_matches(s->file, file);
	free(bin);
	free(file);
	return on;
}

/* The exact counts of the recording's probes on a line, one row each. */
static void text_line_probes(FILE *out, const struct structure *s, const struct profile *p,
			     unsigned line, struct printable *keep)
{
	for (size_t i = 0; p && i < p->nprobes; i++) {
		const struct probe_info *pi = &p->probes[i];
		if (!probe_on_line(s, pi, line))
			continue;
		const struct probe_branch *b = pi->branch;
		if (!b) {
			fprintf(out, "%26s line probe: ran %" PRIu64 " times (exact)\n", "", pi->entered);
			continue;
		}
		if (!b->taken)
			continue; /* with its taken probe */
		int other = profile_branch_other(p, (uint32_t)i);
		uint64_t t = pi->entered, f = other >= 0 ? p->probes[other].entered : 0;
		fprintf(out, "%26s branch #%u (%s): taken %.1f%% (%" PRIu64 "), not taken %.1f%% (%" PRIu64
			     ") (exact)\n",
			"", b->jump, printable(keep, b->insn), t + f ? 100.0 * (double)t / (double)(t + f) : 0,
			t, t + f ? 100.0 * (double)f / (double)(t + f) : 0, f);
	}
}

static void text_insns_of_line(FILE *out, const struct structure *s, int k, bool any_file,
			       struct printable *keep)
{
	for (int i = 0; i < s->ninsns; i++) {
		const struct structure_insn *si = &s->insns[i];
		bool here = k < 0 ? any_file
				  : si->file && !strcmp(si->file, s->file) && si->line == s->lines[k].line;
		if (!here)
			continue;
		fprintf(out, "%26s %#" PRIx64 "  %-36s B%d%s%s\n", "", si->i.addr,
			printable(keep, si->i.text), si->block, si->refused ? "  (no probe: " : "",
			si->refused ? "kernel cannot step it)" : "");
	}
}

/* A source line with its tabs expanded to 8 columns (malloc'd). */
static char *expand_tabs(const char *t)
{
	size_t n = 0, cols = 0;
	for (const char *c = t; *c; c++)
		n += *c == '\t' ? 8 : 1;
	char *o = malloc(n + 1), *w = o;
	if (!o)
		return NULL;
	for (const char *c = t; *c; c++) {
		if (*c == '\t') {
			do {
				*w++ = ' ';
				cols++;
			} while (cols % 8);
		} else {
			*w++ = *c;
			cols++;
		}
	}
	*w = 0;
	return o;
}

void explorer_text(FILE *out, const struct structure *s, const struct explorer_options *o)
{
	struct printable keep = {0};
	const struct explorer_counts *c = o->counts;
	fprintf(out, "%s in %s: %#" PRIx64 "-%#" PRIx64 " (%" PRIu64 " bytes, %d instructions, %d blocks, %d loop%s)\n",
		printable(&keep, s->function), printable(&keep, s->binary), s->lo, s->hi, s->hi - s->lo,
		s->ninsns, s->nblocks, s->nloops, s->nloops == 1 ? "" : "s");
	if (!s->has_dwarf)
		fprintf(out, "source: no debug info (DWARF): instructions and blocks only\n");
	else if (s->source_path)
		fprintf(out, "source: %s\n", printable(&keep, s->source_path));
	else
		fprintf(out, "source: %s not found (lines by their instructions; --source-dir DIR "
			     "to say where it is)\n",
			printable(&keep, s->file ? s->file : "?"));
	if (c)
		fprintf(out, "counts: %s: %" PRIu64 " samples with %s on the stack (SELF: the line "
			     "ran, TOTAL: it ran or called; sampled); probes' counts exact\n",
			printable(&keep, c->from), c->samples, printable(&keep, s->function));
	if (s->nlines) {
		fprintf(out, "\n  LINE SITES BR %s SOURCE\n", c ? "   SELF  TOTAL" : "");
		for (int k = 0; k < s->nlines; k++) {
			const struct structure_line *l = &s->lines[k];
			char sites[8] = "", br[8] = "";
			if (l->sites)
				snprintf(sites, sizeof(sites), "%d%s", l->sites, l->refused ? "!" : "");
			if (l->branches)
				snprintf(br, sizeof(br), "%d%s", l->branches, l->branch_refused ? "!" : "");
			fprintf(out, "%6u %5s %2s ", l->line, sites, br);
			if (c) {
				const struct line_samples *ls = c->lines ? &c->lines[k] : NULL;
				if (ls && ls->total)
					fprintf(out, "%6" PRIu64 " %6" PRIu64 " ", ls->self, ls->total);
				else
					fprintf(out, "%14s", "");
			}
			char *text = l->text ? expand_tabs(l->text) : NULL;
			fprintf(out, "%s\n", text ? printable(&keep, text) : "");
			free(text);
			if (c)
				text_line_probes(out, s, c->p, l->line, &keep);
			if (o->asm_lines || !s->source_path)
				text_insns_of_line(out, s, k, false, &keep);
		}
		fprintf(out, "  (SITES: addresses a line probe uses, one per copy of the line's code, "
			     "! where the kernel cannot step one; BR: conditional jumps, ! where it cannot "
			     "take one)\n");
	} else {
		fprintf(out, "\n");
		text_insns_of_line(out, s, -1, true, &keep);
	}
	fprintf(out, "\nBlocks (%d):\n", s->nblocks);
	for (int b = 0; b < s->nblocks; b++) {
		const struct structure_block *bl = &s->blocks[b];
		char lines[32] = "";
		if (bl->lo_line)
			snprintf(lines, sizeof(lines), bl->lo_line == bl->hi_line ? "line %u" : "lines %u-%u",
				 bl->lo_line, bl->hi_line);
		fprintf(out, "  B%-3d %#" PRIx64 "-%#" PRIx64 "  %-14s", b, bl->lo, bl->hi, lines);
		for (int k = 0; k < bl->nsucc; k++)
			fprintf(out, "%s B%d", k ? "," : " ->", bl->succ[k]);
		if (bl->exits)
			fprintf(out, "%s", bl->nsucc ? ", exits" : " -> exits");
		const struct insn_info *last = &s->insns[bl->first + bl->n - 1].i;
		if (last->flow != INSN_FLOW_NEXT)
			fprintf(out, "  (%s)", printable(&keep, last->text));
		if (bl->loop_head)
			fprintf(out, "  loop head");
		if (!bl->reachable)
			fprintf(out, "  unreachable from the entry");
		fprintf(out, "\n");
	}
	fprintf(out, "\nLoops (%d):\n", s->nloops);
	for (int i = 0; i < s->nloops; i++) {
		const struct structure_block *h = &s->blocks[s->loops[i].head];
		const struct structure_block *f = &s->blocks[s->loops[i].from];
		fprintf(out, "  B%d", s->loops[i].head);
		if (h->lo_line)
			fprintf(out, " (line %u)", h->lo_line);
		fprintf(out, ": back edge from B%d at %#" PRIx64 " (%s)\n", s->loops[i].from,
			s->insns[f->first + f->n - 1].i.addr,
			printable(&keep, s->insns[f->first + f->n - 1].i.text));
	}
	if (s->nscopes) {
		fprintf(out, "\nInlined calls and lexical blocks (%d):\n", s->nscopes);
		for (int i = 0; i < s->nscopes; i++) {
			const struct structure_scope *sc = &s->scopes[i];
			fprintf(out, "  %*s%s %#" PRIx64 "-%#" PRIx64, 2 * (sc->depth - 1), "",
				sc->inlined ? printable(&keep, sc->name) : "{ block", sc->lo, sc->hi);
			if (sc->inlined && sc->call_line)
				fprintf(out, "  inlined at %s:%u", sc->call_file ? printable(&keep, sc->call_file) : "?",
					sc->call_line);
			if (sc->decl_line)
				fprintf(out, "  %s line %u", sc->inlined ? "declared at" : "from", sc->decl_line);
			fprintf(out, "\n");
		}
	}
	printable_free(&keep);
}

static void json_str(FILE *out, const char *s)
{
	if (s)
		json_write_string(out, s);
	else
		fputs("null", out);
}

void explorer_json(FILE *out, const struct structure *s, const struct explorer_options *o)
{
	const struct explorer_counts *c = o->counts;
	fprintf(out, "{\"binary\": ");
	json_str(out, s->binary);
	fprintf(out, ", \"function\": ");
	json_str(out, s->function);
	fprintf(out, ", \"lo\": %" PRIu64 ", \"hi\": %" PRIu64 ", \"file\": ", s->lo, s->hi);
	json_str(out, s->file);
	fprintf(out, ", \"source\": ");
	json_str(out, s->source_path);
	if (c)
		fprintf(out, ", \"samples\": %" PRIu64, c->samples);
	fprintf(out, ",\n \"lines\": [");
	for (int k = 0; k < s->nlines; k++) {
		const struct structure_line *l = &s->lines[k];
		fprintf(out, "%s\n  {\"line\": %u, \"sites\": %d, \"branches\": %d, \"insns\": %d, "
			     "\"refused\": %s, \"branch_refused\": %s, \"text\": ",
			k ? "," : "", l->line, l->sites, l->branches, l->insns, l->refused ? "true" : "false",
			l->branch_refused ? "true" : "false");
		json_str(out, l->text);
		if (c && c->lines)
			fprintf(out, ", \"self\": %" PRIu64 ", \"total\": %" PRIu64, c->lines[k].self,
				c->lines[k].total);
		if (c && c->p) {
			fprintf(out, ", \"probes\": [");
			int n = 0;
			for (size_t i = 0; i < c->p->nprobes; i++) {
				const struct probe_info *pi = &c->p->probes[i];
				if (!probe_on_line(s, pi, l->line))
					continue;
				fprintf(out, "%s{\"name\": ", n++ ? ", " : "");
				json_write_string(out, pi->name);
				fprintf(out, ", \"kind\": \"%s\", \"count\": %" PRIu64,
					pi->branch ? "branch" : "line", pi->entered);
				if (pi->branch)
					fprintf(out, ", \"jump\": %u, \"outcome\": \"%s\", \"to_line\": %u",
						pi->branch->jump, pi->branch->taken ? "taken" : "not-taken",
						pi->branch->to_line);
				fputc('}', out);
			}
			fprintf(out, "]");
		}
		fprintf(out, "}");
	}
	fprintf(out, "],\n \"blocks\": [");
	for (int b = 0; b < s->nblocks; b++) {
		const struct structure_block *bl = &s->blocks[b];
		fprintf(out, "%s\n  {\"id\": %d, \"lo\": %" PRIu64 ", \"hi\": %" PRIu64
			     ", \"lo_line\": %u, \"hi_line\": %u, \"succ\": [",
			b ? "," : "", b, bl->lo, bl->hi, bl->lo_line, bl->hi_line);
		for (int k = 0; k < bl->nsucc; k++)
			fprintf(out, "%s%d", k ? ", " : "", bl->succ[k]);
		fprintf(out, "], \"exits\": %s, \"loop_head\": %s, \"reachable\": %s}",
			bl->exits ? "true" : "false", bl->loop_head ? "true" : "false",
			bl->reachable ? "true" : "false");
	}
	fprintf(out, "],\n \"loops\": [");
	for (int i = 0; i < s->nloops; i++)
		fprintf(out, "%s{\"head\": %d, \"from\": %d}", i ? ", " : "", s->loops[i].head,
			s->loops[i].from);
	fprintf(out, "],\n \"scopes\": [");
	for (int i = 0; i < s->nscopes; i++) {
		const struct structure_scope *sc = &s->scopes[i];
		fprintf(out, "%s\n  {\"kind\": \"%s\", \"name\": ", i ? "," : "",
			sc->inlined ? "inlined" : "block");
		json_str(out, sc->name);
		fprintf(out, ", \"lo\": %" PRIu64 ", \"hi\": %" PRIu64 ", \"depth\": %d, \"call_file\": ",
			sc->lo, sc->hi, sc->depth);
		json_str(out, sc->call_file);
		fprintf(out, ", \"call_line\": %u, \"decl_line\": %u}", sc->call_line, sc->decl_line);
	}
	fprintf(out, "],\n \"insns\": [");
	for (int i = 0; i < s->ninsns; i++) {
		const struct structure_insn *si = &s->insns[i];
		fprintf(out, "%s\n  {\"addr\": %" PRIu64 ", \"size\": %u, \"text\": ", i ? "," : "",
			si->i.addr, si->i.size);
		json_write_string(out, si->i.text);
		fprintf(out, ", \"file\": ");
		json_str(out, si->file);
		fprintf(out, ", \"line\": %u, \"block\": %d, \"flow\": \"%s\", \"target\": %" PRIu64
			     ", \"refused\": ",
			si->line, si->block, flow_name(si->i.flow), si->i.target);
		json_str(out, si->refused);
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}
