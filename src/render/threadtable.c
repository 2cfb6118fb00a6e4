#include "threadtable.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "latency.h"
#include "printable.h"
#include "syscalls.h"
#include "view.h"

/* A duration, ">" first when it is a lower bound. */
static const char *time_cell(uint64_t ns, bool lower_bound, char *buf, size_t size)
{
	char d[32];
	snprintf(buf, size, "%s%s", lower_bound ? ">" : "", duration_format(ns, d, sizeof(d)));
	return buf;
}

#define STACK_MAX 512 /* frames of a stack shown (the innermost) */

/* The stack's frames, innermost first, in out; returns how many. */
static size_t stack_leaf_first(const struct profile *p, uint32_t stack, uint32_t *out)
{
	uint32_t root_first[STACK_MAX];
	size_t depth = profile_stack_frames(p, stack, root_first, STACK_MAX);
	size_t n = depth < STACK_MAX ? depth : STACK_MAX;
	for (size_t i = 0; i < n; i++)
		out[i] = root_first[n - 1 - i];
	return n;
}

/* The STACK cell: its user functions innermost first (its kernel ones when
 * it has none), one name for an inline chain's frames of one function. */
static void stack_cell(const struct profile *p, uint32_t stack, FILE *t)
{
	uint32_t ids[STACK_MAX];
	size_t n = stack ? stack_leaf_first(p, stack, ids) : 0;
	bool user = false;
	for (size_t i = 0; i < n && !user; i++)
		user = frames_get(p->frames, ids[i])->kind != FRAME_KERNEL;
	const char *last = NULL;
	size_t shown = 0;
	for (size_t i = 0; i < n; i++) {
		const struct frame *fr = frames_get(p->frames, ids[i]);
		if ((fr->kind == FRAME_KERNEL) == user || fr->kind == FRAME_PROCESS ||
		    (last && strcmp(last, fr->name) == 0))
			continue;
		char name[128];
		fprintf(t, "%s%s", shown++ ? " < " : "", printable_copy(name, sizeof(name), fr->name));
		last = fr->name;
	}
	if (!shown)
		fputs("-", t);
}

void threadtable_print_stack(FILE *f, const struct profile *p, const struct thread_sample *t,
			     int indent)
{
	uint32_t ids[STACK_MAX];
	size_t n = t->stack ? stack_leaf_first(p, t->stack, ids) : 0;
	for (size_t i = 0; i < n; i++) {
		const struct frame *fr = frames_get(p->frames, ids[i]);
		char name[256];
		fprintf(f, "%*s%s%s\n", indent, "", printable_copy(name, sizeof(name), fr->name),
			fr->kind == FRAME_KERNEL ? " [k]" : "");
	}
}

/* The system call a thread is in: its name, "syscall N" for a number
 * without one, "?" when /proc did not say at the start; NULL: none. */
static const char *syscall_label(const struct thread_sample *t, char *buf, size_t size)
{
	if (t->syscall == TSTATE_SYSCALL_UNKNOWN)
		return "?";
	if (t->syscall < 0)
		return NULL;
	const char *sc = syscalls_name(t->syscall);
	if (sc)
		return sc;
	snprintf(buf, size, "syscall %d", (int)t->syscall);
	return buf;
}

void threadtable_print(FILE *f, const struct profile *p, const struct threadstate_row *rows,
		       size_t n, uint64_t time_ns, size_t width)
{
	size_t counts[TSTATE_COUNT];
	threadstates_count(rows, n, counts);
	fprintf(f, "threads at %" PRIu64 ".%06" PRIu64 " s: %zu", time_ns / 1000000000u,
		time_ns % 1000000000u / 1000u, n);
	for (unsigned s = 0; s <= TSTATE_STOPPED; s++)
		fprintf(f, "%s%zu %s", s ? ", " : " (", counts[s], view_state_name(s));
	fprintf(f, ")\n");
	fprintf(f, "%-8s %-16s %-16s %10s  %-18s %10s  %-24s %10s  %s\n", "TID", "COMM", "STATE",
		"IN STATE", "SYSCALL", "IN SYSCALL", "CALL", "ELAPSED", "STACK");
	for (size_t i = 0; i < n; i++) {
		const struct threadstate_row *r = &rows[i];
		const struct thread_sample *t = r->ts;
		const struct thread_info *ti = &p->threads[t->thread];
		char comm[64], st[32], sc_name[32], sc_time[32] = "-", call[128] = "-",
			call_time[32] = "-";
		const char *sc = syscall_label(t, sc_name, sizeof(sc_name));
		if (!sc)
			sc = "-";
		else if (t->syscall >= 0)
			time_cell(r->syscall_ns, t->flags & TSTATE_FLAG_SYSCALL_SEEDED, sc_time,
				  sizeof(sc_time));
		if (t->span_id && t->probe < p->nprobes) {
			printable_copy(call, sizeof(call), p->probes[t->probe].name);
			time_cell(r->call_ns, false, call_time, sizeof(call_time));
		}
		char *buf = NULL;
		size_t len = 0;
		FILE *line = open_memstream(&buf, &len);
		if (!line)
			continue;
		fprintf(line, "%-8" PRIu32 " %-16s %-16s %10s  %-18s %10s  %-24s %10s  ", ti->tid,
			printable_copy(comm, sizeof(comm), ti->comm), view_state_name(t->state),
			time_cell(r->state_ns, t->flags & TSTATE_FLAG_SEEDED, st, sizeof(st)), sc,
			sc_time, call, call_time);
		stack_cell(p, t->stack, line);
		fclose(line);
		fprintf(f, "%.*s\n", (int)(width && len > width ? width : len), buf);
		free(buf);
	}
}

