#include "threadtable.h"

#include <inttypes.h>

#include "latency.h"
#include "printable.h"
#include "sonde_abi.h"
#include "syscalls.h"
#include "view.h"

/* A duration, ">" first when it is a lower bound. */
static const char *time_cell(uint64_t ns, bool lower_bound, char *buf, size_t size)
{
	char d[32];
	snprintf(buf, size, "%s%s", lower_bound ? ">" : "", duration_format(ns, d, sizeof(d)));
	return buf;
}

void threadtable_print(FILE *f, const struct profile *p, const struct threadstate_row *rows,
		       size_t n, uint64_t time_ns)
{
	size_t counts[SONDE_OFF_STOPPED + 1];
	threadstates_count(rows, n, counts);
	fprintf(f, "threads at %" PRIu64 ".%06" PRIu64 " s: %zu", time_ns / 1000000000u,
		time_ns % 1000000000u / 1000u, n);
	for (unsigned s = 0; s <= SONDE_OFF_STOPPED; s++)
		fprintf(f, "%s%zu %s", s ? ", " : " (", counts[s], view_state_name(s));
	fprintf(f, ")\n");
	fprintf(f, "%-8s %-16s %-16s %10s  %-18s %10s  %-24s %10s\n", "TID", "COMM", "STATE",
		"IN STATE", "SYSCALL", "IN SYSCALL", "CALL", "ELAPSED");
	for (size_t i = 0; i < n; i++) {
		const struct threadstate_row *r = &rows[i];
		const struct thread_sample *t = r->ts;
		const struct thread_info *ti = &p->threads[t->thread];
		char comm[64], st[32], sc_name[32], sc_time[32] = "-", call[128] = "-",
			call_time[32] = "-";
		const char *sc = t->syscall == SONDE_SYSCALL_UNKNOWN ? "?" : "-";
		if (t->syscall >= 0) {
			sc = syscalls_name(t->syscall);
			if (!sc) {
				snprintf(sc_name, sizeof(sc_name), "syscall %d", (int)t->syscall);
				sc = sc_name;
			}
			time_cell(r->syscall_ns, t->flags & SONDE_TSTATE_SYSCALL_SEEDED, sc_time,
				  sizeof(sc_time));
		}
		if (t->span_id && t->probe < p->nprobes) {
			printable_copy(call, sizeof(call), p->probes[t->probe].name);
			time_cell(r->call_ns, false, call_time, sizeof(call_time));
		}
		fprintf(f, "%-8" PRIu32 " %-16s %-16s %10s  %-18s %10s  %-24s %10s\n", ti->tid,
			printable_copy(comm, sizeof(comm), ti->comm), view_state_name(t->state),
			time_cell(r->state_ns, t->flags & SONDE_TSTATE_SEEDED, st, sizeof(st)), sc,
			sc_time, call, call_time);
	}
}
