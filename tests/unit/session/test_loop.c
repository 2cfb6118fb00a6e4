/* loop: an fd's callback runs when it is readable and not otherwise; wake
 * hooks run every step, before fd and timer callbacks; timers fire once when
 * due, in time, re-armed ones periodically, cancelled ones never; an fd
 * removed by an earlier callback of the same step gets no callback; a step
 * stopped half-way still runs to its end; SIGINT/SIGTERM/SIGHUP run the
 * loop's callback instead of killing the process, and loop_free restores
 * the signal's disposition; loop_fail makes loop_run return -1 with the
 * message; an fd is added once. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "loop.h"
#include "util.h"

static struct loop *new_loop(void)
{
	char err[256] = "";
	struct loop *lp = loop_new(err, sizeof(err));
	cr_assert_not_null(lp, "%s", err);
	return lp;
}

static void step(struct loop *lp, int max_ms)
{
	char err[256] = "";
	cr_assert_eq(loop_step(lp, max_ms, err, sizeof(err)), 0, "%s", err);
}

/* A log of what ran, in order. */
static char log_text[256];

static void note(const char *what)
{
	strncat(log_text, what, sizeof(log_text) - strlen(log_text) - 1);
}

struct reader {
	int fd;
	int calls;
	const char *name;
	struct loop *lp;
	int remove_fd; /* removes this fd from the loop when called (-1: none) */
};

static void on_readable(void *arg)
{
	struct reader *r = arg;
	char buf[16];
	r->calls++;
	if (read(r->fd, buf, sizeof(buf)) < 0)
		cr_assert_fail("read");
	note(r->name);
	if (r->remove_fd >= 0)
		loop_remove_fd(r->lp, r->remove_fd);
}

static void on_hook(void *arg)
{
	note(arg);
}