/* A JSON string member, or null for NULL. */
static void json_str_or_null(FILE *f, const char *name, const char *v)
{
	fprintf(f, ",\"%s\":", name);
	if (v)
		json_write_string(f, v);
	else
		fputs("null", f);
}

void threadtable_write_json(FILE *f, const struct profile *p, const struct threadstate_row *rows,
			    size_t n, uint64_t time_ns, uint64_t now_ns)
{
	size_t counts[TSTATE_COUNT];
	threadstates_count(rows, n, counts);
	if (n)
		fprintf(f, "{\"time_ns\":%" PRIu64 ",\"ago_ns\":%" PRIu64, time_ns,
			now_ns > time_ns ? now_ns - time_ns : 0);
	else
		fputs("{\"time_ns\":null,\"ago_ns\":null", f);
	fputs(",\"counts\":{", f);
	for (unsigned s = 0; s <= TSTATE_STOPPED; s++)
		fprintf(f, "%s\"%s\":%zu", s ? "," : "", view_state_name(s), counts[s]);
	fputs("},\"threads\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct threadstate_row *r = &rows[i];
		const struct thread_sample *t = r->ts;
		const struct thread_info *ti = &p->threads[t->thread];
		char sc_name[32];
		const char *sc = syscall_label(t, sc_name, sizeof(sc_name));
		fprintf(f, "%s{\"tid\":%" PRIu32 ",\"pid\":%" PRIu32 ",\"comm\":", i ? "," : "",
			ti->tid, ti->pid);
		json_write_string(f, ti->comm);
		fprintf(f, ",\"state\":\"%s\",\"state_ns\":%" PRIu64 ",\"state_lower_bound\":%s",
			view_state_name(t->state), r->state_ns,
			t->flags & TSTATE_FLAG_SEEDED ? "true" : "false");
		json_str_or_null(f, "syscall", sc);
		if (t->syscall >= 0)
			fprintf(f, ",\"syscall_ns\":%" PRIu64 ",\"syscall_lower_bound\":%s",
				r->syscall_ns,
				t->flags & TSTATE_FLAG_SYSCALL_SEEDED ? "true" : "false");
		else
			fputs(",\"syscall_ns\":null,\"syscall_lower_bound\":false", f);
		bool call = t->span_id && t->probe < p->nprobes;
		json_str_or_null(f, "call", call ? p->probes[t->probe].name : NULL);
		if (call)
			fprintf(f, ",\"call_ns\":%" PRIu64 ",\"span_id\":%" PRIu64, r->call_ns,
				t->span_id);
		else
			fputs(",\"call_ns\":null,\"span_id\":null", f);
		/* The STACK column as text, and the whole stack. */
		char *cell = NULL;
		size_t len = 0;
		FILE *c = open_memstream(&cell, &len);
		if (c) {
			stack_cell(p, t->stack, c);
			fclose(c);
		}
		json_str_or_null(f, "stack", cell);
		free(cell);
		fputs(",\"frames\":[", f);
		uint32_t ids[STACK_MAX];
		size_t depth = t->stack ? stack_leaf_first(p, t->stack, ids) : 0;
		for (size_t k = 0; k < depth; k++) {
			const struct frame *fr = frames_get(p->frames, ids[k]);
			fputs(k ? ",[" : "[", f);
			json_write_string(f, fr->name);
			fprintf(f, ",\"%s\"]", frames_kind_name(fr->kind));
		}
		fprintf(f, "],\"stack_ns\":");
		if (t->stack)
			fprintf(f, "%" PRIu64, t->stack_ns);
		else
			fputs("null", f);
		fputc('}', f);
	}
	fputs("]}", f);
}
