/* Unit tests for the thread table of a pass (model/threadstates.h) and a
 * call's time split (model/callsplit.h). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "callsplit.h"
#include "profile.h"
#include "sonde_abi.h"
#include "threadstates.h"
#include "view.h"

#define MS 1000000ull

Test(threadstates, the_last_pass_in_reading_order)
{
	struct profile *p = profile_new();
	uint32_t a = profile_thread_intern(p, 1, 1, "a"), b = profile_thread_intern(p, 1, 2, "b"),
		 c = profile_thread_intern(p, 1, 3, "c"), d = profile_thread_intern(p, 1, 4, "d");
	/* An older pass, then the last one at 100 ms. */
	profile_add_thread_sample(p, &(struct thread_sample){.time_ns = 50 * MS, .thread = a,
							    .syscall = -1});
	struct thread_sample last[] = {
		{.time_ns = 100 * MS, .thread = a, .state = TSTATE_SLEEPING, .state_since_ns = 90 * MS,
		 .syscall = 0, .syscall_since_ns = 89 * MS},
		{.time_ns = 100 * MS, .thread = b, .state = TSTATE_RUNNING, .state_since_ns = 99 * MS,
		 .syscall = -1},
		{.time_ns = 100 * MS, .thread = c, .state = TSTATE_SLEEPING, .state_since_ns = 20 * MS,
		 .syscall = 202, .syscall_since_ns = 20 * MS, .span_id = 7, .span_start_ns = 10 * MS},
		{.time_ns = 100 * MS, .thread = d, .state = TSTATE_DISK, .state_since_ns = 95 * MS,
		 .syscall = 0, .syscall_since_ns = 94 * MS},
	};
	for (size_t i = 0; i < 4; i++)
		profile_add_thread_sample(p, &last[i]);
	struct threadstate_row *rows;
	uint64_t when;
	size_t n = threadstates_last_pass(p, &rows, &when);
	cr_assert_eq(n, 4);
	cr_assert_eq(when, 100 * MS);
	/* running, then disk, then sleeping: the longest asleep first */
	cr_assert_eq(rows[0].ts->thread, b);
	cr_assert_eq(rows[1].ts->thread, d);
	cr_assert_eq(rows[2].ts->thread, c);
	cr_assert_eq(rows[3].ts->thread, a);
	cr_assert_eq(rows[2].state_ns, 80 * MS);
	cr_assert_eq(rows[2].syscall_ns, 80 * MS);
	cr_assert_eq(rows[2].call_ns, 90 * MS);
	cr_assert_eq(rows[3].syscall_ns, 11 * MS);
	cr_assert_eq(rows[0].syscall_ns, 0);
	size_t counts[TSTATE_COUNT];
	threadstates_count(rows, n, counts);
	cr_assert_eq(counts[TSTATE_RUNNING], 1);
	cr_assert_eq(counts[TSTATE_SLEEPING], 2);
	cr_assert_eq(counts[TSTATE_DISK], 1);
	free(rows);
	/* A live view keeps the last pass only. */
	profile_trim_thread_samples(p, 100 * MS);
	cr_assert_eq(p->nthread_samples, 4);
	profile_free(p);
}

Test(threadstates, no_pass_no_rows)
{
	struct profile *p = profile_new();
	struct threadstate_row *rows;
	uint64_t when;
	cr_assert_eq(threadstates_last_pass(p, &rows, &when), 0);
	cr_assert_null(rows);
	profile_free(p);
}

Test(callsplit, on_cpu_samples_and_off_cpu_time_by_state)
{
	struct profile *p = profile_new();
	uint32_t oncpu = profile_event_intern(p, "cpu-clock");
	uint32_t off = profile_event_intern(p, PROFILE_EVENT_OFFCPU);
	uint32_t waker = profile_event_intern(p, PROFILE_EVENT_WAKER);
	uint32_t req = frames_intern(p->frames, "handle_request", "/x", "x.c", 1, FRAME_USER);
	uint32_t pipe = frames_intern(p->frames, "wait_pipe", "/x", "x.c", 2, FRAME_USER);
	uint32_t sleep = frames_intern(p->frames, "wait_sleep", "/x", "x.c", 3, FRAME_USER);
	uint32_t rd = view_state_frame(p, TSTATE_SLEEPING, 0);
	uint32_t run = view_state_frame(p, TSTATE_RUNNABLE, -1);
	uint32_t s_on = profile_stack_intern(p, (uint32_t[]){req, pipe}, 2);
	uint32_t s_rd = profile_stack_intern(p, (uint32_t[]){req, pipe, rd}, 3);
	uint32_t s_rd2 = profile_stack_intern(p, (uint32_t[]){req, sleep, rd}, 3);
	uint32_t s_run = profile_stack_intern(p, (uint32_t[]){req, run}, 2);
	struct sample s[] = {
		{.event = oncpu, .stack = s_on, .weight = 1},
		{.event = oncpu, .stack = s_on, .weight = 1},
		{.event = off, .stack = s_rd, .weight = 6 * MS},
		{.event = off, .stack = s_rd2, .weight = 1 * MS},
		{.event = off, .stack = s_run, .weight = 2 * MS},
		{.event = waker, .stack = s_on, .weight = 6 * MS},
	};
	struct call_split c = {0};
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		call_split_add(&c, p, &s[i], "handle_request");
	cr_assert_eq(c.on_samples, 2);
	cr_assert_eq(c.off_ns, 9 * MS);
	char buf[256];
	call_split_off_text(&c, p->frames, 3, buf, sizeof(buf));
	/* the largest state first, each with where its largest wait was */
	char want[256];
	snprintf(want, sizeof(want), "off-CPU 9.00ms: %s 7.00ms in wait_pipe, [runnable] 2.00ms in (self)",
		 frames_get(p->frames, rd)->name);
	cr_assert_str_eq(buf, want);
	profile_free(p);
}