Test(loop, fd_callback_only_when_readable_after_hooks)
{
	struct loop *lp = new_loop();
	int p[2];
	cr_assert_eq(pipe(p), 0);
	struct reader r = {p[0], 0, "F", lp, -1};
	char err[256];
	cr_assert_eq(loop_add_fd(lp, p[0], on_readable, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(loop_add_fd(lp, p[0], on_readable, &r, err, sizeof(err)), -1);
	cr_assert(strstr(err, "already watches"), "%s", err);
	loop_on_wake(lp, on_hook, "H");
	log_text[0] = 0;

	uint64_t t0 = monotonic_ns();
	step(lp, 50); /* nothing to read: a timeout, the hooks still run */
	cr_assert_geq(monotonic_ns() - t0, 45000000ull);
	cr_assert_eq(r.calls, 0);
	cr_assert_str_eq(log_text, "H");

	cr_assert_eq(write(p[1], "x", 1), 1);
	step(lp, 1000);
	cr_assert_eq(r.calls, 1);
	cr_assert_str_eq(log_text, "HHF", "hooks first, then fds: %s", log_text);

	loop_remove_fd(lp, p[0]);
	cr_assert_eq(write(p[1], "y", 1), 1);
	step(lp, 20);
	cr_assert_eq(r.calls, 1, "a removed fd has no callback");
	loop_free(lp);
	close(p[0]);
	close(p[1]);
}

Test(loop, removed_in_the_same_step_gets_no_callback)
{
	struct loop *lp = new_loop();
	int a[2], b[2];
	cr_assert_eq(pipe(a), 0);
	cr_assert_eq(pipe(b), 0);
	struct reader ra = {a[0], 0, "A", lp, b[0]}, rb = {b[0], 0, "B", lp, a[0]};
	char err[256];
	cr_assert_eq(loop_add_fd(lp, a[0], on_readable, &ra, err, sizeof(err)), 0);
	cr_assert_eq(loop_add_fd(lp, b[0], on_readable, &rb, err, sizeof(err)), 0);
	cr_assert_eq(write(a[1], "x", 1), 1);
	cr_assert_eq(write(b[1], "x", 1), 1);
	log_text[0] = 0;
	step(lp, 1000);
	/* Both were ready; whichever ran first removed the other. */
	cr_assert_eq(ra.calls + rb.calls, 1, "A %d, B %d", ra.calls, rb.calls);
	loop_free(lp);
	close(a[0]);
	close(a[1]);
	close(b[0]);
	close(b[1]);
}

struct ticker {
	struct loop *lp;
	int id;
	int fired;
	int stop_after;
	double every;
	uint64_t at[8];
};

static void on_tick(void *arg)
{
	struct ticker *t = arg;
	if (t->fired < 8)
		t->at[t->fired] = monotonic_ns();
	t->fired++;
	if (t->fired >= t->stop_after)
		loop_stop(t->lp);
	else
		loop_timer_in(t->lp, t->id, t->every);
}

Test(loop, timers_fire_once_in_time_and_periodic_when_rearmed)
{
	struct loop *lp = new_loop();
	struct ticker t = {lp, 0, 0, 3, 0.05, {0}};
	t.id = loop_timer_new(lp, on_tick, &t);
	struct ticker never = {lp, 0, 0, 1, 0, {0}};
	never.id = loop_timer_new(lp, on_tick, &never);
	loop_timer_in(lp, never.id, 0.08);
	loop_timer_cancel(lp, never.id);
	uint64_t t0 = monotonic_ns();
	loop_timer_in(lp, t.id, 0.05);
	char err[256] = "";
	cr_assert_eq(loop_run(lp, err, sizeof(err)), 0, "%s", err);
	uint64_t took = monotonic_ns() - t0;
	cr_assert_eq(t.fired, 3);
	cr_assert_eq(never.fired, 0, "a cancelled timer fired");
	/* Never early; on a busy machine possibly late, but not by seconds. */
	cr_assert_geq(t.at[0] - t0, 50000000ull);
	cr_assert_geq(t.at[1] - t.at[0], 50000000ull);
	cr_assert_geq(t.at[2] - t.at[1], 50000000ull);
	cr_assert_lt(took, 2000000000ull, "took %llu ns", (unsigned long long)took);
	/* Disarmed after firing: the next step waits for nothing but its limit. */
	step(lp, 30);
	cr_assert_eq(t.fired, 3);

	/* Armed at a time already past: due at the next step. */
	loop_timer_at(lp, t.id, monotonic_ns() - 1000);
	t.stop_after = 4;
	step(lp, 1000);
	cr_assert_eq(t.fired, 4);
	loop_free(lp);
}

static void stop_now(void *arg)
{
	note("S");
	loop_stop(arg);
}

static void mark_timer(void *arg)
{
	note(arg);
}

Test(loop, a_stopped_step_runs_to_its_end)
{
	struct loop *lp = new_loop();
	loop_on_wake(lp, stop_now, lp);
	int id = loop_timer_new(lp, mark_timer, "T");
	loop_timer_in(lp, id, 0);
	log_text[0] = 0;
	char err[256] = "";
	cr_assert_eq(loop_run(lp, err, sizeof(err)), 0, "%s", err);
	cr_assert_str_eq(log_text, "ST", "the due timer still ran: %s", log_text);
	cr_assert(loop_stopped(lp));
	loop_free(lp);
}

static int signals_seen;

static void on_signals(void *arg)
{
	(void)arg;
	signals_seen++;
}

Test(loop, signals_come_through_the_loop)
{
	struct sigaction before;
	cr_assert_eq(sigaction(SIGINT, NULL, &before), 0);
	struct loop *lp = new_loop();
	char err[256] = "";
	cr_assert_eq(loop_catch_signals(lp, on_signals, NULL, err, sizeof(err)), 0, "%s", err);
	signals_seen = 0;
	cr_assert_eq(raise(SIGINT), 0); /* would end the test without the loop */
	cr_assert_eq(signals_seen, 0, "the callback runs in the loop, not in the handler");
	step(lp, 1000);
	cr_assert_eq(signals_seen, 1);
	cr_assert_eq(raise(SIGTERM), 0);
	cr_assert_eq(raise(SIGHUP), 0);
	step(lp, 1000);
	cr_assert_eq(signals_seen, 2, "two signals before one step: one callback");
	loop_free(lp);
	struct sigaction sa;
	cr_assert_eq(sigaction(SIGINT, NULL, &sa), 0);
	cr_assert_eq(sa.sa_handler, before.sa_handler, "loop_free restores the disposition");
}

static void fail_now(void *arg)
{
	loop_fail(arg, "reading %s failed", "the ring");
	loop_fail(arg, "a second failure is not reported");
}

Test(loop, a_failure_ends_the_run_with_its_message)
{
	struct loop *lp = new_loop();
	int id = loop_timer_new(lp, fail_now, lp);
	loop_timer_in(lp, id, 0.01);
	char err[256] = "";
	cr_assert_eq(loop_run(lp, err, sizeof(err)), -1);
	cr_assert_str_eq(err, "reading the ring failed");
	loop_free(lp);
}
