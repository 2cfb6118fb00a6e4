#include "threadstates.h"

#include <stdlib.h>

#include "util.h"

static uint64_t since(uint64_t now, uint64_t then)
{
	return now > then ? now - then : 0;
}

/* Where a state goes in the table: the threads doing something first. */
static int state_rank(uint8_t state)
{
	static const int rank[] = {
		[TSTATE_RUNNING] = 0,       [TSTATE_RUNNABLE] = 1, [TSTATE_DISK] = 2,
		[TSTATE_UNINTERRUPTIBLE] = 3, [TSTATE_SLEEPING] = 4, [TSTATE_STOPPED] = 5,
	};
	return state < sizeof(rank) / sizeof(rank[0]) ? rank[state] : 6;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct threadstate_row *x = a, *y = b;
	int rx = state_rank(x->ts->state), ry = state_rank(y->ts->state);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->state_ns != y->state_ns)
		return x->state_ns > y->state_ns ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

size_t threadstates_last_pass(const struct profile *p, struct threadstate_row **rows,
			      uint64_t *time_ns)
{
	*rows = NULL;
	*time_ns = 0;
	if (!p->nthread_samples)
		return 0;
	uint64_t last = p->thread_samples[p->nthread_samples - 1].time_ns;
	size_t first = p->nthread_samples;
	while (first > 0 && p->thread_samples[first - 1].time_ns == last)
		first--;
	size_t n = p->nthread_samples - first;
	*rows = xcalloc(n, sizeof(**rows));
	for (size_t i = 0; i < n; i++) {
		const struct thread_sample *t = &p->thread_samples[first + i];
		(*rows)[i] = (struct threadstate_row){
			.ts = t,
			.state_ns = since(last, t->state_since_ns),
			.syscall_ns = t->syscall >= 0 ? since(last, t->syscall_since_ns) : 0,
			.call_ns = t->span_id ? since(last, t->span_start_ns) : 0,
		};
	}
	qsort(*rows, n, sizeof(**rows), cmp_rows);
	*time_ns = last;
	return n;
}

void threadstates_count(const struct threadstate_row *rows, size_t n, size_t *counts)
{
	for (unsigned s = 0; s <= TSTATE_STOPPED; s++)
		counts[s] = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].ts->state <= TSTATE_STOPPED)
			counts[rows[i].ts->state]++;
}
